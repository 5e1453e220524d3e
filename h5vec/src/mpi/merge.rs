//! Every rank's columns into the shared vector, by the schema tree.
//!
//! The walk visits a node's datasets in the same order on every rank (the
//! ranks agreed on the schema first), so every collective call (an extent
//! change, a write) is made by all ranks together. Each dataset belongs to
//! a row space ([`Span`]): the vector's rows, a list's values, a heap's
//! bytes, one variant's rows. A rank's rows of a space go at its base (the
//! rows committed before, plus the rows of the ranks before it), and the
//! datasets that point into another space are moved by that space's base:
//!
//! | kind | points | into |
//! |---|---|---|
//! | list, string_values | `OFFSETS` (Z + 1, from 0) | `VALUES` / `CHARS` |
//! | blob | `stops` (end of each value) | `bytes` |
//! | vls_string | `pointers.offset` | `heap` |
//! | union | `INDEX` (row among its variant's) | the variant's columns |
//!
//! Everything else (`values`, `MASK`, `TAG`) is copied as it is.

use ::mpi::topology::Communicator;
use hdf5::{Dataset, Datatype, Group};

use super::comm::{self, Span};
use crate::error::{Context, Error, Place, Result};
use crate::raw;
use crate::raw::capture::{self, Captured, Rows};
use crate::schema::{Kind, Stored};

/// Most bytes of one collective write: bounds the buffer a rank holds.
const PIECE_BYTES: usize = 64 << 20;

/// The walk over one call's datasets.
pub(super) struct Merge<'a, C: Communicator> {
    comm: &'a C,
    /// The rows this rank's encoders wrote, kept (`raw::capture`).
    kept: &'a Captured,
    /// The bytes of one piece, reused from dataset to dataset (fresh
    /// pages cost more than the copy into them).
    scratch: std::cell::RefCell<Vec<u8>>,
    /// Whether a dataset was written collectively.
    collective: std::cell::Cell<bool>,
}

/// The rows of a dataset: their type, shape and size.
#[derive(Clone, Copy)]
struct RowType<'t> {
    dt: &'t Datatype,
    inner: &'t [u64],
    row_bytes: usize,
}

/// A dataset in both files, with the path errors name.
struct Pair<'g> {
    local: Dataset,
    shared: Dataset,
    at: Place,
    _g: std::marker::PhantomData<&'g ()>,
}

fn pair<'g>(local: &'g Group, shared: &'g Group, name: &str, path: &str) -> Result<Pair<'g>> {
    let at = Place::new(path, format!("{}/{name}", shared.name()));
    Ok(Pair {
        local: local.dataset(name).at(&at)?,
        shared: shared.dataset(name).at(&at)?,
        at,
        _g: std::marker::PhantomData,
    })
}

fn u64_type() -> Result<Datatype> {
    Datatype::from_type::<u64>().at("$")
}

/// Reads `n` rows of a 1-D dataset from `start` as native `u64`s (HDF5
/// converts any integer type; h5vec writes these as UInt64 or Int64).
fn read_u64s(ds: &Dataset, start: u64, n: u64, at: &Place) -> Result<Vec<u64>> {
    let dt = u64_type()?;
    let len = usize::try_from(n).map_err(|_| Error::invalid(at, "too many rows"))?;
    let mut v = vec![0u64; len];
    raw::read_plain_rows_bytes(ds, &dt, start, n, &[], raw::pod_bytes_mut(&mut v), at)?;
    Ok(v)
}

/// The local dataset's own type, checked to be 8-byte integers (signed or
/// not, as `signed`): rows are written in the file's own type, because a
/// conversion turns HDF5's collective write into an independent one,
/// which filters refuse. The memory file is h5vec's: little-endian.
fn words(p: &Pair, signed: bool) -> Result<Datatype> {
    let t = raw::type_info(&p.local, &p.at)?;
    if t.class != hdf5_sys::h5t::H5T_class_t::H5T_INTEGER || t.size != 8 || t.signed != signed {
        return Err(Error::mismatch(
            &p.at,
            if signed { "Int64" } else { "UInt64" },
            t.describe(),
        ));
    }
    raw::dataset_type(&p.local, &p.at)
}

