//! Enums with data in flat form (SPEC.md section 11, "Enums with data in
//! flat form"): a `Struct` of a `variant` column (the variant names,
//! `Dictionary(Int32, Utf8)`) and one nullable struct per variant with
//! fields, for the readers and formats without unions (Parquet, polars,
//! JSON lines, CSV). [`flatten_unions`] turns every dense union of a batch
//! into it; the writers turn it back ([`unflatten_batch`]) before the union
//! writer sees the batch, tags matched by variant name.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, UInt8Type};
use arrow_array::{
    make_array, Array, ArrayRef, DictionaryArray, FixedSizeListArray, GenericListArray, Int32Array,
    MapArray, OffsetSizeTrait, RecordBatch, RecordBatchOptions, StringArray, StructArray,
    UnionArray,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_data::transform::{Capacities, MutableArrayData};
use arrow_schema::{
    ArrowError, DataType, Field, FieldRef, Fields, Schema as ArrowSchema, SchemaRef, UnionFields,
    UnionMode,
};

use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::kinds::list::items_path;
use crate::options::SaveOptions;
use crate::schema::{Kind, Schema};

use super::mapping::{field_metadata, label_type, FLAT, ROOT_KEY, SCHEMA_KEY, UNION_KEY};
use super::write::node::{field_node, parse};

/// The column of variant names in the flat form.
const VARIANT: &str = "variant";

/// Every enum with data (dense `Union` column, as [`read_vector`](super::read_vector)
/// gives it) of `batch`, at any depth (batch columns, struct fields, list and map items, the fields of
/// other unions' variants), replaced by its **flat form**, for the formats
/// and libraries without unions (Parquet, polars, CSV, JSON lines):
///
/// - a `Struct` field of the same name and nullability whose first child is
///   `variant`, `Dictionary(Int32, Utf8)`: the dictionary's values are all
///   the variant names in declaration order, the keys the rows' tags;
/// - then one nullable `Struct` per variant that has fields, named as the
///   variant, holding the variant's fields (tuple variants: `1`, `2`, ...),
///   valid exactly on the rows of that variant. Unit variants have no
///   child.
///
/// A null union row (`Option<Enum>` = `None`) is a null struct (its
/// `variant` and every child null). The struct field's metadata is the
/// union's own (`h5vec.schema` = the union node, `h5vec.kind` = `union`,
/// ...; from its Arrow type when the field has none) plus `h5vec.union =
/// "flat"`, so that [`save_record_batch`](super::save_record_batch),
/// [`save_batches`](super::save_batches) and
/// [`append_record_batch`](super::append_record_batch) store it as the
/// union again: the same vector, which `load_vector::<T>` reads. A variant
/// named `variant` has no flat form (an error naming the field); other
/// columns are returned as they are.
///
/// ```
/// use h5vec::arrow::arrow_array::{cast::AsArray, types::{Float64Type, Int32Type}, Array};
///
/// #[derive(h5vec::H5Vector, Debug, PartialEq)]
/// enum Shape { Circle { r: f64 }, Rect(f64, f64), Empty }
///
/// #[derive(h5vec::H5Vector, Debug, PartialEq)]
/// struct Item { id: u32, shape: Shape }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("f.h5"))?;
/// let items = vec![
///     Item { id: 1, shape: Shape::Circle { r: 0.5 } },
///     Item { id: 2, shape: Shape::Rect(2.0, 3.0) },
///     Item { id: 3, shape: Shape::Empty },
/// ];
/// h5vec::save_vector(&file, "items", &items)?;
///
/// let flat = h5vec::arrow::flatten_unions(&h5vec::arrow::read_vector(&file, "items")?)?;
/// let shape = flat.column(1).as_struct();
/// assert_eq!(shape.column_names(), ["variant", "Circle", "Rect"]);
/// let variant = shape.column(0).as_dictionary::<Int32Type>();
/// assert_eq!(variant.keys().values().to_vec(), [0, 1, 2]);
/// let names = variant.values().as_string::<i32>();
/// assert_eq!(names.iter().flatten().collect::<Vec<_>>(), ["Circle", "Rect", "Empty"]);
/// let circle = shape.column(1).as_struct();
/// assert_eq!((circle.is_valid(0), circle.is_valid(1)), (true, false));
/// assert_eq!(circle.column(0).as_primitive::<Float64Type>().value(0), 0.5);
/// let rect = shape.column(2).as_struct();
/// assert_eq!(rect.column_names(), ["1", "2"]);
/// assert_eq!(flat.schema().field(1).metadata()["h5vec.union"], "flat");
///
/// // The writers take the flat form back as the enum.
/// h5vec::arrow::save_batches(&file, "copy", &flat.schema(), [Ok(flat.clone())], &Default::default())?;
/// assert_eq!(h5vec::load_vector::<Item>(&file, "copy")?, items);
/// # Ok(()) }
/// ```
pub fn flatten_unions(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema_ref();
    let record = schema
        .metadata()
        .get(ROOT_KEY)
        .is_none_or(|k| Kind::parse(k) == Kind::Record);
    let mut fields: Vec<FieldRef> = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    let mut changed = false;
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        let path = column_path(record, f.name());
        match flatten(c, f, &path)? {
            Some((f, c)) => {
                changed = true;
                fields.push(f);
                columns.push(c);
            }
            None => {
                fields.push(f.clone());
                columns.push(c.clone());
            }
        }
    }
    if !changed {
        return Ok(batch.clone());
    }
    let schema = ArrowSchema::new_with_metadata(fields, schema.metadata().clone());
    rebuild_batch(schema, columns, batch.num_rows())
}

