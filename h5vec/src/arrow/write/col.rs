//! One encoder per schema node, built from the node at run time: the
//! datasets come from the typed codecs' own create and append functions
//! (`create_values`, `create_leaf`, `create_list_group`, `StringCodec`,
//! `BlobCodec`, ...), so a batch written here has exactly the layout a
//! typed save of the same Rust type has. Values go from Arrow buffers into
//! the column writers' buffers in bulk; nulls go to masks and to the
//! placeholders the typed encoders write (SPEC.md sections 3, 4).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, OffsetSizeTrait};
use arrow_buffer::NullBuffer;
use hdf5::Group;

use crate::codec::{child_path, expect_members, open_group, Codec, Encoder};
use crate::column::PodWriter;
use crate::error::{Context, Error, ErrorKind, Place, Result};
use crate::kinds::blob::{BlobCodec, BlobEncoder};
use crate::kinds::complex::ReIm;
use crate::kinds::constant::ConstantCodec;
use crate::kinds::dense::create_values;
use crate::kinds::half::F16Bits;
use crate::kinds::json::{JsonCodec, JsonEncoder};
use crate::kinds::list::{
    append_nullable_item, create_item_mask, create_leaf, create_list_group, create_record_values,
    items_path, open_leaf_values, open_list_group, open_list_group_with, open_record_values,
    FillEncoder, FillItem, FillNumber, ItemCodec, StringValuesEncoder, StringValuesItem,
};
use crate::kinds::nullable::{append_nullable, create_nullable, MaskedEncoder};
use crate::kinds::scalar::open_values;
use crate::kinds::string::{StringCodec, StringEncoder};
use crate::kinds::vls::{OptVlsStringCodec, VlsEncoder};
use crate::options::WriteCtx;
use crate::raw::{Bits8, Pod};
use crate::schema::{ids, Kind, Schema, Stored};

use super::super::mapping::{dense_shape, number_type};

/// JSON and blob columns are written from text and bytes already encoded:
/// their codecs' value type is never serialized here.
type Any = serde_json::Value;

/// Where a value comes from in Arrow: a number of the same type, a
/// Boolean, or a string of one character (`char`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Src {
    Number,
    Bool,
    Char,
}

/// A column writer of one of the raw types of scalars and dense leaves.
pub(super) enum Leaves {
    I8(PodWriter<i8>),
    I16(PodWriter<i16>),
    I32(PodWriter<i32>),
    I64(PodWriter<i64>),
    U8(PodWriter<u8>),
    U16(PodWriter<u16>),
    U32(PodWriter<u32>),
    U64(PodWriter<u64>),
    F32(PodWriter<f32>),
    F64(PodWriter<f64>),
    Bool(PodWriter<Bits8>),
    /// `Float16` (SPEC.md section 4.8).
    F16(PodWriter<F16Bits>),
    /// `ComplexF32`, `ComplexF64`: from `Struct { r, i }` (SPEC.md section 4.8).
    C32(PodWriter<ReIm<f32>>),
    C64(PodWriter<ReIm<f64>>),
}

/// Makes the writer of one raw type (creating or resuming its dataset).
trait MakeWriter {
    fn make<R: Pod>(&self) -> Result<PodWriter<R>>;
}

/// Runs `$body` with `$w` bound to the writer of any numeric variant
/// and `$arrow` to its Arrow type; the `$other` arms for `Bool`, `F16`,
/// `C32` and `C64`.
macro_rules! each_number {
    ($leaves:expr, $w:ident, $arrow:ident => $body:expr, $($other:pat => $else:expr),+ $(,)?) => {
        match $leaves {
            Leaves::I8($w) => {
                type $arrow = Int8Type;
                $body
            }
            Leaves::I16($w) => {
                type $arrow = Int16Type;
                $body
            }
            Leaves::I32($w) => {
                type $arrow = Int32Type;
                $body
            }
            Leaves::I64($w) => {
                type $arrow = Int64Type;
                $body
            }
            Leaves::U8($w) => {
                type $arrow = UInt8Type;
                $body
            }
            Leaves::U16($w) => {
                type $arrow = UInt16Type;
                $body
            }
            Leaves::U32($w) => {
                type $arrow = UInt32Type;
                $body
            }
            Leaves::U64($w) => {
                type $arrow = UInt64Type;
                $body
            }
            Leaves::F32($w) => {
                type $arrow = Float32Type;
                $body
            }
            Leaves::F64($w) => {
                type $arrow = Float64Type;
                $body
            }
            $($other => $else,)+
        }
    };
}

