//! The one way h5vec calls HDF5's C API directly.
//!
//! Every raw call runs inside [`sync`] (hdf5-metno's global, reentrant
//! lock: the bundled HDF5 is not threadsafe, and the `lock-audit` feature
//! aborts h5vec's tests on any call made outside it). A result that can fail
//! goes through [`check`] (or [`call`], which does both), which turns a
//! negative `herr_t`/`hid_t` into an [`Error`](crate::Error) naming the
//! logical path, with HDF5's error stack as its source. An id a call returns
//! is wrapped at once in an owning handle ([`Owned`], or hdf5-metno's own
//! types through `hdf5::from_id`), so no path, early return or `?` leaks it.

use hdf5_sys::h5::{herr_t, hsize_t};
use hdf5_sys::h5f::H5F_libver_t;
use hdf5_sys::h5i::hid_t;

use crate::error::{At, Context, Result};

pub(crate) use hdf5::sync::sync;

/// A raw HDF5 return value whose negative values mean failure.
pub(crate) trait Checked: Copy {
    /// The value, or HDF5's error if it is negative.
    fn checked(self) -> hdf5::Result<Self>;
}
impl Checked for i32 {
    fn checked(self) -> hdf5::Result<Self> {
        hdf5::h5check(self)
    }
}
impl Checked for i64 {
    fn checked(self) -> hdf5::Result<Self> {
        hdf5::h5check(self)
    }
}

/// Turns a negative `herr_t` or `hid_t` from a raw HDF5 call into an error
/// naming `path` (with HDF5's own error stack as the source). Called under
/// the lock, right after the call (the error stack is per call).
pub(crate) fn check<T: Checked>(path: impl At, v: T) -> Result<T> {
    v.checked().at(path)
}

/// Runs one raw HDF5 call under the lock and checks its result ([`check`]).
pub(crate) fn call<T: Checked>(path: impl At, f: impl FnOnce() -> T) -> Result<T> {
    sync(|| check(path, f()))
}

/// An HDF5 id owned by h5vec: released (`H5Idec_ref`, as hdf5-metno's own
/// handles are) when it goes out of scope, under the lock.
pub(crate) struct Owned(hid_t);

impl Owned {
    /// Takes the id a raw HDF5 call returned, or the error it reported.
    ///
    /// # Safety
    /// A non-negative `id` must be one the caller owns (a fresh id from an
    /// HDF5 call that opens or creates, which nothing else closes).
    pub(crate) unsafe fn new(path: impl At, id: hid_t) -> Result<Owned> {
        check(path, id).map(Owned)
    }

    /// Like [`Owned::new`] for best-effort callers: `None` if the call failed.
    ///
    /// # Safety
    /// As for [`Owned::new`].
    pub(crate) unsafe fn ok(id: hid_t) -> Option<Owned> {
        (id >= 0).then_some(Owned(id))
    }

    /// The raw id, valid while `self` lives.
    pub(crate) fn id(&self) -> hid_t {
        self.0
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the id is owned by `self` (constructor's contract) and
        // released exactly once, here, under the lock.
        sync(|| unsafe {
            hdf5_sys::h5i::H5Idec_ref(self.0);
        });
    }
}

unsafe extern "C" {
    // Public HDF5 API (H5Fpublic.h, since 1.10.2) not bound by hdf5-sys.
    pub(crate) fn H5Fincrement_filesize(file_id: hid_t, increment: hsize_t) -> herr_t;
    pub(crate) fn H5Fset_libver_bounds(
        file_id: hid_t,
        low: H5F_libver_t,
        high: H5F_libver_t,
    ) -> herr_t;
}

#[cfg(hdf5_1_12)]
unsafe extern "C" {
    // Public HDF5 API (H5VLconnector.h, since 1.12): the library's own
    // object behind an id (for a file id: the one handle's file struct,
    // distinct for every `H5Fopen` of the same file). Null on error.
    pub(crate) fn H5VLobject(obj_id: hid_t) -> *mut std::ffi::c_void;
}
