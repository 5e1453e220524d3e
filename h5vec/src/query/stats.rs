//! Statistics: HEP001 `CHUNK_MINMAX` indexes of a vector's leaf columns
//! (SPEC.md section 14), written by every save and append and read by
//! queries to skip chunks.
//!
//! ```text
//! NAME/metadata/SEARCH_INDEXES/           group, @GENERATION (scalar uint64)
//!   temperature.values__chunk_minmax      1-D compound {min T, max T, nan_count u64, fill_count u64, n u64}
//!     @KIND = "CHUNK_MINMAX"  @SOURCE = "data/temperature/values"
//!     @SOURCE_GENERATION, @SOURCE_NROWS   (scalar uint64)
//! ```
//!
//! Entry `i` covers rows `[i*C, min(count, (i+1)*C))` of the source (`C`
//! its chunk length). An index is used only while `SOURCE_GENERATION ==
//! GENERATION` and `SOURCE_NROWS == metadata/count`.
//!
//! Writing: a leaf's [`PodWriter`](crate::column::PodWriter) summarizes
//! each batch it writes, chunk by chunk, into a [`ChunkStats`] that it
//! shares with the write session ([`register`], inside [`collect`]). The
//! values a column pass pushes (`ScalarEncoder::push_all`, a block of rows
//! that fits the cache) are summarized right after it, while they are in
//! the cache (`summaries::LeafStats`), and handed over at the flush; the values no
//! pass summarized (pushed one by one) are summarized by the batch's write
//! job (`pipeline::deferred`), on the worker that writes it when one gets
//! there first, or at the flush of a batch written at once. Every commit
//! finishes the jobs first. The session writes the entries at each
//! commit ([`SessionStats::commit`]), future tokens first (HEP001's
//! mutation order), and bumps `GENERATION` after `count`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, Datatype, Group};

use crate::error::{Context, Error, Place, Result};
use crate::raw::bounds::{BoundKind, Summary};
use crate::raw::minmax::{entry_type, memory_entry_type, Entry};
use crate::raw::{self, MemType, Pod};
use crate::schema::{ids, Kind, Stored};

/// The group of a vector's indexes, in its `metadata`.
pub(crate) const GROUP: &str = "SEARCH_INDEXES";
const KIND_MINMAX: &str = "CHUNK_MINMAX";

/// Reads a leaf's rows (from a chunk boundary) and summarizes them per
/// chunk: [`reread`] for the leaf's value type.
type Reread = fn(&Dataset, Range<u64>, u64, &str) -> Result<Vec<Summary>>;

/// The statistics of one leaf being written.
pub(crate) struct ChunkStats {
    /// The source dataset's path below the vector group.
    source: String,
    kind: BoundKind,
    /// Rows per chunk of the source.
    chunk: u64,
    /// The chunk `entries[0]` describes.
    first: u64,
    entries: Vec<Summary>,
    /// The file's entries before `first` cannot be trusted (or are
    /// missing): the next commit rebuilds them from the data.
    rebuild: bool,
    /// Reads the source's rows `0..rows` and summarizes them by chunk.
    reread: Reread,
    ds: Dataset,
}

impl ChunkStats {
    /// Notes the values `vals` written from row `start` on.
    pub(crate) fn note<T: Pod>(&mut self, start: u64, vals: &[T]) {
        let c = self.chunk;
        let mut row = start;
        let mut rest = vals;
        while !rest.is_empty() {
            let take = (c - row % c).min(rest.len() as u64) as usize;
            self.note_summary(row, T::summarize(&rest[..take]));
            row += take as u64;
            rest = &rest[take..];
        }
    }

    /// Notes `s`, the summary of rows from `row` on inside one chunk: it
    /// replaces the chunk's entry when `row` starts the chunk, else adds
    /// to it (the rows before it were noted just before).
    pub(crate) fn note_summary(&mut self, row: u64, s: Summary) {
        let k = row / self.chunk;
        let fresh = row.is_multiple_of(self.chunk);
        if k < self.first {
            // Before the first chunk of this session: cannot happen
            // (writes only go forward); start over from here.
            self.first = k;
            self.entries.clear();
            self.rebuild = true;
        }
        let i = (k - self.first) as usize;
        if i < self.entries.len() {
            self.entries[i] = if fresh { s } else { self.entries[i].merge(s) };
            self.entries.truncate(i + 1);
        } else {
            while self.entries.len() < i {
                // A gap (never for whole-row writers): unknown chunks.
                self.rebuild = true;
                self.entries.push(Summary {
                    bounds: None,
                    nan: 0,
                    n: 0,
                    fill: 0,
                });
            }
            self.entries.push(s);
        }
    }
}

