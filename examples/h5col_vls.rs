//! Writes an h5col table and a takane/dolomite VLS string array with h5vec,
//! reads both back, and converts the table into an h5vec vector.
//!
//! Usage: `cargo run --example h5col_vls -- OUT.h5`
//! (`tests/python/test_golden_roundtrip.py` checks the file with plain h5py).

use h5vec::hdf5::File;
use h5vec::H5Vector;

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Event {
    id: i64,
    score: Option<f64>,
    flag: bool,
    name: String,
    tags: Option<Vec<Option<String>>>,
    values: Vec<f32>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).ok_or("usage: h5col_vls OUT.h5")?;
    let file = File::create(&out)?;
    let events = vec![
        Event {
            id: 1,
            score: Some(0.5),
            flag: true,
            name: "alpha".into(),
            tags: Some(vec![Some("qc".into()), None]),
            values: vec![1.0, 2.5],
        },
        Event {
            id: 2,
            score: None,
            flag: false,
            name: "日本".into(),
            tags: None,
            values: vec![],
        },
        Event {
            id: 3,
            score: Some(-1.25),
            flag: true,
            name: "βeta".into(),
            tags: Some(vec![]),
            values: vec![0.25],
        },
    ];
    // h5col table: save, then append one more row. String columns are
    // fixed-length, sized by the first save (6 bytes here), so appended
    // names must fit.
    h5vec::h5col::save_table(&file, "table", &events[..2])?;
    h5vec::h5col::append_table(&file, "table", &events[2..])?;
    let back: Vec<Event> = h5vec::h5col::load_table(&file, "table")?;
    assert_eq!(back, events);

    // The same rows as an h5vec vector, and back to a table.
    h5vec::save_vector(&file, "events_vector", &back)?;
    let v: Vec<Event> = h5vec::load_vector(&file, "events_vector")?;
    h5vec::h5col::save_table(&file, "table_copy", &v)?;

    // A VLS string array like dolomite's: "NA" is a real value, so the
    // placeholder becomes "NA_".
    let strings = vec![
        Some("alpha".to_string()),
        None,
        Some(String::new()),
        Some("NA".to_string()),
        Some("héllo wörld".to_string()),
    ];
    h5vec::vls::save_strings(&file, "atomic_vector", &strings)?;
    let s = h5vec::vls::load_strings(&file.group("atomic_vector")?)?;
    assert_eq!(s, strings);
    // No missing values: no placeholder attribute.
    h5vec::vls::save_strings(&file, "no_missing", &[Some("x".into()), Some("yy".into())])?;
    println!("wrote {out}");
    Ok(())
}
