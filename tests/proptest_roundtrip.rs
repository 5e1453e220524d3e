//! Property tests: random values of every kind save and load back bit for
//! bit (floats compared through `to_bits`, so NaN payloads, -0.0 and
//! subnormals count), and `#[h5vec(json)]` f64 fields keep every bit.

use h5vec_tests as common;

use common::mem_file;
use h5vec::H5Vector;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

/// f64 values that stress exactness: any bit pattern (NaN payloads and
/// infinities included), zeros of both signs, subnormals, ordinary numbers.
fn f64s() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        Just(-0.0),
        Just(0.0),
        (1u64..1 << 52).prop_map(f64::from_bits),
        (1u64..1 << 52).prop_map(|m| f64::from_bits(m | 1 << 63)),
        (0x7FF0_0000_0000_0001u64..=0x7FFF_FFFF_FFFF_FFFF).prop_map(f64::from_bits),
        any::<f64>(),
    ]
}

/// Finite f64 values only (JSON has no NaN or infinity).
fn finite_f64s() -> impl Strategy<Value = f64> {
    f64s().prop_filter("finite", |x| x.is_finite())
}

fn f32s() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        Just(-0.0f32),
        (1u32..1 << 23).prop_map(f32::from_bits),
        (0x7F80_0001u32..=0x7FFF_FFFF).prop_map(f32::from_bits),
        any::<f32>(),
    ]
}

/// Strings, mostly short, sometimes empty, now and then 200 KB or more.
/// `nul`: whether NUL may appear (HDF5 variable-length and VLS strings
/// cannot hold it).
fn strings(nul: bool) -> impl Strategy<Value = String> {
    let short = prop::collection::vec(any::<char>(), 0..12)
        .prop_map(move |v| v.into_iter().filter(|&c| nul || c != '\0').collect());
    prop_oneof![
        8 => short,
        1 => Just(String::new()),
        1 => (100_000usize..140_000).prop_map(|n| "é\u{1F600}x".repeat(n / 3)),
    ]
}

#[derive(H5Vector, Debug, Clone)]
struct Inner {
    a: i8,
    b: u16,
    c: f32,
    d: [f64; 2],
}

#[derive(Serialize, Deserialize, Debug, Clone)]
enum Shape {
    Empty,
    Circle(f64),
    Poly { pts: Vec<(f32, f64)>, name: String },
}

#[derive(H5Vector, Debug, Clone)]
struct Row {
    i8_: i8,
    i16_: i16,
    i32_: i32,
    i64_: i64,
    u8_: u8,
    u16_: u16,
    u32_: u32,
    u64_: u64,
    f32_: f32,
    f64_: f64,
    flag: bool,
    ch: char,
    s: String,
    arr: [[i32; 2]; 3],
    rec: Inner,
    pair: (u8, f64),
    opt: Option<f64>,
    opt_s: Option<String>,
    opt_rec: Option<Inner>,
    lists: Vec<Vec<f64>>,
    list_s: Vec<String>,
    list_opt_s: Vec<Option<String>>,
    list_rec: Vec<Inner>,
    opt_list: Option<Vec<i64>>,
    #[h5vec(vls)]
    vls: String,
    #[h5vec(blob)]
    blob: Vec<Shape>,
    #[h5vec(json)]
    json: Vec<f64>,
    unit: (),
}

fn inners() -> impl Strategy<Value = Inner> {
    (any::<i8>(), any::<u16>(), f32s(), [f64s(), f64s()]).prop_map(|(a, b, c, d)| Inner {
        a,
        b,
        c,
        d,
    })
}

fn shapes() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Empty),
        f64s().prop_map(Shape::Circle),
        (prop::collection::vec((f32s(), f64s()), 0..4), strings(true))
            .prop_map(|(pts, name)| Shape::Poly { pts, name }),
    ]
}

fn rows() -> impl Strategy<Value = Row> {
    let ints = (
        any::<i8>(),
        any::<i16>(),
        any::<i32>(),
        any::<i64>(),
        any::<u8>(),
        any::<u16>(),
        any::<u32>(),
        any::<u64>(),
    );
    let scalars = (
        f32s(),
        f64s(),
        any::<bool>(),
        any::<char>(),
        strings(false),
        any::<[[i32; 2]; 3]>(),
        inners(),
        (any::<u8>(), f64s()),
    );
    let options = (
        prop::option::of(f64s()),
        prop::option::of(strings(false)),
        prop::option::of(inners()),
    );
    let lists = (
        prop::collection::vec(prop::collection::vec(f64s(), 0..4), 0..3),
        prop::collection::vec(strings(true), 0..3),
        prop::collection::vec(prop::option::of(strings(true)), 0..3),
        prop::collection::vec(inners(), 0..3),
        prop::option::of(prop::collection::vec(any::<i64>(), 0..4)),
    );
    let serde = (
        strings(false),
        prop::collection::vec(shapes(), 0..3),
        prop::collection::vec(finite_f64s(), 0..4),
    );
    (ints, scalars, options, lists, serde).prop_map(
        |(
            (i8_, i16_, i32_, i64_, u8_, u16_, u32_, u64_),
            (f32_, f64_, flag, ch, s, arr, rec, pair),
            (opt, opt_s, opt_rec),
            (lists, list_s, list_opt_s, list_rec, opt_list),
            (vls, blob, json),
        )| Row {
            i8_,
            i16_,
            i32_,
            i64_,
            u8_,
            u16_,
            u32_,
            u64_,
            f32_,
            f64_,
            flag,
            ch,
            s,
            arr,
            rec,
            pair,
            opt,
            opt_s,
            opt_rec,
            lists,
            list_s,
            list_opt_s,
            list_rec,
            opt_list,
            vls,
            blob,
            json,
            unit: (),
        },
    )
}

