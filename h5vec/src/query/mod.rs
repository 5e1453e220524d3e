//! Queries: which rows of a vector or an h5col table match a [`Filter`],
//! and reading only those (SPEC.md section 14; tables: 14.7).
//!
//! | file | holds |
//! |---|---|
//! | `filter.rs` | [`col`], [`Filter`], [`Value`]: the predicate tree |
//! | `parse/` | the `--where` text syntax: `mod.rs` the parser (`FromStr`), `display.rs` the printer (`Display` for [`Filter`]), `tests.rs` |
//! | `leaf.rs` | a filter's column resolved to one leaf and read by ranges |
//! | `eval.rs` | the filter compiled against its leaves; three-valued evaluation |
//! | `lit.rs` | `Lit`, `Pred`, truth values and exact comparisons (shared by `eval.rs`, `plan.rs`, `index/`) |
//! | `time.rs` | instants, dates and times of day written as text |
//! | `index/` | search indexes on demand: `SORTED_ROWS`, `BITMAP`, `CHUNK_BLOOM`; their answers |
//! | `index/common.rs` | what the index families share: `Build`, batch reads, attributes, `RowSet`, `Answer` |
//! | `stats.rs` | `CHUNK_MINMAX` statistics: written by saves and appends, read to skip windows |
//! | `summaries.rs` | `LeafStats`: a writer's summaries of its buffered values, taken while they are in the cache |
//! | `plan.rs` | the scan: windows, which are skipped, [`Explain`] |
//! | `tables.rs` | h5col tables: a column's valid search indexes, its `CHUNK_MINMAX` as statistics |

mod eval;
mod filter;
pub(crate) mod index;
mod leaf;
mod lit;
mod parse;
mod plan;
pub(crate) mod stats;
pub(crate) mod summaries;
mod tables;
mod time;

use std::ops::Range;

use hdf5::Group;

pub use filter::{col, Column, Filter, Value};
pub use index::{build_index, drop_index, list_indexes, IndexInfo, IndexKind};
pub use plan::Explain;

use crate::codec::{Codec, Decoder, H5Vector};
use crate::error::Result;

/// The rows of vector or h5col table `name` where `filter` is true, in
/// increasing order.
///
/// Missing values follow HEP001's three-valued logic (see [`Filter`]);
/// chunks whose statistics prove they hold no match are not read. On an
/// h5col table the columns are the table's, compared as h5col's query
/// layer compares them (SPEC.md section 14.7), and its valid
/// `CHUNK_MINMAX` indexes are the statistics.
///
/// ```
/// use h5vec::{col, H5Vector};
///
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct Reading { sensor: u16, temperature: f64, note: Option<String> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("r.h5"))?;
/// let rows: Vec<Reading> = (0..100)
///     .map(|i| Reading { sensor: i % 4, temperature: i as f64 / 2.0, note: None })
///     .collect();
/// h5vec::save_vector(&file, "readings", &rows)?;
/// let hot = col("temperature").ge(45.0) & col("sensor").eq(1u16);
/// assert_eq!(h5vec::select_rows(&file, "readings", &hot)?, [93, 97]);
/// assert_eq!(h5vec::count_where(&file, "readings", &hot)?, 2);
/// let back: Vec<Reading> = h5vec::load_where(&file, "readings", &hot)?;
/// assert_eq!(back[0].temperature, 46.5);
/// // A missing value matches no value predicate, not even `ne`.
/// assert_eq!(h5vec::count_where(&file, "readings", &col("note").ne("x"))?, 0);
/// # Ok(()) }
/// ```
pub fn select_rows(group: &Group, name: &str, filter: &Filter) -> Result<Vec<u64>> {
    let mut scan = plan::Scan::open(group, name, filter)?;
    collect_rows(&mut scan)
}

