//! The `dense` kind's Arrow reader (SPEC.md section 11): a dense node as a
//! `FixedSizeList` of its element, nested once per dimension (h5py's order:
//! `[[i32; 2]; 3]` is `FixedSizeList<FixedSizeList<Int32, 2>, 3>`), values
//! row-major. The leaves are read by the scalar kind's readers
//! (`kinds/scalar/arrow/read.rs`), wrapped in the levels found here.

use arrow_schema::DataType;
use hdf5::Group;

use crate::arrow::mapping::dense_shape;
use crate::arrow::read::nodes::{BoxNode, Levels};
use crate::error::Result;
use crate::kinds::scalar::arrow::read::{open_leaf, LeafAt};
use crate::schema::{Schema, Stored};

/// The `FixedSizeList` levels of `ty` (innermost first) and its leaf type.
fn levels_of(ty: &DataType) -> (Levels, DataType) {
    let mut levels = Vec::new();
    let mut t = ty.clone();
    while let DataType::FixedSizeList(f, n) = t {
        levels.push((f.clone(), n));
        t = f.data_type().clone();
    }
    levels.reverse();
    (Levels(levels), t)
}

/// Opens the dense leaf at `at`, `count` rows at least, typed `ty`.
fn open_at(
    at: LeafAt<'_>,
    node: &Stored,
    path: &str,
    count: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    let (levels, leaf) = levels_of(ty);
    let inner: Vec<u64> = dense_shape(&Schema::from(node), path)?
        .into_iter()
        .map(|d| d as u64)
        .collect();
    open_leaf(at, node, path, count, &leaf, levels, &inner)
}

/// Opens the dense node whose data group is `group`, `count` rows at
/// least, typed `ty` (`FixedSizeList` levels around numbers, `Boolean`,
/// `Utf8` chars or a labels dictionary).
pub(crate) fn open(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    open_at(LeafAt::Group(group), node, path, count, ty)
}

/// Opens the dense list elements `name` of the list group `parent`, `rows`
/// elements at least, typed `ty`.
pub(crate) fn open_element(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    open_at(LeafAt::Member(parent, name), node, path, rows, ty)
}
