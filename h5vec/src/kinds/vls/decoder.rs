//! Reading a VLS column: [`VlsDecoder`], which reads the pointers and the
//! heap span they use, checks every slice, and builds the strings (the
//! next batch's ahead on a worker thread).

use std::ops::Range;

use hdf5::Group;
use hdf5_sys::h5t;

use crate::codec::{exhausted, open_column, range_len};
use crate::column::PodReader;
use crate::error::{Error, Place, Result};
use crate::limits;
use crate::pipeline::ahead::Ahead;
use crate::pipeline::buffers::{give_vec, take_vec};
use crate::raw::{self, MemType};

use super::pointers::{check_slice, pointer_type, pointer_type_ok, read_placeholder, Pointer};

/// Reads a VLS string column.
pub struct VlsDecoder {
    pub(super) heap: PodReader<u8>,
    /// The pointers (read ahead like any column when compressed).
    pub(super) ptrs: PodReader<Pointer>,
    ptr_rows: u64,
    pub(super) placeholder: Option<String>,
    ptr_buf: Vec<Pointer>,
    heap_buf: Vec<u8>,
    out: Vec<Option<String>>,
    pos: usize,
    pub(super) path: Place,
    /// The next batch's strings, built on the worker threads (boxed:
    /// decoders sit in enums beside smaller ones).
    ahead: Box<Ahead<Option<String>>>,
}

impl VlsDecoder {
    /// Opens `heap` and `pointers` in `group` (no schema check).
    pub fn open_datasets(group: &Group, path: &str, count: u64) -> Result<Self> {
        let (ptrs, ptr_rows) = open_column(
            group,
            "pointers",
            path,
            &[],
            count,
            pointer_type_ok,
            "compound {offset: uint, length: uint}",
        )?;
        let (heap, heap_rows) = open_column(group, "heap", path, &[], 0, raw::is_uint8, "uint8")?;
        // Pointers are checked against the heap bytes the file stores, not
        // an unwritten extent (SPEC.md, section 7).
        // A heap of at most `UNCHECKED_CLAIM_BYTES` is trusted as `check_stored` trusts it.
        let heap_rows = if heap_rows <= limits::UNCHECKED_CLAIM_BYTES {
            heap_rows
        } else {
            raw::stored_rows(&heap, &[heap_rows], &Place::new(path, heap.name()))?
        };
        let placeholder = read_placeholder(&ptrs, path)?;
        let ptrs_name = ptrs.name();
        Ok(VlsDecoder {
            heap: PodReader::new(heap, Vec::new(), heap_rows, path)?,
            // The compound {offset: u64 @0, length: u64 @8} is exactly
            // `Pointer` (repr(C)); HDF5 converts narrower members.
            ptrs: PodReader::with_type(
                ptrs,
                MemType::checked(pointer_type(*h5t::H5T_NATIVE_UINT64, path)?, path)?,
                Vec::new(),
                ptr_rows,
                path,
            )?,
            ptr_rows,
            placeholder,
            ptr_buf: Vec::new(),
            heap_buf: Vec::new(),
            out: Vec::new(),
            pos: 0,
            path: Place::new(path, ptrs_name),
            ahead: Box::default(),
        })
    }

    /// Number of entries in the pointer dataset (its extent).
    pub fn len(&self) -> u64 {
        self.ptr_rows
    }

    /// Whether the pointer dataset is empty.
    pub fn is_empty(&self) -> bool {
        self.ptr_rows == 0
    }

    /// The `missing-value-placeholder` of the pointers, if any.
    pub fn placeholder(&self) -> Option<&str> {
        self.placeholder.as_deref()
    }

    /// Reads elements `rows` as `Option<String>` (None where equal to the placeholder).
    pub fn read(&self, rows: Range<u64>) -> Result<Vec<Option<String>>> {
        let mut out = Vec::new();
        self.read_into(rows, &mut Vec::new(), &mut Vec::new(), &mut out)?;
        Ok(out)
    }

    /// [`read`](Self::read) into `out`, with scratch buffers for the
    /// pointers and the heap span (all reused from batch to batch).
    fn read_into(
        &self,
        rows: Range<u64>,
        ptrs: &mut Vec<Pointer>,
        heap: &mut Vec<u8>,
        out: &mut Vec<Option<String>>,
    ) -> Result<()> {
        let lo = self.read_raw(&rows, ptrs, heap)?;
        out.clear();
        build_strings(ptrs, heap, lo, self.placeholder.as_deref(), out)
            .map_err(|i| self.bad_utf8(rows.start + i as u64))
    }

    /// The pointers' logical path and dataset, for errors.
    #[cfg(feature = "arrow")]
    pub(crate) fn place(&self) -> &Place {
        &self.path
    }

    /// A missing value (equal to the placeholder) where `String` is stored.
    pub(crate) fn missing_error(&self) -> Error {
        Error::invalid(
            &self.path,
            "missing value (equal to the placeholder) in a column of non-optional String; load it as Option<String>",
        )
    }

    /// Element `row` is not UTF-8 (before its first NUL).
    pub(crate) fn bad_utf8(&self, row: u64) -> Error {
        Error::invalid(self.path.element(row), "string is not valid UTF-8")
    }

