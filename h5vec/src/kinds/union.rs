//! Union kind: enums with data (`#[derive(H5Vector)]` on an enum whose
//! variants have fields), dense layout (SPEC.md section 4.4).
//!
//! Layout on disk:
//! ```text
//! <field>/TAG          1-D HDF5 enum over uint8 (uint16 past 256 variants), shape (Z,):
//!                      members = the variant names, values 0, 1, ... in declaration order
//! <field>/INDEX        1-D uint64, shape (Z,): row k's row among the rows of variant TAG[k]
//! <field>/<variant>/   one group per variant (its name or `rename`): the variant's fields
//!                      in the record layout (section 3.3; tuple variants `1`, `2`, ...),
//!                      one row per row of the vector holding that variant; empty for a
//!                      unit variant
//! ```
//! Each variant's rows are in the vector's row order: `INDEX[k]` is the
//! number of rows before `k` with the same tag. A range of rows reads its
//! tags and indices, then one contiguous row range per variant.
//!
//! Schema: kind `union` (`h5vec.UnionSchema`, codec `h5vec.IdentityCodec`)
//! with `variant_names`, `variant_values` (0, 1, ...) and one child per
//! variant: a record node, or a constant node for a unit variant.
//!
//! The derive macro describes each variant `I` by an impl of
//! [`Variant<At<I>>`](Variant) (its fields' codecs as a cons list, as
//! records do) and the enum by [`Union`]; everything else lives here.

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{
    child_path, exhausted, expect_members, open_column, open_group, range_len, Codec, Decoder,
    Encoder,
};
use crate::column::{PodReader, PodWriter};
use crate::error::{Context, Error, Place, Result};
use crate::kinds::list::check_class;
use crate::kinds::list::ItemCodec;
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::kinds::record::FieldList;
use crate::options::{FieldStorage, WriteCtx};
use crate::raw::{self, MemType};
use crate::schema::{ids, Kind, Schema, Stored};

/// The CLASS of a union's group as a list element (SPEC.md section 4.2).
pub(crate) const UNION_VALUES: &str = "UNION_VALUES";
/// Name of the tag dataset.
pub(crate) const TAG: &str = "TAG";
/// Name of the per-row index dataset.
pub(crate) const INDEX: &str = "INDEX";
/// Rows of TAG and INDEX read at a time when an append looks for each
/// variant's last row.
const SCAN_ROWS: u64 = 1 << 16;

/// Marks variant `I` (declaration order, from 0) of a union.
pub struct At<const I: usize>;

/// One variant of a union `Self`, marked by `M` ([`At<I>`](At)).
pub trait Variant<M>: Sized + 'static {
    /// The variant's fields' codecs as a cons list (`()` for a unit variant).
    type Fields: FieldList;
    /// The variant node's codec: `HDF5Vectors.StructCodec` (struct
    /// variants), `.TupleCodec` (tuple variants) or `.ConstantCodec` (unit).
    const CODEC: &'static str;
    /// The stored field names, in declaration order.
    const FIELD_NAMES: &'static [&'static str];
    /// Per-field storage settings, as for records.
    const FIELD_STORAGE: &'static [FieldStorage] = &[];
    /// References to the fields, if `self` is this variant.
    fn parts(&self) -> Option<<Self::Fields as FieldList>::Refs<'_>>;
    /// The variant built from its fields.
    fn from_parts(parts: <Self::Fields as FieldList>::Values) -> Self;
}

/// An enum with data stored as a union.
pub trait Union: Sized + 'static {
    /// The stored variant names, in declaration order (the tag values).
    const VARIANT_NAMES: &'static [&'static str];
    /// The position of `self`'s variant in [`VARIANT_NAMES`](Self::VARIANT_NAMES).
    fn tag(&self) -> usize;
    /// Every variant's layout, in declaration order.
    fn variants() -> Vec<VariantFns<Self>>;
}

/// Writes one variant's columns.
trait VariantEnc<U> {
    fn push(&mut self, value: &U) -> Result<()>;
    fn push_null(&mut self) -> Result<()>;
    fn flush(&mut self) -> Result<()>;
}

