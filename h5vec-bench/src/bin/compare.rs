//! h5vec against the hand-written hdf5-metno columnar baseline, side by
//! side in one run.
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin compare -- --rows 1000000 --passes 5 [--deflate]
//! ```
//!
//! Options: `--rows N` (1,000,000), `--passes P` (5), `--warmup W` (1
//! unreported pass first), `--workload w1|w2` (w1), `--deflate` (add the
//! shuffle+deflate(4) rows), `--checksum` (add the h5vec rows again with
//! `SaveOptions::checksum(true)`: `h5vec-checksum`, `h5vec-deflate4-checksum`), `--zstd` (add the `h5vec-zstd` rows: Blosc +
//! Zstandard, setting [`ZSTD_SETTING`] or `H5VEC_BENCH_ZSTD`),
//! `--no-compound` (drop the compound reference),
//! `--only a,b` (run only these implementations, e.g. `h5vec` for
//! profiling), `--dir D` (temp files; default `$TMPDIR` or /tmp), `--keep`,
//! `--existing` (add the saves into an existing file, below).
//!
//! **One process, interleaved.** The data are generated once and every
//! implementation sees the same `Vec` at the same address. A pass runs every
//! implementation once (save, then load, then untimed verification), and
//! the order of implementations rotates from pass to pass, so slow drifts
//! of the shared 2-core VM and position effects hit all of them alike. One
//! process per run would pay the data generation per run and adds nothing
//! the heap discipline below does not already give: every phase starts from
//! cold memory (fresh `mmap`s for large buffers, HDF5 free lists and glibc
//! heap trimmed before each phase, see `h5vec_bench::harness`), as in a
//! fresh process, and HDF5's library state is shared by all alike.
//!
//! **What is timed.** save = `File::create` + the write + `File::close`
//! (data reach the page cache, no fsync). load = `File::open` + reading
//! into a complete `Vec<Record>` + closing the file. Untimed: generation,
//! removing the old file, verification (`==` against the input) and
//! dropping what was read.
//!
//! **Saves into an existing file** (`--existing`), after the load of the
//! same pass, over the file that save wrote (as a rerun of a program does):
//! save-existing = `File::create` truncating that file + the write +
//! close; save-replace = `File::open_rw` of the file holding the vector +
//! the write replacing it (h5vec: `SaveOptions::replace(true)`; the
//! hand-written code, for the same guarantee that the old vector stays
//! until the new one is complete, writes the new one under another name,
//! then unlinks the old one and moves the new one into its place) + close. Each is
//! verified (untimed) by loading it back. With `--synced`, the file is
//! first written to disk (untimed `fsync`), as a file saved long ago is;
//! without, its pages are still dirty in the page cache.
//!
//! The table shows median, min and max over the passes, and for h5vec the
//! ratio of its median to the baseline's median in the same group (plus
//! the median of the per-pass ratios, which is robust to drift).

use std::error::Error;
use std::path::{Path, PathBuf};

use h5vec::hdf5::File;
use h5vec::SaveOptions;
use h5vec_bench::baseline::{self, Layout};
use h5vec_bench::data::{self, Measurement};
use h5vec_bench::harness::{self, measure, stats, Sample};

type AnyResult<T> = Result<T, Box<dyn Error>>;
type SaveFn<'a, T> = Box<dyn Fn(&File, &[T]) -> AnyResult<()> + 'a>;
type LoadFn<'a, T> = Box<dyn Fn(&File) -> AnyResult<Vec<T>> + 'a>;

/// Name of the vector / top group in every file.
const NAME: &str = "v";

/// One implementation under test.
struct Case<'a, T> {
    /// Short name (`--only` matches it).
    name: &'static str,
    /// Comparison group: h5vec is compared with the baseline of its group.
    group: &'static str,
    /// Role in the group.
    role: Role,
    save: SaveFn<'a, T>,
    /// Save replacing the vector already in the file.
    replace: SaveFn<'a, T>,
    load: LoadFn<'a, T>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    H5vec,
    Baseline,
    Reference,
}

