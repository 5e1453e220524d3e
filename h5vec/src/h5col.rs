//! h5col tables (seed 001): read and write the tables of the h5col
//! reference implementation, one Rust struct per row.
//!
//! Layout on disk:
//! ```text
//! <table>/                 group; attributes (h5col writes them in this order):
//!                            CLASS   = "COLUMN_TABLE"  fixed-length ASCII, null-padded, NUL counted
//!                            VERSION = "1.0"           same type; readers accept major version 1
//!                            column-order              1-D fixed-length UTF-8 strings, the column
//!                                                      names in order (sized longest name + 1)
//!                            NROWS                     scalar uint64, the committed row count,
//!                                                      rewritten last after every append
//!                          (TITLE and other attributes are allowed and ignored)
//! <table>/<col>            a number column: 1-D dataset of the number type, fill value =
//!                          h5col's "missing" marker (int32 -2147483647, int64
//!                          -9223372036854775807, float 9.969209968386869e36, ...)
//! <table>/<col>            a bool column: 1-D h5col bool (enum over int8, FALSE = 0, TRUE = 1),
//!                          never missing
//! <table>/<col>            a string column: 1-D fixed-length UTF-8 strings, null-padded,
//!                          sized to the longest value in bytes; fill value "" (missing)
//! <table>/<col>/           a list column: exactly `crate::kinds::list`'s group
//!                          (CLASS = "LIST_COLUMN", KIND = "OFFSETS", OFFSETS, VALUES,
//!                          MASK for nullable lists)
//! ```
//! Every dataset may be longer than NROWS (a truncated table or an
//! interrupted append): readers use rows `0..NROWS`, and offsets
//! `0..=NROWS` of list columns, never the extents. Appends write every
//! column's values first, then the masks, then the offsets, flush the file,
//! and only then rewrite NROWS.
//!
//! Rust field types map to columns through [`TableColumn`]: `i8`..`u64`,
//! `f32`, `f64` (and `Option` of them: `None` is the fill value), `bool`,
//! `String` and `Option<String>` (`None` is ""), `Vec<T>` and
//! `Option<Vec<T>>` for every list element type of [`ListItem`] (including
//! `Option<number>` elements, stored as the fill value).

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::{Dataset, Group};
use hdf5_sys::h5t::{self, H5T_class_t};

use crate::codec::{open_column, Codec, Decoder, Encoder};
use crate::column::{PodReader, PodWriter};
use crate::error::{Context, Error, Result};
use crate::kinds::list::{ItemCodec, ListCodec, ListDecoder, ListEncoder, ListItem};
use crate::kinds::nullable::{create_mask, open_mask, MASK};
use crate::kinds::record::{FieldList, Record};
use crate::options::{SaveOptions, WriteCtx};
use crate::raw::{self, Bits8, Pod};
use crate::schema::{Schema, Stored};

/// `CLASS` of a table group.
pub const COLUMN_TABLE: &str = "COLUMN_TABLE";
/// `VERSION` h5vec writes.
pub const VERSION: &str = "1.0";
/// Name of the row-count attribute.
pub const NROWS: &str = "NROWS";
/// Name of the column-order attribute.
pub const COLUMN_ORDER: &str = "column-order";

/// Rows read per batch.
const BATCH: u64 = 1 << 16;

// ---------------------------------------------------------------------------
// Public API.

/// Loads table `name` of `parent` as one `T` per row; `T`'s fields are the
/// columns (by name; the table may hold more columns than `T` reads).
///
/// The table is checked first (CLASS, VERSION, NROWS, every column's type,
/// members and extents); reading then uses exactly NROWS rows. Errors name
/// the table or the column (`/table/col`).
pub fn load_table<T>(parent: &Group, name: &str) -> Result<Vec<T>>
where
    T: Record,
    T::Fields: TableFields,
{
    let table = open_table(parent, name)?;
    let _walked = crate::guard::check(
        &table,
        crate::guard::Container::Table,
        crate::guard::Access::Read,
    )?;
    let nrows = check_table(&table)?;
    let path = table.name();
    crate::limits::check_empty_rows::<T>(nrows, &path)?;
    let mut readers = T::Fields::table_open(&table, T::FIELD_NAMES, nrows)?;
    let mut out = Vec::new();
    let mut start = 0;
    while start < nrows {
        let end = nrows.min(start + BATCH);
        crate::limits::grow(&mut out, end - start, nrows, &path)?;
        T::Fields::table_load(&mut readers, start..end)?;
        for _ in start..end {
            out.push(T::from_parts(T::Fields::table_next(&mut readers)?));
        }
        start = end;
    }
    Ok(out)
}

