//! A VLS column's pointers dataset: the [`Pointer`] type and its
//! compound, creating, resuming and reading pointers, the
//! `missing-value-placeholder` attribute they carry, and the check of a
//! pointer against the heap.

use std::ops::Range;
use std::sync::OnceLock;

use hdf5::{Dataset, Group};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t};

use crate::column::PodWriter;
use crate::error::{At, Context, Error, Place, Result};
use crate::options::WriteCtx;
use crate::raw::{self, MemType};

/// Name of the pointer attribute that holds the missing-value placeholder.
pub(crate) const PLACEHOLDER_ATTR: &str = "missing-value-placeholder";

/// One pointer entry as held in memory (`offset`, `length`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Pointer {
    /// Start of the slice on the heap.
    pub offset: u64,
    /// Length of the slice in bytes.
    pub length: u64,
}

/// Creates the 16-byte compound {offset: `member` at 0, length: `member`
/// at 8}; returns HDF5's id, negative when HDF5 cannot create the type.
fn new_pointer_type(member: hid_t) -> hid_t {
    raw::compound::pair_compound(c"offset", c"length", member, 8)
}

/// The compound type {offset, length} with members of `member` type, owned.
pub(super) fn pointer_type(member: hid_t, path: impl At) -> Result<hdf5::Datatype> {
    raw::compound::owned_pair(c"offset", c"length", member, 8, path)
}

/// Whether a file type is a valid pointer compound.
pub(crate) fn pointer_type_ok(t: &raw::TypeInfo) -> bool {
    t.class == H5T_class_t::H5T_COMPOUND
        && t.members.len() == 2
        && t.members[0].0 == "offset"
        && t.members[1].0 == "length"
        && t.members
            .iter()
            .all(|(_, m)| m.class == H5T_class_t::H5T_INTEGER && !m.signed && m.size <= 8)
}

/// The pointer compound with `member` integers, created once and kept for
/// the life of the process (a static type id, as HDF5's own types are).
///
/// Only for `Pod`'s `mem_type`/`file_type`, which h5vec's own pointer
/// reads and writes do not call: they use owned types ([`pointer_type`],
/// [`create_pointers`], [`resume_pointers`]), because this id, once made,
/// counts as an object the program holds open (`H5Fget_obj_count` with
/// `H5F_OBJ_ALL`) until the process ends.
fn static_pointer_type(cell: &'static OnceLock<hid_t>, member: hid_t) -> hid_t {
    // On failure every use of the id fails with an HDF5 error.
    *cell.get_or_init(|| new_pointer_type(member))
}

// SAFETY: `#[repr(C)]` with two u64 fields: no padding, every bit pattern
// valid; the memory type is that layout.
unsafe impl raw::Pod for Pointer {
    fn mem_type() -> hid_t {
        static T: OnceLock<hid_t> = OnceLock::new();
        static_pointer_type(&T, *h5t::H5T_NATIVE_UINT64)
    }
    fn file_type() -> hid_t {
        static T: OnceLock<hid_t> = OnceLock::new();
        static_pointer_type(&T, *h5t::H5T_STD_U64LE)
    }
    const ENCODED: &'static str = "Pointer";
    fn accepts(t: &raw::TypeInfo) -> bool {
        pointer_type_ok(t)
    }
}

/// Writes pointer entries (HDF5 converts them to the dataset's member
/// width when it differs from 64 bits).
pub(crate) type PointerWriter = PodWriter<Pointer>;

