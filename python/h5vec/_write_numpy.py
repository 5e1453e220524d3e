"""Writing vectors, part 3: numpy arrays and Python objects -> Arrow
(nullability from masked arrays, datetimes, complex numbers, UUIDs, dicts as maps)."""

import uuid as _uuid

import numpy as np

from . import _schema as S
from ._errors import FormatError
from ._write_nodes import COMPLEX
from ._write_encode import _is_ext


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
