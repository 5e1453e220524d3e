"""Decoded columns (an Arrow-like in-memory form shared by reading and
writing) and their conversions to numpy, pandas and pyarrow.

Every column holds ``n`` rows and ``valid`` (a bool array, or None when the
column is not nullable); nullability comes from the schema, never from the
values. Offsets are int64 arrays of n + 1 entries starting at 0.
"""

import codecs
import json
import uuid

import numpy as np

from . import _schema as S
from ._errors import FormatError, mismatch


class Col:
    __slots__ = ("n", "valid", "node")

    def __init__(self, n, node, valid=None):
        self.n = int(n)
        self.node = node
        self.valid = valid


class Prim(Col):
    """Numbers (f16 and complex included), bools, chars (int32 code points),
    enums, times and UUIDs; ``values`` has shape (n, *dims) for dense columns.
    ``tag``: num, bool, char, enum; instant (``datetime64[ns]``), date
    (``datetime64[D]``), time (of day) and duration (``timedelta64[ns]``),
    all views of the stored numbers; uuid (uint8 of shape (n, 16))."""

    __slots__ = ("values", "tag", "labels")

    def __init__(self, values, tag, node, valid=None, labels=None):
        super().__init__(len(values), node, valid)
        self.values = values
        self.tag = tag
        self.labels = labels


class Str(Col):
    """Strings (UTF-8, checked) or bytes: ``offsets`` (int64, n + 1) into ``data`` (uint8).
    ``fmt``: 'utf8', 'json' or 'binary'."""

    __slots__ = ("offsets", "data", "fmt")

    def __init__(self, offsets, data, fmt, node, valid=None):
        super().__init__(len(offsets) - 1, node, valid)
        self.offsets = offsets
        self.data = data
        self.fmt = fmt


class List(Col):
    __slots__ = ("offsets", "child")

    def __init__(self, offsets, child, node, valid=None):
        super().__init__(len(offsets) - 1, node, valid)
        self.offsets = offsets
        self.child = child


class Rec(Col):
    __slots__ = ("names", "children")

    def __init__(self, n, names, children, node, valid=None):
        super().__init__(n, node, valid)
        self.names = list(names)
        self.children = list(children)


class Const(Col):
    __slots__ = ()


class Union(Col):
    """An enum with data (SPEC section 4.4) as Arrow's dense union: per row its
    ``tags`` (the variant's position) and ``offsets`` (int32) into that variant's
    column in ``children`` (a Rec, or a Const for a unit variant), named by ``names``."""

    __slots__ = ("tags", "offsets", "names", "children")

    def __init__(self, tags, offsets, names, children, node, valid=None):
        super().__init__(len(tags), node, valid)
        self.tags = tags
        self.offsets = offsets
        self.names = list(names)
        self.children = list(children)


# ---------------------------------------------------------------------------
# UTF-8


def check_utf8(offsets, data, path, location, first=0):
    """Every string data[offsets[i]:offsets[i+1]] is valid UTF-8 (vectorised:
    the whole buffer decodes, and every string starts on a character); an
    error names row `first + i`."""
    if len(data) == 0:
        return
    if isinstance(data, np.ndarray) and data.dtype == np.uint8 and int(data.max()) < 0x80:
        return  # ASCII: valid, and every byte starts a character
    try:
        codecs.utf_8_decode(memoryview(data), "strict", True)
    except UnicodeDecodeError as e:
        row = first + int(np.searchsorted(offsets, e.start, side="right")) - 1
        raise FormatError(path, f"{location}[{row}]", "string is not valid UTF-8") from None
    starts = offsets[:-1][offsets[:-1] < len(data)]
    bad = (data[starts] & 0xC0) == 0x80
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = first + int(np.searchsorted(offsets, starts[i], side="right")) - 1
        raise FormatError(path, f"{location}[{row}]", "string is not valid UTF-8")


