"""The Python package writes every kind of SPEC.md sections 4.4 to 4.8 (instants,
dates, times of day, durations, UUIDs, f16, complex numbers, maps, enums with
data) from pyarrow, pandas and polars, in exactly the layout Rust writes, so that
`h5vec::load_vector::<T>` gets the Rust types back (examples/xlang_check_kinds.rs,
built once per session: it writes the reference vector, prints the expected rows,
and loads what Python wrote). Row i's values are a pure function of i, built here
independently of the Rust side. Also: the package reads back what it wrote,
appends keep the layout, and what cannot be stored is an error naming the field
and the row."""

import datetime
import json
import os
import struct
import subprocess
import uuid

import h5py
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import h5vec
from h5vec import _schema
from conftest import WORKSPACE

N = 7
DAY_NS = 86_400_000_000_000
EPOCH = datetime.date(1970, 1, 1)


# ---------------------------------------------------------------------------
# Row i's values (examples/xlang_check_kinds.rs computes the same in Rust)


def ns(i):
    return (i - 3) * 86_400_000_000_123 + i * 7


def naive_ns(i):
    return ns(i) + 1_000


def day(i):
    return (i - 3) * 40_000


def clock_ns(i):
    return (i * 7_777_777_777_000) % DAY_NS


def took_ns(i):
    return (i - 2) * 1_000_000_007


def uid(i):
    return uuid.UUID(int=0x0123_4567_89AB_4DEF_8123_4567_89AB_CD00 + i)


def half(i):
    return np.float16(i * 0.5 - 1.0)


def z(i):
    return complex(i + 0.5, -float(i))  # -0.0 at row 0, as Rust's -(0 as f64)


def z32(i):
    return np.complex64(complex(i, 2.0))


def prices(i):
    return {f"k{k}": i * 10.0 + k for k in range(i % 3)}


def tags(i):
    return {(k + 1) * 1000 - i: [f"t{i}"] * (i % 3) for k in range((i + 1) % 3)}


def notes(i):
    return {"a": f"x{i}", "b": None} if i % 2 else {}


def maybe_at(i):
    return ns(i) if i % 3 else None


def maybe_id(i):
    return uuid.UUID(int=i * 0x1_0000_0001) if i % 2 == 0 else None


def maybe_map(i):
    return {"n": -i} if i % 2 == 0 else None


def stamps(i):
    return [ns(i) + k for k in range(i % 3)]


def local(i):
    return ns(i), (i - 2) * 1800


def shape(i):
    k = i % 3
    if k == 0:
        return {"variant": "Circle", "r": i * 1.5}
    if k == 1:
        return {"variant": "Rect", "1": float(i), "2": -float(i)}
    return {"variant": "Empty"}


def maybe_shape(i):
    return None if i % 4 == 0 else shape(i + 1)


def shapes(i):
    return [shape(i + k) for k in range(i % 3)]


def placed(i):
    return {"at": i, "shape": shape(i + 2)}


TIMES = ["at", "naive", "day", "clock", "took"]
NATURAL = TIMES + ["id", "half", "z", "z32", "prices", "tags"]
KINDS = NATURAL + ["notes", "maybe_at", "maybe_id", "maybe_map", "stamps", "local", "shape", "maybe_shape",
                   "shapes", "placed"]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32_bits(x):
    return int(np.float32(x).view(np.uint32))


def pairs(d):
    return [[k, v] for k, v in sorted(d.items())]


def expected(i):
    """Row i in the canonical JSON form xlang_check_kinds prints."""
    return {
        "at": ns(i), "naive": naive_ns(i), "day": day(i), "clock": clock_ns(i), "took": took_ns(i),
        "id": str(uid(i)), "half": int(half(i).view(np.uint16)),
        "z": [f64_bits(z(i).real), f64_bits(z(i).imag)], "z32": [f32_bits(z32(i).real), f32_bits(z32(i).imag)],
        "prices": pairs(prices(i)), "tags": pairs(tags(i)), "notes": pairs(notes(i)),
        "maybe_at": maybe_at(i), "maybe_id": None if maybe_id(i) is None else str(maybe_id(i)),
        "maybe_map": None if maybe_map(i) is None else pairs(maybe_map(i)), "stamps": stamps(i),
        "local": list(local(i)), "shape": shape(i), "maybe_shape": maybe_shape(i), "shapes": shapes(i),
        "placed": placed(i),
    }


