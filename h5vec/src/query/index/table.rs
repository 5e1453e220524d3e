//! h5col tables: an index dataset's link from its column, HEP001's
//! `SEARCH_INDEX_LIST` (SPEC.md 14.6), as h5col's
//! `references.append_ref_to_array_attr` writes it.
//!
//! ```text
//! TABLE/<column>                 the column dataset
//!   @SEARCH_INDEX_LIST           1-D array of H5T_STD_REF_OBJ object references,
//!                                one per index dataset of the column
//! TABLE/SEARCH_INDEXES/<column>__sorted_rows, ...
//! ```
//!
//! References are compared with references made to the index, never
//! followed. HDF5 attributes cannot grow: the list is rewritten whole.

use hdf5::Group;
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5a, h5r, h5s, h5t};

use crate::error::{At, Error, Result};
use crate::raw::ffi::check;
use crate::raw::{self, sync, Owned};

/// The list attribute.
pub(crate) const LIST: &str = "SEARCH_INDEX_LIST";

/// An object reference (`H5T_STD_REF_OBJ`) to member `name` of `loc`.
fn obj_ref(loc: &Group, name: &str, at: impl At) -> Result<h5r::hobj_ref_t> {
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
                h5r::H5R_type_t::H5R_OBJECT1,
                -1,
            )
        })
    })?;
    Ok(r)
}

/// The references of `obj`'s list attribute (empty when absent); an
/// error when it is not a 1-D (or scalar) array of `H5T_STD_REF_OBJ`.
fn read_list(obj: &hdf5::Location, at: impl At) -> Result<Vec<h5r::hobj_ref_t>> {
    if !raw::has_attr(obj, LIST, at)? {
        return Ok(Vec::new());
    }
    let ap = at.place().attribute(LIST);
    let a = obj.attr(LIST).map_err(|e| Error::hdf5(ap.clone(), e))?;
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

/// Rewrites `obj`'s list attribute with `refs` (deleted when empty).
fn write_list(obj: &hdf5::Location, refs: &[h5r::hobj_ref_t], at: impl At) -> Result<()> {
    let ap = at.place().attribute(LIST);
    if raw::has_attr(obj, LIST, at)? {
        obj.delete_attr(LIST)
            .map_err(|e| Error::hdf5(ap.clone(), e))?;
    }
    if refs.is_empty() {
        return Ok(());
    }
    let name = std::ffi::CString::new(LIST).expect("no NUL");
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

/// Links index `name` (a member of `indexes`) from `column`: its
/// reference appended to `SEARCH_INDEX_LIST` unless already there.
pub(crate) fn link(
    column: &hdf5::Location,
    indexes: &Group,
    name: &str,
    at: impl At,
) -> Result<()> {
    let r = obj_ref(indexes, name, at)?;
    let mut refs = read_list(column, at)?;
    if refs.contains(&r) {
        return Ok(());
    }
    refs.push(r);
    write_list(column, &refs, at)
}

/// Removes index `name`'s reference from `column`'s `SEARCH_INDEX_LIST`
/// (the attribute deleted when it becomes empty); call before unlinking
/// the index.
pub(crate) fn unlink(
    column: &hdf5::Location,
    indexes: &Group,
    name: &str,
    at: impl At,
) -> Result<()> {
    let r = obj_ref(indexes, name, at)?;
    let refs = read_list(column, at)?;
    if !refs.contains(&r) {
        return Ok(());
    }
    let kept: Vec<_> = refs.into_iter().filter(|&x| x != r).collect();
    write_list(column, &kept, at)
}

/// Whether `column`'s `SEARCH_INDEX_LIST` references index `name`.
pub(crate) fn linked(
    column: &hdf5::Location,
    indexes: &Group,
    name: &str,
    at: impl At,
) -> Result<bool> {
    let r = obj_ref(indexes, name, at)?;
    Ok(read_list(column, at)
        .map(|l| l.contains(&r))
        .unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_appends_once_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let f = crate::create_file(dir.path().join("t.h5")).unwrap();
        let col = f.new_dataset::<u8>().shape(3).create("c").unwrap();
        let si = f.create_group("SEARCH_INDEXES").unwrap();
        si.new_dataset::<u64>()
            .shape(3)
            .create("c__sorted_rows")
            .unwrap();
        si.new_dataset::<u8>()
            .shape((1, 1))
            .create("c__bitmap")
            .unwrap();
        link(&col, &si, "c__sorted_rows", "$").unwrap();
        link(&col, &si, "c__bitmap", "$").unwrap();
        link(&col, &si, "c__sorted_rows", "$").unwrap();
        assert_eq!(col.attr(LIST).unwrap().size(), 2);
        assert!(linked(&col, &si, "c__bitmap", "$").unwrap());
        unlink(&col, &si, "c__sorted_rows", "$").unwrap();
        assert_eq!(col.attr(LIST).unwrap().size(), 1);
        assert!(!linked(&col, &si, "c__sorted_rows", "$").unwrap());
        unlink(&col, &si, "c__bitmap", "$").unwrap();
        assert!(!col.attr_names().unwrap().contains(&LIST.to_owned()));
        // Not a reference array: an error naming the attribute.
        col.new_attr::<u8>()
            .create(LIST)
            .unwrap()
            .write_scalar(&1u8)
            .unwrap();
        let e = link(&col, &si, "c__bitmap", "$").unwrap_err().to_string();
        assert!(
            e.contains("SEARCH_INDEX_LIST") && e.contains("object references"),
            "{e}"
        );
    }
}
