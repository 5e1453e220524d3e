//! `CHUNK_MINMAX` built on request (`build_index(.., IndexKind::ChunkMinMax)`,
//! SPEC.md section 14.6) where saves keep no statistics:
//!
//! * a number, bool, enum or time leaf of a vector **under an `Option`**:
//!   section 14.1's dataset, its nulls counted in `fill_count`, `nan_count`
//!   the NaN values that are present, the bounds over the present values
//!   that are not NaN (placeholders 0), as the Python package writes it;
//! * a number, h5col bool or categorical **column of an h5col table**:
//!   h5col 0.4.0's `compute_chunk_minmax` exactly (its `validate(deep=True)`
//!   recomputes and compares): a row is missing when it equals the
//!   column's user-defined fill value (a NaN fill: when it is NaN),
//!   `nan_count` counts every NaN row, missing or not, the bounds are over
//!   the rows that are neither, and a chunk without such a row holds the
//!   fill value (else NaN) as placeholders. The dataset is 1-D, of the
//!   packed compound `{min, max, nan_count, fill_count, n}` over the
//!   column's own type, chunked by 64 KiB of entries, extendible.
//!
//! (The statistics of leaves outside an `Option` are rebuilt by
//! `stats::rebuild_one`.)

use std::ops::Range;

use hdf5::{Dataset, Group};
use hdf5_sys::h5t::H5T_class_t;

use super::common::Build;
use crate::error::{Context, Error, Place, Result};
use crate::query::leaf::{Leaf, Vals};
use crate::query::stats;
use crate::raw::bounds::{Bound, BoundKind, Summary};
use crate::raw::minmax::{entry_type, memory_entry_type, Entry};
use crate::raw::{self, MemType};

/// Bytes of entries per chunk of a table's index (the Python package's
/// `INDEX_CHUNK_BYTES`).
const CHUNK_BYTES: usize = 64 << 10;

/// Chunk `i` of `chunk` rows of `0..count`, as rows.
fn chunk_rows(i: u64, chunk: u64, count: u64) -> Range<u64> {
    let a = i * chunk;
    a..(a + chunk).min(count)
}

/// Rows read per batch: whole chunks, about `READ_BATCH_ROWS`.
fn batch_rows(chunk: u64) -> u64 {
    chunk.saturating_mul((crate::options::READ_BATCH_ROWS / chunk.max(1)).max(1))
}

/// The summary of rows `r` of `v` (`missing[i]`: row `i` is missing;
/// `nan_missing`: a missing NaN counts as NaN too, as h5col counts).
fn summarize(v: &Vals, r: Range<usize>, missing: Option<&[bool]>, nan_missing: bool) -> Summary {
    let mut s = Summary {
        bounds: None,
        nan: 0,
        n: r.len() as u64,
        fill: 0,
    };
    let gone = |i: usize| missing.is_some_and(|m| m[i]);
    let mut take = |b: Bound| {
        s.bounds = Some(match s.bounds {
            Some((lo, hi)) => (lo.min(b), hi.max(b)),
            None => (b, b),
        })
    };
    let mut fill = 0;
    let mut nan = 0;
    for i in r {
        let missing = gone(i);
        fill += u64::from(missing);
        match v {
            Vals::F(x) if x[i].is_nan() => nan += u64::from(nan_missing || !missing),
            _ if missing => {}
            Vals::I(x) => take(Bound::I(x[i])),
            Vals::U(x) => take(Bound::U(x[i])),
            Vals::F(x) => take(Bound::F(x[i])),
            Vals::B(x) => take(Bound::B(x[i])),
            Vals::S(_) => {}
        }
    }
    s.fill = fill;
    s.nan = nan;
    s
}

/// The summaries of the chunks of `chunk` rows of `0..count`, their rows
/// read a few chunks at a time by `read` (values, and which are missing);
/// `nan_missing` as [`summarize`]; `at` names the entries in errors.
fn summaries(
    count: u64,
    chunk: u64,
    nan_missing: bool,
    at: &Place,
    mut read: impl FnMut(Range<u64>) -> Result<(Vals, Option<Vec<bool>>)>,
) -> Result<Vec<Summary>> {
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, count.div_ceil(chunk), at)?;
    let step = batch_rows(chunk);
    let mut a = 0;
    while a < count {
        let b = a.saturating_add(step).min(count);
        let (v, m) = read(a..b)?;
        let mut i = a / chunk;
        while i * chunk < b {
            let r = chunk_rows(i, chunk, count);
            let local = (r.start - a) as usize..(r.end - a) as usize;
            out.push(summarize(&v, local, m.as_deref(), nan_missing));
            i += 1;
        }
        a = b;
    }
    Ok(out)
}

