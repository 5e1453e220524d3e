//! The Rust side of the cross-language matrix (`tests/python/test_matrix.py`,
//! `tests/python/test_spec_recipes.py`): one vector per kind and per
//! supported Rust type (every row of SPEC.md section 5), with its expected
//! values in a canonical JSON form that every reader outside Rust is compared
//! with, and the reverse check of files written by the Python package.
//!
//! ```text
//! cargo run --example xlang_matrix --features chrono,uuid,half,num-complex -- write OUT.h5 EXPECTED.json
//! cargo run --example xlang_matrix --features chrono,uuid,half,num-complex -- check IN.h5 EXPECTED.json
//! mpirun -n 3 target/debug/examples/xlang_matrix mpi-write OUT.h5 EXPECTED.json [deflate|lzf|zstd|checksum] [append]
//!     (built with --no-default-features --features mpi,chrono,uuid,half,num-complex: scripts/mpi_test.sh)
//! ```
//!
//! `write` saves every vector into OUT.h5 and writes EXPECTED.json:
//! `{"vectors": [{"name", "type", "rows": [...]}, ...]}`. `check` loads each
//! vector of EXPECTED.json that IN.h5 holds into its Rust type and prints
//! `ok NAME` or `FAIL NAME: reason` per vector (`missing NAME` for the
//! others); the exit status is 1 when any vector failed.
//!
//! # The canonical form (exact, per kind)
//!
//! | Rust | `type` | canonical value |
//! |---|---|---|
//! | integers | `{"t": "i8"}` .. `{"t": "u64"}` | the JSON integer |
//! | `f16` `f32` `f64` | `{"t": "f16"}` .. | the IEEE bits as lower-case hex, 4/8/16 digits (`"3ff0000000000000"`) |
//! | `bool` | `{"t": "bool"}` | `true` / `false` |
//! | `char`, `String` | `{"t": "char"}`, `{"t": "string", "vls"?: true}` | the string |
//! | fieldless `#[repr]` enum | `{"t": "enum", "repr": "Int16", "names": [...], "values": [...]}` | the variant name |
//! | `#[h5vec(json)]` | `{"t": "json", "vls"?: true}` | the stored JSON text (serde_json's compact text) |
//! | `#[h5vec(blob)]` | `{"t": "blob"}` | the bincode bytes as lower-case hex |
//! | `[T; N]` | `{"t": "array", "n": N, "item": T}` | a list |
//! | struct, tuple struct | `{"t": "struct", "fields": [[name, T], ...]}` | an object by field name (`"1"`, `"2"`, ... for tuple structs) |
//! | tuple | `{"t": "tuple", "fields": [["1", T], ...]}` | an object `{"1": .., "2": ..}` |
//! | unit struct, `()`, `PhantomData` | `{"t": "unit"}` | `null` |
//! | `Vec<T>` | `{"t": "list", "item": T}` | a list |
//! | `Option<T>` | `{"t": "option", "some": T}` | `null` or T's value |
//! | enum with data | `{"t": "union", "variants": [[name, null or {"t": "struct"/"tuple", "fields"}], ...]}` | `{"variant": name, field: value, ...}` (tuple variant fields `"1"`, `"2"`, ...) |
//! | `BTreeMap`, `HashMap` | `{"t": "map", "key": K, "value": V, "hash": bool}` | a list of `[key, value]` pairs in stored order |
//! | `SystemTime`, `DateTime<Utc>` | `{"t": "instant", "tz": "UTC"}` | Int64 nanoseconds since 1970 |
//! | `NaiveDateTime` | `{"t": "instant", "tz": null}` | Int64 nanoseconds since 1970 (no zone) |
//! | `NaiveDate` | `{"t": "date"}` | Int32 days since 1970-01-01 |
//! | `NaiveTime` | `{"t": "time"}` | Int64 nanoseconds since midnight |
//! | `Duration`, `TimeDelta` | `{"t": "duration"}` | Int64 nanoseconds |
//! | `DateTime<FixedOffset>` | `{"t": "offset_datetime"}` | `{"instant": ns, "offset_seconds": s}` |
//! | `Uuid` | `{"t": "uuid"}` | the hyphenated lower-case text |
//! | `Complex<f32>` / `Complex<f64>` | `{"t": "complex64"}` / `{"t": "complex128"}` | `{"r": bits, "i": bits}` |
//!
//! `HashMap`s use a fixed hasher, so the stored (iteration) order is the
//! same in every run; `check` compares their entries in any order (a
//! `HashMap` loaded from a file keeps no order).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, DefaultHasher};
use std::marker::PhantomData;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Utc};
use h5vec::hdf5::File;
use h5vec::{H5Vector, SaveOptions};
use half::f16;
use num_complex::Complex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use uuid::Uuid;

// ---------------------------------------------------------------------------
// The canonical form

/// A type of the matrix: its descriptor and its values' canonical form.
trait Canon {
    fn ty() -> Value;
    fn canon(&self) -> Value;
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<Map<_, _>>(),
    )
}

macro_rules! canon_int {
    ($($t:ty => $name:literal),*) => {$(
        impl Canon for $t {
            fn ty() -> Value { json!({"t": $name}) }
            fn canon(&self) -> Value { json!(*self) }
        }
    )*};
}
canon_int!(i8 => "i8", i16 => "i16", i32 => "i32", i64 => "i64",
           u8 => "u8", u16 => "u16", u32 => "u32", u64 => "u64");

