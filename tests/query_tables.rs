//! Queries on h5col tables (SPEC.md section 14.7): every filter compared
//! with a brute-force three-valued filter of the rows `load_table` reads,
//! with NaN values, fill values (h5col's, user-defined ones, a NaN fill),
//! categorical columns, fixed-length strings; h5col's `CHUNK_MINMAX`
//! indexes pruning windows; hostile index linkage ignored; errors.

use std::path::Path;

use h5vec::h5col::{append_table, load_table, load_table_where, save_table};
use h5vec::hdf5::{File, ObjectReference1};
use h5vec::{col, count_where, explain, select_rows, Filter, H5Vector};
use h5vec_tests::Rng;

#[repr(u8)]
#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
enum Level {
    Low,
    Mid,
    High,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    id: u32,
    temp: Option<f64>,
    level: i32,
    small: Option<i8>,
    flag: bool,
    name: String,
    note: Option<String>,
    cat: Option<Level>,
    tags: Vec<u16>,
}

/// A small deterministic generator (xorshift).
fn rows(start: u32, n: u32, seed: u64) -> Vec<Row> {
    let mut r = Rng(seed);
    (start..start + n)
        .map(|i| {
            let temp = match r.below(10) {
                0 => None,
                1 => Some(f64::NAN),
                _ => Some(r.below(2000) as f64 / 100.0 - 5.0),
            };
            Row {
                id: i,
                temp,
                level: r.below(41) as i32 - 20,
                small: (r.below(5) != 0).then(|| r.below(100) as i8 - 50),
                flag: r.below(3) == 0,
                name: ["alpha", "beta", "gamma", "delta", "m", "zeta"][r.below(6) as usize].into(),
                note: (r.below(4) != 0).then(|| format!("n{}", r.below(5))),
                cat: match r.below(4) {
                    0 => None,
                    1 => Some(Level::Low),
                    2 => Some(Level::Mid),
                    _ => Some(Level::High),
                },
                tags: (0..r.below(3)).map(|k| k as u16).collect(),
            }
        })
        .collect()
}

/// Kleene truth of a row: `None` unknown.
type Truth = Option<bool>;
fn and(a: Truth, b: Truth) -> Truth {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}
fn or(a: Truth, b: Truth) -> Truth {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}
fn not(a: Truth) -> Truth {
    a.map(|x| !x)
}

type Case = (Filter, Box<dyn Fn(&Row) -> Truth>);

