//! What the column readers of the schema-driven reader share: the [`Node`]
//! trait (one reader per schema node, each reading a range of rows into one
//! Arrow array with one HDF5 read per dataset, on the kinds' own checked
//! readers: SPEC.md sections 7 and 11), the dispatcher types handed to the
//! kinds that open children ([`OpenNode`], [`OpenItem`]), the `FixedSizeList`
//! [`Levels`], the buffer and validity helpers, and the reader of a field
//! this version does not know. Each storage kind's reader is in
//! `kinds/<kind>/arrow/read.rs`.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, FixedSizeListArray, LargeStringArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, Field, FieldRef};
use hdf5::Group;

use crate::codec::range_len;
use crate::column::open_values;
use crate::column::PodReader;
use crate::error::{Error, Place, Result};
use crate::kinds::list::open_leaf_values;
use crate::raw::Pod;
use crate::schema::{Schema, Stored};

/// Reads rows of one node into an Arrow array.
pub(crate) trait Node {
    /// Rows `rows` as one array of `rows.end - rows.start` entries;
    /// `nulls`, from an enclosing `nullable` node, marks rows null.
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef>;
}

/// A boxed node.
pub(crate) type BoxNode = Box<dyn Node + Send + Sync>;

/// The reader of a schema node (`open::open_node`), handed to the kinds
/// whose readers open their children's (records, nullable, unions).
pub(crate) type OpenNode = fn(&Group, &Stored, &str, u64, &Field) -> Result<BoxNode>;

/// The reader of the list elements in member `name` of a list group
/// (`open::open_item`), handed to the kinds whose readers open list
/// elements (lists, nullable elements).
pub(crate) type OpenItem = fn(&Group, &str, &Stored, &str, u64, &FieldRef) -> Result<BoxNode>;

/// Rows as an Arrow length.
pub(crate) fn length(rows: &Range<u64>, at: &Place) -> Result<usize> {
    let n = range_len(rows, at)?;
    usize::try_from(n).map_err(|_| Error::invalid(at, format!("{n} rows do not fit in memory")))
}

/// An Arrow constructor's refusal, at `at`.
pub(crate) fn arrow_err(at: &Place) -> impl Fn(ArrowError) -> Error + '_ {
    move |e| Error::invalid(at, format!("cannot build the Arrow array: {e}"))
}

/// Validity bits as a null buffer, `None` when nothing is null.
pub(crate) fn validity(bits: BooleanBuffer) -> Option<NullBuffer> {
    let nb = NullBuffer::new(bits);
    (nb.null_count() > 0).then_some(nb)
}

/// Offsets that start at 0, as an offset buffer (checked, so that Arrow's
/// own assertions cannot fire).
pub(crate) fn offset_buffer(offs: Vec<i64>, at: &Place) -> Result<OffsetBuffer<i64>> {
    let ok = offs.first().is_some_and(|&f| f >= 0) && offs.windows(2).all(|w| w[0] <= w[1]);
    if !ok {
        return Err(Error::invalid(
            at,
            "offsets must start at 0 and not decrease",
        ));
    }
    Ok(OffsetBuffer::new(ScalarBuffer::from(offs)))
}

/// `u64` offsets `offs` made relative to `offs[0]`, as `i64`.
pub(crate) fn rebase(offs: &[u64], at: &Place) -> Result<Vec<i64>> {
    let base = offs.first().copied().unwrap_or(0);
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, offs.len() as u64, at)?;
    for &o in offs {
        let r = o
            .checked_sub(base)
            .and_then(|r| i64::try_from(r).ok())
            .ok_or_else(|| Error::invalid(at, format!("offset {o} out of range")))?;
        out.push(r);
    }
    Ok(out)
}

/// End positions (`ends[i]` = end of row `i`) as offsets from 0.
pub(crate) fn ends_to_offsets(ends: &[usize], at: &Place) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, ends.len() as u64 + 1, at)?;
    out.push(0);
    for &e in ends {
        out.push(i64::try_from(e).map_err(|_| Error::invalid(at, "string data too large"))?);
    }
    Ok(out)
}

/// A `LargeUtf8` array of `values` cut at `offsets`. Invalid UTF-8 in a
/// row that is not null is the error `bad(i)` for its index `i` in the
/// batch; bytes under null rows are dropped (typed loads skip them too).
pub(crate) fn utf8_array(
    offsets: Vec<i64>,
    values: Vec<u8>,
    nulls: Option<NullBuffer>,
    at: &Place,
    bad: impl Fn(usize) -> Error,
) -> Result<ArrayRef> {
    let offs = offset_buffer(offsets, at)?;
    check_nulls(nulls.as_ref(), offs.len() - 1, at)?;
    let buf = Buffer::from_vec(values);
    match LargeStringArray::try_new(offs.clone(), buf.clone(), nulls.clone()) {
        Ok(a) => Ok(Arc::new(a)),
        Err(e) => {
            let bytes = buf.as_slice();
            let span = |i: usize| -> Option<&[u8]> {
                let a = usize::try_from(*offs.get(i)?).ok()?;
                let b = usize::try_from(*offs.get(i + 1)?).ok()?;
                bytes.get(a..b)
            };
            let rows = offs.len() - 1;
            let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
            for i in 0..rows {
                if valid(i) && span(i).is_none_or(|s| std::str::from_utf8(s).is_err()) {
                    return Err(bad(i));
                }
            }
            let Some(nb) = &nulls else {
                return Err(arrow_err(at)(e));
            };
            // Only bytes under nulls are not text: keep the others.
            let mut kept = Vec::new();
            let mut ends = Vec::with_capacity(rows);
            for i in 0..rows {
                if nb.is_valid(i) {
                    kept.extend_from_slice(span(i).unwrap_or(&[]));
                }
                ends.push(kept.len());
            }
            let offs = offset_buffer(ends_to_offsets(&ends, at)?, at)?;
            LargeStringArray::try_new(offs, Buffer::from_vec(kept), nulls)
                .map(|a| Arc::new(a) as ArrayRef)
                .map_err(arrow_err(at))
        }
    }
}

