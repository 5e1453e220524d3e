//! The HDF5 calls behind `crate::pipeline::detect`: what a dataset's
//! creation property list and file type say about its chunks ([`Layout`]),
//! as plain values; and c-blosc's context calls for one chunk. Which pipelines
//! h5vec runs itself stays in
//! `crate::pipeline::detect`.

use std::ffi::{c_uint, CStr};

use hdf5::Dataset;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::H5T_class_t::*;
use hdf5_sys::{h5d, h5p, h5t};

use super::ffi::{sync, Owned};

/// One filter of a dataset's pipeline: its id and the first (at most 8)
/// of its client data values (`nelm` of them are set).
#[derive(Clone, Copy)]
pub(crate) struct Filter {
    /// HDF5's filter id.
    pub(crate) id: i32,
    /// How many client data values the filter has (at most 8 are read).
    pub(crate) nelm: usize,
    /// The client data values.
    pub(crate) cd: [c_uint; 8],
}

/// What [`layout`] reads of a chunked dataset.
pub(crate) struct Layout {
    /// The filters, in pipeline order.
    pub(crate) filters: Vec<Filter>,
    /// Whether the file type is plain fixed-size data (integers, floats,
    /// bitfields, enums, compounds of those: no variable-length data,
    /// strings or references) and equal to the memory type asked about.
    pub(crate) plain_and_same: bool,
    /// Bytes of one element of the file type.
    pub(crate) elem: usize,
    /// The chunk shape (rank at least 1).
    pub(crate) chunk: Vec<hsize_t>,
}

/// The filters, the file type (compared with `mem_type`) and the chunk
/// shape of `ds`; `None` if HDF5 does not give them or the dataset is not
/// chunked.
pub(crate) fn layout(ds: &Dataset, mem_type: hid_t) -> Option<Layout> {
    // SAFETY: a valid dataset id; the property list and the file type are
    // owned by `Owned`s and valid while read, under the lock; output
    // buffers are as large as passed.
    sync(|| unsafe {
        let dcpl = Owned::ok(h5d::H5Dget_create_plist(ds.id()))?;
        let dcpl = dcpl.id();
        let nf = h5p::H5Pget_nfilters(dcpl);
        let mut filters = Vec::with_capacity(usize::try_from(nf).ok()?);
        for i in 0..nf as c_uint {
            let mut flags: c_uint = 0;
            let mut nelm: usize = 8;
            let mut cd = [0 as c_uint; 8];
            let mut cfg: c_uint = 0;
            let id = h5p::H5Pget_filter2(
                dcpl,
                i,
                &mut flags,
                &mut nelm,
                cd.as_mut_ptr(),
                0,
                std::ptr::null_mut(),
                &mut cfg,
            );
            filters.push(Filter { id, nelm, cd });
        }
        let file_type = Owned::ok(h5d::H5Dget_type(ds.id()))?;
        let ft = file_type.id();
        let plain = matches!(
            h5t::H5Tget_class(ft),
            H5T_INTEGER | H5T_FLOAT | H5T_BITFIELD | H5T_ENUM | H5T_COMPOUND
        ) && h5t::H5Tdetect_class(ft, H5T_VLEN) == 0
            && h5t::H5Tdetect_class(ft, H5T_STRING) == 0
            && h5t::H5Tdetect_class(ft, H5T_REFERENCE) == 0;
        let plain_and_same = plain && h5t::H5Tequal(ft, mem_type) > 0;
        let elem = h5t::H5Tget_size(ft);
        let mut dims = [0 as hsize_t; 32];
        let rank = h5p::H5Pget_chunk(dcpl, 32, dims.as_mut_ptr());
        if rank < 1 {
            return None;
        }
        Some(Layout {
            filters,
            plain_and_same,
            elem,
            chunk: dims[..rank as usize].to_vec(),
        })
    })
}

/// Compresses `src` into `dst` as one Blosc frame with c-blosc's context
/// call (no global state, one thread): Blosc's result, the frame's length,
/// 0 if it does not fit in `dst`, negative on error.
pub(crate) fn blosc_compress(
    level: i32,
    shuffle: i32,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    compressor: &CStr,
) -> i32 {
    // SAFETY: `src` and `dst` are valid for the lengths passed and do not
    // overlap (a shared and a unique borrow); `compressor` is
    // NUL-terminated; the context call touches no global state.
    unsafe {
        blosc_src::blosc_compress_ctx(
            level,
            shuffle,
            typesize,
            src.len(),
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            dst.len(),
            compressor.as_ptr(),
            0,
            1,
        )
    }
}

/// Decompresses the Blosc frame `comp` into `out` (one thread) if its
/// header, checked against `comp`'s length first, says it holds exactly
/// `out.len()` bytes: whether all of them were decompressed.
pub(crate) fn blosc_decompress(comp: &[u8], out: &mut [u8]) -> bool {
    let mut nbytes = 0usize;
    // SAFETY: `comp` is valid for `comp.len()` bytes; Blosc reads its
    // header within them and writes the size it claims to `nbytes`.
    let valid =
        unsafe { blosc_src::blosc_cbuffer_validate(comp.as_ptr().cast(), comp.len(), &mut nbytes) };
    if valid != 0 || nbytes != out.len() {
        return false;
    }
    // SAFETY: a frame whose header `blosc_cbuffer_validate` accepted for
    // `comp.len()` bytes; `out` has room for the `nbytes` it holds.
    let n = unsafe {
        blosc_src::blosc_decompress_ctx(comp.as_ptr().cast(), out.as_mut_ptr().cast(), out.len(), 1)
    };
    usize::try_from(n).is_ok_and(|n| n == out.len())
}

