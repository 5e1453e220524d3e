//! Parallel deflate and Blosc: chunks are compressed (and decompressed) on
//! every core and handed to HDF5 ready-made with direct chunk writes and
//! reads.
//!
//! HDF5 runs its filter pipeline on one thread. For a dataset whose filters
//! are exactly `deflate` or `shuffle` + `deflate` (what `SaveOptions::deflate`
//! creates), or exactly Blosc (filter 32001, what `SaveOptions::zstd` and
//! `Compression::blosc` create), and whose file type has the same bytes as
//! the memory type, whole chunks bypass that pipeline: h5vec shuffles and
//! zlib-compresses them itself (libdeflate), or compresses them with
//! c-blosc's thread-safe context calls (the library HDF5's Blosc filter
//! runs), in parallel, and writes them with `H5Dwrite_chunk`; reading uses
//! `H5Dread_chunk` and parallel decompression. The bytes are those of the
//! standard HDF5 shuffle and deflate (zlib) filters and of the Blosc filter
//! (a Blosc frame per chunk), so the files are the same in meaning as
//! HDF5's own path: stock h5py reads deflate, h5py with `hdf5plugin` reads
//! Blosc. Partial chunks at either end of a batch, and every other dataset,
//! take the normal path.

use std::ffi::c_uint;

use hdf5::Dataset;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5z::{H5Z_FILTER_DEFLATE, H5Z_FILTER_SHUFFLE};

/// HDF5's id of the Blosc filter.
const BLOSC_FILTER: i32 = 32001;
use hdf5_sys::{h5d, h5p, h5t};

use crate::error::{At, Result};
use crate::limits::{oversized_chunk, MAX_FILTERED_CHUNK_BYTES};
use crate::raw::chunks::{read_stored_chunk, stored_chunk, write_chunks};
use crate::raw::ffi::{sync, Owned};
use crate::raw::Pod;

/// What compresses the chunks of a [`Pipeline`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Codec {
    /// zlib streams (HDF5's deflate filter), after HDF5's shuffle filter
    /// if the pipeline's `shuffle` is set.
    Deflate,
    /// One Blosc frame per chunk (filter 32001 alone), with the filter's
    /// parameters: Blosc's type size, its shuffle (0 none, 1 byte, 2 bit)
    /// and its compressor.
    Blosc {
        typesize: usize,
        shuffle: i32,
        compressor: crate::options::BloscCompressor,
    },
    /// No compressor: the pipeline is Fletcher32 alone (`checksum` set),
    /// chunks are their raw bytes followed by the checksum.
    Plain,
}

/// HDF5's id of the Fletcher32 filter.
const FLETCHER32_FILTER: i32 = 3;

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

/// The error for a chunk `k` (of `c` rows) whose checksum does not match.
fn corrupt_chunk(k: u64, c: u64, detail: &str, path: impl At) -> crate::error::Error {
    crate::error::Error::invalid(
        path,
        format!(
            "checksum mismatch, rows {}..{}: {detail} (Fletcher32: the chunk's bytes changed \
             after they were written)",
            k.saturating_mul(c),
            k.saturating_add(1).saturating_mul(c)
        ),
    )
}

/// HDF5's Fletcher32 checksum (`H5_checksum_fletcher32`, the Fletcher32
/// filter's) of `data`: 16-bit big-endian words (a last odd byte is the
/// high byte of a word), two running sums kept in 1..=65535 by HDF5's
/// end-around-carry folds (0 only while every word so far is 0),
/// `sum2 << 16 | sum1`.
///
/// Computed here in blocks of 360 words: within a block, `Σw` and
/// `Σ j·w` (j the word's place in the block) fit in u32 lanes the compiler
/// vectorises, and fold into the sums as `sum1 += Σw`, `sum2 += n·sum1 +
/// n·Σw − Σ j·w` (n the block's words), reduced mod 65535. HDF5's folds
/// give the same residues, and its sums are 0 only when all words are, so
/// the result is the same bits (tests compare with a line-by-line port of
/// HDF5's loop and with HDF5's own filter output).
pub(crate) fn fletcher32(data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2 (checked just above).
        return unsafe { fletcher32_avx2(data) };
    }
    fletcher32_blocks(data)
}

/// [`fletcher32`] compiled for AVX2 (8 u32 lanes: about 1.6 times as fast
/// as the SSE2 baseline's code).
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fletcher32_avx2(data: &[u8]) -> u32 {
    fletcher32_blocks(data)
}

