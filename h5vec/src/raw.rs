//! Bulk HDF5 I/O straight from Rust slices, and the datatypes the high-level
//! hdf5-metno API does not model (bitfields, fixed-length UTF-8 strings).
//!
//! Every column is written and read with one `H5Dwrite`/`H5Dread` per batch
//! over a hyperslab of whole rows: never one call per element.

use std::ffi::{c_char, c_void, CString};

use hdf5::{Dataset, Datatype, Group};
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5f::H5F_libver_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::{H5S_seloper_t, H5S_ALL};
use hdf5_sys::h5t::{self, H5T_class_t, H5T_cset_t, H5T_sign_t, H5T_str_t};
use hdf5_sys::{h5d, h5s};

use crate::error::{Context, Error, Result};

pub(crate) use hdf5::sync::sync;

/// Turns a negative `herr_t` or `hid_t` from a raw HDF5 call into an error
/// naming `path` (with HDF5's own error stack as the source).
pub(crate) trait Checked: Copy {
    fn checked(self) -> hdf5::Result<Self>;
}
impl Checked for i32 {
    fn checked(self) -> hdf5::Result<Self> {
        hdf5::h5check(self)
    }
}
impl Checked for i64 {
    fn checked(self) -> hdf5::Result<Self> {
        hdf5::h5check(self)
    }
}
pub(crate) fn check<T: Checked>(path: &str, v: T) -> Result<T> {
    v.checked().at(path)
}

/// A plain value stored bit for bit: every bit pattern is a valid value.
///
/// # Safety
/// Implementors must be plain old data (no padding, every bit pattern valid),
/// and `mem_type` must describe exactly their in-memory representation.
pub unsafe trait Pod: Copy + Default + Send + Sync + 'static {
    /// HDF5 memory type of this Rust type.
    fn mem_type() -> hid_t;
    /// HDF5 file type written for it (little-endian standard type).
    fn file_type() -> hid_t;
    /// The HDF5Vectors (Julia) spelling of the encoded type.
    const ENCODED: &'static str;
    /// Whether a dataset of this file type can be read as `Self` without loss.
    fn accepts(t: &TypeInfo) -> bool;
    /// Read and write with the dataset's own (1-byte) type as memory type,
    /// so a byte in any accepted encoding moves unchanged.
    const AS_STORED: bool = false;
}

macro_rules! pod_int {
    ($t:ty, $mem:ident, $file:ident, $enc:literal, $signed:expr) => {
        // SAFETY: a primitive integer: no padding, every bit pattern valid.
        unsafe impl Pod for $t {
            fn mem_type() -> hid_t {
                *h5t::$mem
            }
            fn file_type() -> hid_t {
                *h5t::$file
            }
            const ENCODED: &'static str = $enc;
            fn accepts(t: &TypeInfo) -> bool {
                t.class == H5T_class_t::H5T_INTEGER
                    && t.size == std::mem::size_of::<$t>()
                    && t.signed == $signed
            }
        }
    };
}
pod_int!(i8, H5T_NATIVE_INT8, H5T_STD_I8LE, "Int8", true);
pod_int!(i16, H5T_NATIVE_INT16, H5T_STD_I16LE, "Int16", true);
pod_int!(i32, H5T_NATIVE_INT32, H5T_STD_I32LE, "Int32", true);
pod_int!(i64, H5T_NATIVE_INT64, H5T_STD_I64LE, "Int64", true);
pod_int!(u8, H5T_NATIVE_UINT8, H5T_STD_U8LE, "UInt8", false);
pod_int!(u16, H5T_NATIVE_UINT16, H5T_STD_U16LE, "UInt16", false);
pod_int!(u32, H5T_NATIVE_UINT32, H5T_STD_U32LE, "UInt32", false);
pod_int!(u64, H5T_NATIVE_UINT64, H5T_STD_U64LE, "UInt64", false);

macro_rules! pod_float {
    ($t:ty, $mem:ident, $file:ident, $enc:literal) => {
        // SAFETY: a primitive float: no padding, every bit pattern valid.
        unsafe impl Pod for $t {
            fn mem_type() -> hid_t {
                *h5t::$mem
            }
            fn file_type() -> hid_t {
                *h5t::$file
            }
            const ENCODED: &'static str = $enc;
            fn accepts(t: &TypeInfo) -> bool {
                t.class == H5T_class_t::H5T_FLOAT && t.size == std::mem::size_of::<$t>()
            }
        }
    };
}
pod_float!(f32, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, "Float32");
pod_float!(f64, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, "Float64");

/// One byte of an HDF5 `H5T_STD_B8LE` bitfield: how HDF5.jl stores `Bool`.
///
/// Reading also accepts any other one-byte boolean encoding (the h5col enum
/// over int8 with `FALSE = 0`, `TRUE = 1`, or a plain 8-bit integer); the
/// byte is read unchanged and any non-zero value means `true`.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Bits8(pub u8);

// SAFETY: a transparent wrapper around u8.
unsafe impl Pod for Bits8 {
    fn mem_type() -> hid_t {
        *h5t::H5T_NATIVE_B8
    }
    fn file_type() -> hid_t {
        *h5t::H5T_STD_B8LE
    }
    const ENCODED: &'static str = "Bool";
    const AS_STORED: bool = true;
    fn accepts(t: &TypeInfo) -> bool {
        t.size == 1
            && matches!(
                t.class,
                H5T_class_t::H5T_BITFIELD | H5T_class_t::H5T_ENUM | H5T_class_t::H5T_INTEGER
            )
    }
}

/// What a dataset's datatype is, in the terms h5vec checks.
#[derive(Clone, Debug)]
pub struct TypeInfo {
    /// HDF5 type class.
    pub class: H5T_class_t,
    /// Size in bytes (for variable-length strings: the pointer size).
    pub size: usize,
    /// Integers: signed.
    pub signed: bool,
    /// Strings: variable length.
    pub vlen_str: bool,
    /// Strings: UTF-8 character set.
    pub utf8: bool,
    /// Compound: member names, in order.
    pub members: Vec<(String, TypeInfo)>,
}

