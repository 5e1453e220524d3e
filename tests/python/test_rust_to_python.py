"""Rust writes (examples/xlang.rs `write`), plain h5py + numpy read.

Checks the promises of the HDF5Vectors layout (SPEC.md) and of the layout
comments in h5vec/src: paths, shapes, dtypes, metadata, schema trees, and
the values themselves, reconstructed field by field from the paths.
"""

import json

import h5py
import numpy as np
import pytest

import expected as X
import hdf5vectors as H

VECTORS = [
    ("measurements.h5", "measurements"),
    ("measurements.h5", "measurements_opts"),
    ("measurements.h5", "empty"),
    ("measurements.h5", "empty_f64"),
    *[("scalars.h5", name) for name in X.INT_TYPES],
    ("scalars.h5", "float32"),
    ("scalars.h5", "float64"),
    ("scalars.h5", "f64_special"),
    ("scalars.h5", "bool"),
    ("scalars.h5", "char"),
    ("scalars.h5", "string"),
    ("scalars.h5", "string_vls"),
    ("scalars.h5", "level"),
    ("scalars.h5", "all"),
    ("dense.h5", "vec3"),
    ("dense.h5", "mat"),
    ("dense.h5", "flags"),
    ("records.h5", "tuples"),
    ("records.h5", "nested"),
    ("records.h5", "pairs"),
    ("records.h5", "markers"),
    ("records.h5", "tagged"),
    ("records.h5", "annotated"),
    ("records.h5", "accent"),
    ("big.h5", "big"),
]
COUNTS = {"measurements": 100, "measurements_opts": 100, "empty": 0, "empty_f64": 0, "f64_special": 5,
          "vec3": 20, "mat": 10, "flags": 16, "tuples": 12, "nested": 9, "pairs": 8, "markers": 7,
          "tagged": 5, "annotated": 6, "accent": 4, "big": 200_000}
METADATA_MEMBERS = {"format_name", "format_version", "logical_type", "serialized_schema",
                    "schema_was_inferred", "count", "schema"}


def count_of(name):
    return COUNTS.get(name, X.N_SCALARS)


def schema_of(f, name):
    return H.read_schema(f[name]["metadata/schema"])


def value_datasets(group):
    out = []
    group.visititems(lambda n, o: out.append(o) if isinstance(o, h5py.Dataset) else None)
    return out


def strip_logical(node):
    """The schema tree without logical_type (Rust type names, descriptive only)."""
    node = {k: v for k, v in node.items() if k != "logical_type"}
    if "children" in node:
        node["children"] = [strip_logical(c) for c in node["children"]]
    return node


def S(encoded, codec=H.IDENTITY):
    return dict(kind="scalar", schema=H.SCALAR, codec=codec, encoded_type=encoded)


def D(encoded, dims, codec=H.IDENTITY):
    return dict(kind="dense", schema=H.DENSE, codec=codec, encoded_type=encoded, dimensions=dims)


def R(fields, codec=H.STRUCT):
    return dict(kind="record", schema=H.RECORD, codec=codec, field_names=[f for f, _ in fields],
                children=[c for _, c in fields])


def ENUM_NODE(encoded, variants):
    """A fieldless enum's node: its discriminants stored as `encoded`, with the
    labels (SPEC 2): variant_names in declaration order, variant_values the
    discriminants."""
    return dict(S(encoded, H.ENUM), variant_names=[n for n, _ in variants],
                variant_values=[v for _, v in variants])


CONST = dict(kind="constant", schema=H.CONSTANT, codec=H.CONSTANT_CODEC)
MEASUREMENT_SCHEMA = R([
    ("timestamp", R([("weeks", S("Int32")), ("microseconds", S("Int64"))])),
    ("temperature", S("Float64")),
    ("position", D("Float64", [3])),
])


# ---------------------------------------------------------------------------
# Every vector: the group, the metadata, the schema tree


