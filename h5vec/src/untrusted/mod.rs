//! Untrusted files, checked in a child process first: [`open_untrusted`],
//! [`check_isolated`], [`Isolation`] (Unix only).
//!
//! HDF5 itself crashes, hangs or allocates without bound on some damaged
//! files (tests/fuzz/KNOWN.md lists the ones known), before h5vec's checks
//! can say anything. No HDF5 reader can catch that in its own process, so
//! the check runs in another: the calling thread forks while it holds
//! hdf5-metno's global lock (no other thread is then inside HDF5, and the
//! child's copy of the reentrant lock belongs to the child's one thread, so
//! the child calls HDF5 as usual), the child caps its address space
//! (`RLIMIT_AS`), stays off h5vec's worker threads (they do not exist in
//! the child: [`in_child`]), reads every container of the file row by row,
//! writes what it found to a pipe and ends with `_exit` (no atexit handler,
//! no HDF5 close: the parent's open files are not flushed twice). The
//! parent waits for the report for at most the time limit, kills the child
//! past it, and reaps it: a crash becomes an [`Error`] naming the signal,
//! a hang one naming the limit; nothing of the child stays behind (no
//! zombie, no descriptor).

mod child;
mod isolation;
mod report;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::inspect::ContainerInfo;

use child::{check_here, child_main};
pub use isolation::{Fault, Isolation};
use report::{decode, file_place, Found};

/// A directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Most bytes of a child's report read (a file of 2^20 containers with
/// long problems stays below it); a longer report is an error.
const REPORT_KEPT: usize = 64 << 20;

/// Bytes of the child's stderr kept for the error message of a crash.
const STDERR_KEPT: usize = 4096;

/// Checks the file `path` completely in a child process with the default
/// budgets ([`Isolation::default`]), and only if every container in it
/// reads without error opens it, read-only, in this process (as
/// [`open_file`](crate::open_file) does).
///
/// The check reads every row of every vector, h5col table and VLS array
/// the file holds with the checks of a load (with the feature `arrow`,
/// through `h5vec::arrow::batches`; without it, what
/// [`find_containers`](crate::find_containers) checks, and every dataset's
/// rows through HDF5). A crash, a hang past the time limit or an allocation
/// past the memory budget in HDF5 or h5vec becomes an error naming the
/// file, and the signal for a crash, instead of ending this process. The
/// first container's problem is the error otherwise, as a load would give
/// it.
///
/// Unix only. The check costs a fork and a complete read of the file:
/// about what one untyped read of everything costs. The file is checked,
/// then opened: it must not change in between (check a file only this
/// program writes to, e.g. an upload it has just stored).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("upload.h5");
/// h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1.5f64, 2.5])?;
/// let file = h5vec::open_untrusted(&path)?;
/// assert_eq!(h5vec::load_vector::<f64>(&file, "xs")?, [1.5, 2.5]);
///
/// std::fs::write(dir.path().join("text.h5"), "not HDF5").unwrap();
/// assert!(h5vec::open_untrusted(dir.path().join("text.h5")).is_err());
/// # Ok(()) }
/// ```
pub fn open_untrusted(path: impl AsRef<Path>) -> Result<hdf5::File> {
    open_untrusted_with(path, &Isolation::default())
}

/// [`open_untrusted`] with the budgets (and scope) of `isolation`.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("upload.h5");
/// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[7u16])?;
/// let isolation = h5vec::Isolation::default().time_limit(std::time::Duration::from_secs(5));
/// let file = h5vec::open_untrusted_with(&path, &isolation)?;
/// assert_eq!(h5vec::load_vector::<u16>(&file, "xs")?, [7]);
/// # Ok(()) }
/// ```
pub fn open_untrusted_with(path: impl AsRef<Path>, isolation: &Isolation) -> Result<hdf5::File> {
    let path = path.as_ref();
    let found = run(path, isolation)?;
    if let Some(e) = found.first {
        return Err(e);
    }
    crate::open_file(path)
}

