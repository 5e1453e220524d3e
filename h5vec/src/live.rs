//! Live readers: HDF5's single-writer/multiple-reader (SWMR) mode (SPEC.md
//! section 8, "Live readers").
//!
//! The writer ([`crate::VectorWriter::create_live`]) creates and links
//! everything its vector needs, then switches the file to SWMR writing
//! (`H5Fstart_swmr_write`, which also drops HDF5's file lock); from then on
//! it only grows datasets and rewrites `count`. Readers open the file with
//! `H5F_ACC_SWMR_READ` and evict what a load read when the load closes it,
//! so the next load reads the file's current state.
//!
//! A live writer also holds a lock of its own (an open-file-description
//! `fcntl` lock on one byte far past the end of the file, which HDF5's
//! `flock` locks do not see): a writer killed mid-stream leaves the
//! superblock marked "open for writing", and [`crate::open_file_rw`] clears
//! that mark only when no live writer holds this lock.

use std::ffi::CString;
use std::path::Path;

use hdf5::Group;

use crate::error::{Context, Error, Place, Result};
use crate::raw;

/// The superblock's "open for writing" and "open for SWMR writing" flags
/// (file consistency flags of a version 3 superblock).
const WRITE_ACCESS: u8 = 0x01;
const SWMR_WRITE_ACCESS: u8 = 0x04;

/// Where the live writer's lock sits: one byte far past any real file end.
const LOCK_AT: i64 = 1 << 62;

fn c_path(path: &Path, at: &Place) -> Result<CString> {
    path.to_str()
        .and_then(|p| CString::new(p).ok())
        .ok_or_else(|| Error::bad_name(at, "the path is not UTF-8 without NUL"))
}

/// `h5vec::open_file_live`: read-only, SWMR read, library version bounds
/// latest, objects evicted from the metadata cache when closed.
pub(crate) fn open_swmr_read(path: &Path) -> Result<hdf5::File> {
    let at = &Place::new("$", path.display().to_string());
    let name = c_path(path, at)?;
    let file = raw::open_swmr_read(&name, at)?;
    raw::close_on_exec(&file);
    Ok(file)
}

/// Whether the superblock of the file at `path` (version 3, at offset 0)
/// says the file is open for writing: a writer has it open, or was killed.
pub(crate) fn left_open_for_writing(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 12];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
    read.is_ok()
        && &head[..8] == b"\x89HDF\r\n\x1a\n"
        && head[8] >= 3
        && head[11] & (WRITE_ACCESS | SWMR_WRITE_ACCESS) != 0
}

/// Opens `path` for writing after a killed writer left it marked open for
/// writing: refused while a live writer holds its lock, else the marks are
/// cleared (HDF5's `clear_status_flags` file access property, what
/// `h5clear -s` does). HDF5's own lock still keeps out a second writer.
pub(crate) fn open_rw_clearing_flags(path: &Path, at: &Place) -> Result<hdf5::File> {
    if live_writer_present(path) {
        return Err(Error::invalid(
            at,
            "a live writer (h5vec::VectorWriter::create_live or open_append_live) is \
             writing this file: read it with h5vec::open_file_live",
        ));
    }
    let name = c_path(path, at)?;
    let file = raw::open_rw_clearing_flags(&name, at)?;
    raw::close_on_exec(&file);
    Ok(file)
}

/// The lock a live writer holds while it writes (see the module docs).
pub(crate) struct LiveLock {
    _file: std::fs::File,
}

impl LiveLock {
    /// Takes the live writer's lock on `path`; an error if another live
    /// writer holds it.
    pub(crate) fn acquire(path: &Path, at: &Place) -> Result<LiveLock> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::invalid(at, format!("cannot open the file to lock it: {e}")))?;
        #[cfg(unix)]
        if let Err(e) = raw::lock_byte(&file, LOCK_AT) {
            return Err(Error::invalid(
                at,
                format!("another live writer is writing this file ({e})"),
            ));
        }
        Ok(LiveLock { _file: file })
    }
}

/// Whether a live writer (of any process) holds its lock on `path`.
fn live_writer_present(path: &Path) -> bool {
    #[cfg(unix)]
    {
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        else {
            return false;
        };
        raw::byte_locked(&file, LOCK_AT)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Whether `file` is open as a live reader (SWMR read).
pub(crate) fn is_live_reader(file: &hdf5::File) -> bool {
    raw::is_swmr_reader(file)
}

/// Whether `file` is in SWMR writing mode.
pub(crate) fn is_live_writer(file: &hdf5::File) -> bool {
    raw::is_swmr_writer(file)
}

/// Switches `file` to SWMR writing (nothing if it already is). Needs a file
/// made by [`crate::create_file_live`] (a version 3 superblock).
pub(crate) fn start_swmr_write(file: &hdf5::File, at: &Place) -> Result<()> {
    if is_live_writer(file) {
        return Ok(());
    }
    let version = raw::superblock_version(file, at)?;
    if version < 3 {
        return Err(Error::mismatch(
            at,
            "a file made by h5vec::create_file_live (superblock version 3, which HDF5's \
             SWMR mode needs)",
            format!("superblock version {version}"),
        ));
    }
    // SWMR needs objects in the 1.10 format or later (a handle from
    // `open_file_rw` has HDF5's default low bound); the file's own format
    // (superblock version 3) already is.
    raw::start_swmr_write(file, at)
}

/// Refuses a vector whose `data` group holds a dataset of variable-length
/// data (HDF5's variable-length strings or sequences, also inside compound
/// or array types): their values live in global heap collections, which
/// HDF5's SWMR mode does not order or refresh. The error names the field.
pub(crate) fn check_live_kinds(data: &Group) -> Result<()> {
    fn walk(g: &Group, field: &str) -> Result<()> {
        let at = &Place::new(field, g.name());
        for name in g.member_names().at(at)? {
            if let Ok(sub) = g.group(&name) {
                let f = if name.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
                    field.to_owned()
                } else {
                    format!("{field}.{name}")
                };
                walk(&sub, &f)?;
            } else if let Ok(ds) = g.dataset(&name) {
                let vl = raw::dataset_has_varlen(&ds);
                if vl != Some(false) {
                    return Err(Error::mismatch(
                        Place::new(field, ds.name()),
                        "data a live writer can append (fixed-size values; for strings \
                         #[h5vec(vls)] or SaveOptions::vls_strings(true))",
                        "HDF5 variable-length data, which HDF5's SWMR mode cannot \
                         append safely (its global heap has no SWMR support)",
                    ));
                }
            }
        }
        Ok(())
    }
    walk(data, "$")
}

/// For a load through a live reader: the vector's `count` as of now, from
/// `read_count`, which reads it with everything below the vector closed
/// again afterwards, so that the load that follows opens its datasets anew
/// and sees extents that cover it (a dataset opened before `count` was read
/// may predate the commit that wrote it). `None` for other files (then
/// `read_count` is not called).
pub(crate) fn count_before_open(
    parent: &Group,
    read_count: impl FnOnce() -> Result<u64>,
) -> Result<Option<u64>> {
    let Ok(file) = parent.file() else {
        return Ok(None);
    };
    if !is_live_reader(&file) {
        return Ok(None);
    }
    read_count().map(Some)
}
