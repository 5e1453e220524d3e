"""Plain-h5py helpers for the HDF5Vectors layout.

Writing mimics what HDF5.jl + HDF5Vectors produce (fixed-length UTF-8
NULLTERM metadata strings sized to their bytes, `Bool` as the bitfield
H5T_STD_B8LE, `String` as variable-length UTF-8, Int64 `dimensions`,
`field_names` as variable-length strings, `children/1..N`, `count` last).
Reading returns the schema tree as plain dicts, checking every metadata
string on the way.
"""

import h5py
import numpy as np

FORMAT_NAME = "HDF5Vectors"

SCALAR = "HDF5Vectors.ScalarSchema"
DENSE = "HDF5Vectors.DenseSchema"
RECORD = "HDF5Vectors.RecordSchema"
BLOB = "HDF5Vectors.BlobSchema"
CONSTANT = "HDF5Vectors.ConstantSchema"
IDENTITY = "HDF5Vectors.IdentityCodec"
CONSTANT_CODEC = "HDF5Vectors.ConstantCodec"
CHAR = "HDF5Vectors.CharCodec"
ENUM = "HDF5Vectors.EnumCodec"
JSON = "HDF5Vectors.JSONCodec"
STRUCT = "HDF5Vectors.StructCodec"
TUPLE = "HDF5Vectors.TupleCodec"
BINCODE = "h5vec.BincodeCodec"

# A few bytes that look like Julia's Serialization header: readers other than
# Julia must not need to understand serialized_schema.
FAKE_JULIA_SERIALIZATION = b"7JL\x0c\x04\x00\x00\x00\x34\x10\x01\x0cHDF5Vectors"

# --------------------------------------------------------------------------
# Reading


def string_type_info(ds):
    """(is_variable, cset, strpad, size) of a string dataset's file type."""
    t = ds.id.get_type()
    assert t.get_class() == h5py.h5t.STRING, f"{ds.name} is not a string dataset"
    return t.is_variable_str(), t.get_cset(), t.get_strpad(), t.get_size()


def read_fixed_str(ds):
    """Reads a metadata string, asserting the HDF5.jl form: scalar,
    fixed-length, UTF-8, NULLTERM, size = the string's byte length."""
    assert isinstance(ds, h5py.Dataset), f"{ds.name} is not a dataset"
    assert ds.shape == (), f"{ds.name}: shape {ds.shape}, expected scalar"
    variable, cset, strpad, size = string_type_info(ds)
    assert not variable, f"{ds.name}: variable-length, expected fixed-length"
    assert cset == h5py.h5t.CSET_UTF8, f"{ds.name}: cset {cset}, expected UTF-8"
    assert strpad == h5py.h5t.STR_NULLTERM, f"{ds.name}: strpad {strpad}, expected NULLTERM"
    raw = ds[()]
    assert isinstance(raw, bytes)
    text = raw.decode("utf-8")
    assert size == max(len(text.encode("utf-8")), 1), f"{ds.name}: size {size} for {text!r}"
    return text


def read_int64_scalar(ds):
    assert isinstance(ds, h5py.Dataset)
    assert ds.shape == (), f"{ds.name}: shape {ds.shape}, expected scalar"
    assert ds.dtype == np.dtype("<i8"), f"{ds.name}: dtype {ds.dtype}, expected Int64"
    return int(ds[()])


def is_bitfield8(ds):
    t = ds.id.get_type()
    return t.get_class() == h5py.h5t.BITFIELD and t.get_size() == 1 and t.get_order() == h5py.h5t.ORDER_LE


def read_bitfield(ds):
    """Raw bytes of a B8 dataset as uint8 (no reliance on h5py's bitfield mapping)."""
    assert is_bitfield8(ds), f"{ds.name} is not an 8-bit little-endian bitfield"
    out = np.empty(ds.shape, dtype=np.uint8)
    if out.size:
        ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, out, mtype=h5py.h5t.NATIVE_B8)
    return out


SCHEMA_STRINGS = ("kind", "schema", "codec", "logical_type", "encoded_type")
SCHEMA_MEMBERS = set(SCHEMA_STRINGS) | {"dimensions", "field_names", "variant_names", "variant_values", "children"}


