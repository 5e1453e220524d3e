//! JSON text: any serde type as compact JSON text (`#[h5vec(json)]`).
//!
//! Layout on disk, as HDF5Vectors.jl writes it (the default, and whenever
//! `SaveOptions::get_vls_strings` is false):
//! ```text
//! <field>/values    1-D variable-length UTF-8 strings, one compact JSON document each
//! ```
//! Schema: kind `scalar`, codec `HDF5Vectors.JSONCodec`, encoded type `String`.
//!
//! With compression (SPEC.md sections 4.1 and 6), the compressed VLS layout
//! of [`super::vls`], every byte in chunked datasets:
//! ```text
//! <field>/heap       1-D uint8, the JSON documents back to back
//! <field>/pointers   1-D compound {offset: uint64, length: uint64}, one per row
//! ```
//! Schema: kind `vls_string`, codec `HDF5Vectors.JSONCodec`, encoded type
//! `String`, one child (the scalar `String` node). Loads read both.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::codec::{expect_members, Codec, Decoder, Encoder};
use crate::column::StrWriter;
use crate::error::{Error, Result};
use crate::evolution::LoadFlags;
use crate::kinds::scalar::scalar_schema;
use crate::kinds::string::{StringDecoder, StringEncoder, VlenStrDecoder};
use crate::kinds::vls::{vls_node, VlsDecoder, VlsEncoder};
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

/// Stores `T` as compact JSON strings.
pub struct JsonCodec<T>(PhantomData<T>);

/// Writes JSON strings.
pub struct JsonEncoder<T> {
    col: StringEncoder,
    text: String,
    path: String,
    _t: PhantomData<T>,
}

/// Reads JSON strings.
pub struct JsonDecoder<T> {
    col: StringDecoder,
    next_row: u64,
    path: String,
    _t: PhantomData<T>,
}

/// The schema node of JSON text in the compressed VLS layout.
pub(crate) fn json_vls_schema<T>() -> Schema {
    vls_node(ids::JSON, std::any::type_name::<T>())
}

impl<T: Serialize + DeserializeOwned + 'static> Codec for JsonCodec<T> {
    type Value = T;
    type Encoder = JsonEncoder<T>;
    type Decoder = JsonDecoder<T>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        if ctx.opts.get_vls_strings() {
            json_vls_schema::<T>()
        } else {
            scalar_schema::<T>(ids::JSON, "String")
        }
    }
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let col = if ctx.opts.get_vls_strings() {
            StringEncoder::Vls(Box::new(VlsEncoder::create(group, path, ctx)?))
        } else {
            StringEncoder::Scalar(StrWriter::create(group, "values", path, ctx)?)
        };
        Ok(JsonEncoder::new(col, path))
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let col = match Self::open(group, node, path, count)?.col {
            StringDecoder::Vls(dec) => {
                StringEncoder::Vls(Box::new(VlsEncoder::resume(*dec, count, ctx)?))
            }
            StringDecoder::Scalar(_) => {
                let ds = group.dataset("values").map_err(|e| Error::hdf5(path, e))?;
                crate::limits::check_append_chunk(&ds, path)?;
                StringEncoder::Scalar(StrWriter::resume(ds, count, path)?)
            }
        };
        Ok(JsonEncoder::new(col, path))
    }
    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        _load: LoadFlags,
    ) -> Result<Self::Decoder> {
        let col = if node.kind == Kind::VlsString {
            node.expect(&json_vls_schema::<T>(), path)?;
            expect_members(group, &["heap", "pointers"], node, path)?;
            StringDecoder::Vls(Box::new(VlsDecoder::open_datasets(group, path, count)?))
        } else {
            StringDecoder::Scalar(VlenStrDecoder::open_with(
                group,
                node,
                path,
                count,
                &scalar_schema::<T>(ids::JSON, "String"),
            )?)
        };
        Ok(JsonDecoder {
            col,
            next_row: 0,
            path: path.to_owned(),
            _t: PhantomData,
        })
    }
}

impl<T> JsonEncoder<T> {
    fn new(col: StringEncoder, path: &str) -> Self {
        JsonEncoder {
            col,
            text: String::new(),
            path: path.to_owned(),
            _t: PhantomData,
        }
    }
}

impl<T> JsonDecoder<T> {
    /// The VLS reader of a column in the compressed layout (`None` for
    /// variable-length strings).
    #[cfg(feature = "arrow")]
    pub(crate) fn into_vls(self) -> Option<VlsDecoder> {
        match self.col {
            StringDecoder::Vls(d) => Some(*d),
            StringDecoder::Scalar(_) => None,
        }
    }
}

impl<T> JsonEncoder<T> {
    /// Buffers one JSON document as it is (text already encoded).
    #[cfg(feature = "arrow")]
    pub(crate) fn push_text(&mut self, text: &str) -> Result<()> {
        self.col.push_str(text)
    }
}

impl<T: Serialize> Encoder<T> for JsonEncoder<T> {
    fn push(&mut self, value: &T) -> Result<()> {
        self.text.clear();
        let text = serde_json::to_string(value)
            .map_err(|e| Error::encode(format!("{}[{}]", self.path, self.col.next_row()), e))?;
        self.text = text;
        self.col.push_str(&self.text)
    }
    fn push_null(&mut self) -> Result<()> {
        self.col.push_str("null")
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
        let s = self.col.next()?;
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
