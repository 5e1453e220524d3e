//! A direct serde path for the common shapes (SPEC.md section 13): structs,
//! tuples and fixed-size arrays of numbers, `bool`, strings, lists and
//! `Option`s of these. Saving fills a plain buffer per leaf of the h5vec
//! fields through a `Serializer` that follows a per-field plan (the
//! buffers are lent to each batch's arrays and reused); loading
//! deserializes straight from the arrays `h5vec::arrow` reads. Shapes
//! outside this set (enums, maps, bytes, times, UUIDs, units, flattened
//! structs, optional records) go through serde_arrow ([`Plan::new`] and
//! [`Reader::new`] return `None` for them).

use std::cell::Cell;
use std::fmt::Display;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, FixedSizeListArray, LargeListArray, LargeStringArray,
    PrimitiveArray, StructArray, UnionArray,
};
use arrow_buffer::{
    ArrowNativeType, BooleanBufferBuilder, Buffer, NullBuffer, NullBufferBuilder, OffsetBuffer,
    ScalarBuffer,
};
use arrow_schema::{DataType, Field, FieldRef, Fields, UnionFields};
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::ser::{self, Impossible, Serialize};
use serde_arrow::schema::STRATEGY_KEY;

use super::convert::{is_tuple, optional, UUID_TEXT};
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

/// The values of one column: a plain `Vec` filled row by row, lent to the
/// batch's Arrow array without a copy ([`lend`](Self::lend)) and taken
/// back once the batch is written ([`reclaim`](Self::reclaim)), so every
/// batch fills the same allocation.
struct Vals<T: ArrowNativeType> {
    vec: Vec<T>,
    lent: Option<Buffer>,
}

impl<T: ArrowNativeType> Vals<T> {
    fn new() -> Self {
        Vals {
            vec: Vec::new(),
            lent: None,
        }
    }
    #[inline(always)]
    fn push(&mut self, v: T) {
        self.vec.push(v);
    }
    /// The values so far as an Arrow buffer (the `Vec`'s own allocation);
    /// the column starts again empty.
    fn lend(&mut self) -> ScalarBuffer<T> {
        let len = self.vec.len();
        let b = Buffer::from_vec(std::mem::take(&mut self.vec));
        self.lent = Some(b.clone());
        ScalarBuffer::new(b, 0, len)
    }
    /// Takes the lent allocation back if no array holds it any more, or
    /// else starts a new one of the same size.
    fn reclaim(&mut self) {
        let Some(b) = self.lent.take() else {
            return;
        };
        let cap = b.len() / std::mem::size_of::<T>();
        self.vec = match b.into_vec::<T>() {
            Ok(mut v) => {
                v.clear();
                v
            }
            Err(_) => Vec::with_capacity(cap),
        };
    }
}

/// List or string offsets: [`Vals`] that always start with 0.
struct Offsets(Vals<i64>);

impl Offsets {
    fn new() -> Self {
        let mut v = Vals::new();
        v.push(0);
        Offsets(v)
    }
    #[inline]
    fn last(&self) -> i64 {
        self.0.vec.last().copied().unwrap_or(0)
    }
    /// Appends the end of a row `n` values long.
    #[inline]
    fn add(&mut self, n: usize) -> R {
        let end = i64::try_from(n)
            .ok()
            .and_then(|n| self.last().checked_add(n))
            .ok_or_else(|| PathError::msg("offsets overflow"))?;
        self.0.push(end);
        Ok(())
    }
    fn lend(&mut self) -> OffsetBuffer<i64> {
        let b = self.0.lend();
        self.0.push(0);
        // The ends of rows, pushed in order from 0 (checked in `add`).
        OffsetBuffer::new(b)
    }
    fn reclaim(&mut self) {
        if self.0.lent.is_some() {
            self.0.reclaim();
            self.0.push(0);
        }
    }
}

enum Leaf {
    Bool(BooleanBufferBuilder),
    I8(Vals<i8>),
    I16(Vals<i16>),
    I32(Vals<i32>),
    I64(Vals<i64>),
    U8(Vals<u8>),
    U16(Vals<u16>),
    U32(Vals<u32>),
    U64(Vals<u64>),
    F32(Vals<f32>),
    F64(Vals<f64>),
    Str { ends: Offsets, bytes: Vals<u8> },
}

enum Kind {
    Leaf(Leaf),
    List {
        field: FieldRef,
        offsets: Offsets,
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
    /// An enum with data: a dense union of one record per variant.
    Union(Box<UnionPlan>),
}

/// How serde serializes a variant (serde_arrow's child of the union).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    Unit,
    Newtype,
    Tuple,
    Struct,
}

impl Shape {
    fn of(sf: &Field) -> Self {
        match sf.data_type() {
            DataType::Null => Shape::Unit,
            DataType::Struct(_) if is_tuple(sf) => Shape::Tuple,
            DataType::Struct(_) => Shape::Struct,
            _ => Shape::Newtype,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Shape::Unit => "a unit variant",
            Shape::Newtype => "a newtype variant",
            Shape::Tuple => "a tuple variant",
            Shape::Struct => "a struct variant",
        }
    }
}

/// The columns of an enum with data (SPEC.md section 4.4, as Arrow's
/// dense union of section 11): each row's tag and its row among its
/// variant's rows, and one record per variant. An `Option` of it puts a
/// `None` as a null row of the first variant, as the derive does.
struct UnionPlan {
    fields: UnionFields,
    names: Vec<String>,
    shapes: Vec<Shape>,
    types: Vals<i8>,
    offsets: Vals<i32>,
    /// Each variant's rows so far.
    counts: Vec<i32>,
    /// Each variant's record (its validity set for an `Option<Enum>`).
    variants: Vec<Node>,
    optional: bool,
}

