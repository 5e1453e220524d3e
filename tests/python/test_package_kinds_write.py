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
from test_enums_h5py import enums_file  # noqa: F401 (the fixture: examples/xlang_enums.rs, saved and appended)

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

    def kv(d):
        return None if d is None else [{"key": k, "value": v} for k, v in d.items()]
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


# ---------------------------------------------------------------------------
# The package reads back what it wrote; what it reads saves back the same


def test_package_reads_back_every_kind_it_wrote(tmp_path):
    path = tmp_path / "back.h5"
    h5vec.save_vector(str(path), "v", arrow_table())
    v = h5vec.open_vector(str(path), "v")
    d = v.read()
    assert d["at"].dtype == np.dtype("M8[ns]") and d["at"].view("i8").tolist() == [ns(i) for i in range(N)]
    assert d["naive"].view("i8").tolist() == [naive_ns(i) for i in range(N)]
    assert d["day"].dtype == np.dtype("M8[D]") and d["day"].view("i8").tolist() == [day(i) for i in range(N)]
    assert d["clock"].view("i8").tolist() == [clock_ns(i) for i in range(N)]
    assert d["took"].dtype == np.dtype("m8[ns]") and d["took"].view("i8").tolist() == [took_ns(i) for i in range(N)]
    assert [uuid.UUID(bytes=x.tobytes()) for x in d["id"]] == [uid(i) for i in range(N)]
    assert d["half"].dtype == np.float16 and d["half"].tolist() == [half(i) for i in range(N)]
    assert d["z"].dtype == np.complex128 and d["z"].tolist() == [z(i) for i in range(N)]
    assert d["z32"].dtype == np.complex64 and d["z32"].tolist() == [z32(i) for i in range(N)]
    assert [dict(r) for r in d["prices"]] == [prices(i) for i in range(N)]
    assert [dict(r) for r in d["notes"]] == [notes(i) for i in range(N)]
    assert [None if r is None else dict(r) for r in d["maybe_map"]] == [maybe_map(i) for i in range(N)]
    assert d["maybe_at"].mask.tolist() == [maybe_at(i) is None for i in range(N)]
    assert [plain(r) for r in d["shape"]] == [shape(i) for i in range(N)]
    assert [plain(r) for r in d["maybe_shape"]] == [maybe_shape(i) for i in range(N)]
    assert [[plain(s) for s in r] for r in d["shapes"]] == [shapes(i) for i in range(N)]
    assert [plain(r) for r in d["placed.shape"]] == [shape(i + 2) for i in range(N)]
    t = v.to_arrow()
    assert t.schema.field("at").type == pa.timestamp("ns", tz="UTC")
    assert t.schema.field("naive").type == pa.timestamp("ns")
    assert t.schema.field("day").type == pa.date32()
    assert t.schema.field("took").type == pa.duration("ns")
    assert t.schema.field("half").type == pa.float16()
    assert pa.types.is_map(t.schema.field("prices").type)
    assert pa.types.is_union(t.schema.field("shape").type)


def plain(row):
    """A numpy row of an enum with data with plain Python values."""
    if row is None:
        return None
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}


@pytest.mark.parametrize("via", ["to_arrow", "to_pandas", "to_pandas_attrs", "to_polars", "read"])
def test_what_the_package_reads_saves_back_into_rusts_layout(kinds_exe, rust_file, rust_schema, tmp_path, via):
    """Rust's vector read by the package (Arrow keeps every node in its field metadata;
    pandas, polars and numpy dicts take schema=Vector.schema; a DataFrame from
    to_pandas saves with its columns' nodes and the root node in its attrs) and saved
    again: Rust loads the same rows, and the layout is Rust's."""
    v = h5vec.open_vector(str(rust_file), "rust")
    assert nodes(v.schema) == nodes(rust_schema)
    path = tmp_path / f"{via}.h5"
    if via == "to_pandas_attrs":
        df = v.to_pandas()
        assert set(df.attrs["h5vec.columns"]) == set(df.columns)
        # Dotted columns cannot say that `local` is an offset date-time record: the root node can.
        df.attrs.setdefault("h5vec.schema", v.schema)
        h5vec.save_vector(str(path), "v", df)
    else:
        data = getattr(v, via)()
        h5vec.save_vector(str(path), "v", data, schema=None if via == "to_arrow" else v.schema)
    v.close()
    assert load(kinds_exe, path, "v", "kinds") == expect(KINDS)
    same_layout(path, "v", rust_file)