/// Saves `rows` as a new h5col table `name` in `parent`, one column per
/// field of `T` (in declaration order, recorded in `column-order`).
///
/// The name must not exist yet; a failed save removes the partly written group.
pub fn save_table<T>(parent: &Group, name: &str, rows: &[T]) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    crate::vector::check_new_name(name, "table")?;
    if parent.link_exists(name) {
        return Err(Error::bad_name(
            format!("table `{name}`"),
            format!("`{}` already exists in `{}`", name, parent.name()),
        ));
    }
    let table = parent.create_group(name).at(name)?;
    let result = write_new_table(&table, rows);
    if result.is_err() {
        drop(table);
        // Best effort: the original error is what the caller needs to see.
        let _ = parent.unlink(name);
    }
    result
}

/// Appends `rows` to the existing table `name` of `parent` (written by h5col
/// or by [`save_table`]). `T`'s fields must be exactly the table's columns.
///
/// Rows past NROWS (a stale tail) are overwritten. NROWS is rewritten last,
/// after the data is flushed, so an interrupted append leaves the table as
/// it was.
pub fn append_table<T>(parent: &Group, name: &str, rows: &[T]) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    let table = open_table(parent, name)?;
    let _walked = crate::guard::check(
        &table,
        crate::guard::Container::Table,
        crate::guard::Access::Append,
    )?;
    let nrows = check_table(&table)?;
    let path = table.name();
    let mut members = table.member_names().at(&path)?;
    members.sort();
    let mut want: Vec<&str> = T::FIELD_NAMES.to_vec();
    want.sort();
    if members != want {
        return Err(Error::mismatch(
            &path,
            format!("columns {want:?} (append writes every column)"),
            format!("{members:?}"),
        ));
    }
    let opts = SaveOptions::default();
    let ctx = WriteCtx {
        opts: &opts,
        len_hint: nrows.saturating_add(rows.len() as u64),
    };
    let mut w = T::Fields::table_resume(&table, T::FIELD_NAMES, nrows, &ctx)?;
    push_and_commit::<T>(&table, &mut w, rows, nrows)
}

// ---------------------------------------------------------------------------
// The table group.

fn open_table(parent: &Group, name: &str) -> Result<Group> {
    let p = format!("{}/{name}", parent.name().trim_end_matches('/'));
    if !parent.link_exists(name) {
        return Err(Error::mismatch(&p, "an h5col table group", "nothing"));
    }
    parent
        .group(name)
        .map_err(|_| Error::mismatch(&p, "an h5col table group", "a dataset"))
}

/// Checks the table attributes and returns NROWS.
fn check_table(table: &Group) -> Result<u64> {
    let path = table.name();
    let class = raw::attr_string(table, "CLASS", &path)?;
    if class.as_deref() != Some(COLUMN_TABLE) {
        return Err(Error::mismatch(
            format!("{path} (attribute CLASS)"),
            format!("\"{COLUMN_TABLE}\""),
            class.map_or("no CLASS attribute".into(), |c| format!("{c:?}")),
        ));
    }
    let vp = format!("{path} (attribute VERSION)");
    let version = raw::attr_string(table, "VERSION", &path)?
        .ok_or_else(|| Error::mismatch(&vp, "a VERSION attribute", "nothing"))?;
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u64>().ok());
    if major != Some(1) || !version.contains('.') {
        return Err(Error::mismatch(
            &vp,
            "an h5col version 1.x",
            format!("{version:?}"),
        ));
    }
    let nrows = read_nrows(table, &path)?;
    if let Some(order) = read_column_order(table, &path)? {
        for c in &order {
            if !table.link_exists(c) {
                return Err(Error::mismatch(
                    format!("{path}/{c}"),
                    "the column listed in column-order",
                    "nothing",
                ));
            }
        }
    }
    Ok(nrows)
}

fn read_nrows(table: &Group, path: &str) -> Result<u64> {
    let p = format!("{path} (attribute {NROWS})");
    if !table.attr_names().at(path)?.iter().any(|n| n == NROWS) {
        return Err(Error::mismatch(&p, "a scalar uint64 NROWS", "nothing"));
    }
    let a = table.attr(NROWS).at(&p)?;
    let dt = a.dtype().at(&p)?;
    let ok = raw::sync(|| unsafe {
        h5t::H5Tget_class(dt.id()) == H5T_class_t::H5T_INTEGER
            && h5t::H5Tget_sign(dt.id()) == hdf5_sys::h5t::H5T_sign_t::H5T_SGN_NONE
            && h5t::H5Tget_size(dt.id()) <= 8
    });
    if !ok {
        return Err(Error::mismatch(
            &p,
            "an unsigned integer (uint64)",
            format!("{:?}", dt.to_descriptor().map(|d| d.to_string())),
        ));
    }
    if !a.is_scalar() {
        return Err(Error::mismatch(
            &p,
            "a scalar",
            format!("shape {:?}", a.shape()),
        ));
    }
    a.read_scalar::<u64>().at(&p)
}

fn write_nrows(table: &Group, n: u64, path: &str) -> Result<()> {
    let p = format!("{path} (attribute {NROWS})");
    if table.attr_names().at(&p)?.iter().any(|a| a == NROWS) {
        table.attr(NROWS).at(&p)?.write_scalar(&n).at(&p)
    } else {
        table
            .new_attr::<u64>()
            .shape(())
            .create(NROWS)
            .at(&p)?
            .write_scalar(&n)
            .at(&p)
    }
}