/// A value with every float replaced by its bits, compared with `==`.
trait Bits {
    type Out: PartialEq + std::fmt::Debug;
    fn bits(&self) -> Self::Out;
}

impl Bits for f64 {
    type Out = u64;
    fn bits(&self) -> u64 {
        self.to_bits()
    }
}
impl Bits for f32 {
    type Out = u32;
    fn bits(&self) -> u32 {
        self.to_bits()
    }
}
impl<T: Bits> Bits for Vec<T> {
    type Out = Vec<T::Out>;
    fn bits(&self) -> Self::Out {
        self.iter().map(Bits::bits).collect()
    }
}
impl<T: Bits> Bits for Option<T> {
    type Out = Option<T::Out>;
    fn bits(&self) -> Self::Out {
        self.as_ref().map(Bits::bits)
    }
}
impl<A: Bits, B: Bits> Bits for (A, B) {
    type Out = (A::Out, B::Out);
    fn bits(&self) -> Self::Out {
        (self.0.bits(), self.1.bits())
    }
}
impl Bits for Inner {
    type Out = (i8, u16, u32, [u64; 2]);
    fn bits(&self) -> Self::Out {
        (self.a, self.b, self.c.bits(), self.d.map(|x| x.bits()))
    }
}
impl Bits for Shape {
    type Out = (u8, u64, Vec<(u32, u64)>, String);
    fn bits(&self) -> Self::Out {
        match self {
            Shape::Empty => (0, 0, vec![], String::new()),
            Shape::Circle(r) => (1, r.bits(), vec![], String::new()),
            Shape::Poly { pts, name } => (2, 0, pts.bits(), name.clone()),
        }
    }
}

/// Compares two rows field by field, floats by bits.
#[track_caller]
fn assert_same(a: &Row, b: &Row) {
    macro_rules! same {
        ($($f:ident),*) => {$(
            assert_eq!(a.$f, b.$f, "{}", stringify!($f));
        )*};
    }
    macro_rules! same_bits {
        ($($f:ident),*) => {$(
            assert_eq!(a.$f.bits(), b.$f.bits(), "{}", stringify!($f));
        )*};
    }
    same!(
        i8_, i16_, i32_, i64_, u8_, u16_, u32_, u64_, flag, ch, s, arr, opt_s, list_s, list_opt_s,
        opt_list, vls, unit
    );
    same_bits!(f32_, f64_, rec, opt, opt_rec, lists, list_rec, blob, json);
    assert_eq!(a.pair.0, b.pair.0);
    assert_eq!(a.pair.1.bits(), b.pair.1.bits(), "pair");
}

proptest! {
    #[test]
    fn every_kind_round_trips_bit_for_bit(values in prop::collection::vec(rows(), 0..6)) {
        let f = mem_file();
        h5vec::save_vector(&f, "v", &values).unwrap();
        let back: Vec<Row> = h5vec::load_vector(&f, "v").unwrap();
        prop_assert_eq!(back.len(), values.len());
        for (a, b) in values.iter().zip(&back) {
            assert_same(a, b);
        }
    }

    #[test]
    fn scalar_vectors_round_trip_bit_for_bit(
        f64v in prop::collection::vec(f64s(), 0..40),
        f32v in prop::collection::vec(f32s(), 0..40),
        i64v in prop::collection::vec(any::<i64>(), 0..40),
        u8v in prop::collection::vec(any::<u8>(), 0..40),
        sv in prop::collection::vec(strings(false), 0..5),
    ) {
        let f = mem_file();
        h5vec::save_vector(&f, "a", &f64v).unwrap();
        h5vec::save_vector(&f, "b", &f32v).unwrap();
        h5vec::save_vector(&f, "c", &i64v).unwrap();
        h5vec::save_vector(&f, "d", &u8v).unwrap();
        h5vec::save_vector(&f, "e", &sv).unwrap();
        prop_assert_eq!(h5vec::load_vector::<f64>(&f, "a").unwrap().bits(), f64v.bits());
        prop_assert_eq!(h5vec::load_vector::<f32>(&f, "b").unwrap().bits(), f32v.bits());
        prop_assert_eq!(h5vec::load_vector::<i64>(&f, "c").unwrap(), i64v);
        prop_assert_eq!(h5vec::load_vector::<u8>(&f, "d").unwrap(), u8v);
        prop_assert_eq!(h5vec::load_vector::<String>(&f, "e").unwrap(), sv);
    }
}