impl UnionPlan {
    fn new(sf: &Field, hf: &Field) -> Option<Self> {
        let (DataType::Union(suf, _), DataType::Union(huf, _)) = (sf.data_type(), hf.data_type())
        else {
            return None;
        };
        let opt = optional(sf) && hf.is_nullable();
        if suf.len() != huf.len() || suf.is_empty() || suf.len() > 127 {
            return None;
        }
        let mut names = Vec::with_capacity(suf.len());
        let mut shapes = Vec::with_capacity(suf.len());
        let mut variants = Vec::with_capacity(suf.len());
        for (k, ((sid, sc), (hid, hc))) in suf.iter().zip(huf.iter()).enumerate() {
            let DataType::Struct(hfs) = hc.data_type() else {
                return None;
            };
            if usize::try_from(sid).ok()? != k || sid != hid || sc.name() != hc.name() {
                return None;
            }
            let shape = Shape::of(sc);
            let children = match (shape, sc.data_type()) {
                (Shape::Unit, _) if hfs.is_empty() => Vec::new(),
                (Shape::Newtype, _) if hfs.len() == 1 => {
                    vec![Node::new(&sc.as_ref().clone().with_name("1"), &hfs[0])?]
                }
                (Shape::Tuple | Shape::Struct, DataType::Struct(sfs))
                    if sfs.len() == hfs.len() && !sfs.is_empty() =>
                {
                    sfs.iter()
                        .zip(hfs.iter())
                        .map(|(s, h)| Node::new(s, h))
                        .collect::<Option<Vec<_>>>()?
                }
                _ => return None,
            };
            names.push(sc.name().clone());
            shapes.push(shape);
            variants.push(Node {
                kind: Kind::Record {
                    fields: hfs.clone(),
                    keys: vec![None; children.len()],
                    children,
                },
                nulls: opt.then(|| NullBufferBuilder::new(0)),
            });
        }
        Some(UnionPlan {
            fields: huf.clone(),
            counts: vec![0; names.len()],
            names,
            shapes,
            types: Vals::new(),
            offsets: Vals::new(),
            variants,
            optional: opt,
        })
    }

    /// Starts a row of variant `index` (`name`, serialized as `shape`):
    /// its record, marked valid.
    #[inline]
    fn start(&mut self, index: u32, name: &str, shape: Shape) -> R<&mut Node> {
        let k = usize::try_from(index)
            .ok()
            .filter(|&k| k < self.names.len() && self.names[k] == name)
            .ok_or_else(|| {
                PathError::msg(format!(
                    "variant `{name}` (index {index}) is not a traced variant ({:?})",
                    self.names
                ))
            })?;
        if self.shapes[k] != shape {
            return Err(PathError::msg(format!(
                "variant `{name}` serialized as {}, traced as {}",
                shape.name(),
                self.shapes[k].name()
            )));
        }
        self.push_row(k)?;
        let v = &mut self.variants[k];
        if let Some(n) = &mut v.nulls {
            valid(n);
        }
        Ok(v)
    }

    /// The tag and the index of a new row of variant `k`.
    fn push_row(&mut self, k: usize) -> R {
        let n = &mut self.counts[k];
        self.offsets.push(*n);
        *n = n
            .checked_add(1)
            .ok_or_else(|| PathError::msg("more than 2^31 rows of a variant in one batch"))?;
        // At most 127 variants (UnionPlan::new).
        self.types.push(k as i8);
        Ok(())
    }

    /// A `None`: a null placeholder row of the first variant.
    fn null(&mut self) -> R {
        if !self.optional {
            return Err(PathError::msg(
                "found no value (None or a missing field) for an enum that is not optional",
            ));
        }
        self.push_row(0)?;
        self.variants[0].placeholder()
    }

    fn finish(&mut self) -> Result<ArrayRef> {
        let err = |e: arrow_schema::ArrowError| Error::encode("$", e.to_string());
        let types = self.types.lend();
        let offsets = self.offsets.lend();
        let mut children = Vec::with_capacity(self.variants.len());
        for (v, n) in self.variants.iter_mut().zip(&mut self.counts) {
            let rows = usize::try_from(std::mem::take(n)).map_err(|e| Error::encode("$", e))?;
            children.push(v.finish(rows)?);
        }
        Ok(Arc::new(
            UnionArray::try_new(self.fields.clone(), types, Some(offsets), children)
                .map_err(err)?,
        ))
    }

    fn reclaim(&mut self) {
        self.types.reclaim();
        self.offsets.reclaim();
        self.variants.iter_mut().for_each(Node::reclaim);
    }
}

struct Node {
    kind: Kind,
    /// Validity of an optional leaf or list (`None`: not optional).
    nulls: Option<NullBufferBuilder>,
}

#[inline]
fn conv<T: TryFrom<V>, V: Copy + Display>(v: V) -> R<T> {
    T::try_from(v).map_err(|_| PathError::msg(format!("{v} out of range of the column's type")))
}

