//! Read-ahead of compressed vectors (`column::PodReader`,
//! `pipeline::prefetch::ReadAhead`): front-to-back reads in batches of
//! every size, with chunk lengths that do not divide the batch and partial
//! chunks at both ends, return exactly the rows saved (and what the
//! uncompressed vector returns); a damaged chunk read ahead is an error on
//! the read that needs its rows, and only there.

use h5vec::hdf5::File;
use h5vec::{
    load_range, load_vector, save_vector_with, Compression, ErrorKind, H5Vector, SaveOptions,
    VectorReader,
};
use h5vec_tests::{h5vec_file, mix};

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Row {
    id: u64,
    t: f64,
    #[h5vec(vls)]
    name: String,
    tags: Vec<String>,
    vals: Vec<f32>,
    /// Random bits: chunks deflate cannot shrink (stored with the deflate
    /// filter skipped).
    noise: u64,
}

fn rows(n: u64) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: i,
            t: i as f64 * 0.25,
            name: format!("n{}-{}", i, "x".repeat((mix(i) % 17) as usize)),
            tags: (0..mix(i + 7) % 4).map(|k| format!("t{k}")).collect(),
            vals: (0..mix(i + 3) % 9)
                .map(|k| (i * 10 + k) as f32 * 0.5)
                .collect(),
            noise: mix(i),
        })
        .collect()
}

fn compressions() -> Vec<(&'static str, SaveOptions)> {
    vec![
        ("deflate", SaveOptions::default().deflate(4)),
        (
            "deflate-noshuffle",
            SaveOptions::default().compression(Compression::Deflate {
                level: 1,
                shuffle: false,
            }),
        ),
        ("zstd", SaveOptions::default().zstd(3)),
    ]
}

/// Every batch size against chunk lengths that do not divide it: the
/// concatenated batches are the rows saved, and equal the batches of the
/// same vector saved without compression.
#[test]
fn batches_of_every_size_equal_the_uncompressed_rows() {
    let n = 5_003;
    let want = rows(n);
    for chunk in [7usize, 100, 1000, 4096] {
        let (_d, f) = h5vec_file();
        let plain = SaveOptions::default().chunk_length(chunk);
        save_vector_with(&f, "plain", &want, &plain).unwrap();
        for (name, opts) in compressions() {
            let opts = opts.chunk_length(chunk);
            save_vector_with(&f, name, &want, &opts).unwrap();
            assert_eq!(
                load_vector::<Row>(&f, name).unwrap(),
                want,
                "{name} chunk {chunk}"
            );
            for batch in [1usize, 5, 64, 999, 1000, 2048, 4096, n as usize] {
                let got: Vec<Vec<Row>> = VectorReader::<Row>::open(&f, name, batch)
                    .unwrap()
                    .collect::<h5vec::Result<_>>()
                    .unwrap();
                let plain: Vec<Vec<Row>> = VectorReader::<Row>::open(&f, "plain", batch)
                    .unwrap()
                    .collect::<h5vec::Result<_>>()
                    .unwrap();
                assert_eq!(got, plain, "{name} chunk {chunk} batch {batch}");
                assert_eq!(got.concat(), want, "{name} chunk {chunk} batch {batch}");
            }
        }
    }
}

/// Batches of a range that starts and ends inside chunks, then reads that
/// jump (a range read after a batch, backwards, forwards past the
/// read-ahead), all on one file.
#[test]
fn ranges_and_jumps_read_exact_rows() {
    let n = 3_001;
    let want = rows(n);
    let (_d, f) = h5vec_file();
    for (name, opts) in compressions() {
        save_vector_with(&f, name, &want, &opts.chunk_length(128)).unwrap();
        for (s, e, batch) in [
            (5u64, 2_999u64, 300usize),
            (127, 1_025, 129),
            (1, 3_000, 1_000),
        ] {
            let got: Vec<Row> = VectorReader::<Row>::open_range(&f, name, s..e, batch)
                .unwrap()
                .collect::<h5vec::Result<Vec<_>>>()
                .unwrap()
                .concat();
            assert_eq!(
                got,
                want[s as usize..e as usize],
                "{name} {s}..{e} by {batch}"
            );
        }
        for r in [
            0..700,
            2_000..2_600,
            100..101,
            0..3_001,
            1_500..1_800,
            600..1_400,
        ] {
            let got = load_range::<Row>(&f, name, r.clone()).unwrap();
            assert_eq!(got, want[r.start as usize..r.end as usize], "{name} {r:?}");
        }
    }
}

