"""Queries on h5col tables (SPEC.md section 14.7): `h5vec rows` against the
real h5col 0.4.0 (vendored in vendor/h5col) on the same tables.

h5col writes a table (random numbers with NaN, user fill values, a NaN
fill, booleans, fixed-length UTF-8 and ASCII strings, a categorical column,
a nullable list column with empty and null rows) and builds CHUNK_MINMAX,
SORTED_ROWS and BITMAP indexes on it; for every predicate of the suite,
`h5vec rows` prints exactly h5col's `Table.select(...).row_positions`.
Then h5vec appends rows (examples/h5col_query.rs): h5col's
`index_is_valid` is false for every index, and both still agree.

The h5vec command is $H5VEC_BIN or target/debug/h5vec; the example is built
with cargo (honouring CARGO_TARGET_DIR).
"""

import json
import os
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

if int(np.__version__.split(".")[0]) < 2:
    pytest.skip("h5col 0.4.0 needs numpy >= 2 (numpy.dtypes.StringDType)", allow_module_level=True)
pytest.importorskip("pydantic", reason="h5col 0.4.0 needs pydantic (tests/python/requirements.txt)")
pytest.importorskip("hdf5plugin", reason="h5col 0.4.0 needs hdf5plugin (tests/python/requirements.txt)")

import h5col_fixtures  # noqa: E402,F401  (puts vendor/ on sys.path)
import h5col  # noqa: E402
from h5col import ColumnSpec, FixedString, Table, field  # noqa: E402
from h5col.specs import LeafValuesSpec, ListColumnSpec  # noqa: E402
from cargo_features import FEATURES

WORKSPACE = Path(__file__).resolve().parent.parent.parent
NROWS = 3000
CHUNK = 256
LEVELS = ["Low", "Mid", "High"]


def h5vec_cli():
    env = os.environ.get("H5VEC_BIN")
    target = Path(os.environ.get("CARGO_TARGET_DIR", WORKSPACE / "target"))
    if not target.is_absolute():
        target = WORKSPACE / target
    for p in ([Path(env)] if env else []) + [target / "debug" / "h5vec"]:
        if p.is_file():
            return p
    pytest.skip("no h5vec binary (set H5VEC_BIN or build h5vec-cli)")


@pytest.fixture(scope="module")
def append_exe():
    cmd = [
        "cargo", "build", "--quiet", "--workspace", "--features", FEATURES, "--example", "h5col_query",
        "--message-format=json-render-diagnostics",
    ]
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0, "building examples/h5col_query.rs failed"
    exe = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "h5col_query":
            exe = msg.get("executable")
    assert exe, "cargo did not report the h5col_query executable"
    return exe


def masked(values, missing):
    return np.ma.MaskedArray(values, mask=missing)


def write_tables(path, seed=5):
    rng = np.random.default_rng(seed)
    n = NROWS
    with h5py.File(path, "w") as f:
        g = f.create_group("t")
        t = Table.create(g, [
            ColumnSpec(name="id", dtype="int64", chunks=CHUNK),
            ColumnSpec(name="x", dtype="float64", chunks=CHUNK),
            ColumnSpec(name="y", dtype="float32", chunks=CHUNK, fill_value=np.nan),
            ColumnSpec(name="k", dtype="int32", chunks=CHUNK, fill_value=-1),
            ColumnSpec(name="u", dtype="uint16", chunks=CHUNK),
            ColumnSpec(name="flag", dtype="bool", chunks=CHUNK),
            ColumnSpec(name="name", dtype=FixedString(8), chunks=CHUNK),
            ColumnSpec(name="code", dtype=FixedString(4, "ascii"), chunks=CHUNK),
            ColumnSpec(name="lvl", categories=LEVELS, chunks=CHUNK),
            ListColumnSpec(name="vals", values=LeafValuesSpec(dtype="float64"), nullable=True),
        ])
        x = np.round(rng.uniform(-100, 100, n), 1)
        x[rng.random(n) < 0.1] = np.nan
        y = (rng.integers(0, 100, n) / 4).astype("f4")
        y[rng.random(n) < 0.15] = np.nan
        names = np.array(["alpha", "beta", "gamma", "m", "zz"], dtype=object)[rng.integers(0, 5, n)]
        names = [None if rng.random() < 0.2 else s for s in names]
        codes = [[None, "AB", "C", "XYZ"][i] for i in rng.integers(0, 4, n)]
        lvls = [[None, "Low", "Mid", "High"][i] for i in rng.integers(0, 4, n)]
        vals = []
        for i in range(n):
            r = rng.integers(0, 4)
            vals.append(None if r == 0 else [] if r == 1 else [float(v) for v in range(r)])
        t.append({
            # Sorted ids with gaps (missing), so CHUNK_MINMAX prunes ranges.
            "id": masked(np.arange(n, dtype=np.int64), rng.random(n) < 0.05),
            "x": masked(x, rng.random(n) < 0.08),
            "y": y,
            "k": rng.integers(-10, 20, n).astype(np.int32),
            "u": masked(rng.integers(0, 1000, n).astype(np.uint16), rng.random(n) < 0.1),
            "flag": rng.random(n) < 0.3,
            "name": names,
            "code": codes,
            "lvl": lvls,
            "vals": vals,
        })
        for c in ["id", "x", "y", "k", "u", "flag", "lvl", "name"]:
            t.build_index(c, "CHUNK_MINMAX")
        for c in ["x", "k", "name"]:
            t.build_index(c, "SORTED_ROWS")
        for c in ["lvl", "code", "u"]:
            t.build_index(c, "BITMAP")
        # Variable-length strings (h5py's fill: the empty string).
        v = Table.create(f.create_group("v"), [
            ColumnSpec(name="vs", dtype=h5py.string_dtype(), chunks=64),
            ColumnSpec(name="i", dtype="int8", chunks=64),
        ])
        v.append({
            "vs": [["a", "", "v1", "b", "béta"][j] for j in rng.integers(0, 5, 500)],
            "i": rng.integers(-5, 5, 500).astype(np.int8),
        })


