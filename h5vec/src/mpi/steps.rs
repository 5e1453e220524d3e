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

/// Rows in memory per batch of a vector whose rows are all plain
/// ([`local::plain_type`]): a rank encodes and writes its rows batch after
/// batch, in the same memory each time. Debug builds (the tests') use
/// batches of 4 KiB, so the tests' plain vectors cross batch boundaries,
/// with ranks whose last batches are empty.
const BATCH_BYTES: usize = if cfg!(debug_assertions) {
    4 << 10
} else {
    32 << 20
};

/// A rank's rows of one call: encoded at once, or (plain rows) batch after
/// batch, each batch written before the next is encoded.
pub(super) struct Batches<'r, T> {
    /// The first batch (every row when not in batches).
    pub first: Local,
    /// The rows after it.
    rest: &'r [T],
    /// Rows per batch.
    batch: usize,
    /// Batches, the same on every rank (some empty on some ranks).
    count: u64,
    opts: SaveOptions,
}

impl<'r, T: H5Vector> Batches<'r, T> {
    /// Rows encoded already, in one batch.
    pub(super) fn whole(local: Local, opts: &SaveOptions) -> Self {
        Batches {
            first: local,
            rest: &[],
            batch: 0,
            count: 1,
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
    /// writes where a dataset has filters). Then, when no dataset needed a
    /// collective write, each rank encodes and writes its other batches
    /// on its own (independent writes at its offsets: while one rank
    /// writes, the others encode) and the ranks meet once at the end;
    /// else the other rows go in at once, with every rank (a batch
    /// boundary in a compressed chunk would compress it twice).
    fn write<C: Communicator>(self, comm: &C, data: &Group, top: &Span) -> Result<()> {
        let Batches {
            first,
            rest,
            batch,
            count,
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
        let collective = merge.wrote_collectively();
        if count <= 1 {
            return Ok(());
        }
        let mut done = first.rows;
        if collective {
            let local = all_ok(comm, local::encode(rest, &opts, first.buffers()), "$")?;
            let merge = Merge::new(comm, &local.kept);
            return merge.node(&local.stored, &local.data, data, &at(done, &local), "$");
        }
        let mut spare = first.buffers();
        let mut mine = Ok(());
        for now in rest.chunks(batch.max(1)) {
            let wrote = local::encode(now, &opts, spare).and_then(|local| {
                let merge = Merge::solo(comm, &local.kept);
                merge.node(&local.stored, &local.data, data, &at(done, &local), "$")?;
                done += local.rows;
                Ok(local.buffers())
            });
            match wrote {
                Ok(buffers) => spare = buffers,
                Err(e) => {
                    mine = Err(e);
                    break;
                }
            }
        }
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
) -> Result<Batches<'r, T>> {
    // The schema alone (no rows): the same for every rank of the same call.
    let plain = local::plain_type::<T>(opts);
    let batch = if plain {
        (BATCH_BYTES / std::mem::size_of::<T>().max(1)).max(1)
    } else {
        rows.len()
    };
    // A plain vector's first batch is written with every rank (see
    // `Batches::write`), the others each rank on its own while the others
    // encode: a small first batch starts that sooner.
    let head = if plain { (batch / 32).max(1) } else { batch };
    let (now, rest) = rows.split_at(head.min(rows.len()));
    let first = all_ok(comm, local::encode(now, opts, Vec::new()), "$")?;
    agree(comm, &describe::<T>(verb, name, &first, opts), "$")?;
    // The ranks agreed on the call, so on `plain` and `batch`.
    let count = if plain {
        let more = rows.len().saturating_sub(head).div_ceil(batch) as u64;
        super::comm::max(comm, 1 + more)
    } else {
        1
    };
    Ok(Batches {
        first,
        rest,
        batch,
        count,
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
    rows: Batches<'_, T>,
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
    rows: Batches<'_, T>,
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
