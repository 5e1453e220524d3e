"""Every input of tests/fuzz loaded through the Python package, in process:
`open_vector(...).read()`, `to_arrow()` (or `read_table` / `read_strings`
for an h5col table or a VLS array) and `validate(path, isolated=False)`.
Each file runs in its own child Python process with a 20 s limit, so a hang
fails the test instead of stopping it. Every load returns exactly the
values its seed was saved with (h5vec-fuzz/src/targets.rs), or raises the
package's FormatError naming the damage; never a hang, never h5py's raw
RuntimeError, and no file is left open. The three inputs on which h5py's
HDF5 itself crashes (tests/fuzz/KNOWN.md) are expected to crash in process
with their signal (test_isolated.py checks that validate(isolated=True)
turns those into an error).

    PYTHONPATH=python python3 -m pytest -q tests/python/test_fuzz_inputs.py
"""

import json
import math
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

WORKSPACE = Path(__file__).resolve().parent.parent.parent
FUZZ = WORKSPACE / "tests" / "fuzz"
LIMIT = 20.0

# The child: each operation's outcome as JSON ("ok" with the rows as Python
# lists, or the exception's class and text), then the files HDF5 still has
# open.
CHILD = r"""
import json, sys
import h5py
import h5vec

path = sys.argv[1]
out = {}

def run(key, fn):
    try:
        out[key] = ["ok", fn()]
    except Exception as e:
        out[key] = [type(e).__module__ + "." + type(e).__name__, str(e)]

def rows(t):
    return t.to_pylist()

with h5py.File(path, "r") as f:
    kind = "vls" if "type" in f["v"].attrs else "table" if "CLASS" in f["v"].attrs else "vector"
if kind == "vector":
    run("read", lambda: len(next(iter(h5vec.open_vector(path, "v").read().values()))))
    run("arrow", lambda: rows(h5vec.open_vector(path, "v").to_arrow()))
elif kind == "table":
    def table():
        with h5py.File(path, "r") as f:
            return rows(h5vec.read_table(f["v"], format="arrow"))
    run("arrow", table)
else:
    def strings():
        with h5py.File(path, "r") as f:
            return h5vec.read_strings(f["v"]).tolist()
    run("strings", strings)
run("validate", lambda: h5vec.validate(path, isolated=False))
out["open_files"] = h5py.h5f.get_obj_count(h5py.h5f.OBJ_ALL, h5py.h5f.OBJ_FILE)
print(json.dumps(out))
"""


# --- the seeds' values (h5vec-fuzz/src/targets.rs, 12 rows; tables 9) ------


def f32(x):
    return float(np.float32(x))


def scalars(n=12):
    return [{"a": int(np.int8(np.uint8((i * 37) % 256))), "b": (i * 1000) % 65536, "c": -i * 99_999,
             "d": i << 40, "e": f32(i / 3.0), "f": -(i * 1e100), "g": i % 3 == 0, "h": chr(0x3B1 + i),
             "color": [1, 2, 200][i % 3]} for i in range(n)]


def lists(n=12):
    return [{"ints": [k * 1000 - 7 for k in range(i % 4)],
             "words": [f"w{k}" + "ü" * (i % 2) for k in range(i % 3)],
             "pts": [{"x": float(k), "y": -float(i)} for k in range(i % 2)],
             "deep": [[i] * (i % 3), []]} for i in range(n)]


def nulls(n=12):
    return [{"a": i * 0.25 if i % 2 == 0 else None, "s": f"s{i}" if i % 3 != 0 else None,
             "l": [i] * (i % 3) if i % 4 != 1 else None,
             "p": {"x": 1.0, "y": float(i)} if i % 2 == 1 else None} for i in range(n)]


def vls(n=12):
    return [{"text": "vls-ü" * (i % 4), "maybe": f"m{i}" if i % 3 != 2 else None, "k": i} for i in range(n)]


def events(n=9):
    return [{"id": i * 3 - 1, "score": i / 2.0 if i % 2 == 0 else None, "flag": i % 3 == 1, "name": f"ev{i % 10}",
             "tags": [f"t{i}", None] if i % 3 != 0 else None, "values": [float(i)] * (i % 3)} for i in range(n)]


