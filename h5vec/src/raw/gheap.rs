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
//! 16-byte heap IDs of contiguous datasets and of chunks (compressed chunks
//! go through HDF5's own filters in a scratch in-memory file, as opaque
//! bytes), and those of variable-length string attributes whose message it
//! finds in the object header ([`check_attr`]), in files opened with the
//! default (sec2) driver. Anything else (compact storage, attributes in
//! dense storage, other drivers, bytes that do not look like a collection)
//! is left to HDF5 unchanged; only a collection HDF5 would loop on is an
//! error.

use std::collections::BTreeSet;

use hdf5::Dataset;

use super::ffi::sync;
use crate::error::{At, Error, Result};

/// Most distinct collections looked at per read.
const MAX_COLLECTIONS: usize = 1 << 16;
/// Collections up to this size are read whole; larger ones header by header.
const READ_WHOLE: u64 = 4 << 20;
/// Most bytes of heap IDs read per call (rows beyond are not looked at).
const MAX_ID_BYTES: u64 = 64 << 20;
/// Most distinct chunk filter masks unfiltered per call (chunks with
/// another mask are not looked at).
const MAX_MASKS: usize = 8;

fn align8(x: u64) -> Option<u64> {
    x.checked_add(7).map(|v| v & !7)
}

pub(crate) fn le(b: &[u8], at: usize, width: usize) -> u64 {
    let mut w = [0u8; 8];
    let n = width.min(8);
    if let Some(s) = b.get(at..at + n) {
        w[..n].copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

/// The open file's descriptor, if it uses the sec2 driver (the default).
#[cfg(unix)]
pub(crate) fn sec2_file(file: &hdf5::File) -> Option<std::mem::ManuallyDrop<std::fs::File>> {
    use std::os::fd::FromRawFd;
    // Reading an MPI-IO file's access list back is collective.
    #[cfg(feature = "mpi")]
    if super::mpifiles::is_mpio(file.id()) {
        return None;
    }
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
pub(crate) fn read_at(f: &std::fs::File, at: u64, len: u64) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; usize::try_from(len).ok()?];
    f.read_exact_at(&mut buf, at).ok()?;
    Some(buf)
}

/// What the heap walks need of a file: its bytes (through the sec2
/// driver's descriptor), the sizes of addresses and lengths, the user
/// block before the superblock (addresses are relative to its end) and
/// the file's size.
#[cfg(unix)]
pub(crate) struct FileView {
    pub(crate) f: std::mem::ManuallyDrop<std::fs::File>,
    pub(crate) sa: usize,
    pub(crate) ss: usize,
    pub(crate) base: u64,
    pub(crate) eof: u64,
}

/// What [`FileView::of`] learnt of a file, by the serial number HDF5
/// gives each file driver it opens (`H5Fget_fileno`: one counter for the
/// process, never reused while the library lives). A view of a file whose
/// driver is still open (any live handle's) can take the driver's
/// descriptor and sizes from here instead of copying the file's access and
/// creation property lists again (several times per attribute read).
#[cfg(unix)]
#[derive(Clone, Copy)]
struct Known {
    fileno: std::ffi::c_ulong,
    /// The sec2 descriptor, `None` for another driver or implausible sizes.
    view: Option<(std::ffi::c_int, usize, usize, u64)>,
}

/// The last files [`FileView::of`] looked at, newest last.
#[cfg(unix)]
static KNOWN: std::sync::Mutex<Vec<Known>> = std::sync::Mutex::new(Vec::new());
/// [`KNOWN`] in the child of an isolated check (`crate::forked::fork_safe`):
/// a thread of the parent may have held `KNOWN` at the fork.
#[cfg(unix)]
static CHILD_KNOWN: std::sync::Mutex<Vec<Known>> = std::sync::Mutex::new(Vec::new());

/// [`KNOWN`], or its twin in the child of an isolated check.
#[cfg(unix)]
fn known_files() -> std::sync::MutexGuard<'static, Vec<Known>> {
    crate::forked::fork_safe(&KNOWN, &CHILD_KNOWN)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}
/// Files remembered in [`KNOWN`].
#[cfg(unix)]
const KNOWN_FILES: usize = 16;

