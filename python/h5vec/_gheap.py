"""A look at the global heap collections a variable-length string dataset
points to, before HDF5 parses them (SPEC.md section 7), as the Rust library
does (h5vec/src/gheap.rs).

HDF5 (2.0 and 2.2 at least) loops forever in `H5HG__cache_heap_deserialize`
on a collection whose free-space object (index 0) has size 0, or whose
object size makes its parse pointer wrap around: the loop runs inside one
HDF5 call (h5py holds its lock), so nothing can bound it from outside. This
module walks the same object headers from the file's bytes first and raises
`FormatError` for such a collection.

It reads only what it can read without HDF5 touching the heap: the 16-byte
heap IDs of the rows asked for, from contiguous datasets and from chunks
(compressed chunks go through HDF5's own filters in a scratch in-memory file,
as opaque bytes), in files opened with the default (sec2) driver; then the
collections those IDs name (each at most 4 MiB read whole, larger ones object
header by object header). Anything else (compact storage, other drivers,
bytes that do not look like a collection) is left to HDF5 unchanged; only a
collection HDF5 would loop on is an error.
"""

import os
import struct
import itertools

import h5py
import numpy as np

from ._errors import FormatError

# Most distinct collections looked at per read (as in Rust).
MAX_COLLECTIONS = 1 << 16
# Collections up to this size are read whole; larger ones header by header.
READ_WHOLE = 4 << 20
# Most bytes of heap IDs read per call (rows beyond are not looked at).
MAX_ID_BYTES = 64 << 20
# Bytes of whole collections walked together (numpy, in lockstep).
BATCH_BYTES = 32 << 20

_scratch = itertools.count()


def _align8(x):
    return (x + 7) & ~7


def is_vlen_str(ds):
    """Whether `ds` holds variable-length strings (the values the heap holds)."""
    try:
        t = ds.id.get_type()
        return t.get_class() == h5py.h5t.STRING and t.is_variable_str()
    except (OSError, RuntimeError, ValueError, TypeError):
        return False


def guard(ds, start, stop, path):
    """Checks the collections that rows `start..stop` of `ds` (the value of a
    scalar one) point to, if `ds` holds variable-length strings; a damaged
    collection HDF5 would loop on is a `FormatError` naming `path` and `ds`."""
    if stop <= start or not is_vlen_str(ds):
        return
    try:
        found = _collections(ds, start, stop)
    except (OSError, RuntimeError, ValueError, TypeError, KeyError, struct.error):
        # What cannot be looked at is left to HDF5 (as in Rust).
        return
    if found is None:
        return
    fd, addrs, ss, eof = found
    try:
        bad = _walk_all(fd, addrs, ss, eof)
    except (OSError, ValueError, TypeError, struct.error):
        return
    if bad is not None:
        addr, at, why = bad
        raise FormatError(path, ds.name, f"damaged global heap collection at byte {addr} of the file: "
                                         f"the object at byte {addr + at} {why}")


def _file_view(f):
    """(fd, sizeof_addr, sizeof_size, user block size, file size) of the
    h5py file `f`, or None when its bytes cannot be read directly (not the
    sec2 driver) or its sizes are not plausible: HDF5 then reads alone."""
    if f.driver != "sec2":
        return None
    fd = f.id.get_vfd_handle()
    if not isinstance(fd, int) or fd < 0:
        return None
    fcpl = f.id.get_create_plist()
    sa, ss = fcpl.get_sizes()
    if not (1 <= sa <= 8 and 1 <= ss <= 8):
        return None
    return fd, sa, ss, fcpl.get_userblock(), os.fstat(fd).st_size


