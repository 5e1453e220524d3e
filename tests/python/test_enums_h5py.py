"""Enums with data (unions, SPEC.md section 4.4) and labelled fieldless
enums (section 2) written by examples/xlang_enums.rs, read with plain h5py
+ numpy: the TAG dataset's HDF5 enum through `h5py.check_enum_dtype`, each
variant's columns through INDEX, and the labels beside `encoded_type`.
Expected values are recomputed here from the row index."""

import json
import os
import subprocess

import h5py
import numpy as np
import pytest

from conftest import WORKSPACE

N = 9
VARIANTS = {"Idle": 0, "Tick": 1, "Fill": 2, "note": 3}


def event(i):
    k = i % 4
    if k == 0:
        return ("Idle", {})
    if k == 1:
        return ("Tick", {"1": i * 0.5})
    if k == 2:
        return ("Fill", {"qty": 10 - i, "price": 1.25 * i})
    return ("note", {"1": "n%d" % i, "2": list(range(i % 3))})


@pytest.fixture(scope="module")
def enums_file(tmp_path_factory):
    cmd = ["cargo", "build", "--quiet", "--example", "xlang_enums", "--message-format=json-render-diagnostics"]
    if os.environ.get("XLANG_CARGO_PROFILE") == "release":
        cmd.append("--release")
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0, "building examples/xlang_enums.rs failed"
    exe = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "xlang_enums":
            exe = msg.get("executable") or exe
    assert exe
    out = tmp_path_factory.mktemp("enums") / "enums.h5"
    run = subprocess.run([exe, str(out)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    with h5py.File(out, "r") as f:
        yield f


def count(f):
    z = int(f["rows/metadata/count"][()])
    assert z == N
    return z


def field(var, name, i):
    """Row `i` of field `name` of a variant group: a value, or a list."""
    g = var[name]
    if "OFFSETS" in g:
        a, b = g["OFFSETS"][i], g["OFFSETS"][i + 1]
        return g["VALUES"][a:b].tolist()
    v = g["values"][i]
    return v.decode() if isinstance(v, bytes) else v.item()


def decode(g, z):
    """The SPEC.md section 4.4 recipe: rows as (variant name, fields)."""
    names = {v: k for k, v in h5py.check_enum_dtype(g["TAG"].dtype).items()}
    tag = g["TAG"][:z]
    index = g["INDEX"][:z]
    return [(names[t], {k: field(g[names[t]], k, int(i)) for k in g[names[t]]}) for t, i in zip(tag, index)]


def test_tag_is_an_hdf5_enum_of_the_variant_names(enums_file):
    g = enums_file["rows/data/event"]
    assert h5py.check_enum_dtype(g["TAG"].dtype) == VARIANTS
    assert g["TAG"].dtype == np.uint8
    assert g["INDEX"].dtype == np.uint64
    assert sorted(g) == ["Fill", "INDEX", "Idle", "TAG", "Tick", "note"]
    assert len(g["Idle"]) == 0  # a unit variant stores nothing


def test_union_rows_decode_exactly(enums_file):
    z = count(enums_file)
    g = enums_file["rows/data/event"]
    assert decode(g, z) == [event(i) for i in range(N)]
    # INDEX counts each variant's rows in row order.
    assert g["INDEX"][:z].tolist() == [i // 4 for i in range(N)]
    # Vectorized, one variant: the rows of Fill and their prices.
    tag = g["TAG"][:z]
    fill = tag == h5py.check_enum_dtype(g["TAG"].dtype)["Fill"]
    price = g["Fill/price/values"][:][g["INDEX"][:z][fill]]
    assert price.tolist() == [1.25 * i for i in range(N) if i % 4 == 2]


def test_optional_union_has_a_mask_and_placeholder_rows(enums_file):
    z = count(enums_file)
    g = enums_file["rows/data/maybe"]
    mask = g["MASK"][:z].astype(bool)
    assert mask.tolist() == [i % 3 != 0 for i in range(N)]
    rows = decode(g, z)
    for i in range(N):
        if mask[i]:
            assert rows[i] == event(i + 1), i
        else:
            assert rows[i] == ("Idle", {}), i  # the first variant's placeholder


def test_list_of_unions(enums_file):
    z = count(enums_file)
    g = enums_file["rows/data/history"]
    off = g["OFFSETS"][: z + 1]
    assert off.tolist() == [0] + np.cumsum([i % 3 for i in range(N)]).tolist()
    values = g["VALUES"]
    assert values.attrs["CLASS"] == b"UNION_VALUES" or values.attrs["CLASS"] == "UNION_VALUES"
    items = decode(values, int(off[-1]))
    for i in range(N):
        assert items[off[i]:off[i + 1]] == [event(i + k) for k in range(i % 3)], i


def test_labels_map_codes_to_names(enums_file):
    z = count(enums_file)
    codes = enums_file["rows/data/status/values"][:z]
    assert codes.dtype == np.int16
    schema = enums_file["rows/metadata/schema"]
    names = [n.decode() for n in schema["field_names"][:]]
    node = schema["children/%d" % (names.index("status") + 1)]
    labels = dict(zip(node["variant_values"][:].tolist(), [n.decode() for n in node["variant_names"][:]]))
    assert labels == {-1: "New", 3: "Open", 300: "Closed"}
    assert [labels[c] for c in codes.tolist()] == [["New", "Open", "Closed"][i % 3] for i in range(N)]
    # The union node names its variants the same way (values 0, 1, ...).
    ev = schema["children/%d" % (names.index("event") + 1)]
    assert [n.decode() for n in ev["variant_names"][:]] == list(VARIANTS)
    assert ev["variant_values"][:].tolist() == [0, 1, 2, 3]
    assert ev["kind"][()] == b"union"
