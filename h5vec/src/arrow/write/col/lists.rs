//! The list writer: `OFFSETS` and the elements of Arrow list arrays, and
//! binary arrays as lists of `UInt8`.

use arrow_array::{Array, ArrayRef, OffsetSizeTrait};
use arrow_buffer::NullBuffer;

use crate::error::{Error, Result};
use crate::kinds::list::items_path;

use super::arrays::{hole, At, Bytes};
use super::{ChildCol, ListCol};

impl ListCol {
    /// A list array: OFFSETS from its spans (a null row an empty span),
    /// then the elements of the rows' spans, one contiguous run at a time.
    pub(super) fn write_spans<O: OffsetSizeTrait>(
        &mut self,
        offsets: &[O],
        child: &ArrayRef,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let items_at = items_path(at.path);
        // (first element, end element, element index in VALUES of the first)
        let mut run: Option<(usize, usize, u64)> = None;
        for (i, w) in offsets.windows(2).enumerate() {
            let (a, b) = match (w[0].to_usize(), w[1].to_usize()) {
                (Some(a), Some(b)) if a <= b && b <= child.len() => (a, b),
                _ => {
                    return Err(Error::invalid(
                        at.row(i),
                        "list offsets out of order or past the list's values",
                    ))
                }
            };
            if hole(holes, i) {
                self.offsets.buf.push(self.end);
                continue;
            }
            let first = self.end;
            self.end += (b - a) as u64;
            self.offsets.buf.push(self.end);
            run = match run {
                Some((s, e, base)) if e == a => Some((s, b, base)),
                Some((s, e, base)) => {
                    self.write_run(child, s, e, base, &items_at)?;
                    Some((a, b, first))
                }
                None => Some((a, b, first)),
            };
        }
        if let Some((s, e, base)) = run {
            self.write_run(child, s, e, base, &items_at)?;
        }
        Ok(())
    }

    fn write_run(
        &mut self,
        child: &ArrayRef,
        s: usize,
        e: usize,
        base: u64,
        path: &str,
    ) -> Result<()> {
        if s == e {
            return Ok(());
        }
        let part = child.slice(s, e - s);
        self.items.write(part.as_ref(), None, &At { path, base })
    }

    /// A binary array as a list of `UInt8`: each row's bytes straight into
    /// the element buffer.
    pub(super) fn write_bytes(
        &mut self,
        bytes: &Bytes<'_>,
        rows: usize,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let Some(w) = self.items.u8_leaf() else {
            return Err(Error::mismatch(
                at.path,
                "a list of UInt8 for Arrow binary values",
                "a list of other elements",
            ));
        };
        for i in 0..rows {
            if !hole(holes, i) {
                let b = bytes.get(i);
                w.buf.extend_from_slice(b);
                self.end += b.len() as u64;
            }
            self.offsets.buf.push(self.end);
        }
        Ok(())
    }
}
