//! What `h5vec::arrow` read, as the arrays serde_arrow deserializes as the
//! type ([`from_h5`]): records by name (tuples by position), byte lists as
//! binary, labelled enums as a dictionary, union variants unwrapped,
//! 16-byte UUIDs as text.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, LargeBinaryArray, LargeListArray, MapArray, NullArray, StructArray, UnionArray,
};
use arrow_schema::{DataType, Field, FieldRef, Fields, UnionFields, UnionMode};

use crate::arrow::mapping::label_type;
use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::kinds::list::items_path;
use crate::serde::fields::{is_fieldless, is_tuple};

/// 16 bytes as hyphenated lower-case UUID text.
fn uuid_text(b: &[u8]) -> String {
    let mut s = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{x:02x}"));
    }
    s
}

/// The array (and its field) serde_arrow deserializes as the type traced
/// as `sf`, from `a`, what `h5vec::arrow` read for it. Leaves keep the
/// type read (serde_arrow deserializes numbers, strings, times and UUIDs
/// from it); structure follows `sf`: records by name (tuples by
/// position), byte lists as binary, labelled enums as a dictionary, union
/// variants unwrapped.
pub(crate) fn from_h5(sf: &Field, a: &ArrayRef, path: &str) -> Result<(FieldRef, ArrayRef)> {
    let name = sf.name();
    let mismatch = || {
        Error::mismatch(
            path,
            format!("stored values the serde type reads as {}", sf.data_type()),
            format!("Arrow values of type {}", a.data_type()),
        )
    };
    let out: (Field, ArrayRef) = match sf.data_type() {
        // A dense column (`FieldKind::Dense`, the derive's `[T; N]`) read
        // as a tuple: serde_arrow deserializes a tuple from the lists.
        DataType::Struct(sfs)
            if is_tuple(sf) && matches!(a.data_type(), DataType::FixedSizeList(..)) =>
        {
            let DataType::FixedSizeList(_, n) = a.data_type() else {
                return Err(mismatch());
            };
            if usize::try_from(*n).ok() != Some(sfs.len()) {
                return Err(Error::mismatch(
                    path,
                    format!("a tuple of {} elements", sfs.len()),
                    format!("a dense array of {n}"),
                ));
            }
            (
                Field::new(
                    name,
                    a.data_type().clone(),
                    sf.is_nullable() || a.null_count() > 0,
                ),
                a.clone(),
            )
        }
        DataType::Struct(sfs) => {
            let s = a.as_struct_opt().ok_or_else(mismatch)?;
            let (fields, cols) = struct_from_h5(sfs, is_tuple(sf), s, path)?;
            let arr =
                StructArray::try_new_with_length(fields.clone(), cols, s.nulls().cloned(), s.len())
                    .map_err(|e| Error::invalid(path, e.to_string()))?;
            (
                Field::new(name, DataType::Struct(fields), sf.is_nullable())
                    .with_metadata(sf.metadata().clone()),
                Arc::new(arr),
            )
        }
        DataType::LargeList(si) | DataType::List(si) => {
            let l = a.as_list_opt::<i64>().ok_or_else(mismatch)?;
            let (f, v) = from_h5(si, l.values(), &items_path(path))?;
            let arr =
                LargeListArray::try_new(f.clone(), l.offsets().clone(), v, l.nulls().cloned())
                    .map_err(|e| Error::invalid(path, e.to_string()))?;
            (
                Field::new(name, DataType::LargeList(f), sf.is_nullable()),
                Arc::new(arr),
            )
        }
        DataType::LargeBinary | DataType::Binary => {
            let l = a.as_list_opt::<i64>().ok_or_else(mismatch)?;
            let bytes = l
                .values()
                .as_primitive_opt::<arrow_array::types::UInt8Type>()
                .ok_or_else(mismatch)?;
            let arr = LargeBinaryArray::try_new(
                l.offsets().clone(),
                bytes.values().inner().clone(),
                l.nulls().cloned(),
            )
            .map_err(|e| Error::invalid(path, e.to_string()))?;
            (
                Field::new(name, DataType::LargeBinary, sf.is_nullable()),
                Arc::new(arr),
            )
        }
        DataType::Map(se, _) => {
            let m = a.as_map_opt().ok_or_else(mismatch)?;
            let DataType::Struct(sfs) = se.data_type() else {
                return Err(mismatch());
            };
            let (fields, cols) = struct_from_h5(sfs, false, m.entries(), path)?;
            let entries = StructArray::try_new(fields.clone(), cols, None)
                .map_err(|e| Error::invalid(path, e.to_string()))?;
            let ef = Arc::new(Field::new(se.name(), DataType::Struct(fields), false));
            let arr = MapArray::try_new(
                ef.clone(),
                m.offsets().clone(),
                entries,
                m.nulls().cloned(),
                false,
            )
            .map_err(|e| Error::invalid(path, e.to_string()))?;
            (
                Field::new(name, DataType::Map(ef, false), sf.is_nullable()),
                Arc::new(arr),
            )
        }
        DataType::Union(u, _) if is_fieldless(u) => {
            // serde_arrow reads a unit variant from its label.
            if a.data_type() != &label_type() {
                return Err(mismatch());
            }
            (
                Field::new(name, label_type(), a.null_count() > 0 || sf.is_nullable()),
                a.clone(),
            )
        }
        DataType::Union(suf, _) => {
            let u = a
                .as_any()
                .downcast_ref::<UnionArray>()
                .ok_or_else(mismatch)?;
            // serde_arrow reads every row of a union as a value: a null
            // (`None` of an `Option<Enum>`) would load as a variant.
            if let Some(row) = a
                .logical_nulls()
                .and_then(|n| (0..n.len()).find(|&i| n.is_null(i)))
            {
                return Err(Error::mismatch(
                    path,
                    "values serde_arrow reads (an Option of an enum with data is read by \
                     h5vec's direct path, which takes records, tuples, lists, options, \
                     numbers, bool, strings and enums with data)",
                    format!("a null at row {row} of the batch"),
                ));
            }
            let DataType::Union(huf, _) = a.data_type() else {
                return Err(mismatch());
            };
            let by_name: HashMap<&str, i8> =
                huf.iter().map(|(id, f)| (f.name().as_str(), id)).collect();
            // The stored type ids must be serde's variant indexes.
            let mut fields = Vec::with_capacity(suf.len());
            let mut children = Vec::with_capacity(suf.len());
            for (id, sc) in suf.iter() {
                let p = child_path(path, sc.name());
                if by_name.get(sc.name().as_str()) != Some(&id) {
                    return Err(Error::mismatch(
                        path,
                        format!("variant `{}` with tag {id}", sc.name()),
                        format!(
                            "stored variants {:?}",
                            huf.iter().map(|(_, f)| f.name()).collect::<Vec<_>>()
                        ),
                    ));
                }
                let child = u.child(id);
                let (f, c): (FieldRef, ArrayRef) = match sc.data_type() {
                    DataType::Null => (sc.clone(), Arc::new(NullArray::new(child.len()))),
                    DataType::Struct(_) => from_h5(sc, child, &p)?,
                    _ => {
                        let s = child.as_struct_opt().ok_or_else(mismatch)?;
                        if s.num_columns() != 1 {
                            return Err(Error::mismatch(
                                &p,
                                "a variant of one field",
                                s.num_columns(),
                            ));
                        }
                        let (f, c) = from_h5(sc, s.column(0), &child_path(&p, "1"))?;
                        (Arc::new(f.as_ref().clone().with_name(sc.name())), c)
                    }
                };
                fields.push(f);
                children.push(c);
            }
            let uf = UnionFields::try_new(suf.iter().map(|(id, _)| id), fields)
                .map_err(|e| Error::invalid(path, e.to_string()))?;
            let arr = UnionArray::try_new(
                uf.clone(),
                u.type_ids().clone(),
                u.offsets().cloned(),
                children,
            )
            .map_err(|e| Error::invalid(path, e.to_string()))?;
            (
                Field::new(
                    name,
                    DataType::Union(uf, UnionMode::Dense),
                    sf.is_nullable(),
                ),
                Arc::new(arr),
            )
        }
        // serde_arrow reads a `Uuid` from its text (it deserializes as
        // human-readable): the stored 16 bytes as hyphenated text.
        _ if a.data_type() == &DataType::FixedSizeBinary(16) => {
            let b = a.as_fixed_size_binary();
            let text: arrow_array::LargeStringArray = b.iter().map(|v| v.map(uuid_text)).collect();
            (
                Field::new(
                    name,
                    DataType::LargeUtf8,
                    sf.is_nullable() || a.null_count() > 0,
                ),
                Arc::new(text),
            )
        }
        _ => (
            Field::new(
                name,
                a.data_type().clone(),
                sf.is_nullable() || a.null_count() > 0,
            ),
            a.clone(),
        ),
    };
    Ok((Arc::new(out.0), out.1))
}

/// The columns of struct `s` for serde fields `sfs`: by name, or by
/// position for a tuple.
fn struct_from_h5(
    sfs: &Fields,
    tuple: bool,
    s: &StructArray,
    path: &str,
) -> Result<(Fields, Vec<ArrayRef>)> {
    let stored = s.column_names();
    if tuple && stored.len() != sfs.len() {
        return Err(Error::mismatch(
            path,
            format!("a tuple of {} fields", sfs.len()),
            format!("{} stored fields", stored.len()),
        ));
    }
    let mut fields = Vec::with_capacity(sfs.len());
    let mut cols = Vec::with_capacity(sfs.len());
    for (i, sc) in sfs.iter().enumerate() {
        let col = if tuple {
            s.column(i)
        } else {
            s.column_by_name(sc.name()).ok_or_else(|| {
                Error::mismatch(
                    path,
                    format!("a stored field `{}`", sc.name()),
                    format!("fields {stored:?}"),
                )
            })?
        };
        let label = if tuple {
            (i + 1).to_string()
        } else {
            sc.name().clone()
        };
        let (f, c) = from_h5(sc, col, &child_path(path, &label))?;
        fields.push(f);
        cols.push(c);
    }
    Ok((fields.into(), cols))
}