fn cases() -> Vec<Case> {
    let lvl = |l: Level| l as u8;
    vec![
        (
            col("temp").gt(3.5),
            Box::new(|r: &Row| r.temp.map(|t| t > 3.5)),
        ),
        (
            col("temp").le(0),
            Box::new(|r: &Row| r.temp.map(|t| t <= 0.0)),
        ),
        // NaN is a value: not equal to anything, so `ne` is true.
        (
            col("temp").ne(2.0),
            Box::new(|r: &Row| r.temp.map(|t| t != 2.0)),
        ),
        (
            col("temp").is_null(),
            Box::new(|r: &Row| Some(r.temp.is_none())),
        ),
        (
            col("temp").is_not_null(),
            Box::new(|r: &Row| Some(r.temp.is_some())),
        ),
        (
            col("temp").between(-1.0, 4.25),
            Box::new(|r: &Row| r.temp.map(|t| (-1.0..=4.25).contains(&t))),
        ),
        (col("level").lt(-3), Box::new(|r: &Row| Some(r.level < -3))),
        (
            col("level").is_in([1i64, 2, 3, 40]),
            Box::new(|r: &Row| Some([1, 2, 3].contains(&r.level))),
        ),
        (col("level").ge(2.5), Box::new(|r: &Row| Some(r.level >= 3))),
        (
            col("small").eq(-7),
            Box::new(|r: &Row| r.small.map(|s| s == -7)),
        ),
        (
            col("small").is_null(),
            Box::new(|r: &Row| Some(r.small.is_none())),
        ),
        (col("flag").eq(true), Box::new(|r: &Row| Some(r.flag))),
        (col("flag").ne(true), Box::new(|r: &Row| Some(!r.flag))),
        (col("flag").is_null(), Box::new(|_: &Row| Some(false))),
        (
            col("name").eq("beta"),
            Box::new(|r: &Row| Some(r.name == "beta")),
        ),
        (
            col("name").lt("delta"),
            Box::new(|r: &Row| Some(r.name.as_str() < "delta")),
        ),
        (
            col("name").is_in(["m", "zeta", "nope"]),
            Box::new(|r: &Row| Some(r.name == "m" || r.name == "zeta")),
        ),
        (
            col("note").ne("n1"),
            Box::new(|r: &Row| r.note.as_ref().map(|n| n != "n1")),
        ),
        (
            col("note").is_null(),
            Box::new(|r: &Row| Some(r.note.is_none())),
        ),
        (
            col("cat").eq("Mid"),
            Box::new(|r: &Row| r.cat.map(|c| c == Level::Mid)),
        ),
        (
            col("cat").eq("Nope"),
            Box::new(|r: &Row| r.cat.map(|_| false)),
        ),
        (
            col("cat").ne("Nope"),
            Box::new(|r: &Row| r.cat.map(|_| true)),
        ),
        // Categorical order is the order of the codes (the labels' positions).
        (
            col("cat").lt("High"),
            Box::new(move |r: &Row| r.cat.map(|c| lvl(c) < lvl(Level::High))),
        ),
        (
            col("cat").is_in(["Low", "High", "Nope"]),
            Box::new(|r: &Row| r.cat.map(|c| c != Level::Mid)),
        ),
        (
            col("cat").is_not_null(),
            Box::new(|r: &Row| Some(r.cat.is_some())),
        ),
        (
            (col("temp").gt(0) & col("flag").eq(true)) | col("note").is_null(),
            Box::new(|r: &Row| {
                or(
                    and(r.temp.map(|t| t > 0.0), Some(r.flag)),
                    Some(r.note.is_none()),
                )
            }),
        ),
        (
            !(col("temp").lt(5) | col("cat").eq("Low")),
            Box::new(|r: &Row| not(or(r.temp.map(|t| t < 5.0), r.cat.map(|c| c == Level::Low)))),
        ),
        (
            !col("small").gt(0) & col("name").ne("m"),
            Box::new(|r: &Row| and(not(r.small.map(|s| s > 0)), Some(r.name != "m"))),
        ),
    ]
}

fn new_file() -> (tempfile::TempDir, File) {
    let dir = tempfile::tempdir().unwrap();
    let f = h5vec::create_file(dir.path().join("t.h5")).unwrap();
    (dir, f)
}

fn check_all(f: &File, name: &str) {
    let all: Vec<Row> = load_table(f, name).unwrap();
    for (filter, truth) in cases() {
        let want: Vec<u64> = all
            .iter()
            .enumerate()
            .filter(|(_, r)| truth(r) == Some(true))
            .map(|(i, _)| i as u64)
            .collect();
        let got = select_rows(f, name, &filter).unwrap();
        assert_eq!(got, want, "{filter}");
        assert_eq!(count_where(f, name, &filter).unwrap(), want.len() as u64);
        let typed: Vec<Row> = load_table_where(f, name, &filter).unwrap();
        let expect: Vec<Row> = want.iter().map(|&i| all[i as usize].clone()).collect();
        // NaN != NaN: compare their text.
        assert_eq!(format!("{typed:?}"), format!("{expect:?}"), "{filter}");
        // The text syntax gives the same rows.
        let parsed: Filter = filter.to_string().parse().unwrap();
        assert_eq!(select_rows(f, name, &parsed).unwrap(), want, "{filter}");
    }
}

#[test]
fn table_queries_match_brute_force() {
    let (_d, f) = new_file();
    save_table(&f, "t", &rows(0, 3000, 7)).unwrap();
    check_all(&f, "t");
    // After an append.
    append_table(&f, "t", &rows(3000, 1500, 11)).unwrap();
    check_all(&f, "t");
    let e = explain(&f, "t", &col("temp").gt(1)).unwrap();
    assert_eq!(e.indexes(), [("temp", None)]);
    assert_eq!(e.windows(), e.windows_read());
}

