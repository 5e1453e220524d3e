//! Checksums (`SaveOptions::checksum`, SPEC.md section 6.4): every chunked
//! dataset gets HDF5's Fletcher32 filter last, h5vec writes the checksums
//! itself byte for byte as HDF5 would, HDF5's own reader accepts them, and
//! a byte changed on disk is an error naming the dataset and the chunk's
//! rows on every read path, never a different value.

use h5vec_tests as common;

use std::collections::BTreeMap;
use std::path::Path;

use h5vec::hdf5;
use h5vec::{BloscCompressor, BloscShuffle, Compression, H5Vector, SaveOptions};
use hdf5_sys::h5::hsize_t;

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Shape {
    Dot,
    Circle { r: f64 },
    Label(String),
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Every {
    id: u64,
    x: f32,
    flag: bool,
    name: String,
    tags: Vec<String>,
    xs: Vec<f64>,
    maybe: Option<i32>,
    pair: [u16; 2],
    shape: Shape,
    counts: BTreeMap<String, u32>,
    note: Option<String>,
}

fn every(n: u64) -> Vec<Every> {
    (0..n)
        .map(|i| Every {
            id: common::mix(i),
            x: i as f32 * 0.5,
            flag: i % 3 == 0,
            name: format!("row {i}"),
            tags: (0..i % 4).map(|k| format!("t{k}")).collect(),
            xs: (0..i % 5).map(|k| k as f64 / 3.0).collect(),
            maybe: (i % 2 == 0).then_some(i as i32),
            pair: [i as u16, (i * 7) as u16],
            shape: match i % 3 {
                0 => Shape::Dot,
                1 => Shape::Circle { r: i as f64 },
                _ => Shape::Label(format!("l{i}")),
            },
            counts: (0..i % 3).map(|k| (format!("k{k}"), k as u32)).collect(),
            note: (i % 5 == 0).then(|| "n".repeat((i % 7) as usize)),
        })
        .collect()
}

fn compressions() -> Vec<(&'static str, Compression)> {
    vec![
        ("none", Compression::None),
        ("deflate", Compression::deflate(4)),
        (
            "deflate without shuffle",
            Compression::Deflate {
                level: 4,
                shuffle: false,
            },
        ),
        ("zstd", Compression::zstd(5)),
        (
            "blosc lz4 bit",
            Compression::blosc(BloscCompressor::Lz4, 5, BloscShuffle::Bit),
        ),
        ("lzf", Compression::Lzf),
    ]
}

/// Every chunked dataset of `name` but those of variable-length data ends
/// its pipeline with Fletcher32, and
/// HDF5's own pipeline (hdf5-metno, not h5vec's chunk path) reads every
/// fixed-size one, verifying the checksums.
fn assert_checksummed(f: &hdf5::File, name: &str, what: &str) -> usize {
    let info = h5vec::inspect(f, name).unwrap();
    let mut n = 0;
    for d in &info.datasets {
        if d.chunks.is_none() {
            continue;
        }
        if d.dtype.contains("vlen") {
            // Variable-length data: heap references, no checksum.
            assert!(
                d.filters.iter().all(|f| f != "fletcher32"),
                "{what}: {}",
                d.path
            );
            continue;
        }
        assert_eq!(
            d.filters.last().map(String::as_str),
            Some("fletcher32"),
            "{what}: {} {:?}",
            d.path,
            d.filters
        );
        n += 1;
        let ds = f.dataset(&d.path).unwrap();
        if ds.ndim() == 1 && !d.dtype.contains("vlen") {
            let (bytes, size) = common::read_rows_bytes(&ds);
            assert_eq!(
                bytes.len() as u64,
                d.shape[0] * size as u64,
                "{what}: {}",
                d.path
            );
        }
    }
    n
}

#[test]
fn every_kind_round_trips_with_checksums_under_every_compression() {
    let rows = every(3000);
    for (what, c) in compressions() {
        let f = common::mem_file();
        let opts = SaveOptions::default()
            .compression(c)
            .chunk_length(256)
            .checksum(true);
        h5vec::save_vector_with(&f, "v", &rows, &opts).unwrap();
        assert_eq!(
            h5vec::load_vector::<Every>(&f, "v").unwrap(),
            rows,
            "{what}"
        );
        assert_eq!(
            h5vec::load_range::<Every>(&f, "v", 1000..1300).unwrap(),
            &rows[1000..1300],
            "{what}"
        );
        let n = assert_checksummed(&f, "v", what);
        assert!(n >= 12, "{what}: only {n} checksummed datasets");
        // Without the option, no dataset has the filter.
        let plain = SaveOptions::default().compression(compressions()[1].1.clone());
        h5vec::save_vector_with(&f, "w", &rows[..10], &plain).unwrap();
        let info = h5vec::inspect(&f, "w").unwrap();
        assert!(info
            .datasets
            .iter()
            .all(|d| !d.filters.iter().any(|x| x == "fletcher32")));
    }
}

#[test]
fn tables_strings_and_arrow_saves_get_checksums() {
    let f = common::mem_file();
    let strs: Vec<Option<String>> = (0..2000)
        .map(|i| (i % 9 != 0).then(|| format!("s{i}")))
        .collect();
    let opts = SaveOptions::default().checksum(true).deflate(3);
    h5vec::vls::save_strings_with(&f, "s", &strs, &opts).unwrap();
    assert_eq!(
        h5vec::vls::load_strings(&f.group("s").unwrap()).unwrap(),
        strs
    );
    assert!(assert_checksummed(&f, "s", "vls array") >= 2);
    // Arrow: the batches of a checksummed vector, saved again with checksums.
    let rows = every(500);
    h5vec::save_vector_with(&f, "v", &rows, &SaveOptions::default().checksum(true)).unwrap();
    let batches: Vec<_> = h5vec::arrow::batches(&f, "v", 128)
        .unwrap()
        .collect::<h5vec::Result<_>>()
        .unwrap();
    let schema = batches[0].schema();
    h5vec::arrow::save_batches(
        &f,
        "a",
        &schema,
        batches.into_iter().map(Ok),
        &SaveOptions::default().checksum(true),
    )
    .unwrap();
    assert_eq!(h5vec::load_vector::<Every>(&f, "a").unwrap(), rows);
    assert!(assert_checksummed(&f, "a", "arrow") >= 12);
}

#[test]
fn appends_keep_checksums_valid() {
    for (what, c) in compressions() {
        let f = common::mem_file();
        let opts = SaveOptions::default()
            .compression(c)
            .chunk_length(64)
            .checksum(true);
        let rows = every(400);
        h5vec::save_vector_with(&f, "v", &rows[..10], &opts).unwrap();
        let mut at = 10;
        for n in [1usize, 7, 63, 64, 65, 130, 60] {
            h5vec::append_vector(&f, "v", &rows[at..at + n]).unwrap();
            at += n;
            assert_eq!(
                h5vec::load_vector::<Every>(&f, "v").unwrap(),
                &rows[..at],
                "{what} after {at}"
            );
        }
        assert_checksummed(&f, "v", what);
    }
}

/// The stored bytes and filter mask of the chunk of `ds` at row `row`.
fn stored_chunk(ds: &hdf5::Dataset, row: u64) -> (Vec<u8>, u32) {
    let off = [row as hsize_t];
    let mut mask = 0u32;
    let mut size = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    // SAFETY: a valid 1-D dataset; the first call asks the size (null
    // buffer), the second reads at most `size` bytes into `buf`.
    hdf5::sync::sync(|| unsafe {
        size = buf.len();
        let r = hdf5_sys::h5d::H5Dread_chunk(
            ds.id(),
            hdf5_sys::h5p::H5P_DEFAULT,
            off.as_ptr(),
            &mut mask,
            buf.as_mut_ptr().cast(),
            &mut size,
        );
        assert!(r >= 0 && size <= buf.len(), "H5Dread_chunk");
    });
    buf.truncate(size);
    (buf, mask)
}

/// h5vec's own chunks are byte for byte those of HDF5's Fletcher32 filter
/// (the checksum's value and its byte order): the same values written by
/// HDF5's pipeline and by h5vec's direct chunk path.
#[test]
fn checksums_are_byte_exact_with_hdf5s_filter() {
    let f = common::mem_file();
    for len in [512usize, 333] {
        let xs: Vec<u64> = (0..len as u64).map(common::mix).collect();
        let name = format!("h{len}");
        let ds = f
            .new_dataset::<u64>()
            .chunk(len)
            .fletcher32()
            .shape(hdf5::SimpleExtents::resizable([len]))
            .create(name.as_str())
            .unwrap();
        ds.write_raw(&xs).unwrap();
        let opts = SaveOptions::default().chunk_length(len).checksum(true);
        h5vec::save_vector_with(&f, &format!("v{len}"), &xs, &opts).unwrap();
        let mine = f.dataset(&format!("v{len}/data/values")).unwrap();
        let (theirs, m1) = stored_chunk(&ds, 0);
        let (ours, m2) = stored_chunk(&mine, 0);
        assert_eq!(theirs.len(), len * 8 + 4);
        assert_eq!((ours, m2), (theirs, m1), "len {len}");
    }
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Rec {
    x: u64,
}

/// Flips one byte at `offset` bytes into the chunk of `/v/data/x/values`
/// that holds row `row`, in the closed file at `path`.
fn flip_in_chunk(path: &Path, row: u64, offset: u64) {
    let (addr, size) = {
        let f = hdf5::File::open(path).unwrap();
        let ds = f.dataset("v/data/x/values").unwrap();
        let off = [row as hsize_t];
        let (mut mask, mut addr, mut size) = (0u32, 0u64, 0 as hsize_t);
        // SAFETY: a valid 1-D chunked dataset; output values only.
        let r = hdf5::sync::sync(|| unsafe {
            hdf5_sys::h5d::H5Dget_chunk_info_by_coord(
                ds.id(),
                off.as_ptr(),
                &mut mask,
                &mut addr,
                &mut size,
            )
        });
        assert!(r >= 0, "H5Dget_chunk_info_by_coord");
        (addr, size)
    };
    assert!(
        offset < size,
        "offset {offset} past the chunk's {size} bytes"
    );
    let mut bytes = std::fs::read(path).unwrap();
    bytes[(addr + offset) as usize] ^= 0x04;
    std::fs::write(path, bytes).unwrap();
}

/// Asserts `e` is the checksum error of chunk rows `rows` of `x`.
#[track_caller]
fn is_mismatch(e: &h5vec::Error, rows: &str, how: &str) {
    let msg = e.to_string();
    assert_eq!(e.location(), Some("/v/data/x/values"), "{how}: {msg}");
    // With h5vec's chunk path off (`H5VEC_DIRECT_CHUNKS=0`), HDF5's own
    // check reports it, without the rows.
    let hdf5_only = std::env::var("H5VEC_DIRECT_CHUNKS").is_ok_and(|v| v == "0");
    assert!(
        msg.contains(&format!("checksum mismatch, rows {rows}"))
            || (hdf5_only && msg.contains("Fletcher32 checksum")),
        "{how}: {msg}"
    );
}

#[test]
fn a_flipped_byte_is_an_error_on_every_read_path() {
    let rows: Vec<Rec> = (0..10_000).map(|i| Rec { x: common::mix(i) }).collect();
    for (what, c, offset) in [
        ("none", Compression::None, 100u64),
        ("deflate", Compression::deflate(4), 40),
        ("zstd", Compression::zstd(5), 40),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.h5");
        {
            let f = h5vec::create_file(&path).unwrap();
            let opts = SaveOptions::default()
                .compression(c)
                .chunk_length(1024)
                .checksum(true);
            h5vec::save_vector_with(&f, "v", &rows, &opts).unwrap();
        }
        flip_in_chunk(&path, 3 * 1024, offset);
        let f = h5vec::open_file(&path).unwrap();
        let r = "3072..4096";
        is_mismatch(&h5vec::load_vector::<Rec>(&f, "v").unwrap_err(), r, what);
        // A range inside the chunk (partial chunk path), and whole chunks.
        for range in [3100..3200, 2000..5000, 3072..4096] {
            let e = h5vec::load_range::<Rec>(&f, "v", range.clone()).unwrap_err();
            is_mismatch(&e, r, &format!("{what} {range:?}"));
        }
        // Rows of other chunks still load exactly.
        assert_eq!(
            h5vec::load_range::<Rec>(&f, "v", 0..3072).unwrap(),
            &rows[..3072],
            "{what}"
        );
        assert_eq!(
            h5vec::load_range::<Rec>(&f, "v", 4096..10_000).unwrap(),
            &rows[4096..],
            "{what}"
        );
        is_mismatch(
            &h5vec::load_column::<u64>(&f, "v", "x").unwrap_err(),
            r,
            what,
        );
        let arrow = h5vec::arrow::batches(&f, "v", 1000)
            .unwrap()
            .collect::<h5vec::Result<Vec<_>>>();
        is_mismatch(&arrow.unwrap_err(), r, &format!("{what} arrow"));
        // A reader in batches: the batches before the chunk load, then the error.
        let mut reader = h5vec::VectorReader::<Rec>::open(&f, "v", 1000).unwrap();
        for b in 0..3 {
            let batch = reader.next().unwrap().unwrap();
            assert_eq!(batch, &rows[b * 1000..(b + 1) * 1000], "{what} batch {b}");
        }
        is_mismatch(
            &reader.next().unwrap().unwrap_err(),
            r,
            &format!("{what} reader"),
        );
        // HDF5's own pipeline refuses the chunk too.
        let ds = f.dataset("v/data/x/values").unwrap();
        let e = ds.read_slice_1d::<u64, _>(3072..3080).unwrap_err();
        assert!(e.to_string().contains("Fletcher32"), "{what}: {e}");
    }
}

/// A chunk whose filter mask says its checksum was skipped (no writer
/// skips the mandatory filter) is an error on every h5vec read, whatever
/// bytes it holds.
#[test]
fn a_chunk_stored_without_its_checksum_is_an_error() {
    if std::env::var("H5VEC_DIRECT_CHUNKS").is_ok_and(|v| v == "0") {
        return; // h5vec's own chunk path is what this checks
    }
    let rows: Vec<Rec> = (0..10_000).map(|i| Rec { x: common::mix(i) }).collect();
    let f = common::mem_file();
    let opts = SaveOptions::default().chunk_length(1024).checksum(true);
    h5vec::save_vector_with(&f, "v", &rows, &opts).unwrap();
    let ds = f.dataset("v/data/x/values").unwrap();
    // Other values for rows 3072..4096, stored as if the checksum had been skipped.
    let other: Vec<u8> = (0..1024u64).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let off = [3 * 1024 as hsize_t];
    // SAFETY: a valid 1-D chunked dataset; `other` holds the length given.
    let r = hdf5::sync::sync(|| unsafe {
        hdf5_sys::h5d::H5Dwrite_chunk(
            ds.id(),
            hdf5_sys::h5p::H5P_DEFAULT,
            1,
            off.as_ptr(),
            other.len(),
            other.as_ptr().cast(),
        )
    });
    assert!(r >= 0, "H5Dwrite_chunk");
    let r = "3072..4096";
    let why = "stored without its checksum";
    for (how, e) in [
        (
            "load_vector",
            h5vec::load_vector::<Rec>(&f, "v").unwrap_err(),
        ),
        (
            "whole chunk",
            h5vec::load_range::<Rec>(&f, "v", 3072..4096).unwrap_err(),
        ),
        (
            "partial chunk",
            h5vec::load_range::<Rec>(&f, "v", 3100..3200).unwrap_err(),
        ),
        (
            "column",
            h5vec::load_column::<u64>(&f, "v", "x").unwrap_err(),
        ),
    ] {
        is_mismatch(&e, r, how);
        assert!(e.to_string().contains(why), "{how}: {e}");
    }
}

/// Overwrites `bytes` at `at` in the file at `path`.
fn poke(path: &Path, at: u64, bytes: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(bytes).unwrap();
}

/// The one place `needle` occurs in the file at `path`.
fn find_once(path: &Path, needle: &[u8]) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    let at: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "{:?} occurs {} times", needle, at.len());
    at[0] as u64
}