impl TypeInfo {
    /// A short human description for error messages, like `int32` or `vlen string`.
    pub fn describe(&self) -> String {
        use H5T_class_t::*;
        match self.class {
            H5T_INTEGER => format!("{}int{}", if self.signed { "" } else { "u" }, self.size * 8),
            H5T_FLOAT => format!("float{}", self.size * 8),
            H5T_BITFIELD => format!("bitfield{}", self.size * 8),
            H5T_ENUM => format!("enum({} bytes)", self.size),
            H5T_STRING if self.vlen_str => "variable-length string".into(),
            H5T_STRING => format!("fixed-length string({})", self.size),
            H5T_COMPOUND => format!(
                "compound{{{}}}",
                self.members
                    .iter()
                    .map(|(n, t)| format!("{n}: {}", t.describe()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            H5T_VLEN => "variable-length sequence".into(),
            H5T_ARRAY => "array type".into(),
            H5T_OPAQUE => "opaque".into(),
            H5T_REFERENCE => "reference".into(),
            _ => "unknown type".into(),
        }
    }
}

/// Reads the type information of a datatype id (caller holds the lock).
unsafe fn type_info_of(id: hid_t) -> TypeInfo {
    use H5T_class_t::*;
    let class = h5t::H5Tget_class(id);
    let size = h5t::H5Tget_size(id);
    let mut info = TypeInfo {
        class,
        size,
        signed: false,
        vlen_str: false,
        utf8: false,
        members: Vec::new(),
    };
    match class {
        H5T_INTEGER => info.signed = h5t::H5Tget_sign(id) == H5T_sign_t::H5T_SGN_2,
        H5T_STRING => {
            info.vlen_str = h5t::H5Tis_variable_str(id) > 0;
            info.utf8 = h5t::H5Tget_cset(id) == H5T_cset_t::H5T_CSET_UTF8;
        }
        H5T_ENUM => {
            let base = h5t::H5Tget_super(id);
            if base >= 0 {
                info.signed = h5t::H5Tget_sign(base) == H5T_sign_t::H5T_SGN_2;
                h5t::H5Tclose(base);
            }
        }
        H5T_COMPOUND => {
            let n = h5t::H5Tget_nmembers(id).max(0) as u32;
            for i in 0..n {
                let name_ptr = h5t::H5Tget_member_name(id, i);
                let name = if name_ptr.is_null() {
                    String::new()
                } else {
                    let s = std::ffi::CStr::from_ptr(name_ptr)
                        .to_string_lossy()
                        .into_owned();
                    hdf5_sys::h5::H5free_memory(name_ptr as *mut c_void);
                    s
                };
                let mt = h5t::H5Tget_member_type(id, i);
                let mi = if mt >= 0 {
                    let mi = type_info_of(mt);
                    h5t::H5Tclose(mt);
                    mi
                } else {
                    TypeInfo {
                        class: H5T_NO_CLASS,
                        size: 0,
                        signed: false,
                        vlen_str: false,
                        utf8: false,
                        members: vec![],
                    }
                };
                info.members.push((name, mi));
            }
        }
        _ => {}
    }
    info
}

/// The type information of a dataset's file datatype.
pub fn type_info(ds: &Dataset, path: &str) -> Result<TypeInfo> {
    sync(|| unsafe {
        let t = check(path, h5d::H5Dget_type(ds.id()))?;
        let info = type_info_of(t);
        h5t::H5Tclose(t);
        Ok(info)
    })
}

/// A copy of a predefined datatype, owned.
pub fn copy_type(id: hid_t, path: &str) -> Result<Datatype> {
    sync(|| unsafe { hdf5::from_id::<Datatype>(check(path, h5t::H5Tcopy(id))?).at(path) })
}

/// Variable-length UTF-8 string type, NULLTERM (what HDF5.jl and h5py's
/// `string_dtype()` write).
pub fn vlen_utf8(path: &str) -> Result<Datatype> {
    sync(|| unsafe {
        let t = check(path, h5t::H5Tcopy(*h5t::H5T_C_S1))?;
        let dt = hdf5::from_id::<Datatype>(t).at(path)?;
        check(path, h5t::H5Tset_size(t, h5t::H5T_VARIABLE))?;
        check(path, h5t::H5Tset_cset(t, H5T_cset_t::H5T_CSET_UTF8))?;
        check(path, h5t::H5Tset_strpad(t, H5T_str_t::H5T_STR_NULLTERM))?;
        Ok(dt)
    })
}

/// Fixed-length UTF-8 string type of `size` bytes, NULLTERM.
pub fn fixed_utf8(size: usize, path: &str) -> Result<Datatype> {
    sync(|| unsafe {
        let t = check(path, h5t::H5Tcopy(*h5t::H5T_C_S1))?;
        let dt = hdf5::from_id::<Datatype>(t).at(path)?;
        check(path, h5t::H5Tset_size(t, size.max(1)))?;
        check(path, h5t::H5Tset_cset(t, H5T_cset_t::H5T_CSET_UTF8))?;
        check(path, h5t::H5Tset_strpad(t, H5T_str_t::H5T_STR_NULLTERM))?;
        Ok(dt)
    })
}

/// Writes a scalar fixed-length UTF-8 string dataset `name` in `group`,
/// sized to the string's bytes (what HDF5.jl writes for a `String`).
pub fn write_scalar_string(group: &Group, name: &str, value: &str, path: &str) -> Result<()> {
    let dt = fixed_utf8(value.len(), path)?;
    let ds = group
        .new_dataset_builder()
        .empty_as(&dt)
        .shape(())
        .create(name)
        .at(path)?;
    let mut buf = value.as_bytes().to_vec();
    if buf.is_empty() {
        buf.push(0);
    }
    sync(|| unsafe {
        check(
            path,
            h5d::H5Dwrite(
                ds.id(),
                dt.id(),
                H5S_ALL,
                H5S_ALL,
                H5P_DEFAULT,
                buf.as_ptr().cast(),
            ),
        )
    })?;
    Ok(())
}

/// Reads a scalar string dataset (fixed-length or variable-length).
pub fn read_scalar_string(ds: &Dataset, path: &str) -> Result<String> {
    let info = type_info(ds, path)?;
    if info.class != H5T_class_t::H5T_STRING {
        return Err(Error::mismatch(path, "a scalar string", info.describe()));
    }
    if !ds.is_scalar() && ds.size() != 1 {
        return Err(Error::mismatch(
            path,
            "a scalar string",
            format!("shape {:?}", ds.shape()),
        ));
    }
    if info.vlen_str {
        let mut v = read_vlen_strings(ds, 0, 1, path)?;
        return v
            .pop()
            .ok_or_else(|| Error::invalid(path, "empty string dataset"));
    }
    let size = info.size;
    let mut buf = vec![0u8; size];
    sync(|| unsafe {
        let t = check(path, h5d::H5Dget_type(ds.id()))?;
        let r = h5d::H5Dread(
            ds.id(),
            t,
            H5S_ALL,
            H5S_ALL,
            H5P_DEFAULT,
            buf.as_mut_ptr().cast(),
        );
        h5t::H5Tclose(t);
        check(path, r)
    })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    buf.truncate(end);
    // Space-padded strings: trailing spaces are padding.
    String::from_utf8(buf).map_err(|_| Error::invalid(path, "string is not valid UTF-8"))
}

/// A chunked dataset of whole rows: `rows x inner...`, extendible along axis 0.
pub struct ColumnSpec<'a> {
    /// File datatype.
    pub dtype: &'a Datatype,
    /// Shape of one row (empty for 1-D columns).
    pub inner: &'a [usize],
    /// Chunk length along axis 0 (>= 1).
    pub chunk_rows: usize,
    /// Filters to apply.
    pub compression: &'a crate::options::Compression,
}

/// Creates an empty, extendible, chunked column dataset.
pub fn create_column(
    group: &Group,
    name: &str,
    spec: &ColumnSpec<'_>,
    path: &str,
) -> Result<Dataset> {
    let mut extents = vec![hdf5::Extent::resizable(0)];
    extents.extend(spec.inner.iter().map(|&d| hdf5::Extent::fixed(d)));
    let mut chunk = vec![spec.chunk_rows.max(1)];
    chunk.extend(spec.inner.iter().map(|&d| d.max(1)));
    if spec.compression.is_blosc() {
        blosc_threads();
    }
    group
        .new_dataset_builder()
        .empty_as(spec.dtype)
        .shape(extents)
        .chunk(chunk)
        .set_filters(&spec.compression.filters())
        .create(name)
        .at(path)
}

/// Lets Blosc use every core, once per process, when h5vec first creates
/// or reads a Blosc dataset: Blosc's thread count is global and starts at
/// 1, so it is raised to the available parallelism only while it is still
/// 1 (a count the program set before is kept; the environment variable
/// `BLOSC_NTHREADS`, which Blosc reads at every call, wins over both).
/// Must not be called from inside [`sync`] (it takes the HDF5 lock after
/// a `Once`).
pub fn blosc_threads() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if hdf5::filters::blosc_get_nthreads() == 1 {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            hdf5::filters::blosc_set_nthreads(u8::try_from(n).unwrap_or(u8::MAX));
        }
    });
}

/// The current shape of a dataset.
pub fn shape(ds: &Dataset, path: &str) -> Result<Vec<u64>> {
    Ok(ds
        .get_shape()
        .at(path)?
        .into_iter()
        .map(|d| d as u64)
        .collect())
}

fn row_selection(ds_space: hid_t, start: u64, rows: u64, inner: &[u64], path: &str) -> Result<()> {
    let mut st = vec![start as hsize_t];
    st.extend(inner.iter().map(|_| 0 as hsize_t));
    let mut cnt = vec![rows as hsize_t];
    cnt.extend(inner.iter().map(|&d| d as hsize_t));
    unsafe {
        check(
            path,
            h5s::H5Sselect_hyperslab(
                ds_space,
                H5S_seloper_t::H5S_SELECT_SET,
                st.as_ptr(),
                std::ptr::null(),
                cnt.as_ptr(),
                std::ptr::null(),
            ),
        )?;
    }
    Ok(())
}

/// Sets the extent of a dataset of rows of shape `inner` to `rows` rows.
pub fn set_rows(ds: &Dataset, rows: u64, inner: &[u64], path: &str) -> Result<()> {
    if ds.shape().first().map(|&d| d as u64) != Some(rows) {
        sync(|| unsafe {
            let mut dims = vec![rows as hsize_t];
            dims.extend(inner.iter().map(|&d| d as hsize_t));
            check(path, h5d::H5Dset_extent(ds.id(), dims.as_ptr()))
        })?;
    }
    Ok(())
}

/// The number HDF5 gives the open file holding object `id` (the same for
/// every handle of that file), or 0 if it has none.
pub fn file_number(id: hid_t) -> u64 {
    sync(|| unsafe {
        let f = hdf5_sys::h5i::H5Iget_file_id(id);
        if f < 0 {
            return 0;
        }
        let mut n: std::ffi::c_ulong = 0;
        let r = hdf5_sys::h5f::H5Fget_fileno(f, &mut n);
        hdf5_sys::h5f::H5Fclose(f);
        if r < 0 {
            0
        } else {
            n as u64
        }
    })
}

