//! The Rust time types as vector elements and fields: `std`'s always,
//! chrono's with the feature `chrono`, the `time` crate's with `time`, each
//! a [`Mapped`] type on the scalar layout (layout in `mod.rs`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::kinds::adapters::mapped::{mapped_vector, Mapped};
use crate::schema::ids;

#[cfg(any(feature = "chrono", feature = "time"))]
use super::{check_time_of_day, DAYS};
use super::{duration_range, instant_range, NS, UTC};

fn i128_ns(ns: i128) -> Option<i64> {
    i64::try_from(ns).ok()
}

// ---------------------------------------------------------------------------
// std

impl Mapped for SystemTime {
    type Raw = i64;
    const SHAPE: &'static [usize] = &[];
    const CODEC: &'static str = ids::INSTANT_CODEC;
    const TIME_UNIT: Option<&'static str> = Some(NS);
    const TIME_ZONE: Option<&'static str> = Some(UTC);
    fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
        let ns = match self.duration_since(UNIX_EPOCH) {
            Ok(d) => i128::try_from(d.as_nanos()).ok(),
            Err(e) => i128::try_from(e.duration().as_nanos()).ok().map(|n| -n),
        };
        out.push(ns.and_then(i128_ns).ok_or_else(|| instant_range(self))?);
        Ok(())
    }
    fn decode(src: &[i64]) -> std::result::Result<Self, String> {
        let ns = src[0];
        let d = Duration::from_nanos(ns.unsigned_abs());
        let t = if ns >= 0 {
            UNIX_EPOCH.checked_add(d)
        } else {
            UNIX_EPOCH.checked_sub(d)
        };
        t.ok_or_else(|| format!("{ns} ns since 1970 is outside this platform's SystemTime"))
    }
}

impl Mapped for Duration {
    type Raw = i64;
    const SHAPE: &'static [usize] = &[];
    const CODEC: &'static str = ids::DURATION_CODEC;
    const TIME_UNIT: Option<&'static str> = Some(NS);
    fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
        let ns = i64::try_from(self.as_nanos()).map_err(|_| duration_range(self))?;
        out.push(ns);
        Ok(())
    }
    fn decode(src: &[i64]) -> std::result::Result<Self, String> {
        u64::try_from(src[0])
            .map(Duration::from_nanos)
            .map_err(|_| format!("{} ns is negative (std::time::Duration is not)", src[0]))
    }
}

mapped_vector!(SystemTime, Duration);

// ---------------------------------------------------------------------------
// chrono

#[cfg(feature = "chrono")]
mod chrono_types {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike, Utc};

    use super::*;

    /// Nanoseconds since 1970 of a UTC date-time, without leap seconds.
    pub(crate) fn utc_ns(t: &DateTime<Utc>) -> std::result::Result<i64, String> {
        if t.nanosecond() >= 1_000_000_000 {
            return Err(format!(
                "{t:?} is inside a leap second (h5vec stores leap-second-free time)"
            ));
        }
        t.timestamp_nanos_opt().ok_or_else(|| instant_range(t))
    }

    impl Mapped for DateTime<Utc> {
        type Raw = i64;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::INSTANT_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(NS);
        const TIME_ZONE: Option<&'static str> = Some(UTC);
        fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
            out.push(utc_ns(self)?);
            Ok(())
        }
        fn decode(src: &[i64]) -> std::result::Result<Self, String> {
            Ok(DateTime::from_timestamp_nanos(src[0]))
        }
    }

    impl Mapped for NaiveDateTime {
        type Raw = i64;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::INSTANT_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(NS);
        fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
            out.push(utc_ns(&self.and_utc()).map_err(|_| {
                if self.nanosecond() >= 1_000_000_000 {
                    format!("{self:?} is inside a leap second (h5vec stores leap-second-free time)")
                } else {
                    instant_range(self)
                }
            })?);
            Ok(())
        }
        fn decode(src: &[i64]) -> std::result::Result<Self, String> {
            Ok(DateTime::from_timestamp_nanos(src[0]).naive_utc())
        }
    }

    /// Days from 0001-01-01 (CE day 1) to 1970-01-01.
    const CE_TO_UNIX_DAYS: i32 = 719_163;

    impl Mapped for NaiveDate {
        type Raw = i32;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::DATE_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(DAYS);
        fn encode(&self, out: &mut Vec<i32>) -> std::result::Result<(), String> {
            use chrono::Datelike;
            // chrono's dates span about +-262,000 years: always an Int32 of days.
            let days = self
                .num_days_from_ce()
                .checked_sub(CE_TO_UNIX_DAYS)
                .ok_or_else(|| format!("{self:?} is outside Int32 days since 1970-01-01"))?;
            out.push(days);
            Ok(())
        }
        fn decode(src: &[i32]) -> std::result::Result<Self, String> {
            src[0]
                .checked_add(CE_TO_UNIX_DAYS)
                .and_then(NaiveDate::from_num_days_from_ce_opt)
                .ok_or_else(|| {
                    format!(
                        "{} days since 1970-01-01 is outside chrono::NaiveDate's range",
                        src[0]
                    )
                })
        }
    }

    impl Mapped for NaiveTime {
        type Raw = i64;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::TIME_OF_DAY_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(NS);
        fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
            if self.nanosecond() >= 1_000_000_000 {
                return Err(format!(
                    "{self:?} is inside a leap second (h5vec stores leap-second-free time)"
                ));
            }
            out.push(
                i64::from(self.num_seconds_from_midnight()) * 1_000_000_000
                    + i64::from(self.nanosecond()),
            );
            Ok(())
        }
        fn decode(src: &[i64]) -> std::result::Result<Self, String> {
            let (s, n) = check_time_of_day(src[0])?;
            NaiveTime::from_num_seconds_from_midnight_opt(s, n)
                .ok_or_else(|| format!("{} ns is not a time of day", src[0]))
        }
    }

    impl Mapped for TimeDelta {
        type Raw = i64;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::DURATION_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(NS);
        fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
            out.push(self.num_nanoseconds().ok_or_else(|| duration_range(self))?);
            Ok(())
        }
        fn decode(src: &[i64]) -> std::result::Result<Self, String> {
            Ok(TimeDelta::nanoseconds(src[0]))
        }
    }

    mapped_vector!(
        DateTime<Utc>,
        NaiveDateTime,
        NaiveDate,
        NaiveTime,
        TimeDelta
    );
}
#[cfg(feature = "chrono")]
pub(crate) use chrono_types::utc_ns;

