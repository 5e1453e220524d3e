//! Files and groups with the properties h5vec's crash protocol relies on.

use std::ffi::CString;
use std::path::Path;

use hdf5::file::{FileAccess, FileCreate, FileSpaceStrategy, LibraryVersion};
use hdf5::Group;
use hdf5_sys::h5f;

use crate::error::{Context, Error, Place, Result};
use crate::raw::{self, LinkStorage};

/// Links the object header of a group made by [`create_file`] (its root
/// group) or [`create_group`] has room for from the start.
pub(crate) const PREALLOCATED_LINKS: u32 = 64;

/// Links such a group keeps in its object header (compact storage), beyond
/// [`PREALLOCATED_LINKS`] in header continuation blocks, before it switches
/// to a link index (dense storage).
///
/// Not more: each link added rewrites a header whose size grows with the
/// links, and HDF5's switch to a link index costs much more than linearly
/// (measured: 2 ms at 256 links, 0.4 s at 512, 10.5 s at 1,024, for one
/// save; `cargo run --release -p h5vec-bench --bin many_saves`).
pub(crate) const COMPACT_LINKS: u32 = 256;

/// The link storage of a group made by [`create_file`] (its root group) or
/// [`create_group`]: compact up to [`COMPACT_LINKS`], a header with room for
/// [`PREALLOCATED_LINKS`] links of 16-byte names.
const LINKS: LinkStorage = LinkStorage {
    compact: COMPACT_LINKS,
    preallocated: PREALLOCATED_LINKS,
};

/// Creates (or truncates) the HDF5 file `path` with the properties that make
/// saves and appends crash-safe (SPEC.md, section 8):
///
/// - file space is managed by aggregators only: space HDF5 frees (the old
///   copy of a compressed chunk an append moves, a replaced vector) is
///   never handed out again. With HDF5's default strategy, freed space is
///   reused at once, while the file on disk may still point at it until the
///   next flush; h5vec works around that in such files too (flushes around
///   a moving rewrite), so this mostly saves those flushes. Files created
///   this way do not shrink when vectors are replaced (`h5repack` reclaims
///   the space);
/// - the root group keeps its links in its object header (see
///   [`create_group`]), so linking a saved vector into it is a single write.
///   This is what a default file cannot offer: once a group of HDF5's
///   default settings holds more than 8 links, linking rewrites several
///   blocks of its link index, and a kill between them leaves the group
///   unreadable;
/// - the superblock is version 2 (objects in the HDF5 1.8 format or later):
///   version 3 superblocks carry a "file is open for writing" flag that a
///   killed writer leaves set, and HDF5 then refuses to open the file
///   (read-only too) until `h5clear -s` clears it.
///
/// Any HDF5 1.10 or later reader (h5py, HDF5.jl, C) reads these files.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("safe.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u32, 2, 3])?;
/// # Ok(()) }
/// ```
pub fn create_file(path: impl AsRef<Path>) -> Result<hdf5::File> {
    create_with(path.as_ref(), LibraryVersion::V18)
}

/// [`create_file`] for live writing (SPEC.md section 8, "Live readers"):
/// the same properties, but objects in the HDF5 1.10 format or later and a
/// version 3 superblock, which HDF5's single-writer/multiple-reader (SWMR)
/// mode needs. Stream into it with [`crate::VectorWriter::create_live`]
/// while other processes read it through [`open_file_live`] (or h5py's
/// `h5py.File(path, "r", libver="latest", swmr=True)`).
///
/// Any HDF5 1.10 or later reader reads these files. A writer killed while
/// the file is open leaves the superblock's "open for writing" flags set:
/// [`open_file_live`] still reads the file, and [`open_file_rw`] clears
/// them when no live writer has the file open.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file_live(dir.path().join("log.h5"))?;
/// let mut w = h5vec::VectorWriter::<u64>::create_live(&file, "ticks", &Default::default())?;
/// w.extend(&[1, 2, 3])?;
/// w.flush()?; // committed: readers of the file see 3 rows
/// assert_eq!(w.finish()?, 3);
/// # Ok(()) }
/// ```
pub fn create_file_live(path: impl AsRef<Path>) -> Result<hdf5::File> {
    create_with(path.as_ref(), LibraryVersion::V110)
}

