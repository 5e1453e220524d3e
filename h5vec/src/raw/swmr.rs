//! The HDF5 and OS calls behind live readers and writers (`crate::live`,
//! SPEC.md section 8): opening a file for SWMR reading or with its status
//! flags cleared, a file's intent and superblock version, the switch to
//! SWMR writing, whether a datatype holds variable-length data, and the
//! one-byte `fcntl` lock a live writer holds. What is refused, and the
//! errors' words, stay in `crate::live`.

use std::ffi::{c_uint, c_void, CStr};

use hdf5::Dataset;
use hdf5_sys::h5f;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p;
use hdf5_sys::h5t::{self, H5T_class_t};

use super::ffi::{check, sync, H5Fset_libver_bounds, Owned};
use crate::error::{At, Context, Result};

/// A file access property list with library version bounds `latest`.
fn latest_fapl(at: impl At) -> Result<Owned> {
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

/// Opens the file `name` read-only for SWMR reading, library version bounds
/// latest, objects evicted from the metadata cache when closed.
pub(crate) fn open_swmr_read(name: &CStr, at: impl At) -> Result<hdf5::File> {
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

/// Opens the file `name` for writing with its superblock's status flags
/// cleared (HDF5's `clear_status_flags` file access property, what
/// `h5clear -s` does), library version bounds latest.
pub(crate) fn open_rw_clearing_flags(name: &CStr, at: impl At) -> Result<hdf5::File> {
    let fapl = latest_fapl(at)?;
    let prop = c"clear_status_flags";
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

/// `file`'s intent flags (`H5F_ACC_*`), 0 if HDF5 cannot tell.
pub(crate) fn intent(file: &hdf5::File) -> c_uint {
    let mut intent: c_uint = 0;
    // SAFETY: a valid file id (held by `file`) and an output integer.
    sync(|| unsafe { h5f::H5Fget_intent(file.id(), &mut intent) });
    intent
}

/// Whether `file` is in SWMR writing mode.
pub(crate) fn is_swmr_writer(file: &hdf5::File) -> bool {
    intent(file) & h5f::H5F_ACC_SWMR_WRITE != 0
}

/// Whether `file` is open for SWMR reading.
pub(crate) fn is_swmr_reader(file: &hdf5::File) -> bool {
    intent(file) & h5f::H5F_ACC_SWMR_READ != 0
}

/// The version of `file`'s superblock.
pub(crate) fn superblock_version(file: &hdf5::File, at: impl At) -> Result<c_uint> {
    // SAFETY: `H5F_info2_t` is plain C data, valid when zeroed.
    let mut info: h5f::H5F_info2_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid file id and an output struct.
    sync(|| unsafe { check(at, h5f::H5Fget_info2(file.id(), &mut info)) })?;
    Ok(info.super_.version)
}

/// Switches `file` to SWMR writing: objects in the 1.10 format or later (a
/// handle from `open_file_rw` has HDF5's default low bound), then
/// `H5Fstart_swmr_write`.
pub(crate) fn start_swmr_write(file: &hdf5::File, at: impl At) -> Result<()> {
    // SAFETY: a valid file id and plain bound values, under the lock.
    sync(|| unsafe {
        check(
            at,
            H5Fset_libver_bounds(
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

/// Whether the datatype of `ds` is or contains variable-length data
/// (HDF5's variable-length strings or sequences, also inside compound or
/// array types); `None` if HDF5 does not give its type.
pub(crate) fn dataset_has_varlen(ds: &Dataset) -> Option<bool> {
    // SAFETY: a valid dataset id; the type id is owned by `Owned`; the lock
    // is held for `has_varlen`.
    sync(|| unsafe { Owned::ok(hdf5_sys::h5d::H5Dget_type(ds.id())).map(|t| has_varlen(t.id())) })
}

/// Whether datatype `t` is or contains variable-length data (an unknown
/// class counts as such).
///
/// # Safety
/// The caller holds the HDF5 lock and `t` is a valid datatype id.
pub(crate) unsafe fn has_varlen(t: hid_t) -> bool {
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

#[cfg(target_os = "linux")]
const SETLK: libc::c_int = libc::F_OFD_SETLK;
#[cfg(target_os = "linux")]
const GETLK: libc::c_int = libc::F_OFD_GETLK;
#[cfg(all(unix, not(target_os = "linux")))]
const SETLK: libc::c_int = libc::F_SETLK;
#[cfg(all(unix, not(target_os = "linux")))]
const GETLK: libc::c_int = libc::F_GETLK;

/// A write lock request for the one byte at `offset`.
#[cfg(unix)]
fn lock_request(kind: libc::c_short, offset: i64) -> libc::flock {
    // SAFETY: `flock` is plain C data, valid when zeroed.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = offset as libc::off_t;
    fl.l_len = 1;
    fl
}

/// Takes a write lock (open file description lock on Linux) on the byte at
/// `offset` of `file`, held while `file` is open; the OS error if another
/// holds it.
#[cfg(unix)]
pub(crate) fn lock_byte(file: &std::fs::File, offset: i64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fl = lock_request(libc::F_WRLCK as libc::c_short, offset);
    // SAFETY: a valid open descriptor and a valid `flock` request.
    if unsafe { libc::fcntl(file.as_raw_fd(), SETLK, &fl) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether another holder has a lock on the byte at `offset` of `file` that
/// keeps out [`lock_byte`].
#[cfg(unix)]
pub(crate) fn byte_locked(file: &std::fs::File, offset: i64) -> bool {
    use std::os::fd::AsRawFd;
    let mut fl = lock_request(libc::F_WRLCK as libc::c_short, offset);
    // SAFETY: a valid open descriptor and a valid `flock` to fill in.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), GETLK, &mut fl) };
    r == 0 && fl.l_type != libc::F_UNLCK as libc::c_short
}
