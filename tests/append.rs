//! Appends, range reads, column reads, streaming and replacement (SPEC.md
//! section 8).

use std::collections::BTreeMap;

use h5vec::hdf5::File;
use h5vec::{
    append_vector, load_column, load_range, load_vector, save_vector, save_vector_with, vector_len,
    H5Vector, SaveOptions, VectorReader, VectorWriter,
};

#[derive(H5Vector, Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
struct Stamp {
    weeks: i32,
    microseconds: i64,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Unit;

#[repr(u8)]
#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
enum Level {
    Low = 1,
    High = 200,
}

/// One field of every kind.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct All {
    timestamp: Stamp,
    temperature: f64,
    flag: bool,
    letter: char,
    level: Level,
    position: [f32; 3],
    unit: Unit,
    label: String,
    #[h5vec(vls)]
    vls: String,
    #[h5vec(vls)]
    vls_opt: Option<String>,
    #[h5vec(blob)]
    blob: BTreeMap<String, u32>,
    #[h5vec(json)]
    json: Vec<Stamp>,
    tags: Vec<String>,
    nested: Vec<Vec<u16>>,
    maybe: Option<Stamp>,
    maybe_list: Option<Vec<f32>>,
    maybe_str: Option<String>,
}

fn all(i: u32) -> All {
    All {
        timestamp: Stamp {
            weeks: i as i32,
            microseconds: -(i as i64) * 7,
        },
        temperature: f64::from(i) / 4.0,
        flag: i.is_multiple_of(3),
        letter: char::from_u32(0x41 + i % 26).unwrap(),
        level: if i.is_multiple_of(2) {
            Level::Low
        } else {
            Level::High
        },
        position: [i as f32, 0.5, -1.0],
        unit: Unit,
        label: format!("label {i}"),
        vls: "é".repeat((i % 4) as usize),
        vls_opt: if i.is_multiple_of(5) {
            None
        } else {
            Some(format!("v{}", i % 3))
        },
        blob: (0..i % 3).map(|k| (format!("k{k}"), k * i)).collect(),
        json: vec![
            Stamp {
                weeks: 1,
                microseconds: i.into()
            };
            (i % 2) as usize
        ],
        tags: (0..i % 4).map(|k| format!("t{k}")).collect(),
        nested: vec![vec![i as u16; (i % 3) as usize]; (i % 2) as usize],
        maybe: (i % 4 != 1).then_some(Stamp {
            weeks: 2,
            microseconds: 3,
        }),
        maybe_list: (i % 3 != 2).then(|| vec![1.0; (i % 2) as usize]),
        maybe_str: i.is_multiple_of(2).then(|| format!("s{i}")),
    }
}

fn tmp() -> (tempfile::TempDir, File) {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("a.h5")).unwrap();
    (dir, f)
}

#[test]
fn save_plus_appends_equals_one_save() {
    let (_d, f) = tmp();
    let rows: Vec<All> = (0..300).map(all).collect();
    save_vector(&f, "one", &rows).unwrap();
    save_vector(&f, "parts", &rows[..10]).unwrap();
    append_vector(&f, "parts", &rows[10..10]).unwrap();
    append_vector(&f, "parts", &rows[10..150]).unwrap();
    append_vector(&f, "parts", &rows[150..]).unwrap();
    let a: Vec<All> = load_vector(&f, "one").unwrap();
    let b: Vec<All> = load_vector(&f, "parts").unwrap();
    assert_eq!(a, rows);
    assert_eq!(b, rows);
    assert_eq!(vector_len(&f, "parts").unwrap(), 300);
    // Append to an empty vector.
    save_vector::<All>(&f, "empty", &[]).unwrap();
    append_vector(&f, "empty", &rows[..3]).unwrap();
    assert_eq!(load_vector::<All>(&f, "empty").unwrap(), rows[..3]);
}

#[test]
fn append_with_wrong_type_changes_nothing() {
    let (_d, f) = tmp();
    save_vector(&f, "v", &[1.5f64, 2.5]).unwrap();
    let e = append_vector(&f, "v", &[1i32]).unwrap_err();
    assert!(e.to_string().contains("Int32"), "{e}");
    let e = append_vector(&f, "v", &[Stamp::default()]).unwrap_err();
    assert!(e.to_string().contains("record"), "{e}");
    assert_eq!(load_vector::<f64>(&f, "v").unwrap(), [1.5, 2.5]);
    assert_eq!(f.dataset("v/data/values").unwrap().shape(), vec![2]);
}

