//! Rewriting a vector into fresh chunks: [`compact_vector`] in place,
//! [`copy_vector`] into another group or file (SPEC.md section 8,
//! "Compaction and copies").
//!
//! The copy needs no Rust type: it copies the vector's `metadata/` as it is
//! (`H5Ocopy`) and every dataset below `data/` row batch by row batch, in
//! its own stored type (variable-length strings as strings), into new
//! datasets chunked and compressed by the options given. Groups and their
//! attributes, dataset attributes and user-defined fill values are kept,
//! so the copy has the layout of the original, byte for byte in its
//! values. The new vector is written as an anonymous group and linked only
//! when complete, as a save is (`vector::commit_vector`): a crash leaves
//! the old vector, or the new one.

use std::ffi::CString;

use hdf5::{Dataset, Group, LocationType};

use crate::codec::{child_path, open_group};
use crate::containers::check_new_member;
use crate::error::{Context, Error, Place, Result};
use crate::guard::Access;
use crate::options::{DatasetRole, SaveOptions};
use crate::raw::{self, Elements};
use crate::vector::open_vector;
use crate::vector::session::commit_vector;

/// Bytes of one copy batch (a few chunks; strings add their text).
const BATCH_BYTES: u64 = 8 << 20;

/// Rewrites vector `name` of `parent` into fresh chunks, chunked and
/// compressed as `opts` says (the same layout, every value unchanged).
///
/// A vector grown by many small appends is spread over many partly used
/// chunks and, for string columns, many small heap collections; the
/// rewrite packs it as one save of the same rows would (chunk lengths
/// sized by the row count, unless `opts` sets one). It reads and writes
/// one batch of rows at a time (bounded memory, whatever the vector's
/// size) and needs no Rust type. The new vector is complete before it
/// replaces the old one (one link swap, as `SaveOptions::replace`), so a
/// crash leaves the old vector or the new one.
///
/// `opts` applies to every dataset: per-field storage attributes of the
/// type that wrote the vector are not stored in the file, and the string
/// layout (variable-length or VLS) is kept as it is. The space of the old
/// vector is not returned to the file system: HDF5 never shrinks a file.
/// To get a smaller file, [`copy_vector`] into a new file (or run
/// `h5repack` on the file) (SPEC.md section 8).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("log.h5"))?;
/// h5vec::save_vector(&file, "days", &[0u32; 5])?;
/// for day in 1..10u32 {
///     h5vec::append_vector(&file, "days", &[day; 5])?;
/// }
/// h5vec::compact_vector(&file, "days", &h5vec::SaveOptions::default().deflate(4))?;
/// let back: Vec<u32> = h5vec::load_vector(&file, "days")?;
/// assert_eq!(back.len(), 50);
/// assert_eq!(back[49], 9);
/// # Ok(()) }
/// ```
pub fn compact_vector(parent: &Group, name: &str, opts: &SaveOptions) -> Result<()> {
    crate::file::check_writable(parent, name)?;
    copy_checked(parent, name, parent, name, opts, true)
}

/// Copies vector `src_name` of `src` as `dst_name` in `dst` (another group,
/// possibly of another file), chunked and compressed as `opts` says: the
/// same layout and values, in fresh chunks, as [`compact_vector`] writes
/// them. `dst_name` must not exist yet unless `opts.replace(true)` is set.
///
/// Copying into a new file is how a file shrinks: HDF5 does not hand the
/// space of deleted or rewritten objects back to the file system.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let old = h5vec::create_file(dir.path().join("old.h5"))?;
/// h5vec::save_vector(&old, "xs", &[1.5f64, 2.5, 3.5])?;
/// let new = h5vec::create_file(dir.path().join("new.h5"))?;
/// h5vec::copy_vector(&old, "xs", &new, "xs", &h5vec::SaveOptions::default().zstd(3))?;
/// let back: Vec<f64> = h5vec::load_vector(&new, "xs")?;
/// assert_eq!(back, [1.5, 2.5, 3.5]);
/// // The name is taken now:
/// let again = h5vec::copy_vector(&old, "xs", &new, "xs", &h5vec::SaveOptions::default());
/// assert!(again.unwrap_err().to_string().contains("SaveOptions::replace(true)"));
/// # Ok(()) }
/// ```
pub fn copy_vector(
    src: &Group,
    src_name: &str,
    dst: &Group,
    dst_name: &str,
    opts: &SaveOptions,
) -> Result<()> {
    crate::file::check_writable(dst, dst_name)?;
    let exists = check_new_member(dst, dst_name, "vector", Some(opts.get_replace()))?;
    copy_checked(src, src_name, dst, dst_name, opts, exists)
}

