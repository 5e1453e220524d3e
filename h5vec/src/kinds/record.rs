//! Record kind: derived structs and tuples, one column per field.
//!
//! Layout on disk:
//! ```text
//! <field>/<name_1>/...   the first field's own layout (recursively)
//! <field>/<name_2>/...
//! ```
//! Struct fields keep their names (or `rename`); tuple and tuple-struct
//! fields are named `1`, `2`, ... The schema node has `field_names` in
//! declaration order and one child per field.
//!
//! The derive macro only lists the fields: [`Record::Fields`] is a cons list
//! `(C1, (C2, (C3, ())))` of the fields' codecs; everything else lives here.

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{child_path, expect_members, open_group, Codec, Decoder, Encoder, H5Vector};
use crate::error::{Context, Result};
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::options::WriteCtx;
use crate::schema::{ids, kind, Schema, Stored};

/// A struct or tuple stored field by field.
pub trait Record: Sized + 'static {
    /// The fields' codecs as a cons list `(C1, (C2, ... ()))`.
    type Fields: FieldList;
    /// Codec identifier: `HDF5Vectors.StructCodec` or `.TupleCodec`.
    const CODEC: &'static str;
    /// The stored field names, in declaration order.
    const FIELD_NAMES: &'static [&'static str];
    /// Per-field storage settings (`#[h5vec(chunk_length = .., deflate = ..)]`),
    /// in field order; shorter than the field list means "no override".
    const FIELD_STORAGE: &'static [crate::options::FieldStorage] = &[];
    /// References to the stored fields, as a cons list.
    fn parts(&self) -> <Self::Fields as FieldList>::Refs<'_>;
    /// Builds a value from the stored fields (skipped fields get `Default`).
    fn from_parts(parts: <Self::Fields as FieldList>::Values) -> Self;
}

