//! The Rust side of the Python package's tests (`tests/python/test_package_*.py`).
//!
//! ```text
//! cargo run --example xlang_pkg -- write OUTDIR          # OUTDIR/pkg.h5: lists, nulls, strings, ...
//! cargo run --example xlang_pkg -- read FILE NAME KIND   # loads vector NAME as KIND, prints JSON
//! ```
//!
//! Every value written is a pure function of its row index; the Python tests
//! recompute them (`tests/python/test_package_rust_to_python.py`). `read`
//! loads a vector the package wrote with `h5vec::load_vector` into the Rust
//! type named by KIND and prints it as one JSON array (exit status 1 and the
//! error on stderr when the load fails).

use std::path::Path;

use h5vec::hdf5::File;
use h5vec::{H5Vector, SaveOptions};
use serde::{Deserialize, Serialize};

#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Inner {
    a: i32,
    b: String,
}

/// W2's record: a VLS string and two list columns.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Event {
    id: u64,
    #[h5vec(vls)]
    name: String,
    tags: Vec<String>,
    values: Vec<f32>,
}

#[derive(H5Vector, Serialize, Debug, Clone, Copy, PartialEq)]
#[repr(i16)]
enum Level {
    Low = -3,
    Mid = 0,
    High = 7,
    Max = 300,
}

const LEVELS: [Level; 4] = [Level::Low, Level::Mid, Level::High, Level::Max];
const CHARS: [char; 7] = ['a', 'é', '日', '🎉', '\0', '\u{10FFFF}', 'Z'];

/// Every nullable layout of a field.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Nulls {
    maybe_num: Option<f64>,
    maybe_arr: Option<[f32; 3]>,
    maybe_inner: Option<Inner>,
    maybe_list: Option<Vec<i32>>,
    maybe_str: Option<String>,
    #[h5vec(vls)]
    maybe_vls: Option<String>,
    list_of_maybe: Vec<Option<String>>,
    maybe_bool: Option<bool>,
    maybe_char: Option<char>,
}

/// Lists of every element layout, nested.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Deep {
    grid: Vec<Vec<Vec<i32>>>,
    opt_inner: Vec<Option<Vec<u8>>>,
    points: Vec<Inner>,
    flags: Vec<bool>,
    arrs: Vec<[f64; 2]>,
    pairs: Vec<(i16, String)>,
    sparse: Vec<Option<i32>>,
    chars: Vec<char>,
    levels: Vec<Level>,
    opt_strs: Option<Vec<Option<String>>>,
}

/// Scalars of every type, an enum and a constant.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Flat {
    i8_: i8,
    u16_: u16,
    i32_: i32,
    u64_: u64,
    f32_: f32,
    f64_: f64,
    flag: bool,
    letter: char,
    text: String,
    level: Level,
    unit: (),
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Meta {
    name: String,
    tags: Vec<String>,
    score: f64,
}

/// Serde fields: JSON text and a bincode blob.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Serded {
    id: i64,
    #[h5vec(json)]
    meta: Meta,
    #[h5vec(blob)]
    payload: String,
}

/// The Measurement example's record.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct GpsTimeStamp {
    weeks: i32,
    microseconds: i64,
}

#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Measurement {
    timestamp: GpsTimeStamp,
    temperature: f64,
    position: [f64; 3],
}

fn inner(n: usize) -> Inner {
    Inner {
        a: n as i32 * 7 - 3,
        b: format!("b{n}é"),
    }
}

fn event(n: usize) -> Event {
    Event {
        id: n as u64 * 1000 + 7,
        name: format!("name-{n}-{}", "x".repeat(n % 5)),
        tags: (0..n % 4).map(|k| format!("t{k}·{n}")).collect(),
        values: (0..n % 6).map(|k| k as f32 * 0.5 - n as f32).collect(),
    }
}

fn nulls(n: usize) -> Nulls {
    Nulls {
        maybe_num: (!n.is_multiple_of(3)).then_some(n as f64 * 1.5),
        maybe_arr: (n % 4 != 1).then(|| [n as f32, -(n as f32), 0.25]),
        maybe_inner: (n % 5 != 2).then(|| inner(n)),
        maybe_list: match n % 3 {
            0 => None,
            1 => Some(vec![]),
            _ => Some((0..n as i32).collect()),
        },
        maybe_str: (n.is_multiple_of(2)).then(|| format!("s{n}")),
        maybe_vls: match n % 4 {
            0 => None,
            1 => Some("NA".into()),
            _ => Some(format!("v{n}")),
        },
        list_of_maybe: (0..n % 4)
            .map(|k| (k != 1).then(|| format!("e{k}")))
            .collect(),
        maybe_bool: (n % 3 != 1).then_some(n.is_multiple_of(2)),
        maybe_char: (n % 2 == 1).then(|| CHARS[n % 7]),
    }
}

fn deep(n: usize) -> Deep {
    Deep {
        grid: (0..n % 3)
            .map(|i| {
                (0..(n + i) % 3)
                    .map(|j| (0..=j).map(|k| (n * 100 + i * 10 + j + k) as i32).collect())
                    .collect()
            })
            .collect(),
        opt_inner: (0..n % 3)
            .map(|k| match (n + k) % 3 {
                0 => None,
                1 => Some(vec![]),
                _ => Some(vec![n as u8, k as u8]),
            })
            .collect(),
        points: (0..n % 3).map(|k| inner(n + k)).collect(),
        flags: (0..n % 4).map(|k| (n + k).is_multiple_of(2)).collect(),
        arrs: (0..n % 2 + 1).map(|k| [n as f64, k as f64 + 0.5]).collect(),
        pairs: (0..n % 3)
            .map(|k| ((n * k) as i16 - 5, format!("p{k}")))
            .collect(),
        sparse: (0..n % 4)
            .map(|k| (!(n + k).is_multiple_of(3)).then_some((n * k) as i32 - 2))
            .collect(),
        chars: (0..n % 3).map(|k| CHARS[(n + k) % 7]).collect(),
        levels: (0..n % 3).map(|k| LEVELS[(n + k) % 4]).collect(),
        opt_strs: match n % 3 {
            0 => None,
            _ => Some(
                (0..n % 4)
                    .map(|k| ((k + n).is_multiple_of(2)).then(|| format!("o{k}")))
                    .collect(),
            ),
        },
    }
}