#[test]
fn table_list_and_unknown_columns_are_errors() {
    let (_d, f) = new_file();
    save_table(&f, "t", &rows(0, 10, 3)).unwrap();
    let e = select_rows(&f, "t", &col("tags").eq(1)).unwrap_err();
    assert_eq!(e.path(), "$.tags", "{e}");
    assert!(e.to_string().contains("list column"), "{e}");
    let e = select_rows(&f, "t", &col("nope").eq(1)).unwrap_err();
    assert_eq!(e.path(), "$.nope", "{e}");
    assert!(e.to_string().contains("no column `nope`"), "{e}");
    assert!(e.to_string().contains("temp"), "{e}");
    let e = select_rows(&f, "t", &col("CATEGORIES").eq(1)).unwrap_err();
    assert!(e.to_string().contains("no column `CATEGORIES`"), "{e}");
    // Wrong literal types name the column.
    let e = select_rows(&f, "t", &col("name").eq(3)).unwrap_err();
    assert_eq!(e.path(), "$.name", "{e}");
    let e = select_rows(&f, "t", &col("cat").lt("Nope")).unwrap_err();
    assert!(e.to_string().contains("Low"), "{e}");
    // load_where is for vectors.
    let e = h5vec::load_where::<Row>(&f, "t", &col("id").eq(1)).unwrap_err();
    assert!(e.to_string().contains("load_table_where"), "{e}");
}

/// Adds 1-D column `name` of `vals` to table `t` with an optional fill.
fn add_f64(f: &File, name: &str, vals: &[f64], fill: Option<f64>) {
    let t = f.group("t").unwrap();
    let b = t.new_dataset::<f64>().shape(vals.len()).chunk(4);
    let b = match fill {
        Some(x) => b.fill_value(x),
        None => b,
    };
    b.create(name).unwrap().write(vals).unwrap();
}

#[test]
fn table_fill_values_and_nan() {
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct R {
        id: u32,
    }
    let (_d, f) = new_file();
    save_table(&f, "t", &(0..8).map(|id| R { id }).collect::<Vec<_>>()).unwrap();
    let nan = f64::NAN;
    let vals = [1.0, nan, 2.0, 7.0, nan, 7.0, 3.0, -0.0];
    add_f64(&f, "nanfill", &vals, Some(nan));
    add_f64(&f, "sevenfill", &vals, Some(7.0));
    add_f64(&f, "nofill", &vals, None);
    let rows = |flt: Filter| select_rows(&f, "t", &flt).unwrap();
    // NaN fill: NaN rows are missing.
    assert_eq!(rows(col("nanfill").is_null()), [1, 4]);
    assert_eq!(rows(col("nanfill").ne(2.0)), [0, 3, 5, 6, 7]);
    assert_eq!(rows(col("nanfill").ge(0)), [0, 2, 3, 5, 6, 7]);
    // Fill 7: the 7s are missing, NaN is a value (false, and true under `ne`).
    assert_eq!(rows(col("sevenfill").is_null()), [3, 5]);
    assert_eq!(rows(col("sevenfill").ne(2.0)), [0, 1, 4, 6, 7]);
    assert_eq!(rows(col("sevenfill").gt(0)), [0, 2, 6]);
    // No user-defined fill: nothing is missing.
    assert_eq!(rows(col("nofill").is_null()), Vec::<u64>::new());
    assert_eq!(rows(col("nofill").eq(7)), [3, 5]);
    assert_eq!(rows(!col("nofill").lt(3)), [1, 3, 4, 5, 6]);
    assert_eq!(rows(col("nofill").eq(0)), [7]);
    // An integer column with a user fill of its own.
    let t = f.group("t").unwrap();
    t.new_dataset::<i16>()
        .shape(8)
        .fill_value(5i16)
        .create("ints")
        .unwrap()
        .write(&[5i16, 1, 2, 5, -3, 4, 5, 0])
        .unwrap();
    assert_eq!(rows(col("ints").is_null()), [0, 3, 6]);
    assert_eq!(rows(col("ints").le(2)), [1, 2, 4, 7]);
    // A bool column declaring a fill value (HEP001 forbids one): never
    // missing, as in h5col.
    t.new_dataset::<bool>()
        .shape(8)
        .fill_value(true)
        .create("bfill")
        .unwrap()
        .write(&[true, false, true, true, false, false, true, false])
        .unwrap();
    assert_eq!(rows(col("bfill").is_null()), Vec::<u64>::new());
    assert_eq!(rows(col("bfill").eq(true)), [0, 2, 3, 6]);
    assert_eq!(rows(col("bfill").lt(true)), [1, 4, 5, 7]);
    // A fixed-length string column with a fill of "NA".
    let st = |s: &str| h5vec::hdf5::types::FixedAscii::<4>::from_ascii(s.as_bytes()).unwrap();
    let ds = t
        .new_dataset::<h5vec::hdf5::types::FixedAscii<4>>()
        .shape(8)
        .fill_value(st("NA"))
        .create("codes")
        .unwrap();
    ds.write(&[
        st("ab"),
        st("NA"),
        st(""),
        st("abc"),
        st("b"),
        st("NA"),
        st("a"),
        st("zz"),
    ])
    .unwrap();
    assert_eq!(rows(col("codes").is_null()), [1, 5]);
    assert_eq!(rows(col("codes").eq("")), [2]);
    assert_eq!(rows(col("codes").ge("ab")), [0, 3, 4, 7]);
    assert_eq!(rows(col("codes").ne("b")), [0, 2, 3, 6, 7]);
}

