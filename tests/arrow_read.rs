//! `h5vec::arrow`'s reader: every kind a typed save writes reads back
//! without its type as the Arrow type, nullability, metadata and values of
//! SPEC.md section 11; ranges and batches are slices of the whole; h5col
//! and VLS golden files read with their exact values; damaged files are
//! errors naming the path.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, FixedSizeListBuilder, Int32Builder, LargeListBuilder, LargeStringBuilder,
    StringBuilder, UInt16Builder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::*;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, Fields};
use h5vec::arrow::{batches, batches_columns, read_range, read_schema, read_vector};
use h5vec::hdf5::File;
use h5vec::{H5Vector, SaveOptions};
use h5vec_tests::{mem_file, overwrite_rows, write_attr_ascii};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------
// Helpers.

/// `ty` with every field's metadata dropped (the values' comparison).
fn plain_type(ty: &DataType) -> DataType {
    let pf = |f: &Arc<Field>| {
        Arc::new(Field::new(
            f.name(),
            plain_type(f.data_type()),
            f.is_nullable(),
        ))
    };
    match ty {
        DataType::LargeList(f) => DataType::LargeList(pf(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(pf(f), *n),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(pf).collect::<Fields>()),
        t => t.clone(),
    }
}

fn retype(d: ArrayData, ty: &DataType) -> ArrayData {
    let kids: Vec<DataType> = match ty {
        DataType::LargeList(f) | DataType::FixedSizeList(f, _) => vec![f.data_type().clone()],
        DataType::Struct(fs) => fs.iter().map(|f| f.data_type().clone()).collect(),
        _ => vec![],
    };
    let children: Vec<ArrayData> = d
        .child_data()
        .iter()
        .zip(&kids)
        .map(|(c, t)| retype(c.clone(), t))
        .collect();
    let b = d.into_builder().data_type(ty.clone());
    let b = if kids.is_empty() {
        b
    } else {
        b.child_data(children)
    };
    b.build().unwrap()
}

/// The array with its field metadata dropped.
fn plain(a: &dyn Array) -> ArrayRef {
    make_array(retype(a.to_data(), &plain_type(a.data_type())))
}

fn assert_same(got: &dyn Array, want: &dyn Array, what: &str) {
    assert_eq!(
        plain_type(got.data_type()),
        plain_type(want.data_type()),
        "{what}: type"
    );
    assert_eq!(&*plain(got), &*plain(want), "{what}: values");
}

/// The stored root node, as `metadata/serialized_schema` holds it.
fn stored_json(f: &File, name: &str) -> String {
    let ds = f
        .dataset(&format!("{name}/metadata/serialized_schema"))
        .unwrap();
    String::from_utf8(ds.read_raw::<u8>().unwrap()).unwrap()
}

/// Saves `values` (with `opts`), reads them untyped, checks the batch schema
/// metadata, then ranges and batches; returns the batch.
fn save_read<T: H5Vector>(values: &[T], opts: &SaveOptions) -> (File, RecordBatch) {
    let f = mem_file();
    h5vec::save_vector_with(&f, "v", values, opts).unwrap();
    let b = read_vector(&f, "v").unwrap();
    assert_eq!(b.num_rows(), values.len());
    let json = stored_json(&f, "v");
    let schema = b.schema();
    assert_eq!(schema.metadata()["h5vec.schema"], json);
    let root: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        schema.metadata()["h5vec.root"],
        root["kind"].as_str().unwrap()
    );
    assert_eq!(read_schema(&f, "v").unwrap(), schema);
    check_slices(&f, "v", &b);
    (f, b)
}

/// Ranges and batches of 1, 7 and all rows equal slices of the whole.
fn check_slices(f: &File, name: &str, whole: &RecordBatch) {
    let n = whole.num_rows();
    for (a, b) in [(0, n), (0, n.min(1)), (n / 3, n - n / 4), (n, n)] {
        let r = read_range(f, name, a as u64..b as u64).unwrap();
        assert_eq!(r, whole.slice(a, b - a), "rows {a}..{b}");
    }
    assert!(read_range(f, name, 0..n as u64 + 1).is_err());
    for size in [1, 7, n.max(1)] {
        let it = batches(f, name, size).unwrap();
        assert_eq!((it.rows(), it.remaining()), (n as u64, n as u64));
        assert_eq!(it.schema(), whole.schema());
        let mut start = 0;
        for b in it {
            let b = b.unwrap();
            assert_eq!(
                b,
                whole.slice(start, b.num_rows()),
                "batch at {start} of {size}"
            );
            start += b.num_rows();
            assert!(b.num_rows() == size || start == n);
        }
        assert_eq!(start, n);
    }
    assert!(batches(f, name, 0).is_err());
}

/// A vector of a non-record type: one column `value` of the wanted array,
/// nullability and field metadata (its node is the root).
fn check_value<T: H5Vector>(values: &[T], want: ArrayRef, nullable: bool) {
    check_value_with(values, want, nullable, &SaveOptions::default())
}

fn check_value_with<T: H5Vector>(values: &[T], want: ArrayRef, nullable: bool, o: &SaveOptions) {
    let (f, b) = save_read(values, o);
    let schema = b.schema();
    assert_eq!(schema.fields().len(), 1);
    let field = schema.field(0);
    assert_eq!(field.name(), "value");
    assert_eq!(
        field.is_nullable(),
        nullable,
        "{}",
        std::any::type_name::<T>()
    );
    let json = stored_json(&f, "v");
    assert_eq!(field.metadata()["h5vec.schema"], json);
    let node: serde_json::Value = serde_json::from_str(&json).unwrap();
    let described = if node["kind"] == "nullable" {
        &node["children"][0]
    } else {
        &node
    };
    assert_eq!(
        field.metadata()["h5vec.kind"],
        described["kind"].as_str().unwrap()
    );
    assert_eq!(
        field.metadata()["h5vec.codec"],
        described["codec"].as_str().unwrap()
    );
    assert_eq!(
        field
            .metadata()
            .get("h5vec.encoded_type")
            .map(String::as_str),
        described["encoded_type"].as_str()
    );
    assert_same(
        b.column(0).as_ref(),
        want.as_ref(),
        std::any::type_name::<T>(),
    );
    assert_eq!(plain_type(field.data_type()), plain_type(want.data_type()));
}

fn large_strings<'a>(v: impl IntoIterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<LargeStringArray>())
}

// ---------------------------------------------------------------------------
// Scalars.

