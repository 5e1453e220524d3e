//! The h5vec field of each field serde_arrow traced ([`h5_field`], SPEC.md
//! section 13): the Arrow field whose node is the one `#[derive(H5Vector)]`
//! writes for the same Rust shape (a tuple's record with
//! `HDF5Vectors.TupleCodec` and fields `1`, `2`, ...; a fieldless enum's
//! labelled integer; an enum with data's union with one record per
//! variant), and what a traced field is by its markers (a tuple, an
//! `Option`, UUID text).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, UnionFields, UnionMode};
use serde_arrow::schema::{Strategy, STRATEGY_KEY};

use crate::arrow::mapping::field_of;
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
pub(super) fn is_fieldless(u: &UnionFields) -> bool {
    u.iter()
        .all(|(_, f)| matches!(f.data_type(), DataType::Null))
}

/// Metadata of an enum with data that [`relax_union_items`](super::trace::relax_union_items) made nullable
/// for serde_arrow: not an `Option`, stored non-nullable.
pub(crate) const RELAXED: &str = "h5vec.serde.relaxed";

/// Whether serde field `f` is an `Option` (not only made nullable by
/// [`relax_union_items`](super::trace::relax_union_items)).
pub(crate) fn optional(f: &Field) -> bool {
    f.is_nullable() && !f.metadata().contains_key(RELAXED)
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
