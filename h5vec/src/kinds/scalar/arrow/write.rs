//! The `scalar` kind's Arrow writer, shared with `dense` (a scalar is a
//! dense element of shape `[]`; what only dense needs is in
//! `kinds/dense/arrow/write.rs`): `ValuesCol`, the column of a scalar or
//! dense node of numbers, Bool, char, enum codes, Float16 or complex values
//! (a vector field's `values` or a list's leaf elements), made by the typed
//! codecs' create and open functions; the Arrow values (nested
//! `FixedSizeList`s of them for dense) go into its buffer in bulk, one
//! monomorphic copy per number type (`Leaves`), zeros under enclosing nulls.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::Array;
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::arrow::mapping::number_type;
use crate::arrow::numbers::{numbers, Number};
use crate::arrow::write::col::{bad_key, check_nulls, At, Texts};
use crate::column::{create_values, open_values, PodWriter};
use crate::error::{Error, Result};
use crate::kinds::adapters::complex::{self, ReIm};
use crate::kinds::adapters::half::{self, F16Bits};
use crate::kinds::dense::arrow::write::{fixed_size_leaves, shape_of};
use crate::kinds::list::{create_leaf, open_leaf_values};
use crate::options::WriteCtx;
use crate::raw::{Bits8, Pod};
use crate::schema::{ids, Kind, Schema, Stored};

/// Where a value comes from in Arrow: a number of the same type, a
/// Boolean, or a string of one character (`char`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    Number,
    Bool,
    Char,
}

numbers! {
    /// A column writer of one of the raw types of scalars and dense leaves.
    enum Leaves {
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
trait MakeWriter {
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
    fn make(enc: &str, m: &impl MakeWriter, path: &str) -> Result<Leaves> {
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

    fn flush(&mut self) -> Result<()> {
        each_leaves!(self, w => w.flush())
    }
}

/// The raw leaf of a scalar or dense node: its encoded type and where its
/// values come from.
fn leaf_of(node: &Schema, path: &str) -> Result<(String, Src)> {
    let enc = node.encoded_type.clone().unwrap_or_default();
    let number = number_type(&enc).is_some();
    let src = match node.codec.as_str() {
        ids::IDENTITY if enc == "Bool" => Src::Bool,
        ids::IDENTITY | ids::ENUM if number => Src::Number,
        ids::IDENTITY if matches!(enc.as_str(), "Float16" | "ComplexF32" | "ComplexF64") => {
            Src::Number
        }
        // SPEC.md sections 4.6 and 4.7: the adapters' numbers (times'
        // Int64/Int32 counts, UUIDs' bytes).
        c if number
            && crate::kinds::adapters::ARROW_ADAPTERS
                .iter()
                .any(|a| a.codec() == c) =>
        {
            Src::Number
        }
        ids::CHAR if enc == "Int32" => Src::Char,
        c => {
            return Err(Error::mismatch(
                path,
                "numbers or Bool (IdentityCodec), Int32 (CharCodec) or integers (EnumCodec)",
                format!("codec `{c}` with encoded type `{enc}`"),
            ))
        }
    };
    Ok((enc, src))
}

struct CreateValues<'a> {
    group: &'a Group,
    shape: &'a [usize],
    path: &'a str,
    ctx: &'a WriteCtx<'a>,
}

impl MakeWriter for CreateValues<'_> {
    fn make<R: Pod>(&self) -> Result<PodWriter<R>> {
        create_values(self.group, self.shape, self.path, self.ctx)
    }
}

struct CreateLeaf<'a> {
    parent: &'a Group,
    name: &'a str,
    shape: &'a [usize],
    path: &'a str,
    ctx: &'a WriteCtx<'a>,
}

impl MakeWriter for CreateLeaf<'_> {
    fn make<R: Pod>(&self) -> Result<PodWriter<R>> {
        create_leaf(self.parent, self.name, self.shape, self.path, self.ctx)
    }
}

struct ResumeValues<'a> {
    group: &'a Group,
    node: &'a Stored,
    want: &'a Schema,
    inner: &'a [u64],
    path: &'a str,
    count: u64,
}

impl MakeWriter for ResumeValues<'_> {
    fn make<R: Pod>(&self) -> Result<PodWriter<R>> {
        let r = open_values::<R>(
            self.group, self.node, self.path, self.count, self.want, self.inner,
        )?;
        PodWriter::resume(r.ds, self.inner.to_vec(), self.count, self.path)
    }
}