fn flat(n: usize) -> Flat {
    Flat {
        i8_: (n as i8).wrapping_mul(37),
        u16_: (n as u16).wrapping_mul(4099),
        i32_: n as i32 * -100_003,
        u64_: u64::MAX - n as u64,
        f32_: n as f32 * 0.25 - 1.0,
        f64_: n as f64 / 3.0,
        flag: n.is_multiple_of(3),
        letter: CHARS[n % 7],
        text: format!("text {n} ✓"),
        level: LEVELS[n % 4],
        unit: (),
    }
}

fn serded(n: usize) -> Serded {
    Serded {
        id: n as i64 - 2,
        meta: Meta {
            name: format!("m{n}"),
            tags: (0..n % 3).map(|k| format!("g{k}")).collect(),
            score: n as f64 * 0.5,
        },
        payload: format!("payload-{n}"),
    }
}

fn measurement(i: usize) -> Measurement {
    Measurement {
        timestamp: GpsTimeStamp {
            weeks: 2300 + i as i32 / 10,
            microseconds: i as i64 * 1_000_000,
        },
        temperature: 20.0 + i as f64 * 0.25,
        position: [i as f64, i as f64 * 2.0, -(i as f64)],
    }
}

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

fn write_all(out: &Path) -> BoxResult<()> {
    std::fs::create_dir_all(out)?;
    let f = h5vec::create_file(out.join("pkg.h5"))?;
    let small = SaveOptions::default().chunk_length(8);
    h5vec::save_vector_with(
        &f,
        "events",
        &(0..30).map(event).collect::<Vec<_>>(),
        &small,
    )?;
    h5vec::save_vector_with(&f, "nulls", &(0..30).map(nulls).collect::<Vec<_>>(), &small)?;
    h5vec::save_vector_with(&f, "deep", &(0..30).map(deep).collect::<Vec<_>>(), &small)?;
    h5vec::save_vector(&f, "flat", &(0..20).map(flat).collect::<Vec<_>>())?;
    h5vec::save_vector(&f, "serded", &(0..6).map(serded).collect::<Vec<_>>())?;
    // Roots that are not records.
    let opt: Vec<Option<f64>> = (0..10).map(|n| (n % 3 != 0).then_some(n as f64)).collect();
    h5vec::save_vector(&f, "opt_root", &opt)?;
    let strs: Vec<Vec<String>> = (0..10)
        .map(|n| (0..n % 3).map(|k| format!("{n}.{k}")).collect())
        .collect();
    h5vec::save_vector(&f, "list_root", &strs)?;
    let opt_inner: Vec<Option<Inner>> = (0..10).map(|n| (n % 2 == 0).then(|| inner(n))).collect();
    h5vec::save_vector(&f, "opt_record_root", &opt_inner)?;
    // Deduplicated VLS strings (shared slices: the reader gathers), deflated.
    let dup: Vec<String> = (0..50).map(|n| format!("w{}", n % 4)).collect();
    let opts = SaveOptions::default()
        .vls_strings(true)
        .dedup_strings(true)
        .deflate(4)
        .chunk_length(16);
    h5vec::save_vector_with(&f, "dedup", &dup, &opts)?;
    // Saved, appended, appended again, then count set back: rows past count ignored.
    let evs: Vec<Event> = (0..25).map(event).collect();
    h5vec::save_vector_with(&f, "appended", &evs[..10], &small)?;
    h5vec::append_vector(&f, "appended", &evs[10..20])?;
    h5vec::append_vector(&f, "appended", &evs[20..])?;
    f.dataset("appended/metadata/count")?.write_scalar(&20i64)?;
    // Many chunks, compressed.
    let ms: Vec<Measurement> = (0..5000).map(measurement).collect();
    let opts = SaveOptions::default().chunk_length(512).deflate(4);
    h5vec::save_vector_with(&f, "measurements", &ms, &opts)?;
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
        "event" => dump::<Event>(&file, name),
        "nulls" => dump::<Nulls>(&file, name),
        "deep" => dump::<Deep>(&file, name),
        "flat" => dump::<Flat>(&file, name),
        "serded" => dump::<Serded>(&file, name),
        "measurement" => dump::<Measurement>(&file, name),
        "opt_f64" => dump::<Option<f64>>(&file, name),
        "vec_string" => dump::<Vec<String>>(&file, name),
        "opt_inner" => dump::<Option<Inner>>(&file, name),
        "string" => dump::<String>(&file, name),
        "u64" => dump::<u64>(&file, name),
        "vec3" => dump::<[f32; 3]>(&file, name),
        "level" => dump::<Level>(&file, name),
        other => Err(format!("unknown KIND `{other}`").into()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["write", out] => write_all(Path::new(out)),
        ["read", path, name, kind] => read(path, name, kind),
        _ => Err("usage: xlang_pkg write OUTDIR | xlang_pkg read FILE NAME KIND".into()),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
