//! The one walk over everything below a vector, h5col table or VLS array
//! group that h5vec makes before it reads or writes a byte of it (SPEC.md
//! section 7, "Everything in this file").
//!
//! Below the container group every link must be a hard link to a group or
//! a dataset that nothing else links (each object is reached exactly once),
//! and every dataset must keep its bytes in this file, in HDF5's own
//! storage (no external storage, no virtual layout), behind only the
//! filters this build runs itself. The container group itself may be
//! reached through any link the caller chose (soft, external). The walk
//! stops at [`MAX_DEPTH`] levels and [`MAX_OBJECTS`] objects, and at the
//! first problem, which it reports with the logical path and the HDF5 path.
//!
//! The walk never follows a soft, external or user-defined link, never
//! opens another file and never reads a dataset's values; it opens each
//! object's header, and each dataset's creation property list.
//!
//! Before HDF5 opens an object (or lists a group), the walk reads the
//! object's header from the file's bytes and refuses the damage HDF5
//! itself would crash on while parsing it ([`precheck`]).
//!
//! HDF5 is asked through `crate::raw` (`raw/walk.rs`): this module holds
//! what is refused, and how the refusal names the object.

use std::collections::HashMap;
use std::ffi::{CStr, CString};

use hdf5::Group;
use hdf5_sys::h5i::hid_t;

use crate::error::{Error, Place, Result};
use crate::raw::walk::{self, Layout, LinkKind, LinkValue, ObjectKind};
use crate::raw::{sync, Owned};

#[cfg(unix)]
mod precheck;

/// Without the file's bytes (no sec2 descriptor), nothing is pre-checked.
#[cfg(not(unix))]
mod precheck {
    pub(super) struct Damage {
        pub(super) is_group: bool,
        pub(super) why: String,
    }
    pub(super) struct Headers;
    impl Headers {
        pub(super) fn of(_group: &hdf5::Group) -> Option<Headers> {
            None
        }
        pub(super) fn token_addr(&self, _token: &[u8; 16]) -> u64 {
            0
        }
        pub(super) fn check(&self, _addr: u64) -> Result<(), Damage> {
            Ok(())
        }
    }
}

/// Deepest HDF5 group nesting below a container (a schema tree of
/// `schema::MAX_DEPTH` levels is two groups per level).
pub(crate) const MAX_DEPTH: usize = 160;
/// Most objects (groups and datasets) below one container.
pub(crate) const MAX_OBJECTS: usize = 1 << 20;

/// What kind of container is walked: it decides how errors name paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Container {
    /// An HDF5Vectors vector: errors name the field path (`$.a.b`) and the HDF5 path.
    Vector,
    /// An h5col table: errors name the HDF5 path.
    Table,
    /// A VLS string array: errors name the HDF5 path.
    VlsArray,
}

/// What h5vec is about to do with the container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read it.
    Read,
    /// Append to it (or trim it): every data dataset must be extendible.
    Append,
}

/// The objects a successful [`check`] opened, kept open while the caller
/// holds this: HDF5 then opens them again from its list of open objects
/// (no second decoding of their headers, layouts and filters), which keeps
/// the walk's cost off the reads that follow it.
pub(crate) struct Walked {
    _open: Vec<Owned>,
}

/// Walks everything below `group` (the container) and refuses what h5vec
/// must not read or write; see the module documentation. Hold the result
/// while opening what was walked.
pub(crate) fn check(group: &Group, container: Container, access: Access) -> Result<Walked> {
    let root = group.name();
    let mut walk = Walk {
        container,
        access,
        root: root.clone(),
        seen: HashMap::new(),
        objects: 0,
        open: Vec::new(),
        headers: precheck::Headers::of(group),
    };
    // One hold of the lock for the whole walk (each HDF5 error is read
    // right after the call that made it).
    sync(|| {
        let Some(info) = walk::object_info(group.id()) else {
            return Err(walk.refuse(
                &[],
                true,
                "a readable object header",
                format!("an object HDF5 cannot read: {}", hdf5_message()),
            ));
        };
        walk.precheck(&info.token, &[])?;
        walk.seen.insert(info.token, root.clone());
        walk.group(group.id(), &mut Vec::new())
    })?;
    Ok(Walked { _open: walk.open })
}

