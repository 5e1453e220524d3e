//! Maps (SPEC.md section 4.5): `HashMap` and `BTreeMap` as a list of
//! `{key, value}` records. Round trips, the layout, maps in options, lists
//! and records, appends, duplicate keys on load, and property tests.

use h5vec_tests as common;

use std::collections::{BTreeMap, HashMap};

use common::{attr_string, check_roundtrip, invalid, mem_file, members, meta_str, mismatch};
use h5vec::{
    append_vector, load_range, load_vector, save_vector, save_vector_with, H5Vector, SaveOptions,
};
use proptest::prelude::*;

fn prices(i: usize) -> HashMap<String, f64> {
    (0..i % 4)
        .map(|k| (format!("item-{i}-{k}"), i as f64 + k as f64 / 8.0))
        .collect()
}

#[test]
fn hash_map_of_strings_to_f64_round_trips_with_the_list_layout() {
    let v: Vec<HashMap<String, f64>> = (0..9).map(prices).collect();
    check_roundtrip(&v);
    let f = mem_file();
    save_vector(&f, "m", &v).unwrap();
    let g = f.group("m/data").unwrap();
    assert_eq!(attr_string(&g, "CLASS").as_deref(), Some("LIST_COLUMN"));
    assert_eq!(members(&g), ["OFFSETS", "VALUES"]);
    let values = g.group("VALUES").unwrap();
    assert_eq!(
        attr_string(&values, "CLASS").as_deref(),
        Some("RECORD_VALUES")
    );
    assert_eq!(members(&values), ["key", "value"]);
    let offsets = g.dataset("OFFSETS").unwrap().read_raw::<u64>().unwrap();
    assert_eq!(offsets, [0, 0, 1, 3, 6, 6, 7, 9, 12, 12]);
    let s = f.group("m/metadata/schema").unwrap();
    assert_eq!(meta_str(&s, "kind"), "list");
    assert_eq!(meta_str(&s, "codec"), "h5vec.MapCodec");
    let entry = s.group("children/1").unwrap();
    assert_eq!(meta_str(&entry, "kind"), "record");
    assert_eq!(
        common::vlen_strings(&entry.dataset("field_names").unwrap()),
        ["key", "value"]
    );
    // String keys in the VLS layout (a byte heap, no HDF5 heap object per
    // key), as below any list column.
    assert_eq!(
        meta_str(&entry.group("children/1").unwrap(), "kind"),
        "vls_string"
    );
    assert_eq!(
        members(&f.group("m/data/VALUES/key").unwrap()),
        ["heap", "pointers"]
    );
    let keys = vls_strings(&f.group("m/data/VALUES/key").unwrap());
    assert_eq!(keys.len(), 12);
    // Row 2's entries: keys and values side by side, in the map's order.
    let vals = f
        .dataset("m/data/VALUES/value/values")
        .unwrap()
        .read_raw::<f64>()
        .unwrap();
    let row2: HashMap<String, f64> = keys[1..3]
        .iter()
        .cloned()
        .zip(vals[1..3].to_vec())
        .collect();
    assert_eq!(row2, v[2]);
    // Variable-length strings when asked for, as for string fields.
    let opts = SaveOptions::default().vls_strings(false);
    save_vector_with(&f, "j", &v, &opts).unwrap();
    let jkeys = common::vlen_strings(&f.dataset("j/data/VALUES/key/values").unwrap());
    assert_eq!(jkeys, keys);
    assert_eq!(load_vector::<HashMap<String, f64>>(&f, "j").unwrap(), v);
    #[derive(H5Vector, Debug, PartialEq)]
    struct Field {
        #[h5vec(vlen_strings)]
        m: HashMap<String, f64>,
    }
    let rows: Vec<Field> = v.iter().map(|m| Field { m: m.clone() }).collect();
    save_vector(&f, "k", &rows).unwrap();
    let kkeys = common::vlen_strings(&f.dataset("k/data/m/VALUES/key/values").unwrap());
    assert_eq!(kkeys, keys);
    assert_eq!(load_vector::<Field>(&f, "k").unwrap(), rows);
}

