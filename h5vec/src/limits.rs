//! Bounds on the work and memory a file can make h5vec spend (SPEC.md,
//! section 7): every length read from a file is checked against what the
//! file really stores, or against a documented cap, before anything is
//! allocated or looped over.

use hdf5::Dataset;
use hdf5_sys::h5::hsize_t;
use hdf5_sys::h5d::{self, H5D_layout_t};
use hdf5_sys::h5p;
use hdf5_sys::h5t::{self, H5T_class_t};

use crate::error::{At, Error, Place, Result};
use crate::raw::{check, sync, Owned, TypeInfo};

/// Most rows h5vec produces for a type that occupies no memory and no
/// dataset (unit structs, `()`, `PhantomData`, `[T; 0]`, records of them):
/// such rows cost time but no storage, so nothing in the file bounds them.
pub(crate) const MAX_EMPTY_ROWS: u64 = 1 << 32;

/// Deepest nesting of containers (sequences, maps, structs, enums,
/// options, newtypes) inside one blob value.
pub(crate) const MAX_BLOB_DEPTH: usize = 256;

/// Memory a blob value may decode to beyond [`BLOB_BYTES_FACTOR`] times its
/// encoded length, in bytes as bincode counts them: the size of every
/// decoded element plus the bytes of every string and byte buffer.
pub(crate) const BLOB_BASE_BUDGET: u64 = 16 << 20;

/// Decoded bytes allowed per encoded byte of a blob value (a 1-byte varint
/// decodes to at most a 16-byte integer; a 1-byte `None` to its `Option`).
pub(crate) const BLOB_BYTES_FACTOR: u64 = 32;

/// Deepest nesting of list groups in a column of an h5col table read
/// without its Rust type (`h5vec::arrow`): a table has no schema tree,
/// whose depth the schema reader caps at 64 levels, and a reader per level
/// must fit a 2 MiB thread stack.
#[cfg(feature = "arrow")]
pub(crate) const MAX_TABLE_LIST_DEPTH: usize = 64;

/// Largest chunk (rows per chunk times bytes per row) h5vec appends into.
/// Appends rewrite a partly filled last chunk whole, so the chunk size read
/// from an existing file sizes a buffer; HDF5 itself allows up to 4 GiB.
pub(crate) const MAX_APPEND_CHUNK_BYTES: u64 = 1 << 30;

/// Largest chunk of a filtered dataset h5vec reads, in bytes before the
/// filters (rows per chunk times bytes per row, as the chunk shape in the
/// file declares them). A filtered chunk is decoded whole, into a buffer
/// of that size, however few bytes the file stores for it: a file of a few
/// hundred bytes can declare chunks of 4 GiB (HDF5's own limit). Such a
/// dataset is refused before anything is allocated for it, on every read
/// path (h5vec's direct chunk reads and HDF5's own pipeline alike).
/// Unfiltered chunks are read into the caller's rows and need no buffer of
/// their own.
pub(crate) const MAX_FILTERED_CHUNK_BYTES: u64 = 1 << 30;

/// What a filtered dataset's chunks must be, for error messages.
pub(crate) const FILTERED_CHUNK_EXPECTED: &str =
    "chunks of at most 1073741824 bytes (1 GiB) in a filtered dataset (SPEC.md, section 7)";

/// The error for a filtered dataset whose chunks are `bytes` bytes, more
/// than [`MAX_FILTERED_CHUNK_BYTES`] (`shape`: the chunk's shape, in words).
pub(crate) fn oversized_chunk(path: impl At, bytes: u64, shape: impl std::fmt::Display) -> Error {
    Error::mismatch(
        path,
        FILTERED_CHUNK_EXPECTED,
        format!("chunks of {bytes} bytes ({shape})"),
    )
}

/// Makes `v` exactly `n` bytes long (bytes it held stay, new ones are
/// zeros), or returns an error naming `path` instead of aborting the
/// process when the memory is not there. `what` says what the buffer is for.
pub(crate) fn sized(v: &mut Vec<u8>, n: usize, what: &str, path: impl At) -> Result<()> {
    if n > v.len() {
        v.try_reserve_exact(n - v.len())
            .map_err(|_| Error::invalid(path, format!("cannot allocate {n} bytes for {what}")))?;
    }
    v.resize(n, 0);
    Ok(())
}

