//! The HDF5 calls behind `crate::h5col`'s table attributes: what an
//! attribute's datatype is, its stored bytes read and written in its own
//! type, and null-padded fixed-length string types. What a table's
//! attributes must be, and the errors' words, stay in `crate::h5col`.

use hdf5::{Attribute, Datatype};
use hdf5_sys::h5a;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::h5t::{self, H5T_class_t};
use hdf5_sys::{h5r, h5s};

use super::ffi::{check, sync, Owned};
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

/// An integer dataset type: its size in bytes, sign and byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IntType {
    /// Bytes per value (1, 2, 4 or 8).
    pub(crate) size: usize,
    /// Signed (two's complement).
    pub(crate) signed: bool,
    /// Big-endian.
    pub(crate) big: bool,
}

impl IntType {
    /// The value stored in `b` (exactly `size` bytes).
    pub(crate) fn decode(self, b: &[u8]) -> i128 {
        let mut le = [0u8; 8];
        le[..self.size].copy_from_slice(&b[..self.size]);
        if self.big {
            le[..self.size].reverse();
        }
        let u = u64::from_le_bytes(le);
        if self.signed {
            let shift = 64 - 8 * self.size as u32;
            i128::from(((u << shift) as i64) >> shift)
        } else {
            i128::from(u)
        }
    }

    /// `v` in this type's bytes, appended to `out`; `None` if it does not fit.
    pub(crate) fn encode(self, v: i128, out: &mut Vec<u8>) -> Option<()> {
        let bits = 8 * self.size as u32;
        let (lo, hi) = if self.signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        if v < lo || v > hi {
            return None;
        }
        let le = (v as i64 as u64).to_le_bytes();
        let start = out.len();
        out.extend_from_slice(&le[..self.size]);
        if self.big {
            out[start..].reverse();
        }
        Some(())
    }
}

/// Whether `dt` is a fixed-length string type padded with spaces
/// (`H5T_STR_SPACEPAD`), whose trailing spaces are padding.
pub(crate) fn is_spacepad(dt: &Datatype) -> bool {
    // SAFETY: queries of the open datatype `dt`, under the library lock.
    sync(|| unsafe {
        h5t::H5Tget_class(dt.id()) == H5T_class_t::H5T_STRING
            && h5t::H5Tget_strpad(dt.id()) == h5t::H5T_str_t::H5T_STR_SPACEPAD
    })
}

/// `dt` as an integer type of 1, 2, 4 or 8 bytes, if it is one.
pub(crate) fn int_type(dt: &Datatype) -> Option<IntType> {
    // SAFETY: queries of the open datatype `dt`, under the library lock.
    sync(|| unsafe {
        if h5t::H5Tget_class(dt.id()) != H5T_class_t::H5T_INTEGER {
            return None;
        }
        let size = h5t::H5Tget_size(dt.id());
        let signed = h5t::H5Tget_sign(dt.id()) == h5t::H5T_sign_t::H5T_SGN_2;
        let big = h5t::H5Tget_order(dt.id()) == h5t::H5T_order_t::H5T_ORDER_BE;
        matches!(size, 1 | 2 | 4 | 8).then_some(IntType { size, signed, big })
    })
}

/// What an object-reference attribute points at, among candidates.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RefTarget {
    /// A null reference.
    Null,
    /// The candidate at this position.
    Found(usize),
    /// None of the candidates (another object, or nothing).
    Elsewhere,
}

