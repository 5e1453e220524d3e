"""Many files as one vector: `open_dataset` and `Dataset`, the vectors of one
name in several files (a glob pattern in sorted path order, or a list of
paths in its order) read as their concatenation, with `Vector`'s read API.

Files are opened only while they are read: opening the dataset opens each
file once to check its schema against the first file's and to record its
rows, then closes it (a file this process has counted before, unchanged
since, is not opened again: see `_SEEN`); a read opens the files its rows
lie in, one at a time, and checks them. A dataset of 10,000 files holds at
most one file open."""

from __future__ import annotations

import collections
import contextlib
import glob as _glob
import os
import threading
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _filters
from . import _schema as S
from ._errors import FormatError
from ._readable import BATCH_ROWS, Columns, Filters, Readable, Rows, _rows
from ._vector import Vector, check_name, open_vector, serialized_schema

Paths = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]
"""A glob pattern (``"logs/*.h5"``, files in sorted path order) or a sequence of paths (in that order)."""

_GLOB_CHARS = set("*?[")


class DatasetFile(NamedTuple):
    """One file of a dataset: its path and its rows ``start..stop`` in the
    dataset's row numbers (``stop - start`` rows, as counted when the dataset
    was opened)."""

    path: str
    start: int
    stop: int

    @property
    def rows(self) -> int:
        return self.stop - self.start


def expand_paths(paths: Paths) -> List[str]:
    """The files of `paths`: a glob pattern's matches in sorted order (none is a
    FileNotFoundError naming the pattern; a path without glob characters is
    that one file), or a sequence's paths in its order (an empty one is a
    ValueError)."""
    if isinstance(paths, (str, os.PathLike)):
        pattern = os.fspath(paths)
        if not _GLOB_CHARS & set(pattern):
            return [pattern]
        found = sorted(p for p in _glob.glob(pattern) if os.path.isfile(p))
        if not found:
            raise FileNotFoundError(f"no file matches the pattern {pattern!r}")
        return found
    if isinstance(paths, bytes):
        raise TypeError("paths: a str glob pattern, a path, or a sequence of paths")
    out = [os.fspath(p) for p in paths]
    if not out:
        raise ValueError("paths: an empty list of files")
    return out


def _attrs(n: S.Node) -> Dict[str, Any]:
    """What a node says about the layout (logical types are descriptive and left out)."""
    codec = n.codec if n.codec not in (S.IDENTITY, S.CONSTANT_CODEC) else S.IDENTITY
    return {"kind": n.kind, "schema": n.schema, "codec": codec, "encoded_type": n.encoded_type,
            "dimensions": n.dimensions, "field_names": n.field_names,
            "variants": None if n.labels is None else list(n.labels.items()),
            "time_unit": n.time_unit, "time_zone": n.time_zone, "children": len(n.children),
            "unknown": n.unknown}


def schema_difference(want: S.Node, got: S.Node, path: str = "$"):
    """None when the two schema trees have the same layout (SPEC section 2:
    kinds, codecs, encoded types, dimensions, field and variant names and
    values, time units and zones; nodes this version does not know by
    their strings; not the logical type names), else
    (field path, what `want` says, what `got` says) at the first difference."""
    a, b = _attrs(want), _attrs(got)
    for key in a:
        if key == "children":
            continue
        if a[key] != b[key]:
            return path, f"{key} {a[key]!r}", f"{key} {b[key]!r}"
    if a["children"] != b["children"]:
        return path, f"{a['children']} children", f"{b['children']} children"
    for i, (x, y) in enumerate(zip(want.children, got.children)):
        if want.field_names is not None and i < len(want.field_names):
            sub = f"{path}.{want.field_names[i]}"
        elif want.labels is not None and i < len(want.labels):
            sub = f"{path}.{list(want.labels)[i]}"
        elif want.kind == "list":
            sub = f"{path}[]"
        else:
            sub = path
        d = schema_difference(x, y, sub)
        if d is not None:
            return d
    return None


