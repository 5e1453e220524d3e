//! The rows of a container, batch by batch, through `h5vec::arrow::batches`
//! (all of them), `batches_range` (a range) or `batches_columns` (some
//! columns: the others are never opened, so a column this version cannot
//! read does not stop the rest), one batch of at most [`BATCH_ROWS`] rows at
//! a time: the container is opened and checked once. Every enum with data
//! comes in its flat form (`h5vec::arrow::flatten_unions`), which every
//! output format holds.

use std::ops::Range;

use anyhow::{anyhow, Context, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use h5vec::arrow::Batches;

use crate::columns::Selection;
use crate::target::{Target, BATCH_ROWS};

/// The end of h5vec's message for a column of a kind or codec this
/// version does not know (SPEC.md section 11).
const UNREADABLE: &str = "this version of h5vec cannot read it";

/// An iterator over the batches of some rows of a container.
pub(crate) struct Rows {
    schema: SchemaRef,
    rows: u64,
    batches: Batches,
}

impl Rows {
    /// Rows `range` of `target` (all of them without a range), clamped to the
    /// rows it has; only `columns` (dotted paths, `--columns`) when there are
    /// any, an unknown name being an error naming it and the columns there
    /// are. Opening checks the container (SPEC.md section 7) before
    /// anything is read. Errors other than a usage error of `--columns`
    /// begin with `at` (`FILE:/path`).
    pub(crate) fn open(
        target: &Target,
        range: Option<Range<u64>>,
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
        Rows::open_in(target, range, columns).with_context(|| at.to_owned())
    }

    fn open_in(target: &Target, range: Option<Range<u64>>, columns: &[String]) -> Result<Rows> {
        let open = |rows: Option<Range<u64>>| -> Result<Batches> {
            if columns.is_empty() {
                Ok(match rows {
                    None => h5vec::arrow::batches(&target.parent, &target.name, BATCH_ROWS)?,
                    Some(r) => {
                        h5vec::arrow::batches_range(&target.parent, &target.name, r, BATCH_ROWS)?
                    }
                })
            } else {
                let names: Vec<&str> = columns.iter().map(|c| c.trim()).collect();
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
        let batches = match range {
            Some(range) if range != (0..total) => {
                let end = range.end.min(total);
                let start = range.start.min(end);
                // The container is opened again for the range: a cheap walk
                // of its metadata, once per command.
                drop(batches);
                open(Some(start..end))?
            }
            _ => batches,
        };
        let empty = RecordBatch::new_empty(batches.schema());
        let schema = h5vec::arrow::flatten_unions(&empty)?.schema();
        Ok(Rows {
            schema,
            rows: batches.remaining(),
            batches,
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
        let batch = self.batches.next()?;
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
