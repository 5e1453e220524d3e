//! The Rust side of the cross-language tests in `tests/python/`.
//!
//! ```text
//! cargo run --example xlang -- write OUTDIR          # writes OUTDIR/*.h5 with known contents
//! cargo run --example xlang -- read FILE NAME KIND   # loads vector NAME as KIND, prints JSON
//! ```
//!
//! Every value written by `write` is a pure function of its index; the Python
//! tests recompute the same values independently (see `tests/python/expected.py`)
//! and check them with plain h5py + numpy. `read` loads a vector written by
//! Python (the way HDF5.jl + HDF5Vectors would write it) with
//! `h5vec::load_vector` and prints it as one JSON array on stdout; on failure
//! it prints the error on stderr and exits with status 1.

use std::path::Path;

use h5vec::hdf5::File;
use h5vec::{H5Vector, SaveOptions};
use serde::{Deserialize, Serialize};

#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct GpsTimeStamp {
    weeks: i32,
    microseconds: i64,
}

/// The Measurement example's record.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Measurement {
    timestamp: GpsTimeStamp,
    temperature: f64,
    position: [f64; 3],
}

/// A fieldless enum stored as its `#[repr]` integer.
#[derive(H5Vector, Serialize, Debug, Clone, Copy, PartialEq)]
#[repr(i16)]
enum Level {
    Low = -3,
    Mid = 0,
    High = 7,
    Max = 300,
}

const LEVELS: [Level; 4] = [Level::Low, Level::Mid, Level::High, Level::Max];

/// One field of every scalar type.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct AllScalars {
    int8: i8,
    int16: i16,
    int32: i32,
    int64: i64,
    uint8: u8,
    uint16: u16,
    uint32: u32,
    uint64: u64,
    float32: f32,
    float64: f64,
    flag: bool,
    letter: char,
    text: String,
    level: Level,
}

/// A unit struct: the constant kind.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Marker;

/// A record with a constant field.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Tagged {
    id: i32,
    marker: Marker,
}

/// A tuple struct: fields `1`, `2`.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Pair(i32, f64);

/// Stored as a bincode blob.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Extra {
    label: String,
    weights: Vec<u32>,
    flag: bool,
}

/// Stored as compact JSON.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Meta {
    name: String,
    tags: Vec<String>,
    score: f64,
}

/// Field attributes: rename, skip, blob, json, vls.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Annotated {
    id: u32,
    #[h5vec(rename = "temp_c")]
    temperature: f64,
    #[h5vec(skip)]
    cache: u64,
    #[h5vec(blob)]
    extra: Extra,
    #[h5vec(blob)]
    nothing: (),
    #[h5vec(json)]
    meta: Meta,
    #[h5vec(vls)]
    note: String,
}

/// A record with a JSON field (what HDF5Vectors' JSONCodec writes).
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct WithJson {
    id: i64,
    #[h5vec(json)]
    meta: Meta,
}

/// Non-ASCII stored field names.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Accent {
    #[h5vec(rename = "température")]
    temperature: f32,
    #[h5vec(rename = "名前")]
    name: String,
}

/// The large vector.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Big {
    id: u64,
    value: f64,
    flag: bool,
}

// ---------------------------------------------------------------------------
// Deterministic values (mirrored in tests/python/expected.py).

const N_SCALARS: usize = 40;

fn base(n: usize) -> i64 {
    let n = n as i64;
    n * n * 37 - 500 * n
}

/// `base(n)` cast (wrapping) to the integer type, except row 0 = MIN and row 1 = MAX.
macro_rules! int_value {
    ($t:ty, $n:expr) => {
        match $n {
            0 => <$t>::MIN,
            1 => <$t>::MAX,
            n => base(n) as $t,
        }
    };
}

fn f32_value(n: usize) -> f32 {
    match n {
        0 => f32::MAX,
        1 => f32::MIN_POSITIVE,
        2 => -0.0,
        n => n as f32 * 0.5 - 3.25,
    }
}

fn f64_value(n: usize) -> f64 {
    match n {
        0 => f64::MAX,
        1 => 5e-324,
        2 => -0.0,
        n => n as f64 * 0.1 - 1.0,
    }
}

