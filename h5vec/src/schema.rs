//! The schema tree under `<vector>/metadata/schema`.
//!
//! Layout on disk (one group per node, every entry a dataset):
//! - `kind`, `schema`, `codec`, `logical_type`: scalar fixed-length UTF-8 strings;
//! - `encoded_type` (scalar and dense): scalar string, Julia spelling (`Int32`, `Float64`, `Bool`, `String`, ...);
//! - `dimensions` (dense): 1-D Int64, Julia order (h5py's trailing axes reversed);
//! - `field_names` (record): 1-D variable-length UTF-8 strings, declaration order;
//! - `variant_names` (enums): 1-D variable-length UTF-8 strings, declaration order,
//!   and `variant_values`: 1-D Int64, the value stored for each variant;
//! - `time_unit`, `time_zone` (instants and durations): scalar strings;
//! - `children/1`..`children/N`: one full node per child, in order.

use hdf5::Group;
use serde::{Deserialize, Serialize};

use crate::error::{Context, Error, Place, Result};
use crate::raw;

/// Schema identifiers of HDF5Vectors and of h5vec's own kinds.
pub mod ids {
    /// `HDF5Vectors.ScalarSchema`.
    pub const SCALAR: &str = "HDF5Vectors.ScalarSchema";
    /// `HDF5Vectors.DenseSchema`.
    pub const DENSE: &str = "HDF5Vectors.DenseSchema";
    /// `HDF5Vectors.RecordSchema`.
    pub const RECORD: &str = "HDF5Vectors.RecordSchema";
    /// `HDF5Vectors.BlobSchema`.
    pub const BLOB: &str = "HDF5Vectors.BlobSchema";
    /// `HDF5Vectors.ConstantSchema`.
    pub const CONSTANT: &str = "HDF5Vectors.ConstantSchema";
    /// `HDF5Vectors.IdentityCodec`.
    pub const IDENTITY: &str = "HDF5Vectors.IdentityCodec";
    /// `HDF5Vectors.ConstantCodec`: the codec of every constant node (what
    /// HDF5Vectors.jl writes: `ConstantSchema(ConstantCodec{T}(value))`).
    pub const CONSTANT_CODEC: &str = "HDF5Vectors.ConstantCodec";
    /// `HDF5Vectors.CharCodec`.
    pub const CHAR: &str = "HDF5Vectors.CharCodec";
    /// `HDF5Vectors.EnumCodec`.
    pub const ENUM: &str = "HDF5Vectors.EnumCodec";
    /// `HDF5Vectors.JSONCodec`.
    pub const JSON: &str = "HDF5Vectors.JSONCodec";
    /// `HDF5Vectors.StructCodec`.
    pub const STRUCT: &str = "HDF5Vectors.StructCodec";
    /// `HDF5Vectors.TupleCodec`.
    pub const TUPLE: &str = "HDF5Vectors.TupleCodec";
    /// h5vec's blob codec: serde values encoded with bincode 2 (standard config).
    pub const BINCODE: &str = "h5vec.BincodeCodec";
    /// h5vec compressed VLS strings (heap + pointers).
    pub const VLS: &str = "h5vec.VLSStringSchema";
    /// h5vec list column (OFFSETS + VALUES, h5col layout).
    pub const LIST: &str = "h5vec.ListSchema";
    /// h5vec nullable value (MASK beside the values).
    pub const NULLABLE: &str = "h5vec.NullableSchema";
    /// h5vec codec for lists, strings and masks.
    pub const H5VEC_CODEC: &str = "h5vec.IdentityCodec";
    /// h5vec codec of a nullable value: a MASK beside the values.
    pub const MASK_CODEC: &str = "h5vec.MaskCodec";
    /// h5vec codec of an `Option<String>` VLS column: missing values equal the placeholder attribute.
    pub const PLACEHOLDER_CODEC: &str = "h5vec.PlaceholderCodec";
    /// h5vec strings inside a list: a STRING_VALUES group (OFFSETS + CHARS).
    pub const STRING_VALUES: &str = "h5vec.StringValuesSchema";
    /// h5vec enums with data: a TAG enum and an INDEX per row, one group of
    /// columns per variant (SPEC.md section 4.4).
    pub const UNION: &str = "h5vec.UnionSchema";
    /// h5vec instants: Int64 counts of `time_unit` since 1970-01-01T00:00:00
    /// in `time_zone` (UTC), or of a naive date-time when it has none.
    pub const INSTANT_CODEC: &str = "h5vec.InstantCodec";
    /// h5vec dates: Int32 days since 1970-01-01 (`time_unit = "d"`).
    pub const DATE_CODEC: &str = "h5vec.DateCodec";
    /// h5vec times of day: Int64 nanoseconds since midnight.
    pub const TIME_OF_DAY_CODEC: &str = "h5vec.TimeOfDayCodec";
    /// h5vec durations: Int64 counts of `time_unit`.
    pub const DURATION_CODEC: &str = "h5vec.DurationCodec";
    /// h5vec instants with a UTC offset: a record of the instant and the
    /// offset in seconds.
    pub const OFFSET_DATE_TIME_CODEC: &str = "h5vec.OffsetDateTimeCodec";
    /// h5vec UUIDs: 16 bytes, dense UInt8 `(Z, 16)`.
    pub const UUID_CODEC: &str = "h5vec.UuidCodec";
    /// h5vec maps: a list of `{key, value}` records.
    pub const MAP_CODEC: &str = "h5vec.MapCodec";
    /// h5vec numbers whose fill value marks a missing list element (kind
    /// `fill_nullable`, SPEC.md section 9).
    pub const FILL_SCHEMA: &str = "h5vec.FillValueSchema";
    /// The codec of `fill_nullable` nodes.
    pub const FILL_CODEC: &str = "h5vec.FillValueCodec";
}

