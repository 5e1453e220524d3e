//! Reading without the Rust type: a vector (from its schema tree), an h5col
//! table (from its columns) or a VLS string array into Arrow record
//! batches (SPEC.md section 11).
//!
//! The container is opened as a typed load opens it (the walk of section
//! 7, the metadata, the schema tree); then a tree of column readers
//! ([`nodes`]) is built from the schema node and the data group, each
//! checked on open by the same functions the typed decoders use. Reading a
//! range of rows is one HDF5 read per dataset; numbers go straight into the
//! Arrow buffers.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema, SchemaRef};
use hdf5::Group;

use crate::codec::{expect_members, open_group, Codec};
use crate::error::{Error, Place, Result};
use crate::guard::{self, Access, Walked};
use crate::kinds::blob::BlobCodec;
use crate::kinds::list::{
    check_class, open_leaf_values, open_list_group, FillDecoder, FillNumber, ItemCodec,
    StringValuesItem, LIST_COLUMN as LIST_COLUMN_CLASS, RECORD_VALUES, STRING_VALUES,
};
use crate::kinds::nullable::{check_nullable, child_with_mask, open_mask, MASK};
use crate::kinds::scalar::open_values;
use crate::kinds::string::VlenStrDecoder;
use crate::kinds::vls::VlsCodec;
use crate::raw::{self, Bits8, Pod};
use crate::schema::{ids, Kind, Schema, Stored};
use crate::vector::{check_name, container_place, open_vector, Opened};

use super::mapping::{self, dense_shape, field_of, number_type, VALUE_COLUMN};

pub(crate) mod nodes;
mod typed;
mod union;

use nodes::{
    check_len, Blob, Bools, BoxNode, Chars, Constant, FixedStrs, Levels, List, Nullable, Prim,
    Record, StrValues, Unknown, VlenStrs, Vls,
};

/// What `read_vector` and the others read, for errors.
const EXPECTED: &str = "an h5vec vector, h5col table or VLS string array";

/// Reads the whole vector, h5col table or VLS string array `name` of
/// `group` into one record batch, from what the file says alone (SPEC.md
/// section 11).
///
/// ```
/// use h5vec::arrow::arrow_array::{cast::AsArray, types::Int32Type};
///
/// #[derive(h5vec::H5Vector)]
/// struct Point { x: i32, label: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("p.h5"))?;
/// let points = [Point { x: 1, label: "a".into() }, Point { x: 2, label: "b".into() }];
/// h5vec::save_vector(&file, "points", &points)?;
/// let batch = h5vec::arrow::read_vector(&file, "points")?;
/// assert_eq!(batch.num_rows(), 2);
/// assert_eq!(batch.column(0).as_primitive::<Int32Type>().values(), &[1, 2]);
/// assert_eq!(batch.column(1).as_string::<i64>().value(1), "b");
/// # Ok(()) }
/// ```
pub fn read_vector(group: &Group, name: &str) -> Result<RecordBatch> {
    let mut src = Source::open(group, name, None)?;
    let rows = src.rows;
    src.read(0..rows)
}

