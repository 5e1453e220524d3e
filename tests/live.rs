//! Live readers (SPEC.md section 8, "Live readers"): a writer process
//! streams into a vector of a `create_file_live` file while reader
//! processes (Rust through `open_file_live`, h5py with `swmr=True`) load it
//! again and again. The processes are this test binary run again with
//! `H5VEC_LIVE_ROLE` set, and tests/python/test_live_h5py.py.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use h5vec::{H5Vector, SaveOptions, VectorWriter};

/// The row type and rows of examples/live_writer.rs.
#[derive(H5Vector, Debug, PartialEq, Clone)]
struct Tick {
    seq: u64,
    price: f64,
    qty: i32,
    tags: Vec<u16>,
    #[h5vec(vls)]
    venue: String,
    bid: Option<f32>,
}

fn tick(i: u64) -> Tick {
    Tick {
        seq: i,
        price: i as f64 * 0.25,
        qty: (i % 1000) as i32 - 500,
        tags: (0..i % 4).map(|k| (i + k) as u16).collect(),
        venue: format!("v{}", i % 7),
        bid: (!i.is_multiple_of(3)).then_some(i as f32 * 0.5),
    }
}

fn check_prefix(rows: &[Tick]) {
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(*r, tick(i as u64), "row {i}");
    }
}

/// The child processes: does nothing unless `H5VEC_LIVE_ROLE` is set.
#[test]
fn live_child() {
    let Ok(role) = std::env::var("H5VEC_LIVE_ROLE") else {
        return;
    };
    let path = std::env::var("H5VEC_LIVE_PATH").unwrap();
    let secs: f64 = std::env::var("H5VEC_LIVE_SECS").unwrap().parse().unwrap();
    match role.as_str() {
        "writer" => {
            let file = h5vec::create_file_live(&path).unwrap();
            let opts = SaveOptions::default().chunk_length(256);
            let mut w = VectorWriter::<Tick>::create_live(&file, "ticks", &opts).unwrap();
            println!("LIVE ready");
            let end = Instant::now() + Duration::from_secs_f64(secs);
            let mut i = 0;
            while Instant::now() < end {
                for _ in 0..300 {
                    w.push(&tick(i)).unwrap();
                    i += 1;
                }
                w.flush().unwrap();
                println!("LIVE committed {}", w.len());
                std::thread::sleep(Duration::from_millis(2));
            }
            println!("LIVE done {}", w.finish().unwrap());
        }
        "reader" => {
            // One handle for every load: each load sees the last commit.
            let file = h5vec::open_file_live(&path).unwrap();
            let end = Instant::now() + Duration::from_secs_f64(secs);
            let mut seen: Vec<usize> = Vec::new();
            while Instant::now() < end {
                let rows: Vec<Tick> = h5vec::load_vector(&file, "ticks").unwrap();
                check_prefix(&rows);
                assert!(seen.last().is_none_or(|&n| rows.len() >= n));
                seen.push(rows.len());
            }
            seen.dedup();
            println!(
                "LIVE loads distinct {} last {}",
                seen.len(),
                seen.last().unwrap_or(&0)
            );
        }
        "holder" => {
            // A writer that is not live: HDF5's exclusive lock until it closes.
            let file = h5vec::create_file(&path).unwrap();
            h5vec::save_vector(&file, "xs", &[1u32, 2]).unwrap();
            println!("LIVE ready");
            std::thread::sleep(Duration::from_secs_f64(secs));
        }
        other => panic!("unknown role {other}"),
    }
}

/// Held for reading while a test starts a process, for writing while one
/// opens a file: HDF5 opens files without close-on-exec and h5vec marks
/// them right after, so a process started in between (by another test of
/// this binary) would keep the file's lock.
static OPENING: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// `open()`, while no test of this binary starts a process.
fn opening<T>(open: impl FnOnce() -> T) -> T {
    let _g = OPENING.write().unwrap_or_else(|e| e.into_inner());
    open()
}

/// Starts `c` (not while a test of this binary opens a file).
fn start(c: &mut Command) -> Child {
    let _g = OPENING.read().unwrap_or_else(|e| e.into_inner());
    c.spawn().unwrap()
}

fn spawn(role: &str, path: &Path, secs: f64) -> Child {
    start(
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "live_child", "--nocapture", "--test-threads=1"])
            .env("H5VEC_LIVE_ROLE", role)
            .env("H5VEC_LIVE_PATH", path)
            .env("H5VEC_LIVE_SECS", secs.to_string())
            .stdout(Stdio::piped()),
    )
}

