//! A [`Dataset`] read into Arrow record batches without its Rust type
//! (feature `arrow`; SPEC.md section 11): [`DatasetBatches`], one file open
//! at a time, every batch of the first file's Arrow schema.

use std::ops::Range;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use hdf5::File;

use crate::arrow::Batches;
use crate::error::{Error, Place, Result};

use super::files::parent_of;
use super::set::{check_span, Dataset};

/// The record batches of a [`Dataset`], file after file, made by
/// [`Dataset::arrow_batches`]: batches of at most `batch_rows` rows that
/// never span two files (a file's last batch may be shorter; a file
/// without rows gives none), each of the same schema, the first file's
/// ([`schema`](Self::schema)). Only the file being read is open. After an
/// error the iterator ends.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
/// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[1.0f64, 2.0, 3.0])?;
/// h5vec::save_vector(&*h5vec::create_file(&b)?, "xs", &[4.0f64])?;
/// let ds = h5vec::Dataset::open_files(&[&a, &b], "xs")?;
/// let batches = ds.arrow_batches(2)?;
/// assert_eq!(batches.schema().field(0).name(), "value");
/// let sizes: Vec<usize> = batches.map(|b| b.map(|b| b.num_rows())).collect::<h5vec::Result<_>>()?;
/// assert_eq!(sizes, [2, 1, 1]);
/// # Ok(()) }
/// ```
pub struct DatasetBatches {
    name: String,
    todo: std::vec::IntoIter<(PathBuf, u64, Range<u64>)>,
    /// The batches of the file being read (dropped before the file).
    current: Option<(Batches, PathBuf, File)>,
    schema: SchemaRef,
    batch: usize,
    remaining: u64,
    failed: bool,
}

/// The batches of rows `rows` of `name` in `path`, whose vector must hold
/// at least `span` rows; errors name the file.
fn open_file(
    path: &Path,
    name: &str,
    span: u64,
    rows: Range<u64>,
    batch: usize,
) -> Result<(Batches, File)> {
    let file = crate::file::open_file(path)?;
    let batches = (|| {
        let (parent, leaf) = parent_of(&file, name)?;
        let b = crate::arrow::batches(&parent, leaf, batch)?;
        check_span(span, b.rows())?;
        b.narrow(rows)
    })()
    .map_err(|e| e.in_file(path))?;
    Ok((batches, file))
}

impl DatasetBatches {
    fn new(ds: &Dataset, range: Range<u64>, batch_rows: usize) -> Result<Self> {
        if batch_rows == 0 {
            return Err(Error::invalid("$", "batch_rows must be at least 1"));
        }
        let mut todo: Vec<_> = ds
            .pieces(range.clone())
            .map(|(span, rows)| (span.path.clone(), span.len(), rows))
            .collect();
        // The schema comes from the first file, even when it has no rows.
        let first = &ds.files()[0];
        let current = if todo.first().is_some_and(|t| t.0 == first.path) {
            let (path, span, rows) = todo.remove(0);
            let (b, f) = open_file(&path, ds.name(), span, rows, batch_rows)?;
            (b, path, f)
        } else {
            let (b, f) = open_file(&first.path, ds.name(), first.len(), 0..0, batch_rows)?;
            (b, first.path.clone(), f)
        };
        Ok(DatasetBatches {
            name: ds.name().to_owned(),
            todo: todo.into_iter(),
            schema: current.0.schema(),
            current: Some(current),
            batch: batch_rows,
            remaining: range.end - range.start,
            failed: false,
        })
    }

    /// The schema of every batch (the first file's).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let a = dir.path().join("a.h5");
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[0u8; 0])?;
    /// let ds = h5vec::Dataset::open_files(&[&a], "xs")?;
    /// assert_eq!(ds.arrow_batches(10)?.schema().fields().len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows not yet returned.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let a = dir.path().join("a.h5");
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[0u8; 5])?;
    /// let ds = h5vec::Dataset::open_files(&[&a, &a], "xs")?;
    /// let mut batches = ds.arrow_batches(4)?;
    /// batches.next().transpose()?;
    /// assert_eq!(batches.remaining(), 6);
    /// # Ok(()) }
    /// ```
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The next batch of the current file, or of the next file with rows.
    fn step(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if self.current.is_none() {
                let (path, span, rows) = self.todo.next()?;
                match open_file(&path, &self.name, span, rows, self.batch) {
                    Ok((b, f)) => self.current = Some((b, path, f)),
                    Err(e) => return Some(Err(e)),
                }
            }
            let (batches, path, _) = self.current.as_mut()?;
            match batches.next() {
                None => self.current = None,
                Some(r) => {
                    let r = r
                        .map_err(|e| e.in_file(path))
                        .and_then(|b| conform(&self.schema, b, path));
                    if batches.remaining() == 0 {
                        // Closed as soon as its last batch is read.
                        self.current = None;
                    }
                    return Some(r);
                }
            }
        }
    }
}

