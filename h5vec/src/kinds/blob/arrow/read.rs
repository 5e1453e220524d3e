//! The `blob` kind's Arrow reader (SPEC.md section 11): each row's encoded
//! bytes as one `LargeBinary` value, not decoded.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, LargeBinaryArray};
use arrow_buffer::{Buffer, NullBuffer};
use hdf5::Group;

use crate::arrow::read::nodes::{arrow_err, ends_to_offsets, offset_buffer, BoxNode, Node};
use crate::codec::{Codec, Decoder};
use crate::error::{Place, Result};
use crate::kinds::blob::{BlobCodec, BlobDecoder};
use crate::schema::Stored;

/// Opens the blob node whose data group is `group`, `count` rows at least.
pub(crate) fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<BoxNode> {
    Ok(Box::new(Blob {
        dec: <BlobCodec<()> as Codec>::open(group, node, path, count)?,
        at: Place::new(path, group.name()),
    }))
}

/// Blob bytes, one `LargeBinary` value per row (not decoded).
struct Blob {
    dec: BlobDecoder<()>,
    at: Place,
}

impl Node for Blob {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        Decoder::<()>::load(&mut self.dec, rows)?;
        let (buf, ends) = self.dec.take_loaded();
        let offs = offset_buffer(ends_to_offsets(&ends, &self.at)?, &self.at)?;
        let arr = LargeBinaryArray::try_new(offs, Buffer::from_vec(buf), nulls)
            .map_err(arrow_err(&self.at))?;
        Ok(Arc::new(arr))
    }
}
