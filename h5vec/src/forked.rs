//! Process-wide state in the child of an isolated check
//! ([`crate::check_isolated`], Unix): the child is forked while other
//! threads of the parent may hold h5vec's locks, and has none of those
//! threads. Every process-wide lock of h5vec goes through [`fork_safe`].

/// Whether this process is the child of an isolated check.
#[cfg(unix)]
pub(crate) use crate::untrusted::in_child;

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