impl Leaves {
    /// The writer of encoded type `enc` (`Int8` .. `Float64`, `Bool`).
    fn make(enc: &str, m: &impl MakeWriter, path: &str) -> Result<Leaves> {
        Ok(match enc {
            "Int8" => Leaves::I8(m.make()?),
            "Int16" => Leaves::I16(m.make()?),
            "Int32" => Leaves::I32(m.make()?),
            "Int64" => Leaves::I64(m.make()?),
            "UInt8" => Leaves::U8(m.make()?),
            "UInt16" => Leaves::U16(m.make()?),
            "UInt32" => Leaves::U32(m.make()?),
            "UInt64" => Leaves::U64(m.make()?),
            "Float32" => Leaves::F32(m.make()?),
            "Float64" => Leaves::F64(m.make()?),
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
        })
    }

    /// Values buffered.
    fn buffered(&self) -> usize {
        each_number!(
            self, w, _A => w.buf.len(),
            Leaves::Bool(w) => w.buf.len(),
            Leaves::F16(w) => w.buf.len(),
            Leaves::C32(w) => w.buf.len(),
            Leaves::C64(w) => w.buf.len(),
        )
    }

    /// Counts `n` rows without values (`[T; 0]`).
    fn add_empty_rows(&mut self, n: u64) {
        each_number!(
            self, w, _A => w.empty_rows += n,
            Leaves::Bool(w) => w.empty_rows += n,
            Leaves::F16(w) => w.empty_rows += n,
            Leaves::C32(w) => w.empty_rows += n,
            Leaves::C64(w) => w.empty_rows += n,
        )
    }

    /// Sets `n` buffered values from `start` on to the placeholder (zero).
    fn zero(&mut self, start: usize, n: usize) {
        each_number!(
            self, w, _A => w.buf[start..start + n].fill(Default::default()),
            Leaves::Bool(w) => w.buf[start..start + n].fill(Bits8(0)),
            Leaves::F16(w) => w.buf[start..start + n].fill(Default::default()),
            Leaves::C32(w) => w.buf[start..start + n].fill(Default::default()),
            Leaves::C64(w) => w.buf[start..start + n].fill(Default::default()),
        )
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
                let a = leaves.as_primitive_opt::<Float16Type>().ok_or_else(wrong)?;
                w.buf
                    .extend(a.values().iter().map(|h| F16Bits(h.to_bits())));
                Ok(())
            }
            (Src::Number, Leaves::C32(w)) => {
                let (r, i) =
                    super::typed::complex_parts::<Float32Type>(leaves).ok_or_else(wrong)?;
                w.buf.extend(r.iter().zip(i).map(|(&r, &i)| ReIm { r, i }));
                Ok(())
            }
            (Src::Number, Leaves::C64(w)) => {
                let (r, i) =
                    super::typed::complex_parts::<Float64Type>(leaves).ok_or_else(wrong)?;
                w.buf.extend(r.iter().zip(i).map(|(&r, &i)| ReIm { r, i }));
                Ok(())
            }
            (Src::Number, leaves_w) => each_number!(
                leaves_w, w, A => {
                    let a = leaves.as_primitive_opt::<A>().ok_or_else(wrong)?;
                    w.buf.extend_from_slice(a.values());
                    Ok(())
                },
                Leaves::Bool(_) | Leaves::F16(_) | Leaves::C32(_) | Leaves::C64(_) => Err(wrong())
            ),
            _ => Err(wrong()),
        }
    }

    fn describe(&self, src: Src) -> &'static str {
        match (src, self) {
            (Src::Char, _) => "a char column (strings of one character)",
            (Src::Bool, _) => "a Bool column (Boolean)",
            (Src::Number, Leaves::I8(_)) => "an Int8 column",
            (Src::Number, Leaves::I16(_)) => "an Int16 column",
            (Src::Number, Leaves::I32(_)) => "an Int32 column",
            (Src::Number, Leaves::I64(_)) => "an Int64 column",
            (Src::Number, Leaves::U8(_)) => "a UInt8 column",
            (Src::Number, Leaves::U16(_)) => "a UInt16 column",
            (Src::Number, Leaves::U32(_)) => "a UInt32 column",
            (Src::Number, Leaves::U64(_)) => "a UInt64 column",
            (Src::Number, Leaves::F32(_)) => "a Float32 column",
            (Src::Number, Leaves::F64(_)) => "a Float64 column",
            (Src::Number, Leaves::Bool(_)) => "a Bool column",
            (Src::Number, Leaves::F16(_)) => "a Float16 column",
            (Src::Number, Leaves::C32(_)) => "a ComplexF32 column (Struct { r, i } of Float32)",
            (Src::Number, Leaves::C64(_)) => "a ComplexF64 column (Struct { r, i } of Float64)",
        }
    }

    fn flush(&mut self) -> Result<()> {
        each_number!(
            self, w, _A => w.flush(),
            Leaves::Bool(w) => w.flush(),
            Leaves::F16(w) => w.flush(),
            Leaves::C32(w) => w.flush(),
            Leaves::C64(w) => w.flush(),
        )
    }
}