/// Union of two optional null buffers, each of `n` entries (Arrow's own
/// union asserts equal lengths).
pub(crate) fn both(
    a: Option<NullBuffer>,
    b: Option<NullBuffer>,
    n: usize,
    at: &Place,
) -> Result<Option<NullBuffer>> {
    check_nulls(a.as_ref(), n, at)?;
    check_nulls(b.as_ref(), n, at)?;
    Ok(NullBuffer::union(a.as_ref(), b.as_ref()))
}

/// Checks that validity `nulls` covers exactly `n` rows.
pub(crate) fn check_nulls(nulls: Option<&NullBuffer>, n: usize, at: &Place) -> Result<()> {
    match nulls {
        Some(nb) if nb.len() != n => Err(Error::invalid(
            at,
            format!("{} validity entries for {n} rows", nb.len()),
        )),
        _ => Ok(()),
    }
}

/// The `values` of `group` (`member` = None) or the list leaf `member` of
/// `group`, checked against `node` as the typed load checks them.
pub(crate) fn leaf_column<R: Pod>(
    group: &Group,
    member: Option<&str>,
    node: &Stored,
    path: &str,
    count: u64,
    inner: &[u64],
) -> Result<PodReader<R>> {
    let mut want = Schema::from(node);
    want.children.clear();
    match member {
        None => open_values::<R>(group, node, path, count, &want, inner),
        Some(name) => {
            let (ds, n) = open_leaf_values::<R>(group, name, node, path, count, &want, inner)?;
            PodReader::new(ds, inner.to_vec(), n, path)
        }
    }
}

/// Calls `$body` with `$T` the arrow primitive type of `$dt`, or `$other`
/// (the number types of `numbers!`'s one table).
macro_rules! with_prim {
    ($dt:expr, $T:ident => $body:expr, _ => $other:expr) => {
        $crate::arrow::numbers::numbers!(with_type ($dt) $T => $body, _ => $other)
    };
}
pub(crate) use with_prim;

// ---------------------------------------------------------------------------
// Dense: FixedSizeList levels around a flat leaf array.

/// The `FixedSizeList` levels of a dense node, innermost first: item field
/// and size of each.
#[derive(Default)]
pub(crate) struct Levels(pub(crate) Vec<(FieldRef, i32)>);

impl Levels {
    /// Leaves per row.
    pub(crate) fn leaves(&self, at: &Place) -> Result<u64> {
        self.0.iter().try_fold(1u64, |a, (_, s)| {
            a.checked_mul(u64::try_from(*s).unwrap_or(0))
                .ok_or_else(|| Error::invalid(at, "dense element too large"))
        })
    }

    /// Wraps `leaf` (all leaves of `rows` rows) in the levels; `nulls` on the outermost.
    pub(crate) fn wrap(
        &self,
        mut arr: ArrayRef,
        rows: usize,
        nulls: Option<NullBuffer>,
        at: &Place,
    ) -> Result<ArrayRef> {
        let n = self.0.len();
        for (k, (field, size)) in self.0.iter().enumerate() {
            // Entries of this level: rows times the sizes of the levels outside it.
            let len = self.0[k + 1..]
                .iter()
                .try_fold(rows, |a, (_, s)| a.checked_mul(usize::try_from(*s).ok()?))
                .ok_or_else(|| Error::invalid(at, "dense element too large"))?;
            let nb = if k + 1 == n { nulls.clone() } else { None };
            arr = Arc::new(
                FixedSizeListArray::try_new_with_length(field.clone(), *size, arr, nb, len)
                    .map_err(arrow_err(at))?,
            );
        }
        Ok(arr)
    }
}

// ---------------------------------------------------------------------------
// Fields this version does not know.

/// A field this version of h5vec cannot read (an unknown kind or codec,
/// SPEC.md section 11): opening it succeeds, so that the other fields can
/// be read; reading it is the error naming it.
pub(super) struct Unknown {
    pub(super) path: String,
    pub(super) why: String,
}

impl Node for Unknown {
    fn read(&mut self, _rows: Range<u64>, _nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        Err(unknown_error(&self.path, &self.why))
    }
}

/// Checks that a built array has `n` entries (internal consistency).
pub(crate) fn check_len(arr: &ArrayRef, n: usize, at: &Place) -> Result<()> {
    if arr.len() != n {
        return Err(crate::codec::exhausted(at));
    }
    Ok(())
}

/// The error of reading a field this version does not know (`why`, from
/// `mapping::unknown_node`).
pub(crate) fn unknown_error(path: &str, why: &str) -> Error {
    Error::mismatch(
        path,
        "a schema kind and codec this version of h5vec reads",
        format!("{why}: this version of h5vec cannot read it"),
    )
}
