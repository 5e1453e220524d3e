//! `h5vec::Dataset`: one vector name over many files, read as the
//! concatenation of the files' vectors (issue 31).

use std::path::{Path, PathBuf};

use h5vec::{Dataset, H5Vector, LoadOptions};

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    id: u64,
    value: f64,
    tag: String,
    tags: Vec<u16>,
    opt: Option<i32>,
}

/// The same as `Row` but `value` is `f32`.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct NarrowRow {
    id: u64,
    value: f32,
    tag: String,
    tags: Vec<u16>,
    opt: Option<i32>,
}

fn row(id: u64) -> Row {
    Row {
        id,
        value: id as f64 * 0.5 - 3.0,
        tag: format!("t{id}"),
        tags: (0..(id % 4) as u16).collect(),
        opt: (!id.is_multiple_of(3)).then_some(-(id as i32)),
    }
}

fn save(path: &Path, rows: &[Row]) {
    let f = h5vec::create_file(path).unwrap();
    h5vec::save_vector(&f, "telemetry", rows).unwrap();
}

/// Four files: 5 rows, none, 3 rows appended to with 4 more, 6 rows; and
/// all rows in order.
fn four_files(dir: &Path) -> (Vec<PathBuf>, Vec<Row>) {
    let all: Vec<Row> = (0..18).map(row).collect();
    let paths: Vec<PathBuf> = ["p0.h5", "p1.h5", "p2.h5", "p3.h5"]
        .iter()
        .map(|n| dir.join(n))
        .collect();
    save(&paths[0], &all[0..5]);
    save(&paths[1], &[]);
    save(&paths[2], &all[5..8]);
    let f = h5vec::open_file_rw(&paths[2]).unwrap();
    h5vec::append_vector(&f, "telemetry", &all[8..12]).unwrap();
    drop(f);
    save(&paths[3], &all[12..18]);
    (paths, all)
}

#[test]
fn a_dataset_is_the_concatenation_of_its_files() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (paths, all) = four_files(dir.path());
    let ds = Dataset::open_files(&paths, "telemetry").unwrap();
    assert_eq!(ds.len(), 18);
    assert!(!ds.is_empty());
    assert_eq!(ds.name(), "telemetry");
    let spans: Vec<_> = ds
        .files()
        .iter()
        .map(|f| (f.path().to_owned(), f.rows()))
        .collect();
    assert_eq!(
        spans,
        [
            (paths[0].clone(), 0..5),
            (paths[1].clone(), 5..5),
            (paths[2].clone(), 5..12),
            (paths[3].clone(), 12..18),
        ]
    );
    assert_eq!(ds.load::<Row>().unwrap(), all);
    // The glob finds the same files in the same order.
    let pattern = format!("{}/p*.h5", dir.path().display());
    let globbed = Dataset::open(&pattern, "telemetry").unwrap();
    assert_eq!(globbed.files(), ds.files());
    assert_eq!(globbed.load::<Row>().unwrap(), all);
    // Another type is refused, naming the first file read.
    let err = ds.load::<(u64, String)>().unwrap_err();
    assert!(err.to_string().contains("p0.h5"), "{err}");
}

#[test]
fn load_range_across_every_boundary() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (paths, all) = four_files(dir.path());
    let ds = Dataset::open_files(&paths, "telemetry").unwrap();
    let n = all.len() as u64;
    for start in 0..=n {
        for end in start..=n {
            let got: Vec<Row> = ds.load_range(start..end).unwrap();
            assert_eq!(got, all[start as usize..end as usize], "{start}..{end}");
        }
    }
    for bad in [n..n + 1, 0..n + 1, 17..19, 40..50] {
        let err = ds.load_range::<Row>(bad.clone()).unwrap_err();
        assert!(err.to_string().contains("outside"), "{bad:?}: {err}");
    }
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 6..5;
    assert!(ds.load_range::<Row>(backwards).is_err());
}

