//! Reading without the Rust type, side by side with the typed load, in one
//! process (issue 13's targets):
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin untyped -- ROWS REPS DIR
//! cargo run --release -p h5vec-bench --bin untyped -- load w1|w2 FILE
//! ```
//!
//! Saves W1 and W2 (`ROWS` rows each, default options) into `DIR/w1.h5`
//! and `DIR/w2.h5` (kept for `h5vec-bench/scripts/untyped.sh`, which runs
//! the `h5vec` command on them), then measures, interleaved in rotating
//! order, `REPS` repetitions after one warm-up of:
//!
//! - `load_vector::<T>`: the typed load (the baseline);
//! - `h5vec::arrow::read_vector`: the whole vector as one Arrow batch;
//! - `h5vec::arrow::batches` of 65,536 rows, every batch dropped after
//!   it is built: what `h5vec validate` does.
//!
//! Each phase opens the file afresh. Prints medians and the ratios to the
//! typed load as a Markdown table.
//!
//! `load w1|w2 FILE` runs one typed load of the file's vector and exits:
//! the baseline of `untyped.sh`'s process-level timings of the command.

use std::path::Path;
use std::time::Instant;

use h5vec_bench::data::{self, Event, Measurement};
use h5vec_bench::harness::stats;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

const BATCH: usize = 65_536;

fn main() -> AnyResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("load") {
        let (wl, path) = match (args.get(1), args.get(2)) {
            (Some(w), Some(p)) => (w.as_str(), Path::new(p)),
            _ => return Err("usage: untyped load w1|w2 FILE".into()),
        };
        let n = match wl {
            "w1" => run::<Measurement>(0, path, "measurements")?,
            _ => run::<Event>(0, path, "events")?,
        };
        println!("{n}");
        return Ok(());
    }
    let rows: usize = args.first().map_or(Ok(1_000_000), |s| s.parse())?;
    let reps: usize = args.get(1).map_or(Ok(7), |s| s.parse())?;
    let dir = args
        .get(2)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("h5vec-untyped"));
    std::fs::create_dir_all(&dir)?;

    let w1 = dir.join("w1.h5");
    let w2 = dir.join("w2.h5");
    {
        let f = h5vec::create_file(&w1)?;
        h5vec::save_vector(&f, "measurements", &data::gen_w1(rows))?;
        let f = h5vec::create_file(&w2)?;
        h5vec::save_vector(&f, "events", &data::gen_w2(rows))?;
    }

    println!("{rows} rows, {reps} repetitions after 1 warm-up, medians (s); ratio = phase / typed load\n");
    println!("| workload | typed load | read_vector | ratio | batches of {BATCH} | ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    report::<Measurement>("W1", &w1, "measurements", reps)?;
    report::<Event>("W2", &w2, "events", reps)?;
    Ok(())
}

fn report<T: h5vec::H5Vector>(label: &str, path: &Path, name: &str, reps: usize) -> AnyResult<()> {
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for rep in 0..=reps {
        for k in 0..3 {
            let phase = (k + rep) % 3;
            let t = Instant::now();
            let rows = run::<T>(phase, path, name)?;
            let secs = t.elapsed().as_secs_f64();
            std::hint::black_box(rows);
            if rep > 0 {
                times[phase].push(secs);
            }
        }
    }
    let m: Vec<f64> = times.iter().map(|t| stats(t).0).collect();
    println!(
        "| {label} | {:.4} | {:.4} | {:.2}x | {:.4} | {:.2}x |",
        m[0],
        m[1],
        m[1] / m[0],
        m[2],
        m[2] / m[0]
    );
    Ok(())
}

/// One phase; returns the rows it produced.
fn run<T: h5vec::H5Vector>(phase: usize, path: &Path, name: &str) -> AnyResult<usize> {
    let f = h5vec::open_file(path)?;
    Ok(match phase {
        0 => h5vec::load_vector::<T>(&f, name)?.len(),
        1 => h5vec::arrow::read_vector(&f, name)?.num_rows(),
        _ => {
            let mut n = 0;
            for b in h5vec::arrow::batches(&f, name, BATCH)? {
                n += b?.num_rows();
            }
            n
        }
    })
}