#[cfg(unix)]
fn fileno(file: &hdf5::File) -> Option<std::ffi::c_ulong> {
    sync(|| {
        // SAFETY: `file` is a live file identifier, under the lock.
        unsafe { super::compat::fileno(file.id()) }.map(|n| n as std::ffi::c_ulong)
    })
}

#[cfg(unix)]
impl FileView {
    /// `None` when the file's bytes cannot be read directly or its sizes
    /// are not plausible: the caller then leaves the read to HDF5.
    pub(crate) fn of(file: &hdf5::File) -> Option<FileView> {
        use std::os::fd::FromRawFd;
        let no = fileno(file);
        let known = no.and_then(|no| known_files().iter().rev().find(|k| k.fileno == no).copied());
        let known = match known {
            Some(k) => k,
            None => {
                let k = Known {
                    fileno: no.unwrap_or(0),
                    view: Self::look(file),
                };
                if no.is_some() {
                    let mut list = known_files();
                    if list.len() >= KNOWN_FILES {
                        list.remove(0);
                    }
                    list.push(k);
                }
                k
            }
        };
        let (fd, sa, ss, base) = known.view?;
        Some(FileView {
            // SAFETY: `fd` is the descriptor of the sec2 driver whose serial
            // number `file` has: that driver is open while `file` lives
            // (serial numbers are never reused), so the descriptor is too;
            // the `ManuallyDrop` makes sure this `File` never closes it.
            f: std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) }),
            sa,
            ss,
            base,
            eof: file.size(),
        })
    }

    /// The sec2 descriptor, the sizes of addresses and lengths and the user
    /// block of `file`, from its property lists.
    fn look(file: &hdf5::File) -> Option<(std::ffi::c_int, usize, usize, u64)> {
        use std::os::fd::AsRawFd;
        let f = sec2_file(file)?;
        let fcpl = file.create_plist().ok()?;
        let sizes = fcpl.sizes();
        let (sa, ss) = (
            usize::from(sizes.sizeof_addr),
            usize::from(sizes.sizeof_size),
        );
        if !(1..=8).contains(&sa) || !(1..=8).contains(&ss) {
            return None;
        }
        Some((f.as_raw_fd(), sa, ss, fcpl.userblock()))
    }
}

/// Checks the collections that rows `start..start + n` of the vlen string
/// dataset `ds` point to; `path` names the dataset in errors.
#[cfg(unix)]
pub(crate) fn check(ds: &Dataset, start: u64, n: u64, path: impl At) -> Result<()> {
    let Ok(file) = ds.file() else { return Ok(()) };
    let Some(FileView {
        f,
        sa,
        ss,
        base,
        eof,
    }) = FileView::of(&file)
    else {
        return Ok(());
    };
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
            let raw_len = usize::try_from(c * id).unwrap_or(0);
            let last = start + n.max(1) - 1;
            // One scratch dataset per filter mask seen (a few at most).
            let mut scratch: Vec<(u32, Option<Unfilter>)> = Vec::new();
            for k in start / c..=last / c {
                let Some((_, size)) = super::chunks::stored_chunk(ds, k * c) else {
                    continue;
                };
                // Stored sizes are bounded by the raw size (plus what a
                // filter may add to incompressible data).
                if size > (raw_len as u64).saturating_mul(2).saturating_add(1 << 16) {
                    continue;
                }
                // A chunk larger than the file is damaged (HDF5's own read
                // fails on it); below that, the file bounds the buffer, and
                // an allocation that fails skips the check, not the process.
                let mut buf = Vec::new();
                if size > eof || buf.try_reserve_exact(size as usize).is_err() {
                    continue;
                }
                buf.resize(size as usize, 0);
                let got = super::chunks::read_stored_chunk(ds, k * c, &mut buf);
                let Some((len, mask)) = got else { continue };
                buf.truncate(len);
                let plain = if unfiltered || mask_skips_all(ds, mask) {
                    (len == raw_len).then_some(buf)
                } else {
                    // HDF5 runs the dataset's own filters on the stored
                    // bytes (heap IDs as opaque bytes: no heap is read),
                    // into a buffer of the whole chunk: bounded as every
                    // filtered chunk (SPEC.md section 7; `guard` refuses
                    // larger ones when the container is opened).
                    if raw_len as u64 > crate::limits::MAX_FILTERED_CHUNK_BYTES {
                        continue;
                    }
                    let at = match scratch.iter().position(|(m, _)| *m == mask) {
                        Some(at) => at,
                        None if scratch.len() < MAX_MASKS => {
                            scratch.push((mask, Unfilter::new(ds, c, id, mask)));
                            scratch.len() - 1
                        }
                        None => continue,
                    };
                    scratch[at]
                        .1
                        .as_ref()
                        .and_then(|u| u.run(&buf))
                        .filter(|b| b.len() == raw_len)
                };
                let Some(plain) = plain else { continue };
                let lo = start.max(k * c) - k * c;
                let hi = (last + 1).min(k * c + c) - k * c;
                ids.extend_from_slice(&plain[(lo * id) as usize..(hi * id) as usize]);
            }
        }
        _ => return Ok(()),
    }
    walk_ids(&f, &ids, sa, ss, base, eof, path)
}