impl Canon for f64 {
    fn ty() -> Value {
        json!({"t": "f64"})
    }
    fn canon(&self) -> Value {
        json!(format!("{:016x}", self.to_bits()))
    }
}
impl Canon for f32 {
    fn ty() -> Value {
        json!({"t": "f32"})
    }
    fn canon(&self) -> Value {
        json!(format!("{:08x}", self.to_bits()))
    }
}
impl Canon for f16 {
    fn ty() -> Value {
        json!({"t": "f16"})
    }
    fn canon(&self) -> Value {
        json!(format!("{:04x}", self.to_bits()))
    }
}
impl Canon for bool {
    fn ty() -> Value {
        json!({"t": "bool"})
    }
    fn canon(&self) -> Value {
        json!(*self)
    }
}
impl Canon for char {
    fn ty() -> Value {
        json!({"t": "char"})
    }
    fn canon(&self) -> Value {
        json!(self.to_string())
    }
}
impl Canon for String {
    fn ty() -> Value {
        json!({"t": "string"})
    }
    fn canon(&self) -> Value {
        json!(self)
    }
}
impl Canon for () {
    fn ty() -> Value {
        json!({"t": "unit"})
    }
    fn canon(&self) -> Value {
        Value::Null
    }
}
impl<T: 'static> Canon for PhantomData<T> {
    fn ty() -> Value {
        json!({"t": "unit"})
    }
    fn canon(&self) -> Value {
        Value::Null
    }
}
impl<T: Canon> Canon for Vec<T> {
    fn ty() -> Value {
        json!({"t": "list", "item": T::ty()})
    }
    fn canon(&self) -> Value {
        Value::Array(self.iter().map(Canon::canon).collect())
    }
}
impl<T: Canon, const N: usize> Canon for [T; N] {
    fn ty() -> Value {
        json!({"t": "array", "n": N, "item": T::ty()})
    }
    fn canon(&self) -> Value {
        Value::Array(self.iter().map(Canon::canon).collect())
    }
}
impl<T: Canon> Canon for Option<T> {
    fn ty() -> Value {
        json!({"t": "option", "some": T::ty()})
    }
    fn canon(&self) -> Value {
        self.as_ref().map_or(Value::Null, Canon::canon)
    }
}
impl<A: Canon, B: Canon, C: Canon> Canon for (A, B, C) {
    fn ty() -> Value {
        json!({"t": "tuple", "fields": [["1", A::ty()], ["2", B::ty()], ["3", C::ty()]]})
    }
    fn canon(&self) -> Value {
        obj(vec![
            ("1", self.0.canon()),
            ("2", self.1.canon()),
            ("3", self.2.canon()),
        ])
    }
}
impl<K: Canon, V: Canon> Canon for BTreeMap<K, V> {
    fn ty() -> Value {
        json!({"t": "map", "key": K::ty(), "value": V::ty(), "hash": false})
    }
    fn canon(&self) -> Value {
        Value::Array(
            self.iter()
                .map(|(k, v)| json!([k.canon(), v.canon()]))
                .collect(),
        )
    }
}

/// A `HashMap` whose iteration order is the same in every run.
type FixedHashMap<K, V> = HashMap<K, V, BuildHasherDefault<DefaultHasher>>;

impl<K: Canon, V: Canon> Canon for FixedHashMap<K, V> {
    fn ty() -> Value {
        json!({"t": "map", "key": K::ty(), "value": V::ty(), "hash": true})
    }
    fn canon(&self) -> Value {
        Value::Array(
            self.iter()
                .map(|(k, v)| json!([k.canon(), v.canon()]))
                .collect(),
        )
    }
}

