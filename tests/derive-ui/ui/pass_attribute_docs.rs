//! The example in the rustdoc of `#[derive(H5Vector)]`
//! (h5vec-derive/src/lib.rs), which rustdoc cannot build there: keep the
//! two the same.
#![deny(warnings)]
#![allow(dead_code)] // the example's fields are never read

use h5vec::H5Vector;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Meta {
    source: String,
}

#[derive(H5Vector)]
struct Sample {
    #[h5vec(rename = "t", chunk_length = 4096)]
    time: f64,
    #[h5vec(zstd = 3)]
    spectrum: Vec<f32>,
    #[h5vec(blob)]
    meta: Meta,
    #[h5vec(json, deflate = 4)]
    tags: Vec<String>,
    #[h5vec(vls, blosc(compressor = "lz4", level = 5, shuffle = "bit"))]
    label: String,
    #[h5vec(lzf)]
    counts: [u32; 4],
    #[h5vec(no_compression)]
    flag: bool,
    #[h5vec(skip)]
    cache: Option<Vec<u8>>,
}

#[derive(H5Vector, Clone, Copy)]
#[repr(u8)]
enum Level {
    Low,
    High,
}

fn assert_h5vector<T: H5Vector>() {}

fn main() {
    assert_h5vector::<Sample>();
    assert_h5vector::<Level>();
}
