//! Flattening: every dense union below an array turned into its flat form
//! (a `Struct` of the `variant` names and one struct per variant).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int32Array, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema, UnionMode};

use crate::arrow::mapping::{field_metadata, label_type, FLAT, ROOT_KEY, UNION_KEY};
use crate::arrow::write::node::field_node;
use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::options::SaveOptions;
use crate::schema::Kind;

use super::{
    built, column_path, descend, fieldless, look_through, rebuild_batch, validity, variant_names,
    Converted, Gather, VARIANT,
};

/// Every enum with data (dense `Union` column, as [`read_vector`](crate::arrow::read_vector)
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
/// "flat"`, so that [`save_record_batch`](crate::arrow::save_record_batch),
/// [`save_batches`](crate::arrow::save_batches) and
/// [`append_record_batch`](crate::arrow::append_record_batch) store it as the
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

/// `arr` (field `field` at `path`) with every union below it (itself
/// included) in flat form, or `None` when it holds none.
pub(super) fn flatten(arr: &ArrayRef, field: &Field, path: &str) -> Result<Converted> {
    if let DataType::Union(..) = field.data_type() {
        return flatten_union(arr, field, path).map(Some);
    }
    descend(arr, field, path, &mut |_, f, a, p| flatten(a, f, p))
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
