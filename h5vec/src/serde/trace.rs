//! The columns of a serde type, traced: [`SchemaOptions`] traces the type
//! or sample values, with a [`FieldKind`] set per field path, into
//! [`Columns`]; enums with data are made nullable for serde_arrow, and
//! sample tracing must have seen every variant it stores.

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, TimeUnit, UnionFields};
use serde_arrow::schema::{SchemaLike, TracingOptions};

use super::fields::{self, is_fieldless, RELAXED};
use super::{DeserializeOwned, Serialize};
use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::kinds::list::items_path;
use crate::options::SaveOptions;

/// How a field is stored when its serde form is not the one wanted (a
/// type whose `Deserialize` cannot be traced, or a number that means a
/// time), set per field path with [`SchemaOptions::kind`].
///
/// ```
/// use h5vec::serde::{FieldKind, SchemaOptions};
/// let opts = SchemaOptions::new().kind("$.created", FieldKind::Instant);
/// # let _ = opts;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldKind {
    /// An instant in UTC, `Int64` nanoseconds (SPEC.md section 4.6): from
    /// an RFC 3339 string (chrono's default form) or from integer
    /// nanoseconds (`chrono::serde::ts_nanoseconds`). A `DateTime<Utc>`
    /// field of a derived type stores the same.
    Instant,
    /// An instant without a time zone (`NaiveDateTime`), as [`Instant`](Self::Instant).
    NaiveInstant,
    /// A date, `Int32` days since 1970-01-01 (`NaiveDate`).
    Date,
    /// A `uuid::Uuid`: 16 bytes (SPEC.md section 4.7), what its
    /// `Serialize` writes with `is_human_readable() == false`.
    Uuid,
    /// A fixed-size array `[T; N]` of numbers or `bool` (nested arrays
    /// too): a dense column, as the derive stores `[T; N]` (SPEC.md
    /// sections 4.1 and 13). serde serializes an array as a tuple, so
    /// without this kind it is stored as a tuple's record; loading reads
    /// the dense column into a serde `[T; N]` or tuple.
    ///
    /// ```
    /// use h5vec::serde::{FieldKind, SchemaOptions};
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct P { xyz: [f64; 3] }
    /// # fn main() -> h5vec::Result<()> {
    /// let c = SchemaOptions::new().kind("$.xyz", FieldKind::Dense).trace_type::<P>()?;
    /// assert_eq!(c.names(), ["xyz"]);
    /// # Ok(()) }
    /// ```
    Dense,
}

/// The Arrow type of the dense column for serde_arrow's field `f` (a
/// tuple of equal numbers or `bool`, or of such tuples): nested
/// `FixedSizeList`s.
fn dense_type(f: &Field, path: &str) -> Result<DataType> {
    let want = "a fixed-size array [T; N] of numbers or bool (a tuple of equal elements)";
    match f.data_type() {
        DataType::Struct(fs) if fields::is_tuple(f) && !fs.is_empty() => {
            let mut item: Option<DataType> = None;
            for (i, c) in fs.iter().enumerate() {
                if c.is_nullable() {
                    return Err(Error::mismatch(path, want, "an optional element"));
                }
                let t = dense_type(c, &child_path(path, &(i + 1).to_string()))?;
                if item.as_ref().is_some_and(|x| x != &t) {
                    return Err(Error::mismatch(path, want, "elements of different types"));
                }
                item = Some(t);
            }
            let n = i32::try_from(fs.len())
                .map_err(|_| Error::mismatch(path, want, format!("{} elements", fs.len())))?;
            let item = Field::new(
                crate::arrow::mapping::ITEM,
                item.unwrap_or(DataType::Null),
                false,
            );
            Ok(DataType::FixedSizeList(Arc::new(item), n))
        }
        t if t.is_primitive() && !t.is_temporal() || t == &DataType::Boolean => Ok(t.clone()),
        t => Err(Error::mismatch(path, want, t)),
    }
}

