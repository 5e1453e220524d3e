//! Untrusted files checked in a child process (`h5vec::open_untrusted`,
//! `check_isolated`, `Isolation`): every input of tests/fuzz/KNOWN.md (HDF5
//! crashes, hangs and leaks) is an error and the test process lives on;
//! good files pass and load; a crash, an abort, a hang and an allocation
//! in the child become errors naming the signal or the limit; no child
//! process or descriptor stays behind.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use h5vec::{__IsolationFault as Fault, ContainerKind, H5Vector, Isolation};

/// The tests count this process's descriptors and children: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// File names listed in tests/fuzz/KNOWN.md.
fn known() -> Vec<String> {
    let text = std::fs::read_to_string(fuzz_dir().join("KNOWN.md")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

/// Open descriptors of this process.
fn fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Children of this process that ended and were not reaped.
fn zombies() -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, the rest not.
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let f: Vec<&str> = rest.split(' ').collect();
        if f.len() > 1 && f[1] == me && f[0] == "Z" {
            found.push(stat);
        }
    }
    found
}

/// Scratch directories of this process's isolated checks still there.
fn scratch_dirs() -> Vec<String> {
    let prefix = format!("h5vec-isolated-{}-", std::process::id());
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

fn quick() -> Isolation {
    Isolation::default().time_limit(Duration::from_secs(10))
}

#[test]
fn every_known_input_is_an_error_through_the_isolated_check() {
    let _one = serial();
    let names = known();
    // KNOWN.md lists 6 inputs at this writing; fewer as HDF5 bugs get
    // cheap checks (each then loads as an error everywhere).
    assert!(!names.is_empty(), "no inputs read from KNOWN.md");
    let before = fds();
    let mut passed = Vec::new();
    for name in &names {
        let path = fuzz_dir().join(name);
        let t = Instant::now();
        // Those cut from appended seeds crash or leak on an append only.
        let mut iso = quick().appends(name.contains("_appended_"));
        if name.starts_with("hang-") {
            iso = iso.time_limit(Duration::from_secs(2));
        }
        match h5vec::open_untrusted_with(&path, &iso) {
            Ok(_) => passed.push(name.clone()),
            Err(e) => {
                let m = e.to_string();
                assert!(!m.is_empty());
                println!("{name} ({:.1} s): {m}", t.elapsed().as_secs_f64());
            }
        }
    }
    assert!(passed.is_empty(), "opened without an error: {passed:?}");
    assert_eq!(fds(), before, "descriptors left open");
    assert_eq!(scratch_dirs(), Vec::<String>::new());
    assert_eq!(zombies(), Vec::<String>::new());
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Reading {
    id: u64,
    name: String,
    value: Option<f64>,
    tags: Vec<String>,
    pos: [f32; 3],
}

fn readings(n: u64) -> Vec<Reading> {
    (0..n)
        .map(|i| Reading {
            id: i,
            name: format!("r{i}"),
            value: (i % 3 != 0).then_some(i as f64 * 0.5),
            tags: (0..i % 4).map(|k| format!("t{k}")).collect(),
            pos: [i as f32, 1.0, -2.5],
        })
        .collect()
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Trade {
    id: u32,
    price: Option<f64>,
    venue: String,
}

/// A file of a vector of records, a deflate vector of numbers, an h5col
/// table and a VLS array (in a group).
fn good_file(dir: &Path) -> PathBuf {
    let path = dir.join("good.h5");
    let f = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&f, "readings", &readings(3000)).unwrap();
    let opts = h5vec::SaveOptions::default().deflate(4).chunk_length(1000);
    h5vec::save_vector_with(&f, "xs", &(0..5000u32).collect::<Vec<_>>(), &opts).unwrap();
    let trades = [
        Trade {
            id: 1,
            price: Some(9.5),
            venue: "X".into(),
        },
        Trade {
            id: 2,
            price: None,
            venue: "Y".into(),
        },
    ];
    h5vec::h5col::save_table(&f, "trades", &trades).unwrap();
    let g = h5vec::create_group(&f, "run").unwrap();
    h5vec::vls::save_strings(&g, "names", &[Some("a".into()), None, Some("ccc".into())]).unwrap();
    path
}

#[test]
fn good_files_pass_and_open_untrusted_loads_them() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = good_file(dir.path());
    let before = fds();
    let found = h5vec::check_isolated(&path, &quick()).unwrap();
    let listed: Vec<_> = found
        .iter()
        .map(|c| (c.path.as_str(), c.kind, c.rows, c.problem.clone()))
        .collect();
    assert_eq!(
        listed,
        [
            ("/readings", ContainerKind::Vector, 3000, None),
            ("/run/names", ContainerKind::VlsArray, 3, None),
            ("/trades", ContainerKind::Table, 2, None),
            ("/xs", ContainerKind::Vector, 5000, None),
        ]
    );
    let only = h5vec::check_isolated(&path, &quick().only("/run")).unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].path, "/run/names");
    let e = h5vec::check_isolated(&path, &quick().only("/nothing")).unwrap_err();
    assert!(matches!(e.kind(), h5vec::ErrorKind::NotFound(_)), "{e}");
    assert_eq!(fds(), before, "descriptors left open");

    // An append to a copy: the original is unchanged, no copy stays.
    let with_appends = h5vec::check_isolated(&path, &quick().appends(true)).unwrap();
    assert_eq!(with_appends, found);
    assert_eq!(scratch_dirs(), Vec::<String>::new());

    let file = h5vec::open_untrusted(&path).unwrap();
    assert_eq!(
        h5vec::load_vector::<Reading>(&file, "readings").unwrap(),
        readings(3000)
    );
    assert_eq!(
        h5vec::load_vector::<u32>(&file, "xs").unwrap(),
        (0..5000u32).collect::<Vec<_>>()
    );
    let trades: Vec<Trade> = h5vec::h5col::load_table(&file, "trades").unwrap();
    assert_eq!(trades.len(), 2);
    assert_eq!(trades[1].venue, "Y");
    let names = h5vec::vls::load_strings(&file.group("run/names").unwrap()).unwrap();
    assert_eq!(names, [Some("a".into()), None, Some("ccc".into())]);
    // Read-only, as open_file.
    assert!(h5vec::append_vector(&file, "xs", &[1u32]).is_err());
    drop(file);
    assert_eq!(zombies(), Vec::<String>::new());
}

