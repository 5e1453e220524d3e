//! `head` and `cat`: rows (all, a range, the first N, or those a `--where`
//! filter selects) to stdout as a table, JSON lines or CSV.

use std::io::IsTerminal;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{Format, ShowArgs};
use crate::output::{CsvSink, JsonlSink, Sink, Stdout, TableSink};
use crate::query::parse_where;
use crate::read::{Pick, Rows};
use crate::target::{open_read, Target};

/// `head`: the first `n` rows of `vector` in `files` (of those where
/// `--where` is true, with it).
pub(crate) fn head(files: &[PathBuf], vector: &str, n: u64, show: &ShowArgs) -> Result<()> {
    if crate::many::is_many(files) {
        return if show.filter.is_some() {
            run_many(files, vector, None, Some(n), show)
        } else {
            run_many(files, vector, Some(0..n), None, show)
        };
    }
    let file = &files[0];
    if show.filter.is_some() {
        run(file, vector, None, Some(n), show)
    } else {
        run(file, vector, Some(0..n), None, show)
    }
}

/// `cat`: rows `rows` (all without a range) of `vector` in `file` (those
/// where `--where` is true, with it).
pub(crate) fn cat(
    files: &[PathBuf],
    vector: &str,
    rows: Option<Range<u64>>,
    show: &ShowArgs,
) -> Result<()> {
    if crate::many::is_many(files) {
        return run_many(files, vector, rows, None, show);
    }
    run(&files[0], vector, rows, None, show)
}

/// [`run`] over several files read as one vector (`crate::many`), one
/// file open at a time; a progress bar over the files when the output is
/// not the terminal.
fn run_many(
    files: &[PathBuf],
    vector: &str,
    range: Option<Range<u64>>,
    limit: Option<u64>,
    show: &ShowArgs,
) -> Result<()> {
    let filter = show.filter.as_deref().map(parse_where).transpose()?;
    let files = crate::many::expand(files)?;
    let ds = crate::many::open(&files, vector)?;
    let progress = if std::io::stdout().is_terminal() {
        crate::progress::Progress::hidden()
    } else {
        crate::progress::Progress::files(ds.files().len() as u64, "reading")
    };
    let rows = crate::many::ManyRows::open(&ds, range, filter, limit, &show.columns, progress)?;
    write(rows.schema().clone(), rows, show, &|| vector.to_owned())
}

/// Prints rows `range` (all without one) of `vector` in `file`, those
/// where `--where` is true with it, at most `limit` of them.
fn run(
    file: &Path,
    vector: &str,
    range: Option<Range<u64>>,
    limit: Option<u64>,
    show: &ShowArgs,
) -> Result<()> {
    // A bad filter is found before the file is opened.
    let filter = show.filter.as_deref().map(parse_where).transpose()?;
    let pick = Pick {
        range,
        filter: filter.as_ref(),
        limit,
    };
    let h5 = open_read(file)?;
    let target = Target::open(&h5, vector)?;
    let at = || format!("{}:{}", file.display(), target.path);
    let rows = Rows::open(&target, &pick, &show.columns, &at())?;
    let schema = rows.schema().clone();
    write(schema, rows.map(move |b| b.with_context(at)), show, &at)
}

/// Prints `rows` (of `schema`) as `show.format` says; `at` names what they
/// are of in errors.
fn write(
    schema: arrow::datatypes::SchemaRef,
    rows: impl Iterator<Item = Result<arrow::array::RecordBatch>>,
    show: &ShowArgs,
    at: &dyn Fn() -> String,
) -> Result<()> {
    // What cannot be printed is found before anything is.
    crate::present::check(&schema, show.format != Format::Csv).with_context(at)?;
    let out = Stdout::new();
    let mut sink: Box<dyn Sink> = match show.format {
        Format::Table => Box::new(TableSink::new(out, schema)),
        Format::Jsonl => Box::new(JsonlSink::new(out)),
        Format::Csv => Box::new(CsvSink::new(out, schema)),
    };
    for batch in rows {
        sink.write(&batch?)?;
    }
    sink.finish()
}
