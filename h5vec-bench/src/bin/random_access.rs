//! Random access: `load_range` of a few rows at random offsets of a large
//! deflated W2 vector, each through a freshly opened file.
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin random_access -- \
//!     [--rows 10000000] [--range 1000] [--reads 101] [--warmup 5] [--dir D] \
//!     [--offsets FILE] [--jsonl FILE] [--reuse]
//! ```
//!
//! Untimed: the W2 rows of the shared generator (`data::gen_w2`) are saved
//! with `SaveOptions::default().deflate(4)` into `D/random-access-ROWS.h5`
//! (kept with `--reuse` when it exists), and `--reads` offsets are drawn
//! from a fixed seed (`data::mix`), written one a line to `--offsets` so the
//! Parquet peer (`scripts/random_access.py`) reads the same rows.
//!
//! Timed per read, in this order (after `--warmup` unreported reads):
//! - **open+range**: `h5vec::open_file` + `load_range::<Event>` of `--range`
//!   rows + closing the file (the target: a fresh open each time);
//! - **range**: `load_range` alone on a file opened once (what the open
//!   costs is the difference);
//! - **open**: `h5vec::open_file` + `vector_len` + close (opening and the
//!   vector's checks without reading rows).
//!
//! Every read is verified (untimed) against the generated rows. The file
//! stays in the page cache (a warm cache: the read cost, not the disk's).
//! Prints the median, min, p90 and max latency and rows/s per mode, and
//! with `--jsonl` appends one JSON line per read.

use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

use h5vec::SaveOptions;
use h5vec_bench::data::{self, Event};
use h5vec_bench::harness::{loadavg, stats};

type AnyResult<T> = Result<T, Box<dyn Error>>;

const NAME: &str = "v";

struct Args {
    rows: usize,
    range: usize,
    reads: usize,
    warmup: usize,
    dir: PathBuf,
    offsets: Option<PathBuf>,
    jsonl: Option<PathBuf>,
    reuse: bool,
}

fn parse_args() -> AnyResult<Args> {
    let mut a = Args {
        rows: 10_000_000,
        range: 1000,
        reads: 101,
        warmup: 5,
        dir: std::env::temp_dir(),
        offsets: None,
        jsonl: None,
        reuse: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--rows" => a.rows = val()?.replace(['_', ','], "").parse()?,
            "--range" => a.range = val()?.parse()?,
            "--reads" => a.reads = val()?.parse()?,
            "--warmup" => a.warmup = val()?.parse()?,
            "--dir" => a.dir = val()?.into(),
            "--offsets" => a.offsets = Some(val()?.into()),
            "--jsonl" => a.jsonl = Some(val()?.into()),
            "--reuse" => a.reuse = true,
            "-h" | "--help" => {
                println!(
                    "usage: random_access [--rows N] [--range R] [--reads K] [--warmup W] [--dir D] \
                     [--offsets FILE] [--jsonl FILE] [--reuse]"
                );
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {arg}").into()),
        }
    }
    if a.reads == 0 || a.range == 0 || a.range > a.rows {
        return Err("need --reads >= 1 and 1 <= --range <= --rows".into());
    }
    Ok(a)
}

/// Latencies of one mode, in seconds.
struct Mode {
    name: &'static str,
    secs: Vec<f64>,
}

fn p90(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[(v.len() * 9 / 10).min(v.len() - 1)]
}

