"""Opening a vector's data groups against its schema tree (every check of
SPEC section 7 that needs no values), and reading row ranges into columns
(with the checks that do)."""

import json

import h5py
import numpy as np

from . import _h5, _vlen
from . import _schema as S
from ._columns import Const, List, Prim, Rec, Str, Union, check_utf8
from ._errors import FormatError, mismatch

MASK = "MASK"
PLACEHOLDER_ATTR = "missing-value-placeholder"


def _type_ok(info, encoded, codec, h5col_bool_only=False):
    if encoded == "Bool":
        if h5col_bool_only:
            return _h5.is_h5col_bool(info)
        return info.size == 1 and info.cls in (h5py.h5t.BITFIELD, h5py.h5t.ENUM, h5py.h5t.INTEGER)
    if encoded == "String":
        return info.cls == h5py.h5t.STRING and info.vlen_str
    dt = S.NUMBERS[encoded]
    if dt.kind == "f":
        return info.cls == h5py.h5t.FLOAT and info.size == dt.itemsize
    if dt.kind == "c":
        # SPEC section 4.8: exactly {r at 0, i at size/2}, IEEE floats of half the size.
        half = dt.itemsize // 2
        return (info.cls == h5py.h5t.COMPOUND and info.size == dt.itemsize
                and [(m[0], m[2]) for m in info.members] == [("r", 0), ("i", half)]
                and all(m[1].cls == h5py.h5t.FLOAT and m[1].size == half for m in info.members))
    classes = (h5py.h5t.INTEGER, h5py.h5t.ENUM) if codec == S.ENUM else (h5py.h5t.INTEGER,)
    return info.cls in classes and info.size == dt.itemsize and info.signed == (dt.kind == "i")


def _open_values(group, name, node, path, min_rows, inner=()):
    """Opens a leaf dataset: rank, trailing shape, type, at least `min_rows` rows."""
    ds = _h5.open_dataset(group, name, path)
    shp = _h5.shape(ds)
    if len(shp) != 1 + len(inner) or shp[1:] != tuple(inner):
        want = ", ".join(["N"] + [str(d) for d in inner])
        raise mismatch(path, ds.name, f"shape ({want})", list(shp))
    info = _h5.type_info(ds)
    if not _type_ok(info, node.encoded_type, node.codec):
        want = f"{node.encoded_type} values"
        if node.encoded_type in S.COMPLEX:
            half = S.NUMBERS[node.encoded_type].itemsize // 2
            want = (f"{node.encoded_type} values: a compound of exactly {{r, i}}, {8 * half}-bit IEEE floats "
                    f"at offsets 0 and {half}")
        raise mismatch(path, ds.name, want, info.describe())
    if shp[0] < min_rows:
        raise mismatch(path, ds.name, f"at least {min_rows} rows", shp[0])
    return ds, info


def _open_u64(group, name, path, min_rows):
    ds = _h5.open_dataset(group, name, path)
    shp = _h5.shape(ds)
    info = _h5.type_info(ds)
    if len(shp) != 1:
        raise mismatch(path, ds.name, "shape (N)", list(shp))
    if not (info.cls == h5py.h5t.INTEGER and info.size == 8 and not info.signed):
        raise mismatch(path, ds.name, "uint64 OFFSETS", info.describe())
    if shp[0] < min_rows:
        raise mismatch(path, ds.name, f"at least {min_rows} rows", shp[0])
    return ds


def _open_bytes(group, name, path, min_rows):
    ds = _h5.open_dataset(group, name, path)
    shp = _h5.shape(ds)
    info = _h5.type_info(ds)
    if len(shp) != 1:
        raise mismatch(path, ds.name, "shape (N)", list(shp))
    if not (info.cls == h5py.h5t.INTEGER and info.size == 1):
        raise mismatch(path, ds.name, "uint8 bytes", info.describe())
    if shp[0] < min_rows:
        raise mismatch(path, ds.name, f"at least {min_rows} rows", shp[0])
    return ds


def _check_class(group, want, path):
    c = _h5.read_attr_string(group, "CLASS", path)
    if c != want:
        raise mismatch(path, group.name, f'CLASS = "{want}"', "no CLASS attribute" if c is None else f"CLASS = {c!r}")


def _u64_rows(ds, a, b, path):
    arr = _h5.read_rows(ds, a, b, path)
    return arr.astype(np.uint64, copy=False)