/// Reads `column-order` if present: a 1-D array of strings.
fn read_column_order(table: &Group, path: &str) -> Result<Option<Vec<String>>> {
    if !table
        .attr_names()
        .at(path)?
        .iter()
        .any(|n| n == COLUMN_ORDER)
    {
        return Ok(None);
    }
    let p = format!("{path} (attribute {COLUMN_ORDER})");
    let a = table.attr(COLUMN_ORDER).at(&p)?;
    let dt = a.dtype().at(&p)?;
    let (class, size, var) = raw::sync(|| unsafe {
        (
            h5t::H5Tget_class(dt.id()),
            h5t::H5Tget_size(dt.id()),
            h5t::H5Tis_variable_str(dt.id()) > 0,
        )
    });
    if class != H5T_class_t::H5T_STRING || a.ndim() != 1 {
        return Err(Error::mismatch(
            &p,
            "a 1-D array of strings",
            format!("class {class:?}, shape {:?}", a.shape()),
        ));
    }
    if var {
        let v = a
            .read_raw::<hdf5::types::VarLenUnicode>()
            .or_else(|_| {
                a.read_raw::<hdf5::types::VarLenAscii>().map(|v| {
                    v.into_iter()
                        .map(|s| s.as_str().parse().unwrap_or_default())
                        .collect()
                })
            })
            .at(&p)?;
        return Ok(Some(v.into_iter().map(|s| s.as_str().to_owned()).collect()));
    }
    let n = a.size();
    // The attribute's own storage holds every byte of its value.
    let stored = raw::sync(|| unsafe { hdf5_sys::h5a::H5Aget_storage_size(a.id()) });
    let total = n
        .checked_mul(size)
        .filter(|&t| t as u64 <= stored)
        .ok_or_else(|| {
            Error::invalid(
                &p,
                format!("{n} names of {size} bytes do not fit the {stored} bytes stored"),
            )
        })?;
    let mut buf = vec![0u8; total];
    raw::sync(|| unsafe {
        hdf5::h5check(hdf5_sys::h5a::H5Aread(
            a.id(),
            dt.id(),
            buf.as_mut_ptr().cast(),
        ))
    })
    .at(&p)?;
    let mut out = Vec::with_capacity(n);
    for chunk in buf.chunks(size.max(1)) {
        let end = chunk.iter().position(|&b| b == 0).unwrap_or(chunk.len());
        out.push(
            String::from_utf8(chunk[..end].to_vec())
                .map_err(|_| Error::invalid(&p, "column name is not valid UTF-8"))?,
        );
    }
    Ok(Some(out))
}

/// Writes `column-order` as h5col does: 1-D fixed-length UTF-8 strings,
/// null-padded, sized to the longest name plus one byte.
fn write_column_order(table: &Group, names: &[&str], path: &str) -> Result<()> {
    let size = names.iter().map(|n| n.len()).max().unwrap_or(0) + 1;
    let mut buf = vec![0u8; size * names.len()];
    for (i, n) in names.iter().enumerate() {
        buf[i * size..i * size + n.len()].copy_from_slice(n.as_bytes());
    }
    let p = format!("{path} (attribute {COLUMN_ORDER})");
    let dt = fixed_string_type(size, true, &p)?;
    let a = table
        .new_attr_builder()
        .empty_as(&dt)
        .shape(names.len())
        .create(COLUMN_ORDER)
        .at(&p)?;
    raw::sync(|| unsafe {
        hdf5::h5check(hdf5_sys::h5a::H5Awrite(
            a.id(),
            dt.id(),
            buf.as_ptr().cast(),
        ))
    })
    .at(&p)?;
    Ok(())
}

/// Fixed-length, null-padded string type of `size` bytes.
fn fixed_string_type(size: usize, utf8: bool, path: &str) -> Result<hdf5::Datatype> {
    let dt = raw::copy_type(*h5t::H5T_C_S1, path)?;
    raw::sync(|| unsafe {
        hdf5::h5check(h5t::H5Tset_size(dt.id(), size.max(1)))?;
        hdf5::h5check(h5t::H5Tset_strpad(dt.id(), h5t::H5T_str_t::H5T_STR_NULLPAD))?;
        hdf5::h5check(h5t::H5Tset_cset(
            dt.id(),
            if utf8 {
                h5t::H5T_cset_t::H5T_CSET_UTF8
            } else {
                h5t::H5T_cset_t::H5T_CSET_ASCII
            },
        ))
    })
    .at(path)?;
    Ok(dt)
}

