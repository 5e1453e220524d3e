//! Writing a VLS column: [`VlsEncoder`], which puts the strings on the
//! heap (deduplicated if asked) and their pointers after them, and picks
//! the missing-value placeholder.

use std::collections::HashMap;

use hdf5::Group;

use crate::column::PodWriter;
use crate::error::{Error, Result};
use crate::options::WriteCtx;

use super::decoder::VlsDecoder;
use super::pointers::{
    check_slice, create_pointers, read_pointers, resume_pointers, write_placeholder, Pointer,
    PointerWriter,
};

/// Writes a VLS string column.
pub struct VlsEncoder {
    heap: PodWriter<u8>,
    ptrs: PointerWriter,
    dedup: Option<HashMap<Box<[u8]>, Pointer>>,
    placeholder: Option<String>,
    /// Rows of the current batch that are missing.
    missing: Vec<usize>,
    path: String,
}

impl VlsEncoder {
    /// Creates `heap` and `pointers` in `group`.
    pub fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self> {
        let heap = PodWriter::create(
            group,
            "heap",
            &[],
            ctx.chunk_bytes(ctx.len_hint.saturating_mul(16)),
            path,
            ctx,
        )?;
        let ptrs = create_pointers(group, "pointers", path, ctx)?;
        Ok(VlsEncoder {
            heap,
            ptrs,
            dedup: ctx.opts.get_dedup_strings().then(HashMap::new),
            placeholder: None,
            missing: Vec::new(),
            path: path.to_owned(),
        })
    }

    /// Continues an existing column opened by [`VlsDecoder`].
    pub fn resume(dec: VlsDecoder, count: u64, ctx: &WriteCtx<'_>) -> Result<Self> {
        // Append after the furthest byte any committed pointer uses.
        let mut heap_end = 0u64;
        let mut start = 0;
        while start < count {
            let n = (count - start).min(crate::options::READ_BATCH_ROWS);
            let ptrs = read_pointers(&dec.ptrs.ds, start, n, &dec.path)?;
            for (i, p) in ptrs.iter().enumerate() {
                let r = check_slice(p, dec.heap.rows, &dec.path, start + i as u64)?;
                heap_end = heap_end.max(r.end);
            }
            start += n;
        }
        Ok(VlsEncoder {
            heap: PodWriter::resume(dec.heap.ds, Vec::new(), heap_end, dec.path.path())?,
            ptrs: resume_pointers(dec.ptrs.ds, count, dec.path.path())?,
            dedup: ctx.opts.get_dedup_strings().then(HashMap::new),
            placeholder: dec.placeholder,
            missing: Vec::new(),
            path: dec.path.path().to_owned(),
        })
    }

    /// The row the next string pushed goes to.
    pub(crate) fn next_row(&self) -> u64 {
        self.ptrs.written + self.ptrs.buf.len() as u64
    }

    /// Buffers one string.
    pub fn push(&mut self, s: &str) -> Result<()> {
        if s.as_bytes().contains(&0) {
            return Err(Error::encode(
                format!("{}[{}]", self.path, self.next_row()),
                "string contains a NUL byte; readers cut VLS strings at the first NUL",
            ));
        }
        if let Some(ph) = &self.placeholder {
            if ph == s {
                return Err(Error::encode(
                    format!("{}[{}]", self.path, self.next_row()),
                    format!(
                        "value equals the missing-value placeholder `{ph}` chosen for this column"
                    ),
                ));
            }
        }
        let p = self.place(s.as_bytes());
        self.ptrs.buf.push(p);
        Ok(())
    }

    fn place(&mut self, bytes: &[u8]) -> Pointer {
        if let Some(map) = &self.dedup {
            if let Some(p) = map.get(bytes) {
                return *p;
            }
        }
        let p = Pointer {
            offset: self.heap.written + self.heap.buf.len() as u64,
            length: bytes.len() as u64,
        };
        self.heap.buf.extend_from_slice(bytes);
        if let Some(map) = &mut self.dedup {
            map.insert(bytes.into(), p);
        }
        p
    }

    /// Buffers a missing value (`None`); its pointer is fixed at flush time.
    pub fn push_missing(&mut self) -> Result<()> {
        self.missing.push(self.ptrs.buf.len());
        self.ptrs.buf.push(Pointer::default());
        Ok(())
    }

    /// Buffers an empty string under a null in an enclosing mask.
    pub fn push_null(&mut self) -> Result<()> {
        self.push("")
    }

    /// Writes the batch: heap bytes first, then pointers.
    pub fn flush(&mut self) -> Result<()> {
        if !self.missing.is_empty() {
            if self.placeholder.is_none() {
                let ph = self.choose_placeholder();
                let ds = self.ptrs.dataset().clone();
                write_placeholder(&ds, &ph, &self.path)?;
                self.placeholder = Some(ph);
            }
            let ph = self.placeholder.clone().unwrap_or_default();
            let p = self.place(ph.as_bytes());
            for &i in &self.missing {
                self.ptrs.buf[i] = p;
            }
            self.missing.clear();
        }
        self.heap.flush()?;
        self.ptrs.flush()
    }

    /// "NA", then "NA_", "NA__", ... : the first not used by this batch.
    fn choose_placeholder(&self) -> String {
        let start = self.heap.written;
        let used: std::collections::HashSet<&[u8]> = self
            .ptrs
            .buf
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.missing.contains(i))
            .filter_map(|(_, p)| {
                let a = usize::try_from(p.offset.checked_sub(start)?).ok()?;
                self.heap.buf.get(a..a + p.length as usize)
            })
            .collect();
        let mut ph = String::from("NA");
        while used.contains(ph.as_bytes()) {
            ph.push('_');
        }
        ph
    }
}
