//! Dataspaces of row I/O: a dataset's file space with whole rows
//! selected, and memory spaces of whole rows. A leaf of `raw`: the row
//! readers and writers (`rows.rs`), the collective writes (`mpio.rs`) and
//! the captured rows' writes (`capture.rs`) use them.

use hdf5::Dataset;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5s::{self, H5S_seloper_t};

use super::ffi::{call, check, sync};
use crate::error::{At, Context, Result};

/// Selects rows `start..start + rows` (whole rows of shape `inner`) in the
/// dataspace `ds_space`.
pub(super) fn row_selection(
    ds_space: hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    path: impl At,
) -> Result<()> {
    let mut st = vec![start as hsize_t];
    st.extend(inner.iter().map(|_| 0 as hsize_t));
    let mut cnt = vec![rows as hsize_t];
    cnt.extend(inner.iter().map(|&d| d as hsize_t));
    // SAFETY: `st` and `cnt` hold one value per dimension of the dataset's
    // space (axis 0 and `inner`); null stride and block mean 1.
    call(path, || unsafe {
        h5s::H5Sselect_hyperslab(
            ds_space,
            H5S_seloper_t::H5S_SELECT_SET,
            st.as_ptr(),
            std::ptr::null(),
            cnt.as_ptr(),
            std::ptr::null(),
        )
    })?;
    Ok(())
}

/// The dataset's file space with rows `start..start + rows` (whole rows of
/// shape `inner`) selected.
pub(super) fn file_space(
    ds: &Dataset,
    start: u64,
    rows: u64,
    inner: &[u64],
    path: impl At,
) -> Result<hdf5::Dataspace> {
    let fs = whole_space(ds, path)?;
    row_selection(fs.id(), start, rows, inner, path)?;
    Ok(fs)
}

/// The dataset's file space, everything selected.
pub(super) fn whole_space(ds: &Dataset, path: impl At) -> Result<hdf5::Dataspace> {
    // SAFETY: a valid dataset id; the new space is owned by the `Dataspace`.
    sync(|| unsafe {
        hdf5::from_id::<hdf5::Dataspace>(check(path, h5d::H5Dget_space(ds.id()))?).at(path)
    })
}

/// A simple dataspace of shape `(rows, inner...)`.
pub(super) fn mem_space(rows: u64, inner: &[u64], path: impl At) -> Result<hdf5::Dataspace> {
    let mut dims = vec![rows as hsize_t];
    dims.extend(inner.iter().map(|&d| d as hsize_t));
    // SAFETY: `dims` holds `rank` extents (null: maximum = current); the new
    // space is owned by the `Dataspace`.
    sync(|| unsafe {
        let ms = check(
            path,
            h5s::H5Screate_simple(dims.len() as i32, dims.as_ptr(), std::ptr::null()),
        )?;
        hdf5::from_id::<hdf5::Dataspace>(ms).at(path)
    })
}
