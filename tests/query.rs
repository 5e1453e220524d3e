//! Queries (SPEC.md section 14): every filter compared with a brute-force
//! filter of the loaded rows, over random data with NaN, nulls, sorted and
//! unsorted columns, after appends, with statistics on, off, and stale;
//! the statistics' layout; pruning really skipping chunks.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use h5vec::hdf5::File;
use h5vec::{
    append_vector, col, count_where, explain, load_vector, load_where, save_vector_with,
    select_rows, Filter, H5Vector, SaveOptions,
};
use h5vec_tests::Rng;

#[repr(u8)]
#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
enum Status {
    Ok = 0,
    Warn = 1,
    Fail = 7,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pos {
    x: f32,
    y: i16,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    ts: SystemTime,
    id: u64,
    big: i64,
    temp: f64,
    level: i32,
    flag: bool,
    status: Status,
    pos: Pos,
    name: String,
    note: Option<String>,
    opt: Option<i64>,
    took: Duration,
}

/// A small deterministic generator (xorshift).
fn rows(start: u64, n: u64, seed: u64) -> Vec<Row> {
    let mut r = Rng(seed);
    (start..start + n)
        .map(|i| Row {
            ts: UNIX_EPOCH + Duration::from_secs(1_700_000_000 + i),
            id: r.next(),
            big: if r.below(10) == 0 {
                i64::MAX - r.below(3) as i64
            } else {
                r.below(1000) as i64 - 500
            },
            temp: match r.below(20) {
                0 => f64::NAN,
                1 => f64::INFINITY,
                _ => (r.below(2000) as f64) / 10.0 - 50.0,
            },
            level: (i / 100) as i32,
            flag: r.below(3) == 0,
            status: [Status::Ok, Status::Warn, Status::Fail][r.below(3) as usize],
            pos: Pos {
                x: r.below(100) as f32 / 4.0,
                y: r.below(50) as i16 - 25,
            },
            name: format!("n{}", r.below(30)),
            note: match r.below(4) {
                0 => None,
                k => Some(format!("note{k}")),
            },
            opt: match r.below(3) {
                0 => None,
                _ => Some(r.below(20) as i64),
            },
            took: Duration::from_millis(r.below(5000)),
        })
        .collect()
}

/// `Some(true)` / `Some(false)`: known; `None`: missing (unknown).
type Pred = fn(&Row) -> Option<bool>;

fn cases() -> Vec<(Filter, Pred)> {
    let t0 = UNIX_EPOCH + Duration::from_secs(1_700_000_000 + 1234);
    vec![
        (col("level").between(10, 12), |r| {
            Some((10..=12).contains(&r.level))
        }),
        (col("level").lt(3), |r| Some(r.level < 3)),
        (col("level").ge(49), |r| Some(r.level >= 49)),
        (col("level").eq(7) & col("flag").eq(true), |r| {
            Some(r.level == 7 && r.flag)
        }),
        (col("temp").gt(40.5), |r| Some(r.temp > 40.5)),
        (col("temp").le(-49.9), |r| Some(r.temp <= -49.9)),
        (col("temp").ne(0.0), |r| Some(r.temp != 0.0)),
        (!col("temp").lt(10), |r| {
            Some(r.temp.partial_cmp(&10.0) != Some(std::cmp::Ordering::Less))
        }),
        (col("temp").eq(f64::INFINITY), |r| {
            Some(r.temp == f64::INFINITY)
        }),
        (col("temp").is_null(), |_| Some(false)),
        // Integer literals against a float column: exact (2^53 + 1 is no
        // f64; NaN rows are false, `!=` true).
        (col("temp").between(-3, 7), |r| {
            Some(r.temp >= -3.0 && r.temp <= 7.0)
        }),
        (col("temp").ne(4), |r| Some(r.temp != 4.0)),
        (col("temp").lt(9_007_199_254_740_993i64), |r| {
            Some(r.temp < 9_007_199_254_740_992.0)
        }),
        (col("temp").eq(9_007_199_254_740_993i64), |_| Some(false)),
        (col("temp").between(-3.05, 7.05), |r| {
            Some(r.temp >= -3.05 && r.temp <= 7.05)
        }),
        (col("big").eq(i64::MAX), |r| Some(r.big == i64::MAX)),
        (col("big").gt(i64::MAX), |_| Some(false)),
        (col("big").ge(i64::MAX), |r| Some(r.big == i64::MAX)),
        (col("big").lt(i64::MIN), |_| Some(false)),
        (col("big").le(-500.5), |_| Some(false)),
        (col("big").eq(3.5), |_| Some(false)),
        (col("big").between(1e300, 1e301), |_| Some(false)),
        (col("id").gt(u64::MAX), |_| Some(false)),
        (col("id").lt(0), |_| Some(false)),
        (col("id").ge(-5), |_| Some(true)),
        (col("pos.y").between(-3.5, 2.5), |r| {
            Some((-3..=2).contains(&r.pos.y))
        }),
        (col("big").gt(9223372036854774784.0), |r| {
            Some(r.big > 9223372036854774784)
        }),
        (col("big").lt(9.3e18), |_| Some(true)),
        (col("big").lt(-499.5), |r| Some(r.big < -499)),
        (col("id").lt(u64::MAX / 7), |r| Some(r.id < u64::MAX / 7)),
        (col("status").eq("Fail"), |r| Some(r.status == Status::Fail)),
        (col("status").is_in(["Ok", "Nope"]), |r| {
            Some(r.status == Status::Ok)
        }),
        (col("status").ne("Warn") | col("pos.y").ge(20), |r| {
            Some(r.status != Status::Warn || r.pos.y >= 20)
        }),
        (col("pos.x").between(3.0f32, 4.5f32), |r| {
            Some((3.0..=4.5).contains(&r.pos.x))
        }),
        (col("name").eq("n3"), |r| Some(r.name == "n3")),
        (col("name").ge("n5") & col("name").lt("n7"), |r| {
            Some(r.name.as_str() >= "n5" && r.name.as_str() < "n7")
        }),
        (col("note").eq("note2"), |r| {
            r.note.as_ref().map(|n| n == "note2")
        }),
        (col("note").ne("note2"), |r| {
            r.note.as_ref().map(|n| n != "note2")
        }),
        (col("note").is_null(), |r| Some(r.note.is_none())),
        (col("opt").gt(10), |r| r.opt.map(|o| o > 10)),
        (!col("opt").gt(10), |r| r.opt.map(|o| o <= 10)),
        (col("opt").is_not_null() & col("opt").le(2), |r| {
            r.opt.map(|o| o <= 2)
        }),
        (col("opt").is_in([1, 3, 5]), |r| {
            r.opt.map(|o| [1, 3, 5].contains(&o))
        }),
        (col("opt").gt(15) | col("flag").eq(true), |r| {
            match (r.opt.map(|o| o > 15), r.flag) {
                (_, true) | (Some(true), _) => Some(true),
                (Some(false), false) => Some(false),
                (None, false) => None,
            }
        }),
        (
            col("ts").ge(t0) & col("ts").lt(t0 + Duration::from_secs(50)),
            |r| {
                let t0 = UNIX_EPOCH + Duration::from_secs(1_700_000_000 + 1234);
                Some(r.ts >= t0 && r.ts < t0 + Duration::from_secs(50))
            },
        ),
        (col("took").lt(Duration::from_millis(100)), |r| {
            Some(r.took < Duration::from_millis(100))
        }),
        (
            "ts between '2023-11-14T22:13:20Z' and '2023-11-14T22:15:00Z'"
                .parse()
                .unwrap(),
            |r| {
                let a = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
                Some(r.ts >= a && r.ts <= a + Duration::from_secs(100))
            },
        ),
        (
            "level in (2, 4) and not flag == true".parse().unwrap(),
            |r| Some((r.level == 2 || r.level == 4) && !r.flag),
        ),
    ]
}

fn check(file: &File, name: &str, all: &[Row]) {
    for (i, (f, p)) in cases().into_iter().enumerate() {
        let want: Vec<u64> = all
            .iter()
            .enumerate()
            .filter(|(_, r)| p(r) == Some(true))
            .map(|(k, _)| k as u64)
            .collect();
        let got = select_rows(file, name, &f).unwrap_or_else(|e| panic!("case {i} {f}: {e}"));
        assert_eq!(got, want, "case {i}: {f}");
        assert_eq!(
            count_where(file, name, &f).unwrap(),
            want.len() as u64,
            "case {i}"
        );
        let loaded: Vec<Row> = load_where(file, name, &f).unwrap();
        let expect: Vec<Row> = want.iter().map(|&k| all[k as usize].clone()).collect();
        // NaN != NaN: compare by debug text.
        assert_eq!(
            format!("{loaded:?}"),
            format!("{expect:?}"),
            "case {i}: {f}"
        );
    }
}

fn opts() -> SaveOptions {
    SaveOptions::default().chunk_length(64)
}

#[test]
fn queries_match_brute_force_with_and_without_statistics_and_after_appends() {
    let dir = tempfile::tempdir().unwrap();
    let file = h5vec::create_file(dir.path().join("q.h5")).unwrap();
    let mut all = rows(0, 3000, 7);
    save_vector_with(&file, "on", &all, &opts()).unwrap();
    save_vector_with(&file, "off", &all, &opts().statistics(false)).unwrap();
    check(&file, "on", &all);
    check(&file, "off", &all);
    // Appends of uneven sizes (partial chunks continued), then again.
    for (k, n) in [(1u64, 37u64), (2, 200), (3, 1)] {
        let more = rows(all.len() as u64, n, 100 + k);
        append_vector(&file, "on", &more).unwrap();
        append_vector(&file, "off", &more).unwrap();
        all.extend(more);
    }
    check(&file, "on", &all);
    check(&file, "off", &all);
    assert_eq!(
        format!("{:?}", load_vector::<Row>(&file, "on").unwrap()),
        format!("{all:?}")
    );
    // Only "on" has statistics; appends added none to "off".
    assert!(file.link_exists("on/metadata/SEARCH_INDEXES"));
    assert!(!file.link_exists("off/metadata/SEARCH_INDEXES"));
}

#[test]
fn statistics_skip_chunks_and_describe_every_chunk_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let file = h5vec::create_file(dir.path().join("s.h5")).unwrap();
    let mut all = rows(0, 1000, 9);
    save_vector_with(&file, "v", &all, &opts()).unwrap();
    let more = rows(1000, 100, 10);
    append_vector(&file, "v", &more).unwrap();
    all.extend(more);

