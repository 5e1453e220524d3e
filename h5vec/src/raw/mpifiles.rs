//! Which files `crate::mpi` opened with the MPI-IO driver, and the
//! collective transfer list their writes take (feature `mpi`). A leaf of
//! `raw/`: the row writers and the heap reader ask it.

use hdf5_sys::h5p::{H5FD_mpio_xfer_t, H5Pcreate, H5Pset_dxpl_mpio, H5P_CLS_DATASET_XFER};

use super::ffi::{check, sync, Owned};
use crate::error::{At, Result};

/// Serial numbers (`H5Fget_fileno`) of the files opened with the MPI-IO
/// driver through [`crate::mpi`]. Reading a file's access list back is a
/// collective call there (HDF5 duplicates the communicator), so the code
/// that asks which driver a file uses (the heap check reads sec2 files'
/// bytes itself) asks this list first. Serial numbers are never reused
/// while the library lives.
static MPI_FILES: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// Whether [`MPI_FILES`] ever got a file: every write asks [`is_mpio`], which
/// then takes no lock and makes no HDF5 call in a process that opened none
/// (the untrusted check's forked child, any serial program).
static ANY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that `file` uses the MPI-IO driver.
pub(crate) fn register(file: &hdf5::File) {
    // SAFETY: a valid file id, under the lock.
    if let Some(n) = sync(|| unsafe { super::compat::fileno(file.id()) }) {
        MPI_FILES.lock().unwrap_or_else(|e| e.into_inner()).push(n);
        ANY.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// Whether the file of the object `id` was opened through [`crate::mpi`].
pub(crate) fn is_mpio(id: hdf5_sys::h5i::hid_t) -> bool {
    if !ANY.load(std::sync::atomic::Ordering::Acquire) {
        return false;
    }
    // SAFETY: any id (an invalid one gives None), under the lock.
    let Some(n) = sync(|| unsafe { super::compat::fileno(id) }) else {
        return false;
    };
    MPI_FILES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&n)
}

/// A transfer property list for collective MPI-IO writes.
pub(crate) fn collective_xfer(at: impl At) -> Result<Owned> {
    xfer(H5FD_mpio_xfer_t::H5FD_MPIO_COLLECTIVE, at)
}

/// A transfer list for independent I/O (each rank its own writes).
pub(crate) fn independent_xfer(at: impl At) -> Result<Owned> {
    xfer(H5FD_mpio_xfer_t::H5FD_MPIO_INDEPENDENT, at)
}

/// A transfer list of the MPI-IO transfer `mode`.
fn xfer(mode: H5FD_mpio_xfer_t, at: impl At) -> Result<Owned> {
    // SAFETY: a fresh transfer list, owned by the `Owned` at once; under
    // the lock.
    sync(|| unsafe {
        let dxpl = Owned::new(at, H5Pcreate(*H5P_CLS_DATASET_XFER))?;
        check(at, H5Pset_dxpl_mpio(dxpl.id(), mode))?;
        Ok(dxpl)
    })
}

/// The transfer list of h5vec's ordinary writes to the dataset `ds`:
/// `None` (HDF5's default) except in a file opened through [`crate::mpi`],
/// where every rank makes the same writes while creating a vector (a
/// list's first `OFFSETS` entry, a checksummed schema) and they must be
/// collective (HDF5 refuses independent writes through filters).
pub(crate) fn write_xfer(ds: hdf5_sys::h5i::hid_t, at: impl At) -> Result<Option<Owned>> {
    if is_mpio(ds) {
        collective_xfer(at).map(Some)
    } else {
        Ok(None)
    }
}