/// Whether chunk filter `mask` says every filter of `ds` was skipped.
#[cfg(unix)]
fn mask_skips_all(ds: &Dataset, mask: u32) -> bool {
    let n = ds.filters().len().min(32);
    n > 0 && (0..n).all(|i| mask & (1 << i) != 0)
}

/// A one-chunk dataset in a scratch in-memory file with the filters of
/// `ds` that a chunk's filter mask says ran, and an opaque element type of
/// one heap ID: a filtered chunk written there with `H5Dwrite_chunk` reads
/// back through HDF5's own filter pipeline. The scratch dataset leaves out
/// the skipped filters rather than passing the mask to `H5Dwrite_chunk`:
/// h5py's (optional) shuffle is skipped on every chunk of a
/// variable-length string dataset, and HDF5's read of the scratch chunk
/// ran the whole pipeline whatever mask the direct write gave, so the heap
/// IDs came out as other bytes and no collection was checked
/// (`tests/gheap.rs`).
#[cfg(unix)]
struct Unfilter {
    _file: hdf5::File,
    ds: super::ffi::Owned,
    ty: super::ffi::Owned,
}

#[cfg(unix)]
impl Unfilter {
    fn new(src: &Dataset, rows: u64, id: u64, mask: u32) -> Option<Unfilter> {
        use hdf5_sys::{h5d, h5p, h5s, h5t};
        use std::sync::atomic::{AtomicU64, Ordering};
        static SCRATCH: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "h5vec-gheap-{}-{}.h5",
            std::process::id(),
            SCRATCH.fetch_add(1, Ordering::Relaxed)
        );
        let file = hdf5::File::with_options()
            .with_fapl(|p| p.core_filebacked(false))
            .create(&name)
            .ok()?;
        let src_dcpl = src.create_plist().ok()?;
        sync(|| {
            // SAFETY: every id below is fresh and owned (closed on drop); the
            // filter parameters are read into buffers of the sizes passed.
            unsafe {
                let ty = super::ffi::Owned::ok(h5t::H5Tcreate(h5t::H5T_OPAQUE, id as usize))?;
                let dcpl = super::ffi::Owned::ok(h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_CREATE))?;
                let dims = [rows];
                if h5p::H5Pset_chunk(dcpl.id(), 1, dims.as_ptr()) < 0 {
                    return None;
                }
                let nf = h5p::H5Pget_nfilters(src_dcpl.id());
                if !(0..=32).contains(&nf) {
                    return None;
                }
                for i in 0..nf as u32 {
                    let mut flags = 0u32;
                    let mut cd = [0u32; 32];
                    let mut ncd = cd.len();
                    let mut fname = [0 as std::ffi::c_char; 64];
                    let mut config = 0u32;
                    let f = h5p::H5Pget_filter2(
                        src_dcpl.id(),
                        i,
                        &mut flags,
                        &mut ncd,
                        cd.as_mut_ptr(),
                        fname.len(),
                        fname.as_mut_ptr(),
                        &mut config,
                    );
                    if f < 0 {
                        return None;
                    }
                    // Filter `i` skipped on this chunk: not in the scratch pipeline.
                    if mask & (1 << i) != 0 {
                        continue;
                    }
                    if h5p::H5Pset_filter(dcpl.id(), f, flags, ncd.min(32), cd.as_ptr()) < 0 {
                        return None;
                    }
                }
                let space = super::ffi::Owned::ok(h5s::H5Screate_simple(
                    1,
                    dims.as_ptr(),
                    std::ptr::null(),
                ))?;
                let ds = super::ffi::Owned::ok(h5d::H5Dcreate2(
                    file.id(),
                    c"c".as_ptr(),
                    ty.id(),
                    space.id(),
                    h5p::H5P_DEFAULT,
                    dcpl.id(),
                    h5p::H5P_DEFAULT,
                ))?;
                Some(Unfilter {
                    _file: file,
                    ds,
                    ty,
                })
            }
        })
    }

    /// The chunk's unfiltered bytes, or `None` if a filter fails on them.
    fn run(&self, stored: &[u8]) -> Option<Vec<u8>> {
        use hdf5_sys::{h5d, h5p, h5s};
        sync(|| {
            // SAFETY: `stored` has the length passed; the read fills `out`,
            // which holds the dataset's one chunk (its whole extent).
            unsafe {
                let off = [0u64];
                let w = h5d::H5Dwrite_chunk(
                    self.ds.id(),
                    h5p::H5P_DEFAULT,
                    0,
                    off.as_ptr(),
                    stored.len(),
                    stored.as_ptr().cast(),
                );
                if w < 0 {
                    return None;
                }
                let space = super::ffi::Owned::ok(h5d::H5Dget_space(self.ds.id()))?;
                let n = h5s::H5Sget_simple_extent_npoints(space.id());
                let size = hdf5_sys::h5t::H5Tget_size(self.ty.id());
                let mut out = vec![0u8; usize::try_from(n).ok()?.checked_mul(size)?];
                let r = h5d::H5Dread(
                    self.ds.id(),
                    self.ty.id(),
                    h5s::H5S_ALL,
                    h5s::H5S_ALL,
                    h5p::H5P_DEFAULT,
                    out.as_mut_ptr().cast(),
                );
                (r >= 0).then_some(out)
            }
        })
    }
}