def file_identity(path: str):
    """(device, inode, size, modification and change times in ns) of `path`,
    or None: a file with the same identity has not been written since."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def open_known(path: str, name: str, identity=None, known=None, columns=None) -> Vector:
    """Vector `name` of `path`. `known` = (node, serialized schema bytes) the
    file gave when it had `identity`: when it still has that identity and
    those bytes, its schema tree is not read again (the rest of the metadata
    and the datasets are checked as always). `columns`: opened for a read of
    these columns alone (see `open_vector`)."""
    if identity is not None and known is not None and file_identity(path) == identity:
        return open_vector(path, name, _known=known, _columns=columns)
    return open_vector(path, name, _columns=columns)


# What this process read of the files it opened as datasets, by (path, vector,
# identity): ((node, serialized schema bytes), rows per chunk, rows, columns).
# A file whose identity is still the one it had when this process opened and
# checked it is not opened again to be counted (`Dataset`), and a file opened
# again to be read with the same identity and serialized schema bytes is not
# read again for its schema tree (open_known); the rest of a read is checked
# as always.
_SEEN: "collections.OrderedDict[Any, Any]" = collections.OrderedDict()
_SEEN_MAX = 4096
_SEEN_LOCK = threading.Lock()


def _remembered(path: str, name: str, identity):
    if identity is None:
        return None
    key = (os.path.abspath(path), name, identity)
    with _SEEN_LOCK:
        got = _SEEN.get(key)
        if got is not None:
            _SEEN.move_to_end(key)
        return got


def _remember(path: str, name: str, identity, known, chunk_rows: int, rows: int, columns: List[str]) -> None:
    # Only what was read while the file kept one identity (it is taken again after).
    if identity is None or known[1] is None or file_identity(path) != identity:
        return
    with _SEEN_LOCK:
        _SEEN[(os.path.abspath(path), name, identity)] = (known, chunk_rows, rows, tuple(columns))
        while len(_SEEN) > _SEEN_MAX:
            _SEEN.popitem(last=False)


def _named(path: str, name: str, e: Exception) -> Exception:
    """`e` (raised opening vector `name` of file `path`) saying the file's path."""
    if isinstance(e, FormatError):
        return FormatError(e.path, e.location, f"{path}: {e.message}")
    if isinstance(e, KeyError):
        return KeyError(f"{path}: no vector {name!r}")
    return e


