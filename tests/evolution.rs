//! Reading a vector with another struct than the one that wrote it (SPEC.md
//! section 12): fields by name, aliases, defaults, extra fields, widened
//! numbers, and the errors for everything else.

use h5vec::hdf5::File;
use h5vec::{
    append_vector, load_range_with, load_vector, load_vector_with, save_vector, save_vector_with,
    H5Vector, LoadOptions, SaveOptions, VectorReader,
};
use h5vec_tests as common;

fn file() -> File {
    common::mem_file()
}

fn widen() -> LoadOptions {
    LoadOptions::default().widen_numbers(true)
}

fn extra() -> LoadOptions {
    LoadOptions::default().ignore_extra_fields(true)
}

/// The error's text after the field path and location.
#[track_caller]
fn found(e: &h5vec::Error) -> String {
    common::mismatch(e).1.to_owned()
}

// ---------------------------------------------------------------------------
// Added fields: defaults.

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct OrderV1 {
    id: u32,
    price: f64,
}

fn v1(n: u32) -> Vec<OrderV1> {
    (0..n)
        .map(|i| OrderV1 {
            id: i,
            price: f64::from(i) / 2.0,
        })
        .collect()
}

fn unknown() -> String {
    "unknown".into()
}

fn seven() -> u64 {
    7
}

#[derive(H5Vector, Debug, PartialEq)]
struct OrderV2 {
    id: u32,
    #[h5vec(default)]
    coupon: Option<String>,
    price: f64,
    #[h5vec(default = "unknown")]
    channel: String,
    #[h5vec(default = "seven", rename = "qty")]
    quantity: u64,
    #[h5vec(default)]
    tags: Vec<String>,
}

#[test]
fn added_fields_take_their_defaults() {
    let f = file();
    save_vector(&f, "v", &v1(3)).unwrap();
    let want: Vec<OrderV2> = (0..3)
        .map(|i| OrderV2 {
            id: i,
            coupon: None,
            price: f64::from(i) / 2.0,
            channel: "unknown".into(),
            quantity: 7,
            tags: vec![],
        })
        .collect();
    // No option is needed for defaults: plain load_vector uses them.
    assert_eq!(load_vector::<OrderV2>(&f, "v").unwrap(), want);
    assert_eq!(
        load_vector_with::<OrderV2>(&f, "v", &LoadOptions::default()).unwrap(),
        want
    );
    // A file that has the fields reads them, not the defaults.
    let full = [OrderV2 {
        id: 9,
        coupon: Some("C".into()),
        price: 1.5,
        channel: "web".into(),
        quantity: 2,
        tags: vec!["a".into()],
    }];
    save_vector(&f, "w", &full).unwrap();
    assert_eq!(load_vector::<OrderV2>(&f, "w").unwrap(), full);
    // The stored names are the fields' names (or rename), never aliases.
    let names = common::members(&f.group("w/data").unwrap());
    assert_eq!(names, ["channel", "coupon", "id", "price", "qty", "tags"]);
}

#[derive(H5Vector, Debug, PartialEq)]
struct OrderNoDefault {
    id: u32,
    price: f64,
    coupon: Option<String>,
}

/// An `Option` field is not `None` by itself: a missing column is more
/// often a renamed or misspelt field than a new one.
#[test]
fn option_field_without_default_is_an_error() {
    let f = file();
    save_vector(&f, "v", &v1(2)).unwrap();
    let e = load_vector::<OrderNoDefault>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$");
    assert_eq!(e.location(), Some("/v/data"));
    assert_eq!(
        common::mismatch(&e).0,
        "the fields of `evolution::OrderNoDefault`"
    );
    assert_eq!(
        found(&e),
        "missing field `coupon` (#[h5vec(default)] fills it in files without it)"
    );
}

// ---------------------------------------------------------------------------
// Removed fields: ignore_extra_fields.

#[derive(H5Vector, Debug, PartialEq)]
struct IdOnly {
    id: u32,
}

#[test]
fn removed_fields_need_ignore_extra_fields() {
    let f = file();
    save_vector(&f, "v", &v1(4)).unwrap();
    let e = load_vector::<IdOnly>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$");
    assert_eq!(
        found(&e),
        "extra stored field `price` (LoadOptions::ignore_extra_fields(true) skips it)"
    );
    let e = load_vector_with::<IdOnly>(&f, "v", &widen()).unwrap_err();
    assert_eq!(
        found(&e),
        "extra stored field `price` (LoadOptions::ignore_extra_fields(true) skips it)"
    );
    let back = load_vector_with::<IdOnly>(&f, "v", &extra()).unwrap();
    assert_eq!(back, (0..4).map(|id| IdOnly { id }).collect::<Vec<_>>());
}