struct ResumeLeaf<'a> {
    parent: &'a Group,
    name: &'a str,
    node: &'a Stored,
    want: &'a Schema,
    inner: &'a [u64],
    path: &'a str,
    rows: u64,
}

impl MakeWriter for ResumeLeaf<'_> {
    fn make<R: Pod>(&self) -> Result<PodWriter<R>> {
        let (ds, _) = open_leaf_values::<R>(
            self.parent,
            self.name,
            self.node,
            self.path,
            self.rows,
            self.want,
            self.inner,
        )?;
        PodWriter::resume(ds, self.inner.to_vec(), self.rows, self.path)
    }
}

/// The element shape and leaves per row of scalar or dense node `node`.
fn shape(node: &Schema, path: &str) -> Result<(Vec<usize>, usize)> {
    if node.kind == Kind::Dense {
        shape_of(node, path)
    } else {
        Ok((Vec::new(), 1))
    }
}

/// The column of a scalar or dense node (numbers, bools, chars, enums;
/// `per` leaves a row), as a vector field or as list elements.
pub(crate) struct ValuesCol {
    w: Leaves,
    per: usize,
    src: Src,
}

impl ValuesCol {
    /// The column of `node`: `leaves` makes its dataset for the encoded
    /// type and element shape.
    fn new(
        node: &Schema,
        path: &str,
        leaves: impl FnOnce(&str, &[usize]) -> Result<Leaves>,
    ) -> Result<ValuesCol> {
        let (enc, src) = leaf_of(node, path)?;
        let (shape, per) = shape(node, path)?;
        Ok(ValuesCol {
            w: leaves(&enc, &shape)?,
            per,
            src,
        })
    }

    /// Creates the values of vector field `node` in its data group `group`.
    pub(crate) fn create(
        node: &Schema,
        group: &Group,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<ValuesCol> {
        ValuesCol::new(node, path, |enc, shape| {
            let m = CreateValues {
                group,
                shape,
                path,
                ctx,
            };
            Leaves::make(enc, &m, path)
        })
    }

    /// Creates list element member `name` of `parent` for element node `node`.
    pub(crate) fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<ValuesCol> {
        ValuesCol::new(node, path, |enc, shape| {
            let m = CreateLeaf {
                parent,
                name,
                shape,
                path,
                ctx,
            };
            Leaves::make(enc, &m, path)
        })
    }

    /// Opens vector field `node` (as schema: `schema`) of `count` rows in
    /// `group` for appending, after the checks a typed append makes.
    pub(crate) fn append(
        node: &Stored,
        schema: &Schema,
        group: &Group,
        path: &str,
        count: u64,
    ) -> Result<ValuesCol> {
        ValuesCol::new(schema, path, |enc, shape| {
            let inner: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
            let m = ResumeValues {
                group,
                node,
                want: schema,
                inner: &inner,
                path,
                count,
            };
            Leaves::make(enc, &m, path)
        })
    }

    /// Opens list element member `name` of `parent` (`rows` elements) for appending.
    pub(crate) fn append_item(
        node: &Stored,
        schema: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
    ) -> Result<ValuesCol> {
        ValuesCol::new(schema, path, |enc, shape| {
            let inner: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
            let m = ResumeLeaf {
                parent,
                name,
                node,
                want: schema,
                inner: &inner,
                path,
                rows,
            };
            Leaves::make(enc, &m, path)
        })
    }

    /// The leaves of (nested) `FixedSizeList`s into the column buffer,
    /// zeros under enclosing nulls.
    pub(crate) fn write(
        &mut self,
        arr: &dyn Array,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let (w, per, src) = (&mut self.w, self.per, self.src);
        let rows = arr.len();
        check_nulls(arr.logical_nulls().as_ref(), holes, at)?;
        let (owned, k) = fixed_size_leaves(arr, holes, at)?;
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

    pub(crate) fn flush(&mut self) -> Result<()> {
        self.w.flush()
    }

    /// The writer of `UInt8` values, one per row, if this column is one.
    pub(crate) fn u8_leaf(&mut self) -> Option<&mut PodWriter<u8>> {
        match self {
            ValuesCol {
                w: Leaves::U8(w),
                per: 1,
                src: Src::Number,
            } => Some(w),
            _ => None,
        }
    }
}
