"""Decoded columns (an Arrow-like in-memory form shared by reading and
writing) and their conversions to numpy, pandas and pyarrow.

Every column holds ``n`` rows and ``valid`` (a bool array, or None when the
column is not nullable); nullability comes from the schema, never from the
values. Offsets are int64 arrays of n + 1 entries starting at 0.
"""

import codecs
import json

import numpy as np

from ._errors import FormatError


class Col:
    __slots__ = ("n", "valid", "node")

    def __init__(self, n, node, valid=None):
        self.n = int(n)
        self.node = node
        self.valid = valid


class Prim(Col):
    """Numbers, bools, chars (int32 code points) and enums; ``values`` has
    shape (n, *dims) for dense columns. ``tag``: num, bool, char, enum."""

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


def check_utf8(offsets, data, path, location):
    """Every string data[offsets[i]:offsets[i+1]] is valid UTF-8 (vectorised:
    the whole buffer decodes, and every string starts on a character)."""
    if len(data) == 0:
        return
    try:
        codecs.utf_8_decode(memoryview(data), "strict", True)
    except UnicodeDecodeError as e:
        row = int(np.searchsorted(offsets, e.start, side="right")) - 1
        raise FormatError(path, f"{location}[{row}]", "string is not valid UTF-8") from None
    starts = offsets[:-1][offsets[:-1] < len(data)]
    bad = (data[starts] & 0xC0) == 0x80
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(offsets, starts[i], side="right")) - 1
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


def decode_strings(offsets, data, binary=False, valid=None):
    """(offsets, data) -> object array of str (or bytes), None where not valid."""
    n = len(offsets) - 1
    pa = _pyarrow()
    if pa is not None and n:
        typ = pa.large_binary() if binary else pa.large_string()
        arr = pa.Array.from_buffers(typ, n, [_bitmap(pa, valid), pa.py_buffer(offsets.astype(np.int64, copy=False)),
                                             pa.py_buffer(data)])
        out = arr.to_numpy(zero_copy_only=False)
        return out
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
        return _masked(col.values, v) if v is not None else col.values
    if isinstance(col, Str):
        out = decode_strings(col.offsets, col.data, binary=col.fmt == "binary", valid=v)
        if col.fmt == "json" and parse_json:
            out = np.array([None if s is None else json.loads(s) for s in out] + [None], dtype=object)[:-1]
        return out
    if isinstance(col, Const):
        return np.full(col.n, None, dtype=object)
    if isinstance(col, List):
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


def _list_rows(col, parse_json):
    child = col.child
    off = col.offsets
    out = np.empty(col.n, dtype=object)
    if isinstance(child, Prim) and child.valid is None and child.tag in ("num", "bool") or (
            isinstance(child, Prim) and child.tag == "enum" and not child.labels and child.valid is None):
        vals = child.values
        out[:] = [vals[a:b] for a, b in zip(off[:-1].tolist(), off[1:].tolist())]
        return out
    items = to_numpy(child, parse_json=parse_json)
    if isinstance(items, np.ma.MaskedArray):
        items = np.where(items.mask, None, items.data.astype(object)) if items.ndim == 1 else \
            np.array([None if m.all() else d for d, m in zip(items.data, items.mask)] + [None], dtype=object)[:-1]
    lst = items.tolist() if items.dtype == object and items.ndim == 1 else list(items)
    out[:] = [lst[a:b] for a, b in zip(off[:-1].tolist(), off[1:].tolist())]
    return out


def _rec_rows(col, parse_json):
    cols = [to_numpy(c, parse_json=parse_json) for c in col.children]
    lists = []
    for c in cols:
        if isinstance(c, np.ma.MaskedArray):
            c = np.where(c.mask, None, c.data.astype(object)) if c.ndim == 1 else c
        lists.append(c.tolist() if c.dtype == object else list(c))
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


def to_pandas_series(col, valid, name, index, parse_json=False):
    import pandas as pd
    v = _combine(valid, col.valid)
    if isinstance(col, Prim) and col.values.ndim == 1 and col.tag in ("num", "bool"):
        vals = col.values
        if v is None:
            return pd.Series(vals, name=name, index=index, copy=False)
        if col.tag == "bool":
            arr = pd.arrays.BooleanArray(vals, ~v)
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
    if isinstance(col, Prim) and col.values.ndim > 1 and col.tag in ("num", "bool"):
        pa = _pyarrow()
        if pa is not None:
            # Zero-copy: an Arrow fixed_size_list column (pandas ArrowDtype).
            arr = to_arrow(Prim(col.values, col.tag, col.node, v), pa)
            return pd.Series(pd.arrays.ArrowExtensionArray(arr), name=name, index=index)
        rows = np.empty(col.n, dtype=object)
        rows[:] = list(col.values)
        return pd.Series(_nulls(rows, v), name=name, index=index)
    return pd.Series(to_numpy(col, valid, parse_json), name=name, index=index, dtype=object)


# ---------------------------------------------------------------------------
# pyarrow