/// Little-endian bytes of `v`.
fn le_bytes(v: impl IntoIterator<Item = u64>) -> Vec<u8> {
    v.into_iter().flat_map(u64::to_le_bytes).collect()
}

/// `v + by`, or an error.
fn moved(v: u64, by: u64, at: &Place) -> Result<u64> {
    v.checked_add(by)
        .ok_or_else(|| Error::invalid(at, "an offset past 64 bits"))
}

impl<'a, C: Communicator> Merge<'a, C> {
    pub(super) fn new(comm: &'a C, kept: &'a Captured) -> Self {
        Merge {
            comm,
            kept,
            scratch: Default::default(),
            collective: Default::default(),
        }
    }

    /// Whether a dataset of the walk was written collectively (it has
    /// filters: `raw::mpio::Transfer`). The same on every rank.
    pub(super) fn wrote_collectively(&self) -> bool {
        self.collective.get()
    }

    /// Writes this rank's rows of the node `st` (data group `local` in the
    /// memory file, `shared` in the shared file) at `sp`. Collective.
    pub(super) fn node(
        &self,
        st: &Stored,
        local: &Group,
        shared: &Group,
        sp: &Span,
        path: &str,
    ) -> Result<()> {
        match &st.kind {
            Kind::Scalar | Kind::Dense | Kind::FillNullable => {
                self.copy(&pair(local, shared, "values", path)?, sp)
            }
            Kind::Constant => Ok(()),
            Kind::Record => {
                let names = st.field_names.as_deref().unwrap_or_default();
                for (i, name) in names.iter().enumerate() {
                    let child = st.child(i, path)?;
                    let p = format!("{path}.{name}");
                    if child.kind == Kind::Constant {
                        continue;
                    }
                    let at = Place::new(p.as_str(), format!("{}/{name}", shared.name()));
                    let (lg, sg) = (local.group(name).at(&at)?, shared.group(name).at(&at)?);
                    self.node(child, &lg, &sg, sp, &p)?;
                }
                Ok(())
            }
            Kind::Nullable => {
                self.copy(
                    &pair(local, shared, crate::kinds::nullable::MASK, path)?,
                    sp,
                )?;
                self.node(st.child(0, path)?, local, shared, sp, path)
            }
            Kind::List => {
                let child = st.child(0, path)?;
                let inner = self.offsets(&pair(local, shared, "OFFSETS", path)?, sp)?;
                let p = format!("{path}[]");
                if matches!(child.kind, Kind::Scalar | Kind::Dense | Kind::FillNullable) {
                    self.copy(&pair(local, shared, "VALUES", &p)?, &inner)
                } else {
                    let at = Place::new(p.as_str(), format!("{}/VALUES", shared.name()));
                    let (lg, sg) = (
                        local.group("VALUES").at(&at)?,
                        shared.group("VALUES").at(&at)?,
                    );
                    self.node(child, &lg, &sg, &inner, &p)
                }
            }
            Kind::StringValues => {
                let chars = self.offsets(&pair(local, shared, "OFFSETS", path)?, sp)?;
                self.copy(&pair(local, shared, "CHARS", path)?, &chars)
            }
            Kind::Blob => self.blob(local, shared, sp, path),
            Kind::VlsString => self.vls(local, shared, sp, path),
            Kind::Union => self.union(st, local, shared, sp, path),
            Kind::Other(k) => Err(Error::encode(
                path,
                format!("h5vec::mpi cannot write schema kind `{k}`"),
            )),
        }
    }

