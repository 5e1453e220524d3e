//! The `list` kind's Arrow writer: `ListCol`, a list group's `OFFSETS`
//! from the spans of Arrow list arrays (binary arrays as lists of `UInt8`)
//! and its elements, written by a child writer (generic over `ChildCol`, so
//! that this file names no other kind's writer); and the writers of the
//! element kinds of the list folder: `fill_nullable` numbers (`Fill`) and
//! `string_values` (`write_strings`). Datasets come from the typed list's
//! create and open functions (SPEC.md sections 4.2, 4.3 and 11).

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, OffsetSizeTrait};
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::arrow::numbers::numbers;
use crate::arrow::write::col::{
    bad_key, check_nulls, first_child, hole, null_value, wrong_array, At, Bytes, ChildCol, Texts,
};
use crate::codec::{open_group, Encoder};
use crate::column::PodWriter;
use crate::error::{Context, Error, Result};
use crate::kinds::list::{
    create_list_group, items_path, open_list_group, open_list_group_with, FillEncoder, FillItem,
    FillNumber, ItemCodec, StringValuesEncoder,
};
use crate::options::WriteCtx;
use crate::schema::{ids, Schema, Stored};

/// A list group: `OFFSETS` and the elements' writer.
pub(crate) struct ListCol<C> {
    offsets: PodWriter<u64>,
    end: u64,
    items: C,
}

impl<C: ChildCol> ListCol<C> {
    /// Creates list field `node` in its data group `group`.
    pub(crate) fn create(
        node: &Schema,
        group: &Group,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let offsets = create_list_group(group, path, ctx)?;
        let child = first_child(node, path)?;
        let items = C::create_item(child, group, "VALUES", &items_path(path), ctx)?;
        Ok(ListCol {
            offsets,
            end: 0,
            items,
        })
    }

    /// Creates a list element: group `name` of `parent`.
    pub(crate) fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let g = parent.create_group(name).at(path)?;
        ListCol::create(node, &g, path, ctx)
    }

    /// Opens list field `node` of `count` rows in `group` for appending.
    pub(crate) fn append(
        node: &Stored,
        group: &Group,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let (offsets, total) = if node.codec == ids::MAP_CODEC {
            open_list_group_with(group, node, path, count, ids::MAP_CODEC)?
        } else {
            open_list_group(group, node, path, count)?
        };
        let child = node.child(0, path)?;
        let items = C::append_item(child, group, "VALUES", &items_path(path), total, ctx)?;
        let rows = count
            .checked_add(1)
            .ok_or_else(|| Error::invalid(path, "count overflows"))?;
        Ok(ListCol {
            offsets: PodWriter::resume(offsets.ds, Vec::new(), rows, path)?,
            end: total,
            items,
        })
    }

    /// Opens list element group `name` of `parent` (`rows` lists) for appending.
    pub(crate) fn append_item(
        node: &Stored,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        ListCol::append(node, &open_group(parent, name, path)?, path, rows, ctx)
    }

    /// Buffers a list array (`List`, `LargeList`, or binary as `UInt8`s).
    pub(crate) fn write(
        &mut self,
        arr: &dyn Array,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        check_nulls(arr.logical_nulls().as_ref(), holes, at)?;
        if let Some(a) = arr.as_list_opt::<i32>() {
            self.write_spans(a.value_offsets(), a.values(), holes, at)
        } else if let Some(a) = arr.as_list_opt::<i64>() {
            self.write_spans(a.value_offsets(), a.values(), holes, at)
        } else if let Some(b) = Bytes::of(arr) {
            self.write_bytes(&b, arr.len(), holes, at)
        } else {
            Err(wrong_array(at, "a list", arr))
        }
    }

    /// The elements, then OFFSETS (SPEC.md section 8).
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.items.flush()?;
        self.offsets.flush()
    }
}

impl<C: ChildCol> ListCol<C> {
    /// A list array: OFFSETS from its spans (a null row an empty span),
    /// then the elements of the rows' spans, one contiguous run at a time.
    fn write_spans<O: OffsetSizeTrait>(
        &mut self,
        offsets: &[O],
        child: &ArrayRef,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let items_at = items_path(at.path);
        // (first element, end element, element index in VALUES of the first)
        let mut run: Option<(usize, usize, u64)> = None;
        for (i, w) in offsets.windows(2).enumerate() {
            let (a, b) = match (w[0].to_usize(), w[1].to_usize()) {
                (Some(a), Some(b)) if a <= b && b <= child.len() => (a, b),
                _ => {
                    return Err(Error::invalid(
                        at.row(i),
                        "list offsets out of order or past the list's values",
                    ))
                }
            };
            if hole(holes, i) {
                self.offsets.buf.push(self.end);
                continue;
            }
            let first = self.end;
            self.end += (b - a) as u64;
            self.offsets.buf.push(self.end);
            run = match run {
                Some((s, e, base)) if e == a => Some((s, b, base)),
                Some((s, e, base)) => {
                    self.write_run(child, s, e, base, &items_at)?;
                    Some((a, b, first))
                }
                None => Some((a, b, first)),
            };
        }
        if let Some((s, e, base)) = run {
            self.write_run(child, s, e, base, &items_at)?;
        }
        Ok(())
    }

