"""Writing vectors, part 6: columns -> HDF5 datasets in the layout of SPEC.md
(`write_field`, `write_item`; unions, VLS strings and their placeholders), with
the write options and chunk sizes."""

import h5py
import numpy as np

from . import _columns as C
from . import _h5
from . import _read
from . import _schema as S
from ._errors import FormatError
from ._write_nodes import DEFAULT_CHUNK, MAX_CHUNK_BYTES, MAX_HEAP_CHUNK
from ._write_encode import fill_value
from ._vector import ROOT


class Options:
    def __init__(self, chunk_length, compression, vls_strings, entries=False, checksum=False):
        self.chunk_length = chunk_length
        self.compression = compression
        self.vls_strings = vls_strings
        self.entries = entries
        self.checksum = bool(checksum)  # Fletcher32 on every dataset created (SPEC 6.4)
        _h5.compression_kwargs(compression)  # checks it early

    def vls(self, path):
        v = self.vls_strings
        if v is True:
            return True
        if not v:
            return False
        col = path[2:] if path.startswith("$.") else path
        return col in set(v) or (path == "$" and ROOT in set(v))

    def for_entries(self):
        """A map's entries: strings in the vls_string layout (SPEC.md section 4.5)."""
        return Options(self.chunk_length, self.compression, True, entries=True, checksum=self.checksum)


