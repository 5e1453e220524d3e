//! The schema node of every Arrow field a record batch brings (SPEC.md
//! section 11, "Metadata"): the node in the field's `h5vec.schema`
//! metadata, checked against the field's type, or else the node of the Rust
//! type a user would write for that Arrow type (the default table).

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};

use crate::codec::{child_path, Codec};
use crate::error::{Error, Result};
use crate::kinds::adapters::map::entry_options;
use crate::kinds::list::{items_path, FillItem, ItemCodec, LeafItem, StringValuesItem};
use crate::kinds::nullable::nullable_schema;
use crate::kinds::scalar::ScalarCodec;
use crate::kinds::string::{OptStringCodec, StringCodec};
use crate::options::{SaveOptions, WriteCtx};
use crate::schema::{ids, Kind, Schema};

use super::super::mapping::{field_of, SCHEMA_KEY, VALUE_COLUMN};

/// The root node of a vector written from batches of `schema`, with the
/// batch schema's `h5vec.schema` when present (checked against the
/// columns), else a record of the columns' nodes.
pub(crate) fn root_node(schema: &ArrowSchema, opts: &SaveOptions) -> Result<Schema> {
    if let Some(json) = schema.metadata().get(SCHEMA_KEY) {
        let node = parse(json, "$")?;
        check_known(&node, "$")?;
        check_root(schema, &node)?;
        return Ok(node);
    }
    if schema.fields().is_empty() {
        // A struct without stored fields is a constant, as a derived one is.
        return Ok(constant_node("()"));
    }
    record_node(schema.fields(), "$", opts, "the batch's columns")
}

/// Checks that the columns of `schema` are what root node `node` reads as
/// (SPEC.md section 11): the fields of a record root, or one column.
pub(super) fn check_root(schema: &ArrowSchema, node: &Schema) -> Result<()> {
    if node.kind == Kind::Record {
        let want = field_of(VALUE_COLUMN, node, false, "$")?;
        let DataType::Struct(fields) = want.data_type() else {
            return Err(Error::invalid("$", "a record node without a struct type"));
        };
        check_fields(fields, schema.fields(), "$")
    } else {
        match schema.fields().len() {
            1 => {
                let want = field_of(VALUE_COLUMN, node, false, "$")?;
                check_type(&want, &schema.fields()[0], "$", &node.kind)
            }
            n => Err(Error::mismatch(
                "$",
                format!(
                    "one column for a vector of `{}` elements (not a record)",
                    node.kind
                ),
                format!("{n} columns"),
            )),
        }
    }
}

/// The node of field `field` at logical path `path`; `item` says whether it
/// is a list's element (whose defaults differ: SPEC.md section 4.2).
pub(crate) fn field_node(
    field: &Field,
    path: &str,
    opts: &SaveOptions,
    item: bool,
) -> Result<Schema> {
    if let Some(json) = field.metadata().get(SCHEMA_KEY) {
        let node = parse(json, path)?;
        check_known(&node, path)?;
        let want = field_of(field.name(), &node, false, path)?;
        check_type(&want, field, path, &node.kind)?;
        return Ok(node);
    }
    if item {
        item_node(field, path, opts)
    } else {
        value_node(field, path, opts)
    }
}

/// Checks that this version of h5vec knows every node of the tree `node`
/// at `path` (SPEC.md section 11): a field read from a newer file, whose
/// kind or codec is unknown here, cannot be written back.
pub(crate) fn check_known(node: &Schema, path: &str) -> Result<()> {
    if let Some(why) = super::super::mapping::unknown_node(&node.kind, &node.codec) {
        return Err(Error::mismatch(
            path,
            "a schema kind and codec this version of h5vec writes",
            format!("{why}: this version of h5vec cannot write it"),
        ));
    }
    for (i, c) in node.children.iter().enumerate() {
        let name = match node.kind {
            Kind::Record => node.field_names.as_ref().and_then(|f| f.get(i)),
            Kind::Union => node.variant_names.as_ref().and_then(|f| f.get(i)),
            Kind::Scalar
            | Kind::Dense
            | Kind::Blob
            | Kind::Constant
            | Kind::VlsString
            | Kind::List
            | Kind::StringValues
            | Kind::Nullable
            | Kind::FillNullable
            | Kind::Other(_) => None,
        };
        let p = match (&node.kind, name) {
            (_, Some(n)) => child_path(path, n),
            (Kind::List, _) => items_path(path),
            _ => path.to_owned(),
        };
        check_known(c, &p)?;
    }
    Ok(())
}

pub(crate) fn parse(json: &str, path: &str) -> Result<Schema> {
    serde_json::from_str(json).map_err(|e| {
        Error::mismatch(
            path,
            format!("an h5vec schema node as JSON in the `{SCHEMA_KEY}` metadata"),
            format!("{json:?} ({e})"),
        )
    })
}

