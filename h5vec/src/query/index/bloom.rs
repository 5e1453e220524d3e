//! `CHUNK_BLOOM`: a Bloom filter of each chunk's values, telling `==` and
//! `in` which chunks may hold a value (SPEC.md 14.6).
//!
//! ```text
//! <source>__chunk_bloom   2-D uint8 (n_chunks, m_bytes), chunks (1, m_bytes), maxshape (unlimited, m_bytes)
//!   row c: the filter of rows [c*C, min(NROWS, (c+1)*C)), C the source's chunk length
//!   (a vector's text leaf: of its `values`, else its `pointers` (VLS); else NROWS)
//!   @k (uint16), @m_bits (uint64, = 8 * m_bytes), @seed (uint32) = 0
//!   @hash_family = "murmur3_x64_128_double" (fixed-length ASCII)
//!   @KIND = "CHUNK_BLOOM", @SOURCE, @SOURCE_GENERATION, @SOURCE_NROWS
//! ```
//!
//! A value's canonical bytes (integers two's complement LE at storage
//! width, floats IEEE LE at storage width with -0 as +0, bool one byte,
//! text UTF-8, time values their stored integer) hash to `(h_a, h_b)` =
//! the low and high halves of MurmurHash3_x64_128; bits `(h_a + i * h_b)
//! mod m_bits`, `i < k`, computed exactly, are set. Missing rows and NaN
//! are never inserted nor queried; enums other than bool are refused.

use std::collections::HashSet;

use hdf5::{Dataset, Extent};

use super::common::{place, read_uint_attr, write_uint_attr, Build};
use super::murmur3::murmur3_x64_128;
use crate::error::{Context, Error, Place, Result};
use crate::query::filter::CmpOp;
use crate::query::leaf::{Domain, Leaf, Vals};
use crate::query::lit::{cmp_int_float, Lit, Pred};
use crate::raw;

const FAMILY: &str = "murmur3_x64_128_double";

/// `(k, m_bits, seed)` of a bloom index whose attributes are usable
/// (`None`: the index counts as absent).
pub(super) fn params(ds: &Dataset) -> Option<(u64, u64, u32)> {
    let k = read_uint_attr(ds, "k")?;
    let m = read_uint_attr(ds, "m_bits")?;
    let seed = u32::try_from(read_uint_attr(ds, "seed")?).ok()?;
    let fam = raw::attr_string(ds, "hash_family", &place(ds)).ok()??;
    if fam != FAMILY || k == 0 || m == 0 || m % 8 != 0 {
        return None;
    }
    let shape = ds.shape();
    if shape.len() != 2 || shape[1] as u64 * 8 != m {
        return None;
    }
    Some((k, m, seed))
}

/// The rows per filter of `leaf`: its values dataset's chunk length, or
/// for a vector's text leaf `text` (the chunks of its `values` or
/// `pointers`, see [`super::text_chunk`]).
fn chunk_of(leaf: &Leaf, count: u64, text: Option<u64>) -> u64 {
    match super::common::source_dataset(leaf) {
        Some(ds) => crate::query::stats::chunk_len(ds, count.max(1)),
        None => text.unwrap_or(count).max(1),
    }
}

/// The storage width in bytes of a number leaf (`0` for text).
fn width(leaf: &Leaf) -> usize {
    super::common::source_dataset(leaf)
        .and_then(|d| d.dtype().ok())
        .map_or(0, |t| t.size())
}

/// The canonical bytes of row `i` of `v` (`None`: NaN, not inserted).
fn canon(v: &Vals, i: usize, w: usize, out: &mut Vec<u8>) -> bool {
    out.clear();
    match v {
        Vals::I(x) => out.extend_from_slice(&x[i].to_le_bytes()[..w]),
        Vals::U(x) => out.extend_from_slice(&x[i].to_le_bytes()[..w]),
        Vals::B(x) => out.push(x[i]),
        Vals::F(x) => {
            let f = x[i];
            if f.is_nan() {
                return false;
            }
            float_bytes(f, w, out);
        }
        Vals::S(x) => match &x[i] {
            Some(s) => out.extend_from_slice(s.as_bytes()),
            None => return false,
        },
    }
    true
}

fn float_bytes(f: f64, w: usize, out: &mut Vec<u8>) {
    let f = if f == 0.0 { 0.0 } else { f };
    if w == 4 {
        out.extend_from_slice(&(f as f32).to_le_bytes());
    } else {
        out.extend_from_slice(&f.to_le_bytes());
    }
}