    // level = row / 100, sorted: a narrow range reads one 64-row window or two.
    let f = col("level").eq(3);
    let e = explain(&file, "v", &f).unwrap();
    assert_eq!(e.rows_matched(), 100);
    assert_eq!(e.windows(), 1100u64.div_ceil(64));
    assert!(e.windows_read() <= 3, "{e}");
    assert_eq!(e.indexes(), [("level", Some("CHUNK_MINMAX (18 entries)"))]);
    // An unsorted column is read whole; a text column has no statistics.
    let e = explain(&file, "v", &col("name").eq("n1")).unwrap();
    assert_eq!(e.windows_read(), e.windows());
    assert_eq!(e.indexes(), [("name", None)]);

    // The layout: one CHUNK_MINMAX per number leaf, by SOURCE.
    let si = file.group("v/metadata/SEARCH_INDEXES").unwrap();
    let mut names = si.member_names().unwrap();
    names.sort();
    assert_eq!(
        names,
        [
            "big.values__chunk_minmax",
            "flag.values__chunk_minmax",
            "id.values__chunk_minmax",
            "level.values__chunk_minmax",
            "pos.x.values__chunk_minmax",
            "pos.y.values__chunk_minmax",
            "status.values__chunk_minmax",
            "temp.values__chunk_minmax",
            "took.values__chunk_minmax",
            "ts.values__chunk_minmax",
        ]
    );
    assert_eq!(
        si.attr("GENERATION").unwrap().read_scalar::<u64>().unwrap(),
        2
    );
    let ds = si.dataset("level.values__chunk_minmax").unwrap();
    assert_eq!(
        ds.attr("SOURCE_NROWS")
            .unwrap()
            .read_scalar::<u64>()
            .unwrap(),
        1100
    );
    assert_eq!(
        ds.attr("SOURCE_GENERATION")
            .unwrap()
            .read_scalar::<u64>()
            .unwrap(),
        2
    );
    #[derive(hdf5::H5Type, Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct E {
        min: i32,
        max: i32,
        nan_count: u64,
        fill_count: u64,
        n: u64,
    }
    let got: Vec<E> = ds.read_raw().unwrap();
    let want: Vec<E> = all
        .chunks(64)
        .map(|c| E {
            min: c.iter().map(|r| r.level).min().unwrap(),
            max: c.iter().map(|r| r.level).max().unwrap(),
            nan_count: 0,
            fill_count: 0,
            n: c.len() as u64,
        })
        .collect();
    assert_eq!(got, want);
    // Floats: NaN counted, bounds over the others.
    #[derive(hdf5::H5Type, Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct F {
        min: f64,
        max: f64,
        nan_count: u64,
        fill_count: u64,
        n: u64,
    }
    let got: Vec<F> = si
        .dataset("temp.values__chunk_minmax")
        .unwrap()
        .read_raw()
        .unwrap();
    for (c, e) in all.chunks(64).zip(&got) {
        let ok: Vec<f64> = c.iter().map(|r| r.temp).filter(|t| !t.is_nan()).collect();
        assert_eq!(e.nan_count as usize, c.len() - ok.len());
        assert_eq!(e.min, ok.iter().copied().fold(f64::INFINITY, f64::min));
        assert_eq!(e.max, ok.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    }
}

