"""Low-level HDF5 helpers: safe opening (SPEC section 7: nothing outside the
file), type inspection, raw reads and the dataset creation h5vec uses."""

import h5py
import numpy as np

from . import _gheap
from ._errors import FormatError, mismatch

# ---------------------------------------------------------------------------
# Opening objects: hard links only, no external or virtual storage.


def _link_kind(group, name):
    try:
        link = group.get(name, getlink=True)
    except (KeyError, ValueError, OSError):
        return None
    if link is None:
        return None
    return type(link).__name__


def member_path(group, name):
    g = group.name or ""
    return f"{g}{name}" if g.endswith("/") else f"{g}/{name}"


def check_hard(group, name, path):
    kind = _link_kind(group, name)
    if kind is None:
        raise mismatch(path, member_path(group, name), f"member `{name}`", "nothing")
    if kind != "HardLink":
        raise FormatError(path, member_path(group, name),
                          f"a {kind} below a vector: h5vec reads only objects inside the file, "
                          "reached by hard links")


def members(group, path):
    """Names of the members of `group`, every one checked to be a hard link."""
    try:
        names = list(group.keys())
    except (OSError, RuntimeError) as e:
        raise FormatError(path, group.name, f"cannot list the members: {e}") from None
    for n in names:
        check_hard(group, n, path)
    return names


def expect_members(group, expected, path):
    found = sorted(members(group, path))
    want = sorted(expected)
    if found != want:
        raise mismatch(path, group.name, f"members {want}", f"{found}")


def open_group(group, name, path):
    check_hard(group, name, path)
    try:
        obj = group[name]
    except (KeyError, OSError) as e:
        raise FormatError(path, member_path(group, name), f"cannot open: {e}") from None
    if not isinstance(obj, h5py.Group):
        raise mismatch(path, member_path(group, name), "a group", "a dataset")
    return obj


def open_dataset(group, name, path):
    check_hard(group, name, path)
    loc = member_path(group, name)
    try:
        obj = group[name]
    except (KeyError, OSError) as e:
        raise FormatError(path, loc, f"cannot open: {e}") from None
    if not isinstance(obj, h5py.Dataset):
        raise mismatch(path, loc, "a dataset", "a group")
    obj = _without_chunk_cache(group, name, obj)
    if obj.file.swmr_mode and _sole_handle(obj):
        # A live reader (h5py.File(..., swmr=True)): HDF5 keeps what it read
        # of a dataset cached; refresh it to see the writer's last commit
        # (SPEC section 8, "Live readers"). `count` is read first, so every
        # dataset opened after it covers it. Not while another handle holds
        # the dataset open: HDF5 would drop the chunk index that handle
        # uses (its reads could then return fill values); without the
        # refresh a load past what that handle saw is an error instead.
        obj.refresh()
    check_storage(obj, path)
    return obj


def _without_chunk_cache(group, name, ds):
    """`ds` opened again without a chunk cache when it is chunked and has no
    filters: HDF5 then reads whole chunks straight into the caller's array,
    where the cache copied each chunk through a buffer of its own (allocated
    anew for each file: 2.5M f64 rows 12 -> 6 ms); a dataset with filters
    keeps its cache (a chunk is decompressed once for several reads)."""
    try:
        if ds.chunks is None or ds.id.get_create_plist().get_nfilters() != 0:
            return ds
        dapl = ds.id.get_access_plist()
        dapl.set_chunk_cache(0, 0, 1.0)
    except (KeyError, OSError, RuntimeError, ValueError, TypeError):
        return ds
    # Closed first: HDF5 shares one cache among the handles of an open dataset.
    ds.id.close()
    try:
        bare = h5py.Dataset(h5py.h5d.open(group.id, name.encode("utf-8"), dapl=dapl))
    except (KeyError, OSError, RuntimeError, ValueError, TypeError):
        return group[name]
    return bare


def close_file(f):
    """Closes h5py file `f`. HDF5 can fail to close a damaged file (e.g. after
    listing a damaged group of a read-only file made it want to write: "Can't
    decrement id ref count"); the close is then tried once more, which ends
    it, and a failure is not raised: the error that led here, or the values
    read, are what the caller gets."""
    for _ in range(2):
        try:
            f.close()
            return
        except (RuntimeError, OSError, ValueError):
            pass


