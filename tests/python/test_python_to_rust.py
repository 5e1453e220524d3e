"""Python writes (the way HDF5.jl + HDF5Vectors do), Rust reads.

Each test writes a file with plain h5py (see hdf5vectors.py), then runs
`xlang read FILE NAME KIND`, which loads it with h5vec::load_vector into
the Rust type named by KIND and prints the values as JSON.
"""

import json

import h5py
import numpy as np
import pytest

import expected as X
import hdf5vectors as H

# ---------------------------------------------------------------------------
# Measurement, as Julia's HDF5Vectors stores the Measurement example


def jl_measurement(i):
    """Different values from the Rust side's, so nothing is shared by accident."""
    return {
        "timestamp": {"weeks": 2000 + 3 * i - 50, "microseconds": i * 123_456_789_012 - 2**62},
        "temperature": -10.5 + i / 8,
        "position": [1e300 if i == 0 else i * 0.1, -float(i), float(i * i)],
    }


def measurement_schema():
    ts = H.record("Main.GPSTimeStamp", [("weeks", H.scalar("Int32")), ("microseconds", H.scalar("Int64"))])
    return H.record("Main.Measurement", [
        ("timestamp", ts),
        ("temperature", H.scalar("Float64")),
        ("position", H.dense("Float64", [3], "StaticArraysCore.SVector{3, Float64}")),
    ])


def measurement_columns(n, extra=None):
    """{data path: numpy array}; extra[path] = additional junk rows beyond n."""
    extra = extra or {}
    ms = [jl_measurement(i) for i in range(n + max(extra.values(), default=0))]
    cols = {
        "timestamp/weeks/values": np.array([m["timestamp"]["weeks"] for m in ms], dtype="<i4"),
        "timestamp/microseconds/values": np.array([m["timestamp"]["microseconds"] for m in ms], dtype="<i8"),
        "temperature/values": np.array([m["temperature"] for m in ms], dtype="<f8"),
        "position/values": np.array([m["position"] for m in ms], dtype="<f8").reshape(-1, 3),
    }
    return {p: a[: n + extra.get(p, 0)] for p, a in cols.items()}


def write_measurements(path, n, extra=None, mutate=None, count=None):
    schema = measurement_schema()
    cols = measurement_columns(n, extra)
    if mutate:
        mutate(schema, cols)

    def fill(data):
        for i, (p, a) in enumerate(cols.items()):
            # Mix contiguous and chunked datasets: readers must not care.
            H.write_column(data, p, a, chunked=i % 2 == 0)

    with h5py.File(path, "w") as f:
        H.write_vector(f, "measurements", schema, n if count is None else count, fill)


def test_measurements(tmp_path, xlang_read):
    path = tmp_path / "jl_measurements.h5"
    write_measurements(path, 25)
    assert xlang_read(path, "measurements", "measurement").values() == [jl_measurement(i) for i in range(25)]


def test_columns_longer_than_count(tmp_path, xlang_read):
    """Readers trust metadata/count: extra rows past it are not values."""
    path = tmp_path / "jl_longer.h5"
    extra = {"timestamp/weeks/values": 5, "timestamp/microseconds/values": 1, "temperature/values": 3,
             "position/values": 7}
    write_measurements(path, 10, extra=extra)
    with h5py.File(path, "r") as f:
        assert f["measurements/data/position/values"].shape == (17, 3)
    assert xlang_read(path, "measurements", "measurement").values() == [jl_measurement(i) for i in range(10)]


def test_f64_column_longer_than_count(tmp_path, xlang_read):
    path = tmp_path / "jl_f64.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "x", H.scalar("Float64"), 20,
                       lambda d: H.write_column(d, "values", np.arange(30) * 0.75 - 3.0, dtype="<f8"))
    assert xlang_read(path, "x", "f64").values() == [i * 0.75 - 3.0 for i in range(20)]


def test_empty_vector(tmp_path, xlang_read):
    path = tmp_path / "jl_empty.h5"
    write_measurements(path, 0)
    assert xlang_read(path, "measurements", "measurement").values() == []


