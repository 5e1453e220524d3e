//! [`VectorWriter`]: a vector written in batches with bounded memory, on
//! the append protocol of the module (SPEC.md section 8), and [`repair`],
//! which trims what an interrupted append left behind.

use std::marker::PhantomData;
use std::path::Path;

use hdf5::Group;

use crate::codec::{expect_members, open_group, Codec, Encoder, H5Vector};
use crate::containers::check_new_member;
use crate::error::{Context, Result};
use crate::guard::Access;
use crate::options::{SaveOptions, WriteCtx};
use crate::schema::Stored;
use crate::vector::{commit_vector, open_vector, write_count, write_metadata};

/// Writes a vector of any length with bounded memory: values are buffered
/// and written one batch (one chunk length) at a time.
///
/// Every batch is written as soon as it is full; every
/// [`COMMIT_BATCHES`] batches (and on [`flush`](Self::flush) and
/// [`finish`](Self::finish)) the rows are committed: file flushed, then
/// `metadata/count`. A crash loses at most the rows since the last commit.
/// Committing rarely keeps HDF5's own (unjournaled) metadata flushes few. A
/// vector being created is written as an anonymous group, which readers
/// cannot see, and linked as `name` at its first commit (or on
/// [`finish`](Self::finish) if nothing was committed before): dropping the
/// writer before its first commit leaves no trace, dropping it (or a crash)
/// later leaves the rows of the last commit.
///
/// For readers in other processes while it streams, make the file with
/// [`crate::create_file_live`] and the writer with
/// [`create_live`](Self::create_live) (SPEC.md section 8, "Live readers").
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("w.h5"))?;
/// let mut w = h5vec::VectorWriter::<u32>::create(&file, "xs", &Default::default())?;
/// w.extend(&[1, 2, 3])?;
/// w.flush()?; // committed, and linked as `xs`
/// assert_eq!(h5vec::vector_len(&file, "xs")?, 3);
/// w.push(&4)?;
/// assert_eq!(w.finish()?, 4);
/// # Ok(()) }
/// ```
pub struct VectorWriter<T: H5Vector> {
    enc: <T::Codec as Codec>::Encoder,
    parent: Group,
    group: Group,
    meta: Group,
    name: String,
    /// Set while the vector is a new, anonymous group: whether linking it
    /// replaces an existing `name`.
    link_as_new: Option<bool>,
    /// Set while the vector is a new, anonymous group.
    unlinked: Option<crate::raw::Unlinked>,
    committed: u64,
    /// Rows pushed but not committed.
    pending: usize,
    /// Rows pushed but not yet written.
    buffered: usize,
    batch: usize,
    /// An operation failed: the file is flushed before the datasets close
    /// (see the `Drop` impl).
    failed: bool,
    /// Set for a live writer: the file is in SWMR writing mode.
    live: Option<crate::live::LiveLock>,
    /// Metadata reaches the disk only at flushes while the writer lives.
    _hold: crate::raw::HoldMetadata,
    _t: PhantomData<T>,
}

impl<T: H5Vector> Drop for VectorWriter<T> {
    /// After a failed operation, flushes the file (best effort) before the
    /// encoders close their datasets.
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

impl<T: H5Vector> VectorWriter<T> {
    /// Starts a new vector `name` (which must not exist unless `opts.replace(true)`).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file(dir.path().join("w.h5"))?;
    /// let opts = h5vec::SaveOptions::default().chunk_length(10_000).deflate(4);
    /// let mut w = h5vec::VectorWriter::<f64>::create(&file, "xs", &opts)?;
    /// for i in 0..100_000 {
    ///     w.push(&(i as f64))?;
    /// }
    /// assert_eq!(w.finish()?, 100_000);
    /// // The name exists now: a second `create` needs `replace(true)`.
    /// assert!(h5vec::VectorWriter::<f64>::create(&file, "xs", &opts).is_err());
    /// let w = h5vec::VectorWriter::<f64>::create(&file, "xs", &opts.replace(true))?;
    /// assert_eq!(w.finish()?, 0);
    /// # Ok(()) }
    /// ```
    pub fn create(parent: &Group, name: &str, opts: &SaveOptions) -> Result<Self> {
        crate::file::check_writable(parent, name)?;
        // Refused in live (SWMR) writing mode by check_new_member.
        let exists = check_new_member(parent, name, "vector", Some(opts.get_replace()))?;
        let hold = crate::raw::HoldMetadata::new(parent.file().at("$")?);
        // Anonymous until `finish` links it (dropped on error, it goes).
        let group = crate::raw::create_anon_group(parent, "$")?;
        let unlinked = Some(crate::raw::Unlinked::new(group.id()));
        let ctx = WriteCtx {
            opts,
            len_hint: u64::MAX,
        };
        let made = (|| -> Result<_> {
            let data = crate::raw::create_group_small(&group, "data", "$")?;
            let enc = T::Codec::create(&data, "$", &ctx)?;
            let meta = crate::raw::create_group_small(&group, "metadata", "$")?;
            write_metadata(
                &meta,
                &T::Codec::schema(&ctx),
                std::any::type_name::<T>(),
                opts.get_checksum(),
            )?;
            write_count(&meta, 0)?;
            Ok((enc, meta))
        })();
        let (enc, meta) = made?;
        Ok(VectorWriter {
            enc,
            parent: parent.clone(),
            group,
            meta,
            name: name.to_owned(),
            link_as_new: Some(exists),
            unlinked,
            committed: 0,
            pending: 0,
            buffered: 0,
            batch: opts.batch_rows(u64::MAX).max(1),
            failed: false,
            live: None,
            _hold: hold,
            _t: PhantomData,
        })
    }

