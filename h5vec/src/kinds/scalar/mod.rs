//! Scalar kind: numbers, `bool`, `char`, fieldless enums.
//!
//! Layout on disk:
//! ```text
//! <field>/values    1-D, one encoded value per element, chunked, max extent unlimited
//! ```
//! Integers and floats keep their native HDF5 type (little-endian); `bool` is
//! the 1-byte bitfield `H5T_STD_B8LE` (what HDF5.jl writes); `char` is an
//! Int32 Unicode code point (`HDF5Vectors.CharCodec`); an enum is its
//! `#[repr]` integer (`HDF5Vectors.EnumCodec`).

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{exhausted, range_len, Codec, Decoder, Encoder, H5Vector};
use crate::column::{create_values, open_values_with, PodReader, PodWriter};
use crate::error::{Error, Result};
use crate::evolution::LoadFlags;
use crate::options::WriteCtx;
use crate::pipeline::buffers::PooledVec;
use crate::raw::{Bits8, Pod};
use crate::schema::{ids, Kind, Schema, Stored};

/// A value stored as one plain encoded number.
pub trait Scalar: Sized + 'static {
    /// The stored representation.
    type Raw: Pod;
    /// Codec identifier (`HDF5Vectors.IdentityCodec`, `.CharCodec`, `.EnumCodec`).
    const CODEC: &'static str;
    /// Encodes a value.
    fn to_raw(&self) -> Self::Raw;
    /// Decodes a stored value; `None` if it is not a valid `Self`.
    fn from_raw(raw: Self::Raw) -> Option<Self>;
    /// Some valid value, used only to fill an array whose decoding already
    /// failed (the array is then discarded).
    fn placeholder() -> Self;
    /// What a valid stored value looks like, for errors.
    fn expected() -> String {
        format!("a valid {}", std::any::type_name::<Self>())
    }
    /// The message for a stored value [`from_raw`](Self::from_raw)
    /// refused, when it should name the value (`bool`); `None` gives
    /// "expected [`expected`](Self::expected)".
    #[doc(hidden)]
    fn refused(_raw: Self::Raw) -> Option<String> {
        None
    }
    /// A fieldless enum's variant names and discriminants (as Int64), in
    /// declaration order: written as the node's `variant_names` and
    /// `variant_values` (SPEC.md section 2); empty for other scalars.
    const LABELS: &'static [(&'static str, i64)] = &[];
}

/// `node` with `S`'s labels (`variant_names`, `variant_values`), if it has any.
pub(crate) fn labeled<S: Scalar>(mut node: Schema) -> Schema {
    if !S::LABELS.is_empty() {
        node.variant_names = Some(S::LABELS.iter().map(|(n, _)| n.to_string()).collect());
        node.variant_values = Some(S::LABELS.iter().map(|(_, v)| *v).collect());
    }
    node
}