// ---------------------------------------------------------------------------
// time

#[cfg(feature = "time")]
mod time_types {
    use time::{Date, OffsetDateTime, PrimitiveDateTime, Time};

    use super::*;

    /// Julian day number of 1970-01-01.
    const UNIX_JULIAN_DAY: i32 = 2_440_588;

    /// A stored instant as an `OffsetDateTime` in UTC.
    pub(crate) fn from_ns(ns: i64) -> std::result::Result<OffsetDateTime, String> {
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns))
            .map_err(|_| format!("{ns} ns since 1970 is outside the time crate's range"))
    }

    impl Mapped for PrimitiveDateTime {
        type Raw = i64;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::INSTANT_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(NS);
        fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
            let ns = i128_ns(self.assume_utc().unix_timestamp_nanos())
                .ok_or_else(|| instant_range(self))?;
            out.push(ns);
            Ok(())
        }
        fn decode(src: &[i64]) -> std::result::Result<Self, String> {
            let t = from_ns(src[0])?;
            Ok(PrimitiveDateTime::new(t.date(), t.time()))
        }
    }

    impl Mapped for Date {
        type Raw = i32;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::DATE_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(DAYS);
        fn encode(&self, out: &mut Vec<i32>) -> std::result::Result<(), String> {
            let days = self
                .to_julian_day()
                .checked_sub(UNIX_JULIAN_DAY)
                .ok_or_else(|| format!("{self:?} is outside Int32 days since 1970-01-01"))?;
            out.push(days);
            Ok(())
        }
        fn decode(src: &[i32]) -> std::result::Result<Self, String> {
            src[0]
                .checked_add(UNIX_JULIAN_DAY)
                .and_then(|j| Date::from_julian_day(j).ok())
                .ok_or_else(|| {
                    format!(
                        "{} days since 1970-01-01 is outside time::Date's range",
                        src[0]
                    )
                })
        }
    }

    impl Mapped for Time {
        type Raw = i64;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::TIME_OF_DAY_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(NS);
        fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
            let (h, m, s, n) = self.as_hms_nano();
            out.push(
                (i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s)) * 1_000_000_000
                    + i64::from(n),
            );
            Ok(())
        }
        fn decode(src: &[i64]) -> std::result::Result<Self, String> {
            let (s, n) = check_time_of_day(src[0])?;
            Time::from_hms_nano((s / 3600) as u8, (s / 60 % 60) as u8, (s % 60) as u8, n)
                .map_err(|e| format!("{} ns is not a time of day: {e}", src[0]))
        }
    }

    impl Mapped for time::Duration {
        type Raw = i64;
        const SHAPE: &'static [usize] = &[];
        const CODEC: &'static str = ids::DURATION_CODEC;
        const TIME_UNIT: Option<&'static str> = Some(NS);
        fn encode(&self, out: &mut Vec<i64>) -> std::result::Result<(), String> {
            out.push(i128_ns(self.whole_nanoseconds()).ok_or_else(|| duration_range(self))?);
            Ok(())
        }
        fn decode(src: &[i64]) -> std::result::Result<Self, String> {
            Ok(time::Duration::nanoseconds(src[0]))
        }
    }

    mapped_vector!(PrimitiveDateTime, Date, Time, time::Duration);
}
#[cfg(feature = "time")]
pub(crate) use time_types::from_ns;
