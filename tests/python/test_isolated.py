"""h5vec.validate(path, isolated=True): the package's complete read check in a
child Python process, so files that crash or hang HDF5 (tests/fuzz/KNOWN.md)
raise FormatError naming the signal or the limit, and the caller lives on;
and `h5vec validate` (the command) on the same files: one line, exit 1."""

import os
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

import h5vec

WORKSPACE = Path(__file__).resolve().parent.parent.parent
FUZZ = WORKSPACE / "tests" / "fuzz"
GOLDEN = WORKSPACE / "tests" / "golden"

# Inputs on which HDF5 crashes the package's reads too (h5py's HDF5 build).
CRASHES = {
    "abort-scalars-s100-i20265.h5": "SIGFPE",
    "abort-nulls-s201-i81698.h5": "SIGFPE",
    "abort-scalars-s201-i6180.h5": "SIGSEGV",
}

# The command's child still crashes on these; on the others of CRASHES the
# Rust guard walk's pre-checks (h5vec/src/guard/precheck.rs) refuse the
# damaged structure before HDF5 parses it: one problem line.
COMMAND_CRASHES = {"abort-nulls-s201-i81698.h5": "SIGFPE"}
COMMAND_PRECHECKED = {
    "abort-scalars-s100-i20265.h5": "$ (/v/data): invalid data: the group's dense link storage has a "
    "name index (v2 B-tree) that declares records of 0 bytes (HDF5 would divide by the record size)",
    "abort-scalars-s201-i6180.h5": "$ (/v/metadata/schema/children): invalid data: the group's dense "
    "link storage has a fractal heap that declares a table width of 0, not a power of two (HDF5 would "
    "read past its tables)",
}


def _binary():
    env = os.environ.get("H5VEC_BIN")
    if env and Path(env).is_file():
        return Path(env)
    p = WORKSPACE / "target" / "debug" / "h5vec"
    return p if p.is_file() else None


def good_file(tmp_path):
    path = tmp_path / "good.h5"
    h5vec.save_vector(str(path), "xs", {"value": np.arange(5000, dtype=np.uint32)})
    h5vec.save_vector(str(path), "pairs", {"a": np.arange(3, dtype=np.int64),
                                           "b": np.array([0.5, 1.5, 2.5])})
    return path


def test_a_good_file_passes_in_both_modes(tmp_path):
    path = good_file(tmp_path)
    expected = [
        {"path": "/pairs", "kind": "vector", "rows": 3, "problem": None},
        {"path": "/xs", "kind": "vector", "rows": 5000, "problem": None},
    ]
    assert h5vec.validate(path) == expected
    assert h5vec.validate(path, isolated=False) == expected
    assert h5vec.validate(path, only="/xs") == expected[1:]


def test_tables_and_vls_arrays_are_read():
    for name, kind in [("h5col/d_mixed_table.h5", "table"), ("vls/dolomite_strings.h5", "vls")]:
        report = h5vec.validate(GOLDEN / name)
        assert report, name
        assert {c["kind"] for c in report} == {kind}, report
        assert all(c["problem"] is None and c["rows"] > 0 for c in report), report
        assert h5vec.validate(GOLDEN / name, isolated=False) == report


def test_a_damaged_container_is_its_problem(tmp_path):
    path = good_file(tmp_path)
    with h5py.File(path, "r+") as f:
        f["xs/metadata/count"][()] = 9000
    inside = h5vec.validate(path, isolated=False)
    report = h5vec.validate(path)
    assert report == inside
    assert [c["path"] for c in report if c["problem"]] == ["/xs"]
    assert "9000" in report[1]["problem"], report


