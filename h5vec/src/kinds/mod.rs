//! One module per storage kind; each opens with its layout on disk.

pub mod blob;
pub mod constant;
pub mod dense;
pub mod json;
pub mod list;
pub mod nullable;
pub mod record;
pub mod scalar;
pub mod string;
pub mod vls;