#[test]
fn stale_or_lying_statistics_are_never_believed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.h5");
    let all = rows(0, 640, 3);
    {
        let file = h5vec::create_file(&path).unwrap();
        save_vector_with(&file, "v", &all, &opts()).unwrap();
    }
    // Make the level statistics lie: every chunk claims 1000..1000.
    let file = h5vec::open_file_rw(&path).unwrap();
    let ds = file
        .dataset("v/metadata/SEARCH_INDEXES/level.values__chunk_minmax")
        .unwrap();
    #[derive(hdf5::H5Type, Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct E {
        min: i32,
        max: i32,
        nan_count: u64,
        fill_count: u64,
        n: u64,
    }
    let mut e: Vec<E> = ds.read_raw().unwrap();
    for x in &mut e {
        x.min = 1000;
        x.max = 1000;
    }
    ds.write_raw(&e).unwrap();
    // With valid tokens the lie is believed: nothing matches level 3.
    assert_eq!(count_where(&file, "v", &col("level").eq(3)).unwrap(), 0);
    // A stale token (as an interrupted append leaves it) means no index.
    ds.delete_attr("SOURCE_NROWS").unwrap();
    ds.new_attr::<u64>()
        .create("SOURCE_NROWS")
        .unwrap()
        .write_scalar(&641u64)
        .unwrap();
    assert_eq!(count_where(&file, "v", &col("level").eq(3)).unwrap(), 100);
    // So is a GENERATION that moved on, or a token of another type.
    ds.delete_attr("SOURCE_NROWS").unwrap();
    ds.new_attr::<u32>()
        .create("SOURCE_NROWS")
        .unwrap()
        .write_scalar(&640u32)
        .unwrap();
    assert_eq!(count_where(&file, "v", &col("level").eq(3)).unwrap(), 100);
    // An append rebuilds stale statistics from the data: right again.
    let more = rows(640, 10, 4);
    append_vector(&file, "v", &more).unwrap();
    let e = explain(&file, "v", &col("level").eq(3)).unwrap();
    assert_eq!(e.rows_matched(), 100);
    assert!(e.windows_read() <= 3, "{e}");
    let got: Vec<E> = ds.read_raw().unwrap();
    assert_eq!(got[3].min, 1);
    assert_eq!(got[3].max, 2);
}