impl FieldKind {
    fn field(&self, traced: &Field, path: &str) -> Result<Field> {
        let (name, nullable) = (traced.name(), traced.is_nullable());
        Ok(match self {
            FieldKind::Instant => Field::new(
                name,
                DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
                nullable,
            ),
            FieldKind::NaiveInstant => Field::new(
                name,
                DataType::Timestamp(TimeUnit::Nanosecond, None),
                nullable,
            ),
            FieldKind::Date => Field::new(name, DataType::Date32, nullable),
            // serde_arrow serializes a `Uuid` as its text: kept as text
            // here, turned into the 16 bytes on the way to h5vec.
            FieldKind::Uuid => Field::new(name, DataType::LargeUtf8, nullable).with_metadata(
                std::collections::HashMap::from([(fields::UUID_TEXT.to_owned(), "1".to_owned())]),
            ),
            FieldKind::Dense => match dense_type(traced, path)? {
                t @ DataType::FixedSizeList(..) => Field::new(name, t, nullable),
                t => return Err(Error::mismatch(path, "a fixed-size array [T; N]", t)),
            },
        })
    }
}

/// How the columns of a serde type are found: by tracing the type (the
/// default) or sample values, with the kind of some field paths set.
///
/// ```
/// use h5vec::arrow::arrow_schema::{DataType, TimeUnit};
/// use h5vec::serde::{FieldKind, SchemaOptions};
/// use serde::{Deserialize, Serialize};
///
/// // As `#[serde(with = "chrono::serde::ts_nanoseconds")]` serializes an instant.
/// #[derive(Serialize, Deserialize)]
/// struct Log { at: i64, msg: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("l.h5"))?;
/// let logs = [Log { at: 5, msg: "up".into() }];
/// let columns = SchemaOptions::new().kind("$.at", FieldKind::Instant).trace_type::<Log>()?;
/// h5vec::serde::save_vector_in(&file, "logs", &logs, &Default::default(), &columns)?;
/// // Stored as a derived `DateTime<Utc>` field is: an instant in UTC.
/// let batch = h5vec::arrow::read_vector(&file, "logs")?;
/// assert_eq!(
///     batch.schema().field(0).data_type(),
///     &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
/// );
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct SchemaOptions {
    kinds: Vec<(String, FieldKind)>,
    budget: usize,
}

impl Default for SchemaOptions {
    fn default() -> Self {
        SchemaOptions {
            kinds: Vec::new(),
            budget: 1000,
        }
    }
}

impl SchemaOptions {
    /// Tracing the type, no kinds set, a budget of 1000 passes.
    ///
    /// ```
    /// let opts = h5vec::serde::SchemaOptions::new();
    /// # let _ = opts;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores the field at logical path `path` (`$.a.b`; a list's elements
    /// `$.a[]`) as `kind`.
    ///
    /// ```
    /// use h5vec::serde::{FieldKind, SchemaOptions};
    /// let opts = SchemaOptions::new().kind("$.id", FieldKind::Uuid);
    /// # let _ = opts;
    /// ```
    pub fn kind(mut self, path: &str, kind: FieldKind) -> Self {
        self.kinds.push((path.to_owned(), kind));
        self
    }

    /// The number of passes over the type before tracing gives up (each
    /// pass reaches at least one more enum variant or `Option`).
    ///
    /// ```
    /// let opts = h5vec::serde::SchemaOptions::new().budget(50);
    /// # let _ = opts;
    /// ```
    pub fn budget(mut self, passes: usize) -> Self {
        self.budget = passes;
        self
    }

    /// serde_arrow's options: maps as Arrow maps (the map kind), or, for a
    /// type serde_arrow cannot trace so (`#[serde(flatten)]` serializes
    /// the struct as a map), as structs.
    fn tracing(&self, map_as_struct: bool) -> TracingOptions {
        TracingOptions::default()
            .allow_null_fields(true)
            .map_as_struct(map_as_struct)
            .from_type_budget(self.budget)
    }

