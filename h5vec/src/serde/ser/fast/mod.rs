//! The direct serializer's plan: a [`Node`] per field of the h5vec
//! fields, holding the columns of its leaves (`columns.rs`), filled by the
//! `Serializer` of `serializer.rs` row by row and turned into each batch's
//! arrays, whose buffers come back for the next batch. [`Plan::new`] is
//! `None` for a shape the direct path does not cover (serde_arrow saves
//! it).

mod columns;
mod serializer;

use std::sync::Arc;

use ::serde::ser::Serialize;
use arrow_array::{ArrayRef, FixedSizeListArray, LargeListArray, StructArray, UnionArray};
use arrow_buffer::NullBufferBuilder;
use arrow_schema::{DataType, Field, FieldRef, Fields, UnionFields};

use crate::error::{Error, Result};
use crate::serde::fast::{plain, PathError, Shape, R};
use crate::serde::fields::optional;
use columns::{Leaf, Offsets, Vals};
use serializer::Ser;

enum Kind {
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
struct UnionPlan {
    fields: UnionFields,
    names: Vec<String>,
    shapes: Vec<Shape>,
    types: Vals<i8>,
    offsets: Vals<i32>,
    /// Each variant's rows so far.
    counts: Vec<i32>,
    /// Each variant's record (its validity set for an `Option<Enum>`).
    variants: Vec<Node>,
    optional: bool,
}

impl UnionPlan {
    fn new(sf: &Field, hf: &Field) -> Option<Self> {
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
    fn start(&mut self, index: u32, name: &str, shape: Shape) -> R<&mut Node> {
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
    fn push_row(&mut self, k: usize) -> R {
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
    fn null(&mut self) -> R {
        if !self.optional {
            return Err(PathError::msg(
                "found no value (None or a missing field) for an enum that is not optional",
            ));
        }
        self.push_row(0)?;
        self.variants[0].placeholder()
    }

    fn finish(&mut self) -> Result<ArrayRef> {
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

    fn reclaim(&mut self) {
        self.types.reclaim();
        self.offsets.reclaim();
        self.variants.iter_mut().for_each(Node::reclaim);
    }
}

struct Node {
    kind: Kind,
    /// Validity of an optional leaf or list (`None`: not optional).
    nulls: Option<NullBufferBuilder>,
}

/// Marks one more value valid, out of line: the per-value path of a
/// field that is not optional stays small enough to inline.
#[inline(never)]
fn valid(n: &mut NullBufferBuilder) {
    n.append_non_null();
}

impl Node {
    /// The plan of serde field `sf` written as h5vec field `hf`.
    fn new(sf: &Field, hf: &Field) -> Option<Self> {
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
    fn leaf(&mut self) -> R<&mut Leaf> {
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

    fn null(&mut self) -> R {
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
    fn placeholder(&mut self) -> R {
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
    fn finish(&mut self, rows: usize) -> Result<ArrayRef> {
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

    fn reclaim(&mut self) {
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
    fn union(&mut self, v: &str) -> R<&mut UnionPlan> {
        match &mut self.kind {
            Kind::Union(u) => Ok(u),
            _ => Err(PathError::msg(format!(
                "found enum variant `{v}` for a column of another type"
            ))),
        }
    }
}

/// The save plan of a vector's columns: a buffer per leaf.
pub(crate) struct Plan {
    root: Node,
    rows: usize,
    /// A row failed half-way: the columns may be out of step.
    broken: bool,
}

impl Plan {
    /// The plan for serde fields `sfs` written as h5vec fields `hfs`, or
    /// `None` when a field needs serde_arrow.
    pub(crate) fn new(sfs: &[FieldRef], hfs: &Fields) -> Option<Self> {
        if sfs.len() != hfs.len() || sfs.is_empty() {
            return None;
        }
        let children = sfs
            .iter()
            .zip(hfs.iter())
            .map(|(s, h)| Node::new(s, h))
            .collect::<Option<Vec<_>>>()?;
        Some(Plan {
            root: Node {
                kind: Kind::Record {
                    fields: hfs.clone(),
                    keys: vec![None; children.len()],
                    children,
                },
                nulls: None,
            },
            rows: 0,
            broken: false,
        })
    }

    /// Serializes `items` into the columns. After an error the plan takes
    /// no more rows (the failed row may be partly in the columns).
    pub(crate) fn push_all<T: Serialize>(&mut self, items: &[T]) -> R {
        if self.broken {
            return Err(PathError::msg(
                "an earlier row failed to serialize: the writer takes no more rows",
            ));
        }
        for (i, item) in items.iter().enumerate() {
            if let Err(e) = item.serialize(Ser(&mut self.root)) {
                self.broken = true;
                return Err(e.prefixed(format_args!("row {}", self.rows + i)));
            }
        }
        self.rows += items.len();
        Ok(())
    }

    /// The columns built so far (the plan starts again empty; the arrays
    /// hold its buffers until [`reclaim`](Self::reclaim)).
    pub(crate) fn finish(&mut self) -> Result<Vec<ArrayRef>> {
        if self.broken {
            return Err(Error::encode(
                "$",
                "an earlier row failed to serialize: nothing more is written",
            ));
        }
        let rows = std::mem::take(&mut self.rows);
        let Kind::Record { children, .. } = &mut self.root.kind else {
            unreachable!("the root is a record")
        };
        children.iter_mut().map(|c| c.finish(rows)).collect()
    }

    /// Takes back the buffers of the last [`finish`](Self::finish), once
    /// its arrays are dropped (the next batch fills them again).
    pub(crate) fn reclaim(&mut self) {
        self.root.reclaim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SaveOptions;
    use crate::serde::Columns;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)] // only traced
    struct Direct {
        id: u64,
        name: Option<String>,
        tags: Vec<String>,
        values: Option<Vec<f32>>,
        inner: Inner,
        holes: Vec<Option<i64>>,
        maybe: Option<bool>,
        opt_s: Option<String>,
    }

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)] // only traced
    struct Inner {
        flag: Option<bool>,
        at: [i16; 2],
    }

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)] // only traced
    enum Mode {
        A,
        B,
    }

    #[derive(Serialize, Deserialize)]
    #[allow(dead_code)] // only traced
    struct Fallback {
        id: u64,
        mode: Mode,
    }

    fn plan_of(c: Columns) -> Option<Plan> {
        let h5 = c.h5(&SaveOptions::default()).unwrap();
        Plan::new(&c.fields, &h5.into())
    }

    #[test]
    fn which_shapes_take_the_direct_route() {
        let dense =
            crate::serde::SchemaOptions::new().kind("$.inner.at", crate::serde::FieldKind::Dense);
        assert!(plan_of(dense.trace_type::<Direct>().unwrap()).is_some());
        // A unit-variant enum is a labelled enum: serde_arrow writes it.
        assert!(plan_of(Columns::of::<Fallback>().unwrap()).is_none());
    }

    #[test]
    fn lent_buffers_come_back_once_the_arrays_are_gone() {
        let mut v: Vals<u32> = Vals::new();
        v.push(1);
        v.push(2);
        let b = v.lend();
        assert_eq!(&b[..], [1, 2]);
        let ptr = b.as_ptr();
        // Still held by an array: a new allocation.
        v.reclaim();
        assert!(v.vec.is_empty() && v.vec.capacity() >= 2);
        assert_ne!(v.vec.as_ptr(), ptr);
        drop(b);
        // Dropped first: the same allocation, emptied.
        v.push(3);
        let b = v.lend();
        let ptr = b.as_ptr();
        drop(b);
        v.reclaim();
        assert_eq!((v.vec.len(), v.vec.as_ptr()), (0, ptr));
        // Offsets start again at 0 either way.
        let mut o = Offsets::new();
        o.add(3).unwrap();
        let b = o.lend();
        assert_eq!(&b[..], [0, 3]);
        drop(b);
        o.reclaim();
        assert_eq!(o.0.vec, [0]);
    }
}
