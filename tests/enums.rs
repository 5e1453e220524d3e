//! Enums with data (unions, SPEC.md section 4.4) and labels of fieldless
//! enums (section 2): round trips, the layout h5py sees, hostile files.

use h5vec::hdf5::{self, Group};
use h5vec::{ErrorKind, H5Vector};
use h5vec_tests as common;

#[derive(H5Vector, Clone, Debug, PartialEq)]
enum Ev {
    Idle,
    Tick(f64),
    Fill { qty: i32, price: f64 },
    Note(String, Vec<u16>),
}

fn evs(n: usize) -> Vec<Ev> {
    (0..n)
        .map(|i| match i % 5 {
            0 => Ev::Idle,
            1 | 4 => Ev::Tick(i as f64 * 0.5),
            2 => Ev::Fill {
                qty: i as i32 - 7,
                price: 1.25 * i as f64,
            },
            _ => Ev::Note(format!("n{i}"), (0..(i % 4) as u16).collect()),
        })
        .collect()
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
enum Shape<T> {
    #[h5vec(rename = "point")]
    Point,
    Pair(T, T),
    Named {
        #[h5vec(rename = "v")]
        value: T,
        #[h5vec(skip)]
        cache: u8,
    },
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
enum Outer {
    Leaf(u8),
    Inner(Ev),
    Many(Vec<Ev>),
    Maybe(Option<Shape<i16>>),
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Order {
    id: u32,
    event: Ev,
    opt: Option<Ev>,
    list: Vec<Ev>,
}

#[derive(H5Vector, Clone, Copy, Debug, PartialEq)]
#[repr(i16)]
enum Level {
    Low = -3,
    Mid = 7,
    High = 300,
}

fn ds(f: &Group, path: &str) -> hdf5::Dataset {
    f.dataset(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn round_trips() {
    common::check_roundtrip(&evs(103));
    common::check_roundtrip(&[Ev::Idle, Ev::Idle]);
    common::check_roundtrip(&[Ev::Note(String::new(), vec![])]);
    let shapes: Vec<Shape<String>> = vec![
        Shape::Pair("a".into(), "bc".into()),
        Shape::Point,
        Shape::Named {
            value: "x".into(),
            cache: 0,
        },
    ];
    common::check_roundtrip(&shapes);
    common::check_roundtrip(&[Shape::Pair(1.5f32, 2.5), Shape::Point]);
    let outers = vec![
        Outer::Inner(Ev::Tick(1.0)),
        Outer::Leaf(3),
        Outer::Many(evs(7)),
        Outer::Maybe(None),
        Outer::Maybe(Some(Shape::Pair(-1, 2))),
        Outer::Many(vec![]),
        Outer::Inner(Ev::Fill { qty: 1, price: 2.0 }),
    ];
    common::check_roundtrip(&outers);
    let opts: Vec<Option<Ev>> = vec![None, Some(Ev::Tick(2.0)), None, Some(Ev::Idle)];
    common::check_roundtrip(&opts);
    let lists: Vec<Vec<Ev>> = vec![evs(4), vec![], evs(9)];
    common::check_roundtrip(&lists);
    let orders: Vec<Order> = (0..50)
        .map(|i| Order {
            id: i,
            event: evs(60)[i as usize].clone(),
            opt: (i % 3 != 0).then_some(Ev::Tick(i as f64)),
            list: evs((i % 6) as usize),
        })
        .collect();
    common::check_roundtrip(&orders);
}

#[test]
fn skipped_variant_field_loads_default() {
    let v = vec![Shape::Named {
        value: 4u8,
        cache: 9,
    }];
    let back = common::roundtrip(&v);
    assert_eq!(back, vec![Shape::Named { value: 4, cache: 0 }]);
}

#[test]
fn layout_for_h5py() {
    let f = common::mem_file();
    let v = evs(10);
    h5vec::save_vector(&f, "e", &v).unwrap();
    let tag = ds(&f, "e/data/TAG");
    assert_eq!(
        common::dtype_class(&tag),
        hdf5_sys::h5t::H5T_class_t::H5T_ENUM
    );
    let index: Vec<u64> = ds(&f, "e/data/INDEX").read_raw().unwrap();
    assert_eq!(index, vec![0, 0, 0, 0, 1, 1, 2, 1, 1, 3]);
    let ticks: Vec<f64> = ds(&f, "e/data/Tick/1/values").read_raw().unwrap();
    assert_eq!(ticks, vec![0.5, 2.0, 3.0, 4.5]);
    let qty: Vec<i32> = ds(&f, "e/data/Fill/qty/values").read_raw().unwrap();
    assert_eq!(qty, vec![-5, 0]);
    assert!(f
        .group("e/data/Idle")
        .unwrap()
        .member_names()
        .unwrap()
        .is_empty());
    let names: Vec<String> = f
        .group("e/metadata/schema")
        .unwrap()
        .dataset("variant_names")
        .unwrap()
        .read_raw::<hdf5::types::VarLenUnicode>()
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(names, ["Idle", "Tick", "Fill", "Note"]);
    let values: Vec<i64> = ds(&f, "e/metadata/schema/variant_values")
        .read_raw()
        .unwrap();
    assert_eq!(values, [0, 1, 2, 3]);
}

#[test]
fn ranges_and_appends() {
    let f = common::mem_file();
    let all = evs(1000);
    h5vec::save_vector(&f, "v", &all[..300]).unwrap();
    h5vec::append_vector(&f, "v", &all[300..301]).unwrap();
    h5vec::append_vector(&f, "v", &all[301..]).unwrap();
    assert_eq!(h5vec::load_vector::<Ev>(&f, "v").unwrap(), all);
    for r in [0..0, 0..1, 5..17, 299..302, 998..1000, 0..1000] {
        let part: Vec<Ev> = h5vec::load_range(&f, "v", r.clone()).unwrap();
        assert_eq!(part, all[r.start as usize..r.end as usize], "{r:?}");
    }
    // Appends into an empty vector, and of only one variant.
    h5vec::save_vector::<Ev>(&f, "w", &[]).unwrap();
    h5vec::append_vector(&f, "w", &[Ev::Tick(1.0), Ev::Tick(2.0)]).unwrap();
    h5vec::append_vector(&f, "w", &all[..20]).unwrap();
    let mut want = vec![Ev::Tick(1.0), Ev::Tick(2.0)];
    want.extend_from_slice(&all[..20]);
    assert_eq!(h5vec::load_vector::<Ev>(&f, "w").unwrap(), want);
    // Through the streaming writer and reader.
    let mut w = h5vec::VectorWriter::<Outer>::create(&f, "s", &Default::default()).unwrap();
    let mut want = Vec::new();
    for i in 0..50u8 {
        for x in [Outer::Leaf(i), Outer::Many(evs(i as usize % 4))] {
            w.push(&x).unwrap();
            want.push(x);
        }
    }
    w.finish().unwrap();
    let r = h5vec::VectorReader::<Outer>::open(&f, "s", 7).unwrap();
    let back: Vec<Outer> = r.flat_map(|x| x.unwrap()).collect();
    assert_eq!(back, want);
}

#[test]
fn labels_of_fieldless_enums() {
    let f = common::mem_file();
    h5vec::save_vector(&f, "l", &[Level::High, Level::Low, Level::Mid]).unwrap();
    let values: Vec<i16> = ds(&f, "l/data/values").read_raw().unwrap();
    assert_eq!(values, [300, -3, 7]);
    let vv: Vec<i64> = ds(&f, "l/metadata/schema/variant_values")
        .read_raw()
        .unwrap();
    assert_eq!(vv, [-3, 7, 300]);
    // In a list and an array the element node carries them too.
    h5vec::save_vector(&f, "ll", &[vec![Level::Mid], vec![]]).unwrap();
    let vv: Vec<i64> = ds(&f, "ll/metadata/schema/children/1/variant_values")
        .read_raw()
        .unwrap();
    assert_eq!(vv, [-3, 7, 300]);
    // A stored pair that disagrees is an error naming the pair.
    ds(&f, "l/metadata/schema/variant_values")
        .write_raw(&[-3i64, 8, 300])
        .unwrap();
    let e = h5vec::load_vector::<Level>(&f, "l").unwrap_err();
    assert_eq!(e.path(), "$");
    assert!(e.to_string().contains("(\"Mid\", 8)"), "{e}");
    // Without labels (HDF5Vectors.jl, older h5vec) the codes still load.
    let s = f.group("l/metadata/schema").unwrap();
    s.unlink("variant_names").unwrap();
    s.unlink("variant_values").unwrap();
    assert_eq!(
        h5vec::load_vector::<Level>(&f, "l").unwrap(),
        [Level::High, Level::Low, Level::Mid]
    );
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
#[allow(dead_code)] // most variants are never built
enum Wide {
    V0(u16),
    V1,
    V2,
    V3(u16),
    V4,
    V5,
    V6(u16),
    V7,
    V8,
    V9(u16),
    V10,
    V11,
    V12(u16),
    V13,
    V14,
    V15(u16),
    V16,
    V17,
    V18(u16),
    V19,
    V20,
    V21(u16),
    V22,
    V23,
    V24(u16),
    V25,
    V26,
    V27(u16),
    V28,
    V29,
    V30(u16),
    V31,
    V32,
    V33(u16),
    V34,
    V35,
    V36(u16),
    V37,
    V38,
    V39(u16),
    V40,
    V41,
    V42(u16),
    V43,
    V44,
    V45(u16),
    V46,
    V47,
    V48(u16),
    V49,
    V50,
    V51(u16),
    V52,
    V53,
    V54(u16),
    V55,
    V56,
    V57(u16),
    V58,
    V59,
    V60(u16),
    V61,
    V62,
    V63(u16),
    V64,
    V65,
    V66(u16),
    V67,
    V68,
    V69(u16),
    V70,
    V71,
    V72(u16),
    V73,
    V74,
    V75(u16),
    V76,
    V77,
    V78(u16),
    V79,
    V80,
    V81(u16),
    V82,
    V83,
    V84(u16),
    V85,
    V86,
    V87(u16),
    V88,
    V89,
    V90(u16),
    V91,
    V92,
    V93(u16),
    V94,
    V95,
    V96(u16),
    V97,
    V98,
    V99(u16),
    V100,
    V101,
    V102(u16),
    V103,
    V104,
    V105(u16),
    V106,
    V107,
    V108(u16),
    V109,
    V110,
    V111(u16),
    V112,
    V113,
    V114(u16),
    V115,
    V116,
    V117(u16),
    V118,
    V119,
    V120(u16),
    V121,
    V122,
    V123(u16),
    V124,
    V125,
    V126(u16),
    V127,
    V128,
    V129(u16),
    V130,
    V131,
    V132(u16),
    V133,
    V134,
    V135(u16),
    V136,
    V137,
    V138(u16),
    V139,
    V140,
    V141(u16),
    V142,
    V143,
    V144(u16),
    V145,
    V146,
    V147(u16),
    V148,
    V149,
    V150(u16),
    V151,
    V152,
    V153(u16),
    V154,
    V155,
    V156(u16),
    V157,
    V158,
    V159(u16),
    V160,
    V161,
    V162(u16),
    V163,
    V164,
    V165(u16),
    V166,
    V167,
    V168(u16),
    V169,
    V170,
    V171(u16),
    V172,
    V173,
    V174(u16),
    V175,
    V176,
    V177(u16),
    V178,
    V179,
    V180(u16),
    V181,
    V182,
    V183(u16),
    V184,
    V185,
    V186(u16),
    V187,
    V188,
    V189(u16),
    V190,
    V191,
    V192(u16),
    V193,
    V194,
    V195(u16),
    V196,
    V197,
    V198(u16),
    V199,
    V200,
    V201(u16),
    V202,
    V203,
    V204(u16),
    V205,
    V206,
    V207(u16),
    V208,
    V209,
    V210(u16),
    V211,
    V212,
    V213(u16),
    V214,
    V215,
    V216(u16),
    V217,
    V218,
    V219(u16),
    V220,
    V221,
    V222(u16),
    V223,
    V224,
    V225(u16),
    V226,
    V227,
    V228(u16),
    V229,
    V230,
    V231(u16),
    V232,
    V233,
    V234(u16),
    V235,
    V236,
    V237(u16),
    V238,
    V239,
    V240(u16),
    V241,
    V242,
    V243(u16),
    V244,
    V245,
    V246(u16),
    V247,
    V248,
    V249(u16),
    V250,
    V251,
    V252(u16),
    V253,
    V254,
    V255(u16),
    V256,
    V257,
    V258(u16),
    V259,
    V260,
    V261(u16),
    V262,
    V263,
    V264(u16),
    V265,
    V266,
    V267(u16),
    V268,
    V269,
    V270(u16),
    V271,
    V272,
    V273(u16),
    V274,
    V275,
    V276(u16),
    V277,
    V278,
    V279(u16),
    V280,
    V281,
    V282(u16),
    V283,
    V284,
    V285(u16),
    V286,
    V287,
    V288(u16),
    V289,
    V290,
    V291(u16),
    V292,
    V293,
    V294(u16),
    V295,
    V296,
    V297(u16),
    V298,
    V299,
}

#[test]
fn three_hundred_variants_use_16_bit_tags() {
    let v = vec![Wide::V299, Wide::V0(5), Wide::V256, Wide::V3(7)];
    common::check_roundtrip(&v);
    let f = common::mem_file();
    h5vec::save_vector(&f, "w", &v).unwrap();
    let tag = ds(&f, "w/data/TAG");
    assert_eq!(tag.dtype().unwrap().size(), 2);
}

fn expect_invalid(f: &Group, name: &str, want_path: &str, want_text: &str) {
    let e = h5vec::load_vector::<Ev>(f, name).unwrap_err();
    assert_eq!(e.path(), want_path, "{e}");
    assert!(e.to_string().contains(want_text), "{e}");
}

/// Overwrites TAG row `row` with the raw byte `value` (no enum conversion).
fn poke_tag(f: &Group, name: &str, row: usize, value: u8) {
    let t = ds(f, &format!("{name}/data/TAG"));
    common::with_dtype(&t, |dt| {
        let mut raw = vec![0u8; t.size()];
        // SAFETY: a 1-byte enum dataset read and written with its own type.
        unsafe {
            assert!(hdf5_sys::h5d::H5Dread(t.id(), dt, 0, 0, 0, raw.as_mut_ptr().cast()) >= 0);
            raw[row] = value;
            assert!(hdf5_sys::h5d::H5Dwrite(t.id(), dt, 0, 0, 0, raw.as_ptr().cast()) >= 0);
        }
    });
}

#[test]
fn hostile_files() {
    let f = common::mem_file();
    for n in ["a", "b", "c", "d"] {
        h5vec::save_vector(&f, n, &evs(20)).unwrap();
    }
    // A tag value that is no variant.
    poke_tag(&f, "a", 7, 9);
    expect_invalid(&f, "a", "$[7]", "tag value 9 is not a variant");
    // An index out of row order.
    let ix = ds(&f, "b/data/INDEX");
    let mut v: Vec<u64> = ix.read_raw().unwrap();
    v[6] = 5;
    ix.write_raw(&v).unwrap();
    expect_invalid(&f, "b", "$[6]", "INDEX 5 of variant `Tick`, expected 2");
    // An index past the variant's rows (a range starting at that row).
    let mut v: Vec<u64> = ds(&f, "c/data/INDEX").read_raw().unwrap();
    v[19] = 1_000;
    ds(&f, "c/data/INDEX").write_raw(&v).unwrap();
    let e = h5vec::load_range::<Ev>(&f, "c", 19..20).unwrap_err();
    assert_eq!(e.path(), "$[19]", "{e}");
    assert!(
        e.to_string().contains("variant `Tick` rows 1000..1001"),
        "{e}"
    );
    expect_invalid(&f, "c", "$[19]", "INDEX 1000 of variant `Tick`, expected 7");
    // A tag of another enum type.
    let d = f.group("d/data").unwrap();
    d.unlink("TAG").unwrap();
    d.new_dataset::<u8>().shape(20).create("TAG").unwrap();
    let e = h5vec::load_vector::<Ev>(&f, "d").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Mismatch { .. }), "{e}");
    assert!(e.to_string().contains("enum over uint8"), "{e}");
    assert_eq!(e.path(), "$");
}
