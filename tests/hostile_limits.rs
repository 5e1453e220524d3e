//! Hostile files that claim more than they store (SPEC.md, section 7):
//! each load returns an error naming the path, within a few seconds, and
//! never aborts the process on an allocation (an abort kills this test
//! binary, which is a failure). The files are valid vectors saved by
//! h5vec, then edited at test time with hdf5-metno.

use h5vec_tests as common;

use std::time::{Duration, Instant};

use common::{invalid, mem_file, mismatch};
use h5vec::hdf5;
use h5vec::{Error, ErrorKind, H5Vector};
use serde::{Deserialize, Serialize};

/// Most time one hostile load may take.
const BOUND: Duration = Duration::from_secs(5);

/// Runs `f`, which must fail within [`BOUND`].
#[track_caller]
fn fails_fast<T: std::fmt::Debug>(what: &str, f: impl FnOnce() -> h5vec::Result<T>) -> Error {
    let t = Instant::now();
    let r = f();
    let took = t.elapsed();
    assert!(took < BOUND, "{what}: took {took:?}");
    match r {
        Ok(v) => panic!("{what}: loaded {v:?}"),
        Err(e) => e,
    }
}

/// Replaces dataset `name` of group `at` with a new chunked 1-D dataset of
/// `T`, extent `extent` (resizable), chunks of `chunk` rows, of which only
/// the first `data.len()` rows are written.
fn replace<T: hdf5::H5Type + Copy>(
    f: &hdf5::File,
    at: &str,
    name: &str,
    extent: u64,
    chunk: usize,
    data: &[T],
) -> hdf5::Dataset {
    let g = f.group(at).unwrap();
    g.unlink(name).unwrap();
    let ds = g
        .new_dataset::<T>()
        .chunk(chunk)
        .shape(hdf5::SimpleExtents::resizable([extent as usize]))
        .create(name)
        .unwrap();
    if !data.is_empty() {
        ds.write_slice(data, 0..data.len()).unwrap();
    }
    ds
}

fn set_count(f: &hdf5::File, v: &str, count: u64) {
    f.dataset(&format!("{v}/metadata/count"))
        .unwrap()
        .write_scalar(&(count as i64))
        .unwrap();
}

