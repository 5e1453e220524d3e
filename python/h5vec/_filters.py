"""Row filters (`filters=` of the read API): pyarrow's DNF form parsed and
checked against a container's columns, each predicate compiled into the
stored domain of its column (exact: integers stay integers, instants are
compared in their stored unit), evaluated chunk by chunk with the chunks
that statistics (CHUNK_MINMAX, `_stats`) rule out skipped, and the helpers
that cut and join decoded columns (`take`, `concat`).

Missing values follow h5col's query layer (three-valued, as pyarrow): a
null row (a MASK, or a null record above the column) matches no value
predicate, `!=` and `not in` included. NaN is a value that compares false
with everything (IEEE), so `==`, `<`, `in`, ... never match it while `!=`
and `not in` do (as h5col on a column without a NaN fill, and pyarrow).
A NaN query value is an error (it would match nothing)."""

from __future__ import annotations

import datetime as _dt
import math
import numbers
from fractions import Fraction

import numpy as np

from . import _columns as C

OPS = {"=": "==", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "in": "in",
       "not in": "not in"}
ORDER = ("<", "<=", ">", ">=")
ROOT = "value"
#: Candidate rows closer than this are read in one range (as the Rust library).
GAP_ROWS = 4096


# ---------------------------------------------------------------------------
# Parsing


def _is_pred(obj):
    return isinstance(obj, (tuple, list)) and len(obj) == 3 and isinstance(obj[0], str)


def parse(filters):
    """pyarrow DNF -> list of AND-terms of (column, op, value); ops normalised."""
    if not isinstance(filters, (list, tuple)) or len(filters) == 0:
        raise ValueError("filters: expected a non-empty list of (column, op, value) tuples (AND) or a list of "
                         f"such lists (OR of ANDs), found {filters!r}")
    if all(_is_pred(t) for t in filters):
        terms = [list(filters)]
    elif all(isinstance(t, (list, tuple)) and len(t) > 0 and all(_is_pred(p) for p in t) for t in filters):
        terms = [list(t) for t in filters]
    else:
        raise ValueError("filters: expected a list of (column, op, value) tuples (AND) or a non-empty list of "
                         f"non-empty such lists (OR of ANDs), found {filters!r}")
    out = []
    for term in terms:
        preds = []
        for col, op, value in term:
            if not isinstance(op, str) or op.lower() not in OPS:
                raise ValueError(f"filters: unknown operator {op!r} for column {col!r}; use one of "
                                 f"{sorted(OPS)}")
            op = OPS[op.lower()]
            if op in ("in", "not in"):
                if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                    raise TypeError(f"filters: {op!r} on column {col!r} takes a collection of values "
                                    f"(list, tuple, set, array), found {type(value).__name__}")
                value = list(value)
            preds.append((col, op, value))
        out.append(preds)
    return out


# ---------------------------------------------------------------------------
# Leaves: what a column holds, from a zero-row read


def leaf_of(col, name):
    """(leaf column, validity inherited from enclosing nullable records) of
    column `name` in what a container's `_read_rows` gave."""
    if isinstance(col, dict):
        return col[name], None
    if isinstance(col, C.Rec):
        for n, c, v in C.flatten(col, ""):
            if n == name:
                return c, v
        raise KeyError(name)
    return col, None


def _numpy_kind(col):
    """The comparison domain of a decoded leaf column."""
    if isinstance(col, C.Prim):
        if col.values.ndim != 1:
            return None
        if col.tag == "num":
            k = col.values.dtype.kind
            return {"i": "int", "u": "int", "f": "float"}.get(k)
        if col.tag in ("bool", "enum", "char", "instant", "date", "time", "duration"):
            return col.tag
        return None
    if isinstance(col, C.Str) and col.fmt in ("utf8", "binary"):
        return "str" if col.fmt == "utf8" else "bytes"
    return None


_WHAT = {"int": "a number", "float": "a number (not NaN)", "bool": "a bool", "enum": "a label (str)",
         "char": "a one-character str", "instant": "a datetime, numpy.datetime64 or pandas.Timestamp",
         "date": "a datetime.date, datetime, numpy.datetime64 or pandas.Timestamp",
         "time": "a datetime.time or timedelta", "duration": "a timedelta, numpy.timedelta64 or pandas.Timedelta",
         "str": "a str", "bytes": "bytes"}


