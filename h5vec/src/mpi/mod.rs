//! Many MPI ranks, one vector (feature `mpi`, SPEC.md section 16).
//!
//! Every rank of a communicator opens the same file with HDF5's MPI-IO
//! driver ([`create_file`], [`open_file_rw`]) and passes its own rows to
//! [`save_vector`] or [`append_vector`]; the vector holds them in rank
//! order (each rank's first row is the exclusive scan of the ranks' row
//! counts). The file is a normal h5vec file: serial h5vec, h5py and the
//! Python package read it exactly as if one process had saved the rows of
//! rank 0, then rank 1, and so on, with the same options.
//!
//! ```no_run
//! use h5vec::H5Vector;
//! use mpi::traits::*;
//!
//! #[derive(H5Vector, Clone, Debug, PartialEq)]
//! struct Particle { id: u64, x: [f64; 3], species: String, hits: Vec<u32> }
//!
//! # fn main() -> h5vec::Result<()> {
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let rank = world.rank() as u64;
//! let mine: Vec<Particle> = (0..1000)
//!     .map(|i| Particle { id: rank * 1000 + i, x: [0.0; 3], species: "e-".into(), hits: vec![] })
//!     .collect();
//! let file = h5vec::mpi::create_file("particles.h5", &world)?;
//! h5vec::mpi::save_vector(&file, "particles", &mine, &world)?;
//! // Each rank reads its own part back (no collective call).
//! let back: Vec<Particle> =
//!     h5vec::mpi::load_range(&file, "particles", rank * 1000..(rank + 1) * 1000)?;
//! assert_eq!(back, mine);
//! # Ok(()) }
//! ```
//!
//! **Every function here but [`load_range`] is collective**: all ranks
//! call it, in the same order, with the same name, type and options (a
//! rank may pass no rows). Before anything is written, the ranks compare
//! their calls (the function, the name, the Rust type, its schema, the
//! options) and one rank's failure to encode its rows: a difference or a
//! failure is an error on every rank, naming the ranks, and nothing is
//! written. What MPI cannot detect: a rank that never makes the call (the
//! others wait for it), and an HDF5 error during the collective writes on
//! some ranks only (a full disk seen by one rank): use your MPI's timeout
//! or abort on error. An append to a vector one process saved is refused
//! on every rank (parallel HDF5 1.10 cannot grow its datasets: SPEC.md
//! section 16).
//!
//! How it writes: each rank encodes its rows with the serial save into a
//! file in memory (every kind's encoder, unchanged), then the ranks walk
//! the schema tree together, and each dataset of the vector gets its new
//! extent and this rank's rows at its offset: collective writes where the
//! dataset has filters (HDF5's parallel filtered writes: deflate, with
//! h5vec's compressor in HDF5's filter, LZF, Blosc), else each rank
//! writes its own contiguous rows; datasets that point into others (list `OFFSETS`, blob `stops`, string pointers, union
//! `INDEX`) are moved by the rank's offset in what they point into. Plain
//! rows (numbers, arrays, records and options of them) after a first
//! batch are written as they are encoded, each rank on its own while the
//! others do the same. A new vector is linked under its name only once its rows
//! and `count` are written; an append writes every rank's rows, flushes,
//! then writes `count` and flushes again (SPEC.md section 8): a job killed
//! before then leaves the vector as it was. h5vec's flushes do not `fsync`
//! (as a serial save's do not): h5vec defines `MPI_File_sync` through
//! MPI's profiling interface and skips the calls HDF5 makes inside them.
//!
//! Differences from a serial save (SPEC.md section 16): strings are stored
//! in the compressed layout (parallel HDF5 cannot write variable-length
//! data, so `SaveOptions::vls_strings(false)` and `#[h5vec(vlen_strings)]`
//! fields are refused), vectors get no statistics, and an append removes
//! the vector's statistics and search indexes (they would be stale).

mod comm;
mod forward;
mod local;
mod merge;
mod steps;
mod writer;

use std::path::Path;

use ::mpi::raw::AsRaw;
use ::mpi::topology::Communicator;
use hdf5::Group;

use self::steps::{append_local, mpi_options, prepare, save_local};
use crate::codec::H5Vector;
use crate::error::{Context, Place, Result};
use crate::options::SaveOptions;

pub use self::writer::VectorWriter;