/// Writes `rows` whole rows starting at row `start`, growing the dataset to
/// exactly `start + rows` rows first. `buf` holds `rows * prod(inner)` values
/// of memory type `mem_type`, laid out row-major. Whole chunks of a deflated
/// dataset are compressed in parallel (see [`crate::parallel`]).
///
/// # Safety
/// `buf` must point to `rows * prod(inner)` elements of `mem_type`.
pub unsafe fn write_rows_raw(
    ds: &Dataset,
    mem_type: hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: *const c_void,
    path: &str,
) -> Result<()> {
    let end = start
        .checked_add(rows)
        .ok_or_else(|| Error::invalid(path, "row count overflows"))?;
    let elems = inner
        .iter()
        .try_fold(rows, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::invalid(path, "row size overflows"))?;
    set_rows(ds, end, inner, path)?;
    if elems == 0 {
        return Ok(());
    }
    let elem_size = sync(|| unsafe { h5t::H5Tget_size(mem_type) });
    let row_bytes = inner.iter().fold(elem_size as u64, |a, &d| a * d) as usize;
    match crate::parallel::Pipeline::detect(ds, mem_type) {
        Some(p) if p.row_bytes == row_bytes => {
            // SAFETY: the caller guarantees `rows` rows of `row_bytes` bytes at `buf`.
            let bytes =
                unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), rows as usize * row_bytes) };
            crate::parallel::write_rows(ds, &p, start, rows, bytes, path, &mut |s, n, b| {
                // SAFETY: `b` holds `n` whole rows of `mem_type`.
                unsafe { write_hyperslab(ds, mem_type, s, n, inner, b.as_ptr().cast(), path) }
            })
        }
        // SAFETY: forwarded from the caller.
        _ => unsafe { write_hyperslab(ds, mem_type, start, rows, inner, buf, path) },
    }
}

/// A simple dataspace of shape `(rows, inner...)`.
fn mem_space(rows: u64, inner: &[u64], path: &str) -> Result<hdf5::Dataspace> {
    let mut dims = vec![rows as hsize_t];
    dims.extend(inner.iter().map(|&d| d as hsize_t));
    // SAFETY: dims holds `rank` extents.
    let ms = check(path, unsafe {
        h5s::H5Screate_simple(dims.len() as i32, dims.as_ptr(), std::ptr::null())
    })?;
    // SAFETY: a fresh dataspace id, owned by the wrapper.
    unsafe { hdf5::from_id::<hdf5::Dataspace>(ms) }.at(path)
}

/// Writes `rows` rows at `start` of an already large enough dataset.
///
/// # Safety
/// `buf` must point to `rows * prod(inner)` elements of `mem_type`.
unsafe fn write_hyperslab(
    ds: &Dataset,
    mem_type: hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: *const c_void,
    path: &str,
) -> Result<()> {
    sync(|| unsafe {
        let fs = check(path, h5d::H5Dget_space(ds.id()))?;
        let fs = hdf5::from_id::<hdf5::Dataspace>(fs).at(path)?;
        row_selection(fs.id(), start, rows, inner, path)?;
        // The memory space has the file selection's shape: with a rank-1
        // memory space HDF5 maps chunks element by element.
        let ms = mem_space(rows, inner, path)?;
        check(
            path,
            h5d::H5Dwrite(ds.id(), mem_type, ms.id(), fs.id(), H5P_DEFAULT, buf),
        )?;
        Ok(())
    })
}

/// Writes rows of plain values; see [`write_rows_raw`].
pub fn write_rows<T: Pod>(
    ds: &Dataset,
    start: u64,
    inner: &[u64],
    buf: &[T],
    path: &str,
) -> Result<()> {
    let per_row: u64 = inner.iter().product::<u64>().max(1);
    let rows = buf.len() as u64 / per_row;
    // SAFETY: buf holds rows * per_row values of T, whose memory type is T::mem_type().
    unsafe {
        write_rows_raw(
            ds,
            T::mem_type(),
            start,
            rows,
            inner,
            buf.as_ptr().cast(),
            path,
        )
    }
}

/// Reads `rows` whole rows starting at `start` into a fresh `Vec`.
/// The caller has checked `start + rows` against the dataset's extent.
pub fn read_rows<T: Pod>(
    ds: &Dataset,
    start: u64,
    rows: u64,
    inner: &[u64],
    path: &str,
) -> Result<Vec<T>> {
    // SAFETY: T::mem_type() describes T exactly (Pod contract).
    unsafe { read_rows_as::<T>(ds, T::mem_type(), start, rows, inner, path) }
}

/// Like [`read_rows`] with an explicit memory type.
///
/// # Safety
/// `mem_type` must describe `T` exactly, and every bit pattern HDF5 may
/// produce for it must be a valid `T`.
pub unsafe fn read_rows_as<T: Copy + Default>(
    ds: &Dataset,
    mem_type: hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    path: &str,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    // SAFETY: forwarded from the caller.
    unsafe { read_rows_into(ds, mem_type, start, rows, inner, &mut out, path)? };
    Ok(out)
}

/// Like [`read_rows_as`], into `out` (replacing its contents, reusing its
/// memory: a reader that reads batch after batch faults its buffer in once).
///
/// # Safety
/// As for [`read_rows_as`].
pub unsafe fn read_rows_into<T: Copy + Default>(
    ds: &Dataset,
    mem_type: hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    out: &mut Vec<T>,
    path: &str,
) -> Result<()> {
    let elems = inner
        .iter()
        .try_fold(rows, |a, &d| a.checked_mul(d))
        .and_then(|e| usize::try_from(e).ok())
        .ok_or_else(|| Error::invalid(path, "row range too large"))?;
    // Initialised memory only: grown with defaults, shrunk without touching.
    if out.len() > elems {
        out.truncate(elems);
    } else {
        out.resize(elems, T::default());
    }
    if elems == 0 {
        return Ok(());
    }
    let row_bytes = inner
        .iter()
        .fold(std::mem::size_of::<T>() as u64, |a, &d| a * d) as usize;
    // SAFETY: `out` holds `elems` initialised plain values; viewing them as
    // bytes is valid, and whatever HDF5 writes is a valid `T` (caller's promise).
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(
            out.as_mut_ptr().cast::<u8>(),
            elems * std::mem::size_of::<T>(),
        )
    };
    match crate::parallel::Pipeline::detect(ds, mem_type) {
        Some(p) if p.row_bytes == row_bytes => {
            crate::parallel::read_rows(ds, &p, start, rows, bytes, &mut |s, n, b| {
                // SAFETY: `b` has room for `n` whole rows of `mem_type`.
                unsafe { read_hyperslab(ds, mem_type, s, n, inner, b.as_mut_ptr().cast(), path) }
            })
        }
        // SAFETY: `bytes` has room for `rows` rows of `mem_type`.
        _ => unsafe {
            read_hyperslab(
                ds,
                mem_type,
                start,
                rows,
                inner,
                bytes.as_mut_ptr().cast(),
                path,
            )
        },
    }
}

/// Reads `rows` rows at `start` into `buf`.
///
/// # Safety
/// `buf` must have room for `rows * prod(inner)` elements of `mem_type`.
unsafe fn read_hyperslab(
    ds: &Dataset,
    mem_type: hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: *mut c_void,
    path: &str,
) -> Result<()> {
    sync(|| unsafe {
        let fs = check(path, h5d::H5Dget_space(ds.id()))?;
        let fs = hdf5::from_id::<hdf5::Dataspace>(fs).at(path)?;
        row_selection(fs.id(), start, rows, inner, path)?;
        // The memory space has the file selection's shape: with a rank-1
        // memory space HDF5 maps chunks element by element.
        let ms = mem_space(rows, inner, path)?;
        check(
            path,
            h5d::H5Dread(ds.id(), mem_type, ms.id(), fs.id(), H5P_DEFAULT, buf),
        )?;
        Ok(())
    })
}

/// Reads rows of a 1-byte dataset as raw bytes in the file's own type
/// (no conversion), e.g. booleans stored as bitfield, enum or integer.
pub fn read_rows_bytes_native(ds: &Dataset, start: u64, rows: u64, path: &str) -> Result<Vec<u8>> {
    let dt = dataset_type(ds, path)?;
    if sync(|| unsafe { h5t::H5Tget_size(dt.id()) }) != 1 {
        return Err(Error::mismatch(path, "a 1-byte type", "a wider type"));
    }
    // SAFETY: a 1-byte file type read as itself yields plain bytes.
    unsafe { read_rows_as::<u8>(ds, dt.id(), start, rows, &[], path) }
}

