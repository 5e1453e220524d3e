//! The steps of every collective write: the options, this rank's rows
//! encoded and the call compared across ranks, then a new vector or an
//! append.

use ::mpi::topology::Communicator;
use hdf5::Group;

use super::comm::{agree, all_ok, span};
use super::local::{self, Local};
use super::merge::Merge;
use crate::codec::H5Vector;
use crate::error::{Context, Error, Result};
use crate::options::SaveOptions;

/// The options of every write here: strings in the compressed layout
/// unless the caller chose otherwise (which encoding then refuses), no
/// statistics (a chunk's statistics would need rows of several ranks).
pub(super) fn mpi_options(opts: &SaveOptions) -> SaveOptions {
    let o = opts.clone().statistics(false);
    match o.vls_strings_setting() {
        Some(_) => o,
        None => o.vls_strings(true),
    }
}

/// Encodes this rank's rows, then checks with the other ranks that every
/// one encoded its rows and makes the same call. Collective.
pub(super) fn prepare<T: H5Vector, C: Communicator>(
    verb: &str,
    name: &str,
    rows: &[T],
    opts: &SaveOptions,
    comm: &C,
) -> Result<Local> {
    let local = all_ok(comm, local::encode(rows, opts), "$")?;
    agree(comm, &describe::<T>(verb, name, &local, opts), "$")?;
    Ok(local)
}

/// A call, for the ranks to compare.
pub(super) fn describe<T>(verb: &str, name: &str, local: &Local, opts: &SaveOptions) -> String {
    format!(
        "{verb}({name:?}) of {} (schema {:016x}, options {:016x})",
        std::any::type_name::<T>(),
        super::comm::fnv1a(format!("{:?}", local.stored).as_bytes()),
        super::comm::fnv1a(format!("{opts:?}").as_bytes()),
    )
}

/// A new vector `name` holding every rank's encoded rows, linked when
/// they and `count` are written. Returns its length. Collective.
///
/// Chunks are sized as a serial save sizes them: for the rows written
/// (`stream`: as the serial `VectorWriter` sizes them, for an unknown
/// length).
pub(super) fn save_local<T: H5Vector, C: Communicator>(
    parent: &Group,
    name: &str,
    local: &Local,
    opts: &SaveOptions,
    comm: &C,
    stream: bool,
) -> Result<u64> {
    let top = span(comm, 0, local.rows, "$")?;
    let len_hint = if stream { u64::MAX } else { top.total };
    let mut session = crate::vector::start_new::<T>(parent, name, opts, len_hint)?;
    // What the encoders hold from their creation (a list's OFFSETS[0])
    // goes in first, or their later flush would write over the rows.
    session.trim_tails()?;
    let data = session.group().group("data").at("$")?;
    Merge::new(comm, &local.kept).node(&local.stored, &local.data, &data, &top, "$")?;
    drop(data);
    session.finish_written(top.total)
}
/// Appends the encoded rows of every rank to vector `name`: the rows,
/// flush, `count`, flush. Returns the new length. Collective.
pub(super) fn append_local<C: Communicator>(
    parent: &Group,
    name: &str,
    local: &Local,
    comm: &C,
) -> Result<u64> {
    crate::file::check_writable(parent, name)?;
    let v = crate::vector::open_vector(parent, name, crate::guard::Access::Append)?;
    if v.schema != local.stored {
        return Err(Error::mismatch(
            "$",
            "the schema tree these rows are saved with",
            "another stored in the vector (another type, or strings in another layout)",
        ));
    }
    // Statistics and search indexes would be stale (SPEC.md section 16).
    if v.meta.link_exists(crate::query::stats::GROUP) {
        v.meta.unlink(crate::query::stats::GROUP).at("$")?;
    }
    let file = parent.file().at("$")?;
    let top = span(comm, v.count, local.rows, "$")?;
    Merge::new(comm, &local.kept).node(&local.stored, &local.data, &v.data, &top, "$")?;
    crate::raw::flush_file(&file, "$")?;
    crate::vector::metadata::write_count(&v.meta, top.total)?;
    crate::raw::flush_file(&file, "$")?;
    Ok(top.total)
}
