//! Finding and opening vectors: the names a group holds, and a vector's
//! groups, metadata and schema, checked before anything in it is read.

use hdf5::Group;

use crate::codec::{expect_members, open_group};
use crate::containers::{check_name, container_place, is_vector, FORMAT_NAME, FORMAT_VERSION};
use crate::error::{Context, Error, Place, Result};
use crate::guard::{self, Access, Container};
use crate::raw;
use crate::schema::Stored;

use super::metadata::{check_schema_tree, read_count, read_scalar_int};

/// The names of the h5vec vectors directly in `group`, sorted. A vector is
/// a hard-linked group with `metadata/format_name` = "HDF5Vectors" and
/// `metadata/count`; other members (datasets, other groups, h5col tables,
/// VLS arrays, soft or external links) are skipped, and nothing below the
/// vectors is read or checked (a load does that).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "ys", &[1u8])?;
/// h5vec::save_vector(&file, "xs", &[2u8])?;
/// h5vec::create_group(&file, "run1")?;
/// assert_eq!(h5vec::list_vectors(&file)?, ["xs", "ys"]);
/// # Ok(()) }
/// ```
pub fn list_vectors(group: &Group) -> Result<Vec<String>> {
    let at = Place::new("$", group.name());
    let mut names = group.member_names().at(&at)?;
    names.retain(|n| is_vector(group, n));
    names.sort();
    Ok(names)
}

/// Whether `name` is an h5vec vector in `group` (as [`list_vectors`] counts
/// them): `false` if nothing or something else is there. A name that is
/// not a vector name (empty, `.`, `..`, with `/` or NUL) is an error.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u8])?;
/// assert!(h5vec::vector_exists(&file, "xs")?);
/// assert!(!h5vec::vector_exists(&file, "nope")?);
/// assert!(h5vec::vector_exists(&file, "a/b").is_err());
/// # Ok(()) }
/// ```
pub fn vector_exists(group: &Group, name: &str) -> Result<bool> {
    check_name(group, name, "vector")?;
    Ok(is_vector(group, name))
}

/// The number of elements of vector `name`: its `metadata/count`, after the
/// checks every read makes of the metadata (the schema tree, a checksummed
/// schema, and the count against the root's stored rows: a count larger
/// than the rows stored is an error, SPEC.md 6.4). No value is read.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u16, 2, 3])?;
/// assert_eq!(h5vec::vector_len(&file, "xs")?, 3);
/// # Ok(()) }
/// ```
pub fn vector_len(parent: &Group, name: &str) -> Result<u64> {
    // The whole metadata check (schema tree, a checksummed schema, the
    // count against the stored rows): a length the loads would refuse is
    // an error here too.
    Ok(open_vector(parent, name, Access::Read)?.count)
}

/// An opened vector: its groups, validated metadata and stored schema.
pub(crate) struct Opened {
    pub data: Group,
    /// The metadata group (appends rewrite `count` in it).
    pub meta: Group,
    pub schema: Stored,
    pub count: u64,
    /// Keeps what the walk opened open while decoders open it again.
    pub _walked: guard::Walked,
}

/// Opens the group of vector `name` in `parent` (through whatever link the
/// caller chose) and walks everything below it ([`guard::check`]) before
/// anything in it is read.
pub(crate) fn open_vector_group(
    parent: &Group,
    name: &str,
    access: Access,
) -> Result<(Group, guard::Walked)> {
    check_name(parent, name, "vector")?;
    if !parent.link_exists(name) {
        return Err(Error::not_found(
            container_place(parent, name),
            format!("no vector `{name}` in `{}`", parent.name()),
        ));
    }
    let group = open_group(parent, name, "$")?;
    let walked = guard::check(&group, Container::Vector, access)?;
    Ok((group, walked))
}

