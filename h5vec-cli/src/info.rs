//! `info FILE VECTOR`: every dataset of a container and what it takes;
//! `info FILE... VECTOR`: every file of a vector over several files.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::target::{open_read, Target};
use crate::text::{bytes, Columns};

/// `info FILES VECTOR`: one file as always; several files (or a pattern)
/// as one vector: per file its rows in the dataset's numbering and its
/// bytes, after the check that every file holds the vector with the first
/// file's schema.
pub(crate) fn run_args(files: &[PathBuf], vector: &str) -> Result<()> {
    if !crate::many::is_many(files) {
        return run(&files[0], vector);
    }
    let files = crate::many::expand(files)?;
    let ds = crate::many::open(&files, vector)?;
    let mut table = Columns::new(&[
        ("FILE", false),
        ("ROWS", true),
        ("FIRST", true),
        ("STORED", true),
        ("LOGICAL", true),
        ("RATIO", true),
    ]);
    let (mut stored, mut logical) = (0u64, 0u64);
    for f in ds.files() {
        let h5 = open_read(f.path())?;
        let target = Target::open(&h5, vector)?;
        let info = h5vec::inspect(&target.parent, &target.name)
            .with_context(|| format!("{}:{}", f.path().display(), target.path))?;
        let (s, l) = (info.stored_bytes(), info.logical_bytes());
        stored = stored.saturating_add(s);
        logical = logical.saturating_add(l);
        table.push(vec![
            f.path().display().to_string(),
            f.len().to_string(),
            f.rows().start.to_string(),
            bytes(s),
            bytes(l),
            ratio(l, s),
        ]);
    }
    table.push(vec![
        "total".into(),
        ds.len().to_string(),
        String::new(),
        bytes(stored),
        bytes(logical),
        ratio(logical, stored),
    ]);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{vector}: vector over {} files, {} rows",
        ds.files().len(),
        ds.len()
    )?;
    out.write_all(table.render().as_bytes())?;
    out.flush()?;
    Ok(())
}

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
