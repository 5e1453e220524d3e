//! One write session: the commit protocol of SPEC.md section 8, once, under
//! every writer of a vector ([`VectorWriter`](crate::VectorWriter), the
//! typed [`save_vector_with`](crate::save_vector_with), the Arrow batch
//! writer and the serde writer), and [`WriteSession::trim`], the one
//! `repair`.
//!
//! A session owns the vector's group, its `metadata` group and the rows:
//! `committed` (what `count` says), `pending` (written or buffered since),
//! `buffered` (in the encoder, not yet written). The writer above it owns
//! only how values become encoder calls; the encoder is anything that can
//! write what it buffered ([`Batches`]).
//!
//! The order, for every writer:
//! - a new vector is an anonymous group (readers cannot reach it) holding
//!   `data`, then `metadata` with `count` 0; it is linked as its name by
//!   [`commit_vector`] (complete, flush, link, flush) at its first commit
//!   (or at [`finish`](WriteSession::finish), as the writer chose), `count`
//!   written just before: nothing is visible before both are on disk;
//! - a commit of a linked vector: every dataset grown and written
//!   (the encoder's flush), the file flushed, `count` rewritten, the file
//!   flushed again; a crash between leaves the old `count` and tails it
//!   does not cover, which readers ignore and [`trim`](WriteSession::trim)
//!   cuts.

use hdf5::Group;

use super::metadata::{write_count, write_metadata};
use super::open::{open_vector, Opened};
use crate::codec::{expect_members, open_group};
use crate::containers::{check_new_member, check_replaceable};
use crate::error::{Context, Result};
use crate::guard::Access;
use crate::options::{SaveOptions, WriteCtx};
use crate::query::stats::{self, SessionStats};
use crate::raw;
use crate::schema::{Schema, Stored};

/// Batches a [`VectorWriter`](crate::VectorWriter) writes between two commits.
pub const COMMIT_BATCHES: usize = 16;

/// Links the complete anonymous vector group `group` as `name` in `parent`
/// (replacing the object linked as `name` if `replace`).
///
/// First a flush writes the whole vector while nothing a reader can reach
/// points at it; then the link is made (for `replace`: the old link deleted
/// and the new one made, in one step for the metadata cache) and flushed.
/// That last flush writes only the parent's link storage, so it is the one
/// moment a kill can tear anything, and it lasts a few small writes. The
/// old vector is kept open across it, so its storage is not freed (and
/// reused) while the file on disk may still link it.
pub(crate) fn commit_vector(
    parent: &Group,
    group: &Group,
    name: &str,
    replace: bool,
) -> Result<()> {
    let file = parent.file().at("$")?;
    crate::column::complete_file(parent)?;
    raw::flush_file(&file, "$")?;
    let old = if replace {
        check_replaceable(parent, name)?;
        let old = raw::HeldObject::open(parent, name, "$")?;
        parent.unlink(name).at("$")?;
        Some(old)
    } else {
        None
    };
    if let Err(e) = raw::link_object(group, parent, name, "$") {
        if let Some(old) = &old {
            // Put the old vector back; the original error is what matters.
            let _ = old.relink(parent, name, "$");
        }
        return Err(e);
    }
    raw::flush_file(&file, "$")?;
    drop(old);
    Ok(())
}

/// An encoder a session drives: it writes what it buffered.
pub(crate) trait Batches {
    /// Writes every buffered row (one HDF5 call per dataset).
    fn write_buffered(&mut self) -> Result<()>;
}

/// When a new vector is linked under its name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Link {
    /// At its first commit ([`VectorWriter`](crate::VectorWriter)).
    FirstCommit,
    /// When the writer finishes (saves: an error before leaves nothing).
    Finish,
}

