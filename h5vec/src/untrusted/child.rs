//! What the forked child runs: its budgets, the complete check of the file
//! in its own process (every container read row by row, an append tried
//! on a copy), its report on the pipe, `_exit`.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Place, Result};
#[cfg(feature = "arrow")]
use crate::inspect::ContainerKind;

use super::isolation::{Fault, Isolation};
use super::report::{encode, file_place, Found};

/// Rows per batch of the check's reads.
const BATCH_ROWS: usize = 1 << 16;

/// The child: budgets, the check, its report, `_exit`.
pub(super) fn child_main(
    path: &Path,
    isolation: &Isolation,
    scratch: Option<&Path>,
    limit: Option<(u64, u64)>,
    report: &std::os::fd::OwnedFd,
    stderr: &std::os::fd::OwnedFd,
) -> ! {
    use crate::raw::child;
    crate::forked::mark_child();
    let _ = child::redirect_stderr(stderr);
    if let Some((size, data)) = limit {
        if child::limit_memory(size, data).is_err() {
            child::exit_now(3);
        }
    }
    match isolation.fault {
        Some(Fault::Segv) => child::commit(child::Fault::Segv),
        Some(Fault::Abort) => child::commit(child::Fault::Abort),
        Some(Fault::Hang) => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        Some(Fault::Allocate) => {
            let n = limit.map_or(u64::MAX / 2, |l| l.1);
            let n = usize::try_from(n).unwrap_or(usize::MAX / 2);
            let v = std::hint::black_box(vec![1u8; n]);
            std::hint::black_box(&v);
        }
        None => {}
    }
    let r = std::panic::catch_unwind(|| {
        let mut found = check_here(path, isolation.only.as_deref())?;
        if let Some(dir) = scratch {
            try_appends(path, dir, &mut found)?;
        }
        Ok(found)
    });
    let text = match r {
        Ok(found) => encode(found),
        Err(_) => encode(Err(Error::invalid(
            file_place(path),
            "isolated check: h5vec panicked (a bug: please report it with the file)",
        ))),
    };
    let code = match child::write_all(report, text.as_bytes()) {
        Ok(()) => 0,
        Err(_) => 2,
    };
    child::exit_now(code)
}

/// The complete check, in this process.
pub(super) fn check_here(path: &Path, only: Option<&str>) -> Result<Found> {
    let at = file_place(path);
    let file = crate::open_file(path)?;
    let start = match only {
        None => file.as_group().map_err(|e| Error::hdf5(&at, e))?,
        Some(p) => {
            if !file.link_exists(p) {
                return Err(Error::not_found(
                    Place::new("$", p),
                    format!("no vector, h5col table or VLS array at {p}"),
                ));
            }
            file.group(p)
                .map_err(|e| Error::hdf5(Place::new("$", p), e))?
        }
    };
    let mut containers = crate::find_containers(&start)?;
    let mut first = None;
    for c in &mut containers {
        let err = match &c.problem {
            Some(p) => Some(described(&file, &c.path, p)),
            None => read_all(&file, &c.path).err(),
        };
        if let Some(e) = err {
            if c.problem.is_none() {
                c.problem = Some(e.to_string());
                c.rows = 0;
                c.columns = 0;
                c.stored_bytes = 0;
            }
            first.get_or_insert(e);
        }
    }
    Ok(Found { containers, first })
}