macro_rules! ints {
    ($self:ident, $v:ident, $what:literal) => {
        match $self {
            Leaf::I8(b) => b.push(conv($v)?),
            Leaf::I16(b) => b.push(conv($v)?),
            Leaf::I32(b) => b.push(conv($v)?),
            Leaf::I64(b) => b.push(conv($v)?),
            Leaf::U8(b) => b.push(conv($v)?),
            Leaf::U16(b) => b.push(conv($v)?),
            Leaf::U32(b) => b.push(conv($v)?),
            Leaf::U64(b) => b.push(conv($v)?),
            Leaf::F32(b) => b.push($v as f32),
            Leaf::F64(b) => b.push($v as f64),
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

/// Calls `$body` with `$v` bound to the [`Vals`] of every number leaf.
macro_rules! each_vals {
    ($self:ident, $v:ident => $body:expr, $bool:pat => $b:expr, $str:pat => $s:expr) => {
        match $self {
            Leaf::I8($v) => $body,
            Leaf::I16($v) => $body,
            Leaf::I32($v) => $body,
            Leaf::I64($v) => $body,
            Leaf::U8($v) => $body,
            Leaf::U16($v) => $body,
            Leaf::U32($v) => $body,
            Leaf::U64($v) => $body,
            Leaf::F32($v) => $body,
            Leaf::F64($v) => $body,
            $bool => $b,
            $str => $s,
        }
    };
}

impl Leaf {
    fn new(t: &DataType) -> Option<Self> {
        Some(match t {
            DataType::Boolean => Leaf::Bool(BooleanBufferBuilder::new(0)),
            DataType::Int8 => Leaf::I8(Vals::new()),
            DataType::Int16 => Leaf::I16(Vals::new()),
            DataType::Int32 => Leaf::I32(Vals::new()),
            DataType::Int64 => Leaf::I64(Vals::new()),
            DataType::UInt8 => Leaf::U8(Vals::new()),
            DataType::UInt16 => Leaf::U16(Vals::new()),
            DataType::UInt32 => Leaf::U32(Vals::new()),
            DataType::UInt64 => Leaf::U64(Vals::new()),
            DataType::Float32 => Leaf::F32(Vals::new()),
            DataType::Float64 => Leaf::F64(Vals::new()),
            DataType::LargeUtf8 => Leaf::Str {
                ends: Offsets::new(),
                bytes: Vals::new(),
            },
            _ => return None,
        })
    }
    #[inline]
    fn i64(&mut self, v: i64) -> R {
        ints!(self, v, "an integer");
        Ok(())
    }
    #[inline]
    fn u64(&mut self, v: u64) -> R {
        ints!(self, v, "an integer");
        Ok(())
    }
    #[inline]
    fn f64(&mut self, v: f64) -> R {
        match self {
            Leaf::F32(b) => b.push(v as f32),
            Leaf::F64(b) => b.push(v),
            _ => return Err(PathError::msg("found a float for a column of another type")),
        }
        Ok(())
    }
    /// The placeholder under a null (zero, false, an empty string).
    fn null(&mut self) -> R {
        each_vals!(self, v => v.push(Default::default()),
            Leaf::Bool(b) => b.append(false),
            Leaf::Str { ends, .. } => ends.add(0)?);
        Ok(())
    }
    /// The values so far as an array with validity `nulls`; the columns
    /// start again empty.
    fn finish(&mut self, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let err = |e: arrow_schema::ArrowError| Error::encode("$", e.to_string());
        macro_rules! prim {
            ($v:ident, $t:ty) => {
                Arc::new(PrimitiveArray::<$t>::try_new($v.lend(), nulls).map_err(err)?)
            };
        }
        Ok(match self {
            Leaf::Bool(b) => {
                let values = b.finish();
                if nulls.as_ref().is_some_and(|n| n.len() != values.len()) {
                    return Err(Error::encode("$", "validity and values differ in length"));
                }
                Arc::new(BooleanArray::new(values, nulls))
            }
            Leaf::I8(v) => prim!(v, Int8Type),
            Leaf::I16(v) => prim!(v, Int16Type),
            Leaf::I32(v) => prim!(v, Int32Type),
            Leaf::I64(v) => prim!(v, Int64Type),
            Leaf::U8(v) => prim!(v, UInt8Type),
            Leaf::U16(v) => prim!(v, UInt16Type),
            Leaf::U32(v) => prim!(v, UInt32Type),
            Leaf::U64(v) => prim!(v, UInt64Type),
            Leaf::F32(v) => prim!(v, Float32Type),
            Leaf::F64(v) => prim!(v, Float64Type),
            Leaf::Str { ends, bytes } => {
                let offsets = ends.lend();
                let values = bytes.lend().into_inner();
                if nulls.as_ref().is_some_and(|n| n.len() != offsets.len() - 1)
                    || usize::try_from(offsets.last()).ok() != Some(values.len())
                {
                    return Err(Error::encode("$", "string offsets and bytes differ"));
                }
                // SAFETY: the bytes are the `&str`s serialized, back to back,
                // and the offsets their ends (from 0, checked against the
                // bytes just above): every slice is valid UTF-8.
                Arc::new(unsafe { LargeStringArray::new_unchecked(offsets, values, nulls) })
            }
        })
    }
    fn reclaim(&mut self) {
        each_vals!(self, v => v.reclaim(),
        Leaf::Bool(_) => {},
        Leaf::Str { ends, bytes } => {
            ends.reclaim();
            bytes.reclaim();
        });
    }
}

/// Marks one more value valid, out of line: the per-value path of a
/// field that is not optional stays small enough to inline.
#[inline(never)]
fn valid(n: &mut NullBufferBuilder) {
    n.append_non_null();
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
                offsets: Offsets::new(),
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
            (DataType::Union(..), DataType::Union(..)) => {
                // Validity lives in the variants' records.
                return Some(Node {
                    kind: Kind::Union(Box::new(UnionPlan::new(sf, hf)?)),
                    nulls: None,
                });
            }
            (s, h) if s == h && hf.metadata().is_empty() => Kind::Leaf(Leaf::new(h)?),
            _ => return None,
        };
        let nullable = sf.is_nullable() && hf.is_nullable();
        Some(Node {
            kind,
            nulls: nullable.then(|| NullBufferBuilder::new(0)),
        })
    }

    /// The leaf a value goes to (marked valid if the leaf is optional).
    #[inline(always)]
    fn leaf(&mut self) -> R<&mut Leaf> {
        match &mut self.kind {
            Kind::Leaf(l) => {
                if let Some(n) = &mut self.nulls {
                    valid(n);
                }
                Ok(l)
            }
            _ => Err(PathError::msg(
                "found a number, bool or string for a list or record",
            )),
        }
    }

    fn null(&mut self) -> R {
        if let Kind::Union(u) = &mut self.kind {
            return u.null();
        }
        let Some(nulls) = &mut self.nulls else {
            return Err(PathError::msg(
                "found no value (None or a missing field) for a field that is not optional",
            ));
        };
        match &mut self.kind {
            Kind::Leaf(l) => l.null()?,
            Kind::List { offsets, .. } => offsets.add(0)?,
            // Plans hold no optional records or arrays (Node::new).
            _ => return Err(PathError::msg("found None for a record")),
        }
        nulls.append_null();
        Ok(())
    }

    /// A placeholder row under an enclosing null (a `None` enum's row of
    /// its first variant): every value its placeholder, null where the
    /// field is optional.
    fn placeholder(&mut self) -> R {
        match &mut self.kind {
            Kind::Leaf(l) => l.null()?,
            Kind::List { offsets, .. } => offsets.add(0)?,
            Kind::Fixed { n, item, .. } => {
                for _ in 0..*n {
                    item.placeholder()?;
                }
            }
            Kind::Record { children, .. } => {
                for c in children.iter_mut() {
                    c.placeholder()?;
                }
            }
            Kind::Union(u) => {
                u.push_row(0)?;
                u.variants[0].placeholder()?;
            }
        }
        if let Some(n) = &mut self.nulls {
            n.append_null();
        }
        Ok(())
    }

    /// The array of the `rows` values so far; the columns start again
    /// empty, their buffers lent to the array until [`reclaim`](Self::reclaim).
    fn finish(&mut self, rows: usize) -> Result<ArrayRef> {
        let err = |e: arrow_schema::ArrowError| Error::encode("$", e.to_string());
        let nulls = self.nulls.as_mut().and_then(NullBufferBuilder::finish);
        Ok(match &mut self.kind {
            Kind::Leaf(l) => l.finish(nulls)?,
            Kind::List {
                field,
                offsets,
                item,
            } => {
                let offs = offsets.lend();
                let values = item.finish(usize::try_from(offs.last()).unwrap_or(0))?;
                Arc::new(LargeListArray::try_new(field.clone(), offs, values, nulls).map_err(err)?)
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
                    StructArray::try_new_with_length(fields.clone(), cols, nulls, rows)
                        .map_err(err)?,
                )
            }
            Kind::Union(u) => u.finish()?,
        })
    }

    fn reclaim(&mut self) {
        match &mut self.kind {
            Kind::Leaf(l) => l.reclaim(),
            Kind::List { offsets, item, .. } => {
                offsets.reclaim();
                item.reclaim();
            }
            Kind::Fixed { item, .. } => item.reclaim(),
            Kind::Record { children, .. } => children.iter_mut().for_each(Node::reclaim),
            Kind::Union(u) => u.reclaim(),
        }
    }

    /// The union a variant goes to.
    #[inline]
    fn union(&mut self, v: &str) -> R<&mut UnionPlan> {
        match &mut self.kind {
            Kind::Union(u) => Ok(u),
            _ => Err(PathError::msg(format!(
                "found enum variant `{v}` for a column of another type"
            ))),
        }
    }
}