/// The link named `name` in `group`, described for an error message
/// without following it into another file: "a dataset", "a soft link to
/// `/x`, which leads nowhere", "an external link to `f.h5`:`/x`", ...
pub(crate) fn describe_member(group: &Group, name: &str) -> String {
    let Ok(cname) = CString::new(name) else {
        return "a name with a NUL byte".into();
    };
    let gid = group.id();
    sync(|| match walk::link_kind(gid, &cname) {
        None => format!("a link HDF5 cannot read: {}", hdf5_message()),
        Some(LinkKind::Hard) => match walk::object_info_by_name(gid, &cname) {
            None => format!(
                "an object HDF5 cannot read (damaged object header?): {}",
                hdf5_message()
            ),
            Some(info) => object_kind(info.kind).to_owned(),
        },
        Some(LinkKind::Soft) => {
            let target = link_text(gid, &cname, LinkKind::Soft);
            if walk::object_exists(gid, &cname) {
                let kind = match walk::object_info_by_name(gid, &cname) {
                    None => "an object HDF5 cannot read",
                    Some(info) => object_kind(info.kind),
                };
                format!("{target}, which leads to {kind}")
            } else {
                format!("{target}, which leads nowhere (a dangling link)")
            }
        }
        Some(LinkKind::External) => link_text(gid, &cname, LinkKind::External),
        Some(LinkKind::UserDefined(t)) => format!("a user-defined link (type {t})"),
    })
}

/// Whether `name` in `group` is a hard link (false for a missing or
/// unreadable link, a soft, external or user-defined one).
pub(crate) fn is_hard_link(group: &Group, name: &str) -> bool {
    let Ok(cname) = CString::new(name) else {
        return false;
    };
    walk::link_kind(group.id(), &cname) == Some(LinkKind::Hard)
}

/// "a group", "a dataset", ... for an object type.
fn object_kind(t: ObjectKind) -> &'static str {
    match t {
        ObjectKind::Group => "a group",
        ObjectKind::Dataset => "a dataset",
        ObjectKind::NamedDatatype => "a committed datatype",
        ObjectKind::Unknown => "an object of unknown type",
    }
}

/// "a soft link to `/x`" or "an external link to `f.h5`:`/x`", read from
/// the link itself (nothing is opened through it); `kind` is
/// [`LinkKind::Soft`] or [`LinkKind::External`].
fn link_text(loc: hid_t, name: &CStr, kind: LinkKind) -> String {
    let what = if kind == LinkKind::Soft {
        "a soft link"
    } else {
        "an external link"
    };
    match walk::link_value(loc, name, kind) {
        LinkValue::Unreadable => "a link HDF5 cannot read".into(),
        LinkValue::Unknown => what.into(),
        LinkValue::Soft(target) => format!("{what} to `{target}`"),
        LinkValue::External { file, object } => format!("{what} to `{file}`:`{object}`"),
    }
}

/// The message of the innermost error on HDF5's error stack (what HDF5
/// says went wrong), or a generic text.
fn hdf5_message() -> String {
    match hdf5::Error::query() {
        Ok(e) => e.to_string(),
        Err(_) => "HDF5 gave no reason".into(),
    }
}

struct Walk {
    container: Container,
    access: Access,
    /// HDF5 path of the container group.
    root: String,
    /// Objects reached so far (by token), with the HDF5 path they were reached by.
    seen: HashMap<[u8; 16], String>,
    objects: usize,
    /// Every object opened, kept open (see [`Walked`]).
    open: Vec<Owned>,
    /// The file's bytes, for the pre-checks (`None`: other drivers).
    headers: Option<precheck::Headers>,
}

impl Walk {
    /// The HDF5 path of the object at `rel` (names below the root).
    fn hdf5_path(&self, rel: &[String]) -> String {
        let mut p = self.root.trim_end_matches('/').to_owned();
        for c in rel {
            p.push('/');
            p.push_str(c);
        }
        if p.is_empty() {
            p.push('/');
        }
        p
    }