/// Several differences at once: each listed, not the two field lists.
#[test]
fn differences_are_listed_one_by_one() {
    #[derive(H5Vector)]
    struct Stored {
        a: i32,
        b: String,
        c: f64,
        d: Vec<u8>,
    }
    #[derive(H5Vector, Debug)]
    struct Reader {
        a: i32,
        x: u16,
        y: f64,
    }
    let f = file();
    save_vector(
        &f,
        "v",
        &[Stored {
            a: 1,
            b: "b".into(),
            c: 2.0,
            d: vec![],
        }],
    )
    .unwrap();
    let e = load_vector::<Reader>(&f, "v").unwrap_err();
    assert_eq!(
        found(&e),
        "missing field `x` (#[h5vec(default)] fills it in files without it); \
         missing field `y`, and `c` stored with its type: did you mean \
         #[h5vec(alias = \"c\")] on `y`?; \
         extra stored fields `b`, `d` (LoadOptions::ignore_extra_fields(true) skips them)"
    );
    // With extra fields allowed, only what is missing remains.
    let e = load_vector_with::<Reader>(&f, "v", &extra()).unwrap_err();
    assert_eq!(
        found(&e),
        "missing field `x` (#[h5vec(default)] fills it in files without it); \
         missing field `y`, and `c` stored with its type: did you mean \
         #[h5vec(alias = \"c\")] on `y`?"
    );
}

// ---------------------------------------------------------------------------
// Renamed fields: aliases.

#[derive(H5Vector, Debug, PartialEq)]
struct Renamed {
    id: u32,
    #[h5vec(alias = "price")]
    cost: f64,
}

#[derive(H5Vector, Debug, PartialEq)]
struct TwoAliases {
    #[h5vec(alias = "ident", alias = "id")]
    key: u32,
    #[h5vec(alias = "cost", alias = "price", rename = "amount")]
    value: f64,
}

#[test]
fn renamed_fields_read_through_aliases() {
    let f = file();
    save_vector(&f, "v", &v1(3)).unwrap();
    let want: Vec<Renamed> = v1(3)
        .into_iter()
        .map(|o| Renamed {
            id: o.id,
            cost: o.price,
        })
        .collect();
    assert_eq!(load_vector::<Renamed>(&f, "v").unwrap(), want);
    // Either of several aliases; the second here.
    let two = load_vector::<TwoAliases>(&f, "v").unwrap();
    assert_eq!(
        two,
        v1(3)
            .into_iter()
            .map(|o| TwoAliases {
                key: o.id,
                value: o.price
            })
            .collect::<Vec<_>>()
    );
    // Saved, a field keeps its own stored name.
    save_vector(&f, "w", &two).unwrap();
    assert_eq!(
        common::members(&f.group("w/data").unwrap()),
        ["amount", "key"]
    );
    assert_eq!(load_vector::<TwoAliases>(&f, "w").unwrap(), two);
}

#[test]
fn two_stored_aliases_are_ambiguous() {
    #[derive(H5Vector)]
    struct Both {
        ident: u32,
        id: u32,
    }
    let f = file();
    save_vector(&f, "v", &[Both { ident: 1, id: 2 }]).unwrap();
    #[derive(H5Vector, Debug)]
    struct KeyOnly {
        #[h5vec(alias = "ident", alias = "id")]
        key: u32,
    }
    let e = load_vector_with::<KeyOnly>(&f, "v", &extra()).unwrap_err();
    assert_eq!(
        common::mismatch(&e),
        (
            "one stored field for `key`",
            "its aliases `ident` and `id` all stored"
        )
    );
}