@pytest.mark.parametrize("fname,name", VECTORS)
def test_vector_group_and_metadata(rust_files, fname, name):
    f = rust_files(fname)
    g = f[name]
    assert isinstance(g, h5py.Group)
    assert set(g) == {"data", "metadata"}, "a vector group has exactly data/ and metadata/"
    assert isinstance(g["data"], h5py.Group)
    meta = g["metadata"]
    # SPEC 14: the statistics group is optional (here: every vector with a
    # statistics leaf has it, the others not).
    assert set(meta) - {"SEARCH_INDEXES"} == METADATA_MEMBERS
    if "SEARCH_INDEXES" in meta:
        si = meta["SEARCH_INDEXES"]
        assert isinstance(si, h5py.Group) and len(si) > 0
        for ix in si.values():
            assert ix.attrs["KIND"] == b"CHUNK_MINMAX"
            assert ix.attrs["SOURCE_NROWS"] == int(meta["count"][()])
            assert ix.attrs["SOURCE_GENERATION"] == si.attrs["GENERATION"]
    for key in METADATA_MEMBERS - {"schema"}:
        assert isinstance(meta[key], h5py.Dataset), f"metadata/{key} is a dataset"
        assert len(meta[key].attrs) == 0, "metadata carries no attributes"
    assert len(g.attrs) == 0 and len(meta.attrs) == 0

    assert H.read_fixed_str(meta["format_name"]) == "HDF5Vectors"
    assert H.read_int64_scalar(meta["format_version"]) == 1
    assert H.read_int64_scalar(meta["count"]) == count_of(name)
    assert H.read_fixed_str(meta["logical_type"]) != ""

    inferred = meta["schema_was_inferred"]
    assert inferred.shape == () and H.is_bitfield8(inferred)
    # false: h5vec writes no Julia inference options (SPEC section 1)
    assert H.read_bitfield(inferred)[()] == 0

    ser = meta["serialized_schema"]
    assert ser.ndim == 1 and ser.dtype == np.uint8


@pytest.mark.parametrize("fname,name", VECTORS)
def test_serialized_schema_matches_schema_tree(rust_files, fname, name):
    """h5vec's serialized_schema is its schema tree as JSON; it must agree
    with the plain-HDF5 tree under metadata/schema."""
    meta = rust_files(fname)[name]["metadata"]
    tree = H.read_schema(meta["schema"])
    from_json = json.loads(bytes(meta["serialized_schema"][()]).decode("utf-8"))
    assert from_json == tree


@pytest.mark.parametrize("fname,name", VECTORS)
def test_schema_nodes_well_formed(rust_files, fname, name):
    def check(node, where):
        for key in ("kind", "schema", "codec", "logical_type"):
            assert key in node, f"{where}: missing {key}"
        kind = node["kind"]
        if kind in ("scalar", "dense"):
            assert "encoded_type" in node, f"{where}: scalar/dense nodes carry encoded_type"
        if kind == "dense":
            assert "dimensions" in node and all(d > 0 for d in node["dimensions"])
        else:
            assert "dimensions" not in node
        if kind == "record":
            assert len(node["field_names"]) == len(node["children"]) > 0
        else:
            assert "field_names" not in node
        if kind in ("scalar", "dense", "record", "blob", "constant"):
            assert node["schema"] == f"HDF5Vectors.{kind.capitalize()}Schema"
        if "variant_names" in node:
            # labels belong to enum nodes only, one distinct name per variant (SPEC 2)
            assert node["codec"] == H.ENUM, f"{where}: variant_names on a {node['codec']} node"
            assert len(set(node["variant_names"])) == len(node["variant_names"]) > 0, f"{where}: variant names"
        for fname_, child in zip(node.get("field_names", []), node.get("children", [])):
            check(child, f"{where}.{fname_}")

    check(schema_of(rust_files(fname), name), "$")


