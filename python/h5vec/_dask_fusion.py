"""`read_vector`'s expression for dask-expr (Dask's DataFrame since 2025):
the `FromMapProjectable` that `dask.dataframe.from_map` builds, which also
tells Dask's optimizer how much of a partition a column projection keeps
(`_fusion_compression_factor`), so that a computation on few columns reads
several partitions in one task (`FusedIO`), as `read_parquet` does.

Imported by `h5vec.dask.read_vector` only; `EXPR` is None when this Dask
has no such internals (or different ones): `read_vector` then calls
`from_map` (no fusion)."""

from __future__ import annotations

import functools

#: The parameters of FromMapProjectable this module was written against.
_PARAMETERS = ["func", "iterables", "columns", "args", "kwargs", "columns_arg_required", "user_meta",
               "enforce_metadata", "user_divisions", "label", "_partitions", "_series"]


def row_bytes(dtypes) -> int:
    """Bytes a row of these dtypes holds: numbers at their width, anything
    held as Python objects (strings, lists, maps, ...) counted as 32."""
    return sum(getattr(dt, "itemsize", 32) if getattr(dt, "kind", "O") in "biufcmM" else 32 for dt in dtypes)


def compression_factor(meta, columns) -> float:
    """The fraction of `meta`'s row bytes that `columns` hold (1 when they
    are all of them; the first column when none, which a partition reads
    for its row count); at least 0.001, as Dask's Parquet reader."""
    names = list(meta.columns)
    cols = [c for c in (columns if columns is not None else names) if c in names]
    if set(cols) >= set(names):
        return 1
    total = row_bytes(meta.dtypes)
    if total <= 0:
        return 1
    part = row_bytes(meta[cols].dtypes) if cols else row_bytes(meta[names[:1]].dtypes)
    return min(1, max(part / total, 0.001))


try:
    from dask.dataframe.dask_expr import new_collection
    from dask.dataframe.dask_expr._expr import Index, determine_column_projection
    from dask.dataframe.dask_expr.io.io import FromMapProjectable, FusedIO

    if list(FromMapProjectable._parameters) != _PARAMETERS or not hasattr(FusedIO, "_fusion_buckets"):
        raise ImportError("dask-expr's FromMapProjectable is not the one this module knows")

    class ReadVector(FromMapProjectable):
        """`from_map`'s expression over `_Part`, whose projections of few
        columns Dask fuses into fewer read tasks."""

        @property
        def _funcname(self):
            # The prefix of the fused tasks' keys (h5vec-read-vector-fused-<token>).
            return self.operand("label") or "h5vec-read-vector"

        @functools.cached_property
        def _fusion_compression_factor(self):
            return compression_factor(self.operand("user_meta"), self.columns_operand)

        def _simplify_up(self, parent, dependents):
            if isinstance(parent, Index):
                # Only the index is needed (``len(ddf)``, ``ddf[ddf.g == "a"].index``): the
                # columns other dependents read, else the narrowest one, as read_parquet
                # projects it. Without this the frame under Index reads every column, unfused,
                # next to the fused projection of the same reads: partitions that no longer
                # line up ("Mismatched divisions").
                columns = determine_column_projection(self, parent, dependents)
                columns = [c for c in self.columns if c in columns]
                if not columns and self.columns:
                    meta = self.operand("user_meta")
                    columns = [min(self.columns, key=lambda c: row_bytes([meta[c].dtype]))]
                if not columns or set(columns) == set(self.columns):
                    return None
                return Index(self.substitute_parameters({"columns": columns, "_series": False}))
            return super()._simplify_up(parent, dependents)

    EXPR = ReadVector
except (ImportError, AttributeError, TypeError):  # no dask-expr, or another one
    EXPR = None
    new_collection = None


def from_parts(func, parts, meta, divisions, label):
    """`dd.from_map(func, parts, meta=, divisions=, label=)` as a `ReadVector`
    expression; None when this Dask has no such internals."""
    if EXPR is None:
        return None
    return new_collection(EXPR(func, [list(parts)], None, [], {}, False, meta, False, divisions, label))
