"""h5vec and the real h5col 0.4.0 (vendored in vendor/h5col) on the same
tables: categorical columns written by one read as labels by the other, and
h5col's search indexes after an h5vec append (SPEC.md section 9).

The Rust side is examples/h5col_interop.rs (built with cargo, honouring
CARGO_TARGET_DIR) and, when present, the `h5vec` command ($H5VEC_BIN or
target/debug/h5vec).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

if int(np.__version__.split(".")[0]) < 2:
    pytest.skip("h5col 0.4.0 needs numpy >= 2 (numpy.dtypes.StringDType)", allow_module_level=True)
pytest.importorskip("pydantic", reason="h5col 0.4.0 needs pydantic (tests/python/requirements.txt)")
pytest.importorskip("hdf5plugin", reason="h5col 0.4.0 needs hdf5plugin (tests/python/requirements.txt)")

import h5col_fixtures as fx  # noqa: E402  (puts vendor/ on sys.path)
import h5col  # noqa: E402

import h5vec  # noqa: E402

WORKSPACE = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def interop_exe():
    cmd = ["cargo", "build", "--quiet", "--example", "h5col_interop", "--message-format=json-render-diagnostics"]
    proc = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    assert proc.returncode == 0, "building examples/h5col_interop.rs failed"
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "h5col_interop":
            exe = msg.get("executable")
    assert exe, "cargo did not report the h5col_interop executable"
    return exe


def run(exe, *args):
    proc = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def h5vec_cli():
    env = os.environ.get("H5VEC_BIN")
    target = Path(os.environ.get("CARGO_TARGET_DIR", WORKSPACE / "target"))
    if not target.is_absolute():
        target = WORKSPACE / target
    for p in ([Path(env)] if env else []) + [target / "debug" / "h5vec"]:
        if p.is_file():
            return p
    return None


def plain(a):
    """h5col's column values (masked arrays, StringDType) as Python lists, None for missing."""
    out = []
    for i in range(len(a)):
        if isinstance(a, np.ma.MaskedArray) and a.mask is not np.ma.nomask and np.ma.getmaskarray(a)[i]:
            out.append(None)
        else:
            v = a[i]
            out.append(v.item() if isinstance(v, np.generic) else (None if v is None else str(v) if isinstance(v, str) else v))
    return out


def h5col_rows(t):
    cols = {k: plain(v) for k, v in t.read().items()}
    return [{k: cols[k][i] for k in t.column_names} for i in range(t.nrows)]


@pytest.fixture
def indexed(tmp_path):
    """An h5col-written table with categorical columns and search indexes."""
    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as f:
        fx.write_indexed_table(f.create_group("table"))
    return path