def walk_columns(data_group, node, where="$"):
    """Yields (path, group, schema node) for every leaf column, following the
    schema: records recurse into data/<field>/."""
    if node["kind"] == "record":
        assert set(data_group) == set(node["field_names"]), f"{where}: data members {set(data_group)}"
        for fname_, child in zip(node["field_names"], node["children"]):
            yield from walk_columns(data_group[fname_], child, f"{where}.{fname_}")
    else:
        yield where, data_group, node


@pytest.mark.parametrize("fname,name", VECTORS)
def test_columns_follow_schema_and_count(rust_files, fname, name):
    """Every nonconstant column holds `count` values; constant columns are
    empty groups; every value dataset is chunked and extendible on axis 0
    only."""
    f = rust_files(fname)
    count = count_of(name)
    for where, g, node in walk_columns(f[name]["data"], schema_of(f, name)):
        kind = node["kind"]
        if kind == "constant":
            assert len(g) == 0, f"{where}: a constant stores nothing"
            continue
        expect = {"scalar": {"values"}, "dense": {"values"}, "blob": {"bytes", "stops"},
                  "vls_string": {"heap", "pointers"}}[kind]
        assert set(g) == expect, f"{where}: {set(g)}"
        if kind in ("scalar", "dense"):
            v = g["values"]
            inner = tuple(reversed(node.get("dimensions", [])))
            assert v.shape == (count,) + inner, f"{where}: shape {v.shape}"
        elif kind == "blob":
            assert g["stops"].shape == (count,)
        else:
            assert g["pointers"].shape == (count,)
        for ds in g.values():
            assert ds.chunks is not None, f"{ds.name} is chunked"
            assert ds.maxshape[0] is None, f"{ds.name}: axis 0 unlimited"
            assert ds.maxshape[1:] == ds.shape[1:], f"{ds.name}: only axis 0 extendible"
            if name != "measurements_opts":
                assert ds.compression is None and not ds.shuffle


# ---------------------------------------------------------------------------
# The Measurement example


def test_measurement_paths_shapes_dtypes(rust_files):
    f = rust_files("measurements.h5")
    paths = {
        "measurements/data/timestamp/weeks/values": ((100,), "<i4"),
        "measurements/data/timestamp/microseconds/values": ((100,), "<i8"),
        "measurements/data/temperature/values": ((100,), "<f8"),
        "measurements/data/position/values": ((100, 3), "<f8"),
    }
    for path, (shape, dtype) in paths.items():
        ds = f[path]
        assert ds.shape == shape, path
        assert ds.dtype == np.dtype(dtype), path
    assert set(f["measurements/data"]) == {"timestamp", "temperature", "position"}
    assert set(f["measurements/data/timestamp"]) == {"weeks", "microseconds"}


def test_measurement_schema_tree(rust_files):
    tree = schema_of(rust_files("measurements.h5"), "measurements")
    assert strip_logical(tree) == MEASUREMENT_SCHEMA


def reconstruct_measurement(g, k):
    d = g["data"]
    return {
        "timestamp": {"weeks": int(d["timestamp/weeks/values"][k]),
                      "microseconds": int(d["timestamp/microseconds/values"][k])},
        "temperature": float(d["temperature/values"][k]),
        "position": [float(x) for x in d["position/values"][k]],
    }


@pytest.mark.parametrize("name", ["measurements", "measurements_opts"])
def test_measurement_values(rust_files, name):
    g = rust_files("measurements.h5")[name]
    count = H.read_int64_scalar(g["metadata/count"])
    assert count == 100
    for k in range(count):
        assert reconstruct_measurement(g, k) == X.measurement(k)
    # And column-wise with numpy.
    pos = g["data/position/values"][()]
    i = np.arange(100, dtype=np.float64)
    np.testing.assert_array_equal(pos, np.stack([i, 2 * i, -i], axis=1))