fn bool_value(n: usize) -> bool {
    n.is_multiple_of(3)
}

const CHARS: [char; 7] = ['a', 'é', '日', '🎉', '\0', '\u{10FFFF}', 'Z'];

fn char_value(n: usize) -> char {
    CHARS[n % CHARS.len()]
}

const TEXTS: [&str; 7] = [
    "",
    "plain",
    "héllo wörld",
    "日本語テキスト",
    "emoji 🎉🚀",
    "tab\tnew\nline",
    "quote \" back\\slash",
];

fn text_value(n: usize) -> String {
    if n.is_multiple_of(TEXTS.len()) {
        String::new()
    } else {
        format!("{}#{n}", TEXTS[n % TEXTS.len()])
    }
}

fn measurement(i: usize) -> Measurement {
    let i = i as i32;
    Measurement {
        timestamp: GpsTimeStamp {
            weeks: 2300 + i / 10,
            microseconds: i64::from(i) * 1_000_000,
        },
        temperature: 20.0 + f64::from(i) * 0.25,
        position: [f64::from(i), f64::from(i) * 2.0, -f64::from(i)],
    }
}

/// Per-field Blosc settings.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Packed {
    #[h5vec(zstd = 9)]
    id: i64,
    #[h5vec(blosc(compressor = "zlib", level = 6, shuffle = "none"))]
    label: String,
    #[h5vec(blosc(compressor = "lz4hc", shuffle = "bit"))]
    samples: [i16; 4],
}

fn packed(n: usize) -> Packed {
    let i = n as i16;
    Packed {
        id: n as i64 * 1_000_003 - 7,
        label: text_value(n),
        samples: [i, -i, i.wrapping_mul(i), 1],
    }
}

fn all_scalars(n: usize) -> AllScalars {
    AllScalars {
        int8: int_value!(i8, n),
        int16: int_value!(i16, n),
        int32: int_value!(i32, n),
        int64: int_value!(i64, n),
        uint8: int_value!(u8, n),
        uint16: int_value!(u16, n),
        uint32: int_value!(u32, n),
        uint64: int_value!(u64, n),
        float32: f32_value(n),
        float64: f64_value(n),
        flag: bool_value(n),
        letter: char_value(n),
        text: text_value(n),
        level: LEVELS[n % LEVELS.len()],
    }
}

fn meta(n: usize) -> Meta {
    Meta {
        name: format!("météo-{n}"),
        tags: (0..n % 3).map(|k| format!("t{k}")).collect(),
        score: n as f64 * 1.5,
    }
}

fn annotated(n: usize) -> Annotated {
    Annotated {
        id: n as u32 * 3,
        temperature: -40.0 + n as f64,
        cache: 99,
        extra: Extra {
            label: format!("ex{n}é"),
            weights: (0..n as u32)
                .map(|k| k * 150 + if k == 3 { 70_000 } else { 0 })
                .collect(),
            flag: n % 2 == 1,
        },
        nothing: (),
        meta: meta(n),
        note: format!("note {n} ✓"),
    }
}

fn big(n: usize) -> Big {
    Big {
        id: n as u64,
        value: n as f64 * 0.5,
        flag: n.is_multiple_of(3),
    }
}

// ---------------------------------------------------------------------------

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

