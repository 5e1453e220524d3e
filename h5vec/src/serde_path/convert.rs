//! Between serde_arrow's Arrow fields and arrays and the ones `h5vec::arrow`
//! reads and writes for the derive's schema nodes (SPEC.md section 13).
//!
//! Saving: [`h5_field`] gives, for a field serde_arrow traced, the Arrow
//! field whose node is the one `#[derive(H5Vector)]` writes for the same
//! Rust shape (a tuple's record with `HDF5Vectors.TupleCodec` and fields
//! `1`, `2`, ...; a fieldless enum's labelled integer; an enum with data's
//! union with one record per variant), and [`to_h5`] moves serde_arrow's
//! arrays into it without copying values (only the labels of fieldless
//! enums are computed). Loading: [`from_h5`] turns what `h5vec::arrow`
//! reads back into arrays serde_arrow deserializes as the type.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int32Array, LargeBinaryArray, LargeListArray, MapArray,
    NullArray, StringArray, StructArray, UnionArray,
};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field, FieldRef, Fields, UnionFields, UnionMode};
use serde_arrow::schema::{Strategy, STRATEGY_KEY};

use crate::arrow::mapping::{field_of, label_type};
use crate::arrow::write::node::{field_node, nullable};
use crate::codec::child_path;
use crate::error::{Error, Result};
use crate::kinds::list::items_path;
use crate::options::SaveOptions;
use crate::schema::{ids, Kind, Schema};

/// Metadata of a text field that holds UUIDs (`FieldKind::Uuid`): stored
/// as the 16 bytes (SPEC.md section 4.7).
pub(crate) const UUID_TEXT: &str = "h5vec.serde.uuid_text";

/// Whether serde_arrow traced `f` from a tuple (or tuple struct / variant).
pub(crate) fn is_tuple(f: &Field) -> bool {
    f.metadata().get(STRATEGY_KEY).map(String::as_str) == Some(&Strategy::TupleAsStruct.to_string())
}

/// A union all of whose variants are unit variants (serde_arrow's `Null`
/// children): a fieldless enum.
fn is_fieldless(u: &UnionFields) -> bool {
    u.iter()
        .all(|(_, f)| matches!(f.data_type(), DataType::Null))
}

/// `fields` with every enum with data (a union that is not fieldless)
/// marked nullable, at any depth: Arrow counts a unit variant's row
/// (serde_arrow's `Null` child) as a null, which a non-nullable list
/// element, struct field or variant refuses (`Vec<Enum>`, a struct
/// variant holding an enum). [`h5_field`] stores them non-nullable, as the
/// derive does, and marks them [`RELAXED`]: serde never stores a null
/// there. An `Option<Enum>` stays nullable, stored as the derive stores it
/// (a `MASK` beside the union; serde_arrow cannot build a null union, the
/// direct path of fast.rs saves and loads it).
pub(crate) fn relax_union_items(fields: &mut [FieldRef]) {
    for f in fields.iter_mut() {
        *f = Arc::new(relax_field(f));
    }
}

fn relax_field(f: &Field) -> Field {
    let t = match f.data_type() {
        DataType::Struct(fs) => {
            let mut v: Vec<FieldRef> = fs.iter().cloned().collect();
            relax_union_items(&mut v);
            DataType::Struct(v.into())
        }
        DataType::LargeList(it) => DataType::LargeList(Arc::new(relax_field(it))),
        DataType::List(it) => DataType::List(Arc::new(relax_field(it))),
        DataType::Map(e, sorted) => DataType::Map(Arc::new(relax_field(e)), *sorted),
        DataType::Union(u, mode) if !is_fieldless(u) => {
            let (ids, children): (Vec<i8>, Vec<Field>) =
                u.iter().map(|(id, c)| (id, relax_field(c))).unzip();
            match UnionFields::try_new(ids, children) {
                Ok(uf) => DataType::Union(uf, *mode),
                Err(_) => f.data_type().clone(),
            }
        }
        t => t.clone(),
    };
    let union = matches!(&t, DataType::Union(u, _) if !is_fieldless(u));
    let out = f.clone().with_data_type(t);
    if union && !f.is_nullable() {
        // Nullable for serde_arrow only: stored non-nullable ([`h5_field`]).
        let mut meta = out.metadata().clone();
        meta.insert(RELAXED.to_owned(), "1".to_owned());
        return out.with_nullable(true).with_metadata(meta);
    }
    out
}

