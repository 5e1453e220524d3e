//! Variable-length data (SPEC.md section 4): compressed VLS strings, list columns and
//! nulls, round trips and exact layouts.

use h5vec::hdf5::{File, Group};
use h5vec::{load_vector, save_vector, save_vector_with, H5Vector, SaveOptions};

fn tmp() -> (tempfile::TempDir, File) {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("t.h5")).unwrap();
    (dir, f)
}

fn roundtrip<T: H5Vector + PartialEq + std::fmt::Debug>(
    g: &Group,
    name: &str,
    v: &[T],
    opts: &SaveOptions,
) {
    save_vector_with(g, name, v, opts).unwrap();
    let back: Vec<T> = load_vector(g, name).unwrap();
    assert_eq!(back, v, "vector {name}");
}

fn strs(ds: &h5vec::hdf5::Dataset) -> Vec<u64> {
    ds.read_raw::<u64>().unwrap()
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    a: i32,
    b: String,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Event {
    id: u64,
    #[h5vec(vls)]
    name: String,
    tags: Vec<String>,
    values: Vec<f32>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Nulls {
    maybe_num: Option<f64>,
    maybe_arr: Option<[f32; 3]>,
    maybe_inner: Option<Inner>,
    maybe_list: Option<Vec<i32>>,
    maybe_str: Option<String>,
    #[h5vec(vls)]
    maybe_vls: Option<String>,
    list_of_maybe: Vec<Option<String>>,
}

fn events() -> Vec<Event> {
    vec![
        Event {
            id: 1,
            name: "alpha".into(),
            tags: vec!["qc".into(), "raw".into()],
            values: vec![1.0, 2.5],
        },
        Event {
            id: 2,
            name: "".into(),
            tags: vec![],
            values: vec![],
        },
        Event {
            id: 3,
            name: "日本語 🎉".into(),
            tags: vec!["".into(), "héllo".into()],
            values: vec![-0.5],
        },
        Event {
            id: 4,
            name: "alpha".into(),
            tags: vec!["qc".into()],
            values: vec![f32::MAX, f32::MIN_POSITIVE, 0.0],
        },
    ]
}

#[test]
fn events_roundtrip_and_layout() {
    let (_d, f) = tmp();
    let ev = events();
    roundtrip(&f, "events", &ev, &SaveOptions::default());
    // name: VLS heap + pointers, consecutive entries on neighbouring bytes.
    let ptrs = f.dataset("events/data/name/pointers").unwrap();
    assert_eq!(ptrs.shape(), vec![4]);
    let heap = f
        .dataset("events/data/name/heap")
        .unwrap()
        .read_raw::<u8>()
        .unwrap();
    assert_eq!(heap, "alpha日本語 🎉alpha".as_bytes());
    // tags: list of strings with STRING_VALUES.
    let tags = f.group("events/data/tags").unwrap();
    assert_eq!(
        h5vec_tests::attr_string(&tags, "CLASS").as_deref(),
        Some("LIST_COLUMN")
    );
    assert_eq!(
        h5vec_tests::attr_string(&tags, "KIND").as_deref(),
        Some("OFFSETS")
    );
    assert_eq!(
        strs(&f.dataset("events/data/tags/OFFSETS").unwrap()),
        [0, 2, 2, 4, 5]
    );
    assert_eq!(
        strs(&f.dataset("events/data/tags/VALUES/OFFSETS").unwrap()),
        [0, 2, 5, 5, 11, 13]
    );
    let chars = f
        .dataset("events/data/tags/VALUES/CHARS")
        .unwrap()
        .read_raw::<u8>()
        .unwrap();
    assert_eq!(chars, "qcrawhéllo qc".replace(' ', "").as_bytes());
    let vals = f.group("events/data/tags/VALUES").unwrap();
    assert_eq!(
        h5vec_tests::attr_string(&vals, "CLASS").as_deref(),
        Some("STRING_VALUES")
    );
    assert_eq!(
        strs(&f.dataset("events/data/values/OFFSETS").unwrap()),
        [0, 2, 2, 3, 6]
    );
    assert_eq!(
        f.dataset("events/data/values/VALUES")
            .unwrap()
            .read_raw::<f32>()
            .unwrap()
            .len(),
        6
    );
}

#[test]
fn dedup_shares_slices() {
    let (_d, f) = tmp();
    let ev = events();
    roundtrip(
        &f,
        "events",
        &ev,
        &SaveOptions::default().dedup_strings(true),
    );
    let heap = f
        .dataset("events/data/name/heap")
        .unwrap()
        .read_raw::<u8>()
        .unwrap();
    assert_eq!(heap, "alpha日本語 🎉".as_bytes());
}

#[test]
fn nulls_roundtrip() {
    let (_d, f) = tmp();
    let v = vec![
        Nulls {
            maybe_num: Some(1.5),
            maybe_arr: None,
            maybe_inner: Some(Inner {
                a: 7,
                b: "x".into(),
            }),
            maybe_list: Some(vec![]),
            maybe_str: Some("".into()),
            maybe_vls: None,
            list_of_maybe: vec![None, Some("".into()), Some("a".into())],
        },
        Nulls {
            maybe_num: None,
            maybe_arr: Some([1.0, 2.0, 3.0]),
            maybe_inner: None,
            maybe_list: None,
            maybe_str: None,
            maybe_vls: Some("NA".into()),
            list_of_maybe: vec![],
        },
        Nulls {
            maybe_num: Some(f64::NAN.copysign(1.0)).filter(|_| false),
            maybe_arr: Some([0.0; 3]),
            maybe_inner: Some(Inner {
                a: -1,
                b: "ü".into(),
            }),
            maybe_list: Some(vec![1, 2, 3]),
            maybe_str: Some("y".into()),
            maybe_vls: Some("".into()),
            list_of_maybe: vec![None],
        },
    ];
    roundtrip(&f, "n", &v, &SaveOptions::default());
    let mask = f.dataset("n/data/maybe_list/MASK").unwrap();
    assert!(h5vec_tests::is_h5col_bool(&mask));
    assert_eq!(
        strs(&f.dataset("n/data/maybe_list/OFFSETS").unwrap()),
        [0, 0, 0, 3]
    );
    // The placeholder avoids the real value "NA" in the same batch.
    let ph = f.dataset("n/data/maybe_vls/pointers").unwrap();
    let a = ph.attr("missing-value-placeholder").unwrap();
    assert_eq!(h5vec_tests::read_attr_string(&a), "NA_");
}

#[test]
fn nested_lists_and_records() {
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct Deep {
        grid: Vec<Vec<Vec<i32>>>,
        opt_inner: Vec<Option<Vec<u8>>>,
        points: Vec<Inner>,
        flags: Vec<bool>,
        arrs: Vec<[f64; 2]>,
        pairs: Vec<(i16, String)>,
    }
    let (_d, f) = tmp();
    let v = vec![
        Deep {
            grid: vec![vec![vec![1, 2], vec![]], vec![]],
            opt_inner: vec![None, Some(vec![]), Some(vec![9])],
            points: vec![
                Inner {
                    a: 1,
                    b: "p".into(),
                },
                Inner { a: 2, b: "".into() },
            ],
            flags: vec![true, false, true],
            arrs: vec![[1.0, 2.0]],
            pairs: vec![(1, "one".into())],
        },
        Deep {
            grid: vec![],
            opt_inner: vec![],
            points: vec![],
            flags: vec![],
            arrs: vec![],
            pairs: vec![],
        },
    ];
    roundtrip(&f, "deep", &v, &SaveOptions::default());
    let flags = f.dataset("deep/data/flags/VALUES").unwrap();
    assert!(h5vec_tests::is_h5col_bool(&flags));
    assert_eq!(
        f.dataset("deep/data/points/VALUES/a/values")
            .unwrap()
            .read_raw::<i32>()
            .unwrap(),
        [1, 2]
    );
    assert_eq!(
        f.dataset("deep/data/arrs/VALUES").unwrap().shape(),
        vec![1, 2]
    );
    // Empty vector of every kind.
    roundtrip::<Deep>(&f, "empty", &[], &SaveOptions::default());
}

#[test]
fn vls_for_all_strings_and_big_batches() {
    let (_d, f) = tmp();
    let v: Vec<(String, Option<String>)> = (0..150_000)
        .map(|i| {
            (
                format!("s{i}"),
                if i % 7 == 0 {
                    None
                } else {
                    Some(format!("o{}", i % 13))
                },
            )
        })
        .collect();
    roundtrip(
        &f,
        "s",
        &v,
        &SaveOptions::default().vls_strings(true).deflate(4),
    );
    assert!(f.link_exists("s/data/1/heap"));
    assert!(f.link_exists("s/data/2/pointers"));
    let lists: Vec<Vec<u32>> = (0..100_000u32).map(|i| (0..i % 5).collect()).collect();
    roundtrip(&f, "l", &lists, &SaveOptions::default().chunk_length(1000));
}

#[test]
fn plain_vec_types() {
    let (_d, f) = tmp();
    save_vector(&f, "vs", &[vec!["a".to_string()], vec![]]).unwrap();
    let back: Vec<Vec<String>> = load_vector(&f, "vs").unwrap();
    assert_eq!(back, vec![vec!["a".to_string()], vec![]]);
}
