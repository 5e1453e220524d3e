//! The `h5vec` command run on real files: fixtures written with h5vec's
//! derive, the golden h5col and VLS files, files damaged with HDF5.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema};
use h5vec::hdf5::Dataset;
use h5vec::H5Vector;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use predicates::prelude::*;
use tempfile::TempDir;

mod common;
use common::*;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pos {
    x: f64,
    y: f32,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    label: String,
    pos: Pos,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Event {
    id: i64,
    name: String,
    score: Option<f64>,
    tags: Vec<String>,
    counts: Vec<u16>,
    inner: Inner,
    grid: [[i32; 2]; 3],
    flag: bool,
    note: Option<String>,
    letter: char,
    at: Option<Pos>,
}

fn events() -> Vec<Event> {
    (0..5)
        .map(|i| Event {
            id: i as i64 * 10 - 20,
            name: format!("event {i}"),
            score: (i % 2 == 0).then_some(i as f64 * 1.5),
            tags: (0..i % 3).map(|t| format!("t{t}")).collect(),
            counts: (0..i as u16).collect(),
            inner: Inner {
                label: ["a,b", "quote \"q\"", "", "x", "é"][i].into(),
                pos: Pos {
                    x: i as f64 - 0.5,
                    y: i as f32 * 0.25,
                },
            },
            grid: std::array::from_fn(|r| {
                std::array::from_fn(|c| i as i32 * 100 + r as i32 * 10 + c as i32)
            }),
            flag: i % 3 == 0,
            note: (i != 2).then(|| format!("n{i}")),
            letter: ['a', 'é', '日', '🎉', 'Z'][i],
            at: (i % 2 == 1).then_some(Pos {
                x: i as f64,
                y: -1.0,
            }),
        })
        .collect()
}

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden");

/// A file with the events, a plain `u32` vector and a group holding a VLS
/// array; returns its directory (kept alive by the caller) and path.
fn fixture() -> (TempDir, PathBuf) {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.h5");
    let file = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&file, "events", &events()).unwrap();
    h5vec::save_vector(&file, "xs", &(0..100u32).map(|i| i * 3).collect::<Vec<_>>()).unwrap();
    let g = h5vec::create_group(&file, "grp").unwrap();
    h5vec::vls::save_strings(
        &g,
        "names",
        &[Some("ann".to_string()), None, Some("bo".into())],
    )
    .unwrap();
    drop(g);
    drop(file);
    (dir, path)
}

fn golden(rel: &str) -> String {
    format!("{GOLDEN}/{rel}")
}

// ---- ls, schema, info -------------------------------------------------

#[test]
fn ls_lists_every_container() {
    let (_dir, path) = fixture();
    assert_eq!(
        run_ok(&["ls", s(&path)]),
        "\
PATH        KIND       ROWS  COLUMNS    STORED
/events     vector        5       11  91.0 KiB
/grp/names  vls array     3        1      87 B
/xs         vector      100        1   4.0 KiB
"
    );
    assert_eq!(
        run_ok(&["ls", s(&path), "/grp"]),
        "\
PATH        KIND       ROWS  COLUMNS  STORED
/grp/names  vls array     3        1    87 B
"
    );
    assert_eq!(
        run_ok(&["ls", &golden("h5col/d_mixed_table.h5")]),
        "\
PATH    KIND         ROWS  COLUMNS   STORED
/table  h5col table     6        7  2.8 KiB
"
    );
}

#[test]
fn ls_shows_why_a_container_cannot_be_read() {
    let (_dir, path) = fixture();
    {
        let file = h5vec::open_file_rw(&path).unwrap();
        file.unlink("xs/metadata/count").unwrap();
    }
    let out = run_ok(&["ls", s(&path)]);
    let xs = out.lines().find(|l| l.starts_with("/xs")).unwrap();
    assert!(
        xs.starts_with("/xs         vector        -        -         -  $ (metadata/count): "),
        "{out}"
    );
    assert!(xs.contains("count"), "{xs}");
    // validate reports it too.
    let (stdout, _) = run_code(&["validate", s(&path)], 1);
    assert!(
        stdout.starts_with(&format!("{}:/xs: $ (metadata/count): ", s(&path))),
        "{stdout}"
    );
}

#[test]
fn schema_prints_the_tree() {
    let (_dir, path) = fixture();
    assert_eq!(
        run_ok(&["schema", s(&path), "events"]),
        "\
FIELD          KIND           CODEC                      ENCODED  DIMS    LOGICAL TYPE
$              record         HDF5Vectors.StructCodec                     cli::Event
$.id           scalar         HDF5Vectors.IdentityCodec  Int64            i64
$.name         scalar         HDF5Vectors.IdentityCodec  String           alloc::string::String
$.score        nullable       h5vec.MaskCodec                             core::option::Option<f64>
$.score        scalar         HDF5Vectors.IdentityCodec  Float64          f64
$.tags         list           h5vec.IdentityCodec                         alloc::vec::Vec<alloc::string::String>
$.tags[]       string_values  h5vec.IdentityCodec        String           alloc::string::String
$.counts       list           h5vec.IdentityCodec                         alloc::vec::Vec<u16>
$.counts[]     scalar         HDF5Vectors.IdentityCodec  UInt16           u16
$.inner        record         HDF5Vectors.StructCodec                     cli::Inner
$.inner.label  scalar         HDF5Vectors.IdentityCodec  String           alloc::string::String
$.inner.pos    record         HDF5Vectors.StructCodec                     cli::Pos
$.inner.pos.x  scalar         HDF5Vectors.IdentityCodec  Float64          f64
$.inner.pos.y  scalar         HDF5Vectors.IdentityCodec  Float32          f32
$.grid         dense          HDF5Vectors.IdentityCodec  Int32    [2, 3]  [[i32; 2]; 3]
$.flag         scalar         HDF5Vectors.IdentityCodec  Bool             bool
$.note         nullable       h5vec.MaskCodec                             core::option::Option<alloc::string::String>
$.note         scalar         HDF5Vectors.IdentityCodec  String           alloc::string::String
$.letter       scalar         HDF5Vectors.CharCodec      Int32            char
$.at           nullable       h5vec.MaskCodec                             core::option::Option<cli::Pos>
$.at           record         HDF5Vectors.StructCodec                     cli::Pos
$.at.x         scalar         HDF5Vectors.IdentityCodec  Float64          f64
$.at.y         scalar         HDF5Vectors.IdentityCodec  Float32          f32
"
    );
    assert_eq!(
        run_ok(&["schema", s(&path), "/xs", "--json"]),
        r#"{
  "field_path": "$",
  "kind": "scalar",
  "schema": "HDF5Vectors.ScalarSchema",
  "codec": "HDF5Vectors.IdentityCodec",
  "logical_type": "u32",
  "encoded_type": "UInt32"
}
"#
    );
    let json: serde_json::Value =
        serde_json::from_str(&run_ok(&["schema", s(&path), "events", "--json"])).unwrap();
    assert_eq!(json["kind"], "record");
    assert_eq!(json["field_names"][6], "grid");
    assert_eq!(json["children"][6]["dimensions"], serde_json::json!([2, 3]));
    assert_eq!(json["children"][3]["children"][0]["field_path"], "$.tags[]");
    assert_eq!(
        json["children"][10]["children"][0]["children"][1]["field_path"],
        "$.at.y"
    );
    // Tables and VLS arrays store no tree: their columns.
    assert_eq!(
        run_ok(&["schema", s(&path), "grp/names"]),
        "\
vls array /grp/names (no schema tree); its columns:
COLUMN  ARROW TYPE  NULLABLE
value   LargeUtf8   yes
"
    );
    assert_eq!(
        run_ok(&["schema", &golden("h5col/d_mixed_table.h5"), "table"]),
        "\
h5col table /table (no schema tree); its columns:
COLUMN   ARROW TYPE                     NULLABLE
id       Int64                          yes
name     LargeUtf8                      yes
score    Float64                        yes
flag     Boolean                        no
samples  LargeList(Float64)             yes
code     LargeUtf8                      yes
labels   LargeList(non-null LargeUtf8)  no
"
    );
    let (_, err) = run_code(&["schema", s(&path), "grp/names", "--json"], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: {}:/grp/names (vls array) stores no schema tree (`h5vec schema` without --json lists its columns)\n",
            s(&path)
        )
    );
}

