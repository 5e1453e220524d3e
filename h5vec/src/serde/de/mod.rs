//! Columns to values: [`VectorReader`] (a batch of rows at a time) and a
//! whole load's batches, each deserialized by the direct deserializer
//! (`fast/`) where it covers the shape, and else by serde_arrow from the
//! arrays `arrays` makes of what `h5vec::arrow` read.

mod arrays;
mod fast;

use std::marker::PhantomData;

use ::serde::Deserialize as _;
use arrow_array::{RecordBatch, StructArray};
use hdf5::Group;

use super::trace::{load_columns, ser_path};
use super::{Columns, DeserializeOwned};
use crate::codec::child_path;
use crate::error::{Error, Result};

/// Most bytes allocated up front for the rows of a load (more grow as
/// they are read), as a typed load.
const MAX_PREALLOC_BYTES: u64 = 1 << 30;

/// Every row of `batches`, deserialized batch by batch into one vector.
pub(super) fn load_batches<T: DeserializeOwned>(
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
        let (f, a) = arrays::from_h5(sf, col, &path)?;
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
