"""Variable-length strings read from the file's bytes into (offsets, data),
without a Python object per row (SPEC.md section 7, "Reading variable-length
strings").

h5py reads a variable-length string dataset into one Python `bytes` per row,
which costs about 0.5 us a row before anything else happens. This module
reads the same bytes as HDF5 does, from the places HDF5 reads them:

1. the rows' 16-byte heap IDs (a 4-byte length, the collection's address,
   a 4-byte object index), from a contiguous dataset or from its chunks
   (filtered chunks through HDF5's own filters, as `_gheap` does);
2. each global heap collection those IDs name, read whole, and its object
   headers walked as `H5HG__cache_heap_deserialize` does (index, size, data
   8-byte aligned after a 16-byte header; index 0 is free space);
3. each row's object, which HDF5 returns only when its size is exactly the
   row's length (`H5VL__native_blob_get`); a row whose collection address
   is 0 is a null pointer, which HDF5 (and h5py) read as an empty string.

Anything that is not exactly that (a file not opened read-only, another
driver, a chunk missing or unreadable, an ID naming no object, a size that
differs, a duplicated index, an object off the 8-byte grid, more
collections or bytes than the caps) returns None: the caller then reads
through HDF5 as before, after `_gheap.guard`, so an error is HDF5's own and
a collection HDF5 would loop on is still refused. The result is therefore
either the bytes HDF5 would give, or HDF5 reads.
"""

import os

import h5py
import numpy as np

from . import _columns, _gheap

# Rows whose IDs are read and resolved together (fewer when their
# collections hold more than MAX_HEAP_BYTES).
BLOCK_ROWS = 1 << 20
MIN_BLOCK_ROWS = 1 << 10
# Most bytes of collections read for one block: the walk keeps one int64
# per 8 bytes of them.
MAX_HEAP_BYTES = 64 << 20
# A block whose collections are larger than MAX_HEAP_BYTES.
_TOO_BIG = "too big"
# Collections closer than this are read with one call.
MERGE_GAP = 64 << 10
# Smallest collection HDF5 writes (H5HG_MINSIZE): what a run reads past its
# last collection's start before that collection's header gives its size.
MIN_COLLECTION = 4096


