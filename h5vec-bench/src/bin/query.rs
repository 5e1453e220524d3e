//! Queries (issue 30, SPEC.md section 14): rows of a 0.1% time window of a
//! large vector, with the statistics saves write, against reading the
//! timestamp column and filtering it.
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin query -- \
//!     [--rows 20000000] [--reps 7] [--dir D] [--jsonl FILE] [--reuse]
//! ```
//!
//! Untimed: `--rows` ticks (`ts` increasing by 1 ms from 2026-01-01, `id` a
//! SplitMix64 hash of the row number: unsorted, `price`, `qty` derived from
//! it; `scripts/query.py` makes the same rows with numpy for the Parquet
//! peers) saved with Blosc Zstandard (level 1, bit shuffle) into
//! `D/query-ROWS.h5` (kept with `--reuse`).
//!
//! Timed, each mode `--reps` times in a row after one warm-up (as
//! `scripts/query.py` times its peers), the file opened fresh each time,
//! the page cache warm:
//! - **load_where**: `h5vec::load_where::<Tick>` of `ts` between the
//!   window's ends (rows `[40%, 40.1%)` of the vector);
//! - **column+filter**: `load_column::<SystemTime>("ts")` then the rows
//!   in the window picked from it (the way without statistics or queries);
//! - **count_where** of the window, and **select_rows** of `id == k`
//!   without an index (every chunk of `id` is read);
//! - then, after `build_index(.., "id", IndexKind::SortedRows)` (its time
//!   printed), **load_where** and **select_rows** of `id == k` through it.
//!   A file reused with the index already built skips the scan of `id == k`.
//!
//! Every answer is checked against the generator. Prints medians; with
//! `--jsonl` one JSON line per timed run.

use std::error::Error;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use h5vec::{col, H5Vector, IndexKind, SaveOptions};
use h5vec_bench::harness::loadavg;

type AnyResult<T> = Result<T, Box<dyn Error>>;

const NAME: &str = "ticks";
/// 2026-01-01T00:00:00Z in seconds.
const T0: u64 = 1_767_225_600;

/// One row.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Tick {
    ts: SystemTime,
    id: u64,
    price: f64,
    qty: u32,
}

