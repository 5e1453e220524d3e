//! serde_arrow's arrays moved into the h5vec fields ([`to_h5`]) without
//! copying values: only the labels of fieldless enums are computed, and
//! UUID text is parsed into its 16 bytes.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int32Array, LargeListArray, MapArray, StringArray,
    StructArray, UnionArray,
};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field};

use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::kinds::list::items_path;

fn shape_error(path: &str, want: &DataType, found: &DataType) -> Error {
    Error::mismatch(path, format!("Arrow values of type {want}"), found)
}

/// serde_arrow's array `a` of field `sf` as an array of the h5vec field
/// `hf` ([`h5_field`](crate::serde::fields::h5_field) of `sf`).
pub(crate) fn to_h5(sf: &Field, hf: &Field, a: &ArrayRef, path: &str) -> Result<ArrayRef> {
    match (sf.data_type(), hf.data_type()) {
        (DataType::Struct(sfs), DataType::Struct(hfs)) => {
            let s = a
                .as_struct_opt()
                .ok_or_else(|| shape_error(path, sf.data_type(), a.data_type()))?;
            let mut cols = Vec::with_capacity(hfs.len());
            for ((sc, hc), col) in sfs.iter().zip(hfs.iter()).zip(s.columns()) {
                cols.push(to_h5(sc, hc, col, &child_path(path, hc.name()))?);
            }
            let out =
                StructArray::try_new_with_length(hfs.clone(), cols, s.nulls().cloned(), s.len())
                    .map_err(|e| Error::encode(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        (DataType::LargeList(si), DataType::LargeList(hi)) => {
            let l = a
                .as_list_opt::<i64>()
                .ok_or_else(|| shape_error(path, sf.data_type(), a.data_type()))?;
            let v = to_h5(si, hi, l.values(), &items_path(path))?;
            let out =
                LargeListArray::try_new(hi.clone(), l.offsets().clone(), v, l.nulls().cloned())
                    .map_err(|e| Error::encode(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        (DataType::List(si), DataType::LargeList(hi)) => {
            let l = a
                .as_list_opt::<i32>()
                .ok_or_else(|| shape_error(path, sf.data_type(), a.data_type()))?;
            let v = to_h5(si, hi, l.values(), &items_path(path))?;
            let offs: Vec<i64> = l.offsets().iter().map(|&o| i64::from(o)).collect();
            let offs = arrow_buffer::OffsetBuffer::new(ScalarBuffer::from(offs));
            let out = LargeListArray::try_new(hi.clone(), offs, v, l.nulls().cloned())
                .map_err(|e| Error::encode(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        (DataType::Map(se, _), DataType::Map(he, sorted)) => {
            let m = a
                .as_map_opt()
                .ok_or_else(|| shape_error(path, sf.data_type(), a.data_type()))?;
            let entries: ArrayRef = Arc::new(m.entries().clone());
            let e = to_h5(se, he, &entries, path)?;
            let out = MapArray::try_new(
                he.clone(),
                m.offsets().clone(),
                e.as_struct().clone(),
                m.nulls().cloned(),
                *sorted,
            )
            .map_err(|e| Error::encode(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        (DataType::Union(..), DataType::Dictionary(..)) => {
            let u = a
                .as_any()
                .downcast_ref::<UnionArray>()
                .ok_or_else(|| shape_error(path, sf.data_type(), a.data_type()))?;
            let DataType::Union(uf, _) = sf.data_type() else {
                unreachable!()
            };
            // Type ids are serde_arrow's variant indexes, 0, 1, ... in order.
            let keys: Int32Array = u.type_ids().iter().map(|&t| Some(i32::from(t))).collect();
            let names: StringArray = uf.iter().map(|(_, f)| Some(f.name().as_str())).collect();
            let d = DictionaryArray::<Int32Type>::try_new(keys, Arc::new(names))
                .map_err(|e| Error::encode(path, e.to_string()))?;
            Ok(Arc::new(d))
        }
        (DataType::Union(suf, _), DataType::Union(huf, _)) => {
            let u = a
                .as_any()
                .downcast_ref::<UnionArray>()
                .ok_or_else(|| shape_error(path, sf.data_type(), a.data_type()))?;
            let mut children = Vec::with_capacity(huf.len());
            for ((id, sc), (_, hc)) in suf.iter().zip(huf.iter()) {
                let p = child_path(path, hc.name());
                let child = u.child(id);
                let DataType::Struct(hfs) = hc.data_type() else {
                    unreachable!()
                };
                let c: ArrayRef = match sc.data_type() {
                    DataType::Null => Arc::new(StructArray::new_empty_fields(child.len(), None)),
                    DataType::Struct(_) => to_h5(sc, hc, child, &p)?,
                    _ => {
                        let v = to_h5(
                            &sc.as_ref().clone().with_name("1"),
                            &hfs[0],
                            child,
                            &child_path(&p, "1"),
                        )?;
                        Arc::new(
                            StructArray::try_new(hfs.clone(), vec![v], None)
                                .map_err(|e| Error::encode(&p, e.to_string()))?,
                        )
                    }
                };
                children.push(c);
            }
            let out = UnionArray::try_new(
                huf.clone(),
                u.type_ids().clone(),
                u.offsets().cloned(),
                children,
            )
            .map_err(|e| Error::encode(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        (DataType::LargeUtf8, DataType::FixedSizeBinary(16)) => uuid_bytes(a, path),
        _ => Ok(a.clone()),
    }
}

/// UUID text (hyphenated or 32 hex digits) as `FixedSizeBinary(16)`.
fn uuid_bytes(a: &ArrayRef, path: &str) -> Result<ArrayRef> {
    let s = a
        .as_string_opt::<i64>()
        .ok_or_else(|| shape_error(path, &DataType::LargeUtf8, a.data_type()))?;
    let mut rows: Vec<Option<[u8; 16]>> = Vec::with_capacity(s.len());
    for (row, v) in s.iter().enumerate() {
        rows.push(match v {
            None => None,
            Some(text) => Some(parse_uuid(text).ok_or_else(|| {
                Error::encode(path, format!("row {row}: {text:?} is not a UUID"))
            })?),
        });
    }
    let arr =
        arrow_array::FixedSizeBinaryArray::try_from_sparse_iter_with_size(rows.into_iter(), 16)
            .map_err(|e| Error::encode(path, e.to_string()))?;
    Ok(Arc::new(arr))
}

fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = match text.len() {
        36 => {
            let b = text.as_bytes();
            if [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
                return None;
            }
            b.iter().copied().filter(|&c| c != b'-').collect()
        }
        32 => text.as_bytes().to_vec(),
        _ => return None,
    };
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let d = |c: u8| (c as char).to_digit(16);
        out[i] = (d(pair[0])? * 16 + d(pair[1])?) as u8;
    }
    Some(out)
}
