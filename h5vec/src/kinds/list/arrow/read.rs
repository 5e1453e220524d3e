//! The `list` kind's Arrow reader (none yet: see `crate::arrow::read`).
