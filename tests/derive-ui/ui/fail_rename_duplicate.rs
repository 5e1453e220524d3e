use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    #[h5vec(rename = "t")]
    time: f64,
    #[h5vec(rename = "t")]
    temperature: f64,
    // A rename may not take the name another field keeps, either.
    #[h5vec(rename = "position")]
    pos: [f64; 3],
    position: [f64; 3],
}

fn main() {}
