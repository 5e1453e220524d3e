//! `String` list elements: a STRING_VALUES group (SPEC.md section 4.2).
//!
//! Layout on disk:
//! ```text
//! VALUES/             group, attribute CLASS = "STRING_VALUES"
//! VALUES/OFFSETS      1-D uint64, n + 1 entries, OFFSETS[0] = 0, non-decreasing
//! VALUES/CHARS        1-D uint8 (int8 refused), the UTF-8 bytes of all strings back to back
//! VALUES/MASK         (Option<String> only, see `item::NullableItem`) h5col bool per string
//! ```
//! String `j` is `CHARS[OFFSETS[j] .. OFFSETS[j+1]]`, every byte kept (no NUL cut).

use std::ops::Range;

use hdf5::Group;

use crate::codec::{exhausted, expect_members, open_column, open_group, Decoder, Encoder};
use crate::column::{PodReader, PodWriter};
use crate::error::{Context, Error, Result};
use crate::evolution::LoadFlags;
use crate::options::WriteCtx;
use crate::pipeline::ahead::Ahead;
use crate::pipeline::buffers::{give_vec, take_vec};
use crate::raw;
use crate::schema::{ids, Kind, Schema, Stored};

use super::item::ItemCodec;
use super::offsets::{
    check_class, create_offsets, open_offsets, past_total, read_offsets, STRING_VALUES,
};

/// `String` elements as a STRING_VALUES group (OFFSETS + CHARS).
pub struct StringValuesItem;

/// Writes a STRING_VALUES group.
pub struct StringValuesEncoder {
    offsets: PodWriter<u64>,
    chars: PodWriter<u8>,
    end: u64,
}

/// Reads a STRING_VALUES group.
pub struct StringValuesDecoder {
    offsets: PodReader<u64>,
    chars: PodReader<u8>,
    /// The CHARS bytes of the loaded strings, validated as UTF-8 as a whole.
    buf: Chars,
    /// OFFSETS of the loaded strings (one more than strings), reused.
    offs: Vec<u64>,
    /// Index into `offs` of the next string.
    idx: usize,
    next_row: u64,
    /// `OFFSETS[rows]`, the bytes of all strings (as for [`ListDecoder`](super::ListDecoder)).
    total: u64,
    /// The number of strings (`rows` at open).
    strings: u64,
    /// The next batch's strings, built on the worker threads.
    ahead: Ahead<String>,
}

fn string_values_schema() -> Schema {
    Schema::new(
        Kind::StringValues,
        ids::STRING_VALUES,
        ids::H5VEC_CODEC,
        "alloc::string::String",
    )
    .encoded("String")
}

impl ItemCodec for StringValuesItem {
    type Value = String;
    type Encoder = StringValuesEncoder;
    type Decoder = StringValuesDecoder;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        string_values_schema()
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let g = parent.create_group(name).at(path)?;
        raw::write_attr_ascii(&g, "CLASS", STRING_VALUES, path)?;
        let offsets = create_offsets(&g, path, ctx)?;
        let chars = PodWriter::create(
            &g,
            "CHARS",
            &[],
            ctx.chunk_bytes(ctx.len_hint.saturating_mul(16)),
            path,
            ctx,
        )?;
        Ok(StringValuesEncoder {
            offsets,
            chars,
            end: 0,
        })
    }
    fn open_with(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        _load: LoadFlags,
    ) -> Result<Self::Decoder> {
        node.expect(&string_values_schema(), path)?;
        let g = open_group(parent, name, path)?;
        check_class(&g, STRING_VALUES, path)?;
        expect_members(&g, &["OFFSETS", "CHARS"], node, path)?;
        let (offsets, total) = open_offsets(&g, path, rows)?;
        let (cds, cn) = open_column(&g, "CHARS", path, &[], total, raw::is_uint8, "uint8 CHARS")?;
        Ok(StringValuesDecoder {
            offsets,
            chars: PodReader::new(cds, Vec::new(), cn, path)?,
            buf: Chars::Bytes(Vec::new()),
            offs: Vec::new(),
            idx: 0,
            next_row: 0,
            total,
            strings: rows,
            ahead: Ahead::default(),
        })
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let dec = Self::open(parent, name, node, path, rows)?;
        let end = dec.offsets.read(rows, 1)?[0];
        Ok(StringValuesEncoder {
            offsets: PodWriter::resume(dec.offsets.ds, Vec::new(), rows + 1, path)?,
            chars: PodWriter::resume(dec.chars.ds, Vec::new(), end, path)?,
            end,
        })
    }
}

