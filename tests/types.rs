//! Common types (SPEC.md sections 4.6 to 4.8): instants, dates, times of
//! day and durations (std, chrono, time), UUIDs, f16 and complex numbers.
//! Round trips with extremes, the layout h5py sees, save errors for values
//! with no stored form, and load errors for stored values that are not
//! valid values of the type.

use h5vec_tests as common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{
    DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, TimeZone, Utc,
};
use common::{
    assert_dtype, check_roundtrip, encode, invalid, mem_file, members, meta_str, mismatch,
    overwrite_rows, read_rows_bytes, roundtrip,
};
use h5vec::hdf5::{File, Group};
use h5vec::{load_vector, save_vector, H5Vector};
use half::f16;
use hdf5_sys::h5t;
use num_complex::Complex;
use uuid::Uuid;

/// Checks the schema node at `node` (a `metadata/schema` path): kind, codec,
/// encoded type, time unit and zone (`None` = absent).
#[track_caller]
fn node_is(
    f: &File,
    node: &str,
    kind: &str,
    codec: &str,
    encoded: &str,
    unit: Option<&str>,
    zone: Option<&str>,
) {
    let g = f.group(node).unwrap();
    assert_eq!(meta_str(&g, "kind"), kind);
    assert_eq!(meta_str(&g, "codec"), codec);
    assert_eq!(meta_str(&g, "encoded_type"), encoded);
    let opt = |name: &str| g.link_exists(name).then(|| meta_str(&g, name));
    assert_eq!(opt("time_unit").as_deref(), unit);
    assert_eq!(opt("time_zone").as_deref(), zone);
}

fn i64s(f: &File, at: &str) -> Vec<i64> {
    f.dataset(at).unwrap().read_raw::<i64>().unwrap()
}

fn i32s(f: &File, at: &str) -> Vec<i32> {
    f.dataset(at).unwrap().read_raw::<i32>().unwrap()
}

const INSTANT: &str = "h5vec.InstantCodec";
const DURATION: &str = "h5vec.DurationCodec";
const DATE: &str = "h5vec.DateCodec";
const TIME_OF_DAY: &str = "h5vec.TimeOfDayCodec";

// ---------------------------------------------------------------------------
// std

#[test]
fn system_time_round_trips_as_utc_nanoseconds_including_pre_1970_and_extremes() {
    let v = vec![
        UNIX_EPOCH,
        UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789),
        UNIX_EPOCH - Duration::new(86_400 * 365 * 100, 1),
        UNIX_EPOCH + Duration::from_nanos(i64::MAX as u64),
        UNIX_EPOCH - Duration::from_nanos(1u64 << 63),
    ];
    check_roundtrip(&v);
    let f = mem_file();
    save_vector(&f, "v", &v).unwrap();
    node_is(
        &f,
        "v/metadata/schema",
        "scalar",
        INSTANT,
        "Int64",
        Some("ns"),
        Some("UTC"),
    );
    assert_dtype(
        &f.dataset("v/data/values").unwrap(),
        *h5t::H5T_STD_I64LE,
        "Int64",
    );
    assert_eq!(
        i64s(&f, "v/data/values"),
        [
            0,
            1_700_000_000_123_456_789,
            -(86_400 * 365 * 100 * 1_000_000_000 + 1),
            i64::MAX,
            i64::MIN
        ]
    );
}

#[test]
fn system_time_and_duration_past_int64_nanoseconds_are_errors_naming_row_and_value() {
    let f = mem_file();
    let late = UNIX_EPOCH + Duration::from_nanos(i64::MAX as u64) + Duration::from_nanos(1);
    let e = save_vector(&f, "v", &[UNIX_EPOCH, late]).unwrap_err();
    assert_eq!(e.path(), "$[1]");
    let m = encode(&e);
    assert!(
        m.contains("SystemTime") && m.contains("Int64 nanoseconds"),
        "{m}"
    );
    assert!(!f.link_exists("v"));

    let e = save_vector(&f, "d", &[Duration::ZERO, Duration::MAX]).unwrap_err();
    assert_eq!(e.path(), "$[1]");
    assert!(
        encode(&e).contains("18446744073709551615.999999999s"),
        "{e}"
    );
    assert_eq!(e.location(), None);
    let ok = Duration::from_nanos(i64::MAX as u64);
    check_roundtrip(&[Duration::ZERO, Duration::new(3, 7), ok]);
}

