//! `Col::write` and `Col::flush`: the values of an Arrow array into an
//! encoder's buffers (placeholders under enclosing nulls), and the buffers
//! to their datasets in the typed encoders' order.

use arrow_array::Array;
use arrow_buffer::NullBuffer;

use crate::codec::Encoder;
use crate::error::{Error, Result};

use super::arrays::{bad_key, hole, null_value, wrong_array, At, Bytes, Texts};
use super::{Any, Col};
use crate::kinds::list::arrow::write::write_strings;
use crate::kinds::nullable::arrow::write::{flush_masked, write_masked};
use crate::kinds::string::arrow::write::write_str;

impl Col {
    /// Buffers the values of `arr`; rows null in `holes` (an enclosing
    /// null) get the placeholders the typed encoders write for them.
    pub(crate) fn write(
        &mut self,
        arr: &dyn Array,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        // Times, adapters' types and maps in the form the writers below take.
        let normal = super::typed::normalize(arr, |i| at.row(i))?;
        let arr: &dyn Array = normal.as_deref().unwrap_or(arr);
        match self {
            Col::Values(v) => v.write(arr, holes, at),
            Col::Str(e) => write_str(e, arr, holes, at),
            Col::OptVls(e) => {
                let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "strings", arr))?;
                let nulls = arr.logical_nulls();
                for i in 0..arr.len() {
                    if hole(holes, i) || nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        e.push_missing()?;
                    } else {
                        e.push(texts.get(i).ok_or_else(|| bad_key(at, i))?)?;
                    }
                }
                Ok(())
            }
            Col::Json(e) => {
                let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "JSON text", arr))?;
                let nulls = arr.logical_nulls();
                for i in 0..arr.len() {
                    if hole(holes, i) {
                        Encoder::<Any>::push_null(e)?;
                    } else if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        return Err(null_value(at, i));
                    } else {
                        let s = texts.get(i).ok_or_else(|| bad_key(at, i))?;
                        // The typed encoder writes only JSON; a typed load parses it.
                        serde_json::from_str::<serde::de::IgnoredAny>(s)
                            .map_err(|err| Error::encode(at.row(i), format!("not JSON: {err}")))?;
                        e.push_text(s)?;
                    }
                }
                Ok(())
            }
            Col::Blob(e) => {
                let bytes = Bytes::of(arr).ok_or_else(|| wrong_array(at, "a blob", arr))?;
                let nulls = arr.logical_nulls();
                for i in 0..arr.len() {
                    if hole(holes, i) {
                        Encoder::<Any>::push_null(e)?;
                    } else if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        return Err(null_value(at, i));
                    } else {
                        e.push_encoded(bytes.get(i));
                    }
                }
                Ok(())
            }
            Col::Constant => Ok(()),
            Col::Union(u) => u.write(arr, holes, at),
            Col::Labels(l) => l.write(arr, holes, at),
            Col::Record(r) => r.write(arr, holes, at),
            Col::List(l) => l.write(arr, holes, at),
            Col::Masked(m) => write_masked(m, arr, holes, at),
            Col::Fill(f) => f.write(arr, holes, at),
            Col::StrValues(e) => write_strings(e, arr, holes, at),
        }
    }

    /// Writes everything buffered, in the typed encoders' order: fields in
    /// order, values before OFFSETS and before masks (SPEC.md section 8).
    pub(crate) fn flush(&mut self) -> Result<()> {
        match self {
            Col::Values(v) => v.flush(),
            Col::Str(e) => Encoder::<String>::flush(e),
            Col::OptVls(e) => e.flush(),
            Col::Json(e) => Encoder::<Any>::flush(e),
            Col::Blob(e) => Encoder::<Any>::flush(e),
            Col::Constant => Ok(()),
            Col::Record(r) => r.flush(),
            Col::List(l) => l.flush(),
            Col::Masked(m) => flush_masked(m),
            Col::Fill(f) => f.flush(),
            Col::StrValues(e) => Encoder::<String>::flush(e),
            Col::Union(u) => u.flush(),
            Col::Labels(l) => l.inner.flush(),
        }
    }
}
