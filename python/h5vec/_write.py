"""Writing vectors: input (pyarrow, pandas, numpy) -> columns + schema tree ->
the layout of SPEC.md, in the order of SPEC section 8."""

import json

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
              "String": "alloc::string::String"}

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


def from_arrow(arr, field, path, opts, parent_valid=None, item=False):
    """(Col, Node) of a pyarrow array with Arrow field `field`."""
    pa = _need_pa()
    import pyarrow.compute as pc
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    md = _md(field)
    n = len(arr)
    if pa.types.is_null(t):
        if item:
            raise FormatError(path, None, "a null-typed (constant) column cannot be a list element")
        node = S.Node("constant", codec=constant_codec(), logical_type="()")
        return C.Const(n, node), node
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

    if pa.types.is_dictionary(t):
        if "h5vec.labels" in md and md.get("h5vec.codec") == S.ENUM:
            enc = md.get("h5vec.encoded_type", "Int64")
            labels = _enum_labels(md, enc, path)
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
        return from_arrow(arr, field.with_type(arr.type), path, opts, parent_valid, item)
    if pa.types.is_boolean(t):
        vals = np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)
        node = scalar_node("Bool")
        return _wrap(C.Prim(vals, "bool", node), node, own_valid, item, path)
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        np_t = t.to_pandas_dtype()
        enc = S.ENCODED_OF.get(np.dtype(np_t).newbyteorder("<"))
        if enc is None:
            raise FormatError(path, None, f"Arrow type {t} has no h5vec encoding (float16 is not supported)")
        vals = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False) if has_nulls else arr.to_numpy()
        vals = np.ascontiguousarray(vals, dtype=S.NUMBERS[enc])
        if zero is not None and has_nulls:
            vals = vals.copy() if not vals.flags.writeable else vals
            vals[zero] = 0
        codec = md.get("h5vec.codec") if md.get("h5vec.codec") == S.ENUM else S.IDENTITY
        labels = _enum_labels(md, enc, path) if codec == S.ENUM and "h5vec.labels" in md else None
        if labels is not None:
            stored = vals if valid is None else vals[valid]
            bad = ~np.isin(stored.astype(np.int64), np.array(list(labels.values()), dtype=np.int64))
            if bad.any():
                row = int(np.flatnonzero(valid)[np.flatnonzero(bad)[0]] if valid is not None
                          else np.flatnonzero(bad)[0])
                raise FormatError(path, None, f"row {row}: code {int(vals[row])} is not one of the enum's "
                                              f"values {list(labels.values())}")
        if nullable and item:
            return _fill_item(vals, valid, enc, path)
        node = scalar_node(enc, codec)
        node.labels = labels
        return _wrap(C.Prim(vals, "enum" if codec == S.ENUM else "num", node), node, own_valid, item, path)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t) or \
            (hasattr(pa, "JsonType") and isinstance(t, pa.JsonType)) or pa.types.is_binary(t) or \
            pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        is_json = md.get("h5vec.codec") == S.JSON or getattr(t, "extension_name", None) == "arrow.json"
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
        if md.get("h5vec.codec") == S.CHAR:
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
        vls = not is_json and (md.get("h5vec.kind") == "vls_string" or opts.vls(path))
        if vls:
            node = vls_node(nullable)
            return C.Str(offsets, data, "utf8", node, own_valid), node
        node = scalar_node("String", S.JSON if is_json else S.IDENTITY)
        return _wrap(C.Str(offsets, data, "json" if is_json else "utf8", node), node, own_valid, item, path)
    if pa.types.is_fixed_size_list(t):
        dims = []
        inner = arr
        while pa.types.is_fixed_size_list(inner.type):
            size = inner.type.list_size
            dims.append(size)
            inner = inner.values.slice(inner.offset * size, len(inner) * size)
        flat_field = field.with_type(inner.type).with_nullable(False)
        if inner.null_count:
            total = int(np.prod(dims))
            rows_ok = np.asarray(inner.is_valid()).reshape(n, total).all(axis=1)
            bad = ~rows_ok & (valid if valid is not None else True)
            if np.any(bad):
                raise FormatError(path, None, "null elements inside a fixed-size array cannot be stored "
                                              "(only whole rows can be null)")
        rows_valid = valid if valid is not None else parent_valid
        elem_valid = None if rows_valid is None else np.repeat(rows_valid, int(np.prod(dims)))
        leaf, lnode = from_arrow(inner, flat_field.with_metadata(field.metadata), path, opts, elem_valid)
        if lnode.kind != "scalar" or lnode.encoded_type == "String" and lnode.codec != S.CHAR:
            raise FormatError(path, None, f"fixed-size lists of {inner.type} cannot be stored (dense "
                                          "elements are numbers, bools or chars)")
        vals = leaf.values.reshape((n,) + tuple(dims))
        if zero is not None and has_nulls:
            vals = vals.copy()
            vals[zero] = 0
        node = dense_node(lnode.encoded_type, dims, lnode.codec)
        return _wrap(C.Prim(vals, leaf.tag, node), node, own_valid, item, path)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or \
            pa.types.is_large_list_view(t):
        if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
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
        child, cnode = from_arrow(values, t.value_field, path + "[]", opts, None, item=True)
        node = list_node(cnode)
        col = C.List(offs, child, node)
        if nullable:
            nn = nullable_node(node)
            col.valid, col.node = own_valid, nn
            return col, nn
        return col, node
    if pa.types.is_struct(t):
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
            c, cn = from_arrow(arr.field(i), f, f"{path}.{f.name}", opts, pv)
            names.append(f.name)
            cols.append(c)
            nodes.append(cn)
        if not names:
            node = S.Node("constant", codec=constant_codec(), logical_type="python.unit")
            return C.Const(n, node), node
        node = record_node(names, nodes, md.get("h5vec.codec") == S.TUPLE)
        col = C.Rec(n, names, cols, node)
        if item:
            return col, node
        return _wrap(col, node, own_valid, item, path)
    if pa.types.is_union(t):
        raise FormatError(path, None, UNION_WRITE)
    raise FormatError(path, None, f"Arrow type {t} has no h5vec storage kind")


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
    """`t` with every nested field (list items, struct fields) non-nullable."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        f = pa.field(t.value_field.name, _strict_type(pa, t.value_type), nullable=False)
        return pa.large_list(f) if pa.types.is_large_list(t) else pa.list_(f)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(pa.field("item", _strict_type(pa, t.value_type), nullable=False), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _strict_type(pa, t.field(i).type), nullable=False)
                          for i in range(t.num_fields)])
    return t


def _numpy_to_arrow(pa, name, arr):
    """One numpy (or masked) array -> (pyarrow array, field) with nullability from its class."""
    if isinstance(arr, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(arr)
        rowmask = mask.reshape(len(arr), -1).all(axis=1) if arr.ndim > 1 else mask
        a, f = _numpy_to_arrow(pa, name, np.asarray(arr.filled(0) if arr.dtype.kind in "biuf" else arr.data))
        a = _with_nulls(pa, a, rowmask)
        return a, f.with_nullable(True)
    arr = np.asarray(arr)
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
        a = pa.array(arr, from_pandas=True)
        if pa.types.is_string(a.type):
            a = a.cast(pa.large_string())
        if pa.types.is_binary(a.type):
            a = a.cast(pa.large_binary())
        t = _strict_type(pa, a.type)
        return a.cast(t), pa.field(name, t, nullable=False)
    raise FormatError(f"$.{name}", None, f"numpy dtype {arr.dtype} has no h5vec storage kind")


def _with_nulls(pa, a, rowmask):
    import pyarrow.compute as pc
    return pc.if_else(pa.array(~rowmask), a, pa.nulls(len(a), a.type))


ARROW_NUMBERS = {"Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64", "UInt8": "uint8",
                 "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64", "Float32": "float32",
                 "Float64": "float64"}


def arrow_field_of(pa, name, node):
    """The Arrow field that saves back into schema node `node` (a dict, as `Vector.schema` gives)."""
    k = node["kind"]
    md = {"h5vec.kind": k, "h5vec.codec": node["codec"]}
    if node.get("labels"):
        md["h5vec.labels"] = json.dumps(node["labels"])
    if k == "nullable":
        f = arrow_field_of(pa, name, node["children"][0])
        return f.with_nullable(True)
    if k in ("scalar", "dense", "fill_nullable", "string_values"):
        enc = node.get("encoded_type")
        if node["codec"] == S.CHAR or enc == "String":
            t = pa.large_string()
        elif enc == "Bool":
            t = pa.bool_()
        else:
            t = getattr(pa, ARROW_NUMBERS[enc])()
        for d in node.get("dimensions") or []:
            t = pa.list_(pa.field("item", t, nullable=False), int(d))
        return pa.field(name, t, nullable=k == "fill_nullable", metadata=md)
    if k == "vls_string":
        return pa.field(name, pa.large_string(), nullable=node["codec"] == S.PLACEHOLDER_CODEC, metadata=md)
    if k == "list":
        item = arrow_field_of(pa, "item", node["children"][0])
        return pa.field(name, pa.large_list(item), nullable=False, metadata=md)
    if k == "record":
        fields = [arrow_field_of(pa, f, c) for f, c in zip(node["field_names"], node["children"])]
        return pa.field(name, pa.struct(fields), nullable=False, metadata=md)
    if k == "constant":
        return pa.field(name, pa.null(), nullable=True, metadata=md)
    if k == "blob":
        return pa.field(name, pa.large_binary(), nullable=False, metadata=md)
    raise ValueError(f"no Arrow type for kind {k}")


def _pandas_hinted(pa, name, s, node):
    """A column of a DataFrame made by `Vector.to_pandas` (its attrs name each column's schema node)."""
    f = arrow_field_of(pa, name, node)
    t = f.type
    vals = s.to_numpy(dtype=object) if s.dtype == object else s
    if pa.types.is_fixed_size_list(t) and s.dtype == object:
        present = np.array([v is not None for v in vals], bool)
        if present.any():
            shape = np.asarray(vals[present][0]).shape
            full = np.zeros((len(vals),) + shape, dtype=np.asarray(vals[present][0]).dtype)
            full[present] = np.stack(list(vals[present]))
        else:
            full = np.zeros((len(vals),) + tuple(reversed(node.get("dimensions") or
                                                          node["children"][0].get("dimensions", [1]))))
        arr, _ = _numpy_to_arrow(pa, name, full)
        if not present.all():
            arr = _with_nulls(pa, arr, ~present)
        return arr.cast(t), f
    if isinstance(s.dtype, pd_categorical()):
        vals = s.astype(object).to_numpy()
    return pa.array(vals, type=t, from_pandas=True), f


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
    return _numpy_to_arrow(pa, name, s.to_numpy())


def _nest(pa, names, arrays, fields):
    """Dotted names -> nested struct columns ('a.b' -> struct a with field b)."""
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
            sub_a, sub_f = _nest(pa, *v)
            st = pa.StructArray.from_arrays(sub_a, fields=sub_f)
            out_a.append(st)
            out_f.append(pa.field(name, st.type, nullable=False))
        else:
            out_a.append(v[0])
            out_f.append(v[1].with_name(name))
    return out_a, out_f


def to_table(data, schema=None):
    """Any accepted input -> (pyarrow.Table or Array, root field or None for records)."""
    pa = _need_pa()
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None and isinstance(data, pd.DataFrame):
        names = [str(c) for c in data.columns]
        hints = data.attrs.get("h5vec.columns", {}) if schema is None else {}
        pairs = [_pandas_to_arrow(pa, n, data[c], hints.get(n)) for n, c in zip(names, data.columns)]
        arrays, fields = _nest(pa, names, [p[0] for p in pairs], [p[1] for p in pairs])
        table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    elif pd is not None and isinstance(data, pd.Series):
        a, f = _pandas_to_arrow(pa, ROOT, data)
        return _cast_root(pa, a, f, schema)
    elif isinstance(data, dict):
        names = [str(k) for k in data]
        pairs = []
        for n, v in zip(names, data.values()):
            if isinstance(v, (pa.Array, pa.ChunkedArray)):
                pairs.append((v, pa.field(n, v.type, nullable=False)))
            elif pd is not None and isinstance(v, pd.Series):
                pairs.append(_pandas_to_arrow(pa, n, v))
            else:
                pairs.append(_numpy_to_arrow(pa, n, v if isinstance(v, np.ndarray) else np.asarray(v)))
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
        raise TypeError("data: a pyarrow.Table, pandas.DataFrame, dict of numpy arrays, or one array")
    if schema is not None:
        if isinstance(schema, pa.Schema):
            table = table.select(schema.names).cast(schema)
        else:
            raise TypeError("schema: a pyarrow.Schema")
    return table, None


def _cast_root(pa, a, f, schema):
    if schema is not None:
        f = schema if isinstance(schema, pa.Field) else schema.field(0)
        a = a.cast(f.type)
    return a, f


class Options:
    def __init__(self, chunk_length, compression, vls_strings):
        self.chunk_length = chunk_length
        self.compression = compression
        self.vls_strings = vls_strings
        _h5.compression_kwargs(compression)  # checks it early

    def vls(self, path):
        v = self.vls_strings
        if v is True:
            return True
        if not v:
            return False
        col = path[2:] if path.startswith("$.") else path
        return col in set(v) or (path == "$" and ROOT in set(v))


def build(data, schema, opts):
    """(root Col, root Node, rows)."""
    obj, field = to_table(data, schema)
    if field is not None:
        col, node = from_arrow(obj, field, "$", opts)
        return col, node, len(obj)
    table = obj.combine_chunks() if any(c.num_chunks > 1 for c in obj.columns) else obj
    md = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if md.get("h5vec.root") == "value" and table.num_columns == 1:
        col, node = from_arrow(table.column(0), table.schema.field(0), "$", opts)
        return col, node, table.num_rows
    names, cols, nodes = [], [], []
    for i, f in enumerate(table.schema):
        if not f.name or f.name in (".", "..") or "/" in f.name or "\0" in f.name:
            raise FormatError(f"$.{f.name}", None, f"invalid field name {f.name!r}")
        c, n = from_arrow(table.column(i), f, f"$.{f.name}", opts)
        names.append(f.name)
        cols.append(c)
        nodes.append(n)
    rows = table.num_rows
    if not names:
        node = S.Node("constant", codec=constant_codec(), logical_type="()")
        return C.Const(rows, node), node, rows
    node = record_node(names, nodes, logical=md.get("h5vec.logical_type", "python.record"))
    return C.Rec(rows, names, cols, node), node, rows


# ---------------------------------------------------------------------------
# Columns -> datasets


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
    return _h5.create_column(g, name, dtype, inner, chunk, ctx.opts.compression, fillvalue)


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


UNION_WRITE = ("enums with data (unions, SPEC.md section 4.4) are read by this package but not written; "
               "write them with h5vec (Rust)")


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
        write_field(g, col, inner, pos, ctx, path)
        _write_mask(g, col.valid, pos, ctx)
    elif k == "union":
        raise FormatError(path, None, UNION_WRITE)
    else:
        raise FormatError(path, None, f"kind {k} cannot be a field")


def _write_mask(g, valid, pos, ctx):
    ds = _dataset(g, "MASK", _h5.H5COL_BOOL, (), ctx.chunk_rows(1, len(valid)), ctx)
    _h5.put_rows(ds, pos, valid.astype(bool))


def _write_list(g, col, node, pos, ctx, path):
    if "OFFSETS" not in g:
        _h5.write_attr_ascii(g, "CLASS", "LIST_COLUMN")
        _h5.write_attr_ascii(g, "KIND", "OFFSETS")
        offs = _h5.create_column(g, "OFFSETS", "<u8", (), ctx.chunk_rows(8, col.n + 1), ctx.opts.compression)
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
            o = _h5.create_column(sv, "OFFSETS", "<u8", (), ctx.chunk_rows(8, col.n + 1), ctx.opts.compression)
            _h5.put_rows(o, 0, np.zeros(1, np.uint64))
            _h5.create_column(sv, "CHARS", "u1", (), ctx.chunk_bytes(len(col.data)), ctx.opts.compression)
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
    else:
        raise FormatError(path, None, f"kind {k} cannot be a list element")


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


def _write_metadata(meta, node, count):
    _h5.write_fixed_str(meta, "format_name", FORMAT_NAME)
    meta.create_dataset("format_version", data=np.int64(1), dtype="<i8")
    _h5.write_fixed_str(meta, "logical_type", node.logical_type)
    meta.create_dataset("serialized_schema", data=np.frombuffer(node.serialized().encode("utf-8"), np.uint8))
    _h5.write_bitfield_scalar(meta, "schema_was_inferred", 0)
    S.write_node(meta.create_group("schema"), node)
    meta.create_dataset("count", data=np.int64(count), dtype="<i8")


def save_vector(where, name, data, *, chunk_length=None, compression=None, replace=False, schema=None,
                vls_strings=False):
    check_name(name)
    opts = Options(chunk_length, compression, vls_strings)
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
        _write_metadata(vg.create_group("metadata"), node, rows)
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
        col, node, rows = build(data, schema, opts)
        node = _adopt(stored, node, col, "$")
        if not stored.same_layout(node):
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
    node.logical_type = stored.logical_type
    return node
