//! Building the readers of a schema tree: one column reader per node of a
//! vector's stored schema, each opened on the checks of the typed load.

use arrow_schema::{DataType, Field, FieldRef};
use hdf5::Group;

use crate::arrow::mapping;
use crate::codec::open_group;
use crate::error::{Error, Place, Result};
use crate::kinds::list::{
    check_class, open_list_group, FillDecoder, FillNumber, ItemCodec, StringValuesItem,
};
use crate::kinds::nullable::{check_nullable, child_with_mask, open_mask};
use crate::schema::{ids, Kind, Schema, Stored};

use crate::kinds::scalar::arrow::read::Prim;
use crate::kinds::{blob, constant, dense, json, record, scalar, string, vls};

use super::nodes::{with_prim, BoxNode, Levels, List, Nullable, StrValues, Unknown};
use super::select::has_data;
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
        Kind::List => open_list(group, node, path, count, field)?,
        Kind::Nullable => {
            check_nullable(node, path)?;
            let mask = open_mask(group, path, count)?;
            let inner = open_node(group, &child_with_mask(node, path)?, path, count, field)?;
            Box::new(Nullable { mask, inner })
        }
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

/// A list group `group` of `count` rows.
fn open_list(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
) -> Result<BoxNode> {
    let (offsets, total) = open_list_group(group, node, path, count)?;
    let DataType::LargeList(item_field) = field.data_type() else {
        return Err(Error::invalid(path, "a list without a list type"));
    };
    let child = node.child(0, path)?;
    let ipath = format!("{path}[]");
    if !has_data(child) {
        crate::limits::check_rows_without_data(total, "list elements without data", &ipath)?;
    }
    let item = open_item(group, "VALUES", child, &ipath, total, item_field)?;
    Ok(Box::new(List {
        offsets,
        total,
        item,
        field: item_field.clone(),
        offs: Vec::new(),
    }))
}

/// The element member `name` of a list group `parent`, at least `rows` elements.
fn open_item(
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
        Kind::FillNullable => {
            let want = Schema::new(Kind::FillNullable, ids::FILL_SCHEMA, ids::FILL_CODEC, "")
                .encoded(node.encoded_type.as_deref().unwrap_or(""));
            node.expect(&want, path)?;
            fn fill<T: arrow_array::types::ArrowPrimitiveType>(
                parent: &Group,
                name: &str,
                path: &str,
                rows: u64,
            ) -> Result<BoxNode>
            where
                T::Native: FillNumber,
            {
                let (col, fill) =
                    FillDecoder::<T::Native>::open(parent, name, path, rows)?.into_parts();
                Ok(Box::new(Prim::<T> {
                    col,
                    fill,
                    levels: Levels::default(),
                    lent: None,
                }))
            }
            with_prim!(field.data_type(), T => fill::<T>(parent, name, path, rows)?,
                _ => return Err(Error::mismatch(path, "a fill_nullable number", field.data_type())))
        }
        Kind::StringValues => Box::new(StrValues {
            dec: StringValuesItem::open(parent, name, node, path, rows)?,
            at: Place::new(path, crate::codec::member_path(parent, name)),
        }),
        Kind::List => {
            let g = open_group(parent, name, path)?;
            open_list(&g, node, path, rows, field)?
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
            Box::new(Nullable { mask, inner })
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
