//! The HDF5 calls whose names or types differ between HDF5 1.10 (Debian
//! 12's parallel HDF5 1.10.8, which the `mpi` feature links: issue 32)
//! and 1.12+ (the bundled HDF5 2.x of the default build), behind one
//! name each. `hdf5_1_12` is set by build.rs from the library found.
//!
//! 1.10 has no object tokens: an object is known by its address, which
//! [`obj_token`] writes as a native 1.12 token holds it (little-endian,
//! in the first 8 bytes), so the callers compare and decode both alike.

use std::ffi::{c_char, c_uint, c_void};

use hdf5_sys::h5::{herr_t, hsize_t, H5_index_t, H5_iter_order_t};
use hdf5_sys::h5ac::H5AC_cache_config_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::{h5l, h5o};

/// A link's information (`H5Lget_info`'s).
#[cfg(hdf5_1_12)]
pub(crate) type LinkInfo = h5l::H5L_info2_t;
/// A link's information (`H5Lget_info`'s).
#[cfg(not(hdf5_1_12))]
pub(crate) type LinkInfo = h5l::H5L_info1_t;

/// An object's information (`H5Oget_info`'s).
#[cfg(hdf5_1_12)]
pub(crate) type ObjInfo = h5o::H5O_info2_t;
/// An object's information (`H5Oget_info`'s).
#[cfg(not(hdf5_1_12))]
pub(crate) type ObjInfo = h5o::H5O_info1_t;

/// The callback of [`iterate_links`].
pub(crate) type LinkOp =
    unsafe extern "C" fn(hid_t, *const c_char, *const LinkInfo, *mut c_void) -> herr_t;

/// `H5Fset_mdc_config`'s argument: HDF5 only reads it, but 1.10's
/// prototype (and so hdf5-sys's before 1.14) takes a mutable pointer.
pub(crate) fn mdc_ptr(c: &H5AC_cache_config_t) -> *mut H5AC_cache_config_t {
    std::ptr::from_ref(c).cast_mut()
}

/// Frees the variable-length data HDF5 allocated into `buf`
/// (`H5Treclaim`; `H5Dvlen_reclaim` before 1.12).
///
/// # Safety
/// As the HDF5 call: valid ids, `buf` the buffer read with them; the
/// caller holds the lock.
pub(crate) unsafe fn reclaim(
    type_id: hid_t,
    space_id: hid_t,
    plist: hid_t,
    buf: *mut c_void,
) -> herr_t {
    // SAFETY: the function's contract.
    unsafe {
        #[cfg(hdf5_1_12)]
        return hdf5_sys::h5t::H5Treclaim(type_id, space_id, plist, buf);
        #[cfg(not(hdf5_1_12))]
        return hdf5_sys::h5d::H5Dvlen_reclaim(type_id, space_id, plist, buf);
    }
}

/// The number HDF5 gives the open file `file_id` (the same for every
/// handle of that file): `H5Fget_fileno`, or before 1.12 the `fileno` of
/// the root group's object information (the same number).
///
/// # Safety
/// The caller holds the lock (HDF5 checks the id).
pub(crate) unsafe fn fileno(file_id: hid_t) -> Option<u64> {
    // SAFETY: the function's contract; plain output values.
    unsafe {
        #[cfg(hdf5_1_12)]
        {
            let mut n: std::ffi::c_ulong = 0;
            (hdf5_sys::h5f::H5Fget_fileno(file_id, &mut n) >= 0).then_some(n as u64)
        }
        #[cfg(not(hdf5_1_12))]
        {
            let mut info: ObjInfo = std::mem::zeroed();
            (h5o::H5Oget_info2(file_id, &mut info, h5o::H5O_INFO_BASIC) >= 0)
                .then_some(info.fileno as u64)
        }
    }
}

/// The address of HDF5's per-handle struct behind `id` (`H5VLobject`,
/// 1.12+), only ever compared; `None` before 1.12 (no public way).
///
/// # Safety
/// The caller holds the lock.
pub(crate) unsafe fn vol_object(id: hid_t) -> Option<usize> {
    #[cfg(hdf5_1_12)]
    {
        // SAFETY: the function's contract; the pointer is not dereferenced.
        let p = unsafe { super::ffi::H5VLobject(id) } as usize;
        (p != 0).then_some(p)
    }
    #[cfg(not(hdf5_1_12))]
    {
        let _ = id;
        None
    }
}

/// `H5Oget_info` of the open object `id` (`fields` as HDF5's).
///
/// # Safety
/// `info` is valid for a write; the caller holds the lock.
pub(crate) unsafe fn object_info(id: hid_t, info: *mut ObjInfo, fields: c_uint) -> herr_t {
    // SAFETY: the function's contract.
    unsafe {
        #[cfg(hdf5_1_12)]
        return h5o::H5Oget_info3(id, info, fields);
        #[cfg(not(hdf5_1_12))]
        return h5o::H5Oget_info2(id, info, fields);
    }
}

/// `H5Oget_info_by_name` (link access properties `lapl`).
///
/// # Safety
/// `name` is NUL-terminated, `info` valid for a write; the caller holds
/// the lock.
pub(crate) unsafe fn object_info_by_name(
    loc: hid_t,
    name: *const c_char,
    info: *mut ObjInfo,
    fields: c_uint,
    lapl: hid_t,
) -> herr_t {
    // SAFETY: the function's contract.
    unsafe {
        #[cfg(hdf5_1_12)]
        return h5o::H5Oget_info_by_name3(loc, name, info, fields, lapl);
        #[cfg(not(hdf5_1_12))]
        return h5o::H5Oget_info_by_name2(loc, name, info, fields, lapl);
    }
}

