//! List columns (h5col's offsets layout, SPEC.md section 4.2): `Vec<T>` fields.
//!
//! Layout on disk:
//! ```text
//! <field>/                 group, attributes CLASS = "LIST_COLUMN", KIND = "OFFSETS"
//! <field>/OFFSETS          1-D uint64, count + 1 entries, OFFSETS[0] = 0, non-decreasing;
//!                          row i is VALUES[OFFSETS[i] .. OFFSETS[i+1]]
//! <field>/MASK             (Option<Vec<T>> only) h5col bool per row, TRUE = present;
//!                          a null row has an empty span
//! <field>/VALUES           the elements of all rows back to back:
//!   numbers, bool, char, enums   1-D dataset (bool as the h5col enum; [T; N] adds axes)
//!   Option<number>               1-D dataset whose fill value marks a missing element
//!   String                       group CLASS = "STRING_VALUES": OFFSETS (uint64, n + 1)
//!                                and CHARS (uint8, int8 refused); Option<String> adds MASK
//!   Vec<U>                       another list group, to any depth; Option<Vec<U>> adds MASK
//!   derived struct / tuple       group CLASS = "RECORD_VALUES" holding one column per
//!                                field in the record layout (h5vec's extension to h5col)
//! ```
//! No variable-length HDF5 type appears anywhere below a list column.
//!
//! This module holds the list group itself ([`ListEncoder`], [`ListDecoder`],
//! [`ListCodec`]) and the `OFFSETS` rules every offsets-based member shares.
//! The element layouts are in `item` (leaves, nested lists, records, the
//! nullable wrapper and the [`ListItem`] table of Rust types), `strings`
//! (`STRING_VALUES`) and `fill` (`Option<number>` elements).

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::H5Vector;
use crate::codec::{exhausted, expect_members, open_column, range_len, Codec, Decoder, Encoder};
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Place, Result};
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::limits;
use crate::options::WriteCtx;
use crate::raw::{self, Pod};
use crate::schema::{ids, Kind, Schema, Stored};

mod fill;
mod item;
mod strings;

pub(crate) use fill::{FillDecoder, FillEncoder, FillNumber};
pub(crate) use item::ItemCodec;
// What the schema-driven reader (`crate::arrow`) opens lists with.
#[cfg(feature = "arrow")]
pub(crate) use strings::{StringValuesDecoder, StringValuesItem};
// What the schema-driven writer (`crate::arrow`) creates and appends with.
#[cfg(feature = "arrow")]
pub(crate) use fill::FillItem;
#[cfg(feature = "arrow")]
pub(crate) use item::{append_nullable_item, create_item_mask};
// What element layouts outside this module (maps, mapped values) build on.
pub(crate) use item::NullableItem;
pub(crate) use item::{create_leaf, create_record_values, open_leaf_values, open_record_values};
pub use item::{LeafItem, ListItem, RecordItem};
#[cfg(feature = "arrow")]
pub(crate) use strings::StringValuesEncoder;

/// `CLASS` of a list group.
pub(crate) const LIST_COLUMN: &str = "LIST_COLUMN";
/// `KIND` of a list group.
pub(crate) const KIND_OFFSETS: &str = "OFFSETS";
/// `CLASS` of a string values group.
pub(crate) const STRING_VALUES: &str = "STRING_VALUES";
/// `CLASS` of a record values group (h5vec's extension).
pub(crate) const RECORD_VALUES: &str = "RECORD_VALUES";

/// Checks the `CLASS` attribute of list group or values group `g`.
pub(crate) fn check_class(g: &Group, want: &str, path: &str) -> Result<()> {
    let p = Place::new(path, g.name());
    match raw::attr_string(g, "CLASS", &p)? {
        Some(c) if c == want => Ok(()),
        Some(c) => Err(Error::mismatch(
            p,
            format!("CLASS = \"{want}\""),
            format!("CLASS = {c:?}"),
        )),
        None => Err(Error::mismatch(
            p,
            format!("CLASS = \"{want}\""),
            "no CLASS attribute",
        )),
    }
}

// ---------------------------------------------------------------------------
// OFFSETS: the rules shared by list groups and STRING_VALUES groups.