/// The metadata of a checksummed save (SPEC.md 6.4, "Metadata"):
/// `serialized_schema` is one Fletcher32 chunk, and the schema tree is
/// checked against it, so a byte changed anywhere in the tree (its small
/// contiguous datasets, its heap strings) or in the JSON is an error on
/// every read path instead of a different load.
#[test]
fn the_schema_tree_is_checked_against_its_checksummed_json() {
    let rows = every(50);
    let save = |path: &Path, checksum: bool| {
        let f = h5vec::create_file(path).unwrap();
        let opts = SaveOptions::default().checksum(checksum);
        h5vec::save_vector_with(&f, "v", &rows, &opts).unwrap();
    };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.h5");
    save(&plain, false);
    {
        let f = h5vec::open_file(&plain).unwrap();
        let ds = f.dataset("v/metadata/serialized_schema").unwrap();
        assert_eq!(ds.chunk(), None);
        assert!(ds.filters().is_empty());
    }
    let good = dir.path().join("good.h5");
    save(&good, true);
    let (json, node_offset) = {
        let f = h5vec::open_file(&good).unwrap();
        let ds = f.dataset("v/metadata/serialized_schema").unwrap();
        let json: Vec<u8> = ds.read_raw().unwrap();
        assert_eq!(ds.chunk(), Some(vec![json.len()]));
        assert_eq!(
            ds.filters(),
            vec![hdf5::filters::Filter::fletcher32()],
            "only Fletcher32"
        );
        assert_eq!(h5vec::load_vector::<Every>(&f, "v").unwrap(), rows);
        // `logical_type` of the `x` field's node: a contiguous string.
        let lt = f
            .dataset("v/metadata/schema/children/2/logical_type")
            .unwrap();
        let at = lt.offset().unwrap();
        let bytes = std::fs::read(&good).unwrap();
        assert_eq!(&bytes[at as usize..at as usize + 3], b"f32");
        (json, at)
    };
    let expect_err = |path: &Path, what: &str, want: &str| {
        let f = h5vec::open_file(path).unwrap();
        let e = h5vec::load_vector::<Every>(&f, what)
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains(want), "load_vector: {e}");
        let e = h5vec::arrow::read_schema(&f, "v").map(|_| ()).unwrap_err();
        assert!(e.to_string().contains(want), "arrow::read_schema: {e}");
        let e = h5vec::load_column::<u64>(&f, "v", "id")
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains(want), "load_column: {e}");
        let e = h5vec::VectorReader::<Every>::open(&f, "v", 10)
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains(want), "VectorReader: {e}");
    };
    // A node's `logical_type` (read by Arrow only) changed.
    let p = dir.path().join("lt.h5");
    std::fs::copy(&good, &p).unwrap();
    poke(&p, node_offset, b"u");
    expect_err(
        &p,
        "v",
        "$.x (metadata/schema): invalid data: the schema tree differs from the checksummed \
         metadata/serialized_schema: `logical_type` is \"u32\" in the tree, \"f32\" in the JSON",
    );
    // A field name in the global heap (variable-length strings).
    let p = dir.path().join("names.h5");
    std::fs::copy(&good, &p).unwrap();
    let heap = find_once(&p, b"counts\0");
    poke(&p, heap, b"c0");
    expect_err(&p, "v", "`field_names` is Some([\"id\", \"x\", \"flag\", \"name\", \"tags\", \"xs\", \"maybe\", \"pair\", \"shape\", \"c0unts\", \"note\"]) in the tree");
    // The JSON itself: HDF5's Fletcher32 check on its chunk.
    let p = dir.path().join("json.h5");
    std::fs::copy(&good, &p).unwrap();
    let at = find_once(&p, &json);
    poke(&p, at + 20, b"#");
    expect_err(&p, "v", "metadata/serialized_schema");
    expect_err(&p, "v", "checksum mismatch");
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Note {
    #[h5vec(vls)]
    text: Option<String>,
}