/// The bytes and the shape (in words) of one chunk of the dataset `did`
/// (creation property list `dcpl`) if it is filtered and its chunks are
/// larger than [`MAX_FILTERED_CHUNK_BYTES`]: each such chunk
/// would be decoded whole into a buffer of that size, which the file alone
/// declares (SPEC.md section 7). Reads the property list and the type only.
///
/// # Safety
/// The caller holds the HDF5 lock; `did` is a valid dataset id and `dcpl`
/// its creation property list.
pub(crate) unsafe fn oversized_filtered_chunk_in(
    did: hdf5_sys::h5i::hid_t,
    dcpl: hdf5_sys::h5i::hid_t,
) -> Option<(u64, String)> {
    // SAFETY: (whole block) valid ids under the lock (caller's contract);
    // `dims` has room for the 32 extents asked for; the type is owned by
    // an `Owned`.
    unsafe {
        if h5p::H5Pget_nfilters(dcpl) <= 0 {
            return None;
        }
        let mut dims = [0 as hsize_t; 32];
        let rank = h5p::H5Pget_chunk(dcpl, 32, dims.as_mut_ptr());
        if !(1..=32).contains(&rank) {
            return None;
        }
        let dims = &dims[..rank as usize];
        let ft = Owned::ok(h5d::H5Dget_type(did))?;
        let elem = h5t::H5Tget_size(ft.id()) as u64;
        let bytes = dims
            .iter()
            .try_fold(elem.max(1), |a, &d| a.checked_mul(d))
            .unwrap_or(u64::MAX);
        (bytes > MAX_FILTERED_CHUNK_BYTES)
            .then(|| (bytes, format!("chunk shape {dims:?}, {elem}-byte elements")))
    }
}

/// Rows times bytes per row below which [`check_stored`] trusts a count:
/// reading that much costs milliseconds even where nothing was written.
pub(crate) const UNCHECKED_CLAIM_BYTES: u64 = 16 << 20;

/// The decoded-memory budget of a blob value of `len` encoded bytes.
pub(crate) fn blob_budget(len: usize) -> u64 {
    (len as u64)
        .saturating_mul(BLOB_BYTES_FACTOR)
        .saturating_add(BLOB_BASE_BUDGET)
}

/// Refuses `rows` rows of a zero-sized `T` beyond [`MAX_EMPTY_ROWS`].
pub(crate) fn check_empty_rows<T>(rows: u64, path: impl At) -> Result<()> {
    if std::mem::size_of::<T>() == 0 {
        return check_rows_without_data(rows, std::any::type_name::<T>(), path);
    }
    Ok(())
}

/// Refuses `rows` rows of `what`, a type that stores nothing, beyond
/// [`MAX_EMPTY_ROWS`].
pub(crate) fn check_rows_without_data(rows: u64, what: &str, path: impl At) -> Result<()> {
    if rows > MAX_EMPTY_ROWS {
        return Err(Error::invalid(
            path,
            format!(
                "{rows} rows of `{what}`, which stores nothing: more than the {MAX_EMPTY_ROWS} \
                 rows h5vec produces for a type without data (SPEC.md, section 7)"
            ),
        ));
    }
    Ok(())
}

/// Grows `v` so it can hold `n` elements in all, or says it cannot
/// (instead of aborting the process when the allocation fails).
pub(crate) fn reserve<T>(v: &mut Vec<T>, n: u64, path: impl At) -> Result<()> {
    let fail = || {
        Error::invalid(
            path,
            format!(
                "cannot allocate memory for {n} values of {} bytes",
                std::mem::size_of::<T>()
            ),
        )
    };
    let n = usize::try_from(n).map_err(|_| fail())?;
    let more = n.saturating_sub(v.len());
    let before = v.capacity();
    v.try_reserve_exact(more).map_err(|_| fail())?;
    if v.capacity() != before {
        advise_huge_pages(v);
    }
    Ok(())
}

