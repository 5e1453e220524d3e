"""Files written the way HDF5.jl + HDF5Vectors write them (plain h5py, see
hdf5vectors.py), read without any Rust type by the `h5vec` command:
`h5vec convert FILE:NAME out.arrow` (h5vec::arrow::read_vector, SPEC.md
section 11), read back with pyarrow, exact types and values; `h5vec
validate` accepts them; `h5vec cat --format jsonl` prints the same rows.

The binary comes from $H5VEC_BIN, else target/debug/h5vec (scripts/test.sh
builds it and sets H5VEC_BIN, so these tests run there).
"""

import json
import subprocess

import h5py
import numpy as np
import pytest

import expected as X
import hdf5vectors as H
from test_cli_parquet import H5VEC
from test_python_to_rust import all_scalars_schema, jl_measurement, write_measurements

pa = pytest.importorskip("pyarrow")
ipc = pytest.importorskip("pyarrow.ipc")

pytestmark = pytest.mark.skipif(H5VEC is None, reason="no h5vec binary (set H5VEC_BIN)")


def run(*args):
    return subprocess.run([str(H5VEC), *map(str, args)], capture_output=True, text=True, timeout=120)


def to_arrow(tmp_path, path, name):
    out = tmp_path / f"{name}.arrow"
    r = run("convert", f"{path}:{name}", out)
    assert r.returncode == 0, r.stderr
    with ipc.open_file(out) as f:
        return f.read_all()


def validate_ok(path):
    r = run("validate", path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_measurements_columns_longer_than_count(tmp_path):
    path = tmp_path / "jl_m.h5"
    n = 9
    # Every column has junk rows past `count`: never part of the batch.
    write_measurements(path, n, extra={"temperature/values": 3, "position/values": 1})
    t = to_arrow(tmp_path, path, "measurements")
    assert t.num_rows == n
    assert t.schema.field("timestamp").type == pa.struct([pa.field("weeks", pa.int32(), False),
                                                             pa.field("microseconds", pa.int64(), False)])
    assert t.schema.field("temperature").type == pa.float64()
    assert t.schema.field("position").type == pa.list_(pa.field("item", pa.float64(), nullable=False), 3)
    want = [jl_measurement(i) for i in range(n)]
    assert t.to_pylist() == want
    validate_ok(path)
    r = run("cat", path, "measurements", "--format", "jsonl")
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == want


def test_all_scalars(tmp_path):
    path = tmp_path / "jl_all.h5"
    n = X.N_SCALARS
    recs = [X.all_scalars(k) for k in range(n)]

    def fill(d):
        for name, (dtype, *_rest) in X.INT_TYPES.items():
            H.write_column(d, f"{name}/values", [r[name] for r in recs], dtype=dtype)
        H.write_column(d, "float32/values", [r["float32"] for r in recs], dtype="<f4")
        H.write_column(d, "float64/values", [r["float64"] for r in recs], dtype="<f8")
        H.write_bitfield(d.create_group("flag"), "values", [int(r["flag"]) for r in recs])
        H.write_column(d, "letter/values", [ord(r["letter"]) for r in recs], dtype="<i4")
        H.write_column(d, "text/values", [r["text"] for r in recs], dtype="str")
        H.write_column(d, "level/values", [r["level"][1] for r in recs], dtype="<i2")

    with h5py.File(path, "w") as f:
        H.write_vector(f, "all", all_scalars_schema(), n, fill)
    t = to_arrow(tmp_path, path, "all")
    types = {f.name: f.type for f in t.schema}
    for name, (dtype, *_rest) in X.INT_TYPES.items():
        assert types[name] == pa.from_numpy_dtype(np.dtype(dtype)), name
    assert types["float32"] == pa.float32() and types["float64"] == pa.float64()
    assert types["flag"] == pa.bool_() and types["letter"] == pa.string()
    assert types["text"] == pa.large_string() and types["level"] == pa.int16()
    for k, (g, w) in enumerate(zip(t.to_pylist(), recs)):
        assert np.float32(g.pop("float32")) == w.pop("float32"), k
        assert np.float64(g.pop("float64")).tobytes() == np.float64(w.pop("float64")).tobytes(), k
        w["level"] = w["level"][1]  # the discriminant: no labels stored
        assert g == w, k
    validate_ok(path)


def test_dense_matrix_tuple_constant_json(tmp_path):
    path = tmp_path / "jl_mixed.h5"
    n = 6
    mats = np.stack([X.mat(k) for k in range(n)])  # h5py (Z, 3, 2): Julia 2x3 matrices
    schema = H.record("Main.Mixed", [
        ("m", H.dense("Int32", [2, 3], "StaticArraysCore.SMatrix{2, 3, Int32, 6}")),
        ("t", H.record("Tuple{Int32, String}", [("1", H.scalar("Int32")), ("2", H.scalar("String"))], H.TUPLE)),
        ("marker", H.constant("Main.Marker")),
        ("meta", H.scalar("String", "Main.Meta", H.JSON)),
    ])

    def fill(d):
        H.write_column(d, "m/values", mats, chunked=False)
        H.write_column(d, "t/1/values", [X.tuple_value(k)[0] for k in range(n)], dtype="<i4")
        H.write_column(d, "t/2/values", [X.tuple_value(k)[2] for k in range(n)], dtype="str")
        d.create_group("marker")
        H.write_column(d, "meta/values", [json.dumps(X.meta(k), indent=1) for k in range(n)], dtype="str")

    with h5py.File(path, "w") as f:
        H.write_vector(f, "x", schema, n, fill)
    t = to_arrow(tmp_path, path, "x")
    fld = t.schema.field
    assert fld("m").type == pa.list_(pa.field("item", pa.list_(pa.field("item", pa.int32(), False), 2), False), 3)
    assert fld("t").type == pa.struct([pa.field("1", pa.int32(), False), pa.field("2", pa.large_string(), False)])
    assert fld("marker").type == pa.null() and fld("marker").nullable
    # pyarrow turns the canonical extension's metadata into its JSON type.
    assert fld("meta").type.extension_name == "arrow.json"
    assert fld("meta").type.storage_type == pa.large_string()
    rows = t.to_pylist()
    assert [r["m"] for r in rows] == mats.tolist()
    assert [r["t"] for r in rows] == [{"1": X.tuple_value(k)[0], "2": X.tuple_value(k)[2]} for k in range(n)]
    assert [r["marker"] for r in rows] == [None] * n
    # The stored JSON text, as written (not re-encoded).
    assert [r["meta"] for r in rows] == [json.dumps(X.meta(k), indent=1) for k in range(n)]
    validate_ok(path)


def test_validate_reports_invalid_char(tmp_path):
    path = tmp_path / "jl_bad_char.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "chars", H.scalar("Int32", "Char", H.CHAR), 3,
                       lambda d: H.write_column(d, "values", [65, 0xD800, 66], dtype="<i4"))
    r = run("validate", path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "chars" in r.stdout and "$" in r.stdout, r.stdout
    assert "panicked" not in r.stderr
