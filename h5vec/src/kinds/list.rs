//! List columns (seed 001, h5col's offsets layout): `Vec<T>` fields.
//!
//! Layout on disk:
//! ```text
//! <field>/                 group, attributes CLASS = "LIST_COLUMN", KIND = "OFFSETS"
//! <field>/OFFSETS          1-D uint64, count + 1 entries, OFFSETS[0] = 0, non-decreasing;
//!                          row i is VALUES[OFFSETS[i] .. OFFSETS[i+1]]
//! <field>/MASK             (Option<Vec<T>> only) h5col bool per row, TRUE = present;
//!                          a null row has an empty span
//! <field>/VALUES           the elements of all rows back to back:
//!   numbers, bool, char, enums   1-D dataset (bool as the h5col enum; [T; N] adds axes)
//!   String                       group CLASS = "STRING_VALUES": OFFSETS (uint64, n + 1)
//!                                and CHARS (uint8, int8 refused); Option<String> adds MASK
//!   Vec<U>                       another list group, to any depth; Option<Vec<U>> adds MASK
//!   derived struct / tuple       group CLASS = "RECORD_VALUES" holding one column per
//!                                field in the record layout (h5vec's extension to h5col)
//! ```
//! No variable-length HDF5 type appears anywhere below a list column.

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{
    exhausted, expect_members, open_column, open_group, range_len, Codec, Decoder, Encoder,
    H5Vector,
};
use crate::column::{PodReader, PodWriter};
use crate::error::{Context, Error, Result};
use crate::kinds::dense::{
    dense_schema, shape_of, shape_of_u64, DenseDecoder, DenseElem, DenseEncoder, RawOf,
};
use crate::kinds::nullable::{
    check_nullable, child_with_mask, create_mask, nullable_schema, open_mask, MaskedDecoder,
    MaskedEncoder,
};
use crate::kinds::record::{Record, RecordCodec};
use crate::kinds::scalar::{scalar_schema, Scalar};
use crate::limits;
use crate::options::WriteCtx;
use crate::raw::{self, Pod};
use crate::schema::{ids, Schema, Stored};

/// `CLASS` of a list group.
pub const LIST_COLUMN: &str = "LIST_COLUMN";
/// `KIND` of a list group.
pub const KIND_OFFSETS: &str = "OFFSETS";
/// `CLASS` of a string values group.
pub const STRING_VALUES: &str = "STRING_VALUES";
/// `CLASS` of a record values group (h5vec's extension).
pub const RECORD_VALUES: &str = "RECORD_VALUES";

/// How a type is stored as the elements of a list (the `VALUES` member).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element of an h5vec list column",
    note = "list elements are numbers, bool, char, fieldless enums, fixed-size arrays, String, Option<String>, Vec<_>, Option<Vec<_>> and derived structs; store other data through serde with `#[h5vec(blob)]` or `#[h5vec(json)]` on the field"
)]
pub trait ListItem: Sized + 'static {
    /// The element layout.
    type Item: ItemCodec<Value = Self>;
}

/// One element layout: a member named `name` (usually `VALUES`) of a list group.
pub trait ItemCodec: 'static {
    /// The element type.
    type Value;
    /// Writes elements.
    type Encoder: Encoder<Self::Value>;
    /// Reads elements.
    type Decoder: Decoder<Self::Value>;
    /// The element's schema node (the list node's child).
    fn schema(ctx: &WriteCtx<'_>) -> Schema;
    /// Creates the member.
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder>;
    /// Opens the member, which must hold at least `rows` elements.
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder>;
    /// Opens the member for appending after its first `rows` elements.
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder>;
}

fn u64_ok(t: &raw::TypeInfo) -> bool {
    u64::accepts(t)
}

fn check_class(g: &Group, want: &str, path: &str) -> Result<()> {
    let p = format!("{path} ({})", g.name());
    match raw::attr_string(g, "CLASS", &p)? {
        Some(c) if c == want => Ok(()),
        Some(c) => Err(Error::mismatch(
            p,
            format!("CLASS = \"{want}\""),
            format!("CLASS = {c:?}"),
        )),
        None => Err(Error::mismatch(
            p,
            format!("CLASS = \"{want}\""),
            "no CLASS attribute",
        )),
    }
}

