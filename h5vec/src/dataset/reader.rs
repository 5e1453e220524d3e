//! [`DatasetReader`]: a [`Dataset`] read in batches, one file open at a
//! time.

use std::ops::Range;
use std::path::PathBuf;

use hdf5::File;

use crate::codec::{Codec, H5Vector};
use crate::error::Result;
use crate::evolution::LoadOptions;
use crate::vector::{check_range, read_rows};

use super::files::OpenFile;
use super::set::{check_span, Dataset};

/// A [`Dataset`] read in batches of rows with bounded memory, file after
/// file: an iterator of `Result<Vec<T>>` like
/// [`VectorReader`](crate::VectorReader), made by [`Dataset::reader`].
///
/// Batches hold at most `batch_rows` rows and never span two files: a
/// file's last batch may be shorter, and a file without rows gives none.
/// Only the file being read is open; it is closed after its last batch.
/// The first file is opened, and its schema checked against `T`, when the
/// reader is made; each later file when the reader reaches it (an error
/// names the file). After an error the iterator ends.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
/// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[0u32, 1, 2, 3, 4])?;
/// h5vec::save_vector(&*h5vec::create_file(&b)?, "xs", &[5u32, 6])?;
/// let ds = h5vec::Dataset::open_files(&[&a, &b], "xs")?;
/// let mut reader = ds.reader::<u32>(2)?;
/// assert_eq!(reader.remaining(), 7);
/// let sizes: Vec<usize> = reader.by_ref().map(|b| b.map(|b| b.len())).collect::<h5vec::Result<_>>()?;
/// assert_eq!(sizes, [2, 2, 1, 2]);
/// assert_eq!(reader.remaining(), 0);
/// assert!(ds.reader::<String>(2).is_err());
/// # Ok(()) }
/// ```
pub struct DatasetReader<T: H5Vector> {
    name: String,
    options: LoadOptions,
    /// The files still to open, with the rows of each to read.
    todo: std::vec::IntoIter<(PathBuf, u64, Range<u64>)>,
    current: Option<Current<T>>,
    batch: u64,
    remaining: u64,
    failed: bool,
}

/// The file being read.
struct Current<T: H5Vector> {
    /// Dropped before the file.
    dec: <T::Codec as Codec>::Decoder,
    next: u64,
    end: u64,
    path: PathBuf,
    _file: File,
}

impl<T: H5Vector> DatasetReader<T> {
    /// Rows `range` of `ds` (within its rows), `batch_rows` at a time.
    pub(super) fn new(ds: &Dataset, range: Range<u64>, batch_rows: usize) -> Result<Self> {
        let todo: Vec<_> = ds
            .pieces(range.clone())
            .map(|(span, rows)| (span.path.clone(), span.len(), rows))
            .collect();
        let mut reader = DatasetReader {
            name: ds.name().to_owned(),
            options: ds.options().clone(),
            todo: todo.into_iter(),
            current: None,
            batch: batch_rows.max(1) as u64,
            remaining: range.end - range.start,
            failed: false,
        };
        reader.current = reader.open_next()?;
        Ok(reader)
    }

    /// Opens the next file to read, if there is one.
    fn open_next(&mut self) -> Result<Option<Current<T>>> {
        let Some((path, span, rows)) = self.todo.next() else {
            return Ok(None);
        };
        let f = OpenFile::open(&path, &self.name)?;
        let v = &f.vector;
        let dec = check_span(span, v.count)
            .and_then(|()| {
                T::Codec::open_with(&v.data, &v.schema, "$", v.count, self.options.flags())
            })
            .map_err(|e| e.in_file(&path))?;
        let OpenFile { vector, file } = f;
        drop(vector);
        Ok(Some(Current {
            dec,
            next: rows.start,
            end: rows.end,
            path,
            _file: file,
        }))
    }

    /// Rows left to read.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let a = dir.path().join("a.h5");
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[0u8; 10])?;
    /// let ds = h5vec::Dataset::open_files(&[&a, &a], "xs")?;
    /// let mut r = ds.reader::<u8>(4)?;
    /// r.next().transpose()?;
    /// assert_eq!(r.remaining(), 16);
    /// # Ok(()) }
    /// ```
    pub fn remaining(&self) -> u64 {
        self.remaining
    }
}

impl<T: H5Vector> Iterator for DatasetReader<T> {
    type Item = Result<Vec<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.current.is_none() {
            match self.open_next() {
                Ok(Some(c)) => self.current = Some(c),
                Ok(None) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        let c = self.current.as_mut()?;
        let stop = c.end.min(c.next.saturating_add(self.batch));
        let r = read_rows(&mut c.dec, c.next..stop).map_err(|e| e.in_file(&c.path));
        self.remaining -= stop - c.next;
        c.next = stop;
        if r.is_err() {
            self.failed = true;
        }
        if c.next >= c.end || r.is_err() {
            // The file is closed as soon as its last batch is read.
            self.current = None;
        }
        Some(r)
    }
}

impl Dataset {
    /// Reads the dataset in batches of at most `batch_rows` rows, one
    /// file open at a time (see [`DatasetReader`]).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[0u32, 1, 2])?;
    /// h5vec::save_vector(&*h5vec::create_file(&b)?, "xs", &[3u32, 4])?;
    /// let ds = h5vec::Dataset::open_files(&[&a, &b], "xs")?;
    /// let batches = ds.reader::<u32>(2)?.collect::<h5vec::Result<Vec<_>>>()?;
    /// // Batches end where files end.
    /// assert_eq!(batches, [vec![0, 1], vec![2], vec![3, 4]]);
    /// # Ok(()) }
    /// ```
    pub fn reader<T: H5Vector>(&self, batch_rows: usize) -> Result<DatasetReader<T>> {
        DatasetReader::new(self, 0..self.len(), batch_rows)
    }

    /// [`reader`](Self::reader) over rows `range` of the dataset only (an
    /// error past [`len`](Self::len)).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[0u32, 1, 2])?;
    /// h5vec::save_vector(&*h5vec::create_file(&b)?, "xs", &[3u32, 4])?;
    /// let ds = h5vec::Dataset::open_files(&[&a, &b], "xs")?;
    /// let batches = ds.reader_range::<u32>(1..4, 10)?.collect::<h5vec::Result<Vec<_>>>()?;
    /// assert_eq!(batches, [vec![1, 2], vec![3]]);
    /// # Ok(()) }
    /// ```
    pub fn reader_range<T: H5Vector>(
        &self,
        range: Range<u64>,
        batch_rows: usize,
    ) -> Result<DatasetReader<T>> {
        check_range(&range, self.len())?;
        DatasetReader::new(self, range, batch_rows)
    }
}
