//! The HDF5 calls of copies (`crate::compact`): whole objects as they are
//! (`H5Ocopy`), rows in a dataset's own stored type, attributes in their
//! own types, and what a dataset's type holds (which decides how it is
//! copied).

use std::ffi::{c_void, CStr};

use hdf5::{Datatype, Group};
use hdf5_sys::h5a;
use hdf5_sys::h5o;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5s;
use hdf5_sys::h5t::{self, H5T_class_t};

use super::ffi::{call, check, sync, Owned};
use crate::error::{Error, Place, Result};

/// Copies object `name` of `src` to `dst` under the same name, as it is
/// (`H5Ocopy`, default property lists).
pub(crate) fn copy_object(src: &Group, name: &CStr, dst: &Group, at: &Place) -> Result<()> {
    // SAFETY: valid location ids and a NUL-terminated name; default
    // property lists.
    call(at, || unsafe {
        h5o::H5Ocopy(
            src.id(),
            name.as_ptr(),
            dst.id(),
            name.as_ptr(),
            H5P_DEFAULT,
            H5P_DEFAULT,
        )
    })?;
    Ok(())
}

/// What a dataset's type holds.
pub(crate) enum Elements {
    /// Fixed-size values (of this many bytes), copied in the stored type
    /// (no conversion).
    Fixed(usize),
    /// Variable-length UTF-8 (or ASCII) strings.
    VlenStrings,
    /// Any other variable-length type (or references).
    Other,
}

/// What the datatype `dtype` holds.
pub(crate) fn elements(dtype: &Datatype) -> Elements {
    // SAFETY: these only read a valid datatype, under the lock.
    sync(|| unsafe {
        let id = dtype.id();
        if h5t::H5Tis_variable_str(id) > 0 {
            Elements::VlenStrings
        } else if h5t::H5Tdetect_class(id, H5T_class_t::H5T_VLEN) != 0
            || h5t::H5Tdetect_class(id, H5T_class_t::H5T_REFERENCE) != 0
        {
            Elements::Other
        } else {
            Elements::Fixed(h5t::H5Tget_size(id))
        }
    })
}

/// Copies attribute `attr` as `name` of object `dst` (its value in its
/// own type; a variable-length one through its memory type), unless its
/// value takes more than `max_bytes` in memory.
pub(crate) fn copy_attr(
    attr: &hdf5::Attribute,
    dst: &hdf5::Location,
    name: &CStr,
    max_bytes: u64,
    a: &Place,
) -> Result<()> {
    sync(|| copy_attr_locked(attr.id(), dst.id(), name, max_bytes, a))
}

/// [`copy_attr`], called under the lock.
fn copy_attr_locked(
    attr: hdf5_sys::h5i::hid_t,
    dst: hdf5_sys::h5i::hid_t,
    name: &CStr,
    max_bytes: u64,
    a: &Place,
) -> Result<()> {
    // SAFETY: valid attribute and object ids; every id made is owned at
    // once; the buffer holds `points` values of the memory type (its size,
    // 8-byte aligned), and the variable-length data HDF5 allocated into it
    // is reclaimed once, after the write.
    unsafe {
        let ftype = Owned::new(a, h5a::H5Aget_type(attr))?;
        let space = Owned::new(a, h5a::H5Aget_space(attr))?;
        let variable = h5t::H5Tis_variable_str(ftype.id()) > 0
            || h5t::H5Tdetect_class(ftype.id(), H5T_class_t::H5T_VLEN) != 0;
        let mtype = if variable {
            Owned::new(
                a,
                h5t::H5Tget_native_type(ftype.id(), h5t::H5T_direction_t::H5T_DIR_DEFAULT),
            )?
        } else {
            Owned::new(a, h5t::H5Tcopy(ftype.id()))?
        };
        let points = check(a, h5s::H5Sget_simple_extent_npoints(space.id()))?;
        let size = h5t::H5Tget_size(mtype.id()) as u64;
        let total = (points as u64)
            .checked_mul(size)
            .filter(|&t| t <= max_bytes)
            .ok_or_else(|| Error::invalid(a, "attribute too large to copy"))?;
        let mut buf = vec![0u64; (total as usize).div_ceil(8).max(1)];
        let p = buf.as_mut_ptr().cast::<c_void>();
        check(a, h5a::H5Aread(attr, mtype.id(), p))?;
        let made = h5a::H5Acreate2(
            dst,
            name.as_ptr(),
            ftype.id(),
            space.id(),
            H5P_DEFAULT,
            H5P_DEFAULT,
        );
        let written = match Owned::new(a, made) {
            Ok(new) => check(a, h5a::H5Awrite(new.id(), mtype.id(), p)).map(drop),
            Err(e) => Err(e),
        };
        if variable {
            super::compat::reclaim(mtype.id(), space.id(), H5P_DEFAULT, p);
        }
        written
    }
}