/// Smallest buffer worth backing with transparent huge pages.
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Asks Linux to back the unused capacity of a large buffer `v` with
/// transparent huge pages (where the system leaves that to programs,
/// `/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`): a load
/// writes every byte of its result once, and faulting it in 2 MiB pages
/// instead of 4 KiB ones spares about 500 page faults per MiB (at 1M rows,
/// page faults were the largest part of a load's time). Advice only:
/// nothing changes if the kernel says no, and the contents stay as they are.
pub(crate) fn advise_huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let spare = v.spare_capacity_mut();
        let bytes = std::mem::size_of_val(spare);
        if bytes < HUGE_PAGE_MIN_BYTES {
            return;
        }
        let start = spare.as_mut_ptr() as usize;
        let first = start.next_multiple_of(PAGE);
        let end = (start + bytes) / PAGE * PAGE;
        if end > first {
            // SAFETY: [first, end) is whole pages inside the allocation
            // `v` owns (its spare capacity); MADV_HUGEPAGE changes only how
            // the kernel backs those pages, never their contents, and the
            // call touches no Rust-visible memory.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Makes room in `v` for `more` further elements, doubling its capacity
/// (at most to `max` elements in all) like `push` would, but with an error
/// instead of an abort when the memory is not there.
pub(crate) fn grow<T>(v: &mut Vec<T>, more: u64, max: u64, path: impl At) -> Result<()> {
    if (v.capacity() - v.len()) as u64 >= more {
        return Ok(());
    }
    let len = v.len() as u64;
    let want = len.saturating_mul(2).min(max).max(len.saturating_add(more));
    reserve(v, want, path)
}

/// An upper bound on the leading-dimension rows of `ds` (of extent
/// `shape`) that the file stores: the whole extent for compact and
/// allocated contiguous storage, none for contiguous storage never written,
/// and for chunked storage the rows the allocated chunks can cover. Rows
/// past it read as fill values: data nobody wrote.
///
/// External and virtual storage are other rules' business (section 7):
/// they count as the extent here.
pub(crate) fn stored_rows(ds: &Dataset, shape: &[u64], path: impl At) -> Result<u64> {
    let extent = shape.first().copied().unwrap_or(1);
    // SAFETY: a valid dataset id; the property list is owned by an `Owned`
    // and valid while `stored_rows_in` reads it, under the lock.
    sync(|| unsafe {
        let dcpl = Owned::new(path, h5d::H5Dget_create_plist(ds.id()))?;
        stored_rows_in(ds, dcpl.id(), shape, extent, path)
    })
}

/// [`stored_rows`] with the dataset's creation property list.
///
/// # Safety
/// The caller holds the HDF5 lock and `dcpl` is a valid dataset creation
/// property list.
unsafe fn stored_rows_in(
    ds: &Dataset,
    dcpl: i64,
    shape: &[u64],
    extent: u64,
    path: impl At,
) -> Result<u64> {
    // SAFETY: (whole body) `ds` and `dcpl` are valid ids and the caller
    // holds the lock; `dims` has room for the 32 extents asked for, `n` is an
    // output value, and the file space is owned by an `Owned`.
    unsafe {
        match h5p::H5Pget_layout(dcpl) {
            H5D_layout_t::H5D_COMPACT => Ok(extent),
            H5D_layout_t::H5D_CONTIGUOUS => {
                if h5p::H5Pget_external_count(dcpl) > 0 || h5d::H5Dget_storage_size(ds.id()) > 0 {
                    Ok(extent)
                } else {
                    Ok(0)
                }
            }
            H5D_layout_t::H5D_CHUNKED => {
                let mut dims = [0 as hsize_t; 32];
                let rank = h5p::H5Pget_chunk(dcpl, 32, dims.as_mut_ptr());
                if rank < 1 || rank as usize != shape.len().max(1) {
                    return Ok(extent);
                }
                // Chunks per slab of `dims[0]` rows.
                let mut per_slab: u64 = 1;
                for (i, &d) in shape.iter().enumerate().skip(1) {
                    let c = dims[i].max(1);
                    per_slab = per_slab.saturating_mul(d.div_ceil(c));
                }
                if per_slab == 0 {
                    return Ok(extent);
                }
                let fs = Owned::new(path, h5d::H5Dget_space(ds.id()))?;
                let mut n: hsize_t = 0;
                check(path, h5d::H5Dget_num_chunks(ds.id(), fs.id(), &mut n))?;
                let slabs = n.div_ceil(per_slab);
                Ok(extent.min(slabs.saturating_mul(dims[0].max(1))))
            }
            _ => Ok(extent),
        }
    }
}

/// Checks that `ds` (of extent `shape`) stores the first `need` rows that
/// `count` (or an offset) says it holds. Rows without data (a zero-sized
/// trailing dimension) need no storage. `elem_size`: bytes per element.
///
/// Claims of at most [`UNCHECKED_CLAIM_BYTES`] pass without the check: they
/// cost little to read even as fill values, and the check walks the chunk
/// index, whose cost grows with the chunk count (and which a damaged index
/// can make HDF5 walk for very long: `tests/fuzz/KNOWN.md`).
pub(crate) fn check_stored(
    ds: &Dataset,
    need: u64,
    shape: &[u64],
    elem_size: usize,
    path: impl At,
) -> Result<()> {
    if need == 0 || shape.iter().skip(1).any(|&d| d == 0) {
        return Ok(());
    }
    let row_bytes = shape
        .iter()
        .skip(1)
        .fold(elem_size as u64, |a, &d| a.saturating_mul(d));
    if need.saturating_mul(row_bytes.max(1)) <= UNCHECKED_CLAIM_BYTES {
        return Ok(());
    }
    let held = stored_rows(ds, shape, path)?;
    if need > held {
        let extent = shape.first().copied().unwrap_or(1);
        return Err(Error::mismatch(
            path,
            format!("{need} stored rows (count and offsets say so)"),
            format!(
                "a dataset that holds at most {held} (extent {extent}; the rest is unwritten storage)"
            ),
        ));
    }
    Ok(())
}

/// Checks that a number dataset's type is a standard integer (every bit
/// used, none padding) or an IEEE float, so that HDF5's conversion to the
/// Rust type (and back, on append) keeps every value exactly. Other
/// classes pass (their own checks apply).
pub(crate) fn check_exact_number(ds: &Dataset, info: &TypeInfo, path: impl At) -> Result<()> {
    let dt = crate::raw::dataset_type(ds, path)?;
    // SAFETY: these only read a valid datatype and the predefined IEEE types.
    let ok = sync(|| unsafe {
        let t = dt.id();
        match info.class {
            H5T_class_t::H5T_INTEGER => {
                h5t::H5Tget_precision(t) == info.size * 8 && h5t::H5Tget_offset(t) == 0
            }
            H5T_class_t::H5T_FLOAT => {
                let std: &[i64] = match info.size {
                    2 => &[crate::raw::ieee_f16le()],
                    4 => &[*h5t::H5T_IEEE_F32LE, *h5t::H5T_IEEE_F32BE],
                    8 => &[*h5t::H5T_IEEE_F64LE, *h5t::H5T_IEEE_F64BE],
                    _ => &[],
                };
                std.iter().any(|&s| h5t::H5Tequal(t, s) > 0)
            }
            _ => true,
        }
    });
    if !ok {
        return Err(Error::mismatch(
            path,
            format!(
                "a standard {} (IEEE float, or an integer using all its bits)",
                info.describe()
            ),
            format!("a non-standard {} layout", info.describe()),
        ));
    }
    Ok(())
}

/// Whether a 1-byte column's type is exactly UInt8 (blob `bytes`, VLS
/// `heap`, list `CHARS`): a signed byte would be converted, and every byte
/// of 0x80 or more would read as 0.
pub(crate) fn is_uint8(t: &TypeInfo) -> bool {
    t.class == H5T_class_t::H5T_INTEGER && t.size == 1 && !t.signed
}

/// Refuses to append into `ds` when one chunk is larger than
/// [`MAX_APPEND_CHUNK_BYTES`] (a chunk length read from the file).
pub(crate) fn check_append_chunk(ds: &Dataset, path: &str) -> Result<()> {
    let Some(chunk) = ds.chunk() else {
        return Ok(());
    };
    let elem = ds.dtype().map(|t| t.size() as u64).unwrap_or(1);
    let bytes = chunk
        .iter()
        .try_fold(elem, |a, &c| a.checked_mul(c as u64))
        .unwrap_or(u64::MAX);
    if bytes > MAX_APPEND_CHUNK_BYTES {
        return Err(Error::mismatch(
            Place::new(path, ds.name()),
            format!("chunks of at most {MAX_APPEND_CHUNK_BYTES} bytes to append into"),
            format!("chunks of {bytes} bytes (chunk shape {chunk:?})"),
        ));
    }
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The VmFlags of the mapping of /proc/self/smaps that holds `addr`.
    fn vm_flags(addr: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = head.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = (a..b).contains(&addr);
                    continue;
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    return flags.trim().to_string();
                }
            }
        }
        panic!("no mapping holds {addr:#x}")
    }

    #[test]
    fn large_reservations_ask_for_huge_pages_and_keep_their_values() {
        let mut v: Vec<u64> = (0..1000).collect();
        super::reserve(&mut v, 2 << 20, "$").unwrap(); // 16 MiB
        let mid = v.spare_capacity_mut()[1 << 20].as_ptr() as usize;
        let flags = vm_flags(mid);
        assert!(flags.split(' ').any(|f| f == "hg"), "VmFlags: {flags}");
        assert_eq!(v, (0..1000).collect::<Vec<u64>>());
        // A small one is left alone (it may share a mapping with others).
        let mut small: Vec<u64> = Vec::new();
        super::reserve(&mut small, 1000, "$").unwrap();
        let flags = vm_flags(small.as_ptr() as usize);
        assert!(!flags.split(' ').any(|f| f == "hg"), "VmFlags: {flags}");
    }
}
