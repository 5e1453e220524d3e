//! The Rust side of `tests/python/test_package_kinds_write.py`: vectors the
//! Python package writes (from pandas, pyarrow and polars) loaded here into
//! their Rust types: instants, dates, times of day, durations, UUIDs, f16,
//! complex numbers, maps and enums with data (SPEC.md sections 4.4 to 4.8).
//!
//! ```text
//! cargo run --example xlang_check_kinds --features chrono,uuid,half,num-complex -- write OUT.h5 N
//! cargo run --example xlang_check_kinds --features chrono,uuid,half,num-complex -- expect N
//! cargo run --example xlang_check_kinds --features chrono,uuid,half,num-complex -- read FILE NAME TYPE
//! ```
//!
//! `write` saves rows `0..N` of [`Kinds`] as vector `rust` (the layout the
//! Python package must match); `expect` prints them; `read` loads vector
//! NAME as `Vec<TYPE>` (`kinds`, `natural` or `times`) and prints it. Rows
//! print as one JSON array of objects in a canonical form: instants as
//! nanoseconds since 1970, dates as days, times of day and durations as
//! nanoseconds, UUIDs hyphenated, f16 and complex parts as their bits, maps
//! as `[key, value]` pairs in key order, enums as `{"variant": name, ...}`.
//! Row `i`'s values are a pure function of `i`; the Python test builds the
//! same values independently.

use std::collections::BTreeMap;

use chrono::{
    DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike, Utc,
};
use h5vec::H5Vector;
use half::f16;
use num_complex::Complex;
use serde_json::{json, Value};
use uuid::Uuid;

/// An enum with data: struct, tuple and unit variants.
#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Shape {
    Circle { r: f64 },
    Rect(f64, f64),
    Empty,
}

/// A record holding a union.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Placed {
    at: i32,
    shape: Shape,
}

/// Every kind of SPEC.md sections 4.4 to 4.8.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Kinds {
    at: DateTime<Utc>,
    naive: NaiveDateTime,
    day: NaiveDate,
    clock: NaiveTime,
    took: TimeDelta,
    id: Uuid,
    half: f16,
    z: Complex<f64>,
    z32: Complex<f32>,
    prices: BTreeMap<String, f64>,
    tags: BTreeMap<i64, Vec<String>>,
    notes: BTreeMap<String, Option<String>>,
    maybe_at: Option<DateTime<Utc>>,
    maybe_id: Option<Uuid>,
    maybe_map: Option<BTreeMap<String, i64>>,
    stamps: Vec<DateTime<Utc>>,
    local: DateTime<FixedOffset>,
    shape: Shape,
    maybe_shape: Option<Shape>,
    shapes: Vec<Shape>,
    placed: Placed,
}

/// What pandas columns of their natural dtypes give without `schema=`.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Natural {
    at: DateTime<Utc>,
    naive: NaiveDateTime,
    day: NaiveDate,
    clock: NaiveTime,
    took: TimeDelta,
    id: Uuid,
    half: f16,
    z: Complex<f64>,
    z32: Complex<f32>,
    prices: BTreeMap<String, f64>,
    tags: BTreeMap<i64, Vec<String>>,
}

/// What polars columns of their natural types give without `schema=`.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Times {
    at: DateTime<Utc>,
    naive: NaiveDateTime,
    day: NaiveDate,
    clock: NaiveTime,
    took: TimeDelta,
}

const DAY_NS: i64 = 86_400_000_000_000;

/// Nanoseconds since 1970 of row `i`: before and after the epoch.
fn ns(i: i64) -> i64 {
    (i - 3) * 86_400_000_000_123 + i * 7
}

fn shape(i: i64) -> Shape {
    match i % 3 {
        0 => Shape::Circle { r: i as f64 * 1.5 },
        1 => Shape::Rect(i as f64, -(i as f64)),
        _ => Shape::Empty,
    }
}

fn row(i: i64) -> Kinds {
    let at = DateTime::from_timestamp_nanos(ns(i));
    Kinds {
        at,
        naive: DateTime::from_timestamp_nanos(ns(i) + 1_000).naive_utc(),
        day: NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + TimeDelta::days((i - 3) * 40_000),
        clock: NaiveTime::MIN + TimeDelta::nanoseconds((i * 7_777_777_777_000) % DAY_NS),
        took: TimeDelta::nanoseconds((i - 2) * 1_000_000_007),
        id: Uuid::from_u128(0x0123_4567_89ab_4def_8123_4567_89ab_cd00 + i as u128),
        half: f16::from_f32(i as f32 * 0.5 - 1.0),
        z: Complex::new(i as f64 + 0.5, -(i as f64)),
        z32: Complex::new(i as f32, 2.0),
        prices: (0..i % 3)
            .map(|k| (format!("k{k}"), i as f64 * 10.0 + k as f64))
            .collect(),
        tags: (0..(i + 1) % 3)
            .map(|k| ((k + 1) * 1000 - i, vec![format!("t{i}"); (i % 3) as usize]))
            .collect(),
        notes: if i % 2 == 1 {
            BTreeMap::from([
                ("a".to_string(), Some(format!("x{i}"))),
                ("b".to_string(), None),
            ])
        } else {
            BTreeMap::new()
        },
        maybe_at: (i % 3 != 0).then_some(at),
        maybe_id: (i % 2 == 0).then(|| Uuid::from_u128(i as u128 * 0x1_0000_0001)),
        maybe_map: (i % 2 == 0).then(|| BTreeMap::from([("n".to_string(), -i)])),
        stamps: (0..i % 3)
            .map(|k| DateTime::from_timestamp_nanos(ns(i) + k))
            .collect(),
        local: at.with_timezone(&FixedOffset::east_opt((i as i32 - 2) * 1800).unwrap()),
        shape: shape(i),
        maybe_shape: (i % 4 != 0).then(|| shape(i + 1)),
        shapes: (0..i % 3).map(|k| shape(i + k)).collect(),
        placed: Placed {
            at: i as i32,
            shape: shape(i + 2),
        },
    }
}