/// Bit positions of `bytes` in a filter of `m` bits with `k` hashes.
fn positions(bytes: &[u8], k: u64, m: u64, seed: u32) -> impl Iterator<Item = u64> {
    let (a, b) = murmur3_x64_128(bytes, seed);
    (0..k).map(move |i| ((u128::from(a) + u128::from(i) * u128::from(b)) % u128::from(m)) as u64)
}

/// Builds the filters of `leaf`.
pub(super) fn build(b: &Build<'_>, leaf: &mut Leaf) -> Result<Dataset> {
    let p = Place::new("$", format!("{}/{}", b.group.name(), b.name));
    if matches!(leaf.domain, Domain::Enum(_)) {
        return Err(Error::invalid(
            &leaf.path,
            format!(
                "HEP001 allows CHUNK_BLOOM on no enumeration but bool (filter column `{}`): use bitmap or sorted-rows",
                leaf.column
            ),
        ));
    }
    let n = b.count;
    let c = chunk_of(leaf, n, b.text_chunk);
    let w = width(leaf);
    let n_chunks = n.div_ceil(c);
    // Pass 1: the largest number of distinct values in a chunk.
    let mut most = 1usize;
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut bytes = Vec::new();
    let mut each = |f: &mut dyn FnMut(u64, &[u8]) -> Result<()>| -> Result<()> {
        let mut a = 0;
        while a < n {
            let e = (a + c).min(n);
            let mut s = a;
            while s < e {
                let t = (s + crate::options::READ_BATCH_ROWS).min(e);
                let (v, m) = leaf.read(s..t)?;
                for i in 0..(t - s) as usize {
                    if m.as_ref().is_some_and(|m| m[i]) || !canon(&v, i, w, &mut bytes) {
                        continue;
                    }
                    f(a / c, &bytes)?;
                }
                s = t;
            }
            a = e;
        }
        Ok(())
    };
    let mut cur = u64::MAX;
    each(&mut |chunk, bytes| {
        if chunk != cur {
            seen.clear();
            cur = chunk;
        }
        seen.insert(murmur3_x64_128(bytes, 0));
        most = most.max(seen.len());
        Ok(())
    })?;
    drop(seen);
    let nf = most as f64;
    let ln2 = std::f64::consts::LN_2;
    let m_bits = ((-nf * 0.01f64.ln() / (ln2 * ln2)).ceil() as u64)
        .max(64)
        .next_multiple_of(8);
    let k = ((m_bits as f64 / nf * ln2).round() as u64).clamp(1, 16);
    let m_bytes = (m_bits / 8) as usize;
    let ds = bloom_dataset(b, n_chunks as usize, m_bytes, &p)?;
    let p = place(&ds);
    let mut row = vec![0u8; m_bytes];
    let mut cur = None;
    let write = |ds: &Dataset, c: u64, row: &[u8]| ds.write_slice(row, (c as usize, ..)).at(&p);
    each(&mut |chunk, bytes| {
        if cur != Some(chunk) {
            if let Some(prev) = cur {
                write(&ds, prev, &row)?;
                // Chunks without values between: empty filters.
                for e in prev + 1..chunk {
                    write(&ds, e, &vec![0u8; m_bytes])?;
                }
            }
            row.iter_mut().for_each(|b| *b = 0);
            cur = Some(chunk);
        }
        for g in positions(bytes, k, m_bits, 0) {
            row[(g / 8) as usize] |= 1 << (g % 8);
        }
        Ok(())
    })?;
    let done = match cur {
        Some(prev) => {
            write(&ds, prev, &row)?;
            prev + 1
        }
        None => 0,
    };
    for e in done..n_chunks {
        write(&ds, e, &vec![0u8; m_bytes])?;
    }
    write_uint_attr::<u16>(&ds, "k", k as u16, &p)?;
    write_uint_attr::<u64>(&ds, "m_bits", m_bits, &p)?;
    write_uint_attr::<u32>(&ds, "seed", 0, &p)?;
    raw::write_attr_ascii(&ds, "hash_family", FAMILY, &p)?;
    Ok(ds)
}