#[test]
fn a_damaged_container_is_the_error_of_its_load() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = good_file(dir.path());
    {
        let f = h5vec::open_file_rw(&path).unwrap();
        f.dataset("xs/metadata/count")
            .unwrap()
            .write_scalar(&9000i64)
            .unwrap();
    }
    let found = h5vec::check_isolated(&path, &quick()).unwrap();
    let problems: Vec<_> = found
        .iter()
        .filter_map(|c| Some((c.path.as_str(), c.problem.as_deref()?)))
        .collect();
    assert_eq!(
        problems,
        [(
            "/xs",
            "$ (/xs/data/values): expected at least 9000 rows, found 5000"
        )]
    );
    let e = h5vec::open_untrusted(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        "$ (/xs/data/values): expected at least 9000 rows, found 5000"
    );
    assert!(
        matches!(e.kind(), h5vec::ErrorKind::Mismatch { .. }),
        "{e:?}"
    );
    // What an ordinary load says.
    let f = h5vec::open_file(&path).unwrap();
    let direct = h5vec::load_vector::<u32>(&f, "xs").unwrap_err();
    assert_eq!(direct.to_string(), e.to_string());
}

#[test]
fn not_hdf5_is_an_error_from_the_child() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("text.h5");
    std::fs::write(&path, "just text, no superblock\n".repeat(100)).unwrap();
    let e = h5vec::open_untrusted(&path).unwrap_err();
    let direct = h5vec::open_file(&path).unwrap_err();
    assert_eq!(e.to_string(), direct.to_string());
}

/// A crash, an abort, a hang and a runaway allocation in the child.
#[test]
fn every_way_the_child_can_fail_is_an_error() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = good_file(dir.path());
    let p = path.display().to_string();
    let before = fds();
    assert!(h5vec::check_isolated(&path, &quick().appends(true).__fault(Fault::Segv)).is_err());
    assert_eq!(
        scratch_dirs(),
        Vec::<String>::new(),
        "the parent removes the child's copy"
    );
    let fail = |iso: Isolation| h5vec::check_isolated(&path, &iso).unwrap_err().to_string();

    let m = fail(quick().__fault(Fault::Segv));
    assert!(
        m.starts_with(&format!(
            "$ ({p}): invalid data: isolated check killed by SIGSEGV"
        )),
        "{m}"
    );
    let m = fail(quick().__fault(Fault::Abort));
    assert!(m.contains("killed by SIGABRT"), "{m}");

    let t = Instant::now();
    let m = fail(
        quick()
            .time_limit(Duration::from_millis(300))
            .__fault(Fault::Hang),
    );
    assert_eq!(
        m,
        format!("$ ({p}): invalid data: isolated check: still running after the time limit of 300ms, killed")
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());

    let m = fail(quick().memory_limit(64 << 20).__fault(Fault::Allocate));
    assert!(m.contains("killed by SIGABRT"), "{m}");
    assert!(m.contains("memory budget (67108864 bytes"), "{m}");
    assert!(
        m.contains("memory allocation of"),
        "Rust's message from the child: {m}"
    );

    // The caller goes on: the same file still checks and opens.
    assert!(h5vec::open_untrusted_with(&path, &quick()).is_ok());
    assert_eq!(fds(), before, "descriptors left open");
    assert_eq!(zombies(), Vec::<String>::new());
}

