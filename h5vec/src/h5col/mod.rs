//! h5col tables (SPEC.md section 9): read and write the tables of the h5col
//! reference implementation, one Rust struct per row.
//!
//! Layout on disk:
//! ```text
//! <table>/                 group; attributes CLASS = "COLUMN_TABLE", VERSION = "1.0",
//!                          column-order, NROWS (see `table`)
//! <table>/<col>            a number column: 1-D dataset, fill value = "missing" (`number`)
//! <table>/<col>            a bool column: 1-D h5col bool, never missing (`boolean`)
//! <table>/<col>            a string column: 1-D fixed-length UTF-8 strings, fill value ""
//!                          (`string`)
//! <table>/<col>/           a list column: exactly `crate::kinds::list`'s group, MASK for
//!                          nullable lists (`list`)
//! <table>/<col>            a categorical column: integer codes, @CATEGORIES = object
//!                          reference to <table>/CATEGORIES/<col>__CATEGORIES, the labels
//!                          (`category`)
//! <table>/SEARCH_INDEXES/  h5col's search indexes: left alone; appends bump
//!                          @GENERATION so they read as stale (`generation`)
//! ```
//! Every dataset may be longer than NROWS (a truncated table or an
//! interrupted append): readers use rows `0..NROWS`, and offsets
//! `0..=NROWS` of list columns, never the extents. Appends write every
//! column's values first, then the masks, then the offsets, flush the file,
//! and only then rewrite NROWS.
//!
//! Rust field types map to columns (the `TableColumn` trait): `i8`..`u64`,
//! `f32`, `f64` (and `Option` of them: `None` is the fill value), `bool`,
//! `String` and `Option<String>` (`None` is ""), `Vec<T>` and
//! `Option<Vec<T>>` for every element type a `Vec<T>` field of a vector
//! takes (numbers, `bool`, `char`, enums, `String`, `Option<String>`,
//! nested `Vec`s, arrays, tuples, derived structs, and `Option<number>`,
//! stored as the fill value); fieldless enums and `Option` of them are
//! categorical columns, which `String` and `Option<String>` fields also
//! read (and append to) as their labels.
//!
//! Modules: `table` (the table group and its attributes), `fields` (the
//! traits mapping struct fields to columns), `generation` (search-index
//! tokens on appends), and one module per column kind (`number`,
//! `boolean`, `string`, `list`, `category`).

use hdf5::Group;

use crate::containers::create_container;
use crate::error::{Error, Result};
use crate::guard::Access;
use crate::kinds::record::Record;
use crate::options::{SaveOptions, WriteCtx};

mod boolean;
mod category;
mod fields;
pub(crate) mod generation;
mod list;
mod number;
mod string;
pub(crate) mod table;

#[doc(hidden)]
pub use category::TableEnum;
pub(crate) use category::{is_categorical, Categorical};
use fields::TableFields;
pub(crate) use table::open_checked;
// The schema-driven reader (`crate::arrow`) and queries (`crate::query`)
// read tables column by column.
pub(crate) use boolean::open_bool_col;
#[cfg(feature = "arrow")]
pub(crate) use string::{open_fixed_str, FixedStrReader};
#[cfg(feature = "arrow")]
pub(crate) use table::read_column_order;
pub(crate) use table::{column_members, column_path, is_reserved_member, table_place};

use table::{push_and_commit, write_new_table};

/// Rows read per batch.
const BATCH: u64 = 1 << 16;