#[test]
fn ranges_equal_slices() {
    let (_d, f) = tmp();
    let rows: Vec<All> = (0..200).map(all).collect();
    save_vector_with(&f, "v", &rows, &SaveOptions::default().chunk_length(16)).unwrap();
    for (a, b) in [
        (0, 0),
        (0, 200),
        (17, 18),
        (15, 33),
        (199, 200),
        (200, 200),
        (64, 128),
    ] {
        let got: Vec<All> = load_range(&f, "v", a..b).unwrap();
        assert_eq!(got, rows[a as usize..b as usize], "range {a}..{b}");
    }
    let e = load_range::<All>(&f, "v", 150..201).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
    #[allow(clippy::reversed_empty_ranges)] // an inverted range is the input under test
    let e = load_range::<All>(&f, "v", 5..4).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
}

#[test]
fn column_reads() {
    let (_d, f) = tmp();
    let rows: Vec<All> = (0..50).map(all).collect();
    save_vector(&f, "v", &rows).unwrap();
    let weeks: Vec<i32> = load_column(&f, "v", "timestamp.weeks").unwrap();
    assert_eq!(
        weeks,
        rows.iter().map(|r| r.timestamp.weeks).collect::<Vec<_>>()
    );
    let tags: Vec<Vec<String>> = load_column(&f, "v", "tags").unwrap();
    assert_eq!(
        tags,
        rows.iter().map(|r| r.tags.clone()).collect::<Vec<_>>()
    );
    let stamps: Vec<Stamp> = load_column(&f, "v", "timestamp").unwrap();
    assert_eq!(stamps[7], rows[7].timestamp);
    let e = load_column::<i32>(&f, "v", "timestamp.days").unwrap_err();
    assert_eq!(e.path(), "$.timestamp");
    let e = load_column::<i64>(&f, "v", "timestamp.weeks").unwrap_err();
    assert_eq!(e.path(), "$.timestamp.weeks");
}

#[test]
fn streaming_writer_and_reader() {
    let (_d, f) = tmp();
    let opts = SaveOptions::default().chunk_length(100);
    let mut w = VectorWriter::<All>::create(&f, "s", &opts).unwrap();
    let per_commit = 100 * h5vec::COMMIT_BATCHES as u64;
    for i in 0..2500 {
        w.push(&all(i)).unwrap();
        // Batches are written as they fill; rows are committed every
        // COMMIT_BATCHES batches.
        assert_eq!(w.len(), (u64::from(i) + 1) / per_commit * per_commit);
        // Nothing is linked before the first commit.
        if w.is_empty() {
            assert!(!f.link_exists("s"));
        }
    }
    assert_eq!(w.len(), 1600);
    // The vector is linked at its first commit, with the committed rows.
    assert_eq!(vector_len(&f, "s").unwrap(), 1600);
    // An explicit flush commits what was pushed.
    w.flush().unwrap();
    assert_eq!(w.len(), 2500);
    assert_eq!(vector_len(&f, "s").unwrap(), 2500);
    assert_eq!(w.finish().unwrap(), 2500);
    assert_eq!(vector_len(&f, "s").unwrap(), 2500);
    let mut seen = 0u32;
    for batch in VectorReader::<All>::open(&f, "s", 700).unwrap() {
        let batch = batch.unwrap();
        assert!(batch.len() <= 700);
        for r in batch {
            assert_eq!(r, all(seen));
            seen += 1;
        }
    }
    assert_eq!(seen, 2500);
    // Appending through a writer.
    let mut w = VectorWriter::<All>::open_append(&f, "s", &opts).unwrap();
    w.extend(&[all(2500), all(2501)]).unwrap();
    assert_eq!(w.finish().unwrap(), 2502);
    assert_eq!(
        load_range::<All>(&f, "s", 2499..2502).unwrap(),
        vec![all(2499), all(2500), all(2501)]
    );
}

