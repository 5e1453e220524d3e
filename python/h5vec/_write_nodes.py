"""Writing vectors, part 1: the schema nodes Rust's typed save writes for each
Rust type (SPEC.md sections 2 and 4), and the hints (a field's `h5vec.schema`
metadata, `schema=`, an append's stored node) read as dicts."""

import json

import numpy as np

from . import _schema as S
from ._errors import FormatError


MAX_CHUNK_BYTES = 4 << 20
MAX_HEAP_CHUNK = 512 << 10
DEFAULT_CHUNK = 65536

RUST_NAMES = {"Int8": "i8", "Int16": "i16", "Int32": "i32", "Int64": "i64", "UInt8": "u8", "UInt16": "u16",
              "UInt32": "u32", "UInt64": "u64", "Float32": "f32", "Float64": "f64", "Bool": "bool",
              "String": "alloc::string::String", "Float16": "half::binary16::f16",
              "ComplexF32": "num_complex::Complex<f32>", "ComplexF64": "num_complex::Complex<f64>"}
COMPLEX = {"ComplexF32": "Float32", "ComplexF64": "Float64"}  # complex -> its parts' encoded type
SCHEMA_KEY = "h5vec.schema"  # Arrow field metadata: the field's whole schema node as JSON (SPEC.md 11)
UNION_KEY = "h5vec.union"  # "flat": the struct form of an enum with data
DAY_NS = 86_400_000_000_000
I64_MAX = (1 << 63) - 1

# ---------------------------------------------------------------------------
# Schema nodes


def scalar_node(enc, codec=S.IDENTITY, logical=None):
    return S.Node("scalar", codec=codec, encoded_type=enc, logical_type=logical or RUST_NAMES[enc])


def _enum_labels(md, enc, path):
    """The labels of an enum field (metadata `h5vec.labels`, a JSON object
    name -> stored value, in declaration order), checked: stored in the node as
    `variant_names` / `variant_values` (SPEC.md section 2)."""
    try:
        labels = json.loads(md["h5vec.labels"])
    except ValueError as e:
        raise FormatError(path, None, f"h5vec.labels is not JSON: {e}") from None
    if not isinstance(labels, dict) or not labels:
        raise FormatError(path, None, f"h5vec.labels: expected a JSON object of labels, found {labels!r}")
    info = np.iinfo(S.NUMBERS[enc]) if enc in S.NUMBERS and np.dtype(S.NUMBERS[enc]).kind in "iu" else None
    if info is None:
        raise FormatError(path, None, f"an integer encoded_type for an enum, found `{enc}`")
    for name, v in labels.items():
        if not name or type(v) is not int or not info.min <= v <= info.max:
            raise FormatError(path, None, f"h5vec.labels: label {name!r} -> {v!r}: expected a non-empty name "
                                          f"and an {enc} value")
    if len(set(labels.values())) != len(labels):
        raise FormatError(path, None, f"h5vec.labels: two labels share a value: {labels}")
    return labels


def dense_node(enc, shape, codec=S.IDENTITY):
    logical = RUST_NAMES[enc] if codec == S.IDENTITY else ("char" if codec == S.CHAR else "enum")
    for d in reversed(shape):
        logical = f"[{logical}; {d}]"
    return S.Node("dense", codec=codec, encoded_type=enc, dimensions=list(reversed(shape)), logical_type=logical)


def nullable_node(child):
    return S.Node("nullable", children=[child], logical_type=f"core::option::Option<{child.logical_type}>")


def list_node(child):
    return S.Node("list", children=[child], logical_type=f"alloc::vec::Vec<{child.logical_type}>")


def record_node(names, children, tuple_=False, logical="python.record"):
    return S.Node("record", codec=S.TUPLE if tuple_ else S.STRUCT, field_names=names, children=children,
                  logical_type=logical)


def vls_node(nullable):
    return S.Node("vls_string", codec=S.PLACEHOLDER_CODEC if nullable else S.H5VEC_CODEC, encoded_type="String",
                  children=[scalar_node("String")],
                  logical_type="core::option::Option<alloc::string::String>" if nullable
                  else "alloc::string::String")


def constant_codec():
    """The constant node's codec as SPEC.md names it (HDF5Vectors.ConstantCodec or IdentityCodec)."""
    return _CONSTANT_CODEC


_CONSTANT_CODEC = S.CONSTANT_CODEC


