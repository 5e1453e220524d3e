//! Crash safety (SPEC.md 5): what keeps a file readable when a writer is
//! killed at any point. Flushes that never shrink the file below what its
//! superblock records, a metadata cache that writes only at flushes
//! ([`HoldMetadata`]), variable-length data that never goes into a heap
//! collection holding committed values ([`forget_heap_collections`]), and
//! zeroing the unused tail of the last chunk ([`clear_chunk_tail`]).

use hdf5::Dataset;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5ac::H5AC_cache_config_t;
use hdf5_sys::h5d;
use hdf5_sys::h5f::{self, H5F_libver_t};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::{self, H5P_DEFAULT};

use super::chunks::{read_stored_chunk, stored_chunk};
use super::compat::mdc_ptr;
use super::ffi::{call, sync, H5Fincrement_filesize, H5Fset_libver_bounds, Owned};
use super::links::{file_number, unlinked};
use super::rows::trim_rows;
use crate::error::{At, Context, Error, Result};

/// The library version bounds `file` creates objects with, as `(low, high)`.
fn libver_bounds(file: hid_t) -> Option<(H5F_libver_t, H5F_libver_t)> {
    // Reading an MPI-IO file's access list back is collective (every rank
    // reaches here for the same file, but it costs a communicator each).
    #[cfg(feature = "mpi")]
    if super::mpifiles::is_mpio(file) {
        return None;
    }
    // SAFETY: `H5Fget_access_plist` accepts any id (an invalid one fails);
    // the property list is owned by an `Owned`; the bounds are outputs.
    sync(|| unsafe {
        let fapl = Owned::ok(h5f::H5Fget_access_plist(file))?;
        let mut low = H5F_libver_t::H5F_LIBVER_EARLIEST;
        let mut high = H5F_libver_t::H5F_LIBVER_EARLIEST;
        (h5p::H5Pget_libver_bounds(fapl.id(), &mut low, &mut high) >= 0).then_some((low, high))
    })
}

/// Moves the end of allocation HDF5 keeps for `file` (in memory) to the end
/// of the file, so objects a writer killed during its last flush placed past
/// the end of allocation its superblock records can still be read. Works on
/// read-only handles too (nothing is written); best effort.
pub(crate) fn cover_whole_file(file: &hdf5::File) {
    let id = file.id();
    // SAFETY: a valid file id; failure leaves the file unchanged.
    sync(|| unsafe { H5Fincrement_filesize(id, 0) });
}
/// Flushes `file`, then moves its end of allocation one byte past the end of
/// the file.
///
/// A flush first hands the unused tail of HDF5's allocation blocks back,
/// which can bring the end of allocation below what the superblock on disk
/// records (when the last flush itself allocated a block), then truncates
/// the file to it, and only then writes the superblock with the lower
/// value: a kill in between leaves a file shorter than its superblock says,
/// which HDF5 refuses to open ("truncated file"). With the end of
/// allocation past the end of the file after every flush, whatever the next
/// flush hands back lies beyond what the superblock on disk records, so the
/// file never gets shorter than that.
pub(crate) fn flush_file(file: &hdf5::File, path: impl At) -> Result<()> {
    // A file of the MPI-IO driver: no fsync, as for every other file.
    #[cfg(feature = "mpi")]
    let _no_sync = super::mpio::SyncSkipped::enter();
    file.flush().at(path)?;
    let id = file.id();
    // SAFETY: a valid file id; failure leaves the end of allocation as it is
    // (best effort).
    sync(|| unsafe { H5Fincrement_filesize(id, 1) });
    Ok(())
}

/// Whether HDF5 manages the free space of `file` with free-space managers
/// (its default strategy, and the paged one), or cannot tell.
pub(crate) fn has_free_space_managers(file: &hdf5::File) -> bool {
    // SAFETY: a valid file id; the property list is owned by an `Owned`;
    // the strategy, persistence and threshold are outputs.
    sync(|| unsafe {
        let Some(fcpl) = Owned::ok(h5f::H5Fget_create_plist(file.id())) else {
            return true;
        };
        let mut strategy = h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_FSM_AGGR;
        let mut persist = 0;
        let mut threshold: hsize_t = 0;
        let r =
            h5p::H5Pget_file_space_strategy(fcpl.id(), &mut strategy, &mut persist, &mut threshold);
        r < 0
            || matches!(
                strategy,
                h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_FSM_AGGR
                    | h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_PAGE
            )
    })
}

