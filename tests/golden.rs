//! Golden files: every file in `tests/golden/` (written by h5col 0.4.0,
//! dolomite-base 0.5.2, or by hand from the takane spec; see its README) loads
//! with exactly the contents of its `.json`; corrupt copies are rejected
//! with errors naming the path.

use std::path::{Path, PathBuf};

use h5vec::h5col::load_table;
use h5vec::hdf5::{File, Group};
use h5vec::vls::load_strings;
use h5vec::H5Vector;
use h5vec_tests::{overwrite_rows, read_rows_bytes, set_vls_pointer, write_attr_ascii};
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// `tests/golden` in this repository.
fn golden_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    assert!(
        dir.join("h5col").is_dir() && dir.join("vls").is_dir(),
        "golden files not found at {} (expected tests/golden/{{h5col,vls}})",
        dir.display()
    );
    dir
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The `.h5` files of one golden subdirectory, sorted.
fn h5_files(sub: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(golden_dir().join(sub))
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().into_string().unwrap();
            n.strip_suffix(".h5").map(str::to_owned)
        })
        .collect();
    v.sort();
    v
}

// ---------------------------------------------------------------------------
// h5col tables: one Rust struct per golden file.

#[derive(H5Vector, Deserialize, Debug, PartialEq)]
struct A {
    depths: Vec<f32>,
}

#[derive(H5Vector, Deserialize, Debug, PartialEq)]
struct B {
    tags: Option<Vec<Option<String>>>,
    words: Vec<String>,
}

#[derive(H5Vector, Deserialize, Debug, PartialEq)]
struct C {
    pairs: Option<Vec<Option<Vec<i32>>>>,
    deep: Vec<Vec<Vec<i32>>>,
    sparse: Option<Vec<Option<Vec<Option<i32>>>>>,
}

#[derive(H5Vector, Deserialize, Debug, PartialEq)]
struct D {
    id: Option<i64>,
    name: Option<String>,
    score: Option<f64>,
    flag: bool,
    samples: Option<Vec<f64>>,
    code: Option<String>,
    labels: Vec<String>,
}

#[derive(H5Vector, Deserialize, Debug, PartialEq)]
struct E {
    event_id: i64,
    values: Vec<f32>,
    tags: Option<Vec<Option<String>>>,
    matrix: Vec<Option<Vec<i32>>>,
}

#[derive(H5Vector, Deserialize, Debug, PartialEq)]
struct F {
    n: i32,
    items: Vec<i64>,
    names: Option<Vec<Option<String>>>,
}

/// Labels of the categorical column `level` of `g_categorical_indexes`.
#[derive(H5Vector, Deserialize, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Level {
    Low,
    Mid,
    High,
}

/// Categorical columns read as a fieldless enum (`level`) and as labels (`pay`).
#[derive(H5Vector, Deserialize, Debug, PartialEq)]
struct G {
    id: i64,
    x: Option<f64>,
    level: Option<Level>,
    pay: Option<String>,
    flag: bool,
}

/// A row type of the golden tables, loaded from the table group `table`.
trait Table: Sized + std::fmt::Debug {
    fn load(f: &File) -> h5vec::Result<Vec<Self>>;
}

macro_rules! tables {
    ($($t:ty),*) => {$(
        impl Table for $t {
            fn load(f: &File) -> h5vec::Result<Vec<Self>> {
                load_table(f, "table")
            }
        }
    )*};
}
tables!(A, B, C, D, E, F, G);

fn h5col_path(stem: &str) -> PathBuf {
    golden_dir().join("h5col").join(format!("{stem}.h5"))
}