#[derive(Default)]
struct Results {
    save: Vec<Sample>,
    load: Vec<Sample>,
    bytes: u64,
    /// Saves over an existing file (`--existing`).
    save_existing: Vec<Sample>,
    save_replace: Vec<Sample>,
    /// File size after the replacing save.
    replace_bytes: u64,
}

struct Args {
    rows: usize,
    passes: usize,
    warmup: usize,
    workload: String,
    deflate: bool,
    /// Add the h5vec rows with `SaveOptions::checksum(true)` (`--checksum`).
    checksum: bool,
    /// Add the `h5vec-zstd` rows (Blosc + Zstandard).
    zstd: bool,
    compound: bool,
    only: Option<Vec<String>>,
    dir: PathBuf,
    keep: bool,
    /// Append one JSON line per measured phase to this file.
    jsonl: Option<PathBuf>,
    /// Outer pass number written into the JSON lines (set by scripts/compare.sh).
    pass_label: usize,
    /// Add the `clone-vec` floor (a deep `Vec::clone` of the input) per pass.
    clone: bool,
    /// Also time saves into an existing file (truncated, and replaced).
    existing: bool,
    /// Before those saves, write the existing file to disk (untimed `fsync`):
    /// a file written long ago rather than one whose pages are still dirty.
    synced: bool,
}

fn parse_args() -> AnyResult<Args> {
    let mut a = Args {
        rows: 1_000_000,
        passes: 5,
        warmup: 1,
        workload: "w1".into(),
        deflate: false,
        checksum: false,
        zstd: false,
        compound: true,
        only: None,
        dir: std::env::temp_dir(),
        keep: false,
        jsonl: None,
        pass_label: 0,
        clone: true,
        existing: false,
        synced: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--rows" => a.rows = val()?.replace(['_', ','], "").parse()?,
            "--passes" => a.passes = val()?.parse()?,
            "--warmup" => a.warmup = val()?.parse()?,
            "--workload" => a.workload = val()?,
            "--deflate" => a.deflate = true,
            "--checksum" => a.checksum = true,
            "--zstd" => a.zstd = true,
            "--no-compound" => a.compound = false,
            "--only" => a.only = Some(val()?.split(',').map(str::to_owned).collect()),
            "--dir" => a.dir = val()?.into(),
            "--keep" => a.keep = true,
            "--jsonl" => a.jsonl = Some(val()?.into()),
            "--pass-label" => a.pass_label = val()?.parse()?,
            "--no-clone" => a.clone = false,
            "--existing" => a.existing = true,
            "--synced" => a.synced = true,
            "-h" | "--help" => {
                println!(
                    "usage: compare [--rows N] [--passes P] [--warmup W] [--workload w1|w2] [--deflate] [--checksum] [--zstd] \
                     [--no-compound] [--only impl,impl] [--dir D] [--keep] [--jsonl FILE] [--pass-label K] [--no-clone] \
                     [--existing [--synced]]"
                );
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {arg}").into()),
        }
    }
    if a.passes == 0 {
        return Err("--passes must be >= 1".into());
    }
    Ok(a)
}

fn h5vec_case<'a, T: h5vec::H5Vector + 'a>(
    name: &'static str,
    group: &'static str,
    opts: SaveOptions,
) -> Case<'a, T> {
    // H5VEC_BENCH_STATISTICS=0: saves without per-chunk statistics (to
    // measure what they cost, SPEC.md section 14).
    let opts = if std::env::var("H5VEC_BENCH_STATISTICS").as_deref() == Ok("0") {
        opts.statistics(false)
    } else {
        opts
    };
    let replacing = opts.clone().replace(true);
    Case {
        name,
        group,
        role: Role::H5vec,
        save: Box::new(move |f, v| Ok(h5vec::save_vector_with(f, NAME, v, &opts)?)),
        replace: Box::new(move |f, v| Ok(h5vec::save_vector_with(f, NAME, v, &replacing)?)),
        load: Box::new(|f| Ok(h5vec::load_vector::<T>(f, NAME)?)),
    }
}

