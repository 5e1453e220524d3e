//! Constant kind: unit structs, `()`, `PhantomData<T>`.
//!
//! Layout on disk (SPEC.md section 3.4):
//! ```text
//! <field>/          empty group; the vector's metadata/count gives the length
//! ```
//! The schema node is `kind = "constant"`, `schema = HDF5Vectors.ConstantSchema`,
//! `codec = HDF5Vectors.ConstantCodec`, as HDF5Vectors.jl writes it. The value
//! itself is not stored (Julia keeps it in its serialized schema only); a
//! `serialized_value` entry that older HDF5Vectors versions wrote beside the
//! node is ignored.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{expect_members, Codec, Decoder, Encoder, H5Vector};
use crate::error::Result;
use crate::evolution::LoadFlags;
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

/// A type with exactly one value, stored as nothing at all.
pub trait Constant: Sized + 'static {
    /// The one value.
    fn value() -> Self;
}

impl Constant for () {
    fn value() -> Self {}
}
impl H5Vector for () {
    type Codec = ConstantCodec<()>;
}

impl<T: ?Sized + 'static> Constant for PhantomData<T> {
    fn value() -> Self {
        PhantomData
    }
}
impl<T: ?Sized + 'static> H5Vector for PhantomData<T> {
    type Codec = ConstantCodec<PhantomData<T>>;
}

/// The constant layout for `T`.
pub struct ConstantCodec<T>(PhantomData<T>);

/// Writes nothing.
pub struct ConstantEncoder;

/// Yields the constant.
pub struct ConstantDecoder<T>(PhantomData<T>);

impl<T: Constant> Codec for ConstantCodec<T> {
    type Value = T;
    type Encoder = ConstantEncoder;
    type Decoder = ConstantDecoder<T>;

    fn schema(_ctx: &WriteCtx<'_>) -> Schema {
        Schema::new(
            Kind::Constant,
            ids::CONSTANT,
            ids::CONSTANT_CODEC,
            std::any::type_name::<T>(),
        )
    }
    fn create(_group: &Group, _path: &str, _ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        Ok(ConstantEncoder)
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        _ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        Self::open(group, node, path, count)?;
        Ok(ConstantEncoder)
    }
    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        _count: u64,
        _load: LoadFlags,
    ) -> Result<Self::Decoder> {
        node.expect(
            &Self::schema(&WriteCtx {
                opts: &Default::default(),
                len_hint: 0,
            }),
            path,
        )?;
        expect_members(group, &[], node, path)?;
        Ok(ConstantDecoder(PhantomData))
    }
}

impl<T> Encoder<T> for ConstantEncoder {
    #[inline]
    fn push(&mut self, _value: &T) -> Result<()> {
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

impl<T: Constant> Decoder<T> for ConstantDecoder<T> {
    fn load(&mut self, _rows: Range<u64>) -> Result<()> {
        Ok(())
    }
    #[inline]
    fn next(&mut self) -> Result<T> {
        Ok(T::value())
    }
    fn skip(&mut self) -> Result<()> {
        Ok(())
    }
}
