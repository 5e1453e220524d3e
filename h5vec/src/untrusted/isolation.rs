//! The budgets and scope of an isolated check: [`Isolation`], and the
//! test-only [`Fault`] a child commits instead of checking.

use std::time::Duration;

/// The budgets of an isolated check ([`check_isolated`](crate::check_isolated),
/// [`open_untrusted_with`](crate::open_untrusted_with)): how long the child may take, and how much
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
    pub(super) time_limit: Duration,
    pub(super) memory_limit: u64,
    pub(super) only: Option<String>,
    pub(super) appends: bool,
    pub(super) fault: Option<Fault>,
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
    /// [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) error.
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