def ok(values):
    return {"read": ("ok", len(values)), "arrow": ("ok", values), "validate": ("ok", len(values))}


def error(*words):
    """Every load a FormatError whose text has `words`; validate reports it."""
    return {"read": ("FormatError", words), "arrow": ("FormatError", words), "validate": ("problem", words)}


HEAP_LOOP = ("damaged global heap collection at byte", "is free space of size 0 (HDF5 would loop on it forever)")

EXPECTED = {
    "abort-lists_appended_blosc-s100-i21817.h5": ok(lists()),
    "abort-nulls-s201-i81698.h5": "SIGFPE",
    "abort-nulls-s201-i8333.h5": error("$.l.<1>.<1>", "logical_type", "cannot open"),
    # Made with checksums (`--checksum`): a Fletcher32 chunk stored in 0 bytes.
    "abort-nulls_appended_lzf-s7-i5840.h5": error("$.s (/v/data/s/heap)", "the chunk of rows 0..4 is stored in 0 "
                                                  "bytes, fewer than its 4-byte Fletcher32 checksum"),
    # The same in an h5col table's column.
    "abort-h5col_table-s7-i15859.h5": {
        "arrow": ("FormatError", ("$.name (/v/name)", "the chunk of rows 0..1024 is stored in 0 bytes")),
        "validate": ("problem", ("$.name (/v/name)", "the chunk of rows 0..1024 is stored in 0 bytes"))},
    "abort-scalars-s100-i20265.h5": "SIGFPE",
    "abort-scalars-s201-i6180.h5": "SIGSEGV",
    "abort-scalars_appended_deflate-s300-i8671.h5": ok(scalars()),
    "abort-strings_appended_zstd-s200-i30123.h5": error("$.name", "expected Blosc filter parameters"),
    "hang-h5col_table-s100-i9853.h5": {"arrow": ("ok", events()), "validate": ("ok", 9)},
    "hang-lists-s1-i651.h5": ok(lists()),
    "hang-nulls-s100-i2918.h5": ok(nulls()),
    "hang-nulls-s2-i8.h5": error("$ (/v/metadata/schema/field_names)", *HEAP_LOOP),
    "hang-nulls-s3-i1973.h5": ok(nulls()),
    "hang-nulls_appended_lzf-s201-i444.h5": error("$.s (/v/data/s/values)", *HEAP_LOOP),
    "hang-scalars-s1300-i144.h5": ok(scalars()),
    "hang-strings_appended_zstd-s20-i2328.h5": error("$.name (/v/data/name/values)", *HEAP_LOOP),
    "hang-vls-s201-i2065.h5": ok(vls()),
    # The VLS array's `type` attribute shares the damaged collection with
    # the placeholder attribute.
    "hang-vls_array-s100-i18929.h5": {"strings": ("FormatError", ("$ (/v)", "attribute type", *HEAP_LOOP)),
                                      "validate": ("problem", ("$ (/v)", "attribute type", *HEAP_LOOP))},
    "leak-lists_appended_blosc-s1301-i1639.h5": error("$.ints[] (/v/data/ints/VALUES)",
                                                      "expected Blosc filter parameters", "found 0 parameters"),
    "leak-nulls_appended_lzf-scargofuzz-d1cf2bef.h5": error("$.s (/v/data/s/values)",
                                                            "bad global heap collection signature"),
    "leak-scalars-s200-i28020.h5": error("$ (/v/data)", "cannot list the members"),
    # Made with checksums: the values' Fletcher32 filter id became deflate's,
    # a mandatory deflate without parameters.
    "leak-scalars_appended_deflate-s11-i7753.h5": error("$.h (/v/data/h/values)", "deflate filter parameters",
                                                           "found 0 parameters"),
    "leak-strings-s100-i6482.h5": error("$.id (/v/data/id/values)", "incorrect metadata checksum"),
    "ok-different-meta-json-s1301-i1676.h5": error("$.doc", "JSON"),
    "panic-lists_appended_blosc-s201-i100117.h5": ok(lists()),
}


def test_every_input_is_listed():
    assert sorted(p.name for p in FUZZ.glob("*.h5")) == sorted(EXPECTED)