/// The metadata cache configuration of file `id`, and a copy of it with
/// automatic resizing off and evictions on or off (`evict`). `None` if HDF5
/// cannot tell.
///
/// # Safety
/// `id` must be a valid file id, and the caller must hold HDF5's lock.
unsafe fn cache_config(
    id: hid_t,
    evict: bool,
) -> Option<(Box<H5AC_cache_config_t>, Box<H5AC_cache_config_t>)> {
    use hdf5_sys::h5c::{H5C_cache_decr_mode, H5C_cache_flash_incr_mode, H5C_cache_incr_mode};
    let mut cfg: Box<H5AC_cache_config_t> = Box::default();
    cfg.version = hdf5_sys::h5ac::H5AC__CURR_CACHE_CONFIG_VERSION;
    // SAFETY: forwarded from the caller; `cfg` is a valid output struct of
    // the version it names.
    if unsafe { h5f::H5Fget_mdc_config(id, &mut *cfg) } < 0 {
        return None;
    }
    let mut changed = cfg.clone();
    changed.evictions_enabled = evict as _;
    changed.incr_mode = H5C_cache_incr_mode::H5C_incr__off;
    changed.flash_incr_mode = H5C_cache_flash_incr_mode::H5C_flash_incr__off;
    changed.decr_mode = H5C_cache_decr_mode::H5C_decr__off;
    Some((cfg, changed))
}

/// Makes HDF5 forget the global heap collections it has cached, so that the
/// variable-length data written next goes into new collections.
///
/// HDF5 adds new variable-length values (strings) to any cached collection
/// with free space, rewriting it in place, committed values included, and a
/// collection is usually larger than a 4 KiB page: a writer killed during
/// that write leaves its first pages new and the rest old, and HDF5 then
/// fails (it even loops forever) on every value in it. A collection leaves
/// that list only when it leaves the cache, and HDF5 offers no call to
/// evict it: so the cache is shrunk to its minimum size, an anonymous group
/// created (and deleted with its handle) to make the cache evict its clean
/// entries down to that size, and the configuration restored.
///
/// Not while h5vec holds an object in the file open without a link to it
/// (see [`Unlinked`]).
///
/// Dirty metadata is written by the eviction, in the cache's order: call it
/// right after a flush, or where nothing a reader relies on is dirty.
pub(crate) fn forget_heap_collections(file: &hdf5::File) {
    let id = file.id();
    // The file's number first: `file_number` takes the HDF5 lock, which
    // must never be waited for while the list of unlinked objects is held
    // (a thread holding the HDF5 lock may be waiting for that list).
    let n = file_number(id);
    // (Its own statement: the list's guard is dropped before the next
    // HDF5 call.)
    let held = unlinked().contains(&n);
    // Nor in SWMR writing mode, where no object may be created (and no
    // variable-length data is written: SPEC.md section 8, "Live readers").
    if held || super::swmr::is_swmr_writer(file) {
        return;
    }
    // SAFETY: a valid file id and the lock held (`cache_config`'s
    // contract); the configurations are valid structs of the current
    // version; the anonymous group is owned by an `Owned` (closed at once,
    // which deletes it: it has no link).
    sync(|| unsafe {
        let Some((cfg, mut tiny)) = cache_config(id, true) else {
            return;
        };
        tiny.set_initial_size = 1;
        tiny.min_size = 1024; // H5C__MIN_MAX_CACHE_SIZE
        tiny.max_size = 1024;
        tiny.initial_size = 1024;
        if h5f::H5Fset_mdc_config(id, mdc_ptr(&tiny)) < 0 {
            return;
        }
        drop(Owned::ok(hdf5_sys::h5g::H5Gcreate_anon(
            id,
            H5P_DEFAULT,
            H5P_DEFAULT,
        )));
        h5f::H5Fset_mdc_config(id, mdc_ptr(&cfg));
    });
}

/// Keeps HDF5's metadata cache from writing dirty metadata on its own
/// (evictions off, no automatic resizing) while it lives, so the file on
/// disk changes only at explicit flushes: a writer killed between two
/// flushes leaves the metadata of the last flush, never a half-updated
/// object header or chunk index. Restores the previous configuration on drop.
///
/// While it lives, objects are also created in at least the HDF5 1.10
/// format (see [`HoldMetadata::new`]).
pub(crate) struct HoldMetadata {
    file: hid_t,
    saved: Option<Box<H5AC_cache_config_t>>,
    bounds: Option<(H5F_libver_t, H5F_libver_t)>,
    _keep: hdf5::File,
}