// ---------------------------------------------------------------------------
// The list group itself.

/// Writes a list group: items first, then OFFSETS.
pub struct ListEncoder<I: ItemCodec> {
    offsets: PodWriter<u64>,
    items: I::Encoder,
    end: u64,
}

/// Reads a list group.
pub struct ListDecoder<I: ItemCodec> {
    offsets: PodReader<u64>,
    items: I::Decoder,
    /// OFFSETS of the loaded rows (one more than rows), reused batch to batch.
    offs: Vec<u64>,
    /// Index into `offs` of the next row.
    idx: usize,
    next_row: u64,
    /// `OFFSETS[count]`: no offset of a row before `count` exceeds it, and
    /// `VALUES` stores that many elements (checked on open).
    total: u64,
}

fn items_path(path: &str) -> String {
    format!("{path}[]")
}

impl<I: ItemCodec> ListEncoder<I> {
    /// Makes `group` a list group: attributes, `OFFSETS = [0]`, and `VALUES`.
    pub fn create_in(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self> {
        raw::write_attr_ascii(group, "CLASS", LIST_COLUMN, path)?;
        raw::write_attr_ascii(group, "KIND", KIND_OFFSETS, path)?;
        let mut offsets = PodWriter::create(group, "OFFSETS", &[], ctx.chunk_rows(8), path, ctx)?;
        offsets.buf.push(0);
        offsets.flush()?;
        let items = I::create(group, "VALUES", &items_path(path), ctx)?;
        Ok(ListEncoder {
            offsets,
            items,
            end: 0,
        })
    }

    /// Continues a list group of `count` rows, opened and checked by [`ListDecoder::open_in`].
    pub fn resume_in(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let dec = ListDecoder::<I>::open_in(group, node, path, count)?;
        let end = dec.offsets.read(count, 1)?[0];
        let items = I::append(
            group,
            "VALUES",
            node.child(0, path)?,
            &items_path(path),
            end,
            ctx,
        )?;
        Ok(ListEncoder {
            offsets: PodWriter::resume(dec.offsets.ds, Vec::new(), count + 1, path)?,
            items,
            end,
        })
    }

    /// Pushes one row.
    #[inline]
    pub fn push_row<'a, T: 'a>(&mut self, row: impl ExactSizeIterator<Item = &'a T>) -> Result<()>
    where
        I::Encoder: Encoder<T>,
    {
        let n = row.len() as u64;
        for x in row {
            self.items.push(x)?;
        }
        self.end += n;
        self.offsets.buf.push(self.end);
        Ok(())
    }

    /// Pushes an empty (or null) row.
    pub fn push_empty(&mut self) {
        self.offsets.buf.push(self.end);
    }

    /// Writes the batch: VALUES first, then OFFSETS.
    pub fn flush(&mut self) -> Result<()> {
        self.flush_items()?;
        self.flush_offsets()
    }

    /// Writes the buffered elements (the `VALUES` member) only. With
    /// [`flush_offsets`](Self::flush_offsets) this lets a table write every
    /// column's values, then its masks, then its offsets (h5col's order).
    pub fn flush_items(&mut self) -> Result<()> {
        self.items.flush()
    }

    /// Writes the buffered `OFFSETS` entries only (after [`flush_items`](Self::flush_items)).
    pub fn flush_offsets(&mut self) -> Result<()> {
        self.offsets.flush()
    }
}

impl<I: ItemCodec> ListDecoder<I> {
    /// Opens list group `group` of `count` rows and checks it.
    pub fn open_in(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self> {
        node.expect(&list_node_shape(), path)?;
        check_class(group, LIST_COLUMN, path)?;
        let p = format!("{path} ({})", group.name());
        match raw::attr_string(group, "KIND", &p)? {
            Some(k) if k == KIND_OFFSETS => {}
            other => {
                return Err(Error::mismatch(
                    p,
                    "KIND = \"OFFSETS\"",
                    format!("{other:?}"),
                ))
            }
        }
        expect_members(group, &["OFFSETS", "VALUES"], node, path)?;
        let need = count
            .checked_add(1)
            .ok_or_else(|| Error::invalid(path, "count overflows"))?;
        let (ds, n) = open_column(group, "OFFSETS", path, &[], need, u64_ok, "uint64 OFFSETS")?;
        let offsets = PodReader::<u64>::new(ds, Vec::new(), n, path)?;
        let first = offsets.read(0, 1)?[0];
        if first != 0 {
            return Err(Error::invalid(
                offsets.element(0),
                format!("OFFSETS[0] must be 0, found {first}"),
            ));
        }
        let total = offsets.read(count, 1)?[0];
        limits::check_empty_rows::<I::Value>(total, &items_path(path))?;
        let items = I::open(
            group,
            "VALUES",
            node.child(0, path)?,
            &items_path(path),
            total,
        )?;
        Ok(ListDecoder {
            offsets,
            items,
            offs: Vec::new(),
            idx: 0,
            next_row: 0,
            total,
        })
    }

    #[inline]
    fn next_len(&mut self) -> Result<usize> {
        let (a, b) = match (self.offs.get(self.idx), self.offs.get(self.idx + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => return Err(exhausted(self.offsets.path())),
        };
        // Non-decreasing: checked in `load`.
        let n = b - a;
        self.idx += 1;
        self.next_row += 1;
        usize::try_from(n)
            .map_err(|_| Error::invalid(self.offsets.element(self.next_row - 1), "row too long"))
    }
}

fn list_node_shape() -> Schema {
    let mut s = Schema::new("list", ids::LIST, ids::H5VEC_CODEC, "");
    s.children.push(Schema::new("", "", "", ""));
    s
}

fn list_schema<T, I: ItemCodec>(ctx: &WriteCtx<'_>) -> Schema {
    let mut s = Schema::new(
        "list",
        ids::LIST,
        ids::H5VEC_CODEC,
        std::any::type_name::<Vec<T>>(),
    );
    s.children.push(I::schema(ctx));
    s
}

impl<T, I: ItemCodec<Value = T>> Encoder<Vec<T>> for ListEncoder<I> {
    #[inline]
    fn push(&mut self, value: &Vec<T>) -> Result<()> {
        self.push_row(value.iter())
    }
    fn push_null(&mut self) -> Result<()> {
        self.push_empty();
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        ListEncoder::flush(self)
    }
}

impl<T, I: ItemCodec<Value = T>> Decoder<Vec<T>> for ListDecoder<I> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.offsets.path())?;
        self.offsets.read_into(rows.start, n + 1, &mut self.offs)?;
        let offs = &self.offs;
        if let Some(i) = offs.windows(2).position(|w| w[1] < w[0]) {
            return Err(Error::invalid(
                self.offsets.element(rows.start + i as u64 + 1),
                format!(
                    "OFFSETS must not decrease: {} after {}",
                    offs[i + 1],
                    offs[i]
                ),
            ));
        }
        let last = offs[offs.len() - 1];
        if last > self.total {
            return Err(past_total(self.offsets.element(rows.end), last, self.total));
        }
        self.items.load(offs[0]..last)?;
        self.idx = 0;
        self.next_row = rows.start;
        Ok(())
    }
    #[inline]
    fn next(&mut self) -> Result<Vec<T>> {
        let n = self.next_len()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.items.next()?);
        }
        Ok(v)
    }
    fn skip(&mut self) -> Result<()> {
        let n = self.next_len()?;
        for _ in 0..n {
            self.items.skip()?;
        }
        Ok(())
    }
    fn skip_null(&mut self) -> Result<()> {
        let n = self.next_len()?;
        if n != 0 {
            return Err(Error::invalid(
                self.offsets.element(self.next_row - 1),
                format!("a null row (MASK = FALSE) must have an empty span, found {n} elements"),
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Vec<T> as a vector field, and as a nested list element.

/// `Vec<T>` stored as a list column in the field group.
pub struct ListCodec<T>(PhantomData<T>);

impl<T: ListItem> H5Vector for Vec<T> {
    type Codec = ListCodec<T>;
}

impl<T: ListItem> Codec for ListCodec<T> {
    type Value = Vec<T>;
    type Encoder = ListEncoder<T::Item>;
    type Decoder = ListDecoder<T::Item>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        list_schema::<T, T::Item>(ctx)
    }
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        ListEncoder::create_in(group, path, ctx)
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        ListEncoder::resume_in(group, node, path, count, ctx)
    }
    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self::Decoder> {
        ListDecoder::open_in(group, node, path, count)
    }
}

/// `Vec<T>` as the element of an enclosing list: a nested list group.
pub struct ListItemCodec<T>(PhantomData<T>);

impl<T: ListItem> ListItem for Vec<T> {
    type Item = ListItemCodec<T>;
}

impl<T: ListItem> ItemCodec for ListItemCodec<T> {
    type Value = Vec<T>;
    type Encoder = ListEncoder<T::Item>;
    type Decoder = ListDecoder<T::Item>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        list_schema::<T, T::Item>(ctx)
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let g = parent.create_group(name).at(path)?;
        ListEncoder::create_in(&g, path, ctx)
    }
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder> {
        ListDecoder::open_in(&open_group(parent, name, path)?, node, path, rows)
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        ListEncoder::resume_in(&open_group(parent, name, path)?, node, path, rows, ctx)
    }
}

// ---------------------------------------------------------------------------
// Nullable elements: a MASK inside the element's own group.

/// `Option<V>` elements whose layout `I` is a group: `I`'s members plus `MASK`.
pub struct NullableItem<I>(PhantomData<I>);

impl<I: ItemCodec> ItemCodec for NullableItem<I> {
    type Value = Option<I::Value>;
    type Encoder = MaskedEncoder<I::Encoder>;
    type Decoder = MaskedDecoder<I::Decoder>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        nullable_schema::<I::Value>(I::schema(ctx))
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let inner = I::create(parent, name, path, ctx)?;
        let g = parent.group(name).at(path)?;
        Ok(MaskedEncoder::new(inner, create_mask(&g, path, ctx)?))
    }
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder> {
        check_nullable(node, path)?;
        let g = open_group(parent, name, path)?;
        let mask = open_mask(&g, path, rows)?;
        let inner = I::open(parent, name, &child_with_mask(node, path)?, path, rows)?;
        Ok(MaskedDecoder::new(inner, mask))
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        check_nullable(node, path)?;
        let g = open_group(parent, name, path)?;
        let mask = open_mask(&g, path, rows)?;
        let inner = I::append(parent, name, &child_with_mask(node, path)?, path, rows, ctx)?;
        Ok(MaskedEncoder::new(
            inner,
            PodWriter::resume(mask.ds, Vec::new(), rows, path)?,
        ))
    }
}