    /// The columns of `T` by tracing its `Deserialize`.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct P { x: f32, y: Option<f32> }
    /// # fn main() -> h5vec::Result<()> {
    /// let c = h5vec::serde::SchemaOptions::new().trace_type::<P>()?;
    /// assert_eq!(c.names(), ["x", "y"]);
    /// # Ok(()) }
    /// ```
    pub fn trace_type<T: DeserializeOwned>(&self) -> Result<Columns> {
        let (fields, map_root) = Vec::<FieldRef>::from_type::<T>(self.tracing(false))
            .map(|f| (f, false))
            .or_else(|e| {
                Vec::<FieldRef>::from_type::<T>(self.tracing(true))
                    .map(|f| (f, true))
                    .map_err(|_| e)
            })
            .map_err(|e| {
                Error::encode(
                    "$",
                    format!(
                        "tracing the serde type (a type that parses its text, as chrono's and \
                         uuid's do, needs SchemaOptions::trace_samples): {e}"
                    ),
                )
            })?;
        self.columns(fields, map_root)
    }

    /// The columns of `T` from sample values (for types that only
    /// implement `Serialize`, or whose `Deserialize` cannot be traced).
    /// An enum's stored variants are those up to the last one the samples
    /// show: serde names a variant only when a value of it is serialized,
    /// so a variant before it that no sample shows is an error naming the
    /// enum's path, and variants after it are not stored (the type then
    /// loads only if it has no more). Trace the type where it can be.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct P { x: f32 }
    /// # fn main() -> h5vec::Result<()> {
    /// let c = h5vec::serde::SchemaOptions::new().trace_samples(&[P { x: 1.0 }])?;
    /// assert_eq!(c.names(), ["x"]);
    /// # Ok(()) }
    /// ```
    pub fn trace_samples<T: Serialize>(&self, samples: &[T]) -> Result<Columns> {
        let (fields, map_root) = Vec::<FieldRef>::from_samples(samples, self.tracing(false))
            .map(|f| (f, false))
            .or_else(|e| {
                Vec::<FieldRef>::from_samples(samples, self.tracing(true))
                    .map(|f| (f, true))
                    .map_err(|_| e)
            })
            .map_err(|e| Error::encode("$", format!("tracing the samples: {e}")))?;
        check_unseen_variants(&fields, "$")?;
        self.columns(fields, map_root)
    }

    fn columns(&self, fields: Vec<FieldRef>, map_root: bool) -> Result<Columns> {
        let mut fields: Vec<FieldRef> = fields;
        for (path, kind) in &self.kinds {
            let rest = path
                .strip_prefix("$.")
                .ok_or_else(|| Error::bad_name(path, "a field path `$.name` (`$.a.b`, `$.a[]`)"))?;
            if !set_kind(&mut fields, rest, "$", kind)? {
                return Err(Error::mismatch(
                    path,
                    "a field of the serde type",
                    "no such field",
                ));
            }
        }
        relax_union_items(&mut fields);
        Ok(Columns { fields, map_root })
    }
}

/// Replaces the field at `rest` (relative to `path`) in `fields` by `kind`.
fn set_kind(fields: &mut [FieldRef], rest: &str, path: &str, kind: &FieldKind) -> Result<bool> {
    let (head, tail) = match rest.find('.') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (name, items) = match head.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (head, false),
    };
    let Some(f) = fields.iter_mut().find(|f| f.name() == name) else {
        return Ok(false);
    };
    let here = child_path(path, name);
    *f = Arc::new(replace(f, items, tail, &here, kind)?);
    Ok(true)
}