#[test]
fn std_duration_stored_negative_is_an_error_naming_the_row() {
    let f = mem_file();
    save_vector(&f, "d", &[Duration::ZERO, Duration::new(1, 0)]).unwrap();
    node_is(
        &f,
        "d/metadata/schema",
        "scalar",
        DURATION,
        "Int64",
        Some("ns"),
        None,
    );
    let ds = f.dataset("d/data/values").unwrap();
    overwrite_rows(&ds, 1, &(-5i64).to_le_bytes());
    let e = load_vector::<Duration>(&f, "d").unwrap_err();
    assert_eq!(e.path(), "$[1]");
    assert!(invalid(&e).contains("-5 ns is negative"), "{e}");
    // TimeDelta reads the same column, negative values included.
    assert_eq!(
        load_vector::<TimeDelta>(&f, "d").unwrap(),
        [TimeDelta::zero(), TimeDelta::nanoseconds(-5)]
    );
}

// ---------------------------------------------------------------------------
// chrono

#[test]
fn chrono_instants_round_trip_at_the_int64_nanosecond_extremes() {
    let v: Vec<DateTime<Utc>> = vec![
        DateTime::from_timestamp_nanos(i64::MIN),
        DateTime::from_timestamp_nanos(i64::MAX),
        DateTime::from_timestamp_nanos(-1),
        Utc.with_ymd_and_hms(1900, 2, 28, 23, 59, 59).unwrap(),
        Utc.with_ymd_and_hms(2024, 2, 29, 12, 0, 0).unwrap() + TimeDelta::nanoseconds(1),
    ];
    check_roundtrip(&v);
    let f = mem_file();
    save_vector(&f, "v", &v).unwrap();
    assert_eq!(i64s(&f, "v/data/values")[..3], [i64::MIN, i64::MAX, -1]);
    node_is(
        &f,
        "v/metadata/schema",
        "scalar",
        INSTANT,
        "Int64",
        Some("ns"),
        Some("UTC"),
    );

    let naive: Vec<NaiveDateTime> = v.iter().map(|t| t.naive_utc()).collect();
    check_roundtrip(&naive);
    save_vector(&f, "n", &naive).unwrap();
    node_is(
        &f,
        "n/metadata/schema",
        "scalar",
        INSTANT,
        "Int64",
        Some("ns"),
        None,
    );
    assert_eq!(i64s(&f, "n/data/values"), i64s(&f, "v/data/values"));
}

#[test]
fn chrono_values_without_a_stored_form_are_save_errors() {
    let f = mem_file();
    let far = Utc.with_ymd_and_hms(2262, 4, 11, 23, 47, 16).unwrap() + TimeDelta::seconds(1);
    let e = save_vector(&f, "v", &[DateTime::<Utc>::UNIX_EPOCH, far]).unwrap_err();
    assert_eq!(e.path(), "$[1]");
    assert!(encode(&e).contains("2262-04-11T23:47:17Z"), "{e}");

    let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
        .unwrap()
        .and_hms_nano_opt(23, 59, 59, 1_500_000_000)
        .unwrap();
    let e = save_vector(&f, "l", &[leap]).unwrap_err();
    assert_eq!(e.path(), "$[0]");
    assert!(encode(&e).contains("leap second"), "{e}");
    let e = save_vector(&f, "t", &[leap.time()]).unwrap_err();
    assert!(encode(&e).contains("leap second"), "{e}");

    let e = save_vector(&f, "d", &[TimeDelta::MAX]).unwrap_err();
    assert_eq!(e.path(), "$[0]");
    assert!(encode(&e).contains("Int64 nanoseconds"), "{e}");
    let e = save_vector(&f, "o", &[NaiveDate::MIN.and_hms_opt(0, 0, 0).unwrap()]).unwrap_err();
    assert!(encode(&e).contains("Int64 nanoseconds"), "{e}");
}

