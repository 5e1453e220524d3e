//! List elements: which layout each Rust type uses as the `VALUES` member
//! of a list group (SPEC.md section 4.2).
//!
//! Layout on disk (of `<list>/VALUES`):
//! ```text
//! VALUES                 leaf: 1-D dataset of numbers, bool (h5col enum), char, enums;
//!                        [T; N] adds trailing axes
//! VALUES/                nested list: CLASS = "LIST_COLUMN", KIND = "OFFSETS", OFFSETS, VALUES
//! VALUES/                record: CLASS = "RECORD_VALUES", one column per field (section 3.3)
//! VALUES/                any other group-shaped layout (maps, unions, instants with an
//!                        offset): its group, CLASS where the layout has one
//! VALUES/MASK            nullable group elements (Option<String>, Option<Vec<U>>): the
//!                        element group plus an h5col bool per element, TRUE = present
//! ```
//! `String` elements (`STRING_VALUES`) are in `strings`, `Option<number>`
//! elements (fill values) in `fill`; their [`ListItem`] impls are here with
//! the others.

use std::marker::PhantomData;

use hdf5::Group;

use crate::codec::{open_column, open_group};
use crate::column::{PodReader, PodWriter};
use crate::error::{Context, Result};
use crate::evolution::{expect_number, LoadFlags, NumberCheck};
use crate::kinds::dense::{
    dense_schema, shape_of, shape_of_u64, DenseDecoder, DenseElem, DenseEncoder, RawOf,
};
use crate::kinds::nullable::{
    check_nullable, child_with_mask, create_mask, nullable_schema, open_mask, MaskedDecoder,
    MaskedEncoder,
};
use crate::kinds::record::{Record, RecordCodec};
use crate::kinds::scalar::{scalar_schema, Scalar};
use crate::options::WriteCtx;
use crate::raw::{self, Pod};
use crate::schema::{Schema, Stored};

use super::group::ListCodec;
use super::item::{GroupShaped, ItemCodec, ListItem};
use super::offsets::{check_class, RECORD_VALUES};

// ---------------------------------------------------------------------------
// Group-shaped elements: nested lists, maps, unions, records.

/// A layout that is a group of its own ([`GroupShaped`]) as the element of
/// an enclosing list: the group `name` of the list group, its `CLASS` set
/// and checked where the layout has one, and the layout inside.
pub struct GroupItem<C>(PhantomData<C>);

/// `Vec<T>` as the element of an enclosing list: a nested list group.
impl<T: ListItem> GroupShaped for ListCodec<T> {
    const CLASS: Option<&'static str> = None;
}

/// Creates the element group `name` of `parent` with attribute `CLASS` =
/// `class` where there is one.
fn create_item_group(parent: &Group, name: &str, class: Option<&str>, path: &str) -> Result<Group> {
    let g = parent.create_group(name).at(path)?;
    if let Some(class) = class {
        raw::write_attr_ascii(&g, "CLASS", class, path)?;
    }
    Ok(g)
}

/// Opens the element group `name` of `parent`, its `CLASS` checked against
/// `class` where there is one.
fn open_item_group(parent: &Group, name: &str, class: Option<&str>, path: &str) -> Result<Group> {
    let g = open_group(parent, name, path)?;
    if let Some(class) = class {
        check_class(&g, class, path)?;
    }
    Ok(g)
}

impl<C: GroupShaped + 'static> ItemCodec for GroupItem<C> {
    type Value = C::Value;
    type Encoder = C::Encoder;
    type Decoder = C::Decoder;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        C::schema(ctx)
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        C::create(&create_item_group(parent, name, C::CLASS, path)?, path, ctx)
    }
    fn open_with(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        C::open_with(
            &open_item_group(parent, name, C::CLASS, path)?,
            node,
            path,
            rows,
            load,
        )
    }
    fn append(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        let g = open_item_group(parent, name, C::CLASS, path)?;
        C::append(&g, node, path, rows, ctx)
    }
}

// ---------------------------------------------------------------------------
// Nullable elements: a MASK inside the element's own group.

/// `Option<V>` elements whose layout `I` is a group: `I`'s members plus `MASK`.
pub struct NullableItem<I>(PhantomData<I>);

/// Creates the `MASK` of nullable group elements in member `name` of
/// `parent`, after the element's own members were created there.
pub(crate) fn create_item_mask(
    parent: &Group,
    name: &str,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PodWriter<crate::raw::Bits8>> {
    let g = parent.group(name).at(path)?;
    create_mask(&g, path, ctx)
}

/// Continues nullable group elements `name` of `parent` after their first
/// `rows`: checks the node, opens the mask, then the elements with `inner`
/// (given the child node, with `MASK` allowed beside its members).
pub(crate) fn append_nullable_item<E>(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    inner: impl FnOnce(&Stored) -> Result<E>,
) -> Result<MaskedEncoder<E>> {
    check_nullable(node, path)?;
    let g = open_group(parent, name, path)?;
    let mask = open_mask(&g, path, rows)?;
    let inner = inner(&child_with_mask(node, path)?)?;
    Ok(MaskedEncoder::new(
        inner,
        PodWriter::resume(mask.ds, Vec::new(), rows, path)?,
    ))
}

impl<I: ItemCodec> ItemCodec for NullableItem<I> {
    type Value = Option<I::Value>;
    type Encoder = MaskedEncoder<I::Encoder>;
    type Decoder = MaskedDecoder<I::Decoder>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        nullable_schema::<I::Value>(I::schema(ctx))
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let inner = I::create(parent, name, path, ctx)?;
        Ok(MaskedEncoder::new(
            inner,
            create_item_mask(parent, name, path, ctx)?,
        ))
    }
    fn open_with(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        check_nullable(node, path)?;
        let g = open_group(parent, name, path)?;
        let mask = open_mask(&g, path, rows)?;
        let inner = I::open_with(
            parent,
            name,
            &child_with_mask(node, path)?,
            path,
            rows,
            load,
        )?;
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
        append_nullable_item(parent, name, node, path, rows, |child| {
            I::append(parent, name, child, path, rows, ctx)
        })
    }
}

