//! `head` and `cat`: rows (all, a range, the first N, or those a `--where`
//! filter selects) to stdout as a table, JSON lines or CSV.

use std::ops::Range;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::{Format, ShowArgs};
use crate::output::{CsvSink, JsonlSink, Sink, Stdout, TableSink};
use crate::query::parse_where;
use crate::read::{Pick, Rows};
use crate::target::{open_read, Target};

/// `head`: the first `n` rows of `vector` in `file` (of those where
/// `--where` is true, with it).
pub(crate) fn head(file: &Path, vector: &str, n: u64, show: &ShowArgs) -> Result<()> {
    if show.filter.is_some() {
        run(file, vector, None, Some(n), show)
    } else {
        run(file, vector, Some(0..n), None, show)
    }
}

/// `cat`: rows `rows` (all without a range) of `vector` in `file` (those
/// where `--where` is true, with it).
pub(crate) fn cat(
    file: &Path,
    vector: &str,
    rows: Option<Range<u64>>,
    show: &ShowArgs,
) -> Result<()> {
    run(file, vector, rows, None, show)
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
    // What cannot be printed is found before anything is.
    crate::present::check(&schema, show.format != Format::Csv).with_context(at)?;
    let out = Stdout::new();
    let mut sink: Box<dyn Sink> = match show.format {
        Format::Table => Box::new(TableSink::new(out, schema)),
        Format::Jsonl => Box::new(JsonlSink::new(out)),
        Format::Csv => Box::new(CsvSink::new(out, schema)),
    };
    for batch in rows {
        sink.write(&batch.with_context(at)?)?;
    }
    sink.finish()
}
