//! Enums with data in flat form (SPEC.md section 11, "Enums with data in
//! flat form"): a `Struct` of a `variant` column (the variant names,
//! `Dictionary(Int32, Utf8)`) and one nullable struct per variant with
//! fields, for the readers and formats without unions (Parquet, polars,
//! JSON lines, CSV). [`flatten_unions`] turns every dense union of a batch
//! into it; the writers turn it back ([`unflatten_batch`]) before the union
//! writer sees the batch, tags matched by variant name.
//!
//! This file holds what both directions share (the walk through
//! containers, gathering rows); `flatten` makes the flat form of a union
//! ([`flatten_unions`]), `unflatten` turns it back.

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

pub use flatten::flatten_unions;
pub(crate) use unflatten::{dictionary_keys, unflatten_batch, unflatten_schema};

/// The column of variant names in the flat form.
const VARIANT: &str = "variant";

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