/// A copy of an h5col golden file, writable.
fn golden(stem: &str) -> (tempfile::TempDir, File) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden/h5col")
        .join(format!("{stem}.h5"));
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join("g.h5");
    std::fs::copy(&src, &dst).unwrap();
    let mut p = std::fs::metadata(&dst).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    p.set_readonly(false);
    std::fs::set_permissions(&dst, p).unwrap();
    let f = File::open_rw(&dst).unwrap();
    (dir, f)
}

#[test]
fn h5col_chunk_minmax_prunes_windows() {
    // x: 0.5 1.5 missing 3.5 | 4.5 5.5 6.5 7.5 | 8.5 9.5 (chunks of 4),
    // with a valid CHUNK_MINMAX.
    let (_d, f) = golden("g_categorical_indexes");
    let flt = col("x").gt(8.0);
    assert_eq!(select_rows(&f, "table", &flt).unwrap(), [8, 9]);
    let e = explain(&f, "table", &flt).unwrap();
    assert_eq!(e.indexes(), [("x", Some("CHUNK_MINMAX (3 entries)"))]);
    assert_eq!((e.windows(), e.windows_read()), (3, 1));
    // Missing rows come from the counts too.
    let e = explain(&f, "table", &col("x").is_null()).unwrap();
    assert_eq!((e.windows(), e.windows_read(), e.rows_matched()), (3, 1, 1));
    assert_eq!(
        select_rows(&f, "table", &!col("x").le(4)).unwrap(),
        [4, 5, 6, 7, 8, 9]
    );
    // Categorical columns and h5col bools.
    assert_eq!(
        select_rows(&f, "table", &col("level").eq("High")).unwrap(),
        [1, 6, 9]
    );
    assert_eq!(
        select_rows(&f, "table", &col("pay").is_null()).unwrap(),
        [3]
    );
    assert_eq!(
        select_rows(
            &f,
            "table",
            &(col("flag").eq(true) & col("level").ne("Low"))
        )
        .unwrap(),
        [3, 6, 9]
    );
    // After an append the index is stale: a scan, same answers.
    #[derive(H5Vector, Debug, Clone)]
    struct G {
        id: i64,
        x: Option<f64>,
        level: Option<String>,
        pay: Option<String>,
        flag: bool,
    }
    let more = vec![G {
        id: 10,
        x: Some(0.25),
        level: None,
        pay: Some("Cash".into()),
        flag: true,
    }];
    append_table(&f, "table", &more).unwrap();
    let e = explain(&f, "table", &flt).unwrap();
    assert_eq!(e.indexes(), [("x", None)]);
    assert_eq!(select_rows(&f, "table", &col("x").lt(1)).unwrap(), [0, 10]);
    let got: Vec<G> = load_table_where(&f, "table", &col("level").is_null()).unwrap();
    assert_eq!(got.iter().map(|g| g.id).collect::<Vec<_>>(), [4, 10]);
}

/// Rewrites column `column`'s SEARCH_INDEX_LIST of the golden table as
/// references to `targets`.
fn relink(f: &File, column: &str, targets: &[&str]) {
    let ds = f.dataset(&format!("table/{column}")).unwrap();
    ds.delete_attr("SEARCH_INDEX_LIST").unwrap();
    let refs: Vec<ObjectReference1> = targets
        .iter()
        .map(|t| f.reference::<ObjectReference1>(t).unwrap())
        .collect();
    ds.new_attr::<ObjectReference1>()
        .shape(refs.len())
        .create("SEARCH_INDEX_LIST")
        .unwrap()
        .write(&refs)
        .unwrap();
}

