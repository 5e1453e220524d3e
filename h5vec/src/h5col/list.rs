//! List columns: `Vec<T>` and `Option<Vec<T>>` (SPEC.md section 9, "List columns").
//!
//! Layout on disk:
//! ```text
//! <table>/<col>/           exactly `crate::kinds::list`'s group: CLASS = "LIST_COLUMN",
//!                          KIND = "OFFSETS", OFFSETS (NROWS + 1 entries used), VALUES
//! <table>/<col>/MASK       (Option<Vec<T>> only) h5col bool per row, TRUE = present;
//!                          a null row has an empty span
//! ```
//! The writers and readers are `kinds::list`'s and `kinds::nullable`'s; a
//! table only splits their flush into h5col's phases (values, masks, offsets).

use std::ops::Range;

use hdf5::Group;

use crate::codec::{Codec, Decoder, Encoder};
use crate::column::PodWriter;
use crate::error::{Context, Error, Result};
use crate::evolution::LoadFlags;
use crate::kinds::list::{ListCodec, ListDecoder, ListEncoder, ListItem};
use crate::kinds::nullable::{create_mask, open_mask, MaskedDecoder, MaskedEncoder, MASK};
use crate::options::{SaveOptions, WriteCtx};
use crate::schema::Stored;

use super::fields::{ColumnReader, ColumnWriter, Phase, TableColumn};
use super::table::{column_path, column_place};

/// The schema node kinds::list checks, built from the codec (h5col files
/// carry no schema; the Rust type is the schema).
fn list_node<T: ListItem>(mask: bool) -> Stored {
    let opts = SaveOptions::default();
    let ctx = WriteCtx {
        opts: &opts,
        len_hint: 0,
    };
    let mut node = Stored::from(&<ListCodec<T> as Codec>::schema(&ctx));
    if mask {
        node.extra_members.push(MASK.to_owned());
    }
    node
}

fn list_group(table: &Group, name: &str) -> Result<Group> {
    let p = column_place(table, name);
    if !table.link_exists(name) {
        return Err(Error::mismatch(&p, "a list column group", "nothing"));
    }
    table
        .group(name)
        .map_err(|_| Error::mismatch(&p, "a list column group", "a dataset"))
}

/// Creates list column `name`: its group (returned) and the list in it.
fn create_list<T: ListItem>(
    table: &Group,
    name: &str,
    ctx: &WriteCtx<'_>,
) -> Result<(Group, String, ListEncoder<T::Item>)> {
    let path = column_path(name);
    let g = table.create_group(name).at(&path)?;
    let list = ListEncoder::create_in(&g, &path, ctx)?;
    Ok((g, path, list))
}

/// Opens list column `name` of `nrows` rows to append: its group (returned)
/// and the list in it.
fn resume_list<T: ListItem>(
    table: &Group,
    name: &str,
    nrows: u64,
    ctx: &WriteCtx<'_>,
    nullable: bool,
) -> Result<(Group, String, ListEncoder<T::Item>)> {
    let path = column_path(name);
    let g = list_group(table, name)?;
    let list = ListEncoder::resume_in(&g, &list_node::<T>(nullable), &path, nrows, ctx)?;
    Ok((g, path, list))
}

/// Writes a list column `Vec<T>`.
pub struct ListWriter<T: ListItem>(ListEncoder<T::Item>);

/// Writes a nullable list column `Option<Vec<T>>` (the list and its `MASK`).
pub struct NullableListWriter<T: ListItem>(MaskedEncoder<ListEncoder<T::Item>>);

/// Reads a list column `Vec<T>`.
pub struct ListReader<T: ListItem>(ListDecoder<T::Item>);

/// Reads a nullable list column `Option<Vec<T>>` (the list and its `MASK`).
pub struct NullableListReader<T: ListItem>(MaskedDecoder<ListDecoder<T::Item>>);

impl<T: ListItem> ColumnWriter<Vec<T>> for ListWriter<T> {
    fn push(&mut self, value: &Vec<T>) -> Result<()> {
        self.0.push(value)
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        match phase {
            Phase::Values => self.0.flush_items(),
            Phase::Masks => Ok(()),
            Phase::Offsets => self.0.flush_offsets(),
        }
    }
}

impl<T: ListItem> ColumnWriter<Option<Vec<T>>> for NullableListWriter<T> {
    fn push(&mut self, value: &Option<Vec<T>>) -> Result<()> {
        self.0.push(value)
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        match phase {
            Phase::Values => self.0.inner_mut().flush_items(),
            Phase::Masks => self.0.flush_mask(),
            Phase::Offsets => self.0.inner_mut().flush_offsets(),
        }
    }
}

impl<T: ListItem> ColumnReader<Vec<T>> for ListReader<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        Decoder::<Vec<T>>::load(&mut self.0, rows)
    }
    fn next(&mut self) -> Result<Vec<T>> {
        self.0.next()
    }
}

impl<T: ListItem> ColumnReader<Option<Vec<T>>> for NullableListReader<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        Decoder::<Option<Vec<T>>>::load(&mut self.0, rows)
    }
    fn next(&mut self) -> Result<Option<Vec<T>>> {
        self.0.next()
    }
}

impl<T: ListItem> TableColumn for Vec<T> {
    type Writer = ListWriter<T>;
    type Reader = ListReader<T>;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        let (_, _, list) = create_list::<T>(table, name, ctx)?;
        Ok(ListWriter(list))
    }
    fn resume(table: &Group, name: &str, nrows: u64, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        let (_, _, list) = resume_list::<T>(table, name, nrows, ctx, false)?;
        Ok(ListWriter(list))
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        let path = column_path(name);
        let g = list_group(table, name)?;
        let list = ListDecoder::open_in(
            &g,
            &list_node::<T>(false),
            &path,
            nrows,
            LoadFlags::default(),
        )?;
        Ok(ListReader(list))
    }
}

impl<T: ListItem> TableColumn for Option<Vec<T>> {
    type Writer = NullableListWriter<T>;
    type Reader = NullableListReader<T>;
    fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        let (g, path, list) = create_list::<T>(table, name, ctx)?;
        let mask = create_mask(&g, &path, ctx)?;
        Ok(NullableListWriter(MaskedEncoder::new(list, mask)))
    }
    fn resume(table: &Group, name: &str, nrows: u64, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
        let (g, path, list) = resume_list::<T>(table, name, nrows, ctx, true)?;
        let m = open_mask(&g, &path, nrows)?;
        let mask = PodWriter::resume(m.ds, Vec::new(), nrows, &path)?;
        Ok(NullableListWriter(MaskedEncoder::new(list, mask)))
    }
    fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
        let path = column_path(name);
        let g = list_group(table, name)?;
        let mask = open_mask(&g, &path, nrows)?;
        let list = ListDecoder::open_in(
            &g,
            &list_node::<T>(true),
            &path,
            nrows,
            LoadFlags::default(),
        )?;
        Ok(NullableListReader(MaskedDecoder::new(list, mask)))
    }
}
