//! Stored booleans are 0 or 1 (SPEC.md section 7): any other code, in any
//! way a bool is stored (h5vec's bitfield, an HDF5 enum FALSE = 0 / TRUE = 1
//! as h5py and HDF5Vectors.jl write it, a plain 1-byte integer, the h5col
//! bool of list VALUES and table columns), is an error naming the row, on
//! every read path; 0 and 1 still load exactly.

use h5vec::hdf5::{self, Group};
use h5vec::{H5Vector, VectorReader};
use h5vec_tests as common;
use serde::{Deserialize, Serialize};

#[derive(H5Vector, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Row {
    id: u32,
    flag: bool,
}

fn rows(n: u32) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: i,
            flag: i % 3 == 0,
        })
        .collect()
}

const N: u32 = 40;

/// Overwrites element `index` (row-major over every axis) of the 1-byte
/// dataset `ds` with `code`, through the dataset's own type (no conversion).
fn poke(ds: &hdf5::Dataset, index: usize, code: u8) {
    common::with_dtype(ds, |dt| {
        let mut raw = vec![0u8; ds.size()];
        // SAFETY: a dataset of a 1-byte type read and written whole with its
        // own type into a buffer of one byte per element.
        unsafe {
            assert_eq!(hdf5_sys::h5t::H5Tget_size(dt), 1, "{}", ds.name());
            assert!(hdf5_sys::h5d::H5Dread(ds.id(), dt, 0, 0, 0, raw.as_mut_ptr().cast()) >= 0);
            raw[index] = code;
            assert!(hdf5_sys::h5d::H5Dwrite(ds.id(), dt, 0, 0, 0, raw.as_ptr().cast()) >= 0);
        }
    });
}

/// The stored codes of the 1-byte dataset `ds`, unconverted.
fn codes(ds: &hdf5::Dataset) -> Vec<u8> {
    common::with_dtype(ds, |dt| {
        let mut raw = vec![0u8; ds.size()];
        // SAFETY: as in `poke`.
        unsafe {
            assert!(hdf5_sys::h5d::H5Dread(ds.id(), dt, 0, 0, 0, raw.as_mut_ptr().cast()) >= 0);
        }
        raw
    })
}

/// Replaces `path` (the bitfield of a bool column) by a dataset of the same
/// codes stored as `kind`: "enum" (hdf5-metno's `bool`: an enum over int8
/// with FALSE = 0, TRUE = 1, what h5py writes) or "u8".
fn restore_as(f: &Group, path: &str, kind: &str) {
    let old = f.dataset(path).unwrap();
    let bytes = codes(&old);
    drop(old);
    f.unlink(path).unwrap();
    match kind {
        "enum" => {
            let vals: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
            let ds = f
                .new_dataset_builder()
                .with_data(&vals)
                .create(path)
                .unwrap();
            assert!(common::is_h5col_bool(&ds));
        }
        "u8" => {
            f.new_dataset_builder()
                .with_data(&bytes)
                .create(path)
                .unwrap();
        }
        _ => unreachable!(),
    }
}

/// Every typed and untyped way to read vector `v` of [`Row`]s fails with
/// exactly `want`.
fn every_path_refuses(f: &Group, want: &str) {
    let shown = |r: Result<(), h5vec::Error>| r.unwrap_err().to_string();
    assert_eq!(
        shown(h5vec::load_vector::<Row>(f, "v").map(drop)),
        want,
        "load_vector"
    );
    assert_eq!(
        shown(h5vec::load_range::<Row>(f, "v", 10..20).map(drop)),
        want,
        "load_range"
    );
    assert_eq!(
        shown(h5vec::load_column::<bool>(f, "v", "flag").map(drop)),
        want,
        "load_column"
    );
    let reader = VectorReader::<Row>::open(f, "v", 8).unwrap();
    let read: Result<Vec<Vec<Row>>, _> = reader.collect();
    assert_eq!(shown(read.map(drop)), want, "VectorReader");
    assert_eq!(
        shown(h5vec::serde::load_vector::<Row>(f, "v").map(drop)),
        want,
        "serde"
    );
    assert_eq!(
        shown(h5vec::arrow::read_vector(f, "v").map(drop)),
        want,
        "arrow"
    );
    assert_eq!(
        shown(h5vec::arrow::read_range(f, "v", 15..18).map(drop)),
        want,
        "arrow range"
    );
}