#[test]
fn info_describes_every_dataset() {
    let (_dir, path) = fixture();
    assert_eq!(
        run_ok(&["info", s(&path), "xs"]),
        "\
/xs: vector, 100 rows, 1 datasets
DATASET          FIELD  DTYPE   SHAPE   CHUNKS    STORED  LOGICAL  RATIO
/xs/data/values  $      uint32  (100,)  (1024,)  4.0 KiB    400 B  0.10x
total                                            4.0 KiB    400 B  0.10x
"
    );
    let out = run_ok(&["info", s(&path), "events"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "/events: vector, 5 rows, 20 datasets");
    assert!(lines[1].starts_with("DATASET "), "{out}");
    let want = [
        ("/events/data/id/values", "$.id", "int64", "(5,)"),
        (
            "/events/data/score/MASK",
            "$.score",
            "enum(int8){FALSE=0,TRUE=1}",
            "(5,)",
        ),
        (
            "/events/data/tags/VALUES/CHARS",
            "$.tags[]",
            "uint8",
            "(8,)",
        ),
        ("/events/data/grid/values", "$.grid", "int32", "(5, 3, 2)"),
        ("/events/data/flag/values", "$.flag", "bool", "(5,)"),
        ("/events/data/at/y/values", "$.at.y", "float32", "(5,)"),
    ];
    for (ds, field, dtype, shape) in want {
        let line = lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(ds))
            .unwrap_or_else(|| panic!("no {ds} in\n{out}"));
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells[1], field, "{line}");
        assert_eq!(cells[2], dtype, "{line}");
        assert_eq!(
            line.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .nth(3),
            Some(shape),
            "{line}"
        );
    }
    assert!(lines.last().unwrap().starts_with("total "), "{out}");
    // Filters appear once a dataset has some.
    let file = h5vec::open_file_rw(&path).unwrap();
    let opts = h5vec::SaveOptions::default().deflate(4).chunk_length(64);
    h5vec::save_vector_with(&file, "zs", &vec![1.5f64; 256], &opts).unwrap();
    drop(file);
    let out = run_ok(&["info", s(&path), "zs"]);
    assert!(
        out.lines().nth(1).unwrap().contains("CHUNKS  FILTERS"),
        "{out}"
    );
    assert!(out.contains("(256,)  (64,)   shuffle,deflate(4)"), "{out}");
}

// ---- head, cat ---------------------------------------------------------