class Dataset(Readable[Dict[str, np.ndarray], "pyarrow.Table", "pandas.DataFrame", "polars.DataFrame"]):
    """The vectors `name` of several files read as one (see `open_dataset`):
    `len`, `files`, `columns`, `schema`, and `Vector`'s `read`, `to_arrow`,
    `to_pandas`, `to_polars`, `iter_batches` and slicing, with row numbers
    running on from one file to the next. Each result equals the
    concatenation of the files' `Vector` results (pandas: with the dataset's
    row numbers as the index); `filters=` applies in each file (its
    statistics and indexes) and the matches are concatenated."""

    def __init__(self, paths: Paths, name: str) -> None:
        check_name(name)
        self.name = name
        files: List[DatasetFile] = []
        first: Optional[S.Node] = None
        columns: List[str] = []
        chunks: List[int] = []
        known = []  # (identity, (node, serialized schema bytes)) of each file as opened here
        start = 0
        for path in expand_paths(paths):
            identity = file_identity(path)
            seen = _remembered(path, name, identity)
            if seen is not None:
                # Unchanged since this process opened and checked it: its rows and
                # schema as they were (a read opens it and checks it again).
                mine, chunk, n, cols = seen
                self._check_same(first, mine[0], path, files)
                if first is None:
                    first, columns = mine[0], list(cols)
            else:
                with self._opened(path, known=(identity, None)) as v:
                    self._check_same(first, v.node, path, files)
                    if first is None:
                        first, columns = v.node, v.columns
                    n = len(v)
                    mine, chunk = (v.node, serialized_schema(v.group["metadata"])), int(v.chunk_rows())
                    _remember(path, name, identity, mine, chunk, n, v.columns)
            chunks.append(chunk)
            known.append((identity, mine))
            files.append(DatasetFile(path, start, start + n))
            start += n
        assert first is not None
        self.node: S.Node = first
        self._files = files
        self._columns = columns
        self._chunk_rows = chunks  # each file's rows per chunk (Vector.chunk_rows)
        self._known = known
        self._count = start

    def _check_same(self, first: Optional[S.Node], node: S.Node, path: str, files: List[DatasetFile]) -> None:
        """`node` (of file `path`) has the layout of the first file's `first`."""
        if first is None:
            return
        diff = schema_difference(first, node)
        if diff is not None:
            where, want, got = diff
            raise FormatError(where, None, f"{path}: the schema of vector {self.name!r} differs from "
                                           f"{files[0].path}'s at {where}: expected {want}, found {got}")

    # -- metadata ---------------------------------------------------------

    @property
    def files(self) -> List[DatasetFile]:
        """The files in order, each with its path and its rows ``start..stop``."""
        return list(self._files)

    @property
    def schema(self) -> Dict[str, Any]:
        """The first file's schema tree as plain dicts (as `Vector.schema`)."""
        return self.node.to_dict()

    @property
    def columns(self) -> List[str]:
        """Dotted leaf paths (as `Vector.columns`)."""
        return list(self._columns)

    def __repr__(self) -> str:
        return (f"<h5vec.Dataset {self.name!r}: {len(self._files)} files, {self._count} rows, "
                f"columns {self._columns}>")

    def close(self) -> None:
        """Nothing to close: files are open only while they are read."""

    # -- files -------------------------------------------------------------

    @contextlib.contextmanager
    def _opened(self, path: str, rows: Optional[int] = None, known=(None, None)) -> Iterator[Vector]:
        """Vector `name` of `path`, closed on leaving; with `rows` (the rows
        counted at open) it has that many rows, and its layout is checked again
        (`known`: the file's identity and node at open, see `open_known`)."""
        try:
            v = open_known(path, self.name, *known)
        except (FormatError, KeyError) as e:
            raise _named(path, self.name, e) from e
        try:
            if rows is not None:
                diff = schema_difference(self.node, v.node)
                if diff is not None:
                    raise FormatError(diff[0], None, f"{path}: the schema of vector {self.name!r} changed since "
                                                     f"the dataset was opened: expected {diff[1]}, found {diff[2]}")
                if len(v) < rows:
                    raise FormatError("$", None, f"{path}: vector {self.name!r} has {len(v)} rows, fewer than the "
                                                 f"{rows} it had when the dataset was opened")
                v._count = rows  # rows appended since are not the dataset's
            yield v
        finally:
            v.close()

    def _open_file(self, i: int):
        """File `i` opened (see `_opened`)."""
        f = self._files[i]
        return self._opened(f.path, f.rows, self._known[i])

    def _spans(self, a: int, b: int):
        """(file index, file, local start, local stop) of the files holding rows a..b
        (files of no rows left out)."""
        for i, f in enumerate(self._files):
            lo, hi = max(a, f.start), min(b, f.stop)
            if lo < hi:
                yield i, f, lo - f.start, hi - f.start

    # -- reading -----------------------------------------------------------

    def _read_col(self, columns, rows, filters=None):
        a, b = _rows(rows, len(self))
        cols, nums = [], []
        for i, f, la, lb in self._spans(a, b):
            with self._open_file(i) as v:
                sel = v._selection(columns)
                if filters is None:
                    cols.append(v._read_rows(sel, la, lb))
                else:
                    n, col = _filters.select(v, sel, filters, la, lb, v._filter_batch_rows())
                    if len(n):
                        cols.append(col)
                        nums.append(n + f.start)
        if not cols:
            # No rows: the first file's empty result (checks the columns and filters too).
            with self._open_file(0) as v:
                sel = v._selection(columns)
                if filters is None:
                    cols.append(v._read_rows(sel, 0, 0))
                else:
                    n, col = _filters.select(v, sel, filters, 0, 0, v._filter_batch_rows())
                    cols.append(col)
                    nums.append(n)
        col = _filters.concat(cols)
        if filters is None:
            return col, None, a, b
        return col, np.concatenate(nums).astype(np.int64), a, b

    # A dataset's columns are a vector's: the same conversions.
    _numpy = Vector._numpy
    _arrow = Vector._arrow
    _pandas = Vector._pandas
    _polars = Vector._polars

    def iter_batches(self, batch_rows: Optional[int] = None, columns: Columns = None, format: str = "numpy",
                     parse_json: bool = False, filters: Filters = None) -> Iterator[Any]:
        """As `Vector.iter_batches`, file after file (a batch never holds rows
        of two files; files of no rows yield nothing; pandas batches are
        indexed by the dataset's row numbers). One file is open at a time."""
        batch_rows = int(batch_rows or BATCH_ROWS)
        if batch_rows <= 0:
            raise ValueError("batch_rows must be positive")
        if format not in ("numpy", "arrow", "pandas", "polars"):
            raise ValueError(f"unknown format {format!r}")
        with self._open_file(0) as v:
            v._selection(columns)  # an unknown column is an error before the first batch
            if filters is not None:
                _filters.Plan(v, filters)
        for i, f in enumerate(self._files):
            if not f.rows:
                continue
            with self._open_file(i) as v:
                for item in v.iter_batches(batch_rows, columns, format, parse_json, filters):
                    if format == "pandas":
                        item.index = item.index + f.start
                    yield item


def open_dataset(paths_or_glob: Paths, name: str) -> Dataset:
    """Vector `name` of several files as one `Dataset`: a glob pattern
    (``"logs/*.h5"``: the matching files in sorted path order; no match is a
    FileNotFoundError naming the pattern) or a list of paths (in its order).
    Every file's schema must have the first file's layout (a FormatError
    names the file, the field path and what differs); logical type names
    may differ. Rows are counted now: rows appended later are not read::

        ds = h5vec.open_dataset("logs/*.h5", "telemetry")
        df = ds.to_pandas(columns=["ts", "temperature"], rows=slice(1_000, 2_000))
    """
    return Dataset(paths_or_glob, name)
