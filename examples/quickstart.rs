//! The `Measurement` example end to end: save 100 measurements, load
//! them back, and show where each field lives in the file.
//!
//! Run: `cargo run --example quickstart` (writes `quickstart.h5` in the
//! current directory, or the path given as the first argument).

use h5vec::H5Vector;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct GpsTimeStamp {
    weeks: i32,
    microseconds: i64,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Measurement {
    timestamp: GpsTimeStamp,
    temperature: f64,
    position: [f64; 3],
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "quickstart.h5".into());
    let measurements: Vec<Measurement> = (0..100)
        .map(|i| Measurement {
            timestamp: GpsTimeStamp {
                weeks: 2300 + i / 10,
                microseconds: i64::from(i) * 1_000_000,
            },
            temperature: 20.0 + f64::from(i) * 0.25,
            position: [f64::from(i), f64::from(i) * 2.0, -f64::from(i)],
        })
        .collect();

    let file = h5vec::create_file(&path)?;
    h5vec::save_vector(&file, "measurements", &measurements)?;

    let back: Vec<Measurement> = h5vec::load_vector(&file, "measurements")?;
    assert_eq!(back, measurements);

    println!("saved and loaded {} measurements in {path}", back.len());
    for ds in [
        "measurements/data/timestamp/weeks/values",
        "measurements/data/timestamp/microseconds/values",
        "measurements/data/temperature/values",
        "measurements/data/position/values",
        "measurements/metadata/count",
    ] {
        let d = file.dataset(ds)?;
        println!("  /{ds:<48} shape {:?}", d.shape());
    }
    println!("first: {:?}", back[0]);
    Ok(())
}
