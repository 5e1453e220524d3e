//! The MPI tests of `h5vec::mpi` that `xlang_matrix mpi-write` does not
//! cover, run by scripts/mpi_test.sh under `mpirun` (the exit status says
//! whether every check held; each failure is printed).
//!
//! ```text
//! mpirun -n 3 mpi_check writer OUT.h5    VectorWriter: uneven pushes, a rank with none, flushes;
//!                                        plain rows saved and appended past the first batch,
//!                                        and appended again after open_file_rw
//! mpirun -n 3 mpi_check errors OUT.h5    a different type, name or options on one rank, one
//!                                        rank's rows failing to encode, vlen strings: an error
//!                                        on every rank, nothing written, the next call works
//! mpirun -n 2 mpi_check kill OUT.h5      appends forever (the script kills the job)
//! mpirun -n 1 mpi_check serial-file F.h5  one process saves two vectors
//! mpirun -n 3 mpi_check serial-append F.h5 appends to them refused on every rank; a new
//!                                        vector saved and appended
//! mpi_check verify OUT.h5 RANKS MIN     serial: the vectors `log` and `flat` hold whole
//!                                        commits, exactly
//! ```

use h5vec::{H5Vector, SaveOptions};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Row {
    id: u64,
    value: f64,
    name: String,
    hits: Vec<u32>,
    flag: Option<bool>,
}

/// Row `i` of every vector here: what it holds follows from `i` alone.
fn row(i: u64) -> Row {
    Row {
        id: i,
        value: i as f64 * 0.5,
        name: format!("r{i}"),
        hits: vec![i as u32; (i % 3) as usize],
        flag: (!i.is_multiple_of(4)).then_some(i.is_multiple_of(2)),
    }
}

/// Plain rows (numbers, arrays, records, options of them): past a first
/// batch that every rank writes together (debug builds: 4 KiB of rows),
/// each rank of `h5vec::mpi` writes them as it encodes them.
#[derive(H5Vector, Clone, Copy, Debug, PartialEq)]
struct Flat {
    id: u64,
    xy: [f64; 2],
    weight: Option<f32>,
    pair: (i32, u8),
}

fn flat(i: u64) -> Flat {
    Flat {
        id: i,
        xy: [i as f64, -(i as f64) / 3.0],
        weight: (!i.is_multiple_of(5)).then_some(i as f32 * 0.25),
        pair: (-(i as i32), (i % 251) as u8),
    }
}

/// Rows a rank writes per commit in `kill`: rank r writes 10,000 (r + 1).
fn per_rank(r: u64) -> u64 {
    10_000 * (r + 1)
}

struct Checks {
    rank: i32,
    failed: bool,
}

impl Checks {
    fn check(&mut self, ok: bool, what: impl std::fmt::Display) {
        if !ok {
            eprintln!("rank {}: FAIL {what}", self.rank);
            self.failed = true;
        }
    }
}