/// The logical path of a batch column: `$.name` for the fields of a record
/// root, `$` for the one column of another root.
fn column_path(record: bool, name: &str) -> String {
    if record {
        child_path("$", name)
    } else {
        "$".to_owned()
    }
}

fn rebuild_batch(schema: ArrowSchema, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    let opts = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(schema), columns, &opts)
        .map_err(|e| Error::invalid("$", format!("cannot build the record batch: {e}")))
}

/// An Arrow constructor's refusal at `path`.
fn built(path: &str) -> impl Fn(ArrowError) -> Error + '_ {
    move |e| Error::invalid(path, format!("cannot build the Arrow array: {e}"))
}

/// `field` with type `t`.
fn retyped(field: &Field, t: DataType) -> FieldRef {
    Arc::new(field.clone().with_data_type(t))
}

/// A converted field and array, or `None` when nothing changed.
type Converted = Option<(FieldRef, ArrayRef)>;

/// Converts the children of container `arr` (field `field` at `path`) with
/// `conv(index, child field, child array, child path)` and rebuilds it when
/// one changed: a struct's fields (`path.name`), a list's items
/// (`path[]`), a map's keys and values (`path[].key`, `path[].value`).
/// Other arrays are left alone.
fn descend(
    arr: &ArrayRef,
    field: &Field,
    path: &str,
    conv: &mut dyn FnMut(usize, &FieldRef, &ArrayRef, &str) -> Result<Converted>,
) -> Result<Converted> {
    Ok(match field.data_type() {
        DataType::Struct(fields) => {
            let s = arr.as_struct();
            let Some((fields, cols)) = convert_all(fields, s.columns(), path, conv)? else {
                return Ok(None);
            };
            let a =
                StructArray::try_new_with_length(fields.clone(), cols, s.nulls().cloned(), s.len())
                    .map_err(built(path))?;
            Some((retyped(field, DataType::Struct(fields)), Arc::new(a)))
        }
        DataType::List(item) => list::<i32>(arr, field, item, path, conv, DataType::List)?,
        DataType::LargeList(item) => {
            list::<i64>(arr, field, item, path, conv, DataType::LargeList)?
        }
        DataType::FixedSizeList(item, n) => {
            let l = arr.as_fixed_size_list();
            let Some((f, v)) = conv(0, item, l.values(), &items_path(path))? else {
                return Ok(None);
            };
            let a = FixedSizeListArray::try_new(f.clone(), *n, v, l.nulls().cloned())
                .map_err(built(path))?;
            Some((retyped(field, DataType::FixedSizeList(f, *n)), Arc::new(a)))
        }
        DataType::Map(entries, sorted) => {
            let m = arr.as_map();
            let DataType::Struct(kv) = entries.data_type() else {
                return Ok(None);
            };
            let e = m.entries();
            let Some((kv, cols)) = convert_all(kv, e.columns(), &items_path(path), conv)? else {
                return Ok(None);
            };
            let e = StructArray::try_new_with_length(kv.clone(), cols, e.nulls().cloned(), e.len())
                .map_err(built(path))?;
            let entries = retyped(entries, DataType::Struct(kv));
            let a = MapArray::try_new(
                entries.clone(),
                m.offsets().clone(),
                e,
                m.nulls().cloned(),
                *sorted,
            )
            .map_err(built(path))?;
            Some((retyped(field, DataType::Map(entries, *sorted)), Arc::new(a)))
        }
        _ => None,
    })
}