/// Checks the file `path` completely in a child process within the budgets
/// of `isolation`, as [`open_untrusted`] does, and returns every container
/// found, as [`find_containers`](crate::find_containers) lists them, each
/// with the first error of reading all its rows as its `problem`.
///
/// An error means the check could not be finished: the file is not an
/// HDF5 file or cannot be opened, the child was killed by a signal (named
/// in the error: `SIGSEGV`, `SIGFPE`; `SIGABRT` most likely from the
/// memory budget), or it ran past the time limit. Errors of the child
/// process itself (a signal, the time limit) are [`ErrorKind::Invalid`](crate::ErrorKind::Invalid) at
/// the file (path `$`, location the file's path), and their message starts
/// with `isolated check`; others are the check's own, as a read in this
/// process would give them.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f.h5");
/// let file = h5vec::create_file(&path)?;
/// h5vec::save_vector(&file, "xs", &[1u32, 2, 3])?;
/// h5vec::vls::save_strings(&file, "names", &[Some("a".to_string())])?;
/// drop(file);
/// let found = h5vec::check_isolated(&path, &h5vec::Isolation::default())?;
/// let listed: Vec<_> = found.iter().map(|c| (c.path.as_str(), c.rows, c.problem.is_none())).collect();
/// assert_eq!(listed, [("/names", 1, true), ("/xs", 3, true)]);
/// # Ok(()) }
/// ```
pub fn check_isolated(path: impl AsRef<Path>, isolation: &Isolation) -> Result<Vec<ContainerInfo>> {
    run(path.as_ref(), isolation).map(|f| f.containers)
}

/// The same check as [`check_isolated`] in this process: for debugging
/// (`h5vec validate --in-process`); a crash here ends the caller. Not an API.
#[doc(hidden)]
pub fn __check_in_process(
    path: impl AsRef<Path>,
    only: Option<&str>,
) -> Result<Vec<ContainerInfo>> {
    check_here(path.as_ref(), only).map(|f| f.containers)
}

