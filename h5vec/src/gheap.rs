//! A look at the global heap collections a variable-length string dataset
//! points to, before HDF5 parses them (SPEC.md section 7).
//!
//! HDF5 (2.0 and 2.2 at least) loops forever in
//! `H5HG__cache_heap_deserialize` on a collection whose free-space object
//! (index 0) has size 0, or whose object size makes its parse pointer wrap
//! around: `p = begin + need` never reaches the end of the collection. The
//! loop runs inside one HDF5 call that holds the library lock, so nothing
//! can bound it from outside. This module walks the same object headers
//! from the file's bytes first and refuses such a collection.
//!
//! It reads only what it can read without HDF5 touching the heap: the
//! 16-byte heap IDs of contiguous datasets and of chunks stored without a
//! filter, in files opened with the default (sec2) driver. Anything else
//! (compact or filtered storage, other drivers, bytes that do not look like
//! a collection) is left to HDF5 unchanged; only a collection HDF5 would
//! loop on is an error.

use std::collections::BTreeSet;

use hdf5::Dataset;

use crate::error::{Error, Result};
use crate::raw::sync;

/// Most distinct collections looked at per read.
const MAX_COLLECTIONS: usize = 1 << 16;
/// Collections up to this size are read whole; larger ones header by header.
const READ_WHOLE: u64 = 4 << 20;
/// Most bytes of heap IDs read per call (rows beyond are not looked at).
const MAX_ID_BYTES: u64 = 64 << 20;

fn align8(x: u64) -> Option<u64> {
    x.checked_add(7).map(|v| v & !7)
}

fn le(b: &[u8], at: usize, width: usize) -> u64 {
    let mut w = [0u8; 8];
    let n = width.min(8);
    if let Some(s) = b.get(at..at + n) {
        w[..n].copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

/// The open file's descriptor, if it uses the sec2 driver (the default).
#[cfg(unix)]
fn sec2_file(ds: &Dataset) -> Option<std::mem::ManuallyDrop<std::fs::File>> {
    use std::os::fd::FromRawFd;
    let file = ds.file().ok()?;
    let fapl = file.access_plist().ok()?;
    if !matches!(fapl.driver(), hdf5::plist::file_access::FileDriver::Sec2) {
        return None;
    }
    let fd = sync(|| {
        let mut handle: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: `handle` receives a pointer to the sec2 driver's `int` file
        // descriptor, valid while the file is open (it is: `file` lives).
        unsafe {
            if hdf5_sys::h5f::H5Fget_vfd_handle(file.id(), fapl.id(), &mut handle) < 0
                || handle.is_null()
            {
                None
            } else {
                Some(*(handle as *const std::ffi::c_int))
            }
        }
    })?;
    // SAFETY: the descriptor stays open while HDF5 has the file open; the
    // `ManuallyDrop` makes sure this `File` never closes it.
    Some(std::mem::ManuallyDrop::new(unsafe {
        std::fs::File::from_raw_fd(fd)
    }))
}

#[cfg(unix)]
fn read_at(f: &std::fs::File, at: u64, len: u64) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; usize::try_from(len).ok()?];
    f.read_exact_at(&mut buf, at).ok()?;
    Some(buf)
}