/// The save plan of a vector's columns: a buffer per leaf.
pub(crate) struct Plan {
    root: Node,
    rows: usize,
    /// A row failed half-way: the columns may be out of step.
    broken: bool,
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
                nulls: None,
            },
            rows: 0,
            broken: false,
        })
    }

    /// Serializes `items` into the columns. After an error the plan takes
    /// no more rows (the failed row may be partly in the columns).
    pub(crate) fn push_all<T: Serialize>(&mut self, items: &[T]) -> R {
        if self.broken {
            return Err(PathError::msg(
                "an earlier row failed to serialize: the writer takes no more rows",
            ));
        }
        for (i, item) in items.iter().enumerate() {
            if let Err(e) = item.serialize(Ser(&mut self.root)) {
                self.broken = true;
                return Err(e.prefixed(format_args!("row {}", self.rows + i)));
            }
        }
        self.rows += items.len();
        Ok(())
    }

    /// The columns built so far (the plan starts again empty; the arrays
    /// hold its buffers until [`reclaim`](Self::reclaim)).
    pub(crate) fn finish(&mut self) -> Result<Vec<ArrayRef>> {
        if self.broken {
            return Err(Error::encode(
                "$",
                "an earlier row failed to serialize: nothing more is written",
            ));
        }
        let rows = std::mem::take(&mut self.rows);
        let Kind::Record { children, .. } = &mut self.root.kind else {
            unreachable!("the root is a record")
        };
        children.iter_mut().map(|c| c.finish(rows)).collect()
    }

    /// Takes back the buffers of the last [`finish`](Self::finish), once
    /// its arrays are dropped (the next batch fills them again).
    pub(crate) fn reclaim(&mut self) {
        self.root.reclaim();
    }
}

struct Ser<'a>(&'a mut Node);

impl<'a> ser::Serializer for Ser<'a> {
    type Ok = ();
    type Error = PathError;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Impossible<(), PathError>;
    type SerializeStruct = Rec<'a>;
    type SerializeStructVariant = Rec<'a>;

