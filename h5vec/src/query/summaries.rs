//! A writer's summaries of the values it buffered ([`LeafStats`]), for
//! its leaf's `CHUNK_MINMAX` statistics (`super::stats`).

use std::sync::{Arc, Mutex};

use super::stats::ChunkStats;
use crate::raw::bounds::Summary;
use crate::raw::Pod;

/// A writer's statistics ([`ChunkStats`], shared with its write jobs and
/// its session) and the summaries of the values it buffered, taken while
/// they are still in the core's cache: [`LeafStats::catch_up`] right after
/// a column's pass over a block of rows (`ScalarEncoder::push_all`), so the
/// values are not read from memory again later. Values no pass summarized
/// (pushed one by one) are noted at the flush, by the caller or the job:
/// every value is summarized exactly once whatever path pushed it.
pub(crate) struct LeafStats {
    pub(crate) shared: Arc<Mutex<ChunkStats>>,
    chunk: u64,
    /// The buffer's values `..summed` are in `parts`.
    summed: usize,
    /// Their summaries: (first row, summary of rows inside one chunk), in
    /// row order, one per chunk.
    parts: Vec<(u64, Summary)>,
}

impl LeafStats {
    /// Statistics `shared` of a leaf with chunks of `chunk` rows, nothing
    /// buffered yet.
    pub(crate) fn new(shared: Arc<Mutex<ChunkStats>>, chunk: u64) -> LeafStats {
        LeafStats {
            shared,
            chunk,
            summed: 0,
            parts: Vec::new(),
        }
    }

    /// Summarizes `buf[summed..]` (`buf[0]` is row `start`): the values
    /// pushed since the last call.
    #[inline]
    pub(crate) fn catch_up<T: Pod>(&mut self, start: u64, buf: &[T]) {
        if self.summed > buf.len() {
            // The buffer shrank below what was summarized (no push path
            // does that): start over, every value is summarized again.
            self.summed = 0;
            self.parts.clear();
        }
        let c = self.chunk;
        let mut row = start + self.summed as u64;
        let mut rest = &buf[self.summed..];
        while !rest.is_empty() {
            let take = (c - row % c).min(rest.len() as u64) as usize;
            let s = T::summarize(&rest[..take]);
            match self.parts.last_mut() {
                Some((r, last)) if *r / c == row / c => *last = last.merge(s),
                _ => self.parts.push((row, s)),
            }
            row += take as u64;
            rest = &rest[take..];
        }
        self.summed = buf.len();
    }

    /// At a flush of a buffer of `len` values: notes the summaries taken
    /// in the shared statistics, and returns where in the buffer the
    /// values not summarized yet begin (the caller notes
    /// them, or has its write job note them, before the next flush).
    pub(crate) fn hand_over(&mut self, len: usize) -> usize {
        if self.summed > len {
            self.summed = 0;
            self.parts.clear();
        }
        let mut st = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        for &(row, s) in &self.parts {
            st.note_summary(row, s);
        }
        self.summed
    }

    /// Notes every value of `vals` (rows from `start` on, the whole
    /// buffer) now, on the caller's thread: a flush written at once.
    pub(crate) fn note_all<T: Pod>(&mut self, start: u64, vals: &[T]) {
        let from = self.hand_over(vals.len());
        let mut st = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        st.note(start + from as u64, &vals[from..]);
        self.summed = 0;
        self.parts.clear();
    }

    /// After a flush wrote the buffer's first `moved` values, whose rows
    /// now start at `start`: keeps the summaries of the values still
    /// buffered (a partial chunk's, carried to the next batch).
    pub(crate) fn advance(&mut self, start: u64, moved: usize) {
        if self.summed >= moved {
            self.summed -= moved;
            self.parts.retain(|&(r, _)| r >= start);
        } else {
            self.summed = 0;
            self.parts.clear();
        }
    }
}