    /// Copies the rows of `p` as they are.
    fn copy(&self, p: &Pair, sp: &Span) -> Result<()> {
        let dt = raw::dataset_type(&p.local, &p.at)?;
        let shape = raw::shape(&p.local, &p.at)?;
        let inner = shape.get(1..).unwrap_or_default().to_vec();
        if shape.first() != Some(&sp.local) {
            return Err(Error::invalid(
                &p.at,
                format!(
                    "internal: {} rows encoded where {} were expected",
                    shape.first().copied().unwrap_or(0),
                    sp.local
                ),
            ));
        }
        let row_bytes = row_bytes(&dt, &inner, &p.at)?;
        if let Some(slices) = self.kept_rows(&p.local, sp.local, row_bytes, &p.at)? {
            return self.put(
                p,
                &dt,
                &inner,
                sp.total,
                sp.base,
                sp.local,
                Src::Slices(slices),
            );
        }
        let lds = &p.local;
        self.put(
            p,
            &dt,
            &inner,
            sp.total,
            sp.base,
            sp.local,
            Src::Fill(&mut |from, n, buf| {
                raw::read_plain_rows_bytes(lds, &dt, from, n, &inner, buf, &p.at)
            }),
        )
    }

    /// The rows of the local dataset `ds` (`extent` rows of `row_bytes`)
    /// as kept (`raw::capture`), in row order; None: read them from the
    /// memory file (where rows kept but not as one run are written now).
    fn kept_rows(
        &self,
        ds: &Dataset,
        extent: u64,
        row_bytes: usize,
        at: &Place,
    ) -> Result<Option<Vec<&'a [u8]>>> {
        match self.kept.rows(ds, extent, row_bytes) {
            Rows::Whole(slices) => Ok(Some(slices)),
            Rows::Pieces(pieces) => capture::write_kept(ds, pieces, at).map(|()| None),
            Rows::None => Ok(None),
        }
    }

    /// All `rows` rows of the local dataset of `p` (shape `inner`, type
    /// `dt`, its own): the kept bytes, or read from the memory file.
    fn local_bytes(
        &self,
        p: &Pair,
        dt: &Datatype,
        rows: u64,
        inner: &[u64],
    ) -> Result<std::borrow::Cow<'a, [u8]>> {
        let rb = row_bytes(dt, inner, &p.at)?;
        if let Some(slices) = self.kept_rows(&p.local, rows, rb, &p.at)? {
            return Ok(match slices.as_slice() {
                [one] => std::borrow::Cow::Borrowed(*one),
                many => std::borrow::Cow::Owned(many.concat()),
            });
        }
        let n = usize::try_from(rows)
            .ok()
            .and_then(|r| r.checked_mul(rb))
            .ok_or_else(|| Error::invalid(&p.at, "too many rows"))?;
        let mut buf = vec![0u8; n];
        raw::read_plain_rows_bytes(&p.local, dt, 0, rows, inner, &mut buf, &p.at)?;
        Ok(std::borrow::Cow::Owned(buf))
    }

    /// `n` rows of the local 8-byte integer dataset of `p` (its own type
    /// checked by `words`) as `u64`s.
    fn local_u64s(&self, p: &Pair, signed: bool, n: u64) -> Result<Vec<u64>> {
        let dt = words(p, signed)?;
        let b = self.local_bytes(p, &dt, n, &[])?;
        Ok(b.chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
            .collect())
    }

    /// Writes this rank's `rows` rows (rows of `inner` values of `dt`) at
    /// `first` of `p.shared`, after setting its extent to `total` rows,
    /// from `src`. Pieces of at most [`PIECE_BYTES`], as many collective
    /// writes on every rank (a rank out of rows writes none). A rank whose
    /// `fill` fails goes on taking part, and every rank then returns the
    /// error.
    #[allow(clippy::too_many_arguments)] // one dataset's whole write: each argument is one fact about it
    fn put(
        &self,
        p: &Pair,
        dt: &Datatype,
        inner: &[u64],
        total: u64,
        first: u64,
        rows: u64,
        src: Src<'_>,
    ) -> Result<()> {
        // Variable-length types were refused when the rows were encoded
        // (`local::opened`).
        let row_bytes = row_bytes(dt, inner, &p.at)?;
        same_inner(&p.shared, inner, &p.at)?;
        let how = raw::mpio::Transfer::of(&p.shared);
        if how == raw::mpio::Transfer::Collective {
            self.collective.set(true);
        }
        raw::set_rows(&p.shared, total, inner, &p.at)?;
        let piece = (PIECE_BYTES / row_bytes).max(1) as u64;
        let fill = match src {
            Src::Slices(slices) => {
                let rt = RowType {
                    dt,
                    inner,
                    row_bytes,
                };
                self.put_slices(p, rt, first, piece, &slices, how)?;
                // The same collective calls as the other way, whose ranks
                // may read their rows from the file: the pieces' count,
                // the writes, then whether every rank got its rows.
                return comm::all_ok(self.comm, Ok(()), p.at.path());
            }
            Src::Fill(f) => f,
        };
        let pieces = comm::max(self.comm, rows.div_ceil(piece));
        let mut scratch = self.scratch.borrow_mut();
        let mut failed = None;
        for i in 0..pieces {
            let from = i.saturating_mul(piece).min(rows);
            let mut n = piece.min(rows - from);
            if failed.is_some() {
                n = 0;
            }
            let bytes = n as usize * row_bytes;
            if scratch.len() < bytes {
                scratch.resize(bytes, 0);
            }
            let buf = &mut scratch[..bytes];
            if n > 0 {
                if let Err(e) = fill(from, n, buf) {
                    failed = Some(e);
                    n = 0;
                }
            }
            raw::mpio::write_rows(&p.shared, dt, first + from, n, inner, buf, how, &p.at)?;
        }
        drop(scratch);
        comm::all_ok(self.comm, failed.map_or(Ok(()), Err), p.at.path())
    }

    /// [`Merge::put`] of this rank's 1-D rows of `sp`, all in `bytes`.
    fn put_rows(&self, p: &Pair, dt: &Datatype, sp: &Span, bytes: &[u8]) -> Result<()> {
        let src = Src::Slices(vec![bytes]);
        self.put(p, dt, &[], sp.total, sp.base, sp.local, src)
    }

    /// [`Merge::put`] from rows in memory: each slice cut into pieces of
    /// `piece` rows, written from where they are.
    fn put_slices(
        &self,
        p: &Pair,
        rt: RowType,
        first: u64,
        piece: u64,
        slices: &[&[u8]],
        how: raw::mpio::Transfer,
    ) -> Result<()> {
        let RowType {
            dt,
            inner,
            row_bytes,
        } = rt;
        let mut mine = Vec::new();
        let mut at = first;
        for s in slices {
            for part in s.chunks(piece as usize * row_bytes) {
                let n = (part.len() / row_bytes) as u64;
                mine.push((at, n, part));
                at += n;
            }
        }
        let pieces = comm::max(self.comm, mine.len() as u64);
        for i in 0..pieces as usize {
            let (row, n, b) = mine.get(i).copied().unwrap_or((first, 0, &[]));
            raw::mpio::write_rows(&p.shared, dt, row, n, inner, b, how, &p.at)?;
        }
        Ok(())
    }

    /// Writes the `OFFSETS` of `p` (this rank's rows of `sp`), moved by
    /// the base of the space they point into, whose span is returned.
    fn offsets(&self, p: &Pair, sp: &Span) -> Result<Span> {
        let mut offs = self.local_u64s(p, false, sp.local + 1)?;
        if offs.first() != Some(&0) {
            return Err(Error::invalid(&p.at, "internal: OFFSETS[0] is not 0"));
        }
        let end = offs.last().copied().unwrap_or(0);
        // The values the committed rows end at.
        let start = if sp.start == 0 {
            0
        } else {
            read_u64s(&p.shared, sp.start, 1, &p.at)?[0]
        };
        let inner = comm::span(self.comm, start, end, p.at.path())?;
        for o in &mut offs {
            *o = moved(*o, inner.base, &p.at)?;
        }
        // Rank 0 of a new space writes OFFSETS[0] too (0: its base is 0).
        let (first, rows) = if sp.start == 0 && self.comm.rank() == 0 {
            (0, &offs[..])
        } else {
            (sp.base + 1, &offs[1..])
        };
        let dt = words(p, false)?;
        let bytes = le_bytes(rows.iter().copied());
        let n = rows.len() as u64;
        self.put(
            p,
            &dt,
            &[],
            sp.total + 1,
            first,
            n,
            Src::Slices(vec![&bytes]),
        )?;
        Ok(inner)
    }

    /// A blob: `stops` moved by the base of `bytes`.
    fn blob(&self, local: &Group, shared: &Group, sp: &Span, path: &str) -> Result<()> {
        let p = pair(local, shared, "stops", path)?;
        let mut stops = self.local_u64s(&p, true, sp.local)?;
        let end = stops.last().copied().unwrap_or(0);
        let start = if sp.start == 0 {
            0
        } else {
            read_u64s(&p.shared, sp.start - 1, 1, &p.at)?[0]
        };
        let bytes = comm::span(self.comm, start, end, path)?;
        for s in &mut stops {
            *s = moved(*s, bytes.base, &p.at)?;
            if i64::try_from(*s).is_err() {
                return Err(Error::encode(&p.at, "a stop past Int64"));
            }
        }
        // Int64 on disk: the moved stops are non-negative Int64s, whose
        // little-endian bytes are their u64 bytes.
        let dt = words(&p, true)?;
        let b = le_bytes(stops.iter().copied());
        self.put_rows(&p, &dt, sp, &b)?;
        self.copy(&pair(local, shared, "bytes", path)?, &bytes)
    }

    /// A vls_string: `pointers.offset` moved by the base of `heap`, null
    /// rows pointed at the vector's missing-value placeholder.
    fn vls(&self, local: &Group, shared: &Group, sp: &Span, path: &str) -> Result<()> {
        let p = pair(local, shared, "pointers", path)?;
        let h = pair(local, shared, "heap", path)?;
        let heap_len = raw::shape(&h.local, &h.at)?.first().copied().unwrap_or(0);
        let u8t = raw::dataset_type(&h.local, &h.at)?;
        if raw::plain_size(&u8t) != Some(1) {
            return Err(Error::mismatch(&h.at, "bytes", "another type"));
        }
        let mut heap = self.local_bytes(&h, &u8t, heap_len, &[])?.into_owned();
        // The file's own pointer type (16 bytes: offset, length; UInt64
        // little-endian, as h5vec writes it): no conversion (see `words`).
        let dt = raw::dataset_type(&p.local, &p.at)?;
        let t = raw::type_info(&p.local, &p.at)?;
        if t.size != 16
            || !crate::kinds::vls::pointer_type_ok(&t)
            || t.members.iter().any(|m| m.1.size != 8)
        {
            return Err(Error::mismatch(
                &p.at,
                "h5vec's pointer compound",
                t.describe(),
            ));
        }
        let mut ptrs = self.local_bytes(&p, &dt, sp.local, &[])?.into_owned();
        let new_placeholder = self.placeholder(&p, sp, &mut heap, &mut ptrs)?;
        let start = if sp.start == 0 {
            0
        } else {
            raw::shape(&h.shared, &h.at)?.first().copied().unwrap_or(0)
        };
        let heap_span = comm::span(self.comm, start, heap.len() as u64, path)?;
        for ptr in ptrs.chunks_exact_mut(16) {
            let o = u64::from_le_bytes(ptr[..8].try_into().unwrap_or_default());
            ptr[..8].copy_from_slice(&moved(o, heap_span.base, &p.at)?.to_le_bytes());
        }
        self.put_rows(&p, &dt, sp, &ptrs)?;
        let len = heap.len() as u64;
        let (total, base) = (heap_span.total, heap_span.base);
        self.put(&h, &u8t, &[], total, base, len, Src::Slices(vec![&heap]))?;
        if let Some(ph) = new_placeholder {
            crate::kinds::vls::write_placeholder(&p.shared, &ph, path)?;
        }
        Ok(())
    }

    /// The vector's missing-value placeholder after this call, and this
    /// rank's null rows pointed at it (its bytes added to the rank's heap
    /// when the rank's own encoder chose another). The vector's, when it
    /// has one (no rank may hold it as a real value); else, when any rank
    /// has a null row, the first of `NA`, `NA_`, `NA__`, ... that no rank
    /// holds as a value (SPEC.md section 4.1's choice, over every rank).
    /// Returns the placeholder to write on the new pointers, if any.
    /// Collective; every rank reaches the same verdict.
    fn placeholder(
        &self,
        p: &Pair,
        sp: &Span,
        heap: &mut Vec<u8>,
        ptrs: &mut [u8],
    ) -> Result<Option<String>> {
        let mine = crate::kinds::vls::read_placeholder(&p.local, p.at.path())?;
        let committed = if sp.start > 0 {
            crate::kinds::vls::read_placeholder(&p.shared, p.at.path())?
        } else {
            None
        };
        let nulls = comm::max(self.comm, u64::from(mine.is_some())) == 1;
        let mut used = 0u64;
        let mut clash = false;
        for ptr in ptrs.chunks_exact(16) {
            let s = cut(heap, ptr);
            if mine.as_deref().is_some_and(|m| s == m.as_bytes()) {
                continue; // a null row
            }
            if committed.as_deref().is_some_and(|c| s == c.as_bytes()) {
                clash = true;
            }
            if s.len() >= 2 && s.len() < 66 && &s[..2] == b"NA" && s[2..].iter().all(|&b| b == b'_')
            {
                used |= 1 << (s.len() - 2);
            }
        }
        comm::all_ok(
            self.comm,
            match (&committed, clash) {
                (Some(c), true) => Err(Error::encode(
                    &p.at,
                    format!("a string equal to the vector's missing-value placeholder {c:?}"),
                )),
                _ => Ok(()),
            },
            p.at.path(),
        )?;
        let (target, new) = match committed {
            Some(c) => (c, false),
            None if !nulls => return Ok(None),
            None if sp.start > 0 => {
                return Err(Error::encode(
                    &p.at,
                    "the first missing values of this vector come in an MPI append, and the \
                     committed rows are not checked against a placeholder: append them from one \
                     process",
                ))
            }
            None => {
                let used = comm::bit_or(self.comm, used);
                let k = (!used).trailing_zeros();
                if k >= 64 {
                    return Err(Error::encode(
                        &p.at,
                        "no free missing-value placeholder (NA, NA_, ...)",
                    ));
                }
                (format!("NA{}", "_".repeat(k as usize)), true)
            }
        };
        if let Some(m) = mine.filter(|m| *m != target) {
            // This rank's nulls hold its own placeholder: point them at
            // the vector's, added once to the end of its heap.
            let at = heap.len() as u64;
            heap.extend_from_slice(target.as_bytes());
            let len = target.len() as u64;
            for ptr in ptrs.chunks_exact_mut(16) {
                if cut(heap, ptr) == m.as_bytes() {
                    ptr[..8].copy_from_slice(&at.to_le_bytes());
                    ptr[8..].copy_from_slice(&len.to_le_bytes());
                }
            }
        }
        Ok(new.then_some(target))
    }

    /// A union: `TAG` as it is, `INDEX` moved by each variant's base, the
    /// variants' columns in their own spaces.
    fn union(
        &self,
        st: &Stored,
        local: &Group,
        shared: &Group,
        sp: &Span,
        path: &str,
    ) -> Result<()> {
        let names = st.variant_names.as_deref().unwrap_or_default();
        let values = st.variant_values.as_deref().unwrap_or_default();
        let tag = pair(local, shared, crate::kinds::union::TAG, path)?;
        let which = |code: u64| values.iter().position(|&v| u64::try_from(v) == Ok(code));
        let mut tags = Vec::new();
        let mut mine = vec![0u64; names.len()];
        let tdt = raw::dataset_type(&tag.local, &tag.at)?;
        let local_tags = self.local_bytes(&tag, &tdt, sp.local, &[])?;
        for code in codes(&local_tags, raw::plain_size(&tdt).unwrap_or(0), &tag.at)? {
            let v = which(code)
                .ok_or_else(|| Error::invalid(&tag.at, "internal: a tag of no variant"))?;
            mine[v] += 1;
            tags.push(v);
        }
        let mut before = vec![0u64; names.len()];
        let mut at = 0;
        while at < sp.start {
            let n = (sp.start - at).min(1 << 20);
            for code in read_codes(&tag.shared, at, n, &tag.at)? {
                let v = which(code).ok_or_else(|| {
                    Error::invalid(&tag.at, format!("TAG {code} names no variant"))
                })?;
                before[v] += 1;
            }
            at += n;
        }
        let mut spans = Vec::with_capacity(names.len());
        for (v, &n) in mine.iter().enumerate() {
            spans.push(comm::span(self.comm, before[v], n, path)?);
        }
        self.copy(&tag, sp)?;
        let ix = pair(local, shared, crate::kinds::union::INDEX, path)?;
        let mut index = self.local_u64s(&ix, false, sp.local)?;
        for (i, t) in index.iter_mut().zip(&tags) {
            *i = moved(*i, spans[*t].base, &ix.at)?;
        }
        let b = le_bytes(index.iter().copied());
        let dt = words(&ix, false)?;
        self.put_rows(&ix, &dt, sp, &b)?;
        for (v, name) in names.iter().enumerate() {
            let child = st.child(v, path)?;
            if child.kind == Kind::Constant {
                continue;
            }
            let p = format!("{path}::{name}");
            let at = Place::new(p.as_str(), format!("{}/{name}", shared.name()));
            let (lg, sg) = (local.group(name).at(&at)?, shared.group(name).at(&at)?);
            self.node(child, &lg, &sg, &spans[v], &p)?;
        }
        Ok(())
    }
}

