//! Rows written to a capturing file kept as bytes instead of written
//! (for feature `mpi`). `crate::mpi` encodes each rank's rows with the serial
//! encoders into a file in memory and then copies them into the shared
//! file; writing them into HDF5's core driver and reading them back cost
//! more than the encoding (the core driver zero-fills every page it
//! grows by, then the rows are copied in and out). While a file captures,
//! the row writes of `crate::pipeline` ([`take`]) and its unfiltered
//! direct chunk writes ([`take_chunks`]) keep their bytes, in the
//! dataset's own type, by dataset, and HDF5 only sets the extents.
//!
//! Anything else that touches a captured dataset's rows (a write that
//! converts types, a hyperslab or chunk write or read of `raw`) first
//! [`settle`]s it: its kept rows are written into the file, in the order
//! they came, and from then on its rows go to HDF5 as usual. So the file
//! and the kept bytes together always hold what was written, and a dataset
//! is either wholly kept ([`Captured::rows`]) or wholly in the file.
//!
//! A forwarding capture ([`Capturing::start_forwarding`]) keeps nothing:
//! each row write goes to a [`Forward`] at once (`crate::mpi` writes a
//! rank's plain rows into the shared file as the serial encoders produce
//! them). Its file holds only the rows written before the capture started,
//! which is all a read of it sees.
//!
//! Only `crate::mpi` (and the tests) start a capture; the row writers and
//! readers ask [`take`], [`take_chunks`] and [`settle`] in every build,
//! which cost one atomic load while nothing captures.
#![cfg_attr(
    not(any(feature = "mpi", test)),
    allow(
        dead_code,
        reason = "captures are started by crate::mpi and the tests only"
    )
)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use hdf5::Dataset;
use hdf5_sys::h5i::hid_t;

use super::ffi::{check, sync};
use crate::error::{At, Error, Result};

/// Rows `start..start + rows` of a dataset, the bytes of its own type.
pub(crate) struct Piece {
    pub start: u64,
    pub rows: u64,
    pub bytes: Vec<u8>,
}

/// A dataset in its file (its object token).
type Token = [u8; 16];

/// Where a forwarding capture sends the rows written to its file.
pub(crate) trait Forward: Send {
    /// Rows `start..start + rows` of `ds` (a dataset of the capturing
    /// file): the bytes of `parts` one after the other, in the dataset's
    /// own type. An error fails the write that made them.
    fn rows(&mut self, ds: &Dataset, start: u64, rows: u64, parts: &[&[u8]]) -> Result<()>;
}

/// A [`Forward`] shared with the capture (taken out of [`FILES`] before
/// it is called: it may make HDF5 calls that ask this module again).
pub(crate) type Forwarding = std::sync::Arc<Mutex<dyn Forward>>;

/// What a capturing file kept.
#[derive(Default)]
pub(crate) struct Captured {
    /// By dataset, pieces in the order written.
    kept: HashMap<Token, Vec<Piece>>,
    /// Datasets whose rows went to the file.
    settled: HashSet<Token>,
    /// Rows go there instead of being kept.
    forward: Option<Forwarding>,
}

/// The capturing files, by serial number (`H5Fget_fileno`).
static FILES: Mutex<Vec<(u64, Captured)>> = Mutex::new(Vec::new());

/// How many files capture: writes and reads take no lock and make no HDF5
/// call while none does (every serial program).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

fn files() -> std::sync::MutexGuard<'static, Vec<(u64, Captured)>> {
    FILES.lock().unwrap_or_else(|e| e.into_inner())
}

/// `file` captures until the returned guard is finished or dropped.
pub(crate) struct Capturing {
    fileno: u64,
}

impl Capturing {
    /// Starts capturing the row writes to `file`.
    pub(crate) fn start(file: &hdf5::File, at: impl At) -> Result<Self> {
        Self::begin(file, Captured::default(), at)
    }

    /// Starts sending the row writes to `file` to `to` instead of writing
    /// them (nothing is kept).
    pub(crate) fn start_forwarding(file: &hdf5::File, to: Forwarding, at: impl At) -> Result<Self> {
        let c = Captured {
            forward: Some(to),
            ..Captured::default()
        };
        Self::begin(file, c, at)
    }

