//! Selecting columns: the dotted column names a caller gives, and a
//! schema tree (or a table's column list) cut down to them.

use crate::arrow::mapping::VALUE_COLUMN;
use crate::error::{Error, Result};
use crate::schema::{ids, Kind, Stored};

/// A selected column: its name, and the selected fields of a record
/// (`None`: the whole column).
pub(super) struct Pick {
    name: String,
    sub: Option<Vec<Pick>>,
}

/// The selection of dotted column names `columns`, in the order given;
/// a name given again merges into the first (a whole record wins).
pub(super) fn parse_picks(columns: &[&str]) -> Result<Vec<Pick>> {
    fn add(picks: &mut Vec<Pick>, segs: &[&str]) {
        let Some((seg, rest)) = segs.split_first() else {
            return;
        };
        let i = match picks.iter().position(|p| p.name == *seg) {
            Some(i) => i,
            None => {
                picks.push(Pick {
                    name: (*seg).to_owned(),
                    sub: Some(Vec::new()),
                });
                picks.len() - 1
            }
        };
        let pick = &mut picks[i];
        if rest.is_empty() {
            pick.sub = None;
        } else if let Some(sub) = &mut pick.sub {
            add(sub, rest);
        }
    }
    let mut picks = Vec::new();
    for c in columns {
        let segs: Vec<&str> = c.split('.').collect();
        if segs.iter().any(|s| s.is_empty()) {
            return Err(Error::invalid(
                "$",
                format!("{c:?} is not a column name (empty segment)"),
            ));
        }
        add(&mut picks, &segs);
    }
    Ok(picks)
}

/// The error for a selected name that is not there.
fn no_column(path: &str, name: &str, there: &[String]) -> Error {
    Error::not_found(
        child_path_of(path, name),
        format!(
            "no column `{name}` in `{path}` (its columns are: {})",
            there.join(", ")
        ),
    )
}

fn child_path_of(path: &str, name: &str) -> String {
    crate::codec::child_path(path, name)
}

/// The selection of a container whose only column is `value` (a vector
/// whose root is not a record, a VLS array).
pub(super) fn check_value_pick(picks: &[Pick]) -> Result<()> {
    for p in picks {
        if p.name != VALUE_COLUMN {
            return Err(no_column("$", &p.name, &[VALUE_COLUMN.to_owned()]));
        }
        if p.sub.is_some() {
            return Err(not_a_record(&child_path_of("$", VALUE_COLUMN)));
        }
    }
    Ok(())
}

fn not_a_record(path: &str) -> Error {
    Error::mismatch(
        path,
        "a record (to select some of its fields)",
        "another kind of column",
    )
}

/// The selected columns of a table, whose columns are `order`.
pub(super) fn select_columns(order: &[String], picks: &[Pick]) -> Result<Vec<String>> {
    picks
        .iter()
        .map(|p| {
            if !order.contains(&p.name) {
                return Err(no_column("$", &p.name, order));
            }
            if p.sub.is_some() {
                return Err(not_a_record(&crate::h5col::column_path(&p.name)));
            }
            Ok(p.name.clone())
        })
        .collect()
}

/// The root node `root` cut down to the selected columns.
pub(super) fn select_node(root: &Stored, picks: &[Pick]) -> Result<Stored> {
    if root.kind == Kind::Record {
        select_record(root, picks, "$")
    } else {
        check_value_pick(picks)?;
        Ok(root.clone())
    }
}

/// Record node `node` at `path` with the fields `picks` only, in their
/// order; the others stay in its data group, as members nothing reads.
fn select_record(node: &Stored, picks: &[Pick], path: &str) -> Result<Stored> {
    let names = node.field_names.clone().unwrap_or_default();
    let mut out = Stored {
        field_names: Some(Vec::with_capacity(picks.len())),
        children: Vec::with_capacity(picks.len()),
        ..node.clone()
    };
    for p in picks {
        let Some(i) = names.iter().position(|n| *n == p.name) else {
            return Err(no_column(path, &p.name, &names));
        };
        let child = node.child(i, path)?;
        let cpath = child_path_of(path, &p.name);
        let child = match &p.sub {
            None => child.clone(),
            Some(sub) => select_nested(child, sub, &cpath)?,
        };
        out.children.push(child);
        if let Some(f) = out.field_names.as_mut() {
            f.push(p.name.clone());
        }
    }
    out.extra_members.extend(
        names
            .iter()
            .filter(|n| !picks.iter().any(|p| p.name == **n))
            .cloned(),
    );
    Ok(out)
}

/// Some fields of a record field (or of an `Option` of one).
fn select_nested(node: &Stored, picks: &[Pick], path: &str) -> Result<Stored> {
    let plain =
        |n: &Stored| n.kind == Kind::Record && (n.codec == ids::STRUCT || n.codec == ids::TUPLE);
    if plain(node) {
        return select_record(node, picks, path);
    }
    if node.kind == Kind::Nullable && node.children.len() == 1 && plain(&node.children[0]) {
        let mut out = node.clone();
        out.children[0] = select_record(&node.children[0], picks, path)?;
        return Ok(out);
    }
    Err(not_a_record(path))
}

/// Whether a node stores anything (not a constant, nor a record of them,
/// nor a dense array without elements).
pub(crate) fn has_data(node: &Stored) -> bool {
    match node.kind {
        Kind::Constant => false,
        Kind::Record => node.children.iter().any(has_data),
        Kind::Dense => node
            .dimensions
            .as_deref()
            .is_none_or(|d| d.iter().all(|&x| x != 0)),
        Kind::Scalar
        | Kind::Blob
        | Kind::VlsString
        | Kind::List
        | Kind::StringValues
        | Kind::Nullable
        | Kind::FillNullable
        | Kind::Union
        | Kind::Other(_) => true,
    }
}
