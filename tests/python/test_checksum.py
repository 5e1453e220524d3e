"""Fletcher32 checksums (SPEC section 6.4): the package's save_vector(checksum=True)
puts HDF5's Fletcher32 filter last on every chunked dataset, Rust (the h5vec
command) loads such files, and a byte changed on disk is an error in plain
h5py and in the package, never a different value."""

import json
import os
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pyarrow as pa
import pytest

import h5vec

WORKSPACE = Path(__file__).resolve().parent.parent.parent


def _h5vec_bin():
    env = os.environ.get("H5VEC_BIN")
    for p in ([Path(env)] if env else []) + [WORKSPACE / "target" / "debug" / "h5vec"]:
        if p.is_file():
            return p
    return None


H5VEC = _h5vec_bin()

TABLE = pa.table({
    "id": pa.array(np.arange(5000, dtype=np.uint64)),
    "x": pa.array(np.linspace(0, 1, 5000, dtype=np.float64)),
    "name": pa.array([f"row {i}" for i in range(5000)]),
    "tags": pa.array([[f"t{k}" for k in range(i % 3)] for i in range(5000)]),
    "maybe": pa.array([None if i % 4 == 0 else i for i in range(5000)], pa.int32()),
})


def chunked(f):
    out = []
    f.visititems(lambda name, obj: out.append(obj) if isinstance(obj, h5py.Dataset) and obj.chunks else None)
    return out


def last_filter(ds):
    dcpl = ds.id.get_create_plist()
    n = dcpl.get_nfilters()
    return dcpl.get_filter(n - 1)[0] if n else None


@pytest.mark.parametrize("compression", [None, "deflate", "lzf"])
def test_package_save_puts_fletcher32_last_on_every_chunked_dataset(tmp_path, compression):
    path = tmp_path / "c.h5"
    h5vec.save_vector(path, "v", TABLE, chunk_length=512, compression=compression, checksum=True,
                      vls_strings=["name"])
    with h5py.File(path, "r") as f:
        ds = chunked(f)
        assert len(ds) >= 6
        for d in ds:
            assert d.fletcher32, d.name
            assert last_filter(d) == h5py.h5z.FILTER_FLETCHER32, d.name
    assert h5vec.open_vector(path, "v").to_arrow().to_pylist() == TABLE.to_pylist()
    # Without checksum=, no dataset has it.
    h5vec.save_vector(path, "w", TABLE.slice(0, 10), compression=compression)
    with h5py.File(path, "r") as f:
        assert not any(d.fletcher32 for d in chunked(f["w"]))


@pytest.mark.skipif(H5VEC is None, reason="no h5vec binary: cargo build -p h5vec-cli")
@pytest.mark.parametrize("compression", [None, "deflate"])
def test_rust_loads_the_packages_checksummed_files(tmp_path, compression):
    path = tmp_path / "c.h5"
    h5vec.save_vector(path, "v", TABLE, chunk_length=512, compression=compression, checksum=True)
    proc = subprocess.run([str(H5VEC), "cat", str(path), "v", "--format", "jsonl"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in rows] == list(range(5000))
    assert [r["name"] for r in rows] == [f"row {i}" for i in range(5000)]
    assert [r["tags"] for r in rows] == [[f"t{k}" for k in range(i % 3)] for i in range(5000)]


def flip(path, dataset, row, offset):
    with h5py.File(path, "r") as f:
        info = f[dataset].id.get_chunk_info_by_coord((row,))
    assert offset < info.size
    data = bytearray(Path(path).read_bytes())
    data[info.byte_offset + offset] ^= 0x04
    Path(path).write_bytes(bytes(data))


@pytest.mark.parametrize("compression", [None, "deflate"])
def test_a_flipped_byte_is_an_error_in_h5py_and_in_the_package(tmp_path, compression):
    path = tmp_path / "c.h5"
    ids = pa.table({"id": pa.array(np.arange(10_000, dtype=np.uint64) * 7)})
    h5vec.save_vector(path, "v", ids, chunk_length=1024, compression=compression, checksum=True)
    flip(path, "v/data/id/values", 3 * 1024, 40)
    with h5py.File(path, "r") as f:
        d = f["v/data/id/values"]
        assert (d[:3072] == np.arange(3072, dtype=np.uint64) * 7).all()
        with pytest.raises(OSError, match="filter returned failure|Fletcher32"):
            d[3072:3100]
    with pytest.raises((OSError, h5vec.FormatError), match="Fletcher32|checksum"):
        h5vec.open_vector(path, "v").to_arrow()
    if H5VEC is not None:
        proc = subprocess.run([str(H5VEC), "cat", str(path), "v", "--format", "jsonl"], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode != 0
        assert "checksum mismatch, rows 3072..4096" in proc.stderr, proc.stderr
