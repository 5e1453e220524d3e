"""The cross-language matrix (issue 27): one vector per kind and per supported
Rust type (every row of SPEC.md section 5), written by examples/xlang_matrix.rs
with its canonical expected values (EXPECTED.json), read by every reader
outside Rust and compared exactly; and the reverse: the Python package writes
every vector from pyarrow, pandas and polars values and Rust loads it into its
Rust type (`xlang_matrix check`).

Each (vector, reader) pair is one test id, `test_read[VECTOR-READER]`, so the
pytest report is the matrix:

| reader | what is compared |
|---|---|
| read, to_arrow, to_pandas, to_polars | the Python package, whole vector (and the types of the design table) |
| iter_numpy, iter_arrow, iter_pandas, iter_polars | `iter_batches(2, format=...)`, batches concatenated |
| cat_table, cat_jsonl, cat_csv, head | `h5vec cat --format table/jsonl/csv`, `h5vec head -n 2 --format jsonl` |
| parquet_pyarrow, parquet_polars, ipc_pyarrow, ipc_polars | `h5vec convert` to .parquet / .arrow, read by pyarrow and polars |
| csv_pyarrow, csv_polars | `h5vec convert` to .csv, read with every column as text (type inference turns u64::MAX into a double, "1" strings into ints, ...), cells parsed by the kind |
| jsonl_pyarrow, jsonl_polars | `h5vec convert` to .jsonl, read with the readers' own inference; floats are float64 there (an f32 is the nearest f32) and a map's entries come back as the fields of one struct for all rows (compared in key order) |
| parquet_rust | `h5vec convert` .parquet -> .h5 again, loaded by Rust (`xlang_matrix check`): the metadata restores every kind |
| write_pyarrow, write_pandas, write_polars | `h5vec.save_vector` of the values built in that library's types, loaded by Rust |

The `h5vec` binary is $H5VEC_BIN or target/debug/h5vec (the command's cells are
skipped without one). Every value is compared in the canonical form of
examples/xlang_matrix.rs (tests/python/matrix_expected.py).
"""

import re
import concurrent.futures
import json
import os
import subprocess
import uuid
from pathlib import Path

import h5py
import numpy as np
import pytest

import matrix_expected as mx
from conftest import WORKSPACE

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
import h5vec  # noqa: E402

PKG = ["read", "to_arrow", "to_pandas", "to_polars", "iter_numpy", "iter_arrow", "iter_pandas", "iter_polars"]
CLI = ["cat_table", "cat_jsonl", "cat_csv", "head", "parquet_pyarrow", "parquet_polars", "ipc_pyarrow",
       "ipc_polars", "csv_pyarrow", "csv_polars", "jsonl_pyarrow", "jsonl_polars", "parquet_rust"]
WRITE = ["write_pyarrow", "write_pandas", "write_polars"]
READERS = PKG + CLI + WRITE
HEAD_ROWS = 2
BATCH = 2
CSV = mx.Ctx(csv=True)
JSONL = mx.Ctx(text_floats=True, inferred_structs=True)

# What the Rust example saved with options: VLS strings and a compressed vector's JSON text.
VLS = {"vls_string": ["value"], "vls_option_string": ["value"], "vls_field": ["name", "maybe"]}
SAVE_OPTS = {"vls_json": {"compression": "deflate"}}


