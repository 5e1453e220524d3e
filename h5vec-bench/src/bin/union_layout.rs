//! The two candidate layouts of an enum with data (SPEC.md section 4.4),
//! side by side on the same rows, built from plain h5vec vectors so that
//! both go through the same column writers and readers:
//!
//! - **sparse**: one tag per row and every variant's columns with one row
//!   per row (a placeholder where another variant is in use): a record
//!   `{tag, Tick/1, Fill/qty, Fill/price, Fill/fee, Note/1}`;
//! - **dense**: one tag and one `u64` index per row, and each variant's
//!   columns holding only that variant's rows (Arrow's dense union).
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin union_layout [ROWS [REPS]]
//! ```
//!
//! Rows: 20% `Idle`, 30% `Tick(f64)`, 40% `Fill { qty: i32, price: f64,
//! fee: f64 }`, 10% `Note(String)` (8 to 24 bytes), in a fixed
//! pseudo-random order. For each layout and each compression (none,
//! deflate 4): file size, `save`, full `load` into `Vec<Ev>`, and
//! `load_range` of 1000 rows in the middle (medians of REPS).

use h5vec::{hdf5, H5Vector, SaveOptions};
use h5vec_bench::harness::stats;
use std::time::Instant;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Clone, Debug, PartialEq)]
enum Ev {
    Idle,
    Tick(f64),
    Fill { qty: i32, price: f64, fee: f64 },
    Note(String),
}

#[derive(H5Vector, Clone, Default)]
struct Sparse {
    tag: u8,
    tick: f64,
    qty: i32,
    price: f64,
    fee: f64,
    note: String,
}

#[derive(H5Vector, Clone, Copy, Default)]
struct Head {
    tag: u8,
    index: u64,
}

#[derive(H5Vector, Clone, Copy, Default)]
struct FillRow {
    qty: i32,
    price: f64,
    fee: f64,
}

fn gen(n: usize) -> Vec<Ev> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 10 {
                0 | 1 => Ev::Idle,
                2..=4 => Ev::Tick(i as f64 * 0.5),
                5..=8 => Ev::Fill {
                    qty: (x >> 40) as i32 % 1000,
                    price: 100.0 + (x % 997) as f64 / 8.0,
                    fee: 0.25,
                },
                _ => Ev::Note(format!("note {i} {}", "x".repeat((x % 17) as usize))),
            }
        })
        .collect()
}

fn to_sparse(v: &[Ev]) -> Vec<Sparse> {
    v.iter()
        .map(|e| {
            let mut s = Sparse::default();
            match e {
                Ev::Idle => s.tag = 0,
                Ev::Tick(t) => (s.tag, s.tick) = (1, *t),
                Ev::Fill { qty, price, fee } => {
                    (s.tag, s.qty, s.price, s.fee) = (2, *qty, *price, *fee)
                }
                Ev::Note(n) => (s.tag, s.note) = (3, n.clone()),
            }
            s
        })
        .collect()
}

fn from_sparse(v: Vec<Sparse>) -> Vec<Ev> {
    v.into_iter()
        .map(|s| match s.tag {
            0 => Ev::Idle,
            1 => Ev::Tick(s.tick),
            2 => Ev::Fill {
                qty: s.qty,
                price: s.price,
                fee: s.fee,
            },
            _ => Ev::Note(s.note),
        })
        .collect()
}

struct Dense {
    heads: Vec<Head>,
    ticks: Vec<f64>,
    fills: Vec<FillRow>,
    notes: Vec<String>,
}

fn to_dense(v: &[Ev]) -> Dense {
    let mut d = Dense {
        heads: Vec::with_capacity(v.len()),
        ticks: Vec::new(),
        fills: Vec::new(),
        notes: Vec::new(),
    };
    let mut idle = 0u64;
    for e in v {
        let h = match e {
            Ev::Idle => {
                idle += 1;
                Head {
                    tag: 0,
                    index: idle - 1,
                }
            }
            Ev::Tick(t) => {
                d.ticks.push(*t);
                Head {
                    tag: 1,
                    index: d.ticks.len() as u64 - 1,
                }
            }
            Ev::Fill { qty, price, fee } => {
                d.fills.push(FillRow {
                    qty: *qty,
                    price: *price,
                    fee: *fee,
                });
                Head {
                    tag: 2,
                    index: d.fills.len() as u64 - 1,
                }
            }
            Ev::Note(n) => {
                d.notes.push(n.clone());
                Head {
                    tag: 3,
                    index: d.notes.len() as u64 - 1,
                }
            }
        };
        d.heads.push(h);
    }
    d
}