def _sole_handle(ds):
    ids = h5py.h5f.get_obj_ids(ds.file.id, h5py.h5f.OBJ_DATASET)
    return sum(1 for i in ids if i == ds.id) <= 1


def check_storage(ds, path):
    """Refuses datasets whose bytes live outside the file (SPEC section 7)."""
    dcpl = ds.id.get_create_plist()
    if dcpl.get_layout() == h5py.h5d.VIRTUAL:
        raise FormatError(path, ds.name, "a virtual dataset: h5vec reads only data stored in the file")
    if dcpl.get_external_count() > 0:
        raise FormatError(path, ds.name, "a dataset with external storage: h5vec reads only data "
                                         "stored in the file")
    if ds.chunks is not None and dcpl.get_nfilters() > 0:
        nbytes = ds.dtype.itemsize
        for d in ds.chunks:
            nbytes *= int(d)
        if nbytes > MAX_FILTERED_CHUNK_BYTES:
            # HDF5 decodes a filtered chunk whole, into a buffer of the size
            # the file declares (SPEC section 7).
            raise FormatError(path, ds.name, f"expected chunks of at most {MAX_FILTERED_CHUNK_BYTES} bytes "
                                             f"(1 GiB) in a filtered dataset, found chunks of {nbytes} bytes "
                                             f"(chunk shape {tuple(ds.chunks)})")

    for i in range(dcpl.get_nfilters()):
        code, flags, values, _name = dcpl.get_filter(i)
        if code in (1, 2) and not flags & 1:
            # A mandatory deflate or shuffle with parameters HDF5's own
            # filter refuses (deflate: one, a level of 0 to 9; shuffle: one,
            # nonzero): damage (h5py's `compression` property fails on it
            # with an IndexError), refused as Rust does (raw/filters.rs).
            # Optional ones fail harmlessly: HDF5 stores shuffle without
            # parameters, optional, on variable-length datasets.
            what, ok = ("one, a level of 0 to 9", lambda v: v <= 9) if code == 1 else \
                ("one, a nonzero element size", lambda v: v != 0)
            if len(values) != 1 or not ok(values[0]):
                found = f"{len(values)} parameters" if len(values) != 1 else f"parameter {values[0]}"
                raise FormatError(path, ds.name, f"expected {_name.decode(errors='replace')} filter "
                                                 f"parameters as HDF5 stores them ({what}), found {found}")
        if code == 3 and ds.chunks is not None:
            _check_checksummed_chunks(ds, path, 1 << i)
        if code == 32001:
            why = _bad_blosc(values)
            if why:
                # Damage Blosc's filter cannot run (a division by zero in its
                # compressor, a failure on every write): as Rust (SPEC section 7).
                raise FormatError(path, ds.name, f"expected Blosc filter parameters as Blosc's filter "
                                                 f"stores them (at least 4, a type size of 1 to 255), "
                                                 f"found {why}")


def _check_checksummed_chunks(ds, path, bit):
    """Refuses a Fletcher32 dataset with a chunk whose filter mask says its
    checksum was skipped (HDF5 would not verify it; it never writes one: the
    filter is mandatory), or stored in fewer than the checksum's 4 bytes:
    HDF5's filter subtracts 4 from the size and reads far past the buffer, a
    crash (SPEC sections 6.4 and 7; as Rust's
    `raw::chunks::check_checksummed_chunks`). One pass over the chunk index."""
    rows = int(ds.chunks[0])
    bad = []

    def visit(info):
        if not bad and (info.filter_mask & bit or info.size < 4):
            bad.append(info)

    try:
        ds.id.chunk_iter(visit)
    except (AttributeError, NotImplementedError):
        return  # h5py or HDF5 without H5Dchunk_iter: left to HDF5
    if bad:
        k = int(bad[0].chunk_offset[0]) // max(rows, 1)
        if bad[0].filter_mask & bit:
            raise FormatError(path, ds.name, f"the chunk of rows {k * rows}..{(k + 1) * rows} is stored "
                                             f"without its Fletcher32 checksum (filter mask "
                                             f"{bad[0].filter_mask:#x})")
        raise FormatError(path, ds.name, f"the chunk of rows {k * rows}..{(k + 1) * rows} is stored in "
                                         f"{bad[0].size} bytes, fewer than its 4-byte Fletcher32 checksum")


