//! `cargo fuzz run load`: libFuzzer mutates seed files (first byte: which
//! seed of h5vec-fuzz's targets) and loads them through every entry point.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| h5vec_fuzz::fuzz_one(data));
