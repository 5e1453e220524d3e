//! The leaf writers of numbers, Bool, char, Float16 and complex values
//! (`Leaves`) and of `Option<number>` list elements (`Fill`), and
//! `write_values`: the leaves of nested `FixedSizeList`s into a column.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef};
use arrow_buffer::NullBuffer;

use crate::arrow::numbers::{numbers, Number};
use crate::column::PodWriter;
use crate::error::{Error, Result};
use crate::kinds::adapters::complex::{self, ReIm};
use crate::kinds::adapters::half::{self, F16Bits};
use crate::kinds::list::{FillEncoder, FillItem, FillNumber, ItemCodec};
use crate::raw::{Bits8, Pod};

use super::arrays::{bad_key, check_nulls, hole, At, Texts};

/// Where a value comes from in Arrow: a number of the same type, a
/// Boolean, or a string of one character (`char`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    Number,
    Bool,
    Char,
}

numbers! {
    /// A column writer of one of the raw types of scalars and dense leaves.
    pub(crate) enum Leaves {
        numbers(PodWriter<native>),
        Bool(PodWriter<Bits8>),
        /// `Float16` (SPEC.md section 4.8).
        F16(PodWriter<F16Bits>),
        /// `ComplexF32`, `ComplexF64`: from `Struct { r, i }` (SPEC.md section 4.8).
        C32(PodWriter<ReIm<f32>>),
        C64(PodWriter<ReIm<f64>>),
    }
}

/// Makes the writer of one raw type (creating or resuming its dataset).
pub(super) trait MakeWriter {
    fn make<R: Pod>(&self) -> Result<PodWriter<R>>;
}

/// Runs `$body` with `$w` bound to the writer of any variant.
macro_rules! each_leaves {
    ($leaves:expr, $w:ident => $body:expr) => {
        numbers!(match ($leaves) {
            Leaves::number($w) as _A => $body,
            Leaves::Bool($w) => $body,
            Leaves::F16($w) => $body,
            Leaves::C32($w) => $body,
            Leaves::C64($w) => $body,
        })
    };
}

impl Leaves {
    /// The writer of encoded type `enc` (`Int8` .. `Float64`, `Bool`).
    pub(super) fn make(enc: &str, m: &impl MakeWriter, path: &str) -> Result<Leaves> {
        Ok(numbers!(by_name (enc) {
            Leaves::number(m.make()?),
            "Bool" => Leaves::Bool(m.make()?),
            "Float16" => Leaves::F16(m.make()?),
            "ComplexF32" => Leaves::C32(m.make()?),
            "ComplexF64" => Leaves::C64(m.make()?),
            e => {
                return Err(Error::mismatch(
                    path,
                    "a number or Bool encoded type",
                    format!("`{e}`"),
                ))
            }
        }))
    }

    /// Values buffered.
    fn buffered(&self) -> usize {
        each_leaves!(self, w => w.buf.len())
    }

    /// Counts `n` rows without values (`[T; 0]`).
    fn add_empty_rows(&mut self, n: u64) {
        each_leaves!(self, w => w.empty_rows += n)
    }

    /// Sets `n` buffered values from `start` on to the placeholder (zero;
    /// `Bits8(0)`, false, for `Bool`).
    fn zero(&mut self, start: usize, n: usize) {
        each_leaves!(self, w => w.buf[start..start + n].fill(Default::default()))
    }

