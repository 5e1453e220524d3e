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

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Place, Result};
use crate::inspect::{ContainerInfo, ContainerKind};

/// Rows per batch of the check's reads.
const BATCH_ROWS: usize = 1 << 16;

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

/// The budgets of an isolated check ([`check_isolated`],
/// [`open_untrusted_with`]): how long the child may take, and how much
/// memory it may map beyond what the calling process maps when it forks.
///
/// The default is 60 seconds and 2 GiB.
///
/// ```
/// use std::time::Duration;
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("upload.h5");
/// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u32, 2, 3])?;
/// let budget = h5vec::Isolation::default()
///     .time_limit(Duration::from_secs(10))
///     .memory_limit(512 << 20);
/// let file = h5vec::open_untrusted_with(&path, &budget)?;
/// assert_eq!(h5vec::load_vector::<u32>(&file, "xs")?, [1, 2, 3]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Isolation {
    time_limit: Duration,
    memory_limit: u64,
    only: Option<String>,
    appends: bool,
    fault: Option<Fault>,
}

impl Default for Isolation {
    fn default() -> Self {
        Isolation {
            time_limit: Duration::from_secs(60),
            memory_limit: 2 << 30,
            only: None,
            appends: false,
            fault: None,
        }
    }
}

/// A fault the child commits instead of the check: how the tests prove
/// that each way a check can end becomes an error. Not an API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A segmentation fault.
    Segv,
    /// `abort()`.
    Abort,
    /// Never ends.
    Hang,
    /// Allocates past any budget.
    Allocate,
}

impl Isolation {
    /// The time the check may take (default 60 s); past it the child is
    /// killed and the check is an error saying so.
    ///
    /// ```
    /// let quick = h5vec::Isolation::default().time_limit(std::time::Duration::from_secs(5));
    /// # let _ = quick;
    /// ```
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// Bytes the child may map beyond what the calling process maps when
    /// the check starts (default 2 GiB; `RLIMIT_AS`, so reserved address
    /// space counts, not only memory in use). An allocation past it fails:
    /// in HDF5 an error, in Rust an abort, which the check reports as
    /// `SIGABRT`, naming the budget.
    ///
    /// ```
    /// let small = h5vec::Isolation::default().memory_limit(256 << 20);
    /// # let _ = small;
    /// ```
    pub fn memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = bytes;
        self
    }

    /// Checks only the container (vector, h5col table or VLS array) at
    /// HDF5 path `path`, or the containers below the group there, instead
    /// of every one in the file. A path with nothing there is a
    /// [`ErrorKind::NotFound`] error.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("f.h5");
    /// # let file = h5vec::create_file(&path)?;
    /// # h5vec::save_vector(&file, "xs", &[1u32, 2, 3])?;
    /// # h5vec::save_vector(&file, "ys", &[1u8])?;
    /// # drop(file);
    /// let found = h5vec::check_isolated(&path, &h5vec::Isolation::default().only("/xs"))?;
    /// assert_eq!(found.len(), 1);
    /// assert_eq!((found[0].path.as_str(), found[0].rows), ("/xs", 3));
    /// # Ok(()) }
    /// ```
    pub fn only(mut self, path: &str) -> Self {
        self.only = Some(path.to_owned());
        self
    }

    /// Also tries an append in the child (off by default): the file is
    /// copied to the temporary directory, and the last row of every vector
    /// that reads without error is appended to it in the copy (through
    /// `h5vec::arrow`, feature `arrow`), the copy flushed, closed and
    /// removed. Some damage crashes or misleads HDF5 only when it writes
    /// (a filter's parameters, its shared-message index); check so a file
    /// the caller will append to. Costs a copy of the file.
    ///
    /// ```
    /// # fn main() -> h5vec::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("f.h5");
    /// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u32, 2])?;
    /// let found = h5vec::check_isolated(&path, &h5vec::Isolation::default().appends(true))?;
    /// assert!(found.iter().all(|c| c.problem.is_none()));
    /// let file = h5vec::open_file_rw(&path)?; // the original is unchanged
    /// h5vec::append_vector(&file, "xs", &[3u32])?;
    /// assert_eq!(h5vec::load_vector::<u32>(&file, "xs")?, [1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn appends(mut self, on: bool) -> Self {
        self.appends = on;
        self
    }

    /// Makes the child commit `fault` instead of checking: for tests.
    #[doc(hidden)]
    pub fn __fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }
}

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
/// process itself (a signal, the time limit) are [`ErrorKind::Invalid`] at
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

