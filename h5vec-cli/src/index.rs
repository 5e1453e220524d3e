//! `index`: the search indexes of a vector or an h5col table (SPEC.md
//! section 14.6): listed, built (or rebuilt in place) on one column, or
//! dropped.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use h5vec::IndexKind;

use crate::target::{open_read, open_rw, Target};

/// What `h5vec index` does.
pub(crate) enum Action<'a> {
    /// Print every index: column, kind, valid or stale, dataset.
    List,
    /// Build (or rebuild) an index of `kind` on `column`.
    Build { column: &'a str, kind: IndexKind },
    /// Remove the index of `kind` on `column`.
    Drop { column: &'a str, kind: IndexKind },
}

/// `index`: `action` on `vector` in `file`.
pub(crate) fn run(file: &Path, vector: &str, action: Action<'_>) -> Result<()> {
    let h5 = match action {
        Action::List => open_read(file)?,
        _ => open_rw(file)?,
    };
    let target = Target::open(&h5, vector)?;
    let at = || format!("{}:{}", file.display(), target.path);
    let mut out = std::io::stdout().lock();
    match action {
        Action::List => {
            let found = h5vec::list_indexes(&target.parent, &target.name).with_context(at)?;
            if found.is_empty() {
                writeln!(out, "no search indexes")?;
            }
            for i in &found {
                let column = if i.column().is_empty() {
                    "(values)"
                } else {
                    i.column()
                };
                let state = if i.valid() { "valid" } else { "stale" };
                writeln!(out, "{column}\t{}\t{state}\t{}", i.kind(), i.dataset())?;
            }
        }
        Action::Build { column, kind } => {
            h5vec::build_index(&target.parent, &target.name, column, kind).with_context(at)?;
            writeln!(out, "built {kind} on {}", shown(column))?;
        }
        Action::Drop { column, kind } => {
            let gone =
                h5vec::drop_index(&target.parent, &target.name, column, kind).with_context(at)?;
            if gone {
                writeln!(out, "dropped {kind} on {}", shown(column))?;
            } else {
                anyhow::bail!("{}: no {kind} index on {}", at(), shown(column));
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// A column as the messages name it (`""` is the vector's own values).
fn shown(column: &str) -> String {
    if column.is_empty() {
        "the values".to_owned()
    } else {
        format!("`{column}`")
    }
}