#[test]
fn hostile_table_indexes_are_ignored() {
    let flt = col("x").gt(8.0);
    let scans = |f: &File| {
        assert_eq!(select_rows(f, "table", &flt).unwrap(), [8, 9]);
        let e = explain(f, "table", &flt).unwrap();
        assert_eq!(e.indexes(), [("x", None)], "{e}");
        assert_eq!(e.windows(), e.windows_read());
    };
    // SEARCH_INDEX_LIST of integers.
    let (_d, f) = golden("g_categorical_indexes");
    let ds = f.dataset("table/x").unwrap();
    ds.delete_attr("SEARCH_INDEX_LIST").unwrap();
    ds.new_attr::<i32>()
        .shape(2)
        .create("SEARCH_INDEX_LIST")
        .unwrap()
        .write(&[1, 2])
        .unwrap();
    scans(&f);
    // References to junk: a column, the table, a labels dataset.
    let (_d, f) = golden("g_categorical_indexes");
    relink(
        &f,
        "x",
        &["table/id", "table", "table/CATEGORIES/pay__CATEGORIES"],
    );
    scans(&f);
    // Another column's index (a SORTED_ROWS is not CHUNK_MINMAX) and a
    // CHUNK_MINMAX of a different column... with the wrong entry count.
    let (_d, f) = golden("g_categorical_indexes");
    let si = f.group("table/SEARCH_INDEXES").unwrap();
    let src = si.dataset("x__chunk_minmax").unwrap();
    let t = src.dtype().unwrap();
    let bytes: Vec<u8> = {
        let (b, size) = h5vec_tests::read_rows_bytes(&src);
        b[..2 * size].to_vec()
    };
    let short = si
        .new_dataset_builder()
        .empty_as(&t)
        .shape(2)
        .create("short")
        .unwrap();
    h5vec_tests::overwrite_rows(&short, 0, &bytes);
    for (name, v) in [("SOURCE_GENERATION", 0u64), ("SOURCE_NROWS", 10)] {
        short
            .new_attr::<u64>()
            .create(name)
            .unwrap()
            .write_scalar(&v)
            .unwrap();
    }
    h5vec_tests::write_attr_ascii(&short, "KIND", "CHUNK_MINMAX");
    relink(&f, "x", &["table/SEARCH_INDEXES/short"]);
    scans(&f);
    // Entries whose row counts are wrong (n = 3 for chunks of 4).
    let (_d, f) = golden("g_categorical_indexes");
    let src = f.dataset("table/SEARCH_INDEXES/x__chunk_minmax").unwrap();
    let (mut b, size) = h5vec_tests::read_rows_bytes(&src);
    let n_at = size - 8;
    b[n_at..n_at + 8].copy_from_slice(&3u64.to_le_bytes());
    h5vec_tests::overwrite_rows(&src, 0, &b);
    scans(&f);
    // Stale tokens: a GENERATION that is not a scalar uint64.
    let (_d, f) = golden("g_categorical_indexes");
    let g = f.group("table").unwrap();
    g.delete_attr("GENERATION").unwrap();
    g.new_attr::<i64>()
        .create("GENERATION")
        .unwrap()
        .write_scalar(&0i64)
        .unwrap();
    scans(&f);
}

#[test]
fn hostile_table_columns_are_errors() {
    let (_d, f) = golden("g_categorical_indexes");
    // A category code outside the labels, on a row the filter reads.
    let ds = f.dataset("table/level").unwrap();
    h5vec_tests::overwrite_rows(&ds, 5, &[9u8]);
    // (`level == "Low"` alone is answered by the column's valid BITMAP
    // without reading it; `!=` under `not` reads the column.)
    let e = select_rows(&f, "table", &col("level").ne("Low")).unwrap_err();
    assert_eq!(e.path(), "$.level[5]", "{e}");
    assert!(e.to_string().contains("category code 9"), "{e}");
    // A bool column holding 2.
    let ds = f.dataset("table/flag").unwrap();
    h5vec_tests::overwrite_rows(&ds, 2, &[2u8]);
    let e = select_rows(&f, "table", &col("flag").eq(true)).unwrap_err();
    assert!(e.to_string().contains("0 or 1"), "{e}");
    // A column no filter compares: 2-D, and opaque bytes.
    let t = f.group("table").unwrap();
    t.new_dataset::<i32>()
        .shape((10, 2))
        .create("pair")
        .unwrap();
    let e = select_rows(&f, "table", &col("pair").eq(1)).unwrap_err();
    assert_eq!(e.path(), "$.pair", "{e}");
    t.new_dataset::<u16>().shape(10).create("time").unwrap();
    let e = select_rows(&f, "table", &col("time").eq("x")).unwrap_err();
    assert_eq!(e.path(), "$.time", "{e}");
}
