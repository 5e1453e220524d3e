//! The parallel HDF5 calls of [`crate::mpi`] (feature `mpi`, SPEC.md
//! section 16): files opened with the MPI-IO driver, and rows of a dataset
//! written by every rank of the file's communicator in one collective
//! `H5Dwrite` (MPI-IO collective transfer; HDF5's parallel filtered writes
//! when the dataset has filters).

use std::ffi::c_int;

use hdf5::{Dataset, Datatype};
use hdf5_sys::h5d::H5Dwrite;
use hdf5_sys::h5f::{H5Fopen, H5F_ACC_RDWR};
use hdf5_sys::h5p::{H5Pset_coll_metadata_write, H5Pset_fapl_mpio};
use hdf5_sys::h5s::H5Sselect_none;

use super::ffi::{check, sync, Owned};
use super::mpifiles::{collective_xfer, independent_xfer};
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

/// How the ranks' rows go into a dataset of a shared file (SPEC.md
/// section 16, "Chunks and rank boundaries").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transfer {
    /// Collective `H5Dwrite`s, as many on every rank (a rank out of rows
    /// selects nothing): HDF5 1.10 writes filtered chunks only so.
    Collective,
    /// Each rank writes its own rows, one contiguous run of the dataset
    /// (MPI-IO independent writes; a rank without rows writes nothing).
    Independent,
}

impl Transfer {
    /// The transfer for `ds`, the same on every rank (it depends on the
    /// dataset's creation properties only): collective when it has
    /// filters (HDF5 1.10 writes filtered chunks only so), else
    /// independent. A rank's rows of a dataset are one contiguous run,
    /// never interleaved with another rank's, which is what MPI-IO's
    /// collective buffering exists to gather; on this machine the
    /// collective writes of such runs took 1 to 5 times as long as
    /// independent ones, varying from run to run.
    pub(crate) fn of(ds: &Dataset) -> Transfer {
        if super::filters::unfiltered(ds) {
            Transfer::Independent
        } else {
            Transfer::Collective
        }
    }
}

/// Whether the ranks can write new rows into `ds`, a dataset of a vector
/// opened to append: its chunks are allocated when its extent grows (the
/// allocation HDF5 gives datasets it creates through the MPI-IO driver),
/// by every rank together. A dataset one process created allocates each
/// chunk when it is first written, which in parallel HDF5 1.10.8 one rank
/// then does alone (the ranks' files then disagree, and the next flush
/// fails or waits forever). The same answer on every rank.
pub(crate) fn appendable(ds: &Dataset) -> bool {
    use hdf5_sys::h5d::H5D_alloc_time_t;
    // SAFETY: a valid dataset id; the creation list is closed by `Owned`;
    // `alloc` is an output; under the lock.
    sync(|| unsafe {
        let Ok(dcpl) = Owned::new("$", hdf5_sys::h5d::H5Dget_create_plist(ds.id())) else {
            return false;
        };
        let mut alloc = H5D_alloc_time_t::H5D_ALLOC_TIME_DEFAULT;
        hdf5_sys::h5p::H5Pget_alloc_time(dcpl.id(), &mut alloc) >= 0
            && alloc == H5D_alloc_time_t::H5D_ALLOC_TIME_EARLY
    })
}