#[test]
fn replace_keeps_old_until_done() {
    let (_d, f) = tmp();
    save_vector(&f, "v", &[1u8, 2, 3]).unwrap();
    let e = save_vector(&f, "v", &[9u8]).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
    // A failing replacement leaves the old vector.
    let bad = vec!["ok".to_string(), "nul\0".to_string()];
    assert!(save_vector_with(&f, "v", &bad, &SaveOptions::default().replace(true)).is_err());
    assert_eq!(load_vector::<u8>(&f, "v").unwrap(), [1, 2, 3]);
    save_vector_with(
        &f,
        "v",
        &["new".to_string()],
        &SaveOptions::default().replace(true),
    )
    .unwrap();
    assert_eq!(load_vector::<String>(&f, "v").unwrap(), ["new"]);
    let names = f.member_names().unwrap();
    assert_eq!(names, ["v"]);
}

#[test]
fn stale_tails_are_ignored_then_trimmed() {
    let (_d, f) = tmp();
    let rows: Vec<All> = (0..40).map(all).collect();
    save_vector(&f, "v", &rows).unwrap();
    append_vector(&f, "v", &rows[..5]).unwrap();
    // Simulate a crash after the data of an append but before its count.
    f.dataset("v/metadata/count")
        .unwrap()
        .write_scalar(&40i64)
        .unwrap();
    assert_eq!(load_vector::<All>(&f, "v").unwrap(), rows);
    append_vector(&f, "v", &rows[..2]).unwrap();
    let mut want = rows.clone();
    want.extend_from_slice(&rows[..2]);
    assert_eq!(load_vector::<All>(&f, "v").unwrap(), want);
    assert_eq!(
        f.dataset("v/data/temperature/values").unwrap().shape(),
        vec![42]
    );
    assert_eq!(f.dataset("v/data/tags/OFFSETS").unwrap().shape(), vec![43]);
    f.dataset("v/metadata/count")
        .unwrap()
        .write_scalar(&41i64)
        .unwrap();
    h5vec::repair::<All>(&f, "v").unwrap();
    assert_eq!(
        f.dataset("v/data/temperature/values").unwrap().shape(),
        vec![41]
    );
    assert_eq!(load_vector::<All>(&f, "v").unwrap(), want[..41]);
}

/// Options whose datasets take each write path: HDF5's own (contiguous
/// chunks of one row are still chunked; small chunks), direct unfiltered
/// chunks, and deferred deflate with and without shuffle.
fn write_paths() -> Vec<(&'static str, SaveOptions)> {
    vec![
        ("default", SaveOptions::default()),
        ("chunk 7", SaveOptions::default().chunk_length(7)),
        (
            "chunk 7 deflate 3",
            SaveOptions::default().chunk_length(7).deflate(3),
        ),
        (
            "chunk 5 deflate 1 no shuffle",
            SaveOptions::default()
                .chunk_length(5)
                .compression(h5vec::Compression::Deflate {
                    level: 1,
                    shuffle: false,
                }),
        ),
    ]
}

/// Saves, appends of sizes that end inside chunks, and a streaming writer
/// whose batches commit mid-chunk all equal one save; every dataset also
/// reads back through HDF5's own filter pipeline (the chunks h5vec wrote
/// itself are whole and valid).
#[test]
fn appends_on_every_write_path_equal_one_save() {
    for (what, opts) in write_paths() {
        let (_d, f) = tmp();
        let rows: Vec<All> = (0..123).map(all).collect();
        save_vector_with(&f, "one", &rows, &opts).unwrap();
        save_vector_with(&f, "parts", &rows[..3], &opts).unwrap();
        h5vec::append_vector_with(&f, "parts", &rows[3..4], &opts).unwrap();
        h5vec::append_vector_with(&f, "parts", &rows[4..50], &opts).unwrap();
        let mut w = VectorWriter::<All>::open_append(&f, "parts", &opts).unwrap();
        for (i, r) in rows[50..].iter().enumerate() {
            w.push(r).unwrap();
            if i % 17 == 16 {
                w.flush().unwrap();
                assert_eq!(w.len(), 50 + i as u64 + 1, "{what}");
                let got: Vec<All> = load_vector(&f, "parts").unwrap();
                assert_eq!(got, rows[..51 + i], "{what}: committed rows");
            }
        }
        assert_eq!(w.finish().unwrap(), 123, "{what}");
        for name in ["one", "parts"] {
            let got: Vec<All> = load_vector(&f, name).unwrap();
            assert_eq!(got, rows, "{what}: {name}");
            let t: Vec<f64> = f
                .dataset(&format!("{name}/data/temperature/values"))
                .unwrap()
                .read_raw()
                .unwrap();
            let want: Vec<f64> = rows.iter().map(|r| r.temperature).collect();
            assert_eq!(t, want, "{what}: {name} through HDF5's pipeline");
            let v: Vec<f32> = f
                .dataset(&format!("{name}/data/maybe_list/VALUES"))
                .unwrap()
                .read_raw()
                .unwrap();
            let want: Vec<f32> = rows
                .iter()
                .flat_map(|r| r.maybe_list.clone().unwrap_or_default())
                .collect();
            assert_eq!(v, want, "{what}: {name} list values through HDF5");
        }
    }
}

