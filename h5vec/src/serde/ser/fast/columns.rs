//! The direct serializer's leaf columns: [`Vals`] (a `Vec` of values lent
//! to each batch's array and taken back), [`Offsets`], and [`Leaf`], one
//! column of numbers, `bool`s or strings (a value pushed or converted to
//! the column's type, a placeholder under a null, a batch's Arrow array).

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, LargeStringArray, PrimitiveArray};
use arrow_buffer::{
    ArrowNativeType, BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::DataType;

use crate::arrow::numbers::{numbers, Number};
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

numbers! {
    pub(super) enum Leaf {
        numbers(Vals<native>),
        Bool(BooleanBufferBuilder),
        Str { ends: Offsets, bytes: Vals<u8> },
    }
}

/// Pushes integer `$v` (from `$from`: `from_i64`, `from_u64`) to a number
/// column as its type: the same number, or for a float column the nearest.
macro_rules! int {
    ($self:ident, $v:ident, $from:ident) => {
        numbers!(match ($self) {
            Leaf::number(b) as A => b.push(A::$from($v).ok_or_else(|| {
                PathError::msg(format!("{} out of range of the column's type", $v))
            })?),
            _ => return Err(PathError::msg("found an integer for a column of another type")),
        })
    };
}

impl Leaf {
    pub(super) fn new(t: &DataType) -> Option<Self> {
        Some(numbers!(by_type (t) {
            Leaf::number(Vals::new()),
            DataType::Boolean => Leaf::Bool(BooleanBufferBuilder::new(0)),
            DataType::LargeUtf8 => Leaf::Str {
                ends: Offsets::new(),
                bytes: Vals::new(),
            },
            _ => return None,
        }))
    }
    #[inline]
    pub(super) fn i64(&mut self, v: i64) -> R {
        int!(self, v, from_i64);
        Ok(())
    }
    #[inline]
    pub(super) fn u64(&mut self, v: u64) -> R {
        int!(self, v, from_u64);
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
        numbers!(match (self) {
            Leaf::number(v) as _A => v.push(Default::default()),
            Leaf::Bool(b) => b.append(false),
            Leaf::Str { ends, .. } => ends.add(0)?,
        });
        Ok(())
    }
    /// The values so far as an array with validity `nulls`; the columns
    /// start again empty.
    pub(super) fn finish(&mut self, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let err = |e: arrow_schema::ArrowError| Error::encode("$", e.to_string());
        Ok(numbers!(match (self) {
            Leaf::number(v) as A => {
                Arc::new(PrimitiveArray::<A>::try_new(v.lend(), nulls).map_err(err)?)
            },
            Leaf::Bool(b) => {
                let values = b.finish();
                if nulls.as_ref().is_some_and(|n| n.len() != values.len()) {
                    return Err(Error::encode("$", "validity and values differ in length"));
                }
                Arc::new(BooleanArray::new(values, nulls))
            }
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
        }))
    }
    pub(super) fn reclaim(&mut self) {
        numbers!(match (self) {
            Leaf::number(v) as _A => v.reclaim(),
            Leaf::Bool(_) => {},
            Leaf::Str { ends, bytes } => {
                ends.reclaim();
                bytes.reclaim();
            }
        })
    }
}
