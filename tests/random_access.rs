//! Reading a few rows of compressed vectors: `load_range` and
//! `VectorReader` over ranges that start and end inside chunks, which h5vec
//! decompresses itself (SPEC.md section 6), against the rows saved.

use h5vec::{
    load_range, load_vector, save_vector_with, Compression, H5Vector, SaveOptions, VectorReader,
};
use h5vec_tests::{h5vec_file, mix};

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Row {
    id: u64,
    t: f64,
    pos: [f32; 3],
    #[h5vec(vls)]
    name: String,
    tags: Vec<String>,
    vals: Vec<f32>,
    /// Random bits: deflate cannot shrink their chunks, which are stored
    /// with the deflate filter skipped.
    noise: u64,
}

fn rows(n: u64) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: i,
            t: i as f64 * 0.25,
            pos: [i as f32, -(i as f32), 0.5],
            name: format!("name-{}", "x".repeat((i % 13) as usize)),
            tags: (0..i % 4).map(|k| format!("t{k}")).collect(),
            vals: (0..i % 6).map(|k| (i * 10 + k) as f32).collect(),
            noise: mix(i),
        })
        .collect()
}

/// Ranges inside one chunk, across one boundary, over several chunks with
/// partial ends, at both ends of the vector, and empty.
fn ranges(n: u64, c: u64) -> Vec<std::ops::Range<u64>> {
    let mut out = vec![0..0, 0..1, 0..n, n - 1..n, n..n, 1..n - 1];
    for s in [1, c - 1, c, c + 3, 3 * c - 2, n - c - 5, n - 7] {
        for len in [1, 2, c - 1, c, c + 1, 2 * c + 5] {
            if s + len <= n {
                out.push(s..s + len);
            }
        }
    }
    out
}

#[test]
fn ranges_of_deflated_vectors_load_exactly() {
    let (_d, f) = h5vec_file();
    let n = 1_000;
    let v = rows(n);
    for (name, opts) in [
        (
            "shuffled",
            SaveOptions::default().deflate(4).chunk_length(64),
        ),
        (
            "plain",
            SaveOptions::default()
                .compression(Compression::Deflate {
                    level: 1,
                    shuffle: false,
                })
                .chunk_length(50),
        ),
    ] {
        save_vector_with(&f, name, &v, &opts).unwrap();
        // The datasets really are deflated and chunked as asked.
        let ds = f.dataset(&format!("{name}/data/id/values")).unwrap();
        assert!(!ds.filters().is_empty(), "{name}");
        let c = ds.chunk().unwrap()[0] as u64;
        for r in ranges(n, c) {
            let got: Vec<Row> = load_range(&f, name, r.clone()).unwrap();
            assert_eq!(got, &v[r.start as usize..r.end as usize], "{name} {r:?}");
        }
        // Batches that never line up with the chunks.
        for batch in [1, 37, 129] {
            let mut all = Vec::new();
            for b in VectorReader::<Row>::open(&f, name, batch).unwrap() {
                all.extend(b.unwrap());
            }
            assert_eq!(all, v, "{name} batches of {batch}");
        }
    }
}

/// Numbers of every width, for Blosc chunks of several blocks.
#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Wide {
    id: u64,
    t: f64,
    small: u8,
    half: i16,
    flag: bool,
    pos: [f32; 3],
}

