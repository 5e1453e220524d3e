//! The vector group: `<name>/data` and `<name>/metadata`.
//!
//! Layout on disk:
//! ```text
//! <name>/data/...                      the values, laid out by the element's kind
//! <name>/metadata/format_name          "HDF5Vectors" (scalar fixed-length UTF-8 string)
//! <name>/metadata/format_version       1 (scalar Int64)
//! <name>/metadata/logical_type         the Rust element type name
//! <name>/metadata/serialized_schema    1-D uint8: the schema tree as JSON
//! <name>/metadata/schema_was_inferred  false (scalar Bool, H5T_STD_B8LE; SPEC.md section 1)
//! <name>/metadata/schema/...           the schema tree (see `schema.rs`)
//! <name>/metadata/count                number of elements (scalar Int64), written last
//! ```

use hdf5::Group;

use crate::codec::{expect_members, open_group, Codec, Decoder, Encoder, H5Vector};
use crate::error::{Context, Error, Place, Result};
use crate::guard::{self, Access, Container};
use crate::options::{SaveOptions, WriteCtx};
use crate::raw::{self, Bits8, Pod};
use crate::schema::Stored;

use crate::containers::{
    check_name, check_new_member, check_replaceable, container_place, is_vector,
};
pub use crate::containers::{FORMAT_NAME, FORMAT_VERSION};

/// The names of the h5vec vectors directly in `group`, sorted. A vector is
/// a hard-linked group with `metadata/format_name` = "HDF5Vectors" and
/// `metadata/count`; other members (datasets, other groups, h5col tables,
/// VLS arrays, soft or external links) are skipped, and nothing below the
/// vectors is read or checked (a load does that).
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "ys", &[1u8])?;
/// h5vec::save_vector(&file, "xs", &[2u8])?;
/// h5vec::create_group(&file, "run1")?;
/// assert_eq!(h5vec::list_vectors(&file)?, ["xs", "ys"]);
/// # Ok(()) }
/// ```
pub fn list_vectors(group: &Group) -> Result<Vec<String>> {
    let at = Place::new("$", group.name());
    let mut names = group.member_names().at(&at)?;
    names.retain(|n| is_vector(group, n));
    names.sort();
    Ok(names)
}

/// Whether `name` is an h5vec vector in `group` (as [`list_vectors`] counts
/// them): `false` if nothing or something else is there. A name that is
/// not a vector name (empty, `.`, `..`, with `/` or NUL) is an error.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u8])?;
/// assert!(h5vec::vector_exists(&file, "xs")?);
/// assert!(!h5vec::vector_exists(&file, "nope")?);
/// assert!(h5vec::vector_exists(&file, "a/b").is_err());
/// # Ok(()) }
/// ```
pub fn vector_exists(group: &Group, name: &str) -> Result<bool> {
    check_name(group, name, "vector")?;
    Ok(is_vector(group, name))
}

/// Saves `values` as a new vector `name` in `parent` with default options.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("v.h5"))?;
/// h5vec::save_vector(&file, "temperatures", &[20.5f64, 21.0, 19.75])?;
/// let back: Vec<f64> = h5vec::load_vector(&file, "temperatures")?;
/// assert_eq!(back, [20.5, 21.0, 19.75]);
/// # Ok(()) }
/// ```
pub fn save_vector<T: H5Vector>(parent: &Group, name: &str, values: &[T]) -> Result<()> {
    save_vector_with(parent, name, values, &SaveOptions::default())
}