def _candidates():
    env = os.environ.get("H5VEC_BIN")
    if env:
        yield Path(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR", WORKSPACE / "target"))
    if not target.is_absolute():
        target = WORKSPACE / target
    yield target / "debug" / "h5vec"


H5VEC = next((p for p in _candidates() if p.is_file()), None)


# ---------------------------------------------------------------------------
# Session fixtures: the Rust file, the command's outputs, the Python-written files


@pytest.fixture(scope="session")
def matrix_exe():
    return mx.build_example()


@pytest.fixture(scope="session")
def matrix(matrix_exe, tmp_path_factory):
    """(path of the Rust-written file, path of EXPECTED.json, {name: {"type", "rows"}}).

    With H5VEC_MATRIX_DIR set, its matrix.h5 and expected.json instead: the
    file MPI ranks wrote (`xlang_matrix mpi-write`, scripts/mpi_test.sh)."""
    given = os.environ.get("H5VEC_MATRIX_DIR")
    if given:
        h5, expected = Path(given) / "matrix.h5", Path(given) / "expected.json"
        doc = json.loads(expected.read_text())
        return h5, expected, {v["name"]: v for v in doc["vectors"]}
    return mx.write_matrix(tmp_path_factory.mktemp("matrix"), matrix_exe)


def run_check(exe, h5, expected):
    """`xlang_matrix check` -> {name: None (ok) or reason}, for the vectors the file holds."""
    proc = subprocess.run([exe, "check", str(h5), str(expected)], capture_output=True, text=True, timeout=300)
    if proc.returncode not in (0, 1):
        raise AssertionError(f"xlang_matrix check failed (exit {proc.returncode}): {proc.stderr}")
    out = {}
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word == "ok":
            out[rest] = None
        elif word == "FAIL":
            name, _, why = rest.partition(": ")
            out[name] = why
    return out


@pytest.fixture(scope="session")
def cli(matrix, matrix_exe, tmp_path_factory):
    """Every command run once, in parallel: {(name, what): CompletedProcess or output path}."""
    if H5VEC is None:
        pytest.skip("no h5vec binary at $H5VEC_BIN or target/debug/h5vec (cargo build -p h5vec-cli)")
    h5, expected, vecs = matrix
    d = tmp_path_factory.mktemp("cli")
    back = d / "back.h5"
    jobs = {}
    for name in vecs:
        jobs[(name, "cat_table")] = ["cat", str(h5), name]
        jobs[(name, "cat_jsonl")] = ["cat", str(h5), name, "--format", "jsonl"]
        jobs[(name, "cat_csv")] = ["cat", str(h5), name, "--format", "csv"]
        jobs[(name, "head")] = ["head", str(h5), name, "-n", str(HEAD_ROWS), "--format", "jsonl"]
        for ext in ("parquet", "arrow", "csv", "jsonl"):
            jobs[(name, ext)] = ["convert", f"{h5}:{name}", str(d / f"{name}.{ext}")]

    def run(args):
        return subprocess.run([str(H5VEC), *args], capture_output=True, timeout=120)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = dict(zip(jobs, pool.map(run, jobs.values())))
    # Parquet back to HDF5 (one file; HDF5 writes are serial), then one Rust check for all.
    for name in vecs:
        if results[(name, "parquet")].returncode == 0:
            results[(name, "parquet_back")] = run(["convert", str(d / f"{name}.parquet"), f"{back}:{name}"])
    results["check_back"] = run_check(matrix_exe, back, expected) if back.exists() else {}
    results["dir"] = d
    return results


def cli_output(cli, name, what):
    proc = cli[(name, what)]
    if proc.returncode != 0:
        raise AssertionError(f"h5vec {what} failed (exit {proc.returncode}): "
                             f"{proc.stderr.decode(errors='replace').strip()}")
    return proc


# ---------------------------------------------------------------------------
# The package's readers


def pkg_rows(h5, name, reader, ty, n):
    with h5vec.open_vector(str(h5), name) as v:
        if reader == "read":
            res = v.read()
            check_types(reader, ty, res)
            cols = mx.columns_of_numpy(res)
        elif reader == "to_arrow":
            res = v.to_arrow()
            check_types(reader, ty, res)
            cols = mx.columns_of_arrow_table(res)
        elif reader == "to_pandas":
            res = v.to_pandas()
            check_types(reader, ty, res)
            assert list(res.index) == list(range(n))
            cols = mx.columns_of_pandas(res)
        elif reader == "to_polars":
            res = v.to_polars()
            check_types(reader, ty, res)
            cols = mx.columns_of_polars(res)
        else:
            fmt = reader.split("_", 1)[1]
            cols = {}
            start = 0
            for b in v.iter_batches(BATCH, format=fmt):
                if fmt == "numpy":
                    part = mx.columns_of_numpy(b)
                elif fmt == "arrow":
                    part = mx.columns_of_arrow_table(pa.Table.from_batches([b]))
                elif fmt == "pandas":
                    assert list(b.index) == list(range(start, start + len(b))), "batch index is not the row number"
                    part = mx.columns_of_pandas(b)
                else:
                    part = mx.columns_of_polars(b)
                blen = len(next(iter(part.values()))) if part else 0
                start += blen
                for k, x in part.items():
                    cols.setdefault(k, []).extend(x)
            assert start == n, f"batches hold {start} rows, expected {n}"
    return mx.rows_from_columns(ty, cols, n)


def leaf(ty):
    """The type of a non-record root's `value` column (Option unwrapped), or None."""
    t = ty["some"] if ty["t"] == "option" else ty
    return t


def check_types(reader, ty, res):
    """The types of the design table (issue 27) for the root `value` column of the new kinds."""
    t = leaf(ty)
    k = t["t"]
    if k not in ("instant", "date", "time", "duration", "uuid", "f16", "complex64", "complex128", "map",
                 "offset_datetime", "union"):
        return
    if reader == "read":
        if k == "offset_datetime":
            assert res["instant"].dtype == np.dtype("M8[ns]") and res["offset_seconds"].dtype == np.int32
            return
        want = {"instant": "M8[ns]", "date": "M8[D]", "time": "m8[ns]", "duration": "m8[ns]", "uuid": "V16",
                "f16": "float16", "complex64": "complex64", "complex128": "complex128", "map": "O",
                "union": "O"}[k]
        assert res["value"].dtype == np.dtype(want), f"read(): dtype {res['value'].dtype}, expected {want}"
    elif reader == "to_arrow":
        if k == "offset_datetime":
            want = pa.struct([pa.field("instant", pa.timestamp("ns", "UTC"), nullable=False),
                              pa.field("offset_seconds", pa.int32(), nullable=False)])
            got = pa.struct(list(res.schema))
            assert got.equals(want), f"to_arrow(): {got}, expected {want}"
            return
        got = res.schema.field("value").type
        if k == "instant":
            assert got == pa.timestamp("ns", t["tz"]), f"to_arrow(): {got}"
        elif k == "date":
            assert got == pa.date32(), f"to_arrow(): {got}"
        elif k == "time":
            assert got == pa.time64("ns"), f"to_arrow(): {got}"
        elif k == "duration":
            assert got == pa.duration("ns"), f"to_arrow(): {got}"
        elif k == "uuid":
            want = pa.uuid() if hasattr(pa, "uuid") else pa.binary(16)
            assert got == want, f"to_arrow(): {got}, expected {want}"
        elif k == "f16":
            assert got == pa.float16(), f"to_arrow(): {got}"
        elif k in ("complex64", "complex128"):
            ft = pa.float32() if k == "complex64" else pa.float64()
            want = pa.struct([pa.field("r", ft, nullable=False), pa.field("i", ft, nullable=False)])
            assert got == want, f"to_arrow(): {got}, expected {want}"
        elif k == "map":
            assert pa.types.is_map(got), f"to_arrow(): {got}"
        elif k == "union":
            assert pa.types.is_union(got) and got.mode == "dense", f"to_arrow(): {got}"
    elif reader == "to_pandas":
        if k == "offset_datetime":
            assert str(res["instant"].dtype) == "datetime64[ns, UTC]", f"to_pandas(): {res['instant'].dtype}"
            return
        s = res["value"]
        if k == "instant":
            want = "datetime64[ns, UTC]" if t["tz"] else "datetime64[ns]"
            assert str(s.dtype) == want, f"to_pandas(): {s.dtype}, expected {want}"
        elif k == "date":
            assert s.dtype.kind == "M", f"to_pandas(): {s.dtype}, expected a datetime64 holding every Int32 day"
        elif k in ("time", "duration"):
            assert str(s.dtype) == "timedelta64[ns]", f"to_pandas(): {s.dtype}"
        elif k == "uuid":
            assert s.dtype == object and all(isinstance(x, uuid.UUID) for x in s if x is not None), \
                f"to_pandas(): {s.dtype} {list(s)[:2]}, expected uuid.UUID objects"
        elif k == "f16":
            assert s.dtype == np.float16, f"to_pandas(): {s.dtype}"
        elif k in ("complex64", "complex128"):
            assert s.dtype == np.dtype(k), f"to_pandas(): {s.dtype}"
        elif k == "map":
            assert s.dtype == object and all(isinstance(x, list) and all(isinstance(e, tuple) for e in x)
                                             for x in s if x is not None), \
                f"to_pandas(): {list(s)[:2]}, expected lists of (key, value) tuples"
    elif reader == "to_polars":
        if k == "offset_datetime":
            return
        got = res.schema["value"]
        # The design: f16 as Float32 and maps as List(Struct{key, value}) "as polars has neither"; polars
        # 2.x has Float16 and Map, which hold the same values exactly: either is accepted.
        want = {"date": [pl.Date], "time": [pl.Time], "duration": [pl.Duration("ns")], "uuid": [pl.Binary],
                "f16": [pl.Float32] + ([pl.Float16] if hasattr(pl, "Float16") else [])}.get(k)
        if k == "instant":
            want = [pl.Datetime("ns", t["tz"])]
        if want is not None:
            assert got in want, f"to_polars(): {got}, expected {' or '.join(map(str, want))}"
        elif k in ("complex64", "complex128", "union"):
            assert isinstance(got, pl.Struct), f"to_polars(): {got}"
        elif k == "map":
            native = hasattr(pl, "Map") and isinstance(got, pl.Map)
            assert native or (isinstance(got, pl.List) and isinstance(got.inner, pl.Struct) and
                              [f.name for f in got.inner.fields] == ["key", "value"]), f"to_polars(): {got}"


# ---------------------------------------------------------------------------
# The command's outputs


def jsonl_columns(text):
    cols = {}
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for i, ln in enumerate(lines):
        row = json.loads(ln, parse_float=mx.TextFloat, parse_constant=mx.TextFloat)
        assert isinstance(row, dict), f"line {i}: {ln!r} is not a JSON object"
        if i == 0:
            cols = {k: [] for k in row}
        assert list(row) == list(cols), f"line {i}: keys {list(row)}, expected {list(cols)}"
        for k, v in row.items():
            cols[k].append(v)
    return cols, len(lines)


def csv_pyarrow_columns(data):
    """Every column as text; an unquoted empty cell is null, a quoted one the empty string."""
    import pyarrow.csv as pacsv
    header = data.split(b"\n", 1)[0].decode()
    import csv
    import io
    names = next(csv.reader(io.StringIO(header)))
    table = pacsv.read_csv(
        pa.BufferReader(data),
        parse_options=pacsv.ParseOptions(newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=[""],
                                             strings_can_be_null=True, quoted_strings_can_be_null=False))
    return {n: table.column(n).to_pylist() for n in table.column_names}, table.num_rows


def table_columns(text, ty, want):
    header, lines = mx.table_rows(text)
    n = len(want)
    # a row spans as many lines as its cells' texts have (strings with newlines): from the expected values
    if len(lines) != n:
        spans = [1 + json.dumps(r).count("\\n") for r in want]
        if sum(spans) != len(lines):
            raise AssertionError(f"{len(lines)} table lines for {n} rows")
        rows, pos = [], 0
        for s in spans:
            part = lines[pos:pos + s]
            rows.append(["\n".join(p[c] for p in part).strip("\n") for c in range(len(header))])
            pos += s
        lines = rows
    cols = {h: [ln[c] for ln in lines] for c, h in enumerate(header)}
    return cols


def field_types(ty):
    """{column name: type} of the top-level columns of a vector (records' fields, or `value`)."""
    if ty["t"] in ("struct", "tuple"):
        return {n: t for n, t in ty["fields"]}
    return {"value": ty}


def parse_table_cells(ty, cols):
    types = field_types(ty)
    out = {}
    for c, cells in cols.items():
        # dotted columns of records/unions split by the printer: parse by their own type when known
        t = types.get(c)
        out[c] = [mx.parse_cell(t, x, f"{c}[{i}]") if t is not None else x for i, x in enumerate(cells)]
    return out


def cli_rows(cli, name, reader, ty, want):
    n = len(want)
    d = cli["dir"]
    ctx, unordered = mx.STRICT, False
    if reader == "cat_table":
        text = cli_output(cli, name, "cat_table").stdout.decode()
        cols = parse_table_cells(ty, table_columns(text, ty, want))
    elif reader in ("cat_jsonl", "head"):
        text = cli_output(cli, name, reader).stdout.decode()
        cols, rows = jsonl_columns(text)
        if reader == "head":
            n = min(HEAD_ROWS, n)
            want = want[:n]
        assert rows == n, f"{rows} lines, expected {n}"
    elif reader == "cat_csv":
        ctx = CSV
        cols, rows = csv_pyarrow_columns(cli_output(cli, name, "cat_csv").stdout)
        assert rows == n, f"{rows} rows, expected {n}"
    elif reader == "parquet_rust":
        cli_output(cli, name, "parquet")
        cli_output(cli, name, "parquet_back")
        got = cli["check_back"].get(name, "no result")
        if got is not None:
            raise AssertionError(f"Rust load of the Parquet converted back: {got}")
        return None, want, ctx, unordered
    else:
        ext = {"parquet": "parquet", "ipc": "arrow", "csv": "csv", "jsonl": "jsonl"}[reader.split("_")[0]]
        cli_output(cli, name, ext)
        path = d / f"{name}.{ext}"
        lib = reader.split("_")[1]
        if ext == "parquet":
            import pyarrow.parquet as pq
            table = pq.read_table(path) if lib == "pyarrow" else pl.read_parquet(path).to_arrow()
        elif ext == "arrow":
            table = pa.ipc.open_file(path).read_all() if lib == "pyarrow" else pl.read_ipc(path).to_arrow()
        elif ext == "csv":
            ctx = CSV
            if lib == "pyarrow":
                cols, rows = csv_pyarrow_columns(path.read_bytes())
                assert rows == n, f"{rows} rows, expected {n}"
                return mx.rows_from_columns(ty, cols, n), want, ctx, unordered
            table = pl.read_csv(path, infer_schema=False).to_arrow()
        else:
            ctx, unordered = JSONL, True
            # numbers past Int64 need the column's type (both readers infer Int64, then Float64 or fail)
            u64 = [c for c, t in field_types(ty).items() if leaf(t)["t"] == "u64"]
            if lib == "pyarrow":
                import pyarrow.json as pajson
                table = pajson.read_json(path, parse_options=pajson.ParseOptions(
                    explicit_schema=pa.schema([(c, pa.uint64()) for c in u64])))
            else:
                table = pl.read_ndjson(path, schema_overrides={c: pl.UInt64 for c in u64}).to_arrow()
        cols = mx.columns_of_arrow_table(table)
        assert table.num_rows == n, f"{table.num_rows} rows, expected {n}"
    return mx.rows_from_columns(ty, cols, n), want, ctx, unordered


# ---------------------------------------------------------------------------
# The reverse direction: the package writes, Rust loads


def rust_nodes(h5):
    with h5py.File(h5, "r") as f:
        return {name: json.loads(f[name]["metadata/serialized_schema"][:].tobytes().decode()) for name in f}


def sub_node(node, ty, step):
    """The schema node of a child of a value of type `ty` whose node is `node` (step: field name, 'item',
    'some', 'key', 'value')."""
    if node is None:
        return None
    t = ty["t"]
    if t == "option":
        return node["children"][0] if node["kind"] == "nullable" else node
    if t in ("struct", "tuple"):
        return node["children"][node["field_names"].index(step)]
    if t == "list":
        return node["children"][0]
    if t == "map":
        return node["children"][0]["children"][0 if step == "key" else 1]
    return None


def md_node(node, **extra):
    m = {"h5vec.schema": json.dumps(node, separators=(",", ":"))} if node is not None else {}
    m.update(extra)
    return m or None


F_NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
U_NP = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}
INT_PA = {"i8": pa.int8(), "i16": pa.int16(), "i32": pa.int32(), "i64": pa.int64(), "u8": pa.uint8(),
          "u16": pa.uint16(), "u32": pa.uint32(), "u64": pa.uint64()}