impl<T: ListItem> ListItem for Option<Vec<T>> {
    type Item = NullableItem<ListItemCodec<T>>;
}

impl ListItem for Option<String> {
    type Item = NullableItem<StringValuesItem>;
}

// ---------------------------------------------------------------------------
// Leaf elements: one dataset.

/// Numbers, bool, char, enums and fixed-size arrays of them as a leaf dataset.
pub struct LeafItem<A>(PhantomData<A>);

fn leaf_schema<A: DenseElem>() -> Schema {
    if A::LEAVES == 1 && shape_of::<A>().is_empty() {
        scalar_schema::<A>(<A::Leaf as Scalar>::CODEC, <RawOf<A> as Pod>::ENCODED)
    } else {
        dense_schema::<A>()
    }
}

/// Checks the leaf's schema node and opens its dataset (at least `rows` rows):
/// the dataset, its rows, and the element shape.
fn open_leaf<A: DenseElem>(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
) -> Result<(hdf5::Dataset, u64, Vec<u64>)> {
    node.expect(&leaf_schema::<A>(), path)?;
    let inner = shape_of_u64::<A>();
    let (ds, n) = open_column(
        parent,
        name,
        path,
        &inner,
        rows,
        <RawOf<A> as Pod>::accepts,
        <RawOf<A> as Pod>::ENCODED,
    )?;
    Ok((ds, n, inner))
}