# ---------------------------------------------------------------------------
# Scalars


STRINGS = ["", "ascii", "héllo wörld", "日本語", "emoji 🎉", "line\nbreak\ttab", "x" * 1000, 'q"\\']


@pytest.mark.parametrize("chunked", [True, False])
def test_strings(tmp_path, xlang_read, chunked):
    path = tmp_path / "jl_strings.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "names", H.scalar("String"), len(STRINGS),
                       lambda d: H.write_column(d, "values", STRINGS, dtype="str", chunked=chunked))
        ds = f["names/data/values"]
        assert h5py.check_string_dtype(ds.dtype).encoding == "utf-8"
    assert xlang_read(path, "names", "string").values() == STRINGS


def test_strings_longer_than_count(tmp_path, xlang_read):
    path = tmp_path / "jl_strings_long.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "names", H.scalar("String"), 3,
                       lambda d: H.write_column(d, "values", STRINGS, dtype="str"))
    assert xlang_read(path, "names", "string").values() == STRINGS[:3]


def test_strings_h5py_high_level(tmp_path, xlang_read):
    """Strings written the plainest h5py way (list of str, string_dtype())."""
    path = tmp_path / "h5py_strings.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "names", H.scalar("String"), len(STRINGS),
                       lambda d: d.create_dataset("values", data=STRINGS, dtype=h5py.string_dtype()))
    assert xlang_read(path, "names", "string").values() == STRINGS


def test_bool_bitfield(tmp_path, xlang_read):
    path = tmp_path / "jl_bool.h5"
    want = [X.bool_value(n) for n in range(30)]
    with h5py.File(path, "w") as f:
        H.write_vector(f, "flags", H.scalar("Bool"), len(want),
                       lambda d: H.write_bitfield(d, "values", [int(b) for b in want]))
        assert H.is_bitfield8(f["flags/data/values"])
    assert xlang_read(path, "flags", "bool").values() == want


def test_char_code_points(tmp_path, xlang_read):
    path = tmp_path / "jl_char.h5"
    want = X.CHARS * 3
    with h5py.File(path, "w") as f:
        H.write_vector(f, "chars", H.scalar("Int32", "Char", H.CHAR), len(want),
                       lambda d: H.write_column(d, "values", [ord(c) for c in want], dtype="<i4"))
    assert xlang_read(path, "chars", "char").values() == want


def test_enum_base_integer(tmp_path, xlang_read):
    path = tmp_path / "jl_enum.h5"
    n = 11
    with h5py.File(path, "w") as f:
        H.write_vector(f, "levels", H.scalar("Int16", "Main.Level", H.ENUM), n,
                       lambda d: H.write_column(d, "values", [X.level_value(k)[1] for k in range(n)], dtype="<i2"))
    assert xlang_read(path, "levels", "level").values() == [X.level_value(k)[0] for k in range(n)]


def all_scalars_schema():
    children = [(name, H.scalar(X.INT_TYPES[name][3])) for name in X.INT_TYPES]
    children += [("float32", H.scalar("Float32")), ("float64", H.scalar("Float64")), ("flag", H.scalar("Bool")),
                 ("letter", H.scalar("Int32", "Char", H.CHAR)), ("text", H.scalar("String")),
                 ("level", H.scalar("Int16", "Main.Level", H.ENUM))]
    return H.record("Main.AllScalars", children)


