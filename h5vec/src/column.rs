//! One dataset of plain values, written and read in whole-row batches.
//! The building block of every kind: scalar `values`, dense `values`, blob
//! `bytes`/`stops`, list `OFFSETS`/`VALUES`, string `heap`/`pointers`.

use std::sync::Arc;

use hdf5::{Dataset, Datatype, Group};

use crate::codec::{expect_members, open_column};
use crate::error::{Place, Result};
use crate::evolution::LoadFlags;
use crate::options::{Compression, WriteCtx};
use crate::pipeline::committed::CommittedChunk;
use crate::pipeline::deferred::{Space, WriteJob};
use crate::pipeline::detect::Pipeline;
use crate::pipeline::prefetch::{self, ReadAhead};
use crate::query::{stats, summaries::LeafStats};
use crate::raw::{self, ColumnSpec, MemType, Pod};
use crate::schema::{Schema, Stored};

/// Appends batches of `T` rows to one extendible dataset.
///
/// Datasets whose chunks h5vec writes itself (see [`crate::pipeline`]) are
/// written asynchronously: a flush hands whole chunks to a job that
/// compresses (and summarizes) them on the workers while the caller
/// encodes the next batch, and keeps a partial last chunk's rows in `buf`
/// for the next batch. A commit writes everything with [`complete_file`].
pub struct PodWriter<T: Pod> {
    ds: Dataset,
    /// The memory type: `T`'s own, the dataset's own type for
    /// `Pod::AS_STORED`, or a type the writer's owner made (see
    /// [`PodWriter::resume_typed`]).
    mem: MemType<T>,
    inner: Vec<u64>,
    /// Values buffered since the last flush (row-major, `inner` per row);
    /// row 0 of the buffer is row `written` of the dataset.
    pub buf: Vec<T>,
    /// The dataset row that `buf[0]` starts: rows before it are written
    /// (or queued), and `written + rows in buf` is the next row.
    pub written: u64,
    /// Rows buffered when a row holds no values at all (e.g. `[T; 0]`):
    /// `buf` cannot count them.
    pub empty_rows: u64,
    path: String,
    /// How whole chunks are written directly, if they can be.
    pipe: Option<Pipeline>,
    /// The open file's number, for commits.
    fileno: u64,
    /// How the file treats freed space (see [`WriteJob::finish`]).
    space: Space,
    /// Rows at the front of `buf` already handed to the last job as its
    /// partial chunk (or already in the file): a flush with no more rows
    /// than these has nothing new to write.
    carried: u64,
    /// Whether the carried rows are stored in the file (read back on
    /// resume, or written by a commit): their chunk then holds committed
    /// rows, and rewriting it takes care (see [`WriteJob::submit`]).
    carried_stored: bool,
    /// The last flushed batch, until its chunks are written.
    pending: Option<Arc<WriteJob>>,
    /// For writes through HDF5's filters (no `pipe`).
    guard: CommittedChunk,
    /// The column's statistics, when its write session keeps them
    /// (`crate::query::stats`); boxed: a record's writers sit side by side
    /// in its encoder, and a wide record built on a debug build's stack
    /// must stay small (tests/wide.rs).
    stats: Option<Box<LeafStats>>,
}

impl<T: Pod> PodWriter<T> {
    /// Creates dataset `name` in `group` with rows of shape `inner`.
    pub fn create(
        group: &Group,
        name: &str,
        inner: &[usize],
        chunk_rows: usize,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let dt = raw::copy_type(T::file_type(), path)?;
        Self::create_as(
            group,
            name,
            &dt,
            inner,
            chunk_rows,
            ctx.compression_for(name),
            ctx.checksum(),
            path,
        )
    }

    /// Creates dataset `name` with an explicit file datatype (with HDF5's
    /// Fletcher32 checksum last in its filters if `checksum`).
    #[allow(clippy::too_many_arguments)] // the dataset's name, type, shape and filters
    pub fn create_as(
        group: &Group,
        name: &str,
        dtype: &Datatype,
        inner: &[usize],
        chunk_rows: usize,
        compression: &Compression,
        checksum: bool,
        path: &str,
    ) -> Result<Self> {
        Self::create_typed(
            group,
            name,
            dtype,
            None,
            inner,
            chunk_rows,
            compression,
            checksum,
            path,
        )
    }