fn create_with(path: &Path, low: LibraryVersion) -> Result<hdf5::File> {
    let file = create_with_access(path, low, |_, _| Ok(()))?;
    raw::close_on_exec(&file);
    Ok(file)
}

/// Creates `path` with h5vec's file properties (SPEC.md section 8): the
/// library version bounds from `low`, free space kept by aggregators only,
/// the root's link storage. `access` adds to the access property list
/// (`h5vec::mpi`: the MPI-IO driver).
pub(crate) fn create_with_access(
    path: &Path,
    low: LibraryVersion,
    access: impl FnOnce(&FileAccess, &Place) -> Result<()>,
) -> Result<hdf5::File> {
    let at = &Place::new("$", path.display().to_string());
    let name = c_path(path, at)?;
    let fapl: FileAccess = FileAccess::build()
        .libver_bounds(low, LibraryVersion::latest())
        .finish()
        .at(at)?;
    access(&fapl, at)?;
    // hdf5-metno's name for H5F_FSPACE_STRATEGY_AGGR (aggregators only).
    let fcpl: FileCreate = FileCreate::build()
        .file_space_strategy(FileSpaceStrategy::PageAggregation)
        .finish()
        .at(at)?;
    raw::create_file(&name, &fcpl, &fapl, LINKS, at).inspect(read_only::forget_freed)
}

/// What [`open_file_rw`] does to a file it opened (`h5vec::mpi`'s opens).
#[cfg(feature = "mpi")]
pub(crate) fn opened_rw(file: &hdf5::File) {
    read_only::forget_freed(file);
}

/// A new file in memory (HDF5's core driver, never written to disk),
/// under a name of its own (HDF5 knows open files by name, even without a
/// backing store): `h5vec::mpi` encodes a rank's rows in one.
#[cfg(any(feature = "mpi", test))]
pub(crate) fn memory_file() -> Result<hdf5::File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("h5vec-memory-{}-{n}.h5", std::process::id());
    hdf5::File::with_options()
        .with_fapl(|p| p.core_filebacked(false))
        .create(&name)
        .at("$")
}

/// Whether `group`'s file was opened with the MPI-IO driver (by
/// `h5vec::mpi`).
#[cfg(feature = "mpi")]
pub(crate) fn is_mpio(group: &Group) -> bool {
    raw::mpifiles::is_mpio(group.id())
}

/// `path` for HDF5's C API: UTF-8 without NUL.
pub(crate) fn c_path(path: &Path, at: &Place) -> Result<CString> {
    path.to_str()
        .and_then(|p| CString::new(p).ok())
        .ok_or_else(|| Error::bad_name(at, "the path is not UTF-8 without NUL"))
}

