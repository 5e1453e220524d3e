//! Deferred chunk writes: a batch's chunks are compressed on the worker
//! threads while the calling thread encodes the next batch.
//!
//! A [`PodWriter`](crate::column::PodWriter) whose dataset h5vec can write
//! chunk by chunk (see [`super::chunks`]) hands each flushed batch to a
//! [`WriteJob`] and carries on. The job owns the batch's buffer, queues one
//! compression task per whole chunk on h5vec's worker pool, and then writes
//! the whole chunks with `H5Dwrite_chunk` on a worker thread too (a batch
//! without compression is written there at once), so the caller's thread
//! encodes the next batch while the kernel copies this one into the file.
//! A job is *finished* (waited for, its chunks written if no worker has
//! written them yet) by whichever comes first:
//!
//! * the writer's next flush, which also takes the buffer back for reuse;
//! * [`complete_file`], which every commit calls before it flushes the file
//!   and writes `count` (so the append protocol of SPEC.md section 8 holds:
//!   all data are in the file before `count` changes);
//! * the writer being dropped.
//!
//! Every write holds the HDF5 lock and takes it *before* the job's state
//! lock, on workers and finishers alike, so a finisher that already holds
//! the HDF5 lock never waits for a worker that needs it: a worker writes
//! only once it has the HDF5 lock, and then finishes before letting go.
//!
//! The last chunk of a batch is usually partial. It is not written with the
//! batch: the writer keeps its rows and puts them in front of the next batch,
//! so every chunk is written whole, once, and never merged through HDF5's
//! read-modify-write path. Only a commit writes a partial chunk (padded with
//! zeros past the extent, which no reader sees); the next batch then
//! rewrites that chunk whole.

use std::any::Any;
use std::ffi::c_uint;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use hdf5::Dataset;

use super::buffers::{give_buffers, take_buffers};
use super::detect::Pipeline;
use super::pool::pool;
use crate::error::{Context, Error, Result};
use crate::query::stats::ChunkStats;
use crate::raw::chunks::{stored_chunk, write_chunks};
use crate::raw::{sync, Pod};

/// A batch buffer a job owns while its chunks are compressed.
trait Input: Send + Sync + 'static {
    /// The buffer as bytes.
    fn bytes(&self) -> &[u8];
    /// The buffer itself, to give back to its writer.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    /// Notes the values `from..n` (rows from `start` on) in `stats`.
    fn note(&self, stats: &Mutex<ChunkStats>, start: u64, from: usize, n: usize);
}

impl<T: Pod> Input for Vec<T> {
    fn bytes(&self) -> &[u8] {
        crate::raw::pod_bytes(self)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn note(&self, stats: &Mutex<ChunkStats>, start: u64, from: usize, n: usize) {
        let n = n.min(self.len());
        lock(stats).note(start, &self[from.min(n)..n]);
    }
}

/// Where a compressed dataset's chunks go (see [`WriteJob::finish`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Space {
    /// The file hands freed space out again (HDF5's default; not files of
    /// `h5vec::create_file`): a rewrite that moves a chunk holding
    /// committed rows happens between two flushes.
    pub(crate) reused: bool,
    /// Partly filled chunks take the stored form: appends to a vector
    /// already in the file. A vector being saved compresses them (its file
    /// stays as small as HDF5's own); the first append moves its last chunk
    /// once.
    pub(crate) stored_tails: bool,
}

/// What happens to the partial last chunk of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tail {
    /// No partial chunk.
    None,
    /// Rows waiting for a commit (or for the writer's next batch).
    Waiting,
    /// Taken over by the writer's next batch.
    Cancelled,
    /// Written (padded) by a commit.
    Written,
}

struct State {
    /// Compression tasks not yet done.
    remaining: usize,
    /// Compressed whole chunks, by index (empty until compressed).
    out: Vec<Vec<u8>>,
    /// Their filter masks.
    masks: Vec<c_uint>,
    /// Whether the whole chunks have been written (or failed to be).
    written: bool,
    /// The dataset, for a worker that writes the whole chunks; taken (and
    /// closed) by whoever writes them, so no worker keeps the file open
    /// once the job is finished.
    ds: Option<Dataset>,
    /// A write that failed, reported to every later finisher.
    failed: Option<String>,
    tail: Tail,
    /// The batch buffer; the tasks hold clones while they run.
    input: Option<Arc<Box<dyn Input>>>,
}