/// A crash between an append's data and its `count` leaves stale rows in
/// the chunk that `count` ends in; the next append rewrites that chunk.
#[test]
fn stale_tails_in_compressed_chunks_are_rewritten() {
    let (_d, f) = tmp();
    let opts = SaveOptions::default().chunk_length(4).deflate(5);
    let rows: Vec<All> = (0..41).map(all).collect();
    save_vector_with(&f, "v", &rows[..38], &opts).unwrap();
    h5vec::append_vector_with(&f, "v", &rows[30..36], &opts).unwrap();
    f.dataset("v/metadata/count")
        .unwrap()
        .write_scalar(&38i64)
        .unwrap();
    assert_eq!(load_vector::<All>(&f, "v").unwrap(), rows[..38]);
    h5vec::append_vector_with(&f, "v", &rows[38..], &opts).unwrap();
    assert_eq!(load_vector::<All>(&f, "v").unwrap(), rows);
    let t: Vec<f64> = f
        .dataset("v/data/temperature/values")
        .unwrap()
        .read_raw()
        .unwrap();
    assert_eq!(t, rows.iter().map(|r| r.temperature).collect::<Vec<_>>());
}

/// Random sequences of saves, appends, streaming writes with commits at
/// random points, and reopening of the file, on every write path: the
/// vector always loads as the concatenation of what was committed.
#[test]
fn random_write_sequences_on_every_path() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n.max(1)
    };
    let dir = tempfile::tempdir().unwrap();
    for case in 0..24 {
        let chunk = [1usize, 2, 3, 5, 8, 64][rnd(6) as usize];
        let opts = match rnd(4) {
            0 => SaveOptions::default().chunk_length(chunk),
            1 => SaveOptions::default().chunk_length(chunk).deflate(1),
            2 => SaveOptions::default().chunk_length(chunk).compression(
                h5vec::Compression::Deflate {
                    level: 6,
                    shuffle: false,
                },
            ),
            _ => SaveOptions::default()
                .chunk_length(chunk)
                .compression(h5vec::Compression::Lzf),
        };
        let path = dir.path().join(format!("r{case}.h5"));
        let mut want: Vec<All> = (0..rnd(20) as u32).map(all).collect();
        save_vector_with(&File::create(&path).unwrap(), "v", &want, &opts).unwrap();
        let mut f = File::open_rw(&path).unwrap();
        for _ in 0..6 {
            let start = want.len() as u32;
            match rnd(3) {
                0 => {
                    let add: Vec<All> = (start..start + rnd(30) as u32).map(all).collect();
                    h5vec::append_vector_with(&f, "v", &add, &opts).unwrap();
                    want.extend(add);
                }
                1 => {
                    let mut w = VectorWriter::<All>::open_append(&f, "v", &opts).unwrap();
                    for i in start..start + rnd(200) as u32 {
                        w.push(&all(i)).unwrap();
                        want.push(all(i));
                        if rnd(40) == 0 {
                            w.flush().unwrap();
                        }
                    }
                    w.finish().unwrap();
                }
                _ => {
                    drop(f);
                    f = File::open_rw(&path).unwrap();
                }
            }
            let got: Vec<All> = load_vector(&f, "v").unwrap();
            assert_eq!(got.len(), want.len(), "case {case}");
            assert_eq!(got, want, "case {case} ({opts:?})");
        }
        let t: Vec<f64> = f
            .dataset("v/data/temperature/values")
            .unwrap()
            .read_raw()
            .unwrap();
        let expect: Vec<f64> = want.iter().map(|r| r.temperature).collect();
        assert_eq!(t, expect, "case {case}: through HDF5's pipeline");
    }
}