/// Reads rows `rows` of vector, h5col table or VLS string array `name`,
/// reading only what those rows need. A range past the row count is an
/// error, as for [`crate::load_range`].
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("r.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u8, 2, 3, 4])?;
/// let batch = h5vec::arrow::read_range(&file, "xs", 1..3)?;
/// assert_eq!(batch.num_rows(), 2);
/// assert!(h5vec::arrow::read_range(&file, "xs", 3..5).is_err());
/// # Ok(()) }
/// ```
pub fn read_range(group: &Group, name: &str, rows: Range<u64>) -> Result<RecordBatch> {
    let mut src = Source::open(group, name, None)?;
    crate::stream::check_range(&rows, src.rows)?;
    src.read(rows)
}

/// The record batches of `name`, `batch_rows` rows each (the last may be
/// shorter): the container is opened and checked once, and each step reads
/// only its rows, so memory stays bounded for vectors larger than RAM.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("b.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1.0f64, 2.0, 3.0])?;
/// let batches = h5vec::arrow::batches(&file, "xs", 2)?;
/// assert_eq!((batches.rows(), batches.remaining()), (3, 3));
/// let sizes: Vec<usize> = batches.map(|b| b.map(|b| b.num_rows())).collect::<Result<_, _>>()?;
/// assert_eq!(sizes, [2, 1]);
/// # Ok(()) }
/// ```
pub fn batches(group: &Group, name: &str, batch_rows: usize) -> Result<Batches> {
    let src = Source::open(group, name, None)?;
    let rows = src.rows;
    Batches::new(src, 0..rows, batch_rows)
}

/// The record batches of rows `rows` of `name`, `batch_rows` rows each (the
/// last may be shorter): [`batches`] over a range, the container opened and
/// checked once. A range past the row count is an error, as for
/// [`read_range`].
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("br.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u16, 2, 3, 4, 5])?;
/// let batches = h5vec::arrow::batches_range(&file, "xs", 1..4, 2)?;
/// assert_eq!((batches.rows(), batches.remaining()), (5, 3));
/// let sizes: Vec<usize> = batches.map(|b| b.map(|b| b.num_rows())).collect::<Result<_, _>>()?;
/// assert_eq!(sizes, [2, 1]);
/// assert!(h5vec::arrow::batches_range(&file, "xs", 4..6, 2).is_err());
/// # Ok(()) }
/// ```
pub fn batches_range(
    group: &Group,
    name: &str,
    rows: Range<u64>,
    batch_rows: usize,
) -> Result<Batches> {
    let src = Source::open(group, name, None)?;
    crate::stream::check_range(&rows, src.rows)?;
    Batches::new(src, rows, batch_rows)
}

/// The record batches of some columns of `name`: [`batches_range`] (all
/// rows with `rows = None`) reading and checking only the columns named in
/// `columns`, in the order given.
///
/// A column is named as in the batches of [`read_schema`]: `x` is the
/// batch column `x` (`value` when the vector is not a record), and `a.b`
/// the field `b` of the record column `a` (at any depth): the result's
/// `a` is then a struct of the fields named (a record named whole takes
/// all its fields). Each field's `h5vec.schema` metadata (and the
/// batch's) describes what was selected, so that the batches write back
/// as a vector of those columns. A name that is no column, or that goes
/// inside something other than a record, is an error naming it. Columns
/// not named are never opened: a column this version of h5vec cannot read
/// (an unknown kind or codec, SPEC.md section 11) does not stop reading
/// the others.
///
/// ```
/// use h5vec::arrow::arrow_array::{cast::AsArray, types::Float64Type};
///
/// #[derive(h5vec::H5Vector)]
/// struct Pos { x: f64, y: f64 }
/// #[derive(h5vec::H5Vector)]
/// struct Row { id: u32, pos: Pos, name: String }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("c.h5"))?;
/// let rows = [Row { id: 1, pos: Pos { x: 0.5, y: 1.5 }, name: "a".into() }];
/// h5vec::save_vector(&file, "rows", &rows)?;
/// let mut batches = h5vec::arrow::batches_columns(&file, "rows", &["name", "pos.y"], None, 100)?;
/// let batch = batches.next().unwrap()?;
/// let schema = batch.schema();
/// let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
/// assert_eq!(names, ["name", "pos"]);
/// let pos = batch.column(1).as_struct();
/// assert_eq!(pos.column_names(), ["y"]);
/// assert_eq!(pos.column(0).as_primitive::<Float64Type>().value(0), 1.5);
/// assert!(h5vec::arrow::batches_columns(&file, "rows", &["pos.z"], None, 100).is_err());
/// # Ok(()) }
/// ```
pub fn batches_columns(
    group: &Group,
    name: &str,
    columns: &[&str],
    rows: Option<Range<u64>>,
    batch_rows: usize,
) -> Result<Batches> {
    let picks = parse_picks(columns)?;
    let src = Source::open(group, name, Some(&picks))?;
    let rows = match rows {
        Some(r) => {
            crate::stream::check_range(&r, src.rows)?;
            r
        }
        None => 0..src.rows,
    };
    Batches::new(src, rows, batch_rows)
}

/// The Arrow schema of `name` (what [`read_vector`] returns), with every
/// check of opening it but no row read.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("s.h5"))?;
/// h5vec::save_vector(&file, "xs", &[Some(1i64), None])?;
/// let schema = h5vec::arrow::read_schema(&file, "xs")?;
/// assert_eq!(schema.field(0).name(), "value");
/// assert!(schema.field(0).is_nullable());
/// # Ok(()) }
/// ```
pub fn read_schema(group: &Group, name: &str) -> Result<SchemaRef> {
    Ok(Source::open(group, name, None)?.schema)
}

/// Record batches of a vector, h5col table or VLS array, read one after the
/// other ([`batches`], [`batches_range`]). After an error the iterator ends.
///
/// ```
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("b.h5"))?;
/// h5vec::save_vector(&file, "xs", &[1u8, 2, 3])?;
/// let mut batches = h5vec::arrow::batches(&file, "xs", 2)?;
/// assert_eq!(batches.schema().field(0).name(), "value");
/// let first = batches.next().unwrap()?;
/// assert_eq!((first.num_rows(), batches.remaining(), batches.rows()), (2, 1, 3));
/// # Ok(()) }
/// ```
pub struct Batches {
    src: Source,
    next: u64,
    /// One past the last row to return.
    end: u64,
    batch: u64,
}

impl Batches {
    fn new(src: Source, rows: Range<u64>, batch_rows: usize) -> Result<Batches> {
        if batch_rows == 0 {
            return Err(Error::invalid("$", "batch_rows must be at least 1"));
        }
        Ok(Batches {
            src,
            next: rows.start,
            end: rows.end,
            batch: batch_rows as u64,
        })
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.src.schema.clone()
    }

    /// The rows of the whole container.
    pub fn rows(&self) -> u64 {
        self.src.rows
    }

    /// The rows not yet returned.
    pub fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.next)
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let end = self.next.saturating_add(self.batch).min(self.end);
        let r = self.src.read(self.next..end);
        self.next = if r.is_ok() { end } else { self.end };
        Some(r)
    }
}

/// An opened container: the batch schema, the reader of its rows, and what
/// keeps the walked objects open.
struct Source {
    schema: SchemaRef,
    /// A record root (vectors): the columns are its fields.
    record_root: bool,
    root: BoxNode,
    rows: u64,
    /// The root stores nothing (constants): rows per read are capped.
    no_data: bool,
    _keep: Keep,
}

/// What must stay open while a container is read.
// The fields are never read: holding them keeps the walked objects open.
#[allow(dead_code)]
enum Keep {
    Vector(Box<Opened>),
    Walk(Walked),
}

