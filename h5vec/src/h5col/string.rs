//! Fixed-length string columns: `String` and `Option<String>` (SPEC.md
//! section 9, "Scalar columns").
//!
//! Layout on disk:
//! ```text
//! <table>/<col>     1-D fixed-length UTF-8 strings, null-padded, sized to the longest
//!                   value in bytes (at the first save); fill value "" (missing)
//! ```
//! A value ends at its first NUL; readers also accept ASCII and any padding,
//! and compare against the dataset's own fill value. The same fields read
//! (and append to) categorical columns as their labels (`category`).

use std::ops::Range;

use hdf5::{Dataset, Group};
use hdf5_sys::h5t::H5T_class_t;

use crate::codec::{exhausted, open_column, range_len};
use crate::error::{Error, Place, Result};
use crate::options::WriteCtx;
use crate::raw;

use super::category::{is_categorical, CategoryReader, CategoryWriter};
use super::fields::{ColumnReader, ColumnWriter, Phase, TableColumn};
use super::table::{column_place, fixed_string_type};

/// Writes a fixed-length string column (`String` or `Option<String>`).
/// The dataset is created at the first flush, sized to the longest value.
pub struct FixedStrWriter {
    table: Group,
    name: String,
    path: Place,
    ds: Option<(Dataset, usize)>,
    vals: Vec<Option<String>>,
    written: u64,
    /// Chunk length choice; the row size is the longest value, known at
    /// the first flush.
    chunking: crate::options::RowChunks,
    compression: crate::Compression,
    /// Fletcher32 on the dataset created at the first batch.
    checksum: bool,
}

/// Reads a fixed-length string column.
pub struct FixedStrReader {
    ds: Dataset,
    path: Place,
    fill: Option<Vec<u8>>,
    buf: Vec<u8>,
    size: usize,
    pos: usize,
    row: u64,
}

/// Opens and checks fixed-length string column `name` of a table of
/// `nrows` rows, with its fill value.
pub(crate) fn open_fixed_str(table: &Group, name: &str, nrows: u64) -> Result<FixedStrReader> {
    let path = column_place(table, name);
    let (ds, _) = open_column(
        table,
        name,
        path.path(),
        &[],
        nrows,
        |t| t.class == H5T_class_t::H5T_STRING && !t.vlen_str,
        "fixed-length strings",
    )?;
    let dt = raw::dataset_type(&ds, &path)?;
    let size = dt.size();
    let fill = raw::user_fill(&ds, dt.id(), size, &path)?;
    Ok(FixedStrReader {
        ds,
        path,
        fill,
        buf: Vec::new(),
        size,
        pos: 0,
        row: 0,
    })
}

