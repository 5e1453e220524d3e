//! The steps of every collective write: the options, this rank's rows
//! encoded and the call compared across ranks, then a new vector or an
//! append.

use ::mpi::topology::Communicator;
use hdf5::Group;

use super::comm::{agree, all_ok, span, Span};
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

/// Bytes of rows in the first batch of a vector whose rows are all plain
/// ([`local::plain_type`]), which every rank writes together; the rest
/// each rank writes on its own as it encodes them ([`RankRows::write`]).
/// Debug builds (the tests') use 4 KiB, so the tests' plain vectors have
/// ranks with rows after it and ranks without.
const FIRST_BYTES: usize = if cfg!(debug_assertions) {
    4 << 10
} else {
    1 << 20
};

/// A rank's rows of one call: encoded at once, or (plain rows) a first
/// batch, then the rest.
pub(super) struct RankRows<'r, T> {
    /// The first batch (every row when not plain).
    pub first: Local,
    /// The rows after it.
    rest: &'r [T],
    /// The ranks' rows are plain (the same on every rank).
    plain: bool,
    opts: SaveOptions,
}

impl<'r, T: H5Vector> RankRows<'r, T> {
    /// Rows encoded already, in one batch.
    pub(super) fn whole(local: Local, opts: &SaveOptions) -> Self {
        RankRows {
            first: local,
            rest: &[],
            plain: false,
            opts: opts.clone(),
        }
    }

    /// This rank's rows.
    fn rows(&self) -> u64 {
        self.first.rows + self.rest.len() as u64
    }

    /// Writes every batch into the vector's data group `data`, this rank's
    /// rows at `top`. Collective.
    ///
    /// The first batch goes in with every rank (extents set, collective
    /// writes where a dataset has filters). Then, for plain rows, when no
    /// dataset needed a collective write, each rank encodes the rest and
    /// writes them as they come on its own ([`super::forward`]:
    /// independent writes at its offsets, while the others do the same),
    /// and the ranks meet once at the end; else the rest go in at once,
    /// with every rank (a batch boundary in a compressed chunk would
    /// compress it twice).
    fn write<C: Communicator>(self, comm: &C, data: &Group, top: &Span) -> Result<()> {
        let RankRows {
            first,
            rest,
            plain,
            opts,
        } = self;
        let at = |done: u64, local: &Local| Span {
            start: top.start,
            // `done` rows of this rank before these: at most its rows, so
            // `base + done` stays inside `total`.
            base: top.base + done,
            local: local.rows,
            total: top.total,
        };
        let merge = Merge::new(comm, &first.kept);
        merge.node(&first.stored, &first.data, data, &at(0, &first), "$")?;
        if !plain {
            return Ok(());
        }
        if merge.wrote_collectively() {
            if super::comm::max(comm, rest.len() as u64) == 0 {
                return Ok(());
            }
            let local = all_ok(comm, local::encode(rest, &opts, true), "$")?;
            let merge = Merge::new(comm, &local.kept);
            let at = at(first.rows, &local);
            return merge.node(&local.stored, &local.data, data, &at, "$");
        }
        let mine = match rest {
            [] => Ok(()),
            _ => super::forward::append(&first, rest, &opts, data, top.base),
        };
        all_ok(comm, mine, "$")
    }
}

/// Encodes this rank's rows (plain rows: the first batch), then checks
/// with the other ranks that every one encoded its rows and makes the same
/// call. Collective.
pub(super) fn prepare<'r, T: H5Vector, C: Communicator>(
    verb: &str,
    name: &str,
    rows: &'r [T],
    opts: &SaveOptions,
    comm: &C,
) -> Result<RankRows<'r, T>> {
    // The schema alone (no rows): the same for every rank of the same call.
    let plain = local::plain_type::<T>(opts);
    let head = if plain {
        (FIRST_BYTES / std::mem::size_of::<T>().max(1)).max(1)
    } else {
        rows.len()
    };
    let (now, rest) = rows.split_at(head.min(rows.len()));
    // Plain rows stay in the memory file, which the rest is appended to.
    let first = all_ok(comm, local::encode(now, opts, !plain), "$")?;
    agree(comm, &describe::<T>(verb, name, &first, opts), "$")?;
    Ok(RankRows {
        first,
        rest,
        plain,
        opts: opts.clone(),
    })
}

/// Checks that the ranks can append to every dataset of the vector's data
/// group `data` (`raw::mpio::appendable`): the same verdict on every
/// rank, before anything is written.
fn appendable(data: &Group) -> Result<()> {
    local::each_dataset(data, &mut |at, ds| {
        if crate::raw::mpio::appendable(ds) {
            return Ok(());
        }
        Err(Error::invalid(
            at,
            "h5vec::mpi cannot append to this dataset: one process created it (HDF5 \
             allocates its chunks when they are first written, which parallel HDF5 \
             1.10 cannot do for one rank alone); append with one process, or save \
             the vector with h5vec::mpi",
        ))
    })
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
    rows: RankRows<'_, T>,
    opts: &SaveOptions,
    comm: &C,
    stream: bool,
) -> Result<u64> {
    let top = span(comm, 0, rows.rows(), "$")?;
    let len_hint = if stream { u64::MAX } else { top.total };
    let mut session = crate::vector::start_new::<T>(parent, name, opts, len_hint)?;
    // What the encoders hold from their creation (a list's OFFSETS[0])
    // goes in first, or their later flush would write over the rows.
    session.trim_tails()?;
    let data = session.group().group("data").at("$")?;
    rows.write(comm, &data, &top)?;
    drop(data);
    session.finish_written(top.total)
}
/// Appends the encoded rows of every rank to vector `name`: the rows,
/// flush, `count`, flush. Returns the new length. Collective.
pub(super) fn append_local<T: H5Vector, C: Communicator>(
    parent: &Group,
    name: &str,
    rows: RankRows<'_, T>,
    comm: &C,
) -> Result<u64> {
    crate::file::check_writable(parent, name)?;
    let v = crate::vector::open_vector(parent, name, crate::guard::Access::Append)?;
    if v.schema != rows.first.stored {
        return Err(Error::mismatch(
            "$",
            "the schema tree these rows are saved with",
            "another stored in the vector (another type, or strings in another layout)",
        ));
    }
    appendable(&v.data)?;
    // Statistics and search indexes would be stale (SPEC.md section 16).
    if v.meta.link_exists(crate::query::stats::GROUP) {
        v.meta.unlink(crate::query::stats::GROUP).at("$")?;
    }
    let file = parent.file().at("$")?;
    let top = span(comm, v.count, rows.rows(), "$")?;
    rows.write(comm, &v.data, &top)?;
    crate::raw::flush_file(&file, "$")?;
    crate::vector::metadata::write_count(&v.meta, top.total)?;
    crate::raw::flush_file(&file, "$")?;
    Ok(top.total)
}