/// Writes variable-length UTF-8 strings as rows `start..`: `bytes` holds the
/// strings back to back, each followed by a NUL; `starts` where each begins.
pub fn write_vlen_buffer(
    ds: &Dataset,
    start: u64,
    bytes: &[u8],
    starts: &[usize],
    path: &str,
) -> Result<()> {
    let base = bytes.as_ptr();
    let ptrs: Vec<*const c_char> = starts
        .iter()
        .map(|&o| base.wrapping_add(o).cast())
        .collect();
    let mt = vlen_utf8(path)?;
    // SAFETY: ptrs holds starts.len() pointers to NUL-terminated strings inside `bytes`.
    unsafe {
        write_rows_raw(
            ds,
            mt.id(),
            start,
            ptrs.len() as u64,
            &[],
            ptrs.as_ptr().cast(),
            path,
        )
    }
}

/// Writes variable-length UTF-8 strings (without NUL) as rows `start..`.
pub fn write_vlen_strings(ds: &Dataset, start: u64, strings: &[&str], path: &str) -> Result<()> {
    let mut bytes = Vec::new();
    let mut starts = Vec::with_capacity(strings.len());
    for s in strings {
        starts.push(bytes.len());
        bytes.extend_from_slice(s.as_bytes());
        bytes.push(0);
    }
    write_vlen_buffer(ds, start, &bytes, &starts, path)
}

/// Reads rows `start..start + n` of a variable-length string dataset.
/// Invalid UTF-8 is an error naming the row.
pub fn read_vlen_strings(ds: &Dataset, start: u64, n: u64, path: &str) -> Result<Vec<String>> {
    let mt = vlen_utf8(path)?;
    let count = usize::try_from(n).map_err(|_| Error::invalid(path, "row range too large"))?;
    let mut ptrs: Vec<*mut c_char> = vec![std::ptr::null_mut(); count];
    if count == 0 {
        return Ok(Vec::new());
    }
    sync(|| unsafe {
        let fs = check(path, h5d::H5Dget_space(ds.id()))?;
        let fs = hdf5::from_id::<hdf5::Dataspace>(fs).at(path)?;
        if !ds.is_scalar() {
            row_selection(fs.id(), start, n, &[], path)?;
        }
        let dims = [n as hsize_t];
        let ms = check(
            path,
            h5s::H5Screate_simple(1, dims.as_ptr(), std::ptr::null()),
        )?;
        let ms = hdf5::from_id::<hdf5::Dataspace>(ms).at(path)?;
        let read = h5d::H5Dread(
            ds.id(),
            mt.id(),
            ms.id(),
            fs.id(),
            H5P_DEFAULT,
            ptrs.as_mut_ptr().cast(),
        );
        if read < 0 {
            // A read that fails part way (e.g. a damaged heap object) has
            // already allocated the strings before it: free them (the rest
            // are still null).
            h5t::H5Treclaim(mt.id(), ms.id(), H5P_DEFAULT, ptrs.as_mut_ptr().cast());
        }
        check(path, read)?;
        let mut out = Vec::with_capacity(count);
        let mut bad = None;
        for (i, &p) in ptrs.iter().enumerate() {
            if p.is_null() {
                out.push(String::new());
                continue;
            }
            let b = std::ffi::CStr::from_ptr(p).to_bytes();
            match std::str::from_utf8(b) {
                Ok(s) => out.push(s.to_owned()),
                Err(_) => {
                    bad.get_or_insert(i);
                    out.push(String::new());
                }
            }
        }
        h5t::H5Treclaim(mt.id(), ms.id(), H5P_DEFAULT, ptrs.as_mut_ptr().cast());
        match bad {
            Some(i) => Err(Error::invalid(
                format!("{path}[{}]", start + i as u64),
                "string is not valid UTF-8",
            )),
            None => Ok(out),
        }
    })
}

/// Deletes the link `name` in `group` (the object goes when nothing else links it).
pub fn unlink(group: &Group, name: &str) -> hdf5::Result<()> {
    group.unlink(name)
}

/// Renames `from` to `to` inside `group`.
pub fn rename(group: &Group, from: &str, to: &str, path: &str) -> Result<()> {
    let f = CString::new(from).map_err(|_| Error::bad_name(path, "name contains NUL"))?;
    let t = CString::new(to).map_err(|_| Error::bad_name(path, "name contains NUL"))?;
    sync(|| unsafe {
        check(
            path,
            hdf5_sys::h5l::H5Lmove(
                group.id(),
                f.as_ptr(),
                group.id(),
                t.as_ptr(),
                H5P_DEFAULT,
                H5P_DEFAULT,
            ),
        )
    })?;
    Ok(())
}

/// Creates an anonymous group in the file of `parent`: linked nowhere, so
/// nothing a reader can reach changes while it is written. It is deleted
/// when its last handle closes unless [`link_object`] links it first.
pub fn create_anon_group(parent: &Group, path: &str) -> Result<Group> {
    parent.create_group_builder().create(None).at(path)
}

/// Files (by [`file_number`]) in which h5vec holds an object open that no
/// link reaches: the anonymous group of a vector being saved or streamed,
/// or a replaced vector kept until its replacement is committed, one entry
/// per [`Unlinked`].
static UNLINKED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

fn unlinked() -> std::sync::MutexGuard<'static, Vec<u64>> {
    // Every update is one push or remove: a poisoned lock is still usable.
    UNLINKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks the file of an object h5vec holds open without a link to it while
/// this lives. [`forget_heap_collections`] does nothing meanwhile: evicting
/// the metadata cache while such an object was open made HDF5 hand its
/// storage out again (a later append wrote a chunk over a dataset of a
/// streamed vector's group, linked in between; HDF5 2.x, default file space
/// handling).
pub struct Unlinked(u64);

impl Unlinked {
    /// Marks the file holding the object `id`.
    pub fn new(id: hid_t) -> Self {
        let n = file_number(id);
        unlinked().push(n);
        Unlinked(n)
    }
}

impl Drop for Unlinked {
    fn drop(&mut self) {
        let mut u = unlinked();
        if let Some(i) = u.iter().position(|&n| n == self.0) {
            u.swap_remove(i);
        }
    }
}

/// Links the object `obj` (typically anonymous) as `name` in `group`.
pub fn link_object(obj: &hdf5::Location, group: &Group, name: &str, path: &str) -> Result<()> {
    let n = CString::new(name).map_err(|_| Error::bad_name(path, "name contains NUL"))?;
    sync(|| unsafe {
        check(
            path,
            hdf5_sys::h5o::H5Olink(obj.id(), group.id(), n.as_ptr(), H5P_DEFAULT, H5P_DEFAULT),
        )
    })?;
    Ok(())
}

/// An open handle on an object: while it lives, HDF5 keeps the object's
/// storage even if its last link is deleted (the storage is freed when the
/// handle closes).
pub struct HeldObject {
    id: hid_t,
    /// Marks the file while the object may have no link (see [`Unlinked`]).
    _unlinked: Unlinked,
}

impl HeldObject {
    /// Opens the object linked as `name` in `group`.
    pub fn open(group: &Group, name: &str, path: &str) -> Result<Self> {
        let n = CString::new(name).map_err(|_| Error::bad_name(path, "name contains NUL"))?;
        let id = sync(|| unsafe {
            check(
                path,
                hdf5_sys::h5o::H5Oopen(group.id(), n.as_ptr(), H5P_DEFAULT),
            )
        })?;
        Ok(HeldObject {
            id,
            _unlinked: Unlinked::new(id),
        })
    }

    /// Links the held object as `name` in `group` again.
    pub fn relink(&self, group: &Group, name: &str, path: &str) -> Result<()> {
        let n = CString::new(name).map_err(|_| Error::bad_name(path, "name contains NUL"))?;
        sync(|| unsafe {
            check(
                path,
                hdf5_sys::h5o::H5Olink(self.id, group.id(), n.as_ptr(), H5P_DEFAULT, H5P_DEFAULT),
            )
        })?;
        Ok(())
    }
}

impl Drop for HeldObject {
    fn drop(&mut self) {
        // SAFETY: the id was opened by `open` and is closed once.
        sync(|| unsafe {
            hdf5_sys::h5o::H5Oclose(self.id);
        });
    }
}

