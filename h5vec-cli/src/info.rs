//! `info FILE VECTOR`: every dataset of a container and what it takes.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::target::{open_read, Target};
use crate::text::{bytes, Columns};

/// Prints the container's kind and rows, then per dataset its HDF5 path,
/// field path, type, shape, chunk shape, filters, stored and logical
/// (uncompressed) bytes and their ratio, and the totals.
pub(crate) fn run(file: &Path, vector: &str) -> Result<()> {
    let h5 = open_read(file)?;
    let target = Target::open(&h5, vector)?;
    let at = || format!("{}:{}", file.display(), target.path);
    let info = h5vec::inspect(&target.parent, &target.name).with_context(at)?;
    let mut table = Columns::new(&[
        ("DATASET", false),
        ("FIELD", false),
        ("DTYPE", false),
        ("SHAPE", false),
        ("CHUNKS", false),
        ("FILTERS", false),
        ("STORED", true),
        ("LOGICAL", true),
        ("RATIO", true),
    ]);
    for d in &info.datasets {
        table.push(vec![
            d.path.clone(),
            d.field_path.clone(),
            d.dtype.clone(),
            shape(&d.shape),
            d.chunks.as_deref().map_or("contiguous".into(), shape),
            d.filters.join(","),
            bytes(d.stored_bytes),
            bytes(d.logical_bytes),
            ratio(d.logical_bytes, d.stored_bytes),
        ]);
    }
    let (stored, logical) = (info.stored_bytes(), info.logical_bytes());
    table.push(vec![
        "total".into(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        bytes(stored),
        bytes(logical),
        ratio(logical, stored),
    ]);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: {}, {} rows, {} datasets",
        info.path,
        info.container,
        info.rows,
        info.datasets.len()
    )?;
    out.write_all(table.render().as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `(3,)`, `(3, 2)`: h5py's notation.
fn shape(dims: &[u64]) -> String {
    match dims {
        [one] => format!("({one},)"),
        _ => {
            let d: Vec<String> = dims.iter().map(u64::to_string).collect();
            format!("({})", d.join(", "))
        }
    }
}

/// Logical over stored bytes (`4.20x`); `-` when nothing is stored.
fn ratio(logical: u64, stored: u64) -> String {
    if stored == 0 {
        "-".into()
    } else {
        format!("{:.2}x", logical as f64 / stored as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_ratios() {
        assert_eq!(shape(&[3]), "(3,)");
        assert_eq!(shape(&[3, 2]), "(3, 2)");
        assert_eq!(shape(&[]), "()");
        assert_eq!(ratio(100, 25), "4.00x");
        assert_eq!(ratio(100, 0), "-");
    }
}
