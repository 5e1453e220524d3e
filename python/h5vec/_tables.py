"""h5col tables (SPEC section 9) and takane/dolomite VLS string arrays (SPEC
section 10), read without a schema tree: the layout itself says the types.
`open_table` / `open_strings` give `Table` / `StringArray`, read as a
`Vector` is (`_readable`); `read_table` / `read_strings` read in one call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

import h5py
import numpy as np

from . import _columns as C
from . import _h5
from . import _read
from . import _schema as S
from ._errors import FormatError, mismatch
from ._readable import Readable, Where, _rows
from ._vector import ROOT, _open_where

if TYPE_CHECKING:
    import pandas
    import polars
    import pyarrow


def _group(where, name=None):
    if isinstance(where, (str, bytes)) or hasattr(where, "__fspath__"):
        raise TypeError("pass an h5py.Group (open the file with h5py.File)")
    if name is not None:
        return _h5.open_group(where, name, "$")
    return where


def _user_fill(ds):
    dcpl = ds.id.get_create_plist()
    if dcpl.fill_value_defined() != h5py.h5d.FILL_VALUE_USER_DEFINED:
        return None
    return ds.fillvalue


def _infer_leaf(ds, path, rows):
    """(Node, reader) for a 1-D (or n-D) leaf dataset of an h5col table or list."""
    info = _h5.type_info(ds)
    shp = _h5.shape(ds)
    if len(shp) < 1:
        raise mismatch(path, ds.name, "a 1-D dataset", "a scalar")
    if shp[0] < rows:
        raise mismatch(path, ds.name, f"at least {rows} rows", shp[0])
    if _h5.is_h5col_bool(info):
        node = S.Node("scalar", encoded_type="Bool", logical_type="bool")
        return node, _read.Leaf(ds, info, node, path)
    if info.cls in (h5py.h5t.INTEGER, h5py.h5t.FLOAT):
        kind = "f" if info.cls == h5py.h5t.FLOAT else ("i" if info.signed else "u")
        enc = S.ENCODED_OF.get(np.dtype(f"<{kind}{info.size}"))
        if enc is None:
            raise mismatch(path, ds.name, "a number of 8-64 bits", info.describe())
        fill = _user_fill(ds)
        if fill is not None and len(shp) == 1:
            node = S.Node("fill_nullable", encoded_type=enc, logical_type=enc)
            return node, _read.Fill(ds, node, path)
        node = S.Node("scalar" if len(shp) == 1 else "dense", encoded_type=enc, logical_type=enc,
                      dimensions=list(reversed(shp[1:])) if len(shp) > 1 else None)
        return node, _read.Leaf(ds, info, node, path)
    if info.cls == h5py.h5t.STRING and not info.vlen_str and len(shp) == 1:
        node = S.Node("scalar", encoded_type="String", logical_type="String")
        return node, FixedStrings(ds, node, path, _user_fill(ds))
    raise mismatch(path, ds.name, "an h5col column type (number, h5col bool, fixed-length string)",
                   info.describe())


class FixedStrings:
    """h5col fixed-length string columns (null-padded); the fill value marks a missing value."""

    def __init__(self, ds, node, path, fill):
        self.ds, self.node, self.path = ds, node, path
        self.width = ds.id.get_type().get_size()
        self.fill = None if fill is None else bytes(fill).rstrip(b"\0")

    def read(self, a, b, sel=None):
        raw = _h5.read_rows(self.ds, a, b, self.path)
        mat = np.frombuffer(raw.tobytes(), np.uint8).reshape(len(raw), self.width)
        nz = mat != 0
        # Length = up to the first NUL.
        first_nul = np.where((~nz).any(axis=1), (~nz).argmax(axis=1), self.width)
        lens = first_nul.astype(np.int64)
        offsets = np.zeros(len(raw) + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        keep = np.arange(self.width)[None, :] < lens[:, None]
        data = mat[keep]
        C.check_utf8(offsets, data, self.path, self.ds.name, a)
        valid = None
        if self.fill is not None:
            f = np.frombuffer(self.fill, np.uint8)
            valid = ~((lens == len(f)) & ((mat[:, :len(f)] == f[None, :]).all(axis=1) if len(f) else True))
        return C.Str(offsets, data, "utf8", self.node, valid)


#: The logical type of a categorical column whose labels carry ordered = True.
ORDERED_ENUM = "ordered enum"


def _category_labels(table, ds, path):
    """(labels, labels dataset, ordered) of categorical column `ds` of h5col table
    group `table`: its CATEGORIES attribute is an object reference
    (H5T_STD_REF_OBJ) to a 1-D string dataset in the table's CATEGORIES
    group. The reference is compared with the addresses of that group's
    datasets, never followed."""
    where = f"{ds.name} attribute CATEGORIES"
    want = f"a reference to a labels dataset in `{_h5.member_path(table, 'CATEGORIES')}`"
    aid = ds.attrs.get_id("CATEGORIES")
    t = aid.get_type()
    if t.get_class() != h5py.h5t.REFERENCE or t.get_size() != 8 or aid.shape not in ((), (1,)):
        raise mismatch(path, where, "one object reference (H5T_STD_REF_OBJ)",
                       f"{_h5.TypeInfo(t).describe()} of shape {aid.shape}")
    raw = np.zeros(aid.shape, np.uint64)
    aid.read(raw, mtype=h5py.h5t.STD_REF_OBJ)
    addr = int(raw.reshape(-1)[0])
    if addr == 0:
        raise mismatch(path, where, want, "a null reference")
    if "CATEGORIES" not in table or not isinstance(table.get("CATEGORIES", getlink=True), h5py.HardLink) \
            or not isinstance(table["CATEGORIES"], h5py.Group):
        raise mismatch(path, where, want, "no CATEGORIES group in the table")
    cats = table["CATEGORIES"]
    target = None
    for n in _h5.members(cats, path):
        obj = cats[n]
        if isinstance(obj, h5py.Dataset) and h5py.h5o.get_info(obj.id).addr == addr:
            target = obj
            break
    if target is None:
        raise mismatch(path, where, want, "a reference to no dataset of it (dangling, or another object)")
    _h5.check_storage(target, path)
    info = _h5.type_info(target)
    if info.cls != h5py.h5t.STRING or target.ndim != 1:
        raise mismatch(path, target.name, "a 1-D dataset of string labels", info.describe())
    labels = []
    for i, v in enumerate(_h5.read_rows(target, 0, target.shape[0], path)):
        b = v if isinstance(v, bytes) else str(v).encode("utf-8")
        try:
            labels.append(b.split(b"\0", 1)[0].decode("utf-8"))
        except UnicodeDecodeError:
            raise FormatError(path, target.name, f"label {i} is not valid UTF-8") from None
    ordered = False
    if "ordered" in target.attrs:
        try:
            ordered = bool(np.asarray(target.attrs["ordered"]).reshape(-1)[0])
        except (TypeError, ValueError, IndexError):
            ordered = False
    return labels, target.name, ordered


class Categories:
    """An h5col categorical column (SPEC section 9): integer codes, read as an
    enum whose labels are the categories (numpy: labels, pandas: Categorical,
    Arrow: dictionary, both ordered when the labels dataset says ordered =
    True); the fill value is the missing code, any other code outside the
    labels an error naming the row."""

    def __init__(self, table, ds, path, rows):
        info = _h5.type_info(ds)
        if info.cls != h5py.h5t.INTEGER or ds.ndim != 1:
            raise mismatch(path, ds.name, "a 1-D dataset of integer category codes", info.describe())
        if ds.shape[0] < rows:
            raise mismatch(path, ds.name, f"at least {rows} rows", ds.shape[0])
        self.ds, self.path = ds, path
        self.labels, self.labels_at, ordered = _category_labels(table, ds, path)
        fill = _user_fill(ds)
        self.fill = None if fill is None else int(fill)
        self.node = S.Node("scalar", encoded_type="Int32", logical_type=ORDERED_ENUM if ordered else "enum",
                           labels={lab: i for i, lab in enumerate(self.labels)})

    def read(self, a, b, sel=None):
        codes = _h5.read_rows(self.ds, a, b, self.path).astype(np.int64)
        n = len(self.labels)
        is_fill = codes == self.fill if self.fill is not None else np.zeros(len(codes), bool)
        bad = ~(is_fill | ((codes >= 0) & (codes < n)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            fill = f"the column's fill value {self.fill}" if self.fill is not None else "a fill value (the column has none)"
            raise FormatError(f"{self.path}[{a + i}]", self.ds.name,
                              f"category code {int(codes[i])} is neither {fill} nor a position in the "
                              f"{n} labels of `{self.labels_at}`")
        vals = np.where(is_fill, 0, codes).astype(np.int32)
        valid = ~is_fill if is_fill.any() else None
        return C.Prim(vals, "enum", self.node, valid, labels={lab: i for i, lab in enumerate(self.labels)})


def _infer_list(g, path, rows):
    """(Node, reader) of an h5col list group, its element layout read from the file."""
    nullable = "MASK" in g
    extra = ["MASK"] if nullable else []
    child_node = _infer_item_node(g, "VALUES", path + "[]")
    node = S.Node("list", children=[child_node], logical_type="list")
    reader = _read.ListReader(g, node, path, rows, extra)
    if nullable:
        nn = S.Node("nullable", children=[node], logical_type="nullable list")
        return nn, _read.Nullable(_read._open_mask(g, path, rows), reader, nn, path)
    return node, reader


def _infer_item_node(g, name, path):
    if name not in g:
        raise mismatch(path, _h5.member_path(g, name), "VALUES", "nothing")
    _h5.check_hard(g, name, path)
    obj = g[name]
    if isinstance(obj, h5py.Dataset):
        _h5.check_storage(obj, path)
        info = _h5.type_info(obj)
        if _h5.is_h5col_bool(info):
            return S.Node("scalar", encoded_type="Bool", logical_type="bool")
        if info.cls in (h5py.h5t.INTEGER, h5py.h5t.FLOAT):
            kind = "f" if info.cls == h5py.h5t.FLOAT else ("i" if info.signed else "u")
            enc = S.ENCODED_OF.get(np.dtype(f"<{kind}{info.size}"))
            if enc is None:
                raise mismatch(path, obj.name, "a number of 8-64 bits", info.describe())
            if obj.ndim > 1:
                return S.Node("dense", encoded_type=enc, dimensions=list(reversed(obj.shape[1:])), logical_type=enc)
            if _user_fill(obj) is not None:
                return S.Node("fill_nullable", encoded_type=enc, logical_type=enc)
            return S.Node("scalar", encoded_type=enc, logical_type=enc)
        raise mismatch(path, obj.name, "list values of numbers or h5col bools", info.describe())
    cls = _h5.read_attr_string(obj, "CLASS", path)
    if cls == "STRING_VALUES":
        node = S.Node("string_values", encoded_type="String", logical_type="String")
    elif cls == "LIST_COLUMN":
        node = S.Node("list", children=[_infer_item_node(obj, "VALUES", path + "[]")], logical_type="list")
    else:
        raise mismatch(path, obj.name, 'CLASS "STRING_VALUES" or "LIST_COLUMN"', repr(cls))
    if "MASK" in obj:
        return S.Node("nullable", children=[node], logical_type="nullable")
    return node


def _table_names(g, path="$"):
    """(NROWS, column names in order) of h5col table group `g`, its attributes and members checked."""
    cls = _h5.read_attr_string(g, "CLASS", path)
    if cls != "COLUMN_TABLE":
        raise mismatch(path, g.name, 'CLASS = "COLUMN_TABLE"', repr(cls))
    ver = _h5.read_attr_string(g, "VERSION", path)
    if ver is None or ver.split(".")[0] != "1":
        raise mismatch(path, g.name, "VERSION 1.x", repr(ver))
    if "NROWS" not in g.attrs:
        raise mismatch(path, g.name, "an NROWS attribute", "nothing")
    aid = g.attrs.get_id("NROWS")
    t = _h5.TypeInfo(aid.get_type())
    if aid.shape not in ((), (1,)) or t.cls != h5py.h5t.INTEGER or t.signed:
        raise mismatch(path, g.name, "a scalar unsigned NROWS", t.describe())
    nrows = int(np.asarray(g.attrs["NROWS"]).reshape(-1)[0])
    order = g.attrs.get("column-order")
    names = [c.decode("utf-8") if isinstance(c, bytes) else str(c) for c in order] if order is not None \
        else sorted(m for m in _h5.members(g, path) if m not in RESERVED)
    members = set(_h5.members(g, path))
    for c in names:
        if c not in members:
            raise mismatch(f"$.{c}", _h5.member_path(g, c), "a column member", "nothing")
    return nrows, names


#: Groups HEP001 reserves in a table group (not columns).
RESERVED = ("CATEGORIES", "SEARCH_INDEXES")


def _select_columns(names, columns):
    if columns is not None:
        missing = [c for c in columns if c not in names]
        if missing:
            raise KeyError(f"no columns {missing}; columns: {names}")
        names = [c for c in names if c in set(columns)]
    return names


def _table_column(g, c, nrows):
    """The reader of column `c` of h5col table group `g`."""
    p = f"$.{c}"
    _h5.check_hard(g, c, p)
    obj = g[c]
    if isinstance(obj, h5py.Dataset):
        _h5.check_storage(obj, p)
        if "CATEGORIES" in obj.attrs:
            return Categories(g, obj, p, nrows)
        node, reader = _infer_leaf(obj, p, nrows)
    else:
        if _h5.read_attr_string(obj, "CLASS", p) != "LIST_COLUMN":
            raise mismatch(p, obj.name, 'a dataset or a group with CLASS "LIST_COLUMN"', "another group")
        node, reader = _infer_list(obj, p, nrows)
    return reader


def read_table_columns(where, name=None, columns=None, rows=None):
    g = _group(where, name)
    nrows, names = _table_names(g)
    names = _select_columns(names, columns)
    # Python's bounds (negative from the end); a step other than 1, or
    # anything but a slice, range or (start, stop), is an error, as for a
    # Vector: never rows other than those asked for.
    a, b = _rows(rows, nrows)
    out = {}
    for c in names:
        out[c] = _table_column(g, c, nrows).read(a, b)
    return out, a, b


def _table_numpy(cols):
    return {k: C.to_numpy(c) for k, c in cols.items()}


def _ordered(col):
    """Whether `col` is a categorical column whose labels dataset says ordered = True."""
    return col.node.logical_type == ORDERED_ENUM


def _table_arrow(cols, pa):
    arrays = []
    for c in cols.values():
        arr = C.to_arrow(c, pa)
        if _ordered(c):
            arr = pa.DictionaryArray.from_arrays(arr.indices, arr.dictionary, ordered=True)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, names=list(cols)) if arrays else pa.table({})


def _table_pandas(cols, pd, a, b):
    idx = pd.RangeIndex(a, b)
    series = []
    for k, c in cols.items():
        sr = C.to_pandas_series(c, None, k, idx)
        series.append(sr.cat.as_ordered() if _ordered(c) else sr)
    return pd.concat(series, axis=1) if series else pd.DataFrame(index=idx)


def read_table(where: h5py.Group, name: Optional[str] = None, columns: Optional[List[str]] = None,
               rows: Optional[slice] = None, format: str = "numpy") -> Any:
    """Reads an h5col table (the group `where`, or its member `name`): a dict of
    numpy arrays like `Vector.read`, or with format='arrow' / 'pandas' a
    pyarrow.Table / pandas.DataFrame. Missing values (fill values, MASK) are
    masked or None; NROWS is the truth (longer datasets are cut)."""
    cols, a, b = read_table_columns(where, name, columns, rows)
    if format == "numpy":
        return _table_numpy(cols)
    if format == "arrow":
        import pyarrow as pa
        return _table_arrow(cols, pa)
    if format == "pandas":
        import pandas as pd
        return _table_pandas(cols, pd, a, b)
    raise ValueError(f"unknown format {format!r}")


def _open_vls(g, path="$"):
    """(reader, rows) of takane/dolomite VLS string array group `g`, its layout checked."""
    t = _h5.read_attr_string(g, "type", path)
    if t != "vls":
        raise mismatch(path, g.name, 'type = "vls"', repr(t))
    names = _h5.members(g, path)
    extra = set(names) - {"heap", "pointers", "names"}
    if extra or not {"heap", "pointers"} <= set(names):
        raise mismatch(path, g.name, "members heap, pointers (and optional names)", sorted(names))
    node = S.Node("vls_string", codec=S.PLACEHOLDER_CODEC, encoded_type="String",
                  children=[S.Node("scalar", encoded_type="String")])
    ptrs = _h5.open_dataset(g, "pointers", path)
    reader = _read.Vls(g, node, path, 0)
    n = ptrs.shape[0] if ptrs.shape else 0
    return reader, n


def read_strings(where: h5py.Group, name: Optional[str] = None, format: str = "numpy") -> Any:
    """Reads a takane/dolomite VLS string array (group with @type = "vls",
    `heap` and `pointers`): an object array of str with None for missing
    values (or a pyarrow large_string array with format='arrow')."""
    g = _group(where, name)
    reader, n = _open_vls(g)
    col = reader.read(0, n)
    if format == "arrow":
        import pyarrow as pa
        return C.to_arrow(col, pa)
    if format == "numpy":
        return C.to_numpy(col)
    raise ValueError(f"unknown format {format!r}")


def _open_container(where, name, opener):
    """`opener(group, file)` of `where` (a path, opened read-only, or an h5py group)
    or of its member `name`; the file is closed again if opening fails."""
    group, owned = _open_where(where)
    try:
        g = _h5.open_group(group, name, "$") if name is not None else group
        return opener(g, owned)
    except BaseException:
        if owned is not None:
            _h5.close_file(owned)
        raise


class Table(Readable[Dict[str, np.ndarray], "pyarrow.Table", "pandas.DataFrame", "polars.DataFrame"]):
    """An h5col table opened for reading (see `open_table`): `read` gives
    {column: numpy array | numpy.ma.MaskedArray | object array} as
    `read_table`, `to_arrow` a pyarrow.Table, `to_pandas` a pandas.DataFrame,
    `to_polars` a polars.DataFrame; `t[10:20]` is `t.read(rows=slice(10, 20))`.
    Every column's layout is checked when the table is opened."""

    def __init__(self, group: h5py.Group, file: Optional[h5py.File] = None) -> None:
        self._file = file
        self.group = group
        self._count, self._names = _table_names(group)
        self._readers = {c: _table_column(group, c, self._count) for c in self._names}

    @property
    def columns(self) -> List[str]:
        """The column names, in the table's order."""
        return list(self._names)

    def __repr__(self) -> str:
        return f"<h5vec.Table {self.group.name!r}: {self._count} rows, columns {self._names}>"

    def _selection(self, columns):
        return _select_columns(self._names, [columns] if isinstance(columns, str) else columns)

    def _read_rows(self, sel, a, b):
        return {c: self._readers[c].read(a, b) for c in sel}

    def _numpy(self, col, parse_json):
        return _table_numpy(col)

    def _arrow(self, col, pa):
        return _table_arrow(col, pa)

    def _pandas(self, col, pd, a, b, parse_json):
        return _table_pandas(col, pd, a, b)

    def _column_indexes(self, column):
        from . import _indexes
        return _indexes.table_indexes(self, column)

    def _chunk_stats(self, column):
        cache = self.__dict__.setdefault("_stats_cache", {})
        if column not in cache:
            from . import _indexes
            cache[column] = _indexes.table_stats(self, column)
        return cache[column]


