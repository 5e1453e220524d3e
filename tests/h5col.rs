//! Round trips of h5col tables and VLS arrays written by h5vec (SPEC.md sections 9, 10),
//! appends (also to h5col-written golden files) and write-side errors.

use std::path::Path;

use h5vec::h5col::{append_table, load_table, save_table};
use h5vec::hdf5::File;
use h5vec::vls::{load_strings, save_strings, save_strings_with};
use h5vec::{H5Vector, SaveOptions};
use h5vec_tests as common;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    id: i64,
    score: Option<f64>,
    small: Option<i32>,
    flag: bool,
    name: String,
    note: Option<String>,
    values: Vec<f32>,
    tags: Option<Vec<Option<String>>>,
    nested: Vec<Option<Vec<Option<i32>>>>,
    words: Vec<String>,
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            id: 1,
            score: Some(0.5),
            small: None,
            flag: true,
            name: "alpha".into(),
            note: None,
            values: vec![1.0, -0.0, f32::MAX],
            tags: Some(vec![Some("qc".into()), None, Some(String::new())]),
            nested: vec![Some(vec![Some(1), None]), None, Some(vec![])],
            words: vec!["héllo".into(), String::new()],
        },
        Row {
            id: -7,
            score: None,
            small: Some(i32::MIN),
            flag: false,
            name: "日本語テキスト".into(),
            note: Some("n".into()),
            values: vec![],
            tags: None,
            nested: vec![],
            words: vec![],
        },
        Row {
            id: i64::MAX,
            score: Some(f64::NAN.abs().min(3.0)),
            small: Some(0),
            flag: true,
            name: "x".into(),
            note: Some("🎉".into()),
            values: vec![0.25],
            tags: Some(vec![]),
            nested: vec![None],
            words: vec!["nul\u{0}inside".into()],
        },
    ]
}

fn tmp() -> (tempfile::TempDir, File) {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("t.h5")).unwrap();
    (dir, f)
}

#[test]
fn table_roundtrip_and_append() {
    let (_d, f) = tmp();
    let r = rows();
    save_table(&f, "table", &r).unwrap();
    assert_eq!(load_table::<Row>(&f, "table").unwrap(), r);
    let g = f.group("table").unwrap();
    assert_eq!(g.attr("NROWS").unwrap().read_scalar::<u64>().unwrap(), 3);
    // Fixed-length UTF-8 sized to the longest value (21 bytes).
    assert_eq!(f.dataset("table/name").unwrap().dtype().unwrap().size(), 21);
    // Missing numbers are the fill value.
    let small = f.dataset("table/small").unwrap().read_raw::<i32>().unwrap();
    assert_eq!(small, [-2147483647, i32::MIN, 0]);
    let score = f.dataset("table/score").unwrap().read_raw::<f64>().unwrap();
    assert_eq!(score[1], 9.969209968386869e36);

    append_table(&f, "table", &r[..2]).unwrap();
    let mut want = r.clone();
    want.extend_from_slice(&r[..2]);
    assert_eq!(load_table::<Row>(&f, "table").unwrap(), want);
    assert_eq!(g.attr("NROWS").unwrap().read_scalar::<u64>().unwrap(), 5);
    let offs = f
        .dataset("table/tags/OFFSETS")
        .unwrap()
        .read_raw::<u64>()
        .unwrap();
    assert_eq!(offs, [0, 3, 3, 3, 6, 6]);
    // Appending nothing keeps the table.
    append_table::<Row>(&f, "table", &[]).unwrap();
    assert_eq!(load_table::<Row>(&f, "table").unwrap(), want);
}

#[test]
fn empty_table() {
    let (_d, f) = tmp();
    save_table::<Row>(&f, "t", &[]).unwrap();
    assert!(load_table::<Row>(&f, "t").unwrap().is_empty());
    // String columns are fixed-length, sized at the first save (1 byte here):
    // longer values cannot be appended, and the error says so.
    let e = append_table(&f, "t", &rows()).unwrap_err();
    assert_eq!(e.path(), "$.name[0]", "{e}");
    assert_eq!(e.location(), Some("/t/name"), "{e}");
    assert!(e.to_string().contains("fixed length of 1 bytes"), "{e}");
    assert!(load_table::<Row>(&f, "t").unwrap().is_empty());
    #[derive(H5Vector, Debug, PartialEq)]
    struct NoStrings {
        a: u16,
        b: Vec<Vec<u8>>,
    }
    save_table::<NoStrings>(&f, "u", &[]).unwrap();
    let v = vec![NoStrings {
        a: 3,
        b: vec![vec![1, 2], vec![]],
    }];
    append_table(&f, "u", &v).unwrap();
    assert_eq!(load_table::<NoStrings>(&f, "u").unwrap(), v);
}

