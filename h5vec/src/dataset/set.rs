//! [`Dataset`] and [`FileSpan`]: opening (every file's count and schema
//! checked, the file closed again) and the whole loads; the streaming
//! readers add their methods in `reader` and `arrow`.

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::codec::{Codec, H5Vector};
use crate::error::{Error, Place, Result};
use crate::evolution::LoadOptions;
use crate::schema::Stored;
use crate::vector::{check_range, prealloc, read_rows_into};

use super::compare;
use super::files::{self, OpenFile};

/// One file of a [`Dataset`]: its path and the rows it holds, numbered
/// across the whole dataset.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # for (i, n) in [3u32, 2].iter().enumerate() {
/// #     let f = h5vec::create_file(dir.path().join(format!("part-{i}.h5")))?;
/// #     h5vec::save_vector(&f, "xs", &vec![0u32; *n as usize])?;
/// # }
/// let ds = h5vec::Dataset::open(&format!("{}/part-*.h5", dir.path().display()), "xs")?;
/// let spans: Vec<_> = ds.files().iter().map(|f| f.rows()).collect();
/// assert_eq!(spans, [0..3, 3..5]);
/// assert!(ds.files()[1].path().ends_with("part-1.h5"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpan {
    pub(crate) path: PathBuf,
    pub(crate) rows: Range<u64>,
}

impl FileSpan {
    /// The file.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u8])?;
    /// let ds = h5vec::Dataset::open_files(&[&path], "xs")?;
    /// assert_eq!(ds.files()[0].path(), path);
    /// # Ok(()) }
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its rows in the dataset's numbering (`3..5`: the file's rows 0 and 1
    /// are the dataset's rows 3 and 4).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u8, 2])?;
    /// let ds = h5vec::Dataset::open_files(&[&path, &path], "xs")?;
    /// assert_eq!(ds.files()[1].rows(), 2..4);
    /// assert_eq!(ds.files()[1].len(), 2);
    /// # Ok(()) }
    /// ```
    pub fn rows(&self) -> Range<u64> {
        self.rows.clone()
    }

    /// How many rows of the file the dataset reads (its `count` at open).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[0u8; 0])?;
    /// let ds = h5vec::Dataset::open_files(&[&path], "xs")?;
    /// assert_eq!(ds.files()[0].len(), 0);
    /// assert!(ds.files()[0].is_empty());
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> u64 {
        self.rows.end - self.rows.start
    }

    /// Whether the file holds no rows.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u8])?;
    /// assert!(!h5vec::Dataset::open_files(&[&path], "xs")?.files()[0].is_empty());
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Vector `name` over many files, read as the concatenation of the files'
/// vectors in file order (module docs above: opening checks every file
/// and closes it; reads open one file at a time).
///
/// ```
/// use h5vec::{Dataset, H5Vector};
///
/// #[derive(H5Vector, Clone, Debug, PartialEq)]
/// struct Reading { sensor: u16, value: f64 }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let mut all = Vec::new();
/// for hour in 0..3u16 {
///     let rows: Vec<Reading> = (0..4).map(|i| Reading { sensor: hour, value: i as f64 }).collect();
///     let file = h5vec::create_file(dir.path().join(format!("log-{hour:02}.h5")))?;
///     h5vec::save_vector(&file, "telemetry", &rows)?;
///     all.extend(rows);
/// }
/// let ds = Dataset::open(&format!("{}/log-*.h5", dir.path().display()), "telemetry")?;
/// assert_eq!((ds.len(), ds.files().len()), (12, 3));
/// assert_eq!(ds.load::<Reading>()?, all);
/// assert_eq!(ds.load_range::<Reading>(3..5)?, all[3..5]);
/// let mut n = 0;
/// for batch in ds.reader::<Reading>(3)? {
///     n += batch?.len();
/// }
/// assert_eq!(n, 12);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Dataset {
    name: String,
    files: Vec<FileSpan>,
    options: LoadOptions,
    len: u64,
}

impl Dataset {
    /// Vector `name` in the files `pattern` matches (a glob: `*`, `?`,
    /// `[...]`, `**` for any directories), in sorted path order. A pattern
    /// matching no file is an error naming the pattern; so is any file
    /// whose vector is missing, damaged, or of another schema than the
    /// first file's (the error names the file and the field path, e.g.
    /// `$.pos.x (logs/b.h5): expected scalar Float64 (as in logs/a.h5),
    /// found scalar Float32`). `name` may be a path in the files
    /// (`runs/telemetry`).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// h5vec::save_vector(&*h5vec::create_file(dir.path().join("b.h5"))?, "v", &[3u8])?;
    /// h5vec::save_vector(&*h5vec::create_file(dir.path().join("a.h5"))?, "v", &[1u8, 2])?;
    /// let ds = h5vec::Dataset::open(&format!("{}/*.h5", dir.path().display()), "v")?;
    /// assert_eq!(ds.load::<u8>()?, [1, 2, 3]); // a.h5, then b.h5
    /// let none = format!("{}/*.hdf5", dir.path().display());
    /// assert!(h5vec::Dataset::open(&none, "v").unwrap_err().to_string().contains(&none));
    /// # Ok(()) }
    /// ```
    pub fn open(pattern: &str, name: &str) -> Result<Dataset> {
        Self::open_with(pattern, name, &LoadOptions::default())
    }

