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

#[derive(H5Vector, Clone, Copy, Debug, PartialEq)]
#[repr(i16)]
enum Level {
    Low = -1,
    Mid = 0,
    High = 300,
}

#[derive(H5Vector, Debug, PartialEq)]
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

    // The generated code also runs: keywords, enum discriminants, defaults.
    let dir = std::env::temp_dir().join(format!("h5vec-ui-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = h5vec::hdf5::File::create(dir.join("shapes.h5")).unwrap();
    let values = vec![
        Keywords {
            r#type: Level::High,
            r#match: true,
            r#fn: 'x',
        },
        Keywords {
            r#type: Level::Low,
            r#match: false,
            r#fn: 'y',
        },
    ];
    h5vec::save_vector(&file, "k", &values).unwrap();
    assert!(file.link_exists("k/data/type/values"));
    assert!(file.link_exists("k/data/r#fn/values"));
    let back: Vec<Keywords> = h5vec::load_vector(&file, "k").unwrap();
    assert_eq!(back, values);
    h5vec::save_vector(&file, "s", &[AllSkipped::default()]).unwrap();
    let back: Vec<AllSkipped> = h5vec::load_vector(&file, "s").unwrap();
    assert_eq!(back.len(), 1);
    assert!(back[0].cache.is_empty());
    drop(file);
    std::fs::remove_dir_all(&dir).unwrap();
}