/// Reads rows `rows` of `ds` (from a chunk boundary) as `T` and
/// summarizes them per chunk of `chunk` rows.
fn reread<T: Pod>(ds: &Dataset, rows: Range<u64>, chunk: u64, path: &str) -> Result<Vec<Summary>> {
    let mem = if T::AS_STORED {
        MemType::<T>::checked(raw::dataset_type(ds, path)?, path)?
    } else {
        MemType::<T>::native()
    };
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut a = rows.start;
    while a < rows.end {
        let n = chunk.min(rows.end - a);
        buf.clear();
        crate::pipeline::rows::read_pod_rows::<T>(ds, &mem, a, n, &[], &mut buf, path)?;
        out.push(T::summarize(&buf));
        a += n;
    }
    Ok(out)
}

/// Rows per chunk of `ds` on axis 0 (`contiguous` when it has no chunks).
pub(crate) fn chunk_len(ds: &Dataset, contiguous: u64) -> u64 {
    ds.chunk()
        .and_then(|c| c.first().copied())
        .map_or(contiguous, |c| c.max(1) as u64)
}

/// The leaves a session collects statistics for: logical path -> source.
struct Sink {
    leaves: HashMap<String, String>,
    got: Vec<Arc<Mutex<ChunkStats>>>,
}

thread_local! {
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// Runs `f` (which makes a vector's encoder) collecting the statistics of
/// the leaves `leaves` (logical path -> source) that its writers register.
pub(crate) fn collect<R>(
    leaves: HashMap<String, String>,
    f: impl FnOnce() -> Result<R>,
) -> (Result<R>, Vec<Arc<Mutex<ChunkStats>>>) {
    SINK.with(|s| {
        *s.borrow_mut() = Some(Sink {
            leaves,
            got: Vec::new(),
        })
    });
    /// Takes the sink down even when `f` unwinds (no later writer on this
    /// thread may register with it).
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            SINK.with(|s| s.borrow_mut().take());
        }
    }
    let _reset = Reset;
    let r = f();
    let got = SINK
        .with(|s| s.borrow_mut().take())
        .map(|s| s.got)
        .unwrap_or_default();
    (r, got)
}

/// Called by a writer of 1-D rows of `T` at logical path `path`, about to
/// write from row `written` (`partial`: rows of the chunk before
/// `written` are not in its buffer): the statistics it must keep and the
/// source's rows per chunk, if the session collects them for `path`.
pub(crate) fn register<T: Pod>(
    path: &str,
    ds: &Dataset,
    written: u64,
    partial: bool,
) -> Result<Option<(Arc<Mutex<ChunkStats>>, u64)>> {
    let Some(kind) = T::BOUND else {
        return Ok(None);
    };
    let Some(source) = SINK.with(|s| {
        s.borrow()
            .as_ref()
            .and_then(|s| s.leaves.get(path).cloned())
    }) else {
        return Ok(None);
    };
    let chunk = chunk_len(ds, u64::MAX);
    let first = written / chunk;
    let mut st = ChunkStats {
        source,
        kind,
        chunk,
        first,
        entries: Vec::new(),
        rebuild: false,
        reread: reread::<T>,
        ds: ds.clone(),
    };
    if partial {
        // The rows of the chunk before `written` (none on a boundary).
        st.entries = reread::<T>(ds, first * chunk..written, chunk, path)?;
    }
    let st = Arc::new(Mutex::new(st));
    SINK.with(|s| {
        if let Some(s) = s.borrow_mut().as_mut() {
            s.got.push(st.clone());
        }
    });
    Ok(Some((st, chunk)))
}