/// A vector being written (see the module docs).
pub(crate) struct WriteSession<E: Batches> {
    /// The writer's encoder (dropped first: it closes the datasets).
    pub(crate) enc: E,
    parent: Group,
    group: Group,
    meta: Group,
    name: String,
    /// Set while the vector is a new, anonymous group: whether linking it
    /// replaces an existing `name`.
    link_as_new: Option<bool>,
    /// Set while the vector is a new, anonymous group.
    unlinked: Option<crate::raw::Unlinked>,
    link: Link,
    committed: u64,
    /// Rows given to the encoder since the last commit.
    pending: u64,
    /// Rows given to the encoder since it last wrote.
    buffered: usize,
    /// Rows the encoder writes at a time.
    batch: usize,
    /// Commit every [`COMMIT_BATCHES`] batches; otherwise only at the end.
    commit_often: bool,
    /// An operation failed: the file is flushed before the datasets close
    /// (see the `Drop` impl).
    failed: bool,
    /// Set for a live writer: the file is in SWMR writing mode.
    live: Option<crate::live::LiveLock>,
    /// The leaves' statistics (SPEC.md section 14), written at commits.
    stats: SessionStats,
    /// Metadata reaches the disk only at flushes while the session lives.
    _hold: crate::raw::HoldMetadata,
}

impl<E: Batches> Drop for WriteSession<E> {
    /// After a failed operation, flushes the file (best effort) before the
    /// encoder closes its datasets.
    ///
    /// A dataset whose chunk cache still holds rows HDF5 cannot write (a
    /// damaged chunk index, say) fails to close: HDF5 then frees the
    /// dataset but keeps its id, which keeps the file open after the user
    /// drops it and which a later flush of a file at the same path reaches
    /// (a crash). A flush first makes HDF5 try those writes; a failed chunk
    /// index insertion then leaves the chunk placed, and the close that
    /// follows succeeds. A flush never writes `count`, so the vector stays
    /// as the last commit left it (SPEC.md section 8).
    fn drop(&mut self) {
        if self.failed {
            if let Ok(file) = self.group.file() {
                let _ = crate::raw::flush_file(&file, "$");
            }
        }
    }
}

/// What [`WriteSession::create`] writes into a new vector's `metadata`.
pub(crate) struct NewVector<'a> {
    /// The schema tree.
    pub(crate) schema: &'a Schema,
    /// `metadata/logical_type`.
    pub(crate) logical_type: &'a str,
    /// Rows expected (`u64::MAX`: unknown); sizes chunks and batches.
    pub(crate) len_hint: u64,
    pub(crate) link: Link,
    pub(crate) commit_often: bool,
}

impl<E: Batches> WriteSession<E> {
    /// Starts new vector `name` (which must not exist unless
    /// `opts.replace(true)`): an anonymous group with `data` (whose
    /// encoder `make` creates) and `metadata` (`count` 0).
    pub(crate) fn create(
        parent: &Group,
        name: &str,
        opts: &SaveOptions,
        new: NewVector<'_>,
        make: impl FnOnce(&Group, &WriteCtx) -> Result<E>,
    ) -> Result<Self> {
        crate::file::check_writable(parent, name)?;
        // Refused in live (SWMR) writing mode by check_new_member.
        let exists = check_new_member(parent, name, "vector", Some(opts.get_replace()))?;
        let hold = crate::raw::HoldMetadata::new(parent.file().at("$")?);
        // Anonymous until linked (dropped on error, it goes).
        let group = crate::raw::create_anon_group(parent, "$")?;
        let unlinked = Some(crate::raw::Unlinked::new(group.id()));
        let ctx = WriteCtx {
            opts,
            len_hint: new.len_hint,
        };
        let data = crate::raw::create_group_small(&group, "data", "$")?;
        let leaves = if opts.get_statistics() {
            stats::leaves(&Stored::from(new.schema))
        } else {
            Default::default()
        };
        let (enc, leaves) = stats::collect(leaves, || make(&data, &ctx));
        let enc = enc?;
        let meta = crate::raw::create_group_small(&group, "metadata", "$")?;
        write_metadata(&meta, new.schema, new.logical_type, opts.get_checksum())?;
        write_count(&meta, 0)?;
        Ok(WriteSession {
            enc,
            parent: parent.clone(),
            group,
            meta,
            name: name.to_owned(),
            link_as_new: Some(exists),
            unlinked,
            link: new.link,
            committed: 0,
            pending: 0,
            buffered: 0,
            batch: opts.batch_rows(new.len_hint).max(1),
            commit_often: new.commit_often,
            failed: false,
            live: None,
            stats: SessionStats::new(leaves),
            _hold: hold,
        })
    }