/// Overwrites chunk `k` of dataset `path` (stored deflated) with bytes no
/// deflate reader accepts, keeping its filter mask 0.
fn damage_chunk(f: &File, path: &str, k: u64, chunk_rows: u64) {
    use hdf5_sys::{h5d, h5p};
    let ds = f.dataset(path).unwrap();
    let junk = [0xFFu8; 64];
    // SAFETY: a valid dataset id, a chunk offset of rank 1, a buffer of
    // `junk.len()` bytes.
    let r = h5vec::hdf5::sync::sync(|| unsafe {
        h5d::H5Dwrite_chunk(
            ds.id(),
            h5p::H5P_DEFAULT,
            0,
            [k * chunk_rows].as_ptr(),
            junk.len(),
            junk.as_ptr().cast(),
        )
    });
    assert!(r >= 0, "writing chunk {k} of {path}");
}

/// A damaged chunk is reported by the batch holding its rows: the batches
/// before it (whose reads decompressed it ahead) are returned whole and
/// exact.
#[test]
fn damaged_chunk_fails_the_batch_that_uses_it() {
    let n = 1_000u64;
    let want = rows(n);
    for batch in [100usize, 250, 333] {
        let (_d, f) = h5vec_file();
        let opts = SaveOptions::default().deflate(4).chunk_length(100);
        save_vector_with(&f, "v", &want, &opts).unwrap();
        damage_chunk(&f, "v/data/t/values", 5, 100);
        let mut r = VectorReader::<Row>::open(&f, "v", batch).unwrap();
        let mut start = 0u64;
        let bad = loop {
            let Some(b) = r.next() else {
                panic!("batch {batch}: no error")
            };
            match b {
                Ok(rows) => {
                    let end = start + rows.len() as u64;
                    assert_eq!(rows, want[start as usize..end as usize], "batch {batch}");
                    start = end;
                }
                Err(e) => break (start, e),
            }
        };
        // The failing batch is the one holding rows 500..600.
        let (s, e) = bad;
        assert!(
            s <= 500 && 500 < s + batch as u64,
            "batch {batch}: failed at {s}: {e}"
        );
        assert_eq!(e.path(), "$.t", "{e}");
        assert_eq!(e.location(), Some("/v/data/t/values"), "{e}");
        assert!(r.next().is_none());
        // A range that avoids the chunk reads fine; one that touches it fails.
        assert_eq!(load_range::<Row>(&f, "v", 0..500).unwrap(), want[..500]);
        assert_eq!(load_range::<Row>(&f, "v", 600..1000).unwrap(), want[600..]);
        assert!(load_range::<Row>(&f, "v", 550..551).is_err());
        assert!(load_vector::<Row>(&f, "v").is_err());
    }
}

