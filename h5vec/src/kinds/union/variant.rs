//! A union's variants: the [`At`], [`Variant`] and [`Union`] traits the
//! derive macro implements, each variant's layout as functions
//! ([`VariantFns`]) with its boxed encoder and decoder, and the union's
//! schema node.

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::expect_members;
use crate::error::{Error, Result};
use crate::evolution::LoadFlags;
use crate::kinds::record::FieldList;
use crate::options::{FieldStorage, WriteCtx};
use crate::schema::{ids, Kind, Schema, Stored};

/// Marks variant `I` (declaration order, from 0) of a union.
pub struct At<const I: usize>;

/// One variant of a union `Self`, marked by `M` ([`At<I>`](At)).
pub trait Variant<M>: Sized + 'static {
    /// The variant's fields' codecs as a cons list (`()` for a unit variant).
    type Fields: FieldList;
    /// The variant node's codec: `HDF5Vectors.StructCodec` (struct
    /// variants), `.TupleCodec` (tuple variants) or `.ConstantCodec` (unit).
    const CODEC: &'static str;
    /// The stored field names, in declaration order.
    const FIELD_NAMES: &'static [&'static str];
    /// Per-field storage settings, as for records.
    const FIELD_STORAGE: &'static [FieldStorage] = &[];
    /// References to the fields, if `self` is this variant.
    fn parts(&self) -> Option<<Self::Fields as FieldList>::Refs<'_>>;
    /// The variant built from its fields.
    fn from_parts(parts: <Self::Fields as FieldList>::Values) -> Self;
}

/// An enum with data stored as a union.
pub trait Union: Sized + 'static {
    /// The stored variant names, in declaration order (the tag values).
    const VARIANT_NAMES: &'static [&'static str];
    /// The position of `self`'s variant in [`VARIANT_NAMES`](Self::VARIANT_NAMES).
    fn tag(&self) -> usize;
    /// Every variant's layout, in declaration order.
    fn variants() -> Vec<VariantFns<Self>>;
}

/// Writes one variant's columns.
pub(super) trait VariantEnc<U> {
    fn push(&mut self, value: &U) -> Result<()>;
    fn push_null(&mut self) -> Result<()>;
    fn flush(&mut self) -> Result<()>;
}

/// Reads one variant's columns.
pub(super) trait VariantDec<U> {
    fn load(&mut self, rows: Range<u64>) -> Result<()>;
    fn next(&mut self) -> Result<U>;
    fn skip(&mut self) -> Result<()>;
}

pub(super) type BoxEnc<U> = Box<dyn VariantEnc<U>>;
pub(super) type BoxDec<U> = Box<dyn VariantDec<U>>;

