//! One chunk's bytes through a [`Pipeline`]'s filters, as HDF5's filters
//! store them: shuffle and zlib (libdeflate, with this thread's compressor
//! and scratch space), Blosc frames (c-blosc's context calls), and the
//! Fletcher32 checksum appended on the way in and verified on the way out
//! ([`Pipeline::compress`], [`Pipeline::store`], [`Pipeline::decompress`]).
//! No HDF5 call: these run on the worker threads (Blosc's C calls are in
//! `crate::raw`).

use std::ffi::c_uint;

use super::checksum::{fletcher32, fletcher32_reversed};
use super::detect::{Codec, Pipeline};
use super::shuffle::{shuffle, unshuffle};

/// How one stored chunk decoded (see [`Pipeline::decompress`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// The chunk's rows are in the output.
    Done,
    /// h5vec does not decode this chunk itself: HDF5 reads it.
    Fallback,
    /// The chunk's bytes are not what was written (a Fletcher32 mismatch,
    /// or a chunk of a checksummed dataset stored without its checksum):
    /// what went wrong, for the error naming the chunk's rows.
    Corrupt(String),
}

/// Blosc's name of `c`, for its context calls.
fn blosc_name(c: crate::options::BloscCompressor) -> &'static std::ffi::CStr {
    use crate::options::BloscCompressor::*;
    match c {
        BloscLz => c"blosclz",
        Lz4 => c"lz4",
        Lz4hc => c"lz4hc",
        Zlib => c"zlib",
        Zstd => c"zstd",
    }
}

/// Bytes Blosc adds to a chunk it stores uncompressed (its header).
const BLOSC_MAX_OVERHEAD: usize = 16;

