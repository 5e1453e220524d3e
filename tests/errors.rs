//! Errors carry where they happened as fields: `Error::path()` is always a
//! logical path (`$`, `$.a.b`, `$[3]`, `$.a[]`), `Error::location()` the HDF5
//! object or attribute involved. Names holding spaces and parentheses come
//! back exactly as they are (nothing is parsed back out of a message).

use h5vec_tests as common;

use common::{mem_file, mismatch};
use h5vec::hdf5::Group;
use h5vec::{Error, H5Vector};

#[derive(H5Vector, Debug, PartialEq)]
struct Paren {
    #[h5vec(rename = "a (b)")]
    x: u32,
}

#[derive(H5Vector, Debug, PartialEq)]
struct Close {
    #[h5vec(rename = ")")]
    x: u32,
}

#[derive(H5Vector, Debug, PartialEq)]
struct Outer {
    #[h5vec(rename = "in (1)")]
    inner: Paren,
}

/// Replaces dataset `name` of `group` by a 2-D dataset: a shape error.
fn make_2d(group: &Group, name: &str) {
    group.unlink(name).unwrap();
    group
        .new_dataset::<u32>()
        .shape((1, 2))
        .create(name)
        .unwrap();
}

#[track_caller]
fn assert_place(e: &Error, path: &str, location: Option<&str>) {
    assert_eq!((e.path(), e.location()), (path, location), "{e}");
    let shown = match location {
        Some(loc) => format!("{path} ({loc}): "),
        None => format!("{path}: "),
    };
    assert!(e.to_string().starts_with(&shown), "{e}");
}

#[test]
fn field_names_with_parentheses() {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[Paren { x: 1 }]).unwrap();
    assert_eq!(
        h5vec::load_vector::<Paren>(&f, "v").unwrap(),
        [Paren { x: 1 }]
    );
    make_2d(&f.group("v/data/a (b)").unwrap(), "values");
    let e = h5vec::load_vector::<Paren>(&f, "v").unwrap_err();
    assert_place(&e, "$.a (b)", Some("/v/data/a (b)/values"));
    assert_eq!(mismatch(&e), ("shape (N)", "[1, 2]"), "{e}");

    h5vec::save_vector(&f, "w", &[Close { x: 1 }]).unwrap();
    make_2d(&f.group("w/data/)").unwrap(), "values");
    let e = h5vec::load_vector::<Close>(&f, "w").unwrap_err();
    assert_place(&e, "$.)", Some("/w/data/)/values"));

    h5vec::save_vector(
        &f,
        "o",
        &[Outer {
            inner: Paren { x: 1 },
        }],
    )
    .unwrap();
    make_2d(&f.group("o/data/in (1)/a (b)").unwrap(), "values");
    let e = h5vec::load_vector::<Outer>(&f, "o").unwrap_err();
    assert_place(&e, "$.in (1).a (b)", Some("/o/data/in (1)/a (b)/values"));
    // load_column walks the same names.
    let e = h5vec::load_column::<u32>(&f, "o", "in (1).a (b)").unwrap_err();
    assert_place(&e, "$.in (1).a (b)", Some("/o/data/in (1)/a (b)/values"));
}

#[test]
fn vector_names_with_spaces_and_parentheses() {
    let f = mem_file();
    let name = "my vec (1)";
    h5vec::save_vector(&f, name, &[1u32, 2]).unwrap();
    make_2d(&f.group("my vec (1)/data").unwrap(), "values");
    let e = h5vec::load_vector::<u32>(&f, name).unwrap_err();
    assert_place(&e, "$", Some("/my vec (1)/data/values"));

    let e = h5vec::load_vector::<u32>(&f, "no such (vector)").unwrap_err();
    assert_place(&e, "$", Some("/no such (vector)"));
    let e = h5vec::save_vector(&f, name, &[1u32]).unwrap_err();
    assert_place(&e, "$", Some("/my vec (1)"));

    let g = f.create_group("a (b)").unwrap();
    let e = h5vec::load_vector::<u32>(&g, "c)").unwrap_err();
    assert_place(&e, "$", Some("/a (b)/c)"));
}

#[derive(H5Vector, Debug, PartialEq)]
struct Row {
    #[h5vec(rename = "n (kg)")]
    n: f64,
}