/// `(address, stored size, filter mask)` of every chunk of `path`.
fn chunks(f: &File, path: &str) -> Vec<(u64, u64, u32)> {
    let ds = f.dataset(path).unwrap();
    (0..ds.num_chunks().unwrap())
        .map(|i| {
            let c = ds.chunk_info(i).unwrap();
            (c.addr, c.size, c.filter_mask)
        })
        .collect()
}

/// SPEC section 8: an append stores the partly filled last chunk of a
/// deflated dataset uncompressed inside its deflate stream: 2 bytes (zlib
/// header), 5 (one stored block), the chunk's bytes and 4 (Adler-32), filter
/// mask 0. Appends that leave it partly filled rewrite it at the same address
/// with the same size; the append that fills it compresses it. A save (and
/// a streaming writer of a new vector) compresses partial chunks. The same
/// in a file of `h5vec::create_file` (which never reuses freed space: there
/// an append that moved the chunk would leave the old copy behind).
#[test]
fn partial_deflated_chunks_stay_in_place() {
    let (_d, f) = tmp();
    let opts = SaveOptions::default().chunk_length(1024).deflate(4);
    let vals: Vec<u64> = (0..2500).map(|i| i * 3).collect();
    let path = "v/data/values";
    let stored = 2 + 5 + 1024 * 8 + 4;
    let compressed = |c: &(u64, u64, u32)| c.1 < stored / 4 && c.2 == 0;
    save_vector_with(&f, "v", &vals[..100], &opts).unwrap();
    let saved = chunks(&f, path);
    assert!(saved.len() == 1 && compressed(&saved[0]), "{saved:?}");
    // Still partly filled: the stored form, then the same place and size.
    append_vector(&f, "v", &vals[100..300]).unwrap();
    let first = chunks(&f, path);
    assert_eq!((first.len(), first[0].1, first[0].2), (1, stored, 0));
    append_vector(&f, "v", &vals[300..700]).unwrap();
    assert_eq!(chunks(&f, path), first);
    // A streaming writer that commits inside the chunk.
    let mut w = VectorWriter::<u64>::open_append(&f, "v", &opts).unwrap();
    w.extend(&vals[700..800]).unwrap();
    w.flush().unwrap();
    assert_eq!(chunks(&f, path), first);
    w.extend(&vals[800..900]).unwrap();
    assert_eq!(w.finish().unwrap(), 900);
    assert_eq!(chunks(&f, path), first);
    // Filled: chunks 0 and 1 compressed, chunk 2 (452 rows) stored.
    append_vector(&f, "v", &vals[900..]).unwrap();
    let c = chunks(&f, path);
    assert_eq!(c.len(), 3);
    assert!(compressed(&c[0]) && compressed(&c[1]), "{c:?}");
    assert_eq!((c[2].1, c[2].2), (stored, 0));
    assert_eq!(load_vector::<u64>(&f, "v").unwrap(), vals);
    let through_hdf5: Vec<u64> = f.dataset(path).unwrap().read_raw().unwrap();
    assert_eq!(through_hdf5, vals);

    // A new vector written by a streaming writer that commits mid-chunk
    // (anonymous until `finish` links it).
    let mut w = VectorWriter::<u64>::create(&f, "w", &opts).unwrap();
    w.extend(&vals[..100]).unwrap();
    w.flush().unwrap();
    w.extend(&vals[100..200]).unwrap();
    w.finish().unwrap();
    assert!(compressed(&chunks(&f, "w/data/values")[0]));
    assert_eq!(load_vector::<u64>(&f, "w").unwrap(), vals[..200]);

    let dir = tempfile::tempdir().unwrap();
    let g = h5vec::create_file(dir.path().join("c.h5")).unwrap();
    save_vector_with(&g, "v", &vals[..100], &opts).unwrap();
    assert!(compressed(&chunks(&g, path)[0]));
    append_vector(&g, "v", &vals[100..300]).unwrap();
    let first = chunks(&g, path);
    assert_eq!((first[0].1, first[0].2), (stored, 0));
    let size = std::fs::metadata(dir.path().join("c.h5")).unwrap().len();
    for k in 0..20 {
        append_vector(&g, "v", &vals[300 + k * 10..310 + k * 10]).unwrap();
    }
    assert_eq!(chunks(&g, path), first);
    let grown = std::fs::metadata(dir.path().join("c.h5")).unwrap().len() - size;
    assert!(
        grown < stored,
        "20 small appends grew the file by {grown} bytes"
    );
    append_vector(&g, "v", &vals[500..]).unwrap();
    let c = chunks(&g, path);
    assert!(compressed(&c[0]) && compressed(&c[1]), "{c:?}");
    assert_eq!((c[2].1, c[2].2), (stored, 0));
    assert_eq!(load_vector::<u64>(&g, "v").unwrap(), vals);
}

