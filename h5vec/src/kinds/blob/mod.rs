//! Blob kind: any serde type, each value encoded on its own (bincode 2).
//!
//! Layout on disk:
//! ```text
//! <field>/bytes   1-D uint8 (int8 is refused), the encoded values back to back
//! <field>/stops   1-D Int64, stops[k] = end of value k in bytes (cumulative)
//! ```
//! Value `k` is `bytes[stops[k-1] .. stops[k]]` (from 0 for `k == 0`);
//! repeated stops are empty encodings. The codec identifier is
//! `h5vec.BincodeCodec`: these are not Julia-serialized bytes.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::bincode_codec;
use crate::codec::{exhausted, expect_members, open_column, range_len, Codec, Decoder, Encoder};
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Place, Result};
use crate::evolution::LoadFlags;
use crate::limits;
use crate::options::WriteCtx;
use crate::raw::Pod;
use crate::schema::{ids, Kind, Schema, Stored};

/// Stores `T` as a serde blob (`#[h5vec(blob)]`).
pub struct BlobCodec<T>(PhantomData<T>);

/// Writes blob columns.
pub struct BlobEncoder<T> {
    bytes: PodWriter<u8>,
    stops: PodWriter<i64>,
    path: String,
    _t: PhantomData<T>,
}

/// Reads blob columns.
pub struct BlobDecoder<T> {
    bytes: PodReader<u8>,
    stops: PodReader<i64>,
    buf: Vec<u8>,
    /// Stops of the loaded rows, relative to `buf`.
    ends: std::vec::IntoIter<usize>,
    pos: usize,
    next_row: u64,
    /// The last stop (of row `count - 1`): every stop of rows before it
    /// is at most this, and these bytes are stored (checked on open).
    end: u64,
    _t: PhantomData<T>,
}

fn blob_schema<T>() -> Schema {
    Schema::new(
        Kind::Blob,
        ids::BLOB,
        ids::BINCODE,
        std::any::type_name::<T>(),
    )
}

impl<T: Serialize + DeserializeOwned + 'static> Codec for BlobCodec<T> {
    type Value = T;
    type Encoder = BlobEncoder<T>;
    type Decoder = BlobDecoder<T>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        blob_schema::<T>()
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let bytes = PodWriter::create(
            group,
            "bytes",
            &[],
            ctx.chunk_bytes(ctx.len_hint.saturating_mul(32)),
            path,
            ctx,
        )?;
        let stops = PodWriter::create(group, "stops", &[], ctx.chunk_rows(8), path, ctx)?;
        Ok(BlobEncoder {
            bytes,
            stops,
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
        let dec = Self::open(group, node, path, count)?;
        let end = if count == 0 {
            0
        } else {
            dec.stops.read(count - 1, 1)?[0] as u64
        };
        Ok(BlobEncoder {
            bytes: PodWriter::resume(dec.bytes.ds, Vec::new(), end, path)?,
            stops: PodWriter::resume(dec.stops.ds, Vec::new(), count, path)?,
            path: path.to_owned(),
            _t: PhantomData,
        })
    }

    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        _load: LoadFlags,
    ) -> Result<Self::Decoder> {
        node.expect(&blob_schema::<T>(), path)?;
        expect_members(group, &["bytes", "stops"], node, path)?;
        let (bds, brows) =
            open_column(group, "bytes", path, &[], 0, crate::raw::is_uint8, "uint8")?;
        let (sds, srows) = open_column(group, "stops", path, &[], count, i64::accepts, "Int64")?;
        let stops = PodReader::new(sds, Vec::new(), srows, path)?;
        let mut end = 0;
        if count > 0 {
            let last = stops.read(count - 1, 1)?[0];
            if last < 0 || last as u64 > brows {
                return Err(Error::invalid(
                    format!("{}[{}]", path, count - 1),
                    format!("last stop {last} does not fit the {brows} bytes of `bytes`"),
                ));
            }
            // The bytes the stops use must be stored, not an unwritten extent.
            let p = Place::new(path, bds.name());
            limits::check_stored(last as u64, &[brows], 1, &p, || {
                crate::raw::stored_rows(&bds, &[brows], &p)
            })?;
            end = last as u64;
        }
        Ok(BlobDecoder {
            bytes: PodReader::new(bds, Vec::new(), brows, path)?,
            stops,
            buf: Vec::new(),
            ends: Vec::new().into_iter(),
            pos: 0,
            next_row: 0,
            end,
            _t: PhantomData,
        })
    }
}

