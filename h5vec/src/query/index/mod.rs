//! HEP001 search indexes built on demand (SPEC.md 14.6): [`build_index`],
//! [`drop_index`], [`list_indexes`]; finding a leaf's valid indexes and the
//! answers they give a predicate ([`Answer`], used by `plan.rs`).
//!
//! ```text
//! NAME/metadata/SEARCH_INDEXES/                   group, @GENERATION (scalar uint64)
//!   a.b.values__sorted_rows                       SORTED_ROWS  (sorted.rs)
//!   a.b.values__bitmap, a.b.values__bitmap_values BITMAP       (bitmap.rs)
//!   a.b.values__chunk_bloom                       CHUNK_BLOOM  (bloom.rs)
//!   a.b.values__chunk_minmax                      CHUNK_MINMAX (../stats.rs)
//!     @KIND (fixed-length null-padded ASCII), @SOURCE = "data/a/b/values"
//!     (variable-length UTF-8), @SOURCE_GENERATION, @SOURCE_NROWS (scalar uint64)
//! ```
//!
//! `SOURCE` is the leaf's values dataset below the vector group; a text
//! leaf (no single values dataset) uses the same spelling,
//! `data/<column, "." -> "/">/values`. An index is valid when its tokens
//! equal `GENERATION` and `metadata/count` and its family's attributes are
//! there with the right types; anything else means "no index". A valid
//! index whose content is malformed is an error naming its dataset.

mod bitmap;
mod bloom;
mod common;
mod minmax;
mod murmur3;
mod sorted;
mod table;

use std::fmt;
use std::str::FromStr;

use hdf5::{Dataset, Group};

use super::leaf::Leaf;
use super::lit::Pred;
use super::stats::{self, read_u64_attr};
use crate::error::{Context, Error, Place, Result};
use crate::guard::Access;
use crate::raw;
use crate::schema::Stored;
pub(crate) use common::Answer;
use common::{place, source_dataset, Build, Says};

/// A HEP001 search-index family.
///
/// ```
/// use h5vec::IndexKind;
/// let k: IndexKind = "sorted-rows".parse().unwrap();
/// assert_eq!(k, IndexKind::SortedRows);
/// assert_eq!("SORTED_ROWS".parse::<IndexKind>().unwrap(), k);
/// assert_eq!(k.to_string(), "sorted-rows");
/// assert_eq!(k.hep001(), "SORTED_ROWS");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IndexKind {
    /// `CHUNK_MINMAX`: per-chunk minimum and maximum, NaN and missing
    /// counts (the statistics saves keep).
    ChunkMinMax,
    /// `SORTED_ROWS`: the rows in value order (equality and ranges).
    SortedRows,
    /// `BITMAP`: one bitmap of rows per distinct value (equality).
    Bitmap,
    /// `CHUNK_BLOOM`: a Bloom filter per chunk (equality, chunk skipping).
    ChunkBloom,
}

impl IndexKind {
    const ALL: [IndexKind; 4] = [
        IndexKind::ChunkMinMax,
        IndexKind::SortedRows,
        IndexKind::Bitmap,
        IndexKind::ChunkBloom,
    ];

    /// The family's HEP001 `KIND` (`SORTED_ROWS`).
    pub fn hep001(&self) -> &'static str {
        match self {
            IndexKind::ChunkMinMax => "CHUNK_MINMAX",
            IndexKind::SortedRows => "SORTED_ROWS",
            IndexKind::Bitmap => "BITMAP",
            IndexKind::ChunkBloom => "CHUNK_BLOOM",
        }
    }

    /// The dataset name suffix (`__sorted_rows`).
    fn suffix(self) -> String {
        format!("__{}", self.hep001().to_ascii_lowercase())
    }
}

impl fmt::Display for IndexKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hep001().to_ascii_lowercase().replace('_', "-"))
    }
}

impl FromStr for IndexKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<IndexKind> {
        let norm = s.trim().to_ascii_uppercase().replace('-', "_");
        IndexKind::ALL
            .into_iter()
            .find(|k| k.hep001() == norm)
            .ok_or_else(|| {
                Error::invalid(
                    "$",
                    format!(
                        "unknown index kind {s:?}: expected chunk-minmax, sorted-rows, bitmap or chunk-bloom"
                    ),
                )
            })
    }
}

