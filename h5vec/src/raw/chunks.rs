//! Direct chunk I/O: stored chunks read and written as they are on disk,
//! without HDF5's filter pipeline, chunk cache or type conversion (used by
//! [`crate::pipeline`] and by the crash-safety repairs in `durability`).

use std::ffi::c_uint;

use hdf5::Dataset;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d;
use hdf5_sys::h5p::H5P_DEFAULT;

use super::ffi::sync;
use crate::error::{At, Error, Result};

/// The offset of the chunk starting at row `row` (axis 0; the other axes
/// are 0), with room for any rank.
fn chunk_offset(row: u64) -> [hsize_t; 32] {
    let mut off = [0 as hsize_t; 32];
    off[0] = row;
    off
}

/// Where the chunk starting at row `row` is stored: `(filter mask, size)`,
/// or `None` if it is not allocated.
///
/// One lookup in the chunk index, as a read of the chunk would make
/// (`H5Dread_chunk` with no buffer returns the stored size and mask
/// without reading): constant time for the extensible and fixed array
/// indexes HDF5 1.10+ writes, logarithmic for version 1 B-trees.
/// `H5Dget_chunk_info_by_coord` would answer the same but walks the whole
/// index on every call, which makes reading every chunk quadratic.
pub(crate) fn stored_chunk(ds: &Dataset, row: u64) -> Option<(c_uint, hsize_t)> {
    super::capture::settle(ds, "$").ok()?;
    chunk_entry(ds, row).filter(|&(_, size)| size > 0)
}

/// The chunk index entry of the chunk starting at row `row`: `(filter
/// mask, stored size)`, a size of 0 included (a damaged entry); `None` if
/// the chunk is not allocated. One lookup, as [`stored_chunk`].
#[cfg(hdf5_2_0)]
fn chunk_entry(ds: &Dataset, row: u64) -> Option<(c_uint, hsize_t)> {
    let off = chunk_offset(row);
    let mut mask: u32 = 0;
    let mut size: usize = 0;
    // SAFETY: a valid dataset id; `off` has room for any rank; a null
    // buffer with a size of 0 asks only for the chunk's size and mask
    // (nothing is read).
    let r = sync(|| unsafe {
        h5d::H5Dread_chunk(
            ds.id(),
            H5P_DEFAULT,
            off.as_ptr(),
            &mut mask,
            std::ptr::null_mut(),
            &mut size,
        )
    });
    (r >= 0).then_some((mask, size as hsize_t))
}

/// As above, for HDF5 before 2.0 (`H5Dread_chunk` has no size argument
/// there): `H5Dget_chunk_info_by_coord` (1.10.5+), which walks the chunk
/// index on every call (slower for many chunks, same answer).
#[cfg(not(hdf5_2_0))]
fn chunk_entry(ds: &Dataset, row: u64) -> Option<(c_uint, hsize_t)> {
    // SAFETY: a valid dataset id, under the lock.
    sync(|| unsafe { chunk_info(ds.id(), row) })
}

/// `(filter mask, stored size)` of the chunk at row `row` of dataset `id`
/// (`None` if not allocated), by `H5Dget_chunk_info_by_coord`.
///
/// # Safety
/// `id` is a valid dataset id and the caller holds the HDF5 lock.
#[cfg(not(hdf5_2_0))]
unsafe fn chunk_info(id: hdf5_sys::h5i::hid_t, row: u64) -> Option<(c_uint, hsize_t)> {
    let off = chunk_offset(row);
    let mut mask: c_uint = 0;
    let mut addr: hdf5_sys::h5::haddr_t = hdf5_sys::h5::HADDR_UNDEF;
    let mut size: hsize_t = 0;
    // SAFETY: see the function's contract; `off` has room for any rank and
    // the output pointers are valid.
    let r = unsafe {
        h5d::H5Dget_chunk_info_by_coord(id, off.as_ptr(), &mut mask, &mut addr, &mut size)
    };
    (r >= 0 && addr != hdf5_sys::h5::HADDR_UNDEF).then_some((mask, size))
}