#[test]
fn bad_filters_are_errors_naming_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = h5vec::create_file(dir.path().join("b.h5")).unwrap();
    save_vector_with(&file, "v", &rows(0, 10, 1), &opts()).unwrap();
    let err = |f: Filter| select_rows(&file, "v", &f).unwrap_err().to_string();
    let e = err(col("nope").eq(1));
    assert!(e.contains("$") && e.contains("nope"), "{e}");
    let e = err(col("level").eq("x"));
    assert!(e.contains("$.level") && e.contains("integer column"), "{e}");
    let e = err(col("status").lt("Nope"));
    assert!(e.contains("$.status") && e.contains("labels"), "{e}");
    let e = err(col("temp").eq(f64::NAN));
    assert!(e.contains("$.temp") && e.contains("NaN"), "{e}");
    let e = err(col("pos").eq(1));
    assert!(e.contains("$.pos") && e.contains("record"), "{e}");
    let e = err(col("ts").ge("2024-13-01T00:00:00Z"));
    assert!(e.contains("$.ts"), "{e}");
    let e = err(col("ts").ge("2024-01-01T00:00:00"));
    assert!(e.contains("$.ts") && e.contains("UTC"), "{e}");
}

#[test]
fn compaction_and_copies_rebuild_statistics_for_their_new_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let file = h5vec::create_file(dir.path().join("c.h5")).unwrap();
    let mut all = rows(0, 1000, 5);
    save_vector_with(&file, "v", &all, &opts()).unwrap();
    let more = rows(1000, 100, 6);
    append_vector(&file, "v", &more).unwrap();
    all.extend(more);
    h5vec::compact_vector(&file, "v", &SaveOptions::default().chunk_length(100)).unwrap();
    let other = h5vec::create_file(dir.path().join("d.h5")).unwrap();
    h5vec::copy_vector(
        &file,
        "v",
        &other,
        "w",
        &SaveOptions::default().chunk_length(300),
    )
    .unwrap();
    for (f, name, chunk) in [(&file, "v", 100u64), (&other, "w", 300)] {
        check(f, name, &all);
        let e = explain(f, name, &col("level").eq(3)).unwrap();
        let entries = 1100u64.div_ceil(chunk);
        assert_eq!(
            e.indexes(),
            [(
                "level",
                Some(format!("CHUNK_MINMAX ({entries} entries)").as_str())
            )]
        );
        assert!(e.windows_read() <= 2, "{e}");
        let si = f.group(&format!("{name}/metadata/SEARCH_INDEXES")).unwrap();
        assert_eq!(
            si.attr("GENERATION").unwrap().read_scalar::<u64>().unwrap(),
            1
        );
    }
    // A vector saved without statistics is copied without.
    save_vector_with(&file, "bare", &all, &opts().statistics(false)).unwrap();
    h5vec::compact_vector(&file, "bare", &SaveOptions::default()).unwrap();
    assert!(!file.link_exists("bare/metadata/SEARCH_INDEXES"));
}