/// Which of the objects `names` (members of `loc`) the one-value
/// object-reference attribute `a` points at. The reference is compared
/// with references made to each candidate, never followed: a reference in
/// a hostile file cannot make HDF5 open an arbitrary address. Both
/// `H5T_STD_REF_OBJ` (what h5py writes) and HDF5 1.12's `H5T_STD_REF` are
/// read; anything else is an error at `at`.
pub(crate) fn ref_attr_target(
    a: &Attribute,
    loc: &hdf5::Group,
    names: &[String],
    at: impl At,
) -> Result<RefTarget> {
    let cnames = names
        .iter()
        .map(|n| std::ffi::CString::new(n.as_str()))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| Error::invalid(at, "a member name with a NUL byte"))?;
    let dt = a.dtype().map_err(|e| Error::hdf5(at.place(), e))?;
    // SAFETY: type queries and comparisons of open datatypes, under the lock.
    let (obj_ref, std_ref, class) = sync(|| unsafe {
        (
            h5t::H5Tequal(dt.id(), *h5t::H5T_STD_REF_OBJ) > 0,
            std_ref_type(dt.id()),
            h5t::H5Tget_class(dt.id()),
        )
    });
    if a.size() != 1 || !(obj_ref || std_ref) {
        return Err(Error::mismatch(
            at,
            "one object reference (H5T_STD_REF_OBJ or H5T_STD_REF)",
            format!("{} value(s) of class {class:?}", a.size()),
        ));
    }
    if obj_ref {
        let mut r: h5r::hobj_ref_t = 0;
        // SAFETY: one value of H5T_STD_REF_OBJ (a haddr_t) into `r`.
        sync(|| unsafe {
            check(
                at,
                h5a::H5Aread(a.id(), *h5t::H5T_STD_REF_OBJ, (&raw mut r).cast()),
            )
        })?;
        if r == 0 {
            return Ok(RefTarget::Null);
        }
        for (i, n) in names.iter().enumerate() {
            if member_obj_ref(loc, n, at)? == r {
                return Ok(RefTarget::Found(i));
            }
        }
        return Ok(RefTarget::Elsewhere);
    }
    std_ref_target(loc, &cnames, a, at)
}

/// Whether `dt` is `H5T_STD_REF` (HDF5 1.12+'s references; HDF5 before
/// 1.12 cannot read them, and has no such type).
fn std_ref_type(dt: hid_t) -> bool {
    #[cfg(hdf5_1_12)]
    // SAFETY: a type comparison of an open datatype, under the lock.
    return sync(|| unsafe { h5t::H5Tequal(dt, *h5t::H5T_STD_REF) > 0 });
    #[cfg(not(hdf5_1_12))]
    return {
        let _ = dt;
        false
    };
}

/// [`ref_attr_target`] for an `H5T_STD_REF` value.
#[cfg(hdf5_1_12)]
fn std_ref_target(
    loc: &hdf5::Group,
    cnames: &[std::ffi::CString],
    a: &Attribute,
    at: impl At,
) -> Result<RefTarget> {
    sync(|| {
        let mut r = h5r::H5R_ref_t::default();
        // SAFETY: one value of H5T_STD_REF (an H5R_ref_t buffer) into `r`,
        // released below.
        check(at, unsafe {
            h5a::H5Aread(a.id(), *h5t::H5T_STD_REF, (&raw mut r).cast())
        })?;
        // SAFETY: `r` holds a reference HDF5 decoded; queried, compared and
        // released exactly once.
        let out = unsafe {
            if h5r::H5Rget_type(&raw const r) == h5r::H5R_type_t::H5R_BADTYPE {
                Ok(RefTarget::Null)
            } else {
                let mut found = Ok(RefTarget::Elsewhere);
                for (i, n) in cnames.iter().enumerate() {
                    let mut c = h5r::H5R_ref_t::default();
                    if let Err(e) = check(
                        at,
                        h5r::H5Rcreate_object(loc.id(), n.as_ptr(), H5P_DEFAULT, &raw mut c),
                    ) {
                        found = Err(e);
                        break;
                    }
                    let eq = h5r::H5Requal(&raw const r, &raw const c);
                    h5r::H5Rdestroy(&raw mut c);
                    if eq > 0 {
                        found = Ok(RefTarget::Found(i));
                        break;
                    }
                }
                found
            }
        };
        // SAFETY: `r` was filled by H5Aread above and is released once.
        unsafe { h5r::H5Rdestroy(&raw mut r) };
        out
    })
}

