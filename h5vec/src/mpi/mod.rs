//! Many MPI ranks, one vector (feature `mpi`, issue 32; a prototype).
//!
//! Every rank of a communicator opens the same file with HDF5's MPI-IO
//! driver ([`create_file`], [`open_file_rw`]) and passes its own rows to
//! [`save_vector`]; the vector holds them in rank order (each rank's
//! offset is the exclusive scan of the counts). The file is a normal
//! h5vec file: serial h5vec, h5py and the Python package read it as if
//! one process had saved the concatenated rows.
//!
//! Every function here is collective: all ranks call it, in the same
//! order, with the same `name`.
//!
//! Prototype limits: only vectors whose rows are one HDF5 scalar column
//! (`f64`, `i32`, ...; one dataset `data/values`); the vector's tree is
//! made by every rank running the serial save of an empty vector (the same
//! metadata calls on every rank, as parallel HDF5 requires), then the
//! rows are written collectively and `count` last. The chunk index made
//! for the empty vector is left as it is (stale: its recorded row count
//! is 0).

#[cfg(hdf5_parallel)]
use ::mpi::collective::{CommunicatorCollectives, SystemOperation};
use ::mpi::raw::AsRaw;
use ::mpi::topology::Communicator;

use crate::error::{Error, Result};
use crate::{H5Vector, SaveOptions};

/// Creates (truncates) `path` for parallel writes by every rank of `comm`
/// (MPI-IO driver). Collective.
pub fn create_file<C: Communicator + AsRaw<Raw = ::mpi::ffi::MPI_Comm>>(
    path: impl AsRef<std::path::Path>,
    comm: &C,
) -> Result<hdf5::File> {
    open(path.as_ref(), true, comm)
}

/// Opens the existing file `path` read-write for parallel writes by every
/// rank of `comm` (MPI-IO driver). Collective.
pub fn open_file_rw<C: Communicator + AsRaw<Raw = ::mpi::ffi::MPI_Comm>>(
    path: impl AsRef<std::path::Path>,
    comm: &C,
) -> Result<hdf5::File> {
    open(path.as_ref(), false, comm)
}

fn open<C: Communicator + AsRaw<Raw = ::mpi::ffi::MPI_Comm>>(
    path: &std::path::Path,
    create: bool,
    comm: &C,
) -> Result<hdf5::File> {
    let at = path.display().to_string();
    #[cfg(hdf5_parallel)]
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| Error::invalid(at.as_str(), "a path with a NUL byte"))?;
        crate::raw::mpio::open_mpio(&name, create, comm.as_raw(), at.as_str())
    }
    #[cfg(not(hdf5_parallel))]
    {
        let _ = (create, comm);
        Err(serial_hdf5(at.as_str()))
    }
}

/// The error of `h5vec::mpi` in a build against a serial HDF5.
#[cfg(not(hdf5_parallel))]
fn serial_hdf5(at: &str) -> Error {
    Error::invalid(
        at,
        "this h5vec is built against a serial HDF5: build the `mpi` feature with \
         HDF5_DIR set to a parallel HDF5 (Debian 12: /usr/lib/x86_64-linux-gnu/hdf5/openmpi)",
    )
}

#[cfg(hdf5_parallel)]
/// This rank's first row and the vector's length: the exclusive scan and
/// the sum of every rank's `n`. Collective.
fn offsets<C: Communicator>(n: u64, comm: &C) -> (u64, u64) {
    let mut before = 0u64;
    comm.exclusive_scan_into(&n, &mut before, SystemOperation::sum());
    // MPI leaves rank 0's result undefined.
    if comm.rank() == 0 {
        before = 0;
    }
    let mut total = 0u64;
    comm.all_reduce_into(&n, &mut total, SystemOperation::sum());
    (before, total)
}

/// Saves a new vector `name` in `file` from every rank's `local_rows`, in
/// rank order. Collective; `count` is written last, after every rank's
/// rows.
pub fn save_vector<T, C>(file: &hdf5::File, name: &str, local_rows: &[T], comm: &C) -> Result<()>
where
    T: H5Vector + hdf5::H5Type,
    C: Communicator,
{
    save_vector_with(file, name, local_rows, &SaveOptions::default(), comm)
}

/// [`save_vector`] with options (the same on every rank). Compression
/// goes through HDF5's parallel filtered writes (collective only).
#[cfg(hdf5_parallel)]
pub fn save_vector_with<T, C>(
    file: &hdf5::File,
    name: &str,
    local_rows: &[T],
    opts: &SaveOptions,
    comm: &C,
) -> Result<()>
where
    T: H5Vector + hdf5::H5Type,
    C: Communicator,
{
    let (offset, total) = offsets(local_rows.len() as u64, comm);
    // The vector's tree, by the same calls on every rank.
    crate::save_vector_with::<T>(file, name, &[], opts)?;
    let path = format!("{name}/data/values");
    let ds = file
        .dataset(&path)
        .map_err(|e| Error::hdf5(path.as_str(), e))?;
    if ds.ndim() != 1 {
        return Err(Error::invalid(
            path.as_str(),
            "h5vec::mpi saves only vectors of one scalar column (prototype)",
        ));
    }
    ds.resize(total as usize)
        .map_err(|e| Error::hdf5(path.as_str(), e))?;
    crate::raw::mpio::write_rows_collective(&ds, offset, local_rows, path.as_str())?;
    comm.barrier();
    let count_path = format!("{name}/metadata/count");
    let count = file
        .dataset(&count_path)
        .map_err(|e| Error::hdf5(count_path.as_str(), e))?;
    count
        .write_scalar(&(total as i64))
        .map_err(|e| Error::hdf5(count_path.as_str(), e))?;
    file.flush().map_err(|e| Error::hdf5(name, e))
}

/// [`save_vector`] with options: in a build against a serial HDF5, an
/// error (nothing is written).
#[cfg(not(hdf5_parallel))]
pub fn save_vector_with<T, C>(
    _file: &hdf5::File,
    name: &str,
    _local_rows: &[T],
    _opts: &SaveOptions,
    _comm: &C,
) -> Result<()>
where
    T: H5Vector + hdf5::H5Type,
    C: Communicator,
{
    Err(serial_hdf5(name))
}
