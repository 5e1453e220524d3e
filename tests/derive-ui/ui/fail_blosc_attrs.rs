use h5vec::H5Vector;

#[derive(H5Vector)]
struct Bad {
    #[h5vec(zstd = 10)]
    a: f64,
    #[h5vec(zstd)]
    b: f64,
    #[h5vec(zstd = "5")]
    c: f64,
    #[h5vec(zstd = 3, deflate = 4)]
    d: f64,
    #[h5vec(lzf, blosc(compressor = "lz4"))]
    e: f64,
    #[h5vec(blosc(compressor = "snappy"))]
    f: f64,
    #[h5vec(blosc(level = 3))]
    g: f64,
    #[h5vec(blosc(compressor = "lz4", shuffle = "bits", level = 12))]
    h: f64,
    #[h5vec(blosc(compressor = "lz4", threads = 2))]
    i: f64,
    #[h5vec(blosc(compressor = "lz4", compressor = "zstd"))]
    j: f64,
    #[h5vec(blosc)]
    k: f64,
    #[h5vec(blosc = "zstd")]
    l: f64,
    #[h5vec(blosc(compressor = zstd, level))]
    m: f64,
}

fn main() {}