fn write_all(out: &Path) -> BoxResult<()> {
    std::fs::create_dir_all(out)?;

    let f = File::create(out.join("measurements.h5"))?;
    let ms: Vec<Measurement> = (0..100).map(measurement).collect();
    h5vec::save_vector(&f, "measurements", &ms)?;
    let opts = SaveOptions::default().chunk_length(16).deflate(4);
    h5vec::save_vector_with(&f, "measurements_opts", &ms, &opts)?;
    h5vec::save_vector::<Measurement>(&f, "empty", &[])?;
    h5vec::save_vector::<f64>(&f, "empty_f64", &[])?;

    // Appends: 60 rows saved, 40 appended (one vector of 100 rows), then 7
    // more appended and `count` set back to 100, as an append interrupted
    // before its last step leaves it: readers must trust count.
    let f = File::create(out.join("appended.h5"))?;
    let ms: Vec<Measurement> = (0..107).map(measurement).collect();
    h5vec::save_vector_with(
        &f,
        "appended",
        &ms[..60],
        &SaveOptions::default().chunk_length(16),
    )?;
    h5vec::append_vector(&f, "appended", &ms[60..100])?;
    h5vec::append_vector(&f, "appended", &ms[100..])?;
    f.dataset("appended/metadata/count")?
        .write_scalar(&100i64)?;

    // Storage control: LZF, and deflate written through h5vec's parallel
    // direct-chunk path (200,000 rows, 4,096-row chunks, the last one partial).
    let f = File::create(out.join("storage.h5"))?;
    let xs: Vec<f64> = (0..200_000).map(|i| (f64::from(i) * 0.001).sin()).collect();
    let lzf = SaveOptions::default().compression(h5vec::Compression::Lzf);
    h5vec::save_vector_with(&f, "lzf", &xs, &lzf)?;
    let deflate = SaveOptions::default().chunk_length(4096).deflate(4);
    h5vec::save_vector_with(&f, "deflate", &xs, &deflate)?;
    // Blosc (filter 32001), which h5py reads after `import hdf5plugin`:
    // Blosc's Zstandard with byte shuffle on the same column, LZ4 with bit
    // shuffle on every dataset of a record, and per-field attributes.
    let zstd = SaveOptions::default().chunk_length(4096).zstd(5);
    h5vec::save_vector_with(&f, "zstd", &xs, &zstd)?;
    let ms: Vec<Measurement> = (0..1000).map(measurement).collect();
    let lz4 = SaveOptions::default().compression(h5vec::Compression::blosc(
        h5vec::BloscCompressor::Lz4,
        9,
        h5vec::BloscShuffle::Bit,
    ));
    h5vec::save_vector_with(&f, "blosc_measurements", &ms, &lz4)?;
    let packed: Vec<Packed> = (0..500).map(packed).collect();
    h5vec::save_vector(&f, "packed", &packed)?;

    // Random 64-bit values (chunk 0: stored with deflate skipped; chunk 1,
    // first saved partly filled and compressed, then filled by an append
    // that cannot compress it: the stored form) then counters (deflated),
    // saved in parts whose ends fall inside chunks; the last append leaves
    // chunk 4 partly filled, in the stored form (SPEC section 8).
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mixed: Vec<u64> = (0..70_000u64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i < 32_768 {
                x
            } else {
                i
            }
        })
        .collect();
    let opts = SaveOptions::default().chunk_length(16_384).deflate(4);
    h5vec::save_vector_with(&f, "mixed", &mixed[..20_000], &opts)?;
    h5vec::append_vector_with(&f, "mixed", &mixed[20_000..50_001], &opts)?;
    h5vec::append_vector_with(&f, "mixed", &mixed[50_001..], &opts)?;

    let f = File::create(out.join("scalars.h5"))?;
    let ns = 0..N_SCALARS;
    macro_rules! ints {
        ($($t:ty => $name:literal),*) => {$(
            let v: Vec<$t> = ns.clone().map(|n| int_value!($t, n)).collect();
            h5vec::save_vector(&f, $name, &v)?;
        )*};
    }
    ints!(i8 => "int8", i16 => "int16", i32 => "int32", i64 => "int64",
          u8 => "uint8", u16 => "uint16", u32 => "uint32", u64 => "uint64");
    h5vec::save_vector(
        &f,
        "float32",
        &ns.clone().map(f32_value).collect::<Vec<_>>(),
    )?;
    h5vec::save_vector(
        &f,
        "float64",
        &ns.clone().map(f64_value).collect::<Vec<_>>(),
    )?;
    h5vec::save_vector(
        &f,
        "f64_special",
        &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 5e-324],
    )?;
    h5vec::save_vector(&f, "bool", &ns.clone().map(bool_value).collect::<Vec<_>>())?;
    h5vec::save_vector(&f, "char", &ns.clone().map(char_value).collect::<Vec<_>>())?;
    let texts: Vec<String> = ns.clone().map(text_value).collect();
    h5vec::save_vector(&f, "string", &texts)?;
    let vls = SaveOptions::default().vls_strings(true);
    h5vec::save_vector_with(&f, "string_vls", &texts, &vls)?;
    h5vec::save_vector(
        &f,
        "level",
        &ns.clone().map(|n| LEVELS[n % 4]).collect::<Vec<_>>(),
    )?;
    h5vec::save_vector(&f, "all", &ns.clone().map(all_scalars).collect::<Vec<_>>())?;

    let f = File::create(out.join("dense.h5"))?;
    let vec3: Vec<[f32; 3]> = (0..20)
        .map(|n| {
            let x = n as f32;
            [x, x + 0.5, -x * 0.25]
        })
        .collect();
    h5vec::save_vector(&f, "vec3", &vec3)?;
    let mat: Vec<[[i32; 2]; 3]> = (0..10)
        .map(|n| {
            std::array::from_fn(|r| std::array::from_fn(|c| n * 100 + r as i32 * 10 + c as i32))
        })
        .collect();
    h5vec::save_vector(&f, "mat", &mat)?;
    let flags: Vec<[bool; 4]> = (0..16)
        .map(|n| std::array::from_fn(|b| n >> b & 1 == 1))
        .collect();
    h5vec::save_vector(&f, "flags", &flags)?;

    let f = File::create(out.join("records.h5"))?;
    let tuples: Vec<(i32, f64, String)> = (0..12)
        .map(|n| (n - 5, n as f64 / 4.0, text_value(n as usize)))
        .collect();
    h5vec::save_vector(&f, "tuples", &tuples)?;
    let nested: Vec<(u8, (i16, char))> = (0..9)
        .map(|n| (n as u8 * 20, (-(n as i16) * 1000, char_value(n))))
        .collect();
    h5vec::save_vector(&f, "nested", &nested)?;
    let pairs: Vec<Pair> = (0..8).map(|n| Pair(n * n, n as f64 + 0.125)).collect();
    h5vec::save_vector(&f, "pairs", &pairs)?;
    h5vec::save_vector(&f, "markers", &vec![Marker; 7])?;
    let tagged: Vec<Tagged> = (0..5)
        .map(|n| Tagged {
            id: n * 11,
            marker: Marker,
        })
        .collect();
    h5vec::save_vector(&f, "tagged", &tagged)?;
    h5vec::save_vector(&f, "annotated", &(0..6).map(annotated).collect::<Vec<_>>())?;

    let accents: Vec<Accent> = (0..4)
        .map(|n| Accent {
            temperature: n as f32 - 1.5,
            name: text_value(n),
        })
        .collect();
    h5vec::save_vector(&f, "accent", &accents)?;

    let f = File::create(out.join("big.h5"))?;
    h5vec::save_vector(&f, "big", &(0..200_000).map(big).collect::<Vec<_>>())?;
    Ok(())
}

