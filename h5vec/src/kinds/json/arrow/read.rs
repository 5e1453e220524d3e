//! The `json` kind's Arrow reader (SPEC.md section 11): JSON text in the
//! VLS layout (section 4.1) as `LargeUtf8` with the `arrow.json`
//! extension, read by the `vls_string` kind's reader on the typed load's
//! checks; a row that is not JSON is an error. JSON text in the scalar
//! `String` layout is read by the `string` kind's reader.

use hdf5::Group;

use crate::arrow::read::nodes::BoxNode;
use crate::codec::Codec;
use crate::error::{Error, Result};
use crate::kinds::json::JsonCodec;
use crate::kinds::vls::arrow::read::Vls;
use crate::schema::Stored;

/// Opens the `vls_string` node with `HDF5Vectors.JSONCodec` whose data
/// group is `group`, `count` rows at least.
pub(crate) fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<BoxNode> {
    // JSON text in the VLS layout (SPEC.md section 4.1): checked as the
    // typed load checks it.
    let dec = <JsonCodec<serde_json::Value> as Codec>::open(group, node, path, count)?
        .into_vls()
        .ok_or_else(|| Error::mismatch(path, "a vls_string node", "another layout"))?;
    Ok(Box::new(Vls {
        dec,
        nullable: false,
        ptrs: Vec::new(),
        json: true,
    }))
}
