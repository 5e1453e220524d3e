//! HEP001 `CHUNK_MINMAX` entries: the compound types of the index dataset
//! (in the file: `{min, max}` of the source's own type, then
//! `nan_count`, `fill_count`, `n` as uint64, packed as h5py packs a numpy
//! structured dtype) and of memory ([`Entry`]: 8-byte slots for `min` and
//! `max` holding an i64, u64, f64 or a bool byte, [`Bound`]).

use std::ffi::CString;

use hdf5::Datatype;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t};

use super::bounds::{Bound, BoundKind, Summary};
use super::ffi::{check, sync};
use super::types::{Pod, TypeInfo};
use crate::error::{At, Context, Result};

/// One `CHUNK_MINMAX` entry in memory.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct Entry {
    min: [u8; 8],
    max: [u8; 8],
    pub(crate) nan_count: u64,
    pub(crate) fill_count: u64,
    pub(crate) n: u64,
}

impl Entry {
    /// The entry of a chunk summarized by `s` (placeholders 0 when no
    /// value is ordered).
    pub(crate) fn new(s: &Summary, kind: BoundKind) -> Entry {
        let zero = match kind {
            BoundKind::I => Bound::I(0),
            BoundKind::U => Bound::U(0),
            BoundKind::F => Bound::F(0.0),
            BoundKind::B => Bound::B(0),
        };
        let (lo, hi) = s.bounds.unwrap_or((zero, zero));
        Entry {
            min: lo.slot(),
            max: hi.slot(),
            nan_count: s.nan,
            fill_count: s.fill,
            n: s.n,
        }
    }

    /// `min` and `max`, read as `kind`.
    pub(crate) fn bounds(&self, kind: BoundKind) -> (Bound, Bound) {
        (kind.bound(self.min), kind.bound(self.max))
    }
}

// SAFETY: `#[repr(C)]` of two 8-byte arrays and three u64: 40 bytes, no
// padding, every bit pattern valid. It is only read and written with the
// memory types of [`entry_type`], checked by `MemType::checked`;
// `mem_type` and `file_type` describe the i64 form exactly.
unsafe impl Pod for Entry {
    fn mem_type() -> hid_t {
        *ENTRY_I64
    }
    fn file_type() -> hid_t {
        *ENTRY_I64
    }
    const ENCODED: &'static str = "CHUNK_MINMAX";
    fn accepts(t: &TypeInfo) -> bool {
        t.class == H5T_class_t::H5T_COMPOUND
    }
}

/// The i64 memory entry type, made once for the process (never closed).
static ENTRY_I64: std::sync::LazyLock<hid_t> = std::sync::LazyLock::new(|| {
    entry_type(BoundKind::I.native(), false, "$")
        .map(|t| {
            let id = t.id();
            std::mem::forget(t);
            id
        })
        .unwrap_or(-1)
});

/// The entry compound over element type `elem`: packed (the file's: min,
/// max, then the counts right after) or [`Entry`]'s memory layout.
pub(crate) fn entry_type(elem: hid_t, packed: bool, path: impl At) -> Result<Datatype> {
    let names = ["min", "max", "nan_count", "fill_count", "n"]
        .map(|n| CString::new(n).expect("no NUL in the field names"));
    sync(|| {
        // SAFETY: `elem` is a valid datatype id (the caller's); only its
        // size is read.
        let s = unsafe { h5t::H5Tget_size(elem) };
        let (slot, total) = if packed { (s, 2 * s + 24) } else { (8, 40) };
        // SAFETY: a new compound type of `total` bytes; each member fits
        // inside it (offsets 0, slot, 2 slot, + 8, + 16; sizes s <= slot
        // and 8); the names are NUL-terminated; the type is owned by the
        // `Datatype` before any insert can fail.
        unsafe {
            let t = check(path, h5t::H5Tcreate(H5T_class_t::H5T_COMPOUND, total))?;
            let dt = hdf5::from_id::<Datatype>(t).at(path)?;
            let u64t = if packed {
                *h5t::H5T_STD_U64LE
            } else {
                *h5t::H5T_NATIVE_UINT64
            };
            let members = [
                (0, elem),
                (slot, elem),
                (2 * slot, u64t),
                (2 * slot + 8, u64t),
                (2 * slot + 16, u64t),
            ];
            for ((off, ty), name) in members.iter().zip(&names) {
                check(path, h5t::H5Tinsert(t, name.as_ptr(), *off, *ty))?;
            }
            Ok(dt)
        }
    })
}

/// The memory entry type for bounds of `kind`.
pub(crate) fn memory_entry_type(kind: BoundKind, path: impl At) -> Result<Datatype> {
    entry_type(kind.native(), false, path)
}
