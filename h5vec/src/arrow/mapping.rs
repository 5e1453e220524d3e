//! The Arrow type of every schema node, and the metadata that leads back
//! from an Arrow field to its node (SPEC.md section 11, "The mapping" and
//! "Metadata"). Both directions use this: the reader types its arrays with
//! these fields, the writer checks record batches against them.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::extension::Json;
use arrow_schema::{
    DataType, Field, Fields, Schema as ArrowSchema, SchemaRef, UnionFields, UnionMode,
};

use crate::error::{Error, Result};
use crate::kinds::adapters;
use crate::schema::{ids, Kind, Schema, Stored};

/// Field metadata: the field's whole schema node as compact JSON.
pub(crate) const SCHEMA_KEY: &str = "h5vec.schema";
/// Field metadata: the node's `kind` (a nullable node's child's).
pub(crate) const KIND_KEY: &str = "h5vec.kind";
/// Field metadata: the node's `codec` (a nullable node's child's).
pub(crate) const CODEC_KEY: &str = "h5vec.codec";
/// Field metadata: the node's `encoded_type`, when it has one (a nullable
/// node's child's).
pub(crate) const ENCODED_KEY: &str = "h5vec.encoded_type";
/// Batch schema metadata: the root node's kind (beside [`SCHEMA_KEY`],
/// the root node).
pub(crate) const ROOT_KEY: &str = "h5vec.root";
/// The column of a batch whose root is not a record.
pub(crate) const VALUE_COLUMN: &str = "value";
/// The item field of a `LargeList` (and of a `FixedSizeList`).
pub(crate) const ITEM: &str = "item";
/// Field metadata: `"true"` on a field whose node this version of h5vec
/// cannot read (an unknown kind or codec; SPEC.md section 11).
pub(crate) const UNKNOWN_KEY: &str = "h5vec.unknown";
/// Field metadata: `"flat"` on an enum with data in its flat form
/// ([`flatten_unions`](super::flatten_unions), SPEC.md section 11).
pub(crate) const UNION_KEY: &str = "h5vec.union";
/// The value of [`UNION_KEY`] for the flat form.
pub(crate) const FLAT: &str = "flat";

/// The codec identifiers this version of h5vec knows (SPEC.md sections 2
/// and 4.5 to 4.8), besides the adapters' ([`adapters::ARROW_ADAPTERS`]). A known codec where its kind does not take it is a
/// malformed file, not an unknown one.
const KNOWN_CODECS: &[&str] = &[
    ids::IDENTITY,
    ids::CONSTANT_CODEC,
    ids::CHAR,
    ids::ENUM,
    ids::JSON,
    ids::STRUCT,
    ids::TUPLE,
    ids::BINCODE,
    ids::H5VEC_CODEC,
    ids::MASK_CODEC,
    ids::PLACEHOLDER_CODEC,
    ids::OFFSET_DATE_TIME_CODEC,
    ids::MAP_CODEC,
    ids::FILL_CODEC,
];

/// What this version of h5vec does not know about a node of kind `kind`
/// and codec `codec` (`unknown kind `tensor` (codec ...)`, `unknown codec
/// h5vec.FutureCodec (kind scalar)`), or `None` when it knows both. Forward compatibility (SPEC.md section 11):
/// such a field is listed, and reading it is this error.
pub(crate) fn unknown_node(kind: &Kind, codec: &str) -> Option<String> {
    if let Kind::Other(kind) = kind {
        return Some(format!("unknown kind `{kind}` (codec {codec})"));
    }
    let adapted = adapters::ARROW_ADAPTERS.iter().any(|a| a.codec() == codec);
    if !KNOWN_CODECS.contains(&codec) && !adapted {
        return Some(format!("unknown codec {codec} (kind {kind})"));
    }
    None
}

/// A schema node as written ([`Schema`]) or as read ([`Stored`]): what
/// [`unknown`] looks at.
pub(crate) trait NodeView {
    fn kind(&self) -> &Kind;
    fn codec(&self) -> &str;
    fn child(&self, i: usize) -> Option<&Self>;
}

impl NodeView for Schema {
    fn kind(&self) -> &Kind {
        &self.kind
    }
    fn codec(&self) -> &str {
        &self.codec
    }
    fn child(&self, i: usize) -> Option<&Self> {
        self.children.get(i)
    }
}

