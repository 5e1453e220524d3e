//! The exact on-disk layout (SPEC.md sections 1-4): paths, shapes, dtypes,
//! metadata and the schema tree, checked through the HDF5 C API.

use h5vec_tests as common;

use common::{
    assert_dtype, dtype_class, mem_file, members, meta_i64, meta_str, read_rows_bytes, vlen_strings,
};
use h5vec::hdf5::{Dataset, Group};
use h5vec::H5Vector;
use hdf5_sys::h5t::{self, H5T_class_t};
use serde::{Deserialize, Serialize};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct GPSTimeStamp {
    weeks: i32,
    microseconds: i64,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Measurement {
    timestamp: GPSTimeStamp,
    temperature: f64,
    position: [f64; 3],
}

fn measurements(n: i32) -> Vec<Measurement> {
    (0..n)
        .map(|i| Measurement {
            timestamp: GPSTimeStamp {
                weeks: 2300 + i,
                microseconds: i64::from(i) * 1_000_003,
            },
            temperature: 20.0 + f64::from(i) / 4.0,
            position: [f64::from(i), -f64::from(i), 0.5],
        })
        .collect()
}

/// Asserts a dataset is chunked, 1 + inner dims, with max extent unlimited on
/// axis 0 and fixed (= current) on the others.
#[track_caller]
fn assert_extendible(ds: &Dataset) {
    assert!(ds.is_chunked(), "{} is not chunked", ds.name());
    let space = ds.space().unwrap();
    let max = space.maxdims();
    let shape = ds.shape();
    assert_eq!(max[0], None, "{}: axis 0 must be unlimited", ds.name());
    for (k, m) in max.iter().enumerate().skip(1) {
        assert_eq!(*m, Some(shape[k]), "{}: axis {k} must be fixed", ds.name());
    }
}

/// Checks one schema node's common entries; returns its member names.
#[track_caller]
fn node(g: &Group, kind: &str, schema: &str, codec: &str) -> Vec<String> {
    assert_eq!(meta_str(g, "kind"), kind, "{}", g.name());
    assert_eq!(meta_str(g, "schema"), schema, "{}", g.name());
    assert_eq!(meta_str(g, "codec"), codec, "{}", g.name());
    assert!(!meta_str(g, "logical_type").is_empty());
    members(g)
}

#[track_caller]
fn scalar_node(g: &Group, codec: &str, encoded: &str) {
    let m = node(g, "scalar", "HDF5Vectors.ScalarSchema", codec);
    assert_eq!(
        m,
        ["codec", "encoded_type", "kind", "logical_type", "schema"],
        "{}",
        g.name()
    );
    assert_eq!(meta_str(g, "encoded_type"), encoded, "{}", g.name());
}

#[track_caller]
fn dense_node(g: &Group, codec: &str, encoded: &str, dims: &[i64]) {
    let m = node(g, "dense", "HDF5Vectors.DenseSchema", codec);
    assert_eq!(
        m,
        [
            "codec",
            "dimensions",
            "encoded_type",
            "kind",
            "logical_type",
            "schema"
        ],
        "{}",
        g.name()
    );
    assert_eq!(meta_str(g, "encoded_type"), encoded);
    let d = g.dataset("dimensions").unwrap();
    assert_eq!(d.ndim(), 1);
    assert_dtype(&d, *h5t::H5T_STD_I64LE, "H5T_STD_I64LE");
    assert_eq!(d.read_raw::<i64>().unwrap(), dims);
}

/// Checks a record node; returns its children group.
#[track_caller]
fn record_node(g: &Group, codec: &str, names: &[&str]) -> Group {
    let m = node(g, "record", "HDF5Vectors.RecordSchema", codec);
    assert_eq!(
        m,
        [
            "children",
            "codec",
            "field_names",
            "kind",
            "logical_type",
            "schema"
        ],
        "{}",
        g.name()
    );
    assert_eq!(vlen_strings(&g.dataset("field_names").unwrap()), names);
    let ch = g.group("children").unwrap();
    let want: Vec<String> = {
        let mut w: Vec<String> = (1..=names.len()).map(|i| i.to_string()).collect();
        w.sort();
        w
    };
    assert_eq!(members(&ch), want);
    ch
}

#[test]
fn measurement_paths_shapes_dtypes() {
    let f = mem_file();
    h5vec::save_vector(&f, "measurements", &measurements(100)).unwrap();

    assert_eq!(members(&f), ["measurements"]);
    let v = f.group("measurements").unwrap();
    assert_eq!(members(&v), ["data", "metadata"]);
    let data = v.group("data").unwrap();
    assert_eq!(members(&data), ["position", "temperature", "timestamp"]);
    assert_eq!(
        members(&data.group("timestamp").unwrap()),
        ["microseconds", "weeks"]
    );
    for g in [
        "timestamp/weeks",
        "timestamp/microseconds",
        "temperature",
        "position",
    ] {
        assert_eq!(members(&data.group(g).unwrap()), ["values"], "{g}");
    }

    let weeks = f
        .dataset("measurements/data/timestamp/weeks/values")
        .unwrap();
    let micros = f
        .dataset("measurements/data/timestamp/microseconds/values")
        .unwrap();
    let temp = f.dataset("measurements/data/temperature/values").unwrap();
    let pos = f.dataset("measurements/data/position/values").unwrap();
    assert_eq!(weeks.shape(), [100]);
    assert_eq!(micros.shape(), [100]);
    assert_eq!(temp.shape(), [100]);
    assert_eq!(pos.shape(), [100, 3]);
    assert_dtype(&weeks, *h5t::H5T_STD_I32LE, "H5T_STD_I32LE");
    assert_dtype(&micros, *h5t::H5T_STD_I64LE, "H5T_STD_I64LE");
    assert_dtype(&temp, *h5t::H5T_IEEE_F64LE, "H5T_IEEE_F64LE");
    assert_dtype(&pos, *h5t::H5T_IEEE_F64LE, "H5T_IEEE_F64LE");
    for ds in [&weeks, &micros, &temp, &pos] {
        assert_extendible(ds);
    }

    // Values as an external reader sees them: row k of every column.
    let ms = measurements(100);
    assert_eq!(
        weeks.read_raw::<i32>().unwrap(),
        ms.iter().map(|m| m.timestamp.weeks).collect::<Vec<_>>()
    );
    assert_eq!(
        micros.read_raw::<i64>().unwrap(),
        ms.iter()
            .map(|m| m.timestamp.microseconds)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        temp.read_raw::<f64>().unwrap(),
        ms.iter().map(|m| m.temperature).collect::<Vec<_>>()
    );
    assert_eq!(
        pos.read_raw::<f64>().unwrap(),
        ms.iter().flat_map(|m| m.position).collect::<Vec<_>>()
    );
}

#[test]
fn measurement_metadata() {
    let f = mem_file();
    h5vec::save_vector(&f, "measurements", &measurements(100)).unwrap();
    let meta = f.group("measurements/metadata").unwrap();
    assert_eq!(
        members(&meta),
        [
            "SEARCH_INDEXES",
            "count",
            "format_name",
            "format_version",
            "logical_type",
            "schema",
            "schema_was_inferred",
            "serialized_schema"
        ]
    );
    // No attributes anywhere in metadata: every node is a dataset.
    assert_eq!(meta.attr_names().unwrap(), Vec::<String>::new());

    assert_eq!(meta_str(&meta, "format_name"), "HDF5Vectors");
    assert_eq!(
        common::str_type(&meta.dataset("format_name").unwrap()).size,
        11
    );
    assert_eq!(meta_i64(&meta, "format_version"), 1);
    assert_eq!(meta_i64(&meta, "count"), 100);
    assert_eq!(
        meta_str(&meta, "logical_type"),
        std::any::type_name::<Measurement>()
    );

    let inferred = meta.dataset("schema_was_inferred").unwrap();
    assert!(inferred.is_scalar());
    assert_dtype(&inferred, *h5t::H5T_STD_B8LE, "H5T_STD_B8LE");
    assert_eq!(common::read_scalar_byte(&inferred), 0);

    let ser = meta.dataset("serialized_schema").unwrap();
    assert_eq!(ser.ndim(), 1);
    assert_dtype(&ser, *h5t::H5T_STD_U8LE, "H5T_STD_U8LE");
    let json: serde_json::Value = serde_json::from_slice(&ser.read_raw::<u8>().unwrap()).unwrap();
    assert_eq!(json["kind"], "record");
    assert_eq!(json["codec"], "HDF5Vectors.StructCodec");
    assert_eq!(
        json["field_names"],
        serde_json::json!(["timestamp", "temperature", "position"])
    );
    assert_eq!(json["children"][2]["dimensions"], serde_json::json!([3]));
}

#[test]
fn measurement_schema_tree() {
    let f = mem_file();
    h5vec::save_vector(&f, "measurements", &measurements(100)).unwrap();
    let s = f.group("measurements/metadata/schema").unwrap();
    let ch = record_node(
        &s,
        "HDF5Vectors.StructCodec",
        &["timestamp", "temperature", "position"],
    );
    assert_eq!(
        meta_str(&s, "logical_type"),
        std::any::type_name::<Measurement>()
    );

    let ts = ch.group("1").unwrap();
    let tch = record_node(&ts, "HDF5Vectors.StructCodec", &["weeks", "microseconds"]);
    assert_eq!(
        meta_str(&ts, "logical_type"),
        std::any::type_name::<GPSTimeStamp>()
    );
    scalar_node(
        &tch.group("1").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Int32",
    );
    scalar_node(
        &tch.group("2").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Int64",
    );
    assert_eq!(meta_str(&tch.group("1").unwrap(), "logical_type"), "i32");
    scalar_node(
        &ch.group("2").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Float64",
    );
    dense_node(
        &ch.group("3").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Float64",
        &[3],
    );
}

#[test]
fn small_vector_makes_a_small_file() {
    let d = common::disk_file();
    h5vec::save_vector(&d, "measurements", &measurements(3)).unwrap();
    let (size, _dir) = d.close_and_size();
    assert!(size < 100 * 1024, "3 measurements take {size} bytes");
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Everything {
    s: String,
    #[h5vec(blob)]
    blob: Vec<u16>,
    #[h5vec(json)]
    json: Vec<u8>,
    flags: [bool; 2],
    t: (u8, char),
}

#[test]
fn small_vector_of_every_kind_makes_a_small_file() {
    let d = common::disk_file();
    let v: Vec<Everything> = (0..3)
        .map(|i| Everything {
            s: "x".into(),
            blob: vec![i; 2],
            json: vec![1],
            flags: [true, false],
            t: (i as u8, 'c'),
        })
        .collect();
    h5vec::save_vector(&d, "v", &v).unwrap();
    let (size, _dir) = d.close_and_size();
    assert!(size < 100 * 1024, "3 records take {size} bytes");
}

macro_rules! number_layouts {
    ($($name:ident: $t:ty => $file:ident, $enc:literal;)*) => {$(
        #[test]
        fn $name() {
            let f = mem_file();
            let v: Vec<$t> = vec![<$t>::MIN, <$t>::MAX, 1 as $t];
            h5vec::save_vector(&f, "v", &v).unwrap();
            assert_eq!(members(&f.group("v/data").unwrap()), ["values"]);
            let ds = f.dataset("v/data/values").unwrap();
            assert_eq!(ds.shape(), [3]);
            assert_dtype(&ds, *h5t::$file, stringify!($file));
            assert_extendible(&ds);
            assert_eq!(ds.read_raw::<$t>().unwrap(), v);
            scalar_node(&f.group("v/metadata/schema").unwrap(), "HDF5Vectors.IdentityCodec", $enc);
            assert_eq!(meta_str(&f.group("v/metadata/schema").unwrap(), "logical_type"), stringify!($t));
        }
    )*};
}
number_layouts! {
    layout_i8: i8 => H5T_STD_I8LE, "Int8";
    layout_i16: i16 => H5T_STD_I16LE, "Int16";
    layout_i32: i32 => H5T_STD_I32LE, "Int32";
    layout_i64: i64 => H5T_STD_I64LE, "Int64";
    layout_u8: u8 => H5T_STD_U8LE, "UInt8";
    layout_u16: u16 => H5T_STD_U16LE, "UInt16";
    layout_u32: u32 => H5T_STD_U32LE, "UInt32";
    layout_u64: u64 => H5T_STD_U64LE, "UInt64";
    layout_f32: f32 => H5T_IEEE_F32LE, "Float32";
    layout_f64: f64 => H5T_IEEE_F64LE, "Float64";
}

#[test]
fn layout_bool_is_b8le_bitfield() {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[true, false, true]).unwrap();
    let ds = f.dataset("v/data/values").unwrap();
    assert_eq!(dtype_class(&ds), H5T_class_t::H5T_BITFIELD);
    assert_dtype(&ds, *h5t::H5T_STD_B8LE, "H5T_STD_B8LE");
    assert_eq!(ds.shape(), [3]);
    assert_extendible(&ds);
    assert_eq!(read_rows_bytes(&ds), (vec![1, 0, 1], 1));
    scalar_node(
        &f.group("v/metadata/schema").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Bool",
    );

    h5vec::save_vector(&f, "a", &[[true, false, false, true]]).unwrap();
    let ds = f.dataset("a/data/values").unwrap();
    assert_dtype(&ds, *h5t::H5T_STD_B8LE, "H5T_STD_B8LE");
    assert_eq!(ds.shape(), [1, 4]);
    dense_node(
        &f.group("a/metadata/schema").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Bool",
        &[4],
    );
}

#[test]
fn layout_char_is_int32_code_points() {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &['a', 'é', '😀']).unwrap();
    let ds = f.dataset("v/data/values").unwrap();
    assert_dtype(&ds, *h5t::H5T_STD_I32LE, "H5T_STD_I32LE");
    assert_eq!(ds.read_raw::<i32>().unwrap(), [0x61, 0xE9, 0x1F600]);
    scalar_node(
        &f.group("v/metadata/schema").unwrap(),
        "HDF5Vectors.CharCodec",
        "Int32",
    );

    h5vec::save_vector(&f, "a", &[['x', '😀']]).unwrap();
    let ds = f.dataset("a/data/values").unwrap();
    assert_dtype(&ds, *h5t::H5T_STD_I32LE, "H5T_STD_I32LE");
    assert_eq!(ds.shape(), [1, 2]);
    assert_eq!(ds.read_raw::<i32>().unwrap(), [0x78, 0x1F600]);
    dense_node(
        &f.group("a/metadata/schema").unwrap(),
        "HDF5Vectors.CharCodec",
        "Int32",
        &[2],
    );
}