# (h5col expression, the same as `--where` text), on table "t".
PREDICATES = [
    (field("x") > 3.5, "x > 3.5"),
    (field("x") <= 0, "x <= 0"),
    (field("x") != 2.0, "x != 2.0"),
    (field("x") == 12.5, "x == 12.5"),
    (field("x").is_null(), "x is null"),
    (field("x").is_valid(), "x is not null"),
    ((field("x") >= -10) & (field("x") <= 10.5), "x between -10 and 10.5"),
    (~((field("x") >= -10) & (field("x") <= 10.5)), "x not between -10 and 10.5"),
    (field("y") < 10, "y < 10"),
    (field("y").is_null(), "y is null"),
    (~(field("y") >= 5), "not y >= 5"),
    (field("k") == 3, "k == 3"),
    (field("k") == -1, "k == -1"),
    (field("k").isin([1, 2, 3, -1]), "k in (1, 2, 3, -1)"),
    (~field("k").isin([0, 5]), "k not in (0, 5)"),
    (field("k").is_null(), "k is null"),
    (field("k") > 2.5, "k > 2.5"),
    (field("u") >= 500, "u >= 500"),
    (field("u").isin([1, 2, 999]), "u in (1, 2, 999)"),
    (field("u").is_null(), "u is null"),
    (field("id") < 100, "id < 100"),
    ((field("id") >= 1000) & (field("id") < 1300), "id >= 1000 and id < 1300"),
    (field("id").is_valid(), "id is not null"),
    (field("flag") == True, "flag == true"),  # noqa: E712
    (field("flag") != True, "flag != true"),  # noqa: E712
    (field("flag").is_null(), "flag is null"),
    (field("name") == "beta", "name == 'beta'"),
    (field("name") < "gamma", "name < 'gamma'"),
    (field("name") >= "m", "name >= 'm'"),
    (field("name").isin(["m", "alpha", "nope"]), "name in ('m', 'alpha', 'nope')"),
    (field("name").is_null(), "name is null"),
    (field("name") != "zz", "name != 'zz'"),
    (field("code") == "AB", "code == 'AB'"),
    (field("code") != "C", "code != 'C'"),
    (field("code").is_valid(), "code is not null"),
    (field("lvl") == "Mid", "lvl == 'Mid'"),
    (field("lvl") != "High", "lvl != 'High'"),
    (field("lvl") < "High", "lvl < 'High'"),
    (field("lvl").isin(["Low", "Nope"]), "lvl in ('Low', 'Nope')"),
    (field("lvl") == "Nope", "lvl == 'Nope'"),
    (field("lvl").is_null(), "lvl is null"),
    (((field("x") > 0) & (field("flag") == True)) | field("lvl").is_null(),  # noqa: E712
     "(x > 0 and flag == true) or lvl is null"),
    (~((field("k") < 5) | (field("name") == "m")), "not (k < 5 or name == 'm')"),
    ((field("id") >= 1000) & (field("id") < 2000) & (field("lvl") != "Low") & ~field("y").is_null(),
     "id >= 1000 and id < 2000 and lvl != 'Low' and y is not null"),
    (((field("x") < -50) | (field("u") > 900)) & ((field("code") == "XYZ") | (field("k") >= 15)),
     "(x < -50 or u > 900) and (code == 'XYZ' or k >= 15)"),
]

# The predicates of PREDICATES that may match nothing: a bool is never
# missing, an unknown label, the fill value of k, one value of x.
T_EMPTY = ("flag is null", "lvl == 'Nope'", "k == -1", "x == 12.5")

# On table "v" (variable-length strings).
V_PREDICATES = [
    (field("vs") == "v1", "vs == 'v1'"),
    (field("vs") < "b", "vs < 'b'"),
    (field("vs") > "b", "vs > 'b'"),
    (field("vs").is_null(), "vs is null"),
    (field("vs") != "a", "vs != 'a'"),
    ((field("vs") == "béta") | (field("i") > 3), "vs == 'béta' or i > 3"),
]


