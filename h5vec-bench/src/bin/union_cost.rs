//! What an enum with data and a map field cost against the same data
//! flattened by hand into plain fields (issue: unions and maps within 1.5x),
//! side by side in one process, interleaved, medians of REPS.
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin union_cost [ROWS [REPS]]
//! ```
//!
//! - **typed**: `{ id: u64, ev: Ev, attrs: HashMap<String, f64> }`, `Ev`
//!   the union of SPEC.md section 4.4 (`Idle` 20%, `Tick(f64)` 30%,
//!   `Fill { qty: i32, price: f64, fee: f64 }` 40%, `Note(String)` 10%),
//!   `attrs` 0 to 3 entries (a map, section 4.5);
//! - **flat**: `{ id, tag: u8, tick: f64, qty: i32, price: f64, fee: f64,
//!   note: String, attr_keys: Vec<String>, attr_values: Vec<f64> }`: every
//!   variant's fields as plain columns with placeholders where another
//!   variant is in use, the map as two lists.
//!
//! Each rep saves and loads both, alternating which goes first. Times are
//! wall clock, save includes the file's close; load is `load_vector` of a
//! reopened file.

use std::collections::HashMap;
use std::time::Instant;

use h5vec::H5Vector;
use h5vec_bench::harness::{loadavg, numeric_args, stats};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(H5Vector, Clone, Debug, PartialEq)]
enum Ev {
    Idle,
    Tick(f64),
    Fill { qty: i32, price: f64, fee: f64 },
    Note(String),
}

#[derive(H5Vector, Clone, Debug, PartialEq)]
struct Typed {
    id: u64,
    ev: Ev,
    attrs: HashMap<String, f64>,
}

#[derive(H5Vector, Clone, Debug, PartialEq, Default)]
struct Flat {
    id: u64,
    tag: u8,
    tick: f64,
    qty: i32,
    price: f64,
    fee: f64,
    note: String,
    attr_keys: Vec<String>,
    attr_values: Vec<f64>,
}

const KEYS: [&str; 4] = ["venue", "latency", "slippage", "score"];

fn gen(n: usize) -> Vec<Typed> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ev = match x % 10 {
                0 | 1 => Ev::Idle,
                2..=4 => Ev::Tick(i as f64 * 0.5),
                5..=8 => Ev::Fill {
                    qty: (x >> 40) as i32 % 1000,
                    price: 100.0 + (x % 997) as f64 / 8.0,
                    fee: 0.25,
                },
                _ => Ev::Note(format!("note {i} {}", "x".repeat((x % 17) as usize))),
            };
            let attrs = (0..(x >> 20) % 4)
                .map(|k| (KEYS[k as usize].to_string(), (x >> 30) as f64 + k as f64))
                .collect();
            Typed {
                id: i as u64,
                ev,
                attrs,
            }
        })
        .collect()
}

fn flatten(v: &[Typed]) -> Vec<Flat> {
    v.iter()
        .map(|r| {
            let mut f = Flat {
                id: r.id,
                ..Flat::default()
            };
            match &r.ev {
                Ev::Idle => f.tag = 0,
                Ev::Tick(t) => {
                    f.tag = 1;
                    f.tick = *t;
                }
                Ev::Fill { qty, price, fee } => {
                    f.tag = 2;
                    (f.qty, f.price, f.fee) = (*qty, *price, *fee);
                }
                Ev::Note(s) => {
                    f.tag = 3;
                    f.note = s.clone();
                }
            }
            for (k, v) in &r.attrs {
                f.attr_keys.push(k.clone());
                f.attr_values.push(*v);
            }
            f
        })
        .collect()
}

/// Save into a new file (closed), then load it back: (save s, load s, bytes).
fn run<T: H5Vector>(path: &std::path::Path, rows: &[T]) -> AnyResult<(f64, f64, u64, usize)> {
    let t = Instant::now();
    {
        let f = h5vec::create_file(path)?;
        h5vec::save_vector(&f, "v", rows)?;
    }
    let save = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let back: Vec<T> = {
        let f = h5vec::open_file(path)?;
        h5vec::load_vector(&f, "v")?
    };
    let load = t.elapsed().as_secs_f64();
    Ok((save, load, std::fs::metadata(path)?.len(), back.len()))
}

fn main() -> AnyResult<()> {
    let args = numeric_args()?;
    let n = args.first().copied().unwrap_or(1_000_000);
    let reps = args.get(1).copied().unwrap_or(5);
    let typed = gen(n);
    let flat = flatten(&typed);
    let dir = std::env::temp_dir().join(format!("h5vec-union-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (tp, fp) = (dir.join("typed.h5"), dir.join("flat.h5"));
    // Each layout loads back exactly what was saved.
    {
        let f = h5vec::create_file(&tp)?;
        h5vec::save_vector(&f, "v", &typed[..n.min(10_000)])?;
        let back: Vec<Typed> = h5vec::load_vector(&f, "v")?;
        assert!(back == typed[..n.min(10_000)], "typed round trip");
    }
    let (mut ts, mut tl, mut fs, mut fl) = (vec![], vec![], vec![], vec![]);
    let (mut tbytes, mut fbytes) = (0, 0);
    for rep in 0..reps {
        let mut one = |typed_first: bool| -> AnyResult<()> {
            if typed_first {
                let (s, l, b, k) = run(&tp, &typed)?;
                assert_eq!(k, n);
                ts.push(s);
                tl.push(l);
                tbytes = b;
            } else {
                let (s, l, b, k) = run(&fp, &flat)?;
                assert_eq!(k, n);
                fs.push(s);
                fl.push(l);
                fbytes = b;
            }
            Ok(())
        };
        one(rep % 2 == 0)?;
        one(rep % 2 != 0)?;
    }
    std::fs::remove_dir_all(&dir)?;
    let (ms, ml) = (stats(&ts).0, stats(&tl).0);
    let (fs_, fl_) = (stats(&fs).0, stats(&fl).0);
    println!(
        "union_cost: {n} rows, medians of {reps} (interleaved), load average {}",
        loadavg()
    );
    println!();
    println!("| layout | file MiB | save s | load s |");
    println!("|---|---|---|---|");
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!(
        "| typed (union + HashMap) | {:.1} | {ms:.3} | {ml:.3} |",
        mib(tbytes)
    );
    println!(
        "| flat by hand | {:.1} | {fs_:.3} | {fl_:.3} |",
        mib(fbytes)
    );
    println!(
        "| typed / flat | {:.2}x | {:.2}x | {:.2}x |",
        tbytes as f64 / fbytes as f64,
        ms / fs_,
        ml / fl_
    );
    Ok(())
}