    fn begin(file: &hdf5::File, c: Captured, at: impl At) -> Result<Self> {
        // SAFETY: a valid file id, under the lock.
        let fileno = sync(|| unsafe { super::compat::fileno(file.id()) })
            .ok_or_else(|| Error::invalid(at, "internal: no file serial number"))?;
        files().push((fileno, c));
        ACTIVE.fetch_add(1, Ordering::AcqRel);
        Ok(Capturing { fileno })
    }

    /// Stops capturing; what was kept.
    pub(crate) fn finish(self) -> Captured {
        let got = self.remove();
        std::mem::forget(self);
        got
    }

    fn remove(&self) -> Captured {
        let mut f = files();
        let got = match f.iter().position(|(n, _)| *n == self.fileno) {
            Some(i) => f.swap_remove(i).1,
            None => Captured::default(),
        };
        ACTIVE.fetch_sub(1, Ordering::AcqRel);
        got
    }
}

impl Drop for Capturing {
    fn drop(&mut self) {
        drop(self.remove());
    }
}

/// The serial number of `id`'s file and `id`'s token when the file
/// captures.
fn capturing(id: hid_t) -> Option<(u64, Token)> {
    if ACTIVE.load(Ordering::Acquire) == 0 {
        return None;
    }
    let (n, token) = identity(id)?;
    files().iter().any(|(f, _)| *f == n).then_some((n, token))
}

/// The serial number of the file of the object `id` and the object's
/// token (its address: anonymous objects, as a new vector's, have no name).
fn identity(id: hid_t) -> Option<(u64, Token)> {
    let mut info = std::mem::MaybeUninit::<super::compat::ObjInfo>::uninit();
    // SAFETY: `info` is valid for the write HDF5 makes on success (checked
    // before it is read); under the lock.
    let ok = sync(|| unsafe {
        super::compat::object_info(id, info.as_mut_ptr(), hdf5_sys::h5o::H5O_INFO_BASIC)
    }) >= 0;
    // SAFETY: HDF5 filled `info` (the call succeeded).
    let info = ok.then(|| unsafe { info.assume_init() })?;
    Some((info.fileno as u64, super::compat::obj_token(&info)))
}

/// Keeps `rows` rows at `start` of `ds` (`bytes`, in the memory type
/// `mem_type`) when its file captures and `mem_type` is the dataset's own
/// type: then true, and nothing is written. False: write them as usual.
pub(crate) fn take(
    ds: &Dataset,
    mem_type: hid_t,
    start: u64,
    rows: u64,
    bytes: &[u8],
    at: impl At,
) -> Result<bool> {
    let Some((n, token)) = capturing(ds.id()) else {
        return Ok(false);
    };
    let own = super::dataset_type(ds, at)?;
    // SAFETY: two valid datatype ids, under the lock.
    let same = sync(|| unsafe { hdf5_sys::h5t::H5Tequal(mem_type, own.id()) }) > 0;
    let mut f = files();
    let Some((_, c)) = f.iter_mut().find(|(f, _)| *f == n) else {
        return Ok(false);
    };
    if let Some(to) = c.forward.clone() {
        drop(f);
        return forward(&to, same, ds, start, rows, &[bytes], at);
    }
    // Another type: written through HDF5, which settles the dataset.
    if !same || c.settled.contains(&token) {
        return Ok(false);
    }
    c.keep(token, start, rows, &[bytes]);
    Ok(true)
}

/// Sends rows `start..start + rows` of `ds` (the bytes of `parts`) to
/// `to` when they are the dataset's own bytes (`own`), else an error: a
/// forwarding file keeps no rows, so they cannot go to HDF5 either. True.
fn forward(
    to: &Forwarding,
    own: bool,
    ds: &Dataset,
    start: u64,
    rows: u64,
    parts: &[&[u8]],
    at: impl At,
) -> Result<bool> {
    if !own {
        return Err(Error::invalid(
            at,
            "internal: rows not in the dataset's own bytes, written to a file that forwards them",
        ));
    }
    to.lock()
        .unwrap_or_else(|e| e.into_inner())
        .rows(ds, start, rows, parts)?;
    Ok(true)
}

