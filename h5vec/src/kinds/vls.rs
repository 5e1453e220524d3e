//! Compressed VLS strings (SPEC.md section 4.1): a byte heap plus pointers into it.
//!
//! Layout on disk:
//! ```text
//! <field>/heap       1-D uint8 (int8 refused), the string bytes back to back, chunked (compressible)
//! <field>/pointers   1-D compound {offset: uint64, length: uint64}, one per element
//!                    optional string attribute `missing-value-placeholder`
//! ```
//! Element `i` is `heap[offset_i .. offset_i + length_i]`, cut at its first
//! NUL. Writers put consecutive elements on neighbouring heap bytes; with
//! `dedup_strings` repeated values share one slice. Readers accept any
//! unsigned member widths up to 64 bits, entries in any order, and shared or
//! overlapping slices. For `Option<String>`, an element equal to the
//! placeholder attribute is `None`.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::OnceLock;

use hdf5::{Dataset, Group};
use hdf5_sys::h5i::hid_t;
use hdf5_sys::h5t::{self, H5T_class_t};

use crate::codec::{exhausted, expect_members, open_column, range_len, Codec, Decoder, Encoder};
use crate::column::{PodReader, PodWriter};
use crate::error::{At, Context, Error, Place, Result};
use crate::kinds::scalar::scalar_schema;
use crate::limits;
use crate::options::WriteCtx;
use crate::pipeline::ahead::Ahead;
use crate::pipeline::buffers::{give_vec, take_vec};
use crate::raw::{self, MemType};
use crate::schema::{ids, Kind, Schema, Stored};

/// Name of the pointer attribute that holds the missing-value placeholder.
pub(crate) const PLACEHOLDER_ATTR: &str = "missing-value-placeholder";

/// One pointer entry as held in memory (`offset`, `length`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Pointer {
    /// Start of the slice on the heap.
    pub offset: u64,
    /// Length of the slice in bytes.
    pub length: u64,
}

/// Creates the 16-byte compound {offset: `member` at 0, length: `member`
/// at 8}; returns HDF5's id, negative when HDF5 cannot create the type.
fn new_pointer_type(member: hid_t) -> hid_t {
    raw::compound::pair_compound(c"offset", c"length", member, 8)
}

/// The compound type {offset, length} with members of `member` type, owned.
fn pointer_type(member: hid_t, path: impl At) -> Result<hdf5::Datatype> {
    raw::compound::owned_pair(c"offset", c"length", member, 8, path)
}

/// Whether a file type is a valid pointer compound.
pub(crate) fn pointer_type_ok(t: &raw::TypeInfo) -> bool {
    t.class == H5T_class_t::H5T_COMPOUND
        && t.members.len() == 2
        && t.members[0].0 == "offset"
        && t.members[1].0 == "length"
        && t.members
            .iter()
            .all(|(_, m)| m.class == H5T_class_t::H5T_INTEGER && !m.signed && m.size <= 8)
}

/// The pointer compound with `member` integers, created once and kept for
/// the life of the process (a static type id, as HDF5's own types are).
///
/// Only for `Pod`'s `mem_type`/`file_type`, which h5vec's own pointer
/// reads and writes do not call: they use owned types ([`pointer_type`],
/// [`create_pointers`], [`resume_pointers`]), because this id, once made,
/// counts as an object the program holds open (`H5Fget_obj_count` with
/// `H5F_OBJ_ALL`) until the process ends.
fn static_pointer_type(cell: &'static OnceLock<hid_t>, member: hid_t) -> hid_t {
    // On failure every use of the id fails with an HDF5 error.
    *cell.get_or_init(|| new_pointer_type(member))
}

// SAFETY: `#[repr(C)]` with two u64 fields: no padding, every bit pattern
// valid; the memory type is that layout.
unsafe impl raw::Pod for Pointer {
    fn mem_type() -> hid_t {
        static T: OnceLock<hid_t> = OnceLock::new();
        static_pointer_type(&T, *h5t::H5T_NATIVE_UINT64)
    }
    fn file_type() -> hid_t {
        static T: OnceLock<hid_t> = OnceLock::new();
        static_pointer_type(&T, *h5t::H5T_STD_U64LE)
    }
    const ENCODED: &'static str = "Pointer";
    fn accepts(t: &raw::TypeInfo) -> bool {
        pointer_type_ok(t)
    }
}

/// Writes pointer entries (HDF5 converts them to the dataset's member
/// width when it differs from 64 bits).
pub(crate) type PointerWriter = PodWriter<Pointer>;