#[test]
fn bool_statistics_skip_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let file = h5vec::create_file(dir.path().join("b.h5")).unwrap();
    let v: Vec<bool> = (0..640).map(|i| i >= 600).collect();
    save_vector_with(&file, "b", &v, &opts()).unwrap();
    let e = explain(&file, "b", &col("").eq(true)).unwrap();
    assert_eq!(e.rows_matched(), 40);
    assert_eq!((e.windows(), e.windows_read()), (10, 1), "{e}");
}

#[test]
fn live_writers_write_no_statistics_and_leave_old_ones_stale() {
    let dir = tempfile::tempdir().unwrap();
    let file = h5vec::create_file_live(dir.path().join("live.h5")).unwrap();
    let opts = SaveOptions::default().chunk_length(64);
    let mut w = h5vec::VectorWriter::<(u32, f64)>::create_live(&file, "t", &opts).unwrap();
    let mut all = Vec::new();
    for i in 0..500u32 {
        let r = (i, f64::from(i) / 2.0);
        w.push(&r).unwrap();
        all.push(r);
        if i % 97 == 0 {
            w.flush().unwrap();
        }
    }
    w.finish().unwrap();
    assert!(!file.link_exists("t/metadata/SEARCH_INDEXES"));
    let e = explain(&file, "t", &col("1").between(10, 20)).unwrap();
    assert_eq!(e.rows_matched(), 11);
    assert_eq!(e.indexes(), [("1", None)]);
    let got: Vec<(u32, f64)> = load_where(&file, "t", &col("2").ge(249.0)).unwrap();
    assert_eq!(got, all[498..]);

    // A vector saved with statistics, appended to live: stale, not wrong;
    // an append that is not live rebuilds them.
    let path = dir.path().join("live2.h5");
    let file = h5vec::create_file_live(&path).unwrap();
    save_vector_with(&file, "s", &all, &opts).unwrap();
    drop(file);
    let file = h5vec::open_file_rw(&path).unwrap();
    let mut w = h5vec::VectorWriter::<(u32, f64)>::open_append_live(&file, "s", &opts).unwrap();
    for i in 500..530u32 {
        let r = (i, f64::from(i) / 2.0);
        w.push(&r).unwrap();
        all.push(r);
    }
    w.finish().unwrap();
    let e = explain(&file, "s", &col("1").ge(520)).unwrap();
    assert_eq!(
        (e.rows_matched(), e.indexes()),
        (10, vec![("1", None)]),
        "{e}"
    );
    drop(file);
    let file = h5vec::open_file_rw(&path).unwrap();
    append_vector(&file, "s", &[(530u32, 265.0)]).unwrap();
    all.push((530, 265.0));
    let e = explain(&file, "s", &col("1").ge(520)).unwrap();
    assert_eq!((e.rows_matched(), e.windows_read()), (11, 1), "{e}");
    assert_eq!(load_vector::<(u32, f64)>(&file, "s").unwrap(), all);
}

