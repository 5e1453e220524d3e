//! Direct chunk I/O of a [`Pipeline`]'s dataset: whole chunks written with
//! `H5Dwrite_chunk` after being compressed on the worker threads
//! ([`write_rows`]), and read with `H5Dread_chunk` and decompressed there
//! ([`read_rows`]); partial chunks, chunks stored another way and
//! everything HDF5 must decide go through the caller's normal path. Rows in
//! a chunk that was never written are an error. A read takes the chunks
//! decompressed ahead for it ([`Ready`], filled by `prefetch`) before
//! fetching any.

use std::ffi::c_uint;

use hdf5::Dataset;

use super::buffers::{give_buffers, take_buffers};
use super::checksum::{corrupt_chunk, fletcher32, fletcher32_reversed};
use super::codecs::Decoded;
use super::detect::{Codec, Pipeline};
use super::pool::for_each_parallel;
use crate::error::{At, Result};
use crate::limits::{oversized_chunk, MAX_FILTERED_CHUNK_BYTES};
use crate::raw::chunks::{read_stored_chunk, stored_chunk, write_chunks};
use crate::raw::ffi::sync;

/// The whole chunks inside rows `start..end`: (first chunk index, count).
pub(super) fn full_chunks(p: &Pipeline, start: u64, end: u64) -> (u64, u64) {
    let c = p.chunk_rows.max(1);
    let first = start.div_ceil(c);
    let last = end / c; // exclusive
    (first, last.saturating_sub(first))
}

/// The normal (HDF5 pipeline) path for rows a direct write cannot take:
/// `(first_row, rows, bytes)`.
pub(crate) type WriteFallback<'a> = dyn FnMut(u64, u64, &[u8]) -> Result<()> + 'a;
/// The normal path for rows a direct read cannot take: `(first_row, rows, out)`.
pub(crate) type ReadFallback<'a> = dyn FnMut(u64, u64, &mut [u8]) -> Result<()> + 'a;
/// One chunk to decompress: its output, its compressed bytes, and whether it worked.
type Slot<'a> = (&'a mut [u8], Option<(Vec<u8>, c_uint)>, Decoded);

/// One chunk read ahead, as the read that uses it finds it.
pub(crate) enum Got {
    /// Its rows, decompressed (exactly one chunk's bytes).
    Done(Vec<u8>),
    /// A chunk h5vec does not decompress itself: HDF5 reads it.
    Fallback,
    /// Fetching it failed (a chunk never written): the read of its rows
    /// returns this error.
    Failed(crate::error::Error),
}

/// The chunks one read finds read ahead, and those it used.
#[derive(Default)]
pub(crate) struct Ready {
    /// Chunks not used yet, by index.
    pub(super) chunks: Vec<(u64, Got)>,
    /// Decompressed chunks this read used.
    pub(super) used: Vec<(u64, Vec<u8>)>,
}

impl Ready {
    /// Takes chunk `k` if it was read ahead.
    fn take(&mut self, k: u64) -> Option<Got> {
        let i = self.chunks.iter().position(|(j, _)| *j == k)?;
        Some(self.chunks.swap_remove(i).1)
    }

    /// Hands back chunk `k` after use (the next read may need its last rows).
    fn keep(&mut self, k: u64, buf: Vec<u8>) {
        self.used.push((k, buf));
    }
}