macro_rules! identity_scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            type Raw = $t;
            const CODEC: &'static str = ids::IDENTITY;
            #[inline]
            fn to_raw(&self) -> $t { *self }
            #[inline]
            fn from_raw(raw: $t) -> Option<$t> { Some(raw) }
            fn placeholder() -> $t { <$t>::default() }
        }
        impl H5Vector for $t {
            type Codec = ScalarCodec<$t>;
        }
    )*};
}
identity_scalar!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl Scalar for bool {
    type Raw = Bits8;
    const CODEC: &'static str = ids::IDENTITY;
    #[inline]
    fn to_raw(&self) -> Bits8 {
        Bits8(*self as u8)
    }
    /// Only 0 and 1 are booleans (SPEC.md section 7): NumPy, Julia and
    /// `!= 0` would each call 2 something else.
    #[inline]
    fn from_raw(raw: Bits8) -> Option<bool> {
        match raw.0 {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn placeholder() -> bool {
        false
    }
    fn expected() -> String {
        "a boolean: 0 (false) or 1 (true)".into()
    }
    fn refused(raw: Bits8) -> Option<String> {
        Some(bool_refused(raw.0))
    }
}

/// What a stored boolean code other than 0 and 1 is called in errors, on
/// every read path (typed decoders, `crate::arrow`, h5col tables).
pub(crate) fn bool_refused(code: u8) -> String {
    format!("bool value {code} is neither 0 (false) nor 1 (true)")
}

/// The first code in `codes` that is not a boolean (0 or 1), with its
/// index: one vectorisable pass over the batch, the position searched only
/// when there is one.
#[inline]
#[cfg(feature = "arrow")] // the untyped bool readers' check
pub(crate) fn first_non_bool(codes: &[Bits8]) -> Option<(usize, u8)> {
    if codes.iter().fold(0u8, |acc, b| acc | (b.0 & !1)) == 0 {
        return None;
    }
    codes.iter().position(|b| b.0 > 1).map(|i| (i, codes[i].0))
}
impl H5Vector for bool {
    type Codec = ScalarCodec<bool>;
}

impl Scalar for char {
    type Raw = i32;
    const CODEC: &'static str = ids::CHAR;
    #[inline]
    fn to_raw(&self) -> i32 {
        *self as u32 as i32
    }
    #[inline]
    fn from_raw(raw: i32) -> Option<char> {
        u32::try_from(raw).ok().and_then(char::from_u32)
    }
    fn placeholder() -> char {
        '\0'
    }
    fn expected() -> String {
        "a Unicode scalar value (0..=0x10FFFF, not a surrogate)".into()
    }
}
impl H5Vector for char {
    type Codec = ScalarCodec<char>;
}

/// The scalar layout for a [`Scalar`] type.
pub struct ScalarCodec<T>(PhantomData<T>);

/// Writes a scalar column.
pub struct ScalarEncoder<T: Scalar> {
    col: PodWriter<T::Raw>,
}

/// Reads a scalar column.
pub struct ScalarDecoder<T: Scalar> {
    col: PodReader<T::Raw>,
    buf: PooledVec<T::Raw>,
    pos: usize,
    next_row: u64,
}

/// The schema node of a scalar kind with encoded type `encoded`.
pub(crate) fn scalar_schema<T>(codec: &str, encoded: &str) -> Schema {
    Schema::new(Kind::Scalar, ids::SCALAR, codec, std::any::type_name::<T>()).encoded(encoded)
}

impl<T: Scalar> Codec for ScalarCodec<T> {
    type Value = T;
    type Encoder = ScalarEncoder<T>;
    type Decoder = ScalarDecoder<T>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        labeled::<T>(scalar_schema::<T>(T::CODEC, T::Raw::ENCODED))
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        Ok(ScalarEncoder {
            col: create_values(group, &[], path, ctx)?,
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
        Ok(ScalarEncoder {
            col: PodWriter::resume(dec.col.ds, Vec::new(), count, path)?,
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
        Ok(ScalarDecoder {
            col: open_values_with(group, node, path, count, &want, &[], load)?,
            buf: PooledVec::take(),
            pos: 0,
            next_row: 0,
        })
    }
}

impl<T: Scalar> Encoder<T> for ScalarEncoder<T> {
    const BY_COLUMN: bool = true;
    #[inline]
    fn push(&mut self, value: &T) -> Result<()> {
        self.col.buf.push(value.to_raw());
        Ok(())
    }
    #[inline]
    fn push_all<'a, I>(&mut self, values: I) -> Result<()>
    where
        I: Iterator<Item = &'a T> + Clone,
    {
        self.col.buf.extend(values.map(Scalar::to_raw));
        // Statistics while the values are in the cache (the caller pushes
        // blocks that fit it).
        self.col.summarize_pushed();
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        self.col.buf.push(T::Raw::default());
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.col.flush()
    }
}

impl<T: Scalar> Decoder<T> for ScalarDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.col.place())?;
        self.col.read_into(rows.start, n, &mut self.buf)?;
        self.pos = 0;
        self.next_row = rows.start;
        Ok(())
    }
    #[inline]
    fn next(&mut self) -> Result<T> {
        let raw = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| exhausted(self.col.place()))?;
        self.pos += 1;
        self.next_row += 1;
        T::from_raw(raw).ok_or_else(|| refused_value::<T>(&self.col, self.next_row - 1, raw))
    }
    fn skip(&mut self) -> Result<()> {
        if self.pos >= self.buf.len() {
            return Err(exhausted(self.col.place()));
        }
        self.pos += 1;
        self.next_row += 1;
        Ok(())
    }
}

/// Stored value `raw` of row `row` is not a valid `T`: the message names
/// the value where `T` says how ([`Scalar::refused`]).
#[cold]
pub(crate) fn refused_value<T: Scalar>(col: &PodReader<T::Raw>, row: u64, raw: T::Raw) -> Error {
    match T::refused(raw) {
        Some(msg) => Error::invalid(col.element(row), msg),
        None => bad_value::<T>(col, row),
    }
}

/// A stored value that is not a valid `T` (a `char` outside Unicode).
#[cold]
pub(crate) fn bad_value<T: Scalar>(col: &PodReader<T::Raw>, row: u64) -> Error {
    Error::invalid(
        col.element(row),
        format!("expected {} in {}", T::expected(), col.place()),
    )
}