impl NodeView for Stored {
    fn kind(&self) -> &Kind {
        &self.kind
    }
    fn codec(&self) -> &str {
        &self.codec
    }
    fn child(&self, i: usize) -> Option<&Self> {
        self.children.get(i)
    }
}

/// [`unknown_node`] of the node a field of `node` is: the node itself, the
/// child of a `nullable` node (an `Option` of something unknown is unknown
/// as a whole), or the key of a map (Arrow's maps need a key type).
pub(crate) fn unknown<N: NodeView>(node: &N) -> Option<String> {
    let own = |n: &N| unknown_node(n.kind(), n.codec());
    if let Some(why) = own(node) {
        return Some(why);
    }
    let node = match node.kind() {
        Kind::Nullable => node.child(0)?,
        _ => node,
    };
    if let Some(why) = own(node) {
        return Some(why);
    }
    if *node.kind() == Kind::List && node.codec() == ids::MAP_CODEC {
        let key = node.child(0)?.child(0)?;
        let key = match key.kind() {
            Kind::Nullable => key.child(0)?,
            _ => key,
        };
        return own(key).map(|why| format!("a map key of {why}"));
    }
    None
}

/// The Arrow field of node `node` named `name`, with its metadata.
pub(crate) fn field_for(name: &str, node: &Schema) -> Result<Field> {
    field_of(name, node, true, "$")
}

/// The batch schema of a vector whose root node is `root`: the fields of a
/// record root, or one field `value`; with `h5vec.schema` and `h5vec.root`.
pub(crate) fn schema_for(root: &Schema) -> Result<SchemaRef> {
    let fields = root_fields(root, true)?;
    let mut meta = HashMap::new();
    meta.insert(SCHEMA_KEY.to_owned(), node_json(root, "$")?);
    meta.insert(ROOT_KEY.to_owned(), root.kind.to_string());
    Ok(Arc::new(ArrowSchema::new_with_metadata(fields, meta)))
}

/// The batch columns of root node `root` (with or without metadata).
pub(crate) fn root_fields(root: &Schema, meta: bool) -> Result<Fields> {
    if root.kind == Kind::Record {
        Ok(record_fields(root, meta, "$")?)
    } else {
        let f = if meta {
            field_for(VALUE_COLUMN, root)?
        } else {
            field_of(VALUE_COLUMN, root, false, "$")?
        };
        Ok(Fields::from(vec![f]))
    }
}

/// The field of `node` named `name` at logical path `path`; `meta` says
/// whether fields carry the h5vec metadata (files with a schema tree) or
/// none (h5col tables, whose nodes are inferred).
///
/// A node this version does not know ([`unknown`]) is a nullable `Null`
/// field with the node in its metadata and `h5vec.unknown = "true"`: it is
/// listed, and reading it is an error (SPEC.md section 11).
pub(crate) fn field_of(name: &str, node: &Schema, meta: bool, path: &str) -> Result<Field> {
    if unknown(node).is_some() {
        let mut field = Field::new(name, DataType::Null, true);
        if meta {
            let mut m = field_metadata(node, path)?;
            m.insert(UNKNOWN_KEY.to_owned(), "true".to_owned());
            field.set_metadata(m);
        }
        return Ok(field);
    }
    let (ty, nullable) = type_of(node, meta, path)?;
    let mut field = Field::new(name, ty, nullable);
    if meta {
        let described = described(node);
        field.set_metadata(field_metadata(node, path)?);
        if let Some(adapter) = adapters::by_codec(&described.kind, &described.codec) {
            field = adapter.annotate(field, path)?;
        }
        if matches!(described.kind, Kind::Scalar | Kind::VlsString) && described.codec == ids::JSON
        {
            field
                .try_with_extension_type(Json::default())
                .map_err(|e| Error::invalid(path, format!("the arrow.json extension: {e}")))?;
        }
    }
    Ok(field)
}

/// The node a field's `h5vec.kind`, `h5vec.codec` and
/// `h5vec.encoded_type` describe: a `nullable` node's child, else the node.
fn described(node: &Schema) -> &Schema {
    if node.kind == Kind::Nullable {
        node.children.first().unwrap_or(node)
    } else {
        node
    }
}

/// The `h5vec.*` metadata of a field of node `node` (SPEC.md section 11):
/// the node as JSON, and its (a `nullable` node's child's) kind, codec and
/// encoded type.
pub(crate) fn field_metadata(node: &Schema, path: &str) -> Result<HashMap<String, String>> {
    let described = described(node);
    let mut m = HashMap::new();
    m.insert(SCHEMA_KEY.to_owned(), node_json(node, path)?);
    m.insert(KIND_KEY.to_owned(), described.kind.to_string());
    m.insert(CODEC_KEY.to_owned(), described.codec.clone());
    if let Some(e) = &described.encoded_type {
        m.insert(ENCODED_KEY.to_owned(), e.clone());
    }
    Ok(m)
}

