//! h5col tables as query sources (SPEC.md section 14.7): a table's columns
//! are the leaves ([`Leaf::open_table`](super::leaf::Leaf::open_table)),
//! and a column's search indexes are the datasets of the table's
//! `SEARCH_INDEXES` group its `SEARCH_INDEX_LIST` attribute references.
//!
//! ```text
//! <table>/@GENERATION, @NROWS               scalar uint64 (the tokens' reference)
//! <table>/<col>/@SEARCH_INDEX_LIST          1-D H5T_STD_REF_OBJ, the column's indexes
//! <table>/SEARCH_INDEXES/<index>            @KIND, @SOURCE_GENERATION, @SOURCE_NROWS
//!   CHUNK_MINMAX: 1-D compound {min T, max T, nan_count u64, fill_count u64, n u64},
//!   one entry per chunk of the column
//! ```
//!
//! As h5col's query layer does, nothing about a table's indexes is ever an
//! error: a missing, malformed, unresolvable (null, dangling, outside
//! `SEARCH_INDEXES`) or stale reference (tokens not equal to `GENERATION`
//! and `NROWS`, strictly read as scalar uint64), or a token-valid
//! `CHUNK_MINMAX` whose entries do not describe the column's chunks, is no
//! index, and the query reads the rows instead.

use hdf5::{Dataset, Group};

use super::stats::{bound_kind_of, chunk_len, read_u64_attr};
use crate::error::Place;
use crate::raw::bounds::BoundKind;
use crate::raw::minmax::{entry_type, memory_entry_type, Entry};
use crate::raw::{self, MemType, RefTarget};

/// The table's group of search-index datasets.
const SEARCH_INDEXES: &str = "SEARCH_INDEXES";
/// The column attribute listing its indexes.
const SEARCH_INDEX_LIST: &str = "SEARCH_INDEX_LIST";

/// One search index of a table column: its `KIND` and dataset.
pub(crate) struct TableIndex {
    pub(crate) kind: String,
    pub(crate) ds: Dataset,
}

/// The valid search indexes of column dataset `col` of `table`, in the
/// order its `SEARCH_INDEX_LIST` lists them (see the module documentation
/// for what is skipped). Never an error.
pub(crate) fn valid_indexes(table: &Group, col: &Dataset) -> Vec<TableIndex> {
    let at = Place::new("$", col.name());
    let Ok(si) = table.group(SEARCH_INDEXES) else {
        return Vec::new();
    };
    if !raw::has_attr(col, SEARCH_INDEX_LIST, &at).unwrap_or(false) {
        return Vec::new();
    }
    let (Ok(a), Ok(mut names)) = (col.attr(SEARCH_INDEX_LIST), si.member_names()) else {
        return Vec::new();
    };
    names.sort();
    let Ok(targets) = raw::ref_list_targets(&a, &si, &names, &at) else {
        return Vec::new();
    };
    let generation = read_u64_attr(table, "GENERATION");
    let nrows = read_u64_attr(table, "NROWS");
    let mut out = Vec::new();
    for t in targets {
        let RefTarget::Found(i) = t else { continue };
        let Ok(ds) = si.dataset(&names[i]) else {
            continue;
        };
        let valid = generation.is_some()
            && nrows.is_some()
            && read_u64_attr(&ds, "SOURCE_GENERATION") == generation
            && read_u64_attr(&ds, "SOURCE_NROWS") == nrows;
        let kind = raw::attr_string(&ds, "KIND", &at).ok().flatten();
        if let (true, Some(kind)) = (valid, kind) {
            out.push(TableIndex { kind, ds });
        }
    }
    out
}

/// The first valid `CHUNK_MINMAX` index of number, h5col bool or
/// categorical column dataset `col` (`nrows` rows) as statistics: its
/// entries, the column's chunk length and the kind of its bounds. The
/// counts are made to mean what h5col's query layer reads from them:
/// `fill_count` the missing rows (none without a user-defined fill value),
/// `nan_count` the NaN values that are not missing (NaN fill: none).
/// `None` when there is no usable index (also for a bool column declaring
/// a fill value, whose bounds leave out values the query reads as
/// present, and for string columns).
pub(crate) fn table_minmax(
    table: &Group,
    col: &Dataset,
    nrows: u64,
) -> Option<(Vec<Entry>, u64, BoundKind)> {
    let ix = valid_indexes(table, col)
        .into_iter()
        .find(|i| i.kind == "CHUNK_MINMAX")?;
    let p = Place::new("$", ix.ds.name());
    use hdf5_sys::h5t::H5T_class_t as C;
    let col_t = raw::dataset_type(col, &p).ok()?;
    let info = raw::type_info(col, &p).ok()?;
    let float = info.class == C::H5T_FLOAT;
    let boolean = info.class == C::H5T_ENUM && info.size == 1;
    if !(float || boolean || info.class == C::H5T_INTEGER) {
        return None;
    }
    let kind = bound_kind_of(&col_t)?;
    let fill = raw::user_fill(col, col_t.id(), col_t.size(), &p).ok()?;
    if boolean && fill.is_some() {
        return None;
    }
    let chunk = chunk_len(col, nrows.max(1));
    let n = nrows.div_ceil(chunk);
    let shape = raw::shape(&ix.ds, &p).ok()?;
    if shape.len() != 1 || shape[0] < n {
        return None;
    }
    // An h5col bool's bounds keep its enum type (no conversion to a
    // bitfield exists); numbers are widened.
    let mem_t = if boolean {
        entry_type(col_t.id(), false, &p).ok()?
    } else {
        memory_entry_type(kind, &p).ok()?
    };
    let mem = MemType::<Entry>::checked(mem_t, &p).ok()?;
    let mut out = Vec::new();
    crate::limits::reserve(&mut out, n, &p).ok()?;
    crate::pipeline::rows::read_pod_rows::<Entry>(&ix.ds, &mem, 0, n, &[], &mut out, &p).ok()?;
    // The user fill as h5col reads it: NaN (its rows are both NaN and fill).
    let nan_fill = float && fill.is_some() && {
        let f = raw::user_fill(col, *hdf5_sys::h5t::H5T_NATIVE_DOUBLE, 8, &p)
            .ok()
            .flatten()?;
        f64::from_ne_bytes(f.try_into().ok()?).is_nan()
    };
    for (i, e) in out.iter_mut().enumerate() {
        let want = chunk.min(nrows - i as u64 * chunk);
        if e.n != want || e.nan_count > e.n || e.fill_count > e.n {
            return None;
        }
        if !float || nan_fill {
            e.nan_count = 0;
        }
        if fill.is_none() {
            e.fill_count = 0;
        }
        if e.nan_count + e.fill_count > e.n {
            return None;
        }
    }
    Some((out, chunk, kind))
}