def expect(fields, rows=range(N)):
    return [{k: expected(i)[k] for k in fields} for i in rows]


# ---------------------------------------------------------------------------
# The Rust side, built once


@pytest.fixture(scope="module")
def kinds_exe():
    cmd = ["cargo", "build", "--quiet", "--example", "xlang_check_kinds",
           "--features", "chrono,uuid,half,num-complex", "--message-format=json-render-diagnostics"]
    if os.environ.get("XLANG_CARGO_PROFILE") == "release":
        cmd.append("--release")
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0, "building examples/xlang_check_kinds.rs failed"
    exe = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "xlang_check_kinds":
            exe = msg.get("executable") or exe
    assert exe
    return exe


def run(exe, *args):
    proc = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def rust_file(kinds_exe, tmp_path_factory):
    """The reference file: vector `rust` saved by Rust, rows 0..N of `Kinds`."""
    path = tmp_path_factory.mktemp("kinds") / "rust.h5"
    rows = run(kinds_exe, "write", path, N)
    assert rows == expect(KINDS), "the Python and Rust row functions disagree"
    return path


@pytest.fixture(scope="module")
def rust_schema(rust_file):
    """The schema node of the Rust-written vector (as `Vector.schema` gives it)."""
    with h5py.File(rust_file, "r") as f:
        return _schema.read_node(f["rust/metadata/schema"], "$").to_dict()


def load(exe, path, name, ty):
    return run(exe, "read", path, name, ty)


# ---------------------------------------------------------------------------
# Layout: what Python wrote against what Rust wrote


def _type(t):
    c = t.get_class()
    d = [int(c), t.get_size()]
    if c == h5py.h5t.INTEGER:
        d += [int(t.get_sign()), int(t.get_order())]
    elif c == h5py.h5t.FLOAT:
        d += [int(t.get_order()), t.get_fields()]
    elif c == h5py.h5t.COMPOUND:
        d += [(t.get_member_name(i), t.get_member_offset(i), _type(t.get_member_type(i)))
              for i in range(t.get_nmembers())]
    elif c == h5py.h5t.ENUM:
        d += [(t.get_member_name(i), t.get_member_value(i)) for i in range(t.get_nmembers())]
        d.append(_type(t.get_super()))
    elif c == h5py.h5t.STRING:
        d += [t.is_variable_str(), int(t.get_cset()), int(t.get_strpad())]
    return d


def layout(group):
    """Every object below a vector's data group: path, HDF5 type, shape tail, attributes
    (chunk sizes aside: they follow the row counts)."""
    out = []

    def visit(name, obj):
        attrs = sorted((k, _type(obj.attrs.get_id(k).get_type()), str(obj.attrs[k])) for k in obj.attrs)
        if isinstance(obj, h5py.Dataset):
            out.append((name, _type(obj.id.get_type()), obj.shape[1:], obj.chunks is not None,
                        obj.maxshape[0], attrs))
        else:
            out.append((name, "group", attrs))
    group["data"].visititems(visit)
    return sorted(out, key=lambda x: x[0])


def nodes(node):
    """A schema node dict without its logical types (descriptive only)."""
    d = {k: v for k, v in node.items() if k != "logical_type"}
    if "children" in d:
        d["children"] = [nodes(c) for c in d["children"]]
    return d


def same_layout(path, name, rust_file, fields=None):
    with h5py.File(rust_file, "r") as r, h5py.File(path, "r") as p:
        want = layout(r["rust"])
        if fields is not None:
            want = [x for x in want if x[0].split("/")[0] in fields]
        assert layout(p[name]) == want
        got = _schema.read_node(p[name]["metadata/schema"], "$").to_dict()
        ref = _schema.read_node(r["rust/metadata/schema"], "$").to_dict()
        if fields is not None:
            keep = [k for k, f in enumerate(ref["field_names"]) if f in fields]
            ref["field_names"] = [ref["field_names"][k] for k in keep]
            ref["children"] = [ref["children"][k] for k in keep]
        assert nodes(got) == nodes(ref)


