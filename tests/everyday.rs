//! Everyday use: compression that covers strings and JSON text (SPEC.md
//! sections 4.1 and 6), compaction and copies of vectors (section 8), and
//! the replace hint of every "already exists" error.

use h5vec_tests as common;

use std::collections::BTreeMap;

use h5vec::hdf5::{File, Group};
use h5vec::{
    append_vector, compact_vector, copy_vector, inspect, load_vector, save_vector,
    save_vector_with, ErrorKind, H5Vector, SaveOptions, VectorWriter,
};

#[derive(H5Vector, Debug, Clone, PartialEq)]
#[repr(u8)]
enum Side {
    Buy = 0,
    Sell = 1,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Event {
    Placed { price: f64 },
    Note(String),
    Cancelled,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Order {
    id: u64,
    symbol: String,
    side: Side,
    price: f64,
    coupon: Option<String>,
    #[h5vec(json)]
    fees: BTreeMap<String, f64>,
    fills: Vec<u32>,
    marks: Vec<Option<i32>>,
    tags: Vec<String>,
    event: Event,
}

/// The same fields, the strings and JSON text as HDF5 variable-length
/// strings whatever the compression.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct OrderVlen {
    id: u64,
    #[h5vec(vlen_strings)]
    symbol: String,
    #[h5vec(vlen_strings, json)]
    fees: BTreeMap<String, f64>,
}

fn orders(range: std::ops::Range<usize>) -> Vec<Order> {
    range
        .map(|i| Order {
            id: i as u64,
            symbol: ["AAPL", "MSFT", "NVDA"][i % 3].to_string(),
            side: if i % 2 == 0 { Side::Buy } else { Side::Sell },
            price: 100.0 + i as f64 * 0.25,
            coupon: (i % 4 == 0).then(|| format!("PROMO{}", i % 13)),
            fees: BTreeMap::from([("exchange".to_string(), i as f64 * 0.001)]),
            fills: (0..(i % 4) as u32).collect(),
            marks: vec![Some(i as i32), None],
            tags: vec![format!("t{i}"); i % 3],
            event: match i % 3 {
                0 => Event::Placed { price: i as f64 },
                1 => Event::Note(format!("note {i}")),
                _ => Event::Cancelled,
            },
        })
        .collect()
}

/// Dataset paths of vector `name` (as `inspect` lists them).
fn datasets(g: &Group, name: &str) -> Vec<String> {
    inspect(g, name)
        .unwrap()
        .datasets
        .into_iter()
        .map(|d| d.path)
        .collect()
}

fn has(paths: &[String], p: &str) -> bool {
    paths.iter().any(|x| x == p)
}

fn kind_of(f: &File, node: &str) -> String {
    common::meta_str(&f.group(node).unwrap(), "kind")
}

#[test]
fn compression_puts_strings_and_json_in_the_vls_layout() {
    let v = orders(0..300);
    let f = common::mem_file();
    // Default: HDF5 variable-length strings, as HDF5Vectors.jl writes them.
    save_vector(&f, "plain", &v).unwrap();
    let d = datasets(&f, "plain");
    assert!(has(&d, "/plain/data/symbol/values"), "{d:?}");
    assert!(has(&d, "/plain/data/fees/values"), "{d:?}");
    assert!(has(&d, "/plain/data/coupon/values"), "{d:?}");
    assert!(has(&d, "/plain/data/event/Note/1/values"), "{d:?}");
    assert!(common::str_type(&f.dataset("plain/data/symbol/values").unwrap()).variable);
    // Compressed: every string column is a heap + pointers, deflated.
    save_vector_with(&f, "packed", &v, &SaveOptions::default().deflate(4)).unwrap();
    let d = datasets(&f, "packed");
    for field in ["symbol", "fees", "coupon", "event/Note/1"] {
        assert!(
            has(&d, &format!("/packed/data/{field}/heap")),
            "{field}: {d:?}"
        );
        assert!(
            has(&d, &format!("/packed/data/{field}/pointers")),
            "{field}: {d:?}"
        );
        assert!(
            !has(&d, &format!("/packed/data/{field}/values")),
            "{field}: {d:?}"
        );
    }
    let info = inspect(&f, "packed").unwrap();
    let heap = info
        .datasets
        .iter()
        .find(|d| d.path == "/packed/data/fees/heap")
        .unwrap();
    assert_eq!(heap.filters, ["shuffle", "deflate(4)"]);
    // The JSON node: kind vls_string, codec JSONCodec, encoded String.
    let node = "packed/metadata/schema/children/6";
    assert_eq!(kind_of(&f, node), "vls_string");
    let g = f.group(node).unwrap();
    assert_eq!(common::meta_str(&g, "codec"), "HDF5Vectors.JSONCodec");
    assert_eq!(common::meta_str(&g, "schema"), "h5vec.VLSStringSchema");
    assert_eq!(common::meta_str(&g, "encoded_type"), "String");
    assert_eq!(load_vector::<Order>(&f, "packed").unwrap(), v);
    assert_eq!(load_vector::<Order>(&f, "plain").unwrap(), v);
    // Appends continue either layout.
    let more = orders(300..450);
    append_vector(&f, "packed", &more).unwrap();
    append_vector(&f, "plain", &more).unwrap();
    let all: Vec<Order> = orders(0..450);
    assert_eq!(load_vector::<Order>(&f, "packed").unwrap(), all);
    assert_eq!(load_vector::<Order>(&f, "plain").unwrap(), all);
    // A JSON column alone loads through `h5vec::Json`.
    let fees: Vec<h5vec::Json<BTreeMap<String, f64>>> =
        h5vec::load_column(&f, "packed", "fees").unwrap();
    assert_eq!(fees[7].0, all[7].fees);
}

#[test]
fn variable_length_strings_stay_when_asked_for() {
    let v = orders(0..50);
    let f = common::mem_file();
    let opts = SaveOptions::default().deflate(4).vls_strings(false);
    save_vector_with(&f, "v", &v, &opts).unwrap();
    let d = datasets(&f, "v");
    assert!(has(&d, "/v/data/symbol/values"), "{d:?}");
    assert!(has(&d, "/v/data/fees/values"), "{d:?}");
    assert_eq!(load_vector::<Order>(&f, "v").unwrap(), v);
    // The field attribute, under a compressed vector.
    let w: Vec<OrderVlen> = v
        .iter()
        .map(|o| OrderVlen {
            id: o.id,
            symbol: o.symbol.clone(),
            fees: o.fees.clone(),
        })
        .collect();
    save_vector_with(&f, "w", &w, &SaveOptions::default().zstd(3)).unwrap();
    let d = datasets(&f, "w");
    assert!(has(&d, "/w/data/symbol/values"), "{d:?}");
    assert!(has(&d, "/w/data/fees/values"), "{d:?}");
    assert_eq!(kind_of(&f, "w/metadata/schema/children/3"), "scalar");
    assert_eq!(load_vector::<OrderVlen>(&f, "w").unwrap(), w);
    // Compressing only the byte heaps is enough to move strings there.
    let opts =
        SaveOptions::default().compression_for(h5vec::DatasetRole::Bytes, h5vec::Compression::Lzf);
    save_vector_with(&f, "x", &v, &opts).unwrap();
    assert!(has(&datasets(&f, "x"), "/x/data/symbol/heap"));
}

#[test]
fn arrow_reads_json_text_in_the_vls_layout_as_arrow_json() {
    use arrow_array::cast::AsArray;
    let v = orders(0..20);
    let f = common::mem_file();
    save_vector_with(&f, "v", &v, &SaveOptions::default().deflate(1)).unwrap();
    let batch = h5vec::arrow::read_vector(&f, "v").unwrap();
    let field = batch.schema().field_with_name("fees").unwrap().clone();
    assert_eq!(field.data_type(), &arrow_schema::DataType::LargeUtf8);
    assert_eq!(
        field
            .metadata()
            .get("ARROW:extension:name")
            .map(String::as_str),
        Some("arrow.json")
    );
    let col = batch.column_by_name("fees").unwrap().as_string::<i64>();
    assert_eq!(col.value(3), r#"{"exchange":0.003}"#);
    // And back: the same layout, the same values.
    h5vec::arrow::save_record_batch(&f, "again", &batch, &SaveOptions::default()).unwrap();
    assert_eq!(
        kind_of(&f, "again/metadata/schema/children/6"),
        "vls_string"
    );
    assert_eq!(load_vector::<Order>(&f, "again").unwrap(), v);
}

/// 200 appends of 100 rows, compacted in place and copied to a new file,
/// against one save of the same rows.
#[test]
fn compaction_packs_many_small_appends() {
    let all = orders(0..20_000);
    let appended = common::disk_file();
    save_vector(&appended.file, "orders", &all[..100]).unwrap();
    for part in all[100..].chunks(100) {
        append_vector(&appended.file, "orders", part).unwrap();
    }
    let once = common::disk_file();
    save_vector(&once.file, "orders", &all).unwrap();
    let copy = common::disk_file();
    copy_vector(
        &appended.file,
        "orders",
        &copy.file,
        "orders",
        &SaveOptions::default(),
    )
    .unwrap();
    assert_eq!(load_vector::<Order>(&copy.file, "orders").unwrap(), all);
    // The copy has chunks sized for 20,000 rows, as one save does.
    let chunks = |g: &Group| {
        inspect(g, "orders").unwrap().datasets[0]
            .chunks
            .clone()
            .unwrap()
    };
    assert_eq!(chunks(&copy.file), chunks(&once.file));
    appended.file.flush().unwrap();
    let before = std::fs::metadata(&appended.path).unwrap().len();
    compact_vector(&appended.file, "orders", &SaveOptions::default().deflate(4)).unwrap();
    assert_eq!(load_vector::<Order>(&appended.file, "orders").unwrap(), all);
    let info = inspect(&appended.file, "orders").unwrap();
    assert!(info
        .datasets
        .iter()
        .all(|d| d.filters == ["shuffle", "deflate(4)"]));
    let (a, _d1) = appended.close_and_size();
    let (o, _d2) = once.close_and_size();
    let (c, _d3) = copy.close_and_size();
    println!(
        "200 appends of 100 rows: {:.2} MiB ({:.2} MiB after compact_vector with deflate(4) in \
         place: the file does not shrink); one save: {:.2} MiB; copy_vector of the appended \
         vector to a new file: {:.2} MiB",
        before as f64 / 1048576.0,
        a as f64 / 1048576.0,
        o as f64 / 1048576.0,
        c as f64 / 1048576.0
    );
    // In place, the old copy's space stays: the file does not shrink.
    assert!(
        a > before,
        "after compaction {a} bytes, before {before} bytes"
    );
    assert!(c <= o + o / 10, "copy {c} bytes, one save {o} bytes");
}

#[test]
fn copies_keep_every_layout_detail() {
    let v = orders(0..1000);
    let f = common::mem_file();
    // VLS strings with a missing-value placeholder attribute, dedup, LZF.
    let opts = SaveOptions::default()
        .vls_strings(true)
        .dedup_strings(true)
        .chunk_length(64);
    save_vector_with(&f, "v", &v, &opts).unwrap();
    let g = h5vec::create_group(&f, "g").unwrap();
    copy_vector(
        &f,
        "v",
        &g,
        "w",
        &SaveOptions::default().compression(h5vec::Compression::Lzf),
    )
    .unwrap();
    assert_eq!(load_vector::<Order>(&g, "w").unwrap(), v);
    let ph = f
        .dataset("g/w/data/coupon/pointers")
        .unwrap()
        .attr("missing-value-placeholder")
        .unwrap()
        .read_scalar::<h5vec::hdf5::types::VarLenUnicode>()
        .unwrap();
    assert_eq!(ph.as_str(), "NA");
    // Group attributes (the list's CLASS) come along.
    let marks = f.group("g/w/data/marks").unwrap();
    assert_eq!(
        marks.attr_names().unwrap(),
        f.group("v/data/marks").unwrap().attr_names().unwrap()
    );
    assert!(marks.attr_names().unwrap().contains(&"CLASS".to_string()));
    let info = inspect(&g, "w").unwrap();
    assert!(
        info.datasets.iter().all(|d| d.filters == ["lzf"]),
        "{info:?}"
    );
    // Chunk lengths follow the new options (none set: sized by rows).
    let ids = info
        .datasets
        .iter()
        .find(|d| d.path == "/g/w/data/id/values")
        .unwrap();
    assert_eq!(ids.chunks, Some(vec![1024]));
    // Appending to a copy works as to the original.
    append_vector(&g, "w", &orders(1000..1010)).unwrap();
    assert_eq!(load_vector::<Order>(&g, "w").unwrap(), orders(0..1010));
}

#[test]
fn compaction_errors_name_the_problem() {
    let f = common::mem_file();
    let e = compact_vector(&f, "nothing", &SaveOptions::default()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::NotFound(_)), "{e}");
    save_vector(&f, "a", &[1u8, 2, 3]).unwrap();
    save_vector(&f, "b", &[4u8]).unwrap();
    let e = copy_vector(&f, "a", &f, "b", &SaveOptions::default()).unwrap_err();
    assert_eq!(
        common::bad_name(&e),
        "vector `b` already exists in `/` (use SaveOptions::replace(true) to replace it)"
    );
    copy_vector(&f, "a", &f, "b", &SaveOptions::default().replace(true)).unwrap();
    assert_eq!(load_vector::<u8>(&f, "b").unwrap(), [1, 2, 3]);
    // Not a vector: nothing changes.
    f.create_group("plain").unwrap();
    let e = compact_vector(&f, "plain", &SaveOptions::default()).unwrap_err();
    assert!(!matches!(e.kind(), ErrorKind::NotFound(_)), "{e}");
    assert!(f.group("plain").is_ok());
}

#[test]
fn every_already_exists_error_says_what_to_do() {
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct Row {
        id: i64,
        name: String,
    }
    let hint = "(use SaveOptions::replace(true) to replace it)";
    let f = common::mem_file();
    save_vector(&f, "v", &[1u32]).unwrap();
    let e = save_vector(&f, "v", &[1u32]).unwrap_err();
    assert!(common::bad_name(&e).ends_with(hint), "{e}");
    let e = VectorWriter::<u32>::create(&f, "v", &SaveOptions::default())
        .err()
        .unwrap();
    assert!(common::bad_name(&e).ends_with(hint), "{e}");
    let schema = h5vec::arrow::read_vector(&f, "v").unwrap();
    let e = h5vec::arrow::save_record_batch(&f, "v", &schema, &SaveOptions::default()).unwrap_err();
    assert!(common::bad_name(&e).ends_with(hint), "{e}");
    let rows = [Row {
        id: 1,
        name: "a".into(),
    }];
    h5vec::h5col::save_table(&f, "t", &rows).unwrap();
    let e = h5vec::h5col::save_table(&f, "t", &rows).unwrap_err();
    assert_eq!(
        common::bad_name(&e),
        "table `t` already exists in `/` (a table is not replaced in place: remove it first \
         with `group.unlink(\"t\")`, or save under another name)"
    );
    h5vec::vls::save_strings(&f, "s", &[Some("x".into())]).unwrap();
    let e = h5vec::vls::save_strings(&f, "s", &[None]).unwrap_err();
    assert!(
        common::bad_name(&e).contains("remove it first with `group.unlink(\"s\")`"),
        "{e}"
    );
    let e = copy_vector(&f, "v", &f, "t", &SaveOptions::default()).unwrap_err();
    assert!(common::bad_name(&e).ends_with(hint), "{e}");
    // The hint is right: after unlink, the save goes through.
    f.unlink("t").unwrap();
    h5vec::h5col::save_table(&f, "t", &rows).unwrap();
}
