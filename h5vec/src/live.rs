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

use std::ffi::{c_uint, c_void, CString};
use std::path::Path;

use hdf5::Group;
use hdf5_sys::h5f;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p;
use hdf5_sys::h5t::{self, H5T_class_t};

use crate::error::{Context, Error, Place, Result};
use crate::guard::Access;
use crate::raw::{check, sync, Owned};

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

/// A file access property list with library version bounds `latest`.
fn latest_fapl(at: &Place) -> Result<Owned> {
    sync(|| {
        // SAFETY: creating a property list of a predefined class; the id is
        // owned by the returned `Owned`; the bounds are plain values.
        unsafe {
            let fapl = Owned::new(at, h5p::H5Pcreate(*h5p::H5P_CLS_FILE_ACCESS))?;
            check(
                at,
                h5p::H5Pset_libver_bounds(
                    fapl.id(),
                    h5f::H5F_LIBVER_LATEST,
                    h5f::H5F_LIBVER_LATEST,
                ),
            )?;
            Ok(fapl)
        }
    })
}

/// `h5vec::open_file_live`: read-only, SWMR read, library version bounds
/// latest, objects evicted from the metadata cache when closed.
pub(crate) fn open_swmr_read(path: &Path) -> Result<hdf5::File> {
    let at = &Place::new("$", path.display().to_string());
    let name = c_path(path, at)?;
    let fapl = latest_fapl(at)?;
    sync(|| {
        // SAFETY: a valid property list and a NUL-terminated name; the new
        // file id is owned by the returned `File`.
        unsafe {
            check(at, h5p::H5Pset_evict_on_close(fapl.id(), 1))?;
            let id = check(
                at,
                h5f::H5Fopen(
                    name.as_ptr(),
                    h5f::H5F_ACC_RDONLY | h5f::H5F_ACC_SWMR_READ,
                    fapl.id(),
                ),
            )?;
            hdf5::from_id::<hdf5::File>(id).at(at)
        }
    })
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
    let fapl = latest_fapl(at)?;
    let prop = CString::new("clear_status_flags").expect("no NUL");
    sync(|| {
        // SAFETY: a valid property list, the name of a `bool` property of
        // the file access class and a `bool` to copy; a NUL-terminated
        // file name; the new file id is owned by the returned `File`.
        unsafe {
            let mut clear = true;
            check(
                at,
                h5p::H5Pset(
                    fapl.id(),
                    prop.as_ptr(),
                    (&mut clear as *mut bool).cast::<c_void>(),
                ),
            )?;
            let id = check(
                at,
                h5f::H5Fopen(name.as_ptr(), h5f::H5F_ACC_RDWR, fapl.id()),
            )?;
            hdf5::from_id::<hdf5::File>(id).at(at)
        }
    })
}

/// The lock a live writer holds while it writes (see the module docs).
pub(crate) struct LiveLock {
    _file: std::fs::File,
}

#[cfg(unix)]
fn lock_request(kind: libc::c_short) -> libc::flock {
    // SAFETY: `flock` is plain C data, valid when zeroed.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = LOCK_AT as libc::off_t;
    fl.l_len = 1;
    fl
}

#[cfg(target_os = "linux")]
const SETLK: libc::c_int = libc::F_OFD_SETLK;
#[cfg(target_os = "linux")]
const GETLK: libc::c_int = libc::F_OFD_GETLK;
#[cfg(all(unix, not(target_os = "linux")))]
const SETLK: libc::c_int = libc::F_SETLK;
#[cfg(all(unix, not(target_os = "linux")))]
const GETLK: libc::c_int = libc::F_GETLK;

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
        {
            use std::os::fd::AsRawFd;
            let fl = lock_request(libc::F_WRLCK as libc::c_short);
            // SAFETY: a valid open descriptor and a valid `flock` request.
            if unsafe { libc::fcntl(file.as_raw_fd(), SETLK, &fl) } != 0 {
                return Err(Error::invalid(
                    at,
                    format!(
                        "another live writer is writing this file ({})",
                        std::io::Error::last_os_error()
                    ),
                ));
            }
        }
        Ok(LiveLock { _file: file })
    }
}

