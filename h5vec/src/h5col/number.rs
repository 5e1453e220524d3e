//! Number columns: `i8`..`u64`, `f32`, `f64` and `Option` of them
//! (SPEC.md section 9, "Scalar columns").
//!
//! Layout on disk:
//! ```text
//! <table>/<col>     1-D dataset of the number type, fill value = h5col's "missing"
//!                   marker (int32 -2147483647, int64 -9223372036854775807, unsigned
//!                   MAX, float 9.969209968386869e36); an element equal to the
//!                   dataset's own fill value is `None`
//! ```
//! This is the dataset of `Option<number>` list elements, at the top of a
//! table: the columns use `kinds::list`'s [`FillEncoder`] and [`FillDecoder`].

use std::ops::Range;

use hdf5::Group;

use crate::codec::{Decoder, Encoder};
use crate::error::{Error, Result};
use crate::kinds::list::{FillDecoder, FillEncoder, FillNumber};
use crate::options::WriteCtx;

use super::fields::{ColumnReader, ColumnWriter, Phase, TableColumn};
use super::table::column_path;

fn number_create<T: FillNumber>(
    table: &Group,
    name: &str,
    ctx: &WriteCtx<'_>,
) -> Result<FillEncoder<T>> {
    FillEncoder::create(table, name, &column_path(name), ctx)
}

fn number_open<T: FillNumber>(table: &Group, name: &str, nrows: u64) -> Result<FillDecoder<T>> {
    FillDecoder::open(table, name, &column_path(name), nrows)
}

fn number_resume<T: FillNumber>(table: &Group, name: &str, nrows: u64) -> Result<FillEncoder<T>> {
    let r = number_open::<T>(table, name, nrows)?;
    FillEncoder::resume(r.into_dataset(), nrows, &column_path(name))
}

impl<T: FillNumber> ColumnWriter<T> for FillEncoder<T> {
    fn push(&mut self, value: &T) -> Result<()> {
        self.push_value(*value)
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        match phase {
            Phase::Values => Encoder::<Option<T>>::flush(self),
            _ => Ok(()),
        }
    }
}

impl<T: FillNumber> ColumnWriter<Option<T>> for FillEncoder<T> {
    fn push(&mut self, value: &Option<T>) -> Result<()> {
        Encoder::<Option<T>>::push(self, value)
    }
    fn flush(&mut self, phase: Phase) -> Result<()> {
        <Self as ColumnWriter<T>>::flush(self, phase)
    }
}

impl<T: FillNumber> ColumnReader<T> for FillDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        Decoder::<Option<T>>::load(self, rows)
    }
    fn next(&mut self) -> Result<T> {
        match self.next_raw()? {
            (_, Some(v)) => Ok(v),
            (row, None) => Err(Error::invalid(
                self.element(row),
                "missing value (the column's fill value); load the column as Option",
            )),
        }
    }
}

impl<T: FillNumber> ColumnReader<Option<T>> for FillDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        Decoder::<Option<T>>::load(self, rows)
    }
    fn next(&mut self) -> Result<Option<T>> {
        Decoder::<Option<T>>::next(self)
    }
}

// `T` and `Option<T>` are the same column: `None` is the fill value.
macro_rules! number_columns {
    ($($t:ty),*) => {$(
        number_columns!(@one $t, $t);
        number_columns!(@one Option<$t>, $t);
    )*};
    (@one $col:ty, $t:ty) => {
        impl TableColumn for $col {
            type Writer = FillEncoder<$t>;
            type Reader = FillDecoder<$t>;
            fn create(table: &Group, name: &str, ctx: &WriteCtx<'_>) -> Result<Self::Writer> {
                number_create(table, name, ctx)
            }
            fn resume(table: &Group, name: &str, nrows: u64, _: &WriteCtx<'_>) -> Result<Self::Writer> {
                number_resume(table, name, nrows)
            }
            fn open(table: &Group, name: &str, nrows: u64) -> Result<Self::Reader> {
                number_open(table, name, nrows)
            }
        }
    };
}
number_columns!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