/// The leaves of a schema that get statistics: scalar numbers, bools,
/// fieldless enums and time values reached through records only.
pub(crate) fn leaves(schema: &Stored) -> HashMap<String, String> {
    fn go(node: &Stored, path: String, source: String, out: &mut HashMap<String, String>) {
        match node.kind {
            Kind::Record => {
                if let Some(names) = &node.field_names {
                    for (name, child) in names.iter().zip(&node.children) {
                        go(
                            child,
                            format!("{path}.{name}"),
                            format!("{source}/{name}"),
                            out,
                        );
                    }
                }
            }
            Kind::Scalar => {
                let enc = node.encoded_type.as_deref().unwrap_or("");
                let number = enc == "Bool"
                    || enc.starts_with("Int")
                    || enc.starts_with("UInt")
                    || enc == "Float32"
                    || enc == "Float64";
                let codec = matches!(
                    node.codec.as_str(),
                    ids::IDENTITY
                        | ids::ENUM
                        | ids::INSTANT_CODEC
                        | ids::DATE_CODEC
                        | ids::TIME_OF_DAY_CODEC
                        | ids::DURATION_CODEC
                );
                if number && codec {
                    out.insert(path, format!("{source}/values"));
                }
            }
            _ => {}
        }
    }
    let mut out = HashMap::new();
    go(schema, "$".into(), "data".into(), &mut out);
    out
}

/// The default name of the index of `source` (`data/a/b/values` ->
/// `a.b.values__chunk_minmax`).
fn index_name(source: &str) -> String {
    let below = source.strip_prefix("data/").unwrap_or(source);
    format!("{}__chunk_minmax", below.replace('/', "."))
}

fn at(name: &str) -> Place {
    Place::new("$", format!("metadata/{GROUP}/{name}"))
}

/// Reads scalar uint64 attribute `name` of `obj`: `None` if absent or of
/// another type or shape (a token that fails the check).
pub(crate) fn read_u64_attr(obj: &hdf5::Location, name: &str) -> Option<u64> {
    if !raw::has_attr(obj, name, "$").ok()? {
        return None;
    }
    let a = obj.attr(name).ok()?;
    let t = a.dtype().ok()?;
    let desc = t.to_descriptor().ok()?;
    if desc != hdf5::types::TypeDescriptor::Unsigned(hdf5::types::IntSize::U8) || !a.is_scalar() {
        return None;
    }
    a.read_scalar::<u64>().ok()
}

pub(crate) fn write_u64_attr(obj: &hdf5::Location, name: &str, v: u64, p: &Place) -> Result<()> {
    if raw::has_attr(obj, name, p)? {
        // Rewritten in place when it is our scalar uint64 already.
        if read_u64_attr(obj, name).is_some() {
            return obj.attr(name).at(p)?.write_scalar(&v).at(p);
        }
        obj.delete_attr(name).at(p)?;
    }
    obj.new_attr::<u64>()
        .create(name)
        .at(p)?
        .write_scalar(&v)
        .at(p)
}

pub(crate) fn write_str_attr(obj: &hdf5::Location, name: &str, v: &str, p: &Place) -> Result<()> {
    let s: VarLenUnicode = v
        .parse()
        .map_err(|_| Error::invalid(p, format!("{name} {v:?} holds a NUL byte")))?;
    obj.new_attr::<VarLenUnicode>()
        .create(name)
        .at(p)?
        .write_scalar(&s)
        .at(p)
}

/// The `CHUNK_MINMAX` index datasets in `SEARCH_INDEXES` of `meta`, by
/// their `SOURCE`, when the group exists.
fn minmax_indexes(meta: &Group) -> Result<Option<(Group, HashMap<String, Dataset>)>> {
    if !meta.link_exists(GROUP) {
        return Ok(None);
    }
    let p = Place::new("$", format!("metadata/{GROUP}"));
    // Not a group: no indexes (as h5col reads a misused reserved name).
    let Ok(g) = meta.group(GROUP) else {
        return Ok(None);
    };
    let mut out = HashMap::new();
    for name in g.member_names().at(&p)? {
        let Ok(ds) = g.dataset(&name) else { continue };
        let kind = raw::attr_string(&ds, "KIND", &at(&name)).ok().flatten();
        if kind.as_deref() != Some(KIND_MINMAX) {
            continue;
        }
        if let Ok(Some(src)) = raw::attr_string(&ds, "SOURCE", &at(&name)) {
            out.insert(src, ds);
        }
    }
    Ok(Some((g, out)))
}