def test_all_scalars_record(tmp_path, xlang_read):
    path = tmp_path / "jl_all.h5"
    n = X.N_SCALARS
    recs = [X.all_scalars(k) for k in range(n)]

    def fill(d):
        for name, (dtype, *_rest) in X.INT_TYPES.items():
            H.write_column(d, f"{name}/values", [r[name] for r in recs], dtype=dtype)
        H.write_column(d, "float32/values", [r["float32"] for r in recs], dtype="<f4")
        H.write_column(d, "float64/values", [r["float64"] for r in recs], dtype="<f8")
        H.write_bitfield(d.create_group("flag"), "values", [int(r["flag"]) for r in recs])
        H.write_column(d, "letter/values", [ord(r["letter"]) for r in recs], dtype="<i4")
        H.write_column(d, "text/values", [r["text"] for r in recs], dtype="str")
        H.write_column(d, "level/values", [r["level"][1] for r in recs], dtype="<i2")

    with h5py.File(path, "w") as f:
        H.write_vector(f, "all", all_scalars_schema(), n, fill)
    got = xlang_read(path, "all", "all").values()
    assert len(got) == n
    for k, (g, w) in enumerate(zip(got, recs)):
        assert np.float32(g.pop("float32")) == w.pop("float32"), k
        w["level"] = w["level"][0]
        assert g == w, k


# ---------------------------------------------------------------------------
# Dense


def test_dense_vec3(tmp_path, xlang_read):
    path = tmp_path / "jl_vec3.h5"
    arr = np.stack([X.vec3(n) for n in range(15)])
    with h5py.File(path, "w") as f:
        H.write_vector(f, "v", H.dense("Float32", [3], "StaticArraysCore.SVector{3, Float32}"), 15,
                       lambda d: H.write_column(d, "values", arr))
    got = np.array(xlang_read(path, "v", "vec3").values(), dtype=np.float32)
    np.testing.assert_array_equal(got, arr)


def test_dense_matrix(tmp_path, xlang_read):
    """Julia 2x3 matrices: HDF5.jl (2, 3, Z), h5py (Z, 3, 2), dimensions [2, 3]."""
    path = tmp_path / "jl_mat.h5"
    arr = np.stack([X.mat(n) for n in range(6)])
    assert arr.shape == (6, 3, 2)
    with h5py.File(path, "w") as f:
        H.write_vector(f, "m", H.dense("Int32", [2, 3], "StaticArraysCore.SMatrix{2, 3, Int32, 6}"), 6,
                       lambda d: H.write_column(d, "values", arr, chunked=False))
    assert xlang_read(path, "m", "mat").values() == arr.tolist()


# ---------------------------------------------------------------------------
# Records: tuples, constants, JSON


def test_tuple(tmp_path, xlang_read):
    path = tmp_path / "jl_tuple.h5"
    n = 12
    vals = [X.tuple_value(k) for k in range(n)]
    schema = H.record("Tuple{Int32, Float64, String}",
                      [("1", H.scalar("Int32")), ("2", H.scalar("Float64")), ("3", H.scalar("String"))], H.TUPLE)

    def fill(d):
        H.write_column(d, "1/values", [v[0] for v in vals], dtype="<i4")
        H.write_column(d, "2/values", [v[1] for v in vals], dtype="<f8")
        H.write_column(d, "3/values", [v[2] for v in vals], dtype="str")

    with h5py.File(path, "w") as f:
        H.write_vector(f, "t", schema, n, fill)
    assert xlang_read(path, "t", "tuple").values() == [list(v) for v in vals]


def test_tuple_struct(tmp_path, xlang_read):
    path = tmp_path / "pairs.h5"
    n = 8
    schema = H.record("Main.Pair", [("1", H.scalar("Int32")), ("2", H.scalar("Float64"))])

    def fill(d):
        H.write_column(d, "1/values", [X.pair(k)[0] for k in range(n)], dtype="<i4")
        H.write_column(d, "2/values", [X.pair(k)[1] for k in range(n)], dtype="<f8")

    with h5py.File(path, "w") as f:
        H.write_vector(f, "p", schema, n, fill)
    assert xlang_read(path, "p", "pair").values() == [list(X.pair(k)) for k in range(n)]


def test_constant(tmp_path, xlang_read):
    path = tmp_path / "jl_const.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "markers", H.constant("Main.Marker"), 9, lambda d: None)
        assert f["markers/metadata/schema/codec"][()] == b"HDF5Vectors.ConstantCodec"
        assert bool(H.read_bitfield(f["markers/metadata/schema_was_inferred"])[()])
    assert xlang_read(path, "markers", "marker").values() == [None] * 9