FLOAT_PA = {"f16": pa.float16(), "f32": pa.float32(), "f64": pa.float64()}


def float_of(t, bits):
    return U_NP[t](int(bits, 16)).view(F_NP[t])


def union_fields(ty):
    return [(n, f) for n, f in ty["variants"]]


def arrow_field(name, ty, node, flat_unions=False, nullable=False):
    """The Arrow field (type, nullability, metadata) a user gives for type `ty` (what to_arrow gives)."""
    t = ty["t"]
    if t == "option":
        return arrow_field(name, ty["some"], sub_node(node, ty, "some"), flat_unions, nullable=True)
    md = None
    if t in INT_PA:
        typ = INT_PA[t]
    elif t in FLOAT_PA:
        typ = FLOAT_PA[t]
    elif t == "bool":
        typ = pa.bool_()
    elif t == "char":
        typ, md = pa.large_string(), {"h5vec.codec": "HDF5Vectors.CharCodec"}
    elif t == "string":
        typ = pa.large_string()
    elif t == "enum":
        typ, md = pa.dictionary(pa.int32(), pa.string()), md_node(node)
    elif t == "json":
        typ = pa.json_(pa.large_string())
    elif t == "blob":
        typ = pa.large_binary()
    elif t == "array":
        item = arrow_field("item", ty["item"], None)
        typ = pa.list_(item, ty["n"])
        if ty["item"]["t"] in ("enum", "char"):
            md = md_node(node)  # the labels (or the char codec) of the dense node
    elif t in ("struct", "tuple"):
        typ = pa.struct([arrow_field(n, ft, sub_node(node, ty, n), flat_unions) for n, ft in ty["fields"]])
        if t == "tuple":
            md = {"h5vec.codec": "HDF5Vectors.TupleCodec"}
    elif t == "unit":
        typ, nullable = pa.null(), True
    elif t == "list":
        typ = pa.large_list(arrow_field("item", ty["item"], sub_node(node, ty, "item"), flat_unions))
    elif t == "map":
        typ = pa.map_(arrow_field("key", ty["key"], sub_node(node, ty, "key"), flat_unions),
                      arrow_field("value", ty["value"], sub_node(node, ty, "value"), flat_unions))
    elif t == "union":
        vnodes = node["children"] if node else [None] * len(ty["variants"])
        kids = []
        for (vn, f), vnode in zip(ty["variants"], vnodes):
            kt = pa.struct([]) if f is None else arrow_field(vn, f, vnode, flat_unions).type
            kids.append((vn, kt))
        if flat_unions:
            typ = pa.struct([pa.field("variant", pa.dictionary(pa.int32(), pa.string()), nullable=False)] +
                            [pa.field(vn, kt, nullable=True) for (vn, kt), (_, f) in zip(kids, ty["variants"])
                             if f is not None])
            md = md_node(node, **{"h5vec.union": "flat"})
        else:
            typ = pa.dense_union([pa.field(vn, kt, nullable=nullable) for vn, kt in kids])
            md = md_node(node)
    elif t == "instant":
        typ = pa.timestamp("ns", ty["tz"])
    elif t == "date":
        typ = pa.date32()
    elif t == "time":
        typ = pa.time64("ns")
    elif t == "duration":
        typ = pa.duration("ns")
    elif t == "offset_datetime":
        typ = pa.struct([pa.field("instant", pa.timestamp("ns", "UTC"), nullable=False),
                         pa.field("offset_seconds", pa.int32(), nullable=False)])
        md = md_node(node)
    elif t == "uuid":
        typ = pa.uuid() if hasattr(pa, "uuid") else pa.binary(16)
        md = None if hasattr(pa, "uuid") else md_node(node)
    elif t in ("complex64", "complex128"):
        ft = pa.float32() if t == "complex64" else pa.float64()
        typ = pa.struct([pa.field("r", ft, nullable=False), pa.field("i", ft, nullable=False)])
        md = md_node(node)
    else:
        raise ValueError(t)
    return pa.field(name, typ, nullable=nullable, metadata=md)


