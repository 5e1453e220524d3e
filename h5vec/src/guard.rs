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

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

use hdf5::Group;
use hdf5_sys::h5::{herr_t, hsize_t, H5_index_t, H5_iter_order_t};
use hdf5_sys::h5d::H5D_layout_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5l::H5L_info2_t;
use hdf5_sys::h5o::{H5O_info2_t, H5O_type_t, H5O_INFO_BASIC};
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5d, h5l, h5o, h5p, h5s};

use crate::error::{Error, Place, Result};
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

/// HDF5's link types, as the raw integers of `H5L_type_t` (a user-defined
/// link type is any other value up to 255, which the Rust enum cannot hold).
const LINK_HARD: c_int = 0;
const LINK_SOFT: c_int = 1;
const LINK_EXTERNAL: c_int = 64;

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
    sync(|| {
        // SAFETY: a valid, open group id; every id opened below is closed
        // by an `Owned`.
        unsafe {
            let mut info: H5O_info2_t = std::mem::zeroed();
            if h5o::H5Oget_info3(group.id(), &mut info, H5O_INFO_BASIC) < 0 {
                return Err(walk.refuse(
                    &[],
                    true,
                    "a readable object header",
                    format!("an object HDF5 cannot read: {}", hdf5_message()),
                ));
            }
            let token = token_bytes(&info);
            walk.precheck(&token, &[])?;
            walk.seen.insert(token, root.clone());
            walk.group(group.id(), &mut Vec::new())
        }
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
    sync(|| {
        // SAFETY: a valid group id and a NUL-terminated name; output
        // buffers sized as HDF5 reports.
        unsafe {
            match link_type(group.id(), &cname) {
                None => format!("a link HDF5 cannot read: {}", hdf5_message()),
                Some(LINK_HARD) => {
                    let mut info: H5O_info2_t = std::mem::zeroed();
                    if h5o::H5Oget_info_by_name3(
                        group.id(),
                        cname.as_ptr(),
                        &mut info,
                        H5O_INFO_BASIC,
                        H5P_DEFAULT,
                    ) < 0
                    {
                        format!(
                            "an object HDF5 cannot read (damaged object header?): {}",
                            hdf5_message()
                        )
                    } else {
                        object_kind(info.type_).to_owned()
                    }
                }
                Some(LINK_SOFT) => {
                    let target = link_text(group.id(), &cname, LINK_SOFT);
                    match h5o::H5Oexists_by_name(group.id(), cname.as_ptr(), H5P_DEFAULT) {
                        1 => {
                            let mut info: H5O_info2_t = std::mem::zeroed();
                            let kind = if h5o::H5Oget_info_by_name3(
                                group.id(),
                                cname.as_ptr(),
                                &mut info,
                                H5O_INFO_BASIC,
                                H5P_DEFAULT,
                            ) < 0
                            {
                                "an object HDF5 cannot read"
                            } else {
                                object_kind(info.type_)
                            };
                            format!("{target}, which leads to {kind}")
                        }
                        _ => format!("{target}, which leads nowhere (a dangling link)"),
                    }
                }
                Some(LINK_EXTERNAL) => link_text(group.id(), &cname, LINK_EXTERNAL),
                Some(t) => format!("a user-defined link (type {t})"),
            }
        }
    })
}

/// Whether `name` in `group` is a hard link (false for a missing or
/// unreadable link, a soft, external or user-defined one).
pub(crate) fn is_hard_link(group: &Group, name: &str) -> bool {
    let Ok(cname) = CString::new(name) else {
        return false;
    };
    // SAFETY: a valid group id and a NUL-terminated name, under the lock.
    sync(|| unsafe { link_type(group.id(), &cname) }) == Some(LINK_HARD)
}

/// "a group", "a dataset", ... for an object type.
fn object_kind(t: H5O_type_t) -> &'static str {
    match t {
        H5O_type_t::H5O_TYPE_GROUP => "a group",
        H5O_type_t::H5O_TYPE_DATASET => "a dataset",
        H5O_type_t::H5O_TYPE_NAMED_DATATYPE => "a committed datatype",
        _ => "an object of unknown type",
    }
}

