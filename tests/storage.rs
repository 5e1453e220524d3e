//! Storage control (SPEC.md section 6): per-field chunking and compression, per-role
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
    // 1,000 rows round up to 1,024, and 1-byte rows to 4 KiB (SPEC section 6).
    assert_eq!(chunk0(&f, "t/data/plain/values"), 4096);
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

// ---------------------------------------------------------------------------
// Blosc (HDF5 filter 32001)

use h5vec::hdf5::filters::{Blosc, BloscShuffle as HBloscShuffle};
use h5vec::{BloscCompressor, BloscShuffle};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Mixed {
    x: f64,
    n: i32,
    flag: bool,
    pos: [f32; 3],
    name: String,
    tags: Vec<String>,
    maybe: Option<u16>,
}

fn mixed(n: usize) -> Vec<Mixed> {
    (0..n)
        .map(|i| Mixed {
            x: (i as f64 * 0.01).sin(),
            n: i as i32 * 3 - 1000,
            flag: i % 3 == 0,
            pos: [i as f32, -(i as f32) * 0.5, 1e30],
            name: format!("name {}", i % 11),
            tags: (0..i % 4).map(|k| format!("tag{k}")).collect(),
            maybe: (i % 5 != 0).then_some(i as u16),
        })
        .collect()
}

/// The filter's flags and stored parameters (`cd_values`) of filter `id` on
/// dataset `path`, read straight from the dataset creation property list.
fn filter_params(f: &File, path: &str, id: i32) -> (u32, Vec<u32>) {
    let ds = f.dataset(path).unwrap();
    // SAFETY: a valid dataset id under the lock; the property list is closed before returning; output buffers as large as passed.
    h5vec::hdf5::sync::sync(|| unsafe {
        let dcpl = hdf5_sys::h5d::H5Dget_create_plist(ds.id());
        assert!(dcpl >= 0);
        let mut flags = 0;
        let mut cd = [0u32; 16];
        let mut n: usize = cd.len();
        let r = hdf5_sys::h5p::H5Pget_filter_by_id2(
            dcpl,
            id,
            &mut flags,
            &mut n,
            cd.as_mut_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        hdf5_sys::h5p::H5Pclose(dcpl);
        assert!(r >= 0, "{path} has no filter {id}");
        (flags, cd[..n].to_vec())
    })
}

/// What Blosc's `set_local` stores: filter version 2, Blosc format 2,
/// element size, chunk bytes, level, shuffle, compressor.
fn blosc_cd(
    f: &File,
    path: &str,
    elem: u32,
    level: u32,
    s: BloscShuffle,
    c: BloscCompressor,
) -> Vec<u32> {
    let chunk: usize = f.dataset(path).unwrap().chunk().unwrap().iter().product();
    vec![2, 2, elem, chunk as u32 * elem, level, s.code(), c.code()]
}

fn hdf5_compressor(c: BloscCompressor) -> Blosc {
    match c {
        BloscCompressor::BloscLz => Blosc::BloscLZ,
        BloscCompressor::Lz4 => Blosc::LZ4,
        BloscCompressor::Lz4hc => Blosc::LZ4HC,
        BloscCompressor::Zlib => Blosc::ZLib,
        BloscCompressor::Zstd => Blosc::ZStd,
        other => panic!("no hdf5 name for {other:?}"),
    }
}

fn hdf5_shuffle(s: BloscShuffle) -> HBloscShuffle {
    match s {
        BloscShuffle::None => HBloscShuffle::None,
        BloscShuffle::Byte => HBloscShuffle::Byte,
        BloscShuffle::Bit => HBloscShuffle::Bit,
    }
}

#[test]
fn blosc_codes_and_names() {
    let names: Vec<_> = BloscCompressor::ALL
        .iter()
        .map(|c| (c.name(), c.code()))
        .collect();
    assert_eq!(
        names,
        [
            ("blosclz", 0),
            ("lz4", 1),
            ("lz4hc", 2),
            ("zlib", 4),
            ("zstd", 5)
        ]
    );
    for c in BloscCompressor::ALL {
        assert_eq!(BloscCompressor::from_name(c.name()), Some(c));
        assert_eq!(BloscCompressor::from_code(c.code()), Some(c));
    }
    assert_eq!(BloscCompressor::from_name("snappy"), None);
    assert_eq!(BloscCompressor::from_code(3), None);
    assert_eq!(
        [BloscShuffle::None, BloscShuffle::Byte, BloscShuffle::Bit].map(BloscShuffle::code),
        [0, 1, 2]
    );
    assert_eq!(
        Compression::zstd(12),
        Compression::Blosc {
            compressor: BloscCompressor::Zstd,
            level: 9,
            shuffle: BloscShuffle::Byte
        }
    );
    assert_eq!(
        Compression::lz4(1),
        Compression::blosc(BloscCompressor::Lz4, 1, BloscShuffle::Byte)
    );
    assert_eq!(
        SaveOptions::default().zstd(3).get_compression(),
        &Compression::zstd(3)
    );
}

#[test]
fn blosc_round_trips_every_compressor_and_shuffle() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("b.h5")).unwrap();
    let v = mixed(3_000);
    for c in BloscCompressor::ALL {
        for s in [BloscShuffle::None, BloscShuffle::Byte, BloscShuffle::Bit] {
            let name = format!("{}_{:?}", c.name(), s);
            let opts = SaveOptions::default().compression(Compression::blosc(c, 5, s));
            save_vector_with(&f, &name, &v, &opts).unwrap();
            assert_eq!(load_vector::<Mixed>(&f, &name).unwrap(), v, "{name}");
            let want = vec![Filter::Blosc(hdf5_compressor(c), 5, hdf5_shuffle(s))];
            for ds in [
                "x/values",
                "n/values",
                "flag/values",
                "pos/values",
                // Strings under compression use the VLS layout (SPEC 4.1, 6).
                "name/heap",
                "name/pointers",
                "tags/OFFSETS",
                "tags/VALUES/CHARS",
                "tags/VALUES/OFFSETS",
                "maybe/MASK",
                "maybe/values",
            ] {
                let path = format!("{name}/data/{ds}");
                assert_eq!(filters(&f, &path), want, "{path}");
            }
            // The stored parameters, element size per dataset (a dense
            // array's element, not its row).
            for (ds, elem) in [
                ("x/values", 8),
                ("n/values", 4),
                ("pos/values", 4),
                ("name/heap", 1),
                ("name/pointers", 16),
                ("tags/VALUES/CHARS", 1),
            ] {
                let path = format!("{name}/data/{ds}");
                let (flags, cd) = filter_params(&f, &path, 32001);
                assert_eq!(flags, 1, "{path}: optional, as h5py sets it");
                assert_eq!(cd, blosc_cd(&f, &path, elem, 5, s, c), "{path}");
            }
            // HDF5's own pipeline decodes the chunks too.
            let xs: Vec<f64> = v.iter().map(|m| m.x).collect();
            let ds = f.dataset(&format!("{name}/data/x/values")).unwrap();
            assert_eq!(ds.read_raw::<f64>().unwrap(), xs);
        }
    }
    // Every compressor compresses this numeric column.
    let raw = f.dataset("zstd_Byte/data/n/values").unwrap();
    assert!(raw.storage_size() < 3_000 * 4 / 2, "{}", raw.storage_size());
}