/// Writes rows `start..start + rows` from `buf` (row-major bytes): whole
/// chunks compressed in parallel and written directly; the partial chunks
/// at either end through `normal(first_row, rows, bytes)`.
pub(crate) fn write_rows(
    ds: &Dataset,
    p: &Pipeline,
    start: u64,
    rows: u64,
    buf: &[u8],
    path: impl At,
    normal: &mut WriteFallback<'_>,
) -> Result<()> {
    let end = start + rows;
    let c = p.chunk_rows.max(1);
    let rb = p.row_bytes;
    let cb = p.chunk_bytes();
    // Rows before the first chunk boundary share a chunk with rows already
    // in the file: HDF5 merges them (normal path).
    let first = start.div_ceil(c) * c;
    if first >= end {
        return normal(start, rows, buf);
    }
    let head = first - start;
    if head > 0 {
        normal(start, head, &buf[..head as usize * rb])?;
    }
    // From `first` on, every chunk is new. The last one may be partial: the
    // dataset ends there (the caller set the extent to `end`), so it is
    // written whole, padded with zeros past the extent, which no reader sees.
    let body = &buf[head as usize * rb..];
    let mut padded = Vec::new();
    let mut chunks: Vec<&[u8]> = body.chunks(cb).collect();
    if let Some(last) = chunks.last_mut() {
        if last.len() < cb {
            crate::limits::sized(&mut padded, cb, "the last chunk", path)?;
            padded[..last.len()].copy_from_slice(last);
            *last = &padded;
        }
    }
    let k0 = first / c;
    if p.level.is_none() {
        // No filters: hand HDF5 each chunk as it is.
        let refs: Vec<(&[u8], c_uint)> = chunks.iter().map(|&b| (b, 0)).collect();
        return write_chunks(ds, k0, c, &refs, path);
    }
    // Output buffers come from a pool, so a long write faults its buffers
    // in once, not once per batch.
    let mut work: Vec<(&[u8], Vec<u8>, c_uint)> = chunks
        .iter()
        .zip(take_buffers(chunks.len()))
        .map(|(&raw, o)| (raw, o, 0))
        .collect();
    for_each_parallel(&mut work, |(raw, o, mask)| *mask = p.compress(raw, o));
    let refs: Vec<(&[u8], c_uint)> = work.iter().map(|(_, o, m)| (&o[..], *m)).collect();
    let r = write_chunks(ds, k0, c, &refs, path);
    give_buffers(work.into_iter().map(|(_, o, _)| o).collect());
    r
}

/// Reads whole unfiltered chunks straight into their place in `body`;
/// returns which chunks could not be read that way. One chunk index lookup
/// per chunk: a chunk stored with another size (or not at all) is not read.
fn read_raw_chunks(ds: &Dataset, k0: u64, c: u64, body: &mut [u8], cb: usize) -> Vec<bool> {
    sync(|| {
        body.chunks_mut(cb)
            .enumerate()
            .map(|(i, o)| {
                let row = (k0 + i as u64) * c;
                read_stored_chunk(ds, row, o) == Some((o.len(), 0))
            })
            .collect()
    })
}

/// The error for rows in chunk `k` (of `c` rows), which was never written:
/// HDF5 would hand back fill values nobody saved. Every chunk an HDF5
/// writer writes is allocated, so below `count` a missing chunk means a
/// damaged file (SPEC.md section 7).
fn never_written(k: u64, c: u64, path: impl At) -> crate::error::Error {
    crate::error::Error::invalid(
        path,
        format!(
            "rows {}..{} are in a chunk that was never written (the file holds no data for them)",
            k.saturating_mul(c),
            k.saturating_add(1).saturating_mul(c)
        ),
    )
}

/// Checks that the chunks holding rows `start..end` (a range inside at
/// most two chunks: the partial ends of a read) are allocated.
fn check_stored(ds: &Dataset, c: u64, start: u64, end: u64, path: impl At) -> Result<()> {
    if start >= end {
        return Ok(());
    }
    for k in start / c..=(end - 1) / c {
        if stored_chunk(ds, k * c).is_none() {
            return Err(never_written(k, c, path));
        }
    }
    Ok(())
}

/// Reads rows `start..start + rows` into `out` (row-major bytes): whole
/// chunks read directly and decompressed in parallel; everything else
/// (partial chunks, chunks stored with a filter skipped) through
/// `normal(first_row, rows, out)`. Rows in a chunk that was never written
/// are an error ([`never_written`]); each chunk is looked up once.
pub(crate) fn read_rows(
    ds: &Dataset,
    p: &Pipeline,
    start: u64,
    rows: u64,
    out: &mut [u8],
    path: impl At,
    normal: &mut ReadFallback<'_>,
) -> Result<()> {
    read_rows_with(ds, p, start, rows, out, path, normal, &mut Ready::default())
}