class Pred:
    """One predicate compiled against its column: `mask(col, inherited)` on
    decoded rows, `may(entries)` on CHUNK_MINMAX entries."""

    def __init__(self, name, op, value, kind, probe):
        self.name, self.op, self.kind = name, op, kind
        self.negated = op in ("!=", "not in")
        base = {"!=": "==", "not in": "in"}.get(op, op)
        self.base = base
        values = value if base == "in" else [value]
        self.float = kind == "float"
        if kind in ("str", "bytes"):
            want = str if kind == "str" else (bytes, bytearray, np.bytes_)
            for v in values:
                if not isinstance(v, want) or isinstance(v, np.str_) and kind == "bytes":
                    raise TypeError(f"filters: column {name!r} holds {'strings' if kind == 'str' else 'bytes'}: "
                                    f"expected {_WHAT[kind]}, found {type(v).__name__} {v!r}")
            self.vals = [v if kind == "str" else bytes(v) for v in values]
            return
        conv = [_to_domain(v, kind, probe, name) for v in values]
        if kind == "enum" and base in ORDER and conv[0] is None:
            raise ValueError(f"filters: {values[0]!r} is not a label of enum column {name!r}, so it has no "
                             f"order for {op!r}; labels: {list(probe.labels or {})}")
        if base == "in":
            # Values that cannot equal a stored value drop out (an unknown label, 2.5 on integers).
            self.vals = [q for q in conv if q is not None and _is_exact_value(q, kind)]
        else:
            q = conv[0]
            if q is None:  # an unknown enum label
                self.vals = []
                self.canon = ("none",)
            else:
                self.vals = [q]
                if self.float:
                    self.canon = _float_canon(base, q)
                else:
                    lo, hi = _int_range(kind, probe)
                    self.canon = _int_canon(base, q, lo, hi)

    # -- rows ------------------------------------------------------------

    def mask(self, col, inherited):
        valid = C._combine(inherited, col.valid)
        if self.kind in ("str", "bytes"):
            cmp = self._str_cmp(col)
        else:
            x = _stored(col, self.kind)
            cmp = self._isin(x) if self.base == "in" else self._cmp(x)
        if self.negated:
            cmp = ~cmp
        return cmp if valid is None else cmp & valid

    def _str_cmp(self, col):
        pa = C._pyarrow()
        if pa is not None and col.n:
            return self._str_cmp_arrow(col, pa)
        objs = C.decode_strings(col.offsets, col.data, binary=self.kind == "bytes")
        n = len(objs)
        if self.base == "in":
            st = set(self.vals)
            return np.fromiter((s in st for s in objs), bool, n)
        v = self.vals[0]
        op = self.base
        f = {"==": v.__eq__, "<": v.__gt__, "<=": v.__ge__, ">": v.__lt__, ">=": v.__le__}[op]
        return np.fromiter((f(s) is True for s in objs), bool, n)

    def _str_cmp_arrow(self, col, pa):
        """The comparison in Arrow (byte-wise, which is code point order for UTF-8)."""
        import pyarrow.compute as pc
        typ = pa.large_string() if self.kind == "str" else pa.large_binary()
        arr = pa.Array.from_buffers(typ, col.n, [None, pa.py_buffer(col.offsets.astype(np.int64, copy=False)),
                                                 pa.py_buffer(col.data)])
        if self.base == "in":
            out = pc.is_in(arr, value_set=pa.array(self.vals, typ))
        else:
            fn = {"==": pc.equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}
            out = fn[self.base](arr, pa.scalar(self.vals[0], typ))
        return out.to_numpy(zero_copy_only=False).astype(bool, copy=False)

    def _cmp(self, x):
        c = self.canon
        if c[0] == "none":
            return np.zeros(len(x), bool)
        if c[0] == "all":
            return np.ones(len(x), bool)
        op, v = c
        if self.float:
            x = x.astype(np.float64, copy=False)
            v = np.float64(v)
        else:
            v = np.array(v, dtype=x.dtype)
        if op == "==":
            return x == v
        if op == "<=":
            return x <= v
        if op == ">=":
            return x >= v
        raise AssertionError(op)

    def _isin(self, x):
        if not self.vals:
            return np.zeros(len(x), bool)
        if self.float:
            vals = np.array([float(q) for q in self.vals], np.float64)
            return np.isin(x.astype(np.float64, copy=False), vals)
        lo, hi = np.iinfo(x.dtype).min, np.iinfo(x.dtype).max
        keep = [int(q) for q in self.vals if lo <= q <= hi]
        if not keep:
            return np.zeros(len(x), bool)
        return np.isin(x, np.array(keep, dtype=x.dtype))

    # -- statistics ------------------------------------------------------

    def may(self, entries, kind_of_min):
        """Per CHUNK_MINMAX entry: whether the chunk can hold a matching row."""
        n = entries["n"].astype(np.uint64)
        nan = entries["nan_count"].astype(np.uint64)
        fill = entries["fill_count"].astype(np.uint64)
        usable = (nan + fill) < n  # holds at least one ordered, present value
        mins = _bounds(entries["min"], kind_of_min)
        maxs = _bounds(entries["max"], kind_of_min)
        k = len(n)
        out = np.zeros(k, bool)
        if self.negated:
            # A chunk is out only when every present value equals one of the values (NaN matches `!=`).
            vals = set(self._prune_values())
            for i in range(k):
                if nan[i] > 0:
                    out[i] = True
                elif usable[i]:
                    out[i] = not (mins[i] == maxs[i] and mins[i] in vals)
            return out
        if self.base == "in":
            vals = sorted(self._prune_values())
            if not vals:
                return out
            for i in range(k):
                if usable[i]:
                    j = _bisect_left(vals, mins[i])
                    out[i] = j < len(vals) and vals[j] <= maxs[i]
            return out
        c = self.canon
        if c[0] == "none":
            return out
        if c[0] == "all":
            return usable.copy()
        op, v = c
        for i in range(k):
            if usable[i]:
                if op == "==":
                    out[i] = mins[i] <= v <= maxs[i]
                elif op == "<=":
                    out[i] = mins[i] <= v
                else:
                    out[i] = maxs[i] >= v
        return out

    def _prune_values(self):
        """The values a stored number can equal (not 2.5 on integers, not +-inf on integers)."""
        if self.float:
            return [float(q) for q in self.vals if isinstance(q, float) or _float_exact(q)]
        return [int(q) for q in self.vals if isinstance(q, Fraction) and q.denominator == 1]