/// Decompresses bytes `at` of the Blosc frame `comp`, which holds `whole`
/// bytes, into `out` (`at.len()` bytes): only the frame's blocks that
/// cover them (c-blosc's `blosc_getitem`; one thread). Whether `out` was
/// filled: `false` (nothing to trust in `out`) when the header, checked
/// against `comp`'s length first, does not say `whole` bytes, or `at` is
/// not whole items of the frame's type size or lies outside them.
pub(crate) fn blosc_decompress_part(
    comp: &[u8],
    whole: usize,
    at: std::ops::Range<usize>,
    out: &mut [u8],
) -> bool {
    let mut nbytes = 0usize;
    // SAFETY: as in `blosc_decompress`.
    let valid =
        unsafe { blosc_src::blosc_cbuffer_validate(comp.as_ptr().cast(), comp.len(), &mut nbytes) };
    if valid != 0 || nbytes != whole || at.end > whole || at.start > at.end || out.len() != at.len()
    {
        return false;
    }
    let (mut typesize, mut flags) = (0usize, 0 as std::os::raw::c_int);
    // SAFETY: the header `blosc_cbuffer_validate` just read within `comp`;
    // Blosc writes the two values through valid pointers.
    unsafe { blosc_src::blosc_cbuffer_metainfo(comp.as_ptr().cast(), &mut typesize, &mut flags) };
    // `blosc_getitem` counts in items of the frame's type size, and checks
    // the bounds only after allocating (an out-of-bounds call leaks and
    // prints): everything is checked here first.
    if typesize == 0 || !at.start.is_multiple_of(typesize) || !at.len().is_multiple_of(typesize) {
        return false;
    }
    let (Ok(start), Ok(items)) = (
        std::os::raw::c_int::try_from(at.start / typesize),
        std::os::raw::c_int::try_from(at.len() / typesize),
    ) else {
        return false;
    };
    if items == 0 {
        return true;
    }
    // SAFETY: a frame whose header `blosc_cbuffer_validate` accepted for
    // `comp.len()` bytes (its compressed size within them, which bounds
    // every block offset c-blosc follows); items `start..start + items`
    // lie within the `whole` bytes it holds, and `out` has room for
    // exactly their `at.len()` bytes, which is what it writes.
    let n = unsafe {
        blosc_src::blosc_getitem(comp.as_ptr().cast(), start, items, out.as_mut_ptr().cast())
    };
    usize::try_from(n).is_ok_and(|n| n == out.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame of many blocks, for every shuffle: every part decompresses
    /// to the same bytes as the whole; parts that are not whole items, out
    /// of bounds, or of a damaged frame are refused (never read past).
    #[test]
    fn parts_of_a_blosc_frame_match_the_whole() {
        let src: Vec<u8> = (0..600_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 ^ (i / 7) as u8)
            .collect();
        for (shuffle, typesize) in [(0, 8), (1, 8), (2, 8), (2, 4), (1, 2), (0, 1)] {
            let mut dst = vec![0u8; src.len() + 16 + 64];
            let n = blosc_compress(5, shuffle, typesize, &src, &mut dst, c"blosclz");
            assert!(n > 0, "shuffle {shuffle} typesize {typesize}");
            let comp = &dst[..n as usize];
            let mut whole = vec![0u8; src.len()];
            assert!(blosc_decompress(comp, &mut whole));
            assert_eq!(whole, src);
            let t = typesize;
            for (a, len) in [
                (0, 0),
                (0, t),
                (8 * t, 3 * t),
                (t * 4_000, t * 40_000),
                (src.len() - t, t),
                (0, src.len()),
            ] {
                let mut out = vec![0u8; len];
                assert!(
                    blosc_decompress_part(comp, src.len(), a..a + len, &mut out),
                    "shuffle {shuffle} typesize {t} at {a}+{len}"
                );
                assert_eq!(
                    out,
                    &src[a..a + len],
                    "shuffle {shuffle} typesize {t} at {a}+{len}"
                );
            }
            let mut out = vec![0u8; 2 * t];
            // Past the end, or not in whole items.
            assert!(!blosc_decompress_part(
                comp,
                src.len(),
                src.len() - t..src.len() + t,
                &mut out
            ));
            if t > 1 {
                let mut odd = vec![0u8; t];
                assert!(!blosc_decompress_part(comp, src.len(), 1..1 + t, &mut odd));
            }
            // A frame cut short, or claiming another size.
            assert!(!blosc_decompress_part(
                &comp[..comp.len() / 2],
                src.len(),
                0..t,
                &mut out[..t]
            ));
            assert!(!blosc_decompress_part(
                comp,
                src.len() + 8,
                0..t,
                &mut out[..t]
            ));
        }
    }
}
