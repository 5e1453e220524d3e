//! `ls FILE [GROUP]`: the containers below a group.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::target::{group, open_read};
use crate::text::{bytes, Columns};

/// Lists every vector, h5col table and VLS array below `group` (the root
/// without one): path, kind, rows, top-level columns, stored size, and why
/// a container that looks like one cannot be read.
pub(crate) fn run(file: &Path, group_path: Option<&str>) -> Result<()> {
    let h5 = open_read(file)?;
    let g = group(&h5, group_path.unwrap_or("/"))?;
    let found = h5vec::find_containers(&g).with_context(|| file.display().to_string())?;
    let mut table = Columns::new(&[
        ("PATH", false),
        ("KIND", false),
        ("ROWS", true),
        ("COLUMNS", true),
        ("STORED", true),
        ("PROBLEM", false),
    ]);
    for c in &found {
        let row = match &c.problem {
            None => vec![
                c.path.clone(),
                c.kind.to_string(),
                c.rows.to_string(),
                c.columns.to_string(),
                bytes(c.stored_bytes),
                String::new(),
            ],
            Some(problem) => vec![
                c.path.clone(),
                c.kind.to_string(),
                "-".into(),
                "-".into(),
                "-".into(),
                problem.clone(),
            ],
        };
        table.push(row);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(table.render().as_bytes())?;
    out.flush()?;
    Ok(())
}
