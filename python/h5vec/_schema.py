"""The schema tree under ``<vector>/metadata/schema`` (SPEC section 2)."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence, Tuple

import h5py
import numpy as np

from . import _h5
from ._errors import FormatError, mismatch

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
VLS = "h5vec.VLSStringSchema"
LIST = "h5vec.ListSchema"
NULLABLE = "h5vec.NullableSchema"
STRING_VALUES = "h5vec.StringValuesSchema"
FILL = "h5vec.FillValueSchema"
H5VEC_CODEC = "h5vec.IdentityCodec"
MASK_CODEC = "h5vec.MaskCodec"
PLACEHOLDER_CODEC = "h5vec.PlaceholderCodec"
FILL_CODEC = "h5vec.FillValueCodec"
UNION = "h5vec.UnionSchema"
# SPEC sections 4.5 to 4.7: codecs of h5vec's own on scalar, dense, record and list nodes.
INSTANT_CODEC = "h5vec.InstantCodec"
DATE_CODEC = "h5vec.DateCodec"
TIME_OF_DAY_CODEC = "h5vec.TimeOfDayCodec"
DURATION_CODEC = "h5vec.DurationCodec"
OFFSET_DATE_TIME_CODEC = "h5vec.OffsetDateTimeCodec"
UUID_CODEC = "h5vec.UuidCodec"
MAP_CODEC = "h5vec.MapCodec"
TIME_CODECS = (INSTANT_CODEC, DATE_CODEC, TIME_OF_DAY_CODEC, DURATION_CODEC)

# kind -> (schema identifier, accepted codecs). A node whose kind, or whose
# codec for its kind, is not here is *unknown* (a newer h5vec's): it is
# listed but not read (`Node.unknown`).
KINDS = {
    "scalar": (SCALAR, (IDENTITY, CHAR, ENUM, JSON) + TIME_CODECS),
    "dense": (DENSE, (IDENTITY, CHAR, ENUM, UUID_CODEC)),
    "record": (RECORD, (STRUCT, TUPLE, OFFSET_DATE_TIME_CODEC)),
    "constant": (CONSTANT, (IDENTITY, CONSTANT_CODEC)),
    "blob": (BLOB, (BINCODE,)),
    "vls_string": (VLS, (H5VEC_CODEC, PLACEHOLDER_CODEC, JSON)),
    "list": (LIST, (H5VEC_CODEC, MAP_CODEC)),
    "string_values": (STRING_VALUES, (H5VEC_CODEC,)),
    "nullable": (NULLABLE, (MASK_CODEC,)),
    "fill_nullable": (FILL, (FILL_CODEC,)),
    "union": (UNION, (H5VEC_CODEC,)),
}

# Every codec identifier this version knows: one of them where its kind does
# not take it is a malformed node (an error), any other codec an unknown one.
KNOWN_CODECS = frozenset(c for _, cs in KINDS.values() for c in cs)

# A union's TAG is an HDF5 enum over uint8, or uint16 past 256 variants (SPEC section 4.4).
MAX_VARIANTS = 1 << 16

# encoded_type -> numpy dtype (little-endian); Bool and String handled apart.
NUMBERS: Dict[str, np.dtype] = {
    "Int8": np.dtype("<i1"), "Int16": np.dtype("<i2"), "Int32": np.dtype("<i4"), "Int64": np.dtype("<i8"),
    "UInt8": np.dtype("<u1"), "UInt16": np.dtype("<u2"), "UInt32": np.dtype("<u4"),
    "UInt64": np.dtype("<u8"), "Float16": np.dtype("<f2"), "Float32": np.dtype("<f4"),
    "Float64": np.dtype("<f8"), "ComplexF32": np.dtype("<c8"), "ComplexF64": np.dtype("<c16"),
}
ENCODED_OF = {v: k for k, v in NUMBERS.items()}
INTEGERS = tuple(k for k, v in NUMBERS.items() if v.kind in "iu")
COMPLEX = ("ComplexF32", "ComplexF64")
# SPEC section 4.6: each time codec's encoded type and unit.
TIME_LAYOUT = {INSTANT_CODEC: ("Int64", "ns"), DATE_CODEC: ("Int32", "d"),
               TIME_OF_DAY_CODEC: ("Int64", "ns"), DURATION_CODEC: ("Int64", "ns")}
DAY_NS = 86_400 * 10**9

STRINGS = ("kind", "schema", "codec", "logical_type", "encoded_type", "time_unit", "time_zone")
MAX_DEPTH = 64
MAX_CHILDREN = 1 << 16
# Datasets a schema node may carry for enum labels (names and values), beside
# `encoded_type`.
LABEL_NAMES = ("variant_names", "labels")
LABEL_VALUES = ("variant_values", "label_values")


class Node:
    """One node of the schema tree, as plain attributes:
    ``kind``, ``schema``, ``codec``, ``logical_type``, ``encoded_type``,
    ``dimensions`` (Julia order), ``field_names``, ``children``, for
    enums whose labels are stored, ``labels`` (``{name: value}``), and for
    instants, dates, times of day and durations ``time_unit`` and
    ``time_zone`` (SPEC section 4.6).

    ``unknown`` is None for the nodes this version reads, else why it cannot
    (``"unknown codec h5vec.FutureCodec (kind scalar)"``): a node of a newer
    h5vec (an unknown kind, codec or encoded_type), listed but not read."""

    __slots__ = ("kind", "schema", "codec", "logical_type", "encoded_type", "dimensions",
                 "field_names", "children", "labels", "time_unit", "time_zone", "unknown")

    def __init__(self, kind: str, schema: Optional[str] = None, codec: Optional[str] = None,
                 logical_type: str = "", encoded_type: Optional[str] = None,
                 dimensions: Optional[Sequence[int]] = None, field_names: Optional[Sequence[str]] = None,
                 children: Optional[Sequence[Node]] = None, labels: Optional[Dict[str, int]] = None,
                 time_unit: Optional[str] = None, time_zone: Optional[str] = None,
                 unknown: Optional[str] = None) -> None:
        self.kind = kind
        self.schema = schema if schema is not None else KINDS[kind][0]
        self.codec = codec if codec is not None else KINDS[kind][1][0]
        self.unknown = unknown
        self.logical_type = logical_type
        self.encoded_type = encoded_type
        self.dimensions = list(dimensions) if dimensions is not None else None
        self.field_names = list(field_names) if field_names is not None else None
        self.children = list(children or [])
        self.labels = labels
        self.time_unit = time_unit
        self.time_zone = time_zone

    @property
    def shape(self) -> Tuple[int, ...]:
        """The element's dimensions in h5py (row-major) order."""
        return tuple(reversed(self.dimensions or []))

    def to_dict(self) -> Dict[str, Any]:
        """The node as plain dicts and lists (what ``Vector.schema`` returns)."""
        d: Dict[str, Any] = {"kind": self.kind, "schema": self.schema, "codec": self.codec,
             "logical_type": self.logical_type}
        if self.encoded_type is not None:
            d["encoded_type"] = self.encoded_type
        if self.dimensions is not None:
            d["dimensions"] = list(self.dimensions)
        if self.field_names is not None:
            d["field_names"] = list(self.field_names)
        if self.labels is not None:
            d["labels"] = dict(self.labels)
        if self.time_unit is not None:
            d["time_unit"] = self.time_unit
        if self.time_zone is not None:
            d["time_zone"] = self.time_zone
        if self.children:
            d["children"] = [c.to_dict() for c in self.children]
        return d

    def serialized(self) -> str:
        """The node as h5vec's compact JSON (serde of the Rust `Schema` struct)."""
        def ser(n):
            d = {"kind": n.kind, "schema": n.schema, "codec": n.codec, "logical_type": n.logical_type}
            if n.encoded_type is not None:
                d["encoded_type"] = n.encoded_type
            if n.dimensions is not None:
                d["dimensions"] = list(n.dimensions)
            if n.field_names is not None:
                d["field_names"] = list(n.field_names)
            if n.labels is not None:
                d["variant_names"] = list(n.labels)
                d["variant_values"] = list(n.labels.values())
            if n.time_unit is not None:
                d["time_unit"] = n.time_unit
            if n.time_zone is not None:
                d["time_zone"] = n.time_zone
            if n.children:
                d["children"] = [ser(c) for c in n.children]
            return d
        return json.dumps(ser(self), separators=(",", ":"), ensure_ascii=False)

    def same_layout(self, other: Node) -> bool:
        """Equal as far as the layout goes (logical types are descriptive); never
        for unknown nodes (their layout is not known here)."""
        if self.unknown is not None or other.unknown is not None:
            return False
        same_codec = self.codec == other.codec or {self.codec, other.codec} <= {IDENTITY, CONSTANT_CODEC}
        return (self.kind == other.kind and self.schema == other.schema and same_codec
                and self.encoded_type == other.encoded_type and self.dimensions == other.dimensions
                and self.field_names == other.field_names and len(self.children) == len(other.children)
                and self.time_unit == other.time_unit and self.time_zone == other.time_zone
                and all(a.same_layout(b) for a, b in zip(self.children, other.children)))

    def __repr__(self) -> str:
        return f"Node({self.to_dict()!r})"