def _checked_offsets(ds, a, b, limit, path):
    """OFFSETS[a:b+1], non-decreasing and at most `limit`, as int64."""
    offs = _u64_rows(ds, a, b + 1, path)
    if len(offs) != b + 1 - a:
        raise mismatch(path, ds.name, f"at least {b + 1} rows", a + len(offs))
    dec = offs[1:] < offs[:-1]
    if dec.any():
        i = int(np.flatnonzero(dec)[0]) + 1
        raise FormatError(path, f"{ds.name}[{a + i}]",
                          f"OFFSETS must not decrease: {int(offs[i])} after {int(offs[i - 1])}")
    if len(offs) and int(offs[-1]) > limit:
        raise FormatError(path, f"{ds.name}[{b}]", f"offset {int(offs[-1])} is past the end ({limit})")
    return offs.astype(np.int64)


# ---------------------------------------------------------------------------
# Readers


class Leaf:
    """scalar and dense nodes: one dataset (`values`, or `VALUES` in a list)."""

    def __init__(self, ds, info, node, path):
        self.ds, self.info, self.node, self.path = ds, info, node, path
        # JSON text below a MASK: checked by `Nullable`, which knows the nulls.
        self.json_by_mask = False
        self.labels = node.labels
        if node.codec == S.ENUM and not self.labels and info.cls == h5py.h5t.ENUM:
            self.labels = dict(info.enum)

    def read(self, a, b, sel=None):
        node, ds = self.node, self.ds
        enc = node.encoded_type
        if enc == "Bool":
            raw = _h5.read_bytes_raw(ds, a, b, self.path)
            # Only 0 and 1 are booleans (SPEC section 7): `!= 0` would call 2 true.
            if raw.size and int(raw.max()) > 1:
                rows = raw.reshape(len(raw), -1)
                i = int(np.flatnonzero((rows > 1).any(axis=1))[0])
                j = int(np.flatnonzero(rows[i] > 1)[0])
                entry = f"entry {j}: " if rows.shape[1] > 1 else ""
                raise FormatError(self.path, f"{ds.name}[{a + i}]",
                                  f"{entry}bool value {int(rows[i][j])} is neither 0 (false) nor 1 (true)")
            return Prim(raw == 1, "bool", node)
        if enc == "String":
            got = _vlen.read_strings(ds, a, b)
            if got is None:
                objs = _h5.read_rows(ds, a, b, self.path)
                col = _vlen_strings(objs, node, self.path, ds.name, a)
            else:
                check_utf8(got[0], got[1], self.path, ds.name, a)
                col = Str(got[0], got[1], "json" if node.codec == S.JSON else "utf8", node)
            if node.codec == S.JSON and not self.json_by_mask:
                check_json(col, self.path, ds.name, a)
            return col
        raw = _h5.read_rows(ds, a, b, self.path)
        want = S.NUMBERS[enc]
        if raw.dtype != want:
            raw = _complex(raw, want) if want.kind == "c" else raw.astype(want)
        tag = TIME_TAGS.get(node.codec)
        if tag is not None:
            if node.codec == S.TIME_OF_DAY_CODEC:
                bad = (raw < 0) | (raw >= S.DAY_NS)
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise FormatError(self.path, f"{ds.name}[{a + i}]",
                                      f"row {a + i}: {int(raw[i])} ns is not a time of day "
                                      f"(0 ..= {S.DAY_NS - 1} ns since midnight)")
            view = TIME_DTYPES[tag]
            vals = raw.astype("<i8").view(view) if tag == "date" else raw.view(view)
            return Prim(vals, tag, node)
        if node.codec == S.UUID_CODEC:
            return Prim(raw, "uuid", node)
        if node.codec == S.CHAR:
            bad = (raw < 0) | (raw > 0x10FFFF) | ((raw >= 0xD800) & (raw <= 0xDFFF))
            if bad.any():
                i = int(np.flatnonzero(bad.reshape(len(raw), -1).any(axis=1))[0])
                raise FormatError(self.path, f"{ds.name}[{a + i}]",
                                  "expected a Unicode scalar value (0..=0x10FFFF, not a surrogate), "
                                  f"found {int(raw.reshape(len(raw), -1)[i][bad.reshape(len(raw), -1)[i]][0])}")
            return Prim(raw, "char", node)
        if node.codec == S.ENUM:
            return Prim(raw, "enum", node, labels=self.labels)
        return Prim(raw, "num", node)


# Time codecs (SPEC section 4.6) -> Prim tag, and the numpy dtype of its values.
TIME_TAGS = {S.INSTANT_CODEC: "instant", S.DATE_CODEC: "date", S.TIME_OF_DAY_CODEC: "time",
             S.DURATION_CODEC: "duration"}
