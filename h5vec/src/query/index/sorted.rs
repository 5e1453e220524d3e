//! `SORTED_ROWS`: the rows of a leaf in value order, answering equality,
//! ranges and `in` exactly by binary search (SPEC.md 14.6).
//!
//! ```text
//! <source>__sorted_rows   1-D uint64 (NROWS,), chunks (8192,), maxshape unlimited, no filters
//!   [ body: non-missing, non-NaN rows sorted by value, ties by row | fill tail (missing rows) | NaN tail ]
//!   @nan_tail_length, @fill_tail_length   scalar uint64
//!   @ordered                              HEP001 boolean (int8 enum FALSE=0/TRUE=1) = TRUE
//!   @KIND = "SORTED_ROWS", @SOURCE, @SOURCE_GENERATION, @SOURCE_NROWS
//! ```
//!
//! Order: integers arithmetic, floats IEEE with -0 == +0, bool 0 < 1,
//! enums by stored code, text byte-wise on UTF-8, time values by their
//! stored integer. Probes read one permutation entry and one row of the
//! leaf each.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;

use hdf5::{Dataset, Datatype};

use super::common::{cmp_at, list_or_bits, place, read_bool_attr, write_bool_attr, Build, RowSet};
use crate::error::{Context, Error, Place, Result};
use crate::query::filter::CmpOp;
use crate::query::leaf::{Leaf, Vals};
use crate::query::lit::{Lit, Pred};
use crate::query::stats::{read_u64_attr, write_u64_attr};
use crate::raw::{self, MemType};

/// Rows per chunk of the permutation (64 KiB).
const CHUNK: usize = 8192;

/// Rows of a number leaf read (and kept) around each probed row.
const BLOCK: u64 = 256;

/// Whether the family's attributes are there with the right types.
pub(super) fn attrs_ok(ds: &Dataset) -> bool {
    read_u64_attr(ds, "nan_tail_length").is_some()
        && read_u64_attr(ds, "fill_tail_length").is_some()
        && read_bool_attr(ds, "ordered").is_some()
}

/// Values with their rows, of one leaf type.
enum Acc {
    I(Vec<(i64, u64)>),
    U(Vec<(u64, u64)>),
    F(Vec<(f64, u64)>),
    S(Vec<(String, u64)>),
}