#[test]
fn chrono_dates_times_and_deltas_round_trip_with_their_units() {
    let dates = vec![
        NaiveDate::MIN,
        NaiveDate::MAX,
        NaiveDate::from_ymd_opt(1970, 1, 1).unwrap(),
        NaiveDate::from_ymd_opt(1969, 12, 31).unwrap(),
        NaiveDate::from_ymd_opt(2000, 2, 29).unwrap(),
    ];
    check_roundtrip(&dates);
    let times = vec![
        NaiveTime::MIN,
        NaiveTime::from_hms_nano_opt(23, 59, 59, 999_999_999).unwrap(),
        NaiveTime::from_hms_opt(12, 30, 0).unwrap(),
    ];
    check_roundtrip(&times);
    let deltas = vec![
        TimeDelta::nanoseconds(i64::MIN),
        TimeDelta::nanoseconds(i64::MAX),
        TimeDelta::zero(),
        TimeDelta::days(-3),
    ];
    check_roundtrip(&deltas);

    let f = mem_file();
    save_vector(&f, "d", &dates).unwrap();
    node_is(
        &f,
        "d/metadata/schema",
        "scalar",
        DATE,
        "Int32",
        Some("d"),
        None,
    );
    assert_dtype(
        &f.dataset("d/data/values").unwrap(),
        *h5t::H5T_STD_I32LE,
        "Int32",
    );
    assert_eq!(i32s(&f, "d/data/values")[2..], [0, -1, 11016]);
    save_vector(&f, "t", &times).unwrap();
    node_is(
        &f,
        "t/metadata/schema",
        "scalar",
        TIME_OF_DAY,
        "Int64",
        Some("ns"),
        None,
    );
    assert_eq!(
        i64s(&f, "t/data/values"),
        [0, 86_399_999_999_999, 45_000_000_000_000]
    );
    save_vector(&f, "x", &deltas).unwrap();
    node_is(
        &f,
        "x/metadata/schema",
        "scalar",
        DURATION,
        "Int64",
        Some("ns"),
        None,
    );
}

#[test]
fn stored_values_that_are_not_valid_values_are_load_errors_naming_the_row() {
    let f = mem_file();
    let d0 = NaiveDate::from_ymd_opt(2020, 1, 1).unwrap();
    save_vector(&f, "d", &[d0, d0, d0]).unwrap();
    overwrite_rows(
        &f.dataset("d/data/values").unwrap(),
        2,
        &i32::MAX.to_le_bytes(),
    );
    let e = load_vector::<NaiveDate>(&f, "d").unwrap_err();
    assert_eq!(e.path(), "$[2]");
    assert_eq!(e.location(), Some("/d/data/values"));
    assert!(invalid(&e).contains("2147483647 days"), "{e}");
    let e = load_vector::<time::Date>(&f, "d").unwrap_err();
    assert_eq!(e.path(), "$[2]");

    save_vector(&f, "t", &[NaiveTime::MIN, NaiveTime::MIN]).unwrap();
    overwrite_rows(
        &f.dataset("t/data/values").unwrap(),
        1,
        &86_400_000_000_000i64.to_le_bytes(),
    );
    let e = load_vector::<NaiveTime>(&f, "t").unwrap_err();
    assert_eq!(e.path(), "$[1]");
    assert!(invalid(&e).contains("not a time of day"), "{e}");
    let e = load_vector::<time::Time>(&f, "t").unwrap_err();
    assert_eq!(e.path(), "$[1]");
}