def fletcher32_bit(ds):
    """The filter-mask bit of `ds`'s Fletcher32 filter, or None when its
    pipeline has none."""
    dcpl = ds.id.get_create_plist()
    for i in range(dcpl.get_nfilters()):
        if dcpl.get_filter(i)[0] == h5py.h5z.FILTER_FLETCHER32:
            return 1 << i
    return None


def _bad_blosc(values):
    """Why the Blosc filter parameters `values` cannot be run, or None."""
    if len(values) < 4:
        return f"{len(values)} parameters"
    if not 1 <= values[2] <= 255:
        return f"type size {values[2]}"
    return None


# Largest chunk of a filtered dataset read (SPEC section 7), as in Rust.
MAX_FILTERED_CHUNK_BYTES = 1 << 30


# ---------------------------------------------------------------------------
# Types


class TypeInfo:
    __slots__ = ("cls", "size", "signed", "vlen_str", "members", "enum", "tid")

    def __init__(self, tid):
        self.tid = tid
        self.cls = tid.get_class()
        self.size = tid.get_size()
        self.signed = None
        self.vlen_str = False
        self.members = None
        self.enum = None
        if self.cls == h5py.h5t.INTEGER:
            self.signed = tid.get_sign() == h5py.h5t.SGN_2
        elif self.cls == h5py.h5t.STRING:
            self.vlen_str = tid.is_variable_str()
        elif self.cls == h5py.h5t.COMPOUND:
            self.members = [(tid.get_member_name(i).decode("utf-8", "replace"),
                             TypeInfo(tid.get_member_type(i)), tid.get_member_offset(i))
                            for i in range(tid.get_nmembers())]
        elif self.cls == h5py.h5t.ENUM:
            base = tid.get_super()
            self.signed = base.get_sign() == h5py.h5t.SGN_2
            self.enum = {tid.get_member_name(i).decode("utf-8", "replace"): tid.get_member_value(i)
                         for i in range(tid.get_nmembers())}

    def describe(self):
        names = {h5py.h5t.INTEGER: "integer", h5py.h5t.FLOAT: "float", h5py.h5t.STRING: "string",
                 h5py.h5t.BITFIELD: "bitfield", h5py.h5t.COMPOUND: "compound", h5py.h5t.ENUM: "enum",
                 h5py.h5t.ARRAY: "array", h5py.h5t.VLEN: "variable-length sequence",
                 h5py.h5t.OPAQUE: "opaque", h5py.h5t.REFERENCE: "reference"}
        base = names.get(self.cls, f"class {self.cls}")
        if self.cls in (h5py.h5t.INTEGER, h5py.h5t.ENUM):
            return f"{'signed' if self.signed else 'unsigned'} {8 * self.size}-bit {base}"
        if self.cls == h5py.h5t.STRING:
            return "variable-length string" if self.vlen_str else f"fixed-length string ({self.size} bytes)"
        if self.cls in (h5py.h5t.FLOAT, h5py.h5t.BITFIELD):
            return f"{8 * self.size}-bit {base}"
        return base


def type_info(ds):
    return TypeInfo(ds.id.get_type())


def is_h5col_bool(info):
    """The h5col bool type: an enum over a signed 8-bit integer with exactly FALSE = 0, TRUE = 1."""
    return (info.cls == h5py.h5t.ENUM and info.size == 1 and info.signed
            and info.enum == {"FALSE": 0, "TRUE": 1})


# ---------------------------------------------------------------------------
# Reading


def shape(ds):
    return tuple(int(d) for d in ds.shape) if ds.shape is not None else ()


#: Arrays at least this large come from pyarrow's memory pool (`empty`).
POOL_BYTES = 1 << 20