def _read_str(group, name, path):
    if name not in group:
        return None
    ds = _h5.open_dataset(group, name, path)
    return _h5.read_scalar_string(ds, path)


def read_node(group, path, depth=0):
    """Reads and checks one schema node (recursively)."""
    if depth > MAX_DEPTH:
        raise FormatError(path, group.name, f"schema tree deeper than {MAX_DEPTH} levels")
    names = _h5.members(group, path)
    vals = {}
    for key in ("kind", "schema", "codec"):
        if key not in names:
            raise mismatch(path, group.name, f"schema entry `{key}`", "nothing")
        vals[key] = _read_str(group, key, path)
    kind, codec = vals["kind"], vals["codec"]
    unknown = None
    if kind not in KINDS:
        unknown = f"unknown kind {kind} (codec {codec})"
    else:
        want_schema, codecs = KINDS[kind]
        if vals["schema"] != want_schema:
            raise mismatch(path, group.name, f"schema `{want_schema}` for kind `{kind}`", f"`{vals['schema']}`")
        if codec not in codecs:
            if codec in KNOWN_CODECS:
                raise mismatch(path, group.name, f"a codec of {list(codecs)} for kind `{kind}`", f"`{codec}`")
            unknown = f"unknown codec {codec} (kind {kind})"
    node = Node(kind, vals["schema"], codec, _read_str(group, "logical_type", path) or "",
                _read_str(group, "encoded_type", path), time_unit=_read_str(group, "time_unit", path),
                time_zone=_read_str(group, "time_zone", path), unknown=unknown)
    if (unknown is None and kind in ("scalar", "dense", "vls_string", "string_values", "fill_nullable")
            and node.encoded_type is not None and node.encoded_type not in ENCODED):
        node.unknown = f"unknown encoded_type {node.encoded_type} (kind {kind}, codec {codec})"
    if node.unknown is not None:
        return _read_unknown(group, names, node, path, depth)
    if "dimensions" in names:
        ds = _h5.open_dataset(group, "dimensions", path)
        info = _h5.type_info(ds)
        if info.cls != h5py.h5t.INTEGER or ds.ndim > 1 or ds.size > 32:
            raise mismatch(path, ds.name, "1-D Int64 dimensions", f"{info.describe()} of shape {ds.shape}")
        dims = [int(x) for x in np.asarray(ds[()]).reshape(-1)]
        if any(d < 0 or d > 1 << 40 for d in dims):
            raise FormatError(path, ds.name, f"invalid dimensions {dims}")
        node.dimensions = dims
    if "field_names" in names:
        node.field_names = _read_names(group, "field_names", "field name", path)
    children = []
    if "children" in names:
        ch = _h5.open_group(group, "children", path)
        cnames = _h5.members(ch, path)
        if len(cnames) > MAX_CHILDREN:
            raise FormatError(path, ch.name, f"{len(cnames)} schema children")
        want = [str(i) for i in range(1, len(cnames) + 1)]
        if sorted(cnames, key=lambda s: (len(s), s)) != want:
            raise mismatch(path, ch.name, f"children {want}", sorted(cnames))
        for i in range(1, len(cnames) + 1):
            fn = node.field_names[i - 1] if node.field_names and i - 1 < len(node.field_names) else None
            cpath = f"{path}.{fn}" if fn is not None else f"{path}.<{i}>"
            children.append(read_node(_h5.open_group(ch, str(i), path), cpath, depth + 1))
    node.children = children
    node.labels = _read_labels(group, names, path)
    _check_node(node, group, path)
    return node


