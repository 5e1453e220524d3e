//! Shared helpers of the integration tests: files, raw HDF5 type checks and
//! error inspection. Type checks go through the HDF5 C API (hdf5-sys), not
//! through h5vec, so they verify what is on disk independently.

use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use h5vec::hdf5::{self, Dataset, Group};
use h5vec::{Error, ErrorKind, H5Vector};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t, H5T_cset_t, H5T_str_t};

/// A file on disk in its own temporary directory (removed on drop).
pub struct DiskFile {
    pub file: hdf5::File,
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for DiskFile {
    type Target = hdf5::File;
    fn deref(&self) -> &hdf5::File {
        &self.file
    }
}

impl DiskFile {
    /// Closes the file and opens it again read-only.
    pub fn reopen(self) -> DiskFile {
        let DiskFile { file, path, _dir } = self;
        file.close().expect("close");
        let file = hdf5::File::open(&path).expect("reopen");
        DiskFile { file, path, _dir }
    }

    /// Closes the file; returns its size in bytes (the directory stays).
    pub fn close_and_size(self) -> (u64, tempfile::TempDir) {
        let DiskFile { file, path, _dir } = self;
        file.close().expect("close");
        (std::fs::metadata(&path).expect("stat").len(), _dir)
    }
}

/// A new, empty HDF5 file on disk.
pub fn disk_file() -> DiskFile {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("test.h5");
    let file = hdf5::File::create(&path).expect("create file");
    DiskFile {
        file,
        path,
        _dir: dir,
    }
}

/// A new, empty file made by `h5vec::create_file` (the properties users
/// get), in its own temporary directory (removed when dropped).
pub fn h5vec_file() -> (tempfile::TempDir, hdf5::File) {
    let d = tempfile::tempdir().expect("tempdir");
    let f = h5vec::create_file(d.path().join("r.h5")).expect("create file");
    (d, f)
}

/// 64 well-mixed bits from `k` (SplitMix64's finalizer): deterministic
/// pseudo-random test data without a random number generator.
pub fn mix(k: u64) -> u64 {
    let mut z = k.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A xorshift generator for random test data, the same in every test that
/// compares queries with brute force.
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    #[allow(clippy::should_implement_trait)] // a generator, not an iterator: it never ends
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A new, empty HDF5 file held in memory only (core driver, never written).
pub fn mem_file() -> hdf5::File {
    static N: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "h5vec-mem-{}-{}.h5",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    hdf5::File::with_options()
        .with_fapl(|p| p.core_filebacked(false))
        .create(name)
        .expect("create in-memory file")
}

/// Saves `values` as `v` in a fresh in-memory file and loads them back.
pub fn roundtrip<T: H5Vector>(values: &[T]) -> Vec<T> {
    let f = mem_file();
    h5vec::save_vector(&f, "v", values).expect("save");
    h5vec::load_vector::<T>(&f, "v").expect("load")
}

/// Round trip that must give back exactly `values`, and an empty vector of
/// the same type must round-trip too.
pub fn check_roundtrip<T: H5Vector + PartialEq + Debug>(values: &[T]) {
    assert_eq!(roundtrip(values), values);
    let empty: Vec<T> = Vec::new();
    assert_eq!(roundtrip(&empty), empty);
}

/// Runs `f` on the file datatype id of `ds`, holding the HDF5 lock.
pub fn with_dtype<R>(ds: &Dataset, f: impl FnOnce(hid_t) -> R) -> R {
    let dt = ds.dtype().expect("dtype");
    hdf5::sync::sync(|| f(dt.id()))
}

/// Whether the file type of `ds` is exactly the predefined type `want`.
pub fn dtype_is(ds: &Dataset, want: hid_t) -> bool {
    // SAFETY: a valid datatype id from `with_dtype`, under its lock.
    with_dtype(ds, |id| unsafe { h5t::H5Tequal(id, want) } > 0)
}

/// The HDF5 type class of `ds`.
pub fn dtype_class(ds: &Dataset) -> H5T_class_t {
    // SAFETY: a valid datatype id from `with_dtype`, under its lock.
    with_dtype(ds, |id| unsafe { h5t::H5Tget_class(id) })
}

/// Asserts that `ds` has exactly the predefined file type `want` (named `name` in messages).
#[track_caller]
pub fn assert_dtype(ds: &Dataset, want: hid_t, name: &str) {
    assert!(
        dtype_is(ds, want),
        "{}: expected file type {name}, found class {:?} size {}",
        ds.name(),
        dtype_class(ds),
        // SAFETY: a valid datatype id from `with_dtype`, under its lock.
        with_dtype(ds, |id| unsafe { h5t::H5Tget_size(id) })
    );
}

/// String properties of a dataset's file type.
#[derive(Debug, PartialEq, Eq)]
pub struct StrType {
    pub variable: bool,
    pub utf8: bool,
    pub nullterm: bool,
    /// Size in bytes (fixed-length strings only; 0 for variable).
    pub size: usize,
}

/// The string properties of `ds`'s file type (panics if not a string).
pub fn str_type(ds: &Dataset) -> StrType {
    // SAFETY: a valid datatype id from `with_dtype`, under its lock.
    with_dtype(ds, |id| unsafe {
        assert_eq!(
            h5t::H5Tget_class(id),
            H5T_class_t::H5T_STRING,
            "{} is not a string",
            ds.name()
        );
        let variable = h5t::H5Tis_variable_str(id) > 0;
        StrType {
            variable,
            utf8: h5t::H5Tget_cset(id) == H5T_cset_t::H5T_CSET_UTF8,
            nullterm: h5t::H5Tget_strpad(id) == H5T_str_t::H5T_STR_NULLTERM,
            size: if variable { 0 } else { h5t::H5Tget_size(id) },
        }
    })
}

/// Reads a metadata/schema string and asserts it is a scalar fixed-length
/// UTF-8 NULLTERM string sized to its bytes (what HDF5.jl writes).
#[track_caller]
pub fn meta_str(g: &Group, name: &str) -> String {
    let ds = g
        .dataset(name)
        .unwrap_or_else(|e| panic!("{}/{name}: {e}", g.name()));
    assert!(
        ds.is_scalar(),
        "{}/{name} is not scalar: {:?}",
        g.name(),
        ds.shape()
    );
    let t = str_type(&ds);
    let s = read_scalar_string(&ds);
    assert_eq!(
        t,
        StrType {
            variable: false,
            utf8: true,
            nullterm: true,
            size: s.len().max(1),
        },
        "{}/{name} = {s:?}",
        g.name()
    );
    s
}

/// Reads a scalar Int64 dataset, asserting its type and rank.
#[track_caller]
pub fn meta_i64(g: &Group, name: &str) -> i64 {
    let ds = g
        .dataset(name)
        .unwrap_or_else(|e| panic!("{}/{name}: {e}", g.name()));
    assert!(ds.is_scalar(), "{}/{name} is not scalar", g.name());
    assert_dtype(&ds, *h5t::H5T_STD_I64LE, "H5T_STD_I64LE");
    ds.read_scalar::<i64>().unwrap()
}

/// Reads a 1-D variable-length UTF-8 string dataset (via hdf5-metno).
#[track_caller]
pub fn vlen_strings(ds: &Dataset) -> Vec<String> {
    assert_eq!(ds.ndim(), 1, "{} is not 1-D", ds.name());
    assert_eq!(
        str_type(ds),
        StrType {
            variable: true,
            utf8: true,
            nullterm: true,
            size: 0
        },
        "{}",
        ds.name()
    );
    ds.read_raw::<hdf5::types::VarLenUnicode>()
        .unwrap()
        .into_iter()
        .map(|s| s.as_str().to_owned())
        .collect()
}

/// Member names of a group, sorted.
pub fn members(g: &Group) -> Vec<String> {
    let mut m = g.member_names().unwrap();
    m.sort();
    m
}

/// Asserts the error is a mismatch; returns (expected, found).
#[track_caller]
pub fn mismatch(e: &Error) -> (&str, &str) {
    match e.kind() {
        ErrorKind::Mismatch { expected, found } => (expected.as_str(), found.as_str()),
        other => panic!("expected a Mismatch error, got {other:?} ({e})"),
    }
}

/// Asserts the error is `Invalid`; returns its message.
#[track_caller]
pub fn invalid(e: &Error) -> &str {
    match e.kind() {
        ErrorKind::Invalid(m) => m.as_str(),
        other => panic!("expected an Invalid error, got {other:?} ({e})"),
    }
}

/// Asserts the error is `Encode`; returns its message.
#[track_caller]
pub fn encode(e: &Error) -> &str {
    match e.kind() {
        ErrorKind::Encode(m) => m.as_str(),
        other => panic!("expected an Encode error, got {other:?} ({e})"),
    }
}

/// Asserts the error is `BadName`; returns its message.
#[track_caller]
pub fn bad_name(e: &Error) -> &str {
    match e.kind() {
        ErrorKind::BadName(m) => m.as_str(),
        other => panic!("expected a BadName error, got {other:?} ({e})"),
    }
}

/// Reads the one byte of a scalar 1-byte dataset in its own file type.
pub fn read_scalar_byte(ds: &Dataset) -> u8 {
    assert!(ds.is_scalar());
    let mut b = 0u8;
    // SAFETY: a valid datatype id from `with_dtype`, under its lock; the buffer holds the one byte of the scalar.
    with_dtype(ds, |id| unsafe {
        assert_eq!(h5t::H5Tget_size(id), 1);
        let r = hdf5_sys::h5d::H5Dread(
            ds.id(),
            id,
            hdf5_sys::h5s::H5S_ALL,
            hdf5_sys::h5s::H5S_ALL,
            hdf5_sys::h5p::H5P_DEFAULT,
            (&mut b as *mut u8).cast(),
        );
        assert!(r >= 0, "H5Dread failed");
    });
    b
}

// --- raw HDF5 access: reading what is on disk and damaging files ----------
//
// Built on the HDF5 C API only (not on h5vec), so the tests can check and
// edit files independently of the code under test.

/// Panics with `what` if an HDF5 call returned a negative status or id.
#[track_caller]
fn ok<T: Copy + PartialOrd + Default + Debug>(what: &str, r: T) -> T {
    assert!(r >= T::default(), "{what} failed ({r:?})");
    r
}

/// Reads a fixed-length string (`size` bytes, up to the first NUL) with `read`,
/// which fills a buffer in the string's own type.
fn fixed_string(size: usize, read: impl FnOnce(*mut std::ffi::c_void)) -> String {
    let mut b = vec![0u8; size];
    read(b.as_mut_ptr().cast());
    if let Some(z) = b.iter().position(|&c| c == 0) {
        b.truncate(z);
    }
    String::from_utf8(b).expect("string is not UTF-8")
}

/// Reads a scalar string dataset, fixed-length or variable-length.
pub fn read_scalar_string(ds: &Dataset) -> String {
    if str_type(ds).variable {
        return ds
            .read_scalar::<hdf5::types::VarLenUnicode>()
            .expect("read string")
            .as_str()
            .to_owned();
    }
    with_dtype(ds, |id| {
        // SAFETY: `id` is the dataset's open file type (held by `with_dtype`
        // under the lock) and the buffer holds H5Tget_size(id) bytes: one
        // value of that type, the whole scalar dataspace.
        let size = unsafe { h5t::H5Tget_size(id) };
        // SAFETY: as above: the buffer `fixed_string` passes holds `size` bytes.
        fixed_string(size, |buf| unsafe {
            ok(
                "H5Dread",
                hdf5_sys::h5d::H5Dread(
                    ds.id(),
                    id,
                    hdf5_sys::h5s::H5S_ALL,
                    hdf5_sys::h5s::H5S_ALL,
                    hdf5_sys::h5p::H5P_DEFAULT,
                    buf,
                ),
            );
        })
    })
}

/// Reads a scalar string attribute, fixed-length or variable-length.
pub fn read_attr_string(a: &hdf5::Attribute) -> String {
    let dt = a.dtype().expect("attribute type");
    assert_eq!(a.size(), 1, "{}: not a scalar attribute", a.name());
    hdf5::sync::sync(|| {
        // SAFETY: `dt` is the attribute's open file type.
        let (class, variable, size) = unsafe {
            (
                h5t::H5Tget_class(dt.id()),
                h5t::H5Tis_variable_str(dt.id()) > 0,
                h5t::H5Tget_size(dt.id()),
            )
        };
        assert_eq!(class, H5T_class_t::H5T_STRING, "{}: not a string", a.name());
        if variable {
            let mut p: *mut std::ffi::c_char = std::ptr::null_mut();
            // SAFETY: a variable-length string read in its own type yields one
            // pointer (for the one value), allocated by HDF5 and freed here.
            unsafe {
                ok(
                    "H5Aread",
                    hdf5_sys::h5a::H5Aread(
                        a.id(),
                        dt.id(),
                        (&mut p as *mut *mut std::ffi::c_char).cast(),
                    ),
                );
                if p.is_null() {
                    return String::new();
                }
                let s = std::ffi::CStr::from_ptr(p)
                    .to_str()
                    .expect("string is not UTF-8")
                    .to_owned();
                hdf5_sys::h5::H5free_memory(p.cast());
                s
            }
        } else {
            // SAFETY: the buffer holds `size` bytes, one value of the file type.
            fixed_string(size, |buf| unsafe {
                ok("H5Aread", hdf5_sys::h5a::H5Aread(a.id(), dt.id(), buf));
            })
        }
    })
}

/// String attribute `name` of `obj`, or `None` if it does not exist.
pub fn attr_string(obj: &hdf5::Location, name: &str) -> Option<String> {
    let names = obj.attr_names().expect("attribute names");
    names
        .iter()
        .any(|n| n == name)
        .then(|| read_attr_string(&obj.attr(name).expect("open attribute")))
}

/// Writes (or replaces) a scalar fixed-length ASCII string attribute, the NUL
/// included in its size, null-padded: how h5col writes `CLASS`, `KIND` and
/// `VERSION` (SPEC.md, h5col layout).
pub fn write_attr_ascii(obj: &hdf5::Location, name: &str, value: &str) {
    let cname = std::ffi::CString::new(name).expect("attribute name");
    let mut buf = value.as_bytes().to_vec();
    buf.push(0);
    hdf5::sync::sync(|| {
        // SAFETY: every id used is created here and checked; the type and
        // dataspace are closed by their owners, the attribute right after the
        // write, and `buf` holds exactly one value of the type (its size).
        unsafe {
            use hdf5_sys::h5a;
            let t = ok("H5Tcopy", h5t::H5Tcopy(*h5t::H5T_C_S1));
            let dt = hdf5::from_id::<hdf5::Datatype>(t).expect("string type");
            ok("H5Tset_size", h5t::H5Tset_size(t, buf.len()));
            ok(
                "H5Tset_strpad",
                h5t::H5Tset_strpad(t, H5T_str_t::H5T_STR_NULLPAD),
            );
            ok(
                "H5Tset_cset",
                h5t::H5Tset_cset(t, H5T_cset_t::H5T_CSET_ASCII),
            );
            let sp = hdf5::Dataspace::try_new(()).expect("scalar dataspace");
            if h5a::H5Aexists(obj.id(), cname.as_ptr()) > 0 {
                ok("H5Adelete", h5a::H5Adelete(obj.id(), cname.as_ptr()));
            }
            let a = ok(
                "H5Acreate2",
                h5a::H5Acreate2(
                    obj.id(),
                    cname.as_ptr(),
                    dt.id(),
                    sp.id(),
                    hdf5_sys::h5p::H5P_DEFAULT,
                    hdf5_sys::h5p::H5P_DEFAULT,
                ),
            );
            let w = h5a::H5Awrite(a, dt.id(), buf.as_ptr().cast());
            h5a::H5Aclose(a);
            ok("H5Awrite", w);
        }
    });
}

/// Whether the file type of `ds` is the h5col boolean: an enum over a signed
/// 8-bit integer with exactly `FALSE = 0` and `TRUE = 1` (SPEC.md, h5col layout).
pub fn is_h5col_bool(ds: &Dataset) -> bool {
    with_dtype(ds, |t| {
        // SAFETY: `t` is the dataset's open file type; the base type opened
        // here is closed here; each enum value is read into an `i8`, checked
        // to be the enum's size first.
        unsafe {
            if h5t::H5Tget_class(t) != H5T_class_t::H5T_ENUM
                || h5t::H5Tget_size(t) != 1
                || h5t::H5Tget_nmembers(t) != 2
            {
                return false;
            }
            let base = ok("H5Tget_super", h5t::H5Tget_super(t));
            let signed = h5t::H5Tget_sign(base) == h5t::H5T_sign_t::H5T_SGN_2;
            h5t::H5Tclose(base);
            [(c"FALSE", 0i8), (c"TRUE", 1i8)]
                .into_iter()
                .fold(signed, |all, (name, want)| {
                    let mut v: i8 = -1;
                    let r = h5t::H5Tenum_valueof(t, name.as_ptr(), (&mut v as *mut i8).cast());
                    all && r >= 0 && v == want
                })
        }
    })
}

/// Every row of the 1-D dataset `ds` as bytes of its own file type (no
/// conversion), with the size of one row.
pub fn read_rows_bytes(ds: &Dataset) -> (Vec<u8>, usize) {
    assert_eq!(ds.ndim(), 1, "{} is not 1-D", ds.name());
    let rows = ds.size();
    with_dtype(ds, |t| {
        // SAFETY: the buffer holds `rows` values of the file type `t`, all
        // of the dataset's (1-D) dataspace.
        unsafe {
            let size = h5t::H5Tget_size(t);
            let mut b = vec![0u8; rows * size];
            ok(
                "H5Dread",
                hdf5_sys::h5d::H5Dread(
                    ds.id(),
                    t,
                    hdf5_sys::h5s::H5S_ALL,
                    hdf5_sys::h5s::H5S_ALL,
                    hdf5_sys::h5p::H5P_DEFAULT,
                    b.as_mut_ptr().cast(),
                ),
            );
            (b, size)
        }
    })
}

/// Overwrites rows `start..` of the 1-D dataset `ds` with `bytes`, given in
/// the dataset's own file type (whole rows; no conversion; the extent stays).
pub fn overwrite_rows(ds: &Dataset, start: u64, bytes: &[u8]) {
    assert_eq!(ds.ndim(), 1, "{} is not 1-D", ds.name());
    with_dtype(ds, |t| {
        // SAFETY: `bytes` holds `rows` whole values of the file type `t`;
        // the memory and file selections both cover `rows` elements, inside
        // the extent (checked); the file dataspace is closed by its owner.
        unsafe {
            use hdf5_sys::h5s;
            let size = h5t::H5Tget_size(t);
            assert_eq!(bytes.len() % size, 0, "{}: not whole rows", ds.name());
            let rows = (bytes.len() / size) as u64;
            assert!(
                start + rows <= ds.size() as u64,
                "{}: rows past the extent",
                ds.name()
            );
            let fs = ds.space().expect("dataspace");
            let (offset, count) = ([start], [rows]);
            ok(
                "H5Sselect_hyperslab",
                h5s::H5Sselect_hyperslab(
                    fs.id(),
                    h5s::H5S_seloper_t::H5S_SELECT_SET,
                    offset.as_ptr(),
                    std::ptr::null(),
                    count.as_ptr(),
                    std::ptr::null(),
                ),
            );
            let ms = hdf5::Dataspace::try_new(rows as usize).expect("memory dataspace");
            ok(
                "H5Dwrite",
                hdf5_sys::h5d::H5Dwrite(
                    ds.id(),
                    t,
                    ms.id(),
                    fs.id(),
                    hdf5_sys::h5p::H5P_DEFAULT,
                    bytes.as_ptr().cast(),
                ),
            );
        }
    });
}

/// Sets VLS pointer entry `row` of `ds` (a compound of two little-endian u64,
/// offset then length: SPEC.md, VLS layout) to (`offset`, `length`).
pub fn set_vls_pointer(ds: &Dataset, row: u64, offset: u64, length: u64) {
    let mut entry = offset.to_le_bytes().to_vec();
    entry.extend_from_slice(&length.to_le_bytes());
    overwrite_rows(ds, row, &entry);
}