#[derive(H5Vector, Debug, PartialEq)]
struct WithBlob {
    #[h5vec(blob)]
    s: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Nest(Option<Box<Nest>>);

#[derive(H5Vector, Debug, PartialEq)]
struct WithNest {
    #[h5vec(blob)]
    n: Nest,
}

#[derive(H5Vector, Debug, PartialEq)]
struct WithVls {
    #[h5vec(vls)]
    name: String,
}

#[derive(H5Vector, Debug, PartialEq)]
struct WithLists {
    tags: Vec<String>,
    xs: Vec<f64>,
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
struct Marker;

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
struct Units {
    a: (),
    m: Marker,
}

/// A blob vector of one row whose bytes are `payload`.
fn blob_file(payload: &[u8]) -> hdf5::File {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[WithBlob { s: "x".into() }]).unwrap();
    replace(&f, "v/data/s", "bytes", payload.len() as u64, 1024, payload);
    f.dataset("v/data/s/stops")
        .unwrap()
        .write_raw(&[payload.len() as i64])
        .unwrap();
    f
}

#[test]
fn bincode_string_claiming_2_pow_40_bytes() {
    // varint marker 0xFD, then the length as a u64, then 3 bytes.
    let mut payload = vec![0xFD];
    payload.extend_from_slice(&(1u64 << 40).to_le_bytes());
    payload.extend_from_slice(b"abc");
    let f = blob_file(&payload);
    let e = fails_fast("2^40 string", || h5vec::load_vector::<WithBlob>(&f, "v"));
    assert_eq!(e.path(), "$.s[0]", "{e}");
    assert!(invalid(&e).contains("cannot decode blob"), "{e}");
}

#[test]
fn bincode_nested_100k_deep() {
    let mut payload = vec![1u8; 100_000];
    payload.push(0);
    let f = mem_file();
    let one = Nest(Some(Box::new(Nest(None))));
    h5vec::save_vector(&f, "v", &[WithNest { n: one }]).unwrap();
    replace(
        &f,
        "v/data/n",
        "bytes",
        payload.len() as u64,
        1024,
        &payload,
    );
    f.dataset("v/data/n/stops")
        .unwrap()
        .write_raw(&[payload.len() as i64])
        .unwrap();
    let e = fails_fast("100k deep", || h5vec::load_vector::<WithNest>(&f, "v"));
    assert_eq!(e.path(), "$.n[0]", "{e}");
    assert!(invalid(&e).contains("nests more than 256 levels"), "{e}");
}

/// The error of a dataset that stores fewer rows than needed: shown as
/// `shown` (the path, and the dataset in parentheses).
#[track_caller]
fn holds_less(e: &Error, shown: &str, need: u64) {
    assert!(e.to_string().starts_with(&format!("{shown}: ")), "{e}");
    let (expected, found) = mismatch(e);
    assert_eq!(
        expected,
        format!("{need} stored rows (count and offsets say so)"),
        "{e}"
    );
    assert!(found.starts_with("a dataset that holds at most"), "{e}");
}

#[test]
fn blob_bytes_sparse_extents() {
    for extent in [1u64 << 40, 3_000_000_000] {
        let f = mem_file();
        h5vec::save_vector(&f, "v", &[WithBlob { s: "x".into() }]).unwrap();
        replace(&f, "v/data/s", "bytes", extent, 1 << 16, &[1u8, b'x']);
        f.dataset("v/data/s/stops")
            .unwrap()
            .write_raw(&[extent as i64])
            .unwrap();
        let e = fails_fast("sparse bytes", || h5vec::load_vector::<WithBlob>(&f, "v"));
        holds_less(&e, "$.s (/v/data/s/bytes)", extent);
        // An append reads the same checks first.
        let e = fails_fast("append", || {
            h5vec::append_vector(&f, "v", &[WithBlob { s: "y".into() }])
        });
        holds_less(&e, "$.s (/v/data/s/bytes)", extent);
    }
}

#[test]
fn vls_heap_sparse_extent() {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[WithVls { name: "ab".into() }]).unwrap();
    let extent = 1u64 << 40;
    replace(&f, "v/data/name", "heap", extent, 1 << 16, b"ab");
    let ptrs = f.dataset("v/data/name/pointers").unwrap();
    common::set_vls_pointer(&ptrs, 0, 0, extent);
    let e = fails_fast("sparse heap", || h5vec::load_vector::<WithVls>(&f, "v"));
    assert_eq!(e.path(), "$.name[0]", "{e}");
    assert!(
        invalid(&e).contains("runs past the end of the heap (65536 bytes)"),
        "{e}"
    );

    // The standalone VLS array reader: the same heap, and pointers whose
    // extent is 1e9 with one written.
    h5vec::vls::save_strings(&f, "arr", &[Some("ab".to_string())]).unwrap();
    replace(&f, "arr", "heap", extent, 1 << 16, b"ab");
    let arr = f.group("arr").unwrap();
    let ptrs = arr.dataset("pointers").unwrap();
    common::set_vls_pointer(&ptrs, 0, 0, extent);
    let e = fails_fast("vls array heap", || h5vec::vls::load_strings(&arr));
    assert_eq!(e.path(), "$[0]", "{e}");
    assert_eq!(e.location(), Some("/arr/pointers"), "{e}");
    ptrs.resize(1_000_000_000usize).unwrap();
    let e = fails_fast("vls array pointers", || h5vec::vls::load_strings(&arr));
    holds_less(&e, "$ (/arr/pointers)", 1_000_000_000);
}

