"""Writing vectors, part 4: the Arrow field of a schema node (`arrow_field_of`,
`arrow_schema_of`) and data conformed to a target field (`schema=`, a DataFrame's
column nodes): the conversions pyarrow's cast lacks."""

import json
import uuid as _uuid

import numpy as np

from . import _schema as S
from ._errors import FormatError
from ._write_nodes import (
    COMPLEX,
    DAY_NS,
    SCHEMA_KEY,
    UNION_KEY,
    _hint_labels,
    _hint_of,
    _inner,
    _md,
    _need_pa,
    _node_dict,
    _node_json,
)
from ._write_encode import _PER_UNIT, _is_uuid_type
from ._write_numpy import (
    _complex_to_arrow,
    _is_missing,
    _objects_to_arrow,
    _uuid_type,
    _uuids_to_arrow,
    _with_nulls,
)
from ._vector import ROOT


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
        raw = s.to_numpy(dtype=object)
        if not _needs_py(pa, f):
            # pyarrow's own conversion when no value needs one of ours: it refuses NA and
            # NaT (which are nulls here) and anything it cannot convert exactly, which then
            # go value by value below.
            try:
                return pa.array(raw, type=t), f
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, ValueError, TypeError):
                pass
        vals = [_py_to(pa, v, f) for v in raw]
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
