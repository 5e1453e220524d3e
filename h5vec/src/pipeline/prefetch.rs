//! Read-ahead of compressed chunks ([`ReadAhead`], [`read_rows_ahead`]):
//! while the caller decodes one batch of a front-to-back read, the next
//! batch's chunks are fetched and decompressed on the worker threads, and
//! the next read takes them from here.

use hdf5::Dataset;

use super::buffers::{give_buffers, take_buffers};
use super::checksum::corrupt_chunk;
use super::chunks::{fetch_chunk, full_chunks, read_rows_with, Got, ReadFallback, Ready};
use super::codecs::Decoded;
use super::detect::{Codec, Pipeline};
use super::pool::{for_each_parallel, pool};
use crate::error::{At, Result};
use crate::raw::ffi::sync;

/// Chunks being decompressed on the pool for the next read.
struct Pending {
    /// The chunks, decompressed into their buffers or not (with the
    /// buffer to give back).
    rx: std::sync::mpsc::Receiver<Vec<(u64, Decoded, Vec<u8>)>>,
    /// Chunks settled when they were fetched: errors and fallbacks.
    early: Vec<(u64, Got)>,
}

impl Pending {
    /// Waits for the decompressed chunks. A job that ended without sending
    /// (it cannot, short of a panic) leaves its chunks to be read again.
    /// A chunk whose checksum does not match waits as the error of the
    /// read that uses it (chunks of `c` rows).
    fn wait(self, c: u64, path: impl At) -> impl Iterator<Item = (u64, Got)> {
        let done = self.rx.recv().unwrap_or_default();
        let mut spare = Vec::new();
        let mut got: Vec<(u64, Got)> = self.early;
        for (k, d, b) in done {
            got.push((
                k,
                match d {
                    Decoded::Done => Got::Done(b),
                    Decoded::Fallback => {
                        spare.push(b);
                        Got::Fallback
                    }
                    Decoded::Corrupt(why) => {
                        spare.push(b);
                        Got::Failed(corrupt_chunk(k, c, &why, path))
                    }
                },
            ));
        }
        give_buffers(spare);
        got.into_iter()
    }
}

/// Read-ahead of one compressed dataset read front to back in batches
/// (a whole-vector load, a stream): after a batch, the chunks of the next
/// batch (as many rows as this one) are fetched from the file and
/// decompressed on the worker threads while the caller decodes this
/// batch; the next read takes them from here.
///
/// Only reads that continue the previous one (starting inside or at the
/// end of it; the first read at row 0) and cover at least one whole chunk
/// read ahead, so a read of a few rows or at a random place pays for
/// nothing it does not use, and a range read for at most one batch.
/// Memory: at most one batch ahead, plus the chunk holding the last rows
/// read. The decompressing job owns its buffers and sends them through a
/// channel: a reader dropped meanwhile leaves it nothing to touch.
#[derive(Default)]
pub(crate) struct ReadAhead {
    state: std::sync::Mutex<AheadState>,
}

#[derive(Default)]
struct AheadState {
    /// The rows of the last read.
    last: Option<(u64, u64)>,
    /// Chunks read ahead or used and still of use: those holding rows from
    /// the last row read on.
    kept: Vec<(u64, Got)>,
    /// The next batch's chunks, being decompressed.
    pending: Option<Pending>,
}

impl std::fmt::Debug for ReadAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadAhead")
    }
}