/// [`read_rows`] taking the chunks in `ready` (decompressed ahead) from
/// there instead of from the file.
#[allow(clippy::too_many_arguments)] // read_rows's arguments and the ready chunks
pub(super) fn read_rows_with(
    ds: &Dataset,
    p: &Pipeline,
    start: u64,
    rows: u64,
    out: &mut [u8],
    path: impl At,
    normal: &mut ReadFallback<'_>,
    ready: &mut Ready,
) -> Result<()> {
    let end = start + rows;
    let (k0, nk) = full_chunks(p, start, end);
    let rb = p.row_bytes;
    let c = p.chunk_rows;
    // A filtered chunk is decoded whole: its size, which the file
    // declares, sizes a buffer (SPEC.md section 7).
    if p.level.is_some() && p.chunk_bytes() as u64 > MAX_FILTERED_CHUNK_BYTES {
        return Err(oversized_chunk(
            path,
            p.chunk_bytes() as u64,
            format_args!("{c} rows of {rb} bytes"),
        ));
    }
    if nk == 0 {
        if p.level.is_some() {
            return read_partial_chunks(ds, p, start, out, path, normal, ready);
        }
        check_stored(ds, c, start, end, path)?;
        return normal(start, rows, out);
    }
    let head = k0 * c - start;
    let done = head + nk * c;
    check_stored(ds, c, start, start + head, path)?;
    check_stored(ds, c, start + done, end, path)?;
    let cb = p.chunk_bytes();
    if p.level.is_none() {
        let (head_out, rest) = out.split_at_mut(head as usize * rb);
        let (body_out, tail_out) = rest.split_at_mut((nk * c) as usize * rb);
        let ok = read_raw_chunks(ds, k0, c, body_out, cb);
        for (i, (o, ok)) in body_out.chunks_mut(cb).zip(ok).enumerate() {
            if !ok {
                let k = k0 + i as u64;
                // A direct read fails for a chunk stored another way, or
                // for one never written: only the latter is an error.
                if stored_chunk(ds, k * c).is_none() {
                    return Err(never_written(k, c, path));
                }
                normal(k * c, c, o)?;
            }
        }
        if head > 0 {
            normal(start, head, head_out)?;
        }
        if done < rows {
            normal(start + done, rows - done, tail_out)?;
        }
        return Ok(());
    }
    let (head_out, rest) = out.split_at_mut(head as usize * rb);
    let (body_out, tail_out) = rest.split_at_mut((nk * c) as usize * rb);
    // Fletcher32 alone: whole chunks are read in place (cheaper than
    // copying one read ahead); partial ones use what was read before.
    if p.codec == Codec::Plain {
        read_plain_chunks(ds, p, k0, body_out, path, normal)?;
        if head > 0 {
            read_partial_chunks(ds, p, start, head_out, path, normal, ready)?;
        }
        if done < rows {
            read_partial_chunks(ds, p, start + done, tail_out, path, normal, ready)?;
        }
        return Ok(());
    }
    // Chunks decompressed ahead are copied into place; the others are
    // fetched (I/O under the HDF5 lock) and decompressed below.
    let mut slots: Vec<Slot<'_>> = Vec::with_capacity(nk as usize);
    let mut fetch = Vec::new();
    for (k, o) in (k0..).zip(body_out.chunks_mut(cb)) {
        match ready.take(k) {
            Some(Got::Done(buf)) => {
                o.copy_from_slice(&buf[..cb]);
                ready.keep(k, buf);
                slots.push((o, None, Decoded::Done));
            }
            Some(Got::Failed(e)) => return Err(e),
            Some(Got::Fallback) => slots.push((o, None, Decoded::Fallback)),
            None => {
                fetch.push(slots.len());
                slots.push((o, None, Decoded::Fallback));
            }
        }
    }
    sync(|| -> Result<()> {
        for &i in &fetch {
            slots[i].1 = fetch_chunk(ds, p, k0 + i as u64, path)?;
        }
        Ok(())
    })?;
    for_each_parallel(&mut slots, |(o, data, got)| {
        if let Some((data, mask)) = data {
            *got = p.decompress(data, *mask, o);
        }
    });
    // Chunks that could not be taken directly go through HDF5.
    give_buffers(
        slots
            .iter_mut()
            .filter_map(|(_, d, _)| d.take().map(|(b, _)| b))
            .collect(),
    );
    for (i, (o, _, got)) in slots.into_iter().enumerate() {
        let k = k0 + i as u64;
        match got {
            Decoded::Done => {}
            Decoded::Fallback => normal_checked(ds, p, k * c, c, o, k, path, normal)?,
            Decoded::Corrupt(why) => return Err(corrupt_chunk(k, c, &why, path)),
        }
    }
    if head > 0 {
        read_partial_chunks(ds, p, start, head_out, path, normal, ready)?;
    }
    if done < rows {
        read_partial_chunks(ds, p, start + done, tail_out, path, normal, ready)?;
    }
    Ok(())
}

