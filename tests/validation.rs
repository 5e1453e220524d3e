//! Loading validates (SPEC.md section 7): every broken file is an `Err` naming the
//! field path and saying what was expected and what was found; bad names and
//! failed saves leave nothing behind. Broken files are made with the hdf5
//! crate after a normal save.

use h5vec_tests as common;

use std::collections::HashMap;

use common::{bad_name, encode, invalid, mem_file, members, mismatch};
use h5vec::hdf5::types::VarLenUnicode;
use h5vec::hdf5::{self, Group, H5Type};
use h5vec::{Error, H5Vector};
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
                microseconds: i64::from(i) * 7,
            },
            temperature: f64::from(i) / 2.0,
            position: [f64::from(i), 1.0, -1.0],
        })
        .collect()
}

/// A file with 100 measurements saved as `m`.
fn saved() -> hdf5::File {
    let f = mem_file();
    h5vec::save_vector(&f, "m", &measurements(100)).unwrap();
    f
}

/// Loads `name` as `Vec<T>`, which must fail.
#[track_caller]
fn load_err<T: H5Vector>(g: &Group, name: &str) -> Error {
    match h5vec::load_vector::<T>(g, name) {
        Ok(v) => panic!(
            "load of {} succeeded with {} rows",
            std::any::type_name::<T>(),
            v.len()
        ),
        Err(e) => e,
    }
}

/// Replaces dataset `name` in `g` by a contiguous one of `shape` holding `data`.
fn replace<T: H5Type>(g: &Group, name: &str, shape: &[usize], data: &[T]) {
    g.unlink(name).unwrap();
    let ds = g
        .new_dataset::<T>()
        .shape(shape.to_vec())
        .create(name)
        .unwrap();
    ds.write_raw(data).unwrap();
}

/// Replaces dataset `name` in `g` by a scalar holding `v`.
fn replace_scalar<T: H5Type>(g: &Group, name: &str, v: T) {
    g.unlink(name).unwrap();
    g.new_dataset::<T>()
        .shape(())
        .create(name)
        .unwrap()
        .write_scalar(&v)
        .unwrap();
}

/// Asserts a mismatch error with exactly this path, expected and found.
#[track_caller]
fn assert_mismatch(e: &Error, path: &str, expected: &str, found: &str) {
    assert_eq!((e.path(), mismatch(e)), (path, (expected, found)), "{e}");
    let msg = e.to_string();
    let shown = match e.location() {
        Some(loc) => format!("{path} ({loc})"),
        None => path.to_string(),
    };
    assert_eq!(msg, format!("{shown}: expected {expected}, found {found}"));
}

/// Asserts an invalid-data error with exactly this path and message.
#[track_caller]
fn assert_invalid(e: &Error, path: &str, message: &str) {
    assert_eq!((e.path(), invalid(e)), (path, message), "{e}");
}

// --- types and schema ----------------------------------------------------

#[test]
fn wrong_element_type() {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[1.5f64, 2.5]).unwrap();
    let e = load_err::<i32>(&f, "v");
    assert_mismatch(&e, "$", "encoded type `Int32`", "`Float64`");
    let e = load_err::<f32>(&f, "v");
    assert_mismatch(&e, "$", "encoded type `Float32`", "`Float64`");
    let e = load_err::<String>(&f, "v");
    assert_mismatch(&e, "$", "encoded type `String`", "`Float64`");
    let e = load_err::<char>(&f, "v");
    assert_mismatch(
        &e,
        "$",
        "codec `HDF5Vectors.CharCodec`",
        "`HDF5Vectors.IdentityCodec`",
    );
    let e = load_err::<[f64; 3]>(&f, "v");
    assert_mismatch(&e, "$", "schema kind `dense`", "`scalar`");
    let e = load_err::<Measurement>(&f, "v");
    assert_mismatch(&e, "$", "schema kind `record`", "`scalar`");
    let e = load_err::<()>(&f, "v");
    assert_mismatch(&e, "$", "schema kind `constant`", "`scalar`");
}

#[derive(H5Vector, Debug)]
struct GPSTimeStamp64 {
    #[allow(dead_code)]
    weeks: i64,
    #[allow(dead_code)]
    microseconds: i64,
}

#[derive(H5Vector, Debug)]
#[allow(dead_code)]
struct Measurement64 {
    timestamp: GPSTimeStamp64,
    temperature: f64,
    position: [f64; 3],
}

#[derive(H5Vector, Debug)]
#[allow(dead_code)]
struct Measurement4 {
    timestamp: GPSTimeStamp,
    temperature: f64,
    position: [f64; 4],
}

