//! Vectors of any serde type, stored by columns in the layout
//! `#[derive(H5Vector)]` writes (crate feature `serde-columns`; SPEC.md
//! section 13).
//!
//! The columns come from the type itself: its `Deserialize` is traced
//! (serde_arrow's `from_type`, in passes until every enum variant and
//! `Option` is reached), or, with [`SchemaOptions::trace_samples`], the
//! values being saved are. Values go through serde_arrow into Arrow arrays
//! and through [`h5vec::arrow`](crate::arrow) into the datasets, with the
//! schema nodes of the derive: a type that derives both `H5Vector` and
//! `Serialize`/`Deserialize` with the same shape writes the same datasets
//! either way, and either path loads what the other saved.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Trade { symbol: String, price: f64, size: Option<u32>, tags: Vec<String> }
//!
//! # fn main() -> h5vec::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! let file = h5vec::create_file(dir.path().join("t.h5"))?;
//! let trades = vec![
//!     Trade { symbol: "ABC".into(), price: 10.5, size: Some(3), tags: vec!["x".into()] },
//!     Trade { symbol: "XYZ".into(), price: 7.25, size: None, tags: vec![] },
//! ];
//! h5vec::serde::save_vector(&file, "trades", &trades)?;
//! h5vec::serde::append_vector(&file, "trades", &trades[..1])?;
//! let back: Vec<Trade> = h5vec::serde::load_vector(&file, "trades")?;
//! assert_eq!(back.len(), 3);
//! assert_eq!(back[1], trades[1]);
//!
//! // The same layout as the derive: a derived struct of the same shape loads it.
//! #[derive(h5vec::H5Vector)]
//! struct TradeRow { symbol: String, price: f64, size: Option<u32>, tags: Vec<String> }
//! let rows: Vec<TradeRow> = h5vec::load_vector(&file, "trades")?;
//! assert_eq!(rows[2].symbol, "ABC");
//! # Ok(()) }
//! ```

mod convert;
mod fast;

use std::marker::PhantomData;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, FieldRef, Schema as ArrowSchema, TimeUnit};
use hdf5::Group;
use serde_arrow::schema::{SchemaLike, TracingOptions};
use serde_arrow::ArrayBuilder;

use crate::arrow::write::BatchWriter;
use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::kinds::list::items_path;
use crate::options::SaveOptions;

pub use ::serde::{de::DeserializeOwned, Serialize};

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
        DataType::Struct(fs) if convert::is_tuple(f) && !fs.is_empty() => {
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
                std::collections::HashMap::from([(convert::UUID_TEXT.to_owned(), "1".to_owned())]),
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
        convert::check_unseen_variants(&fields, "$")?;
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
        convert::relax_union_items(&mut fields);
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
/// [`SchemaOptions`]. Hand them to [`save_vector_in`], [`VectorWriter`],
/// [`load_vector_in`] or [`VectorReader`] to trace once.
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
    fields: Vec<FieldRef>,
    /// The root serializes as a map (`#[serde(flatten)]`): serde_arrow
    /// writes it.
    map_root: bool,
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
    fn h5(&self, opts: &SaveOptions) -> Result<Vec<FieldRef>> {
        self.fields
            .iter()
            .map(|f| {
                Ok(Arc::new(convert::h5_field(
                    f,
                    &child_path("$", f.name()),
                    opts,
                )?))
            })
            .collect()
    }
}

/// Serializes rows into the h5vec record batches of a vector.
struct Encoder {
    columns: Columns,
    h5: Arc<ArrowSchema>,
    builder: ArrayBuilder,
    /// The direct path, for the shapes it covers (fast.rs).
    fast: Option<fast::Plan>,
}

