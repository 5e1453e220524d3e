//! The HDF5 calls of the guard's walk (`crate::guard`): the links of a
//! group (collected by `H5Literate2` into a `Vec`), what a link is and
//! what it holds, an object's header information, and where a dataset
//! keeps its bytes (layout, external files, virtual sources, its maximum
//! extent). Each function takes the lock itself and returns plain values;
//! what is refused, and how it is said, is the guard's business.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

use hdf5_sys::h5::{herr_t, hsize_t, H5_index_t, H5_iter_order_t};
use hdf5_sys::h5d::H5D_layout_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5o::{H5O_type_t, H5O_INFO_BASIC};
use hdf5_sys::h5p::H5P_DEFAULT;
use hdf5_sys::{h5d, h5l, h5o, h5p, h5s};

use super::compat::{self, LinkInfo, ObjInfo};
use super::ffi::{sync, Owned};

/// HDF5's link types, as the raw integers of `H5L_type_t` (a user-defined
/// link type is any other value up to 255, which the Rust enum cannot hold).
const LINK_HARD: c_int = 0;
const LINK_SOFT: c_int = 1;
const LINK_EXTERNAL: c_int = 64;

/// What a link is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkKind {
    /// A hard link: the object itself.
    Hard,
    /// A soft link: a path in the same file.
    Soft,
    /// An external link: a path in another file.
    External,
    /// A user-defined link, of this raw type.
    UserDefined(c_int),
}

impl LinkKind {
    fn of(raw: c_int) -> LinkKind {
        match raw {
            LINK_HARD => LinkKind::Hard,
            LINK_SOFT => LinkKind::Soft,
            LINK_EXTERNAL => LinkKind::External,
            t => LinkKind::UserDefined(t),
        }
    }
}

/// What kind of object an object header describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ObjectKind {
    Group,
    Dataset,
    NamedDatatype,
    /// Any other type HDF5 reports.
    Unknown,
}

/// What the guard reads of an object header.
pub(crate) struct ObjectInfo {
    /// The object's type.
    pub(crate) kind: ObjectKind,
    /// The bytes of the object's token (its address in the file).
    pub(crate) token: [u8; 16],
    /// Its hard link count.
    pub(crate) links: c_uint,
}

impl ObjectInfo {
    fn of(info: &ObjInfo) -> ObjectInfo {
        let kind = match info.type_ {
            H5O_type_t::H5O_TYPE_GROUP => ObjectKind::Group,
            H5O_type_t::H5O_TYPE_DATASET => ObjectKind::Dataset,
            H5O_type_t::H5O_TYPE_NAMED_DATATYPE => ObjectKind::NamedDatatype,
            _ => ObjectKind::Unknown,
        };
        ObjectInfo {
            kind,
            token: compat::obj_token(info),
            links: info.rc,
        }
    }
}

/// The header information of the open object `id`, or `None` if HDF5
/// cannot read it (its error stack then says why).
pub(crate) fn object_info(id: hid_t) -> Option<ObjectInfo> {
    // SAFETY: the object info is plain C data, valid when zeroed, which
    // HDF5 fills; HDF5 checks the id; under the lock.
    sync(|| unsafe {
        let mut info: ObjInfo = std::mem::zeroed();
        (compat::object_info(id, &mut info, H5O_INFO_BASIC) >= 0).then(|| ObjectInfo::of(&info))
    })
}

/// The header information of the object `name` of `loc` leads to (a soft
/// link followed), or `None` if HDF5 cannot read it.
pub(crate) fn object_info_by_name(loc: hid_t, name: &CStr) -> Option<ObjectInfo> {
    // SAFETY: as for `object_info`; `name` is NUL-terminated.
    sync(|| unsafe {
        let mut info: ObjInfo = std::mem::zeroed();
        (compat::object_info_by_name(loc, name.as_ptr(), &mut info, H5O_INFO_BASIC, H5P_DEFAULT)
            >= 0)
            .then(|| ObjectInfo::of(&info))
    })
}

