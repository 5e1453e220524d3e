//! The direct deserializer's reader: a [`DNode`] per serde field over the
//! array `h5vec::arrow` read for it (unions checked up front, as their
//! values are read unchecked), deserialized row by row by the
//! `Deserializer` of `deserializer.rs`. [`Reader::new`] is `None` for a
//! shape the direct path does not cover (serde_arrow loads it).

mod deserializer;
mod node;

use ::serde::de;
use arrow_array::{Array, StructArray};
use arrow_schema::FieldRef;

use crate::serde::fast::R;
use deserializer::De;
use node::{DKind, DNode, InOrder};

/// The load plan of a batch: serde fields matched to the stored columns.
pub(crate) struct Reader {
    root: DNode,
    rows: usize,
}

impl Reader {
    /// The reader of the stored columns `cols` (by name) for serde fields
    /// `sfs`, or `None` when a field needs serde_arrow.
    pub(crate) fn new(sfs: &[FieldRef], root: &StructArray) -> Option<Self> {
        if sfs.is_empty() || root.offset() != 0 {
            return None;
        }
        let children = sfs
            .iter()
            .map(|f| DNode::new(f, root.column_by_name(f.name())?))
            .collect::<Option<Vec<_>>>()?;
        Some(Reader {
            root: DNode {
                kind: DKind::Record {
                    names: sfs.iter().map(|f| f.name().clone()).collect(),
                    tuple: false,
                    children,
                    order: InOrder::default(),
                },
                nulls: None,
            },
            rows: root.len(),
        })
    }

    /// Deserializes every row onto the end of `out`; the batch's first row
    /// is row `first` of the vector (for errors).
    pub(crate) fn rows_into<T: de::DeserializeOwned>(&self, first: u64, out: &mut Vec<T>) -> R {
        for row in 0..self.rows {
            out.push(
                T::deserialize(De {
                    node: &self.root,
                    row,
                })
                .map_err(|e| e.prefixed(format_args!("row {}", first + row as u64)))?,
            );
        }
        Ok(())
    }
}