const EVENTS_TABLE: &str = "\
+-----+---------+-------+----------+--------------+--------------------------------------------+--------------------------------------+-------+------+--------+-------------------+
| id  | name    | score | tags     | counts       | inner                                      | grid                                 | flag  | note | letter | at                |
+-----+---------+-------+----------+--------------+--------------------------------------------+--------------------------------------+-------+------+--------+-------------------+
| -20 | event 0 | 0.0   | []       | []           | {label: a,b, pos: {x: -0.5, y: 0.0}}       | [[0, 1], [10, 11], [20, 21]]         | true  | n0   | a      | null              |
| -10 | event 1 | null  | [t0]     | [0]          | {label: quote \"q\", pos: {x: 0.5, y: 0.25}} | [[100, 101], [110, 111], [120, 121]] | false | n1   | é      | {x: 1.0, y: -1.0} |
| 0   | event 2 | 3.0   | [t0, t1] | [0, 1]       | {label: , pos: {x: 1.5, y: 0.5}}           | [[200, 201], [210, 211], [220, 221]] | false | null | 日     | null              |
| 10  | event 3 | null  | []       | [0, 1, 2]    | {label: x, pos: {x: 2.5, y: 0.75}}         | [[300, 301], [310, 311], [320, 321]] | true  | n3   | 🎉     | {x: 3.0, y: -1.0} |
| 20  | event 4 | 6.0   | [t0]     | [0, 1, 2, 3] | {label: é, pos: {x: 3.5, y: 1.0}}          | [[400, 401], [410, 411], [420, 421]] | false | n4   | Z      | null              |
+-----+---------+-------+----------+--------------+--------------------------------------------+--------------------------------------+-------+------+--------+-------------------+
";

const EVENTS_JSONL: &str = r#"{"id":-20,"name":"event 0","score":0.0,"tags":[],"counts":[],"inner":{"label":"a,b","pos":{"x":-0.5,"y":0.0}},"grid":[[0,1],[10,11],[20,21]],"flag":true,"note":"n0","letter":"a","at":null}
{"id":-10,"name":"event 1","score":null,"tags":["t0"],"counts":[0],"inner":{"label":"quote \"q\"","pos":{"x":0.5,"y":0.25}},"grid":[[100,101],[110,111],[120,121]],"flag":false,"note":"n1","letter":"é","at":{"x":1.0,"y":-1.0}}
{"id":0,"name":"event 2","score":3.0,"tags":["t0","t1"],"counts":[0,1],"inner":{"label":"","pos":{"x":1.5,"y":0.5}},"grid":[[200,201],[210,211],[220,221]],"flag":false,"note":null,"letter":"日","at":null}
{"id":10,"name":"event 3","score":null,"tags":[],"counts":[0,1,2],"inner":{"label":"x","pos":{"x":2.5,"y":0.75}},"grid":[[300,301],[310,311],[320,321]],"flag":true,"note":"n3","letter":"🎉","at":{"x":3.0,"y":-1.0}}
{"id":20,"name":"event 4","score":6.0,"tags":["t0"],"counts":[0,1,2,3],"inner":{"label":"é","pos":{"x":3.5,"y":1.0}},"grid":[[400,401],[410,411],[420,421]],"flag":false,"note":"n4","letter":"Z","at":null}
"#;

const EVENTS_CSV: &str = r#"id,name,score,tags,counts,inner.label,inner.pos.x,inner.pos.y,grid,flag,note,letter,at.x,at.y
-20,event 0,0.0,[],[],"a,b",-0.5,0.0,"[[0,1],[10,11],[20,21]]",true,n0,a,,
-10,event 1,,"[""t0""]",[0],"quote ""q""",0.5,0.25,"[[100,101],[110,111],[120,121]]",false,n1,é,1.0,-1.0
0,event 2,3.0,"[""t0"",""t1""]","[0,1]","",1.5,0.5,"[[200,201],[210,211],[220,221]]",false,,日,,
10,event 3,,[],"[0,1,2]",x,2.5,0.75,"[[300,301],[310,311],[320,321]]",true,n3,🎉,3.0,-1.0
20,event 4,6.0,"[""t0""]","[0,1,2,3]",é,3.5,1.0,"[[400,401],[410,411],[420,421]]",false,n4,Z,,
"#;

#[test]
fn head_and_cat_print_rows_in_each_format() {
    let (_dir, path) = fixture();
    let p = s(&path);
    assert_eq!(run_ok(&["head", p, "events"]), EVENTS_TABLE);
    assert_eq!(run_ok(&["cat", p, "events"]), EVENTS_TABLE);
    assert_eq!(
        run_ok(&["cat", p, "events", "--format", "jsonl"]),
        EVENTS_JSONL
    );
    assert_eq!(run_ok(&["cat", p, "events", "--format", "csv"]), EVENTS_CSV);
    assert_eq!(
        run_ok(&["head", p, "xs", "-n", "3"]),
        "+-------+\n| value |\n+-------+\n| 0     |\n| 3     |\n| 6     |\n+-------+\n"
    );
    // head defaults to 10 rows.
    assert_eq!(
        run_ok(&["head", p, "xs", "--format", "csv"])
            .lines()
            .count(),
        11
    );
    assert_eq!(
        run_ok(&["cat", p, "grp/names", "--format", "jsonl"]),
        "{\"value\":\"ann\"}\n{\"value\":null}\n{\"value\":\"bo\"}\n"
    );
}

#[test]
fn rows_and_columns_select() {
    let (_dir, path) = fixture();
    let p = s(&path);
    let lines: Vec<&str> = EVENTS_JSONL.lines().collect();
    assert_eq!(
        run_ok(&["cat", p, "events", "--rows", "1..3", "--format", "jsonl"]),
        format!("{}\n{}\n", lines[1], lines[2])
    );
    assert_eq!(
        run_ok(&["cat", p, "events", "--rows", "3..", "--format", "jsonl"]),
        format!("{}\n{}\n", lines[3], lines[4])
    );
    // Clamped to the rows there are; an empty range prints the header only.
    assert_eq!(
        run_ok(&["cat", p, "events", "--rows", "4..100", "--format", "jsonl"]),
        format!("{}\n", lines[4])
    );
    assert_eq!(
        run_ok(&["cat", p, "xs", "--rows", "200..300", "--format", "csv"]),
        "value\n"
    );
    assert_eq!(
        run_ok(&["cat", p, "xs", "--rows", "98..", "--format", "csv"]),
        "value\n294\n297\n"
    );
    assert_eq!(
        run_ok(&[
            "cat",
            p,
            "events",
            "--columns",
            "inner.pos.y,id,at.x",
            "--rows",
            "..2",
            "--format",
            "jsonl"
        ]),
        "{\"inner\":{\"pos\":{\"y\":0.0}},\"id\":-20,\"at\":null}\n\
         {\"inner\":{\"pos\":{\"y\":0.25}},\"id\":-10,\"at\":{\"x\":1.0}}\n"
    );
    assert_eq!(
        run_ok(&[
            "cat",
            p,
            "events",
            "--columns",
            "inner.pos,letter",
            "--format",
            "csv",
            "--rows",
            "1..2"
        ]),
        "inner.pos.x,inner.pos.y,letter\n0.5,0.25,é\n"
    );
    assert_eq!(
        run_ok(&["head", p, "events", "-n", "2", "--columns", "name"]),
        "+---------+\n| name    |\n+---------+\n| event 0 |\n| event 1 |\n+---------+\n"
    );
}

#[test]
fn golden_tables_and_vls_arrays_print() {
    let out = run_ok(&[
        "cat",
        &golden("h5col/d_mixed_table.h5"),
        "table",
        "--format",
        "jsonl",
    ]);
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 6);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(golden("h5col/d_mixed_table.json")).unwrap())
            .unwrap();
    let want = json["rows"].as_array().expect("rows in the golden JSON");
    assert_eq!(&rows, want);

    // CATEGORIES and SEARCH_INDEXES are not columns.
    assert_eq!(
        run_ok(&["ls", &golden("h5col/g_categorical_indexes.h5")]),
        "\
PATH    KIND         ROWS  COLUMNS  STORED
/table  h5col table    10        5   783 B
"
    );
    // Categorical columns print as their labels (null for the missing code).
    let out = run_ok(&[
        "cat",
        &golden("h5col/g_categorical_indexes.h5"),
        "table",
        "--format",
        "jsonl",
    ]);
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(golden("h5col/g_categorical_indexes.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(&rows, json["rows"].as_array().unwrap());
    assert_eq!(
        run_ok(&[
            "head",
            &golden("h5col/g_categorical_indexes.h5"),
            "table",
            "-n",
            "5",
            "--columns",
            "level,pay"
        ]),
        "\
+-------+-------------+
| level | pay         |
+-------+-------------+
| Low   | Cash        |
| High  | Cash        |
| Mid   | Credit card |
| Mid   | null        |
| null  | Dispute     |
+-------+-------------+
"
    );

    let out = run_ok(&[
        "cat",
        &golden("vls/dolomite_strings.h5"),
        "atomic_vector",
        "--format",
        "jsonl",
    ]);
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(golden("vls/dolomite_strings.json")).unwrap(),
    )
    .unwrap();
    let want: Vec<serde_json::Value> = json["strings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| serde_json::json!({ "value": v }))
        .collect();
    let got: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got, want);
}

// ---- convert -----------------------------------------------------------

