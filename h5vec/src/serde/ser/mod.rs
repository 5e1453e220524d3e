//! Values to columns: [`VectorWriter`] serializes rows a few thousand at a
//! time and writes them in batches through an `Encoder`, which takes the
//! direct serializer (`fast/`) where it covers the shape, and else
//! serde_arrow's builders, whose arrays `arrays` moves into the h5vec
//! fields.

mod arrays;
mod fast;

use std::marker::PhantomData;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::Schema as ArrowSchema;
use hdf5::Group;
use serde_arrow::ArrayBuilder;

use super::trace::ser_path;
use super::{Columns, DeserializeOwned, Serialize};
use crate::arrow::write::BatchWriter;
use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::options::SaveOptions;

/// Serializes rows into the h5vec record batches of a vector.
struct Encoder {
    columns: Columns,
    h5: Arc<ArrowSchema>,
    builder: ArrayBuilder,
    /// The direct path, for the shapes it covers (`fast/`).
    fast: Option<fast::Plan>,
}

impl Encoder {
    fn new(columns: Columns, opts: &SaveOptions) -> Result<Self> {
        if columns.fields.is_empty() {
            return Err(Error::mismatch(
                "$",
                "a serde struct with at least one field (the vector's record)",
                "no fields",
            ));
        }
        let h5 = Arc::new(ArrowSchema::new(columns.h5(opts)?));
        let builder = ArrayBuilder::from_arrow(&columns.fields)
            .map_err(|e| Error::encode("$", format!("serde_arrow: {e}")))?;
        let fast = if columns.map_root {
            None
        } else {
            fast::Plan::new(&columns.fields, h5.fields())
        };
        Ok(Encoder {
            columns,
            h5,
            builder,
            fast,
        })
    }

    fn push_all<T: Serialize>(&mut self, items: &[T]) -> Result<()> {
        if let Some(plan) = &mut self.fast {
            return plan
                .push_all(items)
                .map_err(|e| Error::encode(e.path(), format!("serializing: {e}")));
        }
        self.builder
            .extend(items)
            .map_err(|e| Error::encode(ser_path(&e), format!("serializing: {e}")))
    }

    fn batch(&mut self) -> Result<RecordBatch> {
        if let Some(plan) = &mut self.fast {
            let cols = plan.finish()?;
            let rows = cols.first().map_or(0, |a| a.len());
            return RecordBatch::try_new_with_options(
                self.h5.clone(),
                cols,
                &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
            )
            .map_err(|e| Error::encode("$", e.to_string()));
        }
        let arrays = self
            .builder
            .to_arrow()
            .map_err(|e| Error::encode("$", format!("serde_arrow: {e}")))?;
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(arrays.len());
        for ((sf, hf), a) in self
            .columns
            .fields
            .iter()
            .zip(self.h5.fields())
            .zip(&arrays)
        {
            cols.push(arrays::to_h5(sf, hf, a, &child_path("$", hf.name()))?);
        }
        let rows = arrays.first().map_or(0, |a| a.len());
        RecordBatch::try_new_with_options(
            self.h5.clone(),
            cols,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| Error::encode("$", e.to_string()))
    }
}

/// Most rows serialized before they go to the writer's buffers: a few
/// thousand rows of columns stay in the CPU's cache for that copy (the
/// writer still writes and commits at its own batch size).
const ENCODE_ROWS: usize = 4096;

/// Writes a vector of a serde type with bounded memory: rows are
/// serialized a few thousand at a time, written in the batches a typed
/// writer uses for the same options and committed as
/// [`h5vec::VectorWriter`](crate::VectorWriter) commits (SPEC.md section
/// 8); a new vector is linked by [`finish`](Self::finish).
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct P { x: u64 }
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// let mut w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
/// for x in 0..10 {
///     w.push(&P { x })?;
/// }
/// assert_eq!(w.finish()?, 10);
/// assert_eq!(h5vec::load_column::<u64>(&file, "ps", "x")?[9], 9);
/// # Ok(()) }
/// ```
pub struct VectorWriter<T> {
    enc: Encoder,
    inner: BatchWriter,
    buffered: usize,
    batch: usize,
    _t: PhantomData<fn(&T)>,
}

impl<T: Serialize> VectorWriter<T> {
    /// Starts new vector `name`, with the columns traced from `T`.
    ///
    /// ```
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
    /// assert_eq!(w.finish()?, 0);
    /// # Ok(()) }
    /// ```
    pub fn create(group: &Group, name: &str, opts: &SaveOptions) -> Result<Self>
    where
        T: DeserializeOwned,
    {
        Self::create_in(group, name, opts, Columns::of::<T>()?)
    }