/// Loads table `name` of `parent` as one `T` per row; `T`'s fields are the
/// columns (by name; the table may hold more columns than `T` reads).
///
/// The table is checked first (CLASS, VERSION, NROWS, every column's type,
/// members and extents); reading then uses exactly NROWS rows. Errors name
/// the table or the column (`/table/col`).
///
/// ```
/// use h5vec::H5Vector;
/// use h5vec::h5col::{append_table, load_table, save_table};
///
/// #[derive(H5Vector, Clone, Debug, PartialEq)]
/// struct Trade { id: u32, price: Option<f64>, venue: String, fills: Vec<u16> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("t.h5"))?;
/// let day1 = vec![Trade { id: 1, price: Some(9.5), venue: "X".into(), fills: vec![1, 2] }];
/// let day2 = vec![Trade { id: 2, price: None, venue: "Y".into(), fills: vec![] }];
/// save_table(&file, "trades", &day1)?;
/// append_table(&file, "trades", &day2)?;
/// let all: Vec<Trade> = load_table(&file, "trades")?;
/// assert_eq!(all, [day1, day2].concat());
/// // A row type may read fewer columns than the table holds.
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct Price { price: Option<f64> }
/// assert_eq!(load_table::<Price>(&file, "trades")?, [Price { price: Some(9.5) }, Price { price: None }]);
/// # Ok(()) }
/// ```
pub fn load_table<T>(parent: &Group, name: &str) -> Result<Vec<T>>
where
    T: Record,
    T::Fields: TableFields,
{
    let (table, _walked, nrows) = open_checked(parent, name, Access::Read)?;
    let path = table::table_place(&table);
    crate::limits::check_empty_rows::<T>(nrows, &path)?;
    let mut readers = T::Fields::table_open(&table, T::FIELD_NAMES, nrows)?;
    let mut out = Vec::new();
    let mut start = 0;
    while start < nrows {
        let end = nrows.min(start + BATCH);
        crate::limits::grow(&mut out, end - start, nrows, &path)?;
        T::Fields::table_load(&mut readers, start..end)?;
        for _ in start..end {
            out.push(T::from_parts(T::Fields::table_next(&mut readers)?));
        }
        start = end;
    }
    Ok(out)
}

/// The rows of table `name` of `parent` where `filter` is true, in row
/// order, as [`load_table`] reads them ([`crate::select_rows`] answers the
/// filter: SPEC.md section 14.7). Only the runs of rows around the matching
/// ones are read; a row between them that `T` cannot hold (a missing value
/// in a field that is not an `Option`) is skipped, never an error.
///
/// ```
/// use h5vec::{col, H5Vector};
/// use h5vec::h5col::{load_table_where, save_table};
///
/// #[derive(H5Vector, Clone, Debug, PartialEq)]
/// struct Trade { id: u32, price: Option<f64>, venue: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("t.h5"))?;
/// let trades: Vec<Trade> = (0..100)
///     .map(|i| Trade { id: i, price: (i % 10 != 0).then_some(i as f64), venue: "X".into() })
///     .collect();
/// save_table(&file, "trades", &trades)?;
/// let big = col("price").ge(95.0) | col("id").eq(3u32);
/// let got: Vec<Trade> = load_table_where(&file, "trades", &big)?;
/// assert_eq!(got.iter().map(|t| t.id).collect::<Vec<_>>(), [3, 95, 96, 97, 98, 99]);
/// // A missing price is no value: not even `ne` selects it.
/// assert_eq!(h5vec::count_where(&file, "trades", &col("price").ne(1.0))?, 89);
/// # Ok(()) }
/// ```
pub fn load_table_where<T>(parent: &Group, name: &str, filter: &crate::Filter) -> Result<Vec<T>>
where
    T: Record,
    T::Fields: TableFields,
{
    let rows = crate::query::select_rows(parent, name, filter)?;
    let (table, _walked, nrows) = open_checked(parent, name, Access::Read)?;
    let path = table::table_place(&table);
    if let Some(&last) = rows.last() {
        if last >= nrows {
            return Err(Error::invalid(
                &path,
                format!(
                    "the query selected row {last}, but the table has {nrows} rows: it changed while being read"
                ),
            ));
        }
    }
    crate::limits::check_empty_rows::<T>(nrows, &path)?;
    let mut readers = T::Fields::table_open(&table, T::FIELD_NAMES, nrows)?;
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, rows.len() as u64, &path)?;
    for (at, span) in crate::query::runs(&rows) {
        T::Fields::table_load(&mut readers, span.clone())?;
        // The row the readers return next.
        let mut pos = span.start;
        for &r in &rows[at] {
            while pos < r {
                if T::Fields::table_next(&mut readers).is_err() {
                    // A row `T` cannot hold, not selected: restart at `r`.
                    T::Fields::table_load(&mut readers, r..span.end)?;
                    pos = r;
                    break;
                }
                pos += 1;
            }
            out.push(T::from_parts(T::Fields::table_next(&mut readers)?));
            pos += 1;
        }
    }
    Ok(out)
}