#[test]
fn convert_to_parquet_and_back() {
    let (dir, path) = fixture();
    let p = s(&path);
    let pq = dir.path().join("events.parquet");
    run_ok(&["convert", &format!("{p}:events"), s(&pq)]);
    let batches = read_parquet(&pq);
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, 5);
    let b = &batches[0];
    let typed = events();
    let ids = b.column(0).as_primitive::<Int64Type>();
    assert_eq!(
        ids.values().to_vec(),
        typed.iter().map(|e| e.id).collect::<Vec<_>>()
    );
    let names = b.column(1).as_string::<i64>();
    assert_eq!(
        names
            .iter()
            .map(|n| n.unwrap().to_string())
            .collect::<Vec<_>>(),
        typed.iter().map(|e| e.name.clone()).collect::<Vec<_>>()
    );
    let scores = b.column(2).as_primitive::<Float64Type>();
    assert_eq!(
        (0..5)
            .map(|i| scores.is_valid(i).then(|| scores.value(i)))
            .collect::<Vec<_>>(),
        typed.iter().map(|e| e.score).collect::<Vec<_>>()
    );
    // The same batch the reader gives, metadata included.
    let file = h5vec::open_file(&path).unwrap();
    let direct = h5vec::arrow::read_vector(&file, "events").unwrap();
    drop(file);
    assert_eq!(b.columns(), direct.columns());
    for (a, d) in b.schema().fields().iter().zip(direct.schema().fields()) {
        assert_eq!(a.as_ref(), d.as_ref());
    }

    // Back to HDF5: the typed load gives the values, the layout is the same.
    let back = dir.path().join("back.h5");
    run_ok(&["convert", s(&pq), &format!("{}:events", s(&back))]);
    let file = h5vec::open_file(&back).unwrap();
    assert_eq!(h5vec::load_vector::<Event>(&file, "events").unwrap(), typed);
    drop(file);
    assert_eq!(
        run_ok(&["schema", s(&back), "events", "--json"]),
        run_ok(&["schema", p, "events", "--json"])
    );
    // Into a group of an existing file (groups made on the way), compressed.
    run_ok(&[
        "convert",
        s(&pq),
        &format!("{p}:copies/ev"),
        "--compression",
        "deflate:4",
        "--chunk-length",
        "2",
    ]);
    let file = h5vec::open_file(&path).unwrap();
    assert_eq!(
        h5vec::load_vector::<Event>(&file.group("copies").unwrap(), "ev").unwrap(),
        typed
    );
    let ds = file.dataset("copies/ev/data/id/values").unwrap();
    assert_eq!(ds.chunk(), Some(vec![2]));
    drop((ds, file));
    let out = run_ok(&["info", p, "copies/ev"]);
    assert!(out.contains("shuffle,deflate(4)"), "{out}");
    // An existing vector is replaced only when asked.
    let (_, err) = run_code(&["convert", s(&pq), &format!("{p}:xs")], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: {p}:/xs: `xs` already exists in `/` (convert with --replace to replace it)\n"
        )
    );
    run_ok(&["convert", s(&pq), &format!("{p}:xs"), "--replace"]);
    let file = h5vec::open_file(&path).unwrap();
    assert_eq!(h5vec::load_vector::<Event>(&file, "xs").unwrap(), typed);
}

#[test]
fn parquet_compression_is_chosen() {
    let (dir, path) = fixture();
    let src = format!("{}:events", s(&path));
    // (Parquet records the codec, not its level.)
    for (arg, want) in [
        (None, "ZSTD"),
        (Some("zstd:5"), "ZSTD"),
        (Some("snappy"), "SNAPPY"),
        (Some("none"), "UNCOMPRESSED"),
    ] {
        let pq = dir.path().join("c.parquet");
        let mut args = vec!["convert", &src, s(&pq)];
        if let Some(a) = arg {
            args.extend(["--compression", a]);
        }
        run_ok(&args);
        let f = std::fs::File::open(&pq).unwrap();
        let meta = ParquetRecordBatchReaderBuilder::try_new(f)
            .unwrap()
            .metadata()
            .clone();
        for c in meta.row_group(0).columns() {
            let codec = format!("{:?}", c.compression());
            assert_eq!(codec.split('(').next(), Some(want), "{arg:?}");
        }
        assert_eq!(read_parquet(&pq)[0].num_rows(), 5);
    }
    let (_, err) = run_code(
        &["convert", &src, "x.parquet", "--compression", "zstd:30"],
        2,
    );
    assert!(err.starts_with("h5vec: --compression zstd:30: "), "{err}");
    let (_, err) = run_code(
        &["convert", &src, "x.parquet", "--compression", "deflate:4"],
        2,
    );
    assert_eq!(
        err,
        "h5vec: --compression: Parquet output takes zstd[:LEVEL], snappy or none\n"
    );
    let (_, err) = run_code(&["convert", &src, "x.csv", "--compression", "zstd"], 2);
    assert_eq!(
        err,
        "h5vec: --compression is for Parquet and HDF5 output only\n"
    );
    assert!(!Path::new("x.parquet").exists() && !Path::new("x.csv").exists());
}

#[test]
fn convert_to_arrow_csv_and_jsonl() {
    let (dir, path) = fixture();
    let src = format!("{}:events", s(&path));
    let csv = dir.path().join("e.csv");
    run_ok(&["convert", &src, s(&csv)]);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), EVENTS_CSV);
    let jsonl = dir.path().join("e.jsonl");
    run_ok(&["convert", &src, s(&jsonl)]);
    assert_eq!(std::fs::read_to_string(&jsonl).unwrap(), EVENTS_JSONL);
    let ipc = dir.path().join("e.arrow");
    run_ok(&["convert", &src, s(&ipc)]);
    let reader =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&ipc).unwrap(), None).unwrap();
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    let file = h5vec::open_file(&path).unwrap();
    let direct = h5vec::arrow::read_vector(&file, "events").unwrap();
    drop(file);
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0], direct);
    // And the IPC file back into HDF5.
    let back = dir.path().join("back.h5");
    run_ok(&["convert", s(&ipc), &format!("{}:g/events", s(&back))]);
    let file = h5vec::open_file(&back).unwrap();
    assert_eq!(
        h5vec::load_vector::<Event>(&file.group("g").unwrap(), "events").unwrap(),
        events()
    );
    drop(file);
    // Selected columns only, and back: the vector of those fields.
    let pq = dir.path().join("part.parquet");
    run_ok(&["convert", &src, s(&pq), "--columns", "id,inner.pos,letter"]);
    run_ok(&["convert", s(&pq), &format!("{}:part", s(&back))]);
    let file = h5vec::open_file(&back).unwrap();
    let part: Vec<Part> = h5vec::load_vector(&file, "part").unwrap();
    drop(file);
    let want: Vec<Part> = events()
        .into_iter()
        .map(|e| Part {
            id: e.id,
            inner: PosOnly { pos: e.inner.pos },
            letter: e.letter,
        })
        .collect();
    assert_eq!(part, want);
    let small = dir.path().join("small.jsonl");
    run_ok(&["convert", &src, s(&small), "--columns", "id,inner.label"]);
    assert_eq!(
        std::fs::read_to_string(&small)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
        r#"{"id":-20,"inner":{"label":"a,b"}}"#
    );
}

