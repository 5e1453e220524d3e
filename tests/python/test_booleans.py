"""Stored booleans are 0 or 1 (SPEC section 7): a bitfield, an HDF5 enum
(h5py's FALSE = 0 / TRUE = 1), a 1-byte integer or an h5col bool holding any
other code is a FormatError naming the row, in every output form; 0 and 1
still read exactly."""

import h5py
import numpy as np
import pyarrow as pa
import pytest

import h5vec

N = 40
FLAGS = [i % 3 == 0 for i in range(N)]


def nn(name, typ):
    return pa.field(name, typ, nullable=False)


def save(path):
    table = pa.table({"id": pa.array(range(N), pa.int32()), "flag": FLAGS,
                      "bits": [[i % 2 == 0, True] for i in range(N)],
                      "arr": [[i % 2 == 0, True, False] for i in range(N)]},
                     schema=pa.schema([nn("id", pa.int32()), nn("flag", pa.bool_()),
                                       nn("bits", pa.list_(nn("item", pa.bool_()))),
                                       nn("arr", pa.list_(nn("item", pa.bool_()), 3))]))
    h5vec.save_vector(path, "v", table)


def poke(path, ds_path, index, code):
    """Element `index` (row-major) of a 1-byte dataset set to `code`, written in the dataset's own type."""
    with h5py.File(path, "r+") as f:
        ds = f[ds_path]
        raw = np.empty(ds.shape, np.uint8)
        ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=ds.id.get_type())
        raw.reshape(-1)[index] = code
        ds.id.write(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=ds.id.get_type())


def as_enum(path, ds_path):
    """The bool dataset rewritten as h5py writes a bool: an enum over int8, FALSE = 0, TRUE = 1."""
    with h5py.File(path, "r+") as f:
        vals = f[ds_path][()].astype(bool)
        del f[ds_path]
        f.create_dataset(ds_path, data=vals, maxshape=(None,), chunks=True)
        t = f[ds_path].id.get_type()
        assert t.get_class() == h5py.h5t.ENUM and t.get_size() == 1
        assert sorted((t.get_member_name(i), t.get_member_value(i)) for i in range(t.get_nmembers())) == \
            [(b"FALSE", 0), (b"TRUE", 1)]


READS = {
    "numpy": lambda v: v.read(),
    "arrow": lambda v: v.to_arrow(),
    "pandas": lambda v: v.to_pandas(),
    "polars": lambda v: v.to_polars(),
    "rows": lambda v: v.read(rows=(10, 20)),
}


def refused(path, fpath, location, message):
    for form, read in READS.items():
        if form == "polars":
            pytest.importorskip("polars")
        with h5vec.open_vector(path, "v") as v, pytest.raises(h5vec.FormatError) as e:
            read(v)
        assert (e.value.path, e.value.location, e.value.message) == (fpath, location, message), form


def text(code):
    return f"bool value {code} is neither 0 (false) nor 1 (true)"


@pytest.mark.parametrize("stored", ["bitfield", "enum"])
@pytest.mark.parametrize("code", [2, 255])
def test_scalar_bool_codes(tmp_path, stored, code):
    path = tmp_path / "b.h5"
    save(path)
    if stored == "enum":
        as_enum(path, "v/data/flag/values")
    with h5vec.open_vector(path, "v") as v:
        assert v.read()["flag"].tolist() == FLAGS
        assert v.to_arrow().column("flag").to_pylist() == FLAGS
        assert v.to_pandas()["flag"].tolist() == FLAGS
        assert v.read()["bits"][3].tolist() == [False, True]
    poke(path, "v/data/flag/values", 17, code)
    refused(path, "$.flag", "/v/data/flag/values[17]", text(code))


@pytest.mark.parametrize("code", [2, 255])
def test_list_and_array_bool_codes(tmp_path, code):
    path = tmp_path / "b.h5"
    save(path)
    poke(path, "v/data/bits/VALUES", 35, code)
    refused(path, "$.bits[]", "/v/data/bits/VALUES[35]", text(code))
    other = tmp_path / "a.h5"
    save(other)
    poke(other, "v/data/arr/values", 17 * 3 + 1, code)
    refused(other, "$.arr", "/v/data/arr/values[17]", f"entry 1: {text(code)}")


@pytest.mark.parametrize("code", [2, 5, 255])
def test_h5col_bool_codes(tmp_path, code):
    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as f:
        g = f.create_group("t")
        g.attrs["CLASS"] = np.bytes_("COLUMN_TABLE")
        g.attrs["VERSION"] = np.bytes_("1.0")
        g.attrs["NROWS"] = np.uint64(6)
        g.create_dataset("flag", data=np.array([True, False, True, True, False, True]))
    with h5py.File(path, "r") as f:
        assert h5vec.read_table(f, "t")["flag"].tolist() == [True, False, True, True, False, True]
    poke(path, "t/flag", 4, code)
    for form in ("numpy", "arrow", "pandas"):
        with h5py.File(path, "r") as f, pytest.raises(h5vec.FormatError) as e:
            h5vec.read_table(f, "t", format=form)
        assert (e.value.path, e.value.location, e.value.message) == ("$.flag", "/t/flag[4]", text(code)), form
