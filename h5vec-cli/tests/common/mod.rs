//! What the command's test files share: running `h5vec` in a child that
//! holds no file of this process, its output checked.

// Each test file uses some of these helpers, not all.
#![allow(dead_code)]

use std::path::Path;

use assert_cmd::Command;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Turns HDF5's file locking off in this process, before HDF5 starts (it
/// reads `HDF5_USE_FILE_LOCKING` once, when it initializes): every test
/// calls this before its first HDF5 call. The tests run in parallel threads
/// and start children (the command) by fork and exec; between the two a
/// child holds every file this process has open, with its `flock` lock, and
/// a test reopening its own file in that moment would fail with "unable to
/// lock file, errno 11". The children lock as usual.
pub fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::env::set_var("HDF5_USE_FILE_LOCKING", "FALSE"));
}

/// The command, run in a child that keeps no file descriptor of this
/// process but stdin, stdout and stderr (HDF5 opens files without
/// `O_CLOEXEC`): it holds only the files it opens itself.
pub fn std_cmd() -> std::process::Command {
    init();
    use std::os::unix::process::CommandExt;
    extern "C" {
        fn close_range(first: u32, last: u32, flags: i32) -> i32;
    }
    /// Linux's `CLOSE_RANGE_CLOEXEC`: mark the descriptors close-on-exec.
    const CLOSE_RANGE_CLOEXEC: i32 = 4;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin!("h5vec"));
    // The command locks its files as it would anywhere (see `init`).
    cmd.env_remove("HDF5_USE_FILE_LOCKING");
    // SAFETY: the closure runs in the child between fork and exec and makes
    // one async-signal-safe system call on the child's own descriptors;
    // stdio (0-2) is already in place and stays open. Failure (an old
    // kernel) leaves the descriptors as they were.
    unsafe {
        cmd.pre_exec(|| {
            close_range(3, u32::MAX, CLOSE_RANGE_CLOEXEC);
            Ok(())
        });
    }
    cmd
}

/// [`std_cmd`] for `assert_cmd`'s assertions.
pub fn h5vec_cmd() -> Command {
    Command::from_std(std_cmd())
}

/// Runs `h5vec ARGS`, expecting exit status `code`; returns stdout and stderr.
pub fn run_code(args: &[&str], code: i32) -> (String, String) {
    let out = h5vec_cmd().args(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert_eq!(
        out.status.code(),
        Some(code),
        "h5vec {args:?}: stdout {stdout}\nstderr {stderr}"
    );
    (stdout, stderr)
}

/// Runs `h5vec ARGS`, expecting success and nothing on stderr.
pub fn run_ok(args: &[&str]) -> String {
    let (out, err) = run_code(args, 0);
    assert_eq!(err, "", "h5vec {args:?} wrote to stderr");
    out
}

/// A path as the command's argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every batch of a Parquet file.
pub fn read_parquet(path: &Path) -> Vec<arrow::array::RecordBatch> {
    let f = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}
