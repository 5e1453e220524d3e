//! The Rust side of `tests/python/test_serde_enums.py`: the enums of
//! `examples/xlang_enums.rs` (unit, newtype, struct and renamed tuple
//! variants; in a record, an `Option` and a list) saved through the serde
//! path (`h5vec::serde`, SPEC.md section 13), read there by the Python
//! package.
//!
//! ```text
//! cargo run --example xlang_serde_enums --features serde-columns -- OUT.h5
//! ```

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Event {
    Idle,
    Tick(f64),
    Fill {
        qty: i32,
        price: f64,
    },
    #[serde(rename = "note")]
    Note(String, Vec<u16>),
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Row {
    id: u32,
    event: Event,
    maybe: Option<Event>,
    history: Vec<Event>,
}

fn event(i: usize) -> Event {
    match i % 4 {
        0 => Event::Idle,
        1 => Event::Tick(i as f64 * 0.5),
        2 => Event::Fill {
            qty: 10 - i as i32,
            price: 1.25 * i as f64,
        },
        _ => Event::Note(format!("n{i}"), (0..(i % 3) as u16).collect()),
    }
}

fn main() -> h5vec::Result<()> {
    let out = std::env::args()
        .nth(1)
        .expect("usage: xlang_serde_enums OUT.h5");
    let file = h5vec::create_file(out)?;
    let rows: Vec<Row> = (0..9)
        .map(|i| Row {
            id: i as u32,
            event: event(i),
            maybe: (!i.is_multiple_of(3)).then(|| event(i + 1)),
            history: (0..i % 3).map(|k| event(i + k)).collect(),
        })
        .collect();
    // Saved in two parts: the append path writes the same layout.
    h5vec::serde::save_vector(&file, "rows", &rows[..5])?;
    h5vec::serde::append_vector(&file, "rows", &rows[5..])?;
    assert_eq!(h5vec::serde::load_vector::<Row>(&file, "rows")?, rows);
    Ok(())
}
