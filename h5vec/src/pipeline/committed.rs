//! Writes through HDF5's own filter pipeline that start inside a chunk
//! holding committed rows ([`CommittedChunk`]).

use hdf5::Dataset;

use crate::error::{Context, Result};
use crate::raw;

/// Keeps a write through HDF5's own filter pipeline from freeing the
/// space of a committed chunk that the rest of the write could take.
///
/// HDF5 writes a filtered chunk that changed size to new space and frees
/// the old one; in a file with HDF5's default file space handling, the
/// next chunk written can be put there at once, while the chunk index on
/// disk (until the next flush) still points at it. h5vec's own chunk
/// writer avoids that ([`WriteJob::finish`](super::deferred::WriteJob::finish)); a write that goes through
/// HDF5's pipeline (variable-length strings, filters other than deflate)
/// and starts inside a chunk holding committed rows flushes the file first
/// (so that HDF5 has placed every chunk it caches), writes the rows up to
/// the end of that chunk, and flushes the file again before it writes the
/// rest.
pub(crate) struct CommittedChunk {
    /// Rows per chunk, 0 when nothing needs guarding (unfiltered dataset,
    /// or a file that never reuses freed space).
    chunk: u64,
    /// [`crate::pipeline::deferred::commits`] at the last write.
    seen: u64,
}

impl CommittedChunk {
    pub(crate) fn new(ds: &Dataset) -> Self {
        let filtered = !ds.filters().is_empty();
        let chunk = match ds.chunk().and_then(|c| c.first().copied()) {
            Some(c) if filtered && ds.file().map_or(true, |f| raw::has_free_space_managers(&f)) => {
                c as u64
            }
            _ => 0,
        };
        CommittedChunk {
            chunk,
            seen: u64::MAX,
        }
    }

    /// Nothing to guard (datasets h5vec writes chunk by chunk itself).
    pub(crate) fn off() -> Self {
        CommittedChunk { chunk: 0, seen: 0 }
    }

    /// How many of `rows` rows written from row `start` on go before a
    /// flush of the file: the rows up to the end of the chunk holding
    /// `start`, when that chunk may hold committed rows (first write
    /// since the writer started or since a commit). `None`: no flush.
    fn rows_before_flush(&mut self, start: u64, rows: u64) -> Option<u64> {
        let now = crate::pipeline::deferred::commits();
        let fresh = std::mem::replace(&mut self.seen, now) != now;
        if self.chunk == 0 || !fresh || start.is_multiple_of(self.chunk) || rows == 0 {
            return None;
        }
        Some((self.chunk - start % self.chunk).min(rows))
    }

    /// Writes `rows` rows of `ds` from row `start` on with `write(from, to)`
    /// (buffer rows `from..to`, at dataset row `start + from`): in one call,
    /// or split and between flushes as the type's doc says.
    pub(crate) fn write(
        &mut self,
        ds: &Dataset,
        path: &str,
        start: u64,
        rows: u64,
        mut write: impl FnMut(u64, u64) -> Result<()>,
    ) -> Result<()> {
        let Some(first) = self.rows_before_flush(start, rows) else {
            return write(0, rows);
        };
        let flush = || raw::flush_file(&ds.file().at(path)?, path);
        flush()?;
        write(0, first)?;
        flush()?;
        if first < rows {
            write(first, rows)?;
        }
        Ok(())
    }
}
