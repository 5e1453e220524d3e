//! The `nullable` kind's Arrow writer: an `Option<T>` column is the mask
//! (`Bits8`, one per row: the union of the array's nulls and the enclosing
//! ones) and `T`'s column written by a child writer (generic over
//! `ChildCol`, so that this file names no other kind's writer), with the
//! placeholders the typed encoder writes under each null; created and
//! opened by the typed nullable's and list's functions (SPEC.md sections
//! 4.3 and 11).

use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::arrow::write::col::{first_child, not_here, At, ChildCol};
use crate::error::Result;
use crate::kinds::list::{append_nullable_item, create_item_mask};
use crate::kinds::nullable::{append_nullable, create_nullable, MaskedEncoder};
use crate::options::WriteCtx;
use crate::raw::Bits8;
use crate::schema::{Kind, Schema, Stored};

/// A nullable column: its mask and the values' writer.
pub(crate) type MaskedCol<C> = MaskedEncoder<Box<C>>;

/// Creates nullable field `node` in its data group `group`.
pub(crate) fn create_masked<C: ChildCol>(
    node: &Schema,
    group: &Group,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<MaskedCol<C>> {
    let child = first_child(node, path)?;
    create_nullable(group, path, ctx, || {
        C::create(child, group, path, ctx).map(Box::new)
    })
}

/// Creates a nullable list element (of `string_values` or lists): member
/// `name` of `parent` and its mask.
pub(crate) fn create_masked_item<C: ChildCol>(
    node: &Schema,
    parent: &Group,
    name: &str,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<MaskedCol<C>> {
    let child = first_child(node, path)?;
    if child.kind != Kind::StringValues && child.kind != Kind::List {
        return Err(not_here(
            &child.kind,
            "a nullable list element (string_values or list)",
            path,
        ));
    }
    let inner = C::create_item(child, parent, name, path, ctx)?;
    let mask = create_item_mask(parent, name, path, ctx)?;
    Ok(MaskedEncoder::new(Box::new(inner), mask))
}

/// Opens nullable field `node` of `count` rows in `group` for appending.
pub(crate) fn append_masked<C: ChildCol>(
    node: &Stored,
    group: &Group,
    path: &str,
    count: u64,
    ctx: &WriteCtx<'_>,
) -> Result<MaskedCol<C>> {
    append_nullable(group, node, path, count, |child| {
        C::append(child, group, path, count, ctx).map(Box::new)
    })
}

/// Opens nullable list element member `name` of `parent` (`rows`
/// elements) for appending.
pub(crate) fn append_masked_item<C: ChildCol>(
    node: &Stored,
    parent: &Group,
    name: &str,
    path: &str,
    rows: u64,
    ctx: &WriteCtx<'_>,
) -> Result<MaskedCol<C>> {
    append_nullable_item(parent, name, node, path, rows, |child| {
        C::append_item(child, parent, name, path, rows, ctx).map(Box::new)
    })
}

/// Buffers the mask of `arr` (nulls of its own and enclosing ones) in
/// bulk, then its values with every null as an enclosing one.
pub(crate) fn write_masked<C: ChildCol>(
    m: &mut MaskedCol<C>,
    arr: &dyn Array,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
    let nulls = arr.logical_nulls();
    let joined = NullBuffer::union(holes, nulls.as_ref());
    let mask = &mut m.mask_mut().buf;
    match &joined {
        Some(j) => mask.extend(j.inner().iter().map(|v| Bits8(v as u8))),
        None => mask.extend(std::iter::repeat_n(Bits8(1), arr.len())),
    }
    m.inner_mut().write(arr, joined.as_ref(), at)
}

/// The values, then the mask (SPEC.md section 8).
pub(crate) fn flush_masked<C: ChildCol>(m: &mut MaskedCol<C>) -> Result<()> {
    m.inner_mut().flush()?;
    m.flush_mask()
}
