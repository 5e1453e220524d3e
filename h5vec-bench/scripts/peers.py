"""Python peers of compare.sh (this directory): h5py (columns, variable-length types) and
pyarrow Parquet (snappy, zstd), on the data the Rust side generated.

    python3 h5vec-bench/scripts/peers.py <impl> <w1|w2> <data_dir> <out_file> [--warmup 1] [--reps 1] [--pass K]

impl: h5py-cols | h5py-vlen (W2 only) | parquet-snappy | parquet-zstd

The input comes from `export_data` (canonical numpy columns, see
h5vec-bench/src/bin/export_data.rs), loaded and turned into each peer's
input form untimed. Prints one JSON line per measured phase (write, read).

Method (as in shared/bench/peers): every timed phase starts from cold
memory: run under GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 (set by
compare.sh), and gc.collect() + malloc_trim(0) untimed before each phase.
Peak memory = VmHWM growth over the phase after resetting it through
/proc/self/clear_refs. write = in-memory input -> file closed (no fsync);
read = open -> native structure (numpy arrays / Python lists / Arrow Table).
Verification (untimed): what was read back, as canonical columns, equals
the input column by column.
"""

import argparse
import ctypes
import gc
import json
import os
import sys
import time

import numpy as np

try:
    _LIBC = ctypes.CDLL("libc.so.6")
except OSError:
    _LIBC = None


