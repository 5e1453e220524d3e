//! criterion benches of h5vec save/load (issue 6).
//!
//! ```text
//! cargo bench -p h5vec-bench                      # 1k, 100k, 1M rows (~6-8 min)
//! H5VEC_BENCH_10M=1 cargo bench -p h5vec-bench    # also 10M rows (slow)
//! cargo bench -p h5vec-bench -- 'w1/save'         # a subset (criterion filter)
//! ```
//!
//! Groups `w1/save`, `w1/load`, `w2/save`, `w2/load`; ids `<variant>/<rows>`
//! with variant `plain` (uncompressed) or `deflate4`. Throughput is the
//! logical payload (W1: 44 B/row). save: `File::create`, `save_vector_with`
//! and close; load: `File::open`, `load_vector` and close (hot page cache;
//! dropping the loaded `Vec` is not timed).
//!
//! Large sizes use few samples and short measurement times to keep the
//! default run short; criterion's statistics are correspondingly wider than
//! those of `scripts/compare.sh`, which is the reference for the targets.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use h5vec::hdf5::File;
use h5vec::{H5Vector, SaveOptions};
use h5vec_bench::data;

fn sizes() -> Vec<usize> {
    let mut s = vec![1_000, 100_000, 1_000_000];
    if std::env::var_os("H5VEC_BENCH_10M").is_some() {
        s.push(10_000_000);
    }
    s
}

fn variants() -> [(&'static str, SaveOptions); 2] {
    [
        ("plain", SaveOptions::default()),
        ("deflate4", SaveOptions::default().deflate(4)),
    ]
}

fn tmp_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("h5vec-criterion-{}-{tag}.h5", std::process::id()))
}

fn save<T: H5Vector>(path: &Path, v: &[T], opts: &SaveOptions) {
    let _ = std::fs::remove_file(path);
    let f = File::create(path).expect("create");
    h5vec::save_vector_with(&f, "v", v, opts).expect("save");
    f.close().expect("close");
}

fn load<T: H5Vector>(path: &Path) -> Vec<T> {
    let f = File::open(path).expect("open");
    let v = h5vec::load_vector::<T>(&f, "v").expect("load");
    f.close().expect("close");
    v
}

/// Few samples for large inputs, so the default run stays short.
fn tune(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, rows: usize) {
    match rows {
        0..=10_000 => {
            g.sample_size(30);
            g.measurement_time(Duration::from_secs(2));
        }
        10_001..=100_000 => {
            g.sample_size(15);
            g.measurement_time(Duration::from_secs(3));
        }
        100_001..=1_000_000 => {
            g.sample_size(10);
            g.measurement_time(Duration::from_secs(5));
        }
        _ => {
            g.sample_size(10);
            g.measurement_time(Duration::from_secs(30));
        }
    }
    if rows > 10_000 {
        // One iteration per sample (linear sampling would run 55 iterations).
        g.sampling_mode(SamplingMode::Flat);
    }
    g.warm_up_time(Duration::from_millis(500));
}

fn bench_workload<T: H5Vector + PartialEq>(
    c: &mut Criterion,
    wl: &str,
    gen: fn(usize) -> Vec<T>,
    payload: fn(&[T]) -> u64,
) {
    for rows in sizes() {
        let input = gen(rows);
        let bytes = payload(&input);
        for (variant, opts) in variants() {
            let path = tmp_path(&format!("{wl}-{variant}-{rows}"));
            {
                let mut g = c.benchmark_group(format!("{wl}/save"));
                tune(&mut g, rows);
                g.throughput(Throughput::Bytes(bytes));
                g.bench_with_input(BenchmarkId::new(variant, rows), &input, |b, v| {
                    b.iter(|| save(&path, v, &opts))
                });
                g.finish();
            }
            save(&path, &input, &opts);
            assert!(load::<T>(&path) == input, "round trip");
            {
                let mut g = c.benchmark_group(format!("{wl}/load"));
                tune(&mut g, rows);
                g.throughput(Throughput::Bytes(bytes));
                g.bench_function(BenchmarkId::new(variant, rows), |b| {
                    b.iter_with_large_drop(|| load::<T>(&path))
                });
                g.finish();
            }
            let _ = std::fs::remove_file(&path);
        }
    }
}

fn w1(c: &mut Criterion) {
    bench_workload(c, "w1", data::gen_w1, |v| data::W1_PAYLOAD * v.len() as u64);
}

fn w2(c: &mut Criterion) {
    bench_workload(c, "w2", data::gen_w2, data::w2_payload);
}

criterion_group!(benches, w1, w2);
criterion_main!(benches);