/// The node as compact JSON (SPEC.md section 11).
pub(crate) fn node_json(node: &Schema, path: &str) -> Result<String> {
    serde_json::to_string(node).map_err(|e| Error::encode(path, e))
}

fn record_fields(node: &Schema, meta: bool, path: &str) -> Result<Fields> {
    let names = node.field_names.as_deref().unwrap_or(&[]);
    if names.len() != node.children.len() {
        return Err(Error::mismatch(
            path,
            format!("{} field names (one per child schema)", node.children.len()),
            names.len(),
        ));
    }
    names
        .iter()
        .zip(&node.children)
        .map(|(n, c)| field_of(n, c, meta, &format!("{path}.{n}")).map(Arc::new))
        .collect::<Result<Vec<_>>>()
        .map(Fields::from)
}

/// The primitive type of encoded type `enc` (the Julia spelling).
pub(crate) fn number_type(enc: &str) -> Option<DataType> {
    Some(match enc {
        "Int8" => DataType::Int8,
        "Int16" => DataType::Int16,
        "Int32" => DataType::Int32,
        "Int64" => DataType::Int64,
        "UInt8" => DataType::UInt8,
        "UInt16" => DataType::UInt16,
        "UInt32" => DataType::UInt32,
        "UInt64" => DataType::UInt64,
        "Float32" => DataType::Float32,
        "Float64" => DataType::Float64,
        _ => return None,
    })
}

fn is_integer(enc: &str) -> bool {
    number_type(enc).is_some_and(|t| t.is_integer())
}

/// The Arrow type of a scalar (or dense element) with `codec` and encoded
/// type `enc`: what SPEC.md section 11 maps it to.
fn leaf_type(codec: &str, enc: Option<&str>, path: &str) -> Result<DataType> {
    let enc_s = enc.unwrap_or("");
    let t = match codec {
        ids::IDENTITY => match enc_s {
            "Bool" => Some(DataType::Boolean),
            "String" => Some(DataType::LargeUtf8),
            e => number_type(e),
        },
        ids::CHAR if enc_s == "Int32" => Some(DataType::Utf8),
        ids::ENUM if is_integer(enc_s) => number_type(enc_s),
        ids::JSON if enc_s == "String" => Some(DataType::LargeUtf8),
        _ => None,
    };
    t.ok_or_else(|| {
        Error::mismatch(
            path,
            "a scalar h5vec reads without its type (numbers, Bool or String with \
             HDF5Vectors.IdentityCodec, Int32 with CharCodec, integers with EnumCodec, String \
             with JSONCodec)",
            format!(
                "codec `{codec}` with encoded type `{}`",
                enc.unwrap_or("(none)")
            ),
        )
    })
}

/// The Arrow type of a labelled enum (an `EnumCodec` node with
/// `variant_names`): `Dictionary(Int32, Utf8)`, keys the positions in
/// `variant_names` (SPEC.md section 11).
pub(crate) fn label_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The labels of an `EnumCodec` node: its variant names and their values,
/// checked (one value per name, no value twice, at most `i32::MAX`);
/// `None` for a node without labels.
pub(crate) fn labels<'a>(
    node: &'a Schema,
    path: &str,
) -> Result<Option<(&'a [String], &'a [i64])>> {
    if node.codec != ids::ENUM {
        return Ok(None);
    }
    let (Some(names), Some(values)) = (
        node.variant_names.as_deref(),
        node.variant_values.as_deref(),
    ) else {
        return match (&node.variant_names, &node.variant_values) {
            (None, None) => Ok(None),
            _ => Err(Error::mismatch(
                path,
                "enum labels: `variant_names` and `variant_values` together",
                "only one of them",
            )),
        };
    };
    if names.len() != values.len() || i32::try_from(names.len()).is_err() {
        return Err(Error::mismatch(
            path,
            format!("one variant value per variant name ({})", names.len()),
            values.len(),
        ));
    }
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(Error::invalid(
                path,
                format!("variant value {v} is stored twice in `variant_values`"),
            ));
        }
    }
    Ok(Some((names, values)))
}