/// The fields `fields` of arrays `cols` through `conv` (paths `path.name`),
/// or `None` when none changed.
fn convert_all(
    fields: &Fields,
    cols: &[ArrayRef],
    path: &str,
    conv: &mut dyn FnMut(usize, &FieldRef, &ArrayRef, &str) -> Result<Converted>,
) -> Result<Option<(Fields, Vec<ArrayRef>)>> {
    let mut out_f = Vec::with_capacity(fields.len());
    let mut out_c = Vec::with_capacity(fields.len());
    let mut changed = false;
    for (i, (f, c)) in fields.iter().zip(cols).enumerate() {
        match conv(i, f, c, &child_path(path, f.name()))? {
            Some((f, c)) => {
                changed = true;
                out_f.push(f);
                out_c.push(c);
            }
            None => {
                out_f.push(f.clone());
                out_c.push(c.clone());
            }
        }
    }
    Ok(changed.then(|| (Fields::from(out_f), out_c)))
}

fn list<O: OffsetSizeTrait>(
    arr: &ArrayRef,
    field: &Field,
    item: &FieldRef,
    path: &str,
    conv: &mut dyn FnMut(usize, &FieldRef, &ArrayRef, &str) -> Result<Converted>,
    ty: fn(FieldRef) -> DataType,
) -> Result<Converted> {
    let l = arr.as_list::<O>();
    let Some((f, v)) = conv(0, item, l.values(), &items_path(path))? else {
        return Ok(None);
    };
    let a = GenericListArray::<O>::try_new(f.clone(), l.offsets().clone(), v, l.nulls().cloned())
        .map_err(built(path))?;
    Ok(Some((retyped(field, ty(f)), Arc::new(a))))
}

// ---------------------------------------------------------------------------
// Gathering rows.

/// Rows of one array (and nulls) appended in order into a new array, in
/// runs: one copy per run of consecutive source rows.
struct Gather<'a> {
    out: MutableArrayData<'a>,
    /// The pending run: `(Some(first source row), len)` or `(None, nulls)`.
    run: Option<(Option<usize>, usize)>,
    path: &'a str,
}

impl<'a> Gather<'a> {
    fn new(data: &'a arrow_data::ArrayData, capacity: usize, path: &'a str) -> Result<Self> {
        let out =
            MutableArrayData::try_with_capacities(vec![data], true, Capacities::Array(capacity))
                .map_err(built(path))?;
        Ok(Gather {
            out,
            run: None,
            path,
        })
    }

    fn row(&mut self, i: usize) -> Result<()> {
        match &mut self.run {
            Some((Some(a), len)) if *a + *len == i => *len += 1,
            _ => {
                self.flush()?;
                self.run = Some((Some(i), 1));
            }
        }
        Ok(())
    }

    fn null(&mut self) -> Result<()> {
        match &mut self.run {
            Some((None, len)) => *len += 1,
            _ => {
                self.flush()?;
                self.run = Some((None, 1));
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        match self.run.take() {
            Some((Some(a), len)) => self.out.try_extend(0, a, a + len),
            Some((None, len)) => self.out.try_extend_nulls(len),
            None => Ok(()),
        }
        .map_err(built(self.path))
    }

    fn finish(mut self) -> Result<ArrayRef> {
        self.flush()?;
        Ok(make_array(self.out.freeze()))
    }
}

/// The validity of `valid`, `None` when every entry is valid.
fn validity(valid: &[bool]) -> Option<NullBuffer> {
    let nb = NullBuffer::from(valid.to_vec());
    (nb.null_count() > 0).then_some(nb)
}

// ---------------------------------------------------------------------------
// Flattening.

/// `arr` (field `field` at `path`) with every union below it (itself
/// included) in flat form, or `None` when it holds none.
fn flatten(arr: &ArrayRef, field: &Field, path: &str) -> Result<Converted> {
    if let DataType::Union(..) = field.data_type() {
        return flatten_union(arr, field, path).map(Some);
    }
    descend(arr, field, path, &mut |_, f, a, p| flatten(a, f, p))
}

/// The node under a `nullable` node (the node itself otherwise).
fn look_through(node: &Schema) -> &Schema {
    if node.kind == Kind::Nullable {
        node.children.first().unwrap_or(node)
    } else {
        node
    }
}

/// Checks a union node's variant names (one per child, 1 to 128, none
/// named `variant`) and returns them.
fn variant_names<'a>(un: &'a Schema, path: &str) -> Result<&'a [String]> {
    let names = un.variant_names.as_deref().unwrap_or(&[]);
    if names.len() != un.children.len() || names.is_empty() || names.len() > 128 {
        return Err(Error::mismatch(
            path,
            format!(
                "a union node with 1 to 128 variant names, one per child ({})",
                un.children.len()
            ),
            format!("{} variant names", names.len()),
        ));
    }
    if names.iter().any(|n| n == VARIANT) {
        return Err(Error::bad_name(
            path,
            format!(
                "an enum with data with a variant named `{VARIANT}` has no flat form (its \
                 `{VARIANT}` column holds the variant names)"
            ),
        ));
    }
    Ok(names)
}

