//! Read-ahead of decoded strings: while the caller takes one batch's rows,
//! the next batch's `String`s are built on h5vec's worker threads
//! ([`super::pool::pool`]).
//!
//! A load of a vector of records spends most of its time allocating and
//! filling the values it returns; a string column's values are `String`s
//! (always `Send`), which a worker can build as well as the caller. The
//! decoders of VLS strings ([`crate::kinds::vls::VlsDecoder`]) and of list
//! elements that are strings (`StringValuesDecoder`) read the next batch's
//! raw bytes on the calling thread (HDF5 under its lock, as every read)
//! and leave building its `String`s to a job; the caller meanwhile builds
//! the rest of the rows (other fields, lists, the records).
//!
//! Only loads that continue the previous one (the first at row 0) and
//! cover at least [`AHEAD_MIN_ROWS`] rows build ahead, as many rows as
//! that load, never past the column's end: reads of a few rows or at
//! random places pay for nothing, a range read for at most one batch.
//! The job owns its buffers and sends its values through a channel: a
//! decoder dropped meanwhile leaves it nothing to touch. A job stops at
//! the first value it cannot build (not UTF-8); the caller's own read of
//! that row then reports it, with the row, as without read-ahead.

use std::collections::VecDeque;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex};

/// Fewest rows a load must cover for the next batch to be built ahead.
pub(crate) const AHEAD_MIN_ROWS: u64 = 4096;

/// Values built ahead for one column, and the job building the next ones.
pub(crate) struct Ahead<V> {
    /// Values of rows `at .. at + ready.len()`.
    ready: VecDeque<V>,
    at: u64,
    /// Values of the current load still to be taken from `ready`.
    batch_left: usize,
    /// The job building values from row `from` on.
    pending: Option<Pending<V>>,
    /// The first row of a load that continues the last one.
    next_start: u64,
    /// Whether the current load continues the last one (the first: at row 0).
    seq: bool,
}

/// A job building values, run by whichever comes first: a worker thread,
/// or the load that needs its values (when the workers are busy with
/// other jobs, such as decompressing chunks, it does not wait behind them).
type Job<V> = Box<dyn FnOnce() -> Vec<V> + Send>;

struct Pending<V> {
    from: u64,
    job: Arc<Mutex<Option<Job<V>>>>,
    /// In a mutex only so that decoders (and readers) stay `Sync`.
    rx: Mutex<mpsc::Receiver<Vec<V>>>,
}

impl<V> Pending<V> {
    /// The job's values: run here if no worker has started it, else
    /// waited for. `None` if it panicked (its rows are the caller's then).
    fn wait(self) -> Option<Vec<V>> {
        let job = self.job.lock().unwrap_or_else(|e| e.into_inner()).take();
        match job {
            Some(job) => catch_unwind(AssertUnwindSafe(job)).ok(),
            None => self
                .rx
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .recv()
                .ok(),
        }
    }
}

/// A job nobody will wait for (a jump, a decoder dropped) that no worker
/// has started is not run at all.
impl<V> Drop for Pending<V> {
    fn drop(&mut self) {
        drop(self.job.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}

impl<V> Default for Ahead<V> {
    fn default() -> Self {
        Ahead {
            ready: VecDeque::new(),
            at: 0,
            batch_left: 0,
            pending: None,
            next_start: 0,
            seq: false,
        }
    }
}

impl<V: Send + 'static> Ahead<V> {
    /// Starts a load of `rows`: values built ahead for its first rows are
    /// then taken with [`pop`](Self::pop). Returns the first row of `rows`
    /// that was not built ahead (`rows.end` if all were): the caller reads
    /// those itself. A load that does not continue the last one drops what
    /// was built ahead.
    pub(crate) fn begin(&mut self, rows: &Range<u64>) -> u64 {
        self.seq = rows.start == self.next_start;
        if !self.seq {
            self.ready.clear();
            self.pending = None;
        }
        if let Some(p) = self.pending.take() {
            if self.ready.is_empty() {
                self.at = p.from;
            }
            if p.from == self.end() {
                if let Some(v) = p.wait() {
                    self.ready.extend(v);
                }
            }
        }
        if rows.start < self.at || rows.start > self.end() {
            self.ready.clear();
            self.at = rows.start;
        } else {
            // Rows an earlier load did not take (it failed part way).
            let stale = (rows.start - self.at) as usize;
            self.ready.drain(..stale);
            self.at = rows.start;
        }
        let have = rows.end.min(self.end()).max(rows.start);
        self.batch_left = (have - rows.start) as usize;
        self.next_start = rows.end;
        have
    }

    /// The next value of the current load built ahead, if any is left.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<V> {
        if self.batch_left == 0 {
            return None;
        }
        self.batch_left -= 1;
        self.at += 1;
        self.ready.pop_front()
    }

    /// The row after the last value built ahead.
    fn end(&self) -> u64 {
        self.at + self.ready.len() as u64
    }

    /// The rows to build ahead after a load of `rows` from a column of
    /// `limit` rows, if any (see the module's rules).
    pub(crate) fn next_rows(&self, rows: &Range<u64>, limit: u64) -> Option<Range<u64>> {
        let n = rows.end.checked_sub(rows.start)?;
        if !self.seq
            || n < AHEAD_MIN_ROWS
            || self.pending.is_some()
            || super::pool::pool().is_none()
        {
            return None;
        }
        let from = rows.end.max(self.end());
        let to = from.saturating_add(n).min(limit);
        (from < to).then_some(from..to)
    }

