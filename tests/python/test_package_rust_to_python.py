"""Rust writes (examples/xlang_pkg.rs, examples/xlang.rs), the h5vec Python
package reads: exact values and dtypes, in numpy, pyarrow, pandas, polars and Dask."""

import json
import math

import h5py
import numpy as np
import polars as pl
import pyarrow as pa

import expected as X
import h5vec
from test_package_common import (LEVELS, bincode_str, deep, deep_json, event, flat, flat_json, inner,  # noqa: F401
                                 list_root, measurement, meta, nulls, opt_record_root, opt_root, pkg_exe, pkg_file)


def vec(pkg_file, name):
    return h5vec.open_vector(pkg_file, name)


def tuples_to_lists(row):
    row = dict(row)
    row["pairs"] = [[p["1"], p["2"]] for p in row["pairs"]]
    return row


LEVEL_LABELS = dict(LEVELS)  # Level's variant names in declaration order -> discriminants


def check_level_arrow(field, arr, want_codes):
    """An enum column with labels in Arrow: a string dictionary, the labels
    (name -> discriminant) in the field metadata, and every row's code."""
    assert field.type == pa.dictionary(pa.int32(), pa.string())
    assert field.metadata[b"h5vec.codec"] == b"HDF5Vectors.EnumCodec"
    labels = json.loads(field.metadata[b"h5vec.labels"])
    assert list(labels.items()) == LEVELS
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    assert arr.dictionary.to_pylist() == [n for n, _ in LEVELS]  # sorted by discriminant
    assert [labels[x] for x in arr.dictionary.take(arr.indices).to_pylist()] == want_codes


def test_list_vectors(pkg_file):
    assert h5vec.list_vectors(pkg_file) == sorted(
        ["appended", "dedup", "deep", "events", "flat", "list_root", "measurements", "nulls", "opt_record_root",
         "opt_root", "serded"])


def test_events_numpy(pkg_file):
    with vec(pkg_file, "events") as v:
        assert len(v) == 30
        assert v.columns == ["id", "name", "tags", "values"]
        d = v.read()
    want = [event(n) for n in range(30)]
    assert d["id"].dtype == np.uint64 and d["id"].tolist() == [w["id"] for w in want]
    assert d["name"].dtype == object and d["name"].tolist() == [w["name"] for w in want]
    assert [list(t) for t in d["tags"]] == [w["tags"] for w in want]
    assert all(isinstance(x, np.ndarray) and x.dtype == np.float32 for x in d["values"])
    assert [x.tolist() for x in d["values"]] == [w["values"] for w in want]


def test_events_arrow_types_and_values(pkg_file):
    t = vec(pkg_file, "events").to_arrow()
    assert t.schema.field("id").type == pa.uint64()
    assert t.schema.field("name").type == pa.large_string()
    assert t.schema.field("tags").type.equals(pa.large_list(pa.field("item", pa.large_string(), False)))
    assert t.schema.field("values").type.value_type == pa.float32()
    assert not any(f.nullable for f in t.schema)
    assert t.schema.field("name").metadata[b"h5vec.kind"] == b"vls_string"
    assert t.to_pylist() == [event(n) for n in range(30)]


def test_events_rows_and_columns(pkg_file):
    v = vec(pkg_file, "events")
    t = v.to_arrow(columns=["tags", "id"], rows=slice(7, 19))
    assert t.column_names == ["id", "tags"]
    assert t.to_pylist() == [{"id": event(n)["id"], "tags": event(n)["tags"]} for n in range(7, 19)]
    assert v.to_arrow(rows=(25, 1000)).num_rows == 5
    assert v.read(rows=range(3, 3))["name"].tolist() == []


def test_vls_strings_are_zero_copy_slices_of_the_heap(pkg_file):
    with h5py.File(pkg_file, "r") as f:
        heap = f["events/data/name/heap"][()].tobytes()
    arr = vec(pkg_file, "events").to_arrow(columns=["name"]).column("name").chunk(0)
    assert arr.buffers()[2].to_pybytes() == heap
    assert arr.to_pylist() == [event(n)["name"] for n in range(30)]


def test_dedup_vls_strings_gathered(pkg_file):
    v = vec(pkg_file, "dedup")
    assert v.read()["value"].tolist() == [f"w{n % 4}" for n in range(50)]
    assert v.to_arrow().column("value").to_pylist() == [f"w{n % 4}" for n in range(50)]