    /// Continues the existing vector `name`: `open` checks the opened
    /// vector (its schema against the writer's type) and makes the encoder,
    /// which grows the datasets from `count` (trimming stale tails), and
    /// whatever else the writer keeps of the vector (returned beside the
    /// session). Chunking and compression stay as the datasets were created.
    pub(crate) fn open_append<X>(
        parent: &Group,
        name: &str,
        opts: &SaveOptions,
        open: impl FnOnce(&Opened, &WriteCtx) -> Result<(E, X)>,
    ) -> Result<(Self, X)> {
        crate::file::check_writable(parent, name)?;
        let hold = crate::raw::HoldMetadata::new(parent.file().at("$")?);
        let v = open_vector(parent, name, Access::Append)?;
        let ctx = WriteCtx {
            opts,
            len_hint: u64::MAX,
        };
        let keep_stats = SessionStats::present(&v.meta);
        let leaves = if keep_stats {
            stats::leaves(&v.schema)
        } else {
            Default::default()
        };
        let (r, leaves) = stats::collect(leaves, || open(&v, &ctx));
        let (enc, kept) = r?;
        let stats = if keep_stats {
            SessionStats::resume(&v.meta, leaves, v.count)?
        } else {
            SessionStats::new(Vec::new())
        };
        let group = open_group(parent, name, "$")?;
        // Checking the schema read its strings, which put the global heap
        // collections holding them back in HDF5's cache: forget them again,
        // so that the appended strings go into new collections. (What is
        // dirty here lies past `count`: extents and stale tails trimmed.)
        crate::raw::forget_heap_collections(&parent.file().at("$")?);
        let session = WriteSession {
            enc,
            parent: parent.clone(),
            group,
            meta: v.meta,
            name: name.to_owned(),
            link_as_new: None,
            unlinked: None,
            link: Link::FirstCommit,
            committed: v.count,
            pending: 0,
            buffered: 0,
            batch: opts.batch_rows(u64::MAX).max(1),
            commit_often: true,
            failed: false,
            live: None,
            stats,
            _hold: hold,
        };
        Ok((session, kept))
    }