impl Encoder {
    fn new(columns: Columns, opts: &SaveOptions) -> Result<Self> {
        if columns.fields.is_empty() {
            return Err(Error::mismatch(
                "$",
                "a serde struct with at least one field (the vector's record)",
                "no fields",
            ));
        }
        let h5 = Arc::new(ArrowSchema::new(columns.h5(opts)?));
        let builder = ArrayBuilder::from_arrow(&columns.fields)
            .map_err(|e| Error::encode("$", format!("serde_arrow: {e}")))?;
        let fast = if columns.map_root {
            None
        } else {
            fast::Plan::new(&columns.fields, h5.fields())
        };
        Ok(Encoder {
            columns,
            h5,
            builder,
            fast,
        })
    }

    fn push_all<T: Serialize>(&mut self, items: &[T]) -> Result<()> {
        if let Some(plan) = &mut self.fast {
            return plan
                .push_all(items)
                .map_err(|e| Error::encode(e.path(), format!("serializing: {e}")));
        }
        self.builder
            .extend(items)
            .map_err(|e| Error::encode(ser_path(&e), format!("serializing: {e}")))
    }

    fn batch(&mut self) -> Result<RecordBatch> {
        if let Some(plan) = &mut self.fast {
            let cols = plan.finish()?;
            let rows = cols.first().map_or(0, |a| a.len());
            return RecordBatch::try_new_with_options(
                self.h5.clone(),
                cols,
                &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
            )
            .map_err(|e| Error::encode("$", e.to_string()));
        }
        let arrays = self
            .builder
            .to_arrow()
            .map_err(|e| Error::encode("$", format!("serde_arrow: {e}")))?;
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(arrays.len());
        for ((sf, hf), a) in self
            .columns
            .fields
            .iter()
            .zip(self.h5.fields())
            .zip(&arrays)
        {
            cols.push(convert::to_h5(sf, hf, a, &child_path("$", hf.name()))?);
        }
        let rows = arrays.first().map_or(0, |a| a.len());
        RecordBatch::try_new_with_options(
            self.h5.clone(),
            cols,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| Error::encode("$", e.to_string()))
    }
}

