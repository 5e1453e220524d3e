//! Shared helpers of the integration tests: files, raw HDF5 type checks and
//! error inspection. Type checks go through the HDF5 C API (hdf5-sys), not
//! through h5vec, so they verify what is on disk independently.

#![allow(dead_code)]

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
    with_dtype(ds, |id| unsafe { h5t::H5Tequal(id, want) } > 0)
}

/// The HDF5 type class of `ds`.
pub fn dtype_class(ds: &Dataset) -> H5T_class_t {
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
    let s = h5vec::raw::read_scalar_string(&ds, name).expect("read string");
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