/// Whether a live writer (of any process) holds its lock on `path`.
fn live_writer_present(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        else {
            return false;
        };
        let mut fl = lock_request(libc::F_WRLCK as libc::c_short);
        // SAFETY: a valid open descriptor and a valid `flock` to fill in.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), GETLK, &mut fl) };
        r == 0 && fl.l_type != libc::F_UNLCK as libc::c_short
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

fn intent(file: &hdf5::File) -> c_uint {
    let mut intent: c_uint = 0;
    // SAFETY: a valid file id (held by `file`) and an output integer.
    sync(|| unsafe { h5f::H5Fget_intent(file.id(), &mut intent) });
    intent
}

/// Whether `file` is open as a live reader (SWMR read).
pub(crate) fn is_live_reader(file: &hdf5::File) -> bool {
    intent(file) & h5f::H5F_ACC_SWMR_READ != 0
}

/// Whether `file` is in SWMR writing mode.
pub(crate) fn is_live_writer(file: &hdf5::File) -> bool {
    intent(file) & h5f::H5F_ACC_SWMR_WRITE != 0
}

/// Switches `file` to SWMR writing (nothing if it already is). Needs a file
/// made by [`crate::create_file_live`] (a version 3 superblock).
pub(crate) fn start_swmr_write(file: &hdf5::File, at: &Place) -> Result<()> {
    if is_live_writer(file) {
        return Ok(());
    }
    // SAFETY: `H5F_info2_t` is plain C data, valid when zeroed.
    let mut info: h5f::H5F_info2_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid file id and an output struct.
    sync(|| unsafe { check(at, h5f::H5Fget_info2(file.id(), &mut info)) })?;
    if info.super_.version < 3 {
        return Err(Error::mismatch(
            at,
            "a file made by h5vec::create_file_live (superblock version 3, which HDF5's \
             SWMR mode needs)",
            format!("superblock version {}", info.super_.version),
        ));
    }
    // SWMR needs objects in the 1.10 format or later (a handle from
    // `open_file_rw` has HDF5's default low bound); the file's own format
    // (superblock version 3) already is.
    // SAFETY: a valid file id and plain bound values, under the lock.
    sync(|| unsafe {
        check(
            at,
            crate::raw::ffi::H5Fset_libver_bounds(
                file.id(),
                h5f::H5F_libver_t::H5F_LIBVER_V110,
                h5f::H5F_LIBVER_LATEST,
            ),
        )
    })?;
    // SAFETY: a valid file id, under the lock.
    sync(|| unsafe { check(at, h5f::H5Fstart_swmr_write(file.id())) })?;
    Ok(())
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
                // SAFETY: a valid dataset id; the type id is owned by `Owned`.
                let vl = sync(|| unsafe {
                    Owned::ok(hdf5_sys::h5d::H5Dget_type(ds.id())).map(|t| has_varlen(t.id()))
                });
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

/// Whether datatype `t` is or contains variable-length data.
///
/// # Safety
/// The caller holds the HDF5 lock and `t` is a valid datatype id.
unsafe fn has_varlen(t: hid_t) -> bool {
    // SAFETY: forwarded from the caller; member and base type ids are owned
    // by `Owned`.
    unsafe {
        match h5t::H5Tget_class(t) {
            H5T_class_t::H5T_VLEN => true,
            H5T_class_t::H5T_STRING => h5t::H5Tis_variable_str(t) != 0,
            H5T_class_t::H5T_COMPOUND => {
                let n = h5t::H5Tget_nmembers(t).max(0) as c_uint;
                (0..n).any(|i| {
                    Owned::ok(h5t::H5Tget_member_type(t, i)).is_none_or(|m| has_varlen(m.id()))
                })
            }
            H5T_class_t::H5T_ARRAY => {
                Owned::ok(h5t::H5Tget_super(t)).is_none_or(|b| has_varlen(b.id()))
            }
            H5T_class_t::H5T_NO_CLASS => true,
            _ => false,
        }
    }
}

/// For a load through a live reader: the vector's `count` as of now, read
/// with everything below the vector closed again afterwards, so that the
/// load that follows opens its datasets anew and sees extents that cover it
/// (a dataset opened before `count` was read may predate the commit that
/// wrote it). `None` for other files.
pub(crate) fn count_before_open(parent: &Group, name: &str, access: Access) -> Result<Option<u64>> {
    let Ok(file) = parent.file() else {
        return Ok(None);
    };
    if !is_live_reader(&file) {
        return Ok(None);
    }
    let (group, walked) = crate::vector::open_vector_group(parent, name, access)?;
    let meta = crate::codec::open_group(&group, "metadata", "$")?;
    let count = crate::vector::read_count(&meta)?;
    drop((meta, group, walked));
    Ok(Some(count))
}
