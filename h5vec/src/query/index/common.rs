//! What the index families (`sorted.rs`, `bitmap.rs`, `bloom.rs`) and
//! `mod.rs` share: the [`Build`] a builder gets, batch reading of a leaf
//! ([`each_batch`]), its source dataset, HEP001 attribute readers and
//! writers, the [`RowSet`] an index answers with and the [`Answer`] it
//! gives a predicate (used by `eval.rs` and `plan.rs`).

use std::cmp::Ordering;
use std::ops::Range;

use hdf5::{Dataset, Group};

use crate::error::{Context, Place, Result};
use crate::query::leaf::{Leaf, Vals};
use crate::query::lit::{Lit, Pred};
use crate::raw;

/// The place of index dataset `ds` in errors.
pub(crate) fn place(ds: &Dataset) -> Place {
    Place::new("$", ds.name())
}

/// A scalar attribute of any unsigned integer type, read as `u64`.
pub(crate) fn read_uint_attr(obj: &hdf5::Location, name: &str) -> Option<u64> {
    if !raw::has_attr(obj, name, "$").ok()? {
        return None;
    }
    let a = obj.attr(name).ok()?;
    let t = a.dtype().ok()?.to_descriptor().ok()?;
    if !matches!(t, hdf5::types::TypeDescriptor::Unsigned(_)) || !a.is_scalar() {
        return None;
    }
    a.read_scalar::<u64>().ok()
}

/// Whether `obj` has a one-byte scalar attribute `name` (the HEP001
/// boolean), and its value.
pub(crate) fn read_bool_attr(obj: &hdf5::Location, name: &str) -> Option<bool> {
    if !raw::has_attr(obj, name, "$").ok()? {
        return None;
    }
    let a = obj.attr(name).ok()?;
    let dt = a.dtype().ok()?;
    if dt.size() != 1 || !a.is_scalar() {
        return None;
    }
    let mut b = [0u8; 1];
    raw::read_attr_bytes(&a, &dt, &mut b, "$").ok()?;
    Some(b[0] != 0)
}

/// Writes scalar attribute `name` of `obj`: the HEP001 boolean (h5py's
/// bool enum, int8 base, `FALSE = 0`, `TRUE = 1`).
pub(crate) fn write_bool_attr(obj: &hdf5::Location, name: &str, v: bool, p: &Place) -> Result<()> {
    if raw::has_attr(obj, name, p)? {
        obj.delete_attr(name).at(p)?;
    }
    let dt = raw::h5col_bool(p)?;
    let a = obj.new_attr_builder().empty_as(&dt).create(name).at(p)?;
    raw::write_attr_bytes(&a, &dt, &[u8::from(v)], p)
}

/// Writes a scalar attribute `name` of unsigned type `T`.
pub(crate) fn write_uint_attr<T: hdf5::H5Type>(
    obj: &hdf5::Location,
    name: &str,
    v: T,
    p: &Place,
) -> Result<()> {
    if raw::has_attr(obj, name, p)? {
        obj.delete_attr(name).at(p)?;
    }
    obj.new_attr::<T>()
        .create(name)
        .at(p)?
        .write_scalar(&v)
        .at(p)
}

/// What a family's builder gets.
pub(crate) struct Build<'a> {
    pub(crate) group: &'a Group,
    pub(crate) name: &'a str,
    /// The index of this kind already on this column (rebuilt in place).
    pub(crate) existing: Option<Dataset>,
    pub(crate) count: u64,
    /// A table: a NaN row goes to the NaN tail even when missing (HEP001:
    /// a NaN fill makes missing rows NaN rows).
    pub(crate) nan_first: bool,
    /// A vector's text leaf: the rows per Bloom filter.
    pub(crate) text_chunk: Option<u64>,
}

/// The dataset holding `leaf`'s values, whose type and chunks its indexes
/// follow: a table's column, a vector leaf's values (under an `Option`
/// too); `None` for a vector's text.
pub(crate) fn source_dataset(leaf: &Leaf) -> Option<&Dataset> {
    leaf.dataset().or_else(|| leaf.values_dataset())
}

/// Rows `0..count` of `leaf` in batches: `f(first_row, values, missing)`.
pub(crate) fn each_batch(
    leaf: &mut Leaf,
    count: u64,
    mut f: impl FnMut(u64, &Vals, Option<&[bool]>) -> Result<()>,
) -> Result<()> {
    let mut a = 0;
    while a < count {
        let b = (a + crate::options::READ_BATCH_ROWS).min(count);
        let (v, m) = leaf.read(a..b)?;
        f(a, &v, m.as_deref())?;
        a = b;
    }
    Ok(())
}

/// A set of rows of a vector of `n` rows: a sorted list, or a bitmap.
pub(crate) enum RowSet {
    List(Vec<u64>),
    /// Bit `r % 8` of byte `r / 8`.
    Bits(Vec<u8>),
}