/// The Arrow type of a scalar or dense node's element: a dictionary for a
/// labelled enum, else what [`leaf_type`] says.
fn node_leaf_type(node: &Schema, path: &str) -> Result<DataType> {
    if labels(node, path)?.is_some() {
        if !is_integer(node.encoded_type.as_deref().unwrap_or("")) {
            return Err(Error::mismatch(
                path,
                "an enum of integers",
                format!("encoded type {:?}", node.encoded_type),
            ));
        }
        return Ok(label_type());
    }
    leaf_type(&node.codec, node.encoded_type.as_deref(), path)
}

/// The Arrow type of a union node (SPEC.md sections 4.4 and 11): a dense
/// `Union` whose type ids are the tag values (0, 1, ...) and whose
/// children, one per variant named as it, are the variants' records as
/// `Struct`s (a unit variant's an empty `Struct`); `nullable` (the child of
/// a `nullable` node): the children are nullable, a null row being null in
/// the child of its tag.
fn union_type(node: &Schema, meta: bool, path: &str, nullable: bool) -> Result<DataType> {
    let names = node.variant_names.as_deref().unwrap_or(&[]);
    let n = names.len();
    let want: Vec<i64> = (0..n as i64).collect();
    if n != node.children.len() || node.variant_values.as_deref() != Some(&want[..]) {
        return Err(Error::mismatch(
            path,
            format!(
                "a union's variant names and values 0, 1, ... (one per child: {})",
                node.children.len()
            ),
            format!("{n} names, values {:?}", node.variant_values),
        ));
    }
    if n == 0 || n > 128 {
        return Err(Error::mismatch(
            path,
            "a union of 1 to 128 variants (Arrow's type ids are 0..=127)",
            format!("{n} variants"),
        ));
    }
    let mut fields = Vec::with_capacity(n);
    for (name, child) in names.iter().zip(&node.children) {
        let p = format!("{path}.{name}");
        let f = match &child.kind {
            Kind::Constant => Field::new(name, DataType::Struct(Fields::empty()), nullable),
            Kind::Record => field_of(name, child, meta, &p)?.with_nullable(nullable),
            // A variant of a kind this version does not know: listed.
            _ if unknown(child).is_some() => field_of(name, child, meta, &p)?,
            other => {
                return Err(Error::mismatch(
                    p,
                    "a union variant: a record or a constant",
                    format!("kind `{other}`"),
                ))
            }
        };
        fields.push(f);
    }
    // `n` <= 128: every id fits an i8.
    let ids = (0..n).map(|i| i as i8);
    Ok(DataType::Union(
        UnionFields::try_new(ids, fields).map_err(|e| Error::invalid(path, e.to_string()))?,
        UnionMode::Dense,
    ))
}

/// The element dimensions of a dense node, outermost first, each a valid
/// `FixedSizeList` size.
pub(crate) fn dense_shape(node: &Schema, path: &str) -> Result<Vec<i32>> {
    let dims = node
        .dimensions
        .as_deref()
        .ok_or_else(|| Error::mismatch(path, "dense `dimensions`", "nothing"))?;
    dims.iter()
        .rev()
        .map(|&d| {
            i32::try_from(d)
                .ok()
                .filter(|&d| d >= 0)
                .ok_or_else(|| Error::invalid(path, format!("dense dimension {d} out of range")))
        })
        .collect()
}

/// The Arrow type of an adapter's (times, UUIDs: SPEC.md sections 4.6,
/// 4.7), an f16 or a complex node (4.8), `None` for other nodes.
fn typed_type(node: &Schema, path: &str) -> Result<Option<DataType>> {
    if let Some(adapter) = adapters::by_codec(&node.kind, &node.codec) {
        return adapter.arrow_type(node, path).map(Some);
    }
    let enc = node.encoded_type.as_deref().unwrap_or("");
    let t = match (&node.kind, node.codec.as_str(), enc) {
        (Kind::Scalar, ids::IDENTITY, "Float16") => DataType::Float16,
        (Kind::Scalar, ids::IDENTITY, "ComplexF32" | "ComplexF64") => {
            let part = if enc == "ComplexF32" {
                DataType::Float32
            } else {
                DataType::Float64
            };
            DataType::Struct(Fields::from(vec![
                Field::new("r", part.clone(), false),
                Field::new("i", part, false),
            ]))
        }
        _ => return Ok(None),
    };
    Ok(Some(t))
}

