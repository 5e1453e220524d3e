//! Mapped values: a Rust type stored as plain numbers under a codec of its
//! own (instants, dates, times of day and durations as Int64/Int32, UUIDs
//! as 16 bytes; SPEC.md sections 4.6 to 4.7).
//!
//! Layout on disk:
//! ```text
//! <field>/values    1-D (Z,) of the raw number for one number per value
//!                   (kind `scalar`), or (Z, d1, ...) for a fixed shape (kind
//!                   `dense`, e.g. (Z, 16) UInt8 for a UUID)
//! ```
//! exactly the scalar or dense layout (3.1, 3.2), so any HDF5 reader sees
//! ordinary numbers; the node's codec (`h5vec.InstantCodec`, ...) and its
//! `time_unit` / `time_zone` say what they mean. As a list element the
//! numbers are the list's `VALUES` dataset (4.2), as for any number.
//!
//! Unlike [`Scalar`](crate::kinds::scalar::Scalar), encoding can fail (an
//! instant outside Int64 nanoseconds is an error naming the field, the row
//! and the value, never a clamp), and decoding checks every stored value (a
//! number that is not a valid value of the type is an error naming the row).

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{exhausted, range_len, Codec, Decoder, Encoder};
use crate::column::create_values;
use crate::column::open_values_with;
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Place, Result};
use crate::evolution::LoadFlags;
use crate::kinds::list::{create_leaf, open_leaf_checked, open_leaf_values, ItemCodec};
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::options::WriteCtx;
use crate::raw::Pod;
use crate::schema::{ids, Kind, Schema, Stored};

/// A value stored as `SHAPE`'s product of `Raw` numbers, under codec `CODEC`.
pub trait Mapped: Sized + 'static {
    /// The stored number.
    type Raw: Pod;
    /// The numbers of one value, h5py order; empty for one number (kind
    /// `scalar`), otherwise kind `dense`.
    const SHAPE: &'static [usize];
    /// Codec identifier of the node.
    const CODEC: &'static str;
    /// The node's `time_unit`, if any.
    const TIME_UNIT: Option<&'static str> = None;
    /// The node's `time_zone`, if any.
    const TIME_ZONE: Option<&'static str> = None;
    /// Appends this value's numbers to `out`; an error message (naming the
    /// value) if it has no stored form.
    fn encode(&self, out: &mut Vec<Self::Raw>) -> std::result::Result<(), String>;
    /// Rebuilds a value from exactly its numbers; an error message if they
    /// are not a valid value.
    fn decode(src: &[Self::Raw]) -> std::result::Result<Self, String>;
}

/// Numbers per value.
fn leaves<T: Mapped>() -> usize {
    T::SHAPE.iter().product()
}

fn inner<T: Mapped>() -> Vec<u64> {
    T::SHAPE.iter().map(|&d| d as u64).collect()
}

/// The schema node of `T`: scalar or dense by `SHAPE`, with `T`'s codec,
/// time unit and time zone.
pub(crate) fn mapped_schema<T: Mapped>() -> Schema {
    let name = std::any::type_name::<T>();
    let mut s = if T::SHAPE.is_empty() {
        Schema::new(Kind::Scalar, ids::SCALAR, T::CODEC, name)
    } else {
        let mut s = Schema::new(Kind::Dense, ids::DENSE, T::CODEC, name);
        s.dimensions = Some(T::SHAPE.iter().rev().map(|&d| d as i64).collect());
        s
    }
    .encoded(T::Raw::ENCODED);
    s.time_unit = T::TIME_UNIT.map(str::to_owned);
    s.time_zone = T::TIME_ZONE.map(str::to_owned);
    s
}

/// The layout of a [`Mapped`] type as a vector or a record field.
pub struct MappedCodec<T>(PhantomData<T>);

/// Writes mapped values.
pub struct MappedEncoder<T: Mapped> {
    col: PodWriter<T::Raw>,
    place: Place,
}

/// Reads mapped values.
pub struct MappedDecoder<T: Mapped> {
    col: PodReader<T::Raw>,
    buf: Vec<T::Raw>,
    pos: usize,
    next_row: u64,
}

impl<T: Mapped> MappedEncoder<T> {
    fn new(col: PodWriter<T::Raw>, path: &str) -> Self {
        // The vector is written unlinked (SPEC.md section 8): its datasets
        // have no HDF5 path yet, so save errors name the logical path only.
        MappedEncoder {
            col,
            place: Place::from(path),
        }
    }
}