def read_schema(g):
    """The schema tree under a metadata/schema group, as nested dicts."""
    assert isinstance(g, h5py.Group)
    unknown = set(g) - SCHEMA_MEMBERS
    assert not unknown, f"{g.name}: unexpected schema entries {unknown}"
    assert len(g.attrs) == 0, f"{g.name}: unexpected attributes"
    node = {}
    for key in SCHEMA_STRINGS:
        if key in g:
            node[key] = read_fixed_str(g[key])
    if "dimensions" in g:
        ds = g["dimensions"]
        assert ds.ndim == 1 and ds.dtype == np.dtype("<i8"), f"{ds.name}: {ds.shape} {ds.dtype}"
        node["dimensions"] = [int(x) for x in ds[()]]
    if "field_names" in g:
        ds = g["field_names"]
        info = h5py.check_string_dtype(ds.dtype)
        assert ds.ndim == 1 and info is not None and info.length is None, f"{ds.name}: not vlen strings"
        assert info.encoding == "utf-8"
        node["field_names"] = [s.decode("utf-8") for s in ds[()]]
    if "variant_names" in g:
        # Enum labels (SPEC 2): 1-D vlen UTF-8, declaration order, beside Int64 variant_values.
        ds = g["variant_names"]
        info = h5py.check_string_dtype(ds.dtype)
        assert ds.ndim == 1 and info is not None and info.length is None, f"{ds.name}: not vlen strings"
        assert info.encoding == "utf-8", f"{ds.name}: encoding {info.encoding}"
        node["variant_names"] = [s.decode("utf-8") for s in ds[()]]
    if "variant_values" in g:
        ds = g["variant_values"]
        assert ds.ndim == 1 and ds.dtype == np.dtype("<i8"), f"{ds.name}: {ds.shape} {ds.dtype}"
        node["variant_values"] = [int(x) for x in ds[()]]
    assert ("variant_names" in node) == ("variant_values" in node), f"{g.name}: variant_names without variant_values"
    if "variant_names" in node:
        assert len(node["variant_names"]) == len(node["variant_values"]), f"{g.name}: variant lengths differ"
    if "children" in g:
        ch = g["children"]
        names = sorted(ch, key=int)
        assert names == [str(i) for i in range(1, len(names) + 1)], f"{ch.name}: children {list(ch)}"
        node["children"] = [read_schema(ch[n]) for n in names]
    return node


# --------------------------------------------------------------------------
# Writing (the way HDF5.jl + HDF5Vectors write)


def write_fixed_str(group, name, value):
    b = value.encode("utf-8")
    size = max(len(b), 1)
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(size)
    tid.set_cset(h5py.h5t.CSET_UTF8)
    tid.set_strpad(h5py.h5t.STR_NULLTERM)
    sid = h5py.h5s.create(h5py.h5s.SCALAR)
    dsid = h5py.h5d.create(group.id, name.encode(), tid, sid)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array(b.ljust(size, b"\0"), dtype=f"S{size}"), mtype=tid)


def write_int64(group, name, value):
    group.create_dataset(name, data=np.int64(value), dtype="<i8")


def _dcpl(shape, chunked):
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    if chunked:
        dcpl.set_chunk(tuple(max(1, min(d, 64)) for d in shape))
    return dcpl


def write_bitfield(group, name, values, chunked=True):
    """A B8 (H5T_STD_B8LE) dataset: how HDF5.jl stores Bool."""
    arr = np.ascontiguousarray(np.asarray(values, dtype=np.uint8))
    if arr.ndim == 0:
        space = h5py.h5s.create(h5py.h5s.SCALAR)
        chunked = False
    elif chunked:
        space = h5py.h5s.create_simple(arr.shape, (h5py.h5s.UNLIMITED,) + arr.shape[1:])
    else:
        space = h5py.h5s.create_simple(arr.shape)
    dsid = h5py.h5d.create(group.id, name.encode(), h5py.h5t.STD_B8LE, space, dcpl=_dcpl(arr.shape, chunked))
    if arr.size:
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, arr, mtype=h5py.h5t.NATIVE_B8)


