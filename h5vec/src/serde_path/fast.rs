//! A direct serde path for the common shapes (SPEC.md section 13): structs,
//! tuples and fixed-size arrays of numbers, `bool`, strings, lists and
//! `Option`s of these. Saving fills Arrow builders of the h5vec fields
//! through a `Serializer` that follows a per-field plan; loading
//! deserializes straight from the arrays `h5vec::arrow` reads. Shapes
//! outside this set (enums, maps, bytes, times, UUIDs, units, flattened
//! structs, optional records) go through serde_arrow ([`Plan::new`] and
//! [`Reader::new`] return `None` for them).

use std::fmt::Display;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder,
    Int8Builder, LargeStringBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, FixedSizeListArray, LargeListArray, LargeStringArray,
    PrimitiveArray, StructArray,
};
use arrow_buffer::{NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields};
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::ser::{self, Impossible, Serialize};
use serde_arrow::schema::STRATEGY_KEY;

use super::convert::{is_tuple, UUID_TEXT};
use crate::error::{Error, Result};

// ---------------------------------------------------------------- errors

/// A serde error with the field path, innermost segment first. Boxed:
/// every value (de)serialized returns a `Result` of it, which stays one
/// pointer wide.
#[derive(Debug)]
pub(crate) struct PathError(Box<PathErrorInner>);

#[derive(Debug)]
struct PathErrorInner {
    segments: Vec<String>,
    msg: String,
}

impl PathError {
    fn msg(m: impl Display) -> Self {
        PathError(Box::new(PathErrorInner {
            segments: Vec::new(),
            msg: m.to_string(),
        }))
    }
    fn at(mut self, seg: &str) -> Self {
        self.0.segments.push(seg.to_owned());
        self
    }
    /// The same error with `prefix` before its message.
    fn prefixed(mut self, prefix: impl Display) -> Self {
        self.0.msg = format!("{prefix}: {}", self.0.msg);
        self
    }
    /// The logical path (`$.a.b[]`) of the error.
    pub(crate) fn path(&self) -> String {
        let mut p = String::from("$");
        for s in self.0.segments.iter().rev() {
            if s == "[]" {
                p.push_str("[]");
            } else {
                p.push('.');
                p.push_str(s);
            }
        }
        p
    }
}

impl Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.msg)
    }
}
impl std::error::Error for PathError {}
impl ser::Error for PathError {
    fn custom<T: Display>(msg: T) -> Self {
        PathError::msg(msg)
    }
}
impl de::Error for PathError {
    fn custom<T: Display>(msg: T) -> Self {
        PathError::msg(msg)
    }
}

type R<T = ()> = std::result::Result<T, PathError>;

/// Whether `f` carries no serde_arrow strategy but a tuple's, and no
/// h5vec serde marker: a field the direct path handles as its type says.
fn plain(f: &Field) -> bool {
    !f.metadata().contains_key(UUID_TEXT)
        && (!f.metadata().contains_key(STRATEGY_KEY) || is_tuple(f))
}

// ---------------------------------------------------------------- saving

enum Leaf {
    Bool(BooleanBuilder),
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Str(LargeStringBuilder),
}

enum Kind {
    Leaf(Leaf),
    List {
        field: FieldRef,
        offsets: Vec<i64>,
        nulls: NullBufferBuilder,
        item: Box<Node>,
    },
    Fixed {
        field: FieldRef,
        n: usize,
        item: Box<Node>,
    },
    Record {
        fields: Fields,
        children: Vec<Node>,
        /// The serde key each field last matched: a key is a `&'static
        /// str`, so the same key of the next row matches by address.
        keys: Vec<Option<&'static str>>,
    },
}

struct Node {
    kind: Kind,
    nullable: bool,
}

fn conv<T: TryFrom<V>, V: Copy + Display>(v: V) -> R<T> {
    T::try_from(v).map_err(|_| PathError::msg(format!("{v} out of range of the column's type")))
}

