//! The rows of a container, batch by batch, through `h5vec::arrow::batches`
//! (all of them) or `batches_range` (a range), one batch of at most
//! [`BATCH_ROWS`] rows at a time: the container is opened and checked once.

use std::ops::Range;

use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use h5vec::arrow::Batches;

use crate::target::{Target, BATCH_ROWS};

/// An iterator over the batches of some rows of a container.
pub(crate) struct Rows {
    schema: SchemaRef,
    rows: u64,
    batches: Batches,
}

impl Rows {
    /// Rows `range` of `target` (all of them without a range), clamped to the
    /// rows it has. Opening checks the container (SPEC.md section 7) before
    /// anything is read.
    pub(crate) fn open(target: &Target, range: Option<Range<u64>>) -> Result<Rows> {
        let batches = h5vec::arrow::batches(&target.parent, &target.name, BATCH_ROWS)?;
        let total = batches.rows();
        let batches = match range {
            Some(range) if range != (0..total) => {
                let end = range.end.min(total);
                let start = range.start.min(end);
                // The container is opened again for the range: a cheap walk
                // of its metadata, once per command.
                drop(batches);
                h5vec::arrow::batches_range(&target.parent, &target.name, start..end, BATCH_ROWS)?
            }
            _ => batches,
        };
        Ok(Rows {
            schema: batches.schema(),
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
        self.batches.next().map(|b| b.map_err(Into::into))
    }
}