def encode_utf8(codes):
    """Int32 code points -> (offsets, data) of their UTF-8 encodings (vectorised)."""
    c = codes.astype(np.int64, copy=False).reshape(-1)
    n1 = c < 0x80
    n2 = (c >= 0x80) & (c < 0x800)
    n3 = (c >= 0x800) & (c < 0x10000)
    lens = np.where(n1, 1, np.where(n2, 2, np.where(n3, 3, 4))).astype(np.int64)
    offsets = np.zeros(len(c) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    data = np.empty(int(offsets[-1]), np.uint8)
    o = offsets[:-1]
    data[o[n1]] = c[n1]
    i2 = o[n2]
    data[i2] = 0xC0 | (c[n2] >> 6)
    data[i2 + 1] = 0x80 | (c[n2] & 0x3F)
    i3 = o[n3]
    data[i3] = 0xE0 | (c[n3] >> 12)
    data[i3 + 1] = 0x80 | ((c[n3] >> 6) & 0x3F)
    data[i3 + 2] = 0x80 | (c[n3] & 0x3F)
    n4 = ~(n1 | n2 | n3)
    i4 = o[n4]
    data[i4] = 0xF0 | (c[n4] >> 18)
    data[i4 + 1] = 0x80 | ((c[n4] >> 12) & 0x3F)
    data[i4 + 2] = 0x80 | ((c[n4] >> 6) & 0x3F)
    data[i4 + 3] = 0x80 | (c[n4] & 0x3F)
    return offsets, data


def _pyarrow():
    try:
        import pyarrow
        return pyarrow
    except ImportError:
        return None


def arrow_strings(pa, offsets, data, valid=None, binary=False):
    """(offsets, data) as an Arrow large_string (or large_binary) array over
    the same buffers, null where not `valid`."""
    typ = pa.large_binary() if binary else pa.large_string()
    return pa.Array.from_buffers(typ, len(offsets) - 1, [_bitmap(pa, valid),
                                                         pa.py_buffer(offsets.astype(np.int64, copy=False)),
                                                         pa.py_buffer(data)])


def decode_strings(offsets, data, binary=False, valid=None):
    """(offsets, data) -> object array of str (or bytes), None where not valid."""
    n = len(offsets) - 1
    pa = _pyarrow()
    if pa is not None and n:
        return arrow_strings(pa, offsets, data, valid, binary).to_numpy(zero_copy_only=False)
    out = np.empty(n, dtype=object)
    if n == 0:
        return out
    lens = np.diff(offsets)
    # Rows in blocks of bounded (rows x longest) bytes: a fixed-width byte matrix
    # viewed as numpy bytes, decoded in one call.
    order = np.arange(n)
    start = 0
    while start < n:
        stop = start + 1
        maxlen = int(lens[start])
        budget = 1 << 24
        # Grow the block while rows * maxlen stays within the budget.
        step = 1024
        while stop < n:
            nxt = min(n, stop + step)
            m = max(maxlen, int(lens[stop:nxt].max()))
            if (nxt - start) * max(m, 1) > budget:
                break
            maxlen, stop = m, nxt
        rows = order[start:stop]
        width = max(maxlen, 1)
        mat = np.zeros((len(rows), width), np.uint8)
        rl = lens[rows]
        total = int(rl.sum())
        if total:
            rstart = np.repeat(offsets[rows], rl)
            within = np.arange(total) - np.repeat(np.cumsum(rl) - rl, rl)
            mat[np.repeat(np.arange(len(rows)), rl), within] = data[rstart + within]
        sb = mat.view(f"S{width}").reshape(-1)
        if binary:
            block = sb.astype(object)
        else:
            block = np.char.decode(sb, "utf-8").astype(object)
        # numpy bytes drop trailing NULs: those rows are rebuilt one by one.
        ends_nul = (rl > 0) & (data[np.maximum(offsets[rows] + rl - 1, 0)] == 0)
        for i in np.flatnonzero(ends_nul):
            r = rows[i]
            b = data[offsets[r]:offsets[r + 1]].tobytes()
            block[i] = b if binary else b.decode("utf-8")
        out[start:stop] = block
        start = stop
    if valid is not None:
        out[~valid] = None
    return out


def _bitmap(pa, valid):
    if valid is None or valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def chars_to_objects(codes):
    """Int32 code points -> object array of one-character strings (vectorised)."""
    flat = codes.reshape(-1)
    out = flat.astype("<u4").view("<U1").astype(object)
    out[flat == 0] = "\0"
    return out.reshape(codes.shape)


def enum_objects(col):
    """Codes -> labels (object array); codes without a label stay integers."""
    names = list(col.labels.keys())
    vals = np.array(list(col.labels.values()), dtype=np.int64)
    order = np.argsort(vals, kind="stable")
    svals = vals[order]
    codes = col.values.astype(np.int64)
    pos = np.clip(np.searchsorted(svals, codes), 0, max(len(svals) - 1, 0))
    lab = np.array(names, dtype=object)[order] if names else np.array([], dtype=object)
    out = np.empty(codes.shape, dtype=object)
    if len(svals):
        hit = svals[pos] == codes
        out[hit] = lab[pos[hit]]
        out[~hit] = codes[~hit]
    else:
        out[...] = codes
    return out


# ---------------------------------------------------------------------------
# numpy


def _masked(values, valid):
    mask = ~valid
    if values.ndim > 1:
        mask = np.broadcast_to(mask.reshape((-1,) + (1,) * (values.ndim - 1)), values.shape).copy()
    return np.ma.MaskedArray(values, mask=mask)


def to_numpy(col, valid=None, parse_json=False):
    """One leaf column as numpy: plain arrays, MaskedArrays for nullable numbers
    and bools, object arrays (None for nulls) otherwise. `valid` is the
    validity inherited from enclosing nullable records (combined with the column's own)."""
    v = _combine(valid, col.valid)
    if isinstance(col, Prim):
        if col.tag == "char":
            out = chars_to_objects(col.values)
            return _nulls(out, v)
        if col.tag == "enum" and col.labels:
            return _nulls(enum_objects(col), v)
        vals = prim_values(col)
        return _masked(vals, v) if v is not None else vals
    if isinstance(col, Str):
        out = decode_strings(col.offsets, col.data, binary=col.fmt == "binary", valid=v)
        if col.fmt == "json" and parse_json:
            out = np.array([None if s is None else json.loads(s) for s in out] + [None], dtype=object)[:-1]
        return out
    if isinstance(col, Const):
        return np.full(col.n, None, dtype=object)
    if isinstance(col, List):
        if is_map(col):
            return _nulls(_map_rows(col, parse_json), v)
        return _nulls(_list_rows(col, parse_json), v)
    if isinstance(col, Rec):
        return _nulls(_rec_rows(col, parse_json), v)
    if isinstance(col, Union):
        return _nulls(_union_rows(col, parse_json), v)
    raise TypeError(type(col))


def _combine(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _nulls(out, v):
    if v is not None:
        out = out.copy() if out.base is not None else out
        out[~v] = None
    return out


def prim_values(col):
    """A Prim's values as numpy shows them: a UUID column as one 16-byte
    value (``V16``) per row, everything else as stored."""
    if col.tag == "uuid":
        return np.ascontiguousarray(col.values).view("V16").reshape(col.values.shape[:-1])
    return col.values


def is_map(col):
    """A list column of a map (SPEC section 4.5: codec h5vec.MapCodec)."""
    node = col.node.children[0] if col.node.kind == "nullable" else col.node
    return node.codec == S.MAP_CODEC


def _pylist(items, masked_rows=False):
    """A numpy column as a list of row values, None for nulls. Times and UUIDs
    stay numpy scalars (``datetime64[ns]`` has no exact Python object);
    `masked_rows`: dense rows of a MaskedArray stay masked rows."""
    if isinstance(items, np.ma.MaskedArray):
        if items.ndim == 1 and items.dtype.kind in "mMV":
            lst = list(items.data)
            for i in np.flatnonzero(items.mask).tolist():
                lst[i] = None
            return lst
        if items.ndim == 1:
            items = np.where(items.mask, None, items.data.astype(object))
        elif masked_rows:
            return list(items)
        else:
            return [None if m.all() else d for d, m in zip(items.data, items.mask)]
    return items.tolist() if items.dtype == object and items.ndim == 1 else list(items)


def _numpy_rows(vals, off):
    """Each row's numbers `vals[off[i]:off[i + 1]]` as a numpy array, made by pyarrow in
    one call (a Python loop of slices costs about 0.3 us a row); None without pyarrow or
    for values it does not take as they are."""
    if vals.ndim != 1 or vals.dtype.kind not in "biuf" or not len(off) or int(off[-1]) >= 1 << 31:
        return None
    try:
        import pyarrow as pa
    except ImportError:
        return None
    rows = pa.ListArray.from_arrays(pa.array(np.asarray(off, dtype=np.int32)), pa.array(vals))
    out = rows.to_numpy(zero_copy_only=False)
    return out if out.dtype == object and len(out) == len(off) - 1 else None


def _list_rows(col, parse_json):
    child = col.child
    off = col.offsets
    out = np.empty(col.n, dtype=object)
    if isinstance(child, Prim) and child.valid is None and child.tag not in ("char", "enum") or (
            isinstance(child, Prim) and child.tag == "enum" and not child.labels and child.valid is None):
        vals = prim_values(child)
        fast = _numpy_rows(vals, off)
        if fast is not None:
            return fast
        out[:] = [vals[a:b] for a, b in zip(off[:-1].tolist(), off[1:].tolist())]
        return out
    lst = _pylist(to_numpy(child, parse_json=parse_json))
    out[:] = [lst[a:b] for a, b in zip(off[:-1].tolist(), off[1:].tolist())]
    return out


def _map_rows(col, parse_json):
    """Each row a list of (key, value) tuples, in the stored order."""
    entries = col.child
    keys = _pylist(to_numpy(entries.children[0], parse_json=parse_json))
    vals = _pylist(to_numpy(entries.children[1], parse_json=parse_json))
    pairs = list(zip(keys, vals))
    off = col.offsets
    out = np.empty(col.n, dtype=object)
    out[:] = [pairs[a:b] for a, b in zip(off[:-1].tolist(), off[1:].tolist())]
    return out


def _rec_rows(col, parse_json):
    lists = [_pylist(to_numpy(c, parse_json=parse_json), masked_rows=True) for c in col.children]
    out = np.empty(col.n, dtype=object)
    out[:] = [dict(zip(col.names, row)) for row in zip(*lists)] if lists else [{} for _ in range(col.n)]
    return out


def _union_rows(col, parse_json):
    """Rows as dicts {"variant": name, **fields} (a unit variant: the name alone)."""
    out = np.empty(col.n, dtype=object)
    for v, (name, child) in enumerate(zip(col.names, col.children)):
        rows = np.flatnonzero(col.tags == v)
        if not len(rows):
            continue
        if isinstance(child, Rec) and child.children:
            items = _rec_rows(child, parse_json)
            vals = [{"variant": name, **items[j]} for j in col.offsets[rows].tolist()]
        else:
            vals = [{"variant": name} for _ in range(len(rows))]
        for r, val in zip(rows.tolist(), vals):
            out[r] = val
    return out


def flatten(col, prefix, valid=None):
    """Dotted leaf columns of a record tree: [(name, col, inherited validity)]."""
    if isinstance(col, Rec):
        v = _combine(valid, col.valid)
        out = []
        for name, c in zip(col.names, col.children):
            out.extend(flatten(c, f"{prefix}.{name}" if prefix else name, v))
        return out
    return [(prefix, col, valid)]


# ---------------------------------------------------------------------------
# pandas


def leaf_node(node):
    """The node below a nullable one."""
    return node.children[0] if node.kind == "nullable" else node


def _time_series(col, v, name, index, pd):
    """Instants tz-aware in their stored zone (naive without one), dates as
    ``datetime64[s]`` (every Int32 day fits), times of day and durations as
    ``timedelta64[ns]``; nulls NaT."""
    vals = col.values
    if col.tag == "date":
        vals = vals.astype("M8[s]")
    else:
        # Int64 nanoseconds: i64::MIN is numpy's NaT, which pandas takes for a
        # missing value. A stored value must not come back as a null: an error
        # (numpy's read() and to_arrow() keep it; SPEC 4.6).
        nat = vals.view("i8") == np.iinfo(np.int64).min
        if v is not None:
            nat &= v
        if nat.any():
            row = int(np.flatnonzero(nat)[0])
            at = index[row] if index is not None else row
            raise FormatError(f"$.{name}[{at}]" if name else f"$[{at}]", None,
                              f"{-(1 << 63)} ns ({col.tag}) is numpy's NaT, which pandas reads as missing: "
                              "read this column with read() or to_arrow()")
    if v is not None:
        vals = vals.copy()
        vals[~v] = np.array("NaT", vals.dtype)
    ser = pd.Series(vals, name=name, index=index, copy=False)
    tz = leaf_node(col.node).time_zone if col.tag == "instant" else None
    if tz is not None:
        ser = ser.dt.tz_localize("UTC")
        if tz != "UTC":
            try:
                ser = ser.dt.tz_convert(tz)
            except Exception as e:  # zoneinfo / pytz: an unknown zone name
                raise FormatError(f"$.{name}" if name else "$", None,
                                  f"time zone {tz!r} is not one pandas knows ({type(e).__name__}: {e})") from None
    return ser


def to_pandas_series(col, valid, name, index, parse_json=False):
    import pandas as pd
    v = _combine(valid, col.valid)
    if isinstance(col, Prim) and col.tag in ("instant", "date", "time", "duration"):
        return _time_series(col, v, name, index, pd)
    if isinstance(col, Prim) and col.tag == "uuid":
        out = np.empty(col.n, dtype=object)
        raw = np.ascontiguousarray(col.values).tobytes()
        out[:] = [uuid.UUID(bytes=raw[i:i + 16]) for i in range(0, 16 * col.n, 16)]
        return pd.Series(_nulls(out, v), name=name, index=index, dtype=object)
    if isinstance(col, Prim) and col.values.ndim == 1 and col.tag in ("num", "bool"):
        vals = col.values
        if v is None:
            return pd.Series(vals, name=name, index=index, copy=False)
        if col.tag == "bool":
            arr = pd.arrays.BooleanArray(vals, ~v)
        elif vals.dtype.kind == "c":
            # pandas has no nullable complex dtype: Python complex numbers, None for nulls
            out = np.empty(col.n, dtype=object)
            out[:] = vals.astype(object)
            out[~v] = None
            return pd.Series(out, name=name, index=index, dtype=object)
        elif vals.dtype == np.float16:
            # pandas has no nullable float16: Float32 holds every f16 exactly
            arr = pd.arrays.FloatingArray(vals.astype(np.float32), ~v)
        elif vals.dtype.kind == "f":
            arr = pd.arrays.FloatingArray(vals, ~v)
        else:
            arr = pd.arrays.IntegerArray(vals, ~v)
        return pd.Series(arr, name=name, index=index)
    if isinstance(col, Prim) and col.values.ndim == 1 and col.tag == "enum" and col.labels:
        names = list(col.labels.keys())
        vals = np.array(list(col.labels.values()), dtype=np.int64)
        order = np.argsort(vals, kind="stable")
        svals = vals[order]
        codes = col.values.astype(np.int64)
        pos = np.clip(np.searchsorted(svals, codes), 0, max(len(svals) - 1, 0))
        if len(svals) and (svals[pos] == codes).all():
            cat_codes = pos.astype(np.int64)
            if v is not None:
                cat_codes = np.where(v, cat_codes, -1)
            cats = pd.Categorical.from_codes(cat_codes, categories=[names[i] for i in order])
            return pd.Series(cats, name=name, index=index)
    if isinstance(col, Prim) and col.values.ndim > 1:
        pa = _pyarrow()
        if pa is not None:
            # Zero-copy for numbers: an Arrow fixed_size_list column (pandas ArrowDtype).
            arr = to_arrow(Prim(col.values, col.tag, col.node, v, col.labels), pa)
            return pd.Series(pd.arrays.ArrowExtensionArray(arr), name=name, index=index)
        rows = np.empty(col.n, dtype=object)
        rows[:] = list(to_numpy(Prim(col.values, col.tag, col.node, None, col.labels)))
        return pd.Series(_nulls(rows, v), name=name, index=index)
    if isinstance(col, Str) and (col.fmt == "utf8" or (col.fmt == "json" and not parse_json)) \
            and _pandas_str_default(pd):
        pa = _pyarrow()
        if pa is not None:
            # What pandas makes of strings by default (pandas 3: the Arrow-backed `str`
            # dtype, nulls NaN; as pd.read_parquet gives): no Python object per row.
            arr = arrow_strings(pa, col.offsets, col.data, v)
            return pd.Series(arr.to_pandas().array, name=name, index=index)
    return pd.Series(to_numpy(col, valid, parse_json), name=name, index=index, dtype=object)


def _pandas_str_default(pd):
    """Whether this pandas keeps strings in its Arrow-backed `str` dtype by
    default (pandas >= 3; 2.x when `future.infer_string` is set)."""
    major = pd.__version__.split(".", 1)[0]
    if major.isdigit() and int(major) >= 3:
        return True
    return pd.Series(["a"]).dtype != object


# ---------------------------------------------------------------------------
# pyarrow


class Target:
    """What an Arrow conversion is for: `flat` turns enums with data into the
    flat form (no Arrow unions: polars, Parquet), `half` keeps f16 as Arrow's
    float16 (else float32, exact), `uuid_ext` gives UUIDs the `arrow.uuid`
    extension type (else their fixed_size_binary(16) storage)."""

    __slots__ = ("flat", "half", "uuid_ext")

    def __init__(self, flat=False, half=True, uuid_ext=True):
        self.flat, self.half, self.uuid_ext = flat, half, uuid_ext


ARROW = Target()


def field_metadata(node, target=ARROW):
    """Arrow field metadata naming the h5vec schema node, so that a table read
    from h5vec saves back into the same layout (SPEC section 11): the whole
    node as `h5vec.schema`, its kind, codec and encoded type (a nullable
    node's child's), enum labels, and `h5vec.union = flat` on a union in the
    flat form."""
    inner = leaf_node(node)
    md = {b"h5vec.schema": node.serialized().encode(), b"h5vec.kind": inner.kind.encode(),
          b"h5vec.codec": inner.codec.encode()}
    if node.encoded_type is not None:
        md[b"h5vec.encoded_type"] = node.encoded_type.encode()
    elif inner.encoded_type is not None and node.kind == "nullable":
        md[b"h5vec.encoded_type"] = inner.encoded_type.encode()
    if node.labels:
        md[b"h5vec.labels"] = json.dumps(node.labels).encode()
    if target.flat and inner.kind == "union":
        md[b"h5vec.union"] = b"flat"
    if inner.unknown is not None:
        md[b"h5vec.unknown"] = b"true"  # no rows of it were read (SPEC section 11)
    return md


def _fixed_width(pa, typ, n, values, valid):
    """A fixed-width Arrow array over the bytes of `values` (bit for bit)."""
    return pa.Array.from_buffers(typ, n, [_bitmap(pa, valid), pa.py_buffer(np.ascontiguousarray(values))])


def _prim_to_arrow(col, pa, target, path):
    """Times, UUIDs, f16 and complex numbers (SPEC sections 4.6 to 4.8) as
    their Arrow types (section 11); None for other Prims."""
    vals, v, tag = col.values, col.valid, col.tag
    dense = vals.ndim > (2 if tag == "uuid" else 1)
    flat_n = int(np.prod(vals.shape[:vals.ndim - (1 if tag == "uuid" else 0)]))
    fv = None if dense else v
    if tag in ("instant", "time", "duration"):
        unit = {"instant": pa.timestamp("ns", tz=leaf_node(col.node).time_zone), "time": pa.time64("ns"),
                "duration": pa.duration("ns")}[tag]
        arr = _fixed_width(pa, unit, flat_n, vals.reshape(-1).view("<i8"), fv)
    elif tag == "date":
        arr = _fixed_width(pa, pa.date32(), flat_n, vals.reshape(-1).view("<i8").astype("<i4"), fv)
    elif tag == "uuid":
        arr = _fixed_width(pa, pa.binary(16), flat_n, vals, fv)
        if target.uuid_ext and hasattr(pa, "uuid"):
            arr = pa.ExtensionArray.from_storage(pa.uuid(), arr)
    elif vals.dtype == np.float16:
        if target.half:
            arr = _fixed_width(pa, pa.float16(), flat_n, vals.reshape(-1), fv)
        else:  # float32 holds every f16 exactly (NaN payloads included)
            arr = _fixed_width(pa, pa.float32(), flat_n, vals.reshape(-1).astype(np.float32), fv)
    elif vals.dtype.kind == "c":
        part = pa.float32() if vals.dtype == np.complex64 else pa.float64()
        flat = vals.reshape(-1)
        fields = [pa.field("r", part, nullable=False), pa.field("i", part, nullable=False)]
        kids = [_fixed_width(pa, part, flat_n, flat.real, None), _fixed_width(pa, part, flat_n, flat.imag, None)]
        arr = pa.StructArray.from_arrays(kids, fields=fields,
                                         mask=None if fv is None or fv.all() else pa.array(~fv))
    else:
        return None
    if dense:
        arr = _fixed(pa, arr, vals.shape[1:], v)
    return arr


def to_arrow(col, pa, target=ARROW, path="$"):
    """A column as a pyarrow Array (records -> struct, lists -> large_list,
    maps -> map, unions -> dense union or, with `target.flat`, the flat form)."""
    v = col.valid
    mask = None if v is None else pa.array(~v)
    if isinstance(col, Prim):
        typed = _prim_to_arrow(col, pa, target, path)
        if typed is not None:
            return typed
        if col.tag == "char":
            offs, data = encode_utf8(col.values)
            if col.values.ndim == 1:
                return pa.Array.from_buffers(pa.large_string(), col.n,
                                             [_bitmap(pa, v), pa.py_buffer(offs), pa.py_buffer(data)])
            flat = pa.Array.from_buffers(pa.large_string(), col.values.size,
                                         [None, pa.py_buffer(offs), pa.py_buffer(data)])
            return _fixed(pa, flat, col.values.shape[1:], v)
        if col.tag == "enum" and col.labels:
            names = list(col.labels.keys())
            vals = np.array(list(col.labels.values()), dtype=np.int64)
            order = np.argsort(vals, kind="stable")
            svals = vals[order]
            codes = col.values.reshape(-1).astype(np.int64)
            pos = np.clip(np.searchsorted(svals, codes), 0, max(len(svals) - 1, 0))
            if len(svals) and (svals[pos] == codes).all():
                dense = col.values.ndim > 1
                nulls = None if v is None or dense else ~v
                idx = pa.array(pos.astype(np.int32), mask=nulls)
                arr = pa.DictionaryArray.from_arrays(idx, pa.array([names[i] for i in order], pa.string()))
                return _fixed(pa, arr, col.values.shape[1:], v) if dense else arr
        vals = col.values
        flat = pa.array(vals.reshape(-1))
        if vals.ndim == 1:
            return flat if v is None else pa.array(vals, mask=~v)
        return _fixed(pa, flat, vals.shape[1:], v)
    if isinstance(col, Str):
        return arrow_strings(pa, col.offsets, col.data, v, col.fmt == "binary")
    if isinstance(col, Const):
        return pa.nulls(col.n)
    if isinstance(col, List):
        if is_map(col):
            return _map_to_arrow(col, pa, target, path)
        child = to_arrow(col.child, pa, target, path + "[]")
        node = col.child.node
        typ = pa.large_list(pa.field("item", child.type, nullable=col.child.valid is not None,
                                     metadata=field_metadata(node, target)))
        return pa.LargeListArray.from_arrays(pa.array(col.offsets), child, type=typ, mask=mask)
    if isinstance(col, Rec):
        arrays = [to_arrow(c, pa, target, f"{path}.{name}") for name, c in zip(col.names, col.children)]
        fields = [pa.field(name, c.type, nullable=ch.valid is not None or isinstance(ch, Const),
                           metadata=field_metadata(ch.node, target))
                  for name, ch, c in zip(col.names, col.children, arrays)]
        if not fields:
            return pa.nulls(col.n, pa.struct([]))
        return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)
    if isinstance(col, Union):
        if target.flat:
            return _union_to_flat(col, pa, target, path)
        return _union_to_arrow(col, pa, target, path)
    raise TypeError(type(col))


def _map_to_arrow(col, pa, target, path):
    """SPEC section 11: a map (4.5) as Arrow's `map<key, value>`, entries in the
    stored order; keys must never be null (Arrow's maps)."""
    entries = col.child
    kcol, vcol = entries.children
    if kcol.valid is not None or isinstance(kcol, Const):
        raise mismatch(f"{path}[].key", None, "map keys that are never null (Arrow's maps)", "nullable keys")
    if int(col.offsets[-1]) > np.iinfo(np.int32).max:
        raise FormatError(path, None, f"{int(col.offsets[-1])} map entries in one batch: Arrow's maps hold "
                                      f"at most {np.iinfo(np.int32).max} (read fewer rows)")
    keys = to_arrow(kcol, pa, target, f"{path}[].key")
    items = to_arrow(vcol, pa, target, f"{path}[].value")
    typ = pa.map_(pa.field("key", keys.type, nullable=False, metadata=field_metadata(kcol.node, target)),
                  pa.field("value", items.type, nullable=vcol.valid is not None or isinstance(vcol, Const),
                           metadata=field_metadata(vcol.node, target)))
    offs = col.offsets.astype(np.int32)
    if col.valid is None or col.valid.all():
        return pa.MapArray.from_arrays(pa.array(offs), keys, items, type=typ)
    try:
        return pa.MapArray.from_arrays(pa.array(offs), keys, items, type=typ, mask=pa.array(~col.valid))
    except TypeError:  # pyarrow < 15 has no mask: a null offset marks a null map (null rows are empty)
        nulls = np.concatenate([~col.valid, [False]])
        return pa.MapArray.from_arrays(pa.array(offs, mask=nulls), keys, items, type=typ)


def _union_children(col, pa, target, path):
    """Per variant: (name, Arrow array of its record, its node), a unit variant
    a struct without fields; under a null the row is null in the child of its tag."""
    out = []
    for v, (name, child) in enumerate(zip(col.names, col.children)):
        cvalid = None
        if col.valid is not None:
            cvalid = np.ones(child.n, bool)
            rows = col.tags == v
            cvalid[col.offsets[rows]] = col.valid[rows]
        if isinstance(child, Rec) and child.children:
            rec = Rec(child.n, child.names, child.children, child.node, cvalid)
            arr = to_arrow(rec, pa, target, f"{path}.{name}")
        else:
            arr = pa.Array.from_buffers(pa.struct([]), child.n, [_bitmap(pa, cvalid)], children=[])
        out.append((name, arr, child))
    return out


def _union_to_arrow(col, pa, target=ARROW, path="$"):
    """SPEC section 11: a dense Union, type ids = tag values, one Struct child per
    variant (a unit variant: a Struct without fields); under a null the row is
    null in the child of its tag (nullable children)."""
    if len(col.names) > 128:
        raise FormatError(path, None, f"a union of {len(col.names)} variants has no Arrow "
                          "type (Arrow unions take at most 128)")
    nullable = col.valid is not None
    arrays, fields = [], []
    for name, arr, child in _union_children(col, pa, target, path):
        arrays.append(arr)
        fields.append(pa.field(name, arr.type, nullable=nullable, metadata=field_metadata(child.node, target)))
    typ = pa.union(fields, mode="dense", type_codes=list(range(len(fields))))
    types = pa.py_buffer(col.tags.astype(np.int8))
    offs = pa.py_buffer(col.offsets.astype(np.int32))
    return pa.UnionArray.from_buffers(typ, col.n, [None, types, offs], children=arrays)


def _union_to_flat(col, pa, target, path):
    """The flat form of an enum with data: a struct of `variant` (the variant's
    name, dictionary-encoded) and one nullable struct per variant with fields,
    named as the variant, non-null exactly on that variant's rows; a null
    union value is a null struct."""
    if "variant" in col.names:
        raise FormatError(path, None, "a union with a variant named `variant` has no flat form "
                                      "(it would clash with the `variant` column)")
    valid = col.valid
    tags = col.tags.astype(np.int32)
    names = pa.array(col.names, pa.string())
    arrays = [pa.DictionaryArray.from_arrays(pa.array(tags, mask=None if valid is None else ~valid), names)]
    fields = [pa.field("variant", arrays[0].type, nullable=valid is not None)]
    for v, (name, arr, child) in enumerate(_union_children(col, pa, target, path)):
        if not (isinstance(child, Rec) and child.children):
            continue  # a unit variant has no child (Parquet has no empty structs)
        here = col.tags == v
        if valid is not None:
            here = here & valid
        idx = pa.array(col.offsets.astype(np.int32), mask=~here)
        arrays.append(arr.take(idx))
        fields.append(pa.field(name, arr.type, nullable=True, metadata=field_metadata(child.node, target)))
    mask = None if valid is None or valid.all() else pa.array(~valid)
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)


def _fixed(pa, flat, dims, valid):
    arr = flat
    for d in reversed(dims):
        arr = pa.FixedSizeListArray.from_arrays(arr, int(d))
    if valid is not None:
        arr = pa.FixedSizeListArray.from_arrays(arr.values, int(dims[0]), mask=pa.array(~valid)) \
            if len(dims) else arr
    return arr
