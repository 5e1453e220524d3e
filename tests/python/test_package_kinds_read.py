"""The package reads every kind of SPEC.md sections 4.4 to 4.8 through every
reader (read, to_arrow, to_pandas, to_polars, iter_batches, Dask) with the
types of python/README.md ("Reading"): instants, dates, times of day,
durations, offset date-times, UUIDs, f16, complex numbers and maps written
by examples/xlang_types.rs (values recomputed here from the row index),
the same kinds inside lists, options and dense arrays and at their extremes
(vectors written here with h5py), enums with data in polars' flat form, and
nodes of unknown kinds or codecs, which are listed but do not block the
other columns."""

import shutil
import uuid

import h5py
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import h5vec
from h5vec import _columns as C
from h5vec import _h5
from h5vec import _schema as S
from h5vec import _vector
from test_enums_h5py import N as EN, enums_file  # noqa: F401 (the fixture)
from test_types_h5py import N, ns, types_file  # noqa: F401 (the fixture)

DAY_NS = 86_400 * 10**9
I64 = np.iinfo(np.int64)
I32 = np.iinfo(np.int32)
UUID0 = 0x0123_4567_89ab_4def_8123_4567_89ab_cd00


# ---------------------------------------------------------------------------
# Expected values of examples/xlang_types.rs, row i


def day(i):
    return ns(i) // DAY_NS  # chrono's date_naive: floor


def clock(i):
    return ns(i) % DAY_NS


def took(i):
    return i * 1_000_000_007


def uid(i):
    return uuid.UUID(int=UUID0 + i)


def level(i):
    return np.float16(i * 0.5 - 1.0)


def prices(i):
    return [("k%d" % k, i * 10.0 + k) for k in range(i % 3)]


def tags(i):
    return [(k + 1, ["t%d" % i] * (i % 3)) for k in range(i % 2)]


def maybe(i):
    return [("n", -i)] if i % 2 == 0 else None


ARROW_TYPES = {
    "at": pa.timestamp("ns", tz="UTC"), "received": pa.timestamp("ns", tz="UTC"),
    "local": pa.struct([pa.field("instant", pa.timestamp("ns", tz="UTC"), nullable=False),
                        pa.field("offset_seconds", pa.int32(), nullable=False)]),
    "day": pa.date32(), "clock": pa.time64("ns"), "took": pa.duration("ns"),
    "id": pa.uuid() if hasattr(pa, "uuid") else pa.binary(16), "level": pa.float16(),
    "z": pa.struct([pa.field("r", pa.float64(), nullable=False), pa.field("i", pa.float64(), nullable=False)]),
    "z32": pa.struct([pa.field("r", pa.float32(), nullable=False), pa.field("i", pa.float32(), nullable=False)]),
    "prices": pa.map_(pa.large_string(), pa.field("value", pa.float64(), nullable=False)),
    "tags": pa.map_(pa.uint32(), pa.field("value", pa.large_list(pa.field("item", pa.large_string(), nullable=False)),
                                          nullable=False)),
    "maybe": pa.map_(pa.large_string(), pa.field("value", pa.int64(), nullable=False)),
}


def test_read_gives_numpy_types_and_exact_values(types_file):  # noqa: F811
    v = h5vec.open_vector(types_file.filename, "rows")
    assert v.columns == ["at", "received", "local.instant", "local.offset_seconds", "day", "clock", "took",
                         "id", "level", "z", "z32", "prices", "tags", "maybe"]
    d = v.read()
    r = range(N)
    for name in ("at", "received", "local.instant"):
        assert d[name].dtype == np.dtype("M8[ns]")
        assert d[name].view("i8").tolist() == [ns(i) for i in r]
    assert d["local.offset_seconds"].dtype == np.int32
    assert d["local.offset_seconds"].tolist() == [(i - 2) * 1800 for i in r]
    assert d["day"].dtype == np.dtype("M8[D]") and d["day"].view("i8").tolist() == [day(i) for i in r]
    assert d["clock"].dtype == np.dtype("m8[ns]") and d["clock"].view("i8").tolist() == [clock(i) for i in r]
    assert d["took"].dtype == np.dtype("m8[ns]") and d["took"].view("i8").tolist() == [took(i) for i in r]
    assert d["id"].dtype == np.dtype("V16") and d["id"].shape == (N,)
    assert [uuid.UUID(bytes=x.tobytes()) for x in d["id"]] == [uid(i) for i in r]
    assert d["level"].dtype == np.float16 and d["level"].tolist() == [level(i) for i in r]
    assert d["z"].dtype == np.complex128 and d["z"].tolist() == [complex(i + 0.5, -i) for i in r]
    assert np.signbit(d["z"].imag[0])  # -(0 as f64) is -0.0, kept
    assert d["z32"].dtype == np.complex64 and d["z32"].tolist() == [complex(i, 2) for i in r]
    for name, fn in (("prices", prices), ("tags", tags), ("maybe", maybe)):
        assert d[name].dtype == object
        rows = [None if m is None else [(k, x.tolist() if isinstance(x, np.ndarray) else x) for k, x in m]
                for m in d[name]]
        assert rows == [fn(i) for i in r], name
    assert type(d["tags"][1][0][0]) is np.uint32 and type(d["prices"][1][0][1]) is np.float64


