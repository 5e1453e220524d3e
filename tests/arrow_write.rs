//! `h5vec::arrow`'s writer: a batch read from a typed save and written back
//! gives the same layout, dataset for dataset and byte for byte (SPEC.md
//! section 11); batches without h5vec metadata get the layout of the Rust
//! type a user would write; streams, appends, repair and the errors.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder, StringDictionaryBuilder};
use arrow_array::types::Int32Type;
use arrow_array::*;
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit, UnionFields};
use h5vec::arrow::{append_record_batch, read_vector, repair, save_batches, save_record_batch};
use h5vec::hdf5::{self, Dataset, Group};
use h5vec::{load_vector, save_vector_with, H5Vector, SaveOptions};
use h5vec_tests::{attr_string, dtype_class, mem_file, str_type, with_dtype};
use hdf5_sys::h5t::H5T_class_t;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------
// The layout of a vector group, everything that can differ.

/// One line per object below `g`: path, and for a dataset its type, shape,
/// chunk shape, filters, fill value, attributes and every stored byte.
fn layout(g: &Group) -> Vec<String> {
    let mut out = Vec::new();
    walk(g, "", &mut out);
    out
}

fn attrs(obj: &hdf5::Location) -> String {
    let mut names = obj.attr_names().unwrap();
    names.sort();
    names
        .iter()
        .map(|n| {
            let a = obj.attr(n).unwrap();
            let t = a.dtype().unwrap().to_descriptor();
            // Statistics' tokens (SPEC.md section 14) are uint64.
            let v = match t {
                Ok(hdf5::types::TypeDescriptor::Unsigned(_)) => {
                    Some(a.read_scalar::<u64>().unwrap().to_string())
                }
                _ => attr_string(obj, n),
            };
            format!("{n}: {t:?} = {v:?}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn walk(g: &Group, prefix: &str, out: &mut Vec<String>) {
    let mut names = g.member_names().unwrap();
    names.sort();
    for n in names {
        let p = format!("{prefix}/{n}");
        if let Ok(sub) = g.group(&n) {
            out.push(format!("{p}/ [{}]", attrs(&sub)));
            walk(&sub, &p, out);
        } else {
            let ds = g.dataset(&n).unwrap();
            out.push(format!(
                "{p}: {:?} shape {:?} chunk {:?} filters {:?} fill {:?} [{}] = {:?}",
                ds.dtype().unwrap().to_descriptor(),
                ds.shape(),
                ds.chunk(),
                ds.filters(),
                // hdf5-metno reads a packed compound's fill value through
                // misaligned fields (the statistics' entries, SPEC.md 14).
                (dtype_class(&ds) != H5T_class_t::H5T_COMPOUND)
                    .then(|| ds.fill_value().ok().map(|v| format!("{v:?}"))),
                attrs(&ds),
                contents(&ds)
            ));
        }
    }
}

/// Every element of `ds` in its own file type (strings as text).
fn contents(ds: &Dataset) -> String {
    if dtype_class(ds) == H5T_class_t::H5T_STRING && str_type(ds).variable {
        let v: Vec<String> = if ds.is_scalar() {
            vec![ds
                .read_scalar::<hdf5::types::VarLenUnicode>()
                .unwrap()
                .to_string()]
        } else {
            ds.read_raw::<hdf5::types::VarLenUnicode>()
                .unwrap()
                .iter()
                .map(|s| s.to_string())
                .collect()
        };
        return format!("{v:?}");
    }
    let n = ds.size();
    let bytes = with_dtype(ds, |t| {
        // SAFETY: the buffer holds `n` values of the file type `t`, the
        // whole dataspace, read without conversion.
        unsafe {
            let size = hdf5_sys::h5t::H5Tget_size(t);
            let mut b = vec![0u8; n * size];
            if n > 0 {
                let r = hdf5_sys::h5d::H5Dread(
                    ds.id(),
                    t,
                    hdf5_sys::h5s::H5S_ALL,
                    hdf5_sys::h5s::H5S_ALL,
                    hdf5_sys::h5p::H5P_DEFAULT,
                    b.as_mut_ptr().cast(),
                );
                assert!(r >= 0, "H5Dread {}", ds.name());
            }
            b
        }
    });
    format!("{bytes:?}")
}

#[track_caller]
fn assert_same_layout(f: &hdf5::File, a: &str, b: &str) {
    let (la, lb) = (layout(&f.group(a).unwrap()), layout(&f.group(b).unwrap()));
    for (x, y) in la.iter().zip(&lb) {
        assert_eq!(x, y, "{a} against {b}");
    }
    assert_eq!(la.len(), lb.len(), "{a}: {la:#?}\n{b}: {lb:#?}");
}

// ---------------------------------------------------------------------------
// Types of every kind.

#[derive(H5Vector, Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
struct Stamp {
    weeks: i32,
    micros: i64,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Unit;

#[repr(u8)]
#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
enum Level {
    Low = 1,
    High = 200,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    a: u16,
    s: String,
    o: Option<f32>,
    #[h5vec(vls)]
    v: String,
}

/// One field of every kind and combination, in four records (a derived
/// record of ~50 fields overflows the test threads' stacks in the typed
/// codecs of a debug build).
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct All {
    a: Scalars,
    b: Shapes,
    c: Lists,
    d: Options,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Scalars {
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
    letter: char,
    level: Level,
    label: String,
    #[h5vec(json)]
    json: Vec<Stamp>,
    #[h5vec(blob)]
    blob: BTreeMap<String, u32>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Shapes {
    pos: [f32; 3],
    grid: [[i16; 2]; 3],
    flags: [bool; 2],
    letters: [char; 2],
    empty: [u8; 0],
    stamp: Stamp,
    tup: (u8, String),
    unit: Unit,
    #[h5vec(vls)]
    vls: String,
    #[h5vec(vls)]
    vls_opt: Option<String>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Lists {
    nums: Vec<i32>,
    bools: Vec<bool>,
    chars: Vec<char>,
    levels: Vec<Level>,
    arrays: Vec<[u8; 2]>,
    tags: Vec<String>,
    opt_tags: Vec<Option<String>>,
    opt_nums: Vec<Option<f64>>,
    nested: Vec<Vec<u16>>,
    opt_lists: Vec<Option<Vec<i8>>>,
    stamps: Vec<Stamp>,
    inners: Vec<Inner>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Options {
    o_num: Option<i64>,
    o_bool: Option<bool>,
    o_char: Option<char>,
    o_level: Option<Level>,
    o_str: Option<String>,
    o_arr: Option<[f64; 2]>,
    o_rec: Option<Inner>,
    o_list: Option<Vec<String>>,
    o_nested: Option<Vec<Option<Vec<u8>>>>,
}

fn all(i: u32) -> All {
    let some = |k: u32| !i.is_multiple_of(k);
    let a = Scalars {
        i8_: i as i8,
        i16_: -(i as i16),
        i32_: i as i32 * 1000,
        i64_: -(i as i64) << 40,
        u8_: i as u8,
        u16_: i as u16,
        u32_: i * 7,
        u64_: u64::MAX - u64::from(i),
        f32_: i as f32 / 3.0,
        f64_: f64::from(i).sqrt(),
        flag: i.is_multiple_of(3),
        letter: char::from_u32(0x41 + i % 26).unwrap(),
        level: if i.is_multiple_of(2) {
            Level::Low
        } else {
            Level::High
        },
        label: format!("label {i} é"),
        json: vec![
            Stamp {
                weeks: 1,
                micros: i.into()
            };
            (i % 2) as usize
        ],
        blob: (0..i % 3).map(|k| (format!("k{k}"), k * i)).collect(),
    };
    let b = Shapes {
        pos: [i as f32, 0.5, -1.0],
        grid: [[i as i16, 1], [2, 3], [4, -(i as i16)]],
        flags: [i.is_multiple_of(2), true],
        letters: ['x', char::from_u32(0x3b1 + i % 5).unwrap()],
        empty: [],
        stamp: Stamp {
            weeks: i as i32,
            micros: 5,
        },
        tup: (i as u8, format!("t{i}")),
        unit: Unit,
        vls: "ü".repeat((i % 4) as usize),
        vls_opt: some(5).then(|| format!("v{}", i % 3)),
    };
    let c = Lists {
        nums: (0..i % 4).map(|k| k as i32 - 1).collect(),
        bools: (0..i % 3).map(|k| k % 2 == 0).collect(),
        chars: "ab€".chars().take((i % 4) as usize).collect(),
        levels: vec![Level::High; (i % 2) as usize],
        arrays: vec![[i as u8, 9]; (i % 3) as usize],
        tags: (0..i % 4).map(|k| format!("t{k}")).collect(),
        opt_tags: (0..i % 3)
            .map(|k| (k != 1).then(|| format!("o{k}")))
            .collect(),
        opt_nums: (0..i % 4)
            .map(|k| (k % 2 == 0).then_some(f64::from(k) + 0.5))
            .collect(),
        nested: vec![vec![i as u16; (i % 3) as usize]; (i % 2) as usize],
        opt_lists: (0..i % 3)
            .map(|k| (k != 0).then(|| vec![k as i8; k as usize]))
            .collect(),
        stamps: vec![Stamp::default(); (i % 2) as usize],
        inners: (0..i % 2)
            .map(|k| Inner {
                a: k as u16,
                s: format!("s{k}"),
                o: (k == 0).then_some(1.5),
                v: "vv".into(),
            })
            .collect(),
    };
    let d = Options {
        o_num: some(3).then_some(i64::from(i)),
        o_bool: some(4).then_some(i.is_multiple_of(2)),
        o_char: some(2).then_some('z'),
        o_level: some(3).then_some(Level::High),
        o_str: some(2).then(|| format!("s{i}")),
        o_arr: some(5).then_some([1.0, f64::from(i)]),
        o_rec: some(4).then(|| Inner {
            a: 7,
            s: "in".into(),
            o: None,
            v: format!("v{i}"),
        }),
        o_list: some(3).then(|| vec!["x".into(); (i % 2) as usize]),
        o_nested: some(4).then(|| vec![None, Some(vec![i as u8])]),
    };
    All { a, b, c, d }
}

fn option_sets() -> Vec<(&'static str, SaveOptions)> {
    vec![
        ("default", SaveOptions::default()),
        (
            "deflate + chunk_length",
            SaveOptions::default().deflate(3).chunk_length(7),
        ),
        ("vls_strings", SaveOptions::default().vls_strings(true)),
    ]
}

/// Typed save, `read_vector`, `save_record_batch` under another name: the
/// typed load of the copy equals the values, and the copy's layout is the
/// typed save's.
fn check_copy<T: H5Vector + PartialEq + std::fmt::Debug>(values: &[T]) {
    for (what, opts) in option_sets() {
        let f = mem_file();
        save_vector_with(&f, "typed", values, &opts).unwrap();
        let batch = read_vector(&f, "typed").unwrap();
        save_record_batch(&f, "arrow", &batch, &opts).unwrap_or_else(|e| panic!("{what}: {e}"));
        let back: Vec<T> = load_vector(&f, "arrow").unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(back, values, "{what}");
        assert_same_layout(&f, "typed", "arrow");
    }
}

#[test]
fn every_kind_copies_with_the_typed_layout() {
    let rows: Vec<All> = (0..50).map(all).collect();
    check_copy(&rows);
    check_copy::<All>(&[]);
}

#[test]
fn roots_that_are_not_records_copy_with_the_typed_layout() {
    check_copy(&[1i32, -2, 3]);
    check_copy(&[true, false]);
    check_copy(&['a', 'ß']);
    check_copy(&["x".to_string(), String::new()]);
    check_copy(&[Some("x".to_string()), None]);
    check_copy(&[[1.5f64, 2.0], [3.0, 4.0]]);
    check_copy(&[vec![Some(1u64), None], vec![]]);
    check_copy(&[vec![Some("a".to_string()), None]]);
    check_copy(&[Some(vec![1i16]), None]);
    check_copy(&[(), ()]);
    check_copy(&[(1u8, 'c'), (2, 'd')]);
}

// ---------------------------------------------------------------------------
// Batches without h5vec metadata: the Rust type a user would write.

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct PqInner {
    x: f64,
    y: Option<String>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pq {
    id: Option<i32>,
    name: Option<String>,
    nums: Option<Vec<Option<i32>>>,
    inner: PqInner,
    pos: [f32; 3],
    raw: Vec<u8>,
    cat: String,
    flag: bool,
    nothing: (),
}

fn plain_batch() -> RecordBatch {
    let id = Int32Array::from(vec![Some(1), None, Some(3)]);
    let name = StringArray::from(vec![Some("a"), Some("b"), None]);
    let mut nums = ListBuilder::new(Int32Builder::new());
    nums.append_value([Some(1), None]);
    nums.append_null();
    nums.append_value([]);
    let nums = nums.finish();
    let inner_fields = Fields::from(vec![
        Field::new("x", DataType::Float64, false),
        Field::new("y", DataType::Utf8, true),
    ]);
    let inner = StructArray::new(
        inner_fields,
        vec![
            Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5])),
            Arc::new(StringArray::from(vec![None, Some("q"), Some("")])),
        ],
        None,
    );
    let pos = FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        3,
        Arc::new(Float32Array::from(vec![1., 2., 3., 4., 5., 6., 7., 8., 9.])),
        None,
    );
    let raw = BinaryArray::from(vec![&b"\x00\x01"[..], b"", b"zz"]);
    let mut cat = StringDictionaryBuilder::<Int32Type>::new();
    for s in ["red", "blue", "red"] {
        cat.append_value(s);
    }
    let flag = BooleanArray::from(vec![true, false, true]);
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("nums", nums.data_type().clone(), true),
        Field::new("inner", inner.data_type().clone(), false),
        Field::new("pos", pos.data_type().clone(), false),
        Field::new("raw", DataType::Binary, false),
        Field::new(
            "cat",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        ),
        Field::new("flag", DataType::Boolean, false),
        Field::new("nothing", DataType::Null, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(id),
            Arc::new(name),
            Arc::new(nums),
            Arc::new(inner),
            Arc::new(pos),
            Arc::new(raw),
            Arc::new(cat.finish()),
            Arc::new(flag),
            Arc::new(NullArray::new(3)),
        ],
    )
    .unwrap()
}

fn plain_rows() -> Vec<Pq> {
    vec![
        Pq {
            id: Some(1),
            name: Some("a".into()),
            nums: Some(vec![Some(1), None]),
            inner: PqInner { x: 0.5, y: None },
            pos: [1., 2., 3.],
            raw: vec![0, 1],
            cat: "red".into(),
            flag: true,
            nothing: (),
        },
        Pq {
            id: None,
            name: Some("b".into()),
            nums: None,
            inner: PqInner {
                x: 1.5,
                y: Some("q".into()),
            },
            pos: [4., 5., 6.],
            raw: vec![],
            cat: "blue".into(),
            flag: false,
            nothing: (),
        },
        Pq {
            id: Some(3),
            name: None,
            nums: Some(vec![]),
            inner: PqInner {
                x: 2.5,
                y: Some(String::new()),
            },
            pos: [7., 8., 9.],
            raw: b"zz".to_vec(),
            cat: "red".into(),
            flag: true,
            nothing: (),
        },
    ]
}

#[test]
fn batches_without_metadata_load_as_the_matching_type() {
    let f = mem_file();
    save_record_batch(&f, "pq", &plain_batch(), &SaveOptions::default()).unwrap();
    assert_eq!(load_vector::<Pq>(&f, "pq").unwrap(), plain_rows());
    // The same layout as the typed save of that type.
    save_vector_with(&f, "typed", &plain_rows(), &SaveOptions::default()).unwrap();
    let strip = |l: Vec<String>| -> Vec<String> {
        // Record nodes made from Arrow name no Rust type: compare all but
        // the descriptive logical types.
        l.into_iter()
            .filter(|x| !x.contains("logical_type") && !x.contains("serialized_schema"))
            .collect()
    };
    assert_eq!(
        strip(layout(&f.group("pq").unwrap())),
        strip(layout(&f.group("typed").unwrap()))
    );
    // VLS strings when asked for, for strings without metadata.
    let opts = SaveOptions::default().vls_strings(true);
    save_record_batch(&f, "pq_vls", &plain_batch(), &opts).unwrap();
    assert_eq!(load_vector::<Pq>(&f, "pq_vls").unwrap(), plain_rows());
    assert!(f.dataset("pq_vls/data/name/heap").is_ok());
    assert!(f.dataset("pq_vls/data/cat/pointers").is_ok());
}

#[test]
fn nulls_in_fields_that_are_not_nullable_are_errors() {
    let f = mem_file();
    let schema = Arc::new(Schema::new(vec![Field::new(
        "s",
        DataType::Struct(Fields::from(vec![Field::new("x", DataType::Int32, true)])),
        false,
    )]));
    // Nullable `x` holds a null: fine, an Option.
    let s = StructArray::new(
        Fields::from(vec![Field::new("x", DataType::Int32, true)]),
        vec![Arc::new(Int32Array::from(vec![Some(1), None]))],
        None,
    );
    let b = RecordBatch::try_new(schema, vec![Arc::new(s)]).unwrap();
    save_record_batch(&f, "ok", &b, &SaveOptions::default()).unwrap();
    #[derive(H5Vector, Debug, PartialEq)]
    struct X {
        x: Option<i32>,
    }
    #[derive(H5Vector, Debug, PartialEq)]
    struct S {
        s: X,
    }
    assert_eq!(
        load_vector::<S>(&f, "ok").unwrap(),
        [
            S {
                s: X { x: Some(1) }
            },
            S { s: X { x: None } }
        ]
    );
    // A char column with two characters in a value.
    let g = mem_file();
    h5vec::save_vector(&g, "c", &['a']).unwrap();
    let batch = read_vector(&g, "c").unwrap();
    let bad = RecordBatch::try_new(
        batch.schema(),
        vec![Arc::new(StringArray::from(vec!["ab"]))],
    )
    .unwrap();
    let e = save_record_batch(&f, "c", &bad, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$[0]", "{e}");
    assert!(!f.link_exists("c"));
}

// ---------------------------------------------------------------------------
// Streams and replacement.

#[test]
fn save_batches_equals_one_batch() {
    let f = mem_file();
    let rows: Vec<All> = (0..40).map(all).collect();
    save_vector_with(&f, "typed", &rows, &SaveOptions::default()).unwrap();
    let whole = read_vector(&f, "typed").unwrap();
    let schema = whole.schema();
    let parts = [0..5, 5..5, 5..33, 33..40].map(|r| Ok(whole.slice(r.start, r.end - r.start)));
    let opts = SaveOptions::default().chunk_length(4);
    let n = save_batches(&f, "stream", &schema, parts, &opts).unwrap();
    assert_eq!(n, 40);
    save_record_batch(&f, "one", &whole, &opts).unwrap();
    assert_eq!(load_vector::<All>(&f, "stream").unwrap(), rows);
    assert_eq!(load_vector::<All>(&f, "one").unwrap(), rows);
    // With an explicit chunk length both make the same chunks.
    assert_same_layout(&f, "stream", "one");

    // A batch of another schema: an error, nothing linked.
    let other =
        RecordBatch::try_from_iter([("x", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
            .unwrap();
    let batches = vec![Ok(whole.slice(0, 3)), Ok(other)];
    let e = save_batches(&f, "bad", &schema, batches, &opts).unwrap_err();
    assert!(e.to_string().contains("record batch 1"), "{e}");
    assert!(!f.link_exists("bad"));
    // An error from the stream: the same.
    let batches = vec![
        Ok(whole.slice(0, 3)),
        Err(arrow_schema::ArrowError::ComputeError("boom".into())),
    ];
    let e = save_batches(&f, "bad", &schema, batches, &opts).unwrap_err();
    assert!(e.to_string().contains("boom"), "{e}");
    assert!(!f.link_exists("bad"));

    // Replacing: refused without `replace`, done with it.
    let small = whole.slice(0, 2);
    let e = save_record_batch(&f, "one", &small, &opts).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
    assert_eq!(load_vector::<All>(&f, "one").unwrap().len(), 40);
    save_record_batch(&f, "one", &small, &opts.clone().replace(true)).unwrap();
    assert_eq!(load_vector::<All>(&f, "one").unwrap(), rows[..2]);
    let n = save_batches(&f, "one", &schema, [Ok(small)], &opts.replace(true)).unwrap();
    assert_eq!(n, 2);
}

// ---------------------------------------------------------------------------
// Appends and repair.

#[test]
fn appended_batches_load_typed_and_repair_matches_the_typed_repair() {
    let f = mem_file();
    let rows: Vec<All> = (0..60).map(all).collect();
    for name in ["a", "b"] {
        save_vector_with(&f, name, &rows[..25], &SaveOptions::default()).unwrap();
    }
    save_vector_with(&f, "src", &rows[25..], &SaveOptions::default()).unwrap();
    let tail = read_vector(&f, "src").unwrap();
    append_record_batch(&f, "a", &tail.slice(0, 10)).unwrap();
    append_record_batch(&f, "a", &tail.slice(10, 0)).unwrap();
    append_record_batch(&f, "a", &tail.slice(10, 25)).unwrap();
    // The same appends typed (each append's first missing VLS value puts
    // its placeholder on the heap once).
    h5vec::append_vector(&f, "b", &rows[25..35]).unwrap();
    h5vec::append_vector(&f, "b", &rows[35..35]).unwrap();
    h5vec::append_vector(&f, "b", &rows[35..]).unwrap();
    assert_eq!(load_vector::<All>(&f, "a").unwrap(), rows);
    assert_same_layout(&f, "a", "b");

    // A batch of another type writes nothing.
    let g = mem_file();
    h5vec::save_vector(&g, "x", &[1u8]).unwrap();
    let other = read_vector(&g, "x").unwrap();
    assert!(append_record_batch(&f, "a", &other).is_err());
    assert_eq!(load_vector::<All>(&f, "a").unwrap(), rows);

    // An append interrupted before its count: stale tails; the untyped
    // repair trims them exactly as the typed one.
    for name in ["a", "b"] {
        h5vec::append_vector(&f, name, &rows[..7]).unwrap();
        f.dataset(&format!("{name}/metadata/count"))
            .unwrap()
            .write_scalar(&60i64)
            .unwrap();
    }
    repair(&f, "a").unwrap();
    h5vec::repair::<All>(&f, "b").unwrap();
    assert_eq!(f.dataset("a/data/a/f64_/values").unwrap().shape(), vec![60]);
    assert_eq!(
        f.dataset("a/data/c/tags/OFFSETS").unwrap().shape(),
        vec![61]
    );
    assert_same_layout(&f, "a", "b");
    assert_eq!(load_vector::<All>(&f, "a").unwrap(), rows);
}

// ---------------------------------------------------------------------------
// Errors.

#[test]
fn unsupported_arrow_types_name_the_field() {
    let f = mem_file();
    let ts = Date64Array::from(vec![1]);
    let dec = Decimal128Array::from(vec![1]);
    let union = UnionArray::try_new(
        UnionFields::try_new(vec![0], vec![Field::new("a", DataType::Int32, false)]).unwrap(),
        vec![0i8].into(),
        None,
        vec![Arc::new(Int32Array::from(vec![1])) as ArrayRef],
    )
    .unwrap();
    let bytes = FixedSizeBinaryArray::try_from_iter([[0u8; 16]].into_iter()).unwrap();
    let cases: Vec<(&str, ArrayRef, &str)> = vec![
        ("when", Arc::new(ts), "Date64"),
        ("price", Arc::new(dec), "Decimal128"),
        ("u", Arc::new(union), "Union"),
        // 16 bytes are a UUID only with the arrow.uuid extension.
        ("b", Arc::new(bytes), "FixedSizeBinary(16)"),
    ];
    for (name, arr, ty) in cases {
        let b = RecordBatch::try_from_iter([
            ("ok", Arc::new(Int8Array::from(vec![1])) as ArrayRef),
            (name, arr),
        ])
        .unwrap();
        let e = save_record_batch(&f, "v", &b, &SaveOptions::default()).unwrap_err();
        assert_eq!(e.path(), format!("$.{name}"), "{e}");
        assert!(e.to_string().contains(ty), "{e}");
        assert!(!f.link_exists("v"));
    }
    // Nested: the path goes through the struct and the list.
    let inner = StructArray::from(vec![(
        Arc::new(Field::new("t", DataType::Date64, false)),
        Arc::new(Date64Array::from(vec![1])) as ArrayRef,
    )]);
    let list = ListArray::new(
        Arc::new(Field::new("item", inner.data_type().clone(), false)),
        OffsetBuffer::from_lengths([1]),
        Arc::new(inner),
        None,
    );
    let b = RecordBatch::try_from_iter([("l", Arc::new(list) as ArrayRef)]).unwrap();
    let e = save_record_batch(&f, "v", &b, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.l[].t", "{e}");
}

#[test]
fn metadata_that_does_not_describe_the_column_is_an_error() {
    let f = mem_file();
    let rows: Vec<Stamp> = vec![Stamp::default()];
    save_vector_with(&f, "s", &rows, &SaveOptions::default()).unwrap();
    let batch = read_vector(&f, "s").unwrap();
    // `weeks` keeps its Int32 node but holds Int64 values.
    let schema = batch.schema();
    let weeks = schema.field(0).clone().with_data_type(DataType::Int64);
    let fields = vec![Arc::new(weeks), schema.fields()[1].clone()];
    let s2 = Arc::new(Schema::new(fields));
    let b2 = RecordBatch::try_new(
        s2,
        vec![Arc::new(Int64Array::from(vec![0])), batch.column(1).clone()],
    )
    .unwrap();
    let e = save_record_batch(&f, "bad", &b2, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.weeks", "{e}");
    assert!(e.to_string().contains("Int32"), "{e}");
    // A node that is not JSON.
    let mut m = schema.field(0).metadata().clone();
    m.insert("h5vec.schema", "{not json");
    let fields = vec![
        Arc::new(schema.field(0).clone().with_metadata(m)),
        schema.fields()[1].clone(),
    ];
    let b3 = RecordBatch::try_new(Arc::new(Schema::new(fields)), batch.columns().to_vec()).unwrap();
    let e = save_record_batch(&f, "bad", &b3, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.weeks", "{e}");
    // Values the typed path refuses: a NUL in a variable-length string, a
    // fill value among `Vec<Option<i32>>` elements.
    let b =
        RecordBatch::try_from_iter([("s", Arc::new(StringArray::from(vec!["a\0b"])) as ArrayRef)])
            .unwrap();
    let e = save_record_batch(&f, "bad", &b, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.s[0]", "{e}");
    let mut l = ListBuilder::new(Int32Builder::new());
    l.append_value([Some(i32::MIN + 1)]);
    let b = RecordBatch::try_from_iter([("l", Arc::new(l.finish()) as ArrayRef)]).unwrap();
    let e = save_record_batch(&f, "bad", &b, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.l[][0]", "{e}");
    assert!(!f.link_exists("bad"));
}

// ---------------------------------------------------------------------------
// Maps, times and UUIDs (SPEC.md sections 4.5 to 4.7).

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Timed {
    at: chrono::DateTime<chrono::Utc>,
    local: chrono::DateTime<chrono::FixedOffset>,
    naive: chrono::NaiveDateTime,
    day: chrono::NaiveDate,
    clock: chrono::NaiveTime,
    took: Option<std::time::Duration>,
    delta: chrono::TimeDelta,
    sys: std::time::SystemTime,
    when: time::OffsetDateTime,
    id: uuid::Uuid,
    ids: Vec<uuid::Uuid>,
    stamps: Vec<chrono::DateTime<chrono::FixedOffset>>,
    prices: std::collections::HashMap<String, f64>,
    sorted: BTreeMap<u32, Vec<String>>,
    maybe: Option<BTreeMap<String, Stamp>>,
    many: Vec<Option<BTreeMap<i8, Option<f64>>>>,
    level: half::f16,
    z: num_complex::Complex<f64>,
    zs: Vec<num_complex::Complex<f32>>,
    oz: Option<num_complex::Complex<f32>>,
}

fn timed(i: i64) -> Timed {
    use chrono::{DateTime, FixedOffset, TimeDelta};
    let t = DateTime::from_timestamp_nanos(i * 86_400_000_000_007 - 5);
    let tz = FixedOffset::east_opt(i as i32 * 900).unwrap();
    Timed {
        at: t,
        local: t.with_timezone(&tz),
        naive: t.naive_utc(),
        day: t.date_naive(),
        clock: t.time(),
        took: (i % 2 == 0).then(|| std::time::Duration::from_nanos(i as u64 * 3)),
        delta: TimeDelta::nanoseconds(-i),
        sys: std::time::UNIX_EPOCH + std::time::Duration::from_secs(i as u64),
        when: time::OffsetDateTime::from_unix_timestamp(i * 1000)
            .unwrap()
            .to_offset(time::UtcOffset::from_whole_seconds(-3600).unwrap()),
        id: uuid::Uuid::from_u128(i as u128 * 77),
        ids: (0..i % 3)
            .map(|k| uuid::Uuid::from_u128(k as u128))
            .collect(),
        stamps: vec![t.with_timezone(&tz); (i % 2) as usize],
        prices: (0..i % 3).map(|k| (format!("p{k}"), k as f64)).collect(),
        sorted: (0..i % 4)
            .map(|k| (k as u32, vec![format!("s{i}"); k as usize]))
            .collect(),
        maybe: (i % 3 != 0).then(|| {
            BTreeMap::from([(
                format!("k{i}"),
                Stamp {
                    weeks: i as i32,
                    micros: -i,
                },
            )])
        }),
        many: vec![
            None,
            Some(BTreeMap::from([(i as i8, None), (0, Some(0.5))])),
        ][..(i % 3) as usize]
            .to_vec(),
        level: half::f16::from_bits(0x3c00 + i as u16),
        z: num_complex::Complex::new(i as f64 + 0.25, -0.0),
        zs: vec![num_complex::Complex::new(i as f32, 1.0); (i % 3) as usize],
        oz: (i % 2 == 0).then(|| num_complex::Complex::new(0.5, i as f32)),
    }
}

#[test]
fn maps_times_and_uuids_copy_with_the_typed_layout() {
    let rows: Vec<Timed> = (0..20).map(timed).collect();
    check_copy(&rows);
    check_copy::<Timed>(&[]);
    check_copy(&[chrono::NaiveDate::MIN, chrono::NaiveDate::MAX]);
    check_copy(&[BTreeMap::from([(1u8, 2u8)]), BTreeMap::new()]);
    // Appends: typed against Arrow batches, the same layout.
    let f = mem_file();
    let opts = SaveOptions::default();
    save_vector_with(&f, "typed", &rows[..7], &opts).unwrap();
    h5vec::append_vector(&f, "typed", &rows[7..]).unwrap();
    save_record_batch(
        &f,
        "arrow",
        &h5vec::arrow::read_range(&f, "typed", 0..7).unwrap(),
        &opts,
    )
    .unwrap();
    let rest = h5vec::arrow::read_range(&f, "typed", 7..20).unwrap();
    append_record_batch(&f, "arrow", &rest).unwrap();
    assert_eq!(load_vector::<Timed>(&f, "arrow").unwrap(), rows);
    assert_same_layout(&f, "typed", "arrow");
}

#[test]
fn arrow_times_maps_and_uuids_without_metadata_load_as_the_matching_types() {
    #[derive(H5Vector, Debug, PartialEq)]
    struct Plain {
        when: chrono::DateTime<chrono::Utc>,
        naive: chrono::NaiveDateTime,
        day: chrono::NaiveDate,
        clock: chrono::NaiveTime,
        took: chrono::TimeDelta,
        id: uuid::Uuid,
        prices: std::collections::HashMap<String, i32>,
        maybe: Option<std::time::Duration>,
    }
    let mut map = arrow_array::builder::MapBuilder::new(
        None,
        arrow_array::builder::StringBuilder::new(),
        Int32Builder::new(),
    )
    .with_values_field(Field::new("values", DataType::Int32, false));
    map.keys().append_value("k");
    map.values().append_value(1);
    map.append(true).unwrap();
    map.append(true).unwrap();
    let map = map.finish();
    let id = uuid::Uuid::from_u128(0xfeed);
    let ids = FixedSizeBinaryArray::try_from_iter([*id.as_bytes(), [0; 16]].into_iter()).unwrap();
    let uuid_field = Field::new("id", DataType::FixedSizeBinary(16), false)
        .with_extension_type(arrow_schema::extension::Uuid);
    let cols: Vec<(Field, ArrayRef)> = vec![
        (
            Field::new(
                "when",
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                false,
            ),
            Arc::new(
                TimestampMillisecondArray::from(vec![-1, 1_700_000_000_123]).with_timezone("UTC"),
            ),
        ),
        (
            Field::new("naive", DataType::Timestamp(TimeUnit::Second, None), false),
            Arc::new(TimestampSecondArray::from(vec![0, 86_400])),
        ),
        (
            Field::new("day", DataType::Date32, false),
            Arc::new(Date32Array::from(vec![-1, 19_000])),
        ),
        (
            Field::new("clock", DataType::Time32(TimeUnit::Second), false),
            Arc::new(Time32SecondArray::from(vec![0, 86_399])),
        ),
        (
            Field::new("took", DataType::Duration(TimeUnit::Microsecond), false),
            Arc::new(DurationMicrosecondArray::from(vec![-5, 7])),
        ),
        (uuid_field, Arc::new(ids)),
        (
            Field::new("prices", map.data_type().clone(), false),
            Arc::new(map),
        ),
        (
            Field::new("maybe", DataType::Duration(TimeUnit::Nanosecond), true),
            Arc::new(DurationNanosecondArray::from(vec![Some(3), None])),
        ),
    ];
    let schema = Arc::new(Schema::new(
        cols.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>(),
    ));
    let b = RecordBatch::try_new(schema, cols.into_iter().map(|(_, a)| a).collect()).unwrap();
    let f = mem_file();
    save_record_batch(&f, "v", &b, &SaveOptions::default()).unwrap();
    let v = load_vector::<Plain>(&f, "v").unwrap();
    assert_eq!(v[0].when.timestamp_nanos_opt(), Some(-1_000_000));
    assert_eq!(v[1].when.timestamp_millis(), 1_700_000_000_123);
    assert_eq!(v[1].naive.and_utc().timestamp(), 86_400);
    assert_eq!(
        v[0].day,
        chrono::NaiveDate::from_ymd_opt(1969, 12, 31).unwrap()
    );
    assert_eq!(
        v[1].clock,
        chrono::NaiveTime::from_hms_opt(23, 59, 59).unwrap()
    );
    assert_eq!(v[0].took, chrono::TimeDelta::microseconds(-5));
    assert_eq!(v[0].id, id);
    assert_eq!(
        v[0].prices,
        std::collections::HashMap::from([("k".to_string(), 1)])
    );
    assert!(v[1].prices.is_empty());
    assert_eq!(v[0].maybe, Some(std::time::Duration::from_nanos(3)));
    assert_eq!(v[1].maybe, None);

    // Seconds past Int64 nanoseconds are an error naming the row.
    let b = RecordBatch::try_from_iter([(
        "t",
        Arc::new(TimestampSecondArray::from(vec![0, i64::MAX / 1000])) as ArrayRef,
    )])
    .unwrap();
    let e = save_record_batch(&f, "w", &b, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.t[1]", "{e}");
    assert!(e.to_string().contains("outside Int64 nanoseconds"), "{e}");
    assert!(!f.link_exists("w"));
}

// ---------------------------------------------------------------------------
// Enums with data (dense Arrow unions) and labelled enums (dictionaries).

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Ev {
    Idle,
    Tick(f64),
    Fill { qty: i32, price: f64 },
    Note(String, Vec<u16>),
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Outer {
    Leaf(Level),
    Inner(Ev),
    Many(Vec<Ev>),
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Tagged {
    id: u32,
    ev: Ev,
    opt: Option<Ev>,
    list: Vec<Ev>,
    outer: Outer,
    level: Level,
    levels: Vec<Level>,
    pair: [Level; 2],
    o_level: Option<Level>,
    rec: Option<WithEv>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithEv {
    ev: Ev,
}

fn ev(i: u32) -> Ev {
    match i % 5 {
        0 => Ev::Idle,
        1 | 4 => Ev::Tick(f64::from(i) * 0.5),
        2 => Ev::Fill {
            qty: i as i32 - 7,
            price: 1.25 * f64::from(i),
        },
        _ => Ev::Note(format!("n{i}"), (0..(i % 4) as u16).collect()),
    }
}

fn tagged(i: u32) -> Tagged {
    let level = if i.is_multiple_of(3) {
        Level::Low
    } else {
        Level::High
    };
    Tagged {
        id: i,
        ev: ev(i),
        opt: (i % 3 != 1).then(|| ev(i + 2)),
        list: (0..i % 4).map(|k| ev(i + k)).collect(),
        outer: match i % 3 {
            0 => Outer::Leaf(level),
            1 => Outer::Inner(ev(i + 1)),
            _ => Outer::Many((0..i % 3).map(ev).collect()),
        },
        level,
        levels: vec![level; (i % 3) as usize],
        pair: [level, Level::Low],
        o_level: (!i.is_multiple_of(4)).then_some(Level::High),
        rec: (i.is_multiple_of(2)).then(|| WithEv { ev: ev(i + 3) }),
    }
}

#[test]
fn unions_and_labels_copy_with_the_typed_layout() {
    let rows: Vec<Tagged> = (0..40).map(tagged).collect();
    check_copy(&rows);
    check_copy::<Tagged>(&[]);
    check_copy(&(0..9).map(ev).collect::<Vec<_>>());
    check_copy(&[Some(Ev::Tick(1.0)), None, Some(Ev::Idle), None]);
    check_copy(&[vec![Ev::Idle, Ev::Tick(2.0)], vec![]]);
    check_copy(&[Level::High, Level::Low]);
}

#[test]
fn unions_read_as_dense_arrow_unions_and_labels_as_dictionaries() {
    let f = mem_file();
    let rows: Vec<Tagged> = (0..6).map(tagged).collect();
    h5vec::save_vector(&f, "v", &rows).unwrap();
    let b = read_vector(&f, "v").unwrap();
    let u = b.column_by_name("ev").unwrap().as_union();
    let DataType::Union(fields, arrow_schema::UnionMode::Dense) = u.data_type() else {
        panic!("{}", u.data_type())
    };
    let names: Vec<(i8, &str)> = fields.iter().map(|(i, f)| (i, f.name().as_str())).collect();
    assert_eq!(names, [(0, "Idle"), (1, "Tick"), (2, "Fill"), (3, "Note")]);
    // Rows 0..6 are Idle, Tick(0.5), Fill, Note, Tick(2.0), Idle.
    assert_eq!(u.type_ids().to_vec(), [0, 1, 2, 3, 1, 0]);
    assert_eq!(u.offsets().unwrap().to_vec(), [0, 0, 0, 0, 1, 1]);
    let tick = u.child(1).as_struct();
    assert_eq!(tick.column_names(), ["1"]);
    assert_eq!(
        tick.column(0)
            .as_primitive::<Float64Type>()
            .values()
            .to_vec(),
        [0.5, 2.0]
    );
    let fill = u.child(2).as_struct();
    assert_eq!(fill.column(0).as_primitive::<Int32Type>().value(0), -5);
    assert_eq!(fill.column(1).as_primitive::<Float64Type>().value(0), 2.5);
    assert_eq!(u.child(0).len(), 2);
    assert_eq!(u.child(0).data_type(), &DataType::Struct(Fields::empty()));
    // Option<Ev>: a null row is null in its variant's child (row 1).
    let o = b.column_by_name("opt").unwrap();
    let nulls = o.logical_nulls().unwrap();
    assert_eq!(
        (0..6).map(|i| nulls.is_valid(i)).collect::<Vec<_>>(),
        [true, false, true, true, false, true]
    );
    // Labels: keys index `variant_names`, values are the names.
    let level = b
        .column_by_name("level")
        .unwrap()
        .as_dictionary::<Int32Type>();
    assert_eq!(level.keys().values().to_vec(), [0, 1, 1, 0, 1, 1]);
    assert_eq!(
        level.values().as_string::<i32>().iter().collect::<Vec<_>>(),
        [Some("Low"), Some("High")]
    );
    // A range reads only its rows.
    let r = h5vec::arrow::read_range(&f, "v", 3..5).unwrap();
    let u = r.column_by_name("ev").unwrap().as_union();
    assert_eq!(u.type_ids().to_vec(), [3, 1]);
    assert_eq!(u.offsets().unwrap().to_vec(), [0, 0]);
    assert_eq!(
        u.child(1)
            .as_struct()
            .column(0)
            .as_primitive::<Float64Type>()
            .value(0),
        2.0
    );
}

#[test]
fn unions_and_labels_append_and_load_typed() {
    let f = mem_file();
    let rows: Vec<Tagged> = (0..30).map(tagged).collect();
    h5vec::save_vector(&f, "typed", &rows[..10]).unwrap();
    let more = {
        let g = mem_file();
        h5vec::save_vector(&g, "x", &rows[10..]).unwrap();
        read_vector(&g, "x").unwrap()
    };
    append_record_batch(&f, "typed", &more.slice(0, 7)).unwrap();
    h5vec::append_vector(&f, "typed", &rows[17..23]).unwrap();
    append_record_batch(&f, "typed", &more.slice(13, 7)).unwrap();
    assert_eq!(load_vector::<Tagged>(&f, "typed").unwrap(), rows);
}

#[test]
fn unions_and_labels_without_metadata() {
    // A dense union built by hand: type ids 0, 1, ... are the variants.
    let fields = UnionFields::try_new(
        vec![0, 1, 2, 3],
        vec![
            Field::new("Idle", DataType::Struct(Fields::empty()), false),
            Field::new(
                "Tick",
                DataType::Struct(vec![Field::new("1", DataType::Float64, false)].into()),
                false,
            ),
            Field::new(
                "Fill",
                DataType::Struct(
                    vec![
                        Field::new("qty", DataType::Int32, false),
                        Field::new("price", DataType::Float64, false),
                    ]
                    .into(),
                ),
                false,
            ),
            Field::new(
                "Note",
                DataType::Struct(
                    vec![
                        Field::new("1", DataType::Utf8, false),
                        Field::new(
                            "2",
                            DataType::new_large_list(DataType::UInt16, false),
                            false,
                        ),
                    ]
                    .into(),
                ),
                false,
            ),
        ],
    )
    .unwrap();
    let kids: Vec<ArrayRef> = vec![
        Arc::new(StructArray::new_empty_fields(1, None)),
        Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("1", DataType::Float64, false)),
            Arc::new(Float64Array::from(vec![0.5, 2.0])) as ArrayRef,
        )])),
        Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("qty", DataType::Int32, false)),
                Arc::new(Int32Array::from(vec![-5])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("price", DataType::Float64, false)),
                Arc::new(Float64Array::from(vec![2.5])) as ArrayRef,
            ),
        ])),
        Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("1", DataType::Utf8, false)),
                Arc::new(StringArray::from(vec!["n3"])) as ArrayRef,
            ),
            (
                Arc::new(Field::new(
                    "2",
                    DataType::new_large_list(DataType::UInt16, false),
                    false,
                )),
                Arc::new(LargeListArray::new(
                    Arc::new(Field::new("item", DataType::UInt16, false)),
                    OffsetBuffer::from_lengths([3]),
                    Arc::new(UInt16Array::from(vec![0, 1, 2])),
                    None,
                )) as ArrayRef,
            ),
        ])),
    ];
    let u = UnionArray::try_new(
        fields,
        vec![0i8, 1, 2, 3, 1].into(),
        Some(vec![0, 0, 0, 0, 1].into()),
        kids,
    )
    .unwrap();
    let b = RecordBatch::try_from_iter([("ev", Arc::new(u) as ArrayRef)]).unwrap();
    let f = mem_file();
    save_record_batch(&f, "v", &b, &SaveOptions::default()).unwrap();
    assert_eq!(
        load_vector::<WithEv>(&f, "v").unwrap(),
        (0..5).map(|i| WithEv { ev: ev(i) }).collect::<Vec<_>>()
    );
    // A sparse union is refused, naming the field.
    let sparse = UnionArray::try_new(
        UnionFields::try_new(
            vec![0],
            vec![Field::new("A", DataType::Struct(Fields::empty()), false)],
        )
        .unwrap(),
        vec![0i8].into(),
        None,
        vec![Arc::new(StructArray::new_empty_fields(1, None)) as ArrayRef],
    )
    .unwrap();
    let b = RecordBatch::try_from_iter([("u", Arc::new(sparse) as ArrayRef)]).unwrap();
    let e = save_record_batch(&f, "s", &b, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.u", "{e}");
}

#[test]
fn labels_that_are_not_stored_are_errors_naming_the_row() {
    let f = mem_file();
    let rows: Vec<Tagged> = (0..4).map(tagged).collect();
    h5vec::save_vector(&f, "v", &rows).unwrap();
    let b = read_vector(&f, "v").unwrap();
    // Writing: a dictionary value that is no label of the stored enum.
    let idx = b.schema().index_of("level").unwrap();
    let bad = DictionaryArray::<Int32Type>::try_new(
        Int32Array::from(vec![0, 1, 1, 0]),
        Arc::new(StringArray::from(vec!["Low", "Medium"])),
    )
    .unwrap();
    let mut cols = b.columns().to_vec();
    cols[idx] = Arc::new(bad);
    let bad_batch = RecordBatch::try_new(b.schema(), cols).unwrap();
    let e = save_record_batch(&f, "w", &bad_batch, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.level[1]", "{e}");
    assert!(
        e.to_string()
            .contains("\"Medium\" is not a label of the enum (Low, High)"),
        "{e}"
    );
    assert!(!f.link_exists("w"));
    // Reading: a stored code without a label.
    f.dataset("v/data/level/values")
        .unwrap()
        .write_raw(&[1u8, 200, 7, 1])
        .unwrap();
    let e = read_vector(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$.level[2]", "{e}");
    assert!(
        e.to_string()
            .contains("enum code 7 is not one of the stored labels (Low=1, High=200)"),
        "{e}"
    );
}
