"""Writing vectors, part 2: Arrow arrays -> columns and schema nodes
(`from_arrow`), one branch per storage kind, with the per-kind checks
(nullability, enums, times, UUIDs, complex numbers, unions, strings)."""

import numpy as np

from . import _columns as C
from . import _schema as S
from ._errors import FormatError
from ._write_nodes import (
    COMPLEX,
    DAY_NS,
    I64_MAX,
    RUST_NAMES,
    SCHEMA_KEY,
    UNION_KEY,
    _enum_labels,
    _field_kid,
    _hint_labels,
    _hint_of,
    _inner,
    _kid,
    _md,
    _need_pa,
    constant_codec,
    dense_node,
    json_vls_node,
    list_node,
    map_node,
    nullable_node,
    record_node,
    scalar_node,
    time_node,
    union_node,
    uuid_node,
    vls_node,
)


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
