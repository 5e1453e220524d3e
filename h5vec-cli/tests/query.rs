//! `--where` (of `head`, `cat`, `convert`), `count` and `explain`, run on
//! real files: exact output in every format, batches of a large vector,
//! and the errors (a bad filter with its position, a column that is not
//! there, a container that is not a vector).

use std::path::PathBuf;

use arrow::array::AsArray;
use arrow::datatypes::{Float64Type, UInt32Type};
use h5vec::H5Vector;
use tempfile::TempDir;

mod common;
use common::*;

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Status {
    Ok,
    Warn,
    Fail,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pos {
    x: f64,
    y: f64,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Reading {
    station: String,
    temperature: f64,
    status: Status,
    humidity: Option<f32>,
    pos: Pos,
}

fn readings() -> Vec<Reading> {
    let t = [3.5, 12.0, 10.0, 25.25, 14.0, 18.5, 9.75, 30.0];
    (0..8)
        .map(|i| Reading {
            station: format!("s{i}"),
            temperature: t[i],
            status: [Status::Ok, Status::Warn, Status::Ok, Status::Fail][i % 4],
            humidity: (i % 3 != 1).then_some(i as f32 * 10.0),
            pos: Pos {
                x: i as f64,
                y: -(i as f64) / 2.0,
            },
        })
        .collect()
}

/// A file with `readings` (chunks of 3 rows: statistics over 3 windows),
/// `xs` (150,000 `u32`s: several batches of the command) and a VLS array.
fn fixture() -> (TempDir, PathBuf) {
    init();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.h5");
    let file = h5vec::create_file(&path).unwrap();
    let opts = h5vec::SaveOptions::default().chunk_length(3);
    h5vec::save_vector_with(&file, "readings", &readings(), &opts).unwrap();
    h5vec::save_vector(&file, "xs", &(0..150_000u32).collect::<Vec<_>>()).unwrap();
    h5vec::vls::save_strings(&file, "names", &[Some("a".to_string()), None]).unwrap();
    drop(file);
    (dir, path)
}

const WARM_OK: &str = "temperature >= 10 and status == 'Ok'";

#[test]
fn head_and_cat_print_the_matching_rows_in_every_format() {
    let (_dir, path) = fixture();
    let p = s(&path);
    let table = "\
+---------+-------------+--------+----------+-------------------+
| station | temperature | status | humidity | pos               |
+---------+-------------+--------+----------+-------------------+
| s2      | 10.0        | Ok     | 20.0     | {x: 2.0, y: -1.0} |
| s4      | 14.0        | Ok     | null     | {x: 4.0, y: -2.0} |
+---------+-------------+--------+----------+-------------------+
";
    assert_eq!(run_ok(&["cat", p, "readings", "--where", WARM_OK]), table);
    assert_eq!(run_ok(&["head", p, "readings", "--where", WARM_OK]), table);
    assert_eq!(
        run_ok(&["cat", p, "readings", "--where", WARM_OK, "--format", "jsonl"]),
        "\
{\"station\":\"s2\",\"temperature\":10.0,\"status\":\"Ok\",\"humidity\":20.0,\"pos\":{\"x\":2.0,\"y\":-1.0}}
{\"station\":\"s4\",\"temperature\":14.0,\"status\":\"Ok\",\"humidity\":null,\"pos\":{\"x\":4.0,\"y\":-2.0}}
"
    );
    assert_eq!(
        run_ok(&["cat", p, "readings", "--where", WARM_OK, "--format", "csv"]),
        "\
station,temperature,status,humidity,pos.x,pos.y
s2,10.0,Ok,20.0,2.0,-1.0
s4,14.0,Ok,,4.0,-2.0
"
    );
    // head: the first N matching rows, not the matches among the first N.
    let nulls = "humidity is null";
    assert_eq!(
        run_ok(&[
            "head",
            p,
            "readings",
            "-n",
            "2",
            "--where",
            nulls,
            "--format",
            "csv",
            "--columns",
            "station"
        ]),
        "station\ns1\ns4\n"
    );
    assert_eq!(
        run_ok(&[
            "head",
            p,
            "readings",
            "-n",
            "1",
            "--where",
            WARM_OK,
            "--format",
            "jsonl",
            "--columns",
            "station"
        ]),
        "{\"station\":\"s2\"}\n"
    );
    // cat --rows: the matching rows among those (clamped as without --where).
    assert_eq!(
        run_ok(&[
            "cat",
            p,
            "readings",
            "--rows",
            "3..100",
            "--where",
            nulls,
            "--format",
            "csv",
            "--columns",
            "station,humidity"
        ]),
        "station,humidity\ns4,\ns7,\n"
    );
    // The filter may use columns not printed; nested columns by dotted path;
    // a missing value is never selected by a value predicate.
    assert_eq!(
        run_ok(&[
            "cat",
            p,
            "readings",
            "--columns",
            "pos.y,station",
            "--where",
            "pos.x >= 6 or humidity != 0 and humidity < 25",
            "--format",
            "jsonl"
        ]),
        "\
{\"pos\":{\"y\":-1.0},\"station\":\"s2\"}
{\"pos\":{\"y\":-3.0},\"station\":\"s6\"}
{\"pos\":{\"y\":-3.5},\"station\":\"s7\"}
"
    );
    // No match: the header alone (nothing for JSON lines).
    let none = "temperature > 100";
    assert_eq!(
        run_ok(&[
            "cat",
            p,
            "readings",
            "--where",
            none,
            "--columns",
            "station,temperature"
        ]),
        "\
+---------+-------------+
| station | temperature |
+---------+-------------+
+---------+-------------+
"
    );
    assert_eq!(
        run_ok(&["cat", p, "readings", "--where", none, "--format", "csv"]),
        "station,temperature,status,humidity,pos.x,pos.y\n"
    );
    assert_eq!(
        run_ok(&["cat", p, "readings", "--where", none, "--format", "jsonl"]),
        ""
    );
    assert_eq!(
        run_ok(&[
            "head",
            p,
            "readings",
            "-n",
            "0",
            "--where",
            WARM_OK,
            "--format",
            "csv",
            "--columns",
            "station"
        ]),
        "station\n"
    );
    // Keywords in any case (column names as written), text in double quotes, `in`, `between`.
    assert_eq!(
        run_ok(&[
            "cat",
            p,
            "readings",
            "--where",
            "station IN (\"s0\", 's5') OR temperature NOT BETWEEN 0 AND 25",
            "--format",
            "csv",
            "--columns",
            "station"
        ]),
        "station\ns0\ns3\ns5\ns7\n"
    );
}

#[test]
fn count_and_explain() {
    let (_dir, path) = fixture();
    let p = s(&path);
    assert_eq!(run_ok(&["count", p, "readings"]), "8\n");
    assert_eq!(run_ok(&["count", p, "/xs"]), "150000\n");
    assert_eq!(run_ok(&["count", p, "names"]), "2\n");
    assert_eq!(run_ok(&["count", p, "readings", "--where", WARM_OK]), "2\n");
    assert_eq!(
        run_ok(&["count", p, "readings", "--where", "humidity is not null"]),
        "5\n"
    );
    assert_eq!(
        run_ok(&["count", p, "readings", "--where", "temperature < -100"]),
        "0\n"
    );
    // The values of a vector of plain values: the empty name.
    assert_eq!(
        run_ok(&["count", p, "xs", "--where", "`` >= 100000"]),
        "50000\n"
    );
    // `rows`: the row numbers, one a line.
    assert_eq!(
        run_ok(&["rows", p, "readings", "--where", WARM_OK]),
        "2\n4\n"
    );
    assert_eq!(
        run_ok(&["rows", p, "readings", "--where", "humidity is not null"]),
        "0\n2\n3\n5\n6\n"
    );
    assert_eq!(
        run_ok(&["rows", p, "readings", "--where", "temperature < -100"]),
        ""
    );
    assert_eq!(
        run_ok(&["rows", p, "/xs", "--where", "`` >= 149998"]),
        "149998\n149999\n"
    );
    let (_, err) = run_code(&["rows", p, "readings"], 2);
    assert!(err.contains("--where <FILTER>"), "{err}");
    // Chunks of 3 rows: the maxima 12, 25.25 and 30 leave one window to read.
    assert_eq!(
        run_ok(&["explain", p, "readings", "--where", "temperature > 28"]),
        "\
rows: 8, matched: 1
  temperature ($.temperature): CHUNK_MINMAX (3 entries)
windows of 3 rows: 1 read, 2 skipped of 3
"
    );
    // Strings have no statistics: a scan.
    assert_eq!(
        run_ok(&[
            "explain",
            p,
            "readings",
            "--where",
            "station == 's3' and status == 'Fail'"
        ]),
        "\
rows: 8, matched: 1
  station ($.station): scan, no valid statistics
  status ($.status): CHUNK_MINMAX (3 entries)
windows of 3 rows: 2 read, 1 skipped of 3
"
    );
}

#[test]
fn convert_writes_only_the_matching_rows() {
    let (dir, path) = fixture();
    let p = s(&path);
    let src = format!("{p}:readings");
    let pq = dir.path().join("warm.parquet");
    run_ok(&["convert", &src, s(&pq), "--where", WARM_OK]);
    let batches = read_parquet(&pq);
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    assert_eq!(b.num_rows(), 2);
    let stations: Vec<&str> = b
        .column(0)
        .as_string::<i64>()
        .iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(stations, ["s2", "s4"]);
    assert_eq!(
        b.column(1).as_primitive::<Float64Type>().values(),
        &[10.0, 14.0]
    );
    // The Parquet file converts back to a vector of those rows.
    let back = dir.path().join("back.h5");
    run_ok(&["convert", s(&pq), &format!("{}:warm", s(&back))]);
    let file = h5vec::open_file(&back).unwrap();
    let warm: Vec<Reading> = h5vec::load_vector(&file, "warm").unwrap();
    assert_eq!(warm, [readings()[2].clone(), readings()[4].clone()]);
    drop(file);
    // CSV and JSON lines, with --columns; no match: the header alone.
    let csv = dir.path().join("w.csv");
    run_ok(&[
        "convert",
        &src,
        s(&csv),
        "--where",
        "status == 'Fail'",
        "--columns",
        "station,pos.x",
    ]);
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "station,pos.x\ns3,3.0\ns7,7.0\n"
    );
    run_ok(&[
        "convert",
        &src,
        s(&csv),
        "--where",
        "temperature > 99",
        "--columns",
        "station",
    ]);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "station\n");
    // Arrow IPC, then the values of xs across several batches.
    let jsonl = dir.path().join("xs.jsonl");
    run_ok(&[
        "convert",
        &format!("{p}:xs"),
        s(&jsonl),
        "--where",
        "`` between 1000 and 140999",
    ]);
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 140_000);
    assert_eq!(
        (lines[0], lines[65_536], lines[139_999]),
        (
            "{\"value\":1000}",
            "{\"value\":66536}",
            "{\"value\":140999}"
        )
    );
    let arrow_file = dir.path().join("xs.arrow");
    run_ok(&[
        "convert",
        &format!("{p}:xs"),
        s(&arrow_file),
        "--where",
        "`` in (7, 70000, 149999)",
    ]);
    let reader =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&arrow_file).unwrap(), None)
            .unwrap();
    let values: Vec<u32> = reader
        .flat_map(|b| {
            b.unwrap()
                .column(0)
                .as_primitive::<UInt32Type>()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(values, [7, 70_000, 149_999]);
    // --where reads an HDF5 vector: not for Parquet input.
    let (_, err) = run_code(
        &[
            "convert",
            s(&pq),
            &format!("{}:w2", s(&back)),
            "--where",
            WARM_OK,
        ],
        2,
    );
    assert_eq!(
        err,
        "h5vec: --where is for an HDF5 source only (FILE.h5:VECTOR)\n"
    );
}

#[test]
fn matching_rows_of_a_large_vector_print_in_batches() {
    let (_dir, path) = fixture();
    let p = s(&path);
    // 140,000 rows: three batches of the command.
    let out = run_ok(&[
        "cat",
        p,
        "xs",
        "--where",
        "`` between 1000 and 140999",
        "--format",
        "csv",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 140_001);
    assert_eq!(
        (lines[0], lines[1], lines[65_537], lines[140_000]),
        ("value", "1000", "66536", "140999")
    );
    assert!(lines[1..]
        .iter()
        .zip(1000u32..)
        .all(|(l, v)| *l == v.to_string()));
    // With --rows: the matches among rows 100,000 and on.
    let out = run_ok(&[
        "cat",
        p,
        "xs",
        "--rows",
        "100000..",
        "--where",
        "`` between 1000 and 140999",
        "--format",
        "csv",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        (lines.len(), lines[1], lines[41_000]),
        (41_001, "100000", "140999")
    );
    assert_eq!(
        run_ok(&[
            "head",
            p,
            "xs",
            "-n",
            "3",
            "--where",
            "`` > 149990 or `` < 2",
            "--format",
            "csv"
        ]),
        "value\n0\n1\n149991\n"
    );
}

#[test]
fn bad_filters_and_columns_are_errors_saying_where() {
    let (dir, path) = fixture();
    let golden_table = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/h5col/d_mixed_table.h5"
    )
    .to_string();
    let p = s(&path);
    let out = dir.path().join("o.csv");
    let src = format!("{p}:readings");
    let want = "h5vec: --where: at 16: expected a value after \">=\", found end of text\n";
    for args in [
        vec!["cat", p, "readings", "--where", "temperature >= "],
        vec!["head", p, "readings", "--where", "temperature >= "],
        vec!["count", p, "readings", "--where", "temperature >= "],
        vec!["explain", p, "readings", "--where", "temperature >= "],
        vec!["convert", &src, s(&out), "--where", "temperature >= "],
        // The filter is checked before the file is opened.
        vec![
            "cat",
            "/no/such/file.h5",
            "readings",
            "--where",
            "temperature >= ",
        ],
    ] {
        let (stdout, err) = run_code(&args, 2);
        assert_eq!((stdout.as_str(), err.as_str()), ("", want), "{args:?}");
    }
    assert!(!out.exists());
    let (_, err) = run_code(&["cat", p, "readings", "--where", "status = 'Ok' nope"], 2);
    assert_eq!(
        err,
        "h5vec: --where: at 15: expected \"and\", \"or\" or end of text, found \"nope\"\n"
    );
    // A column that is not there, or that is no leaf: named, with the file.
    let (stdout, err) = run_code(&["cat", p, "readings", "--where", "nope > 1"], 2);
    assert_eq!(stdout, "");
    assert_eq!(
        err,
        format!(
            "h5vec: {p}:/readings: $: expected a field `nope` (filter column `nope`), found fields \
             [\"station\", \"temperature\", \"status\", \"humidity\", \"pos\"]\n"
        )
    );
    let (_, err) = run_code(&["count", p, "readings", "--where", "pos > 1"], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: {p}:/readings: $.pos: expected a column with one value per row for filter \
             column `pos`, found a `record` node\n"
        )
    );
    let (_, err) = run_code(&["convert", &src, s(&out), "--where", "station > 1"], 2);
    assert_eq!(
        err,
        format!(
            "h5vec: {p}:/readings: $.station: expected a value for a text column (filter column \
             `station`), found 1\n"
        )
    );
    assert!(!out.exists());
    // Only vectors take a filter.
    for cmd in ["count", "explain", "head", "cat"] {
        let (_, err) = run_code(&[cmd, p, "names", "--where", "`` == 'a'"], 2);
        assert_eq!(
            err,
            format!(
                "h5vec: {p}:/names: --where reads vectors and h5col tables only, and this is a \
                 vls array (queries on VLS arrays are not in this version)\n"
            )
        );
    }
    // Tables take one (ids 2, 3, 4 and i64::MAX; row 4's id is missing).
    assert_eq!(
        run_ok(&["count", &golden_table, "table", "--where", "id > 1"]),
        "4\n"
    );
    assert_eq!(
        run_ok(&["rows", &golden_table, "table", "--where", "id > 1"]),
        "1\n2\n3\n5\n"
    );
    // explain needs a filter.
    let (_, err) = run_code(&["explain", p, "readings"], 2);
    assert!(err.contains("--where <FILTER>"), "{err}");
}

/// `index`: build (sorted-rows by default, any kind by `--kind`), list
/// (valid, then stale after an append), queries use it (`explain`), drop;
/// errors name the problem.
#[test]
fn index_builds_lists_and_drops_search_indexes() {
    let (_dir, path) = fixture();
    let p = s(&path);
    // The statistics every save writes are listed too.
    let minmax =
        "(values)\tchunk-minmax\tvalid\t/xs/metadata/SEARCH_INDEXES/values__chunk_minmax\n";
    assert_eq!(run_ok(&["index", p, "xs"]), minmax);
    assert_eq!(
        run_ok(&["index", p, "xs", ""]),
        "built sorted-rows on the values\n"
    );
    assert_eq!(
        run_ok(&["index", p, "readings", "status", "--kind", "BITMAP"]),
        "built bitmap on `status`\n"
    );
    let list = run_ok(&["index", p, "readings"]);
    assert!(
        list.contains(
            "status\tbitmap\tvalid\t/readings/metadata/SEARCH_INDEXES/status.values__bitmap\n"
        ),
        "{list}"
    );
    let both = run_ok(&["index", p, "xs"]);
    assert!(both.contains(minmax), "{both}");
    assert!(
        both.contains(
            "(values)\tsorted-rows\tvalid\t/xs/metadata/SEARCH_INDEXES/values__sorted_rows\n"
        ),
        "{both}"
    );
    let ex = run_ok(&["explain", p, "xs", "--where", "`` == 7"]);
    assert!(ex.contains("SORTED_ROWS"), "{ex}");
    assert_eq!(
        run_ok(&["rows", p, "xs", "--where", "`` in (7, 149999)"]),
        "7\n149999\n"
    );
    assert_eq!(run_ok(&["count", p, "readings", "--where", WARM_OK]), "2\n");
    // An append makes it stale (queries scan, answers unchanged).
    let f = h5vec::open_file_rw(&path).unwrap();
    h5vec::append_vector(&f, "xs", &[7u32]).unwrap();
    drop(f);
    // (The statistics are kept current by the append.)
    let after = run_ok(&["index", p, "xs"]);
    assert!(after.contains("(values)\tsorted-rows\tstale\t"), "{after}");
    assert!(after.contains(minmax), "{after}");
    assert_eq!(
        run_ok(&["rows", p, "xs", "--where", "`` == 7"]),
        "7\n150000\n"
    );
    assert_eq!(
        run_ok(&["index", p, "xs", "", "--drop"]),
        "dropped sorted-rows on the values\n"
    );
    assert_eq!(run_ok(&["index", p, "xs"]), minmax);
    let (_, err) = run_code(&["index", p, "xs", "", "--drop"], 2);
    assert!(err.contains("no sorted-rows index on the values"), "{err}");
    let (_, err) = run_code(&["index", p, "xs", "", "--kind", "nope"], 2);
    assert!(err.contains("nope"), "{err}");
    let (_, err) = run_code(&["index", p, "readings", "nosuch"], 2);
    assert!(err.contains("nosuch"), "{err}");
}