/// Whether a variant node stores no fields (a unit variant, or a record
/// without fields): it has no child in the flat form.
fn fieldless(variant: &Schema) -> bool {
    variant.kind == Kind::Constant
        || (variant.kind == Kind::Record
            && variant
                .field_names
                .as_deref()
                .is_none_or(<[String]>::is_empty))
}

fn flatten_union(arr: &ArrayRef, field: &Field, path: &str) -> Result<(FieldRef, ArrayRef)> {
    let DataType::Union(ufields, mode) = field.data_type() else {
        return Err(Error::invalid(path, "a union field without a union type"));
    };
    // The node: the field's own (checked against its type), or the node of
    // its Arrow type.
    let node = field_node(field, path, &SaveOptions::default(), false)?;
    let un = look_through(&node);
    if un.kind != Kind::Union {
        return Err(Error::mismatch(
            path,
            "a `union` schema node for a Union field",
            format!("a `{}` node", un.kind),
        ));
    }
    let names = variant_names(un, path)?;
    let arrow_names: Vec<&str> = ufields.iter().map(|(_, f)| f.name().as_str()).collect();
    if arrow_names != names {
        return Err(Error::mismatch(
            path,
            format!("a Union of the variants {names:?}, in order"),
            format!("children {arrow_names:?}"),
        ));
    }
    let u = arr.as_union();
    let n = u.len();
    // Each type id's variant position.
    let mut position = [None; 128];
    for (k, (id, _)) in ufields.iter().enumerate() {
        if let Some(p) = usize::try_from(id).ok().and_then(|i| position.get_mut(i)) {
            *p = Some(k);
        }
    }
    let ids: Vec<i8> = ufields.iter().map(|(id, _)| id).collect();
    // Each row's variant and its row in that variant's child (None: null).
    let mut rows: Vec<Option<(usize, usize)>> = Vec::with_capacity(n);
    for i in 0..n {
        let t = u.type_id(i);
        let k = usize::try_from(t)
            .ok()
            .and_then(|t| position.get(t).copied().flatten())
            .ok_or_else(|| {
                Error::invalid(
                    format!("{path}[{i}]"),
                    format!("union type id {t} is not a variant"),
                )
            })?;
        let off = match mode {
            UnionMode::Dense => u.value_offset(i),
            UnionMode::Sparse => i,
        };
        let child = u.child(ids[k]);
        rows.push((!child.is_null(off)).then_some((k, off)));
    }
    let valid: Vec<bool> = rows.iter().map(Option::is_some).collect();
    let nulls = validity(&valid);
    let keys: Vec<i32> = rows
        .iter()
        .map(|r| r.map_or(0, |(k, _)| k as i32))
        .collect();
    let dict = DictionaryArray::<Int32Type>::try_new(
        Int32Array::new(ScalarBuffer::from(keys), nulls.clone()),
        Arc::new(StringArray::from_iter_values(names)),
    )
    .map_err(built(path))?;
    let mut fields = vec![Arc::new(Field::new(
        VARIANT,
        label_type(),
        field.is_nullable(),
    ))];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(dict)];
    for (k, ((id, vf), vnode)) in ufields.iter().zip(&un.children).enumerate() {
        if fieldless(vnode) && matches!(vf.data_type(), DataType::Struct(f) if f.is_empty()) {
            continue;
        }
        let vpath = child_path(path, vf.name());
        // The variant's own unions first: gathering nulls into a struct
        // holding a union of non-nullable variants would fail.
        let child = u.child(id).clone();
        let (vf, child) = flatten(&child, vf, &vpath)?.unwrap_or((vf.clone(), child));
        let data = child.to_data();
        let mut g = Gather::new(&data, n, &vpath)?;
        for r in &rows {
            match r {
                Some((j, off)) if *j == k => g.row(*off)?,
                _ => g.null()?,
            }
        }
        let gathered = g.finish()?;
        let f = Field::new(vf.name(), gathered.data_type().clone(), true)
            .with_metadata(vf.metadata().clone());
        fields.push(Arc::new(f));
        cols.push(gathered);
    }
    let fields = Fields::from(fields);
    let s =
        StructArray::try_new_with_length(fields.clone(), cols, nulls, n).map_err(built(path))?;
    let mut meta = field.metadata().clone();
    meta.extend(field_metadata(&node, path)?);
    meta.insert(UNION_KEY.to_owned(), FLAT.to_owned());
    let f =
        Field::new(field.name(), DataType::Struct(fields), field.is_nullable()).with_metadata(meta);
    Ok((Arc::new(f), Arc::new(s)))
}

