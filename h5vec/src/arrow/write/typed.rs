//! Arrow arrays of the types of SPEC.md sections 4.5 to 4.7 as the arrays
//! the column writers take (SPEC.md section 11): instants, times and
//! durations of any unit as Int64 nanoseconds (the multiplication checked:
//! a value past Int64 nanoseconds is an error naming the row), dates as
//! their Int32 days, maps as a `LargeList` of their entries. The nodes these
//! land in come from the same mapping; only the values change form here.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType,
    DurationSecondType, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, Int32Array, Int64Array, LargeListArray};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, TimeUnit};

use crate::error::{Error, Result};
use crate::kinds::adapters;
use crate::kinds::adapters::time::check_time_of_day;
use crate::schema::{ids, Kind, Schema};

/// Nanoseconds per unit.
fn per_unit(u: &TimeUnit) -> i64 {
    match u {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// `arr` in the form the column writers take, or `None` if it already is.
/// `row(i)` names row `i` in errors.
pub(super) fn normalize(
    arr: &dyn Array,
    row: impl Fn(usize) -> String,
) -> Result<Option<ArrayRef>> {
    for adapter in adapters::ARROW_ADAPTERS {
        if let Some(stored) = adapter.to_stored(arr, &row)? {
            return Ok(Some(stored));
        }
    }
    Ok(Some(match arr.data_type() {
        DataType::Timestamp(u, _) => {
            let m = per_unit(u);
            match u {
                TimeUnit::Second => scale::<TimestampSecondType>(arr, m, &row)?,
                TimeUnit::Millisecond => scale::<TimestampMillisecondType>(arr, m, &row)?,
                TimeUnit::Microsecond => scale::<TimestampMicrosecondType>(arr, m, &row)?,
                TimeUnit::Nanosecond => scale::<TimestampNanosecondType>(arr, m, &row)?,
            }
        }
        DataType::Duration(u) => {
            let m = per_unit(u);
            match u {
                TimeUnit::Second => scale::<DurationSecondType>(arr, m, &row)?,
                TimeUnit::Millisecond => scale::<DurationMillisecondType>(arr, m, &row)?,
                TimeUnit::Microsecond => scale::<DurationMicrosecondType>(arr, m, &row)?,
                TimeUnit::Nanosecond => scale::<DurationNanosecondType>(arr, m, &row)?,
            }
        }
        DataType::Time64(_) | DataType::Time32(_) => {
            let ns = match arr.data_type() {
                DataType::Time64(TimeUnit::Microsecond) => {
                    scale::<Time64MicrosecondType>(arr, 1_000, &row)?
                }
                DataType::Time32(TimeUnit::Millisecond) => {
                    scale::<Time32MillisecondType>(arr, 1_000_000, &row)?
                }
                DataType::Time32(TimeUnit::Second) => {
                    scale::<Time32SecondType>(arr, 1_000_000_000, &row)?
                }
                _ => scale::<Time64NanosecondType>(arr, 1, &row)?,
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
        DataType::Date32 => {
            let a = arr.as_primitive::<Date32Type>();
            Arc::new(Int32Array::new(a.values().clone(), a.nulls().cloned()))
        }
        DataType::Map(entries, _) => {
            let m = arr.as_map();
            let offs: Vec<i64> = m.value_offsets().iter().map(|&o| i64::from(o)).collect();
            Arc::new(
                LargeListArray::try_new(
                    entries.clone(),
                    OffsetBuffer::new(ScalarBuffer::from(offs)),
                    Arc::new(m.entries().clone()),
                    m.nulls().cloned(),
                )
                .map_err(|e| Error::invalid(row(0), format!("map entries: {e}")))?,
            )
        }
        _ => return Ok(None),
    }))
}

/// The values of a temporal array of `T` times `m`, as Int64; a product
/// past Int64 (outside a null) is an error naming the row and the value.
fn scale<T: ArrowPrimitiveType>(
    arr: &dyn Array,
    m: i64,
    row: &impl Fn(usize) -> String,
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

/// The node a field of these types gets without `h5vec.schema` metadata
/// (SPEC.md section 11): what a typed save of the matching Rust type
/// writes. `None` for other fields. `node_of` gives a map's key and value
/// nodes, as record fields.
pub(super) fn default_node(
    field: &Field,
    path: &str,
    node_of: impl Fn(&Field, &str) -> Result<Schema>,
) -> Result<Option<Schema>> {
    let scalar = |codec: &str, logical: &str, enc: &str, unit: &str, zone: Option<&str>| {
        let mut s = Schema::new(Kind::Scalar, ids::SCALAR, codec, logical).encoded(enc);
        s.time_unit = Some(unit.to_owned());
        s.time_zone = zone.map(str::to_owned);
        s
    };
    if let Some(node) = adapters::writing(field) {
        return Ok(Some(node));
    }
    Ok(Some(match field.data_type() {
        DataType::Timestamp(_, Some(tz)) => scalar(
            ids::INSTANT_CODEC,
            "std::time::SystemTime",
            "Int64",
            "ns",
            Some(tz),
        ),
        DataType::Timestamp(_, None) => scalar(
            ids::INSTANT_CODEC,
            "chrono::naive::datetime::NaiveDateTime",
            "Int64",
            "ns",
            None,
        ),
        DataType::Float16 => Schema::new(
            Kind::Scalar,
            ids::SCALAR,
            ids::IDENTITY,
            "half::binary16::f16",
        )
        .encoded("Float16"),
        DataType::Date32 => scalar(
            ids::DATE_CODEC,
            "chrono::naive::date::NaiveDate",
            "Int32",
            "d",
            None,
        ),
        DataType::Time32(_) | DataType::Time64(_) => scalar(
            ids::TIME_OF_DAY_CODEC,
            "chrono::naive::time::NaiveTime",
            "Int64",
            "ns",
            None,
        ),
        DataType::Duration(_) => scalar(
            ids::DURATION_CODEC,
            "chrono::time_delta::TimeDelta",
            "Int64",
            "ns",
            None,
        ),
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::mismatch(
                    path,
                    "map entries of a struct",
                    entries.data_type(),
                ));
            };
            if kv.len() != 2 {
                return Err(Error::mismatch(
                    path,
                    "map entries of two fields (key, value)",
                    kv.len(),
                ));
            }
            let ipath = format!("{path}[]");
            let key = node_of(&kv[0], &format!("{ipath}.key"))?;
            let value = node_of(&kv[1], &format!("{ipath}.value"))?;
            let mut entry = Schema::new(
                Kind::Record,
                ids::RECORD,
                ids::STRUCT,
                &format!("({}, {})", key.logical_type, value.logical_type),
            );
            entry.field_names = Some(vec!["key".into(), "value".into()]);
            let logical = format!(
                "std::collections::hash::map::HashMap<{}, {}>",
                key.logical_type, value.logical_type
            );
            entry.children = vec![key, value];
            let mut s = Schema::new(Kind::List, ids::LIST, ids::MAP_CODEC, &logical);
            s.children.push(entry);
            s
        }
        _ => return Ok(None),
    }))
}

/// The real and imaginary parts of a complex column.
type Parts<'a, T> = (
    &'a [<T as ArrowPrimitiveType>::Native],
    &'a [<T as ArrowPrimitiveType>::Native],
);

/// The `r` and `i` values of complex numbers given as `Struct { r, i }`
/// of `T` without nulls in either part; `None` for any other array.
pub(super) fn complex_parts<T: ArrowPrimitiveType>(arr: &dyn Array) -> Option<Parts<'_, T>> {
    let s = arr.as_struct_opt()?;
    if s.num_columns() != 2 || s.column_names() != ["r", "i"] {
        return None;
    }
    let r = s.column(0).as_primitive_opt::<T>()?;
    let i = s.column(1).as_primitive_opt::<T>()?;
    if r.null_count() > 0 || i.null_count() > 0 || r.len() != s.len() || i.len() != s.len() {
        return None;
    }
    Some((r.values(), i.values()))
}
