//! `Retyped`: the reader of plain numbers handed out as another Arrow type
//! of the same width, which the time adapters (timestamps, dates, times of
//! day, durations) and the f16 adapter read their columns with.

use std::ops::Range;

use arrow_array::{make_array, ArrayRef};
use arrow_buffer::{Buffer, NullBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::DataType;

use crate::column::PodReader;
use crate::error::{Error, Result};
use crate::raw::Pod;

use super::nodes::{arrow_err, check_nulls, length, Node};

/// Plain numbers given another Arrow type of the same width (timestamps,
/// dates, times, durations, Float16); `check` refuses values that are not
/// valid (a time of day outside the day).
pub(crate) struct Retyped<R: Pod> {
    pub(crate) col: PodReader<R>,
    pub(crate) ty: DataType,
    pub(crate) check: Option<fn(i64) -> std::result::Result<(), String>>,
}

/// The native bytes of the numbers, for Arrow's buffer.
pub(crate) trait Native: Pod {
    fn buffer(v: Vec<Self>) -> Buffer;
    fn as_i64(self) -> i64;
}
impl Native for i64 {
    fn buffer(v: Vec<i64>) -> Buffer {
        Buffer::from_vec(v)
    }
    fn as_i64(self) -> i64 {
        self
    }
}
impl Native for i32 {
    fn buffer(v: Vec<i32>) -> Buffer {
        Buffer::from_vec(v)
    }
    fn as_i64(self) -> i64 {
        self.into()
    }
}

impl<R: Native> Node for Retyped<R> {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.col.place().clone();
        let n = length(&rows, &at)?;
        check_nulls(nulls.as_ref(), n, &at)?;
        let mut v = Vec::new();
        self.col.read_into(rows.start, n as u64, &mut v)?;
        if v.len() != n {
            return Err(crate::codec::exhausted(&at));
        }
        if let Some(check) = self.check {
            for (i, x) in v.iter().enumerate() {
                if let Err(msg) = check(x.as_i64()) {
                    return Err(Error::invalid(
                        self.col.element(rows.start + i as u64),
                        format!("{msg} in {at}"),
                    ));
                }
            }
        }
        let data = ArrayDataBuilder::new(self.ty.clone())
            .len(n)
            .nulls(nulls)
            .add_buffer(R::buffer(v))
            .build()
            .map_err(arrow_err(&at))?;
        Ok(make_array(data))
    }
}
