//! A live writer (SPEC.md section 8, "Live readers"): streams `Tick` rows
//! into vector `ticks` of a new file while other processes read it.
//!
//! ```sh
//! cargo run --example live_writer -- PATH SECONDS [ROWS_PER_COMMIT]
//! ```
//!
//! Prints `ready` once readers can open the file, then `committed N` after
//! every commit, and `done N` at the end. Row `i` is [`tick`]`(i)`, so a
//! reader can check every row it loads (tests/python/test_live_h5py.py,
//! tests/live.rs).

use std::io::Write;
use std::time::{Duration, Instant};

use h5vec::{H5Vector, SaveOptions, VectorWriter};

/// One row: fixed-size fields, a list, a compressed string (`vls`: a plain
/// chunked layout, so it can be written live) and an option.
#[derive(H5Vector, Debug, PartialEq, Clone)]
pub struct Tick {
    seq: u64,
    price: f64,
    qty: i32,
    tags: Vec<u16>,
    #[h5vec(vls)]
    venue: String,
    bid: Option<f32>,
}

/// Row `i` of the stream.
pub fn tick(i: u64) -> Tick {
    Tick {
        seq: i,
        price: i as f64 * 0.25,
        qty: (i % 1000) as i32 - 500,
        tags: (0..i % 4).map(|k| (i + k) as u16).collect(),
        venue: format!("v{}", i % 7),
        bid: (!i.is_multiple_of(3)).then_some(i as f32 * 0.5),
    }
}

fn main() -> h5vec::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: live_writer PATH SECONDS [ROWS_PER_COMMIT]");
        std::process::exit(2);
    }
    let secs: f64 = args[2].parse().expect("SECONDS: a number");
    let per_commit: u64 = args
        .get(3)
        .map_or(500, |s| s.parse().expect("ROWS_PER_COMMIT"));
    let file = h5vec::create_file_live(&args[1])?;
    let opts = SaveOptions::default().chunk_length(256);
    let mut w = VectorWriter::<Tick>::create_live(&file, "ticks", &opts)?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut i = 0u64;
    while Instant::now() < end {
        for _ in 0..per_commit {
            w.push(&tick(i))?;
            i += 1;
        }
        w.flush()?;
        let _ = writeln!(out, "committed {}", w.len());
        let _ = out.flush();
        std::thread::sleep(Duration::from_millis(2));
    }
    let n = w.finish()?;
    let _ = writeln!(out, "done {n}");
    Ok(())
}