#[cfg(not(unix))]
pub(crate) fn check(_ds: &Dataset, _start: u64, _n: u64, _path: impl At) -> Result<()> {
    Ok(())
}

/// Most object header chunks looked at per attribute.
const MAX_HEADER_CHUNKS: usize = 64;
/// Object header chunks larger than this are not looked at.
const MAX_HEADER_CHUNK: u64 = 1 << 20;
/// Object header message types: attribute, continuation.
const ATTRIBUTE_MSG: u64 = 0x000C;
const CONTINUATION_MSG: u64 = 0x0010;

/// Checks the collections that variable-length string attribute `name` of
/// `obj` points to, before HDF5 reads it (`H5Aread` loops on a damaged
/// collection as `H5Dread` does); `path` names the attribute in errors.
///
/// The attribute message is found in `obj`'s object header, read from the
/// file's bytes: header versions 1 and 2, continuation chunks followed.
/// Attributes in dense storage, shared datatypes or dataspaces, other
/// drivers and anything that does not parse are left to HDF5.
#[cfg(unix)]
pub(crate) fn check_attr(obj: &hdf5::Location, name: &str, path: impl At) -> Result<()> {
    let Ok(file) = obj.file() else { return Ok(()) };
    let Some(view) = FileView::of(&file) else {
        return Ok(());
    };
    let (sa, ss, base, eof) = (view.sa, view.ss, view.base, view.eof);
    let Some(header) = header_addr(obj, sa).and_then(|a| a.checked_add(base)) else {
        return Ok(());
    };
    let Some(data) = attr_message_data(&view, header, name.as_bytes()) else {
        return Ok(());
    };
    walk_ids(&view.f, &data, sa, ss, base, eof, path)
}

