"""Writing vectors: input (pyarrow, pandas, polars, numpy) -> columns + schema
tree -> the layout of SPEC.md, in the order of SPEC section 8.

Every input becomes Arrow first (pandas and numpy columns, polars frames), then
columns and schema nodes (`from_arrow`), then datasets (`write_field`). The
nodes are the ones Rust's typed save writes for the matching Rust type (and
its Arrow writer for the same Arrow type, SPEC.md section 11), so that
`h5vec::load_vector::<T>` reads the result."""

import json
import uuid as _uuid

import h5py
import numpy as np

from . import _columns as C
from . import _h5
from . import _read
from . import _schema as S
from ._errors import FormatError
from ._vector import FORMAT_NAME, ROOT, _open_where, check_name, open_metadata

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
# Input -> columns


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


def from_arrow(arr, field, path, opts, parent_valid=None, item=False, hint=None):
    """(Col, Node) of a pyarrow array with Arrow field `field`. `hint` is the
    field's schema node as a dict when known (from its `h5vec.schema`
    metadata, an enclosing field's node, `schema=`, or the stored vector of an
    append): it settles what the Arrow type alone leaves open (string layouts,
    enum labels, record codecs, UUIDs, complex numbers, the flat union form)."""
    pa = _need_pa()
    import pyarrow.compute as pc
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    md = _md(field)
    own = _hint_of(md, path)
    if own is not None:
        hint = own
    inner = _inner(hint) or {}
    hcodec = inner.get("codec")
    n = len(arr)
    if pa.types.is_null(t):
        if item:
            raise FormatError(path, None, "a null-typed (constant) column cannot be a list element")
        node = S.Node("constant", codec=constant_codec(), logical_type="()")
        return C.Const(n, node), node
    if pa.types.is_union(t):
        return _union_dense(arr, field, path, opts, parent_valid, item, hint)
    nullable = field.nullable
    has_nulls = arr.null_count > 0
    valid = None
    if has_nulls or nullable:
        valid = np.ones(n, bool) if not has_nulls else np.asarray(arr.is_valid())
    if has_nulls and not nullable:
        # Nulls are allowed only under a null enclosing record (placeholders).
        bad = ~valid if parent_valid is None else (~valid & parent_valid)
        if bad.any():
            raise FormatError(path, None, f"row {int(np.flatnonzero(bad)[0])} is null but the Arrow field "
                                          f"`{field.name}` is not nullable (set nullable=True in the schema)")
    own_valid = valid if nullable else None
    zero = None if valid is None else ~valid  # rows whose stored value is a placeholder
    codec_md = md.get("h5vec.codec") or hcodec

    if pa.types.is_dictionary(t):
        labels = None
        if codec_md == S.ENUM:
            enc = md.get("h5vec.encoded_type") or inner.get("encoded_type") or "Int64"
            labels = _enum_labels(md, enc, path) if "h5vec.labels" in md else _hint_labels(inner)
        if labels:
            dec = arr.dictionary_decode() if hasattr(arr, "dictionary_decode") else pc.cast(arr, t.value_type)
            names = np.asarray(pc.fill_null(dec, next(iter(labels))).to_numpy(zero_copy_only=False), dtype=object)
            lut = {k: v for k, v in labels.items()}
            try:
                codes = np.array([lut[s] for s in names.tolist()], dtype=S.NUMBERS[enc])
            except KeyError as e:
                raise FormatError(path, None, f"label {e.args[0]!r} is not one of {list(labels)}") from None
            if zero is not None:
                codes[zero] = 0
            node = scalar_node(enc, S.ENUM, "enum")
            node.labels = labels
            return _wrap(C.Prim(codes, "enum", node), node, own_valid, item, path)
        arr = arr.dictionary_decode() if hasattr(arr, "dictionary_decode") else pc.cast(arr, t.value_type)
        return from_arrow(arr, field.with_type(arr.type), path, opts, parent_valid, item, hint)
    if pa.types.is_boolean(t):
        vals = np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)
        node = scalar_node("Bool")
        return _wrap(C.Prim(vals, "bool", node), node, own_valid, item, path)
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        np_t = t.to_pandas_dtype()
        enc = S.ENCODED_OF.get(np.dtype(np_t).newbyteorder("<"))
        if enc is None:
            raise FormatError(path, None, f"Arrow type {t} has no h5vec encoding")
        vals = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False) if has_nulls else arr.to_numpy()
        vals = np.ascontiguousarray(vals, dtype=S.NUMBERS[enc])
        if zero is not None and has_nulls:
            vals = vals.copy() if not vals.flags.writeable else vals
            vals[zero] = 0
        codec = S.ENUM if codec_md == S.ENUM else S.IDENTITY
        labels = None
        if codec == S.ENUM:
            labels = _enum_labels(md, enc, path) if "h5vec.labels" in md else _hint_labels(inner)
        if labels is not None:
            stored = vals if valid is None else vals[valid]
            bad = ~np.isin(stored.astype(np.int64), np.array(list(labels.values()), dtype=np.int64))
            if bad.any():
                row = int(np.flatnonzero(valid)[np.flatnonzero(bad)[0]] if valid is not None
                          else np.flatnonzero(bad)[0])
                raise FormatError(path, None, f"row {row}: code {int(vals[row])} is not one of the enum's "
                                              f"values {list(labels.values())}")
        if nullable and item:
            if enc == "Float16":
                raise FormatError(path, None, "nullable f16 list elements have no layout (Rust has no "
                                              "Vec<Option<f16>>; make the item field non-nullable)")
            return _fill_item(vals, valid, enc, path)
        node = scalar_node(enc, codec)
        node.labels = labels
        return _wrap(C.Prim(vals, "enum" if codec == S.ENUM else "num", node), node, own_valid, item, path)
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return _temporal(pa, arr, t, valid, own_valid, item, path)
    if _is_uuid_type(pa, t) or pa.types.is_fixed_size_binary(t):
        return _uuid_from_arrow(pa, arr, t, md, inner, zero, own_valid, item, path)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t) or \
            (hasattr(pa, "JsonType") and isinstance(t, pa.JsonType)) or pa.types.is_binary(t) or \
            pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        is_json = codec_md == S.JSON or getattr(t, "extension_name", None) == "arrow.json"
        if isinstance(t, pa.ExtensionType):
            arr = arr.storage
            t = arr.type
        binary = pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
        arr = arr.cast(pa.large_binary() if binary else pa.large_string())
        offsets, data = _arrow_bytes(arr, np)
        if zero is not None and has_nulls:
            offsets, data = _blank(offsets, data, zero)
        if binary:
            node = S.Node("blob", codec=S.BINCODE, logical_type="bytes")
            if item:
                raise FormatError(path, None, "binary (blob) values cannot be list elements")
            return _wrap(C.Str(offsets, data, "binary", node), node, own_valid, item, path)
        if codec_md == S.CHAR:
            return _chars(offsets, data, zero, own_valid, item, path)
        if item:
            node = S.Node("string_values", encoded_type="String", logical_type="alloc::string::String")
            col = C.Str(offsets, data, "utf8", node)
            if nullable:
                nn = nullable_node(node)
                col.valid = own_valid
                col.node = nn
                return col, nn
            return col, node
        hkind = inner.get("kind")
        if opts.entries:
            # A map's entries: the vls layout unless the node says otherwise (SPEC.md 4.5).
            vls = hkind != "scalar"
        else:
            vls = opts.vls(path) or hkind == "vls_string" or md.get("h5vec.kind") == "vls_string"
            vls = vls and (not is_json or hkind == "vls_string")
        if vls and is_json:
            if nullable:
                raise FormatError(path, None, "nullable JSON text cannot use the vls_string layout (JSON never "
                                              "has a placeholder)")
            node = json_vls_node()
            return C.Str(offsets, data, "json", node), node
        if vls:
            node = vls_node(nullable)
            return C.Str(offsets, data, "utf8", node, own_valid), node
        node = scalar_node("String", S.JSON if is_json else S.IDENTITY)
        return _wrap(C.Str(offsets, data, "json" if is_json else "utf8", node), node, own_valid, item, path)
    if pa.types.is_fixed_size_list(t):
        dims = []
        leaf_arr = arr
        while pa.types.is_fixed_size_list(leaf_arr.type):
            size = leaf_arr.type.list_size
            dims.append(size)
            leaf_arr = leaf_arr.values.slice(leaf_arr.offset * size, len(leaf_arr) * size)
        flat_field = field.with_type(leaf_arr.type).with_nullable(False)
        if leaf_arr.null_count:
            total = int(np.prod(dims))
            rows_ok = np.asarray(leaf_arr.is_valid()).reshape(n, total).all(axis=1)
            bad = ~rows_ok & (valid if valid is not None else True)
            if np.any(bad):
                raise FormatError(path, None, "null elements inside a fixed-size array cannot be stored "
                                              "(only whole rows can be null)")
        rows_valid = valid if valid is not None else parent_valid
        elem_valid = None if rows_valid is None else np.repeat(rows_valid, int(np.prod(dims)))
        leaf_hint = dict(inner, kind="scalar") if inner.get("kind") == "dense" else inner or None
        leaf, lnode = from_arrow(leaf_arr, flat_field.with_metadata(_md_without_schema(field)), path, opts,
                                 elem_valid, hint=leaf_hint)
        if lnode.kind != "scalar" or lnode.encoded_type == "String" and lnode.codec != S.CHAR or \
                lnode.codec in S.TIME_CODECS:
            raise FormatError(path, None, f"fixed-size lists of {leaf_arr.type} cannot be stored (dense "
                                          "elements are numbers, bools or chars)")
        vals = leaf.values.reshape((n,) + tuple(dims))
        if zero is not None and has_nulls:
            vals = vals.copy()
            vals[zero] = 0
        node = dense_node(lnode.encoded_type, dims, lnode.codec)
        node.labels = lnode.labels
        return _wrap(C.Prim(vals, leaf.tag, node), node, own_valid, item, path)
    is_map = pa.types.is_map(t)
    if is_map or pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or \
            pa.types.is_large_list_view(t):
        if not (is_map or pa.types.is_list(t) or pa.types.is_large_list(t)):
            arr = arr.cast(pa.large_list(t.value_field))
            t = arr.type
        offs = np.asarray(arr.offsets).astype(np.int64)
        values = arr.values
        if zero is not None and has_nulls:
            lens = np.diff(offs)
            if (lens[zero] != 0).any():
                keep_lens = np.where(zero, 0, lens)
                new_offs = np.zeros(n + 1, np.int64)
                np.cumsum(keep_lens, out=new_offs[1:])
                idx = np.repeat(offs[:-1] - new_offs[:-1], keep_lens) + np.arange(int(new_offs[-1]))
                values = values.take(pa.array(idx))
                offs = new_offs
        base = int(offs[0])
        values = values.slice(base, int(offs[-1]) - base)
        offs = offs - base
        if is_map:
            kf, vf = t.key_field, t.item_field
            if values.null_count:
                raise FormatError(path + "[]", None, "null map entries (the entry itself, not its value) "
                                                     "cannot be stored")
            entries = pa.StructArray.from_arrays(
                [values.field(0), values.field(1)],
                fields=[kf.with_name("key").with_nullable(False), vf.with_name("value")])
            ehint = _kid(inner, 0) if inner.get("kind") == "list" else None
            child, cnode = from_arrow(entries, pa.field("entries", entries.type, nullable=False), path + "[]",
                                      opts.for_entries(), None, item=True, hint=ehint)
            cnode.logical_type = f"({cnode.children[0].logical_type}, {cnode.children[1].logical_type})"
            node = map_node(cnode)
        else:
            child, cnode = from_arrow(values, t.value_field, path + "[]", opts, None, item=True,
                                      hint=_kid(inner, 0) if inner.get("kind") == "list" else None)
            node = list_node(cnode)
        col = C.List(offs, child, node)
        if nullable:
            nn = nullable_node(node)
            col.valid, col.node = own_valid, nn
            return col, nn
        return col, node
    if pa.types.is_struct(t):
        if md.get(UNION_KEY) == "flat" or inner.get("kind") == "union":
            return _union_flat(pa, arr, field, path, opts, parent_valid, item, hint, valid, own_valid)
        enc = md.get("h5vec.encoded_type") or inner.get("encoded_type")
        if enc in COMPLEX:
            return _complex_from_arrow(pa, arr, t, enc, zero, own_valid, item, path)
        if item and nullable:
            raise FormatError(path, None, "nullable records cannot be list elements (make the item field "
                                          "non-nullable)")
        names, cols, nodes = [], [], []
        pv = valid if valid is not None else parent_valid
        for i in range(t.num_fields):
            f = t.field(i)
            if not f.name or f.name in (".", "..") or "/" in f.name or "\0" in f.name:
                raise FormatError(f"{path}.{f.name}", None, f"invalid field name {f.name!r}")
            if nullable and f.name == "MASK":
                raise FormatError(f"{path}.{f.name}", None,
                                  "a field named MASK cannot sit beside the null mask of a nullable record")
            c, cn = from_arrow(arr.field(i), f, f"{path}.{f.name}", opts, pv, hint=_field_kid(inner, f.name))
            names.append(f.name)
            cols.append(c)
            nodes.append(cn)
        if not names:
            node = S.Node("constant", codec=constant_codec(), logical_type="python.unit")
            return C.Const(n, node), node
        node = record_node(names, nodes, codec_md == S.TUPLE)
        if codec_md == S.OFFSET_DATE_TIME_CODEC:
            _check_offset_record(node, path)
            node.codec = S.OFFSET_DATE_TIME_CODEC
            node.logical_type = "chrono::datetime::DateTime<chrono::offset::fixed::FixedOffset>"
        col = C.Rec(n, names, cols, node)
        if item:
            return col, node
        return _wrap(col, node, own_valid, item, path)
    raise FormatError(path, None, f"Arrow type {t} has no h5vec storage kind (SPEC.md section 11 lists the "
                                  "types h5vec stores)")


