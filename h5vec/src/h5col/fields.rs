//! The traits that map a derived struct's fields to table columns.
//!
//! Layout on disk: one member `<table>/<name>` per field, in declaration
//! order (the `column-order` attribute, see `table`); each column type
//! documents its own layout (`number`, `boolean`, `string`, `list`).

use std::ops::Range;

use hdf5::Group;

use crate::codec::Codec;
use crate::error::{Error, Result};
use crate::kinds::record::FieldList;
use crate::options::WriteCtx;

/// Which datasets a flush writes (h5col writes values, then masks, then offsets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Value datasets: scalar columns and list elements (`VALUES`, recursively).
    Values,
    /// Top-level `MASK` datasets of nullable list columns.
    Masks,
    /// Top-level `OFFSETS` datasets of list columns.
    Offsets,
}

/// Writes one column of a table.
pub trait ColumnWriter<T> {
    /// Buffers one value.
    fn push(&mut self, value: &T) -> Result<()>;
    /// Writes the buffered datasets of `phase`.
    fn flush(&mut self, phase: Phase) -> Result<()>;
}

/// Reads one column of a table.
pub trait ColumnReader<T> {
    /// Reads rows `rows` (one HDF5 read per dataset).
    fn load(&mut self, rows: Range<u64>) -> Result<()>;
    /// The next loaded value.
    fn next(&mut self) -> Result<T>;
}

/// A Rust type that can be an h5col table column.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an h5col table column",
    note = "columns are numbers, bool, String, fieldless enums (categorical columns), Option of a number, String or fieldless enum, Vec<T> and Option<Vec<T>>"
)]
pub trait TableColumn: Sized + 'static {
    /// Writes the column.
    type Writer: ColumnWriter<Self>;
    /// Reads the column.
    type Reader: ColumnReader<Self>;
    /// Creates column `name` in `table`.
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer>;
    /// Opens column `name` (checked as [`open`](Self::open)) to append after `nrows` rows.
    fn resume(table: &Group, name: &str, nrows: u64, ctx: &WriteCtx<'_>) -> Result<Self::Writer>;
    /// Opens and checks column `name` of a table of `nrows` rows.
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader>;
}

/// A record's fields as table columns: implemented for the cons list
/// [`Record::Fields`] when every field's type is a [`TableColumn`].
pub trait TableFields: FieldList {
    /// The columns' writers.
    type Writers;
    /// The columns' readers.
    type Readers;
    /// Creates every column.
    fn table_create(table: &Group, names: &[&str], ctx: &WriteCtx<'_>) -> Result<Self::Writers>;
    /// Opens every column for appending.
    fn table_resume(
        table: &Group,
        names: &[&str],
        nrows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Writers>;
    /// Opens every column for reading.
    fn table_open(table: &Group, names: &[&str], nrows: u64) -> Result<Self::Readers>;
    /// Pushes one row.
    fn table_push(w: &mut Self::Writers, refs: Self::Refs<'_>) -> Result<()>;
    /// Flushes one phase of every column.
    fn table_flush(w: &mut Self::Writers, phase: Phase) -> Result<()>;
    /// Loads rows in every column.
    fn table_load(r: &mut Self::Readers, rows: Range<u64>) -> Result<()>;
    /// Takes one row.
    fn table_next(r: &mut Self::Readers) -> Result<Self::Values>;
}

impl TableFields for () {
    type Writers = ();
    type Readers = ();
    fn table_create(_: &Group, _: &[&str], _: &WriteCtx<'_>) -> Result<()> {
        Ok(())
    }
    fn table_resume(_: &Group, _: &[&str], _: u64, _: &WriteCtx<'_>) -> Result<()> {
        Ok(())
    }
    fn table_open(_: &Group, _: &[&str], _: u64) -> Result<()> {
        Ok(())
    }
    fn table_push(_: &mut (), _: ()) -> Result<()> {
        Ok(())
    }
    fn table_flush(_: &mut (), _: Phase) -> Result<()> {
        Ok(())
    }
    fn table_load(_: &mut (), _: Range<u64>) -> Result<()> {
        Ok(())
    }
    fn table_next(_: &mut ()) -> Result<()> {
        Ok(())
    }
}

fn split<'a, 'b>(names: &'b [&'a str]) -> Result<(&'a str, &'b [&'a str])> {
    names
        .split_first()
        .map(|(n, r)| (*n, r))
        .ok_or_else(|| Error::invalid("$", "fewer field names than fields"))
}

impl<C, Rest> TableFields for (C, Rest)
where
    C: Codec + 'static,
    C::Value: TableColumn,
    Rest: TableFields,
{
    type Writers = (<C::Value as TableColumn>::Writer, Rest::Writers);
    type Readers = (<C::Value as TableColumn>::Reader, Rest::Readers);

    fn table_create(table: &Group, names: &[&str], ctx: &WriteCtx<'_>) -> Result<Self::Writers> {
        let (n, rest) = split(names)?;
        let w = C::Value::create(table, n, ctx)?;
        Ok((w, Rest::table_create(table, rest, ctx)?))
    }
    fn table_resume(
        table: &Group,
        names: &[&str],
        nrows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Writers> {
        let (n, rest) = split(names)?;
        let w = C::Value::resume(table, n, nrows, ctx)?;
        Ok((w, Rest::table_resume(table, rest, nrows, ctx)?))
    }
    fn table_open(table: &Group, names: &[&str], nrows: u64) -> Result<Self::Readers> {
        let (n, rest) = split(names)?;
        let r = C::Value::open(table, n, nrows)?;
        Ok((r, Rest::table_open(table, rest, nrows)?))
    }
    fn table_push(w: &mut Self::Writers, refs: Self::Refs<'_>) -> Result<()> {
        w.0.push(refs.0)?;
        Rest::table_push(&mut w.1, refs.1)
    }
    fn table_flush(w: &mut Self::Writers, phase: Phase) -> Result<()> {
        w.0.flush(phase)?;
        Rest::table_flush(&mut w.1, phase)
    }
    fn table_load(r: &mut Self::Readers, rows: Range<u64>) -> Result<()> {
        r.0.load(rows.clone())?;
        Rest::table_load(&mut r.1, rows)
    }
    fn table_next(r: &mut Self::Readers) -> Result<Self::Values> {
        let v = r.0.next()?;
        Ok((v, Rest::table_next(&mut r.1)?))
    }
}
