//! Maps: `HashMap<K, V, S>` and `BTreeMap<K, V>` (SPEC.md section 4.5).
//!
//! Layout on disk (a list, 4.2, whose element is a `{key, value}` record,
//! Arrow's map layout):
//! ```text
//! <field>/                     CLASS = "LIST_COLUMN", KIND = "OFFSETS"
//! <field>/OFFSETS              1-D uint64, count + 1 entries; row i holds entries
//!                              OFFSETS[i] .. OFFSETS[i+1]
//! <field>/MASK                 (Option<map> only) h5col bool per row, TRUE = present
//! <field>/VALUES/              CLASS = "RECORD_VALUES"
//! <field>/VALUES/key/...       the keys of all rows back to back, in K's own layout
//! <field>/VALUES/value/...     the values, in V's own layout
//! ```
//! The list node's codec is `h5vec.MapCodec` (so untyped readers know it is
//! a map); its child is a record node (`HDF5Vectors.StructCodec`,
//! `field_names = ["key", "value"]`). Keys and values are stored as record
//! fields, so any type a struct field can have works. Strings in the
//! entries use the VLS layout (a chunked byte heap, SPEC.md section 4.1)
//! unless `vls_strings(false)` or `#[h5vec(vlen_strings)]` asks for
//! variable-length strings: as for `Vec<String>` elements (4.2), no HDF5
//! heap object per key. A `HashMap`'s entries
//! are written in its iteration order (unspecified), a `BTreeMap`'s sorted;
//! loading a row with two equal keys is an error naming the row.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{child_path, expect_members, open_group, Codec, Decoder, Encoder, H5Vector};
use crate::column::PodWriter;
use crate::error::{Context, Error, Result};
use crate::evolution::LoadFlags;
use crate::kinds::list::{
    create_list_group, create_record_values, items_path, open_list_group_with, open_record_values,
    GroupItem, GroupShaped, ListItem, NullableItem, RowSpans,
};
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::limits;
use crate::options::{SaveOptions, WriteCtx};
use crate::schema::{ids, Kind, Schema, Stored};

/// The entry record's field names.
pub(crate) const ENTRY_FIELDS: [&str; 2] = ["key", "value"];

/// A map type h5vec stores: its entries in some order, and how it is rebuilt.
pub trait MapLike: Sized + 'static {
    /// Key type.
    type Key: H5Vector;
    /// Value type.
    type Val: H5Vector;
    /// Number of entries.
    fn entries(&self) -> usize;
    /// Calls `f` on every entry, in the map's iteration order.
    fn each(&self, f: impl FnMut(&Self::Key, &Self::Val) -> Result<()>) -> Result<()>;
    /// An empty map with room for `n` entries.
    fn with_room(n: usize) -> Self;
    /// Inserts an entry; `false` if the key was already there.
    fn put(&mut self, k: Self::Key, v: Self::Val) -> bool;
}

impl<K, V, S> MapLike for HashMap<K, V, S>
where
    K: H5Vector + Eq + Hash + 'static,
    V: H5Vector + 'static,
    S: BuildHasher + Default + 'static,
{
    type Key = K;
    type Val = V;
    fn entries(&self) -> usize {
        self.len()
    }
    fn each(&self, mut f: impl FnMut(&K, &V) -> Result<()>) -> Result<()> {
        self.iter().try_for_each(|(k, v)| f(k, v))
    }
    fn with_room(n: usize) -> Self {
        HashMap::with_capacity_and_hasher(n, S::default())
    }
    fn put(&mut self, k: K, v: V) -> bool {
        self.insert(k, v).is_none()
    }
}

impl<K, V> MapLike for BTreeMap<K, V>
where
    K: H5Vector + Ord + 'static,
    V: H5Vector + 'static,
{
    type Key = K;
    type Val = V;
    fn entries(&self) -> usize {
        self.len()
    }
    fn each(&self, mut f: impl FnMut(&K, &V) -> Result<()>) -> Result<()> {
        self.iter().try_for_each(|(k, v)| f(k, v))
    }
    fn with_room(_n: usize) -> Self {
        BTreeMap::new()
    }
    fn put(&mut self, k: K, v: V) -> bool {
        self.insert(k, v).is_none()
    }
}

type KeyCodec<M> = <<M as MapLike>::Key as H5Vector>::Codec;
type ValCodec<M> = <<M as MapLike>::Val as H5Vector>::Codec;