    fn is_human_readable(&self) -> bool {
        false
    }
    #[inline]
    fn serialize_bool(self, v: bool) -> R {
        match self.0.leaf()? {
            Leaf::Bool(b) => b.append(v),
            _ => return Err(PathError::msg("found a bool for a column of another type")),
        }
        Ok(())
    }
    #[inline(always)]
    fn serialize_i8(self, v: i8) -> R {
        match self.0.leaf()? {
            Leaf::I8(b) => {
                b.push(v);
                Ok(())
            }
            l => l.i64(v.into()),
        }
    }
    #[inline(always)]
    fn serialize_i16(self, v: i16) -> R {
        match self.0.leaf()? {
            Leaf::I16(b) => {
                b.push(v);
                Ok(())
            }
            l => l.i64(v.into()),
        }
    }
    #[inline(always)]
    fn serialize_i32(self, v: i32) -> R {
        match self.0.leaf()? {
            Leaf::I32(b) => {
                b.push(v);
                Ok(())
            }
            l => l.i64(v.into()),
        }
    }
    #[inline(always)]
    fn serialize_i64(self, v: i64) -> R {
        match self.0.leaf()? {
            Leaf::I64(b) => {
                b.push(v);
                Ok(())
            }
            l => l.i64(v),
        }
    }
    #[inline(always)]
    fn serialize_u8(self, v: u8) -> R {
        match self.0.leaf()? {
            Leaf::U8(b) => {
                b.push(v);
                Ok(())
            }
            l => l.u64(v.into()),
        }
    }
    #[inline(always)]
    fn serialize_u16(self, v: u16) -> R {
        match self.0.leaf()? {
            Leaf::U16(b) => {
                b.push(v);
                Ok(())
            }
            l => l.u64(v.into()),
        }
    }
    #[inline(always)]
    fn serialize_u32(self, v: u32) -> R {
        match self.0.leaf()? {
            Leaf::U32(b) => {
                b.push(v);
                Ok(())
            }
            l => l.u64(v.into()),
        }
    }
    #[inline(always)]
    fn serialize_u64(self, v: u64) -> R {
        match self.0.leaf()? {
            Leaf::U64(b) => {
                b.push(v);
                Ok(())
            }
            l => l.u64(v),
        }
    }
    #[inline(always)]
    fn serialize_f32(self, v: f32) -> R {
        match self.0.leaf()? {
            Leaf::F32(b) => {
                b.push(v);
                Ok(())
            }
            l => l.f64(v.into()),
        }
    }
    #[inline(always)]
    fn serialize_f64(self, v: f64) -> R {
        match self.0.leaf()? {
            Leaf::F64(b) => {
                b.push(v);
                Ok(())
            }
            l => l.f64(v),
        }
    }
    #[inline]
    fn serialize_char(self, v: char) -> R {
        // A char is its code point (serde_arrow traces it as UInt32).
        self.0.leaf()?.u64(u64::from(u32::from(v)))
    }
    #[inline]
    fn serialize_str(self, v: &str) -> R {
        match self.0.leaf()? {
            Leaf::Str { ends, bytes } => {
                bytes.vec.extend_from_slice(v.as_bytes());
                ends.add(v.len())?;
            }
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
    #[inline]
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_unit(self) -> R {
        Err(PathError::msg("found a unit for a column of another type"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, i: u32, v: &'static str) -> R {
        self.0
            .union(v)?
            .start(i, v, Shape::Unit)
            .map(drop)
            .map_err(|e| e.at(v))
    }
    #[inline]
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        i: u32,
        v: &'static str,
        value: &T,
    ) -> R {
        let rec = self
            .0
            .union(v)?
            .start(i, v, Shape::Newtype)
            .map_err(|e| e.at(v))?;
        let Kind::Record { children, .. } = &mut rec.kind else {
            unreachable!("a variant is a record (UnionPlan::new)")
        };
        value
            .serialize(Ser(&mut children[0]))
            .map_err(|e| e.at("1").at(v))
    }
    #[inline]
    fn serialize_seq(self, _: Option<usize>) -> R<Seq<'a>> {
        let Node { kind, nulls } = self.0;
        let to = match kind {
            Kind::Leaf(_) => {
                return Err(PathError::msg(
                    "found a sequence for a number, bool or string",
                ))
            }
            Kind::List { offsets, item, .. } => SeqTo::List {
                offsets,
                nulls: nulls.as_mut(),
                item,
            },
            Kind::Fixed { n, item, .. } => SeqTo::Fixed { n: *n, item },
            Kind::Record {
                fields, children, ..
            } => SeqTo::Tuple { fields, children },
            Kind::Union(_) => return Err(PathError::msg("found a sequence for an enum with data")),
        };
        Ok(Seq { to, count: 0 })
    }
    #[inline]
    fn serialize_tuple(self, len: usize) -> R<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> R<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        i: u32,
        v: &'static str,
        _: usize,
    ) -> R<Self::SerializeTupleVariant> {
        let rec = self
            .0
            .union(v)?
            .start(i, v, Shape::Tuple)
            .map_err(|e| e.at(v))?;
        let Kind::Record {
            fields, children, ..
        } = &mut rec.kind
        else {
            unreachable!("a variant is a record (UnionPlan::new)")
        };
        Ok(Seq {
            to: SeqTo::Tuple { fields, children },
            count: 0,
        })
    }
    fn serialize_map(self, _: Option<usize>) -> R<Self::SerializeMap> {
        Err(PathError::msg("found a map for a column of another type"))
    }
    #[inline]
    fn serialize_struct(self, _: &'static str, _: usize) -> R<Rec<'a>> {
        match &mut self.0.kind {
            Kind::Record {
                fields,
                children,
                keys,
            } => Ok(Rec {
                fields,
                children,
                keys,
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
        i: u32,
        v: &'static str,
        _: usize,
    ) -> R<Self::SerializeStructVariant> {
        let rec = self
            .0
            .union(v)?
            .start(i, v, Shape::Struct)
            .map_err(|e| e.at(v))?;
        let Kind::Record {
            fields,
            children,
            keys,
        } = &mut rec.kind
        else {
            unreachable!("a variant is a record (UnionPlan::new)")
        };
        Ok(Rec {
            fields,
            children,
            keys,
            next: 0,
        })
    }
}

/// A sequence, tuple or array being serialized into a list, a dense array
/// or a tuple's record.
struct Seq<'a> {
    to: SeqTo<'a>,
    count: usize,
}

/// Where the elements of a sequence go.
enum SeqTo<'a> {
    List {
        offsets: &'a mut Offsets,
        nulls: Option<&'a mut NullBufferBuilder>,
        item: &'a mut Node,
    },
    Fixed {
        n: usize,
        item: &'a mut Node,
    },
    Tuple {
        fields: &'a Fields,
        children: &'a mut [Node],
    },
}

impl Seq<'_> {
    #[inline]
    fn element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        let i = self.count;
        self.count += 1;
        match &mut self.to {
            SeqTo::List { item, .. } => v.serialize(Ser(item)).map_err(|e| e.at("[]")),
            SeqTo::Fixed { item, n } if i < *n => v.serialize(Ser(item)).map_err(|e| e.at("[]")),
            SeqTo::Tuple { children, fields } if i < children.len() => v
                .serialize(Ser(&mut children[i]))
                .map_err(|e| e.at(fields[i].name())),
            _ => Err(PathError::msg(format!(
                "found more than {i} elements for a fixed-size array or tuple"
            ))),
        }
    }
    #[inline]
    fn end(self) -> R {
        match self.to {
            SeqTo::List { offsets, nulls, .. } => {
                offsets.add(self.count)?;
                if let Some(n) = nulls {
                    valid(n);
                }
            }
            SeqTo::Fixed { n, .. } if self.count == n => {}
            SeqTo::Tuple { children, .. } if self.count == children.len() => {}
            SeqTo::Fixed { n, .. } => {
                return Err(PathError::msg(format!(
                    "found {} elements for an array of {n}",
                    self.count
                )))
            }
            SeqTo::Tuple { children, .. } => {
                return Err(PathError::msg(format!(
                    "found {} elements for a tuple of {}",
                    self.count,
                    children.len()
                )))
            }
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    #[inline]
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    #[inline]
    fn end(self) -> R {
        Seq::end(self)
    }
}
impl ser::SerializeTuple for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    #[inline]
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
        self.element(v)
    }
    #[inline]
    fn end(self) -> R {
        Seq::end(self)
    }
}
impl ser::SerializeTupleVariant for Seq<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> R {
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
    #[inline]
    fn end(self) -> R {
        Seq::end(self)
    }
}

/// A struct being serialized into a record: fields in the traced order;
/// a skipped optional field is null.
struct Rec<'a> {
    fields: &'a Fields,
    children: &'a mut [Node],
    keys: &'a mut [Option<&'static str>],
    next: usize,
}