/// Builds the permutation of `leaf` into `b`'s dataset.
pub(super) fn build(b: &Build<'_>, leaf: &mut Leaf) -> Result<Dataset> {
    let n = b.count;
    let p = Place::new("$", format!("{}/{}", b.group.name(), b.name));
    let mut acc: Option<Acc> = None;
    let mut fill = Vec::new();
    let mut nan = Vec::new();
    super::common::each_batch(leaf, n, |a, v, m| {
        let len = match v {
            Vals::I(x) => x.len(),
            Vals::U(x) => x.len(),
            Vals::F(x) => x.len(),
            Vals::B(x) => x.len(),
            Vals::S(x) => x.len(),
        };
        let acc = acc.get_or_insert_with(|| match v {
            Vals::I(_) => Acc::I(Vec::new()),
            Vals::U(_) | Vals::B(_) => Acc::U(Vec::new()),
            Vals::F(_) => Acc::F(Vec::new()),
            Vals::S(_) => Acc::S(Vec::new()),
        });
        for i in 0..len {
            let row = a + i as u64;
            if b.nan_first && matches!(v, Vals::F(x) if x[i].is_nan()) {
                crate::limits::grow(&mut nan, 1, n, &p)?;
                nan.push(row);
                continue;
            }
            if m.is_some_and(|m| m[i]) {
                crate::limits::grow(&mut fill, 1, n, &p)?;
                fill.push(row);
                continue;
            }
            match (&mut *acc, v) {
                (Acc::I(o), Vals::I(x)) => {
                    crate::limits::grow(o, 1, n, &p)?;
                    o.push((x[i], row));
                }
                (Acc::U(o), Vals::U(x)) => {
                    crate::limits::grow(o, 1, n, &p)?;
                    o.push((x[i], row));
                }
                (Acc::U(o), Vals::B(x)) => {
                    crate::limits::grow(o, 1, n, &p)?;
                    o.push((u64::from(x[i]), row));
                }
                (Acc::F(o), Vals::F(x)) => {
                    if x[i].is_nan() {
                        crate::limits::grow(&mut nan, 1, n, &p)?;
                        nan.push(row);
                    } else {
                        crate::limits::grow(o, 1, n, &p)?;
                        o.push((x[i], row));
                    }
                }
                (Acc::S(o), Vals::S(x)) => match &x[i] {
                    Some(s) => {
                        crate::limits::grow(o, 1, n, &p)?;
                        o.push((s.clone(), row));
                    }
                    None => {
                        crate::limits::grow(&mut fill, 1, n, &p)?;
                        fill.push(row);
                    }
                },
                _ => return Err(Error::invalid(&p, "internal: a leaf changed its type")),
            }
        }
        Ok(())
    })?;
    let mut perm: Vec<u64> = Vec::new();
    crate::limits::reserve(&mut perm, n, &p)?;
    // Stable sorts: ties stay in row order.
    match acc {
        Some(Acc::I(mut v)) => {
            v.sort_by_key(|x| x.0);
            perm.extend(v.into_iter().map(|x| x.1));
        }
        Some(Acc::U(mut v)) => {
            v.sort_by_key(|x| x.0);
            perm.extend(v.into_iter().map(|x| x.1));
        }
        Some(Acc::F(mut v)) => {
            // No NaN here; -0.0 == +0.0.
            v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal));
            perm.extend(v.into_iter().map(|x| x.1));
        }
        Some(Acc::S(mut v)) => {
            v.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            perm.extend(v.into_iter().map(|x| x.1));
        }
        None => {}
    }
    let (fill_n, nan_n) = (fill.len() as u64, nan.len() as u64);
    perm.extend(fill);
    perm.extend(nan);
    let ds = match b.existing.clone().filter(is_u64_vector) {
        Some(ds) => ds,
        None => {
            if b.group.link_exists(b.name) {
                b.group.unlink(b.name).at(&p)?;
            }
            let dt = Datatype::from_type::<u64>().at(&p)?;
            let spec = raw::ColumnSpec {
                dtype: &dt,
                inner: &[],
                chunk_rows: CHUNK,
                compression: &crate::options::Compression::None,
                checksum: false,
            };
            raw::create_column(b.group, b.name, &spec, &p)?
        }
    };
    let p = place(&ds);
    crate::pipeline::rows::write_pod_rows::<u64>(&ds, &MemType::native(), 0, n, &[], &perm, &p)?;
    write_u64_attr(&ds, "nan_tail_length", nan_n, &p)?;
    write_u64_attr(&ds, "fill_tail_length", fill_n, &p)?;
    write_bool_attr(&ds, "ordered", true, &p)?;
    Ok(ds)
}

/// Whether `ds` is a 1-D uint64 dataset (extendible: rewritten in place).
fn is_u64_vector(ds: &Dataset) -> bool {
    let t = ds.dtype().ok().and_then(|t| t.to_descriptor().ok());
    t == Some(hdf5::types::TypeDescriptor::Unsigned(
        hdf5::types::IntSize::U8,
    )) && ds.ndim() == 1
        && ds.is_chunked()
}

/// Binary search over a valid permutation.
struct Probe<'a> {
    ds: &'a Dataset,
    p: Place,
    n: u64,
    mem: MemType<u64>,
    perm: HashMap<u64, u64>,
    /// Blocks of [`BLOCK`] rows of the leaf read so far, by block.
    vals: HashMap<u64, (Vals, Option<Vec<bool>>)>,
    buf: Vec<u64>,
}

