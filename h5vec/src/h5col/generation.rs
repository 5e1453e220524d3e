//! HEP001's index validity tokens on appends (SPEC.md section 9, "Search
//! indexes and appends"): h5vec does not maintain h5col's search indexes
//! yet, so an append publishes a new `GENERATION` and every index becomes
//! detectably stale (h5col's `index_is_valid` is false until h5col's
//! `refresh_indexes` rebuilds it).
//!
//! Layout on disk:
//! ```text
//! <table>/@GENERATION                 scalar uint64, present once an index was built;
//!                                     incremented by every append
//! <table>/SEARCH_INDEXES/<index>      datasets with @KIND and the tokens
//!                                     @SOURCE_GENERATION, @SOURCE_NROWS (scalar uint64):
//!                                     valid iff they equal GENERATION and NROWS
//! ```
//! The order of an append (h5col's `Table.append` without
//! `maintain_indexes`, with a flush between the last two steps): read the
//! old `GENERATION` (a malformed one is first repaired to a value above it
//! and above every index's `SOURCE_GENERATION`, as h5col's
//! `ensure_generation` does; a table with index datasets but without
//! `GENERATION` gets one the same way); write and flush the rows; write
//! `GENERATION + 1` and flush; write `NROWS` and flush. A crash before the
//! new `GENERATION` leaves the old rows and indexes that describe them; a
//! crash after it leaves every index stale.

use hdf5::{Attribute, Group};

use crate::error::{Context, Place, Result};
use crate::raw;

/// The table's generation attribute.
const GENERATION: &str = "GENERATION";
/// The table's group of search-index datasets.
pub(crate) const SEARCH_INDEXES: &str = "SEARCH_INDEXES";
/// An index dataset's generation token.
const SOURCE_GENERATION: &str = "SOURCE_GENERATION";

/// The value of `a` if it is a scalar uint64 (HEP001's strict token read).
fn strict_u64(a: &Attribute, at: &Place) -> Result<Option<u64>> {
    let dt = a.dtype().at(at)?;
    if raw::unsigned_int_size(&dt) != Some(8) || !a.is_scalar() {
        return Ok(None);
    }
    a.read_scalar::<u64>().at(at).map(Some)
}

/// The strict value of attribute `name` of `obj`, `None` if it is absent
/// or not a scalar uint64.
fn token(obj: &hdf5::Location, name: &str, at: &Place) -> Result<Option<u64>> {
    if !raw::has_attr(obj, name, at)? {
        return Ok(None);
    }
    strict_u64(&obj.attr(name).at(at)?, at)
}

/// The search-index datasets of `table` (members of `SEARCH_INDEXES`
/// carrying `KIND`): their strict `SOURCE_GENERATION` tokens.
fn index_generations(table: &Group, at: &Place) -> Result<Option<Vec<Option<u64>>>> {
    let Ok(si) = table.group(SEARCH_INDEXES) else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for n in si.member_names().at(at)? {
        let Ok(ds) = si.dataset(&n) else { continue };
        if raw::has_attr(&ds, "KIND", at)? {
            out.push(token(&ds, SOURCE_GENERATION, at)?);
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

/// Writes `GENERATION = g` on `table` as a scalar uint64 (replacing an
/// attribute of another type or shape).
fn write_generation(table: &Group, g: u64, at: &Place) -> Result<()> {
    let p = at.attribute(GENERATION);
    if raw::has_attr(table, GENERATION, at)? {
        let a = table.attr(GENERATION).at(&p)?;
        if strict_u64(&a, &p)?.is_some() {
            return a.write_scalar(&g).at(&p);
        }
        drop(a);
        table.delete_attr(GENERATION).at(&p)?;
    }
    table
        .new_attr::<u64>()
        .shape(())
        .create(GENERATION)
        .at(&p)?
        .write_scalar(&g)
        .at(&p)
}

/// h5col's `mutation_generation`: the `GENERATION` an append starts from
/// (`None`: the table has none and no index datasets, nothing to bump). A
/// malformed `GENERATION`, or a missing one beside index datasets, is
/// repaired first (written, not flushed) to one above its own lenient
/// value and above every index's `SOURCE_GENERATION`.
pub(crate) fn mutation_generation(table: &Group, at: &Place) -> Result<Option<u64>> {
    let present = raw::has_attr(table, GENERATION, at)?;
    let p = at.attribute(GENERATION);
    if present {
        if let Some(g) = strict_u64(&table.attr(GENERATION).at(&p)?, &p)? {
            return Ok(Some(g));
        }
    }
    let indexes = index_generations(table, at)?;
    if !present && indexes.is_none() {
        return Ok(None);
    }
    let mut floor = 0u64;
    if present {
        // Lenient: any number the attribute holds (h5col: `int(value)`).
        let a = table.attr(GENERATION).at(&p)?;
        if let Ok(v) = a.read_raw::<f64>() {
            if let Some(&x) = v.first() {
                if x.is_finite() && x > 0.0 {
                    floor = x.min(u64::MAX as f64 / 2.0) as u64;
                }
            }
        }
    }
    for g in indexes.into_iter().flatten().flatten() {
        floor = floor.max(g);
    }
    let g = floor.saturating_add(1);
    write_generation(table, g, at)?;
    Ok(Some(g))
}

/// Publishes the append's new generation `g_old + 1` and flushes the file.
pub(crate) fn bump(table: &Group, g_old: u64, at: &Place) -> Result<()> {
    write_generation(table, g_old.saturating_add(1), at)?;
    table.file().at(at)?.flush().at(at)
}