def write_column(group, path, values, dtype=None, chunked=True):
    """`group/path` as a dataset (intermediate groups created). Strings -> vlen UTF-8."""
    if dtype == "str":
        arr = np.array([s.encode("utf-8") for s in values], dtype=h5py.string_dtype("utf-8"))
        dtype = h5py.string_dtype("utf-8")
    else:
        arr = np.asarray(values, dtype=dtype)
    kw = {}
    if chunked:
        kw = dict(maxshape=(None,) + arr.shape[1:], chunks=tuple(max(1, min(d, 64)) for d in arr.shape))
    return group.create_dataset(path, data=arr, dtype=dtype or arr.dtype, **kw)


def scalar(encoded_type, logical_type=None, codec=IDENTITY):
    return dict(kind="scalar", schema=SCALAR, codec=codec, logical_type=logical_type or encoded_type,
                encoded_type=encoded_type)


def dense(encoded_type, dimensions, logical_type, codec=IDENTITY):
    return dict(kind="dense", schema=DENSE, codec=codec, logical_type=logical_type,
                encoded_type=encoded_type, dimensions=list(dimensions))


def record(logical_type, fields, codec=STRUCT):
    """fields: list of (name, child schema)."""
    return dict(kind="record", schema=RECORD, codec=codec, logical_type=logical_type,
                field_names=[f for f, _ in fields], children=[c for _, c in fields])


def constant(logical_type, serialized_value=None):
    """A constant node as HDF5Vectors.jl writes it (`ConstantSchema(ConstantCodec{T}(value))`):
    no value stored. `serialized_value` (bytes) adds the Julia-serialized value
    dataset that earlier HDF5Vectors versions wrote in the node."""
    node = dict(kind="constant", schema=CONSTANT, codec=CONSTANT_CODEC, logical_type=logical_type)
    if serialized_value is not None:
        node["serialized_value"] = serialized_value
    return node


def write_schema(group, node):
    for key in SCHEMA_STRINGS:
        if key in node:
            write_fixed_str(group, key, node[key])
    if "dimensions" in node:
        group.create_dataset("dimensions", data=np.array(node["dimensions"], dtype="<i8"))
    if "serialized_value" in node:
        group.create_dataset("serialized_value", data=np.frombuffer(node["serialized_value"], dtype=np.uint8))
    if "field_names" in node:
        group.create_dataset("field_names", data=[s.encode("utf-8") for s in node["field_names"]],
                             dtype=h5py.string_dtype("utf-8"))
    if node.get("children"):
        ch = group.create_group("children")
        for i, child in enumerate(node["children"], start=1):
            write_schema(ch.create_group(str(i)), child)


def write_inference_options(meta, inferred):
    """`schema_was_inferred` and, when true, the Julia inference options that
    HDF5Vectors.jl's `write_inference_options` adds: what `create_hdf5_vector(group,
    name, type)` writes with its defaults (no `dims`, portable, serialize_arrays and
    serialize_nonconcrete on). A vector created from an explicit schema gets only
    `schema_was_inferred = false`."""
    write_bitfield(meta, "schema_was_inferred", 1 if inferred else 0)
    if inferred:
        write_bitfield(meta, "dimensions_were_declared", 0)
        meta.create_dataset("dimensions", data=np.zeros(0, dtype="<i8"))
        write_bitfield(meta, "portable", 1)
        write_bitfield(meta, "serialize_arrays", 1)
        write_bitfield(meta, "serialize_nonconcrete", 1)


def write_vector(parent, name, schema, count, fill_data, inferred=True):
    """One HDF5Vectors vector group; `fill_data(data_group)` writes the values.
    `count` is written last, as HDF5Vectors does. `inferred`: written from a
    Julia type (with Julia's inference options) or from an explicit schema."""
    g = parent.create_group(name)
    data = g.create_group("data")
    fill_data(data)
    meta = g.create_group("metadata")
    write_fixed_str(meta, "format_name", FORMAT_NAME)
    write_int64(meta, "format_version", 1)
    write_fixed_str(meta, "logical_type", schema["logical_type"])
    meta.create_dataset("serialized_schema", data=np.frombuffer(FAKE_JULIA_SERIALIZATION, dtype=np.uint8))
    write_inference_options(meta, inferred)
    write_schema(meta.create_group("schema"), schema)
    write_int64(meta, "count", count)
    return g
