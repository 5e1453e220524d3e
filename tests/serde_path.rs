//! `h5vec::serde`: vectors of serde types by columns (SPEC.md section 13).
//! Every shape of the serde data model round trips; a type deriving both
//! `H5Vector` and `Serialize`/`Deserialize` writes the same datasets and
//! schema either way, and each path loads what the other saved.

use std::collections::{BTreeMap, HashMap};

use h5vec::serde::{Columns, FieldKind, SchemaOptions};
use h5vec::{DatasetInfo, H5Vector, SchemaNode};
use h5vec_tests as common;
use proptest::prelude::*;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// A schema tree without the descriptive `logical_type` (SPEC.md 13: the
/// Rust type names may differ between the paths).
fn strip(mut n: SchemaNode) -> SchemaNode {
    n.logical_type.clear();
    n.children = n.children.into_iter().map(strip).collect();
    n
}

/// One dataset: relative path, dtype, shape, chunks, filters.
type Dataset = (String, String, Vec<u64>, Option<Vec<u64>>, Vec<String>);

/// What must match between the two paths: the schema tree and every
/// dataset's relative path, dtype, shape, chunking and filters.
fn layout(file: &h5vec::hdf5::File, name: &str) -> (SchemaNode, Vec<Dataset>) {
    let info = h5vec::inspect(file, name).unwrap();
    let prefix = format!("/{name}/");
    let mut ds: Vec<_> = info
        .datasets
        .into_iter()
        .map(|d: DatasetInfo| {
            (
                d.path.strip_prefix(&prefix).unwrap_or(&d.path).to_owned(),
                d.dtype,
                d.shape,
                d.chunks,
                d.filters,
            )
        })
        .collect();
    ds.sort();
    (strip(info.schema.unwrap()), ds)
}

