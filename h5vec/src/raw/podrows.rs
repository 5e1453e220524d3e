//! Rows of [`Pod`] values read and written safely: [`MemType`], a memory
//! type known to describe `T` (its own, by the `Pod` contract, or another
//! one checked to cover exactly the bytes of a `T` and to hold no pointers),
//! and hyperslab row I/O through it (the direct chunk path above it is
//! `crate::pipeline::rows`), with the buffers' lengths checked against the
//! rows asked for.

use std::marker::PhantomData;

use hdf5::{Dataset, Datatype};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t};

use super::ffi::sync;
use super::rows::{read_rows_raw, write_hyperslab};
use super::swmr::has_varlen;
use super::types::Pod;
use crate::error::{At, Error, Result};

/// A memory type rows of `T` are read and written with.
///
/// Either `T::mem_type()` (which describes `T` exactly: the `Pod`
/// contract) or an owned type checked by [`MemType::checked`]: as many
/// bytes as a `T`, and no variable-length data or references (HDF5 then
/// reads and writes the plain bytes of each value, and every bit pattern
/// is a valid `T`).
pub(crate) struct MemType<T: Pod> {
    own: Option<Datatype>,
    _t: PhantomData<fn() -> T>,
}

impl<T: Pod> MemType<T> {
    /// `T`'s own memory type.
    pub(crate) fn native() -> Self {
        MemType {
            own: None,
            _t: PhantomData,
        }
    }

    /// `dt` as the memory type of `T`: an error unless it has the size of
    /// a `T` and holds no variable-length data or references.
    pub(crate) fn checked(dt: Datatype, at: impl At) -> Result<Self> {
        let id = dt.id();
        // SAFETY: a valid datatype id (held by `dt`), under the lock
        // (`has_varlen`'s contract); the calls only read the type.
        let fits = sync(|| unsafe {
            h5t::H5Tget_size(id) == std::mem::size_of::<T>()
                && h5t::H5Tget_class(id) != H5T_class_t::H5T_NO_CLASS
                && !has_varlen(id)
                && h5t::H5Tdetect_class(id, H5T_class_t::H5T_REFERENCE) == 0
        });
        if !fits {
            return Err(Error::invalid(
                at,
                format!(
                    "internal: a memory type that does not describe {} ({} bytes)",
                    std::any::type_name::<T>(),
                    std::mem::size_of::<T>()
                ),
            ));
        }
        Ok(MemType {
            own: Some(dt),
            _t: PhantomData,
        })
    }

    /// The type's id, valid while `self` lives.
    pub(crate) fn id(&self) -> hid_t {
        self.own.as_ref().map_or_else(T::mem_type, |m| m.id())
    }
}

/// Values in `rows` rows of shape `inner`, if that fits a `usize`.
pub(crate) fn row_elems(rows: u64, inner: &[u64]) -> Option<usize> {
    inner
        .iter()
        .try_fold(rows, |a, &d| a.checked_mul(d))
        .and_then(|e| usize::try_from(e).ok())
}

/// Reads `rows` whole rows at `start` (inside the extent) into `buf` as the
/// bytes of `T` values: `buf` must hold at least that many bytes.
pub(crate) fn read_pod_rows_bytes<T: Pod>(
    ds: &Dataset,
    mem: &MemType<T>,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: &mut [u8],
    path: impl At,
) -> Result<()> {
    let bytes = row_elems(rows, inner).and_then(|n| n.checked_mul(std::mem::size_of::<T>()));
    if bytes.is_none_or(|n| n > buf.len()) {
        return Err(Error::invalid(
            path,
            "internal: a buffer smaller than the rows read",
        ));
    }
    // SAFETY: `buf` has room for `rows * prod(inner)` elements of `mem`
    // (checked just above; `mem` has the size of a `T`).
    unsafe {
        read_rows_raw(
            ds,
            mem.id(),
            start,
            rows,
            inner,
            buf.as_mut_ptr().cast(),
            path,
        )
    }
}

