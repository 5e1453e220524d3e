//! UUIDs without the Rust type (SPEC.md section 11): a node of
//! `h5vec.UuidCodec` is Arrow's `FixedSizeBinary(16)` with the `arrow.uuid`
//! extension, read straight from the `(Z, 16)` bytes and written back as
//! them.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray, FixedSizeListArray, UInt8Array};
use arrow_buffer::{Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use hdf5::Group;

use crate::arrow::read::nodes::{arrow_err, check_nulls, leaf_column, length, BoxNode, Node};
use crate::column::PodReader;
use crate::error::{Error, Result};
use crate::kinds::adapters::ArrowAdapter;
use crate::schema::{ids, Kind, Schema, Stored};

/// The UUID adapter.
pub(crate) struct Uuid;

/// The one value of [`Uuid`], as registered.
pub(crate) static UUID: Uuid = Uuid;

impl ArrowAdapter for Uuid {
    fn kind(&self) -> Kind {
        Kind::Dense
    }

    fn codec(&self) -> &'static str {
        ids::UUID_CODEC
    }

    fn arrow_type(&self, node: &Schema, path: &str) -> Result<DataType> {
        let enc = node.encoded_type.as_deref().unwrap_or("");
        if enc == "UInt8" && node.dimensions.as_deref() == Some(&[16]) {
            return Ok(DataType::FixedSizeBinary(16));
        }
        Err(Error::mismatch(
            path,
            "a UUID of UInt8 dimensions [16]",
            format!("`{enc}` dimensions {:?}", node.dimensions),
        ))
    }

    fn annotate(&self, field: Field, path: &str) -> Result<Field> {
        let mut field = field;
        field
            .try_with_extension_type(arrow_schema::extension::Uuid)
            .map_err(|e| Error::invalid(path, format!("the arrow.uuid extension: {e}")))?;
        Ok(field)
    }

    fn reads(&self, ty: &DataType) -> bool {
        *ty == DataType::FixedSizeBinary(16)
    }

    fn open_reader(
        &self,
        group: &Group,
        member: Option<&str>,
        node: &Stored,
        path: &str,
        count: u64,
        _ty: &DataType,
    ) -> Result<BoxNode> {
        Ok(Box::new(Uuids {
            col: leaf_column::<u8>(group, member, node, path, count, &[16])?,
        }))
    }

    fn default_node(&self, field: &Field) -> Option<Schema> {
        if *field.data_type() != DataType::FixedSizeBinary(16)
            || field.extension_type_name() != Some("arrow.uuid")
        {
            return None;
        }
        let mut s =
            Schema::new(Kind::Dense, ids::DENSE, ids::UUID_CODEC, "uuid::Uuid").encoded("UInt8");
        s.dimensions = Some(vec![16]);
        Some(s)
    }

    fn to_stored(
        &self,
        arr: &dyn Array,
        row: &dyn Fn(usize) -> String,
    ) -> Result<Option<ArrayRef>> {
        if *arr.data_type() != DataType::FixedSizeBinary(16) {
            return Ok(None);
        }
        let a = arr.as_fixed_size_binary();
        let bytes = UInt8Array::new(
            ScalarBuffer::new(a.values().clone(), 0, a.values().len()),
            None,
        );
        let item = Arc::new(Field::new("item", DataType::UInt8, false));
        Ok(Some(Arc::new(
            FixedSizeListArray::try_new(item, 16, Arc::new(bytes), a.nulls().cloned())
                .map_err(|e| Error::invalid(row(0), format!("UUID bytes: {e}")))?,
        )))
    }
}

/// UUIDs: 16 bytes per row as `FixedSizeBinary(16)`.
struct Uuids {
    col: PodReader<u8>,
}

impl Node for Uuids {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.col.place().clone();
        let n = length(&rows, &at)?;
        check_nulls(nulls.as_ref(), n, &at)?;
        let mut v = Vec::new();
        self.col.read_into(rows.start, n as u64, &mut v)?;
        if Some(v.len()) != n.checked_mul(16) {
            return Err(crate::codec::exhausted(&at));
        }
        let arr = FixedSizeBinaryArray::try_new(16, Buffer::from_vec(v), nulls)
            .map_err(arrow_err(&at))?;
        Ok(Arc::new(arr))
    }
}
