use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    x: f64,
    #[h5vec(skip, rename = "cache")]
    cache: Vec<u8>,
    #[h5vec(skip, blob)]
    scratch: Vec<u8>,
}

fn main() {}
