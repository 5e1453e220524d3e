//! [`Json`] and [`Blob`]: any serde type as an `H5Vector`, stored as the
//! `#[h5vec(json)]` and `#[h5vec(blob)]` field attributes store it (SPEC.md
//! sections 3.1 and 3.5). What `load_column` takes to read such a field on
//! its own, and a field or vector type of its own.

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::codec::{Codec, Decoder, Encoder, H5Vector};
use crate::error::Result;
use crate::evolution::LoadFlags;
use crate::kinds::blob::BlobCodec;
use crate::kinds::json::JsonCodec;
use crate::options::WriteCtx;
use crate::schema::{Schema, Stored};

/// A serde value stored as compact JSON text, one variable-length UTF-8
/// string per row: the layout of an `#[h5vec(json)]` field, so
/// [`load_column`](crate::load_column) reads such a field as `Vec<Json<T>>`.
///
/// ```
/// use h5vec::{H5Vector, Json};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
/// struct Meta { source: String }
///
/// #[derive(H5Vector)]
/// struct Row { id: u32, #[h5vec(json)] meta: Meta }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("j.h5"))?;
/// let meta = Meta { source: "lab".into() };
/// h5vec::save_vector(&file, "rows", &[Row { id: 1, meta: meta.clone() }])?;
/// let metas: Vec<Json<Meta>> = h5vec::load_column(&file, "rows", "meta")?;
/// assert_eq!(metas, [Json(meta)]);
/// // Any JSON column reads as `serde_json::Value` too.
/// let raw: Vec<Json<serde_json::Value>> = h5vec::load_column(&file, "rows", "meta")?;
/// assert_eq!(raw[0].0["source"], "lab");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Json<T>(pub T);

/// A serde value stored as bincode bytes: the layout of an
/// `#[h5vec(blob)]` field, so [`load_column`](crate::load_column) reads such
/// a field as `Vec<Blob<T>>`.
///
/// ```
/// use h5vec::{Blob, H5Vector};
/// use std::collections::BTreeMap;
///
/// #[derive(H5Vector)]
/// struct Row { id: u32, #[h5vec(blob)] counts: BTreeMap<String, u32> }
///
/// # fn main() -> h5vec::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let file = h5vec::create_file(dir.path().join("b.h5"))?;
/// let counts = BTreeMap::from([("a".to_string(), 1)]);
/// h5vec::save_vector(&file, "rows", &[Row { id: 1, counts: counts.clone() }])?;
/// let back: Vec<Blob<BTreeMap<String, u32>>> = h5vec::load_column(&file, "rows", "counts")?;
/// assert_eq!(back, [Blob(counts)]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Blob<T>(pub T);

/// A newtype stored with the codec of what it wraps.
pub trait Wrapper: Sized + 'static {
    /// The wrapped value's codec.
    type Inner: Codec;
    /// Wraps a decoded value.
    fn wrap(v: <Self::Inner as Codec>::Value) -> Self;
    /// The wrapped value.
    fn get(&self) -> &<Self::Inner as Codec>::Value;
}

impl<T: Serialize + DeserializeOwned + 'static> Wrapper for Json<T> {
    type Inner = JsonCodec<T>;
    fn wrap(v: T) -> Self {
        Json(v)
    }
    fn get(&self) -> &T {
        &self.0
    }
}

impl<T: Serialize + DeserializeOwned + 'static> Wrapper for Blob<T> {
    type Inner = BlobCodec<T>;
    fn wrap(v: T) -> Self {
        Blob(v)
    }
    fn get(&self) -> &T {
        &self.0
    }
}

impl<T: Serialize + DeserializeOwned + 'static> H5Vector for Json<T> {
    type Codec = WrapperCodec<Self>;
}

impl<T: Serialize + DeserializeOwned + 'static> H5Vector for Blob<T> {
    type Codec = WrapperCodec<Self>;
}

/// The codec of a [`Wrapper`]: the inner codec's layout and schema.
pub struct WrapperCodec<W>(PhantomData<W>);

/// Writes wrapped values.
pub struct WrapperEncoder<W: Wrapper>(<W::Inner as Codec>::Encoder);

/// Reads wrapped values.
pub struct WrapperDecoder<W: Wrapper>(<W::Inner as Codec>::Decoder);

impl<W: Wrapper> Codec for WrapperCodec<W> {
    type Value = W;
    type Encoder = WrapperEncoder<W>;
    type Decoder = WrapperDecoder<W>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        W::Inner::schema(ctx)
    }
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        W::Inner::create(group, path, ctx).map(WrapperEncoder)
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        W::Inner::append(group, node, path, count, ctx).map(WrapperEncoder)
    }
    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        W::Inner::open_with(group, node, path, count, load).map(WrapperDecoder)
    }
}

impl<W: Wrapper> Encoder<W> for WrapperEncoder<W> {
    #[inline]
    fn push(&mut self, value: &W) -> Result<()> {
        self.0.push(value.get())
    }
    fn push_null(&mut self) -> Result<()> {
        self.0.push_null()
    }
    fn flush(&mut self) -> Result<()> {
        self.0.flush()
    }
}

impl<W: Wrapper> Decoder<W> for WrapperDecoder<W> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.0.load(rows)
    }
    #[inline]
    fn next(&mut self) -> Result<W> {
        self.0.next().map(W::wrap)
    }
    fn skip(&mut self) -> Result<()> {
        self.0.skip()
    }
    fn skip_null(&mut self) -> Result<()> {
        self.0.skip_null()
    }
}