TIME_DTYPES = {"instant": np.dtype("M8[ns]"), "date": np.dtype("M8[D]"), "time": np.dtype("m8[ns]"),
               "duration": np.dtype("m8[ns]")}


def _complex(raw, want):
    """A compound {r, i} read as something else than numpy complex (h5py's
    complex names changed): the members copied bit for bit."""
    out = np.empty(raw.shape, want)
    out.real = raw["r"]
    out.imag = raw["i"]
    return out


class Unknown:
    """A node this version cannot read (`Node.unknown`), as SPEC section 11 says:
    opening it is fine, reading it an error naming its path. `lenient` (list
    items, map values, union variants: inside a column that is otherwise
    read) reads no rows as an empty constant column; only rows that need it
    are the error."""

    def __init__(self, node, path, location, lenient=False, reason=None):
        self.node, self.path, self.location, self.lenient = node, path, location, lenient
        self.reason = reason or node.unknown

    def read(self, a, b, sel=None):
        if self.lenient and b <= a:
            return Const(0, self.node)
        raise FormatError(self.path, self.location, f"{self.reason}: this version of h5vec cannot read it")


def _unknown_map_key(node, path, location, lenient):
    """A map whose key node is unknown is unknown as a whole (SPEC section 11)."""
    if node.codec != S.MAP_CODEC or node.children[0].unknown is not None:
        return None
    key = node.children[0].children[0]
    if key.unknown is None:
        return None
    return Unknown(node, path, location, lenient, f"{key.unknown} (the map's key)")


def check_json(col, path, location, a):
    """Every row of JSON text column `col` that is not null is JSON (as the
    Rust library's Arrow reader checks: damaged metadata can make HDF5 read
    every string as empty)."""
    offs = col.offsets.tolist()
    buf = col.data.tobytes()
    valid = None if col.valid is None else col.valid.tolist()
    for i in range(len(offs) - 1):
        if valid is not None and not valid[i]:
            continue
        try:
            json.loads(buf[offs[i]:offs[i + 1]])
        except ValueError as e:
            raise FormatError(path, f"{location}[{a + i}]", f"row {a + i}: bad JSON: {e}") from None


def _vlen_strings(objs, node, path, location, a):
    n = len(objs)
    flat = objs.tolist()
    enc = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in flat] \
        if any(not isinstance(s, bytes) for s in flat[:1]) else flat
    lens = np.fromiter(map(len, enc), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    data = np.frombuffer(b"".join(enc), dtype=np.uint8)
    check_utf8(offsets, data, path, location, a)
    return Str(offsets, data, "json" if node.codec == S.JSON else "utf8", node)


class Record:
    def __init__(self, names, readers, node, path):
        self.names, self.readers, self.node, self.path = names, readers, node, path

    def read(self, a, b, sel=None):
        names, cols = [], []
        for name, r in zip(self.names, self.readers):
            if sel is not None and name not in sel:
                continue
            names.append(name)
            cols.append(r.read(a, b, None if sel is None else sel[name]))
        return Rec(b - a, names, cols, self.node)


class Constant:
    def __init__(self, node):
        self.node = node

    def read(self, a, b, sel=None):
        return Const(b - a, self.node)


class Blob:
    def __init__(self, group, node, path, count):
        self.node, self.path = node, path
        self.bytes = _open_bytes(group, "bytes", path, 0)
        self.stops = _h5.open_dataset(group, "stops", path)
        info = _h5.type_info(self.stops)
        if _h5.shape(self.stops)[1:] != () or len(_h5.shape(self.stops)) != 1:
            raise mismatch(path, self.stops.name, "shape (N)", list(_h5.shape(self.stops)))
        if not (info.cls == h5py.h5t.INTEGER and info.size == 8 and info.signed):
            raise mismatch(path, self.stops.name, "Int64 stops", info.describe())
        if self.stops.shape[0] < count:
            raise mismatch(path, self.stops.name, f"at least {count} rows", self.stops.shape[0])
        self.nbytes = self.bytes.shape[0]

    def read(self, a, b, sel=None):
        lo = a - 1 if a > 0 else 0
        st = _h5.read_rows(self.stops, lo, b, self.path).astype(np.int64)
        full = np.concatenate([np.zeros(1, np.int64), st]) if a == 0 else st
        dec = full[1:] < full[:-1]
        if dec.any():
            i = int(np.flatnonzero(dec)[0])
            raise FormatError(self.path, f"{self.stops.name}[{a + i}]",
                              f"blob stops must not decrease: {int(full[i + 1])} after {int(full[i])}")
        if full[0] < 0 or full[-1] > self.nbytes:
            raise FormatError(self.path, self.stops.name,
                              f"blob stops must lie within 0..={self.nbytes} (the length of bytes), "
                              f"found {int(full[0])}..{int(full[-1])}")
        base = int(full[0])
        data = _h5.read_bytes_raw(self.bytes, base, int(full[-1]), self.path)
        return Str(full - base, data, "binary", self.node)


def _read_pointers(ds, a, b, path):
    raw = _h5.read_rows(ds, a, b, path)
    if raw.dtype == _h5.POINTER:
        # h5vec's own member types: the two columns as views, no copy.
        pairs = raw.view("<u8").reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1]
    return raw["offset"].astype(np.uint64), raw["length"].astype(np.uint64)