// ---------------------------------------------------------------------------
// Leaf elements: one dataset.

/// Numbers, bool, char, enums and fixed-size arrays of them as a leaf dataset.
pub struct LeafItem<A>(PhantomData<A>);

fn leaf_schema<A: DenseElem>() -> Schema {
    if A::LEAVES == 1 && shape_of::<A>().is_empty() {
        crate::kinds::scalar::labeled::<A::Leaf>(scalar_schema::<A>(
            <A::Leaf as Scalar>::CODEC,
            <RawOf<A> as Pod>::ENCODED,
        ))
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
    load: LoadFlags,
) -> Result<(hdf5::Dataset, u64, Vec<u64>)> {
    let inner = shape_of_u64::<A>();
    let check = expect_number::<RawOf<A>>(node, &leaf_schema::<A>(), path, load)?;
    let (ds, n) = open_leaf_checked(parent, name, path, rows, &inner, &check)?;
    Ok((ds, n, inner))
}

/// Checks a leaf element node against `want` (exactly: appends, the Arrow
/// readers and writers) and opens the leaf dataset `name` of `parent`, as
/// [`open_leaf_checked`] does.
pub(crate) fn open_leaf_values<R: Pod>(
    parent: &Group,
    name: &str,
    node: &Stored,
    path: &str,
    rows: u64,
    want: &Schema,
    inner: &[u64],
) -> Result<(hdf5::Dataset, u64)> {
    let check = crate::evolution::expect_number::<R>(node, want, path, LoadFlags::default())?;
    open_leaf_checked(parent, name, path, rows, inner, &check)
}

/// Opens the leaf dataset `name` of `parent` of a node `check` came from
/// (`evolution::expect_number`: a narrower number, where the load widens
/// numbers, SPEC.md section 12): rows of shape `inner`, at least `rows` of
/// them. Returns the dataset and its rows.
pub(crate) fn open_leaf_checked<R: Pod>(
    parent: &Group,
    name: &str,
    path: &str,
    rows: u64,
    inner: &[u64],
    check: &NumberCheck<R>,
) -> Result<(hdf5::Dataset, u64)> {
    open_column(
        parent,
        name,
        path,
        inner,
        rows,
        |t| check.accepts(t),
        check.describe(),
    )
}

/// Creates leaf element dataset `name` of `parent`: rows of `shape` (empty
/// for scalars) of `R`, booleans as the h5col enum. What [`LeafItem`] and
/// the schema-driven writer (`crate::arrow`) both create.
pub(crate) fn create_leaf<R: Pod>(
    parent: &Group,
    name: &str,
    shape: &[usize],
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PodWriter<R>> {
    // h5col requires its enum for booleans below a list column.
    let dt = if R::AS_STORED {
        raw::h5col_bool(path)?
    } else {
        raw::copy_type(R::file_type(), path)?
    };
    let leaves: usize = shape.iter().product();
    let chunk = ctx.chunk_rows(leaves.max(1) * std::mem::size_of::<R>());
    PodWriter::create_as(
        parent,
        name,
        &dt,
        shape,
        chunk,
        ctx.compression_for(name),
        ctx.checksum(),
        path,
    )
}

impl<A: DenseElem> ItemCodec for LeafItem<A> {
    type Value = A;
    type Encoder = DenseEncoder<A>;
    type Decoder = DenseDecoder<A>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        leaf_schema::<A>()
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let w = create_leaf::<RawOf<A>>(parent, name, &shape_of::<A>(), path, ctx)?;
        Ok(DenseEncoder::from_writer(w))
    }
    fn open_with(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        let (ds, n, inner) = open_leaf::<A>(parent, name, node, path, rows, load)?;
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
        let (ds, _, inner) = open_leaf::<A>(parent, name, node, path, rows, LoadFlags::default())?;
        Ok(DenseEncoder::from_writer(PodWriter::resume(
            ds, inner, rows, path,
        )?))
    }
}

// ---------------------------------------------------------------------------
// Records: RECORD_VALUES group with the record layout inside.

/// Derived structs and tuples as list elements: a RECORD_VALUES group.
pub type RecordItem<R> = GroupItem<RecordCodec<R>>;

impl<R: Record> GroupShaped for RecordCodec<R> {
    const CLASS: Option<&'static str> = Some(RECORD_VALUES);
}

/// Creates the RECORD_VALUES group `name` of `parent`, which then holds
/// the record's columns.
pub(crate) fn create_record_values(parent: &Group, name: &str, path: &str) -> Result<Group> {
    create_item_group(parent, name, Some(RECORD_VALUES), path)
}

/// Opens the RECORD_VALUES group `name` of `parent` (its CLASS checked).
pub(crate) fn open_record_values(parent: &Group, name: &str, path: &str) -> Result<Group> {
    open_item_group(parent, name, Some(RECORD_VALUES), path)
}
