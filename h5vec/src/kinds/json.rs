//! JSON scalar: any serde type as compact JSON text (`#[h5vec(json)]`).
//!
//! Layout on disk:
//! ```text
//! <field>/values    1-D variable-length UTF-8 strings, one compact JSON document each
//! ```
//! Schema: kind `scalar`, codec `HDF5Vectors.JSONCodec`, encoded type `String`.

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::codec::{Codec, Decoder, Encoder};
use crate::column::StrWriter;
use crate::error::{Error, Result};
use crate::kinds::scalar::scalar_schema;
use crate::kinds::string::VlenStrDecoder;
use crate::options::WriteCtx;
use crate::schema::{ids, Schema, Stored};

/// Stores `T` as compact JSON strings.
pub struct JsonCodec<T>(PhantomData<T>);

/// Writes JSON strings.
pub struct JsonEncoder<T> {
    col: StrWriter,
    text: String,
    path: String,
    _t: PhantomData<T>,
}

/// Reads JSON strings.
pub struct JsonDecoder<T> {
    col: VlenStrDecoder,
    next_row: u64,
    path: String,
    _t: PhantomData<T>,
}

impl<T: Serialize + DeserializeOwned + 'static> Codec for JsonCodec<T> {
    type Value = T;
    type Encoder = JsonEncoder<T>;
    type Decoder = JsonDecoder<T>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        scalar_schema::<T>(ids::JSON, "String")
    }
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        Ok(JsonEncoder {
            col: StrWriter::create(group, "values", path, ctx)?,
            text: String::new(),
            path: path.to_owned(),
            _t: PhantomData,
        })
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let ds = group.dataset("values").map_err(|e| Error::hdf5(path, e))?;
        Self::open(group, node, path, count)?;
        crate::limits::check_append_chunk(&ds, path)?;
        Ok(JsonEncoder {
            col: StrWriter::resume(ds, count, path)?,
            text: String::new(),
            path: path.to_owned(),
            _t: PhantomData,
        })
    }
    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self::Decoder> {
        Ok(JsonDecoder {
            col: VlenStrDecoder::open_with(
                group,
                node,
                path,
                count,
                &scalar_schema::<T>(ids::JSON, "String"),
            )?,
            next_row: 0,
            path: path.to_owned(),
            _t: PhantomData,
        })
    }
}

impl<T> JsonEncoder<T> {
    /// Buffers one JSON document as it is (text already encoded).
    #[cfg(feature = "arrow")]
    pub(crate) fn push_text(&mut self, text: &str) -> Result<()> {
        self.col.push(text)
    }
}

impl<T: Serialize> Encoder<T> for JsonEncoder<T> {
    fn push(&mut self, value: &T) -> Result<()> {
        self.text.clear();
        let row = self.col.next_row();
        let text = serde_json::to_string(value)
            .map_err(|e| Error::encode(format!("{}[{row}]", self.path), e))?;
        self.text = text;
        self.col.push(&self.text)
    }
    fn push_null(&mut self) -> Result<()> {
        self.col.push("null")
    }
    fn flush(&mut self) -> Result<()> {
        self.col.flush()
    }
}

impl<T: DeserializeOwned> Decoder<T> for JsonDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.next_row = rows.start;
        self.col.load(rows)
    }
    fn next(&mut self) -> Result<T> {
        let s = self.col.next_value()?;
        let row = self.next_row;
        self.next_row += 1;
        serde_json::from_str(&s)
            .map_err(|e| Error::invalid(format!("{}[{row}]", self.path), format!("bad JSON: {e}")))
    }
    fn skip(&mut self) -> Result<()> {
        self.next_row += 1;
        self.col.skip()
    }
}