def gather_vls(off, ln, heap_ds, heap_len, path, location, a):
    """Pointers -> (offsets, data, starts, cut lengths, heap bytes): each slice
    cut at its first NUL; zero-copy when the slices are back to back."""
    off = np.asarray(off, np.uint64)
    ln = np.asarray(ln, np.uint64)
    n = len(off)
    if n == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.uint8), None, None, None
    fast = _gather_back_to_back(off, ln, heap_ds, heap_len, path)
    if fast is not None:
        return fast
    hl = np.uint64(heap_len)
    # Within the heap, computed without overflow: both parts first, then their
    # sum (each at most heap_len < 2^63).
    if int(off.max()) > heap_len or int(ln.max()) > heap_len or int((off + ln).max()) > heap_len:
        bad = (off > hl) | (ln > hl - np.minimum(off, hl))
        i = int(np.flatnonzero(bad)[0])
        raise FormatError(path, f"{location}[{a + i}]",
                          f"slice {int(off[i])}+{int(ln[i])} is past the end of the heap ({heap_len} bytes)")
    off = off.view(np.int64)
    ln = ln.view(np.int64)
    end = off + ln
    lo = int(off.min())
    hi = int(end.max())
    hb = _h5.read_bytes_raw(heap_ds, lo, hi, path) if hi > lo else np.zeros(0, np.uint8)
    start = off - lo
    if np.count_nonzero(hb) != len(hb):
        zeros = np.flatnonzero(hb == 0)
        k = np.searchsorted(zeros, start)
        first = np.where(k < len(zeros), zeros[np.minimum(k, len(zeros) - 1)], np.iinfo(np.int64).max)
        cut = np.where(first < start + ln, first - start, ln)
        contiguous = bool((start[1:] == start[:-1] + cut[:-1]).all())
    else:
        cut = ln
        contiguous = bool((off[1:] == end[:-1]).all())
    if contiguous:
        offsets = np.empty(n + 1, np.int64)
        s0 = int(start[0])
        np.subtract(start, s0, out=offsets[:-1])
        offsets[-1] = int(start[-1]) + int(cut[-1]) - s0
        data = hb[s0:s0 + int(offsets[-1])]
    else:
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(cut, out=offsets[1:])
        total = int(offsets[-1])
        idx = np.repeat(start - offsets[:-1], cut) + np.arange(total, dtype=np.int64)
        data = hb[idx]
    return offsets, data, start, cut, hb


def _gather_back_to_back(off, ln, heap_ds, heap_len, path):
    """`gather_vls`'s result when the slices lie back to back in the heap
    (each starting where the previous one ends, as writers lay them out) and
    their bytes hold no NUL: the heap bytes read once and used as they are,
    in a few passes over the pointers. None otherwise (the general path
    decides, and reports any slice outside the heap)."""
    n = len(off)
    # Every offset and length at most heap_len (< 2^63): the ends below cannot
    # wrap, and back to back means each slice ends where the next one starts.
    if heap_len >= 1 << 63 or int(max(off.max(), ln.max())) > heap_len:
        return None
    offsets = np.empty(n + 1, np.int64)
    end = offsets[1:].view(np.uint64)
    np.add(off, ln, out=end)
    if int(end[-1]) > heap_len or not np.array_equal(off[1:], end[:-1]):
        return None
    got = _heap_span(heap_ds, int(off[0]), int(end[-1]), offsets, path)
    if got is None:
        return None
    offsets, hb = got
    return offsets, hb, offsets[:-1], ln.view(np.int64), hb


def _heap_span(heap_ds, lo, hi, offsets, path):
    """The end of both back-to-back paths: heap bytes lo..hi read once,
    `offsets` (ends in offsets[1:]) made relative to lo: (offsets, bytes), or
    None when a NUL cuts some slice (the general path then finds which)."""
    hb = _h5.read_bytes_raw(heap_ds, lo, hi, path) if hi > lo else np.zeros(0, np.uint8)
    if len(hb) and int(hb.min()) == 0:
        return None
    offsets[0] = lo
    if lo:
        offsets -= lo
    return offsets, hb