impl HoldMetadata {
    /// Holds the metadata of `file` (best effort: on failure nothing changes).
    ///
    /// It also moves the file's end of allocation to the end of the file
    /// first: a writer killed during a flush can leave metadata that points
    /// past the end of allocation its superblock recorded; new space is then
    /// allocated after everything it may point to, never over it.
    ///
    /// And it raises the low bound of the file's format versions to HDF5
    /// 1.10 (the superblock keeps its version): chunked datasets created
    /// meanwhile index their chunks with an extensible array, whose entries
    /// never move, instead of a version 1 B-tree, whose nodes split in place
    /// (a kill in the middle of the flush that writes a split leaves a chunk
    /// index that loses committed chunks).
    pub(crate) fn new(file: hdf5::File) -> Self {
        let id = file.id();
        if has_free_space_managers(&file) {
            // Not after a flush: right after the file was opened, a flush
            // writes the superblock, and a kill after that write left files
            // whose root group HDF5 then refused to read ("address of
            // object past end of allocation"; HDF5's default file space
            // handling). Whatever the caller left dirty is written by the
            // eviction, as HDF5 would anyway.
            forget_heap_collections(&file);
            cover_whole_file(&file);
        } else {
            cover_whole_file(&file);
            // Clean first (whatever the caller left dirty), then forget.
            let _ = flush_file(&file, "");
            forget_heap_collections(&file);
        }
        let bounds = libver_bounds(id).filter(|&(low, high)| {
            (low as i32) < (H5F_libver_t::H5F_LIBVER_V110 as i32)
                && (high as i32) >= (H5F_libver_t::H5F_LIBVER_V110 as i32)
                // SAFETY: a valid file id; on failure the bounds stay.
                && sync(|| unsafe {
                    H5Fset_libver_bounds(id, H5F_libver_t::H5F_LIBVER_V110, high)
                }) >= 0
        });
        // SAFETY: a valid file id, under the lock (`cache_config`'s
        // contract); `held` is a valid configuration of the current version.
        let saved = sync(|| unsafe {
            let (cfg, mut held) = cache_config(id, false)?;
            held.set_initial_size = 0;
            if h5f::H5Fset_mdc_config(id, mdc_ptr(&held)) < 0 {
                return None;
            }
            Some(cfg)
        });
        HoldMetadata {
            file: id,
            saved,
            bounds,
            _keep: file,
        }
    }
}

impl Drop for HoldMetadata {
    fn drop(&mut self) {
        if let Some(cfg) = self.saved.as_ref() {
            // SAFETY: the file is kept open by `_keep`; `cfg` is the valid
            // configuration read in `new`.
            sync(|| unsafe {
                h5f::H5Fset_mdc_config(self.file, mdc_ptr(cfg));
            });
        }
        if let Some((low, high)) = self.bounds {
            // SAFETY: the file is kept open by `_keep`; the bounds are the
            // ones it had.
            sync(|| unsafe { H5Fset_libver_bounds(self.file, low, high) });
        }
    }
}

/// Zeroes, in the stored chunk that holds row `rows` of a 1-D chunked
/// dataset without filters, every slot from row `rows` to the chunk's end,
/// with a direct chunk read and write (no type conversion, no chunk cache).
/// The bytes of rows before `rows` are written back unchanged, in place, so
/// the committed part of the file does not change even if this is cut short.
/// For variable-length types, zero bytes are empty (null) references.
/// Does nothing when `rows` is at a chunk boundary, the chunk is not
/// allocated, or the dataset has filters.
///
/// First, a dataset longer than `rows` (the rows of an interrupted append)
/// is cut back to `rows`: HDF5 drops the chunks past it without reading
/// them, where overwriting them would make HDF5 read (and fail on) the
/// references they hold.
pub(crate) fn clear_chunk_tail(ds: &Dataset, rows: u64, path: impl At) -> Result<()> {
    trim_rows(ds, rows, path)?;
    let Some(chunk) = ds.chunk().and_then(|c| c.first().copied()) else {
        return Ok(());
    };
    let chunk = chunk.max(1) as u64;
    let base = rows / chunk * chunk;
    if base == rows || ds.ndim() != 1 || !ds.filters().is_empty() {
        return Ok(());
    }
    sync(|| {
        let off = [base as hsize_t];
        let size = match stored_chunk(ds, base) {
            Some((_, size)) if size > 0 => size,
            _ => return Ok(()),
        };
        // The stored size of one element (for variable-length types the
        // disk reference, not the memory pointer): an unfiltered chunk holds
        // exactly `chunk` of them (16 bytes each for variable-length strings:
        // a larger stored size is not such a chunk, and not allocated for).
        if size % chunk != 0 || size / chunk > 16 {
            return Ok(());
        }
        let elem = (size / chunk) as usize;
        let mut buf = vec![0u8; size as usize];
        if read_stored_chunk(ds, base, &mut buf) != Some((buf.len(), 0)) {
            return Err(Error::invalid(
                path,
                "cannot read the last partly filled chunk",
            ));
        }
        let filters: u32 = 0;
        let from = ((rows - base) as usize).saturating_mul(elem).min(buf.len());
        buf[from..].iter_mut().for_each(|b| *b = 0);
        // SAFETY: a valid 1-D dataset id, the offset of one chunk, and
        // `buf.len()` bytes of chunk data.
        call(path, || unsafe {
            h5d::H5Dwrite_chunk(
                ds.id(),
                H5P_DEFAULT,
                filters,
                off.as_ptr(),
                buf.len(),
                buf.as_ptr().cast(),
            )
        })?;
        Ok(())
    })
}

