"""Dask over many files (issue 31): h5vec parts vs Parquet parts of the
same rows, on one dask.distributed.LocalCluster.

W1-like rows (SPEC's Measurement: a timestamp, a temperature, a position
x, y, z; plus `week`, the timestamp's week number, to group by), generated
on the workers as `--files` partitions of rows/files rows each and kept
in their memory (persist). Then, each `--reps` times (after one warm-up;
the order of the two sides alternates from rep to rep):

  write  h5vec.dask.to_h5vec(ddf, DIR/h5, "w1")   vs  ddf.to_parquet(DIR/pq)            (defaults both)
  mean   read_vector(DIR/h5/*.h5).temperature.mean()  vs  dd.read_parquet(DIR/pq).temperature.mean()
  count  read_vector(...).groupby("week").size()      vs  dd.read_parquet(...).groupby("week").size()

Medians (and min, max) of the wall times, their ratio (h5vec / Parquet:
<= 1.0 means h5vec is no slower), the files' sizes, and each phase's peak
worker memory: VmHWM of every worker process, reset through
/proc/self/clear_refs before the phase (Linux), the largest one reported.
Every answer is checked against the generated data.

    python3 h5vec-bench/scripts/dask_many.py --rows 20000000 --dir D [--files 8] [--reps 5]
        [--workers 2] [--jsonl FILE] [--workload w1|w2]

--workload w2: W2-like rows instead (the seed's events: an id, a name of
200, a score, a list of 0 to 3 floats; names and lists as pandas object
columns, which to_h5vec takes with schema= an Arrow schema and to_parquet
infers), the mean of `score`, and a group-by count of `name`.
"""

import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import sys
import time

import numpy as np

T0_NS = 1_767_225_600 * 10**9  # 2026-01-01
WEEK_NS = 7 * 86_400 * 10**9


def part_rows(i, n, base):
    """Partition i: rows base..base+n of the W1-like data (deterministic)."""
    import pandas as pd
    r = np.arange(base, base + n, dtype=np.int64)
    rng = np.random.default_rng(1000 + i)
    week = (r * 2654435761) % 5000
    micros = (r * 40503) % (7 * 86_400 * 10**6)
    ts = (T0_NS + week * WEEK_NS + micros * 1000).astype("M8[ns]")
    return pd.DataFrame({
        "timestamp": ts,
        "week": week.astype(np.int32),
        "temperature": np.round(rng.normal(20.0, 5.0, n), 3),
        "x": rng.random(n),
        "y": rng.random(n),
        "z": rng.random(n),
    }, index=pd.RangeIndex(base, base + n))


NAMES = np.array([f"user{k:03d}" for k in range(200)], dtype=object)


def part_rows_w2(i, n, base):
    """Partition i of the W2-like data (the seed's events): an id, a name of
    200, a score, a list of 0 to 3 numbers (deterministic)."""
    import pandas as pd
    import pyarrow as pa
    r = np.arange(base, base + n, dtype=np.int64)
    rng = np.random.default_rng(2000 + i)
    name = (r * 2654435761) % 200
    lens = r % 4
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lens, out=offsets[1:])
    vals = pa.ListArray.from_arrays(pa.array(offsets), pa.array(rng.random(int(offsets[-1]))))
    return pd.DataFrame({
        "id": r,
        "name": pd.Series(NAMES[name], dtype=object),
        "score": np.round(rng.normal(50.0, 10.0, n), 3),
        "values": vals.to_pandas(),
    }).set_axis(pd.RangeIndex(base, base + n))


def w2_schema():
    """The Arrow schema W2's object columns are written with (`to_h5vec(schema=)`)."""
    import pyarrow as pa
    return pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string(), nullable=False),
                      pa.field("score", pa.float64(), nullable=False),
                      pa.field("values", pa.list_(pa.field("item", pa.float64(), nullable=False)),
                               nullable=False)])


#: Per workload: the generator, the column averaged, the column grouped by.
WORKLOADS = {"w1": (part_rows, "temperature", "week"), "w2": (part_rows_w2, "score", "name")}


class _Gen:
    def __init__(self, n, gen=part_rows):
        self.n, self.gen = n, gen

    def __call__(self, i):
        return self.gen(i, self.n, i * self.n)


