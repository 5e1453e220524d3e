//! Appends, partial reads, column reads and streaming.
//!
//! The append protocol (also what a reader must trust):
//! 1. every data dataset is grown and written, values before offsets/stops,
//!    children in field order, masks after the values they cover;
//! 2. the file is flushed;
//! 3. `metadata/count` is rewritten, and the file flushed again.
//!
//! Readers read `count` rows and never trust dataset extents, so a crash
//! before step 3 leaves the old vector intact; the next append (or
//! [`repair`]) trims the unused tails.

use std::marker::PhantomData;
use std::ops::Range;
use std::path::Path;

use hdf5::Group;

use crate::codec::{expect_members, open_group, Codec, Encoder, H5Vector};
use crate::error::{Context, Error, Result};
use crate::evolution::LoadOptions;
use crate::guard::Access;
use crate::options::{SaveOptions, WriteCtx};
use crate::schema::{Kind, Stored};
use crate::vector::{
    check_new_member, commit_vector, open_vector, read_rows, write_count, write_metadata,
};

/// The number of elements of vector `name`: its `metadata/count`, after the
/// checks every read makes of the metadata (the schema tree, a checksummed
/// schema, and the count against the root's stored rows: a count larger
/// than the rows stored is an error, SPEC.md 6.4). No value is read.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u16, 2, 3])?;
/// assert_eq!(h5vec::vector_len(&file, "xs")?, 3);
/// # Ok(()) }
/// ```
pub fn vector_len(parent: &Group, name: &str) -> Result<u64> {
    // The whole metadata check (schema tree, a checksummed schema, the
    // count against the stored rows): a length the loads would refuse is
    // an error here too.
    Ok(open_vector(parent, name, Access::Read)?.count)
}

/// Appends `values` to the existing vector `name`, whose element type must
/// be `T` (checked against the stored schema first; a mismatch writes nothing).
///
/// ```
/// use h5vec::H5Vector;
///
/// #[derive(H5Vector, Clone, Debug, PartialEq)]
/// struct Order { id: u64, symbol: String, qty: i32 }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("orders.h5"))?;
/// let first = vec![Order { id: 1, symbol: "ABC".into(), qty: 10 }];
/// let more = vec![Order { id: 2, symbol: "XYZ".into(), qty: -5 }];
/// h5vec::save_vector(&file, "orders", &first)?;
/// h5vec::append_vector(&file, "orders", &more)?;
/// let all: Vec<Order> = h5vec::load_vector(&file, "orders")?;
/// assert_eq!(all, [first, more].concat());
/// // Another element type is refused before anything is written.
/// assert!(h5vec::append_vector(&file, "orders", &[1u8]).is_err());
/// assert_eq!(h5vec::vector_len(&file, "orders")?, 2);
/// # Ok(()) }
/// ```
pub fn append_vector<T: H5Vector>(parent: &Group, name: &str, values: &[T]) -> Result<()> {
    append_vector_with(parent, name, values, &SaveOptions::default())
}

/// [`append_vector`] with options (dedup of VLS strings; chunking and
/// compression stay as the datasets were created).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("tags.h5"))?;
/// let opts = h5vec::SaveOptions::default().vls_strings(true).dedup_strings(true);
/// h5vec::save_vector_with(&file, "tags", &["red".to_string()], &opts)?;
/// let more = vec!["red".to_string(); 1000];
/// h5vec::append_vector_with(&file, "tags", &more, &opts)?;
/// assert_eq!(h5vec::vector_len(&file, "tags")?, 1001);
/// # Ok(()) }
/// ```
pub fn append_vector_with<T: H5Vector>(
    parent: &Group,
    name: &str,
    values: &[T],
    opts: &SaveOptions,
) -> Result<()> {
    let mut w = VectorWriter::<T>::open_append(parent, name, opts)?;
    w.extend(values)?;
    w.finish().map(drop)
}

