use h5vec::H5Vector;

#[derive(H5Vector)]
struct Run {
    id: u32,
    started: std::time::Instant,
}

fn main() {}