impl Source {
    /// Opens container `name` of `parent`; `select`: only these columns.
    fn open(parent: &Group, name: &str, select: Option<&[Pick]>) -> Result<Source> {
        check_name(parent, name, "vector")?;
        let at = container_place(parent, name);
        if !parent.link_exists(name) {
            return Err(Error::not_found(
                &at,
                format!(
                    "no vector, h5col table or VLS array `{name}` in `{}`",
                    parent.name()
                ),
            ));
        }
        let Ok(group) = parent.group(name) else {
            return Err(Error::mismatch(
                &at,
                EXPECTED,
                guard::describe_member(parent, name),
            ));
        };
        let attr = |n: &str| raw::attr_string(&group, n, &at).ok().flatten();
        if attr("CLASS").as_deref() == Some(crate::h5col::COLUMN_TABLE) {
            return open_table(parent, name, select);
        }
        if attr("type").as_deref() == Some(crate::vls::TYPE_VLS) {
            if let Some(picks) = select {
                check_value_pick(picks)?;
            }
            let (walked, dec) = crate::vls::open_strings(&group)?;
            let field = Arc::new(Field::new(VALUE_COLUMN, DataType::LargeUtf8, true));
            return Ok(Source {
                schema: Arc::new(ArrowSchema::new(vec![field])),
                record_root: false,
                rows: dec.len(),
                root: Box::new(Vls {
                    dec,
                    nullable: true,
                    ptrs: Vec::new(),
                    json: false,
                }),
                no_data: false,
                _keep: Keep::Walk(walked),
            });
        }
        if !group.link_exists("metadata") {
            let mut members = group.member_names().unwrap_or_default();
            members.truncate(8);
            return Err(Error::mismatch(
                &at,
                EXPECTED,
                format!("a group that is none of them (members {members:?})"),
            ));
        }
        drop(group);
        let v = open_vector(parent, name, Access::Read)?;
        let selected = match select {
            Some(picks) => Some(select_node(&v.schema, picks)?),
            None => None,
        };
        let stored = selected.as_ref().unwrap_or(&v.schema);
        let root = Schema::from(stored);
        let schema = mapping::schema_for(&root)?;
        let record_root = root.kind == Kind::Record;
        let field = if record_root {
            Field::new("", DataType::Struct(schema.fields().clone()), false)
        } else {
            schema.field(0).clone()
        };
        let node = open_node(&v.data, stored, "$", v.count, &field)?;
        Ok(Source {
            schema,
            record_root,
            root: node,
            rows: v.count,
            no_data: !has_data(stored),
            _keep: Keep::Vector(Box::new(v)),
        })
    }

    fn read(&mut self, rows: Range<u64>) -> Result<RecordBatch> {
        let n = crate::codec::range_len(&rows, "$")?;
        if self.no_data {
            crate::limits::check_rows_without_data(n, "a vector without data", "$")?;
        }
        let len = usize::try_from(n).map_err(|_| Error::invalid("$", "too many rows"))?;
        let arr = self.root.read(rows, None)?;
        check_len(&arr, len, &Place::from("$"))?;
        let columns = if self.record_root {
            let s = arr
                .as_any()
                .downcast_ref::<StructArray>()
                .ok_or_else(|| Error::invalid("$", "the root record did not read as a struct"))?;
            s.columns().to_vec()
        } else {
            vec![arr]
        };
        let opts = RecordBatchOptions::new().with_row_count(Some(len));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &opts)
            .map_err(|e| Error::invalid("$", format!("cannot build the record batch: {e}")))
    }
}

// ---------------------------------------------------------------------------
// Selecting columns.

/// A selected column: its name, and the selected fields of a record
/// (`None`: the whole column).
struct Pick {
    name: String,
    sub: Option<Vec<Pick>>,
}

/// The selection of dotted column names `columns`, in the order given;
/// a name given again merges into the first (a whole record wins).
fn parse_picks(columns: &[&str]) -> Result<Vec<Pick>> {
    fn add(picks: &mut Vec<Pick>, segs: &[&str]) {
        let Some((seg, rest)) = segs.split_first() else {
            return;
        };
        let i = match picks.iter().position(|p| p.name == *seg) {
            Some(i) => i,
            None => {
                picks.push(Pick {
                    name: (*seg).to_owned(),
                    sub: Some(Vec::new()),
                });
                picks.len() - 1
            }
        };
        let pick = &mut picks[i];
        if rest.is_empty() {
            pick.sub = None;
        } else if let Some(sub) = &mut pick.sub {
            add(sub, rest);
        }
    }
    let mut picks = Vec::new();
    for c in columns {
        let segs: Vec<&str> = c.split('.').collect();
        if segs.iter().any(|s| s.is_empty()) {
            return Err(Error::invalid(
                "$",
                format!("{c:?} is not a column name (empty segment)"),
            ));
        }
        add(&mut picks, &segs);
    }
    Ok(picks)
}

/// The error for a selected name that is not there.
fn no_column(path: &str, name: &str, there: &[String]) -> Error {
    Error::not_found(
        child_path_of(path, name),
        format!(
            "no column `{name}` in `{path}` (its columns are: {})",
            there.join(", ")
        ),
    )
}

fn child_path_of(path: &str, name: &str) -> String {
    crate::codec::child_path(path, name)
}

/// The selection of a container whose only column is `value` (a vector
/// whose root is not a record, a VLS array).
fn check_value_pick(picks: &[Pick]) -> Result<()> {
    for p in picks {
        if p.name != VALUE_COLUMN {
            return Err(no_column("$", &p.name, &[VALUE_COLUMN.to_owned()]));
        }
        if p.sub.is_some() {
            return Err(not_a_record(&child_path_of("$", VALUE_COLUMN)));
        }
    }
    Ok(())
}