/// Reads a scalar string attribute (fixed-length or variable-length).
pub fn read_attr_string(attr: &hdf5::Attribute, path: &str) -> Result<String> {
    use hdf5_sys::h5a;
    sync(|| unsafe {
        let t = check(path, h5a::H5Aget_type(attr.id()))?;
        let dt = hdf5::from_id::<Datatype>(t).at(path)?;
        let info = type_info_of(t);
        if info.class != H5T_class_t::H5T_STRING {
            return Err(Error::mismatch(path, "a string attribute", info.describe()));
        }
        if attr.size() != 1 {
            return Err(Error::mismatch(
                path,
                "a scalar string attribute",
                format!("{} values", attr.size()),
            ));
        }
        let bytes = if info.vlen_str {
            let mut p: *mut c_char = std::ptr::null_mut();
            check(
                path,
                h5a::H5Aread(attr.id(), dt.id(), (&mut p as *mut *mut c_char).cast()),
            )?;
            if p.is_null() {
                Vec::new()
            } else {
                let b = std::ffi::CStr::from_ptr(p).to_bytes().to_vec();
                hdf5_sys::h5::H5free_memory(p.cast());
                b
            }
        } else {
            let mut b = vec![0u8; info.size];
            check(
                path,
                h5a::H5Aread(attr.id(), dt.id(), b.as_mut_ptr().cast()),
            )?;
            if let Some(z) = b.iter().position(|&c| c == 0) {
                b.truncate(z);
            }
            b
        };
        String::from_utf8(bytes)
            .map_err(|_| Error::invalid(path, "string attribute is not valid UTF-8"))
    })
}

/// Writes one plain value to a scalar dataset.
pub fn write_scalar_pod<T: Pod>(ds: &Dataset, v: &T, path: &str) -> Result<()> {
    sync(|| unsafe {
        check(
            path,
            h5d::H5Dwrite(
                ds.id(),
                T::mem_type(),
                H5S_ALL,
                H5S_ALL,
                H5P_DEFAULT,
                (v as *const T).cast(),
            ),
        )
    })?;
    Ok(())
}

/// The h5col boolean type: an enum over 8-bit signed integers with exactly
/// `FALSE = 0` and `TRUE = 1`.
pub fn h5col_bool(path: &str) -> Result<Datatype> {
    sync(|| unsafe {
        let t = check(path, h5t::H5Tenum_create(*h5t::H5T_NATIVE_INT8))?;
        let dt = hdf5::from_id::<Datatype>(t).at(path)?;
        let f: i8 = 0;
        let v: i8 = 1;
        check(
            path,
            h5t::H5Tenum_insert(t, c"FALSE".as_ptr(), (&f as *const i8).cast()),
        )?;
        check(
            path,
            h5t::H5Tenum_insert(t, c"TRUE".as_ptr(), (&v as *const i8).cast()),
        )?;
        Ok(dt)
    })
}

/// Whether a dataset's type is the h5col boolean enum (int8 base, FALSE = 0, TRUE = 1).
pub fn is_h5col_bool(ds: &Dataset, path: &str) -> Result<bool> {
    sync(|| unsafe {
        let t = check(path, h5d::H5Dget_type(ds.id()))?;
        let dt = hdf5::from_id::<Datatype>(t).at(path)?;
        if h5t::H5Tget_class(t) != H5T_class_t::H5T_ENUM
            || h5t::H5Tget_size(t) != 1
            || h5t::H5Tget_nmembers(t) != 2
        {
            return Ok(false);
        }
        let base = h5t::H5Tget_super(t);
        if base < 0 {
            return Ok(false);
        }
        let signed = h5t::H5Tget_sign(base) == H5T_sign_t::H5T_SGN_2;
        h5t::H5Tclose(base);
        let mut ok = signed;
        for (name, want) in [(c"FALSE", 0i8), (c"TRUE", 1i8)] {
            let mut v: i8 = -1;
            let r = h5t::H5Tenum_valueof(dt.id(), name.as_ptr(), (&mut v as *mut i8).cast());
            ok &= r >= 0 && v == want;
        }
        Ok(ok)
    })
}

/// Writes a fixed-length ASCII string attribute, NUL included in its size
/// and null-padded (how h5col writes `CLASS`, `KIND`, `VERSION`).
pub fn write_attr_ascii(obj: &hdf5::Location, name: &str, value: &str, path: &str) -> Result<()> {
    let cname =
        CString::new(name).map_err(|_| Error::bad_name(path, "attribute name contains NUL"))?;
    let mut buf = value.as_bytes().to_vec();
    buf.push(0);
    sync(|| unsafe {
        use hdf5_sys::h5a;
        let t = check(path, h5t::H5Tcopy(*h5t::H5T_C_S1))?;
        let dt = hdf5::from_id::<Datatype>(t).at(path)?;
        check(path, h5t::H5Tset_size(t, buf.len()))?;
        check(path, h5t::H5Tset_strpad(t, H5T_str_t::H5T_STR_NULLPAD))?;
        check(path, h5t::H5Tset_cset(t, H5T_cset_t::H5T_CSET_ASCII))?;
        let sp = check(path, h5s::H5Screate(hdf5_sys::h5s::H5S_class_t::H5S_SCALAR))?;
        let sp = hdf5::from_id::<hdf5::Dataspace>(sp).at(path)?;
        if h5a::H5Aexists(obj.id(), cname.as_ptr()) > 0 {
            check(path, h5a::H5Adelete(obj.id(), cname.as_ptr()))?;
        }
        let a = check(
            path,
            h5a::H5Acreate2(
                obj.id(),
                cname.as_ptr(),
                dt.id(),
                sp.id(),
                H5P_DEFAULT,
                H5P_DEFAULT,
            ),
        )?;
        let a = hdf5::from_id::<hdf5::Attribute>(a).at(path)?;
        check(path, h5a::H5Awrite(a.id(), dt.id(), buf.as_ptr().cast()))?;
        Ok(())
    })
}

/// Reads string attribute `name` of `obj`, or `None` if it does not exist.
pub fn attr_string(obj: &hdf5::Location, name: &str, path: &str) -> Result<Option<String>> {
    if !obj.attr_names().at(path)?.iter().any(|n| n == name) {
        return Ok(None);
    }
    let a = obj.attr(name).at(path)?;
    read_attr_string(&a, &format!("{path} (attribute {name})")).map(Some)
}

/// The dataset's own datatype.
pub fn dataset_type(ds: &Dataset, path: &str) -> Result<Datatype> {
    sync(|| unsafe {
        let t = check(path, h5d::H5Dget_type(ds.id()))?;
        hdf5::from_id::<Datatype>(t).at(path)
    })
}

/// Creates an empty, extendible, chunked column dataset like
/// [`create_column`], with a user-defined fill value: `fill` holds one value
/// of type `fill_type` (HDF5 converts it to the file type). h5col marks
/// missing scalar values with the dataset's fill value.
pub fn create_column_with_fill(
    group: &Group,
    name: &str,
    spec: &ColumnSpec<'_>,
    fill_type: hid_t,
    fill: &[u8],
    path: &str,
) -> Result<Dataset> {
    use hdf5_sys::h5p;
    let cname =
        CString::new(name).map_err(|_| Error::bad_name(path, "dataset name contains NUL"))?;
    let mut dims = vec![0 as hsize_t];
    dims.extend(spec.inner.iter().map(|&d| d as hsize_t));
    let mut maxdims = vec![h5s::H5S_UNLIMITED];
    maxdims.extend(spec.inner.iter().map(|&d| d as hsize_t));
    let mut chunk = vec![spec.chunk_rows.max(1)];
    chunk.extend(spec.inner.iter().map(|&d| d.max(1)));
    if spec.compression.is_blosc() {
        blosc_threads();
    }
    sync(|| unsafe {
        if h5t::H5Tget_size(fill_type) != fill.len() {
            return Err(Error::invalid(path, "fill value does not match its type"));
        }
        let dcpl = hdf5::plist::DatasetCreate::build()
            .chunk(chunk)
            .set_filters(&spec.compression.filters())
            .finish()
            .at(path)?;
        let rank = dims.len() as i32;
        check(
            path,
            h5p::H5Pset_fill_value(dcpl.id(), fill_type, fill.as_ptr().cast()),
        )?;
        let sp = check(
            path,
            h5s::H5Screate_simple(rank, dims.as_ptr(), maxdims.as_ptr()),
        )?;
        let sp = hdf5::from_id::<hdf5::Dataspace>(sp).at(path)?;
        let ds = check(
            path,
            h5d::H5Dcreate2(
                group.id(),
                cname.as_ptr(),
                spec.dtype.id(),
                sp.id(),
                H5P_DEFAULT,
                dcpl.id(),
                H5P_DEFAULT,
            ),
        )?;
        hdf5::from_id::<Dataset>(ds).at(path)
    })
}

