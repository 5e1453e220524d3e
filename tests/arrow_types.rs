//! `h5vec::arrow` on the nodes of SPEC.md sections 4.5 to 4.8: maps as
//! Arrow `Map`, instants as `Timestamp(ns, tz)`, dates as `Date32`, times
//! of day as `Time64(ns)`, durations as `Duration(ns)`, UUIDs as
//! `FixedSizeBinary(16)` with `arrow.uuid`, f16 as `Float16`, complex
//! numbers as `Struct { r, i }` (SPEC.md section 11).

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, DurationNanosecondType, Float16Type, Float64Type, Int32Type, Time64NanosecondType,
    TimestampNanosecondType,
};
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, Utc};
use h5vec::arrow::read_vector;
use h5vec::{save_vector, H5Vector};
use h5vec_tests::{mem_file, overwrite_rows};
use half::f16;
use num_complex::Complex;
use uuid::Uuid;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    at: DateTime<Utc>,
    local: DateTime<FixedOffset>,
    naive: chrono::NaiveDateTime,
    day: NaiveDate,
    clock: NaiveTime,
    took: Option<Duration>,
    id: Uuid,
    ids: Vec<Uuid>,
    level: f16,
    z: Complex<f64>,
    prices: BTreeMap<String, f64>,
    maybe: Option<BTreeMap<u32, Vec<String>>>,
    many: Vec<BTreeMap<i32, i32>>,
}

fn rows() -> Vec<Row> {
    let tz = FixedOffset::east_opt(7200).unwrap();
    (0..5i64)
        .map(|i| {
            let t = DateTime::from_timestamp_nanos(i * 1_000_000_001 - 3);
            Row {
                at: t,
                local: t.with_timezone(&tz),
                naive: t.naive_utc(),
                day: t.date_naive(),
                clock: t.time(),
                took: (i % 2 == 0).then(|| Duration::from_nanos(i as u64 * 7)),
                id: Uuid::from_u128(i as u128 * 0x1_0000_0001),
                ids: (0..i).map(|k| Uuid::from_u128(k as u128)).collect(),
                level: f16::from_f32(i as f32 - 1.5),
                z: Complex::new(i as f64, -0.5),
                prices: (0..i % 3)
                    .map(|k| (format!("p{k}"), k as f64 + 0.25))
                    .collect(),
                maybe: (i % 2 == 1).then(|| BTreeMap::from([(i as u32, vec!["x".into()])])),
                many: vec![BTreeMap::from([(1, i as i32)]); (i % 2) as usize],
            }
        })
        .collect()
}