#[test]
fn list_chars_and_values_sparse_extents() {
    let f = mem_file();
    let v = [WithLists {
        tags: vec!["ab".into()],
        xs: vec![1.5],
    }];
    h5vec::save_vector(&f, "v", &v).unwrap();
    let extent = 1u64 << 40;
    replace(&f, "v/data/tags/VALUES", "CHARS", extent, 1 << 16, b"ab");
    f.dataset("v/data/tags/VALUES/OFFSETS")
        .unwrap()
        .write_raw(&[0u64, extent])
        .unwrap();
    let e = fails_fast("sparse CHARS", || h5vec::load_vector::<WithLists>(&f, "v"));
    holds_less(&e, "$.tags[] (/v/data/tags/VALUES/CHARS)", extent);

    let f = mem_file();
    h5vec::save_vector(&f, "v", &v).unwrap();
    let n = 1_000_000_000u64;
    f.dataset("v/data/xs/VALUES")
        .unwrap()
        .resize(n as usize)
        .unwrap();
    f.dataset("v/data/xs/OFFSETS")
        .unwrap()
        .write_raw(&[0u64, n])
        .unwrap();
    let e = fails_fast("sparse VALUES", || h5vec::load_vector::<WithLists>(&f, "v"));
    holds_less(&e, "$.xs[] (/v/data/xs/VALUES)", n);
}

#[test]
fn count_1e9_over_small_datasets() {
    let n = 1_000_000_000u64;
    let f = mem_file();
    let vals: Vec<f64> = (0..10).map(f64::from).collect();
    h5vec::save_vector(&f, "v", &vals).unwrap();
    f.dataset("v/data/values")
        .unwrap()
        .resize(n as usize)
        .unwrap();
    set_count(&f, "v", n);
    let e = fails_fast("count 1e9", || h5vec::load_vector::<f64>(&f, "v"));
    holds_less(&e, "$ (/v/data/values)", n);
    let e = fails_fast("range", || h5vec::load_range::<f64>(&f, "v", 0..5));
    holds_less(&e, "$ (/v/data/values)", n);
    assert_eq!(h5vec::vector_len(&f, "v").unwrap(), n);

    // An h5col table whose NROWS says 1e9.
    #[derive(H5Vector, Debug, PartialEq)]
    struct Row {
        a: f64,
    }
    let rows: Vec<Row> = (0..10).map(|i| Row { a: f64::from(i) }).collect();
    h5vec::h5col::save_table(&f, "t", &rows).unwrap();
    let t = f.group("t").unwrap();
    t.dataset("a").unwrap().resize(n as usize).unwrap();
    t.attr("NROWS").unwrap().write_scalar(&n).unwrap();
    let e = fails_fast("NROWS 1e9", || h5vec::h5col::load_table::<Row>(&f, "t"));
    holds_less(&e, "$.a (/t/a)", n);
}

#[test]
fn count_2_pow_62_over_a_unit_vector() {
    let f = mem_file();
    let v = [Units { a: (), m: Marker }; 3];
    h5vec::save_vector(&f, "u", &v).unwrap();
    let n = 1u64 << 62;
    set_count(&f, "u", n);
    assert_eq!(h5vec::vector_len(&f, "u").unwrap(), n);
    let e = fails_fast("2^62 units", || h5vec::load_vector::<Units>(&f, "u"));
    assert_eq!(e.path(), "$", "{e}");
    assert!(
        invalid(&e).contains("more than the 4294967296 rows h5vec produces"),
        "{e}"
    );
    let e = fails_fast("2^40 range", || {
        h5vec::load_range::<Units>(&f, "u", 0..1 << 40)
    });
    assert_eq!(e.path(), "$", "{e}");
    // Short ranges still load.
    assert_eq!(h5vec::load_range::<Units>(&f, "u", 5..7).unwrap(), v[..2]);
}

/// An int8 dataset holding `bytes` (as stored, two's complement).
fn int8(bytes: &[u8]) -> Vec<i8> {
    bytes.iter().map(|&b| b as i8).collect()
}