/// Whether index `ds` is valid for `generation` and `count` rows.
pub(crate) fn valid(ds: &Dataset, generation: Option<u64>, count: u64) -> bool {
    let (g, n) = (
        read_u64_attr(ds, "SOURCE_GENERATION"),
        read_u64_attr(ds, "SOURCE_NROWS"),
    );
    generation.is_some() && g == generation && n == Some(count)
}

/// A valid `CHUNK_MINMAX` index of `source`: its entries for `count` rows,
/// the source's chunk length, or `None` (no index, or a stale one: never
/// an error, the query then reads every chunk).
pub(crate) fn read_minmax(
    meta: &Group,
    source_ds: &Dataset,
    source: &str,
    count: u64,
) -> Result<Option<(Vec<Entry>, u64, BoundKind)>> {
    let Some((g, found)) = minmax_indexes(meta)? else {
        return Ok(None);
    };
    let Some(ds) = found.get(source) else {
        return Ok(None);
    };
    if !valid(ds, read_u64_attr(&g, "GENERATION"), count) {
        return Ok(None);
    }
    let chunk = chunk_len(source_ds, count.max(1));
    let n = count.div_ceil(chunk);
    let p = Place::new("$", ds.name());
    let info = raw::dataset_type(ds, &p)?;
    let kind = match bound_kind_of(&raw::dataset_type(source_ds, &p)?) {
        Some(k) => k,
        None => return Ok(None),
    };
    let shape = raw::shape(ds, &p)?;
    if shape.len() != 1 || shape[0] < n {
        return Err(Error::invalid(
            &p,
            format!(
                "a valid CHUNK_MINMAX index must have an entry for each of the {n} chunks, found shape {shape:?}"
            ),
        ));
    }
    drop(info);
    let mem = MemType::<Entry>::checked(memory_entry_type(kind, &p)?, &p)?;
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, n, &p)?;
    crate::pipeline::rows::read_pod_rows::<Entry>(ds, &mem, 0, n, &[], &mut out, &p)?;
    for (i, e) in out.iter().enumerate() {
        let want = chunk.min(count - i as u64 * chunk);
        if e.n != want
            || e.nan_count
                .checked_add(e.fill_count)
                .is_none_or(|m| m > e.n)
        {
            return Err(Error::invalid(
                p.element(i as u64),
                format!(
                    "CHUNK_MINMAX entry: n = {}, nan_count = {}, fill_count = {} for a chunk of {want} rows",
                    e.n, e.nan_count, e.fill_count
                ),
            ));
        }
    }
    Ok(Some((out, chunk, kind)))
}

/// `build_index(.., IndexKind::ChunkMinMax)` on a leaf saves keep no
/// statistics for (under an `Option`): `entries`, one per chunk of `chunk`
/// rows of values dataset `ds` (nulls in their `fill`), written as the
/// statistics of `source` (section 14.1's dataset) with the tokens of the
/// current `generation`.
#[allow(clippy::too_many_arguments)] // one leaf's coordinates and its entries
pub(crate) fn write_one(
    meta: &Group,
    ds: &Dataset,
    source: &str,
    chunk: u64,
    kind: BoundKind,
    entries: Vec<Summary>,
    count: u64,
    generation: u64,
) -> Result<()> {
    let st = ChunkStats {
        source: source.to_owned(),
        kind,
        chunk,
        first: 0,
        entries,
        rebuild: false,
        // Never called: nothing is rebuilt (`rebuild` is false).
        reread: reread::<u8>,
        ds: ds.clone(),
    };
    let mut s = SessionStats::new(vec![Arc::new(Mutex::new(st))]);
    s.generation = generation;
    s.same = true;
    s.commit(meta, count)
}

/// The bound kind of a source dataset's element type.
pub(crate) fn bound_kind_of(t: &Datatype) -> Option<BoundKind> {
    use hdf5::types::TypeDescriptor as D;
    // A bitfield (`Bool`) has no descriptor.
    match t.to_descriptor().ok() {
        Some(D::Integer(_)) => Some(BoundKind::I),
        Some(D::Unsigned(_)) => Some(BoundKind::U),
        Some(D::Float(_)) => Some(BoundKind::F),
        _ if t.size() == 1 => Some(BoundKind::B),
        _ => None,
    }
}

