//! Loads of vectors stored in many small chunks, and of one long string.
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin many_chunks [ROWS [BATCH [REPS [STRING_KB]]]]
//! ```
//!
//! Defaults: 20,000 rows, appends of 100 rows, 3 repetitions, a 512 KiB
//! string. Each case writes a file once (untimed unless said), then loads
//! it `REPS` times; the table gives medians.
//!
//! * `saved at once`: the rows saved with one `save_vector` (automatic
//!   chunk length: few chunks).
//! * `1 + appends`: one row saved, then the rest appended `BATCH` rows at a
//!   time: the automatic chunk length is then 1 row (a vector keeps the
//!   chunk length it was created with), so every row dataset holds `ROWS`
//!   chunks (list `VALUES` and string heaps as many as their sizes give).
//! * `chunk_length(1)`: the rows saved at once with one-row chunks (the
//!   shape of a file built to have as many chunks as rows).
//! * `load_range`: 10 rows at 200 positions spread over the `1 + appends`
//!   W1 file (and the `chunk_length(1)` one), one call each; the time per
//!   call.
//! * `append`: 20 appends of `BATCH` rows to the `chunk_length(1)` W1 file
//!   (which has `ROWS` chunks per column); the median time per append.
//! * `vls string` / `Vec<String>`: one row holding one string of
//!   `STRING_KB` KiB, saved (timed) and loaded.
//!
//! Last, the sizes of the files of a 3-row W1 and W2 vector (what the
//! smallest automatic chunks cost).

