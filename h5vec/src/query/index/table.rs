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

use crate::error::{At, Result};
use crate::raw;

/// The list attribute.
pub(crate) const LIST: &str = "SEARCH_INDEX_LIST";

/// Links index `name` (a member of `indexes`) from `column`: its
/// reference appended to `SEARCH_INDEX_LIST` unless already there.
pub(crate) fn link(
    column: &hdf5::Location,
    indexes: &Group,
    name: &str,
    at: impl At,
) -> Result<()> {
    let r = raw::member_obj_ref(indexes, name, at)?;
    let mut refs = raw::read_obj_ref_list(column, LIST, at)?;
    if refs.contains(&r) {
        return Ok(());
    }
    refs.push(r);
    raw::write_obj_ref_list(column, LIST, &refs, at)
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
    let r = raw::member_obj_ref(indexes, name, at)?;
    let refs = raw::read_obj_ref_list(column, LIST, at)?;
    if !refs.contains(&r) {
        return Ok(());
    }
    let kept: Vec<_> = refs.into_iter().filter(|&x| x != r).collect();
    raw::write_obj_ref_list(column, LIST, &kept, at)
}

/// Whether `column`'s `SEARCH_INDEX_LIST` references index `name`.
pub(crate) fn linked(
    column: &hdf5::Location,
    indexes: &Group,
    name: &str,
    at: impl At,
) -> Result<bool> {
    let r = raw::member_obj_ref(indexes, name, at)?;
    Ok(raw::read_obj_ref_list(column, LIST, at)
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
