//! `head` and `cat`: rows to stdout as a table, JSON lines or CSV.

use std::ops::Range;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::{Format, ShowArgs};
use crate::output::{CsvSink, JsonlSink, Sink, Stdout, TableSink};
use crate::read::Rows;
use crate::target::{open_read, Target};

/// Prints rows `rows` (all without a range) of `vector` in `file`.
pub(crate) fn run(
    file: &Path,
    vector: &str,
    rows: Option<Range<u64>>,
    show: &ShowArgs,
) -> Result<()> {
    let h5 = open_read(file)?;
    let target = Target::open(&h5, vector)?;
    let at = || format!("{}:{}", file.display(), target.path);
    let rows = Rows::open(&target, rows, &show.columns, &at())?;
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
