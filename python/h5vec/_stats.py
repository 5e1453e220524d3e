"""Statistics of a vector (issue 30; /tmp/s38/stats-format.md, SPEC): the
HEP001 `CHUNK_MINMAX` datasets under `metadata/SEARCH_INDEXES`, their
validity tokens, reading them for pruning (`find`: anything unexpected means
"no statistics", never an error), and writing them at save and keeping them
current at append (`leaves`, `write_new`, `Append`)."""

from __future__ import annotations

import h5py
import numpy as np

from . import _h5
from . import _schema as S
from ._errors import FormatError

GROUP = "SEARCH_INDEXES"
KIND = "CHUNK_MINMAX"
SUFFIX = "__chunk_minmax"
_CODECS = frozenset({S.IDENTITY, S.H5VEC_CODEC, S.ENUM, *S.TIME_CODECS})
_NUMBERS = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64")


class Stats:
    """Usable statistics of one source: `chunk` rows per entry, `entries` (the
    data-bearing ones: min, max, nan_count, fill_count, n)."""

    def __init__(self, chunk, entries):
        self.chunk, self.entries = chunk, entries


# ---------------------------------------------------------------------------
# Which leaves


def leaves(node, prefix=()):
    """[(field path, node)] of the leaves that get statistics: 1-D `values` of
    numbers, bools, fieldless enums and times reached from the root through
    records only."""
    if node.unknown is not None:
        return []
    if node.kind == "record":
        out = []
        for f, c in zip(node.field_names or [], node.children or []):
            out.extend(leaves(c, prefix + (f,)))
        return out
    if node.kind == "scalar" and node.codec in _CODECS and \
            (node.encoded_type in _NUMBERS or node.encoded_type == "Bool"):
        return [(prefix, node)]
    return []


def readable_leaves(node, prefix=()):
    """`leaves`, and an Option of such a leaf (its `values` below the MASK:
    statistics of another writer count its nulls in `fill_count`)."""
    out = leaves(node, prefix)
    if node.unknown is None and node.kind == "record":
        for f, c in zip(node.field_names or [], node.children or []):
            out.extend(p for p in readable_leaves(c, prefix + (f,)) if p not in out)
    elif node.kind == "nullable" and node.children and leaves(node.children[0], prefix) == \
            [(prefix, node.children[0])]:
        out.append((prefix, node.children[0]))
    return out


def source_of(path):
    return "/".join(("data",) + tuple(path) + ("values",))


def default_name(source):
    return source[len("data/"):].replace("/", ".") + SUFFIX


# ---------------------------------------------------------------------------
# Tokens


def _u64_attr(obj, name):
    """A scalar uint64 attribute's value, or None (absent or anything else)."""
    try:
        if name not in obj.attrs:
            return None
        aid = h5py.h5a.open(obj.id, name.encode())
        t = aid.get_type()
        if aid.shape != () or t.get_class() != h5py.h5t.INTEGER or t.get_size() != 8 or \
                t.get_sign() != h5py.h5t.SGN_NONE:
            return None
        out = np.zeros((), np.uint64)
        aid.read(out, mtype=h5py.h5t.NATIVE_UINT64)
        return int(out)
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None


def _str_attr(obj, name):
    try:
        if name not in obj.attrs:
            return None
        v = obj.attrs[name]
        if isinstance(v, np.ndarray):
            if v.shape != ():
                return None
            v = v[()]
        if isinstance(v, (bytes, np.bytes_)):
            v = bytes(v).decode("utf-8")
        return v if isinstance(v, str) else None
    except (OSError, KeyError, ValueError, TypeError, RuntimeError, UnicodeDecodeError):
        return None


def _write_u64_attr(obj, name, value):
    if name in obj.attrs:
        obj.attrs.__delitem__(name)
    sid = h5py.h5s.create(h5py.h5s.SCALAR)
    aid = h5py.h5a.create(obj.id, name.encode(), h5py.h5t.STD_U64LE, sid)
    aid.write(np.array(value, np.uint64), mtype=h5py.h5t.NATIVE_UINT64)