/// [`ref_attr_target`] for an `H5T_STD_REF` value: none before HDF5 1.12
/// ([`std_ref_type`] is false).
#[cfg(not(hdf5_1_12))]
fn std_ref_target(
    _loc: &hdf5::Group,
    _cnames: &[std::ffi::CString],
    _a: &Attribute,
    at: impl At,
) -> Result<RefTarget> {
    Err(Error::invalid(
        at,
        "an H5T_STD_REF reference (needs HDF5 1.12 or newer)",
    ))
}

/// Which of the objects `names` (members of `loc`) each value of the 1-D
/// object-reference attribute `a` (`H5T_STD_REF_OBJ`, what h5py writes)
/// points at, in order; compared, never followed, as in
/// [`ref_attr_target`]. Another type or shape is an error at `at`.
pub(crate) fn ref_list_targets(
    a: &Attribute,
    loc: &hdf5::Group,
    names: &[String],
    at: impl At,
) -> Result<Vec<RefTarget>> {
    let dt = a.dtype().map_err(|e| Error::hdf5(at.place(), e))?;
    // SAFETY: a comparison of open datatypes, under the lock.
    let obj_ref = sync(|| unsafe { h5t::H5Tequal(dt.id(), *h5t::H5T_STD_REF_OBJ) > 0 });
    if !obj_ref || a.shape().len() != 1 {
        return Err(Error::mismatch(
            at,
            "a 1-D array of object references (H5T_STD_REF_OBJ)",
            format!("shape {:?}", a.shape()),
        ));
    }
    let mut refs: Vec<h5r::hobj_ref_t> = vec![0; a.size()];
    // SAFETY: `a.size()` values of H5T_STD_REF_OBJ (each a haddr_t, the
    // element type of `refs`) into `refs`, which holds that many.
    sync(|| unsafe {
        check(
            at,
            h5a::H5Aread(a.id(), *h5t::H5T_STD_REF_OBJ, refs.as_mut_ptr().cast()),
        )
    })?;
    let made = names
        .iter()
        .map(|n| member_obj_ref(loc, n, at))
        .collect::<Result<Vec<_>>>()?;
    Ok(refs
        .iter()
        .map(|&r| match r {
            0 => RefTarget::Null,
            r => made
                .iter()
                .position(|&c| c == r)
                .map_or(RefTarget::Elsewhere, RefTarget::Found),
        })
        .collect())
}

/// Writes the scalar attribute `name` of `obj`: an `H5T_STD_REF_OBJ`
/// object reference (what h5py writes) to member `target` of `loc`.
pub(crate) fn write_obj_ref_attr(
    obj: &hdf5::Location,
    name: &str,
    loc: &hdf5::Group,
    target: &str,
    at: impl At,
) -> Result<()> {
    let cname =
        std::ffi::CString::new(name).map_err(|_| Error::bad_name(at, "name contains NUL"))?;
    let r = member_obj_ref(loc, target, at)?;
    sync(|| {
        // SAFETY: a new scalar dataspace, owned by `space`.
        let space = unsafe { Owned::new(at, h5s::H5Screate(h5s::H5S_class_t::H5S_SCALAR))? };
        // SAFETY: a new attribute of `obj` (open), owned by `attr`.
        let attr = unsafe {
            Owned::new(
                at,
                h5a::H5Acreate2(
                    obj.id(),
                    cname.as_ptr(),
                    *h5t::H5T_STD_REF_OBJ,
                    space.id(),
                    H5P_DEFAULT,
                    H5P_DEFAULT,
                ),
            )?
        };
        // SAFETY: one value of H5T_STD_REF_OBJ (a haddr_t) from `r`.
        check(at, unsafe {
            h5a::H5Awrite(attr.id(), *h5t::H5T_STD_REF_OBJ, (&raw const r).cast())
        })?;
        Ok(())
    })
}