/// The options a map's entries are written with: `opts`, with strings in
/// the VLS layout unless the vector or the field chose a string layout
/// (SPEC.md section 4.5).
pub(crate) fn entry_options(opts: &SaveOptions) -> SaveOptions {
    match opts.vls_strings_setting() {
        Some(_) => opts.clone(),
        None => opts.clone().vls_strings(true),
    }
}

/// The schema node of map type `M`: a list (codec `h5vec.MapCodec`) of
/// `{key, value}` records.
pub(crate) fn map_schema<M: MapLike>(ctx: &WriteCtx<'_>) -> Schema {
    let opts = entry_options(ctx.opts);
    let ctx = &WriteCtx {
        opts: &opts,
        len_hint: ctx.len_hint,
    };
    let mut entry = Schema::new(
        Kind::Record,
        ids::RECORD,
        ids::STRUCT,
        std::any::type_name::<(M::Key, M::Val)>(),
    );
    entry.field_names = Some(ENTRY_FIELDS.iter().map(|f| f.to_string()).collect());
    entry.children = vec![KeyCodec::<M>::schema(ctx), ValCodec::<M>::schema(ctx)];
    let mut s = Schema::new(
        Kind::List,
        ids::LIST,
        ids::MAP_CODEC,
        std::any::type_name::<M>(),
    );
    s.children.push(entry);
    s
}

/// Checks the entry record node and the `VALUES` group's members.
fn check_entry(values: &Group, entry: &Stored, path: &str) -> Result<()> {
    let mut want = Schema::new(Kind::Record, ids::RECORD, ids::STRUCT, "");
    want.field_names = Some(ENTRY_FIELDS.iter().map(|f| f.to_string()).collect());
    want.children = vec![Schema::new(Kind::default(), "", "", ""); 2];
    entry.expect(&want, path)?;
    expect_members(values, &ENTRY_FIELDS, entry, path)
}

/// Writes a map column.
pub struct MapEncoder<M: MapLike> {
    offsets: PodWriter<u64>,
    keys: <KeyCodec<M> as Codec>::Encoder,
    vals: <ValCodec<M> as Codec>::Encoder,
    end: u64,
}

/// Reads a map column.
pub struct MapDecoder<M: MapLike> {
    spans: RowSpans,
    keys: <KeyCodec<M> as Codec>::Decoder,
    vals: <ValCodec<M> as Codec>::Decoder,
}