/// Keeps the whole chunks `k0, k0 + 1, ...` (`c` rows each) of `ds` when
/// its file captures and they are its rows as stored (no filter: the
/// memory file's datasets have none, masks 0, each chunk `c` rows of the
/// dataset's own type). True: kept, nothing written.
pub(crate) fn take_chunks(
    ds: &Dataset,
    k0: u64,
    c: u64,
    chunks: &[(&[u8], std::ffi::c_uint)],
    at: impl At,
) -> Result<bool> {
    let Some((n, token)) = capturing(ds.id()) else {
        return Ok(false);
    };
    let Some(&(first, _)) = chunks.first() else {
        return Ok(true);
    };
    let cb = first.len();
    let plain = chunks.iter().all(|&(b, m)| m == 0 && b.len() == cb)
        && c > 0
        && (cb as u64).is_multiple_of(c)
        && super::filters::unfiltered(ds);
    let (start, rows) = match (k0.checked_mul(c), (chunks.len() as u64).checked_mul(c)) {
        (Some(s), Some(r)) => (s, r),
        _ => return Err(Error::invalid(at, "chunk index overflows")),
    };
    let parts: Vec<&[u8]> = chunks.iter().map(|&(b, _)| b).collect();
    let mut f = files();
    let Some((_, kept)) = f.iter_mut().find(|(f, _)| *f == n) else {
        return Ok(false);
    };
    if let Some(to) = kept.forward.clone() {
        drop(f);
        return forward(&to, plain, ds, start, rows, &parts, at);
    }
    if !plain {
        return Ok(false); // written as usual, which settles the dataset
    }
    if kept.settled.contains(&token) {
        return Ok(false);
    }
    kept.keep(token, start, rows, &parts);
    Ok(true)
}

/// Writes the rows kept for `ds` into its file (in the order they came)
/// and sends its later rows there: before anything else reads or writes
/// its rows (`raw::rows` and `raw::chunks` call it). Nothing to do unless
/// its file captures.
pub(crate) fn settle(ds: &Dataset, at: impl At) -> Result<()> {
    let Some((n, token)) = capturing(ds.id()) else {
        return Ok(());
    };
    let pieces = {
        let mut f = files();
        let Some((_, c)) = f.iter_mut().find(|(f, _)| *f == n) else {
            return Ok(());
        };
        // Forwarded rows are not kept: the file has the rows from before.
        if c.forward.is_some() {
            return Ok(());
        }
        c.settled.insert(token);
        c.kept.remove(&token).unwrap_or_default()
    };
    write_kept(ds, &pieces, at)
}

/// Writes kept rows into `ds`, in the order they came (rows past its
/// extent now, cut by a later shrink, left out), in its own type: one
/// hyperslab write each (`raw::rows`'s writes would settle again, and
/// `raw::rows` calls this module).
pub(crate) fn write_kept(ds: &Dataset, pieces: &[Piece], at: impl At) -> Result<()> {
    if pieces.is_empty() {
        return Ok(());
    }
    let shape: Vec<u64> = ds.shape().iter().map(|&d| d as u64).collect();
    let (extent, inner) = (
        shape.first().copied().unwrap_or(0),
        shape.get(1..).unwrap_or_default(),
    );
    let dt = super::dataset_type(ds, at)?;
    // SAFETY: reads a valid datatype, under the lock.
    let size = sync(|| unsafe { hdf5_sys::h5t::H5Tget_size(dt.id()) });
    let row_bytes = inner
        .iter()
        .try_fold(size, |a, &d| a.checked_mul(usize::try_from(d).ok()?));
    for p in pieces {
        let rows = p.rows.min(extent.saturating_sub(p.start));
        let need = row_bytes.and_then(|b| b.checked_mul(usize::try_from(rows).ok()?));
        if need.is_none_or(|n| n > p.bytes.len()) {
            return Err(Error::invalid(
                at,
                "internal: kept rows shorter than their count",
            ));
        }
        if rows == 0 || inner.contains(&0) {
            continue;
        }
        let fs = super::spaces::file_space(ds, p.start, rows, inner, at)?;
        let ms = super::spaces::mem_space(rows, inner, at)?;
        // SAFETY: both selections hold `rows * prod(inner)` values of the
        // dataset's own type, whose bytes `p.bytes` holds (checked above;
        // kept rows are plain: kept only when written in that type, or as
        // unfiltered chunks); valid ids; under the lock.
        sync(|| unsafe {
            check(
                at,
                hdf5_sys::h5d::H5Dwrite(
                    ds.id(),
                    dt.id(),
                    ms.id(),
                    fs.id(),
                    hdf5_sys::h5p::H5P_DEFAULT,
                    p.bytes.as_ptr().cast(),
                ),
            )
            .map(drop)
        })?;
    }
    Ok(())
}