/// Metadata of an enum with data that [`relax_union_items`] made nullable
/// for serde_arrow: not an `Option`, stored non-nullable.
pub(crate) const RELAXED: &str = "h5vec.serde.relaxed";

/// Whether serde field `f` is an `Option` (not only made nullable by
/// [`relax_union_items`]).
pub(crate) fn optional(f: &Field) -> bool {
    f.is_nullable() && !f.metadata().contains_key(RELAXED)
}

/// An error for the first enum in `fields` (at `path`) with a variant
/// that sample tracing did not see (serde_arrow names it `""`): serde
/// gives a variant's name only when a value of it is serialized, and a
/// union stored without it would neither name its groups nor load as the
/// type.
pub(crate) fn check_unseen_variants(fields: &[FieldRef], path: &str) -> Result<()> {
    for f in fields {
        check_field(f, &child_path(path, f.name()))?;
    }
    Ok(())
}

fn check_field(f: &Field, path: &str) -> Result<()> {
    match f.data_type() {
        DataType::Struct(fs) => {
            check_unseen_variants(&fs.iter().cloned().collect::<Vec<_>>(), path)
        }
        DataType::LargeList(it) | DataType::List(it) => check_field(it, &items_path(path)),
        DataType::Map(e, _) => check_field(e, path),
        DataType::Union(u, _) => {
            let unseen: Vec<i8> = u
                .iter()
                .filter(|(_, c)| c.name().is_empty())
                .map(|(id, _)| id)
                .collect();
            if !unseen.is_empty() {
                let seen: Vec<&str> = u
                    .iter()
                    .filter(|(_, c)| !c.name().is_empty())
                    .map(|(_, c)| c.name().as_str())
                    .collect();
                return Err(Error::mismatch(
                    path,
                    "samples of every variant of the enum up to its last one (serde names a \
                     variant only when a value of it is serialized), or columns traced from \
                     the type (Columns::of, SchemaOptions::trace_type)",
                    format!("variants {seen:?} seen, variants at positions {unseen:?} not"),
                ));
            }
            for (_, c) in u.iter() {
                check_field(c, &child_path(path, c.name()))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `name` with the node `node` in its metadata (what `h5vec::arrow` reads
/// back), checked to describe the Arrow type.
fn with_node(name: &str, node: &Schema, path: &str) -> Result<Field> {
    field_of(name, node, true, path)
}

/// The record node of a tuple whose h5vec fields are `fields` (`1`, `2`,
/// ...), as the derive writes `(A, B)` and tuple structs.
fn tuple_node(fields: &[Field], path: &str, opts: &SaveOptions) -> Result<Schema> {
    let mut children = Vec::with_capacity(fields.len());
    for f in fields {
        children.push(field_node(f, &child_path(path, f.name()), opts, false)?);
    }
    let logical = format!(
        "({})",
        children
            .iter()
            .map(|c| c.logical_type.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut s = Schema::new(Kind::Record, ids::RECORD, ids::TUPLE, &logical);
    s.field_names = Some(fields.iter().map(|f| f.name().clone()).collect());
    s.children = children;
    Ok(s)
}

/// The labelled-enum node of a fieldless enum of variants `names`: the
/// variant index as the smallest unsigned integer that holds it, as
/// `#[repr(u8)]` (`u16`, `u32`) with implicit discriminants writes it.
fn enum_node(names: Vec<String>) -> Schema {
    let enc = match names.len() {
        0..=256 => "UInt8",
        257..=65536 => "UInt16",
        _ => "UInt32",
    };
    let logical = format!("enum {{ {} }}", names.join(", "));
    let mut s = Schema::new(Kind::Scalar, ids::SCALAR, ids::ENUM, &logical);
    s.encoded_type = Some(enc.into());
    s.variant_values = Some((0..names.len() as i64).collect());
    s.variant_names = Some(names);
    s
}

/// The h5vec field for serde_arrow's field `sf` at logical path `path`
/// (`item`: a list's element). Fields whose default node (SPEC.md section
/// 11) is already the derive's are kept, without serde_arrow's metadata.
pub(crate) fn h5_field(sf: &Field, path: &str, opts: &SaveOptions) -> Result<Field> {
    let name = sf.name();
    let nullable_f = sf.is_nullable();
    match sf.data_type() {
        DataType::Struct(fs) => {
            let tuple = is_tuple(sf);
            let children = h5_children(fs, tuple, path, opts)?;
            if tuple && !children.is_empty() {
                let mut node = tuple_node(&children, path, opts)?;
                if nullable_f {
                    node = nullable(node);
                }
                return with_node(name, &node, path);
            }
            Ok(Field::new(
                name,
                DataType::Struct(children.into()),
                nullable_f,
            ))
        }
        DataType::LargeList(it) | DataType::List(it) => {
            let h = h5_field(it, &items_path(path), opts)?;
            Ok(Field::new(
                name,
                DataType::LargeList(Arc::new(h)),
                nullable_f,
            ))
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::invalid(path, "a Map without a Struct of entries"));
            };
            let children = h5_children(kv, false, path, opts)?;
            let e = Field::new(entries.name(), DataType::Struct(children.into()), false);
            Ok(Field::new(
                name,
                DataType::Map(Arc::new(e), *sorted),
                nullable_f,
            ))
        }
        DataType::Union(u, _) if is_fieldless(u) => {
            let names = u.iter().map(|(_, f)| f.name().clone()).collect();
            let mut node = enum_node(names);
            if nullable_f {
                node = nullable(node);
            }
            with_node(name, &node, path)
        }
        DataType::Union(u, _) => {
            let mut ids = Vec::with_capacity(u.len());
            let mut children = Vec::with_capacity(u.len());
            for (id, f) in u.iter() {
                let p = child_path(path, f.name());
                let h = match f.data_type() {
                    DataType::Null => {
                        Field::new(f.name(), DataType::Struct(Fields::empty()), false)
                    }
                    DataType::Struct(fs) => {
                        let c = h5_children(fs, is_tuple(f), &p, opts)?;
                        Field::new(f.name(), DataType::Struct(c.into()), false)
                    }
                    _ => {
                        // A newtype variant: the derive's one-field tuple variant.
                        let inner = h5_field(
                            &f.as_ref().clone().with_name("1"),
                            &child_path(&p, "1"),
                            opts,
                        )?;
                        Field::new(f.name(), DataType::Struct(vec![inner].into()), false)
                    }
                };
                ids.push(id);
                children.push(h);
            }
            // An `Option<Enum>`: a null row is null in the child of its
            // tag (SPEC.md section 11), so the children are nullable.
            let opt = optional(sf);
            let children = children.into_iter().map(|c| c.with_nullable(opt));
            let uf = UnionFields::try_new(ids, children)
                .map_err(|e| Error::invalid(path, e.to_string()))?;
            Ok(Field::new(name, DataType::Union(uf, UnionMode::Dense), opt))
        }
        DataType::LargeUtf8 | DataType::Utf8 if sf.metadata().contains_key(UUID_TEXT) => {
            Ok(Field::new(name, DataType::FixedSizeBinary(16), nullable_f)
                .with_extension_type(arrow_schema::extension::Uuid))
        }
        t => {
            // Leaves keep their type; only Arrow's own extension metadata stays.
            let meta: HashMap<String, String> = sf
                .metadata()
                .iter()
                .filter(|(k, _)| k.starts_with("ARROW:"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Ok(Field::new(name, t.clone(), nullable_f).with_metadata(meta))
        }
    }
}

fn h5_children(fs: &Fields, tuple: bool, path: &str, opts: &SaveOptions) -> Result<Vec<Field>> {
    let mut out = Vec::with_capacity(fs.len());
    for (i, f) in fs.iter().enumerate() {
        let n = if tuple {
            (i + 1).to_string()
        } else {
            f.name().clone()
        };
        let renamed = f.as_ref().clone().with_name(n.clone());
        out.push(h5_field(&renamed, &child_path(path, &n), opts)?);
    }
    Ok(out)
}

fn shape_error(path: &str, want: &DataType, found: &DataType) -> Error {
    Error::mismatch(path, format!("Arrow values of type {want}"), found)
}

/// serde_arrow's array `a` of field `sf` as an array of the h5vec field
/// `hf` ([`h5_field`] of `sf`).
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
