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

#[cfg(feature = "arrow")]
pub(crate) mod arrow;
mod columns;
mod variant;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{child_path, exhausted, open_group, range_len, Codec, Decoder, Encoder};
use crate::column::{PodReader, PodWriter};
use crate::error::{Context, Error, Result};
use crate::evolution::LoadFlags;
use crate::kinds::list::{GroupItem, GroupShaped};
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::options::WriteCtx;
use crate::schema::{Schema, Stored};

pub(crate) use columns::{
    check_union, committed_rows, create_tag_index, open_index, open_tags, resume_tag_index,
    variant_spans, TagReader, TagWriter, INDEX, TAG, UNION_VALUES,
};
use variant::union_schema;
pub use variant::{At, Union, Variant, VariantFns};
use variant::{BoxDec, BoxEnc};

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
    /// What the load allows, for the variants opened again.
    load: LoadFlags,
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

    fn open_in(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<UnionDecoder<U>> {
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
            variants.push((v.open)(&g, node, &p, 0, load)?);
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
            load,
            fns,
            buf: Vec::new(),
            ibuf: Vec::new(),
            pos: 0,
            start: 0,
            path: path.to_owned(),
        })
    }
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
    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        Self::open_in(group, node, path, count, load)
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
                    self.variants[k] = (self.fns[k].open)(
                        &self.groups[k],
                        &self.nodes[k],
                        &p,
                        span.end,
                        self.load,
                    )?;
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
pub type UnionItem<U> = GroupItem<UnionCodec<U>>;

impl<U: Union> GroupShaped for UnionCodec<U> {
    const CLASS: Option<&'static str> = Some(UNION_VALUES);
}