/// One flushed batch of one dataset: `whole` whole chunks from chunk `k0`
/// on, then `tail_rows` rows of a partial chunk.
pub(crate) struct WriteJob {
    ds: Dataset,
    fileno: u64,
    p: Pipeline,
    k0: u64,
    whole: usize,
    tail_rows: u64,
    /// The first chunk replaces one that holds committed rows (see
    /// [`WriteJob::finish`]).
    rewrites: bool,
    /// How the file treats freed space.
    space: Space,
    path: String,
    /// What the compression tasks share with the writer. The tasks hold
    /// only this, not the job: a task that is still returning after its
    /// last signal must not keep the dataset (and so the file) open once
    /// the writer is done with it.
    work: Arc<Work>,
}

/// The state of a job's compression tasks, and the signal they give.
struct Work {
    state: Mutex<State>,
    done: Condvar,
    /// Where the whole chunks go.
    plan: Plan,
    /// The statistics the batch's values go into (SPEC.md section 14.1),
    /// noted once, off the caller's thread when a worker gets there
    /// first ([`Work::note_stats`]).
    stats: Option<BatchStats>,
}

/// A batch's statistics: its values `from..n` (rows from `start` on: those
/// the writer did not summarize itself, `crate::query::stats::LeafStats`)
/// go into `into`, taken when they are noted. The mutex is held while they are
/// noted, so a finisher waits for a worker that is noting them; and the
/// job holds no handle (the statistics own their dataset's) once they are:
/// a job kept by the writer thread must not keep the file's objects open.
struct BatchStats {
    into: Mutex<Option<Arc<Mutex<ChunkStats>>>>,
    start: u64,
    from: usize,
    n: usize,
}

impl Work {
    /// Notes the batch's values in its statistics, once. Every finisher
    /// calls it before it returns, so a writer's batches are noted in
    /// order (its next batch is submitted only after this one is
    /// reclaimed) and a commit's statistics hold every batch before it.
    /// Takes no HDF5 lock; the statistics' last handle is never dropped
    /// here (the writer, which holds one, waits for this to return).
    fn note_stats(&self) {
        let Some(b) = &self.stats else {
            return;
        };
        let mut into = lock(&b.into);
        if let Some(stats) = into.take() {
            let input = lock(&self.state).input.clone();
            if let Some(input) = input {
                input.note(&stats, b.start, b.from, b.n);
            }
            drop(stats);
        }
    }
}

/// The whole chunks of a job: `whole` chunks from chunk `k0` on.
struct Plan {
    p: Pipeline,
    k0: u64,
    whole: usize,
    path: String,
}

impl Plan {
    fn chunk_bytes(&self) -> usize {
        self.p.chunk_rows as usize * self.p.row_bytes
    }

    /// Writes the whole chunks (compressed ones from `st.out`, others
    /// straight from the batch buffer), the first through `first`. The
    /// caller holds the HDF5 lock and the state lock.
    fn write_whole(
        &self,
        st: &mut State,
        ds: &Dataset,
        first: impl FnOnce(&mut State, (&[u8], c_uint)) -> Result<()>,
    ) -> Result<()> {
        let c = self.p.chunk_rows;
        let cb = self.chunk_bytes();
        if self.p.level.is_some() {
            let out = std::mem::take(&mut st.out);
            let masks = std::mem::take(&mut st.masks);
            let refs: Vec<(&[u8], c_uint)> = out
                .iter()
                .map(Vec::as_slice)
                .zip(masks.iter().copied())
                .collect();
            let r = match refs.split_first() {
                Some((f, rest)) => {
                    first(st, *f).and_then(|()| write_chunks(ds, self.k0 + 1, c, rest, &self.path))
                }
                None => Ok(()),
            };
            give_buffers(out);
            r
        } else {
            let input = st.input.clone();
            let bytes = input.as_ref().map_or(&[][..], |b| b.bytes());
            let refs: Vec<(&[u8], c_uint)> = bytes[..self.whole * cb]
                .chunks(cb)
                .map(|b| (b, 0))
                .collect();
            write_chunks(ds, self.k0, c, &refs, &self.path)
        }
    }
}