fn system_ns(t: &SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i64,
        Err(e) => -(e.duration().as_nanos() as i128) as i64,
    }
}
impl Canon for SystemTime {
    fn ty() -> Value {
        json!({"t": "instant", "tz": "UTC"})
    }
    fn canon(&self) -> Value {
        json!(system_ns(self))
    }
}
impl Canon for DateTime<Utc> {
    fn ty() -> Value {
        json!({"t": "instant", "tz": "UTC"})
    }
    fn canon(&self) -> Value {
        json!(self.timestamp_nanos_opt().expect("inside Int64 ns"))
    }
}
impl Canon for NaiveDateTime {
    fn ty() -> Value {
        json!({"t": "instant", "tz": null})
    }
    fn canon(&self) -> Value {
        json!(self
            .and_utc()
            .timestamp_nanos_opt()
            .expect("inside Int64 ns"))
    }
}
impl Canon for NaiveDate {
    fn ty() -> Value {
        json!({"t": "date"})
    }
    fn canon(&self) -> Value {
        json!((*self - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days())
    }
}
impl Canon for NaiveTime {
    fn ty() -> Value {
        json!({"t": "time"})
    }
    fn canon(&self) -> Value {
        json!((*self - NaiveTime::MIN).num_nanoseconds().unwrap())
    }
}
impl Canon for Duration {
    fn ty() -> Value {
        json!({"t": "duration"})
    }
    fn canon(&self) -> Value {
        json!(self.as_nanos() as i64)
    }
}
impl Canon for TimeDelta {
    fn ty() -> Value {
        json!({"t": "duration"})
    }
    fn canon(&self) -> Value {
        json!(self.num_nanoseconds().expect("inside Int64 ns"))
    }
}
impl Canon for DateTime<FixedOffset> {
    fn ty() -> Value {
        json!({"t": "offset_datetime"})
    }
    fn canon(&self) -> Value {
        json!({"instant": self.timestamp_nanos_opt().expect("inside Int64 ns"),
               "offset_seconds": self.offset().local_minus_utc()})
    }
}
impl Canon for Uuid {
    fn ty() -> Value {
        json!({"t": "uuid"})
    }
    fn canon(&self) -> Value {
        json!(self.hyphenated().to_string())
    }
}
impl Canon for Complex<f32> {
    fn ty() -> Value {
        json!({"t": "complex64"})
    }
    fn canon(&self) -> Value {
        json!({"r": self.re.canon(), "i": self.im.canon()})
    }
}
impl Canon for Complex<f64> {
    fn ty() -> Value {
        json!({"t": "complex128"})
    }
    fn canon(&self) -> Value {
        json!({"r": self.re.canon(), "i": self.im.canon()})
    }
}

/// A derived struct (or tuple struct, fields `1`, `2`, ...) and its Canon.
macro_rules! record {
    ($name:ident { $($f:ident : $t:ty),* $(,)? }) => {
        #[derive(H5Vector, Debug, Clone)]
        struct $name { $($f: $t),* }
        impl Canon for $name {
            fn ty() -> Value { json!({"t": "struct", "fields": [$([stringify!($f), <$t as Canon>::ty()]),*]}) }
            fn canon(&self) -> Value { obj(vec![$((stringify!($f), self.$f.canon())),*]) }
        }
    };
}

// ---------------------------------------------------------------------------
// The types

/// A fieldless enum with a negative and a large discriminant.
#[derive(H5Vector, Debug, Clone, Copy)]
#[repr(i16)]
enum Level {
    Low = -3,
    Mid = 0,
    High = 7,
    Max = 300,
}

impl Canon for Level {
    fn ty() -> Value {
        json!({"t": "enum", "repr": "Int16", "names": ["Low", "Mid", "High", "Max"], "values": [-3, 0, 7, 300]})
    }
    fn canon(&self) -> Value {
        json!(format!("{self:?}"))
    }
}

#[derive(H5Vector, Debug, Clone, Copy)]
#[repr(u8)]
enum Color {
    Red = 1,
    Green = 2,
    Blue = 255,
}

impl Canon for Color {
    fn ty() -> Value {
        json!({"t": "enum", "repr": "UInt8", "names": ["Red", "Green", "Blue"], "values": [1, 2, 255]})
    }
    fn canon(&self) -> Value {
        json!(format!("{self:?}"))
    }
}

record!(Point { x: f64, y: f64 });
record!(Item {
    id: u32,
    name: String,
    at: Point,
    tags: [i16; 2],
});

#[derive(H5Vector, Debug, Clone)]
struct Pair(i32, String);

impl Canon for Pair {
    fn ty() -> Value {
        json!({"t": "struct", "fields": [["1", i32::ty()], ["2", String::ty()]]})
    }
    fn canon(&self) -> Value {
        obj(vec![("1", self.0.canon()), ("2", self.1.canon())])
    }
}

#[derive(H5Vector, Debug, Clone)]
struct Marker;

impl Canon for Marker {
    fn ty() -> Value {
        json!({"t": "unit"})
    }
    fn canon(&self) -> Value {
        Value::Null
    }
}

/// The serde type of the JSON and blob fields.
#[derive(Serialize, Deserialize, Debug, Clone)]
struct Meta {
    name: String,
    n: i64,
    xs: Vec<u8>,
    ok: Option<bool>,
}

fn meta(i: usize) -> Meta {
    Meta {
        name: ["", "é\"q\"", "日本", "a,b\nc"][i % 4].to_string(),
        n: [i64::MIN, -1, 0, i64::MAX][i % 4],
        xs: (0..i as u8).collect(),
        ok: [None, Some(true), Some(false)][i % 3],
    }
}

#[derive(H5Vector, Debug, Clone)]
struct WithJson {
    id: i32,
    #[h5vec(json)]
    meta: Meta,
}

impl Canon for WithJson {
    fn ty() -> Value {
        json!({"t": "struct", "fields": [["id", i32::ty()], ["meta", {"t": "json"}]]})
    }
    fn canon(&self) -> Value {
        obj(vec![
            ("id", self.id.canon()),
            ("meta", json!(serde_json::to_string(&self.meta).unwrap())),
        ])
    }
}

#[derive(H5Vector, Debug, Clone)]
struct WithBlob {
    id: i32,
    #[h5vec(blob)]
    payload: Meta,
}

impl Canon for WithBlob {
    fn ty() -> Value {
        json!({"t": "struct", "fields": [["id", i32::ty()], ["payload", {"t": "blob"}]]})
    }
    fn canon(&self) -> Value {
        let bytes =
            bincode::serde::encode_to_vec(&self.payload, bincode::config::standard()).unwrap();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        obj(vec![("id", self.id.canon()), ("payload", json!(hex))])
    }
}

#[derive(H5Vector, Debug, Clone)]
struct WithVls {
    #[h5vec(vls)]
    name: String,
    #[h5vec(vls)]
    maybe: Option<String>,
}

impl Canon for WithVls {
    fn ty() -> Value {
        json!({"t": "struct", "fields": [["name", {"t": "string", "vls": true}],
                                          ["maybe", {"t": "option", "some": {"t": "string", "vls": true}}]]})
    }
    fn canon(&self) -> Value {
        obj(vec![
            ("name", self.name.canon()),
            ("maybe", self.maybe.canon()),
        ])
    }
}

/// An enum with data: struct, tuple and unit variants.
#[derive(H5Vector, Debug, Clone)]
enum Shape {
    Circle { r: f64 },
    Rect(f64, f64),
    Empty,
    Note(String),
}

impl Canon for Shape {
    fn ty() -> Value {
        json!({"t": "union", "variants": [
            ["Circle", {"t": "struct", "fields": [["r", f64::ty()]]}],
            ["Rect", {"t": "tuple", "fields": [["1", f64::ty()], ["2", f64::ty()]]}],
            ["Empty", null],
            ["Note", {"t": "tuple", "fields": [["1", String::ty()]]}],
        ]})
    }
    fn canon(&self) -> Value {
        match self {
            Shape::Circle { r } => json!({"variant": "Circle", "r": r.canon()}),
            Shape::Rect(w, h) => json!({"variant": "Rect", "1": w.canon(), "2": h.canon()}),
            Shape::Empty => json!({"variant": "Empty"}),
            Shape::Note(s) => json!({"variant": "Note", "1": s.canon()}),
        }
    }
}

record!(Drawing {
    id: u32,
    shape: Shape,
});

record!(Int64Min {
    at: DateTime<Utc>,
    naive: NaiveDateTime,
    delta: TimeDelta,
});

// ---------------------------------------------------------------------------
// The vectors

type Save = Box<dyn Fn(&File) -> h5vec::Result<()>>;
/// `mpi-write`: this rank's share of the rows, saved then appended
/// (collective); the arguments are the file, the communicator, what to
/// add to the vector's options (`deflate`, `lzf`, `zstd`, `checksum` or
/// nothing) and whether to append the second half (else all rows are
/// saved at once). Returns the rows the vector
/// holds: the first half alone when the append was refused.
#[cfg(feature = "mpi")]
type SaveMpi =
    Box<dyn Fn(&File, &mpi::topology::SimpleCommunicator, &str, bool) -> h5vec::Result<usize>>;
type Load = Box<dyn Fn(&File) -> h5vec::Result<Vec<Value>>>;

struct Entry {
    name: &'static str,
    ty: Value,
    rows: Vec<Value>,
    save: Save,
    #[cfg(feature = "mpi")]
    save_mpi: SaveMpi,
    load: Load,
}

fn entry<T: H5Vector + Canon + Clone + 'static>(name: &'static str, rows: Vec<T>) -> Entry {
    entry_with(name, rows, SaveOptions::default())
}

