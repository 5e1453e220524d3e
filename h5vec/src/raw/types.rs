//! Plain values ([`Pod`], [`Bits8`]), what a stored datatype is
//! ([`TypeInfo`]), and the datatypes the high-level hdf5-metno API does not
//! build: UTF-8 strings of fixed or variable length and the h5col boolean.

use std::ffi::c_void;

use hdf5::{Dataset, Datatype};
use hdf5_sys::h5d;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t, H5T_cset_t, H5T_sign_t, H5T_str_t};

use super::bounds::{Bound, BoundKind, Summary};
use super::ffi::{check, sync, Owned};

/// An integer as a [`Bound`] (signed ones as i64, unsigned as u64).
trait WrapInt {
    fn wrap(self) -> Bound;
}
macro_rules! wrap_int {
    ($($t:ty => $v:ident as $w:ty),*) => {$(
        impl WrapInt for $t {
            fn wrap(self) -> Bound {
                Bound::$v(<$w>::from(self))
            }
        }
    )*};
}
wrap_int!(i8 => I as i64, i16 => I as i64, i32 => I as i64, i64 => I as i64,
    u8 => U as u64, u16 => U as u64, u32 => U as u64, u64 => U as u64);
fn wrap_int<T: WrapInt>(x: T) -> Bound {
    x.wrap()
}
use crate::error::{At, Context, Result};

/// A plain value stored bit for bit: every bit pattern is a valid value.
///
/// # Safety
/// Implementors must be plain old data (no padding, every bit pattern valid),
/// and `mem_type` must describe exactly their in-memory representation.
pub unsafe trait Pod: Copy + Default + Send + Sync + 'static {
    /// HDF5 memory type of this Rust type.
    fn mem_type() -> hid_t;
    /// HDF5 file type written for it (little-endian standard type).
    fn file_type() -> hid_t;
    /// The HDF5Vectors (Julia) spelling of the encoded type.
    const ENCODED: &'static str;
    /// Whether a dataset of this file type can be read as `Self` without loss.
    fn accepts(t: &TypeInfo) -> bool;
    /// Read and write with the dataset's own (1-byte) type as memory type,
    /// so a byte in any accepted encoding moves unchanged.
    const AS_STORED: bool = false;
    /// The kind of bound statistics keep of this type (`None`: no
    /// statistics: pointers, bytes of other types).
    const BOUND: Option<BoundKind> = None;
    /// The bounds and NaN count of `vals` (statistics, SPEC.md section 14);
    /// only called when [`Pod::BOUND`] is set.
    fn summarize(vals: &[Self]) -> Summary {
        Summary {
            bounds: None,
            nan: 0,
            n: vals.len() as u64,
            fill: 0,
        }
    }
}

macro_rules! pod_int {
    ($t:ty, $mem:ident, $file:ident, $enc:literal, $signed:expr) => {
        // SAFETY: a primitive integer: no padding, every bit pattern valid.
        unsafe impl Pod for $t {
            fn mem_type() -> hid_t {
                *h5t::$mem
            }
            fn file_type() -> hid_t {
                *h5t::$file
            }
            const ENCODED: &'static str = $enc;
            const BOUND: Option<BoundKind> =
                Some(if $signed { BoundKind::I } else { BoundKind::U });
            fn summarize(vals: &[Self]) -> Summary {
                let bounds = vals.first().map(|&f| {
                    let (lo, hi, _) = super::bounds::min_max(vals, f, f);
                    (wrap_int(lo), wrap_int(hi))
                });
                Summary {
                    bounds,
                    nan: 0,
                    n: vals.len() as u64,
                    fill: 0,
                }
            }
            fn accepts(t: &TypeInfo) -> bool {
                t.class == H5T_class_t::H5T_INTEGER
                    && t.size == std::mem::size_of::<$t>()
                    && t.signed == $signed
            }
        }
    };
}
pod_int!(i8, H5T_NATIVE_INT8, H5T_STD_I8LE, "Int8", true);
pod_int!(i16, H5T_NATIVE_INT16, H5T_STD_I16LE, "Int16", true);
pod_int!(i32, H5T_NATIVE_INT32, H5T_STD_I32LE, "Int32", true);
pod_int!(i64, H5T_NATIVE_INT64, H5T_STD_I64LE, "Int64", true);
pod_int!(u8, H5T_NATIVE_UINT8, H5T_STD_U8LE, "UInt8", false);
pod_int!(u16, H5T_NATIVE_UINT16, H5T_STD_U16LE, "UInt16", false);
pod_int!(u32, H5T_NATIVE_UINT32, H5T_STD_U32LE, "UInt32", false);
pod_int!(u64, H5T_NATIVE_UINT64, H5T_STD_U64LE, "UInt64", false);

