//! The direct serializer's nodes: a [`Node`] per field of the h5vec fields
//! (its [`Kind`] and the columns of its leaves), filled by `serializer.rs`
//! and turned into a batch's arrays by the plan (`mod.rs`).

use super::columns::{Leaf, Offsets, Vals};
use crate::error::{Error, Result};
use crate::serde::fast::{plain, PathError, Shape, R};
use crate::serde::fields::optional;
use arrow_array::{ArrayRef, FixedSizeListArray, LargeListArray, StructArray, UnionArray};
use arrow_buffer::NullBufferBuilder;
use arrow_schema::{DataType, Field, FieldRef, Fields, UnionFields};
use std::sync::Arc;

pub(super) enum Kind {
    Leaf(Leaf),
    List {
        field: FieldRef,
        offsets: Offsets,
        item: Box<Node>,
    },
    Fixed {
        field: FieldRef,
        n: usize,
        item: Box<Node>,
    },
    Record {
        fields: Fields,
        children: Vec<Node>,
        /// The serde key each field last matched: a key is a `&'static
        /// str`, so the same key of the next row matches by address.
        keys: Vec<Option<&'static str>>,
    },
    /// An enum with data: a dense union of one record per variant.
    Union(Box<UnionPlan>),
}

/// The columns of an enum with data (SPEC.md section 4.4, as Arrow's
/// dense union of section 11): each row's tag and its row among its
/// variant's rows, and one record per variant. An `Option` of it puts a
/// `None` as a null row of the first variant, as the derive does.
pub(super) struct UnionPlan {
    pub(super) fields: UnionFields,
    pub(super) names: Vec<String>,
    pub(super) shapes: Vec<Shape>,
    pub(super) types: Vals<i8>,
    pub(super) offsets: Vals<i32>,
    /// Each variant's rows so far.
    pub(super) counts: Vec<i32>,
    /// Each variant's record (its validity set for an `Option<Enum>`).
    pub(super) variants: Vec<Node>,
    pub(super) optional: bool,
}

impl UnionPlan {
    pub(super) fn new(sf: &Field, hf: &Field) -> Option<Self> {
        let (DataType::Union(suf, _), DataType::Union(huf, _)) = (sf.data_type(), hf.data_type())
        else {
            return None;
        };
        let opt = optional(sf) && hf.is_nullable();
        if suf.len() != huf.len() || suf.is_empty() || suf.len() > 127 {
            return None;
        }
        let mut names = Vec::with_capacity(suf.len());
        let mut shapes = Vec::with_capacity(suf.len());
        let mut variants = Vec::with_capacity(suf.len());
        for (k, ((sid, sc), (hid, hc))) in suf.iter().zip(huf.iter()).enumerate() {
            let DataType::Struct(hfs) = hc.data_type() else {
                return None;
            };
            if usize::try_from(sid).ok()? != k || sid != hid || sc.name() != hc.name() {
                return None;
            }
            let shape = Shape::of(sc);
            let children = match (shape, sc.data_type()) {
                (Shape::Unit, _) if hfs.is_empty() => Vec::new(),
                (Shape::Newtype, _) if hfs.len() == 1 => {
                    vec![Node::new(&sc.as_ref().clone().with_name("1"), &hfs[0])?]
                }
                (Shape::Tuple | Shape::Struct, DataType::Struct(sfs))
                    if sfs.len() == hfs.len() && !sfs.is_empty() =>
                {
                    sfs.iter()
                        .zip(hfs.iter())
                        .map(|(s, h)| Node::new(s, h))
                        .collect::<Option<Vec<_>>>()?
                }
                _ => return None,
            };
            names.push(sc.name().clone());
            shapes.push(shape);
            variants.push(Node {
                kind: Kind::Record {
                    fields: hfs.clone(),
                    keys: vec![None; children.len()],
                    children,
                },
                nulls: opt.then(|| NullBufferBuilder::new(0)),
            });
        }
        Some(UnionPlan {
            fields: huf.clone(),
            counts: vec![0; names.len()],
            names,
            shapes,
            types: Vals::new(),
            offsets: Vals::new(),
            variants,
            optional: opt,
        })
    }

