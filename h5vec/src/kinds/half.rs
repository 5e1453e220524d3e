//! Half floats: `half::f16` (feature `half`; SPEC.md section 4.8).
//!
//! Layout on disk (the scalar layout, 3.1):
//! ```text
//! <field>/values    H5T_IEEE_F16LE (Z,), numpy float16; encoded type `Float16`
//! ```
//! Every bit pattern is kept (NaN payloads, infinities, subnormals). As an
//! array element or a list element it is a leaf number like `f32`.

use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::H5T_class_t;

use crate::codec::H5Vector;
use crate::kinds::list::{LeafItem, ListItem};
use crate::kinds::scalar::{Scalar, ScalarCodec};
use crate::raw::{Pod, TypeInfo};
use crate::schema::ids;

// SAFETY: `f16` is a transparent 16-bit IEEE half float: no padding, every
// bit pattern valid; H5T_IEEE_F16LE describes it on little-endian machines
// (the only ones h5vec builds for the type: see the `compile_error!` below).
unsafe impl Pod for half::f16 {
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

#[cfg(not(target_endian = "little"))]
compile_error!(
    "h5vec's `half` feature stores f16 as H5T_IEEE_F16LE and needs a little-endian target"
);

impl Scalar for half::f16 {
    type Raw = half::f16;
    const CODEC: &'static str = ids::IDENTITY;
    #[inline]
    fn to_raw(&self) -> half::f16 {
        *self
    }
    #[inline]
    fn from_raw(raw: half::f16) -> Option<half::f16> {
        Some(raw)
    }
    fn placeholder() -> half::f16 {
        half::f16::ZERO
    }
}

impl H5Vector for half::f16 {
    type Codec = ScalarCodec<half::f16>;
}

impl ListItem for half::f16 {
    type Item = LeafItem<half::f16>;
}

crate::__dense_leaf!(half::f16);