/// Checks that `found` has the type (and nullability) `want`, the field
/// node `kind` reads as; metadata and list item names aside.
fn check_type(want: &Field, found: &Field, path: &str, kind: impl std::fmt::Display) -> Result<()> {
    if same_field(want, found) {
        return Ok(());
    }
    Err(Error::mismatch(
        path,
        format!(
            "an Arrow field of type {}{} (what its `{kind}` schema node reads as)",
            want.data_type(),
            if want.is_nullable() { ", nullable" } else { "" }
        ),
        format!(
            "{}{}",
            found.data_type(),
            if found.is_nullable() {
                ", nullable"
            } else {
                ""
            }
        ),
    ))
}

fn check_fields(want: &Fields, found: &Fields, path: &str) -> Result<()> {
    let names = |f: &Fields| f.iter().map(|f| f.name().clone()).collect::<Vec<_>>();
    if names(want) != names(found) {
        return Err(Error::mismatch(
            path,
            format!("columns {:?}", names(want)),
            format!("{:?}", names(found)),
        ));
    }
    for (w, f) in want.iter().zip(found.iter()) {
        let p = child_path(path, f.name());
        let kind = node_kind(w);
        check_type(w, f, &p, &kind)?;
    }
    Ok(())
}

/// The kind a field of the mapping was made for, for errors.
fn node_kind(f: &Field) -> String {
    match f.data_type() {
        DataType::Struct(_) => Kind::Record.to_string(),
        DataType::LargeList(_) => Kind::List.to_string(),
        DataType::FixedSizeList(..) => Kind::Dense.to_string(),
        DataType::Null => Kind::Constant.to_string(),
        _ => "field".into(),
    }
}

/// Whether two fields have the same type and nullability, taking the
/// Arrow types the writer accepts for one node as the same: every string
/// type (and dictionaries of strings), every binary type, `List` and
/// `LargeList` (whatever their item's name), binary and a list of
/// non-null `UInt8`.
fn same_field(a: &Field, b: &Field) -> bool {
    a.is_nullable() == b.is_nullable() && same_type(a.data_type(), b.data_type())
}

fn same_type(a: &DataType, b: &DataType) -> bool {
    use DataType::*;
    match (norm(a), norm(b)) {
        (Norm::Text, Norm::Text) | (Norm::Bytes, Norm::Bytes) => true,
        (Norm::Bytes, Norm::List(f)) | (Norm::List(f), Norm::Bytes) => {
            !f.is_nullable() && f.data_type() == &UInt8
        }
        (Norm::List(x), Norm::List(y)) => same_field(x, y),
        (Norm::Other(FixedSizeList(x, n)), Norm::Other(FixedSizeList(y, m))) => {
            n == m && same_field(x, y)
        }
        (Norm::Other(Struct(x)), Norm::Other(Struct(y))) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(x, y)| x.name() == y.name() && same_field(x, y))
        }
        (Norm::Other(Map(x, sx)), Norm::Other(Map(y, sy))) => sx == sy && same_field(x, y),
        (Norm::Other(Union(x, mx)), Norm::Other(Union(y, my))) => {
            mx == my
                && x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((i, a), (j, b))| i == j && a.name() == b.name() && same_field(a, b))
        }
        (Norm::Other(x), Norm::Other(y)) => x == y,
        _ => false,
    }
}

/// A type as far as the writer tells types apart.
enum Norm<'a> {
    Text,
    Bytes,
    List(&'a Field),
    Other(&'a DataType),
}

fn norm(t: &DataType) -> Norm<'_> {
    match t {
        t if is_text(t) => Norm::Text,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Norm::Bytes,
        DataType::List(f) | DataType::LargeList(f) => Norm::List(f),
        t => Norm::Other(t),
    }
}

/// Strings, and dictionaries of strings.
pub(super) fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(k, v) => k.is_dictionary_key_type() && is_text(v),
        _ => false,
    }
}

fn ctx(opts: &SaveOptions) -> WriteCtx<'_> {
    WriteCtx { opts, len_hint: 0 }
}

/// What a field of an Arrow type outside SPEC.md section 11's table is.
fn unsupported(path: &str, t: &DataType, what: &str) -> Error {
    Error::mismatch(
        path,
        format!(
            "{what} of an Arrow type h5vec stores (numbers, Float16, Boolean, strings, binary, \
             FixedSizeList, List, Struct, Null, Map, Timestamp, Date32, Time32/64, Duration, \
             FixedSizeBinary(16) with arrow.uuid; SPEC.md section 11)"
        ),
        format!("{t}"),
    )
}