impl Rec<'_> {
    /// The index of field `key`, at or after the next one (the fields
    /// come in the traced order; skipped ones are null).
    #[cold]
    fn find(&mut self, key: &'static str) -> R<usize> {
        let at = self
            .fields
            .iter()
            .skip(self.next)
            .position(|f| f.name() == key)
            .map(|k| k + self.next)
            .ok_or_else(|| {
                PathError::msg(format!(
                    "field `{key}` is not a traced field here (or comes out of order)"
                ))
            })?;
        self.keys[at] = Some(key);
        for j in self.next..at {
            self.children[j]
                .null()
                .map_err(|e| e.at(self.fields[j].name()))?;
        }
        Ok(at)
    }
}

impl ser::SerializeStructVariant for Rec<'_> {
    type Ok = ();
    type Error = PathError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, v: &T) -> R {
        ser::SerializeStruct::serialize_field(self, key, v)
    }
    fn skip_field(&mut self, _: &'static str) -> R {
        Ok(())
    }
    fn end(self) -> R {
        ser::SerializeStruct::end(self)
    }
}

impl ser::SerializeStruct for Rec<'_> {
    type Ok = ();
    type Error = PathError;
    #[inline]
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, v: &T) -> R {
        let at = match self.keys.get(self.next) {
            Some(Some(k)) if std::ptr::eq(*k, key) => self.next,
            _ => self.find(key)?,
        };
        self.next = at + 1;
        v.serialize(Ser(&mut self.children[at]))
            .map_err(|e| e.at(key))
    }
    fn skip_field(&mut self, _: &'static str) -> R {
        Ok(())
    }
    #[inline]
    fn end(self) -> R {
        if self.next == self.children.len() {
            return Ok(());
        }
        for j in self.next..self.children.len() {
            self.children[j]
                .null()
                .map_err(|e| e.at(self.fields[j].name()))?;
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
        order: InOrder,
    },
    /// An enum with data: each row's variant and its row there (checked
    /// against the variants' lengths), and one record per variant.
    Union {
        types: arrow_buffer::ScalarBuffer<i8>,
        offsets: arrow_buffer::ScalarBuffer<i32>,
        names: Vec<String>,
        variants: Vec<DNode>,
    },
}

/// Whether a struct's fields (serde's `&'static` field list) are the
/// record's names in order, so that the struct reads its fields as a
/// sequence, without matching a key per field. Remembered for the last
/// field list seen (compared by address).
#[derive(Default)]
struct InOrder {
    fields: Cell<Option<&'static [&'static str]>>,
    same: Cell<bool>,
}