def test_constant_field(tmp_path, xlang_read):
    path = tmp_path / "jl_tagged.h5"
    schema = H.record("Main.Tagged", [("id", H.scalar("Int32")), ("marker", H.constant("Main.Marker"))])

    def fill(d):
        H.write_column(d, "id/values", [k * 7 for k in range(4)], dtype="<i4")
        d.create_group("marker")

    with h5py.File(path, "w") as f:
        H.write_vector(f, "tagged", schema, 4, fill)
    assert xlang_read(path, "tagged", "tagged").values() == [{"id": k * 7, "marker": None} for k in range(4)]


def test_constant_from_explicit_schema(tmp_path, xlang_read):
    """HDF5Vectors.jl's metadata for a vector created from a schema, not a type:
    schema_was_inferred = false and no inference options."""
    path = tmp_path / "jl_const_explicit.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "markers", H.constant("Main.Marker"), 3, lambda d: None, inferred=False)
        assert "portable" not in f["markers/metadata"]
    assert xlang_read(path, "markers", "marker").values() == [None] * 3


def test_constant_with_serialized_value(tmp_path, xlang_read):
    """Earlier HDF5Vectors versions wrote the Julia-serialized value beside the node."""
    path = tmp_path / "jl_const_value.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "markers", H.constant("Main.Marker", H.FAKE_JULIA_SERIALIZATION), 5, lambda d: None)
        assert f["markers/metadata/schema/serialized_value"].dtype == np.uint8
    assert xlang_read(path, "markers", "marker").values() == [None] * 5


def test_rejects_constant_with_identity_codec(tmp_path, xlang_read):
    """Only HDF5Vectors.jl's codec spelling is a constant (SPEC 3.4)."""
    path = tmp_path / "identity_const.h5"
    node = dict(H.constant("Main.Marker"), codec=H.IDENTITY)
    with h5py.File(path, "w") as f:
        H.write_vector(f, "markers", node, 2, lambda d: None)
    r = xlang_read(path, "markers", "marker")
    assert r.returncode != 0 and r.stdout == "" and "panicked" not in r.stderr
    assert "HDF5Vectors.ConstantCodec" in r.stderr and "HDF5Vectors.IdentityCodec" in r.stderr, r.stderr


def test_json_field(tmp_path, xlang_read):
    """JSONCodec: one JSON document per element (any JSON spelling, not only compact)."""
    path = tmp_path / "jl_json.h5"
    n = 5
    schema = H.record("Main.WithJson", [("id", H.scalar("Int64")),
                                        ("meta", H.scalar("String", "Main.Meta", H.JSON))])

    def fill(d):
        H.write_column(d, "id/values", [k - 2 for k in range(n)], dtype="<i8")
        H.write_column(d, "meta/values", [json.dumps(X.meta(k), indent=1) for k in range(n)], dtype="str")

    with h5py.File(path, "w") as f:
        H.write_vector(f, "j", schema, n, fill)
    assert xlang_read(path, "j", "with_json").values() == [{"id": k - 2, "meta": X.meta(k)} for k in range(n)]


def test_non_ascii_field_names(tmp_path, xlang_read):
    path = tmp_path / "accent.h5"
    schema = H.record("Main.Accent", [("température", H.scalar("Float32")), ("名前", H.scalar("String"))])

    def fill(d):
        H.write_column(d, "température/values", [0.5, -2.25], dtype="<f4")
        H.write_column(d, "名前/values", ["ünï", "コード"], dtype="str")

    with h5py.File(path, "w") as f:
        H.write_vector(f, "a", schema, 2, fill)
    assert xlang_read(path, "a", "accent").values() == [{"temperature": 0.5, "name": "ünï"},
                                                        {"temperature": -2.25, "name": "コード"}]


# ---------------------------------------------------------------------------
# Files h5vec must refuse, with an error naming where


def set_child(schema, names, key, value):
    node = schema
    for name in names:
        node = node["children"][node["field_names"].index(name)]
    node[key] = value