/// Checks the collections that rows `start..start + n` of the vlen string
/// dataset `ds` point to; `path` names the dataset in errors.
#[cfg(unix)]
pub(crate) fn check(ds: &Dataset, start: u64, n: u64, path: &str) -> Result<()> {
    let Some(f) = sec2_file(ds) else {
        return Ok(());
    };
    let Ok(file) = ds.file() else { return Ok(()) };
    let Ok(fcpl) = file.create_plist() else {
        return Ok(());
    };
    let sizes = fcpl.sizes();
    let (sa, ss) = (
        usize::from(sizes.sizeof_addr),
        usize::from(sizes.sizeof_size),
    );
    if !(1..=8).contains(&sa) || !(1..=8).contains(&ss) {
        return Ok(());
    }
    let eof = file.size();
    // A heap ID on disk: sequence length (4), collection address, index (4).
    let id = 8 + sa as u64;
    let n = n.min(MAX_ID_BYTES / id);
    let mut ids = Vec::new();
    match ds.layout() {
        hdf5::dataset::Layout::Contiguous => {
            let Some(off) = ds.offset() else {
                return Ok(());
            };
            let Some(at) = start.checked_mul(id).and_then(|b| b.checked_add(off)) else {
                return Ok(());
            };
            match read_at(&f, at, n * id) {
                Some(b) => ids = b,
                None => return Ok(()),
            }
        }
        hdf5::dataset::Layout::Chunked => {
            let Some(c) = ds.chunk().and_then(|c| c.first().copied()) else {
                return Ok(());
            };
            let (c, unfiltered) = (c as u64, ds.filters().is_empty());
            if c == 0 || ds.ndim() != 1 {
                return Ok(());
            }
            let mut buf = vec![0u8; usize::try_from(c * id).unwrap_or(0)];
            let last = start + n.max(1) - 1;
            for k in start / c..=last / c {
                let got = crate::raw::chunks::read_stored_chunk(ds, k * c, &mut buf);
                // Only chunks stored as they are (no filter ran on them).
                let Some((len, mask)) = got else { continue };
                if len != buf.len() || (!unfiltered && mask == 0) {
                    continue;
                }
                let lo = start.max(k * c) - k * c;
                let hi = (last + 1).min(k * c + c) - k * c;
                ids.extend_from_slice(&buf[(lo * id) as usize..(hi * id) as usize]);
            }
        }
        _ => return Ok(()),
    }
    let mut addrs = BTreeSet::new();
    for h in ids.chunks_exact(id as usize) {
        if le(h, 0, 4) > 0 {
            addrs.insert(le(h, 4, sa));
            if addrs.len() >= MAX_COLLECTIONS {
                break;
            }
        }
    }
    for addr in addrs {
        walk(&f, addr, ss as u64, eof, path)?;
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn check(_ds: &Dataset, _start: u64, _n: u64, _path: &str) -> Result<()> {
    Ok(())
}

/// Walks the collection at `addr` as `H5HG__cache_heap_deserialize` does.
#[cfg(unix)]
fn walk(f: &std::fs::File, addr: u64, ss: u64, eof: u64, path: &str) -> Result<()> {
    // Header: "GCOL", version 1, 3 reserved bytes, collection size.
    let Some(hdr) = align8(8 + ss) else {
        return Ok(());
    };
    let Some(head) = read_at(f, addr, hdr) else {
        return Ok(());
    };
    if &head[..4] != b"GCOL" || head[4] != 1 {
        return Ok(());
    }
    let size = le(&head, 8, ss as usize);
    if size < hdr || addr.checked_add(size).is_none_or(|end| end > eof) {
        return Ok(());
    }
    // Object header: index (2), references (2), reserved (4), size.
    let Some(objhdr) = align8(8 + ss) else {
        return Ok(());
    };
    let whole = if size <= READ_WHOLE {
        match read_at(f, addr, size) {
            Some(b) => Some(b),
            None => return Ok(()),
        }
    } else {
        None
    };
    let bad = |at: u64, why: String| {
        Err(Error::invalid(
            path,
            format!(
                "damaged global heap collection at byte {addr} of the file: the object at byte {} {why}",
                addr + at
            ),
        ))
    };
    let mut p = hdr;
    let mut steps = 0u64;
    while p < size {
        if p + objhdr > size {
            break;
        }
        steps += 1;
        if steps > size / objhdr + 2 {
            return bad(
                p,
                "is one of more objects than the collection can hold".into(),
            );
        }
        let o = match &whole {
            Some(b) => b[p as usize..(p + objhdr) as usize].to_vec(),
            None => match read_at(f, addr + p, objhdr) {
                Some(b) => b,
                None => return Ok(()),
            },
        };
        let idx = le(&o, 0, 2);
        let osize = le(&o, 8, ss as usize);
        let need = if idx > 0 {
            align8(osize).and_then(|a| a.checked_add(objhdr))
        } else {
            Some(osize)
        };
        match need {
            Some(0) => {
                return bad(
                    p,
                    "is free space of size 0 (HDF5 would loop on it forever)".into(),
                )
            }
            Some(nd) if nd <= size - p => p += nd,
            _ => {
                return bad(
                    p,
                    format!("claims {osize} bytes, past the collection's end"),
                )
            }
        }
    }
    Ok(())
}
