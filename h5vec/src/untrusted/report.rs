//! What a check found ([`Found`]) and its report on the pipe from the
//! child to the parent: JSON written by [`encode`], read back by
//! [`decode`], errors rebuilt as the child had them.

use std::path::Path;

use crate::error::{Error, ErrorKind, Place, Result};
use crate::inspect::{ContainerInfo, ContainerKind};

/// What a check found.
pub(super) struct Found {
    /// Every container, with its problem.
    pub(super) containers: Vec<ContainerInfo>,
    /// The first container's problem as the load's error.
    pub(super) first: Option<Error>,
}

/// Where a check error is: the file.
pub(super) fn file_place(path: &Path) -> Place {
    Place::new("$", path.display().to_string())
}

// ---- the report on the pipe (JSON) ----

/// The report of a check: the containers and the first error, or the
/// error that ended the check.
pub(super) fn encode(found: Result<Found>) -> String {
    use serde_json::{json, Value};
    let v: Value = match found {
        Ok(f) => json!({
            "containers": f.containers.iter().map(|c| json!({
                "path": c.path,
                "kind": kind_name(c.kind),
                "rows": c.rows,
                "columns": c.columns,
                "stored_bytes": c.stored_bytes,
                "problem": c.problem,
            })).collect::<Vec<_>>(),
            "first": f.first.as_ref().map(error_json),
        }),
        Err(e) => json!({ "error": error_json(&e) }),
    };
    v.to_string()
}

fn kind_name(k: ContainerKind) -> &'static str {
    match k {
        ContainerKind::Vector => "vector",
        ContainerKind::Table => "table",
        ContainerKind::VlsArray => "vls",
    }
}

fn error_json(e: &Error) -> serde_json::Value {
    use serde_json::json;
    let (kind, a, b) = match e.kind() {
        ErrorKind::Mismatch { expected, found } => ("mismatch", expected.clone(), found.clone()),
        ErrorKind::Invalid(m) => ("invalid", m.clone(), String::new()),
        ErrorKind::Encode(m) => ("encode", m.clone(), String::new()),
        ErrorKind::BadName(m) => ("bad_name", m.clone(), String::new()),
        ErrorKind::NotFound(m) => ("not_found", m.clone(), String::new()),
        ErrorKind::Hdf5(h) => ("hdf5", h.to_string(), String::new()),
    };
    // An error about the file itself displays as its message alone
    // (`Error::file`); every other starts with its path.
    let bare = !e.to_string().starts_with(e.path());
    json!({ "path": e.path(), "location": e.location(), "kind": kind, "a": a, "b": b, "bare": bare })
}

/// The error the child reported, rebuilt (an HDF5 error keeps its text).
fn error_from(v: &serde_json::Value) -> Option<Error> {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    let path = s("path")?;
    let place = match s("location") {
        Some(l) => Place::new(path, l),
        None => Place::from(path),
    };
    let (a, b) = (s("a").unwrap_or_default(), s("b").unwrap_or_default());
    let bare = v.get("bare").and_then(|x| x.as_bool()).unwrap_or(false);
    if let (true, Some(file)) = (bare, s("location")) {
        match s("kind")?.as_str() {
            "invalid" => return Some(Error::file(&file, a)),
            "hdf5" => return Some(Error::file_hdf5(&file, hdf5::Error::Internal(a))),
            _ => {}
        }
    }
    Some(match s("kind")?.as_str() {
        "mismatch" => Error::mismatch(place, a, b),
        "invalid" => Error::invalid(place, a),
        "encode" => Error::encode(place, a),
        "bad_name" => Error::bad_name(place, a),
        "not_found" => Error::not_found(place, a),
        _ => Error::hdf5(place, hdf5::Error::Internal(a)),
    })
}

/// The child's report, or an error if it is not one.
pub(super) fn decode(report: &[u8], path: &Path) -> Result<Found> {
    let bad = || {
        Error::invalid(
            file_place(path),
            "isolated check: the child's report is unreadable",
        )
    };
    let v: serde_json::Value = serde_json::from_slice(report).map_err(|_| bad())?;
    if let Some(e) = v.get("error") {
        return Err(error_from(e).ok_or_else(bad)?);
    }
    let mut containers = Vec::new();
    for c in v
        .get("containers")
        .and_then(|c| c.as_array())
        .ok_or_else(bad)?
    {
        let u = |k: &str| c.get(k).and_then(|x| x.as_u64()).ok_or_else(bad);
        let kind = match c.get("kind").and_then(|k| k.as_str()) {
            Some("vector") => ContainerKind::Vector,
            Some("table") => ContainerKind::Table,
            Some("vls") => ContainerKind::VlsArray,
            _ => return Err(bad()),
        };
        containers.push(ContainerInfo {
            path: c
                .get("path")
                .and_then(|p| p.as_str())
                .ok_or_else(bad)?
                .to_owned(),
            kind,
            rows: u("rows")?,
            columns: usize::try_from(u("columns")?).map_err(|_| bad())?,
            stored_bytes: u("stored_bytes")?,
            problem: c.get("problem").and_then(|p| p.as_str()).map(str::to_owned),
        });
    }
    let first = match v.get("first") {
        Some(serde_json::Value::Null) | None => None,
        Some(e) => Some(error_from(e).ok_or_else(bad)?),
    };
    Ok(Found { containers, first })
}