fn t_ns(t: &DateTime<Utc>) -> Value {
    json!(t.timestamp_nanos_opt().expect("in range"))
}

fn day(d: &NaiveDate) -> Value {
    json!(d
        .signed_duration_since(NaiveDate::from_ymd_opt(1970, 1, 1).unwrap())
        .num_days())
}

fn clock(t: &NaiveTime) -> Value {
    json!(i64::from(t.num_seconds_from_midnight()) * 1_000_000_000 + i64::from(t.nanosecond()))
}

fn delta(d: &TimeDelta) -> Value {
    json!(d.num_nanoseconds().expect("in range"))
}

/// A map as `[key, value]` pairs in key order.
fn pairs<K: serde::Serialize, V: serde::Serialize>(m: &BTreeMap<K, V>) -> Value {
    Value::Array(m.iter().map(|(k, v)| json!([k, v])).collect())
}

fn shape_json(s: &Shape) -> Value {
    match s {
        Shape::Circle { r } => json!({"variant": "Circle", "r": r}),
        Shape::Rect(a, b) => json!({"variant": "Rect", "1": a, "2": b}),
        Shape::Empty => json!({"variant": "Empty"}),
    }
}

/// The canonical JSON of the fields `Kinds`, `Natural` and `Times` share.
macro_rules! common_json {
    (times $r:expr) => {
        json!({
            "at": t_ns(&$r.at),
            "naive": t_ns(&$r.naive.and_utc()),
            "day": day(&$r.day),
            "clock": clock(&$r.clock),
            "took": delta(&$r.took),
        })
    };
    (natural $r:expr) => {{
        let mut v = common_json!(times $r);
        let o = v.as_object_mut().expect("an object");
        o.insert("id".into(), json!($r.id.hyphenated().to_string()));
        o.insert("half".into(), json!($r.half.to_bits()));
        o.insert("z".into(), json!([$r.z.re.to_bits(), $r.z.im.to_bits()]));
        o.insert("z32".into(), json!([$r.z32.re.to_bits(), $r.z32.im.to_bits()]));
        o.insert("prices".into(), pairs(&$r.prices));
        o.insert("tags".into(), pairs(&$r.tags));
        v
    }};
}

fn kinds_json(r: &Kinds) -> Value {
    let mut out = common_json!(natural r);
    let o = out.as_object_mut().expect("an object");
    o.insert("notes".into(), pairs(&r.notes));
    o.insert(
        "maybe_at".into(),
        r.maybe_at.as_ref().map_or(Value::Null, t_ns),
    );
    o.insert(
        "maybe_id".into(),
        r.maybe_id
            .map_or(Value::Null, |u| json!(u.hyphenated().to_string())),
    );
    o.insert(
        "maybe_map".into(),
        r.maybe_map.as_ref().map_or(Value::Null, pairs),
    );
    o.insert(
        "stamps".into(),
        Value::Array(r.stamps.iter().map(t_ns).collect()),
    );
    o.insert(
        "local".into(),
        json!([
            t_ns(&r.local.with_timezone(&Utc)),
            r.local.offset().local_minus_utc()
        ]),
    );
    o.insert("shape".into(), shape_json(&r.shape));
    o.insert(
        "maybe_shape".into(),
        r.maybe_shape.as_ref().map_or(Value::Null, shape_json),
    );
    o.insert(
        "shapes".into(),
        Value::Array(r.shapes.iter().map(shape_json).collect()),
    );
    o.insert(
        "placed".into(),
        json!({"at": r.placed.at, "shape": shape_json(&r.placed.shape)}),
    );
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: xlang_check_kinds write OUT.h5 N | expect N | read FILE NAME kinds|natural|times";
    let rows: Vec<Value> = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["write", out, n] => {
            let rows: Vec<Kinds> = (0..n.parse::<i64>()?).map(row).collect();
            let f = h5vec::create_file(out)?;
            h5vec::save_vector(&f, "rust", &rows)?;
            rows.iter().map(kinds_json).collect()
        }
        ["expect", n] => (0..n.parse::<i64>()?)
            .map(|i| kinds_json(&row(i)))
            .collect(),
        ["read", file, name, ty] => {
            let f = h5vec::open_file(file)?;
            match ty {
                "kinds" => h5vec::load_vector::<Kinds>(&f, name)?
                    .iter()
                    .map(kinds_json)
                    .collect(),
                "natural" => h5vec::load_vector::<Natural>(&f, name)?
                    .iter()
                    .map(|r| common_json!(natural r))
                    .collect(),
                "times" => h5vec::load_vector::<Times>(&f, name)?
                    .iter()
                    .map(|r| common_json!(times r))
                    .collect(),
                _ => return Err(usage.into()),
            }
        }
        _ => return Err(usage.into()),
    };
    println!("{}", Value::Array(rows));
    Ok(())
}