#[test]
fn naive_and_utc_and_other_codecs_do_not_read_each_other() {
    let f = mem_file();
    save_vector(&f, "u", &[DateTime::<Utc>::UNIX_EPOCH]).unwrap();
    let e = load_vector::<NaiveDateTime>(&f, "u").unwrap_err();
    let (want, found) = mismatch(&e);
    assert!(
        want.contains("time_zone None") && found.contains("\"UTC\""),
        "{e}"
    );
    let e = load_vector::<i64>(&f, "u").unwrap_err();
    assert!(mismatch(&e).0.contains("HDF5Vectors.IdentityCodec"), "{e}");
    let e = load_vector::<TimeDelta>(&f, "u").unwrap_err();
    assert!(mismatch(&e).0.contains(DURATION), "{e}");
    // A plain Int64 vector is not an instant.
    save_vector(&f, "i", &[0i64]).unwrap();
    let e = load_vector::<SystemTime>(&f, "i").unwrap_err();
    assert!(mismatch(&e).0.contains(INSTANT), "{e}");
}

#[test]
fn an_instant_column_of_another_dtype_is_a_mismatch_naming_the_dataset() {
    let f = mem_file();
    save_vector(&f, "v", &[DateTime::<Utc>::UNIX_EPOCH; 3]).unwrap();
    let g = f.group("v/data").unwrap();
    g.unlink("values").unwrap();
    g.new_dataset::<f64>()
        .shape(3)
        .create("values")
        .unwrap()
        .write(&[0.0, 1.0, 2.0])
        .unwrap();
    let e = load_vector::<DateTime<Utc>>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$");
    assert_eq!(e.location(), Some("/v/data/values"));
    assert_eq!(mismatch(&e), ("Int64", "float64"));
}

#[test]
fn fixed_offset_date_times_keep_their_offset_per_row() {
    let east = FixedOffset::east_opt(5 * 3600 + 30 * 60).unwrap();
    let west = FixedOffset::west_opt(8 * 3600).unwrap();
    let v: Vec<DateTime<FixedOffset>> = vec![
        east.with_ymd_and_hms(2024, 3, 1, 9, 0, 0).unwrap(),
        west.with_ymd_and_hms(1950, 7, 4, 23, 0, 0).unwrap(),
        DateTime::from_timestamp_nanos(i64::MAX).with_timezone(&east),
    ];
    let back = roundtrip(&v);
    assert_eq!(back, v);
    let offsets = |x: &[DateTime<FixedOffset>]| x.iter().map(|t| *t.offset()).collect::<Vec<_>>();
    assert_eq!(offsets(&back), offsets(&v));

    let f = mem_file();
    save_vector(&f, "v", &v).unwrap();
    let s = f.group("v/metadata/schema").unwrap();
    assert_eq!(meta_str(&s, "kind"), "record");
    assert_eq!(meta_str(&s, "codec"), "h5vec.OffsetDateTimeCodec");
    assert_eq!(
        members(&f.group("v/data").unwrap()),
        ["instant", "offset_seconds"]
    );
    node_is(
        &f,
        "v/metadata/schema/children/1",
        "scalar",
        INSTANT,
        "Int64",
        Some("ns"),
        Some("UTC"),
    );
    assert_eq!(
        i64s(&f, "v/data/instant/values")[..2],
        [
            v[0].timestamp_nanos_opt().unwrap(),
            v[1].timestamp_nanos_opt().unwrap()
        ]
    );
    assert_eq!(
        i32s(&f, "v/data/offset_seconds/values"),
        [19800, -28800, 19800]
    );

    // An offset no FixedOffset can hold is an error naming the row.
    overwrite_rows(
        &f.dataset("v/data/offset_seconds/values").unwrap(),
        1,
        &100_000i32.to_le_bytes(),
    );
    let e = load_vector::<DateTime<FixedOffset>>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$[1]");
    assert!(invalid(&e).contains("100000 s is not a UTC offset"), "{e}");

    // The instant column past Int64 is a save error naming the row.
    let far = east.with_ymd_and_hms(3000, 1, 1, 0, 0, 0).unwrap();
    let e = save_vector(&f, "w", &[v[0], far]).unwrap_err();
    assert_eq!(e.path(), "$[1]");
    assert!(encode(&e).contains("3000-01-01"), "{e}");
}

// ---------------------------------------------------------------------------
// time