/// One search index of a vector ([`list_indexes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexInfo {
    column: String,
    kind: IndexKind,
    valid: bool,
    dataset: String,
}

impl IndexInfo {
    /// The column it indexes, as filters name it (`a.b`, `""` for a
    /// vector of scalars).
    pub fn column(&self) -> &str {
        &self.column
    }
    /// Its family.
    pub fn kind(&self) -> IndexKind {
        self.kind
    }
    /// Whether queries use it (its tokens match the vector; a stale index
    /// is ignored until [`build_index`] runs again).
    pub fn valid(&self) -> bool {
        self.valid
    }
    /// Its dataset's path in the file.
    pub fn dataset(&self) -> &str {
        &self.dataset
    }
}

/// The `SOURCE` of filter column `column` (`a.b` -> `data/a/b/values`).
pub(crate) fn source_of(column: &str) -> String {
    match column {
        "" => "data/values".to_owned(),
        c => format!("data/{}/values", c.replace('.', "/")),
    }
}

/// The filter column of `SOURCE` `source` (inverse of [`source_of`]).
fn column_of(source: &str) -> Option<String> {
    let rest = source.strip_prefix("data/")?;
    if rest == "values" {
        return Some(String::new());
    }
    Some(rest.strip_suffix("/values")?.replace('/', "."))
}

/// The dataset name of the `kind` index of `source`.
fn index_name(source: &str, kind: IndexKind) -> String {
    let below = source.strip_prefix("data/").unwrap_or(source);
    format!("{}{}", below.replace('/', "."), kind.suffix())
}

/// An index dataset found in `SEARCH_INDEXES`.
pub(crate) struct Found {
    pub(crate) ds: Dataset,
    kind: IndexKind,
    source: String,
}

/// The index datasets of `meta`'s `SEARCH_INDEXES` (a `KIND` of the four
/// families and a `SOURCE`), and the group; `None` without the group.
fn indexes(meta: &Group) -> Result<Option<(Group, Vec<Found>)>> {
    if !meta.link_exists(stats::GROUP) {
        return Ok(None);
    }
    let Ok(g) = meta.group(stats::GROUP) else {
        return Ok(None);
    };
    let gp = Place::new("$", g.name());
    let mut out = Vec::new();
    for name in g.member_names().at(&gp)? {
        let Ok(ds) = g.dataset(&name) else { continue };
        let p = place(&ds);
        let Some(kind) = kind_of(&ds, &p) else {
            continue;
        };
        if let Ok(Some(source)) = raw::attr_string(&ds, "SOURCE", &p) {
            out.push(Found { ds, kind, source });
        }
    }
    Ok(Some((g, out)))
}

/// Whether index `f` is valid for `count` rows at `generation`: tokens
/// and its family's attributes.
fn is_valid(f: &Found, generation: Option<u64>, count: u64) -> bool {
    if !stats::valid(&f.ds, generation, count) {
        return false;
    }
    match f.kind {
        IndexKind::ChunkMinMax => true,
        IndexKind::SortedRows => sorted::attrs_ok(&f.ds),
        IndexKind::Bitmap => bitmap::attrs_ok(&f.ds),
        IndexKind::ChunkBloom => bloom::params(&f.ds).is_some(),
    }
}

/// The `SEARCH_INDEXES` group of `meta` and its `GENERATION`, made when
/// absent (`GENERATION` 0; a `GENERATION` that is not a scalar uint64 is
/// repaired above every `SOURCE_GENERATION`, as h5col does).
fn ensure_generation(meta: &Group) -> Result<(Group, u64)> {
    let gp = Place::new("$", format!("{}/{}", meta.name(), stats::GROUP));
    let g = if meta.link_exists(stats::GROUP) {
        meta.group(stats::GROUP).map_err(|_| {
            Error::mismatch(&gp, "a group of search indexes", "another kind of object")
        })?
    } else {
        raw::create_group_small(meta, stats::GROUP, &gp)?
    };
    if let Some(n) = read_u64_attr(&g, "GENERATION") {
        return Ok((g, n));
    }
    let mut top = None;
    for name in g.member_names().at(&gp)? {
        if let Ok(ds) = g.dataset(&name) {
            if let Some(s) = read_u64_attr(&ds, "SOURCE_GENERATION") {
                top = Some(top.map_or(s, |t: u64| t.max(s)));
            }
        }
    }
    let n = top.map_or(0, |t| t.saturating_add(1));
    stats::write_u64_attr(&g, "GENERATION", n, &gp)?;
    Ok((g, n))
}