/// Name the hand-written code writes the new vector under before it
/// replaces the old one.
const NEW_NAME: &str = "v.new";

/// What hand-written code does for the guarantee of
/// `SaveOptions::replace(true)` (the old vector stays until the new one is
/// complete): write the new one under another name, then unlink the old one
/// and move the new one into its place.
fn replace_by_hand(f: &File, write: impl FnOnce(&str) -> AnyResult<()>) -> AnyResult<()> {
    write(NEW_NAME)?;
    f.unlink(NAME)?;
    f.relink(NEW_NAME, NAME)?;
    Ok(())
}

fn w1_cases<'a>(args: &Args) -> Vec<Case<'a, Measurement>> {
    let base = |name, group, layout| Case {
        name,
        group,
        role: Role::Baseline,
        save: Box::new(move |f: &File, v: &[Measurement]| {
            Ok(baseline::save_w1(f, NAME, v, layout)?)
        }),
        replace: Box::new(move |f: &File, v: &[Measurement]| {
            replace_by_hand(f, |name| Ok(baseline::save_w1(f, name, v, layout)?))
        }),
        load: Box::new(|f: &File| Ok(baseline::load_w1(f, NAME)?)),
    };
    let mut cases = vec![
        h5vec_case("h5vec", "uncompressed", SaveOptions::default()),
        base("baseline-chunk64k", "uncompressed", Layout::Chunked),
    ];
    if args.compound {
        cases.push(Case {
            name: "compound-contig",
            group: "uncompressed",
            role: Role::Reference,
            save: Box::new(|f, v| Ok(baseline::save_w1_compound(f, NAME, v, Layout::Contiguous)?)),
            replace: Box::new(|f, v| {
                replace_by_hand(f, |name| {
                    Ok(baseline::save_w1_compound(f, name, v, Layout::Contiguous)?)
                })
            }),
            load: Box::new(|f| Ok(baseline::load_w1_compound(f, NAME)?)),
        });
    }
    if args.deflate {
        cases.push(h5vec_case(
            "h5vec-deflate4",
            "deflate4",
            SaveOptions::default().deflate(4),
        ));
        cases.push(base("baseline-deflate4", "deflate4", Layout::Deflate(4)));
    }
    cases.extend(checksum_cases(args));
    if args.zstd {
        cases.push(zstd_case());
    }
    cases
}

/// With `--checksum`: the h5vec rows again with Fletcher32 checksums
/// (`h5vec-checksum`, and `h5vec-deflate4-checksum` with `--deflate`).
fn checksum_cases<'a, T: h5vec::H5Vector + 'a>(args: &Args) -> Vec<Case<'a, T>> {
    let mut cases = Vec::new();
    if args.checksum {
        let on = SaveOptions::default().checksum(true);
        cases.push(h5vec_case("h5vec-checksum", "uncompressed", on.clone()));
        if args.deflate {
            cases.push(h5vec_case(
                "h5vec-deflate4-checksum",
                "deflate4",
                on.deflate(4),
            ));
        }
    }
    cases
}

