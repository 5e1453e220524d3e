"""Malformed and hostile files: the package raises h5vec.FormatError (a
ValueError) naming the field path and the HDF5 location, never crashes and
never returns wrong data (SPEC section 7)."""

import h5py
import numpy as np
import pyarrow as pa
import pytest

import h5vec


def nn(name, typ):
    return pa.field(name, typ, nullable=False)


SCHEMA = pa.schema([
    nn("id", pa.int64()), nn("name", pa.string()), nn("tags", pa.list_(nn("item", pa.string()))),
    pa.field("maybe", pa.list_(nn("item", pa.int32())), nullable=True), nn("letter", pa.string()),
    nn("blob", pa.binary()), pa.field("opt", pa.float64(), nullable=True),
])


def make(path):
    table = pa.table({
        "id": [1, 2, 3, 4], "name": ["a", "bb", "ccc", "dd"], "tags": [["x"], [], ["y", "zz"], ["w"]],
        "maybe": [[1], None, [2, 3], []], "letter": ["a", "é", "z", "q"], "blob": [b"\x01", b"", b"\x02\x03", b"\x04"],
        "opt": [1.0, None, 3.0, 4.0]}, schema=SCHEMA.set(4, pa.field("letter", pa.string(), False,
                                                                      {"h5vec.codec": "HDF5Vectors.CharCodec"})))
    h5vec.save_vector(path, "v", table, vls_strings=["name"])


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.h5"
    make(path)
    return path


def expect(path, match, fpath=None, location=None, validate=False):
    with pytest.raises(h5vec.FormatError, match=match) as e:
        v = h5vec.open_vector(path, "v")
        if validate:
            v.validate()
        else:
            v.to_arrow()
    assert isinstance(e.value, ValueError)
    if fpath is not None:
        assert e.value.path == fpath
    if location is not None:
        assert e.value.location == location
    return e.value


def mutate(path, fn):
    with h5py.File(path, "r+") as f:
        fn(f)


def test_good_file_reads(good):
    v = h5vec.open_vector(good, "v")
    assert v.validate() == 4
    assert v.to_arrow().column("maybe").to_pylist() == [[1], None, [2, 3], []]


def replace(f, path, data, **kw):
    del f[path]
    f.create_dataset(path, data=data, **kw)


@pytest.mark.parametrize("case", ["negative", "float", "vector", "missing"])
def test_bad_count(good, case):
    def fn(f):
        if case == "negative":
            f["v/metadata/count"][()] = np.int64(-1)
        elif case == "float":
            replace(f, "v/metadata/count", np.float64(4))
        elif case == "vector":
            replace(f, "v/metadata/count", np.array([4], np.int64))
        else:
            del f["v/metadata/count"]
    mutate(good, fn)
    expect(good, "count", "$")


def test_count_past_the_rows(good):
    mutate(good, lambda f: f["v/metadata/count"].write_direct(np.array(5, np.int64)))
    expect(good, "at least 5 rows", "$.id", "/v/data/id/values")
    # Refused when the vector is opened (its length is the count), not only
    # when values are read: as Rust's vector_len and inspect.
    with pytest.raises(h5vec.FormatError, match="at least 5 rows") as e:
        h5vec.open_vector(good, "v")
    assert (e.value.path, e.value.location) == ("$.id", "/v/data/id/values")


def test_format_name_and_version(good, tmp_path):
    mutate(good, lambda f: (f["v/metadata/format_version"].write_direct(np.array(2, np.int64))))
    expect(good, "format_version 1", "$")
    other = tmp_path / "o.h5"
    make(other)
    def fn(f):
        del f["v/metadata/format_name"]
        f["v/metadata/format_name"] = np.bytes_("Other")
    mutate(other, fn)
    expect(other, "HDF5Vectors", "$")


def test_extra_member_and_missing_member(good, tmp_path):
    mutate(good, lambda f: f.create_dataset("v/data/id/extra", data=[1]))
    expect(good, "members", "$.id", "/v/data/id")
    other = tmp_path / "o.h5"
    make(other)
    mutate(other, lambda f: f.__delitem__("v/data/tags/OFFSETS"))
    expect(other, "members", "$.tags")