/// The field's own name wins over its aliases; a stored alias beside it is
/// then an extra field.
#[test]
fn name_before_alias() {
    #[derive(H5Vector)]
    struct Both {
        price: f64,
        cost: f64,
    }
    let f = file();
    save_vector(
        &f,
        "v",
        &[Both {
            price: 1.0,
            cost: 2.0,
        }],
    )
    .unwrap();
    #[derive(H5Vector, Debug, PartialEq)]
    struct Cost {
        #[h5vec(alias = "price")]
        cost: f64,
    }
    let e = load_vector::<Cost>(&f, "v").unwrap_err();
    assert_eq!(
        found(&e),
        "extra stored field `price` (LoadOptions::ignore_extra_fields(true) skips it)"
    );
    assert_eq!(
        load_vector_with::<Cost>(&f, "v", &extra()).unwrap(),
        [Cost { cost: 2.0 }]
    );
}

// ---------------------------------------------------------------------------
// Reordered fields.

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Abc {
    a: i32,
    b: String,
    c: [f32; 2],
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Cab {
    c: [f32; 2],
    a: i32,
    b: String,
}

#[test]
fn fields_are_matched_by_name_in_any_order() {
    let f = file();
    let abc: Vec<Abc> = (0..5)
        .map(|i| Abc {
            a: i,
            b: format!("s{i}"),
            c: [i as f32, -(i as f32)],
        })
        .collect();
    save_vector(&f, "v", &abc).unwrap();
    let cab: Vec<Cab> = abc
        .iter()
        .map(|x| Cab {
            c: x.c,
            a: x.a,
            b: x.b.clone(),
        })
        .collect();
    assert_eq!(load_vector::<Cab>(&f, "v").unwrap(), cab);
    // Appends match by name too (the stored order stays).
    append_vector(&f, "v", &cab[..2]).unwrap();
    let mut want = abc.clone();
    want.extend_from_slice(&abc[..2]);
    assert_eq!(load_vector::<Abc>(&f, "v").unwrap(), want);
}

#[test]
fn appends_need_exactly_the_stored_fields() {
    let f = file();
    save_vector(&f, "v", &v1(2)).unwrap();
    let e = append_vector(&f, "v", &[IdOnly { id: 1 }]).unwrap_err();
    assert_eq!(
        common::mismatch(&e),
        (
            "the fields of `evolution::IdOnly` (an append needs exactly the stored fields: \
             no defaults, aliases or extra fields)",
            "extra stored field `price`"
        )
    );
    let row = OrderV2 {
        id: 1,
        coupon: None,
        price: 0.0,
        channel: String::new(),
        quantity: 0,
        tags: vec![],
    };
    let e = append_vector(&f, "v", &[row]).unwrap_err();
    assert_eq!(
        found(&e),
        "missing fields `coupon`, `channel`, `qty`, `tags`"
    );
    let e = append_vector(&f, "v", &[Renamed { id: 1, cost: 1.0 }]).unwrap_err();
    assert_eq!(
        found(&e),
        "missing field `cost`; extra stored field `price`"
    );
    assert_eq!(load_vector::<OrderV1>(&f, "v").unwrap(), v1(2));
}

// ---------------------------------------------------------------------------
// Widening numbers.

/// Saves `values` as `S`, loads them as `T` with widening (and checks that
/// without it the load is refused, naming both types), and compares with
/// `T::from` of each value, bit for bit.
fn widened<S, T>(values: &[S], bits: impl Fn(&T) -> u64)
where
    S: H5Vector + Copy,
    T: H5Vector + From<S> + std::fmt::Debug,
{
    let f = file();
    save_vector(&f, "v", values).unwrap();
    let got: Vec<T> = load_vector_with(&f, "v", &widen()).unwrap();
    let want: Vec<T> = values.iter().map(|&s| T::from(s)).collect();
    assert_eq!(
        got.iter().map(&bits).collect::<Vec<_>>(),
        want.iter().map(&bits).collect::<Vec<_>>(),
        "{} -> {}",
        std::any::type_name::<S>(),
        std::any::type_name::<T>()
    );
    let e = load_vector::<T>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$");
    let (expected, found) = common::mismatch(&e);
    assert!(expected.starts_with("encoded type `"), "{e}");
    assert!(
        found.ends_with("without loss)") && found.contains("LoadOptions::widen_numbers(true)"),
        "{e}"
    );
}

macro_rules! int_pairs {
    ($($s:ty => [$($t:ty),*]);* $(;)?) => {$($(
        widened::<$s, $t>(&[<$s>::MIN, <$s>::MAX, 0, 1, <$s>::MAX / 3], |v| *v as u64);
    )*)*};
}

macro_rules! int_to_f64 {
    ($($s:ty),*) => {$(
        widened::<$s, f64>(&[<$s>::MIN, <$s>::MAX, 0, 1, <$s>::MAX / 3], |v| v.to_bits());
    )*};
}

#[test]
fn every_allowed_widening_is_exact() {
    int_pairs! {
        i8 => [i16, i32, i64];
        i16 => [i32, i64];
        i32 => [i64];
        u8 => [u16, u32, u64, i16, i32, i64];
        u16 => [u32, u64, i32, i64];
        u32 => [u64, i64];
    }
    int_to_f64!(i8, i16, i32, u8, u16, u32);
    let floats = [
        0.0f32,
        -0.0,
        1.5,
        f32::MIN,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),           // smallest subnormal
        f32::from_bits(0x007f_ffff), // largest subnormal
        -f32::from_bits(0x0000_1234),
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(0x7fc0_1234), // quiet NaN with a payload
        f32::from_bits(0xffc0_0001), // negative quiet NaN with a payload
    ];
    widened::<f32, f64>(&floats, |v| v.to_bits());
}