fn write_new_table<T>(table: &Group, rows: &[T]) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    let path = table.name();
    raw::write_attr_ascii(table, "CLASS", COLUMN_TABLE, &path)?;
    raw::write_attr_ascii(table, "VERSION", VERSION, &path)?;
    write_column_order(table, T::FIELD_NAMES, &path)?;
    write_nrows(table, 0, &path)?;
    let opts = SaveOptions::default();
    let ctx = WriteCtx {
        opts: &opts,
        len_hint: rows.len() as u64,
    };
    let mut w = T::Fields::table_create(table, T::FIELD_NAMES, &ctx)?;
    push_and_commit::<T>(table, &mut w, rows, 0)
}

fn push_and_commit<T>(
    table: &Group,
    w: &mut <T::Fields as TableFields>::Writers,
    rows: &[T],
    nrows: u64,
) -> Result<()>
where
    T: Record,
    T::Fields: TableFields,
{
    let path = table.name();
    for r in rows {
        T::Fields::table_push(w, r.parts())?;
    }
    // h5col's order: values, then masks, then offsets; flush; then NROWS.
    T::Fields::table_flush(w, Phase::Values)?;
    T::Fields::table_flush(w, Phase::Masks)?;
    T::Fields::table_flush(w, Phase::Offsets)?;
    crate::column::complete_file(table)?;
    table.file().at(&path)?.flush().at(&path)?;
    let n = nrows
        .checked_add(rows.len() as u64)
        .ok_or_else(|| Error::encode(&path, "row count overflows"))?;
    write_nrows(table, n, &path)?;
    table.file().at(&path)?.flush().at(&path)
}

fn column_path(table: &Group, name: &str) -> String {
    format!("{}/{name}", table.name().trim_end_matches('/'))
}

// ---------------------------------------------------------------------------
// The traits: struct fields -> columns.

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
    note = "columns are numbers, bool, String, Option of a number or String, Vec<T> and Option<Vec<T>>"
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
        .ok_or_else(|| Error::invalid("table", "fewer field names than fields"))
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

// ---------------------------------------------------------------------------
// Fill values.

/// A number type with h5col's "missing" fill value.
pub trait FillNumber: Pod + PartialEq + std::fmt::Debug {
    /// The fill value h5col recommends (and h5vec writes) for this type.
    const FILL: Self;
    /// Whether `self` equals the fill value `fill` (NaN equals NaN).
    fn is_fill(self, fill: Self) -> bool;
    /// The value's bytes in memory.
    fn bytes(self) -> Vec<u8>;
    /// A value from its bytes in memory (exactly `size_of::<Self>()`).
    fn from_bytes(b: &[u8]) -> Option<Self>;
}