    /// Starts a new vector `name` for live readers (SPEC.md section 8, "Live
    /// readers"): creates everything it needs, links it at once (empty,
    /// `count` 0), then switches the file to HDF5's single-writer/multiple-
    /// reader mode. Other processes then read it through
    /// [`crate::open_file_live`] (or h5py with `swmr=True`), each load seeing
    /// the rows of the last commit ([`flush`](Self::flush), and every
    /// [`COMMIT_BATCHES`] batches).
    ///
    /// The file must come from [`crate::create_file_live`] (or be opened by
    /// [`crate::open_file_rw`] on such a file). In live mode HDF5 creates no
    /// new objects: other vectors of the file can still be appended to live
    /// ([`open_append_live`](Self::open_append_live)) but not created, and
    /// saves fail, until the file is closed. Fields stored as HDF5
    /// variable-length data (plain `String` and `&str` fields, json, and
    /// what holds them) cannot be written live: an error names the field
    /// (store strings with `#[h5vec(vls)]` or [`SaveOptions::vls_strings`]).
    /// Only one live writer per file: a second one (of any process) is
    /// refused.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file_live(dir.path().join("ticks.h5"))?;
    /// let opts = h5vec::SaveOptions::default().vls_strings(true);
    /// let mut w = h5vec::VectorWriter::<(u64, String)>::create_live(&file, "ticks", &opts)?;
    /// for i in 0..1000u64 {
    ///     w.push(&(i, format!("t{i}")))?;
    /// }
    /// w.flush()?; // readers now see 1000 rows
    /// assert_eq!(w.finish()?, 1000);
    ///
    /// let plain = h5vec::create_file_live(dir.path().join("plain.h5"))?;
    /// let e = h5vec::VectorWriter::<String>::create_live(&plain, "s", &Default::default());
    /// assert!(e.err().unwrap().to_string().contains("variable-length"));
    /// # Ok(()) }
    /// ```
    pub fn create_live(parent: &Group, name: &str, opts: &SaveOptions) -> Result<Self> {
        crate::file::check_writable(parent, name)?;
        let at = crate::containers::container_place(parent, name);
        let file = parent.file().at(&at)?;
        let lock = crate::live::LiveLock::acquire(Path::new(&file.filename()), &at)?;
        let mut w = Self::create(parent, name, opts)?;
        let r = (|| {
            crate::live::check_live_kinds(&open_group(&w.group, "data", "$")?)?;
            w.link_new()
        })();
        w.failed |= r.is_err();
        r?;
        // HDF5 reopens every open object when SWMR starts, and fails on
        // handles held twice (the writer's clone of `parent`): close them.
        drop(w);
        Self::start_live(parent, name, opts, &file, lock, &at)
    }

    /// Switches `file` to SWMR writing and opens `name` to append live.
    fn start_live(
        parent: &Group,
        name: &str,
        opts: &SaveOptions,
        file: &hdf5::File,
        lock: crate::live::LiveLock,
        at: &crate::error::Place,
    ) -> Result<Self> {
        crate::live::start_swmr_write(file, at)?;
        let mut w = Self::open_append(parent, name, opts)?;
        w.live = Some(lock);
        Ok(w)
    }

