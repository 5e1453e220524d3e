//! `Batches`: the record batches of a container read one after the other,
//! of a range of rows (`batches`, `batches_range`, `batches_columns`) or of
//! selected rows (`batches_where`): `read_rows` reads runs of nearby
//! selected rows with one range read each (`Source::read`) and keeps only
//! the selected rows of each run (arrow-select's `filter_record_batch`).

use std::ops::Range;

use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::SchemaRef;

use crate::error::{Error, Result};

use super::container::Source;

/// Record batches of a vector, h5col table or VLS array, read one after the
/// other ([`batches`](super::batches),
/// [`batches_range`](super::batches_range),
/// [`batches_columns`](super::batches_columns), or the rows a filter
/// selects: [`batches_where`](super::batches_where)). After an error the
/// iterator ends.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("b.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u8, 2, 3])?;
/// let mut batches = h5vec::arrow::batches(&file, "xs", 2)?;
/// assert_eq!(batches.schema().field(0).name(), "value");
/// let first = batches.next().unwrap()?;
/// assert_eq!((first.num_rows(), batches.remaining(), batches.rows()), (2, 1, 3));
/// # Ok(()) }
/// ```
pub struct Batches {
    src: Source,
    rows: Rows,
    batch: u64,
}

/// The rows [`Batches`] returns.
enum Rows {
    /// A range: the next row and one past the last.
    Range { next: u64, end: u64 },
    /// Selected rows (increasing), and how many were returned.
    Selected { rows: Vec<u64>, next: usize },
}

impl Batches {
    pub(super) fn new(src: Source, rows: Range<u64>, batch_rows: usize) -> Result<Batches> {
        Batches::with(
            src,
            Rows::Range {
                next: rows.start,
                end: rows.end,
            },
            batch_rows,
        )
    }

    /// The batches of rows `rows` (increasing, below the row count) of `src`.
    pub(super) fn selected(src: Source, rows: Vec<u64>, batch_rows: usize) -> Result<Batches> {
        Batches::with(src, Rows::Selected { rows, next: 0 }, batch_rows)
    }

    fn with(src: Source, rows: Rows, batch_rows: usize) -> Result<Batches> {
        if batch_rows == 0 {
            return Err(Error::invalid("$", "batch_rows must be at least 1"));
        }
        Ok(Batches {
            src,
            rows,
            batch: batch_rows as u64,
        })
    }

    /// These batches cut down to rows `rows` (within the container's
    /// rows, else an error as for [`crate::load_range`]): a
    /// [`Dataset`](crate::Dataset) reads its span of a file.
    pub(crate) fn narrow(mut self, rows: Range<u64>) -> Result<Batches> {
        crate::vector::check_range(&rows, self.src.rows)?;
        self.rows = Rows::Range {
            next: rows.start,
            end: rows.end,
        };
        Ok(self)
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.src.schema.clone()
    }

    /// The rows of the whole container.
    pub fn rows(&self) -> u64 {
        self.src.rows
    }

    /// The rows not yet returned.
    pub fn remaining(&self) -> u64 {
        match &self.rows {
            Rows::Range { next, end } => end.saturating_sub(*next),
            Rows::Selected { rows, next } => (rows.len() - next) as u64,
        }
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.rows {
            Rows::Range { next, end } => {
                if *next >= *end {
                    return None;
                }
                let stop = next.saturating_add(self.batch).min(*end);
                let r = self.src.read(*next..stop);
                *next = if r.is_ok() { stop } else { *end };
                Some(r)
            }
            Rows::Selected { rows, next } => {
                if *next >= rows.len() {
                    return None;
                }
                let stop = rows.len().min(next.saturating_add(self.batch as usize));
                let r = read_rows(&mut self.src, &rows[*next..stop]);
                *next = if r.is_ok() { stop } else { rows.len() };
                Some(r)
            }
        }
    }
}

/// Rows `rows` (increasing, below `src.rows`) of `src` as one batch: each
/// of their runs ([`crate::query::runs`]) read with one range read, the
/// rows between dropped.
pub(super) fn read_rows(src: &mut Source, rows: &[u64]) -> Result<RecordBatch> {
    let mut parts = Vec::new();
    for (at, span) in crate::query::runs(rows) {
        let start = span.start;
        let len = (span.end - span.start) as usize;
        let batch = src.read(span)?;
        if len == at.len() {
            // Every row of the run is selected.
            parts.push(batch);
        } else {
            let mut keep = vec![false; len];
            for &r in &rows[at] {
                keep[(r - start) as usize] = true;
            }
            let kept = arrow_select::filter::filter_record_batch(&batch, &BooleanArray::from(keep))
                .map_err(|e| Error::invalid("$", format!("cannot keep the selected rows: {e}")))?;
            parts.push(kept);
        }
    }
    match parts.len() {
        0 => Ok(RecordBatch::new_empty(src.schema.clone())),
        1 => Ok(parts.pop().expect("one part")),
        _ => arrow_select::concat::concat_batches(&src.schema, &parts).map_err(|e| {
            Error::invalid("$", format!("cannot join the runs of selected rows: {e}"))
        }),
    }
}