/// Appends the last row of every vector of `found` that read without
/// error to a copy of `path` in `dir`: a failure is that vector's problem;
/// HDF5 objects left open after the copy is closed are an error.
#[cfg(feature = "arrow")]
fn try_appends(path: &Path, dir: &Path, found: &mut Found) -> Result<()> {
    let at = file_place(path);
    let copy = dir.join("copy.h5");
    std::fs::copy(path, &copy)
        .map_err(|e| Error::invalid(&at, format!("isolated check: cannot copy the file: {e}")))?;
    let open_before = crate::raw::child::open_hdf5_objects();
    let file = crate::open_file_rw(&copy)?;
    for c in &mut found.containers {
        if c.problem.is_some() || c.kind != ContainerKind::Vector || c.rows == 0 {
            continue;
        }
        let r = parent_of(&file, &c.path).and_then(|(parent, name)| {
            let last = crate::arrow::read_range(&parent, &name, c.rows - 1..c.rows)?;
            crate::arrow::append_record_batch(&parent, &name, &last)
        });
        if let Err(e) = r {
            let e = Error::invalid(
                Place::new("$", c.path.as_str()),
                format!("an append of its last row (to a copy of the file) fails: {e}"),
            );
            c.problem = Some(e.to_string());
            found.first.get_or_insert(e);
        }
    }
    file.close().map_err(|e| Error::hdf5(&at, e))?;
    let left = crate::raw::child::open_hdf5_objects() - open_before;
    if left > 0 {
        return Err(Error::invalid(
            &at,
            format!(
                "isolated check: an append (to a copy of the file) leaves {left} HDF5 objects open"
            ),
        ));
    }
    Ok(())
}

/// Without the feature `arrow` there is no untyped append: nothing is tried.
#[cfg(not(feature = "arrow"))]
fn try_appends(_path: &Path, _dir: &Path, _found: &mut Found) -> Result<()> {
    Ok(())
}

/// The parent group and name of container `path`.
fn parent_of(file: &hdf5::File, path: &str) -> Result<(hdf5::Group, String)> {
    let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
    let parent = if parent.is_empty() { "/" } else { parent };
    let g = file
        .group(parent)
        .map_err(|e| Error::hdf5(Place::new("$", parent), e))?;
    Ok((g, name.to_owned()))
}

/// The error [`crate::inspect`] gives for a container `find_containers`
/// listed with `problem`.
fn described(file: &hdf5::File, path: &str, problem: &str) -> Error {
    match parent_of(file, path) {
        Ok((g, name)) => match crate::inspect(&g, &name) {
            Err(e) => e,
            Ok(_) => Error::invalid(Place::new("$", path), problem),
        },
        Err(e) => e,
    }
}

/// Reads every row of the container at `path`.
#[cfg(feature = "arrow")]
fn read_all(file: &hdf5::File, path: &str) -> Result<()> {
    let (parent, name) = parent_of(file, path)?;
    for batch in crate::arrow::batches(&parent, &name, BATCH_ROWS)? {
        batch?;
    }
    Ok(())
}

/// Reads every row of every dataset below the container at `path` through
/// HDF5, in batches (without the feature `arrow` there is no untyped
/// reader with the kinds' checks).
#[cfg(not(feature = "arrow"))]
fn read_all(file: &hdf5::File, path: &str) -> Result<()> {
    let (parent, name) = parent_of(file, path)?;
    let group = parent
        .group(&name)
        .map_err(|e| Error::hdf5(Place::new("$", path), e))?;
    read_datasets(&group, path, 0)
}