/// A cons list of field codecs. Implemented for `()` and `(C, Rest)`.
pub trait FieldList: 'static {
    /// The field values, as a cons list.
    type Values;
    /// References to the field values, as a cons list.
    type Refs<'a>;
    /// The fields' encoders.
    type Encoders;
    /// The fields' decoders.
    type Decoders;
    /// Number of fields.
    const LEN: usize;
    /// Appends each field's schema.
    fn schemas(ctx: &WriteCtx<'_>, out: &mut Vec<Schema>);
    /// Creates each field's group and datasets; `names[i]` is field i's name.
    fn create(
        group: &Group,
        names: &[&str],
        storage: &[crate::options::FieldStorage],
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoders>;
    /// Opens each field for appending.
    fn append(
        group: &Group,
        names: &[&str],
        nodes: &[Stored],
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoders>;
    /// Opens each field for reading.
    fn open(
        group: &Group,
        names: &[&str],
        nodes: &[Stored],
        path: &str,
        count: u64,
    ) -> Result<Self::Decoders>;
    /// Pushes one value's fields.
    fn push(enc: &mut Self::Encoders, refs: Self::Refs<'_>) -> Result<()>;
    /// Pushes a placeholder to every field.
    fn push_null(enc: &mut Self::Encoders) -> Result<()>;
    /// Flushes every field, in field order.
    fn flush(enc: &mut Self::Encoders) -> Result<()>;
    /// Loads rows in every field.
    fn load(dec: &mut Self::Decoders, rows: Range<u64>) -> Result<()>;
    /// Takes the next value of every field.
    fn next(dec: &mut Self::Decoders) -> Result<Self::Values>;
    /// Skips the next value of every field.
    fn skip(dec: &mut Self::Decoders) -> Result<()>;
}

impl FieldList for () {
    type Values = ();
    type Refs<'a> = ();
    type Encoders = ();
    type Decoders = ();
    const LEN: usize = 0;
    fn schemas(_: &WriteCtx<'_>, _: &mut Vec<Schema>) {}
    fn create(
        _: &Group,
        _: &[&str],
        _: &[crate::options::FieldStorage],
        _: &str,
        _: &WriteCtx<'_>,
    ) -> Result<()> {
        Ok(())
    }
    fn append(
        _: &Group,
        _: &[&str],
        _: &[Stored],
        _: &str,
        _: u64,
        _: &WriteCtx<'_>,
    ) -> Result<()> {
        Ok(())
    }
    fn open(_: &Group, _: &[&str], _: &[Stored], _: &str, _: u64) -> Result<()> {
        Ok(())
    }
    #[inline]
    fn push(_: &mut (), _: ()) -> Result<()> {
        Ok(())
    }
    fn push_null(_: &mut ()) -> Result<()> {
        Ok(())
    }
    fn flush(_: &mut ()) -> Result<()> {
        Ok(())
    }
    fn load(_: &mut (), _: Range<u64>) -> Result<()> {
        Ok(())
    }
    #[inline]
    fn next(_: &mut ()) -> Result<()> {
        Ok(())
    }
    fn skip(_: &mut ()) -> Result<()> {
        Ok(())
    }
}

impl<C, Rest> FieldList for (C, Rest)
where
    C: Codec + 'static,
    C::Value: 'static,
    Rest: FieldList,
{
    type Values = (C::Value, Rest::Values);
    type Refs<'a> = (&'a C::Value, Rest::Refs<'a>);
    // The tail is boxed: each level's frame then holds one encoder (or
    // decoder) and a pointer, not every later field's state, so building
    // the list of an N-field record takes stack linear in N (a debug build
    // overflowed a thread's stack at ~50 fields with the tail inline).
    type Encoders = (C::Encoder, Box<Rest::Encoders>);
    type Decoders = (C::Decoder, Box<Rest::Decoders>);
    const LEN: usize = 1 + Rest::LEN;

    fn schemas(ctx: &WriteCtx<'_>, out: &mut Vec<Schema>) {
        out.push(C::schema(ctx));
        Rest::schemas(ctx, out);
    }
    fn create(
        group: &Group,
        names: &[&str],
        storage: &[crate::options::FieldStorage],
        path: &str,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoders> {
        let (name, rest) = names
            .split_first()
            .map(|(n, r)| (*n, r))
            .unwrap_or(("", &[]));
        let (mine, srest) = match storage.split_first() {
            Some((s, r)) => (Some(s), r),
            None => (None, &[][..]),
        };
        let p = child_path(path, name);
        let g = group.create_group(name).at(&p)?;
        let e = match mine.filter(|s| !s.is_default()) {
            Some(s) => {
                let opts = ctx.opts.with_field(s);
                let child = WriteCtx {
                    opts: &opts,
                    len_hint: ctx.len_hint,
                };
                C::create(&g, &p, &child)?
            }
            None => C::create(&g, &p, ctx)?,
        };
        Ok((e, Box::new(Rest::create(group, rest, srest, path, ctx)?)))
    }
    fn append(
        group: &Group,
        names: &[&str],
        nodes: &[Stored],
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoders> {
        let (name, rest) = names
            .split_first()
            .map(|(n, r)| (*n, r))
            .unwrap_or(("", &[]));
        let p = child_path(path, name);
        let (node, nrest) = nodes
            .split_first()
            .ok_or_else(|| crate::Error::mismatch(&p, "a schema node", "nothing"))?;
        let e = C::append(&open_group(group, name, &p)?, node, &p, count, ctx)?;
        Ok((
            e,
            Box::new(Rest::append(group, rest, nrest, path, count, ctx)?),
        ))
    }
    fn open(
        group: &Group,
        names: &[&str],
        nodes: &[Stored],
        path: &str,
        count: u64,
    ) -> Result<Self::Decoders> {
        let (name, rest) = names
            .split_first()
            .map(|(n, r)| (*n, r))
            .unwrap_or(("", &[]));
        let p = child_path(path, name);
        let (node, nrest) = nodes
            .split_first()
            .ok_or_else(|| crate::Error::mismatch(&p, "a schema node", "nothing"))?;
        let d = C::open(&open_group(group, name, &p)?, node, &p, count)?;
        Ok((d, Box::new(Rest::open(group, rest, nrest, path, count)?)))
    }
    #[inline]
    fn push(enc: &mut Self::Encoders, refs: Self::Refs<'_>) -> Result<()> {
        enc.0.push(refs.0)?;
        Rest::push(&mut enc.1, refs.1)
    }
    fn push_null(enc: &mut Self::Encoders) -> Result<()> {
        enc.0.push_null()?;
        Rest::push_null(&mut enc.1)
    }
    fn flush(enc: &mut Self::Encoders) -> Result<()> {
        enc.0.flush()?;
        Rest::flush(&mut enc.1)
    }
    fn load(dec: &mut Self::Decoders, rows: Range<u64>) -> Result<()> {
        dec.0.load(rows.clone())?;
        Rest::load(&mut dec.1, rows)
    }
    #[inline]
    fn next(dec: &mut Self::Decoders) -> Result<Self::Values> {
        let v = dec.0.next()?;
        Ok((v, Rest::next(&mut dec.1)?))
    }
    fn skip(dec: &mut Self::Decoders) -> Result<()> {
        dec.0.skip()?;
        Rest::skip(&mut dec.1)
    }
}

/// The record layout for `R`.
pub struct RecordCodec<R>(PhantomData<R>);

/// Writes a record's columns.
pub struct RecordEncoder<R: Record>(<R::Fields as FieldList>::Encoders);

/// Reads a record's columns.
pub struct RecordDecoder<R: Record>(<R::Fields as FieldList>::Decoders);

/// The schema node of record type `R`.
pub(crate) fn record_schema<R: Record>(ctx: &WriteCtx<'_>) -> Schema {
    let mut s = Schema::new(
        kind::RECORD,
        ids::RECORD,
        R::CODEC,
        std::any::type_name::<R>(),
    );
    s.field_names = Some(R::FIELD_NAMES.iter().map(|s| s.to_string()).collect());
    R::Fields::schemas(ctx, &mut s.children);
    s
}

impl<R: Record> Codec for RecordCodec<R> {
    type Value = R;
    type Encoder = RecordEncoder<R>;
    type Decoder = RecordDecoder<R>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        record_schema::<R>(ctx)
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        Ok(RecordEncoder(R::Fields::create(
            group,
            R::FIELD_NAMES,
            R::FIELD_STORAGE,
            path,
            ctx,
        )?))
    }

    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        check_record::<R>(group, node, path)?;
        Ok(RecordEncoder(R::Fields::append(
            group,
            R::FIELD_NAMES,
            &node.children,
            path,
            count,
            ctx,
        )?))
    }

    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self::Decoder> {
        check_record::<R>(group, node, path)?;
        Ok(RecordDecoder(R::Fields::open(
            group,
            R::FIELD_NAMES,
            &node.children,
            path,
            count,
        )?))
    }
}

/// `Option<R>`: the record's columns plus `MASK` (SPEC.md section 4.3).
impl<R: Record> Nullable for RecordCodec<R> {
    type Codec = NullableCodec<RecordCodec<R>>;
}

fn check_record<R: Record>(group: &Group, node: &Stored, path: &str) -> Result<()> {
    let mut want = Schema::new(kind::RECORD, ids::RECORD, R::CODEC, "");
    want.field_names = Some(R::FIELD_NAMES.iter().map(|s| s.to_string()).collect());
    // Children are checked one by one by their own codecs; here only their number.
    want.children = vec![Schema::new("", "", "", ""); R::Fields::LEN];
    node.expect(&want, path)?;
    expect_members(group, R::FIELD_NAMES, node, path)
}

impl<R: Record> Encoder<R> for RecordEncoder<R> {
    #[inline]
    fn push(&mut self, value: &R) -> Result<()> {
        R::Fields::push(&mut self.0, value.parts())
    }
    fn push_null(&mut self) -> Result<()> {
        R::Fields::push_null(&mut self.0)
    }
    fn flush(&mut self) -> Result<()> {
        R::Fields::flush(&mut self.0)
    }
}

impl<R: Record> Decoder<R> for RecordDecoder<R> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        R::Fields::load(&mut self.0, rows)
    }
    #[inline]
    fn next(&mut self) -> Result<R> {
        R::Fields::next(&mut self.0).map(R::from_parts)
    }
    fn skip(&mut self) -> Result<()> {
        R::Fields::skip(&mut self.0)
    }
}

macro_rules! tuple_record {
    ($(($($name:literal $T:ident $v:ident $idx:tt),+))+) => {$(
        impl<$($T: H5Vector + 'static),+> Record for ($($T,)+) {
            type Fields = tuple_record!(@cons $($T)+);
            const CODEC: &'static str = ids::TUPLE;
            const FIELD_NAMES: &'static [&'static str] = &[$($name),+];
            #[inline]
            fn parts(&self) -> <Self::Fields as FieldList>::Refs<'_> {
                tuple_record!(@refs self $($idx)+)
            }
            #[inline]
            fn from_parts(parts: <Self::Fields as FieldList>::Values) -> Self {
                let tuple_record!(@pat $($v)+) = parts;
                ($($v,)+)
            }
        }
        impl<$($T: H5Vector + 'static),+> H5Vector for ($($T,)+) {
            type Codec = RecordCodec<Self>;
        }
    )+};
    (@cons $T:ident $($rest:ident)*) => { (<$T as H5Vector>::Codec, tuple_record!(@cons $($rest)*)) };
    (@cons) => { () };
    (@refs $s:ident $i:tt $($rest:tt)*) => { (&$s.$i, tuple_record!(@refs $s $($rest)*)) };
    (@refs $s:ident) => { () };
    (@pat $v:ident $($rest:ident)*) => { ($v, tuple_record!(@pat $($rest)*)) };
    (@pat) => { () };
}

tuple_record! {
    ("1" A a 0)
    ("1" A a 0, "2" B b 1)
    ("1" A a 0, "2" B b 1, "3" C c 2)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3, "5" E e 4)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3, "5" E e 4, "6" F f 5)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3, "5" E e 4, "6" F f 5, "7" G g 6)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3, "5" E e 4, "6" F f 5, "7" G g 6, "8" H h 7)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3, "5" E e 4, "6" F f 5, "7" G g 6, "8" H h 7, "9" I i 8)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3, "5" E e 4, "6" F f 5, "7" G g 6, "8" H h 7, "9" I i 8, "10" J j 9)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3, "5" E e 4, "6" F f 5, "7" G g 6, "8" H h 7, "9" I i 8, "10" J j 9, "11" K k 10)
    ("1" A a 0, "2" B b 1, "3" C c 2, "4" D d 3, "5" E e 4, "6" F f 5, "7" G g 6, "8" H h 7, "9" I i 8, "10" J j 9, "11" K k 10, "12" L l 11)
}
