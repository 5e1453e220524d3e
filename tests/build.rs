//! Links every test binary of this package with `-Wl,--wrap=H5CX_push`, so
//! each HDF5 API entry goes through h5vec's lock audit first
//! (`__wrap_H5CX_push` in ../h5vec/src/lock_audit.rs, compiled in by the
//! `lock-audit` feature this package enables on h5vec). `rustc-link-arg-tests`
//! reaches only this package's own test targets, which is why the flag is
//! emitted here as well as in h5vec/build.rs (h5vec's unit tests).
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    // GNU ld and lld know `--wrap`; elsewhere the audit does nothing.
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        println!("cargo::rustc-link-arg-tests=-Wl,--wrap=H5CX_push");
    }
}