#: Pointers read at a time by `_read_back_to_back` (4 MiB of them).
POINTER_BLOCK = 1 << 18


def _read_back_to_back(ptrs, a, b, heap_ds, heap_len, path):
    """Rows a..b (b > a) of a compressed-strings column whose pointers have
    h5vec's own member types and whose slices lie back to back in the heap
    without a NUL (as writers lay them out): (offsets, data), read a block of
    pointers at a time (the checks and the offsets made while the block is in
    cache) and the heap bytes once, used as they are. None otherwise (the
    general path then reads them again, decides, and reports any problem)."""
    if ptrs.dtype != _h5.POINTER or heap_len >= 1 << 63:
        return None
    n = b - a
    offsets = _h5.empty(n + 1, np.int64)
    ends = offsets[1:].view(np.uint64)
    buf = _h5.empty(min(n, POINTER_BLOCK), _h5.POINTER)
    same = np.empty(len(buf), bool)
    lo = prev = None
    for s in range(0, n, POINTER_BLOCK):
        t = min(n, s + POINTER_BLOCK)
        pairs = _h5.read_rows_into(ptrs, a + s, a + t, buf[:t - s], path).view("<u8").reshape(-1, 2)
        # Every offset and length at most heap_len (< 2^63): the ends cannot wrap;
        # back to back: each slice starts where the previous one ends.
        if int(pairs.max()) > heap_len:
            return None
        off = pairs[:, 0]
        end = ends[s:t]
        np.add(off, pairs[:, 1], out=end)
        first = int(off[0])
        if lo is None:
            lo = first
        elif first != prev:
            return None
        eq = same[:t - s - 1]
        if not np.equal(off[1:], end[:-1], out=eq).all():
            return None
        prev = int(end[-1])
    if prev > heap_len:
        return None
    return _heap_span(heap_ds, lo, prev, offsets, path)


def placeholder_rows(ph, start, cut, hb):
    """Rows whose (cut) slice equals the placeholder string."""
    p = np.frombuffer(ph.encode("utf-8"), np.uint8)
    n = len(cut)
    missing = np.zeros(n, bool)
    cand = np.flatnonzero(cut == len(p))
    if len(p) == 0 or len(cand) == 0:
        missing[cand] = True
        return missing
    mat = hb[start[cand][:, None] + np.arange(len(p))[None, :]]
    missing[cand] = (mat == p[None, :]).all(axis=1)
    return missing


class Vls:
    def __init__(self, group, node, path, count):
        self.node, self.path = node, path
        self.ptrs = _h5.open_dataset(group, "pointers", path)
        info = _h5.type_info(self.ptrs)
        ok = (info.cls == h5py.h5t.COMPOUND and len(info.members) == 2
              and [m[0] for m in info.members] == ["offset", "length"]
              and all(m[1].cls == h5py.h5t.INTEGER and not m[1].signed and m[1].size <= 8
                      for m in info.members))
        if not ok:
            raise mismatch(path, self.ptrs.name, "compound {offset, length} of unsigned integers", info.describe())
        if len(_h5.shape(self.ptrs)) != 1:
            raise mismatch(path, self.ptrs.name, "shape (N)", list(_h5.shape(self.ptrs)))
        if self.ptrs.shape[0] < count:
            raise mismatch(path, self.ptrs.name, f"at least {count} rows", self.ptrs.shape[0])
        self.heap = _open_bytes(group, "heap", path, 0)
        self.heap_len = self.heap.shape[0]
        self.placeholder = None
        if node.codec == S.PLACEHOLDER_CODEC:
            self.placeholder = _h5.read_attr_string(self.ptrs, PLACEHOLDER_ATTR, path)

    def read(self, a, b, sel=None):
        fast = _read_back_to_back(self.ptrs, a, b, self.heap, self.heap_len, self.path) if b > a else None
        if fast is not None:
            offsets, data = fast
        else:
            off, ln = _read_pointers(self.ptrs, a, b, self.path)
            offsets, data, start, cut, hb = gather_vls(off, ln, self.heap, self.heap_len, self.path,
                                                       self.ptrs.name, a)
        check_utf8(offsets, data, self.path, self.ptrs.name, a)
        valid = None
        if self.node.codec == S.PLACEHOLDER_CODEC:
            valid = np.ones(b - a, bool)
            if self.placeholder is not None and b > a:
                if fast is not None:
                    start, cut, hb = offsets[:-1], np.diff(offsets), data
                valid = ~placeholder_rows(self.placeholder, start, cut, hb)
        col = Str(offsets, data, "json" if self.node.codec == S.JSON else "utf8", self.node, valid)
        if self.node.codec == S.JSON:
            check_json(col, self.path, self.ptrs.name, a)
        return col