    /// [`create_as`](Self::create_as) with the memory type `mem` in place
    /// of `T::mem_type()` (see [`resume_typed`](Self::resume_typed)).
    #[allow(clippy::too_many_arguments)] // create_as's arguments and the memory type
    pub(crate) fn create_typed(
        group: &Group,
        name: &str,
        dtype: &Datatype,
        mem: Option<MemType<T>>,
        inner: &[usize],
        chunk_rows: usize,
        compression: &Compression,
        checksum: bool,
        path: &str,
    ) -> Result<Self> {
        let spec = ColumnSpec {
            dtype,
            inner,
            chunk_rows,
            compression,
            checksum,
        };
        let ds = raw::create_column(group, name, &spec, path)?;
        let inner = inner.iter().map(|&d| d as u64).collect();
        let mut w = Self::resume_typed(ds, mem, inner, 0, path)?;
        w.space.stored_tails = false;
        Ok(w)
    }

    /// Continues writing an existing dataset at row `written`.
    pub fn resume(ds: Dataset, inner: Vec<u64>, written: u64, path: &str) -> Result<Self> {
        Self::resume_typed(ds, None, inner, written, path)
    }

    /// [`resume`](Self::resume) with the memory type `mem` in place of
    /// `T::mem_type()`: for a `T` HDF5 has no predefined type for, whose
    /// type the caller creates and the writer closes, so that no type id
    /// outlives the writer.
    pub(crate) fn resume_typed(
        ds: Dataset,
        mem: Option<MemType<T>>,
        inner: Vec<u64>,
        written: u64,
        path: &str,
    ) -> Result<Self> {
        crate::limits::check_append_chunk(&ds, path)?;
        let mem = match mem {
            Some(m) => m,
            None if T::AS_STORED => MemType::checked(raw::dataset_type(&ds, path)?, path)?,
            None => MemType::native(),
        };
        let mem_id = mem.id();
        let row_bytes = inner
            .iter()
            .try_fold(std::mem::size_of::<T>(), |a, &d| {
                a.checked_mul(usize::try_from(d).ok()?)
            })
            .unwrap_or(0);
        let pipe = Pipeline::detect(&ds, mem_id)
            .filter(|p| row_bytes > 0 && p.row_bytes == row_bytes && p.chunk_rows > 0);
        // An existing dataset: its partial chunks take the stored form
        // (`create_as` switches a new one to compressed partial chunks).
        let compressed = pipe.is_some_and(|p| p.level.is_some());
        let space = Space {
            reused: compressed && ds.file().map_or(true, |f| raw::has_free_space_managers(&f)),
            stored_tails: compressed,
        };
        let mut w = PodWriter {
            fileno: if pipe.is_some() {
                raw::file_number(ds.id())
            } else {
                0
            },
            space,
            ds,
            mem,
            inner,
            buf: crate::pipeline::buffers::take_vec(),
            written,
            empty_rows: 0,
            path: path.to_owned(),
            pipe,
            carried: 0,
            carried_stored: false,
            pending: None,
            guard: CommittedChunk::off(),
            stats: None,
        };
        if pipe.is_none() {
            w.guard = CommittedChunk::new(&w.ds);
        }
        if let Some(p) = pipe {
            // Batches start on a chunk boundary: the rows of a partly
            // filled last chunk are read back and rewritten with the next
            // batch as one whole chunk.
            let start = written - written % p.chunk_rows;
            if start < written {
                crate::pipeline::rows::read_pod_rows::<T>(
                    &w.ds,
                    &w.mem,
                    start,
                    written - start,
                    &w.inner,
                    &mut w.buf,
                    path,
                )?;
                w.written = start;
                w.carried = written - start;
                w.carried_stored = true;
            }
        }
        if w.inner.is_empty() {
            w.stats = stats::register::<T>(path, &w.ds, w.written, w.pipe.is_none())?
                .map(|(st, chunk)| Box::new(LeafStats::new(st, chunk)));
        }
        Ok(w)
    }

    /// Notes the first `rows` buffered rows in the column's statistics.
    fn note_stats(&mut self, rows: u64) {
        if let Some(st) = &mut self.stats {
            st.note_all(
                self.written,
                &self.buf[..(rows as usize).min(self.buf.len())],
            );
        }
    }