def _wrong_encoded_type(s, c):
    set_child(s, ["temperature"], "encoded_type", "Float32")


def _short_column(s, c):
    c["timestamp/weeks/values"] = c["timestamp/weeks/values"][:-1]


def _wrong_dtype(s, c):
    c["position/values"] = np.arange(c["position/values"].size, dtype="<i4").reshape(-1, 3)


def _wrong_dims(s, c):
    set_child(s, ["position"], "dimensions", [4])


def _swapped_field_names(s, c):
    """Names swapped, child schemas not: the node now says `timestamp` is the
    Float64 scalar while data/timestamp/ is a record. Records match fields by
    name (SPEC 12), so the error names that field."""
    s["field_names"] = ["temperature", "timestamp", "position"]


def _wrong_kind(s, c):
    set_child(s, ["timestamp", "microseconds"], "kind", "dense")


def _wrong_codec(s, c):
    set_child(s, ["timestamp"], "codec", H.TUPLE)


NEGATIVE = {
    "wrong_encoded_type": (_wrong_encoded_type, ["$.temperature", "Float32"]),
    "column_shorter_than_count": (_short_column, ["$.timestamp.weeks"]),
    "wrong_value_dtype": (_wrong_dtype, ["$.position"]),
    "wrong_dimensions": (_wrong_dims, ["$.position"]),
    "field_names_out_of_order": (_swapped_field_names,
                                 ["$.timestamp: expected schema kind `record`, found `scalar`"]),
    "wrong_kind": (_wrong_kind, ["$.timestamp.microseconds", "dense"]),
    "wrong_codec": (_wrong_codec, ["$.timestamp", "TupleCodec"]),
}


@pytest.mark.parametrize("case", list(NEGATIVE))
def test_rejects_mismatch_naming_field_path(tmp_path, xlang_read, case):
    mutate, needles = NEGATIVE[case]
    path = tmp_path / f"bad_{case}.h5"
    write_measurements(path, 10, mutate=mutate)
    r = xlang_read(path, "measurements", "measurement")
    assert r.returncode != 0, f"{case}: loaded anyway: {r.stdout[:200]}"
    assert r.stdout == ""
    assert "panicked" not in r.stderr
    for needle in needles:
        assert needle in r.stderr, f"{case}: {needle!r} not in {r.stderr!r}"


def test_fields_in_another_order_load_by_name(tmp_path, xlang_read):
    """Stored fields in another order than the struct's (names and child
    schemas moved together, nested too): loaded by name (SPEC 12)."""
    def reorder(s, c):
        s["field_names"] = ["position", "timestamp", "temperature"]
        s["children"] = [s["children"][2], s["children"][0], s["children"][1]]
        ts = s["children"][1]
        ts["field_names"].reverse()
        ts["children"].reverse()
    path = tmp_path / "jl_reordered.h5"
    write_measurements(path, 10, mutate=reorder)
    with h5py.File(path, "r") as f:
        assert H.read_schema(f["measurements/metadata/schema"])["field_names"] == \
            ["position", "timestamp", "temperature"]
    assert xlang_read(path, "measurements", "measurement").values() == [jl_measurement(i) for i in range(10)]


def _replace(name, make):
    def mutate(f):
        meta = f["measurements/metadata"]
        del meta[name]
        make(meta, name)
    return mutate


BAD_METADATA = {
    "format_version_2": (_replace("format_version", lambda m, n: H.write_int64(m, n, 2)), "format_version"),
    "format_name": (_replace("format_name", lambda m, n: H.write_fixed_str(m, n, "HDF5Vector")), "format_name"),
    "count_negative": (_replace("count", lambda m, n: H.write_int64(m, n, -1)), "count"),
    "count_int32": (_replace("count", lambda m, n: m.create_dataset(n, data=np.int32(3))), "count"),
    "count_not_scalar": (_replace("count", lambda m, n: m.create_dataset(n, data=np.array([3], "<i8"))), "count"),
    "count_missing": (_replace("count", lambda m, n: None), "count"),
    "count_too_large": (_replace("count", lambda m, n: H.write_int64(m, n, 4)), "$.timestamp.weeks"),
}