#[derive(H5Vector, Debug)]
struct JsonFloat {
    #[h5vec(json)]
    x: f64,
}

#[test]
fn json_f64_fields_keep_every_bit() {
    // 100,000 finite doubles from random bits (a fixed xorshift seed), plus
    // the edge cases.
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut xs = vec![
        0.0,
        -0.0,
        f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        f64::MAX,
        f64::MIN,
    ];
    while xs.len() < 100_000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let x = f64::from_bits(s);
        if x.is_finite() {
            xs.push(x);
        }
    }
    let rows: Vec<JsonFloat> = xs.iter().map(|&x| JsonFloat { x }).collect();
    let f = mem_file();
    h5vec::save_vector(&f, "j", &rows).unwrap();
    let back: Vec<JsonFloat> = h5vec::load_vector(&f, "j").unwrap();
    let off = xs
        .iter()
        .zip(&back)
        .filter(|(a, b)| a.to_bits() != b.x.to_bits())
        .count();
    assert_eq!(off, 0, "{off} of {} values changed", xs.len());
}

// ---------------------------------------------------------------------------
// Enums with data (unions, SPEC.md section 4.4): saves, appends, ranges.

#[derive(H5Vector, Debug, Clone)]
enum Leaf {
    A,
    B(u8),
}

#[derive(H5Vector, Debug, Clone)]
enum Event {
    Idle,
    Tick(f64),
    Fill { qty: i32, price: f32, tags: Vec<u8> },
    Note(String, Option<i16>),
    Many(Vec<Leaf>),
}

#[derive(H5Vector, Debug, Clone)]
struct Logged {
    id: u64,
    ev: Event,
    opt: Option<Event>,
    list: Vec<Event>,
}

fn leaves() -> impl Strategy<Value = Leaf> {
    prop_oneof![Just(Leaf::A), any::<u8>().prop_map(Leaf::B)]
}

fn events() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::Idle),
        f64s().prop_map(Event::Tick),
        (
            any::<i32>(),
            f32s(),
            prop::collection::vec(any::<u8>(), 0..4)
        )
            .prop_map(|(qty, price, tags)| Event::Fill { qty, price, tags }),
        (strings(false), any::<Option<i16>>()).prop_map(|(s, o)| Event::Note(s, o)),
        prop::collection::vec(leaves(), 0..4).prop_map(Event::Many),
    ]
}

fn logged() -> impl Strategy<Value = Logged> {
    (
        any::<u64>(),
        events(),
        prop::option::of(events()),
        prop::collection::vec(events(), 0..3),
    )
        .prop_map(|(id, ev, opt, list)| Logged { id, ev, opt, list })
}

/// An event as text with every float as its bits (NaN payloads, -0.0).
fn event_key(e: &Event) -> String {
    match e {
        Event::Tick(x) => format!("Tick({:#x})", x.to_bits()),
        Event::Fill { qty, price, tags } => {
            format!("Fill({qty}, {:#x}, {tags:?})", price.to_bits())
        }
        other => format!("{other:?}"),
    }
}

fn logged_key(r: &Logged) -> String {
    format!(
        "{} {} {:?} {:?}",
        r.id,
        event_key(&r.ev),
        r.opt.as_ref().map(event_key),
        r.list.iter().map(event_key).collect::<Vec<_>>()
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn unions_round_trip_through_appends_and_ranges(
        values in prop::collection::vec(logged(), 0..40),
        cuts in prop::collection::vec(0usize..40, 0..4),
        range in (0usize..40, 0usize..40),
    ) {
        let f = mem_file();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(values.len())).collect();
        cuts.push(values.len());
        cuts.sort_unstable();
        h5vec::save_vector(&f, "v", &values[..cuts[0]]).unwrap();
        for w in cuts.windows(2) {
            h5vec::append_vector(&f, "v", &values[w[0]..w[1]]).unwrap();
        }
        let back: Vec<Logged> = h5vec::load_vector(&f, "v").unwrap();
        let want: Vec<String> = values.iter().map(logged_key).collect();
        prop_assert_eq!(back.iter().map(logged_key).collect::<Vec<_>>(), want.clone());
        let (a, b) = (range.0.min(values.len()), range.1.min(values.len()));
        let (a, b) = (a.min(b), a.max(b));
        let part: Vec<Logged> = h5vec::load_range(&f, "v", a as u64..b as u64).unwrap();
        prop_assert_eq!(part.iter().map(logged_key).collect::<Vec<_>>(), want[a..b].to_vec());
        // A bare vector of events, appended one at a time.
        let evs: Vec<Event> = values.iter().map(|r| r.ev.clone()).collect();
        h5vec::save_vector::<Event>(&f, "e", &[]).unwrap();
        for e in &evs {
            h5vec::append_vector(&f, "e", std::slice::from_ref(e)).unwrap();
        }
        let back: Vec<Event> = h5vec::load_vector(&f, "e").unwrap();
        prop_assert_eq!(
            back.iter().map(event_key).collect::<Vec<_>>(),
            evs.iter().map(event_key).collect::<Vec<_>>()
        );
    }
}