/// Creates (truncates) `path` for parallel writes by every rank of `comm`
/// (MPI-IO driver, metadata written collectively), with the properties of
/// [`crate::create_file`]. Collective.
pub fn create_file<C>(path: impl AsRef<Path>, comm: &C) -> Result<hdf5::File>
where
    C: Communicator + AsRaw<Raw = ::mpi::ffi::MPI_Comm>,
{
    crate::raw::mpio::use_fast_deflate(crate::pipeline::codecs::zlib_stream);
    let raw = comm.as_raw();
    let file = crate::file::create_with_access(
        path.as_ref(),
        hdf5::file::LibraryVersion::V18,
        |fapl, at| crate::raw::mpio::set_fapl_mpio(fapl, raw, at),
    )?;
    crate::raw::mpifiles::register(&file);
    Ok(file)
}

/// Opens the existing file `path` read-write for parallel writes by every
/// rank of `comm` (MPI-IO driver, metadata written collectively). Collective.
pub fn open_file_rw<C>(path: impl AsRef<Path>, comm: &C) -> Result<hdf5::File>
where
    C: Communicator + AsRaw<Raw = ::mpi::ffi::MPI_Comm>,
{
    crate::raw::mpio::use_fast_deflate(crate::pipeline::codecs::zlib_stream);
    let path = path.as_ref();
    let at = &Place::new("$", path.display().to_string());
    let name = crate::file::c_path(path, at)?;
    let fapl = hdf5::plist::FileAccess::build().finish().at(at)?;
    crate::raw::mpio::set_fapl_mpio(&fapl, comm.as_raw(), at)?;
    let file = crate::raw::mpio::open_rw(&name, &fapl, at)?;
    crate::raw::mpifiles::register(&file);
    crate::file::opened_rw(&file);
    Ok(file)
}

/// Saves a new vector `name` in `parent` from every rank's `local_rows`,
/// in rank order, with default options. Collective.
///
/// ```no_run
/// # fn main() -> h5vec::Result<()> {
/// # use mpi::traits::*;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let file = h5vec::mpi::create_file("xs.h5", &world)?;
/// let mine: Vec<f64> = vec![world.rank() as f64; 3];
/// h5vec::mpi::save_vector(&file, "xs", &mine, &world)?;
/// // 2 ranks: [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
/// # Ok(()) }
/// ```
pub fn save_vector<T, C>(parent: &Group, name: &str, local_rows: &[T], comm: &C) -> Result<()>
where
    T: H5Vector,
    C: Communicator,
{
    save_vector_with(parent, name, local_rows, &SaveOptions::default(), comm)
}

/// [`save_vector`] with options, the same on every rank (compression
/// through HDF5's parallel filtered writes; `replace` as in a serial
/// save). Collective.
pub fn save_vector_with<T, C>(
    parent: &Group,
    name: &str,
    local_rows: &[T],
    opts: &SaveOptions,
    comm: &C,
) -> Result<()>
where
    T: H5Vector,
    C: Communicator,
{
    let opts = mpi_options(opts);
    let rows = prepare("save_vector", name, local_rows, &opts, comm)?;
    save_local::<T, C>(parent, name, rows, &opts, comm, false).map(drop)
}

/// Appends every rank's `local_rows` to vector `name`, in rank order,
/// after its committed rows. Collective.
///
/// ```no_run
/// # fn main() -> h5vec::Result<()> {
/// # use mpi::traits::*;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let file = h5vec::mpi::open_file_rw("xs.h5", &world)?;
/// h5vec::mpi::append_vector(&file, "xs", &[world.rank() as f64], &world)?;
/// # Ok(()) }
/// ```
pub fn append_vector<T, C>(parent: &Group, name: &str, local_rows: &[T], comm: &C) -> Result<()>
where
    T: H5Vector,
    C: Communicator,
{
    append_vector_with(parent, name, local_rows, &SaveOptions::default(), comm)
}

/// [`append_vector`] with options: those that shape the layout (strings)
/// must be the vector's. Collective.
pub fn append_vector_with<T, C>(
    parent: &Group,
    name: &str,
    local_rows: &[T],
    opts: &SaveOptions,
    comm: &C,
) -> Result<()>
where
    T: H5Vector,
    C: Communicator,
{
    let opts = mpi_options(opts);
    let rows = prepare("append_vector", name, local_rows, &opts, comm)?;
    append_local(parent, name, rows, comm).map(drop)
}

/// Rows `range` of vector `name`, as [`crate::load_range`] reads them: for
/// each rank to read its own part of a file opened with [`create_file`]
/// or [`open_file_rw`] (or any file). Not collective.
pub fn load_range<T: H5Vector>(
    parent: &Group,
    name: &str,
    range: std::ops::Range<u64>,
) -> Result<Vec<T>> {
    crate::vector::load_range(parent, name, range)
}
