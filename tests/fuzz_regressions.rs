//! Inputs the fuzzer (`h5vec-fuzz`, `scripts/fuzz.sh`) found that hung,
//! aborted, panicked or leaked: every file in `tests/fuzz/` goes through
//! every load entry point of its seed (the seed's name is in the file
//! name), in a child process with a timeout: the typed loads and appends,
//! and the untyped readers (`h5vec::arrow`, `inspect`, `find_containers`,
//! compared with what they return on the intact seed). Each load must
//! return an error or the seed's exact values (damage a load does not
//! depend on may leave it correct), never panic, never hang or abort, and
//! leave no HDF5 object open.
//!
//! Inputs listed in `tests/fuzz/KNOWN.md` still fail (inside HDF5 or
//! hdf5-metno, or in h5vec code not fixed yet: the list says where);
//! `known_failures_still_fail` (ignored by default) shows whether they
//! still do.

#[allow(dead_code)] // Each binary that includes the targets uses part of them.
#[path = "../h5vec-fuzz/src/targets.rs"]
mod targets;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Environment variable naming the input a child process loads.
const CHILD_INPUT: &str = "H5VEC_FUZZ_REGRESSION_INPUT";

/// `tests/fuzz` (this file's package is `tests/` or `h5vec/`).
fn fuzz_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let own = here.join("fuzz").join("KNOWN.md");
    if own.exists() {
        here.join("fuzz")
    } else {
        here.join("../tests/fuzz")
    }
}

