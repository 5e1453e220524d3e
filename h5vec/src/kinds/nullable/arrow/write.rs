//! The `nullable` kind's Arrow writer (none yet: see `crate::arrow::write`).
