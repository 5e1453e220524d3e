//! `half::f16` as a vector element, field, array element or list element:
//! a leaf number like `f32`, on the scalar layout (layout in `mod.rs`).

use super::*;
use crate::codec::H5Vector;
use crate::kinds::list::{LeafItem, ListItem};
use crate::kinds::scalar::{Scalar, ScalarCodec};
use crate::schema::ids;

f16_pod!(half::f16);

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
