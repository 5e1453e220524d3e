"""Dask: vectors as a dask.dataframe.DataFrame whose partitions each open
their file themselves (so they run on any worker that can see the path), of
one file or of many (`read_vector`), and a Dask DataFrame written as a
directory of files, one per partition (`to_h5vec`; SPEC section 15)."""

from __future__ import annotations

import collections
import fnmatch
import os
import threading
import uuid
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

from ._dataset import Dataset, open_known, schema_difference
from ._errors import FormatError
from ._vector import check_name

if TYPE_CHECKING:
    import dask.dataframe
    import pandas


def _partition(path, name, columns, start, stop, filters=None, offset=0, known=(None, None)):
    # Without filters only the columns read are opened (filters may read others,
    # and their statistics and indexes).
    with open_known(path, name, *known, columns=columns if filters is None else None) as v:
        if known[1] is not None and v.node is not known[1][0]:
            diff = schema_difference(known[1][0], v.node)
            if diff is not None:
                raise FormatError(diff[0], None, f"{path}: the schema of vector {name!r} changed since the frame "
                                                 f"was made: expected {diff[1]}, found {diff[2]}")
        if len(v) < stop:
            raise FormatError("$", None, f"{path}: vector {name!r} has {len(v)} rows, fewer than the {stop} it had "
                                         "when the frame was made")
        df = v.to_pandas(columns=columns, rows=slice(start, stop), filters=filters)
    if offset:
        df.index = df.index + offset
    return df