    /// [`open`](Self::open) with [`LoadOptions`]: files may differ from
    /// the first where the options let a typed load read them as one type
    /// (`ignore_extra_fields`: records with other fields;
    /// `widen_numbers`: numbers of other types), and typed reads read
    /// every file with the options (each file checked against the type as
    /// it is opened; an error names the file).
    ///
    /// ```
    /// # use h5vec::{H5Vector, LoadOptions};
    /// #[derive(H5Vector)]
    /// struct V1 { id: u32 }
    /// #[derive(H5Vector)]
    /// struct V2 { id: u64, note: String }
    /// #[derive(H5Vector, Debug, PartialEq)]
    /// struct Id { id: u64 }
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// h5vec::save_vector(&*h5vec::create_file(dir.path().join("1.h5"))?, "v", &[V1 { id: 1 }])?;
    /// h5vec::save_vector(&*h5vec::create_file(dir.path().join("2.h5"))?, "v",
    ///     &[V2 { id: 2, note: "new".into() }])?;
    /// let pattern = format!("{}/*.h5", dir.path().display());
    /// assert!(h5vec::Dataset::open(&pattern, "v").is_err()); // `$.note` differs
    /// let opts = LoadOptions::default().ignore_extra_fields(true).widen_numbers(true);
    /// let ds = h5vec::Dataset::open_with(&pattern, "v", &opts)?;
    /// assert_eq!(ds.load::<Id>()?, [Id { id: 1 }, Id { id: 2 }]);
    /// # Ok(()) }
    /// ```
    pub fn open_with(pattern: &str, name: &str, options: &LoadOptions) -> Result<Dataset> {
        Self::from_paths(files::expand(pattern)?, name, options)
    }

    /// Vector `name` in `paths`, in that order (the same file may come
    /// twice). An empty list is an error.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "v", &[1u8, 2])?;
    /// h5vec::save_vector(&*h5vec::create_file(&b)?, "v", &[3u8])?;
    /// let ds = h5vec::Dataset::open_files(&[&b, &a], "v")?;
    /// assert_eq!(ds.load::<u8>()?, [3, 1, 2]);
    /// let err = h5vec::Dataset::open_files(&[&a, &b], "w").unwrap_err();
    /// assert!(err.to_string().contains("a.h5"), "{err}");
    /// # Ok(()) }
    /// ```
    pub fn open_files<P: AsRef<Path>>(paths: &[P], name: &str) -> Result<Dataset> {
        Self::open_files_with(paths, name, &LoadOptions::default())
    }

    /// [`open_files`](Self::open_files) with [`LoadOptions`] (see
    /// [`open_with`](Self::open_with)).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "v", &[1u8])?;
    /// h5vec::save_vector(&*h5vec::create_file(&b)?, "v", &[300u16])?;
    /// assert!(h5vec::Dataset::open_files(&[&a, &b], "v").is_err());
    /// let opts = h5vec::LoadOptions::default().widen_numbers(true);
    /// let ds = h5vec::Dataset::open_files_with(&[&a, &b], "v", &opts)?;
    /// assert_eq!(ds.load::<u32>()?, [1, 300]);
    /// # Ok(()) }
    /// ```
    pub fn open_files_with<P: AsRef<Path>>(
        paths: &[P],
        name: &str,
        options: &LoadOptions,
    ) -> Result<Dataset> {
        let paths = paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        Self::from_paths(paths, name, options)
    }

    fn from_paths(paths: Vec<PathBuf>, name: &str, options: &LoadOptions) -> Result<Dataset> {
        let mut first: Option<(Stored, PathBuf)> = None;
        let mut files = Vec::with_capacity(paths.len());
        let mut len = 0u64;
        for path in paths {
            // The file is closed again at the end of this statement.
            let (schema, count) = OpenFile::open(&path, name)?.summary();
            if let Some((want, at)) = &first {
                if let Some(d) = compare::difference(want, &schema, options.flags(), "$") {
                    return Err(Error::mismatch(
                        Place::new(d.path, path.display().to_string()),
                        format!("{} (as in {})", d.expected, at.display()),
                        d.found,
                    ));
                }
            } else {
                first = Some((schema, path.clone()));
            }
            let end = len.checked_add(count).ok_or_else(|| {
                Error::invalid(
                    Place::new("$", path.display().to_string()),
                    "the files' row counts add up to more than 2^64 rows",
                )
            })?;
            files.push(FileSpan {
                path,
                rows: len..end,
            });
            len = end;
        }
        if first.is_none() {
            return Err(Error::invalid("$", "a dataset needs at least one file"));
        }
        Ok(Dataset {
            name: name.to_owned(),
            files,
            options: options.clone(),
            len,
        })
    }