@pytest.mark.parametrize("via", ["to_arrow", "to_pandas", "to_pandas_attrs", "to_polars", "read", "append"])
def test_rusts_enums_with_data_save_back_exactly(enums_file, tmp_path, via):  # noqa: F811
    """examples/xlang_enums.rs (a renamed variant, a tuple variant holding a list,
    Option<Event>, Vec<Event>, a labelled fieldless enum) through every reader and
    back: Rust's layout, the same TAG and INDEX, the same rows."""
    v = h5vec.open_vector(enums_file.filename, "rows")
    path = str(tmp_path / "e.h5")
    if via == "append":
        h5vec.save_vector(path, "rows", v.to_arrow(rows=(0, 4)))
        h5vec.append_vector(path, "rows", v.to_arrow(rows=(4, len(v))))
    elif via == "to_pandas_attrs":  # the DataFrame's own column nodes, no schema=
        h5vec.save_vector(path, "rows", v.to_pandas())
    else:
        data = getattr(v, via)()
        h5vec.save_vector(path, "rows", data, schema=None if via == "to_arrow" else v.schema)
    with h5py.File(path, "r") as f:
        g = enums_file["rows"]
        assert layout(f["rows"]) == layout(g)
        assert nodes(_schema.read_node(f["rows/metadata/schema"], "$").to_dict()) == nodes(v.schema)
        for k in ("event/TAG", "event/INDEX", "maybe/TAG", "maybe/INDEX", "maybe/MASK", "history/VALUES/TAG",
                  "history/VALUES/INDEX", "status/values"):
            assert f["rows/data/" + k][:].tolist() == g["data/" + k][:].tolist(), k
    want = v.read()
    got = h5vec.open_vector(path, "rows").read()
    assert {k: repr(a) for k, a in got.items()} == {k: repr(a) for k, a in want.items()}


# ---------------------------------------------------------------------------
# numpy dicts, time zones, units


def node_of(path, name):
    with h5py.File(path, "r") as f:
        return _schema.read_node(f[name]["metadata/schema"], "$")


def test_numpy_dtypes_choose_the_kind(tmp_path):
    """datetime64[D] is a date, other datetime64 units naive instants in ns (converted
    exactly), timedelta64 durations, V16 UUIDs, float16 f16, complex complex, masked
    arrays Option."""
    path = str(tmp_path / "np.h5")
    ids = np.frombuffer(b"".join(uid(i).bytes for i in range(3)), "V16")
    h5vec.save_vector(path, "v", {
        "day": np.array(["1969-12-31", "2000-02-29", "9999-12-31"], "M8[D]"),
        "hour": np.array([0, -1, 5], "M8[h]"),
        "us": np.array([1, -2, 3], "M8[us]"),
        "took": np.array([1, -2, 3], "m8[s]"),
        "id": ids,
        "h": np.array([0.5, -0.0, np.inf], np.float16),
        "c": np.array([1 + 2j, -0.0 - 1j, 3], np.complex64),
        "maybe": np.ma.MaskedArray(np.array([1, 0, 3], "M8[ms]"), mask=[False, True, False]),
    })
    node = node_of(path, "v")
    kids = dict(zip(node.field_names, node.children))
    assert (kids["day"].codec, kids["day"].encoded_type, kids["day"].time_unit) == ("h5vec.DateCodec", "Int32", "d")
    for k in ("hour", "us", "maybe"):
        n = kids[k].children[0] if kids[k].kind == "nullable" else kids[k]
        assert (n.codec, n.time_unit, n.time_zone) == ("h5vec.InstantCodec", "ns", None)
    assert kids["maybe"].kind == "nullable"
    assert kids["took"].codec == "h5vec.DurationCodec"
    assert (kids["id"].kind, kids["id"].codec, kids["id"].dimensions) == ("dense", "h5vec.UuidCodec", [16])
    assert kids["h"].encoded_type == "Float16" and kids["c"].encoded_type == "ComplexF32"
    with h5py.File(path, "r") as f:
        g = f["v/data"]
        assert g["day/values"][:].tolist() == [-1, 11016, 2932896]
        assert g["hour/values"][:].tolist() == [0, -3_600_000_000_000, 18_000_000_000_000]
        assert g["us/values"][:].tolist() == [1000, -2000, 3000]
        assert g["took/values"][:].tolist() == [1_000_000_000, -2_000_000_000, 3_000_000_000]
        assert g["id/values"][:].tobytes() == ids.tobytes() and g["id/values"].shape == (3, 16)
        assert g["h/values"].dtype == np.float16 and g["h/values"][:].view("<u2").tolist() == [0x3800, 0x8000, 0x7C00]
        assert g["c/values"].dtype == np.complex64 and g["c/values"][:].tolist() == [1 + 2j, -0.0 - 1j, 3 + 0j]
        assert g["maybe/values"][:].tolist() == [1_000_000, 0, 3_000_000]
        assert g["maybe/MASK"][:].tolist() == [True, False, True]