def test_chunk_length_and_deflate(rust_files):
    f = rust_files("measurements.h5")
    for path, chunks in [("data/timestamp/weeks/values", (16,)), ("data/temperature/values", (16,)),
                         ("data/position/values", (16, 3))]:
        ds = f["measurements_opts"][path]
        assert ds.chunks == chunks, path
        assert ds.compression == "gzip" and ds.compression_opts == 4, path
        assert ds.shuffle, path
        plain = f["measurements"][path]
        assert plain.compression is None
        np.testing.assert_array_equal(ds[()], plain[()])


def test_empty_vectors(rust_files):
    f = rust_files("measurements.h5")
    assert f["empty/data/position/values"].shape == (0, 3)
    assert f["empty/data/timestamp/weeks/values"].shape == (0,)
    assert strip_logical(schema_of(f, "empty")) == MEASUREMENT_SCHEMA
    assert f["empty_f64/data/values"].shape == (0,)
    assert f["empty_f64/data/values"].dtype == np.float64
    assert strip_logical(schema_of(f, "empty_f64")) == S("Float64")


# ---------------------------------------------------------------------------
# Scalars


@pytest.mark.parametrize("name", list(X.INT_TYPES))
def test_integers(rust_files, name):
    dtype, _, _, encoded = X.INT_TYPES[name]
    f = rust_files("scalars.h5")
    ds = f[name]["data/values"]
    assert ds.dtype == np.dtype(dtype)
    assert strip_logical(schema_of(f, name)) == S(encoded)
    assert [int(v) for v in ds[()]] == [X.int_value(name, n) for n in range(X.N_SCALARS)]


def test_floats(rust_files):
    f = rust_files("scalars.h5")
    f32 = f["float32/data/values"]
    assert f32.dtype == np.dtype("<f4")
    assert strip_logical(schema_of(f, "float32")) == S("Float32")
    want32 = np.array([X.f32_value(n) for n in range(X.N_SCALARS)], dtype=np.float32)
    np.testing.assert_array_equal(f32[()], want32)
    assert np.signbit(f32[2])

    f64 = f["float64/data/values"]
    assert f64.dtype == np.dtype("<f8")
    assert strip_logical(schema_of(f, "float64")) == S("Float64")
    assert [float(v) for v in f64[()]] == [X.f64_value(n) for n in range(X.N_SCALARS)]
    assert np.signbit(f64[2])

    sp = f["f64_special/data/values"][()]
    assert np.isnan(sp[0]) and sp[1] == np.inf and sp[2] == -np.inf
    assert sp[3] == 0.0 and np.signbit(sp[3]) and sp[4] == 5e-324


def test_bool_is_b8_bitfield(rust_files):
    f = rust_files("scalars.h5")
    ds = f["bool/data/values"]
    t = ds.id.get_type()
    assert t.get_class() == h5py.h5t.BITFIELD
    assert t.get_size() == 1 and t.get_order() == h5py.h5t.ORDER_LE
    assert t.equal(h5py.h5t.STD_B8LE)
    assert strip_logical(schema_of(f, "bool")) == S("Bool")
    raw = H.read_bitfield(ds)
    assert raw.tolist() == [int(X.bool_value(n)) for n in range(X.N_SCALARS)]


def test_char_is_int32_code_point(rust_files):
    f = rust_files("scalars.h5")
    ds = f["char/data/values"]
    assert ds.dtype == np.dtype("<i4")
    assert strip_logical(schema_of(f, "char")) == S("Int32", H.CHAR)
    assert [chr(c) for c in ds[()]] == [X.char_value(n) for n in range(X.N_SCALARS)]


def test_string_is_vlen_utf8(rust_files):
    f = rust_files("scalars.h5")
    ds = f["string/data/values"]
    info = h5py.check_string_dtype(ds.dtype)
    assert info is not None and info.encoding == "utf-8" and info.length is None
    variable, cset, strpad, _ = H.string_type_info(ds)
    assert variable and cset == h5py.h5t.CSET_UTF8 and strpad == h5py.h5t.STR_NULLTERM
    assert strip_logical(schema_of(f, "string")) == S("String")
    got = [s.decode("utf-8") for s in ds[()]]
    assert got == [X.text_value(n) for n in range(X.N_SCALARS)]
    # h5py's high-level string reading agrees.
    assert list(ds.asstr()[()]) == got


