//! A Parquet file with its columns encoded in parallel: the file the parquet
//! crate's `ArrowWriter` writes (the same Arrow schema and metadata in the
//! footer, the same column writers and properties, the same row groups of
//! `max_row_group_row_count` rows), byte for byte, with each row group's leaf
//! columns encoded by worker threads at the same time.
//!
//! Batches are split at row-group boundaries as `ArrowWriter` splits them;
//! each slice is cut into leaf columns (`compute_leaves`) and every worker
//! gets its leaves through a bounded channel, so at most [`IN_FLIGHT`]
//! batches per worker wait: memory stays bounded as with `ArrowWriter`,
//! which also keeps a whole encoded row group in memory. When a row group
//! is full the workers close their column writers and the chunks are
//! appended in column order.

use std::io::Write;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use anyhow::{anyhow, bail, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn,
    ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

/// Batches of leaves waiting for each worker at most.
const IN_FLIGHT: usize = 2;

/// Writes record batches of one schema to a Parquet file, encoding the
/// columns of each row group in parallel.
pub(crate) struct ParallelParquetWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// Rows per row group (`WriterProperties::max_row_group_row_count`).
    group_rows: usize,
    /// Worker threads per row group at most.
    max_workers: usize,
    group: Option<RowGroup>,
}

/// The row group being encoded.
struct RowGroup {
    /// Worker `w` encodes the leaf columns `w`, `w + n`, `w + 2n`, ... of
    /// the `n` workers, in that order.
    workers: Vec<Worker>,
    leaves: usize,
    rows: usize,
}

struct Worker {
    send: SyncSender<Vec<ArrowLeafColumn>>,
    done: JoinHandle<parquet::errors::Result<Vec<ArrowColumnChunk>>>,
}

impl<W: Write + Send> ParallelParquetWriter<W> {
    /// A writer of `schema` to `out` with `props`, which must not limit row
    /// groups by bytes nor chunk pages by content (the CLI sets neither):
    /// `ArrowWriter` would then split rows differently.
    pub(crate) fn try_new(out: W, schema: SchemaRef, props: WriterProperties) -> Result<Self> {
        if props.max_row_group_bytes().is_some() || props.content_defined_chunking().is_some() {
            bail!("the parallel Parquet writer splits row groups by rows only");
        }
        let group_rows = props.max_row_group_row_count().unwrap_or(usize::MAX);
        // ArrowWriter builds the Parquet schema, puts the Arrow schema into
        // the footer's metadata and makes the factory of its column writers.
        let (file, factory) =
            ArrowWriter::try_new(out, schema.clone(), Some(props))?.into_serialized_writer()?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(ParallelParquetWriter {
            file,
            factory,
            schema,
            group_rows: group_rows.max(1),
            // More workers than cores, so that a column slower than the
            // others does not leave a core idle.
            max_workers: (2 * cores).max(2),
            group: None,
        })
    }