/// The strings of a VLS group (SPEC.md section 4.1): `heap` bytes at the
/// `pointers` entries (offset, length: little-endian u64).
fn vls_strings(g: &h5vec::hdf5::Group) -> Vec<String> {
    let heap = g.dataset("heap").unwrap().read_raw::<u8>().unwrap();
    let (ptrs, size) = common::read_rows_bytes(&g.dataset("pointers").unwrap());
    assert_eq!(size, 16);
    ptrs.chunks(16)
        .map(|p| {
            let at = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().unwrap()) as usize;
            String::from_utf8(heap[at(0)..at(0) + at(8)].to_vec()).unwrap()
        })
        .collect()
}

#[test]
fn btree_maps_load_sorted_and_a_plain_list_is_not_a_map() {
    let v: Vec<BTreeMap<u32, Vec<String>>> = vec![
        BTreeMap::from([
            (3, vec!["c".into()]),
            (1, vec![]),
            (2, vec!["a".into(), "b".into()]),
        ]),
        BTreeMap::new(),
        BTreeMap::from([(u32::MAX, vec![String::new()])]),
    ];
    check_roundtrip(&v);
    let f = mem_file();
    save_vector(&f, "b", &v).unwrap();
    let keys = f
        .dataset("b/data/VALUES/key/values")
        .unwrap()
        .read_raw::<u32>()
        .unwrap();
    assert_eq!(keys, [1, 2, 3, u32::MAX]);
    // The same rows as a HashMap.
    let h = load_vector::<HashMap<u32, Vec<String>>>(&f, "b").unwrap();
    assert_eq!(h[0].get(&2), Some(&vec!["a".to_string(), "b".to_string()]));
    // A list of tuples has the list codec, not the map codec.
    let e = load_vector::<Vec<(u32, Vec<String>)>>(&f, "b").unwrap_err();
    assert_eq!(mismatch(&e).0, "codec `h5vec.IdentityCodec`");
    save_vector(&f, "l", &[vec![(1u32, vec!["x".to_string()])]]).unwrap();
    let e = load_vector::<BTreeMap<u32, Vec<String>>>(&f, "l").unwrap_err();
    assert_eq!(mismatch(&e).0, "codec `h5vec.MapCodec`");
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    name: String,
    tags: BTreeMap<String, i64>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    id: u64,
    attrs: Option<HashMap<String, f64>>,
    history: Vec<BTreeMap<i32, bool>>,
    maybe: Vec<Option<BTreeMap<String, String>>>,
    inner: Inner,
    by_name: BTreeMap<String, Inner>,
}

fn rows(n: usize, from: usize) -> Vec<Row> {
    (from..from + n)
        .map(|i| Row {
            id: i as u64,
            attrs: (i % 3 != 0).then(|| prices(i)),
            history: (0..i % 3)
                .map(|k| (0..k as i32 + 1).map(|j| (j - 1, j % 2 == 0)).collect())
                .collect(),
            maybe: vec![
                None,
                Some(BTreeMap::from([(format!("k{i}"), "v".to_string())])),
            ][..i % 3]
                .to_vec(),
            inner: Inner {
                name: format!("n{i}"),
                tags: (0..i % 2).map(|k| (format!("t{k}"), -(i as i64))).collect(),
            },
            by_name: (0..i % 3)
                .map(|k| {
                    (
                        format!("child{k}"),
                        Inner {
                            name: format!("c{i}.{k}"),
                            tags: BTreeMap::from([("x".to_string(), k as i64)]),
                        },
                    )
                })
                .collect(),
        })
        .collect()
}