fn replace(
    f: &Field,
    items: bool,
    tail: Option<&str>,
    path: &str,
    kind: &FieldKind,
) -> Result<Field> {
    if items {
        let (DataType::LargeList(it) | DataType::List(it)) = f.data_type() else {
            return Err(Error::mismatch(path, "a list for `[]`", f.data_type()));
        };
        let inner = replace(it, false, tail, &items_path(path), kind)?;
        let t = match f.data_type() {
            DataType::List(_) => DataType::List(Arc::new(inner)),
            _ => DataType::LargeList(Arc::new(inner)),
        };
        return Ok(f.clone().with_data_type(t));
    }
    match tail {
        None => kind.field(f, path),
        Some(t) => {
            let DataType::Struct(fs) = f.data_type() else {
                return Err(Error::mismatch(path, "a struct", f.data_type()));
            };
            let mut fs: Vec<FieldRef> = fs.iter().cloned().collect();
            if !set_kind(&mut fs, t, path, kind)? {
                return Err(Error::mismatch(
                    format!("{path}.{t}"),
                    "a field of the serde type",
                    "no such field",
                ));
            }
            Ok(f.clone().with_data_type(DataType::Struct(fs.into())))
        }
    }
}

/// The columns of a serde type: serde_arrow's Arrow fields, as traced by
/// [`SchemaOptions`]. Hand them to [`save_vector_in`](super::save_vector_in),
/// [`VectorWriter`](super::VectorWriter), [`load_vector_in`](super::load_vector_in)
/// or [`VectorReader`](super::VectorReader) to trace once.
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct P { x: f32 }
/// # fn main() -> h5vec::Result<()> {
/// let c = h5vec::serde::Columns::of::<P>()?;
/// assert_eq!(c.names(), ["x"]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Columns {
    pub(super) fields: Vec<FieldRef>,
    /// The root serializes as a map (`#[serde(flatten)]`): serde_arrow
    /// writes it.
    pub(super) map_root: bool,
}

impl Columns {
    /// The columns of `T` traced with the default [`SchemaOptions`].
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct P { x: f32, label: String }
    /// # fn main() -> h5vec::Result<()> {
    /// assert_eq!(h5vec::serde::Columns::of::<P>()?.names(), ["x", "label"]);
    /// # Ok(()) }
    /// ```
    pub fn of<T: DeserializeOwned>() -> Result<Self> {
        SchemaOptions::new().trace_type::<T>()
    }

