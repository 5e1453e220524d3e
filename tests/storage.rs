//! Storage control (issue 6): per-field chunking and compression, per-role
//! compression, LZF, and what the datasets end up with.

use h5vec::hdf5::filters::Filter;
use h5vec::hdf5::File;
use h5vec::{load_vector, save_vector_with, Compression, DatasetRole, H5Vector, SaveOptions};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Tuned {
    #[h5vec(chunk_length = 100, deflate = 7)]
    big: f64,
    #[h5vec(no_compression)]
    raw: u32,
    #[h5vec(lzf)]
    fast: [i16; 2],
    #[h5vec(vls, chunk_length = 50)]
    name: String,
    tags: Vec<String>,
    plain: i8,
}

fn rows(n: usize) -> Vec<Tuned> {
    (0..n)
        .map(|i| Tuned {
            big: i as f64 * 0.5,
            raw: i as u32,
            fast: [i as i16, -(i as i16)],
            name: format!("n{}", i % 7),
            tags: (0..i % 3).map(|k| format!("t{k}")).collect(),
            plain: (i % 100) as i8,
        })
        .collect()
}

fn chunk0(f: &File, path: &str) -> usize {
    f.dataset(path).unwrap().chunk().unwrap()[0]
}

fn filters(f: &File, path: &str) -> Vec<Filter> {
    f.dataset(path).unwrap().filters()
}

#[test]
fn per_field_settings_apply_to_their_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("s.h5")).unwrap();
    let v = rows(1_000);
    let opts = SaveOptions::default().deflate(2);
    save_vector_with(&f, "t", &v, &opts).unwrap();
    assert_eq!(load_vector::<Tuned>(&f, "t").unwrap(), v);

    assert_eq!(chunk0(&f, "t/data/big/values"), 100);
    assert_eq!(
        filters(&f, "t/data/big/values"),
        vec![Filter::Shuffle, Filter::Deflate(7)]
    );
    assert_eq!(filters(&f, "t/data/raw/values"), vec![]);
    assert_eq!(filters(&f, "t/data/fast/values"), vec![Filter::LZF]);
    assert_eq!(chunk0(&f, "t/data/name/heap"), 50);
    assert_eq!(chunk0(&f, "t/data/name/pointers"), 50);
    // Fields without settings follow the vector's options.
    assert_eq!(
        filters(&f, "t/data/plain/values"),
        vec![Filter::Shuffle, Filter::Deflate(2)]
    );
    assert_eq!(
        filters(&f, "t/data/tags/OFFSETS"),
        vec![Filter::Shuffle, Filter::Deflate(2)]
    );
    assert_eq!(chunk0(&f, "t/data/plain/values"), 1024);
}

#[test]
fn per_role_compression() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("r.h5")).unwrap();
    let v = rows(500);
    let opts = SaveOptions::default()
        .compression_for(
            DatasetRole::Bytes,
            Compression::Deflate {
                level: 6,
                shuffle: false,
            },
        )
        .compression_for(DatasetRole::Offsets, Compression::Lzf);
    save_vector_with(&f, "t", &v, &opts).unwrap();
    assert_eq!(load_vector::<Tuned>(&f, "t").unwrap(), v);
    assert_eq!(
        filters(&f, "t/data/tags/VALUES/CHARS"),
        vec![Filter::Deflate(6)]
    );
    assert_eq!(filters(&f, "t/data/tags/OFFSETS"), vec![Filter::LZF]);
    assert_eq!(filters(&f, "t/data/tags/VALUES/OFFSETS"), vec![Filter::LZF]);
    assert_eq!(filters(&f, "t/data/plain/values"), vec![]);
    // The per-field setting of `name` (vls, chunk only) keeps the roles.
    assert_eq!(filters(&f, "t/data/name/heap"), vec![Filter::Deflate(6)]);
    assert_eq!(filters(&f, "t/data/name/pointers"), vec![Filter::LZF]);
}

#[test]
fn deflate_direct_chunks_match_hdf5_pipeline() {
    // The same data through h5vec's parallel path and through HDF5's own
    // pipeline (H5VEC_DIRECT_CHUNKS is read once per process, so compare
    // against the hdf5 crate writing the same bytes instead).
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("d.h5")).unwrap();
    let xs: Vec<f64> = (0..200_000).map(|i| (i as f64).sin()).collect();
    save_vector_with(
        &f,
        "x",
        &xs,
        &SaveOptions::default().chunk_length(4096).deflate(4),
    )
    .unwrap();
    let reference = f
        .new_dataset_builder()
        .chunk(4096)
        .shuffle()
        .deflate(4)
        .with_data(&xs)
        .create("reference")
        .unwrap();
    let ours = f.dataset("x/data/values").unwrap();
    assert_eq!(ours.filters(), reference.filters());
    // HDF5 itself decodes our chunks.
    assert_eq!(ours.read_raw::<f64>().unwrap(), xs);
    // Sizes within 5% of HDF5's own deflate at the same level.
    let (a, b) = (ours.storage_size() as f64, reference.storage_size() as f64);
    assert!((a / b - 1.0).abs() < 0.05, "ours {a} vs HDF5 {b}");
    assert_eq!(load_vector::<f64>(&f, "x").unwrap(), xs);
}

/// The filter mask of every stored chunk of a 1-D dataset, in order.
fn chunk_masks(ds: &h5vec::hdf5::Dataset) -> Vec<u32> {
    let n = ds.num_chunks().unwrap_or(0);
    (0..n)
        .map(|i| ds.chunk_info(i).expect("chunk info").filter_mask)
        .collect()
}

#[test]
fn incompressible_chunks_skip_deflate() {
    // Random 64-bit values (hash-like ids) cannot be deflated: h5vec
    // stores such chunks shuffled only, with the deflate bit of their
    // filter mask set; compressible chunks of the same dataset are
    // deflated. HDF5 reads both kinds through its own pipeline.
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("r.h5")).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut xs: Vec<u64> = (0..4 * 16384)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    // Chunks 2 and 3: small counters.
    for (i, v) in xs[2 * 16384..].iter_mut().enumerate() {
        *v = i as u64;
    }
    for (shuffle, skipped) in [(true, 0b10), (false, 0b01)] {
        let name = format!("s{shuffle}");
        let opts = SaveOptions::default()
            .chunk_length(16384)
            .compression(h5vec::Compression::Deflate { level: 4, shuffle });
        save_vector_with(&f, &name, &xs, &opts).unwrap();
        let ds = f.dataset(&format!("{name}/data/values")).unwrap();
        assert_eq!(
            chunk_masks(&ds),
            vec![skipped, skipped, 0, 0],
            "shuffle {shuffle}"
        );
        // Stored bytes: the raw chunk size for skipped chunks.
        assert_eq!(ds.chunk_info(0).unwrap().size, 16384 * 8);
        assert!(ds.chunk_info(2).unwrap().size < 16384 * 8 / 4);
        assert_eq!(ds.read_raw::<u64>().unwrap(), xs, "through HDF5");
        assert_eq!(load_vector::<u64>(&f, &name).unwrap(), xs);
        let part: Vec<u64> = h5vec::load_range(&f, &name, 100..40000).unwrap();
        assert_eq!(part, xs[100..40000]);
    }
}
