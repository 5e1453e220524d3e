//! Round trips for every row of the type mapping (SPEC.md section 5), including empty
//! vectors, large vectors across write batches, and save options.

use h5vec_tests as common;

use std::collections::HashMap;
use std::marker::PhantomData;

use common::{check_roundtrip, mem_file, roundtrip};
use h5vec::hdf5::filters::Filter;
use h5vec::{H5Vector, SaveOptions};
use serde::{Deserialize, Serialize};

macro_rules! int_roundtrips {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let v: Vec<$t> = vec![<$t>::MIN, <$t>::MAX, 0, 1, <$t>::MIN + 1, <$t>::MAX - 1, <$t>::MAX / 3];
            check_roundtrip(&v);
        }
    )*};
}
int_roundtrips!(
    roundtrip_i8: i8, roundtrip_i16: i16, roundtrip_i32: i32, roundtrip_i64: i64,
    roundtrip_u8: u8, roundtrip_u16: u16, roundtrip_u32: u32, roundtrip_u64: u64,
);

#[test]
fn roundtrip_f64_bit_exact() {
    let v: Vec<f64> = vec![
        0.0,
        -0.0,
        1.5,
        f64::MIN,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::from_bits(1), // smallest subnormal
        f64::EPSILON,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::from_bits(0x7ff8_0000_0000_0001), // quiet NaN with payload
        f64::from_bits(0xfff8_dead_beef_0000), // negative NaN with payload
        f64::from_bits(0x7ff0_0000_0000_0001), // signalling NaN
    ];
    let back = roundtrip(&v);
    let bits = |x: &[f64]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&v));
    check_roundtrip::<f64>(&[]);
}

#[test]
fn roundtrip_f32_bit_exact() {
    let v: Vec<f32> = vec![
        0.0,
        -0.0,
        -2.25,
        f32::MIN,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0x7fc0_0001),
        f32::from_bits(0xffc1_2345),
        f32::from_bits(0x7f80_0001),
    ];
    let back = roundtrip(&v);
    let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&v));
    check_roundtrip::<f32>(&[]);
}

#[test]
fn roundtrip_bool() {
    check_roundtrip(&[true, false, false, true, true]);
}

#[test]
fn roundtrip_char() {
    check_roundtrip(&[
        'a',
        '\0',
        'é',
        '中',
        '\u{FFFF}',
        '😀',
        '\u{10000}',
        char::MAX,
        '\u{D7FF}',
        '\u{E000}',
    ]);
}

