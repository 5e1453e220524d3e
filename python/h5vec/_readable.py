"""The one read style every opened container shares (`Vector`, `Table`,
`StringArray`): `len`, `read`, `to_arrow`, `to_pandas`, `to_polars`,
`iter_batches`, slicing (`c[10:20]`, `c[i]`), `close` and the context
manager. A container says how it selects columns, reads rows `a..b` and
turns what it read into numpy, Arrow, pandas and polars; the rest is here."""

from __future__ import annotations

import operator
import os
from typing import Any, Generic, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

import h5py

from . import _h5

Where = Union[str, "os.PathLike[str]", h5py.Group]
"""A file path (opened read-only, closed by `close()`) or an open h5py.File / h5py.Group."""
Columns = Union[str, Sequence[str], None]
"""One column name, a sequence of them, or None for every column."""
Rows = Union[slice, range, Tuple[int, int], None]
"""A contiguous row range: a slice or range with step 1, a (start, stop) tuple, or None for all."""

Filters = Optional[Sequence[Any]]
"""pyarrow's DNF filters: [(column, op, value), ...] (AND) or [[...], [...]] (OR of ANDs)."""

BATCH_ROWS = 1 << 16

N = TypeVar("N")  # what `read` gives
A = TypeVar("A")  # what `to_arrow` gives
P = TypeVar("P")  # what `to_pandas` gives
L = TypeVar("L")  # what `to_polars` gives
R = TypeVar("R", bound="Readable")


def _reindexed(df, pd, nums):
    """`df` (or a Series) with the row numbers `nums` as its index."""
    df.index = pd.Index(nums, dtype="int64")
    return df


def _rows(rows, n):
    if rows is None:
        return 0, n
    if isinstance(rows, (slice, range)):
        start, stop, step = (rows.start, rows.stop, rows.step)
        if step not in (None, 1):
            raise ValueError("rows: only contiguous ranges (step 1) are supported")
        start, stop, _ = slice(start, stop).indices(n)
        return start, max(start, stop)
    if isinstance(rows, tuple) and len(rows) == 2:
        return _rows(slice(*rows), n)
    raise TypeError("rows: a slice, a range or a (start, stop) tuple")


