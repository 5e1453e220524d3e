//! The cost of checking a file in a child process before using it
//! (`h5vec::open_untrusted`, issue 28), on W1:
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin isolated -- [ROWS] [REPS] [DIR]
//! ```
//!
//! Saves `ROWS` W1 rows (default 1,000,000, default options) into
//! `DIR/w1.h5`, then measures, interleaved in rotating order, `REPS`
//! repetitions (default 9) after one warm-up of:
//!
//! - `load`: `open_file` + `load_vector::<Measurement>` (the baseline);
//! - `check in process`: `open_file`, `find_containers` and every row read
//!   through `h5vec::arrow::batches` of 65,536 rows, in this process: what
//!   the isolated check's child runs;
//! - `check_isolated`: the same check in a forked child (default budgets);
//! - `open_untrusted + load`: the isolated check, then the typed load.
//!
//! Prints medians, min and max, and the ratios to the baseline, as Markdown.

use std::path::Path;
use std::time::Instant;

use h5vec_bench::data::{self, Measurement};
use h5vec_bench::harness::{loadavg, stats};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

const BATCH: usize = 65_536;

const PHASES: [&str; 4] = [
    "load (open_file + load_vector)",
    "check in process (find_containers + arrow::batches)",
    "check_isolated (forked child)",
    "open_untrusted + load_vector",
];

fn main() -> AnyResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: usize = args.first().map_or(Ok(1_000_000), |s| s.parse())?;
    let reps: usize = args.get(1).map_or(Ok(9), |s| s.parse())?;
    let dir = args
        .get(2)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("h5vec-isolated-bench"));
    std::fs::create_dir_all(&dir)?;
    let w1 = dir.join("w1.h5");
    {
        let f = h5vec::create_file(&w1)?;
        h5vec::save_vector(&f, "measurements", &data::gen_w1(rows))?;
    }
    let bytes = std::fs::metadata(&w1)?.len();
    println!("# The isolated check's cost: W1, {rows} rows\n");
    println!(
        "cpus: {}; load average at start: {}; file: {:.1} MiB\n",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        loadavg(),
        bytes as f64 / (1u64 << 20) as f64
    );
    let mut times = vec![Vec::new(); PHASES.len()];
    for rep in 0..=reps {
        for k in 0..PHASES.len() {
            let phase = (k + rep) % PHASES.len();
            let t = Instant::now();
            let n = run(phase, &w1)?;
            let secs = t.elapsed().as_secs_f64();
            assert!(n == rows || phase == 2, "{n} rows");
            if rep > 0 {
                times[phase].push(secs);
            }
        }
    }
    println!("{reps} repetitions after 1 warm-up, interleaved; seconds\n");
    println!("| phase | median | min | max | ratio to load |");
    println!("|---|---:|---:|---:|---:|");
    let base = stats(&times[0]).0;
    for (name, t) in PHASES.iter().zip(&times) {
        let (med, lo, hi) = stats(t);
        println!(
            "| {name} | {med:.4} | {lo:.4} | {hi:.4} | {:.2}x |",
            med / base
        );
    }
    println!("\nload average at end: {}", loadavg());
    Ok(())
}

/// One phase; returns the rows it produced (phase 2: the rows checked).
fn run(phase: usize, path: &Path) -> AnyResult<usize> {
    Ok(match phase {
        0 => {
            let f = h5vec::open_file(path)?;
            h5vec::load_vector::<Measurement>(&f, "measurements")?.len()
        }
        1 => {
            let f = h5vec::open_file(path)?;
            let mut n = 0;
            for c in h5vec::find_containers(&f)? {
                let name = c.path.trim_start_matches('/');
                for b in h5vec::arrow::batches(&f, name, BATCH)? {
                    n += b?.num_rows();
                }
            }
            n
        }
        2 => {
            let found = h5vec::check_isolated(path, &h5vec::Isolation::default())?;
            assert!(found.iter().all(|c| c.problem.is_none()));
            found.iter().map(|c| c.rows as usize).sum()
        }
        _ => {
            let f = h5vec::open_untrusted(path)?;
            h5vec::load_vector::<Measurement>(&f, "measurements")?.len()
        }
    })
}