    /// Writes `batch`, closing row groups as they fill.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_columns() != self.schema.fields().len() {
            bail!(
                "a batch of {} columns for a Parquet schema of {}",
                batch.num_columns(),
                self.schema.fields().len()
            );
        }
        let mut rest = batch.clone();
        while rest.num_rows() > 0 {
            if self.group.is_none() {
                self.group = Some(self.start_group()?);
            }
            let Some(group) = &mut self.group else {
                continue;
            };
            let room = self.group_rows - group.rows;
            let part = if rest.num_rows() > room {
                let part = rest.slice(0, room);
                rest = rest.slice(room, rest.num_rows() - room);
                part
            } else {
                std::mem::replace(&mut rest, batch.slice(0, 0))
            };
            if !group.send(&self.schema, &part)? {
                // A worker stopped early: its error says why.
                self.flush()?;
                bail!("a Parquet column encoder stopped without an error");
            }
            group.rows += part.num_rows();
            if group.rows >= self.group_rows {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Writes the last row group and the footer.
    pub(crate) fn finish(mut self) -> Result<()> {
        self.flush()?;
        self.file.close()?;
        Ok(())
    }

    /// New column writers and their workers for the next row group.
    fn start_group(&self) -> Result<RowGroup> {
        let writers = self
            .factory
            .create_column_writers(self.file.flushed_row_groups().len())?;
        let leaves = writers.len();
        let n = leaves.clamp(1, self.max_workers);
        let mut owned: Vec<Vec<ArrowColumnWriter>> = (0..n).map(|_| Vec::new()).collect();
        for (i, w) in writers.into_iter().enumerate() {
            owned[i % n].push(w);
        }
        let workers = owned
            .into_iter()
            .map(|mut writers| {
                let (send, recv) = sync_channel::<Vec<ArrowLeafColumn>>(IN_FLIGHT);
                let done = std::thread::spawn(move || {
                    for leaves in recv {
                        for (w, leaf) in writers.iter_mut().zip(&leaves) {
                            w.write(leaf)?;
                        }
                    }
                    writers.into_iter().map(ArrowColumnWriter::close).collect()
                });
                Worker { send, done }
            })
            .collect();
        Ok(RowGroup {
            workers,
            leaves,
            rows: 0,
        })
    }

    /// Closes the row group being written, if any: waits for its workers
    /// in column order, appending each column as soon as it is encoded (the
    /// first columns are written out while the last are still encoding).
    fn flush(&mut self) -> Result<()> {
        let Some(group) = self.group.take() else {
            return Ok(());
        };
        let n = group.workers.len();
        let mut done = Vec::with_capacity(n);
        for worker in group.workers {
            drop(worker.send);
            done.push(worker.done);
        }
        let mut done = done.into_iter();
        let mut chunks: Vec<std::vec::IntoIter<ArrowColumnChunk>> = Vec::with_capacity(n);
        let mut row_group = self.file.next_row_group()?;
        for i in 0..group.leaves {
            if i < n {
                // Workers own columns i, i + n, ...: worker i is needed first
                // for column i.
                let c = done
                    .next()
                    .ok_or_else(|| anyhow!("a Parquet column encoder is missing"))?
                    .join()
                    .map_err(|_| anyhow!("a Parquet column encoder panicked"))??;
                chunks.push(c.into_iter());
            }
            let chunk = chunks[i % n]
                .next()
                .ok_or_else(|| anyhow!("a Parquet column encoder returned too few columns"))?;
            chunk.append_to_row_group(&mut row_group)?;
        }
        row_group.close()?;
        Ok(())
    }
}

impl RowGroup {
    /// Sends the leaves of `batch` to the workers; false if a worker has
    /// stopped (after an error).
    fn send(&self, schema: &SchemaRef, batch: &RecordBatch) -> Result<bool> {
        let n = self.workers.len();
        let mut per_worker: Vec<Vec<ArrowLeafColumn>> = (0..n).map(|_| Vec::new()).collect();
        let mut i = 0;
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            for leaf in compute_leaves(field, column)? {
                per_worker[i % n].push(leaf);
                i += 1;
            }
        }
        if i != self.leaves {
            bail!(
                "a batch of {i} Parquet leaf columns for a schema of {}",
                self.leaves
            );
        }
        for (worker, leaves) in self.workers.iter().zip(per_worker) {
            if worker.send.send(leaves).is_err() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        Array, ArrayRef, Float32Builder, Int32Array, LargeListBuilder, LargeStringArray,
        StructArray, UInt64Array,
    };
    use arrow::datatypes::{DataType, Field, Fields, Schema};
    use parquet::basic::{Compression, ZstdLevel};

    use super::*;

    /// A batch of `n` rows from `start` with a number, a string, a list and
    /// a struct column (five leaves), and h5vec-like metadata.
    fn batch(start: usize, n: usize) -> RecordBatch {
        let meta = |k: &str| -> std::collections::HashMap<String, String> {
            [("h5vec.kind".to_string(), k.to_string())]
                .into_iter()
                .collect()
        };
        let mut list = LargeListBuilder::new(Float32Builder::new()).with_field(Arc::new(
            Field::new("item", DataType::Float32, false).with_metadata(meta("scalar")),
        ));
        for r in start..start + n {
            for k in 0..r % 5 {
                list.values().append_value((r * 10 + k) as f32);
            }
            list.append(true);
        }
        let inner: Fields = vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::LargeUtf8, false),
        ]
        .into();
        let strukt = StructArray::new(
            inner.clone(),
            vec![
                Arc::new(Int32Array::from_iter(
                    (start..start + n).map(|r| (r % 3 != 0).then_some(r as i32)),
                )) as ArrayRef,
                Arc::new(LargeStringArray::from_iter_values(
                    (start..start + n).map(|r| format!("s{}", r % 7)),
                )),
            ],
            None,
        );
        let list = list.finish();
        let schema = Schema::new(vec![
            Field::new("id", DataType::UInt64, false).with_metadata(meta("scalar")),
            Field::new("name", DataType::LargeUtf8, false),
            Field::new("values", list.data_type().clone(), false).with_metadata(meta("list")),
            Field::new("rec", DataType::Struct(inner), false),
        ])
        .with_metadata(meta("record"));
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(UInt64Array::from_iter_values(
                    (start..start + n).map(|r| r as u64),
                )),
                Arc::new(LargeStringArray::from_iter_values(
                    (start..start + n).map(|r| format!("row {r}")),
                )),
                Arc::new(list),
                Arc::new(strukt),
            ],
        )
        .unwrap()
    }

    fn props(group_rows: usize) -> WriterProperties {
        WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(group_rows))
            .build()
    }

    /// The bytes `ArrowWriter` and the parallel writer write for batches of
    /// `sizes` rows with row groups of `group_rows`.
    fn both(sizes: &[usize], group_rows: usize) -> (Vec<u8>, Vec<u8>) {
        let mut batches = Vec::new();
        let mut start = 0;
        for &n in sizes {
            batches.push(batch(start, n));
            start += n;
        }
        let schema = batch(0, 0).schema();
        let mut seq = Vec::new();
        let mut w =
            ArrowWriter::try_new(&mut seq, schema.clone(), Some(props(group_rows))).unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.close().unwrap();
        let mut par = Vec::new();
        let mut w = ParallelParquetWriter::try_new(&mut par, schema, props(group_rows)).unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
        (seq, par)
    }

    #[test]
    fn same_bytes_as_arrow_writer() {
        // Row groups ending inside batches, at their ends, and a last
        // partial one.
        for (sizes, group_rows) in [
            (&[1000, 1000, 1000][..], 700),
            (&[500, 500, 500, 500][..], 1000),
            (&[3000][..], 1 << 20),
            (&[10, 0, 7][..], 3),
            (&[][..], 10),
        ] {
            let (seq, par) = both(sizes, group_rows);
            assert!(seq.len() > 100, "{sizes:?}");
            assert!(seq == par, "{sizes:?} in row groups of {group_rows}");
        }
    }

    #[test]
    fn row_groups_and_metadata() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let (_, par) = both(&[1000, 1000, 1000], 700);
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&par).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let meta = reader.metadata();
        let rows: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(rows, [700, 700, 700, 700, 200]);
        assert_eq!(meta.file_metadata().schema_descr().num_columns(), 5);
        let kv = meta.file_metadata().key_value_metadata().unwrap();
        assert!(kv.iter().any(|k| k.key == "ARROW:schema"));
    }

    #[test]
    fn encoder_errors_are_reported() {
        // A null in a non-nullable field fails in a worker.
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int32, false),
            Field::new("b", DataType::Int32, false),
        ]));
        let bad = RecordBatch::try_new_with_options(
            Arc::new(Schema::new(vec![
                Field::new("a", DataType::Int32, true),
                Field::new("b", DataType::Int32, false),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None])),
                Arc::new(Int32Array::from(vec![1, 2])),
            ],
            &Default::default(),
        )
        .unwrap();
        let mut w = ParallelParquetWriter::try_new(Vec::new(), schema, props(10)).unwrap();
        let err = w
            .write(&bad)
            .and_then(|()| w.finish())
            .expect_err("a null in a non-nullable column");
        assert!(format!("{err:#}").contains("null"), "{err:#}");
    }
}