fn w2_cases<'a>(args: &Args) -> Vec<Case<'a, data::Event>> {
    let base = |name, group, layout| Case {
        name,
        group,
        role: Role::Baseline,
        save: Box::new(move |f: &File, v: &[data::Event]| {
            Ok(baseline::save_w2(f, NAME, v, layout)?)
        }),
        replace: Box::new(move |f: &File, v: &[data::Event]| {
            replace_by_hand(f, |name| Ok(baseline::save_w2(f, name, v, layout)?))
        }),
        load: Box::new(|f: &File| Ok(baseline::load_w2(f, NAME)?)),
    };
    let mut cases = Vec::new();
    #[cfg(feature = "w2")]
    cases.push(h5vec_case("h5vec", "uncompressed", SaveOptions::default()));
    #[cfg(not(feature = "w2"))]
    eprintln!(
        "note: h5vec W2 rows need `--features w2` (h5vec list columns); running the baseline only"
    );
    cases.push(base("baseline-chunk64k", "uncompressed", Layout::Chunked));
    if args.deflate {
        #[cfg(feature = "w2")]
        cases.push(h5vec_case(
            "h5vec-deflate4",
            "deflate4",
            SaveOptions::default().deflate(4),
        ));
        cases.push(base("baseline-deflate4", "deflate4", Layout::Deflate(4)));
    }
    #[cfg(feature = "w2")]
    cases.extend(checksum_cases(args));
    #[cfg(feature = "w2")]
    if args.zstd {
        cases.push(zstd_case());
    }
    cases
}

/// Blosc level and shuffle of the `h5vec-zstd` rows: the fastest setting
/// whose files are no larger than Parquet's zstd files of the same data
/// (results-1000000-zstd.md has the sizes of the settings tried).
/// Byte heaps (strings' `heap` and `CHARS`) take no shuffle whatever the
/// setting: Blosc's bit shuffle of single bytes only spreads them.
const ZSTD_SETTING: (u8, h5vec::BloscShuffle) = (1, h5vec::BloscShuffle::Bit);

/// h5vec with Blosc + Zstandard, compared with Parquet's zstd (no
/// hand-written baseline in its group). `H5VEC_BENCH_ZSTD=LEVEL[,byte|bit|none]`
/// overrides [`ZSTD_SETTING`].
fn zstd_case<'a, T: h5vec::H5Vector + 'a>() -> Case<'a, T> {
    use h5vec::BloscShuffle;
    let (mut level, mut shuffle) = ZSTD_SETTING;
    if let Ok(v) = std::env::var("H5VEC_BENCH_ZSTD") {
        let mut it = v.split(',');
        if let Some(l) = it.next().and_then(|l| l.trim().parse().ok()) {
            level = l;
        }
        shuffle = match it.next().map(str::trim) {
            Some("bit") => BloscShuffle::Bit,
            Some("none") => BloscShuffle::None,
            Some("byte") => BloscShuffle::Byte,
            _ => shuffle,
        };
    }
    let zstd = |s| h5vec::Compression::blosc(h5vec::BloscCompressor::Zstd, level, s);
    let opts = SaveOptions::default()
        .compression(zstd(shuffle))
        .compression_for(h5vec::DatasetRole::Bytes, zstd(BloscShuffle::None));
    h5vec_case("h5vec-zstd", "zstd", opts)
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Loads the vector of `case` from `path` (untimed) and checks it equals `input`.
fn verify<T: PartialEq>(case: &Case<'_, T>, input: &[T], path: &Path, what: &str) -> AnyResult<()> {
    let f = File::open(path)?;
    let back = (case.load)(&f).map_err(|e| format!("{}: {what}: load failed: {e}", case.name))?;
    f.close()?;
    if back.len() != input.len() || back != input {
        return Err(format!("{}: {what}: loaded data differ from the input", case.name).into());
    }
    Ok(())
}