def _write_kind(obj, value):
    """@KIND: fixed-length ASCII sized with its NUL, as h5col (and the Rust library) write it."""
    _h5.write_attr_ascii(obj, "KIND", value)


def _write_source(obj, value):
    obj.attrs.create("SOURCE", value, dtype=h5py.string_dtype("utf-8"))


def _chunk_len(src, count):
    if src.chunks:
        return int(src.chunks[0])
    return max(1, int(count))


# ---------------------------------------------------------------------------
# Reading


def find(group, source, count):
    """Valid CHUNK_MINMAX statistics of `source` (a path below the vector group
    `group`) for a vector of `count` rows, or None (no index, or tokens that
    fail the check: never an error). An index whose tokens are valid but
    whose content is not what the format says (too few entries, an entry's
    `n` not its chunk's rows, another layout, an unreadable chunk) is a
    `FormatError` (SPEC 14.1), as in the Rust library."""
    try:
        meta = group.get("metadata")
        if not isinstance(meta, h5py.Group) or GROUP not in meta:
            return None
        si = meta.get(GROUP)
        if not isinstance(si, h5py.Group):
            return None
        gen = _u64_attr(si, "GENERATION")
        if gen is None:
            return None
        src = group.get(source)
        if not isinstance(src, h5py.Dataset):
            return None
        first = default_name(source)
        names = list(si)
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None
    if first in names:  # the usual name first; any other name is found by @SOURCE
        names.remove(first)
        names.insert(0, first)
    for name in names:
        try:
            ds = si.get(name)
            if not isinstance(ds, h5py.Dataset) or _str_attr(ds, "KIND") != KIND or \
                    _str_attr(ds, "SOURCE") != source:
                continue
            if _u64_attr(ds, "SOURCE_GENERATION") != gen or _u64_attr(ds, "SOURCE_NROWS") != count:
                continue
        except (OSError, KeyError, ValueError, TypeError, RuntimeError):
            continue
        return Stats(_chunk_len(src, count), _checked_entries(ds, src, count))
    return None


def _checked_entries(ds, src, count):
    """The data-bearing entries of a token-valid index, or a FormatError."""
    try:
        problem, entries = _entries(ds, src, count)
    except (OSError, ValueError, TypeError, RuntimeError) as e:
        problem, entries = f"cannot read it: {e}", None
    if problem is not None:
        raise FormatError("$", ds.name, f"a valid CHUNK_MINMAX index (its tokens match) {problem}")
    return entries