impl<M: MapLike> MapEncoder<M> {
    /// Makes `group` a map's list group.
    fn create_in(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self> {
        let offsets = create_list_group(group, path, ctx)?;
        let ip = items_path(path);
        let vg = create_record_values(group, "VALUES", &ip)?;
        let (kp, vp) = (child_path(&ip, "key"), child_path(&ip, "value"));
        let opts = entry_options(ctx.opts);
        let ctx = &WriteCtx {
            opts: &opts,
            len_hint: ctx.len_hint,
        };
        let kg = vg.create_group("key").at(&kp)?;
        let keys = KeyCodec::<M>::create(&kg, &kp, ctx)?;
        let valg = vg.create_group("value").at(&vp)?;
        let vals = ValCodec::<M>::create(&valg, &vp, ctx)?;
        Ok(MapEncoder {
            offsets,
            keys,
            vals,
            end: 0,
        })
    }

    /// Continues a map's list group of `count` rows.
    fn resume_in(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self> {
        let (offsets, end) = open_list_group_with(group, node, path, count, ids::MAP_CODEC)?;
        let ip = items_path(path);
        let vg = open_record_values(group, "VALUES", &ip)?;
        let entry = node.child(0, path)?;
        check_entry(&vg, entry, &ip)?;
        let (kp, vp) = (child_path(&ip, "key"), child_path(&ip, "value"));
        let keys = KeyCodec::<M>::append(
            &open_group(&vg, "key", &kp)?,
            entry.child(0, &ip)?,
            &kp,
            end,
            ctx,
        )?;
        let vals = ValCodec::<M>::append(
            &open_group(&vg, "value", &vp)?,
            entry.child(1, &ip)?,
            &vp,
            end,
            ctx,
        )?;
        Ok(MapEncoder {
            offsets: PodWriter::resume(offsets.ds, Vec::new(), count + 1, path)?,
            keys,
            vals,
            end,
        })
    }
}

impl<M: MapLike> MapDecoder<M> {
    /// Opens a map's list group of `count` rows and checks it.
    fn open_in(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self> {
        let (offsets, total) = open_list_group_with(group, node, path, count, ids::MAP_CODEC)?;
        let ip = items_path(path);
        limits::check_empty_rows::<(M::Key, M::Val)>(total, &ip)?;
        let vg = open_record_values(group, "VALUES", &ip)?;
        let entry = node.child(0, path)?;
        check_entry(&vg, entry, &ip)?;
        let (kp, vp) = (child_path(&ip, "key"), child_path(&ip, "value"));
        let keys = KeyCodec::<M>::open_with(
            &open_group(&vg, "key", &kp)?,
            entry.child(0, &ip)?,
            &kp,
            total,
            load,
        )?;
        let vals = ValCodec::<M>::open_with(
            &open_group(&vg, "value", &vp)?,
            entry.child(1, &ip)?,
            &vp,
            total,
            load,
        )?;
        Ok(MapDecoder {
            spans: RowSpans::new(offsets, total),
            keys,
            vals,
        })
    }
}

impl<M: MapLike> Encoder<M> for MapEncoder<M> {
    fn push(&mut self, value: &M) -> Result<()> {
        let (keys, vals) = (&mut self.keys, &mut self.vals);
        value.each(|k, v| {
            keys.push(k)?;
            vals.push(v)
        })?;
        self.end += value.entries() as u64;
        self.offsets.buf.push(self.end);
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        self.offsets.buf.push(self.end);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.keys.flush()?;
        self.vals.flush()?;
        self.offsets.flush()
    }
}

impl<M: MapLike> Decoder<M> for MapDecoder<M> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        let elements = self.spans.load(&rows)?;
        self.keys.load(elements.clone())?;
        self.vals.load(elements)
    }
    fn next(&mut self) -> Result<M> {
        let n = self.spans.next_len()?;
        let mut m = M::with_room(n);
        for j in 0..n {
            let k = self.keys.next()?;
            let v = self.vals.next()?;
            if !m.put(k, v) {
                return Err(Error::invalid(
                    self.spans.row(),
                    format!(
                        "entry {j} of this map repeats an earlier key (a map holds each key once)"
                    ),
                ));
            }
        }
        Ok(m)
    }
    fn skip(&mut self) -> Result<()> {
        let n = self.spans.next_len()?;
        for _ in 0..n {
            self.keys.skip()?;
            self.vals.skip()?;
        }
        Ok(())
    }
    fn skip_null(&mut self) -> Result<()> {
        self.spans.skip_null()
    }
}

/// The map layout as a vector or a record field.
pub struct MapCodec<M>(PhantomData<M>);

impl<M: MapLike> Codec for MapCodec<M> {
    type Value = M;
    type Encoder = MapEncoder<M>;
    type Decoder = MapDecoder<M>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        map_schema::<M>(ctx)
    }
    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        MapEncoder::create_in(group, path, ctx)
    }
    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        MapEncoder::resume_in(group, node, path, count, ctx)
    }
    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        MapDecoder::open_in(group, node, path, count, load)
    }
}

/// `Option<map>`: the map's list group with a `MASK` (a null row has an
/// empty span, as for lists).
impl<M: MapLike> Nullable for MapCodec<M> {
    type Codec = NullableCodec<MapCodec<M>>;
}

/// A map as a list element: a nested map list group.
impl<M: MapLike> GroupShaped for MapCodec<M> {
    const CLASS: Option<&'static str> = None;
}

macro_rules! map_impls {
    ($([$($g:tt)*] $m:ty),*) => {$(
        impl<$($g)*> H5Vector for $m {
            type Codec = MapCodec<$m>;
        }
        impl<$($g)*> ListItem for $m {
            type Item = GroupItem<MapCodec<$m>>;
        }
        impl<$($g)*> ListItem for Option<$m> {
            type Item = NullableItem<GroupItem<MapCodec<$m>>>;
        }
    )*};
}
map_impls! {
    [K: H5Vector + Eq + Hash + 'static, V: H5Vector + 'static, S: BuildHasher + Default + 'static]
        HashMap<K, V, S>,
    [K: H5Vector + Ord + 'static, V: H5Vector + 'static] BTreeMap<K, V>
}
