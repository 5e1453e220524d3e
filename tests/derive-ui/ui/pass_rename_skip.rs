#![deny(warnings)]

use h5vec::H5Vector;

// A skipped field is not stored, so its name is free for another field.
#[derive(H5Vector)]
struct Sample {
    #[h5vec(skip)]
    x: f64,
    #[h5vec(rename = "x")]
    y: f64,
    // Names are swapped: each stored name is used once.
    #[h5vec(rename = "b")]
    a: i32,
    #[h5vec(rename = "a")]
    b: i32,
}

fn assert_h5vector<T: H5Vector>() {}

fn main() {
    assert_h5vector::<Sample>();
}
