//! The HDF5 calls behind `crate::h5col`'s table attributes: what an
//! attribute's datatype is, its stored bytes read and written in its own
//! type, and null-padded fixed-length string types. What a table's
//! attributes must be, and the errors' words, stay in `crate::h5col`.

use hdf5::{Attribute, Datatype};
use hdf5_sys::h5a;
use hdf5_sys::h5t::{self, H5T_class_t};

use super::ffi::{check, sync};
use super::types::copy_type;
use crate::error::{At, Error, Result};

/// The size of `dt` if it is an unsigned integer type.
pub(crate) fn unsigned_int_size(dt: &Datatype) -> Option<usize> {
    // SAFETY: queries of the open datatype `dt`, under the library lock.
    sync(|| unsafe {
        (h5t::H5Tget_class(dt.id()) == H5T_class_t::H5T_INTEGER
            && h5t::H5Tget_sign(dt.id()) == h5t::H5T_sign_t::H5T_SGN_NONE)
            .then(|| h5t::H5Tget_size(dt.id()))
    })
}

/// (class, size, whether a variable-length string) of `dt`.
pub(crate) fn string_facts(dt: &Datatype) -> (H5T_class_t, usize, bool) {
    // SAFETY: queries of the open datatype `dt`, under the library lock.
    sync(|| unsafe {
        (
            h5t::H5Tget_class(dt.id()),
            h5t::H5Tget_size(dt.id()),
            h5t::H5Tis_variable_str(dt.id()) > 0,
        )
    })
}

/// Bytes the attribute `a` stores for its value.
pub(crate) fn attr_storage_size(a: &Attribute) -> u64 {
    // SAFETY: a query of the open attribute `a`, under the library lock.
    sync(|| unsafe { h5a::H5Aget_storage_size(a.id()) })
}

/// Whether `buf` holds `a.size()` values of the fixed-size, pointer-free
/// type `dt`; an error at `at` if not.
fn fits(a: &Attribute, dt: &Datatype, buf: usize, at: impl At) -> Result<()> {
    // SAFETY: queries of the open datatype `dt`, under the library lock.
    let (size, plain) = sync(|| unsafe {
        (
            h5t::H5Tget_size(dt.id()),
            h5t::H5Tis_variable_str(dt.id()) == 0
                && h5t::H5Tdetect_class(dt.id(), H5T_class_t::H5T_VLEN) == 0
                && h5t::H5Tdetect_class(dt.id(), H5T_class_t::H5T_REFERENCE) == 0,
        )
    });
    if !plain || a.size().checked_mul(size).is_none_or(|n| n > buf) {
        return Err(Error::invalid(
            at,
            "internal: a buffer that does not hold the attribute's values",
        ));
    }
    Ok(())
}

/// Reads every value of the attribute `a` in the fixed-size type `dt` into
/// `buf` (at least `a.size()` values of `dt`).
pub(crate) fn read_attr_bytes(
    a: &Attribute,
    dt: &Datatype,
    buf: &mut [u8],
    at: impl At,
) -> Result<()> {
    fits(a, dt, buf.len(), at)?;
    // SAFETY: `buf` holds all of the attribute's values in `dt`, a type
    // without pointers (checked just above).
    sync(|| unsafe { check(at, h5a::H5Aread(a.id(), dt.id(), buf.as_mut_ptr().cast())) })?;
    Ok(())
}

/// Writes every value of the attribute `a` from `buf` (at least `a.size()`
/// values of the fixed-size type `dt`).
pub(crate) fn write_attr_bytes(
    a: &Attribute,
    dt: &Datatype,
    buf: &[u8],
    at: impl At,
) -> Result<()> {
    fits(a, dt, buf.len(), at)?;
    // SAFETY: `buf` holds all of the attribute's values in `dt`, a type
    // without pointers (checked just above).
    sync(|| unsafe { check(at, h5a::H5Awrite(a.id(), dt.id(), buf.as_ptr().cast())) })?;
    Ok(())
}

/// A fixed-length, null-padded string type of `size` bytes (at least 1),
/// UTF-8 or ASCII.
pub(crate) fn nullpad_string_type(size: usize, utf8: bool, at: impl At) -> Result<Datatype> {
    let dt = copy_type(*h5t::H5T_C_S1, at)?;
    // SAFETY: `dt` is a copy owned here; the setters change only it.
    sync(|| unsafe {
        check(at, h5t::H5Tset_size(dt.id(), size.max(1)))?;
        check(
            at,
            h5t::H5Tset_strpad(dt.id(), h5t::H5T_str_t::H5T_STR_NULLPAD),
        )?;
        check(
            at,
            h5t::H5Tset_cset(
                dt.id(),
                if utf8 {
                    h5t::H5T_cset_t::H5T_CSET_UTF8
                } else {
                    h5t::H5T_cset_t::H5T_CSET_ASCII
                },
            ),
        )
    })?;
    Ok(dt)
}
