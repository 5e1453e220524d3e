//! The `vls_string` kind's Arrow reader (SPEC.md section 11): a VLS heap
//! and its pointers as `LargeUtf8`, each string cut at its first NUL
//! (section 4.1), zero-copy when the rows' slices are contiguous; nullable
//! with `h5vec.PlaceholderCodec` (the placeholder is null). Also the reader
//! of a VLS string array's `value` column, and of JSON text in the VLS
//! layout (`kinds/json/arrow/read.rs` opens it).

use std::ops::Range;

use arrow_array::ArrayRef;
use arrow_buffer::{BooleanBuffer, NullBuffer};
use hdf5::Group;

use crate::arrow::read::nodes::{both, length, utf8_array, validity, BoxNode, Node};
use crate::codec::Codec;
use crate::error::{Error, Result};
use crate::kinds::vls::{Pointer, VlsCodec, VlsDecoder};
use crate::schema::{ids, Stored};

/// Opens the `vls_string` node whose data group is `group`, `count` rows
/// at least (nullable with `h5vec.PlaceholderCodec`).
pub(crate) fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<BoxNode> {
    let nullable = node.codec == ids::PLACEHOLDER_CODEC;
    let dec = if nullable {
        <VlsCodec<Option<String>> as Codec>::open(group, node, path, count)?
    } else {
        <VlsCodec<String> as Codec>::open(group, node, path, count)?
    };
    Ok(Box::new(Vls {
        dec,
        nullable,
        ptrs: Vec::new(),
        json: false,
    }))
}

/// A VLS heap and its pointers; `nullable` (placeholder codec): an element
/// equal to the placeholder is null, else it is an error; `json` (JSON
/// codec): every row that is not null must be JSON, as for the `string`
/// kind's `VlenStrs`.
pub(crate) struct Vls {
    pub(crate) dec: VlsDecoder,
    pub(crate) nullable: bool,
    pub(crate) ptrs: Vec<Pointer>,
    pub(crate) json: bool,
}

impl Node for Vls {
    fn read(&mut self, rows: Range<u64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let at = self.dec.place().clone();
        let n = length(&rows, &at)?;
        let mut heap = Vec::new();
        let lo = self.dec.read_raw(&rows, &mut self.ptrs, &mut heap)?;
        // Each element's slice in `heap`, cut at its first NUL.
        let slice = |p: &Pointer| -> (usize, usize) {
            if p.length == 0 {
                return (0, 0);
            }
            // In range: `read_raw` checked every slice against the heap.
            let a = (p.offset - lo) as usize;
            let len = p.length as usize;
            let b = heap[a..a + len]
                .iter()
                .position(|&c| c == 0)
                .map_or(a + len, |z| a + z);
            (a, b)
        };
        // Zero-copy when the rows' slices lie back to back from heap[0] to its end.
        let mut contiguous = true;
        let mut pos = 0usize;
        for p in &self.ptrs {
            let (a, b) = slice(p);
            if a == b {
                continue;
            }
            if a != pos || b - a != p.length as usize {
                contiguous = false;
                break;
            }
            pos = b;
        }
        contiguous &= pos == heap.len();
        let mut offsets = Vec::new();
        crate::limits::reserve(&mut offsets, n as u64 + 1, &at)?;
        offsets.push(0i64);
        let values = if contiguous {
            let mut end = 0i64;
            for p in &self.ptrs {
                let (a, b) = slice(p);
                end = end.saturating_add((b - a) as i64);
                offsets.push(end);
            }
            heap
        } else {
            // Rows may share slices (deduplicated strings): the output can
            // be far larger than the heap read, so its size is checked and
            // allocated first, an error rather than an abort if it fails.
            let total = self.ptrs.iter().try_fold(0u64, |t, p| {
                let (a, b) = slice(p);
                t.checked_add((b - a) as u64)
            });
            let total = total.ok_or_else(|| Error::invalid(&at, "string bytes overflow"))?;
            let mut v = Vec::new();
            crate::limits::reserve(&mut v, total, &at)?;
            for p in &self.ptrs {
                let (a, b) = slice(p);
                v.extend_from_slice(&heap[a..b]);
                offsets.push(i64::try_from(v.len()).unwrap_or(i64::MAX));
            }
            v
        };
        let own = match self.dec.placeholder() {
            Some(ph) => {
                let ph = ph.as_bytes();
                let bits = BooleanBuffer::collect_bool(n, |i| {
                    let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
                    values.get(a..b) != Some(ph)
                });
                let nb = validity(bits);
                if nb.is_some() && !self.nullable {
                    return Err(self.dec.missing_error());
                }
                nb
            }
            None => None,
        };
        let dec = &self.dec;
        let nulls = both(nulls, own, n, &at)?;
        if self.json {
            for i in 0..n {
                let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
                if nulls.as_ref().is_none_or(|nb| nb.is_valid(i)) {
                    let text = values.get(a..b).unwrap_or_default();
                    serde_json::from_slice::<serde::de::IgnoredAny>(text).map_err(|e| {
                        Error::invalid(at.element(rows.start + i as u64), format!("bad JSON: {e}"))
                    })?;
                }
            }
        }
        utf8_array(offsets, values, nulls, &at, |i| {
            dec.bad_utf8(rows.start + i as u64)
        })
    }
}