impl Probe<'_> {
    /// Permutation entry `i` (checked against the row count).
    fn perm(&mut self, i: u64) -> Result<u64> {
        if let Some(&r) = self.perm.get(&i) {
            return Ok(r);
        }
        crate::pipeline::rows::read_pod_rows::<u64>(
            self.ds,
            &self.mem,
            i,
            1,
            &[],
            &mut self.buf,
            &self.p,
        )?;
        let r = self.buf[0];
        if r >= self.n {
            return Err(Error::invalid(
                self.p.element(i),
                format!("SORTED_ROWS entry {r} is not a row of the {} rows", self.n),
            ));
        }
        self.perm.insert(i, r);
        Ok(r)
    }

    /// The value at body position `i` against `l`.
    fn cmp(&mut self, leaf: &mut Leaf, i: u64, l: &Lit) -> Result<Ordering> {
        let r = self.perm(i)?;
        // Rows are read in aligned blocks, kept: the last probes of a
        // search over a sorted column fall in the same block.
        let block = if leaf.values_dataset().is_some() {
            BLOCK
        } else {
            1
        };
        let b = r / block;
        if !self.vals.contains_key(&b) {
            let (a, e) = (b * block, ((b + 1) * block).min(self.n));
            let got = leaf.read(a..e)?;
            self.vals.insert(b, got);
        }
        let (v, m) = &self.vals[&b];
        let k = (r - b * block) as usize;
        if m.as_ref().is_some_and(|m| m[k]) {
            return Err(Error::invalid(
                self.p.element(i),
                format!("SORTED_ROWS body holds row {r}, which is missing"),
            ));
        }
        cmp_at(v, k, l).ok_or_else(|| {
            Error::invalid(
                self.p.element(i),
                format!("SORTED_ROWS body holds row {r}, whose value is NaN"),
            )
        })
    }

    /// The first position of `a..b` where `stop` holds (`b` if none);
    /// `stop` is false then true along the sorted body.
    fn first(
        &mut self,
        leaf: &mut Leaf,
        mut a: u64,
        mut b: u64,
        l: &Lit,
        stop: fn(Ordering) -> bool,
    ) -> Result<u64> {
        while a < b {
            let mid = a + (b - a) / 2;
            if stop(self.cmp(leaf, mid, l)?) {
                b = mid;
            } else {
                a = mid + 1;
            }
        }
        Ok(a)
    }

    /// [`Self::first`] searching from `a` in growing steps (few probes
    /// when the answer is near `a`).
    fn gallop(
        &mut self,
        leaf: &mut Leaf,
        a: u64,
        b: u64,
        l: &Lit,
        stop: fn(Ordering) -> bool,
    ) -> Result<u64> {
        let mut lo = a;
        let mut step = 1u64;
        loop {
            let j = lo.saturating_add(step - 1);
            if j >= b {
                return self.first(leaf, lo, b, l, stop);
            }
            if stop(self.cmp(leaf, j, l)?) {
                return self.first(leaf, lo, j, l, stop);
            }
            lo = j + 1;
            step = step.saturating_mul(2);
        }
    }
}

fn not_less(o: Ordering) -> bool {
    o != Ordering::Less
}
fn greater(o: Ordering) -> bool {
    o == Ordering::Greater
}