/// Opens the existing HDF5 file `path` read-only: loads work, saves and
/// appends are refused (an error saying the file is open read-only).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("xs.h5");
/// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u32, 2, 3])?;
/// let file = h5vec::open_file(&path)?;
/// let xs: Vec<u32> = h5vec::load_vector(&file, "xs")?;
/// assert_eq!(xs, [1, 2, 3]);
/// assert!(h5vec::append_vector(&file, "xs", &[4u32]).is_err());
/// # Ok(()) }
/// ```
///
/// A file a live writer is writing (or a killed one left marked as open
/// for writing) is opened as [`open_file_live`] does.
///
/// Errors about the file itself say what is wrong in a sentence that names
/// the file: `not an HDF5 file: PATH`, `file truncated: 100,000 of 691,370
/// bytes present: PATH` (HDF5's byte counts), and for a file another
/// process holds open for writing (HDF5's file lock), that it does, naming
/// [`create_file_live`] (for writers other processes read while they
/// write).
///
/// The handle stays read-only when this process also has the file open
/// read-write (HDF5 then shares one open file between both handles, and
/// would write through either): every save, append, repair or writer of
/// h5vec through this handle, or a group opened through it, is refused.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("xs.h5");
/// let rw = h5vec::create_file(&path)?;
/// h5vec::save_vector(&rw, "xs", &[1u32])?;
/// let ro = h5vec::open_file(&path)?;
/// assert!(h5vec::append_vector(&ro, "xs", &[2u32]).is_err());
/// h5vec::append_vector(&rw, "xs", &[2u32])?;
/// assert_eq!(h5vec::load_vector::<u32>(&ro, "xs")?, [1, 2]);
///
/// std::fs::write(dir.path().join("notes.txt"), "text").unwrap();
/// let e = h5vec::open_file(dir.path().join("notes.txt")).unwrap_err();
/// assert!(e.to_string().starts_with("not an HDF5 file: "));
/// # Ok(()) }
/// ```
pub fn open_file(path: impl AsRef<Path>) -> Result<hdf5::File> {
    let path = path.as_ref();
    let file = match hdf5::File::open(path) {
        Ok(f) => f,
        Err(_) if crate::live::left_open_for_writing(path) => return open_file_live(path),
        Err(e) => return Err(open_error(path, e, Intent::Read)),
    };
    raw::close_on_exec(&file);
    read_only::opened(&file);
    Ok(file)
}

/// Opens the HDF5 file `path` read-only as a live reader (HDF5's SWMR read
/// mode, library version bounds "latest"), while a
/// [`crate::VectorWriter::create_live`] (or
/// [`open_append_live`](crate::VectorWriter::open_append_live)) in another
/// process streams into it.
///
/// Every load through this handle ([`crate::load_vector`],
/// [`crate::load_range`], [`crate::VectorReader`], ...) reads the vector as
/// of the writer's last commit at the time of the load: `count` rows, all
/// as written. Loading again sees the rows committed since: objects are
/// evicted from HDF5's cache when the load closes them, so every load reads
/// their current state. Between two commits a reader sees the earlier one;
/// a writer killed mid-stream leaves its last commit, which this still
/// reads (SPEC.md section 8, "Live readers"). Works on any file, live or
/// not.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("log.h5");
/// # let file = h5vec::create_file_live(&path)?;
/// # let mut w = h5vec::VectorWriter::<u32>::create_live(&file, "xs", &Default::default())?;
/// # w.extend(&[1, 2])?;
/// # w.finish()?;
/// # drop(file);
/// // While a live writer streams into `path` in another process:
/// let reader = h5vec::open_file_live(&path)?;
/// let xs: Vec<u32> = h5vec::load_vector(&reader, "xs")?; // its last commit
/// assert_eq!(xs, [1, 2]);
/// # Ok(()) }
/// ```
pub fn open_file_live(path: impl AsRef<Path>) -> Result<hdf5::File> {
    let path = path.as_ref();
    let file = crate::live::open_swmr_read(path).map_err(|e| match e.kind() {
        crate::ErrorKind::Hdf5(h) => classify(path, &h.to_string(), Intent::Read).unwrap_or(e),
        _ => e,
    })?;
    read_only::opened(&file);
    Ok(file)
}

/// Opens the existing HDF5 file `path` for reading and writing (saves,
/// appends, [`crate::VectorWriter`]). The file keeps the properties it was
/// created with: make new files with [`create_file`].
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("xs.h5");
/// # h5vec::save_vector(&*h5vec::create_file(&path)?, "xs", &[1u32, 2, 3])?;
/// let file = h5vec::open_file_rw(&path)?;
/// h5vec::append_vector(&file, "xs", &[4u32])?;
/// assert_eq!(h5vec::vector_len(&file, "xs")?, 4);
/// # Ok(()) }
/// ```
///
/// A file whose live writer ([`crate::VectorWriter::create_live`]) was
/// killed still says it is open for writing (its superblock's flags): if no
/// live writer has it open now, the flags are cleared and the file opens
/// (then [`crate::repair`] trims what the last commit does not cover). While
/// a live writer writes it, this is an error saying so.
pub fn open_file_rw(path: impl AsRef<Path>) -> Result<hdf5::File> {
    let path = path.as_ref();
    let at = Place::new("$", path.display().to_string());
    let file = match hdf5::File::open_rw(path) {
        Ok(f) => f,
        Err(_) if crate::live::left_open_for_writing(path) => {
            crate::live::open_rw_clearing_flags(path, &at)?
        }
        Err(e) => return Err(open_error(path, e, Intent::Write)),
    };
    raw::close_on_exec(&file);
    read_only::forget_freed(&file);
    Ok(file)
}