impl InOrder {
    #[inline]
    fn check(&self, fields: &'static [&'static str], names: &[String]) -> bool {
        if self
            .fields
            .get()
            .is_some_and(|f| std::ptr::eq(f.as_ptr(), fields.as_ptr()) && f.len() == fields.len())
        {
            return self.same.get();
        }
        let same = fields.len() == names.len() && fields.iter().zip(names).all(|(f, n)| f == n);
        self.fields.set(Some(fields));
        self.same.set(same);
        same
    }
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
                    order: InOrder::default(),
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
            (DataType::Union(..), DataType::Union(..)) => union_reader(sf, a)?,
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

/// The reader of stored union `a` for serde field `sf` (an enum with
/// data): the stored variants must be serde's, in order; `None` for a
/// shape serde_arrow reads (its error then names what differs).
fn union_reader(sf: &Field, a: &ArrayRef) -> Option<DKind> {
    let (DataType::Union(suf, _), DataType::Union(huf, _)) = (sf.data_type(), a.data_type()) else {
        return None;
    };
    let u = a.as_any().downcast_ref::<UnionArray>()?;
    let offsets = u.offsets()?.clone();
    if suf.len() != huf.len() || suf.is_empty() {
        return None;
    }
    let mut names = Vec::with_capacity(suf.len());
    let mut variants = Vec::with_capacity(suf.len());
    let mut lens = Vec::with_capacity(suf.len());
    for (k, ((sid, sc), (hid, hc))) in suf.iter().zip(huf.iter()).enumerate() {
        if usize::try_from(sid).ok()? != k || sid != hid || sc.name() != hc.name() {
            return None;
        }
        let child = u.child(hid);
        let s = child.as_struct_opt()?;
        if child.offset() != 0 {
            return None;
        }
        let (vnames, children): (Vec<String>, Vec<DNode>) = match (Shape::of(sc), sc.data_type()) {
            (Shape::Unit, _) if s.num_columns() == 0 => (Vec::new(), Vec::new()),
            (Shape::Newtype, _) if s.num_columns() == 1 => {
                (vec!["1".into()], vec![DNode::new(sc, s.column(0))?])
            }
            (Shape::Tuple, DataType::Struct(sfs)) if sfs.len() == s.num_columns() => {
                let c = sfs
                    .iter()
                    .enumerate()
                    .map(|(i, f)| DNode::new(f, s.column(i)))
                    .collect::<Option<Vec<_>>>()?;
                ((1..=sfs.len()).map(|i| i.to_string()).collect(), c)
            }
            (Shape::Struct, DataType::Struct(sfs)) if !sfs.is_empty() => {
                let c = sfs
                    .iter()
                    .map(|f| DNode::new(f, s.column_by_name(f.name())?))
                    .collect::<Option<Vec<_>>>()?;
                (sfs.iter().map(|f| f.name().clone()).collect(), c)
            }
            _ => return None,
        };
        lens.push(child.len());
        names.push(sc.name().clone());
        variants.push(DNode {
            kind: DKind::Record {
                names: vnames,
                tuple: false,
                children,
                order: InOrder::default(),
            },
            nulls: child.logical_nulls().filter(|n| n.null_count() > 0),
        });
    }
    // Every row's variant and row exist (values are read unchecked later).
    let ok = u.type_ids().iter().zip(offsets.iter()).all(|(&t, &o)| {
        usize::try_from(t)
            .ok()
            .and_then(|k| lens.get(k))
            .zip(usize::try_from(o).ok())
            .is_some_and(|(&len, o)| o < len)
    });
    ok.then(|| DKind::Union {
        types: u.type_ids().clone(),
        offsets,
        names,
        variants,
    })
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
                    order: InOrder::default(),
                },
                nulls: None,
            },
            rows: root.len(),
        })
    }

    /// Deserializes every row onto the end of `out`; the batch's first row
    /// is row `first` of the vector (for errors).
    pub(crate) fn rows_into<T: de::DeserializeOwned>(&self, first: u64, out: &mut Vec<T>) -> R {
        for row in 0..self.rows {
            out.push(
                T::deserialize(De {
                    node: &self.root,
                    row,
                })
                .map_err(|e| e.prefixed(format_args!("row {}", first + row as u64)))?,
            );
        }
        Ok(())
    }
}

/// `Deserializer` methods for the scalar kinds: the stored array's value
/// when the column is of that kind and has no nulls, else
/// `deserialize_any` (which also handles nulls and other kinds).
macro_rules! exact {
    ($($method:ident $kind:ident $visit:ident;)*) => {$(
        #[inline(always)]
        fn $method<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
            if let (DKind::$kind(a), None) = (&self.node.kind, &self.node.nulls) {
                return v.$visit(a.value(self.row));
            }
            self.deserialize_any(v)
        }
    )*};
}

#[derive(Clone, Copy)]
struct De<'a> {
    node: &'a DNode,
    row: usize,
}

