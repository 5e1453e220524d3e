//! `repair FILE VECTOR`.

use std::path::Path;

use anyhow::{Context, Result};

use crate::target::{open_rw, Target};

/// Trims every dataset of the vector to what its `count` covers (after an
/// append interrupted before it wrote `count`; SPEC.md section 8).
pub(crate) fn run(file: &Path, vector: &str) -> Result<()> {
    let h5 = open_rw(file)?;
    let target = Target::open(&h5, vector)?;
    h5vec::arrow::repair(&target.parent, &target.name)
        .with_context(|| format!("{}:{}", file.display(), target.path))?;
    Ok(())
}
