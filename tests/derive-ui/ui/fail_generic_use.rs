use h5vec::H5Vector;

#[derive(H5Vector)]
struct Wrapper<T> {
    inner: T,
}

fn main() {
    let values = vec![Wrapper {
        inner: std::time::Instant::now(),
    }];
    let file = h5vec::hdf5::File::create("unused.h5").unwrap();
    let _ = h5vec::save_vector(&file, "w", &values);
}