/// One variant's layout as functions, built by [`VariantFns::of`].
pub struct VariantFns<U> {
    pub(super) schema: fn(&WriteCtx<'_>) -> Schema,
    pub(super) create: fn(&Group, &str, &WriteCtx<'_>) -> Result<BoxEnc<U>>,
    pub(super) append: fn(&Group, &Stored, &str, u64, &WriteCtx<'_>) -> Result<BoxEnc<U>>,
    pub(super) open: fn(&Group, &Stored, &str, u64, LoadFlags) -> Result<BoxDec<U>>,
}

impl<U: Union> VariantFns<U> {
    /// The layout of variant `M` of `U`.
    pub fn of<M: 'static>() -> Self
    where
        U: Variant<M>,
    {
        VariantFns {
            schema: variant_schema::<U, M>,
            create: |g, path, ctx| {
                let enc = <U as Variant<M>>::Fields::create(
                    g,
                    <U as Variant<M>>::FIELD_NAMES,
                    <U as Variant<M>>::FIELD_STORAGE,
                    path,
                    ctx,
                )?;
                Ok(Box::new(VarEncoder::<U, M> {
                    enc,
                    path: path.to_owned(),
                    _m: PhantomData,
                }))
            },
            append: |g, node, path, rows, ctx| {
                check_variant::<U, M>(g, node, path)?;
                let enc = <U as Variant<M>>::Fields::append(
                    g,
                    <U as Variant<M>>::FIELD_NAMES,
                    &node.children,
                    path,
                    rows,
                    ctx,
                )?;
                Ok(Box::new(VarEncoder::<U, M> {
                    enc,
                    path: path.to_owned(),
                    _m: PhantomData,
                }))
            },
            open: |g, node, path, rows, load| {
                check_variant::<U, M>(g, node, path)?;
                let fields: Vec<Option<(&str, &Stored)>> = <U as Variant<M>>::FIELD_NAMES
                    .iter()
                    .zip(&node.children)
                    .map(|(n, c)| Some((*n, c)))
                    .collect();
                let dec = <U as Variant<M>>::Fields::open(
                    g,
                    &fields,
                    <<U as Variant<M>>::Fields as FieldList>::no_defaults(),
                    path,
                    rows,
                    load,
                )?;
                Ok(Box::new(VarDecoder::<U, M> {
                    dec,
                    _m: PhantomData,
                }))
            },
        }
    }
}

struct VarEncoder<U: Variant<M>, M> {
    enc: <<U as Variant<M>>::Fields as FieldList>::Encoders,
    path: String,
    _m: PhantomData<fn() -> M>,
}

impl<U: Variant<M>, M> VariantEnc<U> for VarEncoder<U, M> {
    #[inline]
    fn push(&mut self, value: &U) -> Result<()> {
        let parts = value.parts().ok_or_else(|| {
            Error::encode(
                &self.path,
                "a value's tag names another variant (internal bookkeeping error)",
            )
        })?;
        <U as Variant<M>>::Fields::push(&mut self.enc, parts)
    }
    fn push_null(&mut self) -> Result<()> {
        <U as Variant<M>>::Fields::push_null(&mut self.enc)
    }
    fn flush(&mut self) -> Result<()> {
        <U as Variant<M>>::Fields::flush(&mut self.enc)
    }
}

struct VarDecoder<U: Variant<M>, M> {
    dec: <<U as Variant<M>>::Fields as FieldList>::Decoders,
    _m: PhantomData<fn() -> M>,
}

impl<U: Variant<M>, M> VariantDec<U> for VarDecoder<U, M> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        <U as Variant<M>>::Fields::load(&mut self.dec, rows)
    }
    #[inline]
    fn next(&mut self) -> Result<U> {
        <U as Variant<M>>::Fields::next(&mut self.dec).map(U::from_parts)
    }
    fn skip(&mut self) -> Result<()> {
        <U as Variant<M>>::Fields::skip(&mut self.dec)
    }
}

/// The node of variant `M` of `U`: a record, or a constant for a unit variant.
fn variant_schema<U: Variant<M>, M>(ctx: &WriteCtx<'_>) -> Schema {
    let logical = std::any::type_name::<U>();
    if <U as Variant<M>>::FIELD_NAMES.is_empty() {
        return Schema::new(Kind::Constant, ids::CONSTANT, ids::CONSTANT_CODEC, logical);
    }
    let mut s = Schema::new(Kind::Record, ids::RECORD, <U as Variant<M>>::CODEC, logical);
    s.field_names = Some(
        <U as Variant<M>>::FIELD_NAMES
            .iter()
            .map(|s| s.to_string())
            .collect(),
    );
    <U as Variant<M>>::Fields::schemas(ctx, <U as Variant<M>>::FIELD_STORAGE, &mut s.children);
    s
}

/// Checks a stored variant node and the members of its group.
fn check_variant<U: Variant<M>, M>(group: &Group, node: &Stored, path: &str) -> Result<()> {
    let names = <U as Variant<M>>::FIELD_NAMES;
    let mut want = if names.is_empty() {
        Schema::new(Kind::Constant, ids::CONSTANT, ids::CONSTANT_CODEC, "")
    } else {
        let mut s = Schema::new(Kind::Record, ids::RECORD, <U as Variant<M>>::CODEC, "");
        s.field_names = Some(names.iter().map(|s| s.to_string()).collect());
        s
    };
    // Children are checked by their own codecs; here only their number.
    want.children = vec![Schema::new(Kind::default(), "", "", ""); <U as Variant<M>>::Fields::LEN];
    node.expect(&want, path)?;
    expect_members(group, names, node, path)
}

/// The schema node of union `U`.
pub(crate) fn union_schema<U: Union>(ctx: &WriteCtx<'_>) -> Schema {
    let mut s = Schema::new(
        Kind::Union,
        ids::UNION,
        ids::H5VEC_CODEC,
        std::any::type_name::<U>(),
    );
    s.variant_names = Some(U::VARIANT_NAMES.iter().map(|s| s.to_string()).collect());
    s.variant_values = Some((0..U::VARIANT_NAMES.len() as i64).collect());
    s.children = U::variants().iter().map(|v| (v.schema)(ctx)).collect();
    s
}