    /// The vector's name (its path in each file).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u8])?;
    /// assert_eq!(h5vec::Dataset::open_files(&[&path], "xs")?.name(), "xs");
    /// # Ok(()) }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Rows in all the files together (as counted at open).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u8, 2, 3])?;
    /// assert_eq!(h5vec::Dataset::open_files(&[&path, &path], "xs")?.len(), 6);
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no file holds a row.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[0u8; 0])?;
    /// assert!(h5vec::Dataset::open_files(&[&path], "xs")?.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The files in order, each with its rows in the dataset's numbering.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u8, 2, 3])?;
    /// let ds = h5vec::Dataset::open_files(&[&path, &path], "xs")?;
    /// assert_eq!(ds.files()[1].rows(), 3..6);
    /// # Ok(()) }
    /// ```
    pub fn files(&self) -> &[FileSpan] {
        &self.files
    }

    /// The options typed reads read every file with.
    pub(crate) fn options(&self) -> &LoadOptions {
        &self.options
    }

    /// Every row of every file, in order, as one `Vec<T>` (grown without
    /// aborting when memory runs out: an error says so).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u8, 2])?;
    /// let ds = h5vec::Dataset::open_files(&[&path, &path], "xs")?;
    /// assert_eq!(ds.load::<u8>()?, [1, 2, 1, 2]);
    /// assert!(ds.load::<String>().is_err());
    /// # Ok(()) }
    /// ```
    pub fn load<T: H5Vector>(&self) -> Result<Vec<T>> {
        self.load_range(0..self.len)
    }

    /// Rows `range` of the dataset (numbered across the files), reading
    /// only the files and rows the range covers. A range past
    /// [`len`](Self::len) is an error, as for [`load_range`](crate::load_range).
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (a, b) = (dir.path().join("a.h5"), dir.path().join("b.h5"));
    /// h5vec::save_vector(&*h5vec::create_file(&a)?, "xs", &[0u32, 1, 2])?;
    /// h5vec::save_vector(&*h5vec::create_file(&b)?, "xs", &[3u32, 4, 5])?;
    /// let ds = h5vec::Dataset::open_files(&[&a, &b], "xs")?;
    /// assert_eq!(ds.load_range::<u32>(2..4)?, [2, 3]);
    /// assert!(ds.load_range::<u32>(5..7).is_err());
    /// # Ok(()) }
    /// ```
    pub fn load_range<T: H5Vector>(&self, range: Range<u64>) -> Result<Vec<T>> {
        check_range(&range, self.len)?;
        let total = range.end - range.start;
        let mut out = Vec::new();
        prealloc(&mut out, total)?;
        for (span, rows) in self.pieces(range) {
            let f = OpenFile::open(&span.path, &self.name)?;
            let at = |e: Error| e.in_file(&span.path);
            let v = &f.vector;
            check_span(span.len(), v.count).map_err(at)?;
            let mut dec =
                T::Codec::open_with(&v.data, &v.schema, "$", v.count, self.options.flags())
                    .map_err(at)?;
            read_rows_into(&mut dec, rows, &mut out, total).map_err(at)?;
        }
        Ok(out)
    }

    /// The files `range` (of the dataset's rows) covers, each with the rows
    /// of the file (in its own numbering) it covers; files without any are
    /// left out.
    pub(crate) fn pieces(
        &self,
        range: Range<u64>,
    ) -> impl Iterator<Item = (&FileSpan, Range<u64>)> {
        self.files.iter().filter_map(move |span| {
            let start = range.start.max(span.rows.start);
            let end = range.end.min(span.rows.end);
            (start < end).then(|| (span, start - span.rows.start..end - span.rows.start))
        })
    }
}

/// Refuses a file whose vector has fewer rows now (`count`) than the
/// `want` the dataset counted at open (its span is read exactly).
pub(crate) fn check_span(want: u64, count: u64) -> Result<()> {
    if count < want {
        return Err(Error::mismatch(
            Place::new("$", "metadata/count"),
            format!("at least the {want} rows counted when the dataset was opened"),
            format!("{count} rows"),
        ));
    }
    Ok(())
}