def _collections(ds, start, stop):
    """(fd, sorted collection addresses, sizeof_size, file size) or None."""
    view = _file_view(ds.file)
    if view is None:
        return None
    fd, sa, ss, base, eof = view
    idsz = 8 + sa
    n = min(stop - start, MAX_ID_BYTES // idsz)
    ids = heap_ids(ds, fd, start, n, idsz)
    if not ids:
        return None
    a = np.frombuffer(ids, np.uint8).reshape(-1, idsz)
    seq = a[:, :4].copy().view("<u4").reshape(-1)
    raw = np.zeros((len(a), 8), np.uint8)
    raw[:, :sa] = a[:, 4:4 + sa]
    addr = raw.view("<u8").reshape(-1)[seq > 0]
    if len(addr) == 0:
        return None
    # Neighbouring rows mostly share a collection: drop repeats before sorting.
    keep = np.ones(len(addr), bool)
    keep[1:] = addr[1:] != addr[:-1]
    addrs = np.unique(addr[keep])[:MAX_COLLECTIONS]
    # Heap addresses count from the base address (after a user block).
    addrs = addrs[addrs <= np.uint64(eof)].astype(np.int64) + base
    return fd, addrs, ss, eof


def heap_ids(ds, fd, start, n, idsz, strict=False):
    """The heap IDs of rows start..start+n of a contiguous or chunked
    dataset, as bytes, or None (other layouts; a contiguous dataset with
    no space or shorter than asked). `strict`: see `_chunk_ids`."""
    dcpl = ds.id.get_create_plist()
    layout = dcpl.get_layout()
    if layout == h5py.h5d.CONTIGUOUS:
        off = ds.id.get_offset()
        if off is None:
            return None
        ids = os.pread(fd, n * idsz, off + start * idsz)
        return ids if len(ids) == n * idsz else None
    if layout == h5py.h5d.CHUNKED:
        return _chunk_ids(ds, dcpl, start, n, idsz, strict)
    return None


def _chunk_ids(ds, dcpl, start, n, idsz, strict=False):
    """The heap IDs of rows start..start+n of a chunked 1-D dataset, as bytes
    (rows of chunks that cannot be read are left out; with `strict`, such a
    chunk makes the answer None), or None."""
    if ds.ndim != 1 or not ds.chunks:
        return None
    c = int(ds.chunks[0])
    if c <= 0:
        return None
    nfilters = dcpl.get_nfilters()
    raw_len = c * idsz
    last = start + max(n, 1) - 1
    out = []
    scratch = None
    for k in range(start // c, last // c + 1):
        info = ds.id.get_chunk_info_by_coord((k * c,))
        if info.byte_offset is None or info.size is None:
            if strict:
                return None
            continue
        # Stored sizes are bounded by the raw size (plus what a filter may
        # add to incompressible data).
        if info.size > 2 * raw_len + (1 << 16):
            if strict:
                return None
            continue
        mask, buf = ds.id.read_direct_chunk((k * c,))
        if nfilters == 0 or all(mask & (1 << i) for i in range(min(nfilters, 32))):
            plain = buf if len(buf) == raw_len else None
        else:
            if scratch is None:
                scratch = _Unfilter(dcpl, c, idsz)
            plain = scratch.run(buf, mask)
            if plain is not None and len(plain) != raw_len:
                plain = None
        if plain is None:
            if strict:
                return None
            continue
        lo = max(start, k * c) - k * c
        hi = min(last + 1, k * c + c) - k * c
        out.append(bytes(plain[lo * idsz:hi * idsz]))
    return b"".join(out)


class _Unfilter:
    """One-chunk datasets in a scratch in-memory file with the source's
    filters and an opaque element type of one heap ID: a filtered chunk
    written there with `write_direct_chunk` reads back through HDF5's own
    filter pipeline (no heap is read). A chunk's filter mask (filters its
    writer skipped, e.g. an optional shuffle HDF5 could not set up for
    variable-length strings) selects a dataset with only the filters that
    ran: HDF5 runs the whole pipeline on a read whatever mask a direct
    write gave."""

    def __init__(self, src_dcpl, rows, idsz):
        self.rows, self.idsz, self.made = rows, idsz, {}
        self.filters = [src_dcpl.get_filter(i)[:3] for i in range(src_dcpl.get_nfilters())]
        self.file = None

    def _dataset(self, mask):
        if mask in self.made:
            return self.made[mask]
        got = None
        try:
            if self.file is None:
                name = f"h5vec-gheap-{os.getpid()}-{next(_scratch)}.h5"
                self.file = h5py.File(name, "w", driver="core", backing_store=False)
                self.tid = h5py.h5t.create(h5py.h5t.OPAQUE, self.idsz)
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk((self.rows,))
            for i, (code, flags, values) in enumerate(self.filters):
                if not (i < 32 and mask & (1 << i)):
                    dcpl.set_filter(code, flags, tuple(values))
            space = h5py.h5s.create_simple((self.rows,))
            ds = h5py.h5d.create(self.file.id, f"c{len(self.made)}".encode(), self.tid, space, dcpl=dcpl)
            got = ds, np.empty(self.rows, dtype=f"V{self.idsz}")
        except (OSError, RuntimeError, ValueError, TypeError, KeyError):
            pass
        if len(self.made) < 64:
            self.made[mask] = got
        return got

    def run(self, stored, mask):
        made = self._dataset(mask)
        if made is None:
            return None
        ds, out = made
        try:
            ds.write_direct_chunk((0,), stored, 0)
            ds.read(h5py.h5s.ALL, h5py.h5s.ALL, out, mtype=self.tid)
        except (OSError, RuntimeError, ValueError, TypeError, KeyError):
            return None
        return out.tobytes()


def _walk_all(fd, addrs, ss, eof):
    """(collection address, offset in it, why) of the first damaged
    collection among `addrs`, or None."""
    hdr = _align8(8 + ss)
    objhdr = _align8(8 + ss)
    whole, big = [], []
    for addr in addrs.tolist():
        head = os.pread(fd, hdr, addr)
        if len(head) != hdr or head[:4] != b"GCOL" or head[4] != 1:
            continue
        size = int.from_bytes(head[8:8 + ss], "little")
        if size < hdr or addr + size > eof:
            continue
        (whole if size <= READ_WHOLE else big).append((addr, size))
    for addr, size in big:
        bad = _walk_one(lambda at, n: os.pread(fd, n, addr + at), addr, size, ss, hdr, objhdr)
        if bad is not None:
            return bad
    batch, nbytes = [], 0
    for addr, size in whole + [(None, 0)]:
        if addr is None or nbytes + size > BATCH_BYTES:
            bad = _walk_batch(fd, batch, ss, hdr, objhdr)
            if bad is not None:
                return bad
            batch, nbytes = [], 0
        if addr is not None:
            batch.append((addr, size))
            nbytes += size
    return None


def _walk_one(read, addr, size, ss, hdr, objhdr, p=None, steps=0):
    """Walks one collection as `H5HG__cache_heap_deserialize` does (from
    offset `p`, after `steps` objects); `read(at, n)` gives its bytes."""
    p = hdr if p is None else p
    limit = size // objhdr + 2
    while p < size:
        if p + objhdr > size:
            break
        steps += 1
        if steps > limit:
            return addr, p, "is one of more objects than the collection can hold"
        o = read(p, objhdr)
        if len(o) != objhdr:
            return None
        idx = o[0] | (o[1] << 8)
        osize = int.from_bytes(o[8:8 + ss], "little")
        need = _align8(osize) + objhdr if idx > 0 else osize
        if need == 0:
            return addr, p, "is free space of size 0 (HDF5 would loop on it forever)"
        if need > size - p:
            return addr, p, f"claims {osize} bytes, past the collection's end"
        p += need
    return None


def _walk_batch(fd, batch, ss, hdr, objhdr):
    """Walks the collections of `batch` (each read whole) together. The step
    (`need`) of an object header at every 8-aligned offset is computed for
    the whole buffer at once; the walk then follows each collection's chain
    with one gather per object, across every collection still being
    walked. A collection the fast walk cannot follow (an object not on the
    8-byte grid) or flags as damaged is walked again one object at a time,
    which gives the exact finding; the last few are finished that way too."""
    if not batch or hdr != 16 or objhdr != 16:
        return _walk_each(fd, batch, ss, hdr, objhdr)
    bufs = [os.pread(fd, size, addr) for addr, size in batch]
    if any(len(b) != s for b, (_, s) in zip(bufs, batch)):
        return None
    size = np.array([s for _, s in batch], np.int64)
    span = (size + 7) & ~7
    base = np.zeros(len(batch), np.int64)
    np.cumsum(span[:-1], out=base[1:])
    buf = np.zeros(int(span.sum()) + 16, np.uint8)
    for b, at in zip(bufs, base.tolist()):
        buf[at:at + len(b)] = np.frombuffer(b, np.uint8)
    words = buf.view("<u8")
    idx = words[:-1] & np.uint64(0xFFFF)
    osize = words[1:] & np.uint64((1 << (8 * ss)) - 1)
    # Sizes past any collection are clamped (they are flagged below anyway).
    small = np.minimum(osize, np.uint64(1 << 40)).astype(np.int64)
    need = np.where(idx > 0, ((small + 7) & ~7) + objhdr, small)
    del idx, osize, small
    # Steps the fast walk does not take (free space smaller than an object
    # header or off the 8-byte grid, size 0 among them) become a jump past
    # every collection: the collection is then walked one object at a time.
    need[(need < objhdr) | ((need & 7) != 0)] = 1 << 50
    # Each collection's position and end (bytes in `buf`), for the ones
    # still walked (`ids`); a step moves every one by its object's size.
    ids = np.arange(len(batch))
    pos = base + hdr
    end = base + size
    keep = pos + objhdr <= end
    ids, pos, end = ids[keep], pos[keep], end[keep]
    slow = []
    while len(ids) > 16:
        pos = pos + need[pos >> 3]
        stop = pos + objhdr > end
        if stop.any():
            slow.extend(ids[stop & (pos > end)].tolist())
            go = ~stop
            ids, pos, end = ids[go], pos[go], end[go]
    slow = set(slow)
    rest = {int(j): int(q) for j, q in zip(ids.tolist(), pos.tolist())}
    for j in sorted(slow | set(rest)):
        b0 = int(base[j])
        start = rest[j] - b0 if j in rest else None
        bad = _walk_one(lambda at, n: buf[b0 + at:b0 + at + n].tobytes(), int(batch[j][0]), int(size[j]), ss,
                        hdr, objhdr, start, 0 if start is None else (start - hdr) // objhdr)
        if bad is not None:
            return bad
    return None


def _walk_each(fd, batch, ss, hdr, objhdr):
    for addr, size in batch:
        bad = _walk_one(lambda at, n: os.pread(fd, n, addr + at), addr, size, ss, hdr, objhdr)
        if bad is not None:
            return bad
    return None


# ---------------------------------------------------------------------------
# Attributes: the heap IDs of a variable-length string attribute live in its
# attribute message, in the object header. HDF5 reads an attribute only
# through its heap (there is no raw read), so the message is found here from
# the file's bytes: object header version 1 or 2, continuation chunks
# followed; attributes in dense storage, shared datatypes or dataspaces and
# anything that does not parse are left to HDF5.

# Most object header chunks, and bytes per chunk, looked at.
MAX_HEADER_CHUNKS = 64
MAX_HEADER_CHUNK = 1 << 20
ATTRIBUTE_MSG = 0x000C
CONTINUATION_MSG = 0x0010


def guard_attr(obj, name, path):
    """Checks the collections variable-length string attribute `name` of
    `obj` points to, before HDF5 reads it; a damaged collection HDF5 would
    loop on is a `FormatError` naming `path`, `obj` and the attribute."""
    try:
        t = obj.attrs.get_id(name).get_type()
        if not (t.get_class() == h5py.h5t.STRING and t.is_variable_str()):
            return
        found = _attr_collections(obj, name.encode("utf-8"))
        if found is None:
            return
        bad = _walk_all(*found)
    except (OSError, RuntimeError, ValueError, TypeError, KeyError, struct.error):
        return
    if bad is not None:
        addr, at, why = bad
        raise FormatError(path, obj.name, f"attribute {name}: damaged global heap collection at byte {addr} "
                                          f"of the file: the object at byte {addr + at} {why}")


def _le(b, at, n):
    if at < 0 or at + n > len(b):
        raise ValueError("past the end")
    return int.from_bytes(b[at:at + n], "little")


def _attr_collections(obj, want):
    view = _file_view(obj.file)
    if view is None:
        return None
    fd, sa, ss, base, eof = view
    data = None
    for msg in _messages(fd, h5py.h5o.get_info(obj.id).addr + base, base, sa, ss):
        data = _attr_data(msg, want)
        if data is not None:
            break
    if data is None:
        return None
    idsz = 8 + sa
    addrs = set()
    for k in range(0, len(data) - idsz + 1, idsz):
        if _le(data, k, 4) > 0:
            addrs.add(_le(data, k + 4, sa))
    addrs = sorted(a + base for a in addrs if a <= eof)[:MAX_COLLECTIONS]
    return fd, np.array(addrs, np.int64), ss, eof


def _messages(fd, addr, base, sa, ss):
    """(type, bytes) of each message of the object header at `addr`."""
    head = os.pread(fd, 16, addr)
    if len(head) < 16:
        return
    if head[:4] == b"OHDR":
        if head[4] != 2:
            return
        flags = head[5]
        p = 6 + (16 if flags & 0x20 else 0) + (4 if flags & 0x10 else 0)
        width = 1 << (flags & 3)
        more = os.pread(fd, p + width, addr)
        chunks = [(addr + p + width, _le(more, p, width), 0)]
        mhdr = 6 if flags & 0x04 else 4
    elif head[0] == 1:
        chunks = [(addr + 16, _le(head, 8, 4), 0)]
        mhdr, flags = 8, None
    else:
        return
    seen = 0
    while chunks and seen < MAX_HEADER_CHUNKS:
        at, size, skip = chunks.pop(0)
        seen += 1
        if size > MAX_HEADER_CHUNK:
            continue
        b = os.pread(fd, size, at)[skip:]
        if flags is not None:
            b = b[:-4]  # the checksum
        off = 0
        while off + mhdr <= len(b):
            if flags is None:
                mtype, msize = _le(b, off, 2), _le(b, off + 2, 2)
            else:
                mtype, msize = b[off], _le(b, off + 1, 2)
            body = b[off + mhdr:off + mhdr + msize]
            off += mhdr + msize
            if mtype == CONTINUATION_MSG and len(body) >= sa + ss:
                caddr, clen = _le(body, 0, sa) + base, _le(body, sa, ss)
                # Version 2 continuation chunks start with "OCHK".
                chunks.append((caddr, clen, 0 if flags is None else 4))
            elif mtype == ATTRIBUTE_MSG:
                yield body


def _attr_data(m, want):
    """The data bytes of attribute message `m` if it is the attribute named
    `want` with a variable-length string type, else None."""
    if len(m) < 8:
        return None
    version = m[0]
    if version not in (1, 2, 3):
        return None
    if version > 1 and m[1] & 0x03:
        return None  # a shared datatype or dataspace
    nsize, tsize, ssize = _le(m, 2, 2), _le(m, 4, 2), _le(m, 6, 2)
    pad = _align8 if version == 1 else (lambda x: x)
    p = 9 if version == 3 else 8
    name = m[p:p + nsize].split(b"\0", 1)[0]
    if name != want:
        return None
    p += pad(nsize)
    dt = m[p:p + tsize]
    # Class 9 (variable-length), type 1 (string).
    if len(dt) < 8 or dt[0] & 0x0F != 9 or dt[1] & 0x0F != 1:
        return None
    p += pad(tsize) + pad(ssize)
    return m[p:]
