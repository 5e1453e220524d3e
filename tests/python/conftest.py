"""Session fixtures: build examples/xlang.rs once, run `xlang write`, and
offer `xlang read` to the reverse-direction tests.

Run from the repository root:  python -m pytest tests/python
Honours CARGO_TARGET_DIR (cargo reads it). XLANG_CARGO_PROFILE=release
builds the example in release mode instead of the default dev profile.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import pytest

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE.parent.parent  # tests/python -> repository root
sys.path.insert(0, str(HERE))


def _build_xlang():
    """`cargo build --example xlang`; returns the path of the executable."""
    cmd = ["cargo", "build", "--quiet", "--example", "xlang", "--message-format=json-render-diagnostics"]
    if os.environ.get("XLANG_CARGO_PROFILE") == "release":
        cmd.append("--release")
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        pytest.exit(f"building examples/xlang.rs failed (exit {proc.returncode})", returncode=2)
    exe = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "xlang":
            exe = msg.get("executable") or exe
    if not exe:
        pytest.exit("cargo did not report the xlang executable", returncode=2)
    return exe


@pytest.fixture(scope="session")
def xlang_exe():
    return _build_xlang()


@pytest.fixture(scope="session")
def rust_dir(xlang_exe, tmp_path_factory):
    """Directory of the HDF5 files written by `xlang write`."""
    out = tmp_path_factory.mktemp("rust_written")
    proc = subprocess.run([xlang_exe, "write", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"xlang write failed:\n{proc.stderr}"
    return out


@pytest.fixture(scope="session")
def rust_files(rust_dir):
    """Opens the Rust-written files read-only: rust_files('dense.h5')."""
    opened = {}

    def get(name):
        if name not in opened:
            opened[name] = h5py.File(rust_dir / name, "r")
        return opened[name]

    yield get
    for f in opened.values():
        f.close()


class XlangResult:
    def __init__(self, proc):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    def values(self):
        assert self.returncode == 0, f"xlang read failed (exit {self.returncode}):\n{self.stderr}"
        return json.loads(self.stdout)


@pytest.fixture(scope="session")
def xlang_read(xlang_exe):
    """xlang_read(file, name, kind) -> XlangResult of `xlang read FILE NAME KIND`."""

    def run(path, name, kind):
        proc = subprocess.run([xlang_exe, "read", str(path), name, kind], capture_output=True, text=True,
                              timeout=120)
        return XlangResult(proc)

    return run
