//! The `blob` kind's Arrow writer: Arrow binary values (any binary type)
//! as the blob's encoded bytes, created and opened by `BlobCodec`; a row
//! under an enclosing null gets the typed encoder's placeholder (SPEC.md
//! sections 3.5 and 11).

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::arrow::write::col::{hole, null_value, wrong_array, At, Bytes};
use crate::codec::{Codec, Encoder};
use crate::error::Result;
use crate::kinds::blob::{BlobCodec, BlobEncoder};
use crate::options::WriteCtx;
use crate::schema::Stored;

/// Blob columns are written from bytes already encoded: the codec's value
/// type is never serialized here.
type Any = serde_json::Value;

/// A blob column's writer.
pub(crate) type BlobCol = BlobEncoder<Any>;

/// Creates a blob field in its data group `group`.
pub(crate) fn create_blob(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<BlobCol> {
    BlobCodec::<Any>::create(group, path, ctx)
}

/// Opens blob field `node` of `count` rows in `group` for appending.
pub(crate) fn append_blob(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    ctx: &WriteCtx<'_>,
) -> Result<BlobCol> {
    BlobCodec::<Any>::append(group, node, path, count, ctx)
}

/// Buffers blobs; a null is an error unless an enclosing null covers it.
pub(crate) fn write_blob(
    e: &mut BlobCol,
    arr: &dyn Array,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
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

/// Writes what is buffered.
pub(crate) fn flush_blob(e: &mut BlobCol) -> Result<()> {
    Encoder::<Any>::flush(e)
}
