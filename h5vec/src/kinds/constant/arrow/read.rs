//! The `constant` kind's Arrow reader (SPEC.md section 11): `count` nulls
//! of type `Null`, nothing read; inside a `nullable` (`Option<()>`), a
//! `Struct` without fields whose validity is the MASK.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, NullArray, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields};
use hdf5::Group;

use crate::arrow::read::nodes::{arrow_err, check_nulls, length, BoxNode, Node};
use crate::codec::expect_members;
use crate::error::{Place, Result};
use crate::schema::{ids, Kind, Schema, Stored};

/// Opens the constant node whose data group is `group`, typed as `field`
/// (`Null`, or an empty `Struct` inside a `nullable`), after the typed
/// load's checks.
pub(crate) fn open(group: &Group, node: &Stored, path: &str, field: &Field) -> Result<BoxNode> {
    let want = Schema::new(Kind::Constant, ids::CONSTANT, ids::CONSTANT_CODEC, "");
    node.expect(&want, path)?;
    expect_members(group, &[], node, path)?;
    // Inside a `nullable`: a struct without fields (SPEC.md section 11).
    let empty_struct = matches!(field.data_type(), DataType::Struct(f) if f.is_empty());
    Ok(Box::new(Constant {
        at: Place::new(path, group.name()),
        empty_struct,
    }))
}

/// A constant: `Null` values, nothing read; with `empty_struct` (the child
/// of a `nullable`), a struct without fields whose validity is the MASK.
struct Constant {
    at: Place,
    empty_struct: bool,
}

impl Node for Constant {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let n = length(&rows, &self.at)?;
        if !self.empty_struct {
            return Ok(Arc::new(NullArray::new(n)));
        }
        check_nulls(nulls.as_ref(), n, &self.at)?;
        let arr = StructArray::try_new_with_length(Fields::empty(), Vec::new(), nulls, n)
            .map_err(arrow_err(&self.at))?;
        Ok(Arc::new(arr))
    }
}