#[test]
fn table_and_vls_errors_have_logical_paths() {
    let f = mem_file();
    h5vec::h5col::save_table(&f, "t (1)", &[Row { n: 1.0 }]).unwrap();
    let t = f.group("t (1)").unwrap();

    // A column: the row's field.
    make_2d(&t, "n (kg)");
    let e = h5vec::h5col::load_table::<Row>(&f, "t (1)").unwrap_err();
    assert_place(&e, "$.n (kg)", Some("/t (1)/n (kg)"));

    // A table attribute: the table.
    t.delete_attr("NROWS").unwrap();
    t.new_attr::<f64>().shape(()).create("NROWS").unwrap();
    let e = h5vec::h5col::load_table::<Row>(&f, "t (1)").unwrap_err();
    assert_place(&e, "$", Some("/t (1) attribute NROWS"));

    // A VLS array: `$`, its elements `$[i]`.
    let values = vec![Some("x".to_string()), None];
    h5vec::vls::save_strings(&f, "s (x)", &values).unwrap();
    let s = f.group("s (x)").unwrap();
    common::set_vls_pointer(&s.dataset("pointers").unwrap(), 1, 7, 1);
    let e = h5vec::vls::load_strings(&s).unwrap_err();
    assert_place(&e, "$[1]", Some("/s (x)/pointers"));
    s.delete_attr("type").unwrap();
    common::write_attr_ascii(&s, "type", "other");
    let e = h5vec::vls::load_strings(&s).unwrap_err();
    assert_place(&e, "$", Some("/s (x) attribute type"));

    // Writes: the element's logical path.
    let e = h5vec::vls::save_strings(&f, "z (z)", &[Some("a\0b".into())]).unwrap_err();
    assert_eq!(e.path(), "$[0]", "{e}");
}

// ---- Errors about the file itself, and read-only handles (issue 28) ----

/// `691370` as `691,370`, as the messages write byte counts.
fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn a_text_file_is_not_an_hdf5_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "just some text\n".repeat(100)).unwrap();
    let want = format!("not an HDF5 file: {}", path.display());
    for e in [
        h5vec::open_file(&path).unwrap_err(),
        h5vec::open_file_rw(&path).unwrap_err(),
        h5vec::open_file_live(&path).unwrap_err(),
    ] {
        assert_eq!(e.to_string(), want);
        assert!(matches!(e.kind(), h5vec::ErrorKind::Invalid(_)), "{e:?}");
        assert_eq!(e.path(), "$");
        assert_eq!(e.location(), Some(path.to_str().unwrap()));
    }
}

#[test]
fn a_truncated_file_says_how_many_bytes_are_present() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.h5");
    let xs: Vec<u64> = (0..100_000).collect();
    h5vec::save_vector(&h5vec::create_file(&path).unwrap(), "xs", &xs).unwrap();
    let full = std::fs::metadata(&path).unwrap().len();
    assert!(full > 700_000, "{full}");
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(100_000).unwrap();
    drop(f);
    let want = format!(
        "file truncated: 100,000 of {} bytes present: {}",
        thousands(full),
        path.display()
    );
    for e in [
        h5vec::open_file(&path).unwrap_err(),
        h5vec::open_file_rw(&path).unwrap_err(),
    ] {
        assert_eq!(e.to_string(), want);
        assert!(matches!(e.kind(), h5vec::ErrorKind::Invalid(_)), "{e:?}");
    }
}

#[test]
fn other_open_errors_keep_hdf5s_text_at_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.h5");
    let e = h5vec::open_file(&path).unwrap_err();
    assert!(matches!(e.kind(), h5vec::ErrorKind::Hdf5(_)), "{e:?}");
    assert_place(&e, "$", Some(path.to_str().unwrap()));
}

mod read_only {
    use std::sync::Arc;

    use h5vec::arrow::arrow_array::{ArrayRef, RecordBatch, UInt32Array};
    use h5vec::{H5Vector, SaveOptions, VectorWriter};

    #[derive(H5Vector, Debug, PartialEq)]
    struct Row {
        id: u32,
    }

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct SRow {
        id: u32,
    }

    fn batch() -> RecordBatch {
        let ids: ArrayRef = Arc::new(UInt32Array::from(vec![7u32, 8]));
        RecordBatch::try_from_iter([("id", ids)]).unwrap()
    }

