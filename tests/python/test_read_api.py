"""One read style: `Vector`, `Table` (open_table) and `StringArray`
(open_strings) share `len`, `columns`, `read`, `to_arrow`, `to_pandas`,
`to_polars`, `iter_batches`, slicing and the context manager; the package
ships `py.typed`."""

import json
from pathlib import Path

import h5py
import numpy as np
import pyarrow as pa
import pytest

import h5vec
from test_package_common import GOLDEN

TABLES = sorted((GOLDEN / "h5col").glob("*.json"))
VLS = sorted((GOLDEN / "vls").glob("*.json"))


def load(meta_path):
    meta = json.loads(meta_path.read_text())
    return meta, meta_path.with_name(meta["file"])


def assert_same(got, want):
    """Equal values, dtypes and masks (dicts of arrays, arrays, masked arrays)."""
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            assert_same(got[k], want[k])
        return
    assert type(got) is type(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if isinstance(want, np.ma.MaskedArray):
        assert np.ma.getmaskarray(got).tolist() == np.ma.getmaskarray(want).tolist()
        assert got.filled(0).tolist() == want.filled(0).tolist()
    else:
        assert got.tolist() == want.tolist()


@pytest.fixture
def vec_path(tmp_path):
    path = tmp_path / "v.h5"
    score = np.ma.MaskedArray(np.arange(10, dtype=np.float32) / 4, mask=[i % 3 == 0 for i in range(10)])
    h5vec.save_vector(path, "v", {"id": np.arange(100, 110, dtype=np.int64), "score": score,
                                  "name": np.array([f"n{i}" for i in range(10)])})
    return path


def test_vector_slices_are_read_of_those_rows(vec_path):
    with h5vec.open_vector(vec_path, "v") as v:
        assert len(v) == 10 and v.columns == ["id", "score", "name"]
        got = v[2:5]
        assert_same(got, v.read(rows=slice(2, 5)))
        assert got["id"].dtype == np.int64 and got["id"].tolist() == [102, 103, 104]
        assert got["score"].dtype == np.float32
        assert got["score"].mask.tolist() == [False, True, False]
        assert got["score"].filled(-1).tolist() == [0.5, -1, 1.0]
        assert got["name"].dtype == object and got["name"].tolist() == ["n2", "n3", "n4"]
        assert v[-3:]["id"].tolist() == [107, 108, 109]
        assert_same(v[-5:-2], v.read(rows=range(5, 8)))
        assert_same(v[:], v.read())
        assert_same(v[1:3:1], v.read(rows=(1, 3)))
        assert v[7:2]["id"].tolist() == [] and v[7:2]["id"].dtype == np.int64
        assert v[8:100]["id"].tolist() == [108, 109]


def test_vector_int_index_is_one_row(vec_path):
    with h5vec.open_vector(vec_path, "v") as v:
        assert_same(v[3], v.read(rows=range(3, 4)))
        assert v[3]["id"].tolist() == [103] and v[3]["score"].mask.tolist() == [True]
        assert_same(v[-1], v.read(rows=range(9, 10)))
        assert v[np.int64(4)]["name"].tolist() == ["n4"]
        for i in (10, -11):
            with pytest.raises(IndexError, match="outside the 10 rows"):
                v[i]


def test_a_step_is_a_value_error(vec_path):
    with h5vec.open_vector(vec_path, "v") as v:
        for key in (slice(None, None, 2), slice(0, 4, 2), slice(None, None, -1)):
            with pytest.raises(ValueError, match="only step 1"):
                v[key]
        with pytest.raises(TypeError):
            v["id"]
        with pytest.raises(TypeError):
            v[1.5]


@pytest.mark.parametrize("meta_path", TABLES, ids=lambda p: p.stem)
def test_open_table_reads_as_read_table(meta_path):
    meta, h5 = load(meta_path)
    n = meta["nrows"]
    with h5py.File(h5, "r") as f:
        g = f[meta["group"]]
        want = h5vec.read_table(g)
        want_arrow = h5vec.read_table(g, format="arrow")
        want_pd = h5vec.read_table(g, format="pandas")
        with h5vec.open_table(g) as t:
            assert len(t) == n and t.columns == meta["column_order"]
            assert_same(t.read(), want)
            assert t.to_arrow().equals(want_arrow)
            assert t.to_arrow().to_pylist() == meta["rows"]
            assert t.to_pandas().equals(want_pd)
            assert t.to_polars().to_arrow().to_pylist() == meta["rows"]
            assert_same(t[1:3], h5vec.read_table(g, rows=slice(1, 3)))
            assert t[1:3]["id" if "id" in t.columns else t.columns[0]].shape == (min(n, 3) - min(n, 1),)
            assert_same(t[-2:], h5vec.read_table(g, rows=slice(n - 2, n)))
            first = t.columns[:1]
            assert_same(t.read(columns=first, rows=(0, 2)), h5vec.read_table(g, columns=first, rows=slice(0, 2)))
            batches = list(t.iter_batches(2, format="arrow"))
            assert pa.Table.from_batches(batches).to_pylist() == meta["rows"]
            with pytest.raises(ValueError, match="only step 1"):
                t[::2]
            # The function form too: a step is refused, never ignored (it read
            # every row of the range before), and a (start, stop) tuple works.
            with pytest.raises(ValueError, match="step 1"):
                h5vec.read_table(g, rows=slice(0, n, 2))
            assert_same(h5vec.read_table(g, rows=(1, 3)), h5vec.read_table(g, rows=slice(1, 3)))
            assert_same(h5vec.read_table(g, rows=slice(3, 1)), h5vec.read_table(g, rows=slice(0, 0)))
    # A path: the table opens the file and closes it.
    t = h5vec.open_table(h5, meta["group"])
    file = t.group.file
    assert t.to_arrow().to_pylist() == meta["rows"]
    t.close()
    assert not file.id.valid


def test_open_table_exact_values():
    meta, h5 = load(GOLDEN / "h5col" / "d_mixed_table.json")
    with h5vec.open_table(h5, "table") as t:
        row = t[5]
        assert row["id"].dtype == np.int64 and row["id"].tolist() == [9223372036854775807]
        assert row["name"].tolist() == ["sixteen bytes ok"]
        got = t[3:5]
        assert got["id"].mask.tolist() == [False, True] and got["id"].filled(0).tolist() == [4, 0]
        assert got["flag"].dtype == np.bool_ and got["flag"].tolist() == [False, False]
        assert got["labels"].tolist() == [["only"], []]
        assert list(t.to_pandas(rows=slice(3, 5)).index) == [3, 4]


@pytest.mark.parametrize("meta_path", VLS, ids=lambda p: p.stem)
def test_open_strings_reads_as_read_strings(meta_path):
    meta, h5 = load(meta_path)
    strings = meta["strings"]
    with h5py.File(h5, "r") as f:
        g = f[meta["group"]]
        want = h5vec.read_strings(g)
        want_arrow = h5vec.read_strings(g, format="arrow")
        with h5vec.open_strings(f, meta["group"].lstrip("/")) as s:
            assert len(s) == len(strings) and s.columns == ["value"]
            got = s.read()
            assert got.dtype == object and got.tolist() == want.tolist() == strings
            assert s.to_arrow().equals(want_arrow)
            assert s[1:4].dtype == object and s[1:4].tolist() == strings[1:4]
            assert s[-2:].tolist() == strings[-2:]
            assert s.read(rows=slice(1, 4)).tolist() == strings[1:4]
            if strings:
                assert s[0].tolist() == strings[:1] and s[-1].tolist() == strings[-1:]
            ser = s.to_pandas(rows=slice(1, 3))
            assert list(ser.index) == [1, 2][:len(strings[1:3])]
            assert [None if v is None or v != v else v for v in ser.tolist()] == strings[1:3]
            assert ser.dtype == type(ser)(["a"]).dtype  # pandas' default for strings
            assert s.to_polars().to_list() == strings
            batches = list(s.iter_batches(3, format="arrow"))
            assert sum((b.to_pylist() for b in batches), []) == strings
            with pytest.raises(ValueError, match="only step 1"):
                s[::3]
            with pytest.raises(KeyError):
                s.read(columns=["x"])


def test_open_what_is_not_one_is_a_format_error():
    _, table = load(GOLDEN / "h5col" / "d_mixed_table.json")
    meta, vls = load(GOLDEN / "vls" / "dolomite_strings.json")
    with pytest.raises(h5vec.FormatError, match="COLUMN_TABLE"):
        h5vec.open_table(vls, meta["group"])
    with pytest.raises(h5vec.FormatError, match='type = "vls"'):
        h5vec.open_strings(table, "table")


def test_one_read_api():
    for cls in (h5vec.Vector, h5vec.Table, h5vec.StringArray):
        for m in ("read", "to_arrow", "to_pandas", "to_polars", "iter_batches", "close", "__len__",
                  "__getitem__", "__enter__", "__exit__"):
            assert getattr(cls, m) is getattr(h5vec.Vector, m), (cls, m)


def test_py_typed_ships_with_the_package():
    pkg = Path(h5vec.__file__).parent
    assert (pkg / "py.typed").is_file() and (pkg / "py.typed").read_bytes() == b""
    # The installed package (CI installs it) or the source tree: the
    # declaration is in the repository's python/pyproject.toml either way.
    pyproject = (Path(__file__).resolve().parents[2] / "python" / "pyproject.toml").read_text()
    assert '[tool.setuptools.package-data]\nh5vec = ["py.typed"]' in pyproject


def test_not_iterated_row_by_row(vec_path):
    with h5vec.open_vector(vec_path, "v") as v:
        with pytest.raises(TypeError, match="iter_batches"):
            iter(v)