/// Chunks never written (a dataset shrunk and grown again, so HDF5 would
/// hand back fill values) are an error on the batch holding them, also
/// when the read-ahead fetched them first.
#[test]
fn chunk_never_written_fails_the_batch_that_uses_it() {
    let n = 1_000u64;
    let want = rows(n);
    let (_d, f) = h5vec_file();
    let opts = SaveOptions::default().deflate(4).chunk_length(100);
    save_vector_with(&f, "v", &want, &opts).unwrap();
    let ds = f.dataset("v/data/id/values").unwrap();
    ds.resize(700).unwrap();
    ds.resize(1000).unwrap();
    let mut r = VectorReader::<Row>::open(&f, "v", 300).unwrap();
    for k in 0..2usize {
        assert_eq!(r.next().unwrap().unwrap(), want[k * 300..(k + 1) * 300]);
    }
    let e = r.next().unwrap().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Invalid(_)), "{e}");
    assert_eq!(e.path(), "$.id", "{e}");
    assert!(e.to_string().contains("rows 700..800"), "{e}");
    assert!(e.to_string().contains("never written"), "{e}");
}

/// Readers dropped in the middle of a read (the next batch being
/// decompressed on the worker threads), and their file closed: nothing is
/// left touching freed buffers, and later reads are exact.
#[test]
fn readers_dropped_mid_read_leave_nothing_behind() {
    let n = 20_000u64;
    let want = rows(n);
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("r.h5");
    {
        let f = h5vec::create_file(&path).unwrap();
        save_vector_with(
            &f,
            "v",
            &want,
            &SaveOptions::default().deflate(4).chunk_length(512),
        )
        .unwrap();
    }
    for i in 0..40usize {
        let f = File::open(&path).unwrap();
        let mut r = VectorReader::<Row>::open(&f, "v", 2_000 + i).unwrap();
        let first = r.next().unwrap().unwrap();
        assert_eq!(first, want[..first.len()]);
        drop(r);
        f.close().unwrap();
    }
    let f = File::open(&path).unwrap();
    assert_eq!(load_vector::<Row>(&f, "v").unwrap(), want);
}

/// Strings built ahead on the worker threads (`pipeline::ahead`: VLS strings
/// and list elements that are strings, for loads of 4,096 rows or more):
/// batches of many sizes, ranges and jumps return exactly the rows saved,
/// compressed or not, and readers dropped with jobs running leave nothing
/// behind.
#[test]
fn strings_built_ahead_are_the_rows_saved() {
    let n = 50_001u64;
    let want = rows(n);
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s.h5");
    {
        let f = h5vec::create_file(&path).unwrap();
        save_vector_with(&f, "plain", &want, &SaveOptions::default()).unwrap();
        let opts = SaveOptions::default().deflate(1).chunk_length(3_000);
        save_vector_with(&f, "deflate", &want, &opts).unwrap();
    }
    let f = File::open(&path).unwrap();
    for name in ["plain", "deflate"] {
        assert_eq!(load_vector::<Row>(&f, name).unwrap(), want, "{name}");
        for batch in [4_096usize, 5_000, 7_777, 65_536] {
            let got: Vec<Vec<Row>> = VectorReader::<Row>::open(&f, name, batch)
                .unwrap()
                .collect::<h5vec::Result<_>>()
                .unwrap();
            assert!(got.iter().rev().skip(1).all(|b| b.len() == batch));
            assert_eq!(got.concat(), want, "{name} batch {batch}");
        }
        for (s, e, batch) in [(10_000u64, 45_000u64, 6_000usize), (1, 50_000, 4_100)] {
            let got = VectorReader::<Row>::open_range(&f, name, s..e, batch)
                .unwrap()
                .collect::<h5vec::Result<Vec<_>>>()
                .unwrap()
                .concat();
            assert_eq!(got, want[s as usize..e as usize], "{name} {s}..{e}");
        }
        for r in [
            0..9_000,
            30_000..50_001,
            4_000..4_001,
            0..50_001,
            8_000..20_000,
        ] {
            let got = load_range::<Row>(&f, name, r.clone()).unwrap();
            assert_eq!(got, want[r.start as usize..r.end as usize], "{name} {r:?}");
        }
        for _ in 0..8 {
            let mut r = VectorReader::<Row>::open(&f, name, 5_000).unwrap();
            assert_eq!(r.next().unwrap().unwrap(), want[..5_000]);
            drop(r);
        }
    }
    drop(f);
    let f = File::open(&path).unwrap();
    let mut r = VectorReader::<Row>::open(&f, "deflate", 9_000).unwrap();
    assert_eq!(r.next().unwrap().unwrap(), want[..9_000]);
    f.close().unwrap();
    drop(r);
    let f = File::open(&path).unwrap();
    assert_eq!(load_vector::<Row>(&f, "plain").unwrap(), want);
}