/// Reads one variant's columns.
trait VariantDec<U> {
    fn load(&mut self, rows: Range<u64>) -> Result<()>;
    fn next(&mut self) -> Result<U>;
    fn skip(&mut self) -> Result<()>;
}

type BoxEnc<U> = Box<dyn VariantEnc<U>>;
type BoxDec<U> = Box<dyn VariantDec<U>>;

/// One variant's layout as functions, built by [`VariantFns::of`].
pub struct VariantFns<U> {
    schema: fn(&WriteCtx<'_>) -> Schema,
    create: fn(&Group, &str, &WriteCtx<'_>) -> Result<BoxEnc<U>>,
    append: fn(&Group, &Stored, &str, u64, &WriteCtx<'_>) -> Result<BoxEnc<U>>,
    open: fn(&Group, &Stored, &str, u64) -> Result<BoxDec<U>>,
}

impl<U: Union> VariantFns<U> {
    /// The layout of variant `M` of `U`.
    pub fn of<M: 'static>() -> Self
    where
        U: Variant<M>,
    {
        VariantFns {
            schema: variant_schema::<U, M>,
            create: |g, path, ctx| {
                let enc = <U as Variant<M>>::Fields::create(
                    g,
                    <U as Variant<M>>::FIELD_NAMES,
                    <U as Variant<M>>::FIELD_STORAGE,
                    path,
                    ctx,
                )?;
                Ok(Box::new(VarEncoder::<U, M> {
                    enc,
                    path: path.to_owned(),
                    _m: PhantomData,
                }))
            },
            append: |g, node, path, rows, ctx| {
                check_variant::<U, M>(g, node, path)?;
                let enc = <U as Variant<M>>::Fields::append(
                    g,
                    <U as Variant<M>>::FIELD_NAMES,
                    &node.children,
                    path,
                    rows,
                    ctx,
                )?;
                Ok(Box::new(VarEncoder::<U, M> {
                    enc,
                    path: path.to_owned(),
                    _m: PhantomData,
                }))
            },
            open: |g, node, path, rows| {
                check_variant::<U, M>(g, node, path)?;
                let fields: Vec<Option<(&str, &Stored)>> = <U as Variant<M>>::FIELD_NAMES
                    .iter()
                    .zip(&node.children)
                    .map(|(n, c)| Some((*n, c)))
                    .collect();
                let dec = <U as Variant<M>>::Fields::open(
                    g,
                    &fields,
                    <<U as Variant<M>>::Fields as FieldList>::no_defaults(),
                    path,
                    rows,
                )?;
                Ok(Box::new(VarDecoder::<U, M> {
                    dec,
                    _m: PhantomData,
                }))
            },
        }
    }
}

struct VarEncoder<U: Variant<M>, M> {
    enc: <<U as Variant<M>>::Fields as FieldList>::Encoders,
    path: String,
    _m: PhantomData<fn() -> M>,
}

impl<U: Variant<M>, M> VariantEnc<U> for VarEncoder<U, M> {
    #[inline]
    fn push(&mut self, value: &U) -> Result<()> {
        let parts = value.parts().ok_or_else(|| {
            Error::encode(
                &self.path,
                "a value's tag names another variant (internal bookkeeping error)",
            )
        })?;
        <U as Variant<M>>::Fields::push(&mut self.enc, parts)
    }
    fn push_null(&mut self) -> Result<()> {
        <U as Variant<M>>::Fields::push_null(&mut self.enc)
    }
    fn flush(&mut self) -> Result<()> {
        <U as Variant<M>>::Fields::flush(&mut self.enc)
    }
}

struct VarDecoder<U: Variant<M>, M> {
    dec: <<U as Variant<M>>::Fields as FieldList>::Decoders,
    _m: PhantomData<fn() -> M>,
}

impl<U: Variant<M>, M> VariantDec<U> for VarDecoder<U, M> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        <U as Variant<M>>::Fields::load(&mut self.dec, rows)
    }
    #[inline]
    fn next(&mut self) -> Result<U> {
        <U as Variant<M>>::Fields::next(&mut self.dec).map(U::from_parts)
    }
    fn skip(&mut self) -> Result<()> {
        <U as Variant<M>>::Fields::skip(&mut self.dec)
    }
}

/// The node of variant `M` of `U`: a record, or a constant for a unit variant.
fn variant_schema<U: Variant<M>, M>(ctx: &WriteCtx<'_>) -> Schema {
    let logical = std::any::type_name::<U>();
    if <U as Variant<M>>::FIELD_NAMES.is_empty() {
        return Schema::new(Kind::Constant, ids::CONSTANT, ids::CONSTANT_CODEC, logical);
    }
    let mut s = Schema::new(Kind::Record, ids::RECORD, <U as Variant<M>>::CODEC, logical);
    s.field_names = Some(
        <U as Variant<M>>::FIELD_NAMES
            .iter()
            .map(|s| s.to_string())
            .collect(),
    );
    <U as Variant<M>>::Fields::schemas(ctx, <U as Variant<M>>::FIELD_STORAGE, &mut s.children);
    s
}

/// Checks a stored variant node and the members of its group.
fn check_variant<U: Variant<M>, M>(group: &Group, node: &Stored, path: &str) -> Result<()> {
    let names = <U as Variant<M>>::FIELD_NAMES;
    let mut want = if names.is_empty() {
        Schema::new(Kind::Constant, ids::CONSTANT, ids::CONSTANT_CODEC, "")
    } else {
        let mut s = Schema::new(Kind::Record, ids::RECORD, <U as Variant<M>>::CODEC, "");
        s.field_names = Some(names.iter().map(|s| s.to_string()).collect());
        s
    };
    // Children are checked by their own codecs; here only their number.
    want.children = vec![Schema::new(Kind::default(), "", "", ""); <U as Variant<M>>::Fields::LEN];
    node.expect(&want, path)?;
    expect_members(group, names, node, path)
}

/// The schema node of union `U`.
pub(crate) fn union_schema<U: Union>(ctx: &WriteCtx<'_>) -> Schema {
    let mut s = Schema::new(
        Kind::Union,
        ids::UNION,
        ids::H5VEC_CODEC,
        std::any::type_name::<U>(),
    );
    s.variant_names = Some(U::VARIANT_NAMES.iter().map(|s| s.to_string()).collect());
    s.variant_values = Some((0..U::VARIANT_NAMES.len() as i64).collect());
    s.children = U::variants().iter().map(|v| (v.schema)(ctx)).collect();
    s
}

/// Whether `n` variants need 16-bit tags.
fn wide(n: usize) -> bool {
    n > 256
}

/// Checks a stored union node against `names` (kind, identifiers, the
/// variant names with the values 0, 1, ..., one child per variant) and
/// the members of its data group (`TAG`, `INDEX`, one group per variant).
pub(crate) fn check_union(group: &Group, node: &Stored, names: &[&str], path: &str) -> Result<()> {
    let mut want = Schema::new(Kind::Union, ids::UNION, ids::H5VEC_CODEC, "");
    want.children = vec![Schema::new(Kind::default(), "", "", ""); names.len()];
    node.expect(&want, path)?;
    let want_names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    if node.variant_names.as_ref() != Some(&want_names) {
        return Err(Error::mismatch(
            path,
            format!("variant names {want_names:?}"),
            format!("{:?}", node.variant_names.as_deref().unwrap_or(&[])),
        ));
    }
    let want_values: Vec<i64> = (0..names.len() as i64).collect();
    if node.variant_values.as_ref() != Some(&want_values) {
        return Err(Error::mismatch(
            path,
            format!("variant values {want_values:?}"),
            format!("{:?}", node.variant_values.as_deref().unwrap_or(&[])),
        ));
    }
    let mut members = vec![TAG, INDEX];
    members.extend_from_slice(names);
    expect_members(group, &members, node, path)
}

/// The TAG column: `u8` or `u16` rows of the variant enum.
pub(crate) enum TagReader {
    Narrow(PodReader<u8>),
    Wide(PodReader<u16>),
}

impl TagReader {
    /// Where the tags are, for errors.
    pub(crate) fn place(&self) -> &Place {
        match self {
            TagReader::Narrow(r) => r.place(),
            TagReader::Wide(r) => r.place(),
        }
    }
    /// Rows `start..start + n` as tag values (not yet checked against the variants).
    pub(crate) fn read_into(&self, start: u64, n: u64, out: &mut Vec<u16>) -> Result<()> {
        out.clear();
        match self {
            TagReader::Narrow(r) => out.extend(r.read(start, n)?.into_iter().map(u16::from)),
            TagReader::Wide(r) => r.read_into(start, n, out)?,
        }
        Ok(())
    }
}

/// The TAG column's writer.
pub(crate) enum TagWriter {
    Narrow(PodWriter<u8>),
    Wide(PodWriter<u16>),
}

impl TagWriter {
    /// Buffers one row's tag (`tag` < the number of variants).
    #[inline]
    pub(crate) fn push(&mut self, tag: usize) {
        match self {
            // `tag` < the number of variants, which fits the width chosen.
            TagWriter::Narrow(w) => w.buf.push(tag as u8),
            TagWriter::Wide(w) => w.buf.push(tag as u16),
        }
    }
    pub(crate) fn flush(&mut self) -> Result<()> {
        match self {
            TagWriter::Narrow(w) => w.flush(),
            TagWriter::Wide(w) => w.flush(),
        }
    }
}

/// Opens `TAG` (at least `count` rows), checked to be exactly the enum of `names`.
pub(crate) fn open_tags(
    group: &Group,
    names: &[&str],
    path: &str,
    count: u64,
) -> Result<TagReader> {
    let wide = wide(names.len());
    let size = if wide { 2 } else { 1 };
    let want = raw::tag_type(names, wide, false, path)?;
    let desc = format!(
        "an enum over uint{} with the members {}",
        size * 8,
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{n}={i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (ds, rows) = open_column(
        group,
        TAG,
        path,
        &[],
        count,
        |t| t.class == hdf5_sys::h5t::H5T_class_t::H5T_ENUM && t.size == size,
        &desc,
    )?;
    let p = Place::new(path, ds.name());
    if !raw::dataset_type_is(&ds, &want, &p)? {
        let (found, _) = raw::describe_dtype(&ds, &p)?;
        return Err(Error::mismatch(p, desc, found));
    }
    let mem = raw::tag_type(names, wide, true, path)?;
    // `mem` is an enum over the native u8 / u16, exactly the layout of the
    // reader's element type (`MemType::checked` checks its size).
    let at = Place::new(path, ds.name());
    Ok(if wide {
        TagReader::Wide(PodReader::with_type(
            ds,
            MemType::checked(mem, &at)?,
            Vec::new(),
            rows,
            path,
        )?)
    } else {
        TagReader::Narrow(PodReader::with_type(
            ds,
            MemType::checked(mem, &at)?,
            Vec::new(),
            rows,
            path,
        )?)
    })
}

/// Opens `INDEX` (at least `count` rows).
pub(crate) fn open_index(group: &Group, path: &str, count: u64) -> Result<PodReader<u64>> {
    let (ds, rows) = open_column(
        group,
        INDEX,
        path,
        &[],
        count,
        <u64 as raw::Pod>::accepts,
        "uint64",
    )?;
    PodReader::new(ds, Vec::new(), rows, path)
}

/// For rows `start..` with tags `tags` and indices `index`: each
/// variant's first row and number of rows, checked (a tag past the
/// variants, an index out of row order or overflowing, are errors naming
/// the row at `tag_place`).
pub(crate) fn variant_spans(
    tags: &[u16],
    index: &[u64],
    start: u64,
    names: &[&str],
    tag_place: &Place,
    index_place: &Place,
) -> Result<Vec<Range<u64>>> {
    let mut spans: Vec<Option<Range<u64>>> = vec![None; names.len()];
    for (i, (&t, &ix)) in tags.iter().zip(index).enumerate() {
        let row = start + i as u64;
        let span = spans.get_mut(t as usize).ok_or_else(|| {
            Error::invalid(
                tag_place.element(row),
                format!(
                    "tag value {t} is not a variant (0..{}: {})",
                    names.len(),
                    names.join(", ")
                ),
            )
        })?;
        match span {
            None => {
                let end = ix.checked_add(1).ok_or_else(|| {
                    Error::invalid(index_place.element(row), format!("INDEX {ix} out of range"))
                })?;
                *span = Some(ix..end);
            }
            Some(r) => {
                if ix != r.end {
                    return Err(Error::invalid(
                        index_place.element(row),
                        format!(
                            "INDEX {ix} of variant `{}`, expected {} (each variant's rows are in row order)",
                            names[t as usize], r.end
                        ),
                    ));
                }
                r.end += 1;
            }
        }
    }
    Ok(spans.into_iter().map(|s| s.unwrap_or(0..0)).collect())
}

/// The union layout for `U`.
pub struct UnionCodec<U>(PhantomData<U>);

/// Writes a union's columns.
pub struct UnionEncoder<U> {
    tags: TagWriter,
    index: PodWriter<u64>,
    next: Vec<u64>,
    variants: Vec<BoxEnc<U>>,
    path: String,
}

/// Reads a union's columns.
pub struct UnionDecoder<U> {
    tags: TagReader,
    index: PodReader<u64>,
    /// Each variant's decoder, opened for the rows `opened` says.
    variants: Vec<BoxDec<U>>,
    /// How many rows of each variant its decoder was opened for: a
    /// variant's row count is known only from the rows that use it, so a
    /// load needing more opens the variant again (its checks, such as a
    /// list's last offset, depend on it).
    opened: Vec<u64>,
    groups: Vec<Group>,
    nodes: Vec<Stored>,
    fns: Vec<VariantFns<U>>,
    buf: Vec<u16>,
    ibuf: Vec<u64>,
    pos: usize,
    start: u64,
    path: String,
}

impl<U: Union> UnionCodec<U> {
    fn create_in(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<UnionEncoder<U>> {
        let names = U::VARIANT_NAMES;
        let mut variants = Vec::with_capacity(names.len());
        for (name, v) in names.iter().zip(U::variants()) {
            if *name == TAG || *name == INDEX {
                return Err(Error::encode(
                    path,
                    format!(
                        "a variant named `{name}` cannot sit beside the union's {TAG} and {INDEX}"
                    ),
                ));
            }
            let p = child_path(path, name);
            let g = group.create_group(name).at(&p)?;
            variants.push((v.create)(&g, &p, ctx)?);
        }
        let (tags, index) = create_tag_index(group, names, path, ctx)?;
        Ok(UnionEncoder {
            tags,
            index,
            next: vec![0; names.len()],
            variants,
            path: path.to_owned(),
        })
    }

    fn append_in(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<UnionEncoder<U>> {
        let names = U::VARIANT_NAMES;
        check_union(group, node, names, path)?;
        let tags = open_tags(group, names, path, count)?;
        let index = open_index(group, path, count)?;
        let next = committed_rows(&tags, &index, count, names)?;
        let mut variants = Vec::with_capacity(names.len());
        for (i, (name, v)) in names.iter().zip(U::variants()).enumerate() {
            let p = child_path(path, name);
            let g = open_group(group, name, &p)?;
            variants.push((v.append)(&g, node.child(i, path)?, &p, next[i], ctx)?);
        }
        let (tags, index) = resume_tag_index(tags, index, names, count, path)?;
        Ok(UnionEncoder {
            tags,
            index,
            next,
            variants,
            path: path.to_owned(),
        })
    }

    fn open_in(group: &Group, node: &Stored, path: &str, count: u64) -> Result<UnionDecoder<U>> {
        let names = U::VARIANT_NAMES;
        check_union(group, node, names, path)?;
        let tags = open_tags(group, names, path, count)?;
        let index = open_index(group, path, count)?;
        let fns = U::variants();
        let (mut variants, mut groups, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (name, v)) in names.iter().zip(&fns).enumerate() {
            let p = child_path(path, name);
            let g = open_group(group, name, &p)?;
            let node = node.child(i, path)?;
            variants.push((v.open)(&g, node, &p, 0)?);
            groups.push(g);
            nodes.push(node.clone());
        }
        Ok(UnionDecoder {
            tags,
            index,
            variants,
            opened: vec![0; names.len()],
            groups,
            nodes,
            fns,
            buf: Vec::new(),
            ibuf: Vec::new(),
            pos: 0,
            start: 0,
            path: path.to_owned(),
        })
    }
}

/// Creates `TAG` (the enum of `names`) and `INDEX` in `group`.
pub(crate) fn create_tag_index(
    group: &Group,
    names: &[&str],
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<(TagWriter, PodWriter<u64>)> {
    let wide = wide(names.len());
    let file = raw::tag_type(names, wide, false, path)?;
    let mem = raw::tag_type(names, wide, true, path)?;
    let chunk = ctx.chunk_rows(if wide { 2 } else { 1 });
    let comp = ctx.compression_for(TAG);
    // `mem` is an enum over the native u8 / u16, exactly the layout of the
    // writer's element type (`MemType::checked` checks its size).
    let tags = if wide {
        TagWriter::Wide(PodWriter::create_typed(
            group,
            TAG,
            &file,
            Some(MemType::checked(mem, path)?),
            &[],
            chunk,
            comp,
            ctx.checksum(),
            path,
        )?)
    } else {
        TagWriter::Narrow(PodWriter::create_typed(
            group,
            TAG,
            &file,
            Some(MemType::checked(mem, path)?),
            &[],
            chunk,
            comp,
            ctx.checksum(),
            path,
        )?)
    };
    let index = PodWriter::create(group, INDEX, &[], ctx.chunk_rows(8), path, ctx)?;
    Ok((tags, index))
}

/// Writers resuming `TAG` and `INDEX` (opened and checked by
/// [`open_tags`] and [`open_index`]) after `count` committed rows.
pub(crate) fn resume_tag_index(
    tags: TagReader,
    index: PodReader<u64>,
    names: &[&str],
    count: u64,
    path: &str,
) -> Result<(TagWriter, PodWriter<u64>)> {
    let mem = raw::tag_type(names, wide(names.len()), true, path)?;
    // `mem` is an enum over the native u8 / u16, exactly the layout of the
    // writer's element type (`MemType::checked` checks its size).
    let tags = match tags {
        TagReader::Narrow(r) => TagWriter::Narrow(PodWriter::resume_typed(
            r.ds,
            Some(MemType::checked(mem, path)?),
            Vec::new(),
            count,
            path,
        )?),
        TagReader::Wide(r) => TagWriter::Wide(PodWriter::resume_typed(
            r.ds,
            Some(MemType::checked(mem, path)?),
            Vec::new(),
            count,
            path,
        )?),
    };
    Ok((tags, PodWriter::resume(index.ds, Vec::new(), count, path)?))
}

/// Each variant's committed rows in the first `count` rows: one more than
/// the INDEX of its last row (0 if it has none), found by reading TAG and
/// INDEX backwards from `count` until every variant has been seen.
pub(crate) fn committed_rows(
    tags: &TagReader,
    index: &PodReader<u64>,
    count: u64,
    names: &[&str],
) -> Result<Vec<u64>> {
    let mut next: Vec<Option<u64>> = vec![None; names.len()];
    let mut missing = names.len();
    let (mut end, mut tbuf, mut ibuf) = (count, Vec::new(), Vec::new());
    while end > 0 && missing > 0 {
        let start = end.saturating_sub(SCAN_ROWS);
        tags.read_into(start, end - start, &mut tbuf)?;
        index.read_into(start, end - start, &mut ibuf)?;
        for i in (0..tbuf.len()).rev() {
            let row = start + i as u64;
            let slot = next.get_mut(tbuf[i] as usize).ok_or_else(|| {
                Error::invalid(
                    tags.place().element(row),
                    format!(
                        "tag value {} is not a variant (0..{})",
                        tbuf[i],
                        names.len()
                    ),
                )
            })?;
            if slot.is_none() {
                *slot = Some(ibuf[i].checked_add(1).ok_or_else(|| {
                    Error::invalid(
                        index.element(row),
                        format!("INDEX {} out of range", ibuf[i]),
                    )
                })?);
                missing -= 1;
            }
        }
        end = start;
    }
    Ok(next.into_iter().map(|n| n.unwrap_or(0)).collect())
}

impl<U: Union> Codec for UnionCodec<U> {
    type Value = U;
    type Encoder = UnionEncoder<U>;
    type Decoder = UnionDecoder<U>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        union_schema::<U>(ctx)
    }
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        Self::create_in(group, path, ctx)
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        Self::append_in(group, node, path, count, ctx)
    }
    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self::Decoder> {
        Self::open_in(group, node, path, count)
    }
}

/// `Option<U>`: the union's members plus `MASK` (SPEC.md section 4.3); a
/// null row is a placeholder row of the first variant.
impl<U: Union> Nullable for UnionCodec<U> {
    type Codec = NullableCodec<UnionCodec<U>>;
}

impl<U: Union> Encoder<U> for UnionEncoder<U> {
    #[inline]
    fn push(&mut self, value: &U) -> Result<()> {
        let k = value.tag();
        let (v, n) = match (self.variants.get_mut(k), self.next.get_mut(k)) {
            (Some(v), Some(n)) => (v, n),
            _ => {
                return Err(Error::encode(
                    &self.path,
                    format!("tag {k} past the variants (internal bookkeeping error)"),
                ))
            }
        };
        v.push(value)?;
        self.index.buf.push(*n);
        *n += 1;
        self.tags.push(k);
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        let (Some(v), Some(n)) = (self.variants.first_mut(), self.next.first_mut()) else {
            return Err(Error::encode(&self.path, "a union without variants"));
        };
        v.push_null()?;
        self.index.buf.push(*n);
        *n += 1;
        self.tags.push(0);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        // The variants' values, then INDEX, then TAG (SPEC.md section 8).
        for v in &mut self.variants {
            v.flush()?;
        }
        self.index.flush()?;
        self.tags.flush()
    }
}

impl<U: Union> Decoder<U> for UnionDecoder<U> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let n = range_len(&rows, self.index.place())?;
        self.tags.read_into(rows.start, n, &mut self.buf)?;
        self.index.read_into(rows.start, n, &mut self.ibuf)?;
        let spans = variant_spans(
            &self.buf,
            &self.ibuf,
            rows.start,
            U::VARIANT_NAMES,
            self.tags.place(),
            self.index.place(),
        )?;
        for (k, span) in spans.into_iter().enumerate() {
            let first = self.buf.iter().position(|&t| t as usize == k);
            let name = U::VARIANT_NAMES[k];
            let loaded = (|| {
                if span.end > self.opened[k] {
                    let p = child_path(&self.path, name);
                    self.variants[k] =
                        (self.fns[k].open)(&self.groups[k], &self.nodes[k], &p, span.end)?;
                    self.opened[k] = span.end;
                }
                self.variants[k].load(span.clone())
            })();
            loaded.map_err(|e| match first {
                Some(i) => Error::invalid(
                    self.index.element(rows.start + i as u64),
                    format!(
                        "variant `{name}` rows {span:?} (from this row on) cannot be read: {e}"
                    ),
                ),
                None => e,
            })?;
        }
        self.pos = 0;
        self.start = rows.start;
        Ok(())
    }
    #[inline]
    fn next(&mut self) -> Result<U> {
        let k = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| exhausted(self.path.as_str()))?;
        self.pos += 1;
        // `k` was checked against the variants in `load`.
        self.variants[k as usize].next()
    }
    fn skip(&mut self) -> Result<()> {
        let k = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| exhausted(self.path.as_str()))?;
        self.pos += 1;
        self.variants[k as usize].skip()
    }
}

/// Unions as list elements: a `UNION_VALUES` group holding the union
/// layout with one row per element (SPEC.md section 4.2).
pub struct UnionItem<U>(PhantomData<U>);

impl<U: Union> ItemCodec for UnionItem<U> {
    type Value = U;
    type Encoder = UnionEncoder<U>;
    type Decoder = UnionDecoder<U>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        union_schema::<U>(ctx)
    }
    fn create(parent: &Group, name: &str, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let g = parent.create_group(name).at(path)?;
        raw::write_attr_ascii(&g, "CLASS", UNION_VALUES, path)?;
        UnionCodec::<U>::create_in(&g, path, ctx)
    }
    fn open(
        parent: &Group,
        name: &str,
        node: &Stored,
        path: &str,
        rows: u64,
    ) -> Result<Self::Decoder> {
        let g = open_group(parent, name, path)?;
        check_class(&g, UNION_VALUES, path)?;
        UnionCodec::<U>::open_in(&g, node, path, rows)
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
        check_class(&g, UNION_VALUES, path)?;
        UnionCodec::<U>::append_in(&g, node, path, rows, ctx)
    }
}
