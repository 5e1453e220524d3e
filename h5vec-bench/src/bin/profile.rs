//! Runs one phase of one workload in a loop, for `perf record` or
//! `valgrind --tool=callgrind` (no timing, no peers, no verification):
//!
//! ```text
//! cargo build --release -p h5vec-bench --bin profile
//! perf record -g target/release/profile w2 save deflate 1000000 5
//! ```
//!
//! Arguments: workload (`w1`|`w2`), phase (`save`|`save-fresh`|`load`), compression
//! (`none`|`deflate`), rows, repetitions. The data are generated before the
//! first repetition; `save` writes the same file each time.
//! `H5VEC_BENCH_STATISTICS=0` saves without statistics.

use h5vec::SaveOptions;
use h5vec_bench::data;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> AnyResult<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: profile w1|w2 save|save-fresh|load none|deflate ROWS REPS";
    let [wl, phase, comp, rows, reps] = a.as_slice() else {
        return Err(usage.into());
    };
    let rows: usize = rows.parse()?;
    let reps: usize = reps.parse()?;
    let opts = match comp.as_str() {
        "none" => SaveOptions::default(),
        "deflate" => SaveOptions::default().deflate(4),
        _ => return Err(usage.into()),
    };
    // H5VEC_BENCH_STATISTICS=0: saves without per-chunk statistics (as
    // compare.rs: what they cost, results/statistics-cost-1000000.md).
    let opts = if std::env::var("H5VEC_BENCH_STATISTICS").as_deref() == Ok("0") {
        opts.statistics(false)
    } else {
        opts
    };
    let path = std::env::temp_dir().join(format!("h5vec-profile-{}.h5", std::process::id()));
    let r = match wl.as_str() {
        "w1" => go(&data::gen_w1(rows), phase, &opts, &path, reps),
        "w2" => go(&data::gen_w2(rows), phase, &opts, &path, reps),
        _ => Err(usage.into()),
    };
    let _ = std::fs::remove_file(&path);
    r
}

fn go<T: h5vec::H5Vector>(
    v: &[T],
    phase: &str,
    opts: &SaveOptions,
    path: &std::path::Path,
    reps: usize,
) -> AnyResult<()> {
    let save = || -> AnyResult<()> {
        let f = hdf5::File::create(path)?;
        h5vec::save_vector_with(&f, "v", v, opts)?;
        Ok(())
    };
    match phase {
        "save" => (0..reps).try_for_each(|_| save())?,
        // Each save into a fresh path (as compare.rs's save phase), so the
        // kernel's truncation of the previous file is not in the profile.
        "save-fresh" => (0..reps).try_for_each(|_| {
            let _ = std::fs::remove_file(path);
            save()
        })?,
        "load" => {
            save()?;
            for _ in 0..reps {
                // As compare.rs: the previous result is freed and the heap
                // trimmed before the load, so freeing it is not profiled
                // (glibc would consolidate its chunks inside the next load).
                h5vec_bench::harness::trim_heap();
                let back: Vec<T> = {
                    let f = hdf5::File::open(path)?;
                    h5vec::load_vector(&f, "v")?
                };
                std::hint::black_box(&back);
                drop(back);
            }
        }
        _ => return Err("phase is save, save-fresh or load".into()),
    }
    Ok(())
}