/// Loads the golden table `stem` as `T` and compares it with its JSON rows.
fn check_table<T>(stem: &str) -> Vec<T>
where
    T: Table + DeserializeOwned + PartialEq,
{
    let j = json(&golden_dir().join("h5col").join(format!("{stem}.json")));
    assert_eq!(j["conformance"], "ok");
    assert_eq!(j["group"], "/table");
    let want: Vec<T> = serde_json::from_value(j["rows"].clone()).unwrap();
    assert_eq!(want.len() as u64, j["nrows"].as_u64().unwrap());
    let f = File::open(h5col_path(stem)).unwrap();
    let got: Vec<T> = T::load(&f).unwrap_or_else(|e| panic!("{stem}: {e}"));
    assert_eq!(got, want, "{stem}");
    want
}

#[test]
fn every_golden_file_is_checked() {
    assert_eq!(
        h5_files("h5col"),
        [
            "a_float32_list",
            "b_nullable_strings",
            "c_nested_int32",
            "d_mixed_table",
            "e_chunked_gzip",
            "f_truncated_tail",
            "g_categorical_indexes"
        ]
    );
    // Every VLS file is checked by `vls_golden_files` (which walks the directory).
    assert_eq!(h5_files("vls").len(), 8);
}

#[test]
fn h5col_a_float32_list() {
    let rows = check_table::<A>("a_float32_list");
    // Exact bits: -0.0 stays negative, the subnormal and FLT_MAX survive.
    let r5 = &rows[5].depths;
    assert_eq!(r5[3].to_bits(), (-0.0f32).to_bits());
    assert_eq!(r5[2], f32::MAX);
    assert_eq!(r5[4].to_bits(), 1);
    let f = File::open(h5col_path("a_float32_list")).unwrap();
    let got: Vec<A> = load_table(&f, "table").unwrap();
    assert_eq!(got[5].depths[3].to_bits(), (-0.0f32).to_bits());
    assert_eq!(got[5].depths[4].to_bits(), 1);
    assert_eq!(got[2].depths, [0.1f32]);
    assert!(got[1].depths.is_empty() && got[8].depths == [1.5; 5]);
}

#[test]
fn h5col_b_nullable_strings() {
    let rows = check_table::<B>("b_nullable_strings");
    assert_eq!(rows[1].tags, None);
    assert_eq!(rows[2].tags, Some(vec![]));
    assert_eq!(rows[4].tags, Some(vec![None, Some(String::new()), None]));
    assert_eq!(rows[9].words, ["nul\u{0}inside"]);
    assert_eq!(
        rows[3].tags.as_ref().unwrap()[2].as_deref(),
        Some("emoji 🎉")
    );
}

#[test]
fn h5col_c_nested_int32() {
    let rows = check_table::<C>("c_nested_int32");
    assert_eq!(
        rows[0].sparse,
        Some(vec![Some(vec![Some(1), None, Some(3)])])
    );
    assert_eq!(
        rows[3].pairs,
        Some(vec![Some(vec![]), None, Some(vec![4, 5, 6])])
    );
    assert_eq!(rows[5].sparse, Some(vec![Some(vec![Some(i32::MIN)])]));
    assert_eq!(rows[2].deep, vec![Vec::<Vec<i32>>::new()]);
}

#[test]
fn h5col_d_mixed_table() {
    let rows = check_table::<D>("d_mixed_table");
    assert_eq!(rows[4].id, None);
    assert_eq!(rows[5].id, Some(i64::MAX));
    assert_eq!(rows[3].name, None);
    assert_eq!(rows[3].score, None);
    assert_eq!(rows[5].name.as_deref(), Some("sixteen bytes ok"));
    assert_eq!(rows[1].code.as_deref(), Some("CDEF"));
    assert_eq!(rows[2].score, Some(1e300));
}

#[test]
fn h5col_e_chunked_gzip() {
    let rows = check_table::<E>("e_chunked_gzip");
    assert_eq!(rows.len(), 200);
    assert_eq!(rows[0].event_id, 1000);
    assert_eq!(rows.iter().filter(|r| r.tags.is_none()).count(), 29);
}