def h5vec(*args, code=0):
    proc = subprocess.run([str(h5vec_cli()), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stderr
    return proc


def h5vec_rows(path, table, where):
    out = h5vec("rows", path, table, "--where", where).stdout
    return [int(line) for line in out.split()]


def check_agree(path, table, predicates, empty_ok=(), reference=True):
    with h5py.File(path, "r") as f:
        t = Table.open(f[table])
        want = {text: t.select(expr).row_positions.tolist() for expr, text in predicates}
        # h5col's planner agrees with its own brute-force reference (whose
        # variable-length strings compare bytes with str: not for those).
        for expr, text in predicates if reference else ():
            assert h5col.query._scan_select(t, expr).tolist() == want[text], text
    for _, text in predicates:
        got = h5vec_rows(path, table, text)
        assert got == want[text], text
        assert h5vec("count", path, table, "--where", text).stdout == f"{len(want[text])}\n", text
    # The suite is not vacuous: only these match nothing (a bool is never
    # missing, an unknown label, the fill value of k).
    empty = {text for text, rows in want.items() if not rows}
    assert empty <= set(empty_ok), empty


def test_rows_match_h5col_with_indexes_and_after_an_h5vec_append(tmp_path, append_exe):
    path = tmp_path / "q.h5"
    write_tables(path)
    with h5py.File(path, "r") as f:
        g = f["t"]
        si = g["SEARCH_INDEXES"]
        kinds = sorted(h5col.indexes.index_kind(si[n]) for n in si if "KIND" in si[n].attrs)
        assert kinds.count("CHUNK_MINMAX") == 8 and "SORTED_ROWS" in kinds and "BITMAP" in kinds
        assert all(h5col.indexes.index_is_valid(si[n], g) for n in si if "KIND" in si[n].attrs)
    check_agree(path, "t", PREDICATES, T_EMPTY)
    check_agree(path, "v", V_PREDICATES, reference=False)
    # The valid CHUNK_MINMAX of id prunes windows.
    out = h5vec("explain", path, "t", "--where", "id < 100").stdout
    assert "id ($.id): CHUNK_MINMAX (12 entries)" in out, out
    assert "windows of 256 rows: 1 read, 11 skipped of 12" in out, out

    subprocess.run([append_exe, "append", path, "t", "700", "9"], check=True, timeout=120)
    with h5py.File(path, "r") as f:
        g = f["t"]
        assert int(g.attrs["NROWS"]) == NROWS + 700
        si = g["SEARCH_INDEXES"]
        indexes = [si[n] for n in si if "KIND" in si[n].attrs]
        assert indexes and not any(h5col.indexes.index_is_valid(d, g) for d in indexes)
    check_agree(path, "t", PREDICATES, T_EMPTY)
    out = h5vec("explain", path, "t", "--where", "id < 100").stdout
    assert "id ($.id): scan, no valid statistics" in out, out

    # h5col refreshes its indexes: valid again, and used again.
    with h5py.File(path, "r+") as f:
        t = Table.open(f["t"])
        assert t.refresh_indexes() > 0
    check_agree(path, "t", PREDICATES, T_EMPTY)
    out = h5vec("explain", path, "t", "--where", "id < 100").stdout
    assert "CHUNK_MINMAX (15 entries)" in out and "1 read, 14 skipped of 15" in out, out


def test_list_columns_and_unknown_columns_are_errors_in_both(tmp_path):
    path = tmp_path / "q.h5"
    write_tables(path)
    with h5py.File(path, "r") as f:
        t = Table.open(f["t"])
        with pytest.raises(h5col.SchemaError, match="list columns"):
            t.select(field("vals").is_null()).row_positions
        with pytest.raises(KeyError):
            t.select(field("nope") == 1).row_positions
        with pytest.raises(h5col.SchemaError, match="unknown category"):
            t.select(field("lvl") < "Nope").row_positions
    err = h5vec("rows", path, "t", "--where", "vals is null", code=2).stderr
    assert "$.vals" in err and "list column" in err, err
    err = h5vec("rows", path, "t", "--where", "nope == 1", code=2).stderr
    assert "no column `nope`" in err, err
    err = h5vec("rows", path, "t", "--where", "lvl < 'Nope'", code=2).stderr
    assert "Nope" in err and "Low" in err, err


def test_head_and_cat_where_on_a_table(tmp_path):
    path = tmp_path / "q.h5"
    write_tables(path)
    with h5py.File(path, "r") as f:
        t = Table.open(f["t"])
        want = t.select((field("lvl") == "Mid") & (field("id") < 40)).read(["id", "name"])
    out = h5vec("cat", path, "t", "--where", "lvl == 'Mid' and id < 40", "--format", "jsonl",
                "--columns", "id,name").stdout
    got = [json.loads(line) for line in out.splitlines()]
    ids = want["id"]
    names = want["name"]
    assert [r["id"] for r in got] == [None if np.ma.is_masked(i) else int(i) for i in ids]
    assert [r["name"] for r in got] == [None if np.ma.is_masked(s) else str(s) for s in names]
    out = h5vec("head", path, "t", "--where", "lvl == 'Mid' and id < 40", "-n", "2", "--format", "jsonl",
                "--columns", "id").stdout
    assert len(out.splitlines()) == min(2, len(got))
