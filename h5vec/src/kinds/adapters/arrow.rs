//! The adapters' untyped side (feature `arrow`): the [`ArrowAdapter`]
//! trait each adapter's `arrow.rs` implements (the registry that lists
//! them is `registry.rs`).

use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field};
use hdf5::Group;

use crate::arrow::read::nodes::BoxNode;
use crate::error::Result;
use crate::schema::{Kind, Schema, Stored};

/// The untyped (Arrow) side of an adapter (SPEC.md section 11).
pub(crate) trait ArrowAdapter: Sync {
    /// The storage kind of the adapter's nodes.
    fn kind(&self) -> Kind;
    /// The codec identifier of the adapter's nodes.
    fn codec(&self) -> &'static str;
    /// The Arrow type of one of the adapter's nodes; an error naming
    /// `path` when the node is not the adapter's layout.
    fn arrow_type(&self, node: &Schema, path: &str) -> Result<DataType>;
    /// `field` (of [`Self::arrow_type`]) with what Arrow readers need
    /// besides the type (an extension type).
    fn annotate(&self, field: Field, path: &str) -> Result<Field>;
    /// Whether a column read as Arrow type `ty` is the adapter's.
    fn reads(&self, ty: &DataType) -> bool;
    /// The reader of one of the adapter's nodes read as Arrow type `ty`
    /// (one [`Self::reads`]): the `values` of `group` (`member` = None)
    /// or the list leaf `member`, checked as the typed load checks them.
    fn open_reader(
        &self,
        group: &Group,
        member: Option<&str>,
        node: &Stored,
        path: &str,
        count: u64,
        ty: &DataType,
    ) -> Result<BoxNode>;
    /// The node an Arrow field without `h5vec.schema` metadata is saved
    /// as (what a typed save of the Rust type writes), or `None` when
    /// the field is not the adapter's.
    fn default_node(&self, field: &Field) -> Option<Schema>;
    /// `arr` in the form the column writers take (the stored numbers),
    /// or `None` when it is not of the adapter's Arrow type. `row(i)`
    /// names row `i` in errors.
    fn to_stored(&self, arr: &dyn Array, row: &dyn Fn(usize) -> String)
        -> Result<Option<ArrayRef>>;
}