    /// Summarizes the values pushed since the last call for the column's
    /// statistics, while they are in the cache ([`LeafStats`]).
    #[inline]
    pub(crate) fn summarize_pushed(&mut self) {
        if let Some(st) = &mut self.stats {
            st.catch_up(self.written, &self.buf);
        }
    }

    /// The dataset written to.
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// Rows buffered and not yet written.
    pub fn buffered_rows(&self) -> u64 {
        let per: u64 = self.inner.iter().product::<u64>();
        (self.buf.len() as u64)
            .checked_div(per)
            .unwrap_or(self.empty_rows)
    }

    /// Writes the buffer (one HDF5 call, or one job of whole chunks),
    /// setting the extent to exactly the rows written so far (which also
    /// drops a stale tail after a crash).
    pub fn flush(&mut self) -> Result<()> {
        let rows = self.buffered_rows();
        let Some(p) = self.pipe else {
            return self.flush_now(rows);
        };
        let end = self
            .written
            .checked_add(rows)
            .ok_or_else(|| crate::Error::invalid(&self.path, "row count overflows"))?;
        if rows <= self.carried {
            // Nothing new; the extent is still set exactly (`repair`).
            return raw::set_rows(&self.ds, end, &self.inner, &self.path);
        }
        let mut next = match self.pending.take() {
            Some(job) => {
                let (r, spare, stored) = job.reclaim::<T>();
                r?;
                self.carried_stored = stored;
                spare
            }
            None => crate::pipeline::buffers::take_vec(),
        };
        raw::set_rows(&self.ds, end, &self.inner, &self.path)?;
        // After the last job noted its values: what was summarized, and
        // where the values this job notes begin.
        let stats = (self.stats.as_mut())
            .map(|st| (st.shared.clone(), st.hand_over(self.buf.len())))
            .filter(|(_, from)| *from < self.buf.len());
        let c = p.chunk_rows;
        let whole = rows / c;
        let tail = rows % c;
        let per = self.inner.iter().product::<u64>() as usize;
        // The partial last chunk's rows start the next batch.
        next.clear();
        next.extend_from_slice(&self.buf[(whole * c) as usize * per..]);
        let batch = std::mem::replace(&mut self.buf, next);
        self.pending = Some(WriteJob::submit(
            &self.ds,
            self.fileno,
            p,
            self.written / c,
            whole as usize,
            tail,
            self.carried > 0 && self.carried_stored,
            self.space,
            batch,
            stats,
            &self.path,
        ));
        self.written += whole * c;
        if let Some(st) = &mut self.stats {
            st.advance(self.written, (whole * c) as usize);
        }
        self.carried = tail;
        self.carried_stored = false;
        Ok(())
    }

    /// Writes `rows` buffered rows straight away (datasets without a
    /// direct chunk path).
    fn flush_now(&mut self, rows: u64) -> Result<()> {
        // AS_STORED types are single bytes and the dataset's own type is a
        // 1-byte type, so the buffer matches it value for value; any other
        // type describes `T` (`MemType`).
        self.note_stats(rows);
        let mem = &self.mem;
        let per = self.inner.iter().product::<u64>() as usize;
        let (ds, buf, inner, written) = (&self.ds, &self.buf, &self.inner, self.written);
        self.guard
            .write(ds, &self.path, written, rows, |from, to| {
                // `buf` holds rows * prod(inner) values of T (rows is counted
                // explicitly, so zero-size rows such as `[T; 0]` work); the
                // slice starts at whole row `from`.
                crate::pipeline::rows::write_pod_rows(
                    ds,
                    mem,
                    written + from,
                    to - from,
                    inner,
                    &buf[from as usize * per..],
                    &self.path,
                )
            })?;
        self.written += rows;
        self.buf.clear();
        self.empty_rows = 0;
        Ok(())
    }
}

impl<T: Pod> Drop for PodWriter<T> {
    /// A writer dropped before a commit still writes its last batch (a drop
    /// cannot report an error; a commit reports it first).
    fn drop(&mut self) {
        if let Some(job) = self.pending.take() {
            let (_, spare) = job.finish_and_reclaim::<T>();
            crate::pipeline::buffers::give_vec(spare);
        }
        crate::pipeline::buffers::give_vec(std::mem::take(&mut self.buf));
    }
}