/// Creates the pointer dataset `name` in `group`. The writer owns its
/// memory type (no process-wide type id, see [`static_pointer_type`]).
fn create_pointers(
    group: &Group,
    name: &str,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PointerWriter> {
    let file = pointer_type(*h5t::H5T_STD_U64LE, path)?;
    let mem = pointer_type(*h5t::H5T_NATIVE_UINT64, path)?;
    let compression = ctx.compression_for(name);
    let chunk = ctx.chunk_rows(16);
    // `mem` is the compound {offset: u64 @0, length: u64 @8}, exactly
    // `Pointer` (repr(C)); `MemType::checked` checks its size.
    PodWriter::create_typed(
        group,
        name,
        &file,
        Some(MemType::checked(mem, path)?),
        &[],
        chunk,
        compression,
        ctx.checksum(),
        path,
    )
}

/// Continues the pointer dataset `ds` at row `count`, with an owned memory
/// type as [`create_pointers`].
fn resume_pointers(ds: Dataset, count: u64, path: &str) -> Result<PointerWriter> {
    let mem = pointer_type(*h5t::H5T_NATIVE_UINT64, path)?;
    // `mem` is the compound {offset: u64 @0, length: u64 @8}, exactly
    // `Pointer` (repr(C)); HDF5 converts it to the dataset's member widths.
    PodWriter::resume_typed(
        ds,
        Some(MemType::checked(mem, path)?),
        Vec::new(),
        count,
        path,
    )
}

/// Reads pointer entries of any unsigned member width.
pub(crate) fn read_pointers(
    ds: &Dataset,
    start: u64,
    n: u64,
    path: impl At,
) -> Result<Vec<Pointer>> {
    let mem = pointer_type(*h5t::H5T_NATIVE_UINT64, path)?;
    // `mem` is the compound {offset: u64 @0, length: u64 @8}, exactly
    // `Pointer` (repr(C)); HDF5 converts narrower unsigned members by name.
    let mut out = Vec::new();
    let mem = MemType::checked(mem, path)?;
    crate::pipeline::rows::read_pod_rows(ds, &mem, start, n, &[], &mut out, path)?;
    Ok(out)
}

/// A field type that `#[h5vec(vls)]` can store as a compressed VLS array.
#[diagnostic::on_unimplemented(
    message = "`#[h5vec(vls)]` stores only `String` and `Option<String>`, not `{Self}`",
    label = "not a string type"
)]
pub trait VlsField: Sized {
    /// The VLS codec for this type.
    type Codec: Codec<Value = Self>;
}

impl VlsField for String {
    type Codec = VlsStringCodec;
}

impl VlsField for Option<String> {
    type Codec = OptVlsStringCodec;
}

/// The compressed VLS layout for `String`.
pub type VlsStringCodec = VlsCodec<String>;

/// The schema node of a VLS string column (`nullable` for `Option<String>`,
/// whose missing values equal the placeholder attribute).
pub(crate) fn vls_schema(nullable: bool) -> Schema {
    if nullable {
        vls_node(
            ids::PLACEHOLDER_CODEC,
            std::any::type_name::<Option<String>>(),
        )
    } else {
        vls_node(ids::H5VEC_CODEC, std::any::type_name::<String>())
    }
}

/// A `vls_string` node with `codec` (what the text means: plain strings,
/// placeholder strings, JSON documents) and `logical_type`; its child is
/// the scalar `String` node (SPEC.md section 4.1).
pub(crate) fn vls_node(codec: &str, logical_type: &str) -> Schema {
    let mut s = Schema::new(Kind::VlsString, ids::VLS, codec, logical_type).encoded("String");
    s.children
        .push(scalar_schema::<String>(ids::IDENTITY, "String"));
    s
}

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

/// Writes the placeholder attribute on the pointers `ds`: a variable-length
/// string, or, when the pointers carry a Fletcher32 checksum (SPEC.md 6.4),
/// a fixed-length one, whose bytes live in the object header (checksummed
/// by HDF5 in `create_file` files) instead of the global heap, which no
/// checksum covers. Placeholders are ASCII (`NA`, `NA_`, ...).
fn write_placeholder(ds: &Dataset, ph: &str, path: &str) -> Result<()> {
    if raw::chunks::has_fletcher32(ds) && ph.is_ascii() {
        return raw::write_attr_ascii(ds, PLACEHOLDER_ATTR, ph, path);
    }
    let v: hdf5::types::VarLenUnicode = ph
        .parse()
        .map_err(|_| Error::encode(path, "placeholder is not a valid HDF5 string"))?;
    ds.new_attr::<hdf5::types::VarLenUnicode>()
        .shape(())
        .create(PLACEHOLDER_ATTR)
        .at(path)?
        .write_scalar(&v)
        .at(path)
}