#[test]
fn reader_batches_end_at_file_ends() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (paths, all) = four_files(dir.path());
    let ds = Dataset::open_files(&paths, "telemetry").unwrap();
    let batches: Vec<Vec<Row>> = ds
        .reader::<Row>(3)
        .unwrap()
        .collect::<h5vec::Result<_>>()
        .unwrap();
    let ids: Vec<Vec<u64>> = batches
        .iter()
        .map(|b| b.iter().map(|r| r.id).collect())
        .collect();
    assert_eq!(
        ids,
        [
            vec![0, 1, 2],
            vec![3, 4],
            vec![5, 6, 7],
            vec![8, 9, 10],
            vec![11],
            vec![12, 13, 14],
            vec![15, 16, 17],
        ]
    );
    assert_eq!(batches.concat(), all);
    // One batch per file with rows when batches are large.
    let big: Vec<usize> = ds
        .reader::<Row>(1000)
        .unwrap()
        .map(|b| b.unwrap().len())
        .collect();
    assert_eq!(big, [5, 7, 6]);
    // A range: from inside the first file to inside the third.
    let mut r = ds.reader_range::<Row>(4..14, 4).unwrap();
    assert_eq!(r.remaining(), 10);
    let parts: Vec<Vec<Row>> = r.by_ref().collect::<h5vec::Result<_>>().unwrap();
    let sizes: Vec<usize> = parts.iter().map(Vec::len).collect();
    assert_eq!(sizes, [1, 4, 3, 2]);
    assert_eq!(parts.concat(), all[4..14]);
    assert_eq!(r.remaining(), 0);
    assert!(ds.reader_range::<Row>(10..19, 4).is_err());
    // Empty ranges give no batch.
    assert_eq!(ds.reader_range::<Row>(5..5, 4).unwrap().count(), 0);
    // A wrong type is refused when the reader is made.
    assert!(ds.reader::<u32>(4).is_err());
}

#[test]
fn arrow_batches_equal_each_files_read_vector() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = four_files(dir.path());
    let ds = Dataset::open_files(&paths, "telemetry").unwrap();
    let batches: Vec<_> = ds
        .arrow_batches(1000)
        .unwrap()
        .collect::<h5vec::Result<_>>()
        .unwrap();
    let per_file: Vec<_> = [&paths[0], &paths[2], &paths[3]]
        .iter()
        .map(|p| h5vec::arrow::read_vector(&h5vec::open_file(p).unwrap(), "telemetry").unwrap())
        .collect();
    assert_eq!(batches, per_file);
    // Small batches: the same rows, cut at file ends.
    let small: Vec<_> = ds
        .arrow_batches(4)
        .unwrap()
        .collect::<h5vec::Result<Vec<_>>>()
        .unwrap();
    let sizes: Vec<usize> = small.iter().map(|b| b.num_rows()).collect();
    assert_eq!(sizes, [4, 1, 4, 3, 4, 2]);
    assert!(small.iter().all(|b| b.schema() == per_file[0].schema()));
    let whole = ds.read_arrow().unwrap();
    assert_eq!(whole.num_rows(), 18);
    let concat = h5vec::arrow::arrow_array::RecordBatch::try_new(
        per_file[0].schema(),
        (0..per_file[0].num_columns())
            .map(|i| {
                let parts: Vec<&dyn h5vec::arrow::arrow_array::Array> =
                    per_file.iter().map(|b| b.column(i).as_ref()).collect();
                arrow_select_concat(&parts)
            })
            .collect(),
    )
    .unwrap();
    assert_eq!(whole, concat);
    // A range across files.
    let part: Vec<_> = ds
        .arrow_batches_range(3..7, 100)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .collect();
    assert_eq!(part, [2, 2]);
    // An empty first file still gives the schema.
    let empty_first = Dataset::open_files(&[&paths[1], &paths[0]], "telemetry").unwrap();
    let b = empty_first.arrow_batches(100).unwrap();
    assert_eq!(b.schema(), per_file[0].schema());
    assert_eq!(b.map(|b| b.unwrap().num_rows()).collect::<Vec<_>>(), [5]);
}