/// Writes `rows` rows of shape `inner` at row `start` of `ds` (inside its
/// extent) from `buf`, values of the plain type `dt`, by `how`. Collective
/// transfers: every rank of the file's communicator calls it for the same
/// dataset (a rank with no rows selects nothing).
#[allow(clippy::too_many_arguments)] // one write's facts, each one argument
pub(crate) fn write_rows(
    ds: &Dataset,
    dt: &Datatype,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: &[u8],
    how: Transfer,
    at: impl At,
) -> Result<()> {
    if plain_bytes(dt, rows, inner).is_none_or(|n| n > buf.len()) {
        return Err(Error::invalid(
            at,
            "internal: fewer bytes than rows to write, or a type with pointers",
        ));
    }
    if rows == 0 && how == Transfer::Independent {
        return Ok(());
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
    let dxpl = match how {
        Transfer::Collective => collective_xfer(at)?,
        Transfer::Independent => independent_xfer(at)?,
    };
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

thread_local! {
    /// Set while h5vec flushes a file on this thread ([`SyncSkipped`]).
    static NO_SYNC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Calls of [`MPI_File_sync`] skipped and passed on (for the tests: the
/// definition is in place, and only h5vec's flushes skip).
static SKIPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static PASSED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// While alive, the `MPI_File_sync` calls HDF5 makes on this thread are
/// skipped: h5vec's flushes of a file opened with the MPI-IO driver
/// (`raw::flush_file`) write HDF5's metadata as a serial flush does and
/// leave the writing to disk to the kernel, as a serial save does. HDF5
/// 1.10.8's MPI-IO driver ends every flush but the one at close with an
/// `MPI_File_sync` (an `fsync` of the file), which made each commit wait
/// for every byte of the save to reach the disk. A kill of the job still
/// leaves what was written (SPEC.md section 8: the kernel holds it); a
/// power loss may lose it, as it may lose a serial save's.
pub(crate) struct SyncSkipped {
    was: bool,
}

impl SyncSkipped {
    /// Skips syncs on this thread until dropped.
    pub(crate) fn enter() -> Self {
        SyncSkipped {
            was: NO_SYNC.with(|s| s.replace(true)),
        }
    }

    /// Calls of `MPI_File_sync` in this process: (skipped, passed on).
    #[cfg(test)]
    fn counts() -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (SKIPPED.load(Relaxed), PASSED.load(Relaxed))
    }
}

impl Drop for SyncSkipped {
    fn drop(&mut self) {
        NO_SYNC.with(|s| s.set(self.was));
    }
}

/// MPI's `MPI_File_sync`, through MPI's profiling interface (MPI 4.0
/// section 15.2: a program may define an `MPI_` function and call the
/// library's as `PMPI_`): the call MPI-IO users make, and HDF5's
/// MPI-IO driver at a flush, goes to `PMPI_File_sync` unchanged, except
/// on a thread inside an h5vec flush ([`SyncSkipped`]). HDF5 calls it
/// collectively, so every rank skips or none does. If the program's link
/// leaves this definition out, MPI's own runs: h5vec's flushes then sync
/// (slower, nothing else differs).
///
/// # Safety
///
/// As `MPI_File_sync`: `fh` a file handle MPI opened.
#[no_mangle]
#[allow(
    non_snake_case,
    reason = "MPI's own name: the definition takes the place of the library's"
)]
pub(crate) unsafe extern "C" fn MPI_File_sync(fh: ::mpi::ffi::MPI_File) -> std::ffi::c_int {
    if NO_SYNC.with(std::cell::Cell::get) {
        SKIPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return ::mpi::ffi::MPI_SUCCESS as std::ffi::c_int;
    }
    PASSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: the caller's handle, passed on unchanged to MPI's own
    // function (the caller upholds its contract).
    unsafe { ::mpi::ffi::PMPI_File_sync(fh) }
}

#[cfg(test)]
mod tests {
    use super::SyncSkipped;

    /// h5vec's flushes of a file of the MPI-IO driver skip its sync; the
    /// caller's own flush syncs; HDF5's deflate filter compresses with
    /// h5vec's compressor and its output reads back exactly. One process
    /// (MPI's singleton start: no `mpirun`; one test, as MPI starts once a
    /// process); `scripts/mpi_test.sh` runs it.
    #[test]
    fn flushes_skip_the_mpi_io_sync_and_deflate_uses_h5vecs_compressor() {
        let universe = ::mpi::initialize().expect("MPI starts once in this test binary");
        let world = universe.world();
        let dir = tempfile::tempdir().unwrap();
        let file = crate::mpi::create_file(dir.path().join("s.h5"), &world).unwrap();
        let (skipped0, passed0) = SyncSkipped::counts();
        crate::mpi::save_vector(&file, "xs", &[1u64, 2, 3], &world).unwrap();
        crate::mpi::append_vector(&file, "xs", &[4u64], &world).unwrap();
        let (skipped1, passed1) = SyncSkipped::counts();
        // The save's flushes, then the append's two (rows, then count).
        assert!(skipped1 >= skipped0 + 3, "skipped {skipped0} -> {skipped1}");
        assert_eq!(passed1, passed0, "a flush of h5vec synced");
        file.flush().unwrap();
        assert_eq!(SyncSkipped::counts(), (skipped1, passed1 + 1));
        let back: Vec<u64> = crate::mpi::load_range(&file, "xs", 0..4).unwrap();
        assert_eq!(back, [1, 2, 3, 4]);

        // Deflate through HDF5's filter, now h5vec's compressor: a
        // compressible column and one of random bits (stored blocks), read
        // back by h5vec and by HDF5 itself (its own inflate).
        assert!(
            super::FAST_DEFLATE.get() == Some(&true),
            "the filter was not replaced"
        );
        let n = 200_000u64;
        let rows: Vec<(u64, u64)> = (0..n)
            .map(|i| {
                // splitmix64: random bits, which no byte plane compresses.
                let mut z = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (i / 7, z ^ (z >> 31))
            })
            .collect();
        let opts = crate::SaveOptions::default().deflate(4);
        crate::mpi::save_vector_with(&file, "z", &rows, &opts, &world).unwrap();
        let back: Vec<(u64, u64)> = crate::mpi::load_range(&file, "z", 0..n).unwrap();
        assert_eq!(back, rows);
        for (k, want) in [
            (1usize, rows.iter().map(|r| r.0).collect::<Vec<_>>()),
            (2, rows.iter().map(|r| r.1).collect()),
        ] {
            let ds = file.dataset(&format!("z/data/{k}/values")).unwrap();
            assert_eq!(
                ds.read_raw::<u64>().unwrap(),
                want,
                "column {k} through HDF5"
            );
        }
        let small = file.dataset("z/data/1/values").unwrap().storage_size();
        assert!(
            small < n * 8 / 4,
            "the compressible column takes {small} bytes"
        );
        let random = file.dataset("z/data/2/values").unwrap().storage_size();
        assert!(
            (n * 8..n * 8 + n * 8 / 256).contains(&random),
            "random bits take {random}"
        );
        assert!(super::DEFLATED_CHUNKS.load(std::sync::atomic::Ordering::Relaxed) >= 2);
    }
}

/// The compressor HDF5's deflate filter calls in this process
/// ([`use_fast_deflate`]): `(chunk, level, out)`.
type Deflate = fn(&[u8], u32, &mut Vec<u8>);

/// Whether [`use_fast_deflate`] replaced the filter (once a process).
static FAST_DEFLATE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// The deflate filter HDF5 had (reading goes through it) and h5vec's
/// compressor.
#[derive(Clone, Copy)]
struct Original(hdf5_sys::h5z::H5Z_class2_t, Deflate);

// SAFETY: the class is plain data (function pointers, and a pointer to
// HDF5's static name string, never written), read only after it is set.
unsafe impl Send for Original {}
// SAFETY: as above.
unsafe impl Sync for Original {}

/// Has HDF5's deflate filter (id 1) compress with `deflate` (h5vec's
/// libdeflate compressor), in this process, from now on. HDF5 1.10.8's
/// parallel filtered writes compress each chunk through the registered
/// filter on one rank, with zlib; h5vec's own pipeline (section 6.3)
/// compresses with libdeflate, several times as fast, and stores chunks
/// that random bits make incompressible without compressing them. The
/// streams are zlib streams either way (any reader inflates them);
/// decompression stays HDF5's. HDF5 refuses `H5Zregister` for its own
/// filters (ids under 256), so this calls the library's internal
/// `H5Z_register` (and `H5Z_find`, for the filter it replaces), looked up
/// by name: an HDF5 without them (another build) keeps its filter. Best
/// effort; returns whether the filter was replaced.
pub(crate) fn use_fast_deflate(deflate: Deflate) -> bool {
    *FAST_DEFLATE.get_or_init(|| {
        type Find = unsafe extern "C" fn(c_int) -> *mut hdf5_sys::h5z::H5Z_class2_t;
        type Register = unsafe extern "C" fn(*const hdf5_sys::h5z::H5Z_class2_t) -> c_int;
        // SAFETY: dlsym with a NUL-terminated name; null when absent.
        let (find, register) = unsafe {
            (
                libc::dlsym(libc::RTLD_DEFAULT, c"H5Z_find".as_ptr()),
                libc::dlsym(libc::RTLD_DEFAULT, c"H5Z_register".as_ptr()),
            )
        };
        if find.is_null() || register.is_null() {
            return false;
        }
        // SAFETY: HDF5 1.10's internal functions of these signatures
        // (H5Zprivate.h: `H5Z_class2_t *H5Z_find(H5Z_filter_t)`,
        // `herr_t H5Z_register(const H5Z_class2_t *)`), found by name
        // in the loaded library.
        let (find, register): (Find, Register) = unsafe {
            (
                std::mem::transmute::<*mut libc::c_void, Find>(find),
                std::mem::transmute::<*mut libc::c_void, Register>(register),
            )
        };
        // SAFETY: under the lock; `H5Z_find` returns the registered
        // class (null if none), copied before it is replaced; the new
        // class is copied by `H5Z_register` (its name a static string).
        sync(|| unsafe {
            let old = find(hdf5_sys::h5z::H5Z_FILTER_DEFLATE);
            if old.is_null() || (*old).filter.is_none() {
                return false;
            }
            let original = *old;
            let fast = hdf5_sys::h5z::H5Z_class2_t {
                filter: Some(fast_deflate_filter),
                ..original
            };
            // Set before HDF5 can call the new filter.
            let _ = FAST_DEFLATE_ORIGINAL.set(Original(original, deflate));
            register(&fast) >= 0
        })
    })
}

/// What [`fast_deflate_filter`] calls (set just before it is registered).
static FAST_DEFLATE_ORIGINAL: std::sync::OnceLock<Original> = std::sync::OnceLock::new();

/// Chunks [`fast_deflate_filter`] compressed (for the tests).
static DEFLATED_CHUNKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

thread_local! {
    /// The compressed bytes of the last chunk, reused.
    static DEFLATED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// HDF5's deflate filter with h5vec's compressor: reading (`REVERSE`)
/// goes to HDF5's own filter; writing compresses `*buf` (`nbytes`) at the
/// level `cd_values[0]` into a buffer from HDF5's allocator, which takes
/// `*buf`'s place. Returns the compressed size, or 0 (HDF5's failure) when
/// it cannot allocate.
unsafe extern "C" fn fast_deflate_filter(
    flags: std::ffi::c_uint,
    cd_nelmts: usize,
    cd_values: *const std::ffi::c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut std::ffi::c_void,
) -> usize {
    let Some(&Original(original, deflate)) = FAST_DEFLATE_ORIGINAL.get() else {
        return 0;
    };
    if flags & hdf5_sys::h5z::H5Z_FLAG_REVERSE != 0 {
        return match original.filter {
            // SAFETY: HDF5's own deflate filter, called with the arguments
            // HDF5 passed to this one.
            Some(f) => unsafe { f(flags, cd_nelmts, cd_values, nbytes, buf_size, buf) },
            None => 0,
        };
    }
    // SAFETY: HDF5 passes `cd_nelmts` values at `cd_values`, and `*buf`
    // holds at least `nbytes` bytes.
    let (level, src) = unsafe {
        let level = if cd_nelmts > 0 && !cd_values.is_null() {
            (*cd_values).min(9)
        } else {
            6
        };
        (
            level,
            std::slice::from_raw_parts((*buf).cast::<u8>(), nbytes),
        )
    };
    DEFLATED.with(|out| {
        let mut out = out.borrow_mut();
        deflate(src, level, &mut out);
        if out.is_empty() {
            return 0;
        }
        DEFLATED_CHUNKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: HDF5's allocator (HDF5 frees the filter's buffer with
        // it); `out.len()` bytes copied into the fresh buffer; the old
        // buffer is HDF5's, freed once replaced.
        unsafe {
            let new = hdf5_sys::h5::H5allocate_memory(out.len(), 0);
            if new.is_null() {
                return 0;
            }
            std::ptr::copy_nonoverlapping(out.as_ptr(), new.cast::<u8>(), out.len());
            hdf5_sys::h5::H5free_memory(*buf);
            *buf = new;
            *buf_size = out.len();
        }
        out.len()
    })
}