class StringArray(Readable[np.ndarray, "pyarrow.Array", "pandas.Series", "polars.Series"]):
    """A takane/dolomite VLS string array opened for reading (see
    `open_strings`): one column, so `read` gives the object array of str
    (None for missing values) as `read_strings`, `to_arrow` a pyarrow
    large_string array, `to_pandas` a pandas.Series (index = the row numbers),
    `to_polars` a polars.Series; `s[10:20]` is `s.read(rows=slice(10, 20))`."""

    def __init__(self, group: h5py.Group, file: Optional[h5py.File] = None) -> None:
        self._file = file
        self.group = group
        self._reader, self._count = _open_vls(group)

    @property
    def columns(self) -> List[str]:
        """`["value"]`: the one column (what `columns=` may name)."""
        return [ROOT]

    def __repr__(self) -> str:
        return f"<h5vec.StringArray {self.group.name!r}: {self._count} strings>"

    def _selection(self, columns):
        for c in [columns] if isinstance(columns, str) else (columns or []):
            if c != ROOT:
                raise KeyError(f"no column {c!r}; columns: {self.columns}")
        return None

    def _read_rows(self, sel, a, b):
        return self._reader.read(a, b)

    def _numpy(self, col, parse_json):
        return C.to_numpy(col)

    def _arrow(self, col, pa):
        return C.to_arrow(col, pa)

    def _arrow_batches(self, col, pa):
        return [C.to_arrow(col, pa)]

    def _pandas(self, col, pd, a, b, parse_json):
        return C.to_pandas_series(col, None, ROOT, pd.RangeIndex(a, b))


def open_table(where: Where, name: Optional[str] = None) -> Table:
    """Opens the h5col table `where` (an h5py.File or h5py.Group, or a path,
    opened read-only and closed by `Table.close()`), or its member `name`,
    checking its layout; read it as a `Vector` (`read`, `to_arrow`, slices)."""
    return _open_container(where, name, Table)


def open_strings(where: Where, name: Optional[str] = None) -> StringArray:
    """Opens the takane/dolomite VLS string array `where` (an h5py.File or
    h5py.Group, or a path, opened read-only and closed by `StringArray.close()`),
    or its member `name`, checking its layout; read it as a `Vector`."""
    return _open_container(where, name, StringArray)
