//! `h5vec::inspect` and `h5vec::find_containers`: every kind's datasets
//! described exactly (type, shape, chunks, filters, sizes), the schema tree
//! as written, h5col tables and VLS arrays from other tools (tests/golden),
//! and the walk over a file with nested groups, links and a broken vector.

use std::path::PathBuf;

use h5vec::hdf5;
use h5vec::{ContainerInfo, ContainerKind, DatasetInfo, ErrorKind, H5Vector, SaveOptions};
use h5vec_tests as common;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    a: i16,
    b: bool,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Unit;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Every {
    id: u32,
    pos: [f64; 3],
    inner: Inner,
    name: String,
    #[h5vec(vls)]
    label: String,
    #[h5vec(blob)]
    extra: Vec<u16>,
    tags: Vec<String>,
    nums: Vec<i32>,
    score: Option<f64>,
    unit: Unit,
    c: char,
    #[h5vec(vlen_strings)]
    note: String,
}

const ROWS: u32 = 2000;

fn every(i: u32) -> Every {
    Every {
        id: i,
        pos: [f64::from(i), 0.5, -1.0],
        inner: Inner {
            a: (i % 7) as i16,
            b: i.is_multiple_of(2),
        },
        name: format!("name {i}"),
        label: format!("label-{}", i % 10),
        extra: vec![1; (i % 3) as usize],
        tags: (0..i % 3).map(|k| format!("t{k}")).collect(),
        nums: (0..i % 4).map(|k| k as i32).collect(),
        score: (!i.is_multiple_of(5)).then(|| f64::from(i) / 4.0),
        unit: Unit,
        c: 'é',
        note: format!("n{}", i % 3),
    }
}

