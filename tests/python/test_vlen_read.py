"""Variable-length strings read from the file's bytes (h5vec._vlen): every
row exactly what HDF5 (through h5py) reads, for every storage h5vec and
others write; anything unusual left to HDF5 (None), never a different
answer."""

import os
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import h5vec  # noqa: E402
from h5vec import _vlen  # noqa: E402
from h5vec._errors import FormatError  # noqa: E402

VLEN = h5py.string_dtype("utf-8")


def strings(n, seed=0):
    rng = np.random.default_rng(seed)
    pool = ["", "a", "ä", "日本語", "x" * 7, "y" * 8, "z" * 9, "emoji \U0001F600", "tab\there", "q" * 100]
    out = []
    for i in range(n):
        k = int(rng.integers(0, 14))
        out.append(pool[k] if k < len(pool) else f"row {i} " + "w" * int(rng.integers(0, 40)))
    return out


def hdf5_reads(ds, a, b):
    """What h5py gives: (offsets, bytes)."""
    objs = ds[a:b].tolist()
    lens = np.array([len(x) for x in objs], np.int64)
    off = np.zeros(len(objs) + 1, np.int64)
    np.cumsum(lens, out=off[1:])
    return off, b"".join(objs)


def check_same(ds, a, b):
    got = _vlen.read_strings(ds, a, b)
    assert got is not None, f"{ds.name}[{a}:{b}] left to HDF5"
    off, data = got
    want_off, want = hdf5_reads(ds, a, b)
    assert off.dtype == np.int64 and off.tolist() == want_off.tolist()
    assert data.dtype == np.uint8 and data.tobytes() == want


