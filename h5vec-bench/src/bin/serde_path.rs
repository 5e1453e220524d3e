//! The serde path (`h5vec::serde`) side by side with the derive path, in
//! one process:
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin serde_path -- ROWS REPS DIR
//! ```
//!
//! For W1 (`Measurement`) and W2 (`Event`, `ROWS` rows each), measures,
//! interleaved in rotating order, `REPS` repetitions after one warm-up of:
//!
//! - derive save: `h5vec::save_vector` (a new file each time);
//! - serde save: `h5vec::serde::save_vector_with` (W2 with
//!   `SaveOptions::vls_strings`, the layout of its `#[h5vec(vls)]` name);
//! - derive load: `h5vec::load_vector::<T>` of the derive's file;
//! - serde load: `h5vec::serde::load_vector::<T>` of the serde path's file;
//! - serde_arrow alone: `serde_arrow::to_record_batch` of the same rows
//!   (the Arrow arrays the serde save starts from, no I/O).
//!
//! Prints medians and the ratios serde / derive as a Markdown table.
//!
//! Timing follows the harness (`h5vec_bench::harness`): the process runs
//! with glibc's fixed `mmap_threshold` and every phase starts, untimed,
//! from a trimmed heap, so no phase pays for the frees of the one before
//! (a load's million dropped rows otherwise leave the next phase to merge
//! their chunks). A load's rows are compared with the input and dropped
//! after the clock stops. `SERDE_PATH_NO_TRIM=1` times as before this
//! method (no trim, rows dropped inside the phase).

use std::path::Path;
use std::time::Instant;

use h5vec_bench::data;
use h5vec_bench::harness::{stats, trim_heap};
use serde::{de::DeserializeOwned, Serialize};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

const PHASES: [&str; 5] = [
    "derive save",
    "serde save",
    "derive load",
    "serde load",
    "serde_arrow arrays",
];

fn main() -> AnyResult<()> {
    if !no_trim() {
        h5vec_bench::harness::ensure_malloc_tunable();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: usize = args.first().map_or(Ok(1_000_000), |s| s.parse())?;
    let reps: usize = args.get(1).map_or(Ok(5), |s| s.parse())?;
    let dir = args
        .get(2)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("h5vec-serde-path"));
    std::fs::create_dir_all(&dir)?;
    println!(
        "{rows} rows, {reps} repetitions after 1 warm-up, interleaved, medians (s); load average {}\n",
        h5vec_bench::harness::loadavg()
    );
    println!(
        "| workload | {} | serde/derive save | serde/derive load |",
        PHASES.join(" | ")
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    // SERDE_PATH_WORKLOADS=W1 (or W2) runs only that workload, for profiling.
    let wanted = |w: &str| match std::env::var("SERDE_PATH_WORKLOADS") {
        Ok(v) => v.split(',').any(|x| x.trim() == w),
        Err(_) => true,
    };
    if wanted("W1") {
        let w1 = data::gen_w1(rows);
        // `[f64; 3]` as the derive's dense column (serde sees a tuple).
        let w1_columns = h5vec::serde::SchemaOptions::new()
            .kind("$.position", h5vec::serde::FieldKind::Dense)
            .trace_type::<data::Measurement>()?;
        report(
            "W1",
            &w1,
            &dir,
            reps,
            &h5vec::SaveOptions::default(),
            w1_columns,
        )?;
    }
    if wanted("W2") {
        let w2 = data::gen_w2(rows);
        report(
            "W2",
            &w2,
            &dir,
            reps,
            &h5vec::SaveOptions::default().vls_strings(true),
            h5vec::serde::Columns::of::<data::Event>()?,
        )?;
    }
    Ok(())
}

fn report<T>(
    label: &str,
    rows: &[T],
    dir: &Path,
    reps: usize,
    serde_opts: &h5vec::SaveOptions,
    fields: h5vec::serde::Columns,
) -> AnyResult<()>
where
    T: h5vec::H5Vector + Serialize + DeserializeOwned + PartialEq,
{
    let d = dir.join(format!("{label}-derive.h5"));
    let s = dir.join(format!("{label}-serde.h5"));
    let arrow_fields: Vec<serde_arrow::_impl::arrow::datatypes::FieldRef> = {
        use serde_arrow::schema::{SchemaLike, TracingOptions};
        Vec::from_type::<T>(TracingOptions::default())?
    };
    // SERDE_PATH_PHASES=1,3 runs only those phases (indices into PHASES),
    // for profiling one of them.
    let only: Option<Vec<usize>> = std::env::var("SERDE_PATH_PHASES")
        .ok()
        .map(|v| v.split(',').filter_map(|p| p.trim().parse().ok()).collect());
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); PHASES.len()];
    for rep in 0..=reps {
        for k in 0..PHASES.len() {
            let phase = (k + rep) % PHASES.len();
            if only.as_ref().is_some_and(|o| !o.contains(&phase)) {
                continue;
            }
            let trim = !no_trim();
            if trim {
                trim_heap();
            }
            // What a phase returns, dropped after the clock stops (unless
            // SERDE_PATH_NO_TRIM).
            let mut back: Option<Vec<T>> = None;
            let mut arrays = None;
            let t = Instant::now();
            let n = match phase {
                0 => {
                    let f = h5vec::create_file(&d)?;
                    h5vec::save_vector(&f, "v", rows)?;
                    rows.len()
                }
                1 => {
                    let f = h5vec::create_file(&s)?;
                    h5vec::serde::save_vector_in(&f, "v", rows, serde_opts, &fields)?;
                    rows.len()
                }
                2 | 3 => {
                    let path = if phase == 2 { &d } else { &s };
                    if !path.exists() {
                        continue;
                    }
                    let f = h5vec::open_file(path)?;
                    let v = if phase == 2 {
                        h5vec::load_vector::<T>(&f, "v")?
                    } else {
                        h5vec::serde::load_vector_in::<T>(&f, "v", &fields)?
                    };
                    drop(f);
                    let n = v.len();
                    if trim {
                        back = Some(v);
                    }
                    n
                }
                _ => {
                    let b = serde_arrow::to_record_batch(&arrow_fields, &rows)?;
                    let n = b.num_rows();
                    if trim {
                        arrays = Some(b);
                    }
                    n
                }
            };
            let dt = t.elapsed().as_secs_f64();
            assert_eq!(n, rows.len());
            if let Some(v) = back {
                if v != rows {
                    return Err(format!("{label}: {} loaded other rows", PHASES[phase]).into());
                }
            }
            drop(arrays);
            if rep > 0 {
                times[phase].push(dt);
            }
        }
    }
    // The files are not needed any more (disk space for the next workload).
    let _ = std::fs::remove_file(&d);
    let _ = std::fs::remove_file(&s);
    let med: Vec<f64> = times
        .iter()
        .map(|t| if t.is_empty() { f64::NAN } else { stats(t).0 })
        .collect();
    println!(
        "| {label} | {} | {:.2}x | {:.2}x |",
        med.iter()
            .map(|m| format!("{m:.3}"))
            .collect::<Vec<_>>()
            .join(" | "),
        med[1] / med[0],
        med[3] / med[2]
    );
    Ok(())
}

/// `SERDE_PATH_NO_TRIM=1`: the timing before the harness's method.
fn no_trim() -> bool {
    std::env::var_os("SERDE_PATH_NO_TRIM").is_some()
}
