//! The command over several files holding one vector (issue 31): `cat`,
//! `head`, `info`, `ls`, `count`, `rows` of a list of files or a glob, `convert` of
//! `'PATTERN.h5:VECTOR'`, each equal to the same command on one file
//! holding the concatenation.

use std::path::{Path, PathBuf};

use h5vec::H5Vector;
use tempfile::TempDir;

mod common;
use common::*;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Reading {
    id: u32,
    value: f64,
    label: String,
    tags: Vec<u16>,
    note: Option<String>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Other {
    id: u32,
    value: f32,
    label: String,
    tags: Vec<u16>,
    note: Option<String>,
}

fn reading(id: u32) -> Reading {
    Reading {
        id,
        value: f64::from(id) * 1.5,
        label: format!("r{id}"),
        tags: (0..(id % 3) as u16).collect(),
        note: id.is_multiple_of(2).then(|| format!("n{id}")),
    }
}

/// `logs/part-0.h5` (4 rows), `part-1.h5` (no rows), `part-2.h5` (3 rows
/// appended to with 2), and `all.h5` with the 9 rows in one vector.
fn fixture() -> (TempDir, Vec<PathBuf>, PathBuf) {
    init();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    let rows: Vec<Reading> = (0..9).map(reading).collect();
    let paths: Vec<PathBuf> = (0..3)
        .map(|i| dir.path().join(format!("logs/part-{i}.h5")))
        .collect();
    let save = |p: &Path, r: &[Reading]| {
        let f = h5vec::create_file(p).unwrap();
        h5vec::save_vector(&f, "telemetry", r).unwrap();
    };
    save(&paths[0], &rows[..4]);
    save(&paths[1], &[]);
    save(&paths[2], &rows[4..7]);
    let f = h5vec::open_file_rw(&paths[2]).unwrap();
    h5vec::append_vector(&f, "telemetry", &rows[7..]).unwrap();
    drop(f);
    let all = dir.path().join("all.h5");
    save(&all, &rows);
    (dir, paths, all)
}

/// A file at `path` holding `telemetry` of another schema (`value` f32).
fn save_other(path: &Path) {
    let rows = [Other {
        id: 1,
        value: 0.5,
        label: "x".into(),
        tags: vec![],
        note: None,
    }];
    h5vec::save_vector(&h5vec::create_file(path).unwrap(), "telemetry", &rows).unwrap();
}

fn pattern(dir: &TempDir) -> String {
    format!("{}/logs/*.h5", dir.path().display())
}

#[test]
fn cat_and_head_over_three_files_equal_one_file() {
    let (dir, paths, all) = fixture();
    let (a, b, c) = (s(&paths[0]), s(&paths[1]), s(&paths[2]));
    let glob = pattern(&dir);
    // A table per batch, and batches end where files end.
    let tables: String = [a, c]
        .iter()
        .map(|f| run_ok(&["cat", f, "telemetry"]))
        .collect();
    assert_eq!(run_ok(&["cat", a, b, c, "telemetry"]), tables);
    assert_eq!(tables.matches("| id |").count(), 2);
    for format in ["jsonl", "csv"] {
        let one = run_ok(&["cat", s(&all), "telemetry", "--format", format]);
        assert_eq!(
            run_ok(&["cat", a, b, c, "telemetry", "--format", format]),
            one,
            "{format}"
        );
        assert_eq!(
            run_ok(&["cat", &glob, "telemetry", "--format", format]),
            one,
            "{format}"
        );
    }
    let jsonl = run_ok(&[
        "cat",
        &glob,
        "telemetry",
        "--format",
        "jsonl",
        "--rows",
        "3..6",
    ]);
    assert_eq!(
        jsonl,
        concat!(
            r#"{"id":3,"value":4.5,"label":"r3","tags":[0,1,2][..0],"note":null}"#,
            "\n"
        )
        .replace("[0,1,2][..0]", "[]")
            + r#"{"id":4,"value":6.0,"label":"r4","tags":[0],"note":"n4"}"#
            + "\n"
            + r#"{"id":5,"value":7.5,"label":"r5","tags":[0,1],"note":null}"#
            + "\n"
    );
    for args in [
        vec!["--rows", "0..9"],
        vec!["--rows", "4..4"],
        vec!["--rows", "6..100"],
        vec!["--columns", "label,tags"],
        vec!["--where", "id >= 2 and id < 8"],
        vec!["--where", "id > 2", "--rows", "1..8"],
    ] {
        let mut one = vec!["cat", s(&all), "telemetry", "--format", "csv"];
        one.extend(&args);
        let mut many = vec!["cat", a, b, c, "telemetry", "--format", "csv"];
        many.extend(&args);
        assert_eq!(run_ok(&many), run_ok(&one), "{args:?}");
    }
    for n in ["1", "4", "5", "7", "100"] {
        let one = run_ok(&["head", s(&all), "telemetry", "-n", n, "--format", "jsonl"]);
        let many = run_ok(&["head", &glob, "telemetry", "-n", n, "--format", "jsonl"]);
        assert_eq!(many, one, "head -n {n}");
        let w = ["--where", "id > 1", "--format", "csv"];
        let one = run_ok(&[&["head", s(&all), "telemetry", "-n", n][..], &w].concat());
        let many = run_ok(&[&["head", a, b, c, "telemetry", "-n", n][..], &w].concat());
        assert_eq!(many, one, "head -n {n} --where");
    }
    // The same file twice: its rows twice.
    let twice = run_ok(&["cat", a, a, "telemetry", "--format", "csv"]);
    assert_eq!(twice.lines().count(), 1 + 8);
}

#[test]
fn convert_of_a_pattern_equals_the_concatenation() {
    let (dir, _, all) = fixture();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let src = format!("{}:telemetry", pattern(&dir));
    let one_src = format!("{}:telemetry", s(&all));
    for ext in ["csv", "jsonl"] {
        let (many, one) = (
            out.join(format!("many.{ext}")),
            out.join(format!("one.{ext}")),
        );
        run_ok(&["convert", &src, s(&many)]);
        run_ok(&["convert", &one_src, s(&one)]);
        let text = std::fs::read_to_string(&many).unwrap();
        assert_eq!(text, std::fs::read_to_string(&one).unwrap(), "{ext}");
        assert_eq!(text.lines().count(), if ext == "csv" { 10 } else { 9 });
    }
    let (many, one) = (out.join("many.parquet"), out.join("one.parquet"));
    run_ok(&["convert", &src, s(&many)]);
    run_ok(&["convert", &one_src, s(&one)]);
    let (m, o) = (read_parquet(&many), read_parquet(&one));
    let schema = o[0].schema();
    let m = arrow::compute::concat_batches(&schema, &m).unwrap();
    let o = arrow::compute::concat_batches(&schema, &o).unwrap();
    assert_eq!(m.num_rows(), 9);
    assert_eq!(m, o);
    // With --columns and --where too.
    let (many, one) = (out.join("some-many.jsonl"), out.join("some-one.jsonl"));
    let args = ["--columns", "id,note", "--where", "id between 3 and 7"];
    let mut a = vec!["convert", &src, s(&many)];
    a.extend(args);
    run_ok(&a);
    let mut b = vec!["convert", &one_src, s(&one)];
    b.extend(args);
    run_ok(&b);
    let text = std::fs::read_to_string(&many).unwrap();
    assert_eq!(text, std::fs::read_to_string(&one).unwrap());
    assert_eq!(text.lines().count(), 5);
    // A pattern matching nothing names the pattern.
    let none = format!("{}/nothing/*.h5:telemetry", dir.path().display());
    let (_, err) = run_code(&["convert", &none, s(&out.join("x.csv"))], 2);
    assert!(err.contains("nothing/*.h5"), "{err}");
    assert!(!out.join("x.csv").exists());
}

#[test]
fn a_file_of_another_schema_is_named() {
    let (dir, paths, _) = fixture();
    let odd = dir.path().join("logs/part-3.h5");
    save_other(&odd);
    let (_, err) = run_code(&["cat", s(&paths[0]), s(&odd), "telemetry"], 2);
    assert!(
        err.contains("part-3.h5") && err.contains("$.value"),
        "{err}"
    );
    let out = dir.path().join("o.parquet");
    let src = format!("{}:telemetry", pattern(&dir));
    let (_, err) = run_code(&["convert", &src, s(&out)], 2);
    assert!(
        err.contains("part-3.h5") && err.contains("$.value"),
        "{err}"
    );
    assert!(err.contains("Float64") && err.contains("Float32"), "{err}");
    assert!(!out.exists());
    // A file without the vector.
    let other = dir.path().join("other.h5");
    h5vec::save_vector(&h5vec::create_file(&other).unwrap(), "else", &[1u8]).unwrap();
    let (_, err) = run_code(&["head", s(&paths[0]), s(&other), "telemetry"], 2);
    assert!(err.contains("other.h5"), "{err}");
    // A missing file.
    let (_, err) = run_code(&["cat", s(&paths[0]), "/nonexistent/x.h5", "telemetry"], 2);
    assert!(err.contains("/nonexistent/x.h5"), "{err}");
}

#[test]
fn info_and_ls_over_several_files() {
    let (dir, paths, _) = fixture();
    let glob = pattern(&dir);
    let out = run_ok(&["info", &glob, "telemetry"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "telemetry: vector over 3 files, 9 rows");
    let cells = |line: &str| {
        line.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(cells(lines[1])[..3], ["FILE", "ROWS", "FIRST"]);
    for (i, (rows, first)) in [("4", "0"), ("0", "4"), ("5", "4")].iter().enumerate() {
        let c = cells(lines[2 + i]);
        assert_eq!(
            (c[0].as_str(), c[1].as_str(), c[2].as_str()),
            (s(&paths[i]), *rows, *first)
        );
    }
    assert_eq!(cells(lines[5])[..2], ["total", "9"]);
    assert_eq!(lines.len(), 6);

    let out = run_ok(&["ls", s(&paths[0]), s(&paths[2])]);
    let lines: Vec<Vec<String>> = out.lines().map(cells).collect();
    assert_eq!(lines[0][..4], ["FILE", "PATH", "KIND", "ROWS"]);
    assert_eq!(lines[1][..4], [s(&paths[0]), "/telemetry", "vector", "4"]);
    assert_eq!(lines[2][..4], [s(&paths[2]), "/telemetry", "vector", "5"]);
    assert_eq!(lines.len(), 3);
    // A pattern, then a group.
    let out = run_ok(&["ls", &glob, "/"]);
    assert_eq!(out.lines().count(), 4);
    // One file: the table of one file, as always (no FILE column).
    let out = run_ok(&["ls", s(&paths[0])]);
    assert!(out.starts_with("PATH"), "{out}");
}

#[test]
fn count_and_rows_over_several_files_number_rows_across_them() {
    let (dir, paths, all) = fixture();
    let glob = pattern(&dir);
    assert_eq!(run_ok(&["count", &glob, "telemetry"]), "9\n");
    assert_eq!(
        run_ok(&["count", s(&paths[0]), s(&paths[2]), "telemetry"]),
        "9\n"
    );
    let f = "id >= 3 and id != 5 or note == 'n0'";
    let want = run_ok(&["rows", s(&all), "telemetry", "--where", f]);
    assert_eq!(want, "0\n3\n4\n6\n7\n8\n");
    assert_eq!(run_ok(&["rows", &glob, "telemetry", "--where", f]), want);
    assert_eq!(run_ok(&["count", &glob, "telemetry", "--where", f]), "6\n");
    // A file of another schema is named, as for `cat`.
    let odd = dir.path().join("logs/part-3.h5");
    save_other(&odd);
    let (_, err) = run_code(&["count", &glob, "telemetry"], 2);
    assert!(
        err.contains("part-3.h5") && err.contains("$.value"),
        "{err}"
    );
}
