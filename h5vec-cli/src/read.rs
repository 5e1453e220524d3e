//! The rows of a container, batch by batch, through `h5vec::arrow::batches`
//! (all of them), `batches_range` (a range) or `batches_columns` (some
//! columns: the others are never opened, so a column this version cannot
//! read does not stop the rest), one batch of at most [`BATCH_ROWS`] rows at
//! a time: the container is opened and checked once. With `--where`, the
//! rows a filter selects through `h5vec::arrow::batches_where`: the query
//! runs once, on opening, then the selected rows are read a batch at a time
//! (memory holds their row numbers, 8 bytes each, and one batch of rows).
//! Every enum with data comes in its flat form
//! (`h5vec::arrow::flatten_unions`), which every output format holds.

use std::ops::Range;

use anyhow::{anyhow, Context, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use h5vec::arrow::Batches;
use h5vec::Filter;

use crate::columns::Selection;
use crate::query::query_error;
use crate::target::{Target, BATCH_ROWS};

/// The end of h5vec's message for a column of a kind or codec this
/// version does not know (SPEC.md section 11).
const UNREADABLE: &str = "this version of h5vec cannot read it";

/// An iterator over the batches of some rows of a container.
pub(crate) struct Rows {
    schema: SchemaRef,
    rows: u64,
    batches: Batches,
    /// Rows still to return at most (`head --where`).
    left: Option<u64>,
}

/// Which rows [`Rows::open`] reads.
#[derive(Default)]
pub(crate) struct Pick<'a> {
    /// Row numbers `A..B`, clamped to the rows there are (all without).
    pub(crate) range: Option<Range<u64>>,
    /// Only the rows where this filter is true (of those in `range`).
    pub(crate) filter: Option<&'a Filter>,
    /// At most this many rows (the first ones).
    pub(crate) limit: Option<u64>,
}

impl Rows {
    /// The rows `pick` names of `target`; only `columns` (dotted paths,
    /// `--columns`) when there are any, an unknown name being an error
    /// naming it and the columns there are. Opening checks the container
    /// (SPEC.md section 7) before anything is read, and runs the query of
    /// a filter. Errors other than a usage error of `--columns` begin with
    /// `at` (`FILE:/path`).
    pub(crate) fn open(
        target: &Target,
        pick: &Pick<'_>,
        columns: &[String],
        at: &str,
    ) -> Result<Rows> {
        if !columns.is_empty() {
            // The names checked first, for a message listing the columns
            // (a usage error: without the file's name).
            let schema = h5vec::arrow::read_schema(&target.parent, &target.name)
                .with_context(|| at.to_owned())?;
            Selection::new(&schema, columns)?;
        }
        Rows::open_in(target, pick, columns).with_context(|| at.to_owned())
    }

    fn open_in(target: &Target, pick: &Pick<'_>, columns: &[String]) -> Result<Rows> {
        let names: Vec<&str> = columns.iter().map(|c| c.trim()).collect();
        let open = |rows: Option<Range<u64>>| -> Result<Batches> {
            if columns.is_empty() {
                Ok(match rows {
                    None => h5vec::arrow::batches(&target.parent, &target.name, BATCH_ROWS)?,
                    Some(r) => {
                        h5vec::arrow::batches_range(&target.parent, &target.name, r, BATCH_ROWS)?
                    }
                })
            } else {
                Ok(h5vec::arrow::batches_columns(
                    &target.parent,
                    &target.name,
                    &names,
                    rows,
                    BATCH_ROWS,
                )?)
            }
        };
        let batches = open(None)?;
        let total = batches.rows();
        let clamped = pick.range.as_ref().map(|range| {
            let end = range.end.min(total);
            range.start.min(end)..end
        });
        let batches = match (pick.filter, clamped) {
            (Some(filter), range) => {
                // The query runs once, here; the opening above checked
                // the container and gave its row count.
                drop(batches);
                let batch_rows = match pick.limit {
                    // `head -n N`: no more rows read than printed.
                    Some(n) => usize::try_from(n)
                        .unwrap_or(BATCH_ROWS)
                        .clamp(1, BATCH_ROWS),
                    None => BATCH_ROWS,
                };
                let range = range.filter(|r| *r != (0..total));
                h5vec::arrow::batches_where(
                    &target.parent,
                    &target.name,
                    filter,
                    (!columns.is_empty()).then_some(names.as_slice()),
                    range,
                    batch_rows,
                )
                .map_err(|e| query_error(target, e))?
            }
            (None, Some(range)) if range != (0..total) => {
                // The container is opened again for the range: a cheap walk
                // of its metadata, once per command.
                drop(batches);
                open(Some(range))?
            }
            (None, _) => batches,
        };
        let empty = RecordBatch::new_empty(batches.schema());
        let schema = h5vec::arrow::flatten_unions(&empty)?.schema();
        let remaining = batches.remaining();
        Ok(Rows {
            schema,
            rows: pick.limit.map_or(remaining, |n| n.min(remaining)),
            batches,
            left: pick.limit,
        })
    }

    /// The schema of every batch.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// How many rows the batches hold together.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }
}

impl Iterator for Rows {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == Some(0) {
            return None;
        }
        let batch = self.batches.next()?;
        let batch = batch.map(|b| match &mut self.left {
            Some(left) => {
                let b = if b.num_rows() as u64 > *left {
                    b.slice(0, *left as usize)
                } else {
                    b
                };
                *left -= b.num_rows() as u64;
                b
            }
            None => b,
        });
        Some(
            batch
                .and_then(|b| h5vec::arrow::flatten_unions(&b))
                .map_err(|e| {
                    let message = e.to_string();
                    if message.ends_with(UNREADABLE) {
                        // A column of a newer version: the others can be read.
                        anyhow!("{message} (--columns leaves it out)")
                    } else {
                        e.into()
                    }
                }),
        )
    }
}