/// The `kind` entry of a schema node: how its data group is laid out
/// (SPEC.md section 2), parsed once when the node is read or built. Every
/// dispatch on a node's layout is a `match` on it; the spelling on disk is
/// [`Kind::as_str`], nowhere else.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// HDF5Vectors `scalar`: one dataset of numbers, bools or fixed-length strings.
    Scalar,
    /// HDF5Vectors `dense`: fixed-shape arrays.
    Dense,
    /// HDF5Vectors `record`: one child group per field.
    Record,
    /// HDF5Vectors `blob`: serialized bytes with stops.
    Blob,
    /// HDF5Vectors `constant`: one value for every element, no data.
    Constant,
    /// h5vec `vls_string`: compressed VLS strings (heap + pointers).
    VlsString,
    /// h5vec `list`: list column (OFFSETS + VALUES).
    List,
    /// h5vec `string_values`: strings inside a list (OFFSETS + CHARS).
    StringValues,
    /// h5vec `nullable`: a MASK beside the values.
    Nullable,
    /// h5vec `fill_nullable`: numbers whose fill value marks a missing element.
    FillNullable,
    /// h5vec `union`: an enum with data (TAG + INDEX, one group per variant).
    Union,
    /// A kind this version does not know (a newer writer's), as stored.
    Other(String),
}

impl Kind {
    /// Every kind this version knows, in SPEC.md's order.
    pub(crate) const KNOWN: [Kind; 11] = [
        Kind::Scalar,
        Kind::Dense,
        Kind::Record,
        Kind::Blob,
        Kind::Constant,
        Kind::VlsString,
        Kind::List,
        Kind::StringValues,
        Kind::Nullable,
        Kind::FillNullable,
        Kind::Union,
    ];

    /// The kind spelled `s` on disk ([`Kind::Other`] when unknown).
    pub fn parse(s: &str) -> Kind {
        Kind::KNOWN
            .into_iter()
            .find(|k| k.as_str() == s)
            .unwrap_or_else(|| Kind::Other(s.to_string()))
    }

    /// Its spelling on disk.
    pub fn as_str(&self) -> &str {
        match self {
            Kind::Scalar => "scalar",
            Kind::Dense => "dense",
            Kind::Record => "record",
            Kind::Blob => "blob",
            Kind::Constant => "constant",
            Kind::VlsString => "vls_string",
            Kind::List => "list",
            Kind::StringValues => "string_values",
            Kind::Nullable => "nullable",
            Kind::FillNullable => "fill_nullable",
            Kind::Union => "union",
            Kind::Other(s) => s,
        }
    }
}

impl Default for Kind {
    /// No kind: an empty name (nodes built field by field start here).
    fn default() -> Self {
        Kind::Other(String::new())
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d).map(|s| Kind::parse(&s))
    }
}