#[test]
fn h5col_g_categorical_indexes() {
    let rows = check_table::<G>("g_categorical_indexes");
    assert_eq!(rows[1].level, Some(Level::High));
    assert_eq!(rows[4].level, None);
    assert_eq!(rows[2].pay.as_deref(), Some("Credit card"));
    assert_eq!(rows[3].pay, None);
}

#[test]
fn h5col_f_truncated_tail() {
    let rows = check_table::<F>("f_truncated_tail");
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[3].n, 30);
    assert_eq!(rows[3].items, [99]);
    assert_eq!(rows[3].names, Some(vec![Some("new".into())]));
}

// ---------------------------------------------------------------------------
// VLS arrays.

#[test]
fn vls_golden_files() {
    let stems = h5_files("vls");
    assert_eq!(
        stems,
        [
            "dolomite_empty",
            "dolomite_large",
            "dolomite_na_literal",
            "dolomite_no_missing",
            "dolomite_strings",
            "spec_edge_cases",
            "spec_narrow_contiguous",
            "spec_nul_garbage"
        ]
    );
    for stem in stems {
        let dir = golden_dir().join("vls");
        let j = json(&dir.join(format!("{stem}.json")));
        assert_eq!(j["takane"], "ok");
        let want: Vec<Option<String>> = serde_json::from_value(j["strings"].clone()).unwrap();
        assert_eq!(want.len() as u64, j["length"].as_u64().unwrap(), "{stem}");
        let f = File::open(dir.join(format!("{stem}.h5"))).unwrap();
        let g = f.group("atomic_vector").unwrap();
        let got = load_strings(&g).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(got, want, "{stem}");
    }
}

#[test]
fn vls_specific_values() {
    let dir = golden_dir().join("vls");
    let load = |stem: &str| {
        let f = File::open(dir.join(format!("{stem}.h5"))).unwrap();
        load_strings(&f.group("atomic_vector").unwrap()).unwrap()
    };
    let na = load("dolomite_na_literal");
    assert_eq!(
        na,
        [
            Some("NA".into()),
            None,
            Some("NA_".into()),
            Some(String::new()),
            None,
            Some("value".into())
        ]
    );
    let nul = load("spec_nul_garbage");
    assert_eq!(
        nul,
        [
            Some("ok".into()),
            Some("fine".into()),
            Some(String::new()),
            Some(String::new())
        ]
    );
    let edge = load("spec_edge_cases");
    assert_eq!(edge[7], None); // "NA" after the NUL cut
    assert_eq!(edge[16].as_deref(), Some("N")); // a prefix of the placeholder
    assert_eq!(edge[12].as_deref(), Some("")); // offset == heap length
    let narrow = load("spec_narrow_contiguous");
    assert_eq!(narrow[5].as_deref(), Some("ünï"));
    assert_eq!(narrow[1], None);
    assert!(load("dolomite_empty").is_empty());
    assert_eq!(load("dolomite_large").len(), 2000);
}

// ---------------------------------------------------------------------------
// Corrupt copies.

/// Copies golden file `sub/stem.h5` into a temp dir and opens it read-write.
fn corrupt_copy(sub: &str, stem: &str) -> (tempfile::TempDir, File) {
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join(format!("{stem}.h5"));
    std::fs::copy(golden_dir().join(sub).join(format!("{stem}.h5")), &dst).unwrap();
    let mut perm = std::fs::metadata(&dst).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&dst, perm).unwrap();
    let f = File::open_rw(&dst).unwrap();
    (dir, f)
}

fn table_err<T: Table>(f: &File) -> String {
    match T::load(f) {
        Ok(v) => panic!("corrupt table loaded: {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn set_nrows(g: &Group, n: u64) {
    g.attr("NROWS").unwrap().write_scalar(&n).unwrap();
}

fn assert_has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "error `{msg}` does not mention `{p}`");
    }
}

