//! Files and the containers in them, as the command line names them.

use std::path::Path;

use anyhow::{bail, Context, Result};
use h5vec::hdf5::{File, Group};

/// Rows per batch read or written: bounded memory whatever the vector's size.
pub(crate) const BATCH_ROWS: usize = 1 << 16;

/// An existing file opened read-only; a missing or unreadable file is a
/// readable I/O error, not HDF5's error stack.
pub(crate) fn open_read(path: &Path) -> Result<File> {
    check_exists(path)?;
    Ok(h5vec::open_file(path)?)
}

/// An existing file opened for reading and writing.
pub(crate) fn open_rw(path: &Path) -> Result<File> {
    check_exists(path)?;
    Ok(h5vec::open_file_rw(path)?)
}

fn check_exists(path: &Path) -> Result<()> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot open {}", path.display()))?;
    if meta.is_dir() {
        bail!("cannot open {}: it is a directory", path.display());
    }
    Ok(())
}

/// A container (vector, h5col table or VLS array) named by its path in a
/// file: its parent group and its name.
pub(crate) struct Target {
    pub(crate) parent: Group,
    pub(crate) name: String,
    /// The absolute path, `/grp/name`, for messages.
    pub(crate) path: String,
}

impl Target {
    /// `path` (`/grp/name`, `grp/name` or `name`) in `file`; the parent
    /// group must exist.
    pub(crate) fn open(file: &File, path: &str) -> Result<Target> {
        let (parent, name) = split(path)?;
        let group = group(file, &parent)?;
        let path = if parent == "/" {
            format!("/{name}")
        } else {
            format!("{parent}/{name}")
        };
        Ok(Target {
            parent: group,
            name,
            path,
        })
    }
}

/// The group at `path` (`/` is the root).
pub(crate) fn group(file: &File, path: &str) -> Result<Group> {
    let path = normalize(path);
    if path == "/" {
        return Ok(file.as_group()?);
    }
    if !file.link_exists(&path) {
        bail!("no group {path} in {}", file.filename());
    }
    file.group(&path)
        .with_context(|| format!("{path} in {} is not a group", file.filename()))
}

/// `/a/b/c` -> (`/a/b`, `c`); `c` -> (`/`, `c`).
pub(crate) fn split(path: &str) -> Result<(String, String)> {
    let path = normalize(path);
    let Some((parent, name)) = path.rsplit_once('/') else {
        unreachable!("normalize starts with /")
    };
    if name.is_empty() {
        bail!("`{path}` names no vector");
    }
    let parent = if parent.is_empty() { "/" } else { parent };
    Ok((parent.to_owned(), name.to_owned()))
}

/// `a//b/` -> `/a/b`.
fn normalize(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_parent_and_name() {
        assert_eq!(split("v").unwrap(), ("/".into(), "v".into()));
        assert_eq!(split("/v").unwrap(), ("/".into(), "v".into()));
        assert_eq!(split("/a/b/v").unwrap(), ("/a/b".into(), "v".into()));
        assert_eq!(split("a//b/v/").unwrap(), ("/a/b".into(), "v".into()));
        assert!(split("/").is_err());
    }
}
