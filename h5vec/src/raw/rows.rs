//! Row I/O: columns are chunked datasets of whole rows (`rows x inner...`,
//! extendible along axis 0), written and read with one `H5Dwrite`/`H5Dread`
//! per batch over a hyperslab of whole rows, never one call per element.
//! Whole chunks of a deflated or unfiltered dataset bypass HDF5's pipeline
//! (see [`crate::pipeline`]).

use std::ffi::{c_char, c_void};

use hdf5::{Dataset, Datatype, Group};
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s::H5S_ALL;
use hdf5_sys::h5t::{self, H5T_class_t};
use hdf5_sys::{h5d, h5s};

use super::ffi::{call, check, sync};
use super::filters::blosc_threads;
use super::spaces::{file_space, mem_space, row_selection, whole_space};
use super::types::{dataset_type, vlen_utf8, Pod};
use crate::error::{At, Context, Error, Result};

/// A chunked dataset of whole rows: `rows x inner...`, extendible along axis 0.
pub(crate) struct ColumnSpec<'a> {
    /// File datatype.
    pub dtype: &'a Datatype,
    /// Shape of one row (empty for 1-D columns).
    pub inner: &'a [usize],
    /// Chunk length along axis 0 (>= 1).
    pub chunk_rows: usize,
    /// Filters to apply.
    pub compression: &'a crate::options::Compression,
    /// HDF5's Fletcher32 checksum last in the pipeline
    /// ([`crate::SaveOptions::checksum`]), unless the type holds
    /// variable-length data (see `filters::holds_variable_length`).
    pub checksum: bool,
}

impl ColumnSpec<'_> {
    /// The chunk shape: `chunk_rows` rows of the whole row shape.
    pub(crate) fn chunk(&self) -> Vec<usize> {
        let mut chunk = vec![self.chunk_rows.max(1)];
        chunk.extend(self.inner.iter().map(|&d| d.max(1)));
        chunk
    }
}

/// Creates an empty, extendible, chunked column dataset.
pub(crate) fn create_column(
    group: &Group,
    name: &str,
    spec: &ColumnSpec<'_>,
    path: impl At,
) -> Result<Dataset> {
    let mut extents = vec![hdf5::Extent::resizable(0)];
    extents.extend(spec.inner.iter().map(|&d| hdf5::Extent::fixed(d)));
    if spec.compression.is_blosc() {
        blosc_threads();
    }
    let checksum = spec.checksum && !super::filters::holds_variable_length(spec.dtype);
    let b = group
        .new_dataset_builder()
        .empty_as(spec.dtype)
        .shape(extents)
        .chunk(spec.chunk())
        .set_filters(&spec.compression.filters_with(checksum));
    // In a file `h5vec::mpi` writes, chunks are allocated collectively when
    // the extent grows; filling them first (hdf5-metno's default for
    // chunked datasets) would write every byte twice. Every row below
    // `count` is written, and readers read no others (SPEC.md section 1).
    #[cfg(feature = "mpi")]
    let b = if super::mpifiles::is_mpio(group.id()) {
        b.fill_time(hdf5::plist::dataset_create::FillTime::Never)
    } else {
        b
    };
    b.create(name).at(path)
}

/// The current shape of a dataset.
pub(crate) fn shape(ds: &Dataset, path: impl At) -> Result<Vec<u64>> {
    Ok(ds
        .get_shape()
        .at(path)?
        .into_iter()
        .map(|d| d as u64)
        .collect())
}

/// Most chunk rows (slabs of one chunk length) a shrink may drop.
const MAX_SHRINK_CHUNK_ROWS: u64 = 1 << 20;

/// Refuses to shrink `ds` from `from` to `to` rows when that drops more
/// than [`MAX_SHRINK_CHUNK_ROWS`] chunk rows: HDF5 visits every chunk
/// position between the two extents, so a damaged extent (2^64 rows) would
/// keep it busy for hours. Appends only ever leave a few uncommitted
/// batches beyond `count`.
fn check_shrink(ds: &Dataset, from: u64, to: u64, path: impl At) -> Result<()> {
    let Some(c) = ds.chunk().and_then(|c| c.first().copied()) else {
        return Ok(());
    };
    let c = (c as u64).max(1);
    let dropped = from.div_ceil(c).saturating_sub(to.div_ceil(c));
    if dropped > MAX_SHRINK_CHUNK_ROWS {
        return Err(Error::invalid(
            path,
            format!(
                "the dataset's extent of {from} rows is {dropped} chunks beyond the {to} rows in \
                 use; h5vec does not trim that far (the extent is damaged)"
            ),
        ));
    }
    Ok(())
}