/// One save + load + verification of `case` (and with `existing`, the
/// saves over the file it wrote).
fn run_once<T: PartialEq>(
    case: &Case<'_, T>,
    input: &[T],
    path: &Path,
    res: &mut Results,
    existing: bool,
    synced: bool,
) -> AnyResult<()> {
    let _ = std::fs::remove_file(path);
    harness::trim_heap();
    let (s, r) = measure(|| -> AnyResult<()> {
        let f = File::create(path)?;
        (case.save)(&f, input)?;
        f.close()?;
        Ok(())
    });
    r.map_err(|e| format!("{}: save failed: {e}", case.name))?;
    res.bytes = file_len(path);
    harness::trim_heap();
    let (l, back) = measure(|| -> AnyResult<Vec<T>> {
        let f = File::open(path)?;
        let v = (case.load)(&f)?;
        f.close()?;
        Ok(v)
    });
    let back = back.map_err(|e| format!("{}: load failed: {e}", case.name))?;
    if back.len() != input.len() || back != input {
        return Err(format!("{}: loaded data differ from the input", case.name).into());
    }
    drop(back);
    res.save.push(s);
    res.load.push(l);
    if !existing {
        return Ok(());
    }
    // The file from the save above is still there: `File::create` truncates it.
    let sync = || -> AnyResult<()> {
        if synced {
            std::fs::File::open(path)?.sync_all()?;
        }
        Ok(())
    };
    sync()?;
    harness::trim_heap();
    let (s, r) = measure(|| -> AnyResult<()> {
        let f = File::create(path)?;
        (case.save)(&f, input)?;
        f.close()?;
        Ok(())
    });
    r.map_err(|e| format!("{}: save into an existing file failed: {e}", case.name))?;
    verify(case, input, path, "save into an existing file")?;
    res.save_existing.push(s);
    sync()?;
    harness::trim_heap();
    let (s, r) = measure(|| -> AnyResult<()> {
        let f = File::open_rw(path)?;
        (case.replace)(&f, input)?;
        f.close()?;
        Ok(())
    });
    r.map_err(|e| format!("{}: replacing save failed: {e}", case.name))?;
    res.replace_bytes = file_len(path);
    verify(case, input, path, "replacing save")?;
    res.save_replace.push(s);
    Ok(())
}

/// What `run` needs to know about the workload.
struct Workload<'a, T> {
    /// Title of the table.
    title: &'a str,
    /// `w1` / `w2` (JSON lines).
    key: &'a str,
    input: &'a [T],
    /// Logical payload in bytes.
    payload: u64,
    /// Heap + inline bytes of the input `Vec` (what a save must not exceed 1.5x of).
    input_bytes: u64,
}

/// Appends one JSON line per sample of `res` to `out`.
fn json_lines<T>(
    out: &mut String,
    args: &Args,
    wl: &Workload<'_, T>,
    name: &str,
    phase: &str,
    samples: &[Sample],
    bytes: Option<u64>,
) {
    use std::fmt::Write;
    for (i, s) in samples.iter().enumerate() {
        let _ = writeln!(
            out,
            "{{\"impl\": \"rs-{name}\", \"workload\": \"{}\", \"n\": {}, \"phase\": \"{phase}\", \
             \"pass\": {}, \"rep\": {i}, \"seconds\": {:.6}, \"cpu_seconds\": {:.6}, \
             \"bytes_on_disk\": {}, \"payload_bytes\": {}, \"input_bytes\": {}, \
             \"peak_rss_delta_bytes\": {}, \"verified\": true}}",
            wl.key,
            args.rows,
            args.pass_label,
            s.secs,
            s.cpu,
            bytes.map_or("null".into(), |b| b.to_string()),
            wl.payload,
            wl.input_bytes,
            s.peak.map_or("null".into(), |b| b.to_string()),
        );
    }
}

