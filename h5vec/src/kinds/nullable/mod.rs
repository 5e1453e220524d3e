//! Nulls: `Option<T>` as a `MASK` beside the values.
//!
//! Layout on disk:
//! ```text
//! <field>/MASK      1-D h5col bool (enum over int8, FALSE = 0, TRUE = 1), one per row;
//!                   TRUE means the value is present
//! <field>/...       T's own layout, with a placeholder row under every null
//!                   (0, "", an empty list, all-default record fields)
//! ```
//! For a list (`Option<Vec<T>>`) the field group is the list group, so this
//! is exactly h5col's nullable list column. Schema: kind `nullable`
//! (`h5vec.NullableSchema`, codec `h5vec.MaskCodec`) with `T`'s node as its
//! only child.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{exhausted, open_column, range_len, Codec, Decoder, Encoder, H5Vector};
use crate::column::{PodReader, PodWriter};
use crate::error::{Error, Place, Result};
use crate::evolution::LoadFlags;
use crate::options::{Compression, WriteCtx};
use crate::raw::{self, Bits8};
use crate::schema::{ids, Kind, Schema, Stored};

/// Name of the mask dataset.
pub(crate) const MASK: &str = "MASK";

/// A codec whose values can be null, and the codec of `Option` of them.
///
/// One `Option` level has a MASK; a value that is already nullable (an
/// `Option`, or a `String` or `Vec` inside one) has no second, so
/// `Option<Option<T>>` does not compile, with a note saying how to keep
/// both levels (SPEC.md section 4.3).
#[diagnostic::on_unimplemented(
    message = "h5vec cannot store an `Option` of a value stored as `{Self}`, which is already nullable: one `Option` level has one MASK",
    label = "`Option<Option<_>>` (or an `Option` of a type that cannot be null)",
    note = "to keep `None` apart from `Some(None)`, wrap the inner value in a struct: `Option<Inner>` with `#[derive(H5Vector)] struct Inner {{ value: Option<T> }}` (one MASK per level), or store the field with `#[h5vec(blob)]` (bincode keeps both levels; JSON writes both as `null`)"
)]
pub trait Nullable: Codec {
    /// How `Option<Self::Value>` is stored.
    type Codec: Codec<Value = Option<Self::Value>>;
}

impl<T: H5Vector> H5Vector for Option<T>
where
    T::Codec: Nullable,
{
    type Codec = <T::Codec as Nullable>::Codec;
}

/// The schema node of a nullable value around `inner`.
pub(crate) fn nullable_schema<T>(inner: Schema) -> Schema {
    let mut s = Schema::new(
        Kind::Nullable,
        ids::NULLABLE,
        ids::MASK_CODEC,
        std::any::type_name::<Option<T>>(),
    );
    s.children.push(inner);
    s
}

/// What the h5col bool type is called in errors.
const H5COL_BOOL: &str = "the h5col bool type (enum over int8: FALSE = 0, TRUE = 1)";

/// Creates an empty 1-D dataset `name` of the h5col bool type in `group`
/// (a `MASK`, or a bool column of an h5col table).
pub(crate) fn create_bool_column(
    group: &Group,
    name: &str,
    path: &str,
    chunk_rows: usize,
    compression: &Compression,
    checksum: bool,
) -> Result<PodWriter<Bits8>> {
    let dt = raw::h5col_bool(path)?;
    PodWriter::create_as(
        group,
        name,
        &dt,
        &[],
        chunk_rows,
        compression,
        checksum,
        path,
    )
}

/// Opens 1-D dataset `name` of `group`, checked to be the h5col bool type
/// with at least `rows` rows.
pub(crate) fn open_bool_column(
    group: &Group,
    name: &str,
    path: &str,
    rows: u64,
) -> Result<PodReader<Bits8>> {
    let (ds, n) = open_column(
        group,
        name,
        path,
        &[],
        rows,
        |t| t.class == hdf5_sys::h5t::H5T_class_t::H5T_ENUM && t.size == 1,
        H5COL_BOOL,
    )?;
    let p = Place::new(path, ds.name());
    if !raw::is_h5col_bool(&ds, &p)? {
        return Err(Error::mismatch(p, H5COL_BOOL, "another enum"));
    }
    PodReader::new(ds, Vec::new(), n, path)
}