/// Arrays concatenated through arrow-data (the tests do not link arrow-select).
fn arrow_select_concat(
    parts: &[&dyn h5vec::arrow::arrow_array::Array],
) -> h5vec::arrow::arrow_array::ArrayRef {
    use arrow_data::transform::MutableArrayData;
    let datas: Vec<_> = parts.iter().map(|a| a.to_data()).collect();
    let refs: Vec<_> = datas.iter().collect();
    let total = datas.iter().map(|d| d.len()).sum();
    let mut m = MutableArrayData::new(refs, false, total);
    for (i, d) in datas.iter().enumerate() {
        m.try_extend(i, 0, d.len()).unwrap();
    }
    h5vec::arrow::arrow_array::make_array(m.freeze())
}

#[test]
fn a_file_of_another_schema_is_refused_naming_it_and_the_field() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (paths, all) = four_files(dir.path());
    let odd = dir.path().join("odd.h5");
    let narrow: Vec<NarrowRow> = all[..2]
        .iter()
        .map(|r| NarrowRow {
            id: r.id,
            value: r.value as f32,
            tag: r.tag.clone(),
            tags: r.tags.clone(),
            opt: r.opt,
        })
        .collect();
    h5vec::save_vector(&h5vec::create_file(&odd).unwrap(), "telemetry", &narrow).unwrap();
    let list = [paths[0].clone(), odd.clone(), paths[3].clone()];
    let err = Dataset::open_files(&list, "telemetry").unwrap_err();
    assert_eq!(err.path(), "$.value");
    let text = err.to_string();
    assert!(text.contains("odd.h5"), "{text}");
    assert!(
        text.contains("Float64") && text.contains("Float32"),
        "{text}"
    );
    assert!(text.contains("p0.h5"), "{text}");
    // Widening allowed: the narrow file reads as f64.
    let opts = LoadOptions::default().widen_numbers(true);
    let ds = Dataset::open_files_with(&list, "telemetry", &opts).unwrap();
    let mut want = all[..5].to_vec();
    want.extend(all[..2].iter().cloned());
    want.extend(all[12..18].iter().cloned());
    assert_eq!(ds.load::<Row>().unwrap(), want);
    assert_eq!(
        ds.reader::<Row>(100)
            .unwrap()
            .map(|b| b.unwrap())
            .collect::<Vec<_>>()
            .concat(),
        want
    );

    // A record with a field more: named by its path.
    #[derive(H5Vector)]
    struct Extra {
        id: u64,
        value: f64,
        tag: String,
        tags: Vec<u16>,
        opt: Option<i32>,
        more: bool,
    }
    let extra = dir.path().join("extra.h5");
    let rows = [Extra {
        id: 1,
        value: 0.0,
        tag: String::new(),
        tags: vec![],
        opt: None,
        more: true,
    }];
    h5vec::save_vector(&h5vec::create_file(&extra).unwrap(), "telemetry", &rows).unwrap();
    let err = Dataset::open_files(&[&paths[0], &extra], "telemetry").unwrap_err();
    assert_eq!(err.path(), "$.more");
    assert!(err.to_string().contains("extra.h5"), "{err}");
    let opts = LoadOptions::default().ignore_extra_fields(true);
    let ds = Dataset::open_files_with(&[&paths[0], &extra], "telemetry", &opts).unwrap();
    assert_eq!(ds.load::<Row>().unwrap().len(), 6);
    // Without the option at read time the typed load names the file.
    let strict = Dataset::open_files_with(&[&extra], "telemetry", &LoadOptions::default()).unwrap();
    let err = strict.load::<Row>().unwrap_err();
    assert!(err.to_string().contains("extra.h5"), "{err}");
}