macro_rules! pod_float {
    ($t:ty, $mem:ident, $file:ident, $enc:literal) => {
        // SAFETY: a primitive float: no padding, every bit pattern valid.
        unsafe impl Pod for $t {
            fn mem_type() -> hid_t {
                *h5t::$mem
            }
            fn file_type() -> hid_t {
                *h5t::$file
            }
            const ENCODED: &'static str = $enc;
            const BOUND: Option<BoundKind> = Some(BoundKind::F);
            fn summarize(vals: &[Self]) -> Summary {
                let (lo, hi, nan) =
                    super::bounds::min_max(vals, <$t>::INFINITY, <$t>::NEG_INFINITY);
                let bounds = (nan < vals.len() as u64)
                    .then(|| (Bound::F(f64::from(lo)), Bound::F(f64::from(hi))));
                Summary {
                    bounds,
                    nan,
                    n: vals.len() as u64,
                    fill: 0,
                }
            }
            fn accepts(t: &TypeInfo) -> bool {
                t.class == H5T_class_t::H5T_FLOAT && t.size == std::mem::size_of::<$t>()
            }
        }
    };
}
pod_float!(f32, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, "Float32");
pod_float!(f64, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, "Float64");

/// One byte of an HDF5 `H5T_STD_B8LE` bitfield: how HDF5.jl stores `Bool`.
///
/// Reading also accepts any other one-byte boolean encoding (the h5col enum
/// over int8 with `FALSE = 0`, `TRUE = 1`, or a plain 8-bit integer); the
/// byte is read unchanged; the decoders accept only 0 and 1 (SPEC.md section 7).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Bits8(pub u8);

// SAFETY: a transparent wrapper around u8.
unsafe impl Pod for Bits8 {
    fn mem_type() -> hid_t {
        *h5t::H5T_NATIVE_B8
    }
    fn file_type() -> hid_t {
        *h5t::H5T_STD_B8LE
    }
    const ENCODED: &'static str = "Bool";
    const AS_STORED: bool = true;
    const BOUND: Option<BoundKind> = Some(BoundKind::B);
    fn summarize(vals: &[Self]) -> Summary {
        let bounds = vals.first().map(|&f| {
            // Bits8 is a transparent u8: compare the bytes.
            let (lo, hi, _) = super::bounds::min_max(vals, f, f);
            (Bound::B(lo.0), Bound::B(hi.0))
        });
        Summary {
            bounds,
            nan: 0,
            n: vals.len() as u64,
            fill: 0,
        }
    }
    fn accepts(t: &TypeInfo) -> bool {
        t.size == 1
            && matches!(
                t.class,
                H5T_class_t::H5T_BITFIELD | H5T_class_t::H5T_ENUM | H5T_class_t::H5T_INTEGER
            )
    }
}

/// What a dataset's datatype is, in the terms h5vec checks.
#[derive(Clone, Debug)]
pub struct TypeInfo {
    /// HDF5 type class.
    pub class: H5T_class_t,
    /// Size in bytes (for variable-length strings: the pointer size).
    pub size: usize,
    /// Integers: signed.
    pub signed: bool,
    /// Strings: variable length.
    pub vlen_str: bool,
    /// Strings: UTF-8 character set.
    pub utf8: bool,
    /// Compound: member names, in order.
    pub members: Vec<(String, TypeInfo)>,
}