def _bisect_left(a, x):
    lo, hi = 0, len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _bounds(arr, kind):
    """Index bounds as exact Python numbers (ints stay ints)."""
    if kind == "float":
        return arr.astype(np.float64).tolist()
    return [int(x) for x in arr.tolist()]


def _stored(col, kind):
    """A Prim's values as the stored numbers (times as their integers, bools 0/1)."""
    v = col.values
    if kind == "bool":
        return v.astype(np.uint8)
    if kind in ("instant", "time", "duration"):
        return v.view(np.int64)
    if kind == "date":
        return v.view(np.int64)
    return v


def _int_range(kind, probe):
    if kind == "bool":
        return 0, 1
    if kind == "date":
        return -(1 << 31), (1 << 31) - 1
    info = np.iinfo(_stored(probe, kind).dtype)
    return int(info.min), int(info.max)


def _is_exact_value(q, kind):
    """Whether `q` can equal a stored value (2.5 on integers, 2**53 + 1 on floats cannot)."""
    if kind == "float":
        return isinstance(q, float) or _float_exact(q)
    return not isinstance(q, float) and (not isinstance(q, Fraction) or q.denominator == 1)


def _int_canon(op, q, lo, hi):
    """`x op q` on integers in [lo, hi] as ('none',), ('all',) or (op', v) with op' in ==, <=, >=."""
    if isinstance(q, float):  # +-inf
        if op == "==":
            return ("none",)
        below = q > 0  # every integer is below +inf
        return ("all",) if (op in ("<", "<=")) == below else ("none",)
    if op == "==":
        if q.denominator != 1 or not lo <= q <= hi:
            return ("none",)
        return ("==", int(q))
    if op in ("<", "<="):
        v = (math.ceil(q) - 1) if op == "<" else math.floor(q)
        if v < lo:
            return ("none",)
        if v >= hi:
            return ("all",)
        return ("<=", v)
    v = (math.floor(q) + 1) if op == ">" else math.ceil(q)
    if v > hi:
        return ("none",)
    if v <= lo:
        return ("all",)
    return (">=", v)