impl<T: Mapped> MappedDecoder<T> {
    fn new(col: PodReader<T::Raw>) -> Self {
        MappedDecoder {
            col,
            buf: Vec::new(),
            pos: 0,
            next_row: 0,
        }
    }
}

impl<T: Mapped> Codec for MappedCodec<T> {
    type Value = T;
    type Encoder = MappedEncoder<T>;
    type Decoder = MappedDecoder<T>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        mapped_schema::<T>()
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let col = create_values(group, T::SHAPE, path, ctx)?;
        Ok(MappedEncoder::new(col, path))
    }

    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let dec = Self::open(group, node, path, count)?;
        let col = PodWriter::resume(dec.col.ds, inner::<T>(), count, path)?;
        Ok(MappedEncoder::new(col, path))
    }

    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        let want = mapped_schema::<T>();
        let col = open_values_with(group, node, path, count, &want, &inner::<T>(), load)?;
        Ok(MappedDecoder::new(col))
    }
}

impl<T: Mapped> Nullable for MappedCodec<T> {
    type Codec = NullableCodec<MappedCodec<T>>;
}

impl<T: Mapped> Encoder<T> for MappedEncoder<T> {
    #[inline]
    fn push(&mut self, value: &T) -> Result<()> {
        let before = self.col.buf.len();
        if let Err(msg) = value.encode(&mut self.col.buf) {
            self.col.buf.truncate(before);
            let row = self.col.written + (before / leaves::<T>().max(1)) as u64;
            return Err(Error::encode(self.place.element(row), msg));
        }
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        let n = self.col.buf.len() + leaves::<T>();
        self.col.buf.resize(n, Default::default());
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.col.flush()
    }
}

impl<T: Mapped> Decoder<T> for MappedDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.col.place())?;
        self.col.read_into(rows.start, n, &mut self.buf)?;
        self.pos = 0;
        self.next_row = rows.start;
        Ok(())
    }
    #[inline]
    fn next(&mut self) -> Result<T> {
        let end = self.pos + leaves::<T>();
        let src = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| exhausted(self.col.place()))?;
        self.pos = end;
        self.next_row += 1;
        T::decode(src).map_err(|msg| {
            Error::invalid(
                self.col.element(self.next_row - 1),
                format!("{msg} (codec {}) in {}", T::CODEC, self.col.place()),
            )
        })
    }
    fn skip(&mut self) -> Result<()> {
        let end = self.pos + leaves::<T>();
        if end > self.buf.len() {
            return Err(exhausted(self.col.place()));
        }
        self.pos = end;
        self.next_row += 1;
        Ok(())
    }
}

/// A [`Mapped`] type as a list element: the list's `VALUES` dataset.
pub struct MappedItem<T>(PhantomData<T>);

impl<T: Mapped> ItemCodec for MappedItem<T> {
    type Value = T;
    type Encoder = MappedEncoder<T>;
    type Decoder = MappedDecoder<T>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        mapped_schema::<T>()
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let col = create_leaf::<T::Raw>(parent, name, T::SHAPE, path, ctx)?;
        Ok(MappedEncoder::new(col, path))
    }
    fn open_with(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        let inner = inner::<T>();
        let want = mapped_schema::<T>();
        let check = crate::evolution::expect_number::<T::Raw>(node, &want, path, load)?;
        let (ds, n) = open_leaf_checked(parent, name, path, rows, &inner, &check)?;
        Ok(MappedDecoder::new(PodReader::new(ds, inner, n, path)?))
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let inner = inner::<T>();
        let want = mapped_schema::<T>();
        let (ds, _) = open_leaf_values::<T::Raw>(parent, name, node, path, rows, &want, &inner)?;
        Ok(MappedEncoder::new(
            PodWriter::resume(ds, inner, rows, path)?,
            path,
        ))
    }
}

/// Implements `H5Vector` and `ListItem` for [`Mapped`] types.
macro_rules! mapped_vector {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::codec::H5Vector for $t {
            type Codec = $crate::kinds::adapters::mapped::MappedCodec<$t>;
        }
        impl $crate::kinds::list::ListItem for $t {
            type Item = $crate::kinds::adapters::mapped::MappedItem<$t>;
        }
    )*};
}
pub(crate) use mapped_vector;
