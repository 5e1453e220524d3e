//! Timing method.
//!
//! * **Cold memory for every phase.** On this kind of VM a fresh 4 KiB page
//!   fault costs ~2 µs, so whether a phase gets recycled, already-faulted
//!   heap memory or fresh pages changes results by 2-3x. The `compare`
//!   binary therefore runs with `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072`
//!   (it re-executes itself with it when the variable is missing; glibc
//!   reads tunables only at start-up). A fixed threshold also disables
//!   glibc's dynamic threshold, so every buffer >= 128 KiB is a fresh `mmap`
//!   and is unmapped when freed. Between phases, untimed, [`trim_heap`]
//!   calls `H5garbage_collect` (HDF5's free lists) and `malloc_trim(0)`,
//!   so no phase inherits faulted memory from, or pays for the frees of,
//!   the previous one.
//! * **Peak memory**: the RSS high-water mark is reset through
//!   `/proc/self/clear_refs` before a phase; the phase's peak is how far
//!   `VmHWM` rose above the starting `VmRSS`.
//! * **Statistics**: median, min and max over interleaved passes.

use std::time::Instant;

/// Environment setting the benchmark needs (see module docs).
pub const MALLOC_TUNABLE: &str = "glibc.malloc.mmap_threshold=131072";

/// Re-executes the current program with [`MALLOC_TUNABLE`] in
/// `GLIBC_TUNABLES` unless it is already there. Returns only if it is.
pub fn ensure_malloc_tunable() {
    let cur = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if cur.contains("glibc.malloc.mmap_threshold") {
        return;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let val = if cur.is_empty() {
            MALLOC_TUNABLE.to_string()
        } else {
            format!("{cur}:{MALLOC_TUNABLE}")
        };
        let mut args = std::env::args_os();
        let exe = std::env::current_exe().expect("current_exe");
        args.next();
        let err = std::process::Command::new(exe)
            .args(args)
            .env("GLIBC_TUNABLES", val)
            .exec();
        eprintln!("warning: could not re-exec with GLIBC_TUNABLES ({err}); continuing without it");
    }
}

/// Returns freed memory to the OS: HDF5's free lists, then glibc's heap.
pub fn trim_heap() {
    // SAFETY: no arguments; HDF5 serialises its own API calls.
    unsafe {
        hdf5_sys::h5::H5garbage_collect();
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: plain glibc call without pointers.
        unsafe {
            malloc_trim(0);
        }
    }
}

fn status_bytes(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// CPU time of the whole process (all threads), in seconds. On a loaded
/// machine it is less disturbed by other processes than wall time.
pub fn cpu_time() -> f64 {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        #[repr(C)]
        struct Timespec {
            sec: i64,
            nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clk: i32, ts: *mut Timespec) -> i32;
        }
        const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
        let mut ts = Timespec { sec: 0, nsec: 0 };
        // SAFETY: `ts` is a valid out-pointer of the layout of `struct timespec` on 64-bit Linux.
        if unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0 {
            return ts.sec as f64 + ts.nsec as f64 * 1e-9;
        }
    }
    f64::NAN
}

/// One timed phase.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Wall time in seconds.
    pub secs: f64,
    /// Process CPU time (user + system) in seconds.
    pub cpu: f64,
    /// Peak RSS growth during the phase, in bytes (Linux).
    pub peak: Option<u64>,
}

/// Runs `f` as one timed phase.
pub fn measure<R>(f: impl FnOnce() -> R) -> (Sample, R) {
    let rss0 = std::fs::write("/proc/self/clear_refs", "5")
        .ok()
        .and_then(|_| status_bytes("VmRSS:"));
    let c = cpu_time();
    let t = Instant::now();
    let r = std::hint::black_box(f());
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_time() - c;
    let peak = rss0.and_then(|r0| Some(status_bytes("VmHWM:")?.saturating_sub(r0)));
    (Sample { secs, cpu, peak }, r)
}

/// Median (mean of the middle two for an even count), min and max.
pub fn stats(xs: &[f64]) -> (f64, f64, f64) {
    assert!(!xs.is_empty(), "no samples");
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (med, v[0], v[n - 1])
}

/// The 1-minute load average (Linux), for the report.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// The command-line arguments, all parsed as numbers (for the small
/// benchmark binaries whose arguments are counts).
pub fn numeric_args() -> Result<Vec<usize>, std::num::ParseIntError> {
    std::env::args().skip(1).map(|s| s.parse()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_median() {
        assert_eq!(stats(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(stats(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
    }
}
