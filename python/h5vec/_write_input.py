"""Writing vectors, part 5: any accepted input (pyarrow, pandas, polars, dicts of
numpy arrays, one array) -> a pyarrow Table or Array (`to_table`)."""

import numpy as np

from . import _schema as S
from ._errors import FormatError
from ._write_nodes import _field_kid, _inner, _need_pa, _node_dict
from ._write_numpy import _numpy_to_arrow, _strict_type
from ._write_conform import (
    _conform,
    _fixed_from_objects,
    _flat_target,
    _pandas_as,
    _pandas_hinted,
    _py_to,
    _schema_field,
    arrow_schema_of,
)
from ._vector import ROOT


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
        # Arrow-backed strings (pandas 3's `str`) go over without a Python object per row.
        a = pa.array(s.array, from_pandas=True)
        if isinstance(a, pa.ChunkedArray):
            a = a.combine_chunks() if a.num_chunks != 1 else a.chunk(0)
        if not pa.types.is_large_string(a.type):
            a = a.cast(pa.large_string())
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