    /// Every write of h5vec, through `g`, named by what it is.
    fn writes(g: &h5vec::hdf5::Group) -> Vec<(&'static str, h5vec::Result<()>)> {
        let o = SaveOptions::default();
        let r = SaveOptions::default().replace(true);
        vec![
            ("save_vector", h5vec::save_vector(g, "new", &[1u32])),
            (
                "save_vector_with",
                h5vec::save_vector_with(g, "xs", &[1u32], &r),
            ),
            ("append_vector", h5vec::append_vector(g, "xs", &[4u32])),
            (
                "append_vector_with",
                h5vec::append_vector_with(g, "xs", &[4u32], &o),
            ),
            ("repair", h5vec::repair::<u32>(g, "xs")),
            ("compact_vector", h5vec::compact_vector(g, "xs", &o)),
            ("copy_vector", h5vec::copy_vector(g, "xs", g, "copy", &o)),
            ("create_group", h5vec::create_group(g, "grp").map(drop)),
            (
                "VectorWriter::create",
                VectorWriter::<u32>::create(g, "w", &o).map(drop),
            ),
            (
                "VectorWriter::open_append",
                VectorWriter::<u32>::open_append(g, "xs", &o).map(drop),
            ),
            (
                "arrow::save_record_batch",
                h5vec::arrow::save_record_batch(g, "a", &batch(), &o),
            ),
            (
                "arrow::save_batches",
                h5vec::arrow::save_batches(g, "b", &batch().schema(), [Ok(batch())], &o).map(drop),
            ),
            (
                "arrow::append_record_batch",
                h5vec::arrow::append_record_batch(g, "rows", &batch()),
            ),
            ("arrow::repair", h5vec::arrow::repair(g, "xs")),
            (
                "serde::save_vector",
                h5vec::serde::save_vector(g, "s", &[SRow { id: 1 }]),
            ),
            (
                "serde::append_vector",
                h5vec::serde::append_vector(g, "srows", &[SRow { id: 1 }]),
            ),
            (
                "serde::VectorWriter::create",
                h5vec::serde::VectorWriter::<SRow>::create(g, "sw", &o).map(drop),
            ),
            (
                "h5col::save_table",
                h5vec::h5col::save_table(g, "t", &[Row { id: 1 }]),
            ),
            (
                "h5col::append_table",
                h5vec::h5col::append_table(g, "table", &[Row { id: 2 }]),
            ),
            (
                "vls::save_strings",
                h5vec::vls::save_strings(g, "v", &[Some("a".into())]),
            ),
            // Last: these switch the file to live writing, where HDF5
            // creates no new objects.
            (
                "VectorWriter::create_live",
                VectorWriter::<u32>::create_live(g, "l", &o).map(drop),
            ),
            (
                "VectorWriter::open_append_live",
                VectorWriter::<u32>::open_append_live(g, "xs", &o).map(drop),
            ),
        ]
    }

    fn fill(g: &h5vec::hdf5::Group) {
        h5vec::save_vector(g, "xs", &[1u32, 2, 3]).unwrap();
        h5vec::save_vector(g, "rows", &[Row { id: 1 }]).unwrap();
        h5vec::serde::save_vector(g, "srows", &[SRow { id: 0 }]).unwrap();
        h5vec::h5col::save_table(g, "table", &[Row { id: 1 }]).unwrap();
    }

    #[track_caller]
    fn all_refused(g: &h5vec::hdf5::Group) {
        for (what, r) in writes(g) {
            let e = r.expect_err(what);
            assert!(
                e.to_string().contains(
                    "the file is open read-only through this handle (h5vec::open_file), \
                     though this process also has it open for writing"
                ),
                "{what}: {e}"
            );
        }
    }

    #[test]
    fn a_read_only_handle_refuses_every_write_while_a_read_write_one_is_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.h5");
        // A file for live writing, so that the live writers (last in
        // `writes`) can start through `rw`.
        let rw = h5vec::create_file_live(&path).unwrap();
        fill(&rw);
        let ro = h5vec::open_file(&path).unwrap();
        all_refused(&ro);
        // Through a group of the read-only handle, also once the handle
        // itself is dropped (the group keeps HDF5's file struct).
        let g = ro.group("/").unwrap();
        all_refused(&g);
        drop(ro);
        all_refused(&g);
        drop(g);
        let back: Vec<u32> = h5vec::load_vector(&rw, "xs").unwrap();
        assert_eq!(back, [1, 2, 3]);
        assert!(!h5vec::vector_exists(&rw, "new").unwrap());
        // The read-write handle writes, and so do handles opened after.
        for (what, r) in writes(&rw) {
            r.unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        let back: Vec<u32> = h5vec::load_vector(&rw, "xs").unwrap();
        assert_eq!(back, [1, 4, 4]);
        assert_eq!(h5vec::vector_len(&rw, "new").unwrap(), 1);
        drop(rw);
        // Alone, a read-only handle is refused by the file's own intent.
        let f = h5vec::open_file(&path).unwrap();
        let e = h5vec::save_vector(&f, "nope", &[1u8]).unwrap_err();
        assert!(
            e.to_string()
                .contains("the file is open read-only: open it with"),
            "{e}"
        );
    }

    #[test]
    fn read_only_handles_opened_and_dropped_in_a_loop_leave_new_read_write_handles_writable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("loop.h5");
        let rw = h5vec::create_file(&path).unwrap();
        h5vec::save_vector(&rw, "xs", &[0u32]).unwrap();
        for i in 1..20u32 {
            let ro = h5vec::open_file(&path).unwrap();
            assert!(h5vec::append_vector(&ro, "xs", &[i]).is_err());
            drop(ro);
            // A raw handle may get the freed handle's memory.
            let raw = h5vec::hdf5::File::open_rw(&path).unwrap();
            h5vec::append_vector(&raw, "xs", &[i]).unwrap();
        }
        let back: Vec<u32> = h5vec::load_vector(&rw, "xs").unwrap();
        assert_eq!(back, (0..20).collect::<Vec<_>>());
        let ro = h5vec::open_file(&path).unwrap();
        drop(ro);
        let rw2 = h5vec::open_file_rw(&path).unwrap();
        h5vec::save_vector(&rw2, "later", &[9u8]).unwrap();
        assert_eq!(h5vec::load_vector::<u8>(&rw, "later").unwrap(), [9]);
    }
}