/// The summaries of vector leaf `leaf` (under an `Option`), one per chunk
/// of `chunk` rows of its `count` rows.
fn option_leaf(leaf: &mut Leaf, ds: &Dataset, count: u64, chunk: u64) -> Result<Vec<Summary>> {
    let at = Place::new(&leaf.path, ds.name());
    summaries(count, chunk, false, &at, |r| leaf.read(r))
}

#[allow(clippy::too_many_arguments)] // the leaf, where it goes, and its tokens
pub(super) fn vector_leaf(
    vector: &Group,
    meta: &Group,
    leaf: &mut Leaf,
    source: &str,
    count: u64,
    generation: u64,
    column: &str,
) -> Result<()> {
    if leaf.dataset().is_some() && stats::rebuild_one(vector, meta, source, count, generation)? {
        return Ok(());
    }
    let kind = leaf
        .values_dataset()
        .and_then(|ds| Some((ds.clone(), stats::bound_kind_of(&ds.dtype().ok()?)?)));
    let Some((ds, kind)) = kind.filter(|_| leaf.dataset().is_none()) else {
        return Err(Error::invalid(
            &leaf.path,
            format!(
                "CHUNK_MINMAX statistics are kept for number, bool, enum and time columns, not for {} (filter column `{column}`): use sorted-rows",
                leaf.domain.describe()
            ),
        ));
    };
    let chunk = stats::chunk_len(&ds, count.max(1));
    let entries = option_leaf(leaf, &ds, count, chunk)?;
    stats::write_one(meta, &ds, source, chunk, kind, entries, count, generation)
}

/// A table column's values as h5col computes its `CHUNK_MINMAX` from them
/// (raw values; missing: equal to the user fill value).
struct Raw {
    ds: Dataset,
    p: Place,
    kind: BoundKind,
    /// The user fill value, widened (a bool's: its byte).
    fill: Option<Bound>,
}

impl Raw {
    fn open(ds: &Dataset, column: &str, p: &Place) -> Result<Raw> {
        let info = raw::type_info(ds, p)?;
        use hdf5_sys::h5t::{
            H5T_NATIVE_DOUBLE as D, H5T_NATIVE_INT64 as I, H5T_NATIVE_UINT64 as U,
        };
        let (kind, fill) = match (info.class, info.signed) {
            (H5T_class_t::H5T_INTEGER, true) => (
                BoundKind::I,
                raw::user_fill(ds, *I, 8, p)?.map(|b| Bound::I(i64::from_ne_bytes(eight(&b)))),
            ),
            (H5T_class_t::H5T_INTEGER, false) => (
                BoundKind::U,
                raw::user_fill(ds, *U, 8, p)?.map(|b| Bound::U(u64::from_ne_bytes(eight(&b)))),
            ),
            (H5T_class_t::H5T_FLOAT, _) => (
                BoundKind::F,
                raw::user_fill(ds, *D, 8, p)?.map(|b| Bound::F(f64::from_ne_bytes(eight(&b)))),
            ),
            (H5T_class_t::H5T_ENUM, _) if info.size == 1 => {
                let dt = raw::dataset_type(ds, p)?;
                let fill = raw::user_fill(ds, dt.id(), 1, p)?;
                (BoundKind::B, fill.map(|b| Bound::B(b[0])))
            }
            _ => {
                return Err(Error::mismatch(
                    p,
                    format!("a number, h5col bool or categorical column for a CHUNK_MINMAX index of `{column}` (this version builds none over text: use sorted-rows)"),
                    info.describe(),
                ))
            }
        };
        Ok(Raw {
            ds: ds.clone(),
            p: p.clone(),
            kind,
            fill,
        })
    }