fn run<T: PartialEq + Clone>(
    args: &Args,
    wl: Workload<'_, T>,
    cases: Vec<Case<'_, T>>,
) -> AnyResult<()> {
    let (workload, input) = (wl.title, wl.input);
    let cases: Vec<_> = cases
        .into_iter()
        .filter(|c| {
            args.only
                .as_ref()
                .is_none_or(|o| o.iter().any(|n| n == c.name))
        })
        .collect();
    if cases.is_empty() {
        return Err("no implementation selected".into());
    }
    std::fs::create_dir_all(&args.dir)?;
    let path = args
        .dir
        .join(format!("h5vec-bench-{}.h5", std::process::id()));
    let mut results: Vec<Results> = cases.iter().map(|_| Results::default()).collect();
    let mut clones: Vec<Sample> = Vec::new();
    let load0 = harness::loadavg();
    for pass in 0..args.warmup + args.passes {
        let warm = pass < args.warmup;
        eprint!("{} {}:", if warm { "warm-up" } else { "pass" }, pass);
        for k in 0..cases.len() {
            // Rotate the order from pass to pass.
            let i = (k + pass) % cases.len();
            let mut scratch = Results::default();
            let res = if warm { &mut scratch } else { &mut results[i] };
            run_once(&cases[i], input, &path, res, args.existing, args.synced)?;
            if let (Some(s), Some(l)) = (res.save.last(), res.load.last()) {
                eprint!(" {} {:.4}/{:.4}", cases[i].name, s.secs, l.secs);
            } else {
                eprint!(" {}", cases[i].name);
            }
            if args.keep {
                let keep = args
                    .dir
                    .join(format!("h5vec-bench-{}-{}.h5", wl.key, cases[i].name));
                std::fs::rename(&path, keep)?;
            }
        }
        if args.clone {
            // The floor of any reader returning `Vec<Record>`: a deep clone.
            harness::trim_heap();
            let (c, v) = measure(|| input.to_vec());
            drop(v);
            eprint!(" clone-vec {:.4}", c.secs);
            if !warm {
                clones.push(c);
            }
        }
        eprintln!();
    }
    let _ = std::fs::remove_file(&path);
    harness::trim_heap();
    if let Some(p) = &args.jsonl {
        let mut out = String::new();
        for (c, r) in cases.iter().zip(&results) {
            json_lines(&mut out, args, &wl, c.name, "write", &r.save, Some(r.bytes));
            json_lines(&mut out, args, &wl, c.name, "read", &r.load, Some(r.bytes));
            json_lines(
                &mut out,
                args,
                &wl,
                c.name,
                "write-existing",
                &r.save_existing,
                Some(r.bytes),
            );
            let replaced = Some(r.replace_bytes);
            json_lines(
                &mut out,
                args,
                &wl,
                c.name,
                "write-replace",
                &r.save_replace,
                replaced,
            );
        }
        json_lines(&mut out, args, &wl, "clone-vec", "clone", &clones, None);
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)?
            .write_all(out.as_bytes())?;
    }
    print_table(args, workload, wl.payload, &cases, &results, &load0);
    if !clones.is_empty() {
        let (med, min, max) = stats(&clones.iter().map(|s| s.secs).collect::<Vec<_>>());
        println!(
            "\nclone-vec (deep `Vec::clone` of the input, the floor of any loader returning objects): \
             median {} s (min {}, max {})",
            fmt_s(med),
            fmt_s(min),
            fmt_s(max)
        );
    }
    let saves: Vec<(&str, f64)> = cases
        .iter()
        .zip(&results)
        .filter(|(c, _)| c.role == Role::H5vec)
        .filter_map(|(c, r)| {
            let p: Vec<f64> = r
                .save
                .iter()
                .filter_map(|s| s.peak)
                .map(|b| b as f64)
                .collect();
            (!p.is_empty()).then(|| (c.name, stats(&p).0))
        })
        .collect();
    for (name, peak) in saves {
        println!(
            "peak RSS growth of {name} save: {:.1} MB = {:.2}x the input values ({:.1} MB in memory, target <= 1.5x)",
            peak / 1e6,
            peak / wl.input_bytes as f64,
            wl.input_bytes as f64 / 1e6
        );
    }
    Ok(())
}

fn fmt_s(x: f64) -> String {
    if x < 0.01 {
        format!("{x:.2e}")
    } else {
        format!("{x:.4}")
    }
}

