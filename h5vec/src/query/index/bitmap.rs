//! `BITMAP`: one bitmap of rows per distinct value of a leaf, answering
//! `==` and `in` exactly (SPEC.md 14.6).
//!
//! ```text
//! <source>__bitmap          2-D uint8 (K, ceil(NROWS/8)), chunks (max(1, 65536 / W), W) with
//!                           W = min(65536, max(1, ceil(NROWS/8))), maxshape (unlimited, unlimited)
//!   bit r % 8 (LSB first) of byte r / 8 of row k: row r holds the k-th value; pad bits 0
//!   @VALUES      scalar object reference to <source>__bitmap_values
//!   @ordered     HEP001 boolean = TRUE (values ascending)
//!   @exhaustive  HEP001 boolean: FALSE when the column holds non-missing NaN (never enumerated)
//!   @KIND = "BITMAP", @SOURCE, @SOURCE_GENERATION, @SOURCE_NROWS
//! <source>__bitmap_values   1-D (K,), the source's datatype (text: variable-length UTF-8),
//!                           chunks (max(1, 65536 / itemsize),), maxshape unlimited, no KIND
//! ```
//!
//! At most 65,536 distinct values.

use std::collections::BTreeSet;

use hdf5::{Dataset, Extent, Group};

use super::common::{cmp_at, place, read_bool_attr, write_bool_attr, Build, RowSet};
use crate::error::{Context, Error, Place, Result};
use crate::query::filter::CmpOp;
use crate::query::leaf::{Leaf, Vals};
use crate::query::lit::{Lit, Pred};
use crate::raw::{self, RefTarget};

/// Most distinct values a bitmap holds.
const MAX_VALUES: usize = 65_536;
/// Bytes of a bitmap chunk: `(max(1, CHUNK_BYTES / W), W)` with `W` the
/// row's bytes up to this (a short row shares its chunk with other values':
/// one chunk per value would make a small vector's bitmap of many values
/// hundreds of megabytes).
const CHUNK_BYTES: usize = 65_536;
/// Most bytes a bitmap may take (`K * ceil(NROWS / 8)`): past it, a
/// SORTED_ROWS index answers the same questions in 8 bytes a row.
const MAX_BYTES: u64 = 1 << 30;

/// The chunk shape of a bitmap of `nb` bytes a row.
fn chunk_shape(nb: usize) -> (usize, usize) {
    let w = nb.clamp(1, CHUNK_BYTES);
    ((CHUNK_BYTES / w).max(1), w)
}

/// Whether the family's attributes are there with the right types.
pub(super) fn attrs_ok(ds: &Dataset) -> bool {
    read_bool_attr(ds, "ordered").is_some()
        && read_bool_attr(ds, "exhaustive").is_some()
        && ds.attr("VALUES").is_ok()
}

