//! The `dense` kind's Arrow writer: what only dense needs beside the
//! scalar kind's leaf writers (`kinds/scalar/arrow/write.rs`, whose
//! `ValuesCol` writes both: a scalar is a dense element of shape `[]`):
//! the element shape of a dense node, and the leaves of nested
//! `FixedSizeList`s, the Arrow form of its elements (SPEC.md sections 3.2 and 11).

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_buffer::NullBuffer;

use crate::arrow::mapping::dense_shape;
use crate::arrow::write::col::{hole, At};
use crate::error::{Error, Result};
use crate::schema::Schema;

/// A dense node's element shape, outermost first, and its leaves per row.
pub(crate) fn shape_of(node: &Schema, path: &str) -> Result<(Vec<usize>, usize)> {
    let dims = dense_shape(node, path)?;
    let mut shape = Vec::with_capacity(dims.len());
    let mut per = 1usize;
    for d in dims {
        let d = usize::try_from(d)
            .map_err(|_| Error::invalid(path, format!("dense dimension {d} out of range")))?;
        per = per
            .checked_mul(d)
            .ok_or_else(|| Error::invalid(path, "dense element too large"))?;
        shape.push(d);
    }
    Ok((shape, per))
}

/// Down the `FixedSizeList` levels of `arr` to its leaves: the leaves
/// (`None`: `arr` itself, no level) and the leaves per row. A null at any
/// level is allowed only inside a row an enclosing null (`holes`) covers.
pub(crate) fn fixed_size_leaves(
    arr: &dyn Array,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<(Option<ArrayRef>, usize)> {
    let mut owned: Option<ArrayRef> = None;
    let mut k = 1usize;
    loop {
        let cur: &dyn Array = owned.as_deref().unwrap_or(arr);
        let Some(fsl) = cur.as_fixed_size_list_opt() else {
            break;
        };
        let size = usize::try_from(fsl.value_length()).unwrap_or(0);
        k = k.saturating_mul(size);
        let need = fsl.len().saturating_mul(size);
        if fsl.values().len() < need {
            return Err(Error::invalid(
                at.path,
                "a FixedSizeList with fewer values than its rows need",
            ));
        }
        let child = fsl.values().slice(0, need);
        if let Some(n) = child.logical_nulls().filter(|n| n.null_count() > 0) {
            if let Some(j) = (0..n.len()).find(|&j| n.is_null(j) && !hole(holes, j / k)) {
                return Err(Error::mismatch(
                    at.row(j / k),
                    "a value in every entry of a fixed-size array",
                    "a null entry",
                ));
            }
        }
        owned = Some(child);
    }
    Ok((owned, k))
}