/// Creates an empty mask dataset in `group`.
pub(crate) fn create_mask(
    group: &Group,
    path: &str,
    ctx: &WriteCtx<'_>,
) -> Result<PodWriter<Bits8>> {
    create_bool_column(
        group,
        MASK,
        path,
        ctx.chunk_rows(1),
        ctx.compression_for(MASK),
        ctx.checksum(),
    )
}

/// Opens the mask dataset in `group` (checked: h5col bool, at least `rows` rows).
pub(crate) fn open_mask(group: &Group, path: &str, rows: u64) -> Result<PodReader<Bits8>> {
    open_bool_column(group, MASK, path, rows)
}

/// Reads the MASK entries of rows `rows`, checked to be 0 or 1.
pub(crate) fn read_mask(mask: &PodReader<Bits8>, rows: &Range<u64>) -> Result<Vec<Bits8>> {
    let n = range_len(rows, mask.place())?;
    let m = mask.read(rows.start, n)?;
    if let Some((i, b)) = m.iter().enumerate().find(|(_, b)| b.0 > 1) {
        return Err(Error::invalid(
            mask.element(rows.start + i as u64),
            format!("MASK value {} is neither FALSE (0) nor TRUE (1)", b.0),
        ));
    }
    Ok(m)
}

/// Writes values and their mask.
pub struct MaskedEncoder<E> {
    inner: E,
    mask: PodWriter<Bits8>,
}

impl<E> MaskedEncoder<E> {
    /// Pairs a values encoder with a mask writer.
    pub fn new(inner: E, mask: PodWriter<Bits8>) -> Self {
        MaskedEncoder { inner, mask }
    }

    /// The values encoder, to flush its datasets on their own (an h5col
    /// table writes every column's values before any mask).
    pub(crate) fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    /// Writes the buffered mask entries only.
    pub(crate) fn flush_mask(&mut self) -> Result<()> {
        self.mask.flush()
    }

    /// The mask writer, to buffer many entries at once.
    #[cfg(feature = "arrow")]
    pub(crate) fn mask_mut(&mut self) -> &mut PodWriter<Bits8> {
        &mut self.mask
    }
}

/// Creates a nullable column in `group`: the values' members (`inner`),
/// then `MASK` beside them. A member already named `MASK` (a record field)
/// is an error.
pub(crate) fn create_nullable<E>(
    group: &Group,
    path: &str,
    ctx: &WriteCtx<'_>,
    inner: impl FnOnce() -> Result<E>,
) -> Result<MaskedEncoder<E>> {
    let taken = || {
        Error::encode(
            path,
            "a field named MASK cannot sit beside the null mask of an Option",
        )
    };
    if group.link_exists(MASK) {
        return Err(taken());
    }
    let inner = inner()?;
    if group.link_exists(MASK) {
        return Err(taken());
    }
    Ok(MaskedEncoder::new(inner, create_mask(group, path, ctx)?))
}

/// Continues the nullable column `node` of `count` rows in `group`: checks
/// the node, opens the values with `inner` (given the child node, with
/// `MASK` allowed beside its members) and the mask.
pub(crate) fn append_nullable<E>(
    group: &Group,
    node: &Stored,
    path: &str,
    count: u64,
    inner: impl FnOnce(&Stored) -> Result<E>,
) -> Result<MaskedEncoder<E>> {
    check_nullable(node, path)?;
    let inner = inner(&child_with_mask(node, path)?)?;
    let mask = open_mask(group, path, count)?;
    Ok(MaskedEncoder::new(
        inner,
        PodWriter::resume(mask.ds, Vec::new(), count, path)?,
    ))
}

