//! `String` as a scalar: one HDF5 variable-length UTF-8 string per element.
//!
//! Layout on disk:
//! ```text
//! <field>/values    1-D variable-length UTF-8 strings (NULLTERM), chunked, max extent unlimited
//! ```
//! This is what HDF5.jl writes for `String` and what h5py's `string_dtype()`
//! reads. With compression on (unless `SaveOptions::vls_strings(false)` or
//! `#[h5vec(vlen_strings)]`), with `SaveOptions::vls_strings(true)` or with
//! `#[h5vec(vls)]`, a string field uses the compressed VLS layout of
//! [`super::vls`] instead (SPEC.md section 6).

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

use std::ops::Range;

use hdf5::Group;

use crate::codec::{exhausted, expect_members, range_len, Codec, Decoder, Encoder, H5Vector};
use crate::column::{open_str_column, StrWriter};
use crate::error::{Error, Result};
use crate::evolution::LoadFlags;
use crate::kinds::nullable::{MaskedDecoder, MaskedEncoder, Nullable, NullableCodec};
use crate::kinds::scalar::scalar_schema;
use crate::kinds::vls::{OptVlsStringCodec, VlsDecoder, VlsEncoder, VlsStringCodec};
use crate::options::WriteCtx;
use crate::raw;
use crate::schema::{ids, Kind, Schema, Stored};

impl H5Vector for String {
    type Codec = StringCodec;
}

/// How `String` values are stored: a variable-length string scalar by
/// default, or a compressed VLS array when the save options ask for it.
/// Loading accepts both.
pub struct StringCodec;

/// Writes a string column in either layout.
pub enum StringEncoder {
    /// HDF5 variable-length strings.
    Scalar(StrWriter),
    /// Compressed VLS heap + pointers (boxed: it is much larger).
    Vls(Box<VlsEncoder>),
}

/// Reads a string column in either layout.
pub enum StringDecoder {
    /// HDF5 variable-length strings.
    Scalar(VlenStrDecoder),
    /// Compressed VLS heap + pointers (boxed: it is much larger).
    Vls(Box<VlsDecoder>),
}

impl Codec for StringCodec {
    type Value = String;
    type Encoder = StringEncoder;
    type Decoder = StringDecoder;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        if ctx.opts.get_vls_strings() {
            VlsStringCodec::schema(ctx)
        } else {
            scalar_schema::<String>(ids::IDENTITY, "String")
        }
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        if ctx.opts.get_vls_strings() {
            Ok(StringEncoder::Vls(Box::new(VlsStringCodec::create(
                group, path, ctx,
            )?)))
        } else {
            Ok(StringEncoder::Scalar(StrWriter::create(
                group, "values", path, ctx,
            )?))
        }
    }

    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        if node.kind == Kind::Scalar {
            let dec = VlenStrDecoder::open(group, node, path, count)?;
            crate::limits::check_append_chunk(&dec.ds, path)?;
            Ok(StringEncoder::Scalar(StrWriter::resume(
                dec.ds, count, path,
            )?))
        } else {
            Ok(StringEncoder::Vls(Box::new(VlsStringCodec::append(
                group, node, path, count, ctx,
            )?)))
        }
    }

    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        if node.kind == Kind::Scalar {
            Ok(StringDecoder::Scalar(VlenStrDecoder::open(
                group, node, path, count,
            )?))
        } else {
            Ok(StringDecoder::Vls(Box::new(VlsStringCodec::open_with(
                group, node, path, count, load,
            )?)))
        }
    }
}

impl StringEncoder {
    /// The row the next string pushed goes to.
    pub(crate) fn next_row(&self) -> u64 {
        match self {
            StringEncoder::Scalar(w) => w.next_row(),
            StringEncoder::Vls(w) => w.next_row(),
        }
    }

    /// Buffers one string.
    #[inline]
    pub(crate) fn push_str(&mut self, value: &str) -> Result<()> {
        match self {
            StringEncoder::Scalar(w) => w.push(value),
            StringEncoder::Vls(w) => w.push(value),
        }
    }
}

impl Encoder<String> for StringEncoder {
    #[inline]
    fn push(&mut self, value: &String) -> Result<()> {
        self.push_str(value)
    }
    fn push_null(&mut self) -> Result<()> {
        match self {
            StringEncoder::Scalar(w) => w.push(""),
            StringEncoder::Vls(w) => w.push_null(),
        }
    }
    fn flush(&mut self) -> Result<()> {
        match self {
            StringEncoder::Scalar(w) => w.flush(),
            StringEncoder::Vls(w) => w.flush(),
        }
    }
}

impl Decoder<String> for StringDecoder {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        match self {
            StringDecoder::Scalar(d) => d.load(rows),
            StringDecoder::Vls(d) => d.load(rows),
        }
    }
    #[inline]
    fn next(&mut self) -> Result<String> {
        match self {
            StringDecoder::Scalar(d) => d.next_value(),
            StringDecoder::Vls(d) => d.next_value(),
        }
    }
    fn skip(&mut self) -> Result<()> {
        match self {
            StringDecoder::Scalar(d) => d.skip(),
            StringDecoder::Vls(d) => d.skip(),
        }
    }
}

/// Reads a column of HDF5 variable-length strings.
pub struct VlenStrDecoder {
    ds: hdf5::Dataset,
    rows: u64,
    buf: std::vec::IntoIter<String>,
    path: String,
}