def arrow_array(field, ty, vals, flat_unions=False):
    """The canonical values `vals` as an Arrow array of `field`'s type."""
    t = ty["t"]
    typ = field.type
    if t == "option":
        return arrow_array(field, ty["some"], vals, flat_unions)
    mask = np.array([v is None for v in vals], bool)
    mask_arg = pa.array(mask) if mask.any() else None
    if t in INT_PA:
        return pa.array([v for v in vals], typ)
    if t in FLOAT_PA:
        arr = np.array([float_of(t, v) if v is not None else F_NP[t](0) for v in vals], F_NP[t])
        return pa.array(arr, typ, mask=mask if mask.any() else None)
    if t in ("bool", "char", "string"):
        return pa.array(vals, typ)
    if t == "enum":
        return pa.array(vals, pa.string()).dictionary_encode().cast(typ)
    if t == "json":
        return pa.ExtensionArray.from_storage(typ, pa.array(vals, pa.large_string()))
    if t == "blob":
        return pa.array([None if v is None else bytes.fromhex(v) for v in vals], typ)
    if t == "unit":
        return pa.nulls(len(vals))
    if t in ("array", "list"):
        item_f = typ.value_field
        if t == "array":  # a null row still holds n items (any placeholder)
            some = next((v for v in vals if v is not None), None)
            vals_ = [some if v is None else v for v in vals]
        else:
            vals_ = vals
        flat = [x for v in vals_ if v is not None for x in v]
        child = arrow_array(item_f, ty["item"], flat, flat_unions)
        if t == "array":
            return pa.FixedSizeListArray.from_arrays(child, type=typ, mask=mask_arg) if mask_arg is not None \
                else pa.FixedSizeListArray.from_arrays(child, type=typ)
        offs = np.cumsum([0] + [0 if v is None else len(v) for v in vals]).astype(np.int64)
        return pa.LargeListArray.from_arrays(pa.array(offs), child, type=typ, mask=mask_arg)
    if t in ("struct", "tuple"):
        kids = [arrow_array(typ.field(i), ft, [None if v is None else v[n] for v in vals], flat_unions)
                for i, (n, ft) in enumerate(ty["fields"])]
        return pa.StructArray.from_arrays(kids, fields=list(typ), mask=mask_arg)
    if t == "map":
        flat = [e for v in vals if v is not None for e in v]
        keys = arrow_array(typ.key_field, ty["key"], [k for k, _ in flat], flat_unions)
        items = arrow_array(typ.item_field, ty["value"], [x for _, x in flat], flat_unions)
        offs = np.cumsum([0] + [0 if v is None else len(v) for v in vals]).astype(np.int32)
        return pa.MapArray.from_arrays(pa.array(offs), keys, items, type=typ, mask=mask_arg)
    if t == "union":
        names = [n for n, _ in ty["variants"]]
        fdesc = dict(ty["variants"])
        if flat_unions:
            var = pa.array([None if v is None else v["variant"] for v in vals], pa.string())
            kids = [var.dictionary_encode().cast(typ.field(0).type)]
            for i in range(1, typ.num_fields):
                vn = typ.field(i).name
                f = fdesc[vn]
                rows = [{k: x for k, x in v.items() if k != "variant"} if v is not None and v["variant"] == vn
                        else None for v in vals]
                kids.append(arrow_array(typ.field(i), {"t": "option", "some": f}, rows))
            return pa.StructArray.from_arrays(kids, fields=list(typ), mask=mask_arg)
        codes, offsets, per = [], [], {n: [] for n in names}
        for v in vals:
            vn = names[0] if v is None else v["variant"]
            codes.append(names.index(vn))
            offsets.append(len(per[vn]))
            per[vn].append(None if v is None else {k: x for k, x in v.items() if k != "variant"})
        children = []
        for i, vn in enumerate(names):
            f = fdesc[vn]
            cf = typ.field(i)
            if f is None:
                children.append(pa.StructArray.from_arrays([], fields=[], mask=pa.array(
                    [r is None for r in per[vn]], pa.bool_())) if any(r is None for r in per[vn])
                    else pa.array([{}] * len(per[vn]), pa.struct([])))
            else:
                children.append(arrow_array(cf, {"t": "option", "some": f}, per[vn]))
        return pa.Array.from_buffers(typ, len(vals), [None, pa.py_buffer(np.array(codes, np.int8)),
                                                      pa.py_buffer(np.array(offsets, np.int32))],
                                     children=children)
    if t in ("instant", "duration", "time"):
        return pa.array(vals, pa.int64()).cast(typ)
    if t == "date":
        return pa.array(vals, pa.int32()).cast(typ)
    if t == "offset_datetime":
        inst = pa.array([None if v is None else v["instant"] for v in vals], pa.int64()).cast(typ.field(0).type)
        off = pa.array([None if v is None else v["offset_seconds"] for v in vals], pa.int32())
        return pa.StructArray.from_arrays([inst, off], fields=list(typ), mask=mask_arg)
    if t == "uuid":
        raw = pa.array([None if v is None else uuid.UUID(v).bytes for v in vals], pa.binary(16))
        return pa.ExtensionArray.from_storage(typ, raw) if hasattr(pa, "uuid") else raw
    if t in ("complex64", "complex128"):
        ft = "f32" if t == "complex64" else "f64"
        kids = [arrow_array(typ.field(i), {"t": ft}, [None if v is None else v[p] for v in vals])
                for i, p in enumerate(("r", "i"))]
        return pa.StructArray.from_arrays(kids, fields=list(typ), mask=mask_arg)
    raise ValueError(t)