/// A chunk whose rows do not compress keeps the stored form when an
/// append fills it (HDF5 would otherwise get a chunk skipped by deflate
/// under an index entry that says it is deflated, if it landed in place).
#[test]
fn incompressible_partial_chunks_keep_the_stored_form() {
    let (_d, f) = tmp();
    let opts = SaveOptions::default().chunk_length(4096).deflate(4);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let vals: Vec<u64> = (0..5000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    let path = "v/data/values";
    let stored = 2 + 5 + 4096 * 8 + 4;
    save_vector_with(&f, "v", &vals[..10], &opts).unwrap();
    append_vector(&f, "v", &vals[10..20]).unwrap();
    let first = chunks(&f, path);
    assert_eq!((first[0].1, first[0].2), (stored, 0));
    append_vector(&f, "v", &vals[20..]).unwrap();
    let c = chunks(&f, path);
    assert_eq!(
        c[0], first[0],
        "filled, incompressible: stays as it was stored"
    );
    assert_eq!((c[1].1, c[1].2), (stored, 0));
    assert_eq!(load_vector::<u64>(&f, "v").unwrap(), vals);
    let through_hdf5: Vec<u64> = f.dataset(path).unwrap().read_raw().unwrap();
    assert_eq!(through_hdf5, vals);
}

/// The global heap collections (address, bytes) that the variable-length
/// strings of `path` (a 1-D unfiltered dataset) point into, read from the
/// file on disk: a heap reference is a 4-byte length, an 8-byte collection
/// address and a 4-byte index; a collection starts with `GCOL`, version,
/// 3 reserved bytes and its 8-byte size.
fn collections(file: &std::path::Path, f: &File, path: &str) -> Vec<(u64, Vec<u8>)> {
    f.flush().unwrap();
    let bytes = std::fs::read(file).unwrap();
    let ds = f.dataset(path).unwrap();
    let spans: Vec<(u64, u64)> = match ds.num_chunks() {
        Some(n) => (0..n)
            .map(|i| ds.chunk_info(i).unwrap())
            .map(|c| (c.addr, c.size))
            .collect(),
        None => vec![(ds.offset().unwrap(), ds.storage_size())],
    };
    let mut addrs = std::collections::BTreeSet::new();
    for (a, n) in spans {
        for r in bytes[a as usize..(a + n) as usize].chunks_exact(16) {
            if u32::from_le_bytes(r[..4].try_into().unwrap()) > 0 {
                addrs.insert(u64::from_le_bytes(r[4..12].try_into().unwrap()));
            }
        }
    }
    addrs
        .into_iter()
        .map(|a| {
            let h = &bytes[a as usize..a as usize + 16];
            assert_eq!(&h[..4], b"GCOL", "collection at {a}");
            let size = u64::from_le_bytes(h[8..16].try_into().unwrap());
            (a, bytes[a as usize..(a + size) as usize].to_vec())
        })
        .collect()
}

/// SPEC section 8: saves and appends put their strings into new global
/// heap collections, in files of `File::create` as in those of
/// `h5vec::create_file`: a collection holding committed strings (of a
/// string field or of the schema's `field_names`) keeps its bytes, so a
/// kill cannot tear it.
#[test]
fn committed_string_collections_keep_their_bytes() {
    for ours in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.h5");
        let f = if ours {
            h5vec::create_file(&path).unwrap()
        } else {
            File::create(&path).unwrap()
        };
        let opts = SaveOptions::default().chunk_length(1000);
        let rows: Vec<All> = (0..400).map(all).collect();
        save_vector_with(&f, "a", &rows[..300], &opts).unwrap();
        let watched = ["a/data/label/values", "a/metadata/schema/field_names"];
        let before: Vec<_> = watched.iter().map(|p| collections(&path, &f, p)).collect();
        assert!(before.iter().all(|c| !c.is_empty()));
        // A streaming writer commits (its new vector, not linked until it
        // finishes, keeps the cache as it is meanwhile: see SPEC).
        let mut w = VectorWriter::<All>::create(&f, "w", &opts).unwrap();
        w.extend(&rows[..50]).unwrap();
        w.flush().unwrap();
        w.extend(&rows[50..]).unwrap();
        w.finish().unwrap();
        save_vector_with(&f, "b", &rows, &opts).unwrap();
        append_vector(&f, "a", &rows[300..350]).unwrap();
        let mut w = VectorWriter::<All>::open_append(&f, "a", &opts).unwrap();
        w.extend(&rows[350..370]).unwrap();
        w.flush().unwrap();
        w.extend(&rows[370..]).unwrap();
        w.finish().unwrap();
        let after: Vec<_> = watched.iter().map(|p| collections(&path, &f, p)).collect();
        for (i, p) in watched.iter().enumerate() {
            for (a, old) in &before[i] {
                let now = &after[i].iter().find(|(b, _)| b == a).unwrap().1;
                assert!(
                    now == old,
                    "ours={ours}: {p}: the collection at {a} was rewritten"
                );
            }
        }
        for name in ["a", "b", "w"] {
            assert_eq!(
                load_vector::<All>(&f, name).unwrap(),
                rows,
                "ours={ours}: {name}"
            );
        }
    }
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Labelled {
    id: u32,
    name: String,
    #[h5vec(vls)]
    note: String,
}

fn labelled(from: u32, to: u32) -> Vec<Labelled> {
    (from..to)
        .map(|i| Labelled {
            id: i,
            name: format!("n{i}"),
            note: format!("note {i}"),
        })
        .collect()
}

/// HDF5 objects open in the file of `f` (the file itself included).
fn objects_open_in(f: &File) -> isize {
    use hdf5_sys::h5f::{H5Fget_obj_count, H5F_OBJ_ALL};
    let id = f.id();
    // SAFETY: a valid file id; the count covers that file's objects only.
    h5vec::hdf5::sync::sync(|| unsafe { H5Fget_obj_count(id, H5F_OBJ_ALL) })
}

/// An append that fails half way (rows of every column already written,
/// some committed, then a string HDF5 cannot hold) leaves nothing of the
/// file open once the writer and the file are dropped: the same path opens
/// read-write again as a fresh file, the vector has the committed rows,
/// and the next append works.
#[test]
fn a_failed_append_leaves_nothing_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.h5");
    let opts = SaveOptions::default().chunk_length(4).deflate(1);
    {
        let f = File::create(&path).unwrap();
        save_vector_with(&f, "v", &labelled(0, 10), &opts).unwrap();
    }
    {
        let f = File::open_rw(&path).unwrap();
        let mut w = VectorWriter::<Labelled>::open_append(&f, "v", &opts).unwrap();
        w.extend(&labelled(10, 30)).unwrap();
        w.flush().unwrap();
        w.extend(&labelled(30, 50)).unwrap();
        let mut bad = labelled(50, 51).remove(0);
        bad.name = "a\0b".into();
        let e = w.push(&bad).unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
        drop(w);
        assert_eq!(objects_open_in(&f), 1, "only the file itself is open");
    }
    let f = File::open_rw(&path).unwrap();
    assert_eq!(objects_open_in(&f), 1, "a fresh file, not a stale one");
    assert_eq!(load_vector::<Labelled>(&f, "v").unwrap(), labelled(0, 30));
    append_vector(&f, "v", &labelled(30, 40)).unwrap();
    assert_eq!(load_vector::<Labelled>(&f, "v").unwrap(), labelled(0, 40));
}
