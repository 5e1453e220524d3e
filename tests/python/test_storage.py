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


def mixed_expected():
    """The `mixed` vector of examples/xlang.rs: xorshift64 values, then counters."""
    out = np.arange(70_000, dtype=np.uint64)
    x = 0x9E3779B97F4A7C15
    m = (1 << 64) - 1
    for i in range(32_768):
        x ^= (x << 13) & m
        x ^= x >> 7
        x ^= (x << 17) & m
        out[i] = x
    return out


def test_incompressible_chunks_skip_deflate_in_their_filter_mask(rust_files):
    ds = rust_files("storage.h5")["mixed/data/values"]
    assert ds.compression == "gzip" and ds.shuffle and ds.chunks == (16_384,)
    assert ds.dtype == np.dtype("<u8") and ds.shape == (70_000,)
    np.testing.assert_array_equal(ds[:], mixed_expected())
    info = [ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())]
    # Shuffle is filter 0, deflate filter 1: bit 1 set = deflate skipped.
    assert [c.filter_mask for c in info] == [0b10, 0b10, 0, 0, 0]
    assert [c.size for c in info[:2]] == [16_384 * 8] * 2
    assert all(c.size < 16_384 * 8 // 4 for c in info[2:])


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
