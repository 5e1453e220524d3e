//! Arrow arrays of the types of SPEC.md sections 4.5 to 4.8 as the arrays
//! the column writers take (SPEC.md section 11): the adapters' (times,
//! UUIDs) through `kinds::adapters`, maps as a `LargeList` of their
//! entries; and the nodes fields of these types get without metadata (f16's
//! from its adapter's `arrow` module). The nodes these land in come from the
//! same mapping; only the values change form here.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, LargeListArray};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};

use crate::error::{Error, Result};
use crate::kinds::adapters::{self, half};
use crate::schema::{ids, Kind, Schema};

/// `arr` in the form the column writers take, or `None` if it already is.
/// `row(i)` names row `i` in errors.
pub(super) fn normalize(
    arr: &dyn Array,
    row: impl Fn(usize) -> String,
) -> Result<Option<ArrayRef>> {
    for adapter in adapters::ARROW_ADAPTERS {
        if let Some(stored) = adapter.to_stored(arr, &row)? {
            return Ok(Some(stored));
        }
    }
    Ok(Some(match arr.data_type() {
        DataType::Map(entries, _) => {
            let m = arr.as_map();
            let offs: Vec<i64> = m.value_offsets().iter().map(|&o| i64::from(o)).collect();
            Arc::new(
                LargeListArray::try_new(
                    entries.clone(),
                    OffsetBuffer::new(ScalarBuffer::from(offs)),
                    Arc::new(m.entries().clone()),
                    m.nulls().cloned(),
                )
                .map_err(|e| Error::invalid(row(0), format!("map entries: {e}")))?,
            )
        }
        _ => return Ok(None),
    }))
}

/// The node a field of these types gets without `h5vec.schema` metadata
/// (SPEC.md section 11): what a typed save of the matching Rust type
/// writes. `None` for other fields. `node_of` gives a map's key and value
/// nodes, as record fields.
pub(super) fn default_node(
    field: &Field,
    path: &str,
    node_of: impl Fn(&Field, &str) -> Result<Schema>,
) -> Result<Option<Schema>> {
    if let Some(node) = adapters::writing(field) {
        return Ok(Some(node));
    }
    Ok(Some(match field.data_type() {
        DataType::Float16 => half::arrow::default_node(),
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::mismatch(
                    path,
                    "map entries of a struct",
                    entries.data_type(),
                ));
            };
            if kv.len() != 2 {
                return Err(Error::mismatch(
                    path,
                    "map entries of two fields (key, value)",
                    kv.len(),
                ));
            }
            let ipath = format!("{path}[]");
            let key = node_of(&kv[0], &format!("{ipath}.key"))?;
            let value = node_of(&kv[1], &format!("{ipath}.value"))?;
            let mut entry = Schema::new(
                Kind::Record,
                ids::RECORD,
                ids::STRUCT,
                &format!("({}, {})", key.logical_type, value.logical_type),
            );
            entry.field_names = Some(vec!["key".into(), "value".into()]);
            let logical = format!(
                "std::collections::hash::map::HashMap<{}, {}>",
                key.logical_type, value.logical_type
            );
            entry.children = vec![key, value];
            let mut s = Schema::new(Kind::List, ids::LIST, ids::MAP_CODEC, &logical);
            s.children.push(entry);
            s
        }
        _ => return Ok(None),
    }))
}
