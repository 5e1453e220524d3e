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
//! reopened file. The flat load builds no `Ev` and no `HashMap`, so its
//! load is also timed together with turning its rows into the same `Typed`
//! values the typed load returns (strings moved, not copied).
//!
//! `UNION_COST_ONLY=typed` (or `flat`) runs one side alone, for profiling;
//! `UNION_COST_VLS=1` saves both with `SaveOptions::vls_strings(true)`,
//! `UNION_COST_VLS=0` with `vls_strings(false)` (every string, map keys
//! included, an HDF5 variable-length string).

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

/// The flat rows as the values the typed load returns.
fn unflatten(v: Vec<Flat>) -> Vec<Typed> {
    v.into_iter()
        .map(|f| Typed {
            id: f.id,
            ev: match f.tag {
                0 => Ev::Idle,
                1 => Ev::Tick(f.tick),
                2 => Ev::Fill {
                    qty: f.qty,
                    price: f.price,
                    fee: f.fee,
                },
                _ => Ev::Note(f.note),
            },
            attrs: f.attr_keys.into_iter().zip(f.attr_values).collect(),
        })
        .collect()
}

/// One save and load: seconds to save, to load, to load and `build` the
/// values, the file's bytes and the rows built.
struct Run {
    save: f64,
    load: f64,
    built: f64,
    bytes: u64,
    rows: usize,
}

/// Save into a new file (closed), then load it back and `build` values of it.
fn run<T: H5Vector, B>(
    path: &std::path::Path,
    rows: &[T],
    opts: &h5vec::SaveOptions,
    build: impl FnOnce(Vec<T>) -> Vec<B>,
) -> AnyResult<Run> {
    let t = Instant::now();
    {
        let f = h5vec::create_file(path)?;
        h5vec::save_vector_with(&f, "v", rows, opts)?;
    }
    let save = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let back: Vec<T> = {
        let f = h5vec::open_file(path)?;
        h5vec::load_vector(&f, "v")?
    };
    let load = t.elapsed().as_secs_f64();
    let built = build(back);
    Ok(Run {
        save,
        load,
        built: t.elapsed().as_secs_f64(),
        bytes: std::fs::metadata(path)?.len(),
        rows: built.len(),
    })
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
    let opts = h5vec::SaveOptions::default();
    let opts = match std::env::var("UNION_COST_VLS").as_deref() {
        Ok("0") => opts.vls_strings(false),
        Ok(_) => opts.vls_strings(true),
        Err(_) => opts,
    };
    // Each layout loads back exactly what was saved.
    {
        let f = h5vec::create_file(&tp)?;
        h5vec::save_vector_with(&f, "v", &typed[..n.min(10_000)], &opts)?;
        let back: Vec<Typed> = h5vec::load_vector(&f, "v")?;
        assert!(back == typed[..n.min(10_000)], "typed round trip");
        h5vec::save_vector_with(&f, "f", &flat[..n.min(10_000)], &opts)?;
        let back: Vec<Flat> = h5vec::load_vector(&f, "f")?;
        assert!(unflatten(back) == typed[..n.min(10_000)], "flat round trip");
    }
    // For profiling one side alone.
    let only = std::env::var("UNION_COST_ONLY").ok();
    let (mut t, mut fl) = (vec![], vec![]);
    for rep in 0..reps {
        let mut one = |typed_first: bool| -> AnyResult<()> {
            if typed_first {
                let r = run(&tp, &typed, &opts, |v| v)?;
                assert_eq!(r.rows, n);
                t.push(r);
            } else {
                let r = run(&fp, &flat, &opts, unflatten)?;
                assert_eq!(r.rows, n);
                fl.push(r);
            }
            Ok(())
        };
        match only.as_deref() {
            Some("typed") => one(true)?,
            Some("flat") => one(false)?,
            _ => {
                one(rep % 2 == 0)?;
                one(rep % 2 != 0)?;
            }
        }
    }
    std::fs::remove_dir_all(&dir)?;
    let med = |v: &[Run], f: fn(&Run) -> f64| {
        if v.is_empty() {
            f64::NAN
        } else {
            stats(&v.iter().map(f).collect::<Vec<_>>()).0
        }
    };
    let row = |v: &[Run]| {
        (
            v.last().map_or(0, |r| r.bytes) as f64 / (1024.0 * 1024.0),
            med(v, |r| r.save),
            med(v, |r| r.load),
            med(v, |r| r.built),
        )
    };
    let (a, b) = (row(&t), row(&fl));
    println!(
        "union_cost: {n} rows, medians of {reps} (interleaved), {}, load average {}",
        match std::env::var("UNION_COST_VLS").as_deref() {
            Ok("0") => "vls_strings(false)",
            Ok(_) => "vls_strings(true)",
            Err(_) => "default options",
        },
        loadavg()
    );
    println!();
    println!("| layout | file MiB | save s | load s | load + build `Typed` s |");
    println!("|---|---|---|---|---|");
    println!(
        "| typed (union + HashMap) | {:.1} | {:.3} | {:.3} | {:.3} |",
        a.0, a.1, a.2, a.3
    );
    println!(
        "| flat by hand | {:.1} | {:.3} | {:.3} | {:.3} |",
        b.0, b.1, b.2, b.3
    );
    println!(
        "| typed / flat | {:.2}x | {:.2}x | {:.2}x | {:.2}x |",
        a.0 / b.0,
        a.1 / b.1,
        a.2 / b.2,
        a.3 / b.3
    );
    Ok(())
}