/// The rows where `pred` is true, from the valid permutation `ds` of
/// `leaf`'s `count` rows; with the unknown rows (the fill tail: missing
/// rows) when `need_u`.
pub(super) fn answer(
    ds: &Dataset,
    leaf: &mut Leaf,
    pred: &Pred,
    count: u64,
    need_u: bool,
) -> Result<(RowSet, Option<RowSet>)> {
    let p = place(ds);
    let shape = raw::shape(ds, &p)?;
    if !is_u64_vector(ds) || shape != [count] {
        return Err(Error::invalid(
            &p,
            format!(
                "a valid SORTED_ROWS index must be a 1-D uint64 dataset of {count} rows, found shape {shape:?} of {}",
                raw::describe_dtype(ds, &p).map(|d| d.0).unwrap_or_default()
            ),
        ));
    }
    let nan = read_u64_attr(ds, "nan_tail_length").unwrap_or(0);
    let fill = read_u64_attr(ds, "fill_tail_length").unwrap_or(0);
    let Some(body) = nan.checked_add(fill).and_then(|t| count.checked_sub(t)) else {
        return Err(Error::invalid(
            &p,
            format!(
                "SORTED_ROWS tails of {nan} NaN and {fill} missing rows exceed its {count} rows"
            ),
        ));
    };
    let mut pr = Probe {
        ds,
        p: p.clone(),
        n: count,
        mem: MemType::native(),
        perm: HashMap::new(),
        vals: HashMap::new(),
        buf: Vec::new(),
    };
    let mut ranges: Vec<Range<u64>> = Vec::new();
    let eq = |pr: &mut Probe<'_>, leaf: &mut Leaf, l: &Lit| -> Result<Range<u64>> {
        if *l == Lit::Nothing {
            return Ok(0..0);
        }
        let lo = pr.first(leaf, 0, body, l, not_less)?;
        let hi = pr.gallop(leaf, lo, body, l, greater)?;
        Ok(lo..hi)
    };
    match pred {
        Pred::Cmp(_, Lit::Nothing) => {}
        Pred::Cmp(CmpOp::Eq | CmpOp::Ne, l) => ranges.push(eq(&mut pr, leaf, l)?),
        Pred::Cmp(CmpOp::Lt, l) => ranges.push(0..pr.first(leaf, 0, body, l, not_less)?),
        Pred::Cmp(CmpOp::Le, l) => ranges.push(0..pr.first(leaf, 0, body, l, greater)?),
        Pred::Cmp(CmpOp::Gt, l) => ranges.push(pr.first(leaf, 0, body, l, greater)?..body),
        Pred::Cmp(CmpOp::Ge, l) => ranges.push(pr.first(leaf, 0, body, l, not_less)?..body),
        Pred::Between(a, b) => {
            if *a != Lit::Nothing && *b != Lit::Nothing {
                let lo = pr.first(leaf, 0, body, a, not_less)?;
                let hi = pr.gallop(leaf, lo, body, b, greater)?;
                ranges.push(lo..hi.max(lo));
            }
        }
        Pred::In(ls) => {
            for l in ls {
                ranges.push(eq(&mut pr, leaf, l)?);
            }
        }
        Pred::Null(_) => {
            return Err(Error::invalid(&p, "internal: presence from SORTED_ROWS"));
        }
    }
    let t = rows_at(&mut pr, &ranges, count)?;
    // Only missing rows are unknown: NaN is a value no predicate holds for.
    let u = if need_u {
        Some(rows_at(
            &mut pr,
            std::slice::from_ref(&(body..body + fill)),
            count,
        )?)
    } else {
        None
    };
    Ok((t, u))
}

/// The rows at permutation positions `ranges`.
fn rows_at(pr: &mut Probe<'_>, ranges: &[Range<u64>], count: u64) -> Result<RowSet> {
    let total: u64 = ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum();
    let mut rows = Vec::new();
    crate::limits::reserve(&mut rows, total, &pr.p)?;
    for r in ranges {
        if r.end - r.start <= 2 {
            for i in r.clone() {
                rows.push(pr.perm(i)?);
            }
            continue;
        }
        let mut a = r.start;
        while a < r.end {
            let k = (r.end - a).min(crate::options::READ_BATCH_ROWS);
            crate::pipeline::rows::read_pod_rows::<u64>(
                pr.ds,
                &pr.mem,
                a,
                k,
                &[],
                &mut pr.buf,
                &pr.p,
            )?;
            if let Some(i) = pr.buf.iter().position(|&x| x >= count) {
                return Err(Error::invalid(
                    pr.p.element(a + i as u64),
                    format!(
                        "SORTED_ROWS entry {} is not a row of the {count} rows",
                        pr.buf[i]
                    ),
                ));
            }
            rows.extend_from_slice(&pr.buf);
            a += k;
        }
    }
    list_or_bits(rows, count, &pr.p)
}
