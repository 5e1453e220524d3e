"""Every ```python block of SPEC.md sections 3 to 5, run against the file of
every kind that examples/xlang_matrix.rs writes, its results compared with the
expected values (EXPECTED.json, canonical form of tests/python/matrix_expected.py).

Section 5's recipes use `f` (the open file), `z` (the count), `g` (the node's data
group) and `s` (its schema node group) and leave the rows in `x`; each is run for
the vectors of its kind below. The examples of section 4 name their own vectors
(`v`, `e`, `m`, fields such as `placed_at`): they are run with those names
replaced by the matrix's (listed per block). A block no case covers fails the test,
so a recipe added to SPEC.md needs a case here.
"""

import re
import uuid

import h5py
import numpy as np
import pytest

import matrix_expected as mx
from conftest import WORKSPACE

SPEC = (WORKSPACE / "SPEC.md").read_text()


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """(the file of every kind, EXPECTED.json, {name: vector}) from examples/xlang_matrix.rs."""
    return mx.write_matrix(tmp_path_factory.mktemp("recipes"))


def blocks(first, last):
    """(section heading, code) of every ```python block from section `first` up to (not including) `last`."""
    start = SPEC.index(f"\n## {first}.")
    end = SPEC.index(f"\n## {last}.")
    text = SPEC[start:end]
    out = []
    heading = None
    for m in re.finditer(r"^(#{2,3} [^\n]*)$|^```python\n(.*?)^```$", text, re.M | re.S):
        if m.group(1):
            heading = m.group(1)
        else:
            out.append((heading, m.group(2)))
    return out


# Section 5: the first comment line of a block -> the vectors (and field) it is run on:
# (vector, field path or None for the root). `x` is compared with the rows of that field.
SECTION5 = {
    "# scalar numbers": [("i8", None), ("u64", None), ("i64", None), ("f32", None), ("f64", None), ("f16", None),
                         ("complex64", None), ("complex128", None), ("record_tuple_struct", "1")],
    "# scalar Bool": [("bool", None), ("record_tuple", "3")],
    "# scalar char": [("char", None)],
    "# scalar String": [("string", None), ("json", "meta"), ("record_tuple", "2")],
    "# scalar fieldless enum": [("enum_i16", None), ("enum_u8", None)],
    "# dense": [("dense_f64", None), ("dense_nested", None), ("dense_u8", None), ("record_struct", "tags")],
    "# record": [("record_struct", "at"), ("record_tuple_struct", None)],
    "# constant": [("constant_unit", None), ("constant_unit_struct", None), ("constant_phantom", None)],
    "# blob": [("blob", "payload")],
    "# vls_string": [("vls_string", None), ("vls_option_string", None), ("vls_field", "name"),
                     ("vls_field", "maybe"), ("vls_json", "meta")],
    "# list Vec<T>": [("list_i32", None), ("list_array", None)],
    "# list of String": [("list_string", None)],
    "# nullable": [("option_i32", None), ("option_f64", None)],
    "# union": [("union", None), ("union_field", "shape")],
    "# map": [("map_hash", None), ("map_string_f64", None)],
    "# instants": [("datetime_utc", None), ("system_time", None), ("naive_datetime", None),
                   ("datetime_fixed", "instant")],
    "# dates": [("naive_date", None)],
    "# durations": [("duration", None), ("time_delta", None), ("naive_time", None)],
    "# offset date-times": [("datetime_fixed", None)],
    "# uuid": [("uuid", None)],
}

# Section 4's examples: (heading prefix, substitutions of their names by the matrix's, bindings, checks).
# A check is (variable, vector, field path or None, rows: a slice or a row index).
SECTION4 = {
    "### 4.1": ([("v/data/name", "vls_field/data/name")], {"z": ("vls_field",)},
                [("names", "vls_field", "name", slice(None))]),
    "### 4.2": ([("e/data/values", "list_i32/data")], {"z": ("list_i32",), "i": 1},
                [("row_i", "list_i32", None, 1)]),
    "### 4.4": ([("v/data/event", "union_field/data/shape"), ("v/metadata", "union_field/metadata"),
                 ('"Fill"', '"Circle"'), ("Fill/price", "Circle/r")], {},
                [("rows", "union_field", "shape", slice(None)), ("price", "union_field", "shape.Circle.r",
                                                                   "Circle")]),
    "### 4.5": ([("m/data", "map_hash/data")], {"z": ("map_hash",), "i": 0},
                [("row_i", "map_hash", None, 0)]),
    "### 4.6": ([("v/data/placed_at", "datetime_utc/data"), ("v/data/day", "naive_date/data"),
                 ("v/data/took", "duration/data"), ("v/data/local", "datetime_fixed/data")], {"z": 4},
                [("ts", "datetime_utc", None, slice(0, 4)), ("day", "naive_date", None, slice(0, 4)),
                 ("took", "duration", None, slice(0, 4)), ("local", "datetime_fixed", None, "local")]),
    "### 4.7": ([("v/data/id", "uuid/data")], {"z": ("uuid",)}, [("ids", "uuid", None, slice(None))]),
    "### 4.8": ([("v/data/level", "f16/data"), ("v/data/z", "complex128/data")], {"z": 3},
                [("h", "f16", None, slice(0, 3)), ("c", "complex128", None, slice(0, 3))]),
}