/// File names listed in `tests/fuzz/KNOWN.md` (lines starting with `- `` `).
fn known() -> Vec<String> {
    let text = std::fs::read_to_string(fuzz_dir().join("KNOWN.md")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

fn inputs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fuzz_dir())
        .expect("tests/fuzz exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "h5"))
        .collect();
    v.sort();
    v
}

fn seed_of(path: &Path) -> targets::Seed {
    let stem = path.file_stem().unwrap().to_str().unwrap();
    targets::seeds()
        .into_iter()
        .filter(|s| stem.contains(&format!("-{}-s", s.name)))
        .max_by_key(|s| s.name.len())
        .unwrap_or_else(|| panic!("{stem}: no seed name in the file name"))
}

/// Runs in the child: loads one input through every entry, prints one line
/// per entry, and fails on a panic or a silent change.
#[test]
#[ignore = "run by the other tests in a child process"]
fn child_loads_one_input() {
    let Ok(input) = std::env::var(CHILD_INPUT) else {
        return;
    };
    let path = PathBuf::from(input);
    let seed = seed_of(&path);
    let dir = tempfile::tempdir().unwrap();
    // Loads only read the input: work on a copy so it stays as committed.
    let copy = dir.path().join("input.h5");
    std::fs::copy(&path, &copy).unwrap();
    let scratch = dir.path().join("scratch.h5");
    let mut bad = Vec::new();
    let mut different = Vec::new();
    for e in seed.entries {
        let r = std::panic::catch_unwind(|| (seed.run)(e, &copy, &scratch));
        let line = match &r {
            Ok(Ok(true)) => "ok-equal".to_string(),
            Ok(Ok(false)) => "DIFFERENT".to_string(),
            Ok(Err(m)) => format!("error: {m}"),
            Err(_) => "PANIC".to_string(),
        };
        println!("RESULT {e} {line}");
        match r {
            Ok(Ok(false)) => different.push(*e),
            Err(_) => bad.push(format!("{e}: {line}")),
            _ => {}
        }
        let open = open_objects();
        if open > 0 {
            bad.push(format!("{e}: left {open} HDF5 objects open"));
        }
    }
    // The untyped entries compare with today's seed, Arrow schema and
    // h5vec metadata included. An input cut from a seed that an earlier
    // h5vec wrote in another layout (strings before compression covered
    // them, enums before labels) reads, correctly, into another Arrow
    // schema, so its Arrow results cannot equal today's seed's. Such an
    // input still guards against panics, hangs and leaks, and its typed
    // loads are still compared value by value.
    let older_layout = different.contains(&"arrow_schema");
    for e in different {
        if older_layout && e.starts_with("arrow_") {
            println!("NOTE {e}: the input's layout predates today's seed");
        } else {
            bad.push(format!("{e}: DIFFERENT"));
        }
    }
    assert!(bad.is_empty(), "{}: {bad:?}", path.display());
}

/// Objects HDF5 has open in every file (files, groups, datasets, ...).
fn open_objects() -> isize {
    use hdf5_sys::h5f::{H5Fget_obj_count, H5F_OBJ_ALL};
    h5vec::hdf5::sync::sync(|| {
        // SAFETY: H5F_OBJ_ALL as the file id counts the objects of every file.
        unsafe { H5Fget_obj_count(H5F_OBJ_ALL as hdf5_sys::h5i::hid_t, H5F_OBJ_ALL) }
    })
}

struct Outcome {
    /// Exit status, or `None` when killed at the timeout.
    success: Option<bool>,
    /// How the child ended: exit code or signal.
    status: String,
    stdout: String,
    secs: f64,
}

fn run_child(path: &Path, timeout: Duration) -> Outcome {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "child_loads_one_input",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_INPUT, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let mut status = "killed at the timeout".to_string();
    let success = loop {
        if let Some(s) = child.try_wait().unwrap() {
            status = describe(s);
            break Some(s.success());
        }
        if t.elapsed() > timeout {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    use std::io::Read;
    if let Some(mut o) = child.stdout.take() {
        o.read_to_string(&mut stdout).unwrap();
    }
    if let Some(mut e) = child.stderr.take() {
        let mut err = String::new();
        e.read_to_string(&mut err).unwrap();
        // The child's assertion message (its panic goes to stderr).
        stdout.extend(
            err.lines()
                .filter(|l| l.contains(".h5"))
                .map(|l| format!("{l}\n")),
        );
    }
    Outcome {
        success,
        status,
        stdout,
        secs: t.elapsed().as_secs_f64(),
    }
}

fn describe(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("killed by signal {sig}");
        }
    }
    format!("{s}")
}

fn timeout() -> Duration {
    let secs = std::env::var("H5VEC_FUZZ_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    Duration::from_secs(secs)
}

#[test]
fn fuzz_inputs_load_as_errors() {
    let known = known();
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in inputs() {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if known.contains(&name) {
            continue;
        }
        checked += 1;
        let o = run_child(&path, timeout());
        let results: Vec<&str> = o
            .stdout
            .lines()
            // libtest may print `test NAME ... ` before the first line.
            .filter_map(|l| l.split_once("RESULT ").map(|x| x.1))
            .collect();
        match o.success {
            None => failures.push(format!("{name}: still running after {:.0} s", o.secs)),
            Some(false) => failures.push(format!("{name}: {}: {}", o.status, o.stdout)),
            Some(true) if results.len() != seed_of(&path).entries.len() => {
                failures.push(format!("{name}: child ran no loads: {}", o.stdout))
            }
            Some(true) => {}
        }
    }
    assert!(checked > 0 || !known.is_empty(), "no inputs in tests/fuzz");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// When this fails, an input of KNOWN.md now loads as errors: move it out
/// of the list so `fuzz_inputs_load_as_errors` guards it.
#[test]
#[ignore = "inputs that still fail (tests/fuzz/KNOWN.md); run to see whether they still do"]
fn known_failures_still_fail() {
    let mut fixed = Vec::new();
    for name in known() {
        let o = run_child(&fuzz_dir().join(&name), Duration::from_secs(20));
        let state = match o.success {
            None => "still hangs".to_string(),
            Some(true) => {
                fixed.push(name.clone());
                "now loads as errors".to_string()
            }
            Some(false) => format!("fails ({}): {}", o.status, o.stdout.trim()),
        };
        println!("{name}: {state} after {:.1} s", o.secs);
    }
    assert!(fixed.is_empty(), "fixed, move out of KNOWN.md: {fixed:?}");
}

/// A damaged global heap collection behind a variable-length string
/// attribute (the VLS array's `type`): HDF5's `H5Aread` loops on it
/// forever; h5vec walks the collection first (`gheap::check_attr`) and
/// every load that reads the attribute is the heap error naming it.
#[test]
fn a_heap_loop_through_an_attribute_is_an_error() {
    let o = run_child(
        &fuzz_dir().join("hang-vls_array-s100-i18929.h5"),
        Duration::from_secs(20),
    );
    assert_eq!(o.success, Some(true), "{}: {}", o.status, o.stdout);
    let heap = "error: $ (/v attribute type): invalid data: damaged global heap collection at \
                byte 2048 of the file: the object at byte 2136 is free space of size 0 (HDF5 \
                would loop on it forever)";
    for entry in ["load_strings", "inspect", "find_containers"] {
        let want = format!("RESULT {entry} {heap}");
        assert!(
            o.stdout.lines().any(|l| l.ends_with(&want)),
            "{entry}: {}",
            o.stdout
        );
    }
}
