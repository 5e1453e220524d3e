use h5vec::H5Vector;

#[derive(H5Vector)]
struct Pipeline {
    name: String,
    steps: Vec<Box<dyn Fn()>>,
}

fn main() {}