def test_nulls_numpy(pkg_file):
    d = vec(pkg_file, "nulls").read()
    want = [nulls(n) for n in range(30)]
    m = d["maybe_num"]
    assert isinstance(m, np.ma.MaskedArray) and m.dtype == np.float64
    assert m.mask.tolist() == [w["maybe_num"] is None for w in want]
    assert [None if k else float(x) for x, k in zip(m.data, m.mask)] == [w["maybe_num"] for w in want]
    arr = d["maybe_arr"]
    assert arr.dtype == np.float32 and arr.shape == (30, 3)
    assert arr.mask.all(axis=1).tolist() == [w["maybe_arr"] is None for w in want]
    a = d["maybe_inner.a"]
    assert a.dtype == np.int32 and a.mask.tolist() == [w["maybe_inner"] is None for w in want]
    assert d["maybe_inner.b"].tolist() == [w["maybe_inner"] and w["maybe_inner"]["b"] for w in want]
    assert [None if x is None else x.tolist() for x in d["maybe_list"]] == [w["maybe_list"] for w in want]
    for key in ("maybe_str", "maybe_vls", "maybe_char", "list_of_maybe"):
        assert [None if x is None else list(x) if isinstance(x, list) else x for x in d[key]] == \
            [w[key] for w in want], key
    b = d["maybe_bool"]
    assert b.dtype == bool and [None if k else bool(x) for x, k in zip(b.data, b.mask)] == \
        [w["maybe_bool"] for w in want]


def test_nulls_arrow_pandas_polars(pkg_file):
    v = vec(pkg_file, "nulls")
    want = [nulls(n) for n in range(30)]
    t = v.to_arrow()
    got = t.to_pylist()
    assert got == want
    assert all(f.nullable for f in t.schema if f.name != "list_of_maybe")
    assert t.schema.field("list_of_maybe").type.value_field.nullable
    df = v.to_pandas()
    assert str(df["maybe_num"].dtype) == "Float64" and df["maybe_num"].isna().sum() == 10
    assert str(df["maybe_bool"].dtype) == "boolean"
    assert str(df["maybe_inner.a"].dtype) == "Int32"
    assert df["maybe_inner.a"].isna().tolist() == [w["maybe_inner"] is None for w in want]
    assert [None if s is None or s != s else s for s in df["maybe_str"].tolist()] == [w["maybe_str"] for w in want]
    assert df["maybe_str"].dtype == type(df["maybe_str"])(["a"]).dtype  # pandas' default for strings
    p = v.to_polars()
    assert p.schema["maybe_num"] == pl.Float64
    assert p["maybe_inner"].to_list() == [w["maybe_inner"] for w in want]


def test_deep_lists(pkg_file):
    v = vec(pkg_file, "deep")
    got = [tuples_to_lists(r) for r in v.to_arrow().to_pylist()]
    assert got == [deep_json(n) for n in range(30)]  # enums by their labels
    levels = v.to_arrow(columns=["levels"])
    check_level_arrow(levels.schema.field("levels").type.value_field,
                      levels.column("levels").combine_chunks().flatten(),
                      [x for n in range(30) for x in deep(n)["levels"]])
    d = v.read(rows=slice(5, 6))
    assert d["levels"][0] == deep_json(5)["levels"] == ["Mid", "High"]
    assert [a.tolist() for a in d["grid"][0][0]] == [[500], [501, 502]]
    assert d["flags"][0].dtype == bool
    assert d["arrs"][0].shape == (2, 2) and d["arrs"][0].dtype == np.float64
    assert d["sparse"][0] == [-2]
    t = v.to_arrow()
    assert t.schema.field("sparse").type.value_field.nullable
    assert t.schema.field("sparse").type.value_field.metadata[b"h5vec.kind"] == b"fill_nullable"
    assert t.schema.field("points").type.value_type == pa.struct(
        [pa.field("a", pa.int32(), False), pa.field("b", pa.large_string(), False)])
    assert t.schema.field("arrs").type.value_type.list_size == 2


def test_flat_scalars_dtypes(pkg_file):
    v = vec(pkg_file, "flat")
    d = v.read()
    want = [flat(n) for n in range(20)]
    dtypes = {"i8_": np.int8, "u16_": np.uint16, "i32_": np.int32, "u64_": np.uint64, "f32_": np.float32,
              "f64_": np.float64, "flag": np.bool_}
    for k, dt in dtypes.items():
        assert d[k].dtype == dt, k
        assert d[k].tolist() == [w[k] for w in want], k
    # a labelled enum reads as its labels (python/README.md); the codes stay in the schema node
    assert d["level"].dtype == object and d["level"].tolist() == [flat_json(n)["level"] for n in range(20)]
    assert v.schema["children"][v.schema["field_names"].index("level")]["labels"] == LEVEL_LABELS
    check_level_arrow(v.to_arrow().schema.field("level"), v.to_arrow().column("level"), [w["level"] for w in want])
    cat = v.to_pandas(columns=["level"])["level"]
    assert list(cat.cat.categories) == [n for n, _ in LEVELS]
    assert cat.tolist() == [flat_json(n)["level"] for n in range(20)]
    assert d["letter"].tolist() == [w["letter"] for w in want]
    assert d["text"].tolist() == [w["text"] for w in want]
    assert d["unit"].tolist() == [None] * 20
    t = v.to_arrow()
    assert t.schema.field("unit").type == pa.null()
    assert t.schema.field("letter").type == pa.large_string()
    assert t.to_pylist() == [flat_json(n) for n in range(20)]


