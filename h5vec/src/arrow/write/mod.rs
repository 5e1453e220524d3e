//! Writing Arrow record batches as vectors (SPEC.md section 11): the
//! schema node of every column from its `h5vec.schema` metadata or its
//! Arrow type, an encoder tree built from the nodes (`col`), and the save
//! and append protocols of `save_vector_with` and `VectorWriter` (SPEC.md
//! section 8): a new vector is written unlinked and linked when complete,
//! an append commits data, flush, `count`, flush.

pub(crate) mod col;
pub(crate) mod node;
mod typed;

use arrow_array::{RecordBatch, StructArray};
use arrow_schema::{ArrowError, Schema as ArrowSchema};
use hdf5::Group;

use crate::error::{Error, Result};
use crate::options::SaveOptions;
use crate::schema::{Kind, Schema};
use crate::vector::session::{Batches, Link, NewVector, WriteSession};

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
            w.s.fail();
            Error::encode("$", format!("record batch {i} of the stream: {e}"))
        })?;
        if b.schema_ref().as_ref() != schema {
            w.s.fail();
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
    BatchWriter::open_append(group, name, &SaveOptions::default(), None)?
        .s
        .trim()
}

impl Batches for Col {
    fn write_buffered(&mut self) -> Result<()> {
        self.flush()
    }
}

/// A vector being written from record batches: a write session (the
/// protocol of [`VectorWriter`](crate::VectorWriter)) with an encoder tree
/// built from schema nodes.
pub(crate) struct BatchWriter {
    s: WriteSession<Col>,
    /// The vector's root node: where flat unions are (SPEC.md section 11).
    root: Schema,
    /// The root is a record: batch columns are its fields.
    record: bool,
}

impl BatchWriter {
    /// Starts new vector `name` of root node `root`, expected to hold
    /// `len_hint` rows (`u64::MAX`: unknown, as a `VectorWriter`). With
    /// `commit_often` (streams), rows are committed every
    /// [`COMMIT_BATCHES`](crate::COMMIT_BATCHES) batches; the vector is
    /// linked as `name` only by [`finish`](Self::finish).
    pub(crate) fn create(
        parent: &Group,
        name: &str,
        opts: &SaveOptions,
        root: Schema,
        len_hint: u64,
        commit_often: bool,
    ) -> Result<Self> {
        let new = NewVector {
            schema: &root,
            logical_type: &root.logical_type,
            len_hint,
            link: Link::Finish,
            commit_often,
        };
        let s = WriteSession::create(parent, name, opts, new, |data, ctx| {
            Col::create(&root, data, "$", ctx)
        })?;
        Ok(BatchWriter {
            s,
            record: root.kind == Kind::Record,
            root,
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
        let (s, root) = WriteSession::open_append(parent, name, opts, |v, ctx| {
            let root = Schema::from(&v.schema);
            node::check_known(&root, "$")?;
            if let Some(b) = batch {
                let schema = super::flat::unflatten_schema(b.schema_ref(), Some(&root))?;
                node::check_root(&schema, &root)?;
            }
            Ok((Col::append(&v.schema, &v.data, "$", v.count, ctx)?, root))
        })?;
        Ok(BatchWriter {
            s,
            record: root.kind == Kind::Record,
            root,
        })
    }

    /// Writes `batch`, flushing at the same rows a typed writer does.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let (root, record) = (&self.root, self.record);
        self.s.guard(|s| {
            // Enums with data in flat form, back to the unions they store.
            let unflat = super::flat::unflatten_batch(batch, Some(root), s.next_row())?;
            let batch = unflat.as_ref().unwrap_or(batch);
            let n = batch.num_rows();
            let mut off = 0;
            while off < n {
                let len = s.room().min(n - off);
                let part = batch.slice(off, len);
                let at = At {
                    path: "$",
                    base: s.next_row(),
                };
                if record {
                    s.enc.write(&StructArray::from(part), None, &at)?;
                } else if let Some(c) = part.columns().first() {
                    s.enc.write(c.as_ref(), None, &at)?;
                }
                off += len;
                s.wrote(len)?;
            }
            Ok(())
        })
    }

    /// Commits the remaining rows and links a new vector. Returns its length.
    pub(crate) fn finish(self) -> Result<u64> {
        self.s.finish()
    }
}
