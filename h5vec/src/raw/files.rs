//! The HDF5 calls behind `crate::file`: creating files and groups with a
//! given link storage, a file's intent, and what identifies one open file
//! handle (for read-only handles sharing a file with a read-write one).
//! Which properties h5vec's files get, and the errors' words, stay in
//! `crate::file`.

use std::ffi::{c_uint, CStr};

use hdf5::file::{FileAccess, FileCreate};
use hdf5::plist::group_create::GroupCreate;
use hdf5::Group;
use hdf5_sys::h5i::{self, hid_t};
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5f, h5g, h5p};

use super::ffi::{check, sync};
use crate::error::{At, Context, Result};

/// How a group keeps its links: in its object header up to `compact`
/// links (dense storage beyond), a header made with room for
/// `preallocated` links of 16-byte names.
#[derive(Clone, Copy)]
pub(crate) struct LinkStorage {
    /// Links kept in the object header before the switch to a link index.
    pub(crate) compact: u32,
    /// Links the object header has room for from the start.
    pub(crate) preallocated: u32,
}

/// Sets `links` on a group creation (or file creation, for the root group)
/// property list.
///
/// # Safety
/// The caller holds the HDF5 lock, and `plist` is a valid group or file
/// creation property list.
unsafe fn set_link_storage(plist: hid_t, links: LinkStorage, at: impl At) -> Result<()> {
    // SAFETY: a valid creation property list under the lock (caller's
    // contract); both calls take plain values.
    unsafe {
        check(
            at,
            h5p::H5Pset_link_phase_change(plist, links.compact, links.compact * 3 / 4),
        )?;
        check(at, h5p::H5Pset_est_link_info(plist, links.preallocated, 16))?;
    }
    Ok(())
}

/// Creates (or truncates) the file `name` with the properties `fcpl` and
/// `fapl`, its root group keeping its links as `links` says.
pub(crate) fn create_file(
    name: &CStr,
    fcpl: &FileCreate,
    fapl: &FileAccess,
    links: LinkStorage,
    at: impl At,
) -> Result<hdf5::File> {
    sync(|| {
        // SAFETY: valid property lists and a NUL-terminated name; the new
        // file id is owned by the returned `File`.
        unsafe {
            set_link_storage(fcpl.id(), links, at)?;
            let id = check(
                at,
                h5f::H5Fcreate(name.as_ptr(), h5f::H5F_ACC_TRUNC, fcpl.id(), fapl.id()),
            )?;
            hdf5::from_id::<hdf5::File>(id).at(at)
        }
    })
}

/// Creates the group `name` in `parent`, keeping its links as `links`
/// says.
pub(crate) fn create_group(
    parent: &Group,
    name: &CStr,
    links: LinkStorage,
    at: impl At,
) -> Result<Group> {
    let gcpl = GroupCreate::try_new().at(at)?;
    sync(|| {
        // SAFETY: a valid property list, location and NUL-terminated name;
        // the new group id is owned by the returned `Group`.
        unsafe {
            set_link_storage(gcpl.id(), links, at)?;
            let id = check(
                at,
                h5g::H5Gcreate2(
                    parent.id(),
                    name.as_ptr(),
                    H5P_DEFAULT,
                    gcpl.id(),
                    H5P_DEFAULT,
                ),
            )?;
            hdf5::from_id::<Group>(id).at(at)
        }
    })
}

/// `file`'s intent flags (`H5F_ACC_*`), HDF5's error if it cannot tell.
pub(crate) fn checked_intent(file: &hdf5::File, at: impl At) -> Result<c_uint> {
    let mut intent: c_uint = 0;
    // SAFETY: a valid file id (held by `file`) and an output integer, under
    // the lock.
    sync(|| unsafe { check(at, h5f::H5Fget_intent(file.id(), &mut intent)) })?;
    Ok(intent)
}

/// (address of HDF5's per-handle file struct, file number) of `file`:
/// the struct is distinct for every `H5Fopen` of the same file. The
/// address is only for comparing.
pub(crate) fn handle_identity(file: &hdf5::File) -> Option<(usize, u64)> {
    // SAFETY: a valid file id (held by `file`) and an output integer,
    // under the lock; the returned pointer is only compared, never
    // dereferenced.
    sync(|| unsafe {
        let object = super::compat::vol_object(file.id())?;
        Some((object, super::compat::fileno(file.id())?))
    })
}

/// Whether the id `old` is still open, and how many references `file`'s
/// id has, read together under the lock.
pub(crate) fn still_open_and_refs(old: hid_t, file: &hdf5::File) -> (bool, i32) {
    // SAFETY: `H5Iis_valid` and `H5Iget_ref` accept any id, under the lock.
    sync(|| unsafe { (h5i::H5Iis_valid(old) > 0, h5i::H5Iget_ref(file.id())) })
}

/// How group `g` keeps its links now (compact or dense).
#[cfg(test)]
pub(crate) fn group_storage(g: &Group) -> h5g::H5G_storage_type_t {
    // SAFETY: `H5G_info_t` is plain C data, valid when zeroed.
    let mut info: h5g::H5G_info_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid group id and an output struct.
    sync(|| unsafe { h5g::H5Gget_info(g.id(), &mut info) });
    info.storage_type
}

/// Marks the descriptor HDF5 holds for `file` (sec2 driver) close-on-exec.
/// HDF5 opens files without `O_CLOEXEC`, so a process started while a file
/// was open (any `std::process::Command`, from any thread) inherited the
/// descriptor and with it HDF5's `flock` lock: another open of the file
/// then failed ("unable to lock file") until that process ended. Other
/// drivers are left alone. Best effort: a process started between HDF5's
/// `open` and this call still inherits it.
pub(crate) fn close_on_exec(file: &hdf5::File) {
    #[cfg(unix)]
    if let Some(f) = super::gheap::sec2_file(file) {
        use std::os::fd::AsRawFd;
        let fd = f.as_raw_fd();
        // SAFETY: `fd` is the open descriptor HDF5 holds for `file` (alive
        // while `file` is); F_GETFD/F_SETFD read and set only its flags.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = file;
}