fn main() -> AnyResult<()> {
    let a = parse_args()?;
    std::fs::create_dir_all(&a.dir)?;
    let path = a.dir.join(format!("random-access-{}.h5", a.rows));
    eprintln!("generating {} W2 rows", a.rows);
    let input: Vec<Event> = data::gen_w2(a.rows);
    let opts = SaveOptions::default().deflate(4);
    if !(a.reuse && path.exists()) {
        let t = Instant::now();
        let f = h5vec::create_file(&path)?;
        h5vec::save_vector_with(&f, NAME, &input, &opts)?;
        f.close()?;
        eprintln!(
            "saved {} ({:.1} MB) in {:.2} s",
            path.display(),
            std::fs::metadata(&path)?.len() as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
    }
    let span = (a.rows - a.range + 1) as u64;
    let offsets: Vec<u64> = (0..(a.warmup + a.reads) as u64)
        .map(|k| data::mix(90, k) % span)
        .collect();
    if let Some(p) = &a.offsets {
        let text: String = offsets[a.warmup..]
            .iter()
            .map(|o| format!("{o}\n"))
            .collect();
        std::fs::write(p, text)?;
    }
    let r = a.range as u64;
    let check = |off: u64, got: &[Event]| -> AnyResult<()> {
        let want = &input[off as usize..off as usize + a.range];
        if got != want {
            return Err(format!("rows {off}..{} differ from the input", off + r).into());
        }
        Ok(())
    };
    let load0 = loadavg();
    let mut modes = [
        Mode {
            name: "open+range",
            secs: Vec::new(),
        },
        Mode {
            name: "range",
            secs: Vec::new(),
        },
        Mode {
            name: "open",
            secs: Vec::new(),
        },
    ];
    // open+range: a fresh open per read.
    for (k, &off) in offsets.iter().enumerate() {
        let t = Instant::now();
        let f = h5vec::open_file(&path)?;
        let got: Vec<Event> = h5vec::load_range(&f, NAME, off..off + r)?;
        f.close()?;
        let s = t.elapsed().as_secs_f64();
        check(off, &got)?;
        if k >= a.warmup {
            modes[0].secs.push(s);
        }
    }
    // range: one open for all reads.
    let f = h5vec::open_file(&path)?;
    for (k, &off) in offsets.iter().enumerate() {
        let t = Instant::now();
        let got: Vec<Event> = h5vec::load_range(&f, NAME, off..off + r)?;
        let s = t.elapsed().as_secs_f64();
        check(off, &got)?;
        if k >= a.warmup {
            modes[1].secs.push(s);
        }
    }
    f.close()?;
    // open: what opening and the vector's checks cost alone.
    for k in 0..offsets.len() {
        let t = Instant::now();
        let f = h5vec::open_file(&path)?;
        let n = h5vec::vector_len(&f, NAME)?;
        f.close()?;
        let s = t.elapsed().as_secs_f64();
        if n != a.rows as u64 {
            return Err(format!("vector_len {n}, expected {}", a.rows).into());
        }
        if k >= a.warmup {
            modes[2].secs.push(s);
        }
    }
    println!(
        "\n## h5vec random access: {} rows of W2 deflate(4), {} rows per read, {} reads (+{} warm-up)\n",
        a.rows, a.range, a.reads, a.warmup
    );
    println!(
        "file {:.1} MB; load average {load0} at start, {} at end\n",
        std::fs::metadata(&path)?.len() as f64 / 1e6,
        loadavg()
    );
    println!("| mode | median ms | min ms | p90 ms | max ms | rows/s (median) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for m in &modes {
        let (med, min, max) = stats(&m.secs);
        let rows_s = if m.name == "open" {
            "–".to_string()
        } else {
            format!("{:.0}", a.range as f64 / med)
        };
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {rows_s} |",
            m.name,
            med * 1e3,
            min * 1e3,
            p90(&m.secs) * 1e3,
            max * 1e3
        );
    }
    if let Some(p) = &a.jsonl {
        use std::fmt::Write as _;
        let mut out = String::new();
        let size = std::fs::metadata(&path)?.len();
        for m in &modes {
            for (i, s) in m.secs.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{{\"impl\": \"rs-h5vec-deflate4\", \"mode\": \"{}\", \"n\": {}, \"range\": {}, \
                     \"read\": {i}, \"offset\": {}, \"seconds\": {s:.6}, \"bytes_on_disk\": {size}}}",
                    m.name,
                    a.rows,
                    a.range,
                    offsets[a.warmup + i]
                );
            }
        }
        use std::io::Write as _;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)?
            .write_all(out.as_bytes())?;
    }
    Ok(())
}