class ListReader:
    def __init__(self, group, node, path, count, extra=()):
        self.node, self.path = node, path
        _check_class(group, "LIST_COLUMN", path)
        kind = _h5.read_attr_string(group, "KIND", path)
        if kind != "OFFSETS":
            raise mismatch(path, group.name, 'KIND = "OFFSETS"', repr(kind))
        _h5.expect_members(group, ["OFFSETS", "VALUES", *extra], path)
        self.offsets = _open_u64(group, "OFFSETS", path, count + 1)
        first = int(_u64_rows(self.offsets, 0, 1, path)[0])
        if first != 0:
            raise FormatError(path, f"{self.offsets.name}[0]", f"OFFSETS[0] must be 0, found {first}")
        self.total = int(_u64_rows(self.offsets, count, count + 1, path)[0])
        self.items = open_item(group, "VALUES", node.children[0], path + "[]", self.total)

    def read(self, a, b, sel=None):
        offs = _checked_offsets(self.offsets, a, b, self.total, self.path)
        child = self.items.read(int(offs[0]), int(offs[-1]))
        return List(offs - offs[0], child, self.node)


class StringValues:
    def __init__(self, group, node, path, rows, extra=()):
        self.node, self.path = node, path
        _check_class(group, "STRING_VALUES", path)
        _h5.expect_members(group, ["OFFSETS", "CHARS", *extra], path)
        self.offsets = _open_u64(group, "OFFSETS", path, rows + 1)
        first = int(_u64_rows(self.offsets, 0, 1, path)[0])
        if first != 0:
            raise FormatError(path, f"{self.offsets.name}[0]", f"OFFSETS[0] must be 0, found {first}")
        total = int(_u64_rows(self.offsets, rows, rows + 1, path)[0])
        self.chars = _open_bytes(group, "CHARS", path, total)
        self.total = self.chars.shape[0]

    def read(self, a, b, sel=None):
        offs = _checked_offsets(self.offsets, a, b, self.total, self.path)
        data = _h5.read_bytes_raw(self.chars, int(offs[0]), int(offs[-1]), self.path)
        offs = offs - offs[0]
        check_utf8(offs, data, self.path, self.offsets.name, a)
        return Str(offs, data, "utf8", self.node)


class UnionReader:
    """union (SPEC section 4.4): TAG and INDEX slices of the range, then one
    contiguous row span per variant, opened with the span's end as its row count
    (so a variant column too short is an error, and lists stop at that row)."""

    def __init__(self, group, node, path, count, extra=()):
        self.group, self.node, self.path = group, node, path
        self.names = list(node.labels)
        _h5.expect_members(group, ["TAG", "INDEX", *self.names, *extra], path)
        self.tag = _h5.open_dataset(group, "TAG", path)
        info = _h5.type_info(self.tag)
        want = dict(zip(self.names, range(len(self.names))))
        if len(_h5.shape(self.tag)) != 1:
            raise mismatch(path, self.tag.name, "shape (N)", list(_h5.shape(self.tag)))
        if not (info.cls == h5py.h5t.ENUM and info.size in (1, 2) and not info.signed
                and dict(info.enum) == want):
            raise mismatch(path, self.tag.name, f"an HDF5 enum over uint8/uint16 with members {want}",
                           info.describe())
        if self.tag.shape[0] < count:
            raise mismatch(path, self.tag.name, f"at least {count} rows", self.tag.shape[0])
        self.index = _open_u64(group, "INDEX", path, count)

    def read(self, a, b, sel=None):
        n = len(self.names)
        tag = _h5.read_rows(self.tag, a, b, self.path).astype(np.int64)
        idx = _u64_rows(self.index, a, b, self.path)
        bad = tag >= n
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise FormatError(self.path, f"{self.tag.name}[{a + i}]",
                              f"row {a + i}: tag {int(tag[i])} names no variant (expected 0..{n - 1})")
        offsets = np.zeros(b - a, np.int32)
        children = []
        for v, (name, cnode) in enumerate(zip(self.names, self.node.children)):
            rows = np.flatnonzero(tag == v)
            lo = int(idx[rows[0]]) if len(rows) else 0
            if len(rows):
                gap = idx[rows] != np.uint64(lo) + np.arange(len(rows), dtype=np.uint64)
                if gap.any():
                    i = int(rows[np.flatnonzero(gap)[0]])
                    raise FormatError(self.path, f"{self.index.name}[{a + i}]",
                                      f"row {a + i}: INDEX {int(idx[i])} of variant {name!r} is out of order "
                                      f"(expected consecutive rows from {lo})")
                if lo + len(rows) > 1 << 62:
                    raise FormatError(self.path, f"{self.index.name}[{a + int(rows[-1])}]",
                                      f"row {a + int(rows[-1])}: INDEX {int(idx[rows[-1]])} is too large")
            hi = lo + len(rows)
            g = _h5.open_group(self.group, name, self.path)
            vpath = f"{self.path}.{name}"
            reader = open_field(g, cnode, vpath, 0, lenient=True)
            try:
                if hi:
                    reader = open_field(g, cnode, vpath, hi, lenient=True)
            except FormatError as e:
                last = a + int(rows[-1])
                raise FormatError(self.path, f"{self.index.name}[{last}]",
                                  f"row {last}: INDEX {hi - 1} is past the rows of variant {name!r} "
                                  f"({e})") from None
            children.append(reader.read(lo, hi))
            offsets[rows] = np.arange(len(rows), dtype=np.int32)
        return Union(tag.astype(np.int8 if n <= 128 else np.int32), offsets, self.names, children, self.node)


