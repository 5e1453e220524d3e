//! [`Record`], the trait the derive implements, and [`FieldList`]: the
//! fields of a record as a cons list of codecs
//! (`(C1, (C2, ()))`), with the per-field create, append, open, push and
//! read steps the record codec runs in field order, and [`FieldDecoder`].

use std::ops::Range;

use hdf5::Group;

use crate::codec::{child_path, open_group, Codec, Decoder, Encoder};
use crate::error::{Context, Error, Result};
use crate::evolution::LoadFlags;
use crate::options::WriteCtx;
use crate::schema::{Schema, Stored};

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
    /// Other names each stored field may have in a file (`#[h5vec(alias =
    /// "...")]`), in field order; shorter than the field list means none.
    const FIELD_ALIASES: &'static [&'static [&'static str]] = &[];
    /// What each stored field takes when the file lacks it
    /// (`#[h5vec(default)]`): `None` for a field the file must have.
    fn defaults() -> <Self::Fields as FieldList>::Defaults {
        <Self::Fields as FieldList>::no_defaults()
    }
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
    /// Each field's default for a file that lacks it, as a cons list of
    /// `Option<fn() -> Value>`.
    type Defaults;
    /// Number of fields.
    const LEN: usize;
    /// Whether every field's encoder pushes column by column
    /// (`Encoder::BY_COLUMN`).
    const BY_COLUMN: bool;
    /// No field has a default.
    fn no_defaults() -> Self::Defaults;
    /// Appends, per field, whether it has a default.
    fn has_defaults(defaults: &Self::Defaults, out: &mut Vec<bool>);
    /// Appends each field's schema; `storage[i]` is field i's own storage
    /// settings (which decide, e.g., a string field's layout).
    fn schemas(ctx: &WriteCtx<'_>, storage: &[crate::options::FieldStorage], out: &mut Vec<Schema>);
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
    /// Opens each field for reading: `fields[i]` is the stored name and
    /// node field i is read from, or `None` for a field the file lacks,
    /// which takes its default and reads nothing.
    fn open(
        group: &Group,
        fields: &[Option<(&str, &Stored)>],
        defaults: Self::Defaults,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoders>;
    /// Opens every stored field as [`open`](Self::open) does, collecting
    /// each field's error instead of stopping at the first (for an error
    /// that lists every problem).
    fn open_errors(
        group: &Group,
        fields: &[Option<(&str, &Stored)>],
        path: &str,
        count: u64,
        load: LoadFlags,
        out: &mut Vec<Error>,
    );
    /// Pushes one value's fields.
    fn push(enc: &mut Self::Encoders, refs: Self::Refs<'_>) -> Result<()>;
    /// Pushes the fields of every value of `values`, field by field:
    /// `get` gives a value's fields. The iterator keeps its type from field
    /// to field (only `get` grows), so records of many fields do not nest
    /// iterator types field deep.
    fn push_all<'a, X: 'a, I, G>(enc: &mut Self::Encoders, values: I, get: G) -> Result<()>
    where
        I: Iterator<Item = &'a X> + Clone,
        G: Fn(&'a X) -> Self::Refs<'a> + Clone,
        Self: 'a;
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
    type Defaults = ();
    const LEN: usize = 0;
    const BY_COLUMN: bool = true;
    fn no_defaults() {}
    fn has_defaults(_: &(), _: &mut Vec<bool>) {}
    fn schemas(_: &WriteCtx<'_>, _: &[crate::options::FieldStorage], _: &mut Vec<Schema>) {}
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
    fn open(
        _: &Group,
        _: &[Option<(&str, &Stored)>],
        _: (),
        _: &str,
        _: u64,
        _: LoadFlags,
    ) -> Result<()> {
        Ok(())
    }
    fn open_errors(
        _: &Group,
        _: &[Option<(&str, &Stored)>],
        _: &str,
        _: u64,
        _: LoadFlags,
        _: &mut Vec<Error>,
    ) {
    }
    #[inline]
    fn push(_: &mut (), _: ()) -> Result<()> {
        Ok(())
    }
    #[inline]
    fn push_all<'a, X: 'a, I, G>(_: &mut (), _: I, _: G) -> Result<()>
    where
        I: Iterator<Item = &'a X> + Clone,
        G: Fn(&'a X) + Clone,
        Self: 'a,
    {
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
    type Decoders = (FieldDecoder<C>, Box<Rest::Decoders>);
    type Defaults = (Option<fn() -> C::Value>, Rest::Defaults);
    const LEN: usize = 1 + Rest::LEN;
    const BY_COLUMN: bool = <C::Encoder as Encoder<C::Value>>::BY_COLUMN && Rest::BY_COLUMN;

    fn no_defaults() -> Self::Defaults {
        (None, Rest::no_defaults())
    }
    fn has_defaults(defaults: &Self::Defaults, out: &mut Vec<bool>) {
        out.push(defaults.0.is_some());
        Rest::has_defaults(&defaults.1, out);
    }

    fn schemas(
        ctx: &WriteCtx<'_>,
        storage: &[crate::options::FieldStorage],
        out: &mut Vec<Schema>,
    ) {
        let (mine, rest) = match storage.split_first() {
            Some((s, r)) => (Some(s), r),
            None => (None, &[][..]),
        };
        match mine.filter(|s| !s.is_default()) {
            // The options `create` gives the field: the same node.
            Some(s) => {
                let opts = ctx.opts.with_field(s);
                out.push(C::schema(&WriteCtx {
                    opts: &opts,
                    len_hint: ctx.len_hint,
                }));
            }
            None => out.push(C::schema(ctx)),
        }
        Rest::schemas(ctx, rest, out);
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
        fields: &[Option<(&str, &Stored)>],
        defaults: Self::Defaults,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoders> {
        let (mine, rest) = fields
            .split_first()
            .ok_or_else(|| Error::mismatch(path, "a stored field", "nothing"))?;
        let d = match (mine, defaults.0) {
            (Some((name, node)), _) => {
                let p = child_path(path, name);
                FieldDecoder::Read(C::open_with(
                    &open_group(group, name, &p)?,
                    node,
                    &p,
                    count,
                    load,
                )?)
            }
            (None, Some(fill)) => FieldDecoder::Fill(fill),
            (None, None) => {
                return Err(Error::mismatch(path, "a stored field", "nothing"));
            }
        };
        Ok((
            d,
            Box::new(Rest::open(group, rest, defaults.1, path, count, load)?),
        ))
    }
    fn open_errors(
        group: &Group,
        fields: &[Option<(&str, &Stored)>],
        path: &str,
        count: u64,
        load: LoadFlags,
        out: &mut Vec<Error>,
    ) {
        let Some((mine, rest)) = fields.split_first() else {
            return;
        };
        if let Some((name, node)) = mine {
            let p = child_path(path, name);
            let opened =
                open_group(group, name, &p).and_then(|g| C::open_with(&g, node, &p, count, load));
            if let Err(e) = opened {
                out.push(e);
            }
        }
        Rest::open_errors(group, rest, path, count, load, out)
    }
    #[inline]
    fn push(enc: &mut Self::Encoders, refs: Self::Refs<'_>) -> Result<()> {
        enc.0.push(refs.0)?;
        Rest::push(&mut enc.1, refs.1)
    }
    #[inline]
    fn push_all<'a, X: 'a, I, G>(enc: &mut Self::Encoders, values: I, get: G) -> Result<()>
    where
        I: Iterator<Item = &'a X> + Clone,
        G: Fn(&'a X) -> Self::Refs<'a> + Clone,
        Self: 'a,
    {
        let first = get.clone();
        enc.0.push_all(values.clone().map(move |x| first(x).0))?;
        Rest::push_all(&mut enc.1, values, move |x| get(x).1)
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

/// One field's decoder: its column, or its default for a file without it.
pub enum FieldDecoder<C: Codec> {
    /// The stored column.
    Read(C::Decoder),
    /// A field the file lacks: every row takes the default, nothing is read.
    Fill(fn() -> C::Value),
}

impl<C: Codec> Decoder<C::Value> for FieldDecoder<C> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        match self {
            FieldDecoder::Read(d) => d.load(rows),
            FieldDecoder::Fill(_) => Ok(()),
        }
    }
    #[inline]
    fn next(&mut self) -> Result<C::Value> {
        match self {
            FieldDecoder::Read(d) => d.next(),
            FieldDecoder::Fill(f) => Ok(f()),
        }
    }
    fn skip(&mut self) -> Result<()> {
        match self {
            FieldDecoder::Read(d) => d.skip(),
            FieldDecoder::Fill(_) => Ok(()),
        }
    }
}
