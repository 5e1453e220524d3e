use h5vec::H5Vector;

// Tuple-struct fields are stored as "1", "2", ...
#[derive(H5Vector)]
struct Pair(#[h5vec(rename = "2")] f64, f64);

// A raw identifier is stored without its `r#`.
#[derive(H5Vector)]
struct Keyword {
    r#type: u8,
    #[h5vec(rename = "type")]
    kind: u8,
}

// Every field that takes a used name is reported, against the first user.
#[derive(H5Vector)]
struct Three {
    x: f64,
    #[h5vec(rename = "x")]
    y: f64,
    #[h5vec(rename = "x")]
    z: f64,
}

fn main() {}