/// Saves `values` as a new vector `name` in `parent`.
///
/// The name must not exist yet, unless `opts.replace(true)` is set. The
/// vector is written as an anonymous group (linked nowhere, so a crash or
/// an error leaves nothing a reader can see), flushed, and only then linked
/// as `name`; with `replace`, the old vector stays in place until the new
/// one is linked. See SPEC.md, section 8.
///
/// ```
/// use h5vec::{Compression, DatasetRole, SaveOptions};
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("v.h5"))?;
/// let rows: Vec<(u32, String)> = (0..1000).map(|i| (i, format!("row {i}"))).collect();
/// let opts = SaveOptions::default()
///     .chunk_length(256)
///     .deflate(4)
///     .compression_for(DatasetRole::Offsets, Compression::None);
/// h5vec::save_vector_with(&file, "rows", &rows, &opts)?;
/// // Saving again under the same name needs `replace(true)`.
/// assert!(h5vec::save_vector_with(&file, "rows", &rows, &opts).is_err());
/// h5vec::save_vector_with(&file, "rows", &rows[..10], &opts.replace(true))?;
/// assert_eq!(h5vec::vector_len(&file, "rows")?, 10);
/// # Ok(()) }
/// ```
pub fn save_vector_with<T: H5Vector>(
    parent: &Group,
    name: &str,
    values: &[T],
    opts: &SaveOptions,
) -> Result<()> {
    crate::file::check_writable(parent, name)?;
    let exists = check_new_member(parent, name, "vector", Some(opts.get_replace()))?;
    let _hold = raw::HoldMetadata::new(parent.file().at("$")?);
    // Dropped on error: an anonymous group goes with its last handle.
    let group = raw::create_anon_group(parent, "$")?;
    let _unlinked = raw::Unlinked::new(group.id());
    write_vector(&group, values, opts)?;
    commit_vector(parent, &group, name, exists)
}

/// Links the complete anonymous vector group `group` as `name` in `parent`
/// (replacing the object linked as `name` if `replace`).
///
/// First a flush writes the whole vector while nothing a reader can reach
/// points at it; then the link is made (for `replace`: the old link deleted
/// and the new one made, in one step for the metadata cache) and flushed.
/// That last flush writes only the parent's link storage, so it is the one
/// moment a kill can tear anything, and it lasts a few small writes. The
/// old vector is kept open across it, so its storage is not freed (and
/// reused) while the file on disk may still link it.
pub(crate) fn commit_vector(
    parent: &Group,
    group: &Group,
    name: &str,
    replace: bool,
) -> Result<()> {
    let file = parent.file().at("$")?;
    crate::column::complete_file(parent)?;
    raw::flush_file(&file, "$")?;
    let old = if replace {
        check_replaceable(parent, name)?;
        let old = raw::HeldObject::open(parent, name, "$")?;
        parent.unlink(name).at("$")?;
        Some(old)
    } else {
        None
    };
    if let Err(e) = raw::link_object(group, parent, name, "$") {
        if let Some(old) = &old {
            // Put the old vector back; the original error is what matters.
            let _ = old.relink(parent, name, "$");
        }
        return Err(e);
    }
    raw::flush_file(&file, "$")?;
    drop(old);
    Ok(())
}

/// Rows pushed column by column at a time: about 64 KiB of values, so the
/// rows are still in the core's cache when the next field reads them.
fn push_block_rows(row_bytes: usize) -> usize {
    ((64 << 10) / row_bytes.max(1)).max(1)
}

fn write_vector<T: H5Vector>(group: &Group, values: &[T], opts: &SaveOptions) -> Result<()> {
    let ctx = WriteCtx {
        opts,
        len_hint: values.len() as u64,
    };
    let schema = T::Codec::schema(&ctx);
    let data = raw::create_group_small(group, "data", "$")?;
    let mut enc = T::Codec::create(&data, "$", &ctx)?;
    let batch = opts.batch_rows(ctx.len_hint).max(1);
    let block = push_block_rows(std::mem::size_of::<T>());
    for chunk in values.chunks(batch) {
        // Column by column over blocks that stay in cache: each field's
        // pass over a whole batch would stream every row from memory again.
        for b in chunk.chunks(block) {
            enc.push_all(b.iter())?;
        }
        enc.flush()?;
        crate::pipeline::deferred::start_writes();
    }
    crate::column::complete_file(group)?;
    let meta = raw::create_group_small(group, "metadata", "$")?;
    write_metadata(
        &meta,
        &schema,
        std::any::type_name::<T>(),
        opts.get_checksum(),
    )?;
    // The group is still anonymous: `count` may go in now; one flush
    // before it is linked (in `commit_vector`) writes everything.
    write_count(&meta, values.len() as u64)
}

