//! Time: instants, dates, times of day and durations (SPEC.md section 4.6).
//!
//! Layout on disk (the scalar layout, 3.1, under codecs of h5vec's own):
//! ```text
//! <field>/values   Int64 (Z,)  instants: nanoseconds since 1970-01-01T00:00:00,
//!                              codec h5vec.InstantCodec, time_unit = "ns",
//!                              time_zone = "UTC" (absent for naive date-times)
//!                  Int32 (Z,)  dates: days since 1970-01-01, codec h5vec.DateCodec,
//!                              time_unit = "d"
//!                  Int64 (Z,)  times of day: nanoseconds since midnight,
//!                              codec h5vec.TimeOfDayCodec, time_unit = "ns"
//!                  Int64 (Z,)  durations: nanoseconds, codec h5vec.DurationCodec,
//!                              time_unit = "ns"
//! ```
//! Instants with a UTC offset (`chrono::DateTime<FixedOffset>`,
//! `time::OffsetDateTime`) are records of two such columns (`offset.rs`).
//! Leap seconds are not stored (the scale is leap-second-free, as
//! numpy's `datetime64` and Arrow's timestamps): a chrono value inside a
//! leap second is an error on save. A value outside Int64 nanoseconds is an
//! error on save naming the field, the row and the value.
//!
//! `typed` is the Rust types' codecs: `std::time::SystemTime` and
//! `std::time::Duration` always, chrono's types with the feature `chrono`,
//! the `time` crate's with `time`. `arrow` is the untyped side (feature
//! `arrow`; Arrow's timestamps, `Date32`, `Time64` and durations), which
//! reads and writes time columns without those crates.

#[cfg(feature = "arrow")]
pub(crate) mod arrow;
mod typed;

#[cfg(feature = "time")]
pub(crate) use typed::from_ns;
#[cfg(feature = "chrono")]
pub(crate) use typed::utc_ns;

/// `time_unit` of nanosecond counts.
pub(crate) const NS: &str = "ns";
/// `time_unit` of day counts.
#[cfg_attr(
    not(any(feature = "chrono", feature = "time")),
    allow(dead_code, reason = "used by the chrono and time impls")
)]
pub(crate) const DAYS: &str = "d";
/// `time_zone` of UTC instants.
pub(crate) const UTC: &str = "UTC";
/// Nanoseconds in a day.
#[cfg_attr(
    not(any(feature = "arrow", feature = "chrono", feature = "time")),
    allow(
        dead_code,
        reason = "used by the chrono and time impls and by crate::arrow"
    )
)]
pub(crate) const DAY_NS: i64 = 86_400_000_000_000;

/// The error for an instant outside Int64 nanoseconds.
pub(crate) fn instant_range(value: impl std::fmt::Debug) -> String {
    format!(
        "{value:?} is outside the instants Int64 nanoseconds since 1970-01-01T00:00:00 can hold \
         (1677-09-21T00:12:43.145224192 ..= 2262-04-11T23:47:16.854775807)"
    )
}

/// The error for a duration outside Int64 nanoseconds.
pub(crate) fn duration_range(value: impl std::fmt::Debug) -> String {
    format!(
        "{value:?} is outside the durations Int64 nanoseconds can hold (about +-292 years: \
         -9223372036854775808 ..= 9223372036854775807 ns)"
    )
}

/// A stored time of day, checked: `0 <= ns < 86400 s`.
#[cfg_attr(
    not(any(feature = "arrow", feature = "chrono", feature = "time")),
    allow(
        dead_code,
        reason = "used by the chrono and time impls and by crate::arrow"
    )
)]
pub(crate) fn check_time_of_day(ns: i64) -> std::result::Result<(u32, u32), String> {
    if (0..DAY_NS).contains(&ns) {
        Ok(((ns / 1_000_000_000) as u32, (ns % 1_000_000_000) as u32))
    } else {
        Err(format!(
            "{ns} ns is not a time of day (0 ..= 86399999999999 ns since midnight)"
        ))
    }
}
