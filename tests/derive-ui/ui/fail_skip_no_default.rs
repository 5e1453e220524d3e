use h5vec::H5Vector;

struct Handle(#[allow(dead_code)] i32);

#[derive(H5Vector)]
struct Sample {
    x: f64,
    #[h5vec(skip)]
    handle: Handle,
}

fn main() {}
