//! One vector over several files (`h5vec cat a.h5 b.h5 VECTOR`,
//! `h5vec cat 'logs/*.h5' VECTOR`, `convert 'logs/*.h5:VECTOR' out.parquet`,
//! `count`, `rows`):
//! the arguments expanded to files, the files opened as one
//! `h5vec::Dataset` (each file's schema checked against the first's, its
//! rows counted, the file closed again), then read file after file through
//! the one-file reader ([`Rows`]), one file open at a time.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use h5vec::hdf5::File;
use h5vec::{Dataset, Filter};

use crate::progress::Progress;
use crate::read::{Pick, Rows};
use crate::target::{open_read, Target};

/// Whether `arg` is a glob pattern to expand: it has `*`, `?` or `[`,
/// and no file of that name exists.
pub(crate) fn is_pattern(arg: &Path) -> bool {
    let s = arg.to_string_lossy();
    s.contains(['*', '?', '[']) && !arg.exists()
}

/// Whether `args` name more than one file or a pattern (else the one-file
/// command runs, as it always has).
pub(crate) fn is_many(args: &[PathBuf]) -> bool {
    args.len() > 1 || args.iter().any(|a| is_pattern(a))
}

/// The files `args` name, in order: a pattern expands to the files it
/// matches in sorted path order (none is an error naming it), anything
/// else is a file.
pub(crate) fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for arg in args {
        if !is_pattern(arg) {
            files.push(arg.clone());
            continue;
        }
        let pattern = arg.to_string_lossy();
        let mut found: Vec<PathBuf> = glob::glob(&pattern)
            .map_err(|e| anyhow!("`{pattern}` is not a glob pattern: {e}"))?
            .filter_map(|p| p.ok())
            .filter(|p| !p.is_dir())
            .collect();
        if found.is_empty() {
            bail!("no file matches `{pattern}`");
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// The dataset of `vector` in `files`: every file exists and holds the
/// vector with the first file's schema (an error names the file).
pub(crate) fn open(files: &[PathBuf], vector: &str) -> Result<Dataset> {
    for f in files {
        // A readable message for a missing file or a directory.
        drop(open_read(f)?);
    }
    Dataset::open_files(files, vector).with_context(|| format!("vector `{vector}`"))
}

/// The batches of some rows of a dataset, file after file, each file read
/// as the one-file commands read it ([`Rows`]: `--columns`, `--where`),
/// one file open at a time. Every batch has the first file's schema.
pub(crate) struct ManyRows {
    vector: String,
    columns: Vec<String>,
    filter: Option<Filter>,
    /// The files still to read, with the rows of each (its own numbering).
    todo: std::vec::IntoIter<(PathBuf, Range<u64>)>,
    /// The file being read: its rows, then the file (dropped last).
    current: Option<(Rows, File, PathBuf)>,
    schema: SchemaRef,
    /// Rows still to return at most (`head`).
    left: Option<u64>,
    progress: Progress,
    failed: bool,
}

impl ManyRows {
    /// Rows `range` (numbered across the files, clamped to the rows there
    /// are; all without) of `ds`, those where `filter` is true with one,
    /// at most `limit` of them; only `columns` when there are any.
    pub(crate) fn open(
        ds: &Dataset,
        range: Option<Range<u64>>,
        filter: Option<Filter>,
        limit: Option<u64>,
        columns: &[String],
        progress: Progress,
    ) -> Result<ManyRows> {
        let total = ds.len();
        let range = range.map_or(0..total, |r| {
            let end = r.end.min(total);
            r.start.min(end)..end
        });
        let mut todo = Vec::new();
        for f in ds.files() {
            let (a, b) = (f.rows().start, f.rows().end);
            let (start, end) = (range.start.max(a), range.end.min(b));
            if start < end {
                todo.push((f.path().to_owned(), start - a..end - a));
            }
        }
        let mut many = ManyRows {
            vector: ds.name().to_owned(),
            columns: columns.to_vec(),
            filter,
            todo: todo.into_iter(),
            current: None,
            schema: SchemaRef::new(arrow::datatypes::Schema::empty()),
            left: limit,
            progress,
            failed: false,
        };
        // The schema: the first file's, even when no row of it is read.
        let first = ds.files()[0].path().to_owned();
        let first_rows = many
            .todo
            .as_slice()
            .first()
            .filter(|t| t.0 == first)
            .cloned();
        let opened = match first_rows {
            Some((path, rows)) => {
                many.todo.next();
                many.open_file(&path, rows)?
            }
            None => many.open_file(&first, 0..0)?,
        };
        many.schema = opened.0.schema().clone();
        many.current = Some(opened);
        Ok(many)
    }

    /// Rows `rows` of the file `path`.
    fn open_file(&self, path: &Path, rows: Range<u64>) -> Result<(Rows, File, PathBuf)> {
        let h5 = open_read(path)?;
        let target = Target::open(&h5, &self.vector)?;
        let at = format!("{}:{}", path.display(), target.path);
        let pick = Pick {
            range: Some(rows),
            filter: self.filter.as_ref(),
            limit: self.left,
        };
        let r = Rows::open(&target, &pick, &self.columns, &at)?;
        Ok((r, h5, path.to_owned()))
    }

    /// The schema of every batch.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn step(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if self.left == Some(0) {
                return None;
            }
            if self.current.is_none() {
                let (path, rows) = self.todo.next()?;
                match self.open_file(&path, rows) {
                    Ok(c) => self.current = Some(c),
                    Err(e) => return Some(Err(e)),
                }
            }
            let (rows, _, path) = self.current.as_mut()?;
            match rows.next() {
                None => {
                    // The file is closed before the next one opens.
                    self.current = None;
                    self.progress.add(1);
                }
                Some(r) => {
                    let path = path.clone();
                    return Some(r.and_then(|b| self.conform(b, &path)));
                }
            }
        }
    }

    /// `batch` of `path` under the first file's schema (the same columns
    /// and types; metadata may differ), or an error naming the file.
    fn conform(&mut self, batch: RecordBatch, path: &Path) -> Result<RecordBatch> {
        let batch = if batch.schema() == self.schema {
            batch
        } else {
            RecordBatch::try_new(self.schema.clone(), batch.columns().to_vec()).map_err(|_| {
                anyhow!(
                    "{}:{}: the columns differ from the first file's ({} against {})",
                    path.display(),
                    self.vector,
                    batch.schema(),
                    self.schema
                )
            })?
        };
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(batch.num_rows() as u64);
        }
        Ok(batch)
    }
}

