//! The readers of scalar and dense nodes read as another Arrow type than
//! their numbers' (SPEC.md section 11): the adapters' (times, UUIDs)
//! through `kinds::adapters`, f16 and complex numbers through their
//! adapters' `arrow` modules; and the readers of map nodes (section 4.5),
//! on the same open checks as the typed load.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, MapArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef};
use hdf5::Group;

use crate::error::{Error, Place, Result};
use crate::kinds::adapters::{self, complex, half};
use crate::kinds::list::open_list_group_with;
use crate::schema::{ids, Stored};

use crate::kinds::list::arrow::read::List;

use super::nodes::{arrow_err, BoxNode, Node};

/// Whether a scalar or dense node typed `ty` is read here.
pub(super) fn is_typed(ty: &DataType) -> bool {
    adapters::reading(ty).is_some() || matches!(ty, DataType::Float16 | DataType::Struct(_))
}

/// Opens the reader of a scalar or dense node typed `ty` ([`is_typed`]).
pub(super) fn open_typed(
    group: &Group,
    member: Option<&str>,
    node: &Stored,
    path: &str,
    count: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    if let Some(adapter) = adapters::reading(ty) {
        return adapter.open_reader(group, member, node, path, count, ty);
    }
    if let DataType::Struct(fields) = ty {
        if let Some(reader) = complex::arrow::open_reader(group, member, node, path, count, fields)?
        {
            return Ok(reader);
        }
    }
    match ty {
        DataType::Float16 => half::arrow::open_reader(group, member, node, path, count, ty),
        other => Err(Error::mismatch(
            path,
            "a time, UUID, f16 or complex column",
            format!("Arrow type {other} for a `{}` node", node.kind),
        )),
    }
}

// ---------------------------------------------------------------------------
// Maps.

/// Opens a map node (a list with `h5vec.MapCodec`) typed `field` (an
/// Arrow `Map`): the list of its entry records, read as a `LargeList` and
/// handed out as a `MapArray`. `item` opens the entry record member
/// `VALUES` as the reader of any list element.
pub(super) fn open_map(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
    item: impl FnOnce(&Group, &str, &Stored, &str, u64, &FieldRef) -> Result<BoxNode>,
) -> Result<BoxNode> {
    let (offsets, total) = open_list_group_with(group, node, path, count, ids::MAP_CODEC)?;
    let DataType::Map(entries, _) = field.data_type() else {
        return Err(Error::invalid(path, "a map without a map type"));
    };
    let child = node.child(0, path)?;
    let ipath = format!("{path}[]");
    let inner = item(group, "VALUES", child, &ipath, total, entries)?;
    Ok(Box::new(MapNode {
        list: List {
            offsets,
            total,
            item: inner,
            field: entries.clone(),
            offs: Vec::new(),
        },
        entries: entries.clone(),
        at: Place::new(path, group.name()),
    }))
}

struct MapNode {
    list: List,
    entries: FieldRef,
    at: Place,
}

impl Node for MapNode {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let arr = self.list.read(rows, nulls)?;
        let list = arr
            .as_list_opt::<i64>()
            .ok_or_else(|| Error::invalid(&self.at, "map entries not read as a list"))?;
        let offs = list
            .offsets()
            .iter()
            .map(|&o| i32::try_from(o))
            .collect::<std::result::Result<Vec<i32>, _>>()
            .map_err(|_| {
                Error::invalid(
                    &self.at,
                    "more than 2^31 map entries in one batch (Arrow maps have 32-bit offsets): \
                     read fewer rows at a time",
                )
            })?;
        let entries = list
            .values()
            .as_struct_opt()
            .ok_or_else(|| Error::invalid(&self.at, "map entries not read as records"))?
            .clone();
        let arr = MapArray::try_new(
            self.entries.clone(),
            OffsetBuffer::new(ScalarBuffer::from(offs)),
            entries,
            list.nulls().cloned(),
            false,
        )
        .map_err(arrow_err(&self.at))?;
        Ok(Arc::new(arr))
    }
}