def empty(shape_, dtype):
    """np.empty(shape_, dtype); a large one in memory of pyarrow's default
    pool (mimalloc or jemalloc) when pyarrow is there: memory freed goes back
    to the pool, and a later read reuses it without faulting fresh pages in
    (glibc maps and unmaps each large block anew under Dask's workers, which
    set MALLOC_TRIM_THRESHOLD_; Arrow's readers use the pool too)."""
    dtype = np.dtype(dtype)
    shape_ = tuple(int(d) for d in shape_) if isinstance(shape_, tuple) else (int(shape_),)
    count = 1
    for d in shape_:
        count *= d
    nbytes = count * dtype.itemsize
    if nbytes < POOL_BYTES or dtype.hasobject:
        return np.empty(shape_, dtype)
    try:
        import pyarrow as pa
    except ImportError:
        return np.empty(shape_, dtype)
    return np.frombuffer(pa.allocate_buffer(nbytes), dtype, count=count).reshape(shape_)


def _plain(dtype):
    """Numbers (no fields, no enum, vlen or reference metadata): read as bytes."""
    return dtype.kind in "biuf" and dtype.fields is None and not dtype.metadata and dtype.subdtype is None


def read_rows(ds, start, stop, path):
    """ds[start:stop] as stored (numpy dtype of the file type)."""
    # Damaged heap collections that HDF5 would loop on (SPEC section 7).
    _gheap.guard(ds, start, stop, path)
    try:
        if stop <= start:
            return np.zeros((0,) + shape(ds)[1:], dtype=ds.dtype)
        dims = shape(ds)
        if len(dims) >= 1 and _plain(ds.dtype) and stop <= dims[0]:
            # What ds[start:stop] does, into an array of `empty`.
            out = empty((stop - start,) + dims[1:], ds.dtype)
            fspace = ds.id.get_space()
            fspace.select_hyperslab((start,) + (0,) * (len(dims) - 1), out.shape)
            mspace = h5py.h5s.create_simple(out.shape)
            ds.id.read(mspace, fspace, out, mtype=h5py.h5t.py_create(out.dtype))
            return out
        return ds[start:stop]
    except (OSError, RuntimeError, ValueError, TypeError) as e:
        if ds.fletcher32 and "filter returned failure" in str(e):
            # HDF5 verified the chunk's Fletcher32 checksum (SPEC 6.4).
            raise FormatError(path, ds.name, f"checksum mismatch (Fletcher32) or a damaged chunk in rows "
                                             f"{start}..{stop}: {e}") from None
        raise FormatError(path, ds.name, f"cannot read rows {start}..{stop}: {e}") from None


def read_rows_into(ds, start, stop, out, path):
    """Rows start..stop of a 1-dimensional dataset of a type without
    variable-length parts into `out` (a numpy array of stop - start rows of
    a matching dtype; HDF5 converts), with `read_rows`' errors."""
    try:
        fspace = ds.id.get_space()
        fspace.select_hyperslab((start,), (stop - start,))
        mspace = h5py.h5s.create_simple((stop - start,))
        ds.id.read(mspace, fspace, out, mtype=h5py.h5t.py_create(out.dtype))
    except (OSError, RuntimeError, ValueError, TypeError) as e:
        if ds.fletcher32 and "filter returned failure" in str(e):
            raise FormatError(path, ds.name, f"checksum mismatch (Fletcher32) or a damaged chunk in rows "
                                             f"{start}..{stop}: {e}") from None
        raise FormatError(path, ds.name, f"cannot read rows {start}..{stop}: {e}") from None
    return out


def read_bytes_raw(ds, start, stop, path):
    """Rows of a dataset of a 1-byte type (integer, bitfield or enum), as the
    stored bytes (uint8), without any conversion."""
    n = max(0, stop - start)
    inner = shape(ds)[1:]
    out = empty((n,) + inner, np.uint8)
    if out.size == 0:
        return out
    try:
        fspace = ds.id.get_space()
        fspace.select_hyperslab((start,) + (0,) * len(inner), (n,) + inner)
        mspace = h5py.h5s.create_simple(out.shape)
        ds.id.read(mspace, fspace, out, mtype=ds.id.get_type())
    except (OSError, RuntimeError, ValueError, TypeError) as e:
        raise FormatError(path, ds.name, f"cannot read rows {start}..{stop}: {e}") from None
    return out


