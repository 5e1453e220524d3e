//! UUIDs: `uuid::Uuid` (SPEC.md section 4.7), an adapter on the dense kind.
//!
//! Layout on disk (the dense layout, 3.2, under codec `h5vec.UuidCodec`):
//! ```text
//! <field>/values    UInt8 (Z, 16): the UUID's 16 bytes in RFC 9562 order
//!                   (`Uuid::as_bytes`, Python's `uuid.UUID(bytes=...)`);
//!                   dimensions = [16], encoded type `UInt8`
//! ```
//! As a list element the bytes are the list's `VALUES` dataset, (n, 16).
//!
//! `typed` is the Rust type's codec (feature `uuid`), `arrow` the untyped
//! side (feature `arrow`; Arrow's `FixedSizeBinary(16)` with the
//! `arrow.uuid` extension), which reads and writes UUID columns without the
//! `uuid` crate.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;
#[cfg(feature = "uuid")]
mod typed;