/// What an open was for, which decides what a lock conflict means.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    Read,
    Write,
}

/// HDF5's refusal to open `path`, in words a user can act on where HDF5's
/// are cryptic: not an HDF5 file, a truncated file (with HDF5's byte
/// counts), a file another process holds; anything else keeps HDF5's error
/// at `$ (path)`.
pub(crate) fn open_error(path: &Path, e: hdf5::Error, intent: Intent) -> Error {
    classify(path, &e.to_string(), intent)
        .unwrap_or_else(|| Error::hdf5(Place::new("$", path.display().to_string()), e))
}

/// [`open_error`]'s errors of its own, from HDF5's error text.
fn classify(path: &Path, text: &str, intent: Intent) -> Option<Error> {
    let shown = path.display().to_string();
    if text.contains("file signature not found") {
        return Some(Error::file(&shown, format!("not an HDF5 file: {shown}")));
    }
    if let Some((present, expected)) = truncated_sizes(text) {
        return Some(Error::file(
            &shown,
            format!(
                "file truncated: {} of {} bytes present: {shown}",
                thousands(present),
                thousands(expected)
            ),
        ));
    }
    if lock_conflict(text) {
        let msg = match intent {
            Intent::Read => format!(
                "the file is open for writing by another process (HDF5 locks a file while \
                 a writer has it open): {shown}; a writer that other processes may read \
                 while it writes creates the file with h5vec::create_file_live and writes \
                 with VectorWriter::create_live (readers: h5vec::open_file_live)"
            ),
            Intent::Write => format!(
                "the file is open in another process (HDF5 locks a file while a writer, or \
                 a reader of a file not made for live reading, has it open): {shown}"
            ),
        };
        return Some(Error::file_hdf5(&shown, hdf5::Error::Internal(msg)));
    }
    None
}

/// HDF5's `truncated file: eof = E, sblock->base_addr = B, stored_eof = S`:
/// (bytes present, bytes the superblock says the file has).
fn truncated_sizes(text: &str) -> Option<(u64, u64)> {
    let rest = &text[text.find("truncated file: eof = ")? + "truncated file: eof = ".len()..];
    let number = |s: &str| -> Option<u64> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        s[..end].parse().ok()
    };
    let eof = number(rest)?;
    let base = number(&rest[rest.find("base_addr = ")? + "base_addr = ".len()..])?;
    let stored = number(&rest[rest.find("stored_eof = ")? + "stored_eof = ".len()..])?;
    Some((eof.checked_add(base)?, stored.checked_add(base)?))
}

/// Whether HDF5 failed to take its file lock because another process holds
/// it (`unable to lock file, errno = EWOULDBLOCK`).
fn lock_conflict(text: &str) -> bool {
    let Some(at) = text.find("unable to lock file, errno = ") else {
        return false;
    };
    let rest = &text[at + "unable to lock file, errno = ".len()..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end]
        .parse::<i32>()
        .is_ok_and(|n| n == libc::EWOULDBLOCK || n == libc::EAGAIN)
}

/// `691370` as `691,370`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The handles h5vec opened read-only ([`open_file`], [`open_file_live`])
/// on a file the same process also has open read-write. HDF5 opens a file
/// once per process and shares it between handles: such a handle reports
/// the read-write intent of the first one, and HDF5 would write through
/// it. [`check_writable`], which every write of h5vec passes, refuses
/// writes through the handles listed here.
///
/// A handle is known by the address of HDF5's per-handle file struct
/// (`H5VLobject`; every `H5Fopen` makes a new one, which objects opened
/// through the handle keep alive) together with the file's number, and by
/// its id while that is open: objects opened through a dropped handle get a
/// new file id for the same struct.
mod read_only {
    use std::sync::Mutex;

