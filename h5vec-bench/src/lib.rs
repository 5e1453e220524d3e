//! Benchmarks of h5vec against hand-written hdf5-metno code.
//!
//! * [`data`]: the workload types (W1 `Measurement`, W2 `Event`) and a
//!   deterministic generator.
//! * [`baseline`]: the hand-written columnar writer and reader.
//! * [`harness`]: timing, heap trimming, peak memory and statistics.
//!
//! The `compare` binary runs them side by side; see its module docs.

#![warn(missing_docs)]

pub mod baseline;
pub mod data;
pub mod harness;