/// A `fill_nullable` element writer of one of the number types.
pub(super) enum Fill {
    I8(FillEncoder<i8>),
    I16(FillEncoder<i16>),
    I32(FillEncoder<i32>),
    I64(FillEncoder<i64>),
    U8(FillEncoder<u8>),
    U16(FillEncoder<u16>),
    U32(FillEncoder<u32>),
    U64(FillEncoder<u64>),
    F32(FillEncoder<f32>),
    F64(FillEncoder<f64>),
}

trait MakeFill {
    fn make<T: FillNumber>(&self) -> Result<FillEncoder<T>>
    where
        FillItem<T>: ItemCodec<Encoder = FillEncoder<T>>;
}

macro_rules! each_fill {
    ($fill:expr, $e:ident, $arrow:ident => $body:expr) => {
        match $fill {
            Fill::I8($e) => {
                type $arrow = Int8Type;
                $body
            }
            Fill::I16($e) => {
                type $arrow = Int16Type;
                $body
            }
            Fill::I32($e) => {
                type $arrow = Int32Type;
                $body
            }
            Fill::I64($e) => {
                type $arrow = Int64Type;
                $body
            }
            Fill::U8($e) => {
                type $arrow = UInt8Type;
                $body
            }
            Fill::U16($e) => {
                type $arrow = UInt16Type;
                $body
            }
            Fill::U32($e) => {
                type $arrow = UInt32Type;
                $body
            }
            Fill::U64($e) => {
                type $arrow = UInt64Type;
                $body
            }
            Fill::F32($e) => {
                type $arrow = Float32Type;
                $body
            }
            Fill::F64($e) => {
                type $arrow = Float64Type;
                $body
            }
        }
    };
}

impl Fill {
    fn make(enc: Option<&str>, m: &impl MakeFill, path: &str) -> Result<Fill> {
        Ok(match enc.unwrap_or("") {
            "Int8" => Fill::I8(m.make()?),
            "Int16" => Fill::I16(m.make()?),
            "Int32" => Fill::I32(m.make()?),
            "Int64" => Fill::I64(m.make()?),
            "UInt8" => Fill::U8(m.make()?),
            "UInt16" => Fill::U16(m.make()?),
            "UInt32" => Fill::U32(m.make()?),
            "UInt64" => Fill::U64(m.make()?),
            "Float32" => Fill::F32(m.make()?),
            "Float64" => Fill::F64(m.make()?),
            e => {
                return Err(Error::mismatch(
                    path,
                    "a fill_nullable node of a number type",
                    format!("encoded type `{e}`"),
                ))
            }
        })
    }
}

/// The logical path and first row of the values being written, for errors.
pub(super) struct At<'a> {
    pub(super) path: &'a str,
    /// The row (or list element) of the vector the array's first value is.
    pub(super) base: u64,
}

impl At<'_> {
    pub(super) fn row(&self, i: usize) -> String {
        format!("{}[{}]", self.path, self.base + i as u64)
    }
}

fn bad_key(at: &At<'_>, i: usize) -> Error {
    Error::invalid(
        at.row(i),
        "dictionary key out of range of the dictionary's values",
    )
}

