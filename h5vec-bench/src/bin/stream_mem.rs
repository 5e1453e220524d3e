//! Bounded-memory streaming (issue 5): writes N W1 `Measurement`s through
//! `VectorWriter` (rows generated on the fly, never held), or reads them back
//! through `VectorReader` and checks every row, then reports the peak RSS.
//!
//! ```text
//! stream_mem write --rows 50000000 --file /tmp/stream.h5 [--deflate] [--batch B]
//! stream_mem read  --rows 50000000 --file /tmp/stream.h5 [--batch B]
//! ```
//!
//! Run each phase in its own process (under `/usr/bin/time -v` for an
//! outside view of "Maximum resident set size"); `scripts/stream_mem.sh` does.

use std::error::Error;
use std::time::Instant;

use h5vec::hdf5::File;
use h5vec::{SaveOptions, VectorReader, VectorWriter};
use h5vec_bench::data::{self, Measurement};

fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let mut rows: u64 = 50_000_000;
    let mut file = std::env::temp_dir().join("h5vec-stream.h5");
    let mut deflate = false;
    let mut batch = 65_536usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rows" => {
                rows = args
                    .next()
                    .ok_or("--rows N")?
                    .replace(['_', ','], "")
                    .parse()?
            }
            "--file" => file = args.next().ok_or("--file F")?.into(),
            "--deflate" => deflate = true,
            "--batch" => batch = args.next().ok_or("--batch B")?.parse()?,
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let rss0 = status_kib("VmRSS:");
    let t = Instant::now();
    match mode.as_str() {
        "write" => {
            let _ = std::fs::remove_file(&file);
            let f = File::create(&file)?;
            let opts = if deflate {
                SaveOptions::default().deflate(4)
            } else {
                SaveOptions::default()
            };
            let mut w = VectorWriter::<Measurement>::create(&f, "measurements", &opts)?;
            for i in 0..rows {
                w.push(&data::w1_row(i))?;
            }
            let n = w.finish()?;
            f.close()?;
            assert_eq!(n, rows);
        }
        "read" => {
            let f = File::open(&file)?;
            let mut i = 0u64;
            for b in VectorReader::<Measurement>::open(&f, "measurements", batch)? {
                for m in b? {
                    if m != data::w1_row(i) {
                        return Err(format!("row {i} differs").into());
                    }
                    i += 1;
                }
            }
            f.close()?;
            if i != rows {
                return Err(format!("read {i} rows, expected {rows}").into());
            }
        }
        _ => {
            return Err(
                "usage: stream_mem write|read [--rows N] [--file F] [--deflate] [--batch B]".into(),
            )
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let hwm = status_kib("VmHWM:");
    let size = std::fs::metadata(&file)?.len();
    println!(
        "stream_mem {mode}: {rows} rows in {secs:.2} s ({:.1} ns/row), file {:.1} MB, \
         VmHWM {:.1} MiB (RSS at start {:.1} MiB), logical data {:.1} MiB",
        secs * 1e9 / rows as f64,
        size as f64 / 1e6,
        hwm as f64 / 1024.0,
        rss0 as f64 / 1024.0,
        (rows * data::W1_PAYLOAD) as f64 / (1 << 20) as f64
    );
    Ok(())
}