/// The string a pointer (16 bytes: offset, length) points at in `heap`,
/// cut at its first NUL (as readers cut it).
fn cut<'h>(heap: &'h [u8], ptr: &[u8]) -> &'h [u8] {
    let o = u64::from_le_bytes(ptr[..8].try_into().unwrap_or_default());
    let n = u64::from_le_bytes(ptr[8..16].try_into().unwrap_or_default());
    let (o, n) = (
        usize::try_from(o).unwrap_or(usize::MAX),
        usize::try_from(n).unwrap_or(0),
    );
    let s = heap.get(o..o.saturating_add(n)).unwrap_or_default();
    s.split(|&b| b == 0).next().unwrap_or_default()
}

/// Where [`Merge::put`] takes a rank's rows from.
enum Src<'s> {
    /// In memory, in row order.
    Slices(Vec<&'s [u8]>),
    /// `fill(from, n, buf)` gives rows `from..from + n`.
    Fill(&'s mut Filler<'s>),
}

/// `fill(from, n, buf)`: rows `from..from + n` of a rank's into `buf`.
type Filler<'s> = dyn FnMut(u64, u64, &mut [u8]) -> Result<()> + 's;

/// Checks that the rows of the shared file's dataset `shared` have the
/// shape `inner` of the rows written into it.
pub(super) fn same_inner(shared: &Dataset, inner: &[u64], at: &Place) -> Result<()> {
    let shape = raw::shape(shared, at)?;
    let theirs = shape.get(1..).unwrap_or_default();
    if theirs == inner {
        return Ok(());
    }
    Err(Error::mismatch(
        at,
        format!("rows of shape {inner:?}"),
        format!("{theirs:?}"),
    ))
}

