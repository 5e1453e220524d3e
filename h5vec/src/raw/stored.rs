//! What a dataset stores, as the bounds of `crate::limits` need to know
//! it (SPEC.md section 7): the rows its storage covers, the shape of the
//! chunk a filtered dataset decodes whole, and whether a number type
//! converts to a Rust type exactly.

use hdf5::Dataset;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d::{self, H5D_layout_t};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p;
use hdf5_sys::h5t::{self, H5T_class_t};

use super::ffi::{check, sync, Owned};
use super::types::{dataset_type, ieee_f16le, TypeInfo};
use crate::error::{At, Result};

/// The chunk shape (in elements) and element size (in bytes) of the
/// dataset `did` (creation property list `dcpl`) if it is filtered and
/// chunked with 1 to 32 dimensions; `None` otherwise or if HDF5 cannot
/// say. An element size HDF5 cannot read is 0. Reads the property list
/// and the type only.
pub(crate) fn filtered_chunk(did: hid_t, dcpl: hid_t) -> Option<(Vec<u64>, u64)> {
    // SAFETY: (whole block) HDF5 checks the ids it is given; `dims` has
    // room for the 32 extents asked for; the type is owned by an `Owned`.
    sync(|| unsafe {
        if h5p::H5Pget_nfilters(dcpl) <= 0 {
            return None;
        }
        let mut dims = [0 as hsize_t; 32];
        let rank = h5p::H5Pget_chunk(dcpl, 32, dims.as_mut_ptr());
        if !(1..=32).contains(&rank) {
            return None;
        }
        let dims = dims[..rank as usize].to_vec();
        let ft = Owned::ok(h5d::H5Dget_type(did))?;
        let elem = h5t::H5Tget_size(ft.id()) as u64;
        Some((dims, elem))
    })
}

/// An upper bound on the leading-dimension rows of `ds` (of extent
/// `shape`) that the file stores: the whole extent for compact and
/// allocated contiguous storage, none for contiguous storage never written,
/// and for chunked storage the rows the allocated chunks can cover. Rows
/// past it read as fill values: data nobody wrote.
///
/// External and virtual storage are other rules' business (section 7):
/// they count as the extent here.
pub(crate) fn stored_rows(ds: &Dataset, shape: &[u64], path: impl At) -> Result<u64> {
    let extent = shape.first().copied().unwrap_or(1);
    // SAFETY: a valid dataset id; the property list is owned by an `Owned`
    // and valid while `stored_rows_in` reads it, under the lock.
    sync(|| unsafe {
        let dcpl = Owned::new(path, h5d::H5Dget_create_plist(ds.id()))?;
        stored_rows_in(ds, dcpl.id(), shape, extent, path)
    })
}

/// [`stored_rows`] with the dataset's creation property list.
///
/// # Safety
/// The caller holds the HDF5 lock and `dcpl` is a valid dataset creation
/// property list.
unsafe fn stored_rows_in(
    ds: &Dataset,
    dcpl: i64,
    shape: &[u64],
    extent: u64,
    path: impl At,
) -> Result<u64> {
    // SAFETY: (whole body) `ds` and `dcpl` are valid ids and the caller
    // holds the lock; `dims` has room for the 32 extents asked for, `n` is an
    // output value, and the file space is owned by an `Owned`.
    unsafe {
        match h5p::H5Pget_layout(dcpl) {
            H5D_layout_t::H5D_COMPACT => Ok(extent),
            H5D_layout_t::H5D_CONTIGUOUS => {
                if h5p::H5Pget_external_count(dcpl) > 0 || h5d::H5Dget_storage_size(ds.id()) > 0 {
                    Ok(extent)
                } else {
                    Ok(0)
                }
            }
            H5D_layout_t::H5D_CHUNKED => {
                let mut dims = [0 as hsize_t; 32];
                let rank = h5p::H5Pget_chunk(dcpl, 32, dims.as_mut_ptr());
                if rank < 1 || rank as usize != shape.len().max(1) {
                    return Ok(extent);
                }
                // Chunks per slab of `dims[0]` rows.
                let mut per_slab: u64 = 1;
                for (i, &d) in shape.iter().enumerate().skip(1) {
                    let c = dims[i].max(1);
                    per_slab = per_slab.saturating_mul(d.div_ceil(c));
                }
                if per_slab == 0 {
                    return Ok(extent);
                }
                let fs = Owned::new(path, h5d::H5Dget_space(ds.id()))?;
                let mut n: hsize_t = 0;
                check(path, h5d::H5Dget_num_chunks(ds.id(), fs.id(), &mut n))?;
                let slabs = n.div_ceil(per_slab);
                Ok(extent.min(slabs.saturating_mul(dims[0].max(1))))
            }
            _ => Ok(extent),
        }
    }
}

/// Whether the number dataset `ds` (of type `info`) stores a standard
/// integer (every bit used, none padding) or an IEEE float: a type HDF5
/// converts to the Rust type (and back) keeping every value exactly.
/// Other classes are standard here.
pub(crate) fn is_standard_number(ds: &Dataset, info: &TypeInfo, path: impl At) -> Result<bool> {
    let dt = dataset_type(ds, path)?;
    // SAFETY: these only read a valid datatype and the predefined IEEE types.
    Ok(sync(|| unsafe {
        let t = dt.id();
        match info.class {
            H5T_class_t::H5T_INTEGER => {
                h5t::H5Tget_precision(t) == info.size * 8 && h5t::H5Tget_offset(t) == 0
            }
            H5T_class_t::H5T_FLOAT => {
                let std: &[i64] = match info.size {
                    2 => &[ieee_f16le()],
                    4 => &[*h5t::H5T_IEEE_F32LE, *h5t::H5T_IEEE_F32BE],
                    8 => &[*h5t::H5T_IEEE_F64LE, *h5t::H5T_IEEE_F64BE],
                    _ => &[],
                };
                std.iter().any(|&s| h5t::H5Tequal(t, s) > 0)
            }
            _ => true,
        }
    }))
}

/// Whether a 1-byte column's type is exactly UInt8 (blob `bytes`, VLS
/// `heap`, list `CHARS`): a signed byte would be converted, and every byte
/// of 0x80 or more would read as 0.
pub(crate) fn is_uint8(t: &TypeInfo) -> bool {
    t.class == H5T_class_t::H5T_INTEGER && t.size == 1 && !t.signed
}
