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

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{child_path, expect_members, open_group, Codec, Decoder, Encoder, H5Vector};
use crate::error::{Context, Error, Place, Result};
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

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
    ) -> Result<Self::Decoders>;
    /// Opens every stored field as [`open`](Self::open) does, collecting
    /// each field's error instead of stopping at the first (for an error
    /// that lists every problem).
    fn open_errors(
        group: &Group,
        fields: &[Option<(&str, &Stored)>],
        path: &str,
        count: u64,
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
    fn open(_: &Group, _: &[Option<(&str, &Stored)>], _: (), _: &str, _: u64) -> Result<()> {
        Ok(())
    }
    fn open_errors(_: &Group, _: &[Option<(&str, &Stored)>], _: &str, _: u64, _: &mut Vec<Error>) {}
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
    ) -> Result<Self::Decoders> {
        let (mine, rest) = fields
            .split_first()
            .ok_or_else(|| Error::mismatch(path, "a stored field", "nothing"))?;
        let d = match (mine, defaults.0) {
            (Some((name, node)), _) => {
                let p = child_path(path, name);
                FieldDecoder::Read(C::open(&open_group(group, name, &p)?, node, &p, count)?)
            }
            (None, Some(fill)) => FieldDecoder::Fill(fill),
            (None, None) => {
                return Err(Error::mismatch(path, "a stored field", "nothing"));
            }
        };
        Ok((
            d,
            Box::new(Rest::open(group, rest, defaults.1, path, count)?),
        ))
    }
    fn open_errors(
        group: &Group,
        fields: &[Option<(&str, &Stored)>],
        path: &str,
        count: u64,
        out: &mut Vec<Error>,
    ) {
        let Some((mine, rest)) = fields.split_first() else {
            return;
        };
        if let Some((name, node)) = mine {
            let p = child_path(path, name);
            if let Err(e) = open_group(group, name, &p).and_then(|g| C::open(&g, node, &p, count)) {
                out.push(e);
            }
        }
        Rest::open_errors(group, rest, path, count, out)
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

    fn open(group: &Group, node: &Stored, path: &str, count: u64) -> Result<Self::Decoder> {
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
            R::Fields::open_errors(group, &fields_of(found), path, count, &mut errs);
            errs
        };
        let found = match_record::<R>(group, node, path, &has, Use::Load, &changed)?;
        let fields = fields_of(&found);
        Ok(RecordDecoder(R::Fields::open(
            group, &fields, defaults, path, count,
        )?))
    }
}

/// `Option<R>`: the record's columns plus `MASK` (SPEC.md section 4.3).
impl<R: Record> Nullable for RecordCodec<R> {
    type Codec = NullableCodec<RecordCodec<R>>;
}

/// What a record is matched for: a load (aliases, defaults and, if the
/// load allows, extra stored fields) or an append (exactly the stored fields).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Load,
    Append,
}

