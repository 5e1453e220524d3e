//! Dense kind: fixed-size arrays `[T; N]` (nested to any depth) of numbers,
//! `bool`, `char` or enums, stacked along one extra leading axis.
//!
//! Layout on disk:
//! ```text
//! <field>/values    h5py shape (Z, d1, d2, ...) for Rust [[T; d2]; d1]; only axis 0 extendible
//! ```
//! The schema's `dimensions` are Julia's: the h5py trailing axes reversed
//! (`[d2, d1]`), so HDF5.jl sees `(d2, d1, Z)`. `dataset[k]` in h5py is
//! element `k`, laid out exactly like the Rust array.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{exhausted, range_len, Codec, Decoder, Encoder, H5Vector};
use crate::column::{create_values, open_values_with};
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Result};
use crate::evolution::LoadFlags;
use crate::kinds::scalar::Scalar;
use crate::options::WriteCtx;
use crate::pipeline::buffers::PooledVec;
use crate::raw::Pod;
use crate::schema::{ids, Kind, Schema, Stored};

/// The raw leaf type of a dense element.
pub(crate) type RawOf<A> = <<A as DenseElem>::Leaf as Scalar>::Raw;

/// A value that can be an element of a dense array: a scalar leaf or a
/// fixed-size array of dense elements.
pub trait DenseElem: Sized + 'static {
    /// The scalar at the bottom.
    type Leaf: Scalar;
    /// Leaves per value.
    const LEAVES: usize;
    /// Appends this value's shape, outermost axis first (h5py order).
    fn shape(out: &mut Vec<usize>);
    /// Appends this value's leaves in row-major order.
    fn flatten(&self, out: &mut Vec<RawOf<Self>>);
    /// Writes this value's `LEAVES` leaves, in row-major order, to `out`
    /// (exactly `LEAVES` long).
    fn flatten_into(&self, out: &mut [RawOf<Self>]) {
        let mut v = Vec::with_capacity(Self::LEAVES);
        self.flatten(&mut v);
        out.copy_from_slice(&v);
    }
    /// Rebuilds a value from exactly `LEAVES` leaves; `None` if a leaf is invalid.
    fn unflatten(src: &[RawOf<Self>]) -> Option<Self>;
    /// Some value, used only to fill an array whose decoding already failed.
    fn placeholder() -> Self;
}

/// Implements [`DenseElem`] for a [`Scalar`] type (a leaf of dense arrays).
/// Expanded in the crates of derived enums too, so it names h5vec's items
/// by their `__private` paths.
#[macro_export]
#[doc(hidden)]
macro_rules! __dense_leaf {
    ($($t:ty),*) => {$(
        impl $crate::__private::DenseElem for $t {
            type Leaf = $t;
            const LEAVES: usize = 1;
            fn shape(_out: &mut ::std::vec::Vec<usize>) {}
            #[inline]
            fn flatten(&self, out: &mut ::std::vec::Vec<<$t as $crate::__private::Scalar>::Raw>) {
                out.push($crate::__private::Scalar::to_raw(self));
            }
            #[inline]
            fn flatten_into(&self, out: &mut [<$t as $crate::__private::Scalar>::Raw]) {
                out[0] = $crate::__private::Scalar::to_raw(self);
            }
            #[inline]
            fn unflatten(src: &[<$t as $crate::__private::Scalar>::Raw]) -> ::std::option::Option<$t> {
                src.first().copied().and_then(<$t as $crate::__private::Scalar>::from_raw)
            }
            fn placeholder() -> $t {
                <$t as $crate::__private::Scalar>::placeholder()
            }
        }
    )*};
}
__dense_leaf!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool, char);

impl<T: DenseElem, const N: usize> DenseElem for [T; N] {
    type Leaf = T::Leaf;
    const LEAVES: usize = N * T::LEAVES;
    fn shape(out: &mut Vec<usize>) {
        out.push(N);
        T::shape(out);
    }
    #[inline]
    fn flatten(&self, out: &mut Vec<RawOf<Self>>) {
        for v in self {
            v.flatten(out);
        }
    }
    #[inline]
    fn flatten_into(&self, out: &mut [RawOf<Self>]) {
        for (v, o) in self.iter().zip(out.chunks_exact_mut(T::LEAVES.max(1))) {
            v.flatten_into(o);
        }
    }
    #[inline]
    fn unflatten(src: &[RawOf<Self>]) -> Option<Self> {
        let mut ok = src.len() == Self::LEAVES;
        let arr = std::array::from_fn(|i| {
            let part = src.get(i * T::LEAVES..(i + 1) * T::LEAVES);
            match part.and_then(T::unflatten) {
                Some(v) => v,
                None => {
                    ok = false;
                    T::placeholder()
                }
            }
        });
        ok.then_some(arr)
    }
    fn placeholder() -> Self {
        std::array::from_fn(|_| T::placeholder())
    }
}

impl<T: DenseElem, const N: usize> H5Vector for [T; N] {
    type Codec = DenseCodec<[T; N]>;
}

/// The dense layout for array type `A`.
pub struct DenseCodec<A>(PhantomData<A>);

/// Writes a dense column (also the leaf values of a list).
pub struct DenseEncoder<A: DenseElem> {
    col: PodWriter<RawOf<A>>,
}

impl<A: DenseElem> DenseEncoder<A> {
    /// Wraps a writer whose rows have `A`'s shape.
    pub fn from_writer(col: PodWriter<RawOf<A>>) -> Self {
        DenseEncoder { col }
    }
}