def test_serde_fields_json_and_blob(pkg_file):
    v = vec(pkg_file, "serded")
    d = v.read()
    assert d["meta"].tolist() == [json.dumps(meta(n), separators=(",", ":")) for n in range(6)]
    assert v.read(parse_json=True)["meta"].tolist() == [meta(n) for n in range(6)]
    assert d["payload"].tolist() == [bincode_str(f"payload-{n}") for n in range(6)]
    t = v.to_arrow()
    assert t.schema.field("payload").type == pa.large_binary()
    assert t.schema.field("meta").metadata[b"h5vec.codec"] == b"HDF5Vectors.JSONCodec"


def test_roots_that_are_not_records(pkg_file):
    d = vec(pkg_file, "opt_root").read()["value"]
    assert [None if k else float(x) for x, k in zip(d.data, d.mask)] == [opt_root(n) for n in range(10)]
    assert vec(pkg_file, "list_root").to_arrow().column("value").to_pylist() == [list_root(n) for n in range(10)]
    v = vec(pkg_file, "opt_record_root")
    assert v.columns == ["a", "b"]
    assert v.to_arrow().column("value").to_pylist() == [opt_record_root(n) for n in range(10)]
    assert v.read()["b"].tolist() == [inner(n)["b"] if n % 2 == 0 else None for n in range(10)]


def test_rows_past_count_are_ignored(pkg_file):
    v = vec(pkg_file, "appended")
    assert len(v) == 20
    with h5py.File(pkg_file, "r") as f:
        assert f["appended/data/id/values"].shape[0] == 25
    assert v.to_arrow().to_pylist() == [event(n) for n in range(20)]
    assert v.validate() == 20


def test_many_chunks_batches_pandas_dask(pkg_file):
    v = vec(pkg_file, "measurements")
    assert v.chunk_rows() == 512
    df = v.to_pandas()
    assert list(df.columns) == ["timestamp.weeks", "timestamp.microseconds", "temperature", "position"]
    assert df["timestamp.weeks"].dtype == np.int32
    assert df["timestamp.weeks"].tolist() == [measurement(i)["timestamp"]["weeks"] for i in range(5000)]
    assert str(df["position"].dtype).startswith("fixed_size_list<item: double>[3]")
    assert [list(p) for p in df["position"]] == [measurement(i)["position"] for i in range(5000)]
    parts = list(v.iter_batches(777, columns=["temperature"]))
    assert [len(p["temperature"]) for p in parts] == [777] * 6 + [338]
    assert np.concatenate([p["temperature"] for p in parts]).tolist() == [20.0 + i * 0.25 for i in range(5000)]
    batches = list(v.iter_batches(2000, format="arrow"))
    assert pa.Table.from_batches(batches).to_pylist() == [measurement(i) for i in range(5000)]
    frames = list(v.iter_batches(3000, format="pandas"))
    assert frames[1].index[0] == 3000 and len(frames[1]) == 2000
    import h5vec.dask
    dd = h5vec.dask.read_vector(str(pkg_file), "measurements", columns=["timestamp.weeks", "temperature"],
                                partition_rows=1000)
    assert dd.npartitions == 10 and dd.divisions[:3] == (0, 512, 1024)
    out = dd.compute()
    assert out["temperature"].tolist() == [20.0 + i * 0.25 for i in range(5000)]
    assert out.index.tolist() == list(range(5000))


def test_schema_tree_plain_objects(pkg_file):
    s = vec(pkg_file, "nulls").schema
    assert s["kind"] == "record" and s["field_names"][0] == "maybe_num"
    assert s["children"][0]["kind"] == "nullable"
    assert s["children"][0]["children"][0]["encoded_type"] == "Float64"
    assert s["children"][5]["codec"] == "h5vec.PlaceholderCodec"


# ---------------------------------------------------------------------------
# The files of examples/xlang.rs (conftest.py's rust_dir fixture)