/// Saves `rows` as a new h5col table `name` in `parent`, one column per
/// field of `T` (in declaration order, recorded in `column-order`).
///
/// The name must not exist yet; a failed save removes the partly written group.
///
/// ```
/// use h5vec::H5Vector;
/// use h5vec::h5col::{append_table, load_table, save_table};
///
/// #[derive(H5Vector, Clone, Debug, PartialEq)]
/// struct Trade { id: u32, price: Option<f64>, venue: String, fills: Vec<u16> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("t.h5"))?;
/// let day1 = vec![Trade { id: 1, price: Some(9.5), venue: "X".into(), fills: vec![1, 2] }];
/// let day2 = vec![Trade { id: 2, price: None, venue: "Y".into(), fills: vec![] }];
/// save_table(&file, "trades", &day1)?;
/// append_table(&file, "trades", &day2)?;
/// let all: Vec<Trade> = load_table(&file, "trades")?;
/// assert_eq!(all, [day1, day2].concat());
/// assert!(save_table(&file, "trades", &all).is_err()); // exists already
/// # Ok(()) }
/// ```
pub fn save_table<T>(parent: &Group, name: &str, rows: &[T]) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    save_table_with(parent, name, rows, &SaveOptions::default())
}

/// [`save_table`] with save options: chunk length, compression and
/// checksums ([`SaveOptions::checksum`]) of the table's columns.
///
/// ```
/// use h5vec::H5Vector;
/// use h5vec::h5col::{load_table, save_table_with};
///
/// #[derive(H5Vector, Clone, Debug, PartialEq)]
/// struct Trade { id: u32, venue: String, fills: Vec<u16> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("t.h5"))?;
/// let rows = vec![Trade { id: 1, venue: "X".into(), fills: vec![1, 2] }];
/// let opts = h5vec::SaveOptions::default().checksum(true);
/// save_table_with(&file, "trades", &rows, &opts)?;
/// assert_eq!(load_table::<Trade>(&file, "trades")?, rows);
/// let info = h5vec::inspect(&file, "trades")?;
/// assert!(info.datasets.iter().all(|d| d.filters == ["fletcher32"]));
/// # Ok(()) }
/// ```
pub fn save_table_with<T>(parent: &Group, name: &str, rows: &[T], opts: &SaveOptions) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    create_container(parent, name, "table", |table| {
        write_new_table(table, rows, opts)
    })
}

/// Appends `rows` to the existing table `name` of `parent` (written by h5col
/// or by [`save_table`]). `T`'s fields must be exactly the table's columns.
///
/// Rows past NROWS (a stale tail) are overwritten. NROWS is rewritten last,
/// after the data is flushed, so an interrupted append leaves the table as
/// it was.
///
/// ```
/// use h5vec::H5Vector;
/// use h5vec::h5col::{append_table, load_table, save_table};
///
/// #[derive(H5Vector, Clone, Debug, PartialEq)]
/// struct Trade { id: u32, price: Option<f64>, venue: String, fills: Vec<u16> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("t.h5"))?;
/// let day1 = vec![Trade { id: 1, price: Some(9.5), venue: "X".into(), fills: vec![1, 2] }];
/// let day2 = vec![Trade { id: 2, price: None, venue: "Y".into(), fills: vec![] }];
/// save_table(&file, "trades", &day1)?;
/// append_table(&file, "trades", &day2)?;
/// let all: Vec<Trade> = load_table(&file, "trades")?;
/// assert_eq!(all, [day1, day2].concat());
/// # Ok(()) }
/// ```
pub fn append_table<T>(parent: &Group, name: &str, rows: &[T]) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    crate::file::check_writable(parent, name)?;
    let (table, _walked, nrows) = open_checked(parent, name, Access::Append)?;
    let path = table::table_place(&table);
    let members = table::column_members(&table, &path)?;
    let mut want: Vec<&str> = T::FIELD_NAMES.to_vec();
    want.sort();
    if members != want {
        return Err(Error::mismatch(
            &path,
            format!("columns {want:?} (append writes every column)"),
            format!("{members:?}"),
        ));
    }
    let opts = SaveOptions::default();
    let ctx = WriteCtx {
        opts: &opts,
        len_hint: nrows.saturating_add(rows.len() as u64),
    };
    let mut w = T::Fields::table_resume(&table, T::FIELD_NAMES, nrows, &ctx)?;
    push_and_commit::<T>(&table, &mut w, rows, nrows, true)
}