/// [`fletcher32`]'s computation, inlined into each instruction set's copy.
#[inline(always)]
fn fletcher32_blocks(data: &[u8]) -> u32 {
    const BLOCK: usize = 360;
    const M: u64 = 65535;
    let (mut s1, mut s2) = (0u64, 0u64);
    let mut any = 0u64;
    let words = data.len() / 2;
    let (body, odd) = data.split_at(words * 2);
    for block in body.chunks(BLOCK * 2) {
        let (mut sum, mut weighted) = (0u32, 0u32);
        for (j, w) in block.chunks_exact(2).enumerate() {
            let w = u32::from(u16::from_be_bytes([w[0], w[1]]));
            sum += w;
            weighted += j as u32 * w;
        }
        let n = (block.len() / 2) as u64;
        let sum = u64::from(sum);
        any |= sum;
        // n·(s1 + Σw) ≥ Σ j·w: no underflow.
        s2 = (s2 + n * (s1 + sum) - u64::from(weighted)) % M;
        s1 = (s1 + sum) % M;
    }
    if let [b] = odd {
        let w = u64::from(*b) << 8;
        any |= w;
        s1 = (s1 + w) % M;
        s2 = (s2 + s1) % M;
    }
    if any == 0 {
        return 0;
    }
    // Nonzero sums: HDF5 represents the residue 0 as 65535.
    let fold = |x: u64| if x == 0 { M } else { x } as u32;
    (fold(s2) << 16) | fold(s1)
}

/// A checksum HDF5 also accepts for `sum`: its bytes swapped within each
/// 16-bit half (what HDF5 before 1.6.3 stored on little-endian machines).
fn fletcher32_reversed(sum: u32) -> u32 {
    ((sum & 0x00ff_00ff) << 8) | ((sum >> 8) & 0x00ff_00ff)
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

/// The filter pipeline of a chunked dataset that h5vec can run itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pipeline {
    /// Rows per chunk (axis 0).
    pub chunk_rows: u64,
    /// Bytes per row (element size times the trailing dimensions).
    pub row_bytes: usize,
    /// Element size, for the shuffle filter.
    pub elem: usize,
    /// Shuffle before deflate.
    pub shuffle: bool,
    /// zlib (or Blosc) level; `None` for a chunked dataset without
    /// filters, whose whole chunks are written and read directly (no chunk
    /// cache, no selection machinery, no extra copy).
    pub level: Option<u32>,
    /// The compressor (meaningless when `level` is `None`).
    pub codec: Codec,
    /// Fletcher32 last in the pipeline: every stored chunk ends with the
    /// 4-byte checksum of the bytes before it, which h5vec writes and
    /// verifies itself. A Fletcher32-only pipeline has codec
    /// [`Codec::Plain`] and `level` `Some(0)`: its chunks go through
    /// [`Pipeline::compress`] and [`Pipeline::decompress`] like compressed
    /// ones.
    pub checksum: bool,
}

/// Whether direct chunk I/O is used at all (on by default; set
/// `H5VEC_DIRECT_CHUNKS=0` to force HDF5's own pipeline, e.g. to compare).
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("H5VEC_DIRECT_CHUNKS")
            .map(|v| v != "0")
            .unwrap_or(true)
    })
}

