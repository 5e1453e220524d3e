"""Live readers (SPEC section 8, "Live readers"): h5py opens a file that
examples/live_writer.rs is streaming into (SWMR) and loads `ticks` again and
again; every load is a prefix of the written rows and `count` grows. Also a
reader for tests/live.rs: `python3 test_live_h5py.py read PATH SECONDS`
(prints `ready` once imported, starts on a line of stdin) or
`... once PATH MIN_ROWS`.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "python"))
import h5vec  # noqa: E402


def check_rows(cols, n, full):
    """Row i must be examples/live_writer.rs `tick(i)`."""
    i = np.arange(n, dtype=np.uint64)
    assert np.array_equal(cols["seq"], i), "seq"
    assert np.array_equal(cols["price"], i.astype(np.float64) * 0.25), "price"
    assert np.array_equal(cols["qty"], (i % 1000).astype(np.int32) - 500), "qty"
    venue = cols["venue"]
    rows = range(n) if full else sorted(set(range(0, n, 97)) | set(range(max(0, n - 300), n)))
    bid = cols["bid"]
    for r in rows:
        assert venue[r] in (f"v{r % 7}", f"v{r % 7}".encode()), f"venue[{r}] = {venue[r]!r}"
        tags = list(cols["tags"][r])
        assert tags == [(r + k) % 65536 for k in range(r % 4)], f"tags[{r}] = {tags}"
        if r % 3 == 0:
            assert np.ma.is_masked(bid[r]), f"bid[{r}] = {bid[r]!r}"
        else:
            assert bid[r] == np.float32(r * 0.5), f"bid[{r}] = {bid[r]!r}"


def load(f):
    with h5vec.open_vector(f, "ticks") as v:
        n = len(v)
        return n, v.read()


def read_loop(path, seconds):
    """Loads until `seconds` pass; returns (loads, counts seen)."""
    f = h5py.File(path, "r", libver="latest", swmr=True)
    seen = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        n, cols = load(f)
        check_rows(cols, n, full=False)
        assert not seen or n >= seen[-1], f"count went back: {seen[-1]} then {n}"
        seen.append(n)
    f.close()
    return seen


def read_once(path, min_rows):
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        n, cols = load(f)
        assert n >= min_rows, f"{n} rows, the writer had committed {min_rows}"
        check_rows(cols, n, full=True)
        return n


def writer_exe():
    cmd = ["cargo", "build", "--quiet", "-p", "h5vec", "--example", "live_writer",
           "--message-format=json-render-diagnostics"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    import json
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "live_writer":
            return msg["executable"]
    raise RuntimeError("cargo did not report the live_writer executable")


def start_writer(path, seconds):
    p = subprocess.Popen([writer_exe(), str(path), str(seconds), "300"],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def test_h5py_reads_a_growing_vector(tmp_path):
    path = tmp_path / "live.h5"
    w = start_writer(path, 3)
    seen = read_loop(path, 2.5)
    assert w.wait(30) == 0
    assert len(seen) >= 5 and len(set(seen)) >= 3, seen
    assert read_once(path, seen[-1]) >= seen[-1]


def test_h5py_reads_the_last_commit_after_sigkill(tmp_path):
    path = tmp_path / "killed.h5"
    w = start_writer(path, 60)
    committed = 0
    while committed < 20000:
        committed = int(w.stdout.readline().split()[1])
    w.send_signal(signal.SIGKILL)
    w.wait()
    # Plain h5py refuses the file (its superblock still says a writer has
    # it open); a live reader reads the last commit.
    n = read_once(path, committed)
    assert n >= committed


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "read":
        # Imports done (slow on a busy machine): the caller starts the writer,
        # then says go, so the reading window is the writer's.
        print("ready", flush=True)
        sys.stdin.readline()
        seen = read_loop(path, float(sys.argv[3]))
        print(f"loads {len(seen)} distinct {len(set(seen))} last {seen[-1] if seen else 0}")
    elif mode == "once":
        print(f"rows {read_once(path, int(sys.argv[3]))}")
    else:
        sys.exit(f"unknown mode {mode}")