impl<T> BlobEncoder<T> {
    /// Buffers one value's encoding as it is (bytes already encoded).
    #[cfg(feature = "arrow")]
    pub(crate) fn push_encoded(&mut self, bytes: &[u8]) {
        self.bytes.buf.extend_from_slice(bytes);
        self.stops
            .buf
            .push((self.bytes.written + self.bytes.buf.len() as u64) as i64);
    }
}

impl<T: Serialize> Encoder<T> for BlobEncoder<T> {
    fn push(&mut self, value: &T) -> Result<()> {
        bincode_codec::encode_into(value, &mut self.bytes.buf).map_err(|e| {
            let row = self.stops.written + self.stops.buf.len() as u64;
            Error::encode(format!("{}[{row}]", self.path), e)
        })?;
        self.stops
            .buf
            .push((self.bytes.written + self.bytes.buf.len() as u64) as i64);
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        self.stops
            .buf
            .push((self.bytes.written + self.bytes.buf.len() as u64) as i64);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.bytes.flush()?;
        self.stops.flush()
    }
}

#[cfg(feature = "arrow")]
impl<T> BlobDecoder<T> {
    /// What the last `load` read, taken: the encoded bytes of its rows back
    /// to back, and where each row ends in them (checked: non-decreasing,
    /// within the bytes).
    pub(crate) fn take_loaded(&mut self) -> (Vec<u8>, Vec<usize>) {
        let ends = std::mem::replace(&mut self.ends, Vec::new().into_iter()).collect();
        (std::mem::take(&mut self.buf), ends)
    }
}

impl<T: DeserializeOwned> Decoder<T> for BlobDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.stops.place())?;
        // One stop before the range gives where its first value starts.
        let (first, stops) = if rows.start == 0 {
            (0i64, self.stops.read(0, n)?)
        } else {
            let mut s = self.stops.read(rows.start - 1, n + 1)?;
            let f = s.remove(0);
            (f, s)
        };
        let mut prev = first;
        if prev < 0 {
            return Err(Error::invalid(
                self.stops.element(rows.start.saturating_sub(1)),
                format!("negative stop {prev}"),
            ));
        }
        let mut ends = Vec::new();
        limits::reserve(&mut ends, stops.len() as u64, self.stops.place())?;
        for (i, &s) in stops.iter().enumerate() {
            if s < prev {
                return Err(Error::invalid(
                    self.stops.element(rows.start + i as u64),
                    format!("stops must not decrease: {s} after {prev}"),
                ));
            }
            if s as u64 > self.bytes.rows {
                return Err(Error::invalid(
                    self.stops.element(rows.start + i as u64),
                    format!(
                        "stop {s} is past the end of `bytes` ({} bytes)",
                        self.bytes.rows
                    ),
                ));
            }
            if s as u64 > self.end {
                return Err(Error::invalid(
                    self.stops.element(rows.start + i as u64),
                    format!(
                        "stop {s} is past the last stop {} (stops must not decrease)",
                        self.end
                    ),
                ));
            }
            ends.push((s - first) as usize);
            prev = s;
        }
        let len = (prev - first) as u64;
        limits::reserve(&mut self.buf, len, self.bytes.place())?;
        self.bytes.read_into(first as u64, len, &mut self.buf)?;
        self.ends = ends.into_iter();
        self.pos = 0;
        self.next_row = rows.start;
        Ok(())
    }
    fn next(&mut self) -> Result<T> {
        let end = self
            .ends
            .next()
            .ok_or_else(|| exhausted(self.stops.place()))?;
        let slice = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| exhausted(self.stops.place()))?;
        let row = self.next_row;
        self.pos = end;
        self.next_row += 1;
        bincode_codec::decode(slice).map_err(|e| {
            Error::invalid(self.stops.element(row), format!("cannot decode blob: {e}"))
        })
    }
    fn skip(&mut self) -> Result<()> {
        let end = self
            .ends
            .next()
            .ok_or_else(|| exhausted(self.stops.place()))?;
        self.pos = end;
        self.next_row += 1;
        Ok(())
    }
}