impl VlenStrDecoder {
    /// Checks the schema node (a scalar with encoded type `String`, codec
    /// `codec`) and the `values` dataset.
    pub fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        want: &Schema,
    ) -> Result<Self> {
        node.expect(want, path)?;
        expect_members(group, &["values"], node, path)?;
        let (ds, rows) = open_str_column(group, "values", path, count)?;
        Ok(VlenStrDecoder {
            ds,
            rows,
            buf: Vec::new().into_iter(),
            path: path.to_owned(),
        })
    }

    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self> {
        Self::open_with(
            group,
            node,
            path,
            count,
            &scalar_schema::<String>(ids::IDENTITY, "String"),
        )
    }

    /// Reads rows `rows`.
    pub fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, &self.path)?;
        if rows.end > self.rows {
            return Err(Error::invalid(
                &self.path,
                format!("rows {rows:?} past the end ({} rows)", self.rows),
            ));
        }
        self.buf = raw::read_vlen_strings(&self.ds, rows.start, n, &self.path)?.into_iter();
        Ok(())
    }

    /// Reads rows `rows` into one byte buffer: each row's text appended to
    /// `values`, and its end pushed onto `ends` (no allocation per row).
    #[cfg(feature = "arrow")]
    pub(crate) fn read_bytes(
        &self,
        rows: Range<u64>,
        values: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        let n = range_len(&rows, &self.path)?;
        if rows.end > self.rows {
            return Err(Error::invalid(
                &self.path,
                format!("rows {rows:?} past the end ({} rows)", self.rows),
            ));
        }
        raw::read_vlen_each(&self.ds, rows.start, n, &self.path, &mut |s| {
            values.extend_from_slice(s.as_bytes());
            ends.push(values.len());
        })
    }

    /// The next string.
    #[inline]
    pub fn next_value(&mut self) -> Result<String> {
        self.buf.next().ok_or_else(|| exhausted(&self.path))
    }

    /// Skips one string.
    pub fn skip(&mut self) -> Result<()> {
        self.next_value().map(drop)
    }
}

impl Nullable for StringCodec {
    type Codec = OptStringCodec;
}

/// How `Option<String>` is stored: a `MASK` beside the strings by default,
/// or a compressed VLS array with a missing-value placeholder when the save
/// options ask for VLS strings. Loading accepts both.
pub struct OptStringCodec;

/// Writes an `Option<String>` column in either layout.
// One encoder per column, made once per save: its size costs nothing, and
// boxing a variant would only add an indirection per value.
#[allow(clippy::large_enum_variant)]
pub enum OptStringEncoder {
    /// Strings plus MASK.
    Masked(MaskedEncoder<StringEncoder>),
    /// VLS with placeholder.
    Vls(VlsEncoder),
}

/// Reads an `Option<String>` column in either layout.
pub enum OptStringDecoder {
    /// Strings plus MASK.
    Masked(MaskedDecoder<StringDecoder>),
    /// VLS with placeholder.
    Vls(VlsDecoder),
}

impl Codec for OptStringCodec {
    type Value = Option<String>;
    type Encoder = OptStringEncoder;
    type Decoder = OptStringDecoder;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        if ctx.opts.get_vls_strings() {
            OptVlsStringCodec::schema(ctx)
        } else {
            NullableCodec::<StringCodec>::schema(ctx)
        }
    }
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        if ctx.opts.get_vls_strings() {
            Ok(OptStringEncoder::Vls(OptVlsStringCodec::create(
                group, path, ctx,
            )?))
        } else {
            Ok(OptStringEncoder::Masked(
                NullableCodec::<StringCodec>::create(group, path, ctx)?,
            ))
        }
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        if node.kind == Kind::VlsString {
            Ok(OptStringEncoder::Vls(OptVlsStringCodec::append(
                group, node, path, count, ctx,
            )?))
        } else {
            Ok(OptStringEncoder::Masked(
                NullableCodec::<StringCodec>::append(group, node, path, count, ctx)?,
            ))
        }
    }
    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        if node.kind == Kind::VlsString {
            Ok(OptStringDecoder::Vls(OptVlsStringCodec::open_with(
                group, node, path, count, load,
            )?))
        } else {
            Ok(OptStringDecoder::Masked(
                NullableCodec::<StringCodec>::open_with(group, node, path, count, load)?,
            ))
        }
    }
}

impl Encoder<Option<String>> for OptStringEncoder {
    #[inline]
    fn push(&mut self, value: &Option<String>) -> Result<()> {
        match self {
            OptStringEncoder::Masked(e) => e.push(value),
            OptStringEncoder::Vls(e) => Encoder::<Option<String>>::push(e, value),
        }
    }
    fn push_null(&mut self) -> Result<()> {
        match self {
            OptStringEncoder::Masked(e) => Encoder::<Option<String>>::push_null(e),
            OptStringEncoder::Vls(e) => e.push_missing(),
        }
    }
    fn flush(&mut self) -> Result<()> {
        match self {
            OptStringEncoder::Masked(e) => Encoder::<Option<String>>::flush(e),
            OptStringEncoder::Vls(e) => VlsEncoder::flush(e),
        }
    }
}

impl Decoder<Option<String>> for OptStringDecoder {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        match self {
            OptStringDecoder::Masked(d) => Decoder::<Option<String>>::load(d, rows),
            OptStringDecoder::Vls(d) => VlsDecoder::load(d, rows),
        }
    }
    #[inline]
    fn next(&mut self) -> Result<Option<String>> {
        match self {
            OptStringDecoder::Masked(d) => d.next(),
            OptStringDecoder::Vls(d) => d.next_opt(),
        }
    }
    fn skip(&mut self) -> Result<()> {
        match self {
            OptStringDecoder::Masked(d) => Decoder::<Option<String>>::skip(d),
            OptStringDecoder::Vls(d) => VlsDecoder::skip(d),
        }
    }
}
