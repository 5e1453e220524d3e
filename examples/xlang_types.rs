//! The Rust side of `tests/python/test_types_h5py.py`: maps, instants,
//! dates, durations, UUIDs, f16 and complex numbers (SPEC.md sections 4.5
//! to 4.8), read there with plain h5py and numpy.
//!
//! ```text
//! cargo run --example xlang_types --features chrono,uuid,half,num-complex -- OUT.h5
//! ```
//!
//! Row `i`'s values are a pure function of `i`; the Python test recomputes
//! them independently.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, Utc};
use h5vec::H5Vector;
use half::f16;
use num_complex::Complex;
use uuid::Uuid;

/// One field of each type.
#[derive(H5Vector, Debug, Clone)]
struct Row {
    at: DateTime<Utc>,
    received: SystemTime,
    local: DateTime<FixedOffset>,
    day: NaiveDate,
    clock: NaiveTime,
    took: Duration,
    id: Uuid,
    level: f16,
    z: Complex<f64>,
    z32: Complex<f32>,
    prices: BTreeMap<String, f64>,
    tags: BTreeMap<u32, Vec<String>>,
    maybe: Option<BTreeMap<String, i64>>,
}

/// Nanoseconds since 1970 of row `i`: before and after the epoch.
fn ns(i: i64) -> i64 {
    (i - 3) * 86_400_000_000_123 + i * 7
}

fn row(i: i64) -> Row {
    let at = DateTime::from_timestamp_nanos(ns(i));
    Row {
        at,
        received: if ns(i) >= 0 {
            UNIX_EPOCH + Duration::from_nanos(ns(i) as u64)
        } else {
            UNIX_EPOCH - Duration::from_nanos(ns(i).unsigned_abs())
        },
        local: at.with_timezone(&FixedOffset::east_opt((i as i32 - 2) * 1800).unwrap()),
        day: at.date_naive(),
        clock: at.time(),
        took: Duration::from_nanos(i as u64 * 1_000_000_007),
        id: Uuid::from_u128(0x0123_4567_89ab_4def_8123_4567_89ab_cd00 + i as u128),
        level: f16::from_f32(i as f32 * 0.5 - 1.0),
        z: Complex::new(i as f64 + 0.5, -(i as f64)),
        z32: Complex::new(i as f32, 2.0),
        prices: (0..i % 3)
            .map(|k| (format!("k{k}"), i as f64 * 10.0 + k as f64))
            .collect(),
        tags: (0..i % 2)
            .map(|k| (k as u32 + 1, vec![format!("t{i}"); (i % 3) as usize]))
            .collect(),
        maybe: (i % 2 == 0).then(|| BTreeMap::from([("n".to_string(), -i)])),
    }
}

fn main() -> h5vec::Result<()> {
    let path = std::env::args().nth(1).expect("usage: xlang_types OUT.h5");
    let rows: Vec<Row> = (0..7).map(row).collect();
    let f = h5vec::create_file(&path)?;
    h5vec::save_vector(&f, "rows", &rows)?;
    h5vec::save_vector(
        &f,
        "halfs",
        &[
            f16::NAN,
            f16::INFINITY,
            f16::NEG_INFINITY,
            f16::MIN_POSITIVE_SUBNORMAL,
            f16::MAX,
        ],
    )?;
    println!("{path}: {} rows", rows.len());
    Ok(())
}