    /// Continues the existing vector `name` for live readers, as
    /// [`create_live`](Self::create_live) starts a new one: the schema is
    /// checked against `T`, then the file switches to HDF5's
    /// single-writer/multiple-reader mode (if it is not in it yet).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log.h5");
    /// let file = h5vec::create_file_live(&path)?;
    /// h5vec::save_vector(&file, "xs", &[1u32, 2])?;
    /// drop(file);
    /// let file = h5vec::open_file_rw(&path)?;
    /// let mut w = h5vec::VectorWriter::<u32>::open_append_live(&file, "xs", &Default::default())?;
    /// w.push(&3)?;
    /// assert_eq!(w.finish()?, 3);
    /// # Ok(()) }
    /// ```
    pub fn open_append_live(parent: &Group, name: &str, opts: &SaveOptions) -> Result<Self> {
        crate::file::check_writable(parent, name)?;
        let at = crate::containers::container_place(parent, name);
        let file = parent.file().at(&at)?;
        let lock = crate::live::LiveLock::acquire(Path::new(&file.filename()), &at)?;
        if !crate::live::is_live_writer(&file) {
            // Checked, and stale tails trimmed, before SWMR starts.
            let mut w = Self::open_append(parent, name, opts)?;
            let r = (|| {
                crate::live::check_live_kinds(&open_group(&w.group, "data", "$")?)?;
                w.enc.flush()?;
                crate::pipeline::deferred::start_writes();
                crate::column::complete_file(&w.group)?;
                crate::raw::flush_file(&file, "$")
            })();
            w.failed |= r.is_err();
            r?;
        } else {
            let v = open_vector(parent, name, Access::Append)?;
            crate::live::check_live_kinds(&v.data)?;
        }
        Self::start_live(parent, name, opts, &file, lock, &at)
    }

    /// Links a new vector as `name` (it then has `count` rows).
    fn link_new(&mut self) -> Result<()> {
        if let Some(replace) = self.link_as_new {
            commit_vector(&self.parent, &self.group, &self.name, replace)?;
            self.link_as_new = None;
            self.unlinked = None;
        }
        Ok(())
    }

    /// Continues the existing vector `name`, after checking its schema against `T`.
    /// Chunking and compression stay as the datasets were created.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let file = h5vec::create_file(dir.path().join("w.h5"))?;
    /// h5vec::save_vector(&file, "xs", &[1u32, 2])?;
    /// let mut w = h5vec::VectorWriter::<u32>::open_append(&file, "xs", &Default::default())?;
    /// assert_eq!(w.len(), 2);
    /// w.extend(&[3, 4])?;
    /// assert_eq!(w.finish()?, 4);
    /// assert!(h5vec::VectorWriter::<i64>::open_append(&file, "xs", &Default::default()).is_err());
    /// # Ok(()) }
    /// ```
    pub fn open_append(parent: &Group, name: &str, opts: &SaveOptions) -> Result<Self> {
        crate::file::check_writable(parent, name)?;
        let hold = crate::raw::HoldMetadata::new(parent.file().at("$")?);
        let v = open_vector(parent, name, Access::Append)?;
        let ctx = WriteCtx {
            opts,
            len_hint: u64::MAX,
        };
        let enc = T::Codec::append(&v.data, &v.schema, "$", v.count, &ctx)?;
        let group = open_group(parent, name, "$")?;
        // Checking the schema read its strings, which put the global heap
        // collections holding them back in HDF5's cache: forget them again,
        // so that the appended strings go into new collections. (What is
        // dirty here lies past `count`: extents and stale tails trimmed.)
        crate::raw::forget_heap_collections(&parent.file().at("$")?);
        Ok(VectorWriter {
            enc,
            parent: parent.clone(),
            group,
            meta: v.meta,
            name: name.to_owned(),
            link_as_new: None,
            unlinked: None,
            committed: v.count,
            pending: 0,
            buffered: 0,
            batch: opts.batch_rows(u64::MAX).max(1),
            failed: false,
            live: None,
            _hold: hold,
            _t: PhantomData,
        })
    }

    /// Adds one value; writes a batch when one is full, and commits every
    /// [`COMMIT_BATCHES`] batches.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("w.h5"))?;
    /// let mut w = h5vec::VectorWriter::<(u32, bool)>::create(&file, "v", &Default::default())?;
    /// w.push(&(7, true))?;
    /// assert_eq!(w.finish()?, 1);
    /// # Ok(()) }
    /// ```
    pub fn push(&mut self, value: &T) -> Result<()> {
        let r = self.push_inner(value);
        self.failed |= r.is_err();
        r
    }

