"""Opening vectors: `open_vector`, `Vector`, `list_vectors`."""

from __future__ import annotations

import errno
import os
import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import h5py
import numpy as np

from . import _columns as C
from . import _h5
from . import _read
from . import _schema as S
from . import _stats
from ._errors import FileError, FormatError, mismatch
from ._readable import BATCH_ROWS, Readable, Where

if TYPE_CHECKING:
    import pandas
    import polars
    import pyarrow

FORMAT_NAME = "HDF5Vectors"
ROOT = "value"  # column name of a vector whose elements are not records


def _open_where(where, mode="r"):
    """(group, file to close or None)."""
    if isinstance(where, (h5py.Group, h5py.File)):
        return where, None
    if isinstance(where, (str, os.PathLike)):
        f = open_file(where, mode)
        return f, f
    raise TypeError(f"expected an h5py.File, h5py.Group or a path, found {type(where).__name__}")


def open_file(path: "str | os.PathLike[str]", mode: str = "r") -> h5py.File:
    """h5py.File(path, mode), as the Rust library opens files: a file whose
    live (SWMR) writer has it open, or was killed and left it marked open
    for writing, is opened read-only as a live reader (``swmr=True``; loads
    then read the writer's last commit); errors about the file itself are
    a `FileError` in the Rust library's words."""
    try:
        return h5py.File(path, mode)
    except OSError as e:
        if mode == "r" and _left_open_for_writing(path):
            try:
                return h5py.File(path, "r", swmr=True)
            except OSError as e2:
                e = e2
        err = _file_error(path, e, mode)
        if err is e:
            raise e
        raise err from e


def _left_open_for_writing(path):
    """Whether the superblock (version 3, at offset 0) of the file at `path`
    says a writer has it open, or had it when it was killed."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return False
    return (len(head) == 12 and head[:8] == b"\x89HDF\r\n\x1a\n" and head[8] >= 3
            and head[11] & 0x05 != 0)


def _thousands(n):
    return f"{n:,}"


def _file_error(path, e, mode):
    """h5py's OSError for opening `path`, as the Rust library says it (or
    `e` itself when HDF5's words are all there is)."""
    shown = os.fspath(path)
    text = str(e)
    if "file signature not found" in text:
        return FileError(shown, f"not an HDF5 file: {shown}")
    m = re.search(r"truncated file: eof = (\d+), sblock->base_addr = (\d+), stored_eof = (\d+)", text)
    if m:
        eof, base, stored = (int(x) for x in m.groups())
        return FileError(shown, f"file truncated: {_thousands(eof + base)} of {_thousands(stored + base)} "
                                f"bytes present: {shown}")
    m = re.search(r"unable to lock file, errno = (\d+)", text)
    if m and int(m.group(1)) in (errno.EAGAIN, errno.EWOULDBLOCK):
        if mode == "r":
            return FileError(shown, "the file is open for writing by another process (HDF5 locks a file while "
                                    f"a writer has it open): {shown}; a writer that other processes may read "
                                    "while it writes creates the file with h5vec::create_file_live and writes "
                                    "with VectorWriter::create_live (readers: h5vec::open_file_live)")
        return FileError(shown, "the file is open in another process (HDF5 locks a file while a writer, or a "
                                f"reader of a file not made for live reading, has it open): {shown}")
    return e


def check_name(name):
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"invalid vector name {name!r}: non-empty, not . or .., without / or NUL")


def read_count(meta, path="$"):
    ds = _h5.open_dataset(meta, "count", path)
    info = _h5.type_info(ds)
    if ds.shape != () or not (info.cls == h5py.h5t.INTEGER and info.size == 8 and info.signed):
        raise mismatch(path, ds.name, "a scalar Int64 count", f"{info.describe()} of shape {ds.shape}")
    count = int(ds[()])
    if count < 0:
        raise FormatError(path, ds.name, f"count must be >= 0, found {count}")
    return count


def serialized_schema(meta) -> Optional[bytes]:
    """The bytes of `meta`'s `serialized_schema` dataset, or None (absent or unreadable)."""
    try:
        if _h5._link_kind(meta, "serialized_schema") != "HardLink":
            return None
        ds = meta["serialized_schema"]
        if not isinstance(ds, h5py.Dataset) or ds.ndim != 1 or ds.dtype != np.uint8 or ds.shape[0] > 1 << 24:
            return None
        return np.asarray(ds[()], dtype=np.uint8).tobytes()
    except (KeyError, OSError, RuntimeError, ValueError, TypeError):
        return None


