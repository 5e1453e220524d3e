//! [`VectorReader`]: a vector read in batches of rows with bounded memory.

use std::ops::Range;

use hdf5::Group;

use crate::codec::{Codec, H5Vector};
use crate::error::Result;
use crate::evolution::LoadOptions;
use crate::guard::Access;

use super::load::{check_range, read_rows};
use super::open::open_vector;

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
    /// wrote as `opts` allows (see [`load_vector_with`](crate::load_vector_with)).
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
        let v = open_vector(parent, name, Access::Read)?;
        let end = if range.end == u64::MAX {
            v.count
        } else {
            range.end
        };
        check_range(&(range.start..end), v.count)?;
        let dec = T::Codec::open_with(&v.data, &v.schema, "$", v.count, opts.flags())?;
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
