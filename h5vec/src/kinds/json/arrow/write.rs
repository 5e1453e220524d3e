//! The `json` kind's Arrow writer: Arrow strings that are JSON documents
//! (checked, not parsed into values) into a JSON column, variable-length
//! or VLS as the node says, created and opened by `JsonCodec`; a row under
//! an enclosing null gets the typed encoder's placeholder (SPEC.md
//! sections 3.1, 4.1 and 11).

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::arrow::write::col::{bad_key, hole, null_value, wrong_array, At, Texts};
use crate::codec::{Codec, Encoder};
use crate::error::{Error, Result};
use crate::kinds::json::{JsonCodec, JsonEncoder};
use crate::kinds::string::arrow::write::with_vls;
use crate::options::WriteCtx;
use crate::schema::Stored;

/// JSON columns are written from text already encoded: the codec's value
/// type is never serialized here.
type Any = serde_json::Value;

/// A JSON column's writer.
pub(crate) type JsonCol = JsonEncoder<Any>;

/// Creates a JSON field in its data group `group`, VLS if `vls`.
pub(crate) fn create_json(
    group: &Group,
    path: &str,
    vls: bool,
    ctx: &WriteCtx<'_>,
) -> Result<JsonCol> {
    with_vls(ctx, vls, |c| JsonCodec::<Any>::create(group, path, c))
}

/// Opens JSON field `node` of `count` rows in `group` for appending.
pub(crate) fn append_json(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    ctx: &WriteCtx<'_>,
) -> Result<JsonCol> {
    JsonCodec::<Any>::append(group, node, path, count, ctx)
}

/// Buffers JSON text; a null is an error unless an enclosing null covers it.
pub(crate) fn write_json(
    e: &mut JsonCol,
    arr: &dyn Array,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
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

/// Writes what is buffered.
pub(crate) fn flush_json(e: &mut JsonCol) -> Result<()> {
    Encoder::<Any>::flush(e)
}
