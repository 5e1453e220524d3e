use h5vec::H5Vector;

struct Opaque {
    _x: i32,
}

#[derive(H5Vector)]
struct Sample {
    #[h5vec(blob)]
    payload: Opaque,
}

fn main() {}