/// What [`Captured::rows`] found for a dataset.
pub(crate) enum Rows<'c> {
    /// Every row kept: slices in row order.
    Whole(Vec<&'c [u8]>),
    /// Some rows kept, not one run from row 0 (rows left to the fill
    /// value, or written over): write them into the file ([`write_kept`])
    /// and read the rows there.
    Pieces(&'c [Piece]),
    /// Nothing kept: the rows are in the file.
    None,
}

impl Captured {
    /// Keeps rows `start..start + rows` of the dataset `token` (the bytes
    /// of `parts`, one after the other): appended to its last piece when
    /// they follow it (a column saved batch after batch becomes one run),
    /// else a new piece.
    fn keep(&mut self, token: Token, start: u64, rows: u64, parts: &[&[u8]]) {
        let pieces = self.kept.entry(token).or_default();
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let follows = pieces
            .last()
            .is_some_and(|l| l.start.checked_add(l.rows) == Some(start));
        if !follows {
            pieces.push(Piece {
                start,
                rows: 0,
                bytes: Vec::new(),
            });
        }
        let Some(last) = pieces.last_mut() else {
            return;
        };
        let b = &mut last.bytes;
        if b.capacity() - b.len() < len {
            // Doubling (a large `Vec` grows by `mremap`, not a copy).
            // Huge pages were tried: with the kernel's default `defrag`
            // the allocations stalled in compaction (1.6x slower).
            b.reserve(len.max(b.len()));
        }
        for p in parts {
            b.extend_from_slice(p);
        }
        last.rows += rows;
    }

    /// The rows of `ds` (`extent` rows of `row_bytes` bytes) as slices in
    /// row order, when they were all kept: pieces back to back from row 0,
    /// covering the extent (rows past it, cut by a shrink, left out).
    pub(crate) fn rows(&self, ds: &Dataset, extent: u64, row_bytes: usize) -> Rows<'_> {
        let Some((_, token)) = identity(ds.id()) else {
            return Rows::None;
        };
        let Some(pieces) = self.kept.get(&token) else {
            return Rows::None;
        };
        // (first row, bytes) runs back to back from row 0.
        let mut out: Vec<(u64, &[u8])> = Vec::with_capacity(pieces.len());
        let mut next = 0u64;
        let mut whole = true;
        for p in pieces {
            let len = usize::try_from(p.rows)
                .ok()
                .and_then(|r| r.checked_mul(row_bytes));
            let end = p.start.saturating_add(p.rows);
            if next >= extent && p.start >= extent {
                continue; // rows cut by a shrink
            }
            if len != Some(p.bytes.len()) || p.start > next || end < next.min(extent) {
                whole = false;
                break;
            }
            // A piece that starts before `next` writes over the end of
            // the runs before it (a partial chunk written at a commit,
            // written again whole by the next batch).
            while let Some(&(s0, b)) = out.last() {
                if s0 < p.start {
                    let keep = (p.start - s0) as usize * row_bytes;
                    if let Some(l) = out.last_mut().filter(|_| keep < b.len()) {
                        l.1 = &b[..keep];
                    }
                    break;
                }
                out.pop();
            }
            let take = p.rows.min(extent.saturating_sub(p.start));
            out.push((p.start, &p.bytes[..take as usize * row_bytes]));
            next = p.start + take;
        }
        if whole && next == extent {
            return Rows::Whole(
                out.into_iter()
                    .map(|(_, b)| b)
                    .filter(|b| !b.is_empty())
                    .collect(),
            );
        }
        Rows::Pieces(pieces)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::H5Vector;
    use hdf5::Group;

    /// Every dataset below `g`, by path.
    fn datasets(g: &Group, at: &str, out: &mut Vec<(String, Dataset)>) {
        for name in g.member_names().unwrap() {
            let here = format!("{at}/{name}");
            if let Ok(ds) = g.dataset(&name) {
                out.push((here, ds));
            } else if let Ok(sub) = g.group(&name) {
                datasets(&sub, &here, out);
            }
        }
    }

    /// All rows of `ds` in its own type, if plain.
    fn stored(ds: &Dataset) -> Option<(Vec<u8>, u64, usize)> {
        let dt = super::super::dataset_type(ds, "$").unwrap();
        let size = super::super::plain_size(&dt)?;
        let shape = super::super::shape(ds, "$").unwrap();
        let (rows, inner) = (shape.first().copied().unwrap_or(1), &shape[1..]);
        let row_bytes = super::super::row_elems(1, inner).unwrap() * size;
        let mut buf = vec![0u8; rows as usize * row_bytes];
        super::super::read_plain_rows_bytes(ds, &dt, 0, rows, inner, &mut buf, "$").unwrap();
        Some((buf, rows, row_bytes))
    }

    /// Saves `rows` into a plain memory file and into a capturing one
    /// (with `VectorWriter` flushes every `batch` rows when given), and
    /// checks that every dataset's rows are the same: kept, or in the
    /// capturing file. Returns how many datasets were kept whole.
    fn same_rows<T: H5Vector>(rows: &[T], batch: Option<usize>) -> usize {
        let save = |file: &hdf5::File| match batch {
            None => crate::save_vector(file, "v", rows).unwrap(),
            Some(b) => {
                let mut w =
                    crate::VectorWriter::<T>::create(file, "v", &Default::default()).unwrap();
                for part in rows.chunks(b) {
                    w.extend(part.iter()).unwrap();
                    w.flush().unwrap();
                }
                w.finish().unwrap();
            }
        };
        let plain = crate::file::memory_file().unwrap();
        save(&plain);
        let file = crate::file::memory_file().unwrap();
        let capturing = Capturing::start(&file, "$").unwrap();
        save(&file);
        let kept = capturing.finish();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        datasets(&plain.group("v/data").unwrap(), "", &mut want);
        datasets(&file.group("v/data").unwrap(), "", &mut got);
        assert_eq!(want.len(), got.len());
        let mut whole = 0;
        for ((pw, dw), (pg, dg)) in want.iter().zip(&got) {
            assert_eq!(pw, pg);
            let Some((bytes, n, rb)) = stored(dw) else {
                continue;
            };
            let back = match kept.rows(dg, n, rb) {
                Rows::Whole(slices) => {
                    whole += 1;
                    slices.concat()
                }
                Rows::Pieces(pieces) => {
                    write_kept(dg, pieces, "$").unwrap();
                    stored(dg).unwrap().0
                }
                Rows::None => stored(dg).unwrap().0,
            };
            assert_eq!(back, bytes, "{pw}");
        }
        whole
    }

    #[test]
    fn kept_rows_are_the_rows_written() {
        let n = 70_000u64; // several batches and chunks
        let xs: Vec<[f64; 3]> = (0..n).map(|i| [i as f64, -(i as f64), 0.5]).collect();
        assert!(same_rows(&xs, None) >= 1);
        let ids: Vec<u64> = (0..n).map(|i| i * 7).collect();
        assert!(same_rows(&ids, None) >= 1);
        let lists: Vec<Vec<u32>> = (0..n).map(|i| (0..(i % 5) as u32).collect()).collect();
        assert!(same_rows(&lists, None) >= 2);
        let names: Vec<Option<String>> = (0..n)
            .map(|i| (i % 3 != 0).then(|| format!("n{i}")))
            .collect();
        same_rows(&names, None);
        let maybe: Vec<Option<f64>> = (0..n).map(|i| (i % 2 == 0).then_some(i as f64)).collect();
        same_rows(&maybe, None);
    }

    #[test]
    fn kept_rows_survive_flushes_that_rewrite_a_partial_chunk() {
        let ids: Vec<u64> = (0..50_000u64).map(|i| i ^ 0x5555).collect();
        // Flushes that end inside a chunk: the next batch writes it again.
        assert!(same_rows(&ids, Some(3_001)) >= 1);
        let lists: Vec<Vec<u32>> = (0..20_000u32).map(|i| vec![i; (i % 3) as usize]).collect();
        same_rows(&lists, Some(777));
    }

    #[test]
    fn a_read_of_a_kept_dataset_gets_its_rows_from_the_file() {
        let file = crate::file::memory_file().unwrap();
        let capturing = Capturing::start(&file, "$").unwrap();
        let ids: Vec<u64> = (0..40_000u64).collect();
        crate::save_vector(&file, "v", &ids).unwrap();
        // A load while the file captures settles every dataset it reads.
        let back: Vec<u64> = crate::load_vector(&file, "v").unwrap();
        assert_eq!(back, ids);
        let kept = capturing.finish();
        let values = file.dataset("v/data/values").unwrap();
        let (_, token) = identity(values.id()).unwrap();
        assert!(kept.settled.contains(&token));
        assert!(!kept.kept.contains_key(&token));
        assert!(matches!(kept.rows(&values, 40_000, 8), Rows::None));
    }

    /// What a test's forwarding capture got: by dataset name, the rows;
    /// the threads that sent them.
    #[derive(Default)]
    struct Collect(
        std::collections::BTreeMap<String, Vec<(u64, u64, Vec<u8>)>>,
        HashSet<std::thread::ThreadId>,
    );

    impl Forward for Collect {
        fn rows(&mut self, ds: &Dataset, start: u64, rows: u64, parts: &[&[u8]]) -> Result<()> {
            let rows_of = self.0.entry(ds.name()).or_default();
            rows_of.push((start, rows, parts.concat()));
            self.1.insert(std::thread::current().id());
            Ok(())
        }
    }

    /// An append to a forwarding file sends every row it writes, in the
    /// dataset's own bytes, and writes none into the file: the file's rows
    /// from before plus the forwarded ones are the rows of a plain save.
    #[test]
    fn a_forwarding_capture_sends_the_rows_and_keeps_none() {
        type Row = (u32, [f64; 2], Option<i16>);
        let rows: Vec<Row> = (0..400_000u32)
            .map(|i| {
                (
                    i * 3,
                    [f64::from(i), -0.5],
                    (i % 3 == 0).then_some(i as i16),
                )
            })
            .collect();
        let head = 1_001; // the file's last chunk is partial: rewritten
                          // As `crate::mpi` writes: no statistics (their datasets would be
                          // forwarded too).
        let opts = crate::SaveOptions::default().statistics(false);
        let plain = crate::file::memory_file().unwrap();
        crate::save_vector_with(&plain, "v", &rows, &opts).unwrap();
        let file = crate::file::memory_file().unwrap();
        crate::save_vector_with(&file, "v", &rows[..head], &opts).unwrap();
        let got = std::sync::Arc::new(Mutex::new(Collect::default()));
        let capturing = Capturing::start_forwarding(&file, got.clone(), "$").unwrap();
        crate::pipeline::deferred::write_here(|| {
            crate::append_vector_with(&file, "v", &rows[head..], &opts).unwrap()
        });
        let kept = capturing.finish();
        assert!(kept.kept.is_empty() && kept.settled.is_empty());
        let got = std::mem::take(&mut *got.lock().unwrap());
        // `write_here`: every write on this thread, none by h5vec's writer.
        assert_eq!(got.1, HashSet::from([std::thread::current().id()]));
        let got = got.0;
        let (mut want, mut have) = (Vec::new(), Vec::new());
        datasets(&plain.group("v/data").unwrap(), "", &mut want);
        datasets(&file.group("v/data").unwrap(), "", &mut have);
        assert_eq!(want.len(), 4); // 1/values, 2/values, 3/MASK, 3/values
        assert_eq!(got.len(), 4, "{:?}", got.keys().collect::<Vec<_>>());
        for ((pw, dw), (ph, dh)) in want.iter().zip(&have) {
            assert_eq!(pw, ph);
            let (bytes, n, rb) = stored(dw).unwrap();
            let (mut back, m, _) = stored(dh).unwrap();
            assert_eq!(m, n);
            // Nothing past the head went into the file.
            assert!(back[head * rb..].iter().all(|&b| b == 0), "{pw}");
            let pieces = &got[&dh.name()];
            let mut next = 0;
            for (start, k, b) in pieces {
                assert_eq!(b.len() as u64, k * rb as u64, "{pw}");
                let end = (start + k).min(n);
                assert!(
                    *start <= next.max(head as u64),
                    "{pw}: a gap before {start}"
                );
                back[*start as usize * rb..end as usize * rb]
                    .copy_from_slice(&b[..(end - start) as usize * rb]);
                next = next.max(end);
            }
            assert_eq!(next, n, "{pw}");
            assert_eq!(back, bytes, "{pw}");
        }
    }

    #[test]
    fn a_dropped_capture_stops_capturing() {
        let file = crate::file::memory_file().unwrap();
        drop(Capturing::start(&file, "$").unwrap());
        crate::save_vector(&file, "v", &[1u64, 2, 3]).unwrap();
        assert_eq!(
            crate::load_vector::<u64>(&file, "v").unwrap(),
            vec![1, 2, 3]
        );
    }
}