    /// Reads the pointers of elements `rows` into `ptrs` and the heap bytes
    /// they use into `heap`, every slice checked against the heap
    /// ([`check_slice`]); returns the heap offset `heap[0]` is at. Element
    /// `i`'s bytes are `heap[offset - lo ..][..length]` (empty slices may
    /// point anywhere within the heap).
    pub(crate) fn read_raw(
        &self,
        rows: &Range<u64>,
        ptrs: &mut Vec<Pointer>,
        heap: &mut Vec<u8>,
    ) -> Result<u64> {
        let n = range_len(rows, &self.path)?;
        if rows.end > self.ptr_rows {
            return Err(Error::invalid(
                &self.path,
                format!("rows {rows:?} past the end ({} pointers)", self.ptr_rows),
            ));
        }
        // Read as `Pointer::mem_type()`, the compound {offset: u64 @0,
        // length: u64 @8}; HDF5 converts narrower unsigned members.
        self.ptrs.read_into(rows.start, n, ptrs)?;
        // Read only the heap span these pointers use.
        let mut lo = u64::MAX;
        let mut hi = 0u64;
        for (i, p) in ptrs.iter().enumerate() {
            let r = check_slice(p, self.heap.rows, &self.path, rows.start + i as u64)?;
            if r.start < r.end {
                lo = lo.min(r.start);
                hi = hi.max(r.end);
            }
        }
        if lo < hi {
            self.heap.read_into(lo, hi - lo, heap)?;
            Ok(lo)
        } else {
            heap.clear();
            Ok(0)
        }
    }

    /// Reads rows into the buffer (reusing its memory); the strings of the
    /// rows after them may then be built ahead ([`crate::pipeline::ahead`]).
    pub fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let have = self.ahead.begin(&rows);
        let (mut p, mut h, mut o) = (
            std::mem::take(&mut self.ptr_buf),
            std::mem::take(&mut self.heap_buf),
            std::mem::take(&mut self.out),
        );
        let r = if have < rows.end {
            self.read_into(have..rows.end, &mut p, &mut h, &mut o)
        } else {
            o.clear();
            Ok(())
        };
        (self.ptr_buf, self.heap_buf, self.out) = (p, h, o);
        self.pos = 0;
        if r.is_ok() {
            self.build_ahead(&rows);
        }
        r
    }

    /// After a load of `rows`: reads the next rows' pointers and heap bytes
    /// and builds their strings on a worker thread. Rows it cannot read
    /// are left to the load that needs them (which reports the error).
    fn build_ahead(&mut self, rows: &Range<u64>) {
        let Some(next) = self.ahead.next_rows(rows, self.ptr_rows) else {
            return;
        };
        let (mut ptrs, mut heap) = (take_vec::<Pointer>(), take_vec::<u8>());
        let Ok(lo) = self.read_raw(&next, &mut ptrs, &mut heap) else {
            give_vec(ptrs);
            give_vec(heap);
            return;
        };
        let placeholder = self.placeholder.clone();
        self.ahead.spawn(next.start, move || {
            let mut out = Vec::new();
            // Stops at a string that is not UTF-8 (see `crate::pipeline::ahead`).
            let _ = build_strings(&ptrs, &heap, lo, placeholder.as_deref(), &mut out);
            give_vec(ptrs);
            give_vec(heap);
            out
        });
    }

    /// The next element, with missing values as `None`.
    pub fn next_opt(&mut self) -> Result<Option<String>> {
        if let Some(v) = self.ahead.pop() {
            return Ok(v);
        }
        let v = self
            .out
            .get_mut(self.pos)
            .ok_or_else(|| exhausted(&self.path))?;
        self.pos += 1;
        Ok(v.take())
    }

    /// The next element; a missing value is an error for a non-optional `String`.
    pub fn next_value(&mut self) -> Result<String> {
        match self.next_opt()? {
            Some(s) => Ok(s),
            None => Err(self.missing_error()),
        }
    }

    /// Skips one element.
    pub fn skip(&mut self) -> Result<()> {
        self.next_opt().map(drop)
    }
}

/// Appends the strings of `ptrs` (checked against the heap by
/// [`VlsDecoder::read_raw`], which read their bytes into `heap` from heap
/// offset `lo`) to `out`: each cut at its first NUL, `None` where equal to
/// `placeholder`. `Err(i)`: pointer `i` is not UTF-8 (`out` then holds the
/// strings before it).
fn build_strings(
    ptrs: &[Pointer],
    heap: &[u8],
    lo: u64,
    placeholder: Option<&str>,
    out: &mut Vec<Option<String>>,
) -> std::result::Result<(), usize> {
    let text = crate::column::Utf8Slices::new(heap);
    out.reserve(ptrs.len());
    for (i, p) in ptrs.iter().enumerate() {
        // In range: checked by `read_raw` against the heap, and lo <= offset.
        let a = if p.length == 0 {
            0
        } else {
            (p.offset - lo) as usize
        };
        let len = p.length as usize;
        let b = match heap[a..a + len].iter().position(|&c| c == 0) {
            Some(z) => a + z,
            None => a + len,
        };
        let s = text.get(a, b).ok_or(i)?;
        if placeholder == Some(s) {
            out.push(None);
        } else {
            out.push(Some(s.to_owned()));
        }
    }
    Ok(())
}