/// Reads the `missing-value-placeholder` attribute, if any.
pub(crate) fn read_placeholder(ds: &Dataset, path: &str) -> Result<Option<String>> {
    if !raw::has_attr(ds, PLACEHOLDER_ATTR, path)? {
        return Ok(None);
    }
    let p = Place::new(path, ds.name()).attribute(PLACEHOLDER_ATTR);
    crate::raw::gheap::check_attr(ds, PLACEHOLDER_ATTR, &p)?;
    let a = ds.attr(PLACEHOLDER_ATTR).at(&p)?;
    raw::read_attr_string(&a, &p).map(Some)
}

/// Checks that pointer `p` (element `row`) lies inside a heap of `heap_len`
/// bytes, without overflow.
pub(crate) fn check_slice(p: &Pointer, heap_len: u64, at: &Place, row: u64) -> Result<Range<u64>> {
    if p.offset > heap_len {
        return Err(Error::invalid(
            at.element(row),
            format!(
                "pointer offset {} is past the end of the heap ({heap_len} bytes)",
                p.offset
            ),
        ));
    }
    match p.offset.checked_add(p.length) {
        Some(end) if end <= heap_len => Ok(p.offset..end),
        _ => Err(Error::invalid(
            at.element(row),
            format!(
                "pointer slice offset {} + length {} runs past the end of the heap ({heap_len} bytes)",
                p.offset, p.length
            ),
        )),
    }
}

/// Reads a VLS string column.
pub struct VlsDecoder {
    heap: PodReader<u8>,
    /// The pointers (read ahead like any column when compressed).
    ptrs: PodReader<Pointer>,
    ptr_rows: u64,
    placeholder: Option<String>,
    ptr_buf: Vec<Pointer>,
    heap_buf: Vec<u8>,
    out: Vec<Option<String>>,
    pos: usize,
    path: Place,
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

impl Encoder<String> for VlsEncoder {
    fn push(&mut self, value: &String) -> Result<()> {
        VlsEncoder::push(self, value)
    }
    fn push_null(&mut self) -> Result<()> {
        VlsEncoder::push_null(self)
    }
    fn flush(&mut self) -> Result<()> {
        VlsEncoder::flush(self)
    }
}

impl Decoder<String> for VlsDecoder {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        VlsDecoder::load(self, rows)
    }
    fn next(&mut self) -> Result<String> {
        self.next_value()
    }
    fn skip(&mut self) -> Result<()> {
        VlsDecoder::skip(self)
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

/// A value type a VLS column holds: `String`, or `Option<String>` whose
/// `None` is written as the `missing-value-placeholder` string ("NA", or
/// "NA_", "NA__", ... if a real value of the first batch with a missing
/// value uses it).
pub trait VlsValue: Sized + 'static {
    /// Whether missing values are allowed.
    const NULLABLE: bool;
}

impl VlsValue for String {
    const NULLABLE: bool = false;
}

impl VlsValue for Option<String> {
    const NULLABLE: bool = true;
}

/// The compressed VLS layout for `V` (`String` or `Option<String>`).
pub struct VlsCodec<V>(PhantomData<V>);

/// The compressed VLS layout for `Option<String>`.
pub(crate) type OptVlsStringCodec = VlsCodec<Option<String>>;

impl<V: VlsValue> Codec for VlsCodec<V>
where
    VlsEncoder: Encoder<V>,
    VlsDecoder: Decoder<V>,
{
    type Value = V;
    type Encoder = VlsEncoder;
    type Decoder = VlsDecoder;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        vls_schema(V::NULLABLE)
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        VlsEncoder::create(group, path, ctx)
    }

    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        VlsEncoder::resume(Self::open(group, node, path, count)?, count, ctx)
    }

    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self::Decoder> {
        node.expect(&vls_schema(V::NULLABLE), path)?;
        expect_members(group, &["heap", "pointers"], node, path)?;
        VlsDecoder::open_datasets(group, path, count)
    }
}

impl Encoder<Option<String>> for VlsEncoder {
    fn push(&mut self, value: &Option<String>) -> Result<()> {
        match value {
            Some(s) => VlsEncoder::push(self, s),
            None => self.push_missing(),
        }
    }
    fn push_null(&mut self) -> Result<()> {
        self.push_missing()
    }
    fn flush(&mut self) -> Result<()> {
        VlsEncoder::flush(self)
    }
}

impl Decoder<Option<String>> for VlsDecoder {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        VlsDecoder::load(self, rows)
    }
    fn next(&mut self) -> Result<Option<String>> {
        self.next_opt()
    }
    fn skip(&mut self) -> Result<()> {
        VlsDecoder::skip(self)
    }
}
