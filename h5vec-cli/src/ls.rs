//! `ls FILE... [GROUP]`: the containers below a group, of one file or of
//! several (a FILE column then says which).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::target::{group, open_read};
use crate::text::{bytes, Columns};

/// `ls ARGS`: files (patterns expanded), and a group last when the last
/// argument of several is no file and no pattern.
pub(crate) fn run_args(args: &[PathBuf]) -> Result<()> {
    let (files, group) = match args {
        [.., last] if args.len() > 1 && !last.is_file() && !crate::many::is_pattern(last) => (
            &args[..args.len() - 1],
            Some(last.to_string_lossy().into_owned()),
        ),
        _ => (args, None),
    };
    if !crate::many::is_many(files) {
        return run(&files[0], group.as_deref());
    }
    let files = crate::many::expand(files)?;
    let mut table = Columns::new(&HEADER_WITH_FILE);
    for file in &files {
        for mut row in rows(file, group.as_deref())? {
            row.insert(0, file.display().to_string());
            table.push(row);
        }
    }
    let mut out = std::io::stdout().lock();
    out.write_all(table.render().as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The columns of the table of several files.
const HEADER_WITH_FILE: [(&str, bool); 7] = [
    ("FILE", false),
    ("PATH", false),
    ("KIND", false),
    ("ROWS", true),
    ("COLUMNS", true),
    ("STORED", true),
    ("PROBLEM", false),
];

/// Lists every vector, h5col table and VLS array below `group` (the root
/// without one): path, kind, rows, top-level columns, stored size, and why
/// a container that looks like one cannot be read.
pub(crate) fn run(file: &Path, group_path: Option<&str>) -> Result<()> {
    let mut table = Columns::new(&HEADER_WITH_FILE[1..]);
    for row in rows(file, group_path)? {
        table.push(row);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(table.render().as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The table rows of the containers below `group_path` of `file`.
fn rows(file: &Path, group_path: Option<&str>) -> Result<Vec<Vec<String>>> {
    let h5 = open_read(file)?;
    let g = group(&h5, group_path.unwrap_or("/"))?;
    let found = h5vec::find_containers(&g).with_context(|| file.display().to_string())?;
    Ok(found
        .iter()
        .map(|c| match &c.problem {
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
        })
        .collect())
}
