//! The `scalar` kind's Arrow writer (none yet: see `crate::arrow::write`).