fn constant_node(logical: &str) -> Schema {
    Schema::new(Kind::Constant, ids::CONSTANT, ids::CONSTANT_CODEC, logical)
}

/// `nullable` around `inner`, named as `Option<T>` is.
pub(crate) fn nullable(inner: Schema) -> Schema {
    let logical = format!("core::option::Option<{}>", inner.logical_type);
    let mut s = nullable_schema::<()>(inner);
    s.logical_type = logical;
    s
}

/// The scalar node of a number or `Boolean` type, as `ScalarCodec` writes it.
fn scalar_node(t: &DataType, opts: &SaveOptions) -> Option<Schema> {
    macro_rules! scalar {
        ($($arrow:ident => $t:ty),*) => {
            match t {
                $(DataType::$arrow => Some(ScalarCodec::<$t>::schema(&ctx(opts))),)*
                _ => None,
            }
        };
    }
    scalar!(Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64, UInt8 => u8, UInt16 => u16,
        UInt32 => u32, UInt64 => u64, Float32 => f32, Float64 => f64, Boolean => bool)
}

/// The `fill_nullable` node of a number type, as `FillItem` writes it.
fn fill_node(t: &DataType, opts: &SaveOptions) -> Option<Schema> {
    macro_rules! fill {
        ($($arrow:ident => $t:ty),*) => {
            match t {
                $(DataType::$arrow => Some(FillItem::<$t>::schema(&ctx(opts))),)*
                _ => None,
            }
        };
    }
    fill!(Int8 => i8, Int16 => i16, Int32 => i32, Int64 => i64, UInt8 => u8, UInt16 => u16,
        UInt32 => u32, UInt64 => u64, Float32 => f32, Float64 => f64)
}

/// The node of a vector field (or a batch column) of Arrow type `field`.
fn value_node(field: &Field, path: &str, opts: &SaveOptions) -> Result<Schema> {
    let t = field.data_type();
    if let Some(node) = super::typed::default_node(field, path, |f, p| {
        field_node(f, p, &entry_options(opts), false)
    })? {
        return Ok(if field.is_nullable() {
            nullable(node)
        } else {
            node
        });
    }
    let base = match t {
        // Null is the constant whatever the nullability (SPEC.md section 11).
        DataType::Null => return Ok(constant_node("()")),
        t if is_text(t) => {
            return Ok(if field.is_nullable() {
                OptStringCodec::schema(&ctx(opts))
            } else {
                StringCodec::schema(&ctx(opts))
            })
        }
        t => non_null_node(t, path, opts)?,
    };
    Ok(if field.is_nullable() {
        nullable(base)
    } else {
        base
    })
}

/// The node of a list element of Arrow type `field`: what `Vec<T>` and
/// `Vec<Option<T>>` write (SPEC.md section 4.2).
fn item_node(field: &Field, path: &str, opts: &SaveOptions) -> Result<Schema> {
    let t = field.data_type();
    let typed = super::typed::default_node(field, path, |f, p| {
        field_node(f, p, &entry_options(opts), false)
    })?;
    if let Some(node) = typed {
        // Maps are groups, which a MASK beside them makes nullable (4.2).
        return match (field.is_nullable(), &node.kind) {
            (false, _) => Ok(node),
            (true, Kind::List) => Ok(nullable(node)),
            (true, _) => Err(Error::mismatch(
                path,
                "a nullable list element of a type with a layout for missing elements (numbers, \
                 strings, lists, maps; SPEC.md section 4.2)",
                format!("nullable {t}"),
            )),
        };
    }
    if !field.is_nullable() {
        if is_text(t) {
            return Ok(StringValuesItem::schema(&ctx(opts)));
        }
        if matches!(t, DataType::Null) {
            return Err(unsupported(path, t, "a list element"));
        }
        return non_null_node(t, path, opts);
    }
    if let Some(n) = fill_node(t, opts) {
        return Ok(n);
    }
    if is_text(t) {
        return Ok(nullable(StringValuesItem::schema(&ctx(opts))));
    }
    match t {
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => Ok(nullable(non_null_node(t, path, opts)?)),
        _ => Err(Error::mismatch(
            path,
            "a nullable list element of a type with a layout for missing elements (numbers, \
             strings, lists; SPEC.md section 4.2)",
            format!("nullable {t}"),
        )),
    }
}