impl StringValuesEncoder {
    /// Buffers one string (every byte kept).
    #[inline]
    pub(crate) fn push_str(&mut self, value: &str) {
        self.chars.buf.extend_from_slice(value.as_bytes());
        self.end += value.len() as u64;
        self.offsets.buf.push(self.end);
    }
}

impl Encoder<String> for StringValuesEncoder {
    #[inline]
    fn push(&mut self, value: &String) -> Result<()> {
        self.push_str(value);
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        self.offsets.buf.push(self.end);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.chars.flush()?;
        self.offsets.flush()
    }
}

/// A buffer of CHARS bytes: text if valid UTF-8 as a whole (each string
/// then only needs its two ends on character boundaries, an O(1) check),
/// else bytes (each string validated on its own).
enum Chars {
    Text(String),
    Bytes(Vec<u8>),
}

impl Chars {
    /// Validates `bytes` as a whole (no copy).
    fn new(bytes: Vec<u8>) -> Self {
        String::from_utf8(bytes).map_or_else(|e| Chars::Bytes(e.into_bytes()), Chars::Text)
    }

    /// The bytes, taken (an empty buffer is left).
    fn take(&mut self) -> Vec<u8> {
        match std::mem::replace(self, Chars::Bytes(Vec::new())) {
            Chars::Text(s) => s.into_bytes(),
            Chars::Bytes(b) => b,
        }
    }

    fn len(&self) -> usize {
        match self {
            Chars::Text(s) => s.len(),
            Chars::Bytes(b) => b.len(),
        }
    }

    /// The text of bytes `a..b`, or `None` if out of range or not UTF-8.
    #[inline]
    fn get(&self, a: usize, b: usize) -> Option<&str> {
        match self {
            Chars::Text(s) => s.get(a..b),
            Chars::Bytes(bytes) => bytes.get(a..b).and_then(|x| std::str::from_utf8(x).ok()),
        }
    }
}

impl StringValuesDecoder {
    /// What the last `load` read: the OFFSETS of its rows (one more than
    /// rows, from `OFFSETS[start]`, checked) and the CHARS bytes from
    /// `OFFSETS[start]` on, taken (the next `load` reads them afresh).
    #[cfg(feature = "arrow")]
    pub(crate) fn take_loaded(&mut self) -> (&[u64], Vec<u8>) {
        let buf = self.buf.take();
        (&self.offs, buf)
    }

    /// Where string `row` is, for errors.
    #[cfg(feature = "arrow")]
    pub(crate) fn element(&self, row: u64) -> crate::error::Place {
        self.offsets.element(row)
    }