/// With checksums, the VLS placeholder attribute is a fixed-length string in
/// the object header (HDF5 checksums it), not a variable-length one in the
/// global heap (SPEC.md 4.1); both load, appends keep it.
#[test]
fn the_vls_placeholder_is_in_the_object_header_with_checksums() {
    use hdf5::types::TypeDescriptor;
    let rows: Vec<Note> = (0..20)
        .map(|i| Note {
            text: (i % 3 != 0).then(|| format!("t{i}")),
        })
        .collect();
    for (checksum, want) in [
        (true, TypeDescriptor::FixedAscii(3)),
        (false, TypeDescriptor::VarLenUnicode),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let f = h5vec::create_file(dir.path().join("p.h5")).unwrap();
        let opts = SaveOptions::default().checksum(checksum).chunk_length(8);
        h5vec::save_vector_with(&f, "v", &rows[..10], &opts).unwrap();
        h5vec::append_vector_with(&f, "v", &rows[10..], &opts).unwrap();
        let a = f
            .dataset("v/data/text/pointers")
            .unwrap()
            .attr("missing-value-placeholder")
            .unwrap();
        assert_eq!(
            a.dtype().unwrap().to_descriptor().unwrap(),
            want,
            "{checksum}"
        );
        assert_eq!(h5vec::load_vector::<Note>(&f, "v").unwrap(), rows);
        // Only the placeholder's rows are missing.
        let back = h5vec::load_vector::<Note>(&f, "v").unwrap();
        assert_eq!(back.iter().filter(|n| n.text.is_none()).count(), 7);
    }
}
