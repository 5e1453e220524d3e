//! `convert SRC DST`: a container (all its rows, or those `--where` selects)
//! to Parquet, Arrow IPC, CSV or JSON lines, and Parquet or Arrow IPC to a
//! vector, batch by batch (bounded memory).

use std::fs::File;
use std::io::BufWriter;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use anyhow::{anyhow, bail, Context, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use h5vec::{Compression, Filter, SaveOptions};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression as PqCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::columns::Selection;
use crate::many::ManyRows;
use crate::output::{CsvSink, IpcSink, JsonlSink, ParquetSink, Sink};
use crate::progress::Progress;
use crate::query::parse_where;
use crate::read::{Pick, Rows};
use crate::target::{open_read, Target, BATCH_ROWS};

/// The batches an export writes.
type Batches = Box<dyn Iterator<Item = Result<RecordBatch>>>;

/// The options of `convert`.
pub(crate) struct Options {
    pub(crate) compression: Option<String>,
    pub(crate) chunk_length: Option<u64>,
    pub(crate) replace: bool,
    pub(crate) vls_strings: bool,
    pub(crate) checksum: bool,
    pub(crate) columns: Vec<String>,
    /// `--where`: only the rows of an HDF5 vector where it is true.
    pub(crate) filter: Option<String>,
}

/// One side of a conversion.
#[derive(Debug, PartialEq)]
enum Endpoint {
    /// `FILE:VECTOR`.
    H5 {
        file: PathBuf,
        vector: String,
    },
    Parquet(PathBuf),
    Ipc(PathBuf),
    Csv(PathBuf),
    Jsonl(PathBuf),
}

/// Extensions of HDF5 files, so that `data.h5:v.csv` is vector `v.csv`.
const H5_EXTENSIONS: &[&str] = &["h5", "hdf5", "he5", "hdf"];

impl Endpoint {
    fn parse(s: &str) -> Result<Endpoint> {
        let ext = |p: &str| {
            Path::new(p)
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
        };
        let colon = s
            .rsplit_once(':')
            .filter(|(f, v)| !f.is_empty() && !v.is_empty());
        if let Some((file, vector)) = colon {
            if ext(file).is_some_and(|e| H5_EXTENSIONS.contains(&e.as_str())) {
                return Ok(Endpoint::H5 {
                    file: file.into(),
                    vector: vector.into(),
                });
            }
        }
        match ext(s).as_deref() {
            Some("parquet" | "pq") => return Ok(Endpoint::Parquet(s.into())),
            Some("arrow" | "ipc" | "feather") => return Ok(Endpoint::Ipc(s.into())),
            Some("csv") => return Ok(Endpoint::Csv(s.into())),
            Some("jsonl" | "ndjson") => return Ok(Endpoint::Jsonl(s.into())),
            _ => {}
        }
        if let Some((file, vector)) = colon {
            return Ok(Endpoint::H5 {
                file: file.into(),
                vector: vector.into(),
            });
        }
        bail!("`{s}` is neither FILE.h5:VECTOR nor a .parquet, .arrow, .csv or .jsonl file")
    }

    fn describe(&self) -> &'static str {
        match self {
            Endpoint::H5 { .. } => "an HDF5 vector",
            Endpoint::Parquet(_) => "Parquet",
            Endpoint::Ipc(_) => "Arrow IPC",
            Endpoint::Csv(_) => "CSV",
            Endpoint::Jsonl(_) => "JSON lines",
        }
    }
}

/// A `--compression` value: `NAME` or `NAME:LEVEL`.
#[derive(Debug, PartialEq)]
enum Codec {
    None,
    Zstd(Option<u8>),
    Snappy,
    Deflate(Option<u8>),
}

impl Codec {
    fn parse(s: &str) -> Result<Codec> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => {
                let level = l
                    .parse::<u8>()
                    .map_err(|_| anyhow!("--compression {s}: `{l}` is not a level"))?;
                (n, Some(level))
            }
            None => (s, None),
        };
        let codec = match name {
            "none" | "uncompressed" => Codec::None,
            "zstd" => Codec::Zstd(level),
            "snappy" => Codec::Snappy,
            "deflate" | "gzip" => Codec::Deflate(level),
            _ => bail!("--compression {s}: unknown compression `{name}`"),
        };
        if level.is_some() && matches!(codec, Codec::None | Codec::Snappy) {
            bail!("--compression {s}: `{name}` takes no level");
        }
        Ok(codec)
    }
}

