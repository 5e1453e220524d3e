//! Enums with data in flat form (SPEC.md section 11, "Enums with data in
//! flat form"): a `Struct` of a `variant` column (the variant names,
//! `Dictionary(Int32, Utf8)`) and one nullable struct per variant with
//! fields, for the readers and formats without unions (Parquet, polars,
//! JSON lines, CSV). [`flatten_unions`] turns every dense union of a batch
//! into it; the writers turn it back ([`unflatten_batch`]) before the union
//! writer sees the batch, tags matched by variant name.
//!
//! This file holds [`flatten_unions`] and what both directions share (the
//! walk through containers, gathering rows); `flatten` makes the flat form
//! of a union, `unflatten` turns it back.

mod flatten;
mod unflatten;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    make_array, Array, ArrayRef, FixedSizeListArray, GenericListArray, MapArray, OffsetSizeTrait,
    RecordBatch, RecordBatchOptions, StructArray,
};
use arrow_buffer::NullBuffer;
use arrow_data::transform::{Capacities, MutableArrayData};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, Schema as ArrowSchema};

use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::kinds::list::items_path;
use crate::schema::{Kind, Schema};

use super::mapping::ROOT_KEY;

use flatten::flatten;
pub(crate) use unflatten::{dictionary_keys, unflatten_batch, unflatten_schema};

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