impl<A: DenseElem> ItemCodec for LeafItem<A> {
    type Value = A;
    type Encoder = DenseEncoder<A>;
    type Decoder = DenseDecoder<A>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        leaf_schema::<A>()
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        // h5col requires its enum for booleans below a list column.
        let dt = if <RawOf<A> as Pod>::AS_STORED {
            raw::h5col_bool(path)?
        } else {
            raw::copy_type(<RawOf<A> as Pod>::file_type(), path)?
        };
        let shape = shape_of::<A>();
        let chunk = ctx.chunk_rows(A::LEAVES.max(1) * std::mem::size_of::<RawOf<A>>());
        let w = PodWriter::create_as(
            parent,
            name,
            &dt,
            &shape,
            chunk,
            ctx.compression_for(name),
            path,
        )?;
        Ok(DenseEncoder::from_writer(w))
    }
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder> {
        let (ds, n, inner) = open_leaf::<A>(parent, name, node, path, rows)?;
        Ok(DenseDecoder::from_reader(PodReader::new(
            ds, inner, n, path,
        )?))
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let (ds, _, inner) = open_leaf::<A>(parent, name, node, path, rows)?;
        Ok(DenseEncoder::from_writer(PodWriter::resume(
            ds, inner, rows, path,
        )?))
    }
}