def open_metadata(group, path="$", known=None):
    """Checks the vector group and its metadata; returns (count, schema node).
    `known`: (node, serialized) that this very file gave before (a `Dataset`
    checks that it is unchanged on disk): while `metadata/serialized_schema`
    still holds the bytes `serialized`, the tree is not read again."""
    _h5.expect_members(group, ["data", "metadata"], path)
    meta = _h5.open_group(group, "metadata", path)
    names = _h5.members(meta, path)
    for need in ("format_name", "format_version", "schema", "count"):
        if need not in names:
            raise mismatch(path, _h5.member_path(meta, need), f"metadata `{need}`", "nothing")
    fname = _h5.read_scalar_string(_h5.open_dataset(meta, "format_name", path), path)
    if fname != FORMAT_NAME:
        raise mismatch(path, meta.name + "/format_name", f'"{FORMAT_NAME}"', repr(fname))
    vds = _h5.open_dataset(meta, "format_version", path)
    vinfo = _h5.type_info(vds)
    if vds.shape != () or vinfo.cls != h5py.h5t.INTEGER:
        raise mismatch(path, vds.name, "a scalar integer format_version", vinfo.describe())
    if int(vds[()]) != 1:
        raise mismatch(path, vds.name, "format_version 1", int(vds[()]))
    count = read_count(meta, path)
    if known is not None and known[1] is not None and serialized_schema(meta) == known[1]:
        node = known[0]
    else:
        node = S.read_node(_h5.open_group(meta, "schema", path), path)
        # With a checksum (SPEC 6.4): the tree as the checksummed JSON says.
        S.check_tree(meta, node, path)
    _check_root_rows(_h5.open_group(group, "data", path), node, count, path)
    return count, node


_ROW_DATASET = {"scalar": "values", "dense": "values", "fill_nullable": "values", "vls_string": "pointers",
                "blob": "stops", "list": "OFFSETS", "string_values": "OFFSETS", "nullable": "MASK", "union": "TAG"}


def _check_root_rows(data, node, count, path):
    try:
        _check_root_rows_in(data, node, count, path)
    except (KeyError, OSError, RuntimeError, ValueError) as e:
        if isinstance(e, FormatError):
            raise
        # A group or link HDF5 cannot read: the column readers that open it
        # next say what is wrong, as they always did.
        return


def _check_root_rows_in(data, node, count, path):
    """A count larger than the rows the root's row dataset holds is an error
    where the count is read (`len`), not only when values are (as Rust's
    `vector::check_root_rows`): a record's first field with data decides;
    constants and unknown kinds pass. Each column's reader checks all its
    datasets again."""
    while node.kind == "record":
        for name, child in zip(node.field_names or [], node.children or []):
            if child.kind != "constant" and isinstance(data.get(name, getlink=True), h5py.HardLink) \
                    and isinstance(data.get(name), h5py.Group):
                data, node, path = data[name], child, f"{path}.{name}"
                break
        else:
            return
    member = _ROW_DATASET.get(node.kind)
    if member is None or not isinstance(data.get(member), h5py.Dataset):
        return
    # Through open_dataset: a live reader's dataset is refreshed first (its
    # cached extent may predate the commit `count` is from).
    ds = _h5.open_dataset(data, member, path)
    need = count + 1 if member == "OFFSETS" else count
    rows = ds.shape[0] if ds.shape else 0
    if rows < need:
        raise mismatch(path, ds.name, f"at least {need} rows", rows)