/// One node of the schema tree, as h5vec writes it and expects it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    /// How the node's data group is laid out.
    pub kind: Kind,
    /// Schema identifier, e.g. `HDF5Vectors.ScalarSchema`.
    pub schema: String,
    /// Codec identifier, e.g. `HDF5Vectors.IdentityCodec`.
    pub codec: String,
    /// The Rust type name (descriptive; not checked on load).
    pub logical_type: String,
    /// Encoded element type, Julia spelling (scalar and dense).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoded_type: Option<String>,
    /// Element dimensions in Julia order (dense).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<Vec<i64>>,
    /// Field names in declaration order (record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_names: Option<Vec<String>>,
    /// Variant names in declaration order (enums).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_names: Option<Vec<String>>,
    /// The value stored for each variant of `variant_names` (enums).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_values: Option<Vec<i64>>,
    /// Unit of an instant or a duration, e.g. `ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_unit: Option<String>,
    /// Time zone of an instant (`UTC`, `+02:00`); absent for naive times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// Child schemas, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Schema>,
}

impl Schema {
    /// A node with the given kind and identifiers and nothing else.
    pub fn new(kind: Kind, schema: &str, codec: &str, logical_type: &str) -> Self {
        Schema {
            kind,
            schema: schema.into(),
            codec: codec.into(),
            logical_type: logical_type.into(),
            encoded_type: None,
            dimensions: None,
            field_names: None,
            variant_names: None,
            variant_values: None,
            time_unit: None,
            time_zone: None,
            children: Vec::new(),
        }
    }

    /// Sets the encoded type.
    pub fn encoded(mut self, t: &str) -> Self {
        self.encoded_type = Some(t.into());
        self
    }

    /// Writes this node (recursively) into `group`.
    pub fn write(&self, group: &Group, path: &str) -> Result<()> {
        raw::write_scalar_string(group, "kind", self.kind.as_str(), path)?;
        raw::write_scalar_string(group, "schema", &self.schema, path)?;
        raw::write_scalar_string(group, "codec", &self.codec, path)?;
        raw::write_scalar_string(group, "logical_type", &self.logical_type, path)?;
        if let Some(e) = &self.encoded_type {
            raw::write_scalar_string(group, "encoded_type", e, path)?;
        }
        if let Some(d) = &self.dimensions {
            raw::write_small(group, "dimensions", d, false, path)?;
        }
        if let Some(names) = &self.field_names {
            write_names(group, "field_names", names, path)?;
        }
        if let Some(names) = &self.variant_names {
            write_names(group, "variant_names", names, path)?;
        }
        if let Some(v) = &self.variant_values {
            raw::write_small(group, "variant_values", v, false, path)?;
        }
        if let Some(u) = &self.time_unit {
            raw::write_scalar_string(group, "time_unit", u, path)?;
        }
        if let Some(z) = &self.time_zone {
            raw::write_scalar_string(group, "time_zone", z, path)?;
        }
        if !self.children.is_empty() {
            let ch = raw::create_group_small(group, "children", path)?;
            for (i, c) in self.children.iter().enumerate() {
                let g = raw::create_group_small(&ch, &(i + 1).to_string(), path)?;
                c.write(&g, path)?;
            }
        }
        Ok(())
    }
}

/// Writes `names` as the 1-D variable-length UTF-8 dataset `name`.
fn write_names(group: &Group, name: &str, names: &[String], path: &str) -> Result<()> {
    let dt = raw::vlen_utf8(path)?;
    let ds = raw::create_small(group, name, &dt, Some(names.len()), path)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    raw::write_vlen_strings(&ds, 0, &refs, path)
}

/// A schema node as read from a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stored {
    /// `kind`.
    pub kind: Kind,
    /// `schema`.
    pub schema: String,
    /// `codec`.
    pub codec: String,
    /// `logical_type` (empty when absent).
    pub logical_type: String,
    /// `encoded_type`, if present.
    pub encoded_type: Option<String>,
    /// `dimensions`, if present.
    pub dimensions: Option<Vec<i64>>,
    /// `field_names`, if present.
    pub field_names: Option<Vec<String>>,
    /// `variant_names`, if present.
    pub variant_names: Option<Vec<String>>,
    /// `variant_values`, if present.
    pub variant_values: Option<Vec<i64>>,
    /// `time_unit`, if present.
    pub time_unit: Option<String>,
    /// `time_zone`, if present.
    pub time_zone: Option<String>,
    /// `children/1..N`.
    pub children: Vec<Stored>,
    /// Members an enclosing layout adds to this node's data group (not
    /// read from the file; e.g. `MASK` beside the values of an `Option`).
    pub extra_members: Vec<String>,
}

