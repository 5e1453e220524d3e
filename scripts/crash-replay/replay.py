#!/usr/bin/env python3
"""Replays a wtrace log onto a copy of the file it started from, one write at
a time, and checks every intermediate state in a fresh process: the state a
SIGKILL between those two writes would have left.

usage: replay.py BASE LOG CHECKER MIN_LEN OUTDIR [--keep N]

CHECKER is the crash test binary (its ignored test `crash_check` loads the
file); MIN_LEN the length of `v` in BASE. Failing states are kept as
OUTDIR/fail-K.h5 (K = writes applied). Prints one line per failing state and
a summary weighting each state by how long the writer stayed in it.
"""
import argparse, os, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlog import read_log, weights, sig

ap = argparse.ArgumentParser()
ap.add_argument("base"); ap.add_argument("log"); ap.add_argument("checker")
ap.add_argument("min_len"); ap.add_argument("outdir")
ap.add_argument("--keep", type=int, default=10)
a = ap.parse_args()

recs, ts, te = read_log(a.log)
w = weights(recs, ts, te)
total = sum(w)
os.makedirs(a.outdir, exist_ok=True)
state = os.path.join(a.outdir, "state.h5")
shutil.copy(a.base, state)
fails = failw = 0
with open(state, "r+b") as f:
    for k in range(len(recs) + 1):
        if k:
            kind, off, d, _, _ = recs[k - 1]
            if kind == "W":
                f.seek(off); f.write(d)
            else:
                f.truncate(off)
            f.flush()
        env = dict(os.environ, H5VEC_CRASH_FILE=state, H5VEC_CRASH_MIN=a.min_len)
        try:
            r = subprocess.run([a.checker, "--ignored", "--exact", "crash_check", "--nocapture",
                                "--test-threads=1"], env=env, capture_output=True, text=True,
                               timeout=120)
            ok, text = r.returncode == 0, r.stdout + r.stderr
        except subprocess.TimeoutExpired:
            ok, text = False, "hung"
        if not ok:
            fails += 1
            failw += w[k]
            why = [l.strip() for l in text.splitlines() if l.strip()]
            why = " | ".join(why[next((i for i, l in enumerate(why) if "panicked" in l), 0):][:2])
            last = "-"
            if k:
                kind, off, d, _, _ = recs[k - 1]
                last = f"{kind} at {off}, {len(d or b'')} bytes {sig(d or b'')}"
            print(f"FAIL after write {k} ({last}; state lasted {w[k]/1e3:.1f} us): {why[:400]}",
                  flush=True)
            if fails <= a.keep:
                shutil.copy(state, os.path.join(a.outdir, f"fail-{k}.h5"))
os.remove(state)
print(f"{len(recs)} writes, {fails} failing states; the writer spent {failw/1e3:.1f} us of "
      f"{total/1e6:.1f} ms in them: {failw/max(total, 1):.2e} failures per uniformly random kill",
      flush=True)
