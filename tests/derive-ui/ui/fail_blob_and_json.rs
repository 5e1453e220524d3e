use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    #[h5vec(blob, json)]
    tags: String,
    #[h5vec(json)]
    #[h5vec(vls)]
    name: String,
}

fn main() {}
