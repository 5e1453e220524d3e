//! The `lock-audit` feature, for h5vec's own tests: proves that every HDF5
//! call runs under hdf5-metno's global lock.
//!
//! The bundled HDF5 is not threadsafe: it keeps one global stack of API
//! contexts (`H5CX`), pushed on entry to and popped on exit from every API
//! call, with the nodes on the caller's stack. One call made outside the lock
//! while another thread is inside HDF5 links the two stacks together and
//! leaves the global head pointing into a dead stack frame; a later call then
//! crashes (e.g. in `H5VL_reset_vol_wrapper`). That is rare and far from its
//! cause, so with this feature `build.rs` links h5vec's test binaries with
//! `-Wl,--wrap=H5CX_push` and every API entry lands here first: a call from a
//! thread that does not hold the lock aborts at once with a backtrace naming
//! the caller. h5vec's own tests always run so: h5vec is its own
//! dev-dependency with this feature (h5vec/Cargo.toml). Nothing else links
//! with `--wrap`, so the feature changes nothing outside those tests (and
//! nothing on targets other than Linux).

use std::ffi::c_void;

extern "C" {
    /// HDF5's own `H5CX_push` (the linker's name for it under `--wrap`).
    fn __real_H5CX_push(cnode: *mut c_void) -> i32;
}

/// Checks that the calling thread holds hdf5-metno's lock, then pushes the
/// API context as HDF5 would.
///
/// # Safety
/// Called by HDF5 (through `--wrap`) with HDF5's own argument.
#[no_mangle]
pub unsafe extern "C" fn __wrap_H5CX_push(cnode: *mut c_void) -> i32 {
    if !hdf5_sys::LOCK.is_owned_by_current_thread() {
        use std::io::Write;
        let thread = std::thread::current();
        // Straight to stderr: the test harness's capture of `eprintln!` is
        // lost on abort.
        let _ = writeln!(
            std::io::stderr(),
            "h5vec lock-audit: HDF5 API call outside hdf5-metno's lock on thread {:?}\n{}",
            thread.name().unwrap_or("<unnamed>"),
            std::backtrace::Backtrace::force_capture()
        );
        std::process::abort();
    }
    // SAFETY: forwards HDF5's own call unchanged.
    unsafe { __real_H5CX_push(cnode) }
}
