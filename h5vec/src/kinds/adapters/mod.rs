//! Adapters: Rust types that are not storage kinds of their own but are
//! stored on one (`scalar` or `dense`) under a codec or an encoded type of
//! their own, checked both ways: `mapped` (the [`Mapped`] trait and its
//! codec) is the machinery of those stored as plain numbers under a codec
//! of their own (`time`, `uuid`); `half` and `complex` are leaf numbers of
//! HDF5 types of their own under the identity codec. Each adapter is a
//! folder holding its layout (`mod.rs`), its typed codec (`typed.rs`) and,
//! with feature `arrow`, its untyped side (`arrow.rs`): an
//! [`ArrowAdapter`] listed in [`ARROW_ADAPTERS`], which the Arrow mapping,
//! reader and writer consult instead of naming the adapter (`uuid`, and
//! `time` with one per codec), or, for `half` and `complex`, which Arrow
//! handles as number types (`Float16`, `Struct { r, i }` leaves of the
//! number writers), the functions of their own that `arrow/` calls.
//!
//! A new adapter is its folder plus three one-line registrations:
//! 1. its codec identifier in `schema::ids`;
//! 2. `pub(crate) mod NAME;` below;
//! 3. its [`ArrowAdapter`] in [`ARROW_ADAPTERS`].
//!
//! The adapters `offset` and `map` are still files of `kinds/` whose Arrow
//! sides live in `arrow/` (`kinds::mapped` and `kinds::time`, the paths
//! `offset.rs` names, are re-exported there).
//!
//! [`Mapped`]: mapped::Mapped

pub(crate) mod complex;
pub(crate) mod half;
pub(crate) mod mapped;
pub(crate) mod time;
pub(crate) mod uuid;

#[cfg(feature = "arrow")]
pub(crate) use arrow_side::{by_codec, reading, writing, ArrowAdapter, ARROW_ADAPTERS};

#[cfg(feature = "arrow")]
mod arrow_side {
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
        fn to_stored(
            &self,
            arr: &dyn Array,
            row: &dyn Fn(usize) -> String,
        ) -> Result<Option<ArrayRef>>;
    }

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
}