/// How long a worker waits for the HDF5 lock before it leaves the chunks
/// to the finisher. A thread that holds the HDF5 lock while it waits for
/// the pool (an outer `sync` around a flush) must not wait on workers that
/// wait for it: they give up instead, and the finisher writes.
const WRITE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Writes a job's whole chunks on a worker thread, unless a finisher got
/// there first (see the module docs for the lock order).
fn write_behind(work: &Work) {
    work.note_stats();
    if let Some(_hdf5) = hdf5_sys::LOCK.try_lock_for(WRITE_LOCK_WAIT) {
        write_behind_locked(work);
    }
}

/// [`write_behind`] for a caller holding the HDF5 lock.
fn write_behind_locked(work: &Work) {
    let mut st = lock(&work.state);
    if st.written || st.remaining > 0 || st.failed.is_some() {
        return;
    }
    let Some(ds) = st.ds.take() else {
        return;
    };
    st.written = true;
    let plan = &work.plan;
    let r = plan.write_whole(&mut st, &ds, |_, f| {
        write_chunks(&ds, plan.k0, plan.p.chunk_rows, &[f], &plan.path)
    });
    drop(ds);
    if let Err(e) = r {
        st.failed = Some(e.to_string());
    }
}

/// [`write_behind`] on a worker thread: a panic must not unwind into the
/// pool; the finisher then finds the chunks marked written and the failure
/// recorded.
fn write_behind_caught(work: &Work) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write_behind(work)));
    if r.is_err() {
        failed_behind(work);
    }
}

fn failed_behind(work: &Work) {
    let mut st = lock(&work.state);
    st.written = true;
    st.failed = Some("writing chunks failed".into());
}

/// Most batches waiting in [`READY`].
const MAX_READY: usize = 64;

thread_local! {
    /// Uncompressed batches this thread flushed since its last
    /// [`start_writes`]: written by one worker once the whole batch is
    /// flushed, so the worker's writes (which hold the HDF5 lock) do not
    /// stall the flushes of the batch's other columns.
    static READY: std::cell::RefCell<Vec<Arc<Work>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Hands the uncompressed batches this thread flushed since the last call
/// to one worker, which writes them in order while the caller encodes the
/// next batch. Writers call it after flushing every column of a batch; a
/// batch never handed over is written by its finisher.
pub(crate) fn start_writes() {
    let works = READY.with(|r| std::mem::take(&mut *r.borrow_mut()));
    if works.is_empty() {
        return;
    }
    if let Some(tx) = writer() {
        // A writer thread that is gone leaves the batch to its finishers.
        let _ = lock(tx).send(works);
    }
}

/// Where [`start_writes`] sends batches.
type Batches = std::sync::mpsc::Sender<Vec<Arc<Work>>>;

/// The thread that writes the batches [`start_writes`] hands over, in
/// order; `None` if the OS refused a thread (finishers then write). A
/// thread of its own rather than a task on the pool: it must wake at once
/// when a batch is ready (pool workers can be slow to wake), and it never
/// waits for compression tasks.
fn writer() -> Option<&'static Mutex<Batches>> {
    // The child of an isolated check has no writer thread (the parent's,
    // if it started one, is not in the child): its finishers write.
    if crate::forked::in_child() {
        return None;
    }
    static TX: std::sync::OnceLock<Option<Mutex<Batches>>> = std::sync::OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<Arc<Work>>>();
        std::thread::Builder::new()
            .name("h5vec-writer".into())
            .spawn(move || {
                for works in rx {
                    // Statistics before the HDF5 lock: the caller encodes
                    // the next batch meanwhile.
                    for work in &works {
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            work.note_stats()
                        }));
                        if r.is_err() {
                            failed_behind(work);
                        }
                    }
                    let Some(_hdf5) = hdf5_sys::LOCK.try_lock_for(WRITE_LOCK_WAIT) else {
                        continue;
                    };
                    for work in &works {
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            write_behind_locked(work)
                        }));
                        if r.is_err() {
                            failed_behind(work);
                        }
                    }
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    })
    .as_ref()
}