def _float_exact(q):
    try:
        return Fraction(float(q)) == q
    except OverflowError:
        return False


def _float_canon(op, q):
    """`x op q` on floats (NaN never satisfies one) exactly, for q an exact
    rational or +-inf: q between two floats becomes a comparison with one of them."""
    if isinstance(q, float) or _float_exact(q):
        v = float(q)
        if op == "<":
            return ("<=", np.nextafter(v, -np.inf)) if v != -np.inf else ("none",)
        if op == ">":
            return (">=", np.nextafter(v, np.inf)) if v != np.inf else ("none",)
        return (op, v)
    try:
        f = float(q)
        if Fraction(f) < q:
            lo_, hi_ = f, float(np.nextafter(f, np.inf))
        else:
            lo_, hi_ = float(np.nextafter(f, -np.inf)), f
    except OverflowError:
        m = float(np.finfo(np.float64).max)
        lo_, hi_ = (m, np.inf) if q > 0 else (-np.inf, -m)
    if op == "==":
        return ("none",)
    if op in ("<", "<="):
        return ("<=", lo_)
    return (">=", hi_)


# ---------------------------------------------------------------------------
# Query values -> the stored domain


_UNIT_NS = {"W": Fraction(7 * 86400 * 10**9), "D": Fraction(86400 * 10**9), "h": Fraction(3600 * 10**9),
            "m": Fraction(60 * 10**9), "s": Fraction(10**9), "ms": Fraction(10**6), "us": Fraction(10**3),
            "μs": Fraction(10**3), "ns": Fraction(1), "ps": Fraction(1, 10**3), "fs": Fraction(1, 10**6),
            "as": Fraction(1, 10**9)}
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _td_ns(td):
    ns = (td.days * 86400 + td.seconds) * 10**9 + td.microseconds * 1000
    nano = getattr(td, "nanoseconds", 0)  # pandas.Timedelta
    return Fraction(ns + int(nano))


def _np_time_ns(v, name):
    if np.isnat(v):
        raise ValueError(f"filters: NaT compared with column {name!r} matches no row; NaT is not a value")
    unit, count = np.datetime_data(v.dtype)
    if unit in ("Y", "M"):
        if isinstance(v, np.timedelta64):
            raise TypeError(f"filters: a timedelta64 in years or months has no fixed length (column {name!r})")
        v = v.astype("M8[D]")
        unit, count = "D", 1
    if unit == "generic":
        raise TypeError(f"filters: a {v.dtype} has no unit (column {name!r})")
    return Fraction(int(v.astype(np.int64))) * count * _UNIT_NS[unit]


def _is_timestamp(v):
    return type(v).__module__.startswith("pandas") and hasattr(v, "value") and hasattr(v, "nanosecond")


def _instant_ns(v, name, zone, what):
    """Nanoseconds since the epoch of a datetime-like value; aware values need
    a column with a time zone, naive ones a column without."""
    if isinstance(v, np.datetime64):
        if zone is not None:
            raise TypeError(f"filters: column {name!r} holds instants in time zone {zone!r}: compare it with a "
                            f"timezone-aware datetime or pandas.Timestamp, not a numpy.datetime64 (naive)")
        return _np_time_ns(v, name)
    if isinstance(v, _dt.datetime):
        aware = v.tzinfo is not None and v.tzinfo.utcoffset(v) is not None
        if aware != (zone is not None):
            if aware:
                raise TypeError(f"filters: column {name!r} holds {what} without a time zone: compare it with a "
                                f"naive datetime, found one in {v.tzinfo}")
            raise TypeError(f"filters: column {name!r} holds instants in time zone {zone!r}: compare it with a "
                            f"timezone-aware datetime, found a naive one ({v})")
        if _is_timestamp(v):
            return Fraction(int(v.value))
        return _td_ns(v - (_EPOCH_UTC if aware else _EPOCH))
    raise TypeError(f"filters: column {name!r} holds {what}: expected {_WHAT['instant']}, "
                    f"found {type(v).__name__} {v!r}")