/// Walks each global heap collection the heap IDs `ids` name (4-byte
/// length, `sa`-byte collection address, 4-byte index; IDs of empty values
/// skipped), once each and at most [`MAX_COLLECTIONS`]. Addresses are
/// relative to the superblock, after any user block (`base`).
#[cfg(unix)]
fn walk_ids(
    f: &std::fs::File,
    ids: &[u8],
    sa: usize,
    ss: usize,
    base: u64,
    eof: u64,
    path: impl At,
) -> Result<()> {
    let mut addrs = BTreeSet::new();
    for h in ids.chunks_exact(8 + sa) {
        if le(h, 0, 4) > 0 {
            if let Some(a) = le(h, 4, sa).checked_add(base).filter(|&a| a <= eof) {
                addrs.insert(a);
            }
            if addrs.len() >= MAX_COLLECTIONS {
                break;
            }
        }
    }
    for addr in addrs {
        walk(f, addr, ss as u64, eof, path)?;
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn check_attr(_obj: &hdf5::Location, _name: &str, _path: impl At) -> Result<()> {
    Ok(())
}

/// The file address (relative to the base address) of `obj`'s object
/// header: a native token holds it in its first `sa` bytes.
#[cfg(unix)]
fn header_addr(obj: &hdf5::Location, sa: usize) -> Option<u64> {
    use super::compat::{obj_token, object_info, ObjInfo};
    let token = sync(|| {
        // SAFETY: a valid, open object id; `info` is plain data HDF5 fills.
        unsafe {
            let mut info: ObjInfo = std::mem::zeroed();
            (object_info(obj.id(), &mut info, hdf5_sys::h5o::H5O_INFO_BASIC) >= 0)
                .then(|| obj_token(&info))
        }
    })?;
    Some(le(&token, 0, sa))
}

/// The bytes of `b` from `at`, at most `n` (fewer at its end).
fn part(b: &[u8], at: usize, n: usize) -> &[u8] {
    let from = at.min(b.len());
    &b[from..from.saturating_add(n).min(b.len())]
}

/// The data bytes of the attribute message named `want` with a
/// variable-length string type in the object header at `addr` (absolute),
/// or `None` if there is none or the header does not parse.
#[cfg(unix)]
fn attr_message_data(view: &FileView, addr: u64, want: &[u8]) -> Option<Vec<u8>> {
    header_messages(view, addr, |mtype, _flags, body| {
        if mtype == ATTRIBUTE_MSG {
            vlen_string_attr_data(body, want).map(<[u8]>::to_vec)
        } else {
            None
        }
    })
}

/// Bytes read at once from the start of an object header: its first chunk
/// when it is this small (most are), so that one read covers it.
#[cfg(unix)]
const HEADER_PREFIX: u64 = 512;

/// Calls `visit(type, flags, body)` for each message of the object header
/// at `addr` (absolute), read from the file's bytes: header versions 1 and
/// 2, continuation chunks followed (at most [`MAX_HEADER_CHUNKS`] chunks of
/// at most [`MAX_HEADER_CHUNK`] bytes), until `visit` returns a value,
/// which this returns. The body is the message's bytes as stored (a
/// shared message, flag 0x02, is a reference to the message, not the
/// message). `None` when no call returned a value or the header does not
/// parse: the caller then leaves the object to HDF5. Shared by the global
/// heap checks ([`check_attr`]) and the guard's pre-checks
/// (`guard::precheck`).
#[cfg(unix)]
pub(crate) fn header_messages<T>(
    view: &FileView,
    addr: u64,
    mut visit: impl FnMut(u64, u8, &[u8]) -> Option<T>,
) -> Option<T> {
    let (f, sa, ss, base) = (&*view.f, view.sa, view.ss, view.base);
    let avail = view.eof.checked_sub(addr)?;
    let prefix = read_at(f, addr, avail.min(HEADER_PREFIX))?;
    if prefix.len() < 16 {
        return None;
    }
    // Chunks to read: (address, size, bytes to skip at its start).
    let mut chunks = std::collections::VecDeque::new();
    let (mhdr, v2) = if &prefix[..4] == b"OHDR" {
        if prefix[4] != 2 {
            return None;
        }
        let flags = prefix[5];
        // Signature, version, flags; times; attribute phase change values.
        let p = 6 + if flags & 0x20 != 0 { 16 } else { 0 } + if flags & 0x10 != 0 { 4 } else { 0 };
        let width = 1usize << (flags & 3);
        let first = addr.checked_add((p + width) as u64)?;
        chunks.push_back((first, le(&prefix, p, width), 0u64));
        // Type (1), size (2), flags (1), creation order (2) if tracked.
        (if flags & 0x04 != 0 { 6 } else { 4 }, true)
    } else if prefix[0] == 1 {
        chunks.push_back((addr.checked_add(16)?, le(&prefix, 8, 4), 0));
        // Type (2), size (2), flags (1), reserved (3).
        (8, false)
    } else {
        return None;
    };
    let mut seen = 0;
    while let Some((at, size, skip)) = chunks.pop_front() {
        seen += 1;
        if seen > MAX_HEADER_CHUNKS {
            break;
        }
        if size > MAX_HEADER_CHUNK || size < skip {
            continue;
        }
        // The first chunk usually lies inside the prefix already read.
        let inside = at
            .checked_sub(addr)
            .and_then(|o| Some((o, o.checked_add(size)?)))
            .filter(|&(_, end)| end <= prefix.len() as u64);
        let owned;
        let chunk: &[u8] = match inside {
            Some((o, end)) => &prefix[o as usize..end as usize],
            None => match read_at(f, at, size) {
                Some(b) => {
                    owned = b;
                    &owned
                }
                None => continue,
            },
        };
        let mut b = &chunk[skip as usize..];
        if v2 {
            // The chunk's checksum.
            b = &b[..b.len().saturating_sub(4)];
        }
        let mut off = 0usize;
        while off + mhdr <= b.len() {
            let (mtype, msize, mflags) = if v2 {
                (u64::from(b[off]), le(b, off + 1, 2) as usize, b[off + 3])
            } else {
                (le(b, off, 2), le(b, off + 2, 2) as usize, b[off + 4])
            };
            let body = part(b, off + mhdr, msize);
            off += mhdr + msize;
            if mtype == CONTINUATION_MSG && body.len() >= sa + ss {
                let Some(caddr) = le(body, 0, sa).checked_add(base) else {
                    continue;
                };
                // Version 2 continuation chunks start with "OCHK".
                chunks.push_back((caddr, le(body, sa, ss), if v2 { 4 } else { 0 }));
            } else if let Some(t) = visit(mtype, mflags, body) {
                return Some(t);
            }
        }
    }
    None
}

/// The data bytes of attribute message `m` if it is the attribute named
/// `want` with a variable-length string type.
fn vlen_string_attr_data<'a>(m: &'a [u8], want: &[u8]) -> Option<&'a [u8]> {
    if m.len() < 8 {
        return None;
    }
    let version = m[0];
    if !(1..=3).contains(&version) || (version > 1 && m[1] & 0x03 != 0) {
        // Unknown, or a shared datatype or dataspace.
        return None;
    }
    let (nsize, tsize, ssize) = (
        le(m, 2, 2) as usize,
        le(m, 4, 2) as usize,
        le(m, 6, 2) as usize,
    );
    let pad = |x: usize| if version == 1 { (x + 7) & !7 } else { x };
    let mut p = if version == 3 { 9 } else { 8 };
    let name = part(m, p, nsize);
    let name = name.split(|&c| c == 0).next().unwrap_or(name);
    if name != want {
        return None;
    }
    p += pad(nsize);
    let dt = part(m, p, tsize);
    // Class 9 (variable-length), type 1 (string).
    if dt.len() < 8 || dt[0] & 0x0F != 9 || dt[1] & 0x0F != 1 {
        return None;
    }
    p += pad(tsize) + pad(ssize);
    Some(part(m, p, m.len()))
}

/// Walks the collection at `addr` as `H5HG__cache_heap_deserialize` does.
#[cfg(unix)]
fn walk(f: &std::fs::File, addr: u64, ss: u64, eof: u64, path: impl At) -> Result<()> {
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