// ---------------------------------------------------------------------------
// Back to unions.

/// Where values are, for errors: a logical path and the row of the first.
#[derive(Clone, Copy)]
struct Rows<'a> {
    path: &'a str,
    base: u64,
}

impl Rows<'_> {
    fn row(&self, i: usize) -> String {
        format!("{}[{}]", self.path, self.base + i as u64)
    }
}

/// `batch` with every enum with data in flat form (a `Struct` field whose
/// node is a union, or marked `h5vec.union = "flat"`) turned back into the
/// dense `Union` the writers store, at any depth; `None` when it has none.
/// `root` is the vector's root node (else the batch's `h5vec.schema`, else
/// each field's own); `base` is the batch's first row, for errors.
pub(crate) fn unflatten_batch(
    batch: &RecordBatch,
    root: Option<&Schema>,
    base: u64,
) -> Result<Option<RecordBatch>> {
    let schema = batch.schema_ref();
    let own;
    let root = match (root, schema.metadata().get(SCHEMA_KEY)) {
        (Some(r), _) => Some(r),
        (None, Some(json)) => {
            own = parse(json, "$")?;
            Some(&own)
        }
        (None, None) => None,
    };
    let record = root.is_none_or(|r| r.kind == Kind::Record);
    let mut fields: Vec<FieldRef> = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    let mut changed = false;
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        let path = column_path(record, f.name());
        let node = match root {
            Some(r) if record => record_child(r, f.name()),
            r => r,
        };
        match unflatten(c, f, node, Rows { path: &path, base })? {
            Some((f, c)) => {
                changed = true;
                fields.push(f);
                columns.push(c);
            }
            None => {
                fields.push(f.clone());
                columns.push(c.clone());
            }
        }
    }
    if !changed {
        return Ok(None);
    }
    let schema = ArrowSchema::new_with_metadata(fields, schema.metadata().clone());
    rebuild_batch(schema, columns, batch.num_rows()).map(Some)
}

/// The schema of [`unflatten_batch`]'s batches for batches of `schema`.
pub(crate) fn unflatten_schema(schema: &SchemaRef, root: Option<&Schema>) -> Result<SchemaRef> {
    let empty = RecordBatch::new_empty(schema.clone());
    Ok(match unflatten_batch(&empty, root, 0)? {
        Some(b) => b.schema(),
        None => schema.clone(),
    })
}

/// The node of field `name` of record node `node`.
fn record_child<'a>(node: &'a Schema, name: &str) -> Option<&'a Schema> {
    let node = look_through(node);
    if node.kind != Kind::Record {
        return None;
    }
    let i = node.field_names.as_ref()?.iter().position(|n| n == name)?;
    node.children.get(i)
}

/// The node of child `i` (named `name`) of a container field of type `t`
/// whose node is `node`.
fn child_node<'a>(
    node: Option<&'a Schema>,
    t: &DataType,
    i: usize,
    name: &str,
) -> Option<&'a Schema> {
    let node = look_through(node?);
    match t {
        DataType::Struct(_) => record_child(node, name),
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
            if node.kind == Kind::List =>
        {
            node.children.first()
        }
        DataType::Map(..) if node.kind == Kind::List => {
            look_through(node.children.first()?).children.get(i)
        }
        _ => None,
    }
}

