//! Building the readers of a schema tree: one column reader per node of a
//! vector's stored schema, each opened on the checks of the typed load.
//! `open_node` (a vector's nodes) and `open_item` (list elements) dispatch
//! on the node's kind to the kind's reader (`kinds/<kind>/arrow/read.rs`),
//! handing themselves to the kinds that open children.

use arrow_schema::{DataType, Field, FieldRef};
use hdf5::Group;

use crate::arrow::mapping;
use crate::codec::open_group;
use crate::error::{Error, Result};
use crate::kinds::list::check_class;
use crate::kinds::{blob, constant, dense, json, list, nullable, record, scalar, string, vls};
use crate::schema::{ids, Kind, Stored};

use super::nodes::{BoxNode, Unknown};
use super::typed;

/// The reader of a node this version does not know (SPEC.md section 11):
/// nothing below it is opened, and reading it is an error naming `path`.
fn unknown_reader(node: &Stored, path: &str) -> Option<BoxNode> {
    let why = mapping::unknown(node)?;
    Some(Box::new(Unknown {
        path: path.to_owned(),
        why,
    }))
}

/// The readers of `node`, whose data group is `group`, `count` rows, typed
/// as `field`.
pub(super) fn open_node(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
) -> Result<BoxNode> {
    if let Some(node) = unknown_reader(node, path) {
        return Ok(node);
    }
    Ok(match &node.kind {
        Kind::Scalar if matches!(field.data_type(), DataType::LargeUtf8) => {
            string::arrow::read::open(group, node, path, count)?
        }
        Kind::Scalar | Kind::Dense if typed::is_typed(field.data_type()) => {
            typed::open_typed(group, None, node, path, count, field.data_type())?
        }
        Kind::Scalar => scalar::arrow::read::open(group, node, path, count, field.data_type())?,
        Kind::Dense => dense::arrow::read::open(group, node, path, count, field.data_type())?,
        Kind::List if node.codec == ids::MAP_CODEC => {
            typed::open_map(group, node, path, count, field, open_item)?
        }
        Kind::Record => record::arrow::read::open(group, node, path, count, field, open_node)?,
        Kind::Union => crate::kinds::union::arrow::read::open_union(
            group, node, path, count, field, open_node,
        )?,
        Kind::Constant => constant::arrow::read::open(group, node, path, field)?,
        Kind::Blob => blob::arrow::read::open(group, node, path, count)?,
        Kind::VlsString if node.codec == ids::JSON => {
            json::arrow::read::open(group, node, path, count)?
        }
        Kind::VlsString => vls::arrow::read::open(group, node, path, count)?,
        Kind::List => list::arrow::read::open(group, node, path, count, field, open_item)?,
        Kind::Nullable => nullable::arrow::read::open(group, node, path, count, field, open_node)?,
        other => {
            return Err(Error::mismatch(
                path,
                "a schema kind of a vector field (scalar, dense, record, constant, blob, \
                 vls_string, list, nullable)",
                format!("`{other}`"),
            ))
        }
    })
}

/// The element member `name` of a list group `parent`, at least `rows` elements.
pub(super) fn open_item(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    field: &FieldRef,
) -> Result<BoxNode> {
    if let Some(node) = unknown_reader(node, path) {
        return Ok(node);
    }
    Ok(match &node.kind {
        Kind::Scalar | Kind::Dense if typed::is_typed(field.data_type()) => {
            typed::open_typed(parent, Some(name), node, path, rows, field.data_type())?
        }
        Kind::List if node.codec == ids::MAP_CODEC => {
            let g = open_group(parent, name, path)?;
            typed::open_map(&g, node, path, rows, field, open_item)?
        }
        Kind::Scalar | Kind::Dense if matches!(field.data_type(), DataType::LargeUtf8) => {
            return Err(Error::mismatch(
                path,
                "list elements h5vec stores (numbers, bool, char, enums, arrays, strings as \
                 string_values, lists, records)",
                "variable-length strings",
            ));
        }
        Kind::Scalar => {
            scalar::arrow::read::open_element(parent, name, node, path, rows, field.data_type())?
        }
        Kind::Dense => {
            dense::arrow::read::open_element(parent, name, node, path, rows, field.data_type())?
        }
        Kind::FillNullable => list::arrow::read::open_fill(parent, name, node, path, rows, field)?,
        Kind::StringValues => list::arrow::read::open_strings(parent, name, node, path, rows)?,
        Kind::List => {
            list::arrow::read::open_element(parent, name, node, path, rows, field, open_item)?
        }
        Kind::Record => {
            record::arrow::read::open_element(parent, name, node, path, rows, field, open_node)?
        }
        Kind::Union => {
            let g = open_group(parent, name, path)?;
            check_class(&g, crate::kinds::union::UNION_VALUES, path)?;
            crate::kinds::union::arrow::read::open_union(&g, node, path, rows, field, open_node)?
        }
        Kind::Nullable => {
            nullable::arrow::read::open_element(parent, name, node, path, rows, field, open_item)?
        }
        other => {
            return Err(Error::mismatch(
                path,
                "a list element kind (scalar, dense, fill_nullable, string_values, list, record, \
                 nullable)",
                format!("`{other}`"),
            ))
        }
    })
}