/// (HDF5 path below /v/data, field path, dtype, shape, chunk shape).
type Row = (&'static str, &'static str, &'static str, Vec<u64>, Vec<u64>);

#[test]
fn every_kind_described_exactly() {
    let file = common::disk_file();
    let values: Vec<Every> = (0..ROWS).map(every).collect();
    let opts = SaveOptions::default().deflate(4).chunk_length(1000);
    h5vec::save_vector_with(&file, "v", &values, &opts).unwrap();
    let info = h5vec::inspect(&file, "v").unwrap();
    assert_eq!(info.path, "/v");
    assert_eq!(info.container, ContainerKind::Vector);
    assert_eq!(info.rows, u64::from(ROWS));

    let n = u64::from(ROWS);
    let list_len = |f: fn(&Every) -> usize| values.iter().map(f).sum::<usize>() as u64;
    let tags = list_len(|e| e.tags.len());
    let nums = list_len(|e| e.nums.len());
    let tag_chars = values
        .iter()
        .flat_map(|e| &e.tags)
        .map(String::len)
        .sum::<usize>() as u64;
    let label_bytes = values.iter().map(|e| e.label.len()).sum::<usize>() as u64;
    let name_bytes = values.iter().map(|e| e.name.len()).sum::<usize>() as u64;
    let bytes_len = file.dataset("v/data/extra/bytes").unwrap().shape()[0] as u64;
    let want: Vec<Row> = vec![
        ("c/values", "$.c", "int32", vec![n], vec![1000]),
        (
            "extra/bytes",
            "$.extra",
            "uint8",
            vec![bytes_len],
            vec![1000],
        ),
        ("extra/stops", "$.extra", "int64", vec![n], vec![1000]),
        ("id/values", "$.id", "uint32", vec![n], vec![1000]),
        ("inner/a/values", "$.inner.a", "int16", vec![n], vec![1000]),
        ("inner/b/values", "$.inner.b", "bool", vec![n], vec![1000]),
        (
            "label/heap",
            "$.label",
            "uint8",
            vec![label_bytes],
            vec![1000],
        ),
        (
            "label/pointers",
            "$.label",
            "compound{offset:uint64,length:uint64}",
            vec![n],
            vec![1000],
        ),
        // With compression, strings use the VLS layout (SPEC 4.1, 6).
        ("name/heap", "$.name", "uint8", vec![name_bytes], vec![1000]),
        (
            "name/pointers",
            "$.name",
            "compound{offset:uint64,length:uint64}",
            vec![n],
            vec![1000],
        ),
        // ... unless the field asks for HDF5 variable-length strings.
        ("note/values", "$.note", "vlen str", vec![n], vec![1000]),
        ("nums/OFFSETS", "$.nums", "uint64", vec![n + 1], vec![1000]),
        ("nums/VALUES", "$.nums[]", "int32", vec![nums], vec![1000]),
        ("pos/values", "$.pos", "float64", vec![n, 3], vec![1000, 3]),
        (
            "score/MASK",
            "$.score",
            "enum(int8){FALSE=0,TRUE=1}",
            vec![n],
            vec![1000],
        ),
        ("score/values", "$.score", "float64", vec![n], vec![1000]),
        ("tags/OFFSETS", "$.tags", "uint64", vec![n + 1], vec![1000]),
        (
            "tags/VALUES/CHARS",
            "$.tags[]",
            "uint8",
            vec![tag_chars],
            vec![1000],
        ),
        (
            "tags/VALUES/OFFSETS",
            "$.tags[]",
            "uint64",
            vec![tags + 1],
            vec![1000],
        ),
    ];
    let mut got: Vec<&DatasetInfo> = info.datasets.iter().collect();
    got.sort_by(|a, b| a.path.cmp(&b.path));
    let got_rows: Vec<_> = got
        .iter()
        .map(|d| {
            (
                d.path.trim_start_matches("/v/data/"),
                d.field_path.as_str(),
                d.dtype.as_str(),
                d.shape.clone(),
                d.chunks.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(got_rows, want);
    for d in &info.datasets {
        assert_eq!(d.filters, ["shuffle", "deflate(4)"], "{}", d.path);
        let mut max = vec![None];
        max.extend(d.shape[1..].iter().map(|&x| Some(x)));
        assert_eq!(d.max_shape, max, "{}", d.path);
        let element: u64 = match d.dtype.as_str() {
            "uint8" | "bool" | "enum(int8){FALSE=0,TRUE=1}" => 1,
            "int16" => 2,
            "int32" | "uint32" => 4,
            "vlen str" => 16,
            "compound{offset:uint64,length:uint64}" => 16,
            _ => 8,
        };
        assert_eq!(
            d.logical_bytes,
            element * d.shape.iter().product::<u64>(),
            "{}",
            d.path
        );
        let ds = file.dataset(&d.path).unwrap();
        assert_eq!(d.stored_bytes, ds.storage_size(), "{}", d.path);
        assert!(d.stored_bytes > 0, "{}", d.path);
    }
    // The parent's datasets come before its children's, fields in order.
    let order: Vec<&str> = info
        .datasets
        .iter()
        .map(|d| d.field_path.as_str())
        .collect();
    let first = |p: &str| order.iter().position(|&x| x == p).unwrap();
    assert!(first("$.id") < first("$.pos") && first("$.pos") < first("$.inner.a"));
    assert!(first("$.tags") < first("$.tags[]") && first("$.score") < first("$.c"));

    // A compressible column: sequential ids shrink under shuffle + deflate.
    let id = info
        .datasets
        .iter()
        .find(|d| d.field_path == "$.id")
        .unwrap();
    assert_eq!(id.logical_bytes, 4 * n);
    assert!(id.stored_bytes * 4 < id.logical_bytes, "{id:?}");
    assert_eq!(
        info.stored_bytes(),
        info.datasets.iter().map(|d| d.stored_bytes).sum::<u64>()
    );
    assert_eq!(
        info.logical_bytes(),
        info.datasets.iter().map(|d| d.logical_bytes).sum::<u64>()
    );
    assert!(info.stored_bytes() < info.logical_bytes());

    // The schema tree: exactly what was written (metadata/serialized_schema,
    // the same tree as JSON), plus the field paths.
    let schema = info.schema.as_ref().unwrap();
    let mut tree = serde_json::to_value(schema).unwrap();
    strip_field_paths(&mut tree);
    let written: Vec<u8> = file
        .dataset("v/metadata/serialized_schema")
        .unwrap()
        .read_raw()
        .unwrap();
    let written: serde_json::Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(tree, written);
    let mut paths = Vec::new();
    node_paths(schema, &mut paths);
    assert_eq!(
        paths,
        [
            ("$", "record"),
            ("$.id", "scalar"),
            ("$.pos", "dense"),
            ("$.inner", "record"),
            ("$.inner.a", "scalar"),
            ("$.inner.b", "scalar"),
            ("$.name", "vls_string"),
            ("$.name", "scalar"),
            ("$.label", "vls_string"),
            ("$.label", "scalar"),
            ("$.extra", "blob"),
            ("$.tags", "list"),
            ("$.tags[]", "string_values"),
            ("$.nums", "list"),
            ("$.nums[]", "scalar"),
            ("$.score", "nullable"),
            ("$.score", "scalar"),
            ("$.unit", "constant"),
            ("$.c", "scalar"),
            ("$.note", "scalar"),
        ]
        .map(|(p, k)| (p.to_string(), k.to_string()))
    );
    assert_eq!(schema.children[1].dimensions, Some(vec![3]));
    assert_eq!(schema.children[6].codec, "h5vec.IdentityCodec");
    assert_eq!(schema.children[10].codec, "HDF5Vectors.CharCodec");
    assert_eq!(schema.children[10].encoded_type.as_deref(), Some("Int32"));
}

fn strip_field_paths(v: &mut serde_json::Value) {
    if let Some(o) = v.as_object_mut() {
        assert!(o.remove("field_path").is_some());
        if let Some(serde_json::Value::Array(c)) = o.get_mut("children") {
            c.iter_mut().for_each(strip_field_paths);
        }
    }
}

fn node_paths(n: &h5vec::SchemaNode, out: &mut Vec<(String, String)>) {
    out.push((n.field_path.clone(), n.kind.clone()));
    for c in &n.children {
        node_paths(c, out);
    }
}

#[test]
fn vls_option_and_other_filters() {
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct S {
        s: String,
        o: Option<String>,
    }
    let file = common::mem_file();
    let v: Vec<S> = (0..10)
        .map(|i| S {
            s: "x".repeat(i),
            o: (i % 2 == 0).then(|| "y".into()),
        })
        .collect();
    let opts = SaveOptions::default().vls_strings(true).zstd(5);
    h5vec::save_vector_with(&file, "s", &v, &opts).unwrap();
    let info = h5vec::inspect(&file, "s").unwrap();
    let got: Vec<_> = info
        .datasets
        .iter()
        .map(|d| (d.path.as_str(), d.field_path.as_str(), d.filters.clone()))
        .collect();
    let z = || vec!["blosc(zstd,5,shuffle)".to_string()];
    assert_eq!(
        got,
        [
            ("/s/data/s/heap", "$.s", z()),
            ("/s/data/s/pointers", "$.s", z()),
            ("/s/data/o/heap", "$.o", z()),
            ("/s/data/o/pointers", "$.o", z()),
        ]
    );
    let o = &info.schema.as_ref().unwrap().children[1];
    assert_eq!(
        (o.kind.as_str(), o.codec.as_str()),
        ("vls_string", "h5vec.PlaceholderCodec")
    );
    // Contiguous datasets have no chunks and a fixed maximum extent.
    let file = common::mem_file();
    h5vec::save_vector(&file, "x", &[1u8, 2]).unwrap();
    file.unlink("x/data/values").unwrap();
    file.new_dataset_builder()
        .with_data(&[5i64, 6])
        .create("x/data/values")
        .unwrap();
    let err = h5vec::inspect(&file, "x");
    let d = &err.unwrap().datasets[0];
    assert_eq!(
        (
            d.dtype.as_str(),
            d.chunks.clone(),
            d.max_shape.clone(),
            d.filters.len()
        ),
        ("int64", None, vec![Some(2)], 0)
    );
    assert_eq!((d.stored_bytes, d.logical_bytes), (16, 16));
}

fn golden(rel: &str) -> hdf5::File {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(rel);
    hdf5::File::open(p).unwrap()
}

#[test]
fn golden_h5col_table() {
    let file = golden("h5col/d_mixed_table.h5");
    let info = h5vec::inspect(&file, "table").unwrap();
    assert_eq!(
        (
            info.path.as_str(),
            info.container,
            info.rows,
            info.schema.is_none()
        ),
        ("/table", ContainerKind::Table, 6, true)
    );
    let got: Vec<_> = info
        .datasets
        .iter()
        .map(|d| {
            (
                d.path.as_str(),
                d.field_path.as_str(),
                d.dtype.as_str(),
                d.shape.clone(),
                d.chunks.clone(),
            )
        })
        .collect();
    let c = |n: u64| Some(vec![n]);
    assert_eq!(
        got,
        [
            ("/table/code", "$.code", "|S4", vec![6], c(64)),
            (
                "/table/flag",
                "$.flag",
                "enum(int8){FALSE=0,TRUE=1}",
                vec![6],
                c(256)
            ),
            ("/table/id", "$.id", "int64", vec![6], c(32)),
            ("/table/name", "$.name", "|S16", vec![6], c(16)),
            ("/table/score", "$.score", "float64", vec![6], c(32)),
            (
                "/table/labels/OFFSETS",
                "$.labels",
                "uint64",
                vec![7],
                c(32)
            ),
            (
                "/table/labels/VALUES/CHARS",
                "$.labels[]",
                "uint8",
                vec![12],
                c(256)
            ),
            (
                "/table/labels/VALUES/OFFSETS",
                "$.labels[]",
                "uint64",
                vec![7],
                c(32)
            ),
            (
                "/table/samples/MASK",
                "$.samples",
                "enum(int8){FALSE=0,TRUE=1}",
                vec![6],
                c(256)
            ),
            (
                "/table/samples/OFFSETS",
                "$.samples",
                "uint64",
                vec![7],
                c(32)
            ),
            (
                "/table/samples/VALUES",
                "$.samples[]",
                "float64",
                vec![5],
                c(32)
            ),
        ]
    );
    for d in &info.datasets {
        assert_eq!((d.filters.len(), d.stored_bytes), (0, 256), "{}", d.path);
        assert_eq!(d.max_shape, [None]);
    }
    assert_eq!(
        info.logical_bytes(),
        4 * 6 + 6 + 48 + 16 * 6 + 48 + 56 + 12 + 56 + 6 + 56 + 40
    );
    let found = h5vec::find_containers(&file).unwrap();
    assert_eq!(
        found,
        [ContainerInfo {
            path: "/table".into(),
            kind: ContainerKind::Table,
            rows: 6,
            columns: 7,
            stored_bytes: 11 * 256,
            problem: None,
        }]
    );
}

#[test]
fn golden_vls_array() {
    let file = golden("vls/dolomite_strings.h5");
    let info = h5vec::inspect(&file, "atomic_vector").unwrap();
    assert_eq!(
        (
            info.path.as_str(),
            info.container,
            info.rows,
            info.schema.is_none()
        ),
        ("/atomic_vector", ContainerKind::VlsArray, 14, true)
    );
    let got: Vec<_> = info
        .datasets
        .iter()
        .map(|d| {
            (
                d.path.as_str(),
                d.field_path.as_str(),
                d.dtype.as_str(),
                d.shape.clone(),
                d.max_shape.clone(),
                d.chunks.clone(),
                d.filters.clone(),
                d.stored_bytes,
                d.logical_bytes,
            )
        })
        .collect();
    let gz = || vec!["deflate(4)".to_string()];
    assert_eq!(
        got,
        [
            (
                "/atomic_vector/heap",
                "$",
                "uint8",
                vec![395],
                vec![Some(395)],
                Some(vec![395]),
                gz(),
                101,
                395
            ),
            (
                "/atomic_vector/pointers",
                "$",
                "compound{offset:uint64,length:uint64}",
                vec![14],
                vec![Some(14)],
                Some(vec![14]),
                gz(),
                73,
                14 * 16,
            ),
        ]
    );
    let found = h5vec::find_containers(&file).unwrap();
    assert_eq!(
        found,
        [ContainerInfo {
            path: "/atomic_vector".into(),
            kind: ContainerKind::VlsArray,
            rows: 14,
            columns: 1,
            stored_bytes: 174,
            problem: None,
        }]
    );
}

#[test]
fn find_containers_walks_hard_links_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.h5");
    let file = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&file, "top", &[1.5f64, 2.5]).unwrap();
    let a = h5vec::create_group(&file, "a").unwrap();
    h5vec::save_vector(&a, "pairs", &[(1u8, 2i64), (3, 4), (5, 6)]).unwrap();
    let b = a.create_group("b").unwrap();
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct Row {
        id: i64,
        tags: Vec<String>,
        name: String,
    }
    let rows = vec![Row {
        id: 1,
        tags: vec!["x".into()],
        name: "n".into(),
    }];
    h5vec::h5col::save_table(&b, "t", &rows).unwrap();
    let c = b.create_group("c").unwrap();
    h5vec::vls::save_strings(&c, "s", &[Some("a".into()), None, Some("b".into())]).unwrap();
    // A second hard link to group b (visited once), a soft link to a
    // vector, an external link, a dangling soft link, a plain dataset.
    file.link_hard("a/b", "b_again").unwrap();
    file.link_soft("/a/pairs", "alias").unwrap();
    file.link_external("other.h5", "/v", "ext").unwrap();
    file.link_soft("/nowhere", "dangling").unwrap();
    file.new_dataset_builder()
        .with_data(&[1u8])
        .create("plain")
        .unwrap();
    // A broken vector: its count is gone.
    h5vec::save_vector(&a, "broken", &[7u16]).unwrap();
    a.unlink("broken/metadata/count").unwrap();
    // A vector with a soft link inside: the walk of SPEC 7 refuses it.
    h5vec::save_vector(&file, "linked", &[7u16]).unwrap();
    file.unlink("linked/data/values").unwrap();
    file.link_soft("/top/data/values", "linked/data/values")
        .unwrap();

    let found = h5vec::find_containers(&file).unwrap();
    let brief: Vec<_> = found
        .iter()
        .map(|c| {
            (
                c.path.as_str(),
                c.kind,
                c.rows,
                c.columns,
                c.problem.is_some(),
            )
        })
        .collect();
    use ContainerKind::*;
    // `a` is walked before `b_again`: b is listed by its first path.
    let mut want = vec![
        ("/a/broken", Vector, 0, 0, true),
        ("/a/pairs", Vector, 3, 2, false),
        ("/a/b/t", Table, 1, 3, false),
        ("/a/b/c/s", VlsArray, 3, 1, false),
        ("/linked", Vector, 0, 0, true),
        ("/top", Vector, 2, 1, false),
    ];
    want.sort_by(|x, y| x.0.cmp(y.0));
    assert_eq!(brief, want);
    let problem = |p: &str| {
        found
            .iter()
            .find(|c| c.path == p)
            .unwrap()
            .problem
            .clone()
            .unwrap()
    };
    assert_eq!(
        problem("/a/broken"),
        "$ (metadata/count): expected a scalar Int64 `count`, found nothing"
    );
    assert!(
        problem("/linked").contains("found a soft link to `/top/data/values`"),
        "{}",
        problem("/linked")
    );
    for c in found.iter().filter(|c| c.problem.is_none()) {
        let (parent, name) = c.path.rsplit_once('/').unwrap();
        let parent = file
            .group(if parent.is_empty() { "/" } else { parent })
            .unwrap();
        let info = h5vec::inspect(&parent, name).unwrap();
        assert_eq!(c.stored_bytes, info.stored_bytes());
        assert!(c.stored_bytes > 0);
    }

    // Below a group, and on a container itself.
    let below: Vec<_> = h5vec::find_containers(&a)
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(below, ["/a/b/c/s", "/a/b/t", "/a/broken", "/a/pairs"]);
    let own = h5vec::find_containers(&a.group("pairs").unwrap()).unwrap();
    assert_eq!(own.len(), 1);
    assert_eq!((own[0].path.as_str(), own[0].rows), ("/a/pairs", 3));
    let none = h5vec::find_containers(&c).unwrap();
    assert_eq!(none[0].path, "/a/b/c/s");
}

#[test]
fn inspect_errors_name_the_container() {
    let file = common::mem_file();
    let e = h5vec::inspect(&file, "missing").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::NotFound(_)), "{e}");
    assert_eq!((e.path(), e.location()), ("$", Some("/missing")));
    assert!(matches!(
        h5vec::inspect(&file, "a/b").unwrap_err().kind(),
        ErrorKind::BadName(_)
    ));
    h5vec::save_vector(&file, "v", &[1i32]).unwrap();
    let meta = file.group("v/metadata").unwrap();
    meta.unlink("format_version").unwrap();
    meta.new_dataset::<i64>()
        .shape(())
        .create("format_version")
        .unwrap()
        .write_scalar(&2i64)
        .unwrap();
    let e = h5vec::inspect(&file, "v").unwrap_err();
    assert_eq!(
        e.to_string(),
        "$ (metadata/format_version): expected 1, found 2"
    );
    // A group that is nothing h5vec knows is opened as a vector.
    file.create_group("g").unwrap();
    let e = h5vec::inspect(&file, "g").unwrap_err();
    assert_eq!(common::mismatch(&e).0, "members [\"data\", \"metadata\"]");
}

