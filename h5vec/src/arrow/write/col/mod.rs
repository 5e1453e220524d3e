//! One encoder per schema node, built from the node at run time: the
//! datasets come from the typed codecs' own create and append functions
//! (`create_values`, `create_leaf`, `create_list_group`, `StringCodec`,
//! `BlobCodec`, ...), so a batch written here has exactly the layout a
//! typed save of the same Rust type has. Values go from Arrow buffers into
//! the column writers' buffers in bulk; nulls go to masks and to the
//! placeholders the typed encoders write (SPEC.md sections 3, 4).
//!
//! This file holds the encoder type `Col` and the schema-node queries its
//! constructors share; `create` and `resume` build it for a new vector and
//! for an append, `buffer` moves Arrow arrays into it, `numbers` holds the
//! number, Bool and char leaf writers, `lists` the list writer and `arrays`
//! the Arrow input side (positions for errors, string and binary arrays,
//! null checks).

mod arrays;
mod buffer;
mod create;
mod lists;
mod numbers;
mod resume;

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::column::PodWriter;
use crate::error::{Error, Result};
use crate::kinds::blob::BlobEncoder;
use crate::kinds::json::JsonEncoder;
use crate::kinds::list::StringValuesEncoder;
use crate::kinds::nullable::MaskedEncoder;
use crate::kinds::string::StringEncoder;
use crate::kinds::vls::VlsEncoder;
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

use crate::arrow::mapping::{dense_shape, number_type};

use super::typed;

pub(crate) use arrays::{check_nulls, hole, wrong_array, At};
use numbers::{Fill, Leaves, Src};

/// JSON and blob columns are written from text and bytes already encoded:
/// their codecs' value type is never serialized here.
type Any = serde_json::Value;

/// The raw leaf of a scalar or dense node: its encoded type and where its
/// values come from.
fn leaf_of(node: &Schema, path: &str) -> Result<(String, Src)> {
    let enc = node.encoded_type.clone().unwrap_or_default();
    let number = number_type(&enc).is_some();
    let src = match node.codec.as_str() {
        ids::IDENTITY if enc == "Bool" => Src::Bool,
        ids::IDENTITY | ids::ENUM if number => Src::Number,
        ids::IDENTITY if matches!(enc.as_str(), "Float16" | "ComplexF32" | "ComplexF64") => {
            Src::Number
        }
        // SPEC.md sections 4.6 and 4.7: the adapters' numbers (times'
        // Int64/Int32 counts, UUIDs' bytes).
        c if number
            && crate::kinds::adapters::ARROW_ADAPTERS
                .iter()
                .any(|a| a.codec() == c) =>
        {
            Src::Number
        }
        ids::CHAR if enc == "Int32" => Src::Char,
        c => {
            return Err(Error::mismatch(
                path,
                "numbers or Bool (IdentityCodec), Int32 (CharCodec) or integers (EnumCodec)",
                format!("codec `{c}` with encoded type `{enc}`"),
            ))
        }
    };
    Ok((enc, src))
}

/// A dense node's element shape, outermost first, and its leaves per row.
fn shape_of(node: &Schema, path: &str) -> Result<(Vec<usize>, usize)> {
    let dims = dense_shape(node, path)?;
    let mut shape = Vec::with_capacity(dims.len());
    let mut per = 1usize;
    for d in dims {
        let d = usize::try_from(d)
            .map_err(|_| Error::invalid(path, format!("dense dimension {d} out of range")))?;
        per = per
            .checked_mul(d)
            .ok_or_else(|| Error::invalid(path, "dense element too large"))?;
        shape.push(d);
    }
    Ok((shape, per))
}

fn first_child<'a>(node: &'a Schema, path: &str) -> Result<&'a Schema> {
    node.children
        .first()
        .ok_or_else(|| Error::mismatch(path, "schema child 1", "nothing"))
}

fn record_names<'a>(node: &'a Schema, path: &str) -> Result<&'a [String]> {
    let names = node.field_names.as_deref().unwrap_or(&[]);
    if names.len() != node.children.len() {
        return Err(Error::mismatch(
            path,
            format!("{} field names (one per child schema)", node.children.len()),
            names.len(),
        ));
    }
    Ok(names)
}

/// The options of `ctx` with `vls_strings` as a node says, so that
/// `StringCodec` creates the layout of that node.
fn with_vls<R>(ctx: &WriteCtx<'_>, vls: bool, f: impl FnOnce(&WriteCtx<'_>) -> R) -> R {
    let opts = ctx.opts.clone().vls_strings(vls);
    f(&WriteCtx {
        opts: &opts,
        len_hint: ctx.len_hint,
    })
}

fn not_here(node_kind: &Kind, what: &str, path: &str) -> Error {
    Error::mismatch(
        path,
        format!("a schema kind that can be {what}"),
        format!("kind `{node_kind}`"),
    )
}

/// One node's encoder.
// One encoder per column, built once per save: the size of the largest
// variant costs nothing, and boxing would add an indirection per batch.
#[allow(clippy::large_enum_variant)]
pub(super) enum Col {
    /// Scalars and dense arrays of numbers, Bool, char, enums (and list leaves).
    Values {
        w: Leaves,
        per: usize,
        src: Src,
    },
    /// `String` (variable-length or VLS).
    Str(StringEncoder),
    /// `Option<String>` as VLS with a placeholder.
    OptVls(VlsEncoder),
    Json(JsonEncoder<Any>),
    Blob(BlobEncoder<Any>),
    Constant,
    Record {
        names: Vec<String>,
        cols: Vec<Col>,
    },
    List(Box<ListCol>),
    Masked(MaskedEncoder<Box<Col>>),
    /// `Option<number>` list elements.
    Fill(Fill),
    /// `String` list elements.
    StrValues(StringValuesEncoder),
    /// Enums with data (SPEC.md section 4.4).
    Union(Box<crate::kinds::union::arrow::write::UnionCol<Col>>),
    /// Labelled enums: codes from a dictionary of labels.
    Labels(Box<crate::kinds::union::arrow::write::LabelsCol<Col>>),
}

/// A list group: `OFFSETS` and the elements' encoder.
pub(super) struct ListCol {
    offsets: PodWriter<u64>,
    end: u64,
    items: Col,
}

impl crate::kinds::union::arrow::write::VariantCol for Col {
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
    fn write(&mut self, arr: &dyn Array, holes: Option<&NullBuffer>, at: &At<'_>) -> Result<()> {
        Col::write(self, arr, holes, at)
    }
    fn flush(&mut self) -> Result<()> {
        Col::flush(self)
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
