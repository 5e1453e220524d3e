//! Compound types of two members: process-wide ones h5vec makes once and
//! never closes (the `{r, i}` compound of `crate::kinds::adapters::complex`, the
//! VLS `{offset, length}` pointer's `Pod` types) and owned ones (the
//! pointer types VLS readers and writers close when done).

use std::ffi::CStr;

use hdf5::Datatype;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t};

use super::ffi::sync;
use crate::error::{At, Context, Error, Result};

/// A new compound type of `2 * size` bytes with members `first` at offset
/// 0 and `second` at offset `size`, both of type `part()` (`size` bytes):
/// its id, which the caller keeps for the process's lifetime, or -1 if
/// HDF5 fails (the type is closed again).
pub(crate) fn pair_compound(first: &CStr, second: &CStr, part: hid_t, size: usize) -> hid_t {
    // SAFETY: a new compound type of `2 * size` bytes with two members of
    // `size` bytes at offsets 0 and `size`; closed again on failure; the
    // names are NUL-terminated.
    sync(|| unsafe {
        let t = h5t::H5Tcreate(H5T_class_t::H5T_COMPOUND, 2 * size);
        if t < 0 {
            return t;
        }
        let p = part;
        if h5t::H5Tinsert(t, first.as_ptr(), 0, p) < 0
            || h5t::H5Tinsert(t, second.as_ptr(), size, p) < 0
        {
            h5t::H5Tclose(t);
            return -1;
        }
        t
    })
}

/// [`pair_compound`] as an owned type, closed when dropped.
pub(crate) fn owned_pair(
    first: &CStr,
    second: &CStr,
    part: hid_t,
    size: usize,
    path: impl At,
) -> Result<Datatype> {
    let t = pair_compound(first, second, part, size);
    if t < 0 {
        return Err(Error::invalid(
            path,
            "cannot create the pointer compound type",
        ));
    }
    // SAFETY: `t` is a valid datatype id just created and held by nothing
    // else; the returned `Datatype` owns (and closes) it.
    sync(|| unsafe { hdf5::from_id::<Datatype>(t) }).at(path)
}