def test_wrong_type_and_rank(good, tmp_path):
    mutate(good, lambda f: replace(f, "v/data/id/values", np.arange(4.0)))
    expect(good, "Int64 values", "$.id", "/v/data/id/values")
    other = tmp_path / "o.h5"
    make(other)
    mutate(other, lambda f: replace(f, "v/data/id/values", np.zeros((4, 2), np.int64)))
    expect(other, "shape", "$.id", "/v/data/id/values")


def test_offsets_rules(good, tmp_path):
    def dec(f):
        o = f["v/data/tags/OFFSETS"]
        o[2] = 5
    mutate(good, dec)
    e = expect(good, "past the end|must not decrease", "$.tags")
    assert e.location.startswith("/v/data/tags/OFFSETS[")
    other = tmp_path / "o.h5"
    make(other)
    mutate(other, lambda f: f["v/data/tags/OFFSETS"].__setitem__(0, 1))
    expect(other, "OFFSETS\\[0\\] must be 0", "$.tags", "/v/data/tags/OFFSETS[0]")
    third = tmp_path / "t.h5"
    make(third)
    mutate(third, lambda f: f["v/data/tags/OFFSETS"].__setitem__(4, 100))
    expect(third, "at least 101 rows", "$.tags[]", "/v/data/tags/VALUES/OFFSETS")


def test_offsets_decreasing_inside(good):
    def fn(f):
        o = f["v/data/tags/VALUES/OFFSETS"]
        o[2] = 0
    mutate(good, fn)
    expect(good, "must not decrease", "$.tags[]", "/v/data/tags/VALUES/OFFSETS[2]")


def test_mask_rules(good, tmp_path):
    def two(f):
        ds = f["v/data/opt/MASK"]
        raw = np.array([1, 2, 1, 1], np.int8)
        ds.id.write(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=ds.id.get_type())
    mutate(good, two)
    expect(good, "neither FALSE", "$.opt", "/v/data/opt/MASK[1]")
    other = tmp_path / "o.h5"
    make(other)
    mutate(other, lambda f: replace(f, "v/data/opt/MASK", np.array([1, 0, 1, 1], np.int8), maxshape=(None,)))
    expect(other, "h5col bool", "$.opt", "/v/data/opt/MASK")
    third = tmp_path / "t.h5"
    make(third)
    mutate(third, lambda f: f["v/data/maybe/MASK"].__setitem__(0, False))
    expect(third, "null row .* empty span", "$.maybe")


def test_vls_pointers(good, tmp_path):
    def past(f):
        p = f["v/data/name/pointers"]
        row = p[2]
        row["length"] = 1000
        p[2] = row
    mutate(good, past)
    expect(good, "past the end of the heap", "$.name", "/v/data/name/pointers[2]")
    other = tmp_path / "o.h5"
    make(other)
    def overflow(f):
        p = f["v/data/name/pointers"]
        row = p[1]
        row["offset"] = 2**64 - 1
        row["length"] = 2
        p[1] = row
    mutate(other, overflow)
    expect(other, "past the end of the heap", "$.name", "/v/data/name/pointers[1]")


@pytest.mark.parametrize("where", ["v/data/name/heap", "v/data/tags/VALUES/CHARS"])
def test_invalid_utf8(good, where):
    mutate(good, lambda f: f[where].__setitem__(1, 0xFF))
    e = expect(good, "UTF-8")
    assert e.path in ("$.name", "$.tags[]")


def test_invalid_utf8_in_vlen_strings(tmp_path):
    path = tmp_path / "s.h5"
    h5vec.save_vector(path, "v", pa.table({"s": ["ok", "fine"]}, schema=pa.schema([nn("s", pa.string())])))
    def fn(f):
        del f["v/data/s/values"]
        f.create_dataset("v/data/s/values", data=np.array([b"ok", b"\xff\xfe"], dtype=object),
                         dtype=h5py.string_dtype("ascii"))
    mutate(path, fn)
    expect(path, "UTF-8", "$.s", "/v/data/s/values[1]")


def test_blob_stops(good, tmp_path):
    mutate(good, lambda f: f["v/data/blob/stops"].__setitem__(2, 0))
    expect(good, "must not decrease", "$.blob")
    other = tmp_path / "o.h5"
    make(other)
    mutate(other, lambda f: f["v/data/blob/stops"].__setitem__(3, 99))
    expect(other, "within", "$.blob", "/v/data/blob/stops")