def arrow_table(vec, node, flat_unions=False):
    """(pyarrow.Table, schema) of a vector's expected values."""
    ty, rows = vec["type"], vec["rows"]
    if ty["t"] in ("struct", "tuple"):
        fields = [arrow_field(n, ft, sub_node(node, ty, n), flat_unions) for n, ft in ty["fields"]]
        arrays = [arrow_array(f, ft, [r[n] for r in rows], flat_unions) for f, (n, ft) in zip(fields, ty["fields"])]
        # a tuple root has no field to carry the codec: the batch's metadata (SPEC 11) does
        md = {"h5vec.codec": "HDF5Vectors.TupleCodec", "h5vec.schema": json.dumps(node, separators=(",", ":"))} \
            if ty["t"] == "tuple" else None
        schema = pa.schema(fields, metadata=md)
    else:
        f = arrow_field("value", ty, node, flat_unions)
        arrays = [arrow_array(f, ty, rows, flat_unions)]
        schema = pa.schema([f], metadata={"h5vec.root": "value"})
    return pa.Table.from_arrays(arrays, schema=schema), schema


def py_value(ty, v):
    """A canonical value as the natural Python object inside a pandas object column."""
    t = ty["t"]
    if v is None:
        return None
    if t == "option":
        return py_value(ty["some"], v)
    if t in FLOAT_PA:
        return float(float_of(t, v))
    if t in ("list", "array"):
        return [py_value(ty["item"], x) for x in v]
    if t in ("struct", "tuple"):
        return {n: py_value(ft, v[n]) for n, ft in ty["fields"]}
    if t == "map":
        return [(py_value(ty["key"], k), py_value(ty["value"], x)) for k, x in v]
    if t == "union":
        f = dict(ty["variants"])[v["variant"]]
        return {"variant": v["variant"], **({n: py_value(ft, v[n]) for n, ft in f["fields"]} if f else {})}
    if t == "blob":
        return bytes.fromhex(v)
    if t == "uuid":
        return uuid.UUID(v)
    if t in ("complex64", "complex128"):
        ft = "f32" if t == "complex64" else "f64"
        return complex(float(float_of(ft, v["r"])), float(float_of(ft, v["i"])))
    return v


