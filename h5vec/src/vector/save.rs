//! Saving a whole slice as a new vector: one write session (SPEC.md
//! section 8) that links the vector only when it is complete.

use hdf5::Group;

use crate::codec::{Codec, Encoder, H5Vector};
use crate::error::Result;
use crate::options::{SaveOptions, WriteCtx};

use super::session::{Link, NewVector, WriteSession};
use super::writer::Typed;

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
    let mut s = start_new::<T>(parent, name, opts, values.len() as u64)?;
    push_rows(&mut s, values)?;
    s.finish().map(drop)
}

/// Pushes `values` into the session `s` (of a save or an append): one
/// write batch at a time, column by column over blocks that stay in cache
/// (each field's pass over a whole batch would stream every row from
/// memory again).
pub(super) fn push_rows<T: H5Vector>(s: &mut WriteSession<Typed<T>>, values: &[T]) -> Result<()> {
    let block = push_block_rows(std::mem::size_of::<T>());
    s.guard(|s| {
        let mut rest = values;
        while !rest.is_empty() {
            let (batch, tail) = rest.split_at(s.room().min(rest.len()));
            for b in batch.chunks(block) {
                s.enc.0.push_all(b.iter())?;
            }
            s.wrote(batch.len())?;
            rest = tail;
        }
        Ok(())
    })
}

/// A new vector `name` with no rows yet, anonymous until the session
/// links it, its datasets sized for `len_hint` rows: the session of a
/// save, and of `h5vec::mpi`'s saves (whose rows the ranks write by
/// collective writes, not through the encoder, linked by
/// `WriteSession::finish_written`).
pub(crate) fn start_new<T: H5Vector>(
    parent: &Group,
    name: &str,
    opts: &SaveOptions,
    len_hint: u64,
) -> Result<WriteSession<Typed<T>>> {
    let ctx = WriteCtx { opts, len_hint };
    let new = NewVector {
        schema: &T::Codec::schema(&ctx),
        logical_type: std::any::type_name::<T>(),
        len_hint,
        link: Link::Finish,
        commit_often: false,
    };
    WriteSession::create(parent, name, opts, new, |data, ctx| {
        T::Codec::create(data, "$", ctx).map(Typed::<T>)
    })
}

/// Rows pushed column by column at a time: about 64 KiB of values, so the
/// rows are still in the core's cache when the next field reads them.
fn push_block_rows(row_bytes: usize) -> usize {
    ((64 << 10) / row_bytes.max(1)).max(1)
}