#[test]
fn time_crate_types_round_trip_with_the_same_layout_as_chrono() {
    use time::macros::{date, datetime, offset, time};
    let odt = vec![
        datetime!(2024-03-01 09:00:00 +05:30),
        datetime!(1950-07-04 23:00:00.000000001 -08:00),
        time::OffsetDateTime::from_unix_timestamp_nanos(i64::MIN.into()).unwrap(),
    ];
    let back = roundtrip(&odt);
    assert_eq!(back, odt);
    assert_eq!(
        back.iter().map(|t| t.offset()).collect::<Vec<_>>(),
        [offset!(+05:30), offset!(-08:00), offset!(UTC)]
    );
    let prim = vec![
        datetime!(1677-09-21 00:12:43.145224192),
        datetime!(2262-04-11 23:47:16.854775807),
        datetime!(1969-12-31 23:59:59.999999999),
    ];
    check_roundtrip(&prim);
    check_roundtrip(&[
        date!(1970 - 01 - 01),
        date!(-9999 - 01 - 01),
        date!(9999 - 12 - 31),
    ]);
    check_roundtrip(&[time!(0:00), time!(23:59:59.999999999)]);
    check_roundtrip(&[
        time::Duration::nanoseconds(i64::MIN),
        time::Duration::nanoseconds(i64::MAX),
        time::Duration::ZERO,
    ]);

    let f = mem_file();
    save_vector(&f, "p", &prim).unwrap();
    node_is(
        &f,
        "p/metadata/schema",
        "scalar",
        INSTANT,
        "Int64",
        Some("ns"),
        None,
    );
    assert_eq!(i64s(&f, "p/data/values")[..2], [i64::MIN, i64::MAX]);
    // chrono reads what time wrote, and the other way round.
    let naive = load_vector::<NaiveDateTime>(&f, "p").unwrap();
    assert_eq!(naive[2].and_utc().timestamp_nanos_opt(), Some(-1));
    save_vector(&f, "o", &odt).unwrap();
    let c = load_vector::<DateTime<FixedOffset>>(&f, "o").unwrap();
    assert_eq!(c[0].to_rfc3339(), "2024-03-01T09:00:00+05:30");

    let e = save_vector(&f, "x", &[datetime!(2262-04-11 23:47:16.854775808)]).unwrap_err();
    assert_eq!(e.path(), "$[0]");
    assert!(encode(&e).contains("Int64 nanoseconds"), "{e}");
    let e = save_vector(&f, "y", &[time::Duration::MAX]).unwrap_err();
    assert!(encode(&e).contains("Int64 nanoseconds"), "{e}");
}

// ---------------------------------------------------------------------------
// uuid, f16, complex

#[test]
fn uuids_are_16_bytes_per_row() {
    let v = vec![
        Uuid::nil(),
        Uuid::max(),
        Uuid::from_u128(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210),
    ];
    check_roundtrip(&v);
    let f = mem_file();
    save_vector(&f, "u", &v).unwrap();
    let ds = f.dataset("u/data/values").unwrap();
    assert_eq!(ds.shape(), [3, 16]);
    assert_dtype(&ds, *h5t::H5T_STD_U8LE, "UInt8");
    let bytes = ds.read_raw::<u8>().unwrap();
    assert_eq!(&bytes[32..], v[2].as_bytes());
    let s = f.group("u/metadata/schema").unwrap();
    assert_eq!(meta_str(&s, "kind"), "dense");
    assert_eq!(meta_str(&s, "codec"), "h5vec.UuidCodec");
    assert_eq!(
        s.dataset("dimensions").unwrap().read_raw::<i64>().unwrap(),
        [16]
    );
    // Plain [u8; 16] is not a UUID, nor the other way round.
    let e = load_vector::<[u8; 16]>(&f, "u").unwrap_err();
    assert!(mismatch(&e).0.contains("IdentityCodec"), "{e}");
}