def _md_without_schema(field):
    """A field's metadata without its h5vec.schema (a dense node handed to its elements)."""
    return {k: v for k, v in _md(field).items() if k != SCHEMA_KEY}


def _check_offset_record(node, path):
    """h5vec.OffsetDateTimeCodec: a record {instant: UTC instant, offset_seconds: Int32} (SPEC.md 4.6)."""
    ok = (node.field_names == ["instant", "offset_seconds"]
          and node.children[0].kind == "scalar" and node.children[0].codec == S.INSTANT_CODEC
          and node.children[0].time_zone == "UTC"
          and node.children[1].kind == "scalar" and node.children[1].encoded_type == "Int32")
    if not ok:
        raise FormatError(path, None, "expected a struct {instant: timestamp with time zone UTC, offset_seconds: "
                                      "int32} for h5vec.OffsetDateTimeCodec, found "
                                      f"{list(zip(node.field_names, [c.codec for c in node.children]))}")


# ---------------------------------------------------------------------------
# Instants, dates, times of day, durations (SPEC.md section 4.6)

_PER_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
RANGE_INSTANT = ("outside the instants Int64 nanoseconds since 1970-01-01T00:00:00 can hold "
                 "(1677-09-21T00:12:43.145224192 ..= 2262-04-11T23:47:16.854775807)")
RANGE_DURATION = "outside the durations Int64 nanoseconds can hold (about +-292 years)"