/// What a check found.
struct Found {
    /// Every container, with its problem.
    containers: Vec<ContainerInfo>,
    /// The first container's problem as the load's error.
    first: Option<Error>,
}

/// Where a check error is: the file.
fn file_place(path: &Path) -> Place {
    Place::new("$", path.display().to_string())
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

/// The child: budgets, the check, its report, `_exit`.
fn child_main(
    path: &Path,
    isolation: &Isolation,
    scratch: Option<&Path>,
    limit: Option<(u64, u64)>,
    report: &std::os::fd::OwnedFd,
    stderr: &std::os::fd::OwnedFd,
) -> ! {
    use crate::raw::child;
    crate::forked::mark_child();
    let _ = child::redirect_stderr(stderr);
    if let Some((size, data)) = limit {
        if child::limit_memory(size, data).is_err() {
            child::exit_now(3);
        }
    }
    match isolation.fault {
        Some(Fault::Segv) => child::commit(child::Fault::Segv),
        Some(Fault::Abort) => child::commit(child::Fault::Abort),
        Some(Fault::Hang) => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        Some(Fault::Allocate) => {
            let n = limit.map_or(u64::MAX / 2, |l| l.1);
            let n = usize::try_from(n).unwrap_or(usize::MAX / 2);
            let v = std::hint::black_box(vec![1u8; n]);
            std::hint::black_box(&v);
        }
        None => {}
    }
    let r = std::panic::catch_unwind(|| {
        let mut found = check_here(path, isolation.only.as_deref())?;
        if let Some(dir) = scratch {
            try_appends(path, dir, &mut found)?;
        }
        Ok(found)
    });
    let text = match r {
        Ok(found) => encode(found),
        Err(_) => encode(Err(Error::invalid(
            file_place(path),
            "isolated check: h5vec panicked (a bug: please report it with the file)",
        ))),
    };
    let code = match child::write_all(report, text.as_bytes()) {
        Ok(()) => 0,
        Err(_) => 2,
    };
    child::exit_now(code)
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

/// The complete check, in this process.
fn check_here(path: &Path, only: Option<&str>) -> Result<Found> {
    let at = file_place(path);
    let file = crate::open_file(path)?;
    let start = match only {
        None => file.as_group().map_err(|e| Error::hdf5(&at, e))?,
        Some(p) => {
            if !file.link_exists(p) {
                return Err(Error::not_found(
                    Place::new("$", p),
                    format!("no vector, h5col table or VLS array at {p}"),
                ));
            }
            file.group(p)
                .map_err(|e| Error::hdf5(Place::new("$", p), e))?
        }
    };
    let mut containers = crate::find_containers(&start)?;
    let mut first = None;
    for c in &mut containers {
        let err = match &c.problem {
            Some(p) => Some(described(&file, &c.path, p)),
            None => read_all(&file, &c.path).err(),
        };
        if let Some(e) = err {
            if c.problem.is_none() {
                c.problem = Some(e.to_string());
                c.rows = 0;
                c.columns = 0;
                c.stored_bytes = 0;
            }
            first.get_or_insert(e);
        }
    }
    Ok(Found { containers, first })
}

/// Appends the last row of every vector of `found` that read without
/// error to a copy of `path` in `dir`: a failure is that vector's problem;
/// HDF5 objects left open after the copy is closed are an error.
#[cfg(feature = "arrow")]
fn try_appends(path: &Path, dir: &Path, found: &mut Found) -> Result<()> {
    let at = file_place(path);
    let copy = dir.join("copy.h5");
    std::fs::copy(path, &copy)
        .map_err(|e| Error::invalid(&at, format!("isolated check: cannot copy the file: {e}")))?;
    let open_before = crate::raw::child::open_hdf5_objects();
    let file = crate::open_file_rw(&copy)?;
    for c in &mut found.containers {
        if c.problem.is_some() || c.kind != ContainerKind::Vector || c.rows == 0 {
            continue;
        }
        let r = parent_of(&file, &c.path).and_then(|(parent, name)| {
            let last = crate::arrow::read_range(&parent, &name, c.rows - 1..c.rows)?;
            crate::arrow::append_record_batch(&parent, &name, &last)
        });
        if let Err(e) = r {
            let e = Error::invalid(
                Place::new("$", c.path.as_str()),
                format!("an append of its last row (to a copy of the file) fails: {e}"),
            );
            c.problem = Some(e.to_string());
            found.first.get_or_insert(e);
        }
    }
    file.close().map_err(|e| Error::hdf5(&at, e))?;
    let left = crate::raw::child::open_hdf5_objects() - open_before;
    if left > 0 {
        return Err(Error::invalid(
            &at,
            format!(
                "isolated check: an append (to a copy of the file) leaves {left} HDF5 objects open"
            ),
        ));
    }
    Ok(())
}

/// Without the feature `arrow` there is no untyped append: nothing is tried.
#[cfg(not(feature = "arrow"))]
fn try_appends(_path: &Path, _dir: &Path, _found: &mut Found) -> Result<()> {
    Ok(())
}

/// The parent group and name of container `path`.
fn parent_of(file: &hdf5::File, path: &str) -> Result<(hdf5::Group, String)> {
    let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
    let parent = if parent.is_empty() { "/" } else { parent };
    let g = file
        .group(parent)
        .map_err(|e| Error::hdf5(Place::new("$", parent), e))?;
    Ok((g, name.to_owned()))
}

/// The error [`crate::inspect`] gives for a container `find_containers`
/// listed with `problem`.
fn described(file: &hdf5::File, path: &str, problem: &str) -> Error {
    match parent_of(file, path) {
        Ok((g, name)) => match crate::inspect(&g, &name) {
            Err(e) => e,
            Ok(_) => Error::invalid(Place::new("$", path), problem),
        },
        Err(e) => e,
    }
}

/// Reads every row of the container at `path`.
#[cfg(feature = "arrow")]
fn read_all(file: &hdf5::File, path: &str) -> Result<()> {
    let (parent, name) = parent_of(file, path)?;
    for batch in crate::arrow::batches(&parent, &name, BATCH_ROWS)? {
        batch?;
    }
    Ok(())
}

/// Reads every row of every dataset below the container at `path` through
/// HDF5, in batches (without the feature `arrow` there is no untyped
/// reader with the kinds' checks).
#[cfg(not(feature = "arrow"))]
fn read_all(file: &hdf5::File, path: &str) -> Result<()> {
    let (parent, name) = parent_of(file, path)?;
    let group = parent
        .group(&name)
        .map_err(|e| Error::hdf5(Place::new("$", path), e))?;
    read_datasets(&group, path, 0)
}

/// Reads every dataset below `group` (hard links only, at most
/// `limits`' depth) in batches of rows in its own type.
#[cfg_attr(feature = "arrow", allow(dead_code))] // tested with arrow on too
fn read_datasets(group: &hdf5::Group, path: &str, depth: usize) -> Result<()> {
    use hdf5::LocationType;
    let at = Place::new("$", path);
    if depth > 160 {
        return Err(Error::invalid(&at, "groups nested more than 160 deep"));
    }
    let mut names = group.member_names().map_err(|e| Error::hdf5(&at, e))?;
    names.sort();
    for name in names {
        if !crate::guard::is_hard_link(group, &name) {
            continue;
        }
        let here = format!("{}/{name}", path.trim_end_matches('/'));
        let p = Place::new("$", here.as_str());
        match group
            .loc_info_by_name(&name)
            .map_err(|e| Error::hdf5(&p, e))?
            .loc_type
        {
            LocationType::Group => {
                let g = group.group(&name).map_err(|e| Error::hdf5(&p, e))?;
                read_datasets(&g, &here, depth + 1)?;
            }
            LocationType::Dataset => {
                let ds = group.dataset(&name).map_err(|e| Error::hdf5(&p, e))?;
                read_dataset(&ds, &p)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads every row of `ds` in batches of at most 4 MiB.
#[cfg_attr(feature = "arrow", allow(dead_code))] // tested with arrow on too
fn read_dataset(ds: &hdf5::Dataset, at: &Place) -> Result<()> {
    let shape = crate::raw::shape(ds, at)?;
    let Some((&rows, inner)) = shape.split_first() else {
        return Ok(()); // a scalar: read by find_containers' checks
    };
    let dt = crate::raw::dataset_type(ds, at)?;
    use hdf5::types::TypeDescriptor as T;
    match dt.to_descriptor() {
        Ok(T::VarLenUnicode | T::VarLenAscii) => {}
        // Not in h5vec's layouts, and memory HDF5 allocates per row.
        Ok(T::VarLenArray(_)) => return Ok(()),
        _ => return read_fixed(ds, &dt, rows, inner, at),
    }
    {
        if !inner.is_empty() {
            return Ok(());
        }
        let mut row = 0;
        while row < rows {
            let n = (rows - row).min(BATCH_ROWS as u64);
            crate::raw::read_vlen_each(ds, row, n, at, &mut |_| {})?;
            row += n;
        }
        Ok(())
    }
}

/// Reads every row of `ds`, of fixed-size type `dt`, in batches.
#[cfg_attr(feature = "arrow", allow(dead_code))] // tested with arrow on too
fn read_fixed(
    ds: &hdf5::Dataset,
    dt: &hdf5::Datatype,
    rows: u64,
    inner: &[u64],
    at: &Place,
) -> Result<()> {
    let row_bytes = inner
        .iter()
        .try_fold(dt.size() as u64, |a, &d| a.checked_mul(d))
        .filter(|&b| b > 0 && b <= 1 << 26)
        .ok_or_else(|| Error::invalid(at, "rows larger than 64 MiB"))?;
    let per = ((4u64 << 20) / row_bytes).max(1);
    let mut buf = Vec::new();
    let mut row = 0;
    while row < rows {
        let n = (rows - row).min(per);
        let len =
            usize::try_from(n * row_bytes).map_err(|_| Error::invalid(at, "batch too large"))?;
        buf.clear();
        buf.resize(len, 0u8);
        // SAFETY: `buf` holds `n` rows of `prod(inner)` elements of the
        // dataset's own type, `row + n` is within its extent.
        unsafe {
            crate::raw::read_rows_raw(ds, dt.id(), row, n, inner, buf.as_mut_ptr().cast(), at)?
        };
        row += n;
    }
    Ok(())
}

// ---- the report on the pipe (JSON) ----

/// The report of a check: the containers and the first error, or the
/// error that ended the check.
fn encode(found: Result<Found>) -> String {
    use serde_json::{json, Value};
    let v: Value = match found {
        Ok(f) => json!({
            "containers": f.containers.iter().map(|c| json!({
                "path": c.path,
                "kind": kind_name(c.kind),
                "rows": c.rows,
                "columns": c.columns,
                "stored_bytes": c.stored_bytes,
                "problem": c.problem,
            })).collect::<Vec<_>>(),
            "first": f.first.as_ref().map(error_json),
        }),
        Err(e) => json!({ "error": error_json(&e) }),
    };
    v.to_string()
}

fn kind_name(k: ContainerKind) -> &'static str {
    match k {
        ContainerKind::Vector => "vector",
        ContainerKind::Table => "table",
        ContainerKind::VlsArray => "vls",
    }
}

fn error_json(e: &Error) -> serde_json::Value {
    use serde_json::json;
    let (kind, a, b) = match e.kind() {
        ErrorKind::Mismatch { expected, found } => ("mismatch", expected.clone(), found.clone()),
        ErrorKind::Invalid(m) => ("invalid", m.clone(), String::new()),
        ErrorKind::Encode(m) => ("encode", m.clone(), String::new()),
        ErrorKind::BadName(m) => ("bad_name", m.clone(), String::new()),
        ErrorKind::NotFound(m) => ("not_found", m.clone(), String::new()),
        ErrorKind::Hdf5(h) => ("hdf5", h.to_string(), String::new()),
    };
    // An error about the file itself displays as its message alone
    // (`Error::file`); every other starts with its path.
    let bare = !e.to_string().starts_with(e.path());
    json!({ "path": e.path(), "location": e.location(), "kind": kind, "a": a, "b": b, "bare": bare })
}

/// The error the child reported, rebuilt (an HDF5 error keeps its text).
fn error_from(v: &serde_json::Value) -> Option<Error> {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    let path = s("path")?;
    let place = match s("location") {
        Some(l) => Place::new(path, l),
        None => Place::from(path),
    };
    let (a, b) = (s("a").unwrap_or_default(), s("b").unwrap_or_default());
    let bare = v.get("bare").and_then(|x| x.as_bool()).unwrap_or(false);
    if let (true, Some(file)) = (bare, s("location")) {
        match s("kind")?.as_str() {
            "invalid" => return Some(Error::file(&file, a)),
            "hdf5" => return Some(Error::file_hdf5(&file, hdf5::Error::Internal(a))),
            _ => {}
        }
    }
    Some(match s("kind")?.as_str() {
        "mismatch" => Error::mismatch(place, a, b),
        "invalid" => Error::invalid(place, a),
        "encode" => Error::encode(place, a),
        "bad_name" => Error::bad_name(place, a),
        "not_found" => Error::not_found(place, a),
        _ => Error::hdf5(place, hdf5::Error::Internal(a)),
    })
}

/// The child's report, or an error if it is not one.
fn decode(report: &[u8], path: &Path) -> Result<Found> {
    let bad = || {
        Error::invalid(
            file_place(path),
            "isolated check: the child's report is unreadable",
        )
    };
    let v: serde_json::Value = serde_json::from_slice(report).map_err(|_| bad())?;
    if let Some(e) = v.get("error") {
        return Err(error_from(e).ok_or_else(bad)?);
    }
    let mut containers = Vec::new();
    for c in v
        .get("containers")
        .and_then(|c| c.as_array())
        .ok_or_else(bad)?
    {
        let u = |k: &str| c.get(k).and_then(|x| x.as_u64()).ok_or_else(bad);
        let kind = match c.get("kind").and_then(|k| k.as_str()) {
            Some("vector") => ContainerKind::Vector,
            Some("table") => ContainerKind::Table,
            Some("vls") => ContainerKind::VlsArray,
            _ => return Err(bad()),
        };
        containers.push(ContainerInfo {
            path: c
                .get("path")
                .and_then(|p| p.as_str())
                .ok_or_else(bad)?
                .to_owned(),
            kind,
            rows: u("rows")?,
            columns: usize::try_from(u("columns")?).map_err(|_| bad())?,
            stored_bytes: u("stored_bytes")?,
            problem: c.get("problem").and_then(|p| p.as_str()).map(str::to_owned),
        });
    }
    let first = match v.get("first") {
        Some(serde_json::Value::Null) | None => None,
        Some(e) => Some(error_from(e).ok_or_else(bad)?),
    };
    Ok(Found { containers, first })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader used without the feature `arrow`: every dataset below a
    /// container, fixed-size, multi-dimensional and variable-length strings.
    #[test]
    fn every_dataset_is_read_without_arrow() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.h5");
        let file = crate::create_file(&path).unwrap();
        let rows: Vec<(u32, String, [f64; 3])> = (0..10_000u32)
            .map(|i| (i, format!("s{i}"), [f64::from(i); 3]))
            .collect();
        let opts = crate::SaveOptions::default().deflate(1).chunk_length(1000);
        crate::save_vector_with(&file, "v", &rows, &opts).unwrap();
        let g = file.group("v").unwrap();
        read_datasets(&g, "/v", 0).unwrap();
        // Rows past the written ones (unwritten chunks) read too.
        crate::save_vector_with(&file, "xs", &[7u64; 5000], &opts).unwrap();
        let at = Place::new("$", "/xs/data/values");
        let ds = file.dataset("xs/data/values").unwrap();
        crate::raw::set_rows(&ds, 20_000, &[], &at).unwrap();
        assert_eq!(crate::raw::shape(&ds, &at).unwrap(), [20_000]);
        read_dataset(&ds, &at).unwrap();
    }
}