class Fill:
    """fill_nullable list elements: the dataset's user-defined fill value marks a missing element."""

    def __init__(self, ds, node, path):
        self.ds, self.node, self.path = ds, node, path
        dcpl = ds.id.get_create_plist()
        self.fill = None
        if dcpl.fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED:
            self.fill = np.asarray(ds.fillvalue).astype(S.NUMBERS[node.encoded_type])

    def read(self, a, b, sel=None):
        raw = _h5.read_rows(self.ds, a, b, self.path)
        want = S.NUMBERS[self.node.encoded_type]
        if raw.dtype != want:
            raw = raw.astype(want)
        if self.fill is None:
            valid = np.ones(len(raw), bool)
        elif want.kind == "f":
            valid = ~((raw == self.fill) | (np.isnan(raw) & np.isnan(self.fill)))
        else:
            valid = raw != self.fill
        return Prim(raw, "num", self.node, valid)


class Nullable:
    def __init__(self, mask_ds, inner, node, path):
        self.mask, self.inner, self.node, self.path = mask_ds, inner, node, path

    def read(self, a, b, sel=None):
        m = _h5.read_bytes_raw(self.mask, a, b, self.path)
        bad = m > 1
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise FormatError(self.path, f"{self.mask.name}[{a + i}]",
                              f"MASK value {int(m[i])} is neither FALSE (0) nor TRUE (1)")
        valid = m == 1
        col = self.inner.read(a, b, sel)
        if isinstance(col, List):
            lens = np.diff(col.offsets)
            badnull = ~valid & (lens != 0)
            if badnull.any():
                i = int(np.flatnonzero(badnull)[0])
                raise FormatError(self.path, f"{self.inner.offsets.name}[{a + i}]",
                                  "a null row (MASK = FALSE) must have an empty span, "
                                  f"found {int(lens[i])} elements")
        col.valid = valid
        if isinstance(self.inner, Leaf) and self.inner.json_by_mask and self.inner.node.codec == S.JSON:
            check_json(col, self.path, self.inner.ds.name, a)
        col.node = self.node
        return col


def _open_mask(group, path, rows):
    ds = _h5.open_dataset(group, MASK, path)
    info = _h5.type_info(ds)
    if len(_h5.shape(ds)) != 1:
        raise mismatch(path, ds.name, "shape (N)", list(_h5.shape(ds)))
    if not _h5.is_h5col_bool(info):
        raise mismatch(path, ds.name, "the h5col bool type (enum over int8: FALSE = 0, TRUE = 1)",
                       info.describe())
    if ds.shape[0] < rows:
        raise mismatch(path, ds.name, f"at least {rows} rows", ds.shape[0])
    return ds


class NotOpened:
    """A field `open_field(only=)` left out: never read (a read is a bug)."""

    def __init__(self, node, path):
        self.node, self.path = node, path

    def read(self, a, b, sel=None):
        raise RuntimeError(f"h5vec internal error: field {self.path} was not opened for reading")