def _to_domain(v, kind, probe, name):
    """A query value as an exact rational in the column's stored domain, +-inf,
    or None (an enum label the column does not have)."""
    if kind in ("int", "float"):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.integer, np.floating)):
            raise TypeError(f"filters: column {name!r} holds numbers: expected {_WHAT[kind]}, "
                            f"found {type(v).__name__} {v!r}")
        if isinstance(v, (np.integer, int)):
            return Fraction(int(v))
        if isinstance(v, Fraction):
            return v
        f = float(v)
        if math.isnan(f):
            raise ValueError(f"filters: NaN compared with column {name!r}: NaN is unordered and matches no "
                             "value predicate")
        if math.isinf(f):
            return f
        return Fraction(f)
    if kind == "bool":
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"filters: column {name!r} holds bools: expected a bool, found {type(v).__name__} {v!r}")
        return Fraction(int(bool(v)))
    if kind == "enum":
        if not isinstance(v, str):
            raise TypeError(f"filters: column {name!r} is an enum: expected a label (str) of "
                            f"{sorted(probe.labels or {})}, found {type(v).__name__} {v!r}")
        code = (probe.labels or {}).get(v)
        return None if code is None else Fraction(int(code))
    if kind == "char":
        if not isinstance(v, str) or len(v) != 1:
            raise TypeError(f"filters: column {name!r} holds chars: expected a one-character str, found {v!r}")
        return Fraction(ord(v))
    if kind == "instant":
        zone = C.leaf_node(probe.node).time_zone
        return _instant_ns(v, name, zone, "instants")
    if kind == "date":
        if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
            return Fraction((v - _dt.date(1970, 1, 1)).days)
        if isinstance(v, (np.datetime64, _dt.datetime)):
            return _instant_ns(v, name, None, "dates") / (86400 * 10**9)
        raise TypeError(f"filters: column {name!r} holds dates: expected {_WHAT['date']}, "
                        f"found {type(v).__name__} {v!r}")
    if kind == "time":
        if isinstance(v, _dt.time):
            if v.tzinfo is not None:
                raise TypeError(f"filters: column {name!r} holds times of day without a time zone, found {v}")
            return Fraction(((v.hour * 60 + v.minute) * 60 + v.second) * 10**9 + v.microsecond * 1000)
        if isinstance(v, _dt.timedelta):
            return _td_ns(v)
        if isinstance(v, np.timedelta64):
            return _np_time_ns(v, name)
        raise TypeError(f"filters: column {name!r} holds times of day: expected {_WHAT['time']}, "
                        f"found {type(v).__name__} {v!r}")
    if kind == "duration":
        if isinstance(v, _dt.timedelta):
            if type(v).__module__.startswith("pandas") and hasattr(v, "value"):
                return Fraction(int(v.value))
            return _td_ns(v)
        if isinstance(v, np.timedelta64):
            return _np_time_ns(v, name)
        raise TypeError(f"filters: column {name!r} holds durations: expected {_WHAT['duration']}, "
                        f"found {type(v).__name__} {v!r}")
    raise AssertionError(kind)


# ---------------------------------------------------------------------------
# Plans: compiled terms against one container


