use h5vec::H5Vector;

#[derive(H5Vector)]
#[h5vec(rename = "sample")]
struct Sample {
    x: f64,
}

fn main() {}