def test_string_vls_option(rust_files):
    """SaveOptions::vls_strings(true): h5vec's heap + pointers layout."""
    f = rust_files("scalars.h5")
    g = f["string_vls/data"]
    heap = g["heap"]
    assert heap.ndim == 1 and heap.dtype == np.uint8
    ptrs = g["pointers"]
    assert ptrs.dtype.names == ("offset", "length")
    assert all(ptrs.dtype[n] == np.dtype("<u8") for n in ptrs.dtype.names)
    node = schema_of(f, "string_vls")
    assert node["kind"] == "vls_string" and node["encoded_type"] == "String"
    hb = heap[()].tobytes()
    got = [hb[o:o + n].split(b"\0", 1)[0].decode("utf-8") for o, n in ptrs[()]]
    assert got == [X.text_value(n) for n in range(X.N_SCALARS)]


def test_enum_is_repr_integer(rust_files):
    f = rust_files("scalars.h5")
    ds = f["level/data/values"]
    assert ds.dtype == np.dtype("<i2")
    assert strip_logical(schema_of(f, "level")) == ENUM_NODE("Int16", X.LEVELS)
    assert ds[()].tolist() == [X.level_value(n)[1] for n in range(X.N_SCALARS)]


def test_all_scalars_record(rust_files):
    f = rust_files("scalars.h5")
    g = f["all"]
    tree = strip_logical(schema_of(f, "all"))
    enc = {name: S(X.INT_TYPES[name][3]) for name in X.INT_TYPES}
    enc.update(float32=S("Float32"), float64=S("Float64"), flag=S("Bool"), letter=S("Int32", H.CHAR),
               text=S("String"), level=ENUM_NODE("Int16", X.LEVELS))
    assert tree == R([(n, enc[n]) for n in X.ALL_FIELDS])
    d = g["data"]
    cols = {}
    for n in X.ALL_FIELDS:
        ds = d[n]["values"]
        cols[n] = H.read_bitfield(ds) if n == "flag" else ds[()]
    for k in range(X.N_SCALARS):
        want = X.all_scalars(k)
        got = {n: int(cols[n][k]) for n in X.INT_TYPES}
        got.update(
            float32=cols["float32"][k],
            float64=float(cols["float64"][k]),
            flag=bool(cols["flag"][k]),
            letter=chr(cols["letter"][k]),
            text=cols["text"][k].decode("utf-8"),
            level=X.LEVELS[[v for _, v in X.LEVELS].index(int(cols["level"][k]))],
        )
        assert got == want, k


# ---------------------------------------------------------------------------
# Dense


def test_dense_vec3(rust_files):
    f = rust_files("dense.h5")
    ds = f["vec3/data/values"]
    assert ds.shape == (20, 3) and ds.dtype == np.dtype("<f4")
    assert strip_logical(schema_of(f, "vec3")) == D("Float32", [3])
    np.testing.assert_array_equal(ds[()], np.stack([X.vec3(n) for n in range(20)]))


def test_dense_matrix_axes(rust_files):
    """[[i32; 2]; 3]: h5py shape (Z, 3, 2); Julia dimensions [2, 3]."""
    f = rust_files("dense.h5")
    ds = f["mat/data/values"]
    assert ds.shape == (10, 3, 2) and ds.dtype == np.dtype("<i4")
    assert strip_logical(schema_of(f, "mat")) == D("Int32", [2, 3])
    for k in range(10):
        np.testing.assert_array_equal(ds[k], X.mat(k))
    assert ds.chunks[1:] == (3, 2)


def test_dense_bool(rust_files):
    f = rust_files("dense.h5")
    ds = f["flags/data/values"]
    assert ds.shape == (16, 4) and H.is_bitfield8(ds)
    assert strip_logical(schema_of(f, "flags")) == D("Bool", [4])
    np.testing.assert_array_equal(H.read_bitfield(ds).astype(bool), np.stack([X.flags(n) for n in range(16)]))