class Vector(Readable[Dict[str, np.ndarray], "pyarrow.Table", "pandas.DataFrame", "polars.DataFrame"]):
    """A vector opened for reading (see `open_vector`). `read` gives {column:
    numpy array | numpy.ma.MaskedArray | object array}, `to_arrow` a
    pyarrow.Table, `to_pandas` a pandas.DataFrame, `to_polars` a
    polars.DataFrame; `v[10:20]` is `v.read(rows=slice(10, 20))`."""

    def __init__(self, group: h5py.Group, name: str, file: Optional[h5py.File] = None,
                 _known: Optional[Tuple[S.Node, Optional[bytes]]] = None, _columns=None) -> None:
        self._file = file
        check_name(name)
        if name not in group:
            raise KeyError(f"no vector {name!r} in {group.name}")
        kind = type(group.get(name, getlink=True)).__name__
        if kind == "ExternalLink":
            raise FormatError("$", _h5.member_path(group, name), "an external link: h5vec reads only "
                                                                "vectors inside the file")
        g = group[name]
        if not isinstance(g, h5py.Group):
            raise mismatch("$", _h5.member_path(group, name), "a vector group", "a dataset")
        self.group = g
        self.name = name
        self._count, self.node = open_metadata(g, known=_known)
        data = _h5.open_group(g, "data", "$")
        only = None
        if _columns is not None and _is_record(self.node):
            # Only the fields these columns are in (a read of other columns would
            # find them not opened): for one read of them, made at once.
            only = set(self._selection(_columns) or self.node.field_names)
        self._reader = _read.open_field(data, self.node, "$", self._count, only=only)

    # -- metadata ---------------------------------------------------------

    @property
    def schema(self) -> Dict[str, Any]:
        """The schema tree as plain dicts (kind, schema, codec, logical_type, ...)."""
        return self.node.to_dict()

    @property
    def columns(self) -> List[str]:
        """Dotted leaf paths (records are flattened; lists are leaves)."""
        root = self.node.children[0] if self.node.kind == "nullable" else self.node
        if not _is_record(root):
            return [ROOT]
        out = []

        def walk(node, prefix):
            n = node.children[0] if node.kind == "nullable" and _is_record(node.children[0]) else node
            if _is_record(n):
                for f, c in zip(n.field_names, n.children):
                    walk(c, f"{prefix}.{f}" if prefix else f)
            else:
                out.append(prefix)
        walk(self.node, "")
        return out

    def __repr__(self) -> str:
        return f"<h5vec.Vector {self.group.name!r}: {self._count} rows, columns {self.columns}>"

    # -- reading -----------------------------------------------------------

    def _selection(self, columns):
        if columns is None:
            return None
        if isinstance(columns, str):
            columns = [columns]
        root = self.node.children[0] if self.node.kind == "nullable" else self.node
        if not _is_record(root):
            for c in columns:
                if c != ROOT:
                    raise KeyError(f"no column {c!r}; columns: {self.columns}")
            return None
        sel = {}
        for c in columns:
            parts = c.split(".")
            node = self.node
            cur = sel
            # Field names may contain dots: match the longest field name first.
            i = 0
            while i < len(parts):
                n = node.children[0] if node.kind == "nullable" else node
                if not _is_record(n):
                    raise KeyError(f"no column {c!r}; columns: {self.columns}")
                for j in range(len(parts), i, -1):
                    name = ".".join(parts[i:j])
                    if name in n.field_names:
                        break
                else:
                    raise KeyError(f"no column {c!r}; columns: {self.columns}")
                child = n.children[n.field_names.index(name)]
                if j == len(parts):
                    cur[name] = None
                else:
                    if cur.get(name, {}) is None:
                        break
                    cur = cur.setdefault(name, {})
                node = child
                i = j
        return sel

    def _read_rows(self, sel, a, b):
        return self._reader.read(a, b, sel)

    def _numpy(self, col, parse_json):
        return _as_numpy(col, parse_json)

    def _arrow(self, col, pa):
        return _as_arrow(col, pa)

    def _pandas(self, col, pd, a, b, parse_json):
        return _as_pandas(col, pd, a, b, parse_json)

    def _polars(self, col, pl, pa, **kw):
        return pl.from_arrow(_as_arrow(col, pa, _polars_target(pl)), **kw)

    def _chunk_stats(self, column):
        # Per opened vector: its rows (count) are fixed, and rows below it never change.
        cache = self.__dict__.setdefault("_stats_cache", {})
        if column not in cache:
            cache[column] = self._find_stats(column)
        return cache[column]

    def _column_indexes(self, column):
        from . import _indexes
        return _indexes.vector_indexes(self, column)

    def _find_stats(self, column):
        sel = self._selection([column])
        path = []
        while isinstance(sel, dict) and len(sel) == 1:
            (name, sel), = sel.items()
            path.append(name)
        if sel is not None:
            return None
        if tuple(path) not in {p for p, _ in _stats.readable_leaves(self.node)}:
            return None
        return _stats.find(self.group, _stats.source_of(path), self._count)

    def chunk_rows(self) -> int:
        """The rows per chunk of the vector's first chunked dataset (the natural batch size)."""
        found: List[int] = []

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.chunks and not found and name.endswith("values"):
                found.append(obj.chunks[0])
        self.group["data"].visititems(visit)
        return found[0] if found else BATCH_ROWS

    def validate(self, batch_rows: Optional[int] = None) -> int:
        """Reads every row, making every check of SPEC section 7; raises FormatError
        on the first problem, returns the number of rows otherwise."""
        n = self._count
        batch_rows = int(batch_rows or BATCH_ROWS)
        for a in range(0, n, batch_rows):
            self._reader.read(a, min(n, a + batch_rows))
        if n == 0:
            self._reader.read(0, 0)
        return n