#[test]
fn roundtrip_string() {
    let v: Vec<String> = vec![
        String::new(),
        "a".into(),
        "héllo wörld".into(),
        "日本語テキスト".into(),
        "emoji 😀 and 𝄞".into(),
        " leading and trailing spaces ".into(),
        "x".repeat(100_000),
        String::new(),
    ];
    check_roundtrip(&v);
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Color {
    Red = 1,
    Green = 2,
    Blue = 250,
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
enum Level {
    Lowest = i32::MIN,
    Neg = -5,
    Zero = 0,
    Highest = i32::MAX,
}

#[test]
fn roundtrip_enum_repr_u8() {
    check_roundtrip(&[Color::Blue, Color::Red, Color::Green, Color::Blue]);
}

#[test]
fn roundtrip_enum_repr_i32_negative() {
    check_roundtrip(&[
        Level::Neg,
        Level::Lowest,
        Level::Zero,
        Level::Highest,
        Level::Neg,
    ]);
}

#[test]
fn roundtrip_arrays() {
    check_roundtrip(&[[1i32, -2, 3, i32::MIN], [0, 0, 0, i32::MAX]]);
    check_roundtrip(&[
        [[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]],
        [[-1.0, f32::INFINITY], [0.5, 0.25], [7.0, 8.0]],
    ]);
    check_roundtrip(&[[true, false, true, true], [false, false, false, false]]);
    check_roundtrip(&[['a', '😀'], ['\0', char::MAX]]);
    check_roundtrip(&[[Color::Red, Color::Blue], [Color::Green, Color::Green]]);
    check_roundtrip(&[[[1u8; 2]; 2]; 3]);
    check_roundtrip(&[[[[1i64, 2], [3, 4]], [[5, 6], [7, 8]]]]);
    check_roundtrip(&[[7u16; 1], [9; 1]]);
}

#[test]
fn roundtrip_zero_length_array() {
    check_roundtrip(&[[0f64; 0], [0f64; 0], [0f64; 0]]);
}

// --- records -------------------------------------------------------------

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    a: i16,
    b: String,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Mid {
    inner: Inner,
    c: [u8; 2],
    color: Color,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Outer {
    mid: Mid,
    d: bool,
    t: (i32, char),
}

fn outer(i: i32) -> Outer {
    Outer {
        mid: Mid {
            inner: Inner {
                a: i as i16 - 3,
                b: format!("row {i} ✓"),
            },
            c: [i as u8, 255 - i as u8],
            color: [Color::Red, Color::Green, Color::Blue][i as usize % 3],
        },
        d: i % 2 == 0,
        t: (-i, char::from_u32(0x1F600 + i as u32).unwrap()),
    }
}

#[test]
fn roundtrip_nested_structs_three_deep() {
    let v: Vec<Outer> = (0..10).map(outer).collect();
    check_roundtrip(&v);
}

#[test]
fn roundtrip_tuples() {
    check_roundtrip(&[(1i32, "one".to_string()), (-2, String::new())]);
    check_roundtrip(&[(1.5f64, (7u8, 'x')), (f64::MAX, (0, '😀'))]);
    check_roundtrip(&[(true,), (false,)]);
    check_roundtrip(&[(
        1u8,
        2i16,
        3i32,
        4i64,
        5.0f32,
        6.0f64,
        'c',
        true,
        [1u8; 2],
        (),
        Color::Blue,
        -1i8,
    )]);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pair(i32, f64);

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Wrapper(String);

#[test]
fn roundtrip_tuple_structs() {
    check_roundtrip(&[Pair(1, 2.5), Pair(i32::MIN, -0.5)]);
    check_roundtrip(&[Wrapper("a".into()), Wrapper("ü".into())]);
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq, Default)]
struct Marker;

#[test]
fn roundtrip_constants() {
    assert_eq!(roundtrip(&[Marker, Marker, Marker]).len(), 3);
    check_roundtrip(&[Marker; 5]);
    check_roundtrip(&[(), (), ()]);
    check_roundtrip(&[PhantomData::<String>; 4]);
    check_roundtrip(&[PhantomData::<fn() -> u8>; 2]);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithConstants {
    id: u32,
    marker: Marker,
    unit: (),
    phantom: PhantomData<Vec<String>>,
}

#[test]
fn roundtrip_constant_fields() {
    let v: Vec<WithConstants> = (0..4)
        .map(|id| WithConstants {
            id,
            marker: Marker,
            unit: (),
            phantom: PhantomData,
        })
        .collect();
    check_roundtrip(&v);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct P<T> {
    x: T,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Tagged<T> {
    id: u64,
    tag: PhantomData<T>,
}

/// A type with no h5vec storage: only usable behind PhantomData or skip.
#[derive(Debug, Clone, PartialEq, Default)]
struct NotStorable(#[allow(dead_code)] std::time::Duration);

#[test]
fn roundtrip_generic_structs() {
    check_roundtrip(&[P { x: 1.5f64 }, P { x: -2.0 }]);
    check_roundtrip(&[P { x: "s".to_string() }, P { x: String::new() }]);
    check_roundtrip(&[P { x: [1i32, 2] }]);
    check_roundtrip(&[P { x: P { x: 9u8 } }, P { x: P { x: 0 } }]);
    check_roundtrip(&[P {
        x: (Color::Red, Marker),
    }]);
    check_roundtrip(&[
        Tagged::<NotStorable> {
            id: 3,
            tag: PhantomData,
        },
        Tagged {
            id: u64::MAX,
            tag: PhantomData,
        },
    ]);
}

// --- blob and json -------------------------------------------------------

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Shape {
    Circle { r: f64 },
    Poly(Vec<(f64, f64)>),
    Label(String),
    Empty,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithBlob {
    id: u32,
    #[h5vec(blob)]
    shape: Shape,
    #[h5vec(blob)]
    tags: HashMap<String, Vec<i32>>,
    #[h5vec(blob)]
    nothing: (),
    #[h5vec(blob)]
    maybe: Option<String>,
}

fn with_blob(i: u32) -> WithBlob {
    let shape = match i % 4 {
        0 => Shape::Circle {
            r: f64::from(i) * 0.5,
        },
        1 => Shape::Poly((0..i).map(|k| (f64::from(k), -f64::from(k))).collect()),
        2 => Shape::Label(format!("label {i} ✓")),
        _ => Shape::Empty,
    };
    let tags = (0..i % 3)
        .map(|k| (format!("k{k}"), vec![k as i32; k as usize]))
        .collect();
    WithBlob {
        id: i,
        shape,
        tags,
        nothing: (),
        maybe: i.is_multiple_of(2).then(|| "x".repeat(i as usize)),
    }
}

#[test]
fn roundtrip_blob() {
    let v: Vec<WithBlob> = (0..13).map(with_blob).collect();
    check_roundtrip(&v);
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Settings {
    name: String,
    weights: Vec<f64>,
    on: Option<bool>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithJson {
    #[h5vec(json)]
    settings: Settings,
    #[h5vec(json)]
    value: serde_json::Value,
    #[h5vec(json)]
    map: HashMap<String, u32>,
}

#[test]
fn roundtrip_json() {
    let v: Vec<WithJson> = (0..5u32)
        .map(|i| WithJson {
            settings: Settings {
                name: format!("s{i} \"quoted\" ü"),
                weights: vec![f64::from(i); i as usize],
                on: (i % 2 == 1).then_some(i > 2),
            },
            value: serde_json::json!({"i": i, "list": [1, "two", null], "nested": {"ok": true}}),
            map: (0..i).map(|k| (k.to_string(), k)).collect(),
        })
        .collect();
    check_roundtrip(&v);
}

// --- field attributes ----------------------------------------------------

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Renamed {
    #[h5vec(rename = "Temperature °C")]
    temp: f64,
    #[h5vec(rename = "1")]
    first: i8,
}

#[test]
fn roundtrip_rename() {
    let v = vec![
        Renamed {
            temp: 21.5,
            first: -1,
        },
        Renamed {
            temp: -3.0,
            first: 7,
        },
    ];
    let f = mem_file();
    h5vec::save_vector(&f, "v", &v).unwrap();
    assert!(f.link_exists("v/data/Temperature °C/values"));
    assert!(f.link_exists("v/data/1/values"));
    assert!(!f.link_exists("v/data/temp"));
    assert_eq!(h5vec::load_vector::<Renamed>(&f, "v").unwrap(), v);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithSkip {
    a: i32,
    #[h5vec(skip)]
    cache: HashMap<u32, String>,
    #[h5vec(skip)]
    n: u64,
    #[h5vec(skip)]
    opaque: NotStorable,
    b: String,
}

#[test]
fn roundtrip_skip_gives_default() {
    let v: Vec<WithSkip> = (0..3)
        .map(|i| WithSkip {
            a: i,
            cache: HashMap::from([(1, "one".to_string())]),
            n: 99,
            opaque: NotStorable(std::time::Duration::from_secs(5)),
            b: format!("b{i}"),
        })
        .collect();
    let f = mem_file();
    h5vec::save_vector(&f, "v", &v).unwrap();
    assert_eq!(common::members(&f.group("v/data").unwrap()), ["a", "b"]);
    let back = h5vec::load_vector::<WithSkip>(&f, "v").unwrap();
    let want: Vec<WithSkip> = (0..3)
        .map(|i| WithSkip {
            a: i,
            cache: HashMap::new(),
            n: 0,
            opaque: NotStorable::default(),
            b: format!("b{i}"),
        })
        .collect();
    assert_eq!(back, want);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct AllSkipped {
    #[h5vec(skip)]
    n: u64,
}

#[test]
fn roundtrip_all_fields_skipped_is_constant() {
    let back = roundtrip(&[AllSkipped { n: 5 }, AllSkipped { n: 6 }]);
    assert_eq!(back, [AllSkipped { n: 0 }, AllSkipped { n: 0 }]);
}

// --- plain vectors, empty vectors, sizes, options ------------------------

#[test]
fn roundtrip_plain_vectors() {
    check_roundtrip(&[20.5f64, 21.0, 19.75]);
    check_roundtrip(&["a".to_string(), "βγ".to_string(), String::new()]);
    check_roundtrip(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
}

#[test]
fn roundtrip_empty_vectors_of_every_kind() {
    fn empty<T: H5Vector + PartialEq + std::fmt::Debug>() {
        let v: Vec<T> = Vec::new();
        assert_eq!(roundtrip(&v), v, "{}", std::any::type_name::<T>());
    }
    empty::<i8>();
    empty::<u64>();
    empty::<f32>();
    empty::<bool>();
    empty::<char>();
    empty::<String>();
    empty::<Color>();
    empty::<Level>();
    empty::<[f32; 3]>();
    empty::<[[f32; 2]; 3]>();
    empty::<[bool; 4]>();
    empty::<[char; 2]>();
    empty::<Outer>();
    empty::<(i32, String)>();
    empty::<Pair>();
    empty::<Marker>();
    empty::<()>();
    empty::<PhantomData<u8>>();
    empty::<P<f64>>();
    empty::<WithBlob>();
    empty::<WithJson>();
    empty::<WithSkip>();
    empty::<WithConstants>();
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Small {
    k: u16,
    s: Option<String>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Big {
    i: u64,
    x: f32,
    s: String,
    #[h5vec(blob)]
    b: Small,
    #[h5vec(json)]
    j: Vec<u8>,
    c: char,
    flag: bool,
    arr: [i16; 3],
    color: Color,
}

fn big(i: u64) -> Big {
    Big {
        i,
        x: i as f32 * 0.5,
        s: if i.is_multiple_of(7) {
            String::new()
        } else {
            format!("s{i}")
        },
        b: Small {
            k: (i % 65_536) as u16,
            s: i.is_multiple_of(3).then(|| i.to_string()),
        },
        j: vec![(i % 256) as u8; (i % 4) as usize],
        c: char::from_u32(0x4E00 + (i % 1000) as u32).unwrap(),
        flag: i.is_multiple_of(5),
        arr: [i as i16, (i as i16).wrapping_neg(), (i % 3) as i16],
        color: [Color::Red, Color::Green, Color::Blue][(i % 3) as usize],
    }
}

#[test]
fn roundtrip_200k_rows_crosses_batches() {
    let n = 200_000u64;
    let v: Vec<Big> = (0..n).map(big).collect();
    let f = mem_file();
    h5vec::save_vector(&f, "v", &v).unwrap();
    assert_eq!(f.dataset("v/data/i/values").unwrap().shape(), [n as usize]);
    assert_eq!(
        f.dataset("v/data/arr/values").unwrap().shape(),
        [n as usize, 3]
    );
    assert_eq!(f.dataset("v/data/b/stops").unwrap().shape(), [n as usize]);
    let back = h5vec::load_vector::<Big>(&f, "v").unwrap();
    assert_eq!(back.len(), v.len());
    // Compare row by row so a failure names the first bad row (batch edges: 65,536k).
    for (k, (a, b)) in back.iter().zip(&v).enumerate() {
        assert_eq!(a, b, "row {k}");
    }
}

#[test]
fn roundtrip_plain_200k_f64() {
    let v: Vec<f64> = (0..200_000).map(|i| f64::from(i) * 1.25 - 7.0).collect();
    assert_eq!(roundtrip(&v), v);
}

#[test]
fn save_options_chunk_length_7() {
    let opts = SaveOptions::default().chunk_length(7);
    let v: Vec<Big> = (0..50).map(big).collect();
    let f = mem_file();
    h5vec::save_vector_with(&f, "v", &v, &opts).unwrap();
    assert_eq!(f.dataset("v/data/i/values").unwrap().chunk(), Some(vec![7]));
    assert_eq!(
        f.dataset("v/data/arr/values").unwrap().chunk(),
        Some(vec![7, 3])
    );
    assert_eq!(f.dataset("v/data/s/values").unwrap().chunk(), Some(vec![7]));
    assert_eq!(f.dataset("v/data/b/stops").unwrap().chunk(), Some(vec![7]));
    assert_eq!(f.dataset("v/data/b/bytes").unwrap().chunk(), Some(vec![7]));
    assert_eq!(h5vec::load_vector::<Big>(&f, "v").unwrap(), v);
    let empty: Vec<Big> = Vec::new();
    h5vec::save_vector_with(&f, "e", &empty, &opts).unwrap();
    assert_eq!(h5vec::load_vector::<Big>(&f, "e").unwrap(), empty);
}

#[test]
fn save_options_deflate_4() {
    let opts = SaveOptions::default().deflate(4);
    let v: Vec<Big> = (0..1000).map(big).collect();
    let f = mem_file();
    h5vec::save_vector_with(&f, "v", &v, &opts).unwrap();
    for ds in [
        "v/data/i/values",
        "v/data/arr/values",
        "v/data/b/bytes",
        "v/data/b/stops",
    ] {
        assert_eq!(
            f.dataset(ds).unwrap().filters(),
            [Filter::Shuffle, Filter::Deflate(4)],
            "{ds}"
        );
    }
    assert_eq!(h5vec::load_vector::<Big>(&f, "v").unwrap(), v);
    let plain = mem_file();
    h5vec::save_vector(&plain, "v", &v).unwrap();
    assert_eq!(plain.dataset("v/data/i/values").unwrap().filters(), []);
}

#[test]
fn save_into_subgroup_and_file() {
    let f = mem_file();
    let g = f
        .create_group("run1")
        .unwrap()
        .create_group("sensors")
        .unwrap();
    h5vec::save_vector(&g, "temps", &[1.0f64, 2.0]).unwrap();
    h5vec::save_vector(&f, "temps", &[3.0f64]).unwrap();
    assert_eq!(h5vec::load_vector::<f64>(&g, "temps").unwrap(), [1.0, 2.0]);
    assert_eq!(h5vec::load_vector::<f64>(&f, "temps").unwrap(), [3.0]);
    assert_eq!(
        h5vec::load_vector::<f64>(&f.group("run1/sensors").unwrap(), "temps").unwrap(),
        [1.0, 2.0]
    );
}

#[test]
fn roundtrip_through_a_closed_file_on_disk() {
    let d = common::disk_file();
    let v: Vec<Outer> = (0..20).map(outer).collect();
    h5vec::save_vector(&d, "v", &v).unwrap();
    let d = d.reopen();
    assert_eq!(h5vec::load_vector::<Outer>(&d, "v").unwrap(), v);
}