    fn write_run(
        &mut self,
        child: &ArrayRef,
        s: usize,
        e: usize,
        base: u64,
        path: &str,
    ) -> Result<()> {
        if s == e {
            return Ok(());
        }
        let part = child.slice(s, e - s);
        self.items.write(part.as_ref(), None, &At { path, base })
    }

    /// A binary array as a list of `UInt8`: each row's bytes straight into
    /// the element buffer.
    fn write_bytes(
        &mut self,
        bytes: &Bytes<'_>,
        rows: usize,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let Some(w) = self.items.u8_leaf() else {
            return Err(Error::mismatch(
                at.path,
                "a list of UInt8 for Arrow binary values",
                "a list of other elements",
            ));
        };
        for i in 0..rows {
            if !hole(holes, i) {
                let b = bytes.get(i);
                w.buf.extend_from_slice(b);
                self.end += b.len() as u64;
            }
            self.offsets.buf.push(self.end);
        }
        Ok(())
    }
}

numbers! {
    /// A `fill_nullable` element writer of one of the number types.
    pub(crate) enum Fill {
        numbers(FillEncoder<native>),
    }
}

trait MakeFill {
    fn make<T: FillNumber>(&self) -> Result<FillEncoder<T>>
    where
        FillItem<T>: ItemCodec<Encoder = FillEncoder<T>>;
}

impl Fill {
    fn make(enc: Option<&str>, m: &impl MakeFill, path: &str) -> Result<Fill> {
        Ok(numbers!(by_name (enc.unwrap_or("")) {
            Fill::number(m.make()?),
            e => {
                return Err(Error::mismatch(
                    path,
                    "a fill_nullable node of a number type",
                    format!("encoded type `{e}`"),
                ))
            }
        }))
    }
}

struct CreateFill<'a> {
    parent: &'a Group,
    name: &'a str,
    path: &'a str,
    ctx: &'a WriteCtx<'a>,
}

impl MakeFill for CreateFill<'_> {
    fn make<T: FillNumber>(&self) -> Result<FillEncoder<T>>
    where
        FillItem<T>: ItemCodec<Encoder = FillEncoder<T>>,
    {
        FillItem::<T>::create(self.parent, self.name, self.path, self.ctx)
    }
}

struct ResumeFill<'a> {
    parent: &'a Group,
    name: &'a str,
    node: &'a Stored,
    path: &'a str,
    rows: u64,
    ctx: &'a WriteCtx<'a>,
}

impl MakeFill for ResumeFill<'_> {
    fn make<T: FillNumber>(&self) -> Result<FillEncoder<T>>
    where
        FillItem<T>: ItemCodec<Encoder = FillEncoder<T>>,
    {
        FillItem::<T>::append(
            self.parent,
            self.name,
            self.node,
            self.path,
            self.rows,
            self.ctx,
        )
    }
}

impl Fill {
    /// Creates `fill_nullable` element member `name` of `parent`.
    pub(crate) fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Fill> {
        let m = CreateFill {
            parent,
            name,
            path,
            ctx,
        };
        Fill::make(node.encoded_type.as_deref(), &m, path)
    }

    /// Opens `fill_nullable` element member `name` of `parent` (`rows`
    /// elements) for appending.
    pub(crate) fn append_item(
        node: &Stored,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Fill> {
        let m = ResumeFill {
            parent,
            name,
            node,
            path,
            rows,
            ctx,
        };
        Fill::make(node.encoded_type.as_deref(), &m, path)
    }

    /// Buffers numbers; a null (or a row under an enclosing null) gets the
    /// fill value.
    pub(crate) fn write(
        &mut self,
        arr: &dyn Array,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let nulls = arr.logical_nulls();
        let missing = |i: usize| hole(holes, i) || nulls.as_ref().is_some_and(|n| n.is_null(i));
        numbers!(match (self) {
            Fill::number(e) as A => {
                let a = arr
                    .as_primitive_opt::<A>()
                    .ok_or_else(|| wrong_array(at, "numbers", arr))?;
                for (i, &v) in a.values().iter().enumerate() {
                    if missing(i) {
                        Encoder::push_null(e)?;
                    } else {
                        e.push_value(v)?;
                    }
                }
                Ok(())
            },
        })
    }

    pub(crate) fn flush(&mut self) -> Result<()> {
        numbers!(match (self) {
            Fill::number(e) as _A => Encoder::flush(e),
        })
    }
}

/// Buffers `string_values` elements (a row under an enclosing null gets
/// the typed encoder's placeholder).
pub(crate) fn write_strings(
    e: &mut StringValuesEncoder,
    arr: &dyn Array,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
    let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "strings", arr))?;
    let nulls = arr.logical_nulls();
    for i in 0..arr.len() {
        if hole(holes, i) {
            Encoder::<String>::push_null(e)?;
        } else if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return Err(null_value(at, i));
        } else {
            e.push_str(texts.get(i).ok_or_else(|| bad_key(at, i))?);
        }
    }
    Ok(())
}
