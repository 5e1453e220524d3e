//! A vector of one name in many files, read as one (README "Many files and
//! Dask", issue 31): `cargo run --example many_files [DIR]` writes one file
//! per hour into `DIR` (default: a new directory under the system's
//! temporary directory), then reads them through `h5vec::Dataset`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use h5vec::{Dataset, H5Vector};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Reading {
    ts: SystemTime,
    sensor: u16,
    temperature: f64,
}

fn hour(h: u64) -> Vec<Reading> {
    (0..3600)
        .map(|s| Reading {
            ts: UNIX_EPOCH + Duration::from_secs(1_767_225_600 + h * 3600 + s),
            sensor: (s % 16) as u16,
            temperature: 20.0 + ((h * 3600 + s) as f64 / 600.0).sin(),
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = match std::env::args().nth(1) {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::temp_dir().join(format!("h5vec-many-files-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir)?;
    for h in 0..3 {
        let file = h5vec::create_file(dir.join(format!("hour-{h:02}.h5")))?;
        h5vec::save_vector(&file, "telemetry", &hour(h))?;
    }

    let logs = Dataset::open(&format!("{}/hour-*.h5", dir.display()), "telemetry")?;
    assert_eq!(logs.len(), 3 * 3600);
    println!("{} rows in {} files", logs.len(), logs.files().len());
    println!("second file: rows {:?}", logs.files()[1].rows()); // 3600..7200

    // Rows 3590..3610: the end of the first file and the start of the second.
    let across: Vec<Reading> = logs.load_range(3590..3610)?;
    assert_eq!(across[10], hour(1)[0]);

    // Streaming in file order, one file open at a time.
    let mut sum = 0.0;
    for batch in logs.reader::<Reading>(1000)? {
        sum += batch?.iter().map(|r| r.temperature).sum::<f64>();
    }
    println!("mean temperature {:.4}", sum / logs.len() as f64);
    Ok(())
}
