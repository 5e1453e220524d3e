#![deny(warnings)]

use std::marker::PhantomData;

use h5vec::H5Vector;

// Bounds are inferred per field type: `T: H5Vector` for `value`,
// `[T; N]: H5Vector` for `window`; nothing is required of `U`, which is only
// in a `PhantomData`, and `W` is only needed to be `Default` (skipped).
#[derive(H5Vector)]
struct Tagged<T, U, W, const N: usize>
where
    T: Copy,
{
    value: T,
    window: [T; N],
    marker: PhantomData<U>,
    #[h5vec(skip)]
    cache: W,
}

#[derive(H5Vector)]
struct Pair<A, B>(A, B);

struct NotStorable;

fn assert_h5vector<T: H5Vector>() {}

fn main() {
    assert_h5vector::<Tagged<f64, NotStorable, Vec<u8>, 3>>();
    assert_h5vector::<Tagged<u8, (), (), 0>>();
    assert_h5vector::<Pair<i32, Pair<f32, bool>>>();
}