def test_all_scalars(rust_dir):
    v = h5vec.open_vector(rust_dir / "scalars.h5", "all")
    d = v.read()
    for name, (dt, _, _, _) in X.INT_TYPES.items():
        assert d[name].dtype == np.dtype(dt)
        assert d[name].tolist() == [X.int_value(name, n) for n in range(X.N_SCALARS)]
    assert d["float32"].dtype == np.float32
    assert d["float32"].view(np.uint32).tolist() == \
        [np.float32(X.f32_value(n)).view(np.uint32) for n in range(X.N_SCALARS)]
    assert d["float64"].tolist() == [X.f64_value(n) for n in range(X.N_SCALARS)]
    assert d["flag"].dtype == np.bool_ and d["flag"].tolist() == [X.bool_value(n) for n in range(X.N_SCALARS)]
    assert d["letter"].tolist() == [X.char_value(n) for n in range(X.N_SCALARS)]
    assert d["text"].tolist() == [X.text_value(n) for n in range(X.N_SCALARS)]
    assert d["level"].dtype == object and d["level"].tolist() == [X.level_value(n)[0] for n in range(X.N_SCALARS)]
    node = v.schema["children"][v.schema["field_names"].index("level")]
    assert node["labels"] == dict(X.LEVELS)


def test_special_floats_bitwise(rust_dir):
    d = h5vec.open_vector(rust_dir / "scalars.h5", "f64_special").read()["value"]
    want = np.array([math.nan, math.inf, -math.inf, -0.0, 5e-324])
    assert d.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_string_layouts(rust_dir):
    texts = [X.text_value(n) for n in range(X.N_SCALARS)]
    for name in ("string", "string_vls"):
        v = h5vec.open_vector(rust_dir / "scalars.h5", name)
        assert v.read()["value"].tolist() == texts
        assert v.to_pandas()["value"].tolist() == texts
    assert h5vec.open_vector(rust_dir / "scalars.h5", "char").to_arrow().column("value").to_pylist() == \
        [X.char_value(n) for n in range(X.N_SCALARS)]


def test_dense(rust_dir):
    m = h5vec.open_vector(rust_dir / "dense.h5", "mat").read()["value"]
    assert m.shape == (10, 3, 2) and m.dtype == np.int32
    assert all(np.array_equal(m[n], X.mat(n)) for n in range(10))
    t = h5vec.open_vector(rust_dir / "dense.h5", "mat").to_arrow()
    assert t.schema.field("value").type == pa.list_(pa.list_(pa.int32(), 2), 3)
    assert t.column("value").to_pylist()[4] == X.mat(4).tolist()
    fl = h5vec.open_vector(rust_dir / "dense.h5", "flags").read()["value"]
    assert fl.dtype == np.bool_ and fl.tolist() == [X.flags(n).tolist() for n in range(16)]


def test_records_tuples_constants_blob(rust_dir):
    f = rust_dir / "records.h5"
    t = h5vec.open_vector(f, "tuples").read()
    assert list(t) == ["1", "2", "3"]
    assert t["3"].tolist() == [X.text_value(n) for n in range(12)]
    n = h5vec.open_vector(f, "nested").to_arrow().to_pylist()
    assert n == [{"1": a, "2": {"1": b, "2": c}} for a, (b, c) in (X.nested(k) for k in range(9))]
    assert len(h5vec.open_vector(f, "markers")) == 7
    assert h5vec.open_vector(f, "markers").read()["value"].tolist() == [None] * 7
    a = h5vec.open_vector(f, "annotated").read(parse_json=True)
    assert a["extra"].tolist() == [X.bincode_extra(X.extra(k)) for k in range(6)]
    assert a["meta"].tolist() == [X.meta(k) for k in range(6)]
    assert a["note"].tolist() == [f"note {k} ✓" for k in range(6)]
    assert h5vec.open_vector(f, "accent").columns == ["température", "名前"]


def test_compressed_filters(rust_dir):
    import hdf5plugin  # noqa: F401  (Blosc for h5py)
    f = rust_dir / "storage.h5"
    xs = np.sin(np.arange(200_000) * 0.001)
    for name in ("lzf", "deflate", "zstd"):
        got = h5vec.open_vector(f, name).read()["value"]
        assert np.array_equal(got, xs), name
    m = h5vec.open_vector(f, "mixed")
    assert len(m) == 70_000 and m.validate() == 70_000


def test_big_vector_and_empty(rust_dir):
    v = h5vec.open_vector(rust_dir / "big.h5", "big")
    d = v.read()
    assert np.array_equal(d["id"], np.arange(200_000, dtype=np.uint64))
    assert np.array_equal(d["flag"], np.arange(200_000) % 3 == 0)
    e = h5vec.open_vector(rust_dir / "measurements.h5", "empty")
    assert len(e) == 0 and e.to_arrow().num_rows == 0 and len(e.to_pandas()) == 0