    /// Starts a row of variant `index` (`name`, serialized as `shape`):
    /// its record, marked valid.
    #[inline]
    pub(super) fn start(&mut self, index: u32, name: &str, shape: Shape) -> R<&mut Node> {
        let k = usize::try_from(index)
            .ok()
            .filter(|&k| k < self.names.len() && self.names[k] == name)
            .ok_or_else(|| {
                PathError::msg(format!(
                    "variant `{name}` (index {index}) is not a traced variant ({:?})",
                    self.names
                ))
            })?;
        if self.shapes[k] != shape {
            return Err(PathError::msg(format!(
                "variant `{name}` serialized as {}, traced as {}",
                shape.name(),
                self.shapes[k].name()
            )));
        }
        self.push_row(k)?;
        let v = &mut self.variants[k];
        if let Some(n) = &mut v.nulls {
            valid(n);
        }
        Ok(v)
    }

    /// The tag and the index of a new row of variant `k`.
    pub(super) fn push_row(&mut self, k: usize) -> R {
        let n = &mut self.counts[k];
        self.offsets.push(*n);
        *n = n
            .checked_add(1)
            .ok_or_else(|| PathError::msg("more than 2^31 rows of a variant in one batch"))?;
        // At most 127 variants (UnionPlan::new).
        self.types.push(k as i8);
        Ok(())
    }

    /// A `None`: a null placeholder row of the first variant.
    pub(super) fn null(&mut self) -> R {
        if !self.optional {
            return Err(PathError::msg(
                "found no value (None or a missing field) for an enum that is not optional",
            ));
        }
        self.push_row(0)?;
        self.variants[0].placeholder()
    }

    pub(super) fn finish(&mut self) -> Result<ArrayRef> {
        let err = |e: arrow_schema::ArrowError| Error::encode("$", e.to_string());
        let types = self.types.lend();
        let offsets = self.offsets.lend();
        let mut children = Vec::with_capacity(self.variants.len());
        for (v, n) in self.variants.iter_mut().zip(&mut self.counts) {
            let rows = usize::try_from(std::mem::take(n)).map_err(|e| Error::encode("$", e))?;
            children.push(v.finish(rows)?);
        }
        Ok(Arc::new(
            UnionArray::try_new(self.fields.clone(), types, Some(offsets), children)
                .map_err(err)?,
        ))
    }

    pub(super) fn reclaim(&mut self) {
        self.types.reclaim();
        self.offsets.reclaim();
        self.variants.iter_mut().for_each(Node::reclaim);
    }
}

pub(super) struct Node {
    pub(super) kind: Kind,
    /// Validity of an optional leaf or list (`None`: not optional).
    pub(super) nulls: Option<NullBufferBuilder>,
}

/// Marks one more value valid, out of line: the per-value path of a
/// field that is not optional stays small enough to inline.
#[inline(never)]
pub(super) fn valid(n: &mut NullBufferBuilder) {
    n.append_non_null();
}

impl Node {
    /// The plan of serde field `sf` written as h5vec field `hf`.
    pub(super) fn new(sf: &Field, hf: &Field) -> Option<Self> {
        if !plain(sf) {
            return None;
        }
        let kind = match (sf.data_type(), hf.data_type()) {
            (DataType::Struct(sfs), DataType::Struct(hfs))
                if !sf.is_nullable() && !hfs.is_empty() && sfs.len() == hfs.len() =>
            {
                let children = sfs
                    .iter()
                    .zip(hfs.iter())
                    .map(|(s, h)| Node::new(s, h))
                    .collect::<Option<Vec<_>>>()?;
                Kind::Record {
                    fields: hfs.clone(),
                    keys: vec![None; children.len()],
                    children,
                }
            }
            (DataType::LargeList(si) | DataType::List(si), DataType::LargeList(hi)) => Kind::List {
                field: hi.clone(),
                offsets: Offsets::new(),
                item: Box::new(Node::new(si, hi)?),
            },
            (DataType::FixedSizeList(si, n), DataType::FixedSizeList(hi, m))
                if n == m && !sf.is_nullable() =>
            {
                Kind::Fixed {
                    field: hi.clone(),
                    n: usize::try_from(*n).ok()?,
                    item: Box::new(Node::new(si, hi)?),
                }
            }
            (DataType::Union(..), DataType::Union(..)) => {
                // Validity lives in the variants' records.
                return Some(Node {
                    kind: Kind::Union(Box::new(UnionPlan::new(sf, hf)?)),
                    nulls: None,
                });
            }
            (s, h) if s == h && hf.metadata().is_empty() => Kind::Leaf(Leaf::new(h)?),
            _ => return None,
        };
        let nullable = sf.is_nullable() && hf.is_nullable();
        Some(Node {
            kind,
            nulls: nullable.then(|| NullBufferBuilder::new(0)),
        })
    }