/// Writes every batch still queued for the file holding `obj` (partial
/// chunks included). Every commit calls it before flushing the file and
/// writing `count`.
pub(crate) fn complete_file(obj: &hdf5::Location) -> Result<()> {
    crate::pipeline::deferred::complete_file(raw::file_number(obj.id()))
}

/// Reads batches of `T` rows from one dataset.
///
/// A compressed dataset whose chunks h5vec decompresses itself (see
/// [`crate::pipeline`]) is read with read-ahead: while the caller decodes
/// one batch of a front-to-back read, the next batch's chunks are
/// decompressed on the worker threads ([`crate::pipeline::prefetch::ReadAhead`]).
pub struct PodReader<T: Pod> {
    /// The dataset.
    pub ds: Dataset,
    mem: MemType<T>,
    inner: Vec<u64>,
    /// Rows in the dataset.
    pub rows: u64,
    /// The logical path and the dataset, for errors.
    at: Place,
    /// For a compressed dataset h5vec decompresses itself: how (found
    /// once for every batch), and the chunks of the next batch,
    /// decompressed ahead. Boxed: most readers have none.
    ahead: Option<Box<(Pipeline, ReadAhead)>>,
    _t: std::marker::PhantomData<T>,
}

impl<T: Pod> PodReader<T> {
    /// Wraps a dataset already checked with [`crate::codec::open_column`].
    pub fn new(ds: Dataset, inner: Vec<u64>, rows: u64, path: &str) -> Result<Self> {
        let at = Place::new(path, ds.name());
        let mem = if T::AS_STORED {
            MemType::checked(raw::dataset_type(&ds, &at)?, &at)?
        } else {
            MemType::native()
        };
        Self::build(ds, mem, inner, rows, at)
    }

    /// A reader with the memory type `mem`.
    fn build(ds: Dataset, mem: MemType<T>, inner: Vec<u64>, rows: u64, at: Place) -> Result<Self> {
        let mut r = PodReader {
            ds,
            mem,
            inner,
            rows,
            at,
            ahead: None,
            _t: std::marker::PhantomData,
        };
        r.find_pipeline();
        Ok(r)
    }

    /// The memory type rows are read as.
    fn mem_type(&self) -> hdf5_sys::h5i::hid_t {
        self.mem.id()
    }

    /// Sets `ahead` for a compressed dataset h5vec decompresses itself
    /// (not for Fletcher32 alone, whose chunks are read in place).
    fn find_pipeline(&mut self) {
        let row_bytes = self
            .inner
            .iter()
            .try_fold(std::mem::size_of::<T>(), |a, &d| {
                a.checked_mul(usize::try_from(d).ok()?)
            })
            .unwrap_or(0);
        self.ahead = Pipeline::detect(&self.ds, self.mem_type())
            .filter(|p| {
                row_bytes > 0 && p.row_bytes == row_bytes && p.chunk_rows > 0 && p.reads_ahead()
            })
            .map(|p| Box::new((p, ReadAhead::default())));
    }

    /// [`new`](Self::new) reading with the memory type `mem` in place of
    /// `T::mem_type()` (a union's tag enum, which HDF5 converts to no
    /// integer type).
    pub(crate) fn with_type(
        ds: Dataset,
        mem: MemType<T>,
        inner: Vec<u64>,
        rows: u64,
        path: &str,
    ) -> Result<Self> {
        // Not through `new`: `T::mem_type()` is never made for a type read
        // with another memory type.
        let at = Place::new(path, ds.name());
        Self::build(ds, mem, inner, rows, at)
    }

    /// Where element `row` is, for errors: `$.field[row]` at the dataset.
    pub(crate) fn element(&self, row: u64) -> Place {
        self.at.element(row)
    }

    /// Reads rows `start..start + n`, checked against the extent.
    pub fn read(&self, start: u64, n: u64) -> Result<Vec<T>> {
        let mut v = Vec::new();
        self.read_into(start, n, &mut v)?;
        Ok(v)
    }

