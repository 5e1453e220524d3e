//! Writing Arrow record batches as vectors (SPEC.md section 11): the
//! schema node of every column from its `h5vec.schema` metadata or its
//! Arrow type, an encoder tree built from the nodes (`col`), and the save
//! and append protocols of `save_vector_with` and `VectorWriter` (SPEC.md
//! section 8): a new vector is written unlinked and linked when complete,
//! an append commits data, flush, `count`, flush.

mod col;
pub(crate) mod node;
mod typed;
mod union;

use arrow_array::{RecordBatch, StructArray};
use arrow_schema::{ArrowError, Schema as ArrowSchema};
use hdf5::Group;

use crate::codec::{expect_members, open_group};
use crate::containers::check_new_member;
use crate::error::{Context, Error, Result};
use crate::guard::Access;
use crate::options::{SaveOptions, WriteCtx};
use crate::schema::{Kind, Schema, Stored};
use crate::vector::{commit_vector, open_vector, write_count, write_metadata};

use col::{At, Col};

/// Saves `batch` as a new vector `name` in `group`: the same datasets,
/// types, attributes and schema tree a typed save of the Rust type the
/// batch describes writes with `opts` (SPEC.md section 11), so that
/// `load_vector::<T>` reads it.
///
/// Each column's schema node comes from its `h5vec.schema` metadata (what
/// [`read_vector`](crate::arrow::read_vector) puts there), checked against
/// the column's Arrow type, or else from its Arrow type by SPEC.md section
/// 11's table (a nullable field is an `Option`; strings follow
/// [`SaveOptions::vls_strings`]). The batch's columns are the fields of a
/// record, unless the batch's `h5vec.schema` says the vector is of another
/// kind (one column). As [`save_vector_with`](crate::save_vector_with), the
/// vector is written unlinked and linked as `name` when complete;
/// `opts.replace` replaces an existing vector.
///
/// ```
/// use std::sync::Arc;
/// use h5vec::arrow::arrow_array::{Int32Array, RecordBatch, StringArray};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let file = h5vec::create_file(dir.path().join("a.h5"))?;
/// let batch = RecordBatch::try_from_iter([
///     ("id", Arc::new(Int32Array::from(vec![1, 2])) as _),
///     ("name", Arc::new(StringArray::from(vec![Some("a"), None])) as _),
/// ])?;
/// h5vec::arrow::save_record_batch(&file, "v", &batch, &Default::default())?;
///
/// // `try_from_iter` makes a column nullable when it holds a null.
/// #[derive(h5vec::H5Vector, Debug, PartialEq)]
/// struct Row { id: i32, name: Option<String> }
/// let rows: Vec<Row> = h5vec::load_vector(&file, "v")?;
/// assert_eq!(rows[1], Row { id: 2, name: None });
/// # Ok(()) }
/// ```
pub fn save_record_batch(
    group: &Group,
    name: &str,
    batch: &RecordBatch,
    opts: &SaveOptions,
) -> Result<()> {
    let schema = super::flat::unflatten_schema(batch.schema_ref(), None)?;
    let root = node::root_node(&schema, opts)?;
    let rows = batch.num_rows() as u64;
    let mut w = BatchWriter::create(group, name, opts, root, rows, false)?;
    w.write(batch)?;
    w.finish().map(drop)
}

/// Saves a stream of record batches of `schema` as a new vector `name`,
/// with bounded memory: each batch is written as it comes (as
/// [`VectorWriter`](crate::VectorWriter) writes, committing every
/// [`COMMIT_BATCHES`](crate::COMMIT_BATCHES) write batches), and the vector
/// is linked as `name` once the stream ends. Returns the rows written.
///
/// The schema nodes come from `schema` as for [`save_record_batch`]; a
/// batch whose schema differs from `schema`, or an error from the stream,
/// ends the save with an error, and nothing is linked.
///
/// ```
/// use std::sync::Arc;
/// use h5vec::arrow::arrow_array::{Float64Array, RecordBatch};
/// use h5vec::arrow::arrow_schema::{DataType, Field, Schema};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let file = h5vec::create_file(dir.path().join("b.h5"))?;
/// let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
/// let batches = (0..3).map(|i| {
///     RecordBatch::try_new(schema.clone(), vec![Arc::new(Float64Array::from(vec![f64::from(i); 4]))])
/// });
/// let n = h5vec::arrow::save_batches(&file, "xs", &schema, batches, &Default::default())?;
/// assert_eq!(n, 12);
/// # Ok(()) }
/// ```
pub fn save_batches<I>(
    group: &Group,
    name: &str,
    schema: &ArrowSchema,
    batches: I,
    opts: &SaveOptions,
) -> Result<u64>
where
    I: IntoIterator<Item = std::result::Result<RecordBatch, ArrowError>>,
{
    let unflat = super::flat::unflatten_schema(&std::sync::Arc::new(schema.clone()), None)?;
    let root = node::root_node(&unflat, opts)?;
    let mut w = BatchWriter::create(group, name, opts, root, u64::MAX, true)?;
    for (i, b) in batches.into_iter().enumerate() {
        let b = b.map_err(|e| {
            w.failed = true;
            Error::encode("$", format!("record batch {i} of the stream: {e}"))
        })?;
        if b.schema_ref().as_ref() != schema {
            w.failed = true;
            return Err(Error::mismatch(
                "$",
                format!("record batch {i} of the schema given to save_batches"),
                format!("a batch of schema {}", b.schema_ref()),
            ));
        }
        w.write(&b)?;
    }
    w.finish()
}