def _scaled(raw, m, valid, path, what, show):
    """int64 values times m, checked: a product past Int64 (outside a null) is an error naming the row."""
    if m == 1:
        return raw
    lo, hi = -((1 << 63) // m), I64_MAX // m
    bad = (raw < lo) | (raw > hi)
    if valid is not None:
        bad &= valid
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FormatError(f"{path}[{i}]", None, f"{show(int(raw[i]))} is {what}")
    return np.where(bad, 0, raw) * np.int64(m) if valid is not None else raw * np.int64(m)


def _temporal(pa, arr, t, valid, own_valid, item, path):
    n = len(arr)
    if pa.types.is_date32(t):
        vals = np.asarray(arr.view(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False), dtype="<i4")
        node = time_node(S.DATE_CODEC)
        return _wrap(C.Prim(np.ascontiguousarray(vals), "num", node), node, own_valid, item, path)
    if pa.types.is_date64(t):
        raise FormatError(path, None, "Arrow date64 has no h5vec kind (a date is Int32 days: cast to date32, "
                                      "or to timestamp for an instant)")
    width = pa.int32() if t.bit_width == 32 else pa.int64()
    raw = np.asarray(arr.view(width).fill_null(0).to_numpy(zero_copy_only=False)).astype(np.int64)
    m = _PER_UNIT[t.unit]
    if pa.types.is_timestamp(t):
        def show(v):
            return f"{np.datetime64(v, t.unit)} ({v} {t.unit} since 1970)"
        vals = _scaled(raw, m, valid, path, RANGE_INSTANT, show)
        node = time_node(S.INSTANT_CODEC, t.tz if t.tz else None)
    elif pa.types.is_duration(t):
        vals = _scaled(raw, m, valid, path, RANGE_DURATION, lambda v: f"{v} {t.unit}")
        node = time_node(S.DURATION_CODEC)
    else:  # time32 / time64
        vals = raw * np.int64(m)
        bad = (vals < 0) | (vals >= DAY_NS)
        if valid is not None:
            bad &= valid
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise FormatError(f"{path}[{i}]", None, f"{int(raw[i])} {t.unit} is not a time of day "
                                                    "(0 ..= 86399999999999 ns since midnight)")
        vals = np.where(bad, 0, vals) if valid is not None else vals
        node = time_node(S.TIME_OF_DAY_CODEC)
    if valid is not None:
        vals = np.where(valid, vals, 0)
    vals = np.ascontiguousarray(vals, dtype="<i8")
    assert len(vals) == n
    return _wrap(C.Prim(vals, "num", node), node, own_valid, item, path)


# ---------------------------------------------------------------------------
# UUIDs (SPEC.md section 4.7), complex numbers (4.8)


def _is_ext(pa, t):
    return isinstance(t, getattr(pa, "BaseExtensionType", pa.ExtensionType))


def _is_uuid_type(pa, t):
    return _is_ext(pa, t) and getattr(t, "extension_name", None) == "arrow.uuid"


def _uuid_from_arrow(pa, arr, t, md, inner, zero, own_valid, item, path):
    ext = _is_uuid_type(pa, t)
    storage = arr.storage if _is_ext(pa, t) else arr
    st = storage.type
    said = ext or md.get("h5vec.codec") == S.UUID_CODEC or inner.get("codec") == S.UUID_CODEC
    if not said or not pa.types.is_fixed_size_binary(st) or st.byte_width != 16:
        raise FormatError(path, None, f"Arrow type {t} is stored only as a UUID: expected fixed_size_binary(16) "
                                      "with the arrow.uuid extension (pyarrow.uuid()) or the uuid schema node "
                                      f"(codec {S.UUID_CODEC}) in its {SCHEMA_KEY} metadata")
    n = len(storage)
    buf = storage.buffers()[1]
    vals = np.frombuffer(buf, np.uint8)[storage.offset * 16:(storage.offset + n) * 16].reshape(n, 16).copy() \
        if buf is not None else np.zeros((n, 16), np.uint8)
    if zero is not None:
        vals[zero] = 0
    if own_valid is not None and item:
        raise FormatError(path, None, "nullable UUID list elements have no layout (Rust has no "
                                      "Vec<Option<Uuid>>; make the item field non-nullable)")
    node = uuid_node()
    return _wrap(C.Prim(vals, "num", node), node, own_valid, item, path)


def _complex_from_arrow(pa, arr, t, enc, zero, own_valid, item, path):
    part = COMPLEX[enc]
    want = pa.float32() if part == "Float32" else pa.float64()
    if t.num_fields != 2 or t.field(0).name != "r" or t.field(1).name != "i" or \
            not t.field(0).type.equals(want) or not t.field(1).type.equals(want):
        raise FormatError(path, None, f"expected struct<r: {want}, i: {want}> for {enc} (complex numbers), "
                                      f"found {t}")
    n = len(arr)
    out = np.zeros(n, S.NUMBERS[enc])
    pairs = out.view(S.NUMBERS[part]).reshape(n, 2)
    for k in (0, 1):
        child = arr.field(k)
        if child.null_count:
            cv = np.asarray(child.is_valid())
            bad = ~cv if zero is None else (~cv & ~zero)
            if bad.any():
                raise FormatError(f"{path}[{int(np.flatnonzero(bad)[0])}]", None,
                                  f"null `{t.field(k).name}` part of a complex number (both parts are non-null)")
            child = child.fill_null(0)
        pairs[:, k] = child.to_numpy(zero_copy_only=False)
    if zero is not None:
        out[zero] = 0
    if own_valid is not None and item:
        raise FormatError(path, None, "nullable complex list elements have no layout (Rust has no "
                                      "Vec<Option<Complex<T>>>; make the item field non-nullable)")
    node = scalar_node(enc)
    return _wrap(C.Prim(out, "num", node), node, own_valid, item, path)


# ---------------------------------------------------------------------------
# Enums with data (SPEC.md section 4.4): Arrow dense unions and the flat form


def _union_dense(arr, field, path, opts, parent_valid, item, hint):
    """A dense Union whose type ids are 0, 1, ... in order: one variant per child
    (a Struct of its fields; a Struct without fields for a unit variant). A row is
    null when its child row is null (Arrow unions have no validity)."""
    pa = _need_pa()
    t = arr.type
    if t.mode != "dense":
        raise FormatError(path, None, "expected a dense Arrow union (enums with data are stored densely), "
                                      "found a sparse union")
    k = t.num_fields
    if list(t.type_codes) != list(range(k)):
        raise FormatError(path, None, f"expected a union with type ids 0, 1, ... in order (the stored tags), "
                                      f"found {list(t.type_codes)}")
    names = [t.field(i).name for i in range(k)]
    inner = _inner(hint) or {}
    want = _hint_labels(inner) if inner.get("kind") == "union" else None
    if want is not None and list(want) != names:
        raise FormatError(path, None, f"expected the variants {list(want)} of the field's schema node, "
                                      f"found union children {names}")
    n = len(arr)
    bufs = arr.buffers()
    tags = np.frombuffer(bufs[1], np.int8)[arr.offset:arr.offset + n].astype(np.int64) if n else \
        np.zeros(0, np.int64)
    offs = np.frombuffer(bufs[2], np.int32)[arr.offset:arr.offset + n].astype(np.int64) if n else \
        np.zeros(0, np.int64)
    bad = (tags < 0) | (tags >= k)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FormatError(f"{path}[{i}]", None, f"type id {int(tags[i])} names no variant (0..{k - 1})")
    row_valid = np.ones(n, bool)
    sources = []
    for v in range(k):
        child = arr.field(v)
        rows = np.flatnonzero(tags == v)
        out = (offs[rows] >= len(child)) | (offs[rows] < 0)
        if out.any():
            i = int(rows[np.flatnonzero(out)[0]])
            raise FormatError(f"{path}[{i}]", None, f"offset {int(offs[i])} is past variant {names[v]!r}'s "
                                                    f"{len(child)} rows")
        if child.null_count and len(rows):
            row_valid[rows] = np.asarray(child.is_valid())[offs[rows]]
        if not pa.types.is_struct(child.type):
            raise FormatError(f"{path}.{names[v]}", None, f"expected a struct of the variant's fields, found "
                                                          f"{child.type}")
        sources.append((child, t.field(v), offs))
    return _build_union(pa, n, tags, row_valid, sources, names, field, path, opts, parent_valid, item, inner)


def _union_flat(pa, arr, field, path, opts, parent_valid, item, hint, valid, own_valid):
    """The flat form: a struct of `variant` (the variant's name) and one struct per
    variant that has fields, non-null on that variant's rows; the union node comes
    from the field's h5vec.schema."""
    inner = _inner(hint) or {}
    labels = _hint_labels(inner) if inner.get("kind") == "union" else None
    if not labels:
        raise FormatError(path, None, f"the flat form of an enum with data needs the union's schema node in the "
                                      f"field's {SCHEMA_KEY} metadata (with its variant_names)")
    names = list(labels)
    if "variant" in names:
        raise FormatError(path, None, "a variant named `variant` cannot use the flat form (its `variant` "
                                      "column holds the variant names)")
    t = arr.type
    n = len(arr)
    idx = t.get_field_index("variant")
    if idx < 0:
        raise FormatError(path, None, f"expected a `variant` column in the flat form, found fields "
                                      f"{[t.field(i).name for i in range(t.num_fields)]}")
    kinds = [(_kid(inner, v) or {}).get("kind") for v in range(len(names))]
    allowed = {"variant"} | {nm for nm, kd in zip(names, kinds) if kd != "constant"}
    for i in range(t.num_fields):
        if t.field(i).name not in allowed:
            raise FormatError(f"{path}.{t.field(i).name}", None,
                              f"expected only `variant` and the variants with fields {sorted(allowed - {'variant'})} "
                              "in the flat form")
    present = np.ones(n, bool) if valid is None else valid.copy()
    if parent_valid is not None:
        present &= parent_valid
    vcol = arr.field(idx)
    if pa.types.is_dictionary(vcol.type):
        vcol = vcol.dictionary_decode()
    if not (pa.types.is_string(vcol.type) or pa.types.is_large_string(vcol.type) or
            pa.types.is_string_view(vcol.type)):
        raise FormatError(f"{path}.variant", None, f"expected the variant names as strings (or a dictionary "
                                                   f"of them), found {vcol.type}")
    import pyarrow.compute as pc
    vcol = vcol.cast(pa.large_string())
    pos = np.asarray(pc.index_in(vcol, value_set=pa.array(names, pa.large_string())).fill_null(-1)
                     .to_numpy(zero_copy_only=False)).astype(np.int64)
    vnull = np.asarray(vcol.is_null())
    if (present & vnull).any():
        i = int(np.flatnonzero(present & vnull)[0])
        raise FormatError(f"{path}[{i}]", None, "the `variant` column is null in a row that holds a value")
    if (present & (pos < 0)).any():
        i = int(np.flatnonzero(present & (pos < 0))[0])
        raise FormatError(f"{path}[{i}]", None, f"variant {vcol[i].as_py()!r} is not one of {names}")
    tags = np.where(present, pos, 0)
    sources = []
    for v, nm in enumerate(names):
        if kinds[v] == "constant" or (kinds[v] is None and t.get_field_index(nm) < 0):
            sources.append(None)
            continue
        j = t.get_field_index(nm)
        if j < 0:
            raise FormatError(f"{path}.{nm}", None, f"the flat form has no struct for variant {nm!r}")
        child = arr.field(j)
        if not pa.types.is_struct(child.type):
            raise FormatError(f"{path}.{nm}", None, f"expected a struct of the variant's fields, found {child.type}")
        rows = np.flatnonzero(present & (tags == v))
        if child.null_count and len(rows):
            cv = np.asarray(child.is_valid())[rows]
            if not cv.all():
                i = int(rows[np.flatnonzero(~cv)[0]])
                raise FormatError(f"{path}[{i}]", None, f"the row is variant {nm!r} but its `{nm}` struct is null")
        sources.append((child, t.field(j), np.arange(n)))
    row_valid = np.ones(n, bool) if valid is None else valid
    return _build_union(pa, n, tags, row_valid, sources, names, field, path, opts, parent_valid, item, inner)


def _build_union(pa, n, tags, row_valid, sources, names, field, path, opts, parent_valid, item, inner):
    """The union column of `n` rows: `tags` per row, `row_valid` (False: a null row),
    `sources[v]` = (the variant's Arrow struct array, its field, per-row index into it)
    or None for a unit variant. Null rows (and rows under a null parent) become
    placeholder rows of the first variant, as Rust writes them (SPEC.md 4.4)."""
    nullable = field.nullable
    if not nullable:
        bad = ~row_valid if parent_valid is None else (~row_valid & parent_valid)
        if bad.any():
            raise FormatError(f"{path}[{int(np.flatnonzero(bad)[0])}]", None,
                              f"the row is null but the Arrow field `{field.name}` is not nullable "
                              "(set nullable=True in the schema)")
    if item and nullable:
        raise FormatError(path, None, "nullable enums with data cannot be list elements (Rust has no "
                                      "Vec<Option<Enum>>; make the item field non-nullable)")
    present = row_valid.copy()
    if parent_valid is not None:
        present &= parent_valid
    tags = np.where(present, tags, 0)
    for nm in names:
        if not nm or nm in (".", "..", "TAG", "INDEX") or "/" in nm or "\0" in nm:
            raise FormatError(path, None, f"invalid variant name {nm!r} (variants sit beside TAG and INDEX)")
    if len(names) > S.MAX_VARIANTS:
        raise FormatError(path, None, f"{len(names)} variants (at most {S.MAX_VARIANTS})")
    offsets = np.zeros(n, np.int64)
    cols, nodes = [], []
    for v, nm in enumerate(names):
        rows = np.flatnonzero(tags == v)
        offsets[rows] = np.arange(len(rows))
        pres = present[rows]
        vpath = f"{path}.{nm}"
        vhint = _kid(inner, v) if inner.get("kind") == "union" else None
        src = sources[v]
        if src is not None and src[0].type.num_fields == 0:
            src = None
        if src is None:
            node = S.Node("constant", codec=S.CONSTANT_CODEC, logical_type="()")
            cols.append(C.Const(len(rows), node))
            nodes.append(node)
            continue
        child, cfield, index = src
        pick = index[rows]
        take = pa.array(pick, type=pa.int64(), mask=~pres) if not pres.all() else pa.array(pick, type=pa.int64())
        sub = child.take(take)
        vfield = pa.field(nm, sub.type, nullable=False, metadata=cfield.metadata)
        col, node = from_arrow(sub, vfield, vpath, opts, pres, hint=vhint)
        if node.kind != "record":
            raise FormatError(vpath, None, f"expected the variant's fields as a struct, found a {node.kind}")
        vmd = _md(cfield)
        vcodec = vmd.get("h5vec.codec") or (vhint or {}).get("codec")
        if vcodec == S.TUPLE or (vcodec is None and node.field_names == [str(i + 1) for i in
                                                                         range(len(node.field_names))]):
            node.codec = S.TUPLE
        cols.append(col)
        nodes.append(node)
    node = union_node(names, nodes)
    col = C.Union(tags, offsets, names, cols, node)
    if not nullable:
        return col, node
    nn = nullable_node(node)
    col.valid = row_valid
    col.node = nn
    return col, nn


def _wrap(col, node, valid, item, path):
    if valid is None:
        return col, node
    if item:
        raise FormatError(path, None, f"nullable {node.kind} values cannot be list elements "
                                      "(only numbers, strings and lists can; make the item field non-nullable)")
    nn = nullable_node(node)
    col.valid = valid
    col.node = nn
    return col, nn


def _fill_item(vals, valid, enc, path):
    fill = fill_value(enc)
    if np.any(vals[valid] == fill):
        i = int(np.flatnonzero(valid & (vals == fill))[0])
        raise FormatError(f"{path}[{i}]", None, f"value {fill!r} equals the fill value that marks a missing "
                                                "element (h5col's rule): it would read back as null")
    vals = np.where(valid, vals, fill).astype(S.NUMBERS[enc])
    node = S.Node("fill_nullable", encoded_type=enc, logical_type=f"core::option::Option<{RUST_NAMES[enc]}>")
    return C.Prim(vals, "num", node, valid), node


def fill_value(enc):
    dt = S.NUMBERS[enc]
    if dt.kind == "f":
        return dt.type(9.969209968386869e36)
    if dt.kind == "i":
        return dt.type(np.iinfo(dt).min + 1)
    return dt.type(np.iinfo(dt).max)


def _chars(offsets, data, zero, valid, item, path):
    lens = np.diff(offsets)
    if zero is not None:
        lens = np.where(zero, 1, lens)
        # Placeholder rows hold the empty string: give them '\0'.
        offsets, data = _blank(offsets, data, zero)
    # One code point per row: decode all at once.
    text = C.decode_strings(offsets, data)
    if zero is not None:
        text[zero] = "\0"
    lengths = np.fromiter(map(len, text), np.int64, len(text))
    if (lengths != 1).any():
        i = int(np.flatnonzero(lengths != 1)[0])
        raise FormatError(path, None, f"row {i}: a char column needs exactly one character per row, "
                                      f"found {text[i]!r}")
    codes = np.array(text.astype("U1")).view("<u4").astype("<i4") if len(text) else np.zeros(0, "<i4")
    codes[np.array([t == "\0" for t in text], bool) if len(text) else np.zeros(0, bool)] = 0
    node = scalar_node("Int32", S.CHAR, "char")
    return _wrap(C.Prim(codes, "char", node), node, valid, item, path)


def _arrow_bytes(arr, np):
    """(offsets int64 from 0, data uint8) of a large_string / large_binary array."""
    bufs = arr.buffers()
    n = len(arr)
    if bufs[1] is None:
        return np.zeros(n + 1, np.int64), np.zeros(0, np.uint8)
    offs = np.frombuffer(bufs[1], np.int64)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    base = int(offs[0])
    data = data[base:int(offs[-1])]
    return offs - base, data


def _blank(offsets, data, zero):
    """Makes the rows `zero` empty strings (the placeholder under a null)."""
    lens = np.diff(offsets)
    if not (lens[zero] != 0).any():
        return offsets, data
    keep = np.where(zero, 0, lens)
    new = np.zeros(len(offsets), np.int64)
    np.cumsum(keep, out=new[1:])
    idx = np.repeat(offsets[:-1] - new[:-1], keep) + np.arange(int(new[-1]))
    return new, data[idx]


def _strict_type(pa, t):
    """`t` with every nested field (list items, struct fields, map values) non-nullable."""
    if pa.types.is_map(t):
        return pa.map_(pa.field("key", _strict_type(pa, t.key_type), nullable=False),
                       pa.field("value", _strict_type(pa, t.item_type), nullable=False))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        f = pa.field(t.value_field.name, _strict_type(pa, t.value_type), nullable=False,
                     metadata=t.value_field.metadata)
        return pa.large_list(f) if pa.types.is_large_list(t) else pa.list_(f)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(pa.field("item", _strict_type(pa, t.value_type), nullable=False,
                                 metadata=t.value_field.metadata), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _strict_type(pa, t.field(i).type), nullable=False,
                                   metadata=t.field(i).metadata)
                          for i in range(t.num_fields)])
    return t


_EXACT_UNITS = ("s", "ms", "us", "ns")


def _nat_rows(arr):
    return np.flatnonzero(np.isnat(arr)) if arr.dtype.kind in "Mm" else np.zeros(0, np.int64)


def _datetime_to_arrow(pa, name, arr, masked):
    """numpy datetime64 / timedelta64 -> Arrow timestamp / date32 / duration: units
    Arrow lacks are converted exactly (an error naming the row otherwise)."""
    unit, count = np.datetime_data(arr.dtype)
    path = f"$.{name}"
    if unit == "generic":
        raise FormatError(path, None, f"numpy dtype {arr.dtype} has no unit")
    nat = _nat_rows(arr)
    if len(nat) and not masked:
        raise FormatError(f"{path}[{int(nat[0])}]", None,
                          "NaT in a column that is not nullable (a Rust type without Option): use a "
                          "numpy.ma.MaskedArray, or schema= with a nullable field")
    kind = arr.dtype.kind
    if kind == "M" and unit == "D" and count == 1:
        return pa.array(arr), pa.field(name, pa.date32(), nullable=False)
    if unit in _EXACT_UNITS and count == 1:
        a = pa.array(arr)
    else:
        target = "ns" if unit in ("ps", "fs", "as") else "s"
        if kind == "m" and unit in ("Y", "M"):
            raise FormatError(path, None, f"numpy dtype {arr.dtype}: years and months are not a fixed length "
                                          "of time (use days or a finer unit)")
        conv = arr.astype(f"{kind}8[{target}]")
        back = conv.astype(arr.dtype)
        ok = (back.view("i8") == arr.view("i8")) | np.isnat(arr)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise FormatError(f"{path}[{i}]", None, f"{arr[i]} is not a whole number of {target} (or is outside "
                                                    "Int64 of them)")
        a = pa.array(conv)
    return a, pa.field(name, a.type, nullable=False)