/// Loads rows `range` of vector `name`, reading only what those rows need.
/// A range past `count` is an error.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &(0..10u32).collect::<Vec<_>>())?;
/// let some: Vec<u32> = h5vec::load_range(&file, "xs", 2..5)?;
/// assert_eq!(some, [2, 3, 4]);
/// assert!(h5vec::load_range::<u32>(&file, "xs", 8..12).is_err());
/// # Ok(()) }
/// ```
pub fn load_range<T: H5Vector>(parent: &Group, name: &str, range: Range<u64>) -> Result<Vec<T>> {
    load_range_with(parent, name, range, &LoadOptions::default())
}

/// Loads the whole vector `name` as `Vec<T>` where `T` may differ from the
/// type that wrote it as `opts` allows (SPEC.md section 12): extra stored
/// fields skipped, numbers widened. Fields are always matched by name, then
/// by `#[h5vec(alias = "...")]`, and take their `#[h5vec(default)]` when the
/// file lacks them; with `LoadOptions::default()` this is [`load_vector`](crate::load_vector).
///
/// ```
/// use h5vec::{H5Vector, LoadOptions};
///
/// #[derive(H5Vector)]
/// struct V1 { id: u32, cost: f32 }
///
/// fn no_coupon() -> String { "none".into() }
///
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct V2 {
///     #[h5vec(alias = "cost")]
///     price: f64,
///     id: u32,
///     #[h5vec(default = "no_coupon")]
///     coupon: String,
/// }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("o.h5"))?;
/// h5vec::save_vector(&file, "orders", &[V1 { id: 1, cost: 0.5 }])?;
/// let opts = LoadOptions::default().widen_numbers(true);
/// let back: Vec<V2> = h5vec::load_vector_with(&file, "orders", &opts)?;
/// assert_eq!(back, [V2 { price: 0.5, id: 1, coupon: "none".into() }]);
/// # Ok(()) }
/// ```
pub fn load_vector_with<T: H5Vector>(
    parent: &Group,
    name: &str,
    opts: &LoadOptions,
) -> Result<Vec<T>> {
    let mut v = open_vector(parent, name, Access::Read)?;
    v.schema.set_load(opts.flags());
    let mut dec = T::Codec::open(&v.data, &v.schema, "$", v.count)?;
    read_rows(&mut dec, 0..v.count)
}

/// [`load_range`] with [`LoadOptions`], as [`load_vector_with`] reads:
/// only the rows `range` of the columns `T` takes are read.
///
/// ```
/// # use h5vec::{H5Vector, LoadOptions};
/// #[derive(H5Vector)]
/// struct Wide { a: u16, b: String }
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct Narrow { a: u32 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let file = h5vec::create_file(dir.path().join("o.h5"))?;
/// let rows: Vec<Wide> = (0..5).map(|a| Wide { a, b: a.to_string() }).collect();
/// h5vec::save_vector(&file, "v", &rows)?;
/// let opts = LoadOptions::default().ignore_extra_fields(true).widen_numbers(true);
/// let back: Vec<Narrow> = h5vec::load_range_with(&file, "v", 1..3, &opts)?;
/// assert_eq!(back, [Narrow { a: 1 }, Narrow { a: 2 }]);
/// # Ok(()) }
/// ```
pub fn load_range_with<T: H5Vector>(
    parent: &Group,
    name: &str,
    range: Range<u64>,
    opts: &LoadOptions,
) -> Result<Vec<T>> {
    let mut v = open_vector(parent, name, Access::Read)?;
    check_range(&range, v.count)?;
    v.schema.set_load(opts.flags());
    let mut dec = T::Codec::open(&v.data, &v.schema, "$", v.count)?;
    read_rows(&mut dec, range)
}

/// Refuses a row range that is not within `count` rows.
pub(crate) fn check_range(range: &Range<u64>, count: u64) -> Result<()> {
    if range.start > range.end || range.end > count {
        return Err(Error::invalid(
            "$",
            format!(
                "row range {}..{} is outside the vector's {count} rows",
                range.start, range.end
            ),
        ));
    }
    Ok(())
}

/// Loads one field of a record vector, by dotted path (`"timestamp.weeks"`),
/// as its own `Vec<F>`, without reading the other fields.
///
/// `F` is the field's own type; a field stored with `#[h5vec(json)]` or
/// `#[h5vec(blob)]` loads as [`Json<F>`](crate::Json) or
/// [`Blob<F>`](crate::Blob).
///
/// ```
/// use h5vec::H5Vector;
///
/// #[derive(H5Vector)]
/// struct Point { x: f64, y: f64 }
///
/// #[derive(H5Vector)]
/// struct Sample { at: Point, label: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("s.h5"))?;
/// let rows = vec![
///     Sample { at: Point { x: 1.0, y: 2.0 }, label: "a".into() },
///     Sample { at: Point { x: 3.0, y: 4.0 }, label: "b".into() },
/// ];
/// h5vec::save_vector(&file, "samples", &rows)?;
/// let xs: Vec<f64> = h5vec::load_column(&file, "samples", "at.x")?;
/// assert_eq!(xs, [1.0, 3.0]);
/// let labels: Vec<String> = h5vec::load_column(&file, "samples", "label")?;
/// assert_eq!(labels, ["a", "b"]);
/// let err = h5vec::load_column::<f64>(&file, "samples", "at.z").unwrap_err();
/// assert_eq!(err.path(), "$.at");
/// # Ok(()) }
/// ```
pub fn load_column<F: H5Vector>(parent: &Group, name: &str, field: &str) -> Result<Vec<F>> {
    let v = open_vector(parent, name, Access::Read)?;
    let (group, node, path) = find_field(&v.data, &v.schema, field)?;
    let mut dec = F::Codec::open(&group, &node, &path, v.count)?;
    read_rows(&mut dec, 0..v.count)
}

/// Walks `field` (dotted) through record schema nodes and data groups.
fn find_field(data: &Group, schema: &Stored, field: &str) -> Result<(Group, Stored, String)> {
    let mut group = data.clone();
    let mut node = schema.clone();
    let mut path = String::from("$");
    if field.is_empty() {
        return Ok((group, node, path));
    }
    for seg in field.split('.') {
        let names = match (&node.kind, &node.field_names) {
            (Kind::Record, Some(n)) => n.clone(),
            _ => {
                return Err(Error::mismatch(
                    &path,
                    format!("a record with a field `{seg}`"),
                    format!("a `{}` node", node.kind),
                ))
            }
        };
        let i = names.iter().position(|n| n == seg).ok_or_else(|| {
            Error::mismatch(
                &path,
                format!("a field `{seg}`"),
                format!("fields {names:?}"),
            )
        })?;
        path = format!("{path}.{seg}");
        group = open_group(&group, seg, &path)?;
        node = node.child(i, &path)?.clone();
    }
    Ok((group, node, path))
}

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
        let at = crate::vector::container_place(parent, name);
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
        let at = crate::vector::container_place(parent, name);
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

/// Reads a vector in batches of rows with bounded memory.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let file = h5vec::create_file(dir.path().join("r.h5"))?;
/// h5vec::save_vector(&file, "xs", &(0..10u32).collect::<Vec<_>>())?;
/// let mut total = 0;
/// for batch in h5vec::VectorReader::<u32>::open(&file, "xs", 4)? {
///     total += batch?.len();
/// }
/// assert_eq!(total, 10);
/// # Ok(()) }
/// ```
pub struct VectorReader<T: H5Vector> {
    dec: <T::Codec as Codec>::Decoder,
    next: u64,
    end: u64,
    batch: u64,
    failed: bool,
}

impl<T: H5Vector> VectorReader<T> {
    /// Opens vector `name` for reading `batch_rows` rows at a time; the
    /// reader is an iterator of `Result<Vec<T>>` batches (the last one may
    /// be shorter). The schema is checked against `T` here, before any row
    /// is read; after an error the iterator ends.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("r.h5"))?;
    /// h5vec::save_vector(&file, "xs", &(0..10u32).collect::<Vec<_>>())?;
    /// let batches = h5vec::VectorReader::<u32>::open(&file, "xs", 4)?
    ///     .collect::<h5vec::Result<Vec<_>>>()?;
    /// assert_eq!(batches, [vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9]]);
    /// assert!(h5vec::VectorReader::<String>::open(&file, "xs", 4).is_err());
    /// # Ok(()) }
    /// ```
    pub fn open(parent: &Group, name: &str, batch_rows: usize) -> Result<Self> {
        Self::open_range(parent, name, 0..u64::MAX, batch_rows)
    }

    /// Like [`open`](Self::open) over rows `range` only (`..u64::MAX` means to the end).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("r.h5"))?;
    /// h5vec::save_vector(&file, "xs", &(0..10u32).collect::<Vec<_>>())?;
    /// let tail: Vec<u32> = h5vec::VectorReader::open_range(&file, "xs", 7..u64::MAX, 100)?
    ///     .next()
    ///     .unwrap()?;
    /// assert_eq!(tail, [7, 8, 9]);
    /// # Ok(()) }
    /// ```
    pub fn open_range(
        parent: &Group,
        name: &str,
        range: Range<u64>,
        batch_rows: usize,
    ) -> Result<Self> {
        Self::open_range_with(parent, name, range, batch_rows, &LoadOptions::default())
    }

    /// Like [`open`](Self::open), reading `T` from a vector another type
    /// wrote as `opts` allows (see [`load_vector_with`]).
    ///
    /// ```
    /// # use h5vec::{H5Vector, LoadOptions};
    /// #[derive(H5Vector)]
    /// struct Wide { a: f32, b: Vec<u8> }
    /// #[derive(H5Vector)]
    /// struct Narrow { a: f64 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("r.h5"))?;
    /// let rows: Vec<Wide> = (0..10).map(|i| Wide { a: i as f32, b: vec![] }).collect();
    /// h5vec::save_vector(&file, "v", &rows)?;
    /// let opts = LoadOptions::default().ignore_extra_fields(true).widen_numbers(true);
    /// let mut sum = 0.0;
    /// for batch in h5vec::VectorReader::<Narrow>::open_with(&file, "v", 4, &opts)? {
    ///     sum += batch?.iter().map(|n| n.a).sum::<f64>();
    /// }
    /// assert_eq!(sum, 45.0);
    /// # Ok(()) }
    /// ```
    pub fn open_with(
        parent: &Group,
        name: &str,
        batch_rows: usize,
        opts: &LoadOptions,
    ) -> Result<Self> {
        Self::open_range_with(parent, name, 0..u64::MAX, batch_rows, opts)
    }

    /// [`open_range`](Self::open_range) with [`LoadOptions`] (see [`open_with`](Self::open_with)).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("r.h5"))?;
    /// h5vec::save_vector(&file, "v", &[1u8, 2, 3, 4])?;
    /// let opts = h5vec::LoadOptions::default().widen_numbers(true);
    /// let mut r = h5vec::VectorReader::<f64>::open_range_with(&file, "v", 1..3, 8, &opts)?;
    /// assert_eq!(r.next().transpose()?, Some(vec![2.0, 3.0]));
    /// # Ok(()) }
    /// ```
    pub fn open_range_with(
        parent: &Group,
        name: &str,
        range: Range<u64>,
        batch_rows: usize,
        opts: &LoadOptions,
    ) -> Result<Self> {
        let mut v = open_vector(parent, name, Access::Read)?;
        let end = if range.end == u64::MAX {
            v.count
        } else {
            range.end
        };
        check_range(&(range.start..end), v.count)?;
        v.schema.set_load(opts.flags());
        let dec = T::Codec::open(&v.data, &v.schema, "$", v.count)?;
        Ok(VectorReader {
            dec,
            next: range.start,
            end,
            batch: batch_rows.max(1) as u64,
            failed: false,
        })
    }

    /// Rows left to read.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("r.h5"))?;
    /// h5vec::save_vector(&file, "xs", &[0u8; 10])?;
    /// let mut r = h5vec::VectorReader::<u8>::open(&file, "xs", 4)?;
    /// assert_eq!(r.remaining(), 10);
    /// r.next().transpose()?;
    /// assert_eq!(r.remaining(), 6);
    /// # Ok(()) }
    /// ```
    pub fn remaining(&self) -> u64 {
        self.end - self.next
    }
}

impl<T: H5Vector> Iterator for VectorReader<T> {
    type Item = Result<Vec<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.next >= self.end {
            return None;
        }
        let stop = self.end.min(self.next.saturating_add(self.batch));
        let r = read_rows(&mut self.dec, self.next..stop);
        self.next = stop;
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

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
