//! Reading without the Rust type: a vector (from its schema tree), an h5col
//! table (from its columns) or a VLS string array into Arrow record
//! batches (SPEC.md section 11).
//!
//! The container is opened as a typed load opens it (the walk of section
//! 7, the metadata, the schema tree); then a tree of column readers
//! ([`nodes`]'s `Node`, one per kind in `kinds/<kind>/arrow/read.rs`) is
//! built from the schema node and the data group, each
//! checked on open by the same functions the typed decoders use. Reading a
//! range of rows is one HDF5 read per dataset; numbers go straight into the
//! Arrow buffers.
//!
//! This file holds the public functions; `batches` the iterator `Batches`
//! (of a range or of selected rows, read in runs); `source` opens a
//! container into a `Source` (batch schema and root reader), `select` cuts
//! a schema tree down to the selected columns, `open` builds the readers of
//! a schema tree, `table` those of an h5col table's columns, `retyped` reads
//! numbers as another Arrow type of the same width (times, f16),
//! `filtered` reads the rows a query selects (`read_where`,
//! `batches_where`).

use std::ops::Range;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use hdf5::Group;

use crate::error::Result;

mod batches;
mod container;
mod filtered;
pub(crate) mod nodes;
mod open;
pub(crate) mod retyped;
pub(crate) mod select;
mod source;
mod table;
mod typed;

pub use batches::Batches;
use container::Source;
pub use filtered::{batches_where, read_where};
use select::parse_picks;

/// Reads the whole vector, h5col table or VLS string array `name` of
/// `group` into one record batch, from what the file says alone (SPEC.md
/// section 11).
///
/// ```
/// use h5vec::arrow::arrow_array::{cast::AsArray, types::Int32Type};
///
/// #[derive(h5vec::H5Vector)]
/// struct Point { x: i32, label: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// let points = [Point { x: 1, label: "a".into() }, Point { x: 2, label: "b".into() }];
/// h5vec::save_vector(&file, "points", &points)?;
/// let batch = h5vec::arrow::read_vector(&file, "points")?;
/// assert_eq!(batch.num_rows(), 2);
/// assert_eq!(batch.column(0).as_primitive::<Int32Type>().values(), &[1, 2]);
/// assert_eq!(batch.column(1).as_string::<i64>().value(1), "b");
/// # Ok(()) }
/// ```
pub fn read_vector(group: &Group, name: &str) -> Result<RecordBatch> {
    let mut src = Source::open(group, name, None)?;
    let rows = src.rows;
    src.read(0..rows)
}