fn writer(path: &str, world: &SimpleCommunicator, c: &mut Checks) -> h5vec::Result<()> {
    let (r, p) = (world.rank() as u64, world.size() as u64);
    let file = h5vec::mpi::create_file(path, world)?;
    let mut w =
        h5vec::mpi::VectorWriter::<Row, _>::create(&file, "rows", &SaveOptions::default(), world)?;
    let mut next = 0u64;
    for step in 0..4u64 {
        // Rank r pushes r * step rows (rank 0 none): ids continue in rank order.
        let counts: Vec<u64> = (0..p).map(|k| k * step).collect();
        let before: u64 = counts[..r as usize].iter().sum();
        for i in 0..counts[r as usize] {
            w.push(&row(next + before + i))?;
        }
        c.check(w.pending_rows() == counts[r as usize], "pending rows");
        w.flush()?;
        next += counts.iter().sum::<u64>();
        c.check(
            w.len() == next,
            format!("len {} after step {step}, want {next}", w.len()),
        );
    }
    let n = w.finish()?;
    c.check(n == next, "finish's length");
    let all: Vec<Row> = h5vec::mpi::load_range(&file, "rows", 0..n)?;
    c.check(
        all == (0..n).map(row).collect::<Vec<_>>(),
        "the rows the writer wrote",
    );
    // Plain rows: rank r saves 300 r rows, then appends 150 r + 7 (rank 0:
    // none, then 7: no rows past its first batch).
    let (saved, appended) = (|k: u64| 300 * k, |k: u64| 150 * k + 7);
    let at = |f: &dyn Fn(u64) -> u64, start: u64| start + (0..r).map(f).sum::<u64>();
    let total_saved: u64 = (0..p).map(saved).sum();
    let mine: Vec<Flat> = (0..saved(r)).map(|i| flat(at(&saved, 0) + i)).collect();
    h5vec::mpi::save_vector(&file, "flat", &mine, world)?;
    // Every rank's appended rows after the `start` rows there are, then
    // all rows checked; the new length.
    let append =
        |file: &hdf5::File, start: u64, c: &mut Checks, what: &str| -> h5vec::Result<u64> {
            let mine: Vec<Flat> = (0..appended(r))
                .map(|i| flat(at(&appended, start) + i))
                .collect();
            h5vec::mpi::append_vector(file, "flat", &mine, world)?;
            let n = start + (0..p).map(appended).sum::<u64>();
            let all: Vec<Flat> = h5vec::mpi::load_range(file, "flat", 0..n)?;
            c.check(all == (0..n).map(flat).collect::<Vec<_>>(), what);
            Ok(n)
        };
    let n = append(&file, total_saved, c, "plain rows saved and appended")?;
    // The file closed and opened again by every rank: more rows.
    drop(file);
    let file = h5vec::mpi::open_file_rw(path, world)?;
    append(&file, n, c, "rows appended after the file was opened again")?;
    Ok(())
}

/// `r`'s error text, if it is an error that contains `want`.
fn says(r: &h5vec::Result<()>, want: &str) -> bool {
    r.as_ref()
        .err()
        .is_some_and(|e| e.to_string().contains(want))
}

fn errors(path: &str, world: &SimpleCommunicator, c: &mut Checks) -> h5vec::Result<()> {
    let (r, p) = (world.rank() as u64, world.size() as u64);
    let last = p - 1;
    let file = h5vec::mpi::create_file(path, world)?;
    let mine: Vec<u64> = (0..10).map(|i| r * 10 + i).collect();

    // Another type on the last rank.
    let res = if r == last {
        let other: Vec<u32> = mine.iter().map(|&v| v as u32).collect();
        h5vec::mpi::save_vector(&file, "x", &other, world)
    } else {
        h5vec::mpi::save_vector(&file, "x", &mine, world)
    };
    c.check(
        says(
            &res,
            &format!("rank {last} called save_vector(\"x\") of u32"),
        ),
        format!("another type: {res:?}"),
    );

    // Another name on the last rank.
    let name = if r == last { "y" } else { "x" };
    let res = h5vec::mpi::save_vector(&file, name, &mine, world);
    c.check(
        says(&res, &format!("rank {last} called save_vector(\"y\")")),
        format!("another name: {res:?}"),
    );

    // Other options on the last rank.
    let opts = if r == last {
        SaveOptions::default().deflate(1)
    } else {
        SaveOptions::default()
    };
    let res = h5vec::mpi::save_vector_with(&file, "x", &mine, &opts, world);
    c.check(
        says(&res, &format!("rank {last} called")),
        format!("other options: {res:?}"),
    );

    // An append where the others save.
    let res = if r == last {
        h5vec::mpi::append_vector(&file, "x", &mine, world)
    } else {
        h5vec::mpi::save_vector(&file, "x", &mine, world)
    };
    c.check(
        says(&res, &format!("rank {last} called append_vector")),
        format!("a different call: {res:?}"),
    );

    // The last rank's rows fail to encode: a real "NA" after the serial
    // encoder chose "NA" for a missing value of an earlier batch.
    let texts: Vec<Option<String>> = if r == last {
        (0..70_000)
            .map(|i| match i {
                0 => None,
                69_999 => Some("NA".to_string()),
                _ => Some(format!("t{i}")),
            })
            .collect()
    } else {
        vec![Some("a".into()), None]
    };
    let res = h5vec::mpi::save_vector(&file, "texts", &texts, world);
    let want = if r == last {
        "placeholder"
    } else {
        "another rank failed"
    };
    c.check(
        says(&res, want),
        format!("one rank failing to encode: {res:?}"),
    );
    if r != last {
        c.check(
            says(&res, &format!("rank {last}:")),
            "the failing rank named",
        );
    }

    // HDF5 variable-length strings: parallel HDF5 cannot write them.
    let strings: Vec<String> = (0..3).map(|i| format!("s{r}{i}")).collect();
    let res = h5vec::mpi::save_vector_with(
        &file,
        "vlen",
        &strings,
        &SaveOptions::default().vls_strings(false),
        world,
    );
    c.check(
        says(&res, "variable-length"),
        format!("vlen strings: {res:?}"),
    );

    // Nothing of the refused calls is there, and the next call works.
    for name in ["x", "y", "texts", "vlen"] {
        c.check(
            !h5vec::vector_exists(&file, name)?,
            format!("vector {name} after refused saves"),
        );
    }
    h5vec::mpi::save_vector(&file, "x", &mine, world)?;
    h5vec::mpi::append_vector(&file, "x", &mine, world)?;
    let all: Vec<u64> = h5vec::mpi::load_range(&file, "x", 0..20 * p)?;
    let want: Vec<u64> = (0..p * 10).chain(0..p * 10).collect();
    c.check(
        all == want,
        "the vector saved and appended after the errors",
    );
    Ok(())
}