def _complex_to_arrow(pa, name, arr):
    """numpy complex64 / complex128 -> struct {r, i} (every bit kept), dense for 2-D and more."""
    enc = S.ENCODED_OF[arr.dtype.newbyteorder("<")]
    part = S.NUMBERS[COMPLEX[enc]]
    flat = np.ascontiguousarray(arr, dtype=S.NUMBERS[enc]).reshape(-1)
    pairs = flat.view(part).reshape(-1, 2)
    ft = pa.float32() if COMPLEX[enc] == "Float32" else pa.float64()
    a = pa.StructArray.from_arrays([pa.array(pairs[:, 0].copy()), pa.array(pairs[:, 1].copy())],
                                   fields=[pa.field("r", ft, nullable=False), pa.field("i", ft, nullable=False)])
    md = {"h5vec.encoded_type": enc}
    for d in reversed(arr.shape[1:]):
        a = pa.FixedSizeListArray.from_arrays(a, int(d))
    t = _strict_type(pa, a.type)
    return a.cast(t) if not a.type.equals(t) else a, pa.field(name, t, nullable=False, metadata=md)


def _uuid_type(pa):
    return pa.uuid() if hasattr(pa, "uuid") else pa.binary(16)


UUID_MD = {"h5vec.codec": S.UUID_CODEC}


def _uuid_array(pa, raw16):
    """(n, 16) uint8 -> a UUID Arrow array (arrow.uuid when pyarrow has it) and its field metadata."""
    n = len(raw16)
    storage = pa.Array.from_buffers(pa.binary(16), n, [None, pa.py_buffer(np.ascontiguousarray(raw16).tobytes())])
    if hasattr(pa, "uuid"):
        return pa.ExtensionArray.from_storage(pa.uuid(), storage), UUID_MD
    return storage, UUID_MD


def _uuids_to_arrow(pa, vals, path):
    """A sequence of uuid.UUID (or None) -> UUID Arrow array, nulls where None."""
    raw = np.zeros((len(vals), 16), np.uint8)
    valid = np.ones(len(vals), bool)
    for i, v in enumerate(vals):
        if v is None:
            valid[i] = False
        elif isinstance(v, _uuid.UUID):
            raw[i] = np.frombuffer(v.bytes, np.uint8)
        elif isinstance(v, (bytes, bytearray)) and len(v) == 16:
            raw[i] = np.frombuffer(bytes(v), np.uint8)
        else:
            raise FormatError(f"{path}[{i}]", None, f"expected a uuid.UUID (or 16 bytes), found {v!r}")
    a, md = _uuid_array(pa, raw)
    return (a if valid.all() else _with_nulls(pa, a, ~valid)), md


def _is_missing(v):
    """None, pandas' NA and NaT: a null in an object column (NaN is a float value)."""
    if v is None:
        return True
    t = type(v).__name__
    return t in ("NAType", "NaTType")


def _dicts_to_arrow(pa, vals, path):
    """Python dicts (None for null rows) -> an Arrow map (keys and values typed by
    pyarrow's inference, nested dicts as maps too)."""
    offs = np.zeros(len(vals) + 1, np.int32)
    keys, items = [], []
    valid = np.ones(len(vals), bool)
    for i, d in enumerate(vals):
        if _is_missing(d):
            valid[i] = False
        elif isinstance(d, dict):
            keys.extend(d.keys())
            items.extend(d.values())
        else:
            raise FormatError(f"{path}[{i}]", None, f"expected a dict (a map) like the column's other rows, "
                                                    f"found {type(d).__name__}")
        offs[i + 1] = len(keys)
    ka = _objects_to_arrow(pa, keys, path + "[].key")
    va = _objects_to_arrow(pa, items, path + "[].value")
    mask = None if valid.all() else pa.array(~valid)
    return pa.MapArray.from_arrays(pa.array(offs), ka, va, mask=mask)


def _objects_to_arrow(pa, vals, path):
    """A list of Python objects -> Arrow: dicts become maps, uuid.UUIDs UUIDs,
    anything else what pyarrow infers."""
    first = next((v for v in vals if not _is_missing(v)), None)
    if isinstance(first, dict):
        return _dicts_to_arrow(pa, vals, path)
    if isinstance(first, _uuid.UUID):
        return _uuids_to_arrow(pa, vals, path)[0]
    try:
        return pa.array([None if _is_missing(v) else v for v in vals])
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise FormatError(path, None, f"the values have no common Arrow type: {e}") from None