macro_rules! ints {
    ($self:ident, $v:ident, $what:literal) => {
        match $self {
            Leaf::I8(b) => b.append_value(conv($v)?),
            Leaf::I16(b) => b.append_value(conv($v)?),
            Leaf::I32(b) => b.append_value(conv($v)?),
            Leaf::I64(b) => b.append_value(conv($v)?),
            Leaf::U8(b) => b.append_value(conv($v)?),
            Leaf::U16(b) => b.append_value(conv($v)?),
            Leaf::U32(b) => b.append_value(conv($v)?),
            Leaf::U64(b) => b.append_value(conv($v)?),
            Leaf::F32(b) => b.append_value($v as f32),
            Leaf::F64(b) => b.append_value($v as f64),
            _ => {
                return Err(PathError::msg(concat!(
                    "found ",
                    $what,
                    " for a column of another type"
                )))
            }
        }
    };
}

impl Leaf {
    fn new(t: &DataType) -> Option<Self> {
        Some(match t {
            DataType::Boolean => Leaf::Bool(BooleanBuilder::new()),
            DataType::Int8 => Leaf::I8(Int8Builder::new()),
            DataType::Int16 => Leaf::I16(Int16Builder::new()),
            DataType::Int32 => Leaf::I32(Int32Builder::new()),
            DataType::Int64 => Leaf::I64(Int64Builder::new()),
            DataType::UInt8 => Leaf::U8(UInt8Builder::new()),
            DataType::UInt16 => Leaf::U16(UInt16Builder::new()),
            DataType::UInt32 => Leaf::U32(UInt32Builder::new()),
            DataType::UInt64 => Leaf::U64(UInt64Builder::new()),
            DataType::Float32 => Leaf::F32(Float32Builder::new()),
            DataType::Float64 => Leaf::F64(Float64Builder::new()),
            DataType::LargeUtf8 => Leaf::Str(LargeStringBuilder::new()),
            _ => return None,
        })
    }
    fn i64(&mut self, v: i64) -> R {
        ints!(self, v, "an integer");
        Ok(())
    }
    fn u64(&mut self, v: u64) -> R {
        ints!(self, v, "an integer");
        Ok(())
    }
    fn f64(&mut self, v: f64) -> R {
        match self {
            Leaf::F32(b) => b.append_value(v as f32),
            Leaf::F64(b) => b.append_value(v),
            _ => return Err(PathError::msg("found a float for a column of another type")),
        }
        Ok(())
    }
    fn null(&mut self) {
        match self {
            Leaf::Bool(b) => b.append_null(),
            Leaf::I8(b) => b.append_null(),
            Leaf::I16(b) => b.append_null(),
            Leaf::I32(b) => b.append_null(),
            Leaf::I64(b) => b.append_null(),
            Leaf::U8(b) => b.append_null(),
            Leaf::U16(b) => b.append_null(),
            Leaf::U32(b) => b.append_null(),
            Leaf::U64(b) => b.append_null(),
            Leaf::F32(b) => b.append_null(),
            Leaf::F64(b) => b.append_null(),
            Leaf::Str(b) => b.append_null(),
        }
    }
    /// The values so far; the builder starts again with room for `next`
    /// values (one allocation per batch instead of growing by doubling).
    fn finish(&mut self, next: usize) -> ArrayRef {
        macro_rules! take {
            ($b:ident, $t:ident) => {{
                let a = Arc::new($b.finish());
                *$b = $t::with_capacity(next);
                a
            }};
        }
        match self {
            Leaf::Bool(b) => take!(b, BooleanBuilder),
            Leaf::I8(b) => take!(b, Int8Builder),
            Leaf::I16(b) => take!(b, Int16Builder),
            Leaf::I32(b) => take!(b, Int32Builder),
            Leaf::I64(b) => take!(b, Int64Builder),
            Leaf::U8(b) => take!(b, UInt8Builder),
            Leaf::U16(b) => take!(b, UInt16Builder),
            Leaf::U32(b) => take!(b, UInt32Builder),
            Leaf::U64(b) => take!(b, UInt64Builder),
            Leaf::F32(b) => take!(b, Float32Builder),
            Leaf::F64(b) => take!(b, Float64Builder),
            Leaf::Str(b) => {
                let a = Arc::new(b.finish());
                let bytes = a.value_data().len();
                *b = LargeStringBuilder::with_capacity(next, bytes);
                a
            }
        }
    }
}