#[derive(H5Vector, Debug, PartialEq)]
struct PosOnly {
    pos: Pos,
}

#[derive(H5Vector, Debug, PartialEq)]
struct Part {
    id: i64,
    inner: PosOnly,
    letter: char,
}

#[derive(H5Vector, Debug, PartialEq)]
struct Plain {
    a: i64,
    b: String,
    c: Option<f64>,
    d: Vec<i32>,
}

#[test]
fn parquet_from_elsewhere_becomes_a_vector() {
    init();
    use arrow::array::{Float64Array, Int32Array, Int64Array, ListArray, StringArray};
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Utf8, false),
        Field::new("c", DataType::Float64, true),
        Field::new(
            "d",
            DataType::List(Arc::new(Field::new("item", DataType::Int32, false))),
            false,
        ),
    ]));
    let list = ListArray::new(
        Arc::new(Field::new("item", DataType::Int32, false)),
        arrow::buffer::OffsetBuffer::from_lengths([2, 0, 1]),
        Arc::new(Int32Array::from(vec![1, 2, 3])),
        None,
    );
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            Arc::new(StringArray::from(vec!["x", "", "zz"])),
            Arc::new(Float64Array::from(vec![Some(0.5), None, Some(-1.0)])),
            Arc::new(list),
        ],
    )
    .unwrap();
    let pq = dir.path().join("plain.parquet");
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&pq).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let h5 = dir.path().join("p.h5");
    run_ok(&[
        "convert",
        s(&pq),
        &format!("{}:plain", s(&h5)),
        "--vls-strings",
    ]);
    let file = h5vec::open_file(&h5).unwrap();
    assert_eq!(
        h5vec::load_vector::<Plain>(&file, "plain").unwrap(),
        [
            Plain {
                a: 1,
                b: "x".into(),
                c: Some(0.5),
                d: vec![1, 2]
            },
            Plain {
                a: 2,
                b: String::new(),
                c: None,
                d: vec![]
            },
            Plain {
                a: 3,
                b: "zz".into(),
                c: Some(-1.0),
                d: vec![3]
            },
        ]
    );
    drop(file);
    let out = run_ok(&["schema", s(&h5), "plain"]);
    assert!(
        out.contains("\n$.b    vls_string  h5vec.IdentityCodec "),
        "{out}"
    );
}

#[test]
fn a_failed_conversion_leaves_no_output() {
    use arrow::array::{Decimal128Array, Int64Array};
    let (dir, path) = fixture();
    // A type h5vec has no kind for: the save fails, and the file it would
    // have created is not left behind.
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("price", DataType::Decimal128(10, 2), false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(
                Decimal128Array::from(vec![1999])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
        ],
    )
    .unwrap();
    let pq = dir.path().join("decimals.parquet");
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&pq).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let new = dir.path().join("new.h5");
    let (_, err) = run_code(&["convert", s(&pq), &format!("{}:x", s(&new))], 2);
    assert!(
        err.starts_with(&format!("h5vec: {}:/x: $.price", s(&new))),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!new.exists());
    // Into an existing file: the file stays, without the vector.
    let (_, err) = run_code(&["convert", s(&pq), &format!("{}:x", s(&path))], 2);
    assert!(
        err.starts_with(&format!("h5vec: {}:/x: $.price", s(&path))),
        "{err}"
    );
    let file = h5vec::open_file(&path).unwrap();
    assert!(!file.link_exists("x"));
    drop(file);
    // No such source: no output file.
    let out = dir.path().join("o.csv");
    let (_, err) = run_code(&["convert", &format!("{}:nothing", s(&path)), s(&out)], 2);
    assert!(
        err.starts_with(&format!("h5vec: {}:/nothing: ", s(&path))),
        "{err}"
    );
    assert!(!out.exists());
    let (_, err) = run_code(&["convert", "a.csv", "b.parquet"], 2);
    assert_eq!(
        err,
        "h5vec: cannot convert CSV to Parquet: convert reads an HDF5 vector into Parquet, Arrow IPC, CSV or JSON lines, and Parquet or Arrow IPC into an HDF5 vector\n"
    );
}

// ---- validate, repair --------------------------------------------------

/// Overwrites rows `start..` of the 1-D dataset `ds` with `bytes` in the
/// dataset's own file type (no conversion): how the tests damage files.
fn overwrite_raw(ds: &Dataset, start: u64, bytes: &[u8]) {
    use hdf5_sys::{h5d, h5p, h5s, h5t};
    h5vec::hdf5::sync::sync(|| {
        // SAFETY: valid ids under hdf5-metno's lock; `bytes` holds whole
        // values of the file type, and both selections cover that many
        // elements inside the extent (asserted).
        unsafe {
            let t = h5d::H5Dget_type(ds.id());
            assert!(t >= 0);
            let size = h5t::H5Tget_size(t);
            assert_eq!(bytes.len() % size, 0);
            let rows = (bytes.len() / size) as u64;
            assert!(start + rows <= ds.size() as u64);
            let fs = h5d::H5Dget_space(ds.id());
            let (offset, count) = ([start], [rows]);
            assert!(
                h5s::H5Sselect_hyperslab(
                    fs,
                    h5s::H5S_seloper_t::H5S_SELECT_SET,
                    offset.as_ptr(),
                    std::ptr::null(),
                    count.as_ptr(),
                    std::ptr::null()
                ) >= 0
            );
            let ms = h5s::H5Screate_simple(1, count.as_ptr(), std::ptr::null());
            let r = h5d::H5Dwrite(ds.id(), t, ms, fs, h5p::H5P_DEFAULT, bytes.as_ptr().cast());
            h5s::H5Sclose(ms);
            h5s::H5Sclose(fs);
            h5t::H5Tclose(t);
            assert!(r >= 0, "H5Dwrite");
        }
    });
}

#[test]
fn validate_a_good_file_is_quiet() {
    let (_dir, path) = fixture();
    assert_eq!(
        run_code(&["validate", s(&path)], 0),
        (String::new(), String::new())
    );
    assert_eq!(
        run_code(&["validate", s(&path), "events"], 0),
        (String::new(), String::new())
    );
    for g in [
        "h5col/d_mixed_table.h5",
        "vls/dolomite_strings.h5",
        "vls/spec_edge_cases.h5",
    ] {
        assert_eq!(
            run_code(&["validate", &golden(g)], 0),
            (String::new(), String::new()),
            "{g}"
        );
    }
}