def open_field(group, node, path, count, extra=(), lenient=False, only=None):
    """The reader of a field whose data group is `group` (SPEC sections 3-4);
    `lenient`: inside list items or union variants (see `Unknown`); `only`:
    of a record, the names of the fields to open (the others are not opened,
    and must not be read), None for all."""
    k = node.kind
    if node.unknown is not None:
        return Unknown(node, path, group.name, lenient)
    if k in ("scalar", "dense"):
        _h5.expect_members(group, ["values", *extra], path)
        ds, info = _open_values(group, "values", node, path, count, node.shape if k == "dense" else ())
        return Leaf(ds, info, node, path)
    if k == "record":
        _h5.expect_members(group, [*node.field_names, *extra], path)
        readers = [NotOpened(c, f"{path}.{f}") if only is not None and f not in only
                   else Unknown(c, f"{path}.{f}", _h5.member_path(group, f), lenient) if c.unknown is not None
                   else open_field(_h5.open_group(group, f, path), c, f"{path}.{f}", count, lenient=lenient)
                   for f, c in zip(node.field_names, node.children)]
        return Record(node.field_names, readers, node, path)
    if k == "constant":
        _h5.expect_members(group, list(extra), path)
        return Constant(node)
    if k == "blob":
        _h5.expect_members(group, ["bytes", "stops", *extra], path)
        return Blob(group, node, path, count)
    if k == "vls_string":
        _h5.expect_members(group, ["heap", "pointers", *extra], path)
        child = node.children[0]
        if child.kind != "scalar" or child.encoded_type != "String":
            raise mismatch(path, group.name, "a scalar String child of vls_string", f"`{child.kind}`")
        return Vls(group, node, path, count)
    if k == "list":
        return _unknown_map_key(node, path, group.name, lenient) or ListReader(group, node, path, count, extra)
    if k == "union":
        return UnionReader(group, node, path, count, extra)
    if k == "nullable":
        child = node.children[0]
        if child.unknown is not None:
            return Unknown(child, path, group.name, lenient)
        if child.kind == "list" and _unknown_map_key(child, path, group.name, lenient):
            return _unknown_map_key(child, path, group.name, lenient)
        if child.kind not in ("scalar", "dense", "record", "constant", "list", "blob", "union"):
            raise mismatch(path, group.name, "a nullable scalar, dense, record, constant, list or union",
                           child.kind)
        mask = _open_mask(group, path, count)
        inner = open_field(group, child, path, count, (*extra, MASK), lenient)
        if isinstance(inner, Leaf):
            inner.json_by_mask = True
        return Nullable(mask, inner, node, path)
    raise mismatch(path, group.name, "a field kind", f"`{k}` (only valid inside a list)")


def open_item(parent, name, node, path, rows, extra=()):
    """The reader of list elements stored as member `name` of list group `parent`."""
    k = node.kind
    loc = _h5.member_path(parent, name)
    if node.unknown is not None:
        return Unknown(node, path, loc, lenient=True)
    if k in ("scalar", "dense"):
        if node.encoded_type == "String" or node.codec == S.JSON:
            raise mismatch(path, _h5.member_path(parent, name), "list elements of a fixed-size type",
                           "String (strings in lists are string_values)")
        ds, info = _open_values(parent, name, node, path, rows, node.shape if k == "dense" else ())
        return Leaf(ds, info, node, path)
    if k == "fill_nullable":
        ds, info = _open_values(parent, name, node, path, rows)
        return Fill(ds, node, path)
    if k == "string_values":
        return StringValues(_h5.open_group(parent, name, path), node, path, rows, extra)
    if k == "list":
        return _unknown_map_key(node, path, loc, True) or \
            ListReader(_h5.open_group(parent, name, path), node, path, rows, extra)
    if k == "record":
        g = _h5.open_group(parent, name, path)
        _check_class(g, "RECORD_VALUES", path)
        return open_field(g, node, path, rows, extra, lenient=True)
    if k == "union":
        g = _h5.open_group(parent, name, path)
        _check_class(g, "UNION_VALUES", path)
        return UnionReader(g, node, path, rows, extra)
    if k == "nullable":
        child = node.children[0]
        if child.unknown is not None:
            return Unknown(child, path, loc, lenient=True)
        if child.kind == "list" and _unknown_map_key(child, path, loc, True):
            return _unknown_map_key(child, path, loc, True)
        if child.kind not in ("list", "string_values"):
            raise mismatch(path, _h5.member_path(parent, name), "nullable lists or strings as list elements",
                           f"nullable {child.kind}")
        g = _h5.open_group(parent, name, path)
        mask = _open_mask(g, path, rows)
        inner = open_item(parent, name, child, path, rows, (*extra, MASK))
        return Nullable(mask, inner, node, path)
    raise mismatch(path, _h5.member_path(parent, name), "a list element kind", f"`{k}`")