    /// The byte span of the next string in `buf`, advancing.
    #[inline]
    fn next_span(&mut self) -> Result<(usize, usize)> {
        let (a, b) = match (self.offs.get(self.idx), self.offs.get(self.idx + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => return Err(exhausted(self.offsets.place())),
        };
        self.idx += 1;
        self.next_row += 1;
        // Checked by `read_span`: non-decreasing, from `base`, within `buf`.
        let base = self.offs[0];
        Ok(((a - base) as usize, (b - base) as usize))
    }

    /// Reads the OFFSETS of strings `rows` (one more than strings) into
    /// `offs` and their CHARS bytes into `buf`, checked.
    fn read_span(&self, rows: &Range<u64>, offs: &mut Vec<u64>, buf: &mut Vec<u8>) -> Result<()> {
        read_offsets(&self.offsets, rows, offs)?;
        let (base, last) = (offs[0], offs[offs.len() - 1]);
        if last > self.chars.rows {
            return Err(Error::invalid(
                self.offsets.element(rows.end),
                format!(
                    "offset {last} is past the end of CHARS ({} bytes)",
                    self.chars.rows
                ),
            ));
        }
        if last > self.total {
            return Err(past_total(self.offsets.element(rows.end), last, self.total));
        }
        if usize::try_from(last - base).is_err() {
            return Err(Error::invalid(self.offsets.place(), "span too large"));
        }
        self.chars.read_into(base, last - base, buf)
    }

    /// Loads strings `rows` as they are stored (the OFFSETS and CHARS that
    /// [`take_loaded`](Self::take_loaded) hands out), nothing built ahead.
    #[cfg(feature = "arrow")]
    pub(crate) fn load_stored(&mut self, rows: Range<u64>) -> Result<()> {
        self.ahead = Ahead::default();
        self.load_span(rows)
    }

    /// Reads strings `rows` for [`next`](Decoder::next) to build one by one.
    fn load_span(&mut self, rows: Range<u64>) -> Result<()> {
        let (mut offs, mut buf) = (std::mem::take(&mut self.offs), self.buf.take());
        let r = self.read_span(&rows, &mut offs, &mut buf);
        self.offs = offs;
        if let Err(e) = r {
            self.buf = Chars::Bytes(buf);
            return Err(e);
        }
        self.buf = Chars::new(buf);
        self.idx = 0;
        self.next_row = rows.start;
        Ok(())
    }

    /// After a load of `rows`: reads the next strings' OFFSETS and CHARS
    /// and builds them on a worker thread ([`crate::pipeline::ahead`]).
    fn build_ahead(&mut self, rows: &Range<u64>) {
        let Some(next) = self.ahead.next_rows(rows, self.strings) else {
            return;
        };
        let (mut offs, mut buf) = (take_vec::<u64>(), take_vec::<u8>());
        if self.read_span(&next, &mut offs, &mut buf).is_err() {
            give_vec(offs);
            give_vec(buf);
            return;
        }
        self.ahead.spawn(next.start, move || {
            let out = build_strings(&offs, &buf);
            give_vec(offs);
            give_vec(buf);
            out
        });
    }
}

/// The strings of `offs` (checked by `read_span`: non-decreasing, within
/// `buf` from `offs[0]`), up to the first that is not UTF-8.
fn build_strings(offs: &[u64], buf: &[u8]) -> Vec<String> {
    let base = offs.first().copied().unwrap_or(0);
    let text = crate::column::Utf8Slices::new(buf);
    offs.windows(2)
        .map_while(|w| {
            let (a, b) = ((w[0] - base) as usize, (w[1] - base) as usize);
            text.get(a, b).map(str::to_owned)
        })
        .collect()
}

impl Decoder<String> for StringValuesDecoder {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let have = self.ahead.begin(&rows);
        if have < rows.end {
            self.load_span(have..rows.end)?;
        } else {
            // Every string was built ahead: nothing for `next_span`.
            self.offs.clear();
            self.idx = 0;
            self.next_row = rows.end;
        }
        self.build_ahead(&rows);
        Ok(())
    }
    #[inline]
    fn next(&mut self) -> Result<String> {
        if let Some(v) = self.ahead.pop() {
            return Ok(v);
        }
        let row = self.next_row;
        let (a, end) = self.next_span()?;
        let text = self.buf.get(a, end);
        if end > self.buf.len() {
            return Err(exhausted(self.offsets.place()));
        }
        text.map(str::to_owned)
            .ok_or_else(|| Error::invalid(self.offsets.element(row), "string is not valid UTF-8"))
    }
    fn skip(&mut self) -> Result<()> {
        if self.ahead.pop().is_some() {
            return Ok(());
        }
        self.next_span().map(drop)
    }
}