#[test]
fn validate_names_each_damaged_container() {
    let (_dir, path) = fixture();
    let p = s(&path);
    {
        let file = h5vec::open_file_rw(&path).unwrap();
        // Decreasing list offsets.
        let offsets = file.dataset("events/data/counts/OFFSETS").unwrap();
        offsets.write_slice(&[9u64], 2..3).unwrap();
        // A count past the extents.
        file.dataset("xs/metadata/count")
            .unwrap()
            .write_scalar(&1000i64)
            .unwrap();
    }
    let (stdout, stderr) = run_code(&["validate", p], 1);
    assert_eq!(stderr, "");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(
        lines[0],
        format!("{p}:/events: $.counts[3] (/events/data/counts/OFFSETS): invalid data: OFFSETS must not decrease: 3 after 9")
    );
    assert_eq!(
        lines[1],
        format!("{p}:/xs: $ (/xs/data/values): expected at least 1000 rows, found 100")
    );
    // One container only.
    let (stdout, _) = run_code(&["validate", p, "/xs"], 1);
    assert_eq!(stdout.lines().count(), 1);
    assert!(stdout.starts_with(&format!("{p}:/xs: ")), "{stdout}");
    assert_eq!(run_code(&["validate", p, "grp/names"], 0).0, "");
    // The error of a command reading it is the same line with `h5vec: `.
    let (_, err) = run_code(&["cat", p, "xs"], 2);
    assert_eq!(err, format!("h5vec: {}\n", stdout.trim_end()));
}

#[test]
fn validate_finds_a_bad_mask_value() {
    let (_dir, path) = fixture();
    let p = s(&path);
    {
        let file = h5vec::open_file_rw(&path).unwrap();
        overwrite_raw(&file.dataset("events/data/note/MASK").unwrap(), 3, &[2u8]);
    }
    let (stdout, _) = run_code(&["validate", p], 1);
    assert!(
        stdout.starts_with(&format!("{p}:/events: $.note")),
        "{stdout}"
    );
    assert!(stdout.contains("/events/data/note/MASK"), "{stdout}");
    assert_eq!(stdout.lines().count(), 1);
}

#[test]
fn repair_trims_what_an_interrupted_append_left() {
    let (_dir, path) = fixture();
    let p = s(&path);
    {
        // What an append killed before it wrote `count` leaves: longer datasets.
        let file = h5vec::open_file_rw(&path).unwrap();
        let ds = file.dataset("xs/data/values").unwrap();
        ds.resize(150).unwrap();
    }
    assert!(run_ok(&["info", p, "xs"]).contains("(150,)"));
    assert_eq!(run_code(&["validate", p, "xs"], 0).0, "");
    run_ok(&["repair", p, "xs"]);
    assert!(run_ok(&["info", p, "xs"]).contains("(100,)"));
    let file = h5vec::open_file(&path).unwrap();
    assert_eq!(
        h5vec::load_vector::<u32>(&file, "xs").unwrap(),
        (0..100u32).map(|i| i * 3).collect::<Vec<_>>()
    );
}

// ---- errors ------------------------------------------------------------

#[test]
fn usage_errors_exit_2() {
    let (_dir, path) = fixture();
    let p = s(&path);
    run_code(&[], 2);
    h5vec_cmd()
        .arg("frobnicate")
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "unrecognized subcommand 'frobnicate'",
        ));
    run_code(&["cat", p], 2);
    let (_, err) = run_code(&["cat", p, "events", "--rows", "5..2"], 2);
    assert!(
        err.contains("the range `5..2` ends before it starts"),
        "{err}"
    );
    let (_, err) = run_code(&["cat", p, "events", "--format", "xml"], 2);
    assert!(err.contains("xml"), "{err}");
    let (_, err) = run_code(&["cat", p, "events", "--columns", "inner.nope"], 2);
    assert_eq!(
        err,
        "h5vec: --columns: no column `inner.nope` (the columns of `inner` are: inner.label, inner.pos)\n"
    );
    let (_, err) = run_code(&["cat", p, "events", "--columns", "id.x"], 2);
    assert_eq!(
        err,
        "h5vec: --columns: no column `id.x`: `id` is not a record (it is Int64)\n"
    );
    let (_, err) = run_code(
        &[
            "convert",
            &format!("{p}:events"),
            "o.parquet",
            "--compression",
            "lz4",
        ],
        2,
    );
    assert_eq!(err, "h5vec: --compression lz4: unknown compression `lz4`\n");
    let (_, err) = run_code(
        &[
            "convert",
            &format!("{p}:events"),
            "o.csv",
            "--chunk-length",
            "5",
        ],
        2,
    );
    assert_eq!(err, "h5vec: --chunk-length is for HDF5 output only\n");
    let (_, err) = run_code(&["convert", &format!("{p}:events"), "o.txt"], 2);
    assert_eq!(
        err,
        "h5vec: `o.txt` is neither FILE.h5:VECTOR nor a .parquet, .arrow, .csv or .jsonl file\n"
    );
    // --help and --version succeed.
    assert!(run_ok(&["--help"]).contains("validate"));
    assert!(run_ok(&["--version"]).starts_with("h5vec "));
}