class Ctx:
    def __init__(self, opts, rows):
        self.opts = opts
        self.rows = rows

    def chunk_rows(self, row_bytes, n):
        if self.opts.chunk_length:
            return int(self.opts.chunk_length)
        by_bytes = max(1, MAX_CHUNK_BYTES // max(1, row_bytes))
        return max(1, min(DEFAULT_CHUNK, by_bytes, _h5.next_pow2(max(n, 1))))

    def chunk_bytes(self, n):
        return max(1, min(MAX_HEAP_CHUNK, _h5.next_pow2(max(n, 1))))


def _dataset(g, name, dtype, inner, chunk, ctx, fillvalue=None):
    if name in g:
        return g[name]
    return _h5.create_column(g, name, dtype, inner, chunk, ctx.opts.compression, fillvalue,
                             checksum=ctx.opts.checksum)


def _u64_at(ds, i):
    return int(ds[i]) if ds.shape[0] > i else 0


def _values_dtype(node, item):
    enc = node.encoded_type
    if enc == "Bool":
        return _h5.H5COL_BOOL if item else _h5.BITFIELD8
    if enc == "String":
        return _h5.VLEN_UTF8
    return S.NUMBERS[enc]


def _prim_file_values(col):
    if col.tag == "bool":
        return col.values.astype(np.uint8)
    return col.values


def _write_leaf(g, name, col, node, pos, ctx, item):
    if isinstance(col, C.Str):  # vlen strings (scalar String / JSON)
        if (col.data == 0).any():
            i = int(np.searchsorted(col.offsets, np.flatnonzero(col.data == 0)[0], side="right")) - 1
            raise FormatError(f"{node_path(ctx)}", None, f"row {i}: strings with a NUL cannot be HDF5 "
                                                         "variable-length strings (use vls_strings)")
        ds = _dataset(g, name, _h5.VLEN_UTF8, (), ctx.chunk_rows(16, col.n), ctx)
        _h5.put_strings(ds, pos, col.offsets, col.data)
        return
    vals = col.values
    inner = vals.shape[1:]
    dt = _values_dtype(node, item)
    row_bytes = max(1, vals.dtype.itemsize * int(np.prod(inner)) if inner else vals.dtype.itemsize)
    fill = fill_value(node.encoded_type) if node.kind == "fill_nullable" else None
    ds = _dataset(g, name, dt, inner, ctx.chunk_rows(row_bytes, len(vals)), ctx, fill)
    if node.encoded_type == "Bool" and item:
        _h5.put_rows(ds, pos, vals.astype(bool))
    else:
        _h5.put_rows(ds, pos, _prim_file_values(col))


def node_path(ctx):
    return getattr(ctx, "path", "$")


def write_field(g, col, node, pos, ctx, path):
    """Writes `col` into field data group `g` after its first `pos` rows."""
    ctx.path = path
    k = node.kind
    if k in ("scalar", "dense"):
        _write_leaf(g, "values", col, node, pos, ctx, False)
    elif k == "record":
        for name, c, cn in zip(node.field_names, col.children, node.children):
            sub = g[name] if name in g else g.create_group(name)
            write_field(sub, c, cn, pos, ctx, f"{path}.{name}")
    elif k == "constant":
        pass
    elif k == "blob":
        stops_ds = _dataset(g, "stops", "<i8", (), ctx.chunk_rows(8, col.n), ctx)
        base = int(stops_ds[pos - 1]) if pos > 0 else 0
        bytes_ds = _dataset(g, "bytes", "u1", (), ctx.chunk_bytes(len(col.data)), ctx)
        _h5.put_rows(bytes_ds, base, col.data)
        _h5.put_rows(stops_ds, pos, col.offsets[1:] + base)
    elif k == "vls_string":
        _write_vls(g, col, node, pos, ctx, path)
    elif k == "list":
        _write_list(g, col, node, pos, ctx, path)
    elif k == "nullable":
        inner = node.children[0]
        if inner.kind == "record" and "MASK" in inner.field_names:
            raise FormatError(path, None, "a field named MASK cannot sit beside the null mask of an Option")
        if inner.kind == "union" and "MASK" in inner.labels:
            raise FormatError(path, None, "a variant named MASK cannot sit beside the null mask of an Option")
        write_field(g, col, inner, pos, ctx, path)
        _write_mask(g, col.valid, pos, ctx)
    elif k == "union":
        _write_union(g, col, node, pos, ctx, path)
    else:
        raise FormatError(path, None, f"kind {k} cannot be a field")


def _write_mask(g, valid, pos, ctx):
    ds = _dataset(g, "MASK", _h5.H5COL_BOOL, (), ctx.chunk_rows(1, len(valid)), ctx)
    _h5.put_rows(ds, pos, valid.astype(bool))


def _write_list(g, col, node, pos, ctx, path):
    if "OFFSETS" not in g:
        _h5.write_attr_ascii(g, "CLASS", "LIST_COLUMN")
        _h5.write_attr_ascii(g, "KIND", "OFFSETS")
        offs = _h5.create_column(g, "OFFSETS", "<u8", (), ctx.chunk_rows(8, col.n + 1), ctx.opts.compression,
                                 checksum=ctx.opts.checksum)
        _h5.put_rows(offs, 0, np.zeros(1, np.uint64))
    offs = g["OFFSETS"]
    base = int(offs[pos])
    write_item(g, "VALUES", col.child, node.children[0], base, ctx, path + "[]")
    _h5.put_rows(offs, pos + 1, (col.offsets[1:] + base).astype(np.uint64))


def write_item(g, name, col, node, pos, ctx, path):
    """Writes list elements as member `name` of list group `g` after its first `pos` elements."""
    ctx.path = path
    k = node.kind
    if k in ("scalar", "dense", "fill_nullable"):
        _write_leaf(g, name, col, node, pos, ctx, True)
    elif k == "string_values":
        sv = g[name] if name in g else g.create_group(name)
        if "OFFSETS" not in sv:
            _h5.write_attr_ascii(sv, "CLASS", "STRING_VALUES")
            o = _h5.create_column(sv, "OFFSETS", "<u8", (), ctx.chunk_rows(8, col.n + 1), ctx.opts.compression,
                                  checksum=ctx.opts.checksum)
            _h5.put_rows(o, 0, np.zeros(1, np.uint64))
            _h5.create_column(sv, "CHARS", "u1", (), ctx.chunk_bytes(len(col.data)), ctx.opts.compression,
                              checksum=ctx.opts.checksum)
        o = sv["OFFSETS"]
        base = int(o[pos])
        _h5.put_rows(sv["CHARS"], base, col.data)
        _h5.put_rows(o, pos + 1, (col.offsets[1:] + base).astype(np.uint64))
    elif k == "list":
        lg = g[name] if name in g else g.create_group(name)
        _write_list(lg, col, node, pos, ctx, path)
    elif k == "record":
        rg = g[name] if name in g else g.create_group(name)
        if "CLASS" not in rg.attrs:
            _h5.write_attr_ascii(rg, "CLASS", "RECORD_VALUES")
        write_field(rg, col, node, pos, ctx, path)
    elif k == "nullable":
        write_item(g, name, col, node.children[0], pos, ctx, path)
        _write_mask(g[name], col.valid, pos, ctx)
    elif k == "union":
        ug = g[name] if name in g else g.create_group(name)
        if "CLASS" not in ug.attrs:
            _h5.write_attr_ascii(ug, "CLASS", "UNION_VALUES")
        _write_union(ug, col, node, pos, ctx, path)
    else:
        raise FormatError(path, None, f"kind {k} cannot be a list element")


SCAN_ROWS = 1 << 16


def _union_committed(g, nvar, pos):
    """Each variant's committed rows in the first `pos` rows of a union group: one more
    than the INDEX of its last row (0 if none), reading TAG and INDEX backwards from
    `pos`, 64 Ki rows at a time, until every variant has been seen (as Rust does)."""
    nxt = [None] * nvar
    missing = nvar
    end = pos
    tag_ds, idx_ds = g["TAG"], g["INDEX"]
    while end > 0 and missing:
        start = max(0, end - SCAN_ROWS)
        tags = _h5.read_rows(tag_ds, start, end, "$").astype(np.int64)
        idx = _h5.read_rows(idx_ds, start, end, "$").astype(np.uint64)
        for v in range(nvar):
            if nxt[v] is None:
                hit = np.flatnonzero(tags == v)
                if len(hit):
                    nxt[v] = int(idx[hit[-1]]) + 1
                    missing -= 1
        end = start
    return [0 if x is None else x for x in nxt]


def _tag_type(names, wide):
    """The TAG type: an HDF5 enum over uint8 (uint16 past 256 variants), members in declaration
    order (h5py's enum_dtype would sort them by name)."""
    tid = h5py.h5t.enum_create(h5py.h5t.STD_U16LE if wide else h5py.h5t.STD_U8LE)
    for i, nm in enumerate(names):
        tid.enum_insert(nm.encode("utf-8"), i)
    return h5py.Datatype(tid)


def _write_union(g, col, node, pos, ctx, path):
    """An enum with data (SPEC.md section 4.4): each variant's columns (its rows only, in
    row order), then INDEX (row k's row among its variant's rows), then TAG (an HDF5
    enum over uint8, uint16 past 256 variants)."""
    names = list(node.labels)
    nxt = _union_committed(g, len(names), pos) if pos > 0 and "TAG" in g else [0] * len(names)
    tags = np.asarray(col.tags, np.int64)
    index = np.zeros(col.n, np.uint64)
    for v, name in enumerate(names):
        rows = np.flatnonzero(tags == v)
        index[rows] = np.uint64(nxt[v]) + np.arange(len(rows), dtype=np.uint64)
        sub = g[name] if name in g else g.create_group(name)
        write_field(sub, col.children[v], node.children[v], nxt[v], ctx, f"{path}.{name}")
    ctx.path = path
    wide = len(names) > 256
    base = "<u2" if wide else "u1"
    idx_ds = _dataset(g, "INDEX", "<u8", (), ctx.chunk_rows(8, col.n), ctx)
    tag_ds = _dataset(g, "TAG", _tag_type(names, wide), (), ctx.chunk_rows(2 if wide else 1, col.n), ctx)
    _h5.put_rows(idx_ds, pos, index)
    _h5.put_rows(tag_ds, pos, tags.astype(base))


def _choose_placeholder(col, committed):
    """"NA", "NA_", ...: the first equal to no present value of this batch nor of the committed rows."""
    ph = "NA"
    while True:
        p = ph.encode()
        lens = np.diff(col.offsets)
        cand = np.flatnonzero((lens == len(p)) & col.valid)
        hit = False
        if len(cand):
            mat = col.data[col.offsets[cand][:, None] + np.arange(len(p))[None, :]]
            hit = bool((mat == np.frombuffer(p, np.uint8)[None, :]).all(axis=1).any())
        if not hit and committed is not None:
            hit = committed(p)
        if not hit:
            return ph
        ph += "_"


def _write_vls(g, col, node, pos, ctx, path):
    if (col.data == 0).any():
        i = int(np.searchsorted(col.offsets, np.flatnonzero(col.data == 0)[0], side="right")) - 1
        raise FormatError(f"{path}[{pos + i}]", None, "string contains a NUL byte; readers cut VLS strings at "
                                                      "the first NUL")
    new = "pointers" not in g
    ptrs = _dataset(g, "pointers", _h5.POINTER, (), ctx.chunk_rows(16, col.n), ctx)
    heap = _dataset(g, "heap", "u1", (), ctx.chunk_bytes(len(col.data)), ctx)
    base = 0
    if not new and pos > 0:
        p = ptrs[:pos]
        base = int((p["offset"].astype(np.uint64) + p["length"].astype(np.uint64)).max())
    offsets, data = col.offsets, col.data
    missing = None
    if col.valid is not None and not col.valid.all():
        missing = ~col.valid
        ph = _h5.read_attr_string(ptrs, _read.PLACEHOLDER_ATTR, path) if not new else None
        if ph is None:
            committed = None
            if pos > 0:
                committed = _committed_checker(g, pos, path)
            ph = _choose_placeholder(col, committed)
            if ptrs.fletcher32 and ph.isascii():
                # With checksums, a fixed-length string: its bytes in the object
                # header (checksummed by HDF5 in the 1.8 format) instead of the
                # global heap, which nothing checks (SPEC 6.4; as Rust).
                b = ph.encode() + b"\0"
                tid = h5py.h5t.C_S1.copy()
                tid.set_size(len(b))
                tid.set_strpad(h5py.h5t.STR_NULLPAD)
                ptrs.attrs.create(_read.PLACEHOLDER_ATTR, np.array(b, dtype=f"S{len(b)}"), dtype=h5py.Datatype(tid))
            else:
                ptrs.attrs.create(_read.PLACEHOLDER_ATTR, ph, dtype=_h5.VLEN_UTF8)
        pb = np.frombuffer(ph.encode(), np.uint8)
        # Present values equal to the placeholder would read back as missing.
        lens = np.diff(offsets)
        cand = np.flatnonzero((lens == len(pb)) & col.valid)
        if len(cand) and len(pb):
            eq = (data[offsets[cand][:, None] + np.arange(len(pb))[None, :]] == pb[None, :]).all(axis=1)
            if eq.any():
                raise FormatError(f"{path}[{pos + int(cand[eq][0])}]", None,
                                  f"value equals the missing-value placeholder `{ph}` chosen for this column")
        elif len(cand) and not len(pb):
            raise FormatError(f"{path}[{pos + int(cand[0])}]", None, "value equals the empty placeholder")
    elif col.valid is not None and node.codec == S.PLACEHOLDER_CODEC and not new:
        ph = _h5.read_attr_string(ptrs, _read.PLACEHOLDER_ATTR, path)
        if ph is not None:
            pb = np.frombuffer(ph.encode(), np.uint8)
            lens = np.diff(offsets)
            cand = np.flatnonzero(lens == len(pb))
            if len(cand):
                eq = (data[offsets[cand][:, None] + np.arange(len(pb))[None, :]] == pb[None, :]).all(axis=1)
                if eq.any():
                    raise FormatError(f"{path}[{pos + int(cand[eq][0])}]", None,
                                      f"value equals the missing-value placeholder `{ph}` of this column")
    starts = offsets[:-1] + base
    lengths = np.diff(offsets)
    heap_bytes = data
    if missing is not None:
        # Missing values share one copy of the placeholder, after the values.
        ph_off = base + len(data)
        heap_bytes = np.concatenate([data, pb])
        starts = np.where(missing, ph_off, starts)
        lengths = np.where(missing, len(pb), lengths)
    ptr = np.empty(col.n, _h5.POINTER)
    ptr["offset"] = starts
    ptr["length"] = lengths
    _h5.put_rows(heap, base, heap_bytes)
    _h5.put_rows(ptrs, pos, ptr)


def _committed_checker(g, pos, path):
    def check(p):
        ptr = g["pointers"][:pos]
        off = ptr["offset"].astype(np.uint64)
        ln = ptr["length"].astype(np.uint64)
        offsets, data, start, cut, hb = _read.gather_vls(off, ln, g["heap"], g["heap"].shape[0], path,
                                                         g["pointers"].name, 0)
        lens = np.diff(offsets)
        cand = np.flatnonzero(lens == len(p))
        if not len(cand):
            return False
        if not len(p):
            return True
        mat = data[offsets[cand][:, None] + np.arange(len(p))[None, :]]
        return bool((mat == np.frombuffer(p, np.uint8)[None, :]).all(axis=1).any())
    return check
