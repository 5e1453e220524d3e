//! The list group's rules every offsets-based member shares: its `CLASS`
//! and `KIND` attributes, `OFFSETS` (starting at 0, never decreasing, the
//! last within the element count), the rows of an open group as spans
//! ([`RowSpans`]) and the logical path of the elements.

use std::ops::Range;

use hdf5::Group;

use crate::codec::{exhausted, expect_members, open_column, range_len};
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Place, Result};
use crate::options::WriteCtx;
use crate::raw::{self, Pod};
use crate::schema::{ids, Kind, Schema, Stored};

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
pub(super) fn create_offsets(
    group: &Group,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PodWriter<u64>> {
    let mut offsets = PodWriter::create(group, "OFFSETS", &[], ctx.chunk_rows(8), path, ctx)?;
    offsets.buf.push(0);
    offsets.flush()?;
    Ok(offsets)
}

/// Opens the `OFFSETS` of `rows` spans in `group` (at least `rows + 1`
/// uint64 entries) and checks `OFFSETS[0] = 0`. Returns the reader and
/// `OFFSETS[rows]`, the end of the last span.
pub(super) fn open_offsets(group: &Group, path: &str, rows: u64) -> Result<(PodReader<u64>, u64)> {
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
pub(super) fn read_offsets(
    offsets: &PodReader<u64>,
    rows: &Range<u64>,
    offs: &mut Vec<u64>,
) -> Result<()> {
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
pub(super) fn past_total(at: Place, offset: u64, total: u64) -> Error {
    Error::invalid(
        at,
        format!("offset {offset} is past the last offset {total} (OFFSETS must not decrease)"),
    )
}

// ---------------------------------------------------------------------------
// The list group itself.

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

pub(super) fn list_node_shape() -> Schema {
    let mut s = Schema::new(Kind::List, ids::LIST, ids::H5VEC_CODEC, "");
    s.children.push(Schema::new(Kind::default(), "", "", ""));
    s
}