#[test]
fn missing_files_and_vectors_are_one_readable_line() {
    let (dir, path) = fixture();
    let missing = dir.path().join("missing.h5");
    let (stdout, err) = run_code(&["ls", s(&missing)], 2);
    assert_eq!(stdout, "");
    assert_eq!(
        err,
        format!(
            "h5vec: cannot open {}: No such file or directory (os error 2)\n",
            s(&missing)
        )
    );
    let (_, err) = run_code(&["head", s(&path), "nope"], 2);
    assert!(
        err.starts_with(&format!(
            "h5vec: {}:/nope: $ (/nope): not found: ",
            s(&path)
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    let (_, err) = run_code(&["ls", s(&path), "no/group"], 2);
    assert_eq!(err, format!("h5vec: no group /no/group in {}\n", s(&path)));
    let (_, err) = run_code(&["validate", s(&path), "nope"], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: {}:/nope: no vector, h5col table or VLS array there\n",
            s(&path)
        )
    );
    // Not an HDF5 file.
    let text = dir.path().join("t.h5");
    std::fs::write(&text, "hello").unwrap();
    let (_, err) = run_code(&["ls", s(&text)], 2);
    assert!(err.starts_with("h5vec: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
struct Meta {
    k: String,
    v: Vec<u8>,
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Level {
    Low = 1,
    High = 9,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Marker;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Odd {
    #[h5vec(json)]
    meta: Meta,
    #[h5vec(blob)]
    raw: (u16, bool),
    level: Level,
    marker: Marker,
    pair: (i8, Option<u32>),
    #[h5vec(vls)]
    v: String,
    nested: Vec<Vec<Option<i16>>>,
}

#[test]
fn json_blob_enum_constant_and_tuple_fields_print() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.h5");
    let rows = vec![
        Odd {
            meta: Meta {
                k: "a\"b".into(),
                v: vec![1, 2],
            },
            raw: (258, true),
            level: Level::High,
            marker: Marker,
            pair: (-1, Some(7)),
            v: "vls".into(),
            nested: vec![vec![Some(1), None], vec![]],
        },
        Odd {
            meta: Meta {
                k: String::new(),
                v: vec![],
            },
            raw: (0, false),
            level: Level::Low,
            marker: Marker,
            pair: (2, None),
            v: String::new(),
            nested: vec![],
        },
    ];
    let file = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&file, "odd", &rows).unwrap();
    drop(file);
    let p = s(&path);
    // JSON fields as their text, blobs as hex of their bincode bytes, enums
    // as their labels (a dictionary, SPEC.md section 11), constants null,
    // tuples records of "1", "2".
    assert_eq!(
        run_ok(&["cat", p, "odd", "--format", "jsonl"]),
        r#"{"meta":"{\"k\":\"a\\\"b\",\"v\":[1,2]}","raw":"fb020101","level":"High","marker":null,"pair":{"1":-1,"2":7},"v":"vls","nested":[[1,null],[]]}
{"meta":"{\"k\":\"\",\"v\":[]}","raw":"0000","level":"Low","marker":null,"pair":{"1":2,"2":null},"v":"","nested":[]}
"#
    );
    assert_eq!(
        run_ok(&["cat", p, "odd", "--format", "csv"]),
        r#"meta,raw,level,marker,pair.1,pair.2,v,nested
"{""k"":""a\""b"",""v"":[1,2]}",fb020101,High,,-1,7,vls,"[[1,null],[]]"
"{""k"":"""",""v"":[]}",0000,Low,,2,,"",[]
"#
    );
    assert_eq!(
        run_ok(&["cat", p, "odd"]),
        r#"+------------------------+----------+-------+--------+-----------------+-----+-----------------+
| meta                   | raw      | level | marker | pair            | v   | nested          |
+------------------------+----------+-------+--------+-----------------+-----+-----------------+
| {"k":"a\"b","v":[1,2]} | fb020101 | High  | null   | {1: -1, 2: 7}   | vls | [[1, null], []] |
| {"k":"","v":[]}        | 0000     | Low   | null   | {1: 2, 2: null} |     | []              |
+------------------------+----------+-------+--------+-----------------+-----+-----------------+
"#
    );
    let pq = dir.path().join("odd.parquet");
    run_ok(&["convert", &format!("{p}:odd"), s(&pq)]);
    run_ok(&["convert", s(&pq), &format!("{p}:back")]);
    let file = h5vec::open_file(&path).unwrap();
    assert_eq!(h5vec::load_vector::<Odd>(&file, "back").unwrap(), rows);
    drop(file);
    assert_eq!(
        run_ok(&["schema", p, "back", "--json"]),
        run_ok(&["schema", p, "odd", "--json"])
    );
}

#[test]
fn a_reader_that_stops_early_is_no_error() {
    init();
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.h5");
    let file = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&file, "n", &(0..300_000u64).collect::<Vec<_>>()).unwrap();
    drop(file);
    for format in ["csv", "jsonl", "table"] {
        let mut cmd = std_cmd();
        cmd.args(["cat", s(&path), "n", "--format", format])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut first = [0u8; 16];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut first)
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{format}");
    }
}

#[test]
fn every_command_is_quiet_when_its_reader_has_gone() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.h5");
    let file = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&file, "n", &[1u64, 2, 3]).unwrap();
    drop(file);
    let p = s(&path);
    for args in [
        vec!["schema", p, "n", "--json"],
        vec!["schema", p, "n"],
        vec!["info", p, "n"],
        vec!["ls", p],
        vec!["head", p, "n"],
    ] {
        let mut cmd = std_cmd();
        cmd.args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        // The read end closed before the command writes: its first write
        // fails with EPIPE.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
    }
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Ev {
    Idle,
    Tick(f64),
    Fill { qty: i32 },
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithUnion {
    id: u8,
    ev: Ev,
    list: Vec<Ev>,
}

#[test]
fn unions_convert_to_every_format_and_back() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u.h5");
    let rows = vec![
        WithUnion {
            id: 1,
            ev: Ev::Idle,
            list: vec![],
        },
        WithUnion {
            id: 2,
            ev: Ev::Tick(0.5),
            list: vec![Ev::Fill { qty: 3 }],
        },
    ];
    let file = h5vec::create_file(&path).unwrap();
    h5vec::save_vector(&file, "u", &rows).unwrap();
    drop(file);
    let p = s(&path);
    // The flat form (tests/kinds.rs has every format): the variant's name
    // beside its fields.
    let jsonl = r#"{"id":1,"ev":{"variant":"Idle"},"list":[]}
{"id":2,"ev":{"variant":"Tick","1":0.5},"list":[{"variant":"Fill","qty":3}]}
"#;
    assert_eq!(run_ok(&["cat", p, "u", "--format", "jsonl"]), jsonl);
    let out = dir.path().join("u.jsonl");
    run_ok(&["convert", &format!("{p}:u"), s(&out)]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), jsonl);
    // Parquet and Arrow IPC convert back to the same values.
    for ext in ["parquet", "arrow"] {
        let out = dir.path().join(format!("u.{ext}"));
        run_ok(&["convert", &format!("{p}:u"), s(&out)]);
        run_ok(&["convert", s(&out), &format!("{p}:back_{ext}")]);
        let file = h5vec::open_file(&path).unwrap();
        assert_eq!(
            h5vec::load_vector::<WithUnion>(&file, &format!("back_{ext}")).unwrap(),
            rows,
            "{ext}"
        );
    }
    // Only the list of unions selected.
    let out = dir.path().join("l.parquet");
    run_ok(&["convert", &format!("{p}:u"), s(&out), "--columns", "list"]);
    run_ok(&["convert", s(&out), &format!("{p}:lists")]);
    assert_eq!(
        run_ok(&["cat", p, "lists", "--format", "csv"]),
        "list\n[]\n\"[{\"\"variant\"\":\"\"Fill\"\",\"\"qty\"\":3}]\"\n"
    );
}

/// A vector of 200,000 optional numbers (four batches of 65,536 rows):
/// `Some(i)` except every 7th row.
fn big_vector(path: &Path) {
    let file = h5vec::create_file(path).unwrap();
    let rows: Vec<Option<u32>> = (0..200_000u32).map(|i| (i % 7 != 0).then_some(i)).collect();
    h5vec::save_vector(&file, "big", &rows).unwrap();
}

#[test]
fn ranges_across_batches_and_a_failure_after_the_first_batches() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.h5");
    big_vector(&path);
    let p = s(&path);
    // A range over the boundaries of the batches of 65,536 rows.
    let csv = run_ok(&[
        "cat",
        p,
        "big",
        "--rows",
        "65530..131080",
        "--format",
        "csv",
    ]);
    let want: String = std::iter::once("value\n".to_string())
        .chain((65530..131080u32).map(|i| {
            if i % 7 == 0 {
                // A missing value of a one-column CSV, not an empty line.
                "\"\"\n".to_string()
            } else {
                format!("{i}\n")
            }
        }))
        .collect();
    let first_difference = csv.lines().zip(want.lines()).position(|(a, b)| a != b);
    assert_eq!(
        (csv.lines().count(), first_difference),
        (want.lines().count(), None),
        "{:?}",
        first_difference.map(|i| (csv.lines().nth(i), want.lines().nth(i)))
    );
    assert_eq!(
        run_ok(&["head", p, "big", "-n", "2", "--format", "csv"]),
        "value\n\"\"\n1\n"
    );
    // The whole vector to Parquet, over several row-group batches.
    let pq = dir.path().join("big.parquet");
    run_ok(&["convert", &format!("{p}:big"), s(&pq)]);
    let values: Vec<Option<u32>> = read_parquet(&pq)
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<arrow::datatypes::UInt32Type>()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(values.len(), 200_000);
    assert!(values
        .iter()
        .enumerate()
        .all(|(i, v)| *v == ((i % 7 != 0).then_some(i as u32))));
    // A bad mask value in the fourth batch: the conversion fails after the
    // first batches were written, and leaves no output behind.
    {
        let file = h5vec::open_file_rw(&path).unwrap();
        overwrite_raw(&file.dataset("big/data/MASK").unwrap(), 190_001, &[2u8]);
    }
    for out in ["bad.parquet", "bad.csv", "bad.arrow"] {
        let out = dir.path().join(out);
        let (_, err) = run_code(&["convert", &format!("{p}:big"), s(&out)], 2);
        assert!(err.starts_with(&format!("h5vec: {p}:/big: $")), "{err}");
        assert!(err.contains("/big/data/MASK"), "{err}");
        assert!(!out.exists(), "{}", out.display());
    }
}

/// Errors about the file itself are one sentence each, printed once
/// (issue 28): not an HDF5 file, a truncated file with HDF5's byte counts.
#[test]
fn a_text_file_and_a_truncated_file_are_named_once() {
    init();
    let dir = TempDir::new().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "a,b\n1,2\n").unwrap();
    for args in [vec!["ls"], vec!["repair", "xs"], vec!["head", "xs"]] {
        let mut args = args;
        args.insert(1, s(&text));
        let (_, err) = run_code(&args, 2);
        assert_eq!(
            err,
            format!("h5vec: not an HDF5 file: {}\n", text.display())
        );
    }
    let cut = dir.path().join("cut.h5");
    let xs: Vec<u64> = (0..100_000).collect();
    h5vec::save_vector(&h5vec::create_file(&cut).unwrap(), "xs", &xs).unwrap();
    let full = std::fs::metadata(&cut).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&cut)
        .unwrap()
        .set_len(100_000)
        .unwrap();
    let digits = full.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let (_, err) = run_code(&["cat", s(&cut), "xs"], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: file truncated: 100,000 of {grouped} bytes present: {}\n",
            cut.display()
        )
    );
}

/// A file another process writes (here: this test, through `create_file`)
/// is an error that says so, printed once, naming `create_file_live`.
#[test]
fn a_file_held_by_a_writer_is_an_error_that_says_so_once() {
    init();
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("held.h5");
    h5vec::save_vector(&h5vec::create_file(&path).unwrap(), "xs", &[1u32]).unwrap();
    // The lock HDF5 takes for a writer (`flock`, exclusive), as another
    // process holding the file read-write would hold it (this process's
    // HDF5 does not lock, see `init`).
    let held = std::fs::File::open(&path).unwrap();
    held.lock().unwrap();
    let (_, err) = run_code(&["head", s(&path), "xs"], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: the file is open for writing by another process (HDF5 locks a file while \
             a writer has it open): {}; a writer that other processes may read while it \
             writes creates the file with h5vec::create_file_live and writes with \
             VectorWriter::create_live (readers: h5vec::open_file_live)\n",
            path.display()
        )
    );
    let (_, err) = run_code(&["repair", s(&path), "xs"], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: the file is open in another process (HDF5 locks a file while a writer, \
             or a reader of a file not made for live reading, has it open): {}\n",
            path.display()
        )
    );
    drop(held);
    assert_eq!(
        run_ok(&["head", s(&path), "xs"]),
        "+-------+\n| value |\n+-------+\n| 1     |\n+-------+\n"
    );
}

#[test]
fn convert_with_checksum_puts_fletcher32_on_every_chunked_dataset() {
    let (dir, path) = fixture();
    let p = s(&path);
    let pq = dir.path().join("events.parquet");
    run_ok(&["convert", &format!("{p}:events"), s(&pq)]);
    let h5 = dir.path().join("c.h5");
    for (name, extra) in [("plain", &[][..]), ("vls", &["--vls-strings"][..])] {
        let mut args = vec![
            "convert".to_string(),
            s(&pq).to_string(),
            format!("{}:{name}", s(&h5)),
            "--checksum".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        run_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let file = h5vec::open_file(&h5).unwrap();
        assert_eq!(
            h5vec::load_vector::<Event>(&file, name).unwrap(),
            events(),
            "{name}"
        );
        let info = h5vec::inspect(&file, name).unwrap();
        let mut checked = 0;
        for d in info.datasets.iter().filter(|d| d.chunks.is_some()) {
            if d.dtype.contains("vlen") {
                assert!(!d.filters.iter().any(|f| f == "fletcher32"), "{}", d.path);
            } else {
                assert_eq!(
                    d.filters.last().map(String::as_str),
                    Some("fletcher32"),
                    "{}",
                    d.path
                );
                checked += 1;
            }
        }
        assert!(checked >= 3, "{name}: {checked}");
    }
    // HDF5 output only.
    let (_, err) = run_code(
        &[
            "convert",
            &format!("{p}:events"),
            s(&dir.path().join("x.parquet")),
            "--checksum",
        ],
        2,
    );
    assert!(err.contains("--checksum is for HDF5 output only"), "{err}");
}
