//! Instants with a UTC offset: `chrono::DateTime<FixedOffset>` and
//! `time::OffsetDateTime` (SPEC.md section 4.6).
//!
//! Layout on disk (the record layout, 3.3, under codec
//! `h5vec.OffsetDateTimeCodec`):
//! ```text
//! <field>/instant/values          Int64 (Z,): the UTC instant, nanoseconds since
//!                                 1970-01-01T00:00:00Z (an h5vec.InstantCodec node,
//!                                 time_unit = "ns", time_zone = "UTC")
//! <field>/offset_seconds/values   Int32 (Z,): the offset from UTC in seconds
//!                                 (east positive), per row
//! ```
//! The offset is a column, not a schema entry: rows may differ, and an
//! append never has to agree with the first save. Local time is
//! `instant + offset_seconds`. As a list element the two columns are in a
//! `RECORD_VALUES` group (4.2).

use std::marker::PhantomData;
use std::ops::Range;

use hdf5::Group;

use crate::codec::{child_path, expect_members, open_group, Codec, Decoder, Encoder};
use crate::error::{Context, Error, Place, Result};
use crate::evolution::LoadFlags;
use crate::kinds::adapters::mapped::{MappedCodec, MappedDecoder, MappedEncoder};
use crate::kinds::list::{GroupItem, GroupShaped, RECORD_VALUES};
use crate::kinds::nullable::{Nullable, NullableCodec};
use crate::kinds::scalar::ScalarCodec;
use crate::options::WriteCtx;
use crate::schema::{ids, Kind, Schema, Stored};

/// The two columns' names.
pub(crate) const FIELDS: [&str; 2] = ["instant", "offset_seconds"];

/// An instant with a UTC offset.
pub trait OffsetInstant: Sized + 'static {
    /// The UTC instant in nanoseconds since 1970 and the offset in seconds,
    /// or an error message naming the value.
    fn split(&self) -> std::result::Result<(i64, i32), String>;
    /// Rebuilds a value; an error message if the offset is not valid.
    fn join(ns: i64, offset: i32) -> std::result::Result<Self, String>;
}

/// The `instant` column: a UTC instant in nanoseconds.
pub(crate) struct UtcNanos(i64);

impl crate::kinds::adapters::mapped::Mapped for UtcNanos {
    type Raw = i64;
    const SHAPE: &'static [usize] = &[];
    const CODEC: &'static str = ids::INSTANT_CODEC;
    const TIME_UNIT: Option<&'static str> = Some(crate::kinds::adapters::time::NS);
    const TIME_ZONE: Option<&'static str> = Some(crate::kinds::adapters::time::UTC);
    fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
        out.push(self.0);
        Ok(())
    }
    fn decode(src: &[i64]) -> std::result::Result<Self, String> {
        Ok(UtcNanos(src[0]))
    }
}

type Offsets = ScalarCodec<i32>;

/// The schema node of `T`.
pub(crate) fn offset_schema<T>(ctx: &WriteCtx<'_>) -> Schema {
    let mut s = Schema::new(
        Kind::Record,
        ids::RECORD,
        ids::OFFSET_DATE_TIME_CODEC,
        std::any::type_name::<T>(),
    );
    s.field_names = Some(FIELDS.iter().map(|f| f.to_string()).collect());
    let mut instant = MappedCodec::<UtcNanos>::schema(ctx);
    instant.logical_type = "i64".into();
    s.children = vec![instant, Offsets::schema(ctx)];
    s
}

/// The layout of an [`OffsetInstant`] as a vector or a record field.
pub struct OffsetCodec<T>(PhantomData<T>);

/// Writes instants with offsets.
pub struct OffsetEncoder<T> {
    instant: MappedEncoder<UtcNanos>,
    offset: <Offsets as Codec>::Encoder,
    place: Place,
    row: u64,
    _t: PhantomData<fn(&T)>,
}

/// Reads instants with offsets.
pub struct OffsetDecoder<T> {
    instant: MappedDecoder<UtcNanos>,
    offset: <Offsets as Codec>::Decoder,
    place: Place,
    row: u64,
    _t: PhantomData<fn() -> T>,
}

fn check<T>(group: &Group, node: &Stored, path: &str) -> Result<()> {
    let mut want = offset_schema::<T>(&WriteCtx {
        opts: &Default::default(),
        len_hint: 0,
    });
    want.children = vec![Schema::new(Kind::default(), "", "", ""); 2];
    node.expect(&want, path)?;
    expect_members(group, &FIELDS, node, path)
}

impl<T: OffsetInstant> Codec for OffsetCodec<T> {
    type Value = T;
    type Encoder = OffsetEncoder<T>;
    type Decoder = OffsetDecoder<T>;

    fn schema(ctx: &WriteCtx<'_>) -> Schema {
        offset_schema::<T>(ctx)
    }

    fn create(group: &Group, path: &str, ctx: &WriteCtx<'_>) -> Result<Self::Encoder> {
        let (pi, po) = (child_path(path, FIELDS[0]), child_path(path, FIELDS[1]));
        let gi = group.create_group(FIELDS[0]).at(&pi)?;
        let go = group.create_group(FIELDS[1]).at(&po)?;
        Ok(OffsetEncoder {
            instant: MappedCodec::<UtcNanos>::create(&gi, &pi, ctx)?,
            offset: Offsets::create(&go, &po, ctx)?,
            place: Place::from(path),
            row: 0,
            _t: PhantomData,
        })
    }

