//! The direct serializer's plan: a [`Node`] per field of the h5vec
//! fields, holding the columns of its leaves (`columns.rs`), filled by the
//! `Serializer` of `serializer.rs` row by row and turned into each batch's
//! arrays, whose buffers come back for the next batch. [`Plan::new`] is
//! `None` for a shape the direct path does not cover (serde_arrow saves
//! it).

mod columns;
mod node;
mod serializer;

use ::serde::ser::Serialize;
use arrow_array::ArrayRef;
use arrow_schema::{FieldRef, Fields};

use crate::error::{Error, Result};
use crate::serde::fast::{PathError, R};
use node::{Kind, Node};
use serializer::Ser;

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
    use super::columns::{Offsets, Vals};
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