#[test]
fn f16_keeps_every_bit_pattern_as_ieee_half() {
    let v: Vec<f16> = [
        0x0000u16, 0x8000, 0x3c00, 0x7bff, 0xfbff, 0x0001, 0x7c00, 0xfc00, 0x7e00, 0x7d2a, 0xfe01,
    ]
    .into_iter()
    .map(f16::from_bits)
    .collect();
    let back = roundtrip(&v);
    let bits = |x: &[f16]| x.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&v));
    let f = mem_file();
    save_vector(&f, "h", &v).unwrap();
    let ds = f.dataset("h/data/values").unwrap();
    let (raw, size) = read_rows_bytes(&ds);
    assert_eq!(size, 2);
    let stored: Vec<u16> = raw
        .chunks(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(stored, bits(&v));
    node_is(
        &f,
        "h/metadata/schema",
        "scalar",
        "HDF5Vectors.IdentityCodec",
        "Float16",
        None,
        None,
    );
    // f16 also works in arrays, lists and options.
    check_roundtrip(&[[f16::ONE, f16::NEG_INFINITY]]);
    check_roundtrip(&[vec![f16::MAX, f16::MIN_POSITIVE], vec![]]);
    check_roundtrip(&[Some(f16::EPSILON), None]);
    // Float32 is not read as f16 (nor the other way round).
    let e = load_vector::<f32>(&f, "h").unwrap_err();
    assert!(mismatch(&e).0.contains("Float32"), "{e}");
}

#[test]
fn complex_numbers_are_the_r_i_compound_bit_for_bit() {
    let nan = f64::from_bits(0x7ff8_dead_beef_0001);
    let v = vec![
        Complex::new(1.5, -2.0),
        Complex::new(nan, f64::NEG_INFINITY),
        Complex::new(-0.0, f64::from_bits(1)),
    ];
    let back = roundtrip(&v);
    let bits = |x: &[Complex<f64>]| {
        x.iter()
            .map(|c| (c.re.to_bits(), c.im.to_bits()))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&back), bits(&v));
    let v32 = vec![Complex::new(f32::from_bits(0x7fc0_0abc), 3.0f32)];
    let back32 = roundtrip(&v32);
    assert_eq!(back32[0].re.to_bits(), 0x7fc0_0abc);
    assert_eq!(back32[0].im, 3.0);

    let f = mem_file();
    save_vector(&f, "c", &v).unwrap();
    save_vector(&f, "c32", &v32).unwrap();
    let (raw, size) = read_rows_bytes(&f.dataset("c/data/values").unwrap());
    assert_eq!(size, 16);
    assert_eq!(&raw[16..24], &nan.to_bits().to_le_bytes());
    assert_eq!(
        meta_str(&f.group("c/metadata/schema").unwrap(), "encoded_type"),
        "ComplexF64"
    );
    assert_eq!(
        meta_str(&f.group("c32/metadata/schema").unwrap(), "encoded_type"),
        "ComplexF32"
    );
    check_roundtrip(&[vec![Complex::new(1.0f32, 2.0)], vec![]]);
    check_roundtrip(&[Some(Complex::new(1.0f64, 2.0)), None]);
    check_roundtrip(&[[Complex::new(1.0f64, 2.0); 2]]);
    // ComplexF32 is not read as ComplexF64.
    let e = load_vector::<Complex<f64>>(&f, "c32").unwrap_err();
    assert!(mismatch(&e).0.contains("ComplexF64"), "{e}");
}

#[test]
fn a_compound_with_other_members_is_not_complex() {
    let f = mem_file();
    save_vector(&f, "c", &[Complex::new(1.0f64, 2.0)]).unwrap();
    use h5vec::hdf5::types::{CompoundField, CompoundType, FloatSize, TypeDescriptor};
    let f64_ = TypeDescriptor::Float(FloatSize::U8);
    let re_im = TypeDescriptor::Compound(CompoundType {
        fields: vec![
            CompoundField::new("re", f64_.clone(), 0, 0),
            CompoundField::new("im", f64_, 8, 1),
        ],
        size: 16,
    });
    let dt = h5vec::hdf5::Datatype::from_descriptor(&re_im).unwrap();
    let g: Group = f.group("c/data").unwrap();
    g.unlink("values").unwrap();
    let ds = g
        .new_dataset_builder()
        .empty_as(&dt)
        .shape(1)
        .create("values")
        .unwrap();
    let bytes: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    overwrite_rows(&ds, 0, &bytes);
    let e = load_vector::<Complex<f64>>(&f, "c").unwrap_err();
    assert_eq!(e.location(), Some("/c/data/values"));
    assert_eq!(
        mismatch(&e),
        ("ComplexF64", "compound{re: float64, im: float64}")
    );
}

