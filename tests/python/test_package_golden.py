"""Golden files written by other implementations (tests/golden): h5col tables
(h5vec.read_table) and takane/dolomite VLS string arrays (h5vec.read_strings)."""

import json

import h5py
import numpy as np
import pytest

import h5vec
from test_package_common import GOLDEN

TABLES = sorted((GOLDEN / "h5col").glob("*.json"))
VLS = sorted((GOLDEN / "vls").glob("*.json"))


def load(meta_path):
    meta = json.loads(meta_path.read_text())
    return meta, meta_path.with_name(meta["file"])


def test_golden_files_present():
    assert len(TABLES) >= 6 and len(VLS) >= 5


def plain(x):
    """numpy / masked values -> plain Python (None for masked)."""
    if isinstance(x, np.ndarray):
        return [plain(v) for v in x]
    if isinstance(x, list):
        return [plain(v) for v in x]
    if x is np.ma.masked:
        return None
    if isinstance(x, np.generic):
        return x.item()
    return x


def numpy_rows(cols, n):
    out = []
    for i in range(n):
        row = {}
        for k, a in cols.items():
            if isinstance(a, np.ma.MaskedArray):
                row[k] = None if a.mask[i] else a.data[i].item()
            else:
                row[k] = plain(a[i])
        out.append(row)
    return out


@pytest.mark.parametrize("meta_path", TABLES, ids=lambda p: p.stem)
def test_h5col_tables(meta_path):
    meta, h5 = load(meta_path)
    with h5py.File(h5, "r") as f:
        g = f[meta["group"]]
        t = h5vec.read_table(g, format="arrow")
        assert t.column_names == meta["column_order"]
        assert t.num_rows == meta["nrows"]
        assert t.to_pylist() == meta["rows"]
        cols = h5vec.read_table(g)
        assert numpy_rows(cols, meta["nrows"]) == meta["rows"]
        df = h5vec.read_table(g, format="pandas")
        assert list(df.columns) == meta["column_order"] and len(df) == meta["nrows"]
        # A row range and a column subset.
        if meta["nrows"] > 2:
            sub = h5vec.read_table(f, meta["group"].lstrip("/"), columns=meta["column_order"][:1],
                                   rows=slice(1, 3), format="arrow")
            assert sub.to_pylist() == [{k: r[k] for k in meta["column_order"][:1]} for r in meta["rows"][1:3]]


def test_h5col_scalar_dtypes():
    meta, h5 = load(GOLDEN / "h5col" / "d_mixed_table.json")
    with h5py.File(h5, "r") as f:
        cols = h5vec.read_table(f["table"])
    assert cols["id"].dtype == np.int64 and isinstance(cols["id"], np.ma.MaskedArray)
    assert cols["flag"].dtype == np.bool_ and not isinstance(cols["flag"], np.ma.MaskedArray)
    assert cols["name"].dtype == object


@pytest.mark.parametrize("meta_path", VLS, ids=lambda p: p.stem)
def test_vls_arrays(meta_path):
    meta, h5 = load(meta_path)
    with h5py.File(h5, "r") as f:
        g = f[meta["group"]]
        got = h5vec.read_strings(g)
        assert got.dtype == object and got.tolist() == meta["strings"]
        arr = h5vec.read_strings(g, format="arrow")
        assert arr.to_pylist() == meta["strings"]
        assert arr.null_count == sum(s is None for s in meta["strings"])


def test_read_table_rejects_what_is_not_a_table(tmp_path):
    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as f:
        g = f.create_group("table")
        g.attrs["CLASS"] = np.bytes_("COLUMN_TABLE")
        g.attrs["VERSION"] = np.bytes_("2.0")
        g.attrs["NROWS"] = np.uint64(0)
        with pytest.raises(h5vec.FormatError, match="VERSION"):
            h5vec.read_table(g)
        g.attrs["VERSION"] = np.bytes_("1.0")
        g.attrs["NROWS"] = np.uint64(3)
        g.create_dataset("x", data=np.arange(2))
        with pytest.raises(h5vec.FormatError, match="at least 3 rows") as e:
            h5vec.read_table(g)
        assert e.value.path == "$.x" and e.value.location == "/table/x"
