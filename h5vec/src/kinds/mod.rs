//! One module per storage kind; each opens with its layout on disk.

pub(crate) mod blob;
pub(crate) mod constant;
pub(crate) mod dense;
pub(crate) mod json;
pub(crate) mod list;
pub(crate) mod nullable;
pub(crate) mod record;
pub(crate) mod scalar;
pub(crate) mod string;
pub(crate) mod vls;