/// What loading says about code `code` at row 17 of `$.flag`, stored at `ds`.
fn refused(ds: &str, code: u8) -> String {
    format!("$.flag[17] ({ds}): invalid data: bool value {code} is neither 0 (false) nor 1 (true)")
}

#[test]
fn bitfield_enum_and_byte_bools_other_than_0_1_are_refused_on_every_path() {
    for kind in ["bitfield", "enum", "u8"] {
        for code in [2u8, 255] {
            let (_d, f) = common::h5vec_file();
            h5vec::save_vector(&f, "v", &rows(N)).unwrap();
            if kind != "bitfield" {
                restore_as(&f, "v/data/flag/values", kind);
            }
            // 0 and 1 load exactly, through the typed and the untyped path.
            assert_eq!(
                h5vec::load_vector::<Row>(&f, "v").unwrap(),
                rows(N),
                "{kind}"
            );
            assert_eq!(h5vec::serde::load_vector::<Row>(&f, "v").unwrap(), rows(N));
            let b = h5vec::arrow::read_vector(&f, "v").unwrap();
            let flags = b
                .column(1)
                .as_any()
                .downcast_ref::<arrow_array::BooleanArray>();
            let want: Vec<Option<bool>> = rows(N).iter().map(|r| Some(r.flag)).collect();
            assert_eq!(flags.unwrap().iter().collect::<Vec<_>>(), want);

            poke(&f.dataset("v/data/flag/values").unwrap(), 17, code);
            every_path_refuses(&f, &refused("/v/data/flag/values", code));
            // Rows before the bad one still load.
            assert_eq!(h5vec::load_range::<Row>(&f, "v", 0..17).unwrap(), rows(17));
        }
    }
}

#[derive(H5Vector, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Shapes {
    opt: Option<bool>,
    list: Vec<bool>,
    arr: [bool; 3],
    nested: Vec<Vec<bool>>,
}

fn shapes(n: usize) -> Vec<Shapes> {
    (0..n)
        .map(|i| Shapes {
            opt: (i % 4 != 1).then_some(i % 2 == 0),
            list: (0..i % 3).map(|k| k == 1).collect(),
            arr: [i % 2 == 0, true, false],
            nested: vec![vec![i % 5 == 0]],
        })
        .collect()
}

/// Element `index` of dataset `ds` set to `code`, then every reader of
/// vector `s` of [`Shapes`] refuses it with exactly `want`.
fn shapes_refuse(ds: &str, index: usize, code: u8, want: &str) {
    let (_d, f) = common::h5vec_file();
    h5vec::save_vector(&f, "s", &shapes(12)).unwrap();
    assert_eq!(h5vec::load_vector::<Shapes>(&f, "s").unwrap(), shapes(12));
    assert_eq!(
        h5vec::serde::load_vector::<Shapes>(&f, "s").unwrap(),
        shapes(12)
    );
    poke(&f.dataset(ds).unwrap(), index, code);
    let shown = |r: Result<(), h5vec::Error>| r.unwrap_err().to_string();
    assert_eq!(
        shown(h5vec::load_vector::<Shapes>(&f, "s").map(drop)),
        want,
        "typed"
    );
    let reader = VectorReader::<Shapes>::open(&f, "s", 5).unwrap();
    let read: Result<Vec<Vec<Shapes>>, _> = reader.collect();
    assert_eq!(shown(read.map(drop)), want, "VectorReader");
    assert_eq!(
        shown(h5vec::serde::load_vector::<Shapes>(&f, "s").map(drop)),
        want,
        "serde"
    );
    assert_eq!(
        shown(h5vec::arrow::read_vector(&f, "s").map(drop)),
        want,
        "arrow"
    );
}