    /// Runs `job`, which builds the values of rows `from..` (stopping
    /// early at a value it cannot build), on the worker threads.
    pub(crate) fn spawn(&mut self, from: u64, job: impl FnOnce() -> Vec<V> + Send + 'static) {
        let Some(pool) = super::pool::pool() else {
            return;
        };
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Arc<Mutex<Option<Job<V>>>> = Arc::new(Mutex::new(Some(Box::new(job))));
        let slot = Arc::clone(&job);
        pool.spawn(move || {
            let job = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            // A panic must not reach rayon (it would abort the process):
            // the receiver then sees a closed channel.
            if let Some(Ok(v)) = job.map(|j| catch_unwind(AssertUnwindSafe(j))) {
                let _ = tx.send(v);
            }
        });
        self.pending = Some(Pending {
            from,
            job,
            rx: Mutex::new(rx),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job that builds `from..to` as numbers.
    fn spawn_range(a: &mut Ahead<u64>, r: Range<u64>) {
        let from = r.start;
        a.spawn(from, move || r.collect());
    }

    fn take(a: &mut Ahead<u64>) -> Vec<u64> {
        std::iter::from_fn(|| a.pop()).collect()
    }

    #[test]
    fn sequential_loads_take_what_was_built_ahead() {
        let mut a = Ahead::default();
        assert_eq!(
            a.begin(&(0..5000)),
            0,
            "nothing built before the first load"
        );
        assert!(take(&mut a).is_empty());
        let next = a.next_rows(&(0..5000), 12_000).unwrap();
        assert_eq!(next, 5000..10_000);
        spawn_range(&mut a, next);
        assert_eq!(a.begin(&(5000..10_000)), 10_000);
        assert_eq!(take(&mut a), (5000..10_000).collect::<Vec<_>>());
        // The last batch is clipped to the column's end.
        assert_eq!(a.next_rows(&(5000..10_000), 12_000), Some(10_000..12_000));
        spawn_range(&mut a, 10_000..12_000);
        // A longer load than was built ahead: the rest is the caller's.
        assert_eq!(a.begin(&(10_000..12_500)), 12_000);
        assert_eq!(take(&mut a), (10_000..12_000).collect::<Vec<_>>());
        assert_eq!(a.next_rows(&(10_000..12_500), 12_000), None);
    }

    #[test]
    fn a_jump_drops_what_was_built_ahead() {
        let mut a = Ahead::default();
        a.begin(&(0..5000));
        spawn_range(&mut a, 5000..10_000);
        assert_eq!(a.begin(&(7000..8000)), 7000);
        assert!(take(&mut a).is_empty());
        // Small loads never build ahead.
        assert_eq!(a.next_rows(&(7000..8000), 1 << 20), None);
        // Nor does a load that jumped, however large (a range read from the
        // middle of a vector); the one after it, continuing it, does.
        assert_eq!(a.begin(&(100_000..110_000)), 100_000);
        assert_eq!(a.next_rows(&(100_000..110_000), 1 << 20), None);
        assert_eq!(a.begin(&(110_000..120_000)), 110_000);
        assert_eq!(
            a.next_rows(&(110_000..120_000), 1 << 20),
            Some(120_000..130_000)
        );
        // The first load of a column is a jump unless it starts at row 0.
        let mut b: Ahead<u64> = Ahead::default();
        b.begin(&(1..5001));
        assert_eq!(b.next_rows(&(1..5001), 1 << 20), None);
    }

    #[test]
    fn values_past_a_load_wait_for_the_next() {
        let mut a = Ahead::default();
        a.begin(&(0..5000));
        spawn_range(&mut a, 5000..10_000);
        // A shorter load (list elements: spans vary) takes its part only.
        assert_eq!(a.begin(&(5000..6000)), 6000);
        assert_eq!(take(&mut a), (5000..6000).collect::<Vec<_>>());
        assert_eq!(a.begin(&(6000..9000)), 9000);
        assert_eq!(a.pop(), Some(6000));
        // Values a failed load left behind are dropped by the next one.
        assert_eq!(a.begin(&(9000..9500)), 9500);
        assert_eq!(take(&mut a), (9000..9500).collect::<Vec<_>>());
        // Building ahead continues after what is ready.
        assert_eq!(a.next_rows(&(5000..10_000), 20_000), Some(10_000..15_000));
    }

    #[test]
    fn a_job_stopping_early_leaves_the_rest_to_the_caller() {
        let mut a = Ahead::default();
        a.begin(&(0..5000));
        a.spawn(5000, || (5000..5100).collect());
        assert_eq!(a.begin(&(5000..10_000)), 5100);
        assert_eq!(take(&mut a).len(), 100);
        let mut b: Ahead<u64> = Ahead::default();
        b.begin(&(0..5000));
        b.spawn(5000, || panic!("job failed"));
        assert_eq!(b.begin(&(5000..10_000)), 5000);
        assert_eq!(b.pop(), None);
    }
}
