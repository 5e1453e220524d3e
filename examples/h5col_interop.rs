//! h5col tables with categorical columns and search indexes, for the
//! interop tests with the real h5col (`tests/python/test_h5col_interop.py`).
//!
//! Usage:
//! - `cargo run --example h5col_interop -- read FILE TABLE`: the rows of a
//!   table written by h5col (`tests/python/h5col_fixtures.py`), one JSON
//!   object per line, categorical columns as their labels;
//! - `... append FILE TABLE`: appends 4 rows to that table (h5col's indexes
//!   become stale: h5vec bumps `GENERATION`);
//! - `... write FILE TABLE`: saves a new table with categorical columns
//!   (fieldless enum fields) for h5col to read.

use h5vec::h5col::{append_table, load_table, save_table};
use h5vec::hdf5::File;
use h5vec::H5Vector;
use serde::Serialize;

/// The labels of `level` (h5col: `categories=["Low", "Mid", "High"]`).
#[derive(H5Vector, Serialize, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Level {
    Low,
    Mid,
    High,
}

/// A row of `h5col_fixtures.write_indexed_table`.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Row {
    id: i64,
    x: Option<f64>,
    level: Option<Level>,
    pay: Option<String>,
    flag: bool,
}

/// A table h5vec writes for h5col.
#[derive(H5Vector, Serialize, Debug, Clone, PartialEq)]
struct Written {
    id: i64,
    level: Level,
    maybe: Option<Level>,
    name: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cmd, file, table] = &args[..] else {
        return Err("usage: h5col_interop read|append|write FILE TABLE".into());
    };
    match cmd.as_str() {
        "read" => {
            let f = File::open(file)?;
            for r in load_table::<Row>(&f, table)? {
                println!("{}", serde_json::to_string(&r)?);
            }
        }
        "append" => {
            let f = File::open_rw(file)?;
            let labels = |s: &str| Some(s.to_owned());
            let rows = vec![
                Row {
                    id: 10,
                    x: Some(10.5),
                    level: Some(Level::High),
                    pay: labels("Dispute"),
                    flag: true,
                },
                Row {
                    id: 11,
                    x: None,
                    level: Some(Level::Low),
                    pay: None,
                    flag: false,
                },
                Row {
                    id: 12,
                    x: Some(12.5),
                    level: None,
                    pay: labels("Cash"),
                    flag: true,
                },
                Row {
                    id: 13,
                    x: Some(13.5),
                    level: Some(Level::Mid),
                    pay: labels("Credit card"),
                    flag: false,
                },
            ];
            append_table(&f, table, &rows)?;
        }
        "write" => {
            let f = File::create(file)?;
            let rows: Vec<Written> = (0..6)
                .map(|i| Written {
                    id: i,
                    level: [Level::Low, Level::Mid, Level::High][i as usize % 3],
                    maybe: (i % 2 == 0).then_some(Level::High),
                    name: format!("n{i}"),
                })
                .collect();
            save_table(&f, table, &rows)?;
        }
        _ => return Err(format!("unknown command {cmd}").into()),
    }
    Ok(())
}