/// Converts `src` to `dst`.
pub(crate) fn run(src: &str, dst: &str, opts: &Options) -> Result<()> {
    let from = Endpoint::parse(src)?;
    let to = Endpoint::parse(dst)?;
    let codec = opts.compression.as_deref().map(Codec::parse).transpose()?;
    let filter = opts.filter.as_deref().map(parse_where).transpose()?;
    if filter.is_some() && !matches!(from, Endpoint::H5 { .. }) {
        bail!("--where is for an HDF5 source only (FILE.h5:VECTOR)");
    }
    if !matches!(to, Endpoint::H5 { .. }) {
        let h5_only = [
            ("--chunk-length", opts.chunk_length.is_some()),
            ("--replace", opts.replace),
            ("--vls-strings", opts.vls_strings),
            ("--checksum", opts.checksum),
        ];
        if let Some((flag, _)) = h5_only.iter().find(|(_, on)| *on) {
            bail!("{flag} is for HDF5 output only");
        }
    }
    match (&from, &to) {
        (Endpoint::H5 { .. }, Endpoint::H5 { .. }) => bail!(
            "cannot convert an HDF5 vector to an HDF5 vector: convert reads an HDF5 vector into Parquet, Arrow IPC, CSV or JSON lines, and Parquet or Arrow IPC into an HDF5 vector"
        ),
        (Endpoint::H5 { file, vector }, _) => {
            let path = output_path(&to);
            let result = export(file, vector, &to, codec, &opts.columns, filter.as_ref());
            if result.is_err() {
                // Leave no half-written output behind.
                let _ = std::fs::remove_file(path);
            }
            result
        }
        (Endpoint::Parquet(_) | Endpoint::Ipc(_), Endpoint::H5 { file, vector }) => {
            import(&from, file, vector, codec, opts)
        }
        _ => bail!(
            "cannot convert {} to {}: convert reads an HDF5 vector into Parquet, Arrow IPC, CSV or JSON lines, and Parquet or Arrow IPC into an HDF5 vector",
            from.describe(),
            to.describe()
        ),
    }
}

fn output_path(to: &Endpoint) -> &Path {
    match to {
        Endpoint::H5 { file, .. } => file,
        Endpoint::Parquet(p) | Endpoint::Ipc(p) | Endpoint::Csv(p) | Endpoint::Jsonl(p) => p,
    }
}

