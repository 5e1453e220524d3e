//! Record batches out: a table, JSON lines, CSV (for `head`, `cat` and
//! `convert`), Parquet and Arrow IPC files (for `convert`), batch by batch.
//! Every format but CSV is written by the arrow and parquet crates' own
//! writers; CSV by [`CsvSink`], with arrow's printer for the cells.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use arrow::array::{Array, ArrayRef, AsArray, LargeStringBuilder, RecordBatch};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use arrow::json::writer::{make_encoder, LineDelimited};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::file::properties::WriterProperties;

use crate::parquet_out::ParallelParquetWriter;
use crate::present::{self, JsonKinds, TableKinds};

/// Set once a write to stdout found the reading end closed.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout's reader went away (`h5vec cat ... | head`): the error
/// that stopped the command is then no error. The writers of the arrow
/// crate turn I/O errors into their own (CSV's into text), so the pipe is
/// noticed here, where the bytes are written.
pub(crate) fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Standard output, buffered, noting a closed pipe for [`stdout_closed`].
pub(crate) struct Stdout(std::io::BufWriter<std::io::StdoutLock<'static>>);

impl Stdout {
    pub(crate) fn new() -> Stdout {
        Stdout(std::io::BufWriter::with_capacity(
            1 << 16,
            std::io::stdout().lock(),
        ))
    }

    fn note<T>(r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
            }
        }
        r
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Stdout::note(self.0.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Stdout::note(self.0.flush())
    }
}

/// A destination of record batches of one schema.
pub(crate) trait Sink {
    /// Writes one batch.
    fn write(&mut self, batch: &RecordBatch) -> Result<()>;
    /// Writes what is left (footers, the header of an empty table) and flushes.
    fn finish(self: Box<Self>) -> Result<()>;
    /// Whether the sink encodes on threads of its own, so that its caller
    /// gains nothing from calling it on another thread.
    fn threaded(&self) -> bool {
        false
    }
}

/// A table per batch, by arrow's pretty printer (UUIDs, dates and enums
/// with data as [`present`] writes them); missing values print as `null`. With no rows at all, the header alone.
pub(crate) struct TableSink<W: Write> {
    out: W,
    schema: SchemaRef,
    wrote: bool,
}

impl<W: Write> TableSink<W> {
    pub(crate) fn new(out: W, schema: SchemaRef) -> Self {
        TableSink {
            out,
            schema,
            wrote: false,
        }
    }
}

impl<W: Write> Sink for TableSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let options = FormatOptions::default()
            .with_null("null")
            .with_formatter_factory(Some(&TableKinds));
        let table = arrow::util::pretty::pretty_format_batches_with_options(
            std::slice::from_ref(batch),
            &options,
        )?;
        writeln!(self.out, "{table}")?;
        self.wrote = true;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        if !self.wrote {
            let empty = RecordBatch::new_empty(self.schema.clone());
            let table = arrow::util::pretty::pretty_format_batches(&[empty])?;
            writeln!(self.out, "{table}")?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// One JSON object per row (arrow's line-delimited JSON writer): records as
/// objects, lists and fixed-size arrays as arrays, missing values as `null`
/// (written, not left out), blobs as hex strings; UUIDs, dates, maps,
/// enums with data, `f16`s and floats that are not finite (`NaN`,
/// `Infinity`, `-Infinity`) as [`present`] writes them.
pub(crate) struct JsonlSink<W: Write> {
    writer: arrow::json::Writer<W, LineDelimited>,
}

impl<W: Write> JsonlSink<W> {
    pub(crate) fn new(out: W) -> Self {
        let writer = arrow::json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .with_encoder_factory(Arc::new(JsonKinds))
            .build::<_, LineDelimited>(out);
        JsonlSink { writer }
    }
}

impl<W: Write> Sink for JsonlSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer.write(batch)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.writer.finish()?;
        self.writer.get_mut().flush()?;
        Ok(())
    }
}