fn print_table<T>(
    args: &Args,
    workload: &str,
    payload: u64,
    cases: &[Case<'_, T>],
    results: &[Results],
    load0: &str,
) {
    let (a, b, c) = hdf5::library_version();
    println!(
        "\n## {workload}: {} rows, {} passes (+{} warm-up), payload {:.1} MB\n",
        args.rows,
        args.passes,
        args.warmup,
        payload as f64 / 1e6
    );
    println!(
        "HDF5 {a}.{b}.{c}; GLIBC_TUNABLES={}; load average {load0} at start, {} at end\n",
        std::env::var("GLIBC_TUNABLES").unwrap_or_default(),
        harness::loadavg()
    );
    println!(
        "| phase | impl | median s | min s | max s | cpu s | MB/s | file MB | peak MB | vs baseline (wall) | vs baseline (cpu) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut summary = Vec::new();
    let phases: &[&str] = if args.existing {
        &["save", "load", "save-existing", "save-replace"]
    } else {
        &["save", "load"]
    };
    for &phase in phases {
        let samples = |r: &Results| -> Vec<Sample> {
            match phase {
                "save" => r.save.clone(),
                "load" => r.load.clone(),
                "save-existing" => r.save_existing.clone(),
                _ => r.save_replace.clone(),
            }
        };
        let wall = |r: &Results| -> Vec<f64> { samples(r).iter().map(|s| s.secs).collect() };
        let cpu = |r: &Results| -> Vec<f64> { samples(r).iter().map(|s| s.cpu).collect() };
        let base = cases
            .iter()
            .zip(results)
            .filter(|(c, _)| c.role == Role::Baseline)
            .map(|(c, r)| (c.group, r))
            .collect::<Vec<_>>();
        for (case, res) in cases.iter().zip(results) {
            let secs = wall(res);
            let (med, min, max) = stats(&secs);
            let cpu_med = stats(&cpu(res)).0;
            let peaks: Vec<f64> = samples(res)
                .iter()
                .filter_map(|s| s.peak)
                .map(|b| b as f64)
                .collect();
            let peak = if peaks.is_empty() {
                "–".into()
            } else {
                format!("{:.0}", stats(&peaks).0 / 1e6)
            };
            let bres = base.iter().find(|(g, _)| *g == case.group).map(|(_, r)| *r);
            let (ratio, ratio_cpu) = match (case.role, bres) {
                (Role::Baseline, _) => ("1 (baseline)".to_string(), "1".to_string()),
                (_, Some(bres)) => {
                    let bsecs = wall(bres);
                    let r_med = med / stats(&bsecs).0;
                    let paired: Vec<f64> = secs.iter().zip(&bsecs).map(|(x, y)| x / y).collect();
                    let r_pair = stats(&paired).0;
                    let r_cpu = cpu_med / stats(&cpu(bres)).0;
                    if case.role == Role::H5vec {
                        summary.push((case.group, phase, r_med, r_pair, r_cpu));
                    }
                    (
                        format!("**{r_med:.2}x** (paired {r_pair:.2}x)"),
                        format!("{r_cpu:.2}x"),
                    )
                }
                _ => ("–".into(), "–".into()),
            };
            println!(
                "| {phase} | {} | {} | {} | {} | {} | {:.0} | {:.1} | {peak} | {ratio} | {ratio_cpu} |",
                case.name,
                fmt_s(med),
                fmt_s(min),
                fmt_s(max),
                fmt_s(cpu_med),
                payload as f64 / 1e6 / med,
                if phase == "save-replace" { res.replace_bytes } else { res.bytes } as f64 / 1e6,
            );
        }
    }
    if !summary.is_empty() {
        println!(
            "\n| group | phase | h5vec / baseline (ratio of median wall times) | median of per-pass ratios | cpu-time ratio | issue 2: <= 1.25x | issue 6 target |"
        );
        println!("|---|---|---:|---:|---:|---|---|");
        for (group, phase, r, rp, rc) in summary {
            let met = |ok: bool| if ok { "met" } else { "not met" };
            let i6 = match (group, phase) {
                ("uncompressed", "save") => format!("<= 0.5x: {}", met(r <= 0.5)),
                ("uncompressed", "load") => format!("<= 0.6x: {}", met(r <= 0.6)),
                _ => "–".into(),
            };
            println!(
                "| {group} | {phase} | {r:.2}x | {rp:.2}x | {rc:.2}x | {} | {i6} |",
                met(r <= 1.25)
            );
        }
    }
    if args.existing {
        print_existing(cases, results);
    }
    println!(
        "\nsave = File::create + write + close (no fsync); load = File::open + read into Vec<Record> + close. \
         Every phase starts from cold memory (mmap_threshold tunable, H5garbage_collect + malloc_trim). \
         Loaded data verified == input (untimed). MB/s = logical payload / median wall time; \
         cpu s = median process CPU time (user + sys) of the phase."
    );
}

/// Median extra time of saves into an existing file over fresh saves, per
/// pass (the same pass's fresh save), in seconds.
fn extra(over: &[Sample], fresh: &[Sample]) -> f64 {
    let d: Vec<f64> = over
        .iter()
        .zip(fresh)
        .map(|(o, f)| o.secs - f.secs)
        .collect();
    stats(&d).0
}

/// The cost of saving into an existing file: per implementation, the median
/// per-pass extra over the fresh save, and h5vec's extra against its group's
/// baseline's (issue 18 target 1: no more).
fn print_existing<T>(cases: &[Case<'_, T>], results: &[Results]) {
    println!(
        "\n| impl | fresh save s | truncated (File::create) s | extra s | replaced s | extra s | \
         extra truncated vs baseline's | extra replaced vs baseline's |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|---|");
    let base = |g: &str| {
        cases
            .iter()
            .zip(results)
            .find(|(c, _)| c.role == Role::Baseline && c.group == g)
            .map(|(_, r)| r)
    };
    for (case, r) in cases.iter().zip(results) {
        if r.save_existing.is_empty() {
            continue;
        }
        let med = |s: &[Sample]| stats(&s.iter().map(|x| x.secs).collect::<Vec<_>>()).0;
        let (et, er) = (
            extra(&r.save_existing, &r.save),
            extra(&r.save_replace, &r.save),
        );
        let vs = |mine: f64, theirs: f64| {
            let ok = mine <= theirs + 0.002;
            format!(
                "{:+.4} vs {:+.4} s: {}",
                mine,
                theirs,
                if ok { "met" } else { "not met" }
            )
        };
        let (vt, vr) = match (case.role, base(case.group)) {
            (Role::H5vec, Some(b)) => (
                vs(et, extra(&b.save_existing, &b.save)),
                vs(er, extra(&b.save_replace, &b.save)),
            ),
            _ => ("–".into(), "–".into()),
        };
        println!(
            "| {} | {} | {} | {:+.4} | {} | {:+.4} | {vt} | {vr} |",
            case.name,
            fmt_s(med(&r.save)),
            fmt_s(med(&r.save_existing)),
            et,
            fmt_s(med(&r.save_replace)),
            er,
        );
    }
    println!(
        "\nextra = median over passes of (save into the existing file - fresh save of the same pass); \
         'met' allows 2 ms of noise."
    );
}

fn main() -> AnyResult<()> {
    harness::ensure_malloc_tunable();
    let args = parse_args()?;
    match args.workload.as_str() {
        "w1" | "measurements" => {
            eprintln!("generating {} W1 rows", args.rows);
            let input = data::gen_w1(args.rows);
            let wl = Workload {
                title: "W1 Measurement",
                key: "w1",
                payload: data::W1_PAYLOAD * args.rows as u64,
                input_bytes: std::mem::size_of_val(&input[..]) as u64,
                input: &input,
            };
            run(&args, wl, w1_cases(&args))
        }
        "w2" | "events" => {
            eprintln!("generating {} W2 rows", args.rows);
            let input = data::gen_w2(args.rows);
            let wl = Workload {
                title: "W2 Event",
                key: "w2",
                payload: data::w2_payload(&input),
                input_bytes: data::w2_heap_bytes(&input),
                input: &input,
            };
            run(&args, wl, w2_cases(&args))
        }
        w => Err(format!("unknown workload {w} (w1 or w2)").into()),
    }
}