fn not_a_record(path: &str) -> Error {
    Error::mismatch(
        path,
        "a record (to select some of its fields)",
        "another kind of column",
    )
}

/// The selected columns of a table, whose columns are `order`.
fn select_columns(order: &[String], picks: &[Pick]) -> Result<Vec<String>> {
    picks
        .iter()
        .map(|p| {
            if !order.contains(&p.name) {
                return Err(no_column("$", &p.name, order));
            }
            if p.sub.is_some() {
                return Err(not_a_record(&crate::h5col::column_path(&p.name)));
            }
            Ok(p.name.clone())
        })
        .collect()
}

/// The root node `root` cut down to the selected columns.
fn select_node(root: &Stored, picks: &[Pick]) -> Result<Stored> {
    if root.kind == Kind::Record {
        select_record(root, picks, "$")
    } else {
        check_value_pick(picks)?;
        Ok(root.clone())
    }
}

/// Record node `node` at `path` with the fields `picks` only, in their
/// order; the others stay in its data group, as members nothing reads.
fn select_record(node: &Stored, picks: &[Pick], path: &str) -> Result<Stored> {
    let names = node.field_names.clone().unwrap_or_default();
    let mut out = Stored {
        field_names: Some(Vec::with_capacity(picks.len())),
        children: Vec::with_capacity(picks.len()),
        ..node.clone()
    };
    for p in picks {
        let Some(i) = names.iter().position(|n| *n == p.name) else {
            return Err(no_column(path, &p.name, &names));
        };
        let child = node.child(i, path)?;
        let cpath = child_path_of(path, &p.name);
        let child = match &p.sub {
            None => child.clone(),
            Some(sub) => select_nested(child, sub, &cpath)?,
        };
        out.children.push(child);
        if let Some(f) = out.field_names.as_mut() {
            f.push(p.name.clone());
        }
    }
    out.extra_members.extend(
        names
            .iter()
            .filter(|n| !picks.iter().any(|p| p.name == **n))
            .cloned(),
    );
    Ok(out)
}

/// Some fields of a record field (or of an `Option` of one).
fn select_nested(node: &Stored, picks: &[Pick], path: &str) -> Result<Stored> {
    let plain =
        |n: &Stored| n.kind == Kind::Record && (n.codec == ids::STRUCT || n.codec == ids::TUPLE);
    if plain(node) {
        return select_record(node, picks, path);
    }
    if node.kind == Kind::Nullable && node.children.len() == 1 && plain(&node.children[0]) {
        let mut out = node.clone();
        out.children[0] = select_record(&node.children[0], picks, path)?;
        return Ok(out);
    }
    Err(not_a_record(path))
}

/// Whether a node stores anything (not a constant, nor a record of them,
/// nor a dense array without elements).
fn has_data(node: &Stored) -> bool {
    match node.kind {
        Kind::Constant => false,
        Kind::Record => node.children.iter().any(has_data),
        Kind::Dense => node
            .dimensions
            .as_deref()
            .is_none_or(|d| d.iter().all(|&x| x != 0)),
        _ => true,
    }
}

// ---------------------------------------------------------------------------
// Building the readers of a schema tree.

/// Calls `$body` with `$T` the arrow primitive type of `$dt`, or `$other`.
macro_rules! with_prim {
    ($dt:expr, $T:ident => $body:expr, _ => $other:expr) => {{
        use arrow_array::types::*;
        match $dt {
            DataType::Int8 => {
                type $T = Int8Type;
                $body
            }
            DataType::Int16 => {
                type $T = Int16Type;
                $body
            }
            DataType::Int32 => {
                type $T = Int32Type;
                $body
            }
            DataType::Int64 => {
                type $T = Int64Type;
                $body
            }
            DataType::UInt8 => {
                type $T = UInt8Type;
                $body
            }
            DataType::UInt16 => {
                type $T = UInt16Type;
                $body
            }
            DataType::UInt32 => {
                type $T = UInt32Type;
                $body
            }
            DataType::UInt64 => {
                type $T = UInt64Type;
                $body
            }
            DataType::Float32 => {
                type $T = Float32Type;
                $body
            }
            DataType::Float64 => {
                type $T = Float64Type;
                $body
            }
            _ => $other,
        }
    }};
}

/// The `FixedSizeList` levels of `ty` (innermost first) and its leaf type.
fn levels_of(ty: &DataType) -> (Levels, DataType) {
    let mut levels = Vec::new();
    let mut t = ty.clone();
    while let DataType::FixedSizeList(f, n) = t {
        levels.push((f.clone(), n));
        t = f.data_type().clone();
    }
    levels.reverse();
    (Levels(levels), t)
}

/// The node a scalar or dense leaf is checked against (kind, identifiers,
/// encoded type, dimensions).
fn leaf_want(node: &Stored) -> Schema {
    let mut want = Schema::new(
        node.kind.clone(),
        if node.kind == Kind::Dense {
            ids::DENSE
        } else {
            ids::SCALAR
        },
        &node.codec,
        "",
    );
    want.encoded_type = node.encoded_type.clone();
    want.dimensions = node.dimensions.clone();
    want
}

/// Where a scalar, dense or leaf node's values are: a `values` dataset in
/// the node's data group, or a list's `VALUES` dataset.
enum LeafAt<'a> {
    Group(&'a Group),
    Member(&'a Group, &'a str),
}

