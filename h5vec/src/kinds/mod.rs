//! One module per storage kind; each opens with its layout on disk.
//! `adapters/` holds the Rust types that are not storage kinds but are
//! stored on one (times, UUIDs, f16, complex numbers) and `mapped`, the
//! machinery they are checked by; `map` and `offset` are adapters still
//! outside it.

pub(crate) mod adapters;
pub(crate) mod blob;
pub(crate) mod constant;
pub(crate) mod dense;
pub(crate) mod json;
pub(crate) mod list;
pub(crate) mod map;
pub(crate) mod nullable;
#[cfg(any(feature = "chrono", feature = "time"))]
pub(crate) mod offset;
pub(crate) mod record;
pub(crate) mod scalar;
pub(crate) mod string;
pub(crate) mod union;
pub(crate) mod vls;

// `offset.rs` still names these by their paths from before the move.
#[cfg(any(feature = "chrono", feature = "time"))]
pub(crate) use adapters::{mapped, time};
