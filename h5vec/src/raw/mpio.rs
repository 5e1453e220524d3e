//! The parallel HDF5 calls of [`crate::mpi`] (feature `mpi`, SPEC.md
//! section 16): files opened with the MPI-IO driver, and rows of a dataset
//! written by every rank of the file's communicator in one collective
//! `H5Dwrite` (MPI-IO collective transfer; HDF5's parallel filtered writes
//! when the dataset has filters).

use hdf5::{Dataset, Datatype};
use hdf5_sys::h5d::H5Dwrite;
use hdf5_sys::h5f::{H5Fopen, H5F_ACC_RDWR};
use hdf5_sys::h5p::{H5Pset_coll_metadata_write, H5Pset_fapl_mpio};
use hdf5_sys::h5s::H5Sselect_none;

use super::ffi::{check, sync};
use super::mpifiles::collective_xfer;
use super::podrows::plain_bytes;
use super::spaces::{file_space, mem_space, whole_space};
use crate::error::{At, Context, Error, Result};

/// Sets the MPI-IO driver on `comm` in the access list `fapl`, metadata
/// written collectively (HDF5's flush of its metadata cache, one rank
/// writing each piece). Metadata reads stay independent: h5vec's checks
/// read the file on every rank, and with collective reads any difference
/// in what the ranks' caches hold would leave one rank waiting.
pub(crate) fn set_fapl_mpio(
    fapl: &hdf5::plist::FileAccess,
    comm: ::mpi::ffi::MPI_Comm,
    at: impl At,
) -> Result<()> {
    // An empty info object, not MPI_INFO_NULL: HDF5 hands a copy of it to
    // whoever reads the access list back (hdf5-metno's `driver()`, which
    // frees it, and MPI refuses to free the null object).
    let mut info = std::mem::MaybeUninit::<::mpi::ffi::MPI_Info>::uninit();
    // SAFETY: `info` is an out-pointer MPI fills on success (checked).
    if unsafe { ::mpi::ffi::MPI_Info_create(info.as_mut_ptr()) } != 0 {
        return Err(Error::invalid(at, "MPI_Info_create failed"));
    }
    // SAFETY: MPI_Info_create succeeded, so `info` is initialised.
    let mut info = unsafe { info.assume_init() };
    // SAFETY: a valid access list owned by `fapl`; `comm` is a live
    // communicator and `info` a live info object (HDF5 duplicates both);
    // under the lock.
    let set = sync(|| unsafe {
        check(at, H5Pset_fapl_mpio(fapl.id(), comm, info))?;
        check(at, H5Pset_coll_metadata_write(fapl.id(), 1)).map(drop)
    });
    // SAFETY: `info` is ours (HDF5 keeps its own duplicate).
    unsafe { ::mpi::ffi::MPI_Info_free(&mut info) };
    set
}

/// Opens the existing file `name` read-write with the access list `fapl`
/// (the MPI-IO driver: collective).
pub(crate) fn open_rw(
    name: &std::ffi::CStr,
    fapl: &hdf5::plist::FileAccess,
    at: impl At,
) -> Result<hdf5::File> {
    // SAFETY: a NUL-terminated name and a valid access list; the new file
    // id is owned by the returned `File`; under the lock.
    sync(|| unsafe {
        let id = check(at, H5Fopen(name.as_ptr(), H5F_ACC_RDWR, fapl.id()))?;
        hdf5::from_id::<hdf5::File>(id).at(at)
    })
}

/// Writes `rows` rows of shape `inner` at row `start` of `ds` (inside its
/// extent) from `buf`, values of the plain type `dt`, with a collective
/// transfer. Collective: every rank of the file's communicator calls it
/// for the same dataset (a rank with no rows selects nothing).
pub(crate) fn write_rows_collective(
    ds: &Dataset,
    dt: &Datatype,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: &[u8],
    at: impl At,
) -> Result<()> {
    if plain_bytes(dt, rows, inner).is_none_or(|n| n > buf.len()) {
        return Err(Error::invalid(
            at,
            "internal: fewer bytes than rows to write, or a type with pointers",
        ));
    }
    // A rank without rows still takes part, selecting nothing.
    let (fs, ms) = if rows == 0 {
        let (fs, ms) = (whole_space(ds, at)?, mem_space(1, inner, at)?);
        // SAFETY: valid dataspace ids owned by `fs` and `ms`, under the lock.
        sync(|| unsafe {
            check(at, H5Sselect_none(fs.id()))?;
            check(at, H5Sselect_none(ms.id()))
        })?;
        (fs, ms)
    } else {
        (
            file_space(ds, start, rows, inner, at)?,
            mem_space(rows, inner, at)?,
        )
    };
    let dxpl = collective_xfer(at)?;
    // SAFETY: the memory space selects `rows * prod(inner)` values of `dt`
    // (or none), all in `buf` (checked above: `dt` has no pointers and
    // `buf` holds the rows); the file selection is as many values inside
    // the extent (HDF5 checks it); valid ids; under the lock.
    sync(|| unsafe {
        check(
            at,
            H5Dwrite(
                ds.id(),
                dt.id(),
                ms.id(),
                fs.id(),
                dxpl.id(),
                buf.as_ptr().cast(),
            ),
        )
        .map(drop)
    })
}

/// Starts the kernel writing a shared file's dirty pages to disk while the
/// ranks go on writing (Linux, rank 0 only). HDF5 1.10.8's MPI-IO driver
/// syncs the file (`MPI_File_sync`, an `fsync`) at every flush, and a
/// commit flushes: without this the first flush after a save waited for
/// every byte to reach the disk (0.13 s of 0.5 for 440 MB here); with it
/// the disk works while the next datasets are written. Advice only:
/// nothing is waited for, and an error changes nothing.
pub(crate) struct Writeback {
    /// Asks the background thread to start writeback.
    kick: Option<std::sync::mpsc::Sender<()>>,
    /// Bytes written since the last kick.
    pending: usize,
}

/// Bytes written between two kicks.
const WRITEBACK_BYTES: usize = 32 << 20;

impl Writeback {
    /// For `file`; only the process that starts the writeback (`first`:
    /// rank 0 of the call) opens the file again (read-only) and runs the
    /// thread, which ends when this is dropped.
    pub(crate) fn new(file: &hdf5::File, first: bool) -> Self {
        let kick = if first && cfg!(target_os = "linux") {
            Self::thread(file.filename())
        } else {
            None
        };
        Writeback { kick, pending: 0 }
    }

    fn thread(name: String) -> Option<std::sync::mpsc::Sender<()>> {
        let fh = std::fs::File::open(name).ok()?;
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("h5vec-writeback".into())
            .spawn(move || {
                while rx.recv().is_ok() {
                    while rx.try_recv().is_ok() {}
                    start_writeback(&fh);
                }
            })
            .ok()?;
        Some(tx)
    }

    /// Notes `bytes` written; past [`WRITEBACK_BYTES`], starts writeback.
    pub(crate) fn wrote(&mut self, bytes: usize) {
        self.pending = self.pending.saturating_add(bytes);
        if self.pending >= WRITEBACK_BYTES {
            self.pending = 0;
            if let Some(k) = &self.kick {
                let _ = k.send(());
            }
        }
    }
}

/// `sync_file_range(SYNC_FILE_RANGE_WRITE)` over the whole file: starts
/// writing its dirty pages, waits for none.
#[cfg(target_os = "linux")]
fn start_writeback(fh: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor owned by `fh` for the call; offsets 0, 0
    // mean the whole file; the call writes no memory of ours.
    unsafe { libc::sync_file_range(fh.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &std::fs::File) {}
