//! The `list` kind's Arrow reader (SPEC.md section 11): a list group as a
//! `LargeList` (item field `item`) over the reader of its elements, which
//! the dispatcher it is given opens; and the element kinds only lists have:
//! `string_values` as `LargeUtf8` (every byte kept) and `fill_nullable`
//! numbers (an element equal to the dataset's fill value is null). A map's
//! reader (`arrow/read/typed.rs`) wraps a [`List`].

use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{ArrayRef, LargeListArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, FieldRef};
use hdf5::Group;

use crate::arrow::read::nodes::{
    arrow_err, check_nulls, offset_buffer, rebase, utf8_array, with_prim, BoxNode, Levels, Node,
    OpenItem,
};
use crate::arrow::read::select::has_data;
use crate::codec::{member_path, open_group};
use crate::column::PodReader;
use crate::error::{Error, Place, Result};
use crate::kinds::list::{
    load_list_offsets, null_row_not_empty, open_list_group, FillDecoder, FillNumber, ItemCodec,
    StringValuesDecoder, StringValuesItem,
};
use crate::kinds::scalar::arrow::read::Prim;
use crate::schema::{ids, Kind, Schema, Stored};

/// A list group: OFFSETS, and the element node over `VALUES`.
pub(crate) struct List {
    pub(crate) offsets: PodReader<u64>,
    /// `OFFSETS[count]` (checked on open).
    pub(crate) total: u64,
    pub(crate) item: BoxNode,
    pub(crate) field: FieldRef,
    pub(crate) offs: Vec<u64>,
}

impl Node for List {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.offsets.place().clone();
        load_list_offsets(&self.offsets, &rows, &mut self.offs, self.total)?;
        check_nulls(nulls.as_ref(), self.offs.len() - 1, &at)?;
        if let Some(nb) = &nulls {
            for i in (0..nb.len()).filter(|&i| nb.is_null(i)) {
                let (a, b) = (self.offs[i], self.offs[i + 1]);
                if a != b {
                    return Err(null_row_not_empty(
                        self.offsets.element(rows.start + i as u64),
                        b - a,
                    ));
                }
            }
        }
        let (first, last) = (self.offs[0], self.offs[self.offs.len() - 1]);
        let offsets = rebase(&self.offs, &at)?;
        let values = self.item.read(first..last, None)?;
        let arr = LargeListArray::try_new(
            self.field.clone(),
            offset_buffer(offsets, &at)?,
            values,
            nulls,
        )
        .map_err(arrow_err(&at))?;
        Ok(Arc::new(arr))
    }
}

/// Opens the list group `group`, `count` rows at least, typed as `field`
/// (a `LargeList`); `open_item` opens its elements (member `VALUES`).
pub(crate) fn open(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
    open_item: OpenItem,
) -> Result<BoxNode> {
    let (offsets, total) = open_list_group(group, node, path, count)?;
    let DataType::LargeList(item_field) = field.data_type() else {
        return Err(Error::invalid(path, "a list without a list type"));
    };
    let child = node.child(0, path)?;
    let ipath = format!("{path}[]");
    if !has_data(child) {
        crate::limits::check_rows_without_data(total, "list elements without data", &ipath)?;
    }
    let item = open_item(group, "VALUES", child, &ipath, total, item_field)?;
    Ok(Box::new(List {
        offsets,
        total,
        item,
        field: item_field.clone(),
        offs: Vec::new(),
    }))
}

/// Opens the list elements `name` (a list group) of the list group
/// `parent`, `rows` elements at least, typed as `field`.
pub(crate) fn open_element(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    field: &FieldRef,
    open_item: OpenItem,
) -> Result<BoxNode> {
    let g = open_group(parent, name, path)?;
    open(&g, node, path, rows, field, open_item)
}

// ---------------------------------------------------------------------------
// string_values elements.

/// A STRING_VALUES group (list elements): every byte kept.
struct StrValues {
    dec: StringValuesDecoder,
    at: Place,
}

impl Node for StrValues {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        self.dec.load_stored(rows.clone())?;
        let (offs, buf) = self.dec.take_loaded();
        let offsets = rebase(offs, &self.at)?;
        let dec = &self.dec;
        utf8_array(offsets, buf, nulls, &self.at, |i| {
            Error::invalid(
                dec.element(rows.start + i as u64),
                "string is not valid UTF-8",
            )
        })
    }
}

/// Opens the `string_values` list elements `name` of the list group
/// `parent`, `rows` elements at least.
pub(crate) fn open_strings(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
) -> Result<BoxNode> {
    Ok(Box::new(StrValues {
        dec: StringValuesItem::open(parent, name, node, path, rows)?,
        at: Place::new(path, member_path(parent, name)),
    }))
}

// ---------------------------------------------------------------------------
// fill_nullable elements.

/// Opens the `fill_nullable` list elements `name` of the list group
/// `parent`, `rows` elements at least, typed as `field` (a number).
pub(crate) fn open_fill(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    field: &FieldRef,
) -> Result<BoxNode> {
    let want = Schema::new(Kind::FillNullable, ids::FILL_SCHEMA, ids::FILL_CODEC, "")
        .encoded(node.encoded_type.as_deref().unwrap_or(""));
    node.expect(&want, path)?;
    fn fill<T: ArrowPrimitiveType>(
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
    ) -> Result<BoxNode>
    where
        T::Native: FillNumber,
    {
        let (col, fill) = FillDecoder::<T::Native>::open(parent, name, path, rows)?.into_parts();
        Ok(Box::new(Prim::<T> {
            col,
            fill,
            levels: Levels::default(),
            lent: None,
        }))
    }
    Ok(
        with_prim!(field.data_type(), T => fill::<T>(parent, name, path, rows)?,
        _ => return Err(Error::mismatch(path, "a fill_nullable number", field.data_type()))),
    )
}