fn entry_with<T: H5Vector + Canon + Clone + 'static>(
    name: &'static str,
    rows: Vec<T>,
    opts: SaveOptions,
) -> Entry {
    let canon = rows.iter().map(Canon::canon).collect();
    let rows = std::rc::Rc::new(rows);
    #[cfg(feature = "mpi")]
    let (mpi_rows, mpi_opts) = (rows.clone(), opts.clone());
    Entry {
        name,
        ty: T::ty(),
        rows: canon,
        save: Box::new(move |f| h5vec::save_vector_with(f, name, &rows, &opts)),
        #[cfg(feature = "mpi")]
        save_mpi: Box::new(move |f, comm, extra, append| {
            use mpi::traits::Communicator;
            // The first half of the rows saved, the rest appended; each
            // half split unevenly over the ranks (rank r from n*r*r/p/p:
            // rank 0 gets the fewest, often none).
            let (r, p) = (comm.rank() as usize, comm.size() as usize);
            let mine = |part: &[T]| {
                let at = |k: usize| part.len() * k * k / (p * p);
                part[at(r)..at(r + 1)].to_vec()
            };
            let half = if append {
                mpi_rows.len() / 2
            } else {
                mpi_rows.len()
            };
            let (first, rest) = mpi_rows.split_at(half);
            let opts = match extra {
                "deflate" => mpi_opts.clone().deflate(4),
                "lzf" => mpi_opts.clone().compression(h5vec::Compression::Lzf),
                "zstd" => mpi_opts.clone().zstd(3),
                "checksum" => mpi_opts.clone().checksum(true),
                _ => mpi_opts.clone(),
            };
            h5vec::mpi::save_vector_with(f, name, &mine(first), &opts, comm)?;
            if !append {
                return Ok(mpi_rows.len());
            }
            match h5vec::mpi::append_vector_with(f, name, &mine(rest), &opts, comm) {
                Ok(()) => Ok(mpi_rows.len()),
                // A real value equal to the placeholder the saved rows
                // chose: refused, as a serial append refuses it, and the
                // vector keeps the rows saved.
                Err(e) if e.to_string().contains("missing-value placeholder") => {
                    if comm.rank() == 0 {
                        eprintln!("{name}: append refused as expected: {e}");
                    }
                    Ok(half)
                }
                Err(e) => Err(e),
            }
        }),
        load: Box::new(move |f| {
            Ok(h5vec::load_vector::<T>(f, name)?
                .iter()
                .map(Canon::canon)
                .collect())
        }),
    }
}