/// Whether `name` in `loc` leads to an object (false for a dangling link,
/// or when HDF5 cannot say).
pub(crate) fn object_exists(loc: hid_t, name: &CStr) -> bool {
    // SAFETY: HDF5 checks the id; `name` is NUL-terminated; under the lock.
    sync(|| unsafe { h5o::H5Oexists_by_name(loc, name.as_ptr(), H5P_DEFAULT) }) == 1
}

/// Opens the object `name` of `loc` (a hard link's, here), or `None` if
/// HDF5 cannot (its error stack then says why).
pub(crate) fn open_object(loc: hid_t, name: &CStr) -> Option<Owned> {
    // SAFETY: HDF5 checks the id; `name` is NUL-terminated; the new id is
    // owned by an `Owned` at once; under the lock.
    sync(|| unsafe { Owned::ok(h5o::H5Oopen(loc, name.as_ptr(), H5P_DEFAULT)) })
}

/// What link `name` of `loc` is, or `None` if HDF5 cannot read the link.
pub(crate) fn link_kind(loc: hid_t, name: &CStr) -> Option<LinkKind> {
    // SAFETY: the link info is plain C data; HDF5 fills it. Its first field
    // is the link type, a C enum, read as a `c_int` so that user-defined
    // link types (values the Rust enum lacks) are never held in the enum.
    sync(|| unsafe {
        let mut info = std::mem::MaybeUninit::<LinkInfo>::zeroed();
        if compat::link_info(loc, name.as_ptr(), info.as_mut_ptr(), H5P_DEFAULT) < 0 {
            return None;
        }
        Some(LinkKind::of(*(info.as_ptr() as *const c_int)))
    })
}

/// What a soft or external link holds, read from the link itself (nothing
/// is opened through it).
pub(crate) enum LinkValue {
    /// HDF5 cannot read the link.
    Unreadable,
    /// The link's value is empty, larger than 1 MiB or does not parse.
    Unknown,
    /// A soft link's path.
    Soft(String),
    /// An external link's file and path in it.
    External { file: String, object: String },
}

/// The value of link `name` of `loc`, read as a soft link's path if
/// `kind` is [`LinkKind::Soft`], else as an external link's file and path.
pub(crate) fn link_value(loc: hid_t, name: &CStr, kind: LinkKind) -> LinkValue {
    // SAFETY: HDF5 checks the id; `name` is NUL-terminated; the buffer is
    // as large as HDF5 says the link value is; the unpacked pointers point
    // into it, and are read while it lives; under the lock.
    sync(|| unsafe {
        let mut info = std::mem::MaybeUninit::<LinkInfo>::zeroed();
        if compat::link_info(loc, name.as_ptr(), info.as_mut_ptr(), H5P_DEFAULT) < 0 {
            return LinkValue::Unreadable;
        }
        let u = &mut (*info.as_mut_ptr()).u;
        let size = *u.val_size();
        if size == 0 || size > 1 << 20 {
            return LinkValue::Unknown;
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
            return LinkValue::Unknown;
        }
        if kind == LinkKind::Soft {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            return LinkValue::Soft(String::from_utf8_lossy(&buf[..end]).into_owned());
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
            return LinkValue::Unknown;
        }
        LinkValue::External {
            file: CStr::from_ptr(file).to_string_lossy().into_owned(),
            object: CStr::from_ptr(obj).to_string_lossy().into_owned(),
        }
    })
}

/// The links of one group, in name order as HDF5 lists them natively.
pub(crate) struct Links {
    /// Name, what the link is and (for a hard link) the object's token.
    pub(crate) names: Vec<(CString, LinkKind, [u8; 16])>,
    /// Set when the group held more links than asked for.
    pub(crate) too_many: bool,
}

/// What [`collect`] fills: the links, and how many to take at most.
struct Collect {
    links: Links,
    max: usize,
}

