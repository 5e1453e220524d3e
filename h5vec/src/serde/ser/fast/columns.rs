//! The direct serializer's leaf columns: [`Vals`] (a `Vec` of values lent
//! to each batch's array and taken back), [`Offsets`], and [`Leaf`], one
//! column of numbers, `bool`s or strings (a value pushed or converted to
//! the column's type, a placeholder under a null, a batch's Arrow array).

use std::fmt::Display;
use std::sync::Arc;

use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{ArrayRef, BooleanArray, LargeStringArray, PrimitiveArray};
use arrow_buffer::{
    ArrowNativeType, BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::serde::fast::{PathError, R};

/// The values of one column: a plain `Vec` filled row by row, lent to the
/// batch's Arrow array without a copy ([`lend`](Self::lend)) and taken
/// back once the batch is written ([`reclaim`](Self::reclaim)), so every
/// batch fills the same allocation.
pub(super) struct Vals<T: ArrowNativeType> {
    pub(super) vec: Vec<T>,
    lent: Option<Buffer>,
}

impl<T: ArrowNativeType> Vals<T> {
    pub(super) fn new() -> Self {
        Vals {
            vec: Vec::new(),
            lent: None,
        }
    }
    #[inline(always)]
    pub(super) fn push(&mut self, v: T) {
        self.vec.push(v);
    }
    /// The values so far as an Arrow buffer (the `Vec`'s own allocation);
    /// the column starts again empty.
    pub(super) fn lend(&mut self) -> ScalarBuffer<T> {
        let len = self.vec.len();
        let b = Buffer::from_vec(std::mem::take(&mut self.vec));
        self.lent = Some(b.clone());
        ScalarBuffer::new(b, 0, len)
    }
    /// Takes the lent allocation back if no array holds it any more, or
    /// else starts a new one of the same size.
    pub(super) fn reclaim(&mut self) {
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
pub(super) struct Offsets(pub(super) Vals<i64>);

impl Offsets {
    pub(super) fn new() -> Self {
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
    pub(super) fn add(&mut self, n: usize) -> R {
        let end = i64::try_from(n)
            .ok()
            .and_then(|n| self.last().checked_add(n))
            .ok_or_else(|| PathError::msg("offsets overflow"))?;
        self.0.push(end);
        Ok(())
    }
    pub(super) fn lend(&mut self) -> OffsetBuffer<i64> {
        let b = self.0.lend();
        self.0.push(0);
        // The ends of rows, pushed in order from 0 (checked in `add`).
        OffsetBuffer::new(b)
    }
    pub(super) fn reclaim(&mut self) {
        if self.0.lent.is_some() {
            self.0.reclaim();
            self.0.push(0);
        }
    }
}

pub(super) enum Leaf {
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
    pub(super) fn new(t: &DataType) -> Option<Self> {
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
    pub(super) fn i64(&mut self, v: i64) -> R {
        ints!(self, v, "an integer");
        Ok(())
    }
    #[inline]
    pub(super) fn u64(&mut self, v: u64) -> R {
        ints!(self, v, "an integer");
        Ok(())
    }
    #[inline]
    pub(super) fn f64(&mut self, v: f64) -> R {
        match self {
            Leaf::F32(b) => b.push(v as f32),
            Leaf::F64(b) => b.push(v),
            _ => return Err(PathError::msg("found a float for a column of another type")),
        }
        Ok(())
    }
    /// The placeholder under a null (zero, false, an empty string).
    pub(super) fn null(&mut self) -> R {
        each_vals!(self, v => v.push(Default::default()),
            Leaf::Bool(b) => b.append(false),
            Leaf::Str { ends, .. } => ends.add(0)?);
        Ok(())
    }
    /// The values so far as an array with validity `nulls`; the columns
    /// start again empty.
    pub(super) fn finish(&mut self, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
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
    pub(super) fn reclaim(&mut self) {
        each_vals!(self, v => v.reclaim(),
        Leaf::Bool(_) => {},
        Leaf::Str { ends, bytes } => {
            ends.reclaim();
            bytes.reclaim();
        });
    }
}
