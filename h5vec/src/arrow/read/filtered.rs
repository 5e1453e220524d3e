//! Reading only the rows a filter selects (SPEC.md section 14):
//! [`read_where`] and [`batches_where`]. The rows come from
//! [`crate::select_rows`], then `batches`' `read_rows` reads them in runs,
//! so a batch has exactly the schema [`super::read_vector`] gives.

use std::ops::Range;

use arrow_array::RecordBatch;
use hdf5::Group;

use crate::error::{Error, Result};
use crate::query::Filter;

use super::batches::{read_rows, Batches};
use super::container::Source;
use super::select::parse_picks;

/// The rows of vector `name` of `group` where `filter` is true
/// ([`crate::select_rows`]), in row order, as one record batch with exactly
/// the schema [`super::read_vector`] gives (an empty batch of that schema
/// when no row matches).
///
/// Only the chunks holding selected rows are read: runs of selected rows
/// closer than 4,096 rows are read with one range read each, and the rows
/// between dropped. Whatever [`crate::select_rows`] refuses (a container
/// that is not a vector, a column that is not a leaf) is the same error
/// here. For bounded memory on large results, see [`batches_where`].
///
/// ```
/// use h5vec::arrow::arrow_array::{cast::AsArray, types::Float64Type, Array};
/// use h5vec::col;
///
/// #[derive(h5vec::H5Vector)]
/// struct Reading { station: String, celsius: Option<f64> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("w.h5"))?;
/// let rows: Vec<Reading> = (0..10)
///     .map(|i| Reading {
///         station: format!("s{i}"),
///         celsius: (i != 7).then_some(i as f64 * 2.5),
///     })
///     .collect();
/// h5vec::save_vector(&file, "readings", &rows)?;
///
/// let hot = h5vec::arrow::read_where(&file, "readings", &col("celsius").ge(15.0))?;
/// assert_eq!(hot.schema(), h5vec::arrow::read_schema(&file, "readings")?);
/// let stations = hot.column(0).as_string::<i64>();
/// let names: Vec<&str> = stations.iter().map(Option::unwrap).collect();
/// assert_eq!(names, ["s6", "s8", "s9"]); // s7's is missing: not selected
/// assert_eq!(hot.column(1).as_primitive::<Float64Type>().value(2), 22.5);
///
/// // The text syntax of the command's `--where` (SPEC.md section 14.2):
/// let filter: h5vec::Filter = "celsius is null or station == 's0'".parse()?;
/// assert_eq!(h5vec::arrow::read_where(&file, "readings", &filter)?.num_rows(), 2);
/// // No match: an empty batch of the same schema.
/// let none = h5vec::arrow::read_where(&file, "readings", &col("celsius").gt(100.0))?;
/// assert_eq!((none.num_rows(), none.num_columns()), (0, 2));
/// # Ok(()) }
/// ```
pub fn read_where(group: &Group, name: &str, filter: &Filter) -> Result<RecordBatch> {
    let mut src = Source::open(group, name, None)?;
    let rows = crate::query::select_rows(group, name, filter)?;
    check_rows(&rows, src.rows)?;
    read_rows(&mut src, &rows)
}

/// The rows of `name` where `filter` is true, as record batches of
/// `batch_rows` selected rows each (the last may be shorter), in row order:
/// [`read_where`] with bounded memory. `columns`: only these columns, named
/// as for [`super::batches_columns`] (`None`: all of them); the filter may
/// use any column, selected or not. `rows`: only the selected rows in this
/// range (`None`: all rows; a range past the row count is an error, as for
/// [`super::batches_range`]).
///
/// The query runs once, when this is called ([`crate::select_rows`]: its
/// errors are returned here); each step then reads only the runs of rows
/// its batch needs. The selected row numbers are kept (8 bytes per selected
/// row), the rows themselves only a batch at a time. [`Batches::rows`] is
/// the container's row count, [`Batches::remaining`] the selected rows not
/// yet returned.
///
/// ```
/// use h5vec::arrow::arrow_array::{cast::AsArray, types::UInt32Type};
/// use h5vec::col;
///
/// #[derive(h5vec::H5Vector)]
/// struct Hit { id: u32, energy: f32, detector: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("h.h5"))?;
/// let hits: Vec<Hit> = (0..1000)
///     .map(|i| Hit { id: i, energy: (i % 100) as f32, detector: format!("d{}", i % 3) })
///     .collect();
/// h5vec::save_vector(&file, "hits", &hits)?;
///
/// let strong = col("energy").ge(95.0f32);
/// let batches = h5vec::arrow::batches_where(&file, "hits", &strong, Some(&["id"]), None, 20)?;
/// assert_eq!((batches.rows(), batches.remaining()), (1000, 50));
/// let mut ids = Vec::new();
/// for batch in batches {
///     let batch = batch?;
///     assert_eq!(batch.num_columns(), 1);
///     ids.extend(batch.column(0).as_primitive::<UInt32Type>().values().iter().copied());
/// }
/// assert_eq!(ids.len(), 50);
/// assert_eq!(&ids[..6], &[95, 96, 97, 98, 99, 195]);
///
/// // Only rows 100..300, all columns:
/// let some = h5vec::arrow::batches_where(&file, "hits", &strong, None, Some(100..300), 1000)?;
/// assert_eq!(some.remaining(), 10);
/// # Ok(()) }
/// ```
pub fn batches_where(
    group: &Group,
    name: &str,
    filter: &Filter,
    columns: Option<&[&str]>,
    rows: Option<Range<u64>>,
    batch_rows: usize,
) -> Result<Batches> {
    let picks = columns.map(parse_picks).transpose()?;
    let src = Source::open(group, name, picks.as_deref())?;
    if let Some(r) = &rows {
        crate::vector::check_range(r, src.rows)?;
    }
    let mut selected = crate::query::select_rows(group, name, filter)?;
    check_rows(&selected, src.rows)?;
    if let Some(r) = rows {
        let a = selected.partition_point(|&i| i < r.start);
        let b = selected.partition_point(|&i| i < r.end);
        selected.truncate(b);
        selected.drain(..a);
    }
    Batches::selected(src, selected, batch_rows)
}

/// The selected rows must lie inside the container as it was opened (the
/// query opens it again: a vector grown in between is not read past what
/// the reader was opened for).
fn check_rows(rows: &[u64], count: u64) -> Result<()> {
    match rows.last() {
        Some(&last) if last >= count => Err(Error::invalid(
            "$",
            format!(
                "the query selected row {last}, but the vector has {count} rows: it changed while being read"
            ),
        )),
        _ => Ok(()),
    }
}