/// Where a container keeps its indexes.
enum Home {
    /// An h5vec vector: `metadata/SEARCH_INDEXES`, linked by `SOURCE`.
    Vector {
        vector: Group,
        data: Group,
        meta: Group,
        schema: Box<Stored>,
    },
    /// An h5col table: `TABLE/SEARCH_INDEXES`, linked from the column's
    /// `SEARCH_INDEX_LIST`; `GENERATION` on the table group.
    Table { table: Group },
}

/// A vector or table opened for building indexes, with its rows.
struct Target {
    home: Home,
    count: u64,
}

/// Keeps what opening a container opened open while it is used (only
/// dropped).
enum Held {
    Vector(#[allow(dead_code)] Box<crate::vector::open::Opened>),
    Table(#[allow(dead_code)] crate::guard::Walked),
}

fn open_target(group: &Group, name: &str) -> Result<(Target, Held)> {
    if crate::containers::classify(group, name) == Some(crate::ContainerKind::Table) {
        let (table, walked, nrows) = crate::h5col::table::open_checked(group, name, Access::Read)?;
        return Ok((
            Target {
                home: Home::Table { table },
                count: nrows,
            },
            Held::Table(walked),
        ));
    }
    let v = crate::vector::open_vector(group, name, Access::Read)?;
    let vector = crate::codec::open_group(group, name, "$")?;
    Ok((
        Target {
            home: Home::Vector {
                vector,
                data: v.data.clone(),
                meta: v.meta.clone(),
                schema: Box::new(v.schema.clone()),
            },
            count: v.count,
        },
        Held::Vector(Box::new(v)),
    ))
}

impl Target {
    /// The leaf `column` names.
    fn open_leaf(&self, column: &str) -> Result<Leaf> {
        match &self.home {
            Home::Vector { data, schema, .. } => Leaf::open(data, schema, column, self.count),
            Home::Table { table } => table_leaf(table, column, self.count),
        }
    }

    /// What identifies `leaf`'s indexes: a vector's `SOURCE`, a table's
    /// column name.
    fn source(&self, leaf: &Leaf, column: &str) -> String {
        match &self.home {
            Home::Vector { .. } if leaf.source.is_empty() => source_of(column),
            Home::Vector { .. } => leaf.source.clone(),
            Home::Table { .. } => column.to_owned(),
        }
    }

    /// The indexes and their group, if any.
    fn indexes(&self) -> Result<Option<(Group, Vec<Found>)>> {
        match &self.home {
            Home::Vector { meta, .. } => indexes(meta),
            Home::Table { table } => table_indexes(table),
        }
    }

    /// `GENERATION` (`None`: absent or malformed).
    fn generation(&self, g: &Group) -> Option<u64> {
        match &self.home {
            Home::Vector { .. } => read_u64_attr(g, "GENERATION"),
            Home::Table { table } => read_u64_attr(table, "GENERATION"),
        }
    }

    /// The index group and `GENERATION`, made when absent.
    fn ensure(&self) -> Result<(Group, u64)> {
        match &self.home {
            Home::Vector { meta, .. } => ensure_generation(meta),
            Home::Table { table } => {
                let p = Place::new("$", table.name());
                let g = match crate::h5col::generation::mutation_generation(table, &p)? {
                    Some(g) => g,
                    None => {
                        stats::write_u64_attr(table, "GENERATION", 0, &p)?;
                        0
                    }
                };
                let si = crate::h5col::generation::SEARCH_INDEXES;
                let group = if table.link_exists(si) {
                    table.group(si).map_err(|_| {
                        Error::mismatch(&p, "a group of search indexes", "another kind of object")
                    })?
                } else {
                    table.create_group(si).at(&p)?
                };
                Ok((group, g))
            }
        }
    }

    /// A vector's text leaf `source`: its rows per chunk ([`text_chunk`]).
    fn text_chunk(&self, source: &str) -> Option<u64> {
        match &self.home {
            Home::Vector { vector, .. } => Some(text_chunk(vector, source, self.count)),
            Home::Table { .. } => None,
        }
    }

    /// The dataset name of the `kind` index of `source`.
    fn name(&self, source: &str, kind: IndexKind) -> String {
        match &self.home {
            Home::Vector { .. } => index_name(source, kind),
            Home::Table { .. } => format!("{source}{}", kind.suffix()),
        }
    }
}

/// The rows per chunk of a vector's text leaf `source` (`data/a/values`):
/// the chunk length of its `values` dataset (one string per row), else of
/// its `pointers` (the VLS layout), else `count` (at least 1).
fn text_chunk(vector: &Group, source: &str, count: u64) -> u64 {
    let ds = vector.dataset(source).ok().or_else(|| {
        let dir = source.rsplit_once('/')?.0;
        vector.dataset(&format!("{dir}/pointers")).ok()
    });
    ds.and_then(|d| d.chunk())
        .and_then(|c| c.first().copied())
        .map_or(count.max(1), |c| c.max(1) as u64)
}

/// The leaf of table column `column` (HEP001 fill values are missing
/// rows).
fn table_leaf(table: &Group, column: &str, nrows: u64) -> Result<Leaf> {
    Leaf::open_table(table, column, nrows)
}

/// The family `ds`'s `KIND` names (`None`: no `KIND`, or one of no family
/// h5vec reads: as HEP001 says, such a dataset is ignored).
fn kind_of(ds: &hdf5::Dataset, p: &Place) -> Option<IndexKind> {
    let kind = raw::attr_string(ds, "KIND", p).ok().flatten()?;
    IndexKind::ALL.into_iter().find(|k| k.hep001() == kind)
}

/// The index datasets of a table (`KIND` of a family), each with the
/// column whose `SEARCH_INDEX_LIST` references it (unreferenced ones are
/// left out).
fn table_indexes(table: &Group) -> Result<Option<(Group, Vec<Found>)>> {
    let si = crate::h5col::generation::SEARCH_INDEXES;
    let Ok(g) = table.group(si) else {
        return Ok(None);
    };
    let tp = Place::new("$", table.name());
    let columns = crate::h5col::table::column_members(table, &tp)?;
    let mut out = Vec::new();
    for name in g.member_names().at(&tp)? {
        let Ok(ds) = g.dataset(&name) else { continue };
        let p = place(&ds);
        let Some(kind) = kind_of(&ds, &p) else {
            continue;
        };
        for c in &columns {
            let Ok(cds) = table.dataset(c) else { continue };
            if table::linked(&cds, &g, &name, &tp).unwrap_or(false) {
                out.push(Found {
                    ds: ds.clone(),
                    kind,
                    source: c.clone(),
                });
                break;
            }
        }
    }
    Ok(Some((g, out)))
}

/// Builds (or rebuilds in place) the `kind` search index of `column` of
/// vector `name`, with tokens that make it valid. `column` is a dotted
/// path as filters name it (`""` for a vector of scalars).
/// `IndexKind::ChunkMinMax` rebuilds the leaf's statistics (and makes them
/// for a leaf under an `Option`, with its nulls as missing rows, or for an
/// h5col table's number, bool or categorical column). Queries then
/// use it ([`select_rows`](crate::select_rows), [`explain`](crate::explain)),
/// until an append makes it stale.
///
/// ```
/// use h5vec::{col, IndexKind};
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("i.h5"))?;
/// let ids: Vec<u64> = (0..1000).map(|i| (i * 7919) % 1000).collect();
/// h5vec::save_vector(&file, "ids", &ids)?;
/// h5vec::build_index(&file, "ids", "", IndexKind::SortedRows)?;
/// let f = col("").eq(42u64);
/// assert_eq!(h5vec::select_rows(&file, "ids", &f)?, [518]); // 518 * 7919 % 1000 == 42
/// let e = h5vec::explain(&file, "ids", &f)?;
/// assert_eq!(e.indexes()[0].1, Some("SORTED_ROWS (1 rows), CHUNK_MINMAX (1 entries)"));
/// # Ok(()) }
/// ```
pub fn build_index(group: &Group, name: &str, column: &str, kind: IndexKind) -> Result<()> {
    let (t, held) = open_target(group, name)?;
    let r = build_on(&t, column, kind);
    drop(held);
    r
}

/// Builds index `kind` of `column` of `t`.
fn build_on(t: &Target, column: &str, kind: IndexKind) -> Result<()> {
    let mut leaf = t.open_leaf(column)?;
    let source = t.source(&leaf, column);
    let (g, generation) = t.ensure()?;
    if let (IndexKind::ChunkMinMax, Home::Vector { vector, meta, .. }) = (kind, &t.home) {
        return minmax::vector_leaf(
            vector, meta, &mut leaf, &source, t.count, generation, column,
        );
    }
    let name = t.name(&source, kind);
    // The existing index of this kind on this column, rewritten in place.
    let existing = t
        .indexes()?
        .map(|(_, f)| f)
        .unwrap_or_default()
        .into_iter()
        .find(|f| f.kind == kind && f.source == source)
        .map(|f| f.ds);
    let table = matches!(t.home, Home::Table { .. });
    let ctx = Build {
        group: &g,
        name: &name,
        existing,
        count: t.count,
        nan_first: table,
        text_chunk: t.text_chunk(&source),
    };
    let ds = match kind {
        IndexKind::SortedRows => sorted::build(&ctx, &mut leaf)?,
        IndexKind::Bitmap => bitmap::build(&ctx, &mut leaf)?,
        IndexKind::ChunkBloom => bloom::build(&ctx, &mut leaf)?,
        IndexKind::ChunkMinMax => minmax::table_column(&ctx, &leaf)?,
    };
    let p = place(&ds);
    raw::write_attr_ascii(&ds, "KIND", kind.hep001(), &p)?;
    if let Home::Vector { .. } = t.home {
        if raw::has_attr(&ds, "SOURCE", &p)? {
            ds.delete_attr("SOURCE").at(&p)?;
        }
        stats::write_str_attr(&ds, "SOURCE", &source, &p)?;
    }
    // Tokens last: the index is valid only once its content is written.
    stats::write_u64_attr(&ds, "SOURCE_GENERATION", generation, &p)?;
    stats::write_u64_attr(&ds, "SOURCE_NROWS", t.count, &p)?;
    if let Home::Table { table } = &t.home {
        let cds = table.dataset(column).at(&p)?;
        table::link(&cds, &g, &name, &p)?;
    }
    Ok(())
}

/// Removes the `kind` index of `column` of vector `name` (a bitmap's
/// values dataset too); `false` when there is none.
///
/// ```
/// use h5vec::IndexKind;
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("d.h5"))?;
/// h5vec::save_vector(&file, "xs", &[3i32, 1, 2])?;
/// h5vec::build_index(&file, "xs", "", IndexKind::Bitmap)?;
/// assert!(h5vec::drop_index(&file, "xs", "", IndexKind::Bitmap)?);
/// assert!(!h5vec::drop_index(&file, "xs", "", IndexKind::Bitmap)?);
/// # Ok(()) }
/// ```
pub fn drop_index(group: &Group, name: &str, column: &str, kind: IndexKind) -> Result<bool> {
    let (t, held) = open_target(group, name)?;
    let source = match &t.home {
        Home::Vector { .. } => t.source(&t.open_leaf(column)?, column),
        Home::Table { .. } => column.to_owned(),
    };
    let Some((g, found)) = t.indexes()? else {
        return Ok(false);
    };
    let mut any = false;
    for f in found {
        if f.kind != kind || f.source != source {
            continue;
        }
        let n = f.ds.name();
        let member = n.rsplit('/').next().unwrap_or(&n).to_owned();
        let p = place(&f.ds);
        drop(f);
        if let Home::Table { table } = &t.home {
            let cds = table.dataset(column).at(&p)?;
            table::unlink(&cds, &g, &member, &p)?;
        }
        if kind == IndexKind::Bitmap {
            let values = format!("{member}_values");
            if g.link_exists(&values) {
                g.unlink(&values).at(&p)?;
            }
        }
        g.unlink(&member).at(&p)?;
        any = true;
    }
    drop(held);
    Ok(any)
}