#[test]
fn layout_string_is_vlen_utf8() {
    let f = mem_file();
    let v = vec!["".to_string(), "ü😀".to_string(), "abc".to_string()];
    h5vec::save_vector(&f, "v", &v).unwrap();
    let ds = f.dataset("v/data/values").unwrap();
    assert_eq!(ds.shape(), [3]);
    assert_extendible(&ds);
    assert_eq!(vlen_strings(&ds), v);
    scalar_node(
        &f.group("v/metadata/schema").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "String",
    );
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Color {
    Red = 1,
    Blue = 200,
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
#[repr(i32)]
enum Level {
    Neg = -5,
    Big = 70_000,
}

/// Checks a fieldless enum's schema node (scalar, or dense with `dims`):
/// `EnumCodec` with the labels, `variant_names` in declaration order and
/// `variant_values` their discriminants as Int64 (SPEC 2).
#[track_caller]
fn enum_node(g: &Group, encoded: &str, dims: Option<&[i64]>, names: &[&str], values: &[i64]) {
    let (kind, schema) = match dims {
        Some(_) => ("dense", "HDF5Vectors.DenseSchema"),
        None => ("scalar", "HDF5Vectors.ScalarSchema"),
    };
    let m = node(g, kind, schema, "HDF5Vectors.EnumCodec");
    let mut want = vec!["codec", "encoded_type", "kind", "logical_type", "schema"];
    if dims.is_some() {
        want.insert(1, "dimensions");
    }
    want.extend(["variant_names", "variant_values"]);
    assert_eq!(m, want, "{}", g.name());
    assert_eq!(meta_str(g, "encoded_type"), encoded, "{}", g.name());
    if let Some(dims) = dims {
        let d = g.dataset("dimensions").unwrap();
        assert_dtype(&d, *h5t::H5T_STD_I64LE, "H5T_STD_I64LE");
        assert_eq!(d.read_raw::<i64>().unwrap(), dims);
    }
    let n = g.dataset("variant_names").unwrap();
    assert_eq!(vlen_strings(&n), names, "{}", g.name());
    let v = g.dataset("variant_values").unwrap();
    assert_eq!(v.ndim(), 1, "{}", g.name());
    assert_dtype(&v, *h5t::H5T_STD_I64LE, "H5T_STD_I64LE");
    assert_eq!(v.read_raw::<i64>().unwrap(), values, "{}", g.name());
}

#[test]
fn layout_enum_is_its_repr() {
    let f = mem_file();
    h5vec::save_vector(&f, "c", &[Color::Blue, Color::Red]).unwrap();
    let ds = f.dataset("c/data/values").unwrap();
    assert_dtype(&ds, *h5t::H5T_STD_U8LE, "H5T_STD_U8LE");
    assert_eq!(ds.read_raw::<u8>().unwrap(), [200, 1]);
    enum_node(
        &f.group("c/metadata/schema").unwrap(),
        "UInt8",
        None,
        &["Red", "Blue"],
        &[1, 200],
    );

    h5vec::save_vector(&f, "l", &[Level::Neg, Level::Big]).unwrap();
    let ds = f.dataset("l/data/values").unwrap();
    assert_dtype(&ds, *h5t::H5T_STD_I32LE, "H5T_STD_I32LE");
    assert_eq!(ds.read_raw::<i32>().unwrap(), [-5, 70_000]);
    enum_node(
        &f.group("l/metadata/schema").unwrap(),
        "Int32",
        None,
        &["Neg", "Big"],
        &[-5, 70_000],
    );

    h5vec::save_vector(&f, "a", &[[Level::Big, Level::Neg]]).unwrap();
    enum_node(
        &f.group("a/metadata/schema").unwrap(),
        "Int32",
        Some(&[2]),
        &["Neg", "Big"],
        &[-5, 70_000],
    );
}

#[test]
fn layout_nested_dense_reverses_dimensions() {
    let f = mem_file();
    let v = vec![[[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]]; 4];
    h5vec::save_vector(&f, "v", &v).unwrap();
    let ds = f.dataset("v/data/values").unwrap();
    // h5py shape (Z, 3, 2); Julia dimensions (2, 3).
    assert_eq!(ds.shape(), [4, 3, 2]);
    assert_dtype(&ds, *h5t::H5T_IEEE_F32LE, "H5T_IEEE_F32LE");
    assert_extendible(&ds);
    assert_eq!(
        &ds.read_raw::<f32>().unwrap()[..6],
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    dense_node(
        &f.group("v/metadata/schema").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Float32",
        &[2, 3],
    );
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pair(i32, String);

#[test]
fn layout_tuples_name_fields_by_position() {
    let f = mem_file();
    h5vec::save_vector(&f, "t", &[(1u8, 2.5f64), (3, 4.5)]).unwrap();
    assert_eq!(members(&f.group("t/data").unwrap()), ["1", "2"]);
    assert_dtype(
        &f.dataset("t/data/1/values").unwrap(),
        *h5t::H5T_STD_U8LE,
        "u8",
    );
    assert_dtype(
        &f.dataset("t/data/2/values").unwrap(),
        *h5t::H5T_IEEE_F64LE,
        "f64",
    );
    let ch = record_node(
        &f.group("t/metadata/schema").unwrap(),
        "HDF5Vectors.TupleCodec",
        &["1", "2"],
    );
    scalar_node(
        &ch.group("1").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "UInt8",
    );
    scalar_node(
        &ch.group("2").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Float64",
    );

    h5vec::save_vector(&f, "p", &[Pair(1, "a".into())]).unwrap();
    assert_eq!(members(&f.group("p/data").unwrap()), ["1", "2"]);
    let ch = record_node(
        &f.group("p/metadata/schema").unwrap(),
        "HDF5Vectors.StructCodec",
        &["1", "2"],
    );
    scalar_node(
        &ch.group("2").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "String",
    );
}

#[test]
fn layout_twelve_field_tuple_orders_children() {
    let f = mem_file();
    let v = [(
        0u8, 1u8, 2u8, 3u8, 4u8, 5u8, 6u8, 7u8, 8u8, 9u8, 10u8, 11i64,
    )];
    h5vec::save_vector(&f, "t", &v).unwrap();
    let names: Vec<String> = (1..=12).map(|i| i.to_string()).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let ch = record_node(
        &f.group("t/metadata/schema").unwrap(),
        "HDF5Vectors.TupleCodec",
        &refs,
    );
    // children/10 is the 10th field, not the 2nd in lexical order.
    scalar_node(
        &ch.group("10").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "UInt8",
    );
    scalar_node(
        &ch.group("12").unwrap(),
        "HDF5Vectors.IdentityCodec",
        "Int64",
    );
    assert_eq!(
        f.dataset("t/data/10/values")
            .unwrap()
            .read_raw::<u8>()
            .unwrap(),
        [9]
    );
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
struct Marker;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithMarker {
    x: u16,
    marker: Marker,
    unit: (),
    ph: std::marker::PhantomData<String>,
}

#[test]
fn layout_constants_have_empty_data_groups() {
    let f = mem_file();
    h5vec::save_vector(&f, "m", &[Marker; 7]).unwrap();
    assert_eq!(members(&f.group("m").unwrap()), ["data", "metadata"]);
    assert_eq!(members(&f.group("m/data").unwrap()), Vec::<String>::new());
    assert_eq!(meta_i64(&f.group("m/metadata").unwrap(), "count"), 7);
    let s = f.group("m/metadata/schema").unwrap();
    let m = node(
        &s,
        "constant",
        "HDF5Vectors.ConstantSchema",
        "HDF5Vectors.ConstantCodec",
    );
    assert_eq!(m, ["codec", "kind", "logical_type", "schema"]);

    h5vec::save_vector(&f, "u", &[(), ()]).unwrap();
    assert_eq!(members(&f.group("u/data").unwrap()), Vec::<String>::new());

    let v = [WithMarker {
        x: 1,
        marker: Marker,
        unit: (),
        ph: std::marker::PhantomData,
    }];
    h5vec::save_vector(&f, "w", &v).unwrap();
    assert_eq!(
        members(&f.group("w/data").unwrap()),
        ["marker", "ph", "unit", "x"]
    );
    for c in ["marker", "ph", "unit"] {
        assert_eq!(
            members(&f.group(&format!("w/data/{c}")).unwrap()),
            Vec::<String>::new(),
            "{c}"
        );
    }
    let ch = record_node(
        &f.group("w/metadata/schema").unwrap(),
        "HDF5Vectors.StructCodec",
        &["x", "marker", "unit", "ph"],
    );
    for i in ["2", "3", "4"] {
        node(
            &ch.group(i).unwrap(),
            "constant",
            "HDF5Vectors.ConstantSchema",
            "HDF5Vectors.ConstantCodec",
        );
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Shape {
    Circle(f64),
    Empty,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithBlob {
    #[h5vec(blob)]
    shape: Shape,
    #[h5vec(blob)]
    unit: (),
}

#[test]
fn layout_blob_bytes_and_cumulative_stops() {
    let f = mem_file();
    let v = vec![
        WithBlob {
            shape: Shape::Circle(1.5),
            unit: (),
        },
        WithBlob {
            shape: Shape::Empty,
            unit: (),
        },
        WithBlob {
            shape: Shape::Circle(-2.0),
            unit: (),
        },
    ];
    h5vec::save_vector(&f, "b", &v).unwrap();
    assert_eq!(
        members(&f.group("b/data/shape").unwrap()),
        ["bytes", "stops"]
    );
    let bytes = f.dataset("b/data/shape/bytes").unwrap();
    let stops = f.dataset("b/data/shape/stops").unwrap();
    assert_dtype(&bytes, *h5t::H5T_STD_U8LE, "H5T_STD_U8LE");
    assert_dtype(&stops, *h5t::H5T_STD_I64LE, "H5T_STD_I64LE");
    assert_extendible(&bytes);
    assert_extendible(&stops);
    // bincode 2 standard config: variant index as varint, then f64 LE.
    let mut want = vec![0u8];
    want.extend(1.5f64.to_le_bytes());
    want.push(1);
    want.push(0);
    want.extend((-2.0f64).to_le_bytes());
    assert_eq!(bytes.read_raw::<u8>().unwrap(), want);
    assert_eq!(stops.read_raw::<i64>().unwrap(), [9, 10, 19]);
    // Empty encodings repeat the stop.
    assert_eq!(f.dataset("b/data/unit/bytes").unwrap().shape(), [0]);
    assert_eq!(
        f.dataset("b/data/unit/stops")
            .unwrap()
            .read_raw::<i64>()
            .unwrap(),
        [0, 0, 0]
    );

    let ch = record_node(
        &f.group("b/metadata/schema").unwrap(),
        "HDF5Vectors.StructCodec",
        &["shape", "unit"],
    );
    let m = node(
        &ch.group("1").unwrap(),
        "blob",
        "HDF5Vectors.BlobSchema",
        "h5vec.BincodeCodec",
    );
    assert_eq!(m, ["codec", "kind", "logical_type", "schema"]);
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Settings {
    name: String,
    w: Vec<f64>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithJson {
    #[h5vec(json)]
    settings: Settings,
}

#[test]
fn layout_json_is_compact_vlen_text() {
    let f = mem_file();
    let v = vec![WithJson {
        settings: Settings {
            name: "ü \"q\"".into(),
            w: vec![1.5, 2.0],
        },
    }];
    h5vec::save_vector(&f, "j", &v).unwrap();
    assert_eq!(members(&f.group("j/data/settings").unwrap()), ["values"]);
    let ds = f.dataset("j/data/settings/values").unwrap();
    assert_extendible(&ds);
    assert_eq!(vlen_strings(&ds), [r#"{"name":"ü \"q\"","w":[1.5,2.0]}"#]);
    let ch = record_node(
        &f.group("j/metadata/schema").unwrap(),
        "HDF5Vectors.StructCodec",
        &["settings"],
    );
    scalar_node(&ch.group("1").unwrap(), "HDF5Vectors.JSONCodec", "String");
}

#[test]
fn layout_empty_vector() {
    let f = mem_file();
    h5vec::save_vector::<Measurement>(&f, "e", &[]).unwrap();
    assert_eq!(meta_i64(&f.group("e/metadata").unwrap(), "count"), 0);
    let pos = f.dataset("e/data/position/values").unwrap();
    assert_eq!(pos.shape(), [0, 3]);
    assert_extendible(&pos);
    assert_eq!(f.dataset("e/data/temperature/values").unwrap().shape(), [0]);
}

/// Every object below `metadata` as (relative path, object), depth first in
/// name order.
fn walk_meta(g: &Group, at: &str, out: &mut Vec<(String, Option<Dataset>, Option<Group>)>) {
    for name in members(g) {
        let p = format!("{at}/{name}");
        if let Ok(sub) = g.group(&name) {
            out.push((p.clone(), None, Some(sub.clone())));
            walk_meta(&sub, &p, out);
        } else {
            out.push((p, Some(g.dataset(&name).unwrap()), None));
        }
    }
}

#[test]
fn metadata_datasets_are_small_contiguous_and_untimed() {
    use h5vec::hdf5::plist::dataset_create::{AllocTime, FillTime, Layout};
    let f = mem_file();
    h5vec::save_vector(&f, "measurements", &measurements(10)).unwrap();
    let meta = f.group("measurements/metadata").unwrap();
    let mut objs = Vec::new();
    walk_meta(&meta, "metadata", &mut objs);
    // The statistics (SPEC.md section 14) are extendible chunked datasets
    // by design: tests/query.rs checks them.
    objs.retain(|(p, _, _)| !p.starts_with("metadata/SEARCH_INDEXES"));
    let (mut datasets, mut groups) = (0, 0);
    for (p, ds, g) in &objs {
        if let Some(ds) = ds {
            datasets += 1;
            let pl = ds.create_plist().unwrap();
            // SPEC.md section 5: metadata datasets are contiguous, as
            // hdf5-metno's (and h5py's) defaults make them: no times, space
            // allocated late, fill values written only when allocated.
            assert_eq!(pl.layout(), Layout::Contiguous, "{p}");
            assert!(!pl.obj_track_times(), "{p}");
            assert_eq!(pl.alloc_time(), AllocTime::Late, "{p}");
            let leaf = p.rsplit('/').next().unwrap();
            // HDF5 itself switches variable-length datasets to fill at
            // allocation (their fill value is an empty sequence).
            let fill = if leaf == "field_names" {
                FillTime::Alloc
            } else {
                FillTime::IfSet
            };
            assert_eq!(pl.fill_time(), fill, "{p}");
            assert!(pl.filters().is_empty(), "{p}");
            let shape = ds.shape();
            match leaf {
                "field_names" | "dimensions" | "serialized_schema" => {
                    assert_eq!(shape.len(), 1, "{p}");
                    // Fixed size: no unlimited or larger maximum.
                    let max = ds.space().unwrap().maxdims();
                    assert_eq!(max, vec![Some(shape[0])], "{p}");
                }
                _ => assert!(ds.is_scalar(), "{p}: {shape:?}"),
            }
        } else {
            groups += 1;
            // Groups keep HDF5's default creation properties (times kept).
            assert!(
                g.as_ref()
                    .unwrap()
                    .create_plist()
                    .unwrap()
                    .obj_track_times(),
                "{p}"
            );
        }
    }
    // format_name, format_version, logical_type, serialized_schema,
    // schema_was_inferred, count; 2 record nodes of 4 strings and field
    // names, 4 leaf nodes of 5 strings (with encoded_type), 1 dimensions.
    // Groups: schema, 2 `children`, 5 child nodes.
    assert_eq!((datasets, groups), (6 + 2 * 5 + 4 * 5 + 1, 1 + 2 + 5));
    // Datasets' values are the text sized exactly (no NUL padding).
    let kind = meta.dataset("schema/children/3/kind").unwrap();
    assert_eq!(common::str_type(&kind).size, "dense".len());
    assert_eq!(meta_str(&meta, "schema/children/3/kind"), "dense");
    let dims = meta.dataset("schema/children/3/dimensions").unwrap();
    assert_dtype(&dims, *h5t::H5T_STD_I64LE, "H5T_STD_I64LE");
    assert_eq!(dims.read_raw::<i64>().unwrap(), vec![3]);
}