def test_time_zones_are_stored_as_given(tmp_path):
    """pandas datetime64[ns, tz] keeps its zone name (UTC is what DateTime<Utc> loads);
    naive datetimes have none; the instants are the same UTC nanoseconds."""
    path = str(tmp_path / "tz.h5")
    at = pd.to_datetime([ns(i) for i in range(3)], unit="ns", utc=True)
    h5vec.save_vector(path, "v", pd.DataFrame({"utc": at, "paris": at.tz_convert("Europe/Paris"),
                                               "naive": at.tz_localize(None)}))
    kids = dict(zip(node_of(path, "v").field_names, node_of(path, "v").children))
    assert [kids[k].time_zone for k in ("utc", "paris", "naive")] == ["UTC", "Europe/Paris", None]
    with h5py.File(path, "r") as f:
        for k in ("utc", "paris", "naive"):
            assert f[f"v/data/{k}/values"][:].tolist() == [ns(i) for i in range(3)]
    # An append in another zone is another layout.
    with pytest.raises(h5vec.FormatError, match="differs from the stored"):
        h5vec.append_vector(path, "v", pd.DataFrame({"utc": at.tz_convert("Asia/Tokyo"), "paris": at,
                                                     "naive": at.tz_localize(None)}))


# ---------------------------------------------------------------------------
# What cannot be stored: an error naming the field (and the row), nothing linked


def refused(tmp_path, data, path, match, **kw):
    out = str(tmp_path / "bad.h5")
    with pytest.raises(h5vec.FormatError, match=match) as e:
        h5vec.save_vector(out, "v", data, **kw)
    assert e.value.path == path
    if os.path.exists(out):
        with h5py.File(out, "r") as f:
            assert "v" not in f
    return e.value


def test_instants_and_durations_past_int64_nanoseconds_name_the_row(tmp_path):
    big = pa.array([0, 10**11], pa.timestamp("s", tz="UTC"))
    e = refused(tmp_path, pa.table({"at": big}), "$.at[1]", "outside the instants Int64 nanoseconds")
    assert "5138-11-16T09:46:40" in str(e)
    refused(tmp_path, {"at": np.array(["2000-01-01", "2300-01-01"], "M8[s]")}, "$.at[1]", "outside the instants")
    refused(tmp_path, pd.DataFrame({"at": pd.Series(np.array(["1600-01-01"], "M8[s]"))}), "$.at[0]", "outside")
    refused(tmp_path, pa.table({"d": pa.array([1, -(10**17)], pa.duration("ms"))}), "$.d[1]", "outside the durations")
    refused(tmp_path, {"t": np.array([1, 1], "m8[ps]")}, "$.t[0]", "not a whole number of ns")