/// Whether fields of type `t` can hold a union.
fn container(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
            | DataType::Union(..)
    )
}

/// `arr` (field `field`, node `node` when known: else the field's own
/// `h5vec.schema`) with every flat union at or below it turned back into a
/// dense `Union`; `None` when it holds none.
fn unflatten(
    arr: &ArrayRef,
    field: &Field,
    node: Option<&Schema>,
    at: Rows<'_>,
) -> Result<Converted> {
    let t = field.data_type();
    if !container(t) {
        return Ok(None);
    }
    let own;
    let node = match (node, field.metadata().get(SCHEMA_KEY)) {
        (Some(n), _) => Some(n),
        (None, Some(json)) => {
            own = parse(json, at.path)?;
            Some(&own)
        }
        (None, None) => None,
    };
    let inner = node.map(look_through);
    let flag = field.metadata().get(UNION_KEY).map(String::as_str);
    match t {
        DataType::Struct(_) => match (inner, node) {
            (Some(un), Some(node)) if un.kind == Kind::Union => {
                return unflatten_union(arr.as_struct(), field, node, un, at).map(Some)
            }
            _ if flag == Some(FLAT) => {
                return Err(Error::mismatch(
                    at.path,
                    format!(
                        "the flat form of an enum with data (`{UNION_KEY} = \"{FLAT}\"`) with \
                         its union node in `{SCHEMA_KEY}`"
                    ),
                    inner.map_or("no schema node".to_owned(), |n| {
                        format!("a `{}` node", n.kind)
                    }),
                ))
            }
            _ => {}
        },
        DataType::Union(ufields, _) => {
            let u = arr.as_union();
            let variants = inner.filter(|n| n.kind == Kind::Union);
            let mut fields = Vec::with_capacity(ufields.len());
            let mut children = Vec::with_capacity(ufields.len());
            let mut changed = false;
            for (k, (id, f)) in ufields.iter().enumerate() {
                let p = child_path(at.path, f.name());
                let vnode = variants.and_then(|n| n.children.get(k));
                let child = u.child(id);
                match unflatten(child, f, vnode, Rows { path: &p, base: 0 })? {
                    Some((f, c)) => {
                        changed = true;
                        fields.push(f);
                        children.push(c);
                    }
                    None => {
                        fields.push(f.clone());
                        children.push(child.clone());
                    }
                }
            }
            if !changed {
                return Ok(None);
            }
            let ids: Vec<i8> = ufields.iter().map(|(id, _)| id).collect();
            let uf = UnionFields::try_new(ids, fields)
                .map_err(|e| Error::invalid(at.path, e.to_string()))?;
            let mode = match u.offsets() {
                Some(_) => UnionMode::Dense,
                None => UnionMode::Sparse,
            };
            let a = UnionArray::try_new(
                uf.clone(),
                u.type_ids().clone(),
                u.offsets().cloned(),
                children,
            )
            .map_err(built(at.path))?;
            return Ok(Some((
                retyped(field, DataType::Union(uf, mode)),
                Arc::new(a),
            )));
        }
        _ => {}
    }
    // Lists, maps and records: their children, with their nodes.
    let base = at.base;
    descend(arr, field, at.path, &mut |i, f, a, p| {
        let n = child_node(node, t, i, f.name());
        // A struct's fields share its rows; items are counted from 0.
        let base = if matches!(t, DataType::Struct(_)) {
            base
        } else {
            0
        };
        unflatten(a, f, n, Rows { path: p, base })
    })
}

