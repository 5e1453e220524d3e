//! `h5vec-fuzz`: the mutation fuzzer's command line (see the crate docs and
//! `scripts/fuzz.sh`, which restarts it after hangs and aborts).
//!
//! ```text
//! h5vec-fuzz run --dir DIR [--seed S] [--start I] [--count N] [--until UNIX_SECS]
//!                [--timeout SECS] [--slow SECS] [--work TMPDIR] [--only I,J,...] [--checksum]
//!   (--checksum, also for replay, check and seeds: seeds written with
//!   checksums and VLS strings; any different load is a failure)
//! h5vec-fuzz replay --seed S --index I [--out FILE]   rebuild one mutant and load it
//! h5vec-fuzz check FILE...                            load saved inputs (seed from the name)
//! h5vec-fuzz seeds DIR                                write the valid seed files
//! h5vec-fuzz corpus DIR                               libFuzzer corpus for `cargo fuzz run load`
//! h5vec-fuzz region FILE OFFSET...                    data, heap or metadata byte of a seed file
//! h5vec-fuzz summary DIR                              counts of every run in DIR
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use h5vec_fuzz::{build_seeds, mutant, seeds, summary, targets, RunOpts};

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

/// Runs every entry of seed `seed` on `path`, printing one line per entry;
/// returns false if any entry panicked.
fn load_all(seed: &targets::Seed, path: &Path) -> bool {
    let scratch = std::env::temp_dir().join(format!("h5vec-fuzz-{}.h5", std::process::id()));
    let mut ok = true;
    for e in seed.entries {
        let t = std::time::Instant::now();
        let r = std::panic::catch_unwind(|| (seed.run)(e, path, &scratch));
        let secs = t.elapsed().as_secs_f64();
        let open = h5vec_fuzz::open_objects();
        if open > 0 {
            println!(
                "{e:<14} LEFT HDF5 objects open: {}",
                h5vec_fuzz::open_kinds()
            );
        }
        match r {
            Ok(Ok(true)) => println!("{e:<14} ok-equal ({secs:.3} s)"),
            Ok(Ok(false)) => println!("{e:<14} ok-DIFFERENT ({secs:.3} s)"),
            Ok(Err(m)) => println!("{e:<14} error ({secs:.3} s): {m}"),
            Err(_) => {
                println!("{e:<14} PANIC ({secs:.3} s)");
                ok = false;
            }
        }
    }
    let _ = std::fs::remove_file(scratch);
    ok
}

/// The seed named in a saved input's file name (`CLASS-SEEDNAME-sS-iI.h5`).
fn seed_of_file(path: &Path) -> Option<targets::Seed> {
    let stem = path.file_stem()?.to_str()?;
    seeds()
        .into_iter()
        .filter(|s| stem.contains(&format!("-{}-s", s.name)) || stem == s.name)
        .max_by_key(|s| s.name.len())
}

