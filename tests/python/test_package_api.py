"""The package's API beyond the cross-language tests: inputs, selections,
fallbacks without pyarrow, enum labels, list_vectors."""

import h5py
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import h5vec
from h5vec import _columns


def test_open_vector_accepts_groups_and_closes_owned_files(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        g = f.create_group("inner/deeper")
        h5vec.save_vector(g, "x", {"a": np.arange(5, dtype=np.int16)})
        h5vec.save_vector(f, "y", np.arange(3.0))
        assert h5vec.list_vectors(f) == ["inner/deeper/x", "y"]
        v = h5vec.open_vector(g, "x")
        assert len(v) == 5 and v.read()["a"].dtype == np.int16
    with h5vec.open_vector(path, "y") as v:
        f = v.group.file
        assert v.read()["value"].tolist() == [0.0, 1.0, 2.0]
    assert not f.id.valid
    with pytest.raises(KeyError):
        h5vec.open_vector(path, "nope")


def test_column_selection_and_rows(tmp_path):
    path = tmp_path / "s.h5"
    h5vec.save_vector(path, "v", {"a.b": np.arange(10), "a.c": np.arange(10.0), "d": np.arange(10, dtype=np.uint8)})
    v = h5vec.open_vector(path, "v")
    assert v.columns == ["a.b", "a.c", "d"]
    assert list(v.read(columns=["a"])) == ["a.b", "a.c"]
    assert list(v.read(columns="a.c")) == ["a.c"]
    assert v.to_arrow(columns=["a.c"]).schema.field("a").type == pa.struct([pa.field("c", pa.float64(), False)])
    assert v.read(rows=slice(-3, None))["d"].tolist() == [7, 8, 9]
    with pytest.raises(KeyError):
        v.read(columns=["a.x"])
    with pytest.raises(ValueError):
        v.read(rows=slice(0, 10, 2))
    p = v.to_polars(columns=["d"])
    assert isinstance(p, pl.DataFrame) and p["d"].to_list() == list(range(10))
    assert [len(b) for b in v.iter_batches(4, format="polars")] == [4, 4, 2]


def test_strings_and_lists_without_pyarrow(tmp_path, monkeypatch):
    path = tmp_path / "n.h5"
    strs = ["", "a", "héllo", "日本語テキスト" * 30, "tail\0nul\0", "x"] * 50
    lists = [[s, s] for s in strs]
    schema = pa.schema([pa.field("s", pa.string(), False),
                        pa.field("l", pa.list_(pa.field("item", pa.string(), False)), False),
                        pa.field("b", pa.binary(), False)])
    top = [s.replace("\0", "") for s in strs]  # HDF5 variable-length strings cannot hold NUL
    h5vec.save_vector(path, "v", pa.table({"s": top, "l": lists, "b": [s.encode() for s in strs]}, schema=schema))
    monkeypatch.setattr(_columns, "_pyarrow", lambda: None)
    d = h5vec.open_vector(path, "v").read()
    assert d["s"].tolist() == top
    assert d["l"].tolist() == lists
    assert d["b"].tolist() == [s.encode() for s in strs]


def test_enum_labels_from_an_hdf5_enum_type(tmp_path):
    path = tmp_path / "e.h5"
    h5vec.save_vector(path, "v", {"level": np.array([-3, 0, 7, 300, 7], np.int16)})
    with h5py.File(path, "r+") as f:
        # What a writer with labels may store: the values' HDF5 type an enum.
        del f["v/data/level/values"]
        dt = h5py.enum_dtype({"Low": -3, "Mid": 0, "High": 7, "Max": 300}, basetype="<i2")
        f.create_dataset("v/data/level/values", data=np.array([-3, 0, 7, 300, 7], np.int16), dtype=dt,
                         maxshape=(None,))
        s = f["v/metadata/schema/children/1"]
        del s["codec"]
        s["codec"] = np.bytes_("HDF5Vectors.EnumCodec")
    v = h5vec.open_vector(path, "v")
    assert v.read()["level"].tolist() == ["Low", "Mid", "High", "Max", "High"]
    col = v.to_arrow().column("level")
    assert pa.types.is_dictionary(col.type) and col.to_pylist() == ["Low", "Mid", "High", "Max", "High"]
    df = v.to_pandas()
    assert isinstance(df["level"].dtype, pd.CategoricalDtype)
    assert df["level"].tolist() == ["Low", "Mid", "High", "Max", "High"]


def test_masked_arrays_and_pandas_nullable_inputs(tmp_path):
    path = tmp_path / "m.h5"
    x = np.ma.MaskedArray([1, 2, 3], mask=[False, True, False])
    h5vec.save_vector(path, "v", {"x": x})
    got = h5vec.open_vector(path, "v").read()["x"]
    assert got.mask.tolist() == [False, True, False] and got.data[[0, 2]].tolist() == [1, 3]
    df = pd.DataFrame({"i": pd.array([1, None, 3], dtype="Int32"), "s": pd.array(["a", None, "c"], dtype="string"),
                       "f": [0.5, 1.5, 2.5]})
    h5vec.save_vector(path, "df", df)
    back = h5vec.open_vector(path, "df").to_pandas()
    assert str(back["i"].dtype) == "Int32" and back["i"].isna().tolist() == [False, True, False]
    # pandas' default string dtype ('str' from pandas 3: missing values are NaN).
    assert back["s"].dtype == pd.Series(["a"]).dtype
    assert back["s"].isna().tolist() == [False, True, False] and back["s"][[0, 2]].tolist() == ["a", "c"]
    assert back["f"].dtype == np.float64
    node = h5vec.open_vector(path, "df").schema
    assert [c["kind"] for c in node["children"]] == ["nullable", "nullable", "scalar"]


def test_pandas_roundtrip_keeps_every_layout(tmp_path):
    path = tmp_path / "p.h5"
    schema = pa.schema([pa.field("name", pa.string(), False), pa.field("opt", pa.string(), True),
                        pa.field("pos", pa.list_(pa.float32(), 2), True),
                        pa.field("tags", pa.list_(pa.field("item", pa.string(), True)), False)])
    t = pa.table({"name": ["a", "b"], "opt": [None, "x"], "pos": [[1, 2], None], "tags": [["t", None], []]},
                 schema=schema)
    h5vec.save_vector(path, "v", t, vls_strings=["opt"])
    df = h5vec.open_vector(path, "v").to_pandas()
    h5vec.save_vector(path, "w", df)
    a, b = h5vec.open_vector(path, "v"), h5vec.open_vector(path, "w")
    assert a.schema == b.schema
    assert a.to_arrow().to_pylist() == b.to_arrow().to_pylist() == t.to_pylist()


def test_format_error_is_a_value_error():
    e = h5vec.FormatError("$.a", "/v/data/a/values", "expected Int64, found float")
    assert isinstance(e, ValueError)
    assert str(e) == "$.a (/v/data/a/values): expected Int64, found float"
    assert (e.path, e.location) == ("$.a", "/v/data/a/values")