/// `file:vector` into the file `to`.
fn export(
    file: &Path,
    vector: &str,
    to: &Endpoint,
    codec: Option<Codec>,
    columns: &[String],
    filter: Option<&Filter>,
) -> Result<()> {
    // Kept open while its rows are read.
    let mut _h5 = None;
    let (schema, batches, progress, at): (SchemaRef, Batches, Progress, String) =
        if crate::many::is_many(&[file.to_path_buf()]) {
            // A pattern: every file it matches, one open at a time.
            let files = crate::many::expand(&[file.to_path_buf()])?;
            let ds = crate::many::open(&files, vector)?;
            let bar = Progress::files(files.len() as u64, "converting");
            let rows = ManyRows::open(&ds, None, filter.cloned(), None, columns, bar)?;
            let at = format!("{}:{vector}", file.display());
            (
                rows.schema().clone(),
                Box::new(rows),
                Progress::hidden(),
                at,
            )
        } else {
            let h5 = open_read(file)?;
            let target = Target::open(&h5, vector)?;
            let at = format!("{}:{}", file.display(), target.path);
            let pick = Pick {
                filter,
                ..Pick::default()
            };
            let rows = Rows::open(&target, &pick, columns, &at)?;
            _h5 = Some(h5);
            let bar = Progress::new(Some(rows.rows()), "converting");
            let schema = rows.schema().clone();
            let place = at.clone();
            let batches = rows.map(move |b| b.with_context(|| place.clone()));
            (schema, Box::new(batches), bar, at)
        };
    let at = || at.clone();
    let path = output_path(to);
    let create = || {
        File::create(path)
            .map(|f| BufWriter::with_capacity(1 << 20, f))
            .with_context(|| format!("cannot create {}", path.display()))
    };
    match to {
        Endpoint::Csv(_) | Endpoint::Jsonl(_) => {
            crate::present::check(&schema, matches!(to, Endpoint::Jsonl(_))).with_context(at)?
        }
        Endpoint::Parquet(_) => parquet_check(&schema).with_context(at)?,
        _ => {}
    }
    let sink: Box<dyn Sink + Send> = match to {
        Endpoint::Parquet(_) => {
            let compression = match codec {
                None => PqCompression::ZSTD(ZstdLevel::default()),
                Some(Codec::None) => PqCompression::UNCOMPRESSED,
                Some(Codec::Snappy) => PqCompression::SNAPPY,
                Some(Codec::Zstd(None)) => PqCompression::ZSTD(ZstdLevel::default()),
                Some(Codec::Zstd(Some(l))) => PqCompression::ZSTD(
                    ZstdLevel::try_new(i32::from(l))
                        .map_err(|e| anyhow!("--compression zstd:{l}: {e}"))?,
                ),
                Some(Codec::Deflate(_)) => {
                    bail!("--compression: Parquet output takes zstd[:LEVEL], snappy or none")
                }
            };
            let props = WriterProperties::builder()
                .set_compression(compression)
                .build();
            Box::new(ParquetSink::new(create()?, schema.clone(), props)?)
        }
        _ if codec.is_some() => {
            bail!("--compression is for Parquet and HDF5 output only")
        }
        Endpoint::Ipc(_) => Box::new(IpcSink::new(create()?, &schema)?),
        Endpoint::Csv(_) => Box::new(CsvSink::new(create()?, schema.clone())),
        Endpoint::Jsonl(_) => Box::new(JsonlSink::new(create()?)),
        Endpoint::H5 { .. } => unreachable!("run sends HDF5 outputs to import"),
    };
    let writing = || format!("writing {}", path.display());
    let sink = if sink.threaded() {
        // The sink encodes on its own threads, which overlap the reading
        // here.
        let mut sink = sink;
        for batch in batches {
            let batch = batch?;
            sink.write(&batch).with_context(writing)?;
            progress.add(batch.num_rows() as u64);
        }
        sink
    } else {
        write_on_thread(sink, batches, &progress, path)?
    };
    sink.finish().with_context(writing)?;
    progress.finish();
    Ok(())
}

/// Writes `batches` to `sink` (the file `path`) on another thread while
/// they are read here, at most [`IN_FLIGHT`] of them waiting (memory stays
/// bounded); returns the sink to finish.
fn write_on_thread(
    sink: Box<dyn Sink + Send>,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    progress: &Progress,
    path: &Path,
) -> Result<Box<dyn Sink + Send>> {
    let (send, recv) = mpsc::sync_channel::<RecordBatch>(IN_FLIGHT);
    let writer = std::thread::spawn(move || -> Result<Box<dyn Sink + Send>> {
        let mut sink = sink;
        for batch in recv {
            sink.write(&batch)?;
        }
        Ok(sink)
    });
    let mut read = Ok(());
    for batch in batches {
        let batch = match batch {
            Ok(b) => b,
            Err(e) => {
                read = Err(e);
                break;
            }
        };
        let n = batch.num_rows() as u64;
        if send.send(batch).is_err() {
            // The writer stopped: its error is returned below.
            break;
        }
        progress.add(n);
    }
    drop(send);
    let sink = writer
        .join()
        .map_err(|_| anyhow!("the writer of {} panicked", path.display()))?
        .with_context(|| format!("writing {}", path.display()))?;
    read?;
    Ok(sink)
}

/// Batches read ahead of the writer at most.
const IN_FLIGHT: usize = 2;