/// The filters dataset `(n, m_bytes)`: the existing one resized when its
/// row width is `m_bytes`, else a new one.
fn bloom_dataset(b: &Build<'_>, n: usize, m_bytes: usize, p: &Place) -> Result<Dataset> {
    if let Some(ds) = b.existing.clone() {
        let shape = ds.shape();
        if ds.ndim() == 2
            && ds.is_chunked()
            && shape[1] == m_bytes
            && ds.resize((n, m_bytes)).is_ok()
        {
            return Ok(ds);
        }
        drop(ds);
    }
    if b.group.link_exists(b.name) {
        b.group.unlink(b.name).at(p)?;
    }
    b.group
        .new_dataset::<u8>()
        .shape(vec![Extent::resizable(n), Extent::fixed(m_bytes)])
        .chunk((1, m_bytes))
        .create(b.name)
        .at(p)
}

/// The canonical bytes of literal `l` for `leaf` (`None`: no stored value
/// equals it, so no chunk holds it).
fn lit_bytes(leaf: &Leaf, l: &Lit, w: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match (&leaf.domain, l) {
        (Domain::Str, Lit::S(s)) => out.extend_from_slice(s.as_bytes()),
        (Domain::Float, Lit::F(f)) => {
            if w == 4 && f64::from(*f as f32) != *f {
                return None;
            }
            float_bytes(*f, w, &mut out);
        }
        (Domain::Float, Lit::I(i)) => {
            let f = *i as f64;
            if cmp_int_float(*i, f) != std::cmp::Ordering::Equal {
                return None;
            }
            if w == 4 && f64::from(f as f32) != f {
                return None;
            }
            float_bytes(f, w, &mut out);
        }
        (_, Lit::F(f)) => {
            if f.fract() != 0.0 || f.abs() >= 1.8e19 {
                return None;
            }
            return lit_bytes(leaf, &Lit::I(*f as i128), w);
        }
        (_, Lit::I(i)) => {
            let bits = 8 * w as u32;
            let signed = matches!(
                super::common::source_dataset(leaf)
                    .and_then(|d| d.dtype().ok())
                    .and_then(|t| t.to_descriptor().ok()),
                Some(hdf5::types::TypeDescriptor::Integer(_))
            );
            let (lo, hi) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if *i < lo || *i > hi {
                return None;
            }
            out.extend_from_slice(&i.to_le_bytes()[..w]);
        }
        _ => return None,
    }
    Some(out)
}

/// The chunk length and, per chunk, whether it may hold a row where
/// `pred` (`==` / `in`) is true, from the valid bloom index `ds`; `None`:
/// the index cannot say.
pub(super) fn answer(
    ds: &Dataset,
    leaf: &mut Leaf,
    pred: &Pred,
    count: u64,
    text: Option<u64>,
) -> Result<Option<(u64, Vec<bool>)>> {
    let lits: Vec<&Lit> = match pred {
        Pred::Cmp(CmpOp::Eq, l) => vec![l],
        Pred::In(ls) => ls.iter().collect(),
        _ => return Ok(None),
    };
    if matches!(leaf.domain, Domain::Enum(_)) {
        return Ok(None);
    }
    let Some((k, m, seed)) = params(ds) else {
        return Ok(None);
    };
    let p = place(ds);
    let c = chunk_of(leaf, count, text);
    let n = count.div_ceil(c);
    let shape = raw::shape(ds, &p)?;
    let u8_type = ds.dtype().ok().and_then(|t| t.to_descriptor().ok())
        == Some(hdf5::types::TypeDescriptor::Unsigned(
            hdf5::types::IntSize::U1,
        ));
    if shape.first() != Some(&n) || !u8_type {
        return Err(Error::invalid(
            &p,
            format!("a valid CHUNK_BLOOM of {count} rows in chunks of {c} must be uint8 with {n} rows, found {shape:?}"),
        ));
    }
    let w = width(leaf);
    let wanted: Vec<Vec<u64>> = lits
        .iter()
        .filter_map(|l| lit_bytes(leaf, l, w))
        .map(|b| positions(&b, k, m, seed).collect())
        .collect();
    let mut may = vec![false; n as usize];
    if wanted.is_empty() {
        return Ok(Some((c, may)));
    }
    // One filter (row) at a time: m_bits / 8 bytes, which the file sets.
    let mut probe: Vec<u8> = Vec::new();
    crate::limits::reserve(&mut probe, m / 8, &p)?;
    drop(probe);
    for (chunk, o) in may.iter_mut().enumerate() {
        let row = ds.read_slice_1d::<u8, _>((chunk, ..)).at(&p)?;
        let has = |g: &u64| {
            row.get((g / 8) as usize)
                .is_some_and(|b| b & (1 << (g % 8)) != 0)
        };
        *o = wanted.iter().any(|gs| gs.iter().all(has));
    }
    Ok(Some((c, may)))
}