macro_rules! fill_number {
    ($($t:ty => $fill:expr, $eq:expr);* $(;)?) => {$(
        impl FillNumber for $t {
            const FILL: Self = $fill;
            #[inline]
            fn is_fill(self, fill: Self) -> bool {
                #[allow(clippy::redundant_closure_call)]
                ($eq)(self, fill)
            }
            fn bytes(self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
            fn from_bytes(b: &[u8]) -> Option<Self> {
                Some(<$t>::from_ne_bytes(b.try_into().ok()?))
            }
        }
    )*};
}
fill_number! {
    i8 => i8::MIN + 1, |a, b| a == b;
    i16 => i16::MIN + 1, |a, b| a == b;
    i32 => i32::MIN + 1, |a, b| a == b;
    i64 => i64::MIN + 1, |a, b| a == b;
    u8 => u8::MAX, |a, b| a == b;
    u16 => u16::MAX, |a, b| a == b;
    u32 => u32::MAX, |a, b| a == b;
    u64 => u64::MAX, |a, b| a == b;
    f32 => 9.969_209_968_386_869e36_f64 as f32, |a: f32, b: f32| a == b || (a.is_nan() && b.is_nan());
    f64 => 9.969_209_968_386_869e36_f64, |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
}

/// Creates a 1-D number dataset with h5col's fill value.
fn create_number<T: FillNumber>(
    group: &Group,
    name: &str,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PodWriter<T>> {
    let dt = raw::copy_type(T::file_type(), path)?;
    let spec = raw::ColumnSpec {
        dtype: &dt,
        inner: &[],
        chunk_rows: ctx.chunk_rows(std::mem::size_of::<T>()),
        compression: ctx.opts.get_compression(),
    };
    let ds =
        raw::create_column_with_fill(group, name, &spec, T::mem_type(), &T::FILL.bytes(), path)?;
    PodWriter::resume(ds, Vec::new(), 0, path)
}

/// Opens a 1-D number dataset with at least `rows` rows and reads its fill value.
fn open_number<T: FillNumber>(
    group: &Group,
    name: &str,
    path: &str,
    rows: u64,
) -> Result<(PodReader<T>, Option<T>)> {
    let (ds, n) = open_column(group, name, path, &[], rows, T::accepts, T::ENCODED)?;
    let fill = raw::user_fill(&ds, T::mem_type(), std::mem::size_of::<T>(), path)?
        .and_then(|b| T::from_bytes(&b));
    Ok((PodReader::new(ds, Vec::new(), n, path)?, fill))
}

// ---------------------------------------------------------------------------
// Number columns.

/// Writes a number column (`T` or `Option<T>`).
pub struct NumberWriter<T: FillNumber> {
    col: PodWriter<T>,
    path: String,
}

/// Reads a number column (`T` or `Option<T>`).
pub struct NumberReader<T: FillNumber> {
    col: PodReader<T>,
    fill: Option<T>,
    buf: std::vec::IntoIter<T>,
    row: u64,
}

impl<T: FillNumber> NumberWriter<T> {
    fn push_value(&mut self, v: T) -> Result<()> {
        if v.is_fill(T::FILL) {
            let row = self.col.written + self.col.buf.len() as u64;
            return Err(Error::encode(
                format!("{}[{row}]", self.path),
                format!("{v:?} is the column's fill value, which h5col reads as missing"),
            ));
        }
        self.col.buf.push(v);
        Ok(())
    }
}

impl<T: FillNumber> NumberReader<T> {
    fn next_raw(&mut self) -> Result<(u64, Option<T>)> {
        let v = self
            .buf
            .next()
            .ok_or_else(|| crate::codec::exhausted(self.col.path()))?;
        let row = self.row;
        self.row += 1;
        Ok((row, (!self.fill.is_some_and(|f| v.is_fill(f))).then_some(v)))
    }
    fn load_rows(&mut self, rows: Range<u64>) -> Result<()> {
        let n = crate::codec::range_len(&rows, self.col.path())?;
        self.buf = self.col.read(rows.start, n)?.into_iter();
        self.row = rows.start;
        Ok(())
    }
}

fn number_create<T: FillNumber>(
    table: &Group,
    name: &str,
    ctx: &WriteCtx<'_>,
) -> Result<NumberWriter<T>> {
    let path = column_path(table, name);
    Ok(NumberWriter {
        col: create_number(table, name, &path, ctx)?,
        path,
    })
}

fn number_open<T: FillNumber>(table: &Group, name: &str, nrows: u64) -> Result<NumberReader<T>> {
    let path = column_path(table, name);
    let (col, fill) = open_number::<T>(table, name, &path, nrows)?;
    Ok(NumberReader {
        col,
        fill,
        buf: Vec::new().into_iter(),
        row: 0,
    })
}

fn number_resume<T: FillNumber>(table: &Group, name: &str, nrows: u64) -> Result<NumberWriter<T>> {
    let r = number_open::<T>(table, name, nrows)?;
    let path = column_path(table, name);
    Ok(NumberWriter {
        col: PodWriter::resume(r.col.ds, Vec::new(), nrows, &path)?,
        path,
    })
}

impl<T: FillNumber> ColumnWriter<T> for NumberWriter<T> {
    fn push(&mut self, value: &T) -> Result<()> {
        self.push_value(*value)
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        match phase {
            Phase::Values => self.col.flush(),
            _ => Ok(()),
        }
    }
}

impl<T: FillNumber> ColumnWriter<Option<T>> for NumberWriter<T> {
    fn push(&mut self, value: &Option<T>) -> Result<()> {
        match value {
            Some(v) => self.push_value(*v),
            None => {
                self.col.buf.push(T::FILL);
                Ok(())
            }
        }
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        <Self as ColumnWriter<T>>::flush(self, phase)
    }
}

impl<T: FillNumber> ColumnReader<T> for NumberReader<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<T> {
        match self.next_raw()? {
            (_, Some(v)) => Ok(v),
            (row, None) => Err(Error::invalid(
                self.col.element(row),
                "missing value (the column's fill value); load the column as Option",
            )),
        }
    }
}

impl<T: FillNumber> ColumnReader<Option<T>> for NumberReader<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<Option<T>> {
        self.next_raw().map(|(_, v)| v)
    }
}

macro_rules! number_columns {
    ($($t:ty),*) => {$(
        impl TableColumn for $t {
            type Writer = NumberWriter<$t>;
            type Reader = NumberReader<$t>;
            fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
                number_create(table, name, ctx)
            }
            fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
                number_resume(table, name, nrows)
            }
            fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
                number_open(table, name, nrows)
            }
        }
        impl TableColumn for Option<$t> {
            type Writer = NumberWriter<$t>;
            type Reader = NumberReader<$t>;
            fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
                number_create(table, name, ctx)
            }
            fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
                number_resume(table, name, nrows)
            }
            fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
                number_open(table, name, nrows)
            }
        }
        impl ListItem for Option<$t> {
            type Item = FillItem<$t>;
        }
    )*};
}
number_columns!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

// ---------------------------------------------------------------------------
// Bool columns.

/// Writes a bool column (h5col enum).
pub struct BoolWriter(PodWriter<Bits8>);

/// Reads a bool column (h5col enum).
pub struct BoolReader {
    col: PodReader<Bits8>,
    buf: std::vec::IntoIter<Bits8>,
    row: u64,
}