    /// Appends every value of `leaves` (nulls under placeholders included,
    /// set to zero afterwards by the caller); `per` leaves make a row.
    fn extend(&mut self, leaves: &dyn Array, src: Src, per: usize, at: &At<'_>) -> Result<()> {
        let what = self.describe(src);
        let wrong = || {
            Error::mismatch(
                at.path,
                format!("Arrow values for {what}"),
                leaves.data_type(),
            )
        };
        match (src, self) {
            (Src::Char, Leaves::I32(w)) => {
                let texts = Texts::of(leaves).ok_or_else(wrong)?;
                let nulls = leaves.logical_nulls();
                for i in 0..leaves.len() {
                    if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        w.buf.push(0);
                        continue;
                    }
                    let s = texts.get(i).ok_or_else(|| bad_key(at, i / per.max(1)))?;
                    let mut cs = s.chars();
                    match (cs.next(), cs.next()) {
                        (Some(c), None) => w.buf.push(c as u32 as i32),
                        _ => {
                            return Err(Error::encode(
                                at.row(i / per.max(1)),
                                format!("a char column holds one character per value, found {s:?}"),
                            ))
                        }
                    }
                }
                Ok(())
            }
            (Src::Bool, Leaves::Bool(w)) => {
                let b = leaves.as_boolean_opt().ok_or_else(wrong)?;
                w.buf.extend(b.values().iter().map(|v| Bits8(v as u8)));
                Ok(())
            }
            (Src::Number, Leaves::F16(w)) => {
                half::arrow::push_bits(leaves, &mut w.buf).ok_or_else(wrong)
            }
            (Src::Number, Leaves::C32(w)) => {
                complex::arrow::push_parts::<Float32Type>(leaves, &mut w.buf).ok_or_else(wrong)
            }
            (Src::Number, Leaves::C64(w)) => {
                complex::arrow::push_parts::<Float64Type>(leaves, &mut w.buf).ok_or_else(wrong)
            }
            (Src::Number, leaves_w) => numbers!(match (leaves_w) {
                Leaves::number(w) as A => {
                    let a = leaves.as_primitive_opt::<A>().ok_or_else(wrong)?;
                    w.buf.extend_from_slice(a.values());
                    Ok(())
                },
                Leaves::Bool(_) | Leaves::F16(_) | Leaves::C32(_) | Leaves::C64(_) => Err(wrong()),
            }),
            _ => Err(wrong()),
        }
    }

    fn describe(&self, src: Src) -> &'static str {
        match (src, self) {
            (Src::Char, _) => "a char column (strings of one character)",
            (Src::Bool, _) => "a Bool column (Boolean)",
            (Src::Number, w) => numbers!(match (w) {
                Leaves::number(_) as A => A::COLUMN,
                Leaves::Bool(_) => "a Bool column",
                Leaves::F16(_) => "a Float16 column",
                Leaves::C32(_) => "a ComplexF32 column (Struct { r, i } of Float32)",
                Leaves::C64(_) => "a ComplexF64 column (Struct { r, i } of Float64)",
            }),
        }
    }

    pub(super) fn flush(&mut self) -> Result<()> {
        each_leaves!(self, w => w.flush())
    }
}

numbers! {
    /// A `fill_nullable` element writer of one of the number types.
    pub(crate) enum Fill {
        numbers(FillEncoder<native>),
    }
}

pub(super) trait MakeFill {
    fn make<T: FillNumber>(&self) -> Result<FillEncoder<T>>
    where
        FillItem<T>: ItemCodec<Encoder = FillEncoder<T>>;
}

impl Fill {
    pub(super) fn make(enc: Option<&str>, m: &impl MakeFill, path: &str) -> Result<Fill> {
        Ok(numbers!(by_name (enc.unwrap_or("")) {
            Fill::number(m.make()?),
            e => {
                return Err(Error::mismatch(
                    path,
                    "a fill_nullable node of a number type",
                    format!("encoded type `{e}`"),
                ))
            }
        }))
    }
}

/// Scalars and dense arrays: the leaves of (nested) `FixedSizeList`s into
/// the column buffer, zeros under enclosing nulls.
pub(super) fn write_values(
    w: &mut Leaves,
    per: usize,
    src: Src,
    arr: &dyn Array,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
    let rows = arr.len();
    check_nulls(arr.logical_nulls().as_ref(), holes, at)?;
    // Down the FixedSizeList levels to the leaves; a null at any level is
    // allowed only inside a row an enclosing null covers.
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
    let leaves: &dyn Array = owned.as_deref().unwrap_or(arr);
    if k != per || leaves.len() != rows.saturating_mul(per) {
        return Err(Error::mismatch(
            at.path,
            format!("{per} values per row"),
            format!("{} values for {rows} rows", leaves.len()),
        ));
    }
    let start = w.buffered();
    w.extend(leaves, src, per, at)?;
    if let Some(h) = holes.filter(|h| h.null_count() > 0) {
        for r in (0..rows).filter(|&r| h.is_null(r)) {
            w.zero(start + r * per, per);
        }
    }
    if per == 0 {
        w.add_empty_rows(rows as u64);
    }
    Ok(())
}
