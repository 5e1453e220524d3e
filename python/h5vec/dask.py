"""Dask: a vector as a dask.dataframe.DataFrame whose partitions each open
the file themselves (so they run on any worker that can see the path)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from ._vector import open_vector

if TYPE_CHECKING:
    import dask.dataframe


def _partition(path, name, columns, start, stop, filters=None):
    with open_vector(path, name) as v:
        return v.to_pandas(columns=columns, rows=slice(start, stop), filters=filters)


def read_vector(path: Union[str, "os.PathLike[str]"], name: str, columns: Optional[Sequence[str]] = None,
                partition_rows: Optional[int] = None, filters: Optional[Sequence[Any]] = None
                ) -> "dask.dataframe.DataFrame":
    """A lazy dask DataFrame over vector `name` of the HDF5 file at `path`.

    Partitions hold `partition_rows` rows (default: about 1,048,576), rounded
    to a multiple of the vector's chunk length so that no chunk is read by two
    partitions; the index is the row number, with known divisions. Columns
    have the dtypes of `Vector.to_pandas` (Dask's conversion of object
    columns to strings is off for this frame: it would turn lists, maps and
    UUIDs into their text). A column of a kind or codec this version does
    not know raises `FormatError` here unless `columns` leaves it out.

    `filters` (pyarrow's DNF form, as `Vector.read`) keeps the matching rows:
    partitions whose chunks the vector's statistics rule out are dropped
    here (the divisions stay each kept partition's first row, then the last
    row of the last one: every index value still lies within its partition's
    bounds), and each kept partition filters its rows when computed::

        ddf = read_vector("f.h5", "events", filters=[("ts", ">=", t0), ("ts", "<", t1)])
    """
    import dask
    import dask.dataframe as dd

    with open_vector(path, name) as v:
        n = len(v)
        chunk = max(1, int(v.chunk_rows()))
        meta = v.to_pandas(columns=columns, rows=slice(0, 0))
        may = None
        if filters is not None:
            from ._filters import Plan
            plan = Plan(v, filters)  # checks the filters now, not in a worker
            may = plan.candidate_chunks()
    target = int(partition_rows or (1 << 20))
    step = max(chunk, (target // chunk) * chunk)
    bounds = list(range(0, n, step)) + [n]
    if n == 0:
        bounds = [0, 0]
    parts = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    if may is not None:
        c, flags = may
        kept = [(a, b) for a, b in parts if b > a and flags[a // c:(b - 1) // c + 1].any()]
        # Nothing can match: one partition of no rows keeps the frame well formed.
        parts = kept or [(0, 0)]
    # Divisions: each partition's first row, then the last row of the last one.
    divisions = [a for a, _ in parts] + [max(parts[-1][1] - 1, parts[-1][0])]
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_map(_Part(str(path), name, columns, filters), parts, meta=meta, divisions=divisions)


class _Part:
    """Picklable partition function."""

    def __init__(self, path, name, columns, filters=None):
        self.path, self.name, self.columns, self.filters = path, name, columns, filters

    def __call__(self, bounds):
        start, stop = bounds
        return _partition(self.path, self.name, self.columns, start, stop, self.filters)


__all__ = ["read_vector"]
