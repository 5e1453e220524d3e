//! A rank's own rows, encoded by the serial save into a file in memory
//! (HDF5's core driver, never written to disk): every kind's encoder runs
//! exactly as for one process, and the merge then copies the columns into
//! the shared file at the rank's offsets. The memory file captures
//! (`raw::capture`): the rows the encoders write are kept as bytes, and
//! the file holds the vector's groups, extents, schema and the few
//! datasets written otherwise.

use hdf5::Group;

use crate::codec::{Codec, H5Vector};
use crate::error::{Context, Place, Result};
use crate::options::{Compression, SaveOptions, WriteCtx};
use crate::raw::capture::{Captured, Capturing};
use crate::schema::{Kind, Schema, Stored};

/// One rank's rows as the serial save lays them out.
pub(super) struct Local {
    /// The vector's `data` group in the memory file.
    pub data: Group,
    /// Its stored schema tree.
    pub stored: Stored,
    /// Rows.
    pub rows: u64,
    /// The rows the encoders wrote, kept.
    pub kept: Captured,
    /// The memory file.
    pub file: hdf5::File,
}

/// The options of the memory file: `opts` (the layout: strings, chunk
/// length) without compression, checksums or statistics, which only cost
/// time here (the shared file applies the caller's).
pub(super) fn local_options(opts: &SaveOptions) -> SaveOptions {
    opts.clone()
        .compression(Compression::None)
        .checksum(false)
        .statistics(false)
        .replace(false)
}

/// The vector `v` of a memory file, refused if a dataset holds
/// variable-length data.
fn opened(file: hdf5::File, rows: u64, kept: Captured) -> Result<Local> {
    let group = file.group("v").at("$")?;
    let data = group.group("data").at("$")?;
    fixed_size(&data)?;
    let schema = group.group("metadata/schema").at("$")?;
    let stored = Stored::read(&schema, "$")?;
    Ok(Local {
        data,
        stored,
        rows,
        kept,
        file,
    })
}

/// Checks that every dataset below `g` (at `rel` in the vector's data
/// group) has a fixed-size type: parallel HDF5 cannot write variable-length
/// data, and an error now, before the ranks create anything, is the same
/// on every rank (they encoded the same layout).
fn fixed_size(g: &Group) -> Result<()> {
    each_dataset(g, &mut |at, ds| {
        let dt = crate::raw::dataset_type(ds, "$")?;
        if crate::raw::plain_size(&dt).is_some() {
            return Ok(());
        }
        Err(crate::error::Error::encode(
            at,
            "parallel HDF5 cannot write variable-length data: store strings in the \
             compressed layout (SaveOptions::vls_strings(true), the default of \
             h5vec::mpi; not #[h5vec(vlen_strings)])",
        ))
    })
}

/// Calls `f` for every dataset below the vector's data group `data`, with
/// its place (`data/a/values`), depth first; stops at the first error.
pub(super) fn each_dataset(
    data: &Group,
    f: &mut impl FnMut(Place, &hdf5::Dataset) -> Result<()>,
) -> Result<()> {
    fn walk(
        g: &Group,
        rel: &str,
        f: &mut impl FnMut(Place, &hdf5::Dataset) -> Result<()>,
    ) -> Result<()> {
        for name in g.member_names().at("$")? {
            let here = format!("{rel}/{name}");
            if let Ok(ds) = g.dataset(&name) {
                f(Place::new("$", format!("data{here}")), &ds)?;
            } else if let Ok(sub) = g.group(&name) {
                walk(&sub, &here, f)?;
            }
        }
        Ok(())
    }
    walk(data, "", f)
}

/// Whether every dataset of the vector `T` saves holds one row per row of
/// the vector, copied as it is (numbers, arrays of them, records and
/// options of those): nothing points into another row space, so a rank's
/// rows of each dataset go at its offset in the vector whatever the other
/// ranks' rows hold, and can be written as they are encoded. From the
/// schema alone, before any row is encoded.
pub(super) fn plain_type<T: H5Vector>(opts: &SaveOptions) -> bool {
    fn plain(s: &Schema) -> bool {
        match s.kind {
            Kind::Scalar | Kind::Dense | Kind::FillNullable | Kind::Constant => true,
            Kind::Record | Kind::Nullable => s.children.iter().all(plain),
            _ => false,
        }
    }
    let ctx = WriteCtx { opts, len_hint: 0 };
    plain(&<T::Codec as Codec>::schema(&ctx))
}

/// Encodes `rows` with the serial save, kept (`capture`) or in the
/// memory file.
pub(super) fn encode<T: H5Vector>(rows: &[T], opts: &SaveOptions, capture: bool) -> Result<Local> {
    let file = crate::file::memory_file()?;
    let capturing = capture.then(|| Capturing::start(&file, "$")).transpose()?;
    crate::vector::save_vector_with(&file, "v", rows, &local_options(opts))?;
    let kept = capturing.map(Capturing::finish).unwrap_or_default();
    opened(file, rows.len() as u64, kept)
}

/// Rows a rank pushes between two collective flushes, encoded as they
/// come by the serial writer into a memory file.
pub(super) struct Pending<T: H5Vector> {
    writer: crate::vector::VectorWriter<T>,
    file: hdf5::File,
    capturing: Capturing,
    pushed: u64,
}

impl<T: H5Vector> Pending<T> {
    /// No rows yet.
    pub(super) fn new(opts: &SaveOptions) -> Result<Self> {
        let file = crate::file::memory_file()?;
        let capturing = Capturing::start(&file, "$")?;
        let writer = crate::vector::VectorWriter::create(&file, "v", &local_options(opts))?;
        Ok(Pending {
            writer,
            file,
            capturing,
            pushed: 0,
        })
    }

    /// One more row.
    pub(super) fn push(&mut self, v: &T) -> Result<()> {
        self.writer.push(v)?;
        self.pushed += 1;
        Ok(())
    }

    /// Rows pushed.
    pub(super) fn len(&self) -> u64 {
        self.pushed
    }

    /// The rows pushed, encoded.
    pub(super) fn finish(self) -> Result<Local> {
        let rows = self.writer.finish()?;
        opened(self.file, rows, self.capturing.finish())
    }
}
