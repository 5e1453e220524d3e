//! The order-log model that used to need `#[h5vec(json)]` for its
//! timestamps, `SystemTime`, durations, UUIDs and maps: every field now has
//! a storage kind, readable column by column with plain h5py (SPEC.md
//! sections 4.5 to 4.7). The same rows with those fields as JSON are the
//! size comparison.
//!
//! `H5VEC_ORDER_LOG_DIR=/some/dir` keeps both files of
//! `order_log_100k_rows_without_json_fields` there (for timing readers).

use h5vec_tests as common;

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, FixedOffset, Utc};
use h5vec::{load_vector, save_vector, H5Vector, SaveOptions};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(H5Vector, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Side {
    Buy = 0,
    Sell = 1,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Status {
    New = 0,
    PartiallyFilled = 1,
    Filled = 2,
    Cancelled = 3,
    Rejected = 4,
}

/// Every field stored by its own kind.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Order {
    order_id: u64,
    trader: Uuid,
    placed_at: DateTime<Utc>,
    exchange_time: DateTime<FixedOffset>,
    received: SystemTime,
    latency: Duration,
    symbol: String,
    side: Side,
    status: Status,
    price: f64,
    quantity: u32,
    filled: u32,
    fees: HashMap<String, f64>,
    coupon: Option<String>,
}

/// The same rows with the fields that had no kind before as JSON.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct OrderJson {
    order_id: u64,
    #[h5vec(json)]
    trader: Uuid,
    #[h5vec(json)]
    placed_at: DateTime<Utc>,
    #[h5vec(json)]
    exchange_time: DateTime<FixedOffset>,
    #[h5vec(json)]
    received: SystemTime,
    #[h5vec(json)]
    latency: Duration,
    symbol: String,
    side: Side,
    status: Status,
    price: f64,
    quantity: u32,
    filled: u32,
    #[h5vec(json)]
    fees: HashMap<String, f64>,
    coupon: Option<String>,
}

