use h5vec::H5Vector;

#[derive(H5Vector)]
struct Sample {
    x: f64,
    #[h5vec(skip, deflate = 4)]
    cache: Vec<u8>,
    #[h5vec(chunk_length = 16, skip)]
    scratch: Vec<u8>,
    #[h5vec(skip, blosc(compressor = "lz4"))]
    buffer: Vec<u8>,
    #[h5vec(skip)]
    #[h5vec(zstd = 3, vls)]
    label: String,
    #[h5vec(skip, lzf, no_compression)]
    spare: Vec<u8>,
}

fn main() {}