def test_to_arrow_types_values_and_metadata(types_file):  # noqa: F811
    t = h5vec.open_vector(types_file.filename, "rows").to_arrow()
    assert {f.name: f.type for f in t.schema} == ARROW_TYPES
    assert [f.name for f in t.schema if f.nullable] == ["maybe"]
    col = {name: t.column(name).combine_chunks() for name in t.column_names}
    r = range(N)
    for name in ("at", "received"):
        assert col[name].cast(pa.int64()).to_pylist() == [ns(i) for i in r]
    assert col["local"].field("instant").cast(pa.int64()).to_pylist() == [ns(i) for i in r]
    assert col["local"].field("offset_seconds").to_pylist() == [(i - 2) * 1800 for i in r]
    assert col["day"].cast(pa.int32()).to_pylist() == [day(i) for i in r]
    assert col["clock"].cast(pa.int64()).to_pylist() == [clock(i) for i in r]
    assert col["took"].cast(pa.int64()).to_pylist() == [took(i) for i in r]
    assert col["id"].to_pylist() == ([uid(i) for i in r] if hasattr(pa, "uuid") else [uid(i).bytes for i in r])
    assert col["level"].to_pylist() == [float(level(i)) for i in r]
    assert col["z"].to_pylist() == [{"r": i + 0.5, "i": -float(i)} for i in r]
    assert col["z32"].to_pylist() == [{"r": float(i), "i": 2.0} for i in r]
    assert col["prices"].to_pylist() == [prices(i) for i in r]
    assert col["tags"].to_pylist() == [tags(i) for i in r]
    assert col["maybe"].to_pylist() == [maybe(i) for i in r]
    # Every field carries its schema node (SPEC section 11).
    md = t.schema.field("id").metadata
    assert md[b"h5vec.codec"] == b"h5vec.UuidCodec" and b'"dimensions":[16]' in md[b"h5vec.schema"]
    assert t.schema.field("maybe").metadata[b"h5vec.codec"] == b"h5vec.MapCodec"
    assert t.schema.field("maybe").metadata[b"h5vec.kind"] == b"list"
    assert b'"time_zone":"UTC"' in t.schema.field("at").metadata[b"h5vec.schema"]


def test_to_pandas_dtypes_and_values(types_file):  # noqa: F811
    df = h5vec.open_vector(types_file.filename, "rows").to_pandas()
    assert {c: str(t) for c, t in df.dtypes.items()} == {
        "at": "datetime64[ns, UTC]", "received": "datetime64[ns, UTC]", "local.instant": "datetime64[ns, UTC]",
        "local.offset_seconds": "int32", "day": "datetime64[s]", "clock": "timedelta64[ns]",
        "took": "timedelta64[ns]", "id": "object", "level": "float16", "z": "complex128", "z32": "complex64",
        "prices": "object", "tags": "object", "maybe": "object"}
    r = range(N)
    assert df["at"].tolist() == [pd.Timestamp(ns(i), unit="ns", tz="UTC") for i in r]
    assert df["at"].array.asi8.tolist() == [ns(i) for i in r]
    assert df["day"].to_numpy().view("i8").tolist() == [day(i) * 86_400 for i in r]
    assert df["clock"].to_numpy().view("i8").tolist() == [clock(i) for i in r]
    assert df["took"].to_numpy().view("i8").tolist() == [took(i) for i in r]
    assert df["id"].tolist() == [uid(i) for i in r]
    assert df["level"].tolist() == [level(i) for i in r]
    assert df["z"].tolist() == [complex(i + 0.5, -i) for i in r]
    assert df["prices"].tolist() == [prices(i) for i in r]
    assert df["maybe"].tolist() == [maybe(i) for i in r]
    assert df.attrs["h5vec.columns"]["id"]["codec"] == "h5vec.UuidCodec"


def test_to_polars_dtypes_and_values(types_file):  # noqa: F811
    df = h5vec.open_vector(types_file.filename, "rows").to_polars()
    half = pl.Float16 if hasattr(pl, "Float16") else pl.Float32
    want = {"at": pl.Datetime("ns", "UTC"), "received": pl.Datetime("ns", "UTC"),
            "local": pl.Struct({"instant": pl.Datetime("ns", "UTC"), "offset_seconds": pl.Int32}),
            "day": pl.Date, "clock": pl.Time, "took": pl.Duration("ns"), "id": pl.Binary, "level": half,
            "z": pl.Struct({"r": pl.Float64, "i": pl.Float64}), "z32": pl.Struct({"r": pl.Float32, "i": pl.Float32})}
    assert {k: df.schema[k] for k in want} == want
    r = range(N)
    assert df["at"].to_physical().to_list() == [ns(i) for i in r]
    assert df["day"].to_physical().to_list() == [day(i) for i in r]
    assert df["clock"].to_physical().to_list() == [clock(i) for i in r]
    assert df["took"].to_physical().to_list() == [took(i) for i in r]
    assert df["id"].to_list() == [uid(i).bytes for i in r]
    assert df["level"].to_list() == [float(level(i)) for i in r]
    assert df["z"].struct.field("i").to_list() == [-float(i) for i in r]
    # Maps: polars' Map where it has one (entries in the stored order), else a list of {key, value} structs.
    if hasattr(pl, "Map"):
        assert df.schema["prices"] == pl.Map(pl.String, pl.Float64)
    else:
        assert df.schema["prices"] == pl.List(pl.Struct({"key": pl.String, "value": pl.Float64}))

    def pairs(m):
        if m is None:
            return None
        return list(m.items()) if isinstance(m, dict) else [(e["key"], e["value"]) for e in m]
    for name, fn in (("prices", prices), ("tags", tags), ("maybe", maybe)):
        assert [pairs(m) for m in df[name].to_list()] == [fn(i) for i in r], name


def test_iter_batches_every_format_matches_the_whole_read(types_file):  # noqa: F811
    v = h5vec.open_vector(types_file.filename, "rows")
    parts = list(v.iter_batches(3, format="numpy"))
    assert [len(p["at"]) for p in parts] == [3, 3, 1]
    whole = v.read()
    for name in ("at", "day", "id", "level", "z"):
        joined = np.concatenate([p[name] for p in parts])
        assert joined.dtype == whole[name].dtype and joined.tobytes() == whole[name].tobytes()
    assert sum((list(p["prices"]) for p in parts), []) == list(whole["prices"])
    batches = list(v.iter_batches(3, format="arrow"))
    assert pa.Table.from_batches(batches).equals(v.to_arrow())
    frames = list(v.iter_batches(3, format="pandas"))
    assert frames[1].index.tolist() == [3, 4, 5]
    pd.testing.assert_frame_equal(pd.concat(frames), v.to_pandas())
    polars = list(v.iter_batches(3, format="polars"))
    assert pl.concat(polars).equals(v.to_polars())