/// The search indexes of vector `name`: column, family, validity and
/// dataset path, by column then family.
///
/// ```
/// use h5vec::IndexKind;
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("l.h5"))?;
/// h5vec::save_vector(&file, "xs", &[3i32, 1, 2])?;
/// h5vec::build_index(&file, "xs", "", IndexKind::ChunkBloom)?;
/// let all = h5vec::list_indexes(&file, "xs")?;
/// let kinds: Vec<_> = all.iter().map(|i| (i.column(), i.kind(), i.valid())).collect();
/// assert_eq!(kinds, [("", IndexKind::ChunkMinMax, true), ("", IndexKind::ChunkBloom, true)]);
/// assert_eq!(all[1].dataset(), "/xs/metadata/SEARCH_INDEXES/values__chunk_bloom");
/// # Ok(()) }
/// ```
pub fn list_indexes(group: &Group, name: &str) -> Result<Vec<IndexInfo>> {
    let (t, held) = open_target(group, name)?;
    let Some((g, found)) = t.indexes()? else {
        return Ok(Vec::new());
    };
    let generation = t.generation(&g);
    let table = matches!(t.home, Home::Table { .. });
    let mut out: Vec<IndexInfo> = found
        .iter()
        .filter_map(|f| {
            Some(IndexInfo {
                column: if table {
                    f.source.clone()
                } else {
                    column_of(&f.source)?
                },
                kind: f.kind,
                valid: is_valid(f, generation, t.count),
                dataset: f.ds.name(),
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.column, a.kind).cmp(&(&b.column, b.kind)));
    drop(held);
    Ok(out)
}

/// The on-demand indexes of a vector's `meta` (`CHUNK_MINMAX` too: those
/// of leaves under an `Option` are built on demand): column and family,
/// for compaction to rebuild them.
pub(crate) fn on_demand(meta: &Group) -> Result<Vec<(String, IndexKind)>> {
    let mut out: Vec<(String, IndexKind)> = indexes(meta)?
        .map(|(_, f)| f)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| Some((column_of(&f.source)?, f.kind)))
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// After compaction or a copy rewrote vector `vector`'s data (and
/// statistics): its on-demand indexes `list` built again from the new
/// data. A column that no longer resolves is an error.
pub(crate) fn rebuild_after_copy(
    vector: &Group,
    meta: &Group,
    schema: &Stored,
    count: u64,
    list: &[(String, IndexKind)],
) -> Result<()> {
    if list.is_empty() {
        return Ok(());
    }
    let data = crate::codec::open_group(vector, "data", "$")?;
    let t = Target {
        home: Home::Vector {
            vector: vector.clone(),
            data,
            meta: meta.clone(),
            schema: Box::new(schema.clone()),
        },
        count,
    };
    for (column, kind) in list {
        // The statistics of leaves outside an `Option` are rebuilt already.
        if *kind == IndexKind::ChunkMinMax && t.open_leaf(column)?.dataset().is_some() {
            continue;
        }
        build_on(&t, column, *kind)?;
    }
    Ok(())
}

/// The valid on-demand indexes of each leaf, by family.
#[derive(Default)]
pub(crate) struct LeafIndexes {
    sorted: Option<Dataset>,
    bitmap: Option<Dataset>,
    bloom: Option<Dataset>,
    /// A vector's text leaf: its rows per chunk ([`text_chunk`]).
    text_chunk: Option<u64>,
    /// A table column's: the rows where a predicate is unknown are not
    /// taken from its tails (a NaN fill puts missing rows in the NaN
    /// tail), so `not` over it reads the column.
    table: bool,
}

/// The valid on-demand indexes of each of `leaves` (by `SOURCE`).
pub(crate) fn find(meta: &Group, leaves: &[Leaf], count: u64) -> Result<Vec<LeafIndexes>> {
    // The vector group (metadata's parent), for text leaves' chunks.
    let name = meta.name();
    let parent = name
        .rsplit_once('/')
        .map_or("/", |p| if p.0.is_empty() { "/" } else { p.0 });
    let vector = meta.file().and_then(|f| f.group(parent)).ok();
    let mut out: Vec<LeafIndexes> = leaves
        .iter()
        .map(|l| LeafIndexes {
            text_chunk: match (&vector, source_dataset(l)) {
                (Some(v), None) => Some(text_chunk(v, &source_of(&l.column), count)),
                _ => None,
            },
            ..LeafIndexes::default()
        })
        .collect();
    let Some((g, found)) = indexes(meta)? else {
        return Ok(out);
    };
    let generation = read_u64_attr(&g, "GENERATION");
    for f in found {
        if f.kind == IndexKind::ChunkMinMax || !is_valid(&f, generation, count) {
            continue;
        }
        for (l, o) in leaves.iter().zip(out.iter_mut()) {
            let source = if l.source.is_empty() {
                source_of(&l.column)
            } else {
                l.source.clone()
            };
            if source != f.source {
                continue;
            }
            let slot = match f.kind {
                IndexKind::SortedRows => &mut o.sorted,
                IndexKind::Bitmap => &mut o.bitmap,
                _ => &mut o.bloom,
            };
            *slot = Some(f.ds.clone());
        }
    }
    let _ = g;
    Ok(out)
}

/// The valid on-demand indexes of each of `leaves`, columns of h5col
/// table `table` of `nrows` rows (linked by `SEARCH_INDEX_LIST`).
pub(crate) fn find_table(table: &Group, leaves: &[Leaf], nrows: u64) -> Result<Vec<LeafIndexes>> {
    let mut out: Vec<LeafIndexes> = leaves
        .iter()
        .map(|_| LeafIndexes {
            table: true,
            ..LeafIndexes::default()
        })
        .collect();
    let Some((_, found)) = table_indexes(table)? else {
        return Ok(out);
    };
    let generation = read_u64_attr(table, "GENERATION");
    for f in found {
        if f.kind == IndexKind::ChunkMinMax || !is_valid(&f, generation, nrows) {
            continue;
        }
        for (l, o) in leaves.iter().zip(out.iter_mut()) {
            if l.column != f.source {
                continue;
            }
            let slot = match f.kind {
                IndexKind::SortedRows => &mut o.sorted,
                IndexKind::Bitmap => &mut o.bitmap,
                _ => &mut o.bloom,
            };
            *slot = Some(f.ds.clone());
        }
    }
    Ok(out)
}

/// What the valid indexes `ix` of `leaf` (number `i`) say about `pred`
/// (`need_u`: the unknown rows are wanted too), or `None`.
pub(crate) fn answer(
    ix: &LeafIndexes,
    leaf: &mut Leaf,
    i: usize,
    pred: &Pred,
    count: u64,
    need_u: bool,
) -> Result<Option<Answer>> {
    let make = |label: String, what: Says| Answer {
        leaf: i,
        pred: pred.clone(),
        label,
        what,
    };
    if matches!(pred, Pred::Null(_)) {
        return Ok(None);
    }
    if let Some(ds) = &ix.sorted {
        let (t, u) = sorted::answer(ds, leaf, pred, count, need_u && !ix.table)?;
        let label = format!("SORTED_ROWS ({} rows)", t.len());
        return Ok(Some(make(label, Says::Rows { t, u })));
    }
    if let Some(ds) = &ix.bitmap {
        if let Some(t) = bitmap::answer(ds, leaf, pred, count)? {
            return Ok(Some(make("BITMAP".into(), Says::Rows { t, u: None })));
        }
    }
    if let Some(ds) = &ix.bloom {
        if let Some((len, may)) = bloom::answer(ds, leaf, pred, count, ix.text_chunk)? {
            let label = format!(
                "CHUNK_BLOOM ({} of {} chunks)",
                may.iter().filter(|&&m| m).count(),
                may.len()
            );
            return Ok(Some(make(label, Says::Chunks { len, may })));
        }
    }
    Ok(None)
}
