#![deny(warnings)]

use h5vec::H5Vector;

#[derive(H5Vector)]
struct Point(f64, f64, f64);

#[derive(H5Vector)]
struct Nothing;

#[derive(H5Vector)]
struct Empty {}

#[derive(H5Vector, Default)]
struct AllSkipped {
    #[h5vec(skip)]
    cache: Vec<u8>,
    #[h5vec(skip)]
    _hits: u64,
}

#[derive(H5Vector, Clone, Copy)]
#[repr(i16)]
enum Level {
    Low = -1,
    Mid = 0,
    High = 300,
}

#[derive(H5Vector)]
struct Keywords {
    r#type: Level,
    r#match: bool,
    #[h5vec(rename = "r#fn")]
    r#fn: char,
}

#[derive(H5Vector)]
struct Attributes {
    #[h5vec(rename = "t")]
    time: f64,
    #[h5vec(json)]
    meta: Vec<String>,
    #[h5vec(blob)]
    raw: Vec<u8>,
    #[h5vec(vls)]
    label: String,
    #[h5vec(skip)]
    scratch: Vec<u8>,
    #[h5vec(json, rename = "more")]
    extra: std::collections::BTreeMap<String, i64>,
}

fn assert_h5vector<T: H5Vector>() {}

fn main() {
    assert_h5vector::<Point>();
    assert_h5vector::<Nothing>();
    assert_h5vector::<Empty>();
    assert_h5vector::<AllSkipped>();
    assert_h5vector::<Level>();
    assert_h5vector::<[Level; 2]>();
    assert_h5vector::<Keywords>();
    assert_h5vector::<Attributes>();
    let _ = (Level::Low, Level::Mid, Level::High);
    let _ = AllSkipped::default().cache;
}