/// Deepest schema tree h5vec reads (guards against cyclic links).
const MAX_DEPTH: usize = 64;
/// Most children one schema node may have.
const MAX_CHILDREN: usize = 1 << 16;

fn read_str(group: &Group, name: &str, path: &str) -> Result<Option<String>> {
    if !group.link_exists(name) {
        return Ok(None);
    }
    let p = Place::new(path, crate::error::member_path(group, name));
    let ds = group
        .dataset(name)
        .map_err(|_| Error::mismatch(&p, "a scalar string dataset", "something else"))?;
    raw::read_scalar_string(&ds, &p).map(Some)
}

/// A 1-D variable-length string dataset of the node (`field_names`,
/// `variant_names`), at most [`MAX_CHILDREN`] entries.
fn read_names(group: &Group, name: &str, path: &str) -> Result<Option<Vec<String>>> {
    if !group.link_exists(name) {
        return Ok(None);
    }
    let p = Place::new(path, crate::error::member_path(group, name));
    let ds = group.dataset(name).at(&p)?;
    let info = raw::type_info(&ds, &p)?;
    if !info.vlen_str || ds.ndim() != 1 {
        return Err(Error::mismatch(
            &p,
            "1-D variable-length strings",
            info.describe(),
        ));
    }
    let n = ds.size();
    if n > MAX_CHILDREN {
        return Err(Error::invalid(&p, format!("{n} entries in `{name}`")));
    }
    Ok(Some(raw::read_vlen_strings(&ds, 0, n as u64, &p)?))
}

/// A scalar or 1-D Int64 dataset of the node (`dimensions`,
/// `variant_values`), at most `max` entries.
fn read_int64s(group: &Group, name: &str, max: usize, path: &str) -> Result<Option<Vec<i64>>> {
    if !group.link_exists(name) {
        return Ok(None);
    }
    let p = Place::new(path, crate::error::member_path(group, name));
    let ds = group.dataset(name).at(&p)?;
    let info = raw::type_info(&ds, &p)?;
    if info.class != hdf5_sys::h5t::H5T_class_t::H5T_INTEGER || ds.ndim() > 1 {
        return Err(Error::mismatch(
            &p,
            format!("1-D Int64 `{name}`"),
            info.describe(),
        ));
    }
    let n = ds.size();
    if n > max {
        return Err(Error::invalid(&p, format!("{n} entries in `{name}`")));
    }
    Ok(Some(if ds.ndim() == 0 {
        vec![ds.read_scalar::<i64>().at(&p)?]
    } else {
        crate::pipeline::rows::read_rows::<i64>(&ds, 0, n as u64, &[], &p)?
    }))
}

impl Stored {
    /// The first member where this tree (read from the file) and `want`
    /// (the same tree from `metadata/serialized_schema`) differ, as its
    /// field path and what each says; `None` when they are equal.
    pub(crate) fn differs_from(&self, want: &Schema, path: &str) -> Option<(String, String)> {
        fn cmp<T: PartialEq + std::fmt::Debug>(name: &str, tree: &T, json: &T) -> Option<String> {
            (tree != json)
                .then(|| format!("`{name}` is {tree:?} in the tree, {json:?} in the JSON"))
        }
        let here = cmp("kind", &self.kind.as_str(), &want.kind.as_str())
            .or_else(|| cmp("schema", &self.schema, &want.schema))
            .or_else(|| cmp("codec", &self.codec, &want.codec))
            .or_else(|| cmp("logical_type", &self.logical_type, &want.logical_type))
            .or_else(|| cmp("encoded_type", &self.encoded_type, &want.encoded_type))
            .or_else(|| cmp("dimensions", &self.dimensions, &want.dimensions))
            .or_else(|| cmp("field_names", &self.field_names, &want.field_names))
            .or_else(|| cmp("variant_names", &self.variant_names, &want.variant_names))
            .or_else(|| cmp("variant_values", &self.variant_values, &want.variant_values))
            .or_else(|| cmp("time_unit", &self.time_unit, &want.time_unit))
            .or_else(|| cmp("time_zone", &self.time_zone, &want.time_zone))
            .or_else(|| {
                let (a, b) = (self.children.len(), want.children.len());
                (a != b).then(|| format!("{a} children in the tree, {b} in the JSON"))
            });
        if let Some(what) = here {
            return Some((path.to_string(), what));
        }
        self.children
            .iter()
            .zip(&want.children)
            .enumerate()
            .find_map(|(i, (c, w))| {
                let sub = match self.field_names.as_ref().and_then(|n| n.get(i)) {
                    Some(name) if self.kind == Kind::Record => format!("{path}.{name}"),
                    _ => format!("{path}[child {}]", i + 1),
                };
                c.differs_from(w, &sub)
            })
    }