/// Writes `meta`'s members but `count` (SPEC.md section 1). With `checksum`
/// (`SaveOptions::checksum`), `serialized_schema` is one chunk with HDF5's
/// Fletcher32 filter: readers verify its bytes and check the schema tree
/// against it ([`check_schema_tree`]; SPEC.md 6.4, "Metadata").
pub(crate) fn write_metadata(
    meta: &Group,
    schema: &crate::schema::Schema,
    logical_type: &str,
    checksum: bool,
) -> Result<()> {
    let p = &Place::new("$", "metadata");
    raw::write_scalar_string(meta, "format_name", FORMAT_NAME, p)?;
    raw::write_small(meta, "format_version", &[FORMAT_VERSION], true, p)?;
    raw::write_scalar_string(meta, "logical_type", logical_type, p)?;
    let json = serde_json::to_vec(schema).map_err(|e| Error::encode(p, e))?;
    if checksum {
        raw::write_checksummed_bytes(meta, "serialized_schema", &json, p)?;
    } else {
        raw::write_small(meta, "serialized_schema", &json, false, p)?;
    }
    let b8 = raw::copy_type(Bits8::file_type(), p)?;
    let ds = raw::create_small(meta, "schema_was_inferred", &b8, None, p)?;
    // `false`, as HDF5Vectors.jl writes for a vector created from an explicit
    // schema: h5vec's schema is not the result of Julia's inference, so the
    // Julia inference options that `true` requires are not written.
    raw::write_scalar_pod(&ds, &Bits8(0), p)?;
    let sg = raw::create_group_small(meta, "schema", p)?;
    schema.write(&sg, "$")
}

pub(crate) fn write_count(meta: &Group, count: u64) -> Result<()> {
    let p = &Place::new("$", "metadata/count");
    let v = i64::try_from(count).map_err(|_| Error::encode(p, "count exceeds Int64"))?;
    if meta.link_exists("count") {
        meta.dataset("count").at(p)?.write_scalar(&v).at(p)
    } else {
        raw::write_small(meta, "count", &[v], true, p)
    }
}

/// An opened vector: its groups, validated metadata and stored schema.
pub(crate) struct Opened {
    pub data: Group,
    /// The metadata group (appends rewrite `count` in it).
    pub meta: Group,
    pub schema: Stored,
    pub count: u64,
    /// Keeps what the walk opened open while decoders open it again.
    pub _walked: guard::Walked,
}

/// Opens the group of vector `name` in `parent` (through whatever link the
/// caller chose) and walks everything below it ([`guard::check`]) before
/// anything in it is read.
pub(crate) fn open_vector_group(
    parent: &Group,
    name: &str,
    access: Access,
) -> Result<(Group, guard::Walked)> {
    check_name(parent, name, "vector")?;
    if !parent.link_exists(name) {
        return Err(Error::not_found(
            container_place(parent, name),
            format!("no vector `{name}` in `{}`", parent.name()),
        ));
    }
    let group = open_group(parent, name, "$")?;
    let walked = guard::check(&group, Container::Vector, access)?;
    Ok((group, walked))
}

/// Opens vector `name` in `parent` and checks its metadata; `access` says
/// whether the caller will append (SPEC.md section 7).
pub(crate) fn open_vector(parent: &Group, name: &str, access: Access) -> Result<Opened> {
    if let Ok(file) = parent.file() {
        raw::cover_whole_file(&file);
    }
    // A live reader reads `count` before opening the datasets it covers.
    let live_count = crate::live::count_before_open(parent, || {
        let (group, walked) = open_vector_group(parent, name, access)?;
        let meta = open_group(&group, "metadata", "$")?;
        let count = read_count(&meta)?;
        drop((meta, group, walked));
        Ok(count)
    })?;
    let (group, walked) = open_vector_group(parent, name, access)?;
    expect_members(&group, &["data", "metadata"], &Stored::default(), "$")?;
    let meta = open_group(&group, "metadata", "$")?;
    let data = open_group(&group, "data", "$")?;
    let p = &Place::new("$", "metadata/format_name");
    let fname = raw::read_scalar_string(
        &meta
            .dataset("format_name")
            .map_err(|_| Error::mismatch(p, "a format_name dataset", "nothing"))?,
        p,
    )?;
    if fname != FORMAT_NAME {
        return Err(Error::mismatch(
            p,
            format!("\"{FORMAT_NAME}\""),
            format!("{fname:?}"),
        ));
    }
    let version = read_scalar_int(&meta, "format_version")?;
    if version != FORMAT_VERSION {
        return Err(Error::mismatch(
            Place::new("$", "metadata/format_version"),
            FORMAT_VERSION,
            version,
        ));
    }
    let count = match live_count {
        Some(count) => count,
        None => read_count(&meta)?,
    };
    let sg = open_group(&meta, "schema", "$")?;
    let schema = Stored::read(&sg, "$")?;
    check_schema_tree(&meta, &schema)?;
    check_root_rows(&data, &schema, count, "$")?;
    Ok(Opened {
        data,
        meta,
        schema,
        count,
        _walked: walked,
    })
}

