//! The `string` kind's Arrow reader (SPEC.md section 11): a scalar
//! `String` (HDF5 variable-length strings) as `LargeUtf8`, UTF-8 checked;
//! with `HDF5Vectors.JSONCodec`, the same column (the `arrow.json`
//! extension) whose rows must be JSON text.

use std::ops::Range;

use arrow_array::ArrayRef;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::arrow::read::nodes::{check_nulls, ends_to_offsets, length, utf8_array, BoxNode, Node};
use crate::error::{Error, Place, Result};
use crate::kinds::string::VlenStrDecoder;
use crate::schema::{ids, Kind, Schema, Stored};

/// Opens the scalar `String` (or JSON text) node whose data group is
/// `group`, `count` rows at least, read as `LargeUtf8`.
pub(crate) fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<BoxNode> {
    let mut want = Schema::new(Kind::Scalar, ids::SCALAR, &node.codec, "").encoded("String");
    if node.codec != ids::JSON {
        want.codec = ids::IDENTITY.into();
    }
    Ok(Box::new(VlenStrs {
        dec: VlenStrDecoder::open_with(group, node, path, count, &want)?,
        at: Place::new(path, group.name()),
        json: node.codec == ids::JSON,
    }))
}

/// HDF5 variable-length strings (`String`, JSON text); with `json`, every
/// row read that is not null must be JSON (the `arrow.json` extension's
/// promise, and what a typed load checks by parsing it).
struct VlenStrs {
    dec: VlenStrDecoder,
    at: Place,
    json: bool,
}

impl Node for VlenStrs {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let n = length(&rows, &self.at)?;
        let mut values = Vec::new();
        let mut ends = Vec::new();
        crate::limits::reserve(&mut ends, n as u64, &self.at)?;
        self.dec.read_bytes(rows.clone(), &mut values, &mut ends)?;
        if self.json {
            check_nulls(nulls.as_ref(), ends.len(), &self.at)?;
            let mut a = 0;
            for (i, &b) in ends.iter().enumerate() {
                let valid = nulls.as_ref().is_none_or(|nb| nb.is_valid(i));
                let text = values.get(a..b).unwrap_or_default();
                if valid {
                    serde_json::from_slice::<serde::de::IgnoredAny>(text).map_err(|e| {
                        Error::invalid(
                            self.at.element(rows.start + i as u64),
                            format!("bad JSON: {e}"),
                        )
                    })?;
                }
                a = b;
            }
        }
        let offsets = ends_to_offsets(&ends, &self.at)?;
        let at = self.at.clone();
        // Every row was checked as UTF-8 when read.
        utf8_array(offsets, values, nulls, &self.at, |i| {
            Error::invalid(
                at.element(rows.start + i as u64),
                "string is not valid UTF-8",
            )
        })
    }
}