fn dump<T: H5Vector + Serialize>(file: &File, name: &str) -> BoxResult<()> {
    let values: Vec<T> = h5vec::load_vector(file, name)?;
    println!("{}", serde_json::to_string(&values)?);
    Ok(())
}

fn read(path: &str, name: &str, kind: &str) -> BoxResult<()> {
    let file = File::open(path)?;
    match kind {
        "measurement" => dump::<Measurement>(&file, name),
        "string" => dump::<String>(&file, name),
        "f64" => dump::<f64>(&file, name),
        "i64" => dump::<i64>(&file, name),
        "bool" => dump::<bool>(&file, name),
        "char" => dump::<char>(&file, name),
        "level" => dump::<Level>(&file, name),
        "all" => dump::<AllScalars>(&file, name),
        "vec3" => dump::<[f32; 3]>(&file, name),
        "mat" => dump::<[[i32; 2]; 3]>(&file, name),
        "tuple" => dump::<(i32, f64, String)>(&file, name),
        "pair" => dump::<Pair>(&file, name),
        "marker" => dump::<Marker>(&file, name),
        "tagged" => dump::<Tagged>(&file, name),
        "with_json" => dump::<WithJson>(&file, name),
        "accent" => dump::<Accent>(&file, name),
        other => Err(format!("unknown KIND `{other}`").into()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["write", out] => write_all(Path::new(out)),
        ["read", path, name, kind] => read(path, name, kind),
        _ => Err("usage: xlang write OUTDIR | xlang read FILE NAME KIND".into()),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