/// A float as an integer key in IEEE order (-0 as +0; not NaN).
fn fkey(x: f64) -> u64 {
    let x = if x == 0.0 { 0.0 } else { x };
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}
fn unkey(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The distinct values of a leaf, ascending.
enum Distinct {
    I(BTreeSet<i64>),
    U(BTreeSet<u64>),
    F(BTreeSet<u64>),
    S(BTreeSet<String>),
}

impl Distinct {
    fn len(&self) -> usize {
        match self {
            Distinct::I(s) => s.len(),
            Distinct::U(s) | Distinct::F(s) => s.len(),
            Distinct::S(s) => s.len(),
        }
    }
}

/// The sorted distinct values as a vector to search.
enum Sorted {
    I(Vec<i64>),
    U(Vec<u64>),
    F(Vec<u64>),
    S(Vec<String>),
}

/// The position of row `i` of `v` among the values (`None`: missing/NaN).
fn code(s: &Sorted, v: &Vals, i: usize) -> Option<usize> {
    match (s, v) {
        (Sorted::I(s), Vals::I(x)) => s.binary_search(&x[i]).ok(),
        (Sorted::U(s), Vals::U(x)) => s.binary_search(&x[i]).ok(),
        (Sorted::U(s), Vals::B(x)) => s.binary_search(&u64::from(x[i])).ok(),
        (Sorted::F(s), Vals::F(x)) if !x[i].is_nan() => s.binary_search(&fkey(x[i])).ok(),
        (Sorted::S(s), Vals::S(x)) => x[i].as_ref().and_then(|x| s.binary_search(x).ok()),
        _ => None,
    }
}

/// Builds the bitmap of `leaf` and its values dataset.
pub(super) fn build(b: &Build<'_>, leaf: &mut Leaf) -> Result<Dataset> {
    let n = b.count;
    let p = Place::new("$", format!("{}/{}", b.group.name(), b.name));
    let mut d: Option<Distinct> = None;
    let mut has_nan = false;
    let too_many = |k: usize| {
        Error::invalid(
            &p,
            format!(
                "a BITMAP holds at most {MAX_VALUES} distinct values; this column has more than {k}: use sorted-rows"
            ),
        )
    };
    super::common::each_batch(leaf, n, |_, v, m| {
        let d = d.get_or_insert_with(|| match v {
            Vals::I(_) => Distinct::I(BTreeSet::new()),
            Vals::U(_) | Vals::B(_) => Distinct::U(BTreeSet::new()),
            Vals::F(_) => Distinct::F(BTreeSet::new()),
            Vals::S(_) => Distinct::S(BTreeSet::new()),
        });
        let miss = |i: usize| m.is_some_and(|m| m[i]);
        match (&mut *d, v) {
            (Distinct::I(s), Vals::I(x)) => x
                .iter()
                .enumerate()
                .filter(|(i, _)| !miss(*i))
                .for_each(|(_, &x)| {
                    s.insert(x);
                }),
            (Distinct::U(s), Vals::U(x)) => x
                .iter()
                .enumerate()
                .filter(|(i, _)| !miss(*i))
                .for_each(|(_, &x)| {
                    s.insert(x);
                }),
            (Distinct::U(s), Vals::B(x)) => x
                .iter()
                .enumerate()
                .filter(|(i, _)| !miss(*i))
                .for_each(|(_, &x)| {
                    s.insert(u64::from(x));
                }),
            (Distinct::F(s), Vals::F(x)) => {
                for (i, &x) in x.iter().enumerate() {
                    if miss(i) {
                        continue;
                    }
                    if x.is_nan() {
                        has_nan = true;
                    } else {
                        s.insert(fkey(x));
                    }
                }
            }
            (Distinct::S(s), Vals::S(x)) => {
                for x in x.iter().flatten() {
                    if !s.contains(x) {
                        s.insert(x.clone());
                    }
                }
            }
            _ => return Err(Error::invalid(&p, "internal: a leaf changed its type")),
        }
        if d.len() > MAX_VALUES {
            return Err(too_many(MAX_VALUES));
        }
        Ok(())
    })?;
    let sorted = match d.unwrap_or(Distinct::U(BTreeSet::new())) {
        Distinct::I(s) => Sorted::I(s.into_iter().collect()),
        Distinct::U(s) => Sorted::U(s.into_iter().collect()),
        Distinct::F(s) => Sorted::F(s.into_iter().collect()),
        Distinct::S(s) => Sorted::S(s.into_iter().collect()),
    };
    let k = match &sorted {
        Sorted::I(s) => s.len(),
        Sorted::U(s) | Sorted::F(s) => s.len(),
        Sorted::S(s) => s.len(),
    };
    let bytes = (k as u64).saturating_mul(n.div_ceil(8));
    if bytes > MAX_BYTES {
        return Err(Error::invalid(
            &p,
            format!(
                "a BITMAP of {k} distinct values over {n} rows would take {bytes} bytes (at most \
                 {MAX_BYTES}): use sorted-rows"
            ),
        ));
    }
    // Each row's value position, then the rows of each value (a counting
    // sort): 12 bytes a row.
    let mut codes: Vec<u32> = Vec::new();
    crate::limits::reserve(&mut codes, n, &p)?;
    super::common::each_batch(leaf, n, |_, v, m| {
        let len = match v {
            Vals::I(x) => x.len(),
            Vals::U(x) => x.len(),
            Vals::F(x) => x.len(),
            Vals::B(x) => x.len(),
            Vals::S(x) => x.len(),
        };
        for i in 0..len {
            let c = if m.is_some_and(|m| m[i]) {
                None
            } else {
                code(&sorted, v, i)
            };
            codes.push(c.map_or(u32::MAX, |c| c as u32));
        }
        Ok(())
    })?;
    let mut start = vec![0u64; k + 1];
    for &c in &codes {
        if c != u32::MAX {
            start[c as usize + 1] += 1;
        }
    }
    for i in 0..k {
        start[i + 1] += start[i];
    }
    let mut rows: Vec<u64> = Vec::new();
    crate::limits::reserve(&mut rows, start[k], &p)?;
    rows.resize(start[k] as usize, 0);
    let mut next = start.clone();
    for (r, &c) in codes.iter().enumerate() {
        if c != u32::MAX {
            rows[next[c as usize] as usize] = r as u64;
            next[c as usize] += 1;
        }
    }
    drop(codes);
    let nb = n.div_ceil(8) as usize;
    let ds = bitmap_dataset(b, k, nb, &p)?;
    let p = place(&ds);
    // Written chunk by chunk: `g` values by `w` bytes of their rows at a
    // time; a block without a set bit is not written (its chunk is never
    // allocated and reads as zeros).
    let (g, w) = chunk_shape(nb);
    let mut block = Vec::new();
    for c0 in (0..k).step_by(g) {
        let c1 = (c0 + g).min(k);
        for a in (0..nb).step_by(w) {
            let e = (a + w).min(nb);
            block.clear();
            block.resize((c1 - c0) * (e - a), 0u8);
            let mut any = false;
            for c in c0..c1 {
                let rs = &rows[start[c] as usize..start[c + 1] as usize];
                // The rows of value `c` in bytes `a..e`.
                let lo = rs.partition_point(|&r| ((r / 8) as usize) < a);
                let hi = rs.partition_point(|&r| ((r / 8) as usize) < e);
                for &r in &rs[lo..hi] {
                    block[(c - c0) * (e - a) + (r / 8) as usize - a] |= 1 << (r % 8);
                    any = true;
                }
            }
            if any {
                let view = ndarray::ArrayView2::from_shape((c1 - c0, e - a), &block[..])
                    .map_err(|e| Error::invalid(&p, format!("internal: {e}")))?;
                ds.write_slice(view, (c0..c1, a..e)).at(&p)?;
            }
        }
    }
    let values = values_dataset(b, leaf, &sorted, k, &p)?;
    drop(values);
    if raw::has_attr(&ds, "VALUES", &p)? {
        ds.delete_attr("VALUES").at(&p)?;
    }
    raw::write_obj_ref_attr(&ds, "VALUES", b.group, &format!("{}_values", b.name), &p)?;
    write_bool_attr(&ds, "ordered", true, &p)?;
    write_bool_attr(&ds, "exhaustive", !has_nan, &p)?;
    Ok(ds)
}

/// The bitmap dataset, `(k, nb)` and all zero: the existing one emptied
/// and grown (in place), or a new one.
fn bitmap_dataset(b: &Build<'_>, k: usize, nb: usize, p: &Place) -> Result<Dataset> {
    if let Some(ds) = b.existing.clone() {
        let ok = ds.ndim() == 2
            && ds.is_chunked()
            && ds.dtype().ok().and_then(|t| t.to_descriptor().ok())
                == Some(hdf5::types::TypeDescriptor::Unsigned(
                    hdf5::types::IntSize::U1,
                ));
        if ok && ds.resize((0, 0)).is_ok() && ds.resize((k, nb)).is_ok() {
            return Ok(ds);
        }
        drop(ds);
    }
    if b.group.link_exists(b.name) {
        b.group.unlink(b.name).at(p)?;
    }
    b.group
        .new_dataset::<u8>()
        .shape(vec![Extent::resizable(k), Extent::resizable(nb)])
        .chunk(chunk_shape(nb))
        .create(b.name)
        .at(p)
}

/// Writes the values dataset `<name>_values`: the source's type (text:
/// variable-length UTF-8), resized in place when it exists with that type.
fn values_dataset(
    b: &Build<'_>,
    leaf: &Leaf,
    sorted: &Sorted,
    k: usize,
    p: &Place,
) -> Result<Dataset> {
    let name = format!("{}_values", b.name);
    let g: &Group = b.group;
    let dt = match super::common::source_dataset(leaf) {
        Some(src) => raw::dataset_type(src, p)?,
        None => raw::vlen_utf8(p)?,
    };
    let existing = if g.link_exists(&name) {
        let same = g
            .dataset(&name)
            .ok()
            .filter(|ds| ds.ndim() == 1 && ds.is_chunked())
            .filter(|ds| ds.dtype().is_ok_and(|t| t == dt));
        if same.is_none() {
            g.unlink(&name).at(p)?;
        }
        same
    } else {
        None
    };
    let ds = match existing {
        Some(ds) => ds,
        None => {
            let size = dt.size().max(1);
            let spec = raw::ColumnSpec {
                dtype: &dt,
                inner: &[],
                chunk_rows: (65_536 / size).max(1),
                compression: &crate::options::Compression::None,
                checksum: false,
            };
            raw::create_column(g, &name, &spec, p)?
        }
    };
    let vp = place(&ds);
    raw::set_rows(&ds, k as u64, &[], &vp)?;
    let w = dt.size();
    if let Sorted::S(s) = sorted {
        let (class, _, var) = raw::string_facts(&dt);
        if class == hdf5_sys::h5t::H5T_class_t::H5T_STRING && !var {
            // A table's fixed-length strings: null-padded to the width.
            let mut buf = vec![0u8; k * w];
            for (i, x) in s.iter().enumerate() {
                let b = x.as_bytes();
                let n = b.len().min(w);
                buf[i * w..i * w + n].copy_from_slice(&b[..n]);
            }
            raw::write_plain_rows_bytes(&ds, &dt, 0, k as u64, &[], &buf, &vp)?;
            return Ok(ds);
        }
        let refs: Vec<&str> = s.iter().map(String::as_str).collect();
        return raw::write_vlen_strings(&ds, 0, &refs, &vp).map(|()| ds);
    }
    let mut buf = Vec::with_capacity(k * w);
    match sorted {
        Sorted::I(s) => s
            .iter()
            .for_each(|x| buf.extend_from_slice(&x.to_le_bytes()[..w])),
        Sorted::U(s) => s
            .iter()
            .for_each(|x| buf.extend_from_slice(&x.to_le_bytes()[..w])),
        Sorted::F(s) => s.iter().for_each(|&x| {
            let x = unkey(x);
            if w == 4 {
                buf.extend_from_slice(&(x as f32).to_le_bytes());
            } else {
                buf.extend_from_slice(&x.to_le_bytes());
            }
        }),
        Sorted::S(_) => {}
    }
    raw::write_plain_rows_bytes(&ds, &dt, 0, k as u64, &[], &buf, &vp)?;
    Ok(ds)
}

/// The values of the valid bitmap `ds` (its `_values` dataset, which
/// `VALUES` must reference), as a leaf would read them; `None`: no index.
fn read_values(ds: &Dataset, leaf: &Leaf, k: u64) -> Result<Option<Vals>> {
    let p = place(ds);
    let full = ds.name();
    let (parent, member) = full.rsplit_once('/').unwrap_or(("", &full));
    let Ok(g) = ds
        .file()
        .and_then(|f| f.group(if parent.is_empty() { "/" } else { parent }))
    else {
        return Ok(None);
    };
    let vname = format!("{member}_values");
    let Ok(a) = ds.attr("VALUES") else {
        return Ok(None);
    };
    match raw::ref_attr_target(&a, &g, std::slice::from_ref(&vname), &p.attribute("VALUES")) {
        Ok(RefTarget::Found(0)) => {}
        _ => return Ok(None),
    }
    let vds = g.dataset(&vname).at(&p)?;
    let vp = place(&vds);
    let shape = raw::shape(&vds, &vp)?;
    if shape != [k] {
        return Err(Error::invalid(
            &vp,
            format!(
                "the values of a valid BITMAP of {k} rows must have shape [{k}], found {shape:?}"
            ),
        ));
    }
    let Some(src) = super::common::source_dataset(leaf) else {
        return Ok(Some(Vals::S(
            raw::read_vlen_strings(&vds, 0, k, &vp)?
                .into_iter()
                .map(Some)
                .collect(),
        )));
    };
    let dt = raw::dataset_type(src, &vp)?;
    let vt = raw::dataset_type(&vds, &vp)?;
    if vt != dt {
        return Err(Error::invalid(
            &vp,
            "the values of a valid BITMAP must have the type of its source column",
        ));
    }
    let (class, _, var) = raw::string_facts(&dt);
    if class == hdf5_sys::h5t::H5T_class_t::H5T_STRING {
        if var {
            let v = raw::read_vlen_strings(&vds, 0, k, &vp)?;
            return Ok(Some(Vals::S(v.into_iter().map(Some).collect())));
        }
        // Fixed-length: trailing pad bytes (NUL, or spaces when
        // space-padded) stripped, as the column's values are compared.
        // (A NUL-padded or -terminated string stops at its first NUL.)
        let w = dt.size().max(1);
        // SAFETY: a query of the open datatype `dt`, under the lock.
        let space = raw::sync(|| unsafe { hdf5_sys::h5t::H5Tget_strpad(dt.id()) })
            == hdf5_sys::h5t::H5T_str_t::H5T_STR_SPACEPAD;
        let pad = if space { b' ' } else { 0 };
        let mut buf = Vec::new();
        crate::limits::reserve(&mut buf, k * w as u64, &vp)?;
        buf.resize(k as usize * w, 0u8);
        raw::read_plain_rows_bytes(&vds, &dt, 0, k, &[], &mut buf, &vp)?;
        let out = buf
            .chunks_exact(w)
            .map(|c| {
                let end = if pad == 0 {
                    c.iter().position(|&b| b == 0).unwrap_or(c.len())
                } else {
                    c.iter().rposition(|&b| b != pad).map_or(0, |i| i + 1)
                };
                String::from_utf8(c[..end].to_vec()).ok()
            })
            .collect();
        return Ok(Some(Vals::S(out)));
    }
    let w = dt.size();
    let mut buf = Vec::new();
    crate::limits::reserve(&mut buf, k * w as u64, &vp)?;
    buf.resize(k as usize * w, 0u8);
    raw::read_plain_rows_bytes(&vds, &dt, 0, k, &[], &mut buf, &vp)?;
    let le = |c: &[u8]| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    };
    use hdf5::types::TypeDescriptor as D;
    let chunks = buf.chunks_exact(w.max(1));
    Ok(Some(match dt.to_descriptor().ok() {
        Some(D::Float(_)) if w == 4 => Vals::F(
            chunks
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes"))))
                .collect(),
        ),
        Some(D::Float(_)) => Vals::F(
            chunks
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
        ),
        Some(D::Unsigned(_)) => Vals::U(chunks.map(le).collect()),
        Some(D::Integer(_)) => Vals::I(
            chunks
                .map(|c| {
                    let v = le(c);
                    let sh = 64 - 8 * w as u32;
                    ((v << sh) as i64) >> sh
                })
                .collect(),
        ),
        // A bitfield (`Bool`) or an enum: its stored byte(s).
        _ if w == 1 => Vals::B(buf.clone()),
        _ => return Ok(None),
    }))
}