/// Writes `rows` whole rows at `start` (inside the extent) from `buf`, the
/// bytes of `T` values: `buf` must hold at least that many bytes. One
/// hyperslab write (the direct chunk path is `crate::pipeline::rows`).
pub(crate) fn write_pod_rows_bytes<T: Pod>(
    ds: &Dataset,
    mem: &MemType<T>,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: &[u8],
    path: impl At,
) -> Result<()> {
    let bytes = row_elems(rows, inner).and_then(|n| n.checked_mul(std::mem::size_of::<T>()));
    let Some(bytes) = bytes.filter(|&n| n <= buf.len()) else {
        return Err(Error::invalid(
            path,
            "internal: fewer bytes than rows to write",
        ));
    };
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: `buf` holds `rows * prod(inner)` values of `mem` (checked just
    // above; `mem` has the size of a `T` and no pointers: `MemType`).
    unsafe { write_hyperslab(ds, mem.id(), start, rows, inner, buf.as_ptr().cast(), path) }
}

/// The bytes of `v`.
pub(crate) fn pod_bytes<T: Pod>(v: &[T]) -> &[u8] {
    // SAFETY: `Pod` values are plain data without padding (its contract),
    // so the initialised elements are initialised bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// The bytes of `v`, to write: any bytes written are a valid `T` (the `Pod`
/// contract).
pub(crate) fn pod_bytes_mut<T: Pod>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: `v` holds initialised plain values without padding; viewing
    // them as bytes is valid, and every bit pattern is a valid `T`.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

/// The size of `dt` if it holds no pointers (variable-length data,
/// references): HDF5 then reads and writes the plain bytes of its values.
pub(crate) fn plain_size(dt: &Datatype) -> Option<usize> {
    let id = dt.id();
    // SAFETY: a valid datatype id (held by `dt`), under the lock
    // (`has_varlen`'s contract); the calls only read the type.
    let (size, plain) = sync(|| unsafe {
        (
            h5t::H5Tget_size(id),
            h5t::H5Tget_class(id) != H5T_class_t::H5T_NO_CLASS
                && !has_varlen(id)
                && h5t::H5Tdetect_class(id, H5T_class_t::H5T_REFERENCE) == 0,
        )
    });
    plain.then_some(size)
}

/// Bytes of `rows` rows of shape `inner` of a plain type `dt`, if `dt` is
/// plain and the product fits.
pub(super) fn plain_bytes(dt: &Datatype, rows: u64, inner: &[u64]) -> Option<usize> {
    let size = plain_size(dt)?;
    row_elems(rows, inner)?.checked_mul(size)
}

/// Writes `rows` rows of shape `inner` at row `start` (inside the extent)
/// from `buf` in the plain type `dt` (the dataset's own type, say): one
/// hyperslab write (the direct chunk path is `crate::pipeline::rows`). An
/// error unless `dt` holds no pointers and `buf` holds the rows.
pub(crate) fn write_plain_rows_bytes(
    ds: &Dataset,
    dt: &Datatype,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: &[u8],
    path: impl At,
) -> Result<()> {
    let Some(bytes) = plain_bytes(dt, rows, inner).filter(|&n| n <= buf.len()) else {
        return Err(Error::invalid(
            path,
            "internal: fewer bytes than rows to write",
        ));
    };
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: `buf` holds `rows * prod(inner)` values of `dt`, a type
    // without pointers (checked just above).
    unsafe { write_hyperslab(ds, dt.id(), start, rows, inner, buf.as_ptr().cast(), path) }
}

/// Reads `rows` rows of shape `inner` at row `start` (inside the extent)
/// into `buf` in the plain type `dt`, without conversion when `dt` is the
/// dataset's own type. An error unless `dt` holds no pointers and `buf` has
/// room for the rows.
pub(crate) fn read_plain_rows_bytes(
    ds: &Dataset,
    dt: &Datatype,
    start: u64,
    rows: u64,
    inner: &[u64],
    buf: &mut [u8],
    path: impl At,
) -> Result<()> {
    if plain_bytes(dt, rows, inner).is_none_or(|n| n > buf.len()) {
        return Err(Error::invalid(
            path,
            "internal: a buffer smaller than the rows read",
        ));
    }
    // SAFETY: `buf` has room for `rows * prod(inner)` values of `dt`, a
    // type without pointers (checked just above).
    unsafe {
        read_rows_raw(
            ds,
            dt.id(),
            start,
            rows,
            inner,
            buf.as_mut_ptr().cast(),
            path,
        )
    }
}