#[test]
fn corrupt_nrows_beyond_an_extent() {
    let (_d, f) = corrupt_copy("h5col", "d_mixed_table");
    set_nrows(&f.group("table").unwrap(), 7);
    assert_has(&table_err::<D>(&f), &["/table/id", "at least 7 rows"]);
    // A list column: OFFSETS need NROWS + 1 entries.
    let (_d, f) = corrupt_copy("h5col", "a_float32_list");
    set_nrows(&f.group("table").unwrap(), 10);
    assert_has(
        &table_err::<A>(&f),
        &["/table/depths", "OFFSETS", "at least 11 rows"],
    );
}

#[test]
fn corrupt_list_extent_below_nrows() {
    let (_d, f) = corrupt_copy("h5col", "b_nullable_strings");
    f.dataset("table/tags/MASK").unwrap().resize(5).unwrap();
    assert_has(
        &table_err::<B>(&f),
        &["/table/tags", "MASK", "at least 11 rows"],
    );
    let (_d, f) = corrupt_copy("h5col", "b_nullable_strings");
    f.dataset("table/words/VALUES/CHARS")
        .unwrap()
        .resize(70)
        .unwrap();
    assert_has(
        &table_err::<B>(&f),
        &["/table/words", "CHARS", "at least 74 rows"],
    );
}

#[test]
fn corrupt_version_and_class() {
    let (_d, f) = corrupt_copy("h5col", "d_mixed_table");
    let g = f.group("table").unwrap();
    write_attr_ascii(&g, "VERSION", "2.0");
    assert_has(&table_err::<D>(&f), &["/table", "VERSION", "\"2.0\""]);
    write_attr_ascii(&g, "VERSION", "1.3");
    assert_eq!(
        load_table::<D>(&f, "table").unwrap().len(),
        6,
        "minor versions are accepted"
    );
    write_attr_ascii(&g, "CLASS", "TABLE");
    assert_has(
        &table_err::<D>(&f),
        &["/table", "CLASS", "COLUMN_TABLE", "\"TABLE\""],
    );
    g.delete_attr("CLASS").unwrap();
    assert_has(&table_err::<D>(&f), &["/table", "CLASS"]);
}

#[test]
fn corrupt_nrows_type() {
    let (_d, f) = corrupt_copy("h5col", "d_mixed_table");
    let g = f.group("table").unwrap();
    g.delete_attr("NROWS").unwrap();
    assert_has(&table_err::<D>(&f), &["/table", "NROWS", "nothing"]);
    g.new_attr::<i64>()
        .shape(())
        .create("NROWS")
        .unwrap()
        .write_scalar(&6i64)
        .unwrap();
    assert_has(&table_err::<D>(&f), &["/table", "NROWS", "unsigned"]);
    g.delete_attr("NROWS").unwrap();
    g.new_attr::<f64>()
        .shape(())
        .create("NROWS")
        .unwrap()
        .write_scalar(&6.0)
        .unwrap();
    assert_has(&table_err::<D>(&f), &["/table", "NROWS", "unsigned"]);
    g.delete_attr("NROWS").unwrap();
    g.new_attr::<u64>()
        .shape(2)
        .create("NROWS")
        .unwrap()
        .write_raw(&[6u64, 6])
        .unwrap();
    assert_has(&table_err::<D>(&f), &["/table", "NROWS", "scalar"]);
}

