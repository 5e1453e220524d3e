//! `validate FILE [VECTOR]`: every row of every container read with the
//! checks of a typed load (SPEC.md section 7); one line per problem.

use std::path::Path;

use anyhow::Result;
use h5vec::ErrorKind;

use crate::progress::Progress;
use crate::target::{open_read, split, Target, BATCH_ROWS};
use crate::Outcome;

/// Reads every container below the root (or only `vector`) batch by batch
/// through `h5vec::arrow::batches`, and prints `FILE:/path: <error>` for each
/// that fails (its first error: the rest of it is not read). A container
/// that cannot even be described (`ls` shows it with its problem) is a
/// problem too. [`Outcome::Problems`] if anything was printed; a named
/// vector that does not exist is an error, not a problem.
pub(crate) fn run(file: &Path, vector: Option<&str>) -> Result<Outcome> {
    let h5 = open_read(file)?;
    let containers: Vec<(String, Option<String>, u64)> = match vector {
        Some(v) => {
            let t = Target::open(&h5, v)?;
            if !t.parent.link_exists(&t.name) {
                anyhow::bail!(
                    "{}:{}: no vector, h5col table or VLS array there",
                    file.display(),
                    t.path
                );
            }
            vec![(t.path, None, 0)]
        }
        None => h5vec::find_containers(&h5.as_group()?)?
            .into_iter()
            .map(|c| (c.path, c.problem, c.rows))
            .collect(),
    };
    let total = containers.iter().fold(0u64, |a, c| a.saturating_add(c.2));
    let progress = Progress::new(Some(total), "validating");
    let mut problems = 0u64;
    for (path, problem, _) in &containers {
        let found = match problem {
            Some(p) => Some(p.clone()),
            None => check(&h5, path, &progress)?,
        };
        if let Some(message) = found {
            problems += 1;
            progress.println(&format!("{}:{path}: {message}", file.display()))?;
        }
    }
    progress.finish();
    Ok(if problems > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}

/// The first error reading every row of the container at `path`, if any.
/// Errors of the file itself (a group that cannot be opened) end the run.
fn check(h5: &h5vec::hdf5::File, path: &str, progress: &Progress) -> Result<Option<String>> {
    let (parent, name) = split(path)?;
    let parent = crate::target::group(h5, &parent)?;
    let batches = match h5vec::arrow::batches(&parent, &name, BATCH_ROWS) {
        Ok(b) => b,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound(_)) => return Err(e.into()),
        Err(e) => return Ok(Some(e.to_string())),
    };
    for batch in batches {
        match batch {
            Ok(b) => progress.add(b.num_rows() as u64),
            Err(e) => return Ok(Some(e.to_string())),
        }
    }
    Ok(None)
}
