//! The entry points around vectors: opening files, `?` on HDF5 results,
//! missing vectors (`ErrorKind::NotFound`), listing vectors, and writes to
//! a file open read-only.

use std::str::FromStr;

use h5vec_tests as common;

use common::{disk_file, mem_file};
use h5vec::h5col::{append_table, load_table, save_table};
use h5vec::hdf5;
use h5vec::{Error, ErrorKind, H5Vector, SaveOptions, VectorWriter};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    id: u32,
    name: String,
}

fn rows() -> Vec<Row> {
    vec![Row {
        id: 1,
        name: "a".into(),
    }]
}

#[track_caller]
fn assert_not_found(e: &Error, location: &str, message: &str) {
    match e.kind() {
        ErrorKind::NotFound(m) => assert_eq!(m, message, "{e}"),
        other => panic!("expected NotFound, got {other:?}: {e}"),
    }
    assert_eq!((e.path(), e.location()), ("$", Some(location)), "{e}");
    assert_eq!(
        e.to_string(),
        format!("$ ({location}): not found: {message}")
    );
}

const READ_ONLY: &str = "the file is open read-only: open it with h5vec::open_file_rw \
                         (or hdf5::File::open_rw) to write";

#[track_caller]
fn assert_read_only(e: &Error, location: &str, name: &str) {
    let ErrorKind::Hdf5(inner) = e.kind() else {
        panic!("expected an Hdf5 error, got {e}");
    };
    let message = format!("{READ_ONLY} `{name}`");
    assert_eq!(inner.to_string(), message, "{e}");
    assert_eq!((e.path(), e.location()), ("$", Some(location)), "{e}");
    assert_eq!(
        e.to_string(),
        format!("$ ({location}): HDF5 error: {message}")
    );
    assert!(!e.to_string().contains("write intent"), "{e}");
}

#[test]
fn open_file_reads_and_open_file_rw_writes() {
    let d = disk_file();
    h5vec::save_vector(&d.file, "xs", &[1u32, 2]).unwrap();
    let path = d.path.clone();
    drop(d.file);
    let ro = h5vec::open_file(&path).unwrap();
    assert_eq!(h5vec::load_vector::<u32>(&ro, "xs").unwrap(), [1, 2]);
    drop(ro);
    let rw = h5vec::open_file_rw(&path).unwrap();
    h5vec::append_vector(&rw, "xs", &[3u32]).unwrap();
    assert_eq!(h5vec::load_vector::<u32>(&rw, "xs").unwrap(), [1, 2, 3]);
}

#[test]
fn open_file_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.h5");
    let shown = path.display().to_string();
    for e in [
        h5vec::open_file(&path).unwrap_err(),
        h5vec::open_file_rw(&path).unwrap_err(),
    ] {
        assert!(matches!(e.kind(), ErrorKind::Hdf5(_)), "{e}");
        assert_eq!((e.path(), e.location()), ("$", Some(shown.as_str())), "{e}");
        assert!(e
            .to_string()
            .starts_with(&format!("$ ({shown}): HDF5 error: ")));
    }
}

