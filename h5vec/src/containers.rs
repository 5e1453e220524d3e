//! Containers: what h5vec keeps under a name in a group (a vector, an h5col
//! table, a VLS string array), in one place: the name rules (valid,
//! reserved, exists / replace), where a container is for errors, what a
//! group is ([`classify`]), and the rule every container's save follows
//! (created, filled, and removed again when filling fails; vectors are
//! written unlinked and linked by `vector::commit_vector`).
//!
//! A container is recognised by what it holds:
//! ```text
//! <name>/data, <name>/metadata     a vector (metadata/format_name = "HDF5Vectors")
//! <name> CLASS = "COLUMN_TABLE"    an h5col table (SPEC.md section 9)
//! <name> type = "vls"              a VLS string array (SPEC.md section 10)
//! ```

use std::fmt;

use hdf5::Group;
use serde::Serialize;

pub(crate) use crate::error::container_place;
use crate::error::{Context, Error, Place, Result};
use crate::guard::{self, Access, Container};
use crate::raw;

/// The `format_name` h5vec writes and expects.
pub const FORMAT_NAME: &str = "HDF5Vectors";

/// The `format_version` h5vec writes and expects.
pub const FORMAT_VERSION: i64 = 1;

/// `CLASS` of an h5col table (SPEC.md section 9).
pub(crate) const COLUMN_TABLE: &str = "COLUMN_TABLE";

/// The value of a VLS array group's `type` attribute (SPEC.md section 10).
pub(crate) const TYPE_VLS: &str = "vls";

/// What kind of container a group is (serialized as `vector`, `table`,
/// `vls_array`).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("k.h5"))?;
/// h5vec::vls::save_strings(&file, "names", &[Some("a".to_string())])?;
/// assert_eq!(h5vec::inspect(&file, "names")?.container, h5vec::ContainerKind::VlsArray);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContainerKind {
    /// An h5vec (HDF5Vectors) vector: `data/` and `metadata/` (SPEC.md section 1).
    Vector,
    /// An h5col table: `CLASS = "COLUMN_TABLE"` (SPEC.md section 9).
    Table,
    /// A compressed VLS string array: `type = "vls"` (SPEC.md section 10).
    VlsArray,
}

/// `vector`, `h5col table`, `vls array`.
///
/// ```
/// assert_eq!(h5vec::ContainerKind::Table.to_string(), "h5col table");
/// ```
impl fmt::Display for ContainerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ContainerKind::Vector => "vector",
            ContainerKind::Table => "h5col table",
            ContainerKind::VlsArray => "vls array",
        })
    }
}

/// What the group `name` of `parent` looks like, from its attributes and
/// member names (nothing below it is read): an h5col table, a VLS array,
/// a vector (members `data` and `metadata`), or `None`. An attribute
/// `CLASS` or `type` that cannot be read as a string counts as the
/// container it would name, so its checks report it.
pub(crate) fn classify(parent: &Group, name: &str) -> Option<ContainerKind> {
    let group = parent.group(name).ok()?;
    let at = Place::new("$", group.name());
    let attr = |a: &str, want: &str| match raw::attr_string(&group, a, &at) {
        Ok(v) => v.as_deref() == Some(want),
        Err(_) => true,
    };
    if raw::has_attr(&group, "CLASS", &at).unwrap_or(false) && attr("CLASS", COLUMN_TABLE) {
        return Some(ContainerKind::Table);
    }
    if raw::has_attr(&group, "type", &at).unwrap_or(false) && attr("type", TYPE_VLS) {
        return Some(ContainerKind::VlsArray);
    }
    (group.link_exists("data") && group.link_exists("metadata")).then_some(ContainerKind::Vector)
}

/// Checks the name of container `name` of `parent` (`what`: "vector",
/// "table", "VLS array"): non-empty, not `.`/`..`, no `/` or NUL.
pub(crate) fn check_name(parent: &Group, name: &str, what: &str) -> Result<()> {
    let bad = |why: String| Err(Error::bad_name(container_place(parent, name), why));
    if name.is_empty() {
        return bad(format!("the {what} name is empty"));
    }
    if name == "." || name == ".." {
        return bad(format!("`.` and `..` are not {what} names"));
    }
    if name.contains('/') {
        return bad(format!(
            "the {what} name contains `/` (create the parent group and pass it instead)"
        ));
    }
    if name.contains('\0') {
        return bad(format!("the {what} name contains a NUL byte"));
    }
    Ok(())
}

/// Whether `name` is one of the names h5vec reserves (SPEC.md section 1,
/// "Names"): `.X.h5vec-partial` or `.X.h5vec-partial-N`. Saves refuse them;
/// loads treat them as any other name.
pub(crate) fn is_reserved_name(name: &str) -> bool {
    const TAIL: &str = ".h5vec-partial";
    if !name.starts_with('.') {
        return false;
    }
    if name.ends_with(TAIL) {
        return true;
    }
    match name.rsplit_once('-') {
        Some((head, n)) => {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && head.ends_with(TAIL)
        }
        None => false,
    }
}

