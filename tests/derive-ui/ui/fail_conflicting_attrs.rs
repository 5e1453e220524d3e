use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    #[h5vec(vls, blob, json)]
    a: String,
    #[h5vec(json)]
    #[h5vec(deflate = 1, no_compression, zstd = 3)]
    b: Vec<String>,
    #[h5vec(chunk_length = 8, chunk_length = 16)]
    c: f64,
    #[h5vec(rename = "d1", rename = "d2")]
    d: f64,
    #[h5vec(skip, skip)]
    e: f64,
}

fn main() {}