fn open_bool(table: &Group, name: &str, nrows: u64) -> Result<PodReader<Bits8>> {
    let path = column_path(table, name);
    let desc = "the h5col bool type (enum over int8: FALSE = 0, TRUE = 1)";
    let (ds, n) = open_column(
        table,
        name,
        &path,
        &[],
        nrows,
        |t| t.class == H5T_class_t::H5T_ENUM && t.size == 1,
        desc,
    )?;
    let p = format!("{path} ({})", ds.name());
    if !raw::is_h5col_bool(&ds, &p)? {
        return Err(Error::mismatch(p, desc, "another enum"));
    }
    PodReader::new(ds, Vec::new(), n, &path)
}

impl TableColumn for bool {
    type Writer = BoolWriter;
    type Reader = BoolReader;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        let path = column_path(table, name);
        let dt = raw::h5col_bool(&path)?;
        Ok(BoolWriter(PodWriter::create_as(
            table,
            name,
            &dt,
            &[],
            ctx.chunk_rows(1),
            ctx.opts.get_compression(),
            &path,
        )?))
    }
    fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
        let r = open_bool(table, name, nrows)?;
        let path = column_path(table, name);
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
        let n = crate::codec::range_len(&rows, self.col.path())?;
        self.buf = self.col.read(rows.start, n)?.into_iter();
        self.row = rows.start;
        Ok(())
    }
    fn next(&mut self) -> Result<bool> {
        let b = self
            .buf
            .next()
            .ok_or_else(|| crate::codec::exhausted(self.col.path()))?;
        let row = self.row;
        self.row += 1;
        match b.0 {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(Error::invalid(
                self.col.element(row),
                format!("bool value {v} is neither FALSE (0) nor TRUE (1)"),
            )),
        }
    }
}

// ---------------------------------------------------------------------------
// Fixed-length string columns.

/// Writes a fixed-length string column (`String` or `Option<String>`).
/// The dataset is created at the first flush, sized to the longest value.
pub struct FixedStrWriter {
    table: Group,
    name: String,
    path: String,
    ds: Option<(Dataset, usize)>,
    vals: Vec<Option<String>>,
    written: u64,
    /// Chunk length choice; the row size is the longest value, known at
    /// the first flush.
    chunking: crate::options::RowChunks,
    compression: crate::Compression,
}

/// Reads a fixed-length string column.
pub struct FixedStrReader {
    ds: Dataset,
    path: String,
    fill: Option<Vec<u8>>,
    buf: Vec<u8>,
    size: usize,
    pos: usize,
    row: u64,
}