def _numpy_to_arrow(pa, name, arr):
    """One numpy (or masked) array -> (pyarrow array, field) with nullability from its class."""
    if isinstance(arr, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(arr)
        rowmask = mask.reshape(len(arr), -1).all(axis=1) if arr.ndim > 1 else mask
        if arr.dtype.kind in "biufc":
            data = arr.filled(0)
        else:
            data = np.array(arr.data, copy=True)
            if arr.dtype.kind in "Mm":
                data.view("i8")[rowmask] = 0
        a, f = _numpy_to_arrow(pa, name, data)
        a = _with_nulls(pa, a, rowmask)
        return a, f.with_nullable(True)
    arr = np.asarray(arr)
    if arr.dtype.kind == "c":
        return _complex_to_arrow(pa, name, arr)
    if arr.dtype.kind in "Mm":
        if arr.ndim != 1:
            raise FormatError(f"$.{name}", None, f"{arr.ndim}-D arrays of {arr.dtype} have no h5vec kind")
        return _datetime_to_arrow(pa, name, arr, False)
    if arr.dtype.kind == "V" and arr.dtype.names is None:
        if arr.dtype.itemsize != 16 or arr.ndim != 1:
            raise FormatError(f"$.{name}", None, f"numpy dtype {arr.dtype} (shape {arr.shape}) has no h5vec kind; "
                                                 "16-byte values (V16) in a 1-D array are UUIDs")
        a, md = _uuid_array(pa, np.frombuffer(np.ascontiguousarray(arr).tobytes(), np.uint8).reshape(-1, 16))
        return a, pa.field(name, a.type, nullable=False, metadata=md)
    if arr.dtype.kind in "biuf":
        if arr.ndim == 1:
            a = pa.array(arr)
        else:
            a = pa.array(arr.reshape(-1))
            for d in reversed(arr.shape[1:]):
                a = pa.FixedSizeListArray.from_arrays(a, int(d))
        return a, pa.field(name, _strict_type(pa, a.type), nullable=False)
    if arr.dtype.kind == "U":
        return pa.array(arr.astype(object), pa.large_string()), pa.field(name, pa.large_string(), nullable=False)
    if arr.dtype.kind == "S":
        return pa.array(arr.astype(object), pa.large_binary()), pa.field(name, pa.large_binary(), nullable=False)
    if arr.dtype.kind == "O":
        vals = arr.tolist() if arr.ndim == 1 else list(arr)
        first = next((v for v in vals if not _is_missing(v)), None)
        md = None
        if isinstance(first, _uuid.UUID):
            a, md = _uuids_to_arrow(pa, vals, f"$.{name}")
        else:
            a = _objects_to_arrow(pa, vals, f"$.{name}")
        if pa.types.is_string(a.type):
            a = a.cast(pa.large_string())
        if pa.types.is_binary(a.type):
            a = a.cast(pa.large_binary())
        t = _strict_type(pa, a.type)
        try:
            a = a.cast(t) if not a.type.equals(t) else a
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise FormatError(f"$.{name}", None, f"a None (or NaN) inside a value of an object column (a Rust "
                                                 f"type without Option); pass schema= with nullable fields: {e}") \
                from None
        return a, pa.field(name, t, nullable=False, metadata=md)
    raise FormatError(f"$.{name}", None, f"numpy dtype {arr.dtype} has no h5vec storage kind")


def _numpy_as(pa, name, v, f):
    """A numpy array as Arrow field `f` (schema=): object arrays (this package's numpy rows of
    maps, enums with data, lists) straight into the target type, anything else converted as
    usual, then conformed. NaT is null where the target is nullable."""
    f = _flat_target(pa, f)
    if v.dtype == object and not isinstance(v, np.ma.MaskedArray) and v.ndim == 1:
        if pa.types.is_fixed_size_list(f.type):
            return _conform(pa, _fixed_from_objects(pa, v, f, f"$.{name}"), f, f"$.{name}")
        vals = [_py_to(pa, x, f) for x in v.tolist()]
        try:
            return pa.array(vals, type=f.type), f
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            pass
    if v.dtype.kind in "Mm" and f.nullable and not isinstance(v, np.ma.MaskedArray):
        v = np.ma.MaskedArray(v, mask=np.isnat(v))
    a, _ = _numpy_to_arrow(pa, name, v)
    return _conform(pa, a, f, f"$.{name}")


def _with_nulls(pa, a, rowmask):
    """`a` with the rows of `rowmask` null."""
    if not rowmask.any():
        return a
    if _is_ext(pa, a.type):
        return pa.ExtensionArray.from_storage(a.type, _with_nulls(pa, a.storage, rowmask))
    if pa.types.is_struct(a.type):
        fields = [a.type.field(i) for i in range(a.type.num_fields)]
        return pa.StructArray.from_arrays([a.field(i) for i in range(len(fields))], fields=fields,
                                          mask=pa.array(rowmask))
    import pyarrow.compute as pc
    return pc.if_else(pa.array(~rowmask), a, pa.nulls(len(a), a.type))


ARROW_NUMBERS = {"Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64", "UInt8": "uint8",
                 "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64", "Float16": "float16",
                 "Float32": "float32", "Float64": "float64"}


def arrow_field_of(pa, name, node):
    """The Arrow field that saves back into schema node `node` (a dict, as `Vector.schema`
    gives, or the JSON spelling of SPEC.md section 11): its type, nullability and metadata
    (`h5vec.schema`, the node itself, on this field and every nested one)."""
    k = node["kind"]
    if k == "nullable":
        f = arrow_field_of(pa, name, node["children"][0])
        md = dict(_md(f))
        md[SCHEMA_KEY] = _node_json(node)
        return f.with_nullable(True).with_metadata(md)
    md = {"h5vec.kind": k, "h5vec.codec": node["codec"], SCHEMA_KEY: _node_json(node)}
    if node.get("encoded_type") is not None:
        md["h5vec.encoded_type"] = node["encoded_type"]
    labels = _hint_labels(node)
    if labels and k != "union":
        md["h5vec.labels"] = json.dumps(labels)
    codec = node["codec"]
    if k in ("scalar", "dense", "fill_nullable", "string_values"):
        enc = node.get("encoded_type")
        if codec == S.UUID_CODEC:
            return pa.field(name, _uuid_type(pa), nullable=False, metadata=md)
        if codec == S.INSTANT_CODEC:
            t = pa.timestamp("ns", tz=node.get("time_zone"))
        elif codec == S.DATE_CODEC:
            t = pa.date32()
        elif codec == S.TIME_OF_DAY_CODEC:
            t = pa.time64("ns")
        elif codec == S.DURATION_CODEC:
            t = pa.duration("ns")
        elif codec == S.CHAR or enc == "String":
            t = pa.large_string()
        elif enc == "Bool":
            t = pa.bool_()
        elif labels and codec == S.ENUM and k == "scalar":
            t = pa.dictionary(pa.int32(), pa.string())  # the labels, as reading gives them
        elif enc in COMPLEX:
            ft = getattr(pa, ARROW_NUMBERS[COMPLEX[enc]])()
            t = pa.struct([pa.field("r", ft, nullable=False), pa.field("i", ft, nullable=False)])
        else:
            t = getattr(pa, ARROW_NUMBERS[enc])()
        for d in node.get("dimensions") or []:
            t = pa.list_(pa.field("item", t, nullable=False), int(d))
        return pa.field(name, t, nullable=k == "fill_nullable", metadata=md)
    if k == "vls_string":
        return pa.field(name, pa.large_string(), nullable=codec == S.PLACEHOLDER_CODEC, metadata=md)
    if k == "list":
        if codec == S.MAP_CODEC:
            entry = node["children"][0]
            kf = arrow_field_of(pa, "key", entry["children"][0])
            vf = arrow_field_of(pa, "value", entry["children"][1])
            return pa.field(name, pa.map_(kf.with_nullable(False), vf), nullable=False, metadata=md)
        item = arrow_field_of(pa, "item", node["children"][0])
        return pa.field(name, pa.large_list(item), nullable=False, metadata=md)
    if k == "record":
        fields = [arrow_field_of(pa, f, c) for f, c in zip(node["field_names"], node["children"])]
        return pa.field(name, pa.struct(fields), nullable=False, metadata=md)
    if k == "union":
        # The flat form (the design of issue 27): `variant` and one struct per variant with fields.
        fields = [pa.field("variant", pa.dictionary(pa.int32(), pa.string()), nullable=False)]
        for vname, child in zip(labels or {}, node.get("children") or []):
            if child["kind"] == "record":
                vf = arrow_field_of(pa, vname, child)
                fields.append(vf.with_nullable(True))
        md[UNION_KEY] = "flat"
        return pa.field(name, pa.struct(fields), nullable=False, metadata=md)
    if k == "constant":
        return pa.field(name, pa.null(), nullable=True, metadata=md)
    if k == "blob":
        return pa.field(name, pa.large_binary(), nullable=False, metadata=md)
    raise FormatError(f"$.{name}", None, f"no Arrow type for schema kind {k!r}")


def arrow_schema_of(pa, node):
    """The pyarrow.Schema saving back into root node `node` (records: one column per field)."""
    node = _node_dict(node)
    meta = {SCHEMA_KEY: _node_json(node), "h5vec.root": node["kind"]}
    if node["kind"] == "record":
        return pa.schema([arrow_field_of(pa, f, c) for f, c in zip(node["field_names"], node["children"])],
                         metadata=meta)
    meta["h5vec.root"] = "value"
    return pa.schema([arrow_field_of(pa, ROOT, node)], metadata=meta)


def _conform(pa, arr, f, path):
    """`arr` in the Arrow type of target field `f` (from `schema=` or a DataFrame's
    column nodes): a cast where pyarrow has one, and the conversions it lacks
    (lists of {key, value} structs to maps, durations to times of day, instants
    to dates, binary to UUIDs, the flat union form from any struct of it).
    Returns (array, field): `f`, with the array's type where a union is kept as given."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t, s = f.type, arr.type
    if s.equals(t):
        return arr, f
    if pa.types.is_union(t) and pa.types.is_struct(s):
        f = _flat_target(pa, f)  # the data is the flat form of the union
        t = f.type
    md = _md(f)
    hint = _inner(_hint_of(md, path)) or {}
    try:
        if md.get(UNION_KEY) == "flat" or hint.get("kind") == "union":
            if pa.types.is_union(s):
                return arr, f.with_type(s)
            if pa.types.is_struct(s) and pa.types.is_struct(t):
                return _conform_struct(pa, arr, f, path, union=True)
        if pa.types.is_struct(t) and pa.types.is_struct(s):
            return _conform_struct(pa, arr, f, path)
        if pa.types.is_dictionary(t) and pa.types.is_integer(s) and md.get("h5vec.codec") == S.ENUM:
            return arr, f.with_type(s)  # an enum's stored codes (checked against its labels)
        if pa.types.is_map(t) and (pa.types.is_list(s) or pa.types.is_large_list(s)) and \
                pa.types.is_struct(s.value_type) and s.value_type.num_fields == 2:
            offs = np.asarray(arr.offsets).astype(np.int64)
            base = int(offs[0])
            vals = arr.values.slice(base, int(offs[-1]) - base)
            k, _ = _conform(pa, vals.field(0), t.key_field, path + "[].key")
            v, _ = _conform(pa, vals.field(1), t.item_field, path + "[].value")
            mask = None if arr.null_count == 0 else pa.array(~np.asarray(arr.is_valid()))
            out = pa.MapArray.from_arrays(pa.array((offs - base).astype(np.int32)), k, v, mask=mask)
            return out.cast(t), f
        if pa.types.is_map(t) and pa.types.is_map(s):
            offs = np.asarray(arr.offsets).astype(np.int64)
            base, end = int(offs[0]), int(offs[-1])
            k, _ = _conform(pa, arr.keys.slice(base, end - base), t.key_field, path + "[].key")
            v, _ = _conform(pa, arr.items.slice(base, end - base), t.item_field, path + "[].value")
            mask = None if arr.null_count == 0 else pa.array(~np.asarray(arr.is_valid()))
            out = pa.MapArray.from_arrays(pa.array((offs - base).astype(np.int32)), k, v, mask=mask)
            return out.cast(t), f
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and \
                (pa.types.is_list(s) or pa.types.is_large_list(s) or pa.types.is_list_view(s)):
            if not (pa.types.is_list(s) or pa.types.is_large_list(s)):
                arr = arr.cast(pa.large_list(s.value_field))
            offs = np.asarray(arr.offsets).astype(np.int64)
            base = int(offs[0])
            vals, vf = _conform(pa, arr.values.slice(base, int(offs[-1]) - base), t.value_field, path + "[]")
            mask = None if arr.null_count == 0 else pa.array(~np.asarray(arr.is_valid()))
            out = pa.LargeListArray.from_arrays(pa.array(offs - base), vals, type=pa.large_list(vf), mask=mask)
            return out, f.with_type(out.type)
        if pa.types.is_time(t) and pa.types.is_duration(s):
            out = _time_checked(pa, arr.cast(pa.duration("ns")).view(pa.int64()), path)
            return (out if out.type.equals(t) else out.cast(t)), f
        if pa.types.is_date32(t) and (pa.types.is_timestamp(s) or pa.types.is_date64(s)):
            unit = "ms" if pa.types.is_date64(s) else s.unit
            per_day = DAY_NS // _PER_UNIT[unit]
            raw = np.asarray(arr.view(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False))
            ok = np.asarray(arr.is_valid())
            bad = (raw % per_day != 0) & ok
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise FormatError(f"{path}[{i}]", None, f"{np.datetime64(int(raw[i]), unit)} is not midnight "
                                                        "(a date holds whole days)")
            days = raw // per_day
            out = (days < -(1 << 31)) | (days >= 1 << 31)
            if (out & ok).any():
                i = int(np.flatnonzero(out & ok)[0])
                raise FormatError(f"{path}[{i}]", None, f"{int(days[i])} days is outside Int32 days")
            days = pa.array(np.where(ok, days, 0).astype(np.int32), mask=~ok if not ok.all() else None)
            return days.cast(pa.date32()), f
        if _is_uuid_type(pa, t) or (pa.types.is_fixed_size_binary(t) and t.byte_width == 16):
            if _is_uuid_type(pa, s):
                arr = arr.storage
            if pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type) or \
                    pa.types.is_binary_view(arr.type):
                import pyarrow.compute as pc
                lens = np.asarray(pc.binary_length(arr).fill_null(16).to_numpy(zero_copy_only=False))
                if (lens != 16).any():
                    i = int(np.flatnonzero(lens != 16)[0])
                    raise FormatError(f"{path}[{i}]", None, f"a UUID is 16 bytes, found {int(lens[i])}")
            return arr.cast(t), f
        return arr.cast(t), f
    except FormatError:
        raise
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise FormatError(path, None, f"expected {t} (the schema's type for this field), found {s}: {e}") from None


def _time_checked(pa, ns, path):
    raw = np.asarray(ns.fill_null(0).to_numpy(zero_copy_only=False))
    bad = ((raw < 0) | (raw >= DAY_NS)) & np.asarray(ns.is_valid())
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FormatError(f"{path}[{i}]", None, f"{int(raw[i])} ns is not a time of day "
                                                "(0 ..= 86399999999999 ns since midnight)")
    return ns.cast(pa.time64("ns"))


def _conform_struct(pa, arr, f, path, union=False):
    """A struct conformed field by field, by name (the target's order). For the flat
    union form, the variant structs the data lacks (no row of theirs) may be absent."""
    t, s = f.type, arr.type
    kids, fields = [], []
    for i in range(t.num_fields):
        tf = t.field(i)
        j = s.get_field_index(tf.name)
        if j < 0:
            if union and tf.name != "variant":
                kids.append(pa.nulls(len(arr), tf.type))
                fields.append(tf)
                continue
            raise FormatError(f"{path}.{tf.name}", None, f"expected a field `{tf.name}` (the schema's), found "
                                                         f"fields {[s.field(k).name for k in range(s.num_fields)]}")
        a, ff = _conform(pa, arr.field(j), tf, f"{path}.{tf.name}")
        kids.append(a)
        fields.append(ff)
    extra = [s.field(k).name for k in range(s.num_fields) if t.get_field_index(s.field(k).name) < 0]
    if extra:
        raise FormatError(f"{path}.{extra[0]}", None, f"not a field of the schema's struct "
                                                      f"{[t.field(i).name for i in range(t.num_fields)]}")
    mask = None if arr.null_count == 0 else pa.array(~np.asarray(arr.is_valid()))
    if not fields:
        return arr, f
    out = pa.StructArray.from_arrays(kids, fields=fields, mask=mask)
    return out, f.with_type(out.type)


def _pandas_hinted(pa, name, s, node):
    """A column of a DataFrame made by `Vector.to_pandas` (its attrs name each column's schema node)."""
    return _pandas_as(pa, name, s, arrow_field_of(pa, name, node))


def _schema_field(schema, dotted):
    """The field of pyarrow schema `schema` at dotted column name `dotted` (through structs), or None."""
    head, _, rest = dotted.partition(".")
    if head not in schema.names:
        return None
    f = schema.field(head)
    while rest:
        if not _need_pa().types.is_struct(f.type):
            return None
        head, _, rest = rest.partition(".")
        i = f.type.get_field_index(head)
        if i < 0:
            return None
        f = f.type.field(i)
    return f.with_name(dotted)


def _flat_target(pa, f):
    """Field `f` with every dense union in its type replaced by the flat form (Python
    objects and pandas columns build that; pyarrow builds no unions from them)."""
    t = f.type
    if pa.types.is_union(t):
        md = _md(f)
        names = [t.field(i).name for i in range(t.num_fields)]
        hint = _inner(_hint_of(md, "$"))
        if not hint or hint.get("kind") != "union":
            hint = {"kind": "union", "variant_names": names,
                    "children": [{"kind": "record" if t.field(i).type.num_fields else "constant"}
                                 for i in range(t.num_fields)]}
            md[SCHEMA_KEY] = json.dumps(hint)
        md[UNION_KEY] = "flat"
        fields = [pa.field("variant", pa.dictionary(pa.int32(), pa.string()), nullable=False)]
        for i in range(t.num_fields):
            c = t.field(i)
            if c.type.num_fields:
                fields.append(_flat_target(pa, c).with_nullable(True))
        return pa.field(f.name, pa.struct(fields), nullable=f.nullable, metadata=md)
    if pa.types.is_map(t):
        k, v = _flat_target(pa, t.key_field), _flat_target(pa, t.item_field)
        return f.with_type(pa.map_(k, v)) if (k, v) != (t.key_field, t.item_field) else f
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        v = _flat_target(pa, t.value_field)
        if v is t.value_field:
            return f
        return f.with_type(pa.large_list(v) if pa.types.is_large_list(t) else pa.list_(v))
    if pa.types.is_struct(t):
        kids = [_flat_target(pa, t.field(i)) for i in range(t.num_fields)]
        if all(k is t.field(i) for i, k in enumerate(kids)):
            return f
        return f.with_type(pa.struct(kids))
    return f


def _pandas_as(pa, name, s, f):
    """pandas Series `s` as Arrow field `f` (a column's target type: its schema node's, or
    `schema=`'s). NaN is a float value; None, NA and NaT are nulls."""
    f = _flat_target(pa, f)
    t = f.type
    path = f"$.{name}"
    if pa.types.is_fixed_size_list(t) and s.dtype == object:
        return _conform(pa, _fixed_from_objects(pa, s.to_numpy(dtype=object), f, path), f, path)
    if (_is_uuid_type(pa, t) or pa.types.is_fixed_size_binary(t)) and s.dtype == object:
        arr, _ = _uuids_to_arrow(pa, [None if _is_missing(v) else v for v in s.to_numpy(dtype=object)], path)
        return _conform(pa, arr, f, path)
    if s.dtype.kind == "c":
        arr, _ = _complex_to_arrow(pa, name, s.to_numpy())
        return _conform(pa, arr, f, path)
    if s.dtype == object:
        vals = [_py_to(pa, v, f) for v in s.to_numpy(dtype=object)]
        try:
            return pa.array(vals, type=t), f
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            return _conform(pa, _objects_to_arrow(pa, vals, path), f, path)
    try:
        numpy_float = isinstance(s.dtype, np.dtype) and s.dtype.kind == "f"
        arr = pa.array(s.to_numpy()) if numpy_float else pa.array(s, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise FormatError(path, None, f"pandas dtype {s.dtype} cannot become {t}: {e}") from None
    return _conform(pa, arr, f, path)


def _fixed_from_objects(pa, vals, f, path):
    """Rows of fixed-size arrays (numpy arrays or nested lists; None for null rows) -> the
    nested fixed_size_list of field `f`; labels of a labelled enum become their codes."""
    t = f.type
    dims = _fixed_shape(pa, t)
    leaf = t
    while pa.types.is_fixed_size_list(leaf):
        leaf = leaf.value_type
    total = int(np.prod(dims))
    present = np.array([not _is_missing(v) for v in vals], bool)
    flat = []
    for i, v in enumerate(vals):
        if not present[i]:
            flat.extend([None] * total)
            continue
        a = np.asarray(v, dtype=object)
        if a.shape != dims:
            raise FormatError(f"{path}[{i}]", None, f"expected an array of shape {dims}, found {a.shape}")
        flat.extend(a.reshape(-1).tolist())
    md = _md(f)
    labels = _hint_labels(_hint_of(md, path))
    if labels is None and "h5vec.labels" in md:
        labels = json.loads(md["h5vec.labels"])
    if labels and pa.types.is_integer(leaf):
        try:
            flat = [x if x is None or not isinstance(x, str) else labels[x] for x in flat]
        except KeyError as e:
            raise FormatError(path, None, f"label {e.args[0]!r} is not one of {list(labels)}") from None
    try:
        arr = pa.array([0 if x is None else x for x in flat] if not pa.types.is_string(leaf) and
                       not pa.types.is_large_string(leaf) else ["\0" if x is None else x for x in flat], type=leaf)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise FormatError(path, None, f"expected elements of {leaf}: {e}") from None
    for d in reversed(dims):
        arr = pa.FixedSizeListArray.from_arrays(arr, d)
    return arr if present.all() else _with_nulls(pa, arr, ~present)


def _needs_py(pa, f):
    """Whether Python values for field `f` need `_py_to` (enums with data, UUIDs, complex numbers inside)."""
    t = f.type
    md = _md(f)
    if md.get(UNION_KEY) == "flat" or md.get("h5vec.encoded_type") in COMPLEX or _is_uuid_type(pa, t) or \
            pa.types.is_fixed_size_binary(t):
        return True
    if pa.types.is_map(t):
        return _needs_py(pa, t.key_field) or _needs_py(pa, t.item_field)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _needs_py(pa, t.value_field)
    if pa.types.is_struct(t):
        return any(_needs_py(pa, t.field(i)) for i in range(t.num_fields))
    return False


def _py_to(pa, v, f):
    """A Python value in the form pa.array(type=f.type) takes: an enum with data's
    {"variant": name, **fields} in the flat form, uuid.UUID as its bytes, complex
    numbers as {"r", "i"}; lists, maps and records element by element."""
    if _is_missing(v) and not isinstance(v, (list, np.ndarray)):
        return None
    t = f.type
    md = _md(f)
    if md.get(UNION_KEY) == "flat":
        if isinstance(v, dict) and "variant" in v:
            name = v["variant"]
            out = {"variant": name}
            j = t.get_field_index(name) if isinstance(name, str) else -1
            if j >= 0:
                out[name] = _py_to(pa, {k: x for k, x in v.items() if k != "variant"}, t.field(j))
            return out
        return v
    if isinstance(v, _uuid.UUID):
        return v.bytes
    if md.get("h5vec.encoded_type") in COMPLEX and isinstance(v, (complex, np.complexfloating)):
        return {"r": v.real, "i": v.imag}
    if pa.types.is_map(t):
        items = v.items() if isinstance(v, dict) else v
        return [(_py_to(pa, k, t.key_field), _py_to(pa, x, t.item_field)) for k, x in items]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [_py_to(pa, x, t.value_field) for x in v]
    if pa.types.is_struct(t) and isinstance(v, dict):
        out = {}
        for k, x in v.items():
            j = t.get_field_index(k)
            out[k] = _py_to(pa, x, t.field(j)) if j >= 0 else x
        return out
    return v


def _fixed_shape(pa, t):
    dims = []
    while pa.types.is_fixed_size_list(t):
        dims.append(t.list_size)
        t = t.value_type
    return tuple(dims)


def pd_categorical():
    import pandas as pd
    return pd.CategoricalDtype


def _pandas_to_arrow(pa, name, s, hint=None):
    import pandas as pd
    if hint is not None:
        return _pandas_hinted(pa, name, s, hint)
    dt = s.dtype
    if isinstance(dt, pd.ArrowDtype):
        a = pa.array(s)
        return a, pa.field(name, a.type, nullable=True)
    if isinstance(dt, (pd.Int8Dtype, pd.Int16Dtype, pd.Int32Dtype, pd.Int64Dtype, pd.UInt8Dtype, pd.UInt16Dtype,
                       pd.UInt32Dtype, pd.UInt64Dtype, pd.Float32Dtype, pd.Float64Dtype, pd.BooleanDtype)):
        a = pa.array(s, from_pandas=True)
        return a, pa.field(name, a.type, nullable=True)
    if isinstance(dt, pd.StringDtype):
        a = pa.array(s.astype(object).to_numpy(), pa.large_string(), from_pandas=True)
        return a, pa.field(name, pa.large_string(), nullable=True)
    if isinstance(dt, pd.CategoricalDtype):
        a = pa.array(s.astype(object).to_numpy(), from_pandas=True)
        if pa.types.is_string(a.type):
            a = a.cast(pa.large_string())
        return a, pa.field(name, a.type, nullable=False)
    if isinstance(dt, pd.DatetimeTZDtype):
        # tz-aware: an instant in that zone (SPEC.md 4.6; UTC is what Rust's DateTime<Utc> loads).
        nat = np.flatnonzero(s.isna().to_numpy())
        if len(nat):
            raise FormatError(f"$.{name}[{int(nat[0])}]", None,
                              "NaT in a column that is not nullable (a Rust type without Option): pass "
                              "schema= with a nullable field")
        a = pa.array(s)
        return a, pa.field(name, a.type, nullable=False)
    if dt.kind in "Mm" or dt.kind == "c":
        return _numpy_to_arrow(pa, name, s.to_numpy())
    if dt == object or dt.kind in "biufUSV":
        return _numpy_to_arrow(pa, name, s.to_numpy())
    raise FormatError(f"$.{name}", None, f"pandas dtype {dt} has no h5vec storage kind")


def _nest(pa, names, arrays, fields, hint=None, target=None, prefix=""):
    """Dotted names -> nested struct columns ('a.b' -> struct a with field b). `hint`: the
    root schema node (a DataFrame's attrs["h5vec.schema"]), giving the records' codecs
    (tuples, offset date-times) that dotted columns cannot say. `target(dotted)`: the
    schema='s field of a record. A record that is nullable there (or in `hint`) is null
    in the rows where all its columns are (what to_pandas gives for Option<struct>)."""
    top = {}
    order = []
    for name, a, f in zip(names, arrays, fields):
        head, dot, rest = name.partition(".")
        if not dot:
            if name in top:
                raise ValueError(f"column {name!r} given twice")
            top[name] = (a, f)
            order.append(name)
        else:
            if head not in top:
                top[head] = ([], [], [])
                order.append(head)
            elif not isinstance(top[head], tuple) or len(top[head]) != 3:
                raise ValueError(f"column {head!r} is both a value and a record")
            top[head][0].append(rest)
            top[head][1].append(a)
            top[head][2].append(f.with_name(rest))
    out_a, out_f = [], []
    for name in order:
        v = top[name]
        if len(v) == 3:
            dotted = f"{prefix}{name}"
            sub = _field_kid(hint, name) if hint is not None else None
            sub_a, sub_f = _nest(pa, *v, hint=sub, target=target, prefix=dotted + ".")
            tf = target(dotted) if target is not None else None
            nullable = (tf.nullable if tf is not None else False) or (sub or {}).get("kind") == "nullable"
            mask = None
            if nullable and sub_a:
                mask = np.ones(len(sub_a[0]), bool)
                for c in sub_a:
                    mask &= np.asarray(c.is_null())
                mask = pa.array(mask) if mask.any() else None
            st = pa.StructArray.from_arrays(sub_a, fields=sub_f, mask=mask)
            out_a.append(st)
            codec = (_inner(sub) or {}).get("codec")
            md = {"h5vec.codec": codec} if codec in (S.TUPLE, S.OFFSET_DATE_TIME_CODEC) else None
            out_f.append(pa.field(name, st.type, nullable=nullable, metadata=md))
        else:
            out_a.append(v[0])
            out_f.append(v[1].with_name(name))
    return out_a, out_f


def _is_polars(data):
    return type(data).__module__.split(".")[0] == "polars"


def _polars_to_arrow(pa, data, strict):
    """A polars DataFrame -> pyarrow.Table. Polars has no non-null columns and keeps no
    Arrow field metadata: without schema= (`strict`) the columns and their nested fields
    are not nullable (Rust types without Option, as numpy and pandas columns), and a
    null in one is an error naming the column; pass schema= for Option fields."""
    import polars as pl
    if isinstance(data, pl.Series):
        return _polars_to_arrow(pa, data.to_frame(ROOT), strict).column(0).combine_chunks()
    if not isinstance(data, pl.DataFrame):
        raise TypeError(f"a polars {type(data).__name__}: pass a polars.DataFrame or polars.Series")
    t = data.to_arrow()
    if not strict:
        return t
    arrays, fields = [], []
    for f, col in zip(t.schema, t.columns):
        st = _strict_type(pa, f.type)
        try:
            a = col.cast(st) if not st.equals(f.type) else col
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise FormatError(f"$.{f.name}", None, f"a null inside a value of a polars column (a Rust type without "
                                                   f"Option): pass schema= with nullable fields ({e})") from None
        arrays.append(a)
        fields.append(pa.field(f.name, st, nullable=pa.types.is_null(st)))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def to_table(data, schema=None):
    """Any accepted input -> (pyarrow.Table or Array, root field or None for records)."""
    pa = _need_pa()
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if schema is not None and not isinstance(schema, (pa.Schema, pa.Field)):
        schema = arrow_schema_of(pa, schema)
    if _is_polars(data):
        data = _polars_to_arrow(pa, data, schema is None)
    if pd is not None and isinstance(data, pd.DataFrame):
        names = [str(c) for c in data.columns]
        hints = data.attrs.get("h5vec.columns", {}) if schema is None else {}
        pairs = []
        for n, c in zip(names, data.columns):
            target = _schema_field(schema, n) if isinstance(schema, pa.Schema) else None
            if target is not None:
                pairs.append(_pandas_as(pa, n, data[c], target))
            else:
                pairs.append(_pandas_to_arrow(pa, n, data[c], hints.get(n)))
        root = data.attrs.get("h5vec.schema") if schema is None else None
        target = (lambda dotted: _schema_field(schema, dotted)) if isinstance(schema, pa.Schema) else None
        arrays, fields = _nest(pa, names, [p[0] for p in pairs], [p[1] for p in pairs],
                               hint=_node_dict(root) if root is not None else None, target=target)
        table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    elif pd is not None and isinstance(data, pd.Series):
        a, f = _pandas_to_arrow(pa, ROOT, data)
        return _cast_root(pa, a, f, schema)
    elif isinstance(data, dict):
        names = [str(k) for k in data]
        pairs = []
        for n, v in zip(names, data.values()):
            target = _schema_field(schema, n) if isinstance(schema, pa.Schema) else None
            if isinstance(v, (pa.Array, pa.ChunkedArray)):
                pairs.append((v, pa.field(n, v.type, nullable=False)))
            elif pd is not None and isinstance(v, pd.Series):
                pairs.append(_pandas_as(pa, n, v, target) if target is not None else _pandas_to_arrow(pa, n, v))
            else:
                v = v if isinstance(v, np.ndarray) else np.asarray(v)
                pairs.append(_numpy_as(pa, n, v, target) if target is not None else _numpy_to_arrow(pa, n, v))
        arrays, fields = _nest(pa, names, [p[0] for p in pairs], [p[1] for p in pairs])
        table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    elif isinstance(data, pa.Table):
        table = data
    elif isinstance(data, pa.RecordBatch):
        table = pa.Table.from_batches([data])
    elif isinstance(data, (pa.Array, pa.ChunkedArray)):
        return _cast_root(pa, data, pa.field(ROOT, data.type, nullable=False), schema)
    elif isinstance(data, np.ndarray):
        a, f = _numpy_to_arrow(pa, ROOT, data)
        return _cast_root(pa, a, f, schema)
    else:
        raise TypeError("data: a pyarrow.Table, pandas.DataFrame, polars.DataFrame, dict of numpy arrays, "
                        "or one array")
    if schema is not None:
        if isinstance(schema, pa.Schema):
            root = schema.metadata.get(b"h5vec.root") if schema.metadata else None
            if root == b"value" and len(schema) == 1 and table.num_columns == 1:
                a, f = _conform(pa, table.column(0), schema.field(0), "$")
                return a, f
            arrays, fields = [], []
            for f in schema:
                if f.name not in table.column_names:
                    raise FormatError(f"$.{f.name}", None, f"the data has no column `{f.name}` (the schema's); "
                                                           f"found {table.column_names}")
                a, ff = _conform(pa, table.column(f.name), f, f"$.{f.name}")
                arrays.append(a)
                fields.append(ff)
            table = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=schema.metadata))
        else:
            raise TypeError("schema: a pyarrow.Schema, or an h5vec schema node (Vector.schema)")
    return table, None


def _cast_root(pa, a, f, schema):
    if schema is not None:
        f = schema if isinstance(schema, pa.Field) else schema.field(0)
        a, f = _conform(pa, a, f, "$")
    return a, f


class Options:
    def __init__(self, chunk_length, compression, vls_strings, entries=False, checksum=False):
        self.chunk_length = chunk_length
        self.compression = compression
        self.vls_strings = vls_strings
        self.entries = entries
        self.checksum = bool(checksum)  # Fletcher32 on every dataset created (SPEC 6.4)
        _h5.compression_kwargs(compression)  # checks it early

    def vls(self, path):
        v = self.vls_strings
        if v is True:
            return True
        if not v:
            return False
        col = path[2:] if path.startswith("$.") else path
        return col in set(v) or (path == "$" and ROOT in set(v))

    def for_entries(self):
        """A map's entries: strings in the vls_string layout (SPEC.md section 4.5)."""
        return Options(self.chunk_length, self.compression, True, entries=True, checksum=self.checksum)


def build(data, schema, opts, root_hint=None):
    """(root Col, root Node, rows). `root_hint`: a root node dict (an append's stored node)."""
    obj, field = to_table(data, schema)
    if field is not None:
        col, node = from_arrow(obj, field, "$", opts, hint=root_hint)
        return col, node, len(obj)
    table = obj.combine_chunks() if any(c.num_chunks > 1 for c in obj.columns) else obj
    md = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if root_hint is None and SCHEMA_KEY in md:
        root_hint = _hint_of(md, "$")
    if md.get("h5vec.root") == "value" and table.num_columns == 1 or \
            (root_hint is not None and root_hint.get("kind") != "record" and table.num_columns == 1
             and table.schema.field(0).name == ROOT):
        col, node = from_arrow(table.column(0), table.schema.field(0), "$", opts, hint=root_hint)
        return col, node, table.num_rows
    names, cols, nodes = [], [], []
    for i, f in enumerate(table.schema):
        if not f.name or f.name in (".", "..") or "/" in f.name or "\0" in f.name:
            raise FormatError(f"$.{f.name}", None, f"invalid field name {f.name!r}")
        c, n = from_arrow(table.column(i), f, f"$.{f.name}", opts, hint=_field_kid(root_hint, f.name))
        names.append(f.name)
        cols.append(c)
        nodes.append(n)
    rows = table.num_rows
    if not names:
        node = S.Node("constant", codec=constant_codec(), logical_type="()")
        return C.Const(rows, node), node, rows
    node = record_node(names, nodes, logical=md.get("h5vec.logical_type", "python.record"))
    if root_hint is not None and root_hint.get("codec") == S.TUPLE:
        node.codec = S.TUPLE
    return C.Rec(rows, names, cols, node), node, rows


class Ctx:
    def __init__(self, opts, rows):
        self.opts = opts
        self.rows = rows

    def chunk_rows(self, row_bytes, n):
        if self.opts.chunk_length:
            return int(self.opts.chunk_length)
        by_bytes = max(1, MAX_CHUNK_BYTES // max(1, row_bytes))
        return max(1, min(DEFAULT_CHUNK, by_bytes, _h5.next_pow2(max(n, 1))))

    def chunk_bytes(self, n):
        return max(1, min(MAX_HEAP_CHUNK, _h5.next_pow2(max(n, 1))))


def _dataset(g, name, dtype, inner, chunk, ctx, fillvalue=None):
    if name in g:
        return g[name]
    return _h5.create_column(g, name, dtype, inner, chunk, ctx.opts.compression, fillvalue,
                             checksum=ctx.opts.checksum)


def _u64_at(ds, i):
    return int(ds[i]) if ds.shape[0] > i else 0


def _values_dtype(node, item):
    enc = node.encoded_type
    if enc == "Bool":
        return _h5.H5COL_BOOL if item else _h5.BITFIELD8
    if enc == "String":
        return _h5.VLEN_UTF8
    return S.NUMBERS[enc]


def _prim_file_values(col):
    if col.tag == "bool":
        return col.values.astype(np.uint8)
    return col.values


def _write_leaf(g, name, col, node, pos, ctx, item):
    if isinstance(col, C.Str):  # vlen strings (scalar String / JSON)
        if (col.data == 0).any():
            i = int(np.searchsorted(col.offsets, np.flatnonzero(col.data == 0)[0], side="right")) - 1
            raise FormatError(f"{node_path(ctx)}", None, f"row {i}: strings with a NUL cannot be HDF5 "
                                                         "variable-length strings (use vls_strings)")
        ds = _dataset(g, name, _h5.VLEN_UTF8, (), ctx.chunk_rows(16, col.n), ctx)
        objs = C.decode_strings(col.offsets, col.data)
        _h5.put_rows(ds, pos, objs)
        return
    vals = col.values
    inner = vals.shape[1:]
    dt = _values_dtype(node, item)
    row_bytes = max(1, vals.dtype.itemsize * int(np.prod(inner)) if inner else vals.dtype.itemsize)
    fill = fill_value(node.encoded_type) if node.kind == "fill_nullable" else None
    ds = _dataset(g, name, dt, inner, ctx.chunk_rows(row_bytes, len(vals)), ctx, fill)
    if node.encoded_type == "Bool" and item:
        _h5.put_rows(ds, pos, vals.astype(bool))
    else:
        _h5.put_rows(ds, pos, _prim_file_values(col))


def node_path(ctx):
    return getattr(ctx, "path", "$")


def write_field(g, col, node, pos, ctx, path):
    """Writes `col` into field data group `g` after its first `pos` rows."""
    ctx.path = path
    k = node.kind
    if k in ("scalar", "dense"):
        _write_leaf(g, "values", col, node, pos, ctx, False)
    elif k == "record":
        for name, c, cn in zip(node.field_names, col.children, node.children):
            sub = g[name] if name in g else g.create_group(name)
            write_field(sub, c, cn, pos, ctx, f"{path}.{name}")
    elif k == "constant":
        pass
    elif k == "blob":
        stops_ds = _dataset(g, "stops", "<i8", (), ctx.chunk_rows(8, col.n), ctx)
        base = int(stops_ds[pos - 1]) if pos > 0 else 0
        bytes_ds = _dataset(g, "bytes", "u1", (), ctx.chunk_bytes(len(col.data)), ctx)
        _h5.put_rows(bytes_ds, base, col.data)
        _h5.put_rows(stops_ds, pos, col.offsets[1:] + base)
    elif k == "vls_string":
        _write_vls(g, col, node, pos, ctx, path)
    elif k == "list":
        _write_list(g, col, node, pos, ctx, path)
    elif k == "nullable":
        inner = node.children[0]
        if inner.kind == "record" and "MASK" in inner.field_names:
            raise FormatError(path, None, "a field named MASK cannot sit beside the null mask of an Option")
        if inner.kind == "union" and "MASK" in inner.labels:
            raise FormatError(path, None, "a variant named MASK cannot sit beside the null mask of an Option")
        write_field(g, col, inner, pos, ctx, path)
        _write_mask(g, col.valid, pos, ctx)
    elif k == "union":
        _write_union(g, col, node, pos, ctx, path)
    else:
        raise FormatError(path, None, f"kind {k} cannot be a field")


def _write_mask(g, valid, pos, ctx):
    ds = _dataset(g, "MASK", _h5.H5COL_BOOL, (), ctx.chunk_rows(1, len(valid)), ctx)
    _h5.put_rows(ds, pos, valid.astype(bool))


def _write_list(g, col, node, pos, ctx, path):
    if "OFFSETS" not in g:
        _h5.write_attr_ascii(g, "CLASS", "LIST_COLUMN")
        _h5.write_attr_ascii(g, "KIND", "OFFSETS")
        offs = _h5.create_column(g, "OFFSETS", "<u8", (), ctx.chunk_rows(8, col.n + 1), ctx.opts.compression,
                                 checksum=ctx.opts.checksum)
        _h5.put_rows(offs, 0, np.zeros(1, np.uint64))
    offs = g["OFFSETS"]
    base = int(offs[pos])
    write_item(g, "VALUES", col.child, node.children[0], base, ctx, path + "[]")
    _h5.put_rows(offs, pos + 1, (col.offsets[1:] + base).astype(np.uint64))


def write_item(g, name, col, node, pos, ctx, path):
    """Writes list elements as member `name` of list group `g` after its first `pos` elements."""
    ctx.path = path
    k = node.kind
    if k in ("scalar", "dense", "fill_nullable"):
        _write_leaf(g, name, col, node, pos, ctx, True)
    elif k == "string_values":
        sv = g[name] if name in g else g.create_group(name)
        if "OFFSETS" not in sv:
            _h5.write_attr_ascii(sv, "CLASS", "STRING_VALUES")
            o = _h5.create_column(sv, "OFFSETS", "<u8", (), ctx.chunk_rows(8, col.n + 1), ctx.opts.compression,
                                  checksum=ctx.opts.checksum)
            _h5.put_rows(o, 0, np.zeros(1, np.uint64))
            _h5.create_column(sv, "CHARS", "u1", (), ctx.chunk_bytes(len(col.data)), ctx.opts.compression,
                              checksum=ctx.opts.checksum)
        o = sv["OFFSETS"]
        base = int(o[pos])
        _h5.put_rows(sv["CHARS"], base, col.data)
        _h5.put_rows(o, pos + 1, (col.offsets[1:] + base).astype(np.uint64))
    elif k == "list":
        lg = g[name] if name in g else g.create_group(name)
        _write_list(lg, col, node, pos, ctx, path)
    elif k == "record":
        rg = g[name] if name in g else g.create_group(name)
        if "CLASS" not in rg.attrs:
            _h5.write_attr_ascii(rg, "CLASS", "RECORD_VALUES")
        write_field(rg, col, node, pos, ctx, path)
    elif k == "nullable":
        write_item(g, name, col, node.children[0], pos, ctx, path)
        _write_mask(g[name], col.valid, pos, ctx)
    elif k == "union":
        ug = g[name] if name in g else g.create_group(name)
        if "CLASS" not in ug.attrs:
            _h5.write_attr_ascii(ug, "CLASS", "UNION_VALUES")
        _write_union(ug, col, node, pos, ctx, path)
    else:
        raise FormatError(path, None, f"kind {k} cannot be a list element")


SCAN_ROWS = 1 << 16


def _union_committed(g, nvar, pos):
    """Each variant's committed rows in the first `pos` rows of a union group: one more
    than the INDEX of its last row (0 if none), reading TAG and INDEX backwards from
    `pos`, 64 Ki rows at a time, until every variant has been seen (as Rust does)."""
    nxt = [None] * nvar
    missing = nvar
    end = pos
    tag_ds, idx_ds = g["TAG"], g["INDEX"]
    while end > 0 and missing:
        start = max(0, end - SCAN_ROWS)
        tags = _h5.read_rows(tag_ds, start, end, "$").astype(np.int64)
        idx = _h5.read_rows(idx_ds, start, end, "$").astype(np.uint64)
        for v in range(nvar):
            if nxt[v] is None:
                hit = np.flatnonzero(tags == v)
                if len(hit):
                    nxt[v] = int(idx[hit[-1]]) + 1
                    missing -= 1
        end = start
    return [0 if x is None else x for x in nxt]


def _tag_type(names, wide):
    """The TAG type: an HDF5 enum over uint8 (uint16 past 256 variants), members in declaration
    order (h5py's enum_dtype would sort them by name)."""
    tid = h5py.h5t.enum_create(h5py.h5t.STD_U16LE if wide else h5py.h5t.STD_U8LE)
    for i, nm in enumerate(names):
        tid.enum_insert(nm.encode("utf-8"), i)
    return h5py.Datatype(tid)


def _write_union(g, col, node, pos, ctx, path):
    """An enum with data (SPEC.md section 4.4): each variant's columns (its rows only, in
    row order), then INDEX (row k's row among its variant's rows), then TAG (an HDF5
    enum over uint8, uint16 past 256 variants)."""
    names = list(node.labels)
    nxt = _union_committed(g, len(names), pos) if pos > 0 and "TAG" in g else [0] * len(names)
    tags = np.asarray(col.tags, np.int64)
    index = np.zeros(col.n, np.uint64)
    for v, name in enumerate(names):
        rows = np.flatnonzero(tags == v)
        index[rows] = np.uint64(nxt[v]) + np.arange(len(rows), dtype=np.uint64)
        sub = g[name] if name in g else g.create_group(name)
        write_field(sub, col.children[v], node.children[v], nxt[v], ctx, f"{path}.{name}")
    ctx.path = path
    wide = len(names) > 256
    base = "<u2" if wide else "u1"
    idx_ds = _dataset(g, "INDEX", "<u8", (), ctx.chunk_rows(8, col.n), ctx)
    tag_ds = _dataset(g, "TAG", _tag_type(names, wide), (), ctx.chunk_rows(2 if wide else 1, col.n), ctx)
    _h5.put_rows(idx_ds, pos, index)
    _h5.put_rows(tag_ds, pos, tags.astype(base))


def _choose_placeholder(col, committed):
    """"NA", "NA_", ...: the first equal to no present value of this batch nor of the committed rows."""
    ph = "NA"
    while True:
        p = ph.encode()
        lens = np.diff(col.offsets)
        cand = np.flatnonzero((lens == len(p)) & col.valid)
        hit = False
        if len(cand):
            mat = col.data[col.offsets[cand][:, None] + np.arange(len(p))[None, :]]
            hit = bool((mat == np.frombuffer(p, np.uint8)[None, :]).all(axis=1).any())
        if not hit and committed is not None:
            hit = committed(p)
        if not hit:
            return ph
        ph += "_"


def _write_vls(g, col, node, pos, ctx, path):
    if (col.data == 0).any():
        i = int(np.searchsorted(col.offsets, np.flatnonzero(col.data == 0)[0], side="right")) - 1
        raise FormatError(f"{path}[{pos + i}]", None, "string contains a NUL byte; readers cut VLS strings at "
                                                      "the first NUL")
    new = "pointers" not in g
    ptrs = _dataset(g, "pointers", _h5.POINTER, (), ctx.chunk_rows(16, col.n), ctx)
    heap = _dataset(g, "heap", "u1", (), ctx.chunk_bytes(len(col.data)), ctx)
    base = 0
    if not new and pos > 0:
        p = ptrs[:pos]
        base = int((p["offset"].astype(np.uint64) + p["length"].astype(np.uint64)).max())
    offsets, data = col.offsets, col.data
    missing = None
    if col.valid is not None and not col.valid.all():
        missing = ~col.valid
        ph = _h5.read_attr_string(ptrs, _read.PLACEHOLDER_ATTR, path) if not new else None
        if ph is None:
            committed = None
            if pos > 0:
                committed = _committed_checker(g, pos, path)
            ph = _choose_placeholder(col, committed)
            ptrs.attrs.create(_read.PLACEHOLDER_ATTR, ph, dtype=_h5.VLEN_UTF8)
        pb = np.frombuffer(ph.encode(), np.uint8)
        # Present values equal to the placeholder would read back as missing.
        lens = np.diff(offsets)
        cand = np.flatnonzero((lens == len(pb)) & col.valid)
        if len(cand) and len(pb):
            eq = (data[offsets[cand][:, None] + np.arange(len(pb))[None, :]] == pb[None, :]).all(axis=1)
            if eq.any():
                raise FormatError(f"{path}[{pos + int(cand[eq][0])}]", None,
                                  f"value equals the missing-value placeholder `{ph}` chosen for this column")
        elif len(cand) and not len(pb):
            raise FormatError(f"{path}[{pos + int(cand[0])}]", None, "value equals the empty placeholder")
    elif col.valid is not None and node.codec == S.PLACEHOLDER_CODEC and not new:
        ph = _h5.read_attr_string(ptrs, _read.PLACEHOLDER_ATTR, path)
        if ph is not None:
            pb = np.frombuffer(ph.encode(), np.uint8)
            lens = np.diff(offsets)
            cand = np.flatnonzero(lens == len(pb))
            if len(cand):
                eq = (data[offsets[cand][:, None] + np.arange(len(pb))[None, :]] == pb[None, :]).all(axis=1)
                if eq.any():
                    raise FormatError(f"{path}[{pos + int(cand[eq][0])}]", None,
                                      f"value equals the missing-value placeholder `{ph}` of this column")
    starts = offsets[:-1] + base
    lengths = np.diff(offsets)
    heap_bytes = data
    if missing is not None:
        # Missing values share one copy of the placeholder, after the values.
        ph_off = base + len(data)
        heap_bytes = np.concatenate([data, pb])
        starts = np.where(missing, ph_off, starts)
        lengths = np.where(missing, len(pb), lengths)
    ptr = np.empty(col.n, _h5.POINTER)
    ptr["offset"] = starts
    ptr["length"] = lengths
    _h5.put_rows(heap, base, heap_bytes)
    _h5.put_rows(ptrs, pos, ptr)


def _committed_checker(g, pos, path):
    def check(p):
        ptr = g["pointers"][:pos]
        off = ptr["offset"].astype(np.uint64)
        ln = ptr["length"].astype(np.uint64)
        offsets, data, start, cut, hb = _read.gather_vls(off, ln, g["heap"], g["heap"].shape[0], path,
                                                         g["pointers"].name, 0)
        lens = np.diff(offsets)
        cand = np.flatnonzero(lens == len(p))
        if not len(cand):
            return False
        if not len(p):
            return True
        mat = data[offsets[cand][:, None] + np.arange(len(p))[None, :]]
        return bool((mat == np.frombuffer(p, np.uint8)[None, :]).all(axis=1).any())
    return check


# ---------------------------------------------------------------------------
# save / append


def _write_metadata(meta, node, count, checksum=False):
    """`meta`'s members (SPEC section 1). With `checksum`, `serialized_schema`
    is one chunk (its whole length) with HDF5's Fletcher32 filter and nothing
    else: readers verify its bytes and check the schema tree against it
    (SPEC 6.4, "Metadata"; as Rust's `write_metadata`)."""
    _h5.write_fixed_str(meta, "format_name", FORMAT_NAME)
    meta.create_dataset("format_version", data=np.int64(1), dtype="<i8")
    _h5.write_fixed_str(meta, "logical_type", node.logical_type)
    json_bytes = np.frombuffer(node.serialized().encode("utf-8"), np.uint8)
    if checksum:
        meta.create_dataset("serialized_schema", data=json_bytes, chunks=(len(json_bytes),),
                            fletcher32=True, track_times=False)
    else:
        meta.create_dataset("serialized_schema", data=json_bytes)
    _h5.write_bitfield_scalar(meta, "schema_was_inferred", 0)
    S.write_node(meta.create_group("schema"), node)
    meta.create_dataset("count", data=np.int64(count), dtype="<i8")


def save_vector(where, name, data, *, chunk_length=None, compression=None, replace=False, schema=None,
                vls_strings=False, checksum=False):
    check_name(name)
    opts = Options(chunk_length, compression, vls_strings, checksum=checksum)
    col, node, rows = build(data, schema, opts)
    group, owned = _open_where(where, "a")
    try:
        exists = name in group
        if exists and not replace:
            raise ValueError(f"vector {name!r} exists in {group.name} (pass replace=True)")
        gid = h5py.h5g.create(group.id, None)
        vg = h5py.Group(gid)
        data_g = vg.create_group("data")
        ctx = Ctx(opts, rows)
        write_field(data_g, col, node, 0, ctx, "$")
        _write_metadata(vg.create_group("metadata"), node, rows, checksum=opts.checksum)
        group.file.flush()
        if exists:
            del group[name]
        group[name] = vg
        group.file.flush()
    finally:
        if owned is not None:
            owned.close()


def append_vector(where, name, data, *, schema=None):
    check_name(name)
    group, owned = _open_where(where, "a")
    try:
        vg = group[name]
        count, stored = open_metadata(vg)
        # Checks the data groups as a reader does (structure, types, rows).
        data_g = vg["data"]
        _read.open_field(data_g, stored, "$", count)
        opts = Options(None, None, _vls_paths(stored))
        col, node, rows = build(data, schema, opts, root_hint=stored.to_dict())
        node = _adopt(stored, node, col, "$")
        if not stored.same_layout(node) or not _same_variants(stored, node):
            raise FormatError("$", vg.name, "the data's schema differs from the stored vector's: "
                                            f"stored {stored.serialized()}, data {node.serialized()}")
        ctx = Ctx(Options(None, None, False), rows)  # existing datasets keep their filters
        write_field(data_g, col, stored, count, ctx, "$")
        group.file.flush()
        meta = vg["metadata"]
        meta["count"][()] = np.int64(count + rows)
        group.file.flush()
    finally:
        if owned is not None:
            owned.close()


def _vls_paths(node, prefix="$"):
    """Dotted paths of the stored vls_string columns (so appended strings keep that layout)."""
    out = []
    if node.kind == "vls_string":
        out.append(prefix[2:] if prefix.startswith("$.") else (ROOT if prefix == "$" else prefix))
    n = node.children[0] if node.kind == "nullable" else node
    if n.kind == "record":
        for f, c in zip(n.field_names, n.children):
            out.extend(_vls_paths(c, f"{prefix}.{f}"))
    return out


def _adopt(stored, node, col, path):
    """Takes over descriptive parts of the stored schema that the input cannot say
    (codec spelling of constants, enum/tuple codecs) when the layouts otherwise agree."""
    if stored.kind == "constant" and node.kind == "constant":
        return stored
    if stored.kind == node.kind and stored.kind == "record" and stored.field_names == node.field_names:
        node.codec = stored.codec
        kids = col.children if isinstance(col, C.Rec) else [None] * len(node.children)
        node.children = [_adopt(s, n, c, f"{path}.{f}")
                         for s, n, c, f in zip(stored.children, node.children, kids, node.field_names)]
    elif stored.kind == node.kind and stored.kind in ("nullable", "list") and node.children:
        child = col.child if isinstance(col, C.List) else col
        node.children = [_adopt(stored.children[0], node.children[0], child, path)]
    elif stored.kind == node.kind == "union" and stored.labels == node.labels:
        kids = col.children if isinstance(col, C.Union) else [None] * len(node.children)
        node.children = [_adopt(s, n, c, f"{path}.{v}")
                         for s, n, c, v in zip(stored.children, node.children, kids, node.labels)]
    node.logical_type = stored.logical_type
    return node


def _same_variants(stored, node):
    """The variant names of every union agree (same_layout leaves labels aside)."""
    if stored.kind == "union" and stored.labels != node.labels:
        return False
    return all(_same_variants(a, b) for a, b in zip(stored.children, node.children))