/// Opens a numbers, bool or char leaf (scalar, dense, list element) of
/// Arrow type `ty`; `count` rows at least.
fn open_leaf(
    at: LeafAt<'_>,
    node: &Stored,
    path: &str,
    count: u64,
    ty: &DataType,
) -> Result<BoxNode> {
    let (levels, leaf) = levels_of(ty);
    let inner: Vec<u64> = if node.kind == Kind::Dense {
        dense_shape(&Schema::from(node), path)?
            .into_iter()
            .map(|d| d as u64)
            .collect()
    } else {
        Vec::new()
    };
    let want = leaf_want(node);
    fn col<R: Pod>(
        at: &LeafAt<'_>,
        node: &Stored,
        path: &str,
        count: u64,
        want: &Schema,
        inner: &[u64],
    ) -> Result<crate::column::PodReader<R>> {
        match at {
            LeafAt::Group(g) => open_values::<R>(g, node, path, count, want, inner),
            LeafAt::Member(g, name) => {
                let (ds, n) = open_leaf_values::<R>(g, name, node, path, count, want, inner)?;
                crate::column::PodReader::new(ds, inner.to_vec(), n, path)
            }
        }
    }
    if matches!(leaf, DataType::Dictionary(..)) {
        // A labelled enum (SPEC.md section 11): its codes, then their labels.
        let schema = Schema::from(node);
        let Some((names, values)) = mapping::labels(&schema, path)? else {
            return Err(Error::invalid(
                path,
                "a dictionary for an enum without labels",
            ));
        };
        let (names, codes) = union::Labels::tables(names, values);
        let enc = number_type(node.encoded_type.as_deref().unwrap_or("")).unwrap_or(DataType::Null);
        let per = inner
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?));
        let per = per.ok_or_else(|| Error::invalid(path, "dense element too large"))?;
        let (inner_node, at) = with_prim!(&enc, T => {
            let c = col::<<T as arrow_array::types::ArrowPrimitiveType>::Native>(&at, node, path, count, &want, &inner)?;
            let place = c.place().clone();
            (Box::new(Prim::<T> { col: c, fill: None, levels: Levels::default(), lent: None }) as BoxNode, place)
        }, _ => return Err(Error::mismatch(path, "an enum of integers", format!("encoded type {:?}", node.encoded_type))));
        return Ok(Box::new(union::Labels {
            inner: inner_node,
            levels,
            per,
            names,
            codes,
            at,
        }));
    }
    Ok(match &leaf {
        DataType::Boolean => Box::new(Bools {
            col: col::<Bits8>(&at, node, path, count, &want, &inner)?,
            levels,
        }),
        DataType::Utf8 => Box::new(Chars {
            col: col::<i32>(&at, node, path, count, &want, &inner)?,
            levels,
        }),
        t => with_prim!(t, T => Box::new(Prim::<T> {
            col: col::<<T as arrow_array::types::ArrowPrimitiveType>::Native>(&at, node, path, count, &want, &inner)?,
            fill: None,
            levels,
            lent: None,
        }) as BoxNode, _ => return Err(Error::mismatch(
            path,
            "numbers, Bool or char values",
            format!("a `{}` node", node.kind),
        ))),
    })
}

/// The reader of a node this version does not know (SPEC.md section 11):
/// nothing below it is opened, and reading it is an error naming `path`.
fn unknown_reader(node: &Stored, path: &str) -> Option<BoxNode> {
    let why = mapping::unknown(node)?;
    Some(Box::new(Unknown {
        path: path.to_owned(),
        why,
    }))
}

/// The readers of `node`, whose data group is `group`, `count` rows, typed
/// as `field`.
fn open_node(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
) -> Result<BoxNode> {
    if let Some(node) = unknown_reader(node, path) {
        return Ok(node);
    }
    let at = Place::new(path, group.name());
    Ok(match &node.kind {
        Kind::Scalar if matches!(field.data_type(), DataType::LargeUtf8) => {
            let mut want =
                Schema::new(Kind::Scalar, ids::SCALAR, &node.codec, "").encoded("String");
            if node.codec != ids::JSON {
                want.codec = ids::IDENTITY.into();
            }
            Box::new(VlenStrs {
                dec: VlenStrDecoder::open_with(group, node, path, count, &want)?,
                at,
                json: node.codec == ids::JSON,
            })
        }
        Kind::Scalar | Kind::Dense if typed::is_typed(field.data_type()) => {
            typed::open_typed(group, None, node, path, count, field.data_type())?
        }
        Kind::Scalar | Kind::Dense => {
            open_leaf(LeafAt::Group(group), node, path, count, field.data_type())?
        }
        Kind::List if node.codec == ids::MAP_CODEC => {
            typed::open_map(group, node, path, count, field, open_item)?
        }
        Kind::Record => open_record(group, node, path, count, field)?,
        Kind::Union => union::open_union(group, node, path, count, field)?,
        Kind::Constant => {
            let want = Schema::new(Kind::Constant, ids::CONSTANT, ids::CONSTANT_CODEC, "");
            node.expect(&want, path)?;
            expect_members(group, &[], node, path)?;
            // Inside a `nullable`: a struct without fields (SPEC.md section 11).
            let empty_struct = matches!(field.data_type(), DataType::Struct(f) if f.is_empty());
            Box::new(Constant { at, empty_struct })
        }
        Kind::Blob => Box::new(Blob {
            dec: <BlobCodec<()> as Codec>::open(group, node, path, count)?,
            at,
        }),
        Kind::VlsString if node.codec == ids::JSON => {
            // JSON text in the VLS layout (SPEC.md section 4.1): checked as
            // the typed load checks it.
            let dec = <crate::kinds::json::JsonCodec<serde_json::Value> as Codec>::open(
                group, node, path, count,
            )?
            .into_vls()
            .ok_or_else(|| Error::mismatch(path, "a vls_string node", "another layout"))?;
            Box::new(Vls {
                dec,
                nullable: false,
                ptrs: Vec::new(),
                json: true,
            })
        }
        Kind::VlsString => {
            let nullable = node.codec == ids::PLACEHOLDER_CODEC;
            let dec = if nullable {
                <VlsCodec<Option<String>> as Codec>::open(group, node, path, count)?
            } else {
                <VlsCodec<String> as Codec>::open(group, node, path, count)?
            };
            Box::new(Vls {
                dec,
                nullable,
                ptrs: Vec::new(),
                json: false,
            })
        }
        Kind::List => open_list(group, node, path, count, field)?,
        Kind::Nullable => {
            check_nullable(node, path)?;
            let mask = open_mask(group, path, count)?;
            let inner = open_node(group, &child_with_mask(node, path)?, path, count, field)?;
            Box::new(Nullable { mask, inner })
        }
        other => {
            return Err(Error::mismatch(
                path,
                "a schema kind of a vector field (scalar, dense, record, constant, blob, \
                 vls_string, list, nullable)",
                format!("`{other}`"),
            ))
        }
    })
}

