//! Bounds on the work and memory a file can make h5vec spend (SPEC.md,
//! section 7): every length read from a file is checked against what the
//! file really stores, or against a documented cap, before anything is
//! allocated or looped over.
//!
//! The caps and the errors that refuse a file live here; what the file
//! holds is asked of HDF5 in `crate::raw` (`raw/stored.rs`), which uses
//! these caps in turn: this module imports nothing of h5vec but `error`.

use hdf5::Dataset;

use crate::error::{At, Error, Place, Result};

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

/// The bytes and the shape (in words) of one chunk of a filtered dataset
/// (chunk shape `dims`, elements of `elem` bytes) if they are more than
/// [`MAX_FILTERED_CHUNK_BYTES`]: each such chunk would be decoded whole
/// into a buffer of that size, which the file alone declares (SPEC.md
/// section 7). `raw::filtered_chunk` reads the shape and size.
pub(crate) fn oversized_filtered_chunk(dims: &[u64], elem: u64) -> Option<(u64, String)> {
    let bytes = dims
        .iter()
        .try_fold(elem.max(1), |a, &d| a.checked_mul(d))
        .unwrap_or(u64::MAX);
    (bytes > MAX_FILTERED_CHUNK_BYTES)
        .then(|| (bytes, format!("chunk shape {dims:?}, {elem}-byte elements")))
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

/// Checks that a dataset (of extent `shape`) stores the first `need` rows
/// that `count` (or an offset) says it holds: `held` says how many it
/// stores at most (`raw::stored_rows`), asked only when the check runs.
/// Rows without data (a zero-sized trailing dimension) need no storage.
/// `elem_size`: bytes per element.
///
/// Claims of at most [`UNCHECKED_CLAIM_BYTES`] pass without the check: they
/// cost little to read even as fill values, and the check walks the chunk
/// index, whose cost grows with the chunk count (and which a damaged index
/// can make HDF5 walk for very long: `tests/fuzz/KNOWN.md`).
pub(crate) fn check_stored(
    need: u64,
    shape: &[u64],
    elem_size: usize,
    path: impl At,
    held: impl FnOnce() -> Result<u64>,
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
    let held = held()?;
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

/// The error for a number dataset whose type is not a standard integer
/// (every bit used, none padding) or an IEEE float (`raw::is_standard_number`
/// says which are), so that HDF5's conversion to the Rust type (and back,
/// on append) would not keep every value exactly. `what`: the type, in words.
pub(crate) fn inexact_number(path: impl At, what: &str) -> Error {
    Error::mismatch(
        path,
        format!("a standard {what} (IEEE float, or an integer using all its bits)"),
        format!("a non-standard {what} layout"),
    )
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