#[test]
fn corrupt_missing_column_and_wrong_dtype() {
    let (_d, f) = corrupt_copy("h5col", "d_mixed_table");
    f.unlink("table/flag").unwrap();
    assert_has(&table_err::<D>(&f), &["/table/flag", "nothing"]);
    let (_d, f) = corrupt_copy("h5col", "d_mixed_table");
    f.unlink("table/score").unwrap();
    f.new_dataset::<i32>()
        .shape(6)
        .create("table/score")
        .unwrap();
    assert_has(&table_err::<D>(&f), &["/table/score", "Float64", "int32"]);
    // A plain integer where the h5col bool enum belongs.
    let (_d, f) = corrupt_copy("h5col", "d_mixed_table");
    f.unlink("table/flag").unwrap();
    f.new_dataset::<i8>().shape(6).create("table/flag").unwrap();
    assert_has(&table_err::<D>(&f), &["/table/flag", "h5col bool"]);
    // A scalar column where a list belongs.
    let (_d, f) = corrupt_copy("h5col", "d_mixed_table");
    f.unlink("table/labels").unwrap();
    f.new_dataset::<i32>()
        .shape(6)
        .create("table/labels")
        .unwrap();
    assert_has(&table_err::<D>(&f), &["/table/labels", "list column group"]);
    // A missing column listed in column-order is an error even if T does not read it.
    let (_d, f) = corrupt_copy("h5col", "f_truncated_tail");
    f.unlink("table/names").unwrap();
    assert_has(&table_err::<F>(&f), &["/table/names"]);
}

#[test]
fn corrupt_mask_of_wrong_type() {
    let (_d, f) = corrupt_copy("h5col", "b_nullable_strings");
    f.unlink("table/tags/MASK").unwrap();
    f.new_dataset::<u8>()
        .shape(11)
        .create("table/tags/MASK")
        .unwrap();
    assert_has(&table_err::<B>(&f), &["/table/tags", "MASK", "h5col bool"]);
    // A MASK value other than 0/1.
    let (_d, f) = corrupt_copy("h5col", "b_nullable_strings");
    let m = f.dataset("table/tags/MASK").unwrap();
    let mut bytes = [1u8; 11];
    bytes[1] = 0;
    bytes[6] = 7;
    overwrite_rows(&m, 0, &bytes);
    assert_has(&table_err::<B>(&f), &["/table/tags", "MASK", "7"]);
    // A null row with a non-empty span.
    let (_d, f) = corrupt_copy("h5col", "b_nullable_strings");
    let m = f.dataset("table/tags/MASK").unwrap();
    let mut bytes = [1u8; 11];
    bytes[0] = 0; // row 0 has two elements
    overwrite_rows(&m, 0, &bytes);
    assert_has(
        &table_err::<B>(&f),
        &["/table/tags", "null row", "empty span"],
    );
}

#[test]
fn corrupt_offsets() {
    let (_d, f) = corrupt_copy("h5col", "a_float32_list");
    let o = f.dataset("table/depths/OFFSETS").unwrap();
    let mut v = o.read_raw::<u64>().unwrap();
    v[3] = 1; // below OFFSETS[2] = 4
    o.write_raw(&v).unwrap();
    assert_has(
        &table_err::<A>(&f),
        &["/table/depths", "[3]", "must not decrease"],
    );
    let mut v = o.read_raw::<u64>().unwrap();
    v[3] = 4;
    v[0] = 1;
    o.write_raw(&v).unwrap();
    assert_has(
        &table_err::<A>(&f),
        &["/table/depths", "OFFSETS[0] must be 0"],
    );
    // OFFSETS[NROWS] past the end of VALUES.
    let mut v = o.read_raw::<u64>().unwrap();
    v[0] = 0;
    v[9] = 99;
    o.write_raw(&v).unwrap();
    assert_has(
        &table_err::<A>(&f),
        &["/table/depths", "VALUES", "at least 99 rows"],
    );
    // Nested: decreasing inner OFFSETS of a STRING_VALUES group.
    let (_d, f) = corrupt_copy("h5col", "b_nullable_strings");
    let o = f.dataset("table/words/VALUES/OFFSETS").unwrap();
    let mut v = o.read_raw::<u64>().unwrap();
    v[4] = 0;
    o.write_raw(&v).unwrap();
    assert_has(&table_err::<B>(&f), &["/table/words", "must not decrease"]);
}