macro_rules! leaf_items {
    ($($t:ty),*) => {$(
        impl ListItem for $t {
            type Item = LeafItem<$t>;
        }
    )*};
}
leaf_items!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool, char);

impl<T: DenseElem, const N: usize> ListItem for [T; N] {
    type Item = LeafItem<[T; N]>;
}

// ---------------------------------------------------------------------------
// Strings: STRING_VALUES group.

/// `String` elements as a STRING_VALUES group (OFFSETS + CHARS).
pub struct StringValuesItem;

impl ListItem for String {
    type Item = StringValuesItem;
}

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
    buf: Vec<u8>,
    /// `buf` is valid UTF-8 as a whole.
    utf8: bool,
    /// OFFSETS of the loaded strings (one more than strings), reused.
    offs: Vec<u64>,
    /// Index into `offs` of the next string.
    idx: usize,
    next_row: u64,
    /// `OFFSETS[rows]`, the bytes of all strings (as for [`ListDecoder`]).
    total: u64,
}

/// An offset of a row before `count` past the offset of row `count`.
fn past_total(at: String, offset: u64, total: u64) -> Error {
    Error::invalid(
        at,
        format!("offset {offset} is past the last offset {total} (OFFSETS must not decrease)"),
    )
}

fn string_values_schema() -> Schema {
    Schema::new(
        "string_values",
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
        let mut offsets = PodWriter::create(&g, "OFFSETS", &[], ctx.chunk_rows(8), path, ctx)?;
        offsets.buf.push(0);
        offsets.flush()?;
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
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder> {
        node.expect(&string_values_schema(), path)?;
        let g = open_group(parent, name, path)?;
        check_class(&g, STRING_VALUES, path)?;
        expect_members(&g, &["OFFSETS", "CHARS"], node, path)?;
        let need = rows
            .checked_add(1)
            .ok_or_else(|| Error::invalid(path, "count overflows"))?;
        let (ods, on) = open_column(&g, "OFFSETS", path, &[], need, u64_ok, "uint64 OFFSETS")?;
        let offsets = PodReader::<u64>::new(ods, Vec::new(), on, path)?;
        let first = offsets.read(0, 1)?[0];
        if first != 0 {
            return Err(Error::invalid(
                offsets.element(0),
                format!("OFFSETS[0] must be 0, found {first}"),
            ));
        }
        let total = offsets.read(rows, 1)?[0];
        let (cds, cn) = open_column(
            &g,
            "CHARS",
            path,
            &[],
            total,
            limits::is_uint8,
            "uint8 CHARS",
        )?;
        Ok(StringValuesDecoder {
            offsets,
            chars: PodReader::new(cds, Vec::new(), cn, path)?,
            buf: Vec::new(),
            utf8: false,
            offs: Vec::new(),
            idx: 0,
            next_row: 0,
            total,
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

impl Encoder<String> for StringValuesEncoder {
    #[inline]
    fn push(&mut self, value: &String) -> Result<()> {
        self.chars.buf.extend_from_slice(value.as_bytes());
        self.end += value.len() as u64;
        self.offsets.buf.push(self.end);
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

impl StringValuesDecoder {
    /// The byte span of the next string in `buf`, advancing.
    #[inline]
    fn next_span(&mut self) -> Result<(usize, usize)> {
        let (a, b) = match (self.offs.get(self.idx), self.offs.get(self.idx + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => return Err(exhausted(self.offsets.path())),
        };
        self.idx += 1;
        self.next_row += 1;
        // Checked in `load`: non-decreasing, from `base`, within `buf`.
        let base = self.offs[0];
        Ok(((a - base) as usize, (b - base) as usize))
    }
}

impl Decoder<String> for StringValuesDecoder {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.offsets.path())?;
        self.offsets.read_into(rows.start, n + 1, &mut self.offs)?;
        let offs = &self.offs;
        if let Some(i) = offs.windows(2).position(|w| w[1] < w[0]) {
            return Err(Error::invalid(
                self.offsets.element(rows.start + i as u64 + 1),
                format!(
                    "OFFSETS must not decrease: {} after {}",
                    offs[i + 1],
                    offs[i]
                ),
            ));
        }
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
            return Err(Error::invalid(self.offsets.path(), "span too large"));
        }
        self.chars.read_into(base, last - base, &mut self.buf)?;
        self.utf8 = std::str::from_utf8(&self.buf).is_ok();
        self.idx = 0;
        self.next_row = rows.start;
        Ok(())
    }
    #[inline]
    fn next(&mut self) -> Result<String> {
        let row = self.next_row;
        let (a, end) = self.next_span()?;
        let text = if self.utf8 {
            // SAFETY: `buf` was validated as UTF-8 as a whole in `load`;
            // `get` then checks both ends are character boundaries.
            unsafe { std::str::from_utf8_unchecked(&self.buf) }.get(a..end)
        } else {
            self.buf
                .get(a..end)
                .and_then(|b| std::str::from_utf8(b).ok())
        };
        if end > self.buf.len() {
            return Err(exhausted(self.offsets.path()));
        }
        text.map(str::to_owned)
            .ok_or_else(|| Error::invalid(self.offsets.element(row), "string is not valid UTF-8"))
    }
    fn skip(&mut self) -> Result<()> {
        self.next_span().map(drop)
    }
}

// ---------------------------------------------------------------------------
// Records: RECORD_VALUES group with the record layout inside.

/// Derived structs and tuples as list elements: a RECORD_VALUES group.
pub struct RecordItem<R>(PhantomData<R>);

impl<R: Record> ItemCodec for RecordItem<R> {
    type Value = R;
    type Encoder = <RecordCodec<R> as Codec>::Encoder;
    type Decoder = <RecordCodec<R> as Codec>::Decoder;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        RecordCodec::<R>::schema(ctx)
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let g = parent.create_group(name).at(path)?;
        raw::write_attr_ascii(&g, "CLASS", RECORD_VALUES, path)?;
        RecordCodec::<R>::create(&g, path, ctx)
    }
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder> {
        let g = open_group(parent, name, path)?;
        check_class(&g, RECORD_VALUES, path)?;
        RecordCodec::<R>::open(&g, node, path, rows)
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let g = open_group(parent, name, path)?;
        check_class(&g, RECORD_VALUES, path)?;
        RecordCodec::<R>::append(&g, node, path, rows, ctx)
    }
}