/// The statistics of a write session.
pub(crate) struct SessionStats {
    leaves: Vec<Arc<Mutex<ChunkStats>>>,
    /// Each leaf's index dataset, once found or created.
    datasets: Vec<Option<Dataset>>,
    /// `GENERATION` as committed.
    generation: u64,
    /// Tokens of the current `GENERATION` (a rebuild over unchanged data,
    /// not a mutation) instead of the next one.
    same: bool,
}

impl SessionStats {
    /// The statistics of a new vector.
    pub(crate) fn new(leaves: Vec<Arc<Mutex<ChunkStats>>>) -> SessionStats {
        SessionStats {
            datasets: leaves.iter().map(|_| None).collect(),
            leaves,
            generation: 0,
            same: false,
        }
    }

    /// The statistics of an appended vector with `count` rows: every leaf
    /// whose index is missing or stale is rebuilt at the first commit;
    /// `GENERATION` repaired if it is not a scalar uint64 (above every
    /// `SOURCE_GENERATION`, as h5col does).
    pub(crate) fn resume(
        meta: &Group,
        leaves: Vec<Arc<Mutex<ChunkStats>>>,
        count: u64,
    ) -> Result<SessionStats> {
        let Some((g, found)) = minmax_indexes(meta)? else {
            return Ok(SessionStats::new(Vec::new()));
        };
        let generation = read_u64_attr(&g, "GENERATION");
        for l in &leaves {
            let mut l = l.lock().expect("not poisoned");
            let ok = found
                .get(&l.source)
                .is_some_and(|ds| valid(ds, generation, count));
            if !ok {
                l.rebuild = true;
            }
        }
        let generation = match generation {
            Some(g) => g,
            None => {
                let top = found
                    .values()
                    .filter_map(|ds| read_u64_attr(ds, "SOURCE_GENERATION"))
                    .max()
                    .unwrap_or(0);
                top.saturating_add(1)
            }
        };
        Ok(SessionStats {
            datasets: leaves.iter().map(|_| None).collect(),
            leaves,
            generation,
            same: false,
        })
    }

    /// Whether any leaf keeps statistics in this session.
    pub(crate) fn has_leaves(&self) -> bool {
        !self.leaves.is_empty()
    }

    /// Whether `meta` has statistics an append must keep.
    pub(crate) fn present(meta: &Group) -> bool {
        meta.link_exists(GROUP) && meta.group(GROUP).is_ok()
    }

    /// Writes every leaf's entries for `count` rows, with tokens for the
    /// next generation (before `count` is written: the index is stale
    /// until [`Self::committed`]). For a vector readers can see, use
    /// [`Self::commit_tokens`], a flush, then [`Self::commit_entries`].
    pub(crate) fn commit(&mut self, meta: &Group, count: u64) -> Result<()> {
        self.commit_tokens(meta, count)?;
        self.commit_entries(count)?;
        if self.same {
            // Tokens of the current generation say "valid" at once: they
            // go after the content (an index built on demand is believed
            // only once complete).
            self.write_tokens(self.generation, count)?;
        }
        Ok(())
    }

    /// Writes `SOURCE_GENERATION` = `generation` and `SOURCE_NROWS` =
    /// `count` on every leaf's index dataset.
    fn write_tokens(&self, generation: u64, count: u64) -> Result<()> {
        for (l, ds) in self.leaves.iter().zip(self.datasets.iter()) {
            let l = l.lock().expect("not poisoned");
            let p = at(&index_name(&l.source));
            let ds = ds.as_ref().ok_or_else(|| {
                Error::invalid(&p, "statistics tokens written before their dataset")
            })?;
            write_u64_attr(ds, "SOURCE_GENERATION", generation, &p)?;
            write_u64_attr(ds, "SOURCE_NROWS", count, &p)?;
        }
        Ok(())
    }