/// The variant names of a `variant` column: plain strings or a dictionary
/// of strings (any key type); `Err(text)` for a value that is no variant.
fn variant_of(col: &dyn Array, names: &[String], at: Rows<'_>) -> Result<Vec<Option<usize>>> {
    let by_name: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (n.as_str(), k))
        .collect();
    let nulls = col.logical_nulls();
    let null = |i: usize| nulls.as_ref().is_some_and(|n| n.is_null(i));
    let unknown = |i: usize, t: &str| {
        Error::encode(
            at.row(i),
            format!("{t:?} is not a variant of the enum ({})", names.join(", ")),
        )
    };
    let text = |a: &dyn Array, j: usize| -> Option<String> {
        if let Some(s) = a.as_string_opt::<i32>() {
            return Some(s.value(j).to_owned());
        }
        if let Some(s) = a.as_string_opt::<i64>() {
            return Some(s.value(j).to_owned());
        }
        a.as_string_view_opt().map(|s| s.value(j).to_owned())
    };
    let mut out = Vec::with_capacity(col.len());
    if let Some(d) = col.as_any_dictionary_opt() {
        let values = d.values();
        let mut by_key: Vec<std::result::Result<usize, String>> = Vec::with_capacity(values.len());
        for j in 0..values.len() {
            by_key.push(
                match values
                    .is_valid(j)
                    .then(|| text(values.as_ref(), j))
                    .flatten()
                {
                    Some(t) => by_name.get(t.as_str()).copied().ok_or(t),
                    None => Err("(null)".to_owned()),
                },
            );
        }
        let keys = dictionary_keys(d.keys());
        for (i, &key) in keys.iter().enumerate() {
            if null(i) {
                out.push(None);
                continue;
            }
            match by_key.get(key) {
                Some(Ok(k)) => out.push(Some(*k)),
                Some(Err(t)) => return Err(unknown(i, t)),
                None => {
                    return Err(Error::invalid(
                        at.row(i),
                        "dictionary key out of range of the dictionary's values",
                    ))
                }
            }
        }
        return Ok(out);
    }
    if !matches!(
        col.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) {
        return Err(Error::mismatch(
            child_path(at.path, VARIANT),
            "the variant names as strings or a dictionary of strings",
            col.data_type(),
        ));
    }
    for i in 0..col.len() {
        if null(i) {
            out.push(None);
            continue;
        }
        let t = text(col, i).unwrap_or_default();
        match by_name.get(t.as_str()) {
            Some(&k) => out.push(Some(k)),
            None => return Err(unknown(i, &t)),
        }
    }
    Ok(out)
}

/// The keys of a dictionary as positions in its values (`usize::MAX` for
/// a negative key, which indexes nothing). Unlike Arrow's
/// `normalized_keys`, keys past the values are kept (an error for the
/// caller, not a clamp) and an empty dictionary is no panic.
pub(crate) fn dictionary_keys(keys: &dyn Array) -> Vec<usize> {
    use arrow_array::types::{Int16Type, Int64Type, Int8Type, UInt16Type, UInt64Type};
    fn of<T: arrow_array::ArrowPrimitiveType>(keys: &dyn Array) -> Option<Vec<usize>>
    where
        T::Native: TryInto<usize>,
    {
        let a = keys.as_primitive_opt::<T>()?;
        Some(
            a.values()
                .iter()
                .map(|&k| k.try_into().unwrap_or(usize::MAX))
                .collect(),
        )
    }
    of::<Int8Type>(keys)
        .or_else(|| of::<Int16Type>(keys))
        .or_else(|| of::<Int32Type>(keys))
        .or_else(|| of::<Int64Type>(keys))
        .or_else(|| of::<UInt8Type>(keys))
        .or_else(|| of::<UInt16Type>(keys))
        .or_else(|| of::<arrow_array::types::UInt32Type>(keys))
        .or_else(|| of::<UInt64Type>(keys))
        .unwrap_or_else(|| vec![usize::MAX; keys.len()])
}

