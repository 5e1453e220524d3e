"""Search indexes built on demand (issue 30, SPEC 14.6): the four HEP001
families `CHUNK_MINMAX`, `SORTED_ROWS`, `BITMAP` and `CHUNK_BLOOM` over one
leaf column of a vector (`metadata/SEARCH_INDEXES`, linked by `@SOURCE`) or
of an h5col table (`TABLE/SEARCH_INDEXES`, linked by the column's
`SEARCH_INDEX_LIST`), byte for byte the layout the Rust library writes
(`build_index`, `drop_index`, `list_indexes`), and their use by `filters=`
(`ColumnIndexes`: candidate rows from SORTED_ROWS and BITMAP, candidate
chunks from CHUNK_BLOOM). An index whose tokens or structure are not what
the format says is "not present" for queries, never an error."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

import h5py
import numpy as np

from . import _columns as C
from . import _h5
from . import _murmur
from . import _schema as S
from . import _stats
from ._errors import FormatError

GROUP = "SEARCH_INDEXES"
MINMAX, SORTED, BITMAP, BLOOM = "CHUNK_MINMAX", "SORTED_ROWS", "BITMAP", "CHUNK_BLOOM"
SUFFIX = {MINMAX: "__chunk_minmax", SORTED: "__sorted_rows", BITMAP: "__bitmap", BLOOM: "__chunk_bloom"}
INDEX_CHUNK_BYTES = 64 << 10
MAX_BITMAP_VALUES = 65_536
# Most bytes a bitmap may take (K * ceil(NROWS / 8)); SORTED_ROWS answers the
# same questions in 8 bytes a row.
MAX_BITMAP_BYTES = 1 << 30


def bitmap_chunks(row_bytes):
    """A bitmap's chunk shape: (max(1, 65536 // W), W), W = min(65536, max(1, row bytes))."""
    w = min(INDEX_CHUNK_BYTES, max(1, row_bytes))
    return (max(1, INDEX_CHUNK_BYTES // w), w)
HASH_FAMILY = "murmur3_x64_128_double"
#: Rows read at a time while building (bounded memory for the chunk families).
BUILD_ROWS = 1 << 20


def kind_of(kind):
    """'sorted-rows', 'SORTED_ROWS', ... -> the HEP001 KIND."""
    if not isinstance(kind, str):
        raise TypeError(f"index kind: expected a str, found {type(kind).__name__}")
    k = kind.strip().upper().replace("-", "_")
    if k not in SUFFIX:
        raise ValueError(f"unknown index kind {kind!r}; kinds: 'chunk-minmax', 'sorted-rows', 'bitmap', "
                         "'chunk-bloom' (or the HEP001 spellings CHUNK_MINMAX, SORTED_ROWS, BITMAP, CHUNK_BLOOM)")
    return k


# ---------------------------------------------------------------------------
# Attributes


_u64 = _stats._u64_attr
_str = _stats._str_attr
_write_u64 = _stats._write_u64_attr


def _write_ascii(obj, name, value):
    if name in obj.attrs:
        del obj.attrs[name]
    _h5.write_attr_ascii(obj, name, value)


def _write_int(obj, name, value, tid, mtype, npt):
    if name in obj.attrs:
        del obj.attrs[name]
    sid = h5py.h5s.create(h5py.h5s.SCALAR)
    aid = h5py.h5a.create(obj.id, name.encode(), tid, sid)
    aid.write(np.array(value, npt), mtype=mtype)


def _write_bool(obj, name, value):
    """A scalar HEP001 boolean (h5py's bool enum: int8, FALSE = 0, TRUE = 1)."""
    if name in obj.attrs:
        del obj.attrs[name]
    obj.attrs.create(name, np.bool_(value))


def _read_bool(obj, name):
    try:
        if name not in obj.attrs:
            return None
        t = obj.attrs.get_id(name).get_type()
        if t.get_class() != h5py.h5t.ENUM or t.get_size() != 1 or t.get_nmembers() != 2:
            return None
        if {t.get_member_name(i): t.get_member_value(i) for i in range(2)} != {b"FALSE": 0, b"TRUE": 1}:
            return None
        v = obj.attrs[name]
        if np.asarray(v).shape != ():
            return None
        return bool(v)
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None


def _uint_attr(obj, name):
    """A scalar unsigned integer attribute of any width, or None."""
    try:
        if name not in obj.attrs:
            return None
        aid = obj.attrs.get_id(name)
        t = aid.get_type()
        if aid.shape != () or t.get_class() != h5py.h5t.INTEGER or t.get_sign() != h5py.h5t.SGN_NONE:
            return None
        out = np.zeros((), np.uint64)
        aid.read(out, mtype=h5py.h5t.NATIVE_UINT64)
        return int(out)
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None


def _kind_attr(ds):
    """KIND when it is a scalar fixed-length string, else None."""
    try:
        if "KIND" not in ds.attrs:
            return None
        aid = ds.attrs.get_id("KIND")
        t = aid.get_type()
        if aid.shape != () or t.get_class() != h5py.h5t.STRING or t.is_variable_str():
            return None
        return _str(ds, "KIND")
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None


def _clear_tokens(ds):
    for t in ("SOURCE_GENERATION", "SOURCE_NROWS"):
        if t in ds.attrs:
            del ds.attrs[t]


# ---------------------------------------------------------------------------
# Leaves: one column's stored values, read by ranges or at rows


class LeafData:
    """One indexable column: `n` rows, `chunk` (the source's chunk length),
    `domain` ('int', 'float', 'bool', 'enum', 'str'), `store` (numpy dtype of
    the stored numbers; None for text), `read(a, b)` -> (values, missing or
    None) with text as a numpy 'S' array, `at(rows)` -> values at sorted rows."""

    nan_fill = False  # a table column whose fill value is NaN (missing rows are NaN rows)
    categorical = False

    def hash_values(self, vals):
        """(h_a, h_b) of canonical bytes of stored values (no NaN, no missing)."""
        if self.domain == "str":
            return _murmur.hash128_strings([bytes(x) for x in vals.tolist()])
        v = np.asarray(vals, self.store)
        if self.domain == "float":
            v = np.where(v == 0, np.zeros((), self.store), v).astype(self.store)
        return _murmur.hash128_values(v)


def _to_S(col):
    """A decoded Str column as a numpy 'S' array (NUL-free UTF-8, so nothing is lost)."""
    n = col.n
    offs = col.offsets.astype(np.int64)
    lens = np.diff(offs)
    width = max(1, int(lens.max()) if n else 1)
    mat = np.zeros((n, width), np.uint8)
    total = int(lens.sum())
    if total:
        rows = np.repeat(np.arange(n, dtype=np.int64), lens)
        starts = np.repeat(offs[:-1], lens)
        flat = _spans(offs[:-1], lens)
        mat[rows, flat - starts] = col.data[flat]
    return mat.view(f"S{width}").reshape(n)


def _spans(starts, lens):
    """The element positions of spans (start, length), back to back."""
    before = np.cumsum(lens) - lens
    return np.repeat(starts - before, lens) + np.arange(int(lens.sum()), dtype=np.int64)


class VectorLeaf(LeafData):
    def __init__(self, vec, column):
        from . import _filters
        self.vec, self.column = vec, column
        self.n = len(vec)
        try:
            self.sel = vec._selection([column])
        except KeyError:
            raise ValueError(f"no column {column!r} in vector {vec.group.name}; columns: {vec.columns}") from None
        try:
            probe, _ = _filters.leaf_of(vec._read_rows(self.sel, 0, 0), column)
        except KeyError:
            probe = None
        kind = _filters._numpy_kind(probe) if probe is not None else None
        if kind is None or kind == "bytes":
            raise TypeError(f"column {column!r} of vector {vec.group.name} cannot be indexed: indexes take numbers, "
                            "bools, enums, chars, strings and times (alone, in records or in an Option)")
        self.kind = kind
        path = []
        sel = self.sel
        while isinstance(sel, dict) and len(sel) == 1:
            (nm, sel), = sel.items()
            path.append(nm)
        self.path = tuple(path)
        self.source = _stats.source_of(self.path)
        node = C.leaf_node(probe.node)
        if kind == "str":
            self.domain, self.store = "str", None
        else:
            enc = node.encoded_type
            self.store = np.dtype("u1") if enc == "Bool" else S.NUMBERS.get(enc)
            if self.store is None or self.store.kind not in "iuf" or self.store.kind == "f" and \
                    self.store.itemsize < 4:
                raise TypeError(f"column {column!r} of vector {vec.group.name} cannot be indexed "
                                f"(encoded type {enc})")
            self.domain = {"float": "float", "bool": "bool", "enum": "enum"}.get(kind, "int")
        self.node = node
        self.ds = self._values_dataset()
        self.chunk = self._chunk_len()

    def _values_dataset(self):
        ds = self.vec.group.get(self.source)
        return ds if isinstance(ds, h5py.Dataset) else None

    def _chunk_len(self):
        ds = self.ds
        if ds is None:  # text in the VLS layout: its pointers
            g = self.vec.group.get(self.source.rsplit("/", 1)[0])
            ds = g.get("pointers") if isinstance(g, h5py.Group) else None
        if isinstance(ds, h5py.Dataset) and ds.chunks:
            return int(ds.chunks[0])
        return max(1, self.n)

    def h5type(self):
        if self.domain == "str":
            return h5py.h5t.py_create(h5py.string_dtype("utf-8"), logical=True)
        return self.ds.id.get_type()

    def read(self, a, b):
        from . import _filters
        col, inherited = _filters.leaf_of(self.vec._read_rows(self.sel, a, b), self.column)
        valid = C._combine(inherited, col.valid)
        missing = None if valid is None else ~valid
        if self.domain == "str":
            return _to_S(col), missing
        vals = _filters._stored(col, self.kind)
        return np.asarray(vals).astype(self.store, copy=False), missing

    def at(self, rows):
        rows = np.asarray(rows, np.int64)
        if self.ds is not None and self.domain not in ("str", "bool") and len(rows):
            raw = self.ds[rows]
            return np.asarray(raw).astype(self.store, copy=False)
        parts = [self.read(int(r), int(r) + 1)[0] for r in rows]
        if not parts:
            return np.zeros(0, self.store or "S1")
        if self.domain == "str":
            return np.array([p[0] for p in parts], dtype=object).astype("S") if parts else np.zeros(0, "S1")
        return np.concatenate(parts)


class TableLeaf(LeafData):
    def __init__(self, group, column, nrows):
        self.group, self.column, self.n = group, column, nrows
        obj = group.get(column) if isinstance(column, str) else None
        if not isinstance(obj, h5py.Dataset) or obj.ndim != 1:
            what = "a list column (HEP001 defines no search index on one)" if isinstance(obj, h5py.Group) \
                else "not a column"
            raise TypeError(f"column {column!r} of table {group.name} cannot be indexed: {what}")
        self.ds = obj
        t = obj.id.get_type()
        cls = t.get_class()
        dt = obj.dtype
        self.categorical = "CATEGORIES" in obj.attrs
        self.spacepad = False
        if cls == h5py.h5t.STRING and not t.is_variable_str():
            self.domain, self.store = "str", None
            self.spacepad = t.get_strpad() == h5py.h5t.STR_SPACEPAD
        elif _h5.is_h5col_bool(_h5.type_info(obj)):
            self.domain, self.store = "bool", np.dtype("u1")
        elif cls in (h5py.h5t.INTEGER, h5py.h5t.FLOAT) and dt.kind in "iuf" and dt.itemsize in (1, 2, 4, 8) \
                and not (dt.kind == "f" and dt.itemsize < 4):
            self.domain = "float" if dt.kind == "f" else ("enum" if self.categorical else "int")
            self.store = np.dtype(dt.str).newbyteorder("<")
        else:
            raise TypeError(f"column {column!r} of table {group.name} cannot be indexed: "
                            f"{_h5.type_info(obj).describe()} (indexes take numbers, h5col bools, categorical "
                            "codes and fixed-length strings)")
        self.fill = None
        if obj.id.get_create_plist().fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED \
                and self.domain != "bool":
            self.fill = obj.fillvalue
            if self.domain == "float" and np.isnan(self.fill):
                self.nan_fill = True
        self.chunk = int(obj.chunks[0]) if obj.chunks else max(1, nrows)

    def h5type(self):
        return self.ds.id.get_type()

    def _norm(self, raw):
        if self.domain == "str":
            raw = np.asarray(raw)
            if self.spacepad:
                raw = np.char.rstrip(raw, b" ")
            return raw.astype(f"S{max(1, raw.dtype.itemsize)}", copy=False)
        if self.domain == "bool":
            return np.asarray(raw).astype(np.uint8)
        return np.asarray(raw).astype(self.store, copy=False)

    def read(self, a, b):
        raw = self.ds[a:b] if b > a else self.ds[0:0]
        vals = self._norm(raw)
        missing = None
        if self.fill is not None:
            if self.nan_fill:
                missing = np.isnan(vals)
            elif self.domain == "str":
                f = bytes(self.fill)
                f = f.rstrip(b" ") if self.spacepad else f.rstrip(b"\0")
                missing = vals == np.bytes_(f)
            else:
                missing = vals == np.asarray(self.fill).astype(self.store)
        return vals, missing

    def at(self, rows):
        rows = np.asarray(rows, np.int64)
        if not len(rows):
            return self._norm(self.ds[0:0])
        return self._norm(self.ds[rows])


# ---------------------------------------------------------------------------
# Where indexes live


class Place:
    """The SEARCH_INDEXES group of one vector or table and its tokens."""

    def __init__(self, owner, si_parent, nrows, table):
        self.owner, self.parent, self.nrows, self.table = owner, si_parent, nrows, table

    @property
    def si(self):
        g = self.parent.get(GROUP) if GROUP in self.parent else None
        return g if isinstance(g, h5py.Group) else None

    @property
    def gen_holder(self):
        return self.owner if self.table else self.si

    def generation(self):
        h = self.gen_holder
        return None if h is None else _u64(h, "GENERATION")

    def ensure(self):
        """The SEARCH_INDEXES group, and the current GENERATION (created as 0
        when absent; repaired above every token when malformed, as h5col)."""
        if GROUP in self.parent and not isinstance(self.parent.get(GROUP), h5py.Group):
            raise FormatError("$", f"{self.parent.name}/{GROUP}", "SEARCH_INDEXES is not a group: indexes "
                                                                  "cannot be built here")
        si = self.parent.require_group(GROUP)
        holder = self.owner if self.table else si
        gen = _u64(holder, "GENERATION")
        if gen is not None:
            return si, gen
        malformed = "GENERATION" in holder.attrs
        datasets = [d for d in si.values() if isinstance(d, h5py.Dataset) and "KIND" in d.attrs]
        if not malformed and not datasets:
            _write_u64(holder, "GENERATION", 0)
            return si, 0
        floor = 0
        if malformed:
            try:
                floor = max(0, int(np.asarray(holder.attrs["GENERATION"]).reshape(-1)[0]))
            except (TypeError, ValueError, IndexError, OSError):
                floor = 0
        for d in datasets:
            t = _u64(d, "SOURCE_GENERATION")
            if t is not None and t > floor:
                floor = t
        _write_u64(holder, "GENERATION", floor + 1)
        return si, floor + 1

    def valid(self, ds):
        gen = self.generation()
        return (gen is not None and _kind_attr(ds) is not None and _u64(ds, "SOURCE_GENERATION") == gen
                and _u64(ds, "SOURCE_NROWS") == self.nrows)


def _refs(col_ds):
    """The object references of a column's SEARCH_INDEX_LIST (1-D), or []."""
    try:
        if "SEARCH_INDEX_LIST" not in col_ds.attrs:
            return []
        refs = np.asarray(col_ds.attrs["SEARCH_INDEX_LIST"])
        if refs.ndim != 1 or h5py.check_ref_dtype(refs.dtype) is None:
            return []
        return list(refs)
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return []


def _deref(group, ref):
    try:
        if not ref:
            return None
        obj = group[ref]
        return obj if isinstance(obj, h5py.Dataset) and obj.name is not None else None
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None


def _addr(obj):
    return h5py.h5o.get_info(obj.id).addr


def indexes_of(place, leaf):
    """[(KIND, dataset)] of every index dataset on `leaf` (valid or not)."""
    out = []
    si = place.si
    if si is None:
        return out
    if place.table:
        for ref in _refs(leaf.ds):
            ds = _deref(place.owner, ref)
            if ds is None or not ds.name.startswith(si.name + "/"):
                continue
            k = _kind_attr(ds)
            if k is not None:
                out.append((k, ds))
        return out
    try:
        items = list(si.items())
    except (OSError, RuntimeError, KeyError):
        return out
    for _, ds in items:
        if not isinstance(ds, h5py.Dataset):
            continue
        k = _kind_attr(ds)
        if k is not None and _str(ds, "SOURCE") == leaf.source:
            out.append((k, ds))
    return out


# ---------------------------------------------------------------------------
# Opening the target


def _open(where, name, mode):
    from ._vector import _open_where
    group, owned = _open_where(where, mode)
    try:
        if name is None:
            g = group
        else:
            if not isinstance(name, str) or not name:
                raise ValueError(f"invalid name {name!r}")
            if name not in group:
                raise KeyError(f"no vector or table {name!r} in {group.name}")
            g = group[name]
        if not isinstance(g, h5py.Group):
            raise FormatError("$", g.name, "expected a vector group or an h5col table group, found a dataset")
        return g, owned
    except BaseException:
        if owned is not None:
            _h5.close_file(owned)
        raise


def _is_table(g):
    try:
        return "CLASS" in g.attrs and _h5.read_attr_string(g, "CLASS", "$") == "COLUMN_TABLE"
    except (FormatError, OSError, TypeError, ValueError):
        return False


def _target(g, column):
    """(Place, LeafData) of `column` of the vector or table group `g`."""
    if _is_table(g):
        from ._tables import Table
        t = Table(g)
        if column not in t.columns:
            raise ValueError(f"no column {column!r} in table {g.name}; columns: {t.columns}")
        return Place(g, g, len(t), True), TableLeaf(g, column, len(t))
    from ._vector import Vector
    parent = g.parent
    name = g.name.rsplit("/", 1)[-1]
    v = Vector(parent, name)
    leaf = VectorLeaf(v, column)
    return Place(g, g["metadata"], len(v), False), leaf


# ---------------------------------------------------------------------------
# Computing


def _chunks(leaf):
    c = leaf.chunk
    n = leaf.n
    return [(i * c, min(n, (i + 1) * c)) for i in range(-(-n // c) if n else 0)]


def _nan_mask(leaf, vals):
    if leaf.domain == "float":
        return np.isnan(vals)
    return None


def _all_values(leaf):
    """(values, missing, nan) of every row, read in bounded pieces."""
    parts, miss, any_miss = [], [], False
    for a in range(0, leaf.n, BUILD_ROWS):
        v, m = leaf.read(a, min(leaf.n, a + BUILD_ROWS))
        parts.append(v)
        miss.append(m)
        any_miss |= m is not None
    if not parts:
        v, m = leaf.read(0, 0)
        parts, miss = [v], [m]
    if leaf.domain == "str":
        width = max(p.dtype.itemsize for p in parts)
        vals = np.concatenate([p.astype(f"S{width}") for p in parts])
    else:
        vals = np.concatenate(parts)
    missing = np.concatenate([np.zeros(len(p), bool) if m is None else m for p, m in zip(parts, miss)]) \
        if any_miss else np.zeros(len(vals), bool)
    nan = _nan_mask(leaf, vals)
    return vals, missing, np.zeros(len(vals), bool) if nan is None else nan


def _tails(leaf, missing, nan):
    """(fill tail mask, NaN tail mask): with a NaN fill every missing row is a NaN row."""
    fill = missing & ~nan if leaf.nan_fill else missing
    return fill, nan & ~fill


def compute_sorted_rows(leaf):
    vals, missing, nan = _all_values(leaf)
    fill, nant = _tails(leaf, missing, nan)
    body = ~fill & ~nant
    rows = np.arange(leaf.n, dtype=np.uint64)
    b = vals[body]
    if leaf.domain == "float":
        b = np.where(b == 0, np.zeros((), b.dtype), b)  # -0 == +0: ties by row
    order = _stable_argsort(b)
    perm = np.concatenate([rows[body][order], rows[fill], rows[nant]])
    return perm, int(fill.sum()), int(nant.sum())


def _unique(vals):
    """Sorted distinct values (by sorting: faster than numpy's hashing unique here)."""
    s = np.sort(vals)
    if len(s) < 2:
        return s
    return s[np.concatenate([[True], s[1:] != s[:-1]])]


def _distinct(vals, domain):
    if domain == "float":
        vals = vals[~np.isnan(vals)]
        vals = np.where(vals == 0, np.zeros((), vals.dtype), vals)
    return _unique(vals)


def _stable_argsort(b):
    """np.argsort(b, kind="stable") (ties by position), faster: an unstable
    sort, then the runs of equal values put back in position order."""
    n = len(b)
    if n < 2 or n >= 1 << 32:
        return np.argsort(b, kind="stable")
    perm = np.argsort(b)
    sv = b[perm]
    new = sv[1:] != sv[:-1]
    if new.all():
        return perm
    rank = np.concatenate([[0], np.cumsum(new, dtype=np.uint64)])
    key = rank * np.uint64(n) + perm.astype(np.uint64)
    key.sort()
    return (key % np.uint64(n)).astype(np.int64)


def bitmap_values(leaf):
    """(distinct non-missing non-NaN values sorted, exhaustive), reading bounded pieces."""
    distinct = None
    exhaustive = True
    for a in range(0, leaf.n, BUILD_ROWS):
        v, m = leaf.read(a, min(leaf.n, a + BUILD_ROWS))
        keep = np.ones(len(v), bool) if m is None else ~m
        nan = _nan_mask(leaf, v)
        if nan is not None:
            if (nan & keep).any() and not leaf.nan_fill:
                exhaustive = False
            keep &= ~nan
        d = _distinct(v[keep], leaf.domain)
        if distinct is None:
            distinct = d
        elif leaf.domain == "str":
            w = max(distinct.dtype.itemsize, d.dtype.itemsize)
            distinct = np.union1d(distinct.astype(f"S{w}"), d.astype(f"S{w}"))
        else:
            distinct = np.union1d(distinct, d)
        if len(distinct) > MAX_BITMAP_VALUES:
            raise ValueError(f"column {leaf.column!r} holds more than {MAX_BITMAP_VALUES:,} distinct values "
                             f"(at least {len(distinct):,}): a BITMAP enumerates at most {MAX_BITMAP_VALUES:,}; "
                             "use kind='sorted-rows'")
    if distinct is None:
        distinct = leaf.read(0, 0)[0][:0]
    return distinct, exhaustive


def bitmap_slabs(leaf, distinct):
    """Yields (first byte, (K, bytes) uint8 block) of the bitmap, a bounded
    number of rows at a time (at most about 256 MiB of block)."""
    k = len(distinct)
    if not k or not leaf.n:
        return
    per = max(1, (256 << 20) // k)  # bytes per bitmap row in one block
    step = max(8, min(BUILD_ROWS, per * 8) // 8 * 8)
    for a in range(0, leaf.n, step):
        b = min(leaf.n, a + step)
        v, m = leaf.read(a, b)
        keep = np.ones(len(v), bool) if m is None else ~m
        nan = _nan_mask(leaf, v)
        if nan is not None:
            keep &= ~nan
        w = v
        if leaf.domain == "float":
            w = np.where(v == 0, np.zeros((), v.dtype), v)
        elif leaf.domain == "str":
            w = w.astype(distinct.dtype)  # longer strings than any value are no value
        code = np.minimum(np.searchsorted(distinct, w), k - 1)
        keep &= distinct[code] == w
        idx = np.flatnonzero(keep)
        block = np.zeros((k, (b - a + 7) // 8), np.uint8)
        np.bitwise_or.at(block, (code[idx], idx >> 3), (np.uint8(1) << (idx & 7).astype(np.uint8)).astype(np.uint8))
        yield a // 8, block


def compute_bitmap(leaf):
    """(values, bits, exhaustive) in memory (small columns, tests)."""
    values, exhaustive = bitmap_values(leaf)
    bits = np.zeros((len(values), (leaf.n + 7) // 8), np.uint8)
    for x, block in bitmap_slabs(leaf, values):
        bits[:, x:x + block.shape[1]] = block
    return values, bits, exhaustive


def bloom_params(n):
    """(m_bits, k) for at most `n` distinct values per chunk at a 1% false-positive rate."""
    n = max(1, int(n))
    m = max(64, math.ceil(-n * math.log(0.01) / (math.log(2) ** 2)))
    m = -(-m // 8) * 8
    k = int(math.floor(m / n * math.log(2) + 0.5))
    return m, min(16, max(1, k))


def _chunk_keys(leaf, a, b):
    v, m = leaf.read(a, b)
    keep = np.ones(len(v), bool) if m is None else ~m
    return _distinct(v[keep], leaf.domain)


def compute_bloom(leaf):
    """(bits, k, m_bits): two passes (distinct values per chunk, then the
    bits); the first pass's values are kept while they fit in 256 MiB."""
    chunks = _chunks(leaf)
    kept, size, n = [], 0, 1
    for a, b in chunks:
        keys = _chunk_keys(leaf, a, b)
        n = max(n, len(keys))
        size += keys.nbytes
        kept = None if kept is None or size > (256 << 20) else kept + [keys]
    m_bits, k = bloom_params(n)
    out = np.zeros((len(chunks), m_bits // 8), np.uint8)
    for i, (a, b) in enumerate(chunks):
        keys = kept[i] if kept is not None else _chunk_keys(leaf, a, b)
        if not len(keys):
            continue
        ha, hb = leaf.hash_values(keys)
        bits = np.zeros(m_bits, bool)
        for g in _murmur.iter_positions(ha, hb, k, m_bits):
            bits[g] = True
        out[i] = np.packbits(bits, bitorder="little")
    return out, k, m_bits


def compute_table_minmax(leaf):
    """h5col's compute_chunk_minmax (placeholders: the fill, else NaN)."""
    ds = leaf.ds
    chunks = _chunks(leaf)
    dt = np.dtype([("min", ds.dtype), ("max", ds.dtype), ("nan_count", "<u8"), ("fill_count", "<u8"),
                   ("n", "<u8")])
    out = np.zeros(len(chunks), dt)
    for i, (a, b) in enumerate(chunks):
        raw = ds[a:b]
        vals, missing = leaf.read(a, b)
        fill = np.zeros(b - a, bool) if missing is None else missing
        nan = _nan_mask(leaf, vals)
        if nan is not None:
            orderable = ~fill & ~nan
            out[i]["nan_count"] = int(nan.sum())
        else:
            orderable = ~fill
        out[i]["fill_count"] = int(fill.sum())
        out[i]["n"] = b - a
        sub = raw[orderable]
        if leaf.spacepad:
            sub = np.char.rstrip(sub, b" ")
        if len(sub):
            if sub.dtype.kind in "SOV":
                s = np.sort(sub)
                lo, hi = s[0], s[-1]
            else:
                lo, hi = sub.min(), sub.max()
        elif leaf.fill is not None:
            lo = hi = leaf.fill
        else:
            lo = hi = np.nan
        out[i]["min"] = lo
        out[i]["max"] = hi
    return out


def compute_vector_minmax(leaf):
    src = leaf.ds
    el = _stats._mem_dtype(src)
    chunks = _chunks(leaf)
    out = np.zeros(len(chunks), _stats._entry_dtype(el))
    for i, (a, b) in enumerate(chunks):
        vals, missing = leaf.read(a, b)
        keep = np.ones(b - a, bool) if missing is None else ~missing
        e = out[i]
        e["n"] = b - a
        e["fill_count"] = int((~keep).sum())
        nan = _nan_mask(leaf, vals)
        if nan is not None:
            e["nan_count"] = int((nan & keep).sum())
            keep &= ~nan
        sub = vals[keep]
        if len(sub):
            e["min"] = sub.min()
            e["max"] = sub.max()
    return out


# ---------------------------------------------------------------------------
# Writing


def _resizable(ds, shape):
    if ds.shape == shape:
        return True
    if ds.chunks is None or len(ds.shape) != len(shape):
        return False
    return all(m is None or m >= s for m, s in zip(ds.maxshape, shape))


def _create(si, name, tid, shape, maxshape, chunks):
    space = h5py.h5s.create_simple(shape, tuple(h5py.h5s.UNLIMITED if m is None else m for m in maxshape))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    h5py.h5d.create(si.id, name.encode("utf-8"), tid, space, dcpl=dcpl)
    return si[name]


def _write_raw(ds, arr, tid):
    if arr.size:
        ds.id.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(arr), mtype=tid)


def _free_name(si, name):
    base, i = name, 1
    while name in si:
        name = f"{base}_{i}"
        i += 1
    return name


def _put(si, existing, name, tid, shape, maxshape, chunks, exact_layout):
    """The dataset to write an index's content into: `existing` resized in place
    when its type and layout allow, else a new one (`existing` deleted)."""
    if existing is not None:
        ok = existing.id.get_type() == tid and _resizable(existing, shape)
        if ok and exact_layout:
            ok = existing.chunks == chunks and existing.maxshape == maxshape
        if ok:
            _clear_tokens(existing)
            if existing.shape != shape:
                existing.resize(shape)
            return existing, False
        name = existing.name.rsplit("/", 1)[-1]
        del si[name]
    return _create(si, _free_name(si, name), tid, shape, maxshape, chunks), True


def _u64_type():
    return h5py.h5t.STD_U64LE


def _link_table(place, leaf, ds, old):
    """Adds `ds` to the column's SEARCH_INDEX_LIST (replacing `old`, a deleted index's reference)."""
    col = leaf.ds
    keep = []
    for ref in _refs(col):
        t = _deref(place.owner, ref)
        if t is None:
            continue  # dangling (e.g. the index just replaced): HEP001 allows none
        if old is not None and t == old:
            continue
        if _addr(t) == _addr(ds):
            return
        keep.append(ref)
    if "SEARCH_INDEX_LIST" in col.attrs:
        del col.attrs["SEARCH_INDEX_LIST"]
    col.attrs.create("SEARCH_INDEX_LIST", np.array([*keep, ds.ref], dtype=h5py.ref_dtype))


def _unlink_table(place, leaf, targets):
    col = leaf.ds
    addrs = {_addr(t) for t in targets}
    refs = _refs(col)
    keep = []
    for ref in refs:
        t = _deref(place.owner, ref)
        if t is not None and _addr(t) in addrs:
            continue
        keep.append(ref)
    if len(keep) == len(refs):
        return
    del col.attrs["SEARCH_INDEX_LIST"]
    if keep:
        col.attrs.create("SEARCH_INDEX_LIST", np.array(keep, dtype=h5py.ref_dtype))


def _default_name(place, leaf, kind):
    if place.table:
        return leaf.column + SUFFIX[kind]
    return leaf.source[len("data/"):].replace("/", ".") + SUFFIX[kind]


def _existing(place, leaf, kind):
    for k, ds in indexes_of(place, leaf):
        if k == kind:
            return ds
    return None


def _build(place, leaf, kind):
    si, gen = place.ensure()
    old = _existing(place, leaf, kind)
    old_ref = old
    name = _default_name(place, leaf, kind)
    if old is None and name in si:
        raise FormatError("$", f"{si.name}/{name}", "SEARCH_INDEXES already holds a dataset of this name that "
                                                    f"is not the {kind} index of column {leaf.column!r}")
    n = leaf.n
    if old is not None:
        # A rebuild in place: the old index stops being believed before any of
        # its content (or its BITMAP values) changes.
        _clear_tokens(old)
        place.owner.file.flush()
    if kind == SORTED:
        perm, fill_tail, nan_tail = compute_sorted_rows(leaf)
        ds, _ = _put(si, old, name, _u64_type(), (n,), (None,), (8192,), False)
        _write_raw(ds, perm.astype("<u8"), h5py.h5t.STD_U64LE)
        _write_u64(ds, "nan_tail_length", nan_tail)
        _write_u64(ds, "fill_tail_length", fill_tail)
        _write_bool(ds, "ordered", True)
    elif kind == BITMAP:
        values, exhaustive = bitmap_values(leaf)
        shape = (len(values), (n + 7) // 8)
        if shape[0] * shape[1] > MAX_BITMAP_BYTES:
            raise ValueError(f"column {leaf.column!r}: a BITMAP of {shape[0]:,} distinct values over {n:,} rows "
                             f"would take {shape[0] * shape[1]:,} bytes (at most {MAX_BITMAP_BYTES:,}); "
                             "use kind='sorted-rows'")
        vname = name + "_values"
        old_values = _values_of(place, old) if old is not None else None
        if old is None and vname in si:
            raise FormatError("$", f"{si.name}/{vname}", "SEARCH_INDEXES already holds a dataset of this name")
        tid = leaf.h5type()
        item = 8 if leaf.domain == "str" and place.table is False else tid.get_size()
        vds, _ = _put(si, old_values, vname, tid, (len(values),), (None,),
                      (max(1, INDEX_CHUNK_BYTES // max(1, item)),), False)
        if place.table or leaf.domain != "str":
            if leaf.domain == "str":
                w = tid.get_size()
                _write_raw(vds, values.astype(f"S{w}"), tid)
            else:
                _write_raw(vds, values.astype(leaf.store), tid)
        elif len(values):
            vds[...] = np.array([bytes(x).decode("utf-8") for x in values.tolist()], dtype=object)
        ds, _ = _put(si, old, name, h5py.h5t.STD_U8LE, shape, (None, None), bitmap_chunks(shape[1]), False)
        for x, block in bitmap_slabs(leaf, values):
            ds[:, x:x + block.shape[1]] = block
        if "VALUES" in ds.attrs:
            del ds.attrs["VALUES"]
        ds.attrs.create("VALUES", vds.ref, dtype=h5py.ref_dtype)
        _write_bool(ds, "ordered", True)
        _write_bool(ds, "exhaustive", exhaustive)
    elif kind == BLOOM:
        if leaf.domain == "enum" or leaf.categorical:
            raise TypeError(f"column {leaf.column!r} is an enumeration: HEP001 allows CHUNK_BLOOM on no "
                            "enumeration but bool; use kind='bitmap' or 'sorted-rows'")
        bits, k, m_bits = compute_bloom(leaf)
        mb = m_bits // 8
        ds, _ = _put(si, old, name, h5py.h5t.STD_U8LE, bits.shape, (None, mb), (1, mb), True)
        _write_raw(ds, bits, h5py.h5t.STD_U8LE)
        _write_int(ds, "k", k, h5py.h5t.STD_U16LE, h5py.h5t.NATIVE_UINT16, np.uint16)
        _write_u64(ds, "m_bits", m_bits)
        _write_ascii(ds, "hash_family", HASH_FAMILY)
        _write_int(ds, "seed", 0, h5py.h5t.STD_U32LE, h5py.h5t.NATIVE_UINT32, np.uint32)
    else:  # CHUNK_MINMAX
        if place.table:
            entries = compute_table_minmax(leaf)
            ftype = h5py.h5t.py_create(entries.dtype, logical=True)
            chunk = max(1, INDEX_CHUNK_BYTES // max(1, entries.dtype.itemsize))
            if old is not None and old.id.get_type() == ftype and old.maxshape == (None,) and old.chunks:
                ds = old
                _clear_tokens(ds)
                if ds.shape[0] < len(entries):
                    ds.resize((len(entries),))
            else:
                if old is not None:
                    del si[old.name.rsplit("/", 1)[-1]]
                ds = _create(si, _free_name(si, name), ftype, (len(entries),), (None,), (chunk,))
            if len(entries):
                ds[:len(entries)] = entries
        else:
            if tuple(leaf.path) not in {p for p, _ in _stats.readable_leaves(leaf.vec.node)} or leaf.ds is None:
                raise TypeError(f"column {leaf.column!r} of vector {place.owner.name}: CHUNK_MINMAX takes numbers, "
                                "bools, enums and times reached through records, alone or in an Option")
            entries = compute_vector_minmax(leaf)
            src = leaf.ds
            if old is not None and _stats._same_type(old, src) and old.maxshape == (None,) and old.chunks:
                ds = old
                _clear_tokens(ds)
                _stats._put(ds, src, 0, entries)
            else:
                if old is not None:
                    del si[old.name.rsplit("/", 1)[-1]]
                ds = _stats._create(si, _free_name(si, name), src, entries, bool(src.fletcher32))
    if "KIND" not in ds.attrs or _kind_attr(ds) != kind:
        _write_ascii(ds, "KIND", kind)
    if not place.table and _str(ds, "SOURCE") != leaf.source:
        if "SOURCE" in ds.attrs:
            del ds.attrs["SOURCE"]
        _stats._write_source(ds, leaf.source)
    place.owner.file.flush()
    # Content first, current tokens last (building over committed rows is no mutation).
    _write_u64(ds, "SOURCE_GENERATION", gen)
    _write_u64(ds, "SOURCE_NROWS", n)
    if place.table:
        _link_table(place, leaf, ds, old_ref if old_ref is not None and old_ref.id.valid else None)
    place.owner.file.flush()
    return ds


def _values_of(place, ds):
    """A BITMAP's values dataset (its VALUES reference, under SEARCH_INDEXES, no KIND), or None."""
    try:
        if "VALUES" not in ds.attrs:
            return None
        ref = ds.attrs["VALUES"]
        if not isinstance(ref, h5py.h5r.Reference) or not ref:
            return None
        t = place.owner[ref]
        si = place.si
        if not isinstance(t, h5py.Dataset) or t.name is None or si is None or \
                not t.name.startswith(si.name + "/") or "KIND" in t.attrs or t.ndim != 1:
            return None
        return t
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None


# ---------------------------------------------------------------------------
# The API


def build_index(where: Any, name: Optional[str], column: str, kind: str = "sorted-rows") -> None:
    """Builds (or rebuilds in place) a HEP001 search index on leaf `column`
    (dotted, as `filters=` names it) of the vector or h5col table `name` in
    `where` (a path, opened for writing, or an h5py group; `name=None`: the
    group itself). `kind`: 'sorted-rows', 'bitmap', 'chunk-bloom',
    'chunk-minmax' (or SORTED_ROWS, BITMAP, CHUNK_BLOOM, CHUNK_MINMAX).
    The index is valid for the current rows; appends make all but
    CHUNK_MINMAX stale (ignored) until it is built again (SPEC 14.6)."""
    k = kind_of(kind)
    g, owned = _open(where, name, "a")
    try:
        place, leaf = _target(g, column)
        _build(place, leaf, k)
    finally:
        if owned is not None:
            owned.close()


def drop_index(where: Any, name: Optional[str], column: str, kind: str = "sorted-rows") -> bool:
    """Removes the `kind` index of `column` (a BITMAP with its values; on a
    table also its SEARCH_INDEX_LIST reference, the attribute with the last
    one). True when there was one."""
    k = kind_of(kind)
    g, owned = _open(where, name, "a")
    try:
        place, leaf = _target(g, column)
        si = place.si
        found = [ds for kk, ds in indexes_of(place, leaf) if kk == k]
        if not found or si is None:
            return False
        extra = [v for v in (_values_of(place, ds) for ds in found if k == BITMAP) if v is not None]
        if place.table:
            _unlink_table(place, leaf, found)
        for ds in found + extra:
            nm = ds.name
            if nm in g.file:
                del g.file[nm]
        g.file.flush()
        return True
    finally:
        if owned is not None:
            owned.close()


def _column_of_source(source):
    if not isinstance(source, str) or not source.startswith("data/") or not source.endswith("/values"):
        return source
    inner = source[len("data/"):-len("/values")]
    return inner.replace("/", ".") if inner else "value"


def list_indexes(where: Any, name: Optional[str]) -> List[Dict[str, Any]]:
    """The search indexes of vector or table `name`: dicts with `column`,
    `kind` (HEP001 KIND), `valid` (tokens match the current rows) and
    `dataset` (its HDF5 path). Vectors list every index under
    `metadata/SEARCH_INDEXES` (the default statistics included), tables the
    ones their columns' SEARCH_INDEX_LIST references."""
    g, owned = _open(where, name, "r")
    try:
        out = []
        if _is_table(g):
            from ._tables import Table
            t = Table(g)
            place = Place(g, g, len(t), True)
            for c in t.columns:
                obj = g.get(c)
                if not isinstance(obj, h5py.Dataset):
                    continue
                for ref in _refs(obj):
                    ds = _deref(g, ref)
                    k = None if ds is None else _kind_attr(ds)
                    if k is not None:
                        out.append({"column": c, "kind": k, "valid": place.valid(ds), "dataset": ds.name})
            return out
        from ._vector import Vector
        v = Vector(g.parent, g.name.rsplit("/", 1)[-1])
        place = Place(g, g["metadata"], len(v), False)
        si = place.si
        if si is None:
            return out
        for nm in sorted(si):
            ds = si.get(nm)
            if not isinstance(ds, h5py.Dataset):
                continue
            k = _kind_attr(ds)
            if k is None:
                continue
            out.append({"column": _column_of_source(_str(ds, "SOURCE")), "kind": k, "valid": place.valid(ds),
                        "dataset": ds.name})
        return out
    finally:
        if owned is not None:
            _h5.close_file(owned)


# ---------------------------------------------------------------------------
# Queries: what the valid indexes of one column say


class ColumnIndexes:
    """The valid SORTED_ROWS, BITMAP and CHUNK_BLOOM indexes of one column of
    an opened container, and the candidates they give for a `Pred`. `used`
    records which index answered (tests and explain)."""

    def __init__(self, place, leaf):
        self.place, self.leaf = place, leaf
        self.sorted = self.bitmap = self.bloom = None
        self.used = []
        try:
            found = indexes_of(place, leaf)
        except (OSError, RuntimeError, KeyError, ValueError, TypeError):
            found = []
        for k, ds in found:
            try:
                if not place.valid(ds):
                    continue
                if k == SORTED and self.sorted is None and self._sorted_ok(ds):
                    self.sorted = ds
                elif k == BITMAP and self.bitmap is None and self._bitmap_ok(ds):
                    self.bitmap = ds
                elif k == BLOOM and self.bloom is None and self._bloom_ok(ds):
                    self.bloom = ds
            except (OSError, RuntimeError, KeyError, ValueError, TypeError):
                continue

    def any(self):
        return self.sorted is not None or self.bitmap is not None or self.bloom is not None

    # -- structure ------------------------------------------------------------

    def _sorted_ok(self, ds):
        n = self.leaf.n
        if ds.ndim != 1 or ds.dtype.kind != "u" or ds.shape[0] < n or _read_bool(ds, "ordered") is not True:
            return False
        nt, ft = _u64(ds, "nan_tail_length"), _u64(ds, "fill_tail_length")
        if nt is None or ft is None or nt + ft > n:
            return False
        self.body = n - nt - ft
        return True

    def _bitmap_ok(self, ds):
        vals = _values_of(self.place, ds)
        if vals is None or ds.ndim != 2 or ds.dtype != np.uint8 or ds.shape[0] != vals.shape[0] or \
                ds.shape[1] < (self.leaf.n + 7) // 8:
            return False
        self.bitmap_values = vals
        return True

    def _bloom_ok(self, ds):
        if ds.ndim != 2 or ds.dtype != np.uint8:
            return False
        k, m, seed = _uint_attr(ds, "k"), _uint_attr(ds, "m_bits"), _uint_attr(ds, "seed")
        if _str(ds, "hash_family") != HASH_FAMILY or k is None or m is None or seed is None or k == 0 or \
                m % 8 or m != 8 * ds.shape[1] or m == 0 or k > 1024:
            return False
        need = -(-self.leaf.n // self.leaf.chunk) if self.leaf.n else 0
        if ds.shape[0] < need:
            return False
        self.bloom_params = (k, m, seed)
        return True

    # -- query values in the stored domain -------------------------------------

    def eq_values(self, pred):
        """The stored values `pred` (== or in) can equal (Python ints, floats or bytes)."""
        leaf = self.leaf
        if pred.kind in ("str", "bytes"):
            return [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in pred.vals]
        out = []
        if leaf.domain == "float":
            for q in pred._prune_values():
                f = np.array(q, leaf.store)
                if float(f) == q:
                    out.append(0.0 if q == 0 else float(q))
            return out
        info = np.iinfo(leaf.store)
        for q in pred._prune_values():
            if info.min <= q <= info.max:
                out.append(int(q))
        return out

    def _bounds(self, pred):
        """[(lo, lo strict, hi, hi strict)] value ranges for an ordering or ==/in
        predicate (None for an open end), or None when no range applies."""
        if pred.base in ("==", "in"):
            return [(v, False, v, False) for v in self.eq_values(pred)]
        if pred.kind in ("str", "bytes"):
            v = pred.vals[0]
            v = v.encode("utf-8") if isinstance(v, str) else bytes(v)
            return [{"<": (None, False, v, True), "<=": (None, False, v, False), ">": (v, True, None, False),
                     ">=": (v, False, None, False)}[pred.base]]
        c = pred.canon
        if c[0] == "none":
            return []
        if c[0] == "all":
            return None
        op, v = c
        v = float(v) if pred.float else int(v)
        return [{"<=": (None, False, v, False), ">=": (v, False, None, False), "==": (v, False, v, False)}[op]]

    # -- SORTED_ROWS ----------------------------------------------------------

    def sorted_rows(self, pred):
        """Sorted candidate rows (a superset of the matches) or None."""
        if self.sorted is None or pred.negated:
            return None
        bounds = self._bounds(pred)
        if bounds is None:
            return None
        if not bounds:
            return np.zeros(0, np.int64)
        keys = []
        for lo, los, hi, his in bounds:
            keys.append((lo, los))
            keys.append((hi, not his))
        pos = self._search([k for k in keys])
        ranges = []
        for j, (lo, los, hi, his) in enumerate(bounds):
            a = 0 if lo is None else pos[2 * j]
            b = self.body if hi is None else pos[2 * j + 1]
            if b > a:
                ranges.append((a, b))
        total = sum(b - a for a, b in ranges)
        if total > max(4096, self.leaf.n // 4):
            return None  # a scan reads less than the permutation and the rows
        self.used.append(SORTED)
        if not ranges:
            return np.zeros(0, np.int64)
        ranges.sort()
        parts = [self.sorted[a:b] for a, b in ranges]
        rows = np.unique(np.concatenate(parts).astype(np.int64))
        if len(rows) and (rows[-1] >= self.leaf.n):
            raise FormatError("$", self.sorted.name, f"a valid SORTED_ROWS index holds row {int(rows[-1])} of a "
                                                     f"column of {self.leaf.n} rows")
        return rows

    def _search(self, keys):
        """For each (v, strict): the first body position whose value is > v
        (strict) or >= v; None values (open ends) give 0. Lockstep binary
        searches: each step reads the probed permutation entries and values at once."""
        m = len(keys)
        lo = np.zeros(m, np.int64)
        hi = np.full(m, self.body, np.int64)
        for j, (v, _) in enumerate(keys):
            if v is None:
                hi[j] = 0
        while True:
            active = np.flatnonzero(lo < hi)
            if not len(active):
                return lo.tolist()
            mid = (lo[active] + hi[active]) // 2
            upos = np.unique(mid)
            rows = np.asarray(self.sorted[upos], np.uint64)
            if len(rows) and int(rows.max()) >= self.leaf.n:
                raise FormatError("$", self.sorted.name, "a valid SORTED_ROWS index holds a row past the column's "
                                                         f"{self.leaf.n} rows")
            r = rows.astype(np.int64)
            ur, inv = np.unique(r, return_inverse=True)
            vals = self.leaf.at(ur)[inv]
            vals = vals.tolist()
            at = dict(zip(upos.tolist(), vals))
            for j, p in zip(active.tolist(), mid.tolist()):
                x = at[p]
                v, strict = keys[j]
                if (x > v) if strict else (x >= v):
                    hi[j] = p
                else:
                    lo[j] = p + 1

    # -- BITMAP -----------------------------------------------------------------

    def bitmap_rows(self, pred):
        if self.bitmap is None or pred.negated or pred.base not in ("==", "in"):
            return None
        want = self.eq_values(pred)
        vals = self.bitmap_values[...]
        if self.leaf.domain == "str":
            stored = [x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in vals.tolist()]
            if getattr(self.leaf, "spacepad", False):
                stored = [x.rstrip(b" ") for x in stored]
            else:
                stored = [x.rstrip(b"\0") for x in stored]
        else:
            stored = np.asarray(vals).astype(self.leaf.store).tolist() if np.asarray(vals).dtype.kind != "V" \
                else np.frombuffer(np.asarray(vals).tobytes(), self.leaf.store).tolist()
        where = {}
        for k, x in enumerate(stored):
            where.setdefault(x, []).append(k)
        exhaustive = _read_bool(self.bitmap, "exhaustive") is True
        ks = []
        for v in want:
            hit = where.get(v)
            if hit is None:
                if not exhaustive:
                    return None
                continue
            ks.extend(hit)
        self.used.append(BITMAP)
        n = self.leaf.n
        if not ks or n == 0:
            return np.zeros(0, np.int64)
        nbytes = (n + 7) // 8
        acc = np.zeros(nbytes, np.uint8)
        for k in sorted(set(ks)):
            acc |= np.asarray(self.bitmap[k, :nbytes], np.uint8)
        return np.flatnonzero(np.unpackbits(acc, bitorder="little", count=n)).astype(np.int64)

    # -- CHUNK_BLOOM ------------------------------------------------------------

    def bloom_may(self, pred):
        """(chunk length, may per chunk) or None."""
        if self.bloom is None or pred.negated or pred.base not in ("==", "in"):
            return None
        if self.leaf.domain == "enum" or self.leaf.categorical:
            return None
        want = self.eq_values(pred)
        c = self.leaf.chunk
        need = -(-self.leaf.n // c) if self.leaf.n else 0
        may = np.zeros(need, bool)
        self.used.append(BLOOM)
        if not want or not need:
            return c, may
        k, m, seed = self.bloom_params
        if self.leaf.domain == "str":
            ha, hb = _murmur.hash128_strings(want, seed)
        else:
            arr = np.array(want, dtype=self.leaf.store)
            ha, hb = _murmur.hash128_values(arr, seed)
        rows = np.asarray(self.bloom[:need], np.uint8)
        pos = _murmur.bit_positions(ha, hb, k, m)
        for i in range(len(want)):
            may |= _murmur.has_all_bits(rows, pos[i])
        return c, may


def table_stats(table, column):
    """A valid CHUNK_MINMAX of a number, bool or categorical table column as
    `_stats.Stats` (NaN-fill rows counted once), or None (absent, stale, or
    not the format: never an error)."""
    try:
        leaf = TableLeaf(table.group, column, len(table))
    except (TypeError, ValueError, KeyError):
        return None
    if leaf.domain == "str":
        return None
    place = Place(table.group, table.group, len(table), True)
    try:
        for k, ds in indexes_of(place, leaf):
            if k != MINMAX or not place.valid(ds):
                continue
            if ds.ndim != 1 or ds.dtype.names != ("min", "max", "nan_count", "fill_count", "n"):
                continue
            need = -(-leaf.n // leaf.chunk) if leaf.n else 0
            if ds.shape[0] < need:
                continue
            e = ds[:need]
            want = np.minimum(leaf.chunk, leaf.n - np.arange(need, dtype=np.int64) * leaf.chunk)
            if need and not np.array_equal(e["n"].astype(np.int64), want):
                continue
            if leaf.nan_fill:  # h5col counts a NaN-fill row as NaN and as missing
                e = e.copy()
                e["fill_count"] = 0
            return _stats.Stats(leaf.chunk, e)
    except (OSError, RuntimeError, KeyError, ValueError, TypeError):
        return None
    return None


def vector_indexes(vec, column):
    try:
        leaf = VectorLeaf(vec, column)
    except (TypeError, ValueError, KeyError):
        return None
    place = Place(vec.group, vec.group["metadata"], len(vec), False)
    ix = ColumnIndexes(place, leaf)
    return ix if ix.any() else None


def table_indexes(table, column):
    try:
        leaf = TableLeaf(table.group, column, len(table))
    except (TypeError, ValueError, KeyError):
        return None
    place = Place(table.group, table.group, len(table), True)
    ix = ColumnIndexes(place, leaf)
    return ix if ix.any() else None


__all__ = ["build_index", "drop_index", "list_indexes"]