/// Checks the name of a container about to be saved as `name` in `parent`
/// (`what`: "vector", "table", "VLS array"): [`check_name`], not a reserved
/// name ([`is_reserved_name`]), and not linked yet, unless `replace` is
/// `Some(true)` (`None`: the container cannot replace anything). Returns
/// whether the save replaces an existing vector (checked by
/// [`check_replaceable`]).
pub(crate) fn check_new_member(
    parent: &Group,
    name: &str,
    what: &str,
    replace: Option<bool>,
) -> Result<bool> {
    check_name(parent, name, what)?;
    // Every new container (typed, Arrow, serde, h5col, VLS array) is
    // checked here: in live (SWMR) writing mode HDF5 creates no new
    // objects, and an anonymous group made anyway crashes HDF5 when it is
    // dropped unfinished.
    if crate::live::is_live_writer(&parent.file().at("$")?) {
        return Err(Error::invalid(
            container_place(parent, name),
            "the file is in live (SWMR) writing mode, where HDF5 creates no new objects: \
             create every vector before the first live writer starts",
        ));
    }
    if is_reserved_name(name) {
        return Err(Error::bad_name(
            container_place(parent, name),
            "names of the form `.NAME.h5vec-partial` and `.NAME.h5vec-partial-N` are reserved \
             (SPEC.md section 1, Names)",
        ));
    }
    if !parent.link_exists(name) {
        return Ok(false);
    }
    let hint = match replace {
        Some(true) => {
            check_replaceable(parent, name)?;
            return Ok(true);
        }
        Some(false) => " (use SaveOptions::replace(true) to replace it)".to_owned(),
        None => format!(
            " (a {what} is not replaced in place: remove it first with \
             `group.unlink({name:?})`, or save under another name)"
        ),
    };
    Err(Error::bad_name(
        container_place(parent, name),
        format!(
            "{what} `{name}` already exists in `{}`{hint}",
            parent.name()
        ),
    ))
}

/// Checks that what `name` links in `parent` is an h5vec vector that
/// `SaveOptions::replace` may replace: a group that passes the walk of
/// [`guard::check`] and holds `metadata/format_name` = "HDF5Vectors" and
/// `metadata/schema`. Anything else (a dataset, a group of user data, an
/// h5col table, a VLS array) is an error saying what is there.
pub(crate) fn check_replaceable(parent: &Group, name: &str) -> Result<()> {
    let at = container_place(parent, name);
    let refuse = |found: String| {
        Error::mismatch(
            &at,
            "an h5vec vector to replace (SaveOptions::replace replaces only vectors; nothing was changed)",
            found,
        )
    };
    let Ok(group) = parent.group(name) else {
        return Err(refuse(guard::describe_member(parent, name)));
    };
    match classify(parent, name) {
        Some(ContainerKind::Table) => return Err(refuse("an h5col table".into())),
        Some(ContainerKind::VlsArray) => return Err(refuse("a VLS string array".into())),
        Some(ContainerKind::Vector) | None => {}
    }
    guard::check(&group, Container::Vector, Access::Read)
        .map(drop)
        .map_err(|e| refuse(format!("a group h5vec does not read: {e}")))?;
    let format = (|| -> Option<String> {
        let meta = group.group("metadata").ok()?;
        if !meta.link_exists("format_name") || !meta.link_exists("schema") {
            return None;
        }
        meta.group("schema").ok()?;
        let ds = meta.dataset("format_name").ok()?;
        raw::read_scalar_string(&ds, &at).ok()
    })();
    if format.as_deref() != Some(FORMAT_NAME) {
        let mut members = group.member_names().unwrap_or_default();
        members.truncate(8);
        return Err(refuse(format!(
            "a group that is not an h5vec vector (no metadata/format_name \"{FORMAT_NAME}\" \
             and metadata/schema; members {members:?})"
        )));
    }
    Ok(())
}

/// Whether `name` (a valid name) in `parent` is an h5vec vector, as
/// [`list_vectors`] sees it: a hard link to a group whose hard-linked
/// `metadata` group holds `format_name` = "HDF5Vectors" and `count`. Reads
/// nothing else; anything unreadable is not a vector.
pub(crate) fn is_vector(parent: &Group, name: &str) -> bool {
    let hard = |g: &Group, n: &str| g.link_exists(n) && guard::is_hard_link(g, n);
    (|| -> Option<bool> {
        if !hard(parent, name) {
            return None;
        }
        let group = parent.group(name).ok()?;
        if !hard(&group, "metadata") {
            return None;
        }
        let meta = group.group("metadata").ok()?;
        if !hard(&meta, "format_name") || !hard(&meta, "count") {
            return None;
        }
        meta.dataset("count").ok()?;
        let ds = meta.dataset("format_name").ok()?;
        let at = &container_place(parent, name);
        Some(raw::read_scalar_string(&ds, at).ok()? == FORMAT_NAME)
    })()
    .unwrap_or(false)
}

/// Creates the new group `name` in `parent` for a container (`what`:
/// "table", "VLS array") and fills it with `write`. The name must be a valid
/// new name that does not exist yet; a failed `write` removes the partly
/// written group. Shared by [`save_table`] and [`crate::vls::save_strings_with`].
pub(crate) fn create_container(
    parent: &Group,
    name: &str,
    what: &str,
    write: impl FnOnce(&Group) -> Result<()>,
) -> Result<()> {
    crate::file::check_writable(parent, name)?;
    check_new_member(parent, name, what, None)?;
    let group = parent
        .create_group(name)
        .at(container_place(parent, name))?;
    let result = write(&group);
    if result.is_err() {
        drop(group);
        // Best effort: the original error is what the caller needs to see.
        let _ = parent.unlink(name);
    }
    result
}