/// The rows `scan` selects, the vector grown without aborting when memory
/// runs out (an error instead).
fn collect_rows(scan: &mut plan::Scan) -> Result<Vec<u64>> {
    let total = scan.rows();
    let mut out = Vec::new();
    let mut failed = None;
    scan.run(|r| {
        for x in r {
            if failed.is_none() {
                if let Err(e) = crate::limits::grow(&mut out, 1, total, "$") {
                    failed = Some(e);
                }
            }
            if failed.is_some() {
                return;
            }
            out.push(x);
        }
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// How many rows of vector or h5col table `name` match `filter` (see
/// [`select_rows`]).
pub fn count_where(group: &Group, name: &str, filter: &Filter) -> Result<u64> {
    let mut n = 0u64;
    plan::Scan::open(group, name, filter)?.run(|r| n += r.count() as u64)?;
    Ok(n)
}

/// How [`select_rows`] answers `filter` on vector or table `name`: for each column,
/// the statistics it uses (or a scan); the windows of rows read and
/// skipped. Runs the query to count them. `Display` prints a report.
pub fn explain(group: &Group, name: &str, filter: &Filter) -> Result<Explain> {
    let mut scan = plan::Scan::open(group, name, filter)?;
    let mut rows = 0u64;
    scan.run(|r| rows += r.count() as u64)?;
    Ok(scan.explain(rows))
}

/// The elements of vector `name` where `filter` is true, in row order:
/// [`select_rows`], then only the chunks holding those rows are read. (An
/// h5col table's rows: [`crate::h5col::load_table_where`].)
///
/// ```
/// use h5vec::col;
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("x.h5"))?;
/// h5vec::save_vector(&file, "xs", &[5i64, -3, 8, 0])?;
/// let pos: Vec<i64> = h5vec::load_where(&file, "xs", &col("").gt(0))?;
/// assert_eq!(pos, [5, 8]);
/// # Ok(()) }
/// ```
pub fn load_where<T: H5Vector>(group: &Group, name: &str, filter: &Filter) -> Result<Vec<T>> {
    let mut scan = plan::Scan::open(group, name, filter)?;
    // A table is refused before its rows are read.
    scan.vector()?;
    let rows = collect_rows(&mut scan)?;
    // The vector the scan opened and checked.
    let v = scan.vector()?;
    let mut dec = T::Codec::open(&v.data, &v.schema, "$", v.count)?;
    read_selected(&mut dec, &rows)
}

/// One file of a [`Dataset`](crate::Dataset) (counted `len` rows when the
/// dataset was opened): the rows below `len` of vector `name` where
/// `filter` is true, and with `decode` their values (decoded with `flags`,
/// the dataset's schema evolution). A vector with fewer rows than `len` is
/// an error.
pub(crate) fn select_in_file<T: H5Vector>(
    group: &Group,
    name: &str,
    filter: &Filter,
    len: u64,
    decode: Option<crate::evolution::LoadFlags>,
) -> Result<(Vec<u64>, Vec<T>)> {
    let mut scan = plan::Scan::open(group, name, filter)?;
    check_file_rows(scan.vector()?.count, len)?;
    let mut rows = collect_rows(&mut scan)?;
    // Rows appended since the dataset was opened are not the dataset's.
    rows.truncate(rows.partition_point(|&r| r < len));
    let values = match decode {
        None => Vec::new(),
        Some(flags) => {
            let v = scan.vector()?;
            let mut dec = T::Codec::open_with(&v.data, &v.schema, "$", v.count, flags)?;
            read_selected(&mut dec, &rows)?
        }
    };
    Ok((rows, values))
}

/// [`select_in_file`] counting the rows instead of listing them.
pub(crate) fn count_in_file(group: &Group, name: &str, filter: &Filter, len: u64) -> Result<u64> {
    let mut scan = plan::Scan::open(group, name, filter)?;
    check_file_rows(scan.vector()?.count, len)?;
    let mut n = 0u64;
    scan.run(|r| n += r.take_while(|&x| x < len).count() as u64)?;
    Ok(n)
}

/// A dataset's file holds at least the `len` rows it held when the
/// dataset was opened.
fn check_file_rows(count: u64, len: u64) -> Result<()> {
    if count < len {
        return Err(crate::Error::mismatch(
            crate::error::Place::new("$", "metadata/count"),
            format!("at least the {len} rows counted when the dataset was opened"),
            format!("{count} rows"),
        ));
    }
    Ok(())
}

/// Rows closer than this are read in one call (skipping those between).
const GAP_ROWS: u64 = 4096;

/// The runs `rows` (increasing) is read in: each the positions `i..j` of
/// `rows` and the span of rows `rows[i] ..= rows[j - 1]` one read covers
/// (rows closer than [`GAP_ROWS`], a span of at most a read batch).
pub(crate) fn runs(rows: &[u64]) -> impl Iterator<Item = (Range<usize>, Range<u64>)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= rows.len() {
            return None;
        }
        let start = rows[i];
        let mut j = i + 1;
        while j < rows.len()
            && rows[j] - rows[j - 1] <= GAP_ROWS
            && rows[j] - start < crate::options::READ_BATCH_ROWS
        {
            j += 1;
        }
        let run = (i..j, start..rows[j - 1] + 1);
        i = j;
        Some(run)
    })
}

/// Decodes the rows `rows` (increasing) with `dec`: each of their [`runs`]
/// with one `load`, the rows between skipped.
pub(crate) fn read_selected<T, D: Decoder<T>>(dec: &mut D, rows: &[u64]) -> Result<Vec<T>> {
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, rows.len() as u64, "$")?;
    for (at, span) in runs(rows) {
        dec.load(span.clone())?;
        let mut k = at.start;
        for r in span {
            if k < at.end && rows[k] == r {
                out.push(dec.next()?);
                k += 1;
            } else {
                dec.skip()?;
            }
        }
    }
    Ok(out)
}