/// The Arrow `Map` of a map node (a list with `h5vec.MapCodec` whose
/// element is a `{key, value}` record): entries `Struct<key (non-null), value>`.
fn map_type(node: &Schema, meta: bool, path: &str) -> Result<DataType> {
    let entry = node
        .children
        .first()
        .ok_or_else(|| Error::mismatch(path, "schema child 1", "nothing"))?;
    let ipath = format!("{path}[]");
    let names = entry.field_names.as_deref().unwrap_or(&[]);
    if entry.kind != Kind::Record || names != ["key", "value"] || entry.children.len() != 2 {
        return Err(Error::mismatch(
            &ipath,
            "a map entry: a record with fields [\"key\", \"value\"]",
            format!("a `{}` node with fields {names:?}", entry.kind),
        ));
    }
    let key = field_of("key", &entry.children[0], meta, &format!("{ipath}.key"))?;
    if key.is_nullable() {
        return Err(Error::mismatch(
            format!("{ipath}.key"),
            "map keys that are never null (Arrow's maps)",
            "nullable keys",
        ));
    }
    let value = field_of("value", &entry.children[1], meta, &format!("{ipath}.value"))?;
    let entries = Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![key, value])),
        false,
    );
    Ok(DataType::Map(Arc::new(entries), false))
}

/// The Arrow type of `node` and whether its field is nullable.
fn type_of(node: &Schema, meta: bool, path: &str) -> Result<(DataType, bool)> {
    let enc = node.encoded_type.as_deref();
    if let Some(t) = typed_type(node, path)? {
        return Ok((t, false));
    }
    if node.kind == Kind::List && node.codec == ids::MAP_CODEC {
        return Ok((map_type(node, meta, path)?, false));
    }
    Ok(match &node.kind {
        Kind::Scalar => (node_leaf_type(node, path)?, false),
        Kind::Dense => {
            let leaf = node_leaf_type(node, path)?;
            if matches!(leaf, DataType::LargeUtf8) {
                return Err(Error::mismatch(
                    path,
                    "a dense array of numbers, Bool, char or enums",
                    "a dense array of strings",
                ));
            }
            let mut t = leaf;
            for d in dense_shape(node, path)?.into_iter().rev() {
                t = DataType::FixedSizeList(Arc::new(Field::new(ITEM, t, false)), d);
            }
            (t, false)
        }
        Kind::Record => (DataType::Struct(record_fields(node, meta, path)?), false),
        Kind::Union => (union_type(node, meta, path, false)?, false),
        Kind::Constant => (DataType::Null, true),
        Kind::Blob => (DataType::LargeBinary, false),
        Kind::VlsString => (DataType::LargeUtf8, node.codec == ids::PLACEHOLDER_CODEC),
        Kind::StringValues => (DataType::LargeUtf8, false),
        Kind::List => {
            let child = node
                .children
                .first()
                .ok_or_else(|| Error::mismatch(path, "schema child 1", "nothing"))?;
            let item = field_of(ITEM, child, meta, &format!("{path}[]"))?;
            (DataType::LargeList(Arc::new(item)), false)
        }
        Kind::Nullable => {
            let child = node
                .children
                .first()
                .ok_or_else(|| Error::mismatch(path, "schema child 1", "nothing"))?;
            if child.kind == Kind::Nullable {
                return Err(Error::mismatch(
                    path,
                    "a nullable node around a value",
                    "a nullable node around a nullable node (Option<Option<T>> is not supported)",
                ));
            }
            if child.kind == Kind::Union {
                // Arrow unions have no validity of their own: a null row is
                // null in its variant's (nullable) child.
                return Ok((union_type(child, meta, path, true)?, true));
            }
            if child.kind == Kind::Constant {
                // `Option<()>`: `Null` cannot tell `Some(())` from `None`;
                // a struct without fields has a validity of its own.
                return Ok((DataType::Struct(Fields::empty()), true));
            }
            (type_of(child, meta, path)?.0, true)
        }
        Kind::FillNullable => {
            let t = enc.and_then(number_type).ok_or_else(|| {
                Error::mismatch(
                    path,
                    "a fill_nullable node of a number type",
                    format!("encoded type `{}`", enc.unwrap_or("(none)")),
                )
            })?;
            (t, true)
        }
        other => {
            return Err(Error::mismatch(
                path,
                "a schema kind h5vec reads (scalar, dense, record, union, constant, blob, \
                 vls_string, list, string_values, nullable, fill_nullable)",
                format!("kind `{other}`"),
            ))
        }
    })
}
