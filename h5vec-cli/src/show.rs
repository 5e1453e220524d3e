//! `head` and `cat`: rows to stdout as a table, JSON lines or CSV.

use std::ops::Range;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::{Format, ShowArgs};
use crate::columns::Selection;
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
    let rows = Rows::open(&target, rows).with_context(at)?;
    let selection = if show.columns.is_empty() {
        None
    } else {
        Some(Selection::new(rows.schema(), &show.columns)?)
    };
    let schema = match &selection {
        Some(s) => s.schema().clone(),
        None => rows.schema().clone(),
    };
    let printed = match show.format {
        Format::Table => None,
        Format::Jsonl => Some("JSON lines"),
        Format::Csv => Some("CSV"),
    };
    if let Some(format) = printed {
        crate::convert::no_unions(&schema, format, "print it with --format table")?;
    }
    let out = Stdout::new();
    let mut sink: Box<dyn Sink> = match show.format {
        Format::Table => Box::new(TableSink::new(out, schema)),
        Format::Jsonl => Box::new(JsonlSink::new(out)),
        Format::Csv => Box::new(CsvSink::new(out, schema)),
    };
    for batch in rows {
        let batch = batch.with_context(at)?;
        let batch = match &selection {
            Some(s) => s.apply(&batch)?,
            None => batch,
        };
        sink.write(&batch)?;
    }
    sink.finish()
}