/// The dense `Union` of the flat form `s` (field `field`, node `node`, its
/// union node `un`): tags from the `variant` names, each variant's rows
/// from its child struct; a null row (the struct or its `variant` null) is
/// a null in the first variant's child (SPEC.md section 11).
fn unflatten_union(
    s: &StructArray,
    field: &Field,
    node: &Schema,
    un: &Schema,
    at: Rows<'_>,
) -> Result<(FieldRef, ArrayRef)> {
    let path = at.path;
    let names = variant_names(un, path)?;
    let nullable = node.kind == Kind::Nullable;
    let DataType::Struct(sfields) = field.data_type() else {
        return Err(Error::invalid(path, "a flat union without a struct type"));
    };
    let Some(vcol) = s.column_by_name(VARIANT) else {
        return Err(Error::mismatch(
            path,
            format!("the flat form of an enum with data: a `{VARIANT}` field of variant names"),
            format!(
                "fields {:?}",
                sfields.iter().map(|f| f.name()).collect::<Vec<_>>()
            ),
        ));
    };
    // Each variant's child in the flat struct (none for fieldless ones).
    let mut flat: Vec<Option<(&FieldRef, &ArrayRef)>> = vec![None; names.len()];
    for (f, c) in sfields.iter().zip(s.columns()) {
        if f.name() == VARIANT {
            continue;
        }
        let Some(k) = names.iter().position(|n| n == f.name()) else {
            return Err(Error::mismatch(
                child_path(path, f.name()),
                format!(
                    "a field named as a variant of the enum ({})",
                    names.join(", ")
                ),
                format!("a field `{}`", f.name()),
            ));
        };
        if !matches!(f.data_type(), DataType::Struct(_)) {
            return Err(Error::mismatch(
                child_path(path, f.name()),
                "a struct of the variant's fields",
                f.data_type(),
            ));
        }
        flat[k] = Some((f, c));
    }
    for (k, vnode) in un.children.iter().enumerate() {
        if flat[k].is_none() && !fieldless(vnode) {
            return Err(Error::mismatch(
                child_path(path, &names[k]),
                format!("a struct of the fields of variant `{}`", names[k]),
                "nothing",
            ));
        }
    }
    let tags = variant_of(vcol.as_ref(), names, at)?;
    let n = s.len();
    let mut type_ids = Vec::with_capacity(n);
    let mut offsets = Vec::with_capacity(n);
    let mut lens = vec![0usize; names.len()];
    // Per variant: the flat rows it takes in order (None: a null row).
    let mut takes: Vec<Vec<Option<usize>>> = vec![Vec::new(); names.len()];
    for (i, tag) in tags.iter().enumerate() {
        let k = match tag {
            Some(k) if s.is_valid(i) => {
                if let Some((_, c)) = flat[*k] {
                    if c.is_null(i) {
                        return Err(Error::encode(
                            at.row(i),
                            format!(
                                "the row's variant is `{}` but its `{}` struct is null",
                                names[*k], names[*k]
                            ),
                        ));
                    }
                }
                takes[*k].push(Some(i));
                *k
            }
            _ => {
                takes[0].push(None);
                0
            }
        };
        type_ids.push(k as i8);
        let off = i32::try_from(lens[k])
            .map_err(|_| Error::invalid(path, "too many rows of one variant"))?;
        offsets.push(off);
        lens[k] += 1;
    }
    let mut ufields = Vec::with_capacity(names.len());
    let mut children: Vec<ArrayRef> = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        let vpath = child_path(path, name);
        let Some((vf, c)) = flat[k] else {
            let valid: Vec<bool> = takes[k].iter().map(Option::is_some).collect();
            let a = StructArray::new_empty_fields(valid.len(), validity(&valid));
            ufields.push(Field::new(
                name,
                DataType::Struct(Fields::empty()),
                nullable,
            ));
            children.push(Arc::new(a));
            continue;
        };
        // The variant's rows first, then its own flat unions (gathering
        // nulls into a union of non-nullable variants would fail).
        let data = c.to_data();
        let mut g = Gather::new(&data, takes[k].len(), &vpath)?;
        for t in &takes[k] {
            match t {
                Some(i) => g.row(*i)?,
                None => g.null()?,
            }
        }
        let gathered = g.finish()?;
        let vfield =
            Field::new(name, vf.data_type().clone(), nullable).with_metadata(vf.metadata().clone());
        let (vfield, gathered) = match unflatten(
            &gathered,
            &vfield,
            un.children.get(k),
            Rows {
                path: &vpath,
                base: 0,
            },
        )? {
            Some((f, a)) => (f.as_ref().clone(), a),
            None => (vfield, gathered),
        };
        ufields.push(vfield);
        children.push(gathered);
    }
    let ids: Vec<i8> = (0..names.len()).map(|k| k as i8).collect();
    let uf = UnionFields::try_new(ids, ufields).map_err(|e| Error::invalid(path, e.to_string()))?;
    let u = UnionArray::try_new(
        uf.clone(),
        ScalarBuffer::from(type_ids),
        Some(ScalarBuffer::from(offsets)),
        children,
    )
    .map_err(built(path))?;
    let mut meta = field.metadata().clone();
    meta.remove(UNION_KEY);
    let f = Field::new(
        field.name(),
        DataType::Union(uf, UnionMode::Dense),
        field.is_nullable(),
    )
    .with_metadata(meta);
    Ok((Arc::new(f), Arc::new(u)))
}