    /// Reads a schema node (recursively) from `group`; `path` is the logical
    /// field path used in errors.
    pub fn read(group: &Group, path: &str) -> Result<Stored> {
        Self::read_depth(group, path, 0)
    }

    fn read_depth(group: &Group, path: &str, depth: usize) -> Result<Stored> {
        if depth > MAX_DEPTH {
            return Err(Error::invalid(
                path,
                format!("schema tree deeper than {MAX_DEPTH} levels"),
            ));
        }
        let need = |name: &str| -> Result<String> {
            read_str(group, name, path)?
                .ok_or_else(|| Error::mismatch(path, format!("schema entry `{name}`"), "nothing"))
        };
        let kind = Kind::parse(&need("kind")?);
        let schema = need("schema")?;
        let codec = need("codec")?;
        let logical_type = read_str(group, "logical_type", path)?.unwrap_or_default();
        let encoded_type = read_str(group, "encoded_type", path)?;
        let dimensions = read_int64s(group, "dimensions", 32, path)?;
        let field_names = read_names(group, "field_names", path)?;
        let variant_names = read_names(group, "variant_names", path)?;
        let variant_values = read_int64s(group, "variant_values", MAX_CHILDREN, path)?;
        let time_unit = read_str(group, "time_unit", path)?;
        let time_zone = read_str(group, "time_zone", path)?;
        let mut children = Vec::new();
        if group.link_exists("children") {
            let ch = group.group("children").at(path)?;
            let n = ch.len() as usize;
            if n > MAX_CHILDREN {
                return Err(Error::invalid(path, format!("{n} schema children")));
            }
            for i in 1..=n {
                let name = i.to_string();
                let g = ch.group(&name).map_err(|_| {
                    Error::mismatch(
                        path,
                        format!("schema child group children/{name}"),
                        "nothing",
                    )
                })?;
                let cpath = match field_names.as_ref().and_then(|f| f.get(i - 1)) {
                    Some(f) => format!("{path}.{f}"),
                    None => format!("{path}.<{i}>"),
                };
                children.push(Self::read_depth(&g, &cpath, depth + 1)?);
            }
        }
        Ok(Stored {
            kind,
            schema,
            codec,
            logical_type,
            encoded_type,
            dimensions,
            field_names,
            variant_names,
            variant_values,
            time_unit,
            time_zone,
            children,
            extra_members: Vec::new(),
        })
    }

    /// Checks this node (not its children) against what the Rust type
    /// expects: kind, schema and codec identifiers, encoded type, dimensions,
    /// field names and the number of children.
    pub fn expect(&self, want: &Schema, path: &str) -> Result<()> {
        if self.kind != want.kind {
            return Err(Error::mismatch(
                path,
                format!("schema kind `{}`", want.kind),
                format!("`{}`", self.kind),
            ));
        }
        if self.schema != want.schema {
            return Err(Error::mismatch(
                path,
                format!("schema `{}`", want.schema),
                format!("`{}`", self.schema),
            ));
        }
        if self.codec != want.codec {
            return Err(Error::mismatch(
                path,
                format!("codec `{}`", want.codec),
                format!("`{}`", self.codec),
            ));
        }
        if want.encoded_type.is_some() && self.encoded_type != want.encoded_type {
            return Err(Error::mismatch(
                path,
                format!(
                    "encoded type `{}`",
                    want.encoded_type.as_deref().unwrap_or("")
                ),
                format!("`{}`", self.encoded_type.as_deref().unwrap_or("(none)")),
            ));
        }
        if want.dimensions.is_some() && self.dimensions != want.dimensions {
            return Err(Error::mismatch(
                path,
                format!("dimensions {:?}", want.dimensions.as_deref().unwrap_or(&[])),
                format!("{:?}", self.dimensions.as_deref().unwrap_or(&[])),
            ));
        }
        if want.field_names.is_some() && self.field_names != want.field_names {
            return Err(Error::mismatch(
                path,
                format!(
                    "field names {:?}",
                    want.field_names.as_deref().unwrap_or(&[])
                ),
                format!("{:?}", self.field_names.as_deref().unwrap_or(&[])),
            ));
        }
        if want.time_unit.is_some()
            && (self.time_unit != want.time_unit || self.time_zone != want.time_zone)
        {
            return Err(Error::mismatch(
                path,
                format!(
                    "time_unit {:?}, time_zone {:?}",
                    want.time_unit, want.time_zone
                ),
                format!(
                    "time_unit {:?}, time_zone {:?}",
                    self.time_unit, self.time_zone
                ),
            ));
        }
        if want.variant_names.is_some() {
            self.expect_labels(want, path)?;
        }
        if self.children.len() != want.children.len() {
            return Err(Error::mismatch(
                path,
                format!("{} child schemas", want.children.len()),
                self.children.len(),
            ));
        }
        Ok(())
    }