/// Opens vector `name` in `parent` and checks its metadata; `access` says
/// whether the caller will append (SPEC.md section 7).
pub(crate) fn open_vector(parent: &Group, name: &str, access: Access) -> Result<Opened> {
    if let Ok(file) = parent.file() {
        raw::cover_whole_file(&file);
    }
    // A live reader reads `count` before opening the datasets it covers.
    let live_count = crate::live::count_before_open(parent, || {
        let (group, walked) = open_vector_group(parent, name, access)?;
        let meta = open_group(&group, "metadata", "$")?;
        let count = read_count(&meta)?;
        drop((meta, group, walked));
        Ok(count)
    })?;
    let (group, walked) = open_vector_group(parent, name, access)?;
    expect_members(&group, &["data", "metadata"], &Stored::default(), "$")?;
    let meta = open_group(&group, "metadata", "$")?;
    let data = open_group(&group, "data", "$")?;
    let p = &Place::new("$", "metadata/format_name");
    let fname = raw::read_scalar_string(
        &meta
            .dataset("format_name")
            .map_err(|_| Error::mismatch(p, "a format_name dataset", "nothing"))?,
        p,
    )?;
    if fname != FORMAT_NAME {
        return Err(Error::mismatch(
            p,
            format!("\"{FORMAT_NAME}\""),
            format!("{fname:?}"),
        ));
    }
    let version = read_scalar_int(&meta, "format_version")?;
    if version != FORMAT_VERSION {
        return Err(Error::mismatch(
            Place::new("$", "metadata/format_version"),
            FORMAT_VERSION,
            version,
        ));
    }
    let count = match live_count {
        Some(count) => count,
        None => read_count(&meta)?,
    };
    let sg = open_group(&meta, "schema", "$")?;
    let schema = Stored::read(&sg, "$")?;
    check_schema_tree(&meta, &schema)?;
    check_root_rows(&data, &schema, count, "$")?;
    Ok(Opened {
        data,
        meta,
        schema,
        count,
        _walked: walked,
    })
}

/// Checks that the dataset holding one entry per row of the root node
/// (`values`, `pointers`, `stops`, `OFFSETS`, `MASK`, `TAG`; a record's
/// first field with one) has the entries `count` rows need, so a `count`
/// larger than the stored rows is an error where the count is read
/// (`vector_len`, `inspect`), not only when values are. Every decoder
/// checks all its datasets again when it opens them; layouts without such
/// a dataset (constants, unknown kinds) pass.
fn check_root_rows(data: &Group, node: &Stored, count: u64, path: &str) -> Result<()> {
    use crate::schema::Kind;
    let member = match &node.kind {
        Kind::Scalar | Kind::Dense | Kind::FillNullable => "values",
        Kind::VlsString => "pointers",
        Kind::Blob => "stops",
        Kind::List | Kind::StringValues => "OFFSETS",
        Kind::Nullable => "MASK",
        Kind::Union => "TAG",
        Kind::Record => {
            let names = node.field_names.as_deref().unwrap_or(&[]);
            // The first field with data decides (a record of constants has
            // none); the schema tree's depth is bounded when it is read.
            for (name, child) in names.iter().zip(&node.children) {
                if matches!(child.kind, Kind::Constant) || !data.link_exists(name) {
                    continue;
                }
                let Ok(g) = data.group(name) else { continue };
                return check_root_rows(&g, child, count, &format!("{path}.{name}"));
            }
            return Ok(());
        }
        Kind::Constant | Kind::Other(_) => return Ok(()),
    };
    let Ok(ds) = data.dataset(member) else {
        // Missing or not a dataset: the decoder's open check says which.
        return Ok(());
    };
    let need = if member == "OFFSETS" {
        count.saturating_add(1)
    } else {
        count
    };
    let rows = ds.shape().first().copied().unwrap_or(0) as u64;
    if rows < need {
        return Err(Error::mismatch(
            Place::new(path, ds.name()),
            format!("at least {need} rows"),
            rows,
        ));
    }
    Ok(())
}