#[test]
fn blosc_level_zero_and_incompressible_chunks_round_trip() {
    // Blosc cannot shrink these chunks; the filter is optional, so HDF5
    // stores them unfiltered, and reading still gives the values back.
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("z.h5")).unwrap();
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let noise: Vec<u64> = (0..20_000)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect();
    for (name, c) in [
        (
            "level0",
            Compression::blosc(BloscCompressor::Lz4, 0, BloscShuffle::Byte),
        ),
        ("noise", Compression::zstd(9)),
        (
            "clamped",
            Compression::Blosc {
                compressor: BloscCompressor::Zlib,
                level: 200,
                shuffle: BloscShuffle::Bit,
            },
        ),
    ] {
        let opts = SaveOptions::default().chunk_length(1000).compression(c);
        save_vector_with(&f, name, &noise, &opts).unwrap();
        assert_eq!(load_vector::<u64>(&f, name).unwrap(), noise, "{name}");
        assert_eq!(
            f.dataset(&format!("{name}/data/values"))
                .unwrap()
                .read_raw::<u64>()
                .unwrap(),
            noise
        );
    }
    assert_eq!(
        filter_params(&f, "level0/data/values", 32001).1,
        vec![2, 2, 8, 8000, 0, 1, 1]
    );
    assert_eq!(
        filter_params(&f, "noise/data/values", 32001).1,
        vec![2, 2, 8, 8000, 9, 1, 5]
    );
    // Levels above 9 are clamped when the filter is set.
    assert_eq!(
        filter_params(&f, "clamped/data/values", 32001).1,
        vec![2, 2, 8, 8000, 9, 2, 4]
    );
    // Every chunk is stored raw, Blosc skipped (bit 0 of its filter mask).
    for name in ["level0", "noise", "clamped"] {
        let ds = f.dataset(&format!("{name}/data/values")).unwrap();
        assert_eq!(chunk_masks(&ds), vec![1; 20], "{name}");
        assert_eq!(ds.chunk_info(0).unwrap().size, 8000, "{name}");
    }
    // Compressible chunks of the same dataset are Blosc frames.
    let mut mixed = noise.clone();
    mixed[..10_000].iter_mut().for_each(|v| *v %= 16);
    save_vector_with(
        &f,
        "mixed",
        &mixed,
        &SaveOptions::default().chunk_length(1000).zstd(3),
    )
    .unwrap();
    let ds = f.dataset("mixed/data/values").unwrap();
    let masks = chunk_masks(&ds);
    assert_eq!(masks, [vec![0; 10], vec![1; 10]].concat());
    assert!(ds.chunk_info(0).unwrap().size < 8000 / 2);
    assert_eq!(load_vector::<u64>(&f, "mixed").unwrap(), mixed);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct BloscFields {
    #[h5vec(zstd = 7)]
    a: f64,
    #[h5vec(blosc(compressor = "lz4", level = 3, shuffle = "bit"))]
    b: i32,
    #[h5vec(chunk_length = 64, blosc(compressor = "blosclz"))]
    c: u16,
    #[h5vec(blosc(shuffle = "none", compressor = "zlib"))]
    d: Vec<String>,
    #[h5vec(blosc(compressor = "lz4hc", level = 9), vls)]
    e: Option<String>,
    #[h5vec(zstd = 0)]
    h: Option<[i64; 2]>,
    #[h5vec(no_compression)]
    f: u8,
    g: f32,
}