def _entries(ds, src, count):
    """(problem or None, the data-bearing entries of index `ds`)."""
    dt = ds.dtype
    if dt.names != ("min", "max", "nan_count", "fill_count", "n") or len(ds.shape or ()) != 1:
        return f"must be 1-D of the compound {{min, max, nan_count, fill_count, n}}, found {dt}", None
    sk = np.dtype(src.dtype).kind
    for f in ("min", "max"):
        k = dt.fields[f][0].kind
        if k != sk and not (sk == "b" and k in "ub"):
            return f"must have `{f}` of the source's type ({src.dtype}), found {dt.fields[f][0]}", None
    c = _chunk_len(src, count)
    need = -(-count // c) if count else 0
    if ds.shape[0] < need:
        return f"must have an entry for each of the {need} chunks, found {ds.shape[0]}", None
    e = ds[:need] if need else ds[:0]
    want = np.minimum(c, count - np.arange(need, dtype=np.int64) * c)
    n = e["n"].astype(np.int64)
    bad = (n != want) | (e["nan_count"].astype(np.int64) + e["fill_count"].astype(np.int64) > n)
    if need and bad.any():
        i = int(np.flatnonzero(bad)[0])
        return (f"has entry {i}: n = {int(n[i])}, nan_count = {int(e['nan_count'][i])}, fill_count = "
                f"{int(e['fill_count'][i])} for a chunk of {int(want[i])} rows"), None
    return None, e


# ---------------------------------------------------------------------------
# Computing and writing


def _read_raw(src, a, b):
    """Rows a..b of `src` as its stored numbers (a Bool bitfield as uint8)."""
    if _h5.type_info(src).cls == h5py.h5t.BITFIELD:
        return _h5.read_bytes_raw(src, a, b, "$")
    return np.asarray(src[a:b]).view(np.dtype(np.dtype(src.dtype).str))


def _mem_dtype(src):
    """The numpy form of one min/max element, byte for byte the source's type."""
    info = _h5.type_info(src)
    if info.cls == h5py.h5t.BITFIELD:
        return np.dtype("u1")
    return np.dtype(np.dtype(src.dtype).str)


def compute(src, first, count, mask=None):
    """Entries first.. of the statistics of `src` holding `count` rows; `mask`:
    the MASK of an Option around the values (its nulls are `fill_count`)."""
    c = _chunk_len(src, count)
    need = -(-count // c) if count else 0
    el = _mem_dtype(src)
    out = np.zeros(max(0, need - first), _entry_dtype(el))
    for i in range(first, need):
        a, b = i * c, min(count, (i + 1) * c)
        raw = _read_raw(src, a, b)
        e = out[i - first]
        e["n"] = b - a
        if mask is not None:
            present = _h5.read_bytes_raw(mask, a, b, "$").reshape(-1) != 0
            e["fill_count"] = int((~present).sum())
            raw = raw[present]
        if raw.dtype.kind == "f":
            nan = np.isnan(raw)
            e["nan_count"] = int(nan.sum())
            raw = raw[~nan]
        if len(raw):
            e["min"] = raw.min()
            e["max"] = raw.max()
    return out


def _entry_dtype(el):
    return np.dtype([("min", el), ("max", el), ("nan_count", "<u8"), ("fill_count", "<u8"), ("n", "<u8")])


def _file_type(src):
    st = src.id.get_type()
    s = st.get_size()
    ct = h5py.h5t.create(h5py.h5t.COMPOUND, 2 * s + 24)
    ct.insert(b"min", 0, st)
    ct.insert(b"max", s, st)
    ct.insert(b"nan_count", 2 * s, h5py.h5t.STD_U64LE)
    ct.insert(b"fill_count", 2 * s + 8, h5py.h5t.STD_U64LE)
    ct.insert(b"n", 2 * s + 16, h5py.h5t.STD_U64LE)
    return ct


def _create(si, name, src, entries, checksum=False):
    """A new index dataset holding `entries`; `checksum`: Fletcher32 (SPEC 6.4)."""
    ct = _file_type(src)
    n = len(entries)
    sid = h5py.h5s.create_simple((n,), (h5py.h5s.UNLIMITED,))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    # As the Rust library: the entries of the first commit, rounded up to a
    # power of two, at least 64 and at most 64 KiB of entries.
    cap = max(65_536 // ct.get_size(), 64)
    dcpl.set_chunk((min(1 << (max(n, 64) - 1).bit_length(), cap),))
    if checksum:
        dcpl.set_fletcher32()
    dsid = h5py.h5d.create(si.id, name.encode("utf-8"), ct, sid, dcpl=dcpl)
    if n:
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(entries), mtype=ct)
    return si[name]


def _put(ds, src, first, entries):
    """Writes entries first.. (growing the dataset to hold them)."""
    end = first + len(entries)
    if ds.shape[0] < end:
        ds.resize((end,))
    if len(entries):
        fspace = ds.id.get_space()
        fspace.select_hyperslab((first,), (len(entries),))
        mspace = h5py.h5s.create_simple((len(entries),))
        ds.id.write(mspace, fspace, np.ascontiguousarray(entries), mtype=_file_type(src))


def write_new(vgroup, node, count, generation=1, checksum=False):
    """Statistics of every statistics leaf of a vector just written (save);
    with `checksum`, Fletcher32 on them as on every dataset of the save."""
    found = leaves(node)
    if not found:
        return
    si = vgroup["metadata"].create_group(GROUP)
    _write_u64_attr(si, "GENERATION", generation)
    for path, _ in found:
        source = source_of(path)
        src = vgroup[source]
        ds = _create(si, default_name(source), src, compute(src, 0, count), checksum)
        _write_kind(ds, KIND)
        _write_source(ds, source)
        _write_u64_attr(ds, "SOURCE_GENERATION", generation)
        _write_u64_attr(ds, "SOURCE_NROWS", count)


class Append:
    """Keeps a vector's CHUNK_MINMAX statistics current across one append, in
    HEP001's order: `before_content` (future tokens: SOURCE_GENERATION = g + 1,
    SOURCE_NROWS = the new count), `content` (the entries from the first chunk
    the append touches; all of them when the index was stale), and after the
    caller wrote the count, `commit` (GENERATION = g + 1). A vector without
    `SEARCH_INDEXES` gets none."""

    def __init__(self, vgroup, node, count):
        self.vgroup, self.count = vgroup, count
        meta = vgroup["metadata"]
        si = meta.get(GROUP) if GROUP in meta else None
        self.si = si if isinstance(si, h5py.Group) else None
        self.todo = []
        if self.si is None:
            return
        self.gen = _u64_attr(self.si, "GENERATION")
        known = {source_of(p) for p, _ in readable_leaves(node)}
        for name in list(self.si):
            ds = self.si.get(name)
            if not isinstance(ds, h5py.Dataset) or _str_attr(ds, "KIND") != KIND:
                continue
            source = _str_attr(ds, "SOURCE")
            if source not in known:
                continue
            src = vgroup[source]
            try:
                valid = (self.gen is not None and _u64_attr(ds, "SOURCE_GENERATION") == self.gen
                         and _u64_attr(ds, "SOURCE_NROWS") == count and _entries(ds, src, count)[0] is None
                         and ds.maxshape[0] is None and _same_type(ds, src))
            except (OSError, RuntimeError, ValueError, TypeError, KeyError):
                valid = False  # unreadable (a damaged chunk): recomputed
            self.todo.append((name, source, valid))
        if self.gen is None:
            # Not a scalar uint64: above every SOURCE_GENERATION (as h5col and Rust), so no
            # index of any kind looks valid by chance.
            tokens = [_u64_attr(d, "SOURCE_GENERATION") for d in self.si.values() if isinstance(d, h5py.Dataset)]
            self.gen = max([t for t in tokens if t is not None], default=0) + 1
        self.next = self.gen + 1

    def before_content(self, new_count):
        for name, _, _ in self.todo:
            ds = self.si[name]
            _write_u64_attr(ds, "SOURCE_GENERATION", self.next)
            _write_u64_attr(ds, "SOURCE_NROWS", new_count)

    def _mask(self, source):
        """The MASK beside `source` (an Option leaf built by `build_index`), or None."""
        g = self.vgroup.get(source.rsplit("/", 1)[0])
        m = g.get("MASK") if isinstance(g, h5py.Group) else None
        return m if isinstance(m, h5py.Dataset) else None

    def content(self, new_count):
        for name, source, valid in self.todo:
            src = self.vgroup[source]
            mask = self._mask(source)
            if valid:
                first = self.count // _chunk_len(src, new_count)
                _put(self.si[name], src, first, compute(src, first, new_count, mask))
            else:
                # Stale (a crash) or not growable: recomputed from the data, under the future tokens.
                old = self.si[name]
                attrs = {k: old.attrs[k] for k in old.attrs if k not in ("KIND", "SOURCE", "SOURCE_GENERATION",
                                                                           "SOURCE_NROWS")}
                checksum = bool(old.fletcher32)
                del self.si[name]
                ds = _create(self.si, name, src, compute(src, 0, new_count, mask), checksum)
                _write_kind(ds, KIND)
                _write_source(ds, source)
                _write_u64_attr(ds, "SOURCE_GENERATION", self.next)
                _write_u64_attr(ds, "SOURCE_NROWS", new_count)
                for k, v in attrs.items():
                    ds.attrs[k] = v

    def commit(self):
        if self.si is not None:
            _write_u64_attr(self.si, "GENERATION", self.next)


def _same_type(ds, src):
    try:
        t = ds.id.get_type()
        st = src.id.get_type()
        return t.get_nmembers() == 5 and t.get_member_type(0) == st and t.get_member_type(1) == st
    except (ValueError, TypeError, RuntimeError):
        return False
