//! Round trips of h5col tables and VLS arrays written by h5vec (SPEC.md sections 9, 10),
//! appends (also to h5col-written golden files) and write-side errors.

use std::path::Path;

use h5vec::h5col::{append_table, load_table, save_table};
use h5vec::hdf5::File;
use h5vec::vls::{load_strings, save_strings, save_strings_with};
use h5vec::{H5Vector, SaveOptions};

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