fn kill(path: &str, world: &SimpleCommunicator) -> h5vec::Result<()> {
    let (r, p) = (world.rank() as u64, world.size() as u64);
    let file = h5vec::mpi::create_file(path, world)?;
    let per: u64 = (0..p).map(per_rank).sum();
    let before: u64 = (0..r).map(per_rank).sum();
    h5vec::mpi::save_vector::<Row, _>(&file, "log", &[], world)?;
    h5vec::mpi::save_vector::<Flat, _>(&file, "flat", &[], world)?;
    for commit in 0u64.. {
        let first = commit * per + before;
        let rows: Vec<Row> = (first..first + per_rank(r)).map(row).collect();
        h5vec::mpi::append_vector(&file, "log", &rows, world)?;
        // Plain rows, a tenth as many: each append 10 to 30 times the first
        // batch (debug builds).
        let first = (commit * per + before) / 10;
        let rows: Vec<Flat> = (first..first + per_rank(r) / 10).map(flat).collect();
        h5vec::mpi::append_vector(&file, "flat", &rows, world)?;
        if r == 0 {
            println!("committed {}", (commit + 1) * per);
        }
    }
    Ok(())
}

/// One process: a file with a vector `plain` of `flat(0..100)` and the same
/// rows compressed, `packed`.
fn serial_file(path: &str) -> h5vec::Result<()> {
    let f = h5vec::create_file(path)?;
    let rows: Vec<Flat> = (0..100).map(flat).collect();
    h5vec::save_vector(&f, "plain", &rows)?;
    h5vec::save_vector_with(&f, "packed", &rows, &SaveOptions::default().deflate(4))
}