def _as_numpy(col, parse_json):
    if isinstance(col, C.Rec) and col.node.kind in ("record", "nullable") and _is_root_record(col):
        return {name: C.to_numpy(c, v, parse_json) for name, c, v in C.flatten(col, "")}
    return {ROOT: C.to_numpy(col, None, parse_json)}


def _is_root_record(col):
    return isinstance(col, C.Rec)


def _is_record(node):
    """A record whose fields are columns (not an unknown node of kind record)."""
    return node.kind == "record" and node.unknown is None


def _polars_target(pl):
    """Arrow for polars: enums with data in the flat form (polars has no
    unions), UUIDs as their 16 bytes, f16 as Float32 where polars has no Float16."""
    return C.Target(flat=True, half=hasattr(pl, "Float16"), uuid_ext=False)


def _as_arrow(col, pa, target=C.ARROW):
    if isinstance(col, C.Rec) and col.valid is None:
        arrays = [C.to_arrow(c, pa, target, f"$.{name}") for name, c in zip(col.names, col.children)]
        fields = [pa.field(name, arr.type, nullable=c.valid is not None or isinstance(c, C.Const),
                           metadata=C.field_metadata(c.node, target))
                  for name, c, arr in zip(col.names, col.children, arrays)]
        schema = pa.schema(fields, metadata={b"h5vec.root": col.node.kind.encode()})
        if not arrays:
            return pa.table({}, schema=schema)
        return pa.Table.from_arrays(arrays, schema=schema)
    arr = C.to_arrow(col, pa, target)
    f = pa.field(ROOT, arr.type, nullable=col.valid is not None or isinstance(col, C.Const),
                 metadata=C.field_metadata(col.node, target))
    return pa.Table.from_arrays([arr], schema=pa.schema([f], metadata={b"h5vec.root": b"value"}))


def _as_pandas(col, pd, a, b, parse_json):
    index = pd.RangeIndex(a, b)
    if isinstance(col, C.Rec):
        leaves = C.flatten(col, "")
    else:
        leaves = [(ROOT, col, None)]
    series = [C.to_pandas_series(c, v, name, index, parse_json) for name, c, v in leaves]
    if not series:
        df = pd.DataFrame(index=index)
    else:
        df = pd.concat(series, axis=1) if len(series) > 1 else series[0].to_frame()
    # Each column's schema node, so that save_vector(df) writes the same layout.
    df.attrs["h5vec.columns"] = {name: _leaf_node(c, v).to_dict() for name, c, v in leaves}
    return df


def _leaf_node(col, inherited):
    node = col.node
    if inherited is not None and node.kind != "nullable":
        # A field of a nullable record: nullable on its own in a DataFrame.
        return S.Node("nullable", children=[node])
    return node


def open_vector(where: Where, name: str, _known: Optional[Tuple[S.Node, Optional[bytes]]] = None,
                _columns=None) -> Vector:
    """Opens vector `name` in `where` (an h5py.File or h5py.Group, or a path,
    opened read-only and closed by `Vector.close()`), checking its layout
    (`_columns`: only of the fields holding these columns, for a read of them
    alone)."""
    group, owned = _open_where(where)
    try:
        return Vector(group, name, owned, _known, _columns)
    except BaseException:
        if owned is not None:
            _h5.close_file(owned)
        raise


def _is_vector(g):
    try:
        if set(g.keys()) != {"data", "metadata"}:
            return False
        meta = g["metadata"]
        if not isinstance(meta, h5py.Group) or "format_name" not in meta:
            return False
        return _h5.read_scalar_string(meta["format_name"], "$") == FORMAT_NAME
    except (FormatError, OSError, KeyError, TypeError, ValueError):
        return False


def list_vectors(where: Where) -> List[str]:
    """Paths (relative to `where`) of every vector below it, sorted; vectors
    are not searched for nested ones, and only hard links are followed."""
    group, owned = _open_where(where)
    try:
        out = []
        seen = set()

        def walk(g, prefix):
            for name in sorted(g.keys()):
                link = g.get(name, getlink=True)
                if not isinstance(link, h5py.HardLink):
                    continue
                if name.startswith(".") and ".h5vec-partial" in name:
                    continue
                obj = g[name]
                if not isinstance(obj, h5py.Group):
                    continue
                addr = hash(obj.id)  # h5py hashes objects by file and address
                if addr in seen:
                    continue
                seen.add(addr)
                path = f"{prefix}{name}"
                if _is_vector(obj):
                    out.append(path)
                else:
                    walk(obj, path + "/")
        walk(group, "")
        return out
    finally:
        if owned is not None:
            _h5.close_file(owned)