thread_local! {
    /// This thread's compressor and the level it was made for.
    static COMPRESSOR: std::cell::RefCell<Option<(u32, libdeflater::Compressor)>> =
        const { std::cell::RefCell::new(None) };
    /// This thread's decompressor.
    static DECOMPRESSOR: std::cell::RefCell<Option<libdeflater::Decompressor>> =
        const { std::cell::RefCell::new(None) };
    /// Shuffle scratch space.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Pipeline {
    /// Shuffle (if on) and zlib-compress one raw chunk into `out`, with
    /// this thread's compressor and scratch space; returns the chunk's
    /// filter mask. A chunk that deflate cannot shrink (see
    /// [`looks_incompressible`]) is stored shuffled only, with the deflate
    /// bit of its filter mask set, as HDF5 does when an optional filter
    /// fails: readers skip inflating it. `level` must be set.
    pub(crate) fn compress(&self, raw: &[u8], out: &mut Vec<u8>) -> c_uint {
        let mask = self.compress_at(raw, out, self.level.unwrap_or(0));
        self.seal(out);
        mask
    }

    /// Appends the Fletcher32 checksum of `out` (a chunk's filtered bytes)
    /// to it, if the pipeline has one: 4 bytes, little-endian, as HDF5's
    /// filter stores it (`UINT32ENCODE`).
    fn seal(&self, out: &mut Vec<u8>) {
        if self.checksum {
            let sum = fletcher32(out);
            out.extend_from_slice(&sum.to_le_bytes());
        }
    }

    /// Shuffle (if on) and wrap one raw chunk in a zlib stream of "stored"
    /// (uncompressed) deflate blocks: filter mask 0, readable by every
    /// deflate reader, and a size that depends only on the chunk's size.
    /// See `WriteJob::finish` for why appends store partly filled chunks
    /// this way (and chunks that [`Pipeline::compress`] cannot shrink below
    /// it).
    ///
    /// For Blosc: Blosc's stored frame (level 0), 16 bytes more than the
    /// chunk whatever its bytes.
    pub(crate) fn store(&self, raw: &[u8], out: &mut Vec<u8>) -> c_uint {
        let mask = if let Codec::Blosc {
            typesize,
            shuffle,
            compressor,
        } = self.codec
        {
            self.blosc_compress(raw, out, None, typesize, shuffle, compressor)
        } else {
            self.compress_at(raw, out, 0)
        };
        self.seal(out);
        mask
    }

    fn compress_at(&self, raw: &[u8], out: &mut Vec<u8>, level: u32) -> c_uint {
        if self.codec == Codec::Plain {
            out.clear();
            // Room for the checksum too: no reallocation when it is added.
            out.reserve(raw.len() + 4);
            out.extend_from_slice(raw);
            return 0;
        }
        if let Codec::Blosc {
            typesize,
            shuffle,
            compressor,
        } = self.codec
        {
            return self.blosc_compress(raw, out, Some(level), typesize, shuffle, compressor);
        }
        with_compressor(level, |c| {
            SCRATCH.with(|tmp| {
                let mut tmp = tmp.borrow_mut();
                let src: &[u8] = if self.shuffle && self.elem > 1 {
                    shuffle(raw, self.elem, &mut tmp);
                    &tmp
                } else {
                    raw
                };
                out.clear();
                if level > 0 && looks_incompressible(c, src) {
                    out.extend_from_slice(src);
                    return self.deflate_skipped();
                }
                out.resize(c.zlib_compress_bound(src.len()), 0);
                // The bound guarantees room, so this cannot fail.
                let n = c.zlib_compress(src, out).unwrap_or(0);
                out.truncate(n);
                0
            })
        })
    }

    /// One Blosc frame of `raw` into `out` (c-blosc's context call: no
    /// global state, one thread, safe on any worker), at `level`, or with
    /// `None` Blosc's stored frame (level 0, kept whatever its size: see
    /// [`Pipeline::store`]). At a level, a chunk Blosc cannot shrink (at
    /// level 0, every chunk) is kept as it is with the filter's bit of the
    /// mask set, as HDF5's Blosc filter (which gives Blosc no room beyond
    /// the chunk's size) leaves it.
    fn blosc_compress(
        &self,
        raw: &[u8],
        out: &mut Vec<u8>,
        level: Option<u32>,
        typesize: usize,
        shuffle: i32,
        compressor: crate::options::BloscCompressor,
    ) -> c_uint {
        out.clear();
        out.resize(raw.len() + BLOSC_MAX_OVERHEAD, 0);
        let name = blosc_name(compressor);
        let n = crate::raw::blosc_compress(
            level.unwrap_or(0).min(9) as i32,
            shuffle,
            typesize,
            raw,
            out,
            name,
        );
        match usize::try_from(n) {
            Ok(n) if n > 0 && (level.is_none() || n <= raw.len()) => {
                out.truncate(n);
                0
            }
            _ => {
                out.clear();
                out.extend_from_slice(raw);
                self.deflate_skipped()
            }
        }
    }

    /// Decompress one Blosc frame into `out` (exactly one chunk's bytes):
    /// the frame's header is checked against its length and the chunk's
    /// size first.
    fn blosc_decompress(comp: &[u8], out: &mut [u8]) -> bool {
        crate::raw::blosc_decompress(comp, out)
    }

    /// Verifies (if the pipeline has a checksum) and decompresses one
    /// chunk stored with filter mask `mask` into `out` (exactly one chunk's
    /// bytes), with this thread's decompressor and scratch space. The
    /// checksum is verified before anything is decompressed.
    pub(crate) fn decompress(&self, comp: &[u8], mask: c_uint, out: &mut [u8]) -> Decoded {
        let comp = match self.verified(comp, mask) {
            Ok(c) => c,
            Err(d) => return d,
        };
        if self.decode(comp, mask, out) {
            Decoded::Done
        } else {
            Decoded::Fallback
        }
    }

    /// [`Self::decompress`] of bytes `at` of the chunk only, into `out`
    /// (`at.len()` bytes): a Blosc chunk decompresses just the blocks that
    /// cover them (a few rows of a large chunk cost a few blocks); any
    /// other chunk is decompressed whole into `scratch` (one chunk's bytes)
    /// and the bytes copied out.
    pub(crate) fn decompress_part(
        &self,
        comp: &[u8],
        mask: c_uint,
        at: std::ops::Range<usize>,
        out: &mut [u8],
        scratch: &mut [u8],
    ) -> Decoded {
        let verified = match self.verified(comp, mask) {
            Ok(c) => c,
            Err(d) => return d,
        };
        if mask == 0
            && matches!(self.codec, Codec::Blosc { .. })
            && crate::raw::blosc_decompress_part(verified, scratch.len(), at.clone(), out)
        {
            return Decoded::Done;
        }
        // Anything else (or a frame `blosc_getitem` refuses): the whole
        // chunk, as every other read, so its errors are the same.
        if self.decode(verified, mask, scratch) {
            out.copy_from_slice(&scratch[at]);
            Decoded::Done
        } else {
            Decoded::Fallback
        }
    }

    /// The chunk `comp` without its checksum, verified (if the pipeline
    /// has one), or why it cannot be decoded.
    fn verified<'a>(&self, comp: &'a [u8], mask: c_uint) -> Result<&'a [u8], Decoded> {
        if !self.checksum {
            return Ok(comp);
        }
        if mask & self.checksum_bit() != 0 {
            return Err(Decoded::Corrupt(format!(
                "the chunk is stored without its checksum (filter mask {mask:#x})"
            )));
        }
        let Some(n) = comp.len().checked_sub(4) else {
            return Err(Decoded::Corrupt(format!(
                "the chunk holds {} bytes, too few for a checksum",
                comp.len()
            )));
        };
        let (data, tail) = comp.split_at(n);
        let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let computed = fletcher32(data);
        if stored != computed && stored != fletcher32_reversed(computed) {
            return Err(Decoded::Corrupt(format!(
                "stored {stored:#010x}, computed {computed:#010x}"
            )));
        }
        Ok(data)
    }

    /// [`decompress`](Self::decompress) after the checksum: false if h5vec
    /// cannot decode the chunk (the caller asks HDF5 instead).
    fn decode(&self, comp: &[u8], mask: c_uint, out: &mut [u8]) -> bool {
        if self.codec == Codec::Plain {
            if mask != 0 || comp.len() != out.len() {
                return false;
            }
            out.copy_from_slice(comp);
            return true;
        }
        if mask == self.deflate_skipped() && comp.len() == out.len() {
            if self.shuffle && self.elem > 1 {
                unshuffle(comp, self.elem, out);
            } else {
                out.copy_from_slice(comp);
            }
            return true;
        }
        if mask != 0 {
            return false;
        }
        if let Codec::Blosc { .. } = self.codec {
            return Self::blosc_decompress(comp, out);
        }
        DECOMPRESSOR.with(|d| {
            let mut d = d.borrow_mut();
            let d = d.get_or_insert_with(libdeflater::Decompressor::new);
            if self.shuffle && self.elem > 1 {
                SCRATCH.with(|tmp| {
                    let mut tmp = tmp.borrow_mut();
                    tmp.resize(out.len(), 0);
                    match d.zlib_decompress(comp, &mut tmp) {
                        Ok(n) if n == out.len() => {
                            unshuffle(&tmp, self.elem, out);
                            true
                        }
                        _ => false,
                    }
                })
            } else {
                matches!(d.zlib_decompress(comp, out), Ok(n) if n == out.len())
            }
        })
    }
}