    /// The names of the top-level fields (the vector's record fields).
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct P { a: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// assert_eq!(h5vec::serde::Columns::of::<P>()?.names(), ["a"]);
    /// # Ok(()) }
    /// ```
    pub fn names(&self) -> Vec<&str> {
        self.fields.iter().map(|f| f.name().as_str()).collect()
    }

    /// The h5vec fields (nodes of the derive) for saving with `opts`.
    pub(super) fn h5(&self, opts: &SaveOptions) -> Result<Vec<FieldRef>> {
        self.fields
            .iter()
            .map(|f| {
                Ok(Arc::new(fields::h5_field(
                    f,
                    &child_path("$", f.name()),
                    opts,
                )?))
            })
            .collect()
    }
}

/// `fields` with every enum with data (a union that is not fieldless)
/// marked nullable, at any depth: Arrow counts a unit variant's row
/// (serde_arrow's `Null` child) as a null, which a non-nullable list
/// element, struct field or variant refuses (`Vec<Enum>`, a struct
/// variant holding an enum). [`h5_field`](fields::h5_field) stores them non-nullable, as the
/// derive does, and marks them [`RELAXED`]: serde never stores a null
/// there. An `Option<Enum>` stays nullable, stored as the derive stores it
/// (a `MASK` beside the union; serde_arrow cannot build a null union, the
/// direct path, `ser/fast` and `de/fast`, saves and loads it).
pub(crate) fn relax_union_items(fields: &mut [FieldRef]) {
    for f in fields.iter_mut() {
        *f = Arc::new(relax_field(f));
    }
}

fn relax_field(f: &Field) -> Field {
    let t = match f.data_type() {
        DataType::Struct(fs) => {
            let mut v: Vec<FieldRef> = fs.iter().cloned().collect();
            relax_union_items(&mut v);
            DataType::Struct(v.into())
        }
        DataType::LargeList(it) => DataType::LargeList(Arc::new(relax_field(it))),
        DataType::List(it) => DataType::List(Arc::new(relax_field(it))),
        DataType::Map(e, sorted) => DataType::Map(Arc::new(relax_field(e)), *sorted),
        DataType::Union(u, mode) if !is_fieldless(u) => {
            let (ids, children): (Vec<i8>, Vec<Field>) =
                u.iter().map(|(id, c)| (id, relax_field(c))).unzip();
            match UnionFields::try_new(ids, children) {
                Ok(uf) => DataType::Union(uf, *mode),
                Err(_) => f.data_type().clone(),
            }
        }
        t => t.clone(),
    };
    let union = matches!(&t, DataType::Union(u, _) if !is_fieldless(u));
    let out = f.clone().with_data_type(t);
    if union && !f.is_nullable() {
        // Nullable for serde_arrow only: stored non-nullable ([`h5_field`](fields::h5_field)).
        let mut meta = out.metadata().clone();
        meta.insert(RELAXED.to_owned(), "1".to_owned());
        return out.with_nullable(true).with_metadata(meta);
    }
    out
}

/// An error for the first enum in `fields` (at `path`) with a variant
/// that sample tracing did not see (serde_arrow names it `""`): serde
/// gives a variant's name only when a value of it is serialized, and a
/// union stored without it would neither name its groups nor load as the
/// type.
pub(crate) fn check_unseen_variants(fields: &[FieldRef], path: &str) -> Result<()> {
    for f in fields {
        check_field(f, &child_path(path, f.name()))?;
    }
    Ok(())
}

fn check_field(f: &Field, path: &str) -> Result<()> {
    match f.data_type() {
        DataType::Struct(fs) => {
            check_unseen_variants(&fs.iter().cloned().collect::<Vec<_>>(), path)
        }
        DataType::LargeList(it) | DataType::List(it) => check_field(it, &items_path(path)),
        DataType::Map(e, _) => check_field(e, path),
        DataType::Union(u, _) => {
            let unseen: Vec<i8> = u
                .iter()
                .filter(|(_, c)| c.name().is_empty())
                .map(|(id, _)| id)
                .collect();
            if !unseen.is_empty() {
                let seen: Vec<&str> = u
                    .iter()
                    .filter(|(_, c)| !c.name().is_empty())
                    .map(|(_, c)| c.name().as_str())
                    .collect();
                return Err(Error::mismatch(
                    path,
                    "samples of every variant of the enum up to its last one (serde names a \
                     variant only when a value of it is serialized), or columns traced from \
                     the type (Columns::of, SchemaOptions::trace_type)",
                    format!("variants {seen:?} seen, variants at positions {unseen:?} not"),
                ));
            }
            for (_, c) in u.iter() {
                check_field(c, &child_path(path, c.name()))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The columns of `T` traced from the type, or else the stored fields
/// (values are read as stored: a type whose `Deserialize` parses text
/// cannot be traced, but reads from its stored kind).
pub(super) fn load_columns<T: DeserializeOwned>(stored: &arrow_schema::Schema) -> Result<Columns> {
    Columns::of::<T>().or_else(|_| {
        Ok(Columns {
            fields: stored.fields().iter().cloned().collect(),
            map_root: false,
        })
    })
}

/// The field path of a serde_arrow error (its `field` annotation, shown as
/// `field: "$.a.b"` in its message), or `$`.
pub(super) fn ser_path(e: &serde_arrow::Error) -> String {
    let text = e.to_string();
    let Some(i) = text.find("field: \"") else {
        return "$".into();
    };
    let rest = &text[i + 8..];
    match rest.find('"') {
        Some(j) if rest.starts_with('$') => rest[..j].to_owned(),
        Some(j) => format!("$.{}", &rest[..j]),
        None => "$".into(),
    }
}