impl RowSet {
    /// Rows of `range` in the set.
    pub(crate) fn count_in(&self, range: &Range<u64>) -> u64 {
        match self {
            RowSet::List(v) => {
                let a = v.partition_point(|&r| r < range.start);
                let b = v.partition_point(|&r| r < range.end);
                (b - a) as u64
            }
            RowSet::Bits(b) => {
                // Whole bytes by their popcount, the ends bit by bit.
                let (a, e) = (range.start, range.end);
                let (ba, be) = (a.div_ceil(8), e / 8);
                if ba >= be {
                    return (a..e).filter(|&r| bit(b, r)).count() as u64;
                }
                let head = (a..ba * 8).filter(|&r| bit(b, r)).count() as u64;
                let tail = (be * 8..e).filter(|&r| bit(b, r)).count() as u64;
                let mid: u64 = b
                    .get(ba as usize..(be as usize).min(b.len()))
                    .unwrap_or(&[])
                    .iter()
                    .map(|x| u64::from(x.count_ones()))
                    .sum();
                head + mid + tail
            }
        }
    }

    /// Sets `out[r - range.start] = val` for each row `r` of `range` in
    /// the set.
    pub(crate) fn mark(&self, range: &Range<u64>, out: &mut [u8], val: u8) {
        match self {
            RowSet::List(v) => {
                let a = v.partition_point(|&r| r < range.start);
                for &r in v[a..].iter().take_while(|&&r| r < range.end) {
                    out[(r - range.start) as usize] = val;
                }
            }
            RowSet::Bits(b) => {
                for r in range.clone() {
                    if bit(b, r) {
                        out[(r - range.start) as usize] = val;
                    }
                }
            }
        }
    }

    pub(crate) fn len(&self) -> u64 {
        match self {
            RowSet::List(v) => v.len() as u64,
            RowSet::Bits(b) => b.iter().map(|x| u64::from(x.count_ones())).sum(),
        }
    }
}

#[inline]
fn bit(b: &[u8], r: u64) -> bool {
    b.get((r / 8) as usize)
        .is_some_and(|x| x & (1 << (r % 8)) != 0)
}

/// What an index says about one predicate of one leaf.
pub(crate) struct Answer {
    /// The leaf and predicate it answers.
    pub(crate) leaf: usize,
    pub(crate) pred: Pred,
    /// For `Explain` (`SORTED_ROWS (3 rows)`).
    pub(crate) label: String,
    pub(super) what: Says,
}

pub(super) enum Says {
    /// Exactly the rows where the predicate is true; with the rows where
    /// it is unknown (missing, NaN) when known.
    Rows { t: RowSet, u: Option<RowSet> },
    /// Per chunk of `len` rows: whether it may hold a true row.
    Chunks { len: u64, may: Vec<bool> },
}

impl Answer {
    /// Whether `rows` may hold a row where the predicate is true, and one
    /// where it is false (`None`: the index does not say).
    pub(crate) fn may(&self, rows: &Range<u64>) -> (bool, bool) {
        match &self.what {
            Says::Rows { t, .. } => {
                let n = t.count_in(rows);
                (n > 0, n < rows.end - rows.start)
            }
            Says::Chunks { len, may } => {
                let a = (rows.start / len) as usize;
                let b = (rows.end.div_ceil(*len) as usize).min(may.len());
                (may[a.min(b)..b].iter().any(|&m| m), true)
            }
        }
    }

    /// The rows per chunk of a chunk answer (a Bloom filter's).
    pub(crate) fn chunk_len(&self) -> Option<u64> {
        match &self.what {
            Says::Chunks { len, .. } => Some(*len),
            Says::Rows { .. } => None,
        }
    }

    /// The truth of the predicate on `rows` from the index alone, when
    /// it can say (`neg`: under an odd number of `not`, where a false
    /// row must be told from an unknown one).
    pub(crate) fn truth(&self, rows: &Range<u64>, neg: bool) -> Option<Vec<u8>> {
        let Says::Rows { t, u } = &self.what else {
            return None;
        };
        if neg && u.is_none() {
            return None;
        }
        let mut out = vec![crate::query::lit::F; (rows.end - rows.start) as usize];
        if let Some(u) = u {
            u.mark(rows, &mut out, crate::query::lit::U);
        }
        t.mark(rows, &mut out, crate::query::lit::T);
        Some(out)
    }
}

/// The value of row `i` of `v` against literal `l`, exactly as filters
/// compare (`None`: unordered, a NaN).
pub(crate) fn cmp_at(v: &Vals, i: usize, l: &Lit) -> Option<Ordering> {
    crate::query::lit::cmp_val(v, i, l)
}

/// The largest number of rows a set read from an index may hold in a
/// list before a bitmap of all rows is smaller.
pub(crate) fn list_or_bits(rows: Vec<u64>, count: u64, p: &Place) -> Result<RowSet> {
    if (rows.len() as u64).saturating_mul(64) <= count.max(64) {
        let mut rows = rows;
        rows.sort_unstable();
        rows.dedup();
        return Ok(RowSet::List(rows));
    }
    let mut b = Vec::new();
    crate::limits::reserve(&mut b, count.div_ceil(8), p)?;
    b.resize(count.div_ceil(8) as usize, 0u8);
    for r in rows {
        b[(r / 8) as usize] |= 1 << (r % 8);
    }
    Ok(RowSet::Bits(b))
}
