"""Shared fixtures and expected values of the Python package's tests
(test_package_*.py); holds no tests itself.

`pkg_exe` builds examples/xlang_pkg.rs; `pkg_file` is the file its `write`
command makes; `pkg_read(path, name, kind)` loads a vector with Rust's
`load_vector` and returns its JSON. The functions below mirror the Rust
functions of the same names in examples/xlang_pkg.rs.
"""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import h5vec

WORKSPACE = Path(__file__).resolve().parents[2]
GOLDEN = WORKSPACE / "tests" / "golden"

if not hasattr(h5vec, "open_vector"):
    pytest.exit("the h5vec Python package is not installed: pip install './python[arrow,pandas,polars,dask]'",
                returncode=2)


def _build():
    cmd = ["cargo", "build", "--quiet", "--example", "xlang_pkg", "--message-format=json-render-diagnostics"]
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        pytest.exit(f"building examples/xlang_pkg.rs failed (exit {proc.returncode})", returncode=2)
    exe = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "xlang_pkg":
            exe = msg.get("executable") or exe
    if not exe:
        pytest.exit("cargo did not report the xlang_pkg executable", returncode=2)
    return exe


@pytest.fixture(scope="session")
def pkg_exe():
    return _build()


@pytest.fixture(scope="session")
def pkg_file(pkg_exe, tmp_path_factory):
    out = tmp_path_factory.mktemp("pkg_rust")
    proc = subprocess.run([pkg_exe, "write", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out / "pkg.h5"


class Loaded:
    def __init__(self, proc):
        self.returncode, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr

    def values(self):
        assert self.returncode == 0, f"xlang_pkg read failed:\n{self.stderr}"
        return json.loads(self.stdout)


@pytest.fixture(scope="session")
def pkg_read(pkg_exe):
    def run(path, name, kind):
        proc = subprocess.run([pkg_exe, "read", str(path), name, kind], capture_output=True, text=True,
                              timeout=120)
        return Loaded(proc)
    return run


# ---------------------------------------------------------------------------
# Values of examples/xlang_pkg.rs

CHARS = ["a", "é", "日", "🎉", "\0", "\U0010FFFF", "Z"]
LEVELS = [("Low", -3), ("Mid", 0), ("High", 7), ("Max", 300)]


def f32(x):
    return float(np.float32(x))


def inner(n):
    return {"a": n * 7 - 3, "b": f"b{n}é"}


def event(n):
    return {"id": n * 1000 + 7, "name": f"name-{n}-{'x' * (n % 5)}",
            "tags": [f"t{k}·{n}" for k in range(n % 4)],
            "values": [f32(k * 0.5 - n) for k in range(n % 6)]}


def nulls(n):
    return {
        "maybe_num": n * 1.5 if n % 3 != 0 else None,
        "maybe_arr": [float(n), -float(n), 0.25] if n % 4 != 1 else None,
        "maybe_inner": inner(n) if n % 5 != 2 else None,
        "maybe_list": None if n % 3 == 0 else ([] if n % 3 == 1 else list(range(n))),
        "maybe_str": f"s{n}" if n % 2 == 0 else None,
        "maybe_vls": None if n % 4 == 0 else ("NA" if n % 4 == 1 else f"v{n}"),
        "list_of_maybe": [f"e{k}" if k != 1 else None for k in range(n % 4)],
        "maybe_bool": (n % 2 == 0) if n % 3 != 1 else None,
        "maybe_char": CHARS[n % 7] if n % 2 == 1 else None,
    }


def deep(n):
    return {
        "grid": [[[n * 100 + i * 10 + j + k for k in range(j + 1)] for j in range((n + i) % 3)]
                 for i in range(n % 3)],
        "opt_inner": [None if (n + k) % 3 == 0 else ([] if (n + k) % 3 == 1 else [n % 256, k])
                      for k in range(n % 3)],
        "points": [inner(n + k) for k in range(n % 3)],
        "flags": [(n + k) % 2 == 0 for k in range(n % 4)],
        "arrs": [[float(n), k + 0.5] for k in range(n % 2 + 1)],
        "pairs": [[n * k - 5, f"p{k}"] for k in range(n % 3)],
        "sparse": [n * k - 2 if (n + k) % 3 != 0 else None for k in range(n % 4)],
        "chars": [CHARS[(n + k) % 7] for k in range(n % 3)],
        "levels": [LEVELS[(n + k) % 4][1] for k in range(n % 3)],
        "opt_strs": None if n % 3 == 0 else [f"o{k}" if (k + n) % 2 == 0 else None for k in range(n % 4)],
    }


def wrap(x, bits, signed):
    x %= 1 << bits
    if signed and x >= 1 << (bits - 1):
        x -= 1 << bits
    return x


def flat(n):
    return {"i8_": wrap(n * 37, 8, True), "u16_": wrap(n * 4099, 16, False), "i32_": n * -100_003,
            "u64_": 2**64 - 1 - n, "f32_": f32(n * 0.25 - 1.0), "f64_": n / 3.0, "flag": n % 3 == 0,
            "letter": CHARS[n % 7], "text": f"text {n} ✓", "level": LEVELS[n % 4][1], "unit": None}


def meta(n):
    return {"name": f"m{n}", "tags": [f"g{k}" for k in range(n % 3)], "score": n * 0.5}


def bincode_str(s):
    b = s.encode()
    assert len(b) < 251
    return bytes([len(b)]) + b


def serded(n):
    return {"id": n - 2, "meta": meta(n), "payload": f"payload-{n}"}


def measurement(i):
    return {"timestamp": {"weeks": 2300 + i // 10, "microseconds": i * 1_000_000},
            "temperature": 20.0 + i * 0.25, "position": [float(i), i * 2.0, -float(i)]}


def opt_root(n):
    return float(n) if n % 3 != 0 else None


def list_root(n):
    return [f"{n}.{k}" for k in range(n % 3)]


def opt_record_root(n):
    return inner(n) if n % 2 == 0 else None


def env_with_src():
    return dict(os.environ)


LEVEL_NAME = {v: k for k, v in LEVELS}


def deep_json(n):
    """deep(n) as Rust's serde_json prints it (enums by variant name)."""
    d = deep(n)
    d["levels"] = [LEVEL_NAME[x] for x in d["levels"]]
    return d


def flat_json(n):
    d = flat(n)
    d["level"] = LEVEL_NAME[d["level"]]
    return d