def read_scalar_string(ds, path):
    if ds.shape != ():
        raise mismatch(path, ds.name, "a scalar string", f"shape {ds.shape}")
    info = type_info(ds)
    if info.cls != h5py.h5t.STRING:
        raise mismatch(path, ds.name, "a scalar string", info.describe())
    if info.vlen_str:
        _gheap.guard(ds, 0, 1, path)
    try:
        raw = ds[()]
    except (OSError, RuntimeError, ValueError) as e:
        raise FormatError(path, ds.name, f"cannot read: {e}") from None
    if isinstance(raw, str):
        return raw
    if isinstance(raw, np.ndarray):
        raw = raw.tobytes()
    raw = bytes(raw)
    if not info.vlen_str:
        raw = raw.split(b"\0", 1)[0]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(path, ds.name, "string is not valid UTF-8") from None


def read_attr_string(obj, name, path):
    """A string attribute, or None when absent."""
    if name not in obj.attrs:
        return None
    try:
        aid = obj.attrs.get_id(name)
        t = TypeInfo(aid.get_type())
        if t.cls != h5py.h5t.STRING or aid.shape not in ((), (1,)):
            raise mismatch(path, obj.name, f"attribute {name} to be a scalar string", t.describe())
        # Damaged heap collections that HDF5 would loop on (SPEC section 7).
        _gheap.guard_attr(obj, name, path)
        raw = obj.attrs[name]
    except FormatError:
        raise
    except (OSError, RuntimeError, ValueError, TypeError) as e:
        raise FormatError(path, obj.name, f"cannot read attribute {name}: {e}") from None
    if isinstance(raw, np.ndarray):
        raw = raw.reshape(-1)[0]
    if isinstance(raw, str):
        return raw
    raw = bytes(raw).split(b"\0", 1)[0]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(path, obj.name, f"attribute {name} is not valid UTF-8") from None


# ---------------------------------------------------------------------------
# Writing


def write_fixed_str(group, name, value):
    """A scalar fixed-length UTF-8 NULLTERM string sized to its bytes (HDF5.jl's form)."""
    b = value.encode("utf-8")
    size = max(len(b), 1)
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(size)
    tid.set_cset(h5py.h5t.CSET_UTF8)
    tid.set_strpad(h5py.h5t.STR_NULLTERM)
    sid = h5py.h5s.create(h5py.h5s.SCALAR)
    dsid = h5py.h5d.create(group.id, name.encode("utf-8"), tid, sid)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array(b.ljust(size, b"\0"), dtype=f"S{size}"), mtype=tid)


def write_attr_ascii(obj, name, value):
    """A scalar fixed-length ASCII attribute, NUL included in the size, null-padded (h5col's form)."""
    b = value.encode("ascii")
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(len(b) + 1)
    tid.set_cset(h5py.h5t.CSET_ASCII)
    tid.set_strpad(h5py.h5t.STR_NULLPAD)
    sid = h5py.h5s.create(h5py.h5s.SCALAR)
    aid = h5py.h5a.create(obj.id, name.encode("ascii"), tid, sid)
    aid.write(np.array(b + b"\0", dtype=f"S{len(b) + 1}"), mtype=tid)


def write_bitfield_scalar(group, name, value):
    sid = h5py.h5s.create(h5py.h5s.SCALAR)
    dsid = h5py.h5d.create(group.id, name.encode(), h5py.h5t.STD_B8LE, sid)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array(value, dtype=np.uint8), mtype=h5py.h5t.NATIVE_B8)


def next_pow2(n):
    return 1 << max(0, int(n) - 1).bit_length()


