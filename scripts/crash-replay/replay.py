#!/usr/bin/env python3
"""Replays a wtrace log onto a copy of the file it started from, one write at
a time, and checks every intermediate state in a fresh process: the state a
SIGKILL between those two writes would have left.

usage: replay.py BASE LOG CHECKER MIN_LEN OUTDIR [--keep N] [--tear]

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
ap.add_argument("--tear", action="store_true",
                help="also check metadata writes cut at each 4 KiB page boundary inside them "
                     "(a SIGKILL during a write stops the kernel's copy between pages)")
a = ap.parse_args()

recs, ts, te = read_log(a.log)
w = weights(recs, ts, te)
total = sum(w)
os.makedirs(a.outdir, exist_ok=True)
state = os.path.join(a.outdir, "state.h5")
shutil.copy(a.base, state)
fails = failw = 0
PAGE = 4096


def check(k, extra, weight, last):
    """Checks the state file; prints and counts a failure."""
    global fails, failw
    env = dict(os.environ, H5VEC_CRASH_FILE=state, H5VEC_CRASH_MIN=a.min_len)
    try:
        r = subprocess.run([a.checker, "--ignored", "--exact", "crash_check", "--nocapture",
                            "--test-threads=1"], env=env, capture_output=True, text=True,
                           timeout=30)
        ok, text = r.returncode == 0, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        ok, text = False, "hung"
    if ok:
        return
    fails += 1
    failw += weight
    why = [l.strip() for l in text.splitlines() if l.strip()]
    why = " | ".join(why[next((i for i, l in enumerate(why) if "panicked" in l), 0):][:2])
    print(f"FAIL after write {k}{extra} ({last}; state lasted {weight/1e3:.2f} us): {why[:400]}",
          flush=True)
    if fails <= a.keep:
        shutil.copy(state, os.path.join(a.outdir, f"fail-{k}{extra.replace(' ', '-')}.h5"))


def describe(k):
    kind, off, d, _, _ = recs[k - 1]
    return f"{kind} at {off}, {len(d or b'')} bytes {sig(d or b'')}"


with open(state, "r+b") as f:
    for k in range(len(recs) + 1):
        if k:
            kind, off, d, t0, t1 = recs[k - 1]
            if kind == "W":
                cuts = [b for b in range((off // PAGE + 1) * PAGE, off + len(d), PAGE)]
                if a.tear and cuts and sig(d).isalpha():
                    # The write stopped at a page boundary: only its head landed.
                    f.seek(off)
                    old = f.read(len(d))
                    for b in cuts:
                        f.seek(off); f.write(d[:b - off]); f.flush()
                        check(k - 1, f" + {b - off} of {len(d)} bytes", (t1 - t0) / (len(cuts) + 1),
                              describe(k))
                    f.seek(off); f.write(old)
                f.seek(off); f.write(d)
            else:
                f.truncate(off)
            f.flush()
        check(k, "", w[k], describe(k) if k else "-")
os.remove(state)
print(f"{len(recs)} writes, {fails} failing states; the writer spent {failw/1e3:.1f} us of "
      f"{total/1e6:.1f} ms in them: {failw/max(total, 1):.2e} failures per uniformly random kill",
      flush=True)