/// Reads the stored bytes of the chunk starting at row `row` into `buf`
/// (no filter run); `Some((len, filter mask))` if it fits.
#[cfg(hdf5_2_0)]
pub(crate) fn read_stored_chunk(ds: &Dataset, row: u64, buf: &mut [u8]) -> Option<(usize, c_uint)> {
    super::capture::settle(ds, "$").ok()?;
    let off = chunk_offset(row);
    let mut filters: u32 = 0;
    let mut len: usize = buf.len();
    // SAFETY: a valid dataset id; `buf` has `len` bytes of room (HDF5
    // writes only if the chunk fits); the other pointers are valid.
    let r = sync(|| unsafe {
        h5d::H5Dread_chunk(
            ds.id(),
            H5P_DEFAULT,
            off.as_ptr(),
            &mut filters,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    });
    (r >= 0 && len <= buf.len()).then_some((len, filters))
}

/// As above, for HDF5 before 2.0: the stored size first (HDF5 1.x's
/// `H5Dread_chunk` writes the whole chunk, whatever the buffer's size).
#[cfg(not(hdf5_2_0))]
pub(crate) fn read_stored_chunk(ds: &Dataset, row: u64, buf: &mut [u8]) -> Option<(usize, c_uint)> {
    super::capture::settle(ds, "$").ok()?;
    let off = chunk_offset(row);
    let mut filters: u32 = 0;
    // SAFETY: a valid dataset id, under the lock for both calls (the
    // chunk cannot change between them); HDF5 writes the chunk's stored
    // size, `len`, which was checked to fit in `buf`.
    sync(|| unsafe {
        let (_, size) = chunk_info(ds.id(), row)?;
        let len = usize::try_from(size).ok().filter(|&n| n <= buf.len())?;
        let r = h5d::H5Dread_chunk(
            ds.id(),
            H5P_DEFAULT,
            off.as_ptr(),
            &mut filters,
            buf.as_mut_ptr().cast(),
        );
        (r >= 0).then_some((len, filters))
    })
}

/// Writes ready-made chunks `k0, k0 + 1, ...` (chunk length `c` rows),
/// each with its filter mask.
pub(crate) fn write_chunks(
    ds: &Dataset,
    k0: u64,
    c: u64,
    chunks: &[(&[u8], c_uint)],
    path: impl At,
) -> Result<()> {
    // A rank's rows being encoded by `crate::mpi` are kept, not written.
    if super::capture::take_chunks(ds, k0, c, chunks, path)? {
        return Ok(());
    }
    super::capture::settle(ds, path)?;
    sync(|| {
        for (i, (data, mask)) in chunks.iter().enumerate() {
            let off = chunk_offset((k0 + i as u64) * c);
            // SAFETY: a valid dataset id; `data` holds `data.len()` bytes.
            let r = unsafe {
                h5d::H5Dwrite_chunk(
                    ds.id(),
                    H5P_DEFAULT,
                    *mask,
                    off.as_ptr(),
                    data.len(),
                    data.as_ptr().cast(),
                )
            };
            if r < 0 {
                return Err(Error::invalid(path, "direct chunk write failed"));
            }
        }
        Ok(())
    })
}

/// Most chunks [`check_checksummed_chunks`] looks up for one read: a read
/// through HDF5 of more chunks than this checks the first ones only (a
/// lookup costs about a microsecond; reads that large are rare on this
/// path, which serves pipelines h5vec does not decode itself).
const MAX_CHECKED_CHUNKS: u64 = 1 << 20;

/// Refuses a read of rows `start..start + rows` of `ds` through HDF5 when
/// one of their chunks, stored under a Fletcher32 filter that ran, holds
/// fewer than the checksum's 4 bytes: HDF5's filter subtracts 4 from the
/// stored size and reads past the buffer (a crash in
/// `H5_checksum_fletcher32`, HDF5 2.2.0), or whose filter mask says the
/// checksum was skipped (HDF5 would then not verify it; it never writes
/// such a chunk: the filter is mandatory). Nothing for datasets without
/// the filter (one property list query).
pub(crate) fn check_checksummed_chunks(
    ds: &Dataset,
    start: u64,
    rows: u64,
    path: impl At,
) -> Result<()> {
    if rows == 0 {
        return Ok(());
    }
    let Some(bit) = fletcher32_bit(ds) else {
        return Ok(());
    };
    let Some(c) = ds
        .chunk()
        .and_then(|c| c.first().copied())
        .map(|c| c as u64)
    else {
        return Ok(());
    };
    if c == 0 {
        return Ok(());
    }
    let (k0, k1) = (start / c, (start.saturating_add(rows) - 1) / c);
    for k in k0..=k1.min(k0.saturating_add(MAX_CHECKED_CHUNKS - 1)) {
        // An unallocated chunk is no entry: HDF5 reads fill values for it,
        // running no filter.
        let Some((mask, size)) = chunk_entry(ds, k * c) else {
            continue;
        };
        if mask & bit != 0 {
            return Err(Error::invalid(
                path,
                format!(
                    "the chunk of rows {}..{} is stored without its Fletcher32 checksum \
                     (filter mask {mask:#x})",
                    k.saturating_mul(c),
                    k.saturating_add(1).saturating_mul(c)
                ),
            ));
        }
        if size < 4 {
            return Err(Error::invalid(
                path,
                format!(
                    "the chunk of rows {}..{} is stored in {size} bytes, fewer than its 4-byte \
                     Fletcher32 checksum",
                    k.saturating_mul(c),
                    k.saturating_add(1).saturating_mul(c)
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `ds`'s pipeline has HDF5's Fletcher32 filter.
pub(crate) fn has_fletcher32(ds: &Dataset) -> bool {
    fletcher32_bit(ds).is_some()
}

/// The filter-mask bit of `ds`'s Fletcher32 filter, if its pipeline has one.
fn fletcher32_bit(ds: &Dataset) -> Option<u32> {
    let dcpl = ds.dcpl().ok()?;
    // SAFETY: a valid property list id under the lock; the output
    // arguments are valid for the sizes passed (no client data or name).
    sync(|| unsafe {
        let n = hdf5_sys::h5p::H5Pget_nfilters(dcpl.id());
        (0..n.clamp(0, 32)).find_map(|i| {
            let mut flags: c_uint = 0;
            let mut nelm: usize = 0;
            let mut cfg: c_uint = 0;
            let id = hdf5_sys::h5p::H5Pget_filter2(
                dcpl.id(),
                i as c_uint,
                &mut flags,
                &mut nelm,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                &mut cfg,
            );
            (id == hdf5_sys::h5z::H5Z_FILTER_FLETCHER32).then_some(1u32 << i)
        })
    })
}