/// Saves `rows` through serde and through the derive, checks that the
/// layouts match, and that each path loads both vectors as `rows`.
fn interchange<T>(rows: &[T], columns: &Columns)
where
    T: H5Vector + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let file = common::mem_file();
    h5vec::serde::save_vector_in(&file, "s", rows, &Default::default(), columns).unwrap();
    h5vec::save_vector(&file, "d", rows).unwrap();
    let (s, d) = (layout(&file, "s"), layout(&file, "d"));
    assert_eq!(s.0, d.0, "schema trees");
    assert_eq!(s.1, d.1, "datasets");
    for name in ["s", "d"] {
        assert_eq!(
            h5vec::load_vector::<T>(&file, name).unwrap(),
            rows,
            "derive load of {name}"
        );
        assert_eq!(
            h5vec::serde::load_vector_in::<T>(&file, name, columns).unwrap(),
            rows,
            "serde load of {name}"
        );
    }
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Inner {
    a: u8,
    b: Option<String>,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Scalars {
    i8: i8,
    i16: i16,
    i32: i32,
    i64: i64,
    u8: u8,
    u16: u16,
    u32: u32,
    u64: u64,
    f32: f32,
    f64: f64,
    flag: bool,
    text: String,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Nested {
    opt: Option<i32>,
    opt_s: Option<String>,
    xs: Vec<u16>,
    names: Vec<String>,
    holes: Vec<Option<i64>>,
    inner: Inner,
    maybe: Option<Inner>,
    many: Vec<Inner>,
    deep: Vec<Vec<f64>>,
    pair: (i32, f64),
    pairs: Vec<(u8, String)>,
    unit: (),
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Point(i32, f64);

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone, Copy)]
#[repr(u8)]
enum Color {
    Red,
    Green,
    Blue,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Painted {
    color: Color,
    colors: Vec<Color>,
    at: (i32, f64),
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Mapped {
    counts: HashMap<String, i32>,
    sorted: BTreeMap<u32, Vec<String>>,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Shape {
    Empty,
    Circle { r: f64 },
    Rect { w: f32, h: f32 },
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Drawing {
    id: u32,
    shape: Shape,
}

fn scalars(n: usize) -> Vec<Scalars> {
    (0..n)
        .map(|i| Scalars {
            i8: -(i as i8),
            i16: i as i16 * -300,
            i32: i as i32 * 70_000,
            i64: i as i64 * -5_000_000_000,
            u8: i as u8,
            u16: i as u16 * 300,
            u32: i as u32 * 70_000,
            u64: u64::MAX - i as u64,
            f32: i as f32 / 3.0,
            f64: -(i as f64) / 7.0,
            flag: i.is_multiple_of(3),
            text: format!("row {i} é"),
        })
        .collect()
}

fn inner(i: usize) -> Inner {
    Inner {
        a: i as u8,
        b: (i.is_multiple_of(2)).then(|| format!("b{i}")),
    }
}

fn nested(n: usize) -> Vec<Nested> {
    (0..n)
        .map(|i| Nested {
            opt: (i % 3 != 0).then_some(i as i32),
            opt_s: (i.is_multiple_of(2)).then(|| "s".repeat(i)),
            xs: (0..i as u16).collect(),
            names: (0..i % 3).map(|k| format!("n{k}")).collect(),
            holes: vec![Some(i as i64), None],
            inner: inner(i),
            maybe: (i % 2 == 1).then(|| inner(i + 1)),
            many: (0..i % 4).map(inner).collect(),
            deep: vec![vec![i as f64], vec![]],
            pair: (i as i32, i as f64 * 0.5),
            pairs: vec![(i as u8, format!("p{i}"))],
            unit: (),
        })
        .collect()
}

#[test]
fn scalars_interchange() {
    interchange(&scalars(50), &Columns::of::<Scalars>().unwrap());
}

#[test]
fn nested_options_lists_records_tuples_interchange() {
    interchange(&nested(40), &Columns::of::<Nested>().unwrap());
}

#[test]
fn fieldless_enums_and_tuple_structs_interchange() {
    let rows: Vec<Painted> = (0..30)
        .map(|i| Painted {
            color: [Color::Red, Color::Green, Color::Blue][i % 3],
            colors: vec![Color::Blue; i % 3],
            at: (i as i32, -(i as f64)),
        })
        .collect();
    interchange(&rows, &Columns::of::<Painted>().unwrap());
    // The labels are stored: variant names, values 0, 1, 2, as `#[repr(u8)]`.
    let file = common::mem_file();
    h5vec::serde::save_vector(&file, "p", &rows).unwrap();
    let batch = h5vec::arrow::read_vector(&file, "p").unwrap();
    let schema = batch.schema();
    let meta = &schema.field(0).metadata()["h5vec.schema"];
    assert!(
        meta.contains(r#""variant_names":["Red","Green","Blue"]"#),
        "{meta}"
    );
    assert!(meta.contains(r#""variant_values":[0,1,2]"#), "{meta}");
    assert!(meta.contains(r#""encoded_type":"UInt8""#), "{meta}");
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Located {
    at: Point,
}

#[test]
fn tuple_structs_differ_only_in_codec() {
    // serde cannot tell a tuple struct from a tuple: the serde path writes
    // `HDF5Vectors.TupleCodec` where the derive writes `StructCodec`; the
    // datasets are the same; the serde path loads both, the derive refuses
    // the other codec for a tuple struct (SPEC.md 13).
    let rows: Vec<Located> = (0..9)
        .map(|i| Located {
            at: Point(i, f64::from(i) * 1.5),
        })
        .collect();
    let file = common::mem_file();
    h5vec::serde::save_vector(&file, "s", &rows).unwrap();
    h5vec::save_vector(&file, "d", &rows).unwrap();
    let (s, d) = (layout(&file, "s"), layout(&file, "d"));
    assert_eq!(s.1, d.1, "datasets");
    assert_eq!(s.0.children[0].codec, "HDF5Vectors.TupleCodec");
    assert_eq!(d.0.children[0].codec, "HDF5Vectors.StructCodec");
    let mut s_tree = s.0;
    s_tree.children[0].codec = d.0.children[0].codec.clone();
    assert_eq!(s_tree, d.0);
    for name in ["s", "d"] {
        assert_eq!(
            h5vec::serde::load_vector::<Located>(&file, name).unwrap(),
            rows
        );
    }
    assert_eq!(h5vec::load_vector::<Located>(&file, "d").unwrap(), rows);
    let e = h5vec::load_vector::<Located>(&file, "s").unwrap_err();
    assert_eq!(e.path(), "$.at", "{e}");
}

#[test]
fn maps_interchange() {
    let rows: Vec<Mapped> = (0..20)
        .map(|i| Mapped {
            counts: (0..i % 4)
                .map(|k| (format!("k{k}"), k as i32 * i as i32))
                .collect(),
            sorted: (0..i % 3)
                .map(|k| (k as u32, vec![format!("v{i}"); k]))
                .collect(),
        })
        .collect();
    interchange(&rows, &Columns::of::<Mapped>().unwrap());
}

#[test]
fn enums_with_data_interchange() {
    let rows: Vec<Drawing> = (0..30)
        .map(|i| Drawing {
            id: i,
            shape: match i % 3 {
                0 => Shape::Empty,
                1 => Shape::Circle { r: f64::from(i) },
                _ => Shape::Rect {
                    w: i as f32,
                    h: 2.0,
                },
            },
        })
        .collect();
    interchange(&rows, &Columns::of::<Drawing>().unwrap());
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Msg {
    Quit,
    Move(i32),
    Pair(u8, String),
    Write { text: String, urgent: bool },
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Envelope {
    seq: u64,
    msg: Msg,
    note: Option<String>,
    raw: Vec<u8>,
}

#[test]
fn newtype_and_tuple_variants_round_trip() {
    let rows: Vec<Envelope> = (0..12)
        .map(|i| Envelope {
            seq: i,
            msg: match i % 4 {
                0 => Msg::Quit,
                1 => Msg::Move(-(i as i32)),
                2 => Msg::Pair(i as u8, format!("p{i}")),
                _ => Msg::Write {
                    text: "hi".into(),
                    urgent: i.is_multiple_of(2),
                },
            },
            note: (i.is_multiple_of(2)).then(|| "n".into()),
            raw: vec![i as u8; i as usize % 3],
        })
        .collect();
    let file = common::mem_file();
    h5vec::serde::save_vector(&file, "e", &rows).unwrap();
    assert_eq!(
        h5vec::serde::load_vector::<Envelope>(&file, "e").unwrap(),
        rows
    );
    // A newtype variant is the derive's one-field tuple variant: a record `1`.
    let batch = h5vec::arrow::read_vector(&file, "e").unwrap();
    let schema = batch.schema();
    let h5vec::arrow::arrow_schema::DataType::Union(u, _) = schema.field(1).data_type() else {
        panic!("{:?}", schema.field(1))
    };
    let names: Vec<_> = u.iter().map(|(_, f)| f.name().clone()).collect();
    assert_eq!(names, ["Quit", "Move", "Pair", "Write"]);
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Base {
    id: u32,
    #[serde(rename = "label")]
    name: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Flat {
    #[serde(flatten)]
    base: Base,
    score: f64,
    #[serde(skip)]
    cache: u32,
    #[serde(default)]
    extra: Option<u8>,
}

#[derive(H5Vector, Debug, PartialEq)]
struct FlatRow {
    id: u32,
    label: String,
    score: f64,
    extra: Option<u8>,
}

#[test]
fn flatten_rename_skip_default() {
    let rows: Vec<Flat> = (0..5)
        .map(|i| Flat {
            base: Base {
                id: i,
                name: format!("n{i}"),
            },
            score: f64::from(i) / 2.0,
            cache: 0,
            extra: Some(i as u8),
        })
        .collect();
    let file = common::mem_file();
    let columns = SchemaOptions::new().trace_samples(&rows).unwrap();
    // A flattened struct serializes as a map: its fields come sorted by name.
    assert_eq!(columns.names(), ["extra", "id", "label", "score"]);
    h5vec::serde::save_vector_in(&file, "f", &rows, &Default::default(), &columns).unwrap();
    let back: Vec<Flat> = h5vec::serde::load_vector_in(&file, "f", &columns).unwrap();
    assert_eq!(back, rows);
    let derived: Vec<FlatRow> = h5vec::load_vector(&file, "f").unwrap();
    assert_eq!(
        derived[3],
        FlatRow {
            id: 3,
            label: "n3".into(),
            score: 1.5,
            extra: Some(3)
        }
    );
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Stamped {
    #[serde(with = "chrono::serde::ts_nanoseconds")]
    at: chrono::DateTime<chrono::Utc>,
    v: f32,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct StampedText {
    at: chrono::DateTime<chrono::Utc>,
    v: f32,
}

fn instants(n: i64) -> Vec<chrono::DateTime<chrono::Utc>> {
    (0..n)
        .map(|i| chrono::DateTime::from_timestamp_nanos(1_700_000_000_123_456_789 + i * 1_001))
        .collect()
}

#[test]
fn chrono_ts_nanoseconds_is_an_instant_as_the_derive_stores() {
    let rows: Vec<Stamped> = instants(10)
        .into_iter()
        .map(|at| Stamped { at, v: 1.0 })
        .collect();
    let columns = SchemaOptions::new()
        .kind("$.at", FieldKind::Instant)
        .trace_type::<Stamped>()
        .unwrap();
    interchange(&rows, &columns);
    // Without the kind: the plain i64 nanoseconds.
    let file = common::mem_file();
    h5vec::serde::save_vector(&file, "raw", &rows).unwrap();
    let ns: Vec<i64> = h5vec::load_column(&file, "raw", "at").unwrap();
    assert_eq!(ns[0], 1_700_000_000_123_456_789);
}

#[test]
fn chrono_default_string_form() {
    let rows: Vec<StampedText> = instants(6)
        .into_iter()
        .map(|at| StampedText { at, v: 2.0 })
        .collect();
    let file = common::mem_file();
    // As traced: the RFC 3339 string chrono serializes.
    h5vec::serde::save_vector(&file, "text", &rows).unwrap();
    let s: Vec<String> = h5vec::load_column(&file, "text", "at").unwrap();
    assert_eq!(s[0], "2023-11-14T22:13:20.123456789Z");
    assert_eq!(
        h5vec::serde::load_vector::<StampedText>(&file, "text").unwrap(),
        rows
    );
    // As an instant: the string parsed into Int64 ns, as the derive stores it.
    let columns = SchemaOptions::new()
        .kind("$.at", FieldKind::Instant)
        .trace_samples(&rows)
        .unwrap();
    h5vec::serde::save_vector_in(&file, "inst", &rows, &Default::default(), &columns).unwrap();
    let at: Vec<chrono::DateTime<chrono::Utc>> = h5vec::load_column(&file, "inst", "at").unwrap();
    assert_eq!(at, instants(6));
    assert_eq!(
        h5vec::serde::load_vector::<StampedText>(&file, "inst").unwrap(),
        rows
    );
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Tagged {
    id: uuid::Uuid,
    n: u16,
}

#[test]
fn uuid_as_16_bytes_as_the_derive_stores() {
    let rows: Vec<Tagged> = (0..8u16)
        .map(|n| Tagged {
            id: uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677 + u128::from(n)),
            n,
        })
        .collect();
    // `Uuid` parses its text: traced from samples, the kind says 16 bytes.
    assert!(Columns::of::<Tagged>().is_err());
    let columns = SchemaOptions::new()
        .kind("$.id", FieldKind::Uuid)
        .trace_samples(&rows)
        .unwrap();
    interchange(&rows, &columns);
    // Loading needs no kind: the stored 16 bytes are what `Uuid` reads.
    let file = common::mem_file();
    h5vec::serde::save_vector_in(&file, "u", &rows, &Default::default(), &columns).unwrap();
    assert_eq!(
        h5vec::serde::load_vector::<Tagged>(&file, "u").unwrap(),
        rows
    );
}

#[test]
fn writer_reader_and_append_in_batches() {
    let file = common::mem_file();
    let opts = h5vec::SaveOptions::default().chunk_length(16);
    let mut w = h5vec::serde::VectorWriter::<Nested>::create(&file, "w", &opts).unwrap();
    let rows = nested(100);
    for r in &rows {
        w.push(r).unwrap();
    }
    assert_eq!(w.finish().unwrap(), 100);
    h5vec::serde::append_vector(&file, "w", &rows[..7]).unwrap();
    let mut all = Vec::new();
    for b in h5vec::serde::VectorReader::<Nested>::open(&file, "w", 33).unwrap() {
        let b = b.unwrap();
        assert!(b.len() <= 33);
        all.extend(b);
    }
    assert_eq!(all.len(), 107);
    assert_eq!(&all[..100], &rows[..]);
    assert_eq!(&all[100..], &rows[..7]);
    // The derive reads what serde appended, and serde appends to a derived save.
    h5vec::save_vector(&file, "d", &rows[..3]).unwrap();
    h5vec::serde::append_vector(&file, "d", &rows[3..5]).unwrap();
    assert_eq!(
        h5vec::load_vector::<Nested>(&file, "d").unwrap(),
        &rows[..5]
    );
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Other {
    id: u32,
    missing: String,
}

#[test]
fn errors_name_the_field_path() {
    let file = common::mem_file();
    let rows: Vec<Drawing> = vec![Drawing {
        id: 1,
        shape: Shape::Empty,
    }];
    h5vec::serde::save_vector(&file, "v", &rows).unwrap();
    let e = h5vec::serde::load_vector::<Other>(&file, "v").unwrap_err();
    let (expected, found) = common::mismatch(&e);
    assert!(expected.contains("missing"), "{e}");
    assert!(found.contains("shape"), "{e}");
    assert_eq!(e.path(), "$", "{e}");
    // A stored field of another type: the path of the field.
    #[derive(Serialize, Deserialize, Debug)]
    struct Wrong {
        id: u32,
        shape: Vec<u8>,
    }
    let e = h5vec::serde::load_vector::<Wrong>(&file, "v").unwrap_err();
    assert_eq!(e.path(), "$.shape", "{e}");
    // Appending another shape writes nothing.
    let e = h5vec::serde::append_vector(
        &file,
        "v",
        &[Other {
            id: 2,
            missing: "x".into(),
        }],
    )
    .unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    assert_eq!(h5vec::vector_len(&file, "v").unwrap(), 1);
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Gen {
    a: Option<Vec<Option<i16>>>,
    b: Vec<(u8, Option<String>)>,
    c: Option<(f64, Vec<String>)>,
    d: BTreeMap<String, Option<u32>>,
    e: Vec<Vec<bool>>,
}

fn gen_strategy() -> impl Strategy<Value = Gen> {
    (
        proptest::option::of(proptest::collection::vec(
            proptest::option::of(any::<i16>()),
            0..4,
        )),
        proptest::collection::vec((any::<u8>(), proptest::option::of("[a-zé]{0,5}")), 0..3),
        proptest::option::of((
            any::<f64>().prop_filter("not NaN", |f| !f.is_nan()),
            proptest::collection::vec(".{0,4}", 0..3),
        )),
        proptest::collection::btree_map("[a-z]{0,3}", proptest::option::of(any::<u32>()), 0..3),
        proptest::collection::vec(proptest::collection::vec(any::<bool>(), 0..3), 0..3),
    )
        .prop_map(|(a, b, c, d, e)| Gen { a, b, c, d, e })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn random_nested_values_round_trip(rows in proptest::collection::vec(gen_strategy(), 0..12)) {
        let file = common::mem_file();
        h5vec::serde::save_vector(&file, "g", &rows).unwrap();
        prop_assert_eq!(h5vec::serde::load_vector::<Gen>(&file, "g").unwrap(), rows);
    }
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone, Copy)]
struct Stamp {
    weeks: i32,
    microseconds: i64,
}

/// The benchmark's W1 record: a nested record, a float and `[f64; 3]`.
#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone, Copy)]
struct Measurement {
    timestamp: Stamp,
    temperature: f64,
    position: [f64; 3],
    grid: [[u8; 2]; 3],
}

fn measurements(n: usize) -> Vec<Measurement> {
    (0..n)
        .map(|i| Measurement {
            timestamp: Stamp {
                weeks: i as i32 - 3,
                microseconds: (i as i64) * 1_000_003,
            },
            temperature: i as f64 * 0.25 - 7.0,
            position: [i as f64, -(i as f64) / 3.0, f64::MAX],
            grid: [[i as u8, 1], [2, 3], [4, (i * 7) as u8]],
        })
        .collect()
}

#[test]
fn dense_arrays_interchange_with_the_derive() {
    let rows = measurements(300);
    let columns = SchemaOptions::new()
        .kind("$.position", FieldKind::Dense)
        .kind("$.grid", FieldKind::Dense)
        .trace_type::<Measurement>()
        .unwrap();
    interchange(&rows, &columns);
    // The dense values, row-major as the derive stores them.
    let file = common::mem_file();
    h5vec::serde::save_vector_in(&file, "m", &rows, &Default::default(), &columns).unwrap();
    let pos: Vec<[f64; 3]> = h5vec::load_column(&file, "m", "position").unwrap();
    assert_eq!(pos[7], [7.0, -7.0 / 3.0, f64::MAX]);
    let ds = file.dataset("m/data/position/values").unwrap();
    assert_eq!(ds.shape(), [300, 3]);
    assert_eq!(ds.dtype().unwrap().size(), 8);
    // A dense column loads into a serde tuple of the same numbers.
    #[derive(Deserialize, Debug, PartialEq)]
    struct AsTuple {
        position: (f64, f64, f64),
        grid: ((u8, u8), (u8, u8), (u8, u8)),
    }
    let t: Vec<AsTuple> = h5vec::serde::load_vector(&file, "m").unwrap();
    assert_eq!(t[5].position, (5.0, -5.0 / 3.0, f64::MAX));
    assert_eq!(t[5].grid, ((5, 1), (2, 3), (4, 35)));
    // Without the kind, `[f64; 3]` is a tuple's record: the derive refuses it.
    h5vec::serde::save_vector(&file, "rec", &rows).unwrap();
    assert!(h5vec::load_vector::<Measurement>(&file, "rec").is_err());
    assert_eq!(
        h5vec::serde::load_vector::<Measurement>(&file, "rec").unwrap(),
        rows
    );
}

#[test]
fn dense_kind_needs_an_array_of_numbers() {
    #[derive(Deserialize)]
    #[allow(dead_code)] // only traced
    struct Bad {
        name: String,
        pair: (u8, String),
        opt: [Option<u8>; 2],
    }
    for (path, found) in [
        ("$.name", "LargeUtf8"),
        ("$.pair", "LargeUtf8"),
        ("$.opt", "an optional element"),
    ] {
        let e = SchemaOptions::new()
            .kind(path, FieldKind::Dense)
            .trace_type::<Bad>()
            .unwrap_err()
            .to_string();
        assert!(e.contains(path) && e.contains(found), "{path}: {e}");
    }
}

/// Shapes the serde path writes and reads without serde_arrow (fast.rs):
/// numbers, bools, strings, lists, options of these, nested records.
#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Direct {
    id: u64,
    name: String,
    tags: Vec<String>,
    values: Vec<f32>,
    opt: Option<i32>,
    opt_s: Option<String>,
    flag: bool,
    maybe: Option<bool>,
    stamp: Stamp,
    holes: Vec<Option<i64>>,
}

fn directs(n: usize) -> Vec<Direct> {
    (0..n)
        .map(|i| Direct {
            id: u64::MAX - i as u64,
            name: "é".repeat(i % 7),
            tags: (0..i % 4).map(|k| format!("t{k}-{i}")).collect(),
            values: (0..i % 5).map(|k| k as f32 / 4.0 + i as f32).collect(),
            opt: (i % 3 != 0).then_some(-(i as i32)),
            opt_s: (i % 4 == 1).then(|| format!("s{i}")),
            flag: i.is_multiple_of(2),
            maybe: (i % 5 != 2).then_some(i % 3 == 0),
            stamp: Stamp {
                weeks: i as i32,
                microseconds: -(i as i64) * 977,
            },
            holes: (0..i % 3)
                .map(|k| (k != 1).then_some(k as i64 * i as i64))
                .collect(),
        })
        .collect()
}

#[test]
fn direct_shapes_in_many_batches_interchange_with_the_derive() {
    // 16-row batches: the serializer's buffers go to each batch's arrays
    // and come back for the next (and strings both ways of storing them).
    for vls in [false, true] {
        let opts = h5vec::SaveOptions::default()
            .chunk_length(16)
            .vls_strings(vls);
        let rows = directs(150);
        let columns = Columns::of::<Direct>().unwrap();
        let file = common::mem_file();
        h5vec::serde::save_vector_in(&file, "s", &rows, &opts, &columns).unwrap();
        let mut w =
            h5vec::serde::VectorWriter::create_in(&file, "w", &opts, columns.clone()).unwrap();
        for r in &rows {
            w.push(r).unwrap();
        }
        assert_eq!(w.finish().unwrap(), 150);
        h5vec::save_vector_with(&file, "d", &rows, &opts).unwrap();
        let d = layout(&file, "d");
        assert_eq!(layout(&file, "s"), d, "vls {vls}");
        assert_eq!(layout(&file, "w"), d, "vls {vls}");
        for name in ["s", "w", "d"] {
            assert_eq!(h5vec::load_vector::<Direct>(&file, name).unwrap(), rows);
            assert_eq!(
                h5vec::serde::load_vector::<Direct>(&file, name).unwrap(),
                rows
            );
            let mut read = Vec::new();
            for b in h5vec::serde::VectorReader::<Direct>::open(&file, name, 7).unwrap() {
                read.extend(b.unwrap());
            }
            assert_eq!(read, rows);
        }
    }
    // More rows than the serializer buffers at once (a few thousand): several
    // serialized batches make up each write batch.
    let rows = directs(9000);
    let file = common::mem_file();
    h5vec::serde::save_vector(&file, "s", &rows).unwrap();
    h5vec::save_vector(&file, "d", &rows).unwrap();
    assert_eq!(layout(&file, "s"), layout(&file, "d"));
    assert_eq!(h5vec::load_vector::<Direct>(&file, "s").unwrap(), rows);
    assert_eq!(
        h5vec::serde::load_vector::<Direct>(&file, "d").unwrap(),
        rows
    );
}

#[test]
fn load_errors_give_the_row_of_the_vector() {
    #[derive(Serialize, Deserialize)]
    struct Saved {
        x: Option<u32>,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)] // only loaded
    struct Needs {
        x: u32,
    }
    let file = common::mem_file();
    let rows: Vec<Saved> = (0..50)
        .map(|i| Saved {
            x: (i != 40).then_some(i),
        })
        .collect();
    h5vec::serde::save_vector(&file, "v", &rows).unwrap();
    let columns = Columns::of::<Needs>().unwrap();
    let e = h5vec::serde::load_vector_in::<Needs>(&file, "v", &columns).unwrap_err();
    assert!(e.to_string().contains("row 40"), "{e}");
    assert_eq!(e.path(), "$.x", "{e}");
    // Read in batches of 16: the third batch starts at row 32.
    let r = h5vec::serde::VectorReader::<Needs>::open_in(&file, "v", 16, columns).unwrap();
    let errs: Vec<String> = r.filter_map(|b| b.err()).map(|e| e.to_string()).collect();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("row 40"), "{}", errs[0]);
}

/// Serializes `x` but fails for 13 (after the field before it is written).
fn fail_on_13<S: serde::Serializer>(x: &u32, s: S) -> Result<S::Ok, S::Error> {
    if *x == 13 {
        return Err(serde::ser::Error::custom("13 refused"));
    }
    s.serialize_u32(*x)
}

#[test]
fn a_row_that_fails_to_serialize_stops_the_writer() {
    #[derive(Serialize, Deserialize)]
    struct Picky {
        name: String,
        #[serde(serialize_with = "fail_on_13")]
        x: u32,
    }
    let file = common::mem_file();
    let columns = Columns::of::<Picky>().unwrap();
    let mut w =
        h5vec::serde::VectorWriter::<Picky>::create_in(&file, "v", &Default::default(), columns)
            .unwrap();
    let row = |x| Picky {
        name: format!("n{x}"),
        x,
    };
    for x in 0..13 {
        w.push(&row(x)).unwrap();
    }
    // Row 13 fails half-way (its name is already in the columns).
    let e = w.push(&row(13)).unwrap_err();
    assert!(e.to_string().contains("13 refused"), "{e}");
    assert_eq!(e.path(), "$.x", "{e}");
    // No later row can land out of step with the name column.
    let e = w.push(&row(14)).unwrap_err();
    assert!(e.to_string().contains("earlier row failed"), "{e}");
    assert!(w.finish().is_err());
    assert!(h5vec::vector_len(&file, "v").is_err(), "nothing linked");
}

/// The serde reader can move to (and be shared with) another thread.
#[test]
fn serde_reader_is_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<h5vec::serde::VectorReader<Nested>>();
}

// ---------------------------------------------------------------- enums (issue 28, item 8)

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Kind {
    A,
    B { x: i32 },
    C(String),
    D(i32, String),
}

fn kind(i: usize) -> Kind {
    match i % 4 {
        0 => Kind::A,
        1 => Kind::B { x: -(i as i32) },
        2 => Kind::C(format!("c{i}")),
        _ => Kind::D(i as i32 * 7, format!("d{i}")),
    }
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct KindRow {
    id: u32,
    kind: Kind,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct KindList {
    id: u32,
    kinds: Vec<Kind>,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Outer {
    Unit,
    Wrap(Kind),
    Holder { k: Kind, n: u8 },
    Many(Vec<Kind>),
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct NestedEnums {
    id: u32,
    outer: Outer,
    list: Vec<Outer>,
}

fn outer(i: usize) -> Outer {
    match i % 4 {
        0 => Outer::Unit,
        1 => Outer::Wrap(kind(i + 1)),
        2 => Outer::Holder {
            k: kind(i + 2),
            n: i as u8,
        },
        _ => Outer::Many((0..i % 5).map(kind).collect()),
    }
}

/// Saved through `h5vec::serde`, loaded back exactly by the serde path
/// (traced and with the type's columns) and by the derive; the derive's
/// save writes the same schema tree and datasets.
fn enum_round_trip<T>(rows: &[T]) -> h5vec::hdf5::File
where
    T: H5Vector + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let file = common::mem_file();
    h5vec::serde::save_vector(&file, "e", rows).unwrap();
    assert_eq!(h5vec::serde::load_vector::<T>(&file, "e").unwrap(), rows);
    assert_eq!(h5vec::load_vector::<T>(&file, "e").unwrap(), rows);
    interchange(rows, &Columns::of::<T>().unwrap());
    file
}

/// The union's variant names as `h5vec::arrow` reads field `field`.
fn union_names(file: &h5vec::hdf5::File, field: usize) -> Vec<String> {
    let batch = h5vec::arrow::read_vector(file, "e").unwrap();
    let schema = batch.schema();
    match schema.field(field).data_type() {
        h5vec::arrow::arrow_schema::DataType::Union(u, _) => {
            u.iter().map(|(_, f)| f.name().clone()).collect()
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unit_struct_newtype_and_tuple_variants_in_a_record_round_trip() {
    let rows: Vec<KindRow> = (0..13)
        .map(|i| KindRow {
            id: i as u32,
            kind: kind(i),
        })
        .collect();
    let file = enum_round_trip(&rows);
    assert_eq!(union_names(&file, 1), ["A", "B", "C", "D"]);
    // A unit variant first in the enum, alone in a batch.
    let only_a = vec![KindRow {
        id: 0,
        kind: Kind::A,
    }];
    enum_round_trip(&only_a);
}

#[test]
fn lists_of_enums_round_trip() {
    let rows: Vec<KindList> = (0..9)
        .map(|i| KindList {
            id: i as u32,
            kinds: (0..i % 4).map(|k| kind(i + k)).collect(),
        })
        .collect();
    enum_round_trip(&rows);
}

#[test]
fn nested_enums_and_enums_of_enums_round_trip() {
    let rows: Vec<NestedEnums> = (0..14)
        .map(|i| NestedEnums {
            id: i as u32,
            outer: outer(i),
            list: (0..i % 3).map(|k| outer(i + k)).collect(),
        })
        .collect();
    let file = enum_round_trip(&rows);
    assert_eq!(union_names(&file, 1), ["Unit", "Wrap", "Holder", "Many"]);
}

// ------------------------------------------- optional enums (issue 28, item 8, H5)

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct OptKindRow {
    id: u32,
    k: Option<Kind>,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct OptKindList {
    ks: Option<Vec<Kind>>,
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Holds {
    Nothing,
    Maybe { k: Option<Kind>, n: i16 },
    Wrapped(Option<Kind>),
}

#[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
struct OptNested {
    h: Holds,
    hs: Vec<Holds>,
    oh: Option<Holds>,
}

/// `None` on every third row, each variant of `Kind` among the rest.
fn opt_kind(i: usize) -> Option<Kind> {
    (!i.is_multiple_of(3)).then(|| kind(i))
}

/// The rows of field `field` that `h5vec::arrow` reads as null.
fn arrow_nulls(file: &h5vec::hdf5::File, field: usize) -> Vec<usize> {
    let batch = h5vec::arrow::read_vector(file, "e").unwrap();
    // A union's nulls are its children's (Arrow unions have no validity).
    let nulls = batch.column(field).logical_nulls().unwrap();
    (0..nulls.len()).filter(|&r| nulls.is_null(r)).collect()
}

#[test]
fn optional_enums_in_a_record_round_trip() {
    let rows: Vec<OptKindRow> = (0..14)
        .map(|i| OptKindRow {
            id: i as u32,
            k: opt_kind(i),
        })
        .collect();
    let file = enum_round_trip(&rows);
    assert_eq!(union_names(&file, 1), ["A", "B", "C", "D"]);
    // The MASK as Arrow's nulls: the `None` rows, and only them.
    assert_eq!(arrow_nulls(&file, 1), [0, 3, 6, 9, 12]);
    // Only `None`, and `None` beside the first (unit) variant.
    enum_round_trip(&[OptKindRow { id: 0, k: None }]);
    enum_round_trip(&[
        OptKindRow {
            id: 0,
            k: Some(Kind::A),
        },
        OptKindRow { id: 1, k: None },
    ]);
    // In batches: rows written a few at a time, appended, read in batches.
    let file = common::mem_file();
    let mut w = h5vec::serde::VectorWriter::<OptKindRow>::create(
        &file,
        "e",
        &h5vec::SaveOptions::default().chunk_length(4),
    )
    .unwrap();
    w.extend(&rows[..9]).unwrap();
    assert_eq!(w.finish().unwrap(), 9);
    h5vec::serde::append_vector(&file, "e", &rows[9..]).unwrap();
    let mut back = Vec::new();
    for b in h5vec::serde::VectorReader::<OptKindRow>::open(&file, "e", 5).unwrap() {
        back.extend(b.unwrap());
    }
    assert_eq!(back, rows);
    assert_eq!(h5vec::load_vector::<OptKindRow>(&file, "e").unwrap(), rows);
}

#[test]
fn optional_lists_of_enums_round_trip() {
    let rows: Vec<OptKindList> = (0..10)
        .map(|i| OptKindList {
            ks: (i % 3 != 1).then(|| (0..i % 4).map(|k| kind(i + k)).collect()),
        })
        .collect();
    let file = enum_round_trip(&rows);
    assert_eq!(arrow_nulls(&file, 0), [1, 4, 7]);
}

#[test]
fn optional_enums_inside_variants_and_optional_enums_of_enums_round_trip() {
    let holds = |i: usize| match i % 3 {
        0 => Holds::Nothing,
        1 => Holds::Maybe {
            k: opt_kind(i + 1),
            n: -(i as i16),
        },
        _ => Holds::Wrapped(opt_kind(i)),
    };
    let rows: Vec<OptNested> = (0..15)
        .map(|i| OptNested {
            h: holds(i),
            hs: (0..i % 4).map(|k| holds(i + k)).collect(),
            oh: (i % 4 != 2).then(|| holds(i + 2)),
        })
        .collect();
    let file = enum_round_trip(&rows);
    assert_eq!(union_names(&file, 2), ["Nothing", "Maybe", "Wrapped"]);
    assert_eq!(arrow_nulls(&file, 2), [2, 6, 10, 14]);
}

#[test]
fn lists_of_optional_enums_are_refused_as_the_derive_has_no_layout_for_them() {
    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct ListOfOpt {
        ks: Vec<Option<Kind>>,
    }
    let file = common::mem_file();
    let e = h5vec::serde::save_vector(
        &file,
        "e",
        &[ListOfOpt {
            ks: vec![None, Some(Kind::A)],
        }],
    )
    .unwrap_err();
    assert_eq!(e.path(), "$.ks[]", "{e}");
}

#[test]
fn an_optional_enum_beside_a_serde_arrow_shape_is_an_error_not_a_wrong_value() {
    // A map keeps the row off the direct path: serde_arrow cannot build
    // or read a null union, so `None` is refused, never stored as a variant.
    #[derive(H5Vector, Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct WithMap {
        k: Option<Kind>,
        m: BTreeMap<u8, u8>,
    }
    let file = common::mem_file();
    let e = h5vec::serde::save_vector(
        &file,
        "e",
        &[WithMap {
            k: None,
            m: BTreeMap::new(),
        }],
    )
    .unwrap_err();
    assert_eq!(e.path(), "$.k", "{e}");
    // Saved by the derive, a `None` is a load error through serde_arrow.
    let rows = [
        WithMap {
            k: Some(kind(2)),
            m: BTreeMap::from([(1, 2)]),
        },
        WithMap {
            k: None,
            m: BTreeMap::new(),
        },
    ];
    h5vec::save_vector(&file, "d", &rows).unwrap();
    let e = h5vec::serde::load_vector::<WithMap>(&file, "d").unwrap_err();
    assert_eq!(e.path(), "$.k", "{e}");
    assert!(e.to_string().contains("a null at row 1"), "{e}");
    // Without a `None` both paths agree.
    h5vec::serde::save_vector(&file, "s", &rows[..1]).unwrap();
    assert_eq!(
        h5vec::serde::load_vector::<WithMap>(&file, "s").unwrap(),
        &rows[..1]
    );
    assert_eq!(
        h5vec::load_vector::<WithMap>(&file, "s").unwrap(),
        &rows[..1]
    );
}

#[test]
fn samples_that_skip_a_variant_are_an_error_naming_the_enum() {
    let only_b = [KindRow {
        id: 1,
        kind: kind(1),
    }];
    let e = SchemaOptions::new().trace_samples(&only_b).unwrap_err();
    assert_eq!(e.path(), "$.kind", "{e}");
    assert!(e.to_string().contains("positions [0]"), "{e}");
    // Nested: in a list, inside a variant.
    let nested = [NestedEnums {
        id: 0,
        outer: Outer::Unit,
        list: vec![Outer::Unit, Outer::Wrap(kind(3))],
    }];
    let e = SchemaOptions::new().trace_samples(&nested).unwrap_err();
    assert_eq!(e.path(), "$.list[].Wrap", "{e}");
    // Samples of every variant up to the last: traced as the type is.
    let all: Vec<KindRow> = (0..4)
        .map(|i| KindRow {
            id: i as u32,
            kind: kind(i),
        })
        .collect();
    let c = SchemaOptions::new().trace_samples(&all).unwrap();
    let file = common::mem_file();
    h5vec::serde::save_vector_in(&file, "e", &all, &Default::default(), &c).unwrap();
    assert_eq!(h5vec::load_vector::<KindRow>(&file, "e").unwrap(), all);
    assert_eq!(
        h5vec::serde::load_vector::<KindRow>(&file, "e").unwrap(),
        all
    );
}