#[test]
fn bools_in_options_lists_arrays_and_nested_lists_are_refused() {
    for code in [2u8, 255] {
        let tail = format!("invalid data: bool value {code} is neither 0 (false) nor 1 (true)");
        // Option<bool>: row 6's value (present: 6 % 4 != 1).
        shapes_refuse(
            "s/data/opt/values",
            6,
            code,
            &format!("$.opt[6] (/s/data/opt/values): {tail}"),
        );
        // Vec<bool>: VALUES (the h5col enum), element 3 of the flat values.
        shapes_refuse(
            "s/data/list/VALUES",
            3,
            code,
            &format!("$.list[][3] (/s/data/list/VALUES): {tail}"),
        );
        // [bool; 3]: row 4, entry 2.
        shapes_refuse(
            "s/data/arr/values",
            4 * 3 + 2,
            code,
            &format!("$.arr[4] (/s/data/arr/values): invalid data: entry 2: bool value {code} is neither 0 (false) nor 1 (true)"),
        );
        // Vec<Vec<bool>>: the inner VALUES.
        shapes_refuse(
            "s/data/nested/VALUES/VALUES",
            7,
            code,
            &format!("$.nested[][][7] (/s/data/nested/VALUES/VALUES): {tail}"),
        );
    }
}

#[derive(H5Vector, Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Switch {
    Off,
    On { level: u8, lit: bool },
    Pair(bool, i16),
}

#[derive(H5Vector, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Device {
    id: u32,
    state: Switch,
}

#[test]
fn bools_inside_enums_with_data_are_refused() {
    let devices: Vec<Device> = (0..9)
        .map(|i| Device {
            id: i,
            state: match i % 3 {
                0 => Switch::Off,
                1 => Switch::On {
                    level: i as u8,
                    lit: i % 2 == 0,
                },
                _ => Switch::Pair(i % 2 == 1, -(i as i16)),
            },
        })
        .collect();
    for code in [2u8, 255] {
        let (_d, f) = common::h5vec_file();
        h5vec::save_vector(&f, "d", &devices).unwrap();
        assert_eq!(h5vec::load_vector::<Device>(&f, "d").unwrap(), devices);
        let ds = f.dataset("d/data/state/On/lit/values").unwrap();
        assert_eq!(codes(&ds), [0, 1, 0]);
        poke(&ds, 1, code);
        let want = format!(
            "$.state.On.lit[1] (/d/data/state/On/lit/values): invalid data: bool value {code} is neither 0 (false) nor 1 (true)"
        );
        let shown = |r: Result<(), h5vec::Error>| r.unwrap_err().to_string();
        assert_eq!(shown(h5vec::load_vector::<Device>(&f, "d").map(drop)), want);
        assert_eq!(shown(h5vec::arrow::read_vector(&f, "d").map(drop)), want);
        assert_eq!(
            shown(h5vec::serde::load_vector::<Device>(&f, "d").map(drop)),
            want
        );
    }
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct TableRow {
    id: u32,
    flag: bool,
    bits: Vec<bool>,
}

#[test]
fn h5col_bool_columns_and_list_values_are_refused() {
    let rows: Vec<TableRow> = (0..20)
        .map(|i| TableRow {
            id: i,
            flag: i % 2 == 1,
            bits: vec![i % 3 == 0, true],
        })
        .collect();
    for code in [2u8, 5, 255] {
        let (_d, f) = common::h5vec_file();
        h5vec::h5col::save_table(&f, "t", &rows).unwrap();
        assert_eq!(h5vec::h5col::load_table::<TableRow>(&f, "t").unwrap(), rows);
        h5vec::arrow::read_vector(&f, "t").unwrap();
        poke(&f.dataset("t/flag").unwrap(), 11, code);
        let tail = format!("invalid data: bool value {code} is neither 0 (false) nor 1 (true)");
        let shown = |r: Result<(), h5vec::Error>| r.unwrap_err().to_string();
        let want = format!("$.flag[11] (/t/flag): {tail}");
        assert_eq!(
            shown(h5vec::h5col::load_table::<TableRow>(&f, "t").map(drop)),
            want
        );
        assert_eq!(shown(h5vec::arrow::read_vector(&f, "t").map(drop)), want);
        poke(&f.dataset("t/flag").unwrap(), 11, 1);
        poke(&f.dataset("t/bits/VALUES").unwrap(), 9, code);
        let want = format!("$.bits[][9] (/t/bits/VALUES): {tail}");
        assert_eq!(
            shown(h5vec::h5col::load_table::<TableRow>(&f, "t").map(drop)),
            want
        );
        assert_eq!(shown(h5vec::arrow::read_vector(&f, "t").map(drop)), want);
    }
}