impl Iterator for ManyRows {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let r = self.step();
        if matches!(r, Some(Err(_)) | None) {
            self.failed = true;
            self.current = None;
            self.progress.finish();
        }
        r
    }
}

/// `count` over several files: all their rows, or those where `filter` is
/// true (`Dataset::count_where`: each file's statistics and indexes).
pub(crate) fn count(args: &[PathBuf], vector: &str, filter: Option<&str>) -> Result<()> {
    let filter = filter.map(crate::query::parse_where).transpose()?;
    let ds = open(&expand(args)?, vector)?;
    let n = match &filter {
        None => ds.len(),
        Some(f) => ds
            .count_where(f)
            .with_context(|| format!("vector `{vector}`"))?,
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{n}")?;
    out.flush()?;
    Ok(())
}

/// `rows` over several files: the row numbers where `filter` is true, in
/// the files' common numbering (a file's rows follow the previous file's).
pub(crate) fn rows(args: &[PathBuf], vector: &str, filter: &str) -> Result<()> {
    let filter = crate::query::parse_where(filter)?;
    let ds = open(&expand(args)?, vector)?;
    let rows = ds
        .select_rows(&filter)
        .with_context(|| format!("vector `{vector}`"))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for r in rows {
        writeln!(out, "{r}")?;
    }
    out.flush()?;
    Ok(())
}