@pytest.mark.parametrize("name", sorted(CRASHES))
def test_a_crash_in_hdf5_is_a_format_error(name):
    path = FUZZ / name
    with pytest.raises(h5vec.FormatError) as e:
        h5vec.validate(path, time_limit=30)
    assert e.value.location == str(path)
    assert e.value.message.startswith(f"isolated check killed by {CRASHES[name]}"), str(e.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_hang_hits_the_time_limit(tmp_path):
    # Opening a named pipe no process writes to blocks forever. (HDF5's
    # global heap loop, hang-nulls-s2-i8.h5, is refused before HDF5 reads
    # the heap now: python/h5vec/_gheap.py.)
    path = tmp_path / "pipe.h5"
    os.mkfifo(path)
    with pytest.raises(h5vec.FormatError) as e:
        h5vec.validate(path, time_limit=2)
    assert e.value.message == "isolated check: still running after the time limit of 2 s, killed"


def test_every_known_input_returns_or_raises():
    """No KNOWN.md input ends the caller; each gives a report or FormatError."""
    names = [l[3:].split("`")[0] for l in (FUZZ / "KNOWN.md").read_text().splitlines()
             if l.startswith("- `")]
    # 3 at this writing; fewer as HDF5 bugs get cheap checks.
    assert names
    for name in names:
        try:
            report = h5vec.validate(FUZZ / name, time_limit=3)
        except h5vec.FormatError as e:
            assert e.location == str(FUZZ / name), (name, e)
        else:
            assert [c["path"] for c in report] == ["/v"], (name, report)


def test_a_tiny_memory_budget_is_an_error(tmp_path):
    path = good_file(tmp_path)
    # The budget is the child interpreter's whole address space: 32 MiB
    # does not even import numpy.
    with pytest.raises(h5vec.FormatError) as e:
        h5vec.validate(path, memory_limit=32 << 20)
    assert e.value.message.startswith("isolated check"), str(e.value)


def test_not_hdf5_raises_what_opening_raises(tmp_path):
    path = tmp_path / "text.h5"
    path.write_text("not HDF5\n" * 100)
    with pytest.raises(h5vec.FileError) as inside:
        h5vec.validate(path, isolated=False)
    with pytest.raises(h5vec.FileError) as e:
        h5vec.validate(path)
    assert str(e.value) == str(inside.value) == f"not an HDF5 file: {path}"
    assert e.value.path == inside.value.path


@pytest.mark.skipif(_binary() is None, reason="no h5vec binary: cargo build -p h5vec-cli")
def test_the_command_prints_one_line_for_a_crash(tmp_path):
    for name, problem in COMMAND_PRECHECKED.items():
        path = FUZZ / name
        r = subprocess.run([str(_binary()), "validate", str(path)], capture_output=True, text=True)
        assert (r.returncode, r.stdout, r.stderr) == (1, f"{path}:/v: {problem}\n", ""), name
    for name, sig in COMMAND_CRASHES.items():
        path = FUZZ / name
        r = subprocess.run([str(_binary()), "validate", str(path)], capture_output=True, text=True)
        assert r.returncode == 1, (name, r.stdout, r.stderr)
        assert r.stdout == f"{path}: isolated check killed by {sig}: " + (
            "an invalid memory access in HDF5 or h5vec\n" if sig == "SIGSEGV"
            else "an arithmetic fault (a division by zero) in HDF5 or h5vec\n"), r.stdout
        assert r.stderr == ""
    # A hang: the time limit, one line. No input of tests/fuzz hangs any
    # more; a named pipe with no writer blocks the child's open.
    path = tmp_path / "blocks.h5"
    os.mkfifo(path)
    r = subprocess.run([str(_binary()), "validate", "--time-limit", "1", str(path)],
                       capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (
        1, f"{path}: isolated check: still running after the time limit of 1s, killed\n")


def test_blosc_parameters_blosc_never_stores_are_refused():
    """As in Rust: refused before HDF5 runs the filter (tests/fuzz inputs that
    crashed, or leaked, on append)."""
    for name, why in [("abort-strings_appended_zstd-s200-i30123.h5", "type size 4294049808"),
                      ("leak-lists_appended_blosc-s1301-i1639.h5", "0 parameters")]:
        report = h5vec.validate(FUZZ / name)
        assert len(report) == 1 and report[0]["problem"], (name, report)
        assert report[0]["problem"].endswith(
            "expected Blosc filter parameters as Blosc's filter stores them (at least 4, "
            f"a type size of 1 to 255), found {why}"), report