/// A datatype made with the C API, owned by an `hdf5::Datatype`.
fn make_type(f: impl FnOnce() -> hdf5_sys::h5i::hid_t) -> hdf5::Datatype {
    // SAFETY: `f` returns a fresh type id, which the `Datatype` then owns.
    hdf5::sync::sync(|| unsafe { hdf5::from_id::<hdf5::Datatype>(f()) }.unwrap())
}

#[test]
fn types_h5vec_never_writes_are_described() {
    use hdf5_sys::h5t;
    #[derive(H5Vector, Debug, Clone, PartialEq)]
    struct Row {
        id: i64,
    }
    let file = common::mem_file();
    h5vec::h5col::save_table(&file, "t", &[Row { id: 1 }, Row { id: 2 }]).unwrap();
    let t = file.group("t").unwrap();
    // SAFETY: C API type constructors on predefined types and on the fresh
    // types they return, under the lock (so for the three below).
    let be = make_type(|| unsafe { h5t::H5Tcopy(*h5t::H5T_STD_I32BE) });
    // SAFETY: as above.
    let en = make_type(|| unsafe {
        let e = h5t::H5Tenum_create(*h5t::H5T_NATIVE_UINT16);
        for i in 0..40u16 {
            let name = std::ffi::CString::new(format!("m{i}")).unwrap();
            let v = i * 1000;
            h5t::H5Tenum_insert(e, name.as_ptr(), (&v as *const u16).cast());
        }
        e
    });
    // SAFETY: C API type constructors on predefined types and on the fresh types they return, under the lock.
    let cmp = make_type(|| unsafe {
        let arr = h5t::H5Tarray_create2(*h5t::H5T_IEEE_F32LE, 1, [2u64].as_ptr());
        let c = h5t::H5Tcreate(h5t::H5T_class_t::H5T_COMPOUND, 9);
        h5t::H5Tinsert(c, c"a".as_ptr(), 0, arr);
        h5t::H5Tinsert(c, c"b".as_ptr(), 8, *h5t::H5T_STD_U8LE);
        hdf5_sys::h5t::H5Tclose(arr);
        c
    });
    // SAFETY: C API type constructors on predefined types and on the fresh types they return, under the lock.
    let vl = make_type(|| unsafe { h5t::H5Tvlen_create(*h5t::H5T_STD_I16LE) });
    for (name, dt) in [("be", &be), ("en", &en), ("cmp", &cmp), ("vl", &vl)] {
        t.new_dataset_builder()
            .empty_as(dt)
            .shape(2)
            .create(name)
            .unwrap();
    }
    let info = h5vec::inspect(&file, "t").unwrap();
    let got: Vec<_> = info
        .datasets
        .iter()
        .map(|d| (d.field_path.as_str(), d.dtype.as_str(), d.logical_bytes))
        .collect();
    let members: Vec<String> = (0..32).map(|i| format!("m{i}={}", i * 1000)).collect();
    let en = format!("enum(uint16){{{},...(8 more)}}", members.join(","));
    assert_eq!(
        got,
        [
            ("$.be", "int32 (big-endian)", 8),
            ("$.cmp", "compound{a:array(float32,[2]),b:uint8}", 18),
            ("$.en", en.as_str(), 4),
            ("$.id", "int64", 16),
            ("$.vl", "vlen(int16)", 32),
        ]
    );
    let found = h5vec::find_containers(&file).unwrap();
    assert_eq!((found[0].path.as_str(), found[0].columns), ("/t", 5));
}