#[test]
fn corrupt_fixed_string_utf8() {
    let (_d, f) = corrupt_copy("h5col", "d_mixed_table");
    let ds = f.dataset("table/name").unwrap();
    let (mut rows, size) = read_rows_bytes(&ds);
    assert_eq!((rows.len(), size), (6 * 16, 16));
    rows[32..34].copy_from_slice(&[0xff, 0xfe]);
    overwrite_rows(&ds, 0, &rows);
    assert_has(&table_err::<D>(&f), &["$.name[2] (/table/name)", "UTF-8"]);
}

/// Writes pointer entry `row` of a VLS copy as (offset, length).
fn set_pointer(f: &File, row: u64, offset: u64, length: u64) {
    let ds = f.dataset("atomic_vector/pointers").unwrap();
    set_vls_pointer(&ds, row, offset, length);
}

fn vls_err(f: &File) -> String {
    match load_strings(&f.group("atomic_vector").unwrap()) {
        Ok(v) => panic!("corrupt VLS array loaded: {v:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn corrupt_vls_pointers() {
    let (_d, f) = corrupt_copy("vls", "dolomite_strings");
    set_pointer(&f, 3, 396, 0);
    assert_has(
        &vls_err(&f),
        &[
            "$[3] (/atomic_vector/pointers)",
            "offset 396",
            "past the end of the heap",
        ],
    );
    let (_d, f) = corrupt_copy("vls", "dolomite_strings");
    set_pointer(&f, 5, 390, 6);
    assert_has(
        &vls_err(&f),
        &["$[5] (/atomic_vector/pointers)", "395 bytes"],
    );
    let (_d, f) = corrupt_copy("vls", "dolomite_strings");
    set_pointer(&f, 2, 5, u64::MAX);
    assert_has(
        &vls_err(&f),
        &["$[2] (/atomic_vector/pointers)", "runs past the end"],
    );
    let (_d, f) = corrupt_copy("vls", "dolomite_strings");
    set_pointer(&f, 2, u64::MAX, 1);
    assert_has(
        &vls_err(&f),
        &["$[2] (/atomic_vector/pointers)", "past the end"],
    );
}

#[test]
fn corrupt_vls_structure() {
    // Wrong type attribute.
    let (_d, f) = corrupt_copy("vls", "dolomite_strings");
    let g = f.group("atomic_vector").unwrap();
    g.delete_attr("type").unwrap();
    assert_has(&vls_err(&f), &["/atomic_vector", "type"]);
    write_attr_ascii(&g, "type", "string");
    assert_has(&vls_err(&f), &["/atomic_vector", "\"vls\"", "\"string\""]);
    // Missing heap.
    let (_d, f) = corrupt_copy("vls", "dolomite_strings");
    f.unlink("atomic_vector/heap").unwrap();
    assert_has(&vls_err(&f), &["/atomic_vector", "heap"]);
    // Heap of the wrong type.
    let (_d, f) = corrupt_copy("vls", "dolomite_strings");
    f.unlink("atomic_vector/heap").unwrap();
    f.new_dataset::<f32>()
        .shape(395)
        .create("atomic_vector/heap")
        .unwrap();
    assert_has(
        &vls_err(&f),
        &["/atomic_vector", "heap", "uint8", "float32"],
    );
    // Pointers that are not a compound.
    let (_d, f) = corrupt_copy("vls", "dolomite_strings");
    f.unlink("atomic_vector/pointers").unwrap();
    f.new_dataset::<u64>()
        .shape(14)
        .create("atomic_vector/pointers")
        .unwrap();
    assert_has(&vls_err(&f), &["/atomic_vector", "pointers", "compound"]);
    // Invalid UTF-8 before the NUL.
    let (_d, f) = corrupt_copy("vls", "spec_nul_garbage");
    set_pointer(&f, 0, 3, 2);
    assert_has(&vls_err(&f), &["$[0] (/atomic_vector/pointers)", "UTF-8"]);
}
