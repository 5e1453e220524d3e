//! The tag type of a union (SPEC.md section 4.4): an HDF5 enum over an
//! unsigned 8- or 16-bit integer whose members are the variant names with
//! the values 0, 1, 2, ... in declaration order.

use std::ffi::CString;

use hdf5::{Dataset, Datatype};
use hdf5_sys::h5t;

use super::ffi::{check, sync};
use super::types::dataset_type;
use crate::error::{At, Context, Error, Result};

/// The enum type of a union's tags: `names[i] = i` over `u8`
/// (`wide == false`) or `u16`, little-endian in the file (`native ==
/// false`) or the native integer in memory.
pub(crate) fn tag_type(
    names: &[&str],
    wide: bool,
    native: bool,
    path: impl At,
) -> Result<Datatype> {
    let limit = if wide { 1 << 16 } else { 1 << 8 };
    if names.len() > limit {
        return Err(Error::encode(
            path,
            format!(
                "{} variants do not fit a {}-bit tag",
                names.len(),
                if wide { 16 } else { 8 }
            ),
        ));
    }
    let cnames = names
        .iter()
        .map(|n| CString::new(*n))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| Error::encode(path, "a variant name contains NUL"))?;
    // SAFETY: the new enum type is owned by the `Datatype` at once; the
    // names are NUL-terminated and each value is an integer of the enum's
    // base type (u8 or u16, written through a matching local).
    sync(|| unsafe {
        let base = match (wide, native) {
            (false, false) => *h5t::H5T_STD_U8LE,
            (false, true) => *h5t::H5T_NATIVE_UINT8,
            (true, false) => *h5t::H5T_STD_U16LE,
            (true, true) => *h5t::H5T_NATIVE_UINT16,
        };
        let t = check(path, h5t::H5Tenum_create(base))?;
        let dt = hdf5::from_id::<Datatype>(t).at(path)?;
        for (i, name) in cnames.iter().enumerate() {
            let r = if wide {
                let v = i as u16;
                h5t::H5Tenum_insert(t, name.as_ptr(), (&v as *const u16).cast())
            } else {
                let v = i as u8;
                h5t::H5Tenum_insert(t, name.as_ptr(), (&v as *const u8).cast())
            };
            check(path, r)?;
        }
        Ok(dt)
    })
}

/// Whether the datatype of `ds` equals `want` (HDF5's `H5Tequal`: for
/// enums, the base type and every member's name and value).
pub(crate) fn dataset_type_is(ds: &Dataset, want: &Datatype, path: impl At) -> Result<bool> {
    let t = dataset_type(ds, path)?;
    // SAFETY: two valid datatype ids owned by `t` and `want`, under the lock.
    Ok(sync(|| unsafe { h5t::H5Tequal(t.id(), want.id()) > 0 }))
}