/// An object reference (`H5T_STD_REF_OBJ`) to member `name` of `loc`.
pub(crate) fn member_obj_ref(
    loc: &hdf5::Group,
    name: &str,
    at: impl At,
) -> Result<h5r::hobj_ref_t> {
    let c = std::ffi::CString::new(name).map_err(|_| Error::bad_name(at, "name contains NUL"))?;
    let mut r: h5r::hobj_ref_t = 0;
    sync(|| {
        // SAFETY: an object reference to member `c` of the open group
        // `loc`, written into `r` (one haddr_t).
        check(at, unsafe {
            h5r::H5Rcreate(
                (&raw mut r).cast(),
                loc.id(),
                c.as_ptr(),
                super::compat::OBJECT_REF,
                -1,
            )
        })
    })?;
    Ok(r)
}

/// The references of `obj`'s attribute `list` (empty when absent); an
/// error when it is not a 1-D (or scalar) array of `H5T_STD_REF_OBJ`.
pub(crate) fn read_obj_ref_list(
    obj: &hdf5::Location,
    list: &str,
    at: impl At,
) -> Result<Vec<h5r::hobj_ref_t>> {
    if !super::has_attr(obj, list, at)? {
        return Ok(Vec::new());
    }
    let ap = at.place().attribute(list);
    let a = obj.attr(list).map_err(|e| Error::hdf5(ap.clone(), e))?;
    let dt = a.dtype().map_err(|e| Error::hdf5(ap.clone(), e))?;
    // SAFETY: a comparison of two open datatypes, under the lock.
    let is_ref = sync(|| unsafe { h5t::H5Tequal(dt.id(), *h5t::H5T_STD_REF_OBJ) } > 0);
    if !is_ref || a.ndim() > 1 {
        return Err(Error::mismatch(
            &ap,
            "a 1-D array of object references (H5T_STD_REF_OBJ)",
            format!("{} value(s) of another type or shape", a.size()),
        ));
    }
    let n = a.size();
    let mut out: Vec<h5r::hobj_ref_t> = Vec::new();
    crate::limits::reserve(&mut out, n as u64, &ap)?;
    out.resize(n, 0);
    sync(|| {
        // SAFETY: `out` holds the attribute's `n` values of
        // H5T_STD_REF_OBJ (one haddr_t each).
        check(&ap, unsafe {
            h5a::H5Aread(a.id(), *h5t::H5T_STD_REF_OBJ, out.as_mut_ptr().cast())
        })
    })?;
    Ok(out)
}

/// Rewrites `obj`'s attribute `list` with the references `refs` (deleted
/// when empty).
pub(crate) fn write_obj_ref_list(
    obj: &hdf5::Location,
    list: &str,
    refs: &[h5r::hobj_ref_t],
    at: impl At,
) -> Result<()> {
    let ap = at.place().attribute(list);
    if super::has_attr(obj, list, at)? {
        obj.delete_attr(list)
            .map_err(|e| Error::hdf5(ap.clone(), e))?;
    }
    if refs.is_empty() {
        return Ok(());
    }
    let name =
        std::ffi::CString::new(list).map_err(|_| Error::bad_name(&ap, "name contains NUL"))?;
    let dims = [refs.len() as u64];
    sync(|| {
        // SAFETY: a new 1-D dataspace of `refs.len()` elements, owned by
        // `space`.
        let space = unsafe {
            Owned::new(
                &ap,
                h5s::H5Screate_simple(1, dims.as_ptr(), std::ptr::null()),
            )?
        };
        // SAFETY: a new attribute of the open object `obj`, owned by `attr`.
        let attr = unsafe {
            Owned::new(
                &ap,
                h5a::H5Acreate2(
                    obj.id(),
                    name.as_ptr(),
                    *h5t::H5T_STD_REF_OBJ,
                    space.id(),
                    H5P_DEFAULT,
                    H5P_DEFAULT,
                ),
            )?
        };
        // SAFETY: `refs` holds the attribute's `refs.len()` values of
        // H5T_STD_REF_OBJ.
        check(&ap, unsafe {
            h5a::H5Awrite(attr.id(), *h5t::H5T_STD_REF_OBJ, refs.as_ptr().cast())
        })?;
        Ok(())
    })
}
