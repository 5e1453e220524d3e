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


# ---------------------------------------------------------------------------
# The schema tree against a checksummed metadata/serialized_schema (SPEC 6.4):
# a checksum save writes serialized_schema as one Fletcher32 chunk, and
# readers check the (unchecksummed) schema tree against it.

N_META = 12
META_TABLE = pa.table({
    "id": pa.array(np.arange(N_META, dtype=np.uint64)),
    "name": pa.array([f"row {i}" for i in range(N_META)]),
    "ts": pa.array(np.arange(N_META, dtype=np.int64) * 10**9, pa.timestamp("ns", tz="UTC")),
    "vec": pa.array([[float(i), 2.5] for i in range(N_META)], pa.list_(pa.float32(), 2)),
    "rec": pa.array([{"p": i * 3, "q": f"q{i}"} for i in range(N_META)]),
})
SCHEMA_DS = "v/metadata/serialized_schema"
needs_bin = pytest.mark.skipif(H5VEC is None, reason="no h5vec binary: cargo build -p h5vec-cli")


def _cat(path):
    return subprocess.run([str(H5VEC), "cat", str(path), "v", "--format", "jsonl"], capture_output=True,
                          text=True, timeout=120)


def _save(tmp_path, writer, table=META_TABLE, checksum=True):
    """`table` saved as vector `v` of a new file by the package or by Rust (the command's convert)."""
    path = tmp_path / f"{writer}{'' if checksum else '-plain'}.h5"
    if writer == "python":
        h5vec.save_vector(path, "v", table, checksum=checksum)
    else:
        src = tmp_path / "in.arrow"
        with pa.ipc.new_file(src, table.schema) as w:
            w.write_table(table)
        proc = subprocess.run([str(H5VEC), "convert"] + (["--checksum"] if checksum else [])
                              + [str(src), f"{path}:v"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    return path


WRITERS = ["python", pytest.param("rust", marks=needs_bin)]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_checksum_save_writes_serialized_schema_as_one_fletcher32_chunk(tmp_path, writer):
    path = _save(tmp_path, writer)
    with h5py.File(path, "r") as f:
        ds = f[SCHEMA_DS]
        assert ds.dtype == np.uint8 and ds.ndim == 1
        assert ds.chunks == ds.shape and ds.maxshape == ds.shape
        assert ds.fletcher32 and ds.compression is None and not ds.shuffle
        dcpl = ds.id.get_create_plist()
        assert [dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters())] == [h5py.h5z.FILTER_FLETCHER32]
        assert ds.id.get_num_chunks() == 1
        tree = json.loads(bytes(ds[()]))
        assert tree["field_names"] == ["id", "name", "ts", "vec", "rec"]
    assert h5vec.open_vector(path, "v").to_arrow().to_pylist() == META_TABLE.to_pylist()
    # Without a checksum it stays a contiguous dataset.
    plain = _save(tmp_path, writer, checksum=False)
    with h5py.File(plain, "r") as f:
        ds = f[SCHEMA_DS]
        assert ds.chunks is None and not ds.fletcher32
        assert ds.id.get_create_plist().get_layout() == h5py.h5d.CONTIGUOUS
    assert h5vec.open_vector(plain, "v").to_arrow().to_pylist() == META_TABLE.to_pylist()


def _union_table(n):
    types = [i % 3 for i in range(n)]
    offsets = [types[:i].count(t) for i, t in enumerate(types)]
    idle = pa.array([{}] * types.count(0), pa.struct([]))
    tick = pa.array([{"1": k / 4} for k in range(types.count(1))],
                    pa.struct([pa.field("1", pa.float64(), nullable=False)]))
    fill = pa.array([{"qty": k, "price": k * 1.5} for k in range(types.count(2))],
                    pa.struct([pa.field("qty", pa.int32(), nullable=False),
                               pa.field("price", pa.float64(), nullable=False)]))
    ev = pa.UnionArray.from_dense(pa.array(types, pa.int8()), pa.array(offsets, pa.int32()),
                                  [idle, tick, fill], ["Idle", "Tick", "Fill"])
    return META_TABLE.slice(0, n).append_column("ev", ev)


@needs_bin
def test_rust_loads_a_python_checksummed_schema_exactly(tmp_path):
    # Every optional member of Rust's Schema in Python's JSON: encoded_type,
    # dimensions, field_names, variant_names/variant_values (a union),
    # time_unit, time_zone, children.
    table = _union_table(N_META)
    path = _save(tmp_path, "python", table)
    with h5py.File(path, "r") as f:
        text = bytes(f[SCHEMA_DS][()]).decode()
    for key in ("encoded_type", "dimensions", "field_names", "variant_names", "variant_values", "time_unit",
                "time_zone", "children"):
        assert f'"{key}":' in text, key
    assert h5vec.open_vector(path, "v").to_arrow().to_pylist() == table.to_pylist()
    proc = _cat(path)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]

    def event(i):
        k = i // 3  # the row's index in its variant's column
        return [{"variant": "Idle"}, {"variant": "Tick", "1": k / 4},
                {"variant": "Fill", "qty": k, "price": k * 1.5}][i % 3]

    assert rows == [{"id": i, "name": f"row {i}", "ts": f"1970-01-01T00:00:{i:02d}Z", "vec": [float(i), 2.5],
                     "rec": {"p": i * 3, "q": f"q{i}"}, "ev": event(i)} for i in range(N_META)]