/// Appends `batch` to the existing vector `name` of `group`: the schema
/// node is the vector's own (from the file), and the batch's columns must
/// be what [`read_vector`](crate::arrow::read_vector) gives for it (types
/// and nullability; metadata is not compared). As
/// [`append_vector`](crate::append_vector): a mismatch writes nothing, and
/// the rows are committed (data, flush, `count`, flush) at the end
/// (SPEC.md section 8).
///
/// ```
/// use std::sync::Arc;
/// use h5vec::arrow::arrow_array::{RecordBatch, UInt16Array};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let file = h5vec::create_file(dir.path().join("c.h5"))?;
/// h5vec::save_vector(&file, "v", &[1u16, 2])?;
/// let batch = RecordBatch::try_from_iter([("value", Arc::new(UInt16Array::from(vec![3])) as _)])?;
/// h5vec::arrow::append_record_batch(&file, "v", &batch)?;
/// assert_eq!(h5vec::load_vector::<u16>(&file, "v")?, [1, 2, 3]);
/// # Ok(()) }
/// ```
pub fn append_record_batch(group: &Group, name: &str, batch: &RecordBatch) -> Result<()> {
    let mut w = BatchWriter::open_append(group, name, &SaveOptions::default(), Some(batch))?;
    w.write(batch)?;
    w.finish().map(drop)
}

/// Trims what an interrupted append left behind in vector `name`, whatever
/// its element type: every dataset is cut back to what `count` covers, as
/// [`h5vec::repair`](crate::repair) does for a known type (an empty append;
/// SPEC.md section 8, "Repair").
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("d.h5"))?;
/// h5vec::save_vector(&file, "v", &[1.5f32, 2.5])?;
/// h5vec::arrow::repair(&file, "v")?;
/// assert_eq!(h5vec::load_vector::<f32>(&file, "v")?, [1.5, 2.5]);
/// # Ok(()) }
/// ```
pub fn repair(group: &Group, name: &str) -> Result<()> {
    let mut w = BatchWriter::open_append(group, name, &SaveOptions::default(), None)?;
    let r = (|| {
        // An empty batch still sets every extent to exactly what count covers.
        w.enc.flush()?;
        crate::pipeline::deferred::start_writes();
        crate::column::complete_file(&w.group)?;
        crate::raw::flush_file(&w.group.file().at("$")?, "$")
    })();
    w.failed |= r.is_err();
    r?;
    let g = open_group(group, name, "$")?;
    expect_members(&g, &["data", "metadata"], &Stored::default(), "$")
}

/// A vector being written from record batches: the protocol of
/// [`VectorWriter`](crate::VectorWriter) with an encoder tree built from
/// schema nodes.
pub(crate) struct BatchWriter {
    enc: Col,
    /// The vector's root node: where flat unions are (SPEC.md section 11).
    root: Schema,
    /// The root is a record: batch columns are its fields.
    record: bool,
    parent: Group,
    group: Group,
    meta: Group,
    name: String,
    /// Set while the vector is a new, anonymous group: whether linking it
    /// replaces an existing `name`.
    link_as_new: Option<bool>,
    /// Set while the vector is a new, anonymous group.
    _unlinked: Option<crate::raw::Unlinked>,
    committed: u64,
    /// Rows written but not committed.
    pending: u64,
    /// Rows buffered but not yet flushed.
    buffered: usize,
    batch: usize,
    /// Commit every [`COMMIT_BATCHES`](crate::COMMIT_BATCHES) batches
    /// (streams); otherwise once, at the end.
    commit_often: bool,
    failed: bool,
    _hold: crate::raw::HoldMetadata,
}

impl Drop for BatchWriter {
    /// After a failed operation, flushes the file (best effort) before the
    /// encoders close their datasets, as `VectorWriter` does.
    fn drop(&mut self) {
        if self.failed {
            if let Ok(file) = self.group.file() {
                let _ = crate::raw::flush_file(&file, "$");
            }
        }
    }
}

