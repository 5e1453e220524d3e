//! Compile-fail and compile-pass tests for `#[derive(H5Vector)]`.
//!
//! Each `ui/fail_*.rs` must fail to compile with exactly the
//! diagnostics in the `.stderr` file next to it; each `ui/pass_*.rs`
//! must compile (and run) cleanly. Regenerate the expected output after a
//! deliberate change with `TRYBUILD=overwrite cargo test -p h5vec-derive-ui --test derive_ui`,
//! then read every changed `.stderr`: each must be short and actionable.

#[test]
fn derive_ui() {
    let t = trybuild::TestCases::new();
    // Through `../derive-ui` (this directory): trybuild then names the files
    // `ui/NAME.rs` without line numbers in the expected output, so editing a
    // case does not shift the expected diagnostics of the lines after it.
    t.pass("../derive-ui/ui/pass_*.rs");
    t.compile_fail("../derive-ui/ui/fail_*.rs");
}
