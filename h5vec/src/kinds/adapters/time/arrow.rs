//! Times without the Rust types (SPEC.md section 11): instants are Arrow
//! timestamps (`Timestamp(ns, time_zone)`), dates `Date32`, times of day
//! `Time64(ns)`, durations `Duration(ns)`, read straight from their Int64 /
//! Int32 counts. Written back, instants, times and durations of any unit
//! become Int64 nanoseconds (the multiplication checked: a value past Int64
//! nanoseconds is an error naming the row) and dates their Int32 days.
//!
//! One [`ArrowAdapter`] per codec: [`INSTANT`], [`DATE`], [`TIME_OF_DAY`],
//! [`DURATION`].

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType,
    DurationSecondType, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, Int32Array, Int64Array};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field, TimeUnit};
use hdf5::Group;

use crate::arrow::read::nodes::{leaf_column, BoxNode};
use crate::arrow::read::retyped::Retyped;
use crate::error::{Error, Result};
use crate::kinds::adapters::ArrowAdapter;
use crate::schema::{ids, Kind, Schema, Stored};

use super::check_time_of_day;

/// The time adapters, one per codec.
pub(crate) enum TimeAdapter {
    /// `h5vec.InstantCodec`: Arrow timestamps.
    Instant,
    /// `h5vec.DateCodec`: `Date32`.
    Date,
    /// `h5vec.TimeOfDayCodec`: `Time64` (`Time32` too, written).
    TimeOfDay,
    /// `h5vec.DurationCodec`: Arrow durations.
    Duration,
}

/// Instants, as registered.
pub(crate) static INSTANT: TimeAdapter = TimeAdapter::Instant;
/// Dates, as registered.
pub(crate) static DATE: TimeAdapter = TimeAdapter::Date;
/// Times of day, as registered.
pub(crate) static TIME_OF_DAY: TimeAdapter = TimeAdapter::TimeOfDay;
/// Durations, as registered.
pub(crate) static DURATION: TimeAdapter = TimeAdapter::Duration;

impl ArrowAdapter for TimeAdapter {
    fn kind(&self) -> Kind {
        Kind::Scalar
    }

