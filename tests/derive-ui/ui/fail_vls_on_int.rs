use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    #[h5vec(vls)]
    count: i32,
}

fn main() {}