def _run(name):
    env = dict(os.environ, PYTHONPATH=str(WORKSPACE / "python"), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, str(FUZZ / name)], capture_output=True, text=True,
                           timeout=LIMIT, env=env, cwd=WORKSPACE)
    except subprocess.TimeoutExpired:
        return "hang", None
    return p.returncode, p.stdout if p.returncode == 0 else p.stderr


@pytest.fixture(scope="module")
def outcomes():
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(EXPECTED, pool.map(_run, EXPECTED)))


def same(got, want):
    """Rows equal, floats compared bit for bit as Python floats (NaN equal)."""
    if isinstance(want, float):
        return isinstance(got, float) and (got == want or (math.isnan(got) and math.isnan(want)))
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    return type(got) is type(want) and got == want


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_input(outcomes, name):
    rc, text = outcomes[name]
    want = EXPECTED[name]
    assert rc != "hang", f"{name}: no answer within {LIMIT} s"
    if isinstance(want, str):
        # Known HDF5 crashes in h5py's HDF5 (KNOWN.md): the process dies.
        assert rc == -getattr(signal, want), f"{name}: expected {want}, got exit {rc}: {text[-500:]}"
        return
    assert rc == 0, f"{name}: exit {rc}: {text[-2000:]}"
    got = json.loads(text)
    assert got.pop("open_files") == 0, f"{name}: a file left open"
    assert sorted(got) == sorted(want)
    for op, (outcome, arg) in want.items():
        kind, value = got[op]
        if outcome == "ok":
            assert kind == "ok", f"{name} {op}: {kind}: {value}"
            if op == "validate":
                assert [(r["path"], r["rows"], r["problem"]) for r in value] == [("/v", arg, None)]
            else:
                assert same(value, arg), f"{name} {op}: {value}"
        elif outcome == "problem":
            assert kind == "ok", f"{name} {op}: {kind}: {value}"
            assert len(value) == 1 and value[0]["rows"] == 0, value
            for w in arg:
                assert w in value[0]["problem"], f"{name} {op}: {w!r} not in {value[0]['problem']!r}"
        else:
            assert kind == "h5vec._errors." + outcome, f"{name} {op}: {kind}: {value}"
            for w in arg:
                assert w in value, f"{name} {op}: {w!r} not in {value!r}"


# --- a damaged collection behind compressed and uncompressed chunks --------

DAMAGE = r"""
import sys
import numpy as np
import h5vec

path, comp = sys.argv[1], sys.argv[2]
h5vec.save_vector(path, "v", {"name": np.array([f"s{i}" for i in range(20000)], dtype=object)},
                  compression=None if comp == "none" else comp)
data = bytearray(open(path, "rb").read())
# A full collection of the column's strings (thousands of objects and no
# free space: the metadata's strings are in the last one, which has some):
# its first object made free space (index 0) of size 0.
import re
for m in re.finditer(b"GCOL", bytes(data)):
    at = m.start()
    size = int.from_bytes(data[at + 8:at + 16], "little")
    p, objects = 16, 0
    while p + 16 <= size:
        idx = int.from_bytes(data[at + p:at + p + 2], "little")
        osize = int.from_bytes(data[at + p + 8:at + p + 16], "little")
        if idx == 0:
            break
        objects += 1
        p += 16 + ((osize + 7) & ~7)
    if p + 16 > size and objects >= 1000:
        data[at + 16:at + 18] = bytes(2)
        data[at + 24:at + 32] = bytes(8)
        break
else:
    raise SystemExit("no full collection of the column's strings")
open(path, "wb").write(bytes(data))
try:
    h5vec.open_vector(path, "v").read()
except h5vec.FormatError as e:
    print(e)
"""


@pytest.mark.parametrize("comp", ["none", "deflate", "lzf"])
def test_a_damaged_collection_is_an_error(tmp_path, comp):
    path = tmp_path / "damaged.h5"
    env = dict(os.environ, PYTHONPATH=str(WORKSPACE / "python"))
    try:
        p = subprocess.run([sys.executable, "-c", DAMAGE, str(path), comp], capture_output=True, text=True,
                           timeout=LIMIT, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{comp}: the read hung (HDF5's global heap loop)")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("$.name (/v/data/name/values): damaged global heap collection at byte "), p.stdout
    assert "is free space of size 0 (HDF5 would loop on it forever)" in p.stdout, p.stdout