    fn codec(&self) -> &'static str {
        match self {
            TimeAdapter::Instant => ids::INSTANT_CODEC,
            TimeAdapter::Date => ids::DATE_CODEC,
            TimeAdapter::TimeOfDay => ids::TIME_OF_DAY_CODEC,
            TimeAdapter::Duration => ids::DURATION_CODEC,
        }
    }

    fn arrow_type(&self, node: &Schema, path: &str) -> Result<DataType> {
        let enc = node.encoded_type.as_deref().unwrap_or("");
        let unit = node.time_unit.as_deref();
        Ok(match (self, enc, unit) {
            (TimeAdapter::Instant, "Int64", Some("ns")) => DataType::Timestamp(
                TimeUnit::Nanosecond,
                node.time_zone.as_deref().map(Arc::from),
            ),
            (TimeAdapter::Date, "Int32", Some("d")) => DataType::Date32,
            (TimeAdapter::TimeOfDay, "Int64", Some("ns")) => DataType::Time64(TimeUnit::Nanosecond),
            (TimeAdapter::Duration, "Int64", Some("ns")) => {
                DataType::Duration(TimeUnit::Nanosecond)
            }
            _ => {
                return Err(Error::mismatch(
                    path,
                    "an instant or duration of Int64 `ns`, or a date of Int32 `d`",
                    format!("`{}` of `{enc}` with time_unit {unit:?}", node.codec),
                ))
            }
        })
    }

    fn annotate(&self, field: Field, _path: &str) -> Result<Field> {
        Ok(field)
    }

    fn reads(&self, ty: &DataType) -> bool {
        match self {
            TimeAdapter::Instant => matches!(ty, DataType::Timestamp(..)),
            TimeAdapter::Date => *ty == DataType::Date32,
            TimeAdapter::TimeOfDay => matches!(ty, DataType::Time64(_)),
            TimeAdapter::Duration => matches!(ty, DataType::Duration(_)),
        }
    }

    fn open_reader(
        &self,
        group: &Group,
        member: Option<&str>,
        node: &Stored,
        path: &str,
        count: u64,
        ty: &DataType,
    ) -> Result<BoxNode> {
        Ok(match self {
            TimeAdapter::Date => Box::new(Retyped {
                col: leaf_column::<i32>(group, member, node, path, count, &[])?,
                ty: ty.clone(),
                check: None,
            }),
            TimeAdapter::Instant | TimeAdapter::TimeOfDay | TimeAdapter::Duration => {
                Box::new(Retyped {
                    col: leaf_column::<i64>(group, member, node, path, count, &[])?,
                    ty: ty.clone(),
                    check: matches!(self, TimeAdapter::TimeOfDay)
                        .then_some(time_of_day as fn(i64) -> _),
                })
            }
        })
    }

    fn default_node(&self, field: &Field) -> Option<Schema> {
        let scalar = |codec: &str, logical: &str, enc: &str, unit: &str, zone: Option<&str>| {
            let mut s = Schema::new(Kind::Scalar, ids::SCALAR, codec, logical).encoded(enc);
            s.time_unit = Some(unit.to_owned());
            s.time_zone = zone.map(str::to_owned);
            s
        };
        Some(match (self, field.data_type()) {
            (TimeAdapter::Instant, DataType::Timestamp(_, Some(tz))) => scalar(
                ids::INSTANT_CODEC,
                "std::time::SystemTime",
                "Int64",
                "ns",
                Some(tz),
            ),
            (TimeAdapter::Instant, DataType::Timestamp(_, None)) => scalar(
                ids::INSTANT_CODEC,
                "chrono::naive::datetime::NaiveDateTime",
                "Int64",
                "ns",
                None,
            ),
            (TimeAdapter::Date, DataType::Date32) => scalar(
                ids::DATE_CODEC,
                "chrono::naive::date::NaiveDate",
                "Int32",
                "d",
                None,
            ),
            (TimeAdapter::TimeOfDay, DataType::Time32(_) | DataType::Time64(_)) => scalar(
                ids::TIME_OF_DAY_CODEC,
                "chrono::naive::time::NaiveTime",
                "Int64",
                "ns",
                None,
            ),
            (TimeAdapter::Duration, DataType::Duration(_)) => scalar(
                ids::DURATION_CODEC,
                "chrono::time_delta::TimeDelta",
                "Int64",
                "ns",
                None,
            ),
            _ => return None,
        })
    }

    fn to_stored(
        &self,
        arr: &dyn Array,
        row: &dyn Fn(usize) -> String,
    ) -> Result<Option<ArrayRef>> {
        Ok(Some(match (self, arr.data_type()) {
            (TimeAdapter::Instant, DataType::Timestamp(u, _)) => {
                let m = per_unit(u);
                match u {
                    TimeUnit::Second => scale::<TimestampSecondType>(arr, m, row)?,
                    TimeUnit::Millisecond => scale::<TimestampMillisecondType>(arr, m, row)?,
                    TimeUnit::Microsecond => scale::<TimestampMicrosecondType>(arr, m, row)?,
                    TimeUnit::Nanosecond => scale::<TimestampNanosecondType>(arr, m, row)?,
                }
            }
            (TimeAdapter::Duration, DataType::Duration(u)) => {
                let m = per_unit(u);
                match u {
                    TimeUnit::Second => scale::<DurationSecondType>(arr, m, row)?,
                    TimeUnit::Millisecond => scale::<DurationMillisecondType>(arr, m, row)?,
                    TimeUnit::Microsecond => scale::<DurationMicrosecondType>(arr, m, row)?,
                    TimeUnit::Nanosecond => scale::<DurationNanosecondType>(arr, m, row)?,
                }
            }
            (TimeAdapter::TimeOfDay, DataType::Time64(_) | DataType::Time32(_)) => {
                let ns = match arr.data_type() {
                    DataType::Time64(TimeUnit::Microsecond) => {
                        scale::<Time64MicrosecondType>(arr, 1_000, row)?
                    }
                    DataType::Time32(TimeUnit::Millisecond) => {
                        scale::<Time32MillisecondType>(arr, 1_000_000, row)?
                    }
                    DataType::Time32(TimeUnit::Second) => {
                        scale::<Time32SecondType>(arr, 1_000_000_000, row)?
                    }
                    _ => scale::<Time64NanosecondType>(arr, 1, row)?,
                };
                // What a typed load refuses is refused here too.
                let v = ns.as_primitive::<arrow_array::types::Int64Type>();
                for (i, &x) in v.values().iter().enumerate() {
                    if v.is_valid(i) {
                        check_time_of_day(x).map_err(|msg| Error::encode(row(i), msg))?;
                    }
                }
                ns
            }
            (TimeAdapter::Date, DataType::Date32) => {
                let a = arr.as_primitive::<Date32Type>();
                Arc::new(Int32Array::new(a.values().clone(), a.nulls().cloned()))
            }
            _ => return Ok(None),
        }))
    }
}

fn time_of_day(ns: i64) -> std::result::Result<(), String> {
    check_time_of_day(ns).map(|_| ())
}

/// Nanoseconds per unit.
fn per_unit(u: &TimeUnit) -> i64 {
    match u {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// The values of a temporal array of `T` times `m`, as Int64; a product
/// past Int64 (outside a null) is an error naming the row and the value.
fn scale<T: ArrowPrimitiveType>(
    arr: &dyn Array,
    m: i64,
    row: &dyn Fn(usize) -> String,
) -> Result<ArrayRef>
where
    T::Native: Into<i64>,
{
    let a = arr.as_primitive::<T>();
    let nulls = a.nulls();
    let mut out = Vec::with_capacity(a.len());
    for (i, &v) in a.values().iter().enumerate() {
        let v: i64 = v.into();
        match v.checked_mul(m) {
            Some(ns) => out.push(ns),
            None if nulls.is_some_and(|n| n.is_null(i)) => out.push(0),
            None => {
                return Err(Error::encode(
                    row(i),
                    format!(
                        "{v} {} is outside Int64 nanoseconds (about +-292 years around 1970)",
                        arr.data_type()
                    ),
                ))
            }
        }
    }
    Ok(Arc::new(Int64Array::new(
        ScalarBuffer::from(out),
        nulls.cloned(),
    )))
}