def _read_names(group, key, what, path):
    """The 1-D variable-length strings `key` of a schema node, as a list."""
    ds = _h5.open_dataset(group, key, path)
    info = _h5.type_info(ds)
    if info.cls != h5py.h5t.STRING or ds.ndim != 1:
        raise mismatch(path, ds.name, "1-D variable-length strings", info.describe())
    if ds.shape[0] > MAX_CHILDREN:
        raise FormatError(path, ds.name, f"{ds.shape[0]} {what}s")
    _h5.guard_heap(ds, path)
    try:
        return [bytes(s).split(b"\0", 1)[0].decode("utf-8") if not isinstance(s, str) else s
                for s in ds[()]]
    except UnicodeDecodeError:
        raise FormatError(path, ds.name, f"{what} is not valid UTF-8") from None


def _read_unknown(group, names, node, path, depth):
    """What can be shown of a node this version cannot read: its strings, and
    its children when they read (a newer layout may differ below it)."""
    if "children" in names:
        try:
            ch = _h5.open_group(group, "children", path)
            cnames = _h5.members(ch, path)
            if len(cnames) <= MAX_CHILDREN and sorted(cnames, key=lambda s: (len(s), s)) == \
                    [str(i) for i in range(1, len(cnames) + 1)]:
                node.children = [read_node(_h5.open_group(ch, str(i), path), f"{path}.<{i}>", depth + 1)
                                 for i in range(1, len(cnames) + 1)]
        except FormatError as e:
            if "deeper than" in e.message:
                raise
            node.children = []
    return node