    /// Reads rows `start..start + n` into `out`, reusing its memory.
    pub fn read_into(&self, start: u64, n: u64, out: &mut Vec<T>) -> Result<()> {
        match start.checked_add(n) {
            Some(end) if end <= self.rows => match self.ahead.as_deref() {
                Some((p, ahead)) => self.read_ahead(p, ahead, start, n, out),
                None => crate::pipeline::rows::read_pod_rows::<T>(
                    &self.ds,
                    &self.mem,
                    start,
                    n,
                    &self.inner,
                    out,
                    &self.at,
                ),
            },
            _ => Err(crate::Error::invalid(
                &self.at,
                format!(
                    "rows {start}..{} past the end of a dataset of {} rows",
                    start.saturating_add(n),
                    self.rows
                ),
            )),
        }
    }

    /// The logical path and the dataset, for errors.
    pub(crate) fn place(&self) -> &Place {
        &self.at
    }

    /// Reads rows `start..start + n` (inside the extent) of a compressed
    /// dataset through `p`, with read-ahead.
    fn read_ahead(
        &self,
        p: &Pipeline,
        ahead: &ReadAhead,
        start: u64,
        n: u64,
        out: &mut Vec<T>,
    ) -> Result<()> {
        let elems = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(p.row_bytes / std::mem::size_of::<T>().max(1)))
            .ok_or_else(|| crate::Error::invalid(&self.at, "row range too large"))?;
        // Initialised memory only: grown with defaults, shrunk without touching.
        if out.len() > elems {
            out.truncate(elems);
        } else {
            out.resize(elems, T::default());
        }
        // `out` holds `elems` plain values: `n` rows of `p.row_bytes` bytes.
        let bytes = raw::pod_bytes_mut(&mut out[..]);
        let (ds, mem, inner, at) = (&self.ds, &self.mem, &self.inner, &self.at);
        prefetch::read_rows_ahead(
            ds,
            p,
            ahead,
            self.rows,
            start,
            n,
            bytes,
            at,
            &mut |s, k, b| raw::read_pod_rows_bytes(ds, mem, s, k, inner, b, at),
        )
    }
}

/// Appends batches of strings to a 1-D variable-length UTF-8 dataset.
pub struct StrWriter {
    ds: Dataset,
    guard: CommittedChunk,
    bytes: Vec<u8>,
    starts: Vec<usize>,
    /// Rows already in the dataset.
    pub written: u64,
    path: String,
}

impl StrWriter {
    /// Creates dataset `name` of variable-length UTF-8 strings.
    pub fn create(group: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self> {
        let dt = raw::vlen_utf8(path)?;
        let chunk = ctx.chunk_rows(16);
        let spec = ColumnSpec {
            dtype: &dt,
            inner: &[],
            chunk_rows: chunk,
            compression: ctx.compression_for(name),
            checksum: ctx.checksum(),
        };
        let ds = raw::create_column(group, name, &spec, path)?;
        Self::resume(ds, 0, path)
    }

    /// Continues an existing dataset at row `written`.
    ///
    /// After an interrupted append, the partly filled chunk holding row
    /// `written` may hold, past `written` (even past the extent, which the
    /// crash never committed), references into global-heap space that was
    /// never committed; HDF5 reads the old value of every variable-length
    /// element it overwrites and would fail on them. So those slots are
    /// cleared first, straight in the stored chunk (see
    /// [`raw::clear_chunk_tail`]); the committed rows are left as they are.
    pub fn resume(ds: Dataset, written: u64, path: &str) -> Result<Self> {
        raw::clear_chunk_tail(&ds, written, path)?;
        Ok(StrWriter {
            guard: CommittedChunk::new(&ds),
            ds,
            bytes: Vec::new(),
            starts: Vec::new(),
            written,
            path: path.to_owned(),
        })
    }

    /// The row the next pushed string gets (rows written plus rows buffered).
    pub fn next_row(&self) -> u64 {
        self.written + self.starts.len() as u64
    }

    /// Buffers one string; a NUL inside it is an error (HDF5 strings end at NUL).
    pub fn push(&mut self, s: &str) -> Result<()> {
        if s.as_bytes().contains(&0) {
            let row = self.next_row();
            return Err(crate::Error::encode(
                format!("{}[{row}]", self.path),
                "string contains a NUL byte, which HDF5 variable-length strings cannot hold (use #[h5vec(vls)])",
            ));
        }
        self.starts.push(self.bytes.len());
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        Ok(())
    }

    /// Writes the buffered strings with one HDF5 call.
    pub fn flush(&mut self) -> Result<()> {
        let rows = self.starts.len() as u64;
        let (ds, bytes, starts, written) = (&self.ds, &self.bytes, &self.starts, self.written);
        self.guard
            .write(ds, &self.path, written, rows, |from, to| {
                let (from, to) = (from as usize, to as usize);
                raw::write_vlen_buffer(
                    ds,
                    written + from as u64,
                    bytes,
                    &starts[from..to],
                    &self.path,
                )
            })?;
        self.written += self.starts.len() as u64;
        self.bytes.clear();
        self.starts.clear();
        Ok(())
    }
}

/// Opens a 1-D variable-length string dataset checked for `min_rows` rows.
pub(crate) fn open_str_column(
    group: &Group,
    name: &str,
    path: &str,
    min_rows: u64,
) -> Result<(Dataset, u64)> {
    crate::codec::open_column(
        group,
        name,
        path,
        &[],
        min_rows,
        |t| t.class == hdf5_sys::h5t::H5T_class_t::H5T_STRING && t.vlen_str,
        "variable-length UTF-8 strings",
    )
}

/// UTF-8 text of many slices of one byte buffer: the buffer is validated
/// once, and each slice then only needs its two ends on character
/// boundaries (an O(1) check). A buffer that is not valid UTF-8 as a whole
/// (bytes no slice uses, say) falls back to validating each slice.
pub(crate) struct Utf8Slices<'a> {
    bytes: &'a [u8],
    whole: Option<&'a str>,
}