#[test]
fn extremes_widen_to_their_values() {
    let f = file();
    save_vector(&f, "i", &[i32::MIN, i32::MAX]).unwrap();
    assert_eq!(
        load_vector_with::<i64>(&f, "i", &widen()).unwrap(),
        [-2147483648i64, 2147483647]
    );
    save_vector(&f, "u", &[u32::MAX]).unwrap();
    assert_eq!(
        load_vector_with::<i64>(&f, "u", &widen()).unwrap(),
        [4294967295i64]
    );
    save_vector(&f, "n", &[f32::from_bits(0x7fc0_1234)]).unwrap();
    let nan = load_vector_with::<f64>(&f, "n", &widen()).unwrap()[0];
    assert!(nan.is_nan());
    // The payload moves to the top of the f64 significand, as `as f64` puts it.
    assert_eq!(nan.to_bits(), 0x7ff8_0246_8000_0000);
    save_vector(&f, "s", &[f32::from_bits(1)]).unwrap();
    let sub = load_vector_with::<f64>(&f, "s", &widen()).unwrap()[0];
    assert_eq!(sub, 2f64.powi(-149));
}

/// Saves `values` as `S` and checks that a widening load as `T` is refused
/// with an error naming the path and both types.
fn refused<S: H5Vector, T: H5Vector + std::fmt::Debug>(values: &[S], from: &str, to: &str) {
    let f = file();
    save_vector(&f, "v", values).unwrap();
    let e = load_vector_with::<T>(&f, "v", &widen()).unwrap_err();
    assert_eq!(e.path(), "$");
    assert_eq!(
        common::mismatch(&e),
        (
            format!("encoded type `{to}`").as_str(),
            format!(
                "`{from}`, which `{to}` cannot hold exactly (widen_numbers allows only lossless promotions)"
            )
            .as_str()
        )
    );
}

#[test]
fn lossy_conversions_are_refused() {
    refused::<i64, f64>(&[1], "Int64", "Float64");
    refused::<u64, i64>(&[1], "UInt64", "Int64");
    refused::<i8, u8>(&[1], "Int8", "UInt8");
    refused::<f64, f32>(&[1.0], "Float64", "Float32");
    refused::<u64, f64>(&[1], "UInt64", "Float64");
    refused::<i32, u64>(&[1], "Int32", "UInt64");
    refused::<i16, i8>(&[1], "Int16", "Int8");
    refused::<f32, i64>(&[1.0], "Float32", "Int64");
}

