use h5vec::H5Vector;

#[derive(H5Vector)]
enum Color {
    Red,
    Green,
    Blue,
}

#[derive(H5Vector)]
#[repr(usize)]
enum Level {
    Low,
    High,
}

fn main() {}
