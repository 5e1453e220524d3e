//! Empty: the package exists for its test `derive_ui` (derive_ui.rs).
