"""Hostile files built with h5py: h5vec (through `xlang read`) must refuse
every dataset not stored in this file, before reading a byte of it, with an
error naming the path, within a time bound (SPEC.md section 7, "Everything
in this file"; section 6.2 for filters). tests/hostile.rs covers the same
cases, and the write entry points, from Rust.
"""

import os
import time

import h5py
import numpy as np

import hdf5vectors as H

VALUES = np.arange(4) * 1.5


def f64_vector(path):
    """A vector of 4 f64 `x` whose values the caller then replaces."""
    with h5py.File(path, "w") as f:
        H.write_vector(f, "x", H.scalar("Float64"), 4,
                       lambda d: H.write_column(d, "values", VALUES, dtype="<f8"))


def replace_values(path, make):
    with h5py.File(path, "a") as f:
        del f["x/data/values"]
        make(f["x/data"], "values")


def refused(xlang_read, path, *texts):
    """Loads `x` as Vec<f64>: must fail fast, naming `$ (/x/data/values)` and `texts`."""
    start = time.monotonic()
    r = xlang_read(path, "x", "f64")
    assert time.monotonic() - start < 30  # a process start and a build check included
    assert r.returncode == 1, r.stdout
    assert "$ (/x/data/values): expected " in r.stderr, r.stderr
    for t in texts:
        assert t in r.stderr, r.stderr


def test_external_storage_is_not_read(tmp_path, xlang_read):
    outside = tmp_path / "outside.bin"
    outside.write_bytes(np.arange(4, dtype="<f8").tobytes())
    path = tmp_path / "ext.h5"
    f64_vector(path)
    replace_values(path, lambda g, n: g.create_dataset(n, shape=(4,), dtype="<f8",
                                                       external=[(str(outside), 0, 32)]))
    refused(xlang_read, path, "found external storage in 1 outside file(s)", str(outside))


def test_external_storage_on_a_fifo_does_not_hang(tmp_path, xlang_read):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    path = tmp_path / "fifo.h5"
    f64_vector(path)
    replace_values(path, lambda g, n: g.create_dataset(n, shape=(4,), dtype="<f8",
                                                       external=[(str(fifo), 0, 32)]))
    refused(xlang_read, path, "found external storage", "pipe")


def test_virtual_dataset(tmp_path, xlang_read):
    src = tmp_path / "src.h5"
    with h5py.File(src, "w") as f:
        f["s"] = VALUES
    path = tmp_path / "vds.h5"
    f64_vector(path)
    layout = h5py.VirtualLayout(shape=(4,), dtype="<f8")
    layout[:] = h5py.VirtualSource(str(src), "s", shape=(4,))
    replace_values(path, lambda g, n: g.create_virtual_dataset(n, layout))
    refused(xlang_read, path, "found a virtual dataset", "src.h5")
    src.unlink()
    refused(xlang_read, path, "found a virtual dataset")


def test_external_link(tmp_path, xlang_read):
    other = tmp_path / "other.h5"
    f64_vector(other)
    before = other.read_bytes()
    path = tmp_path / "elink.h5"
    f64_vector(path)
    replace_values(path, lambda g, n: g.__setitem__(n, h5py.ExternalLink(str(other), "/x/data/values")))
    refused(xlang_read, path, "found an external link to", "`:`/x/data/values`")
    assert other.read_bytes() == before


def test_soft_links(tmp_path, xlang_read):
    path = tmp_path / "soft.h5"
    f64_vector(path)
    with h5py.File(path, "a") as f:
        f["other"] = VALUES[::-1].copy()
    replace_values(path, lambda g, n: g.__setitem__(n, h5py.SoftLink("/other")))
    refused(xlang_read, path, "found a soft link to `/other`")
    replace_values(path, lambda g, n: g.__setitem__(n, h5py.SoftLink("/nowhere")))
    refused(xlang_read, path, "found a soft link to `/nowhere`")


def test_unknown_filter_does_not_load_plugins(tmp_path, xlang_read, monkeypatch):
    """Filter 32015 (Zstandard) is not in this build; a directory in
    HDF5_PLUGIN_PATH holding a file that is not a library must not matter,
    and the error names the filter."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "libh5zstd.so").write_bytes(b"not a library")
    path = tmp_path / "zstd.h5"
    f64_vector(path)

    def make(g, n):
        ds = g.create_dataset(n, shape=(4,), maxshape=(None,), chunks=(4,), dtype="<f8",
                              compression=32015, allow_unknown_filter=True)
        ds.id.write_direct_chunk((0,), VALUES.astype("<f8").tobytes(), filter_mask=0)

    replace_values(path, make)
    monkeypatch.setenv("HDF5_PLUGIN_PATH", str(plugins))
    refused(xlang_read, path, "(id 32015)", "which is not available")


def test_plain_load_still_works(tmp_path, xlang_read):
    path = tmp_path / "ok.h5"
    f64_vector(path)
    assert xlang_read(path, "x", "f64").values() == list(VALUES)