def _read_labels(group, names, path):
    for nk, vk in zip(LABEL_NAMES, LABEL_VALUES):
        if nk in names and vk in names:
            nds = _h5.open_dataset(group, nk, path)
            vds = _h5.open_dataset(group, vk, path)
            if nds.ndim != 1 or vds.ndim != 1 or nds.shape != vds.shape or nds.shape[0] > MAX_CHILDREN:
                raise mismatch(path, nds.name, "labels and values of one length", f"{nds.shape}, {vds.shape}")
            if _h5.type_info(vds).cls != h5py.h5t.INTEGER:
                raise mismatch(path, vds.name, "integer label values", _h5.type_info(vds).describe())
            _h5.guard_heap(nds, path)
            labels = [s if isinstance(s, str) else bytes(s).split(b"\0", 1)[0].decode("utf-8", "replace")
                      for s in nds[()]]
            return dict(zip(labels, (int(v) for v in vds[()])))
    return None


ENCODED = set(NUMBERS) | {"Bool", "String"}


def _check_node(node, group, path):
    k = node.kind
    loc = group.name
    if k in ("scalar", "dense", "vls_string", "string_values", "fill_nullable"):
        if node.encoded_type not in ENCODED:
            raise mismatch(path, loc, f"an encoded_type of {sorted(ENCODED)}", f"{node.encoded_type!r}")
    if k in ("vls_string", "string_values") and node.encoded_type != "String":
        raise mismatch(path, loc, "encoded_type `String`", f"`{node.encoded_type}`")
    if k == "fill_nullable" and node.encoded_type not in NUMBERS:
        raise mismatch(path, loc, "a numeric encoded_type", f"`{node.encoded_type}`")
    if k == "dense" and node.dimensions is None:
        raise mismatch(path, loc, "`dimensions` on a dense node", "nothing")
    if k == "dense" and node.encoded_type == "String":
        raise mismatch(path, loc, "a fixed-size element type", "`String`")
    if k == "record":
        if node.field_names is None:
            raise mismatch(path, loc, "`field_names` on a record node", "nothing")
        if len(node.field_names) != len(node.children):
            raise mismatch(path, loc, f"{len(node.field_names)} child schemas", len(node.children))
        if len(set(node.field_names)) != len(node.field_names):
            raise FormatError(path, loc, f"duplicate field names {node.field_names}")
        for f in node.field_names:
            if not f or f in (".", "..") or "/" in f or "\0" in f:
                raise FormatError(path, loc, f"invalid field name {f!r}")
    want_children = {"list": 1, "nullable": 1, "vls_string": 1}.get(k, None if k in ("record", "union") else 0)
    if want_children is not None and len(node.children) != want_children:
        raise mismatch(path, loc, f"{want_children} child schemas", len(node.children))
    if k == "scalar" and node.codec == JSON and node.encoded_type != "String":
        raise mismatch(path, loc, "encoded_type `String` for JSON", f"`{node.encoded_type}`")
    if node.codec == CHAR and node.encoded_type != "Int32":
        raise mismatch(path, loc, "encoded_type `Int32` for a char", f"`{node.encoded_type}`")
    if node.codec == ENUM and node.encoded_type not in INTEGERS:
        raise mismatch(path, loc, "an integer encoded_type for an enum", f"`{node.encoded_type}`")
    if node.codec in TIME_LAYOUT:
        enc, unit = TIME_LAYOUT[node.codec]
        if (node.encoded_type, node.time_unit) != (enc, unit):
            raise mismatch(path, loc, f"{node.codec} of {enc} counting `{unit}`",
                           f"{node.encoded_type} counting {node.time_unit!r}")
    if node.codec == UUID_CODEC and (node.encoded_type != "UInt8" or node.dimensions != [16]):
        raise mismatch(path, loc, "a UUID of UInt8 dimensions [16]",
                       f"{node.encoded_type} dimensions {node.dimensions}")
    if node.codec == OFFSET_DATE_TIME_CODEC:
        _check_offset_date_time(node, loc, path)
    if k == "list" and node.codec == MAP_CODEC and node.children[0].unknown is None:
        entry = node.children[0]
        if entry.kind != "record" or entry.field_names != ["key", "value"]:
            raise mismatch(f"{path}[]", loc, "a map entry: a record with fields ['key', 'value']",
                           f"a `{entry.kind}` node with fields {entry.field_names}")
    if k == "union":
        _check_union(node, loc, path)
    if k == "nullable" and node.children[0].kind in ("nullable", "vls_string", "fill_nullable"):
        raise FormatError(path, loc, f"a nullable around a `{node.children[0].kind}` node")


