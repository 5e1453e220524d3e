use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    #[h5vec(rename = "")]
    x: f64,
    #[h5vec(rename = "a/b")]
    y: f64,
    #[h5vec(rename = ".")]
    z: f64,
    #[h5vec(rename = 7)]
    w: f64,
}

fn main() {}