# ---------------------------------------------------------------------------
# Records: tuples, tuple structs, constants, field attributes


def test_tuples(rust_files):
    f = rust_files("records.h5")
    g = f["tuples"]
    assert strip_logical(schema_of(f, "tuples")) == R(
        [("1", S("Int32")), ("2", S("Float64")), ("3", S("String"))], H.TUPLE)
    d = g["data"]
    assert set(d) == {"1", "2", "3"}
    for k in range(12):
        got = (int(d["1/values"][k]), float(d["2/values"][k]), d["3/values"][k].decode("utf-8"))
        assert got == X.tuple_value(k)


def test_nested_tuples(rust_files):
    f = rust_files("records.h5")
    d = f["nested/data"]
    assert d["1/values"].dtype == np.uint8 and d["2/1/values"].dtype == np.dtype("<i2")
    assert strip_logical(schema_of(f, "nested")) == R(
        [("1", S("UInt8")), ("2", R([("1", S("Int16")), ("2", S("Int32", H.CHAR))], H.TUPLE))], H.TUPLE)
    for k in range(9):
        got = (int(d["1/values"][k]), (int(d["2/1/values"][k]), chr(d["2/2/values"][k])))
        assert got == X.nested(k)


def test_tuple_struct(rust_files):
    f = rust_files("records.h5")
    d = f["pairs/data"]
    assert strip_logical(schema_of(f, "pairs")) == R([("1", S("Int32")), ("2", S("Float64"))])
    for k in range(8):
        assert (int(d["1/values"][k]), float(d["2/values"][k])) == X.pair(k)


def test_unit_struct_is_constant(rust_files):
    f = rust_files("records.h5")
    g = f["markers"]
    assert len(g["data"]) == 0, "constant: empty data group"
    assert H.read_int64_scalar(g["metadata/count"]) == 7
    assert strip_logical(schema_of(f, "markers")) == CONST
    # The spelling HDF5Vectors.jl writes and checks, and nothing else in the node.
    node = g["metadata/schema"]
    assert set(node) == {"kind", "schema", "codec", "logical_type"}
    assert H.read_fixed_str(node["codec"]) == "HDF5Vectors.ConstantCodec"
    assert H.read_fixed_str(node["schema"]) == "HDF5Vectors.ConstantSchema"


def test_constant_field(rust_files):
    f = rust_files("records.h5")
    d = f["tagged/data"]
    assert set(d) == {"id", "marker"}
    assert isinstance(d["marker"], h5py.Group) and len(d["marker"]) == 0
    assert strip_logical(schema_of(f, "tagged")) == R([("id", S("Int32")), ("marker", CONST)])
    assert d["id/values"][()].tolist() == [k * 11 for k in range(5)]


def test_field_attributes_rename_skip_blob_json_vls(rust_files):
    f = rust_files("records.h5")
    g = f["annotated"]
    d = g["data"]
    fields = ["id", "temp_c", "extra", "nothing", "meta", "note"]
    assert set(d) == set(fields), "renamed field under its new name, skipped field absent"
    tree = schema_of(f, "annotated")
    assert tree["field_names"] == fields
    kinds = {n: (c["kind"], c["schema"], c["codec"], c.get("encoded_type"))
             for n, c in zip(fields, tree["children"])}
    assert kinds["id"] == ("scalar", H.SCALAR, H.IDENTITY, "UInt32")
    assert kinds["temp_c"] == ("scalar", H.SCALAR, H.IDENTITY, "Float64")
    assert kinds["extra"] == ("blob", H.BLOB, H.BINCODE, None)
    assert kinds["nothing"] == ("blob", H.BLOB, H.BINCODE, None)
    assert kinds["meta"] == ("scalar", H.SCALAR, H.JSON, "String")
    assert kinds["note"][0] == "vls_string"

    n = 6
    want = [X.annotated(k) for k in range(n)]
    assert d["id/values"][()].tolist() == [w["id"] for w in want]
    assert d["temp_c/values"][()].tolist() == [w["temp_c"] for w in want]

    # JSON: one compact JSON document per element, same text serde_json writes.
    js = d["meta/values"]
    assert h5py.check_string_dtype(js.dtype).length is None
    texts = [s.decode("utf-8") for s in js[()]]
    assert [json.loads(t) for t in texts] == [w["meta"] for w in want]
    assert texts == [json.dumps(w["meta"], separators=(",", ":"), ensure_ascii=False) for w in want]

    # VLS note.
    hb = d["note/heap"][()].tobytes()
    assert [hb[o:o + m].decode("utf-8") for o, m in d["note/pointers"][()]] == [w["note"] for w in want]


