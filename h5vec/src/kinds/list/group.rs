//! The list group of a list column ([`ListEncoder`], [`ListDecoder`],
//! [`ListCodec`]): `OFFSETS` beside an element member `VALUES` whose
//! layout an [`ItemCodec`] gives.

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::H5Vector;
use crate::codec::{Codec, Decoder, Encoder};
use crate::column::PodWriter;
use crate::error::Result;
use crate::evolution::LoadFlags;
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::limits;
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

use super::item::{ItemCodec, ListItem};
use super::offsets::{create_list_group, items_path, open_list_group, RowSpans};

/// Writes a list group: items first, then OFFSETS.
pub struct ListEncoder<I: ItemCodec> {
    offsets: PodWriter<u64>,
    items: I::Encoder,
    end: u64,
}

/// Reads a list group.
pub struct ListDecoder<I: ItemCodec> {
    spans: RowSpans,
    items: I::Decoder,
}

impl<I: ItemCodec> ListEncoder<I> {
    /// Makes `group` a list group: attributes, `OFFSETS = [0]`, and `VALUES`.
    pub fn create_in(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self> {
        let offsets = create_list_group(group, path, ctx)?;
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
        let dec = ListDecoder::<I>::open_in(group, node, path, count, LoadFlags::default())?;
        let end = dec.spans.offsets.read(count, 1)?[0];
        let items = I::append(
            group,
            "VALUES",
            node.child(0, path)?,
            &items_path(path),
            end,
            ctx,
        )?;
        Ok(ListEncoder {
            offsets: PodWriter::resume(dec.spans.offsets.ds, Vec::new(), count + 1, path)?,
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
    pub fn open_in(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self> {
        let (offsets, total) = open_list_group(group, node, path, count)?;
        limits::check_empty_rows::<I::Value>(total, &items_path(path))?;
        let items = I::open_with(
            group,
            "VALUES",
            node.child(0, path)?,
            &items_path(path),
            total,
            load,
        )?;
        Ok(ListDecoder {
            spans: RowSpans::new(offsets, total),
            items,
        })
    }
}

pub(super) fn list_schema<T, I: ItemCodec>(ctx: &WriteCtx<'_>) -> Schema {
    let mut s = Schema::new(
        Kind::List,
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
        let elements = self.spans.load(&rows)?;
        self.items.load(elements)
    }
    #[inline]
    fn next(&mut self) -> Result<Vec<T>> {
        let n = self.spans.next_len()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.items.next()?);
        }
        Ok(v)
    }
    fn skip(&mut self) -> Result<()> {
        let n = self.spans.next_len()?;
        for _ in 0..n {
            self.items.skip()?;
        }
        Ok(())
    }
    fn skip_null(&mut self) -> Result<()> {
        self.spans.skip_null()
    }
}

// ---------------------------------------------------------------------------
// Vec<T> as a vector field.

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
    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        ListDecoder::open_in(group, node, path, count, load)
    }
}

/// `Option<Vec<T>>`: the list group with a `MASK` beside `OFFSETS` (h5col's
/// nullable list column).
impl<T: ListItem> Nullable for ListCodec<T> {
    type Codec = NullableCodec<ListCodec<T>>;
}
