//! The rustdoc example of `#[derive(H5Vector)]` needs `h5vec` to build,
//! which this crate cannot depend on; tests/derive-ui/ui/pass_attribute_docs.rs
//! builds the same items. This test keeps the two the same.

#[test]
fn doc_example_is_compiled_by_a_ui_test() {
    let lib = include_str!("lib.rs");
    let ui = include_str!("../../tests/derive-ui/ui/pass_attribute_docs.rs");
    let example: String = lib
        .lines()
        .map(str::trim_start)
        .skip_while(|l| *l != "/// ```ignore")
        .skip(1)
        .take_while(|l| *l != "/// ```")
        .map(|l| {
            let l = l.strip_prefix("///").unwrap_or(l);
            format!("{}\n", l.strip_prefix(' ').unwrap_or(l))
        })
        .collect();
    assert!(
        example.contains("#[derive(H5Vector)]"),
        "no example found in lib.rs"
    );
    assert!(
        ui.contains(&example),
        "the example in lib.rs differs from tests/derive-ui/ui/pass_attribute_docs.rs:\n{example}"
    );
}
