"""Files a process left behind or holds (issue 28): a killed live writer's
file opens in the package (and in plain h5py with ``swmr=True``) at the
writer's last commit; a file another process holds for writing, a text file
and a truncated file are a `h5vec.FileError` in the Rust library's words.
"""

import signal
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5vec
from test_live_h5py import check_rows, start_writer


def killed_live_file(tmp_path, min_rows=3000):
    """A file whose live writer (examples/live_writer.rs) was SIGKILLed
    mid-stream; returns (path, rows the writer had reported committed)."""
    path = tmp_path / "killed.h5"
    w = start_writer(path, 60)
    committed = 0
    while committed < min_rows:
        committed = int(w.stdout.readline().split()[1])
    w.send_signal(signal.SIGKILL)
    w.wait()
    return path, committed


def test_package_and_plain_h5py_read_a_killed_live_writers_last_commit(tmp_path):
    path, committed = killed_live_file(tmp_path)
    # HDF5's plain read-only open refuses it: the superblock says a writer
    # has it open.
    with pytest.raises(OSError, match="already open for write"):
        h5py.File(path, "r")
    # The package opens it as a live reader, like the Rust library.
    assert h5vec.list_vectors(path) == ["ticks"]
    with h5vec.open_vector(path, "ticks") as v:
        n = len(v)
        cols = v.read()
    assert n >= committed
    check_rows(cols, n, full=True)
    # Plain h5py with swmr=True reads the same last commit.
    with h5py.File(path, "r", swmr=True) as f:
        assert int(f["ticks/metadata/count"][()]) == n
        seq = f["ticks/data/seq/values"][:n]
        assert np.array_equal(seq, np.arange(n, dtype=np.uint64))
        with h5vec.open_vector(f, "ticks") as v:
            assert len(v) == n
            check_rows(v.read(), n, full=True)


HOLD = "import h5py, sys, time; f = h5py.File(sys.argv[1], 'r+'); print('ready', flush=True); time.sleep(60)"


def test_a_file_another_process_writes_is_a_file_error_naming_create_file_live(tmp_path):
    path = tmp_path / "held.h5"
    h5vec.save_vector(path, "xs", {"x": np.arange(3, dtype=np.uint32)})
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(h5vec.FileError) as e:
            h5vec.open_vector(path, "xs")
        assert str(e.value) == (
            "the file is open for writing by another process (HDF5 locks a file while a writer has it "
            f"open): {path}; a writer that other processes may read while it writes creates the file "
            "with h5vec::create_file_live and writes with VectorWriter::create_live (readers: "
            "h5vec::open_file_live)")
        assert isinstance(e.value, OSError) and e.value.path == str(path)
        with pytest.raises(h5vec.FileError) as e:
            h5vec.save_vector(path, "ys", {"x": np.arange(3, dtype=np.uint32)})
        assert str(e.value) == (
            "the file is open in another process (HDF5 locks a file while a writer, or a reader of a "
            f"file not made for live reading, has it open): {path}")
    finally:
        holder.kill()
        holder.wait()
    with h5vec.open_vector(path, "xs") as v:
        assert v.read()["x"].tolist() == [0, 1, 2]


def test_a_text_file_and_a_truncated_file_are_file_errors(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("a,b\n1,2\n")
    for call in (lambda: h5vec.open_vector(text, "xs"), lambda: h5vec.list_vectors(str(text)),
                 lambda: h5vec.save_vector(text, "xs", {"x": np.arange(2)})):
        with pytest.raises(h5vec.FileError) as e:
            call()
        assert str(e.value) == f"not an HDF5 file: {text}"
    cut = tmp_path / "cut.h5"
    with h5py.File(cut, "w") as f:
        f["x"] = np.arange(100_000, dtype=np.int64)
    full = cut.stat().st_size
    with open(cut, "r+b") as f:
        f.truncate(100_000)
    for call in (lambda: h5vec.open_vector(cut, "x"), lambda: h5vec.append_vector(cut, "x", {"x": [1]})):
        with pytest.raises(h5vec.FileError) as e:
            call()
        assert str(e.value) == f"file truncated: 100,000 of {full:,} bytes present: {cut}"
