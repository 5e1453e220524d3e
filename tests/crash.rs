//! A writer killed with SIGKILL at many points during saves, replacing
//! saves and appends leaves a file whose vectors load, in a fresh process,
//! with either the old or the new contents: never a mix, never an error.
//!
//! Two series: saves, replacing saves and appends in the file kind chosen
//! below, then a quarter as many kills during compressed appends to a file
//! of HDF5's default settings (`H5VEC_CRASH_APPENDS_ONLY=1` makes the child
//! only append).
//!
//! `H5VEC_CRASH_TRIALS=N` sets the number of kills (default 64),
//! `H5VEC_CRASH_DEFLATE=1` compresses every vector, `H5VEC_CRASH_PLAIN_FILE=1`
//! creates the file with `File::create` instead of `h5vec::create_file`, and
//! `H5VEC_CRASH_KEEP=DIR` keeps a copy of every file that failed to load
//! there (by default they go to the system's temporary directory). SPEC.md,
//! section 8, has the measured numbers and the commands.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use h5vec::hdf5::File;
use h5vec::{append_vector, load_vector, save_vector, save_vector_with, H5Vector, SaveOptions};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Rec {
    id: u64,
    #[h5vec(vls)]
    name: String,
    label: String,
    tags: Vec<String>,
    vals: Vec<f32>,
    maybe: Option<i32>,
}

fn row(i: u64) -> Rec {
    Rec {
        id: i,
        name: format!("name-{i}"),
        label: format!("l{}", i % 97),
        tags: (0..i % 3).map(|k| format!("t{k}")).collect(),
        vals: vec![i as f32; (i % 5) as usize],
        maybe: (!i.is_multiple_of(4)).then_some(i as i32),
    }
}

fn rows(a: u64, b: u64) -> Vec<Rec> {
    (a..b).map(row).collect()
}

/// Rows in the `j`-th append of the child (varies, crosses chunk boundaries).
fn append_size(j: u64) -> u64 {
    3_000 + (j * 7_919) % 9_000
}

/// What the child first saves as `s<j>`.
fn saved(j: u64) -> Vec<Rec> {
    rows(0, append_size(j + 1))
}

/// What the child later saves over `s<j>` (`SaveOptions::replace`).
fn replaced(j: u64) -> Vec<Rec> {
    rows(1_000_000, 1_000_000 + append_size(j + 2) / 2)
}

fn env_is(name: &str) -> bool {
    std::env::var(name).as_deref() == Ok("1")
}

fn opts() -> SaveOptions {
    let o = SaveOptions::default().chunk_length(4096);
    if env_is("H5VEC_CRASH_DEFLATE") {
        o.deflate(4)
    } else {
        o
    }
}

/// Variables set for every child of one series of kills (on top of the
/// environment of this process).
type Env<'a> = &'a [(&'a str, &'a str)];

/// The arguments that run one ignored test of this binary as a child.
fn child(exe: &Path, test: &str, file: &Path, env: Env) -> Command {
    let mut c = Command::new(exe);
    c.envs(env.iter().copied());
    c.args([
        "--ignored",
        "--exact",
        test,
        "--nocapture",
        "--test-threads=1",
    ])
    .env("H5VEC_CRASH_FILE", file);
    c
}

fn crash_file() -> PathBuf {
    std::env::var_os("H5VEC_CRASH_FILE")
        .expect("H5VEC_CRASH_FILE")
        .into()
}