/// Reads the whole chunks `k0..` of a Fletcher32-only pipeline
/// ([`Codec::Plain`]) that fill `body` straight into it, then verifies
/// them in parallel: each stored chunk (its rows and 4 checksum bytes) is
/// read at its place, its checksum bytes landing on the first bytes of the
/// next chunk's place, which the next read overwrites (the last chunk goes
/// through a buffer). No copy and no buffer per chunk, as for unfiltered
/// chunks. A chunk stored another way goes through `normal` (HDF5, which
/// verifies it); one never written is an error.
fn read_plain_chunks(
    ds: &Dataset,
    p: &Pipeline,
    k0: u64,
    body: &mut [u8],
    path: impl At,
    normal: &mut ReadFallback<'_>,
) -> Result<()> {
    let (c, cb) = (p.chunk_rows, p.chunk_bytes());
    let nk = body.len() / cb.max(1);
    // The stored checksum of each chunk read directly (`None`: HDF5 reads it).
    let mut sums: Vec<Option<u32>> = Vec::with_capacity(nk);
    // The last chunk's buffer: a pooled one (a load reads batch after batch).
    let mut last = take_buffers(1).pop().unwrap_or_default();
    let read = sync(|| -> Result<()> {
        for i in 0..nk {
            let k = k0 + i as u64;
            let at = i * cb;
            let Some((mask, size)) = stored_chunk(ds, k * c) else {
                return Err(never_written(k, c, path));
            };
            if mask != 0 {
                let why =
                    format!("the chunk is stored without its checksum (filter mask {mask:#x})");
                return Err(corrupt_chunk(k, c, &why, path));
            }
            if size != cb as u64 + 4 {
                // Another size: HDF5 decides (and verifies).
                sums.push(None);
                continue;
            }
            let sum = if at + cb + 4 <= body.len() {
                let place = &mut body[at..at + cb + 4];
                (read_stored_chunk(ds, k * c, place) == Some((cb + 4, 0))).then(|| {
                    u32::from_le_bytes([place[cb], place[cb + 1], place[cb + 2], place[cb + 3]])
                })
            } else {
                crate::limits::sized(&mut last, cb + 4, "a chunk", path)?;
                let got = read_stored_chunk(ds, k * c, &mut last) == Some((cb + 4, 0));
                body[at..at + cb].copy_from_slice(&last[..cb]);
                got.then(|| {
                    u32::from_le_bytes([last[cb], last[cb + 1], last[cb + 2], last[cb + 3]])
                })
            };
            sums.push(sum);
        }
        Ok(())
    });
    give_buffers(vec![last]);
    read?;
    let mut work: Vec<(&mut [u8], Option<u32>, Decoded)> = body
        .chunks_mut(cb)
        .zip(sums)
        .map(|(o, s)| (o, s, Decoded::Fallback))
        .collect();
    for_each_parallel(&mut work, |(o, stored, got)| {
        if let Some(stored) = *stored {
            let computed = fletcher32(o);
            *got = if stored == computed || stored == fletcher32_reversed(computed) {
                Decoded::Done
            } else {
                Decoded::Corrupt(format!("stored {stored:#010x}, computed {computed:#010x}"))
            };
        }
    });
    for (i, (o, _, got)) in work.into_iter().enumerate() {
        let k = k0 + i as u64;
        match got {
            Decoded::Done => {}
            Decoded::Fallback => normal_checked(ds, p, k * c, c, o, k, path, normal)?,
            Decoded::Corrupt(why) => return Err(corrupt_chunk(k, c, &why, path)),
        }
    }
    Ok(())
}

/// `normal(row, n, out)` for rows of chunk `k`, HDF5's own pipeline: with
/// a checksum, HDF5 verifies it (`H5Pset_edc_check`'s default), and its
/// Fletcher32 error becomes h5vec's, naming the chunk's rows. A chunk whose
/// filter mask says its checksum was skipped (HDF5 would return it
/// unverified; no writer skips the mandatory filter) is an error first.
#[allow(clippy::too_many_arguments)] // normal's arguments, the chunk and the pipeline
fn normal_checked(
    ds: &Dataset,
    p: &Pipeline,
    row: u64,
    n: u64,
    out: &mut [u8],
    k: u64,
    path: impl At,
    normal: &mut ReadFallback<'_>,
) -> Result<()> {
    if p.checksum {
        if let Some((mask, _)) = stored_chunk(ds, k * p.chunk_rows) {
            if mask & p.checksum_bit() != 0 {
                let why =
                    format!("the chunk is stored without its checksum (filter mask {mask:#x})");
                return Err(corrupt_chunk(k, p.chunk_rows, &why, path));
            }
        }
    }
    normal(row, n, out).map_err(|e| {
        if p.checksum && e.to_string().contains("Fletcher32") {
            corrupt_chunk(k, p.chunk_rows, "HDF5's own check failed", path)
        } else {
            e
        }
    })
}