/// Lists the links of the open group `gid` (at most `max`; past it
/// [`Links::too_many`] is set), or `None` if HDF5 cannot list them (its
/// error stack then says why).
pub(crate) fn links(gid: hid_t, max: usize) -> Option<Links> {
    let mut c = Collect {
        links: Links {
            names: Vec::new(),
            too_many: false,
        },
        max,
    };
    // SAFETY: `collect` matches `H5L_iterate2_t` and gets `c`, which
    // outlives the call; HDF5 checks the id; under the lock.
    let r = sync(|| unsafe {
        let mut idx: hsize_t = 0;
        compat::iterate_links(
            gid,
            H5_index_t::H5_INDEX_NAME,
            H5_iter_order_t::H5_ITER_NATIVE,
            &mut idx,
            collect,
            (&mut c as *mut Collect).cast::<c_void>(),
        )
    });
    (r >= 0).then_some(c.links)
}

/// `H5Literate2`'s callback for [`links`]: records each link (stopping,
/// with [`Links::too_many`] set, past the most asked for).
///
/// # Safety
/// Called by HDF5 with `data` pointing to a live [`Collect`], `name` a
/// NUL-terminated string and `info` a valid link info.
unsafe extern "C" fn collect(
    _group: hid_t,
    name: *const c_char,
    info: *const LinkInfo,
    data: *mut c_void,
) -> herr_t {
    // SAFETY: see the function's contract; the link type is the first
    // field of the info, read as a raw `c_int` (see `link_kind`).
    unsafe {
        let c = &mut *data.cast::<Collect>();
        if c.links.names.len() >= c.max {
            c.links.too_many = true;
            return 1;
        }
        let ltype = *(info as *const c_int);
        // The union holds the token (address before HDF5 1.12) for a hard
        // link: read only then.
        let token = if ltype == LINK_HARD {
            compat::hard_link_token(&*info)
        } else {
            [0; 16]
        };
        c.links
            .names
            .push((CStr::from_ptr(name).to_owned(), LinkKind::of(ltype), token));
    }
    0
}

/// HDF5's header message type of an external file list (`H5O_EFL_ID`).
const H5O_EFL_ID: u32 = 0x0007;

/// Whether the object header of `oid` has no external file list message
/// (`None` if HDF5 cannot say).
pub(crate) fn lacks_external_file_list(oid: hid_t) -> Option<bool> {
    header_lacks(oid, H5O_EFL_ID)
}

/// Whether the object header of `oid` has no message of type `msg`
/// (`None` if HDF5 cannot say).
fn header_lacks(oid: hid_t, msg: u32) -> Option<bool> {
    // SAFETY: HDF5 checks the id; under the lock.
    sync(|| unsafe { compat::header_messages(oid) }).map(|present| present & (1u64 << msg) == 0)
}

/// Whether the dataset `did` has an address of its own in the file
/// (`H5Dget_offset`: contiguous storage, allocated).
pub(crate) fn has_offset(did: hid_t) -> bool {
    // SAFETY: HDF5 checks the id; under the lock.
    sync(|| unsafe { h5d::H5Dget_offset(did) }) != hdf5_sys::h5::HADDR_UNDEF
}

/// The creation property list of dataset `did`, or `None` if HDF5 cannot
/// copy it (its error stack then says why).
pub(crate) fn create_plist(did: hid_t) -> Option<Owned> {
    // SAFETY: HDF5 checks the id; the list is owned by an `Owned` at once;
    // under the lock.
    sync(|| unsafe { Owned::ok(h5d::H5Dget_create_plist(did)) })
}

/// A dataset's storage layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    Compact,
    Contiguous,
    Chunked,
    Virtual,
    /// What HDF5 reports when it cannot say.
    Unknown,
}

/// The layout a dataset creation property list sets.
pub(crate) fn layout(dcpl: hid_t) -> Layout {
    // SAFETY: HDF5 checks the id; under the lock.
    match sync(|| unsafe { h5p::H5Pget_layout(dcpl) }) {
        H5D_layout_t::H5D_COMPACT => Layout::Compact,
        H5D_layout_t::H5D_CONTIGUOUS => Layout::Contiguous,
        H5D_layout_t::H5D_CHUNKED => Layout::Chunked,
        H5D_layout_t::H5D_VIRTUAL => Layout::Virtual,
        _ => Layout::Unknown,
    }
}