LAYOUTS = {
    "contiguous": {},
    "chunked": {"chunks": (64,)},
    "deflate": {"chunks": (50,), "compression": "gzip", "compression_opts": 4},
    "lzf": {"chunks": (33,), "compression": "lzf"},
    "one_chunk": {"chunks": (1000,)},
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_range_equals_hdf5(tmp_path, layout):
    vals = strings(1000, seed=len(layout))
    path = tmp_path / "s.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("s", data=np.array(vals, dtype=object), dtype=VLEN, **LAYOUTS[layout])
    with h5py.File(path, "r") as f:
        ds = f["s"]
        for a, b in [(0, 1000), (0, 1), (999, 1000), (63, 65), (10, 500), (330, 331), (1, 999)]:
            check_same(ds, a, b)
        off, data = _vlen.read_strings(ds, 0, 1000)
        assert [data[off[i]:off[i + 1]].tobytes().decode() for i in range(1000)] == vals
        assert _vlen.read_strings(ds, 5, 5) is None  # nothing to read


def test_many_collections_blocks_and_big_strings(tmp_path, monkeypatch):
    # Strings larger than a collection (their own collections), several blocks of rows,
    # and blocks split because their collections exceed the cap.
    vals = strings(5000, seed=3)
    for i in range(0, 5000, 701):
        vals[i] = "B" * (70_000 + i)
    path = tmp_path / "big.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("s", data=np.array(vals, dtype=object), dtype=VLEN, chunks=(128,))
    monkeypatch.setattr(_vlen, "BLOCK_ROWS", 1500)
    monkeypatch.setattr(_vlen, "MIN_BLOCK_ROWS", 16)
    monkeypatch.setattr(_vlen, "MAX_HEAP_BYTES", 1 << 20)
    with h5py.File(path, "r") as f:
        check_same(f["s"], 0, 5000)
        check_same(f["s"], 700, 4300)
    # A block that cannot be made small enough is left to HDF5.
    monkeypatch.setattr(_vlen, "MAX_HEAP_BYTES", 1 << 16)
    with h5py.File(path, "r") as f:
        assert _vlen.read_strings(f["s"], 0, 5000) is None


@pytest.mark.parametrize("compression", [None, "deflate", "zstd", "lz4"])
def test_h5vec_written_strings(tmp_path, compression):
    # save_vector's layout (chunked, compressed as asked, an optional shuffle HDF5 skips).
    path = tmp_path / "c.h5"
    vals = strings(2000, seed=5)
    h5vec.save_vector(path, "v", {"s": np.array(vals, dtype=object)}, chunk_length=300, compression=compression)
    with h5py.File(path, "r") as f:
        check_same(f["v/data/s/values"], 0, 2000)
        check_same(f["v/data/s/values"], 299, 1201)
        filters = set(f["v/data/s/values"]._filters)
        if compression in ("zstd", "lz4"):
            # hdf5plugin's Blosc kills the process writing a variable-length dataset with
            # HDF5 2.0 (SIGFPE): the package writes this one without it (SPEC 6.1).
            assert "32001" not in filters
        elif compression == "deflate":
            assert "gzip" in filters
    assert h5vec.open_vector(path, "v").read()["s"].tolist() == vals
    # The heap layout of the same strings does get Blosc.
    if compression in ("zstd", "lz4"):
        h5vec.save_vector(path, "w", {"s": np.array(vals, dtype=object)}, chunk_length=300,
                          compression=compression, vls_strings=True)
        with h5py.File(path, "r") as f:
            assert "32001" in f["w/data/s/heap"]._filters
        assert h5vec.open_vector(path, "w").read()["s"].tolist() == vals


def test_null_pointers_read_as_empty_strings(tmp_path):
    # A row HDF5 stores as a null pointer (collection address 0) reads as b"" (h5py too).
    path = tmp_path / "n.h5"
    keep = [b"one\0", b"three\0"]
    bufs = [np.frombuffer(k, np.uint8) for k in keep]
    ptrs = np.array([bufs[0].ctypes.data, 0, bufs[1].ctypes.data, 0], np.uint64)
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("s", (4,), dtype=VLEN, chunks=(4,))
        mt = h5py.h5t.C_S1.copy()
        mt.set_size(h5py.h5t.VARIABLE)
        mt.set_cset(h5py.h5t.CSET_UTF8)
        ds.id.write(h5py.h5s.ALL, h5py.h5s.ALL, ptrs, mtype=mt)
    with h5py.File(path, "r") as f:
        raw = f["s"].id.read_direct_chunk((0,))[1]
        assert raw[16 + 4:16 + 12] == bytes(8)  # row 1: address 0
        check_same(f["s"], 0, 4)
        assert f["s"][...].tolist() == [b"one", b"", b"three", b""]


def test_left_to_hdf5(tmp_path):
    path = tmp_path / "l.h5"
    vals = strings(200)
    with h5py.File(path, "w") as f:
        f.create_dataset("s", data=np.array(vals, dtype=object), dtype=VLEN, chunks=(64,))
        f.create_dataset("partly", (200,), dtype=VLEN, chunks=(64,))[:64] = np.array(vals[:64], dtype=object)
        f.create_dataset("fixed", data=np.array([b"ab"] * 3))
        f.create_dataset("two_d", data=np.array([["a", "b"]], dtype=object), dtype=VLEN)
    # Opened for writing: the bytes on disk may not be what HDF5 holds.
    with h5py.File(path, "r+") as f:
        assert _vlen.read_strings(f["s"], 0, 200) is None
    with h5py.File(path, "r") as f:
        check_same(f["s"], 0, 200)
        assert _vlen.read_strings(f["partly"], 0, 200) is None  # chunks never written: fill values
        check_same(f["partly"], 0, 64)
        assert _vlen.read_strings(f["fixed"], 0, 3) is None
        assert _vlen.read_strings(f["two_d"], 0, 1) is None
    # Another driver: HDF5's bytes are not the file's.
    with h5py.File(path, "r", driver="core") as f:
        assert _vlen.read_strings(f["s"], 0, 200) is None


def _collection_of(path, name):
    with h5py.File(path, "r") as f:
        raw = f[name].id.read_direct_chunk((0,))[1]
    return int.from_bytes(raw[4:12], "little"), int.from_bytes(raw[12:16], "little")


def test_damaged_collections_are_not_guessed(tmp_path):
    # Each damage: the fast reader declines (None) and the vector read gives HDF5's
    # answer or the guard's error, as before.
    base = tmp_path / "v.h5"
    vals = ["alpha", "beta", "gamma", "delta"] * 8
    h5vec.save_vector(base, "v", {"s": np.array(vals, dtype=object)}, chunk_length=8)
    ds_name = "v/data/s/values"
    addr, index = _collection_of(base, ds_name)
    data = base.read_bytes()
    assert data[addr:addr + 4] == b"GCOL"

    def damaged(tag, edit):
        p = tmp_path / f"{tag}.h5"
        b = bytearray(data)
        edit(b)
        p.write_bytes(bytes(b))
        return p

    first_obj = addr + 16
    cases = {
        # the first object's size one byte off: HDF5's size check would fail
        "size": lambda b: b.__setitem__(slice(first_obj + 8, first_obj + 16),
                                        (int.from_bytes(b[first_obj + 8:first_obj + 16], "little") + 1)
                                        .to_bytes(8, "little")),
        # the magic
        "magic": lambda b: b.__setitem__(slice(addr, addr + 4), b"GCOX"),
        # free space of size 0 (HDF5 loops on it): the guard's error
        "loop": lambda b: b.__setitem__(slice(first_obj, first_obj + 16), bytes(16)),
        # the first object's index moved to another value
        "index": lambda b: b.__setitem__(slice(first_obj, first_obj + 2), (60000).to_bytes(2, "little")),
    }
    for tag, edit in cases.items():
        p = damaged(tag, edit)
        with h5py.File(p, "r") as f:
            assert _vlen.read_strings(f[ds_name], 0, len(vals)) is None, tag
        try:
            got = h5vec.open_vector(p, "v").read()["s"].tolist()
        except (FormatError, OSError, ValueError) as e:
            got = e
        if tag == "loop":
            assert isinstance(got, FormatError) and "HDF5 would loop on it forever" in str(got)
        else:
            # Never the original strings as if nothing were wrong, and never a crash.
            assert isinstance(got, Exception) or got != vals, tag


def test_vectors_read_through_it(tmp_path):
    # A vector's String and Option<String> columns (save_vector's default layout) read
    # from the file's bytes: the same values, checked as UTF-8 with the row named.
    path = tmp_path / "v.h5"
    vals = strings(3000, seed=9)
    maybe = [None if i % 5 == 0 else s for i, s in enumerate(vals)]
    import pyarrow as pa
    h5vec.save_vector(path, "v", pa.table({"s": pa.array(vals, pa.string()).cast(pa.large_string()),
                                           "m": pa.array(maybe, pa.large_string())},
                                          schema=pa.schema([pa.field("s", pa.large_string(), False),
                                                            pa.field("m", pa.large_string(), True)])),
                      chunk_length=256)
    with h5py.File(path, "r") as f:
        check_same(f["v/data/s/values"], 0, 3000)
    v = h5vec.open_vector(path, "v")
    t = v.to_arrow()
    assert t.column("s").to_pylist() == vals and t.column("m").to_pylist() == maybe
    assert v.read(rows=slice(250, 260))["s"].tolist() == vals[250:260]
    # A string that is not UTF-8 is an error naming its row (not an offset into a block).
    bad = tmp_path / "bad.h5"
    with h5py.File(bad, "w") as f:
        f.create_dataset("s", data=np.array([b"ok", b"ok", b"\xff\xfe"], dtype=object),
                         dtype=h5py.string_dtype("utf-8"), chunks=(2,))
    with h5py.File(bad, "r") as f:
        off, data = _vlen.read_strings(f["s"], 0, 3)
        assert data.tobytes() == b"okok\xff\xfe"
        from h5vec._columns import check_utf8
        with pytest.raises(FormatError, match=r"/s\[2\]"):
            check_utf8(off, data, "$.s", "/s", 0)
        with pytest.raises(FormatError, match=r"/s\[7\]"):
            check_utf8(off, data, "$.s", "/s", 5)
    assert os.path.exists(path)


def test_strings_written_from_one_buffer(tmp_path):
    # save_vector and append_vector hand HDF5 pointers into one NUL-separated buffer
    # (_h5.put_strings): empty strings anywhere, multi-byte UTF-8, long strings, appends
    # across chunk boundaries; what h5py reads is exactly the strings.
    path = tmp_path / "w.h5"
    vals = ["", "a", "", "", "\u00e4\u65e5\u672c", "x" * 100_000, ""] + strings(500, seed=11)
    h5vec.save_vector(path, "v", {"s": np.array(vals, dtype=object)}, chunk_length=7)
    h5vec.append_vector(path, "v", {"s": np.array(vals[::-1], dtype=object)})
    want = vals + vals[::-1]
    with h5py.File(path, "r") as f:
        ds = f["v/data/s/values"]
        assert ds.id.get_type().get_cset() == h5py.h5t.CSET_UTF8
        assert ds[...].tolist() == [s.encode() for s in want]
        check_same(ds, 0, len(want))
    assert h5vec.open_vector(path, "v").read()["s"].tolist() == want
    # A NUL is refused before HDF5 sees it (HDF5 would cut the string there).
    with pytest.raises(FormatError, match="NUL"):
        h5vec.save_vector(tmp_path / "nul.h5", "v", {"s": np.array(["ok", "a\0b"], dtype=object)})


def test_user_block(tmp_path):
    # Heap addresses count from the end of a user block (HDF5's base address).
    path = tmp_path / "ub.h5"
    vals = strings(300, seed=12)
    with h5py.File(path, "w", userblock_size=1024) as f:
        f.create_dataset("c", data=np.array(vals, dtype=object), dtype=VLEN)
        f.create_dataset("k", data=np.array(vals, dtype=object), dtype=VLEN, chunks=(40,), compression="gzip")
    with h5py.File(path, "r") as f:
        assert f.userblock_size == 1024
        check_same(f["c"], 0, 300)
        check_same(f["k"], 17, 290)


def test_without_pyarrow(tmp_path, monkeypatch):
    # The numpy gather (no pyarrow installed) gives the same bytes.
    path = tmp_path / "np.h5"
    vals = strings(4000, seed=13)
    with h5py.File(path, "w") as f:
        f.create_dataset("s", data=np.array(vals, dtype=object), dtype=VLEN, chunks=(256,))
    monkeypatch.setattr(_vlen, "_pyarrow", lambda: None)
    monkeypatch.setattr(_vlen, "BLOCK_ROWS", 1000)
    with h5py.File(path, "r") as f:
        check_same(f["s"], 0, 4000)
        check_same(f["s"], 999, 1001)