const SYMBOLS: [&str; 6] = ["AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "GOOG"];

fn orders(n: usize) -> Vec<Order> {
    let tz = FixedOffset::west_opt(5 * 3600).unwrap();
    (0..n)
        .map(|i| {
            let placed = DateTime::from_timestamp_nanos(
                1_717_000_000_000_000_000 + i as i64 * 1_234_567 + (i as i64 % 7) * 13,
            );
            let mut fees = HashMap::new();
            fees.insert("exchange".to_string(), 0.0003 * (i % 11) as f64);
            if i % 3 == 0 {
                fees.insert("clearing".to_string(), 0.0001);
            }
            if i % 10 == 0 {
                fees.insert("regulatory".to_string(), 0.00002 * i as f64);
            }
            Order {
                order_id: 10_000_000 + i as u64,
                trader: Uuid::from_u128(
                    0x5eed_0000_0000_4000_8000_0000_0000_0000 + (i % 97) as u128,
                ),
                placed_at: placed,
                exchange_time: (placed + chrono::TimeDelta::microseconds(250 + (i % 50) as i64))
                    .with_timezone(&tz),
                received: UNIX_EPOCH
                    + Duration::from_nanos(placed.timestamp_nanos_opt().unwrap() as u64 + 900_000),
                latency: Duration::from_micros(50 + (i % 400) as u64),
                symbol: SYMBOLS[i % SYMBOLS.len()].to_string(),
                side: if i % 2 == 0 { Side::Buy } else { Side::Sell },
                status: [
                    Status::New,
                    Status::PartiallyFilled,
                    Status::Filled,
                    Status::Cancelled,
                    Status::Rejected,
                ][i % 5],
                price: 100.0 + (i % 1000) as f64 * 0.01,
                quantity: 1 + (i % 500) as u32,
                filled: (i % 500) as u32 / 2,
                fees,
                coupon: (i % 4 == 0).then(|| format!("PROMO{}", i % 13)),
            }
        })
        .collect()
}

fn as_json(o: &Order) -> OrderJson {
    OrderJson {
        order_id: o.order_id,
        trader: o.trader,
        placed_at: o.placed_at,
        exchange_time: o.exchange_time,
        received: o.received,
        latency: o.latency,
        symbol: o.symbol.clone(),
        side: o.side,
        status: o.status,
        price: o.price,
        quantity: o.quantity,
        filled: o.filled,
        fees: o.fees.clone(),
        coupon: o.coupon.clone(),
    }
}

#[test]
fn order_log_round_trips_with_no_json_or_blob_field() {
    let v = orders(1_000);
    let f = common::mem_file();
    save_vector(&f, "orders", &v).unwrap();
    let back = load_vector::<Order>(&f, "orders").unwrap();
    assert_eq!(back, v);
    // Offsets are kept, not only instants.
    assert!(back
        .iter()
        .all(|o| o.exchange_time.offset().local_minus_utc() == -5 * 3600));
    // Every field is a plain column: no JSON codec anywhere in the schema.
    let data = f.group("orders/data").unwrap();
    assert_eq!(
        common::members(&data),
        [
            "coupon",
            "exchange_time",
            "fees",
            "filled",
            "latency",
            "order_id",
            "placed_at",
            "price",
            "quantity",
            "received",
            "side",
            "status",
            "symbol",
            "trader"
        ]
    );
    let schema = f.dataset("orders/metadata/serialized_schema").unwrap();
    let text = String::from_utf8(schema.read_raw::<u8>().unwrap()).unwrap();
    assert!(
        !text.contains("JSONCodec") && !text.contains("Bincode"),
        "{text}"
    );
}

/// The sizes of the two layouts for 100,000 rows, on disk, with the
/// default options and with deflate.
#[test]
fn order_log_100k_rows_without_json_fields() {
    let v = orders(100_000);
    let j: Vec<OrderJson> = v.iter().map(as_json).collect();
    let keep = std::env::var_os("H5VEC_ORDER_LOG_DIR");
    let mut sizes = Vec::new();
    for (label, opts) in [
        ("default", SaveOptions::default()),
        ("deflate(4)", SaveOptions::default().deflate(4)),
        // HDF5Vectors.jl's variable-length strings (uncompressed heap).
        (
            "deflate(4), vls_strings(false)",
            SaveOptions::default().deflate(4).vls_strings(false),
        ),
    ] {
        let typed = common::disk_file();
        save_vector_with_opts(&typed.file, &v, &opts);
        let json = common::disk_file();
        h5vec::save_vector_with(&json.file, "orders", &j, &opts).unwrap();
        assert_eq!(load_vector::<Order>(&typed.file, "orders").unwrap(), v);
        assert_eq!(load_vector::<OrderJson>(&json.file, "orders").unwrap(), j);
        let (tpath, jpath) = (typed.path.clone(), json.path.clone());
        let (t, _d1) = typed.close_and_size();
        let (js, _d2) = json.close_and_size();
        if let (Some(dir), "default") = (&keep, label) {
            let dir = std::path::PathBuf::from(dir);
            std::fs::copy(&tpath, dir.join("order_log_typed.h5")).unwrap();
            std::fs::copy(&jpath, dir.join("order_log_json.h5")).unwrap();
        }
        sizes.push((label, t, js));
        // Storing each field by its kind is smaller than JSON text.
        assert!(t < js, "{label}: typed {t} bytes, json {js} bytes");
    }
    for (label, t, js) in sizes {
        println!(
            "order log, 100000 rows, {label}: typed {:.1} MiB, json fields {:.1} MiB ({:.2}x)",
            t as f64 / 1048576.0,
            js as f64 / 1048576.0,
            js as f64 / t as f64
        );
    }
}

fn save_vector_with_opts(f: &h5vec::hdf5::File, v: &[Order], opts: &SaveOptions) {
    h5vec::save_vector_with(f, "orders", v, opts).unwrap();
}