/// `/dev/shm` when there is one, else the temp directory.
fn default_work() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cmd = args.get(1).map(String::as_str).unwrap_or("");
    // Checksum mode: seeds written with checksums (and VLS strings); any
    // different load is a failure. Before any seed is built.
    let checksum = args.iter().any(|a| a == "--checksum");
    targets::set_checksum(checksum);
    let code = match cmd {
        "run" => {
            let dir: PathBuf = arg(&args, "--dir").unwrap_or_else(|| "fuzz-out".into());
            let start = arg(&args, "--start").unwrap_or(0u64);
            let count = arg(&args, "--count").unwrap_or(u64::MAX - start);
            let opts = RunOpts {
                dir,
                seed: arg(&args, "--seed").unwrap_or(1),
                start,
                end: start.saturating_add(count),
                until: arg::<u64>(&args, "--until").map(|s| UNIX_EPOCH + Duration::from_secs(s)),
                timeout: Duration::from_secs_f64(arg(&args, "--timeout").unwrap_or(10.0)),
                slow: Duration::from_secs_f64(arg(&args, "--slow").unwrap_or(1.0)),
                work: arg(&args, "--work").unwrap_or_else(default_work),
                only: arg::<String>(&args, "--only")
                    .map(|s| s.split(',').filter_map(|i| i.parse().ok()).collect()),
                checksum,
            };
            match h5vec_fuzz::run(&opts) {
                Ok(c) => {
                    eprintln!(
                        "mutants {}..{}: {} in {:.1} s: {:?}",
                        c.start, c.next, c.mutants, c.secs, c.by_mutant
                    );
                    0
                }
                Err(e) => {
                    eprintln!("h5vec-fuzz: {e}");
                    2
                }
            }
        }
        "replay" => {
            let seed = arg(&args, "--seed").unwrap_or(1u64);
            let index = arg(&args, "--index").unwrap_or(0u64);
            let work =
                std::env::temp_dir().join(format!("h5vec-fuzz-replay-{}", std::process::id()));
            let files = build_seeds(&work).unwrap_or_else(|e| panic!("{e}"));
            let m = mutant(seed, index, &files);
            let s = &seeds()[m.seed];
            let out: PathBuf = arg(&args, "--out").unwrap_or_else(|| work.join("mutant.h5"));
            std::fs::write(&out, &m.bytes).expect("write mutant");
            println!("seed {} ({}), {:?}: {}", m.seed, s.name, m.region, m.ops);
            println!("input: {}", out.display());
            let ok = load_all(s, &out);
            i32::from(!ok)
        }
        "check" => {
            let mut ok = true;
            for f in &args[2..] {
                let p = Path::new(f);
                match seed_of_file(p) {
                    Some(s) => {
                        println!("{f} ({})", s.name);
                        ok &= load_all(&s, p);
                    }
                    None => {
                        println!("{f}: no seed name in the file name");
                        ok = false;
                    }
                }
            }
            i32::from(!ok)
        }
        "seeds" => {
            let dir: PathBuf = args
                .get(2)
                .map(Into::into)
                .unwrap_or_else(|| "seeds".into());
            match build_seeds(&dir) {
                Ok(v) => {
                    for (s, (b, r)) in seeds().iter().zip(&v) {
                        println!(
                            "{:<26} {:>6} bytes, {:>5} metadata bytes, {} data ranges, {} heap collections, {} checksummed structures",
                            s.name,
                            b.len(),
                            r.meta_offsets.len(),
                            r.data.len(),
                            r.gheap.len(),
                            r.checked.len()
                        );
                    }
                    0
                }
                Err(e) => {
                    eprintln!("{e}");
                    2
                }
            }
        }
        "region" => {
            // h5vec-fuzz region FILE OFFSET...: where bytes of a seed file lie.
            let p = PathBuf::from(args.get(2).cloned().unwrap_or_default());
            let bytes = std::fs::read(&p).unwrap_or_default();
            let r = h5vec_fuzz::Regions::of(&p, &bytes);
            for o in &args[3..] {
                let o: u64 = o.parse().unwrap_or(0);
                let spans: Vec<_> = r
                    .checked
                    .iter()
                    .filter(|s| (s.0..s.1).contains(&(o as usize)))
                    .collect();
                println!("{o}: {:?}, checksummed spans {spans:?}", r.region(o));
            }
            0
        }
        "corpus" => {
            let dir: PathBuf = args
                .get(2)
                .map(Into::into)
                .unwrap_or_else(|| "fuzz/corpus/load".into());
            match std::fs::create_dir_all(&dir)
                .map_err(|e| e.to_string())
                .and_then(|_| h5vec_fuzz::write_corpus(&dir))
            {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("{e}");
                    2
                }
            }
        }
        "summary" => {
            let dir: PathBuf = args
                .get(2)
                .map(Into::into)
                .unwrap_or_else(|| "fuzz-out".into());
            match summary(&dir) {
                Ok(s) => {
                    print!("{s}");
                    0
                }
                Err(e) => {
                    eprintln!("{e}");
                    2
                }
            }
        }
        _ => {
            eprintln!("usage: h5vec-fuzz run|replay|check|seeds|summary (see the source header)");
            2
        }
    };
    std::process::exit(code);
}
