//! The files of a [`Dataset`](super::Dataset): a glob pattern expanded in
//! sorted path order, and one file's vector opened through the checks of
//! every load (the guard's walk, the metadata, the schema tree), each
//! error said of the file.

use std::path::{Path, PathBuf};

use hdf5::{File, Group};

use crate::error::{Error, Result};
use crate::guard::Access;
use crate::schema::Stored;
use crate::vector::{open_vector, Opened};

/// The files `pattern` matches, in sorted path order; a pattern that is
/// not one, or that matches no file, is an error naming it.
pub(crate) fn expand(pattern: &str) -> Result<Vec<PathBuf>> {
    let paths = glob::glob(pattern)
        .map_err(|e| Error::invalid("$", format!("`{pattern}` is not a glob pattern: {e}")))?;
    let mut files = Vec::new();
    for path in paths {
        let path = path.map_err(|e| {
            Error::invalid(
                "$",
                format!(
                    "cannot read {} (matching `{pattern}`): {}",
                    e.path().display(),
                    e.error()
                ),
            )
        })?;
        if !path.is_dir() {
            files.push(path);
        }
    }
    if files.is_empty() {
        return Err(Error::not_found(
            "$",
            format!("no file matches `{pattern}`"),
        ));
    }
    files.sort();
    Ok(files)
}

/// A file open for reading, and vector `name` in it checked as a load
/// checks it.
pub(crate) struct OpenFile {
    /// What the vector's checks opened (dropped before the file).
    pub(crate) vector: Opened,
    pub(crate) file: File,
}

impl OpenFile {
    /// Opens `path` read-only and vector `name` (a path in the file:
    /// `telemetry`, `/runs/telemetry`) in it. Errors name the file.
    pub(crate) fn open(path: &Path, name: &str) -> Result<OpenFile> {
        let file = crate::file::open_file(path)?;
        let vector = open_in(&file, name).map_err(|e| e.in_file(path))?;
        Ok(OpenFile { vector, file })
    }

    /// The stored schema and row count, for a dataset's snapshot.
    pub(crate) fn summary(&self) -> (Stored, u64) {
        (self.vector.schema.clone(), self.vector.count)
    }
}

/// Vector `name` (a path below the root) of `file`, opened and checked.
fn open_in(file: &File, name: &str) -> Result<Opened> {
    let (parent, leaf) = parent_of(file, name)?;
    open_vector(&parent, leaf, Access::Read)
}

/// The group holding `name` and the vector's own name: `a/b/v` is `v` in
/// group `/a/b`.
pub(crate) fn parent_of<'n>(file: &File, name: &'n str) -> Result<(Group, &'n str)> {
    let trimmed = name.trim_start_matches('/');
    match trimmed.rsplit_once('/') {
        None => Ok((file.as_group().map_err(|e| Error::hdf5("$", e))?, trimmed)),
        Some((group, leaf)) => {
            if !file.link_exists(group) {
                return Err(Error::not_found(
                    crate::error::Place::new("$", format!("/{group}")),
                    format!("no group `/{group}` for vector `{name}`"),
                ));
            }
            let g = file
                .group(group)
                .map_err(|e| Error::hdf5(crate::error::Place::new("$", format!("/{group}")), e))?;
            Ok((g, leaf))
        }
    }
}