def _check_offset_date_time(node, loc, path):
    """SPEC section 4.6: `{instant, offset_seconds}`, an instant and an Int32."""
    if any(c.unknown is not None for c in node.children):
        return  # not read at all
    inst, off = node.children if node.field_names == ["instant", "offset_seconds"] else (None, None)
    ok = (inst is not None and inst.kind == "scalar" and inst.codec == INSTANT_CODEC
          and off.kind == "scalar" and off.codec == IDENTITY and off.encoded_type == "Int32")
    if not ok:
        found = [(f, c.kind, c.codec, c.encoded_type) for f, c in zip(node.field_names, node.children)]
        raise mismatch(path, loc, "an offset date-time record {instant: an instant, offset_seconds: Int32}",
                       found)


def _check_union(node, loc, path):
    """SPEC section 4.4: variant names and tags 0, 1, ... in order, one record
    or constant child per variant."""
    labels = node.labels
    if not labels:
        raise mismatch(path, loc, "`variant_names` and `variant_values` on a union node", "nothing")
    if len(labels) > MAX_VARIANTS:
        raise FormatError(path, loc, f"{len(labels)} variants (at most {MAX_VARIANTS})")
    if list(labels.values()) != list(range(len(labels))):
        raise mismatch(path, loc, "union variant_values 0, 1, ... in order", list(labels.values()))
    if len(node.children) != len(labels):
        raise mismatch(path, loc, f"{len(labels)} child schemas (one per variant)", len(node.children))
    for name, child in zip(labels, node.children):
        if not name or name in (".", "..", "TAG", "INDEX") or "/" in name or "\0" in name:
            raise FormatError(path, loc, f"invalid variant name {name!r}")
        if child.kind not in ("record", "constant") and child.unknown is None:
            raise mismatch(path, loc, f"a record or constant child for variant {name!r}", f"`{child.kind}`")


# ---------------------------------------------------------------------------
# The schema tree against a checksummed `metadata/serialized_schema` (SPEC 6.4)

# Most bytes of a checksummed `serialized_schema` read (as Rust).
MAX_SERIALIZED_SCHEMA = 64 << 20
# A node's members in `serialized_schema`'s JSON (Rust's `Schema`), in the
# order Rust compares them (`Stored::differs_from`): the first four required
# strings, then the optional ones (absent or null when the node has none).
JSON_REQUIRED = ("kind", "schema", "codec", "logical_type")
JSON_OPTIONAL = (("encoded_type", "str"), ("dimensions", "ints"), ("field_names", "strs"),
                 ("variant_names", "strs"), ("variant_values", "ints"), ("time_unit", "str"),
                 ("time_zone", "str"))
