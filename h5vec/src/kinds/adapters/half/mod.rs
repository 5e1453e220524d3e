//! Half floats: `half::f16` (feature `half`; SPEC.md section 4.8).
//!
//! Layout on disk (the scalar layout, 3.1):
//! ```text
//! <field>/values    H5T_IEEE_F16LE (Z,), numpy float16; encoded type `Float16`
//! ```
//! Every bit pattern is kept (NaN payloads, infinities, subnormals). As an
//! array element or a list element it is a leaf number like `f32`.
//!
//! [`F16Bits`], the stored bits, is always available: the untyped reader
//! (`crate::arrow`) reads `Float16` columns without the feature.
//!
//! `typed` is the Rust type's codec (feature `half`), `arrow` the parts of
//! the untyped side (feature `arrow`; Arrow's `Float16`) that are the
//! adapter's own.

use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::H5T_class_t;

use crate::raw::{Pod, TypeInfo};

/// The bits of one IEEE half float, as stored.
#[cfg_attr(
    not(feature = "arrow"),
    allow(
        dead_code,
        reason = "read by crate::arrow; the typed impls use the same layout"
    )
)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct F16Bits(pub(crate) u16);

macro_rules! f16_pod {
    ($t:ty) => {
        // SAFETY: 16 bits of an IEEE half float: no padding, every bit
        // pattern valid; H5T_IEEE_F16LE describes them on little-endian
        // machines (the only ones h5vec builds for: see the `compile_error!`).
        unsafe impl Pod for $t {
            fn mem_type() -> hid_t {
                crate::raw::ieee_f16le()
            }
            fn file_type() -> hid_t {
                crate::raw::ieee_f16le()
            }
            const ENCODED: &'static str = "Float16";
            fn accepts(t: &TypeInfo) -> bool {
                t.class == H5T_class_t::H5T_FLOAT && t.size == 2
            }
        }
    };
}
f16_pod!(F16Bits);

#[cfg(not(target_endian = "little"))]
compile_error!("h5vec stores f16 as H5T_IEEE_F16LE and needs a little-endian target");

#[cfg(feature = "arrow")]
pub(crate) mod arrow;
#[cfg(feature = "half")]
mod typed;
