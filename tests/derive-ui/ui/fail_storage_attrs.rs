use h5vec::H5Vector;

#[derive(H5Vector)]
struct Bad {
    #[h5vec(deflate = 12)]
    a: f64,
    #[h5vec(deflate = 4, lzf)]
    b: f64,
    #[h5vec(chunk_length = 0)]
    c: f64,
}

fn main() {}