/// The rows where `pred` (`==` / `in`) is true, from the valid bitmap
/// `ds`; `None`: the bitmap cannot say.
pub(super) fn answer(
    ds: &Dataset,
    leaf: &mut Leaf,
    pred: &Pred,
    count: u64,
) -> Result<Option<RowSet>> {
    let lits: Vec<&Lit> = match pred {
        Pred::Cmp(CmpOp::Eq, l) => vec![l],
        Pred::In(ls) => ls.iter().collect(),
        _ => return Ok(None),
    };
    let p = place(ds);
    let shape = raw::shape(ds, &p)?;
    let nb = count.div_ceil(8);
    let u8_type = ds.dtype().ok().and_then(|t| t.to_descriptor().ok())
        == Some(hdf5::types::TypeDescriptor::Unsigned(
            hdf5::types::IntSize::U1,
        ));
    if shape.len() != 2 || shape[1] != nb || !u8_type {
        return Err(Error::invalid(
            &p,
            format!(
                "a valid BITMAP of {count} rows must be uint8 of shape [K, {nb}], found {shape:?}"
            ),
        ));
    }
    let k = shape[0];
    if k > MAX_VALUES as u64 {
        return Err(Error::invalid(
            &p,
            format!("a valid BITMAP holds at most {MAX_VALUES} values, found {k} rows"),
        ));
    }
    let Some(values) = read_values(ds, leaf, k)? else {
        return Ok(None);
    };
    let exhaustive = read_bool_attr(ds, "exhaustive") == Some(true);
    let mut hits = Vec::new();
    for l in lits {
        if *l == Lit::Nothing {
            continue;
        }
        let found =
            (0..k as usize).find(|&i| cmp_at(&values, i, l) == Some(std::cmp::Ordering::Equal));
        match found {
            Some(i) => hits.push(i),
            None if exhaustive => {}
            None => return Ok(None),
        }
    }
    let mut bits = Vec::new();
    crate::limits::reserve(&mut bits, nb, &p)?;
    bits.resize(nb as usize, 0u8);
    for i in hits {
        let row = ds.read_slice_1d::<u8, _>((i, ..)).at(&p)?;
        for (o, x) in bits.iter_mut().zip(row.iter()) {
            *o |= x;
        }
    }
    // Pad bits past the last row are 0 by the layout; never trusted.
    if !count.is_multiple_of(8) {
        if let Some(last) = bits.last_mut() {
            *last &= (1u8 << (count % 8)) - 1;
        }
    }
    Ok(Some(RowSet::Bits(bits)))
}
