//! Automatic chunk and batch sizes: rows per chunk from the expected
//! length and the row size, heap chunks, write and read batches.

use super::{Compression, SaveOptions, WriteCtx};

/// Rows per read batch of whole-vector loads.
pub(crate) const READ_BATCH_ROWS: u64 = AUTO_ROWS as u64;
/// Chunks per write batch when compressing. The worker threads compress a
/// batch while the next one is encoded, so batches need not be large to
/// keep every core busy; small ones start the workers sooner and keep two
/// batches of buffers small.
const COMPRESSED_BATCH_CHUNKS: usize = 2;
/// Most rows in an automatic chunk (and in one write batch).
pub(crate) const AUTO_ROWS: usize = 1 << 16;
/// Largest automatic chunk of a row dataset, in bytes.
const MAX_CHUNK_BYTES: usize = 4 << 20;
/// Smallest automatic chunk of a row dataset, in bytes (a row larger than
/// this is one row per chunk). A vector keeps the chunk length it was
/// created with, so one saved with a row or two and then appended to would
/// otherwise hold a chunk per row or two; chunk lookups are cheap, but each
/// chunk still costs an index entry and a read.
const MIN_CHUNK_BYTES: usize = 4 << 10;
/// Largest automatic chunk of a byte heap (string heaps, CHARS, blob bytes).
const HEAP_CHUNK_BYTES: usize = 1 << 19;
/// Smallest automatic chunk of a byte heap: one string (or blob) can hold
/// any number of bytes whatever the row count, so heap chunks never shrink
/// with the row count below this (a 300 MB string is 18,311 chunks, not
/// the 18.75 million of 16-byte chunks), while a vector of a few rows
/// still makes a file of tens of KiB.
const MIN_HEAP_CHUNK_BYTES: usize = 16 << 10;

impl SaveOptions {
    /// Chunk length for a dataset whose rows are `row_bytes` bytes, in a
    /// vector expected to hold `len_hint` rows.
    pub(crate) fn chunk_rows(&self, len_hint: u64, row_bytes: usize) -> usize {
        RowChunks {
            chunk_length: self.chunk_length,
            len_hint,
        }
        .rows(row_bytes)
    }

    /// Chunk length, in bytes, of a byte heap expected to hold `bytes_hint`
    /// bytes: a power of two from 16 KiB to 512 KiB (or the chunk length
    /// set).
    pub(crate) fn chunk_heap(&self, bytes_hint: u64) -> usize {
        if let Some(c) = self.chunk_length {
            return c;
        }
        pow2_hint(bytes_hint).clamp(MIN_HEAP_CHUNK_BYTES, HEAP_CHUNK_BYTES)
    }

    /// Rows per write batch: the row chunk length, so every flush writes
    /// whole chunks.
    pub(crate) fn batch_rows(&self, len_hint: u64) -> usize {
        let chunk = match self.chunk_length {
            Some(c) => c,
            None => pow2_hint(len_hint).min(AUTO_ROWS),
        };
        // Compressed chunks are compressed in parallel: give every core some.
        match self.compression {
            Compression::None => chunk,
            _ => chunk.saturating_mul(COMPRESSED_BATCH_CHUNKS),
        }
    }
}

impl WriteCtx<'_> {
    /// The chunk length choice of a row dataset created later, once its
    /// row size is known.
    pub(crate) fn row_chunks(&self) -> RowChunks {
        RowChunks {
            chunk_length: self.opts.chunk_length,
            len_hint: self.len_hint,
        }
    }
}

/// The chunk length choice of a row dataset whose row size is known only
/// when it is created (h5col fixed-length strings, sized by their longest
/// value).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowChunks {
    pub(super) chunk_length: Option<usize>,
    pub(super) len_hint: u64,
}

impl RowChunks {
    /// Exactly `rows` rows per chunk.
    pub(crate) const fn exactly(rows: usize) -> RowChunks {
        RowChunks {
            chunk_length: Some(rows),
            len_hint: 0,
        }
    }

    /// Rows per chunk for rows of `row_bytes` bytes: the chunk length set,
    /// or as many rows as the vector is expected to hold (a power of two),
    /// but at least as many as fit in 4 KiB and at most as many as fit in
    /// 4 MiB (powers of two, at least one), and at most 65,536.
    pub(crate) fn rows(&self, row_bytes: usize) -> usize {
        if let Some(c) = self.chunk_length {
            return c;
        }
        let row_bytes = row_bytes.max(1);
        let by_bytes = prev_power_of_two((MAX_CHUNK_BYTES / row_bytes).max(1));
        let floor = prev_power_of_two((MIN_CHUNK_BYTES / row_bytes).max(1));
        pow2_hint(self.len_hint)
            .max(floor)
            .min(AUTO_ROWS)
            .min(by_bytes)
    }
}

fn pow2_hint(hint: u64) -> usize {
    usize::try_from(hint.max(1))
        .ok()
        .and_then(usize::checked_next_power_of_two)
        .unwrap_or(usize::MAX)
}

fn prev_power_of_two(n: usize) -> usize {
    if n == 0 {
        1
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_chunks_follow_length_and_cap() {
        let o = SaveOptions::default();
        // At least 4 KiB per chunk, whatever the row count.
        assert_eq!(o.chunk_rows(3, 8), 512);
        assert_eq!(o.chunk_rows(0, 8), 512);
        assert_eq!(o.chunk_rows(1, 24), 128);
        assert_eq!(o.chunk_rows(1, 1), 4096);
        assert_eq!(o.chunk_rows(1, 4096), 1);
        assert_eq!(o.chunk_rows(1, 5000), 1);
        assert_eq!(o.chunk_rows(3000, 1), 4096);
        assert_eq!(o.chunk_rows(5000, 1), 8192);
        assert_eq!(o.chunk_rows(5000, 8), 8192);
        // Large vectors: as many rows as fit in 4 MiB, at most 65,536.
        assert_eq!(o.chunk_rows(1_000_000, 8), 65_536);
        assert_eq!(o.chunk_rows(1_000_000, 24), 65_536);
        assert_eq!(o.chunk_rows(1_000_000, 8000), 512);
        assert_eq!(o.chunk_rows(u64::MAX, 1), 65_536);
        assert_eq!(o.chunk_rows(1, 10 << 20), 1);
        // Byte heaps: 16 KiB to 512 KiB, whatever the row count.
        assert_eq!(o.chunk_heap(u64::MAX), 1 << 19);
        assert_eq!(o.chunk_heap(10), 16 << 10);
        assert_eq!(o.chunk_heap(0), 16 << 10);
        assert_eq!(o.chunk_heap(100_000), 128 << 10);
        assert_eq!(o.batch_rows(1_000_000), 65_536);
        assert_eq!(o.batch_rows(5), 8);
        let o = SaveOptions::default().chunk_length(1000);
        assert_eq!(o.chunk_rows(3, 8), 1000);
        assert_eq!(o.batch_rows(3), 1000);
    }
}