    /// Where the object at `rel` is, for errors: its logical path (for a
    /// vector, the field groups below `data`; for a table, the column and
    /// the groups below it; a list's `VALUES` or `STRING_VALUES` is `[]`;
    /// `$` for a VLS array) at its HDF5 path.
    fn error_place(&self, rel: &[String], is_group: bool) -> Place {
        // A link not followed may stand for a group or a dataset: the
        // names of layout datasets are not fields.
        const DATASETS: [&str; 9] = [
            "values", "OFFSETS", "VALUES", "CHARS", "MASK", "bytes", "stops", "heap", "pointers",
        ];
        let is_group = is_group
            || rel
                .last()
                .is_some_and(|l| !DATASETS.contains(&l.as_str()) && rel.len() > 1);
        let groups = if is_group {
            rel.len()
        } else {
            rel.len().saturating_sub(1)
        };
        let fields = match self.container {
            Container::Vector if rel.first().map(String::as_str) == Some("data") => {
                rel.get(1..groups).unwrap_or(&[])
            }
            // A table's members are its columns: fields of the row.
            Container::Table => rel.get(..groups.max(1)).unwrap_or(&[]),
            _ => &[],
        };
        let mut logical = String::from("$");
        for c in fields {
            if c == "VALUES" || c == "STRING_VALUES" {
                logical.push_str("[]");
            } else {
                logical.push('.');
                logical.push_str(c);
            }
        }
        Place::new(logical, self.hdf5_path(rel))
    }

    fn refuse(
        &self,
        rel: &[String],
        is_group: bool,
        expected: impl std::fmt::Display,
        found: impl std::fmt::Display,
    ) -> Error {
        Error::mismatch(self.error_place(rel, is_group), expected, found)
    }

    /// Refuses the object with token `token` (at `rel`) if its header,
    /// read from the file's bytes, holds damage HDF5 would crash on
    /// while opening or listing it ([`precheck`]). Run before HDF5
    /// opens the object (for the container group, before it lists it).
    fn precheck(&self, token: &[u8; 16], rel: &[String]) -> Result<()> {
        let Some(h) = &self.headers else {
            return Ok(());
        };
        h.check(h.token_addr(token))
            .map_err(|d| Error::invalid(self.error_place(rel, d.is_group), d.why))
    }

    /// Whether the object at `rel` holds values that appends extend.
    fn is_data(&self, rel: &[String]) -> bool {
        match self.container {
            Container::Vector => rel.first().map(String::as_str) == Some("data"),
            // A table's CATEGORIES and SEARCH_INDEXES are not columns.
            Container::Table => !matches!(
                rel.first().map(String::as_str),
                Some("CATEGORIES" | "SEARCH_INDEXES")
            ),
            Container::VlsArray => false,
        }
    }

    /// Walks the group `gid` (open), reached at `rel`.
    fn group(&mut self, gid: hid_t, rel: &mut Vec<String>) -> Result<()> {
        let Some(links) = walk::links(gid, MAX_OBJECTS) else {
            return Err(self.refuse(
                rel,
                true,
                "a group whose links HDF5 can list",
                format!("a group HDF5 cannot list: {}", hdf5_message()),
            ));
        };
        if links.too_many || self.objects.saturating_add(links.names.len()) > MAX_OBJECTS {
            return Err(self.refuse(rel, true, format!("at most {MAX_OBJECTS} objects"), "more"));
        }
        for (name, kind, token) in links.names {
            rel.push(name.to_string_lossy().into_owned());
            let r = self.member(gid, &name, kind, &token, rel);
            rel.pop();
            r?;
        }
        Ok(())
    }

    /// Checks the member `name` (a link of `kind`; `token` the object's,
    /// for a hard link) of group `gid`, reached at `rel`.
    fn member(
        &mut self,
        gid: hid_t,
        name: &CStr,
        kind: LinkKind,
        token: &[u8; 16],
        rel: &mut Vec<String>,
    ) -> Result<()> {
        const HARD: &str =
            "a hard link (h5vec reads and writes only objects of this file, linked once)";
        if kind != LinkKind::Hard {
            let found = match kind {
                LinkKind::UserDefined(t) => format!("a user-defined link (type {t})"),
                _ => link_text(gid, name, kind),
            };
            return Err(self.refuse(rel, false, HARD, found));
        }
        self.objects += 1;
        self.precheck(token, rel)?;
        let Some(obj) = walk::open_object(gid, name) else {
            return Err(self.refuse(
                rel,
                false,
                "an object HDF5 can open",
                format!(
                    "an object HDF5 cannot open (damaged object header?): {}",
                    hdf5_message()
                ),
            ));
        };
        let Some(info) = walk::object_info(obj.id()) else {
            return Err(self.refuse(
                rel,
                false,
                "a readable object header",
                format!("an object HDF5 cannot read: {}", hdf5_message()),
            ));
        };
        let is_group = info.kind == ObjectKind::Group;
        let here = self.hdf5_path(rel);
        if let Some(first) = self.seen.get(&info.token) {
            return Err(self.refuse(
                rel,
                is_group,
                "every object reached once (h5vec writes a tree, not shared objects)",
                format!("the object already reached as `{first}`"),
            ));
        }
        if info.links > 1 {
            return Err(self.refuse(
                rel,
                is_group,
                "an object linked once (h5vec writes a tree, not shared objects)",
                format!("{} with {} hard links", object_kind(info.kind), info.links),
            ));
        }
        self.seen.insert(info.token, here);
        let r = match info.kind {
            ObjectKind::Group => {
                if rel.len() > MAX_DEPTH {
                    return Err(self.refuse(
                        rel,
                        true,
                        format!("groups nested at most {MAX_DEPTH} deep"),
                        "deeper nesting",
                    ));
                }
                self.group(obj.id(), rel)
            }
            ObjectKind::Dataset => self.dataset(obj.id(), rel),
            t => Err(self.refuse(rel, false, "a group or a dataset", object_kind(t))),
        };
        self.open.push(obj);
        r
    }