/// The object's token bytes (1.12+), or its address as a native token
/// holds it (before 1.12).
pub(crate) fn obj_token(info: &ObjInfo) -> [u8; 16] {
    #[cfg(hdf5_1_12)]
    {
        token_bytes(&info.token)
    }
    #[cfg(not(hdf5_1_12))]
    {
        addr_token(info.addr)
    }
}

/// The bytes of an object token (its address in the file).
#[cfg(hdf5_1_12)]
pub(crate) fn token_bytes(token: &h5o::H5O_token_t) -> [u8; 16] {
    // SAFETY: `H5O_token_t` is `repr(C)` and holds exactly 16 bytes
    // (`H5O_MAX_TOKEN_SIZE`); every bit pattern is a valid array.
    unsafe { std::mem::transmute::<h5o::H5O_token_t, [u8; 16]>(*token) }
}

/// An address as a native token holds it.
#[cfg(not(hdf5_1_12))]
fn addr_token(addr: hdf5_sys::h5::haddr_t) -> [u8; 16] {
    let mut t = [0u8; 16];
    t[..8].copy_from_slice(&addr.to_le_bytes());
    t
}

/// The token of a hard link's object (read only for a hard link).
///
/// # Safety
/// `info` describes a hard link (its union holds the token or address).
pub(crate) unsafe fn hard_link_token(info: &LinkInfo) -> [u8; 16] {
    let mut copy = *info;
    // SAFETY: the function's contract.
    unsafe {
        #[cfg(hdf5_1_12)]
        return token_bytes(&*copy.u.token());
        #[cfg(not(hdf5_1_12))]
        return addr_token(*copy.u.address());
    }
}

/// `H5Lget_info`.
///
/// # Safety
/// `name` is NUL-terminated, `info` valid for a write; the caller holds
/// the lock.
pub(crate) unsafe fn link_info(
    loc: hid_t,
    name: *const c_char,
    info: *mut LinkInfo,
    lapl: hid_t,
) -> herr_t {
    // SAFETY: the function's contract.
    unsafe {
        #[cfg(hdf5_1_12)]
        return h5l::H5Lget_info2(loc, name, info, lapl);
        #[cfg(not(hdf5_1_12))]
        return h5l::H5Lget_info1(loc, name, info, lapl);
    }
}

/// `H5Literate`.
///
/// # Safety
/// `op` may be called with `data`, as HDF5 does; the caller holds the
/// lock.
pub(crate) unsafe fn iterate_links(
    gid: hid_t,
    index: H5_index_t,
    order: H5_iter_order_t,
    idx: &mut hsize_t,
    op: LinkOp,
    data: *mut c_void,
) -> herr_t {
    // SAFETY: the function's contract.
    unsafe {
        #[cfg(hdf5_1_12)]
        return h5l::H5Literate2(gid, index, order, idx, Some(op), data);
        #[cfg(not(hdf5_1_12))]
        return h5l::H5Literate1(gid, index, order, idx, Some(op), data);
    }
}

/// The header messages present in the object header of `oid`, as a bit
/// set (`H5O_hdr_info_t::mesg.present`), or `None` if HDF5 cannot say.
///
/// # Safety
/// The caller holds the lock (HDF5 checks the id).
pub(crate) unsafe fn header_messages(oid: hid_t) -> Option<u64> {
    // SAFETY: plain C output structs HDF5 fills. In 1.12+ the first field
    // of `H5O_native_info_t` is the header information (`H5O_hdr_info_t`,
    // whose fields hdf5-sys makes public, unlike those of
    // `H5O_native_info_t`); before, it is a field of the object info.
    unsafe {
        #[cfg(hdf5_1_12)]
        {
            let mut info = std::mem::MaybeUninit::<h5o::H5O_native_info_t>::zeroed();
            if h5o::H5Oget_native_info(oid, info.as_mut_ptr(), h5o::H5O_NATIVE_INFO_HDR) < 0 {
                return None;
            }
            let hdr = &*info.as_ptr().cast::<h5o::H5O_hdr_info_t>();
            Some(hdr.mesg.present)
        }
        #[cfg(not(hdf5_1_12))]
        {
            let mut info: ObjInfo = std::mem::zeroed();
            if h5o::H5Oget_info2(oid, &mut info, h5o::H5O_INFO_HDR) < 0 {
                return None;
            }
            Some(info.hdr.mesg.present)
        }
    }
}

/// The type of an old-style object reference (`hobj_ref_t`), for
/// `H5Rcreate` (`H5R_OBJECT1` since 1.12, `H5R_OBJECT` before).
#[cfg(hdf5_1_12)]
pub(crate) const OBJECT_REF: hdf5_sys::h5r::H5R_type_t = hdf5_sys::h5r::H5R_type_t::H5R_OBJECT1;
/// The type of an old-style object reference (`hobj_ref_t`), for
/// `H5Rcreate` (`H5R_OBJECT1` since 1.12, `H5R_OBJECT` before).
#[cfg(not(hdf5_1_12))]
pub(crate) const OBJECT_REF: hdf5_sys::h5r::H5R_type_t = hdf5_sys::h5r::H5R_type_t::H5R_OBJECT;
