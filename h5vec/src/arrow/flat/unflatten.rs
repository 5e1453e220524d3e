//! Back to unions: the flat form of an enum with data (a `Struct` whose
//! node is a union, or marked `h5vec.union = "flat"`) turned back into the
//! dense `Union` the writers store, at any depth.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, UInt8Type};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray, UnionArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{
    DataType, Field, FieldRef, Fields, Schema as ArrowSchema, SchemaRef, UnionFields, UnionMode,
};

use crate::arrow::mapping::{FLAT, SCHEMA_KEY, UNION_KEY};
use crate::arrow::write::node::parse;
use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::schema::{Kind, Schema};

use super::{
    built, column_path, descend, fieldless, look_through, rebuild_batch, retyped, validity,
    variant_names, Converted, Gather, VARIANT,
};

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