#[test]
fn a_missing_vector_or_file_is_refused_naming_the_file() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = four_files(dir.path());
    let other = dir.path().join("other.h5");
    h5vec::save_vector(&h5vec::create_file(&other).unwrap(), "elsewhere", &[1u8]).unwrap();
    let err = Dataset::open_files(&[&paths[0], &other], "telemetry").unwrap_err();
    assert!(matches!(err.kind(), h5vec::ErrorKind::NotFound(_)), "{err}");
    assert!(err.to_string().contains("other.h5"), "{err}");
    let gone = dir.path().join("gone.h5");
    let err = Dataset::open_files(&[&paths[0], &gone], "telemetry").unwrap_err();
    assert!(err.to_string().contains("gone.h5"), "{err}");
    let none: [&Path; 0] = [];
    assert!(Dataset::open_files(&none, "telemetry").is_err());
}

#[test]
fn glob_order_and_patterns() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    for (name, v) in [("b.h5", 2u8), ("a.h5", 1), ("c10.h5", 4), ("c2.h5", 3)] {
        h5vec::save_vector(
            &h5vec::create_file(dir.path().join(name)).unwrap(),
            "v",
            &[v],
        )
        .unwrap();
    }
    std::fs::create_dir(dir.path().join("sub.h5")).unwrap();
    let d = dir.path().display();
    let ds = Dataset::open(&format!("{d}/*.h5"), "v").unwrap();
    // Sorted path order (bytes: "c10" before "c2"); directories skipped.
    assert_eq!(ds.load::<u8>().unwrap(), [1, 2, 4, 3]);
    let ds = Dataset::open(&format!("{d}/c?.h5"), "v").unwrap();
    assert_eq!(ds.load::<u8>().unwrap(), [3]);
    let ds = Dataset::open(&format!("{d}/[ab].h5"), "v").unwrap();
    assert_eq!(ds.load::<u8>().unwrap(), [1, 2]);
    let none = format!("{d}/*.parquet");
    let err = Dataset::open(&none, "v").unwrap_err();
    assert!(err.to_string().contains(&none), "{err}");
    let bad = format!("{d}/[.h5");
    assert!(Dataset::open(&bad, "v")
        .unwrap_err()
        .to_string()
        .contains(&bad));
}

#[test]
fn a_group_path_names_the_vector_in_each_file() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for i in 0..2u32 {
        let p = dir.path().join(format!("{i}.h5"));
        let f = h5vec::create_file(&p).unwrap();
        let g = h5vec::create_group(&f, "runs").unwrap();
        h5vec::save_vector(&g, "xs", &[i, i + 10]).unwrap();
        paths.push(p);
    }
    let ds = Dataset::open_files(&paths, "runs/xs").unwrap();
    assert_eq!(ds.load::<u32>().unwrap(), [0, 10, 1, 11]);
    let ds = Dataset::open_files(&paths, "/runs/xs").unwrap();
    assert_eq!(ds.len(), 4);
    let err = Dataset::open_files(&paths, "nope/xs").unwrap_err();
    assert!(err.to_string().contains("0.h5"), "{err}");
}

#[test]
fn rows_are_a_snapshot_and_a_shrunk_file_is_an_error() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (paths, all) = four_files(dir.path());
    let ds = Dataset::open_files(&paths, "telemetry").unwrap();
    // Rows appended after the open are not read.
    let f = h5vec::open_file_rw(&paths[0]).unwrap();
    h5vec::append_vector(&f, "telemetry", &[row(99)]).unwrap();
    drop(f);
    assert_eq!(ds.load::<Row>().unwrap(), all);
    // A file replaced by a shorter one is an error naming it.
    save(&paths[3], &all[12..14]);
    let err = ds.load::<Row>().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("p3.h5") && text.contains("2 rows"), "{text}");
    let err = ds.reader::<Row>(4).unwrap().find_map(|b| b.err()).unwrap();
    assert!(err.to_string().contains("p3.h5"), "{err}");
    let err = ds.arrow_batches(4).unwrap().find_map(|b| b.err()).unwrap();
    assert!(err.to_string().contains("p3.h5"), "{err}");
    // Rows before it still read.
    assert_eq!(ds.load_range::<Row>(0..12).unwrap(), all[..12]);
}