fn open_fixed_str(table: &Group, name: &str, nrows: u64) -> Result<FixedStrReader> {
    let path = column_path(table, name);
    let (ds, _) = open_column(
        table,
        name,
        &path,
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
            path: column_path(table, name),
            ds: None,
            vals: Vec::new(),
            written: 0,
            chunking: ctx.row_chunks(),
            compression: ctx.opts.get_compression().clone(),
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
        })
    }
    fn push_opt(&mut self, v: Option<&str>) -> Result<()> {
        let row = self.written + self.vals.len() as u64;
        if let Some(s) = v {
            if s.is_empty() {
                return Err(Error::encode(
                    format!("{}[{row}]", self.path),
                    "the empty string is the column's fill value, which h5col reads as missing",
                ));
            }
            if s.as_bytes().contains(&0) {
                return Err(Error::encode(
                    format!("{}[{row}]", self.path),
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
                    format!("{}[{}]", self.path, self.written + i as u64),
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
        // SAFETY: buf holds `rows` values of the dataset's own type (size bytes each).
        unsafe {
            raw::write_rows_raw(
                &ds,
                dt.id(),
                self.written,
                rows,
                &[],
                buf.as_ptr().cast(),
                &self.path,
            )?
        };
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
        let n = crate::codec::range_len(&rows, &self.path)?;
        let (buf, size) = raw::read_rows_own_type(&self.ds, rows.start, n, &self.path)?;
        self.buf = buf;
        self.size = size;
        self.pos = 0;
        self.row = rows.start;
        Ok(())
    }
    fn next_opt(&mut self) -> Result<(u64, Option<String>)> {
        let raw_v = self
            .buf
            .get(self.pos..self.pos + self.size)
            .ok_or_else(|| crate::codec::exhausted(&self.path))?;
        let row = self.row;
        self.pos += self.size;
        self.row += 1;
        let v = cut_nul(raw_v);
        if let Some(f) = &self.fill {
            if v == cut_nul(f) {
                return Ok((row, None));
            }
        }
        let s = std::str::from_utf8(v).map_err(|_| {
            Error::invalid(format!("{}[{row}]", self.path), "string is not valid UTF-8")
        })?;
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
                format!("{}[{row}]", self.path),
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

impl TableColumn for String {
    type Writer = FixedStrWriter;
    type Reader = FixedStrReader;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        Ok(FixedStrWriter::create(table, name, ctx))
    }
    fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
        FixedStrWriter::resume(table, name, nrows)
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        open_fixed_str(table, name, nrows)
    }
}

impl TableColumn for Option<String> {
    type Writer = FixedStrWriter;
    type Reader = FixedStrReader;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        Ok(FixedStrWriter::create(table, name, ctx))
    }
    fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
        FixedStrWriter::resume(table, name, nrows)
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        open_fixed_str(table, name, nrows)
    }
}

// ---------------------------------------------------------------------------
// List columns: kinds::list's group, with a MASK for Option<Vec<T>>.

/// The schema node kinds::list checks, built from the codec (h5col files
/// carry no schema; the Rust type is the schema).
fn stored_of(s: &Schema) -> Stored {
    Stored {
        kind: s.kind.clone(),
        schema: s.schema.clone(),
        codec: s.codec.clone(),
        logical_type: s.logical_type.clone(),
        encoded_type: s.encoded_type.clone(),
        dimensions: s.dimensions.clone(),
        field_names: s.field_names.clone(),
        children: s.children.iter().map(stored_of).collect(),
        extra_members: Vec::new(),
    }
}

fn list_node<T: ListItem>(mask: bool) -> Stored {
    let opts = SaveOptions::default();
    let ctx = WriteCtx {
        opts: &opts,
        len_hint: 0,
    };
    let mut node = stored_of(&<ListCodec<T> as Codec>::schema(&ctx));
    if mask {
        node.extra_members.push(MASK.to_owned());
    }
    node
}

fn list_group(table: &Group, name: &str, path: &str) -> Result<Group> {
    if !table.link_exists(name) {
        return Err(Error::mismatch(path, "a list column group", "nothing"));
    }
    table
        .group(name)
        .map_err(|_| Error::mismatch(path, "a list column group", "a dataset"))
}

/// Writes a list column (`Vec<T>` or, with a mask, `Option<Vec<T>>`).
pub struct ListWriter<T: ListItem> {
    list: ListEncoder<T::Item>,
    mask: Option<PodWriter<Bits8>>,
}

/// Reads a list column (`Vec<T>` or, with a mask, `Option<Vec<T>>`).
pub struct ListReader<T: ListItem> {
    list: ListDecoder<T::Item>,
    mask: Option<PodReader<Bits8>>,
    mbuf: std::vec::IntoIter<Bits8>,
    row: u64,
}

impl<T: ListItem> ListWriter<T> {
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>, nullable: bool) -> Result<Self> {
        let path = column_path(table, name);
        let g = table.create_group(name).at(&path)?;
        let list = ListEncoder::create_in(&g, &path, ctx)?;
        let mask = if nullable {
            Some(create_mask(&g, &path, ctx)?)
        } else {
            None
        };
        Ok(ListWriter { list, mask })
    }
    fn resume(
        table: &Group,
        name: &str,
        nrows: u64,
        ctx: &WriteCtx<'_>,
        nullable: bool,
    ) -> Result<Self> {
        let path = column_path(table, name);
        let g = list_group(table, name, &path)?;
        let list = ListEncoder::resume_in(&g, &list_node::<T>(nullable), &path, nrows, ctx)?;
        let mask = if nullable {
            let m = open_mask(&g, &path, nrows)?;
            Some(PodWriter::resume(m.ds, Vec::new(), nrows, &path)?)
        } else {
            None
        };
        Ok(ListWriter { list, mask })
    }
    fn flush_phase(&mut self, phase: Phase) -> Result<()> {
        match phase {
            Phase::Values => self.list.flush_items(),
            Phase::Masks => self.mask.as_mut().map_or(Ok(()), PodWriter::flush),
            Phase::Offsets => self.list.flush_offsets(),
        }
    }
}

impl<T: ListItem> ListReader<T> {
    fn open(table: &Group, name: &str, nrows: u64, nullable: bool) -> Result<Self> {
        let path = column_path(table, name);
        let g = list_group(table, name, &path)?;
        let mask = if nullable {
            Some(open_mask(&g, &path, nrows)?)
        } else {
            None
        };
        let list = ListDecoder::open_in(&g, &list_node::<T>(nullable), &path, nrows)?;
        Ok(ListReader {
            list,
            mask,
            mbuf: Vec::new().into_iter(),
            row: 0,
        })
    }
    fn load_rows(&mut self, rows: Range<u64>) -> Result<()> {
        if let Some(m) = &self.mask {
            let n = crate::codec::range_len(&rows, m.path())?;
            self.mbuf = m.read(rows.start, n)?.into_iter();
        }
        self.row = rows.start;
        Decoder::<Vec<T>>::load(&mut self.list, rows)
    }
}

impl<T: ListItem> ColumnWriter<Vec<T>> for ListWriter<T> {
    fn push(&mut self, value: &Vec<T>) -> Result<()> {
        self.list.push(value)
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        self.flush_phase(phase)
    }
}