#[test]
fn numbers_of_every_width() {
    check_value(
        &[i8::MIN, 0, i8::MAX],
        Arc::new(Int8Array::from(vec![i8::MIN, 0, i8::MAX])),
        false,
    );
    check_value(
        &[i16::MIN, 7],
        Arc::new(Int16Array::from(vec![i16::MIN, 7])),
        false,
    );
    check_value(
        &[i32::MIN, -1, i32::MAX],
        Arc::new(Int32Array::from(vec![i32::MIN, -1, i32::MAX])),
        false,
    );
    check_value(
        &[i64::MIN, i64::MAX],
        Arc::new(Int64Array::from(vec![i64::MIN, i64::MAX])),
        false,
    );
    check_value(
        &[0u8, 255],
        Arc::new(UInt8Array::from(vec![0u8, 255])),
        false,
    );
    check_value(
        &[u16::MAX],
        Arc::new(UInt16Array::from(vec![u16::MAX])),
        false,
    );
    check_value(
        &[u32::MAX, 3],
        Arc::new(UInt32Array::from(vec![u32::MAX, 3])),
        false,
    );
    check_value(
        &[u64::MAX, 0],
        Arc::new(UInt64Array::from(vec![u64::MAX, 0])),
        false,
    );
    let f32s = [1.5f32, -0.0, f32::MAX, f32::from_bits(1), f32::INFINITY];
    check_value(&f32s, Arc::new(Float32Array::from(f32s.to_vec())), false);
    let f64s = [0.1f64, -0.0, f64::MIN_POSITIVE, f64::NEG_INFINITY];
    check_value(&f64s, Arc::new(Float64Array::from(f64s.to_vec())), false);
    // Bit for bit, NaN payload and -0.0 included.
    let nan = f64::from_bits(0x7ff8_0000_0000_0123);
    let (_f, b) = save_read(&[nan, -0.0], &SaveOptions::default());
    let col = b.column(0).as_primitive::<Float64Type>();
    assert_eq!(col.values()[0].to_bits(), nan.to_bits());
    assert_eq!(col.values()[1].to_bits(), (-0.0f64).to_bits());
    // Empty vectors.
    check_value::<u32>(&[], Arc::new(UInt32Array::from(Vec::<u32>::new())), false);
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Color {
    Red = 1,
    Green = 2,
    Blue = 200,
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
enum Level {
    Lowest = i32::MIN,
    Zero = 0,
}

/// A labelled enum's Arrow array: `keys` into `names`.
fn labels(keys: &[i32], names: &[&str]) -> DictionaryArray<Int32Type> {
    DictionaryArray::try_new(
        Int32Array::from(keys.to_vec()),
        Arc::new(StringArray::from(names.to_vec())),
    )
    .unwrap()
}

#[test]
fn bool_char_string_enum() {
    check_value(
        &[true, false, true],
        Arc::new(BooleanArray::from(vec![true, false, true])),
        false,
    );
    let chars = ['a', 'é', '日', '🎉', '\0'];
    let want: StringArray = chars.iter().map(|c| Some(c.to_string())).collect();
    check_value(&chars, Arc::new(want), false);
    let strings = ["", "héllo", "日本語 🎉", "tab\there"].map(String::from);
    check_value(
        &strings,
        large_strings(strings.iter().map(|s| Some(s.as_str()))),
        false,
    );
    // Labelled enums: keys are positions in `variant_names` (SPEC.md section 11).
    check_value(
        &[Color::Red, Color::Blue, Color::Green],
        Arc::new(labels(&[0, 2, 1], &["Red", "Green", "Blue"])),
        false,
    );
    check_value(
        &[Level::Lowest, Level::Zero],
        Arc::new(labels(&[0, 1], &["Lowest", "Zero"])),
        false,
    );
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Settings {
    gain: f64,
    names: Vec<String>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithJsonBlob {
    #[h5vec(json)]
    settings: Settings,
    #[h5vec(blob)]
    raw: Vec<u16>,
}

#[test]
fn json_and_blob() {
    let rows = [
        WithJsonBlob {
            settings: Settings {
                gain: 0.5,
                names: vec!["a".into()],
            },
            raw: vec![1, 300],
        },
        WithJsonBlob {
            settings: Settings {
                gain: -1.0,
                names: vec![],
            },
            raw: vec![],
        },
    ];
    let (f, b) = save_read(&rows, &SaveOptions::default());
    let schema = b.schema();
    let js = schema.field(0);
    assert_eq!(js.data_type(), &DataType::LargeUtf8);
    assert_eq!(js.metadata()["ARROW:extension:name"], "arrow.json");
    assert_eq!(js.metadata()["h5vec.codec"], "HDF5Vectors.JSONCodec");
    let texts: Vec<String> = rows
        .iter()
        .map(|r| serde_json::to_string(&r.settings).unwrap())
        .collect();
    assert_same(
        b.column(0).as_ref(),
        large_strings(texts.iter().map(|s| Some(s.as_str()))).as_ref(),
        "json",
    );
    // Blob bytes are the stored encodings, unchanged.
    let bytes = f
        .dataset("v/data/raw/bytes")
        .unwrap()
        .read_raw::<u8>()
        .unwrap();
    let stops = f
        .dataset("v/data/raw/stops")
        .unwrap()
        .read_raw::<i64>()
        .unwrap();
    let bin = b.column(1).as_binary::<i64>();
    assert_eq!(schema.field(1).data_type(), &DataType::LargeBinary);
    assert_eq!(bin.value(0), &bytes[..stops[0] as usize]);
    assert_eq!(bin.value(1), &bytes[stops[0] as usize..stops[1] as usize]);
    assert_eq!(schema.field(1).metadata()["h5vec.kind"], "blob");
}

// ---------------------------------------------------------------------------
// Dense, records, constants.

fn fsl(values: ArrayRef, size: i32, nullable_item: bool) -> ArrayRef {
    let f = Arc::new(Field::new(
        "item",
        values.data_type().clone(),
        nullable_item,
    ));
    Arc::new(FixedSizeListArray::try_new(f, size, values, None).unwrap())
}

#[test]
fn dense_arrays() {
    check_value(
        &[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]],
        fsl(
            Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
            3,
            false,
        ),
        false,
    );
    let nested = [[[1i32, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]];
    let inner = fsl(
        Arc::new(Int32Array::from((1..=12).collect::<Vec<i32>>())),
        2,
        false,
    );
    check_value(&nested, fsl(inner, 3, false), false);
    let chars: StringArray = ["a", "b", "ü", "z"].iter().map(|s| Some(*s)).collect();
    check_value(
        &[['a', 'b'], ['ü', 'z']],
        fsl(Arc::new(chars), 2, false),
        false,
    );
    check_value(
        &[[true, false], [false, true]],
        fsl(
            Arc::new(BooleanArray::from(vec![true, false, false, true])),
            2,
            false,
        ),
        false,
    );
    check_value(
        &[[Color::Red, Color::Blue]],
        fsl(
            Arc::new(labels(&[0, 2], &["Red", "Green", "Blue"])),
            2,
            false,
        ),
        false,
    );
    // [T; 0]: rows without values.
    check_value(
        &[[0u8; 0], [0u8; 0]],
        {
            let f = Arc::new(Field::new("item", DataType::UInt8, false));
            Arc::new(
                FixedSizeListArray::try_new_with_length(
                    f,
                    0,
                    Arc::new(UInt8Array::from(Vec::<u8>::new())),
                    None,
                    2,
                )
                .unwrap(),
            )
        },
        false,
    );
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    a: i16,
    b: String,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Mid {
    inner: Inner,
    c: [u8; 2],
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Outer {
    mid: Mid,
    d: bool,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pair(i32, f64);

#[derive(H5Vector, Debug, Clone, Copy, PartialEq, Default)]
struct Marker;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithConstants {
    id: u32,
    marker: Marker,
    unit: (),
}

fn inner_array(rows: &[Inner]) -> StructArray {
    StructArray::from(vec![
        (
            Arc::new(Field::new("a", DataType::Int16, false)),
            Arc::new(Int16Array::from(
                rows.iter().map(|r| r.a).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
        (
            Arc::new(Field::new("b", DataType::LargeUtf8, false)),
            large_strings(rows.iter().map(|r| Some(r.b.as_str()))),
        ),
    ])
}

#[test]
fn records_nested_tuples_and_constants() {
    let rows: Vec<Outer> = (0..5)
        .map(|i| Outer {
            mid: Mid {
                inner: Inner {
                    a: i as i16 - 2,
                    b: format!("s{i}"),
                },
                c: [i, 2 * i],
            },
            d: i % 2 == 0,
        })
        .collect();
    let (f, b) = save_read(&rows, &SaveOptions::default());
    let schema = b.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["mid", "d"]);
    let root: serde_json::Value = serde_json::from_str(&stored_json(&f, "v")).unwrap();
    let node_of = |f: &Field| -> serde_json::Value {
        serde_json::from_str(&f.metadata()["h5vec.schema"]).unwrap()
    };
    assert_eq!(node_of(schema.field(0)), root["children"][0]);
    let DataType::Struct(mid_fields) = schema.field(0).data_type() else {
        panic!()
    };
    assert_eq!(node_of(&mid_fields[0]), root["children"][0]["children"][0]);
    assert_eq!(node_of(&mid_fields[1]), root["children"][0]["children"][1]);
    let inner = inner_array(&rows.iter().map(|r| r.mid.inner.clone()).collect::<Vec<_>>());
    let c: Vec<u8> = rows.iter().flat_map(|r| r.mid.c).collect();
    let mid = StructArray::from(vec![
        (
            Arc::new(Field::new("inner", inner.data_type().clone(), false)),
            Arc::new(inner) as ArrayRef,
        ),
        (
            Arc::new(Field::new(
                "c",
                DataType::FixedSizeList(Arc::new(Field::new("item", DataType::UInt8, false)), 2),
                false,
            )),
            fsl(Arc::new(UInt8Array::from(c)), 2, false),
        ),
    ]);
    assert_same(b.column(0).as_ref(), &mid, "mid");
    assert_same(
        b.column(1).as_ref(),
        &BooleanArray::from(vec![true, false, true, false, true]),
        "d",
    );

    // Tuples and tuple structs: fields `1`, `2`, ...
    let (_f, b) = save_read(
        &[(1i32, "x".to_string()), (2, "y".into())],
        &SaveOptions::default(),
    );
    assert_eq!(b.schema().field(0).name(), "1");
    assert_same(
        b.column(1).as_ref(),
        large_strings([Some("x"), Some("y")]).as_ref(),
        "tuple.2",
    );
    let (_f, b) = save_read(&[Pair(3, 0.5)], &SaveOptions::default());
    assert_same(b.column(0).as_ref(), &Int32Array::from(vec![3]), "Pair.1");
    assert_same(
        b.column(1).as_ref(),
        &Float64Array::from(vec![0.5]),
        "Pair.2",
    );

    // Constants: Null columns of the vector's length.
    check_value(&[(), (), ()], Arc::new(NullArray::new(3)), true);
    let (_f, b) = save_read(
        &[
            WithConstants {
                id: 1,
                marker: Marker,
                unit: (),
            },
            WithConstants {
                id: 2,
                marker: Marker,
                unit: (),
            },
        ],
        &SaveOptions::default(),
    );
    assert_eq!(b.schema().field(1).data_type(), &DataType::Null);
    assert!(b.schema().field(1).is_nullable());
    assert_same(b.column(1).as_ref(), &NullArray::new(2), "marker");
    assert_same(b.column(0).as_ref(), &UInt32Array::from(vec![1, 2]), "id");
}

// ---------------------------------------------------------------------------
// Lists, options, VLS strings.

fn item(ty: DataType, nullable: bool) -> Arc<Field> {
    Arc::new(Field::new("item", ty, nullable))
}

#[test]
fn lists_of_everything() {
    let v = vec![vec![1i32, 2], vec![], vec![3]];
    let mut lb =
        LargeListBuilder::new(Int32Builder::new()).with_field(item(DataType::Int32, false));
    for r in &v {
        lb.values().append_slice(r);
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    let v = vec![
        vec!["a".to_string(), "".into()],
        vec![],
        vec!["日本".into()],
    ];
    let mut lb = LargeListBuilder::new(LargeStringBuilder::new())
        .with_field(item(DataType::LargeUtf8, false));
    for r in &v {
        for s in r {
            lb.values().append_value(s);
        }
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    let v = vec![vec![Some("x".to_string()), None], vec![None], vec![]];
    let mut lb = LargeListBuilder::new(LargeStringBuilder::new())
        .with_field(item(DataType::LargeUtf8, true));
    for r in &v {
        for s in r {
            lb.values().append_option(s.as_deref());
        }
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    let v = vec![vec![Some(1i32), None, Some(i32::MIN)], vec![], vec![None]];
    let mut lb = LargeListBuilder::new(Int32Builder::new()).with_field(item(DataType::Int32, true));
    for r in &v {
        for x in r {
            lb.values().append_option(*x);
        }
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    let v = vec![vec![vec![1u16], vec![]], vec![], vec![vec![2, 3]]];
    let inner_f = item(DataType::UInt16, false);
    let outer_f = item(DataType::LargeList(inner_f.clone()), false);
    let mut lb =
        LargeListBuilder::new(LargeListBuilder::new(UInt16Builder::new()).with_field(inner_f))
            .with_field(outer_f);
    for r in &v {
        for l in r {
            lb.values().values().append_slice(l);
            lb.values().append(true);
        }
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    let v = vec![vec![Some(vec![1i32]), None, Some(vec![])], vec![]];
    let inner_f = item(DataType::Int32, false);
    let outer_f = item(DataType::LargeList(inner_f.clone()), true);
    let mut lb =
        LargeListBuilder::new(LargeListBuilder::new(Int32Builder::new()).with_field(inner_f))
            .with_field(outer_f);
    for r in &v {
        for l in r {
            match l {
                Some(l) => {
                    lb.values().values().append_slice(l);
                    lb.values().append(true);
                }
                None => lb.values().append(false),
            }
        }
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    let v = vec![vec![true, false], vec![true]];
    let mut lb =
        LargeListBuilder::new(BooleanBuilder::new()).with_field(item(DataType::Boolean, false));
    for r in &v {
        for x in r {
            lb.values().append_value(*x);
        }
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    let v = vec![vec!['a', '🎉'], vec![]];
    let mut lb =
        LargeListBuilder::new(StringBuilder::new()).with_field(item(DataType::Utf8, false));
    for r in &v {
        for c in r {
            lb.values().append_value(c.to_string());
        }
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    let v = vec![vec![[1u16, 2]], vec![[3, 4], [5, 6]]];
    let fsl_t = DataType::FixedSizeList(item(DataType::UInt16, false), 2);
    let mut lb = LargeListBuilder::new(
        FixedSizeListBuilder::new(UInt16Builder::new(), 2)
            .with_field(item(DataType::UInt16, false)),
    )
    .with_field(item(fsl_t, false));
    for r in &v {
        for a in r {
            lb.values().values().append_slice(a);
            lb.values().append(true);
        }
        lb.append(true);
    }
    check_value(&v, Arc::new(lb.finish()), false);

    // Vec<record>: a struct per element.
    let v = vec![
        vec![
            Inner {
                a: 1,
                b: "p".into(),
            },
            Inner {
                a: 2,
                b: "q".into(),
            },
        ],
        vec![],
    ];
    let flat: Vec<Inner> = v.iter().flatten().cloned().collect();
    let values = inner_array(&flat);
    let f = item(values.data_type().clone(), false);
    let offs = arrow_buffer::OffsetBuffer::new(vec![0i64, 2, 2].into());
    check_value(
        &v,
        Arc::new(LargeListArray::new(f, offs, Arc::new(values), None)),
        false,
    );
}

#[test]
fn options_of_everything() {
    check_value(
        &[Some(1i32), None, Some(-5)],
        Arc::new(Int32Array::from(vec![Some(1), None, Some(-5)])),
        true,
    );
    check_value(
        &[None, Some(true)],
        Arc::new(BooleanArray::from(vec![None, Some(true)])),
        true,
    );
    check_value(
        &[Some("a".to_string()), None, Some(String::new())],
        large_strings([Some("a"), None, Some("")]),
        true,
    );
    check_value(
        &[Some('x'), None],
        Arc::new(StringArray::from(vec![Some("x"), None])),
        true,
    );
    let v = [
        Some(Inner {
            a: 4,
            b: "r".into(),
        }),
        None,
    ];
    let s = inner_array(&[
        Inner {
            a: 4,
            b: "r".into(),
        },
        Inner {
            a: 0,
            b: String::new(),
        },
    ]);
    let (fields, arrays, _) = s.into_parts();
    let nulls = arrow_buffer::NullBuffer::from(vec![true, false]);
    check_value(
        &v,
        Arc::new(StructArray::new(fields, arrays, Some(nulls))),
        true,
    );
    let v = [Some(vec![1u8, 2]), None, Some(vec![])];
    let mut lb = LargeListBuilder::new(arrow_array::builder::UInt8Builder::new())
        .with_field(item(DataType::UInt8, false));
    for r in &v {
        match r {
            Some(r) => {
                lb.values().append_slice(r);
                lb.append(true);
            }
            None => lb.append(false),
        }
    }
    check_value(&v, Arc::new(lb.finish()), true);
    let v = [Some([1.5f32, 2.0]), None];
    let f = item(DataType::Float32, false);
    let want = FixedSizeListArray::try_new(
        f,
        2,
        Arc::new(Float32Array::from(vec![1.5, 2.0, 0.0, 0.0])),
        Some(arrow_buffer::NullBuffer::from(vec![true, false])),
    )
    .unwrap();
    check_value(&v, Arc::new(want), true);
}

#[test]
fn vls_strings() {
    let o = SaveOptions::default().vls_strings(true);
    let v = ["alpha".to_string(), "".into(), "日本語".into()];
    check_value_with(
        &v,
        large_strings([Some("alpha"), Some(""), Some("日本語")]),
        false,
        &o,
    );
    let v = [Some("NA".to_string()), None, Some("x".into())];
    check_value_with(&v, large_strings([Some("NA"), None, Some("x")]), true, &o);
    // Shared slices (dedup): not contiguous, copied.
    let o2 = o.clone().dedup_strings(true);
    let v = ["same".to_string(), "other".into(), "same".into()];
    check_value_with(
        &v,
        large_strings([Some("same"), Some("other"), Some("same")]),
        false,
        &o2,
    );
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Wide {
    id: u64,
    name: String,
    score: Option<f32>,
    tags: Vec<String>,
    pos: [f64; 2],
    maybe: Option<Vec<Option<i64>>>,
    #[h5vec(vls)]
    note: Option<String>,
}

fn wide(i: u64) -> Wide {
    Wide {
        id: i,
        name: format!("n{i}"),
        score: (!i.is_multiple_of(3)).then_some(i as f32 / 2.0),
        tags: (0..i % 4).map(|k| format!("t{k}")).collect(),
        pos: [i as f64, -(i as f64)],
        maybe: (i % 5 != 1).then(|| (0..i % 3).map(|k| (k != 1).then_some(k as i64)).collect()),
        note: i.is_multiple_of(2).then(|| format!("note {i}")),
    }
}

#[test]
fn wide_records_in_ranges_and_batches() {
    let rows: Vec<Wide> = (0..50).map(wide).collect();
    let (_f, b) = save_read(&rows, &SaveOptions::default().chunk_length(7));
    let score = b.column(2).as_primitive::<Float32Type>();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(score.is_valid(i), r.score.is_some());
        assert_eq!(b.column(6).as_string::<i64>().is_valid(i), r.note.is_some());
        if let Some(n) = &r.note {
            assert_eq!(b.column(6).as_string::<i64>().value(i), n);
        }
        let m = b.column(5).as_list::<i64>();
        assert_eq!(m.is_valid(i), r.maybe.is_some());
        if let Some(mv) = &r.maybe {
            let got = m.value(i);
            let got = got.as_primitive::<Int64Type>();
            let want: Int64Array = mv.iter().copied().collect();
            assert_eq!(got, &want);
        }
    }
    assert!(b.schema().field(5).is_nullable());
    let DataType::LargeList(it) = b.schema().field(5).data_type().clone() else {
        panic!()
    };
    assert!(it.is_nullable());
    assert_eq!(it.metadata()["h5vec.kind"], "fill_nullable");
}

// ---------------------------------------------------------------------------
// Golden files.

fn golden(sub: &str, stem: &str) -> (File, serde_json::Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(sub);
    let f = File::open(dir.join(format!("{stem}.h5"))).unwrap();
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{stem}.json"))).unwrap())
            .unwrap();
    (f, j)
}

/// Row `i` of `a` as JSON (numbers, bools, strings, lists, nulls).
fn json_of(a: &dyn Array, i: usize) -> serde_json::Value {
    use serde_json::Value;
    if a.is_null(i) {
        return Value::Null;
    }
    match a.data_type() {
        DataType::Boolean => Value::from(a.as_boolean().value(i)),
        DataType::Int32 => Value::from(a.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => Value::from(a.as_primitive::<Int64Type>().value(i)),
        DataType::Float32 => Value::from(a.as_primitive::<Float32Type>().value(i) as f64),
        DataType::Float64 => Value::from(a.as_primitive::<Float64Type>().value(i)),
        DataType::LargeUtf8 => Value::from(a.as_string::<i64>().value(i)),
        DataType::LargeList(_) => {
            let v = a.as_list::<i64>().value(i);
            Value::Array((0..v.len()).map(|k| json_of(v.as_ref(), k)).collect())
        }
        t => panic!("unexpected type {t}"),
    }
}

#[test]
fn h5col_golden_tables() {
    for stem in [
        "a_float32_list",
        "b_nullable_strings",
        "c_nested_int32",
        "d_mixed_table",
        "e_chunked_gzip",
        "f_truncated_tail",
    ] {
        let (f, j) = golden("h5col", stem);
        let b = read_vector(&f, "table").unwrap_or_else(|e| panic!("{stem}: {e}"));
        let order: Vec<&str> = j["column_order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let schema = b.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, order, "{stem}");
        assert!(schema.metadata().is_empty());
        let rows = j["rows"].as_array().unwrap();
        assert_eq!(b.num_rows(), rows.len(), "{stem}");
        for (i, row) in rows.iter().enumerate() {
            for (c, name) in order.iter().enumerate() {
                assert_eq!(
                    json_of(b.column(c).as_ref(), i),
                    row[*name],
                    "{stem} row {i} {name}"
                );
            }
        }
        for field in schema.fields() {
            assert!(field.metadata().is_empty());
            // Nullable exactly where h5col can store a missing value.
            let s = &j["schema"][field.name()];
            let want = match s["kind"].as_str().unwrap() {
                "list" => s["nullable"].as_bool().unwrap(),
                _ => s.get("fill_value").is_some(),
            };
            assert_eq!(field.is_nullable(), want, "{stem}.{}", field.name());
        }
        check_slices(&f, "table", &b);
    }
    // Exact types of the mixed table.
    let (f, _) = golden("h5col", "d_mixed_table");
    let s = read_schema(&f, "table").unwrap();
    let types: Vec<DataType> = s.fields().iter().map(|f| f.data_type().clone()).collect();
    assert_eq!(
        types[..4],
        [
            DataType::Int64,
            DataType::LargeUtf8,
            DataType::Float64,
            DataType::Boolean
        ]
    );
    assert_eq!(types[4], DataType::LargeList(item(DataType::Float64, true)));
    assert_eq!(
        types[6],
        DataType::LargeList(item(DataType::LargeUtf8, false))
    );
}

#[test]
fn vls_golden_arrays() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join("vls");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".h5") else {
            continue;
        };
        let (f, j) = golden("vls", stem);
        let group = j["group"].as_str().unwrap().trim_start_matches('/');
        let b = read_vector(&f, group).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let typed = h5vec::vls::load_strings(&f.group(group).unwrap()).unwrap();
        let want = large_strings(typed.iter().map(|s| s.as_deref()));
        assert_eq!(b.schema().field(0).name(), "value");
        assert!(b.schema().field(0).is_nullable());
        assert_same(b.column(0).as_ref(), want.as_ref(), stem);
        if let Some(strings) = j.get("strings").and_then(|s| s.as_array()) {
            for (i, s) in strings.iter().enumerate() {
                assert_eq!(json_of(b.column(0).as_ref(), i), *s, "{stem}[{i}]");
            }
        }
        check_slices(&f, group, &b);
        n += 1;
    }
    assert_eq!(n, 8);
}

// ---------------------------------------------------------------------------
// What is not a vector, and damaged files.

#[test]
fn not_a_container() {
    let f = mem_file();
    let e = read_vector(&f, "nope").unwrap_err();
    assert!(matches!(e.kind(), h5vec::ErrorKind::NotFound(_)), "{e}");
    f.create_group("plain").unwrap().create_group("x").unwrap();
    let e = read_vector(&f, "plain").unwrap_err();
    assert_eq!(e.path(), "$");
    assert!(
        e.to_string()
            .contains("expected an h5vec vector, h5col table or VLS string array"),
        "{e}"
    );
    f.new_dataset::<u8>().shape(3).create("ds").unwrap();
    let e = read_vector(&f, "ds").unwrap_err();
    assert!(e.to_string().contains("found a dataset"), "{e}");
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Damaged {
    tags: Vec<String>,
    opt: Option<Vec<i32>>,
    ch: char,
    n: u32,
}

fn damaged() -> File {
    let f = mem_file();
    let rows: Vec<Damaged> = (0..4)
        .map(|i| Damaged {
            tags: vec![format!("t{i}"); i as usize],
            opt: (i != 1).then(|| vec![i as i32; 2]),
            ch: 'c',
            n: i,
        })
        .collect();
    h5vec::save_vector(&f, "v", &rows).unwrap();
    f
}

fn read_err(f: &File) -> h5vec::Error {
    // The typed load refuses the same file.
    assert!(h5vec::load_vector::<Damaged>(f, "v").is_err());
    read_vector(f, "v").unwrap_err()
}

#[test]
fn damaged_files_are_errors_naming_the_path() {
    // Decreasing OFFSETS.
    let f = damaged();
    let ds = f.dataset("v/data/tags/OFFSETS").unwrap();
    overwrite_rows(&ds, 3, &0u64.to_le_bytes());
    let e = read_err(&f);
    assert_eq!(e.path(), "$.tags[3]", "{e}");
    assert!(e.to_string().contains("OFFSETS must not decrease"), "{e}");

    // MASK value 2.
    let f = damaged();
    let ds = f.dataset("v/data/opt/MASK").unwrap();
    overwrite_rows(&ds, 2, &[2u8]);
    let e = read_err(&f);
    assert_eq!(e.path(), "$.opt[2]", "{e}");
    assert!(e.to_string().contains("MASK value 2"), "{e}");

    // A null list row with elements.
    let f = damaged();
    let ds = f.dataset("v/data/opt/MASK").unwrap();
    overwrite_rows(&ds, 0, &[0u8]);
    let e = read_err(&f);
    assert_eq!(e.path(), "$.opt[0]", "{e}");
    assert!(e.to_string().contains("must have an empty span"), "{e}");

    // Invalid UTF-8 in a string element.
    let f = damaged();
    let ds = f.dataset("v/data/tags/VALUES/CHARS").unwrap();
    overwrite_rows(&ds, 0, &[0xff]);
    let e = read_err(&f);
    assert_eq!(e.path(), "$.tags[][0]", "{e}");
    assert!(e.to_string().contains("not valid UTF-8"), "{e}");

    // A char out of range.
    let f = damaged();
    let ds = f.dataset("v/data/ch/values").unwrap();
    overwrite_rows(&ds, 3, &0xD800i32.to_le_bytes());
    let e = read_err(&f);
    assert_eq!(e.path(), "$.ch[3]", "{e}");
    assert!(e.to_string().contains("Unicode scalar value"), "{e}");

    // count past the extents.
    let f = damaged();
    f.dataset("v/metadata/count")
        .unwrap()
        .write_scalar(&10i64)
        .unwrap();
    let e = read_err(&f);
    assert!(e.path().starts_with("$."), "{e}");
    assert!(e.to_string().contains("at least"), "{e}");

    // An external link where a field should be.
    let f = damaged();
    let g = f.group("v/data").unwrap();
    g.unlink("n").unwrap();
    g.link_external("elsewhere.h5", "/x", "n").unwrap();
    let e = read_err(&f);
    assert_eq!(e.path(), "$.n", "{e}");
    assert!(
        e.to_string()
            .contains("an external link to `elsewhere.h5`:`/x`"),
        "{e}"
    );

    // A schema kind h5vec does not know.
    let f = damaged();
    let node = f.group("v/metadata/schema/children/4").unwrap();
    node.unlink("kind").unwrap();
    let v: h5vec::hdf5::types::VarLenUnicode = "mystery".parse().unwrap();
    node.new_dataset::<h5vec::hdf5::types::VarLenUnicode>()
        .shape(())
        .create("kind")
        .unwrap()
        .write_scalar(&v)
        .unwrap();
    let e = read_vector(&f, "v").unwrap_err();
    assert!(e.to_string().contains("`mystery`"), "{e}");
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Units {
    u: Option<()>,
    k: u8,
}

fn validity_of(a: &dyn Array) -> Vec<bool> {
    (0..a.len()).map(|i| a.is_valid(i)).collect()
}

#[test]
fn a_nullable_constant_is_a_struct_without_fields() {
    let f = mem_file();
    let rows = [
        Units { u: Some(()), k: 1 },
        Units { u: None, k: 2 },
        Units { u: Some(()), k: 3 },
    ];
    h5vec::save_vector(&f, "v", &rows).unwrap();
    let b = read_vector(&f, "v").unwrap();
    let schema = b.schema();
    let field = schema.field(0);
    assert_eq!(field.data_type(), &DataType::Struct(Fields::empty()));
    assert!(field.is_nullable());
    assert_eq!(field.metadata()["h5vec.kind"], "constant");
    let s = b.column(0).as_struct();
    assert_eq!((s.len(), s.num_columns()), (3, 0));
    assert_eq!(validity_of(s), [true, false, true]);
    assert_eq!(b.column(1).as_primitive::<UInt8Type>().values(), &[1, 2, 3]);
    let r = read_range(&f, "v", 1..3).unwrap();
    assert_eq!(validity_of(r.column(0).as_ref()), [false, true]);
    check_slices(&f, "v", &b);

    // The root itself.
    h5vec::save_vector(&f, "w", &[None, Some(()), Some(())]).unwrap();
    let b = read_vector(&f, "w").unwrap();
    assert_eq!(
        b.schema().field(0).data_type(),
        &DataType::Struct(Fields::empty())
    );
    assert_eq!(validity_of(b.column(0).as_ref()), [false, true, true]);
    let sizes: Vec<usize> = batches(&f, "w", 2)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .collect();
    assert_eq!(sizes, [2, 1]);
}

#[test]
fn a_huge_claimed_element_range_is_an_error_before_allocating() {
    // OFFSETS[count] claims 2^40 elements of a 6-element VALUES.
    let f = damaged();
    let ds = f.dataset("v/data/tags/OFFSETS").unwrap();
    overwrite_rows(&ds, 4, &(1u64 << 40).to_le_bytes());
    let e = read_err(&f);
    assert_eq!(e.path(), "$.tags[]", "{e}");
    assert!(
        e.to_string()
            .contains("at least 1099511627777 rows, found 7"),
        "{e}"
    );
    assert!(read_range(&f, "v", 0..1).is_err());
    assert!(read_schema(&f, "v").is_err());
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Twin {
    d: [u8; 2],
}

#[test]
fn a_negative_dense_dimension_is_an_error() {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[Twin { d: [1, 2] }]).unwrap();
    let dims = f
        .dataset("v/metadata/schema/children/1/dimensions")
        .unwrap();
    dims.write_raw(&[-1i64]).unwrap();
    let e = read_vector(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$.d", "{e}");
    assert!(
        e.to_string().contains("dense dimension -1 out of range"),
        "{e}"
    );
}

/// An h5col table of one row whose column `x` is `depth` list groups
/// nested in each other around one `Int32` element.
fn nested_table(depth: usize) -> File {
    let f = mem_file();
    let t = f.create_group("t").unwrap();
    write_attr_ascii(&t, "CLASS", "COLUMN_TABLE");
    write_attr_ascii(&t, "VERSION", "1.0");
    t.new_attr::<u64>()
        .create("NROWS")
        .unwrap()
        .write_scalar(&1u64)
        .unwrap();
    let mut g = t.create_group("x").unwrap();
    for level in 1..=depth {
        write_attr_ascii(&g, "CLASS", "LIST_COLUMN");
        write_attr_ascii(&g, "KIND", "OFFSETS");
        g.new_dataset_builder()
            .with_data(&[0u64, 1])
            .create("OFFSETS")
            .unwrap();
        if level == depth {
            g.new_dataset_builder()
                .with_data(&[7i32])
                .create("VALUES")
                .unwrap();
        } else {
            g = g.create_group("VALUES").unwrap();
        }
    }
    f
}

#[test]
fn deeply_nested_table_lists_are_an_error_not_a_stack_overflow() {
    // A thread with 2 MiB of stack, as test threads and many users' have:
    // one reader per level of 150 exhausted it (the process aborted).
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let f = nested_table(150);
            let e = read_vector(&f, "t").unwrap_err();
            assert_eq!(e.path(), format!("$.x{}", "[]".repeat(64)), "{e}");
            assert!(
                e.to_string()
                    .contains("list columns nested more than 64 deep"),
                "{e}"
            );
            assert!(read_schema(&f, "t").is_err());

            let f = nested_table(64);
            let b = read_vector(&f, "t").unwrap();
            let mut a = b.column(0).clone();
            for _ in 0..64 {
                assert_eq!(a.len(), 1);
                a = a.as_list::<i64>().values().clone();
            }
            assert_eq!(a.as_primitive::<Int32Type>().values(), &[7]);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn json_text_that_is_not_json_is_an_error() {
    let rows = [1.0, 2.0].map(|gain| WithJsonBlob {
        settings: Settings {
            gain,
            names: vec![],
        },
        raw: vec![],
    });
    let f = mem_file();
    h5vec::save_vector(&f, "v", &rows).unwrap();
    assert!(read_vector(&f, "v").is_ok());
    // Row 1 of the JSON column made empty.
    let texts: Vec<h5vec::hdf5::types::VarLenUnicode> = [r#"{"gain":1.0,"names":[]}"#, ""]
        .iter()
        .map(|t| t.parse().unwrap())
        .collect();
    f.dataset("v/data/settings/values")
        .unwrap()
        .write_raw(&texts)
        .unwrap();
    assert!(h5vec::load_vector::<WithJsonBlob>(&f, "v").is_err());
    let e = read_vector(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$.settings[1]", "{e}");
    assert!(e.to_string().contains("bad JSON: EOF while parsing"), "{e}");
    // Rows not read are not checked.
    let b = read_range(&f, "v", 0..1).unwrap();
    assert_eq!(
        b.column(0).as_string::<i64>().value(0),
        r#"{"gain":1.0,"names":[]}"#
    );
}

/// The batch iterator can move to (and be shared with) another thread.
#[test]
fn batches_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<h5vec::arrow::Batches>();
}

// ---------------------------------------------------------------------------
// Filtered reads: `read_where`, `batches_where`.

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Payload {
    Num(i32),
    Text { s: String },
    Nothing,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Reading {
    id: u32,
    temperature: f64,
    status: Color,
    station: String,
    humidity: Option<f32>,
    payload: Payload,
    tags: Vec<u16>,
}

fn reading(i: u32) -> Reading {
    Reading {
        id: i,
        temperature: if i % 97 == 5 {
            f64::NAN
        } else {
            f64::from(i % 200) / 2.0
        },
        status: [Color::Red, Color::Green, Color::Blue][(i % 3) as usize],
        station: format!("st{}", i % 1000),
        humidity: (i % 5 != 2).then_some((i % 40) as f32),
        payload: match i % 4 {
            0 => Payload::Num(i as i32),
            1 => Payload::Text { s: format!("p{i}") },
            _ => Payload::Nothing,
        },
        tags: (0..(i % 3) as u16).collect(),
    }
}

/// The rows of `rows` where `keep` is true, by index.
fn matching<T>(rows: &[T], keep: impl Fn(&T) -> bool) -> Vec<u64> {
    (0..rows.len() as u64)
        .filter(|&i| keep(&rows[i as usize]))
        .collect()
}

/// `read_where(filter)` is exactly rows `want` of `whole`, in order, with
/// its schema; `select_rows` agrees; `batches_where` in batches of 1 (few
/// rows), 7, 500 and all gives the same rows.
fn check_where(f: &File, name: &str, whole: &RecordBatch, filter: &h5vec::Filter, want: &[u64]) {
    assert_eq!(
        h5vec::select_rows(f, name, filter).unwrap(),
        want,
        "{filter}"
    );
    let got = h5vec::arrow::read_where(f, name, filter).unwrap();
    assert_eq!(got.schema(), whole.schema(), "{filter}");
    assert_eq!(got.num_rows(), want.len(), "{filter}");
    for (k, &r) in want.iter().enumerate() {
        assert_eq!(
            got.slice(k, 1),
            whole.slice(r as usize, 1),
            "{filter}: row {k} (row {r} of the vector)"
        );
    }
    let one = if want.len() <= 200 { 1 } else { 7 };
    for size in [one, 7, 500, want.len().max(1)] {
        let it = h5vec::arrow::batches_where(f, name, filter, None, None, size).unwrap();
        assert_eq!(
            (it.rows(), it.remaining()),
            (whole.num_rows() as u64, want.len() as u64)
        );
        assert_eq!(it.schema(), whole.schema());
        let mut start = 0;
        for b in it {
            let b = b.unwrap();
            assert!(b.num_rows() == size || start + b.num_rows() == want.len());
            assert_eq!(
                b,
                got.slice(start, b.num_rows()),
                "{filter}: batch at {start}"
            );
            start += b.num_rows();
        }
        assert_eq!(start, want.len());
    }
}

#[test]
fn read_where_is_the_selected_rows_of_read_vector() {
    let rows: Vec<Reading> = (0..6_000).map(reading).collect();
    let f = mem_file();
    let opts = SaveOptions::default().chunk_length(250);
    h5vec::save_vector_with(&f, "r", &rows, &opts).unwrap();
    let whole = read_vector(&f, "r").unwrap();
    let col = h5vec::col;

    // No row: an empty batch of read_vector's schema.
    let none = col("id").gt(100_000u32);
    check_where(&f, "r", &whole, &none, &[]);
    let empty = h5vec::arrow::read_where(&f, "r", &none).unwrap();
    assert_eq!(empty, RecordBatch::new_empty(whole.schema()));
    // Every row: the whole batch.
    let all = col("id").ge(0u32);
    check_where(&f, "r", &whole, &all, &matching(&rows, |_| true));
    assert_eq!(h5vec::arrow::read_where(&f, "r", &all).unwrap(), whole);
    // Nullable columns: missing rows are unknown for a value predicate.
    check_where(
        &f,
        "r",
        &whole,
        &col("humidity").is_null(),
        &matching(&rows, |r| r.humidity.is_none()),
    );
    check_where(
        &f,
        "r",
        &whole,
        &col("humidity").lt(3.0f32),
        &matching(&rows, |r| r.humidity.is_some_and(|h| h < 3.0)),
    );
    // Strings, and rows far apart (runs joined).
    check_where(
        &f,
        "r",
        &whole,
        &col("station").is_in(["st3", "st997"]),
        &matching(&rows, |r| r.station == "st3" || r.station == "st997"),
    );
    check_where(
        &f,
        "r",
        &whole,
        &col("id").is_in([5u32, 6, 5000, 5_999]),
        &[5, 6, 5000, 5_999],
    );
    // NaN is false for every comparison but `!=`; enums by label; text syntax.
    let text: h5vec::Filter = "status == 'Blue' and temperature >= 90 or id = 1"
        .parse()
        .unwrap();
    check_where(
        &f,
        "r",
        &whole,
        &text,
        &matching(&rows, |r| {
            (r.status == Color::Blue && r.temperature >= 90.0) || r.id == 1
        }),
    );
    check_where(
        &f,
        "r",
        &whole,
        &"temperature != 10 and not station in ('st1', 'st2')"
            .parse()
            .unwrap(),
        &matching(&rows, |r| {
            r.temperature != 10.0 && r.station != "st1" && r.station != "st2"
        }),
    );
}

#[test]
fn batches_where_takes_columns_and_a_range() {
    let rows: Vec<Wide> = (0..300).map(wide).collect();
    let f = mem_file();
    h5vec::save_vector_with(&f, "w", &rows, &SaveOptions::default().chunk_length(16)).unwrap();
    // Scores of rows that are multiples of 3 are missing.
    let filter = h5vec::col("score").ge(20.0f32);
    let want = matching(&rows, |r| r.score.is_some_and(|s| s >= 20.0));
    let cols = ["note", "score"];
    let whole = batches_columns(&f, "w", &cols, None, 1000)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    for (range, size) in [
        (None, 1000),
        (Some(50..250), 3),
        (Some(0..0), 5),
        (Some(299..300), 1),
    ] {
        let in_range: Vec<u64> = want
            .iter()
            .copied()
            .filter(|r| {
                range
                    .as_ref()
                    .is_none_or(|x: &std::ops::Range<u64>| x.contains(r))
            })
            .collect();
        let it = h5vec::arrow::batches_where(&f, "w", &filter, Some(&cols), range.clone(), size)
            .unwrap();
        assert_eq!(it.schema(), whole.schema());
        assert_eq!(it.remaining(), in_range.len() as u64, "{range:?}");
        let mut k = 0;
        for b in it {
            let b = b.unwrap();
            assert_eq!(b.num_columns(), 2);
            for i in 0..b.num_rows() {
                assert_eq!(
                    b.slice(i, 1),
                    whole.slice(in_range[k] as usize, 1),
                    "{range:?}: selected row {k}"
                );
                k += 1;
            }
        }
        assert_eq!(k, in_range.len(), "{range:?}");
    }
    // The values, spelled out for a few rows.
    let b = h5vec::arrow::read_where(&f, "w", &h5vec::col("id").is_in([40u64, 41, 42])).unwrap();
    let score = b.column(2).as_primitive::<Float32Type>();
    assert_eq!(
        (score.value(0), score.is_null(2)),
        (20.0, true) // 42 is a multiple of 3
    );
    let note = b.column(6).as_string::<i64>();
    assert_eq!(
        note.iter().collect::<Vec<_>>(),
        [Some("note 40"), None, Some("note 42")]
    );
    // Errors: a range past the rows, no rows per batch.
    let err = h5vec::arrow::batches_where(&f, "w", &filter, None, Some(0..301), 10)
        .err()
        .unwrap();
    assert!(err.to_string().contains("301"), "{err}");
    assert!(h5vec::arrow::batches_where(&f, "w", &filter, None, None, 0).is_err());
    let err = h5vec::arrow::batches_where(&f, "w", &filter, Some(&["nope"]), None, 10)
        .err()
        .unwrap();
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn read_where_splits_long_runs_and_refuses_what_select_rows_refuses() {
    // More rows than one read batch (65,536): runs are cut and joined.
    let xs: Vec<u32> = (0..140_000).collect();
    let f = mem_file();
    h5vec::save_vector(&f, "xs", &xs).unwrap();
    let whole = read_vector(&f, "xs").unwrap();
    let col = h5vec::col;
    let b = h5vec::arrow::read_where(&f, "xs", &col("").lt(70_000u32)).unwrap();
    assert_eq!(b, whole.slice(0, 70_000));
    let b = h5vec::arrow::read_where(&f, "xs", &col("").is_in([0u32, 65_536, 65_537, 139_999]))
        .unwrap();
    assert_eq!(
        b.column(0).as_primitive::<UInt32Type>().values(),
        &[0, 65_536, 65_537, 139_999]
    );
    // A column that is not there: the error names it, as select_rows's.
    let bad = col("nope").gt(1);
    let err = h5vec::arrow::read_where(&f, "xs", &bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        h5vec::select_rows(&f, "xs", &bad).unwrap_err().to_string()
    );
    assert!(err.to_string().contains("nope"), "{err}");
    // An h5col table (SPEC.md 14.7): row 4's id is missing.
    let (t, _) = golden("h5col", "d_mixed_table");
    let any = col("id").gt(0);
    assert_eq!(
        h5vec::select_rows(&t, "table", &any).unwrap(),
        [0, 1, 2, 3, 5]
    );
    let b = h5vec::arrow::read_where(&t, "table", &any).unwrap();
    assert_eq!(b.schema(), h5vec::arrow::read_schema(&t, "table").unwrap());
    let whole = h5vec::arrow::read_vector(&t, "table").unwrap();
    assert_eq!(b.slice(0, 4), whole.slice(0, 4));
    assert_eq!(b.slice(4, 1), whole.slice(5, 1));
    let mut n = 0;
    for batch in h5vec::arrow::batches_where(&t, "table", &any, Some(&["name"]), None, 2).unwrap() {
        let batch = batch.unwrap();
        assert_eq!(batch.num_columns(), 1);
        n += batch.num_rows();
    }
    assert_eq!(n, 5);
}