    /// Rows `r`: their values and which equal the fill value.
    fn read(&self, r: Range<u64>) -> Result<(Vals, Option<Vec<bool>>)> {
        let n = r.end - r.start;
        macro_rules! nums {
            ($t:ty) => {{
                let mut v: Vec<$t> = Vec::new();
                crate::pipeline::rows::read_pod_rows::<$t>(
                    &self.ds,
                    &MemType::native(),
                    r.start,
                    n,
                    &[],
                    &mut v,
                    &self.p,
                )?;
                v
            }};
        }
        let vals = match self.kind {
            BoundKind::I => Vals::I(nums!(i64)),
            BoundKind::U => Vals::U(nums!(u64)),
            BoundKind::F => Vals::F(nums!(f64)),
            BoundKind::B => {
                let (b, _) = raw::read_rows_own_type(&self.ds, r.start, n, &self.p)?;
                if let Some(i) = b.iter().position(|&x| x > 1) {
                    return Err(Error::invalid(
                        self.p.element(r.start + i as u64),
                        format!("an h5col bool must be stored as 0 or 1, found {}", b[i]),
                    ));
                }
                Vals::B(b)
            }
        };
        let missing = self.fill.map(|f| match (&vals, f) {
            (Vals::I(v), Bound::I(f)) => v.iter().map(|&x| x == f).collect(),
            (Vals::U(v), Bound::U(f)) => v.iter().map(|&x| x == f).collect(),
            (Vals::F(v), Bound::F(f)) if f.is_nan() => v.iter().map(|x| x.is_nan()).collect(),
            (Vals::F(v), Bound::F(f)) => v.iter().map(|&x| x == f).collect(),
            (Vals::B(v), Bound::B(f)) => v.iter().map(|&x| x == f).collect(),
            _ => vec![false; n as usize],
        });
        Ok((vals, missing))
    }
}

/// The first 8 bytes of `b` (a fill value read as an 8-byte type).
fn eight(b: &[u8]) -> [u8; 8] {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    w
}

/// Builds (or rewrites in place) the `CHUNK_MINMAX` index of table column
/// `leaf` as h5col does (module documentation); the caller writes `KIND`,
/// the tokens and the link.
pub(super) fn table_column(b: &Build<'_>, leaf: &Leaf) -> Result<Dataset> {
    let p = Place::new("$", format!("{}/{}", b.group.name(), b.name));
    let col = leaf
        .dataset()
        .ok_or_else(|| Error::invalid(&leaf.path, "a table column has a dataset"))?;
    let src = Raw::open(col, &leaf.column, &Place::new(&leaf.path, col.name()))?;
    let count = b.count;
    let chunk = stats::chunk_len(col, count.max(1));
    let n = count.div_ceil(chunk);
    let sums = summaries(count, chunk, true, &p, |r| src.read(r))?;
    let mut entries: Vec<Entry> = Vec::new();
    crate::limits::reserve(&mut entries, n, &p)?;
    entries.extend(sums.into_iter().map(|mut s| {
        if s.bounds.is_none() {
            // h5col's placeholders: the fill value, else NaN (a chunk
            // of floats all NaN; integers without a fill value always
            // have a bound).
            let nan = (src.kind == BoundKind::F).then_some(Bound::F(f64::NAN));
            s.bounds = src.fill.or(nan).map(|ph| (ph, ph));
        }
        Entry::new(&s, src.kind)
    }));
    let col_t = raw::dataset_type(col, &p)?;
    let file_t = entry_type(col_t.id(), true, &p)?;
    // An h5col bool's bounds keep its enum type (no conversion to a
    // bitfield exists); numbers are widened.
    let mem_t = if src.kind == BoundKind::B {
        entry_type(col_t.id(), false, &p)?
    } else {
        memory_entry_type(src.kind, &p)?
    };
    let same = |ds: &Dataset| {
        ds.ndim() == 1
            && ds.is_chunked()
            && ds.dtype().is_ok_and(|t| t == file_t)
            && ds
                .shape()
                .first()
                .is_some_and(|&r| r as u64 >= n || ds.resize(n as usize).is_ok())
    };
    let ds = match b.existing.clone().filter(same) {
        Some(ds) => ds,
        None => {
            if b.group.link_exists(b.name) {
                b.group.unlink(b.name).at(&p)?;
            }
            let spec = raw::ColumnSpec {
                dtype: &file_t,
                inner: &[],
                chunk_rows: (CHUNK_BYTES / file_t.size().max(1)).max(1),
                compression: &crate::options::Compression::None,
                checksum: false,
            };
            let ds = raw::create_column(b.group, b.name, &spec, &p)?;
            raw::set_rows(&ds, n, &[], &p)?;
            ds
        }
    };
    let mem = MemType::<Entry>::checked(mem_t, &p)?;
    crate::pipeline::rows::write_pod_rows::<Entry>(&ds, &mem, 0, n, &[], &entries, &p)?;
    Ok(ds)
}