#[test]
fn maps_in_options_lists_and_records_round_trip_and_append() {
    let f = mem_file();
    let all = rows(30, 0);
    save_vector(&f, "r", &all[..7]).unwrap();
    append_vector(&f, "r", &all[7..8]).unwrap();
    append_vector(&f, "r", &all[8..]).unwrap();
    assert_eq!(load_vector::<Row>(&f, "r").unwrap(), all);
    assert_eq!(load_range::<Row>(&f, "r", 5..23).unwrap(), all[5..23]);
    // An Option<map> is the map's list group with a MASK.
    assert_eq!(
        members(&f.group("r/data/attrs").unwrap()),
        ["MASK", "OFFSETS", "VALUES"]
    );
    // Option<map> list elements: a MASK inside the nested map group.
    assert_eq!(
        members(&f.group("r/data/maybe/VALUES").unwrap()),
        ["MASK", "OFFSETS", "VALUES"]
    );
    assert_eq!(
        h5vec::load_column::<BTreeMap<String, Inner>>(&f, "r", "by_name").unwrap(),
        all.iter().map(|r| r.by_name.clone()).collect::<Vec<_>>()
    );
}

#[test]
fn a_row_with_a_duplicate_key_is_an_error_naming_the_row() {
    let f = mem_file();
    let v = vec![
        BTreeMap::from([(1u32, 10.0f64)]),
        BTreeMap::from([(1u32, 1.0), (2, 2.0), (3, 3.0)]),
    ];
    save_vector(&f, "d", &v).unwrap();
    // Keys 1 | 1 2 3 become 1 | 1 3 3.
    let keys = f.dataset("d/data/VALUES/key/values").unwrap();
    common::overwrite_rows(&keys, 2, &3u32.to_le_bytes());
    for e in [
        load_vector::<BTreeMap<u32, f64>>(&f, "d").unwrap_err(),
        load_vector::<HashMap<u32, f64>>(&f, "d")
            .map(|_| ())
            .unwrap_err(),
    ] {
        assert_eq!(e.path(), "$[1]");
        assert_eq!(e.location(), Some("/d/data/OFFSETS"));
        assert!(
            invalid(&e).contains("entry 2 of this map repeats an earlier key"),
            "{e}"
        );
    }
    // Row 0 alone is fine.
    assert_eq!(
        load_range::<BTreeMap<u32, f64>>(&f, "d", 0..1).unwrap(),
        v[..1]
    );
}

#[test]
fn a_map_whose_entry_record_is_damaged_is_an_error_with_its_path() {
    let f = mem_file();
    save_vector(&f, "m", &[BTreeMap::from([(1u8, 2u8)])]).unwrap();
    let values = f.group("m/data/VALUES").unwrap();
    values.unlink("value").unwrap();
    values.create_group("val").unwrap();
    let e = load_vector::<BTreeMap<u8, u8>>(&f, "m").unwrap_err();
    assert_eq!(e.path(), "$[]");
    assert_eq!(
        mismatch(&e),
        ("members [\"key\", \"value\"]", "[\"key\", \"val\"]")
    );
    // Values of another type.
    save_vector(&f, "n", &[BTreeMap::from([(1u8, 2u8)])]).unwrap();
    let e = load_vector::<BTreeMap<u8, u16>>(&f, "n").unwrap_err();
    assert_eq!(e.path(), "$[].value");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn maps_round_trip(
        v in prop::collection::vec(
            prop::collection::btree_map(any::<i16>(), prop::option::of("[^\\x00]{0,6}"), 0..6),
            0..20,
        ),
        h in prop::collection::vec(
            prop::collection::hash_map("[^\\x00]{0,4}", prop::collection::vec(any::<u8>(), 0..3), 0..5),
            0..20,
        ),
        split in 0usize..20,
    ) {
        let f = mem_file();
        let cut = split.min(v.len());
        save_vector(&f, "b", &v[..cut]).unwrap();
        append_vector(&f, "b", &v[cut..]).unwrap();
        prop_assert_eq!(load_vector::<BTreeMap<i16, Option<String>>>(&f, "b").unwrap(), v);
        save_vector(&f, "h", &h).unwrap();
        prop_assert_eq!(load_vector::<HashMap<String, Vec<u8>>>(&f, "h").unwrap(), h);
    }
}