/// The Parquet or Arrow IPC file `from` into vector `vector` of `file`
/// (created if it does not exist).
fn import(
    from: &Endpoint,
    file: &Path,
    vector: &str,
    codec: Option<Codec>,
    opts: &Options,
) -> Result<()> {
    let (parent, name) = crate::target::split(vector)?;
    // `FILE:/path` for messages, as the other commands name containers.
    let at = if parent == "/" {
        format!("{}:/{name}", file.display())
    } else {
        format!("{}:{parent}/{name}", file.display())
    };
    if !opts.replace && file.exists() {
        // Before anything is read: the vector is there already.
        let h5 = open_read(file)?;
        if crate::target::group(&h5, &parent).is_ok_and(|g| g.link_exists(&name)) {
            bail!("{at}: `{name}` already exists in `{parent}` (convert with --replace to replace it)");
        }
    }
    let mut save = SaveOptions::default()
        .replace(opts.replace)
        .vls_strings(opts.vls_strings)
        .checksum(opts.checksum);
    if let Some(n) = opts.chunk_length {
        let n = usize::try_from(n).map_err(|_| anyhow!("--chunk-length {n} is too large"))?;
        save = save.chunk_length(n);
    }
    save = match codec {
        None => save,
        Some(Codec::None) => save.compression(Compression::None),
        Some(Codec::Deflate(level)) => {
            let level = level.unwrap_or(4);
            if level > 9 {
                bail!("--compression deflate:{level}: levels are 0 to 9");
            }
            save.deflate(level)
        }
        Some(Codec::Zstd(level)) => {
            let level = level.unwrap_or(5);
            if level > 9 {
                bail!("--compression zstd:{level}: levels of HDF5 output (Blosc Zstandard) are 0 to 9");
            }
            save.zstd(level)
        }
        Some(Codec::Snappy) => {
            bail!("--compression: HDF5 output takes deflate[:LEVEL], zstd[:LEVEL] or none")
        }
    };

    let (schema, batches, total): (SchemaRef, BatchIter, Option<u64>) = match from {
        Endpoint::Parquet(path) => {
            let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
            let builder = ParquetRecordBatchReaderBuilder::try_new(f)
                .with_context(|| format!("reading {}", path.display()))?
                .with_batch_size(BATCH_ROWS);
            let total = u64::try_from(builder.metadata().file_metadata().num_rows()).ok();
            // The builder's schema has the file's schema metadata (the
            // root node); the reader's batches have only their fields.
            let schema = builder.schema().clone();
            let reader = builder
                .build()
                .with_context(|| format!("reading {}", path.display()))?;
            let batches = reader.map(with_schema(schema.clone()));
            (schema, Box::new(batches), total)
        }
        Endpoint::Ipc(path) => {
            let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
            let reader = arrow::ipc::reader::FileReader::try_new(std::io::BufReader::new(f), None)
                .with_context(|| format!("reading {}", path.display()))?;
            (reader.schema(), Box::new(reader), None)
        }
        _ => unreachable!("run sends only Parquet and IPC here"),
    };
    let selection = if opts.columns.is_empty() {
        None
    } else {
        Some(Selection::new(&schema, &opts.columns)?)
    };
    let schema = match &selection {
        Some(s) => s.schema().clone(),
        None => schema,
    };
    let progress = Progress::new(total, "converting");
    // Batches are decoded on another thread, at most IN_FLIGHT ahead of
    // the HDF5 writer here; it stops when the writer drops the receiver.
    let (send, recv) = mpsc::sync_channel(IN_FLIGHT);
    let reader = std::thread::spawn(move || {
        let mut batches = batches;
        loop {
            // A panic of the decoder ends the vector with an error, as a
            // decoding error does, not with a clean end of fewer rows.
            let next = std::panic::catch_unwind(AssertUnwindSafe(|| batches.next()))
                .unwrap_or_else(|_| {
                    Some(Err(ArrowError::ExternalError(
                        "the decoder panicked".into(),
                    )))
                });
            let Some(batch) = next else { break };
            let failed = batch.is_err();
            if send.send(batch).is_err() || failed {
                break;
            }
        }
    });
    let batches = recv.into_iter().map(|batch| {
        let batch = match (&selection, batch) {
            (Some(s), Ok(b)) => s.apply(&b).map_err(|e| ArrowError::ExternalError(e.into())),
            (_, b) => b,
        };
        if let Ok(b) = &batch {
            progress.add(b.num_rows() as u64);
        }
        batch
    });

    let existed = file.exists();
    let h5 = if existed {
        crate::target::open_rw(file)?
    } else {
        h5vec::create_file(file)?
    };
    let group = make_groups(&h5, &parent)?;
    let result = h5vec::arrow::save_batches(&group, &name, &schema, batches, &save);
    // The reader has stopped: it ended, failed, or found the receiver
    // gone with save_batches; a panic was sent as an error.
    let _ = reader.join();
    progress.finish();
    if let Err(err) = result {
        drop(group);
        drop(h5);
        if !existed {
            let _ = std::fs::remove_file(file);
        }
        // The library's words for its options, in the command's flags.
        let message = err
            .to_string()
            .replace(
                "use SaveOptions::replace(true) to replace it",
                "convert with --replace to replace it",
            )
            .replace("SaveOptions::replace replaces", "--replace replaces");
        bail!("{at}: {message}");
    }
    Ok(())
}