    use hdf5_sys::h5f;
    use hdf5_sys::h5i::hid_t;

    use crate::raw;

    struct Handle {
        id: hid_t,
        object: usize,
        fileno: u64,
    }

    static HANDLES: Mutex<Vec<Handle>> = Mutex::new(Vec::new());
    /// [`HANDLES`] in the child of an isolated check
    /// ([`crate::forked::fork_safe`]).
    static CHILD_HANDLES: Mutex<Vec<Handle>> = Mutex::new(Vec::new());

    /// (per-handle struct address, file number) of `file`.
    fn identity(file: &hdf5::File) -> Option<(usize, u64)> {
        raw::handle_identity(file)
    }

    fn handles() -> std::sync::MutexGuard<'static, Vec<Handle>> {
        crate::forked::fork_safe(&HANDLES, &CHILD_HANDLES)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Records `file`, just opened read-only, if HDF5 shares it with a
    /// read-write handle (a file open read-only only refuses writes itself).
    pub(super) fn opened(file: &hdf5::File) {
        forget_freed(file);
        if raw::intent(file) & h5f::H5F_ACC_RDWR == 0 {
            return;
        }
        if let Some((object, fileno)) = identity(file) {
            handles().push(Handle {
                id: file.id(),
                object,
                fileno,
            });
        }
    }

    /// Forgets recorded handles whose file struct `file` (just opened) now
    /// occupies: that struct was freed, with every object of its handle.
    pub(super) fn forget_freed(file: &hdf5::File) {
        let Some((object, _)) = identity(file) else {
            return;
        };
        handles().retain(|h| h.object != object || h.id == file.id());
    }

    /// Whether `file` (a file id h5vec got from a group it writes to) is,
    /// or was opened through, a handle recorded by [`opened`].
    pub(super) fn is_read_only(file: &hdf5::File) -> bool {
        let mut list = handles();
        if list.is_empty() {
            return false;
        }
        let Some((object, fileno)) = identity(file) else {
            return false;
        };
        let mut found = false;
        list.retain(|h| {
            if h.object != object || h.fileno != fileno {
                return true;
            }
            if h.id == file.id() {
                found = true;
                return true;
            }
            let (open, refs) = raw::still_open_and_refs(h.id, file);
            // The recorded handle was dropped while objects it opened kept
            // its file struct alive: `file` is the id HDF5 made for the
            // struct just now (no other reference). Another reference means
            // a handle opened since, which found the struct freed and took
            // its address.
            if !open && refs <= 1 {
                found = true;
                return true;
            }
            open
        });
        found
    }
}

/// Checks that the file of `parent` is open for writing before a save or an
/// append writes container `name` there: an error at the container's place
/// saying the file is open read-only, instead of HDF5's "no write intent on
/// file" from the first write.
pub(crate) fn check_writable(parent: &Group, name: &str) -> Result<()> {
    let at = &crate::containers::container_place(parent, name);
    let file = parent.file().at(at)?;
    let intent = raw::checked_intent(&file, at)?;
    if read_only::is_read_only(&file) {
        return Err(Error::hdf5(
            at,
            hdf5::Error::Internal(format!(
                "the file is open read-only through this handle (h5vec::open_file), though \
                 this process also has it open for writing: write `{}` through a handle \
                 from h5vec::open_file_rw (HDF5 shares one open file between the handles)",
                name.escape_debug()
            )),
        ));
    }
    if intent & h5f::H5F_ACC_RDWR == 0 {
        return Err(Error::hdf5(
            at,
            hdf5::Error::Internal(format!(
                "the file is open read-only: open it with h5vec::open_file_rw (or \
                 hdf5::File::open_rw) to write `{}`",
                name.escape_debug()
            )),
        ));
    }
    Ok(())
}