/// The test that counts this process's open file descriptors takes it
/// for writing, every other test of this file for reading: the count is
/// process-wide, and a test opening or closing files on another thread
/// would move it.
static FDS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Open file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[cfg(target_os = "linux")]
#[test]
fn three_hundred_files_are_read_one_at_a_time() {
    let _fds = FDS.write().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut want = Vec::new();
    for i in 0..300u32 {
        let rows = [i * 3, i * 3 + 1, i * 3 + 2];
        let f = h5vec::create_file(dir.path().join(format!("f{i:03}.h5"))).unwrap();
        h5vec::save_vector(&f, "xs", &rows).unwrap();
        want.extend(rows);
    }
    let before = open_fds();
    // The count sees an open file.
    let held = h5vec::open_file(dir.path().join("f000.h5")).unwrap();
    assert!(open_fds() > before);
    drop(held);
    assert_eq!(open_fds(), before);
    let ds = Dataset::open(&format!("{}/f*.h5", dir.path().display()), "xs").unwrap();
    assert_eq!((ds.len(), ds.files().len()), (900, 300));
    assert!(
        open_fds() <= before + 2,
        "{} fds after open, {before} before",
        open_fds()
    );
    let mut got = Vec::new();
    let mut most = 0;
    for batch in ds.reader::<u32>(2).unwrap() {
        got.extend(batch.unwrap());
        most = most.max(open_fds());
    }
    assert_eq!(got, want);
    assert!(
        most <= before + 3,
        "{most} fds while reading, {before} before"
    );
    let mut most = 0;
    let mut rows = 0;
    for batch in ds.arrow_batches(2).unwrap() {
        rows += batch.unwrap().num_rows();
        most = most.max(open_fds());
    }
    assert_eq!(rows, 900);
    assert!(
        most <= before + 3,
        "{most} fds while reading, {before} before"
    );
    assert_eq!(ds.load::<u32>().unwrap(), want);
    assert!(open_fds() <= before + 2);
}

#[test]
fn queries_over_the_files_equal_those_over_one_vector() {
    let _fds = FDS.read().unwrap_or_else(|e| e.into_inner());
    use h5vec::col;
    let dir = tempfile::tempdir().unwrap();
    let (paths, all) = four_files(dir.path());
    let one = dir.path().join("one.h5");
    save(&one, &all);
    let one = h5vec::open_file(&one).unwrap();
    let ds = Dataset::open_files(&paths, "telemetry").unwrap();
    let filters = [
        col("value").ge(1.0),
        col("opt").is_null(),
        col("opt").lt(-10) | col("tag").eq("t3"),
        !col("id").between(4u64, 13u64),
        col("id").gt(1000u64),
    ];
    for f in &filters {
        let want = h5vec::select_rows(&one, "telemetry", f).unwrap();
        assert_eq!(ds.select_rows(f).unwrap(), want, "{f}");
        assert_eq!(ds.count_where(f).unwrap(), want.len() as u64, "{f}");
        let rows: Vec<Row> = ds.load_where(f).unwrap();
        assert_eq!(
            rows,
            want.iter()
                .map(|&r| all[r as usize].clone())
                .collect::<Vec<_>>(),
            "{f}"
        );
    }
    // Rows appended after the dataset was opened are not the dataset's.
    let f = h5vec::open_file_rw(&paths[3]).unwrap();
    h5vec::append_vector(&f, "telemetry", &[row(100)]).unwrap();
    drop(f);
    let big = col("id").ge(17u64);
    assert_eq!(ds.select_rows(&big).unwrap(), [17]);
    assert_eq!(ds.count_where(&big).unwrap(), 1);
    assert_eq!(ds.load_where::<Row>(&big).unwrap(), [row(17)]);
    // A file with fewer rows than when it was opened is named.
    save(&paths[2], &all[5..7]);
    let err = ds.select_rows(&big).unwrap_err().to_string();
    assert!(err.contains("p2.h5") && err.contains("7 rows"), "{err}");
    let err = ds.count_where(&big).unwrap_err().to_string();
    assert!(err.contains("p2.h5"), "{err}");
}