impl<'a> Utf8Slices<'a> {
    /// Validates `bytes` as a whole.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Utf8Slices {
            bytes,
            whole: std::str::from_utf8(bytes).ok(),
        }
    }

    /// The text of `bytes[a..b]`, or `None` if out of range or not UTF-8.
    #[inline]
    pub(crate) fn get(&self, a: usize, b: usize) -> Option<&'a str> {
        match self.whole {
            Some(s) => s.get(a..b),
            None => self
                .bytes
                .get(a..b)
                .and_then(|x| std::str::from_utf8(x).ok()),
        }
    }
}

// The `values` column of scalar and dense nodes (SPEC.md 3.1, 3.2): the
// one dataset the typed codecs, `kinds::mapped` and the Arrow reader and
// writer all create and open.

/// Creates the `values` dataset of a scalar or dense column: rows of
/// `shape` (empty for a scalar) of `R`, chunked by the row size. What the
/// typed codecs and the schema-driven writer (`crate::arrow`) both create.
pub(crate) fn create_values<R: Pod>(
    group: &Group,
    shape: &[usize],
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PodWriter<R>> {
    let leaves: usize = shape.iter().product();
    let chunk = ctx.chunk_rows(leaves.max(1) * std::mem::size_of::<R>());
    PodWriter::create(group, "values", shape, chunk, path, ctx)
}

/// [`open_values_with`] for an exact match (the Arrow readers and writers).
#[cfg(feature = "arrow")]
pub(crate) fn open_values<R: Pod>(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    want: &Schema,
    inner: &[u64],
) -> Result<PodReader<R>> {
    open_values_with(group, node, path, count, want, inner, LoadFlags::default())
}

/// Checks a scalar or dense node against `want` and its data group (exactly
/// `values`), and opens `values`: rows of shape `inner` of `R`'s type, at
/// least `count` of them. What the typed decoders and the schema-driven
/// reader (`crate::arrow`) both open. A load that widens numbers reads a
/// narrower stored number as `R` (SPEC.md section 12).
pub(crate) fn open_values_with<R: Pod>(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    want: &Schema,
    inner: &[u64],
    load: LoadFlags,
) -> Result<PodReader<R>> {
    let check = crate::evolution::expect_number::<R>(node, want, path, load)?;
    expect_members(group, &["values"], node, path)?;
    let (ds, rows) = open_column(
        group,
        "values",
        path,
        inner,
        count,
        |t| check.accepts(t),
        check.describe(),
    )?;
    PodReader::new(ds, inner.to_vec(), rows, path)
}
