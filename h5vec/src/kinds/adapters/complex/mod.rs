//! Complex numbers: `num_complex::Complex<f32>` and `Complex<f64>` (feature
//! `num-complex`; SPEC.md section 4.8).
//!
//! Layout on disk (the scalar layout, 3.1):
//! ```text
//! <field>/values    compound {r: float32, i: float32} (Z,)   encoded type `ComplexF32`
//!                   compound {r: float64, i: float64} (Z,)   encoded type `ComplexF64`
//! ```
//! the compound h5py reads as numpy `complex64` / `complex128` (member `r`
//! at offset 0, `i` right after it, little-endian IEEE floats). Every bit
//! of both parts is kept (NaN payloads included). As an array element or a
//! list element it is a leaf number like `f64`.
//!
//! `typed` is the Rust types' codec (feature `num-complex`), `arrow` the
//! parts of the untyped side (feature `arrow`; Arrow's `Struct { r, i }`)
//! that are the adapter's own.

use std::sync::OnceLock;

use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t};

use crate::raw::{Pod, TypeInfo};

/// The compound `{r, i}` of two `part` floats of `size` bytes, made once
/// (HDF5 owns it for the process's lifetime; a failure gives an invalid id,
/// which every HDF5 call using it reports).
#[cfg_attr(
    not(feature = "arrow"),
    allow(
        dead_code,
        reason = "read by crate::arrow; the typed impls use the same layout"
    )
)]
fn compound(cell: &'static OnceLock<hid_t>, part: fn() -> hid_t, size: usize) -> hid_t {
    *cell.get_or_init(|| crate::raw::compound::pair_compound(c"r", c"i", part(), size))
}

/// Whether `t` is a compound of exactly the members `r` and `i`, IEEE
/// floats of `size` bytes (HDF5 converts members by name).
#[cfg_attr(
    not(feature = "arrow"),
    allow(
        dead_code,
        reason = "read by crate::arrow; the typed impls use the same layout"
    )
)]
fn is_complex(t: &TypeInfo, size: usize) -> bool {
    t.class == H5T_class_t::H5T_COMPOUND
        && t.members.len() == 2
        && t.members
            .iter()
            .zip(["r", "i"])
            .all(|((n, m), want)| n == want && m.class == H5T_class_t::H5T_FLOAT && m.size == size)
}

/// One stored complex number: the compound `{r, i}` (always available:
/// the untyped reader, `crate::arrow`, reads complex columns without the
/// feature).
#[cfg_attr(
    not(feature = "arrow"),
    allow(
        dead_code,
        reason = "read by crate::arrow; the typed impls use the same layout"
    )
)]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct ReIm<T> {
    pub(crate) r: T,
    pub(crate) i: T,
}

macro_rules! complex_pod {
    ($t:ty, $size:literal, $ieee:ident, $enc:literal) => {
        // SAFETY: `#[repr(C)]` two floats of `$size` bytes, no padding,
        // every bit pattern valid; the compound describes exactly that
        // (little-endian: see the `compile_error!` below).
        unsafe impl Pod for $t {
            fn mem_type() -> hid_t {
                static T: OnceLock<hid_t> = OnceLock::new();
                compound(&T, || *h5t::$ieee, $size)
            }
            fn file_type() -> hid_t {
                Self::mem_type()
            }
            const ENCODED: &'static str = $enc;
            fn accepts(t: &TypeInfo) -> bool {
                is_complex(t, $size)
            }
        }
    };
}
complex_pod!(ReIm<f32>, 4, H5T_IEEE_F32LE, "ComplexF32");
complex_pod!(ReIm<f64>, 8, H5T_IEEE_F64LE, "ComplexF64");

#[cfg(feature = "arrow")]
pub(crate) mod arrow;
#[cfg(feature = "num-complex")]
mod typed;

#[cfg(not(target_endian = "little"))]
compile_error!(
    "h5vec stores complex numbers as little-endian compounds and needs a little-endian target"
);
