//! An opened container (vector, h5col table or VLS string array):
//! [`Source`], its batch schema and the reader of its rows, and [`Keep`],
//! what keeps the walked objects open. `source` opens and reads it.

use arrow_schema::SchemaRef;

use crate::guard::Walked;
use crate::vector::Opened;

use super::nodes::BoxNode;

/// An opened container: the batch schema, the reader of its rows, and what
/// keeps the walked objects open.
pub(super) struct Source {
    pub(super) schema: SchemaRef,
    /// A record root (vectors): the columns are its fields.
    pub(super) record_root: bool,
    pub(super) root: BoxNode,
    pub(super) rows: u64,
    /// The root stores nothing (constants): rows per read are capped.
    pub(super) no_data: bool,
    pub(super) _keep: Keep,
}

/// What must stay open while a container is read.
// The fields are never read: holding them keeps the walked objects open.
#[allow(dead_code)]
pub(super) enum Keep {
    Vector(Box<Opened>),
    Walk(Walked),
}
