//! The `nullable` kind's untyped side (feature `arrow`, SPEC.md section 11):
//! `read`, its Arrow reader; `write`, what the Arrow writer does with it.

pub(crate) mod read;
pub(crate) mod write;