def read_strings(ds, start, stop):
    """(offsets int64 of n + 1, data uint8) of rows `start..stop` of the 1-D
    variable-length string dataset `ds`, or None when HDF5 must read them."""
    if stop <= start or ds.ndim != 1 or not _gheap.is_vlen_str(ds):
        return None
    try:
        # Only a file no one in this process writes: its bytes on disk are
        # what HDF5 reads (an open writer may hold collections unflushed).
        if ds.file.mode != "r":
            return None
        view = _gheap._file_view(ds.file)
        if view is None:
            return None
        offsets, datas = [np.zeros(1, np.int64)], []
        total = 0
        a, rows = start, BLOCK_ROWS
        while a < stop:
            b = min(stop, a + rows)
            got = _block(ds, view, a, b)
            if got is _TOO_BIG:
                if b - a <= MIN_BLOCK_ROWS:
                    return None
                rows = max(MIN_BLOCK_ROWS, (b - a) // 2)
                continue
            if got is None:
                return None
            off, data = got
            offsets.append(off[1:] + total)
            datas.append(data)
            total += len(data)
            a = b
    except (OSError, RuntimeError, ValueError, TypeError, KeyError, IndexError, OverflowError):
        return None
    data = datas[0] if len(datas) == 1 else np.concatenate(datas)
    return np.concatenate(offsets), data


def _block(ds, view, a, b):
    fd, sa, ss, base, eof = view
    if ss > 8:
        return None
    idsz = 8 + sa
    n = b - a
    ids = _gheap.heap_ids(ds, fd, a, n, idsz, strict=True)
    if ids is None or len(ids) != n * idsz:
        return None
    raw = np.frombuffer(ids, np.uint8).reshape(n, idsz)
    seq = raw[:, :4].copy().view("<u4").reshape(-1).astype(np.int64)
    wide = np.zeros((n, 8), np.uint8)
    wide[:, :sa] = raw[:, 4:4 + sa]
    addr = wide.view("<u8").reshape(-1)
    index = raw[:, 4 + sa:8 + sa].copy().view("<u4").reshape(-1).astype(np.int64)
    live = addr != 0
    # A null pointer with a length: HDF5's size check fails; let it say so.
    if (seq[~live] != 0).any():
        return None
    out_off = np.zeros(n + 1, np.int64)
    np.cumsum(seq, out=out_off[1:])
    if not live.any():
        return out_off, np.zeros(0, np.uint8)
    colls = np.unique(addr[live])
    if len(colls) > _gheap.MAX_COLLECTIONS or int(colls[-1]) > eof:
        return None
    found = _objects(fd, colls.astype(np.int64) + base, ss, eof)
    if found is None or found is _TOO_BIG:
        return found
    buf, keys, begin, size = found
    # Each live row's object: its collection's rank among `colls`, its index.
    want = np.searchsorted(colls, addr[live]).astype(np.int64) * 65536 + index[live]
    at = np.searchsorted(keys, want)
    at[at >= len(keys)] = 0
    if len(keys) == 0 or (keys[at] != want).any() or (index[live] > 0xFFFF).any():
        return None
    if (size[at] != seq[live]).any():
        return None
    pa = _pyarrow()
    if pa is not None:
        return _take(pa, buf, begin, size, at, live, n)
    src = np.zeros(n, np.int64)
    src[live] = begin[at]
    return out_off, _gather(buf, src, seq, out_off)


def _pyarrow():
    pa = _columns._pyarrow()
    if pa is not None:
        import pyarrow.compute  # noqa: F401 (pa.compute.take)
    return pa


def _take(pa, buf, begin, size, at, live, n):
    """The rows' bytes by Arrow's `take` (C++) from a binary array whose
    even elements are the objects in buffer order and odd ones what lies
    between them; the last element is empty (the null pointers' rows)."""
    order = np.argsort(begin, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    b = begin[order]
    bounds = np.empty(2 * len(b) + 2, np.int64)
    bounds[0:-2:2] = b
    bounds[1:-2:2] = b + size[order]
    bounds[-2:] = bounds[-3]
    # Objects of one walk never overlap; collections that overlap in the file
    # could make them (a hostile file): not an array Arrow may take from.
    if (bounds[1:] < bounds[:-1]).any():
        return None
    objs = _columns.arrow_strings(pa, bounds, buf, binary=True)
    pick = np.full(n, len(bounds) - 2, np.int64)
    pick[live] = 2 * rank[at]
    got = pa.compute.take(objs, pa.array(pick))
    _, offs, data = got.buffers()
    off = np.frombuffer(offs, np.int64, n + 1, got.offset * 8)
    lo, hi = int(off[0]), int(off[-1])
    if data is None or hi == lo:
        return off - lo, np.zeros(0, np.uint8)
    # Read-only views of Arrow's buffers (numpy keeps them alive).
    return off - lo, np.frombuffer(data, np.uint8, hi - lo, lo)


def _runs(addrs):
    """Splits sorted collection addresses into runs read with one call."""
    cut = np.flatnonzero(np.diff(addrs) > MERGE_GAP) + 1
    return np.split(addrs, cut)


def _objects(fd, addrs, ss, eof):
    """The objects of the collections at sorted file offsets `addrs`:
    (buffer, sorted keys rank * 65536 + index, data offset in the buffer,
    size), None, or _TOO_BIG. Collections are laid end to end in the buffer
    at 8-byte aligned offsets."""
    hdr = 16
    magic = np.frombuffer(b"GCOL\x01", np.uint8)
    segs, starts, sizes = [], [], []
    at, total = 0, 0
    for run in _runs(addrs):
        first = int(run[0])
        rel = run.astype(np.int64) - first
        want = int(rel[-1]) + MIN_COLLECTION
        if total + want > MAX_HEAP_BYTES:
            return _TOO_BIG
        b = np.frombuffer(os.pread(fd, min(want, max(0, eof - first)), first), np.uint8)
        if int(rel[-1]) + hdr > len(b):
            return None
        heads = b[rel[:, None] + np.arange(hdr)]
        if not (heads[:, :5] == magic).all():
            return None
        wide = np.zeros((len(rel), 8), np.uint8)
        wide[:, :ss] = heads[:, 8:8 + ss]
        size = wide.view("<u8").reshape(-1)
        if (size < hdr).any() or (size > np.uint64(eof)).any():
            return None
        size = size.astype(np.int64)
        if (run.astype(np.int64) + size > eof).any():
            return None
        end = int((rel + size).max())
        if end > len(b):
            if total + end > MAX_HEAP_BYTES:
                return _TOO_BIG
            b = np.frombuffer(os.pread(fd, end, first), np.uint8)
            if len(b) != end:
                return None
        # Collections whose offsets agree modulo 8 share one copy into the
        # buffer (their headers must land on its 8-byte grid).
        cut = np.flatnonzero(np.diff(rel % 8) != 0) + 1
        for sub in np.split(np.arange(len(rel)), cut):
            lo = int(rel[sub[0]])
            hi = int((rel[sub] + size[sub]).max())
            segs.append((b[lo:hi], at))
            starts.append(at + rel[sub] - lo)
            sizes.append(size[sub])
            total += hi - lo
            at += (hi - lo + 7) & ~7
        if total > MAX_HEAP_BYTES:
            return _TOO_BIG
    buf = np.zeros(at + hdr, np.uint8)
    for seg, s0 in segs:
        buf[s0:s0 + len(seg)] = seg
    del segs
    starts = np.concatenate(starts)
    ends = starts + np.concatenate(sizes)
    words = buf.view("<i8")
    # The step from an object header at each 8-aligned offset to the next:
    # the header and its data rounded up to 8 bytes, or for free space
    # (index 0) its size. Sizes are clamped to 0..2^40 (an object that
    # large is past its collection's end, which the walk finds).
    size = words[1:] & ((1 << (8 * ss)) - 1) if ss < 8 else words[1:].copy()
    np.clip(size, 0, 1 << 40, out=size)
    step = (size + hdr + 7) & ~7
    np.copyto(step, size, where=(words[:-1] & 0xFFFF) == 0)
    del size
    rank = np.arange(len(starts), dtype=np.int64)
    pos = starts + hdr
    seen_rank, seen_pos = [], []
    longest = int(ends.max() - starts.min()) // hdr + 2 if len(starts) else 0
    # Every collection walked in lockstep, one object header each per step.
    for _ in range(longest + 1):
        room = pos + hdr <= ends
        if not room.all():
            # HDF5 takes what is left when it cannot hold a header as free
            # space; a step past the end is not a collection it reads.
            if (pos > ends).any():
                return None
            rank, pos, ends = rank[room], pos[room], ends[room]
            if not len(pos):
                break
        seen_rank.append(rank)
        seen_pos.append(pos)
        pos = pos + step[pos >> 3]
    else:
        # More steps than objects fit: a step of 0 (free space of size 0,
        # which HDF5 loops on) or of less than a header.
        return None
    if not seen_pos:
        return buf, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    at = np.concatenate(seen_pos)
    # Every step taken is one a valid collection has: at least a header,
    # on the 8-byte grid (free space is the only step that can miss).
    taken = step[at >> 3]
    if ((taken < hdr) | ((taken & 7) != 0)).any():
        return None
    del step, taken
    r = np.concatenate(seen_rank)
    w = at >> 3
    idx = words[w] & 0xFFFF
    obj = idx > 0
    keys = r[obj] * 65536 + idx[obj]
    begin = at[obj] + hdr
    osize = words[w[obj] + 1]
    if ss < 8:
        osize = osize & ((1 << (8 * ss)) - 1)
    order = np.argsort(keys, kind="stable")
    keys, begin, osize = keys[order], begin[order], osize[order]
    # An index used twice in one collection: HDF5 keeps the last one; not
    # a file this reader guesses about.
    if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
        return None
    return buf, keys, begin, osize


def _gather(buf, src, lens, out_off):
    """Concatenates buf[src[i] : src[i] + lens[i]] for every row."""
    total = int(out_off[-1])
    out = np.empty(total, np.uint8)
    if total == 0:
        return out
    n = len(lens)
    # Rows in blocks of about 16 MiB of output: the index arrays stay small.
    step = 1 << 24
    r0 = 0
    while r0 < n:
        r1 = int(np.searchsorted(out_off, out_off[r0] + step, side="left"))
        r1 = min(n, max(r1, r0 + 1))
        o0, o1 = int(out_off[r0]), int(out_off[r1])
        if o1 > o0:
            ln = lens[r0:r1]
            shift = np.repeat(src[r0:r1] - out_off[r0:r1], ln)
            out[o0:o1] = buf[shift + np.arange(o0, o1)]
        r0 = r1
    return out
