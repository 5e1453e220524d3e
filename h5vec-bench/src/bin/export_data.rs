//! Writes the generated W1 and W2 data as canonical numpy columns (`.npy`),
//! so that the Python peers of `scripts/compare.sh` measure exactly the data
//! the Rust side generates (no second generator to keep in sync).
//!
//! ```text
//! cargo run --release -p h5vec-bench --bin export_data -- --rows N --dir D
//! ```
//!
//! Files in `D` (little-endian, C order):
//!
//! | file | dtype | shape |
//! |---|---|---|
//! | `w1_weeks.npy` | `<i4` | (N,) |
//! | `w1_microseconds.npy` | `<i8` | (N,) |
//! | `w1_temperature.npy` | `<f8` | (N,) |
//! | `w1_position.npy` | `<f8` | (N, 3) |
//! | `w2_id.npy` | `<u8` | (N,) |
//! | `w2_name_off.npy`, `w2_name_bytes.npy` | `<u8`, `|u1` | (N+1,), (total name bytes,) |
//! | `w2_tags_off.npy` | `<u8` | (N+1,) index into the flat tag list |
//! | `w2_tag_char_off.npy`, `w2_tag_chars.npy` | `<u8`, `|u1` | (T+1,), (tag bytes,) |
//! | `w2_values_off.npy`, `w2_values.npy` | `<u8`, `<f4` | (N+1,), (V,) |
//!
//! plus `meta.json` with N and the logical payloads.

use std::error::Error;
use std::io::Write;
use std::path::Path;

use h5vec_bench::data;

/// A numpy element type this exporter writes.
trait NpyType: Copy {
    const DESCR: &'static str;
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! npy_type {
    ($t:ty, $d:literal) => {
        impl NpyType for $t {
            const DESCR: &'static str = $d;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}
npy_type!(i32, "<i4");
npy_type!(i64, "<i8");
npy_type!(u64, "<u8");
npy_type!(f64, "<f8");
npy_type!(f32, "<f4");
npy_type!(u8, "|u1");

/// Writes `values` as an `.npy` (format 1.0) of `shape`.
fn write_npy<T: NpyType>(path: &Path, values: &[T], shape: &[usize]) -> std::io::Result<()> {
    assert_eq!(shape.iter().product::<usize>(), values.len());
    let dims = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {dims}, }}",
        T::DESCR
    );
    // magic (6) + version (2) + header length (2) + header, padded to 64 bytes.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + std::mem::size_of_val(values));
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for &v in values {
        v.put(&mut out);
    }
    std::fs::File::create(path)?.write_all(&out)
}

fn offsets(lens: impl Iterator<Item = usize>) -> Vec<u64> {
    let mut off = vec![0u64];
    let mut acc = 0u64;
    for l in lens {
        acc += l as u64;
        off.push(acc);
    }
    off
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut rows = 1_000_000usize;
    let mut dir = std::path::PathBuf::from("bench-data");
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rows" => {
                rows = it
                    .next()
                    .ok_or("--rows N")?
                    .replace(['_', ','], "")
                    .parse()?
            }
            "--dir" => dir = it.next().ok_or("--dir D")?.into(),
            _ => return Err(format!("usage: export_data --rows N --dir D (got {a})").into()),
        }
    }
    std::fs::create_dir_all(&dir)?;
    let p = |f: &str| dir.join(f);

    let w1 = data::gen_w1(rows);
    let col = |f: &dyn Fn(&data::Measurement) -> f64| w1.iter().map(f).collect::<Vec<f64>>();
    write_npy(
        &p("w1_weeks.npy"),
        &w1.iter().map(|m| m.timestamp.weeks).collect::<Vec<_>>(),
        &[rows],
    )?;
    write_npy(
        &p("w1_microseconds.npy"),
        &w1.iter()
            .map(|m| m.timestamp.microseconds)
            .collect::<Vec<_>>(),
        &[rows],
    )?;
    write_npy(&p("w1_temperature.npy"), &col(&|m| m.temperature), &[rows])?;
    write_npy(
        &p("w1_position.npy"),
        &w1.iter().flat_map(|m| m.position).collect::<Vec<_>>(),
        &[rows, 3],
    )?;
    let w1_payload = data::W1_PAYLOAD * rows as u64;
    drop(w1);

    let w2 = data::gen_w2(rows);
    let w2_payload = data::w2_payload(&w2);
    write_npy(
        &p("w2_id.npy"),
        &w2.iter().map(|e| e.id).collect::<Vec<_>>(),
        &[rows],
    )?;
    let name_bytes: Vec<u8> = w2.iter().flat_map(|e| e.name.bytes()).collect();
    write_npy(
        &p("w2_name_off.npy"),
        &offsets(w2.iter().map(|e| e.name.len())),
        &[rows + 1],
    )?;
    write_npy(&p("w2_name_bytes.npy"), &name_bytes, &[name_bytes.len()])?;
    write_npy(
        &p("w2_tags_off.npy"),
        &offsets(w2.iter().map(|e| e.tags.len())),
        &[rows + 1],
    )?;
    let tag_off = offsets(w2.iter().flat_map(|e| e.tags.iter().map(String::len)));
    let tag_chars: Vec<u8> = w2
        .iter()
        .flat_map(|e| e.tags.iter().flat_map(|t| t.bytes()))
        .collect();
    write_npy(&p("w2_tag_char_off.npy"), &tag_off, &[tag_off.len()])?;
    write_npy(&p("w2_tag_chars.npy"), &tag_chars, &[tag_chars.len()])?;
    write_npy(
        &p("w2_values_off.npy"),
        &offsets(w2.iter().map(|e| e.values.len())),
        &[rows + 1],
    )?;
    let values: Vec<f32> = w2.iter().flat_map(|e| e.values.iter().copied()).collect();
    write_npy(&p("w2_values.npy"), &values, &[values.len()])?;
    std::fs::write(
        p("meta.json"),
        format!(
            "{{\"rows\": {rows}, \"w1_payload_bytes\": {w1_payload}, \"w2_payload_bytes\": {w2_payload}}}\n"
        ),
    )?;
    eprintln!("exported {rows} W1 and W2 rows to {}", dir.display());
    Ok(())
}