/// Bytes of the sample [`looks_incompressible`] compresses: 8 pieces of 2 KiB.
const PROBE_PIECE: usize = 2048;
const PROBE_PIECES: usize = 8;

/// `f` with this thread's compressor at `level` (made once per level
/// change).
fn with_compressor<R>(level: u32, f: impl FnOnce(&mut libdeflater::Compressor) -> R) -> R {
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        let c = match &mut *c {
            Some((l, c)) if *l == level => c,
            slot => {
                let lvl = libdeflater::CompressionLvl::new(level as i32).unwrap_or_default();
                &mut slot.insert((level, libdeflater::Compressor::new(lvl))).1
            }
        };
        f(c)
    })
}

#[cfg(feature = "mpi")]
thread_local! {
    /// This thread's level-0 compressor (stored blocks).
    static STORED: std::cell::RefCell<Option<libdeflater::Compressor>> =
        const { std::cell::RefCell::new(None) };
}

/// The zlib stream of `src` (a chunk HDF5's filter pipeline hands its
/// deflate filter, shuffled already when the pipeline shuffles) at `level`,
/// with this thread's compressor, into `out`: what `h5vec::mpi` has
/// HDF5's deflate filter write (`raw::mpio::use_fast_deflate`). A chunk
/// that [`looks_incompressible`] is stored in level-0 blocks (a valid
/// stream, 5 bytes a 64 KiB block longer than the chunk), not compressed.
#[cfg(feature = "mpi")]
pub(crate) fn zlib_stream(src: &[u8], level: u32, out: &mut Vec<u8>) {
    with_compressor(level, |c| {
        out.clear();
        if level > 0 && looks_incompressible(c, src) {
            STORED.with(|c0| {
                let mut c0 = c0.borrow_mut();
                let c0 = c0.get_or_insert_with(|| {
                    let stored = libdeflater::CompressionLvl::new(0).unwrap_or_default();
                    libdeflater::Compressor::new(stored)
                });
                out.resize(c0.zlib_compress_bound(src.len()), 0);
                let n = c0.zlib_compress(src, out).unwrap_or(0);
                out.truncate(n);
            });
            return;
        }
        out.resize(c.zlib_compress_bound(src.len()), 0);
        // The bound guarantees room, so this cannot fail.
        let n = c.zlib_compress(src, out).unwrap_or(0);
        out.truncate(n);
    });
}

