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