/// The stored bytes and filter mask of chunk `k` of a compressed dataset,
/// if h5vec can decompress it itself (a filter mask of none or only deflate
/// skipped, a plausible size); an error if the chunk was never written.
/// The caller holds the HDF5 lock.
pub(super) fn fetch_chunk(
    ds: &Dataset,
    p: &Pipeline,
    k: u64,
    path: impl At,
) -> Result<Option<(Vec<u8>, c_uint)>> {
    let c = p.chunk_rows;
    let row = k * c;
    Ok(match stored_chunk(ds, row) {
        None => return Err(never_written(k, c, path)),
        Some((mask, size))
            if (mask == 0 || mask == p.deflate_skipped() || p.checksum)
                && size <= (p.chunk_bytes() as u64).saturating_mul(2) + 1024 =>
        {
            // At most twice a chunk no larger than MAX_FILTERED_CHUNK_BYTES
            // (read_rows_with), but allocated fallibly all the same.
            let mut data = take_buffers(1).pop().unwrap_or_default();
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            crate::limits::sized(&mut data, size, "a stored chunk", path)?;
            read_stored_chunk(ds, row, &mut data).map(|(len, mask)| {
                data.truncate(len);
                (data, mask)
            })
        }
        _ => None,
    })
}

/// Reads the rows starting at `start` that fill `out` (whole rows), a range
/// that covers no chunk of the compressed dataset whole: each chunk it
/// touches is decompressed whole here (libdeflate, into a pooled buffer)
/// and its rows copied out. HDF5's pipeline decompresses the whole chunk
/// too, with zlib, which is slower: this is what makes reading a few rows
/// (`load_range`) fast. A chunk h5vec cannot decompress goes through
/// `normal`; rows in a chunk never written are an error.
fn read_partial_chunks(
    ds: &Dataset,
    p: &Pipeline,
    start: u64,
    out: &mut [u8],
    path: impl At,
    normal: &mut ReadFallback<'_>,
    ready: &mut Ready,
) -> Result<()> {
    let (c, rb, cb) = (p.chunk_rows, p.row_bytes, p.chunk_bytes());
    if c == 0 || rb == 0 {
        return normal(start, (out.len() / rb.max(1)) as u64, out);
    }
    let mut whole = take_buffers(1).pop().unwrap_or_default();
    let mut row = start;
    let mut r = Ok(());
    let mut rest = out;
    while !rest.is_empty() {
        let k = row / c;
        // Rows of chunk `k` in this range.
        let n = ((k + 1) * c - row).min((rest.len() / rb) as u64);
        let (here, tail) = rest.split_at_mut(n as usize * rb);
        rest = tail;
        let lo = (row - k * c) as usize * rb;
        r = match ready.take(k) {
            Some(Got::Done(buf)) => {
                here.copy_from_slice(&buf[lo..lo + here.len()]);
                ready.keep(k, buf);
                Ok(())
            }
            Some(Got::Failed(e)) => Err(e),
            Some(Got::Fallback) => normal_checked(ds, p, row, n, here, k, path, normal),
            None => sync(|| fetch_chunk(ds, p, k, path)).and_then(|comp| {
                crate::limits::sized(&mut whole, cb, "a decompressed chunk", path)?;
                let got = match comp {
                    Some((data, mask)) => {
                        // Only the bytes wanted (a Blosc chunk decompresses
                        // just the blocks holding them).
                        let at = lo..lo + here.len();
                        let got = p.decompress_part(&data, mask, at, here, &mut whole);
                        give_buffers(vec![data]);
                        got
                    }
                    None => Decoded::Fallback,
                };
                match got {
                    Decoded::Done => Ok(()),
                    Decoded::Fallback => normal_checked(ds, p, row, n, here, k, path, normal),
                    Decoded::Corrupt(why) => Err(corrupt_chunk(k, c, &why, path)),
                }
            }),
        };
        if r.is_err() {
            break;
        }
        row += n;
    }
    give_buffers(vec![whole]);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_chunk_ranges() {
        let p = Pipeline {
            chunk_rows: 10,
            row_bytes: 8,
            elem: 8,
            shuffle: true,
            level: Some(4),
            codec: Codec::Deflate,
            checksum: false,
        };
        assert_eq!(full_chunks(&p, 0, 35), (0, 3));
        assert_eq!(full_chunks(&p, 5, 35), (1, 2));
        assert_eq!(full_chunks(&p, 5, 9), (1, 0));
        assert_eq!(full_chunks(&p, 10, 20), (1, 1));
    }
}