def field_metadata(node):
    """Arrow field metadata naming the h5vec schema node, so that a table read
    from h5vec saves back into the same layout."""
    md = {b"h5vec.kind": node.kind.encode(), b"h5vec.codec": node.codec.encode()}
    if node.encoded_type is not None:
        md[b"h5vec.encoded_type"] = node.encoded_type.encode()
    if node.kind == "nullable":
        md[b"h5vec.kind"] = node.children[0].kind.encode()
        md[b"h5vec.codec"] = node.children[0].codec.encode()
    if node.labels:
        md[b"h5vec.labels"] = json.dumps(node.labels).encode()
    return md


def to_arrow(col, pa):
    """A column as a pyarrow Array (records -> struct, lists -> large_list)."""
    v = col.valid
    mask = None if v is None else pa.array(~v)
    if isinstance(col, Prim):
        if col.tag == "char":
            offs, data = encode_utf8(col.values)
            if col.values.ndim == 1:
                return pa.Array.from_buffers(pa.large_string(), col.n,
                                             [_bitmap(pa, v), pa.py_buffer(offs), pa.py_buffer(data)])
            flat = pa.Array.from_buffers(pa.large_string(), col.values.size,
                                         [None, pa.py_buffer(offs), pa.py_buffer(data)])
            return _fixed(pa, flat, col.values.shape[1:], v)
        if col.tag == "enum" and col.labels and col.values.ndim == 1:
            names = list(col.labels.keys())
            vals = np.array(list(col.labels.values()), dtype=np.int64)
            order = np.argsort(vals, kind="stable")
            svals = vals[order]
            codes = col.values.astype(np.int64)
            pos = np.clip(np.searchsorted(svals, codes), 0, max(len(svals) - 1, 0))
            if len(svals) and (svals[pos] == codes).all():
                idx = pa.array(pos.astype(np.int32), mask=mask)
                return pa.DictionaryArray.from_arrays(idx, pa.array([names[i] for i in order], pa.string()))
        vals = col.values
        flat = pa.array(vals.reshape(-1))
        if vals.ndim == 1:
            return flat if v is None else pa.array(vals, mask=~v)
        return _fixed(pa, flat, vals.shape[1:], v)
    if isinstance(col, Str):
        typ = pa.large_binary() if col.fmt == "binary" else pa.large_string()
        return pa.Array.from_buffers(typ, col.n, [_bitmap(pa, v), pa.py_buffer(col.offsets),
                                                  pa.py_buffer(col.data)])
    if isinstance(col, Const):
        return pa.nulls(col.n)
    if isinstance(col, List):
        child = to_arrow(col.child, pa)
        node = col.child.node
        typ = pa.large_list(pa.field("item", child.type, nullable=col.child.valid is not None,
                                     metadata=field_metadata(node)))
        return pa.LargeListArray.from_arrays(pa.array(col.offsets), child, type=typ, mask=mask)
    if isinstance(col, Rec):
        arrays = [to_arrow(c, pa) for c in col.children]
        fields = [pa.field(name, c.type, nullable=ch.valid is not None or isinstance(ch, Const),
                           metadata=field_metadata(ch.node))
                  for name, ch, c in zip(col.names, col.children, arrays)]
        if not fields:
            return pa.nulls(col.n, pa.struct([]))
        return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)
    if isinstance(col, Union):
        return _union_to_arrow(col, pa)
    raise TypeError(type(col))


def _union_to_arrow(col, pa):
    """SPEC section 11: a dense Union, type ids = tag values, one Struct child per
    variant (a unit variant: a Struct without fields); under a null the row is
    null in the child of its tag (nullable children)."""
    if len(col.names) > 128:
        raise FormatError("$", None, f"a union of {len(col.names)} variants has no Arrow "
                          "type (Arrow unions take at most 128)")
    nullable = col.valid is not None
    arrays, fields = [], []
    for v, (name, child) in enumerate(zip(col.names, col.children)):
        cvalid = None
        if nullable:
            cvalid = np.ones(child.n, bool)
            rows = col.tags == v
            cvalid[col.offsets[rows]] = col.valid[rows]
        if isinstance(child, Rec) and child.children:
            rec = Rec(child.n, child.names, child.children, child.node, cvalid)
            arr = to_arrow(rec, pa)
        else:
            arr = pa.Array.from_buffers(pa.struct([]), child.n, [_bitmap(pa, cvalid)], children=[])
        arrays.append(arr)
        fields.append(pa.field(name, arr.type, nullable=nullable, metadata=field_metadata(child.node)))
    typ = pa.union(fields, mode="dense", type_codes=list(range(len(fields))))
    types = pa.py_buffer(col.tags.astype(np.int8))
    offs = pa.py_buffer(col.offsets.astype(np.int32))
    return pa.UnionArray.from_buffers(typ, col.n, [None, types, offs], children=arrays)


def _fixed(pa, flat, dims, valid):
    arr = flat
    for d in reversed(dims):
        arr = pa.FixedSizeListArray.from_arrays(arr, int(d))
    if valid is not None:
        arr = pa.FixedSizeListArray.from_arrays(arr.values, int(dims[0]), mask=pa.array(~valid)) \
            if len(dims) else arr
    return arr