fn copy_checked(
    src: &Group,
    src_name: &str,
    dst: &Group,
    dst_name: &str,
    opts: &SaveOptions,
    replace: bool,
) -> Result<()> {
    // The load's checks first: metadata, count, schema tree, the walk.
    let opened = open_vector(src, src_name, Access::Read)?;
    let vector = open_group(src, src_name, "$")?;
    let _hold = raw::HoldMetadata::new(dst.file().at("$")?);
    // Dropped on error: an anonymous group goes with its last handle.
    let group = raw::create_anon_group(dst, "$")?;
    let _unlinked = raw::Unlinked::new(group.id());
    copy_attrs(&vector, &group, &Place::new("$", vector.name()))?;
    ocopy(
        &vector,
        "metadata",
        &group,
        &Place::new("$", opened.meta.name()),
    )?;
    let data = raw::create_group_small(&group, "data", "$")?;
    copy_group(&opened.data, &data, opts, "$")?;
    // The data has new chunks: statistics copied with `metadata` would
    // describe the old ones (SPEC.md section 14).
    let meta = open_group(&group, "metadata", "$")?;
    // Search indexes built on demand, rebuilt from the new data too
    // (SPEC.md 14.6): the same columns and families.
    let on_demand = crate::query::index::on_demand(&meta)?;
    crate::query::stats::rebuild(&group, &meta, &opened.schema, opened.count)?;
    crate::query::index::rebuild_after_copy(
        &group,
        &meta,
        &opened.schema,
        opened.count,
        &on_demand,
    )?;
    drop(opened);
    commit_vector(dst, &group, dst_name, replace)
}

/// Copies object `name` of `src` to `dst` as it is (`H5Ocopy`).
fn ocopy(src: &Group, name: &str, dst: &Group, at: &Place) -> Result<()> {
    let c = CString::new(name).map_err(|_| Error::bad_name(at, "name contains NUL"))?;
    raw::copy_object(src, &c, dst, at)
}

/// Copies every member of data group `src` into `dst` (groups recursively).
fn copy_group(src: &Group, dst: &Group, opts: &SaveOptions, path: &str) -> Result<()> {
    for name in src.member_names().at(path)? {
        let at = Place::new(path, crate::codec::member_path(src, &name));
        match src.loc_type_by_name(&name).at(&at)? {
            LocationType::Group => {
                let s = src.group(&name).at(&at)?;
                let d = dst.create_group(&name).at(&at)?;
                copy_attrs(&s, &d, &at)?;
                copy_group(&s, &d, opts, &child_path(path, &name))?;
            }
            LocationType::Dataset => {
                let ds = src.dataset(&name).at(&at)?;
                copy_dataset(src, &ds, dst, &name, opts, &at)?;
            }
            other => {
                return Err(Error::mismatch(
                    &at,
                    "a group or a dataset",
                    format!("{other:?}"),
                ))
            }
        }
    }
    Ok(())
}