/// Every rank, on the file of `serial_file`: appends to its vectors are
/// refused on every rank (one process created their datasets: HDF5
/// allocates their chunks when first written, which parallel HDF5 1.10
/// cannot do for one rank alone) and leave them as they were; a new
/// vector saved and appended by the ranks holds their rows.
fn serial_append(path: &str, world: &SimpleCommunicator, c: &mut Checks) -> h5vec::Result<()> {
    let (r, p) = (world.rank() as u64, world.size() as u64);
    let file = h5vec::mpi::open_file_rw(path, world)?;
    let per = |k: u64| 300 * k + 5;
    let start = 100 + (0..r).map(per).sum::<u64>();
    let mine: Vec<Flat> = (start..start + per(r)).map(flat).collect();
    for name in ["plain", "packed"] {
        let res = h5vec::mpi::append_vector(&file, name, &mine, world);
        c.check(
            says(
                &res,
                "h5vec::mpi cannot append to this dataset: one process created it",
            ),
            format!("an append to {name} (one process saved it): {res:?}"),
        );
        let back: Vec<Flat> = h5vec::load_vector(&file, name)?;
        c.check(
            back == (0..100).map(flat).collect::<Vec<_>>(),
            format!("{name} as one process saved it"),
        );
    }
    let first: Vec<Flat> = (0..per(r)).map(|i| flat(start - 100 + i)).collect();
    h5vec::mpi::save_vector(&file, "ranks", &first, world)?;
    let n = (0..p).map(per).sum::<u64>();
    let more: Vec<Flat> = mine.iter().map(|f| flat(f.id - 100 + n)).collect();
    h5vec::mpi::append_vector(&file, "ranks", &more, world)?;
    let all: Vec<Flat> = h5vec::mpi::load_range(&file, "ranks", 0..2 * n)?;
    c.check(
        all == (0..2 * n).map(flat).collect::<Vec<_>>(),
        "a vector the ranks saved and appended in a file one process created",
    );
    Ok(())
}

/// Serial: vectors `log` and `flat` hold whole commits (of `per` rows for
/// `ranks` ranks; `flat` a tenth as many), at least `min` rows' worth each
/// (rank 0 printed `min` after both appends; `flat`, appended second, is
/// one commit behind at most), each row exactly `row(i)` / `flat(i)`.
fn verify(path: &str, ranks: u64, min: u64) -> Result<u64, String> {
    let file = h5vec::open_file(path).map_err(|e| e.to_string())?;
    let rows: Vec<Row> = h5vec::load_vector(&file, "log").map_err(|e| e.to_string())?;
    let flats: Vec<Flat> = h5vec::load_vector(&file, "flat").map_err(|e| e.to_string())?;
    let per: u64 = (0..ranks).map(per_rank).sum();
    // `flat` gets a tenth of the rows of `log` in each commit.
    let (n, m) = (rows.len() as u64, flats.len() as u64 * 10);
    if !n.is_multiple_of(per) || !m.is_multiple_of(per) || m < min || m > n || m + per < n {
        return Err(format!(
            "{n} and {m} rows: not whole commits of {per}, fewer than {min}, or `flat` \
             not one commit behind `log` at most"
        ));
    }
    if let Some(bad) = rows.iter().enumerate().find(|(i, v)| **v != row(*i as u64)) {
        return Err(format!("row {} is {:?}", bad.0, bad.1));
    }
    if let Some(bad) = flats
        .iter()
        .enumerate()
        .find(|(i, v)| **v != flat(*i as u64))
    {
        return Err(format!("flat row {} is {:?}", bad.0, bad.1));
    }
    Ok(n)
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if let ["verify", path, ranks, min] = args.as_slice() {
        let (ranks, min) = (ranks.parse().unwrap_or(0), min.parse().unwrap_or(0));
        return match verify(path, ranks, min) {
            Ok(n) => {
                println!("ok {n} rows");
                std::process::ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("FAIL {e}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    let universe = mpi::initialize().expect("MPI initialized once");
    let world = universe.world();
    let mut c = Checks {
        rank: world.rank(),
        failed: false,
    };
    let res = match args.as_slice() {
        ["writer", path] => writer(path, &world, &mut c),
        ["errors", path] => errors(path, &world, &mut c),
        ["kill", path] => kill(path, &world),
        ["serial-file", path] => serial_file(path),
        ["serial-append", path] => serial_append(path, &world, &mut c),
        _ => {
            eprintln!(
                "usage: mpi_check writer|errors|kill|serial-file|serial-append OUT.h5 | \
                 mpi_check verify OUT.h5 RANKS MIN"
            );
            return std::process::ExitCode::from(2);
        }
    };
    if let Err(e) = res {
        eprintln!("rank {}: FAIL {e}", world.rank());
        c.failed = true;
    }
    if c.failed {
        std::process::ExitCode::FAILURE
    } else {
        if world.rank() == 0 {
            println!("ok {}", args[0]);
        }
        std::process::ExitCode::SUCCESS
    }
}