def _overwrite(path, offset, old, new):
    data = bytearray(Path(path).read_bytes())
    assert bytes(data[offset:offset + len(old)]) == old
    data[offset:offset + len(new)] = new
    Path(path).write_bytes(bytes(data))


def _heap_string_offset(path, dataset, row):
    """File offset of the bytes of row `row` of the 1-D variable-length string
    dataset `dataset` (contiguous): its global heap ID read from the raw data,
    the object found in that global heap collection (HDF5 file format,
    "Global Heap"; 8-byte addresses)."""
    import struct
    with h5py.File(path, "r") as f:
        ds = f[dataset]
        assert ds.id.get_create_plist().get_layout() == h5py.h5d.CONTIGUOUS
        start = ds.id.get_offset()
    data = Path(path).read_bytes()
    length, addr, index = struct.unpack_from("<IQI", data, start + 16 * row)
    assert data[addr:addr + 4] == b"GCOL"
    end = addr + struct.unpack_from("<Q", data, addr + 8)[0]
    p = addr + 16
    while p + 16 <= end:
        obj, _refs, _res, size = struct.unpack_from("<HHIQ", data, p)
        if obj == index:
            assert size == length
            return p + 16
        assert obj != 0, "object not in its collection"
        p += 16 + (size + 7) // 8 * 8
    raise AssertionError("object not in its collection")


def _expect_both_refuse(path, python_match, rust_words):
    with pytest.raises(h5vec.FormatError, match=python_match) as e:
        h5vec.open_vector(path, "v").to_arrow()
    if H5VEC is not None:
        proc = _cat(path)
        assert proc.returncode != 0
        for w in rust_words:
            assert w in proc.stderr, proc.stderr
    return e.value


@pytest.mark.parametrize("writer", WRITERS)
def test_a_changed_logical_type_in_the_tree_is_an_error(tmp_path, writer):
    path = _save(tmp_path, writer)
    name = "v/metadata/schema/children/1/children/1/logical_type"
    with h5py.File(path, "r") as f:
        ds = f[name]
        assert ds[()] == b"u64"
        off = ds.id.get_offset()
    _overwrite(path, off, b"u64", b"u65")
    err = _expect_both_refuse(path, "differs from the checksummed metadata/serialized_schema",
                              ["the schema tree differs from the checksummed metadata/serialized_schema",
                               '`logical_type` is "u65" in the tree, "u64" in the JSON'])
    assert err.path == "$.id[child 1]"
    assert err.location == "/v/metadata/schema/children/1/children/1"
    assert err.message.endswith("`logical_type` is 'u65' in the tree, 'u64' in the JSON")


@pytest.mark.parametrize("writer", WRITERS)
def test_a_changed_field_name_in_the_global_heap_is_an_error(tmp_path, writer):
    path = _save(tmp_path, writer)
    for dataset, row, old, new, at, fields in [
        ("v/metadata/schema/field_names", 2, b"ts", b"tz", "$", "['id', 'name', 'tz', 'vec', 'rec']"),
        ("v/metadata/schema/children/5/children/1/field_names", 1, b"q", b"r", "$.rec[child 1]", "['p', 'r']"),
    ]:
        copy = tmp_path / f"damaged-{row}.h5"
        copy.write_bytes(path.read_bytes())
        _overwrite(copy, _heap_string_offset(copy, dataset, row), old, new)
        with h5py.File(copy, "r") as f:
            assert f[dataset][row] == new  # the change is what HDF5 reads
        err = _expect_both_refuse(copy, "differs from the checksummed",
                                  ["differs from the checksummed", "`field_names` is Some(["])
        assert err.path == at
        assert err.message.startswith("the schema tree differs from the checksummed metadata/serialized_schema: "
                                      f"`field_names` is {fields} in the tree, ")
    # The undamaged file still loads.
    assert h5vec.open_vector(path, "v").to_arrow().to_pylist() == META_TABLE.to_pylist()