def test_h5col_categorical_read_by_rust_python_and_cli(indexed, interop_exe):
    with h5py.File(indexed, "r") as f:
        t = h5col.Table.open(f["table"])
        want = h5col_rows(t)
        assert [r["level"] for r in want] == fx.LEVELS and [r["pay"] for r in want] == fx.PAYS
        # The Python package: labels in numpy, Categorical in pandas, a dictionary in Arrow.
        cols = h5vec.read_table(f["table"])
        assert cols["level"].dtype == object and list(cols["level"]) == fx.LEVELS
        assert list(cols["pay"]) == fx.PAYS
        df = h5vec.open_table(f, "table").to_pandas()
        assert str(df["level"].dtype) == "category"
        assert list(df["level"].cat.categories) == fx.LEVEL_LABELS
        assert list(df["pay"].cat.categories) == fx.PAY_LABELS
        # h5col's `ordered` flag (pay: ordered=True) carries over.
        assert df["pay"].cat.ordered and not df["level"].cat.ordered
        assert [None if v != v else v for v in df["pay"].astype(object)] == fx.PAYS
        tab = h5vec.read_table(f["table"], format="arrow")
        assert str(tab.schema.field("level").type) == "dictionary<values=string, indices=int32, ordered=0>"
        assert tab.column("level").chunk(0).dictionary.to_pylist() == fx.LEVEL_LABELS
        assert tab.schema.field("pay").type.ordered
        assert tab.to_pylist() == want
    # Rust: a typed load (Option<enum> and Option<String> fields).
    rust = [json.loads(line) for line in run(interop_exe, "read", indexed, "table").splitlines()]
    assert rust == want
    # The command prints labels (it reads tables through Arrow).
    cli = h5vec_cli()
    if cli is not None:
        out = subprocess.run([cli, "cat", indexed, "table", "--format", "jsonl"], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert [json.loads(line) for line in out.stdout.splitlines()] == want


def test_h5vec_written_categorical_read_by_h5col(tmp_path, interop_exe):
    path = tmp_path / "w.h5"
    run(interop_exe, "write", path, "w")
    with h5py.File(path, "r") as f:
        t = h5col.Table.open(f["w"])
        t.validate(deep=True)
        assert t.column_names == ["id", "level", "maybe", "name"]
        assert list(t["level"].categories) == ["Low", "Mid", "High"]
        assert t["level"].codes.dtype == np.int8 and t["level"].fill_value == -1
        assert plain(t["level"].read()) == ["Low", "Mid", "High"] * 2
        assert plain(t["maybe"].read()) == ["High", None] * 3
        assert list(t["maybe"].codes[...]) == [2, -1] * 3
        assert t.select([("level", "==", "High")]).row_positions.tolist() == [2, 5]


PREDICATES = [
    [("id", ">=", 5)],
    [("id", "<", 12)],
    [("id", "==", 13)],
    [("x", ">", 3.0)],
    [("x", "<=", 10.5)],
    [("level", "==", "High")],
    [("level", "in", ["Low", "Mid"])],
    [("pay", "==", "Cash")],
    [("id", ">", 2), ("level", "==", "Mid")],
    [[("x", "<", 2.0)], [("level", "==", "Low")]],
]


def brute_force(rows, where):
    ops = {">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "==": lambda a, b: a == b,
           ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, "in": lambda a, b: a in b}
    dnf = where if isinstance(where[0], list) else [where]
    return [i for i, r in enumerate(rows)
            if any(all(r[c] is not None and ops[op](r[c], v) for c, op, v in conj) for conj in dnf)]


def test_h5vec_append_leaves_h5col_indexes_stale_and_queries_exact(indexed, interop_exe):
    run(interop_exe, "append", indexed, "table")
    with h5py.File(indexed, "r+") as f:
        t = h5col.Table.open(f["table"])
        assert t.nrows == 14 and t.generation == 1
        names = sorted(t.search_indexes)
        assert names == ["id__bloom", "id__foo", "id__sorted_rows", "level__bitmap", "x__chunk_minmax"]
        assert not any(t.index_is_valid(i) for i in t.search_indexes.values())
        t.validate(deep=True)
        rows = h5col_rows(t)
        assert [r["level"] for r in rows[10:]] == fx.APPENDED["level"]
        assert [r["pay"] for r in rows[10:]] == fx.APPENDED["pay"]
        assert f["table/id"].attrs["units"] == b"s" and int(f["table/id"].attrs["valid_max"]) == 1000000
        for where in PREDICATES:
            assert t.select(where).row_positions.tolist() == brute_force(rows, where), where
        # h5col's refresh makes the three families it builds valid again.
        assert t.refresh_indexes() == 3
        valid = {n: t.index_is_valid(i) for n, i in t.search_indexes.items()}
        assert valid == {"id__bloom": False, "id__foo": False, "id__sorted_rows": True,
                         "level__bitmap": True, "x__chunk_minmax": True}
        t.validate(deep=True)
        for where in PREDICATES:
            assert t.select(where).row_positions.tolist() == brute_force(rows, where), where
    # The tables with unknown index kinds still load in Python (and Rust: `read` above).
    with h5py.File(indexed, "r") as f:
        assert h5vec.read_table(f["table"], format="arrow").num_rows == 14


GOLDEN = WORKSPACE / "tests" / "golden" / "h5col" / "g_categorical_indexes.h5"


def _hostile(tmp_path, damage):
    path = tmp_path / "h.h5"
    path.write_bytes(GOLDEN.read_bytes())
    with h5py.File(path, "r+") as f:
        damage(f)
    return path


@pytest.mark.parametrize("case", ["null", "elsewhere", "not_a_reference", "no_group", "code"])
def test_hostile_categorical_columns_name_the_column(tmp_path, case):
    def damage(f):
        ds = f["table/pay"]
        if case == "code":
            codes = ds[...]
            codes[5] = 7
            ds[...] = codes
            return
        if case == "no_group":
            del f["table/CATEGORIES"]
            return
        del ds.attrs["CATEGORIES"]
        if case == "null":
            ds.attrs.create("CATEGORIES", h5py.Reference(), dtype=h5py.ref_dtype)
        elif case == "elsewhere":
            ds.attrs.create("CATEGORIES", f["table/x"].ref, dtype=h5py.ref_dtype)
        else:
            ds.attrs["CATEGORIES"] = np.int32(3)

    path = _hostile(tmp_path, damage)
    want = {
        "null": "a null reference",
        "elsewhere": "a reference to no dataset of it",
        "not_a_reference": "one object reference",
        "no_group": "no CATEGORIES group in the table",
        "code": "category code 7 is neither the column's fill value -1 nor a position in the 3 labels "
                "of `/table/CATEGORIES/pay__CATEGORIES`",
    }[case]
    with h5py.File(path, "r") as f:
        with pytest.raises(h5vec.FormatError) as e:
            h5vec.read_table(f["table"])
        assert want in str(e.value)
        # Without the group every categorical column fails: the first is `level`.
        col = "level" if case == "no_group" else "pay"
        assert e.value.path == ("$.pay[5]" if case == "code" else f"$.{col}")
        assert e.value.location.startswith(f"/table/{col}")


def test_spec_recipe_decodes_labels():
    """SPEC.md section 9's h5py recipe for categorical columns, on the golden table."""
    import re
    spec = (WORKSPACE / "SPEC.md").read_text()
    sec = spec[spec.index("### Categorical columns"):spec.index("### Search indexes and appends")]
    code = re.search(r"```python\n(.*?)```", sec, re.S).group(1)
    with h5py.File(GOLDEN, "r") as f:
        scope = {"f": f, "h5py": h5py}
        exec(code, scope)
    assert scope["rows"] == fx.LEVELS


def test_every_crash_state_of_an_h5vec_append_is_safe_for_h5col(indexed, interop_exe):
    """The states a crash can leave (SPEC section 9, "Search indexes and
    appends"): rows written but GENERATION and NROWS old, and GENERATION
    bumped but NROWS old. In neither does h5col believe an index that does
    not describe the committed rows."""
    run(interop_exe, "append", indexed, "table")
    with h5py.File(indexed, "r+") as f:
        g = f["table"]
        # Crash after the rows, before GENERATION: the old state, indexes valid and exact.
        g.attrs.create("NROWS", np.uint64(10))
        g.attrs.create("GENERATION", np.uint64(0))
        t = h5col.Table.open(g)
        assert all(t.index_is_valid(i) for i in t.search_indexes.values())
        t.validate(deep=True)
        rows = h5col_rows(t)
        assert len(rows) == 10
        for where in PREDICATES:
            assert t.select(where).row_positions.tolist() == brute_force(rows, where), where
        # Crash after GENERATION, before NROWS: every index stale.
        g.attrs.create("GENERATION", np.uint64(1))
        t = h5col.Table.open(g)
        assert not any(t.index_is_valid(i) for i in t.search_indexes.values())
        for where in PREDICATES:
            assert t.select(where).row_positions.tolist() == brute_force(rows, where), where
