//! `num_complex::Complex<f32>` and `Complex<f64>` as a vector element,
//! field, array element or list element: a leaf number like `f64`, on the
//! scalar layout (layout in `mod.rs`).

use num_complex::Complex;

use super::*;
use crate::codec::H5Vector;
use crate::kinds::list::{LeafItem, ListItem};
use crate::kinds::scalar::{Scalar, ScalarCodec};
use crate::schema::ids;

macro_rules! complex {
    ($f:ty, $size:literal, $ieee:ident, $enc:literal) => {
        // `Complex<T>` is `#[repr(C)] { re: T, im: T }`: the layout of `ReIm<T>`.
        complex_pod!(Complex<$f>, $size, $ieee, $enc);

        impl Scalar for Complex<$f> {
            type Raw = Complex<$f>;
            const CODEC: &'static str = ids::IDENTITY;
            #[inline]
            fn to_raw(&self) -> Complex<$f> {
                *self
            }
            #[inline]
            fn from_raw(raw: Complex<$f>) -> Option<Complex<$f>> {
                Some(raw)
            }
            fn placeholder() -> Complex<$f> {
                Complex::new(0.0, 0.0)
            }
        }

        impl H5Vector for Complex<$f> {
            type Codec = ScalarCodec<Complex<$f>>;
        }

        impl ListItem for Complex<$f> {
            type Item = LeafItem<Complex<$f>>;
        }

        crate::__dense_leaf!(Complex<$f>);
    };
}

complex!(f32, 4, H5T_IEEE_F32LE, "ComplexF32");
complex!(f64, 8, H5T_IEEE_F64LE, "ComplexF64");