    /// Checks where the dataset `did` (open, reached at `rel`) keeps its
    /// bytes, its filters and, for appends, that it can grow.
    fn dataset(&mut self, did: hid_t, rel: &[String]) -> Result<()> {
        const HERE: &str = "a dataset stored in this file";
        // Fast path, no creation property list (whose copy costs more than
        // the rest of the walk): a contiguous dataset with its own address
        // in this file and no external file list is neither virtual nor
        // filtered (filters need chunks) nor stored outside. Appends look
        // at data datasets' layouts below.
        if walk::has_offset(did)
            && !(self.access == Access::Append && self.is_data(rel))
            && walk::lacks_external_file_list(did) == Some(true)
        {
            return Ok(());
        }
        let Some(dcpl) = walk::create_plist(did) else {
            return Err(self.refuse(
                rel,
                false,
                "a dataset HDF5 can describe",
                format!("a dataset without creation properties: {}", hdf5_message()),
            ));
        };
        let layout = walk::layout(dcpl.id());
        if layout == Layout::Virtual {
            let source = match walk::virtual_sources(dcpl.id()) {
                None => "other datasets".to_owned(),
                Some(v) => {
                    let more = if v.count > 1 {
                        format!(" and {} more sources", v.count - 1)
                    } else {
                        String::new()
                    };
                    let or_unknown = |s: Option<String>| s.unwrap_or_else(|| "?".into());
                    format!("`{}`:`{}`{more}", or_unknown(v.file), or_unknown(v.dataset))
                }
            };
            return Err(self.refuse(
                rel,
                false,
                HERE,
                format!("a virtual dataset (its values come from {source})"),
            ));
        }
        let external = walk::external_count(dcpl.id());
        if external != 0 {
            let first = walk::external_file(dcpl.id()).unwrap_or_else(|| "?".into());
            return Err(self.refuse(
                rel,
                false,
                HERE,
                format!("external storage in {external} outside file(s), the first `{first}`"),
            ));
        }
        if let Some(found) = walk::unavailable_filter_of(dcpl.id()) {
            return Err(self.refuse(
                rel,
                false,
                crate::raw::FILTERS_EXPECTED,
                format!("{found}, which is not available"),
            ));
        }
        if let Some((bytes, shape)) = crate::raw::filtered_chunk(did, dcpl.id())
            .and_then(|(dims, elem)| crate::limits::oversized_filtered_chunk(&dims, elem))
        {
            let place = self.error_place(rel, false);
            return Err(crate::limits::oversized_chunk(&place, bytes, shape));
        }
        if self.access == Access::Append && self.is_data(rel) {
            let chunked = layout == Layout::Chunked;
            let max0 = walk::first_max_extent(did);
            let layout_name = match layout {
                Layout::Compact => "compact",
                _ => "contiguous",
            };
            if !chunked || max0 != Some(walk::UNLIMITED) {
                let found = match max0 {
                    _ if !chunked => format!(
                        "{layout_name} storage, which cannot grow (h5py writes it without \
                         chunks and maxshape=(None, ...))"
                    ),
                    Some(m) => format!("chunked storage of at most {m} rows"),
                    None => "a dataset without rows".to_owned(),
                };
                return Err(self.refuse(
                    rel,
                    false,
                    "a chunked dataset with an unlimited first dimension (appends grow it)",
                    found,
                ));
            }
        }
        Ok(())
    }
}
