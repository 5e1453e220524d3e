use h5vec::H5Vector;

#[derive(H5Vector)]
struct Patch {
    // Set to null, or left as it was: two levels of `None`.
    value: Option<Option<i32>>,
}

fn main() {
    let _: Vec<Option<Option<String>>> = h5vec::load_vector(&h5vec::hdf5::File::open("x").unwrap(), "v").unwrap();
}