impl Node {
    /// The plan of serde field `sf` written as h5vec field `hf`.
    fn new(sf: &Field, hf: &Field) -> Option<Self> {
        if !plain(sf) {
            return None;
        }
        let kind = match (sf.data_type(), hf.data_type()) {
            (DataType::Struct(sfs), DataType::Struct(hfs))
                if !sf.is_nullable() && !hfs.is_empty() && sfs.len() == hfs.len() =>
            {
                let children = sfs
                    .iter()
                    .zip(hfs.iter())
                    .map(|(s, h)| Node::new(s, h))
                    .collect::<Option<Vec<_>>>()?;
                Kind::Record {
                    fields: hfs.clone(),
                    keys: vec![None; children.len()],
                    children,
                }
            }
            (DataType::LargeList(si) | DataType::List(si), DataType::LargeList(hi)) => Kind::List {
                field: hi.clone(),
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
                item: Box::new(Node::new(si, hi)?),
            },
            (DataType::FixedSizeList(si, n), DataType::FixedSizeList(hi, m))
                if n == m && !sf.is_nullable() =>
            {
                Kind::Fixed {
                    field: hi.clone(),
                    n: usize::try_from(*n).ok()?,
                    item: Box::new(Node::new(si, hi)?),
                }
            }
            (s, h) if s == h && hf.metadata().is_empty() => Kind::Leaf(Leaf::new(h)?),
            _ => return None,
        };
        Some(Node {
            kind,
            nullable: sf.is_nullable() && hf.is_nullable(),
        })
    }

    fn leaf(&mut self) -> R<&mut Leaf> {
        match &mut self.kind {
            Kind::Leaf(l) => Ok(l),
            _ => Err(PathError::msg(
                "found a number, bool or string for a list or record",
            )),
        }
    }

    fn null(&mut self) -> R {
        if !self.nullable {
            return Err(PathError::msg(
                "found no value (None or a missing field) for a field that is not optional",
            ));
        }
        match &mut self.kind {
            Kind::Leaf(l) => l.null(),
            Kind::List { offsets, nulls, .. } => {
                let last = *offsets.last().unwrap_or(&0);
                offsets.push(last);
                nulls.append_null();
            }
            // Plans hold no optional records or arrays (Node::new).
            _ => return Err(PathError::msg("found None for a record")),
        }
        Ok(())
    }

    fn finish(&mut self, rows: usize) -> Result<ArrayRef> {
        let err = |e: arrow_schema::ArrowError| Error::encode("$", e.to_string());
        Ok(match &mut self.kind {
            Kind::Leaf(l) => l.finish(rows),
            Kind::List {
                field,
                offsets,
                nulls,
                item,
            } => {
                let mut next = Vec::with_capacity(offsets.len());
                next.push(0);
                let offs = std::mem::replace(offsets, next);
                let values =
                    item.finish(usize::try_from(*offs.last().unwrap_or(&0)).unwrap_or(0))?;
                let offs = OffsetBuffer::new(ScalarBuffer::from(offs));
                Arc::new(
                    LargeListArray::try_new(field.clone(), offs, values, nulls.finish())
                        .map_err(err)?,
                )
            }
            Kind::Fixed { field, n, item } => {
                let values = item.finish(rows * *n)?;
                let n = i32::try_from(*n).map_err(|e| Error::encode("$", e.to_string()))?;
                Arc::new(FixedSizeListArray::try_new(field.clone(), n, values, None).map_err(err)?)
            }
            Kind::Record {
                fields, children, ..
            } => {
                let cols = children
                    .iter_mut()
                    .map(|c| c.finish(rows))
                    .collect::<Result<Vec<_>>>()?;
                Arc::new(
                    StructArray::try_new_with_length(fields.clone(), cols, None, rows)
                        .map_err(err)?,
                )
            }
        })
    }
}

