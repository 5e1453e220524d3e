//! The `nullable` kind's Arrow reader (SPEC.md section 11): the child's
//! type, nullable, the MASK as validity (around a constant: a `Struct`
//! without fields; around a union: the validity goes to the variants). The
//! child is opened by the dispatcher it is given; as a list element only
//! around `string_values` and lists.

use std::ops::Range;

use arrow_array::ArrayRef;
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_schema::{Field, FieldRef};
use hdf5::Group;

use crate::arrow::read::nodes::{both, validity, BoxNode, Node, OpenItem, OpenNode};
use crate::codec::open_group;
use crate::column::PodReader;
use crate::error::{Error, Result};
use crate::kinds::nullable::{check_nullable, child_with_mask, open_mask, read_mask};
use crate::raw::Bits8;
use crate::schema::{Kind, Stored};

/// A MASK beside the values of its child (TRUE = present).
struct Nullable {
    mask: PodReader<Bits8>,
    inner: BoxNode,
}

impl Node for Nullable {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let m = read_mask(&self.mask, &rows)?;
        let own = validity(BooleanBuffer::collect_bool(m.len(), |i| m[i].0 != 0));
        let nulls = both(nulls, own, m.len(), self.mask.place())?;
        self.inner.read(rows, nulls)
    }
}

/// Opens the nullable node whose data group is `group`, `count` rows at
/// least, typed as `field`; `open_node` opens its child.
pub(crate) fn open(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
    open_node: OpenNode,
) -> Result<BoxNode> {
    check_nullable(node, path)?;
    let mask = open_mask(group, path, count)?;
    let inner = open_node(group, &child_with_mask(node, path)?, path, count, field)?;
    Ok(Box::new(Nullable { mask, inner }))
}

/// Opens the nullable list elements `name` of the list group `parent`
/// (strings or lists), `rows` elements at least, typed as `field`;
/// `open_item` opens the child elements.
pub(crate) fn open_element(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    field: &FieldRef,
    open_item: OpenItem,
) -> Result<BoxNode> {
    check_nullable(node, path)?;
    let child = child_with_mask(node, path)?;
    if child.kind != Kind::StringValues && child.kind != Kind::List {
        return Err(Error::mismatch(
            path,
            "nullable list elements of strings or lists",
            format!("nullable `{}` elements", child.kind),
        ));
    }
    let g = open_group(parent, name, path)?;
    let mask = open_mask(&g, path, rows)?;
    let inner = open_item(parent, name, &child, path, rows, field)?;
    Ok(Box::new(Nullable { mask, inner }))
}