    /// Runs `f` on the session; an error marks it failed (see `Drop`).
    pub(crate) fn guard<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        let r = f(self);
        self.failed |= r.is_err();
        r
    }

    /// Marks the session failed (an error of the writer above it).
    #[cfg(feature = "arrow")]
    pub(crate) fn fail(&mut self) {
        self.failed = true;
    }

    /// Rows committed: what `count` holds.
    pub(crate) fn committed(&self) -> u64 {
        self.committed
    }

    /// The row number the next row given to the encoder will have.
    #[cfg(feature = "arrow")]
    pub(crate) fn next_row(&self) -> u64 {
        self.committed + self.pending
    }

    /// Rows the encoder takes before it must write (at least 1).
    pub(crate) fn room(&self) -> usize {
        self.batch - self.buffered
    }

    /// The vector's group (anonymous until linked).
    pub(crate) fn group(&self) -> &Group {
        &self.group
    }

    /// Makes the session a live writer's, holding `lock`. A live writer
    /// writes no statistics: HDF5's SWMR mode does not let readers follow
    /// attribute changes (the tokens). Statistics the vector has go stale
    /// with its first commit (`SOURCE_NROWS` no longer equals `count`);
    /// the next append that is not live rebuilds them (SPEC.md 14.1).
    pub(crate) fn set_live(&mut self, lock: crate::live::LiveLock) {
        self.live = Some(lock);
        self.stats = SessionStats::new(Vec::new());
    }

    /// Counts `n` rows just given to the encoder (at most [`Self::room`]):
    /// a full batch is written, and every [`COMMIT_BATCHES`] batches
    /// committed (when the session commits often).
    pub(crate) fn wrote(&mut self, n: usize) -> Result<()> {
        self.pending += n as u64;
        self.buffered += n;
        if self.buffered >= self.batch {
            self.write_batch()?;
            let every = (self.batch as u64).saturating_mul(COMMIT_BATCHES as u64);
            if self.commit_often && self.pending >= every {
                self.commit()?;
            }
        }
        Ok(())
    }

    /// Writes what the encoder buffered and starts the deferred writes.
    fn write_batch(&mut self) -> Result<()> {
        self.enc.write_buffered()?;
        crate::pipeline::deferred::start_writes();
        self.buffered = 0;
        Ok(())
    }

    /// Commits the rows written so far (see the module docs). A new vector
    /// linked at its first commit is linked now.
    pub(crate) fn commit(&mut self) -> Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        self.commit_as(self.link == Link::FirstCommit)
    }

    /// Commits; `link`: a new vector is linked too (even with no rows).
    fn commit_as(&mut self, link: bool) -> Result<()> {
        if self.pending > 0 && self.buffered > 0 {
            self.write_batch()?;
        }
        let n = self.committed + self.pending;
        let file = self.group.file().at("$")?;
        if link && self.link_as_new.is_some() {
            // Unlinked: `count` goes in first, and the link's own flush
            // (before it links) puts data and `count` on disk together.
            // The batches' jobs first: they note the statistics.
            crate::column::complete_file(&self.group)?;
            self.stats.commit(&self.meta, n)?;
            if self.pending > 0 {
                write_count(&self.meta, n)?;
            }
            self.stats.committed(&self.meta)?;
            self.link_new()?;
        } else if self.pending > 0 {
            crate::column::complete_file(&self.group)?;
            // Statistics with the next generation's tokens: stale until
            // `count` and `GENERATION` say otherwise (SPEC.md section 14).
            // The tokens reach the file before any entry changes (a kill
            // in between leaves new entries under stale tokens, never
            // under the old valid ones).
            self.stats.commit_tokens(&self.meta, n)?;
            if self.stats.has_leaves() {
                crate::raw::flush_file(&file, "$")?;
            }
            self.stats.commit_entries(n)?;
            crate::raw::flush_file(&file, "$")?;
            write_count(&self.meta, n)?;
            self.stats.committed(&self.meta)?;
            crate::raw::flush_file(&file, "$")?;
        } else {
            return Ok(());
        }
        // The next rows' strings must not go into collections holding these.
        crate::raw::forget_heap_collections(&file);
        self.committed = n;
        self.pending = 0;
        Ok(())
    }

    /// Links a new vector as its name (it then has `count` rows).
    pub(crate) fn link_new(&mut self) -> Result<()> {
        if let Some(replace) = self.link_as_new {
            commit_vector(&self.parent, &self.group, &self.name, replace)?;
            self.link_as_new = None;
            self.unlinked = None;
        }
        Ok(())
    }

    /// Commits the remaining rows and links a new vector. Returns the
    /// vector's length.
    pub(crate) fn finish(mut self) -> Result<u64> {
        self.guard(|s| s.commit_as(true))?;
        Ok(self.committed)
    }

    /// `h5vec::mpi`: the rows of a new vector were written into its
    /// datasets by collective writes (not through the encoder, which
    /// holds nothing): `count` = `n`, then the vector is linked as
    /// [`Self::finish`] links it (flushed, linked, flushed).
    #[cfg(feature = "mpi")]
    pub(crate) fn finish_written(mut self, n: u64) -> Result<u64> {
        self.guard(|s| {
            write_count(&s.meta, n)?;
            s.committed = n;
            s.link_new()
        })?;
        Ok(n)
    }

    /// Writes what an append of no rows writes: every dataset cut back to
    /// what `count` covers, the file flushed (SPEC.md section 8, "Repair").
    pub(crate) fn trim_tails(&mut self) -> Result<()> {
        // An empty batch still sets every extent to exactly what count covers.
        self.write_batch()?;
        crate::column::complete_file(&self.group)?;
        crate::raw::flush_file(&self.group.file().at("$")?, "$")
    }

    /// [`Self::trim_tails`], then checks the vector's members: `repair`.
    pub(crate) fn trim(mut self) -> Result<()> {
        self.guard(|s| s.trim_tails())?;
        let g = open_group(&self.parent, &self.name, "$")?;
        expect_members(&g, &["data", "metadata"], &Stored::default(), "$")
    }
}
