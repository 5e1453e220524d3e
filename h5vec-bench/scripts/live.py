"""Streaming throughput with live readers attached against without, in one run
(issue 17's benchmark; SPEC 8 "Live readers").

    python3 h5vec-bench/scripts/live.py WRITER_BIN [SECONDS] [REPS]

WRITER_BIN is the release build of examples/live_writer.rs (`cargo build
--release --example live_writer`). Each repetition runs the writer for
SECONDS (default 4) into a fresh file, committing every PER_COMMIT rows, alternately alone and with two h5py
readers (`h5py.File(path, "r", libver="latest", swmr=True)`) that each poll
every 50 ms like `tail -f`: read `count`, then the `seq` values committed
since the last poll, checking them. Order rotates per repetition. Prints rows written per second
(medians) and the readers' loads per second.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Rows per commit: the writer sleeps 2 ms after each commit (a stream that
# pauses), so commits must be large enough for the rows to dominate.
PER_COMMIT = 20000

READER = r'''
import sys, time, h5py, numpy as np
path, secs = sys.argv[1], float(sys.argv[2])
f = h5py.File(path, "r", libver="latest", swmr=True)
loads, seen, end = 0, 0, time.monotonic() + secs
while time.monotonic() < end:
    c = f["ticks/metadata/count"]; c.refresh(); n = int(c[()])
    d = f["ticks/data/seq/values"]; d.refresh()
    seq = d[seen:n]  # the rows committed since the last poll (a tail -f)
    assert np.array_equal(seq, np.arange(seen, n, dtype=np.uint64)), (seen, n)
    seen = n
    loads += 1
    time.sleep(0.05)
print(loads)
'''


def run(writer, secs, readers):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "live.h5")
        w = subprocess.Popen([writer, path, str(secs), str(PER_COMMIT)], stdout=subprocess.PIPE, text=True)
        assert w.stdout.readline().strip() == "ready"
        rs = [subprocess.Popen([sys.executable, "-c", READER, path, str(secs)],
                               stdout=subprocess.PIPE, text=True) for _ in range(readers)]
        last = None
        for line in w.stdout:
            last = line.split()
        assert w.wait() == 0 and last[0] == "done", last
        loads = [int(r.communicate()[0]) for r in rs]
        assert all(r.returncode == 0 for r in rs)
        return int(last[1]) / secs, sum(loads) / secs


def main():
    writer = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    res = {0: [], 2: []}
    loads = []
    for rep in range(reps):
        for readers in ([0, 2] if rep % 2 == 0 else [2, 0]):
            rows, l = run(writer, secs, readers)
            res[readers].append(rows)
            if readers:
                loads.append(l)
    alone, live = statistics.median(res[0]), statistics.median(res[2])
    print(f"live_writer, {secs:g} s per run, {reps} runs each, medians; load average "
          f"{os.getloadavg()[0]:.1f}\n")
    print("| writer | rows/s | ratio |")
    print("|---|---:|---:|")
    print(f"| alone | {alone:,.0f} | 1.00x |")
    print(f"| with 2 h5py readers (every 50 ms) | {live:,.0f} | {live / alone:.2f}x |")
    print(f"\nreaders: {statistics.median(loads):.1f} loads/s in all, every load a checked prefix")


if __name__ == "__main__":
    main()