/// Creates the `OFFSETS` dataset of `group` holding its first entry, 0.
fn create_offsets(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<PodWriter<u64>> {
    let mut offsets = PodWriter::create(group, "OFFSETS", &[], ctx.chunk_rows(8), path, ctx)?;
    offsets.buf.push(0);
    offsets.flush()?;
    Ok(offsets)
}

/// Opens the `OFFSETS` of `rows` spans in `group` (at least `rows + 1`
/// uint64 entries) and checks `OFFSETS[0] = 0`. Returns the reader and
/// `OFFSETS[rows]`, the end of the last span.
fn open_offsets(group: &Group, path: &str, rows: u64) -> Result<(PodReader<u64>, u64)> {
    let need = rows
        .checked_add(1)
        .ok_or_else(|| Error::invalid(path, "count overflows"))?;
    let (ds, n) = open_column(
        group,
        "OFFSETS",
        path,
        &[],
        need,
        u64::accepts,
        "uint64 OFFSETS",
    )?;
    let offsets = PodReader::<u64>::new(ds, Vec::new(), n, path)?;
    let first = offsets.read(0, 1)?[0];
    if first != 0 {
        return Err(Error::invalid(
            offsets.element(0),
            format!("OFFSETS[0] must be 0, found {first}"),
        ));
    }
    let total = offsets.read(rows, 1)?[0];
    Ok((offsets, total))
}

/// Reads `OFFSETS[rows.start ..= rows.end]` into `offs` and checks that
/// they do not decrease.
fn read_offsets(offsets: &PodReader<u64>, rows: &Range<u64>, offs: &mut Vec<u64>) -> Result<()> {
    let n = range_len(rows, offsets.place())?;
    offsets.read_into(rows.start, n + 1, offs)?;
    if let Some(i) = offs.windows(2).position(|w| w[1] < w[0]) {
        return Err(Error::invalid(
            offsets.element(rows.start + i as u64 + 1),
            format!(
                "OFFSETS must not decrease: {} after {}",
                offs[i + 1],
                offs[i]
            ),
        ));
    }
    Ok(())
}

/// Checks list group `group` of `count` rows against its node (a `list`
/// with one child): CLASS, KIND, members `OFFSETS` and `VALUES` (plus the
/// node's extra members), and opens `OFFSETS` ([`open_offsets`]). Returns
/// the reader and `OFFSETS[count]`. The element member is the caller's.
pub(crate) fn open_list_group(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
) -> Result<(PodReader<u64>, u64)> {
    open_list_group_with(group, node, path, count, ids::H5VEC_CODEC)
}

/// [`open_list_group`] for a list node whose codec is `codec` (a map's
/// `h5vec.MapCodec`).
pub(crate) fn open_list_group_with(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    codec: &str,
) -> Result<(PodReader<u64>, u64)> {
    let mut shape = list_node_shape();
    shape.codec = codec.into();
    node.expect(&shape, path)?;
    check_class(group, LIST_COLUMN, path)?;
    let p = Place::new(path, group.name());
    match raw::attr_string(group, "KIND", &p)? {
        Some(k) if k == KIND_OFFSETS => {}
        other => {
            return Err(Error::mismatch(
                p,
                "KIND = \"OFFSETS\"",
                format!("{other:?}"),
            ))
        }
    }
    expect_members(group, &["OFFSETS", "VALUES"], node, path)?;
    open_offsets(group, path, count)
}

/// Reads the OFFSETS of list rows `rows` into `offs` ([`read_offsets`])
/// and checks that the last is within `total` (`OFFSETS[count]`). The
/// elements of the rows are then `offs[0] .. offs[rows.len()]`.
pub(crate) fn load_list_offsets(
    offsets: &PodReader<u64>,
    rows: &Range<u64>,
    offs: &mut Vec<u64>,
    total: u64,
) -> Result<()> {
    read_offsets(offsets, rows, offs)?;
    let last = offs.last().copied().unwrap_or(0);
    if last > total {
        return Err(past_total(offsets.element(rows.end), last, total));
    }
    Ok(())
}

/// A list row that a MASK marks null but that holds `n` elements.
pub(crate) fn null_row_not_empty(at: Place, n: u64) -> Error {
    Error::invalid(
        at,
        format!("a null row (MASK = FALSE) must have an empty span, found {n} elements"),
    )
}

/// An offset of a row before `count` past the offset of row `count`.
fn past_total(at: Place, offset: u64, total: u64) -> Error {
    Error::invalid(
        at,
        format!("offset {offset} is past the last offset {total} (OFFSETS must not decrease)"),
    )
}

// ---------------------------------------------------------------------------
// The list group itself.

/// Writes a list group: items first, then OFFSETS.
pub struct ListEncoder<I: ItemCodec> {
    offsets: PodWriter<u64>,
    items: I::Encoder,
    end: u64,
}

/// Reads a list group.
pub struct ListDecoder<I: ItemCodec> {
    spans: RowSpans,
    items: I::Decoder,
}

/// The rows of an open list group, one span of elements each: OFFSETS read
/// and checked per batch ([`load_list_offsets`]), then taken row by row.
/// Lists and maps (a list of entries) share it.
pub(crate) struct RowSpans {
    pub(crate) offsets: PodReader<u64>,
    /// OFFSETS of the loaded rows (one more than rows), reused batch to batch.
    offs: Vec<u64>,
    /// Index into `offs` of the next row.
    idx: usize,
    next_row: u64,
    /// `OFFSETS[count]`: no offset of a row before `count` exceeds it, and
    /// `VALUES` stores that many elements (checked on open).
    total: u64,
}

impl RowSpans {
    pub(crate) fn new(offsets: PodReader<u64>, total: u64) -> Self {
        RowSpans {
            offsets,
            offs: Vec::new(),
            idx: 0,
            next_row: 0,
            total,
        }
    }

    /// Reads and checks the OFFSETS of `rows`; returns the elements they span.
    pub(crate) fn load(&mut self, rows: &Range<u64>) -> Result<Range<u64>> {
        load_list_offsets(&self.offsets, rows, &mut self.offs, self.total)?;
        let (first, last) = (self.offs[0], self.offs[self.offs.len() - 1]);
        self.idx = 0;
        self.next_row = rows.start;
        Ok(first..last)
    }

    /// The number of elements of the next row.
    #[inline]
    pub(crate) fn next_len(&mut self) -> Result<usize> {
        let (a, b) = match (self.offs.get(self.idx), self.offs.get(self.idx + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => return Err(exhausted(self.offsets.place())),
        };
        // Non-decreasing: checked in `load`.
        let n = b - a;
        self.idx += 1;
        self.next_row += 1;
        usize::try_from(n).map_err(|_| Error::invalid(self.row(), "row too long"))
    }

    /// The row [`next_len`](Self::next_len) took last, for errors.
    pub(crate) fn row(&self) -> Place {
        self.offsets.element(self.next_row.saturating_sub(1))
    }

    /// Takes a row that an enclosing mask marks null: its span must be empty.
    pub(crate) fn skip_null(&mut self) -> Result<()> {
        let n = self.next_len()?;
        if n != 0 {
            return Err(null_row_not_empty(self.row(), n as u64));
        }
        Ok(())
    }
}

/// The logical path of a list's elements: `$.tags[]`.
pub(crate) fn items_path(path: &str) -> String {
    format!("{path}[]")
}

/// Makes `group` a list group: its attributes and `OFFSETS = [0]`, whose
/// writer is returned; the caller creates the `VALUES` member.
pub(crate) fn create_list_group(
    group: &Group,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PodWriter<u64>> {
    raw::write_attr_ascii(group, "CLASS", LIST_COLUMN, path)?;
    raw::write_attr_ascii(group, "KIND", KIND_OFFSETS, path)?;
    create_offsets(group, path, ctx)
}

impl<I: ItemCodec> ListEncoder<I> {
    /// Makes `group` a list group: attributes, `OFFSETS = [0]`, and `VALUES`.
    pub fn create_in(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self> {
        let offsets = create_list_group(group, path, ctx)?;
        let items = I::create(group, "VALUES", &items_path(path), ctx)?;
        Ok(ListEncoder {
            offsets,
            items,
            end: 0,
        })
    }

    /// Continues a list group of `count` rows, opened and checked by [`ListDecoder::open_in`].
    pub fn resume_in(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let dec = ListDecoder::<I>::open_in(group, node, path, count)?;
        let end = dec.spans.offsets.read(count, 1)?[0];
        let items = I::append(
            group,
            "VALUES",
            node.child(0, path)?,
            &items_path(path),
            end,
            ctx,
        )?;
        Ok(ListEncoder {
            offsets: PodWriter::resume(dec.spans.offsets.ds, Vec::new(), count + 1, path)?,
            items,
            end,
        })
    }

    /// Pushes one row.
    #[inline]
    pub fn push_row<'a, T: 'a>(&mut self, row: impl ExactSizeIterator<Item = &'a T>) -> Result<()>
    where
        I::Encoder: Encoder<T>,
    {
        let n = row.len() as u64;
        for x in row {
            self.items.push(x)?;
        }
        self.end += n;
        self.offsets.buf.push(self.end);
        Ok(())
    }

    /// Pushes an empty (or null) row.
    pub fn push_empty(&mut self) {
        self.offsets.buf.push(self.end);
    }

    /// Writes the batch: VALUES first, then OFFSETS.
    pub fn flush(&mut self) -> Result<()> {
        self.flush_items()?;
        self.flush_offsets()
    }

    /// Writes the buffered elements (the `VALUES` member) only. With
    /// [`flush_offsets`](Self::flush_offsets) this lets a table write every
    /// column's values, then its masks, then its offsets (h5col's order).
    pub fn flush_items(&mut self) -> Result<()> {
        self.items.flush()
    }

    /// Writes the buffered `OFFSETS` entries only (after [`flush_items`](Self::flush_items)).
    pub fn flush_offsets(&mut self) -> Result<()> {
        self.offsets.flush()
    }
}

impl<I: ItemCodec> ListDecoder<I> {
    /// Opens list group `group` of `count` rows and checks it.
    pub fn open_in(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self> {
        let (offsets, total) = open_list_group(group, node, path, count)?;
        limits::check_empty_rows::<I::Value>(total, &items_path(path))?;
        let items = I::open(
            group,
            "VALUES",
            node.child(0, path)?,
            &items_path(path),
            total,
        )?;
        Ok(ListDecoder {
            spans: RowSpans::new(offsets, total),
            items,
        })
    }
}

fn list_node_shape() -> Schema {
    let mut s = Schema::new(Kind::List, ids::LIST, ids::H5VEC_CODEC, "");
    s.children.push(Schema::new(Kind::default(), "", "", ""));
    s
}

fn list_schema<T, I: ItemCodec>(ctx: &WriteCtx<'_>) -> Schema {
    let mut s = Schema::new(
        Kind::List,
        ids::LIST,
        ids::H5VEC_CODEC,
        std::any::type_name::<Vec<T>>(),
    );
    s.children.push(I::schema(ctx));
    s
}

impl<T, I: ItemCodec<Value = T>> Encoder<Vec<T>> for ListEncoder<I> {
    #[inline]
    fn push(&mut self, value: &Vec<T>) -> Result<()> {
        self.push_row(value.iter())
    }
    fn push_null(&mut self) -> Result<()> {
        self.push_empty();
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        ListEncoder::flush(self)
    }
}

impl<T, I: ItemCodec<Value = T>> Decoder<Vec<T>> for ListDecoder<I> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let elements = self.spans.load(&rows)?;
        self.items.load(elements)
    }
    #[inline]
    fn next(&mut self) -> Result<Vec<T>> {
        let n = self.spans.next_len()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.items.next()?);
        }
        Ok(v)
    }
    fn skip(&mut self) -> Result<()> {
        let n = self.spans.next_len()?;
        for _ in 0..n {
            self.items.skip()?;
        }
        Ok(())
    }
    fn skip_null(&mut self) -> Result<()> {
        self.spans.skip_null()
    }
}

// ---------------------------------------------------------------------------
// Vec<T> as a vector field.

/// `Vec<T>` stored as a list column in the field group.
pub struct ListCodec<T>(PhantomData<T>);

impl<T: ListItem> H5Vector for Vec<T> {
    type Codec = ListCodec<T>;
}

impl<T: ListItem> Codec for ListCodec<T> {
    type Value = Vec<T>;
    type Encoder = ListEncoder<T::Item>;
    type Decoder = ListDecoder<T::Item>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        list_schema::<T, T::Item>(ctx)
    }
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        ListEncoder::create_in(group, path, ctx)
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        ListEncoder::resume_in(group, node, path, count, ctx)
    }
    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self::Decoder> {
        ListDecoder::open_in(group, node, path, count)
    }
}

/// `Option<Vec<T>>`: the list group with a `MASK` beside `OFFSETS` (h5col's
/// nullable list column).
impl<T: ListItem> Nullable for ListCodec<T> {
    type Codec = NullableCodec<ListCodec<T>>;
}
