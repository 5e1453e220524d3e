"""Writing vectors: input (pyarrow, pandas, polars, numpy) -> columns + schema
tree -> the layout of SPEC.md, in the order of SPEC section 8.

Every input becomes Arrow first (pandas and numpy columns, polars frames), then
columns and schema nodes (`from_arrow`), then datasets (`write_field`). The
nodes are the ones Rust's typed save writes for the matching Rust type (and
its Arrow writer for the same Arrow type, SPEC.md section 11), so that
`h5vec::load_vector::<T>` reads the result.

The steps live in their own modules: `_write_nodes` (schema nodes and hints),
`_write_input` (pandas, polars, dicts, numpy -> Arrow, with `_write_numpy` and
`_write_conform`), `_write_encode` (Arrow -> columns and nodes) and
`_write_datasets` (columns -> datasets); this one holds `save_vector` and
`append_vector` and the metadata they write."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import h5py
import numpy as np

from . import _columns as C
from . import _h5
from . import _read
from . import _schema as S
from . import _stats
from ._errors import FormatError
from ._write_nodes import SCHEMA_KEY, _field_kid, _hint_of, constant_codec, record_node
from ._write_encode import from_arrow
from ._write_input import to_table
from ._write_datasets import Ctx, Options, write_field
from ._readable import Where
from ._vector import FORMAT_NAME, ROOT, _open_where, check_name, open_metadata

Compression = Union[None, bool, int, str, Tuple[str, int]]
"""None, 'deflate' (or 'gzip', 'zlib'), a deflate level, ('deflate', level), 'lzf', or a Blosc
codec 'zstd', 'lz4', 'blosclz', 'lz4hc' (with hdf5plugin), alone or as (name, level)."""


def build(data, schema, opts, root_hint=None):
    """(root Col, root Node, rows). `root_hint`: a root node dict (an append's stored node)."""
    obj, field = to_table(data, schema)
    if field is not None:
        col, node = from_arrow(obj, field, "$", opts, hint=root_hint)
        return col, node, len(obj)
    table = obj.combine_chunks() if any(c.num_chunks > 1 for c in obj.columns) else obj
    md = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if root_hint is None and SCHEMA_KEY in md:
        root_hint = _hint_of(md, "$")
    if md.get("h5vec.root") == "value" and table.num_columns == 1 or \
            (root_hint is not None and root_hint.get("kind") != "record" and table.num_columns == 1
             and table.schema.field(0).name == ROOT):
        col, node = from_arrow(table.column(0), table.schema.field(0), "$", opts, hint=root_hint)
        return col, node, table.num_rows
    names, cols, nodes = [], [], []
    for i, f in enumerate(table.schema):
        if not f.name or f.name in (".", "..") or "/" in f.name or "\0" in f.name:
            raise FormatError(f"$.{f.name}", None, f"invalid field name {f.name!r}")
        c, n = from_arrow(table.column(i), f, f"$.{f.name}", opts, hint=_field_kid(root_hint, f.name))
        names.append(f.name)
        cols.append(c)
        nodes.append(n)
    rows = table.num_rows
    if not names:
        node = S.Node("constant", codec=constant_codec(), logical_type="()")
        return C.Const(rows, node), node, rows
    node = record_node(names, nodes, logical=md.get("h5vec.logical_type", "python.record"))
    if root_hint is not None and root_hint.get("codec") == S.TUPLE:
        node.codec = S.TUPLE
    return C.Rec(rows, names, cols, node), node, rows


# ---------------------------------------------------------------------------
# save / append


def _write_metadata(meta, node, count, checksum=False):
    """`meta`'s members (SPEC section 1). With `checksum`, `serialized_schema`
    is one chunk (its whole length) with HDF5's Fletcher32 filter and nothing
    else: readers verify its bytes and check the schema tree against it
    (SPEC 6.4, "Metadata"; as Rust's `write_metadata`)."""
    _h5.write_fixed_str(meta, "format_name", FORMAT_NAME)
    meta.create_dataset("format_version", data=np.int64(1), dtype="<i8")
    _h5.write_fixed_str(meta, "logical_type", node.logical_type)
    json_bytes = np.frombuffer(node.serialized().encode("utf-8"), np.uint8)
    if checksum:
        meta.create_dataset("serialized_schema", data=json_bytes, chunks=(len(json_bytes),),
                            fletcher32=True, track_times=False)
    else:
        meta.create_dataset("serialized_schema", data=json_bytes)
    _h5.write_bitfield_scalar(meta, "schema_was_inferred", 0)
    S.write_node(meta.create_group("schema"), node)
    meta.create_dataset("count", data=np.int64(count), dtype="<i8")


def save_vector(where: Where, name: str, data: Any, *, chunk_length: Optional[int] = None,
                compression: Compression = None, replace: bool = False, schema: Any = None,
                vls_strings: Union[bool, Sequence[str]] = False, checksum: bool = False,
                statistics: bool = True) -> None:
    """Writes `data` as vector `name` of `where`. `statistics` (default on):
    per-chunk minimum, maximum and NaN counts of every number, bool, enum and
    time column reached through records (HEP001 CHUNK_MINMAX, under
    `metadata/SEARCH_INDEXES`), which `filters=` reads use to skip chunks and
    appends keep current."""
    check_name(name)
    opts = Options(chunk_length, compression, vls_strings, checksum=checksum)
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
        _write_metadata(vg.create_group("metadata"), node, rows, checksum=opts.checksum)
        if statistics:
            _stats.write_new(vg, node, rows, checksum=opts.checksum)
        group.file.flush()
        if exists:
            del group[name]
        group[name] = vg
        group.file.flush()
    finally:
        if owned is not None:
            owned.close()


def append_vector(where: Where, name: str, data: Any, *, schema: Any = None) -> None:
    check_name(name)
    group, owned = _open_where(where, "a")
    try:
        vg = group[name]
        count, stored = open_metadata(vg)
        # Checks the data groups as a reader does (structure, types, rows).
        data_g = vg["data"]
        _read.open_field(data_g, stored, "$", count)
        opts = Options(None, None, _vls_paths(stored))
        col, node, rows = build(data, schema, opts, root_hint=stored.to_dict())
        node = _adopt(stored, node, col, "$")
        if not stored.same_layout(node) or not _same_variants(stored, node):
            raise FormatError("$", vg.name, "the data's schema differs from the stored vector's: "
                                            f"stored {stored.serialized()}, data {node.serialized()}")
        stats = _stats.Append(vg, stored, count)
        ctx = Ctx(Options(None, None, False), rows)  # existing datasets keep their filters
        write_field(data_g, col, stored, count, ctx, "$")
        group.file.flush()
        # Statistics (HEP001's order): future tokens, then the entries, then the
        # count and GENERATION; a crash in between leaves tokens that say stale.
        if stats.todo:
            stats.before_content(count + rows)
            group.file.flush()
            stats.content(count + rows)
            group.file.flush()
        meta = vg["metadata"]
        meta["count"][()] = np.int64(count + rows)
        stats.commit()
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
    elif stored.kind == node.kind == "union" and stored.labels == node.labels:
        kids = col.children if isinstance(col, C.Union) else [None] * len(node.children)
        node.children = [_adopt(s, n, c, f"{path}.{v}")
                         for s, n, c, v in zip(stored.children, node.children, kids, node.labels)]
    node.logical_type = stored.logical_type
    return node


def _same_variants(stored, node):
    """The variant names of every union agree (same_layout leaves labels aside)."""
    if stored.kind == "union" and stored.labels != node.labels:
        return False
    return all(_same_variants(a, b) for a, b in zip(stored.children, node.children))