impl<T, E: Encoder<T>> Encoder<Option<T>> for MaskedEncoder<E> {
    #[inline]
    fn push(&mut self, value: &Option<T>) -> Result<()> {
        match value {
            Some(v) => {
                self.inner.push(v)?;
                self.mask.buf.push(Bits8(1));
            }
            None => {
                self.inner.push_null()?;
                self.mask.buf.push(Bits8(0));
            }
        }
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        self.inner.push_null()?;
        self.mask.buf.push(Bits8(0));
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        // Values first, then the mask.
        self.inner.flush()?;
        self.mask.flush()
    }
}

/// Reads values and their mask.
pub struct MaskedDecoder<D> {
    inner: D,
    mask: PodReader<Bits8>,
    buf: std::vec::IntoIter<Bits8>,
    next_row: u64,
}

impl<D> MaskedDecoder<D> {
    /// Pairs a values decoder with a mask reader.
    pub fn new(inner: D, mask: PodReader<Bits8>) -> Self {
        MaskedDecoder {
            inner,
            mask,
            buf: Vec::new().into_iter(),
            next_row: 0,
        }
    }
}

impl<T, D: Decoder<T>> Decoder<Option<T>> for MaskedDecoder<D> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.buf = read_mask(&self.mask, &rows)?.into_iter();
        self.next_row = rows.start;
        self.inner.load(rows)
    }
    #[inline]
    fn next(&mut self) -> Result<Option<T>> {
        let present = self
            .buf
            .next()
            .ok_or_else(|| exhausted(self.mask.place()))?;
        self.next_row += 1;
        if present.0 != 0 {
            self.inner.next().map(Some)
        } else {
            self.inner.skip_null()?;
            Ok(None)
        }
    }
    fn skip(&mut self) -> Result<()> {
        self.buf
            .next()
            .ok_or_else(|| exhausted(self.mask.place()))?;
        self.next_row += 1;
        self.inner.skip()
    }
}

/// `Option<T>` for a codec `C` whose layout lives in the field group:
/// `C`'s datasets plus `MASK`.
pub struct NullableCodec<C>(PhantomData<C>);

/// The stored child node with `MASK` allowed beside its members.
pub(crate) fn child_with_mask(node: &Stored, path: &str) -> Result<Stored> {
    let mut child = node.child(0, path)?.clone();
    child.extra_members.push(MASK.to_owned());
    Ok(child)
}

impl<C: Codec> Codec for NullableCodec<C> {
    type Value = Option<C::Value>;
    type Encoder = MaskedEncoder<C::Encoder>;
    type Decoder = MaskedDecoder<C::Decoder>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        nullable_schema::<C::Value>(C::schema(ctx))
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        create_nullable(group, path, ctx, || C::create(group, path, ctx))
    }

    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        append_nullable(group, node, path, count, |child| {
            C::append(group, child, path, count, ctx)
        })
    }

    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        check_nullable(node, path)?;
        let mask = open_mask(group, path, count)?;
        let inner = C::open_with(group, &child_with_mask(node, path)?, path, count, load)?;
        Ok(MaskedDecoder::new(inner, mask))
    }
}

/// Checks a stored `nullable` node (kind, identifiers, one child).
pub(crate) fn check_nullable(node: &Stored, path: &str) -> Result<()> {
    let mut want = Schema::new(Kind::Nullable, ids::NULLABLE, ids::MASK_CODEC, "");
    want.children.push(Schema::new(Kind::default(), "", "", ""));
    node.expect(&want, path)
}

macro_rules! nullable_via_mask {
    ($($c:ty => [$($g:tt)*]),* $(,)?) => {$(
        impl<$($g)*> Nullable for $c {
            type Codec = NullableCodec<$c>;
        }
    )*};
}
nullable_via_mask! {
    crate::kinds::scalar::ScalarCodec<T> => [T: crate::kinds::scalar::Scalar],
    crate::kinds::dense::DenseCodec<A> => [A: crate::kinds::dense::DenseElem],
    crate::kinds::constant::ConstantCodec<T> => [T: crate::kinds::constant::Constant],
}