#[test]
fn find_containers_survives_a_cycle() {
    let file = common::mem_file();
    let g = file.create_group("g").unwrap();
    let h = g.create_group("h").unwrap();
    h5vec::save_vector(&h, "v", &[1u8]).unwrap();
    // /g/h/up is /g again: a cycle of hard links.
    file.link_hard("g", "g/h/up").unwrap();
    let found = h5vec::find_containers(&file).unwrap();
    let paths: Vec<_> = found.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["/g/h/v"]);
    assert_eq!(found[0].problem, None);
}

#[derive(H5Vector, Clone)]
enum Ev {
    Idle,
    Tick(f64),
    Fill { qty: i32 },
}

#[derive(H5Vector, Clone)]
struct WithUnion {
    ev: Ev,
    maybe: Option<Ev>,
    list: Vec<Ev>,
}

#[test]
fn unions_described_with_variant_paths() {
    let file = common::mem_file();
    let ev = |i: u32| match i % 3 {
        0 => Ev::Idle,
        1 => Ev::Tick(0.5),
        _ => Ev::Fill { qty: 3 },
    };
    let values: Vec<WithUnion> = (0..6)
        .map(|i| WithUnion {
            ev: ev(i),
            maybe: (i % 2 == 0).then(|| ev(i + 1)),
            list: (0..i % 3).map(ev).collect(),
        })
        .collect();
    h5vec::save_vector(&file, "v", &values).unwrap();
    let info = h5vec::inspect(&file, "v").unwrap();
    let mut got: Vec<(String, String, String, Vec<u64>)> = info
        .datasets
        .iter()
        .map(|d| {
            (
                d.path.trim_start_matches("/v/data/").to_owned(),
                d.field_path.clone(),
                d.dtype.clone(),
                d.shape.clone(),
            )
        })
        .collect();
    got.sort();
    let tag = "enum(uint8){Idle=0,Tick=1,Fill=2}";
    let row =
        |p: &str, f: &str, t: &str, n: u64| (p.to_owned(), f.to_owned(), t.to_owned(), vec![n]);
    // Rows: ev Idle, Tick, Fill, Idle, Tick, Fill; maybe: rows 0, 2, 4 some
    // (Tick, Idle, Fill), rows 1, 3, 5 the Idle placeholder; list: 0, 1, 2,
    // 0, 1, 2 elements (Idle; Idle, Tick; ...).
    let want = vec![
        row("ev/Fill/qty/values", "$.ev.Fill.qty", "int32", 2),
        row("ev/INDEX", "$.ev", "uint64", 6),
        row("ev/TAG", "$.ev", tag, 6),
        row("ev/Tick/1/values", "$.ev.Tick.1", "float64", 2),
        row("list/OFFSETS", "$.list", "uint64", 7),
        row(
            "list/VALUES/Fill/qty/values",
            "$.list[].Fill.qty",
            "int32",
            0,
        ),
        row("list/VALUES/INDEX", "$.list[]", "uint64", 6),
        row("list/VALUES/TAG", "$.list[]", tag, 6),
        row("list/VALUES/Tick/1/values", "$.list[].Tick.1", "float64", 2),
        row("maybe/Fill/qty/values", "$.maybe.Fill.qty", "int32", 1),
        row("maybe/INDEX", "$.maybe", "uint64", 6),
        row("maybe/MASK", "$.maybe", "enum(int8){FALSE=0,TRUE=1}", 6),
        row("maybe/TAG", "$.maybe", tag, 6),
        row("maybe/Tick/1/values", "$.maybe.Tick.1", "float64", 1),
    ];
    assert_eq!(got, want);
    // The schema tree names the variants as fields.
    let mut paths = Vec::new();
    node_paths(&info.schema.unwrap(), &mut paths);
    assert!(
        paths.contains(&("$.ev.Fill".into(), "record".into())),
        "{paths:?}"
    );
    assert!(
        paths.contains(&("$.ev.Idle".into(), "constant".into())),
        "{paths:?}"
    );
    assert!(
        paths.contains(&("$.list[].Tick.1".into(), "scalar".into())),
        "{paths:?}"
    );
}