fn open_record(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
) -> Result<BoxNode> {
    let codec = if node.codec == ids::TUPLE || node.codec == ids::OFFSET_DATE_TIME_CODEC {
        node.codec.as_str()
    } else {
        ids::STRUCT
    };
    let mut want = Schema::new(Kind::Record, ids::RECORD, codec, "");
    let names = node.field_names.clone().unwrap_or_default();
    want.field_names = Some(names.clone());
    want.children = vec![Schema::new(Kind::default(), "", "", ""); names.len()];
    node.expect(&want, path)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    expect_members(group, &refs, node, path)?;
    let DataType::Struct(fields) = field.data_type() else {
        return Err(Error::invalid(path, "a record without a struct type"));
    };
    let mut children = Vec::with_capacity(names.len());
    for ((name, child), f) in names.iter().zip(&node.children).zip(fields.iter()) {
        let p = format!("{path}.{name}");
        let g = open_group(group, name, &p)?;
        children.push(open_node(&g, child, &p, count, f)?);
    }
    Ok(Box::new(Record {
        fields: fields.clone(),
        children,
        at: Place::new(path, group.name()),
    }))
}

/// A list group `group` of `count` rows.
fn open_list(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    field: &Field,
) -> Result<BoxNode> {
    let (offsets, total) = open_list_group(group, node, path, count)?;
    let DataType::LargeList(item_field) = field.data_type() else {
        return Err(Error::invalid(path, "a list without a list type"));
    };
    let child = node.child(0, path)?;
    let ipath = format!("{path}[]");
    if !has_data(child) {
        crate::limits::check_rows_without_data(total, "list elements without data", &ipath)?;
    }
    let item = open_item(group, "VALUES", child, &ipath, total, item_field)?;
    Ok(Box::new(List {
        offsets,
        total,
        item,
        field: item_field.clone(),
        offs: Vec::new(),
    }))
}

/// The element member `name` of a list group `parent`, at least `rows` elements.
fn open_item(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    field: &FieldRef,
) -> Result<BoxNode> {
    if let Some(node) = unknown_reader(node, path) {
        return Ok(node);
    }
    Ok(match &node.kind {
        Kind::Scalar | Kind::Dense if typed::is_typed(field.data_type()) => {
            typed::open_typed(parent, Some(name), node, path, rows, field.data_type())?
        }
        Kind::List if node.codec == ids::MAP_CODEC => {
            let g = open_group(parent, name, path)?;
            typed::open_map(&g, node, path, rows, field, open_item)?
        }
        Kind::Scalar | Kind::Dense => {
            if matches!(field.data_type(), DataType::LargeUtf8) {
                return Err(Error::mismatch(
                    path,
                    "list elements h5vec stores (numbers, bool, char, enums, arrays, strings as \
                     string_values, lists, records)",
                    "variable-length strings",
                ));
            }
            open_leaf(
                LeafAt::Member(parent, name),
                node,
                path,
                rows,
                field.data_type(),
            )?
        }
        Kind::FillNullable => {
            let want = Schema::new(Kind::FillNullable, ids::FILL_SCHEMA, ids::FILL_CODEC, "")
                .encoded(node.encoded_type.as_deref().unwrap_or(""));
            node.expect(&want, path)?;
            fn fill<T: arrow_array::types::ArrowPrimitiveType>(
                parent: &Group,
                name: &str,
                path: &str,
                rows: u64,
            ) -> Result<BoxNode>
            where
                T::Native: FillNumber,
            {
                let (col, fill) =
                    FillDecoder::<T::Native>::open(parent, name, path, rows)?.into_parts();
                Ok(Box::new(Prim::<T> {
                    col,
                    fill,
                    levels: Levels::default(),
                    lent: None,
                }))
            }
            with_prim!(field.data_type(), T => fill::<T>(parent, name, path, rows)?,
                _ => return Err(Error::mismatch(path, "a fill_nullable number", field.data_type())))
        }
        Kind::StringValues => Box::new(StrValues {
            dec: StringValuesItem::open(parent, name, node, path, rows)?,
            at: Place::new(path, crate::codec::member_path(parent, name)),
        }),
        Kind::List => {
            let g = open_group(parent, name, path)?;
            open_list(&g, node, path, rows, field)?
        }
        Kind::Record => {
            let g = open_group(parent, name, path)?;
            check_class(&g, RECORD_VALUES, path)?;
            open_record(&g, node, path, rows, field)?
        }
        Kind::Union => {
            let g = open_group(parent, name, path)?;
            check_class(&g, crate::kinds::union::UNION_VALUES, path)?;
            union::open_union(&g, node, path, rows, field)?
        }
        Kind::Nullable => {
            check_nullable(node, path)?;
            let child = child_with_mask(node, path)?;
            if child.kind != Kind::StringValues && child.kind != Kind::List {
                return Err(Error::mismatch(
                    path,
                    "nullable list elements of strings or lists",
                    format!("nullable `{}` elements", child.kind),
                ));
            }
            let g = open_group(parent, name, path)?;
            let mask = open_mask(&g, path, rows)?;
            let inner = open_item(parent, name, &child, path, rows, field)?;
            Box::new(Nullable { mask, inner })
        }
        other => {
            return Err(Error::mismatch(
                path,
                "a list element kind (scalar, dense, fill_nullable, string_values, list, record, \
                 nullable)",
                format!("`{other}`"),
            ))
        }
    })
}

