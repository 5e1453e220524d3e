//! Many files (issue 31): `h5vec::Dataset::reader` over 8 files of
//! `rows / 8` W1 rows each against reading one file of the same rows
//! (`VectorReader` and `load_vector`), in the same run.
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin many_files -- \
//!     [--rows 20000000] [--files 8] [--reps 7] [--batch 262144] [--dir D] [--jsonl FILE] [--reuse]
//! ```
//!
//! Untimed: the W1 rows (`h5vec_bench::data::w1_row`: a timestamp record
//! of two integers, a temperature, a position of three floats) written
//! with default save options, streamed through `VectorWriter`, into
//! `D/many-ROWS/part-NN.h5` (`--files` files, the last taking what the
//! division leaves) and `D/many-ROWS/one.h5` (kept with `--reuse`).
//!
//! Timed, each `--reps` times after one warm-up, modes interleaved, the
//! page cache warm, files opened fresh each time:
//! - **dataset_reader**: `Dataset::open` of the glob, then
//!   `reader::<Measurement>(batch)` to the end;
//! - **vector_reader**: `open_file` of the one file, then
//!   `VectorReader::<Measurement>::open(batch)` to the end;
//! - **load_vector**: `open_file` of the one file, `load_vector`.
//!
//! Each pass sums the temperatures and checks the sum and the row count
//! against the generator. Prints medians and the ratios to
//! `vector_reader` (issue 31 asks `dataset_reader` within 10% of one
//! file); with `--jsonl` one JSON line per timed run.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use h5vec::{Dataset, SaveOptions, VectorReader, VectorWriter};
use h5vec_bench::data::{w1_row, Measurement};
use h5vec_bench::harness::{loadavg, stats, trim_heap};

type AnyResult<T> = Result<T, Box<dyn Error>>;

const NAME: &str = "measurements";
/// Rows generated and written at a time.
const WRITE_ROWS: u64 = 1 << 18;

/// Writes rows `rows` of W1 into a new file `path`.
fn write(path: &Path, rows: std::ops::Range<u64>) -> AnyResult<()> {
    let f = h5vec::create_file(path)?;
    let mut w = VectorWriter::<Measurement>::create(&f, NAME, &SaveOptions::default())?;
    let mut at = rows.start;
    while at < rows.end {
        let end = rows.end.min(at + WRITE_ROWS);
        let part: Vec<Measurement> = (at..end).map(w1_row).collect();
        w.extend(&part)?;
        at = end;
    }
    w.finish()?;
    Ok(())
}

/// Sum of the temperatures and the row count of `batches`.
fn sum<I: Iterator<Item = h5vec::Result<Vec<Measurement>>>>(batches: I) -> AnyResult<(f64, u64)> {
    let (mut s, mut n) = (0.0, 0u64);
    for b in batches {
        let b = b?;
        n += b.len() as u64;
        s += b.iter().map(|m| m.temperature).sum::<f64>();
    }
    Ok((s, n))
}

fn main() -> AnyResult<()> {
    let mut rows = 20_000_000u64;
    let mut files = 8u64;
    let mut reps = 7usize;
    let mut batch = 262_144usize;
    let mut dir = std::env::temp_dir();
    let mut jsonl: Option<PathBuf> = None;
    let mut reuse = false;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--rows" => rows = val()?.replace(['_', ','], "").parse()?,
            "--files" => files = val()?.parse()?,
            "--reps" => reps = val()?.parse()?,
            "--batch" => batch = val()?.parse()?,
            "--dir" => dir = val()?.into(),
            "--jsonl" => jsonl = Some(val()?.into()),
            "--reuse" => reuse = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if files == 0 {
        return Err("--files must be at least 1".into());
    }
    let root = dir.join(format!("many-{rows}"));
    let one = root.join("one.h5");
    let per = rows / files;
    let parts: Vec<PathBuf> = (0..files)
        .map(|i| root.join(format!("part-{i:02}.h5")))
        .collect();
    if !(reuse && one.exists() && parts.iter().all(|p| p.exists())) {
        std::fs::create_dir_all(&root)?;
        let t = Instant::now();
        for (i, p) in parts.iter().enumerate() {
            let start = i as u64 * per;
            let end = if i as u64 == files - 1 {
                rows
            } else {
                start + per
            };
            write(p, start..end)?;
        }
        write(&one, 0..rows)?;
        eprintln!(
            "wrote {rows} rows twice in {:.2} s",
            t.elapsed().as_secs_f64()
        );
    }
    let want_sum: f64 = (0..rows).map(|i| w1_row(i).temperature).sum();
    let pattern = format!("{}/part-*.h5", root.display());

    let modes = ["dataset_reader", "vector_reader", "load_vector"];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut out = Vec::new();
    for pass in 0..=reps {
        for (m, mode) in modes.iter().enumerate() {
            trim_heap();
            let t = Instant::now();
            let (s, n) = match m {
                0 => {
                    let ds = Dataset::open(&pattern, NAME)?;
                    sum(ds.reader::<Measurement>(batch)?)?
                }
                1 => {
                    let f = h5vec::open_file(&one)?;
                    sum(VectorReader::<Measurement>::open(&f, NAME, batch)?)?
                }
                _ => {
                    let f = h5vec::open_file(&one)?;
                    let v: Vec<Measurement> = h5vec::load_vector(&f, NAME)?;
                    (v.iter().map(|m| m.temperature).sum(), v.len() as u64)
                }
            };
            let secs = t.elapsed().as_secs_f64();
            assert_eq!(n, rows, "{mode}: rows");
            // Sums in another order differ in the last bits.
            assert!(
                (s - want_sum).abs() <= 1e-6 * want_sum.abs().max(1.0),
                "{mode}: sum {s} against {want_sum}"
            );
            if pass == 0 {
                continue;
            }
            times[m].push(secs);
            out.push(format!(
                "{{\"bench\":\"many_files\",\"rows\":{rows},\"files\":{files},\"batch\":{batch},\"mode\":\"{mode}\",\"pass\":{pass},\"seconds\":{secs:.6},\"load\":\"{}\"}}",
                loadavg()
            ));
        }
    }
    println!(
        "rows {rows} ({files} files of {per}), batch {batch}, {reps} reps, medians (load {}):",
        loadavg()
    );
    let base = stats(&times[1]).0;
    for (mode, v) in modes.iter().zip(&times) {
        let (med, min, max) = stats(v);
        println!(
            "  {mode:<16} {med:>9.4} s  (min {min:.4}, max {max:.4})  this / vector_reader = {:.3}",
            med / base
        );
    }
    if let Some(p) = jsonl {
        use std::io::Write;
        let mut w = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)?;
        for l in out {
            writeln!(w, "{l}")?;
        }
    }
    Ok(())
}
