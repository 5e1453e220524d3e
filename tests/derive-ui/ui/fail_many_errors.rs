use h5vec::H5Vector;

#[derive(H5Vector)]
#[h5vec(chunk_length = 1024)]
struct Sample {
    #[h5vec(compress)]
    a: f64,
    #[h5vec(rename = "a/b")]
    b: f64,
    #[h5vec(blob, json)]
    c: String,
    #[h5vec(skip, rename = "d")]
    d: f64,
    #[h5vec(rename = "b")]
    e: f64,
    #[h5vec(rename = "b")]
    f: f64,
}

fn main() {}
