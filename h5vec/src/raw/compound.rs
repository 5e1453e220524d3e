//! Process-wide compound types h5vec makes once and never closes (the
//! `{r, i}` compound of `crate::kinds::complex`).

use std::ffi::CStr;

use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t};

use super::ffi::sync;

/// A new compound type of `2 * size` bytes with members `first` at offset
/// 0 and `second` at offset `size`, both of type `part()` (`size` bytes):
/// its id, which the caller keeps for the process's lifetime, or -1 if
/// HDF5 fails (the type is closed again).
#[cfg_attr(
    not(any(feature = "arrow", feature = "num-complex")),
    allow(dead_code, reason = "made for complex numbers, read by those features")
)]
pub(crate) fn pair_compound(
    first: &CStr,
    second: &CStr,
    part: fn() -> hid_t,
    size: usize,
) -> hid_t {
    // SAFETY: a new compound type of `2 * size` bytes with two members of
    // `size` bytes at offsets 0 and `size`; closed again on failure; the
    // names are NUL-terminated.
    sync(|| unsafe {
        let t = h5t::H5Tcreate(H5T_class_t::H5T_COMPOUND, 2 * size);
        if t < 0 {
            return t;
        }
        let p = part();
        if h5t::H5Tinsert(t, first.as_ptr(), 0, p) < 0
            || h5t::H5Tinsert(t, second.as_ptr(), size, p) < 0
        {
            h5t::H5Tclose(t);
            return -1;
        }
        t
    })
}
