//! The parallel HDF5 calls of [`crate::mpi`] (feature `mpi`, issue 32,
//! compiled only when the HDF5 found is parallel: cfg `hdf5_parallel`):
//! files opened with the MPI-IO driver, and rows `offset..offset + n` of a
//! 1-D dataset written by every rank of a communicator in one collective
//! `H5Dwrite` (MPI-IO collective transfer).

use hdf5::{Dataset, Datatype, H5Type};
use hdf5_sys::h5::herr_t;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d::{H5Dget_space, H5Dwrite};
use hdf5_sys::h5f::{H5Fcreate, H5Fopen, H5F_ACC_RDWR, H5F_ACC_TRUNC};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::{
    H5FD_mpio_xfer_t, H5Pcreate, H5Pset_dxpl_mpio, H5P_CLS_DATASET_XFER, H5P_CLS_FILE_ACCESS,
    H5P_DEFAULT,
};
use hdf5_sys::h5s::{H5S_seloper_t, H5Screate_simple, H5Sselect_hyperslab, H5Sselect_none};

use super::ffi::{check, sync, Owned};
use crate::error::{At, Context, Error, Result};

unsafe extern "C" {
    // Public parallel HDF5 API (H5FDmpio.h), bound by hdf5-metno-sys only
    // with its `mpio` feature, which it refuses together with `static`.
    fn H5Pset_fapl_mpio(
        fapl_id: hid_t,
        comm: ::mpi::ffi::MPI_Comm,
        info: ::mpi::ffi::MPI_Info,
    ) -> herr_t;
}

/// Creates (truncates) `name`, or opens it read-write, with the MPI-IO
/// driver on `comm`. Collective over `comm`.
pub(crate) fn open_mpio(
    name: &std::ffi::CStr,
    create: bool,
    comm: ::mpi::ffi::MPI_Comm,
    at: impl At,
) -> Result<hdf5::File> {
    // SAFETY: a fresh property list owned by an `Owned`; `comm` is a live
    // communicator (HDF5 duplicates it); MPI's null info object; a
    // NUL-terminated name; the new file id is owned by the returned
    // `File`; under the lock.
    sync(|| unsafe {
        let fapl = Owned::new(at, H5Pcreate(*H5P_CLS_FILE_ACCESS))?;
        check(
            at,
            H5Pset_fapl_mpio(fapl.id(), comm, ::mpi::ffi::RSMPI_INFO_NULL),
        )?;
        let id = if create {
            H5Fcreate(name.as_ptr(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id())
        } else {
            H5Fopen(name.as_ptr(), H5F_ACC_RDWR, fapl.id())
        };
        let id = check(at, id)?;
        hdf5::from_id::<hdf5::File>(id).at(at)
    })
}

/// Writes `rows` at rows `offset..offset + rows.len()` of the 1-D dataset
/// `ds` with a collective transfer. Collective: every rank of the file's
/// communicator calls it (a rank with no rows selects nothing).
pub(crate) fn write_rows_collective<T: H5Type>(
    ds: &Dataset,
    offset: u64,
    rows: &[T],
    at: impl At,
) -> Result<()> {
    let mem_type = Datatype::from_type::<T>().map_err(|e| Error::hdf5(at, e))?;
    let n = rows.len() as hsize_t;
    // SAFETY: every id is fresh and owned by an `Owned`; the hyperslab is
    // `n` rows at `offset` of a 1-D space (HDF5 checks it against the
    // extent); the memory space has `max(n, 1)` elements of `T` and
    // selects `n` of them, all in `rows` (nothing is read from it when
    // `n` is 0); under the lock.
    sync(|| unsafe {
        let dxpl = Owned::new(at, H5Pcreate(*H5P_CLS_DATASET_XFER))?;
        check(
            at,
            H5Pset_dxpl_mpio(dxpl.id(), H5FD_mpio_xfer_t::H5FD_MPIO_COLLECTIVE),
        )?;
        let fspace = Owned::new(at, H5Dget_space(ds.id()))?;
        let dims = [n.max(1)];
        let mspace = Owned::new(at, H5Screate_simple(1, dims.as_ptr(), std::ptr::null()))?;
        if n == 0 {
            check(at, H5Sselect_none(fspace.id()))?;
            check(at, H5Sselect_none(mspace.id()))?;
        } else {
            let start = [offset as hsize_t];
            let count = [n];
            check(
                at,
                H5Sselect_hyperslab(
                    fspace.id(),
                    H5S_seloper_t::H5S_SELECT_SET,
                    start.as_ptr(),
                    std::ptr::null(),
                    count.as_ptr(),
                    std::ptr::null(),
                ),
            )?;
        }
        check(
            at,
            H5Dwrite(
                ds.id(),
                mem_type.id(),
                mspace.id(),
                fspace.id(),
                dxpl.id(),
                rows.as_ptr().cast(),
            ),
        )
        .map(drop)
    })
}
