use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    #[h5vec(rename)]
    x: f64,
}

fn main() {}