/// The dataset's user-defined fill value as one value of `mem_type` (of
/// `size` bytes), or `None` when the fill value is not user-defined (the
/// library default, which h5col does not treat as "missing").
pub fn user_fill(
    ds: &Dataset,
    mem_type: hid_t,
    size: usize,
    path: &str,
) -> Result<Option<Vec<u8>>> {
    use hdf5_sys::h5d::H5D_fill_value_t;
    use hdf5_sys::h5p;
    sync(|| unsafe {
        if h5t::H5Tget_size(mem_type) != size {
            return Err(Error::invalid(
                path,
                "fill value buffer does not match its type",
            ));
        }
        let dcpl = check(path, h5d::H5Dget_create_plist(ds.id()))?;
        let dcpl = hdf5::from_id::<hdf5::plist::PropertyList>(dcpl).at(path)?;
        let mut st = H5D_fill_value_t::H5D_FILL_VALUE_UNDEFINED;
        check(path, h5p::H5Pfill_value_defined(dcpl.id(), &mut st))?;
        if st != H5D_fill_value_t::H5D_FILL_VALUE_USER_DEFINED {
            return Ok(None);
        }
        let mut buf = vec![0u8; size];
        check(
            path,
            h5p::H5Pget_fill_value(dcpl.id(), mem_type, buf.as_mut_ptr().cast()),
        )?;
        Ok(Some(buf))
    })
}

/// Reads rows `start..start + rows` of a 1-D dataset of fixed-size elements
/// in the dataset's own type (no conversion), e.g. fixed-length strings.
/// Returns the bytes and the element size. Variable-length types are refused.
pub fn read_rows_own_type(
    ds: &Dataset,
    start: u64,
    rows: u64,
    path: &str,
) -> Result<(Vec<u8>, usize)> {
    let dt = dataset_type(ds, path)?;
    // Under the lock like every HDF5 call: HDF5 keeps one global stack of API
    // contexts, and a call made outside the lock while another thread is
    // inside HDF5 corrupts it (these three once crashed concurrent h5col loads).
    let (size, variable) = sync(|| unsafe {
        (
            h5t::H5Tget_size(dt.id()),
            h5t::H5Tis_variable_str(dt.id()) > 0
                || h5t::H5Tget_class(dt.id()) == H5T_class_t::H5T_VLEN,
        )
    });
    if variable || size == 0 {
        return Err(Error::mismatch(
            path,
            "a fixed-size type",
            "a variable-length type",
        ));
    }
    let total = usize::try_from(rows)
        .ok()
        .and_then(|r| r.checked_mul(size))
        .ok_or_else(|| Error::invalid(path, "row range too large"))?;
    let mut buf = vec![0u8; total];
    if rows == 0 {
        return Ok((buf, size));
    }
    sync(|| unsafe {
        let fs = check(path, h5d::H5Dget_space(ds.id()))?;
        let fs = hdf5::from_id::<hdf5::Dataspace>(fs).at(path)?;
        row_selection(fs.id(), start, rows, &[], path)?;
        let n = [rows as hsize_t];
        let ms = check(path, h5s::H5Screate_simple(1, n.as_ptr(), std::ptr::null()))?;
        let ms = hdf5::from_id::<hdf5::Dataspace>(ms).at(path)?;
        check(
            path,
            h5d::H5Dread(
                ds.id(),
                dt.id(),
                ms.id(),
                fs.id(),
                H5P_DEFAULT,
                buf.as_mut_ptr().cast(),
            ),
        )
    })?;
    Ok((buf, size))
}

unsafe extern "C" {
    // Public HDF5 API (H5Fpublic.h, since 1.10.2) not bound by hdf5-sys.
    fn H5Fincrement_filesize(file_id: hid_t, increment: hsize_t) -> hdf5_sys::h5::herr_t;
    fn H5Fset_libver_bounds(
        file_id: hid_t,
        low: hdf5_sys::h5f::H5F_libver_t,
        high: hdf5_sys::h5f::H5F_libver_t,
    ) -> hdf5_sys::h5::herr_t;
}

/// The library version bounds `file` creates objects with, as `(low, high)`.
fn libver_bounds(file: hid_t) -> Option<(H5F_libver_t, H5F_libver_t)> {
    use hdf5_sys::{h5f, h5p};
    // SAFETY: a valid file id; the property list is closed here.
    sync(|| unsafe {
        let fapl = h5f::H5Fget_access_plist(file);
        if fapl < 0 {
            return None;
        }
        let mut low = H5F_libver_t::H5F_LIBVER_EARLIEST;
        let mut high = H5F_libver_t::H5F_LIBVER_EARLIEST;
        let ok = h5p::H5Pget_libver_bounds(fapl, &mut low, &mut high) >= 0;
        h5p::H5Pclose(fapl);
        ok.then_some((low, high))
    })
}

/// Moves the end of allocation HDF5 keeps for `file` (in memory) to the end
/// of the file, so objects a writer killed during its last flush placed past
/// the end of allocation its superblock records can still be read. Works on
/// read-only handles too (nothing is written); best effort.
pub fn cover_whole_file(file: &hdf5::File) {
    let id = file.id();
    // SAFETY: a valid file id; failure leaves the file unchanged.
    sync(|| unsafe { H5Fincrement_filesize(id, 0) });
}

/// Flushes `file`, then moves its end of allocation one byte past the end of
/// the file.
///
/// A flush first hands the unused tail of HDF5's allocation blocks back,
/// which can bring the end of allocation below what the superblock on disk
/// records (when the last flush itself allocated a block), then truncates
/// the file to it, and only then writes the superblock with the lower
/// value: a kill in between leaves a file shorter than its superblock says,
/// which HDF5 refuses to open ("truncated file"). With the end of
/// allocation past the end of the file after every flush, whatever the next
/// flush hands back lies beyond what the superblock on disk records, so the
/// file never gets shorter than that.
pub fn flush_file(file: &hdf5::File, path: &str) -> Result<()> {
    file.flush().at(path)?;
    let id = file.id();
    // SAFETY: a valid file id; failure leaves the end of allocation as it is.
    sync(|| unsafe { H5Fincrement_filesize(id, 1) });
    Ok(())
}

/// Whether HDF5 manages the free space of `file` with free-space managers
/// (its default strategy, and the paged one), or cannot tell.
pub fn has_free_space_managers(file: &hdf5::File) -> bool {
    use hdf5_sys::{h5f, h5p};
    // SAFETY: a valid file id; the property list is closed here.
    sync(|| unsafe {
        let fcpl = h5f::H5Fget_create_plist(file.id());
        if fcpl < 0 {
            return true;
        }
        let mut strategy = h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_FSM_AGGR;
        let mut persist = 0;
        let mut threshold: hsize_t = 0;
        let r = h5p::H5Pget_file_space_strategy(fcpl, &mut strategy, &mut persist, &mut threshold);
        h5p::H5Pclose(fcpl);
        r < 0
            || matches!(
                strategy,
                h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_FSM_AGGR
                    | h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_PAGE
            )
    })
}

/// The metadata cache configuration of file `id`, and a copy of it with
/// automatic resizing off and evictions on or off (`evict`). `None` if HDF5
/// cannot tell.
///
/// # Safety
/// `id` must be a valid file id, and the caller must hold HDF5's lock.
unsafe fn cache_config(
    id: hid_t,
    evict: bool,
) -> Option<(
    Box<hdf5_sys::h5ac::H5AC_cache_config_t>,
    Box<hdf5_sys::h5ac::H5AC_cache_config_t>,
)> {
    use hdf5_sys::h5c::{H5C_cache_decr_mode, H5C_cache_flash_incr_mode, H5C_cache_incr_mode};
    let mut cfg: Box<hdf5_sys::h5ac::H5AC_cache_config_t> = Box::default();
    cfg.version = hdf5_sys::h5ac::H5AC__CURR_CACHE_CONFIG_VERSION;
    // SAFETY: forwarded from the caller; `cfg` is a valid output struct.
    if unsafe { hdf5_sys::h5f::H5Fget_mdc_config(id, &mut *cfg) } < 0 {
        return None;
    }
    let mut changed = cfg.clone();
    changed.evictions_enabled = evict as _;
    changed.incr_mode = H5C_cache_incr_mode::H5C_incr__off;
    changed.flash_incr_mode = H5C_cache_flash_incr_mode::H5C_flash_incr__off;
    changed.decr_mode = H5C_cache_decr_mode::H5C_decr__off;
    Some((cfg, changed))
}