/// Whether deflate would leave `src` (at least 64 KiB) practically as
/// large as it is: a sample of 8 pieces spread over it (one per byte plane
/// of a shuffled 8-byte column) shrinks by less than 1%. Random bits (hash
/// or random ids, noise) cost the compressor the most time per byte and
/// gain nothing; the sample costs about 3% of compressing the chunk.
fn looks_incompressible(c: &mut libdeflater::Compressor, src: &[u8]) -> bool {
    let sample_len = PROBE_PIECE * PROBE_PIECES;
    if src.len() < 64 * 1024 {
        return false;
    }
    let mut sample = Vec::with_capacity(sample_len);
    for k in 0..PROBE_PIECES {
        let at = k * (src.len() - PROBE_PIECE) / (PROBE_PIECES - 1);
        sample.extend_from_slice(&src[at..at + PROBE_PIECE]);
    }
    let mut out = vec![0u8; c.zlib_compress_bound(sample_len)];
    match c.zlib_compress(&sample, &mut out) {
        Ok(n) => n * 100 >= sample_len * 99,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksummed_chunks_verify_before_decoding() {
        for (codec, level, shuffle) in [
            (Codec::Plain, Some(0), false),
            (Codec::Deflate, Some(4), true),
            (Codec::Deflate, Some(4), false),
        ] {
            let p = Pipeline {
                chunk_rows: 64,
                row_bytes: 8,
                elem: 8,
                shuffle,
                level,
                codec,
                checksum: true,
            };
            let raw: Vec<u8> = (0..512u32).map(|i| (i * 7 % 13) as u8).collect();
            let mut comp = Vec::new();
            let mask = p.compress(&raw, &mut comp);
            let body = comp.len() - 4;
            assert_eq!(
                comp[body..],
                fletcher32(&comp[..body]).to_le_bytes(),
                "{codec:?}"
            );
            let mut out = vec![0u8; 512];
            assert_eq!(
                p.decompress(&comp, mask, &mut out),
                Decoded::Done,
                "{codec:?}"
            );
            assert_eq!(out, raw);
            for at in [0, body / 2, body - 1, body, body + 3] {
                let mut bad = comp.clone();
                bad[at] ^= 0x10;
                let got = p.decompress(&bad, mask, &mut out);
                assert!(
                    matches!(&got, Decoded::Corrupt(w) if w.starts_with("stored 0x")),
                    "{codec:?} byte {at}: {got:?}"
                );
            }
            let skipped = p.decompress(&comp, mask | p.checksum_bit(), &mut out);
            assert!(matches!(skipped, Decoded::Corrupt(_)), "{skipped:?}");
            let mut stored = Vec::new();
            let mask = p.store(&raw, &mut stored);
            assert_eq!(p.decompress(&stored, mask, &mut out), Decoded::Done);
            assert_eq!(out, raw);
        }
    }
}