/// A range of rows inside a Blosc chunk decompresses only the blocks
/// holding it (`blosc_getitem`): every range (inside a block, across
/// blocks and chunks, at the ends) loads exactly, for every shuffle, type
/// size and a checksum; a damaged chunk is the same error as a whole load.
#[test]
fn ranges_of_blosc_vectors_load_exactly() {
    use h5vec::{BloscCompressor as C, BloscShuffle as S};
    let (_d, f) = h5vec_file();
    let n = 150_000u64;
    let v: Vec<Wide> = (0..n)
        .map(|i| Wide {
            id: mix(i),
            t: i as f64 * 0.5,
            small: (i % 251) as u8,
            half: (mix(i) % 2000) as i16 - 1000,
            flag: mix(i).is_multiple_of(3),
            pos: [i as f32, -(i as f32), (i % 7) as f32],
        })
        .collect();
    for (name, opts) in [
        (
            "bit",
            SaveOptions::default().compression(Compression::blosc(C::Zstd, 1, S::Bit)),
        ),
        (
            "byte",
            SaveOptions::default().compression(Compression::blosc(C::Lz4, 5, S::Byte)),
        ),
        (
            "none",
            SaveOptions::default().compression(Compression::blosc(C::BloscLz, 3, S::None)),
        ),
        (
            "checked",
            SaveOptions::default()
                .compression(Compression::blosc(C::Zstd, 1, S::Bit))
                .checksum(true),
        ),
    ] {
        save_vector_with(&f, name, &v, &opts.chunk_length(65_536)).unwrap();
        let c = 65_536;
        let mut rs = ranges(n, c);
        // Inside one chunk at block-sized strides, and single rows.
        for s in [5, 4_095, 4_096, 8_191, 16_384, 40_000, 65_535, 70_001] {
            for len in [1, 3, 511, 4_096, 9_000] {
                rs.push(s..(s + len).min(n));
            }
        }
        for r in rs {
            let got: Vec<Wide> = load_range(&f, name, r.clone()).unwrap();
            assert_eq!(got, &v[r.start as usize..r.end as usize], "{name} {r:?}");
        }
        let all: Vec<Wide> = load_vector(&f, name).unwrap();
        assert_eq!(all, v, "{name}");
    }
}

/// Chunks HDF5's own pipeline wrote (the partial chunks of appends) read
/// the same as h5vec's.
#[test]
fn ranges_over_appended_chunks_load_exactly() {
    let (_d, f) = h5vec_file();
    let v = rows(1_013);
    let opts = SaveOptions::default().deflate(4).chunk_length(64);
    save_vector_with(&f, "a", &v[..100], &opts).unwrap();
    let mut at = 100;
    for k in 0..10usize {
        let end = (at + 13 + k * 17).min(v.len());
        h5vec::append_vector_with(&f, "a", &v[at..end], &opts).unwrap();
        at = end;
    }
    h5vec::append_vector_with(&f, "a", &v[at..], &opts).unwrap();
    assert_eq!(load_vector::<Row>(&f, "a").unwrap(), v);
    for r in ranges(v.len() as u64, 64) {
        let got: Vec<Row> = load_range(&f, "a", r.clone()).unwrap();
        assert_eq!(got, &v[r.start as usize..r.end as usize], "{r:?}");
    }
}

/// Rows in a compressed chunk that was never written are an error naming
/// the rows and the dataset, whichever end of a range they are at.
#[test]
fn rows_in_an_unwritten_compressed_chunk_are_an_error() {
    let (_d, f) = h5vec_file();
    let vals: Vec<u32> = (0..12).collect();
    let opts = SaveOptions::default().deflate(4).chunk_length(4);
    save_vector_with(&f, "v", &vals, &opts).unwrap();
    // The same dataset again, deflated in chunks of 4 rows, rows 4..8 never written.
    let data = f.group("v/data").unwrap();
    data.unlink("values").unwrap();
    let ds = data
        .new_dataset_builder()
        .chunk(4)
        .deflate(4)
        .empty::<u32>()
        .shape(12)
        .create("values")
        .unwrap();
    ds.write_slice(&vals[..4], 0..4).unwrap();
    ds.write_slice(&vals[8..], 8..12).unwrap();
    for range in [0..12u64, 5..12, 1..6, 5..7, 3..5] {
        let e = load_range::<u32>(&f, "v", range.clone()).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.location(), Some("/v/data/values"), "{range:?}: {msg}");
        assert!(
            msg.contains("rows 4..8 are in a chunk that was never written"),
            "{range:?}: {msg}"
        );
    }
    assert_eq!(load_range::<u32>(&f, "v", 1..3).unwrap(), [1, 2]);
    assert_eq!(load_range::<u32>(&f, "v", 8..11).unwrap(), [8, 9, 10]);
}