JSON_MEMBERS = frozenset(JSON_REQUIRED + tuple(k for k, _ in JSON_OPTIONAL) + ("children",))
# The members read of a node this version cannot read (`Node.unknown`).
UNKNOWN_MEMBERS = ("kind", "schema", "codec", "logical_type", "encoded_type", "time_unit", "time_zone")


def check_tree(meta, node, path="$"):
    """When `meta`'s `serialized_schema` has HDF5's Fletcher32 filter (a vector
    saved with a checksum, SPEC 6.4), reads it (HDF5 verifies its bytes) and
    checks that the schema tree `node` read from the file says exactly what
    it says, member by member: the tree's small datasets and heap strings
    carry no checksum of their own, so a change in any of them is a
    FormatError here instead of a different load (as Rust's
    `check_schema_tree`). Nothing to check without the filter (HDF5Vectors.jl
    files hold Julia bytes there). Nodes this version cannot read are
    compared on their strings only: their data is not read."""
    if _h5._link_kind(meta, "serialized_schema") != "HardLink":
        return
    try:
        obj = meta["serialized_schema"]
        if not isinstance(obj, h5py.Dataset) or _h5.fletcher32_bit(obj) is None:
            return
    except (KeyError, OSError, RuntimeError, ValueError):
        return
    # Storage and chunk checks (a chunk shorter than its checksum, or whose
    # filter mask says the checksum was skipped, is an error).
    ds = _h5.open_dataset(meta, "serialized_schema", path)
    info = _h5.type_info(ds)
    if not (info.cls == h5py.h5t.INTEGER and info.size == 1 and not info.signed) or ds.ndim != 1:
        raise mismatch(path, ds.name, "1-D UInt8", f"{info.describe()} of shape {ds.shape}")
    n = int(ds.shape[0])
    if n > MAX_SERIALIZED_SCHEMA:
        raise FormatError(path, ds.name, f"{n} bytes, more than the {MAX_SERIALIZED_SCHEMA} h5vec reads")
    try:
        raw = np.asarray(ds[()], dtype=np.uint8).tobytes()
    except (OSError, RuntimeError, ValueError, TypeError) as e:
        if "filter returned failure" in str(e) or "Fletcher32" in str(e):
            raise FormatError(path, ds.name, "checksum mismatch (Fletcher32: the schema's bytes changed "
                                             f"after they were written): {e}") from None
        raise FormatError(path, ds.name, f"cannot read: {e}") from None
    try:
        want = json.loads(raw.decode("utf-8"), object_pairs_hook=_json_object)
        _check_json_node(want)
    except (ValueError, RecursionError) as e:
        raise FormatError(path, ds.name, f"not the schema as JSON: {e}") from None
    diff = _differs(node, _h5.open_group(meta, "schema", path), want, path)
    if diff is not None:
        at, loc, what = diff
        raise FormatError(at, loc, "the schema tree differs from the checksummed "
                                   f"metadata/serialized_schema: {what}")


def _json_object(pairs):
    """A JSON object as a dict; a member of a node twice is an error (as serde's)."""
    out = {}
    for k, v in pairs:
        if k in out and k in JSON_MEMBERS:
            raise ValueError(f"duplicate field `{k}`")
        out[k] = v
    return out


def _json_value(v, want):
    """Whether `v` is what serde reads as a String ("str"), Vec<String>
    ("strs") or Vec<i64> ("ints")."""
    def is_str(x):
        if not isinstance(x, str):
            return False
        x.encode("utf-8")  # a lone surrogate (serde refuses it): UnicodeEncodeError, a ValueError
        return True

    def is_i64(x):
        return type(x) is int and -(1 << 63) <= x < 1 << 63

    if want == "str":
        return is_str(v)
    if not isinstance(v, list):
        return False
    return all(map(is_str if want == "strs" else is_i64, v))