def test_non_ascii_field_names(rust_files):
    f = rust_files("records.h5")
    d = f["accent/data"]
    assert set(d) == {"température", "名前"}
    assert strip_logical(schema_of(f, "accent")) == R([("température", S("Float32")), ("名前", S("String"))])
    assert d["température/values"][()].tolist() == [n - 1.5 for n in range(4)]
    assert [s.decode("utf-8") for s in d["名前/values"][()]] == [X.text_value(n) for n in range(4)]


def test_blob_bytes_and_stops(rust_files):
    d = rust_files("records.h5")["annotated/data"]
    bytes_ = d["extra/bytes"]
    stops = d["extra/stops"]
    assert bytes_.ndim == 1 and bytes_.dtype == np.uint8
    assert stops.ndim == 1 and stops.dtype == np.dtype("<i8") and stops.shape == (6,)
    b = bytes_[()].tobytes()
    s = stops[()].tolist()
    assert s == sorted(s) and s[0] >= 0 and s[-1] == len(b), "cumulative ends, last = len(bytes)"
    for k in range(6):
        start = 0 if k == 0 else s[k - 1]
        assert b[start:s[k]] == X.bincode_extra(X.extra(k)), f"blob element {k}"
    # A blob of () encodes to nothing: repeated stops, empty bytes.
    assert d["nothing/bytes"].shape == (0,)
    assert d["nothing/stops"][()].tolist() == [0] * 6


# ---------------------------------------------------------------------------
# A large vector


def test_big_vector(rust_files):
    g = rust_files("big.h5")["big"]
    n = 200_000
    assert H.read_int64_scalar(g["metadata/count"]) == n
    d = g["data"]
    ids = d["id/values"][()]
    assert ids.dtype == np.dtype("<u8")
    np.testing.assert_array_equal(ids, np.arange(n, dtype=np.uint64))
    np.testing.assert_array_equal(d["value/values"][()], np.arange(n, dtype=np.float64) * 0.5)
    np.testing.assert_array_equal(H.read_bitfield(d["flag/values"]), (np.arange(n) % 3 == 0).astype(np.uint8))
    assert d["value/values"].chunks[0] < n, "a large vector is stored in several chunks"


def test_appended_vector_respects_count(rust_files):
    """Saved with 60 rows, appended 40, then an append of 7 whose `count`
    never landed: h5py sees columns of 107 rows, and `count` (100) says how
    many are the vector."""
    g = rust_files("appended.h5")["appended"]
    count = H.read_int64_scalar(g["metadata/count"])
    assert count == 100
    for path in ["data/timestamp/weeks/values", "data/temperature/values", "data/position/values"]:
        ds = g[path]
        assert ds.shape[0] == 107, path
        assert ds.chunks[0] == 16, path
        assert ds.maxshape[0] is None, path
    for k in range(count):
        assert reconstruct_measurement(g, k) == X.measurement(k)
    w = g["data/timestamp/weeks/values"][:count]
    np.testing.assert_array_equal(w, [X.measurement(k)["timestamp"]["weeks"] for k in range(count)])