    /// Writes each leaf's future tokens (`SOURCE_GENERATION` of the next
    /// generation, `SOURCE_NROWS` = `count`), creating its index dataset
    /// if needed. HEP001's mutation order: the caller flushes the file
    /// before [`Self::commit_entries`] changes an entry that readers may
    /// read, or a kill could leave new entries on disk under the old,
    /// valid-looking tokens (HDF5 writes an entry's bytes, raw data, when
    /// it likes; the tokens are attributes, metadata, which stay in its
    /// cache until a flush).
    pub(crate) fn commit_tokens(&mut self, meta: &Group, count: u64) -> Result<()> {
        if self.leaves.is_empty() {
            return Ok(());
        }
        let gp = Place::new("$", format!("metadata/{GROUP}"));
        let g = if meta.link_exists(GROUP) {
            meta.group(GROUP).at(&gp)?
        } else {
            let g = raw::create_group_small(meta, GROUP, &gp)?;
            write_u64_attr(&g, "GENERATION", self.generation, &gp)?;
            g
        };
        let next = if self.same {
            self.generation
        } else {
            self.generation
                .checked_add(1)
                .ok_or_else(|| Error::invalid(&gp, "GENERATION cannot grow past 2^64 - 1"))?
        };
        let found = if self.datasets.iter().any(Option::is_none) {
            minmax_indexes(meta)?.map(|x| x.1).unwrap_or_default()
        } else {
            HashMap::new()
        };
        for (l, cached) in self.leaves.iter().zip(self.datasets.iter_mut()) {
            let l = l.lock().expect("not poisoned");
            let name = index_name(&l.source);
            let p = at(&name);
            let ds = match cached.as_ref().or_else(|| found.get(&l.source)) {
                Some(ds) => ds.clone(),
                None => {
                    let file_t = raw::dataset_type(&l.ds, &p)?;
                    let t = entry_type(file_t.id(), true, &p)?;
                    // Entries per chunk: what this commit writes, rounded
                    // up, at least 64 (2.5 KiB) and at most 64 KiB of them
                    // (a small vector keeps a small file).
                    let size = t.size().max(1);
                    let rows = usize::try_from(count.div_ceil(l.chunk)).unwrap_or(usize::MAX);
                    let spec = raw::ColumnSpec {
                        dtype: &t,
                        inner: &[],
                        chunk_rows: rows
                            .max(64)
                            .checked_next_power_of_two()
                            .unwrap_or(usize::MAX)
                            .min((65_536 / size).max(64)),
                        compression: &crate::options::Compression::None,
                        // Checksummed as the column is (SPEC.md 6.4).
                        checksum: l
                            .ds
                            .filters()
                            .iter()
                            .any(|f| matches!(f, hdf5::filters::Filter::Fletcher32)),
                    };
                    let ds = raw::create_column(&g, &name, &spec, &p)?;
                    raw::write_attr_ascii(&ds, "KIND", KIND_MINMAX, &p)?;
                    write_str_attr(&ds, "SOURCE", &l.source, &p)?;
                    ds
                }
            };
            *cached = Some(ds);
        }
        // Future tokens before the content (HEP001's mutation order); with
        // `same`, [`Self::commit`] writes them after it.
        if !self.same {
            self.write_tokens(next, count)?;
        }
        Ok(())
    }

    /// Writes each leaf's entries for `count` rows into the index dataset
    /// [`Self::commit_tokens`] prepared.
    pub(crate) fn commit_entries(&mut self, count: u64) -> Result<()> {
        for (l, cached) in self.leaves.iter().zip(self.datasets.iter()) {
            let mut l = l.lock().expect("not poisoned");
            let p = at(&index_name(&l.source));
            let ds = cached.as_ref().ok_or_else(|| {
                Error::invalid(&p, "statistics entries written before their tokens")
            })?;
            if l.rebuild {
                let upto = l.first * l.chunk;
                let mut all = (l.reread)(&l.ds, 0..upto.min(count), l.chunk, &l.source)?;
                all.append(&mut l.entries);
                l.entries = all;
                l.first = 0;
                l.rebuild = false;
            }
            let entries: Vec<Entry> = l.entries.iter().map(|s| Entry::new(s, l.kind)).collect();
            let n_chunks = count.div_ceil(l.chunk);
            let mem = MemType::<Entry>::checked(memory_entry_type(l.kind, &p)?, &p)?;
            raw::set_rows(ds, n_chunks, &[], &p)?;
            crate::pipeline::rows::write_pod_rows::<Entry>(
                ds,
                &mem,
                l.first,
                entries.len() as u64,
                &[],
                &entries,
                &p,
            )?;
            // Keep the entry of a partly filled last chunk: the next
            // batch adds to it.
            let keep_from = count / l.chunk;
            if keep_from > l.first {
                let drop_n = ((keep_from - l.first) as usize).min(l.entries.len());
                l.entries.drain(..drop_n);
                l.first = keep_from;
            }
        }
        Ok(())
    }