/// The child: appends to `v`, saves new vectors `s<j>` and replaces some,
/// announcing each step on stdout, until killed (or for
/// `H5VEC_CRASH_STEPS` steps).
#[test]
#[ignore = "run by kill_during_saves_and_appends as a child process"]
fn crash_child() {
    let f = File::open_rw(crash_file()).unwrap();
    let mut len = h5vec::vector_len(&f, "v").unwrap();
    let start_j = f
        .member_names()
        .unwrap()
        .iter()
        .filter(|n| n.starts_with('s'))
        .count() as u64;
    println!("ready");
    let steps: u64 = std::env::var("H5VEC_CRASH_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u64::MAX);
    for j in start_j..start_j.saturating_add(steps) {
        let n = append_size(j);
        println!("append to v ({len} rows) begins");
        append_vector(&f, "v", &rows(len, len + n)).unwrap_or_else(|e| panic!("append {j}: {e}"));
        len += n;
        if env_is("H5VEC_CRASH_APPENDS_ONLY") {
            println!("step {j} done");
            continue;
        }
        println!("save of s{j} begins");
        save_vector_with(&f, &format!("s{j}"), &saved(j), &opts())
            .unwrap_or_else(|e| panic!("save s{j}: {e}"));
        if j % 3 == 2 {
            let k = j - 1;
            println!("replacing save of s{k} begins");
            save_vector_with(&f, &format!("s{k}"), &replaced(k), &opts().replace(true))
                .unwrap_or_else(|e| panic!("replace s{k}: {e}"));
        }
        println!("step {j} done");
    }
}

/// Checks H5VEC_CRASH_FILE (run as a child, so that a file that makes HDF5
/// crash or hang cannot take the test down): `v` loads with at least
/// H5VEC_CRASH_MIN rows, all as written; every `s<j>` loads as first saved
/// or as replaced. Prints the length of `v`.
#[test]
#[ignore = "run by kill_during_saves_and_appends as a child process"]
fn crash_check() {
    let min: u64 = std::env::var("H5VEC_CRASH_MIN").unwrap().parse().unwrap();
    let f = File::open(crash_file()).expect("the file opens");
    let v: Vec<Rec> = load_vector(&f, "v").unwrap_or_else(|e| panic!("v loads: {e}"));
    let len = v.len() as u64;
    assert!(len >= min, "v shrank from {min} to {len} rows");
    for (i, r) in v.iter().enumerate() {
        assert_eq!(*r, row(i as u64), "v[{i}]");
    }
    // Statistics a kill left behind (SPEC.md section 14) are either valid
    // or stale, never wrong: queries equal a scan of the loaded rows.
    for (lo, hi) in [
        (0, 10),
        (len / 2, len / 2 + 100),
        (len.saturating_sub(50), len + 10),
    ] {
        let got = h5vec::select_rows(&f, "v", &h5vec::col("id").between(lo, hi))
            .unwrap_or_else(|e| panic!("v: select_rows: {e}"));
        let want: Vec<u64> = (lo..=hi.min(len.saturating_sub(1))).collect();
        assert_eq!(got, want, "v: id between {lo} and {hi}");
    }
    for name in f.member_names().expect("the file's members list") {
        if name == "v" {
            continue;
        }
        let j: u64 = name
            .strip_prefix('s')
            .and_then(|j| j.parse().ok())
            .unwrap_or_else(|| panic!("unexpected member {name:?}"));
        let s: Vec<Rec> = load_vector(&f, &name).unwrap_or_else(|e| panic!("{name} loads: {e}"));
        assert!(
            s == saved(j) || s == replaced(j),
            "{name} is neither as saved nor as replaced"
        );
    }
    println!("len {len}");
}

/// Creates H5VEC_CRASH_FILE holding `v` with 1,000 rows.
#[test]
#[ignore = "run by kill_during_saves_and_appends as a child process"]
fn crash_new_file() {
    let path = crash_file();
    let _ = std::fs::remove_file(&path);
    let f = if env_is("H5VEC_CRASH_PLAIN_FILE") {
        File::create(&path).unwrap()
    } else {
        h5vec::create_file(&path).unwrap()
    };
    save_vector_with(&f, "v", &rows(0, 1_000), &opts()).unwrap();
}

/// Runs `test` of this binary as a child on `file`; its stdout, or why it failed.
fn run(exe: &Path, test: &str, file: &Path, min: u64, env: Env) -> Result<String, String> {
    let mut c = child(exe, test, file, env)
        .env("H5VEC_CRASH_MIN", min.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let status = loop {
        if let Some(s) = c.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed() > Duration::from_secs(120) {
            c.kill().unwrap();
            c.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut out = String::new();
    let mut err = String::new();
    c.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    match status {
        None => Err("hung (killed after 120 s)".into()),
        Some(s) if s.success() => Ok(out),
        Some(s) => {
            let text = out + &err;
            let why: Vec<&str> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .skip_while(|l| !l.contains("panicked"))
                .take(2)
                .map(str::trim)
                .collect::<Vec<_>>();
            Err(format!("{s}: {}", why.join(" ")))
        }
    }
}

/// A fresh file holding `v` with 1,000 rows; its length.
fn new_file(exe: &Path, path: &Path, env: Env) -> u64 {
    run(exe, "crash_new_file", path, 0, env).expect("a new file");
    1_000
}

/// Loads `path` in a fresh process: the length of `v`, or why it failed.
fn check(exe: &Path, path: &Path, min: u64, env: Env) -> Result<u64, String> {
    let out = run(exe, "crash_check", path, min, env)?;
    out.lines()
        .find_map(|l| l.split("len ").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("no length in {out:?}"))
}

#[test]
fn kill_during_saves_and_appends() {
    let trials: u64 = std::env::var("H5VEC_CRASH_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    kill_series(&[], trials);
    // Compressed appends to a file of HDF5's default settings (the stored
    // form of partial chunks, the flushes around moving rewrites; SPEC
    // section 8). Appends only: saves into such a file's root group, once
    // it holds more than 8 links, can tear its link index (1 kill in 1,000).
    kill_series(
        &[
            ("H5VEC_CRASH_PLAIN_FILE", "1"),
            ("H5VEC_CRASH_DEFLATE", "1"),
            ("H5VEC_CRASH_APPENDS_ONLY", "1"),
        ],
        trials / 4,
    );
    second_writer_gets_a_clear_error();
}

/// Kills `trials` writers started with `env` (each continuing on the file
/// the last one left) and checks the file after every kill.
fn kill_series(env: Env, trials: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.h5");
    let keep = std::env::var_os("H5VEC_CRASH_KEEP")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("h5vec-crash-{}", std::process::id()))
        });
    let exe = std::env::current_exe().unwrap();
    let mut len = new_file(&exe, &path, env);
    // Whether any check saw rows beyond the fresh file's (an append that
    // completed); `len` itself restarts when the file is renewed.
    let mut grew = false;
    let mut kills = 0;
    let mut failures = Vec::new();
    let mut writer_failures = Vec::new();
    let mut interrupted = std::collections::BTreeMap::<String, u32>::new();
    for trial in 0..trials {
        if len > 100_000 {
            // Keep every check fast: start over with a small file.
            len = new_file(&exe, &path, env);
        }
        let mut writer = child(&exe, "crash_child", &path, env)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the child has the file open, then let it write a while.
        let mut out = BufReader::new(writer.stdout.take().unwrap());
        let mut line = String::new();
        let t = Instant::now();
        while !line.contains("ready") && t.elapsed() < Duration::from_secs(60) {
            line.clear();
            if out.read_line(&mut line).unwrap() == 0 {
                break;
            }
        }
        if line.contains("ready") {
            std::thread::sleep(Duration::from_millis(5 + (trial * 37) % 180));
        }
        if writer.try_wait().unwrap().is_none() {
            writer.kill().unwrap(); // SIGKILL
            kills += 1;
            writer.wait().unwrap();
            let mut rest = String::new();
            out.read_to_string(&mut rest).unwrap();
            // What the kill interrupted: the last step announced.
            let step = rest
                .lines()
                .rev()
                .find(|l| l.contains("begins") || l.contains("done"))
                .map(|l| {
                    let l = l.trim_end_matches(" begins");
                    // "append to v (N rows)" -> "append to v"
                    l.split(" (").next().unwrap_or(l).to_owned()
                })
                .map(|l| {
                    if l.ends_with("done") {
                        "between steps".into()
                    } else {
                        l
                    }
                })
                .unwrap_or_else(|| "start-up".into());
            let kind = step
                .split(" of ")
                .next()
                .unwrap_or(&step)
                .trim_end_matches(" to v")
                .to_owned();
            *interrupted.entry(kind).or_default() += 1;
            // The promise: after any kill, every vector loads, old or new.
            match check(&exe, &path, len, env) {
                Ok(l) => {
                    grew |= l > len;
                    len = l;
                }
                Err(why) => {
                    std::fs::create_dir_all(&keep).unwrap();
                    let kept = keep.join(format!("trial-{trial}.h5"));
                    std::fs::copy(&path, &kept).unwrap();
                    let tail: Vec<&str> = rest.lines().rev().take(3).collect();
                    eprintln!(
                        "kill {kills} (during {step}; child's last lines {tail:?}): {why}; file kept as {}",
                        kept.display()
                    );
                    failures.push(format!("{step}: {why}"));
                    len = new_file(&exe, &path, env);
                }
            }
        } else {
            // The writer stopped on its own: it could not go on with the
            // file the last kill left. Record it, go on with a fresh file.
            let status = writer.wait().unwrap();
            let mut err = String::new();
            writer
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            let why = err
                .lines()
                .skip_while(|l| !l.contains("panicked"))
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            std::fs::create_dir_all(&keep).unwrap();
            let kept = keep.join(format!("trial-{trial}-writer.h5"));
            std::fs::copy(&path, &kept).unwrap();
            eprintln!(
                "writer failed after kill {kills} ({status}): {why}; file kept as {}",
                kept.display()
            );
            writer_failures.push(why);
            len = new_file(&exe, &path, env);
        }
    }
    eprintln!(
        "{kills} kills with {env:?} (interrupted: {interrupted:?}), {} failed loads, {} writers that could not go on",
        failures.len(),
        writer_failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {kills} kills left a file that does not load: {failures:#?}",
        failures.len()
    );
    assert!(
        writer_failures.is_empty(),
        "writers could not go on after a kill: {writer_failures:#?}"
    );
    assert!(
        kills * 4 >= trials * 3,
        "only {kills} of {trials} trials killed a running writer"
    );
    assert!(grew, "no append ever completed");
}

/// Kept out of the parallel test set: a child spawned while another test
/// holds an HDF5 file open would inherit that file's descriptor and its lock
/// (HDF5 does not open files close-on-exec).
fn second_writer_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lock.h5");
    let f = File::create(&path).unwrap();
    save_vector(&f, "v", &rows(0, 3)).unwrap();
    let exe = std::env::current_exe().unwrap();
    // Another process cannot open the file for writing while we hold it.
    let out = child(&exe, "crash_child", &path, &[]).output().unwrap();
    assert!(!out.status.success());
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("lock"), "{text}");
    drop(f);
    assert_eq!(
        load_vector::<Rec>(&File::open(&path).unwrap(), "v").unwrap(),
        rows(0, 3)
    );
}