/// The sources of a virtual dataset, as far as HDF5 reads them.
pub(crate) struct VirtualSources {
    /// How many there are (at least 1).
    pub(crate) count: usize,
    /// The first source's file name (`None` if HDF5 cannot read it).
    pub(crate) file: Option<String>,
    /// The first source's dataset path (`None` if HDF5 cannot read it).
    pub(crate) dataset: Option<String>,
}

/// The sources a virtual dataset's creation property list `dcpl` maps,
/// or `None` if it maps none or HDF5 cannot say.
pub(crate) fn virtual_sources(dcpl: hid_t) -> Option<VirtualSources> {
    // SAFETY: HDF5 checks the id; it writes at most `size` bytes, NUL
    // included; under the lock.
    sync(|| unsafe {
        let mut count: usize = 0;
        if h5p::H5Pget_virtual_count(dcpl, &mut count) < 0 || count == 0 {
            return None;
        }
        let read = |f: unsafe extern "C" fn(hid_t, usize, *mut c_char, usize) -> isize| {
            let mut buf = vec![0 as c_char; 1024];
            let n = f(dcpl, 0, buf.as_mut_ptr(), buf.len());
            if n < 0 {
                return None;
            }
            Some(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned())
        };
        Some(VirtualSources {
            count,
            file: read(h5p::H5Pget_virtual_filename),
            dataset: read(h5p::H5Pget_virtual_dsetname),
        })
    })
}

/// How many external files a dataset creation property list `dcpl` sets
/// (negative if HDF5 cannot say).
pub(crate) fn external_count(dcpl: hid_t) -> c_int {
    // SAFETY: HDF5 checks the id; under the lock.
    sync(|| unsafe { h5p::H5Pget_external_count(dcpl) })
}

/// The name of the first external file of a dataset creation property
/// list `dcpl` with external storage (`None` if HDF5 cannot read it).
pub(crate) fn external_file(dcpl: hid_t) -> Option<String> {
    // SAFETY: HDF5 checks the id; it writes at most `buf.len()` bytes, and
    // the last is made a NUL; under the lock.
    sync(|| unsafe {
        let mut buf = vec![0 as c_char; 1024];
        let mut offset = std::mem::zeroed();
        let mut size: hsize_t = 0;
        if h5p::H5Pget_external(dcpl, 0, buf.len(), buf.as_mut_ptr(), &mut offset, &mut size) < 0 {
            return None;
        }
        let last = buf.len() - 1;
        buf[last] = 0;
        Some(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned())
    })
}

/// The first filter of a dataset creation property list `dcpl` this
/// build cannot run, described (see `raw::unavailable_filter`).
pub(crate) fn unavailable_filter_of(dcpl: hid_t) -> Option<String> {
    // SAFETY: under the lock; HDF5 checks the id.
    sync(|| unsafe { super::filters::unavailable_filter_in(dcpl) })
}

/// The maximum extent HDF5 reports for an unlimited dimension.
pub(crate) const UNLIMITED: u64 = h5s::H5S_UNLIMITED;

/// The maximum extent of the first dimension of dataset `did` ([`UNLIMITED`]
/// if it can grow without bound), or `None` if it has no dimensions (or
/// more than 32) or HDF5 cannot say.
pub(crate) fn first_max_extent(did: hid_t) -> Option<u64> {
    // SAFETY: HDF5 checks the id; the space is owned by an `Owned`; `dims`
    // and `maxdims` have room for any rank accepted; under the lock.
    sync(|| unsafe {
        let owned = Owned::ok(h5d::H5Dget_space(did))?;
        let space = owned.id();
        let rank = h5s::H5Sget_simple_extent_ndims(space);
        if !(1..=32).contains(&rank) {
            return None;
        }
        let mut dims = [0 as hsize_t; 32];
        let mut maxdims = [0 as hsize_t; 32];
        (h5s::H5Sget_simple_extent_dims(space, dims.as_mut_ptr(), maxdims.as_mut_ptr()) >= 0)
            .then_some(maxdims[0])
    })
}