/// Rebuilds rows from heads and the variant rows they use, in order.
fn from_dense(heads: &[Head], d: Dense) -> Vec<Ev> {
    let mut ticks = d.ticks.into_iter();
    let mut fills = d.fills.into_iter();
    let mut notes = d.notes.into_iter();
    heads
        .iter()
        .map(|h| match h.tag {
            0 => Ev::Idle,
            1 => Ev::Tick(ticks.next().unwrap()),
            2 => {
                let f = fills.next().unwrap();
                Ev::Fill {
                    qty: f.qty,
                    price: f.price,
                    fee: f.fee,
                }
            }
            _ => Ev::Note(notes.next().unwrap()),
        })
        .collect()
}

fn dense_range(g: &hdf5::Group, r: std::ops::Range<u64>) -> AnyResult<Vec<Ev>> {
    let heads: Vec<Head> = h5vec::load_range(g, "heads", r)?;
    let mut lo = [u64::MAX; 4];
    let mut hi = [0u64; 4];
    for h in &heads {
        let k = h.tag as usize;
        lo[k] = lo[k].min(h.index);
        hi[k] = hi[k].max(h.index + 1);
    }
    let span = |k: usize| {
        if lo[k] == u64::MAX {
            0..0
        } else {
            lo[k]..hi[k]
        }
    };
    let d = Dense {
        heads: Vec::new(),
        ticks: h5vec::load_range(g, "ticks", span(1))?,
        fills: h5vec::load_range(g, "fills", span(2))?,
        notes: h5vec::load_range(g, "notes", span(3))?,
    };
    Ok(from_dense(&heads, d))
}

fn main() -> AnyResult<()> {
    let a = h5vec_bench::harness::numeric_args()?;
    let n = a.first().copied().unwrap_or(1_000_000);
    let reps = a.get(1).copied().unwrap_or(3);
    let rows = gen(n);
    let dir = std::env::temp_dir().join(format!("h5vec-union-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mid = (n as u64 / 2).saturating_sub(500);
    let range = mid..(mid + 1000).min(n as u64);
    println!("| layout | compression | file MiB | save s | load s | load_range(1000) ms |");
    println!("|---|---|---|---|---|---|");
    for (cname, opts) in [
        ("none", SaveOptions::default()),
        ("deflate 4", SaveOptions::default().deflate(4)),
    ] {
        for layout in ["sparse", "dense"] {
            let (mut save, mut load, mut rng, mut size) = (vec![], vec![], vec![], 0u64);
            for rep in 0..reps {
                let path = dir.join(format!("{layout}-{rep}.h5"));
                let _ = std::fs::remove_file(&path);
                let t = Instant::now();
                {
                    let f = h5vec::create_file(&path)?;
                    if layout == "sparse" {
                        h5vec::save_vector_with(&f, "v", &to_sparse(&rows), &opts)?;
                    } else {
                        let d = to_dense(&rows);
                        let g = f.create_group("v")?;
                        h5vec::save_vector_with(&g, "heads", &d.heads, &opts)?;
                        h5vec::save_vector_with(&g, "ticks", &d.ticks, &opts)?;
                        h5vec::save_vector_with(&g, "fills", &d.fills, &opts)?;
                        h5vec::save_vector_with(&g, "notes", &d.notes, &opts)?;
                    }
                }
                save.push(t.elapsed().as_secs_f64());
                size = std::fs::metadata(&path)?.len();
                let f = h5vec::open_file(&path)?;
                let t = Instant::now();
                let back = if layout == "sparse" {
                    from_sparse(h5vec::load_vector(&f, "v")?)
                } else {
                    let g = f.group("v")?;
                    let heads: Vec<Head> = h5vec::load_vector(&g, "heads")?;
                    let d = Dense {
                        heads: Vec::new(),
                        ticks: h5vec::load_vector(&g, "ticks")?,
                        fills: h5vec::load_vector(&g, "fills")?,
                        notes: h5vec::load_vector(&g, "notes")?,
                    };
                    from_dense(&heads, d)
                };
                load.push(t.elapsed().as_secs_f64());
                assert!(back == rows, "{layout}: load differs");
                let t = Instant::now();
                let part = if layout == "sparse" {
                    from_sparse(h5vec::load_range(&f, "v", range.clone())?)
                } else {
                    dense_range(&f.group("v")?, range.clone())?
                };
                rng.push(t.elapsed().as_secs_f64() * 1e3);
                assert!(
                    part[..] == rows[range.start as usize..range.end as usize],
                    "{layout}: range differs"
                );
                drop(f);
                let _ = std::fs::remove_file(&path);
            }
            println!(
                "| {layout} | {cname} | {:.1} | {:.3} | {:.3} | {:.2} |",
                size as f64 / (1 << 20) as f64,
                stats(&save).0,
                stats(&load).0,
                stats(&rng).0
            );
        }
    }
    let _ = std::fs::remove_dir(&dir);
    Ok(())
}
