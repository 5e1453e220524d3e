"""The Python package reads enums with data saved through the Rust serde
path (examples/xlang_serde_enums.rs, SPEC.md section 13): the same rows as
the derive's file of test_package_unions.py, in a record, an Option and a
list."""

import json
import os
import subprocess

import pytest

import h5vec
from conftest import WORKSPACE
from test_package_unions import event, plain
from cargo_features import FEATURES

N = 9


@pytest.fixture(scope="module")
def serde_enums_file(tmp_path_factory):
    cmd = ["cargo", "build", "--quiet", "--workspace", "--features", FEATURES, "--example", "xlang_serde_enums",
           "--message-format=json-render-diagnostics"]
    if os.environ.get("XLANG_CARGO_PROFILE") == "release":
        cmd.append("--release")
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0, "building examples/xlang_serde_enums.rs failed"
    exe = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "xlang_serde_enums":
            exe = msg.get("executable") or exe
    assert exe
    out = tmp_path_factory.mktemp("serde_enums") / "serde_enums.h5"
    run = subprocess.run([exe, str(out)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return str(out)


def test_serde_path_enums_read_as_the_derive_writes_them(serde_enums_file):
    d = h5vec.open_vector(serde_enums_file, "rows").read()
    assert d["id"].tolist() == list(range(N))
    assert [plain(r) for r in d["event"]] == [event(i) for i in range(N)]
    assert [plain(r) for r in d["maybe"]] == [event(i + 1) if i % 3 else None for i in range(N)]
    assert [[plain(r) for r in h] for h in d["history"]] == [[event(i + k) for k in range(i % 3)] for i in range(N)]