// ---------------------------------------------------------------------------
// As fields, in options and lists, with appends.

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Event {
    at: DateTime<Utc>,
    local: DateTime<FixedOffset>,
    day: NaiveDate,
    took: Option<Duration>,
    seen: Vec<SystemTime>,
    id: Uuid,
    ids: Vec<Uuid>,
    zones: Vec<DateTime<FixedOffset>>,
    when: Option<time::OffsetDateTime>,
    level: f16,
    z: Option<Complex<f32>>,
}

fn events(n: usize, from: usize) -> Vec<Event> {
    let tz = FixedOffset::east_opt(3600).unwrap();
    (from..from + n)
        .map(|i| {
            let t = DateTime::from_timestamp_nanos(i as i64 * 1_000_000_007 - 5_000_000_000);
            Event {
                at: t,
                local: t.with_timezone(&tz),
                day: t.date_naive(),
                took: (i % 3 != 0).then(|| Duration::from_millis(i as u64)),
                seen: (0..i % 4)
                    .map(|k| UNIX_EPOCH + Duration::from_secs(k as u64))
                    .collect(),
                id: Uuid::from_u128(i as u128),
                ids: (0..i % 3).map(|k| Uuid::from_u128(k as u128 + 7)).collect(),
                zones: vec![t.with_timezone(&tz); i % 2],
                when: (i % 2 == 0).then(|| {
                    time::OffsetDateTime::from_unix_timestamp(i as i64)
                        .unwrap()
                        .to_offset(time::UtcOffset::from_hms(-3, 0, 0).unwrap())
                }),
                level: f16::from_f32(i as f32 / 4.0),
                z: (i % 2 == 1).then(|| Complex::new(i as f32, -(i as f32))),
            }
        })
        .collect()
}

#[test]
fn every_type_works_as_a_field_in_options_and_lists_with_appends() {
    let f = mem_file();
    let all = events(40, 0);
    save_vector(&f, "e", &all[..10]).unwrap();
    h5vec::append_vector(&f, "e", &all[10..25]).unwrap();
    h5vec::append_vector(&f, "e", &all[25..]).unwrap();
    let back = load_vector::<Event>(&f, "e").unwrap();
    assert_eq!(back, all);
    assert_eq!(
        back.iter()
            .map(|e| e.when.map(|w| w.offset()))
            .collect::<Vec<_>>(),
        all.iter()
            .map(|e| e.when.map(|w| w.offset()))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        h5vec::load_range::<Event>(&f, "e", 7..31).unwrap(),
        all[7..31]
    );
    // List leaves: the ids of all rows back to back, (n, 16).
    let ds = f.dataset("e/data/ids/VALUES").unwrap();
    assert_eq!(ds.shape()[1], 16);
    assert_eq!(
        members(&f.group("e/data/zones/VALUES").unwrap()),
        ["instant", "offset_seconds"]
    );
    // A save error in a field names the field and the row.
    let mut bad = events(3, 0);
    bad[2].took = Some(Duration::MAX);
    let e = save_vector(&f, "bad", &bad).unwrap_err();
    assert_eq!(e.path(), "$.took[2]");
    let mut bad = events(3, 0);
    bad[1].seen = vec![UNIX_EPOCH, UNIX_EPOCH + Duration::from_secs(1 << 40)];
    let e = save_vector(&f, "bad", &bad).unwrap_err();
    assert_eq!(e.path(), "$.seen[][1]");
    assert!(!f.link_exists("bad"));
}