def test_dask_read_vector(types_file):  # noqa: F811
    from h5vec.dask import read_vector
    ddf = read_vector(types_file.filename, "rows", columns=["at", "day", "id", "z", "maybe"], partition_rows=1)
    got = ddf.compute()
    want = h5vec.open_vector(types_file.filename, "rows").to_pandas(columns=["at", "day", "id", "z", "maybe"])
    pd.testing.assert_frame_equal(got, want)
    assert str(ddf.dtypes["at"]) == "datetime64[ns, UTC]" and str(ddf.dtypes["day"]) == "datetime64[s]"
    assert ddf.dtypes["id"] == object and got["id"].tolist() == [uid(i) for i in range(N)]
    assert got["maybe"].tolist() == [maybe(i) for i in range(N)]


def test_f16_bits_kept_in_every_reader(types_file):  # noqa: F811
    v = h5vec.open_vector(types_file.filename, "halfs")
    bits = [0x7E00, 0x7C00, 0xFC00, 0x0001, 0x7BFF]  # NaN, inf, -inf, smallest subnormal, max
    assert v.read()["value"].view("<u2").tolist() == bits
    arr = v.to_arrow().column("value").combine_chunks()
    assert arr.type == pa.float16()
    assert np.frombuffer(arr.buffers()[1], "<u2", count=5).tolist() == bits
    assert v.to_pandas()["value"].to_numpy().view("<u2").tolist() == bits
    s = v.to_polars()["value"]
    if s.dtype == pl.Float32:
        assert s.to_numpy().astype(np.float16).view("<u2").tolist() == bits
    else:
        assert s.to_numpy().view("<u2").tolist() == bits
    # For a polars without Float16: Float32, which holds every f16 bit pattern.
    t = _vector._as_arrow(v._read_col(None, None)[0], pa, C.Target(flat=True, half=False))
    assert t.schema.field("value").type == pa.float32()
    f32 = t.column("value").to_numpy()
    assert f32.astype(np.float16).view("<u2").tolist() == bits


# ---------------------------------------------------------------------------
# Extremes (SPEC section 4.6 to 4.8): a copy of the Rust vector, values patched


@pytest.fixture
def extremes(types_file, tmp_path):  # noqa: F811
    path = tmp_path / "extremes.h5"
    shutil.copy(types_file.filename, path)
    with h5py.File(path, "r+") as f:
        d = f["rows/data"]
        d["at/values"][:3] = [I64.min, I64.max, -1]
        d["day/values"][:2] = [I32.min, I32.max]
        d["clock/values"][:2] = [0, DAY_NS - 1]
        d["took/values"][:2] = [I64.min, I64.max]
        d["level/values"][:3] = np.array([0x7C01, 0x8000, 0xFE3F], "<u2").view(np.float16)
        z = np.array([0x7FF0_0000_0000_0001, 0x8000_0000_0000_0000], "<u8").view("<f8")
        raw = np.zeros(1, np.complex128)
        raw.view("<f8")[:] = z
        d["z/values"][0] = raw[0]
    return path