impl<'a> De<'a> {
    #[inline]
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
                ..
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
                ..
            } => v.visit_seq(TupleDe {
                names,
                children,
                row: r,
                next: 0,
            }),
            DKind::Union {
                types,
                offsets,
                names,
                variants,
            } => {
                // In range (union_reader).
                let k = types[r] as usize;
                let row = usize::try_from(offsets[r]).map_err(PathError::msg)?;
                let name = names[k].as_str();
                v.visit_enum(EnumDe {
                    name,
                    node: &variants[k],
                    row,
                })
                .map_err(|e| e.at(name))
            }
        }
    }

    #[inline(always)]
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

    #[inline(always)]
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> R<V::Value> {
        v.visit_newtype_struct(self)
    }

    #[inline(always)]
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
            DKind::Fixed(n, item) if !self.is_null() => {
                let s = self.row * n;
                v.visit_seq(SeqDe {
                    item,
                    next: s,
                    end: s + n,
                    label: None,
                })
            }
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

    #[inline(always)]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> R<V::Value> {
        match &self.node.kind {
            DKind::Record {
                names,
                tuple: false,
                children,
                order,
            } if !self.is_null() && order.check(fields, names) => v.visit_seq(TupleDe {
                names,
                children,
                row: self.row,
                next: 0,
            }),
            _ => self.deserialize_any(v),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        v.visit_unit()
    }

    // A number, `bool` or string asked for as the type it is stored as,
    // in a column without nulls: the visitor is called here, so the
    // per-value path inlines (the rest, as `deserialize_any`).
    exact! {
        deserialize_bool Bool visit_bool;
        deserialize_i8 I8 visit_i8;
        deserialize_i16 I16 visit_i16;
        deserialize_i32 I32 visit_i32;
        deserialize_i64 I64 visit_i64;
        deserialize_u8 U8 visit_u8;
        deserialize_u16 U16 visit_u16;
        deserialize_u32 U32 visit_u32;
        deserialize_u64 U64 visit_u64;
        deserialize_f32 F32 visit_f32;
        deserialize_f64 F64 visit_f64;
        deserialize_str Str visit_str;
        deserialize_string Str visit_str;
    }

    serde::forward_to_deserialize_any! {
        i128 u128 bytes byte_buf unit unit_struct seq map enum identifier
    }
}

/// A row of a union: its variant's name and record row.
struct EnumDe<'a> {
    name: &'a str,
    node: &'a DNode,
    row: usize,
}

impl<'de, 'a> de::EnumAccess<'de> for EnumDe<'a> {
    type Error = PathError;
    type Variant = Self;
    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> R<(S::Value, Self)> {
        let d: de::value::StrDeserializer<'_, PathError> = self.name.into_deserializer();
        Ok((seed.deserialize(d)?, self))
    }
}

impl EnumDe<'_> {
    /// The variant's record's names and columns.
    fn record(&self) -> (&[String], &[DNode]) {
        match &self.node.kind {
            DKind::Record {
                names, children, ..
            } => (names, children),
            _ => (&[], &[]),
        }
    }
    fn wrong(&self, want: &str) -> PathError {
        PathError::msg(format!(
            "stored variant `{}` has {} fields, the type reads {want}",
            self.name,
            self.record().1.len()
        ))
    }
}

impl<'de> de::VariantAccess<'de> for EnumDe<'_> {
    type Error = PathError;
    fn unit_variant(self) -> R {
        if self.record().1.is_empty() {
            Ok(())
        } else {
            Err(self.wrong("a unit variant"))
        }
    }
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> R<S::Value> {
        match self.record().1 {
            [c] => seed
                .deserialize(De {
                    node: c,
                    row: self.row,
                })
                .map_err(|e| e.at("1")),
            _ => Err(self.wrong("a newtype variant (one field)")),
        }
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> R<V::Value> {
        let (names, children) = self.record();
        if children.len() != len {
            return Err(self.wrong(&format!("a tuple variant of {len} fields")));
        }
        v.visit_seq(TupleDe {
            names,
            children,
            row: self.row,
            next: 0,
        })
    }
    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], v: V) -> R<V::Value> {
        let (names, children) = self.record();
        v.visit_map(MapDe {
            names,
            children,
            row: self.row,
            next: 0,
        })
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
    #[inline(always)]
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
    #[inline(always)]
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

#[cfg(test)]
mod tests {
    use super::super::Columns;
    use super::*;
    use crate::options::SaveOptions;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)] // only traced
    struct Direct {
        id: u64,
        name: Option<String>,
        tags: Vec<String>,
        values: Option<Vec<f32>>,
        inner: Inner,
        holes: Vec<Option<i64>>,
        maybe: Option<bool>,
        opt_s: Option<String>,
    }

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)] // only traced
    struct Inner {
        flag: Option<bool>,
        at: [i16; 2],
    }

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)] // only traced
    enum Mode {
        A,
        B,
    }

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)] // only traced
    struct Fallback {
        id: u64,
        mode: Mode,
    }

    fn plan_of(c: Columns) -> Option<Plan> {
        let h5 = c.h5(&SaveOptions::default()).unwrap();
        Plan::new(&c.fields, &h5.into())
    }

    #[test]
    fn which_shapes_take_the_direct_route() {
        let dense =
            super::super::SchemaOptions::new().kind("$.inner.at", super::super::FieldKind::Dense);
        assert!(plan_of(dense.trace_type::<Direct>().unwrap()).is_some());
        // A unit-variant enum is a labelled enum: serde_arrow writes it.
        assert!(plan_of(Columns::of::<Fallback>().unwrap()).is_none());
    }

    #[test]
    fn lent_buffers_come_back_once_the_arrays_are_gone() {
        let mut v: Vals<u32> = Vals::new();
        v.push(1);
        v.push(2);
        let b = v.lend();
        assert_eq!(&b[..], [1, 2]);
        let ptr = b.as_ptr();
        // Still held by an array: a new allocation.
        v.reclaim();
        assert!(v.vec.is_empty() && v.vec.capacity() >= 2);
        assert_ne!(v.vec.as_ptr(), ptr);
        drop(b);
        // Dropped first: the same allocation, emptied.
        v.push(3);
        let b = v.lend();
        let ptr = b.as_ptr();
        drop(b);
        v.reclaim();
        assert_eq!((v.vec.len(), v.vec.as_ptr()), (0, ptr));
        // Offsets start again at 0 either way.
        let mut o = Offsets::new();
        o.add(3).unwrap();
        let b = o.lend();
        assert_eq!(&b[..], [0, 3]);
        drop(b);
        o.reclaim();
        assert_eq!(o.0.vec, [0]);
    }
}
