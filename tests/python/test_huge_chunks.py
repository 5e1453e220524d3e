"""A filtered dataset declaring 4 GiB chunks (a file of a few KiB): the
package raises h5vec.FormatError naming the dataset before HDF5 allocates
the chunk (SPEC section 7), as Rust does; an unfiltered one reads exactly."""

import h5py
import numpy as np
import pyarrow as pa
import pytest

import h5vec

# Rows of u64 in a chunk of 4 GiB - 8 bytes (HDF5's largest is 4 GiB - 1).
HUGE = (1 << 29) - 1


def huge_file(path, chunk, **filters):
    h5vec.save_vector(path, "v", pa.table({"x": pa.array(np.arange(10, dtype=np.uint64))}))
    with h5py.File(path, "r+") as f:
        g = f["v/data/x"]
        del g["values"]
        ds = g.create_dataset("values", shape=(10,), maxshape=(None,), chunks=(HUGE,), dtype="<u8", **filters)
        ds.id.write_direct_chunk((0,), chunk, 0)


CASES = {
    "deflate": dict(compression="gzip"),
    "shuffle+deflate": dict(compression="gzip", shuffle=True),
    "lzf": dict(compression="lzf"),
    "fletcher32": dict(fletcher32=True),
}


@pytest.mark.parametrize("what", sorted(CASES))
def test_filtered_4_gib_chunks_raise(tmp_path, what):
    path = tmp_path / "huge.h5"
    huge_file(path, b"a few stored bytes, not a chunk", **CASES[what])
    for read in (lambda v: v.to_arrow(), lambda v: v.read(2, 5), lambda v: v.validate()):
        with pytest.raises(h5vec.FormatError, match="found chunks of 4294967288 bytes") as e:
            read(h5vec.open_vector(path, "v"))
        assert e.value.location == "/v/data/x/values"


def test_blosc_4_gib_chunks_raise(tmp_path):
    hdf5plugin = pytest.importorskip("hdf5plugin")
    path = tmp_path / "huge.h5"
    huge_file(path, b"a few stored bytes, not a chunk", **hdf5plugin.Blosc(cname="zstd"))
    with pytest.raises(h5vec.FormatError, match="found chunks of 4294967288 bytes"):
        h5vec.open_vector(path, "v").to_arrow()


def test_unfiltered_4_gib_chunks_read_exactly(tmp_path):
    path = tmp_path / "huge.h5"
    xs = np.arange(10, dtype=np.uint64) * 3
    huge_file(path, xs.tobytes())
    assert h5vec.open_vector(path, "v").to_arrow().column("x").to_pylist() == xs.tolist()