def time_node(codec, zone=None):
    """Instants, dates, times of day, durations (SPEC.md section 4.6), as Rust's
    Arrow writer names them (logical types are descriptive)."""
    if codec == S.DATE_CODEC:
        return S.Node("scalar", codec=codec, encoded_type="Int32", time_unit="d",
                      logical_type="chrono::naive::date::NaiveDate")
    logical = {S.INSTANT_CODEC: "std::time::SystemTime" if zone is not None
               else "chrono::naive::datetime::NaiveDateTime",
               S.TIME_OF_DAY_CODEC: "chrono::naive::time::NaiveTime",
               S.DURATION_CODEC: "chrono::time_delta::TimeDelta"}[codec]
    return S.Node("scalar", codec=codec, encoded_type="Int64", time_unit="ns", time_zone=zone,
                  logical_type=logical)


def uuid_node():
    return S.Node("dense", codec=S.UUID_CODEC, encoded_type="UInt8", dimensions=[16], logical_type="uuid::Uuid")


def union_node(names, children, logical=None):
    """An enum with data (SPEC.md section 4.4): tags 0, 1, ... in declaration order."""
    return S.Node("union", codec=S.H5VEC_CODEC, children=children, labels={n: i for i, n in enumerate(names)},
                  logical_type=logical or "enum { %s }" % ", ".join(names))


def map_node(entry):
    """A map (SPEC.md section 4.5): a list (h5vec.MapCodec) of {key, value} records."""
    k, v = entry.children
    return S.Node("list", codec=S.MAP_CODEC, children=[entry],
                  logical_type=f"std::collections::hash::map::HashMap<{k.logical_type}, {v.logical_type}>")


def json_vls_node():
    """JSON text in the vls_string layout (map entries: SPEC.md sections 4.1, 4.5)."""
    return S.Node("vls_string", codec=S.JSON, encoded_type="String", children=[scalar_node("String")],
                  logical_type="serde_json::value::Value")


# Schema nodes as dicts: the hints a field's `h5vec.schema` metadata (or a
# `schema=` node, or the stored node of an append) gives. Both spellings of
# labels are read: `variant_names` / `variant_values` (the JSON of SPEC.md
# section 11) and `labels` (`Vector.schema`).


def _hint_of(md, path):
    text = md.get(SCHEMA_KEY)
    if text is None:
        return None
    try:
        d = json.loads(text)
    except ValueError as e:
        raise FormatError(path, None, f"{SCHEMA_KEY} metadata is not JSON: {e}") from None
    if not isinstance(d, dict) or not isinstance(d.get("kind"), str):
        raise FormatError(path, None, f"{SCHEMA_KEY} metadata: expected a schema node (a JSON object with a "
                                      f"`kind`), found {text[:100]!r}")
    return d


def _inner(h):
    """The node under a nullable hint (the hint itself otherwise)."""
    if h and h.get("kind") == "nullable" and h.get("children"):
        return h["children"][0]
    return h


def _kid(h, i):
    kids = (h or {}).get("children") or []
    return kids[i] if i < len(kids) else None


def _field_kid(h, name):
    """The child hint of record hint `h` for field `name`."""
    h = _inner(h)
    if not h or h.get("kind") != "record":
        return None
    names = h.get("field_names") or []
    return _kid(h, names.index(name)) if name in names else None


def _hint_labels(h):
    """{name: value} of a hint's labels, or None."""
    if not h:
        return None
    if isinstance(h.get("labels"), dict):
        return dict(h["labels"])
    if h.get("variant_names") is not None:
        return dict(zip(h["variant_names"], h.get("variant_values") or range(len(h["variant_names"]))))
    return None


def _node_dict(node):
    """A schema node given as an h5vec.Node, a dict (`Vector.schema`) or JSON text -> dict."""
    if isinstance(node, S.Node):
        return node.to_dict()
    if isinstance(node, (str, bytes)):
        node = json.loads(node)
    if not isinstance(node, dict) or "kind" not in node:
        raise TypeError("schema: a pyarrow.Schema, or an h5vec schema node (Vector.schema, a dict with `kind`)")
    return node


def _node_json(h):
    """Compact JSON of a node dict in SPEC.md section 11's spelling (variant_names / variant_values)."""
    def conv(d):
        out = {}
        for k, v in d.items():
            if k == "labels":
                if v is not None:
                    out["variant_names"] = list(v)
                    out["variant_values"] = list(v.values())
            elif k == "children":
                out[k] = [conv(c) for c in v]
            else:
                out[k] = v
        return out
    return json.dumps(conv(h), separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------
# Arrow helpers shared by the input steps


def _need_pa():
    try:
        import pyarrow as pa
        return pa
    except ImportError:
        raise ImportError("this input needs pyarrow: pip install 'h5vec[arrow]'") from None


def _md(field):
    md = field.metadata or {}
    return {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
            for k, v in md.items()}
