//! Links and objects without one: renames, unlinks, anonymous groups (a
//! vector is written unlinked and linked when complete, SPEC.md 5), and the
//! bookkeeping of objects h5vec holds open while no link reaches them
//! ([`Unlinked`], [`HeldObject`]).

use std::ffi::CString;

use hdf5::Group;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5i, h5o};

use super::ffi::{call, sync, Owned};
use crate::error::{At, Context, Error, Result};

/// `name` as a C string, or a bad-name error at `path`.
fn c_name(name: &str, path: impl At) -> Result<CString> {
    CString::new(name).map_err(|_| Error::bad_name(path, "name contains NUL"))
}

/// The number HDF5 gives the open file holding object `id` (the same for
/// every handle of that file), or 0 if it has none.
pub(crate) fn file_number(id: hid_t) -> u64 {
    // SAFETY: `H5Iget_file_id` accepts any id (an invalid one fails) and
    // returns a new file id, owned by an `Owned`; `n` is an output value.
    sync(|| unsafe {
        let Some(f) = Owned::ok(h5i::H5Iget_file_id(id)) else {
            return 0;
        };
        super::compat::fileno(f.id()).unwrap_or(0)
    })
}

/// Creates an anonymous group in the file of `parent`: linked nowhere, so
/// nothing a reader can reach changes while it is written. It is deleted
/// when its last handle closes unless [`link_object`] links it first.
pub(crate) fn create_anon_group(parent: &Group, path: impl At) -> Result<Group> {
    parent.create_group_builder().create(None).at(path)
}

/// Files (by [`file_number`]) in which h5vec holds an object open that no
/// link reaches: the anonymous group of a vector being saved or streamed,
/// or a replaced vector kept until its replacement is committed, one entry
/// per [`Unlinked`].
static UNLINKED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());
/// [`UNLINKED`] in the child of an isolated check
/// ([`crate::forked::fork_safe`]).
static CHILD_UNLINKED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// The list of files with an unlinked object open.
pub(crate) fn unlinked() -> std::sync::MutexGuard<'static, Vec<u64>> {
    // Every update is one push or remove: a poisoned lock is still usable.
    crate::forked::fork_safe(&UNLINKED, &CHILD_UNLINKED)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Marks the file of an object h5vec holds open without a link to it while
/// this lives. [`forget_heap_collections`](super::forget_heap_collections)
/// does nothing meanwhile: evicting the metadata cache while such an object
/// was open made HDF5 hand its storage out again (a later append wrote a
/// chunk over a dataset of a streamed vector's group, linked in between;
/// HDF5 2.x, default file space handling).
pub(crate) struct Unlinked(u64);

impl Unlinked {
    /// Marks the file holding the object `id`.
    pub(crate) fn new(id: hid_t) -> Self {
        let n = file_number(id);
        unlinked().push(n);
        Unlinked(n)
    }
}

impl Drop for Unlinked {
    fn drop(&mut self) {
        let mut u = unlinked();
        if let Some(i) = u.iter().position(|&n| n == self.0) {
            u.swap_remove(i);
        }
    }
}

/// Links the object `id` as `name` in `group`.
fn link_id(id: hid_t, group: &Group, name: &str, path: impl At) -> Result<()> {
    let n = c_name(name, path)?;
    // SAFETY: `id` is an open object and `group` a valid group (callers'
    // handles keep both open); the name is NUL-terminated.
    call(path, || unsafe {
        h5o::H5Olink(id, group.id(), n.as_ptr(), H5P_DEFAULT, H5P_DEFAULT)
    })?;
    Ok(())
}

/// Links the object `obj` (typically anonymous) as `name` in `group`.
pub(crate) fn link_object(
    obj: &hdf5::Location,
    group: &Group,
    name: &str,
    path: impl At,
) -> Result<()> {
    link_id(obj.id(), group, name, path)
}

/// An open handle on an object: while it lives, HDF5 keeps the object's
/// storage even if its last link is deleted (the storage is freed when the
/// handle closes).
pub(crate) struct HeldObject {
    /// Declared first, so the object closes before its file is unmarked.
    obj: Owned,
    /// Marks the file while the object may have no link (see [`Unlinked`]).
    _unlinked: Unlinked,
}

impl HeldObject {
    /// Opens the object linked as `name` in `group`.
    pub(crate) fn open(group: &Group, name: &str, path: impl At) -> Result<Self> {
        let n = c_name(name, path)?;
        // SAFETY: a valid group id and a NUL-terminated name; the opened
        // object is owned by the `Owned`.
        let obj = sync(|| unsafe {
            Owned::new(path, h5o::H5Oopen(group.id(), n.as_ptr(), H5P_DEFAULT))
        })?;
        let id = obj.id();
        Ok(HeldObject {
            obj,
            _unlinked: Unlinked::new(id),
        })
    }

    /// Links the held object as `name` in `group` again.
    pub(crate) fn relink(&self, group: &Group, name: &str, path: impl At) -> Result<()> {
        link_id(self.obj.id(), group, name, path)
    }
}