/// Sets the extent of a dataset of rows of shape `inner` to `rows` rows.
pub(crate) fn set_rows(ds: &Dataset, rows: u64, inner: &[u64], path: impl At) -> Result<()> {
    let cur = ds.shape().first().map(|&d| d as u64);
    if let Some(cur) = cur.filter(|&cur| cur > rows) {
        check_shrink(ds, cur, rows, path)?;
    }
    if cur != Some(rows) {
        let mut dims = vec![rows as hsize_t];
        dims.extend(inner.iter().map(|&d| d as hsize_t));
        // SAFETY: `dims` holds one extent per dimension of the dataset.
        call(path, || unsafe {
            h5d::H5Dset_extent(ds.id(), dims.as_ptr())
        })?;
    }
    Ok(())
}

/// Shrinks a dataset to `rows` rows along axis 0 if it is longer.
pub(crate) fn trim_rows(ds: &Dataset, rows: u64, path: impl At) -> Result<()> {
    let mut shape: Vec<hsize_t> = ds.shape().iter().map(|&d| d as hsize_t).collect();
    match shape.first_mut() {
        Some(d) if *d > rows => {
            check_shrink(ds, *d, rows, path)?;
            *d = rows;
            // SAFETY: `shape` holds one extent per dimension of the dataset.
            call(path, || unsafe {
                h5d::H5Dset_extent(ds.id(), shape.as_ptr())
            })?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Writes `rows` rows at `start` of an already large enough dataset.
///
/// # Safety
/// `buf` must point to `rows * prod(inner)` elements of `mem_type`.
pub(super) unsafe fn write_hyperslab(
    ds: &Dataset,
    mem_type: hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: *const c_void,
    path: impl At,
) -> Result<()> {
    // Rows a capturing memory file kept go in first (`raw::capture`).
    super::capture::settle(ds, path)?;
    // Chunks HDF5's Fletcher32 filter would crash on when a partial chunk
    // is read back to be rewritten (SPEC.md section 7).
    super::chunks::check_checksummed_chunks(ds, start, rows, path)?;
    sync(|| {
        let fs = file_space(ds, start, rows, inner, path)?;
        // The memory space has the file selection's shape: with a rank-1
        // memory space HDF5 maps chunks element by element.
        let ms = mem_space(rows, inner, path)?;
        let xfer = write_xfer(ds, path)?;
        // SAFETY: both selections hold `rows * prod(inner)` elements, which
        // `buf` holds (caller's contract); the transfer list is valid.
        check(path, unsafe {
            h5d::H5Dwrite(ds.id(), mem_type, ms.id(), fs.id(), xfer_id(&xfer), buf)
        })?;
        Ok(())
    })
}

/// Reads `rows` whole rows at `start` into `buf`, as memory type
/// `mem_type` (which may be the dataset's own file type: no conversion).
/// The caller has checked `start + rows` against the dataset's extent.
///
/// # Safety
/// `buf` must have room for `rows * prod(inner)` elements of `mem_type`.
pub(crate) unsafe fn read_rows_raw(
    ds: &Dataset,
    mem_type: hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: *mut c_void,
    path: impl At,
) -> Result<()> {
    if rows == 0 || inner.contains(&0) {
        return Ok(());
    }
    // SAFETY: forwarded from the caller.
    unsafe { read_hyperslab(ds, mem_type, start, rows, inner, buf, path) }
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
    path: impl At,
) -> Result<()> {
    super::capture::settle(ds, path)?;
    // Chunks HDF5's Fletcher32 filter would crash on (SPEC.md section 7).
    super::chunks::check_checksummed_chunks(ds, start, rows, path)?;
    sync(|| {
        let fs = file_space(ds, start, rows, inner, path)?;
        // The memory space has the file selection's shape: with a rank-1
        // memory space HDF5 maps chunks element by element.
        let ms = mem_space(rows, inner, path)?;
        // SAFETY: both selections hold `rows * prod(inner)` elements, for
        // which `buf` has room (caller's contract).
        check(path, unsafe {
            h5d::H5Dread(ds.id(), mem_type, ms.id(), fs.id(), H5P_DEFAULT, buf)
        })?;
        Ok(())
    })
}

/// Reads rows `start..start + rows` of a 1-D dataset of fixed-size elements
/// in the dataset's own type (no conversion), e.g. fixed-length strings.
/// Returns the bytes and the element size. Variable-length types are refused.
pub(crate) fn read_rows_own_type(
    ds: &Dataset,
    start: u64,
    rows: u64,
    path: impl At,
) -> Result<(Vec<u8>, usize)> {
    let dt = dataset_type(ds, path)?;
    // SAFETY: these only read a valid datatype.
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
    super::capture::settle(ds, path)?;
    super::chunks::check_checksummed_chunks(ds, start, rows, path)?;
    sync(|| {
        let fs = file_space(ds, start, rows, &[], path)?;
        let ms = mem_space(rows, &[], path)?;
        // SAFETY: `rows` elements of the file's own fixed size are selected,
        // and `buf` holds `rows * size` bytes.
        check(path, unsafe {
            h5d::H5Dread(
                ds.id(),
                dt.id(),
                ms.id(),
                fs.id(),
                H5P_DEFAULT,
                buf.as_mut_ptr().cast(),
            )
        })
    })?;
    Ok((buf, size))
}

/// Writes one plain value to a scalar dataset.
pub(crate) fn write_scalar_pod<T: Pod>(ds: &Dataset, v: &T, path: impl At) -> Result<()> {
    // SAFETY: one value of `T`, which `T::mem_type()` describes (Pod
    // contract), for the one element of a scalar dataset.
    unsafe { write_whole(ds, T::mem_type(), (v as *const T).cast(), path) }
}

/// Writes every element of `ds` (one `H5Dwrite` over the whole extent)
/// from `data`, values of the memory type `mem`.
///
/// # Safety
/// `data` points to as many values of `mem` as `ds` has elements.
pub(crate) unsafe fn write_whole(
    ds: &Dataset,
    mem: hid_t,
    data: *const std::ffi::c_void,
    path: impl At,
) -> Result<()> {
    super::capture::settle(ds, path)?;
    let xfer = write_xfer(ds, path)?;
    // SAFETY: the caller's guarantee on `data`; valid ids, under the lock.
    call(path, || unsafe {
        h5d::H5Dwrite(ds.id(), mem, H5S_ALL, H5S_ALL, xfer_id(&xfer), data)
    })?;
    Ok(())
}

/// The transfer list of h5vec's writes to `ds`: HDF5's default, or a
/// collective one in a file `h5vec::mpi` opened (`raw::mpio::write_xfer`).
#[cfg(feature = "mpi")]
fn write_xfer(ds: &Dataset, path: impl At) -> Result<Option<super::ffi::Owned>> {
    super::mpifiles::write_xfer(ds.id(), path)
}

/// HDF5's default transfer list (`None`): no MPI in this build.
#[cfg(not(feature = "mpi"))]
#[allow(clippy::unnecessary_wraps)] // the same signature as the MPI build's
fn write_xfer(_ds: &Dataset, _path: impl At) -> Result<Option<super::ffi::Owned>> {
    Ok(None)
}

fn xfer_id(x: &Option<super::ffi::Owned>) -> hid_t {
    x.as_ref().map_or(H5P_DEFAULT, super::ffi::Owned::id)
}

/// Writes variable-length UTF-8 strings as rows `start..`: `bytes` holds the
/// strings back to back, each followed by a NUL; `starts` where each begins.
pub(crate) fn write_vlen_buffer(
    ds: &Dataset,
    start: u64,
    bytes: &[u8],
    starts: &[usize],
    path: impl At,
) -> Result<()> {
    let base = bytes.as_ptr();
    let ptrs: Vec<*const c_char> = starts
        .iter()
        .map(|&o| base.wrapping_add(o).cast())
        .collect();
    let mt = vlen_utf8(path)?;
    let rows = ptrs.len() as u64;
    let end = start
        .checked_add(rows)
        .ok_or_else(|| Error::invalid(path, "row count overflows"))?;
    set_rows(ds, end, &[], path)?;
    if rows == 0 {
        return Ok(());
    }
    // Variable-length data never takes the direct chunk path: one write.
    // SAFETY: ptrs holds starts.len() pointers to NUL-terminated strings inside `bytes`.
    unsafe { write_hyperslab(ds, mt.id(), start, rows, &[], ptrs.as_ptr().cast(), path) }
}

/// Writes variable-length UTF-8 strings (without NUL) as rows `start..`.
pub(crate) fn write_vlen_strings(
    ds: &Dataset,
    start: u64,
    strings: &[&str],
    path: impl At,
) -> Result<()> {
    let mut bytes = Vec::new();
    let mut starts = Vec::with_capacity(strings.len());
    for s in strings {
        starts.push(bytes.len());
        bytes.extend_from_slice(s.as_bytes());
        bytes.push(0);
    }
    write_vlen_buffer(ds, start, &bytes, &starts, path)
}

/// Reads rows `start..start + n` of a variable-length string dataset (the
/// one value of a scalar one). Invalid UTF-8 is an error naming the row.
pub(crate) fn read_vlen_strings(
    ds: &Dataset,
    start: u64,
    n: u64,
    path: impl At,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    read_vlen_each(ds, start, n, path, &mut |s| out.push(s.to_owned()))?;
    Ok(out)
}

/// Reads rows `start..start + n` of a variable-length string dataset (the
/// one value of a scalar one) and hands each row's text to `each`, in
/// order, without an allocation per row. Invalid UTF-8 is an error naming
/// the row (`each` is then not called for that row or any after it).
pub(crate) fn read_vlen_each(
    ds: &Dataset,
    start: u64,
    n: u64,
    path: impl At,
    each: &mut dyn FnMut(&str),
) -> Result<()> {
    let mt = vlen_utf8(path)?;
    let count = usize::try_from(n).map_err(|_| Error::invalid(path, "row range too large"))?;
    if count == 0 {
        return Ok(());
    }
    let mut ptrs: Vec<*mut c_char> = vec![std::ptr::null_mut(); count];
    // Damaged heap collections that HDF5 would loop on (SPEC.md section 7).
    super::gheap::check(ds, start, n, path)?;
    super::capture::settle(ds, path)?;
    super::chunks::check_checksummed_chunks(ds, start, n, path)?;
    sync(|| {
        let fs = whole_space(ds, path)?;
        if !ds.is_scalar() {
            row_selection(fs.id(), start, n, &[], path)?;
        }
        let ms = mem_space(n, &[], path)?;
        // SAFETY: `n` elements are selected and `ptrs` holds `n` pointers,
        // which HDF5 sets to strings it allocates (null for empty ones).
        let read = unsafe {
            h5d::H5Dread(
                ds.id(),
                mt.id(),
                ms.id(),
                fs.id(),
                H5P_DEFAULT,
                ptrs.as_mut_ptr().cast(),
            )
        };
        // SAFETY: frees the strings HDF5 allocated into `ptrs` (null ones
        // are skipped), once: every path below returns after this.
        let reclaim = |ptrs: &mut Vec<*mut c_char>| unsafe {
            super::compat::reclaim(mt.id(), ms.id(), H5P_DEFAULT, ptrs.as_mut_ptr().cast());
        };
        if read < 0 {
            // A read that fails part way (e.g. a damaged heap object) has
            // already allocated the strings before it: free them (the rest
            // are still null).
            reclaim(&mut ptrs);
        }
        check(path, read)?;
        let mut bad = None;
        for (i, &p) in ptrs.iter().enumerate() {
            if p.is_null() {
                each("");
                continue;
            }
            // SAFETY: a NUL-terminated string HDF5 allocated, alive until
            // the reclaim below.
            let b = unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes();
            match std::str::from_utf8(b) {
                Ok(s) => each(s),
                Err(_) => {
                    bad = Some(i);
                    break;
                }
            }
        }
        reclaim(&mut ptrs);
        match bad {
            Some(i) => Err(Error::invalid(
                path.place().element(start + i as u64),
                "string is not valid UTF-8",
            )),
            None => Ok(()),
        }
    })
}

/// How a dataset is stored, as [`storage`] reads it.
pub(crate) struct Storage {
    /// The maximum extent per axis (`None`: unlimited).
    pub(crate) max_shape: Vec<Option<u64>>,
    /// The chunk shape, for chunked datasets.
    pub(crate) chunks: Option<Vec<u64>>,
    /// Bytes the dataset's values take in the file (`H5Dget_storage_size`:
    /// allocated chunks after filters, or the contiguous block).
    pub(crate) stored_bytes: u64,
}

/// The maximum extent, chunk shape and stored bytes of `ds`, from its
/// dataspace, creation property list and storage size (no value is read).
pub(crate) fn storage(ds: &Dataset, path: impl At) -> Result<Storage> {
    use hdf5_sys::h5d::H5D_layout_t;
    use hdf5_sys::h5p;
    // SAFETY: a valid dataset id; the space and the property list are owned
    // by `Owned`s; `dims`, `max` and `chunk` have room for HDF5's largest
    // rank (32), and rank and chunk rank are checked against it.
    sync(|| unsafe {
        let space = super::ffi::Owned::new(path, h5d::H5Dget_space(ds.id()))?;
        let rank = check(path, h5s::H5Sget_simple_extent_ndims(space.id()))?;
        let rank = usize::try_from(rank).unwrap_or(0).min(32);
        let mut dims = [0 as hsize_t; 32];
        let mut max = [0 as hsize_t; 32];
        if rank > 0 {
            check(
                path,
                h5s::H5Sget_simple_extent_dims(space.id(), dims.as_mut_ptr(), max.as_mut_ptr()),
            )?;
        }
        let max_shape = max[..rank]
            .iter()
            .map(|&m| (m != h5s::H5S_UNLIMITED).then_some(m))
            .collect();
        let dcpl = super::ffi::Owned::new(path, h5d::H5Dget_create_plist(ds.id()))?;
        let chunks = if h5p::H5Pget_layout(dcpl.id()) == H5D_layout_t::H5D_CHUNKED {
            let mut chunk = [0 as hsize_t; 32];
            let n = h5p::H5Pget_chunk(dcpl.id(), 32, chunk.as_mut_ptr());
            (1..=32).contains(&n).then(|| chunk[..n as usize].to_vec())
        } else {
            None
        };
        let stored_bytes = chunks
            .as_deref()
            .and_then(|c| chunk_bytes(ds, &dims[..rank], c))
            .unwrap_or_else(|| h5d::H5Dget_storage_size(ds.id()));
        Ok(Storage {
            max_shape,
            chunks,
            stored_bytes,
        })
    })
}

/// Most chunk index lookups [`chunk_bytes`] makes.
const MAX_CHUNK_LOOKUPS: u64 = 1 << 20;

/// The stored bytes of a chunked dataset of extent `dims` and chunk shape
/// `chunk` whose chunks span every axis but the first (h5vec's layout), by
/// one index lookup per chunk the extent covers. `H5Dget_storage_size`
/// instead iterates every index entry the chunk index header claims, and a
/// damaged extensible array header claims billions
/// (`tests/fuzz/README.md`). `None` for other layouts or more than
/// [`MAX_CHUNK_LOOKUPS`] chunks (then HDF5's iteration, whose cost the
/// extent itself justifies).
fn chunk_bytes(ds: &Dataset, dims: &[hsize_t], chunk: &[hsize_t]) -> Option<u64> {
    let (&rows, &c0) = (dims.first()?, chunk.first()?);
    let spans = dims.len() == chunk.len() && dims[1..].iter().zip(&chunk[1..]).all(|(d, c)| c >= d);
    if !spans || c0 == 0 {
        return None;
    }
    let n = rows.div_ceil(c0);
    if n > MAX_CHUNK_LOOKUPS {
        return None;
    }
    Some((0..n).fold(0u64, |a, k| {
        let size = super::chunks::stored_chunk(ds, k * c0).map_or(0, |(_, s)| s);
        a.saturating_add(size)
    }))
}