PD_INT = {"i8": "Int8", "i16": "Int16", "i32": "Int32", "i64": "Int64", "u8": "UInt8", "u16": "UInt16",
          "u32": "UInt32", "u64": "UInt64"}


def pandas_columns(prefix, ty, vals):
    """{dotted column: pandas Series} in pandas' natural types (what to_pandas gives)."""
    t = ty["t"]
    opt = t == "option"
    inner = ty["some"] if opt else ty
    it = inner["t"]
    mask = np.array([v is None for v in vals], bool)
    if it in ("struct", "tuple", "offset_datetime"):
        fields = inner["fields"] if it in ("struct", "tuple") else \
            [["instant", {"t": "instant", "tz": "UTC"}], ["offset_seconds", {"t": "i32"}]]
        out = {}
        for n, ft in fields:
            sub = {"t": "option", "some": ft} if opt and ft["t"] != "option" else ft
            out.update(pandas_columns(f"{prefix}.{n}" if prefix else n, sub,
                                      [None if v is None else v[n] for v in vals]))
        return out
    if it in INT_PA:
        s = pd.Series(pd.array(vals, dtype=PD_INT[it])) if opt else \
            pd.Series(np.array(vals, dtype=INT_PA[it].to_pandas_dtype()))
    elif it in FLOAT_PA:
        arr = np.array([float_of(it, v) if v is not None else F_NP[it](0) for v in vals], F_NP[it])
        if opt:
            s = pd.Series(pd.arrays.FloatingArray(arr.astype(np.float64) if it == "f16" else arr, mask))
        else:
            s = pd.Series(arr)
    elif it == "bool":
        s = pd.Series(pd.array(vals, dtype="boolean")) if opt else pd.Series(np.array(vals, bool))
    elif it == "enum":
        s = pd.Series(pd.Categorical(vals, categories=inner["names"]))
    elif it == "instant":
        arr = np.array([0 if v is None else v for v in vals], np.int64).view("M8[ns]").copy()
        arr[mask] = np.datetime64("NaT")
        s = pd.Series(arr)
        if inner["tz"]:
            s = s.dt.tz_localize(inner["tz"])
    elif it == "date":
        arr = np.array([0 if v is None else v * 86400 for v in vals], np.int64).view("M8[s]").copy()
        arr[mask] = np.datetime64("NaT")
        s = pd.Series(arr)
    elif it in ("time", "duration"):
        arr = np.array([0 if v is None else v for v in vals], np.int64).view("m8[ns]").copy()
        arr[mask] = np.timedelta64("NaT")
        s = pd.Series(arr)
    elif it in ("complex64", "complex128") and not opt:
        s = pd.Series(np.array([py_value(inner, v) for v in vals], it))
    else:
        s = pd.Series([py_value(inner, v) for v in vals], dtype=object)
    return {prefix or "value": s}


