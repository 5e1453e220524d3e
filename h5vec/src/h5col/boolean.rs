//! Bool columns (SPEC.md section 9, "Scalar columns").
//!
//! Layout on disk:
//! ```text
//! <table>/<col>     1-D h5col bool: enum over int8, FALSE = 0, TRUE = 1; never missing
//! ```

use std::ops::Range;

use hdf5::Group;

use crate::codec::{exhausted, range_len};
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Result};
use crate::kinds::nullable::{create_bool_column, open_bool_column};
use crate::options::WriteCtx;
use crate::raw::Bits8;

use super::fields::{ColumnReader, ColumnWriter, Phase, TableColumn};
use super::table::column_path;

/// Writes a bool column (h5col enum).
pub struct BoolWriter(PodWriter<Bits8>);

/// Reads a bool column (h5col enum).
pub struct BoolReader {
    col: PodReader<Bits8>,
    buf: std::vec::IntoIter<Bits8>,
    row: u64,
}

fn open_bool(table: &Group, name: &str, nrows: u64) -> Result<PodReader<Bits8>> {
    open_bool_column(table, name, &column_path(name), nrows)
}

impl TableColumn for bool {
    type Writer = BoolWriter;
    type Reader = BoolReader;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        let path = column_path(name);
        Ok(BoolWriter(create_bool_column(
            table,
            name,
            &path,
            ctx.chunk_rows(1),
            ctx.opts.get_compression(),
            ctx.checksum(),
        )?))
    }
    fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
        let r = open_bool(table, name, nrows)?;
        let path = column_path(name);
        Ok(BoolWriter(PodWriter::resume(
            r.ds,
            Vec::new(),
            nrows,
            &path,
        )?))
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        Ok(BoolReader {
            col: open_bool(table, name, nrows)?,
            buf: Vec::new().into_iter(),
            row: 0,
        })
    }
}

impl ColumnWriter<bool> for BoolWriter {
    fn push(&mut self, value: &bool) -> Result<()> {
        self.0.buf.push(Bits8(u8::from(*value)));
        Ok(())
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        match phase {
            Phase::Values => self.0.flush(),
            _ => Ok(()),
        }
    }
}

impl ColumnReader<bool> for BoolReader {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.col.place())?;
        self.buf = self.col.read(rows.start, n)?.into_iter();
        self.row = rows.start;
        Ok(())
    }
    fn next(&mut self) -> Result<bool> {
        let b = self.buf.next().ok_or_else(|| exhausted(self.col.place()))?;
        let row = self.row;
        self.row += 1;
        match b.0 {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(bad_bool(&self.col, row, v)),
        }
    }
}

/// Value `v` of row `row` of bool column `col` is neither 0 nor 1.
fn bad_bool(col: &PodReader<Bits8>, row: u64, v: u8) -> Error {
    Error::invalid(col.element(row), crate::kinds::scalar::bool_refused(v))
}

/// Opens and checks bool column `name` of a table of `nrows` rows.
pub(crate) fn open_bool_col(table: &Group, name: &str, nrows: u64) -> Result<PodReader<Bits8>> {
    open_bool(table, name, nrows)
}