// ---------------------------------------------------------------------------
// h5col tables: the columns say what they are.

fn open_table(parent: &Group, name: &str, select: Option<&[Pick]>) -> Result<Source> {
    let (table, walked, nrows) = crate::h5col::open_checked(parent, name, Access::Read)?;
    let tp = crate::h5col::table_place(&table);
    let order = match crate::h5col::read_column_order(&table, &tp)? {
        Some(o) => o,
        None => {
            let mut m = table.member_names().map_err(|e| Error::hdf5(&tp, e))?;
            m.sort();
            m
        }
    };
    let order = match select {
        Some(picks) => select_columns(&order, picks)?,
        None => order,
    };
    let mut fields = Vec::with_capacity(order.len());
    let mut children = Vec::with_capacity(order.len());
    for col in &order {
        let (f, n) = open_table_column(&table, col, nrows)?;
        fields.push(Arc::new(f));
        children.push(n);
    }
    let fields = Fields::from(fields);
    Ok(Source {
        schema: Arc::new(ArrowSchema::new(fields.clone())),
        record_root: true,
        root: Box::new(Record {
            fields,
            children,
            at: tp,
        }),
        rows: nrows,
        no_data: false,
        _keep: Keep::Walk(walked),
    })
}

/// What table columns and list elements can be, for errors.
const TABLE_COLUMN: &str =
    "an h5col column (numbers, h5col bool, fixed-length strings, list groups)";

fn open_table_column(table: &Group, name: &str, nrows: u64) -> Result<(Field, BoxNode)> {
    let path = crate::h5col::column_path(name);
    let at = Place::new(&path, crate::codec::member_path(table, name));
    if let Ok(g) = table.group(name) {
        let node = infer_list(&g, &path, 1)?;
        let field = field_of(name, &Schema::from(&node), false, &path)?;
        let n = open_node(&g, &node, &path, nrows, &field)?;
        return Ok((field, n));
    }
    let ds = table
        .dataset(name)
        .map_err(|_| Error::mismatch(&at, TABLE_COLUMN, guard::describe_member(table, name)))?;
    let info = raw::type_info(&ds, &at)?;
    use hdf5_sys::h5t::H5T_class_t::*;
    match info.class {
        H5T_ENUM if info.size == 1 => {
            let col = crate::h5col::open_bool_col(table, name, nrows)?;
            let field = Field::new(name, DataType::Boolean, false);
            Ok((
                field,
                Box::new(Bools {
                    col,
                    levels: Levels::default(),
                }),
            ))
        }
        H5T_STRING if !info.vlen_str => {
            let rdr = crate::h5col::open_fixed_str(table, name, nrows)?;
            let field = Field::new(name, DataType::LargeUtf8, rdr.has_fill());
            Ok((field, Box::new(FixedStrs { rdr, at })))
        }
        H5T_INTEGER | H5T_FLOAT => {
            let ty = number_of(&info)
                .and_then(number_type)
                .ok_or_else(|| Error::mismatch(&at, TABLE_COLUMN, info.describe()))?;
            fn num<T: arrow_array::types::ArrowPrimitiveType>(
                table: &Group,
                name: &str,
                path: &str,
                nrows: u64,
            ) -> Result<(Prim<T>, bool)>
            where
                T::Native: FillNumber,
            {
                let (col, fill) =
                    FillDecoder::<T::Native>::open(table, name, path, nrows)?.into_parts();
                let nullable = fill.is_some();
                Ok((
                    Prim {
                        col,
                        fill,
                        levels: Levels::default(),
                        lent: None,
                    },
                    nullable,
                ))
            }
            with_prim!(&ty, T => {
                let (p, nullable) = num::<T>(table, name, &path, nrows)?;
                Ok((Field::new(name, ty.clone(), nullable), Box::new(p) as BoxNode))
            }, _ => Err(Error::mismatch(&at, TABLE_COLUMN, info.describe())))
        }
        _ => Err(Error::mismatch(&at, TABLE_COLUMN, info.describe())),
    }
}

