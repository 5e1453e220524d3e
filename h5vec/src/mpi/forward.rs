//! A rank's plain rows ([`super::local::plain_type`]) after the first:
//! the serial append encodes them into the rank's memory file, which
//! forwards every row write (`raw::capture`, forwarding) to the same
//! dataset of the shared file, at the rank's offset, by an independent
//! write. No row is kept and no collective call is made: the rank writes
//! as it encodes, with the serial pipeline's buffers (a few MiB, reused),
//! while the other ranks do the same.
//!
//! A row of the memory vector is the same row of the rank's rows in the
//! shared vector (memory row 0 is the rank's first). Writes past the
//! rank's rows (a partial chunk's padding) are cut; a rewrite of a chunk
//! the first batch wrote carries the same rows again. At the end every
//! dataset must have been sent every row the append added, or the rank
//! fails: a row written to the memory file some other way never reaches
//! the shared file.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hdf5::{Dataset, Datatype, Group};

use super::local::{each_dataset, local_options, Local};
use super::merge::{row_bytes, same_inner};
use crate::error::{Context, Error, Place, Result};
use crate::raw;
use crate::raw::capture::{Capturing, Forward};

/// A dataset of the shared file, ready for a rank's rows.
struct Target {
    ds: Dataset,
    /// The memory dataset's type (its rows' bytes).
    dt: Datatype,
    inner: Vec<u64>,
    row_bytes: usize,
    at: Place,
    /// Runs of the rank's rows sent, `(start, end)`.
    sent: Vec<(u64, u64)>,
}

/// Sends the rows written to a memory vector's datasets into the shared
/// file's.
struct Forwarder {
    /// The memory vector's data group (`/v/data/`).
    prefix: String,
    /// The shared vector's data group.
    shared: Group,
    /// The rank's first row in the shared vector.
    base: u64,
    /// The rank's rows.
    limit: u64,
    targets: HashMap<String, Target>,
}

impl Forwarder {
    fn target(&mut self, local: &Dataset) -> Result<&mut Target> {
        let name = local.name();
        let rel = name
            .strip_prefix(&self.prefix)
            .ok_or_else(|| Error::invalid("$", format!("internal: rows of {name} forwarded")))?
            .to_owned();
        if !self.targets.contains_key(&rel) {
            let at = Place::new("$", format!("{}/{rel}", self.shared.name()));
            let ds = self.shared.dataset(&rel).at(&at)?;
            let dt = raw::dataset_type(local, &at)?;
            let shape = raw::shape(local, &at)?;
            let inner = shape.get(1..).unwrap_or_default().to_vec();
            same_inner(&ds, &inner, &at)?;
            let row_bytes = row_bytes(&dt, &inner, &at)?;
            let t = Target {
                ds,
                dt,
                inner,
                row_bytes,
                at,
                sent: Vec::new(),
            };
            self.targets.insert(rel.clone(), t);
        }
        self.targets
            .get_mut(&rel)
            .ok_or_else(|| Error::invalid("$", "internal: no target"))
    }
}

impl Forward for Forwarder {
    fn rows(&mut self, local: &Dataset, start: u64, rows: u64, parts: &[&[u8]]) -> Result<()> {
        let (base, limit) = (self.base, self.limit);
        let t = self.target(local)?;
        let bytes: usize = parts.iter().map(|p| p.len()).sum();
        if usize::try_from(rows)
            .ok()
            .and_then(|r| r.checked_mul(t.row_bytes))
            != Some(bytes)
        {
            return Err(Error::invalid(
                &t.at,
                "internal: forwarded bytes are not the rows",
            ));
        }
        // Rows past the rank's are a partial chunk's padding.
        let end = start.saturating_add(rows).min(limit);
        let mut row = start;
        for part in parts {
            if row >= end {
                break;
            }
            let n = ((part.len() / t.row_bytes) as u64).min(end - row);
            let at_row = base
                .checked_add(row)
                .ok_or_else(|| Error::invalid(&t.at, "row index overflows"))?;
            let b = &part[..n as usize * t.row_bytes];
            let how = raw::mpio::Transfer::Independent;
            raw::mpio::write_rows(&t.ds, &t.dt, at_row, n, &t.inner, b, how, &t.at)?;
            row += n;
        }
        if row > start {
            t.sent.push((start, row));
        }
        Ok(())
    }
}

/// Appends `rows` to the memory vector of `first` (the first rows of a
/// plain vector, in its memory file), forwarding them into the shared
/// vector's data group `shared`, this rank's first row at `base`, as they
/// are encoded. This rank alone: no collective call.
pub(super) fn append<T: crate::H5Vector>(
    first: &Local,
    rows: &[T],
    opts: &crate::SaveOptions,
    shared: &Group,
    base: u64,
) -> Result<()> {
    let (file, data, done) = (&first.file, &first.data, first.rows);
    let opts = local_options(opts);
    let limit = done
        .checked_add(rows.len() as u64)
        .ok_or_else(|| Error::invalid("$", "row count overflows"))?;
    let to = Arc::new(Mutex::new(Forwarder {
        prefix: format!("{}/", data.name()),
        shared: shared.clone(),
        base,
        limit,
        targets: HashMap::new(),
    }));
    let capturing = Capturing::start_forwarding(file, to.clone(), "$")?;
    // Every write on this thread, which uses MPI.
    let wrote = crate::pipeline::deferred::write_here(|| {
        crate::vector::append_vector_with(file, "v", rows, &opts)
    });
    drop(capturing);
    wrote?;
    let mut fw = to.lock().unwrap_or_else(|e| e.into_inner());
    each_dataset(data, &mut |at, ds| {
        let rel = ds.name();
        let rel = rel.strip_prefix(&fw.prefix).unwrap_or(&rel).to_owned();
        let sent = fw.targets.get_mut(&rel).map(|t| &mut t.sent);
        if covers(sent.map(std::mem::take).unwrap_or_default(), done, limit) {
            return Ok(());
        }
        Err(Error::invalid(
            at,
            "internal: rows of this rank written where h5vec::mpi did not see them",
        ))
    })
}

/// Whether the runs `sent` cover `from..to`.
fn covers(mut sent: Vec<(u64, u64)>, from: u64, to: u64) -> bool {
    sent.sort_unstable();
    let mut next = from;
    for (s, e) in sent {
        if s > next {
            break;
        }
        next = next.max(e);
    }
    next >= to
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn runs_cover_a_range_only_without_gaps() {
        assert!(covers(vec![], 5, 5));
        assert!(!covers(vec![], 5, 6));
        assert!(covers(vec![(8, 20), (0, 8)], 3, 20));
        assert!(covers(vec![(3, 10), (4, 6), (10, 12)], 3, 12));
        assert!(!covers(vec![(3, 10), (11, 12)], 3, 12));
        assert!(!covers(vec![(4, 12)], 3, 12));
        assert!(!covers(vec![(3, 11)], 3, 12));
    }
}