#[test]
fn per_field_blosc_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("p.h5")).unwrap();
    let v: Vec<BloscFields> = (0..700)
        .map(|i| BloscFields {
            a: i as f64 / 3.0,
            b: -i,
            c: (i % 300) as u16,
            d: (0..i % 3).map(|k| format!("d{k}")).collect(),
            e: (i % 4 != 0).then(|| format!("e{}", i % 9)),
            f: i as u8,
            g: i as f32,
            h: (i % 6 != 1).then_some([i.into(), (-i).into()]),
        })
        .collect();
    save_vector_with(&f, "t", &v, &SaveOptions::default().deflate(1)).unwrap();
    assert_eq!(load_vector::<BloscFields>(&f, "t").unwrap(), v);
    let blosc = |c, l, s| vec![Filter::Blosc(c, l, s)];
    assert_eq!(
        filters(&f, "t/data/a/values"),
        blosc(Blosc::ZStd, 7, HBloscShuffle::Byte)
    );
    assert_eq!(
        filters(&f, "t/data/b/values"),
        blosc(Blosc::LZ4, 3, HBloscShuffle::Bit)
    );
    // Defaults inside `blosc(...)`: level 5, byte shuffle.
    assert_eq!(
        filters(&f, "t/data/c/values"),
        blosc(Blosc::BloscLZ, 5, HBloscShuffle::Byte)
    );
    assert_eq!(chunk0(&f, "t/data/c/values"), 64);
    for ds in ["OFFSETS", "VALUES/OFFSETS", "VALUES/CHARS"] {
        assert_eq!(
            filters(&f, &format!("t/data/d/{ds}")),
            blosc(Blosc::ZLib, 5, HBloscShuffle::None),
            "{ds}"
        );
    }
    for ds in ["heap", "pointers"] {
        assert_eq!(
            filters(&f, &format!("t/data/e/{ds}")),
            blosc(Blosc::LZ4HC, 9, HBloscShuffle::Byte),
            "{ds}"
        );
    }
    for ds in ["MASK", "values"] {
        assert_eq!(
            filters(&f, &format!("t/data/h/{ds}")),
            blosc(Blosc::ZStd, 0, HBloscShuffle::Byte),
            "{ds}"
        );
    }
    assert_eq!(filters(&f, "t/data/f/values"), vec![]);
    assert_eq!(
        filters(&f, "t/data/g/values"),
        vec![Filter::Shuffle, Filter::Deflate(1)]
    );
    assert_eq!(
        filter_params(&f, "t/data/a/values", 32001),
        (1, vec![2, 2, 8, 1024 * 8, 7, 1, 5])
    );
}

#[test]
fn per_role_blosc() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("r.h5")).unwrap();
    let v = rows(500);
    let opts = SaveOptions::default()
        .zstd(4)
        .compression_for(DatasetRole::Bytes, Compression::zstd(9))
        .compression_for(
            DatasetRole::Offsets,
            Compression::blosc(BloscCompressor::Lz4, 2, BloscShuffle::Bit),
        );
    save_vector_with(&f, "t", &v, &opts).unwrap();
    assert_eq!(load_vector::<Tuned>(&f, "t").unwrap(), v);
    let zstd = |l| vec![Filter::Blosc(Blosc::ZStd, l, HBloscShuffle::Byte)];
    let lz4 = vec![Filter::Blosc(Blosc::LZ4, 2, HBloscShuffle::Bit)];
    assert_eq!(filters(&f, "t/data/tags/VALUES/CHARS"), zstd(9));
    assert_eq!(filters(&f, "t/data/name/heap"), zstd(9));
    assert_eq!(filters(&f, "t/data/tags/OFFSETS"), lz4);
    assert_eq!(filters(&f, "t/data/tags/VALUES/OFFSETS"), lz4);
    assert_eq!(filters(&f, "t/data/name/pointers"), lz4);
    assert_eq!(filters(&f, "t/data/plain/values"), zstd(4));
    // Per-field settings win over the vector's.
    assert_eq!(filters(&f, "t/data/raw/values"), vec![]);
    assert_eq!(filters(&f, "t/data/fast/values"), vec![Filter::LZF]);
    assert_eq!(
        filters(&f, "t/data/big/values"),
        vec![Filter::Shuffle, Filter::Deflate(7)]
    );
}