def pandas_frame(vec):
    ty, rows = vec["type"], vec["rows"]
    if ty["t"] in ("struct", "tuple"):
        cols = {}
        for n, ft in ty["fields"]:
            cols.update(pandas_columns(n, ft, [r[n] for r in rows]))
    else:
        cols = pandas_columns("", ty, rows)
        if ty["t"] in ("offset_datetime",) or (ty["t"] == "option" and ty["some"]["t"] in ("struct", "tuple")):
            cols = {f"value.{k}": v for k, v in cols.items()}
    return pd.DataFrame(cols)


POLARS_INT = {"i8": pl.Int8, "i16": pl.Int16, "i32": pl.Int32, "i64": pl.Int64, "u8": pl.UInt8, "u16": pl.UInt16,
              "u32": pl.UInt32, "u64": pl.UInt64}


def polars_frame(vec, node):
    """The expected values as a polars DataFrame in polars' own types (what to_polars gives): unions in the
    flat form, f16 as Float32, UUIDs as 16-byte Binary, maps as List(Struct{key, value}), no metadata."""
    table, _ = arrow_table(vec, node, flat_unions=True)

    def plain_type(t):
        if isinstance(t, pa.ExtensionType):
            return plain_type(t.storage_type)
        if pa.types.is_float16(t):
            return pa.float32()
        if pa.types.is_fixed_size_binary(t):
            return pa.large_binary()
        if pa.types.is_map(t):
            return pa.large_list(pa.field("item", pa.struct([
                pa.field("key", plain_type(t.key_type), nullable=False),
                pa.field("value", plain_type(t.item_type), nullable=t.item_field.nullable)]), nullable=False))
        if pa.types.is_struct(t):
            return pa.struct([pa.field(f.name, plain_type(f.type), f.nullable) for f in t])
        if pa.types.is_large_list(t) or pa.types.is_list(t):
            return pa.large_list(pa.field("item", plain_type(t.value_type), t.value_field.nullable))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(pa.field("item", plain_type(t.value_type), t.value_field.nullable), t.list_size)
        return t

    cols = []
    for c in table.columns:
        arr = c.combine_chunks()
        cols.append(to_plain_arrow(arr, plain_type(arr.type)))
    plain = pa.Table.from_arrays(cols, names=table.column_names)
    return pl.from_arrow(plain)


