"""The cost of the Python package's global heap check (python/h5vec/_gheap.py)
on a 1M-row string vector read: open_vector(...).read() with the check and
with it switched off, interleaved, medians.

    PYTHONPATH=python python3 scripts/py_gheap_bench.py [ROWS] [REPEATS]
"""

import os
import statistics
import sys
import tempfile
import time

import numpy as np

import h5vec
from h5vec import _gheap

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
d = tempfile.mkdtemp()
names = np.array([f"name-{i}-{'é' * (i % 5)}" for i in range(rows)], dtype=object)
files = {}
for label, comp in (("uncompressed", None), ("deflate", "deflate")):
    p = os.path.join(d, f"{label}.h5")
    h5vec.save_vector(p, "v", {"id": np.arange(rows, dtype=np.uint32), "name": names}, compression=comp)
    files[label] = p
check = _gheap.guard


def off(*a, **k):
    return None


for label, p in files.items():
    times = {"with the check": [], "without": []}
    for _ in range(reps):
        for mode in times:
            _gheap.guard = check if mode == "with the check" else off
            t = time.perf_counter()
            got = h5vec.open_vector(p, "v").read(columns=["name"])["name"]
            times[mode].append(time.perf_counter() - t)
            assert len(got) == rows and got[-1] == names[-1]
    _gheap.guard = check
    t = time.perf_counter()
    with h5vec.open_vector(p, "v") as v:
        ds = v._file["v/data/name/values"]
        _gheap.guard(ds, 0, rows, "$.name")
    alone = time.perf_counter() - t
    w, wo = (statistics.median(times[m]) for m in times)
    print(f"{label}: {rows} rows, medians of {reps}: read {wo:.3f} s without the check, {w:.3f} s with it "
          f"({(w / wo - 1) * 100:+.1f}%); the check alone {alone:.3f} s")