#[test]
fn write_errors_name_the_column_and_leave_no_trace() {
    let (_d, f) = tmp();
    let mut r = rows();
    r[1].small = Some(-2147483647);
    let e = save_table(&f, "t", &r).unwrap_err();
    assert_eq!(e.path(), "$.small[1]", "{e}");
    assert!(e.to_string().contains("fill value"), "{e}");
    assert!(!f.link_exists("t"));
    let mut r = rows();
    r[2].name = String::new();
    let e = save_table(&f, "t", &r).unwrap_err().to_string();
    assert!(
        e.contains("$.name[2] (/t/name)") && e.contains("fill value"),
        "{e}"
    );
    let mut r = rows();
    r[0].note = Some("a\0b".into());
    let e = save_table(&f, "t", &r).unwrap_err().to_string();
    assert!(
        e.contains("$.note[0] (/t/note)") && e.contains("NUL"),
        "{e}"
    );
    // Appending a longer string than the fixed length is refused, and the
    // committed rows stay as they were.
    save_table(&f, "t", &rows()).unwrap();
    let mut long = rows();
    long[0].name = "x".repeat(22);
    let e = append_table(&f, "t", &long).unwrap_err().to_string();
    assert!(
        e.contains("$.name[3] (/t/name)") && e.contains("22 bytes"),
        "{e}"
    );
    assert_eq!(load_table::<Row>(&f, "t").unwrap(), rows());
    // Saving over an existing name.
    assert!(save_table(&f, "t", &rows()).is_err());
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Truncated {
    n: i32,
    items: Vec<i64>,
    names: Option<Vec<Option<String>>>,
}

fn golden(sub: &str, stem: &str) -> (tempfile::TempDir, File) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(sub)
        .join(format!("{stem}.h5"));
    assert!(src.is_file(), "golden file missing: {}", src.display());
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
fn append_to_h5col_truncated_table_overwrites_the_stale_tail() {
    let (_d, f) = golden("h5col", "f_truncated_tail");
    let before = load_table::<Truncated>(&f, "table").unwrap();
    assert_eq!(before.len(), 4);
    let new = vec![Truncated {
        n: 5,
        items: vec![1, 2],
        names: Some(vec![None, Some("z".into())]),
    }];
    append_table(&f, "table", &new).unwrap();
    let mut want = before;
    want.extend(new);
    assert_eq!(load_table::<Truncated>(&f, "table").unwrap(), want);
    // Every dataset now ends exactly at the committed rows.
    assert_eq!(f.dataset("table/n").unwrap().shape(), [5]);
    assert_eq!(
        f.dataset("table/items/OFFSETS")
            .unwrap()
            .read_raw::<u64>()
            .unwrap(),
        [0, 1, 3, 3, 4, 6]
    );
    assert_eq!(
        f.dataset("table/items/VALUES")
            .unwrap()
            .read_raw::<i64>()
            .unwrap(),
        [10, 11, 12, 99, 1, 2]
    );
    assert_eq!(f.dataset("table/names/MASK").unwrap().shape(), [5]);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Mixed {
    id: Option<i64>,
    name: Option<String>,
    score: Option<f64>,
    flag: bool,
    samples: Option<Vec<f64>>,
    code: Option<String>,
    labels: Vec<String>,
}

#[test]
fn append_to_h5col_mixed_table() {
    let (_d, f) = golden("h5col", "d_mixed_table");
    let mut want = load_table::<Mixed>(&f, "table").unwrap();
    let new = vec![Mixed {
        id: None,
        name: Some("ünï".into()),
        score: Some(2.0),
        flag: true,
        samples: Some(vec![7.0]),
        code: Some("QQ".into()),
        labels: vec!["a".into()],
    }];
    append_table(&f, "table", &new).unwrap();
    want.extend(new);
    assert_eq!(load_table::<Mixed>(&f, "table").unwrap(), want);
    // A struct that does not cover every column cannot append.
    #[derive(H5Vector, Debug)]
    struct Partial {
        id: Option<i64>,
    }
    assert_eq!(load_table::<Partial>(&f, "table").unwrap().len(), 7);
    let e = append_table(&f, "table", &[Partial { id: Some(1) }])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/table") && e.contains("append writes every column"),
        "{e}"
    );
}

#[test]
fn vls_roundtrip() {
    let (_d, f) = tmp();
    let v: Vec<Option<String>> = vec![
        Some("NA".into()),
        None,
        Some("".into()),
        Some("héllo".into()),
        Some("NA_".into()),
        None,
    ];
    save_strings(&f, "atomic_vector", &v).unwrap();
    let g = f.group("atomic_vector").unwrap();
    assert_eq!(load_strings(&g).unwrap(), v);
    let p = f.dataset("atomic_vector/pointers").unwrap();
    let ph = p.attr("missing-value-placeholder").unwrap();
    assert_eq!(
        ph.read_scalar::<h5vec::hdf5::types::VarLenUnicode>()
            .unwrap()
            .as_str(),
        "NA__"
    );
    let heap = f
        .dataset("atomic_vector/heap")
        .unwrap()
        .read_raw::<u8>()
        .unwrap();
    // Values back to back in row order; the placeholder once, after them,
    // shared by every missing entry.
    assert_eq!(heap, b"NAh\xc3\xa9lloNA_NA__".to_vec());
    // No missing values: no attribute.
    let v2: Vec<Option<String>> = vec![Some("a".into()), Some("b".into())];
    save_strings_with(&f, "b", &v2, &SaveOptions::default().dedup_strings(true)).unwrap();
    let g2 = f.group("b").unwrap();
    assert!(f
        .dataset("b/pointers")
        .unwrap()
        .attr_names()
        .unwrap()
        .is_empty());
    assert_eq!(load_strings(&g2).unwrap(), v2);
    // Empty.
    save_strings(&f, "e", &[]).unwrap();
    assert!(load_strings(&f.group("e").unwrap()).unwrap().is_empty());
    // Dedup shares slices.
    let rep = vec![Some("same".to_string()); 5];
    save_strings_with(&f, "d", &rep, &SaveOptions::default().dedup_strings(true)).unwrap();
    assert_eq!(f.dataset("d/heap").unwrap().shape(), [4]);
    assert_eq!(load_strings(&f.group("d").unwrap()).unwrap(), rep);
}

#[test]
fn vls_write_errors() {
    let (_d, f) = tmp();
    let e = save_strings(&f, "x", &[Some("ok".into()), Some("a\0b".into())]).unwrap_err();
    assert_eq!(e.path(), "$[1]", "{e}");
    assert!(e.to_string().contains("NUL"), "{e}");
    assert!(!f.link_exists("x"));
    save_strings(&f, "x", &[None]).unwrap();
    assert!(save_strings(&f, "x", &[None]).is_err());
    assert!(save_strings(&f, "a/b", &[None]).is_err());
}

// ---------------------------------------------------------------------------
// Categorical columns and search-index tokens (SPEC.md section 9).

/// The labels of `level` in the golden table `g_categorical_indexes`.
#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Level {
    Low,
    Mid,
    High,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Cat {
    id: i64,
    x: Option<f64>,
    level: Option<Level>,
    pay: Option<String>,
    flag: bool,
}

fn attr_u64(obj: &h5vec::hdf5::Location, name: &str) -> u64 {
    obj.attr(name).unwrap().read_scalar::<u64>().unwrap()
}

fn codes(f: &File, path: &str) -> Vec<i8> {
    f.dataset(path).unwrap().read_raw::<i8>().unwrap()
}

#[test]
fn categorical_golden_reads_as_labels_and_appends_stale_the_indexes() {
    let (_d, f) = golden("h5col", "g_categorical_indexes");
    let before = load_table::<Cat>(&f, "table").unwrap();
    assert_eq!(before.len(), 10);
    // The same column as labels, as codes and as a required enum.
    #[derive(H5Vector, Debug, PartialEq)]
    struct Labels {
        level: Option<String>,
    }
    let labels: Vec<Option<String>> = load_table::<Labels>(&f, "table")
        .unwrap()
        .into_iter()
        .map(|r| r.level)
        .collect();
    let want = [
        "Low", "High", "Mid", "Mid", "", "Low", "High", "Low", "Mid", "High",
    ];
    let want: Vec<Option<String>> = want
        .iter()
        .map(|s| (!s.is_empty()).then(|| s.to_string()))
        .collect();
    assert_eq!(labels, want);
    // A number field reads the codes (the missing code is the fill value).
    #[derive(H5Vector, Debug, PartialEq)]
    struct Codes {
        level: Option<i8>,
    }
    let c: Vec<Option<i8>> = load_table::<Codes>(&f, "table")
        .unwrap()
        .iter()
        .map(|r| r.level)
        .collect();
    let c2 = [0, 2, 1, 1, -1, 0, 2, 0, 1, 2].map(|c| (c >= 0).then_some(c));
    assert_eq!(c, c2);
    assert_eq!(codes(&f, "table/level"), [0, 2, 1, 1, -1, 0, 2, 0, 1, 2]);
    #[derive(H5Vector, Debug)]
    struct RequiredLevel {
        level: Level,
    }
    let e = load_table::<RequiredLevel>(&f, "table").unwrap_err();
    assert_eq!(
        (e.path(), e.location()),
        ("$.level[4]", Some("/table/level"))
    );
    assert!(common::invalid(&e).contains("Option<Level>"), "{e}");
    // An enum without the label "High": the error names the column, row and label.
    #[derive(H5Vector, Debug)]
    #[repr(u8)]
    enum Short {
        Low,
        Mid,
    }
    #[derive(H5Vector, Debug)]
    struct ShortLevel {
        level: Option<Short>,
    }
    let e = load_table::<ShortLevel>(&f, "table").unwrap_err();
    assert_eq!(
        (e.path(), e.location()),
        ("$.level[1]", Some("/table/level"))
    );
    let (expected, found) = common::mismatch(&e);
    assert_eq!(expected, "a label naming a variant of `Short` (Low, Mid)");
    assert_eq!(found, "the label \"High\"");

    // Arrow: a dictionary of the labels, the missing code null.
    let batch = h5vec::arrow::read_vector(&f, "table").unwrap();
    let level = batch.column_by_name("level").unwrap();
    assert_eq!(
        level.data_type(),
        &arrow_schema::DataType::Dictionary(
            Box::new(arrow_schema::DataType::Int32),
            Box::new(arrow_schema::DataType::Utf8)
        )
    );
    let dict = level
        .as_any()
        .downcast_ref::<arrow_array::DictionaryArray<arrow_array::types::Int32Type>>()
        .unwrap();
    let values = dict
        .values()
        .as_any()
        .downcast_ref::<arrow_array::StringArray>()
        .unwrap();
    assert_eq!(
        values.iter().flatten().collect::<Vec<_>>(),
        ["Low", "Mid", "High"]
    );
    let keys: Vec<Option<i32>> = dict.keys().iter().collect();
    assert_eq!(
        keys,
        [
            Some(0),
            Some(2),
            Some(1),
            Some(1),
            None,
            Some(0),
            Some(2),
            Some(0),
            Some(1),
            Some(2)
        ]
    );

    // Append (enum and string labels): GENERATION 0 -> 1, the index tokens
    // stay (0, 10): every index is stale, none is rewritten.
    let g = f.group("table").unwrap();
    assert_eq!(attr_u64(&g, "GENERATION"), 0);
    let new = vec![
        Cat {
            id: 10,
            x: Some(10.5),
            level: Some(Level::High),
            pay: Some("Dispute".into()),
            flag: true,
        },
        Cat {
            id: 11,
            x: None,
            level: None,
            pay: None,
            flag: false,
        },
    ];
    append_table(&f, "table", &new).unwrap();
    let mut all = before.clone();
    all.extend(new.clone());
    assert_eq!(load_table::<Cat>(&f, "table").unwrap(), all);
    assert_eq!(attr_u64(&g, "GENERATION"), 1);
    assert_eq!(attr_u64(&g, "NROWS"), 12);
    let si = g.group("SEARCH_INDEXES").unwrap();
    let mut names = si.member_names().unwrap();
    names.sort();
    for n in names {
        let ds = si.dataset(&n).unwrap();
        if ds.attr_names().unwrap().contains(&"KIND".to_string()) {
            assert_eq!(attr_u64(&ds, "SOURCE_GENERATION"), 0, "{n}");
            assert_eq!(attr_u64(&ds, "SOURCE_NROWS"), 10, "{n}");
        }
    }
    assert_eq!(&codes(&f, "table/level")[10..], [2, -1]);
    assert_eq!(&codes(&f, "table/pay")[10..], [2, -1]);
    // The column attributes survive the append.
    let id = f.dataset("table/id").unwrap();
    assert_eq!(common::attr_string(&id, "units").as_deref(), Some("s"));
    assert_eq!(
        common::attr_string(&id, "description").as_deref(),
        Some("row id")
    );
    assert_eq!(
        id.attr("valid_min").unwrap().read_scalar::<i64>().unwrap(),
        0
    );
    assert_eq!(
        id.attr("valid_max").unwrap().read_scalar::<i64>().unwrap(),
        1_000_000
    );
    assert_eq!(id.attr("SEARCH_INDEX_LIST").unwrap().shape(), [3]);
    assert!(f.dataset("table/pay").unwrap().attr("CATEGORIES").is_ok());
    // A label that is not a category, and a second append (GENERATION 2).
    let bad = vec![Cat {
        pay: Some("Barter".into()),
        ..new[0].clone()
    }];
    let e = append_table(&f, "table", &bad).unwrap_err();
    assert_eq!((e.path(), e.location()), ("$.pay[12]", Some("/table/pay")));
    assert!(
        common::encode(&e).starts_with("\"Barter\" is not a category of the column"),
        "{e}"
    );
    assert_eq!(load_table::<Cat>(&f, "table").unwrap(), all);
    append_table(&f, "table", &new[..1]).unwrap();
    assert_eq!(attr_u64(&g, "GENERATION"), 2);
    assert_eq!(load_table::<Cat>(&f, "table").unwrap().len(), 13);
}

#[test]
fn categorical_save_writes_h5col_layout() {
    let (_d, f) = tmp();
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct W {
        level: Level,
        maybe: Option<Level>,
    }
    let rows = vec![
        W {
            level: Level::High,
            maybe: None,
        },
        W {
            level: Level::Low,
            maybe: Some(Level::Mid),
        },
    ];
    save_table(&f, "w", &rows).unwrap();
    assert_eq!(load_table::<W>(&f, "w").unwrap(), rows);
    assert_eq!(codes(&f, "w/level"), [2, 0]);
    assert_eq!(codes(&f, "w/maybe"), [-1, 1]);
    let ds = f.dataset("w/maybe").unwrap();
    assert_eq!(ds.dtype().unwrap().size(), 1);
    assert_eq!(ds.fill_value().unwrap().unwrap().to_string(), "-1");
    let labels = f.dataset("w/CATEGORIES/maybe__CATEGORIES").unwrap();
    assert_eq!(labels.shape(), [3]);
    let (bytes, size) = common::read_rows_bytes(&labels);
    assert_eq!(size, 4);
    assert_eq!(bytes, b"Low\0Mid\0High");
    assert!(common::str_type(&labels).utf8);
    // The reference is an H5T_STD_REF_OBJ to the labels dataset.
    let r = ds
        .attr("CATEGORIES")
        .unwrap()
        .read_scalar::<h5vec::hdf5::ObjectReference1>()
        .unwrap();
    match f.dereference(&r).unwrap() {
        h5vec::hdf5::ReferencedObject::Dataset(d) => {
            assert_eq!(d.name(), "/w/CATEGORIES/maybe__CATEGORIES")
        }
        other => panic!("{other:?}"),
    }
    let mut members = f.group("w").unwrap().member_names().unwrap();
    members.sort();
    assert_eq!(members, ["CATEGORIES", "level", "maybe"]);
    // Labels (String) append to a categorical column; a variant the enum
    // read back does not know of cannot be appended from another enum.
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct S {
        level: String,
        maybe: Option<String>,
    }
    append_table(
        &f,
        "w",
        &[S {
            level: "Mid".into(),
            maybe: Some("High".into()),
        }],
    )
    .unwrap();
    assert_eq!(codes(&f, "w/level"), [2, 0, 1]);
    assert_eq!(
        load_table::<S>(&f, "w").unwrap()[2],
        S {
            level: "Mid".into(),
            maybe: Some("High".into())
        }
    );
    #[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
    #[repr(u8)]
    enum Wide {
        Low,
        Huge,
    }
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct X {
        level: Wide,
        maybe: Option<Wide>,
    }
    let e = append_table(
        &f,
        "w",
        &[X {
            level: Wide::Huge,
            maybe: None,
        }],
    )
    .unwrap_err();
    assert_eq!((e.path(), e.location()), ("$.level[3]", Some("/w/level")));
    assert!(
        common::encode(&e).starts_with("\"Huge\" is not a category"),
        "{e}"
    );
    // No GENERATION on a table without search indexes.
    assert!(!f
        .group("w")
        .unwrap()
        .attr_names()
        .unwrap()
        .contains(&"GENERATION".into()));
}

#[test]
fn categorical_hostile_references_and_codes() {
    use h5vec::hdf5::{ObjectReference1, ObjectReference2};
    #[derive(H5Vector, Debug)]
    struct P {
        pay: Option<String>,
    }
    let check = |f: &File, path: &str, want: &str| {
        let e = load_table::<P>(f, "table").unwrap_err();
        assert_eq!(e.path(), path, "{e}");
        assert!(e.to_string().contains(want), "{e}");
        let e = h5vec::arrow::read_vector(f, "table").unwrap_err();
        assert!(e.to_string().contains(want), "{e}");
    };
    let rewrite = |f: &File, r: Option<ObjectReference1>| {
        let ds = f.dataset("table/pay").unwrap();
        ds.delete_attr("CATEGORIES").unwrap();
        let a = ds
            .new_attr::<ObjectReference1>()
            .shape(())
            .create("CATEGORIES")
            .unwrap();
        if let Some(r) = r {
            a.write_scalar(&r).unwrap();
        }
    };
    // A null reference (an attribute never written holds zeros).
    let (_d, f) = golden("h5col", "g_categorical_indexes");
    rewrite(&f, None);
    check(&f, "$.pay", "a null reference");
    // A reference to a dataset outside CATEGORIES.
    rewrite(
        &f,
        Some(f.reference::<ObjectReference1>("table/x").unwrap()),
    );
    check(&f, "$.pay", "a reference to no member of it");
    // HDF5 1.12's H5T_STD_REF reads too.
    let ds = f.dataset("table/pay").unwrap();
    ds.delete_attr("CATEGORIES").unwrap();
    let r2 = f
        .reference::<ObjectReference2>("table/CATEGORIES/pay__CATEGORIES")
        .unwrap();
    ds.new_attr::<ObjectReference2>()
        .shape(())
        .create("CATEGORIES")
        .unwrap()
        .write_scalar(&r2)
        .unwrap();
    assert_eq!(
        load_table::<P>(&f, "table").unwrap()[2].pay.as_deref(),
        Some("Credit card")
    );
    // A code out of range (3 labels): the error names the row.
    let (_d2, f) = golden("h5col", "g_categorical_indexes");
    common::overwrite_rows(&f.dataset("table/pay").unwrap(), 5, &[7u8]);
    check(
        &f,
        "$.pay[5]",
        "category code 7 is neither the column's fill value -1 nor a position in the 3 labels of `/table/CATEGORIES/pay__CATEGORIES`",
    );
    // Not a reference at all, and no CATEGORIES group.
    let (_d3, f) = golden("h5col", "g_categorical_indexes");
    let ds = f.dataset("table/pay").unwrap();
    ds.delete_attr("CATEGORIES").unwrap();
    ds.new_attr::<i32>().shape(()).create("CATEGORIES").unwrap();
    check(
        &f,
        "$.pay",
        "one object reference (H5T_STD_REF_OBJ or H5T_STD_REF)",
    );
    let (_d4, f) = golden("h5col", "g_categorical_indexes");
    f.group("table").unwrap().unlink("CATEGORIES").unwrap();
    check(&f, "$.pay", "no CATEGORIES group in the table");
}

#[test]
fn append_repairs_a_malformed_generation_above_every_index_token() {
    let (_d, f) = golden("h5col", "g_categorical_indexes");
    let g = f.group("table").unwrap();
    // An index claims generation 5; GENERATION is an int32 3.
    let ds = f.dataset("table/SEARCH_INDEXES/x__chunk_minmax").unwrap();
    ds.attr("SOURCE_GENERATION")
        .unwrap()
        .write_scalar(&5u64)
        .unwrap();
    g.delete_attr("GENERATION").unwrap();
    g.new_attr::<i32>()
        .shape(())
        .create("GENERATION")
        .unwrap()
        .write_scalar(&3i32)
        .unwrap();
    let rows = load_table::<Cat>(&f, "table").unwrap();
    append_table(&f, "table", &rows[..1]).unwrap();
    // Repaired to 6 (above 3 and 5), then bumped by the append: 7, uint64.
    assert_eq!(attr_u64(&g, "GENERATION"), 7);
    assert_eq!(g.attr("GENERATION").unwrap().dtype().unwrap().size(), 8);
    // Without GENERATION beside index datasets: one is created above them.
    g.delete_attr("GENERATION").unwrap();
    append_table(&f, "table", &rows[..1]).unwrap();
    assert_eq!(attr_u64(&g, "GENERATION"), 7);
    assert_eq!(load_table::<Cat>(&f, "table").unwrap().len(), 12);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Filled {
    x: Option<i32>,
    y: Option<f64>,
}

/// Another writer's fill value (h5col lets a column choose its own: -1, a
/// NaN) is what an append writes a missing value as, and a present value
/// equal to it is refused; a column declaring no fill value cannot take a
/// missing value.
#[test]
fn appends_write_missing_values_as_the_columns_own_fill() {
    use h5vec::hdf5::Dataset;
    let (_d, f) = tmp();
    let first = vec![
        Filled {
            x: Some(1),
            y: Some(0.5),
        },
        Filled { x: None, y: None },
    ];
    save_table(&f, "t", &first).unwrap();
    let t = f.group("t").unwrap();
    // The columns again, with fills of their own (as h5col's ColumnSpec
    // writes them), and the same rows.
    let remake = |name: &str, make: &dyn Fn(&h5vec::hdf5::Group) -> Dataset| {
        t.unlink(name).unwrap();
        make(&t);
    };
    remake("x", &|g| {
        let ds = g
            .new_dataset::<i32>()
            .shape(2..)
            .chunk(4)
            .fill_value(-1i32)
            .create("x")
            .unwrap();
        ds.write(&[1i32, -1]).unwrap();
        ds
    });
    remake("y", &|g| {
        let ds = g
            .new_dataset::<f64>()
            .shape(2..)
            .chunk(4)
            .fill_value(f64::NAN)
            .create("y")
            .unwrap();
        ds.write(&[0.5f64, f64::NAN]).unwrap();
        ds
    });
    assert_eq!(load_table::<Filled>(&f, "t").unwrap(), first);
    let more = vec![
        Filled { x: None, y: None },
        Filled {
            x: Some(-2),
            y: Some(2.0),
        },
    ];
    append_table(&f, "t", &more).unwrap();
    let all: Vec<Filled> = first.iter().chain(&more).cloned().collect();
    assert_eq!(load_table::<Filled>(&f, "t").unwrap(), all);
    let x: Vec<i32> = f.dataset("t/x").unwrap().read_raw().unwrap();
    assert_eq!(x, [1, -1, -1, -2]);
    let y: Vec<f64> = f.dataset("t/y").unwrap().read_raw().unwrap();
    assert!(y[2].is_nan() && y[3] == 2.0, "{y:?}");
    // A present -1 would read back as missing.
    let e = append_table(
        &f,
        "t",
        &[Filled {
            x: Some(-1),
            y: None,
        }],
    )
    .unwrap_err();
    assert!(e.to_string().contains("fill value"), "{e}");
    assert_eq!(load_table::<Filled>(&f, "t").unwrap(), all);
    // No fill value declared: a missing value has no way to be written.
    t.unlink("x").unwrap();
    let ds = t
        .new_dataset::<i32>()
        .shape(4..)
        .chunk(4)
        .create("x")
        .unwrap();
    ds.write(&[1i32, 5, 6, -2]).unwrap();
    let e = append_table(
        &f,
        "t",
        &[Filled {
            x: None,
            y: Some(1.0),
        }],
    )
    .unwrap_err();
    assert!(e.to_string().contains("declares no fill value"), "{e}");
    append_table(
        &f,
        "t",
        &[Filled {
            x: Some(7),
            y: Some(1.0),
        }],
    )
    .unwrap();
    let back = load_table::<Filled>(&f, "t").unwrap();
    assert_eq!(back.len(), 5);
    assert_eq!(
        back[4],
        Filled {
            x: Some(7),
            y: Some(1.0)
        }
    );
}
