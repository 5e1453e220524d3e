//! Which datasets h5vec compresses and decompresses itself: [`Pipeline`],
//! the filter pipeline of a chunked dataset (its chunk shape, shuffle,
//! deflate or Blosc, Fletcher32), read from the dataset's creation property
//! list by [`Pipeline::detect`], and the filter mask bits of its chunks.
//! Everything else takes HDF5's own path.

use std::ffi::c_uint;

use hdf5::Dataset;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5z::{H5Z_FILTER_DEFLATE, H5Z_FILTER_SHUFFLE};

/// HDF5's id of the Blosc filter.
const BLOSC_FILTER: i32 = 32001;

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

impl Pipeline {
    /// Detects a pipeline h5vec can run for `ds` accessed through memory
    /// type `mem_type` (which must equal the file type byte for byte).
    pub(crate) fn detect(ds: &Dataset, mem_type: hid_t) -> Option<Pipeline> {
        if !enabled() || cfg!(target_endian = "big") {
            return None;
        }
        Self::from_layout(crate::raw::dataset_layout(ds, mem_type)?)
    }

    /// [`Pipeline::detect`] on what HDF5 says of the dataset.
    fn from_layout(layout: crate::raw::Layout) -> Option<Pipeline> {
        let mut filters = layout.filters;
        if filters.len() > 3 {
            return None;
        }
        // Fletcher32 is h5vec's only when it comes last.
        let checksum = filters.last().is_some_and(|f| f.id == FLETCHER32_FILTER);
        if checksum {
            filters.pop();
        }
        let nc = filters.len();
        let mut shuffle = false;
        let mut level = None;
        let mut codec = Codec::Deflate;
        // Blosc's own record of the chunk's size, checked below.
        let mut blosc_bytes = None;
        for (i, f) in filters.iter().enumerate() {
            let (nelm, cd) = (f.nelm, f.cd);
            match f.id {
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
        // Only plain fixed-size data: no variable-length strings or
        // sequences (their file bytes are heap references, not values).
        let elem = layout.elem;
        if !layout.plain_and_same || elem == 0 {
            return None;
        }
        let dims = &layout.chunk;
        let mut row_bytes = elem;
        for &d in &dims[1..] {
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

    /// Whether whole-vector loads go through
    /// [`ReadAhead`](super::prefetch::ReadAhead): every filtered pipeline
    /// (for Fletcher32 alone, [`Codec::Plain`], only to keep the chunk a
    /// partial read verified for the next read: nothing is decompressed
    /// ahead).
    pub(crate) fn reads_ahead(&self) -> bool {
        self.level.is_some()
    }

    pub(super) fn chunk_bytes(&self) -> usize {
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

    /// The filter mask bit of the Fletcher32 filter (the last one).
    pub(super) fn checksum_bit(&self) -> c_uint {
        let before = match self.codec {
            Codec::Plain => 0,
            Codec::Blosc { .. } => 1,
            Codec::Deflate => 1 + u32::from(self.shuffle),
        };
        1 << before
    }
}
