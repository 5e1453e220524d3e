//! One encoder per schema node, built from the node at run time: the
//! datasets come from the typed codecs' own create and append functions
//! (`create_values`, `create_leaf`, `create_list_group`, `StringCodec`,
//! `BlobCodec`, ...), so a batch written here has exactly the layout a
//! typed save of the same Rust type has. Values go from Arrow buffers into
//! the column writers' buffers in bulk; nulls go to masks and to the
//! placeholders the typed encoders write (SPEC.md sections 3, 4).
//!
//! The writers themselves are the kinds' (`kinds/<kind>/arrow/write.rs`).
//! This file holds the dispatcher `Col`, one variant per storage kind
//! holding that kind's writer, and its `ChildCol` impl (how the writers
//! that hold child writers, generic over `ChildCol`, reach it); `create`
//! and `resume` pick the kind's constructor for a new vector and for an
//! append, `buffer` the kind's write and flush; `child` holds the trait
//! and the schema-node queries kinds share, `arrays` the Arrow input side
//! (positions for errors, string and binary arrays, null checks).

mod arrays;
mod buffer;
mod child;
mod create;
mod resume;

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::column::PodWriter;
use crate::error::Result;
use crate::kinds::blob::arrow::write::BlobCol;
use crate::kinds::json::arrow::write::JsonCol;
use crate::kinds::list::arrow::write::{Fill, ListCol};
use crate::kinds::list::StringValuesEncoder;
use crate::kinds::nullable::arrow::write::MaskedCol;
use crate::kinds::record::arrow::write::RecordCol;
use crate::kinds::scalar::arrow::write::ValuesCol;
use crate::kinds::string::StringEncoder;
use crate::kinds::vls::VlsEncoder;
use crate::options::WriteCtx;
use crate::schema::{Schema, Stored};

use super::typed;

pub(crate) use arrays::{bad_key, check_nulls, hole, null_value, wrong_array, At, Bytes, Texts};
pub(crate) use child::{first_child, not_here, ChildCol};

/// One node's encoder.
// One encoder per column, built once per save: the size of the largest
// variant costs nothing, and boxing would add an indirection per batch.
#[allow(clippy::large_enum_variant)]
pub(super) enum Col {
    /// Scalars and dense arrays of numbers, Bool, char, enums (and list leaves).
    Values(ValuesCol),
    /// `String` (variable-length or VLS).
    Str(StringEncoder),
    /// `Option<String>` as VLS with a placeholder.
    OptVls(VlsEncoder),
    Json(JsonCol),
    Blob(BlobCol),
    Constant,
    Record(RecordCol<Col>),
    List(Box<ListCol<Col>>),
    Masked(MaskedCol<Col>),
    /// `Option<number>` list elements.
    Fill(Fill),
    /// `String` list elements.
    StrValues(StringValuesEncoder),
    /// Enums with data (SPEC.md section 4.4).
    Union(Box<crate::kinds::union::arrow::write::UnionCol<Col>>),
    /// Labelled enums: codes from a dictionary of labels.
    Labels(Box<crate::kinds::union::arrow::write::LabelsCol<Col>>),
}

impl ChildCol for Col {
    fn create(node: &Schema, group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self> {
        Col::create(node, group, path, ctx)
    }
    fn append(
        node: &Stored,
        group: &Group,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        Col::append(node, group, path, rows, ctx)
    }
    fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        Col::create_item(node, parent, name, path, ctx)
    }
    fn append_item(
        node: &Stored,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        Col::append_item(node, parent, name, path, rows, ctx)
    }
    fn write(&mut self, arr: &dyn Array, holes: Option<&NullBuffer>, at: &At<'_>) -> Result<()> {
        Col::write(self, arr, holes, at)
    }
    fn flush(&mut self) -> Result<()> {
        Col::flush(self)
    }
    fn u8_leaf(&mut self) -> Option<&mut PodWriter<u8>> {
        match self {
            Col::Values(v) => v.u8_leaf(),
            _ => None,
        }
    }
}

/// `col` with the labels of node `node` (a labelled enum's codes), or
/// `col` itself for an enum without labels.
pub(super) fn with_labels(node: &Schema, col: Col, path: &str) -> Result<Col> {
    Ok(
        match crate::kinds::union::arrow::write::LabelsCol::wrap(node, col, path)? {
            Ok(labels) => Col::Labels(Box::new(labels)),
            Err(col) => col,
        },
    )
}