fn s(x: &str) -> String {
    x.to_string()
}

fn utc(ns: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_nanos(ns)
}

fn system(ns: i64) -> SystemTime {
    if ns >= 0 {
        UNIX_EPOCH + Duration::from_nanos(ns as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(ns.unsigned_abs())
    }
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn hmap<K: std::hash::Hash + Eq, V>(pairs: Vec<(K, V)>) -> FixedHashMap<K, V> {
    pairs.into_iter().collect()
}

/// Instants at both ends of Int64 nanoseconds (i64::MIN itself, numpy's NaT,
/// is the vector `time_int64_min`), before and after 1970, with nanoseconds.
const INSTANTS: [i64; 5] = [i64::MIN + 1, -1, 0, 1_700_000_000_123_456_789, i64::MAX];

fn entries() -> Vec<Entry> {
    let shapes = || {
        vec![
            Shape::Circle { r: 1.5 },
            Shape::Rect(2.0, -0.0),
            Shape::Empty,
            Shape::Note(s("n,ö\"")),
            Shape::Circle { r: f64::INFINITY },
        ]
    };
    vec![
        // scalar: numbers, bool, char, String, labelled enums
        entry("i8", vec![i8::MIN, -1, 0, i8::MAX]),
        entry("i16", vec![i16::MIN, -1, 0, i16::MAX]),
        entry("i32", vec![i32::MIN, -1, 0, i32::MAX]),
        entry("i64", vec![i64::MIN, -1, 0, i64::MAX]),
        entry("u8", vec![0u8, 1, u8::MAX]),
        entry("u16", vec![0u16, 1, u16::MAX]),
        entry("u32", vec![0u32, 1, u32::MAX]),
        entry("u64", vec![0u64, 1, i64::MAX as u64 + 1, u64::MAX]),
        entry(
            "f32",
            vec![
                0.1f32,
                -0.0,
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::MIN_POSITIVE / 8.0,
                f32::MAX,
            ],
        ),
        entry(
            "f64",
            vec![
                0.1f64,
                -0.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                5e-324,
                f64::MAX,
                1e16,
            ],
        ),
        entry("bool", vec![true, false, true]),
        entry("char", vec!['a', 'é', '日', '🎉', '\u{10FFFF}']),
        entry(
            "string",
            vec![
                s(""),
                s("plain"),
                s("ünï, \"q\"\nline2"),
                s("日本語 🎉"),
                s("NA"),
            ],
        ),
        entry(
            "enum_i16",
            vec![Level::Low, Level::Max, Level::Mid, Level::High],
        ),
        entry("enum_u8", vec![Color::Blue, Color::Red, Color::Green]),
        entry(
            "json",
            (0..4)
                .map(|i| WithJson {
                    id: i as i32,
                    meta: meta(i),
                })
                .collect(),
        ),
        // dense
        entry(
            "dense_f64",
            vec![[1.0f64, -0.0, f64::NAN], [f64::INFINITY, 0.5, 1e300]],
        ),
        entry(
            "dense_nested",
            vec![
                [[1i32, 2], [3, 4], [5, 6]],
                [[i32::MIN, 0], [0, 0], [-1, i32::MAX]],
            ],
        ),
        entry(
            "dense_bool",
            vec![[true, false], [false, true], [true, true]],
        ),
        entry("dense_char", vec![['x', 'é'], ['🎉', '\u{10FFFF}']]),
        entry(
            "dense_enum",
            vec![[Level::Max, Level::Low], [Level::Mid, Level::High]],
        ),
        entry("dense_u8", vec![[0u8, 1, 254, 255], [9, 8, 7, 6]]),
        // record
        entry(
            "record_struct",
            vec![
                Item {
                    id: 1,
                    name: s("one"),
                    at: Point { x: 0.5, y: -0.0 },
                    tags: [-1, 2],
                },
                Item {
                    id: u32::MAX,
                    name: s(""),
                    at: Point {
                        x: f64::NAN,
                        y: 1e-300,
                    },
                    tags: [i16::MIN, i16::MAX],
                },
            ],
        ),
        entry(
            "record_tuple_struct",
            vec![Pair(-7, s("seven")), Pair(i32::MAX, s("é"))],
        ),
        entry(
            "record_tuple",
            vec![(-1i16, s("a"), true), (i16::MAX, s(""), false)],
        ),
        // constant
        entry("constant_unit_struct", vec![Marker, Marker, Marker]),
        entry("constant_unit", vec![(), ()]),
        entry(
            "constant_phantom",
            vec![PhantomData::<u32>, PhantomData, PhantomData, PhantomData],
        ),
        // blob
        entry(
            "blob",
            (0..4)
                .map(|i| WithBlob {
                    id: -(i as i32),
                    payload: meta(i),
                })
                .collect(),
        ),
        // vls_string
        entry_with(
            "vls_string",
            vec![s(""), s("héllo"), s("a,b\n\"c\""), s("NA")],
            SaveOptions::default().vls_strings(true),
        ),
        entry_with(
            "vls_option_string",
            vec![Some(s("NA")), None, Some(s("")), Some(s("ü"))],
            SaveOptions::default().vls_strings(true),
        ),
        entry(
            "vls_field",
            vec![
                WithVls {
                    name: s("x"),
                    maybe: None,
                },
                WithVls {
                    name: s(""),
                    maybe: Some(s("NA")),
                },
                WithVls {
                    name: s("日本"),
                    maybe: Some(s("")),
                },
            ],
        ),
        entry_with(
            "vls_json",
            (0..4)
                .map(|i| WithJson {
                    id: 10 + i as i32,
                    meta: meta(3 - i),
                })
                .collect(),
            SaveOptions::default().deflate(4),
        ),
        // list
        entry(
            "list_i32",
            vec![vec![], vec![1i32, -2, i32::MAX], vec![i32::MIN]],
        ),
        entry(
            "list_string",
            vec![
                vec![s("a"), s("")],
                vec![],
                vec![s("日本"), s("x,y\n\"z\"")],
            ],
        ),
        entry(
            "list_option_f64",
            vec![
                vec![Some(1.5f64), None, Some(-0.0)],
                vec![],
                vec![None],
                vec![Some(f64::NAN)],
            ],
        ),
        entry(
            "list_nested",
            vec![vec![vec![1u8, 2], vec![]], vec![], vec![vec![255u8]]],
        ),
        entry(
            "list_struct",
            vec![
                vec![Point { x: 1.0, y: 2.0 }, Point { x: -0.0, y: 0.1 }],
                vec![],
                vec![Point { x: 3.0, y: 4.0 }],
            ],
        ),
        entry("list_bool", vec![vec![true, false], vec![], vec![false]]),
        entry(
            "list_option_string",
            vec![vec![Some(s("a")), None, Some(s(""))], vec![], vec![None]],
        ),
        entry(
            "list_array",
            vec![vec![[1.0f32, 2.0], [-0.0, f32::INFINITY]], vec![]],
        ),
        entry(
            "list_enum",
            vec![vec![Level::Max, Level::Low], vec![], vec![Level::Mid]],
        ),
        // option
        entry(
            "option_i32",
            vec![Some(1i32), None, Some(i32::MIN), Some(0)],
        ),
        entry(
            "option_f64",
            vec![Some(f64::NAN), None, Some(-0.0), Some(1.5)],
        ),
        entry("option_bool", vec![Some(true), None, Some(false)]),
        entry(
            "option_string",
            vec![Some(s("a")), None, Some(s("")), Some(s("NA"))],
        ),
        entry(
            "option_struct",
            vec![
                Some(Point { x: 1.0, y: -1.0 }),
                None,
                Some(Point {
                    x: 0.0,
                    y: f64::MAX,
                }),
            ],
        ),
        entry("option_list", vec![Some(vec![1i32, 2]), None, Some(vec![])]),
        entry("option_array", vec![Some([1.0f32, -2.5, 0.0]), None]),
        entry(
            "option_enum",
            vec![None, Some(Level::High), Some(Level::Low)],
        ),
        // union
        entry("union", shapes()),
        entry(
            "union_option",
            vec![
                Some(Shape::Rect(1.0, 2.0)),
                None,
                Some(Shape::Empty),
                Some(Shape::Circle { r: -0.5 }),
            ],
        ),
        entry(
            "union_list",
            vec![shapes()[..3].to_vec(), vec![], vec![Shape::Note(s(""))]],
        ),
        entry(
            "union_field",
            shapes()
                .into_iter()
                .enumerate()
                .map(|(i, shape)| Drawing {
                    id: i as u32,
                    shape,
                })
                .collect(),
        ),
        // map
        entry(
            "map_string_f64",
            vec![
                BTreeMap::from([(s("a"), 1.5f64), (s("b"), -0.0)]),
                BTreeMap::new(),
                BTreeMap::from([(s("é,\""), f64::NAN)]),
            ],
        ),
        entry(
            "map_u32_string",
            vec![
                BTreeMap::from([(1u32, s("one")), (u32::MAX, s(""))]),
                BTreeMap::new(),
                BTreeMap::from([(0u32, s("zero"))]),
            ],
        ),
        entry(
            "map_hash",
            vec![
                hmap(vec![(s("x"), 1i32), (s("y"), -2), (s("z"), 3), (s("w"), 4)]),
                hmap(vec![]),
                hmap(vec![(s(""), 0)]),
            ],
        ),
        entry(
            "map_option",
            vec![
                Some(BTreeMap::from([(s("n"), -1i64)])),
                None,
                Some(BTreeMap::new()),
            ],
        ),
        entry(
            "map_string_list",
            vec![
                BTreeMap::from([(s("k"), vec![1u16, 2]), (s("l"), vec![])]),
                BTreeMap::new(),
            ],
        ),
        // time
        entry(
            "system_time",
            INSTANTS.iter().map(|&ns| system(ns)).collect(),
        ),
        entry(
            "duration",
            vec![
                Duration::ZERO,
                Duration::from_nanos(1),
                Duration::from_nanos(86_400_000_000_123),
                Duration::from_nanos(i64::MAX as u64),
            ],
        ),
        entry("datetime_utc", INSTANTS.iter().map(|&ns| utc(ns)).collect()),
        entry(
            "naive_datetime",
            INSTANTS.iter().map(|&ns| utc(ns).naive_utc()).collect(),
        ),
        entry(
            "naive_date",
            vec![
                NaiveDate::MIN,
                date(1969, 12, 31),
                date(1970, 1, 1),
                date(2024, 2, 29),
                date(9999, 12, 31),
                date(10000, 1, 1),
                NaiveDate::MAX,
            ],
        ),
        entry(
            "naive_time",
            vec![
                NaiveTime::MIN,
                NaiveTime::from_hms_nano_opt(12, 34, 56, 789_012_345).unwrap(),
                NaiveTime::from_hms_nano_opt(23, 59, 59, 999_999_999).unwrap(),
            ],
        ),
        entry(
            "time_delta",
            vec![
                TimeDelta::nanoseconds(i64::MIN + 1),
                TimeDelta::nanoseconds(-1),
                TimeDelta::zero(),
                TimeDelta::nanoseconds(90_061_000_000_001),
                TimeDelta::nanoseconds(i64::MAX),
            ],
        ),
        entry(
            "datetime_fixed",
            vec![
                utc(INSTANTS[0]).with_timezone(&FixedOffset::east_opt(86_399).unwrap()),
                utc(0).with_timezone(&FixedOffset::west_opt(86_399).unwrap()),
                utc(INSTANTS[3]).with_timezone(&FixedOffset::east_opt(19_800).unwrap()),
                utc(INSTANTS[4]).with_timezone(&FixedOffset::east_opt(0).unwrap()),
                utc(-1).with_timezone(&FixedOffset::west_opt(3_600).unwrap()),
            ],
        ),
        entry(
            "option_datetime",
            vec![Some(utc(INSTANTS[3])), None, Some(utc(-1))],
        ),
        entry(
            "time_int64_min",
            vec![Int64Min {
                at: utc(i64::MIN),
                naive: utc(i64::MIN).naive_utc(),
                delta: TimeDelta::nanoseconds(i64::MIN),
            }],
        ),
        // uuid
        entry(
            "uuid",
            vec![
                Uuid::nil(),
                Uuid::from_u128(0x0123_4567_89ab_4def_8000_0000_0000_0000),
                Uuid::max(),
                Uuid::from_u128(0xf81d_4fae_7dec_11d0_a765_00a0_c91e_6bf6),
            ],
        ),
        entry(
            "option_uuid",
            vec![
                None,
                Some(Uuid::from_u128(0x0123_4567_89ab_4def_8000_0000_0000_00ff)),
            ],
        ),
        // f16, complex
        entry(
            "f16",
            vec![
                f16::from_f32(0.5),
                f16::NEG_ZERO,
                f16::NAN,
                f16::INFINITY,
                f16::NEG_INFINITY,
                f16::MIN_POSITIVE_SUBNORMAL,
                f16::MAX,
                f16::from_f32(0.1),
            ],
        ),
        entry(
            "complex64",
            vec![
                Complex::new(1.5f32, -2.0),
                Complex::new(-0.0, f32::NAN),
                Complex::new(f32::INFINITY, 0.1),
            ],
        ),
        entry(
            "complex128",
            vec![
                Complex::new(1.5f64, -2.0),
                Complex::new(-0.0, f64::NAN),
                Complex::new(f64::NEG_INFINITY, 0.1),
            ],
        ),
    ]
}

// ---------------------------------------------------------------------------
// check

/// Sorts the entries of every `HashMap` (`"hash": true`) in `v`, whose type is `ty`.
fn sort_hash_maps(ty: &Value, v: &Value) -> Value {
    match (ty["t"].as_str(), v) {
        (_, Value::Null) => Value::Null,
        (Some("map"), Value::Array(pairs)) => {
            let mut out: Vec<Value> = pairs
                .iter()
                .map(|p| {
                    json!([
                        sort_hash_maps(&ty["key"], &p[0]),
                        sort_hash_maps(&ty["value"], &p[1])
                    ])
                })
                .collect();
            if ty["hash"] == json!(true) {
                out.sort_by_key(|p| p[0].to_string());
            }
            Value::Array(out)
        }
        (Some("list" | "array"), Value::Array(xs)) => {
            Value::Array(xs.iter().map(|x| sort_hash_maps(&ty["item"], x)).collect())
        }
        (Some("option"), _) => sort_hash_maps(&ty["some"], v),
        (Some("struct" | "tuple"), Value::Object(m)) => {
            let fields = ty["fields"].as_array().cloned().unwrap_or_default();
            Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let fty = fields
                            .iter()
                            .find(|f| f[0] == json!(k))
                            .map(|f| f[1].clone());
                        (
                            k.clone(),
                            fty.map_or_else(|| x.clone(), |t| sort_hash_maps(&t, x)),
                        )
                    })
                    .collect(),
            )
        }
        _ => v.clone(),
    }
}