def to_plain_arrow(arr, typ):
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    if pa.types.is_map(arr.type):
        st = typ.value_type
        entries = pa.StructArray.from_arrays([to_plain_arrow(arr.keys, st.field(0).type),
                                              to_plain_arrow(arr.items, st.field(1).type)],
                                             fields=list(st))
        return pa.LargeListArray.from_arrays(pa.array(np.asarray(arr.offsets, np.int64)), entries, type=typ,
                                             mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_struct(arr.type):
        kids = [to_plain_arrow(arr.field(i), typ.field(i).type) for i in range(arr.type.num_fields)]
        return pa.StructArray.from_arrays(kids, fields=list(typ), mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_large_list(arr.type):
        return pa.LargeListArray.from_arrays(arr.offsets, to_plain_arrow(arr.values, typ.value_type), type=typ,
                                             mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_fixed_size_list(arr.type):
        return pa.FixedSizeListArray.from_arrays(to_plain_arrow(arr.values, typ.value_type), type=typ,
                                                 mask=arr.is_null() if arr.null_count else None)
    return arr.cast(typ)


@pytest.fixture(scope="session")
def written(matrix, matrix_exe, tmp_path_factory):
    """Every vector written by the package from each library: {source: ({name: error}, {name: check result})}."""
    h5, expected, vecs = matrix
    nodes = rust_nodes(h5)
    d = tmp_path_factory.mktemp("written")
    out = {}
    for source in ("pyarrow", "pandas", "polars"):
        path = d / f"{source}.h5"
        h5vec_file = h5py.File(path, "w")
        h5vec_file.close()
        errors = {}
        for name, vec in vecs.items():
            try:
                table, schema = arrow_table(vec, nodes[name], flat_unions=source == "polars")
                if source == "pyarrow":
                    data = table
                elif source == "pandas":
                    data = pandas_frame(vec)
                else:
                    data = polars_frame(vec, nodes[name])
            except Exception as e:  # noqa: BLE001 -- the cell reports it
                errors[name] = f"the test could not build the {source} data: {type(e).__name__}: {e}"
                continue
            kw = dict(SAVE_OPTS.get(name, {}))
            if name in VLS:
                kw["vls_strings"] = VLS[name]
            if source != "pyarrow":
                kw["schema"] = schema
            try:
                h5vec.save_vector(str(path), name, data, **kw)
            except Exception as e:  # noqa: BLE001 -- the cell reports it
                errors[name] = f"h5vec.save_vector: {type(e).__name__}: {e}"
        out[source] = (errors, run_check(matrix_exe, path, expected))
    return out


# ---------------------------------------------------------------------------
# The matrix


def test_the_matrix_has_every_vector(matrix):
    assert sorted(matrix[2]) == sorted(mx.NAMES)


CELLS = [(n, r) for n in mx.NAMES for r in READERS]

# Cells whose reader cannot hold the saved value: each gives a documented
# error naming the row instead (python/README.md), asserted here. pandas
# takes numpy's NaT (i64::MIN nanoseconds, an instant and a duration SPEC 4.6
# allows) for a missing value, in both directions.
DOCUMENTED_ERRORS = {
    ("time_int64_min", "to_pandas"): r"\$\.at\[0\]: .*numpy's NaT, which pandas reads as missing",
    ("time_int64_min", "iter_pandas"): r"\$\.at\[0\]: .*numpy's NaT, which pandas reads as missing",
    ("time_int64_min", "write_pandas"): r"\$\.at: row 0 is null but the Arrow field `at` is not nullable",
}

# Text formats that cannot carry a value, as h5vec-cli/README.md documents:
# - JSON lines write non-finite floats as the tokens NaN, Infinity, -Infinity
#   (Python's json and pyarrow read them back; cat_jsonl checks the values),
#   which polars' strict parser rejects: any vector whose JSON lines hold one.
# - pyarrow's JSON reader infers one type per key: the flat form of an enum
#   whose variants share a field name with another type (`Rect.1` f64,
#   `Note.1` String), and a map's [key, value] pairs of a number and a string.
# - CSV of one column: a missing string is `""` (an empty line would be
#   skipped by readers), like an empty one.
JSON_TOKENS = re.compile(rb"(?<![\w\"])(NaN|-?Infinity)(?![\w\"])")
PYARROW_JSON_TYPES = {"union", "union_list", "union_field", "map_u32_string"}
ONE_COLUMN_STRINGS = {"option_string", "vls_option_string"}


@pytest.mark.parametrize("name,reader", CELLS, ids=[f"{n}-{r}" for n, r in CELLS])
def test_read(request, matrix, name, reader):
    h5, _, vecs = matrix
    vec = vecs[name]
    ty, want = vec["type"], vec["rows"]
    documented = DOCUMENTED_ERRORS.get((name, reader))
    if documented is not None and reader in PKG:
        with pytest.raises(h5vec.FormatError, match=documented):
            pkg_rows(h5, name, reader, ty, len(want))
        return
    if documented is not None:
        written = request.getfixturevalue("written")
        errors, _ = written[reader.split("_", 1)[1]]
        assert name in errors and re.search(documented, str(errors[name])), errors.get(name)
        return
    if reader in PKG:
        got = pkg_rows(h5, name, reader, ty, len(want))
        mx.check_rows(ty, got, want)
    elif reader in CLI:
        cli = request.getfixturevalue("cli")
        if reader == "jsonl_polars" and JSON_TOKENS.search(cli_output(cli, name, "cat_jsonl").stdout):
            with pytest.raises(pl.exceptions.ComputeError, match=r"TapeError"):
                cli_rows(cli, name, reader, ty, want)
            return
        if reader == "jsonl_pyarrow" and name in PYARROW_JSON_TYPES:
            with pytest.raises(pa.ArrowInvalid, match=r"changed from number to string"):
                cli_rows(cli, name, reader, ty, want)
            return
        if reader in ("cat_csv", "csv_pyarrow", "csv_polars") and name in ONE_COLUMN_STRINGS:
            assert any(v is None for v in want) and "" in want, "the case this exception is for"
            want = ["" if v is None else v for v in want]
        got, want, ctx, unordered = cli_rows(cli, name, reader, ty, want)
        if got is not None:
            mx.check_rows(ty, got, want, ctx, unordered)
    else:
        written = request.getfixturevalue("written")
        errors, checked = written[reader.split("_", 1)[1]]
        if name in errors:
            raise AssertionError(errors[name])
        result = checked.get(name, "not checked")
        if result is not None:
            raise AssertionError(f"Rust load: {result}")