#[test]
fn int8_one_byte_columns_are_refused() {
    let text = "label-é0";
    // Blob bytes.
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[WithBlob { s: text.into() }]).unwrap();
    let bytes = f
        .dataset("v/data/s/bytes")
        .unwrap()
        .read_raw::<u8>()
        .unwrap();
    assert!(bytes.iter().any(|&b| b >= 0x80));
    replace(
        &f,
        "v/data/s",
        "bytes",
        bytes.len() as u64,
        64,
        &int8(&bytes),
    );
    let e = h5vec::load_vector::<WithBlob>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$.s", "{e}");
    assert_eq!(e.location(), Some("/v/data/s/bytes"), "{e}");
    assert_eq!(mismatch(&e), ("uint8", "int8"), "{e}");

    // VLS heap.
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[WithVls { name: text.into() }]).unwrap();
    replace(&f, "v/data/name", "heap", 9, 64, &int8(text.as_bytes()));
    let e = h5vec::load_vector::<WithVls>(&f, "v").unwrap_err();
    assert_eq!(e.location(), Some("/v/data/name/heap"), "{e}");
    assert_eq!(mismatch(&e), ("uint8", "int8"), "{e}");

    // The standalone VLS array's heap.
    h5vec::vls::save_strings(&f, "arr", &[Some(text.to_string())]).unwrap();
    replace(&f, "arr", "heap", 9, 64, &int8(text.as_bytes()));
    let e = h5vec::vls::load_strings(&f.group("arr").unwrap()).unwrap_err();
    assert_eq!(e.path(), "$", "{e}");
    assert_eq!(e.location(), Some("/arr/heap"), "{e}");
    assert_eq!(mismatch(&e), ("uint8", "int8"), "{e}");

    // List CHARS.
    let f = mem_file();
    let v = [WithLists {
        tags: vec![text.into()],
        xs: vec![],
    }];
    h5vec::save_vector(&f, "v", &v).unwrap();
    replace(
        &f,
        "v/data/tags/VALUES",
        "CHARS",
        9,
        64,
        &int8(text.as_bytes()),
    );
    let e = h5vec::load_vector::<WithLists>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$.tags[]", "{e}");
    assert_eq!(e.location(), Some("/v/data/tags/VALUES/CHARS"), "{e}");
    assert_eq!(mismatch(&e), ("uint8 CHARS", "int8"), "{e}");
    // And as UInt8 the same bytes load exactly.
    replace(&f, "v/data/tags/VALUES", "CHARS", 9, 64, text.as_bytes());
    assert_eq!(h5vec::load_vector::<WithLists>(&f, "v").unwrap(), v);
}

#[test]
fn non_standard_number_types_are_refused() {
    // A 64-bit float with a wider exponent than IEEE: HDF5 would convert
    // (and clamp) silently.
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[1.5f64]).unwrap();
    let g = f.group("v/data").unwrap();
    g.unlink("values").unwrap();
    let t = hdf5::Datatype::from_type::<f64>().unwrap();
    // SAFETY: a copy of a valid type id, changed before any use.
    let id = h5vec::hdf5::sync::sync(|| unsafe {
        let c = hdf5_sys::h5t::H5Tcopy(t.id());
        // sign 63, exponent 50..63 (13 bits), mantissa 0..50
        hdf5_sys::h5t::H5Tset_fields(c, 63, 50, 13, 0, 50);
        hdf5_sys::h5t::H5Tset_ebias(c, 4095);
        c
    });
    // SAFETY: a fresh type id, owned by the wrapper from here on.
    let odd = unsafe { hdf5::from_id::<hdf5::Datatype>(id) }.unwrap();
    g.new_dataset_builder()
        .empty_as(&odd)
        .shape(hdf5::SimpleExtents::resizable([1usize]))
        .chunk(16)
        .create("values")
        .unwrap();
    let e = h5vec::load_vector::<f64>(&f, "v").unwrap_err();
    assert_eq!(e.location(), Some("/v/data/values"), "{e}");
    let (expected, found) = mismatch(&e);
    assert!(expected.contains("IEEE"), "{e}");
    assert!(found.contains("non-standard float64"), "{e}");
}

#[test]
fn append_into_a_chunk_of_2_pow_29_rows_never_written() {
    let f = mem_file();
    h5vec::save_vector::<u64>(&f, "v", &[]).unwrap();
    replace::<u64>(&f, "v/data", "values", 0, (1 << 29) - 1, &[]);
    let e = fails_fast("append", || h5vec::append_vector(&f, "v", &[7u64]));
    assert_eq!(e.path(), "$", "{e}");
    assert_eq!(e.location(), Some("/v/data/values"), "{e}");
    let (_, found) = mismatch(&e);
    assert!(found.contains("4294967288 bytes"), "{e}");
    assert!(matches!(e.kind(), ErrorKind::Mismatch { .. }));
}