/// A file whose check needs more memory than the budget: an error (the
/// default budget passes files: `good_files_pass_...`).
#[test]
fn a_check_past_the_memory_budget_is_an_error() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.h5");
    let f = h5vec::create_file(&path).unwrap();
    // One 64 MiB chunk (a few KiB in the file), decoded whole by a read;
    // buffers this large are mapped and unmapped, not kept by malloc for
    // the child to reuse.
    let rows = 1u64 << 23;
    let opts = h5vec::SaveOptions::default()
        .deflate(1)
        .chunk_length(rows as usize);
    h5vec::save_vector_with(&f, "xs", &vec![7u64; rows as usize], &opts).unwrap();
    drop(f);
    let budget = quick().memory_limit(16 << 20);
    let e = h5vec::open_untrusted_with(&path, &budget).unwrap_err();
    let m = e.to_string();
    // Rust's allocation failure (an abort), or h5vec's fallible one.
    assert!(
        m.contains("memory budget (16777216 bytes") || m.contains("cannot allocate 67108864 bytes"),
        "{m}"
    );
    // The child asked for the chunk's buffer first: no batch was read.
    assert!(!m.contains("still running"), "{m}");
}

/// Checks on several threads at once, one of them hanging, while another
/// thread loads (h5vec's worker pool busy in the parent): no child waits
/// for the parent's threads, and no check waits for another's child. (The
/// window this guards, another check's child inheriting a pipe, lasts
/// microseconds: the test passed without the fix too; it is a smoke test.)
#[test]
fn checks_run_beside_other_threads() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = good_file(dir.path());
    let before = fds();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let loader = s.spawn(|| {
            let f = h5vec::open_file(&path).unwrap();
            let mut loads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(h5vec::load_vector::<u32>(&f, "xs").unwrap().len(), 5000);
                loads += 1;
            }
            loads
        });
        let hang = s.spawn(|| {
            let iso = quick()
                .time_limit(Duration::from_secs(4))
                .__fault(Fault::Hang);
            h5vec::check_isolated(&path, &iso).unwrap_err().to_string()
        });
        let checkers: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    let mut slowest = Duration::ZERO;
                    for _ in 0..5 {
                        let t = Instant::now();
                        let found = h5vec::check_isolated(&path, &quick()).unwrap();
                        assert_eq!(found.len(), 4);
                        slowest = slowest.max(t.elapsed());
                    }
                    slowest
                })
            })
            .collect();
        // Joined before any assertion: a failed one must not leave the
        // loader looping (the scope waits for it).
        let slowest: Vec<_> = checkers.into_iter().map(|c| c.join()).collect();
        let hung = hang.join();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(loader.join().unwrap() > 0);
        for s in slowest {
            let s = s.unwrap();
            // Far below the hanging child's 4 s.
            assert!(s < Duration::from_secs(3), "{s:?}");
        }
        let hung = hung.unwrap();
        assert!(hung.contains("time limit of 4s"), "{hung}");
    });
    assert_eq!(fds(), before, "descriptors left open");
    assert_eq!(zombies(), Vec::<String>::new());
}

/// Every input of tests/fuzz (fixed ones too) through the isolated check:
/// it returns (an error, or the containers with their problems), leaving
/// no descriptor or child behind.
#[test]
fn every_fuzz_input_returns_through_the_isolated_check() {
    let _one = serial();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(fuzz_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "h5"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 20, "{inputs:?}");
    let before = fds();
    for path in &inputs {
        let iso = quick().time_limit(Duration::from_secs(3));
        match h5vec::check_isolated(path, &iso) {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(found) => assert!(!found.is_empty(), "{}: no container", path.display()),
        }
    }
    assert_eq!(fds(), before, "descriptors left open");
    assert_eq!(zombies(), Vec::<String>::new());
}
