//! Half floats without the Rust type (SPEC.md section 11): a `Float16`
//! node is Arrow's `Float16`, one of the number types of the mapping and of
//! the column writers (`arrow/write/col/numbers.rs`), so it is no
//! [`ArrowAdapter`](crate::kinds::adapters::ArrowAdapter); these are the
//! parts of those that are the f16 adapter's own: the reader of its stored
//! bits, the default node of a `Float16` field and the bits of an Arrow
//! `Float16` array.

use arrow_array::cast::AsArray;
use arrow_array::types::Float16Type;
use arrow_array::Array;
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use hdf5::Group;

use crate::arrow::read::nodes::{leaf_column, BoxNode};
use crate::arrow::read::retyped::{Native, Retyped};
use crate::error::Result;
use crate::schema::{ids, Kind, Schema, Stored};

use super::F16Bits;

impl Native for F16Bits {
    fn buffer(v: Vec<F16Bits>) -> Buffer {
        Buffer::from_vec(v.into_iter().map(|b| b.0).collect::<Vec<u16>>())
    }
    fn as_i64(self) -> i64 {
        self.0.into()
    }
}

/// The reader of a `Float16` node read as Arrow type `ty` (`Float16`).
pub(crate) fn open_reader(
    group: &Group,
    member: Option<&str>,
    node: &Stored,
    path: &str,
    count: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    Ok(Box::new(Retyped {
        col: leaf_column::<F16Bits>(group, member, node, path, count, &[])?,
        ty: ty.clone(),
        check: None,
    }))
}

/// The node an Arrow `Float16` field without `h5vec.schema` metadata is
/// saved as: what a typed save of `half::f16` writes.
pub(crate) fn default_node() -> Schema {
    Schema::new(
        Kind::Scalar,
        ids::SCALAR,
        ids::IDENTITY,
        "half::binary16::f16",
    )
    .encoded("Float16")
}

/// Appends the bits of the values of `arr`, an Arrow `Float16` array, to
/// `buf`; `None` (nothing appended) for any other array.
pub(crate) fn push_bits(arr: &dyn Array, buf: &mut Vec<F16Bits>) -> Option<()> {
    let a = arr.as_primitive_opt::<Float16Type>()?;
    buf.extend(a.values().iter().map(|h| F16Bits(h.to_bits())));
    Some(())
}