/// Creates the group `name` in `parent` for vectors to be saved into.
///
/// HDF5's default group keeps up to 8 links in its object header, which
/// starts with room for 4 and grows by continuation blocks, and from 9
/// links on keeps them in a link index (a B-tree and a heap). Linking a
/// saved vector into it then writes several blocks, and a kill between
/// those writes leaves the group unreadable. This group keeps up to 256
/// links in its object header, created with room for 64: until then,
/// linking a vector (or replacing one) rewrites that one block.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("runs.h5"))?;
/// let run = h5vec::create_group(&file, "run1")?;
/// h5vec::save_vector(&run, "xs", &[1u32, 2, 3])?;
/// # Ok(()) }
/// ```
pub fn create_group(parent: &Group, name: &str) -> Result<Group> {
    check_writable(parent, name)?;
    let at = &crate::containers::container_place(parent, name);
    let cname =
        CString::new(name).map_err(|_| Error::bad_name(at, "the name contains a NUL byte"))?;
    raw::create_group(parent, &cname, LINKS, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdf5_sys::h5g::H5G_storage_type_t;

    fn storage(g: &Group) -> H5G_storage_type_t {
        raw::group_storage(g)
    }

    #[test]
    fn hdf5_open_errors_are_read_for_their_numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(691_370), "691,370");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
        let t = "H5Fopen(): unable to synchronously open file: truncated file: eof = 100000, \
                 sblock->base_addr = 0, stored_eof = 691370";
        assert_eq!(truncated_sizes(t), Some((100_000, 691_370)));
        let t = "truncated file: eof = 5, sblock->base_addr = 512, stored_eof = 9";
        assert_eq!(truncated_sizes(t), Some((517, 521)));
        assert_eq!(truncated_sizes("truncated file: eof = x"), None);
        assert!(lock_conflict(
            "unable to lock file, errno = 11, error message = 'Resource temporarily unavailable'"
        ));
        assert!(!lock_conflict(
            "unable to lock file, errno = 38, error message = 'x'"
        ));
    }

    #[test]
    fn files_and_groups_keep_links_compact_and_never_reuse_space() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.h5");
        let f = create_file(&path).unwrap();
        let g = create_group(&f, "g").unwrap();
        for i in 0..40 {
            crate::save_vector(&f, &format!("v{i}"), &[i as u32]).unwrap();
            crate::save_vector(&g, &format!("v{i}"), &[i as u32]).unwrap();
        }
        assert_eq!(storage(&f), H5G_storage_type_t::H5G_STORAGE_TYPE_COMPACT);
        assert_eq!(storage(&g), H5G_storage_type_t::H5G_STORAGE_TYPE_COMPACT);
        // A default group switches to a link index at 9 links.
        let d = f.create_group("d").unwrap();
        for i in 0..9 {
            crate::save_vector(&d, &format!("v{i}"), &[i as u32]).unwrap();
        }
        assert_eq!(storage(&d), H5G_storage_type_t::H5G_STORAGE_TYPE_DENSE);
        // The root group switches after COMPACT_LINKS links (40 saved, plus
        // `g` and `d`).
        for i in 40..COMPACT_LINKS as usize - 2 {
            crate::save_vector(&f, &format!("v{i}"), &[i as u32]).unwrap();
        }
        assert_eq!(f.len(), COMPACT_LINKS as u64);
        assert_eq!(storage(&f), H5G_storage_type_t::H5G_STORAGE_TYPE_COMPACT);
        crate::save_vector(&f, "one_more", &[0u32]).unwrap();
        assert_eq!(storage(&f), H5G_storage_type_t::H5G_STORAGE_TYPE_DENSE);
        assert_eq!(
            f.create_plist().unwrap().file_space_strategy(),
            FileSpaceStrategy::PageAggregation
        );
        drop((f, g, d));
        // Superblock version 2: no "open for writing" flag a killed writer
        // could leave set.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89HDF\r\n\x1a\n");
        assert_eq!(bytes[8], 2);
        let f = hdf5::File::open(&path).unwrap();
        let back: Vec<u32> = crate::load_vector(&f.group("g").unwrap(), "v39").unwrap();
        assert_eq!(back, [39]);
    }
}