def _reset_hwm():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _hwm_mb():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def du_mb(path):
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(path, "**", "*"), recursive=True)
               if os.path.isfile(p)) / 2**20


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--jsonl")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="w1")
    args = ap.parse_args()
    gen, mean_col, key_col = WORKLOADS[args.workload]

    import dask
    import dask.dataframe as dd
    import distributed
    import pandas as pd
    import pyarrow

    import h5vec
    from h5vec.dask import read_vector, to_h5vec

    per = args.rows // args.files
    rows = per * args.files
    os.makedirs(args.dir, exist_ok=True)
    h5dir, pqdir = os.path.join(args.dir, "h5"), os.path.join(args.dir, "pq")

    # Expected answers, from the generator (untimed, in this process).
    temp_sum, counts = 0.0, {}
    for i in range(args.files):
        p = gen(i, per, i * per)
        temp_sum += float(p[mean_col].sum())
        for k, c in p[key_col].value_counts().items():
            counts[k] = counts.get(k, 0) + int(c)
    want_mean = temp_sum / rows

    with distributed.LocalCluster(processes=True, n_workers=args.workers, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        meta = gen(0, 0, 0)
        # Object columns stay objects (Dask would turn W2's lists into their text).
        with dask.config.set({"dataframe.convert-string": False}):
            ddf = dd.from_map(_Gen(per, gen), list(range(args.files)), meta=meta,
                              divisions=[i * per for i in range(args.files)] + [rows - 1],
                              label=f"{args.workload}-gen")
        ddf = ddf.persist()
        distributed.wait(ddf)
        clear_ok = all(client.run(_reset_hwm).values())

        # W2's object columns (strings, lists) say what they hold through schema=
        # (both writers take the same Arrow schema).
        extra = {"schema": w2_schema()} if args.workload == "w2" else {}

        def write_h5():
            return to_h5vec(ddf, h5dir, args.workload, overwrite=True, **extra)

        def write_pq():
            if os.path.isdir(pqdir):
                shutil.rmtree(pqdir)
            ddf.to_parquet(pqdir, **extra)

        def check_mean(got):
            assert abs(got - want_mean) <= 1e-9 * max(1.0, abs(want_mean)), (got, want_mean)

        def check_counts(got):
            assert {k: int(v) for k, v in got.items()} == counts

        def mean_h5():
            check_mean(read_vector(os.path.join(h5dir, "*.h5"), args.workload)[mean_col].mean().compute())

        def mean_pq():
            check_mean(dd.read_parquet(pqdir)[mean_col].mean().compute())

        def count_h5():
            check_counts(read_vector(os.path.join(h5dir, "*.h5"), args.workload).groupby(key_col).size().compute())

        def count_pq():
            check_counts(dd.read_parquet(pqdir).groupby(key_col).size().compute())

        phases = [("write", write_h5, write_pq), ("mean", mean_h5, mean_pq), ("groupby-count", count_h5, count_pq)]
        results = {}
        for phase, f_h5, f_pq in phases:
            times = {"h5vec": [], "parquet": []}
            peak = {"h5vec": 0.0, "parquet": 0.0}
            for rep in range(args.reps + 1):
                order = [("h5vec", f_h5), ("parquet", f_pq)]
                if rep % 2:
                    order.reverse()
                for side, f in order:
                    client.run(_reset_hwm)
                    t = time.perf_counter()
                    f()
                    dt = time.perf_counter() - t
                    hwm = max(client.run(_hwm_mb).values())
                    if rep:  # rep 0 warms up
                        times[side].append(dt)
                        peak[side] = max(peak[side], hwm)
            results[phase] = {"times": times, "peak": peak}
            if phase == "write":
                # Reads use what the writes made: check it once.
                ds = h5vec.open_dataset(os.path.join(h5dir, "*.h5"), args.workload)
                assert len(ds.files) == args.files and len(ds) == rows

        sizes = {"h5vec": du_mb(h5dir), "parquet": du_mb(pqdir)}
        head = (f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}; host: {platform.node()} "
                f"{platform.system()} {platform.release()}; cpus: {os.cpu_count()}; workload: {args.workload}; "
                f"rows: {rows} in {args.files} "
                f"files; workers: {args.workers} x 1 thread; reps: {args.reps} (+1 warm-up)\n"
                f"python {sys.version.split()[0]} dask {dask.__version__} distributed {distributed.__version__} "
                f"pandas {pd.__version__} pyarrow {pyarrow.__version__} h5vec {h5vec.__version__}; "
                f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
                f"peak memory {'VmHWM reset per phase' if clear_ok else 'ru_maxrss (not reset)'}")
        print(head)
        print(f"sizes: h5vec {sizes['h5vec']:.1f} MiB, parquet {sizes['parquet']:.1f} MiB")
        print()
        print("| phase | side | median s | min s | max s | ratio h5vec/parquet | peak worker MB |")
        print("|---|---|---:|---:|---:|---:|---:|")
        out = []
        for phase, r in results.items():
            med = {s: statistics.median(v) for s, v in r["times"].items()}
            ratio = med["h5vec"] / med["parquet"]
            for side in ("h5vec", "parquet"):
                v = r["times"][side]
                print(f"| {phase} | {side} | {med[side]:.3f} | {min(v):.3f} | {max(v):.3f} | "
                      f"{ratio:.2f} | {r['peak'][side]:.0f} |")
                out.append({"bench": "dask_many", "workload": args.workload, "phase": phase, "side": side, "rows": rows, "files": args.files,
                            "workers": args.workers, "reps": args.reps, "median_s": med[side], "min_s": min(v),
                            "max_s": max(v), "times_s": v, "ratio_h5vec_over_parquet": ratio,
                            "peak_worker_mb": r["peak"][side], "size_mb": sizes[side]})
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                for row in out:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