/// Reads rows `rows` of vector, h5col table or VLS string array `name`,
/// reading only what those rows need. A range past the row count is an
/// error, as for [`crate::load_range`].
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("r.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u8, 2, 3, 4])?;
/// let batch = h5vec::arrow::read_range(&file, "xs", 1..3)?;
/// assert_eq!(batch.num_rows(), 2);
/// assert!(h5vec::arrow::read_range(&file, "xs", 3..5).is_err());
/// # Ok(()) }
/// ```
pub fn read_range(group: &Group, name: &str, rows: Range<u64>) -> Result<RecordBatch> {
    let mut src = Source::open(group, name, None)?;
    crate::vector::check_range(&rows, src.rows)?;
    src.read(rows)
}

/// The record batches of `name`, `batch_rows` rows each (the last may be
/// shorter): the container is opened and checked once, and each step reads
/// only its rows, so memory stays bounded for vectors larger than RAM.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("b.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1.0f64, 2.0, 3.0])?;
/// let batches = h5vec::arrow::batches(&file, "xs", 2)?;
/// assert_eq!((batches.rows(), batches.remaining()), (3, 3));
/// let sizes: Vec<usize> = batches.map(|b| b.map(|b| b.num_rows())).collect::<Result<_, _>>()?;
/// assert_eq!(sizes, [2, 1]);
/// # Ok(()) }
/// ```
pub fn batches(group: &Group, name: &str, batch_rows: usize) -> Result<Batches> {
    let src = Source::open(group, name, None)?;
    let rows = src.rows;
    Batches::new(src, 0..rows, batch_rows)
}

/// The record batches of rows `rows` of `name`, `batch_rows` rows each (the
/// last may be shorter): [`batches`] over a range, the container opened and
/// checked once. A range past the row count is an error, as for
/// [`read_range`].
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("br.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u16, 2, 3, 4, 5])?;
/// let batches = h5vec::arrow::batches_range(&file, "xs", 1..4, 2)?;
/// assert_eq!((batches.rows(), batches.remaining()), (5, 3));
/// let sizes: Vec<usize> = batches.map(|b| b.map(|b| b.num_rows())).collect::<Result<_, _>>()?;
/// assert_eq!(sizes, [2, 1]);
/// assert!(h5vec::arrow::batches_range(&file, "xs", 4..6, 2).is_err());
/// # Ok(()) }
/// ```
pub fn batches_range(
    group: &Group,
    name: &str,
    rows: Range<u64>,
    batch_rows: usize,
) -> Result<Batches> {
    let src = Source::open(group, name, None)?;
    crate::vector::check_range(&rows, src.rows)?;
    Batches::new(src, rows, batch_rows)
}

/// The record batches of some columns of `name`: [`batches_range`] (all
/// rows with `rows = None`) reading and checking only the columns named in
/// `columns`, in the order given.
///
/// A column is named as in the batches of [`read_schema`]: `x` is the
/// batch column `x` (`value` when the vector is not a record), and `a.b`
/// the field `b` of the record column `a` (at any depth): the result's
/// `a` is then a struct of the fields named (a record named whole takes
/// all its fields). Each field's `h5vec.schema` metadata (and the
/// batch's) describes what was selected, so that the batches write back
/// as a vector of those columns. A name that is no column, or that goes
/// inside something other than a record, is an error naming it. Columns
/// not named are never opened: a column this version of h5vec cannot read
/// (an unknown kind or codec, SPEC.md section 11) does not stop reading
/// the others.
///
/// ```
/// use h5vec::arrow::arrow_array::{cast::AsArray, types::Float64Type};
///
/// #[derive(h5vec::H5Vector)]
/// struct Pos { x: f64, y: f64 }
/// #[derive(h5vec::H5Vector)]
/// struct Row { id: u32, pos: Pos, name: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("c.h5"))?;
/// let rows = [Row { id: 1, pos: Pos { x: 0.5, y: 1.5 }, name: "a".into() }];
/// h5vec::save_vector(&file, "rows", &rows)?;
/// let mut batches = h5vec::arrow::batches_columns(&file, "rows", &["name", "pos.y"], None, 100)?;
/// let batch = batches.next().unwrap()?;
/// let schema = batch.schema();
/// let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
/// assert_eq!(names, ["name", "pos"]);
/// let pos = batch.column(1).as_struct();
/// assert_eq!(pos.column_names(), ["y"]);
/// assert_eq!(pos.column(0).as_primitive::<Float64Type>().value(0), 1.5);
/// assert!(h5vec::arrow::batches_columns(&file, "rows", &["pos.z"], None, 100).is_err());
/// # Ok(()) }
/// ```
pub fn batches_columns(
    group: &Group,
    name: &str,
    columns: &[&str],
    rows: Option<Range<u64>>,
    batch_rows: usize,
) -> Result<Batches> {
    let picks = parse_picks(columns)?;
    let src = Source::open(group, name, Some(&picks))?;
    let rows = match rows {
        Some(r) => {
            crate::vector::check_range(&r, src.rows)?;
            r
        }
        None => 0..src.rows,
    };
    Batches::new(src, rows, batch_rows)
}

/// The Arrow schema of `name` (what [`read_vector`] returns), with every
/// check of opening it but no row read.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("s.h5"))?;
/// h5vec::save_vector(&file, "xs", &[Some(1i64), None])?;
/// let schema = h5vec::arrow::read_schema(&file, "xs")?;
/// assert_eq!(schema.field(0).name(), "value");
/// assert!(schema.field(0).is_nullable());
/// # Ok(()) }
/// ```
pub fn read_schema(group: &Group, name: &str) -> Result<SchemaRef> {
    Ok(Source::open(group, name, None)?.schema)
}