#[test]
fn wrong_field_type_names_the_field() {
    let f = saved();
    let e = load_err::<Measurement64>(&f, "m");
    assert_mismatch(
        &e,
        "$.timestamp.weeks",
        "encoded type `Int64`",
        "`Int32` (LoadOptions::widen_numbers(true) reads it as `Int64` without loss)",
    );
    let e = load_err::<Measurement4>(&f, "m");
    assert_mismatch(&e, "$.position", "dimensions [4]", "[3]");
}

#[derive(H5Vector, Debug)]
#[allow(dead_code)]
struct Renamed {
    timestamp: GPSTimeStamp,
    #[h5vec(rename = "temp")]
    temperature: f64,
    position: [f64; 3],
}

#[derive(H5Vector, Debug, PartialEq)]
#[allow(dead_code)]
struct Reordered {
    temperature: f64,
    timestamp: GPSTimeStamp,
    position: [f64; 3],
}

#[derive(H5Vector, Debug)]
#[allow(dead_code)]
struct Fewer {
    timestamp: GPSTimeStamp,
    temperature: f64,
}

/// Fields are matched by name (SPEC.md section 12): a renamed or removed
/// field is an error listing the difference; another order is not.
#[test]
fn wrong_field_names() {
    let f = saved();
    let e = load_err::<Renamed>(&f, "m");
    assert_mismatch(
        &e,
        "$",
        "the fields of `validation::Renamed`",
        "missing field `temp`, and `temperature` stored with its type: \
         did you mean #[h5vec(alias = \"temperature\")] on `temp`?",
    );
    let reordered = h5vec::load_vector::<Reordered>(&f, "m").unwrap();
    let saved_rows = h5vec::load_vector::<Measurement>(&f, "m").unwrap();
    assert_eq!(reordered.len(), saved_rows.len());
    assert_eq!(reordered[0].temperature, saved_rows[0].temperature);
    let e = load_err::<Fewer>(&f, "m");
    assert_mismatch(
        &e,
        "$",
        "the fields of `validation::Fewer`",
        "extra stored field `position` (LoadOptions::ignore_extra_fields(true) skips it)",
    );
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pair(i32, f64);

#[test]
fn tuple_and_tuple_struct_codecs_differ() {
    let f = mem_file();
    h5vec::save_vector(&f, "t", &[(1i32, 2.0f64)]).unwrap();
    h5vec::save_vector(&f, "p", &[Pair(1, 2.0)]).unwrap();
    let e = load_err::<Pair>(&f, "t");
    assert_mismatch(
        &e,
        "$",
        "codec `HDF5Vectors.StructCodec`",
        "`HDF5Vectors.TupleCodec`",
    );
    let e = load_err::<(i32, f64)>(&f, "p");
    assert_mismatch(
        &e,
        "$",
        "codec `HDF5Vectors.TupleCodec`",
        "`HDF5Vectors.StructCodec`",
    );
    let e = load_err::<(i32, f64, u8)>(&f, "t");
    assert_mismatch(
        &e,
        "$",
        "the fields of `(i32, f64, u8)`",
        "missing field `3` (#[h5vec(default)] fills it in files without it)",
    );
}

#[test]
fn schema_entry_missing_or_tampered() {
    let f = saved();
    let s = f.group("m/metadata/schema/children/1/children/2").unwrap();
    s.unlink("encoded_type").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(
        &e,
        "$.timestamp.microseconds",
        "encoded type `Int64`",
        "`(none)`",
    );

    let f = saved();
    let s = f.group("m/metadata/schema").unwrap();
    s.unlink("kind").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "schema entry `kind`", "nothing");

    let f = saved();
    let s = f.group("m/metadata/schema/children/3").unwrap();
    replace(&s, "dimensions", &[1], &[4i64]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.position", "dimensions [3]", "[4]");
}

// --- group members ---------------------------------------------------------

#[test]
fn extra_member_in_a_data_group() {
    let f = saved();
    let ts = f.group("m/data/timestamp").unwrap();
    ts.new_dataset::<i32>().shape(100).create("extra").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(
        &e,
        "$.timestamp",
        r#"members ["microseconds", "weeks"]"#,
        r#"["extra", "microseconds", "weeks"]"#,
    );

    let f = saved();
    f.group("m/data/temperature")
        .unwrap()
        .create_group("stale")
        .unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(
        &e,
        "$.temperature",
        r#"members ["values"]"#,
        r#"["stale", "values"]"#,
    );
}

#[test]
fn missing_member_in_a_data_group() {
    let f = saved();
    f.group("m/data").unwrap().unlink("temperature").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(
        &e,
        "$",
        r#"members ["position", "temperature", "timestamp"]"#,
        r#"["position", "timestamp"]"#,
    );

    let f = saved();
    f.group("m/data/position")
        .unwrap()
        .unlink("values")
        .unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.position", r#"members ["values"]"#, "[]");
}

#[test]
fn extra_or_missing_member_in_the_vector_group() {
    let f = saved();
    f.group("m").unwrap().create_group("notes").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(
        &e,
        "$",
        r#"members ["data", "metadata"]"#,
        r#"["data", "metadata", "notes"]"#,
    );

    let f = saved();
    f.group("m").unwrap().unlink("data").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(
        &e,
        "$",
        r#"members ["data", "metadata"]"#,
        r#"["metadata"]"#,
    );
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
struct Marker;

#[test]
fn constant_data_group_must_be_empty() {
    let f = mem_file();
    h5vec::save_vector(&f, "c", &[Marker; 3]).unwrap();
    assert_eq!(h5vec::load_vector::<Marker>(&f, "c").unwrap(), [Marker; 3]);
    f.group("c/data")
        .unwrap()
        .new_dataset::<u8>()
        .shape(3)
        .create("values")
        .unwrap();
    let e = load_err::<Marker>(&f, "c");
    assert_mismatch(&e, "$", "members []", r#"["values"]"#);
}

// --- datasets ------------------------------------------------------------

#[test]
fn wrong_rank_or_shape() {
    let f = saved();
    let g = f.group("m/data/position").unwrap();
    replace(&g, "values", &[100, 4], &vec![0.0f64; 400]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.position", "shape (N, 3)", "[100, 4]");

    let f = saved();
    let g = f.group("m/data/position").unwrap();
    replace(&g, "values", &[300], &vec![0.0f64; 300]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.position", "shape (N, 3)", "[300]");

    let f = saved();
    let g = f.group("m/data/temperature").unwrap();
    replace(&g, "values", &[100, 1], &vec![0.0f64; 100]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.temperature", "shape (N)", "[100, 1]");

    let f = saved();
    let g = f.group("m/data/temperature").unwrap();
    replace_scalar(&g, "values", 1.0f64);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.temperature", "shape (N)", "[]");
}

#[test]
fn wrong_dtype() {
    let f = saved();
    let g = f.group("m/data/temperature").unwrap();
    replace(&g, "values", &[100], &vec![0.0f32; 100]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.temperature", "Float64", "float32");

    let f = saved();
    let g = f.group("m/data/timestamp/weeks").unwrap();
    replace(&g, "values", &[100], &vec![0u32; 100]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.timestamp.weeks", "Int32", "uint32");

    let f = saved();
    let g = f.group("m/data/timestamp/weeks").unwrap();
    replace(&g, "values", &[100], &vec![0i64; 100]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.timestamp.weeks", "Int32", "int64");

    let f = mem_file();
    h5vec::save_vector(&f, "s", &["a".to_string()]).unwrap();
    let g = f.group("s/data").unwrap();
    replace(&g, "values", &[1], &[7u8]);
    let e = load_err::<String>(&f, "s");
    assert_mismatch(&e, "$", "variable-length UTF-8 strings", "uint8");

    let f = mem_file();
    h5vec::save_vector(&f, "b", &[true]).unwrap();
    let g = f.group("b/data").unwrap();
    replace(&g, "values", &[1], &[7i16]);
    let e = load_err::<bool>(&f, "b");
    assert_mismatch(&e, "$", "Bool", "int16");
}

#[test]
fn column_shorter_than_count() {
    let f = saved();
    let g = f.group("m/data/temperature").unwrap();
    replace(&g, "values", &[99], &vec![0.0f64; 99]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.temperature", "at least 100 rows", "99");

    let f = saved();
    let g = f.group("m/data/position").unwrap();
    replace(&g, "values", &[0, 3], &[0.0f64; 0]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.position", "at least 100 rows", "0");
}

#[test]
fn column_longer_than_count_loads_count_rows() {
    let ms = measurements(100);
    let f = saved();
    let g = f.group("m/data/temperature").unwrap();
    let mut t: Vec<f64> = ms.iter().map(|m| m.temperature).collect();
    t.push(-999.0);
    replace(&g, "values", &[101], &t);
    let g = f.group("m/data/position").unwrap();
    let mut p: Vec<f64> = ms.iter().flat_map(|m| m.position).collect();
    p.extend([7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
    replace(&g, "values", &[102, 3], &p);
    let back = h5vec::load_vector::<Measurement>(&f, "m").unwrap();
    assert_eq!(back.len(), 100);
    assert_eq!(back, ms);
}

#[test]
fn count_larger_than_columns() {
    let f = saved();
    let meta = f.group("m/metadata").unwrap();
    replace_scalar(&meta, "count", 101i64);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$.timestamp.weeks", "at least 101 rows", "100");
    let f = saved();
    replace_scalar(&f.group("m/metadata").unwrap(), "count", i64::MAX);
    let e = load_err::<Measurement>(&f, "m");
    assert_eq!(mismatch(&e).0, format!("at least {} rows", i64::MAX));
}

// --- metadata ------------------------------------------------------------

#[test]
fn count_missing_negative_not_scalar_not_int64() {
    let f = saved();
    f.group("m/metadata").unwrap().unlink("count").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "a scalar Int64 `count`", "nothing");

    let f = saved();
    replace_scalar(&f.group("m/metadata").unwrap(), "count", -1i64);
    let e = load_err::<Measurement>(&f, "m");
    assert_invalid(&e, "$", "negative count -1");

    let f = saved();
    replace(&f.group("m/metadata").unwrap(), "count", &[1], &[100i64]);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "a scalar", "shape [1]");

    let f = saved();
    replace_scalar(&f.group("m/metadata").unwrap(), "count", 100i32);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "Int64", "int32");

    let f = saved();
    replace_scalar(&f.group("m/metadata").unwrap(), "count", 100u64);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "Int64", "uint64");

    let f = saved();
    replace_scalar(&f.group("m/metadata").unwrap(), "count", 100.0f64);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "Int64", "float64");

    let f = saved();
    let meta = f.group("m/metadata").unwrap();
    meta.unlink("count").unwrap();
    meta.create_group("count").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "a dataset", "a group");
}

#[test]
fn format_name_wrong() {
    let f = saved();
    let meta = f.group("m/metadata").unwrap();
    replace_scalar(
        &meta,
        "format_name",
        "HDF5Vectorz".parse::<VarLenUnicode>().unwrap(),
    );
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "\"HDF5Vectors\"", "\"HDF5Vectorz\"");

    let f = saved();
    let meta = f.group("m/metadata").unwrap();
    replace_scalar(&meta, "format_name", 1i64);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "a scalar string", "int64");

    let f = saved();
    f.group("m/metadata")
        .unwrap()
        .unlink("format_name")
        .unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "a format_name dataset", "nothing");
}

#[test]
fn format_version_2() {
    let f = saved();
    replace_scalar(&f.group("m/metadata").unwrap(), "format_version", 2i64);
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "1", "2");

    let f = saved();
    f.group("m/metadata")
        .unwrap()
        .unlink("format_version")
        .unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "a scalar Int64 `format_version`", "nothing");
}

#[test]
fn missing_vector() {
    let f = mem_file();
    let e = load_err::<f64>(&f, "nope");
    assert_eq!(e.location(), Some("/nope"), "{e}");
    assert!(matches!(e.kind(), h5vec::ErrorKind::NotFound(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "$ (/nope): not found: no vector `nope` in `/`"
    );
}

// --- blob ------------------------------------------------------------------

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Shape {
    Circle(f64),
    Empty,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithBlob {
    #[h5vec(blob)]
    shape: Shape,
}

/// Three blobs: bytes are 19 long, stops [9, 10, 19].
fn saved_blob() -> hdf5::File {
    let f = mem_file();
    let v = vec![
        WithBlob {
            shape: Shape::Circle(1.5),
        },
        WithBlob {
            shape: Shape::Empty,
        },
        WithBlob {
            shape: Shape::Circle(-2.0),
        },
    ];
    h5vec::save_vector(&f, "b", &v).unwrap();
    assert_eq!(h5vec::load_vector::<WithBlob>(&f, "b").unwrap(), v);
    assert_eq!(
        f.dataset("b/data/shape/stops")
            .unwrap()
            .read_raw::<i64>()
            .unwrap(),
        [9, 10, 19]
    );
    f
}

fn set_stops(f: &hdf5::File, stops: &[i64]) {
    f.dataset("b/data/shape/stops")
        .unwrap()
        .write_raw(stops)
        .unwrap();
}

#[test]
fn blob_stops_decreasing() {
    let f = saved_blob();
    set_stops(&f, &[9, 5, 19]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_invalid(&e, "$.shape[1]", "stops must not decrease: 5 after 9");
}

#[test]
fn blob_stops_negative() {
    let f = saved_blob();
    set_stops(&f, &[-1, 10, 19]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_eq!(e.path(), "$.shape[0]", "{e}");
    invalid(&e);

    let f = saved_blob();
    set_stops(&f, &[9, 10, -1]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_invalid(
        &e,
        "$.shape[2]",
        "last stop -1 does not fit the 19 bytes of `bytes`",
    );
}

#[test]
fn blob_last_stop_beyond_bytes() {
    let f = saved_blob();
    set_stops(&f, &[9, 10, 25]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_invalid(
        &e,
        "$.shape[2]",
        "last stop 25 does not fit the 19 bytes of `bytes`",
    );

    let f = saved_blob();
    set_stops(&f, &[9, 30, 19]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_invalid(
        &e,
        "$.shape[1]",
        "stop 30 is past the end of `bytes` (19 bytes)",
    );

    let f = saved_blob();
    set_stops(&f, &[9, 10, i64::MAX]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_eq!(e.path(), "$.shape[2]");
    invalid(&e);
}

#[test]
fn blob_bad_bytes_name_the_element() {
    let f = saved_blob();
    // Row 0 takes one byte of row 1: a trailing byte.
    set_stops(&f, &[10, 10, 19]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_invalid(
        &e,
        "$.shape[0]",
        "cannot decode blob: 1 trailing bytes after the value",
    );

    let f = saved_blob();
    let mut bytes = f
        .dataset("b/data/shape/bytes")
        .unwrap()
        .read_raw::<u8>()
        .unwrap();
    bytes[9] = 7; // variant 7 of a 2-variant enum
    f.dataset("b/data/shape/bytes")
        .unwrap()
        .write_raw(&bytes)
        .unwrap();
    let e = load_err::<WithBlob>(&f, "b");
    assert_eq!(e.path(), "$.shape[1]", "{e}");
    assert!(invalid(&e).starts_with("cannot decode blob: "), "{e}");
}

#[test]
fn blob_stops_shorter_than_count_and_missing_bytes() {
    let f = saved_blob();
    let g = f.group("b/data/shape").unwrap();
    replace(&g, "stops", &[2], &[9i64, 10]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_mismatch(&e, "$.shape", "at least 3 rows", "2");

    let f = saved_blob();
    f.group("b/data/shape").unwrap().unlink("bytes").unwrap();
    let e = load_err::<WithBlob>(&f, "b");
    assert_mismatch(
        &e,
        "$.shape",
        r#"members ["bytes", "stops"]"#,
        r#"["stops"]"#,
    );

    let f = saved_blob();
    let g = f.group("b/data/shape").unwrap();
    replace(&g, "stops", &[3], &[9i32, 10, 19]);
    let e = load_err::<WithBlob>(&f, "b");
    assert_mismatch(&e, "$.shape", "Int64", "int32");
}

#[test]
fn blob_longer_columns_load_count_rows() {
    let f = saved_blob();
    let g = f.group("b/data/shape").unwrap();
    let mut bytes = g.dataset("bytes").unwrap().read_raw::<u8>().unwrap();
    bytes.extend([0xAA; 5]);
    replace(&g, "bytes", &[bytes.len()], &bytes);
    replace(&g, "stops", &[4], &[9i64, 10, 19, 24]);
    let back = h5vec::load_vector::<WithBlob>(&f, "b").unwrap();
    assert_eq!(
        back,
        [
            WithBlob {
                shape: Shape::Circle(1.5)
            },
            WithBlob {
                shape: Shape::Empty
            },
            WithBlob {
                shape: Shape::Circle(-2.0)
            },
        ]
    );
}

// --- invalid scalar values -------------------------------------------------

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithChar {
    id: u8,
    c: char,
    cc: [char; 2],
}

#[test]
fn invalid_char_code_point_names_the_element() {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &['a', 'b', 'c', 'd']).unwrap();
    for bad in [0xD800i32, 0xDFFF, 0x11_0000, -1, i32::MIN] {
        f.dataset("v/data/values")
            .unwrap()
            .write_raw(&[0x61i32, 0x62, bad, 0x64])
            .unwrap();
        let e = load_err::<char>(&f, "v");
        assert_invalid(
            &e,
            "$[2]",
            "expected a Unicode scalar value (0..=0x10FFFF, not a surrogate) in $ (/v/data/values)",
        );
    }

    let v: Vec<WithChar> = (0..3)
        .map(|i| WithChar {
            id: i,
            c: 'x',
            cc: ['y', 'z'],
        })
        .collect();
    h5vec::save_vector(&f, "w", &v).unwrap();
    f.dataset("w/data/c/values")
        .unwrap()
        .write_raw(&[0x78i32, 0xD800, 0x78])
        .unwrap();
    let e = load_err::<WithChar>(&f, "w");
    assert_invalid(
        &e,
        "$.c[1]",
        "expected a Unicode scalar value (0..=0x10FFFF, not a surrogate) in $.c (/w/data/c/values)",
    );

    f.dataset("w/data/c/values")
        .unwrap()
        .write_raw(&[0x78i32; 3])
        .unwrap();
    f.dataset("w/data/cc/values")
        .unwrap()
        .write_raw(&[0x79i32, 0x7A, 0x79, 0x7A, 0x79, 0xD800])
        .unwrap();
    let e = load_err::<WithChar>(&f, "w");
    assert_invalid(
        &e,
        "$.cc[2]",
        "expected a Unicode scalar value (0..=0x10FFFF, not a surrogate) in every entry",
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
    Zero = 0,
}

#[test]
fn invalid_enum_discriminant_names_the_element() {
    let f = mem_file();
    h5vec::save_vector(&f, "c", &[Color::Red, Color::Blue, Color::Red]).unwrap();
    f.dataset("c/data/values")
        .unwrap()
        .write_raw(&[1u8, 200, 3])
        .unwrap();
    let e = load_err::<Color>(&f, "c");
    assert_invalid(
        &e,
        "$[2]",
        "expected a discriminant of `Color` (Red, Blue) in $ (/c/data/values)",
    );

    h5vec::save_vector(&f, "l", &[Level::Neg, Level::Zero]).unwrap();
    f.dataset("l/data/values")
        .unwrap()
        .write_raw(&[-6i32, 0])
        .unwrap();
    let e = load_err::<Level>(&f, "l");
    assert_invalid(
        &e,
        "$[0]",
        "expected a discriminant of `Level` (Neg, Zero) in $ (/l/data/values)",
    );

    h5vec::save_vector(&f, "a", &[[Color::Red, Color::Blue]; 2]).unwrap();
    f.dataset("a/data/values")
        .unwrap()
        .write_raw(&[1u8, 200, 0, 200])
        .unwrap();
    let e = load_err::<[Color; 2]>(&f, "a");
    assert_invalid(
        &e,
        "$[1]",
        "expected a discriminant of `Color` (Red, Blue) in every entry",
    );
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithJson {
    #[h5vec(json)]
    map: HashMap<String, u32>,
}

#[test]
fn invalid_json_names_the_element() {
    let f = mem_file();
    let v: Vec<WithJson> = (0..3)
        .map(|i| WithJson {
            map: HashMap::from([("k".to_string(), i)]),
        })
        .collect();
    h5vec::save_vector(&f, "j", &v).unwrap();
    let g = f.group("j/data/map").unwrap();
    let texts: Vec<VarLenUnicode> = [r#"{"k":0}"#, r#"{"k":-1}"#, "{"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    replace(&g, "values", &[3], &texts);
    let e = load_err::<WithJson>(&f, "j");
    assert_eq!(e.path(), "$.map[1]", "{e}");
    assert!(invalid(&e).starts_with("bad JSON: "), "{e}");
}

#[test]
fn invalid_utf8_string_names_the_element() {
    let f = mem_file();
    h5vec::save_vector(&f, "s", &["ok".to_string(), "fine".to_string()]).unwrap();
    let ds = f.dataset("s/data/values").unwrap();
    let good = c"ok";
    let bad = b"\xff\xfe\0";
    let ptrs: [*const std::ffi::c_char; 2] = [good.as_ptr(), bad.as_ptr().cast()];
    let mt = hdf5::Datatype::from_type::<VarLenUnicode>().unwrap();
    // SAFETY: a valid dataset and type under the lock; `ptrs` holds the two elements written.
    hdf5::sync::sync(|| unsafe {
        let r = hdf5_sys::h5d::H5Dwrite(
            ds.id(),
            mt.id(),
            hdf5_sys::h5s::H5S_ALL,
            hdf5_sys::h5s::H5S_ALL,
            hdf5_sys::h5p::H5P_DEFAULT,
            ptrs.as_ptr().cast(),
        );
        assert!(r >= 0);
    });
    let e = load_err::<String>(&f, "s");
    assert_invalid(&e, "$[1]", "string is not valid UTF-8");
}

// --- names -----------------------------------------------------------------

#[test]
fn bad_names_on_save_and_load() {
    let f = mem_file();
    // The path is the vector's (`$`); the location, the HDF5 path the name
    // would have (NUL escaped).
    let cases = [
        ("", "/", "the vector name is empty"),
        (".", "/.", "`.` and `..` are not vector names"),
        ("..", "/..", "`.` and `..` are not vector names"),
        (
            "a/b",
            "/a/b",
            "the vector name contains `/` (create the parent group and pass it instead)",
        ),
        ("a\0b", "/a\\0b", "the vector name contains a NUL byte"),
    ];
    for (name, location, msg) in cases {
        let e = h5vec::save_vector(&f, name, &[1.0f64]).expect_err(name);
        assert_eq!(
            (e.path(), e.location(), bad_name(&e)),
            ("$", Some(location), msg),
            "{name:?}"
        );
        let e = load_err::<f64>(&f, name);
        assert_eq!(
            (e.path(), e.location(), bad_name(&e)),
            ("$", Some(location), msg),
            "{name:?}"
        );
    }
    assert_eq!(members(&f), Vec::<String>::new());
}

#[test]
fn saving_over_an_existing_name_fails_and_keeps_the_old_vector() {
    let f = saved();
    let e = h5vec::save_vector(&f, "m", &[1.0f64, 2.0]).expect_err("overwrite");
    assert_eq!(
        (e.path(), e.location(), bad_name(&e)),
        (
            "$",
            Some("/m"),
            "vector `m` already exists in `/` (use SaveOptions::replace(true) to replace it)"
        )
    );
    assert_eq!(
        h5vec::load_vector::<Measurement>(&f, "m").unwrap(),
        measurements(100)
    );

    let g = f.create_group("sub").unwrap();
    g.new_dataset::<u8>().shape(1).create("taken").unwrap();
    let e = h5vec::save_vector(&g, "taken", &[1u8]).expect_err("over a dataset");
    assert_eq!(
        (e.path(), e.location(), bad_name(&e)),
        (
            "$",
            Some("/sub/taken"),
            "vector `taken` already exists in `/sub` (use SaveOptions::replace(true) to replace it)"
        )
    );
    assert_eq!(members(&g), ["taken"]);
}

// --- failed saves leave nothing ---------------------------------------------

#[test]
fn failed_save_midway_leaves_no_group() {
    let f = mem_file();
    let mut v: Vec<String> = (0..200_000).map(|i| format!("s{i}")).collect();
    v[150_000] = "bad\0string".into();
    let e = h5vec::save_vector(&f, "s", &v).expect_err("NUL");
    assert_eq!(e.path(), "$[150000]");
    assert_eq!(
        encode(&e),
        "string contains a NUL byte, which HDF5 variable-length strings cannot hold (use #[h5vec(vls)])"
    );
    assert_eq!(members(&f), Vec::<String>::new());
    // The name is free again.
    v[150_000] = "good".into();
    h5vec::save_vector(&f, "s", &v).unwrap();
    assert_eq!(h5vec::load_vector::<String>(&f, "s").unwrap(), v);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Named {
    id: u32,
    name: String,
}

#[test]
fn failed_save_in_a_field_names_the_field() {
    let f = mem_file();
    let g = f.create_group("g").unwrap();
    let mut v: Vec<Named> = (0..100)
        .map(|id| Named {
            id,
            name: "n".into(),
        })
        .collect();
    v[42].name = "\0".into();
    let e = h5vec::save_vector(&g, "n", &v).expect_err("NUL");
    assert_eq!(e.path(), "$.name[42]");
    encode(&e);
    assert_eq!(members(&g), Vec::<String>::new());
}

/// Serializes fine except for the value 13.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Fragile(u32);

impl Serialize for Fragile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 == 13 {
            return Err(serde::ser::Error::custom("thirteen is unlucky"));
        }
        s.serialize_u32(self.0)
    }
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithFragile {
    id: u64,
    #[h5vec(blob)]
    f: Fragile,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithFragileJson {
    id: u64,
    #[h5vec(json)]
    f: Fragile,
}

#[test]
fn failed_blob_serialize_leaves_no_group() {
    let f = mem_file();
    let mut v: Vec<WithFragile> = (0..100_000)
        .map(|id| WithFragile { id, f: Fragile(1) })
        .collect();
    v[70_000].f = Fragile(13);
    let e = h5vec::save_vector(&f, "b", &v).expect_err("serialize");
    assert_eq!(e.path(), "$.f[70000]");
    assert!(encode(&e).contains("thirteen is unlucky"), "{e}");
    assert_eq!(members(&f), Vec::<String>::new());

    v[70_000].f = Fragile(12);
    h5vec::save_vector(&f, "b", &v).unwrap();
    assert_eq!(h5vec::load_vector::<WithFragile>(&f, "b").unwrap(), v);
}

#[test]
fn failed_json_serialize_names_the_row_and_leaves_no_group() {
    let f = mem_file();
    let mut v: Vec<WithFragileJson> = (0..10)
        .map(|id| WithFragileJson { id, f: Fragile(1) })
        .collect();
    v[5].f = Fragile(13);
    let e = h5vec::save_vector(&f, "j", &v).expect_err("serialize");
    assert_eq!(e.path(), "$.f[5]");
    assert_eq!(encode(&e), "thirteen is unlucky");
    assert_eq!(members(&f), Vec::<String>::new());
}

#[test]
fn no_error_is_a_panic_on_random_tampering() {
    // Every way of dropping one node of the file is an error, never a panic.
    let f = saved();
    let mut paths = Vec::new();
    collect(&f.group("m").unwrap(), &mut paths);
    assert!(paths.len() > 30, "{paths:?}");
    for p in paths {
        let f = saved();
        let (parent, name) = p.rsplit_once('/').unwrap();
        let parent = if parent.is_empty() { "/" } else { parent };
        f.group(parent).unwrap().unlink(name).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            h5vec::load_vector::<Measurement>(&f, "m")
        }));
        match r {
            Ok(Ok(_))
                if p.ends_with("logical_type")
                    || p.ends_with("serialized_schema")
                    || p.ends_with("schema_was_inferred")
                    // Statistics are optional (SPEC.md section 14).
                    || p.contains("/metadata/SEARCH_INDEXES") => {}
            Ok(Ok(_)) => panic!("load succeeded without {p}"),
            Ok(Err(e)) => assert!(
                e.path().starts_with('$') || e.path().starts_with("vector"),
                "{p}: {e}"
            ),
            Err(_) => panic!("load panicked without {p}"),
        }
    }
}

fn collect(g: &Group, out: &mut Vec<String>) {
    for name in g.member_names().unwrap() {
        let p = format!("{}/{name}", g.name());
        out.push(p.clone());
        if let Ok(sub) = g.group(&name) {
            collect(&sub, out);
        }
    }
}

#[test]
fn datasets_where_groups_belong() {
    let f = saved();
    let data = f.group("m/data").unwrap();
    data.unlink("timestamp").unwrap();
    data.new_dataset::<i32>()
        .shape(100)
        .create("timestamp")
        .unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(
        &e,
        "$.timestamp",
        "`/m/data/timestamp` to be a group",
        "a dataset",
    );

    let f = saved();
    let v = f.group("m").unwrap();
    v.unlink("data").unwrap();
    v.new_dataset::<u8>().shape(1).create("data").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(&e, "$", "`/m/data` to be a group", "a dataset");

    let f = mem_file();
    let g = f.create_group("g").unwrap();
    g.new_dataset::<f64>().shape(3).create("x").unwrap();
    let e = load_err::<f64>(&g, "x");
    assert_mismatch(&e, "$", "`/g/x` to be a group", "a dataset");

    let f = saved();
    let g = f.group("m/data/temperature").unwrap();
    g.unlink("values").unwrap();
    g.create_group("values").unwrap();
    let e = load_err::<Measurement>(&f, "m");
    assert_mismatch(
        &e,
        "$.temperature",
        "`/m/data/temperature/values` to be a dataset",
        "a group",
    );
}

#[test]
fn paths_below_the_root_group_have_one_slash() {
    let f = mem_file();
    f.new_dataset::<f64>().shape(3).create("x").unwrap();
    let e = load_err::<f64>(&f, "x");
    assert_mismatch(&e, "$", "`/x` to be a group", "a dataset");
}

/// A count larger than the stored rows is an error where the count is
/// read (vector_len, inspect, find_containers), not only when values are.
#[test]
fn count_larger_than_columns_is_an_error_for_the_length_too() {
    let f = saved();
    assert_eq!(h5vec::vector_len(&f, "m").unwrap(), 100);
    replace_scalar(&f.group("m/metadata").unwrap(), "count", 101i64);
    for e in [
        h5vec::vector_len(&f, "m").unwrap_err(),
        h5vec::inspect(&f, "m").map(|_| ()).unwrap_err(),
    ] {
        assert_mismatch(&e, "$.timestamp.weeks", "at least 101 rows", "100");
    }
    let found = h5vec::find_containers(&f).unwrap();
    let m = found.iter().find(|c| c.path == "/m").unwrap();
    assert_eq!(m.rows, 0);
    let problem = m.problem.as_deref().unwrap();
    assert!(problem.contains("at least 101 rows"), "{problem}");
}
