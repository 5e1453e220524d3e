//! The `dense` kind's Arrow writer (none yet: see `crate::arrow::write`).