/// The save plan of a vector's columns: a builder per leaf.
pub(crate) struct Plan {
    root: Node,
    rows: usize,
}

impl Plan {
    /// The plan for serde fields `sfs` written as h5vec fields `hfs`, or
    /// `None` when a field needs serde_arrow.
    pub(crate) fn new(sfs: &[FieldRef], hfs: &Fields) -> Option<Self> {
        if sfs.len() != hfs.len() || sfs.is_empty() {
            return None;
        }
        let children = sfs
            .iter()
            .zip(hfs.iter())
            .map(|(s, h)| Node::new(s, h))
            .collect::<Option<Vec<_>>>()?;
        Some(Plan {
            root: Node {
                kind: Kind::Record {
                    fields: hfs.clone(),
                    keys: vec![None; children.len()],
                    children,
                },
                nullable: false,
            },
            rows: 0,
        })
    }

    /// Serializes `items` into the builders.
    pub(crate) fn push_all<T: Serialize>(&mut self, items: &[T]) -> R {
        for (i, item) in items.iter().enumerate() {
            item.serialize(Ser(&mut self.root))
                .map_err(|e| e.prefixed(format_args!("row {}", self.rows + i)))?;
        }
        self.rows += items.len();
        Ok(())
    }

    /// The columns built so far (the builders are emptied).
    pub(crate) fn finish(&mut self) -> Result<Vec<ArrayRef>> {
        let rows = std::mem::take(&mut self.rows);
        let Kind::Record { children, .. } = &mut self.root.kind else {
            unreachable!("the root is a record")
        };
        children.iter_mut().map(|c| c.finish(rows)).collect()
    }
}

struct Ser<'a>(&'a mut Node);

impl<'a> ser::Serializer for Ser<'a> {
    type Ok = ();
    type Error = PathError;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Impossible<(), PathError>;
    type SerializeMap = Impossible<(), PathError>;
    type SerializeStruct = Rec<'a>;
    type SerializeStructVariant = Impossible<(), PathError>;

