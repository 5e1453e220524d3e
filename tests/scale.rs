//! Load and append times that grow with the data, not with its square:
//! chunk lookups in constant time, chunk sizes that follow bytes (SPEC.md
//! sections 6 and 6.3).
//!
//! Every test here holds one lock for its whole run, so the timings of one
//! are not disturbed by another (HDF5 calls are serialised in the process).

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use h5vec::hdf5::{self, File};
use h5vec::{H5Vector, SaveOptions};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Row {
    id: u64,
    t: f64,
    pos: [f32; 3],
    #[h5vec(vls)]
    name: String,
    tags: Vec<String>,
    vals: Vec<f32>,
}

fn row(i: u64) -> Row {
    Row {
        id: i * 7 + 1,
        t: i as f64 * 0.25 - 3.0,
        pos: [i as f32, -(i as f32), 0.5],
        name: format!("name-{i}-{}", "x".repeat((i % 13) as usize)),
        tags: (0..i % 4).map(|k| format!("t{k}-{}", i % 5)).collect(),
        vals: (0..i % 9).map(|k| (i + k) as f32 * 0.5).collect(),
    }
}

#[derive(H5Vector, Clone, Copy, Debug, PartialEq)]
struct Pair {
    a: u64,
    b: f64,
}

fn pairs(n: u64) -> Vec<Pair> {
    (0..n)
        .map(|i| Pair {
            a: i ^ 0x5555,
            b: i as f64 * 1.5,
        })
        .collect()
}

/// Median seconds of `runs` calls of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// Median seconds of loading vector `v` of `path` (file opened each time),
/// checking the values every time.
fn load_secs<T: H5Vector + PartialEq + std::fmt::Debug>(
    path: &Path,
    want: &[T],
    runs: usize,
) -> f64 {
    median(runs, || {
        let f = File::open(path).unwrap();
        let back: Vec<T> = h5vec::load_vector(&f, "v").unwrap();
        assert!(back == want, "loaded values differ from the saved ones");
    })
}

/// Rows per chunk of dataset `ds` of `path`, and its number of chunks.
fn chunking(path: &Path, ds: &str) -> (usize, usize) {
    let f = File::open(path).unwrap();
    let d = f.dataset(ds).unwrap();
    (d.chunk().unwrap()[0], d.num_chunks().unwrap())
}

/// One row saved, then the rest appended `batch` rows at a time, against
/// all rows saved at once: both load in about the same time.
fn appended_loads_like_saved(opts: &SaveOptions) {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let v: Vec<Row> = (0..20_001).map(row).collect();
    let once = dir.path().join("once.h5");
    let f = h5vec::create_file(&once).unwrap();
    h5vec::save_vector_with(&f, "v", &v, opts).unwrap();
    drop(f);
    let grown = dir.path().join("grown.h5");
    let f = h5vec::create_file(&grown).unwrap();
    h5vec::save_vector_with(&f, "v", &v[..1], opts).unwrap();
    for part in v[1..].chunks(100) {
        h5vec::append_vector_with(&f, "v", part, opts).unwrap();
    }
    drop(f);
    // The grown vector kept the chunk lengths of its first save of one row:
    // at least 4 KiB of rows, and 16 KiB of heap bytes.
    assert_eq!(chunking(&grown, "v/data/id/values").0, 512);
    assert_eq!(chunking(&grown, "v/data/pos/values").0, 256);
    assert_eq!(chunking(&grown, "v/data/name/heap").0, 16 << 10);
    assert_eq!(chunking(&grown, "v/data/vals/VALUES").0, 1024);
    assert_eq!(chunking(&grown, "v/data/tags/VALUES/CHARS").0, 16 << 10);
    assert_eq!(chunking(&grown, "v/data/id/values"), (512, 40));

    let t_once = load_secs(&once, &v, 5);
    let t_grown = load_secs(&grown, &v, 5);
    eprintln!("20,001 rows: saved at once {t_once:.4} s, 1 + 200 appends {t_grown:.4} s");
    // Within 2x, with 20 ms for the noise of a shared machine. Before chunk
    // lookups took constant time, the grown vector took about 50 s.
    assert!(
        t_grown <= 2.0 * t_once + 0.02,
        "1 + appends loads in {t_grown:.4} s, saved at once in {t_once:.4} s"
    );
}

#[test]
fn appended_vector_loads_within_2x_of_one_saved_at_once() {
    appended_loads_like_saved(&SaveOptions::default());
}