/// The first place where `got` differs from `want`.
fn diff(got: &Value, want: &Value, at: String) -> Option<String> {
    match (got, want) {
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!(
                    "{at}: {} items, expected {} ({got} != {want})",
                    a.len(),
                    b.len()
                ));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| diff(x, y, format!("{at}[{i}]")))
        }
        (Value::Object(a), Value::Object(b)) => {
            let ka: Vec<_> = a.keys().collect();
            let kb: Vec<_> = b.keys().collect();
            if ka != kb {
                return Some(format!("{at}: fields {ka:?}, expected {kb:?}"));
            }
            a.iter()
                .find_map(|(k, x)| diff(x, &b[k], format!("{at}.{k}")))
        }
        _ if got == want => None,
        _ => Some(format!("{at}: {got}, expected {want}")),
    }
}

fn check(path: &str, expected: &str) -> Result<bool, String> {
    let text = std::fs::read_to_string(expected).map_err(|e| format!("{expected}: {e}"))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{expected}: {e}"))?;
    let file = h5vec::open_file(path).map_err(|e| format!("{path}: {e}"))?;
    let present = h5vec::list_vectors(&file).map_err(|e| format!("{path}: {e}"))?;
    let known: BTreeMap<&str, Entry> = entries().into_iter().map(|e| (e.name, e)).collect();
    let mut ok = true;
    for v in doc["vectors"]
        .as_array()
        .ok_or("EXPECTED.json: no `vectors`")?
    {
        let name = v["name"]
            .as_str()
            .ok_or("EXPECTED.json: a vector without a name")?;
        let Some(e) = known.get(name) else {
            println!("FAIL {name}: this example has no vector {name} (EXPECTED.json is stale)");
            ok = false;
            continue;
        };
        if !present.iter().any(|p| p == name) {
            println!("missing {name}");
            continue;
        }
        let rows = match (e.load)(&file) {
            Ok(rows) => rows,
            Err(err) => {
                println!("FAIL {name}: {}", err.to_string().replace('\n', " "));
                ok = false;
                continue;
            }
        };
        let got = sort_hash_maps(&json!({"t": "list", "item": e.ty}), &Value::Array(rows));
        let want = sort_hash_maps(&json!({"t": "list", "item": e.ty}), &v["rows"]);
        match diff(&got, &want, "$".into()) {
            None => println!("ok {name}"),
            Some(d) => {
                println!("FAIL {name}: {d}");
                ok = false;
            }
        }
    }
    Ok(ok)
}