def read_vector(path: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]], name: str,
                columns: Optional[Sequence[str]] = None, partition_rows: Optional[int] = None,
                filters: Optional[Sequence[Any]] = None) -> "dask.dataframe.DataFrame":
    """A lazy dask DataFrame over vector `name` of the HDF5 file at `path`,
    or of several files: a glob pattern (``"parts/*.h5"``, sorted path
    order) or a list of paths (in its order), read as their concatenation
    (`h5vec.open_dataset`: the schemas are checked against the first file's
    now, and the rows counted now are the frame's).

    Partitions hold `partition_rows` rows (default: about 256 MiB of the
    columns read, at least 65,536 rows, the way Dask's own readers size
    blocks: a few large partitions keep Dask's group-bys on tree reductions
    instead of shuffles), rounded to a multiple of the vector's chunk length
    so that no chunk is read by two partitions; a partition never spans two files (each file's last partition
    may be shorter; files of no rows have none). The index is the row number,
    running on from one file to the next, with known divisions. Columns
    have the dtypes of `Vector.to_pandas` (Dask's conversion of object
    columns to strings is off for this frame: it would turn lists, maps and
    UUIDs into their text). A column of a kind or codec this version does
    not know raises `FormatError` here unless `columns` leaves it out.

    A computation on a few of the frame's columns (``ddf["x"].mean()``) lets
    Dask's optimizer read several whole partitions in one task, as it does
    for `dask.dataframe.read_parquet` (dask-expr's IO fusion, by the
    fraction of a row's bytes those columns hold: numbers at their width,
    other values counted as 32 bytes; reading every column fuses nothing);
    the frame's own partitions and divisions are the ones above.

    `filters` (pyarrow's DNF form, as `Vector.read`) keeps the matching rows:
    partitions whose chunks the vector's statistics rule out are dropped
    here (the divisions stay each kept partition's first row, then the last
    row of the last one: every index value still lies within its partition's
    bounds), and each kept partition filters its rows when computed::

        ddf = read_vector("f.h5", "events", filters=[("ts", ">=", t0), ("ts", "<", t1)])
        ddf = read_vector("logs/*.h5", "events", columns=["ts", "value"])
    """
    import dask
    import dask.dataframe as dd

    ds = Dataset(path, name)
    parts = []  # (path, local start, local stop, first global row)
    from ._filters import Plan
    meta = _cached_meta(ds, columns)
    if meta is None or filters is not None:
        with ds._open_file(0) as v:
            if meta is None:
                meta = v.to_pandas(columns=columns, rows=slice(0, 0))
                _remember_meta(ds, columns, meta)
            if filters is not None:
                Plan(v, filters)  # checks the filters now, not in a worker (also when every file is empty)
    target = int(partition_rows or _default_rows(meta))
    for i, (f, chunk) in enumerate(zip(ds.files, ds._chunk_rows)):
        if f.rows == 0:
            continue
        n = f.rows
        chunk = max(1, chunk)
        step = max(chunk, (target // chunk) * chunk)
        bounds = list(range(0, n, step)) + [n]
        here = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
        if filters is not None:
            with ds._open_file(i) as v:
                may = Plan(v, filters).candidate_chunks()  # None: no statistics to go by
            if may is not None:
                c, flags = may
                here = [(a, b) for a, b in here if flags[a // c:(b - 1) // c + 1].any()]
        # The file's identity and schema node ride along: a worker that finds the
        # file unchanged does not read its schema tree again.
        parts.extend((f.path, a, b, f.start, ds._known[i]) for a, b in here)
    if not parts:
        # No rows (or nothing can match): one partition of no rows keeps the frame well formed.
        parts = [(ds.files[0].path, 0, 0, 0, ds._known[0])]
    # Divisions: each partition's first row, then the last row of the last one.
    divisions = [o + a for _, a, _, o, _ in parts]
    _, a, b, o, _ = parts[-1]
    divisions.append(o + max(b - 1, a))
    from ._dask_fusion import from_parts
    with dask.config.set({"dataframe.convert-string": False}):
        first = str(meta.columns[0]) if len(meta.columns) else None
        func = _Part(name, columns, filters, first)
        # from_map's expression, which also lets Dask fuse reads of few columns
        # (None: a Dask without those internals).
        ddf = from_parts(func, parts, meta, divisions, "h5vec-read-vector")
        if ddf is None:
            ddf = dd.from_map(func, parts, meta=meta, divisions=divisions, label="h5vec-read-vector")
        return ddf


# The empty frames (`meta`) made of first files, by (path, vector, identity,
# columns): a file unchanged since this process made its meta (and checked
# the columns) gives the same one.
_METAS: "collections.OrderedDict[Any, Any]" = collections.OrderedDict()
_METAS_MAX = 256
_METAS_LOCK = threading.Lock()


def _meta_key(ds, columns):
    identity = ds._known[0][0]
    if identity is None or ds._known[0][1][1] is None:
        return None
    cols = None if columns is None else (columns,) if isinstance(columns, str) else tuple(columns)
    return (os.path.abspath(ds.files[0].path), ds.name, identity, cols)


def _cached_meta(ds, columns):
    key = _meta_key(ds, columns)
    if key is None:
        return None
    with _METAS_LOCK:
        meta = _METAS.get(key)
        if meta is not None:
            _METAS.move_to_end(key)
    return None if meta is None else meta.copy()


def _remember_meta(ds, columns, meta):
    key = _meta_key(ds, columns)
    if key is None:
        return
    with _METAS_LOCK:
        _METAS[key] = meta.copy()
        while len(_METAS) > _METAS_MAX:
            _METAS.popitem(last=False)


#: Bytes of column values a partition holds by default.
PARTITION_BYTES = 256 << 20


def _default_rows(meta):
    """Rows of about `PARTITION_BYTES` of `meta`'s columns (numbers at their
    width, anything held as Python objects counted as 32 bytes a value)."""
    from ._dask_fusion import row_bytes
    row = row_bytes(meta.dtypes) or 8
    return max(1 << 16, PARTITION_BYTES // row)


class _Part:
    """Picklable partition function: (path, start, stop, offset, (identity, node)) -> DataFrame.
    Its `columns=` lets Dask read only the columns a computation needs
    (`ddf["x"].mean()` reads column x alone)."""

    def __init__(self, name, columns, filters=None, first=None):
        self.name, self.columns, self.filters, self.first = name, columns, filters, first

    def __dask_tokenize__(self):
        # Deterministic task names (the default would hash the object's identity).
        return ("h5vec.dask._Part", self.name, self.columns, repr(self.filters), self.first)

    def __call__(self, part, columns=None):
        path, start, stop, offset = part[:4]
        known = part[4] if len(part) > 4 else (None, None)
        if columns is None:
            return _partition(path, self.name, self.columns, start, stop, self.filters, offset, known)
        wanted = [columns] if isinstance(columns, str) else list(columns)
        # No column (len(ddf)): the first one gives the rows.
        df = _partition(path, self.name, wanted or [self.first], start, stop, self.filters, offset, known)
        return df if list(df.columns) == wanted else df[wanted]


# ---------------------------------------------------------------------------
# Writing


PART_PATTERN = "part-*.h5"


def part_name(i: int, width: int = 5) -> str:
    """The file name of part `i`: ``part-00000.h5`` (SPEC section 15)."""
    return f"part-{i:0{width}d}.h5"


def _schema_of(meta: "pandas.DataFrame", opts: Dict[str, Any], sample=None) -> Dict[str, Any]:
    """The schema node (as a dict) every part is written with, from the
    frame's meta: a column made by `Vector.to_pandas` / `read_vector` keeps
    its stored node (the meta's attrs say it), others the node `save_vector`
    gives their dtype. An object column says nothing about its values in an
    empty meta: its type is Arrow's inference from the first partition that
    has rows (`sample()`, as `dask.dataframe.to_parquet(schema="infer")`
    does), made nullable (a later partition may hold None); with no such
    partition, or values Arrow cannot type, it needs `schema=`."""
    import pandas as pd
    from ._write import build
    from ._write_datasets import Options
    from . import _schema as S
    from ._write_nodes import nullable_node, record_node, scalar_node

    wopts = Options(opts.get("chunk_length"), opts.get("compression"), opts.get("vls_strings", False))
    hints = meta.attrs.get("h5vec.columns", {}) or {}
    names = [str(c) for c in meta.columns]
    if any("." in n for n in names) or "h5vec.schema" in meta.attrs:
        # Nested records: as one (the columns need typed dtypes or hints).
        return build(meta, None, wopts)[1].to_dict()
    nonempty = None
    nodes = []
    for n, c in zip(names, meta.columns):
        s = meta[c]
        if n not in hints:
            if s.dtype == object:
                node = _inferred_node(n, c, sample, wopts)
                if node is None:
                    raise TypeError(f"to_h5vec: column {n!r} has dtype object in ddf._meta, which does not say what "
                                    f"it holds, and no partition has a value Arrow can type: give it a typed dtype "
                                    f"(e.g. 'string', pandas.ArrowDtype(pyarrow.list_(pyarrow.int64()))) or pass "
                                    f"schema= (a pyarrow.Schema or a Vector.schema)")
                nodes.append(node)
                continue
            if isinstance(s.dtype, pd.CategoricalDtype) and _enum_categories(s.dtype) is not None:
                # Known text categories: an enum of them (code i: category i) under a MASK
                # (missing values), which reads back as this very categorical dtype.
                cats = _enum_categories(s.dtype)
                enc = "Int8" if len(cats) <= 127 else "Int16" if len(cats) <= 32767 else "Int32"
                node = scalar_node(enc, S.ENUM, "enum")
                node.labels = {c: i for i, c in enumerate(cats)}
                nodes.append(nullable_node(node))
                continue
            if isinstance(s.dtype, pd.CategoricalDtype):
                # Stored as its categories' values: an empty categorical shows none of them.
                if nonempty is None:
                    import dask.dataframe as dd
                    nonempty = dd.utils.meta_nonempty(meta)
                s = nonempty[c]
        frame = s.to_frame(n)
        frame.attrs = {"h5vec.columns": {n: hints[n]}} if n in hints else {}
        nodes.append(build(frame, None, wopts)[1].children[0])
    return record_node(names, nodes).to_dict()


def _inferred_node(name, col, sample, wopts):
    """The node of object column `col` from the values of the first
    partition that has rows: Arrow's type of them, nullable (items of a
    list too, as Arrow infers them); None when there is no such partition
    or Arrow cannot type them."""
    import pyarrow as pa
    from ._write import build
    df = sample() if sample is not None else None
    if df is None:
        return None
    try:
        arr = pa.array(df[col], from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_null(arr.type):
        return None
    if pa.types.is_string(arr.type) or pa.types.is_binary(arr.type):
        arr = arr.cast(pa.large_string() if pa.types.is_string(arr.type) else pa.large_binary())
    schema = pa.schema([pa.field(name, arr.type, nullable=True)])
    return build(pa.Table.from_arrays([arr], schema=schema), None, wopts)[1].children[0]


class _FirstRows:
    """The first partition of `ddf` that has rows (computed once, on first
    use), or None."""

    def __init__(self, ddf):
        self.ddf, self.done, self.rows = ddf, False, None

    def __call__(self):
        if not self.done:
            self.done = True
            for i in range(self.ddf.npartitions):
                part = self.ddf.get_partition(i).compute()
                if len(part):
                    self.rows = part
                    break
        return self.rows


def _enum_categories(dtype):
    """The categories of a categorical dtype as enum labels: known, distinct,
    non-empty strings, at most 2^31 - 1 of them; else None."""
    from dask.dataframe.utils import UNKNOWN_CATEGORIES
    cats = list(dtype.categories)
    if not cats or UNKNOWN_CATEGORIES in cats or len(cats) >= 1 << 31:
        return None
    if not all(isinstance(c, str) and c for c in cats) or len(set(cats)) != len(cats):
        return None
    return cats


def _write_part(df, directory, i, width, name, schema, options):
    """Writes partition `i` to a temporary name, then renames it to its part name."""
    from ._write import save_vector
    final = os.path.join(directory, part_name(i, width))
    tmp = os.path.join(directory, f".{part_name(i, width)}.tmp-{uuid.uuid4().hex}")
    try:
        save_vector(tmp, name, df, schema=schema, **options)
        os.replace(tmp, final)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    return final


def to_h5vec(ddf: "dask.dataframe.DataFrame", directory: Union[str, "os.PathLike[str]"], name: str,
             overwrite: bool = False, **save_options: Any) -> List[str]:
    """Writes `ddf` as vector `name` of one file per partition in `directory`
    (created if missing): ``part-00000.h5``, ``part-00001.h5``, ... (more
    digits past 100,000 parts), and returns their paths in partition order.
    Read them back with ``read_vector(directory + "/part-*.h5", name)`` or
    `h5vec.open_dataset`; the index is not stored (a frame indexed 0..n
    reads back as it was).

    Each task writes its file under a temporary name that does not match
    ``*.h5`` (``.part-00000.h5.tmp-<uuid>``) and renames it when it is
    complete, so a task that fails, is killed or is retried never leaves a
    part a reader takes. Every part has the schema taken from ``ddf._meta``
    (also a partition of no rows): columns that `read_vector` made keep their
    stored layout, other columns the layout `save_vector` gives their dtype
    (a categorical of known text categories: an enum of them, category `i`
    stored as `i`, under a MASK for missing values, which reads back as the
    same categorical dtype; its `ordered` flag is not stored). An object
    column (lists, bytes, ...) takes the type Arrow infers from the first
    partition that has rows, nullable, as ``to_parquet(schema="infer")``
    does (that partition is computed once more for it); ``schema=`` sets
    it instead.

    String columns are written in the compressed-strings layout (SPEC.md
    section 4.1: the bytes back to back in one ``heap`` dataset and an
    (offset, length) per row), which every h5vec reader (Rust ``String``
    fields too) and plain h5py read; ``vls_strings=False`` writes HDF5
    variable-length strings instead (what HDF5Vectors.jl reads as
    ``String``), for which HDF5 makes one global heap object per row: about
    5x slower to write and 4x larger than the heap layout.

    A non-empty directory is refused unless `overwrite` (then its old
    ``part-*.h5`` files and leftover temporary files are removed first).
    `save_options` are `h5vec.save_vector`'s (``compression=``,
    ``chunk_length=``, ``schema=``, ``statistics=``, ``vls_strings=``, ...)::

        paths = to_h5vec(ddf, "out/", "events", compression="zstd")
    """
    import dask

    import pandas as pd

    check_name(name)
    if not isinstance(getattr(ddf, "_meta", None), pd.DataFrame):
        raise TypeError(f"to_h5vec: a dask DataFrame (ddf.to_frame() for a Series), found {type(ddf).__name__}")
    directory = os.fspath(directory)
    for bad in ("replace",):
        if bad in save_options:
            raise TypeError(f"to_h5vec: {bad}= is not a save option here (each part is a new file)")
    os.makedirs(directory, exist_ok=True)
    present = sorted(os.listdir(directory))
    if present:
        if not overwrite:
            raise FileExistsError(f"to_h5vec: the directory {directory!r} is not empty ({len(present)} entries, "
                                  f"e.g. {present[0]!r}): pass overwrite=True to replace its parts")
        for entry in present:
            if fnmatch.fnmatchcase(entry, PART_PATTERN) or fnmatch.fnmatchcase(entry, ".part-*.h5.tmp-*"):
                os.remove(os.path.join(directory, entry))
    options = dict(save_options)
    options.setdefault("vls_strings", True)
    schema = options.pop("schema", None)
    if schema is None:
        schema = _schema_of(ddf._meta, options, _FirstRows(ddf))
    parts = ddf.to_delayed()
    width = max(5, len(str(len(parts) - 1)))
    tasks = [dask.delayed(_write_part, pure=False)(p, directory, i, width, name, schema, options)
             for i, p in enumerate(parts)]
    return list(dask.compute(*tasks))


__all__ = ["read_vector", "to_h5vec"]