# ---------------------------------------------------------------------------
# Inputs


def nn(name, t, md=None):
    return pa.field(name, t, nullable=False, metadata=md)


def complex_node(enc):
    return json.dumps({"kind": "scalar", "schema": "HDF5Vectors.ScalarSchema", "codec": "HDF5Vectors.IdentityCodec",
                       "logical_type": "num_complex::Complex<f64>", "encoded_type": enc})


CIRCLE = pa.struct([nn("r", pa.float64())])
RECT = pa.struct([nn("1", pa.float64()), nn("2", pa.float64())])
VARIANTS = ["Circle", "Rect", "Empty"]


def union_type(nullable):
    return pa.union([pa.field("Circle", CIRCLE, nullable=nullable), pa.field("Rect", RECT, nullable=nullable),
                     pa.field("Empty", pa.struct([]), nullable=nullable)], mode="dense", type_codes=[0, 1, 2])


def dense(rows, nullable=False):
    """Shapes (None: a null row, null in the first variant's child) as an Arrow dense union."""
    kids = {v: [] for v in VARIANTS}
    tags, offs = [], []
    for r in rows:
        name = "Circle" if r is None else r["variant"]
        tags.append(VARIANTS.index(name))
        offs.append(len(kids[name]))
        kids[name].append(None if r is None else {k: v for k, v in r.items() if k != "variant"})
    children = [pa.array(kids["Circle"], CIRCLE), pa.array(kids["Rect"], RECT),
                pa.array([{}] * len(kids["Empty"]), pa.struct([]))]
    return pa.UnionArray.from_buffers(union_type(nullable), len(rows),
                                      [None, pa.py_buffer(np.array(tags, np.int8)),
                                       pa.py_buffer(np.array(offs, np.int32))], children=children)


def entries(t_key, t_value, nullable_value=False):
    return pa.map_(nn("key", t_key), pa.field("value", t_value, nullable=nullable_value))


