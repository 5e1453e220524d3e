use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    #[h5vec(compress)]
    values: [f32; 4],
    #[h5vec(level = 3)]
    level: i32,
}

fn main() {}
