//! The `blob` kind's Arrow reader (none yet: see `crate::arrow::read`).
