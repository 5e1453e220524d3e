//! The direct deserializer's nodes: a [`DNode`] per serde field over the
//! array read for it (its [`DKind`]; unions checked up front), read row by
//! row by `deserializer.rs` under the reader (`mod.rs`).

use crate::arrow::numbers::numbers;
use crate::serde::fast::{plain, Shape};
use crate::serde::fields::is_tuple;
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BooleanArray, LargeListArray, LargeStringArray, PrimitiveArray, UnionArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field};
use std::cell::Cell;

numbers! {
    pub(super) enum DKind {
        numbers(PrimitiveArray<arrow>),
        Bool(BooleanArray),
        Str(LargeStringArray),
        List(LargeListArray, Box<DNode>),
        Fixed(usize, Box<DNode>),
        Record {
            names: Vec<String>,
            tuple: bool,
            children: Vec<DNode>,
            order: InOrder,
        },
        /// An enum with data: each row's variant and its row there (checked
        /// against the variants' lengths), and one record per variant.
        Union {
            types: arrow_buffer::ScalarBuffer<i8>,
            offsets: arrow_buffer::ScalarBuffer<i32>,
            names: Vec<String>,
            variants: Vec<DNode>,
        },
    }
}

/// Whether a struct's fields (serde's `&'static` field list) are the
/// record's names in order, so that the struct reads its fields as a
/// sequence, without matching a key per field. Remembered for the last
/// field list seen (compared by address).
#[derive(Default)]
pub(super) struct InOrder {
    pub(super) fields: Cell<Option<&'static [&'static str]>>,
    pub(super) same: Cell<bool>,
}

impl InOrder {
    #[inline]
    pub(super) fn check(&self, fields: &'static [&'static str], names: &[String]) -> bool {
        if self
            .fields
            .get()
            .is_some_and(|f| std::ptr::eq(f.as_ptr(), fields.as_ptr()) && f.len() == fields.len())
        {
            return self.same.get();
        }
        let same = fields.len() == names.len() && fields.iter().zip(names).all(|(f, n)| f == n);
        self.fields.set(Some(fields));
        self.same.set(same);
        same
    }
}

pub(super) struct DNode {
    pub(super) kind: DKind,
    pub(super) nulls: Option<NullBuffer>,
}

impl DNode {
    /// The reader of stored array `a` for serde field `sf`, or `None` for
    /// a shape serde_arrow reads.
    pub(super) fn new(sf: &Field, a: &ArrayRef) -> Option<Self> {
        if !plain(sf) {
            return None;
        }
        let kind = match (sf.data_type(), a.data_type()) {
            (DataType::Struct(sfs), DataType::Struct(_)) if !sfs.is_empty() => {
                let s = a.as_struct();
                let tuple = is_tuple(sf);
                if tuple && s.num_columns() != sfs.len() {
                    return None;
                }
                let mut children = Vec::with_capacity(sfs.len());
                for (i, c) in sfs.iter().enumerate() {
                    let col = if tuple {
                        s.column(i)
                    } else {
                        s.column_by_name(c.name())?
                    };
                    children.push(DNode::new(c, col)?);
                }
                DKind::Record {
                    names: sfs.iter().map(|f| f.name().clone()).collect(),
                    tuple,
                    children,
                    order: InOrder::default(),
                }
            }
            (DataType::Struct(sfs), DataType::FixedSizeList(_, n)) if is_tuple(sf) => {
                let l = a.as_fixed_size_list();
                let item = sfs.first()?;
                if usize::try_from(*n).ok()? != sfs.len()
                    || sfs.iter().any(|f| f.data_type() != item.data_type())
                {
                    return None;
                }
                DKind::Fixed(sfs.len(), Box::new(DNode::new(item, l.values())?))
            }
            (DataType::FixedSizeList(si, n), DataType::FixedSizeList(_, m)) if n == m => {
                let l = a.as_fixed_size_list();
                DKind::Fixed(
                    usize::try_from(*n).ok()?,
                    Box::new(DNode::new(si, l.values())?),
                )
            }
            (DataType::LargeList(si) | DataType::List(si), DataType::LargeList(_)) => {
                let l = a.as_list::<i64>();
                DKind::List(l.clone(), Box::new(DNode::new(si, l.values())?))
            }
            (DataType::Union(..), DataType::Union(..)) => union_reader(sf, a)?,
            (s, _) if s.is_nested() => return None,
            (_, t) => numbers!(by_type (t) {
                DKind::number(a.as_primitive().clone()),
                DataType::Boolean => DKind::Bool(a.as_boolean().clone()),
                DataType::LargeUtf8 => DKind::Str(a.as_string::<i64>().clone()),
                _ => return None,
            }),
        };
        // Values are indexed from the array's start (sliced views go through serde_arrow).
        if a.offset() != 0 {
            return None;
        }
        Some(DNode {
            kind,
            nulls: a.logical_nulls().filter(|n| n.null_count() > 0),
        })
    }
}

