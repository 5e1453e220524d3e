//! The vector's `metadata` group (SPEC.md section 1): written whole when
//! a vector is created, `count` rewritten at every commit, and read and
//! checked (format, count, the schema tree against a checksummed
//! `serialized_schema`) when one is opened.

use hdf5::Group;

use crate::containers::{FORMAT_NAME, FORMAT_VERSION};
use crate::error::{Context, Error, Place, Result};
use crate::raw::{self, Bits8, Pod};
use crate::schema::Stored;

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
    // Parallel HDF5 cannot write variable-length data (the schema's name
    // lists): the tree is written in memory and copied (SPEC.md section 16).
    #[cfg(feature = "mpi")]
    if crate::file::is_mpio(meta) {
        let mem = crate::file::memory_file()?;
        let sg = raw::create_group_small(&mem, "schema", p)?;
        schema.write(&sg, "$")?;
        drop(sg);
        return raw::copy_object(&mem, c"schema", meta, p);
    }
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

pub(crate) fn read_scalar_int(meta: &Group, name: &str) -> Result<i64> {
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