def test_nat_only_in_nullable_columns(tmp_path):
    refused(tmp_path, {"at": np.array(["2000-01-01", "NaT"], "M8[ns]")}, "$.at[1]", "NaT in a column that is not")
    at = pd.Series(pd.to_datetime([0, None], utc=True))
    refused(tmp_path, pd.DataFrame({"at": at}), "$.at[1]", "NaT in a column that is not nullable")
    col = pa.array([1, None], pa.timestamp("ns"))
    refused(tmp_path, pa.Table.from_arrays([col], schema=pa.schema([nn("at", col.type)])), "$.at",
            "row 1 is null but the Arrow field `at` is not nullable")
    path = str(tmp_path / "ok.h5")
    h5vec.save_vector(path, "v", pa.table({"at": pa.array([1, None], pa.timestamp("ns", tz="UTC"))}))
    assert node_of(path, "v").children[0].kind == "nullable"
    got = h5vec.open_vector(path, "v").read()["at"]
    assert got.mask.tolist() == [False, True] and int(got.data[0].view("i8")) == 1


def test_times_of_day_outside_the_day_name_the_row(tmp_path):
    refused(tmp_path, pa.table({"t": pa.array([0, DAY_NS], pa.time64("ns"))}), "$.t[1]", "not a time of day")
    refused(tmp_path, pa.table({"t": pa.array([-1], pa.time32("s"))}), "$.t[0]", "not a time of day")


def test_uuid_mistakes(tmp_path):
    fsb = pa.array([b"0123456789abcdef"], pa.binary(16))
    refused(tmp_path, pa.table({"id": fsb}), "$.id", "stored only as a UUID")
    refused(tmp_path, {"id": np.array([uid(0), "not a uuid"], dtype=object)}, "$.id[1]", "expected a uuid.UUID")
    # fixed_size_binary(16) with the uuid node in its metadata is a UUID.
    path = str(tmp_path / "ok.h5")
    md = {"h5vec.schema": json.dumps({"kind": "dense", "schema": "HDF5Vectors.DenseSchema",
                                      "codec": "h5vec.UuidCodec", "logical_type": "uuid::Uuid",
                                      "encoded_type": "UInt8", "dimensions": [16]})}
    h5vec.save_vector(path, "v", pa.Table.from_arrays([fsb], schema=pa.schema([nn("id", pa.binary(16), md)])))
    assert node_of(path, "v").children[0].codec == "h5vec.UuidCodec"


def test_enum_with_data_mistakes(tmp_path):
    flat_t = pa.struct([nn("variant", pa.string()), pa.field("Circle", CIRCLE), pa.field("Rect", RECT)])
    rows = [{"variant": "Circle", "Circle": {"r": 1.0}}, {"variant": "Square", "Circle": None}]
    flat_a = pa.array(rows, flat_t)
    # Marked flat, but without the union's node: the variants are unknown.
    t = pa.Table.from_arrays([flat_a], schema=pa.schema([nn("s", flat_t, {"h5vec.union": "flat"})]))
    refused(tmp_path, t, "$.s", "needs the union's schema node")
    # Unmarked, the same struct is a record (the layout comes from the types).
    rec = pa.Table.from_arrays([flat_a], schema=pa.schema([nn("s", flat_t)]))
    h5vec.save_vector(str(tmp_path / "rec.h5"), "v", rec)
    assert node_of(str(tmp_path / "rec.h5"), "v").children[0].kind == "record"
    h5vec.save_vector(str(tmp_path / "ref.h5"), "v", arrow_table(range(3)))
    union = h5vec.open_vector(str(tmp_path / "ref.h5"), "v").schema
    shape_node = union["children"][union["field_names"].index("shape")]
    md = {"h5vec.schema": json.dumps(shape_node), "h5vec.union": "flat"}
    t = pa.Table.from_arrays([flat_a], schema=pa.schema([nn("s", flat_t, md)]))
    refused(tmp_path, t, "$.s[1]", "variant 'Square' is not one of")
    named = dict(shape_node, variant_names=["variant", "Rect", "Empty"])
    named.pop("labels", None)
    t = pa.Table.from_arrays([flat_a], schema=pa.schema([nn("s", flat_t, {"h5vec.schema": json.dumps(named)})]))
    refused(tmp_path, t, "$.s", "a variant named `variant` cannot use the flat form")
    sparse = pa.UnionArray.from_sparse(pa.array([0], pa.int8()), [pa.array([{"r": 1.0}], CIRCLE)])
    refused(tmp_path, pa.table({"s": sparse}), "$.s", "found a sparse union")
    ids = pa.UnionArray.from_dense(pa.array([0], pa.int8()), pa.array([0], pa.int32()),
                                   [pa.array([{"r": 1.0}], CIRCLE)], ["Circle"], [3])
    refused(tmp_path, pa.table({"s": ids}), "$.s", "type ids 0, 1, ... in order")
    dense_null = dense([None, shape(1)], True)
    refused(tmp_path, pa.Table.from_arrays([dense_null], schema=pa.schema([nn("s", dense_null.type)])), "$.s[0]",
            "the row is null but the Arrow field `s` is not nullable")


