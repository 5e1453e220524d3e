//! Process-wide state in the child of an isolated check
//! ([`crate::check_isolated`], Unix): the child is forked while other
//! threads of the parent may hold h5vec's locks, and has none of those
//! threads. Every process-wide lock of h5vec goes through [`fork_safe`].
//! A leaf module (std only), below `raw`, which takes its locks through it.

/// Set in the child of an isolated check: h5vec's worker pool was made
/// (if at all) by the parent, whose threads the child does not have, so
/// work sent to it would wait forever. [`crate::pipeline::pool::pool`] reads it.
#[cfg(unix)]
static IN_CHILD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process is the child of an isolated check (then h5vec runs
/// everything on the calling thread).
#[cfg(unix)]
pub(crate) fn in_child() -> bool {
    IN_CHILD.load(std::sync::atomic::Ordering::Relaxed)
}

/// Marks this process as the child of an isolated check, first thing after
/// the fork (`crate::untrusted`).
#[cfg(unix)]
pub(crate) fn mark_child() {
    IN_CHILD.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether this process is the child of an isolated check (never, where
/// checks do not fork).
#[cfg(not(unix))]
pub(crate) fn in_child() -> bool {
    false
}

/// The process-wide lock `parent`, or in the child of an isolated check its
/// twin `child`, which the parent never takes. Another thread of the parent
/// may have held `parent` at the fork; the child, which has no such thread,
/// would wait for it forever (the check then fails at its time limit).
pub(crate) fn fork_safe<'a, T>(
    parent: &'a std::sync::Mutex<T>,
    child: &'a std::sync::Mutex<T>,
) -> &'a std::sync::Mutex<T> {
    if in_child() {
        child
    } else {
        parent
    }
}