/// Reads every dataset below `group` (hard links only, at most
/// `limits`' depth) in batches of rows in its own type.
#[cfg_attr(feature = "arrow", allow(dead_code))] // tested with arrow on too
fn read_datasets(group: &hdf5::Group, path: &str, depth: usize) -> Result<()> {
    use hdf5::LocationType;
    let at = Place::new("$", path);
    if depth > 160 {
        return Err(Error::invalid(&at, "groups nested more than 160 deep"));
    }
    let mut names = group.member_names().map_err(|e| Error::hdf5(&at, e))?;
    names.sort();
    for name in names {
        if !crate::guard::is_hard_link(group, &name) {
            continue;
        }
        let here = format!("{}/{name}", path.trim_end_matches('/'));
        let p = Place::new("$", here.as_str());
        match group
            .loc_info_by_name(&name)
            .map_err(|e| Error::hdf5(&p, e))?
            .loc_type
        {
            LocationType::Group => {
                let g = group.group(&name).map_err(|e| Error::hdf5(&p, e))?;
                read_datasets(&g, &here, depth + 1)?;
            }
            LocationType::Dataset => {
                let ds = group.dataset(&name).map_err(|e| Error::hdf5(&p, e))?;
                read_dataset(&ds, &p)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads every row of `ds` in batches of at most 4 MiB.
#[cfg_attr(feature = "arrow", allow(dead_code))] // tested with arrow on too
fn read_dataset(ds: &hdf5::Dataset, at: &Place) -> Result<()> {
    let shape = crate::raw::shape(ds, at)?;
    let Some((&rows, inner)) = shape.split_first() else {
        return Ok(()); // a scalar: read by find_containers' checks
    };
    let dt = crate::raw::dataset_type(ds, at)?;
    use hdf5::types::TypeDescriptor as T;
    match dt.to_descriptor() {
        Ok(T::VarLenUnicode | T::VarLenAscii) => {}
        // Not in h5vec's layouts, and memory HDF5 allocates per row.
        Ok(T::VarLenArray(_)) => return Ok(()),
        _ => return read_fixed(ds, &dt, rows, inner, at),
    }
    {
        if !inner.is_empty() {
            return Ok(());
        }
        let mut row = 0;
        while row < rows {
            let n = (rows - row).min(BATCH_ROWS as u64);
            crate::raw::read_vlen_each(ds, row, n, at, &mut |_| {})?;
            row += n;
        }
        Ok(())
    }
}

/// Reads every row of `ds`, of fixed-size type `dt`, in batches.
#[cfg_attr(feature = "arrow", allow(dead_code))] // tested with arrow on too
fn read_fixed(
    ds: &hdf5::Dataset,
    dt: &hdf5::Datatype,
    rows: u64,
    inner: &[u64],
    at: &Place,
) -> Result<()> {
    let row_bytes = inner
        .iter()
        .try_fold(dt.size() as u64, |a, &d| a.checked_mul(d))
        .filter(|&b| b > 0 && b <= 1 << 26)
        .ok_or_else(|| Error::invalid(at, "rows larger than 64 MiB"))?;
    let per = ((4u64 << 20) / row_bytes).max(1);
    let mut buf = Vec::new();
    let mut row = 0;
    while row < rows {
        let n = (rows - row).min(per);
        let len =
            usize::try_from(n * row_bytes).map_err(|_| Error::invalid(at, "batch too large"))?;
        buf.clear();
        buf.resize(len, 0u8);
        // SAFETY: `buf` holds `n` rows of `prod(inner)` elements of the
        // dataset's own type, `row + n` is within its extent.
        unsafe {
            crate::raw::read_rows_raw(ds, dt.id(), row, n, inner, buf.as_mut_ptr().cast(), at)?
        };
        row += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader used without the feature `arrow`: every dataset below a
    /// container, fixed-size, multi-dimensional and variable-length strings.
    #[test]
    fn every_dataset_is_read_without_arrow() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.h5");
        let file = crate::create_file(&path).unwrap();
        let rows: Vec<(u32, String, [f64; 3])> = (0..10_000u32)
            .map(|i| (i, format!("s{i}"), [f64::from(i); 3]))
            .collect();
        let opts = crate::SaveOptions::default().deflate(1).chunk_length(1000);
        crate::save_vector_with(&file, "v", &rows, &opts).unwrap();
        let g = file.group("v").unwrap();
        read_datasets(&g, "/v", 0).unwrap();
        // Rows past the written ones (unwritten chunks) read too.
        crate::save_vector_with(&file, "xs", &[7u64; 5000], &opts).unwrap();
        let at = Place::new("$", "/xs/data/values");
        let ds = file.dataset("xs/data/values").unwrap();
        crate::raw::set_rows(&ds, 20_000, &[], &at).unwrap();
        assert_eq!(crate::raw::shape(&ds, &at).unwrap(), [20_000]);
        read_dataset(&ds, &at).unwrap();
    }
}