#[derive(H5Vector, Debug, PartialEq)]
struct OneList {
    xs: Vec<f64>,
}

#[test]
fn list_offset_past_the_last_one_in_an_early_batch() {
    // Rows are read in batches of 2^18: an offset at the end of the first
    // batch points 2^40 elements into a sparse VALUES extent; the decrease
    // after it lies in the next batch. It is past OFFSETS[count].
    let n = 300_000u64;
    let v: Vec<OneList> = (0..n).map(|i| OneList { xs: vec![i as f64] }).collect();
    let f = mem_file();
    h5vec::save_vector(&f, "v", &v).unwrap();
    let ods = f.dataset("v/data/xs/OFFSETS").unwrap();
    let mut offs = ods.read_raw::<u64>().unwrap();
    offs[1 << 18] = 1 << 40;
    ods.write_raw(&offs).unwrap();
    f.dataset("v/data/xs/VALUES")
        .unwrap()
        .resize(1usize << 40)
        .unwrap();
    let e = fails_fast("offset 2^40", || h5vec::load_vector::<OneList>(&f, "v"));
    assert_eq!(e.path(), "$.xs[262144]", "{e}");
    assert!(
        invalid(&e).contains("offset 1099511627776 is past the last offset 300000"),
        "{e}"
    );
}

/// Rows below `count` in a chunk that was never written: HDF5 would return
/// fill values nobody saved; the load is an error instead, whether the
/// chunk is whole in the range, holds its first rows or its last.
#[test]
fn rows_in_a_chunk_never_written_are_an_error() {
    let f = mem_file();
    let vals: Vec<u32> = (0..12).collect();
    h5vec::save_vector(&f, "v", &vals).unwrap();
    // Chunks of 4 rows; rows 0..4 and 8..12 written, 4..8 never.
    let ds = replace::<u32>(&f, "v/data", "values", 12, 4, &vals[..4]);
    ds.write_slice(&vals[8..], 8..12).unwrap();
    for (what, range) in [
        ("whole", 0..12u64),
        ("head", 5..12),
        ("tail", 1..6),
        ("inside", 5..7),
    ] {
        let e = fails_fast(what, || h5vec::load_range::<u32>(&f, "v", range.clone()));
        let msg = e.to_string();
        assert_eq!(e.path(), "$", "{msg}");
        assert_eq!(e.location(), Some("/v/data/values"), "{msg}");
        assert!(
            msg.contains("rows 4..8 are in a chunk that was never written"),
            "{what}: {msg}"
        );
    }
    // Rows in written chunks still load exactly.
    assert_eq!(h5vec::load_range::<u32>(&f, "v", 0..4).unwrap(), &vals[..4]);
    assert_eq!(
        h5vec::load_range::<u32>(&f, "v", 8..12).unwrap(),
        &vals[8..]
    );
}

#[derive(H5Vector, Debug, PartialEq)]
struct OneU64 {
    x: u64,
}

/// Rows per chunk of a 4 GiB chunk of u64 (4,294,967,288 bytes: HDF5's
/// largest chunk is 4 GiB - 1).
const HUGE_CHUNK_ROWS: usize = (1 << 29) - 1;