def test_extremes_are_exact_in_every_reader(extremes):
    v = h5vec.open_vector(str(extremes), "rows")
    at = [I64.min, I64.max, -1]
    lv = [0x7C01, 0x8000, 0xFE3F]
    zb = [0x7FF0_0000_0000_0001, 0x8000_0000_0000_0000]
    d = v.read()
    assert d["at"].view("i8")[:3].tolist() == at
    assert d["day"].view("i8")[:2].tolist() == [I32.min, I32.max]
    assert d["clock"].view("i8")[:2].tolist() == [0, DAY_NS - 1]
    assert d["took"].view("i8")[:2].tolist() == [I64.min, I64.max]
    assert d["level"].view("<u2")[:3].tolist() == lv
    assert d["z"][:1].view("<u8").tolist() == zb
    t = v.to_arrow()
    assert t.column("at").cast(pa.int64()).to_pylist()[:3] == at
    assert t.column("at").null_count == 0
    assert t.column("day").cast(pa.int32()).to_pylist()[:2] == [I32.min, I32.max]
    assert t.column("took").cast(pa.int64()).to_pylist()[:2] == [I64.min, I64.max]
    lvl = t.column("level").combine_chunks()
    assert np.frombuffer(lvl.buffers()[1], "<u2", count=3).tolist() == lv
    z = t.column("z").combine_chunks()
    assert [np.float64(z.field(k)[0].as_py()).view("<u8") for k in ("r", "i")] == zb
    # i64::MIN ns is numpy's NaT, which pandas takes for missing: to_pandas
    # names the row instead of turning the value into a null (python/README.md).
    with pytest.raises(h5vec.FormatError, match=r"numpy's NaT, which pandas reads as missing") as e:
        v.to_pandas()
    assert e.value.path == "$.at[0]"
    with pytest.raises(h5vec.FormatError) as e:
        v.to_pandas(columns=["took"])
    assert e.value.path == "$.took[0]"
    df = v.to_pandas(rows=slice(1, None))
    assert df["at"].array.asi8[:2].tolist() == at[1:] and not df["at"].isna().any()
    assert df.index[0] == 1
    assert (df["day"].to_numpy()[:1].view("i8") // 86_400).tolist() == [I32.max]
    assert df["took"].to_numpy()[:1].view("i8").tolist() == [I64.max]
    df = v.to_pandas(rows=slice(0, 3), columns=["day", "level", "z"])
    assert (df["day"].to_numpy()[:2].view("i8") // 86_400).tolist() == [I32.min, I32.max]
    assert df["level"].to_numpy()[:3].view("<u2").tolist() == lv
    assert df["z"].to_numpy()[:1].view("<u8").tolist() == zb
    p = v.to_polars()
    assert p["at"].to_physical().to_list()[:3] == at and p["at"].null_count() == 0
    assert p["day"].to_physical().to_list()[:2] == [I32.min, I32.max]
    assert p["clock"].to_physical().to_list()[:2] == [0, DAY_NS - 1]
    assert p["took"].to_physical().to_list()[:2] == [I64.min, I64.max]


@pytest.mark.parametrize("bad", [DAY_NS, -1, I64.min])
def test_time_of_day_outside_the_day_is_an_error_naming_the_row(types_file, tmp_path, bad):  # noqa: F811
    path = tmp_path / "bad.h5"
    shutil.copy(types_file.filename, path)
    with h5py.File(path, "r+") as f:
        f["rows/data/clock/values"][4] = bad
    v = h5vec.open_vector(str(path), "rows")
    for read in (v.read, v.to_arrow, v.to_pandas, v.to_polars):
        with pytest.raises(h5vec.FormatError, match=f"row 4: {bad} ns is not a time of day") as e:
            read()
        assert e.value.path == "$.clock" and e.value.location == "/rows/data/clock/values[4]"
    assert v.read(rows=slice(0, 4))["clock"].view("i8").tolist() == [clock(i) for i in range(4)]


def _set_str(f, path, value):
    del f[path]
    _h5.write_fixed_str(f[path.rsplit("/", 1)[0]], path.rsplit("/", 1)[1], value)


def _child(f, name, vector="rows"):
    names = [n.decode() for n in f[f"{vector}/metadata/schema/field_names"][:]]
    return f"{vector}/metadata/schema/children/{names.index(name) + 1}"


@pytest.mark.parametrize("field,member,value,match", [
    ("at", "time_unit", "us", r"h5vec.InstantCodec of Int64 counting `ns`, found Int64 counting 'us'"),
    ("day", "encoded_type", "Int64", r"h5vec.DateCodec of Int32 counting `d`, found Int64"),
    ("took", "time_unit", None, r"h5vec.DurationCodec of Int64 counting `ns`, found Int64 counting None"),
    ("id", "encoded_type", "Int8", r"a UUID of UInt8 dimensions \[16\]"),
])
def test_time_and_uuid_nodes_are_checked(types_file, tmp_path, field, member, value, match):  # noqa: F811
    path = tmp_path / "bad.h5"
    shutil.copy(types_file.filename, path)
    with h5py.File(path, "r+") as f:
        p = f"{_child(f, field)}/{member}"
        if value is None:
            del f[p]
        else:
            _set_str(f, p, value)
    with pytest.raises(h5vec.FormatError, match=match) as e:
        h5vec.open_vector(str(path), "rows")
    assert e.value.path == f"$.{field}"


@pytest.mark.parametrize("dtype", [
    np.dtype([("re", "<f8"), ("im", "<f8")]),
    np.dtype([("r", "<f8"), ("i", "<f8"), ("x", "<f8")]),
    np.dtype([("i", "<f8"), ("r", "<f8")]),
    np.dtype([("r", "<f4"), ("i", "<f4")]),
    np.dtype([("r", "<i8"), ("i", "<i8")]),
])
def test_complex_needs_exactly_r_and_i(types_file, tmp_path, dtype):  # noqa: F811
    path = tmp_path / "bad.h5"
    shutil.copy(types_file.filename, path)
    with h5py.File(path, "r+") as f:
        del f["rows/data/z/values"]
        f["rows/data/z/values"] = np.zeros(N, dtype)
    with pytest.raises(h5vec.FormatError, match="ComplexF64 values: a compound of exactly {r, i}") as e:
        h5vec.open_vector(str(path), "rows")
    assert e.value.path == "$.z" and e.value.location == "/rows/data/z/values"


# ---------------------------------------------------------------------------
# The same kinds inside lists, options and dense arrays (written here)


def _node(kind, codec=None, enc=None, children=(), **kw):
    return S.Node(kind, codec=codec, encoded_type=enc, children=list(children), **kw)


def _write_vector(f, name, root, count, fill):
    g = f.create_group(name)
    meta = g.create_group("metadata")
    _h5.write_fixed_str(meta, "format_name", "HDF5Vectors")
    meta["format_version"] = np.int64(1)
    meta["count"] = np.int64(count)
    S.write_node(meta.create_group("schema"), root)
    fill(g.create_group("data"))


def _list_group(g, name, offsets):
    lg = g.create_group(name)
    _h5.write_attr_ascii(lg, "CLASS", "LIST_COLUMN")
    _h5.write_attr_ascii(lg, "KIND", "OFFSETS")
    lg["OFFSETS"] = np.array(offsets, np.uint64)
    return lg


def _mask(g, valid):
    g.create_dataset("MASK", data=np.array(valid, np.int8), dtype=_h5.H5COL_BOOL)


NESTED_N = 4
TS = [I64.min, I64.max, 0, -1, 5]
IDS = [uuid.UUID(int=(7 << 120) + k) for k in range(4)]
HALF_BITS = [0x7E01, 0x8000, 0x0001, 0x7C00]
LABELS = {"New": -1, "Open": 3, "Closed": 300}
DENSE_ENUM = [["New", "Open"], ["Closed", "New"], ["Open", "Open"], ["Closed", "Closed"]]
DENSE_CHAR = [["a", "\U0001F600"], ["b", "c"], ["\0", "d"], ["e", "f"]]


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    """Vec<DateTime<Utc>>, Option<NaiveDate>, Option<Uuid>, Vec<Uuid>,
    Option<Complex<f32>>, Vec<f16>, Option<NaiveTime>, [f16; 2], an instant
    in Europe/Paris and a naive one, laid out as SPEC sections 4.2, 4.3, 4.6-4.8 say."""
    path = tmp_path_factory.mktemp("nested") / "nested.h5"
    inst = _node("scalar", S.INSTANT_CODEC, "Int64", time_unit="ns", time_zone="UTC")
    fields = {
        "ts": _node("list", S.H5VEC_CODEC, children=[inst]),
        "opt_day": _node("nullable", children=[_node("scalar", S.DATE_CODEC, "Int32", time_unit="d")]),
        "opt_id": _node("nullable", children=[_node("dense", S.UUID_CODEC, "UInt8", dimensions=[16])]),
        "ids": _node("list", S.H5VEC_CODEC, children=[_node("dense", S.UUID_CODEC, "UInt8", dimensions=[16])]),
        "opt_z": _node("nullable", children=[_node("scalar", S.IDENTITY, "ComplexF32")]),
        "halves": _node("list", S.H5VEC_CODEC, children=[_node("scalar", S.IDENTITY, "Float16")]),
        "opt_clock": _node("nullable", children=[_node("scalar", S.TIME_OF_DAY_CODEC, "Int64", time_unit="ns")]),
        "pair": _node("dense", S.IDENTITY, "Float16", dimensions=[2]),
        "paris": _node("scalar", S.INSTANT_CODEC, "Int64", time_unit="ns", time_zone="Europe/Paris"),
        "naive": _node("scalar", S.INSTANT_CODEC, "Int64", time_unit="ns"),
        "dense_enum": _node("dense", S.ENUM, "Int16", dimensions=[2], labels=LABELS),
        "opt_enum": _node("nullable", children=[_node("scalar", S.ENUM, "Int16", labels=LABELS)]),
        "dense_char": _node("dense", S.CHAR, "Int32", dimensions=[2]),
    }
    root = _node("record", S.STRUCT, field_names=list(fields), children=list(fields.values()))

    def fill(d):
        _list_group(d, "ts", [0, 2, 2, 3, 5]).create_dataset("VALUES", data=np.array(TS, "<i8"))
        g = d.create_group("opt_day")
        _mask(g, [1, 0, 1, 1])
        g["values"] = np.array([I32.min, 0, I32.max, -1], "<i4")
        g = d.create_group("opt_id")
        _mask(g, [0, 1, 1, 0])
        g["values"] = np.frombuffer(b"".join(u.bytes for u in IDS), np.uint8).reshape(4, 16)
        _list_group(d, "ids", [0, 1, 1, 3, 3])["VALUES"] = \
            np.frombuffer(b"".join(u.bytes for u in IDS[:3]), np.uint8).reshape(3, 16)
        g = d.create_group("opt_z")
        _mask(g, [1, 1, 0, 1])
        g["values"] = np.array([1 + 2j, -0.0 - 1j, 0, 3.5], np.complex64)
        _list_group(d, "halves", [0, 3, 3, 4, 4])["VALUES"] = np.array(HALF_BITS, "<u2").view(np.float16)
        g = d.create_group("opt_clock")
        _mask(g, [1, 1, 0, 1])
        g["values"] = np.array([0, DAY_NS - 1, 0, 12345], "<i8")
        d.create_group("pair")["values"] = np.arange(8, dtype=np.float16).reshape(4, 2)
        d.create_group("paris")["values"] = np.array([0, 1, -1, 10**18], "<i8")
        d.create_group("naive")["values"] = np.array([0, 1, -1, 10**18], "<i8")
        d.create_group("dense_enum")["values"] = np.array([[-1, 3], [300, -1], [3, 3], [300, 300]], "<i2")
        g = d.create_group("opt_enum")
        _mask(g, [1, 0, 1, 1])
        g["values"] = np.array([300, -1, -1, 3], "<i2")
        d.create_group("dense_char")["values"] = np.array([[97, 0x1F600], [98, 99], [0, 100], [101, 102]], "<i4")

    with h5py.File(path, "w") as f:
        _write_vector(f, "v", root, NESTED_N, fill)
    return str(path)


def test_nested_kinds_numpy(nested):
    d = h5vec.open_vector(nested, "v").read()
    assert [x.dtype for x in d["ts"]] == [np.dtype("M8[ns]")] * 4
    assert [x.view("i8").tolist() for x in d["ts"]] == [TS[:2], [], TS[2:3], TS[3:]]
    od = d["opt_day"]
    assert isinstance(od, np.ma.MaskedArray) and od.dtype == np.dtype("M8[D]")
    assert od.mask.tolist() == [False, True, False, False]
    assert od.data.view("i8")[[0, 2, 3]].tolist() == [I32.min, I32.max, -1]
    oi = d["opt_id"]
    assert isinstance(oi, np.ma.MaskedArray) and oi.dtype == np.dtype("V16")
    assert oi.mask.tolist() == [True, False, False, True]
    assert [uuid.UUID(bytes=x.tobytes()) for x in oi.data[1:3]] == IDS[1:3]
    assert [[uuid.UUID(bytes=x.tobytes()) for x in row] for row in d["ids"]] == [IDS[:1], [], IDS[1:3], []]
    assert d["opt_z"].dtype == np.complex64 and d["opt_z"].mask.tolist() == [False, False, True, False]
    assert np.signbit(d["opt_z"].data[1].real)
    assert [x.view("<u2").tolist() for x in d["halves"]] == [HALF_BITS[:3], [], HALF_BITS[3:], []]
    assert d["opt_clock"].dtype == np.dtype("m8[ns]")
    assert d["opt_clock"].data.view("i8")[[0, 1, 3]].tolist() == [0, DAY_NS - 1, 12345]
    assert d["pair"].dtype == np.float16 and d["pair"].shape == (4, 2)
    assert d["paris"].dtype == np.dtype("M8[ns]") and d["naive"].dtype == np.dtype("M8[ns]")


def test_nested_kinds_arrow(nested):
    t = h5vec.open_vector(nested, "v").to_arrow()
    uid_t = pa.uuid() if hasattr(pa, "uuid") else pa.binary(16)
    assert {f.name: (f.type, f.nullable) for f in t.schema if "enum" not in f.name and "char" not in f.name} == {
        "ts": (pa.large_list(pa.field("item", pa.timestamp("ns", "UTC"), nullable=False)), False),
        "opt_day": (pa.date32(), True), "opt_id": (uid_t, True),
        "ids": (pa.large_list(pa.field("item", uid_t, nullable=False)), False),
        "opt_z": (pa.struct([pa.field("r", pa.float32(), False), pa.field("i", pa.float32(), False)]), True),
        "halves": (pa.large_list(pa.field("item", pa.float16(), nullable=False)), False),
        "opt_clock": (pa.time64("ns"), True),
        "pair": (pa.list_(pa.float16(), 2), False),
        "paris": (pa.timestamp("ns", "Europe/Paris"), False), "naive": (pa.timestamp("ns"), False)}
    ts = t.column("ts").combine_chunks()
    assert ts.values.cast(pa.int64()).to_pylist() == TS and ts.offsets.to_pylist() == [0, 2, 2, 3, 5]
    assert t.column("opt_day").cast(pa.int32()).to_pylist() == [I32.min, None, I32.max, -1]
    want_ids = IDS if hasattr(pa, "uuid") else [u.bytes for u in IDS]
    assert t.column("opt_id").to_pylist() == [None, want_ids[1], want_ids[2], None]
    assert t.column("ids").to_pylist() == [want_ids[:1], [], want_ids[1:3], []]
    assert t.column("opt_z").to_pylist() == [{"r": 1.0, "i": 2.0}, {"r": -0.0, "i": -1.0}, None,
                                              {"r": 3.5, "i": 0.0}]
    hv = t.column("halves").combine_chunks().values
    assert np.frombuffer(hv.buffers()[1], "<u2", count=4).tolist() == HALF_BITS
    assert t.column("opt_clock").cast(pa.int64()).to_pylist() == [0, DAY_NS - 1, None, 12345]
    assert t.column("pair").to_pylist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    assert t.column("paris").cast(pa.int64()).to_pylist() == [0, 1, -1, 10**18]
    # Labelled enums as dictionaries, also as dense elements and under an option (SPEC section 11).
    assert t.schema.field("dense_enum").type == pa.list_(pa.dictionary(pa.int32(), pa.string()), 2)
    assert t.column("dense_enum").to_pylist() == DENSE_ENUM
    assert t.column("opt_enum").type == pa.dictionary(pa.int32(), pa.string())
    assert t.column("opt_enum").to_pylist() == ["Closed", None, "New", "Open"]
    assert t.column("dense_char").to_pylist() == DENSE_CHAR


def test_nested_kinds_pandas_and_polars(nested):
    v = h5vec.open_vector(nested, "v")
    df = v.to_pandas()
    assert str(df["opt_day"].dtype) == "datetime64[s]"
    assert df["opt_day"].isna().tolist() == [False, True, False, False]
    assert df["opt_id"].tolist() == [None, IDS[1], IDS[2], None]
    assert df["opt_z"].dtype == object and df["opt_z"].tolist() == [1 + 2j, -1j, None, 3.5 + 0j]
    assert str(df["opt_clock"].dtype) == "timedelta64[ns]" and df["opt_clock"].isna().tolist() == [0, 0, 1, 0]
    assert str(df["paris"].dtype) == "datetime64[ns, Europe/Paris]"
    assert df["paris"].array.asi8.tolist() == [0, 1, -1, 10**18]
    assert str(df["naive"].dtype) == "datetime64[ns]"
    assert [x.view("i8").tolist() for x in df["ts"]] == [TS[:2], [], TS[2:3], TS[3:]]
    assert df["dense_enum"].tolist() == DENSE_ENUM and df["dense_char"].tolist() == DENSE_CHAR
    assert df["opt_enum"].tolist()[2:] == ["New", "Open"] and df["opt_enum"].isna().tolist()[1]
    p = v.to_polars()
    assert p.schema["ts"] == pl.List(pl.Datetime("ns", "UTC"))
    assert p.schema["opt_day"] == pl.Date and p["opt_day"].null_count() == 1
    assert p.schema["paris"] == pl.Datetime("ns", "Europe/Paris") and p.schema["naive"] == pl.Datetime("ns")
    assert p["opt_id"].to_list() == [None, IDS[1].bytes, IDS[2].bytes, None]
    assert p["ts"].explode().to_physical().to_list()[:2] == TS[:2]


def test_map_with_nullable_keys_reads_in_numpy_not_in_arrow(tmp_path):
    key = _node("nullable", children=[_node("scalar", S.IDENTITY, "Int32")])
    entry = _node("record", S.STRUCT, field_names=["key", "value"],
                  children=[key, _node("scalar", S.IDENTITY, "Float64")])
    root = _node("record", S.STRUCT, field_names=["m"], children=[_node("list", S.MAP_CODEC, children=[entry])])

    def fill(d):
        vals = _list_group(d, "m", [0, 2, 2]).create_group("VALUES")
        _h5.write_attr_ascii(vals, "CLASS", "RECORD_VALUES")
        g = vals.create_group("key")
        _mask(g, [1, 0])
        g["values"] = np.array([7, 0], "<i4")
        vals.create_group("value")["values"] = np.array([1.5, 2.5])

    path = tmp_path / "m.h5"
    with h5py.File(path, "w") as f:
        _write_vector(f, "v", root, 2, fill)
    v = h5vec.open_vector(str(path), "v")
    assert v.read()["m"].tolist() == [[(7, 1.5), (None, 2.5)], []]
    with pytest.raises(h5vec.FormatError, match="map keys that are never null") as e:
        v.to_arrow()
    assert e.value.path == "$.m[].key"


# ---------------------------------------------------------------------------
# Enums with data: polars gets the flat form


def test_polars_gets_the_flat_form_of_unions(enums_file):  # noqa: F811
    from test_package_unions import event
    df = h5vec.open_vector(enums_file.filename, "rows").to_polars()
    flat = pl.Struct({"variant": pl.Categorical, "Tick": pl.Struct({"1": pl.Float64}),
                      "Fill": pl.Struct({"qty": pl.Int32, "price": pl.Float64}),
                      "note": pl.Struct({"1": pl.String, "2": pl.List(pl.UInt16)})})
    assert df.schema["event"] == flat
    assert df.schema["maybe"] == flat and df.schema["history"] == pl.List(flat)

    def row(e):
        if e is None:
            return None
        out = {"variant": e["variant"], "Tick": None, "Fill": None, "note": None}
        fields = {k: x for k, x in e.items() if k != "variant"}
        if fields:
            out[e["variant"]] = fields
        return out

    assert df["event"].to_list() == [row(event(i)) for i in range(EN)]
    assert df["maybe"].to_list() == [row(event(i + 1)) if i % 3 else None for i in range(EN)]
    assert df["history"].to_list() == [[row(event(i + k)) for k in range(i % 3)] for i in range(EN)]
    assert df["status"].to_list() == [["New", "Open", "Closed"][i % 3] for i in range(EN)]
    # A range: offsets restart within each variant's span.
    part = h5vec.open_vector(enums_file.filename, "rows").to_polars(rows=slice(3, 7))
    assert part["event"].to_list() == [row(event(i)) for i in range(3, 7)]
    # iter_batches gives polars the same form.
    batches = list(h5vec.open_vector(enums_file.filename, "rows").iter_batches(4, format="polars"))
    assert pl.concat(batches)["event"].to_list() == df["event"].to_list()


def test_flat_form_arrow_fields_carry_the_union_node(enums_file):  # noqa: F811
    v = h5vec.open_vector(enums_file.filename, "rows")
    t = _vector._as_arrow(v._read_col(["event", "maybe"], None)[0], pa, C.Target(flat=True))
    f = t.schema.field("event")
    assert f.metadata[b"h5vec.union"] == b"flat" and f.metadata[b"h5vec.kind"] == b"union"
    assert b'"variant_names":["Idle","Tick","Fill","note"]' in f.metadata[b"h5vec.schema"]
    assert f.type.field("variant").type == pa.dictionary(pa.int32(), pa.string())
    assert [f.type.field(k).name for k in range(f.type.num_fields)] == ["variant", "Tick", "Fill", "note"]
    assert f.type.field("Fill").metadata[b"h5vec.codec"] == b"HDF5Vectors.StructCodec"
    m = t.schema.field("maybe")
    assert m.nullable and m.metadata[b"h5vec.union"] == b"flat"
    assert t.column("maybe").combine_chunks().field("variant").null_count == 3
    # to_arrow itself keeps Arrow's dense union.
    assert pa.types.is_union(v.to_arrow(columns=["event"]).schema.field("event").type)


# ---------------------------------------------------------------------------
# Unknown kinds and codecs do not block


def _patched(types_file, tmp_path, fn):  # noqa: F811
    path = tmp_path / "future.h5"
    shutil.copy(types_file.filename, path)
    with h5py.File(path, "r+") as f:
        fn(f)
    return str(path)


def _unknown_field_raises(v, field_path, what):
    for read in (v.read, v.to_arrow, v.to_pandas, v.to_polars, v.validate,
                 lambda: next(v.iter_batches(2, format="arrow"))):
        with pytest.raises(h5vec.FormatError, match=f"{what}: this version of h5vec cannot read it") as e:
            read()
        assert e.value.path == field_path


def test_unknown_codec_is_listed_skipped_and_named(types_file, tmp_path):  # noqa: F811
    path = _patched(types_file, tmp_path, lambda f: _set_str(f, f"{_child(f, 'took')}/codec", "h5vec.FutureCodec"))
    v = h5vec.open_vector(path, "rows")
    assert "took" in v.columns
    node = v.schema["children"][v.schema["field_names"].index("took")]
    assert (node["kind"], node["codec"]) == ("scalar", "h5vec.FutureCodec")
    _unknown_field_raises(v, "$.took", "unknown codec h5vec.FutureCodec \\(kind scalar\\)")
    others = [c for c in v.columns if c != "took"]
    assert v.read(columns=others)["day"].view("i8").tolist() == [day(i) for i in range(N)]
    assert v.to_arrow(columns=others).column_names == [c for c in ARROW_TYPES if c != "took"]
    assert list(v.to_pandas(columns=["at", "id"]).columns) == ["at", "id"]
    assert v.to_polars(columns=["z"])["z"].struct.field("r").to_list() == [i + 0.5 for i in range(N)]
    assert len(list(v.iter_batches(3, columns=["level"]))) == 3
    from h5vec.dask import read_vector
    assert read_vector(path, "rows", columns=["at", "clock"]).compute()["clock"].to_numpy().view("i8").tolist() \
        == [clock(i) for i in range(N)]
    with pytest.raises(h5vec.FormatError, match="unknown codec h5vec.FutureCodec") as e:
        read_vector(path, "rows")
    assert e.value.path == "$.took"
    # No layout equals one that is not known here (so appends to it are refused).
    assert not v.node.same_layout(v.node)
    assert v.node.children[1].same_layout(v.node.children[1])


@pytest.mark.parametrize("where,field_path,what", [
    (lambda f: f"{_child(f, 'prices')}/children/1/children/2/kind", "$.prices[].value",
     "unknown kind tensor \\(codec HDF5Vectors.IdentityCodec\\)"),
    (lambda f: f"{_child(f, 'maybe')}/children/1/codec", "$.maybe",
     "unknown codec h5vec.FutureMapCodec \\(kind list\\)"),
    (lambda f: f"{_child(f, 'level')}/encoded_type", "$.level",
     "unknown encoded_type Float128 \\(kind scalar, codec HDF5Vectors.IdentityCodec\\)"),
    (lambda f: f"{_child(f, 'local')}/codec", "$.local", "unknown codec h5vec.FutureRecordCodec \\(kind record\\)"),
])
def test_unknown_nodes_anywhere(types_file, tmp_path, where, field_path, what):  # noqa: F811
    value = {"$.prices[].value": "tensor", "$.maybe": "h5vec.FutureMapCodec", "$.level": "Float128",
             "$.local": "h5vec.FutureRecordCodec"}[field_path]
    path = _patched(types_file, tmp_path, lambda f: _set_str(f, where(f), value))
    v = h5vec.open_vector(path, "rows")
    top = field_path[2:].split("[")[0]
    assert top in v.columns  # an unknown record is one column: its fields are not known to be columns
    _unknown_field_raises(v, field_path, what)
    rest = [c for c in v.columns if c != top]
    assert v.to_arrow(columns=rest).num_rows == N


def test_unknown_root_opens_and_names_the_vector(types_file, tmp_path):  # noqa: F811
    path = _patched(types_file, tmp_path, lambda f: _set_str(f, "halfs/metadata/schema/kind", "tensor"))
    v = h5vec.open_vector(path, "halfs")
    assert v.columns == ["value"] and v.schema["kind"] == "tensor" and len(v) == 5
    _unknown_field_raises(v, "$", "unknown kind tensor \\(codec HDF5Vectors.IdentityCodec\\)")
    assert h5vec.open_vector(path, "rows").read(columns=["level"])["level"].tolist() == [level(i) for i in range(N)]


def test_unknown_inside_a_read_column_fails_only_on_rows_that_need_it(types_file, tmp_path):  # noqa: F811
    # Map values (and list items, union variants) of an unknown node: rows without entries read.
    path = _patched(types_file, tmp_path,
                    lambda f: _set_str(f, f"{_child(f, 'prices')}/children/1/children/2/kind", "tensor"))
    v = h5vec.open_vector(path, "rows")
    assert v.read(columns=["prices"], rows=slice(0, 1))["prices"].tolist() == [[]]
    t = v.to_arrow(columns=["prices"], rows=slice(3, 4))
    assert t.column("prices").to_pylist() == [[]]
    value = t.schema.field("prices").type.item_field
    assert value.type == pa.null() and value.nullable and value.metadata[b"h5vec.unknown"] == b"true"
    with pytest.raises(h5vec.FormatError, match="unknown kind tensor") as e:
        v.read(columns=["prices"], rows=slice(0, 2))
    assert e.value.path == "$.prices[].value"


def test_a_map_with_an_unknown_key_is_unknown_as_a_whole(types_file, tmp_path):  # noqa: F811
    path = _patched(types_file, tmp_path,
                    lambda f: _set_str(f, f"{_child(f, 'prices')}/children/1/children/1/kind", "tensor"))
    v = h5vec.open_vector(path, "rows")
    with pytest.raises(h5vec.FormatError, match=r"unknown kind tensor .*\(the map's key\)") as e:
        v.read(columns=["prices"], rows=slice(0, 1))  # even a row without entries
    assert e.value.path == "$.prices"
    assert v.read(columns=["tags"])["tags"][1][0][0] == 1


def test_a_union_variant_of_an_unknown_codec_fails_only_on_its_rows(enums_file, tmp_path):  # noqa: F811
    from test_package_unions import event, plain
    path = tmp_path / "future.h5"
    shutil.copy(enums_file.filename, path)
    with h5py.File(path, "r+") as f:
        _set_str(f, f"{_child(f, 'event')}/children/2/codec", "h5vec.FutureCodec")  # Tick
    v = h5vec.open_vector(str(path), "rows")
    assert [plain(r) for r in v.read(columns=["event"], rows=slice(2, 5))["event"]] == [event(i) for i in range(2, 5)]
    assert v.to_arrow(columns=["event"], rows=slice(2, 5)).column("event").type.field(1).type == pa.struct([])
    for read in (v.read, v.to_arrow, v.to_polars):
        with pytest.raises(h5vec.FormatError, match="unknown codec h5vec.FutureCodec \\(kind record\\)") as e:
            read(columns=["event"], rows=slice(0, 2))
        assert e.value.path == "$.event.Tick"


def test_a_known_codec_on_the_wrong_kind_is_still_an_error_on_open(types_file, tmp_path):  # noqa: F811
    path = _patched(types_file, tmp_path, lambda f: _set_str(f, f"{_child(f, 'took')}/codec", "h5vec.UuidCodec"))
    with pytest.raises(h5vec.FormatError, match="for kind `scalar`, found `h5vec.UuidCodec`") as e:
        h5vec.open_vector(path, "rows")
    assert e.value.path == "$.took"


def test_a_zone_pandas_does_not_know_is_an_error_naming_the_column(types_file, tmp_path):  # noqa: F811
    path = _patched(types_file, tmp_path, lambda f: _set_str(f, f"{_child(f, 'at')}/time_zone", "Mars/Olympus"))
    v = h5vec.open_vector(path, "rows")
    assert v.to_arrow(columns=["at"]).schema.field("at").type == pa.timestamp("ns", "Mars/Olympus")
    assert v.read(columns=["at"])["at"].view("i8").tolist() == [ns(i) for i in range(N)]
    with pytest.raises(h5vec.FormatError, match="time zone 'Mars/Olympus' is not one pandas knows") as e:
        v.to_pandas(columns=["at"])
    assert e.value.path == "$.at"