#[test]
fn every_new_kind_reads_as_its_arrow_type_with_the_typed_values() {
    let f = mem_file();
    let v = rows();
    save_vector(&f, "r", &v).unwrap();
    let b = read_vector(&f, "r").unwrap();
    let col = |n: &str| b.column_by_name(n).unwrap().clone();
    let ty = |n: &str| b.schema().field_with_name(n).unwrap().data_type().clone();

    assert_eq!(
        ty("at"),
        DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
    );
    let at = col("at");
    let at = at.as_primitive::<TimestampNanosecondType>();
    assert_eq!(at.value(4), v[4].at.timestamp_nanos_opt().unwrap());
    assert_eq!(ty("naive"), DataType::Timestamp(TimeUnit::Nanosecond, None));
    assert_eq!(ty("day"), DataType::Date32);
    assert_eq!(col("day").as_primitive::<Date32Type>().value(0), -1);
    assert_eq!(ty("clock"), DataType::Time64(TimeUnit::Nanosecond));
    assert_eq!(
        col("clock").as_primitive::<Time64NanosecondType>().value(0),
        86_399_999_999_997
    );
    assert_eq!(ty("took"), DataType::Duration(TimeUnit::Nanosecond));
    let took = col("took");
    let took = took.as_primitive::<DurationNanosecondType>();
    assert!(took.is_null(1));
    assert_eq!(took.value(4), 28);

    let local = col("local");
    let local = local.as_struct();
    assert_eq!(
        local
            .column(1)
            .as_primitive::<Int32Type>()
            .values()
            .to_vec(),
        vec![7200; 5]
    );

    let field = b.schema().field_with_name("id").unwrap().clone();
    assert_eq!(field.data_type(), &DataType::FixedSizeBinary(16));
    assert_eq!(field.extension_type_name(), Some("arrow.uuid"));
    let id = col("id");
    assert_eq!(id.as_fixed_size_binary().value(3), v[3].id.as_bytes());
    let ids = col("ids");
    let ids = ids.as_list::<i64>();
    assert_eq!(
        ids.value(4).as_fixed_size_binary().value(2),
        Uuid::from_u128(2).as_bytes()
    );

    assert_eq!(ty("level"), DataType::Float16);
    assert_eq!(
        col("level").as_primitive::<Float16Type>().value(0),
        f16::from_f32(-1.5)
    );
    let z = col("z");
    let z = z.as_struct();
    assert_eq!(z.column_names(), ["r", "i"]);
    assert_eq!(z.column(0).as_primitive::<Float64Type>().value(3), 3.0);
    assert_eq!(z.column(1).as_primitive::<Float64Type>().value(3), -0.5);

    let DataType::Map(entries, false) = ty("prices") else {
        panic!("{:?}", ty("prices"))
    };
    let DataType::Struct(kv) = entries.data_type() else {
        panic!()
    };
    assert!(!kv[0].is_nullable());
    assert_eq!(
        (kv[0].name().as_str(), kv[1].name().as_str()),
        ("key", "value")
    );
    let prices = col("prices");
    let prices = prices.as_map();
    assert_eq!(prices.value_offsets(), [0, 0, 1, 3, 3, 4]);
    assert_eq!(prices.keys().as_string::<i64>().value(2), "p1");
    assert_eq!(prices.values().as_primitive::<Float64Type>().value(2), 1.25);
    let maybe = col("maybe");
    let maybe = maybe.as_map();
    assert_eq!(maybe.null_count(), 3);
    assert!(maybe.is_valid(1) && maybe.is_null(2));
    let many = col("many");
    assert_eq!(many.as_list::<i64>().value(3).as_map().len(), 1);

    // Ranges read the same values.
    let part = h5vec::arrow::read_range(&f, "r", 1..4).unwrap();
    assert_eq!(
        part.column_by_name("prices")
            .unwrap()
            .as_map()
            .value_offsets(),
        [0, 1, 3, 3]
    );
}

#[test]
fn a_time_of_day_past_midnight_is_an_error_in_the_untyped_reader_too() {
    let f = mem_file();
    save_vector(&f, "t", &[NaiveTime::MIN, NaiveTime::MIN]).unwrap();
    overwrite_rows(
        &f.dataset("t/data/values").unwrap(),
        1,
        &(-1i64).to_le_bytes(),
    );
    let e = read_vector(&f, "t").unwrap_err();
    assert_eq!(e.path(), "$[1]");
    assert!(e.to_string().contains("not a time of day"), "{e}");
}

#[test]
fn a_map_with_nullable_keys_has_no_arrow_type() {
    let f = mem_file();
    save_vector(&f, "m", &[BTreeMap::from([(Some(1u8), 2u8)])]).unwrap();
    let e = read_vector(&f, "m").unwrap_err();
    assert_eq!(e.path(), "$[].key");
    // The typed load reads it.
    assert_eq!(
        h5vec::load_vector::<BTreeMap<Option<u8>, u8>>(&f, "m").unwrap()[0][&Some(1)],
        2
    );
}

#[test]
fn a_batch_read_back_writes_the_same_values() {
    let f = mem_file();
    let v = rows();
    save_vector(&f, "r", &v).unwrap();
    let b = read_vector(&f, "r").unwrap();
    h5vec::arrow::save_record_batch(&f, "copy", &b, &Default::default()).unwrap();
    assert_eq!(h5vec::load_vector::<Row>(&f, "copy").unwrap(), v);
    let _ = UNIX_EPOCH;
}

#[test]
fn inspect_lists_the_datasets_of_every_new_kind() {
    let f = mem_file();
    save_vector(&f, "r", &rows()).unwrap();
    let info = h5vec::inspect(&f, "r").unwrap();
    let text = format!("{info:?}");
    for p in [
        "/r/data/prices/VALUES/key/heap",
        "/r/data/local/offset_seconds/values",
        "/r/data/id/values",
        "/r/data/z/values",
    ] {
        assert!(text.contains(p), "{p} in {text}");
    }
}