/// The raw link type of `name` in `loc`, or `None` if HDF5 cannot read the link.
///
/// # Safety
/// Caller holds the HDF5 lock; `loc` is a valid location id.
unsafe fn link_type(loc: hid_t, name: &CStr) -> Option<c_int> {
    // SAFETY: `H5L_info2_t` is plain C data; HDF5 fills it. Its first field
    // is the link type, a C enum, read as a `c_int` so that user-defined
    // link types (values the Rust enum lacks) are never held in the enum.
    unsafe {
        let mut info = std::mem::MaybeUninit::<H5L_info2_t>::zeroed();
        if h5l::H5Lget_info2(loc, name.as_ptr(), info.as_mut_ptr(), H5P_DEFAULT) < 0 {
            return None;
        }
        Some(*(info.as_ptr() as *const c_int))
    }
}

/// "a soft link to `/x`" or "an external link to `f.h5`:`/x`", read from
/// the link itself (nothing is opened through it).
///
/// # Safety
/// Caller holds the HDF5 lock; `loc` is a valid location id and `name` a
/// link of type `ltype` in it.
unsafe fn link_text(loc: hid_t, name: &CStr, ltype: c_int) -> String {
    // SAFETY: forwarded from the caller; the buffer is as large as HDF5
    // says the link value is.
    unsafe {
        let mut info = std::mem::MaybeUninit::<H5L_info2_t>::zeroed();
        if h5l::H5Lget_info2(loc, name.as_ptr(), info.as_mut_ptr(), H5P_DEFAULT) < 0 {
            return "a link HDF5 cannot read".into();
        }
        let u = &mut (*info.as_mut_ptr()).u;
        let size = *u.val_size();
        let kind = if ltype == LINK_SOFT {
            "a soft link"
        } else {
            "an external link"
        };
        if size == 0 || size > 1 << 20 {
            return kind.into();
        }
        let mut buf = vec![0u8; size];
        if h5l::H5Lget_val(
            loc,
            name.as_ptr(),
            buf.as_mut_ptr().cast::<c_void>(),
            size,
            H5P_DEFAULT,
        ) < 0
        {
            return kind.into();
        }
        if ltype == LINK_SOFT {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            return format!("{kind} to `{}`", String::from_utf8_lossy(&buf[..end]));
        }
        let mut flags: c_uint = 0;
        let mut file: *const c_char = std::ptr::null();
        let mut obj: *const c_char = std::ptr::null();
        if h5l::H5Lunpack_elink_val(
            buf.as_ptr().cast::<c_void>(),
            size,
            &mut flags,
            &mut file,
            &mut obj,
        ) < 0
            || file.is_null()
            || obj.is_null()
        {
            return kind.into();
        }
        // The pointers point into `buf`, which is still alive.
        format!(
            "{kind} to `{}`:`{}`",
            CStr::from_ptr(file).to_string_lossy(),
            CStr::from_ptr(obj).to_string_lossy()
        )
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

/// The bytes of an object token (its address in the file), for the set of
/// objects seen.
fn token_bytes(info: &H5O_info2_t) -> [u8; 16] {
    // SAFETY: `H5O_token_t` is `repr(C)` and holds exactly 16 bytes
    // (`H5O_MAX_TOKEN_SIZE`); every bit pattern is a valid array.
    unsafe { std::mem::transmute::<hdf5_sys::h5o::H5O_token_t, [u8; 16]>(info.token) }
}

/// The links of one group, collected by `H5Literate2`.
struct Links {
    /// Name, raw link type and (for a hard link) the object's token.
    names: Vec<(CString, c_int, [u8; 16])>,
    /// Set when the group held more than `MAX_OBJECTS` links.
    too_many: bool,
}

/// `H5Literate2` callback: records each link's name, raw type and token.
///
/// # Safety
/// Called by HDF5 with a valid name, link info and the `Links` passed as
/// `data`.
unsafe extern "C" fn collect(
    _group: hid_t,
    name: *const c_char,
    info: *const H5L_info2_t,
    data: *mut c_void,
) -> herr_t {
    // SAFETY: see the function's contract; the link type is the first
    // field of the info, read as a raw `c_int` (see `link_type`).
    unsafe {
        let links = &mut *data.cast::<Links>();
        if links.names.len() >= MAX_OBJECTS {
            links.too_many = true;
            return 1;
        }
        let ltype = *(info as *const c_int);
        // The union holds the token for a hard link (read only then);
        // `H5L_info2_t` is plain `Copy` C data, `H5O_token_t` 16 bytes.
        let token = if ltype == LINK_HARD {
            let mut copy = *info;
            std::mem::transmute::<hdf5_sys::h5o::H5O_token_t, [u8; 16]>(*copy.u.token())
        } else {
            [0; 16]
        };
        links
            .names
            .push((CStr::from_ptr(name).to_owned(), ltype, token));
    }
    0
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
            Container::Table => true,
            Container::VlsArray => false,
        }
    }

    /// Walks the group `gid`, reached at `rel`.
    ///
    /// # Safety
    /// Caller holds the HDF5 lock; `gid` is a valid, open group id.
    unsafe fn group(&mut self, gid: hid_t, rel: &mut Vec<String>) -> Result<()> {
        let mut links = Links {
            names: Vec::new(),
            too_many: false,
        };
        // SAFETY: `collect` matches `H5L_iterate2_t` and gets `links`.
        let r = unsafe {
            let mut idx: hsize_t = 0;
            h5l::H5Literate2(
                gid,
                H5_index_t::H5_INDEX_NAME,
                H5_iter_order_t::H5_ITER_NATIVE,
                &mut idx,
                Some(collect),
                (&mut links as *mut Links).cast::<c_void>(),
            )
        };
        if r < 0 {
            return Err(self.refuse(
                rel,
                true,
                "a group whose links HDF5 can list",
                format!("a group HDF5 cannot list: {}", hdf5_message()),
            ));
        }
        if links.too_many || self.objects.saturating_add(links.names.len()) > MAX_OBJECTS {
            return Err(self.refuse(rel, true, format!("at most {MAX_OBJECTS} objects"), "more"));
        }
        for (name, ltype, token) in links.names {
            rel.push(name.to_string_lossy().into_owned());
            // SAFETY: forwarded from the caller; `name` is a link of `gid`.
            let r = unsafe { self.member(gid, &name, ltype, &token, rel) };
            rel.pop();
            r?;
        }
        Ok(())
    }

    /// Checks the member `name` (link type `ltype`; `token` the object's,
    /// for a hard link) of group `gid`, reached at `rel`.
    ///
    /// # Safety
    /// As for [`Walk::group`].
    unsafe fn member(
        &mut self,
        gid: hid_t,
        name: &CStr,
        ltype: c_int,
        token: &[u8; 16],
        rel: &mut Vec<String>,
    ) -> Result<()> {
        const HARD: &str =
            "a hard link (h5vec reads and writes only objects of this file, linked once)";
        if ltype != LINK_HARD {
            let found = match ltype {
                // SAFETY: forwarded from the caller.
                LINK_SOFT | LINK_EXTERNAL => unsafe { link_text(gid, name, ltype) },
                t => format!("a user-defined link (type {t})"),
            };
            return Err(self.refuse(rel, false, HARD, found));
        }
        self.objects += 1;
        self.precheck(token, rel)?;
        // SAFETY: forwarded from the caller; the id is owned by an `Owned`.
        let Some(obj) = (unsafe { Owned::ok(h5o::H5Oopen(gid, name.as_ptr(), H5P_DEFAULT)) })
        else {
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
        // SAFETY: `H5O_info2_t` is plain C data, valid when zeroed.
        let mut info: H5O_info2_t = unsafe { std::mem::zeroed() };
        // SAFETY: an open object id and an output struct, under the lock.
        if unsafe { h5o::H5Oget_info3(obj.id(), &mut info, H5O_INFO_BASIC) } < 0 {
            return Err(self.refuse(
                rel,
                false,
                "a readable object header",
                format!("an object HDF5 cannot read: {}", hdf5_message()),
            ));
        }
        let is_group = info.type_ == H5O_type_t::H5O_TYPE_GROUP;
        let here = self.hdf5_path(rel);
        if let Some(first) = self.seen.get(&token_bytes(&info)) {
            return Err(self.refuse(
                rel,
                is_group,
                "every object reached once (h5vec writes a tree, not shared objects)",
                format!("the object already reached as `{first}`"),
            ));
        }
        if info.rc > 1 {
            return Err(self.refuse(
                rel,
                is_group,
                "an object linked once (h5vec writes a tree, not shared objects)",
                format!("{} with {} hard links", object_kind(info.type_), info.rc),
            ));
        }
        self.seen.insert(token_bytes(&info), here);
        let r = match info.type_ {
            H5O_type_t::H5O_TYPE_GROUP => {
                if rel.len() > MAX_DEPTH {
                    return Err(self.refuse(
                        rel,
                        true,
                        format!("groups nested at most {MAX_DEPTH} deep"),
                        "deeper nesting",
                    ));
                }
                // SAFETY: an open group id.
                unsafe { self.group(obj.id(), rel) }
            }
            // SAFETY: an open dataset id.
            H5O_type_t::H5O_TYPE_DATASET => unsafe { self.dataset(obj.id(), rel) },
            t => Err(self.refuse(rel, false, "a group or a dataset", object_kind(t))),
        };
        self.open.push(obj);
        r
    }

    /// Checks where the dataset `did` (reached at `rel`) keeps its bytes,
    /// its filters and, for appends, that it can grow.
    ///
    /// # Safety
    /// As for [`Walk::group`]; `did` is an open dataset id.
    unsafe fn dataset(&mut self, did: hid_t, rel: &[String]) -> Result<()> {
        const HERE: &str = "a dataset stored in this file";
        // Fast path, no creation property list (whose copy costs more than
        // the rest of the walk): a contiguous dataset with its own address
        // in this file and no external file list is neither virtual nor
        // filtered (filters need chunks) nor stored outside. Appends look
        // at data datasets' layouts below.
        // SAFETY: a valid dataset id, under the lock.
        if unsafe { h5d::H5Dget_offset(did) } != hdf5_sys::h5::HADDR_UNDEF
            && !(self.access == Access::Append && self.is_data(rel))
            // SAFETY: a valid object id, under the lock (`header_lacks`'s contract).
            && unsafe { header_lacks(did, H5O_EFL_ID) } == Some(true)
        {
            return Ok(());
        }
        // SAFETY: a valid dataset id; the list is owned by an `Owned`.
        let Some(dcpl) = (unsafe { Owned::ok(h5d::H5Dget_create_plist(did)) }) else {
            return Err(self.refuse(
                rel,
                false,
                "a dataset HDF5 can describe",
                format!("a dataset without creation properties: {}", hdf5_message()),
            ));
        };
        // SAFETY: a valid dataset creation property list.
        let layout = unsafe { h5p::H5Pget_layout(dcpl.id()) };
        if layout == H5D_layout_t::H5D_VIRTUAL {
            // SAFETY: a valid dataset creation property list, under the lock;
            // `virtual_source` sizes its buffers as it passes them.
            let source = unsafe { virtual_source(dcpl.id()) };
            return Err(self.refuse(
                rel,
                false,
                HERE,
                format!("a virtual dataset (its values come from {source})"),
            ));
        }
        // SAFETY: a valid dataset creation property list, under the lock.
        let external = unsafe { h5p::H5Pget_external_count(dcpl.id()) };
        if external != 0 {
            // SAFETY: a valid dataset creation property list with external
            // storage, under the lock.
            let first = unsafe { external_file(dcpl.id()) };
            return Err(self.refuse(
                rel,
                false,
                HERE,
                format!("external storage in {external} outside file(s), the first `{first}`"),
            ));
        }
        // SAFETY: a valid dataset creation property list, under the lock.
        if let Some(found) = unsafe { crate::raw::unavailable_filter_in(dcpl.id()) } {
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
            // SAFETY: a valid dataset id, under the lock; the space is owned
            // by an `Owned`; `dims` and `maxdims` have room for any rank.
            let (chunked, max0) = unsafe {
                let chunked = layout == H5D_layout_t::H5D_CHUNKED;
                let mut max0 = None;
                if let Some(owned) = Owned::ok(h5d::H5Dget_space(did)) {
                    let space = owned.id();
                    let rank = h5s::H5Sget_simple_extent_ndims(space);
                    if (1..=32).contains(&rank) {
                        let mut dims = [0 as hsize_t; 32];
                        let mut maxdims = [0 as hsize_t; 32];
                        if h5s::H5Sget_simple_extent_dims(
                            space,
                            dims.as_mut_ptr(),
                            maxdims.as_mut_ptr(),
                        ) >= 0
                        {
                            max0 = Some(maxdims[0]);
                        }
                    }
                }
                (chunked, max0)
            };
            let layout_name = match layout {
                H5D_layout_t::H5D_COMPACT => "compact",
                _ => "contiguous",
            };
            if !chunked || max0 != Some(h5s::H5S_UNLIMITED) {
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

/// HDF5's header message type of an external file list (`H5O_EFL_ID`).
const H5O_EFL_ID: u32 = 0x0007;

/// Whether the object header of `oid` has no message of type `msg`
/// (`None` if HDF5 cannot say).
///
/// # Safety
/// Caller holds the HDF5 lock; `oid` is a valid object id.
unsafe fn header_lacks(oid: hid_t, msg: u32) -> Option<bool> {
    // SAFETY: plain C output struct. Its first field is the header
    // information (`H5O_hdr_info_t`, whose fields hdf5-sys makes public,
    // unlike those of `H5O_native_info_t`).
    unsafe {
        let mut info = std::mem::MaybeUninit::<h5o::H5O_native_info_t>::zeroed();
        if h5o::H5Oget_native_info(oid, info.as_mut_ptr(), h5o::H5O_NATIVE_INFO_HDR) < 0 {
            return None;
        }
        let hdr = &*info.as_ptr().cast::<h5o::H5O_hdr_info_t>();
        Some(hdr.mesg.present & (1u64 << msg) == 0)
    }
}

/// "`src.h5`:`/x`" for the first source of a virtual dataset.
///
/// # Safety
/// Caller holds the HDF5 lock; `dcpl` is a valid dataset creation property list.
unsafe fn virtual_source(dcpl: hid_t) -> String {
    // SAFETY: forwarded; HDF5 writes at most `size` bytes, NUL included.
    unsafe {
        let mut count: usize = 0;
        if h5p::H5Pget_virtual_count(dcpl, &mut count) < 0 || count == 0 {
            return "other datasets".into();
        }
        let read = |f: unsafe extern "C" fn(hid_t, usize, *mut c_char, usize) -> isize| {
            let mut buf = vec![0 as c_char; 1024];
            let n = f(dcpl, 0, buf.as_mut_ptr(), buf.len());
            if n < 0 {
                return String::from("?");
            }
            CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
        };
        let file = read(h5p::H5Pget_virtual_filename);
        let ds = read(h5p::H5Pget_virtual_dsetname);
        let more = if count > 1 {
            format!(" and {} more sources", count - 1)
        } else {
            String::new()
        };
        format!("`{file}`:`{ds}`{more}")
    }
}

/// The name of the first external file of a dataset with external storage.
///
/// # Safety
/// Caller holds the HDF5 lock; `dcpl` is a valid dataset creation property list.
unsafe fn external_file(dcpl: hid_t) -> String {
    // SAFETY: forwarded; HDF5 writes at most `buf.len()` bytes.
    unsafe {
        let mut buf = vec![0 as c_char; 1024];
        let mut offset = std::mem::zeroed();
        let mut size: hsize_t = 0;
        if h5p::H5Pget_external(dcpl, 0, buf.len(), buf.as_mut_ptr(), &mut offset, &mut size) < 0 {
            return "?".into();
        }
        let last = buf.len() - 1;
        buf[last] = 0;
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    }
}