thread_local! {
    /// Set while [`write_here`] runs: this thread's batches are written by
    /// their finishers (on this thread), none by a worker.
    static HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every batch it submits written on this thread, when the
/// writer finishes it (its next flush or commit), never by a worker
/// thread. `crate::mpi` forwards a rank's rows from such writes into an
/// MPI-IO file, which only the thread that uses MPI may write.
#[cfg(any(feature = "mpi", test))]
pub(crate) fn write_here<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            HERE.with(|h| h.set(self.0));
        }
    }
    let _reset = Reset(HERE.with(|h| h.replace(true)));
    f()
}

/// Jobs submitted and not yet finished by a commit, oldest first.
static PENDING: Mutex<Vec<Arc<WriteJob>>> = Mutex::new(Vec::new());
/// [`PENDING`] in the child of an isolated check ([`crate::forked::fork_safe`]).
static CHILD_PENDING: Mutex<Vec<Arc<WriteJob>>> = Mutex::new(Vec::new());

/// [`PENDING`], or its twin in the child of an isolated check.
fn pending() -> &'static Mutex<Vec<Arc<WriteJob>>> {
    crate::forked::fork_safe(&PENDING, &CHILD_PENDING)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in a compression task cannot leave the state half-updated
    // (every update is one assignment), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl WriteJob {
    /// Queues the chunks of `buf` (rows from chunk `k0` on: `whole` whole
    /// chunks, then `tail_rows` rows) and returns at once. `rewrites`: the
    /// first chunk replaces a stored chunk that holds committed rows;
    /// `space`: how the file treats freed space; `stats`: the statistics
    /// the values of `buf` from an index on go into.
    #[allow(clippy::too_many_arguments)] // one batch's coordinates; a struct would only rename them
    pub(crate) fn submit<T: Pod>(
        ds: &Dataset,
        fileno: u64,
        p: Pipeline,
        k0: u64,
        whole: usize,
        tail_rows: u64,
        rewrites: bool,
        space: Space,
        buf: Vec<T>,
        stats: Option<(Arc<Mutex<ChunkStats>>, usize)>,
        path: &str,
    ) -> Arc<WriteJob> {
        let compress = p.level.is_some() && whole > 0;
        // A first chunk that replaces committed rows is written by the
        // finisher, which orders it with file flushes (`write_first`).
        let behind = whole > 0 && !rewrites && pool().is_some() && !HERE.with(|h| h.get());
        let stats = stats.map(|(into, from)| BatchStats {
            into: Mutex::new(Some(into)),
            start: k0 * p.chunk_rows + from as u64,
            from,
            n: buf.len(),
        });
        let input: Arc<Box<dyn Input>> = Arc::new(Box::new(buf));
        let job = Arc::new(WriteJob {
            ds: ds.clone(),
            fileno,
            p,
            k0,
            whole,
            tail_rows,
            rewrites,
            space,
            path: path.to_owned(),
            work: Arc::new(Work {
                state: Mutex::new(State {
                    remaining: if compress { whole } else { 0 },
                    out: if compress {
                        take_buffers(whole)
                    } else {
                        Vec::new()
                    },
                    masks: vec![0; if compress { whole } else { 0 }],
                    written: whole == 0,
                    ds: if behind { Some(ds.clone()) } else { None },
                    failed: None,
                    tail: if tail_rows > 0 {
                        Tail::Waiting
                    } else {
                        Tail::None
                    },
                    input: Some(input.clone()),
                }),
                done: Condvar::new(),
                plan: Plan {
                    p,
                    k0,
                    whole,
                    path: path.to_owned(),
                },
                stats,
            }),
        });
        if compress {
            let cb = job.chunk_bytes();
            for i in 0..whole {
                let (work, input, p) = (job.work.clone(), input.clone(), job.p);
                let task = move || {
                    let mut out = std::mem::take(&mut lock(&work.state).out[i]);
                    // A panic here must still count the task as done, or
                    // the writer would wait forever.
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        p.compress(&input.bytes()[i * cb..(i + 1) * cb], &mut out)
                    }));
                    // Let go of the buffer before saying "done", so the
                    // writer can take it back as soon as the count is 0.
                    drop(input);
                    let mut st = lock(&work.state);
                    match r {
                        Ok(mask) => {
                            st.out[i] = out;
                            st.masks[i] = mask;
                        }
                        Err(_) => st.failed = Some("compressing a chunk failed".into()),
                    }
                    st.remaining -= 1;
                    let last = st.remaining == 0;
                    if last {
                        work.done.notify_all();
                    }
                    drop(st);
                    if last && behind {
                        write_behind_caught(&work);
                    }
                };
                match pool() {
                    Some(p) => p.spawn(task),
                    None => task(),
                }
            }
        }
        if behind && !compress {
            let many = READY.with(|r| {
                let mut r = r.borrow_mut();
                r.push(job.work.clone());
                r.len() >= MAX_READY
            });
            // A writer that never calls `start_writes` still has its
            // batches written in the background, a few at a time.
            if many {
                start_writes();
            }
        }
        lock(pending()).push(job.clone());
        job
    }

    fn chunk_bytes(&self) -> usize {
        self.p.chunk_rows as usize * self.p.row_bytes
    }

    /// Writes chunk `k`, the first of this job, which replaces a stored
    /// chunk holding committed rows when `self.rewrites`.
    ///
    /// In a file that hands freed space out again, HDF5 stores a filtered
    /// chunk whose size changed at new space and frees the old space, which
    /// any chunk written next could take while the chunk index on disk
    /// still points there. So such a rewrite is done between two flushes:
    /// the first writes the chunks HDF5 still caches for other datasets
    /// (its own pipeline allocates their space only then), the second makes
    /// the index on disk point at the new copy. A rewrite that keeps the
    /// size (a partly filled chunk in the stored form, see
    /// [`WriteJob::finish`]) stays in place, and its committed rows keep
    /// their bytes: it needs neither.
    fn write_first(&self, k: u64, data: (&[u8], c_uint)) -> Result<()> {
        let c = self.p.chunk_rows;
        let guard = self.rewrites && self.space.reused && self.p.level.is_some();
        let moves = guard
            && stored_chunk(&self.ds, k * c).is_some_and(|(_, size)| size != data.0.len() as u64);
        let flush = || -> Result<()> {
            let file = self.ds.file().at(&self.path)?;
            crate::raw::flush_file(&file, &self.path)
        };
        if moves {
            flush()?;
        }
        write_chunks(&self.ds, k, c, &[data], &self.path)?;
        if moves {
            flush()?;
        }
        Ok(())
    }

    /// Waits for the compression tasks, then writes the whole chunks (once)
    /// and, if `with_tail`, the partial chunk. Errors repeat on every call.
    ///
    /// When appending to a compressed vector ([`Space::stored_tails`]), a
    /// partial chunk (written only by a commit) is stored uncompressed
    /// inside its deflate stream ([`Pipeline::store`]), and so is a rewrite
    /// of it that does not compress: the stored size then depends only on
    /// the chunk's size, so HDF5 rewrites the chunk in place, without
    /// moving it or touching its index entry, and the committed rows keep
    /// their bytes (shuffling puts every byte of a row at a fixed place).
    /// Small appends then neither compress nor move the chunk each time (in
    /// a file that never reuses freed space, every moved copy would be left
    /// behind). The rewrite that compresses it is smaller than the stored
    /// form: HDF5 puts it at new space or at the start of the old copy, and
    /// an index on disk that still names the old copy and its larger size
    /// reads the new stream there (inflating stops at its end).
    pub(crate) fn finish(&self, with_tail: bool) -> Result<()> {
        self.work.note_stats();
        {
            let mut st = lock(&self.work.state);
            while st.remaining > 0 {
                st = self.work.done.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        }
        // The HDF5 lock before the state lock, as a worker writing the
        // whole chunks takes them (module docs).
        sync(|| self.finish_locked(with_tail))
    }

    fn finish_locked(&self, with_tail: bool) -> Result<()> {
        let mut st = lock(&self.work.state);
        if let Some(msg) = &st.failed {
            return Err(Error::invalid(&self.path, msg.clone()));
        }
        let cb = self.chunk_bytes();
        let c = self.p.chunk_rows;
        let keep_size = self.space.stored_tails && self.p.level.is_some();
        if !st.written {
            st.written = true;
            drop(st.ds.take());
            let r = self.work.plan.write_whole(&mut st, &self.ds, |st, first| {
                if keep_size && self.rewrites {
                    let input = st.input.clone();
                    let bytes = input.as_ref().map_or(&[][..], |b| b.bytes());
                    let mut stored = Vec::new();
                    self.p.store(&bytes[..cb], &mut stored);
                    if first.1 != 0 || first.0.len() >= stored.len() {
                        return self.write_first(self.k0, (&stored, 0));
                    }
                }
                self.write_first(self.k0, first)
            });
            if let Err(e) = r {
                st.failed = Some(e.to_string());
                return Err(e);
            }
        }
        if with_tail && st.tail == Tail::Waiting {
            st.tail = Tail::Written;
            let input = st.input.clone();
            let bytes = input.as_ref().map_or(&[][..], |b| b.bytes());
            let start = self.whole * cb;
            let len = self.tail_rows as usize * self.p.row_bytes;
            let mut raw = bytes[start..start + len].to_vec();
            raw.resize(cb, 0);
            let mut comp = Vec::new();
            let data = if keep_size {
                let mask = self.p.store(&raw, &mut comp);
                (&comp[..], mask)
            } else if self.p.level.is_some() {
                let mask = self.p.compress(&raw, &mut comp);
                (&comp[..], mask)
            } else {
                (&raw[..], 0)
            };
            let k = self.k0 + self.whole as u64;
            let r = if self.whole == 0 {
                self.write_first(k, data)
            } else {
                write_chunks(&self.ds, k, c, &[data], &self.path)
            };
            if let Err(e) = r {
                st.failed = Some(e.to_string());
                return Err(e);
            }
        }
        Ok(())
    }

    /// Finishes the whole chunks, cancels a tail no commit has written, and
    /// gives the batch buffer back (for the writer's next batch), with
    /// whether a commit wrote the partial chunk (its rows are then stored).
    pub(crate) fn reclaim<T: Pod>(self: Arc<Self>) -> (Result<()>, Vec<T>, bool) {
        let r = self.finish(false);
        let (buf, stored) = {
            let mut st = lock(&self.work.state);
            if st.tail == Tail::Waiting {
                st.tail = Tail::Cancelled;
            }
            (take_input(&mut st), st.tail == Tail::Written)
        };
        forget(&self);
        (r, buf, stored)
    }

    /// Finishes the job with its partial chunk (what a commit would do) and
    /// gives the batch buffer back: a writer dropped with a job pending.
    pub(crate) fn finish_and_reclaim<T: Pod>(self: Arc<Self>) -> (Result<()>, Vec<T>) {
        let r = self.finish(true);
        let buf = take_input(&mut lock(&self.work.state));
        forget(&self);
        (r, buf)
    }
}

