//! What the kinds' Arrow writers share without naming the dispatcher
//! `Col`: the trait `ChildCol` a writer holding child writers (a union's
//! variants, a record's fields, a list's elements, a nullable's values) is
//! generic over, which `Col` implements; and the schema-node queries and
//! errors of more than one kind.

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::column::PodWriter;
use crate::error::{Error, Result};
use crate::options::WriteCtx;
use crate::schema::{Kind, Schema, Stored};

use super::arrays::At;

/// The column writer of a child node (`col::Col`: a type parameter of the
/// writers that hold it, so that the kinds' files do not name it).
pub(crate) trait ChildCol: Sized {
    /// Creates the datasets of vector field `node` in `group`.
    fn create(node: &Schema, group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self>;
    /// Opens vector field `node` of `rows` rows in `group` for appending.
    fn append(
        node: &Stored,
        group: &Group,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self>;
    /// Creates list element member `name` of `parent` for element node `node`.
    fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self>;
    /// Opens list element member `name` of `parent` (`rows` elements) for appending.
    fn append_item(
        node: &Stored,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self>;
    /// Buffers the values of `arr` (rows null in `holes` get placeholders).
    fn write(&mut self, arr: &dyn Array, holes: Option<&NullBuffer>, at: &At<'_>) -> Result<()>;
    /// Writes what is buffered.
    fn flush(&mut self) -> Result<()>;
    /// The writer of `UInt8` values one per row, if this is one (a list of
    /// `UInt8` takes Arrow binary values straight into it).
    fn u8_leaf(&mut self) -> Option<&mut PodWriter<u8>>;
}

/// The first child of `node` (a list's elements, a nullable's values).
pub(crate) fn first_child<'a>(node: &'a Schema, path: &str) -> Result<&'a Schema> {
    node.children
        .first()
        .ok_or_else(|| Error::mismatch(path, "schema child 1", "nothing"))
}

/// A node of kind `node_kind` where it cannot be `what`.
pub(crate) fn not_here(node_kind: &Kind, what: &str, path: &str) -> Error {
    Error::mismatch(
        path,
        format!("a schema kind that can be {what}"),
        format!("kind `{node_kind}`"),
    )
}