    fn is_human_readable(&self) -> bool {
        false
    }
    fn serialize_bool(self, v: bool) -> R {
        match self.0.leaf()? {
            Leaf::Bool(b) => b.append_value(v),
            _ => return Err(PathError::msg("found a bool for a column of another type")),
        }
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> R {
        self.0.leaf()?.i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> R {
        self.0.leaf()?.i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> R {
        self.0.leaf()?.i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> R {
        self.0.leaf()?.i64(v)
    }
    fn serialize_u8(self, v: u8) -> R {
        self.0.leaf()?.u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> R {
        self.0.leaf()?.u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> R {
        self.0.leaf()?.u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> R {
        self.0.leaf()?.u64(v)
    }
    fn serialize_f32(self, v: f32) -> R {
        self.0.leaf()?.f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> R {
        self.0.leaf()?.f64(v)
    }
    fn serialize_char(self, v: char) -> R {
        // A char is its code point (serde_arrow traces it as UInt32).
        self.0.leaf()?.u64(u64::from(u32::from(v)))
    }
    fn serialize_str(self, v: &str) -> R {
        match self.0.leaf()? {
            Leaf::Str(b) => b.append_value(v),
            _ => {
                return Err(PathError::msg(
                    "found a string for a column of another type",
                ))
            }
        }
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> R {
        Err(PathError::msg("found bytes for a column of another type"))
    }
    fn serialize_none(self) -> R {
        self.0.null()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_unit(self) -> R {
        Err(PathError::msg("found a unit for a column of another type"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> R {
        Err(PathError::msg(format!(
            "found enum variant `{v}` for a column of another type"
        )))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
        _: &T,
    ) -> R {
        Err(PathError::msg(format!(
            "found enum variant `{v}` for a column of another type"
        )))
    }
    fn serialize_seq(self, _: Option<usize>) -> R<Seq<'a>> {
        match self.0.kind {
            Kind::Leaf(_) => Err(PathError::msg(
                "found a sequence for a number, bool or string",
            )),
            _ => Ok(Seq {
                node: self.0,
                count: 0,
            }),
        }
    }
    fn serialize_tuple(self, len: usize) -> R<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> R<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
        _: usize,
    ) -> R<Self::SerializeTupleVariant> {
        Err(PathError::msg(format!(
            "found enum variant `{v}` for a column of another type"
        )))
    }
    fn serialize_map(self, _: Option<usize>) -> R<Self::SerializeMap> {
        Err(PathError::msg("found a map for a column of another type"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> R<Rec<'a>> {
        match self.0.kind {
            Kind::Record { .. } => Ok(Rec {
                node: self.0,
                next: 0,
            }),
            _ => Err(PathError::msg(
                "found a struct for a column of another type",
            )),
        }
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
        _: usize,
    ) -> R<Self::SerializeStructVariant> {
        Err(PathError::msg(format!(
            "found enum variant `{v}` for a column of another type"
        )))
    }
}

/// A sequence, tuple or array being serialized into a list, a dense array
/// or a tuple's record.
struct Seq<'a> {
    node: &'a mut Node,
    count: usize,
}

impl Seq<'_> {
    fn element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        let i = self.count;
        self.count += 1;
        match &mut self.node.kind {
            Kind::List { item, .. } => v.serialize(Ser(item)).map_err(|e| e.at("[]")),
            Kind::Fixed { item, n, .. } if i < *n => v.serialize(Ser(item)).map_err(|e| e.at("[]")),
            Kind::Record {
                children, fields, ..
            } if i < children.len() => v
                .serialize(Ser(&mut children[i]))
                .map_err(|e| e.at(fields[i].name())),
            _ => Err(PathError::msg(format!(
                "found more than {i} elements for a fixed-size array or tuple"
            ))),
        }
    }
    fn end(self) -> R {
        match &mut self.node.kind {
            Kind::List { offsets, nulls, .. } => {
                let last = *offsets.last().unwrap_or(&0);
                let n = i64::try_from(self.count).map_err(PathError::msg)?;
                offsets.push(
                    last.checked_add(n)
                        .ok_or_else(|| PathError::msg("list offsets overflow"))?,
                );
                nulls.append_non_null();
            }
            Kind::Fixed { n, .. } if self.count == *n => {}
            Kind::Record { children, .. } if self.count == children.len() => {}
            Kind::Fixed { n, .. } => {
                return Err(PathError::msg(format!(
                    "found {} elements for an array of {n}",
                    self.count
                )))
            }
            Kind::Record { children, .. } => {
                return Err(PathError::msg(format!(
                    "found {} elements for a tuple of {}",
                    self.count,
                    children.len()
                )))
            }
            Kind::Leaf(_) => unreachable!("serialize_seq refuses leaves"),
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    fn end(self) -> R {
        Seq::end(self)
    }
}
impl ser::SerializeTuple for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    fn end(self) -> R {
        Seq::end(self)
    }
}
impl ser::SerializeTupleStruct for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    fn end(self) -> R {
        Seq::end(self)
    }
}

/// A struct being serialized into a record: fields in the traced order;
/// a skipped optional field is null.
struct Rec<'a> {
    node: &'a mut Node,
    next: usize,
}

impl ser::SerializeStruct for Rec<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, v: &T) -> R {
        let Kind::Record {
            fields,
            children,
            keys,
        } = &mut self.node.kind
        else {
            unreachable!("serialize_struct takes records only")
        };
        let at = if keys
            .get(self.next)
            .is_some_and(|k| k.is_some_and(|k| std::ptr::eq(k, key)))
        {
            self.next
        } else {
            let at = fields
                .iter()
                .skip(self.next)
                .position(|f| f.name() == key)
                .map(|k| k + self.next)
                .ok_or_else(|| {
                    PathError::msg(format!(
                        "field `{key}` is not a traced field here (or comes out of order)"
                    ))
                })?;
            keys[at] = Some(key);
            at
        };
        for j in self.next..at {
            children[j].null().map_err(|e| e.at(fields[j].name()))?;
        }
        self.next = at + 1;
        v.serialize(Ser(&mut children[at])).map_err(|e| e.at(key))
    }
    fn skip_field(&mut self, _: &'static str) -> R {
        Ok(())
    }
    fn end(self) -> R {
        let Kind::Record {
            fields, children, ..
        } = &mut self.node.kind
        else {
            unreachable!("serialize_struct takes records only")
        };
        for j in self.next..children.len() {
            children[j].null().map_err(|e| e.at(fields[j].name()))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- loading

enum DKind {
    Bool(BooleanArray),
    I8(PrimitiveArray<Int8Type>),
    I16(PrimitiveArray<Int16Type>),
    I32(PrimitiveArray<Int32Type>),
    I64(PrimitiveArray<Int64Type>),
    U8(PrimitiveArray<UInt8Type>),
    U16(PrimitiveArray<UInt16Type>),
    U32(PrimitiveArray<UInt32Type>),
    U64(PrimitiveArray<UInt64Type>),
    F32(PrimitiveArray<Float32Type>),
    F64(PrimitiveArray<Float64Type>),
    Str(LargeStringArray),
    List(LargeListArray, Box<DNode>),
    Fixed(usize, Box<DNode>),
    Record {
        names: Vec<String>,
        tuple: bool,
        children: Vec<DNode>,
    },
}

struct DNode {
    kind: DKind,
    nulls: Option<NullBuffer>,
}

impl DNode {
    /// The reader of stored array `a` for serde field `sf`, or `None` for
    /// a shape serde_arrow reads.
    fn new(sf: &Field, a: &ArrayRef) -> Option<Self> {
        if !plain(sf) {
            return None;
        }
        let kind = match (sf.data_type(), a.data_type()) {
            (DataType::Struct(sfs), DataType::Struct(_)) if !sfs.is_empty() => {
                let s = a.as_struct();
                let tuple = is_tuple(sf);
                if tuple && s.num_columns() != sfs.len() {
                    return None;
                }
                let mut children = Vec::with_capacity(sfs.len());
                for (i, c) in sfs.iter().enumerate() {
                    let col = if tuple {
                        s.column(i)
                    } else {
                        s.column_by_name(c.name())?
                    };
                    children.push(DNode::new(c, col)?);
                }
                DKind::Record {
                    names: sfs.iter().map(|f| f.name().clone()).collect(),
                    tuple,
                    children,
                }
            }
            (DataType::Struct(sfs), DataType::FixedSizeList(_, n)) if is_tuple(sf) => {
                let l = a.as_fixed_size_list();
                let item = sfs.first()?;
                if usize::try_from(*n).ok()? != sfs.len()
                    || sfs.iter().any(|f| f.data_type() != item.data_type())
                {
                    return None;
                }
                DKind::Fixed(sfs.len(), Box::new(DNode::new(item, l.values())?))
            }
            (DataType::FixedSizeList(si, n), DataType::FixedSizeList(_, m)) if n == m => {
                let l = a.as_fixed_size_list();
                DKind::Fixed(
                    usize::try_from(*n).ok()?,
                    Box::new(DNode::new(si, l.values())?),
                )
            }
            (DataType::LargeList(si) | DataType::List(si), DataType::LargeList(_)) => {
                let l = a.as_list::<i64>();
                DKind::List(l.clone(), Box::new(DNode::new(si, l.values())?))
            }
            (s, _) if s.is_nested() => return None,
            (_, DataType::Boolean) => DKind::Bool(a.as_boolean().clone()),
            (_, DataType::Int8) => DKind::I8(a.as_primitive().clone()),
            (_, DataType::Int16) => DKind::I16(a.as_primitive().clone()),
            (_, DataType::Int32) => DKind::I32(a.as_primitive().clone()),
            (_, DataType::Int64) => DKind::I64(a.as_primitive().clone()),
            (_, DataType::UInt8) => DKind::U8(a.as_primitive().clone()),
            (_, DataType::UInt16) => DKind::U16(a.as_primitive().clone()),
            (_, DataType::UInt32) => DKind::U32(a.as_primitive().clone()),
            (_, DataType::UInt64) => DKind::U64(a.as_primitive().clone()),
            (_, DataType::Float32) => DKind::F32(a.as_primitive().clone()),
            (_, DataType::Float64) => DKind::F64(a.as_primitive().clone()),
            (_, DataType::LargeUtf8) => DKind::Str(a.as_string::<i64>().clone()),
            _ => return None,
        };
        // Values are indexed from the array's start (sliced views go through serde_arrow).
        if a.offset() != 0 {
            return None;
        }
        Some(DNode {
            kind,
            nulls: a.logical_nulls().filter(|n| n.null_count() > 0),
        })
    }
}

/// The load plan of a batch: serde fields matched to the stored columns.
pub(crate) struct Reader {
    root: DNode,
    rows: usize,
}

impl Reader {
    /// The reader of the stored columns `cols` (by name) for serde fields
    /// `sfs`, or `None` when a field needs serde_arrow.
    pub(crate) fn new(sfs: &[FieldRef], root: &StructArray) -> Option<Self> {
        if sfs.is_empty() || root.offset() != 0 {
            return None;
        }
        let children = sfs
            .iter()
            .map(|f| DNode::new(f, root.column_by_name(f.name())?))
            .collect::<Option<Vec<_>>>()?;
        Some(Reader {
            root: DNode {
                kind: DKind::Record {
                    names: sfs.iter().map(|f| f.name().clone()).collect(),
                    tuple: false,
                    children,
                },
                nulls: None,
            },
            rows: root.len(),
        })
    }

    /// Deserializes every row.
    pub(crate) fn rows<T: de::DeserializeOwned>(&self) -> R<Vec<T>> {
        let mut out = Vec::with_capacity(self.rows);
        for row in 0..self.rows {
            out.push(
                T::deserialize(De {
                    node: &self.root,
                    row,
                })
                .map_err(|e| e.prefixed(format_args!("row {row}")))?,
            );
        }
        Ok(out)
    }
}

#[derive(Clone, Copy)]
struct De<'a> {
    node: &'a DNode,
    row: usize,
}

impl<'a> De<'a> {
    fn is_null(&self) -> bool {
        self.node
            .nulls
            .as_ref()
            .is_some_and(|n| n.is_null(self.row))
    }
}

impl<'de> de::Deserializer<'de> for De<'_> {
    type Error = PathError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        if self.is_null() {
            return v.visit_none();
        }
        let r = self.row;
        match &self.node.kind {
            DKind::Bool(a) => v.visit_bool(a.value(r)),
            DKind::I8(a) => v.visit_i8(a.value(r)),
            DKind::I16(a) => v.visit_i16(a.value(r)),
            DKind::I32(a) => v.visit_i32(a.value(r)),
            DKind::I64(a) => v.visit_i64(a.value(r)),
            DKind::U8(a) => v.visit_u8(a.value(r)),
            DKind::U16(a) => v.visit_u16(a.value(r)),
            DKind::U32(a) => v.visit_u32(a.value(r)),
            DKind::U64(a) => v.visit_u64(a.value(r)),
            DKind::F32(a) => v.visit_f32(a.value(r)),
            DKind::F64(a) => v.visit_f64(a.value(r)),
            DKind::Str(a) => v.visit_str(a.value(r)),
            DKind::List(l, item) => {
                let o = l.value_offsets();
                let (s, e) = (o[r], o[r + 1]);
                let (s, e) = (
                    usize::try_from(s).map_err(PathError::msg)?,
                    usize::try_from(e).map_err(PathError::msg)?,
                );
                v.visit_seq(SeqDe {
                    item,
                    next: s,
                    end: e,
                    label: None,
                })
            }
            DKind::Fixed(n, item) => {
                let s = r * n;
                v.visit_seq(SeqDe {
                    item,
                    next: s,
                    end: s + n,
                    label: None,
                })
            }
            DKind::Record {
                names,
                tuple: false,
                children,
            } => v.visit_map(MapDe {
                names,
                children,
                row: r,
                next: 0,
            }),
            DKind::Record {
                names,
                tuple: true,
                children,
            } => v.visit_seq(TupleDe {
                names,
                children,
                row: r,
                next: 0,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        if self.is_null() {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        match &self.node.kind {
            DKind::U32(a) if !self.is_null() => {
                let c = a.value(self.row);
                v.visit_char(
                    char::from_u32(c)
                        .ok_or_else(|| PathError::msg(format!("{c} is not a char")))?,
                )
            }
            _ => self.deserialize_any(v),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> R<V::Value> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, v: V) -> R<V::Value> {
        match &self.node.kind {
            DKind::Record {
                names, children, ..
            } if !self.is_null() => v.visit_seq(TupleDe {
                names,
                children,
                row: self.row,
                next: 0,
            }),
            _ => self.deserialize_any(v),
        }
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        n: usize,
        v: V,
    ) -> R<V::Value> {
        self.deserialize_tuple(n, v)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        v.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 str string
        bytes byte_buf unit unit_struct seq map struct enum identifier
    }
}

struct SeqDe<'a> {
    item: &'a DNode,
    next: usize,
    end: usize,
    label: Option<&'a str>,
}

impl<'de> de::SeqAccess<'de> for SeqDe<'_> {
    type Error = PathError;
    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> R<Option<S::Value>> {
        if self.next >= self.end {
            return Ok(None);
        }
        let row = self.next;
        self.next += 1;
        seed.deserialize(De {
            node: self.item,
            row,
        })
        .map(Some)
        .map_err(|e| e.at(self.label.unwrap_or("[]")))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.end - self.next)
    }
}

struct TupleDe<'a> {
    names: &'a [String],
    children: &'a [DNode],
    row: usize,
    next: usize,
}

impl<'de> de::SeqAccess<'de> for TupleDe<'_> {
    type Error = PathError;
    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> R<Option<S::Value>> {
        let Some(c) = self.children.get(self.next) else {
            return Ok(None);
        };
        let i = self.next;
        self.next += 1;
        seed.deserialize(De {
            node: c,
            row: self.row,
        })
        .map(Some)
        .map_err(|e| e.at(&self.names[i]))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.children.len() - self.next)
    }
}

struct MapDe<'a> {
    names: &'a [String],
    children: &'a [DNode],
    row: usize,
    next: usize,
}

impl<'de> de::MapAccess<'de> for MapDe<'_> {
    type Error = PathError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> R<Option<K::Value>> {
        let Some(name) = self.names.get(self.next) else {
            return Ok(None);
        };
        let d: de::value::StrDeserializer<'_, PathError> = name.as_str().into_deserializer();
        seed.deserialize(d).map(Some)
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> R<S::Value> {
        let i = self.next;
        self.next += 1;
        seed.deserialize(De {
            node: &self.children[i],
            row: self.row,
        })
        .map_err(|e| e.at(&self.names[i]))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.children.len() - self.next)
    }
}