/// Makes HDF5 forget the global heap collections it has cached, so that the
/// variable-length data written next goes into new collections.
///
/// HDF5 adds new variable-length values (strings) to any cached collection
/// with free space, rewriting it in place, committed values included, and a
/// collection is usually larger than a 4 KiB page: a writer killed during
/// that write leaves its first pages new and the rest old, and HDF5 then
/// fails (it even loops forever) on every value in it. A collection leaves
/// that list only when it leaves the cache, and HDF5 offers no call to
/// evict it: so the cache is shrunk to its minimum size, an anonymous group
/// created (and deleted with its handle) to make the cache evict its clean
/// entries down to that size, and the configuration restored.
///
/// Not while h5vec holds an object in the file open without a link to it
/// (see [`Unlinked`]).
///
/// Dirty metadata is written by the eviction, in the cache's order: call it
/// right after a flush, or where nothing a reader relies on is dirty.
pub fn forget_heap_collections(file: &hdf5::File) {
    use hdf5_sys::h5f;
    let id = file.id();
    if unlinked().contains(&file_number(id)) {
        return;
    }
    // SAFETY: a valid file id; every id created here is closed here.
    sync(|| unsafe {
        let Some((cfg, mut tiny)) = cache_config(id, true) else {
            return;
        };
        tiny.set_initial_size = 1;
        tiny.min_size = 1024; // H5C__MIN_MAX_CACHE_SIZE
        tiny.max_size = 1024;
        tiny.initial_size = 1024;
        if h5f::H5Fset_mdc_config(id, &*tiny) < 0 {
            return;
        }
        let g = hdf5_sys::h5g::H5Gcreate_anon(id, H5P_DEFAULT, H5P_DEFAULT);
        if g >= 0 {
            hdf5_sys::h5g::H5Gclose(g);
        }
        h5f::H5Fset_mdc_config(id, &*cfg);
    });
}

/// Keeps HDF5's metadata cache from writing dirty metadata on its own
/// (evictions off, no automatic resizing) while it lives, so the file on
/// disk changes only at explicit flushes: a writer killed between two
/// flushes leaves the metadata of the last flush, never a half-updated
/// object header or chunk index. Restores the previous configuration on drop.
///
/// While it lives, objects are also created in at least the HDF5 1.10
/// format (see [`HoldMetadata::new`]).
pub struct HoldMetadata {
    file: hid_t,
    saved: Option<Box<hdf5_sys::h5ac::H5AC_cache_config_t>>,
    bounds: Option<(H5F_libver_t, H5F_libver_t)>,
    _keep: hdf5::File,
}

impl HoldMetadata {
    /// Holds the metadata of `file` (best effort: on failure nothing changes).
    ///
    /// It also moves the file's end of allocation to the end of the file
    /// first: a writer killed during a flush can leave metadata that points
    /// past the end of allocation its superblock recorded; new space is then
    /// allocated after everything it may point to, never over it.
    ///
    /// And it raises the low bound of the file's format versions to HDF5
    /// 1.10 (the superblock keeps its version): chunked datasets created
    /// meanwhile index their chunks with an extensible array, whose entries
    /// never move, instead of a version 1 B-tree, whose nodes split in place
    /// (a kill in the middle of the flush that writes a split leaves a chunk
    /// index that loses committed chunks).
    pub fn new(file: hdf5::File) -> Self {
        use hdf5_sys::h5f;
        let id = file.id();
        if has_free_space_managers(&file) {
            // Not after a flush: right after the file was opened, a flush
            // writes the superblock, and a kill after that write left files
            // whose root group HDF5 then refused to read ("address of
            // object past end of allocation"; HDF5's default file space
            // handling). Whatever the caller left dirty is written by the
            // eviction, as HDF5 would anyway.
            forget_heap_collections(&file);
            cover_whole_file(&file);
        } else {
            cover_whole_file(&file);
            // Clean first (whatever the caller left dirty), then forget.
            let _ = flush_file(&file, "");
            forget_heap_collections(&file);
        }
        let bounds = libver_bounds(id).filter(|&(low, high)| {
            (low as i32) < (H5F_libver_t::H5F_LIBVER_V110 as i32)
                && (high as i32) >= (H5F_libver_t::H5F_LIBVER_V110 as i32)
                // SAFETY: a valid file id; on failure the bounds stay.
                && sync(|| unsafe {
                    H5Fset_libver_bounds(id, H5F_libver_t::H5F_LIBVER_V110, high)
                }) >= 0
        });
        let saved = sync(|| unsafe {
            let (cfg, mut held) = cache_config(id, false)?;
            held.set_initial_size = 0;
            if h5f::H5Fset_mdc_config(id, &*held) < 0 {
                return None;
            }
            Some(cfg)
        });
        HoldMetadata {
            file: id,
            saved,
            bounds,
            _keep: file,
        }
    }
}

impl Drop for HoldMetadata {
    fn drop(&mut self) {
        if let Some(cfg) = self.saved.as_ref() {
            sync(|| unsafe {
                hdf5_sys::h5f::H5Fset_mdc_config(self.file, &**cfg);
            });
        }
        if let Some((low, high)) = self.bounds {
            // SAFETY: the file is kept open by `_keep`.
            sync(|| unsafe { H5Fset_libver_bounds(self.file, low, high) });
        }
    }
}