/// The node of a non-null value of type `t` other than strings and Null.
fn non_null_node(t: &DataType, path: &str, opts: &SaveOptions) -> Result<Schema> {
    if let Some(n) = scalar_node(t, opts) {
        return Ok(n);
    }
    match t {
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            Ok(list_node(LeafItem::<u8>::schema(&ctx(opts))))
        }
        DataType::FixedSizeList(..) => dense_node(t, path),
        DataType::List(f) | DataType::LargeList(f) => {
            Ok(list_node(field_node(f, &items_path(path), opts, true)?))
        }
        DataType::Struct(fields) if fields.is_empty() => Ok(constant_node("()")),
        DataType::Struct(fields) => record_node(fields, path, opts, "a struct"),
        DataType::Union(fields, arrow_schema::UnionMode::Dense) => union_node(fields, path, opts),
        t => Err(unsupported(path, t, "a field")),
    }
}

/// A union (SPEC.md section 4.4) of a dense `Union` whose type ids are
/// 0, 1, ... in order: one variant per child, named as it, a `Struct` of
/// its fields (a constant for an empty one; a tuple for fields named `1`,
/// `2`, ...).
fn union_node(
    fields: &arrow_schema::UnionFields,
    path: &str,
    opts: &SaveOptions,
) -> Result<Schema> {
    let mut names = Vec::with_capacity(fields.len());
    let mut children = Vec::with_capacity(fields.len());
    for (k, (id, f)) in fields.iter().enumerate() {
        let p = child_path(path, f.name());
        if usize::try_from(id).ok() != Some(k) {
            return Err(Error::mismatch(
                path,
                "a Union with type ids 0, 1, ... in order (the stored tags)",
                format!("type id {id} for child {k}"),
            ));
        }
        let node = match f.data_type() {
            DataType::Struct(fs) if fs.is_empty() => constant_node("()"),
            DataType::Struct(fs) => {
                let mut r = record_node(fs, &p, opts, "a variant")?;
                // Fields `1`, `2`, ...: a tuple variant, as the derive names them.
                if fs
                    .iter()
                    .enumerate()
                    .all(|(i, f)| *f.name() == (i + 1).to_string())
                {
                    r.codec = ids::TUPLE.into();
                }
                r
            }
            t => return Err(unsupported(&p, t, "a union variant (a Struct)")),
        };
        names.push(f.name().clone());
        children.push(node);
    }
    let logical = format!("enum {{ {} }}", names.join(", "));
    let mut s = Schema::new(Kind::Union, ids::UNION, ids::H5VEC_CODEC, &logical);
    s.variant_values = Some((0..names.len() as i64).collect());
    s.variant_names = Some(names);
    s.children = children;
    Ok(s)
}

fn list_node(item: Schema) -> Schema {
    let mut s = Schema::new(
        Kind::List,
        ids::LIST,
        ids::H5VEC_CODEC,
        &format!("alloc::vec::Vec<{}>", item.logical_type),
    );
    s.children.push(item);
    s
}

/// A dense node of nested `FixedSizeList`s of a number or `Boolean`, as
/// `DenseCodec` writes it for `[[T; d2]; d1]`.
fn dense_node(t: &DataType, path: &str) -> Result<Schema> {
    let mut dims = Vec::new();
    let mut leaf = t;
    while let DataType::FixedSizeList(f, n) = leaf {
        dims.push(i64::from(*n));
        leaf = f.data_type();
    }
    let opts = SaveOptions::default();
    let scalar = scalar_node(leaf, &opts).ok_or_else(|| {
        Error::mismatch(
            path,
            "a FixedSizeList of numbers or Boolean (a dense array)",
            format!("{t}"),
        )
    })?;
    let mut logical = scalar.logical_type.clone();
    for d in dims.iter().rev() {
        logical = format!("[{logical}; {d}]");
    }
    let mut s = Schema::new(Kind::Dense, ids::DENSE, &scalar.codec, &logical);
    s.encoded_type = scalar.encoded_type;
    dims.reverse();
    s.dimensions = Some(dims);
    Ok(s)
}

/// A record (`HDF5Vectors.StructCodec`) of `fields`, each field's node
/// from its own metadata or type. `what` names the fields for errors.
fn record_node(fields: &Fields, path: &str, opts: &SaveOptions, what: &str) -> Result<Schema> {
    let mut names: Vec<String> = Vec::with_capacity(fields.len());
    let mut children = Vec::with_capacity(fields.len());
    for f in fields.iter() {
        let p = child_path(path, f.name());
        if names.contains(f.name()) {
            return Err(Error::bad_name(
                p,
                format!("{what} has two fields named {:?}", f.name()),
            ));
        }
        children.push(field_node(f, &p, opts, false)?);
        names.push(f.name().clone());
    }
    let logical = format!(
        "struct {{ {} }}",
        names
            .iter()
            .zip(&children)
            .map(|(n, c)| format!("{n}: {}", c.logical_type))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut s = Schema::new(Kind::Record, ids::RECORD, ids::STRUCT, &logical);
    s.field_names = Some(names);
    s.children = children;
    Ok(s)
}