/// `batch` of the file `path` under `schema`: the same columns and types
/// (the schema's metadata may differ: the writer's type names); otherwise
/// an error naming the file.
fn conform(schema: &SchemaRef, batch: RecordBatch, path: &Path) -> Result<RecordBatch> {
    if batch.schema() == *schema {
        return Ok(batch);
    }
    let found = batch.schema();
    RecordBatch::try_new(schema.clone(), batch.columns().to_vec()).map_err(|_| {
        Error::mismatch(
            Place::new("$", path.display().to_string()),
            format!("the first file's Arrow schema {schema}"),
            found.to_string(),
        )
    })
}

impl Iterator for DatasetBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let r = self.step()?;
        match &r {
            Ok(b) => self.remaining -= b.num_rows() as u64,
            Err(_) => {
                self.failed = true;
                self.current = None;
            }
        }
        Some(r)
    }
}

impl Dataset {
    /// The dataset's rows as Arrow record batches of at most `batch_rows`
    /// rows, read without the Rust type from each file's schema tree (as
    /// [`h5vec::arrow::batches`](crate::arrow::batches) reads one file),
    /// one file open at a time (see [`DatasetBatches`]).
    ///
    /// ```
    /// use h5vec::arrow::arrow_array::{cast::AsArray, types::UInt32Type};
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[1u32, 2])?;
    /// h5vec::save_vector(&*h5vec::create_file(&b)?, "xs", &[3u32])?;
    /// let ds = h5vec::Dataset::open_files(&[&a, &b], "xs")?;
    /// let mut values = Vec::new();
    /// for batch in ds.arrow_batches(1000)? {
    ///     values.extend(batch?.column(0).as_primitive::<UInt32Type>().values().iter().copied());
    /// }
    /// assert_eq!(values, [1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn arrow_batches(&self, batch_rows: usize) -> Result<DatasetBatches> {
        DatasetBatches::new(self, 0..self.len(), batch_rows)
    }

    /// [`arrow_batches`](Self::arrow_batches) of rows `range` of the
    /// dataset only (an error past [`len`](Self::len)).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[1u32, 2])?;
    /// h5vec::save_vector(&*h5vec::create_file(&b)?, "xs", &[3u32])?;
    /// let ds = h5vec::Dataset::open_files(&[&a, &b], "xs")?;
    /// let sizes: Vec<usize> = ds.arrow_batches_range(1..3, 10)?
    ///     .map(|b| b.map(|b| b.num_rows()))
    ///     .collect::<h5vec::Result<_>>()?;
    /// assert_eq!(sizes, [1, 1]);
    /// assert!(ds.arrow_batches_range(2..4, 10).is_err());
    /// # Ok(()) }
    /// ```
    pub fn arrow_batches_range(
        &self,
        range: Range<u64>,
        batch_rows: usize,
    ) -> Result<DatasetBatches> {
        crate::vector::check_range(&range, self.len())?;
        DatasetBatches::new(self, range, batch_rows)
    }

    /// Every row as one record batch (the batches of
    /// [`arrow_batches`](Self::arrow_batches) concatenated).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let a = dir.path().join("a.h5");
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &["a".to_string(), "b".into()])?;
    /// let ds = h5vec::Dataset::open_files(&[&a, &a, &a], "xs")?;
    /// assert_eq!(ds.read_arrow()?.num_rows(), 6);
    /// # Ok(()) }
    /// ```
    pub fn read_arrow(&self) -> Result<RecordBatch> {
        let batches = self.arrow_batches(crate::options::READ_BATCH_ROWS as usize)?;
        let schema = batches.schema();
        let parts = batches.collect::<Result<Vec<_>>>()?;
        arrow_select::concat::concat_batches(&schema, &parts)
            .map_err(|e| Error::invalid("$", format!("cannot join the files' batches: {e}")))
    }
}