    /// Checks stored enum labels (`variant_names`, `variant_values`)
    /// against the type's, when the file has them: a file without labels
    /// (HDF5Vectors.jl, older h5vec) passes; a stored (name, value) pair
    /// the type does not have, or a name list without its values, fails
    /// (stored labels may be fewer than the type's variants).
    fn expect_labels(&self, want: &Schema, path: &str) -> Result<()> {
        let pairs =
            |names: &Option<Vec<String>>, values: &Option<Vec<i64>>| -> Vec<(String, i64)> {
                names
                    .iter()
                    .flatten()
                    .cloned()
                    .zip(values.iter().flatten().copied())
                    .collect()
            };
        if self.variant_names.is_none() && self.variant_values.is_none() {
            return Ok(());
        }
        let (n, v) = (
            self.variant_names.as_ref().map_or(0, Vec::len),
            self.variant_values.as_ref().map_or(0, Vec::len),
        );
        if n != v || self.variant_names.is_none() || self.variant_values.is_none() {
            return Err(Error::invalid(
                path,
                format!("{n} variant_names but {v} variant_values"),
            ));
        }
        let ours = pairs(&want.variant_names, &want.variant_values);
        let stored = pairs(&self.variant_names, &self.variant_values);
        if let Some((name, value)) = stored.iter().find(|p| !ours.contains(p)) {
            return Err(Error::mismatch(
                path,
                format!("variants {ours:?}"),
                format!("stored variant ({name:?}, {value})"),
            ));
        }
        Ok(())
    }

    /// The `i`-th child, or an error naming `path`.
    pub fn child(&self, i: usize, path: &str) -> Result<&Stored> {
        self.children
            .get(i)
            .ok_or_else(|| Error::mismatch(path, format!("schema child {}", i + 1), "nothing"))
    }
}

impl From<&Stored> for Schema {
    /// The node as h5vec would write it (the layout-only `extra_members`
    /// dropped): what schema-driven readers and writers work from.
    fn from(s: &Stored) -> Schema {
        Schema {
            kind: s.kind.clone(),
            schema: s.schema.clone(),
            codec: s.codec.clone(),
            logical_type: s.logical_type.clone(),
            encoded_type: s.encoded_type.clone(),
            dimensions: s.dimensions.clone(),
            field_names: s.field_names.clone(),
            variant_names: s.variant_names.clone(),
            variant_values: s.variant_values.clone(),
            time_unit: s.time_unit.clone(),
            time_zone: s.time_zone.clone(),
            children: s.children.iter().map(Schema::from).collect(),
        }
    }
}

impl From<&Schema> for Stored {
    /// The node a reader expects where h5vec itself wrote `s` (no
    /// `extra_members`): h5col columns are checked through it.
    fn from(s: &Schema) -> Stored {
        Stored {
            kind: s.kind.clone(),
            schema: s.schema.clone(),
            codec: s.codec.clone(),
            logical_type: s.logical_type.clone(),
            encoded_type: s.encoded_type.clone(),
            dimensions: s.dimensions.clone(),
            field_names: s.field_names.clone(),
            variant_names: s.variant_names.clone(),
            variant_values: s.variant_values.clone(),
            time_unit: s.time_unit.clone(),
            time_zone: s.time_zone.clone(),
            children: s.children.iter().map(Stored::from).collect(),
            extra_members: Vec::new(),
        }
    }
}
