//! Many small vectors saved into one group, side by side: a file of
//! `h5vec::create_file` (its root group keeps up to
//! 256 links in its object header) against one of
//! `hdf5::File::create` (HDF5's default group: a link index from 9 links).
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin many_saves [VECTORS [REPS]]
//! ```
//!
//! Each repetition saves `VECTORS` 3-row W1 vectors into a new file of
//! each kind (rotating order) and times every save. Reports, per kind, the
//! median of the per-save medians, the slowest save and the total.

use h5vec_bench::data;
use h5vec_bench::harness::{numeric_args, stats};
use std::time::Instant;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> AnyResult<()> {
    let a = numeric_args()?;
    let n = a.first().copied().unwrap_or(1000);
    let reps = a.get(1).copied().unwrap_or(3);
    let rows = data::gen_w1(3);
    let dir = std::env::temp_dir().join(format!("h5vec-many-saves-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let kinds = ["create_file", "File::create"];
    let mut med = vec![Vec::new(); 2];
    let mut worst = vec![Vec::new(); 2];
    let mut total = vec![Vec::new(); 2];
    for rep in 0..reps {
        for k in 0..2 {
            let i = (k + rep) % 2;
            let path = dir.join(format!("f{i}.h5"));
            let _ = std::fs::remove_file(&path);
            let f = if i == 0 {
                h5vec::create_file(&path)?
            } else {
                hdf5::File::create(&path)?
            };
            let mut each = Vec::with_capacity(n);
            let t0 = Instant::now();
            for j in 0..n {
                let t = Instant::now();
                h5vec::save_vector(&f, &format!("v{j}"), &rows)?;
                each.push(t.elapsed().as_secs_f64());
            }
            total[i].push(t0.elapsed().as_secs_f64());
            let (m, _, hi) = stats(&each);
            med[i].push(m);
            worst[i].push(hi);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{n} saves of a 3-row W1 vector into one group; {reps} repetitions; medians\n");
    println!("| file | per save | slowest save | total |");
    println!("|---|---:|---:|---:|");
    for (i, kind) in kinds.iter().enumerate() {
        println!(
            "| {kind} | {:.0} us | {:.1} ms | {:.2} s |",
            stats(&med[i]).0 * 1e6,
            stats(&worst[i]).0 * 1e3,
            stats(&total[i]).0
        );
    }
    Ok(())
}
