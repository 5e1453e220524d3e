//! The process calls of the isolated check ([`crate::untrusted`]): a child
//! forked under hdf5-metno's lock, its budgets, the pipes it reports
//! through, and its end (Unix only).
//!
//! Each wrapper does one libc call (or one retry loop around it) and
//! returns `std::io::Result`; what the calls mean for the check is
//! `untrusted.rs`'s business.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// A pipe, both ends closed on `exec` (so no other process started
/// meanwhile inherits them) and when dropped: `(read, write)`.
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    // Elsewhere (macOS has no pipe2): pipe, then close-on-exec; an exec on
    // another thread in between may inherit them, for as long as it runs.
    // SAFETY: `fds` has room for the two descriptors pipe writes.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let r = unsafe { libc::pipe(fds.as_mut_ptr()) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call succeeded: both descriptors are fresh and ours alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    for fd in [&read, &write] {
        // SAFETY: an open descriptor; F_SETFD only sets its flags.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((read, write))
}

/// Which side of a [`fork`] this is.
pub(crate) enum Forked {
    /// The new process.
    Child,
    /// The caller, with the child's process id.
    Parent(libc::pid_t),
}

/// Forks the process.
///
/// # Safety
/// Only the calling thread exists in the child. The caller must hold every
/// lock the child will take that another thread could hold (h5vec holds
/// hdf5-metno's lock), must keep the child off thread pools made before
/// the fork, and must end the child with [`exit_now`], never by returning.
pub(crate) unsafe fn fork() -> io::Result<Forked> {
    // SAFETY: the caller's contract above.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

/// Ends this process at once with `code`: no atexit handlers, no
/// destructors, no flush of stdio or of HDF5's files (a forked child must
/// not write the parent's open files back).
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: _exit is always safe to call; it does not return.
    unsafe { libc::_exit(code) }
}

/// Caps this process's address space at `size` bytes (`RLIMIT_AS`) and its
/// private writable memory at `data` bytes (`RLIMIT_DATA`, which also
/// counts memory an allocator had reserved and makes writable): an
/// allocation past either fails (Rust then aborts, HDF5 reports an error).
/// Core dumps are turned off too: a crash of the check is expected and
/// reported, not a bug to keep a core of.
pub(crate) fn limit_memory(size: u64, data: u64) -> io::Result<()> {
    let set = |resource, value: u64| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is valid for the write.
        if unsafe { libc::getrlimit(resource, &mut lim) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // Never above the hard limit (raising it needs privileges).
        let value = (value as libc::rlim_t).min(lim.rlim_max);
        lim.rlim_cur = value;
        lim.rlim_max = value;
        // SAFETY: `lim` is a valid rlimit that lives across the call.
        if unsafe { libc::setrlimit(resource, &lim) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    set(libc::RLIMIT_CORE, 0)?;
    set(libc::RLIMIT_DATA, data)?;
    set(libc::RLIMIT_AS, size)
}

/// Points this process's stderr at `fd` (what a crash prints, such as
/// Rust's `memory allocation of N bytes failed`, then reaches the parent).
pub(crate) fn redirect_stderr(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: both descriptors are open; dup2 replaces descriptor 2.
    if unsafe { libc::dup2(fd.as_raw_fd(), libc::STDERR_FILENO) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes all of `bytes` to `fd`.
pub(crate) fn write_all(fd: &OwnedFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for reads of its length; `fd` is open.
        let n = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// Waits up to `timeout` for any of `fds` to be readable or closed at the
/// other end; returns which are (all `false` when the time ran out).
pub(crate) fn wait_readable(fds: &[RawFd], timeout: Duration) -> io::Result<Vec<bool>> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `polls` holds `polls.len()` valid pollfd entries.
    let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(e);
    }
    Ok(polls.iter().map(|p| p.revents != 0).collect())
}

/// Reads what `fd` has (at most `max` bytes) into `out`; `Ok(0)` at the
/// end of the pipe.
pub(crate) fn read_some(fd: RawFd, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let mut buf = [0u8; 8192];
    let want = buf.len().min(max.max(1));
    loop {
        // SAFETY: `buf` is valid for writes of `want` <= its length bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), want) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let n = n as usize;
        if out.len() < max {
            let keep = n.min(max - out.len());
            out.extend_from_slice(&buf[..keep]);
        }
        return Ok(n);
    }
}

/// Sends SIGKILL to process `pid` (a child of ours not yet waited for).
pub(crate) fn kill(pid: libc::pid_t) {
    // SAFETY: signals a child that cannot have been reaped yet, so `pid`
    // is still ours; an error (already exited) changes nothing.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled(i32),
    /// Not known: the process ignores `SIGCHLD`, so the system reaped the
    /// child itself (`ECHILD`).
    Unknown,
}

/// Waits for child `pid` to end and reaps it.
pub(crate) fn wait(pid: libc::pid_t) -> io::Result<Ended> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is valid for the write; `pid` is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if r < 0 && e.kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if r < 0 && e.raw_os_error() == Some(libc::ECHILD) {
            return Ok(Ended::Unknown);
        }
        return Err(e);
    }
    if libc::WIFSIGNALED(status) {
        Ok(Ended::Signaled(libc::WTERMSIG(status)))
    } else {
        Ok(Ended::Exited(libc::WEXITSTATUS(status)))
    }
}

/// The usual name of signal `sig` (`SIGSEGV`), or `signal N`.
pub(crate) fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGSYS => "SIGSYS",
        libc::SIGXCPU => "SIGXCPU",
        _ => return format!("signal {sig}"),
    };
    name.to_owned()
}

/// Faults the isolated check's tests make the child commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// A segmentation fault (`SIGSEGV` raised).
    Segv,
    /// `abort()`.
    Abort,
}

/// Commits `fault` in this process (a test hook of the isolated check).
pub(crate) fn commit(fault: Fault) {
    let sig = match fault {
        Fault::Segv => libc::SIGSEGV,
        Fault::Abort => libc::SIGABRT,
    };
    // SAFETY: raising a signal in our own process; its default action
    // ends the process, which is the point.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// HDF5 objects open in this process, in every file (files, groups,
/// datasets, types, attributes).
#[cfg(feature = "arrow")] // counted around the isolated check's appends
pub(crate) fn open_hdf5_objects() -> isize {
    use hdf5_sys::h5f::{H5Fget_obj_count, H5F_OBJ_ALL};
    crate::raw::sync(|| {
        // SAFETY: H5F_OBJ_ALL as the file id counts the objects of every
        // file; under the lock.
        unsafe { H5Fget_obj_count(H5F_OBJ_ALL as hdf5_sys::h5i::hid_t, H5F_OBJ_ALL) }
    })
}
