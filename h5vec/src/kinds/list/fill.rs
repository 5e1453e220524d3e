//! `Option<number>` list elements: the fill value marks a missing element
//! (h5col's rule, SPEC.md section 9; schema kind `fill_nullable`).
//!
//! Layout on disk:
//! ```text
//! VALUES     1-D dataset of the number type whose user-defined fill value is
//!            h5col's "missing" marker (int32 -2147483647, int64
//!            -9223372036854775807, unsigned MAX, float 9.969209968386869e36);
//!            an element equal to the dataset's own fill value is `None`
//! ```
//! A dataset without a user-defined fill value has no missing elements.
//! h5col's number columns (`crate::h5col`) are the same dataset at the top
//! of a table, so they use [`FillEncoder`] and [`FillDecoder`] too.

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::{Dataset, Group};

use crate::codec::{exhausted, open_column, range_len, Decoder, Encoder};
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Place, Result};
use crate::evolution::LoadFlags;
use crate::options::WriteCtx;
use crate::raw::{self, Pod};
use crate::schema::{ids, Kind, Schema, Stored};

use super::item::ItemCodec;

/// A number type with h5col's "missing" fill value.
pub trait FillNumber: Pod + PartialEq + std::fmt::Debug {
    /// The fill value h5col recommends (and h5vec writes) for this type.
    const FILL: Self;
    /// Whether `self` equals the fill value `fill` (NaN equals NaN).
    fn is_fill(self, fill: Self) -> bool;
    /// The value's bytes in memory.
    fn bytes(self) -> Vec<u8>;
    /// A value from its bytes in memory (exactly `size_of::<Self>()`).
    fn from_bytes(b: &[u8]) -> Option<Self>;
}

