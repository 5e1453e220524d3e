//! The `record` kind's Arrow reader (SPEC.md section 11): a record as a
//! `Struct`, fields in `field_names` order (the root record: the batch's
//! columns), one reader per field opened by the dispatcher it is given;
//! also the root of an h5col table's columns.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, FieldRef, Fields};
use hdf5::Group;

use crate::arrow::read::nodes::{arrow_err, length, BoxNode, Node, OpenNode};
use crate::codec::{expect_members, open_group};
use crate::error::{Error, Place, Result};
use crate::kinds::list::{check_class, RECORD_VALUES};
use crate::schema::{ids, Kind, Schema, Stored};

/// A record: one child per field.
pub(crate) struct Record {
    pub(crate) fields: Fields,
    pub(crate) children: Vec<BoxNode>,
    pub(crate) at: Place,
}

impl Node for Record {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let n = length(&rows, &self.at)?;
        let arrays = self
            .children
            .iter_mut()
            .map(|c| c.read(rows.clone(), None))
            .collect::<Result<Vec<_>>>()?;
        let arr = StructArray::try_new_with_length(self.fields.clone(), arrays, nulls, n)
            .map_err(arrow_err(&self.at))?;
        Ok(Arc::new(arr))
    }
}

/// Opens the record whose data group is `group`, `count` rows at least,
/// typed as `field` (a `Struct`), after the typed load's checks;
/// `open_node` opens each field.
pub(crate) fn open(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
    open_node: OpenNode,
) -> Result<BoxNode> {
    let codec = if node.codec == ids::TUPLE || node.codec == ids::OFFSET_DATE_TIME_CODEC {
        node.codec.as_str()
    } else {
        ids::STRUCT
    };
    let mut want = Schema::new(Kind::Record, ids::RECORD, codec, "");
    let names = node.field_names.clone().unwrap_or_default();
    want.field_names = Some(names.clone());
    want.children = vec![Schema::new(Kind::default(), "", "", ""); names.len()];
    node.expect(&want, path)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    expect_members(group, &refs, node, path)?;
    let DataType::Struct(fields) = field.data_type() else {
        return Err(Error::invalid(path, "a record without a struct type"));
    };
    let mut children = Vec::with_capacity(names.len());
    for ((name, child), f) in names.iter().zip(&node.children).zip(fields.iter()) {
        let p = format!("{path}.{name}");
        let g = open_group(group, name, &p)?;
        children.push(open_node(&g, child, &p, count, f)?);
    }
    Ok(Box::new(Record {
        fields: fields.clone(),
        children,
        at: Place::new(path, group.name()),
    }))
}

/// Opens the record list elements `name` (a RECORD_VALUES group) of the
/// list group `parent`, `rows` elements at least, typed as `field`.
pub(crate) fn open_element(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    field: &FieldRef,
    open_node: OpenNode,
) -> Result<BoxNode> {
    let g = open_group(parent, name, path)?;
    check_class(&g, RECORD_VALUES, path)?;
    open(&g, node, path, rows, field, open_node)
}