impl<A: DenseElem> DenseDecoder<A> {
    /// Wraps a reader whose rows have `A`'s shape.
    pub fn from_reader(col: PodReader<RawOf<A>>) -> Self {
        DenseDecoder {
            col,
            buf: PooledVec::take(),
            pos: 0,
            next_row: 0,
        }
    }
}

/// `A`'s shape, outermost axis first.
pub(crate) fn shape_of_u64<A: DenseElem>() -> Vec<u64> {
    shape_of::<A>().iter().map(|&d| d as u64).collect()
}

/// Reads a dense column.
pub struct DenseDecoder<A: DenseElem> {
    col: PodReader<RawOf<A>>,
    buf: PooledVec<RawOf<A>>,
    pos: usize,
    next_row: u64,
}

/// The schema node of dense type `A`.
pub(crate) fn dense_schema<A: DenseElem>() -> Schema {
    let mut s = Schema::new(
        Kind::Dense,
        ids::DENSE,
        <A::Leaf as Scalar>::CODEC,
        std::any::type_name::<A>(),
    )
    .encoded(<RawOf<A> as Pod>::ENCODED);
    s.dimensions = Some(shape_of::<A>().iter().rev().map(|&d| d as i64).collect());
    crate::kinds::scalar::labeled::<A::Leaf>(s)
}

/// `A`'s shape, outermost axis first.
pub(crate) fn shape_of<A: DenseElem>() -> Vec<usize> {
    let mut s = Vec::new();
    A::shape(&mut s);
    s
}

impl<A: DenseElem> Codec for DenseCodec<A> {
    type Value = A;
    type Encoder = DenseEncoder<A>;
    type Decoder = DenseDecoder<A>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        dense_schema::<A>()
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        Ok(DenseEncoder {
            col: create_values(group, &shape_of::<A>(), path, ctx)?,
        })
    }

    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let dec = Self::open(group, node, path, count)?;
        let inner = shape_of::<A>().iter().map(|&d| d as u64).collect();
        Ok(DenseEncoder {
            col: PodWriter::resume(dec.col.ds, inner, count, path)?,
        })
    }

    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        let want = Self::schema(&WriteCtx {
            opts: &Default::default(),
            len_hint: 0,
        });
        let inner = shape_of_u64::<A>();
        Ok(DenseDecoder {
            col: open_values_with(group, node, path, count, &want, &inner, load)?,
            buf: PooledVec::take(),
            pos: 0,
            next_row: 0,
        })
    }
}

impl<A: DenseElem> Encoder<A> for DenseEncoder<A> {
    const BY_COLUMN: bool = true;
    #[inline]
    fn push(&mut self, value: &A) -> Result<()> {
        value.flatten(&mut self.col.buf);
        if A::LEAVES == 0 {
            self.col.empty_rows += 1;
        }
        Ok(())
    }
    fn push_all<'a, I>(&mut self, values: I) -> Result<()>
    where
        I: Iterator<Item = &'a A> + Clone,
    {
        if A::LEAVES == 0 {
            self.col.empty_rows += values.count() as u64;
            return Ok(());
        }
        let buf = &mut self.col.buf;
        let n = match values.size_hint() {
            (lo, Some(hi)) if lo == hi => lo,
            _ => values.clone().count(),
        };
        // Pushed leaf by leaf into reserved room: filling the room with
        // zeros first would write the column twice.
        buf.reserve(n.saturating_mul(A::LEAVES));
        for v in values {
            v.flatten(buf);
        }
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        let n = self.col.buf.len() + A::LEAVES;
        self.col.buf.resize(n, Default::default());
        if A::LEAVES == 0 {
            self.col.empty_rows += 1;
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.col.flush()
    }
}

impl<A: DenseElem> Decoder<A> for DenseDecoder<A> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.col.place())?;
        self.col.read_into(rows.start, n, &mut self.buf)?;
        self.pos = 0;
        self.next_row = rows.start;
        Ok(())
    }
    #[inline]
    fn next(&mut self) -> Result<A> {
        let end = self.pos + A::LEAVES;
        let src = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| exhausted(self.col.place()))?;
        let v = A::unflatten(src);
        self.pos = end;
        self.next_row += 1;
        v.ok_or_else(|| bad_entry::<A::Leaf>(&self.col, self.next_row - 1, src))
    }
    fn skip(&mut self) -> Result<()> {
        let end = self.pos + A::LEAVES;
        if end > self.buf.len() {
            return Err(exhausted(self.col.place()));
        }
        self.pos = end;
        self.next_row += 1;
        Ok(())
    }
}

/// An array element `row` with a leaf that is not a valid `L` (a `char`
/// outside Unicode).
#[cold]
pub(crate) fn bad_entry<L: Scalar>(col: &PodReader<L::Raw>, row: u64, leaves: &[L::Raw]) -> Error {
    // A leaf that says what it holds (a bool code) is named with its index.
    let named = leaves.iter().enumerate().find_map(|(i, r)| {
        L::from_raw(*r)
            .is_none()
            .then(|| L::refused(*r).map(|m| (i, m)))
            .flatten()
    });
    match named {
        Some((i, msg)) if leaves.len() > 1 => {
            Error::invalid(col.element(row), format!("entry {i}: {msg}"))
        }
        Some((_, msg)) => Error::invalid(col.element(row), msg),
        None => Error::invalid(
            col.element(row),
            format!("expected {} in every entry", L::expected()),
        ),
    }
}