#[test]
fn non_numbers_do_not_widen() {
    let f = file();
    save_vector(&f, "c", &['a']).unwrap();
    let e = load_vector_with::<i64>(&f, "c", &widen()).unwrap_err();
    assert_eq!(
        common::mismatch(&e),
        (
            "codec `HDF5Vectors.IdentityCodec`",
            "`HDF5Vectors.CharCodec`"
        )
    );
    save_vector(&f, "b", &[true]).unwrap();
    let e = load_vector_with::<u16>(&f, "b", &widen()).unwrap_err();
    assert_eq!(common::mismatch(&e), ("encoded type `UInt16`", "`Bool`"));
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    x: i16,
    label: String,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Outer {
    inner: Inner,
    list: Vec<i32>,
    maybe: Option<f32>,
    arr: [u16; 3],
    arrs: Vec<[f32; 2]>,
    maybe_list: Option<Vec<u8>>,
    records: Vec<Inner>,
    nested: Vec<Vec<u32>>,
}

#[derive(H5Vector, Debug, PartialEq)]
struct InnerWide {
    x: i64,
}

#[derive(H5Vector, Debug, PartialEq)]
struct OuterWide {
    nested: Vec<Vec<u64>>,
    list: Vec<i64>,
    maybe: Option<f64>,
    arr: [i32; 3],
    arrs: Vec<[f64; 2]>,
    maybe_list: Option<Vec<i16>>,
    inner: InnerWide,
    records: Vec<InnerWide>,
    #[h5vec(default)]
    added: Option<Vec<String>>,
}

#[test]
fn widening_and_extra_fields_apply_at_every_depth() {
    let rows: Vec<Outer> = (0..6)
        .map(|i| Outer {
            inner: Inner {
                x: i16::MIN + i,
                label: format!("l{i}"),
            },
            list: vec![i32::MIN, i.into(), i32::MAX],
            maybe: (i % 2 == 0).then_some(f32::from(i) + 0.25),
            arr: [u16::MAX, i as u16, 0],
            arrs: vec![[f32::MIN_POSITIVE, f32::from(i)]; i as usize],
            maybe_list: (i % 3 != 0).then(|| vec![u8::MAX, i as u8]),
            records: vec![
                Inner {
                    x: -i,
                    label: String::new()
                };
                (i % 2) as usize
            ],
            nested: vec![vec![u32::MAX; i as usize], vec![]],
        })
        .collect();
    let f = file();
    save_vector(&f, "v", &rows).unwrap();
    let want: Vec<OuterWide> = rows
        .iter()
        .map(|r| OuterWide {
            nested: r
                .nested
                .iter()
                .map(|v| v.iter().map(|&x| u64::from(x)).collect())
                .collect(),
            list: r.list.iter().map(|&x| i64::from(x)).collect(),
            maybe: r.maybe.map(f64::from),
            arr: r.arr.map(i32::from),
            arrs: r.arrs.iter().map(|a| a.map(f64::from)).collect(),
            maybe_list: r
                .maybe_list
                .as_ref()
                .map(|v| v.iter().map(|&x| i16::from(x)).collect()),
            inner: InnerWide {
                x: r.inner.x.into(),
            },
            records: r
                .records
                .iter()
                .map(|x| InnerWide { x: x.x.into() })
                .collect(),
            added: None,
        })
        .collect();
    let both = LoadOptions::default()
        .widen_numbers(true)
        .ignore_extra_fields(true);
    assert_eq!(load_vector_with::<OuterWide>(&f, "v", &both).unwrap(), want);
    // Each option alone is not enough; the errors name the nested field.
    let e = load_vector_with::<OuterWide>(&f, "v", &widen()).unwrap_err();
    assert_eq!(e.path(), "$.inner");
    assert_eq!(
        found(&e),
        "extra stored field `label` (LoadOptions::ignore_extra_fields(true) skips it)"
    );
    let e = load_vector_with::<OuterWide>(&f, "v", &extra()).unwrap_err();
    assert_eq!(e.path(), "$.nested[][]");
    assert_eq!(
        common::mismatch(&e),
        (
            "encoded type `UInt64`",
            "`UInt32` (LoadOptions::widen_numbers(true) reads it as `UInt64` without loss)"
        )
    );
    // Ranges and streams read the same way.
    assert_eq!(
        load_range_with::<OuterWide>(&f, "v", 2..5, &both).unwrap(),
        want[2..5]
    );
    let mut streamed = Vec::new();
    for batch in VectorReader::<OuterWide>::open_with(&f, "v", 4, &both).unwrap() {
        streamed.extend(batch.unwrap());
    }
    assert_eq!(streamed, want);
    let mut ranged = Vec::new();
    for batch in VectorReader::<OuterWide>::open_range_with(&f, "v", 1..6, 2, &both).unwrap() {
        ranged.extend(batch.unwrap());
    }
    assert_eq!(ranged, want[1..]);
    // Without options the reader refuses as the load does.
    assert!(VectorReader::<OuterWide>::open(&f, "v", 4).is_err());
}

#[test]
fn records_in_lists_take_defaults_and_aliases() {
    #[derive(H5Vector, Debug, PartialEq)]
    struct Item {
        #[h5vec(alias = "x")]
        renamed: i16,
        #[h5vec(default = "unknown")]
        note: String,
    }
    let f = file();
    let rows = vec![
        vec![
            Inner {
                x: 1,
                label: "a".into(),
            },
            Inner {
                x: 2,
                label: "b".into(),
            },
        ],
        vec![],
    ];
    save_vector(&f, "v", &rows).unwrap();
    let back = load_vector_with::<Vec<Item>>(&f, "v", &extra()).unwrap();
    assert_eq!(
        back,
        [
            vec![
                Item {
                    renamed: 1,
                    note: "unknown".into()
                },
                Item {
                    renamed: 2,
                    note: "unknown".into()
                }
            ],
            vec![]
        ]
    );
    let e = load_vector::<Vec<Item>>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$[]");
    assert_eq!(
        found(&e),
        "extra stored field `label` (LoadOptions::ignore_extra_fields(true) skips it)"
    );
}

// ---------------------------------------------------------------------------
// Columns a load skips are not read.

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithJunk {
    id: u32,
    #[h5vec(deflate = 4, chunk_length = 4)]
    junk: u64,
}

/// Overwrites the first stored chunk of `ds` (deflate-compressed) with
/// bytes that are not a deflate stream: reading it fails.
fn damage_first_chunk(ds: &h5vec::hdf5::Dataset) {
    use hdf5_sys::{h5d, h5p};
    let garbage = [0xffu8; 16];
    // SAFETY: a valid chunked dataset; the buffer is as long as passed.
    let r = h5vec::hdf5::sync::sync(|| unsafe {
        h5d::H5Dwrite_chunk(
            ds.id(),
            h5p::H5P_DEFAULT,
            0,
            [0u64].as_ptr(),
            garbage.len(),
            garbage.as_ptr().cast(),
        )
    });
    assert!(r >= 0);
}

#[test]
fn skipped_columns_are_not_read() {
    let f = file();
    let rows: Vec<WithJunk> = (0..10)
        .map(|i| WithJunk {
            id: i,
            junk: u64::from(i) * 3,
        })
        .collect();
    save_vector(&f, "v", &rows).unwrap();
    damage_first_chunk(&f.dataset("v/data/junk/values").unwrap());
    // The whole struct hits the damaged chunk ...
    let e = load_vector::<WithJunk>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$.junk");
    // ... a struct without the field never touches it.
    let want: Vec<IdOnly> = (0..10).map(|id| IdOnly { id }).collect();
    assert_eq!(load_vector_with::<IdOnly>(&f, "v", &extra()).unwrap(), want);
    assert_eq!(
        load_range_with::<IdOnly>(&f, "v", 0..3, &extra()).unwrap(),
        want[..3]
    );
    // Not even opened: a column of another type and too few rows.
    f.unlink("v/data/junk/values").unwrap();
    f.group("v/data/junk")
        .unwrap()
        .new_dataset::<u8>()
        .shape(1)
        .create("values")
        .unwrap();
    assert_eq!(load_vector_with::<IdOnly>(&f, "v", &extra()).unwrap(), want);
    assert!(load_vector::<WithJunk>(&f, "v").is_err());
    // A field filled by its default reads nothing either (there is no column).
    #[derive(H5Vector, Debug, PartialEq)]
    struct IdAndMore {
        id: u32,
        #[h5vec(default)]
        more: Vec<u8>,
    }
    assert_eq!(
        load_vector_with::<IdAndMore>(&f, "v", &extra()).unwrap()[9],
        IdAndMore {
            id: 9,
            more: vec![]
        }
    );
}

#[test]
fn widening_reads_compressed_and_chunked_columns() {
    let f = file();
    let xs: Vec<u16> = (0..50_000u32).map(|i| (i * 7 % 65_536) as u16).collect();
    save_vector_with(
        &f,
        "v",
        &xs,
        &SaveOptions::default().deflate(4).chunk_length(1000),
    )
    .unwrap();
    let back: Vec<u64> = load_vector_with(&f, "v", &widen()).unwrap();
    assert_eq!(back, xs.iter().map(|&x| u64::from(x)).collect::<Vec<_>>());
    let part: Vec<f64> = load_range_with(&f, "v", 999..2001, &widen()).unwrap();
    assert_eq!(
        part,
        xs[999..2001]
            .iter()
            .map(|&x| f64::from(x))
            .collect::<Vec<_>>()
    );
}

#[test]
fn missing_list_elements_stay_missing_when_widened() {
    let f = file();
    let rows = vec![
        vec![Some(i32::MIN + 2), None, Some(i32::MAX)],
        vec![None],
        vec![],
    ];
    save_vector(&f, "i", &rows).unwrap();
    let back: Vec<Vec<Option<i64>>> = load_vector_with(&f, "i", &widen()).unwrap();
    let want: Vec<Vec<Option<i64>>> = rows
        .iter()
        .map(|r| r.iter().map(|x| x.map(i64::from)).collect())
        .collect();
    assert_eq!(back, want);
    let floats = vec![vec![Some(1.5f32), None, Some(f32::MIN_POSITIVE)]];
    save_vector(&f, "f", &floats).unwrap();
    let back: Vec<Vec<Option<f64>>> = load_vector_with(&f, "f", &widen()).unwrap();
    assert_eq!(
        back,
        [vec![Some(1.5f64), None, Some(f64::from(f32::MIN_POSITIVE))]]
    );
    let e = load_vector::<Vec<Option<i64>>>(&f, "i").unwrap_err();
    assert_eq!(e.path(), "$[]");
    let e = load_vector_with::<Vec<Option<u64>>>(&f, "i", &widen()).unwrap_err();
    assert_eq!(
        common::mismatch(&e).1,
        "`Int32`, which `UInt64` cannot hold exactly (widen_numbers allows only lossless promotions)"
    );
}

// ---------------------------------------------------------------------------
// load_column of serde fields; two levels of Option.

#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
struct Meta {
    source: String,
    level: Option<u8>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithSerde {
    id: u32,
    #[h5vec(json)]
    meta: Meta,
    #[h5vec(blob)]
    extra: Vec<(String, f64)>,
    nested: Nested,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Nested {
    #[h5vec(json)]
    doc: Option<Meta>,
}

#[test]
fn load_column_reads_json_and_blob_fields() {
    use h5vec::{load_column, Blob, Json};
    let rows: Vec<WithSerde> = (0..4u8)
        .map(|i| WithSerde {
            id: i.into(),
            meta: Meta {
                source: format!("s{i}"),
                level: (i % 2 == 0).then_some(i),
            },
            extra: vec![(i.to_string(), f64::from(i) / 3.0)],
            nested: Nested {
                doc: (i == 1).then(|| Meta {
                    source: "n".into(),
                    level: None,
                }),
            },
        })
        .collect();
    let f = file();
    save_vector(&f, "v", &rows).unwrap();
    let metas: Vec<Json<Meta>> = load_column(&f, "v", "meta").unwrap();
    assert_eq!(
        metas,
        rows.iter()
            .map(|r| Json(r.meta.clone()))
            .collect::<Vec<_>>()
    );
    let values: Vec<Json<serde_json::Value>> = load_column(&f, "v", "meta").unwrap();
    assert_eq!(values[2].0, serde_json::json!({"source": "s2", "level": 2}));
    let extras: Vec<Blob<Vec<(String, f64)>>> = load_column(&f, "v", "extra").unwrap();
    assert_eq!(
        extras,
        rows.iter()
            .map(|r| Blob(r.extra.clone()))
            .collect::<Vec<_>>()
    );
    let docs: Vec<Json<Option<Meta>>> = load_column(&f, "v", "nested.doc").unwrap();
    assert_eq!(
        docs,
        rows.iter()
            .map(|r| Json(r.nested.doc.clone()))
            .collect::<Vec<_>>()
    );
    // A JSON column is not a blob column, nor a string column.
    let e = load_column::<Blob<Meta>>(&f, "v", "meta").unwrap_err();
    assert_eq!(e.path(), "$.meta");
    let e = load_column::<Json<Meta>>(&f, "v", "extra").unwrap_err();
    assert_eq!(e.path(), "$.extra");
    // Json and Blob are vector and field types of their own, in the same layout.
    save_vector(&f, "j", &metas).unwrap();
    assert_eq!(load_vector::<Json<Meta>>(&f, "j").unwrap(), metas);
    assert_eq!(
        h5vec::inspect(&f, "j").unwrap().schema.unwrap().codec,
        "HDF5Vectors.JSONCodec"
    );
}

/// `Option<Option<T>>` does not compile (tests/derive-ui/ui/fail_option_option.rs);
/// a struct around the inner option keeps both levels, one MASK each.
#[test]
fn two_levels_of_option_through_a_struct() {
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct Inner {
        value: Option<i32>,
    }
    let rows = vec![
        None,
        Some(Inner { value: None }),
        Some(Inner { value: Some(-3) }),
    ];
    common::check_roundtrip(&rows);
}

#[derive(H5Vector, Debug, PartialEq)]
struct PriceText {
    id: u32,
    price: f64,
    label: String,
    note: String,
}

#[derive(H5Vector, Debug, PartialEq)]
struct PriceInt {
    id: u32,
    price: i64,
    qty: u16,
    missing_too: u8,
}

#[test]
fn missing_fields_and_type_changes_come_before_extra_fields_each_hint_once() {
    let (_d, f) = common::h5vec_file();
    let row = PriceText {
        id: 1,
        price: 2.5,
        label: "x".into(),
        note: "n".into(),
    };
    save_vector(&f, "v", &[row]).unwrap();
    let e = load_vector::<PriceInt>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$");
    assert_eq!(
        found(&e),
        "missing fields `qty`, `missing_too` (#[h5vec(default)] fills them in files without them); \
         $.price: expected encoded type `Int64`, found `Float64`; \
         extra stored fields `label`, `note` (LoadOptions::ignore_extra_fields(true) skips them)"
    );
}

/// Written with narrow numbers inside an enum's variants and a map.
#[derive(H5Vector, Debug, Clone, PartialEq)]
enum EventV1 {
    Tick(u16),
    Move { dx: i8, dy: i8 },
    Quit,
}

#[derive(H5Vector, Debug, PartialEq)]
struct LogV1 {
    event: EventV1,
    counts: std::collections::BTreeMap<String, u16>,
    maybe: Option<EventV1>,
}

/// The same names, wider numbers.
#[derive(H5Vector, Debug, PartialEq)]
enum EventV2 {
    Tick(u64),
    Move { dx: i32, dy: i64 },
    Quit,
}

#[derive(H5Vector, Debug, PartialEq)]
struct LogV2 {
    event: EventV2,
    counts: std::collections::BTreeMap<String, u32>,
    maybe: Option<EventV2>,
}

fn wide(e: &EventV1) -> EventV2 {
    match *e {
        EventV1::Tick(t) => EventV2::Tick(t.into()),
        EventV1::Move { dx, dy } => EventV2::Move {
            dx: dx.into(),
            dy: dy.into(),
        },
        EventV1::Quit => EventV2::Quit,
    }
}

/// The load's options reach the numbers inside a union's variants (also
/// the variants a later batch opens again for more rows), a map's values
/// and an optional union.
#[test]
fn widening_reaches_union_variants_and_map_values() {
    let rows: Vec<LogV1> = (0..50u16)
        .map(|i| LogV1 {
            event: match i % 3 {
                0 => EventV1::Tick(u16::MAX - i),
                1 => EventV1::Move {
                    dx: i8::MIN + i as i8,
                    dy: -(i as i8),
                },
                _ => EventV1::Quit,
            },
            counts: (0..i % 4)
                .map(|k| (format!("k{k}"), u16::MAX - k))
                .collect(),
            maybe: (i % 2 == 0).then_some(EventV1::Tick(i)),
        })
        .collect();
    let f = file();
    save_vector(&f, "log", &rows).unwrap();
    let want: Vec<LogV2> = rows
        .iter()
        .map(|r| LogV2 {
            event: wide(&r.event),
            counts: r
                .counts
                .iter()
                .map(|(k, &v)| (k.clone(), v.into()))
                .collect(),
            maybe: r.maybe.as_ref().map(wide),
        })
        .collect();
    // Without widening: an error naming a number inside a variant.
    let e = load_vector::<LogV2>(&f, "log").unwrap_err();
    assert!(found(&e).contains("widen_numbers(true)"), "{e}");
    assert_eq!(
        load_vector_with::<LogV2>(&f, "log", &widen()).unwrap(),
        want
    );
    // In batches of 7 rows: each batch opens the variants again for more rows.
    let mut r = VectorReader::<LogV2>::open_with(&f, "log", 7, &widen()).unwrap();
    let mut got = Vec::new();
    for b in &mut r {
        got.extend(b.unwrap());
    }
    assert_eq!(got, want);
    assert_eq!(
        load_range_with::<LogV2>(&f, "log", 10..30, &widen()).unwrap(),
        want[10..30]
    );
}
