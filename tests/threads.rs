//! h5vec called from several threads at once, each on its own file: every
//! HDF5 call must run under hdf5-metno's global lock. One that did not (the
//! datatype queries of `raw::read_rows_own_type`, behind every fixed-length
//! string column of an h5col table) corrupted HDF5's global stack of API
//! contexts and crashed a concurrent call now and then (a null VOL wrapper
//! context in `H5VL_reset_vol_wrapper`). This test loads and saves h5col
//! tables, VLS arrays and HDF5Vectors vectors from several threads at once.
//! A stress test catches such a bug only with some probability (this one
//! crashed in 12 of 20 runs before the fix); the lock audit every h5vec test
//! runs under (h5vec/src/lock_audit.rs) catches any call outside the lock
//! the first time it is made, on any thread.

use h5vec::h5col::{append_table, load_table, save_table};
use h5vec::hdf5::File;
use h5vec::vls::{load_strings, save_strings};
use h5vec::{load_vector, save_vector, H5Vector};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    id: i64,
    /// Fixed-length UTF-8 in h5col: read through `read_rows_own_type`.
    name: String,
    note: Option<String>,
    score: Option<f64>,
    flag: bool,
    values: Vec<f32>,
    tags: Option<Vec<Option<String>>>,
}

fn rows(seed: usize, n: usize) -> Vec<Row> {
    (0..n)
        .map(|i| {
            let k = seed * 1000 + i;
            Row {
                id: k as i64,
                name: format!("row {k:06} ünï"), // one length: fixed at the first save
                note: (i % 3 != 0).then(|| format!("note {i:03}")),
                score: (i % 4 != 1).then_some(k as f64 * 0.5),
                flag: i % 2 == 0,
                values: (0..i % 5).map(|v| v as f32).collect(),
                tags: (i % 5 != 2).then(|| vec![Some(format!("t{i}")), None]),
            }
        })
        .collect()
}

/// Runs `f(thread)` on `THREADS` threads at once, `ROUNDS` times each.
fn on_threads(f: impl Fn(usize, usize) + Sync) {
    const THREADS: usize = 4;
    const ROUNDS: usize = 25;
    let f = &f;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                for r in 0..ROUNDS {
                    f(t, r);
                }
            });
        }
    });
}

#[test]
fn concurrent_loads_and_saves_from_threads() {
    let dir = tempfile::tempdir().unwrap();
    // One file every thread reads at once (opened by each of them).
    let shared = dir.path().join("shared.h5");
    let shared_rows = rows(99, 40);
    {
        let f = File::create(&shared).unwrap();
        save_table(&f, "table", &shared_rows).unwrap();
    }
    on_threads(|t, r| {
        let path = dir.path().join(format!("t{t}-{r}.h5"));
        let f = File::create(&path).unwrap();
        let mine = rows(t * 100 + r, 12 + r % 7);
        // h5col table: save, append, load.
        save_table(&f, "table", &mine[..6]).unwrap();
        append_table(&f, "table", &mine[6..]).unwrap();
        assert_eq!(load_table::<Row>(&f, "table").unwrap(), mine);
        // HDF5Vectors vector.
        save_vector(&f, "vector", &mine).unwrap();
        assert_eq!(load_vector::<Row>(&f, "vector").unwrap(), mine);
        // Deflated, in parts: chunks compressed on the shared worker pool
        // while every thread commits its own file.
        let opts = h5vec::SaveOptions::default().chunk_length(4).deflate(3);
        h5vec::save_vector_with(&f, "deflated", &mine[..5], &opts).unwrap();
        h5vec::append_vector_with(&f, "deflated", &mine[5..], &opts).unwrap();
        assert_eq!(load_vector::<Row>(&f, "deflated").unwrap(), mine);
        // Blosc (HDF5's own pipeline, under the lock; Blosc's own threads
        // split each 512 KiB chunk), every fifth round.
        if r % 5 == 0 {
            let xs: Vec<f64> = (0..150_000).map(|i| (i * (t + 1)) as f64 * 0.25).collect();
            let opts = h5vec::SaveOptions::default().chunk_length(65_536).zstd(1);
            h5vec::save_vector_with(&f, "blosc", &xs, &opts).unwrap();
            assert_eq!(load_vector::<f64>(&f, "blosc").unwrap(), xs);
        }
        // VLS array.
        let strings: Vec<Option<String>> = mine.iter().map(|m| m.note.clone()).collect();
        save_strings(&f, "vls", &strings).unwrap();
        assert_eq!(load_strings(&f.group("vls").unwrap()).unwrap(), strings);
        drop(f);
        // The shared file, read-only.
        let g = File::open(&shared).unwrap();
        assert_eq!(load_table::<Row>(&g, "table").unwrap(), shared_rows);
        std::fs::remove_file(&path).unwrap();
    });
}

/// Batches are written by h5vec's writer thread while the caller encodes
/// the next one; that thread takes the HDF5 lock, so a caller that already
/// holds it (here: a whole save inside `hdf5::sync::sync`, as code mixing
/// hdf5-metno calls might) must still finish: the writer gives up and the
/// caller writes its own batches. Uncompressed and deflated, many batches
/// (chunks of 1,000 rows), exact values back, on several threads at once.
#[test]
fn saves_while_holding_the_hdf5_lock_do_not_wait_for_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<(u64, f64, [i32; 3])> = (0..50_000u64)
        .map(|i| (i * 7, i as f64 * 0.25, [i as i32, -(i as i32), 3]))
        .collect();
    let save = |path: &std::path::Path, opts: &h5vec::SaveOptions, locked: bool| {
        let file = File::create(path).unwrap();
        let go = || h5vec::save_vector_with(&file, "v", &values, opts).unwrap();
        if locked {
            h5vec::hdf5::sync::sync(go);
        } else {
            go();
        }
        drop(file);
        let file = File::open(path).unwrap();
        let back: Vec<(u64, f64, [i32; 3])> = load_vector(&file, "v").unwrap();
        assert_eq!(back, values);
    };
    let plain = h5vec::SaveOptions::default().chunk_length(1000);
    let deflated = plain.clone().deflate(1);
    std::thread::scope(|s| {
        for t in 0..3 {
            let (save, plain, deflated, dir) = (&save, &plain, &deflated, &dir);
            s.spawn(move || {
                for (i, opts) in [plain, deflated].into_iter().enumerate() {
                    for locked in [true, false] {
                        save(
                            &dir.path().join(format!("t{t}-{i}-{locked}.h5")),
                            opts,
                            locked,
                        );
                    }
                }
            });
        }
    });
}
