//! With the `lock-audit` feature, h5vec's test binaries route every HDF5 API
//! entry through `lock_audit::__wrap_H5CX_push` (see src/lock_audit.rs).
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    // GNU ld and lld know `--wrap`; elsewhere the feature does nothing.
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux && std::env::var_os("CARGO_FEATURE_LOCK_AUDIT").is_some() {
        println!("cargo::rustc-link-arg-tests=-Wl,--wrap=H5CX_push");
    }
}
