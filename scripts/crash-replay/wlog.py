"""Reads the write logs of wtrace.c: records 'W' (pwrite: offset, data),
'T' (ftruncate: length), 'S'/'E' (process start/end), each with the
CLOCK_MONOTONIC times (ns) before and after the call."""
import struct
def read_log(path):
    """Returns (writes, t_start, t_end); writes: list of (kind, off, data, t0, t1)."""
    data = open(path, 'rb').read()
    i = 0; recs = []; ts = te = None
    while i < len(data):
        k = data[i:i+1]; off, ln, t0, t1 = struct.unpack_from('<QQQQ', data, i + 1); i += 33
        if k == b'W':
            recs.append(('W', off, data[i:i+ln], t0, t1)); i += ln
        elif k == b'T':
            recs.append(('T', off, None, t0, t1))
        elif k == b'S':
            ts = ts or t0
        elif k == b'E':
            te = t0
    return recs, ts, te
def weights(recs, ts, te):
    """w[k] = time (ns) during which exactly the first k writes were done."""
    n = len(recs); w = []
    for k in range(n + 1):
        a = ts if k == 0 else recs[k-1][4]
        b = te if k == n else recs[k][3]
        w.append(max(0, b - a))
    return w
def sig(d):
    s = d[:4]
    return s.decode('latin1') if all(32 <= c < 127 for c in s) else s.hex()
