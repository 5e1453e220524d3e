//! Appends rows to the h5col table of the query interop tests
//! (`tests/python/test_h5col_query.py`), the way a user of h5vec would:
//! `cargo run --example h5col_query -- append FILE TABLE N SEED` appends `N`
//! pseudo-random rows (NaN, missing values, empty and null lists) to the
//! table h5col wrote, which makes h5col's search indexes stale.

use h5vec::h5col::append_table;
use h5vec::hdf5::File;
use h5vec::H5Vector;

/// A row of the table `test_h5col_query.py` writes with h5col (every
/// column, as `append_table` requires).
#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Row {
    id: Option<i64>,
    x: Option<f64>,
    y: Option<f32>,
    k: Option<i32>,
    u: Option<u16>,
    flag: bool,
    name: Option<String>,
    code: Option<String>,
    lvl: Option<String>,
    vals: Option<Vec<f64>>,
}

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn rows(start: i64, n: usize, seed: u64) -> Vec<Row> {
    let mut r = Rng(seed | 1);
    (0..n)
        .map(|i| Row {
            id: (r.below(10) != 0).then_some(start + i as i64),
            x: match r.below(8) {
                0 => None,
                1 => Some(f64::NAN),
                _ => Some(r.below(2000) as f64 / 10.0 - 100.0),
            },
            // A NaN is the column's missing value (its fill is NaN): a
            // missing value is written as it.
            y: (r.below(6) != 0).then(|| r.below(100) as f32 / 4.0),
            // -1 is the column's fill value: a missing value is written as
            // it (and a present -1 would be refused).
            k: match r.below(30) as i32 - 10 {
                -1 => None,
                v => Some(v),
            },
            u: (r.below(7) != 0).then(|| r.below(1000) as u16),
            flag: r.below(3) == 0,
            name: (r.below(5) != 0)
                .then(|| ["alpha", "beta", "gamma", "m"][r.below(4) as usize].into()),
            code: (r.below(5) != 0).then(|| ["AB", "C", "XYZ"][r.below(3) as usize].into()),
            lvl: (r.below(5) != 0).then(|| ["Low", "Mid", "High"][r.below(3) as usize].into()),
            vals: match r.below(4) {
                0 => None,
                1 => Some(Vec::new()),
                _ => Some((0..r.below(3) + 1).map(|k| k as f64).collect()),
            },
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cmd, file, table, n, seed] = &args[..] else {
        return Err("usage: h5col_query append FILE TABLE N SEED".into());
    };
    if cmd != "append" {
        return Err(format!("unknown command {cmd:?} (append)").into());
    }
    let f = File::open_rw(file)?;
    let nrows = f.group(table)?.attr("NROWS")?.read_scalar::<u64>()?;
    append_table(&f, table, &rows(nrows as i64, n.parse()?, seed.parse()?))?;
    Ok(())
}