def arrow_table(rows=range(N)):
    """Every field of Kinds in its natural Arrow type (complex numbers and the offset
    date-time carry their node / codec in the field metadata)."""
    rows = list(rows)
    tag_t = entries(pa.int64(), pa.large_list(nn("item", pa.large_string())))
    ts = pa.timestamp("ns", tz="UTC")
    cols = {
        "at": (pa.array([ns(i) for i in rows], ts), nn("at", ts)),
        "naive": (pa.array([naive_ns(i) for i in rows], pa.timestamp("ns")), nn("naive", pa.timestamp("ns"))),
        "day": (pa.array([day(i) for i in rows], pa.int32()).cast(pa.date32()), nn("day", pa.date32())),
        "clock": (pa.array([clock_ns(i) // 1000 for i in rows], pa.time64("us")), nn("clock", pa.time64("us"))),
        "took": (pa.array([took_ns(i) for i in rows], pa.duration("ns")), nn("took", pa.duration("ns"))),
        "id": (pa.array([uid(i) for i in rows], pa.uuid()), nn("id", pa.uuid())),
        "half": (pa.array(np.array([half(i) for i in rows], np.float16)), nn("half", pa.float16())),
        "z": (pa.array([{"r": z(i).real, "i": z(i).imag} for i in rows],
                       pa.struct([nn("r", pa.float64()), nn("i", pa.float64())])),
              nn("z", pa.struct([nn("r", pa.float64()), nn("i", pa.float64())]),
                 {"h5vec.schema": complex_node("ComplexF64")})),
        "z32": (pa.array([{"r": z32(i).real, "i": z32(i).imag} for i in rows],
                         pa.struct([nn("r", pa.float32()), nn("i", pa.float32())])),
                nn("z32", pa.struct([nn("r", pa.float32()), nn("i", pa.float32())]),
                   {"h5vec.encoded_type": "ComplexF32"})),
        "prices": (pa.array([list(prices(i).items()) for i in rows], entries(pa.string(), pa.float64())),
                   nn("prices", entries(pa.string(), pa.float64()))),
        "tags": (pa.array([list(tags(i).items()) for i in rows], tag_t), nn("tags", tag_t)),
        "notes": (pa.array([list(notes(i).items()) for i in rows], entries(pa.string(), pa.string(), True)),
                  nn("notes", entries(pa.string(), pa.string(), True))),
        "maybe_at": (pa.array([maybe_at(i) for i in rows], ts), pa.field("maybe_at", ts)),
        "maybe_id": (pa.array([maybe_id(i) for i in rows], pa.uuid()), pa.field("maybe_id", pa.uuid())),
        "maybe_map": (pa.array([None if maybe_map(i) is None else list(maybe_map(i).items()) for i in rows],
                               entries(pa.string(), pa.int64())),
                      pa.field("maybe_map", entries(pa.string(), pa.int64()))),
        "stamps": (pa.array([stamps(i) for i in rows], pa.large_list(nn("item", ts))),
                   nn("stamps", pa.large_list(nn("item", ts)))),
        "local": (pa.array([{"instant": local(i)[0], "offset_seconds": local(i)[1]} for i in rows],
                           pa.struct([nn("instant", ts), nn("offset_seconds", pa.int32())])),
                  nn("local", pa.struct([nn("instant", ts), nn("offset_seconds", pa.int32())]),
                     {"h5vec.codec": "h5vec.OffsetDateTimeCodec"})),
        "shape": (dense([shape(i) for i in rows]), nn("shape", union_type(False))),
        "maybe_shape": (dense([maybe_shape(i) for i in rows], True),
                        pa.field("maybe_shape", union_type(True))),
    }
    flat = [s for i in rows for s in shapes(i)]
    offs = np.cumsum([0] + [len(shapes(i)) for i in rows])
    lt = pa.large_list(nn("item", union_type(False)))
    cols["shapes"] = (pa.LargeListArray.from_arrays(pa.array(offs), dense(flat), type=lt), nn("shapes", lt))
    pt = pa.struct([nn("at", pa.int32()), nn("shape", union_type(False))])
    cols["placed"] = (pa.StructArray.from_arrays([pa.array(rows, pa.int32()), dense([shape(i + 2) for i in rows])],
                                                 fields=list(pt)), nn("placed", pt))
    return pa.Table.from_arrays([cols[k][0] for k in KINDS], schema=pa.schema([cols[k][1] for k in KINDS]))


def pandas_natural(rows=range(N)):
    """The Natural fields as pandas columns of their natural dtypes (no schema=)."""
    rows = list(rows)
    return pd.DataFrame({
        "at": pd.Series(pd.to_datetime([ns(i) for i in rows], unit="ns", utc=True)),
        "naive": pd.Series(np.array([naive_ns(i) for i in rows], "M8[ns]")),
        "day": pd.Series([EPOCH + datetime.timedelta(days=day(i)) for i in rows], dtype=object),
        "clock": pd.Series([(datetime.datetime(2000, 1, 1) + datetime.timedelta(microseconds=clock_ns(i) // 1000))
                            .time() for i in rows], dtype=object),
        "took": pd.Series(np.array([took_ns(i) for i in rows], "m8[ns]")),
        "id": pd.Series([uid(i) for i in rows], dtype=object),
        "half": pd.Series(np.array([half(i) for i in rows], np.float16)),
        "z": pd.Series(np.array([z(i) for i in rows], np.complex128)),
        "z32": pd.Series(np.array([z32(i) for i in rows], np.complex64)),
        "prices": pd.Series([prices(i) for i in rows], dtype=object),
        "tags": pd.Series([tags(i) for i in rows], dtype=object),
    })


def pandas_full(rows=range(N)):
    """Every field of Kinds in pandas (to save with schema=): Option fields with NaT /
    None, maps as dicts, enums with data as {"variant": ...} dicts, the offset
    date-time as two dotted columns."""
    rows = list(rows)
    df = pandas_natural(rows)
    df["notes"] = pd.Series([notes(i) for i in rows], dtype=object)
    df["maybe_at"] = pd.Series(pd.to_datetime([maybe_at(i) for i in rows], unit="ns", utc=True))
    df["maybe_id"] = pd.Series([maybe_id(i) for i in rows], dtype=object)
    df["maybe_map"] = pd.Series([maybe_map(i) for i in rows], dtype=object)
    df["stamps"] = pd.Series([[pd.Timestamp(s, unit="ns", tz="UTC") for s in stamps(i)] for i in rows],
                             dtype=object)
    df["local.instant"] = pd.Series(pd.to_datetime([local(i)[0] for i in rows], unit="ns", utc=True))
    df["local.offset_seconds"] = pd.Series(np.array([local(i)[1] for i in rows], np.int32))
    df["shape"] = pd.Series([shape(i) for i in rows], dtype=object)
    df["maybe_shape"] = pd.Series([maybe_shape(i) for i in rows], dtype=object)
    df["shapes"] = pd.Series([shapes(i) for i in rows], dtype=object)
    df["placed.at"] = pd.Series(np.array(rows, np.int32))
    df["placed.shape"] = pd.Series([shape(i + 2) for i in rows], dtype=object)
    return df


def flat(s):
    """A shape in the flat union form, as polars builds a struct from dicts."""
    if s is None:
        return None
    out = {"variant": s["variant"], "Circle": None, "Rect": None}
    if s["variant"] != "Empty":
        out[s["variant"]] = {k: v for k, v in s.items() if k != "variant"}
    return out


def polars_times(rows=range(N)):
    rows = list(rows)
    return pl.DataFrame({
        "at": pl.Series([ns(i) for i in rows], dtype=pl.Int64).cast(pl.Datetime("ns", "UTC")),
        "naive": pl.Series([naive_ns(i) for i in rows], dtype=pl.Int64).cast(pl.Datetime("ns")),
        "day": pl.Series([day(i) for i in rows], dtype=pl.Int32).cast(pl.Date),
        "clock": pl.Series([clock_ns(i) for i in rows], dtype=pl.Int64).cast(pl.Time),
        "took": pl.Series([took_ns(i) for i in rows], dtype=pl.Int64).cast(pl.Duration("ns")),
    })


def polars_full(rows=range(N)):
    """Every field of Kinds in polars types (to save with schema=): UUIDs as 16-byte
    Binary, f16 as Float32, complex as structs {r, i}, maps as lists of {key, value},
    enums with data in the flat form (a `variant` column and one struct per variant)."""
    rows = list(rows)
    kv = lambda d: None if d is None else [{"key": k, "value": v} for k, v in d.items()]  # noqa: E731
    flat_t = pl.Struct({"variant": pl.Categorical, "Circle": pl.Struct({"r": pl.Float64}),
                        "Rect": pl.Struct({"1": pl.Float64, "2": pl.Float64})})
    df = polars_times(rows)
    return df.with_columns(
        pl.Series("id", [uid(i).bytes for i in rows], dtype=pl.Binary),
        pl.Series("half", [float(half(i)) for i in rows], dtype=pl.Float32),
        pl.Series("z", [{"r": z(i).real, "i": z(i).imag} for i in rows]),
        pl.Series("z32", [{"r": float(z32(i).real), "i": float(z32(i).imag)} for i in rows],
                  dtype=pl.Struct({"r": pl.Float32, "i": pl.Float32})),
        pl.Series("prices", [kv(prices(i)) for i in rows],
                  dtype=pl.List(pl.Struct({"key": pl.String, "value": pl.Float64}))),
        pl.Series("tags", [kv(tags(i)) for i in rows],
                  dtype=pl.List(pl.Struct({"key": pl.Int64, "value": pl.List(pl.String)}))),
        pl.Series("notes", [kv(notes(i)) for i in rows],
                  dtype=pl.List(pl.Struct({"key": pl.String, "value": pl.String}))),
        pl.Series("maybe_at", [maybe_at(i) for i in rows], dtype=pl.Int64).cast(pl.Datetime("ns", "UTC")),
        pl.Series("maybe_id", [None if maybe_id(i) is None else maybe_id(i).bytes for i in rows], dtype=pl.Binary),
        pl.Series("maybe_map", [kv(maybe_map(i)) for i in rows],
                  dtype=pl.List(pl.Struct({"key": pl.String, "value": pl.Int64}))),
        pl.Series("stamps", [stamps(i) for i in rows], dtype=pl.List(pl.Int64)).cast(
            pl.List(pl.Datetime("ns", "UTC"))),
        pl.Series("local", [{"instant": local(i)[0], "offset_seconds": local(i)[1]} for i in rows],
                  dtype=pl.Struct({"instant": pl.Int64, "offset_seconds": pl.Int32})).cast(
            pl.Struct({"instant": pl.Datetime("ns", "UTC"), "offset_seconds": pl.Int32})),
        pl.Series("shape", [flat(shape(i)) for i in rows], dtype=flat_t),
        pl.Series("maybe_shape", [flat(maybe_shape(i)) for i in rows], dtype=flat_t),
        pl.Series("shapes", [[flat(s) for s in shapes(i)] for i in rows], dtype=pl.List(flat_t)),
        pl.Series("placed", [{"at": i, "shape": flat(shape(i + 2))} for i in rows],
                  dtype=pl.Struct({"at": pl.Int32, "shape": flat_t})),
    )


# ---------------------------------------------------------------------------
# Rust loads what Python wrote


def test_arrow_every_kind_loads_in_rust_with_rusts_layout(kinds_exe, rust_file, tmp_path):
    path = tmp_path / "pa.h5"
    h5vec.save_vector(str(path), "v", arrow_table())
    assert load(kinds_exe, path, "v", "kinds") == expect(KINDS)
    same_layout(path, "v", rust_file)


def test_pandas_natural_dtypes_load_in_rust(kinds_exe, rust_file, tmp_path):
    df = pandas_natural()
    assert str(df["at"].dtype) == "datetime64[ns, UTC]" and df["z"].dtype == np.complex128
    path = tmp_path / "pd.h5"
    h5vec.save_vector(str(path), "v", df)
    assert load(kinds_exe, path, "v", "natural") == expect(NATURAL)
    same_layout(path, "v", rust_file, NATURAL)


def test_pandas_every_kind_with_the_schema_node(kinds_exe, rust_file, rust_schema, tmp_path):
    path = tmp_path / "pd_full.h5"
    h5vec.save_vector(str(path), "v", pandas_full(), schema=rust_schema)
    assert load(kinds_exe, path, "v", "kinds") == expect(KINDS)
    same_layout(path, "v", rust_file)


def test_polars_natural_types_load_in_rust(kinds_exe, rust_file, tmp_path):
    path = tmp_path / "pl.h5"
    h5vec.save_vector(str(path), "v", polars_times())
    assert load(kinds_exe, path, "v", "times") == expect(TIMES)
    same_layout(path, "v", rust_file, TIMES)


def test_polars_every_kind_with_the_schema_node(kinds_exe, rust_file, rust_schema, tmp_path):
    path = tmp_path / "pl_full.h5"
    h5vec.save_vector(str(path), "v", polars_full(), schema=rust_schema)
    assert load(kinds_exe, path, "v", "kinds") == expect(KINDS)
    same_layout(path, "v", rust_file)


def test_appends_of_every_kind_continue_the_layout(kinds_exe, rust_file, tmp_path):
    """Saved from pyarrow, appended from pandas (with the stored layout) and polars:
    the union INDEX continues each variant's rows."""
    path = tmp_path / "app.h5"
    h5vec.save_vector(str(path), "v", arrow_table(range(0, 3)))
    h5vec.append_vector(str(path), "v", pandas_full(range(3, 5)), schema=rust_schema_of(path))
    h5vec.append_vector(str(path), "v", polars_full(range(5, N)), schema=rust_schema_of(path))
    assert load(kinds_exe, path, "v", "kinds") == expect(KINDS)
    same_layout(path, "v", rust_file)
    with h5py.File(path, "r") as f:
        assert f["v/data/shape/INDEX"][:].tolist() == [0, 0, 0, 1, 1, 1, 2]


def rust_schema_of(path):
    with h5py.File(path, "r") as f:
        return _schema.read_node(f["v/metadata/schema"], "$").to_dict()