/// Most bytes of a checksummed `serialized_schema` h5vec reads.
const MAX_SERIALIZED_SCHEMA: usize = 64 << 20;

/// When `metadata/serialized_schema` carries HDF5's Fletcher32 filter (a
/// vector saved with `SaveOptions::checksum(true)`, SPEC.md 6.4), reads it
/// (HDF5 verifies its checksum) and checks that the schema tree `schema`
/// read from the file says exactly what it says, member by member: the
/// tree's small datasets and its heap strings carry no checksum of their
/// own, so a change in any of them is an error here instead of a different
/// load. Nothing to check without the filter.
pub(crate) fn check_schema_tree(meta: &Group, schema: &Stored) -> Result<()> {
    let p = &Place::new("$", "metadata/serialized_schema");
    let Ok(ds) = meta.dataset("serialized_schema") else {
        return Ok(());
    };
    if !raw::chunks::has_fletcher32(&ds) {
        return Ok(());
    }
    let info = raw::type_info(&ds, p)?;
    if !u8::accepts(&info) || ds.ndim() != 1 {
        return Err(Error::mismatch(p, "1-D UInt8", info.describe()));
    }
    let n = ds.size();
    if n > MAX_SERIALIZED_SCHEMA {
        return Err(Error::invalid(
            p,
            format!("{n} bytes, more than the {MAX_SERIALIZED_SCHEMA} h5vec reads"),
        ));
    }
    raw::chunks::check_checksummed_chunks(&ds, 0, n as u64, p)?;
    let bytes: Vec<u8> = ds.read_raw().map_err(|e| {
        let msg = e.to_string();
        if msg.contains("Fletcher32") || msg.contains("filter") {
            Error::invalid(
                p,
                format!("checksum mismatch (Fletcher32: the schema's bytes changed after they were written): {msg}"),
            )
        } else {
            Error::hdf5(p.clone(), e)
        }
    })?;
    let stored: crate::schema::Schema = serde_json::from_slice(&bytes)
        .map_err(|e| Error::invalid(p, format!("not the schema as JSON: {e}")))?;
    if let Some((at, what)) = schema.differs_from(&stored, "$") {
        return Err(Error::invalid(
            Place::new(at, "metadata/schema"),
            format!(
                "the schema tree differs from the checksummed metadata/serialized_schema: {what}"
            ),
        ));
    }
    Ok(())
}

/// Checks that the dataset holding one entry per row of the root node
/// (`values`, `pointers`, `stops`, `OFFSETS`, `MASK`, `TAG`; a record's
/// first field with one) has the entries `count` rows need, so a `count`
/// larger than the stored rows is an error where the count is read
/// (`vector_len`, `inspect`), not only when values are. Every decoder
/// checks all its datasets again when it opens them; layouts without such
/// a dataset (constants, unknown kinds) pass.
fn check_root_rows(data: &Group, node: &Stored, count: u64, path: &str) -> Result<()> {
    use crate::schema::Kind;
    let member = match &node.kind {
        Kind::Scalar | Kind::Dense | Kind::FillNullable => "values",
        Kind::VlsString => "pointers",
        Kind::Blob => "stops",
        Kind::List | Kind::StringValues => "OFFSETS",
        Kind::Nullable => "MASK",
        Kind::Union => "TAG",
        Kind::Record => {
            let names = node.field_names.as_deref().unwrap_or(&[]);
            // The first field with data decides (a record of constants has
            // none); the schema tree's depth is bounded when it is read.
            for (name, child) in names.iter().zip(&node.children) {
                if matches!(child.kind, Kind::Constant) || !data.link_exists(name) {
                    continue;
                }
                let Ok(g) = data.group(name) else { continue };
                return check_root_rows(&g, child, count, &format!("{path}.{name}"));
            }
            return Ok(());
        }
        Kind::Constant | Kind::Other(_) => return Ok(()),
    };
    let Ok(ds) = data.dataset(member) else {
        // Missing or not a dataset: the decoder's open check says which.
        return Ok(());
    };
    let need = if member == "OFFSETS" {
        count.saturating_add(1)
    } else {
        count
    };
    let rows = ds.shape().first().copied().unwrap_or(0) as u64;
    if rows < need {
        return Err(Error::mismatch(
            Place::new(path, ds.name()),
            format!("at least {need} rows"),
            rows,
        ));
    }
    Ok(())
}