use h5vec::{H5Vector, SaveOptions};
use h5vec_bench::data;
use h5vec_bench::harness::{measure, numeric_args, stats};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct VlsRow {
    #[h5vec(vls)]
    s: String,
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct ListRow {
    s: Vec<String>,
}

/// Median seconds of `reps` runs of `f`, which returns whether the result
/// was right.
fn median_secs(reps: usize, mut f: impl FnMut() -> AnyResult<bool>) -> AnyResult<f64> {
    let mut secs = Vec::new();
    for _ in 0..reps.max(1) {
        let (s, ok) = measure(&mut f);
        if !ok? {
            return Err("a load returned other values than were saved".into());
        }
        secs.push(s.secs);
    }
    Ok(stats(&secs).0)
}

/// Writes `rows` to `path` as vector `v`: saved at once with `opts`, or
/// (with `batch`) one row saved and the rest appended `batch` at a time.
fn write<T: H5Vector>(
    path: &std::path::Path,
    rows: &[T],
    opts: &SaveOptions,
    batch: Option<usize>,
) -> AnyResult<()> {
    let _ = std::fs::remove_file(path);
    let f = h5vec::create_file(path)?;
    match batch {
        None => h5vec::save_vector_with(&f, "v", rows, opts)?,
        Some(b) => {
            h5vec::save_vector_with(&f, "v", &rows[..1], opts)?;
            for part in rows[1..].chunks(b.max(1)) {
                h5vec::append_vector_with(&f, "v", part, opts)?;
            }
        }
    }
    Ok(())
}

fn load_secs<T: H5Vector + PartialEq>(
    path: &std::path::Path,
    rows: &[T],
    reps: usize,
) -> AnyResult<f64> {
    median_secs(reps, || {
        let f = hdf5::File::open(path)?;
        let back: Vec<T> = h5vec::load_vector(&f, "v")?;
        Ok(back == rows)
    })
}

fn main() -> AnyResult<()> {
    let a = numeric_args()?;
    let n = a.first().copied().unwrap_or(20_000).max(2);
    let batch = a.get(1).copied().unwrap_or(100).max(1);
    let reps = a.get(2).copied().unwrap_or(3).max(1);
    let kib = a.get(3).copied().unwrap_or(512);
    let dir = std::env::temp_dir().join(format!("h5vec-many-chunks-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let w1 = data::gen_w1(n);
    let w2 = data::gen_w2(n);
    let plain = SaveOptions::default();
    let deflate = SaveOptions::default().deflate(4);
    let one = SaveOptions::default().chunk_length(1);
    let mut table: Vec<(String, f64)> = Vec::new();
    let mut row = |name: String, secs: f64| {
        eprintln!("{name}: {secs:.4} s");
        table.push((name, secs));
    };

    let p = dir.join("w1.h5");
    write(&p, &w1, &plain, None)?;
    row("W1 load, saved at once".into(), load_secs(&p, &w1, reps)?);
    write(&p, &w1, &plain, Some(batch))?;
    row("W1 load, 1 + appends".into(), load_secs(&p, &w1, reps)?);
    // Random access into the many-chunk file.
    let calls = 200u64;
    let secs = median_secs(reps, || {
        let f = hdf5::File::open(&p)?;
        let mut ok = true;
        for k in 0..calls {
            let at = k * (n as u64 - 10) / calls;
            let got: Vec<data::Measurement> = h5vec::load_range(&f, "v", at..at + 10)?;
            ok &= got[..] == w1[at as usize..at as usize + 10];
        }
        Ok(ok)
    })?;
    row(
        "W1 load_range of 10 rows, per call (1 + appends)".into(),
        secs / calls as f64,
    );
    write(&p, &w1, &deflate, None)?;
    row(
        "W1 deflate4 load, saved at once".into(),
        load_secs(&p, &w1, reps)?,
    );
    write(&p, &w1, &deflate, Some(batch))?;
    row(
        "W1 deflate4 load, 1 + appends".into(),
        load_secs(&p, &w1, reps)?,
    );
    write(&p, &w1, &one, None)?;
    row("W1 load, chunk_length(1)".into(), load_secs(&p, &w1, reps)?);
    let secs = median_secs(reps, || {
        let f = hdf5::File::open(&p)?;
        let mut ok = true;
        for k in 0..calls {
            let at = k * (n as u64 - 10) / calls;
            let got: Vec<data::Measurement> = h5vec::load_range(&f, "v", at..at + 10)?;
            ok &= got[..] == w1[at as usize..at as usize + 10];
        }
        Ok(ok)
    })?;
    row(
        "W1 load_range of 10 rows, per call (chunk_length(1))".into(),
        secs / calls as f64,
    );
    // Appends to the vector of one-row chunks.
    let more = data::gen_w1(n + 20 * batch);
    let f = hdf5::File::open_rw(&p)?;
    let mut at = n;
    let secs = median_secs(20, || {
        h5vec::append_vector_with(&f, "v", &more[at..at + batch], &one)?;
        at += batch;
        Ok(true)
    })?;
    drop(f);
    row(
        format!("W1 append of {batch} rows to {n} one-row chunks (chunk_length(1)), per append"),
        secs,
    );

    let p = dir.join("w2.h5");
    write(&p, &w2, &plain, None)?;
    row("W2 load, saved at once".into(), load_secs(&p, &w2, reps)?);
    write(&p, &w2, &plain, Some(batch))?;
    row("W2 load, 1 + appends".into(), load_secs(&p, &w2, reps)?);

    let long: String = (0..kib * 1024)
        .map(|i| (b'a' + (data::mix(30, i as u64) % 26) as u8) as char)
        .collect();
    let p = dir.join("s.h5");
    let vls = vec![VlsRow { s: long.clone() }];
    let (s, r) = measure(|| write(&p, &vls, &plain, None));
    r?;
    row(format!("vls string of {kib} KiB: save"), s.secs);
    row(
        format!("vls string of {kib} KiB: load"),
        load_secs(&p, &vls, reps)?,
    );
    let list = vec![ListRow { s: vec![long] }];
    let (s, r) = measure(|| write(&p, &list, &plain, None));
    r?;
    row(format!("Vec<String> of one {kib} KiB string: save"), s.secs);
    row(
        format!("Vec<String> of one {kib} KiB string: load"),
        load_secs(&p, &list, reps)?,
    );

    // The price of the smallest automatic chunks: files of 3-row vectors.
    let p = dir.join("small.h5");
    write(&p, &w1[..3], &plain, None)?;
    let small_w1 = std::fs::metadata(&p)?.len();
    write(&p, &w2[..3], &plain, None)?;
    let small_w2 = std::fs::metadata(&p)?.len();

    let _ = std::fs::remove_dir_all(&dir);
    println!("{n} rows, appends of {batch}, {reps} repetitions (medians)\n");
    println!("| case | seconds |");
    println!("|---|---:|");
    for (name, secs) in table {
        println!("| {name} | {secs:.4} |");
    }
    println!("\nfile of a 3-row vector: W1 {small_w1} bytes, W2 {small_w2} bytes");
    Ok(())
}