    /// Starts new vector `name` with the columns given.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let c = h5vec::serde::SchemaOptions::new().trace_samples(&[P { x: 0 }])?;
    /// let mut w = h5vec::serde::VectorWriter::create_in(&file, "ps", &Default::default(), c)?;
    /// w.push(&P { x: 3 })?;
    /// assert_eq!(w.finish()?, 1);
    /// # Ok(()) }
    /// ```
    pub fn create_in(
        group: &Group,
        name: &str,
        opts: &SaveOptions,
        columns: Columns,
    ) -> Result<Self> {
        Self::create_sized(group, name, opts, columns, u64::MAX, true)
    }

    pub(super) fn create_sized(
        group: &Group,
        name: &str,
        opts: &SaveOptions,
        columns: Columns,
        len_hint: u64,
        commit_often: bool,
    ) -> Result<Self> {
        let enc = Encoder::new(columns, opts)?;
        let root = crate::arrow::write::node::root_node(&enc.h5, opts)?;
        let inner = BatchWriter::create(group, name, opts, root, len_hint, commit_often)?;
        Ok(VectorWriter {
            enc,
            inner,
            buffered: 0,
            batch: opts.batch_rows(len_hint).clamp(1, ENCODE_ROWS),
            _t: PhantomData,
        })
    }

    /// Continues the existing vector `name` (its fields must be those of
    /// the columns).
    ///
    /// ```
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// h5vec::serde::save_vector(&file, "ps", &[P { x: 1 }])?;
    /// let mut w = h5vec::serde::VectorWriter::open_append(&file, "ps", h5vec::serde::Columns::of::<P>()?)?;
    /// w.push(&P { x: 2 })?;
    /// assert_eq!(w.finish()?, 2);
    /// # Ok(()) }
    /// ```
    pub fn open_append(group: &Group, name: &str, columns: Columns) -> Result<Self> {
        let opts = SaveOptions::default();
        let enc = Encoder::new(columns, &opts)?;
        // The stored fields are checked against the columns before a row is written.
        let empty = RecordBatch::new_empty(enc.h5.clone());
        let inner = BatchWriter::open_append(group, name, &opts, Some(&empty))?;
        Ok(VectorWriter {
            enc,
            inner,
            buffered: 0,
            batch: opts.batch_rows(u64::MAX).clamp(1, ENCODE_ROWS),
            _t: PhantomData,
        })
    }

    /// Adds one row.
    ///
    /// ```
    /// # #[derive(serde::Serialize, serde::Deserialize)]
    /// # struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let mut w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
    /// w.push(&P { x: 7 })?;
    /// assert_eq!(w.finish()?, 1);
    /// # Ok(()) }
    /// ```
    pub fn push(&mut self, item: &T) -> Result<()> {
        self.extend(std::slice::from_ref(item))
    }

    /// Adds rows, writing each full batch as it fills.
    ///
    /// ```
    /// # #[derive(serde::Serialize, serde::Deserialize)]
    /// # struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let mut w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
    /// w.extend(&[P { x: 1 }, P { x: 2 }])?;
    /// assert_eq!(w.finish()?, 2);
    /// # Ok(()) }
    /// ```
    pub fn extend(&mut self, items: &[T]) -> Result<()> {
        let mut rest = items;
        while !rest.is_empty() {
            let take = (self.batch - self.buffered).min(rest.len());
            self.enc.push_all(&rest[..take])?;
            self.buffered += take;
            rest = &rest[take..];
            if self.buffered >= self.batch {
                self.write_batch()?;
            }
        }
        Ok(())
    }

    fn write_batch(&mut self) -> Result<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        let b = self.enc.batch()?;
        self.buffered = 0;
        self.inner.write(&b)?;
        drop(b);
        // The batch's arrays are gone: the direct path reuses their buffers.
        if let Some(plan) = &mut self.enc.fast {
            plan.reclaim();
        }
        Ok(())
    }

    /// Writes and commits the remaining rows, links a new vector, and
    /// returns the vector's length.
    ///
    /// ```
    /// # #[derive(serde::Serialize, serde::Deserialize)]
    /// # struct P { x: u8 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let file = h5vec::create_file(dir.path().join("p.h5"))?;
    /// let w = h5vec::serde::VectorWriter::<P>::create(&file, "ps", &Default::default())?;
    /// assert_eq!(w.finish()?, 0);
    /// # Ok(()) }
    /// ```
    pub fn finish(mut self) -> Result<u64> {
        self.write_batch()?;
        self.inner.finish()
    }
}