/// Bytes of one row of `inner` values of `dt` (a plain type).
pub(super) fn row_bytes(dt: &Datatype, inner: &[u64], at: &Place) -> Result<usize> {
    let size = raw::plain_size(dt)
        .ok_or_else(|| Error::invalid(at, "internal: a variable-length type"))?;
    raw::row_elems(1, inner)
        .and_then(|e| e.checked_mul(size))
        .filter(|&b| b > 0)
        .ok_or_else(|| Error::invalid(at, "rows too large"))
}

/// Rows `start..start + n` of an enum dataset (over uint8 or uint16) as
/// their codes.
fn read_codes(ds: &Dataset, start: u64, n: u64, at: &Place) -> Result<Vec<u64>> {
    let (bytes, size) = raw::read_rows_own_type(ds, start, n, at)?;
    codes(&bytes, size, at)
}

/// The codes of enum values (over uint8 or uint16, little-endian: `size`
/// bytes each).
fn codes(bytes: &[u8], size: usize, at: &Place) -> Result<Vec<u64>> {
    match size {
        1 => Ok(bytes.iter().map(|&b| u64::from(b)).collect()),
        2 => Ok(bytes
            .chunks_exact(2)
            .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]])))
            .collect()),
        _ => Err(Error::mismatch(
            at,
            "an enum over uint8 or uint16",
            format!("{size} bytes"),
        )),
    }
}