#[test]
fn appended_deflated_vector_loads_within_2x_of_one_saved_at_once() {
    appended_loads_like_saved(&SaveOptions::default().deflate(4));
}

/// A vector of `n` rows in one-row chunks (`chunk_length(1)`).
fn one_row_chunks(path: &Path, n: u64) -> Vec<Pair> {
    let v = pairs(n);
    let f = h5vec::create_file(path).unwrap();
    let opts = SaveOptions::default().chunk_length(1);
    h5vec::save_vector_with(&f, "v", &v, &opts).unwrap();
    v
}

#[test]
fn forty_thousand_one_row_chunks_load_in_linear_time() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("10k.h5");
    let big = dir.path().join("40k.h5");
    let vs = one_row_chunks(&small, 10_000);
    let vb = one_row_chunks(&big, 40_000);
    assert_eq!(chunking(&big, "v/data/a/values"), (1, 40_000));
    assert_eq!(chunking(&big, "v/data/b/values"), (1, 40_000));
    let ts = load_secs(&small, &vs, 3);
    let tb = load_secs(&big, &vb, 3);
    eprintln!("one-row chunks: 10,000 load in {ts:.4} s, 40,000 in {tb:.4} s");
    // Linear: 4x the chunks, about 4x the time (quadratic: 16x).
    assert!(
        tb < 2.0,
        "40,000 one-row chunks per column load in {tb:.3} s"
    );
    assert!(
        tb <= 8.0 * ts + 0.05,
        "4x the chunks take {:.1}x the time ({ts:.4} s, {tb:.4} s)",
        tb / ts
    );
}

/// A crafted file: vector `v` of `n` `u64`s whose `values` is replaced by a
/// dataset of one-row chunks indexed by a version 1 B-tree (what HDF5 writes
/// with its default format bounds, h5py's default too).
fn btree_one_row_chunks(path: &Path, n: u64) -> Vec<u64> {
    let v: Vec<u64> = (0..n).map(|i| i * 3 + 1).collect();
    let f = File::create(path).unwrap();
    h5vec::save_vector(&f, "v", &v).unwrap();
    f.unlink("v/data/values").unwrap();
    let ds = f
        .new_dataset::<u64>()
        .chunk(1)
        .shape(n as usize..)
        .create("v/data/values")
        .unwrap();
    ds.write(&v).unwrap();
    let mut idx: hdf5_sys::h5d::H5D_chunk_index_t = 99;
    // SAFETY: a valid dataset id and an output value.
    hdf5::sync::sync(|| unsafe { hdf5_sys::h5d::H5Dget_chunk_index_type(ds.id(), &mut idx) });
    assert_eq!(
        idx, 0,
        "the index is a version 1 B-tree (H5D_CHUNK_IDX_BTREE)"
    );
    v
}

#[test]
fn hostile_file_of_one_row_chunks_in_a_btree_loads_fast() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("btree.h5");
    let v = btree_one_row_chunks(&path, 40_000);
    assert_eq!(chunking(&path, "v/data/values"), (1, 40_000));
    let t = load_secs(&path, &v, 3);
    eprintln!("40,000 one-row chunks in a v1 B-tree load in {t:.4} s");
    assert!(t < 2.0, "40,000 one-row chunks load in {t:.3} s");
}

/// Median seconds per `load_range` of `rows` rows, at 50 places spread
/// over the vector (one open file).
fn load_range_secs(path: &Path, want: &[Pair], rows: u64) -> f64 {
    let f = File::open(path).unwrap();
    let n = want.len() as u64;
    let calls = 50u64;
    let total = median(3, || {
        for k in 0..calls {
            let at = k * (n - rows) / calls;
            let got: Vec<Pair> = h5vec::load_range(&f, "v", at..at + rows).unwrap();
            assert_eq!(got[..], want[at as usize..(at + rows) as usize]);
        }
    });
    total / calls as f64
}

#[test]
fn load_range_looks_up_each_chunk_of_its_rows_once() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("40k.h5");
    let v = one_row_chunks(&path, 40_000);
    let t10 = load_range_secs(&path, &v, 10);
    let t100 = load_range_secs(&path, &v, 100);
    eprintln!(
        "load_range among 40,000 one-row chunks per column: {:.0} us per call of 10 rows, {:.0} us of 100",
        t10 * 1e6,
        t100 * 1e6
    );
    // Opening the vector may walk each column's index once (a fixed cost
    // per call); a walk per chunk read would make 10x the rows 10x the time.
    assert!(
        t100 <= 3.0 * t10 + 0.001,
        "load_range of 100 rows takes {t100:.6} s, of 10 rows {t10:.6} s"
    );
}