class Readable(Generic[N, A, P, L]):
    """The read API of an opened container. Subclasses set `_count` and
    `_file` and define `columns`, `_selection(columns)`, `_read_rows(sel, a, b)`
    and the conversions `_numpy`, `_arrow`, `_pandas`, `_polars`."""

    _count = 0
    _file: Optional[h5py.File] = None

    def __len__(self) -> int:
        return self._count

    @property
    def columns(self) -> List[str]:
        raise NotImplementedError

    def close(self) -> None:
        """Closes the file if the container opened it (`where` was a path)."""
        if self._file is not None:
            _h5.close_file(self._file)
            self._file = None

    def __enter__(self: R) -> R:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getitem__(self, key: Union[slice, int]) -> N:
        """`c[a:b]` is `c.read(rows=slice(a, b))` (bounds as Python's, negative
        ones from the end; a step other than 1 is a ValueError); `c[i]` is
        `c.read(rows=range(i, i + 1))`, one row in `read`'s form (negative `i`
        from the end, IndexError outside the rows)."""
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise ValueError(f"slicing: only step 1 is supported, found step {key.step!r}")
            return self.read(rows=key)
        if isinstance(key, bool) or not hasattr(key, "__index__"):
            raise TypeError(f"rows are selected with an int or a slice, found {type(key).__name__} "
                            "(columns: read(columns=...))")
        i = operator.index(key)
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"row {i} is outside the {n} rows")
        return self.read(rows=range(j, j + 1))

    def __iter__(self):
        # Not row by row (each row a read): slicing and `len` would make it so otherwise.
        raise TypeError(f"{type(self).__name__} is not iterated row by row: use iter_batches() or read()")

    def _read_col(self, columns, rows, filters=None):
        """(columns, row numbers or None, a, b): rows a..b, or with `filters`
        only the matching ones (their row numbers)."""
        a, b = _rows(rows, len(self))
        sel = self._selection(columns)
        if filters is None:
            return self._read_rows(sel, a, b), None, a, b
        from . import _filters
        nums, col = _filters.select(self, sel, filters, a, b, self._filter_batch_rows())
        return col, nums, a, b

    def read(self, columns: Columns = None, rows: Rows = None, parse_json: bool = False,
             filters: Filters = None) -> N:
        """The rows asked for as numpy (see the container's class for the form).

        `filters` keeps only the rows that match, in pyarrow's DNF form (as
        ``pyarrow.parquet.read_table(filters=...)``): a list of ``(column, op,
        value)`` tuples is their AND, a list of such lists the OR of those ANDs;
        ops ``=``, ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``;
        columns named as in `columns` (dotted record fields). Values: numbers
        (compared exactly, also int64/uint64 beyond 2**53), bools, str (strings;
        enum labels, ordered by their stored values), datetime / numpy.datetime64 /
        pandas.Timestamp for instants
        and dates (timezone-aware exactly when the column has a time zone),
        timedelta for durations. A null row matches no predicate (``!=`` and
        ``not in`` included); NaN compares false with every value, so it
        matches ``!=`` and ``not in`` only. Rows keep their order; `rows`
        limits the rows searched. Chunks the vector's statistics rule out are
        not read, valid search indexes (`h5vec.build_index`) narrow the rows
        read further, and the other columns are read only where rows match::

            v.read(filters=[("temperature", ">=", 10.0), ("status", "==", "Ok")])
            v.read(columns=["ts"], filters=[[("id", "in", [3, 7])], [("flag", "=", True)]])
        """
        col, _, _, _ = self._read_col(columns, rows, filters)
        return self._numpy(col, parse_json)

    def to_arrow(self, columns: Columns = None, rows: Rows = None, filters: Filters = None) -> A:
        """The rows asked for as pyarrow: records are struct columns, lists large_list,
        strings large_string, maps map, enums with data dense unions (python/README.md).
        `filters`: as `read`, e.g. ``v.to_arrow(filters=[("ts", ">=", t0), ("ts", "<", t1)])``."""
        import pyarrow as pa
        col, _, _, _ = self._read_col(columns, rows, filters)
        return self._arrow(col, pa)

    def to_pandas(self, columns: Columns = None, rows: Rows = None, parse_json: bool = False,
                  filters: Filters = None) -> P:
        """The rows asked for as pandas (dotted record columns); index = the row numbers
        (with `filters`, those of the matching rows, as ``df[mask]`` keeps them).
        `filters`: as `read`, e.g. ``v.to_pandas(filters=[("status", "in", ["Ok", "Warn"])])``."""
        import pandas as pd
        col, nums, a, b = self._read_col(columns, rows, filters)
        if nums is None:
            return self._pandas(col, pd, a, b, parse_json)
        return _reindexed(self._pandas(col, pd, 0, len(nums), parse_json), pd, nums)

    def to_polars(self, columns: Columns = None, rows: Rows = None, filters: Filters = None) -> L:
        """The rows asked for as polars (via Arrow); enums with data in the flat form
        (python/README.md), UUIDs as 16-byte Binary. `filters`: as `read`,
        e.g. ``v.to_polars(filters=[("id", ">", 2**62)])``."""
        import polars as pl
        import pyarrow as pa
        col, _, _, _ = self._read_col(columns, rows, filters)
        return self._polars(col, pl, pa, rechunk=False)

    def iter_batches(self, batch_rows: Optional[int] = None, columns: Columns = None, format: str = "numpy",
                     parse_json: bool = False, filters: Filters = None) -> Iterator[Any]:
        """Yields the rows in batches of `batch_rows` (bounded memory), each as
        `format`: 'numpy' (as `read`), 'arrow' (RecordBatches; a VLS string array's
        batches are arrays), 'pandas' or 'polars'. With `filters` (as `read`) each
        batch holds the matching rows of the next `batch_rows` rows, and spans
        without a match yield nothing::

            for df in v.iter_batches(format="pandas", filters=[("flag", "==", True)]):
                ...
        """
        n = len(self)
        batch_rows = int(batch_rows or BATCH_ROWS)
        if batch_rows <= 0:
            raise ValueError("batch_rows must be positive")
        if format not in ("numpy", "arrow", "pandas", "polars"):
            raise ValueError(f"unknown format {format!r}")
        sel = self._selection(columns)
        if filters is None:
            parts = ((None, a, min(n, a + batch_rows), self._read_rows(sel, a, min(n, a + batch_rows)))
                     for a in range(0, n, batch_rows))
        else:
            from . import _filters
            parts = ((nums, 0, len(nums), col)
                     for nums, col in _filters.batches(self, sel, filters, 0, n, batch_rows))
        for nums, a, b, col in parts:
            if format == "numpy":
                yield self._numpy(col, parse_json)
            elif format == "arrow":
                import pyarrow as pa
                yield from self._arrow_batches(col, pa)
            elif format == "pandas":
                import pandas as pd
                df = self._pandas(col, pd, a, b, parse_json)
                yield df if nums is None else _reindexed(df, pd, nums)
            else:
                import polars as pl
                import pyarrow as pa
                yield self._polars(col, pl, pa)

    def _filter_batch_rows(self) -> int:
        """Rows read at a time while evaluating filters."""
        return BATCH_ROWS

    def _chunk_stats(self, column):
        """Usable CHUNK_MINMAX statistics of leaf `column` (`_stats.Stats`), or None."""
        return None

    def _column_indexes(self, column):
        """The valid SORTED_ROWS / BITMAP / CHUNK_BLOOM indexes of leaf `column`
        (`_indexes.ColumnIndexes`), or None."""
        return None

    # -- what a container defines -----------------------------------------

    def _selection(self, columns):
        raise NotImplementedError

    def _read_rows(self, sel, a, b):
        raise NotImplementedError

    def _numpy(self, col, parse_json):
        raise NotImplementedError

    def _arrow(self, col, pa):
        raise NotImplementedError

    def _arrow_batches(self, col, pa):
        return self._arrow(col, pa).to_batches()

    def _pandas(self, col, pd, a, b, parse_json):
        raise NotImplementedError

    def _polars(self, col, pl, pa, **kw):
        return pl.from_arrow(self._arrow(col, pa), **kw)