/// The reader of stored union `a` for serde field `sf` (an enum with
/// data): the stored variants must be serde's, in order; `None` for a
/// shape serde_arrow reads (its error then names what differs).
pub(super) fn union_reader(sf: &Field, a: &ArrayRef) -> Option<DKind> {
    let (DataType::Union(suf, _), DataType::Union(huf, _)) = (sf.data_type(), a.data_type()) else {
        return None;
    };
    let u = a.as_any().downcast_ref::<UnionArray>()?;
    let offsets = u.offsets()?.clone();
    if suf.len() != huf.len() || suf.is_empty() {
        return None;
    }
    let mut names = Vec::with_capacity(suf.len());
    let mut variants = Vec::with_capacity(suf.len());
    let mut lens = Vec::with_capacity(suf.len());
    for (k, ((sid, sc), (hid, hc))) in suf.iter().zip(huf.iter()).enumerate() {
        if usize::try_from(sid).ok()? != k || sid != hid || sc.name() != hc.name() {
            return None;
        }
        let child = u.child(hid);
        let s = child.as_struct_opt()?;
        if child.offset() != 0 {
            return None;
        }
        let (vnames, children): (Vec<String>, Vec<DNode>) = match (Shape::of(sc), sc.data_type()) {
            (Shape::Unit, _) if s.num_columns() == 0 => (Vec::new(), Vec::new()),
            (Shape::Newtype, _) if s.num_columns() == 1 => {
                (vec!["1".into()], vec![DNode::new(sc, s.column(0))?])
            }
            (Shape::Tuple, DataType::Struct(sfs)) if sfs.len() == s.num_columns() => {
                let c = sfs
                    .iter()
                    .enumerate()
                    .map(|(i, f)| DNode::new(f, s.column(i)))
                    .collect::<Option<Vec<_>>>()?;
                ((1..=sfs.len()).map(|i| i.to_string()).collect(), c)
            }
            (Shape::Struct, DataType::Struct(sfs)) if !sfs.is_empty() => {
                let c = sfs
                    .iter()
                    .map(|f| DNode::new(f, s.column_by_name(f.name())?))
                    .collect::<Option<Vec<_>>>()?;
                (sfs.iter().map(|f| f.name().clone()).collect(), c)
            }
            _ => return None,
        };
        lens.push(child.len());
        names.push(sc.name().clone());
        variants.push(DNode {
            kind: DKind::Record {
                names: vnames,
                tuple: false,
                children,
                order: InOrder::default(),
            },
            nulls: child.logical_nulls().filter(|n| n.null_count() > 0),
        });
    }
    // Every row's variant and row exist (values are read unchecked later).
    let ok = u.type_ids().iter().zip(offsets.iter()).all(|(&t, &o)| {
        usize::try_from(t)
            .ok()
            .and_then(|k| lens.get(k))
            .zip(usize::try_from(o).ok())
            .is_some_and(|(&len, o)| o < len)
    });
    ok.then(|| DKind::Union {
        types: u.type_ids().clone(),
        offsets,
        names,
        variants,
    })
}