/// Record batches read from a Parquet or Arrow IPC file.
type BatchIter = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send>;

/// Gives each batch `schema`: the same fields, with the file's metadata.
fn with_schema(
    schema: SchemaRef,
) -> impl Fn(Result<RecordBatch, ArrowError>) -> Result<RecordBatch, ArrowError> {
    move |batch| batch.and_then(|b| b.with_schema(schema.clone()))
}

/// Refuses, before anything is written and naming the field, what Parquet
/// cannot hold: a record without fields (`()` or `Option<()>` as an Arrow
/// struct without fields). Enums with data come in their flat form, which
/// Parquet holds.
fn parquet_check(schema: &SchemaRef) -> Result<()> {
    use arrow::datatypes::{DataType, Field};
    fn walk(f: &Field, path: &str) -> Result<()> {
        match f.data_type() {
            DataType::Struct(fs) if fs.is_empty() => bail!(
                "{path}: a record without fields (`()`, `Option<()>`) has no Parquet form; \
                 convert it to Arrow IPC (.arrow), or leave it out with --columns"
            ),
            DataType::Struct(fs) => fs
                .iter()
                .try_for_each(|c| walk(c, &format!("{path}.{}", c.name()))),
            DataType::List(c) | DataType::LargeList(c) | DataType::FixedSizeList(c, _) => {
                walk(c, &format!("{path}[]"))
            }
            DataType::Map(c, _) => match c.data_type() {
                DataType::Struct(kv) => kv
                    .iter()
                    .try_for_each(|x| walk(x, &format!("{path}[].{}", x.name()))),
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }
    schema
        .fields()
        .iter()
        .try_for_each(|f| walk(f, &format!("$.{}", f.name())))
}

/// The group `path` of `file`, with the groups on the way created if missing.
fn make_groups(file: &h5vec::hdf5::File, path: &str) -> Result<h5vec::hdf5::Group> {
    let mut group = file.as_group()?;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        group = if group.link_exists(part) {
            group
                .group(part)
                .with_context(|| format!("{path} in {} is not a group", file.filename()))?
        } else {
            h5vec::create_group(&group, part)?
        };
    }
    Ok(group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let h5 = |f: &str, v: &str| Endpoint::H5 {
            file: f.into(),
            vector: v.into(),
        };
        assert_eq!(Endpoint::parse("a.h5:v").unwrap(), h5("a.h5", "v"));
        assert_eq!(
            Endpoint::parse("a.h5:g/v.csv").unwrap(),
            h5("a.h5", "g/v.csv")
        );
        assert_eq!(
            Endpoint::parse("dir:x/a.h5:v").unwrap(),
            h5("dir:x/a.h5", "v")
        );
        assert_eq!(Endpoint::parse("data:v").unwrap(), h5("data", "v"));
        assert_eq!(
            Endpoint::parse("x.parquet").unwrap(),
            Endpoint::Parquet("x.parquet".into())
        );
        assert_eq!(
            Endpoint::parse("x.arrow").unwrap(),
            Endpoint::Ipc("x.arrow".into())
        );
        assert_eq!(
            Endpoint::parse("x.CSV").unwrap(),
            Endpoint::Csv("x.CSV".into())
        );
        assert_eq!(
            Endpoint::parse("x.jsonl").unwrap(),
            Endpoint::Jsonl("x.jsonl".into())
        );
        assert!(Endpoint::parse("x.txt").is_err());
        assert!(Endpoint::parse("a.h5:").is_err());
    }

    #[test]
    fn compressions() {
        assert_eq!(Codec::parse("zstd:5").unwrap(), Codec::Zstd(Some(5)));
        assert_eq!(Codec::parse("zstd").unwrap(), Codec::Zstd(None));
        assert_eq!(Codec::parse("deflate:4").unwrap(), Codec::Deflate(Some(4)));
        assert_eq!(Codec::parse("snappy").unwrap(), Codec::Snappy);
        assert_eq!(Codec::parse("none").unwrap(), Codec::None);
        assert!(Codec::parse("lz4").is_err());
        assert!(Codec::parse("zstd:x").is_err());
        assert!(Codec::parse("none:3").is_err());
    }
}