/// The check, in a child process.
fn run(path: &Path, isolation: &Isolation) -> Result<Found> {
    use crate::raw::child::{self, Ended, Forked};
    use std::os::fd::AsRawFd;

    let at = file_place(path);
    let io = |what: &str, e: std::io::Error| {
        Error::invalid(&at, format!("isolated check: cannot {what}: {e}"))
    };
    let budget = isolation.memory_limit;
    let limit =
        mapped_now().map(|(size, data)| (size.saturating_add(budget), data.saturating_add(budget)));
    let path_buf: PathBuf = path.to_owned();
    // Where the child copies the file to append to it (removed here after
    // the child ends, whatever it did).
    let scratch = if isolation.appends {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("h5vec-isolated-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| io("make a scratch directory", e))?;
        Some(Scratch(dir))
    } else {
        None
    };
    let scratch_dir = scratch.as_ref().map(|s| s.0.clone());
    // Fork holding hdf5-metno's lock: no other thread is inside HDF5 (its
    // state is consistent in the child), and the child's copy of the
    // reentrant lock is held by its own (only) thread. The pipes are made
    // and their write ends closed here under the same lock, so the child
    // of a check running on another thread never holds a copy of them
    // (this parent would then wait for that child's end too).
    let forked = crate::raw::sync(|| {
        let (report_r, report_w) = child::pipe().map_err(|e| io("make a pipe", e))?;
        let (stderr_r, stderr_w) = child::pipe().map_err(|e| io("make a pipe", e))?;
        // SAFETY: the lock other threads could hold in HDF5 is held here;
        // the child marks itself (`forked::mark_child`) before anything reaches h5vec's pool,
        // and ends in `child_main` with `_exit`, never returning.
        match unsafe { child::fork() } {
            Ok(Forked::Child) => child_main(
                &path_buf,
                isolation,
                scratch_dir.as_deref(),
                limit,
                &report_w,
                &stderr_w,
            ),
            Ok(Forked::Parent(pid)) => Ok((pid, report_r, stderr_r)),
            Err(e) => Err(io("fork", e)),
        }
    });
    let (pid, report_r, stderr_r) = forked?;
    // Read both pipes until the child closes them (it ends) or time runs out.
    let deadline = Instant::now() + isolation.time_limit;
    let mut report = Vec::new();
    let mut stderr = Vec::new();
    let mut open = [true, true];
    let mut timed_out = false;
    let mut failure = None;
    while open.iter().any(|&o| o) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            timed_out = true;
            break;
        }
        let fds: Vec<i32> = [report_r.as_raw_fd(), stderr_r.as_raw_fd()]
            .into_iter()
            .zip(open)
            .map(|(fd, o)| if o { fd } else { -1 })
            .collect();
        let ready = match child::wait_readable(&fds, left) {
            Ok(r) => r,
            Err(e) => {
                failure = Some(io("wait for the child", e));
                break;
            }
        };
        for (i, r) in ready.into_iter().enumerate() {
            if !(r && open[i]) {
                continue;
            }
            let (buf, max) = if i == 0 {
                (&mut report, REPORT_KEPT)
            } else {
                (&mut stderr, STDERR_KEPT)
            };
            match child::read_some(fds[i], buf, max) {
                Ok(0) => open[i] = false,
                Ok(_) => {}
                Err(e) => {
                    failure = Some(io("read the child's report", e));
                    open[i] = false;
                }
            }
        }
    }
    if timed_out || failure.is_some() {
        child::kill(pid);
    }
    let ended = child::wait(pid).map_err(|e| io("wait for the child", e))?;
    if let Some(e) = failure {
        return Err(e);
    }
    if timed_out {
        return Err(Error::invalid(
            &at,
            format!(
                "isolated check: still running after the time limit of {:?}, killed",
                isolation.time_limit
            ),
        ));
    }
    let said = String::from_utf8_lossy(&stderr);
    let said = said.trim();
    let said = if said.is_empty() {
        String::new()
    } else {
        // The first line: Rust's `memory allocation of N bytes failed`, a
        // panic's message; a backtrace may follow.
        format!(
            " (it printed: {})",
            said.lines().next().unwrap_or(said).trim()
        )
    };
    if report.len() >= REPORT_KEPT {
        return Err(Error::invalid(
            &at,
            format!("isolated check: the child's report is longer than {REPORT_KEPT} bytes"),
        ));
    }
    match ended {
        Ended::Exited(0) => decode(&report, path),
        // SIGCHLD ignored: a whole report is the child's last act.
        Ended::Unknown if !report.is_empty() => decode(&report, path),
        Ended::Unknown => Err(Error::invalid(
            &at,
            format!("isolated check: the child ended without a report{said}"),
        )),
        Ended::Exited(code) => Err(Error::invalid(
            &at,
            format!("isolated check: the child exited with status {code}{said}"),
        )),
        Ended::Signaled(sig) => {
            let name = child::signal_name(sig);
            let cause = match name.as_str() {
                "SIGABRT" => match limit {
                    Some(_) => format!(
                        "an abort, most likely an allocation past the memory budget \
                         ({budget} bytes)"
                    ),
                    None => "an abort".to_owned(),
                },
                "SIGSEGV" | "SIGBUS" => "an invalid memory access in HDF5 or h5vec".to_owned(),
                "SIGFPE" => "an arithmetic fault (a division by zero) in HDF5 or h5vec".to_owned(),
                _ => "a signal".to_owned(),
            };
            Err(Error::invalid(
                &at,
                format!("isolated check killed by {name}: {cause}{said}"),
            ))
        }
    }
}

/// What this process maps now, in bytes: its address space (`VmSize`)
/// and its private writable memory (`VmData`, what `RLIMIT_DATA` counts),
/// or `None` where `/proc/self/status` does not say (no budget is set then).
fn mapped_now() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..]
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()?;
        kb.checked_mul(1024)
    };
    Some((field("VmSize:")?, field("VmData:")?))
}