/// The next `LIVE ...` line of a child's output, split.
fn next_line(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> Vec<String> {
    for l in lines.by_ref() {
        let l = l.unwrap();
        // libtest may print "test live_child ... " before the first line.
        if let Some(at) = l.find("LIVE ") {
            return l[at + 5..].split(' ').map(str::to_owned).collect();
        }
    }
    panic!("the child ended without a LIVE line");
}

fn python(args: &[&str]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/test_live_h5py.py");
    let mut c = Command::new("python3");
    c.arg(script).args(args).stdout(Stdio::piped());
    c
}

fn output(c: Child) -> String {
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "a reader failed: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn rust_and_h5py_readers_load_growing_prefixes_while_a_writer_streams() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.h5");
    // The h5py reader first: its imports can take seconds on a busy
    // machine, which used to eat its reading window (one load seen).
    let mut py = start(python(&["read", path.to_str().unwrap(), "3"]).stdin(Stdio::piped()));
    let mut py_out = BufReader::new(py.stdout.take().unwrap());
    let mut first = String::new();
    py_out.read_line(&mut first).unwrap();
    assert_eq!(first.trim(), "ready", "the h5py reader did not start");
    let mut w = spawn("writer", &path, 4.0);
    let mut lines = BufReader::new(w.stdout.take().unwrap()).lines();
    assert_eq!(next_line(&mut lines), ["ready"]);
    let rust = spawn("reader", &path, 3.0);
    writeln!(py.stdin.take().unwrap(), "go").unwrap();
    let rust = output(rust);
    let mut py_text = String::new();
    py_out.read_to_string(&mut py_text).unwrap();
    assert!(
        py.wait().unwrap().success(),
        "the h5py reader failed: {py_text}"
    );
    let py = py_text;
    let mut last = 0;
    loop {
        let l = next_line(&mut lines);
        if l[0] == "done" {
            last = l[1].parse::<usize>().unwrap().max(last);
            break;
        }
    }
    assert!(w.wait().unwrap().success());
    // Both readers saw `count` grow (at least 3 distinct lengths).
    let distinct = |s: &str, key: &str| -> usize {
        let l = s.lines().find(|l| l.contains(key)).expect(s);
        let w: Vec<&str> = l.split_whitespace().collect();
        let i = w.iter().position(|x| *x == "distinct").unwrap();
        w[i + 1].parse().unwrap()
    };
    assert!(distinct(&rust, "LIVE loads") >= 3, "{rust}");
    assert!(distinct(&py, "loads") >= 3, "{py}");
    let all: Vec<Tick> =
        h5vec::load_vector(&opening(|| h5vec::open_file(&path)).unwrap(), "ticks").unwrap();
    assert_eq!(all.len(), last);
    check_prefix(&all);
}

#[test]
fn readers_load_the_last_commit_of_a_killed_writer_and_open_file_rw_repairs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.h5");
    let mut w = spawn("writer", &path, 60.0);
    let mut lines = BufReader::new(w.stdout.take().unwrap()).lines();
    assert_eq!(next_line(&mut lines), ["ready"]);
    let mut committed = 0;
    while committed < 20_000 {
        committed = next_line(&mut lines)[1].parse::<usize>().unwrap();
    }
    w.kill().unwrap(); // SIGKILL
    w.wait().unwrap();
    // While no other process has it open, a live writer's lock is gone.
    let live = opening(|| h5vec::open_file_live(&path)).unwrap();
    let rows: Vec<Tick> = h5vec::load_vector(&live, "ticks").unwrap();
    assert!(rows.len() >= committed, "{} < {committed}", rows.len());
    check_prefix(&rows);
    let py = output(start(&mut python(&[
        "once",
        path.to_str().unwrap(),
        &committed.to_string(),
    ])));
    assert_eq!(py.trim(), format!("rows {}", rows.len()));
    // open_file also reads it (as a live reader: the superblock still says
    // a writer has it open).
    let f = opening(|| h5vec::open_file(&path)).unwrap();
    assert_eq!(h5vec::vector_len(&f, "ticks").unwrap(), rows.len() as u64);
    drop((live, f));
    // Writing again: open_file_rw clears the killed writer's marks.
    let f = opening(|| h5vec::open_file_rw(&path)).unwrap();
    h5vec::repair::<Tick>(&f, "ticks").unwrap();
    let n = rows.len() as u64;
    h5vec::append_vector(&f, "ticks", &[tick(n), tick(n + 1)]).unwrap();
    drop(f);
    let back: Vec<Tick> =
        h5vec::load_vector(&opening(|| h5vec::open_file(&path)).unwrap(), "ticks").unwrap();
    assert_eq!(back.len() as u64, n + 2);
    check_prefix(&back);
}