fn write(path: &str, expected: &str) -> Result<(), String> {
    let file = h5vec::create_file(path).map_err(|e| format!("{path}: {e}"))?;
    let mut vectors = Vec::new();
    for e in entries() {
        (e.save)(&file).map_err(|err| format!("saving {}: {err}", e.name))?;
        vectors.push(json!({"name": e.name, "type": e.ty, "rows": e.rows}));
    }
    let doc = json!({ "vectors": vectors });
    std::fs::write(expected, serde_json::to_string_pretty(&doc).unwrap() + "\n")
        .map_err(|e| format!("{expected}: {e}"))?;
    Ok(())
}

/// `mpi-write`: every vector saved by all ranks of `mpirun`, each with its
/// share of the rows (`h5vec::mpi`), or with `append` of the first half
/// of the rows, the rest appended the same way; rank 0 writes
/// EXPECTED.json. `check` then reads the file serially.
#[cfg(feature = "mpi")]
fn write_mpi(path: &str, expected: &str, extra: &str, append: bool) -> Result<(), String> {
    use mpi::traits::Communicator;
    let universe = mpi::initialize().ok_or("MPI was initialized already")?;
    let world = universe.world();
    let file = h5vec::mpi::create_file(path, &world).map_err(|e| format!("{path}: {e}"))?;
    let mut vectors = Vec::new();
    for e in entries() {
        if std::env::var_os("H5VEC_MPI_TRACE").is_some() {
            eprintln!("rank {}: {}", world.rank(), e.name);
        }
        let n = (e.save_mpi)(&file, &world, extra, append)
            .map_err(|err| format!("saving {}: {err}", e.name))?;
        vectors.push(json!({"name": e.name, "type": e.ty, "rows": e.rows[..n]}));
    }
    drop(file);
    if world.rank() == 0 {
        let doc = json!({ "vectors": vectors });
        std::fs::write(expected, serde_json::to_string_pretty(&doc).unwrap() + "\n")
            .map_err(|e| format!("{expected}: {e}"))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["write", out, expected] => match write(out, expected) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xlang_matrix write: {e}");
                ExitCode::from(2)
            }
        },
        #[cfg(feature = "mpi")]
        ["mpi-write", out, expected, opts @ ..] => match write_mpi(
            out,
            expected,
            opts.iter().find(|o| **o != "append").copied().unwrap_or(""),
            opts.contains(&"append"),
        ) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xlang_matrix mpi-write: {e}");
                ExitCode::from(2)
            }
        },
        ["check", input, expected] => match check(input, expected) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("xlang_matrix check: {e}");
                ExitCode::from(2)
            }
        },
        _ => {
            eprintln!("usage: xlang_matrix write OUT.h5 EXPECTED.json | xlang_matrix check IN.h5 EXPECTED.json");
            ExitCode::from(2)
        }
    }
}