#[test]
fn question_mark_converts_hdf5_errors() {
    fn open_missing(file: &hdf5::File) -> h5vec::Result<hdf5::Group> {
        Ok(file.group("nope")?)
    }
    let f = mem_file();
    let e = open_missing(&f).unwrap_err();
    let ErrorKind::Hdf5(inner) = e.kind() else {
        panic!("{e}");
    };
    assert_eq!((e.path(), e.location()), ("$", None));
    assert_eq!(e.to_string(), format!("$: HDF5 error: {inner}"));
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn a_missing_vector_is_not_found() {
    let f = mem_file();
    let g = f.create_group("g").unwrap();
    let msg = "no vector `x` in `/g`";
    assert_not_found(
        &h5vec::load_vector::<u32>(&g, "x").unwrap_err(),
        "/g/x",
        msg,
    );
    assert_not_found(&h5vec::vector_len(&g, "x").unwrap_err(), "/g/x", msg);
    assert_not_found(
        &h5vec::load_range::<u32>(&g, "x", 0..0).unwrap_err(),
        "/g/x",
        msg,
    );
    assert_not_found(
        &h5vec::load_column::<u32>(&g, "x", "id").unwrap_err(),
        "/g/x",
        msg,
    );
    assert_not_found(
        &h5vec::append_vector(&g, "x", &[1u32]).unwrap_err(),
        "/g/x",
        msg,
    );
    assert_not_found(
        &h5vec::VectorReader::<u32>::open(&f, "x", 10).err().unwrap(),
        "/x",
        "no vector `x` in `/`",
    );
    assert_not_found(
        &load_table::<Row>(&g, "t").unwrap_err(),
        "/g/t",
        "no table `t` in `/g`",
    );
    // Something else under the name is still a mismatch.
    g.create_group("y").unwrap();
    assert!(matches!(
        h5vec::load_vector::<u32>(&g, "y").unwrap_err().kind(),
        ErrorKind::Mismatch { .. }
    ));
}

#[test]
fn list_vectors_lists_only_vectors_sorted() {
    let f = mem_file();
    let g = h5vec::create_group(&f, "g").unwrap();
    assert_eq!(h5vec::list_vectors(&g).unwrap(), Vec::<String>::new());
    h5vec::save_vector(&g, "zeta", &[1u8]).unwrap();
    h5vec::save_vector(&g, "alpha", &rows()).unwrap();
    h5vec::save_vector(&g, "mid", &Vec::<u8>::new()).unwrap();
    // Not vectors: a dataset, a plain group, a table, a VLS array, a soft
    // link to a vector, a group whose format_name is something else, one
    // without count, and a nested vector (not directly in `g`).
    g.new_dataset::<u8>().shape(3).create("ds").unwrap();
    let plain = g.create_group("plain").unwrap();
    h5vec::save_vector(&plain, "nested", &[1u8]).unwrap();
    save_table(&g, "table", &rows()).unwrap();
    h5vec::vls::save_strings(&g, "vls", &[Some("s".into())]).unwrap();
    g.link_soft("/g/zeta", "soft").unwrap();
    h5vec::save_vector(&g, "other_format", &[1u8]).unwrap();
    let meta = g.group("other_format/metadata").unwrap();
    meta.unlink("format_name").unwrap();
    meta.new_dataset_builder()
        .with_data(&[hdf5::types::VarLenUnicode::from_str("Other").unwrap()][..])
        .create("format_name")
        .unwrap();
    h5vec::save_vector(&g, "no_count", &[1u8]).unwrap();
    g.group("no_count/metadata")
        .unwrap()
        .unlink("count")
        .unwrap();
    assert_eq!(h5vec::list_vectors(&g).unwrap(), ["alpha", "mid", "zeta"]);
    assert_eq!(h5vec::list_vectors(&plain).unwrap(), ["nested"]);
    assert_eq!(h5vec::list_vectors(&f).unwrap(), Vec::<String>::new());

    for (name, want) in [
        ("alpha", true),
        ("zeta", true),
        ("mid", true),
        ("nope", false),
        ("ds", false),
        ("plain", false),
        ("table", false),
        ("vls", false),
        ("soft", false),
        ("other_format", false),
        ("no_count", false),
    ] {
        assert_eq!(h5vec::vector_exists(&g, name).unwrap(), want, "{name}");
    }
    for bad in ["", ".", "..", "a/b", "a\0b"] {
        let e = h5vec::vector_exists(&g, bad).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::BadName(_)), "{bad:?}: {e}");
        assert_eq!(e.path(), "$");
    }
}

#[test]
fn writes_to_a_read_only_file_say_so() {
    let d = disk_file();
    h5vec::save_vector(&d.file, "xs", &[1u32]).unwrap();
    save_table(&d.file, "t", &rows()).unwrap();
    let path = d.path.clone();
    drop(d.file);
    let f = h5vec::open_file(&path).unwrap();
    assert_read_only(
        &h5vec::save_vector(&f, "ys", &[1u32]).unwrap_err(),
        "/ys",
        "ys",
    );
    assert_read_only(
        &h5vec::save_vector_with(&f, "xs", &[1u32], &SaveOptions::default().replace(true))
            .unwrap_err(),
        "/xs",
        "xs",
    );
    assert_read_only(
        &h5vec::append_vector(&f, "xs", &[2u32]).unwrap_err(),
        "/xs",
        "xs",
    );
    assert_read_only(
        &VectorWriter::<u32>::create(&f, "zs", &SaveOptions::default())
            .err()
            .unwrap(),
        "/zs",
        "zs",
    );
    assert_read_only(
        &VectorWriter::<u32>::open_append(&f, "xs", &SaveOptions::default())
            .err()
            .unwrap(),
        "/xs",
        "xs",
    );
    assert_read_only(&h5vec::repair::<u32>(&f, "xs").unwrap_err(), "/xs", "xs");
    assert_read_only(&save_table(&f, "t2", &rows()).unwrap_err(), "/t2", "t2");
    assert_read_only(&append_table(&f, "t", &rows()).unwrap_err(), "/t", "t");
    assert_read_only(
        &h5vec::vls::save_strings(&f, "v", &[None]).unwrap_err(),
        "/v",
        "v",
    );
    // Nothing was written; loads still work.
    assert_eq!(h5vec::load_vector::<u32>(&f, "xs").unwrap(), [1]);
    assert_eq!(load_table::<Row>(&f, "t").unwrap(), rows());
    assert_eq!(h5vec::list_vectors(&f).unwrap(), ["xs"]);
}