/// Copies dataset `src` as `name` of `dst`: a chunked dataset of rows into
/// a new one chunked and compressed by `opts`; anything else as it is.
fn copy_dataset(
    parent: &Group,
    src: &Dataset,
    dst: &Group,
    name: &str,
    opts: &SaveOptions,
    at: &Place,
) -> Result<()> {
    let dtype = raw::dataset_type(src, at)?;
    let shape = raw::shape(src, at)?;
    // Any other variable-length type is copied as it is stored.
    let elems = raw::elements(&dtype);
    if !src.is_chunked() || shape.is_empty() || matches!(elems, Elements::Other) {
        return ocopy(parent, name, dst, at);
    }
    let rows = shape[0];
    let inner = &shape[1..];
    let inner_usize = inner
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| Error::invalid(at, "dimension too large")))
        .collect::<Result<Vec<_>>>()?;
    let elem = match elems {
        Elements::Fixed(n) => n,
        // The descriptor a variable-length string takes in a chunk.
        _ => 16,
    };
    let row_bytes = inner
        .iter()
        .try_fold(elem as u64, |a, &d| a.checked_mul(d))
        .filter(|&b| b > 0)
        .ok_or_else(|| Error::invalid(at, "row size overflows"))?;
    let role = DatasetRole::of(name);
    let heap = role == DatasetRole::Bytes && inner.is_empty() && elem == 1;
    let chunk_rows = if heap {
        opts.chunk_heap(rows)
    } else {
        opts.chunk_rows(rows, usize::try_from(row_bytes).unwrap_or(usize::MAX))
    };
    let spec = raw::ColumnSpec {
        dtype: &dtype,
        inner: &inner_usize,
        chunk_rows,
        compression: opts.get_compression_for(role),
        checksum: opts.get_checksum(),
    };
    let fill = match elems {
        Elements::Fixed(n) => raw::user_fill(src, dtype.id(), n, at)?,
        _ => None,
    };
    let out = match &fill {
        Some(f) => raw::create_column_with_fill(dst, name, &spec, dtype.id(), f, at)?,
        None => raw::create_column(dst, name, &spec, at)?,
    };
    copy_attrs(src, &out, at)?;
    // Whole chunks per batch, a few MiB of values at most.
    let per_batch = (BATCH_BYTES / row_bytes.saturating_mul(chunk_rows as u64)).max(1);
    let batch = (chunk_rows as u64).saturating_mul(per_batch);
    let mut start = 0u64;
    let mut buf: Vec<u64> = Vec::new();
    let mut bytes: Vec<u8> = Vec::new();
    let mut starts: Vec<usize> = Vec::new();
    while start < rows {
        let n = (rows - start).min(batch);
        match elems {
            Elements::VlenStrings => {
                bytes.clear();
                starts.clear();
                raw::read_vlen_each(src, start, n, at, &mut |s| {
                    starts.push(bytes.len());
                    bytes.extend_from_slice(s.as_bytes());
                    bytes.push(0);
                })?;
                raw::write_vlen_buffer(&out, start, &bytes, &starts, at)?;
            }
            _ => {
                let len = n
                    .checked_mul(row_bytes)
                    .and_then(|b| usize::try_from(b.div_ceil(8)).ok())
                    .ok_or_else(|| Error::invalid(at, "batch too large"))?;
                buf.clear();
                crate::limits::reserve(&mut buf, len as u64, at)?;
                buf.resize(len, 0);
                // `buf` holds `n * row_bytes` bytes: `n` rows of the
                // dataset's own type (whose size `row_bytes` is).
                let bytes = raw::pod_bytes_mut(&mut buf);
                raw::read_plain_rows_bytes(src, &dtype, start, n, inner, bytes, at)?;
                crate::pipeline::rows::write_plain_rows(&out, &dtype, start, n, inner, bytes, at)?;
            }
        }
        start += n;
    }
    if rows == 0 {
        raw::set_rows(&out, 0, inner, at)?;
    }
    Ok(())
}

/// Copies every attribute of `src` to `dst` (values in their own types;
/// variable-length ones through their memory types).
fn copy_attrs(src: &hdf5::Location, dst: &hdf5::Location, at: &Place) -> Result<()> {
    for name in src.attr_names().at(at)? {
        let a = at.clone().attribute(&name);
        let attr = src.attr(&name).at(&a)?;
        let c =
            CString::new(name.as_str()).map_err(|_| Error::bad_name(&a, "name contains NUL"))?;
        raw::copy_attr(&attr, dst, &c, crate::limits::UNCHECKED_CLAIM_BYTES, &a)?;
    }
    Ok(())
}