/// Creates the pointer dataset `name` in `group`. The writer owns its
/// memory type (no process-wide type id, see [`static_pointer_type`]).
pub(super) fn create_pointers(
    group: &Group,
    name: &str,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PointerWriter> {
    let file = pointer_type(*h5t::H5T_STD_U64LE, path)?;
    let mem = pointer_type(*h5t::H5T_NATIVE_UINT64, path)?;
    let compression = ctx.compression_for(name);
    let chunk = ctx.chunk_rows(16);
    // `mem` is the compound {offset: u64 @0, length: u64 @8}, exactly
    // `Pointer` (repr(C)); `MemType::checked` checks its size.
    PodWriter::create_typed(
        group,
        name,
        &file,
        Some(MemType::checked(mem, path)?),
        &[],
        chunk,
        compression,
        ctx.checksum(),
        path,
    )
}

/// Continues the pointer dataset `ds` at row `count`, with an owned memory
/// type as [`create_pointers`].
pub(super) fn resume_pointers(ds: Dataset, count: u64, path: &str) -> Result<PointerWriter> {
    let mem = pointer_type(*h5t::H5T_NATIVE_UINT64, path)?;
    // `mem` is the compound {offset: u64 @0, length: u64 @8}, exactly
    // `Pointer` (repr(C)); HDF5 converts it to the dataset's member widths.
    PodWriter::resume_typed(
        ds,
        Some(MemType::checked(mem, path)?),
        Vec::new(),
        count,
        path,
    )
}

/// Reads pointer entries of any unsigned member width.
pub(crate) fn read_pointers(
    ds: &Dataset,
    start: u64,
    n: u64,
    path: impl At,
) -> Result<Vec<Pointer>> {
    let mem = pointer_type(*h5t::H5T_NATIVE_UINT64, path)?;
    // `mem` is the compound {offset: u64 @0, length: u64 @8}, exactly
    // `Pointer` (repr(C)); HDF5 converts narrower unsigned members by name.
    let mut out = Vec::new();
    let mem = MemType::checked(mem, path)?;
    crate::pipeline::rows::read_pod_rows(ds, &mem, start, n, &[], &mut out, path)?;
    Ok(out)
}

/// Writes the placeholder attribute on the pointers `ds`: a variable-length
/// string, or, when the pointers carry a Fletcher32 checksum (SPEC.md 6.4),
/// a fixed-length one, whose bytes live in the object header (checksummed
/// by HDF5 in `create_file` files) instead of the global heap, which no
/// checksum covers. Placeholders are ASCII (`NA`, `NA_`, ...).
pub(crate) fn write_placeholder(ds: &Dataset, ph: &str, path: &str) -> Result<()> {
    if raw::chunks::has_fletcher32(ds) && ph.is_ascii() {
        return raw::write_attr_ascii(ds, PLACEHOLDER_ATTR, ph, path);
    }
    let v: hdf5::types::VarLenUnicode = ph
        .parse()
        .map_err(|_| Error::encode(path, "placeholder is not a valid HDF5 string"))?;
    ds.new_attr::<hdf5::types::VarLenUnicode>()
        .shape(())
        .create(PLACEHOLDER_ATTR)
        .at(path)?
        .write_scalar(&v)
        .at(path)
}

/// Reads the `missing-value-placeholder` attribute, if any.
pub(crate) fn read_placeholder(ds: &Dataset, path: &str) -> Result<Option<String>> {
    if !raw::has_attr(ds, PLACEHOLDER_ATTR, path)? {
        return Ok(None);
    }
    let p = Place::new(path, ds.name()).attribute(PLACEHOLDER_ATTR);
    crate::raw::gheap::check_attr(ds, PLACEHOLDER_ATTR, &p)?;
    let a = ds.attr(PLACEHOLDER_ATTR).at(&p)?;
    raw::read_attr_string(&a, &p).map(Some)
}

/// Checks that pointer `p` (element `row`) lies inside a heap of `heap_len`
/// bytes, without overflow.
pub(crate) fn check_slice(p: &Pointer, heap_len: u64, at: &Place, row: u64) -> Result<Range<u64>> {
    if p.offset > heap_len {
        return Err(Error::invalid(
            at.element(row),
            format!(
                "pointer offset {} is past the end of the heap ({heap_len} bytes)",
                p.offset
            ),
        ));
    }
    match p.offset.checked_add(p.length) {
        Some(end) if end <= heap_len => Ok(p.offset..end),
        _ => Err(Error::invalid(
            at.element(row),
            format!(
                "pointer slice offset {} + length {} runs past the end of the heap ({heap_len} bytes)",
                p.offset, p.length
            ),
        )),
    }
}
