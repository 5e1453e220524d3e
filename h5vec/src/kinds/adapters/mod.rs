//! Adapters: Rust types that are not storage kinds of their own but are
//! stored on one (`scalar` or `dense`) under a codec or an encoded type of
//! their own, checked both ways: `mapped` (the [`Mapped`] trait and its
//! codec) is the machinery of those stored as plain numbers under a codec
//! of their own (`time`, `uuid`); `half` and `complex` are leaf numbers of
//! HDF5 types of their own under the identity codec. Each adapter is a
//! folder holding its layout (`mod.rs`), its typed codec (`typed.rs`) and,
//! with feature `arrow`, its untyped side (`arrow.rs`): an
//! [`ArrowAdapter`] listed in [`ARROW_ADAPTERS`], which the Arrow mapping,
//! reader and writer consult instead of naming the adapter (`uuid`, and
//! `time` with one per codec), or, for `half` and `complex`, which Arrow
//! handles as number types (`Float16`, `Struct { r, i }` leaves of the
//! number writers), the functions of their own that `arrow/` calls.
//!
//! A new adapter is its folder plus three one-line registrations:
//! 1. its codec identifier in `schema::ids`;
//! 2. `pub(crate) mod NAME;` below;
//! 3. its [`ArrowAdapter`] in [`ARROW_ADAPTERS`] (`registry.rs`).
//!
//! `offset` (instants with their UTC offset: a record of a `mapped`
//! instant and the offset) and `map` (lists of `{key, value}` records) are
//! single files: their Arrow sides are the record's and the list's, with
//! the Arrow `Map` type in `arrow/` (`mapping`, `read/typed.rs`,
//! `write/typed.rs`).
//!
//! [`Mapped`]: mapped::Mapped

pub(crate) mod complex;
pub(crate) mod half;
pub(crate) mod map;
pub(crate) mod mapped;
#[cfg(any(feature = "chrono", feature = "time"))]
pub(crate) mod offset;
pub(crate) mod time;
pub(crate) mod uuid;

#[cfg(feature = "arrow")]
mod arrow;
#[cfg(feature = "arrow")]
mod registry;
#[cfg(feature = "arrow")]
pub(crate) use arrow::ArrowAdapter;
#[cfg(feature = "arrow")]
pub(crate) use registry::{by_codec, reading, writing, ARROW_ADAPTERS};