@pytest.mark.parametrize("writer", WRITERS)
def test_a_flipped_byte_in_serialized_schema_is_a_checksum_error(tmp_path, writer):
    path = _save(tmp_path, writer)
    with h5py.File(path, "r") as f:
        size = f[SCHEMA_DS].id.get_chunk_info(0).size
    flip(path, SCHEMA_DS, 0, size // 2)
    err = _expect_both_refuse(path, "checksum mismatch", ["checksum mismatch", "metadata/serialized_schema"])
    assert err.location == "/v/metadata/serialized_schema"
    assert err.path == "$"


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("damage", ["skipped", "short"])
def test_a_serialized_schema_chunk_without_its_checksum_is_an_error(tmp_path, writer, damage):
    path = _save(tmp_path, writer)
    with h5py.File(path, "r+") as f:
        ds = f[SCHEMA_DS]
        text = bytes(ds[()])
        if damage == "skipped":
            # The JSON alone, the mask saying the Fletcher32 filter (filter 0) was skipped:
            # HDF5 would read it unverified.
            ds.id.write_direct_chunk((0,), text, filter_mask=1)
        else:
            ds.id.write_direct_chunk((0,), text[:2], filter_mask=0)
    words = ("stored without its Fletcher32 checksum (filter mask 0x1)" if damage == "skipped"
             else "stored in 2 bytes, fewer than its 4-byte Fletcher32 checksum")
    err = _expect_both_refuse(path, words.replace("(", r"\(").replace(")", r"\)"), [words])
    assert err.location == "/v/metadata/serialized_schema"


PLACEHOLDER_TABLE = pa.table({"s": pa.array(["a", None, "NA", None, "", "b"], pa.string())})


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("checksum", [True, False])
def test_the_vls_placeholder_is_fixed_length_with_checksums(tmp_path, writer, checksum):
    """SPEC 4.1: with a checksum the placeholder attribute is a fixed-length
    NUL-terminated ASCII string (in the object header, which HDF5 checksums),
    else a variable-length one; the package and Rust read both exactly."""
    path = tmp_path / f"{writer}-{checksum}.h5"
    if writer == "python":
        h5vec.save_vector(path, "v", PLACEHOLDER_TABLE, checksum=checksum, vls_strings=True)
    else:
        src = tmp_path / "in.arrow"
        with pa.ipc.new_file(src, PLACEHOLDER_TABLE.schema) as w:
            w.write_table(PLACEHOLDER_TABLE)
        proc = subprocess.run([str(H5VEC), "convert", "--vls-strings"] + (["--checksum"] if checksum else [])
                              + [str(src), f"{path}:v"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    with h5py.File(path, "r") as f:
        ptrs = f["v/data/s/pointers"]
        assert ptrs.fletcher32 == checksum
        aid = ptrs.attrs.get_id("missing-value-placeholder")
        t = aid.get_type()
        assert t.get_class() == h5py.h5t.STRING
        assert t.is_variable_str() != checksum
        # "NA" is a real value, so the placeholder is "NA_".
        if checksum:
            assert (t.get_size(), t.get_strpad(), t.get_cset()) == (4, h5py.h5t.STR_NULLPAD, h5py.h5t.CSET_ASCII)
            assert ptrs.attrs["missing-value-placeholder"] == b"NA_"
        else:
            assert ptrs.attrs["missing-value-placeholder"] == "NA_"
    want = ["a", None, "NA", None, "", "b"]
    assert h5vec.open_vector(path, "v").to_arrow().column("s").to_pylist() == want
    if H5VEC is not None:
        proc = _cat(path)
        assert proc.returncode == 0, proc.stderr
        assert [json.loads(line)["s"] for line in proc.stdout.splitlines()] == want
