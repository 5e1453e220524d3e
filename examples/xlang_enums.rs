//! The Rust side of `tests/python/test_enums_h5py.py`: enums with data
//! (unions, SPEC.md section 4.4) and labelled fieldless enums (section 2),
//! read there with plain h5py and numpy.
//!
//! ```text
//! cargo run --example xlang_enums -- OUT.h5
//! ```
//!
//! Row `i`'s values are a pure function of `i`; the Python test recomputes
//! them independently.

use h5vec::H5Vector;

/// An enum with data: unit, tuple and struct variants, one renamed.
#[derive(H5Vector, Debug, Clone)]
enum Event {
    Idle,
    Tick(f64),
    Fill {
        qty: i32,
        price: f64,
    },
    #[h5vec(rename = "note")]
    Note(String, Vec<u16>),
}

/// A fieldless enum with explicit discriminants: stored as its codes,
/// labelled by `variant_names` / `variant_values`.
#[derive(H5Vector, Debug, Clone, Copy)]
#[repr(i16)]
enum Status {
    New = -1,
    Open = 3,
    Closed = 300,
}

#[derive(H5Vector, Debug, Clone)]
struct Row {
    id: u32,
    event: Event,
    maybe: Option<Event>,
    history: Vec<Event>,
    status: Status,
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

fn row(i: usize) -> Row {
    Row {
        id: i as u32,
        event: event(i),
        maybe: (!i.is_multiple_of(3)).then(|| event(i + 1)),
        history: (0..i % 3).map(|k| event(i + k)).collect(),
        status: [Status::New, Status::Open, Status::Closed][i % 3],
    }
}

fn main() -> h5vec::Result<()> {
    let out = std::env::args().nth(1).expect("usage: xlang_enums OUT.h5");
    let file = h5vec::create_file(out)?;
    let rows: Vec<Row> = (0..9).map(row).collect();
    // Saved in two parts: the append path writes the same layout.
    h5vec::save_vector(&file, "rows", &rows[..5])?;
    h5vec::append_vector(&file, "rows", &rows[5..])?;
    Ok(())
}