    fn append(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        ctx: &WriteCtx<'_>,
    ) -> Result<Self::Encoder> {
        check::<T>(group, node, path)?;
        let (pi, po) = (child_path(path, FIELDS[0]), child_path(path, FIELDS[1]));
        Ok(OffsetEncoder {
            instant: MappedCodec::<UtcNanos>::append(
                &open_group(group, FIELDS[0], &pi)?,
                node.child(0, path)?,
                &pi,
                count,
                ctx,
            )?,
            offset: Offsets::append(
                &open_group(group, FIELDS[1], &po)?,
                node.child(1, path)?,
                &po,
                count,
                ctx,
            )?,
            place: Place::from(path),
            row: count,
            _t: PhantomData,
        })
    }

    fn open_with(
        group: &Group,
        node: &Stored,
        path: &str,
        count: u64,
        load: LoadFlags,
    ) -> Result<Self::Decoder> {
        check::<T>(group, node, path)?;
        let (pi, po) = (child_path(path, FIELDS[0]), child_path(path, FIELDS[1]));
        Ok(OffsetDecoder {
            instant: MappedCodec::<UtcNanos>::open_with(
                &open_group(group, FIELDS[0], &pi)?,
                node.child(0, path)?,
                &pi,
                count,
                load,
            )?,
            offset: Offsets::open_with(
                &open_group(group, FIELDS[1], &po)?,
                node.child(1, path)?,
                &po,
                count,
                load,
            )?,
            place: Place::new(path, group.name()),
            row: 0,
            _t: PhantomData,
        })
    }
}

impl<T: OffsetInstant> Nullable for OffsetCodec<T> {
    type Codec = NullableCodec<OffsetCodec<T>>;
}

impl<T: OffsetInstant> Encoder<T> for OffsetEncoder<T> {
    fn push(&mut self, value: &T) -> Result<()> {
        let (ns, off) = value
            .split()
            .map_err(|msg| Error::encode(self.place.element(self.row), msg))?;
        self.instant.push(&UtcNanos(ns))?;
        self.offset.push(&off)?;
        self.row += 1;
        Ok(())
    }
    fn push_null(&mut self) -> Result<()> {
        self.instant.push_null()?;
        self.offset.push_null()?;
        self.row += 1;
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.instant.flush()?;
        self.offset.flush()
    }
}

impl<T: OffsetInstant> Decoder<T> for OffsetDecoder<T> {
    fn load(&mut self, rows: Range<u64>) -> Result<()> {
        self.row = rows.start;
        self.instant.load(rows.clone())?;
        self.offset.load(rows)
    }
    fn next(&mut self) -> Result<T> {
        let ns = self.instant.next()?.0;
        let off = self.offset.next()?;
        self.row += 1;
        T::join(ns, off).map_err(|msg| Error::invalid(self.place.element(self.row - 1), msg))
    }
    fn skip(&mut self) -> Result<()> {
        self.instant.skip()?;
        self.offset.skip()?;
        self.row += 1;
        Ok(())
    }
}

/// An [`OffsetInstant`] as a list element: a `RECORD_VALUES` group.
impl<T: OffsetInstant> GroupShaped for OffsetCodec<T> {
    const CLASS: Option<&'static str> = Some(RECORD_VALUES);
}

macro_rules! offset_vector {
    ($($t:ty),*) => {$(
        impl crate::codec::H5Vector for $t {
            type Codec = OffsetCodec<$t>;
        }
        impl crate::kinds::list::ListItem for $t {
            type Item = GroupItem<OffsetCodec<$t>>;
        }
    )*};
}

#[cfg(feature = "chrono")]
mod chrono_offset {
    use chrono::{DateTime, FixedOffset, Offset};

    use super::*;

    impl OffsetInstant for DateTime<FixedOffset> {
        fn split(&self) -> std::result::Result<(i64, i32), String> {
            let ns = crate::kinds::adapters::time::utc_ns(&self.to_utc())
                .map_err(|_| crate::kinds::adapters::time::instant_range(self))?;
            Ok((ns, self.offset().fix().local_minus_utc()))
        }
        fn join(ns: i64, offset: i32) -> std::result::Result<Self, String> {
            let off = FixedOffset::east_opt(offset).ok_or_else(|| {
                format!("offset {offset} s is not a UTC offset (-86399 ..= 86399 s)")
            })?;
            Ok(DateTime::from_timestamp_nanos(ns).with_timezone(&off))
        }
    }

    offset_vector!(DateTime<FixedOffset>);
}

#[cfg(feature = "time")]
mod time_offset {
    use time::{OffsetDateTime, UtcOffset};

    use super::*;

    impl OffsetInstant for OffsetDateTime {
        fn split(&self) -> std::result::Result<(i64, i32), String> {
            let ns = i64::try_from(self.unix_timestamp_nanos())
                .map_err(|_| crate::kinds::adapters::time::instant_range(self))?;
            Ok((ns, self.offset().whole_seconds()))
        }
        fn join(ns: i64, offset: i32) -> std::result::Result<Self, String> {
            let off = UtcOffset::from_whole_seconds(offset).map_err(|_| {
                format!("offset {offset} s is not a UTC offset (-93599 ..= 93599 s)")
            })?;
            crate::kinds::adapters::time::from_ns(ns)?
                .checked_to_offset(off)
                .ok_or_else(|| format!("{ns} ns at offset {offset} s is outside time's range"))
        }
    }

    offset_vector!(OffsetDateTime);
}
