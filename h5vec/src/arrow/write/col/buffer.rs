//! `Col::write` and `Col::flush`: the values of an Arrow array into an
//! encoder's buffers (placeholders under enclosing nulls), and the buffers
//! to their datasets in the typed encoders' order, each by its kind's
//! writer.

use arrow_array::Array;
use arrow_buffer::NullBuffer;

use crate::codec::Encoder;
use crate::error::Result;

use crate::kinds::blob::arrow::write::{flush_blob, write_blob};
use crate::kinds::json::arrow::write::{flush_json, write_json};
use crate::kinds::list::arrow::write::write_strings;
use crate::kinds::nullable::arrow::write::{flush_masked, write_masked};
use crate::kinds::string::arrow::write::write_str;
use crate::kinds::vls::arrow::write::write_opt_vls;

use super::arrays::At;
use super::Col;

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
            Col::OptVls(e) => write_opt_vls(e, arr, holes, at),
            Col::Json(e) => write_json(e, arr, holes, at),
            Col::Blob(e) => write_blob(e, arr, holes, at),
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
            Col::Json(e) => flush_json(e),
            Col::Blob(e) => flush_blob(e),
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