macro_rules! fill_number {
    ($($t:ty => $fill:expr, $eq:expr);* $(;)?) => {$(
        impl FillNumber for $t {
            const FILL: Self = $fill;
            #[inline]
            fn is_fill(self, fill: Self) -> bool {
                // The comparison is a closure literal per type (NaN-aware for floats).
                #[allow(clippy::redundant_closure_call)]
                ($eq)(self, fill)
            }
            fn bytes(self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
            fn from_bytes(b: &[u8]) -> Option<Self> {
                Some(<$t>::from_ne_bytes(b.try_into().ok()?))
            }
        }
    )*};
}
fill_number! {
    i8 => i8::MIN + 1, |a, b| a == b;
    i16 => i16::MIN + 1, |a, b| a == b;
    i32 => i32::MIN + 1, |a, b| a == b;
    i64 => i64::MIN + 1, |a, b| a == b;
    u8 => u8::MAX, |a, b| a == b;
    u16 => u16::MAX, |a, b| a == b;
    u32 => u32::MAX, |a, b| a == b;
    u64 => u64::MAX, |a, b| a == b;
    f32 => 9.969_209_968_386_869e36_f64 as f32, |a: f32, b: f32| a == b || (a.is_nan() && b.is_nan());
    f64 => 9.969_209_968_386_869e36_f64, |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
}

/// `Option<T>` list elements (numbers): a leaf dataset whose user-defined
/// fill value marks missing elements (h5col's rule). Also usable in vectors
/// (`Vec<Option<i32>>`), with schema kind `fill_nullable`.
pub struct FillItem<T>(PhantomData<T>);

fn fill_schema<T: FillNumber>() -> Schema {
    Schema::new(
        Kind::FillNullable,
        ids::FILL_SCHEMA,
        ids::FILL_CODEC,
        std::any::type_name::<Option<T>>(),
    )
    .encoded(T::ENCODED)
}

/// Writes a number dataset with a fill value (`T` or `Option<T>` values).
pub struct FillEncoder<T: FillNumber> {
    col: PodWriter<T>,
    path: String,
    /// The dataset's own fill value, which a missing value is written as
    /// (h5col's marker for a dataset h5vec created; whatever another
    /// writer chose for one it continues); `None`: the dataset declares
    /// none, so it cannot hold a missing value.
    fill: Option<T>,
}

/// Reads a number dataset with a fill value (`T` or `Option<T>` values).
pub struct FillDecoder<T: FillNumber> {
    col: PodReader<T>,
    fill: Option<T>,
    buf: std::vec::IntoIter<T>,
    row: u64,
}

impl<T: FillNumber> FillEncoder<T> {
    /// Creates 1-D number dataset `name` in `group` with h5col's fill value.
    pub(crate) fn create(
        group: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let dt = raw::copy_type(T::file_type(), path)?;
        let spec = raw::ColumnSpec {
            dtype: &dt,
            inner: &[],
            chunk_rows: ctx.chunk_rows(std::mem::size_of::<T>()),
            compression: ctx.opts.get_compression(),
            checksum: ctx.checksum(),
        };
        let ds = raw::create_column_with_fill(
            group,
            name,
            &spec,
            T::mem_type(),
            &T::FILL.bytes(),
            path,
        )?;
        Self::resume(ds, 0, path)
    }

    /// Continues dataset `ds` (opened by [`FillDecoder::open`]) after `rows`
    /// rows, writing missing values as its own fill value (which readers
    /// take for missing), not h5col's default marker.
    pub(crate) fn resume(ds: Dataset, rows: u64, path: &str) -> Result<Self> {
        let fill = raw::user_fill(&ds, T::mem_type(), std::mem::size_of::<T>(), path)?
            .and_then(|b| T::from_bytes(&b));
        Ok(FillEncoder {
            col: PodWriter::resume(ds, Vec::new(), rows, path)?,
            path: path.to_owned(),
            fill,
        })
    }

    /// Buffers a present value; the fill value itself cannot be one (it
    /// would read back as missing).
    pub(crate) fn push_value(&mut self, v: T) -> Result<()> {
        if self.fill.is_some_and(|f| v.is_fill(f)) {
            let row = self.col.written + self.col.buf.len() as u64;
            return Err(Error::encode(
                format!("{}[{row}]", self.path),
                format!("{v:?} is the column's fill value, which h5col reads as missing"),
            ));
        }
        self.col.buf.push(v);
        Ok(())
    }
}

impl<T: FillNumber> FillDecoder<T> {
    /// Opens 1-D number dataset `name` of `group` (at least `rows` rows)
    /// and reads its fill value.
    pub(crate) fn open(group: &Group, name: &str, path: &str, rows: u64) -> Result<Self> {
        Self::open_as(group, name, path, rows, T::accepts, T::ENCODED)
    }

    /// [`open`](Self::open) of a dataset whose type passes `type_ok`: `T`'s
    /// own, or a narrower number HDF5 converts to `T` (SPEC.md section 12;
    /// the fill value is converted with the values, so missing stays missing).
    fn open_as(
        group: &Group,
        name: &str,
        path: &str,
        rows: u64,
        type_ok: impl Fn(&raw::TypeInfo) -> bool,
        type_desc: &str,
    ) -> Result<Self> {
        let (ds, n) = open_column(group, name, path, &[], rows, type_ok, type_desc)?;
        let fill = raw::user_fill(&ds, T::mem_type(), std::mem::size_of::<T>(), path)?
            .and_then(|b| T::from_bytes(&b));
        Ok(FillDecoder {
            col: PodReader::new(ds, Vec::new(), n, path)?,
            fill,
            buf: Vec::new().into_iter(),
            row: 0,
        })
    }

    /// The column reader and the dataset's fill value (if user-defined).
    #[cfg(feature = "arrow")]
    pub(crate) fn into_parts(self) -> (PodReader<T>, Option<T>) {
        (self.col, self.fill)
    }

    /// The dataset, to continue it with [`FillEncoder::resume`].
    pub(crate) fn into_dataset(self) -> Dataset {
        self.col.ds
    }

    /// The next loaded element and its row; `None` where it equals the fill value.
    pub(crate) fn next_raw(&mut self) -> Result<(u64, Option<T>)> {
        let v = self.buf.next().ok_or_else(|| exhausted(self.col.place()))?;
        let row = self.row;
        self.row += 1;
        Ok((row, (!self.fill.is_some_and(|f| v.is_fill(f))).then_some(v)))
    }

    /// Where element `row` is, for errors.
    pub(crate) fn element(&self, row: u64) -> Place {
        self.col.element(row)
    }
}

impl<T: FillNumber> ItemCodec for FillItem<T> {
    type Value = Option<T>;
    type Encoder = FillEncoder<T>;
    type Decoder = FillDecoder<T>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        fill_schema::<T>()
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        FillEncoder::create(parent, name, path, ctx)
    }
    fn open_with(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        let check = crate::evolution::expect_number::<T>(node, &fill_schema::<T>(), path, load)?;
        FillDecoder::open_as(
            parent,
            name,
            path,
            rows,
            |t| check.accepts(t),
            check.describe(),
        )
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        node.expect(&fill_schema::<T>(), path)?;
        let dec = FillDecoder::<T>::open(parent, name, path, rows)?;
        FillEncoder::resume(dec.into_dataset(), rows, path)
    }
}

impl<T: FillNumber> Encoder<Option<T>> for FillEncoder<T> {
    fn push(&mut self, value: &Option<T>) -> Result<()> {
        match value {
            Some(v) => self.push_value(*v),
            None => self.push_null(),
        }
    }
    fn push_null(&mut self) -> Result<()> {
        let Some(fill) = self.fill else {
            let row = self.col.written + self.col.buf.len() as u64;
            return Err(Error::encode(
                format!("{}[{row}]", self.path),
                "a missing value, in a column that declares no fill value (the only way \
                 h5col marks one): it cannot hold it",
            ));
        };
        self.col.buf.push(fill);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.col.flush()
    }
}

impl<T: FillNumber> Decoder<Option<T>> for FillDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.col.place())?;
        self.buf = self.col.read(rows.start, n)?.into_iter();
        self.row = rows.start;
        Ok(())
    }
    fn next(&mut self) -> Result<Option<T>> {
        self.next_raw().map(|(_, v)| v)
    }
    fn skip(&mut self) -> Result<()> {
        self.next_raw().map(drop)
    }
}