#[cfg(test)]
mod hold_tests {
    use super::*;

    fn evictions(f: &hdf5::File) -> i32 {
        let mut cfg: Box<H5AC_cache_config_t> = Box::default();
        cfg.version = hdf5_sys::h5ac::H5AC__CURR_CACHE_CONFIG_VERSION;
        // SAFETY: a valid file id and an output struct of the version it names.
        sync(|| unsafe { h5f::H5Fget_mdc_config(f.id(), &mut *cfg) });
        cfg.evictions_enabled as i32
    }

    #[test]
    fn datasets_written_by_h5vec_index_chunks_with_an_extensible_array() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ea.h5");
        let f = hdf5::File::create(&path).unwrap();
        let low = || libver_bounds(f.id()).unwrap().0 as i32;
        let before = low();
        crate::save_vector(&f, "v", &[1u32, 2, 3]).unwrap();
        crate::append_vector(&f, "v", &[4u32]).unwrap();
        // The bounds are back to what the file had.
        assert_eq!(low(), before);
        assert!(before < H5F_libver_t::H5F_LIBVER_V110 as i32);
        let ds = f.dataset("v/data/values").unwrap();
        let mut idx: h5d::H5D_chunk_index_t = 0;
        // SAFETY: a valid dataset id and an output value.
        sync(|| unsafe { h5d::H5Dget_chunk_index_type(ds.id(), &mut idx) });
        // H5D_CHUNK_IDX_EARRAY, not H5D_CHUNK_IDX_BTREE (0).
        assert_eq!(idx, 4);
        drop((ds, f));
        // The superblock keeps version 2.
        assert_eq!(std::fs::read(&path).unwrap()[8], 2);
    }

    /// The global heap collections the stored references of rows
    /// `rows` of a 1-D variable-length string dataset point into.
    fn collections(ds: &Dataset, rows: std::ops::Range<u64>) -> std::collections::BTreeSet<u64> {
        let chunk = ds.chunk().unwrap()[0] as u64;
        let mut out = std::collections::BTreeSet::new();
        for row in rows {
            let base = row / chunk * chunk;
            let mut buf = vec![0u8; chunk as usize * 16];
            let (len, _) = read_stored_chunk(ds, base, &mut buf).unwrap();
            // Disk form of a reference: length (4), collection address (8), index (4).
            let at = ((row - base) * 16) as usize;
            assert!(at + 16 <= len);
            out.insert(u64::from_le_bytes(buf[at + 4..at + 12].try_into().unwrap()));
        }
        out
    }

    #[test]
    fn appended_strings_go_into_new_heap_collections() {
        let dir = tempfile::tempdir().unwrap();
        let f = crate::create_file(dir.path().join("gh.h5")).unwrap();
        let strings = |a: usize, b: usize| (a..b).map(|i| format!("s{i}")).collect::<Vec<_>>();
        let opts = crate::SaveOptions::default().chunk_length(64);
        crate::save_vector_with(&f, "v", &strings(0, 10), &opts).unwrap();
        crate::append_vector(&f, "v", &strings(10, 20)).unwrap();
        let mut w = crate::VectorWriter::<String>::open_append(&f, "v", &opts).unwrap();
        w.extend(&strings(20, 30)).unwrap();
        w.flush().unwrap();
        w.extend(&strings(30, 40)).unwrap();
        w.finish().unwrap();
        let ds = f.dataset("v/data/values").unwrap();
        let parts = [0..10, 10..20, 20..30, 30..40].map(|r| collections(&ds, r));
        for i in 0..parts.len() {
            for j in 0..i {
                assert!(
                    parts[i].is_disjoint(&parts[j]),
                    "rows of commit {i} share a collection with commit {j}: {parts:?}"
                );
            }
        }
        let back: Vec<String> = crate::load_vector(&f, "v").unwrap();
        assert_eq!(back, strings(0, 40));
    }

    #[test]
    fn hold_metadata_turns_evictions_off_and_back_on() {
        let dir = tempfile::tempdir().unwrap();
        let f = hdf5::File::create(dir.path().join("h.h5")).unwrap();
        assert_eq!(evictions(&f), 1);
        {
            let _h = HoldMetadata::new(f.clone());
            assert_eq!(evictions(&f), 0);
        }
        assert_eq!(evictions(&f), 1);
    }
}
