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

// The files, one concern each:
// - `mod.rs`: the entry points (`save_vector*`, `append_vector`,
//   `load_vector*`) and the public API's re-exports.
// - `trace.rs`: the columns of a type, traced (`SchemaOptions`, `FieldKind`,
//   `Columns`).
// - `fields.rs`: the h5vec field (the derive's schema node) of each traced
//   field, and the markers a traced field carries.
// - `ser/`: values to columns: `VectorWriter` and its encoder (`mod.rs`),
//   serde_arrow's arrays moved into the h5vec fields (`arrays.rs`), the
//   direct serializer (`fast/`).
// - `de/`: columns to values: `VectorReader` and a load's batches
//   (`mod.rs`), h5vec's arrays as serde_arrow reads them (`arrays.rs`), the
//   direct deserializer (`fast/`).
// - `fast.rs`: what the direct serializer and deserializer share.

mod de;
mod fast;
mod fields;
mod ser;
mod trace;

use hdf5::Group;

use crate::error::Result;
use crate::options::SaveOptions;
use de::load_batches;
use trace::load_columns;

pub use ::serde::{de::DeserializeOwned, Serialize};
pub use de::VectorReader;
pub use ser::VectorWriter;
pub use trace::{Columns, FieldKind, SchemaOptions};

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