class Plan:
    """The compiled filters of one read: terms of `Pred`s, the columns they
    read, and per column the statistics usable for pruning."""

    def __init__(self, container, filters):
        terms = parse(filters)
        self.container = container
        names = []
        for term in terms:
            for col, _, _ in term:
                if col not in names:
                    names.append(col)
        self.names = names
        self.sel = {}
        self.kinds = {}
        probes = {}
        for name in names:
            try:
                sel = container._selection([name])
            except KeyError:
                raise ValueError(f"filters: no column {name!r}; columns: {container.columns}") from None
            probe_col = container._read_rows(sel, 0, 0)
            try:
                probe, _ = leaf_of(probe_col, name)
            except KeyError:
                fields = [c for c in container.columns if c.startswith(name + ".")]
                raise TypeError(f"filters: column {name!r} is not a column filters compare (a record: filter on "
                                f"its fields {fields})") from None
            kind = _numpy_kind(probe)
            if kind is None:
                raise TypeError(f"filters: column {name!r} is not a column filters compare ({_describe(probe)}); "
                                "filters take numbers, bools, enum labels, chars, strings, bytes, instants, dates, "
                                "times of day and durations")
            self.sel[name] = sel
            self.kinds[name] = kind
            probes[name] = probe
        self.terms = [[Pred(c, op, v, self.kinds[c], probes[c]) for c, op, v in term] for term in terms]
        self.stats = {}
        self.indexes = {}
        for name in names:
            st = container._chunk_stats(name)
            if st is not None:
                self.stats[name] = st
            ix = container._column_indexes(name)
            if ix is not None:
                self.indexes[name] = ix

    # -- pruning ----------------------------------------------------------

    def used(self):
        """{column: [index kinds that gave candidates]} (after a read)."""
        return {n: list(ix.used) for n, ix in self.indexes.items() if ix.used}

    def windows(self, exact=False):
        """(lo, hi): sorted disjoint row windows (int64 arrays) that may hold a
        match, from statistics (CHUNK_MINMAX), CHUNK_BLOOM and the candidate
        rows of SORTED_ROWS / BITMAP; None when every row may. Candidate rows
        closer than GAP_ROWS share a window (one read), unless `exact`."""
        if not hasattr(self, "_windows"):
            self._windows = self._compute_windows()
        w = self._windows
        return w if w is None else w[1 if exact else 0]

    def _chunk_len(self):
        lengths = [st.chunk for st in self.stats.values()] + [ix.leaf.chunk for ix in self.indexes.values()]
        return max(1, min(lengths)) if lengths else GAP_ROWS

    def _term_candidates(self, term):
        """(candidate rows or None, [(chunk length, may per chunk)]) of one AND-term."""
        rows = None
        mays = []
        for p in term:
            ix = self.indexes.get(p.name)
            if ix is not None:
                order = (ix.bitmap_rows, ix.sorted_rows) if p.base == "in" else (ix.sorted_rows, ix.bitmap_rows)
                r = None
                for f in order:
                    r = _guarded(f, p)
                    if r is not None:
                        break
                if r is not None:
                    rows = r if rows is None else np.intersect1d(rows, r, assume_unique=True)
                    continue
                bm = _guarded(ix.bloom_may, p)
                if bm is not None:
                    mays.append(bm)
            st = self.stats.get(p.name)
            if st is not None:
                mays.append((st.chunk, p.may(st.entries, "float" if p.float else "int")))
        return rows, mays

    def _compute_windows(self):
        """(merged windows, exact windows), or None."""
        if not self.stats and not self.indexes:
            return None
        count = len(self.container)
        los, his, xlos, xhis = [], [], [], []
        for term in self.terms:
            rows, mays = self._term_candidates(term)
            if rows is not None:
                for c, may in mays:
                    if len(rows):
                        rows = rows[may[rows // c]]
                for gap, lo_, hi_ in ((GAP_ROWS, los, his), (1, xlos, xhis)):
                    if len(rows):
                        cut = np.flatnonzero(np.diff(rows) > gap) + 1
                        lo_.append(rows[np.concatenate([[0], cut]).astype(np.int64)])
                        hi_.append(rows[np.concatenate([cut - 1, [len(rows) - 1]]).astype(np.int64)] + 1)
            elif mays:
                c = min(cl for cl, _ in mays)
                nchunks = -(-count // c) if count else 0
                acc = np.ones(nchunks, bool)
                for cl, may in mays:
                    if cl != c:
                        # Chunk i of length c lies in the entries of length cl covering its rows.
                        starts = np.arange(nchunks, dtype=np.int64) * c
                        ends = np.minimum(starts + c, count) - 1
                        cs = np.concatenate([[0], np.cumsum(may)])
                        may = (cs[ends // cl + 1] - cs[starts // cl]) > 0
                    acc &= may[:nchunks]
                if acc.any():
                    d = np.diff(np.concatenate([[0], acc.astype(np.int8), [0]]))
                    for lo_, hi_ in ((los, his), (xlos, xhis)):
                        lo_.append(np.flatnonzero(d == 1).astype(np.int64) * c)
                        hi_.append(np.minimum(np.flatnonzero(d == -1).astype(np.int64) * c, count))
            else:
                return None
        return _union(los, his), _union(xlos, xhis)

    def candidate_chunks(self):
        """(chunk length, bool array over chunks) or None when nothing prunes."""
        w = self.windows()
        if w is None:
            return None
        c = self._chunk_len()
        count = len(self.container)
        nchunks = -(-count // c) if count else 0
        flags = np.zeros(nchunks, bool)
        for lo, hi in zip(*self.windows(exact=True)):
            if hi > lo:
                flags[lo // c:(hi - 1) // c + 1] = True
        return c, flags

    def ranges(self, a, b, batch):
        """Row ranges within [a, b) to read (each at most about `batch` rows),
        skipping rows no index or statistics let match."""
        out = []
        if b <= a:
            return out
        w = self.windows()
        if w is None:
            for s in range(a, b, batch):
                out.append((s, min(b, s + batch)))
            return out
        lo, hi = w
        i = int(np.searchsorted(hi, a, side="right"))
        j = int(np.searchsorted(lo, b, side="left"))
        step = max(batch, self._chunk_len())
        for x, y in zip(lo[i:j].tolist(), hi[i:j].tolist()):
            x, y = max(x, a), min(y, b)
            for s in range(x, y, step):
                out.append((s, min(y, s + step)))
        return out

    # -- rows -------------------------------------------------------------

    def mask(self, lo, hi):
        """Rows lo..hi that match, as a bool array (reads the predicate columns there)."""
        leaves = {}
        for name in self.names:
            col = self.container._read_rows(self.sel[name], lo, hi)
            leaves[name] = leaf_of(col, name)
        result = np.zeros(hi - lo, bool)
        for term in self.terms:
            acc = np.ones(hi - lo, bool)
            for p in term:
                acc &= p.mask(*leaves[p.name])
            result |= acc
        return result


def _union(los, his):
    """Sorted disjoint windows covering every (lo, hi) of the lists."""
    if not los:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    lo = np.concatenate(los).astype(np.int64)
    hi = np.concatenate(his).astype(np.int64)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)  # merge overlapping or touching windows
    start = np.concatenate([[True], lo[1:] > reach[:-1]])
    idx = np.flatnonzero(start)
    ends = np.concatenate([idx[1:], [len(lo)]]) - 1
    return lo[idx], reach[ends]


def _guarded(f, pred):
    """An index's answer, or None when the index cannot be read as its format
    says (a damaged or hostile index is not present: the rows are scanned)."""
    try:
        return f(pred)
    except (OSError, ValueError, TypeError, RuntimeError, KeyError, IndexError):
        return None


def _describe(col):
    if isinstance(col, C.Prim):
        return f"{col.tag} of shape {col.values.shape[1:]}" if col.values.ndim > 1 else col.tag
    if isinstance(col, C.Str):
        return {"json": "JSON text", "binary": "bytes", "utf8": "strings"}.get(col.fmt, col.fmt)
    return {C.List: "a list", C.Rec: "a record", C.Const: "a constant", C.Union: "an enum with data"}.get(
        type(col), type(col).__name__)


def _pieces(plan, container, sel, a, b, batch):
    """Yields (row numbers, the selected columns of those rows) of the
    matching rows of a..b, one range of `plan` at a time (ranges without a
    match, or that the statistics rule out, are not read)."""
    for lo, hi in plan.ranges(a, b, batch):
        hits = np.flatnonzero(plan.mask(lo, hi))
        if not hits.size:
            continue
        first = int(hits[0])
        col = container._read_rows(sel, lo + first, lo + int(hits[-1]) + 1)
        yield hits + lo, take(col, hits - first)


def _joined(parts):
    rows, pieces = zip(*parts)
    return np.concatenate(rows).astype(np.int64), concat(list(pieces))


def select(container, sel, filters, a, b, batch):
    """(matching row numbers, the selected columns of those rows) of rows a..b."""
    parts = list(_pieces(Plan(container, filters), container, sel, a, b, batch))
    if not parts:
        return np.zeros(0, np.int64), container._read_rows(sel, a, a)
    return _joined(parts)


def batches(container, sel, filters, a, b, batch):
    """Yields (row numbers, columns) of the matching rows, a span of at most
    `batch` rows at a time (spans without a match are skipped)."""
    plan = Plan(container, filters)
    for s in range(a, b, batch):
        parts = list(_pieces(plan, container, sel, s, min(b, s + batch), batch))
        if parts:
            yield _joined(parts)


# ---------------------------------------------------------------------------
# Cutting and joining decoded columns


def _spans(starts, lens):
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    before = np.cumsum(lens) - lens
    return np.repeat(starts - before, lens) + np.arange(total, dtype=np.int64)


def take(col, idx):
    """Rows `idx` (sorted int64 positions) of a decoded column (or a dict of them)."""
    if isinstance(col, dict):
        return {k: take(c, idx) for k, c in col.items()}
    idx = np.asarray(idx, np.int64)
    v = None if col.valid is None else col.valid[idx]
    if isinstance(col, C.Prim):
        return C.Prim(col.values[idx], col.tag, col.node, v, col.labels)
    if isinstance(col, (C.Str, C.List)):
        starts = col.offsets[idx]
        lens = col.offsets[idx + 1] - starts
        offs = np.zeros(len(idx) + 1, np.int64)
        np.cumsum(lens, out=offs[1:])
        elems = _spans(starts, lens)
        if isinstance(col, C.Str):
            return C.Str(offs, col.data[elems], col.fmt, col.node, v)
        return C.List(offs, take(col.child, elems), col.node, v)
    if isinstance(col, C.Rec):
        return C.Rec(len(idx), col.names, [take(c, idx) for c in col.children], col.node, v)
    if isinstance(col, C.Const):
        return C.Const(len(idx), col.node, v)
    if isinstance(col, C.Union):
        tags = col.tags[idx]
        offs = col.offsets[idx]
        new = np.zeros(len(idx), col.offsets.dtype)
        kids = []
        for k, child in enumerate(col.children):
            r = np.flatnonzero(tags == k)
            kids.append(take(child, offs[r].astype(np.int64)))
            new[r] = np.arange(len(r), dtype=new.dtype)
        return C.Union(tags, new, col.names, kids, col.node, v)
    raise TypeError(type(col))


def concat(cols):
    """One decoded column of the rows of `cols` (same layout) in order."""
    first = cols[0]
    if len(cols) == 1:
        return first
    if isinstance(first, dict):
        return {k: concat([c[k] for c in cols]) for k in first}
    v = None
    if any(c.valid is not None for c in cols):
        v = np.concatenate([np.ones(c.n, bool) if c.valid is None else c.valid for c in cols])
    if isinstance(first, C.Prim):
        return C.Prim(np.concatenate([c.values for c in cols]), first.tag, first.node, v, first.labels)
    if isinstance(first, (C.Str, C.List)):
        parts = [np.zeros(1, np.int64)]
        base = 0
        for c in cols:
            parts.append(c.offsets[1:] - c.offsets[0] + base)
            base += int(c.offsets[-1] - c.offsets[0])
        offs = np.concatenate(parts)
        if isinstance(first, C.Str):
            data = np.concatenate([c.data[int(c.offsets[0]):int(c.offsets[-1])] for c in cols])
            return C.Str(offs, data, first.fmt, first.node, v)
        kids = [_rows_of(c.child, int(c.offsets[0]), int(c.offsets[-1])) for c in cols]
        return C.List(offs, concat(kids), first.node, v)
    if isinstance(first, C.Rec):
        kids = [concat([c.children[i] for c in cols]) for i in range(len(first.children))]
        return C.Rec(sum(c.n for c in cols), first.names, kids, first.node, v)
    if isinstance(first, C.Const):
        return C.Const(sum(c.n for c in cols), first.node, v)
    if isinstance(first, C.Union):
        tags = np.concatenate([c.tags for c in cols])
        offs = []
        base = np.zeros(len(first.children), np.int64)
        for c in cols:
            offs.append((c.offsets.astype(np.int64) + base[c.tags.astype(np.int64)]).astype(first.offsets.dtype))
            base += np.array([k.n for k in c.children], np.int64)
        kids = [concat([c.children[i] for c in cols]) for i in range(len(first.children))]
        return C.Union(tags, np.concatenate(offs), first.names, kids, first.node, v)
    raise TypeError(type(first))


def _rows_of(col, a, b):
    if a == 0 and b == col.n:
        return col
    return take(col, np.arange(a, b, dtype=np.int64))
