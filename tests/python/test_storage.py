"""Storage control from the outside (SPEC.md section 6): what h5vec writes with LZF and
with deflate through its parallel direct-chunk path reads in stock h5py;
Blosc (filter 32001) round trips with h5py + hdf5plugin both ways; and a
filter the Rust side cannot decode is a clear error naming it and the
dataset."""

import os
import subprocess
import sys

import numpy as np
import pytest

import expected as X
import hdf5vectors as hv



@pytest.fixture
def hdf5plugin():
    """Python's hdf5plugin (in requirements.txt); importing it registers
    Blosc and the other plugin filters with h5py's HDF5."""
    return pytest.importorskip("hdf5plugin")

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
    # Chunk 1 was filled by an append that could not compress it, and the
    # last append left chunk 4 partly filled: both in the stored form.
    assert [c.filter_mask for c in info] == [0b10, 0, 0, 0, 0]
    assert info[0].size == 16_384 * 8
    assert [info[1].size, info[4].size] == [stored_form_size(16_384 * 8)] * 2
    assert all(c.size < 16_384 * 8 // 4 for c in info[2:4])


def stored_form_size(n):
    """zlib header (2) + a 5-byte header per stored block of at most 65,535
    bytes + the bytes + Adler-32 (4): SPEC section 8."""
    return 2 + 5 * -(-n // 65_535) + n + 4


def test_partial_chunks_of_appended_vectors_use_the_stored_form(rust_files):
    """SPEC section 8: after an append in a file with HDF5's default file
    space handling, the partly filled last chunk of a deflated dataset is a
    zlib stream of stored (uncompressed) deflate blocks over the shuffled
    chunk, filter mask 0; any deflate reader decodes it."""
    import zlib

    ds = rust_files("storage.h5")["mixed/data/values"]
    mask, raw = ds.id.read_direct_chunk((65_536,))
    assert mask == 0 and len(raw) == stored_form_size(16_384 * 8)
    assert raw[:2] == b"\x78\x01"  # deflate, 32 KiB window, level 0
    first_block = raw[2:7]
    assert first_block == bytes([0]) + (65_535).to_bytes(2, "little") + (0).to_bytes(2, "little")
    shuffled = np.frombuffer(zlib.decompress(raw), np.uint8)
    rows = shuffled.reshape(8, 16_384).T.copy().view("<u8").ravel()
    np.testing.assert_array_equal(rows[: 70_000 - 65_536], mixed_expected()[65_536:])
    assert not rows[70_000 - 65_536 :].any()
    np.testing.assert_array_equal(ds[65_536:], mixed_expected()[65_536:])


# ---------------------------------------------------------------------------
# Blosc, written by h5vec, read by h5py + hdf5plugin


def pipeline(ds):
    """[(filter id, flags, cd_values, name)] of a dataset, in order."""
    dcpl = ds.id.get_create_plist()
    return [dcpl.get_filter(i) for i in range(dcpl.get_nfilters())]


def blosc_cd(ds, level, shuffle, compressor):
    """cd_values as Blosc's set_local stores them: filter version 2, Blosc
    format 2, element size, chunk bytes, level, shuffle, compressor code."""
    elem = ds.dtype.base.itemsize if ds.dtype.kind != "O" else 16
    return (2, 2, elem, int(np.prod(ds.chunks)) * elem, level, shuffle, compressor)


def test_blosc_zstd_is_readable_by_h5py_with_hdf5plugin(rust_files, hdf5plugin):
    ds = rust_files("storage.h5")["zstd/data/values"]
    assert pipeline(ds) == [(32001, 1, (2, 2, 8, 4096 * 8, 5, 1, 5), b"blosc")]
    assert ds.dtype == np.dtype("<f8")
    assert ds.chunks == (4096,) and ds.maxshape == (None,)
    np.testing.assert_array_equal(ds[:], expected())
    np.testing.assert_array_equal(ds[12345:12399], expected()[12345:12399])
    assert ds.id.get_storage_size() < N * 8  # compressed (sines shrink little)


def test_blosc_lz4_bitshuffle_record(rust_files, hdf5plugin):
    g = rust_files("storage.h5")["blosc_measurements/data"]
    ms = [X.measurement(i) for i in range(1000)]
    cols = {
        "timestamp/weeks/values": (np.array([m["timestamp"]["weeks"] for m in ms], dtype="<i4"), 4),
        "timestamp/microseconds/values": (np.array([m["timestamp"]["microseconds"] for m in ms], dtype="<i8"), 8),
        "temperature/values": (np.array([m["temperature"] for m in ms], dtype="<f8"), 8),
        "position/values": (np.array([m["position"] for m in ms], dtype="<f8"), 8),
    }
    for path, (want, elem) in cols.items():
        ds = g[path]
        assert ds.dtype == want.dtype, path
        assert pipeline(ds) == [(32001, 1, blosc_cd(ds, 9, 2, 1), b"blosc")], path
        assert ds[:].dtype == want.dtype
        np.testing.assert_array_equal(ds[:], want, err_msg=path)
    assert int(rust_files("storage.h5")["blosc_measurements/metadata/count"][()]) == 1000


def test_blosc_per_field_attributes(rust_files, hdf5plugin):
    g = rust_files("storage.h5")["packed/data"]
    n = 500
    ids = g["id/values"]
    assert pipeline(ids) == [(32001, 1, blosc_cd(ids, 9, 1, 5), b"blosc")]
    np.testing.assert_array_equal(ids[:], np.arange(n, dtype="<i8") * 1_000_003 - 7)
    # A compressed String field is stored as heap + pointers (SPEC 4.1, 6):
    # the field's Blosc settings apply to both datasets.
    label = g["label"]
    assert set(label) == {"heap", "pointers"}
    heap, ptrs = label["heap"], label["pointers"]
    assert heap.dtype == np.uint8 and ptrs.dtype.names == ("offset", "length") and ptrs.shape == (n,)
    assert pipeline(heap) == [(32001, 1, blosc_cd(heap, 6, 0, 4), b"blosc")]
    assert pipeline(ptrs) == [(32001, 1, blosc_cd(ptrs, 6, 0, 4), b"blosc")]
    hb = heap[:].tobytes()
    assert len(hb) == sum(int(k) for _, k in ptrs[:])
    assert [hb[o:o + k].decode("utf-8") for o, k in ptrs[:]] == [X.text_value(i) for i in range(n)]
    samples = g["samples/values"]
    assert samples.dtype == np.dtype("<i2") and samples.shape == (n, 4)
    assert pipeline(samples) == [(32001, 1, blosc_cd(samples, 5, 2, 2), b"blosc")]
    i = np.arange(n, dtype=np.int16)
    want = np.stack([i, -i, (i * i).astype(np.int16), np.ones(n, dtype=np.int16)], axis=1)
    np.testing.assert_array_equal(samples[:], want)


def test_blosc_needs_hdf5plugin_in_h5py(rust_dir, tmp_path):
    """Stock h5py without `import hdf5plugin` (and no plugin directory)
    cannot decode Blosc: SPEC.md tells readers to import it."""
    code = ("import h5py, sys\n"
            "f = h5py.File(sys.argv[1], 'r')\n"
            "f['zstd/data/values'][:]\n")
    env = dict(os.environ, HDF5_PLUGIN_PATH=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code, str(rust_dir / "storage.h5")],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode != 0
    assert "plugin" in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------
# Blosc, written by h5py + hdf5plugin, read by h5vec

# (cname, shuffle, clevel); shuffle as hdf5plugin.Blosc.NOSHUFFLE (0),
# SHUFFLE (1), BITSHUFFLE (2).
BLOSC_SETTINGS = [
    ("blosclz", 0, 5),
    ("lz4", 1, 1),
    ("lz4hc", 2, 9),
    ("zlib", 1, 4),
    ("zstd", 2, 7),
]


@pytest.mark.parametrize("cname,shuffle,clevel", BLOSC_SETTINGS)
def test_h5vec_reads_blosc_written_by_hdf5plugin(tmp_path, xlang_read, hdf5plugin, cname, shuffle, clevel):
    import h5py

    from test_python_to_rust import jl_measurement, measurement_columns, measurement_schema

    n = 3000
    path = tmp_path / f"blosc_{cname}.h5"
    cols = measurement_columns(n)

    def fill(data):
        for p, a in cols.items():
            data.create_dataset(p, data=a, chunks=(500,) + a.shape[1:], maxshape=(None,) + a.shape[1:],
                                **hdf5plugin.Blosc(cname=cname, clevel=clevel, shuffle=shuffle))

    with h5py.File(path, "w") as f:
        hv.write_vector(f, "measurements", measurement_schema(), n, fill)
        ds = f["measurements/data/temperature/values"]
        codes = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
        assert pipeline(ds)[0][0] == 32001
        assert pipeline(ds)[0][2] == (2, 2, 8, 4000, clevel, shuffle, codes[cname])
    assert xlang_read(path, "measurements", "measurement").values() == [jl_measurement(i) for i in range(n)]


# ---------------------------------------------------------------------------
# Filters h5vec cannot decode


UNAVAILABLE = [
    ("zstd", lambda p: p.Zstd(clevel=3), 32015, "Zstandard"),
    ("lz4", lambda p: p.LZ4(), 32004, "LZ4"),
    ("bzip2", lambda p: p.BZip2(), 307, "bzip2"),
]


@pytest.mark.parametrize("label,make,fid,hint", UNAVAILABLE, ids=[u[0] for u in UNAVAILABLE])
def test_unavailable_filter_is_a_clear_error(tmp_path, xlang_read, hdf5plugin, label, make, fid, hint):
    import h5py

    path = tmp_path / f"{label}.h5"
    values = np.arange(1000, dtype=np.float64)
    with h5py.File(path, "w") as f:
        def fill(data):
            data.create_dataset("values", data=values, chunks=(100,), maxshape=(None,), **make(hdf5plugin))
        hv.write_vector(f, "v", hv.scalar("Float64", "Float64"), len(values), fill)
        assert pipeline(f["v/data/values"])[0][0] == fid
    r = xlang_read(path, "v", "f64")
    assert r.returncode != 0
    assert f"(id {fid}) ({hint}; in Python: `import hdf5plugin`" in r.stderr, r.stderr
    assert "which is not available" in r.stderr, r.stderr
    assert "/v/data/values" in r.stderr, r.stderr
    assert "panicked" not in r.stderr


def test_blosc_compressor_missing_from_h5vec_is_a_clear_error(tmp_path, xlang_read, hdf5plugin):
    """hdf5plugin's Blosc has Snappy; h5vec's build of Blosc does not."""
    import h5py

    path = tmp_path / "snappy.h5"
    values = np.arange(1000, dtype=np.float64)
    with h5py.File(path, "w") as f:
        def fill(data):
            data.create_dataset("values", data=values, chunks=(100,), maxshape=(None,),
                                **hdf5plugin.Blosc(cname="snappy"))
        hv.write_vector(f, "v", hv.scalar("Float64", "Float64"), len(values), fill)
        assert pipeline(f["v/data/values"])[0][2][6] == 3
    r = xlang_read(path, "v", "f64")
    assert r.returncode != 0
    assert "filter `blosc` (id 32001) with compressor snappy (this build of Blosc has blosclz, lz4, lz4hc, zlib, zstd)" \
        in r.stderr, r.stderr
    assert "/v/data/values" in r.stderr, r.stderr
    assert "panicked" not in r.stderr
