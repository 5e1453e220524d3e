//! Rows of a dataset, in and out: whole chunks through the direct chunk
//! path (`chunks`) when h5vec runs the dataset's filters itself
//! ([`Pipeline::detect`]), the rest with one hyperslab read or write per
//! call through `raw`. What `crate::column`'s readers and writers and the
//! schema reader call; `raw` itself knows only hyperslabs.

use hdf5::{Dataset, Datatype};

use super::chunks;
use super::detect::Pipeline;
use crate::error::{At, Error, Result};
use crate::raw::{self, row_elems as elems, MemType, Pod};

/// Writes `rows` whole rows from `buf` (at least `rows * prod(inner)`
/// values; zero-size rows such as `[T; 0]` are counted by `rows`) at row
/// `start`, growing the dataset to exactly `start + rows` rows first. Whole
/// chunks of a dataset whose filters h5vec runs are compressed in parallel.
#[allow(clippy::too_many_arguments)] // the dataset, the type, the rows and the buffer
pub(crate) fn write_pod_rows<T: Pod>(
    ds: &Dataset,
    mem: &MemType<T>,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: &[T],
    path: impl At,
) -> Result<()> {
    let Some(n) = elems(rows, inner).filter(|&n| n <= buf.len()) else {
        return Err(Error::invalid(
            path,
            "internal: fewer values than rows to write",
        ));
    };
    let bytes = raw::pod_bytes(&buf[..n]);
    write_bytes(
        ds,
        mem.id(),
        start,
        rows,
        inner,
        bytes,
        path,
        &mut |s, k, b| raw::write_pod_rows_bytes(ds, mem, s, k, inner, b, path),
    )
}

/// Grows `ds` to exactly `start + rows` rows and writes `bytes` (the rows,
/// in memory type `mem_type`) there: whole chunks direct when
/// [`Pipeline::detect`] allows, the rest through `hyperslab(first_row,
/// rows, bytes)`.
#[allow(clippy::too_many_arguments)] // the dataset, the type, the rows, the bytes and the fallback
fn write_bytes(
    ds: &Dataset,
    mem_type: hdf5_sys::h5i::hid_t,
    start: u64,
    rows: u64,
    inner: &[u64],
    bytes: &[u8],
    path: impl At,
    hyperslab: &mut chunks::WriteFallback<'_>,
) -> Result<()> {
    let end = start
        .checked_add(rows)
        .ok_or_else(|| Error::invalid(path, "row count overflows"))?;
    raw::set_rows(ds, end, inner, path)?;
    if bytes.is_empty() {
        return Ok(());
    }
    // A rank's rows being encoded by `crate::mpi` are kept, not written.
    if raw::capture::take(ds, mem_type, start, rows, bytes, path)? {
        return Ok(());
    }
    let row_bytes = bytes.len() / rows as usize;
    match Pipeline::detect(ds, mem_type) {
        Some(p) if p.row_bytes == row_bytes => {
            chunks::write_rows(ds, &p, start, rows, bytes, path, hyperslab)
        }
        _ => hyperslab(start, rows, bytes),
    }
}

/// Reads `rows` whole rows at `start` (the caller has checked them against
/// the extent) into `out`, replacing its contents and reusing its memory (a
/// reader that reads batch after batch faults its buffer in once).
pub(crate) fn read_pod_rows<T: Pod>(
    ds: &Dataset,
    mem: &MemType<T>,
    start: u64,
    rows: u64,
    inner: &[u64],
    out: &mut Vec<T>,
    path: impl At,
) -> Result<()> {
    let n = elems(rows, inner).ok_or_else(|| Error::invalid(path, "row range too large"))?;
    // Initialised memory only: grown with defaults, shrunk without touching.
    if out.len() > n {
        out.truncate(n);
    } else {
        if out.capacity() < n {
            out.reserve_exact(n - out.len());
            crate::limits::advise_huge_pages(out);
        }
        out.resize(n, T::default());
    }
    if n == 0 {
        return Ok(());
    }
    let bytes = raw::pod_bytes_mut(out);
    let row_bytes = bytes.len() / rows as usize;
    match Pipeline::detect(ds, mem.id()) {
        Some(p) if p.row_bytes == row_bytes => {
            chunks::read_rows(ds, &p, start, rows, bytes, path, &mut |s, k, b| {
                raw::read_pod_rows_bytes(ds, mem, s, k, inner, b, path)
            })
        }
        _ => raw::read_pod_rows_bytes(ds, mem, start, rows, inner, bytes, path),
    }
}

/// Reads `rows` whole rows starting at `start` into a fresh `Vec` (the
/// caller has checked `start + rows` against the dataset's extent).
pub(crate) fn read_rows<T: Pod>(
    ds: &Dataset,
    start: u64,
    rows: u64,
    inner: &[u64],
    path: impl At,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    read_pod_rows(ds, &MemType::native(), start, rows, inner, &mut out, path)?;
    Ok(out)
}

/// Writes `rows` rows of shape `inner` at row `start` from `buf` in the
/// plain type `dt` (the dataset's own type, say: copies and h5col's
/// fixed-length strings), growing the dataset to exactly `start + rows`
/// rows first; whole chunks direct as for [`write_pod_rows`]. An error
/// unless `dt` holds no pointers and `buf` holds the rows.
#[allow(clippy::too_many_arguments)] // the dataset, the type, the rows and the buffer
pub(crate) fn write_plain_rows(
    ds: &Dataset,
    dt: &Datatype,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: &[u8],
    path: impl At,
) -> Result<()> {
    let bytes = raw::plain_size(dt)
        .and_then(|size| elems(rows, inner)?.checked_mul(size))
        .filter(|&n| n <= buf.len());
    let Some(bytes) = bytes else {
        return Err(Error::invalid(
            path,
            "internal: fewer bytes than rows to write",
        ));
    };
    write_bytes(
        ds,
        dt.id(),
        start,
        rows,
        inner,
        &buf[..bytes],
        path,
        &mut |s, k, b| raw::write_plain_rows_bytes(ds, dt, s, k, inner, b, path),
    )
}