#[test]
fn blosc_appends_and_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("a.h5")).unwrap();
    let v = mixed(2_500);
    let opts = SaveOptions::default().chunk_length(256).zstd(5);
    save_vector_with(&f, "m", &v[..1000], &opts).unwrap();
    h5vec::append_vector(&f, "m", &v[1000..]).unwrap();
    assert_eq!(load_vector::<Mixed>(&f, "m").unwrap(), v);
    assert_eq!(
        h5vec::load_range::<Mixed>(&f, "m", 999..1301).unwrap(),
        v[999..1301].to_vec()
    );
    assert_eq!(
        filters(&f, "m/data/x/values"),
        vec![Filter::Blosc(Blosc::ZStd, 5, HBloscShuffle::Byte)]
    );
}

#[test]
fn blosc_uses_every_core() {
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("t.h5")).unwrap();
    save_vector_with(&f, "x", &[1.0f64, 2.0], &SaveOptions::default().zstd(1)).unwrap();
    if std::env::var_os("BLOSC_NTHREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(
            usize::from(h5vec::hdf5::filters::blosc_get_nthreads()),
            cores.min(255)
        );
    }
}

#[test]
fn blosc_compressor_missing_from_this_build_is_a_clear_error() {
    // A Blosc dataset whose parameters name Snappy (code 3), which this
    // build of Blosc lacks (h5py + hdf5plugin writes such files).
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("s.h5")).unwrap();
    let xs: Vec<f64> = (0..100).map(f64::from).collect();
    save_vector_with(&f, "v", &xs, &SaveOptions::default()).unwrap();
    f.unlink("v/data/values").unwrap();
    f.group("v/data")
        .unwrap()
        .new_dataset_builder()
        .chunk(50)
        .add_filter(32001, &[0, 0, 0, 0, 5, 1, 3])
        .with_data(&xs)
        .create("values")
        .unwrap();
    let e = load_vector::<f64>(&f, "v").unwrap_err().to_string();
    assert!(e.contains("/v/data/values"), "{e}");
    assert!(
        e.contains("filter `blosc` (id 32001) with compressor snappy (this build of Blosc has blosclz, lz4, lz4hc, zlib, zstd)"),
        "{e}"
    );
}

#[test]
fn columns_with_fill_values_take_every_compression() {
    // The leaves of `Vec<Option<number>>` mark missing elements with the
    // dataset's fill value (SPEC.md, h5col layout); they are created outside
    // hdf5-metno's builder and get the same filters as every other column.
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct Sparse {
        v: Vec<Option<f64>>,
    }
    let dir = tempfile::tempdir().unwrap();
    let f = File::create(dir.path().join("f.h5")).unwrap();
    let rows = vec![
        Sparse {
            v: vec![Some(1.0), None, Some(-1.5)],
        },
        Sparse { v: vec![] },
        Sparse { v: vec![None] },
    ];
    for (name, c, want) in [
        (
            "zstd",
            Compression::zstd(6),
            vec![Filter::Blosc(Blosc::ZStd, 6, HBloscShuffle::Byte)],
        ),
        ("lzf", Compression::Lzf, vec![Filter::LZF]),
        (
            "deflate",
            Compression::deflate(3),
            vec![Filter::Shuffle, Filter::Deflate(3)],
        ),
        ("none", Compression::None, vec![]),
    ] {
        let opts = SaveOptions::default().compression(c);
        save_vector_with(&f, name, &rows, &opts).unwrap();
        let ds = f.dataset(&format!("{name}/data/v/VALUES")).unwrap();
        assert_eq!(ds.filters(), want, "{name}");
        assert_eq!(load_vector::<Sparse>(&f, name).unwrap(), rows, "{name}");
    }
    assert_eq!(
        filter_params(&f, "zstd/data/v/VALUES", 32001),
        (
            1,
            blosc_cd(
                &f,
                "zstd/data/v/VALUES",
                8,
                6,
                BloscShuffle::Byte,
                BloscCompressor::Zstd
            )
        )
    );
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
