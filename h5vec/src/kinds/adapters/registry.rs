//! [`ARROW_ADAPTERS`], every adapter's untyped side, which the Arrow
//! mapping, reader and writer consult instead of naming an adapter; and
//! the lookups they use.

use arrow_schema::{DataType, Field};

use super::arrow::ArrowAdapter;
use crate::schema::{Kind, Schema};

/// Every adapter's untyped side.
pub(crate) static ARROW_ADAPTERS: &[&dyn ArrowAdapter] = &[
    &super::uuid::arrow::UUID,
    &super::time::arrow::INSTANT,
    &super::time::arrow::DATE,
    &super::time::arrow::TIME_OF_DAY,
    &super::time::arrow::DURATION,
];

/// The adapter of nodes of kind `kind` and codec `codec`.
pub(crate) fn by_codec(kind: &Kind, codec: &str) -> Option<&'static dyn ArrowAdapter> {
    ARROW_ADAPTERS
        .iter()
        .copied()
        .find(|a| a.kind() == *kind && a.codec() == codec)
}

/// The adapter whose columns are read as Arrow type `ty`.
pub(crate) fn reading(ty: &DataType) -> Option<&'static dyn ArrowAdapter> {
    ARROW_ADAPTERS.iter().copied().find(|a| a.reads(ty))
}

/// The default node of `field` by the adapter that owns it.
pub(crate) fn writing(field: &Field) -> Option<Schema> {
    ARROW_ADAPTERS.iter().find_map(|a| a.default_node(field))
}