def compression_kwargs(compression):
    """h5py keyword arguments for a `compression` setting of save_vector."""
    if compression is None or compression is False:
        return {}
    level = None
    if isinstance(compression, tuple):
        compression, level = compression
    if isinstance(compression, int) and not isinstance(compression, bool):
        compression, level = "deflate", compression
    name = str(compression).lower()
    if name in ("deflate", "gzip", "zlib"):
        return dict(compression="gzip", compression_opts=4 if level is None else int(level), shuffle=True)
    if name == "lzf":
        return dict(compression="lzf")
    if name in ("zstd", "lz4", "blosclz", "lz4hc"):
        try:
            import hdf5plugin
        except ImportError:
            raise ValueError(f"compression {name!r} (Blosc, filter 32001) needs `pip install hdf5plugin`") from None
        return dict(hdf5plugin.Blosc(cname=name, clevel=5 if level is None else int(level),
                                     shuffle=hdf5plugin.Blosc.SHUFFLE))
    raise ValueError(f"unknown compression {compression!r}: use None, 'deflate', ('deflate', level), "
                     "'lzf', 'zstd' or ('zstd', level)")


def create_column(group, name, dtype, inner, chunk_rows, compression, fillvalue=None, checksum=False):
    """An empty chunked dataset of shape (0, *inner), axis 0 unlimited; with
    `checksum`, HDF5's Fletcher32 filter last in its pipeline (SPEC 6.4)."""
    kw = compression_kwargs(compression)
    vlen = h5py.check_vlen_dtype(np.dtype(dtype)) is not None
    if vlen and kw.get("compression") == BLOSC:
        # hdf5plugin's Blosc divides by zero (SIGFPE, the process dies) writing
        # a variable-length dataset with HDF5 2.0 (SPEC 6.1). Its rows are
        # 16-byte heap IDs; the strings live in the global heap, which no
        # filter compresses: the dataset is written without Blosc.
        kw = {}
    # Not on variable-length data: its values live in the global heap, which
    # no filter covers, and HDF5 2.0 refuses the filter there (as Rust does).
    if checksum and not vlen:
        kw["fletcher32"] = True
    return group.create_dataset(name, shape=(0,) + tuple(inner), maxshape=(None,) + tuple(inner),
                                chunks=(max(1, int(chunk_rows)),) + tuple(inner), dtype=dtype,
                                fillvalue=fillvalue, **kw)


def put_rows(ds, start, arr):
    """Grows `ds` to exactly start + len(arr) rows and writes `arr` there."""
    n = len(arr)
    ds.resize((start + n,) + tuple(ds.shape[1:]))
    if n:
        ds[start:start + n] = arr


def put_strings(ds, start, offsets, data):
    """Grows the variable-length string dataset `ds` to exactly start + n
    rows and writes strings data[offsets[i]:offsets[i+1]] there without a
    Python object per row: HDF5's memory form of a variable-length string
    is a `char *` to NUL-terminated bytes, so the strings are copied once
    into one buffer with a NUL after each, and HDF5 gets an array of
    pointers into it (HDF5 copies every string into the file's global heap
    during the call; `buf` outlives it). The caller has refused strings
    holding a NUL (HDF5 would cut them there)."""
    n = len(offsets) - 1
    ds.resize((start + n,))
    if n == 0:
        return
    offsets = np.asarray(offsets, np.int64)
    buf = np.insert(np.asarray(data, np.uint8), offsets[1:], 0)
    if len(buf) != int(offsets[-1]) + n:
        raise ValueError("string offsets do not match their bytes")
    ptrs = (offsets[:-1] + np.arange(n, dtype=np.int64) + buf.ctypes.data).astype(np.uint64)
    mtype = h5py.h5t.C_S1.copy()
    mtype.set_size(h5py.h5t.VARIABLE)
    mtype.set_cset(ds.id.get_type().get_cset())
    fspace = ds.id.get_space()
    fspace.select_hyperslab((start,), (n,))
    ds.id.write(h5py.h5s.create_simple((n,)), fspace, ptrs, mtype=mtype)
    del buf


BLOSC = 32001
BITFIELD8 = h5py.Datatype(h5py.h5t.STD_B8LE.copy())
H5COL_BOOL = h5py.enum_dtype({"FALSE": 0, "TRUE": 1}, basetype="i1")
VLEN_UTF8 = h5py.string_dtype("utf-8")
POINTER = np.dtype([("offset", "<u8"), ("length", "<u8")])


def guard_heap(ds, path):
    """Before reading all of `ds`: its heap collections checked (`_gheap`)."""
    shp = shape(ds)
    _gheap.guard(ds, 0, shp[0] if shp else 1, path)
