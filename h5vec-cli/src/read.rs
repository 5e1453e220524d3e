//! The rows of a container, batch by batch: the whole container through
//! `h5vec::arrow::batches`, a range of it through `read_range`, one batch of
//! at most [`BATCH_ROWS`] rows at a time.

use std::ops::Range;

use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use h5vec::arrow::Batches;
use h5vec::hdf5::Group;

use crate::target::{Target, BATCH_ROWS};

/// An iterator over the batches of some rows of a container.
pub(crate) struct Rows {
    schema: SchemaRef,
    rows: u64,
    inner: Inner,
}

enum Inner {
    All(Batches),
    Range {
        parent: Group,
        name: String,
        next: u64,
        end: u64,
    },
}

impl Rows {
    /// Rows `range` of `target` (all of them without a range), clamped to the
    /// rows it has. Opening checks the container (SPEC.md section 7) before
    /// anything is read.
    pub(crate) fn open(target: &Target, range: Option<Range<u64>>) -> Result<Rows> {
        let batches = h5vec::arrow::batches(&target.parent, &target.name, BATCH_ROWS)?;
        let schema = batches.schema();
        let total = batches.rows();
        let Some(range) = range else {
            return Ok(Rows {
                schema,
                rows: total,
                inner: Inner::All(batches),
            });
        };
        let end = range.end.min(total);
        let start = range.start.min(end);
        if (start, end) == (0, total) {
            return Ok(Rows {
                schema,
                rows: total,
                inner: Inner::All(batches),
            });
        }
        Ok(Rows {
            schema,
            rows: end - start,
            inner: Inner::Range {
                parent: target.parent.clone(),
                name: target.name.clone(),
                next: start,
                end,
            },
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
        match &mut self.inner {
            Inner::All(batches) => batches.next().map(|b| b.map_err(Into::into)),
            Inner::Range {
                parent,
                name,
                next,
                end,
            } => {
                if *next >= *end {
                    return None;
                }
                let stop = (*end).min(next.saturating_add(BATCH_ROWS as u64));
                let batch = h5vec::arrow::read_range(parent, name, *next..stop);
                *next = if batch.is_ok() { stop } else { *end };
                Some(batch.map_err(Into::into))
            }
        }
    }
}