/// CSV with a header line, of the batches flattened by [`flatten`]:
/// records become dotted columns (`timestamp.weeks`), lists and fixed-size
/// arrays JSON text cells (`[1,2,3]`), blobs hex, UUIDs, dates and `f16`s
/// as [`present`] writes them, every other cell as arrow's CSV writer
/// prints it. A missing value is an empty unquoted cell, and a value whose
/// text is empty (`""`, an empty blob) the quoted cell `""`, so readers
/// can tell them apart (arrow's writer, through the csv crate, prints both
/// as an empty cell). In a file of one column a missing value is `""` too,
/// as the csv crate writes it: an empty line would be skipped by pyarrow's
/// and pandas' readers with their default settings, losing the row, so
/// there an empty string and a missing one look the same (JSON lines,
/// Parquet and Arrow IPC tell them apart). Fields are quoted where they
/// hold a comma, a quote or a line break, quotes doubled, as the csv
/// crate does; lines end in `\n`.
pub(crate) struct CsvSink<W: Write> {
    out: W,
    /// The schema of the batches, for the header of an empty output.
    schema: SchemaRef,
    /// The flat schema, from the first batch.
    flat: Option<SchemaRef>,
    /// Lines not yet written to `out`.
    buf: Vec<u8>,
    /// One cell's text.
    cell: String,
}

/// Bytes [`CsvSink`] gathers before it writes them.
const CSV_CHUNK: usize = 1 << 16;

impl<W: Write> CsvSink<W> {
    pub(crate) fn new(out: W, schema: SchemaRef) -> Self {
        CsvSink {
            out,
            schema,
            flat: None,
            buf: Vec::with_capacity(CSV_CHUNK + 1024),
            cell: String::with_capacity(64),
        }
    }
}

/// Appends `text` as a CSV field: as it is, quoted with its quotes doubled
/// where it holds a comma, a quote or a line break, `""` when it is empty
/// (an empty unquoted field is a missing value).
fn csv_field(buf: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        buf.extend_from_slice(b"\"\"");
    } else if bytes
        .iter()
        .any(|&b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    {
        buf.push(b'"');
        for &b in bytes {
            if b == b'"' {
                buf.push(b'"');
            }
            buf.push(b);
        }
        buf.push(b'"');
    } else {
        buf.extend_from_slice(bytes);
    }
}

impl<W: Write> Sink for CsvSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let header = self.flat.is_none();
        let flat = flatten(batch, &mut self.flat)?;
        let schema = flat.schema();
        if header {
            for (i, f) in schema.fields().iter().enumerate() {
                if i > 0 {
                    self.buf.push(b',');
                }
                csv_field(&mut self.buf, f.name());
            }
            self.buf.push(b'\n');
        }
        // What arrow's CSV writer prints the other columns with.
        let options = FormatOptions::default();
        let columns = schema
            .fields()
            .iter()
            .zip(flat.columns())
            .map(|(f, c)| {
                let cells = ArrayFormatter::try_new(c.as_ref(), &options)
                    .with_context(|| format!("column {}", f.name()))?;
                Ok((f.name(), c.logical_nulls(), cells))
            })
            .collect::<Result<Vec<_>>>()?;
        for row in 0..flat.num_rows() {
            for (i, (name, nulls, cells)) in columns.iter().enumerate() {
                if i > 0 {
                    self.buf.push(b',');
                }
                if nulls.as_ref().is_some_and(|n| n.is_null(row)) {
                    if columns.len() == 1 {
                        // Not an empty line: readers skip those.
                        self.buf.extend_from_slice(b"\"\"");
                    }
                    continue;
                }
                self.cell.clear();
                cells
                    .value(row)
                    .write(&mut self.cell)
                    .with_context(|| format!("column {name}, row {row} of the batch"))?;
                csv_field(&mut self.buf, &self.cell);
            }
            self.buf.push(b'\n');
            if self.buf.len() >= CSV_CHUNK {
                self.out.write_all(&self.buf)?;
                self.buf.clear();
            }
        }
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        if self.flat.is_none() {
            // No rows: the header alone.
            let empty = RecordBatch::new_empty(self.schema.clone());
            self.write(&empty)?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// A Parquet file (what the parquet crate's `ArrowWriter` writes, its
/// columns encoded in parallel: [`ParallelParquetWriter`]): the Arrow
/// schema, with every field's h5vec metadata, goes into the file, so
/// converting it back gives the same layout.
pub(crate) struct ParquetSink<W: Write + Send> {
    writer: ParallelParquetWriter<W>,
}

impl<W: Write + Send> ParquetSink<W> {
    pub(crate) fn new(out: W, schema: SchemaRef, props: WriterProperties) -> Result<Self> {
        Ok(ParquetSink {
            writer: ParallelParquetWriter::try_new(out, schema, props)?,
        })
    }
}

impl<W: Write + Send> Sink for ParquetSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer.write(batch)
    }

    fn finish(self: Box<Self>) -> Result<()> {
        self.writer.finish()
    }

    fn threaded(&self) -> bool {
        true
    }
}

