//! Every kind through every output of the command: one small vector per
//! kind (instants, dates, times of day, durations, UUIDs, f16, complex
//! numbers, maps, enums with data, zones written from Arrow, a codec of a
//! newer version), printed by `cat` and `head` in each format and
//! converted to Parquet, Arrow IPC, CSV and JSON lines; Parquet and IPC
//! converted back load as the Rust types saved (README.md, "Output
//! formats").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Int32Array, RecordBatch, TimestampNanosecondArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::LogicalType;

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Utc};
use h5vec::H5Vector;
use half::f16;
use num_complex::Complex;
use tempfile::TempDir;
use uuid::Uuid;

mod common;
use common::*;

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Shape {
    Circle { r: f64 },
    Rect(f64, f64),
    Empty,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Times {
    at: DateTime<Utc>,
    naive: NaiveDateTime,
    local: DateTime<FixedOffset>,
    day: NaiveDate,
    clock: NaiveTime,
    took: std::time::Duration,
    delta: TimeDelta,
    maybe: Option<DateTime<Utc>>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Ids {
    id: Uuid,
    maybe: Option<Uuid>,
    many: Vec<Uuid>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Numbers {
    h: f16,
    z: Complex<f64>,
    z32: Option<Complex<f32>>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Maps {
    by_name: BTreeMap<String, i32>,
    by_num: BTreeMap<u32, String>,
    maybe: Option<BTreeMap<i8, f64>>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Shapes {
    id: u8,
    shape: Shape,
    maybe: Option<Shape>,
    list: Vec<Shape>,
}

fn ns(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn times() -> Vec<Times> {
    let at = [
        ns("2024-01-02T03:04:05.000000006Z"),
        ns("1969-12-31T23:59:59.5Z"),
    ];
    at.iter()
        .enumerate()
        .map(|(i, &at)| Times {
            at,
            naive: at.naive_utc(),
            local: at
                .with_timezone(&FixedOffset::east_opt(if i == 0 { 5400 } else { -3600 }).unwrap()),
            day: at.date_naive(),
            clock: at.time(),
            took: std::time::Duration::from_nanos(1_500_000_007 * i as u64),
            delta: TimeDelta::nanoseconds(-90_000_000_001 * i as i64 + 1),
            maybe: (i == 0).then_some(at),
        })
        .collect()
}

fn ids() -> Vec<Ids> {
    let u = Uuid::from_u128(0x0123_4567_89ab_4def_8000_0000_0000_0000);
    vec![
        Ids {
            id: u,
            maybe: None,
            many: vec![u, Uuid::nil()],
        },
        Ids {
            id: Uuid::max(),
            maybe: Some(u),
            many: vec![],
        },
    ]
}

fn numbers() -> Vec<Numbers> {
    vec![
        Numbers {
            h: f16::from_f32(1.5),
            z: Complex::new(1.5, -2.0),
            z32: Some(Complex::new(0.25, 0.0)),
        },
        Numbers {
            h: f16::NEG_INFINITY,
            z: Complex::new(-0.0, 1e300),
            z32: None,
        },
    ]
}

fn maps() -> Vec<Maps> {
    vec![
        Maps {
            by_name: BTreeMap::from([("a".into(), 1), ("b \"q\"".into(), -2)]),
            by_num: BTreeMap::from([(7, "seven".into()), (1, "one".into())]),
            maybe: Some(BTreeMap::from([(-1, 0.5)])),
        },
        Maps {
            by_name: BTreeMap::new(),
            by_num: BTreeMap::new(),
            maybe: None,
        },
    ]
}

fn shapes() -> Vec<Shapes> {
    vec![
        Shapes {
            id: 1,
            shape: Shape::Circle { r: 1.0 },
            maybe: Some(Shape::Rect(2.0, 3.0)),
            list: vec![Shape::Empty, Shape::Circle { r: 0.5 }],
        },
        Shapes {
            id: 2,
            shape: Shape::Rect(2.0, 3.0),
            maybe: None,
            list: vec![],
        },
        Shapes {
            id: 3,
            shape: Shape::Empty,
            maybe: Some(Shape::Empty),
            list: vec![Shape::Rect(-1.0, 0.0)],
        },
    ]
}

/// Instants in named zones, an offset and none, and dates past chrono's
/// range, written from Arrow (what the Python package or a Parquet file
/// brings): `zones`; and `bad_zone`, whose zone is no zone.
fn write_arrow_kinds(file: &h5vec::hdf5::File) {
    let ts = |tz: Option<&str>| {
        let a = TimestampNanosecondArray::from(vec![
            Some(1_704_164_645_000_000_006), // 2024-01-02T03:04:05.000000006Z
            None,
            Some(1_719_792_000_000_000_000), // 2024-07-01T00:00:00Z
        ]);
        Arc::new(match tz {
            Some(tz) => a.with_timezone(tz),
            None => a,
        }) as ArrayRef
    };
    let days = Arc::new(Date32Array::from(vec![
        Some(i32::MIN),
        None,
        Some(i32::MAX),
    ])) as ArrayRef;
    let batch = RecordBatch::try_from_iter(vec![
        ("paris", ts(Some("Europe/Paris"))),
        ("kolkata", ts(Some("+05:30"))),
        ("naive", ts(None)),
        ("day", days),
    ])
    .unwrap();
    h5vec::arrow::save_record_batch(file, "zones", &batch, &Default::default()).unwrap();
    let bad = RecordBatch::try_from_iter(vec![
        ("id", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
        ("at", ts(Some("Mars/Olympus_Mons"))),
    ])
    .unwrap();
    h5vec::arrow::save_record_batch(file, "bad_zone", &bad, &Default::default()).unwrap();
}

/// Replaces scalar string `entry` of the schema node group `node`
/// (`VECTOR/metadata/schema/children/2`) with `value`: what a newer h5vec
/// would write.
fn set_entry(f: &h5vec::hdf5::File, node: &str, entry: &str, value: &str) {
    let g = f.group(node).unwrap();
    g.unlink(entry).unwrap();
    let v: h5vec::hdf5::types::VarLenUnicode = value.parse().unwrap();
    g.new_dataset::<h5vec::hdf5::types::VarLenUnicode>()
        .shape(())
        .create(entry)
        .unwrap()
        .write_scalar(&v)
        .unwrap();
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Later {
    id: u32,
    future: i64,
    name: String,
}

/// `future`: a vector whose field `future` has a codec of a newer version.
fn write_future(file: &h5vec::hdf5::File) {
    let rows: Vec<Later> = (0..3)
        .map(|i| Later {
            id: i,
            future: i64::from(i) * 1000,
            name: format!("n{i}"),
        })
        .collect();
    h5vec::save_vector(file, "future", &rows).unwrap();
    set_entry(
        file,
        "future/metadata/schema/children/2",
        "codec",
        "h5vec.FutureCodec",
    );
}

/// A file with one vector per kind.
fn fixture() -> (TempDir, PathBuf) {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.h5");
    write_fixture(&path);
    (dir, path)
}

fn write_fixture(path: &Path) {
    let file = h5vec::create_file(path).unwrap();
    h5vec::save_vector(&file, "times", &times()).unwrap();
    h5vec::save_vector(&file, "ids", &ids()).unwrap();
    h5vec::save_vector(&file, "numbers", &numbers()).unwrap();
    h5vec::save_vector(&file, "maps", &maps()).unwrap();
    h5vec::save_vector(&file, "shapes", &shapes()).unwrap();
    write_arrow_kinds(&file);
    write_future(&file);
}

/// `cat FILE VECTOR --format FORMAT`.
fn cat(path: &Path, vector: &str, format: &str) -> String {
    run_ok(&["cat", s(path), vector, "--format", format])
}

/// Converts `path:vector` to Parquet, Arrow IPC, CSV and JSON lines in
/// `dir`, checks that CSV and JSON lines are what `cat` prints, converts
/// Parquet and IPC back into `back.h5` (`pq_VECTOR`, `ipc_VECTOR`) and
/// checks that the command prints the same rows and schema tree from them.
fn round_trip(dir: &Path, path: &Path, vector: &str) -> PathBuf {
    let src = format!("{}:{vector}", s(path));
    let back = dir.join("back.h5");
    for (ext, format) in [("csv", "csv"), ("jsonl", "jsonl")] {
        let out = dir.join(format!("{vector}.{ext}"));
        run_ok(&["convert", &src, s(&out)]);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            cat(path, vector, format),
            "{vector}.{ext}"
        );
    }
    for ext in ["parquet", "arrow"] {
        let out = dir.join(format!("{vector}.{ext}"));
        run_ok(&["convert", &src, s(&out)]);
        let name = format!("{}_{vector}", &ext[..3]);
        run_ok(&["convert", s(&out), &format!("{}:{name}", s(&back))]);
        for format in ["jsonl", "table"] {
            assert_eq!(
                cat(&back, &name, format),
                cat(path, vector, format),
                "{vector} through {ext}"
            );
        }
        assert_eq!(
            run_ok(&["schema", s(&back), &name, "--json"]),
            run_ok(&["schema", s(path), vector, "--json"]),
            "{vector} through {ext}"
        );
    }
    back
}

/// Loads vector `name` of `path` as `T`.
fn load<T: H5Vector>(path: &Path, name: &str) -> Vec<T> {
    let file = h5vec::open_file(path).unwrap();
    h5vec::load_vector::<T>(&file, name).unwrap()
}

#[test]
fn instants_dates_times_and_durations() {
    let (dir, path) = fixture();
    assert_eq!(
        cat(&path, "times", "jsonl"),
        r#"{"at":"2024-01-02T03:04:05.000000006Z","naive":"2024-01-02T03:04:05.000000006","local":{"instant":"2024-01-02T03:04:05.000000006Z","offset_seconds":5400},"day":"2024-01-02","clock":"03:04:05.000000006","took":"P0D","delta":"PT0.000000001S","maybe":"2024-01-02T03:04:05.000000006Z"}
{"at":"1969-12-31T23:59:59.500Z","naive":"1969-12-31T23:59:59.500","local":{"instant":"1969-12-31T23:59:59.500Z","offset_seconds":-3600},"day":"1969-12-31","clock":"23:59:59.500","took":"PT1.500000007S","delta":"-PT90S","maybe":null}
"#
    );
    assert_eq!(
        cat(&path, "times", "csv"),
        "at,naive,local.instant,local.offset_seconds,day,clock,took,delta,maybe
2024-01-02T03:04:05.000000006Z,2024-01-02T03:04:05.000000006,2024-01-02T03:04:05.000000006Z,5400,2024-01-02,03:04:05.000000006,P0D,PT0.000000001S,2024-01-02T03:04:05.000000006Z
1969-12-31T23:59:59.500Z,1969-12-31T23:59:59.500,1969-12-31T23:59:59.500Z,-3600,1969-12-31,23:59:59.500,PT1.500000007S,-PT90S,
"
    );
    assert_eq!(
        cat(&path, "times", "table"),
        "+--------------------------------+-------------------------------+-----------------------------------------------------------------+------------+--------------------+----------------+----------------+--------------------------------+
| at                             | naive                         | local                                                           | day        | clock              | took           | delta          | maybe                          |
+--------------------------------+-------------------------------+-----------------------------------------------------------------+------------+--------------------+----------------+----------------+--------------------------------+
| 2024-01-02T03:04:05.000000006Z | 2024-01-02T03:04:05.000000006 | {instant: 2024-01-02T03:04:05.000000006Z, offset_seconds: 5400} | 2024-01-02 | 03:04:05.000000006 | P0D            | PT0.000000001S | 2024-01-02T03:04:05.000000006Z |
| 1969-12-31T23:59:59.500Z       | 1969-12-31T23:59:59.500       | {instant: 1969-12-31T23:59:59.500Z, offset_seconds: -3600}      | 1969-12-31 | 23:59:59.500       | PT1.500000007S | -PT90S         | null                           |
+--------------------------------+-------------------------------+-----------------------------------------------------------------+------------+--------------------+----------------+----------------+--------------------------------+
"
    );
    // head prints what cat prints.
    assert_eq!(
        run_ok(&["head", s(&path), "times", "-n", "1", "--format", "csv"]),
        cat(&path, "times", "csv")
            .lines()
            .take(2)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    let back = round_trip(dir.path(), &path, "times");
    assert_eq!(load::<Times>(&back, "par_times"), times());
    assert_eq!(load::<Times>(&back, "arr_times"), times());
}

#[test]
fn instants_in_any_zone_and_every_date() {
    let (dir, path) = fixture();
    // Europe/Paris in winter (+01:00) and summer (+02:00), an offset zone,
    // no zone; the first and last Int32 days (past chrono's years).
    assert_eq!(
        cat(&path, "zones", "jsonl"),
        r#"{"paris":"2024-01-02T04:04:05.000000006+01:00","kolkata":"2024-01-02T08:34:05.000000006+05:30","naive":"2024-01-02T03:04:05.000000006","day":"-5877641-06-23"}
{"paris":null,"kolkata":null,"naive":null,"day":null}
{"paris":"2024-07-01T02:00:00+02:00","kolkata":"2024-07-01T05:30:00+05:30","naive":"2024-07-01T00:00:00","day":"+5881580-07-11"}
"#
    );
    assert_eq!(
        cat(&path, "zones", "csv"),
        "paris,kolkata,naive,day
2024-01-02T04:04:05.000000006+01:00,2024-01-02T08:34:05.000000006+05:30,2024-01-02T03:04:05.000000006,-5877641-06-23
,,,
2024-07-01T02:00:00+02:00,2024-07-01T05:30:00+05:30,2024-07-01T00:00:00,+5881580-07-11
"
    );
    assert_eq!(
        cat(&path, "zones", "table"),
        "+-------------------------------------+-------------------------------------+-------------------------------+----------------+
| paris                               | kolkata                             | naive                         | day            |
+-------------------------------------+-------------------------------------+-------------------------------+----------------+
| 2024-01-02T04:04:05.000000006+01:00 | 2024-01-02T08:34:05.000000006+05:30 | 2024-01-02T03:04:05.000000006 | -5877641-06-23 |
| null                                | null                                | null                          | null           |
| 2024-07-01T02:00:00+02:00           | 2024-07-01T05:30:00+05:30           | 2024-07-01T00:00:00           | +5881580-07-11 |
+-------------------------------------+-------------------------------------+-------------------------------+----------------+
"
    );
    round_trip(dir.path(), &path, "zones");

    // A zone that is none: every format fails before printing anything,
    // naming the column; convert leaves no file; Parquet keeps it.
    let expected = format!(
        "h5vec: {}:/bad_zone: $.at: the time zone `Mars/Olympus_Mons` is neither an IANA zone \
         name nor an offset such as +05:30, so its instants cannot be printed; convert it to \
         Parquet or Arrow IPC, which keep the zone as it is\n",
        s(&path)
    );
    for format in ["table", "jsonl", "csv"] {
        let (out, err) = run_code(&["cat", s(&path), "bad_zone", "--format", format], 2);
        assert_eq!(
            (out.as_str(), err.as_str()),
            ("", expected.as_str()),
            "{format}"
        );
    }
    for ext in ["csv", "jsonl"] {
        let out = dir.path().join(format!("bad.{ext}"));
        let (_, err) = run_code(&["convert", &format!("{}:bad_zone", s(&path)), s(&out)], 2);
        assert_eq!(err, expected, "{ext}");
        assert!(!out.exists());
    }
    // The other column prints.
    assert_eq!(
        run_ok(&[
            "cat",
            s(&path),
            "bad_zone",
            "--columns",
            "id",
            "--format",
            "csv"
        ]),
        "id\n1\n2\n3\n"
    );
    let pq = dir.path().join("bad.parquet");
    run_ok(&["convert", &format!("{}:bad_zone", s(&path)), s(&pq)]);
    let back = dir.path().join("back.h5");
    run_ok(&["convert", s(&pq), &format!("{}:bad", s(&back))]);
    assert_eq!(
        run_ok(&["schema", s(&back), "bad", "--json"]),
        run_ok(&["schema", s(&path), "bad_zone", "--json"])
    );
}

#[test]
fn uuids_in_canonical_text_and_as_parquet_uuids() {
    let (dir, path) = fixture();
    assert_eq!(
        cat(&path, "ids", "jsonl"),
        r#"{"id":"01234567-89ab-4def-8000-000000000000","maybe":null,"many":["01234567-89ab-4def-8000-000000000000","00000000-0000-0000-0000-000000000000"]}
{"id":"ffffffff-ffff-ffff-ffff-ffffffffffff","maybe":"01234567-89ab-4def-8000-000000000000","many":[]}
"#
    );
    assert_eq!(
        cat(&path, "ids", "csv"),
        r#"id,maybe,many
01234567-89ab-4def-8000-000000000000,,"[""01234567-89ab-4def-8000-000000000000"",""00000000-0000-0000-0000-000000000000""]"
ffffffff-ffff-ffff-ffff-ffffffffffff,01234567-89ab-4def-8000-000000000000,[]
"#
    );
    assert_eq!(
        cat(&path, "ids", "table"),
        "+--------------------------------------+--------------------------------------+------------------------------------------------------------------------------+
| id                                   | maybe                                | many                                                                         |
+--------------------------------------+--------------------------------------+------------------------------------------------------------------------------+
| 01234567-89ab-4def-8000-000000000000 | null                                 | [01234567-89ab-4def-8000-000000000000, 00000000-0000-0000-0000-000000000000] |
| ffffffff-ffff-ffff-ffff-ffffffffffff | 01234567-89ab-4def-8000-000000000000 | []                                                                           |
+--------------------------------------+--------------------------------------+------------------------------------------------------------------------------+
"
    );
    let back = round_trip(dir.path(), &path, "ids");
    assert_eq!(load::<Ids>(&back, "par_ids"), ids());
    assert_eq!(load::<Ids>(&back, "arr_ids"), ids());
    // Parquet: the UUID logical type on 16-byte fixed-length columns.
    let reader = ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(dir.path().join("ids.parquet")).unwrap(),
    )
    .unwrap();
    let columns = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .to_vec();
    let uuids: Vec<(String, Option<LogicalType>, i32)> = columns
        .iter()
        .map(|c| {
            (
                c.path().string(),
                c.logical_type_ref().cloned(),
                c.type_length(),
            )
        })
        .collect();
    assert_eq!(
        uuids,
        [
            ("id".to_string(), Some(LogicalType::Uuid), 16),
            ("maybe".to_string(), Some(LogicalType::Uuid), 16),
            ("many.list.item".to_string(), Some(LogicalType::Uuid), 16),
        ]
    );
}

#[test]
fn f16_and_complex_numbers() {
    let (dir, path) = fixture();
    // JSON writes infinity as Python does (`-Infinity`, not `null`, which
    // is a missing value); CSV and the table as ryu does. Complex numbers
    // are their record {r, i}.
    assert_eq!(
        cat(&path, "numbers", "jsonl"),
        r#"{"h":1.5,"z":{"r":1.5,"i":-2.0},"z32":{"r":0.25,"i":0.0}}
{"h":-Infinity,"z":{"r":-0.0,"i":1.0e300},"z32":null}
"#
    );
    assert_eq!(
        cat(&path, "numbers", "csv"),
        "h,z.r,z.i,z32.r,z32.i\n1.5,1.5,-2.0,0.25,0.0\n-inf,-0.0,1e300,,\n"
    );
    assert_eq!(
        cat(&path, "numbers", "table"),
        "+------+---------------------+-------------------+
| h    | z                   | z32               |
+------+---------------------+-------------------+
| 1.5  | {r: 1.5, i: -2.0}   | {r: 0.25, i: 0.0} |
| -inf | {r: -0.0, i: 1e300} | null              |
+------+---------------------+-------------------+
"
    );
    let back = round_trip(dir.path(), &path, "numbers");
    /// Every bit of `h`, `z` and `z32`.
    type Bits = (u16, u64, u64, Option<(u32, u32)>);
    let bits = |v: Vec<Numbers>| -> Vec<Bits> {
        v.iter()
            .map(|n| {
                (
                    n.h.to_bits(),
                    n.z.re.to_bits(),
                    n.z.im.to_bits(),
                    n.z32.map(|z| (z.re.to_bits(), z.im.to_bits())),
                )
            })
            .collect()
    };
    assert_eq!(bits(load(&back, "par_numbers")), bits(numbers()));
    assert_eq!(bits(load(&back, "arr_numbers")), bits(numbers()));
}

#[test]
fn maps_with_any_key() {
    let (dir, path) = fixture();
    assert_eq!(
        cat(&path, "maps", "jsonl"),
        r#"{"by_name":{"a":1,"b \"q\"":-2},"by_num":[[1,"one"],[7,"seven"]],"maybe":[[-1,0.5]]}
{"by_name":{},"by_num":[],"maybe":null}
"#
    );
    assert_eq!(
        cat(&path, "maps", "csv"),
        r#"by_name,by_num,maybe
"{""a"":1,""b \""q\"""":-2}","[[1,""one""],[7,""seven""]]","[[-1,0.5]]"
{},[],
"#
    );
    assert_eq!(
        cat(&path, "maps", "table"),
        r#"+-------------------+--------------------+-----------+
| by_name           | by_num             | maybe     |
+-------------------+--------------------+-----------+
| {a: 1, b "q": -2} | {1: one, 7: seven} | {-1: 0.5} |
| {}                | {}                 | null      |
+-------------------+--------------------+-----------+
"#
    );
    let back = round_trip(dir.path(), &path, "maps");
    assert_eq!(load::<Maps>(&back, "par_maps"), maps());
    assert_eq!(load::<Maps>(&back, "arr_maps"), maps());
}

#[test]
fn enums_with_data_in_flat_form() {
    let (dir, path) = fixture();
    assert_eq!(
        cat(&path, "shapes", "jsonl"),
        r#"{"id":1,"shape":{"variant":"Circle","r":1.0},"maybe":{"variant":"Rect","1":2.0,"2":3.0},"list":[{"variant":"Empty"},{"variant":"Circle","r":0.5}]}
{"id":2,"shape":{"variant":"Rect","1":2.0,"2":3.0},"maybe":null,"list":[]}
{"id":3,"shape":{"variant":"Empty"},"maybe":{"variant":"Empty"},"list":[{"variant":"Rect","1":-1.0,"2":0.0}]}
"#
    );
    assert_eq!(
        cat(&path, "shapes", "csv"),
        r#"id,shape.variant,shape.Circle.r,shape.Rect.1,shape.Rect.2,maybe.variant,maybe.Circle.r,maybe.Rect.1,maybe.Rect.2,list
1,Circle,1.0,,,Rect,,2.0,3.0,"[{""variant"":""Empty""},{""variant"":""Circle"",""r"":0.5}]"
2,Rect,,2.0,3.0,,,,,[]
3,Empty,,,,Empty,,,,"[{""variant"":""Rect"",""1"":-1.0,""2"":0.0}]"
"#
    );
    assert_eq!(
        cat(&path, "shapes", "table"),
        "+----+---------------------------------+---------------------------------+-----------------------------------------------+
| id | shape                           | maybe                           | list                                          |
+----+---------------------------------+---------------------------------+-----------------------------------------------+
| 1  | {variant: Circle, r: 1.0}       | {variant: Rect, 1: 2.0, 2: 3.0} | [{variant: Empty}, {variant: Circle, r: 0.5}] |
| 2  | {variant: Rect, 1: 2.0, 2: 3.0} | null                            | []                                            |
| 3  | {variant: Empty}                | {variant: Empty}                | [{variant: Rect, 1: -1.0, 2: 0.0}]            |
+----+---------------------------------+---------------------------------+-----------------------------------------------+
"
    );
    // One variant's field selected: still the union's flat form.
    assert_eq!(
        run_ok(&[
            "head",
            s(&path),
            "shapes",
            "-n",
            "2",
            "--columns",
            "maybe",
            "--format",
            "jsonl"
        ]),
        "{\"maybe\":{\"variant\":\"Rect\",\"1\":2.0,\"2\":3.0}}\n{\"maybe\":null}\n"
    );
    // Parquet and IPC hold the flat form, with the union node in the
    // field's metadata: converted back, the enums load again.
    let back = round_trip(dir.path(), &path, "shapes");
    assert_eq!(load::<Shapes>(&back, "par_shapes"), shapes());
    assert_eq!(load::<Shapes>(&back, "arr_shapes"), shapes());
    let reader = ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(dir.path().join("shapes.parquet")).unwrap(),
    )
    .unwrap();
    let shape = reader.schema().field_with_name("shape").unwrap().clone();
    assert_eq!(shape.metadata()["h5vec.union"], "flat");
    assert_eq!(shape.metadata()["h5vec.kind"], "union");
    /// Names, nullability and types of a field and its children, without metadata.
    fn outline(f: &arrow::datatypes::Field) -> String {
        let n = if f.is_nullable() { "?" } else { "" };
        match f.data_type() {
            arrow::datatypes::DataType::Struct(fs) => {
                let inner: Vec<String> = fs.iter().map(|c| outline(c)).collect();
                format!("{}{n}{{{}}}", f.name(), inner.join(", "))
            }
            t => format!("{}{n}: {t}", f.name()),
        }
    }
    assert_eq!(
        outline(&shape),
        "shape{variant: Dictionary(Int32, Utf8), Circle?{r: Float64}, Rect?{1: Float64, 2: Float64}}"
    );
}

#[test]
fn a_codec_of_a_newer_version_is_listed_and_left_out() {
    let (dir, path) = fixture();
    let p = s(&path);
    assert!(run_ok(&["ls", p]).contains("/future    vector     3        3"));
    assert_eq!(
        run_ok(&["schema", p, "future"]),
        "FIELD     KIND    CODEC                      ENCODED  LOGICAL TYPE
$         record  HDF5Vectors.StructCodec             kinds::Later
$.id      scalar  HDF5Vectors.IdentityCodec  UInt32   u32
$.future  scalar  h5vec.FutureCodec          Int64    i64
$.name    scalar  HDF5Vectors.IdentityCodec  String   alloc::string::String
"
    );
    assert!(run_ok(&["info", p, "future"]).contains("/future/data/future/values  $.future  int64"));
    // The other columns print and convert.
    assert_eq!(
        run_ok(&[
            "cat",
            p,
            "future",
            "--columns",
            "name,id",
            "--format",
            "csv"
        ]),
        "name,id\nn0,0\nn1,1\nn2,2\n"
    );
    let pq = dir.path().join("future.parquet");
    run_ok(&["convert", &format!("{p}:future"), s(&pq), "--columns", "id"]);
    // Reading it is an error naming it and its codec, before any output.
    let expected = format!(
        "h5vec: {p}:/future: $.future: expected a schema kind and codec this version of h5vec \
         reads, found unknown codec h5vec.FutureCodec (kind scalar): this version of h5vec \
         cannot read it (--columns leaves it out)\n"
    );
    for format in ["table", "jsonl", "csv"] {
        assert_eq!(
            run_code(&["cat", p, "future", "--format", format], 2),
            (String::new(), expected.clone()),
            "{format}"
        );
    }
    let out = dir.path().join("all.parquet");
    let (_, err) = run_code(&["convert", &format!("{p}:future"), s(&out)], 2);
    assert_eq!(err, expected);
    assert!(!out.exists());
}

#[test]
fn converting_onto_a_vector_suggests_replace() {
    let (dir, path) = fixture();
    let p = s(&path);
    let pq = dir.path().join("ids.parquet");
    run_ok(&["convert", &format!("{p}:ids"), s(&pq)]);
    let (_, err) = run_code(&["convert", s(&pq), &format!("{p}:ids")], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: {p}:/ids: `ids` already exists in `/` (convert with --replace to replace it)\n"
        )
    );
    run_ok(&["convert", s(&pq), &format!("{p}:ids"), "--replace"]);
    assert_eq!(load::<Ids>(&path, "ids"), ids());
    // --replace replaces vectors only: the library's words for its option
    // are the command's flag.
    let file = h5vec::open_file_rw(&path).unwrap();
    file.new_dataset::<u8>().shape(3).create("plain").unwrap();
    drop(file);
    let (_, err) = run_code(&["convert", s(&pq), &format!("{p}:plain"), "--replace"], 2);
    assert!(err.contains("--replace replaces only vectors"), "{err}");
    assert!(!err.contains("SaveOptions"), "{err}");
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Tagged {
    Named { variant: u8 },
    Plain,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Edge {
    tag: Tagged,
    unit: Option<()>,
}

#[test]
fn what_a_format_cannot_hold_is_named() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.h5");
    let rows = vec![
        Edge {
            tag: Tagged::Named { variant: 7 },
            unit: Some(()),
        },
        Edge {
            tag: Tagged::Plain,
            unit: None,
        },
    ];
    let file = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&file, "e", &rows).unwrap();
    drop(file);
    let p = s(&path);
    // A variant's field named `variant` has no place beside the name in
    // JSON or the table; CSV nests it under the variant.
    let expected = format!(
        "h5vec: {p}:/e: $.tag: variant `Named` has a field named `variant`, which the form \
         {{\"variant\": NAME, FIELDS}} cannot hold beside the name; print it with --format csv\n"
    );
    for format in ["table", "jsonl"] {
        assert_eq!(
            run_code(&["cat", p, "e", "--format", format], 2),
            (String::new(), expected.clone()),
            "{format}"
        );
    }
    assert_eq!(
        cat(&path, "e", "csv"),
        "tag.variant,tag.Named.variant,unit\nNamed,7,{}\nPlain,,\n"
    );
    // Parquet has no record without fields.
    let out = dir.path().join("e.parquet");
    let (_, err) = run_code(&["convert", &format!("{p}:e"), s(&out)], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: {p}:/e: $.unit: a record without fields (`()`, `Option<()>`) has no Parquet \
             form; convert it to Arrow IPC (.arrow), or leave it out with --columns\n"
        )
    );
    assert!(!out.exists());
    // Arrow IPC has it.
    let ipc = dir.path().join("e.arrow");
    run_ok(&["convert", &format!("{p}:e"), s(&ipc)]);
    run_ok(&["convert", s(&ipc), &format!("{p}:back")]);
    assert_eq!(load::<Edge>(&path, "back"), rows);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Reading {
    Value { v: f64 },
    Pair(f32, f32),
    Missing,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Floats {
    d: f64,
    s: f32,
    h: f16,
    maybe: Option<f64>,
    z: Complex<f64>,
    z32: Complex<f32>,
    list: Vec<f32>,
    hs: Vec<f16>,
    map: BTreeMap<String, f64>,
    by_num: BTreeMap<i32, f32>,
    reading: Option<Reading>,
}

/// NaN, the infinities, -0.0 and 0.1 in every float type, in records,
/// lists, maps and an enum's variants; and missing values beside them.
fn floats() -> Vec<Floats> {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let (nan32, inf32) = (f32::NAN, f32::INFINITY);
    let h = f16::from_f64;
    vec![
        Floats {
            d: nan,
            s: nan32,
            h: f16::NAN,
            maybe: Some(nan),
            z: Complex::new(nan, inf),
            z32: Complex::new(-inf32, -0.0),
            list: vec![nan32, inf32, -inf32, -0.0, 0.1],
            hs: vec![f16::NAN, f16::INFINITY, f16::NEG_INFINITY, h(-0.0), h(0.1)],
            map: BTreeMap::from([
                ("inf".into(), inf),
                ("nan".into(), nan),
                ("neg".into(), -inf),
            ]),
            by_num: BTreeMap::from([(1, -0.0), (2, nan32)]),
            reading: Some(Reading::Value { v: nan }),
        },
        Floats {
            d: inf,
            s: inf32,
            h: f16::INFINITY,
            maybe: None,
            z: Complex::new(-0.0, 0.1),
            z32: Complex::new(0.1, nan32),
            list: vec![],
            hs: vec![],
            map: BTreeMap::new(),
            by_num: BTreeMap::new(),
            reading: Some(Reading::Pair(inf32, -inf32)),
        },
        Floats {
            d: -inf,
            s: -inf32,
            h: f16::NEG_INFINITY,
            maybe: Some(-inf),
            z: Complex::new(1.0, -inf),
            z32: Complex::new(0.0, 1.0),
            list: vec![1e-45, f32::MAX],
            hs: vec![h(65504.0), h(5.960464477539063e-8), h(1.0 / 3.0)],
            map: BTreeMap::from([("zero".into(), -0.0)]),
            by_num: BTreeMap::from([(-1, inf32)]),
            reading: None,
        },
        Floats {
            d: -0.0,
            s: 0.1,
            h: h(0.1),
            maybe: Some(0.1),
            z: Complex::new(0.1, 2.0),
            z32: Complex::new(-0.0, 0.5),
            list: vec![0.3],
            hs: vec![h(2.0)],
            map: BTreeMap::from([("tenth".into(), 0.1)]),
            by_num: BTreeMap::from([(0, 0.1)]),
            reading: Some(Reading::Missing),
        },
    ]
}

/// Every bit of a row's floats (NaN is not equal to itself).
fn float_bits(rows: &[Floats]) -> String {
    format!("{rows:?}")
        + &rows
            .iter()
            .map(|r| {
                format!(
                    "{:x} {:x} {:x} {:?}\n",
                    r.d.to_bits(),
                    r.s.to_bits(),
                    r.h.to_bits(),
                    r.list.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                )
            })
            .collect::<String>()
}

#[test]
fn floats_that_are_not_finite_are_not_null() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.h5");
    let file = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&file, "floats", &floats()).unwrap();
    drop(file);
    // JSON lines: NaN, Infinity, -Infinity (Python's json module and
    // pyarrow read them back; null is a missing value) at every depth;
    // finite floats the shortest text at their own width (0.1 of f32 and
    // of f16 is `0.1`; the f16 nearest 1/3 `0.3333`; its largest, 65504,
    // `65500.0`, which reads back as 65504 in f16; its least subnormal
    // `6.0e-8`).
    assert_eq!(
        cat(&path, "floats", "jsonl"),
        r#"{"d":NaN,"s":NaN,"h":NaN,"maybe":NaN,"z":{"r":NaN,"i":Infinity},"z32":{"r":-Infinity,"i":-0.0},"list":[NaN,Infinity,-Infinity,-0.0,0.1],"hs":[NaN,Infinity,-Infinity,-0.0,0.1],"map":{"inf":Infinity,"nan":NaN,"neg":-Infinity},"by_num":[[1,-0.0],[2,NaN]],"reading":{"variant":"Value","v":NaN}}
{"d":Infinity,"s":Infinity,"h":Infinity,"maybe":null,"z":{"r":-0.0,"i":0.1},"z32":{"r":0.1,"i":NaN},"list":[],"hs":[],"map":{},"by_num":[],"reading":{"variant":"Pair","1":Infinity,"2":-Infinity}}
{"d":-Infinity,"s":-Infinity,"h":-Infinity,"maybe":-Infinity,"z":{"r":1.0,"i":-Infinity},"z32":{"r":0.0,"i":1.0},"list":[1.0e-45,3.4028235e38],"hs":[65500.0,6.0e-8,0.3333],"map":{"zero":-0.0},"by_num":[[-1,Infinity]],"reading":null}
{"d":-0.0,"s":0.1,"h":0.1,"maybe":0.1,"z":{"r":0.1,"i":2.0},"z32":{"r":-0.0,"i":0.5},"list":[0.3],"hs":[2.0],"map":{"tenth":0.1},"by_num":[[0,0.1]],"reading":{"variant":"Missing"}}
"#
    );
    // CSV: plain float cells as ryu prints them (NaN, inf, -inf), f16s
    // at their width; JSON text cells as JSON lines writes them.
    assert_eq!(
        cat(&path, "floats", "csv"),
        r#"d,s,h,maybe,z.r,z.i,z32.r,z32.i,list,hs,map,by_num,reading.variant,reading.Value.v,reading.Pair.1,reading.Pair.2
NaN,NaN,NaN,NaN,NaN,inf,-inf,-0.0,"[NaN,Infinity,-Infinity,-0.0,0.1]","[NaN,Infinity,-Infinity,-0.0,0.1]","{""inf"":Infinity,""nan"":NaN,""neg"":-Infinity}","[[1,-0.0],[2,NaN]]",Value,NaN,,
inf,inf,inf,,-0.0,0.1,0.1,NaN,[],[],{},[],Pair,,inf,-inf
-inf,-inf,-inf,-inf,1.0,-inf,0.0,1.0,"[1.0e-45,3.4028235e38]","[65500.0,6.0e-8,0.3333]","{""zero"":-0.0}","[[-1,Infinity]]",,,,
-0.0,0.1,0.1,0.1,0.1,2.0,-0.0,0.5,[0.3],[2.0],"{""tenth"":0.1}","[[0,0.1]]",Missing,,,
"#
    );
    // head prints what cat prints.
    assert_eq!(
        run_ok(&["head", s(&path), "floats", "-n", "2", "--format", "jsonl"]),
        cat(&path, "floats", "jsonl")
            .lines()
            .take(2)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    // convert to .jsonl and .csv writes what cat prints; Parquet and IPC
    // keep every bit.
    let back = round_trip(dir.path(), &path, "floats");
    assert_eq!(
        float_bits(&load::<Floats>(&back, "par_floats")),
        float_bits(&floats())
    );
    assert_eq!(
        float_bits(&load::<Floats>(&back, "arr_floats")),
        float_bits(&floats())
    );
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Texts {
    name: String,
    maybe: Option<String>,
    n: u8,
}

#[test]
fn csv_tells_an_empty_string_from_a_missing_one() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.h5");
    let file = h5vec::create_file(&path).unwrap();
    let texts = vec![
        Texts {
            name: String::new(),
            maybe: None,
            n: 1,
        },
        Texts {
            name: "x".into(),
            maybe: Some(String::new()),
            n: 2,
        },
        Texts {
            name: "a,b".into(),
            maybe: Some("say \"hi\"".into()),
            n: 3,
        },
        Texts {
            name: "two\nlines".into(),
            maybe: Some("\"".into()),
            n: 4,
        },
    ];
    h5vec::save_vector(&file, "texts", &texts).unwrap();
    let one: Vec<Option<String>> = vec![Some(String::new()), None, Some("x".into()), None];
    h5vec::save_vector(&file, "one", &one).unwrap();
    let plain: Vec<String> = vec![String::new(), "y".into()];
    h5vec::save_vector(&file, "plain", &plain).unwrap();
    drop(file);
    // A missing value is an empty unquoted cell, an empty string `""`.
    let want = "name,maybe,n\n\"\",,1\nx,\"\",2\n\"a,b\",\"say \"\"hi\"\"\",3\n\"two\nlines\",\"\"\"\",4\n";
    assert_eq!(cat(&path, "texts", "csv"), want);
    // One column: a missing value is `""` as well, never an empty line
    // (readers skip those, losing the row); only JSON lines, Parquet and
    // IPC tell it from an empty string there.
    assert_eq!(cat(&path, "one", "csv"), "value\n\"\"\n\"\"\nx\n\"\"\n");
    assert_eq!(cat(&path, "plain", "csv"), "value\n\"\"\ny\n");
    assert_eq!(
        run_ok(&[
            "cat",
            s(&path),
            "texts",
            "--columns",
            "maybe",
            "--format",
            "csv"
        ]),
        "maybe\n\"\"\n\"\"\n\"say \"\"hi\"\"\"\n\"\"\"\"\n"
    );
    assert_eq!(
        run_ok(&["head", s(&path), "one", "-n", "2", "--format", "csv"]),
        "value\n\"\"\n\"\"\n"
    );
    // JSON lines always told them apart.
    assert_eq!(
        cat(&path, "one", "jsonl"),
        "{\"value\":\"\"}\n{\"value\":null}\n{\"value\":\"x\"}\n{\"value\":null}\n"
    );
    // convert writes what cat prints; no rows: the header alone.
    for vector in ["texts", "one"] {
        let out = dir.path().join(format!("{vector}.csv"));
        run_ok(&["convert", &format!("{}:{vector}", s(&path)), s(&out)]);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            cat(&path, vector, "csv")
        );
    }
    assert_eq!(
        run_ok(&[
            "cat",
            s(&path),
            "texts",
            "--rows",
            "0..0",
            "--format",
            "csv"
        ]),
        "name,maybe,n\n"
    );
}