/// The bytes of a fixed-length string value: up to the first NUL.
fn cut_nul(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

impl FixedStrWriter {
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Self {
        FixedStrWriter {
            table: table.clone(),
            name: name.to_owned(),
            path: column_place(table, name),
            ds: None,
            vals: Vec::new(),
            written: 0,
            chunking: ctx.row_chunks(),
            compression: ctx.opts.get_compression().clone(),
            checksum: ctx.checksum(),
        }
    }
    fn resume(table: &Group, name: &str, nrows: u64) -> Result<Self> {
        let r = open_fixed_str(table, name, nrows)?;
        Ok(FixedStrWriter {
            table: table.clone(),
            name: name.to_owned(),
            path: r.path,
            ds: Some((r.ds, r.size)),
            vals: Vec::new(),
            written: nrows,
            chunking: crate::options::RowChunks::exactly(1),
            compression: crate::Compression::None,
            checksum: false,
        })
    }
    fn push_opt(&mut self, v: Option<&str>) -> Result<()> {
        let row = self.written + self.vals.len() as u64;
        if let Some(s) = v {
            if s.is_empty() {
                return Err(Error::encode(
                    self.path.element(row),
                    "the empty string is the column's fill value, which h5col reads as missing",
                ));
            }
            if s.as_bytes().contains(&0) {
                return Err(Error::encode(
                    self.path.element(row),
                    "string contains a NUL byte, which ends a fixed-length string",
                ));
            }
        }
        self.vals.push(v.map(str::to_owned));
        Ok(())
    }
    fn flush_values(&mut self) -> Result<()> {
        let (ds, size) = match &self.ds {
            Some(d) => d.clone(),
            None => {
                let size = self
                    .vals
                    .iter()
                    .map(|v| v.as_ref().map_or(0, String::len))
                    .max()
                    .unwrap_or(0)
                    .max(1);
                let dt = fixed_string_type(size, true, &self.path)?;
                let spec = raw::ColumnSpec {
                    dtype: &dt,
                    inner: &[],
                    chunk_rows: self.chunking.rows(size),
                    compression: &self.compression,
                    checksum: self.checksum,
                };
                let fill = vec![0u8; size];
                let ds = raw::create_column_with_fill(
                    &self.table,
                    &self.name,
                    &spec,
                    dt.id(),
                    &fill,
                    &self.path,
                )?;
                self.ds = Some((ds.clone(), size));
                (ds, size)
            }
        };
        let mut buf = vec![0u8; size * self.vals.len()];
        for (i, v) in self.vals.iter().enumerate() {
            let b = v.as_deref().unwrap_or("").as_bytes();
            if b.len() > size {
                return Err(Error::encode(
                    self.path.element(self.written + i as u64),
                    format!(
                        "{} bytes do not fit the column's fixed length of {size} bytes",
                        b.len()
                    ),
                ));
            }
            buf[i * size..i * size + b.len()].copy_from_slice(b);
        }
        let dt = raw::dataset_type(&ds, &self.path)?;
        let rows = self.vals.len() as u64;
        // `buf` holds `rows` values of the dataset's own type (size bytes each).
        crate::pipeline::rows::write_plain_rows(
            &ds,
            &dt,
            self.written,
            rows,
            &[],
            &buf,
            &self.path,
        )?;
        self.written += rows;
        self.vals.clear();
        Ok(())
    }
}

impl ColumnWriter<String> for FixedStrWriter {
    fn push(&mut self, value: &String) -> Result<()> {
        self.push_opt(Some(value))
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        match phase {
            Phase::Values => self.flush_values(),
            _ => Ok(()),
        }
    }
}

impl ColumnWriter<Option<String>> for FixedStrWriter {
    fn push(&mut self, value: &Option<String>) -> Result<()> {
        self.push_opt(value.as_deref())
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        <Self as ColumnWriter<String>>::flush(self, phase)
    }
}

impl FixedStrReader {
    fn load_rows(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, &self.path)?;
        let (buf, size) = raw::read_rows_own_type(&self.ds, rows.start, n, &self.path)?;
        self.buf = buf;
        self.size = size;
        self.pos = 0;
        self.row = rows.start;
        Ok(())
    }
    /// Reads rows `rows` and hands each to `each`: `None` where it equals
    /// the fill value, else its text (cut at the first NUL, UTF-8 checked:
    /// an error names the row).
    #[cfg(feature = "arrow")]
    pub(crate) fn read_each(
        &mut self,
        rows: Range<u64>,
        mut each: impl FnMut(Option<&str>),
    ) -> Result<()> {
        self.load_rows(rows)?;
        let fill = self.fill.as_deref().map(cut_nul);
        let size = self.size.max(1);
        for (i, raw_v) in self.buf.chunks(size).enumerate() {
            let v = cut_nul(raw_v);
            if fill == Some(v) {
                each(None);
                continue;
            }
            let row = self.row + i as u64;
            let s = std::str::from_utf8(v)
                .map_err(|_| Error::invalid(self.path.element(row), "string is not valid UTF-8"))?;
            each(Some(s));
        }
        Ok(())
    }

    /// Whether the dataset has a user-defined fill value (which marks missing values).
    #[cfg(feature = "arrow")]
    pub(crate) fn has_fill(&self) -> bool {
        self.fill.is_some()
    }

    fn next_opt(&mut self) -> Result<(u64, Option<String>)> {
        let raw_v = self
            .buf
            .get(self.pos..self.pos + self.size)
            .ok_or_else(|| exhausted(&self.path))?;
        let row = self.row;
        self.pos += self.size;
        self.row += 1;
        let v = cut_nul(raw_v);
        if let Some(f) = &self.fill {
            if v == cut_nul(f) {
                return Ok((row, None));
            }
        }
        let s = std::str::from_utf8(v)
            .map_err(|_| Error::invalid(self.path.element(row), "string is not valid UTF-8"))?;
        Ok((row, Some(s.to_owned())))
    }
}