/// Threads to use.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// h5vec's own worker threads (one per core), which compress and
/// decompress chunks; `None` if the OS refused threads (then everything runs
/// on the calling thread). A private pool, not rayon's global one: h5vec
/// waits for its chunks, and a caller that is itself a task of the global
/// pool must not wait for work queued behind it.
pub(crate) fn pool() -> Option<&'static rayon::ThreadPool> {
    #[cfg(unix)] // The child of an isolated check has none of the parent's threads.
    if crate::untrusted::in_child() {
        return None;
    }
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads())
            .thread_name(|i| format!("h5vec-deflate-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `f` on every item, spread over the pool's threads.
fn for_each_parallel<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync) {
    use rayon::prelude::*;
    match pool() {
        Some(p) => p.install(|| items.par_iter_mut().for_each(&f)),
        None => items.iter_mut().for_each(f),
    }
}

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
    /// Detects a pipeline h5vec can run for `ds` accessed through memory
    /// type `mem_type` (which must equal the file type byte for byte).
    pub(crate) fn detect(ds: &Dataset, mem_type: hid_t) -> Option<Pipeline> {
        if !enabled() || cfg!(target_endian = "big") {
            return None;
        }
        // SAFETY: a valid dataset id; the property list is owned by an
        // `Owned` and valid while `detect_in` reads it, under the lock.
        sync(|| unsafe {
            let dcpl = Owned::ok(h5d::H5Dget_create_plist(ds.id()))?;
            Self::detect_in(ds.id(), dcpl.id(), mem_type)
        })
    }

    /// [`Pipeline::detect`] on the dataset's creation property list.
    ///
    /// # Safety
    /// The caller holds the HDF5 lock; `ds` is a valid dataset id, `dcpl`
    /// its creation property list, and `mem_type` a datatype id.
    unsafe fn detect_in(ds: hid_t, dcpl: hid_t, mem_type: hid_t) -> Option<Pipeline> {
        // SAFETY (whole block): valid ids under the lock (caller's
        // contract); output buffers are as large as passed; the file type
        // is owned by an `Owned`.
        unsafe {
            let nf = h5p::H5Pget_nfilters(dcpl);
            if !(0..=3).contains(&nf) {
                return None;
            }
            let mut filters = Vec::with_capacity(nf as usize);
            for i in 0..nf as c_uint {
                let mut flags: c_uint = 0;
                let mut nelm: usize = 8;
                let mut cd = [0 as c_uint; 8];
                let mut cfg: c_uint = 0;
                let id = h5p::H5Pget_filter2(
                    dcpl,
                    i,
                    &mut flags,
                    &mut nelm,
                    cd.as_mut_ptr(),
                    0,
                    std::ptr::null_mut(),
                    &mut cfg,
                );
                filters.push((id, nelm, cd));
            }
            // Fletcher32 is h5vec's only when it comes last.
            let checksum = filters.last().is_some_and(|f| f.0 == FLETCHER32_FILTER);
            if checksum {
                filters.pop();
            }
            let nc = filters.len();
            let mut shuffle = false;
            let mut level = None;
            let mut codec = Codec::Deflate;
            // Blosc's own record of the chunk's size, checked below.
            let mut blosc_bytes = None;
            for (i, &(id, nelm, cd)) in filters.iter().enumerate() {
                match id {
                    H5Z_FILTER_SHUFFLE if i == 0 && nc == 2 => shuffle = true,
                    H5Z_FILTER_DEFLATE if i == nc - 1 => {
                        level = Some(if nelm >= 1 { cd[0] } else { 6 })
                    }
                    // Blosc alone, with the parameters its `set_local`
                    // completes at creation: [filter version, format
                    // version, type size, chunk bytes, level, shuffle,
                    // compressor].
                    BLOSC_FILTER if nc == 1 && (7..=cd.len()).contains(&nelm) => {
                        let compressor = crate::options::BloscCompressor::from_code(cd[6])?;
                        if cd[4] > 9 || cd[5] > 2 || !(1..=255).contains(&cd[2]) {
                            return None;
                        }
                        level = Some(cd[4]);
                        blosc_bytes = Some(cd[3] as usize);
                        codec = Codec::Blosc {
                            typesize: cd[2] as usize,
                            shuffle: cd[5] as i32,
                            compressor,
                        };
                    }
                    _ => return None,
                }
            }
            if nc > 0 && level.is_none() {
                return None;
            }
            if nc == 0 && checksum {
                level = Some(0);
                codec = Codec::Plain;
            }
            let file_type = Owned::ok(h5d::H5Dget_type(ds))?;
            let ft = file_type.id();
            // Only plain fixed-size data: no variable-length strings or
            // sequences (their file bytes are heap references, not values).
            use hdf5_sys::h5t::H5T_class_t::*;
            let plain = matches!(
                h5t::H5Tget_class(ft),
                H5T_INTEGER | H5T_FLOAT | H5T_BITFIELD | H5T_ENUM | H5T_COMPOUND
            ) && h5t::H5Tdetect_class(ft, H5T_VLEN) == 0
                && h5t::H5Tdetect_class(ft, H5T_STRING) == 0
                && h5t::H5Tdetect_class(ft, H5T_REFERENCE) == 0;
            let same = plain && h5t::H5Tequal(ft, mem_type) > 0;
            let elem = h5t::H5Tget_size(ft);
            if !same || elem == 0 {
                return None;
            }
            let mut dims = [0 as hsize_t; 32];
            let rank = h5p::H5Pget_chunk(dcpl, 32, dims.as_mut_ptr());
            if rank < 1 {
                return None;
            }
            let mut row_bytes = elem;
            for &d in &dims[1..rank as usize] {
                row_bytes = row_bytes.checked_mul(usize::try_from(d).ok()?)?;
            }
            let chunk_bytes = row_bytes.checked_mul(usize::try_from(dims[0]).ok()?)?;
            if blosc_bytes.is_some_and(|b| b != chunk_bytes) {
                return None;
            }
            Some(Pipeline {
                chunk_rows: dims[0],
                row_bytes,
                elem,
                shuffle,
                level: level.map(|l| l.min(12)),
                codec,
                checksum,
            })
        }
    }

    /// Whether whole-vector loads go through [`ReadAhead`]: every
    /// filtered pipeline (for Fletcher32 alone, [`Codec::Plain`], only to
    /// keep the chunk a partial read verified for the next read: nothing
    /// is decompressed ahead).
    pub(crate) fn reads_ahead(&self) -> bool {
        self.level.is_some()
    }

    fn chunk_bytes(&self) -> usize {
        self.chunk_rows as usize * self.row_bytes
    }

    /// The filter mask of a chunk stored with its deflate filter skipped
    /// (bit `i` set: filter `i` of the pipeline was not applied).
    pub(crate) fn deflate_skipped(&self) -> c_uint {
        if self.shuffle {
            0b10
        } else {
            0b01
        }
    }

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

    /// The filter mask bit of the Fletcher32 filter (the last one).
    fn checksum_bit(&self) -> c_uint {
        let before = match self.codec {
            Codec::Plain => 0,
            Codec::Blosc { .. } => 1,
            Codec::Deflate => 1 + u32::from(self.shuffle),
        };
        1 << before
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
        COMPRESSOR.with(|c| {
            let mut c = c.borrow_mut();
            let c = match &mut *c {
                Some((l, c)) if *l == level => c,
                slot => {
                    let lvl = libdeflater::CompressionLvl::new(level as i32).unwrap_or_default();
                    &mut slot.insert((level, libdeflater::Compressor::new(lvl))).1
                }
            };
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
        // SAFETY: `raw` and `out` are valid for the lengths passed and do
        // not overlap; `name` is NUL-terminated; the context call touches
        // no global state.
        let n = unsafe {
            blosc_src::blosc_compress_ctx(
                level.unwrap_or(0).min(9) as i32,
                shuffle,
                typesize,
                raw.len(),
                raw.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                out.len(),
                name.as_ptr(),
                0,
                1,
            )
        };
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
        let mut nbytes = 0usize;
        // SAFETY: `comp` is valid for `comp.len()` bytes; Blosc reads its
        // header within them and writes the size it claims to `nbytes`.
        let valid = unsafe {
            blosc_src::blosc_cbuffer_validate(comp.as_ptr().cast(), comp.len(), &mut nbytes)
        };
        if valid != 0 || nbytes != out.len() {
            return false;
        }
        // SAFETY: a frame whose header `blosc_cbuffer_validate` accepted
        // for `comp.len()` bytes; `out` has room for the `nbytes` it holds.
        let n = unsafe {
            blosc_src::blosc_decompress_ctx(
                comp.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                out.len(),
                1,
            )
        };
        usize::try_from(n).is_ok_and(|n| n == out.len())
    }

    /// Verifies (if the pipeline has a checksum) and decompresses one
    /// chunk stored with filter mask `mask` into `out` (exactly one chunk's
    /// bytes), with this thread's decompressor and scratch space. The
    /// checksum is verified before anything is decompressed.
    pub(crate) fn decompress(&self, comp: &[u8], mask: c_uint, out: &mut [u8]) -> Decoded {
        let comp = if self.checksum {
            if mask & self.checksum_bit() != 0 {
                return Decoded::Corrupt(format!(
                    "the chunk is stored without its checksum (filter mask {mask:#x})"
                ));
            }
            let Some(n) = comp.len().checked_sub(4) else {
                return Decoded::Corrupt(format!(
                    "the chunk holds {} bytes, too few for a checksum",
                    comp.len()
                ));
            };
            let (data, tail) = comp.split_at(n);
            let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
            let computed = fletcher32(data);
            if stored != computed && stored != fletcher32_reversed(computed) {
                return Decoded::Corrupt(format!(
                    "stored {stored:#010x}, computed {computed:#010x}"
                ));
            }
            data
        } else {
            comp
        };
        if self.decode(comp, mask, out) {
            Decoded::Done
        } else {
            Decoded::Fallback
        }
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

/// HDF5's shuffle filter: byte `j` of element `i` goes to `j * n + i`.
pub(crate) fn shuffle(raw: &[u8], elem: usize, out: &mut Vec<u8>) {
    let n = raw.len() / elem;
    out.clear();
    out.resize(raw.len(), 0);
    match elem {
        2 => shuffle_n::<2>(raw, n, out),
        4 => shuffle_n::<4>(raw, n, out),
        8 => shuffle_n::<8>(raw, n, out),
        16 => shuffle_n::<16>(raw, n, out),
        _ => {
            for j in 0..elem {
                let dst = &mut out[j * n..(j + 1) * n];
                for (i, d) in dst.iter_mut().enumerate() {
                    *d = raw[i * elem + j];
                }
            }
        }
    }
    // Trailing bytes that do not fill an element stay in place.
    let rest = n * elem;
    out[rest..].copy_from_slice(&raw[rest..]);
}

/// [`shuffle`] for a fixed element size: blocks of 8 elements, each byte
/// plane of a block gathered into 8 bytes and stored at once.
fn shuffle_n<const N: usize>(raw: &[u8], n: usize, out: &mut [u8]) {
    let blocks = n / 8;
    for (b, src) in raw[..blocks * 8 * N].chunks_exact(8 * N).enumerate() {
        for j in 0..N {
            let mut w = [0u8; 8];
            for (k, x) in w.iter_mut().enumerate() {
                *x = src[k * N + j];
            }
            let at = j * n + b * 8;
            out[at..at + 8].copy_from_slice(&w);
        }
    }
    for i in blocks * 8..n {
        for j in 0..N {
            out[j * n + i] = raw[i * N + j];
        }
    }
}

/// Inverse of [`shuffle`].
pub(crate) fn unshuffle(sh: &[u8], elem: usize, out: &mut [u8]) {
    let n = sh.len() / elem;
    match elem {
        2 => unshuffle_n::<2>(sh, n, out),
        4 => unshuffle_n::<4>(sh, n, out),
        8 => unshuffle_n::<8>(sh, n, out),
        16 => unshuffle_n::<16>(sh, n, out),
        _ => {
            for j in 0..elem {
                let src = &sh[j * n..(j + 1) * n];
                for (i, &s) in src.iter().enumerate() {
                    out[i * elem + j] = s;
                }
            }
        }
    }
    let rest = n * elem;
    out[rest..].copy_from_slice(&sh[rest..]);
}

/// [`unshuffle`] for a fixed element size: blocks of 8 elements, 8 bytes
/// of each byte plane loaded at once and scattered.
fn unshuffle_n<const N: usize>(sh: &[u8], n: usize, out: &mut [u8]) {
    let blocks = n / 8;
    for (b, dst) in out[..blocks * 8 * N].chunks_exact_mut(8 * N).enumerate() {
        for j in 0..N {
            let at = j * n + b * 8;
            let mut w = [0u8; 8];
            w.copy_from_slice(&sh[at..at + 8]);
            for (k, x) in w.iter().enumerate() {
                dst[k * N + j] = *x;
            }
        }
    }
    for i in blocks * 8..n {
        for j in 0..N {
            out[i * N + j] = sh[j * n + i];
        }
    }
}

/// The whole chunks inside rows `start..end`: (first chunk index, count).
fn full_chunks(p: &Pipeline, start: u64, end: u64) -> (u64, u64) {
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

/// Byte buffers for compressed chunks, kept between batches.
static BUFFERS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
/// [`BUFFERS`] in the child of an isolated check ([`crate::forked::fork_safe`]).
static CHILD_BUFFERS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Most buffers kept in the pool, and most bytes of them.
const POOL_MAX: usize = 64;
const CHUNK_POOL_BYTES: usize = 64 << 20;

pub(crate) fn take_buffers(n: usize) -> Vec<Vec<u8>> {
    let mut p = crate::forked::fork_safe(&BUFFERS, &CHILD_BUFFERS)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    (0..n).map(|_| p.pop().unwrap_or_default()).collect()
}

/// Keeps `bufs` for later batches: at most [`POOL_MAX`] buffers and
/// [`CHUNK_POOL_BYTES`] bytes in all, none over [`TYPED_MAX_ONE`] (chunks can
/// be large; a pool of the largest would hold gigabytes for good).
pub(crate) fn give_buffers(bufs: Vec<Vec<u8>>) {
    let mut p = crate::forked::fork_safe(&BUFFERS, &CHILD_BUFFERS)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let mut total: usize = p.iter().map(Vec::capacity).sum();
    for b in bufs {
        let n = b.capacity();
        if p.len() < POOL_MAX && n <= TYPED_MAX_ONE && total + n <= CHUNK_POOL_BYTES {
            total += n;
            p.push(b);
        }
    }
}

/// Batch buffers of writers that are done, by element type, kept for the
/// next writer ([`take_vec`], [`give_vec`]). A save's batch buffers are a
/// few MiB; allocated afresh by every save, their page faults were a sixth
/// of a W1 save where freed memory goes back to the system (glibc with a
/// fixed `mmap_threshold`, as `compare` runs).
static TYPED: std::sync::Mutex<Vec<(usize, Box<dyn std::any::Any + Send>)>> =
    std::sync::Mutex::new(Vec::new());
/// [`TYPED`] in the child of an isolated check ([`crate::forked::fork_safe`]).
static CHILD_TYPED: std::sync::Mutex<Vec<(usize, Box<dyn std::any::Any + Send>)>> =
    std::sync::Mutex::new(Vec::new());

/// Most bytes of buffers [`TYPED`] keeps, and most bytes of one of them.
const TYPED_MAX_BYTES: usize = 32 << 20;
const TYPED_MAX_ONE: usize = 8 << 20;

/// An empty buffer for `T` values: one a finished writer gave back (its
/// room kept), else a new one.
pub(crate) fn take_vec<T: Pod>() -> Vec<T> {
    let mut p = crate::forked::fork_safe(&TYPED, &CHILD_TYPED)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    match p.iter().rposition(|(_, b)| b.is::<Vec<T>>()) {
        Some(i) => {
            let (_, b) = p.remove(i);
            drop(p);
            let mut v = b.downcast::<Vec<T>>().map(|b| *b).unwrap_or_default();
            v.clear();
            v
        }
        None => Vec::new(),
    }
}

/// Keeps `v`'s room for a later [`take_vec`], within [`TYPED_MAX_BYTES`]
/// (the oldest buffers go first); very large buffers are freed.
pub(crate) fn give_vec<T: Pod>(mut v: Vec<T>) {
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes == 0 || bytes > TYPED_MAX_ONE {
        return;
    }
    v.clear();
    let mut p = crate::forked::fork_safe(&TYPED, &CHILD_TYPED)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    p.push((bytes, Box::new(v)));
    let mut total: usize = p.iter().map(|(n, _)| n).sum();
    let mut first = 0;
    while total > TYPED_MAX_BYTES && first < p.len() {
        total -= p[first].0;
        first += 1;
    }
    let gone: Vec<_> = p.drain(..first).collect();
    drop(p);
    drop(gone);
}

/// A buffer from [`take_vec`] that goes back with [`give_vec`] when
/// dropped: the batch buffers of decoders, which a load allocates afresh
/// otherwise (W1: about 3 MiB a load).
pub(crate) struct PooledVec<T: Pod>(Vec<T>);

impl<T: Pod> PooledVec<T> {
    /// An empty buffer, with the room of one given back earlier if any.
    pub(crate) fn take() -> Self {
        PooledVec(take_vec())
    }
}

impl<T: Pod> std::ops::Deref for PooledVec<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Pod> std::ops::DerefMut for PooledVec<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: Pod> Drop for PooledVec<T> {
    fn drop(&mut self) {
        give_vec(std::mem::take(&mut self.0));
    }
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
fn read_rows_with(
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
fn fetch_chunk(
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
                        let got = p.decompress(&data, mask, &mut whole);
                        give_buffers(vec![data]);
                        got
                    }
                    None => Decoded::Fallback,
                };
                match got {
                    Decoded::Done => {
                        here.copy_from_slice(&whole[lo..lo + here.len()]);
                        Ok(())
                    }
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
    chunks: Vec<(u64, Got)>,
    /// Decompressed chunks this read used.
    used: Vec<(u64, Vec<u8>)>,
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

/// Chunks being decompressed on the pool for the next read.
struct Pending {
    /// The chunks, decompressed into their buffers or not (with the
    /// buffer to give back).
    rx: std::sync::mpsc::Receiver<Vec<(u64, Decoded, Vec<u8>)>>,
    /// Chunks settled when they were fetched: errors and fallbacks.
    early: Vec<(u64, Got)>,
}

impl Pending {
    /// Waits for the decompressed chunks. A job that ended without sending
    /// (it cannot, short of a panic) leaves its chunks to be read again.
    /// A chunk whose checksum does not match waits as the error of the
    /// read that uses it (chunks of `c` rows).
    fn wait(self, c: u64, path: impl At) -> impl Iterator<Item = (u64, Got)> {
        let done = self.rx.recv().unwrap_or_default();
        let mut spare = Vec::new();
        let mut got: Vec<(u64, Got)> = self.early;
        for (k, d, b) in done {
            got.push((
                k,
                match d {
                    Decoded::Done => Got::Done(b),
                    Decoded::Fallback => {
                        spare.push(b);
                        Got::Fallback
                    }
                    Decoded::Corrupt(why) => {
                        spare.push(b);
                        Got::Failed(corrupt_chunk(k, c, &why, path))
                    }
                },
            ));
        }
        give_buffers(spare);
        got.into_iter()
    }
}

/// Read-ahead of one compressed dataset read front to back in batches
/// (a whole-vector load, a stream): after a batch, the chunks of the next
/// batch (as many rows as this one) are fetched from the file and
/// decompressed on the worker threads while the caller decodes this
/// batch; the next read takes them from here.
///
/// Only reads that continue the previous one (starting inside or at the
/// end of it; the first read at row 0) and cover at least one whole chunk
/// read ahead, so a read of a few rows or at a random place pays for
/// nothing it does not use, and a range read for at most one batch.
/// Memory: at most one batch ahead, plus the chunk holding the last rows
/// read. The decompressing job owns its buffers and sends them through a
/// channel: a reader dropped meanwhile leaves it nothing to touch.
#[derive(Default)]
pub(crate) struct ReadAhead {
    state: std::sync::Mutex<AheadState>,
}

#[derive(Default)]
struct AheadState {
    /// The rows of the last read.
    last: Option<(u64, u64)>,
    /// Chunks read ahead or used and still of use: those holding rows from
    /// the last row read on.
    kept: Vec<(u64, Got)>,
    /// The next batch's chunks, being decompressed.
    pending: Option<Pending>,
}

impl std::fmt::Debug for ReadAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadAhead")
    }
}

/// [`read_rows`] with read-ahead (see [`ReadAhead`]): rows `start..start +
/// rows` of a compressed dataset of `limit` rows.
#[allow(clippy::too_many_arguments)] // read_rows's arguments, the state and the extent
pub(crate) fn read_rows_ahead(
    ds: &Dataset,
    p: &Pipeline,
    ahead: &ReadAhead,
    limit: u64,
    start: u64,
    rows: u64,
    out: &mut [u8],
    path: impl At,
    normal: &mut ReadFallback<'_>,
) -> Result<()> {
    let mut st = ahead.state.lock().unwrap_or_else(|e| e.into_inner());
    let end = start + rows;
    let seq = match st.last {
        None => start == 0,
        Some((s0, e0)) => start >= s0 && start <= e0 && end > e0,
    };
    let mut ready = Ready::default();
    let pending = st.pending.take();
    let kept = std::mem::take(&mut st.kept);
    if seq {
        ready.chunks = kept;
        if let Some(pend) = pending {
            ready.chunks.extend(pend.wait(p.chunk_rows, path));
        }
    } else {
        // A jump: what was read ahead is of no use (a job still running
        // finishes into a channel nobody reads).
        recycle(kept);
    }
    let r = read_rows_with(ds, p, start, rows, out, path, normal, &mut ready);
    st.last = Some((start, end));
    let c = p.chunk_rows.max(1);
    // The chunk holding the last row read may be read again by the next
    // read (list offsets overlap by one row), and chunks past it were read
    // ahead for it.
    let first_kept = end.saturating_sub(1) / c;
    let left = ready
        .chunks
        .into_iter()
        .chain(ready.used.into_iter().map(|(k, b)| (k, Got::Done(b))));
    let (keep, drop): (Vec<_>, Vec<_>) =
        left.partition(|(k, _)| seq && r.is_ok() && *k >= first_kept);
    recycle(drop);
    st.kept = keep;
    let (_, whole) = full_chunks(p, start, end);
    // Fletcher32-only chunks are read in place ([`read_plain_chunks`]):
    // nothing to decompress ahead.
    if r.is_ok() && seq && whole > 0 && p.level.is_some() && p.codec != Codec::Plain {
        let to = end.saturating_add(rows).min(limit);
        st.pending = prefetch(ds, p, end, to, &st.kept, path);
    }
    r
}

/// Returns the buffers of chunks no longer needed to the pool.
fn recycle(chunks: Vec<(u64, Got)>) {
    give_buffers(
        chunks
            .into_iter()
            .filter_map(|(_, g)| match g {
                Got::Done(b) => Some(b),
                _ => None,
            })
            .collect(),
    );
}

/// Fetches the chunks holding rows `from..to` (except those in `kept`)
/// and starts decompressing them on the pool. A chunk that cannot be
/// fetched ends the fetching; its error waits for the read that uses it.
fn prefetch(
    ds: &Dataset,
    p: &Pipeline,
    from: u64,
    to: u64,
    kept: &[(u64, Got)],
    path: impl At,
) -> Option<Pending> {
    let c = p.chunk_rows;
    if c == 0 || from >= to {
        return None;
    }
    let mut early = Vec::new();
    let mut work = Vec::new();
    sync(|| {
        for k in from / c..to.div_ceil(c) {
            if kept.iter().any(|(j, _)| *j == k) {
                continue;
            }
            match fetch_chunk(ds, p, k, path) {
                Ok(Some(data)) => work.push((k, data)),
                Ok(None) => early.push((k, Got::Fallback)),
                Err(e) => {
                    early.push((k, Got::Failed(e)));
                    break;
                }
            }
        }
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let p = *p;
    let cb = p.chunk_bytes();
    // Owns everything it touches: the compressed bytes and the buffers.
    let job = move || {
        let bufs = take_buffers(work.len());
        let mut all: Vec<_> = work
            .into_iter()
            .zip(bufs)
            .map(|((k, d), o)| (k, d, o, Decoded::Fallback))
            .collect();
        for_each_parallel(&mut all, |(_, (data, mask), o, got)| {
            // A buffer that cannot be had leaves the chunk to the read
            // that uses it.
            if o.try_reserve_exact(cb.saturating_sub(o.len())).is_ok() {
                o.resize(cb, 0);
                *got = p.decompress(data, *mask, o);
            }
        });
        let mut spent = Vec::with_capacity(all.len());
        let done = all
            .into_iter()
            .map(|(k, (data, _), o, d)| {
                spent.push(data);
                (k, d, o)
            })
            .collect();
        give_buffers(spent);
        let _ = tx.send(done);
    };
    match pool() {
        Some(pool) => pool.spawn(job),
        None => job(),
    }
    Some(Pending { rx, early })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pod types of these tests alone, so buffers other tests give back to
    /// the process-wide pool never answer their `take_vec`.
    macro_rules! probe {
        ($name:ident) => {
            #[derive(Clone, Copy, Default, Debug, PartialEq)]
            struct $name(u64);
            // SAFETY: one u64: no padding, every bit pattern valid; its HDF5
            // types are never asked for (the value never reaches HDF5).
            unsafe impl Pod for $name {
                fn mem_type() -> hid_t {
                    unreachable!("never written")
                }
                fn file_type() -> hid_t {
                    unreachable!("never written")
                }
                const ENCODED: &'static str = "UInt64";
                fn accepts(_: &crate::raw::TypeInfo) -> bool {
                    false
                }
            }
        };
    }

    #[test]
    fn pooled_decoder_buffers_go_back_when_dropped() {
        probe!(ProbeC);
        let mut a = PooledVec::<ProbeC>::take();
        assert_eq!(a.capacity(), 0);
        a.extend([ProbeC(3); 500]);
        let (ptr, cap) = (a.as_ptr(), a.capacity());
        drop(a);
        let b = PooledVec::<ProbeC>::take();
        assert!(b.is_empty());
        assert_eq!((b.as_ptr(), b.capacity()), (ptr, cap));
        // Held by `b`: a second buffer is a new one.
        assert_eq!(PooledVec::<ProbeC>::take().capacity(), 0);
    }

    #[test]
    fn chunk_buffers_over_the_limit_are_not_kept() {
        let big = TYPED_MAX_ONE + 1;
        give_buffers(vec![Vec::with_capacity(big), Vec::with_capacity(1000)]);
        let got = take_buffers(POOL_MAX + 1);
        assert!(got.iter().all(|b| b.capacity() < big));
        assert!(got.iter().map(Vec::capacity).sum::<usize>() <= CHUNK_POOL_BYTES);
        give_buffers(got);
    }

    #[test]
    fn writer_buffers_are_kept_by_type_and_capped() {
        probe!(ProbeA);
        probe!(ProbeB);
        let fresh: Vec<ProbeA> = take_vec();
        assert_eq!(fresh.capacity(), 0);
        let mut v = fresh;
        v.extend([ProbeA(7); 1000]);
        let (ptr, cap) = (v.as_ptr(), v.capacity());
        give_vec(v);
        // Another element type never gets it.
        assert_eq!(take_vec::<ProbeB>().capacity(), 0);
        let back: Vec<ProbeA> = take_vec();
        assert!(back.is_empty());
        assert_eq!((back.as_ptr(), back.capacity()), (ptr, cap));
        // Taken once: the pool no longer holds it.
        assert_eq!(take_vec::<ProbeA>().capacity(), 0);

        // One buffer over TYPED_MAX_ONE is freed, not kept.
        give_vec(Vec::<ProbeA>::with_capacity(TYPED_MAX_ONE / 8 + 1));
        assert_eq!(take_vec::<ProbeA>().capacity(), 0);

        // Twelve 4 MiB buffers: at most 32 MiB of them stay, the newest.
        let each = (4 << 20) / 8;
        for _ in 0..12 {
            give_vec(Vec::<ProbeB>::with_capacity(each));
        }
        let mut kept = 0;
        while take_vec::<ProbeB>().capacity() >= each {
            kept += 1;
        }
        assert!((1..=TYPED_MAX_BYTES / (4 << 20)).contains(&kept), "{kept}");
    }

    #[test]
    fn shuffle_roundtrip_matches_hdf5_order() {
        let raw: Vec<u8> = (0u8..22).collect();
        let mut sh = Vec::new();
        shuffle(&raw, 4, &mut sh);
        // 5 elements of 4 bytes: first bytes of each, then second bytes, ...; 2 leftover bytes.
        assert_eq!(&sh[..5], &[0, 4, 8, 12, 16]);
        assert_eq!(&sh[5..10], &[1, 5, 9, 13, 17]);
        assert_eq!(&sh[20..], &[20, 21]);
        let mut back = vec![0u8; raw.len()];
        unshuffle(&sh, 4, &mut back);
        assert_eq!(back, raw);
    }

    #[test]
    fn shuffle_matches_definition_for_every_size() {
        for elem in [1usize, 2, 3, 4, 8, 16] {
            for len in [
                0usize,
                1,
                7,
                8 * elem,
                8 * elem + 3,
                77 * elem + 5,
                1000 * elem,
            ] {
                let raw: Vec<u8> = (0..len).map(|i| (i * 7 + i / 3) as u8).collect();
                let n = len / elem;
                let mut want = raw.clone();
                for i in 0..n {
                    for j in 0..elem {
                        want[j * n + i] = raw[i * elem + j];
                    }
                }
                let mut sh = Vec::new();
                shuffle(&raw, elem, &mut sh);
                assert_eq!(sh, want, "elem {elem} len {len}");
                let mut back = vec![0u8; len];
                unshuffle(&sh, elem, &mut back);
                assert_eq!(back, raw, "elem {elem} len {len}");
            }
        }
    }

    /// HDF5's `H5_checksum_fletcher32`, line by line.
    fn hdf5_fletcher32(data: &[u8]) -> u32 {
        let (mut sum1, mut sum2) = (0u32, 0u32);
        let mut len = data.len() / 2;
        let mut at = 0;
        while len > 0 {
            let mut tlen = len.min(360);
            len -= tlen;
            while tlen > 0 {
                sum1 += (u32::from(data[at]) << 8) | u32::from(data[at + 1]);
                at += 2;
                sum2 += sum1;
                tlen -= 1;
            }
            sum1 = (sum1 & 0xffff) + (sum1 >> 16);
            sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        }
        if data.len() % 2 == 1 {
            sum1 += u32::from(data[at]) << 8;
            sum2 += sum1;
            sum1 = (sum1 & 0xffff) + (sum1 >> 16);
            sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        (sum2 << 16) | sum1
    }

    #[test]
    fn fletcher32_matches_hdf5s_loop() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let lens = [
            0usize,
            1,
            2,
            3,
            359 * 2,
            720,
            721,
            722,
            1440,
            4097,
            65_536,
            100_001,
        ];
        for &len in &lens {
            let random: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let patterns: [Vec<u8>; 5] = [
                random,
                vec![0xff; len],
                vec![0; len],
                // Residue 0 mod 65535 in the first sum: one word 0xffff.
                (0..len).map(|i| if i < 2 { 0xff } else { 0 }).collect(),
                (0..len).map(|i| (i % 251) as u8).collect(),
            ];
            for data in patterns {
                assert_eq!(
                    fletcher32(&data),
                    hdf5_fletcher32(&data),
                    "len {len} {:?}",
                    &data[..len.min(4)]
                );
                assert_eq!(
                    fletcher32_blocks(&data),
                    hdf5_fletcher32(&data),
                    "len {len}"
                );
            }
        }
        // Sparse words: mostly zero, a few of every value.
        for _ in 0..2000 {
            let len = (next() % 3000) as usize;
            let mut data = vec![0u8; len];
            for _ in 0..(next() % 5) {
                if len > 0 {
                    let i = (next() as usize) % len;
                    data[i] = next() as u8;
                }
            }
            assert_eq!(fletcher32(&data), hdf5_fletcher32(&data), "len {len}");
            assert_eq!(
                fletcher32_blocks(&data),
                hdf5_fletcher32(&data),
                "len {len}"
            );
        }
        assert_eq!(fletcher32_reversed(0x1234_5678), 0x3412_7856);
    }

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