@pytest.mark.parametrize("code", [0xD800, 0x110000, -1])
def test_char_code_points(good, code):
    mutate(good, lambda f: f["v/data/letter/values"].__setitem__(2, code))
    expect(good, "Unicode scalar", "$.letter", "/v/data/letter/values[2]")


@pytest.mark.parametrize("case", ["kind", "codec", "children", "field_names", "encoded"])
def test_bad_schema(good, case):
    def set_str(f, p, s):
        del f[p]
        f[p] = np.bytes_(s)
    def fn(f):
        s = "v/metadata/schema"
        if case == "kind":
            set_str(f, f"{s}/children/1/kind", "mystery")
        elif case == "codec":
            set_str(f, f"{s}/children/1/codec", "HDF5Vectors.CharCodec")
        elif case == "children":
            del f[f"{s}/children/7"]
        elif case == "field_names":
            del f[f"{s}/field_names"]
            f.create_dataset(f"{s}/field_names", data=["id"] * 7, dtype=h5py.string_dtype())
        else:
            set_str(f, f"{s}/children/1/encoded_type", "Int128")
    mutate(good, fn)
    e = expect(good, ".")
    assert e.path.startswith("$")


def test_schema_cycle_is_bounded(good):
    def fn(f):
        node = f["v/metadata/schema/children/3"]
        del node["children/1"]
        node["children/1"] = node  # a hard link back to itself
    mutate(good, fn)
    expect(good, "deeper than")


def test_links_and_storage_outside_the_file(good, tmp_path):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["values"] = np.arange(4, dtype=np.int64)

    def soft(f):
        f.move("v/data/id/values", "stash")
        f["v/data/id/values"] = h5py.SoftLink("/stash")
    mutate(good, soft)
    expect(good, "SoftLink", "$.id", "/v/data/id/values")

    cases = {
        "external link": lambda f: (f.__delitem__("v/data/id/values"),
                                    f.__setitem__("v/data/id/values", h5py.ExternalLink(str(other), "/values"))),
        "external storage": lambda f: (f.__delitem__("v/data/id/values"),
                                       f.create_dataset("v/data/id/values", (4,), "<i8",
                                                        external=[(str(tmp_path / "raw.bin"), 0, 32)])),
    }
    for label, fn in cases.items():
        path = tmp_path / f"{label}.h5"
        make(path)
        mutate(path, fn)
        expect(path, "ExternalLink|external storage", "$.id", "/v/data/id/values")

    path = tmp_path / "virtual.h5"
    make(path)
    def virtual(f):
        del f["v/data/id/values"]
        layout = h5py.VirtualLayout(shape=(4,), dtype="<i8")
        layout[:] = h5py.VirtualSource(str(other), "values", shape=(4,))
        f.create_virtual_dataset("v/data/id/values", layout)
    mutate(path, virtual)
    expect(path, "virtual", "$.id", "/v/data/id/values")

    path = tmp_path / "vector_link.h5"
    with h5py.File(path, "w") as f:
        f["v"] = h5py.ExternalLink(str(good), "/v")
    with pytest.raises(h5vec.FormatError, match="external link"):
        h5vec.open_vector(path, "v")


def test_validate_checks_every_row(tmp_path):
    path = tmp_path / "big.h5"
    lists = [[i] for i in range(5000)]
    h5vec.save_vector(path, "v", pa.table({"l": lists}, schema=pa.schema([nn("l", pa.list_(nn("i", pa.int64())))])),
                      chunk_length=256)
    mutate(path, lambda f: f["v/data/l/OFFSETS"].__setitem__(4000, 3000))
    v = h5vec.open_vector(path, "v")
    assert v.read(rows=slice(0, 100))["l"][99].tolist() == [99]  # rows before the damage read fine
    with pytest.raises(h5vec.FormatError, match="must not decrease") as e:
        v.validate(batch_rows=1000)
    assert e.value.location == "/v/data/l/OFFSETS[4000]"


def test_rows_past_count_are_not_values(good):
    def fn(f):
        for p in ("v/data/id/values",):
            ds = f[p]
            ds.resize((6,))
            ds[4:] = [99, 98]
    mutate(good, fn)
    assert h5vec.open_vector(good, "v").read()["id"].tolist() == [1, 2, 3, 4]