#[test]
fn a_search_indexes_member_that_is_not_a_group_means_no_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.h5");
    let mut all = rows(0, 200, 8);
    {
        let file = h5vec::create_file(&path).unwrap();
        save_vector_with(&file, "v", &all, &opts()).unwrap();
    }
    let file = h5vec::open_file_rw(&path).unwrap();
    let meta = file.group("v/metadata").unwrap();
    meta.unlink("SEARCH_INDEXES").unwrap();
    meta.new_dataset::<u8>().create("SEARCH_INDEXES").unwrap();
    let e = explain(&file, "v", &col("level").eq(1)).unwrap();
    assert_eq!(
        (e.rows_matched(), e.indexes()),
        (100, vec![("level", None)])
    );
    let more = rows(200, 30, 9);
    append_vector(&file, "v", &more).unwrap();
    all.extend(more);
    check(&file, "v", &all);
    assert!(file.dataset("v/metadata/SEARCH_INDEXES").is_ok());
}

/// A record of number leaves only: pushed column by column, its
/// statistics summarized while each block of rows is in the cache.
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Num {
    a: i32,
    b: f64,
    c: u16,
}

fn nums(start: u64, n: u64, seed: u64) -> Vec<Num> {
    let mut r = Rng(seed);
    (start..start + n)
        .map(|i| Num {
            a: match r.below(50) {
                0 => i32::MIN,
                1 => i32::MAX,
                _ => r.below(1 << 20) as i32 - (1 << 19),
            },
            b: match r.below(30) {
                0 => f64::NAN,
                1 => f64::NEG_INFINITY,
                _ => (i as f64) * if r.below(2) == 0 { -0.5 } else { 0.25 },
            },
            c: r.below(65_536) as u16,
        })
        .collect()
}