/// Checks a record node (kind, identifiers, one name per child, no name
/// twice) and the members of its data group (exactly the stored names),
/// and matches the type's fields to the stored ones (SPEC.md section 12):
/// for field `i`, the index of the stored field it reads, or `None` where
/// the file lacks it and `has_default[i]`. Stored fields are matched by
/// name first, then by the field's aliases (loads only). Missing fields
/// without a default, and stored fields no field takes (unless the load
/// ignores extra fields), are one error listing the differences.
fn match_record<R: Record>(
    group: &Group,
    node: &Stored,
    path: &str,
    has_default: &[bool],
    use_: Use,
    changed: &dyn Fn(&[Option<usize>]) -> Vec<Error>,
) -> Result<Vec<Option<usize>>> {
    let mut want = Schema::new(Kind::Record, ids::RECORD, R::CODEC, "");
    // Children are checked one by one by their own codecs, and matched by
    // name below; here only that each has a name.
    want.children = vec![Schema::new(Kind::default(), "", "", ""); node.children.len()];
    node.expect(&want, path)?;
    let stored = node.field_names.as_deref().unwrap_or(&[]);
    if stored.len() != node.children.len() {
        return Err(Error::mismatch(
            path,
            format!("{} field names", node.children.len()),
            stored.len(),
        ));
    }
    for (j, n) in stored.iter().enumerate() {
        if stored[..j].contains(n) {
            return Err(Error::invalid(
                path,
                format!("field name `{n}` is stored twice"),
            ));
        }
    }
    let names: Vec<&str> = stored.iter().map(String::as_str).collect();
    expect_members(group, &names, node, path)?;

    let position = |n: &str| stored.iter().position(|s| s == n);
    let mut found = Vec::with_capacity(R::FIELD_NAMES.len());
    let mut missing = Vec::new();
    for (i, name) in R::FIELD_NAMES.iter().enumerate() {
        let mut at = position(name);
        if at.is_none() && use_ == Use::Load {
            let aliases = R::FIELD_ALIASES.get(i).copied().unwrap_or(&[]);
            let hits: Vec<&str> = aliases
                .iter()
                .copied()
                .filter(|a| position(a).is_some())
                .collect();
            if hits.len() > 1 {
                return Err(Error::mismatch(
                    path,
                    format!("one stored field for `{name}`"),
                    format!(
                        "its aliases {} all stored",
                        hits.iter()
                            .map(|a| format!("`{a}`"))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                ));
            }
            at = hits.first().and_then(|a| position(a));
        }
        let default = use_ == Use::Load && has_default.get(i).copied().unwrap_or(false);
        if at.is_none() && !default {
            missing.push(i);
        }
        found.push(at);
    }
    let taken: Vec<usize> = found.iter().flatten().copied().collect();
    let unclaimed: Vec<usize> = (0..stored.len()).filter(|j| !taken.contains(j)).collect();
    let extra_ok = use_ == Use::Load && node.load.ignore_extra_fields;
    if missing.is_empty() && (unclaimed.is_empty() || extra_ok) {
        return Ok(found);
    }
    let changed = changed(&found);
    Err(field_differences::<R>(
        node, path, &missing, &changed, &unclaimed, extra_ok, use_, group,
    ))
}

/// The plural ending and pronoun for `n` fields: `("", "it")` or
/// `("s", "them")`.
fn plural(n: usize) -> (&'static str, &'static str) {
    if n == 1 {
        ("", "it")
    } else {
        ("s", "them")
    }
}

/// The error for fields that do not match: each missing field (with the
/// stored fields of its type that it may have been renamed from), then
/// each extra stored field; never the two whole lists.
#[allow(clippy::too_many_arguments)] // the three lists of differences and what opening the record had
fn field_differences<R: Record>(
    node: &Stored,
    path: &str,
    missing: &[usize],
    changed: &[Error],
    unclaimed: &[usize],
    extra_ok: bool,
    use_: Use,
    group: &Group,
) -> Error {
    let stored = node.field_names.as_deref().unwrap_or(&[]);
    let opts = crate::options::SaveOptions::default();
    let ctx = WriteCtx {
        opts: &opts,
        len_hint: 0,
    };
    let mut want = Vec::new();
    R::Fields::schemas(&ctx, R::FIELD_STORAGE, &mut want);
    let mut parts = Vec::new();
    let mut named = Vec::new();
    // Missing fields first, then fields whose type changed, then extra
    // stored fields; each hint once.
    let mut plain = Vec::new();
    for &i in missing {
        let name = R::FIELD_NAMES[i];
        let like: Vec<usize> = unclaimed
            .iter()
            .copied()
            .filter(|&j| {
                want.get(i)
                    .is_some_and(|w| same_layout(w, &Schema::from(&node.children[j])))
            })
            .collect();
        if like.is_empty() || use_ == Use::Append {
            plain.push(format!("`{name}`"));
            continue;
        }
        let which = like
            .iter()
            .map(|&j| format!("#[h5vec(alias = \"{}\")]", stored[j]))
            .collect::<Vec<_>>()
            .join(" or ");
        let stored_like = like
            .iter()
            .map(|&j| format!("`{}`", stored[j]))
            .collect::<Vec<_>>()
            .join(", ");
        parts.push(format!(
            "missing field `{name}`, and {stored_like} stored with its type: did you mean {which} on `{name}`?"
        ));
        named.extend(like);
    }
    if !plain.is_empty() {
        let (s, it) = plural(plain.len());
        let list = plain.join(", ");
        parts.insert(
            0,
            match use_ {
                Use::Load => format!(
                    "missing field{s} {list} (#[h5vec(default)] fills {it} in files without {it})"
                ),
                Use::Append => format!("missing field{s} {list}"),
            },
        );
    }
    parts.extend(changed.iter().map(|e| e.to_string()));
    if !extra_ok {
        let extra: Vec<String> = unclaimed
            .iter()
            .filter(|j| !named.contains(j))
            .map(|&j| format!("`{}`", stored[j]))
            .collect();
        if !extra.is_empty() {
            let (s, it) = plural(extra.len());
            let list = extra.join(", ");
            parts.push(match use_ {
                Use::Load => format!(
                    "extra stored field{s} {list} (LoadOptions::ignore_extra_fields(true) skips {it})"
                ),
                Use::Append => format!("extra stored field{s} {list}"),
            });
        }
    }
    let expected = match use_ {
        Use::Load => format!("the fields of `{}`", std::any::type_name::<R>()),
        Use::Append => format!(
            "the fields of `{}` (an append needs exactly the stored fields: \
             no defaults, aliases or extra fields)",
            std::any::type_name::<R>()
        ),
    };
    Error::mismatch(Place::new(path, group.name()), expected, parts.join("; "))
}

/// Whether two schema nodes describe the same layout (the Rust type names
/// aside): a stored field a missing one may have been renamed from.
fn same_layout(a: &Schema, b: &Schema) -> bool {
    a.kind == b.kind
        && a.schema == b.schema
        && a.codec == b.codec
        && a.encoded_type == b.encoded_type
        && a.dimensions == b.dimensions
        && a.field_names == b.field_names
        && a.variant_names == b.variant_names
        && a.time_unit == b.time_unit
        && a.time_zone == b.time_zone
        && a.children.len() == b.children.len()
        && a.children
            .iter()
            .zip(&b.children)
            .all(|(x, y)| same_layout(x, y))
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