/// A string column of any Arrow string type (dictionaries decoded).
enum Texts<'a> {
    Small(&'a arrow_array::StringArray),
    Large(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    Dict(Vec<usize>, Box<Texts<'a>>),
}

impl<'a> Texts<'a> {
    fn of(a: &'a dyn Array) -> Option<Texts<'a>> {
        if let Some(s) = a.as_string_opt::<i32>() {
            return Some(Texts::Small(s));
        }
        if let Some(s) = a.as_string_opt::<i64>() {
            return Some(Texts::Large(s));
        }
        if let Some(s) = a.as_string_view_opt() {
            return Some(Texts::View(s));
        }
        let d = a.as_any_dictionary_opt()?;
        let values = Texts::of(d.values().as_ref())?;
        Some(Texts::Dict(d.normalized_keys(), Box::new(values)))
    }

    /// Value `i`; `None` only for a dictionary key out of range.
    fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Texts::Small(s) => (i < s.len()).then(|| s.value(i)),
            Texts::Large(s) => (i < s.len()).then(|| s.value(i)),
            Texts::View(s) => (i < s.len()).then(|| s.value(i)),
            Texts::Dict(keys, v) => v.get(*keys.get(i)?),
        }
    }
}

/// A binary column of any Arrow binary type.
enum Bytes<'a> {
    Small(&'a arrow_array::BinaryArray),
    Large(&'a arrow_array::LargeBinaryArray),
    View(&'a arrow_array::BinaryViewArray),
}

impl<'a> Bytes<'a> {
    fn of(a: &'a dyn Array) -> Option<Bytes<'a>> {
        if let Some(s) = a.as_binary_opt::<i32>() {
            return Some(Bytes::Small(s));
        }
        if let Some(s) = a.as_binary_opt::<i64>() {
            return Some(Bytes::Large(s));
        }
        a.as_binary_view_opt().map(Bytes::View)
    }

    fn get(&self, i: usize) -> &'a [u8] {
        match self {
            Bytes::Small(s) => s.value(i),
            Bytes::Large(s) => s.value(i),
            Bytes::View(s) => s.value(i),
        }
    }
}

pub(super) fn hole(holes: Option<&NullBuffer>, i: usize) -> bool {
    holes.is_some_and(|h| h.is_null(i))
}

/// A null where the field is not nullable (and no enclosing null covers it).
pub(super) fn check_nulls(
    nulls: Option<&NullBuffer>,
    holes: Option<&NullBuffer>,
    at: &At<'_>,
) -> Result<()> {
    let Some(n) = nulls.filter(|n| n.null_count() > 0) else {
        return Ok(());
    };
    match (0..n.len()).find(|&i| n.is_null(i) && !hole(holes, i)) {
        Some(i) => Err(null_value(at, i)),
        None => Ok(()),
    }
}

fn null_value(at: &At<'_>, i: usize) -> Error {
    Error::mismatch(
        at.row(i),
        "a value (the field is not nullable: SPEC.md section 11)",
        "null",
    )
}

pub(super) fn wrong_array(at: &At<'_>, what: &str, arr: &dyn Array) -> Error {
    Error::mismatch(at.path, format!("Arrow values for {what}"), arr.data_type())
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
        // SPEC.md sections 4.6 and 4.7: Int64/Int32 counts; adapters' numbers.
        ids::INSTANT_CODEC | ids::DATE_CODEC | ids::TIME_OF_DAY_CODEC | ids::DURATION_CODEC
            if number =>
        {
            Src::Number
        }
        c if number && crate::kinds::adapters::by_codec(&node.kind, c).is_some() => Src::Number,
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

/// A dense node's element shape, outermost first, and its leaves per row.
fn shape_of(node: &Schema, path: &str) -> Result<(Vec<usize>, usize)> {
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

fn first_child<'a>(node: &'a Schema, path: &str) -> Result<&'a Schema> {
    node.children
        .first()
        .ok_or_else(|| Error::mismatch(path, "schema child 1", "nothing"))
}

fn record_names<'a>(node: &'a Schema, path: &str) -> Result<&'a [String]> {
    let names = node.field_names.as_deref().unwrap_or(&[]);
    if names.len() != node.children.len() {
        return Err(Error::mismatch(
            path,
            format!("{} field names (one per child schema)", node.children.len()),
            names.len(),
        ));
    }
    Ok(names)
}

/// The options of `ctx` with `vls_strings` as a node says, so that
/// `StringCodec` creates the layout of that node.
fn with_vls<R>(ctx: &WriteCtx<'_>, vls: bool, f: impl FnOnce(&WriteCtx<'_>) -> R) -> R {
    let opts = ctx.opts.clone().vls_strings(vls);
    f(&WriteCtx {
        opts: &opts,
        len_hint: ctx.len_hint,
    })
}

fn not_here(node_kind: &Kind, what: &str, path: &str) -> Error {
    Error::mismatch(
        path,
        format!("a schema kind that can be {what}"),
        format!("kind `{node_kind}`"),
    )
}

/// One node's encoder.
// One encoder per column, built once per save: the size of the largest
// variant costs nothing, and boxing would add an indirection per batch.
#[allow(clippy::large_enum_variant)]
pub(super) enum Col {
    /// Scalars and dense arrays of numbers, Bool, char, enums (and list leaves).
    Values {
        w: Leaves,
        per: usize,
        src: Src,
    },
    /// `String` (variable-length or VLS).
    Str(StringEncoder),
    /// `Option<String>` as VLS with a placeholder.
    OptVls(VlsEncoder),
    Json(JsonEncoder<Any>),
    Blob(BlobEncoder<Any>),
    Constant,
    Record {
        names: Vec<String>,
        cols: Vec<Col>,
    },
    List(Box<ListCol>),
    Masked(MaskedEncoder<Box<Col>>),
    /// `Option<number>` list elements.
    Fill(Fill),
    /// `String` list elements.
    StrValues(StringValuesEncoder),
    /// Enums with data (SPEC.md section 4.4).
    Union(Box<super::union::UnionCol>),
    /// Labelled enums: codes from a dictionary of labels.
    Labels(Box<super::union::LabelsCol>),
}

/// A list group: `OFFSETS` and the elements' encoder.
pub(super) struct ListCol {
    offsets: PodWriter<u64>,
    end: u64,
    items: Col,
}

/// The column of a scalar or dense node (numbers, bools, chars, enums):
/// `leaves` makes its dataset for the encoded type and element shape; the
/// column is wrapped for labels.
fn leaf_col(
    node: &Schema,
    path: &str,
    leaves: impl FnOnce(&str, &[usize]) -> Result<Leaves>,
) -> Result<Col> {
    let (enc, src) = leaf_of(node, path)?;
    let (shape, per) = if node.kind == Kind::Dense {
        shape_of(node, path)?
    } else {
        (Vec::new(), 1)
    };
    let col = Col::Values {
        w: leaves(&enc, &shape)?,
        per,
        src,
    };
    super::union::LabelsCol::wrap(node, col, path)
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

struct CreateFill<'a> {
    parent: &'a Group,
    name: &'a str,
    path: &'a str,
    ctx: &'a WriteCtx<'a>,
}