/// The batch buffer of a finished job, unless a task still holds it (then
/// an empty one).
fn take_input<T: Pod>(st: &mut State) -> Vec<T> {
    st.input
        .take()
        .and_then(|a| Arc::try_unwrap(a).ok())
        .and_then(|b| b.into_any().downcast::<Vec<T>>().ok())
        .map(|b| *b)
        .unwrap_or_default()
}

/// Commits begun so far, in any file (see [`commits`]).
static COMMITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A number that changes whenever a commit begins ([`complete_file`]): a
/// writer that saw it change since its last write knows that the rows it
/// wrote before may be committed now.
pub(crate) fn commits() -> u64 {
    COMMITS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Removes `job` from the pending list (it no longer needs a commit).
pub(crate) fn forget(job: &Arc<WriteJob>) {
    lock(pending()).retain(|j| !Arc::ptr_eq(j, job));
}

/// Finishes every pending job of the file numbered `fileno` (see
/// [`crate::raw::file_number`]), partial chunks included, oldest first.
/// Called before a commit flushes the file.
pub(crate) fn complete_file(fileno: u64) -> Result<()> {
    COMMITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let jobs: Vec<Arc<WriteJob>> = {
        let mut p = lock(pending());
        let (mine, rest) = p.drain(..).partition(|j| j.fileno == fileno);
        *p = rest;
        mine
    };
    let mut first = Ok(());
    for j in jobs {
        let r = j.finish(true);
        if first.is_ok() {
            first = r;
        }
    }
    first
}