def _check_json_node(d):
    """Checks that `d` (parsed JSON) is a schema node as Rust's serde reads one."""
    if not isinstance(d, dict):
        raise ValueError(f"expected a schema node (a JSON object), found {type(d).__name__}")
    for k in JSON_REQUIRED:
        if k not in d:
            raise ValueError(f"missing field `{k}`")
        if not _json_value(d[k], "str"):
            raise ValueError(f"field `{k}`: expected a string, found {d[k]!r:.80}")
    for k, want in JSON_OPTIONAL:
        if d.get(k) is not None and not _json_value(d[k], want):
            what = {"str": "a string", "strs": "a list of strings", "ints": "a list of 64-bit integers"}[want]
            raise ValueError(f"field `{k}`: expected {what}, found {d[k]!r:.80}")
    children = d.get("children", [])
    if not isinstance(children, list):
        raise ValueError(f"field `children`: expected a list, found {children!r:.80}")
    for c in children:
        _check_json_node(c)


def _tree_members(node, group, path):
    """(member, value) of schema node `node` (read from `group`) as Rust's
    `Stored` holds it, in `JSON_REQUIRED` + `JSON_OPTIONAL` order."""
    names = _h5.members(group, path)
    out = [(k, getattr(node, k)) for k in JSON_REQUIRED + ("encoded_type",)]
    if node.unknown is not None:
        return out + [(k, getattr(node, k)) for k in ("time_unit", "time_zone")]
    variant_names = _read_names(group, "variant_names", "variant name", path) if "variant_names" in names else None
    variant_values = None
    if "variant_values" in names:
        ds = _h5.open_dataset(group, "variant_values", path)
        info = _h5.type_info(ds)
        if info.cls != h5py.h5t.INTEGER or ds.ndim != 1 or ds.size > MAX_CHILDREN:
            raise mismatch(path, ds.name, "1-D Int64 variant values", f"{info.describe()} of shape {ds.shape}")
        variant_values = [int(x) for x in np.asarray(ds[()]).reshape(-1)]
    return out + [("dimensions", node.dimensions), ("field_names", node.field_names),
                  ("variant_names", variant_names), ("variant_values", variant_values),
                  ("time_unit", node.time_unit), ("time_zone", node.time_zone)]


def _differs(node, group, want, path):
    """The first member where the tree (`node`, read from `group`) and `want`
    (the same node from `serialized_schema`'s JSON) differ, as (field path,
    HDF5 location, what each says); None when they are equal. Rust's
    `Stored::differs_from`: the same order and the same field paths."""
    for k, mine in _tree_members(node, group, path):
        theirs = want.get(k)
        if mine != theirs:
            return path, group.name, f"`{k}` is {mine!r} in the tree, {theirs!r} in the JSON"
    if node.unknown is not None:
        return None
    wkids = want.get("children", [])
    if len(node.children) != len(wkids):
        return path, group.name, f"{len(node.children)} children in the tree, {len(wkids)} in the JSON"
    if not node.children:
        return None
    ch = _h5.open_group(group, "children", path)
    for i, (c, w) in enumerate(zip(node.children, wkids), start=1):
        if node.kind == "record" and node.field_names and i - 1 < len(node.field_names):
            sub = f"{path}.{node.field_names[i - 1]}"
        else:
            sub = f"{path}[child {i}]"
        found = _differs(c, _h5.open_group(ch, str(i), path), w, sub)
        if found is not None:
            return found
    return None


def write_node(group, node):
    for key in STRINGS:
        v = getattr(node, key)
        if v is not None:
            _h5.write_fixed_str(group, key, v)
    if node.dimensions is not None:
        group.create_dataset("dimensions", data=np.array(node.dimensions, dtype="<i8"))
    if node.field_names is not None:
        group.create_dataset("field_names", data=np.array([s.encode("utf-8") for s in node.field_names],
                                                          dtype=object), dtype=_h5.VLEN_UTF8,
                             shape=(len(node.field_names),))
    if node.labels is not None:
        # enum labels as Rust writes them (SPEC.md section 2): vlen UTF-8 names, Int64 values
        group.create_dataset("variant_names", data=np.array([s.encode("utf-8") for s in node.labels],
                                                            dtype=object), dtype=_h5.VLEN_UTF8,
                             shape=(len(node.labels),))
        group.create_dataset("variant_values", data=np.array(list(node.labels.values()), dtype="<i8"))
    if node.children:
        ch = group.create_group("children")
        for i, c in enumerate(node.children, start=1):
            write_node(ch.create_group(str(i)), c)