    /// The leaf a value goes to (marked valid if the leaf is optional).
    #[inline(always)]
    pub(super) fn leaf(&mut self) -> R<&mut Leaf> {
        match &mut self.kind {
            Kind::Leaf(l) => {
                if let Some(n) = &mut self.nulls {
                    valid(n);
                }
                Ok(l)
            }
            _ => Err(PathError::msg(
                "found a number, bool or string for a list or record",
            )),
        }
    }

    pub(super) fn null(&mut self) -> R {
        if let Kind::Union(u) = &mut self.kind {
            return u.null();
        }
        let Some(nulls) = &mut self.nulls else {
            return Err(PathError::msg(
                "found no value (None or a missing field) for a field that is not optional",
            ));
        };
        match &mut self.kind {
            Kind::Leaf(l) => l.null()?,
            Kind::List { offsets, .. } => offsets.add(0)?,
            // Plans hold no optional records or arrays (Node::new).
            _ => return Err(PathError::msg("found None for a record")),
        }
        nulls.append_null();
        Ok(())
    }

    /// A placeholder row under an enclosing null (a `None` enum's row of
    /// its first variant): every value its placeholder, null where the
    /// field is optional.
    pub(super) fn placeholder(&mut self) -> R {
        match &mut self.kind {
            Kind::Leaf(l) => l.null()?,
            Kind::List { offsets, .. } => offsets.add(0)?,
            Kind::Fixed { n, item, .. } => {
                for _ in 0..*n {
                    item.placeholder()?;
                }
            }
            Kind::Record { children, .. } => {
                for c in children.iter_mut() {
                    c.placeholder()?;
                }
            }
            Kind::Union(u) => {
                u.push_row(0)?;
                u.variants[0].placeholder()?;
            }
        }
        if let Some(n) = &mut self.nulls {
            n.append_null();
        }
        Ok(())
    }

    /// The array of the `rows` values so far; the columns start again
    /// empty, their buffers lent to the array until [`reclaim`](Self::reclaim).
    pub(super) fn finish(&mut self, rows: usize) -> Result<ArrayRef> {
        let err = |e: arrow_schema::ArrowError| Error::encode("$", e.to_string());
        let nulls = self.nulls.as_mut().and_then(NullBufferBuilder::finish);
        Ok(match &mut self.kind {
            Kind::Leaf(l) => l.finish(nulls)?,
            Kind::List {
                field,
                offsets,
                item,
            } => {
                let offs = offsets.lend();
                let values = item.finish(usize::try_from(offs.last()).unwrap_or(0))?;
                Arc::new(LargeListArray::try_new(field.clone(), offs, values, nulls).map_err(err)?)
            }
            Kind::Fixed { field, n, item } => {
                let values = item.finish(rows * *n)?;
                let n = i32::try_from(*n).map_err(|e| Error::encode("$", e.to_string()))?;
                Arc::new(FixedSizeListArray::try_new(field.clone(), n, values, None).map_err(err)?)
            }
            Kind::Record {
                fields, children, ..
            } => {
                let cols = children
                    .iter_mut()
                    .map(|c| c.finish(rows))
                    .collect::<Result<Vec<_>>>()?;
                Arc::new(
                    StructArray::try_new_with_length(fields.clone(), cols, nulls, rows)
                        .map_err(err)?,
                )
            }
            Kind::Union(u) => u.finish()?,
        })
    }

    pub(super) fn reclaim(&mut self) {
        match &mut self.kind {
            Kind::Leaf(l) => l.reclaim(),
            Kind::List { offsets, item, .. } => {
                offsets.reclaim();
                item.reclaim();
            }
            Kind::Fixed { item, .. } => item.reclaim(),
            Kind::Record { children, .. } => children.iter_mut().for_each(Node::reclaim),
            Kind::Union(u) => u.reclaim(),
        }
    }

    /// The union a variant goes to.
    #[inline]
    pub(super) fn union(&mut self, v: &str) -> R<&mut UnionPlan> {
        match &mut self.kind {
            Kind::Union(u) => Ok(u),
            _ => Err(PathError::msg(format!(
                "found enum variant `{v}` for a column of another type"
            ))),
        }
    }
}
