//! One measurement of `h5vec::mpi` against one process (issue 32's
//! benchmark; h5vec-bench/scripts/mpi.sh runs it and writes the table):
//! W1 rows (the seed's Measurement: a GPS timestamp, a temperature, a
//! position) into a new file, timed from the file's creation to its close
//! (every rank waits at a barrier before and after; rank 0 prints).
//!
//! ```text
//! mpirun -n 2 mpi_bench mpi    OUT.h5 ROWS none|deflate   ROWS over the ranks, h5vec::mpi
//! mpirun -n 1 mpi_bench serial OUT.h5 ROWS none|deflate   one process, h5vec::save_vector_with
//! mpirun -n 1 mpi_bench serialsync OUT.h5 ROWS none|deflate the same, then fsync of the file
//! ```
//!
//! `serialsync` is the like-for-like baseline for the file on disk: HDF5
//! 1.10.8's MPI-IO driver syncs the file at every flush (SPEC.md section
//! 16), a serial save leaves the writing to the kernel.
//!
//! Prints one JSON line: mode, ranks, rows, compression, seconds, bytes.

use h5vec::{H5Vector, SaveOptions};
use mpi::traits::*;

#[derive(H5Vector, Clone, Copy, Debug, PartialEq)]
struct Timestamp {
    weeks: i32,
    microseconds: i64,
}

#[derive(H5Vector, Clone, Copy, Debug, PartialEq)]
struct Measurement {
    timestamp: Timestamp,
    temperature: f64,
    position: [f64; 3],
}

/// A well-mixed 64-bit value of (stream, i).
fn mix(stream: u64, i: u64) -> u64 {
    let mut z = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ stream.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn uniform(bits: u64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * ((bits >> 11) as f64 / (1u64 << 53) as f64)
}

/// Row `i` of W1 (as h5vec-bench's `w1_row` draws it).
fn w1_row(i: u64) -> Measurement {
    Measurement {
        timestamp: Timestamp {
            weeks: (mix(1, i) % 5000) as i32,
            microseconds: (mix(2, i) % 604_800_000_000) as i64,
        },
        temperature: uniform(mix(3, i), -50.0, 50.0),
        position: std::array::from_fn(|j| uniform(mix(4 + j as u64, i), -1000.0, 1000.0)),
    }
}

fn main() -> h5vec::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, path, rows, comp] = args.as_slice() else {
        eprintln!("usage: mpi_bench mpi|serial|serialsync OUT.h5 ROWS none|deflate");
        std::process::exit(2);
    };
    let total: u64 = rows.parse().expect("ROWS is a number");
    let opts = match comp.as_str() {
        "deflate" => SaveOptions::default().deflate(4),
        _ => SaveOptions::default(),
    };
    let universe = mpi::initialize().expect("MPI initialized once");
    let world = universe.world();
    let (r, p) = (world.rank() as u64, world.size() as u64);
    let (first, last) = (total * r / p, total * (r + 1) / p);
    let mine: Vec<Measurement> = (first..last).map(w1_row).collect();
    let _ = std::fs::remove_file(path);
    world.barrier();
    let t0 = std::time::Instant::now();
    if mode.starts_with("serial") {
        assert_eq!(p, 1, "serial runs on one rank");
        let file = h5vec::create_file(path)?;
        h5vec::save_vector_with(&file, "w1", &mine, &opts)?;
        drop(file);
        if mode == "serialsync" {
            std::fs::File::open(path)
                .and_then(|f| f.sync_all())
                .expect("the file syncs");
        }
    } else {
        let file = h5vec::mpi::create_file(path, &world)?;
        h5vec::mpi::save_vector_with(&file, "w1", &mine, &opts, &world)?;
    }
    world.barrier();
    let secs = t0.elapsed().as_secs_f64();
    if r == 0 {
        let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        println!(
            "{{\"mode\": \"{mode}\", \"ranks\": {p}, \"rows\": {total}, \"compression\": \"{comp}\", \
             \"seconds\": {secs:.4}, \"bytes\": {bytes}}}"
        );
    }
    Ok(())
}
