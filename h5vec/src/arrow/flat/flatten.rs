//! Flattening: every dense union below an array turned into its flat form
//! (a `Struct` of the `variant` names and one struct per variant).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, DictionaryArray, Int32Array, StringArray, StructArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field, FieldRef, Fields, UnionMode};

use crate::arrow::mapping::{field_metadata, label_type, FLAT, UNION_KEY};
use crate::arrow::write::node::field_node;
use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::options::SaveOptions;
use crate::schema::Kind;

use super::{
    built, descend, fieldless, look_through, validity, variant_names, Converted, Gather, VARIANT,
};

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