@pytest.mark.parametrize("case", list(BAD_METADATA))
def test_rejects_bad_metadata(tmp_path, xlang_read, case):
    mutate, needle = BAD_METADATA[case]
    path = tmp_path / f"bad_meta_{case}.h5"
    write_measurements(path, 3)
    with h5py.File(path, "a") as f:
        mutate(f)
    r = xlang_read(path, "measurements", "measurement")
    assert r.returncode != 0, f"{case}: loaded anyway: {r.stdout[:200]}"
    assert needle in r.stderr and "panicked" not in r.stderr, r.stderr


def test_rejects_invalid_code_point(tmp_path, xlang_read):
    path = tmp_path / "bad_char.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "chars", H.scalar("Int32", "Char", H.CHAR), 3,
                       lambda d: H.write_column(d, "values", [65, 0xD800, 66], dtype="<i4"))
    r = xlang_read(path, "chars", "char")
    assert r.returncode != 0 and "$[1]" in r.stderr and "panicked" not in r.stderr


def test_rejects_unexpected_data_member(tmp_path, xlang_read):
    """The data group must hold exactly the fields of the record."""
    path = tmp_path / "bad_member.h5"
    write_measurements(path, 4, mutate=lambda s, c: c.update({"humidity/values": np.zeros(4)}))
    r = xlang_read(path, "measurements", "measurement")
    assert r.returncode != 0 and "$" in r.stderr and "humidity" in r.stderr


# ---------------------------------------------------------------------------
# Tolerance: what a Python user writing "by hand" is likely to produce


def test_plain_h5py_metadata_strings(tmp_path, xlang_read):
    """Metadata strings written as h5py writes a str (variable-length UTF-8)
    instead of HDF5.jl's fixed-length strings are read the same."""
    path = tmp_path / "plain_meta.h5"
    orig = H.write_fixed_str
    H.write_fixed_str = lambda g, name, value: g.create_dataset(name, data=value)
    try:
        with h5py.File(path, "w") as f:
            H.write_vector(f, "x", H.scalar("Float64"), 3,
                           lambda d: H.write_column(d, "values", [1.5, -2.0, 0.25], dtype="<f8"))
            assert h5py.check_string_dtype(f["x/metadata/format_name"].dtype).length is None
    finally:
        H.write_fixed_str = orig
    assert xlang_read(path, "x", "f64").values() == [1.5, -2.0, 0.25]


@pytest.mark.parametrize("dtype", ["bool", "i1", "u1"])
def test_bool_as_numpy_bool_or_byte(tmp_path, xlang_read, dtype):
    """h5py stores numpy bool as an HDF5 enum {FALSE=0, TRUE=1} over int8; others
    store Bool as a plain byte. h5vec documents that it reads both (raw.rs, Bits8)."""
    path = tmp_path / f"np_bool_{dtype}.h5"
    want = [True, False, False, True, True]
    with h5py.File(path, "w") as f:
        H.write_vector(f, "flags", H.scalar("Bool"), len(want),
                       lambda d: d.create_dataset("values", data=np.array(want).astype(dtype)))
    assert xlang_read(path, "flags", "bool").values() == want


def test_big_endian_values(tmp_path, xlang_read):
    """Values are converted from the file's byte order."""
    path = tmp_path / "be.h5"
    with h5py.File(path, "w") as f:
        H.write_vector(f, "x", H.scalar("Float64"), 3,
                       lambda d: H.write_column(d, "values", [1.5, -2.0, 1e-300], dtype=">f8"))
        H.write_vector(f, "i", H.scalar("Int64"), 2,
                       lambda d: H.write_column(d, "values", [-(2**63), 2**62 + 1], dtype=">i8"))
    assert xlang_read(path, "x", "f64").values() == [1.5, -2.0, 1e-300]
    assert xlang_read(path, "i", "i64").values() == [-(2**63), 2**62 + 1]