/// The encoded type of a number dataset type, if it is one.
fn number_of(info: &raw::TypeInfo) -> Option<&'static str> {
    use hdf5_sys::h5t::H5T_class_t::*;
    Some(match (info.class, info.size, info.signed) {
        (H5T_INTEGER, 1, true) => "Int8",
        (H5T_INTEGER, 2, true) => "Int16",
        (H5T_INTEGER, 4, true) => "Int32",
        (H5T_INTEGER, 8, true) => "Int64",
        (H5T_INTEGER, 1, false) => "UInt8",
        (H5T_INTEGER, 2, false) => "UInt16",
        (H5T_INTEGER, 4, false) => "UInt32",
        (H5T_INTEGER, 8, false) => "UInt64",
        (H5T_FLOAT, 4, _) => "Float32",
        (H5T_FLOAT, 8, _) => "Float64",
        _ => return None,
    })
}

/// A node as h5vec writes it for the same layout (no logical type).
fn stored(
    kind: Kind,
    schema: &str,
    codec: &str,
    encoded: Option<&str>,
    children: Vec<Stored>,
) -> Stored {
    Stored {
        kind,
        schema: schema.into(),
        codec: codec.into(),
        encoded_type: encoded.map(str::to_owned),
        children,
        ..Stored::default()
    }
}

/// Wraps `node` in a `nullable` node when `group` has a MASK.
fn masked(group: &Group, node: Stored) -> Stored {
    if group.link_exists(MASK) {
        stored(
            Kind::Nullable,
            ids::NULLABLE,
            ids::MASK_CODEC,
            None,
            vec![node],
        )
    } else {
        node
    }
}

/// The node of list group `g` (a table's list column, or a nested list),
/// from its members: the list, `nullable` around it with a MASK; `depth`
/// list levels deep (at most [`crate::limits::MAX_TABLE_LIST_DEPTH`]).
fn infer_list(g: &Group, path: &str, depth: usize) -> Result<Stored> {
    let at = Place::new(path, g.name());
    if depth > crate::limits::MAX_TABLE_LIST_DEPTH {
        return Err(Error::invalid(
            &at,
            format!(
                "list columns nested more than {} deep",
                crate::limits::MAX_TABLE_LIST_DEPTH
            ),
        ));
    }
    let class = raw::attr_string(g, "CLASS", &at)?;
    if class.as_deref() != Some(LIST_COLUMN_CLASS) {
        return Err(Error::mismatch(
            &at,
            "a list column group (CLASS = \"LIST_COLUMN\")",
            class.map_or("no CLASS attribute".into(), |c| format!("CLASS = {c:?}")),
        ));
    }
    let item = infer_item(g, "VALUES", &format!("{path}[]"), depth)?;
    let list = stored(Kind::List, ids::LIST, ids::H5VEC_CODEC, None, vec![item]);
    Ok(masked(g, list))
}

/// The node of the `VALUES` member of list group `parent`.
/// `depth`: the list levels around it.
fn infer_item(parent: &Group, name: &str, path: &str, depth: usize) -> Result<Stored> {
    let at = Place::new(path, crate::codec::member_path(parent, name));
    if !parent.link_exists(name) {
        return Err(Error::mismatch(&at, "a list's VALUES", "nothing"));
    }
    if let Ok(g) = parent.group(name) {
        let class = raw::attr_string(&g, "CLASS", &at)?;
        return match class.as_deref() {
            Some(STRING_VALUES) => Ok(masked(
                &g,
                stored(
                    Kind::StringValues,
                    ids::STRING_VALUES,
                    ids::H5VEC_CODEC,
                    Some("String"),
                    vec![],
                ),
            )),
            Some(LIST_COLUMN_CLASS) => infer_list(&g, path, depth + 1),
            Some(RECORD_VALUES) => Err(Error::mismatch(
                &at,
                "list elements a table describes by itself",
                "RECORD_VALUES (h5vec's record elements have no schema in an h5col table; \
                 load the table with its Rust type)",
            )),
            other => Err(Error::mismatch(
                &at,
                "CLASS STRING_VALUES or LIST_COLUMN",
                format!("{other:?}"),
            )),
        };
    }
    let ds = parent
        .dataset(name)
        .map_err(|_| Error::mismatch(&at, TABLE_COLUMN, guard::describe_member(parent, name)))?;
    let info = raw::type_info(&ds, &at)?;
    let shape = raw::shape(&ds, &at)?;
    let enc = if raw::is_h5col_bool(&ds, &at)? {
        "Bool"
    } else {
        number_of(&info).ok_or_else(|| Error::mismatch(&at, TABLE_COLUMN, info.describe()))?
    };
    if shape.len() > 1 {
        let mut node = stored(Kind::Dense, ids::DENSE, ids::IDENTITY, Some(enc), vec![]);
        let dims = shape[1..]
            .iter()
            .rev()
            .map(|&d| i64::try_from(d).map_err(|_| Error::invalid(&at, "dimension out of range")))
            .collect::<Result<Vec<_>>>()?;
        node.dimensions = Some(dims);
        return Ok(node);
    }
    let dt = raw::dataset_type(&ds, &at)?;
    let filled = enc != "Bool" && raw::user_fill(&ds, dt.id(), info.size, &at)?.is_some();
    Ok(if filled {
        stored(
            Kind::FillNullable,
            ids::FILL_SCHEMA,
            ids::FILL_CODEC,
            Some(enc),
            vec![],
        )
    } else {
        stored(Kind::Scalar, ids::SCALAR, ids::IDENTITY, Some(enc), vec![])
    })
}