impl ColumnReader<String> for FixedStrReader {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<String> {
        match self.next_opt()? {
            (_, Some(s)) => Ok(s),
            (row, None) => Err(Error::invalid(
                self.path.element(row),
                "missing value (the column's fill value); load the column as Option<String>",
            )),
        }
    }
}

impl ColumnReader<Option<String>> for FixedStrReader {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<Option<String>> {
        self.next_opt().map(|(_, v)| v)
    }
}

/// Writes a `String` / `Option<String>` column: a fixed-length string
/// column, or (appending to one) a categorical column, from its labels.
pub enum StrColumnWriter {
    /// A fixed-length string column.
    Fixed(FixedStrWriter),
    /// A categorical column.
    Categorical(CategoryWriter),
}

/// Reads a `String` / `Option<String>` column: a fixed-length string
/// column, or a categorical column as its labels.
pub enum StrColumnReader {
    /// A fixed-length string column.
    Fixed(FixedStrReader),
    /// A categorical column.
    Categorical(CategoryReader),
}

// `String` and `Option<String>` are the same column: `None` is "" (or the
// missing code of a categorical column).
macro_rules! fixed_str_columns {
    ($($col:ty),*) => {$(
        impl ColumnWriter<$col> for StrColumnWriter {
            fn push(&mut self, value: &$col) -> Result<()> {
                match self {
                    StrColumnWriter::Fixed(w) => w.push(value),
                    StrColumnWriter::Categorical(w) => w.push(value),
                }
            }
            fn flush(&mut self, phase: Phase) -> Result<()> {
                match self {
                    StrColumnWriter::Fixed(w) => ColumnWriter::<$col>::flush(w, phase),
                    StrColumnWriter::Categorical(w) => ColumnWriter::<$col>::flush(w, phase),
                }
            }
        }
        impl ColumnReader<$col> for StrColumnReader {
            fn load(&mut self, rows: Range<u64>) -> Result<()> {
                match self {
                    StrColumnReader::Fixed(r) => ColumnReader::<$col>::load(r, rows),
                    StrColumnReader::Categorical(r) => ColumnReader::<$col>::load(r, rows),
                }
            }
            fn next(&mut self) -> Result<$col> {
                match self {
                    StrColumnReader::Fixed(r) => r.next(),
                    StrColumnReader::Categorical(r) => r.next(),
                }
            }
        }
        impl TableColumn for $col {
            type Writer = StrColumnWriter;
            type Reader = StrColumnReader;
            fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
                Ok(StrColumnWriter::Fixed(FixedStrWriter::create(table, name, ctx)))
            }
            fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
                Ok(if is_categorical(table, name)? {
                    StrColumnWriter::Categorical(CategoryWriter::resume(table, name, nrows)?)
                } else {
                    StrColumnWriter::Fixed(FixedStrWriter::resume(table, name, nrows)?)
                })
            }
            fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
                Ok(if is_categorical(table, name)? {
                    StrColumnReader::Categorical(CategoryReader::open(table, name, nrows)?)
                } else {
                    StrColumnReader::Fixed(open_fixed_str(table, name, nrows)?)
                })
            }
        }
    )*};
}
fixed_str_columns!(String, Option<String>);
