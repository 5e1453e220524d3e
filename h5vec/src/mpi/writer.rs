//! [`VectorWriter`]: ranks that stream rows into one vector.

use ::mpi::topology::Communicator;
use hdf5::Group;

use super::comm::{agree, all_ok};
use super::local::{self, Pending};
use super::steps::{append_local, describe, mpi_options, save_local, RankRows};
use crate::codec::H5Vector;
use crate::error::Result;
use crate::options::SaveOptions;

/// A new vector that every rank of a communicator streams rows into.
///
/// [`push`](Self::push) and [`extend`](Self::extend) are local: each rank
/// encodes its rows as they come, into memory. [`flush`](Self::flush) and
/// [`finish`](Self::finish) are collective: every rank's rows since the
/// last flush go into the vector in rank order, then `count` (SPEC.md
/// section 8). The vector is linked under its name at the first flush (or
/// at `finish`); a job killed before then leaves no vector, one killed
/// later leaves the rows of the last flush. Flush as often as memory needs:
/// every rank must call `flush` the same number of times, whatever rows it
/// pushed (a rank may push none).
///
/// ```no_run
/// # fn main() -> h5vec::Result<()> {
/// # use mpi::traits::*;
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let file = h5vec::mpi::create_file("steps.h5", &world)?;
/// let mut w = h5vec::mpi::VectorWriter::<f64, _>::create(&file, "energy", &Default::default(), &world)?;
/// for step in 0..10 {
///     w.push(&(step as f64 * world.rank() as f64))?;
///     w.flush()?; // collective: every rank's row of this step
/// }
/// assert_eq!(w.finish()?, 10 * world.size() as u64);
/// # Ok(()) }
/// ```
pub struct VectorWriter<'c, T: H5Vector, C: Communicator> {
    parent: Group,
    name: String,
    opts: SaveOptions,
    comm: &'c C,
    pending: Option<Pending<T>>,
    /// Linked under its name (after the first flush).
    linked: bool,
    len: u64,
}

impl<'c, T: H5Vector, C: Communicator> VectorWriter<'c, T, C> {
    /// Starts new vector `name` in `parent` (which must not exist unless
    /// `opts.replace(true)`). Collective: every rank calls it with the same
    /// name, type and options (checked, an error on every rank otherwise).
    pub fn create(parent: &Group, name: &str, opts: &SaveOptions, comm: &'c C) -> Result<Self> {
        let opts = mpi_options(opts);
        let empty = all_ok(comm, local::encode::<T>(&[], &opts, true), "$")?;
        agree(
            comm,
            &describe::<T>("VectorWriter::create", name, &empty, &opts),
            "$",
        )?;
        crate::file::check_writable(parent, name)?;
        crate::containers::check_new_member(parent, name, "vector", Some(opts.get_replace()))?;
        Ok(VectorWriter {
            parent: parent.clone(),
            name: name.to_owned(),
            pending: Some(Pending::new(&opts)?),
            opts,
            comm,
            linked: false,
            len: 0,
        })
    }

    /// Adds one row of this rank (encoded now, written at the next flush).
    /// Not collective.
    pub fn push(&mut self, value: &T) -> Result<()> {
        self.pending()?.push(value)
    }

    /// Adds rows of this rank. Not collective.
    pub fn extend<'a, I>(&mut self, values: I) -> Result<()>
    where
        I: IntoIterator<Item = &'a T>,
        T: 'a,
    {
        let p = self.pending()?;
        values.into_iter().try_for_each(|v| p.push(v))
    }

    /// Rows this rank pushed since the last flush.
    pub fn pending_rows(&self) -> u64 {
        self.pending.as_ref().map_or(0, Pending::len)
    }

    /// The vector's length at the last flush (the same on every rank).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the vector had no rows at the last flush.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes every rank's rows pushed since the last flush, in rank order,
    /// and commits them (a new vector is linked now). Collective.
    pub fn flush(&mut self) -> Result<()> {
        let pending = self.pending.take();
        let local = pending.map_or_else(
            || local::encode::<T>(&[], &self.opts, true),
            Pending::finish,
        );
        let local = all_ok(self.comm, local, "$")?;
        let call = describe::<T>("VectorWriter::flush", &self.name, &local, &self.opts);
        agree(self.comm, &call, "$")?;
        self.len = if self.linked {
            append_local(
                &self.parent,
                &self.name,
                RankRows::<T>::whole(local, &self.opts),
                self.comm,
            )?
        } else {
            let len = save_local::<T, C>(
                &self.parent,
                &self.name,
                RankRows::<T>::whole(local, &self.opts),
                &self.opts,
                self.comm,
                true,
            )?;
            self.linked = true;
            len
        };
        self.pending = Some(Pending::new(&self.opts)?);
        Ok(())
    }

    /// [`flush`](Self::flush), then the vector's length. Collective.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        Ok(self.len)
    }

    fn pending(&mut self) -> Result<&mut Pending<T>> {
        match &mut self.pending {
            Some(p) => Ok(p),
            None => Err(crate::error::Error::invalid(
                "$",
                "this writer failed at its last flush",
            )),
        }
    }
}