/// Writes `bytes` at element `at` of the uint8 dataset `path`.
fn overwrite_bytes(f: &File, path: &str, at: usize, bytes: &[u8]) {
    let ds = f.dataset(path).unwrap();
    ds.write_slice(bytes, at..at + bytes.len()).unwrap();
}

/// A string that is not UTF-8 in rows built ahead is an error of the load
/// that returns its row, naming the row, and of no load before it.
#[test]
fn bad_utf8_built_ahead_fails_the_batch_that_uses_it() {
    let n = 30_000u64;
    let want = rows(n);
    let bad = 13_333u64;
    let (_d, f) = h5vec_file();
    save_vector_with(&f, "v", &want, &SaveOptions::default()).unwrap();
    save_vector_with(&f, "w", &want, &SaveOptions::default()).unwrap();
    // The VLS name of row `bad` (the only one starting `n13333-`): its first byte.
    let heap = f
        .dataset("v/data/name/heap")
        .unwrap()
        .read_raw::<u8>()
        .unwrap();
    let key = format!("n{bad}-");
    let at = heap
        .windows(key.len())
        .position(|w| w == key.as_bytes())
        .unwrap();
    overwrite_bytes(&f, "v/data/name/heap", at, &[0xFF]);
    // The first tag of the first row at or after `bad` that has tags.
    let list_offs = f
        .dataset("w/data/tags/OFFSETS")
        .unwrap()
        .read_raw::<u64>()
        .unwrap();
    let row = (bad..n)
        .find(|&i| list_offs[i as usize + 1] > list_offs[i as usize])
        .unwrap();
    let s = list_offs[row as usize];
    let str_offs = f
        .dataset("w/data/tags/VALUES/OFFSETS")
        .unwrap()
        .read_raw::<u64>()
        .unwrap();
    overwrite_bytes(
        &f,
        "w/data/tags/VALUES/CHARS",
        str_offs[s as usize] as usize,
        &[0xFF],
    );
    for (name, bad, field, elem) in [("v", bad, "$.name", bad), ("w", row, "$.tags", s)] {
        for batch in [4_096usize, 6_000, 10_000] {
            let mut r = VectorReader::<Row>::open(&f, name, batch).unwrap();
            let mut start = 0u64;
            let e = loop {
                match r.next().expect("an error before the end") {
                    Ok(rows) => {
                        let end = start + rows.len() as u64;
                        assert_eq!(rows, want[start as usize..end as usize]);
                        start = end;
                    }
                    Err(e) => break e,
                }
            };
            assert!(
                start <= bad && bad < start + batch as u64,
                "{name} batch {batch} at {start}"
            );
            let msg = e.to_string();
            assert!(msg.contains("not valid UTF-8"), "{msg}");
            assert!(e.path().starts_with(field), "{name}: {msg}");
            assert!(msg.contains(&format!("[{elem}]")), "{name}: {msg}");
        }
        assert_eq!(
            load_range::<Row>(&f, name, 0..bad).unwrap(),
            want[..bad as usize]
        );
        assert_eq!(
            load_range::<Row>(&f, name, bad + 1..n).unwrap(),
            want[bad as usize + 1..]
        );
        assert!(load_vector::<Row>(&f, name).is_err());
    }
}

/// Readers stay `Send` and `Sync` with strings built ahead (their jobs'
/// channels and slots are owned by the decoders).
#[test]
fn readers_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<VectorReader<Row>>();
}