    /// After `count` is written: `GENERATION` of the tokens just written.
    pub(crate) fn committed(&mut self, meta: &Group) -> Result<()> {
        if self.leaves.is_empty() {
            return Ok(());
        }
        let gp = Place::new("$", format!("metadata/{GROUP}"));
        let g = meta.group(GROUP).at(&gp)?;
        self.generation += 1;
        write_u64_attr(&g, "GENERATION", self.generation, &gp)
    }
}

/// The statistics of a leaf rebuilt from all its `count` rows at the next
/// commit.
fn rebuilt<T: Pod>(ds: &Dataset, source: &str, count: u64) -> Option<ChunkStats> {
    let chunk = chunk_len(ds, count.max(1));
    Some(ChunkStats {
        source: source.to_owned(),
        kind: T::BOUND?,
        chunk,
        first: count.div_ceil(chunk),
        entries: Vec::new(),
        rebuild: true,
        reread: reread::<T>,
        ds: ds.clone(),
    })
}

/// After a vector's data was rewritten into new chunks (compaction,
/// copies, whose `metadata` is copied as it was): its statistics, if it
/// had any, are replaced by new ones computed from `vector`'s data.
pub(crate) fn rebuild(vector: &Group, meta: &Group, schema: &Stored, count: u64) -> Result<()> {
    if !meta.link_exists(GROUP) {
        return Ok(());
    }
    let gp = Place::new("$", format!("metadata/{GROUP}"));
    meta.unlink(GROUP).at(&gp)?;
    let mut got = Vec::new();
    for source in leaves(schema).into_values() {
        got.extend(rebuilt_any(vector, &source, count)?.map(|s| Arc::new(Mutex::new(s))));
    }
    let mut s = SessionStats::new(got);
    s.commit(meta, count)?;
    s.committed(meta)
}

/// The statistics of leaf `source` (a values dataset below `vector`)
/// rebuilt from all its `count` rows at the next commit; `None` for a
/// dataset of no statistics type.
fn rebuilt_any(vector: &Group, source: &str, count: u64) -> Result<Option<ChunkStats>> {
    let p = Place::new("$", source);
    let ds = vector.dataset(source).at(&p)?;
    let t = raw::dataset_type(&ds, &p)?;
    use hdf5::types::{FloatSize as Fs, IntSize as Is, TypeDescriptor as D};
    // A bitfield (`Bool`) has no descriptor.
    Ok(match t.to_descriptor().ok() {
        Some(D::Integer(Is::U1)) => rebuilt::<i8>(&ds, source, count),
        Some(D::Integer(Is::U2)) => rebuilt::<i16>(&ds, source, count),
        Some(D::Integer(Is::U4)) => rebuilt::<i32>(&ds, source, count),
        Some(D::Integer(Is::U8)) => rebuilt::<i64>(&ds, source, count),
        Some(D::Unsigned(Is::U1)) => rebuilt::<u8>(&ds, source, count),
        Some(D::Unsigned(Is::U2)) => rebuilt::<u16>(&ds, source, count),
        Some(D::Unsigned(Is::U4)) => rebuilt::<u32>(&ds, source, count),
        Some(D::Unsigned(Is::U8)) => rebuilt::<u64>(&ds, source, count),
        Some(D::Float(Fs::U4)) => rebuilt::<f32>(&ds, source, count),
        Some(D::Float(Fs::U8)) => rebuilt::<f64>(&ds, source, count),
        _ if t.size() == 1 => rebuilt::<raw::Bits8>(&ds, source, count),
        _ => None,
    })
}

/// `build_index(.., IndexKind::ChunkMinMax)`: the statistics of the one
/// leaf `source` (re)built from its `count` rows, with the tokens of the
/// current `generation` (the group and `GENERATION` exist: the caller
/// made them). `false` when the leaf gets no statistics (not a number,
/// bool, enum or time column).
pub(crate) fn rebuild_one(
    vector: &Group,
    meta: &Group,
    source: &str,
    count: u64,
    generation: u64,
) -> Result<bool> {
    let Some(st) = rebuilt_any(vector, source, count)? else {
        return Ok(false);
    };
    let mut s = SessionStats::new(vec![Arc::new(Mutex::new(st))]);
    s.generation = generation;
    s.same = true;
    s.commit(meta, count)?;
    Ok(true)
}