impl TypeInfo {
    /// A short human description for error messages, like `int32` or `vlen string`.
    pub fn describe(&self) -> String {
        use H5T_class_t::*;
        match self.class {
            H5T_INTEGER => format!("{}int{}", if self.signed { "" } else { "u" }, self.size * 8),
            H5T_FLOAT => format!("float{}", self.size * 8),
            H5T_BITFIELD => format!("bitfield{}", self.size * 8),
            H5T_ENUM => format!("enum({} bytes)", self.size),
            H5T_STRING if self.vlen_str => "variable-length string".into(),
            H5T_STRING => format!("fixed-length string({})", self.size),
            H5T_COMPOUND => format!(
                "compound{{{}}}",
                self.members
                    .iter()
                    .map(|(n, t)| format!("{n}: {}", t.describe()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            H5T_VLEN => "variable-length sequence".into(),
            H5T_ARRAY => "array type".into(),
            H5T_OPAQUE => "opaque".into(),
            H5T_REFERENCE => "reference".into(),
            _ => "unknown type".into(),
        }
    }
}

/// Reads the type information of datatype `id`.
///
/// # Safety
/// The caller holds the HDF5 lock and `id` is a valid datatype id.
pub(crate) unsafe fn type_info_of(id: hid_t) -> TypeInfo {
    use H5T_class_t::*;
    // SAFETY: (whole body) `id` is a valid datatype id and the lock is held
    // (caller's contract); every id opened here is owned by an `Owned`, and
    // the member name HDF5 allocates is freed with `H5free_memory`.
    unsafe {
        let class = h5t::H5Tget_class(id);
        let size = h5t::H5Tget_size(id);
        let mut info = TypeInfo {
            class,
            size,
            signed: false,
            vlen_str: false,
            utf8: false,
            members: Vec::new(),
        };
        match class {
            H5T_INTEGER => info.signed = h5t::H5Tget_sign(id) == H5T_sign_t::H5T_SGN_2,
            H5T_STRING => {
                info.vlen_str = h5t::H5Tis_variable_str(id) > 0;
                info.utf8 = h5t::H5Tget_cset(id) == H5T_cset_t::H5T_CSET_UTF8;
            }
            H5T_ENUM => {
                if let Some(base) = Owned::ok(h5t::H5Tget_super(id)) {
                    info.signed = h5t::H5Tget_sign(base.id()) == H5T_sign_t::H5T_SGN_2;
                }
            }
            H5T_COMPOUND => {
                let n = h5t::H5Tget_nmembers(id).max(0) as u32;
                for i in 0..n {
                    let name_ptr = h5t::H5Tget_member_name(id, i);
                    let name = if name_ptr.is_null() {
                        String::new()
                    } else {
                        let s = std::ffi::CStr::from_ptr(name_ptr)
                            .to_string_lossy()
                            .into_owned();
                        hdf5_sys::h5::H5free_memory(name_ptr as *mut c_void);
                        s
                    };
                    let mi = match Owned::ok(h5t::H5Tget_member_type(id, i)) {
                        Some(mt) => type_info_of(mt.id()),
                        None => TypeInfo {
                            class: H5T_NO_CLASS,
                            size: 0,
                            signed: false,
                            vlen_str: false,
                            utf8: false,
                            members: vec![],
                        },
                    };
                    info.members.push((name, mi));
                }
            }
            _ => {}
        }
        info
    }
}

/// The dataset's own (file) datatype.
pub(crate) fn dataset_type(ds: &Dataset, path: impl At) -> Result<Datatype> {
    // SAFETY: a valid dataset id; the new type id is owned by the `Datatype`.
    sync(|| unsafe { hdf5::from_id::<Datatype>(check(path, h5d::H5Dget_type(ds.id()))?).at(path) })
}

/// The type information of a dataset's file datatype.
pub(crate) fn type_info(ds: &Dataset, path: impl At) -> Result<TypeInfo> {
    let t = dataset_type(ds, path)?;
    // SAFETY: a valid datatype id, under the lock.
    Ok(sync(|| unsafe { type_info_of(t.id()) }))
}

/// A copy of a predefined datatype, owned.
pub(crate) fn copy_type(id: hid_t, path: impl At) -> Result<Datatype> {
    // SAFETY: `H5Tcopy` accepts any id (an invalid one is an error); the
    // copy is owned by the `Datatype`.
    sync(|| unsafe { hdf5::from_id::<Datatype>(check(path, h5t::H5Tcopy(id))?).at(path) })
}

/// A UTF-8 string type, NULLTERM, of `size` bytes or `H5T_VARIABLE`.
fn utf8_string(size: usize, path: impl At) -> Result<Datatype> {
    let dt = copy_type(*h5t::H5T_C_S1, path)?;
    // SAFETY: `dt` is a fresh, modifiable string type owned here.
    sync(|| unsafe {
        check(path, h5t::H5Tset_size(dt.id(), size))?;
        check(path, h5t::H5Tset_cset(dt.id(), H5T_cset_t::H5T_CSET_UTF8))?;
        check(
            path,
            h5t::H5Tset_strpad(dt.id(), H5T_str_t::H5T_STR_NULLTERM),
        )?;
        Ok(dt)
    })
}

/// Variable-length UTF-8 string type, NULLTERM (what HDF5.jl and h5py's
/// `string_dtype()` write).
pub(crate) fn vlen_utf8(path: impl At) -> Result<Datatype> {
    utf8_string(h5t::H5T_VARIABLE, path)
}

/// Fixed-length UTF-8 string type of `size` bytes, NULLTERM.
pub(crate) fn fixed_utf8(size: usize, path: impl At) -> Result<Datatype> {
    utf8_string(size.max(1), path)
}

/// The h5col boolean type: an enum over 8-bit signed integers with exactly
/// `FALSE = 0` and `TRUE = 1`.
pub(crate) fn h5col_bool(path: impl At) -> Result<Datatype> {
    // SAFETY: the new enum type is owned by the `Datatype` at once; the
    // names are NUL-terminated and the values are `i8`s, the enum's base.
    sync(|| unsafe {
        let t = check(path, h5t::H5Tenum_create(*h5t::H5T_NATIVE_INT8))?;
        let dt = hdf5::from_id::<Datatype>(t).at(path)?;
        for (name, v) in [(c"FALSE", 0i8), (c"TRUE", 1i8)] {
            check(
                path,
                h5t::H5Tenum_insert(t, name.as_ptr(), (&v as *const i8).cast()),
            )?;
        }
        Ok(dt)
    })
}

/// Whether a dataset's type is the h5col boolean enum (int8 base, FALSE = 0, TRUE = 1).
pub(crate) fn is_h5col_bool(ds: &Dataset, path: impl At) -> Result<bool> {
    let dt = dataset_type(ds, path)?;
    // SAFETY: a valid datatype id; the base type is owned by an `Owned`;
    // `H5Tenum_valueof` writes one `i8` (the enum's size, checked first).
    sync(|| unsafe {
        let t = dt.id();
        if h5t::H5Tget_class(t) != H5T_class_t::H5T_ENUM
            || h5t::H5Tget_size(t) != 1
            || h5t::H5Tget_nmembers(t) != 2
        {
            return Ok(false);
        }
        let Some(base) = Owned::ok(h5t::H5Tget_super(t)) else {
            return Ok(false);
        };
        let mut ok = h5t::H5Tget_sign(base.id()) == H5T_sign_t::H5T_SGN_2;
        for (name, want) in [(c"FALSE", 0i8), (c"TRUE", 1i8)] {
            let mut v: i8 = -1;
            let r = h5t::H5Tenum_valueof(t, name.as_ptr(), (&mut v as *mut i8).cast());
            ok &= r >= 0 && v == want;
        }
        Ok(ok)
    })
}

/// Bytes one element of a variable-length type (string or sequence) takes
/// in the dataset itself: a 4-byte length and a 12-byte global heap ID.
/// The bytes it points to live in global heap collections, outside the
/// dataset's storage.
pub(crate) const VLEN_ELEMENT_BYTES: u64 = 16;

/// Most enum members, compound members and nesting levels a type
/// description spells out (a file's type can declare thousands).
const DESCRIBE_MAX_MEMBERS: usize = 32;
const DESCRIBE_MAX_DEPTH: usize = 8;

/// A dataset's stored datatype in numpy-like words (`int32`, `float64`,
/// `bool` for the 1-byte bitfield, `enum(int8){FALSE=0,TRUE=1}`,
/// `vlen str`, `|S12`, `compound{offset:uint64,length:uint64}`), and the
/// bytes one element takes in the dataset ([`VLEN_ELEMENT_BYTES`] for
/// variable-length types).
pub(crate) fn describe_dtype(ds: &Dataset, path: impl At) -> Result<(String, u64)> {
    let t = dataset_type(ds, path)?;
    // SAFETY: a valid datatype id, owned by `t`, under the lock.
    Ok(sync(|| unsafe {
        let id = t.id();
        let bytes = match h5t::H5Tget_class(id) {
            H5T_class_t::H5T_VLEN => VLEN_ELEMENT_BYTES,
            H5T_class_t::H5T_STRING if h5t::H5Tis_variable_str(id) > 0 => VLEN_ELEMENT_BYTES,
            _ => h5t::H5Tget_size(id) as u64,
        };
        (describe_type_of(id, 0), bytes)
    }))
}

/// [`describe_dtype`]'s words for datatype `id`, `depth` levels down.
///
/// # Safety
/// The caller holds the HDF5 lock and `id` is a valid datatype id.
unsafe fn describe_type_of(id: hid_t, depth: usize) -> String {
    use H5T_class_t::*;
    if depth > DESCRIBE_MAX_DEPTH {
        return "...".into();
    }
    // SAFETY: (whole body) `id` is valid and the lock held (caller's
    // contract); every id opened here is owned by an `Owned`; names HDF5
    // allocates are freed with `H5free_memory`; output buffers are as large
    // as passed.
    unsafe {
        let size = h5t::H5Tget_size(id);
        let big = h5t::H5Tget_order(id) == h5t::H5T_order_t::H5T_ORDER_BE;
        let order = if big { " (big-endian)" } else { "" };
        let precision = h5t::H5Tget_precision(id);
        let bits = if precision != 0 && precision != size * 8 {
            format!(" ({precision} bits used)")
        } else {
            String::new()
        };
        let member_name = |i: u32| {
            let p = h5t::H5Tget_member_name(id, i);
            if p.is_null() {
                return String::from("?");
            }
            let s = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
            hdf5_sys::h5::H5free_memory(p.cast::<c_void>());
            s
        };
        let more = |n: usize| {
            if n > DESCRIBE_MAX_MEMBERS {
                format!(",...({} more)", n - DESCRIBE_MAX_MEMBERS)
            } else {
                String::new()
            }
        };
        match h5t::H5Tget_class(id) {
            H5T_INTEGER => {
                let sign = h5t::H5Tget_sign(id) == H5T_sign_t::H5T_SGN_2;
                format!(
                    "{}int{}{order}{bits}",
                    if sign { "" } else { "u" },
                    size * 8
                )
            }
            H5T_FLOAT => format!("float{}{order}{bits}", size * 8),
            H5T_BITFIELD if size == 1 => "bool".into(),
            H5T_BITFIELD => format!("bitfield{}{order}", size * 8),
            H5T_ENUM => {
                let Some(base) = Owned::ok(h5t::H5Tget_super(id)) else {
                    return "enum(?)".into();
                };
                let signed = h5t::H5Tget_sign(base.id()) == H5T_sign_t::H5T_SGN_2;
                let n = h5t::H5Tget_nmembers(id).max(0) as usize;
                let mut members = Vec::new();
                for i in 0..n.min(DESCRIBE_MAX_MEMBERS) as u32 {
                    let mut v = [0u8; 8];
                    let value = if size <= 8
                        && h5t::H5Tget_member_value(id, i, v.as_mut_ptr().cast::<c_void>()) >= 0
                    {
                        let mut b = v[..size].to_vec();
                        if big {
                            b.reverse();
                        }
                        let negative = signed && b.last().is_some_and(|&x| x & 0x80 != 0);
                        b.resize(8, if negative { 0xff } else { 0 });
                        let raw = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
                        if signed {
                            (raw as i64).to_string()
                        } else {
                            raw.to_string()
                        }
                    } else {
                        "?".into()
                    };
                    members.push(format!("{}={value}", member_name(i)));
                }
                format!(
                    "enum({}){{{}{}}}",
                    describe_type_of(base.id(), depth + 1),
                    members.join(","),
                    more(n)
                )
            }
            H5T_STRING if h5t::H5Tis_variable_str(id) > 0 => {
                if h5t::H5Tget_cset(id) == H5T_cset_t::H5T_CSET_UTF8 {
                    "vlen str".into()
                } else {
                    "vlen bytes".into()
                }
            }
            H5T_STRING => format!("|S{size}"),
            H5T_COMPOUND => {
                let n = h5t::H5Tget_nmembers(id).max(0) as usize;
                let mut members = Vec::new();
                for i in 0..n.min(DESCRIBE_MAX_MEMBERS) as u32 {
                    let t = match Owned::ok(h5t::H5Tget_member_type(id, i)) {
                        Some(mt) => describe_type_of(mt.id(), depth + 1),
                        None => "?".into(),
                    };
                    members.push(format!("{}:{t}", member_name(i)));
                }
                format!("compound{{{}{}}}", members.join(","), more(n))
            }
            H5T_ARRAY => {
                let rank = h5t::H5Tget_array_ndims(id);
                let mut dims = [0 as hdf5_sys::h5::hsize_t; 32];
                let dims = if (1..=32).contains(&rank)
                    && h5t::H5Tget_array_dims2(id, dims.as_mut_ptr()) == rank
                {
                    format!("{:?}", &dims[..rank as usize])
                } else {
                    "?".into()
                };
                let base = match Owned::ok(h5t::H5Tget_super(id)) {
                    Some(b) => describe_type_of(b.id(), depth + 1),
                    None => "?".into(),
                };
                format!("array({base},{dims})")
            }
            H5T_VLEN => match Owned::ok(h5t::H5Tget_super(id)) {
                Some(b) => format!("vlen({})", describe_type_of(b.id(), depth + 1)),
                None => "vlen(?)".into(),
            },
            H5T_OPAQUE => format!("opaque({size})"),
            H5T_REFERENCE => "reference".into(),
            H5T_TIME => "time".into(),
            _ => "unknown type".into(),
        }
    }
}

#[cfg(hdf5_1_14_4)]
unsafe extern "C" {
    // HDF5's predefined IEEE 754 half float, little-endian (H5Tpublic.h,
    // since 1.14.4), not bound by hdf5-sys 0.12.
    static H5T_IEEE_F16LE_g: hid_t;
}

/// `H5T_IEEE_F16LE`: the file type of `half::f16` (numpy `float16`), and
/// its memory type on little-endian machines.
#[cfg(hdf5_1_14_4)]
pub(crate) fn ieee_f16le() -> hid_t {
    // SAFETY: `H5open` initializes the predefined types, among them the
    // global read after it (an id HDF5 owns for the library's lifetime).
    sync(|| unsafe {
        hdf5_sys::h5::H5open();
        H5T_IEEE_F16LE_g
    })
}

/// `H5T_IEEE_F16LE` before HDF5 1.14.4, which lacks it: the same type
/// made once from `H5T_IEEE_F32LE` (as h5py makes numpy's float16: sign
/// bit 15, exponent bits 10..15 with bias 15, mantissa bits 0..10), kept
/// open for the process's lifetime like a predefined type. An invalid id
/// (-1) if HDF5 refuses, which the caller's HDF5 calls then report.
#[cfg(not(hdf5_1_14_4))]
pub(crate) fn ieee_f16le() -> hid_t {
    static F16: std::sync::OnceLock<hid_t> = std::sync::OnceLock::new();
    *F16.get_or_init(|| {
        // SAFETY: a copy of a predefined type, changed by HDF5's own
        // setters (fields before size, as HDF5 requires), under the lock;
        // the id is never closed.
        sync(|| unsafe {
            use hdf5_sys::h5t::*;
            hdf5_sys::h5::H5open();
            let t = H5Tcopy(*H5T_IEEE_F32LE);
            let ok = t >= 0
                && H5Tset_fields(t, 15, 10, 5, 0, 10) >= 0
                && H5Tset_precision(t, 16) >= 0
                && H5Tset_offset(t, 0) >= 0
                && H5Tset_size(t, 2) >= 0
                && H5Tset_ebias(t, 15) >= 0;
            if ok {
                t
            } else {
                if t >= 0 {
                    H5Tclose(t);
                }
                -1
            }
        })
    })
}