/// Reads `metadata/count`: scalar, Int64, >= 0.
pub(crate) fn read_count(meta: &Group) -> Result<u64> {
    let v = read_scalar_int(meta, "count")?;
    u64::try_from(v).map_err(|_| {
        Error::invalid(
            Place::new("$", "metadata/count"),
            format!("negative count {v}"),
        )
    })
}

fn read_scalar_int(meta: &Group, name: &str) -> Result<i64> {
    let p = Place::new("$", format!("metadata/{name}"));
    if !meta.link_exists(name) {
        return Err(Error::mismatch(
            &p,
            format!("a scalar Int64 `{name}`"),
            "nothing",
        ));
    }
    let ds = meta
        .dataset(name)
        .map_err(|_| Error::mismatch(&p, "a dataset", "a group"))?;
    let info = raw::type_info(&ds, &p)?;
    if !i64::accepts(&info) {
        return Err(Error::mismatch(&p, "Int64", info.describe()));
    }
    if !ds.is_scalar() {
        return Err(Error::mismatch(
            &p,
            "a scalar",
            format!("shape {:?}", ds.shape()),
        ));
    }
    ds.read_scalar::<i64>().at(&p)
}

/// Loads the whole vector `name` from `parent` as `Vec<T>`.
///
/// Everything is checked before values are produced: the metadata, the
/// schema tree against `T`, the members of every data group, the rank,
/// shape, datatype and length of every dataset. Errors name the field path.
///
/// ```
/// use h5vec::{ErrorKind, H5Vector};
///
/// #[derive(H5Vector, Debug, PartialEq)]
/// struct Reading { sensor: u16, value: f32, note: Option<String> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("r.h5"))?;
/// let rows = vec![
///     Reading { sensor: 1, value: 0.5, note: None },
///     Reading { sensor: 2, value: 1.5, note: Some("recalibrated".into()) },
/// ];
/// h5vec::save_vector(&file, "readings", &rows)?;
/// let back: Vec<Reading> = h5vec::load_vector(&file, "readings")?;
/// assert_eq!(back, rows);
///
/// // Another type is refused, naming the field.
/// let err = h5vec::load_vector::<(u16, f64)>(&file, "readings").unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::Mismatch { .. }), "{err}");
/// // A missing vector is `NotFound`.
/// let err = h5vec::load_vector::<Reading>(&file, "nope").unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::NotFound(_)));
/// # Ok(()) }
/// ```
pub fn load_vector<T: H5Vector>(parent: &Group, name: &str) -> Result<Vec<T>> {
    let v = open_vector(parent, name, Access::Read)?;
    let mut dec = T::Codec::open(&v.data, &v.schema, "$", v.count)?;
    read_rows(&mut dec, 0..v.count)
}

/// Most bytes allocated up front for the result before any row is read.
const MAX_PREALLOC_BYTES: u64 = 1 << 30;

pub(crate) fn read_rows<T, D: Decoder<T>>(
    dec: &mut D,
    rows: std::ops::Range<u64>,
) -> Result<Vec<T>> {
    let n = rows.end.saturating_sub(rows.start);
    // Rows of a type without data cost time and nothing else: capped.
    crate::limits::check_empty_rows::<T>(n, "$")?;
    let size = std::mem::size_of::<T>() as u64;
    let cap = if size == 0 || n.saturating_mul(size) <= MAX_PREALLOC_BYTES {
        n
    } else {
        MAX_PREALLOC_BYTES / size
    };
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, cap, "$")?;
    // Several chunks per batch, so compressed chunks decompress in parallel.
    let batch = crate::options::READ_BATCH_ROWS;
    let mut start = rows.start;
    while start < rows.end {
        let end = rows.end.min(start + batch);
        // Grown batch by batch without aborting when memory runs out.
        crate::limits::grow(&mut out, end - start, n, "$")?;
        dec.load(start..end)?;
        for _ in start..end {
            out.push(dec.next()?);
        }
        start = end;
    }
    Ok(out)
}