def field(vec, path):
    """(type, rows) of a vector's field `a.b` (None: the root)."""
    ty, rows = vec["type"], vec["rows"]
    for part in (path.split(".") if path else []):
        if ty["t"] == "offset_datetime":
            ty = {"t": "instant", "tz": "UTC"} if part == "instant" else {"t": "i32"}
        else:
            ty = dict(ty["fields"])[part]
        rows = [r[part] for r in rows]
    return ty, rows


def schema_group(f, name, path):
    s = f[name]["metadata/schema"]
    for part in (path.split(".") if path else []):
        names = [n.decode() for n in s["field_names"][:]]
        s = s[f"children/{names.index(part) + 1}"]
    return s


def h5py_plain(ty, v):
    """What h5py gives -> the plain forms canon() takes: variable-length strings are bytes in h5py (SPEC 3.1),
    unions the recipes' (name, fields) pairs."""
    t = ty["t"]
    if v is None:
        return None
    if t == "option":
        return h5py_plain(ty["some"], v)
    if t in ("string", "char", "json") and isinstance(v, bytes):
        return v.decode()
    if t in ("list", "array"):
        return [h5py_plain(ty["item"], e) for e in v]
    if t in ("struct", "tuple") and isinstance(v, dict):
        return {n: h5py_plain(ft, v[n]) for n, ft in ty["fields"]}
    if t == "union" and isinstance(v, tuple):
        name, fields = v
        f = dict(ty["variants"])[name]
        return mx.UnionValue(name, {n: h5py_plain(ft, fields[n]) for n, ft in f["fields"]} if f else {})
    if t == "map":
        return [(h5py_plain(ty["key"], k), h5py_plain(ty["value"], x)) for k, x in v]
    return v


def compare(ty, got, want, what):
    got = list(got)
    assert len(got) == len(want), f"{what}: {len(got)} rows, expected {len(want)}"
    mx.check_rows(ty, [h5py_plain(ty, v) for v in got], want)


SECTION5_BLOCKS = [b for b in blocks(5, 6)]
ALL_BLOCKS = blocks(3, 6)


def test_every_block_has_a_case():
    """Every python block of sections 3-5 is run below (no recipe goes untested)."""
    for heading, code in ALL_BLOCKS:
        first = code.splitlines()[0]
        if heading.startswith("### Reading each kind"):
            assert any(first.startswith(k) for k in SECTION5), f"no case for the section 5 recipe {first!r}"
        else:
            assert any(heading.startswith(k) for k in SECTION4), f"no case for the block of {heading!r}"
    assert len(SECTION5_BLOCKS) == len(SECTION5)


CASES5 = [(key, name, path) for key, cases in SECTION5.items() for name, path in cases]


@pytest.mark.parametrize("key,name,path", CASES5, ids=[f"{k[2:].split(' ')[0]}-{n}-{p or 'root'}"
                                                        for k, n, p in CASES5])
def test_section5_recipe(matrix, key, name, path):
    h5, _, vecs = matrix
    code = next(c for h, c in SECTION5_BLOCKS if c.splitlines()[0].startswith(key))
    ty, want = field(vecs[name], path)
    with h5py.File(h5, "r") as f:
        z = int(f[name]["metadata/count"][()])
        g = f[name]["data"]
        for part in (path.split(".") if path else []):
            g = g[part]
        ns = {"f": f, "z": z, "g": g, "s": schema_group(f, name, path), "np": np, "h5py": h5py, "uuid": uuid}
        exec(code, ns)
        compare(ty, ns["x"], want, f"{key} on {name}.{path or ''}")


@pytest.mark.parametrize("prefix", list(SECTION4))
def test_section4_example(matrix, prefix):
    h5, _, vecs = matrix
    subs, binds, checks = SECTION4[prefix]
    found = [c for h, c in ALL_BLOCKS if h.startswith(prefix)]
    assert len(found) == 1, f"{len(found)} python blocks under {prefix}"
    code = found[0]
    for old, new in subs:
        assert old in code, f"{prefix}: {old!r} is no longer in the example"
        code = code.replace(old, new)
    with h5py.File(h5, "r") as f:
        ns = {"f": f, "np": np, "h5py": h5py, "uuid": uuid}
        for k, v in binds.items():
            ns[k] = int(f[v[0]]["metadata/count"][()]) if isinstance(v, tuple) else v
        exec(code, ns)
    for var, name, path, rows in checks:
        vec = vecs[name]
        if rows == "local":  # 4.6: local time = instant + offset, as datetime64[ns]
            want = [r["instant"] + r["offset_seconds"] * 10**9 for r in vec["rows"][:4]]
            got = [int(v.astype("int64")) for v in ns[var]]
            assert got == want, f"{prefix} {var}: {got} != {want}"
            continue
        if rows == "Circle":  # 4.4: the vectorised prices of one variant
            want = [r["shape"]["r"] for r in vec["rows"] if r["shape"]["variant"] == "Circle"]
            compare({"t": "f64"}, ns[var], want, f"{prefix} {var}")
            continue
        ty, want = field(vec, path)
        if isinstance(rows, int):
            ty = {"t": "list", "item": ty["item"]} if ty["t"] == "list" else ty
            got = ns[var]
            if isinstance(got, dict):  # 4.5 builds a dict of the row's entries
                got = list(got.items())
            compare(ty, [got], [want[rows]], f"{prefix} {var}")
        else:
            compare(ty, ns[var], want[rows], f"{prefix} {var}")