#[test]
fn live_writers_refuse_variable_length_fields_and_plain_files() {
    #[derive(H5Vector)]
    struct Row {
        id: u32,
        name: String,
    }
    let dir = tempfile::tempdir().unwrap();
    let f = h5vec::create_file_live(dir.path().join("vl.h5")).unwrap();
    let e = VectorWriter::<Row>::create_live(&f, "rows", &SaveOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("$.name") && e.contains("variable-length"), "{e}");
    // Nothing was linked.
    assert!(!f.link_exists("rows"));
    let plain = h5vec::create_file(dir.path().join("plain.h5")).unwrap();
    let e = VectorWriter::<u32>::create_live(&plain, "xs", &SaveOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("create_file_live") && e.contains("superblock version 2"),
        "{e}"
    );
    // A second live writer on a live file is refused.
    let f2 = h5vec::create_file_live(dir.path().join("two.h5")).unwrap();
    h5vec::save_vector(&f2, "ys", &[1u32]).unwrap();
    let _w = VectorWriter::<u32>::create_live(&f2, "xs", &SaveOptions::default()).unwrap();
    let e = VectorWriter::<u32>::create(&f2, "zs", &SaveOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("live (SWMR) writing mode"), "{e}");
    #[derive(serde::Serialize, serde::Deserialize)]
    struct S {
        x: u32,
    }
    // Every other way of making a new container is refused the same way
    // (the Arrow and serde writers made an anonymous group, whose drop
    // crashed HDF5 in SWMR writing mode).
    let mut errors = vec![
        h5vec::save_vector(&f2, "zs", &[1u32])
            .unwrap_err()
            .to_string(),
        h5vec::serde::save_vector(&f2, "zs", &[S { x: 1 }])
            .unwrap_err()
            .to_string(),
    ];
    let batch = arrow_array::RecordBatch::try_from_iter([(
        "x",
        std::sync::Arc::new(arrow_array::UInt32Array::from(vec![1, 2])) as arrow_array::ArrayRef,
    )])
    .unwrap();
    errors.push(
        h5vec::arrow::save_record_batch(&f2, "zs", &batch, &SaveOptions::default())
            .unwrap_err()
            .to_string(),
    );
    for e in errors {
        assert!(
            e.contains("$") && e.contains("live (SWMR) writing mode"),
            "{e}"
        );
    }
    assert!(!f2.link_exists("zs"));
    assert_eq!(h5vec::load_vector::<u32>(&f2, "ys").unwrap(), [1]);
}

#[test]
fn a_streamed_vector_is_linked_at_its_first_commit() {
    let dir = tempfile::tempdir().unwrap();
    let f = h5vec::create_file(dir.path().join("w.h5")).unwrap();
    let mut w = VectorWriter::<u32>::create(&f, "xs", &SaveOptions::default()).unwrap();
    w.extend(&[1, 2, 3]).unwrap();
    assert!(!f.link_exists("xs"));
    w.flush().unwrap();
    assert_eq!(h5vec::load_vector::<u32>(&f, "xs").unwrap(), [1, 2, 3]);
    w.push(&4).unwrap();
    drop(w); // without finish: the last commit stays
    assert_eq!(h5vec::load_vector::<u32>(&f, "xs").unwrap(), [1, 2, 3]);
}

#[test]
fn a_reader_of_a_file_a_plain_writer_holds_gets_an_error_naming_create_file_live() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.h5");
    let mut w = spawn("holder", &path, 60.0);
    let mut lines = BufReader::new(w.stdout.take().unwrap()).lines();
    assert_eq!(next_line(&mut lines), ["ready"]);
    let read = format!(
        "the file is open for writing by another process (HDF5 locks a file while a writer \
         has it open): {}; a writer that other processes may read while it writes creates \
         the file with h5vec::create_file_live and writes with VectorWriter::create_live \
         (readers: h5vec::open_file_live)",
        path.display()
    );
    let e = h5vec::open_file(&path).unwrap_err();
    assert_eq!(e.to_string(), read);
    assert!(matches!(e.kind(), h5vec::ErrorKind::Hdf5(_)), "{e:?}");
    assert_eq!((e.path(), e.location()), ("$", path.to_str()));
    assert_eq!(h5vec::open_file_live(&path).unwrap_err().to_string(), read);
    assert_eq!(
        h5vec::open_file_rw(&path).unwrap_err().to_string(),
        format!(
            "the file is open in another process (HDF5 locks a file while a writer, or a \
             reader of a file not made for live reading, has it open): {}",
            path.display()
        )
    );
    w.kill().unwrap();
    w.wait().unwrap();
    let f = opening(|| h5vec::open_file(&path)).unwrap();
    assert_eq!(h5vec::load_vector::<u32>(&f, "xs").unwrap(), [1, 2]);
}

/// A process started while a file was open held HDF5's lock on it
/// after the file was closed here (the descriptor was inherited). Here,
/// not among the library's unit tests: those fork (untrusted checks),
/// and a forked child keeps every descriptor, close-on-exec or not.
#[cfg(unix)]
#[test]
fn a_process_started_while_a_file_is_open_does_not_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.h5");
    for open in [0, 1, 2] {
        let f = opening(|| match open {
            0 => h5vec::create_file(&path),
            1 => h5vec::open_file(&path),
            _ => h5vec::open_file_rw(&path),
        })
        .unwrap();
        let mut child = start(Command::new("sleep").arg("30"));
        drop(f);
        // A process started holds even close-on-exec descriptors until its
        // `exec` has closed them, which Linux does after `spawn` returns
        // (the parent resumes when the new program's memory is in place):
        // a moment, longer on a busy machine, and any test of this binary
        // may have just started one. Without close-on-exec `sleep` holds
        // the file for its 30 s, so a few seconds of retries still fail.
        let started = std::time::Instant::now();
        let again = loop {
            let again = opening(|| h5vec::open_file_rw(&path));
            if again.is_ok() || started.elapsed() > std::time::Duration::from_secs(3) {
                break again;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(child.try_wait().unwrap().is_none(), "sleep ended early");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(again.is_ok(), "open {open}: {:?}", again.err());
    }
}