impl BatchWriter {
    /// Starts new vector `name` of root node `root`, expected to hold
    /// `len_hint` rows (`u64::MAX`: unknown, as a `VectorWriter`).
    pub(crate) fn create(
        parent: &Group,
        name: &str,
        opts: &SaveOptions,
        root: Schema,
        len_hint: u64,
        commit_often: bool,
    ) -> Result<Self> {
        crate::file::check_writable(parent, name)?;
        let exists = check_new_member(parent, name, "vector", Some(opts.get_replace()))?;
        let hold = crate::raw::HoldMetadata::new(parent.file().at("$")?);
        // Anonymous until `finish` links it (dropped on error, it goes).
        let group = crate::raw::create_anon_group(parent, "$")?;
        let unlinked = Some(crate::raw::Unlinked::new(group.id()));
        let ctx = WriteCtx { opts, len_hint };
        let data = crate::raw::create_group_small(&group, "data", "$")?;
        let enc = Col::create(&root, &data, "$", &ctx)?;
        let meta = crate::raw::create_group_small(&group, "metadata", "$")?;
        write_metadata(&meta, &root, &root.logical_type, opts.get_checksum())?;
        write_count(&meta, 0)?;
        Ok(BatchWriter {
            enc,
            record: root.kind == Kind::Record,
            root,
            parent: parent.clone(),
            group,
            meta,
            name: name.to_owned(),
            link_as_new: Some(exists),
            _unlinked: unlinked,
            committed: 0,
            pending: 0,
            buffered: 0,
            batch: opts.batch_rows(len_hint).max(1),
            commit_often,
            failed: false,
            _hold: hold,
        })
    }

    /// Continues vector `name`; `batch`, if given, is checked against its
    /// schema first.
    pub(crate) fn open_append(
        parent: &Group,
        name: &str,
        opts: &SaveOptions,
        batch: Option<&RecordBatch>,
    ) -> Result<Self> {
        crate::file::check_writable(parent, name)?;
        let hold = crate::raw::HoldMetadata::new(parent.file().at("$")?);
        let v = open_vector(parent, name, Access::Append)?;
        let root = Schema::from(&v.schema);
        node::check_known(&root, "$")?;
        if let Some(b) = batch {
            let schema = super::flat::unflatten_schema(b.schema_ref(), Some(&root))?;
            node::check_root(&schema, &root)?;
        }
        let ctx = WriteCtx {
            opts,
            len_hint: u64::MAX,
        };
        let enc = Col::append(&v.schema, &v.data, "$", v.count, &ctx)?;
        let group = open_group(parent, name, "$")?;
        // As `VectorWriter::open_append`: the appended strings go into new
        // global heap collections, not those the checks read.
        crate::raw::forget_heap_collections(&parent.file().at("$")?);
        Ok(BatchWriter {
            enc,
            record: root.kind == Kind::Record,
            root,
            parent: parent.clone(),
            group,
            meta: v.meta,
            name: name.to_owned(),
            link_as_new: None,
            _unlinked: None,
            committed: v.count,
            pending: 0,
            buffered: 0,
            batch: opts.batch_rows(u64::MAX).max(1),
            commit_often: true,
            failed: false,
            _hold: hold,
        })
    }

    /// Writes `batch`, flushing at the same rows a typed writer does.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let r = self.write_inner(batch);
        self.failed |= r.is_err();
        r
    }

    fn write_inner(&mut self, batch: &RecordBatch) -> Result<()> {
        // Enums with data in flat form, back to the unions they store.
        let unflat =
            super::flat::unflatten_batch(batch, Some(&self.root), self.committed + self.pending)?;
        let batch = unflat.as_ref().unwrap_or(batch);
        let n = batch.num_rows();
        let mut off = 0;
        while off < n {
            let len = (self.batch - self.buffered).min(n - off);
            let part = batch.slice(off, len);
            let at = At {
                path: "$",
                base: self.committed + self.pending,
            };
            if self.record {
                let s = StructArray::from(part);
                self.enc.write(&s, None, &at)?;
            } else if let Some(c) = part.columns().first() {
                self.enc.write(c.as_ref(), None, &at)?;
            }
            off += len;
            self.pending += len as u64;
            self.buffered += len;
            if self.buffered >= self.batch {
                self.enc.flush()?;
                crate::pipeline::deferred::start_writes();
                self.buffered = 0;
                let every = (self.batch as u64).saturating_mul(crate::COMMIT_BATCHES as u64);
                if self.commit_often && self.pending >= every {
                    self.commit()?;
                }
            }
        }
        Ok(())
    }

    /// Writes and commits the buffered rows: data, flush, `count`, flush.
    fn commit(&mut self) -> Result<()> {
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
        let n = self.committed + self.pending;
        write_count(&self.meta, n)?;
        crate::raw::flush_file(&file, "$")?;
        crate::raw::forget_heap_collections(&file);
        self.committed = n;
        self.pending = 0;
        Ok(())
    }

    /// Commits the remaining rows and links a new vector. Returns its length.
    pub(crate) fn finish(mut self) -> Result<u64> {
        let r = self.commit();
        self.failed |= r.is_err();
        r?;
        if let Some(replace) = self.link_as_new.take() {
            let r = commit_vector(&self.parent, &self.group, &self.name, replace);
            self.failed |= r.is_err();
            r?;
            self._unlinked = None;
        }
        Ok(self.committed)
    }
}