/// An Arrow IPC file (arrow's `FileWriter`), schema metadata included.
pub(crate) struct IpcSink<W: Write> {
    writer: arrow::ipc::writer::FileWriter<W>,
}

impl<W: Write> IpcSink<W> {
    pub(crate) fn new(out: W, schema: &Schema) -> Result<Self> {
        Ok(IpcSink {
            writer: arrow::ipc::writer::FileWriter::try_new(out, schema)?,
        })
    }
}

impl<W: Write> Sink for IpcSink<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer.write(batch)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.writer.finish()?;
        self.writer.get_mut().flush()?;
        Ok(())
    }
}

/// The batch as CSV can hold it: every struct column replaced by its
/// fields, named `parent.child` (recursively; a field under a missing
/// record is missing), and every list, fixed-size list or map column by a
/// string column of each row's JSON text (arrow's JSON encoder with the
/// command's, [`present::json_options`]); UUID and date columns become
/// their text ([`present::text_column`]). `schema`
/// keeps the flat schema of the first batch, so every batch gets the same.
pub(crate) fn flatten(batch: &RecordBatch, schema: &mut Option<SchemaRef>) -> Result<RecordBatch> {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        flatten_column(field.name(), field, column, None, &mut fields, &mut columns)?;
    }
    let schema = schema
        .get_or_insert_with(|| Arc::new(Schema::new(Fields::from(fields))))
        .clone();
    let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        schema, columns, &options,
    )?)
}

fn flatten_column(
    name: &str,
    field: &Arc<Field>,
    column: &ArrayRef,
    parent_nulls: Option<&NullBuffer>,
    fields: &mut Vec<Field>,
    columns: &mut Vec<ArrayRef>,
) -> Result<()> {
    match column.data_type() {
        DataType::Struct(children) if !children.is_empty() => {
            let strukt = column.as_struct();
            let nulls = NullBuffer::union(parent_nulls, strukt.nulls());
            for (child, array) in children.iter().zip(strukt.columns()) {
                flatten_column(
                    &format!("{name}.{}", child.name()),
                    child,
                    array,
                    nulls.as_ref(),
                    fields,
                    columns,
                )?;
            }
        }
        // A record without fields (`Option<()>`) has no column to flatten
        // to: `{}` where it is there.
        DataType::Struct(_)
        | DataType::List(_)
        | DataType::LargeList(_)
        | DataType::FixedSizeList(_, _)
        | DataType::ListView(_)
        | DataType::LargeListView(_)
        | DataType::Map(_, _) => {
            let text = json_cells(field, column.as_ref(), parent_nulls)
                .with_context(|| format!("column {name}"))?;
            fields.push(Field::new(name, DataType::LargeUtf8, true));
            columns.push(text);
        }
        DataType::Null => {
            fields.push(Field::new(name, DataType::Null, true));
            columns.push(column.clone());
        }
        _ => {
            let nulls = NullBuffer::union(parent_nulls, column.nulls());
            if let Some(text) = present::text_column(field, column.as_ref(), nulls.as_ref()) {
                fields.push(Field::new(name, DataType::LargeUtf8, true));
                columns.push(text);
                return Ok(());
            }
            let array = match nulls {
                Some(nulls) if Some(&nulls) != column.nulls() => {
                    let data = column.to_data().into_builder().nulls(Some(nulls)).build()?;
                    arrow::array::make_array(data)
                }
                _ => column.clone(),
            };
            fields.push(Field::new(name, column.data_type().clone(), true));
            columns.push(array);
        }
    }
    Ok(())
}

/// Each row of a nested column as its JSON text; null where the row (or a
/// record above it) is missing.
fn json_cells(
    field: &Arc<Field>,
    array: &dyn Array,
    parent_nulls: Option<&NullBuffer>,
) -> Result<ArrayRef> {
    let options = present::json_options();
    let mut encoder = make_encoder(field, array, &options)?;
    let mut builder = LargeStringBuilder::with_capacity(array.len(), array.len() * 8);
    let mut buf = Vec::new();
    for row in 0..array.len() {
        if encoder.is_null(row) || parent_nulls.is_some_and(|n| n.is_null(row)) {
            builder.append_null();
            continue;
        }
        buf.clear();
        encoder.encode(row, &mut buf);
        // The JSON encoder writes UTF-8 only (strings escaped, binary as hex).
        builder.append_value(std::str::from_utf8(&buf).context("JSON text is not UTF-8")?);
    }
    Ok(Arc::new(builder.finish()))
}
