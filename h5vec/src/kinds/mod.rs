//! One module per storage kind; each opens with its layout on disk.
//! `adapters/` holds the Rust types that are not storage kinds but are
//! stored on one (times, instants with offsets, UUIDs, f16, complex
//! numbers, maps) and `mapped`, the machinery they are checked by.

pub(crate) mod adapters;
pub(crate) mod blob;
pub(crate) mod constant;
pub(crate) mod dense;
pub(crate) mod json;
pub(crate) mod list;
pub(crate) mod nullable;
pub(crate) mod record;
pub(crate) mod scalar;
pub(crate) mod string;
pub(crate) mod union;
pub(crate) mod vls;