/// A vector `v` of 10 rows whose column `x` (dataset `/v/data/x/values`)
/// is a chunked u64 dataset with chunks of [`HUGE_CHUNK_ROWS`] rows and the
/// filters `set` puts, holding one chunk of the stored bytes `chunk`,
/// written directly (HDF5's own write would fill a 4 GiB buffer first). In
/// a file on disk: unfiltered, the chunk takes 4 GiB of the file's address
/// space (a sparse file).
fn huge_chunk_file(
    dir: &tempfile::TempDir,
    set: impl Fn(hdf5::DatasetBuilder) -> hdf5::DatasetBuilder,
    chunk: &[u8],
) -> hdf5::File {
    let f = hdf5::File::create(dir.path().join("huge.h5")).unwrap();
    let rows: Vec<OneU64> = (0..10).map(|x| OneU64 { x }).collect();
    h5vec::save_vector(&f, "v", &rows).unwrap();
    let g = f.group("v/data/x").unwrap();
    g.unlink("values").unwrap();
    let ds = set(g.new_dataset_builder())
        .empty::<u64>()
        .chunk(HUGE_CHUNK_ROWS)
        .shape(hdf5::SimpleExtents::resizable([10]))
        .create("values")
        .unwrap();
    let off = [0 as hdf5_sys::h5::hsize_t];
    // SAFETY: a valid dataset id of rank 1; `chunk` holds the length given.
    let r = hdf5::sync::sync(|| unsafe {
        hdf5_sys::h5d::H5Dwrite_chunk(
            ds.id(),
            hdf5_sys::h5p::H5P_DEFAULT,
            0,
            off.as_ptr(),
            chunk.len(),
            chunk.as_ptr().cast(),
        )
    });
    assert!(r >= 0, "H5Dwrite_chunk");
    f
}

/// Every load of a vector whose filtered column declares 4 GiB chunks is
/// a clean error naming the column (never an abort on a 4 GiB buffer):
/// `load_vector`, `load_range`, `load_column` and Arrow batches. Run with
/// `ulimit -v` below 4 GiB (scripts/hostile_memory.sh) to show that nothing
/// allocates the chunk.
#[test]
fn filtered_chunks_declared_4_gib_are_refused_on_every_read_path() {
    type Set = fn(hdf5::DatasetBuilder) -> hdf5::DatasetBuilder;
    let cases: [(&str, Set); 5] = [
        ("deflate", |b| b.deflate(6)),
        ("shuffle+deflate", |b| b.shuffle().deflate(6)),
        ("lzf", |b| b.lzf()),
        ("blosc", |b| b.blosc_zstd(5, true)),
        ("fletcher32", |b| b.fletcher32()),
    ];
    for (what, set) in cases {
        let dir = tempfile::tempdir().unwrap();
        let f = huge_chunk_file(&dir, set, b"a few stored bytes, not a chunk");
        let check = |how: &str, e: Error| {
            let msg = e.to_string();
            assert_eq!(
                e.location(),
                Some("/v/data/x/values"),
                "{what} {how}: {msg}"
            );
            let (expected, found) = mismatch(&e);
            assert!(
                expected.contains("chunks of at most 1073741824 bytes"),
                "{what} {how}: {msg}"
            );
            assert!(
                found.contains("chunks of 4294967288 bytes"),
                "{what} {how}: {msg}"
            );
        };
        check(
            "load_vector",
            fails_fast(what, || h5vec::load_vector::<OneU64>(&f, "v")),
        );
        check(
            "load_range",
            fails_fast(what, || h5vec::load_range::<OneU64>(&f, "v", 2..5)),
        );
        check(
            "load_column",
            fails_fast(what, || h5vec::load_column::<u64>(&f, "v", "x")),
        );
        check(
            "arrow",
            fails_fast(what, || {
                h5vec::arrow::batches(&f, "v", 4).and_then(|b| b.collect::<h5vec::Result<Vec<_>>>())
            }),
        );
    }
}

/// An unfiltered column with 4 GiB chunks needs no chunk buffer: its rows
/// are read straight into the result, and load exactly.
#[test]
fn unfiltered_chunks_declared_4_gib_load_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let xs: Vec<u64> = (0..10).map(|x| x * 3).collect();
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let f = huge_chunk_file(&dir, |b| b, &bytes);
    let rows: Vec<OneU64> = xs.iter().map(|&x| OneU64 { x }).collect();
    assert_eq!(h5vec::load_vector::<OneU64>(&f, "v").unwrap(), rows);
    assert_eq!(
        h5vec::load_range::<OneU64>(&f, "v", 2..5).unwrap(),
        &rows[2..5]
    );
    assert_eq!(h5vec::load_column::<u64>(&f, "v", "x").unwrap(), xs);
    let n: usize = h5vec::arrow::batches(&f, "v", 4)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum();
    assert_eq!(n, 10);
}