impl MakeFill for CreateFill<'_> {
    fn make<T: FillNumber>(&self) -> Result<FillEncoder<T>>
    where
        FillItem<T>: ItemCodec<Encoder = FillEncoder<T>>,
    {
        FillItem::<T>::create(self.parent, self.name, self.path, self.ctx)
    }
}

struct ResumeFill<'a> {
    parent: &'a Group,
    name: &'a str,
    node: &'a Stored,
    path: &'a str,
    rows: u64,
    ctx: &'a WriteCtx<'a>,
}

impl MakeFill for ResumeFill<'_> {
    fn make<T: FillNumber>(&self) -> Result<FillEncoder<T>>
    where
        FillItem<T>: ItemCodec<Encoder = FillEncoder<T>>,
    {
        FillItem::<T>::append(
            self.parent,
            self.name,
            self.node,
            self.path,
            self.rows,
            self.ctx,
        )
    }
}

/// Checks a record field name as a vector name is checked (SPEC.md
/// section 1, "Names"), with the field's path in the error.
fn check_field_name(group: &Group, name: &str, path: &str) -> Result<()> {
    crate::vector::check_name(group, name, "record field").map_err(|e| match e.kind() {
        ErrorKind::BadName(m) => Error::bad_name(
            Place::new(
                path,
                crate::codec::member_path(group, &name.escape_debug().to_string()),
            ),
            m,
        ),
        _ => e,
    })
}

