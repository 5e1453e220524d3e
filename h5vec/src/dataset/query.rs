//! Queries over a [`Dataset`] (SPEC.md sections 14 and 15): each file
//! asked in turn, one open at a time, with the rows it held when the
//! dataset was opened; row numbers in the dataset's numbering.

use crate::codec::H5Vector;
use crate::error::Result;
use crate::query::{count_in_file, select_in_file, Filter};

use super::files::parent_of;
use super::set::Dataset;

impl Dataset {
    /// The rows of the dataset where `filter` is true, in increasing order
    /// (a file's rows numbered after the previous files'), as
    /// [`select_rows`](crate::select_rows) finds them in each file: the
    /// statistics and valid search indexes of each file skip what cannot
    /// match. Rows appended to a file since the dataset was opened are not
    /// the dataset's; a file with fewer rows is an error naming it.
    ///
    /// ```
    /// use h5vec::{col, Dataset};
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let paths = [dir.path().join("a.h5"), dir.path().join("b.h5")];
    /// let a = h5vec::create_file(&paths[0])?;
    /// h5vec::save_vector(&a, "t", &[1.5f64, 7.0, 2.0])?;
    /// let b = h5vec::create_file(&paths[1])?;
    /// h5vec::save_vector(&b, "t", &[9.0f64, 0.5])?;
    /// drop((a, b));
    /// let ds = Dataset::open_files(&paths, "t")?;
    /// let hot = col("").gt(5.0);
    /// assert_eq!(ds.select_rows(&hot)?, [1, 3]);
    /// assert_eq!(ds.count_where(&hot)?, 2);
    /// assert_eq!(ds.load_where::<f64>(&hot)?, [7.0, 9.0]);
    /// # Ok(()) }
    /// ```
    pub fn select_rows(&self, filter: &Filter) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        self.each_file::<()>(filter, false, |first, rows, _| {
            crate::limits::grow(&mut out, rows.len() as u64, self.len(), "$")?;
            out.extend(rows.into_iter().map(|r| first + r));
            Ok(())
        })?;
        Ok(out)
    }

    /// How many rows of the dataset match `filter` (see [`Self::select_rows`]).
    pub fn count_where(&self, filter: &Filter) -> Result<u64> {
        let mut n = 0u64;
        for span in self.files().iter().filter(|s| !s.is_empty()) {
            let file = crate::file::open_file(span.path())?;
            let (parent, leaf) = parent_of(&file, self.name())?;
            n += count_in_file(&parent, leaf, filter, span.len())
                .map_err(|e| e.in_file(span.path()))?;
        }
        Ok(n)
    }

    /// The rows of the dataset where `filter` is true, decoded as `T` (see
    /// [`Self::select_rows`]; only the matching rows of each file are
    /// decoded, as [`load_where`](crate::load_where) does).
    pub fn load_where<T: H5Vector>(&self, filter: &Filter) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.each_file::<T>(filter, true, |_, _, values| {
            crate::limits::grow(&mut out, values.len() as u64, self.len(), "$")?;
            out.extend(values);
            Ok(())
        })?;
        Ok(out)
    }

    /// Calls `each(first_row, rows, values)` for every file with rows, in
    /// order: the file's matching rows (its own numbering) and, with
    /// `decode`, their values.
    fn each_file<T: H5Vector>(
        &self,
        filter: &Filter,
        decode: bool,
        mut each: impl FnMut(u64, Vec<u64>, Vec<T>) -> Result<()>,
    ) -> Result<()> {
        for span in self.files().iter().filter(|s| !s.is_empty()) {
            let file = crate::file::open_file(span.path())?;
            let (parent, leaf) = parent_of(&file, self.name())?;
            let flags = decode.then(|| self.options().flags());
            let (rows, values) = select_in_file::<T>(&parent, leaf, filter, span.len(), flags)
                .map_err(|e| e.in_file(span.path()))?;
            each(span.rows().start, rows, values)?;
        }
        Ok(())
    }
}