def test_unstorable_types_name_the_column(tmp_path):
    refused(tmp_path, pa.table({"x": pa.array([1], pa.decimal128(5, 2))}), "$.x", "has no h5vec storage kind")
    refused(tmp_path, pa.table({"x": pa.array([0], pa.date64())}), "$.x", "date64 has no h5vec kind")
    refused(tmp_path, {"x": np.array([{"a": 1}, "b"], dtype=object)}, "$.x[1]", "expected a dict")
    refused(tmp_path, pl.DataFrame({"x": [1, None]}), "$.x", "row 1 is null")
    refused(tmp_path, pl.DataFrame({"x": [[1], [None]]}), "$.x[]", "row 1 is null but the Arrow field `item`")


def test_pandas_nan_is_a_value_and_na_a_null(tmp_path):
    """A float NaN is stored as the float (f64 keeps NaN); pandas' NA, None and NaT are
    nulls; an Option<record> from dotted columns is null where all its columns are."""
    path = str(tmp_path / "nan.h5")
    h5vec.save_vector(path, "v", pd.DataFrame({
        "f": pd.Series([1.0, np.nan]),
        "lst": pd.Series([[np.nan, 1.0], []], dtype=object),
        "g": pd.Series(pd.array([np.nan, None], dtype="Float64")),
    }))
    d = h5vec.open_vector(path, "v").read()
    assert np.isnan(d["f"][1]) and d["f"].dtype == np.float64 and not isinstance(d["f"], np.ma.MaskedArray)
    assert np.isnan(d["lst"][0][0]) and d["lst"][0][1] == 1.0
    assert d["g"].mask.tolist() == [True, True]  # pandas Float64 turns NaN into NA on construction
    node = {"kind": "record", "schema": "HDF5Vectors.RecordSchema", "codec": "HDF5Vectors.StructCodec",
            "logical_type": "Row", "field_names": ["p"], "children": [
                {"kind": "nullable", "schema": "h5vec.NullableSchema", "codec": "h5vec.MaskCodec",
                 "logical_type": "Option<P>", "children": [
                     {"kind": "record", "schema": "HDF5Vectors.RecordSchema", "codec": "HDF5Vectors.StructCodec",
                      "logical_type": "P", "field_names": ["x", "y"], "children": [
                          {"kind": "scalar", "schema": "HDF5Vectors.ScalarSchema",
                           "codec": "HDF5Vectors.IdentityCodec", "logical_type": "f64", "encoded_type": "Float64"},
                          {"kind": "scalar", "schema": "HDF5Vectors.ScalarSchema", "codec": "h5vec.InstantCodec",
                           "logical_type": "t", "encoded_type": "Int64", "time_unit": "ns", "time_zone": "UTC"}]}]}]}
    df = pd.DataFrame({"p.x": pd.Series(pd.array([1.5, None, 2.5], dtype="Float64")),
                       "p.y": pd.Series(pd.to_datetime([5, None, 7], unit="ns", utc=True))})
    h5vec.save_vector(path, "opt", df, schema=node)
    with h5py.File(path, "r") as f:
        assert f["opt/data/p/MASK"][:].tolist() == [True, False, True]
        assert f["opt/data/p/y/values"][:].tolist() == [5, 0, 7]
    assert nodes(h5vec.open_vector(path, "opt").schema) == nodes(node)