/// [`read_rows`](super::chunks::read_rows) with read-ahead (see
/// [`ReadAhead`]): rows `start..start + rows` of a compressed dataset of
/// `limit` rows.
#[allow(clippy::too_many_arguments)] // read_rows's arguments, the state and the extent
pub(crate) fn read_rows_ahead(
    ds: &Dataset,
    p: &Pipeline,
    ahead: &ReadAhead,
    limit: u64,
    start: u64,
    rows: u64,
    out: &mut [u8],
    path: impl At,
    normal: &mut ReadFallback<'_>,
) -> Result<()> {
    let mut st = ahead.state.lock().unwrap_or_else(|e| e.into_inner());
    let end = start + rows;
    let seq = match st.last {
        None => start == 0,
        Some((s0, e0)) => start >= s0 && start <= e0 && end > e0,
    };
    let mut ready = Ready::default();
    let pending = st.pending.take();
    let kept = std::mem::take(&mut st.kept);
    if seq {
        ready.chunks = kept;
        if let Some(pend) = pending {
            ready.chunks.extend(pend.wait(p.chunk_rows, path));
        }
    } else {
        // A jump: what was read ahead is of no use (a job still running
        // finishes into a channel nobody reads).
        recycle(kept);
    }
    let r = read_rows_with(ds, p, start, rows, out, path, normal, &mut ready);
    st.last = Some((start, end));
    let c = p.chunk_rows.max(1);
    // The chunk holding the last row read may be read again by the next
    // read (list offsets overlap by one row), and chunks past it were read
    // ahead for it.
    let first_kept = end.saturating_sub(1) / c;
    let left = ready
        .chunks
        .into_iter()
        .chain(ready.used.into_iter().map(|(k, b)| (k, Got::Done(b))));
    let (keep, drop): (Vec<_>, Vec<_>) =
        left.partition(|(k, _)| seq && r.is_ok() && *k >= first_kept);
    recycle(drop);
    st.kept = keep;
    let (_, whole) = full_chunks(p, start, end);
    // Fletcher32-only chunks are read in place ([`read_plain_chunks`]):
    // nothing to decompress ahead.
    if r.is_ok() && seq && whole > 0 && p.level.is_some() && p.codec != Codec::Plain {
        let to = end.saturating_add(rows).min(limit);
        st.pending = prefetch(ds, p, end, to, &st.kept, path);
    }
    r
}

/// Returns the buffers of chunks no longer needed to the pool.
fn recycle(chunks: Vec<(u64, Got)>) {
    give_buffers(
        chunks
            .into_iter()
            .filter_map(|(_, g)| match g {
                Got::Done(b) => Some(b),
                _ => None,
            })
            .collect(),
    );
}

/// Fetches the chunks holding rows `from..to` (except those in `kept`)
/// and starts decompressing them on the pool. A chunk that cannot be
/// fetched ends the fetching; its error waits for the read that uses it.
fn prefetch(
    ds: &Dataset,
    p: &Pipeline,
    from: u64,
    to: u64,
    kept: &[(u64, Got)],
    path: impl At,
) -> Option<Pending> {
    let c = p.chunk_rows;
    if c == 0 || from >= to {
        return None;
    }
    let mut early = Vec::new();
    let mut work = Vec::new();
    sync(|| {
        for k in from / c..to.div_ceil(c) {
            if kept.iter().any(|(j, _)| *j == k) {
                continue;
            }
            match fetch_chunk(ds, p, k, path) {
                Ok(Some(data)) => work.push((k, data)),
                Ok(None) => early.push((k, Got::Fallback)),
                Err(e) => {
                    early.push((k, Got::Failed(e)));
                    break;
                }
            }
        }
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let p = *p;
    let cb = p.chunk_bytes();
    // Owns everything it touches: the compressed bytes and the buffers.
    let job = move || {
        let bufs = take_buffers(work.len());
        let mut all: Vec<_> = work
            .into_iter()
            .zip(bufs)
            .map(|((k, d), o)| (k, d, o, Decoded::Fallback))
            .collect();
        for_each_parallel(&mut all, |(_, (data, mask), o, got)| {
            // A buffer that cannot be had leaves the chunk to the read
            // that uses it.
            if o.try_reserve_exact(cb.saturating_sub(o.len())).is_ok() {
                o.resize(cb, 0);
                *got = p.decompress(data, *mask, o);
            }
        });
        let mut spent = Vec::with_capacity(all.len());
        let done = all
            .into_iter()
            .map(|(k, (data, _), o, d)| {
                spent.push(data);
                (k, d, o)
            })
            .collect();
        give_buffers(spent);
        let _ = tx.send(done);
    };
    match pool() {
        Some(pool) => pool.spawn(job),
        None => job(),
    }
    Some(Pending { rx, early })
}