impl<T: ListItem> ColumnWriter<Option<Vec<T>>> for ListWriter<T> {
    fn push(&mut self, value: &Option<Vec<T>>) -> Result<()> {
        let present = match value {
            Some(v) => {
                self.list.push(v)?;
                1
            }
            None => {
                self.list.push_empty();
                0
            }
        };
        if let Some(m) = &mut self.mask {
            m.buf.push(Bits8(present));
        }
        Ok(())
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        self.flush_phase(phase)
    }
}

impl<T: ListItem> ColumnReader<Vec<T>> for ListReader<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<Vec<T>> {
        self.row += 1;
        self.list.next()
    }
}

impl<T: ListItem> ColumnReader<Option<Vec<T>>> for ListReader<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.load_rows(rows)
    }
    fn next(&mut self) -> Result<Option<Vec<T>>> {
        let row = self.row;
        self.row += 1;
        let m = self.mask.as_ref().ok_or_else(|| {
            Error::invalid(
                "list column",
                "nullable list read without a mask (internal error)",
            )
        })?;
        let b = self
            .mbuf
            .next()
            .ok_or_else(|| crate::codec::exhausted(m.path()))?;
        match b.0 {
            1 => self.list.next().map(Some),
            0 => {
                Decoder::<Vec<T>>::skip_null(&mut self.list)?;
                Ok(None)
            }
            v => Err(Error::invalid(
                m.element(row),
                format!("MASK value {v} is neither FALSE (0) nor TRUE (1)"),
            )),
        }
    }
}

impl<T: ListItem> TableColumn for Vec<T> {
    type Writer = ListWriter<T>;
    type Reader = ListReader<T>;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        ListWriter::create(table, name, ctx, false)
    }
    fn resume(table: &Group, name: &str, nrows: u64, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        ListWriter::resume(table, name, nrows, ctx, false)
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        ListReader::open(table, name, nrows, false)
    }
}

impl<T: ListItem> TableColumn for Option<Vec<T>> {
    type Writer = ListWriter<T>;
    type Reader = ListReader<T>;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        ListWriter::create(table, name, ctx, true)
    }
    fn resume(table: &Group, name: &str, nrows: u64, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        ListWriter::resume(table, name, nrows, ctx, true)
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        ListReader::open(table, name, nrows, true)
    }
}

// ---------------------------------------------------------------------------
// Option<number> list elements: the fill value marks a missing element.

/// `Option<T>` list elements (numbers): a leaf dataset whose user-defined
/// fill value marks missing elements (h5col's rule). Also usable in vectors
/// (`Vec<Option<i32>>`), with schema kind `fill_nullable`.
pub struct FillItem<T>(PhantomData<T>);

/// Schema identifier of [`FillItem`] leaves.
pub const FILL_SCHEMA: &str = "h5vec.FillValueSchema";
/// Codec identifier of [`FillItem`] leaves.
pub const FILL_CODEC: &str = "h5vec.FillValueCodec";

fn fill_schema<T: FillNumber>() -> Schema {
    Schema::new(
        "fill_nullable",
        FILL_SCHEMA,
        FILL_CODEC,
        std::any::type_name::<Option<T>>(),
    )
    .encoded(T::ENCODED)
}

/// Writes `Option<T>` elements.
pub struct FillEncoder<T: FillNumber>(NumberWriter<T>);

/// Reads `Option<T>` elements.
pub struct FillDecoder<T: FillNumber>(NumberReader<T>);

impl<T: FillNumber> ItemCodec for FillItem<T> {
    type Value = Option<T>;
    type Encoder = FillEncoder<T>;
    type Decoder = FillDecoder<T>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        fill_schema::<T>()
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        Ok(FillEncoder(NumberWriter {
            col: create_number(parent, name, path, ctx)?,
            path: path.to_owned(),
        }))
    }
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder> {
        node.expect(&fill_schema::<T>(), path)?;
        let (col, fill) = open_number::<T>(parent, name, path, rows)?;
        Ok(FillDecoder(NumberReader {
            col,
            fill,
            buf: Vec::new().into_iter(),
            row: 0,
        }))
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        node.expect(&fill_schema::<T>(), path)?;
        let (col, _) = open_number::<T>(parent, name, path, rows)?;
        Ok(FillEncoder(NumberWriter {
            col: PodWriter::resume(col.ds, Vec::new(), rows, path)?,
            path: path.to_owned(),
        }))
    }
}

impl<T: FillNumber> Encoder<Option<T>> for FillEncoder<T> {
    fn push(&mut self, value: &Option<T>) -> Result<()> {
        ColumnWriter::<Option<T>>::push(&mut self.0, value)
    }
    fn push_null(&mut self) -> Result<()> {
        self.0.col.buf.push(T::FILL);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.0.col.flush()
    }
}

impl<T: FillNumber> Decoder<Option<T>> for FillDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.0.load_rows(rows)
    }
    fn next(&mut self) -> Result<Option<T>> {
        self.0.next_raw().map(|(_, v)| v)
    }
    fn skip(&mut self) -> Result<()> {
        self.0.next_raw().map(drop)
    }
}
