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
//! Loading matches the stored fields to the type's by name, in any order,
//! then by the fields' aliases; a field the file lacks takes its default,
//! and stored fields the type lacks are skipped only when the load allows
//! it (SPEC.md section 12). Appends need exactly the stored fields.
//!
//! The derive macro only lists the fields: [`Record::Fields`] is a cons list
//! `(C1, (C2, (C3, ())))` of the fields' codecs; everything else lives here.
//!
//! This file holds the codec and its encoder and decoder; `fields` the
//! [`Record`] trait and the cons list of field codecs ([`FieldList`]),
//! `matching` the match of stored fields to the type's on open.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;

mod fields;
mod matching;

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{Codec, Decoder, Encoder, H5Vector};
use crate::error::{Error, Result};
use crate::evolution::LoadFlags;
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

pub use fields::{FieldList, Record};
use matching::{match_record, Use};

/// The record layout for `R`.
pub struct RecordCodec<R>(PhantomData<R>);

/// Writes a record's columns.
pub struct RecordEncoder<R: Record>(<R::Fields as FieldList>::Encoders);

/// Reads a record's columns.
pub struct RecordDecoder<R: Record>(<R::Fields as FieldList>::Decoders);

/// The schema node of record type `R`.
pub(crate) fn record_schema<R: Record>(ctx: &WriteCtx<'_>) -> Schema {
    let mut s = Schema::new(
        Kind::Record,
        ids::RECORD,
        R::CODEC,
        std::any::type_name::<R>(),
    );
    s.field_names = Some(R::FIELD_NAMES.iter().map(|s| s.to_string()).collect());
    R::Fields::schemas(ctx, R::FIELD_STORAGE, &mut s.children);
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
        let defaults = vec![false; R::Fields::LEN];
        let found = match_record::<R>(group, node, path, &defaults, Use::Append, &|_| Vec::new())?;
        // Every field is stored (appends take no defaults): the stored
        // nodes in the type's field order.
        let nodes = found
            .iter()
            .map(|j| j.map(|j| node.children[j].clone()))
            .collect::<Option<Vec<Stored>>>()
            .ok_or_else(|| Error::mismatch(path, "every field stored", "a field missing"))?;
        Ok(RecordEncoder(R::Fields::append(
            group,
            R::FIELD_NAMES,
            &nodes,
            path,
            count,
            ctx,
        )?))
    }

    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        let defaults = R::defaults();
        let mut has = Vec::with_capacity(R::Fields::LEN);
        R::Fields::has_defaults(&defaults, &mut has);
        let names = node.field_names.as_deref().unwrap_or(&[]);
        let fields_of = |found: &[Option<usize>]| -> Vec<Option<(&str, &Stored)>> {
            found
                .iter()
                .map(|j| j.map(|j| (names[j].as_str(), &node.children[j])))
                .collect()
        };
        // The fields whose stored type the type cannot read, every one:
        // listed with the missing and extra fields when there are any.
        let changed = |found: &[Option<usize>]| {
            let mut errs = Vec::new();
            R::Fields::open_errors(group, &fields_of(found), path, count, load, &mut errs);
            errs
        };
        let found = match_record::<R>(group, node, path, &has, Use::Load(load), &changed)?;
        let fields = fields_of(&found);
        Ok(RecordDecoder(R::Fields::open(
            group, &fields, defaults, path, count, load,
        )?))
    }
}

/// `Option<R>`: the record's columns plus `MASK` (SPEC.md section 4.3).
impl<R: Record> Nullable for RecordCodec<R> {
    type Codec = NullableCodec<RecordCodec<R>>;
}

/// Widest record whose batches are pushed field by field.
const MAX_FIELDS_BY_COLUMN: usize = 16;

impl<R: Record> Encoder<R> for RecordEncoder<R> {
    const BY_COLUMN: bool = R::Fields::BY_COLUMN && R::Fields::LEN <= MAX_FIELDS_BY_COLUMN;
    #[inline]
    fn push(&mut self, value: &R) -> Result<()> {
        R::Fields::push(&mut self.0, value.parts())
    }
    #[inline]
    fn push_all<'a, I>(&mut self, values: I) -> Result<()>
    where
        I: Iterator<Item = &'a R> + Clone,
        R: 'a,
    {
        // Field by field when every field appends by column, up to a width
        // where the chain of field getters (one closure per field, each
        // calling the one before) stays shallow; others go row by row (the
        // stack of a debug build holds every level of both chains at once).
        if !Self::BY_COLUMN {
            for v in values {
                self.push(v)?;
            }
            return Ok(());
        }
        R::Fields::push_all(&mut self.0, values, R::parts)
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
