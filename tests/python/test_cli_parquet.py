"""pyarrow reads the Parquet files `h5vec convert` writes, with the values a
Rust typed load (`xlang read`, examples/xlang.rs) gives for the same vector.

The `h5vec` binary is $H5VEC_BIN if that file exists, else target/debug/h5vec
under the repository root (or $CARGO_TARGET_DIR; scripts/test.sh builds it
with the workspace); without either these tests are skipped.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

WORKSPACE = Path(__file__).resolve().parent.parent.parent


def _candidates():
    env = os.environ.get("H5VEC_BIN")
    if env:
        yield Path(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR", WORKSPACE / "target"))
    if not target.is_absolute():
        target = WORKSPACE / target
    yield target / "debug" / "h5vec"


H5VEC = next((p for p in _candidates() if p.is_file()), None)

pytestmark = pytest.mark.skipif(
    H5VEC is None,
    reason="no h5vec binary at $H5VEC_BIN or target/debug/h5vec: build it with `cargo build -p h5vec-cli`",
)


def f32(x):
    return float(np.float32(x))


def same_float(a, b):
    """Bit for bit (so -0.0 differs from 0.0)."""
    return np.float64(a).tobytes() == np.float64(b).tobytes()


def as_arrow_rows(kind, typed):
    """The rows pyarrow gives for the values a typed load gave (serde JSON),
    by SPEC.md section 11: a non-record root is one column `value`, tuples
    are records with fields "1", "2", ..., labelled enums their label (a
    dictionary keyed by position in variant_names), f32 the nearest
    float32."""
    if kind == "measurement":
        return typed
    if kind == "all":
        return [dict(r, float32=f32(r["float32"])) for r in typed]
    if kind == "level":
        return [{"value": v} for v in typed]
    if kind == "vec3":
        return [{"value": [f32(x) for x in v]} for v in typed]
    if kind in ("tuple", "pair"):
        return [{str(i + 1): x for i, x in enumerate(v)} for v in typed]
    if kind == "tagged":
        return typed
    return [{"value": v} for v in typed]


CASES = [
    ("measurements.h5", "measurements", "measurement"),
    ("measurements.h5", "empty", "measurement"),
    ("scalars.h5", "all", "all"),
    ("scalars.h5", "float64", "f64"),
    ("scalars.h5", "int64", "i64"),
    ("scalars.h5", "bool", "bool"),
    ("scalars.h5", "char", "char"),
    ("scalars.h5", "string", "string"),
    ("scalars.h5", "string_vls", "string"),
    ("scalars.h5", "level", "level"),
    ("dense.h5", "vec3", "vec3"),
    ("dense.h5", "mat", "mat"),
    ("records.h5", "tuples", "tuple"),
    ("records.h5", "pairs", "pair"),
    ("records.h5", "markers", "marker"),
    ("records.h5", "tagged", "tagged"),
]


def convert(src, dst, *args):
    proc = subprocess.run([str(H5VEC), "convert", src, str(dst), *args], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"h5vec convert {src} {dst} failed (exit {proc.returncode}):\n{proc.stderr}"
    assert proc.stdout == "" and proc.stderr == ""


def assert_rows_equal(got, want):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_value_equal(g, w, f"row {i}")


def assert_value_equal(g, w, where):
    if isinstance(w, float):
        assert isinstance(g, float) and same_float(g, w), f"{where}: {g!r} != {w!r}"
    elif isinstance(w, dict):
        assert isinstance(g, dict) and list(g) == list(w), f"{where}: fields {list(g)} != {list(w)}"
        for k in w:
            assert_value_equal(g[k], w[k], f"{where}.{k}")
    elif isinstance(w, list):
        assert isinstance(g, list) and len(g) == len(w), f"{where}: {g!r} != {w!r}"
        for j, (a, b) in enumerate(zip(g, w)):
            assert_value_equal(a, b, f"{where}[{j}]")
    else:
        assert type(g) is type(w) and g == w, f"{where}: {g!r} != {w!r}"


@pytest.mark.parametrize("file,name,kind", CASES)
def test_parquet_from_the_cli_holds_the_typed_values(tmp_path, rust_dir, xlang_read, file, name, kind):
    typed = xlang_read(rust_dir / file, name, kind).values()
    out = tmp_path / f"{name}.parquet"
    convert(f"{rust_dir / file}:{name}", out)
    table = pq.read_table(out)
    assert table.num_rows == len(typed)
    assert_rows_equal(table.to_pylist(), as_arrow_rows(kind, typed))


def test_parquet_types_follow_the_mapping(tmp_path, rust_dir):
    out = tmp_path / "all.parquet"
    convert(f"{rust_dir / 'scalars.h5'}:all", out)
    schema = pq.read_schema(out)
    want = {
        "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
        "uint8": pa.uint8(), "uint16": pa.uint16(), "uint32": pa.uint32(), "uint64": pa.uint64(),
        "float32": pa.float32(), "float64": pa.float64(), "flag": pa.bool_(), "letter": pa.string(),
        "text": pa.large_string(), "level": pa.dictionary(pa.int32(), pa.string()),
    }
    assert {f.name: f.type for f in schema} == want
    assert not any(f.nullable for f in schema)
    # Every field carries its h5vec schema node (SPEC.md section 11).
    for f in schema:
        assert b"h5vec.schema" in f.metadata, f.name
    out = tmp_path / "mat.parquet"
    convert(f"{rust_dir / 'dense.h5'}:mat", out)
    row = pa.list_(pa.field("item", pa.int32(), nullable=False), 2)
    assert pq.read_schema(out).field("value").type == pa.list_(pa.field("item", row, nullable=False), 3)


@pytest.mark.parametrize("compression,codec", [("zstd:5", "ZSTD"), ("snappy", "SNAPPY"), ("none", "UNCOMPRESSED"),
                                               (None, "ZSTD")])
def test_parquet_compression(tmp_path, rust_dir, xlang_read, compression, codec):
    out = tmp_path / "m.parquet"
    args = [] if compression is None else ["--compression", compression]
    convert(f"{rust_dir / 'measurements.h5'}:measurements", out, *args)
    meta = pq.ParquetFile(out).metadata
    assert meta.row_group(0).column(0).compression == codec
    typed = xlang_read(rust_dir / "measurements.h5", "measurements", "measurement").values()
    assert_rows_equal(pq.read_table(out).to_pylist(), typed)