impl Col {
    /// Creates the datasets of vector field `node` in its data group `group`.
    pub(super) fn create(
        node: &Schema,
        group: &Group,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Col> {
        match &node.kind {
            Kind::Scalar if node.codec == ids::JSON => {
                with_vls(ctx, false, |c| JsonCodec::<Any>::create(group, path, c)).map(Col::Json)
            }
            Kind::VlsString if node.codec == ids::JSON => {
                with_vls(ctx, true, |c| JsonCodec::<Any>::create(group, path, c)).map(Col::Json)
            }
            Kind::Scalar if node.encoded_type.as_deref() == Some("String") => {
                with_vls(ctx, false, |c| StringCodec::create(group, path, c)).map(Col::Str)
            }
            Kind::Scalar | Kind::Dense => leaf_col(node, path, |enc, shape| {
                let m = CreateValues {
                    group,
                    shape,
                    path,
                    ctx,
                };
                Leaves::make(enc, &m, path)
            }),
            Kind::Union => Ok(Col::Union(Box::new(super::union::UnionCol::create(
                node, group, path, ctx,
            )?))),
            Kind::Record => {
                let names = record_names(node, path)?;
                let mut cols = Vec::with_capacity(names.len());
                for (i, (name, child)) in names.iter().zip(&node.children).enumerate() {
                    let p = child_path(path, name);
                    check_field_name(group, name, &p)?;
                    if names[..i].contains(name) {
                        return Err(Error::bad_name(p, format!("two fields named {name:?}")));
                    }
                    let g = group.create_group(name).at(&p)?;
                    cols.push(Col::create(child, &g, &p, ctx)?);
                }
                Ok(Col::Record {
                    names: names.to_vec(),
                    cols,
                })
            }
            Kind::Constant => Ok(Col::Constant),
            Kind::Blob => Ok(Col::Blob(BlobCodec::<Any>::create(group, path, ctx)?)),
            Kind::VlsString if node.codec == ids::PLACEHOLDER_CODEC => {
                Ok(Col::OptVls(OptVlsStringCodec::create(group, path, ctx)?))
            }
            Kind::VlsString => {
                with_vls(ctx, true, |c| StringCodec::create(group, path, c)).map(Col::Str)
            }
            Kind::List => {
                let offsets = create_list_group(group, path, ctx)?;
                let child = first_child(node, path)?;
                let items = Col::create_item(child, group, "VALUES", &items_path(path), ctx)?;
                Ok(Col::List(Box::new(ListCol {
                    offsets,
                    end: 0,
                    items,
                })))
            }
            Kind::Nullable => {
                let child = first_child(node, path)?;
                let m = create_nullable(group, path, ctx, || {
                    Col::create(child, group, path, ctx).map(Box::new)
                })?;
                Ok(Col::Masked(m))
            }
            k => Err(not_here(k, "a vector field", path)),
        }
    }

    /// Creates list element member `name` of `parent` for element node `node`.
    fn create_item(
        node: &Schema,
        parent: &Group,
        name: &str,
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Col> {
        match &node.kind {
            Kind::Scalar | Kind::Dense if node.encoded_type.as_deref() != Some("String") => {
                leaf_col(node, path, |enc, shape| {
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
            Kind::Union => Ok(Col::Union(Box::new(super::union::UnionCol::create_item(
                node, parent, name, path, ctx,
            )?))),
            Kind::FillNullable => {
                let m = CreateFill {
                    parent,
                    name,
                    path,
                    ctx,
                };
                Ok(Col::Fill(Fill::make(
                    node.encoded_type.as_deref(),
                    &m,
                    path,
                )?))
            }
            Kind::StringValues => Ok(Col::StrValues(StringValuesItem::create(
                parent, name, path, ctx,
            )?)),
            Kind::List => {
                let g = parent.create_group(name).at(path)?;
                Col::create(node, &g, path, ctx)
            }
            Kind::Record => {
                let g = create_record_values(parent, name, path)?;
                Col::create(node, &g, path, ctx)
            }
            Kind::Nullable => {
                let child = first_child(node, path)?;
                if child.kind != Kind::StringValues && child.kind != Kind::List {
                    return Err(not_here(
                        &child.kind,
                        "a nullable list element (string_values or list)",
                        path,
                    ));
                }
                let inner = Col::create_item(child, parent, name, path, ctx)?;
                let mask = create_item_mask(parent, name, path, ctx)?;
                Ok(Col::Masked(MaskedEncoder::new(Box::new(inner), mask)))
            }
            k => Err(not_here(k, "a list element", path)),
        }
    }

    /// Opens vector field `node` of `count` rows in `group` for appending,
    /// after the checks a typed append makes.
    pub(super) fn append(
        node: &Stored,
        group: &Group,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Col> {
        let schema = Schema::from(node);
        match &node.kind {
            Kind::Scalar | Kind::VlsString if node.codec == ids::JSON => Ok(Col::Json(
                JsonCodec::<Any>::append(group, node, path, count, ctx)?,
            )),
            Kind::Scalar if node.encoded_type.as_deref() == Some("String") => Ok(Col::Str(
                StringCodec::append(group, node, path, count, ctx)?,
            )),
            Kind::Scalar | Kind::Dense => {
                let (enc, src) = leaf_of(&schema, path)?;
                let (shape, per) = if node.kind == Kind::Dense {
                    shape_of(&schema, path)?
                } else {
                    (Vec::new(), 1)
                };
                let inner: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
                let m = ResumeValues {
                    group,
                    node,
                    want: &schema,
                    inner: &inner,
                    path,
                    count,
                };
                let col = Col::Values {
                    w: Leaves::make(&enc, &m, path)?,
                    per,
                    src,
                };
                super::union::LabelsCol::wrap(&schema, col, path)
            }
            Kind::Union => Ok(Col::Union(Box::new(super::union::UnionCol::append(
                node, group, path, count, ctx,
            )?))),
            Kind::Record => {
                let names = record_names(&schema, path)?;
                if node.codec != ids::STRUCT
                    && node.codec != ids::TUPLE
                    && node.codec != ids::OFFSET_DATE_TIME_CODEC
                {
                    return Err(Error::mismatch(
                        path,
                        format!("codec `{}` or `{}`", ids::STRUCT, ids::TUPLE),
                        format!("`{}`", node.codec),
                    ));
                }
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                expect_members(group, &refs, node, path)?;
                let mut cols = Vec::with_capacity(names.len());
                for (name, child) in names.iter().zip(&node.children) {
                    let p = child_path(path, name);
                    let g = open_group(group, name, &p)?;
                    cols.push(Col::append(child, &g, &p, count, ctx)?);
                }
                Ok(Col::Record {
                    names: names.to_vec(),
                    cols,
                })
            }
            Kind::Constant => {
                ConstantCodec::<()>::append(group, node, path, count, ctx)?;
                Ok(Col::Constant)
            }
            Kind::Blob => Ok(Col::Blob(BlobCodec::<Any>::append(
                group, node, path, count, ctx,
            )?)),
            Kind::VlsString if node.codec == ids::PLACEHOLDER_CODEC => Ok(Col::OptVls(
                OptVlsStringCodec::append(group, node, path, count, ctx)?,
            )),
            Kind::VlsString => Ok(Col::Str(StringCodec::append(
                group, node, path, count, ctx,
            )?)),
            Kind::List => {
                let (offsets, total) = if node.codec == ids::MAP_CODEC {
                    open_list_group_with(group, node, path, count, ids::MAP_CODEC)?
                } else {
                    open_list_group(group, node, path, count)?
                };
                let child = node.child(0, path)?;
                let items =
                    Col::append_item(child, group, "VALUES", &items_path(path), total, ctx)?;
                let rows = count
                    .checked_add(1)
                    .ok_or_else(|| Error::invalid(path, "count overflows"))?;
                Ok(Col::List(Box::new(ListCol {
                    offsets: PodWriter::resume(offsets.ds, Vec::new(), rows, path)?,
                    end: total,
                    items,
                })))
            }
            Kind::Nullable => {
                let m = append_nullable(group, node, path, count, |child| {
                    Col::append(child, group, path, count, ctx).map(Box::new)
                })?;
                Ok(Col::Masked(m))
            }
            k => Err(not_here(k, "a vector field", path)),
        }
    }

    /// Opens list element member `name` of `parent` (`rows` elements) for appending.
    fn append_item(
        node: &Stored,
        parent: &Group,
        name: &str,
        path: &str,
        rows: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Col> {
        let schema = Schema::from(node);
        match &node.kind {
            Kind::Scalar | Kind::Dense if node.encoded_type.as_deref() != Some("String") => {
                let (enc, src) = leaf_of(&schema, path)?;
                let (shape, per) = if node.kind == Kind::Dense {
                    shape_of(&schema, path)?
                } else {
                    (Vec::new(), 1)
                };
                let inner: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
                let m = ResumeLeaf {
                    parent,
                    name,
                    node,
                    want: &schema,
                    inner: &inner,
                    path,
                    rows,
                };
                let col = Col::Values {
                    w: Leaves::make(&enc, &m, path)?,
                    per,
                    src,
                };
                super::union::LabelsCol::wrap(&schema, col, path)
            }
            Kind::Union => Ok(Col::Union(Box::new(super::union::UnionCol::append_item(
                node, parent, name, path, rows, ctx,
            )?))),
            Kind::FillNullable => {
                let m = ResumeFill {
                    parent,
                    name,
                    node,
                    path,
                    rows,
                    ctx,
                };
                Ok(Col::Fill(Fill::make(
                    node.encoded_type.as_deref(),
                    &m,
                    path,
                )?))
            }
            Kind::StringValues => Ok(Col::StrValues(StringValuesItem::append(
                parent, name, node, path, rows, ctx,
            )?)),
            Kind::List => Col::append(node, &open_group(parent, name, path)?, path, rows, ctx),
            Kind::Record => Col::append(
                node,
                &open_record_values(parent, name, path)?,
                path,
                rows,
                ctx,
            ),
            Kind::Nullable => {
                let m = append_nullable_item(parent, name, node, path, rows, |child| {
                    Col::append_item(child, parent, name, path, rows, ctx).map(Box::new)
                })?;
                Ok(Col::Masked(m))
            }
            k => Err(not_here(k, "a list element", path)),
        }
    }

    /// Buffers the values of `arr`; rows null in `holes` (an enclosing
    /// null) get the placeholders the typed encoders write for them.
    pub(super) fn write(
        &mut self,
        arr: &dyn Array,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        // Times, UUIDs and maps in the form the writers below take.
        let normal = super::typed::normalize(arr, |i| at.row(i))?;
        let arr: &dyn Array = normal.as_deref().unwrap_or(arr);
        match self {
            Col::Values { w, per, src } => write_values(w, *per, *src, arr, holes, at),
            Col::Str(e) => {
                let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "strings", arr))?;
                let nulls = arr.logical_nulls();
                for i in 0..arr.len() {
                    if hole(holes, i) {
                        Encoder::<String>::push_null(e)?;
                    } else if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        return Err(null_value(at, i));
                    } else {
                        e.push_str(texts.get(i).ok_or_else(|| bad_key(at, i))?)?;
                    }
                }
                Ok(())
            }
            Col::OptVls(e) => {
                let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "strings", arr))?;
                let nulls = arr.logical_nulls();
                for i in 0..arr.len() {
                    if hole(holes, i) || nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        e.push_missing()?;
                    } else {
                        e.push(texts.get(i).ok_or_else(|| bad_key(at, i))?)?;
                    }
                }
                Ok(())
            }
            Col::Json(e) => {
                let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "JSON text", arr))?;
                let nulls = arr.logical_nulls();
                for i in 0..arr.len() {
                    if hole(holes, i) {
                        Encoder::<Any>::push_null(e)?;
                    } else if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        return Err(null_value(at, i));
                    } else {
                        let s = texts.get(i).ok_or_else(|| bad_key(at, i))?;
                        // The typed encoder writes only JSON; a typed load parses it.
                        serde_json::from_str::<serde::de::IgnoredAny>(s)
                            .map_err(|err| Error::encode(at.row(i), format!("not JSON: {err}")))?;
                        e.push_text(s)?;
                    }
                }
                Ok(())
            }
            Col::Blob(e) => {
                let bytes = Bytes::of(arr).ok_or_else(|| wrong_array(at, "a blob", arr))?;
                let nulls = arr.logical_nulls();
                for i in 0..arr.len() {
                    if hole(holes, i) {
                        Encoder::<Any>::push_null(e)?;
                    } else if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        return Err(null_value(at, i));
                    } else {
                        e.push_encoded(bytes.get(i));
                    }
                }
                Ok(())
            }
            Col::Constant => Ok(()),
            Col::Union(u) => u.write(arr, holes, at),
            Col::Labels(l) => l.write(arr, holes, at),
            Col::Record { names, cols } => {
                let s = arr
                    .as_struct_opt()
                    .ok_or_else(|| wrong_array(at, "a record", arr))?;
                check_nulls(arr.logical_nulls().as_ref(), holes, at)?;
                if s.num_columns() != cols.len() {
                    return Err(Error::mismatch(
                        at.path,
                        format!("a struct of {} fields", cols.len()),
                        s.num_columns(),
                    ));
                }
                for ((c, name), a) in cols.iter_mut().zip(names.iter()).zip(s.columns()) {
                    let p = child_path(at.path, name);
                    c.write(
                        a.as_ref(),
                        holes,
                        &At {
                            path: &p,
                            base: at.base,
                        },
                    )?;
                }
                Ok(())
            }
            Col::List(l) => {
                check_nulls(arr.logical_nulls().as_ref(), holes, at)?;
                if let Some(a) = arr.as_list_opt::<i32>() {
                    l.write_spans(a.value_offsets(), a.values(), holes, at)
                } else if let Some(a) = arr.as_list_opt::<i64>() {
                    l.write_spans(a.value_offsets(), a.values(), holes, at)
                } else if let Some(b) = Bytes::of(arr) {
                    l.write_bytes(&b, arr.len(), holes, at)
                } else {
                    Err(wrong_array(at, "a list", arr))
                }
            }
            Col::Masked(m) => {
                let nulls = arr.logical_nulls();
                let joined = NullBuffer::union(holes, nulls.as_ref());
                let mask = &mut m.mask_mut().buf;
                match &joined {
                    Some(j) => mask.extend(j.inner().iter().map(|v| Bits8(v as u8))),
                    None => mask.extend(std::iter::repeat_n(Bits8(1), arr.len())),
                }
                m.inner_mut().write(arr, joined.as_ref(), at)
            }
            Col::Fill(f) => {
                let nulls = arr.logical_nulls();
                let missing =
                    |i: usize| hole(holes, i) || nulls.as_ref().is_some_and(|n| n.is_null(i));
                each_fill!(f, e, A => {
                    let a = arr
                        .as_primitive_opt::<A>()
                        .ok_or_else(|| wrong_array(at, "numbers", arr))?;
                    for (i, &v) in a.values().iter().enumerate() {
                        if missing(i) {
                            Encoder::push_null(e)?;
                        } else {
                            e.push_value(v)?;
                        }
                    }
                    Ok(())
                })
            }
            Col::StrValues(e) => {
                let texts = Texts::of(arr).ok_or_else(|| wrong_array(at, "strings", arr))?;
                let nulls = arr.logical_nulls();
                for i in 0..arr.len() {
                    if hole(holes, i) {
                        Encoder::<String>::push_null(e)?;
                    } else if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                        return Err(null_value(at, i));
                    } else {
                        e.push_str(texts.get(i).ok_or_else(|| bad_key(at, i))?);
                    }
                }
                Ok(())
            }
        }
    }

    /// Writes everything buffered, in the typed encoders' order: fields in
    /// order, values before OFFSETS and before masks (SPEC.md section 8).
    pub(super) fn flush(&mut self) -> Result<()> {
        match self {
            Col::Values { w, .. } => w.flush(),
            Col::Str(e) => Encoder::<String>::flush(e),
            Col::OptVls(e) => e.flush(),
            Col::Json(e) => Encoder::<Any>::flush(e),
            Col::Blob(e) => Encoder::<Any>::flush(e),
            Col::Constant => Ok(()),
            Col::Record { cols, .. } => cols.iter_mut().try_for_each(Col::flush),
            Col::List(l) => {
                l.items.flush()?;
                l.offsets.flush()
            }
            Col::Masked(m) => {
                m.inner_mut().flush()?;
                m.flush_mask()
            }
            Col::Fill(f) => each_fill!(f, e, _A => Encoder::flush(e)),
            Col::StrValues(e) => Encoder::<String>::flush(e),
            Col::Union(u) => u.flush(),
            Col::Labels(l) => l.inner.flush(),
        }
    }
}

/// Scalars and dense arrays: the leaves of (nested) `FixedSizeList`s into
/// the column buffer, zeros under enclosing nulls.
fn write_values(
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

impl ListCol {
    /// A list array: OFFSETS from its spans (a null row an empty span),
    /// then the elements of the rows' spans, one contiguous run at a time.
    fn write_spans<O: OffsetSizeTrait>(
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
    fn write_bytes(
        &mut self,
        bytes: &Bytes<'_>,
        rows: usize,
        holes: Option<&NullBuffer>,
        at: &At<'_>,
    ) -> Result<()> {
        let Col::Values {
            w: Leaves::U8(w),
            per: 1,
            src: Src::Number,
        } = &mut self.items
        else {
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