fn splitmix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn tick(i: u64) -> Tick {
    let id = splitmix(i);
    Tick {
        ts: UNIX_EPOCH + Duration::from_secs(T0) + Duration::from_millis(i),
        id,
        price: (id % 100_000) as f64 / 100.0,
        qty: ((id >> 40) % 1000) as u32,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> AnyResult<()> {
    let mut rows = 20_000_000u64;
    let mut reps = 7usize;
    let mut dir = std::env::temp_dir();
    let mut jsonl: Option<PathBuf> = None;
    let mut reuse = false;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--rows" => rows = val()?.replace(['_', ','], "").parse()?,
            "--reps" => reps = val()?.parse()?,
            "--dir" => dir = val()?.into(),
            "--jsonl" => jsonl = Some(val()?.into()),
            "--reuse" => reuse = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let path = dir.join(format!("query-{rows}.h5"));
    if !(reuse && path.exists()) {
        let zstd = |s| h5vec::Compression::blosc(h5vec::BloscCompressor::Zstd, 1, s);
        let opts = SaveOptions::default().compression(zstd(h5vec::BloscShuffle::Bit));
        let data: Vec<Tick> = (0..rows).map(tick).collect();
        let f = h5vec::create_file(&path)?;
        let t = Instant::now();
        h5vec::save_vector_with(&f, NAME, &data, &opts)?;
        eprintln!("saved {rows} rows in {:.2} s", t.elapsed().as_secs_f64());
    }
    // With a `SortedRows` index on `id` from an earlier run (`--reuse`),
    // the `id == k` scan is not measured (dropping and building it again
    // would leave its old space behind in a file that never reuses it).
    let indexed = {
        let f = h5vec::open_file(&path)?;
        h5vec::list_indexes(&f, NAME)?
            .iter()
            .any(|i| i.column() == "id" && i.kind() == IndexKind::SortedRows && i.valid())
    };
    // The window: rows [40%, 40.1%).
    let a = rows * 4 / 10;
    let b = a + rows / 1000;
    let ta = UNIX_EPOCH + Duration::from_secs(T0) + Duration::from_millis(a);
    let tb = UNIX_EPOCH + Duration::from_secs(T0) + Duration::from_millis(b - 1);
    let window = col("ts").between(ta, tb);
    let k = splitmix(rows / 3);
    let by_id = col("id").eq(k);
    let want: Vec<Tick> = (a..b).map(tick).collect();

    let mut out = Vec::new();
    let mut record = |mode: &str, s: f64, pass: usize| {
        out.push(format!(
            "{{\"bench\":\"query\",\"rows\":{rows},\"mode\":\"{mode}\",\"pass\":{pass},\"seconds\":{s:.6},\"load\":\"{}\"}}",
            loadavg()
        ));
    };
    // Each mode: one warm-up, then `reps` timed runs in a row (the way
    // `scripts/query.py` times DuckDB and pandas), so one mode's reads do
    // not evict the next one's working set.
    let mut times: Vec<(&str, Vec<f64>)> = Vec::new();
    let mut timed = |mode: &'static str, run: &mut dyn FnMut() -> AnyResult<()>| -> AnyResult<()> {
        let mut v = Vec::with_capacity(reps);
        for pass in 0..=reps {
            let t = Instant::now();
            run()?;
            let s = t.elapsed().as_secs_f64();
            if pass > 0 {
                v.push(s);
                record(mode, s, pass);
            }
        }
        times.push((mode, v));
        Ok(())
    };
    timed("load_where", &mut || {
        let f = h5vec::open_file(&path)?;
        let got: Vec<Tick> = h5vec::load_where(&f, NAME, &window)?;
        drop(f);
        assert!(got == want, "load_where returned other rows");
        Ok(())
    })?;
    timed("column+filter", &mut || {
        let f = h5vec::open_file(&path)?;
        let ts: Vec<SystemTime> = h5vec::load_column(&f, NAME, "ts")?;
        let hits: Vec<u64> = ts
            .iter()
            .enumerate()
            .filter(|(_, t)| **t >= ta && **t <= tb)
            .map(|(i, _)| i as u64)
            .collect();
        drop(f);
        assert_eq!(hits, (a..b).collect::<Vec<_>>());
        Ok(())
    })?;
    timed("count_where", &mut || {
        let f = h5vec::open_file(&path)?;
        let n = h5vec::count_where(&f, NAME, &window)?;
        drop(f);
        assert_eq!(n, b - a);
        Ok(())
    })?;
    // id == k, scanning (no index yet)
    if !indexed {
        timed("select_rows id==k (scan)", &mut || {
            let f = h5vec::open_file(&path)?;
            let r = h5vec::select_rows(&f, NAME, &by_id)?;
            drop(f);
            assert_eq!(r, [rows / 3]);
            Ok(())
        })?;
    }
    // (b): `id == k` through a `SortedRows` index, built once (timed).
    let t = Instant::now();
    if !indexed {
        let f = h5vec::open_file_rw(&path)?;
        h5vec::build_index(&f, NAME, "id", IndexKind::SortedRows)?;
    }
    let built = t.elapsed().as_secs_f64();
    let want_k = vec![tick(rows / 3)];
    timed("load_where id==k (SortedRows)", &mut || {
        let f = h5vec::open_file(&path)?;
        let got: Vec<Tick> = h5vec::load_where(&f, NAME, &by_id)?;
        drop(f);
        assert!(got == want_k, "load_where(id == k) returned other rows");
        Ok(())
    })?;
    timed("select_rows id==k (SortedRows)", &mut || {
        let f = h5vec::open_file(&path)?;
        let r = h5vec::select_rows(&f, NAME, &by_id)?;
        drop(f);
        assert_eq!(r, [rows / 3]);
        Ok(())
    })?;
    if indexed {
        println!(
            "SortedRows index on id: built by an earlier run (the scan of id == k not measured)"
        );
    } else {
        println!("SortedRows index on id built in {built:.2} s");
    }
    println!(
        "rows {rows}, window {} rows, {reps} reps, medians (load {}):",
        b - a,
        loadavg()
    );
    let base = median(times[1].1.clone());
    for (mode, v) in &times {
        if v.is_empty() {
            continue;
        }
        let m = median(v.clone());
        println!(
            "  {mode:<28} {m:>10.5} s   column+filter / this = {:>7.1}x",
            base / m
        );
    }
    let f = h5vec::open_file(&path)?;
    println!("explain (window):\n{}", h5vec::explain(&f, NAME, &window)?);
    println!("explain (id == k):\n{}", h5vec::explain(&f, NAME, &by_id)?);
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