/// Median seconds per append of 100 rows, over 20 appends, to a vector of
/// one-row chunks that holds `n` rows.
fn append_secs(path: &Path, n: u64) -> f64 {
    one_row_chunks(path, n);
    let f = File::open_rw(path).unwrap();
    let more = pairs(n + 2_000);
    let opts = SaveOptions::default().chunk_length(1);
    let mut at = n as usize;
    let t = median(20, || {
        h5vec::append_vector_with(&f, "v", &more[at..at + 100], &opts).unwrap();
        at += 100;
    });
    let back: Vec<Pair> = h5vec::load_vector(&f, "v").unwrap();
    assert_eq!(back, more[..at]);
    t
}

#[test]
fn appends_cost_the_same_however_many_chunks_the_vector_has() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let ts = append_secs(&dir.path().join("1k.h5"), 1_000);
    let tb = append_secs(&dir.path().join("40k.h5"), 40_000);
    eprintln!(
        "append of 100 one-row chunks: {:.2} ms to 1,000 chunks, {:.2} ms to 40,000",
        ts * 1e3,
        tb * 1e3
    );
    // Opening the vector may walk each column's index once (a few ms at
    // 40,000 chunks); a lookup that walked it for each of the 100 chunks
    // written would take seconds.
    assert!(
        tb <= 4.0 * ts + 0.02,
        "an append takes {tb:.5} s to 40,000 chunks, {ts:.5} s to 1,000"
    );
}

/// 300 MB of text whose bytes depend on their position (so a chunk read
/// into the wrong place shows), with a few multi-byte characters.
fn long_string() -> String {
    let piece: String = (0..4099u32)
        .map(|i| match i % 997 {
            0 => 'é',
            _ => char::from(b'a' + (i * 7 % 26) as u8),
        })
        .collect();
    let mut s = piece.repeat(300_000_000 / piece.len() + 1);
    let mut cut = 300_000_000;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s.push_str("-end");
    s
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct VlsText {
    id: u32,
    #[h5vec(vls)]
    text: String,
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct ListText {
    id: u32,
    text: Vec<String>,
}

/// Saves `v` to a new file (timed), loads it back (timed), and checks
/// every byte; returns the file's path and both times.
fn save_and_load<T: H5Vector + PartialEq>(dir: &Path, v: &[T]) -> (std::path::PathBuf, f64, f64) {
    let path = dir.join("long.h5");
    let s = Instant::now();
    let f = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&f, "v", v).unwrap();
    drop(f);
    let save = s.elapsed().as_secs_f64();
    let s = Instant::now();
    let f = File::open(&path).unwrap();
    let back: Vec<T> = h5vec::load_vector(&f, "v").unwrap();
    let load = s.elapsed().as_secs_f64();
    assert!(back == v, "the loaded string differs from the saved one");
    (path, save, load)
}

#[test]
fn string_of_300_mb_in_a_vls_field() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let v = vec![
        VlsText {
            id: 1,
            text: long_string(),
        },
        VlsText {
            id: 2,
            text: "short".into(),
        },
    ];
    let (path, save, load) = save_and_load(dir.path(), &v);
    eprintln!("300 MB vls string: save {save:.2} s, load {load:.2} s");
    // 16 KiB chunks (the vector had 2 rows when saved), as many as the
    // heap's bytes fill.
    let (chunk, n) = chunking(&path, "v/data/text/heap");
    assert_eq!(chunk, 16 << 10);
    assert_eq!(n, (v[0].text.len() + 5).div_ceil(16 << 10));
    assert!(
        save < 30.0 && load < 30.0,
        "save {save:.1} s, load {load:.1} s"
    );
}

#[test]
fn string_of_300_mb_in_a_vec_of_strings() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let v = vec![ListText {
        id: 1,
        text: vec!["a".into(), long_string(), String::new()],
    }];
    let (path, save, load) = save_and_load(dir.path(), &v);
    eprintln!("300 MB string in a Vec<String>: save {save:.2} s, load {load:.2} s");
    let (chunk, n) = chunking(&path, "v/data/text/VALUES/CHARS");
    assert_eq!(chunk, 16 << 10);
    assert_eq!(n, (1 + v[0].text[1].len()).div_ceil(16 << 10));
    assert!(
        save < 30.0 && load < 30.0,
        "save {save:.1} s, load {load:.1} s"
    );
}