/// Shrinks a dataset to `rows` rows along axis 0 if it is longer.
pub fn trim_rows(ds: &Dataset, rows: u64, path: &str) -> Result<()> {
    let mut shape: Vec<hsize_t> = ds.shape().iter().map(|&d| d as hsize_t).collect();
    match shape.first_mut() {
        Some(d) if *d > rows => {
            *d = rows;
            sync(|| unsafe { check(path, h5d::H5Dset_extent(ds.id(), shape.as_ptr())) })?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// What a dataset's filters must be, for error messages.
pub(crate) const FILTERS_EXPECTED: &str = "only filters this build can decode (deflate, shuffle, LZF, Blosc, Fletcher32, n-bit, scale-offset)";

/// The filters this build runs itself: HDF5's built-in deflate (1),
/// shuffle (2), Fletcher32 (3), n-bit (5) and scale-offset (6), and the
/// LZF (32000) and Blosc (32001) filters hdf5-metno registers at start-up.
/// SZIP (4) is not built in. A dataset with any other filter is refused
/// before HDF5 reads it, so HDF5 never looks for a plugin (SPEC.md 6.2).
pub(crate) const KNOWN_FILTERS: [i32; 7] = [1, 2, 3, 5, 6, 32000, 32001];

/// The first filter of `ds`'s pipeline that this build cannot run,
/// described for an error message (``filter `name` (id N)`` and a hint). A
/// Blosc filter (32001) whose compressor, its 7th parameter, this build of
/// Blosc lacks (Snappy) counts as unavailable too. Reading a dataset with
/// a Blosc filter this build can run sets up Blosc's threads
/// ([`blosc_threads`]).
///
/// Filters are compared with a fixed list (deflate, shuffle, Fletcher32,
/// n-bit, scale-offset, LZF, Blosc), never looked up in HDF5's registry
/// (`H5Zfilter_avail` would make HDF5 `dlopen` every library in
/// `HDF5_PLUGIN_PATH` looking for an unknown one).
pub fn unavailable_filter(ds: &Dataset) -> Option<String> {
    let (out, blosc) = sync(|| {
        // SAFETY: a valid dataset id; the property list is closed below.
        unsafe {
            let dcpl = h5d::H5Dget_create_plist(ds.id());
            if dcpl < 0 {
                return (None, false);
            }
            let r = filters_in(dcpl);
            hdf5_sys::h5p::H5Pclose(dcpl);
            r
        }
    });
    if blosc && out.is_none() {
        blosc_threads();
    }
    out
}

/// [`unavailable_filter`] on a dataset creation property list (without
/// setting up Blosc's threads).
///
/// # Safety
/// Caller holds the HDF5 lock; `dcpl` is a valid dataset creation property list.
pub(crate) unsafe fn unavailable_filter_in(dcpl: hid_t) -> Option<String> {
    // SAFETY: forwarded from the caller.
    unsafe { filters_in(dcpl).0 }
}

/// The first filter of `dcpl` this build cannot run, and whether the
/// pipeline has a Blosc filter.
///
/// # Safety
/// As for [`unavailable_filter_in`].
unsafe fn filters_in(dcpl: hid_t) -> (Option<String>, bool) {
    use hdf5_sys::h5p;
    const BLOSC: i32 = 32001;
    let mut blosc = false;
    // SAFETY: forwarded; the output buffers are as large as passed.
    unsafe {
        for i in 0..h5p::H5Pget_nfilters(dcpl).max(0) as std::ffi::c_uint {
            let mut flags: std::ffi::c_uint = 0;
            let mut cd = [0 as std::ffi::c_uint; 16];
            let mut nelm: usize = cd.len();
            let mut cfg: std::ffi::c_uint = 0;
            let mut name = [0 as c_char; 64];
            let id = h5p::H5Pget_filter2(
                dcpl,
                i,
                &mut flags,
                &mut nelm,
                cd.as_mut_ptr(),
                name.len(),
                name.as_mut_ptr(),
                &mut cfg,
            );
            let last = name.len() - 1;
            name[last] = 0;
            let name = || {
                std::ffi::CStr::from_ptr(name.as_ptr())
                    .to_string_lossy()
                    .into_owned()
            };
            if id < 0 {
                return (
                    Some(format!("filter number {i}, which HDF5 cannot describe")),
                    blosc,
                );
            }
            if !KNOWN_FILTERS.contains(&id) {
                return (
                    Some(format!("filter `{}` (id {id}){}", name(), filter_hint(id))),
                    blosc,
                );
            }
            if id == BLOSC {
                // At most cd.len() values were copied; nelm is the full count.
                let code = (nelm >= 7 && nelm <= cd.len()).then(|| cd[6]);
                match code {
                    Some(c) if crate::options::BloscCompressor::from_code(c).is_none() => {
                        let cname = match c {
                            3 => "snappy".to_owned(),
                            c => format!("code {c}"),
                        };
                        return (
                            Some(format!(
                                "filter `{}` (id {id}) with compressor {cname} (this build of Blosc has {})",
                                name(),
                                crate::options::BloscCompressor::ALL.map(|c| c.name()).join(", ")
                            )),
                            blosc,
                        );
                    }
                    _ => blosc = true,
                }
            }
        }
    }
    (None, blosc)
}

/// Where a filter h5vec cannot run comes from, for error messages.
fn filter_hint(id: i32) -> &'static str {
    match id {
        32004 => " (LZ4; in Python: `import hdf5plugin`)",
        32008 => " (bitshuffle; in Python: `import hdf5plugin`)",
        32013 => " (ZFP; in Python: `import hdf5plugin`)",
        32015 => " (Zstandard; in Python: `import hdf5plugin`; h5vec writes Zstandard inside Blosc, 32001)",
        32026 => " (Blosc2; in Python: `import hdf5plugin`; h5vec reads and writes Blosc 1, 32001)",
        307 => " (bzip2; in Python: `import hdf5plugin`)",
        _ => "",
    }
}

/// Zeroes, in the stored chunk that holds row `rows` of a 1-D chunked
/// dataset without filters, every slot from row `rows` to the chunk's end,
/// with a direct chunk read and write (no type conversion, no chunk cache).
/// The bytes of rows before `rows` are written back unchanged, in place, so
/// the committed part of the file does not change even if this is cut short.
/// For variable-length types, zero bytes are empty (null) references.
/// Does nothing when `rows` is at a chunk boundary, the chunk is not
/// allocated, or the dataset has filters.
///
/// First, a dataset longer than `rows` (the rows of an interrupted append)
/// is cut back to `rows`: HDF5 drops the chunks past it without reading
/// them, where overwriting them would make HDF5 read (and fail on) the
/// references they hold.
pub fn clear_chunk_tail(ds: &Dataset, rows: u64, path: &str) -> Result<()> {
    trim_rows(ds, rows, path)?;
    let Some(chunk) = ds.chunk().and_then(|c| c.first().copied()) else {
        return Ok(());
    };
    let chunk = chunk.max(1) as u64;
    let base = rows / chunk * chunk;
    if base == rows || ds.ndim() != 1 || !ds.filters().is_empty() {
        return Ok(());
    }
    sync(|| unsafe {
        let off = [base as hsize_t];
        let size = match crate::parallel::stored_chunk(ds.id(), base) {
            Some((_, size)) if size > 0 => size,
            _ => return Ok(()),
        };
        // The stored size of one element (for variable-length types the
        // disk reference, not the memory pointer): an unfiltered chunk holds
        // exactly `chunk` of them (16 bytes each for variable-length strings:
        // a larger stored size is not such a chunk, and not allocated for).
        if size % chunk != 0 || size / chunk > 16 {
            return Ok(());
        }
        let elem = (size / chunk) as usize;
        let mut buf = vec![0u8; size as usize];
        if crate::parallel::read_stored_chunk(ds.id(), base, &mut buf) != Some((buf.len(), 0)) {
            return Err(Error::invalid(
                path,
                "cannot read the last partly filled chunk",
            ));
        }
        let filters: u32 = 0;
        let from = ((rows - base) as usize).saturating_mul(elem).min(buf.len());
        buf[from..].iter_mut().for_each(|b| *b = 0);
        check(
            path,
            h5d::H5Dwrite_chunk(
                ds.id(),
                H5P_DEFAULT,
                filters,
                off.as_ptr(),
                buf.len(),
                buf.as_ptr().cast(),
            ),
        )?;
        Ok(())
    })
}

#[cfg(test)]
mod hold_tests {
    use super::*;

    fn evictions(f: &hdf5::File) -> i32 {
        let mut cfg: Box<hdf5_sys::h5ac::H5AC_cache_config_t> = Box::default();
        cfg.version = hdf5_sys::h5ac::H5AC__CURR_CACHE_CONFIG_VERSION;
        sync(|| unsafe { hdf5_sys::h5f::H5Fget_mdc_config(f.id(), &mut *cfg) });
        cfg.evictions_enabled as i32
    }

    #[test]
    fn datasets_written_by_h5vec_index_chunks_with_an_extensible_array() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ea.h5");
        let f = hdf5::File::create(&path).unwrap();
        let low = || libver_bounds(f.id()).unwrap().0 as i32;
        let before = low();
        crate::save_vector(&f, "v", &[1u32, 2, 3]).unwrap();
        crate::append_vector(&f, "v", &[4u32]).unwrap();
        // The bounds are back to what the file had.
        assert_eq!(low(), before);
        assert!(before < H5F_libver_t::H5F_LIBVER_V110 as i32);
        let ds = f.dataset("v/data/values").unwrap();
        let mut idx: h5d::H5D_chunk_index_t = 0;
        // SAFETY: a valid dataset id and an output value.
        sync(|| unsafe { h5d::H5Dget_chunk_index_type(ds.id(), &mut idx) });
        // H5D_CHUNK_IDX_EARRAY, not H5D_CHUNK_IDX_BTREE (0).
        assert_eq!(idx, 4);
        drop((ds, f));
        // The superblock keeps version 2.
        assert_eq!(std::fs::read(&path).unwrap()[8], 2);
    }

    /// The global heap collections the stored references of rows
    /// `rows` of a 1-D variable-length string dataset point into.
    fn collections(ds: &Dataset, rows: std::ops::Range<u64>) -> std::collections::BTreeSet<u64> {
        let chunk = ds.chunk().unwrap()[0] as u64;
        let mut out = std::collections::BTreeSet::new();
        for row in rows {
            let base = row / chunk * chunk;
            let mut buf = vec![0u8; chunk as usize * 16];
            // SAFETY: a valid dataset id and a buffer of the chunk's size.
            let (len, _) =
                sync(|| unsafe { crate::parallel::read_stored_chunk(ds.id(), base, &mut buf) })
                    .unwrap();
            // Disk form of a reference: length (4), collection address (8), index (4).
            let at = ((row - base) * 16) as usize;
            assert!(at + 16 <= len);
            out.insert(u64::from_le_bytes(buf[at + 4..at + 12].try_into().unwrap()));
        }
        out
    }

    #[test]
    fn appended_strings_go_into_new_heap_collections() {
        let dir = tempfile::tempdir().unwrap();
        let f = crate::create_file(dir.path().join("gh.h5")).unwrap();
        let strings = |a: usize, b: usize| (a..b).map(|i| format!("s{i}")).collect::<Vec<_>>();
        let opts = crate::SaveOptions::default().chunk_length(64);
        crate::save_vector_with(&f, "v", &strings(0, 10), &opts).unwrap();
        crate::append_vector(&f, "v", &strings(10, 20)).unwrap();
        let mut w = crate::VectorWriter::<String>::open_append(&f, "v", &opts).unwrap();
        w.extend(&strings(20, 30)).unwrap();
        w.flush().unwrap();
        w.extend(&strings(30, 40)).unwrap();
        w.finish().unwrap();
        let ds = f.dataset("v/data/values").unwrap();
        let parts = [0..10, 10..20, 20..30, 30..40].map(|r| collections(&ds, r));
        for i in 0..parts.len() {
            for j in 0..i {
                assert!(
                    parts[i].is_disjoint(&parts[j]),
                    "rows of commit {i} share a collection with commit {j}: {parts:?}"
                );
            }
        }
        let back: Vec<String> = crate::load_vector(&f, "v").unwrap();
        assert_eq!(back, strings(0, 40));
    }

    #[test]
    fn hold_metadata_turns_evictions_off_and_back_on() {
        let dir = tempfile::tempdir().unwrap();
        let f = hdf5::File::create(dir.path().join("h.h5")).unwrap();
        assert_eq!(evictions(&f), 1);
        {
            let _h = HoldMetadata::new(f.clone());
            assert_eq!(evictions(&f), 0);
        }
        assert_eq!(evictions(&f), 1);
    }
}