def trim_heap():
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _status_bytes(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return None


def measure(fn, *args):
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        rss0 = _status_bytes("VmRSS:")
    except OSError:
        rss0 = None
    c0 = time.process_time()
    t = time.perf_counter()
    r = fn(*args)
    dt = time.perf_counter() - t
    cpu = time.process_time() - c0
    peak = None
    if rss0 is not None:
        peak = max(0, _status_bytes("VmHWM:") - rss0)
    return dt, cpu, peak, r


W1_KEYS = ["weeks", "microseconds", "temperature", "position"]
W2_KEYS = ["id", "name_off", "name_bytes", "tags_off", "tag_char_off", "tag_chars",
           "values_off", "values"]


def load_cols(data_dir, wl):
    keys = W1_KEYS if wl == "w1" else W2_KEYS
    return {k: np.load(os.path.join(data_dir, f"{wl}_{k}.npy")) for k in keys}


def same_cols(a, b):
    return set(a) == set(b) and all(
        a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)


def offsets(lens):
    out = np.zeros(len(lens) + 1, np.uint64)
    np.cumsum(lens, out=out[1:])
    return out


# ---------------------------------------------------------------------------
# h5py columns (same layout as the hand-written Rust columnar writer)
# ---------------------------------------------------------------------------

def h5py_cols(wl, cols):
    import h5py
    prefix = "v/data/"
    if wl == "w1":
        paths = {"weeks": "timestamp/weeks/values", "microseconds": "timestamp/microseconds/values",
                 "temperature": "temperature/values", "position": "position/values"}
    else:
        paths = {"id": "id/values", "name_off": "name/OFFSETS", "name_bytes": "name/CHARS",
                 "tags_off": "tags/OFFSETS", "tag_char_off": "tags/VALUES/OFFSETS",
                 "tag_chars": "tags/VALUES/CHARS", "values_off": "values/OFFSETS",
                 "values": "values/VALUES"}

    def write(path):
        with h5py.File(path, "w") as f:
            for k, p in paths.items():
                f.create_dataset(prefix + p, data=cols[k])
            f.create_dataset("v/metadata/count", data=np.int64(len(cols[W1_KEYS[0] if wl == "w1" else "id"])))

    def read(path):
        with h5py.File(path, "r") as f:
            n = int(f["v/metadata/count"][()])
            out = {k: f[prefix + p][...] for k, p in paths.items()}
        assert len(out["weeks" if wl == "w1" else "id"]) == n
        return out

    return write, read, lambda back: same_cols(back, cols)


# ---------------------------------------------------------------------------
# h5py variable-length types (W2)
# ---------------------------------------------------------------------------

def h5py_vlen(wl, c):
    import h5py
    if wl != "w2":
        return None
    str_dt = h5py.string_dtype()
    tags_dt = h5py.vlen_dtype(h5py.string_dtype())
    vals_dt = h5py.vlen_dtype(np.float32)
    n = len(c["id"])
    nb, no = c["name_bytes"].tobytes(), c["name_off"].tolist()
    names = np.empty(n, dtype=object)
    names[:] = [nb[no[i]:no[i + 1]].decode() for i in range(n)]
    tb, to = c["tag_chars"].tobytes(), c["tag_char_off"].tolist()
    flat = [tb[to[j]:to[j + 1]].decode() for j in range(len(to) - 1)]
    tofs = c["tags_off"].tolist()
    tags = np.empty(n, dtype=object)
    for i in range(n):
        a = np.empty(tofs[i + 1] - tofs[i], dtype=object)
        a[:] = flat[tofs[i]:tofs[i + 1]]
        tags[i] = a
    values = np.empty(n, dtype=object)
    values[:] = np.split(c["values"], c["values_off"][1:-1].astype(np.int64))
    ids = c["id"]

    def write(path):
        with h5py.File(path, "w") as f:
            f.create_dataset("v/data/id/values", data=ids)
            f.create_dataset("v/data/name/values", data=names, dtype=str_dt)
            f.create_dataset("v/data/tags/values", data=tags, dtype=tags_dt)
            f.create_dataset("v/data/values/values", data=values, dtype=vals_dt)
            f.create_dataset("v/metadata/count", data=np.int64(n))

    def read(path):
        with h5py.File(path, "r") as f:
            cnt = int(f["v/metadata/count"][()])
            ids_b = f["v/data/id/values"][...]
            names_b = f["v/data/name/values"].asstr()[...].tolist()
            tags_b = [[t.decode() for t in row] for row in f["v/data/tags/values"][...]]
            values_b = list(f["v/data/values/values"][...])
        assert len(ids_b) == cnt
        return ids_b, names_b, tags_b, values_b

    def verify(back):
        ids_b, names_b, tags_b, values_b = back
        name_enc = [s.encode() for s in names_b]
        flat_b = [t.encode() for row in tags_b for t in row]
        cols = dict(
            id=ids_b,
            name_off=offsets(np.fromiter(map(len, name_enc), np.int64, n)),
            name_bytes=np.frombuffer(b"".join(name_enc), np.uint8),
            tags_off=offsets(np.fromiter(map(len, tags_b), np.int64, n)),
            tag_char_off=offsets(np.fromiter(map(len, flat_b), np.int64, len(flat_b))),
            tag_chars=np.frombuffer(b"".join(flat_b), np.uint8),
            values_off=offsets(np.fromiter(map(len, values_b), np.int64, n)),
            values=np.concatenate(values_b).astype(np.float32) if n else np.zeros(0, np.float32))
        return same_cols(cols, c)

    return write, read, verify


# ---------------------------------------------------------------------------
# pyarrow Parquet
# ---------------------------------------------------------------------------

def _i32(off):
    import pyarrow as pa
    assert int(off[-1]) < 2**31
    return pa.array(off.astype(np.int32))


def arrow_table(wl, c):
    import pyarrow as pa
    if wl == "w1":
        ts = pa.StructArray.from_arrays([pa.array(c["weeks"]), pa.array(c["microseconds"])],
                                        names=["weeks", "microseconds"])
        pos = pa.FixedSizeListArray.from_arrays(pa.array(c["position"].ravel()), 3)
        return pa.table({"timestamp": ts, "temperature": pa.array(c["temperature"]),
                         "position": pos})
    n = len(c["id"])
    name = pa.StringArray.from_buffers(n, _i32(c["name_off"]).buffers()[1],
                                       pa.py_buffer(c["name_bytes"]))
    tag_str = pa.StringArray.from_buffers(len(c["tag_char_off"]) - 1,
                                          _i32(c["tag_char_off"]).buffers()[1],
                                          pa.py_buffer(c["tag_chars"]))
    tags = pa.ListArray.from_arrays(_i32(c["tags_off"]), tag_str)
    values = pa.ListArray.from_arrays(_i32(c["values_off"]), pa.array(c["values"]))
    return pa.table({"id": pa.array(c["id"]), "name": name, "tags": tags, "values": values})


def _str_parts(arr):
    off = np.frombuffer(arr.buffers()[1], np.int32, len(arr) + 1, arr.offset * 4).astype(np.int64)
    buf = arr.buffers()[2]
    data = np.frombuffer(buf, np.uint8) if buf is not None else np.zeros(0, np.uint8)
    return (off - off[0]).astype(np.uint64), data[off[0]:off[-1]]


def table_cols(wl, table):
    t = table.combine_chunks()
    if wl == "w1":
        weeks, micros = t.column("timestamp").chunk(0).flatten()
        return dict(weeks=weeks.to_numpy(), microseconds=micros.to_numpy(),
                    temperature=t.column("temperature").to_numpy(),
                    position=t.column("position").chunk(0).flatten().to_numpy().reshape(-1, 3))
    name_off, name_bytes = _str_parts(t.column("name").chunk(0))
    tags = t.column("tags").chunk(0)
    tag_off, tag_chars = _str_parts(tags.flatten())
    values = t.column("values").chunk(0)
    toff = tags.offsets.to_numpy().astype(np.int64)
    voff = values.offsets.to_numpy().astype(np.int64)
    return dict(id=t.column("id").to_numpy(), name_off=name_off, name_bytes=name_bytes,
                tags_off=(toff - toff[0]).astype(np.uint64), tag_char_off=tag_off,
                tag_chars=tag_chars, values_off=(voff - voff[0]).astype(np.uint64),
                values=values.flatten().to_numpy())


def parquet(codec):
    def make(wl, cols):
        import pyarrow.parquet as pq
        table = arrow_table(wl, cols)
        assert same_cols(table_cols(wl, table), cols), "Arrow conversion is not faithful"
        return (lambda p: pq.write_table(table, p, compression=codec),
                lambda p: pq.read_table(p),
                lambda back: same_cols(table_cols(wl, back), cols))
    return make


IMPLS = {
    "h5py-cols": h5py_cols,
    "h5py-vlen": h5py_vlen,
    "parquet-snappy": parquet("snappy"),
    "parquet-zstd": parquet("zstd"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("impl", choices=IMPLS)
    ap.add_argument("workload", choices=["w1", "w2"])
    ap.add_argument("data_dir")
    ap.add_argument("out_file")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--pass", dest="pass_label", type=int, default=0)
    a = ap.parse_args()
    with open(os.path.join(a.data_dir, "meta.json")) as f:
        meta = json.load(f)
    cols = load_cols(a.data_dir, a.workload)
    made = IMPLS[a.impl](a.workload, cols)
    if made is None:
        sys.exit(f"{a.impl} does not support {a.workload}")
    write, read, verify = made
    n = meta["rows"]
    payload = meta[f"{a.workload}_payload_bytes"]
    input_bytes = sum(v.nbytes for v in cols.values())
    for rep in range(-a.warmup, a.reps):
        if os.path.exists(a.out_file):
            os.remove(a.out_file)
        trim_heap()
        ws, wc, wp, _ = measure(write, a.out_file)
        size = os.path.getsize(a.out_file)
        trim_heap()
        rs, rc, rp, back = measure(read, a.out_file)
        ok = bool(verify(back))
        del back
        os.remove(a.out_file)
        if not ok:
            sys.exit(f"{a.impl} {a.workload}: read-back differs from the input")
        if rep < 0:
            continue
        for phase, s, c, p in (("write", ws, wc, wp), ("read", rs, rc, rp)):
            print(json.dumps({
                "impl": "py-" + a.impl, "workload": a.workload, "n": n, "phase": phase,
                "pass": a.pass_label, "rep": rep, "seconds": round(s, 6),
                "cpu_seconds": round(c, 6), "bytes_on_disk": size, "payload_bytes": payload,
                "input_bytes": input_bytes, "peak_rss_delta_bytes": p, "verified": ok}),
                flush=True)


if __name__ == "__main__":
    main()
