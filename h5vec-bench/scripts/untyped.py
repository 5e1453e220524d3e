"""Process-level timings of the `h5vec` command against its baselines.

    python3 untyped.py BIN_DIR DATA_DIR REPS

BIN_DIR holds the release `h5vec` and `untyped` binaries; DATA_DIR the
w1.h5 / w2.h5 files `untyped` wrote. Interleaved in rotating order, REPS
repetitions after one warm-up:

- `h5vec validate w2.h5 events` against `untyped load w2 w2.h5` (a process
  doing the typed load);
- `h5vec convert w2.h5:events out.parquet` (default: zstd) against pyarrow's
  `pq.write_table(table, compression="zstd")` of the same table (read once
  from the command's own output, untimed), in this process.

Prints a Markdown table of medians and ratios, the CPU time (user + system,
all threads) of the two Parquet writers, and the Parquet file sizes.
"""
import os
import resource
import statistics
import subprocess
import sys
import time

import pyarrow.parquet as pq


def cpu_seconds(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def timed(cmd, cpu=None):
    c = cpu_seconds(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    secs = time.perf_counter() - t
    if cpu is not None:
        cpu.append(cpu_seconds(resource.RUSAGE_CHILDREN) - c)
    return secs


def main():
    bin_dir, data, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    h5vec = os.path.join(bin_dir, "h5vec")
    untyped = os.path.join(bin_dir, "untyped")
    w2 = os.path.join(data, "w2.h5")
    out = os.path.join(data, "cli.parquet")
    ref = os.path.join(data, "pyarrow.parquet")
    subprocess.run([h5vec, "convert", f"{w2}:events", out], check=True)
    table = pq.read_table(out)

    # CPU seconds of each run, the warm-up's first (dropped with it below).
    cpu = {"convert": [], "pyarrow": []}

    def pa_write():
        c = cpu_seconds(resource.RUSAGE_SELF)
        t = time.perf_counter()
        pq.write_table(table, ref, compression="zstd")
        secs = time.perf_counter() - t
        cpu["pyarrow"].append(cpu_seconds(resource.RUSAGE_SELF) - c)
        return secs

    phases = {
        "typed load (process)": lambda: timed([untyped, "load", "w2", w2]),
        "h5vec validate": lambda: timed([h5vec, "validate", w2, "events"]),
        "h5vec convert -> parquet": lambda: timed(
            [h5vec, "convert", f"{w2}:events", out], cpu["convert"]
        ),
        "pyarrow write_table zstd": pa_write,
    }
    names = list(phases)
    times = {k: [] for k in names}
    for rep in range(reps + 1):
        for k in range(len(names)):
            name = names[(k + rep) % len(names)]
            secs = phases[name]()
            if rep > 0:
                times[name].append(secs)
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu_med = {k: statistics.median(v[1:]) for k, v in cpu.items()}
    print(f"W2, {reps} repetitions after 1 warm-up, medians (s)\n")
    print("| phase | median | baseline | ratio |")
    print("|---|---:|---|---:|")
    print(f"| h5vec validate | {med['h5vec validate']:.3f} | typed load {med['typed load (process)']:.3f} | "
          f"{med['h5vec validate'] / med['typed load (process)']:.2f}x |")
    print(f"| h5vec convert -> parquet (zstd) | {med['h5vec convert -> parquet']:.3f} | pyarrow write_table "
          f"{med['pyarrow write_table zstd']:.3f} | "
          f"{med['h5vec convert -> parquet'] / med['pyarrow write_table zstd']:.2f}x |")
    print(f"| h5vec convert -> parquet, CPU (user + sys) | {cpu_med['convert']:.3f} | pyarrow write_table CPU "
          f"{cpu_med['pyarrow']:.3f} | {cpu_med['convert'] / cpu_med['pyarrow']:.2f}x |")
    print()
    print(f"Parquet sizes: h5vec convert {os.path.getsize(out) / 2**20:.1f} MiB, "
          f"pyarrow {os.path.getsize(ref) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
