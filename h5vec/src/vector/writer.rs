//! [`VectorWriter`]: a vector written in batches with bounded memory, on
//! the write session of `session` (SPEC.md section 8).

use std::path::Path;

use hdf5::Group;

use super::open::open_vector;
use super::session::{Batches, Link, NewVector, WriteSession};
use crate::codec::{open_group, Codec, Encoder, H5Vector};
use crate::error::{Context, Result};
use crate::guard::Access;
use crate::options::SaveOptions;

/// The encoder of `T`, as a session drives it.
pub(crate) struct Typed<T: H5Vector>(pub(crate) <T::Codec as Codec>::Encoder);

impl<T: H5Vector> Batches for Typed<T> {
    fn write_buffered(&mut self) -> Result<()> {
        self.0.flush()
    }
}

/// Writes a vector of any length with bounded memory: values are buffered
/// and written one batch (one chunk length) at a time.
///
/// Every batch is written as soon as it is full; every
/// [`COMMIT_BATCHES`](crate::COMMIT_BATCHES) batches (and on [`flush`](Self::flush) and
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
    pub(super) s: WriteSession<Typed<T>>,
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
        let ctx = crate::options::WriteCtx {
            opts,
            len_hint: u64::MAX,
        };
        let new = NewVector {
            schema: &T::Codec::schema(&ctx),
            logical_type: std::any::type_name::<T>(),
            len_hint: u64::MAX,
            link: Link::FirstCommit,
            commit_often: true,
        };
        let s = WriteSession::create(parent, name, opts, new, |data, ctx| {
            T::Codec::create(data, "$", ctx).map(Typed)
        })?;
        Ok(VectorWriter { s })
    }

    /// Starts a new vector `name` for live readers (SPEC.md section 8, "Live
    /// readers"): creates everything it needs, links it at once (empty,
    /// `count` 0), then switches the file to HDF5's single-writer/multiple-
    /// reader mode. Other processes then read it through
    /// [`crate::open_file_live`] (or h5py with `swmr=True`), each load seeing
    /// the rows of the last commit ([`flush`](Self::flush), and every
    /// [`COMMIT_BATCHES`](crate::COMMIT_BATCHES) batches).
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
        w.s.guard(|s| {
            crate::live::check_live_kinds(&open_group(s.group(), "data", "$")?)?;
            s.link_new()
        })?;
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
        w.s.set_live(lock);
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
            w.s.guard(|s| {
                crate::live::check_live_kinds(&open_group(s.group(), "data", "$")?)?;
                s.trim_tails()
            })?;
        } else {
            let v = open_vector(parent, name, Access::Append)?;
            crate::live::check_live_kinds(&v.data)?;
        }
        Self::start_live(parent, name, opts, &file, lock, &at)
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
        let (s, ()) = WriteSession::open_append(parent, name, opts, |v, ctx| {
            Ok((
                Typed(T::Codec::append(&v.data, &v.schema, "$", v.count, ctx)?),
                (),
            ))
        })?;
        Ok(VectorWriter { s })
    }

    /// Adds one value; writes a batch when one is full, and commits every
    /// [`COMMIT_BATCHES`](crate::COMMIT_BATCHES) batches.
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
        self.s.guard(|s| {
            s.enc.0.push(value)?;
            s.wrote(1)
        })
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
        self.s.committed()
    }

    /// Whether nothing has been committed yet.
    pub fn is_empty(&self) -> bool {
        self.s.committed() == 0
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
        self.s.guard(|s| s.commit())
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
    pub fn finish(self) -> Result<u64> {
        self.s.finish()
    }
}
