"""Storage control from the outside (issue 6): what h5vec writes with LZF and
with deflate through its parallel direct-chunk path reads in stock h5py, and
a filter the Rust side cannot decode is a clear error naming it and the
dataset."""

import numpy as np
import pytest

import hdf5vectors as hv

N = 200_000


def expected():
    return np.sin(np.arange(N, dtype=np.float64) * 0.001)


def test_lzf_is_readable_by_h5py(rust_files):
    ds = rust_files("storage.h5")["lzf/data/values"]
    assert ds.compression == "lzf"
    assert ds.maxshape == (None,)
    np.testing.assert_array_equal(ds[:], expected())


def test_parallel_deflate_chunks_are_standard(rust_files):
    f = rust_files("storage.h5")
    ds = f["deflate/data/values"]
    assert ds.compression == "gzip" and ds.compression_opts == 4
    assert ds.shuffle
    assert ds.chunks == (4096,)
    # Every chunk, including the partial last one, decodes with HDF5's own filters.
    np.testing.assert_array_equal(ds[:], expected())
    assert ds.id.get_num_chunks() == (N + 4095) // 4096
    # Random access into the middle of chunks.
    np.testing.assert_array_equal(ds[12345:12399], expected()[12345:12399])


def test_unavailable_filter_is_a_clear_error(tmp_path, xlang_read):
    hdf5plugin = pytest.importorskip("hdf5plugin")
    import h5py

    path = tmp_path / "blosc.h5"
    values = np.arange(1000, dtype=np.float64)
    with h5py.File(path, "w") as f:
        def fill(data):
            data.create_dataset("values", data=values, chunks=(100,), maxshape=(None,),
                                **hdf5plugin.Blosc(cname="lz4"))
        hv.write_vector(f, "v", hv.scalar("Float64", "Float64"), len(values), fill)
    r = xlang_read(path, "v", "f64")
    assert r.returncode != 0
    assert "blosc" in r.stderr.lower(), r.stderr
    assert "/v/data/values" in r.stderr, r.stderr
    assert "panicked" not in r.stderr