/// Every statistics entry of `name` equals the brute-force summary of its
/// chunk of `all` (the min/max read converted to f64: exact for these
/// leaves), and the tokens say the index is valid.
fn assert_num_statistics(file: &File, name: &str, all: &[Num]) {
    #[derive(hdf5::H5Type, Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct E {
        min: f64,
        max: f64,
        nan_count: u64,
        fill_count: u64,
        n: u64,
    }
    let si = file
        .group(&format!("{name}/metadata/SEARCH_INDEXES"))
        .unwrap();
    let generation = si.attr("GENERATION").unwrap().read_scalar::<u64>().unwrap();
    type Get = fn(&Num) -> f64;
    let leaves: [(&str, Get); 3] = [
        ("a", |r| f64::from(r.a)),
        ("b", |r| r.b),
        ("c", |r| f64::from(r.c)),
    ];
    for (leaf, get) in leaves {
        let ds = si.dataset(&format!("{leaf}.values__chunk_minmax")).unwrap();
        let token = |a: &str| ds.attr(a).unwrap().read_scalar::<u64>().unwrap();
        assert_eq!(token("SOURCE_GENERATION"), generation, "{name} {leaf}");
        assert_eq!(token("SOURCE_NROWS"), all.len() as u64, "{name} {leaf}");
        let chunk = file
            .dataset(&format!("{name}/data/{leaf}/values"))
            .unwrap()
            .chunk()
            .unwrap()[0];
        let got: Vec<E> = ds.read_raw().unwrap();
        let want: Vec<E> = all
            .chunks(chunk)
            .map(|c| {
                let ok: Vec<f64> = c.iter().map(get).filter(|v| !v.is_nan()).collect();
                E {
                    min: ok.iter().copied().fold(f64::INFINITY, f64::min),
                    max: ok.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    nan_count: (c.len() - ok.len()) as u64,
                    fill_count: 0,
                    n: c.len() as u64,
                }
            })
            .collect();
        assert_eq!(got.len(), want.len(), "{name} {leaf}: one entry per chunk");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            // No ordered value in a chunk: placeholders 0.
            let w = if w.nan_count == w.n {
                E {
                    min: 0.0,
                    max: 0.0,
                    ..*w
                }
            } else {
                *w
            };
            assert_eq!(*g, w, "{name} {leaf} chunk {i} of {chunk} rows");
        }
    }
}

#[test]
fn statistics_equal_a_brute_force_whatever_path_pushed_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let file = h5vec::create_file(dir.path().join("p.h5")).unwrap();
    let variants = [
        ("plain", SaveOptions::default().chunk_length(64), 1000),
        // Blocks of 4096 rows from the middle of a 5000-row chunk on.
        (
            "deflate",
            SaveOptions::default().chunk_length(5000).deflate(4),
            23_000,
        ),
        (
            "lzf",
            SaveOptions::default()
                .chunk_length(100)
                .compression(h5vec::Compression::Lzf),
            1000,
        ),
        (
            "sum",
            SaveOptions::default().chunk_length(5000).checksum(true),
            23_000,
        ),
        ("auto", SaveOptions::default(), 150_000),
    ];
    for (name, opts, n) in variants {
        // A save: blocks of rows pushed column by column.
        let mut all = nums(0, n, 1);
        save_vector_with(&file, name, &all, &opts).unwrap();
        assert_num_statistics(&file, name, &all);
        // An append that starts inside a chunk: its rows read back.
        let more = nums(n, n / 3 + 7, 2);
        h5vec::append_vector_with(&file, name, &more, &opts).unwrap();
        all.extend(more);
        assert_num_statistics(&file, name, &all);
        // Rows pushed one by one, committed in between.
        let mut w = h5vec::VectorWriter::<Num>::open_append(&file, name, &opts).unwrap();
        let more = nums(all.len() as u64, n / 2 + 3, 3);
        for (i, r) in more.iter().enumerate() {
            w.push(r).unwrap();
            if i == more.len() / 3 {
                w.flush().unwrap();
            }
        }
        w.finish().unwrap();
        all.extend(more);
        assert_num_statistics(&file, name, &all);
        // Column by column again, after rows pushed one by one.
        let more = nums(all.len() as u64, n / 5 + 1, 4);
        h5vec::append_vector_with(&file, name, &more, &opts).unwrap();
        all.extend(more);
        assert_num_statistics(&file, name, &all);
        assert_eq!(load_vector::<Num>(&file, name).unwrap().len(), all.len());
    }
}