/// The field path of a serde_arrow error (its `field` annotation, shown as
/// `field: "$.a.b"` in its message), or `$`.
fn ser_path(e: &serde_arrow::Error) -> String {
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

/// Saves `items` as vector `name` in `group`, by columns, with the
/// default [`SaveOptions`]; the columns are traced from `T`.
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// struct P { x: i32, name: String }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// h5vec::serde::save_vector(&file, "ps", &[P { x: 1, name: "a".into() }])?;
/// assert_eq!(h5vec::serde::load_vector::<P>(&file, "ps")?, [P { x: 1, name: "a".into() }]);
/// # Ok(()) }
/// ```
pub fn save_vector<T: Serialize + DeserializeOwned>(
    group: &Group,
    name: &str,
    items: &[T],
) -> Result<()> {
    save_vector_with(group, name, items, &SaveOptions::default())
}

/// [`save_vector`] with `opts` (compression, chunking, replace, VLS
/// strings), as [`h5vec::save_vector_with`](crate::save_vector_with).
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct P { x: i32 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// let opts = h5vec::SaveOptions::default().chunk_length(1024);
/// h5vec::serde::save_vector_with(&file, "ps", &[P { x: 1 }], &opts)?;
/// assert_eq!(h5vec::vector_len(&file, "ps")?, 1);
/// # Ok(()) }
/// ```
pub fn save_vector_with<T: Serialize + DeserializeOwned>(
    group: &Group,
    name: &str,
    items: &[T],
    opts: &SaveOptions,
) -> Result<()> {
    save_vector_in(group, name, items, opts, &columns_for(items)?)
}

/// The columns of `T` traced from the type, or else from `items` (types
/// whose `Deserialize` parses text, such as chrono's and uuid's).
fn columns_for<T: Serialize + DeserializeOwned>(items: &[T]) -> Result<Columns> {
    Columns::of::<T>().or_else(|e| {
        if items.is_empty() {
            Err(e)
        } else {
            SchemaOptions::new().trace_samples(items)
        }
    })
}

/// [`save_vector_with`] with the columns given (traced from samples, or
/// with [`SchemaOptions::kind`]s): `T` needs only `Serialize`.
///
/// ```
/// #[derive(serde::Serialize)]
/// struct P { x: i32 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// let items = [P { x: 1 }, P { x: 2 }];
/// let columns = h5vec::serde::SchemaOptions::new().trace_samples(&items)?;
/// h5vec::serde::save_vector_in(&file, "ps", &items, &Default::default(), &columns)?;
/// assert_eq!(h5vec::load_column::<i32>(&file, "ps", "x")?, [1, 2]);
/// # Ok(()) }
/// ```
pub fn save_vector_in<T: Serialize>(
    group: &Group,
    name: &str,
    items: &[T],
    opts: &SaveOptions,
    columns: &Columns,
) -> Result<()> {
    let mut w = VectorWriter::create_sized(
        group,
        name,
        opts,
        columns.clone(),
        items.len() as u64,
        false,
    )?;
    w.extend(items)?;
    w.finish().map(drop)
}

/// Appends `items` to the existing vector `name` (saved through serde or
/// the derive): the rows are committed at the end, as
/// [`h5vec::append_vector`](crate::append_vector) (SPEC.md section 8).
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct P { x: i32 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// h5vec::serde::save_vector(&file, "ps", &[P { x: 1 }])?;
/// h5vec::serde::append_vector(&file, "ps", &[P { x: 2 }])?;
/// assert_eq!(h5vec::load_column::<i32>(&file, "ps", "x")?, [1, 2]);
/// # Ok(()) }
/// ```
pub fn append_vector<T: Serialize + DeserializeOwned>(
    group: &Group,
    name: &str,
    items: &[T],
) -> Result<()> {
    let mut w = VectorWriter::open_append(group, name, columns_for(items)?)?;
    w.extend(items)?;
    w.finish().map(drop)
}

/// Loads vector `name` as `Vec<T>`, by columns: any vector whose fields are
/// those of `T` (saved through serde, the derive or `h5vec::arrow`), with
/// every check of a typed load (SPEC.md section 7).
///
/// ```
/// #[derive(h5vec::H5Vector)]
/// struct Saved { x: i32, label: String }
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Loaded { x: i32, label: String }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// h5vec::save_vector(&file, "v", &[Saved { x: 4, label: "a".into() }])?;
/// let back: Vec<Loaded> = h5vec::serde::load_vector(&file, "v")?;
/// assert_eq!(back, [Loaded { x: 4, label: "a".into() }]);
/// # Ok(()) }
/// ```
pub fn load_vector<T: DeserializeOwned>(group: &Group, name: &str) -> Result<Vec<T>> {
    let batches = crate::arrow::batches(group, name, LOAD_BATCH_ROWS)?;
    let columns = load_columns::<T>(&batches.schema())?;
    load_batches(&columns, batches)
}

/// Rows per batch of a whole load: a typed load's batch (the column
/// readers reuse their buffers from one batch to the next).
const LOAD_BATCH_ROWS: usize = crate::options::READ_BATCH_ROWS as usize;

/// Most bytes allocated up front for the rows of a load (more grow as
/// they are read), as a typed load.
const MAX_PREALLOC_BYTES: u64 = 1 << 30;

/// Every row of `batches`, deserialized batch by batch into one vector.
fn load_batches<T: DeserializeOwned>(
    columns: &Columns,
    batches: crate::arrow::Batches,
) -> Result<Vec<T>> {
    let n = batches.remaining();
    let size = std::mem::size_of::<T>() as u64;
    // Zero-sized rows need no room.
    let cap = MAX_PREALLOC_BYTES.checked_div(size).map_or(0, |m| n.min(m));
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, cap, "$")?;
    if n == 0 {
        // No rows: the fields are still checked against the type.
        let empty = RecordBatch::new_empty(batches.schema());
        decode_into(columns, &empty, 0, &mut out)?;
        return Ok(out);
    }
    let mut first = 0u64;
    for b in batches {
        let b = b?;
        crate::limits::grow(&mut out, b.num_rows() as u64, n, "$")?;
        decode_into(columns, &b, first, &mut out)?;
        first += b.num_rows() as u64;
    }
    Ok(out)
}

/// The columns of `T` traced from the type, or else the stored fields
/// (values are read as stored: a type whose `Deserialize` parses text
/// cannot be traced, but reads from its stored kind).
fn load_columns<T: DeserializeOwned>(stored: &ArrowSchema) -> Result<Columns> {
    Columns::of::<T>().or_else(|_| {
        Ok(Columns {
            fields: stored.fields().iter().cloned().collect(),
            map_root: false,
        })
    })
}

/// [`load_vector`] with the columns given.
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// struct P { x: i32 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// h5vec::serde::save_vector(&file, "ps", &[P { x: 1 }])?;
/// let c = h5vec::serde::Columns::of::<P>()?;
/// assert_eq!(h5vec::serde::load_vector_in::<P>(&file, "ps", &c)?, [P { x: 1 }]);
/// # Ok(()) }
/// ```
pub fn load_vector_in<T: DeserializeOwned>(
    group: &Group,
    name: &str,
    columns: &Columns,
) -> Result<Vec<T>> {
    load_batches(
        columns,
        crate::arrow::batches(group, name, LOAD_BATCH_ROWS)?,
    )
}

/// Deserializes the rows of `batch` (as `h5vec::arrow` reads them; its
/// first row is row `first` of the vector) onto the end of `out`.
fn decode_into<T: DeserializeOwned>(
    columns: &Columns,
    batch: &RecordBatch,
    first: u64,
    out: &mut Vec<T>,
) -> Result<()> {
    let root = StructArray::from(batch.clone());
    if let Some(r) = fast::Reader::new(&columns.fields, &root) {
        return r
            .rows_into(first, out)
            .map_err(|e| Error::mismatch(e.path(), "values the serde type reads", e.to_string()));
    }
    let mut fields = Vec::with_capacity(columns.fields.len());
    let mut arrays = Vec::with_capacity(columns.fields.len());
    for sf in &columns.fields {
        let path = child_path("$", sf.name());
        let col = root.column_by_name(sf.name()).ok_or_else(|| {
            Error::mismatch(
                "$",
                format!("a stored field `{}`", sf.name()),
                format!("fields {:?}", root.column_names()),
            )
        })?;
        let (f, a) = convert::from_h5(sf, col, &path)?;
        fields.push(f);
        arrays.push(a);
    }
    if fields.is_empty() {
        return Err(Error::mismatch(
            "$",
            "a serde struct with at least one field",
            "no fields",
        ));
    }
    let de = serde_arrow::Deserializer::from_arrow(&fields, &arrays)
        .map_err(|e| Error::mismatch(ser_path(&e), "values the serde type reads", e.to_string()))?;
    let rows = Vec::<T>::deserialize(de)
        .map_err(|e| Error::mismatch(ser_path(&e), "values the serde type reads", e.to_string()))?;
    out.extend(rows);
    Ok(())
}

use ::serde::Deserialize as _;

/// Most rows serialized before they go to the writer's buffers: a few
/// thousand rows of columns stay in the CPU's cache for that copy (the
/// writer still writes and commits at its own batch size).
const ENCODE_ROWS: usize = 4096;

/// Writes a vector of a serde type with bounded memory: rows are
/// serialized a few thousand at a time, written in the batches a typed
/// writer uses for the same options and committed as
/// [`h5vec::VectorWriter`](crate::VectorWriter) commits (SPEC.md section
/// 8); a new vector is linked by [`finish`](Self::finish).
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct P { x: u64 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// let mut w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
/// for x in 0..10 {
///     w.push(&P { x })?;
/// }
/// assert_eq!(w.finish()?, 10);
/// assert_eq!(h5vec::load_column::<u64>(&file, "ps", "x")?[9], 9);
/// # Ok(()) }
/// ```
pub struct VectorWriter<T> {
    enc: Encoder,
    inner: BatchWriter,
    buffered: usize,
    batch: usize,
    _t: PhantomData<fn(&T)>,
}

impl<T: Serialize> VectorWriter<T> {
    /// Starts new vector `name`, with the columns traced from `T`.
    ///
    /// ```
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
    /// assert_eq!(w.finish()?, 0);
    /// # Ok(()) }
    /// ```
    pub fn create(group: &Group, name: &str, opts: &SaveOptions) -> Result<Self>
    where
        T: DeserializeOwned,
    {
        Self::create_in(group, name, opts, Columns::of::<T>()?)
    }

    /// Starts new vector `name` with the columns given.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let c = h5vec::serde::SchemaOptions::new().trace_samples(&[P { x: 0 }])?;
    /// let mut w = h5vec::serde::VectorWriter::create_in(&file, "ps", &Default::default(), c)?;
    /// w.push(&P { x: 3 })?;
    /// assert_eq!(w.finish()?, 1);
    /// # Ok(()) }
    /// ```
    pub fn create_in(
        group: &Group,
        name: &str,
        opts: &SaveOptions,
        columns: Columns,
    ) -> Result<Self> {
        Self::create_sized(group, name, opts, columns, u64::MAX, true)
    }

    fn create_sized(
        group: &Group,
        name: &str,
        opts: &SaveOptions,
        columns: Columns,
        len_hint: u64,
        commit_often: bool,
    ) -> Result<Self> {
        let enc = Encoder::new(columns, opts)?;
        let root = crate::arrow::write::node::root_node(&enc.h5, opts)?;
        let inner = BatchWriter::create(group, name, opts, root, len_hint, commit_often)?;
        Ok(VectorWriter {
            enc,
            inner,
            buffered: 0,
            batch: opts.batch_rows(len_hint).clamp(1, ENCODE_ROWS),
            _t: PhantomData,
        })
    }

    /// Continues the existing vector `name` (its fields must be those of
    /// the columns).
    ///
    /// ```
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// h5vec::serde::save_vector(&file, "ps", &[P { x: 1 }])?;
    /// let mut w = h5vec::serde::VectorWriter::open_append(&file, "ps", h5vec::serde::Columns::of::<P>()?)?;
    /// w.push(&P { x: 2 })?;
    /// assert_eq!(w.finish()?, 2);
    /// # Ok(()) }
    /// ```
    pub fn open_append(group: &Group, name: &str, columns: Columns) -> Result<Self> {
        let opts = SaveOptions::default();
        let enc = Encoder::new(columns, &opts)?;
        // The stored fields are checked against the columns before a row is written.
        let empty = RecordBatch::new_empty(enc.h5.clone());
        let inner = BatchWriter::open_append(group, name, &opts, Some(&empty))?;
        Ok(VectorWriter {
            enc,
            inner,
            buffered: 0,
            batch: opts.batch_rows(u64::MAX).clamp(1, ENCODE_ROWS),
            _t: PhantomData,
        })
    }

    /// Adds one row.
    ///
    /// ```
    /// # #[derive(serde::Serialize, serde::Deserialize)]
    /// # struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let mut w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
    /// w.push(&P { x: 7 })?;
    /// assert_eq!(w.finish()?, 1);
    /// # Ok(()) }
    /// ```
    pub fn push(&mut self, item: &T) -> Result<()> {
        self.extend(std::slice::from_ref(item))
    }

    /// Adds rows, writing each full batch as it fills.
    ///
    /// ```
    /// # #[derive(serde::Serialize, serde::Deserialize)]
    /// # struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let mut w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
    /// w.extend(&[P { x: 1 }, P { x: 2 }])?;
    /// assert_eq!(w.finish()?, 2);
    /// # Ok(()) }
    /// ```
    pub fn extend(&mut self, items: &[T]) -> Result<()> {
        let mut rest = items;
        while !rest.is_empty() {
            let take = (self.batch - self.buffered).min(rest.len());
            self.enc.push_all(&rest[..take])?;
            self.buffered += take;
            rest = &rest[take..];
            if self.buffered >= self.batch {
                self.write_batch()?;
            }
        }
        Ok(())
    }

    fn write_batch(&mut self) -> Result<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        let b = self.enc.batch()?;
        self.buffered = 0;
        self.inner.write(&b)?;
        drop(b);
        // The batch's arrays are gone: the direct path reuses their buffers.
        if let Some(plan) = &mut self.enc.fast {
            plan.reclaim();
        }
        Ok(())
    }

    /// Writes and commits the remaining rows, links a new vector, and
    /// returns the vector's length.
    ///
    /// ```
    /// # #[derive(serde::Serialize, serde::Deserialize)]
    /// # struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
    /// assert_eq!(w.finish()?, 0);
    /// # Ok(()) }
    /// ```
    pub fn finish(mut self) -> Result<u64> {
        self.write_batch()?;
        self.inner.finish()
    }
}

/// Reads a vector of a serde type a batch of rows at a time (bounded
/// memory), through [`h5vec::arrow::batches`](crate::arrow::batches): an
/// iterator of `Vec<T>` batches.
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct P { x: u64 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// let items: Vec<P> = (0..10).map(|x| P { x }).collect();
/// h5vec::serde::save_vector(&file, "ps", &items)?;
/// let mut total = 0;
/// for batch in h5vec::serde::VectorReader::<P>::open(&file, "ps", 4)? {
///     total += batch?.iter().map(|p| p.x).sum::<u64>();
/// }
/// assert_eq!(total, 45);
/// # Ok(()) }
/// ```
pub struct VectorReader<T> {
    columns: Columns,
    batches: crate::arrow::Batches,
    /// The vector's row of the next batch's first row.
    next: u64,
    _t: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> VectorReader<T> {
    /// Opens vector `name` (every check of a load runs here), to read
    /// `batch_rows` rows at a time; the columns are traced from `T`.
    ///
    /// ```
    /// # #[derive(serde::Serialize, serde::Deserialize)]
    /// # struct P { x: u64 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// h5vec::serde::save_vector(&file, "ps", &[P { x: 1 }])?;
    /// let r = h5vec::serde::VectorReader::<P>::open(&file, "ps", 1024)?;
    /// assert_eq!(r.count(), 1);
    /// # Ok(()) }
    /// ```
    pub fn open(group: &Group, name: &str, batch_rows: usize) -> Result<Self> {
        let stored = crate::arrow::read_schema(group, name)?;
        Self::open_in(group, name, batch_rows, load_columns::<T>(&stored)?)
    }

    /// [`open`](Self::open) with the columns given.
    ///
    /// ```
    /// # #[derive(serde::Serialize, serde::Deserialize)]
    /// # struct P { x: u64 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// h5vec::serde::save_vector(&file, "ps", &[P { x: 1 }])?;
    /// let c = h5vec::serde::Columns::of::<P>()?;
    /// let r = h5vec::serde::VectorReader::<P>::open_in(&file, "ps", 1024, c)?;
    /// assert_eq!(r.count(), 1);
    /// # Ok(()) }
    /// ```
    pub fn open_in(group: &Group, name: &str, batch_rows: usize, columns: Columns) -> Result<Self> {
        Ok(VectorReader {
            columns,
            batches: crate::arrow::batches(group, name, batch_rows.max(1))?,
            next: 0,
            _t: PhantomData,
        })
    }
}

impl<T: DeserializeOwned> Iterator for VectorReader<T> {
    type Item = Result<Vec<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.batches.next()?;
        Some(b.and_then(|b| {
            let mut out = Vec::new();
            crate::limits::reserve(&mut out, b.num_rows() as u64, "$")?;
            decode_into(&self.columns, &b, self.next, &mut out)?;
            self.next += b.num_rows() as u64;
            Ok(out)
        }))
    }
}