    fn push_inner(&mut self, value: &T) -> Result<()> {
        self.enc.push(value)?;
        self.pending += 1;
        self.buffered += 1;
        if self.buffered >= self.batch {
            self.enc.flush()?;
            crate::pipeline::deferred::start_writes();
            self.buffered = 0;
            if self.pending >= self.batch.saturating_mul(COMMIT_BATCHES) {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Adds every value of `values` (anything iterating over `&T`).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("w.h5"))?;
    /// let mut w = h5vec::VectorWriter::<String>::create(&file, "names", &Default::default())?;
    /// let names = vec!["ann".to_string(), "bob".to_string()];
    /// w.extend(&names)?;
    /// w.extend(names.iter().rev())?;
    /// assert_eq!(w.finish()?, 4);
    /// # Ok(()) }
    /// ```
    pub fn extend<'a, I>(&mut self, values: I) -> Result<()>
    where
        I: IntoIterator<Item = &'a T>,
        T: 'a,
    {
        for v in values {
            self.push(v)?;
        }
        Ok(())
    }

    /// Rows committed so far: what `metadata/count` holds, and what a
    /// reader of the vector loads (rows pushed since the last commit are not
    /// counted).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("w.h5"))?;
    /// let mut w = h5vec::VectorWriter::<u8>::create(&file, "xs", &Default::default())?;
    /// w.extend(&[1, 2, 3])?;
    /// assert_eq!((w.len(), w.is_empty()), (0, true)); // buffered, not committed
    /// w.flush()?;
    /// assert_eq!((w.len(), w.is_empty()), (3, false));
    /// # w.finish()?;
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> u64 {
        self.committed
    }

    /// Whether nothing has been committed yet.
    pub fn is_empty(&self) -> bool {
        self.committed == 0
    }

    /// Writes and commits the buffered rows: data, flush, `count`, flush.
    /// A new vector is linked under its name at its first commit.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("w.h5"))?;
    /// let mut w = h5vec::VectorWriter::<u64>::create(&file, "ticks", &Default::default())?;
    /// w.extend(&[10, 20])?;
    /// assert!(!h5vec::vector_exists(&file, "ticks")?);
    /// w.flush()?;
    /// let seen: Vec<u64> = h5vec::load_vector(&file, "ticks")?;
    /// assert_eq!(seen, [10, 20]);
    /// # w.finish()?;
    /// # Ok(()) }
    /// ```
    pub fn flush(&mut self) -> Result<()> {
        let r = self.flush_inner();
        self.failed |= r.is_err();
        r
    }

    fn flush_inner(&mut self) -> Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        if self.buffered > 0 {
            self.enc.flush()?;
            crate::pipeline::deferred::start_writes();
            self.buffered = 0;
        }
        crate::column::complete_file(&self.group)?;
        let file = self.group.file().at("$")?;
        crate::raw::flush_file(&file, "$")?;
        let n = self.committed + self.pending as u64;
        write_count(&self.meta, n)?;
        crate::raw::flush_file(&file, "$")?;
        // A new vector becomes visible at its first commit.
        self.link_new()?;
        // The next rows' strings must not go into collections holding these.
        crate::raw::forget_heap_collections(&file);
        self.committed = n;
        self.pending = 0;
        Ok(())
    }

    /// Commits the remaining rows and, for a new vector, links it under its
    /// name. Returns the vector's length.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("w.h5"))?;
    /// let mut w = h5vec::VectorWriter::<i32>::create(&file, "xs", &Default::default())?;
    /// w.push(&-1)?;
    /// assert_eq!(w.finish()?, 1);
    /// assert_eq!(h5vec::load_vector::<i32>(&file, "xs")?, [-1]);
    /// # Ok(()) }
    /// ```
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let r = self.link_new();
        self.failed |= r.is_err();
        r?;
        Ok(self.committed)
    }
}

/// Batches a [`VectorWriter`] writes between two commits.
pub const COMMIT_BATCHES: usize = 16;

/// Trims what an interrupted append left behind: every dataset is cut back
/// to what `count` covers (SPEC.md section 8, "Repair"). Loading never
/// needs this; it reclaims space. The schema is checked against `T` first.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1.5f32, 2.5])?;
/// // After a crash during an append (here: nothing to trim), the vector
/// // holds what its last commit covers.
/// h5vec::repair::<f32>(&file, "xs")?;
/// assert_eq!(h5vec::load_vector::<f32>(&file, "xs")?, [1.5, 2.5]);
/// # Ok(()) }
/// ```
pub fn repair<T: H5Vector>(parent: &Group, name: &str) -> Result<()> {
    let mut w = VectorWriter::<T>::open_append(parent, name, &SaveOptions::default())?;
    let r = (|| {
        // An empty batch still sets every extent to exactly what count covers.
        w.enc.flush()?;
        crate::pipeline::deferred::start_writes();
        crate::column::complete_file(&w.group)?;
        crate::raw::flush_file(&w.group.file().at("$")?, "$")
    })();
    w.failed |= r.is_err();
    r?;
    let g = open_group(parent, name, "$")?;
    expect_members(&g, &["data", "metadata"], &Stored::default(), "$")
}
