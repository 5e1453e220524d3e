//! Every kind as text: what the arrow crate's writers print by default, and
//! the command's own forms where theirs fail or other programs would not
//! read the value back (README.md, "Output formats"):
//!
//! - UUIDs (`FixedSizeBinary(16)` with `arrow.uuid`): canonical text,
//!   `01234567-89ab-4def-8000-000000000000`;
//! - dates (`Date32`): `2024-01-02`, every Int32 day (years past 9999 or
//!   before 0 as ISO 8601 expanded years, `+12345-01-01`, as chrono
//!   writes them; arrow's printer stops at chrono's range);
//! - maps: a JSON object when the keys are strings, else an array of
//!   `[key, value]` pairs (arrow's JSON writer takes string keys only);
//! - enums with data in flat form (`h5vec.union = "flat"`, from
//!   [`h5vec::arrow::flatten_unions`]): `{"variant": "Circle", "r": 1.0}`
//!   in JSON, `{variant: Circle, r: 1.0}` in a table (`null` for a missing
//!   one), dotted columns in CSV (`shape.variant`, `shape.Circle.r`);
//! - floats that are not finite, in JSON (JSON lines and the JSON text of
//!   CSV cells), at any depth: `NaN`, `Infinity`, `-Infinity`, as Python's
//!   `json` module and pyarrow read them (arrow writes `null`, which a
//!   missing value is);
//! - `f16`: the shortest decimal that reads back as the same `f16`
//!   (`0.1`; arrow prints the shortest `f32` text of the widened value,
//!   `0.099975586`).
//!
//! Instants print as arrow prints them: RFC 3339 with the zone's offset
//! (`Z` for UTC) through chrono-tz, naive ones without; [`check`] finds a
//! zone it does not know before anything is printed.
//!
//! This file holds the checks, UUIDs, dates and the CSV text columns;
//! `float16` the shortest decimal of an `f16`, `json` the JSON encoders,
//! `table` the cell formatters of the table.

mod float16;
mod json;
mod table;

use std::sync::Arc;

use anyhow::{bail, Result};
use arrow::array::timezone::Tz;
use arrow::array::{Array, ArrayRef, AsArray, LargeStringBuilder};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, Schema};

pub(crate) use float16::write_f16;
pub(crate) use json::{json_options, JsonKinds};
pub(crate) use table::TableKinds;

/// The extension name of UUID fields (SPEC.md section 11).
const UUID_EXTENSION: &str = "arrow.uuid";
/// Field metadata marking an enum with data in flat form.
const UNION_KEY: &str = "h5vec.union";
/// The first child of a flat union: the variant names.
const VARIANT: &str = "variant";

/// Whether `field` holds UUIDs.
pub(crate) fn is_uuid(field: &Field) -> bool {
    matches!(field.data_type(), DataType::FixedSizeBinary(16))
        && field.extension_type_name() == Some(UUID_EXTENSION)
}

/// Whether `field` is an enum with data in flat form.
pub(crate) fn is_flat_union(field: &Field) -> bool {
    matches!(field.data_type(), DataType::Struct(_))
        && field.metadata().get(UNION_KEY).is_some_and(|v| v == "flat")
}

/// What a column of `schema` cannot be printed as text for, found before
/// anything is printed: a time zone that is neither an IANA name nor an
/// offset, a flat union whose variant has a field named `variant` (JSON
/// and the table put the fields beside the name). An error names the
/// field (`$.a.b`).
pub(crate) fn check(schema: &Schema, json_like: bool) -> Result<()> {
    fn walk(f: &Field, path: &str, json_like: bool) -> Result<()> {
        match f.data_type() {
            DataType::Timestamp(_, Some(tz)) => {
                if tz.parse::<Tz>().is_err() {
                    bail!(
                        "{path}: the time zone `{tz}` is neither an IANA zone name nor an \
                         offset such as +05:30, so its instants cannot be printed; convert \
                         it to Parquet or Arrow IPC, which keep the zone as it is"
                    );
                }
                Ok(())
            }
            DataType::Struct(children) => {
                if json_like && is_flat_union(f) {
                    for variant in children.iter().skip(1) {
                        if let DataType::Struct(vf) = variant.data_type() {
                            if vf.iter().any(|x| x.name() == VARIANT) {
                                bail!(
                                    "{path}: variant `{}` has a field named `variant`, which \
                                     the form {{\"variant\": NAME, FIELDS}} cannot hold beside \
                                     the name; print it with --format csv",
                                    variant.name()
                                );
                            }
                        }
                    }
                }
                children
                    .iter()
                    .try_for_each(|c| walk(c, &format!("{path}.{}", c.name()), json_like))
            }
            DataType::List(c)
            | DataType::LargeList(c)
            | DataType::FixedSizeList(c, _)
            | DataType::ListView(c)
            | DataType::LargeListView(c) => walk(c, &format!("{path}[]"), json_like),
            DataType::Map(entries, _) => match entries.data_type() {
                DataType::Struct(kv) => kv
                    .iter()
                    .try_for_each(|c| walk(c, &format!("{path}[].{}", c.name()), json_like)),
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }
    schema
        .fields()
        .iter()
        .try_for_each(|f| walk(f, &format!("$.{}", f.name()), json_like))
}

/// Writes the canonical text of a UUID's 16 bytes.
pub(crate) fn write_uuid(bytes: &[u8], out: &mut impl std::fmt::Write) -> std::fmt::Result {
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.write_char('-')?;
        }
        write!(out, "{b:02x}")?;
    }
    Ok(())
}

/// Year, month and day of `days` since 1970-01-01 in the proleptic
/// Gregorian calendar (any Int32 day; Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Writes a date of `days` since 1970-01-01 as chrono does: `2024-01-02`,
/// years outside 0 to 9999 with their sign (`+12345-01-01`, `-0001-12-31`).
pub(crate) fn write_date(days: i32, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    let (y, m, d) = civil(i64::from(days));
    if (0..=9999).contains(&y) {
        write!(out, "{y:04}-{m:02}-{d:02}")
    } else {
        write!(out, "{y:+05}-{m:02}-{d:02}")
    }
}

/// A column of text for CSV: UUIDs, dates and `f16`s as [`write_uuid`],
/// [`write_date`] and [`write_f16`] write them, null where `nulls` is;
/// `None` for other columns (arrow's printer prints them).
pub(crate) fn text_column(
    field: &Field,
    array: &dyn Array,
    nulls: Option<&NullBuffer>,
) -> Option<ArrayRef> {
    if is_uuid(field) {
        let a = array.as_fixed_size_binary();
        Some(strings(a.len(), nulls, |i, s| write_uuid(a.value(i), s)))
    } else if let DataType::Date32 = array.data_type() {
        let a = array.as_primitive::<arrow::datatypes::Date32Type>();
        Some(strings(a.len(), nulls, |i, s| write_date(a.value(i), s)))
    } else if let DataType::Float16 = array.data_type() {
        let a = array.as_primitive::<arrow::datatypes::Float16Type>();
        Some(strings(a.len(), nulls, |i, s| {
            write_f16(a.value(i).to_bits(), s)
        }))
    } else {
        None
    }
}

/// `len` strings, row `i` written by `write`, null where `nulls` is.
fn strings(
    len: usize,
    nulls: Option<&NullBuffer>,
    write: impl Fn(usize, &mut String) -> std::fmt::Result,
) -> ArrayRef {
    let mut builder = LargeStringBuilder::with_capacity(len, len * 36);
    let mut s = String::new();
    for i in 0..len {
        if nulls.is_some_and(|n| n.is_null(i)) {
            builder.append_null();
        } else {
            s.clear();
            // Writing to a String does not fail.
            let _ = write(i, &mut s);
            builder.append_value(&s);
        }
    }
    Arc::new(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::FieldRef;
    use arrow::json::writer::make_encoder;
    use arrow::util::display::lexical_to_string;

    use super::float16::{f16_shortest, f16_to_f64};
    use super::json::json_non_finite;

    fn date(days: i32) -> String {
        let mut s = String::new();
        write_date(days, &mut s).unwrap();
        s
    }

    #[test]
    fn dates_of_every_int32_day() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(19_724), "2024-01-02");
        assert_eq!(date(-1), "1969-12-31");
        assert_eq!(date(-719_528), "0000-01-01");
        assert_eq!(date(-719_529), "-0001-12-31");
        assert_eq!(date(2_932_897), "+10000-01-01");
        assert_eq!(date(i32::MAX), "+5881580-07-11");
        assert_eq!(date(i32::MIN), "-5877641-06-23");
        // The same date as counting days one by one.
        for days in (-800_000..3_000_000).step_by(997) {
            let d = counted(days);
            assert_eq!(date(days), d, "{days}");
        }
    }

    /// The date of `days` by counting from 1970-01-01 (for the test only).
    fn counted(days: i32) -> String {
        let (mut y, mut m, mut d) = (1970i64, 1u32, 1u32);
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let len = |y: i64, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut left = i64::from(days);
        // Whole years first.
        while left >= if leap(y) { 366 } else { 365 } {
            left -= if leap(y) { 366 } else { 365 };
            y += 1;
        }
        while left < 0 {
            y -= 1;
            left += if leap(y) { 366 } else { 365 };
        }
        while left >= i64::from(len(y, m)) {
            left -= i64::from(len(y, m));
            m += 1;
        }
        d += left as u32;
        if (0..=9999).contains(&y) {
            format!("{y:04}-{m:02}-{d:02}")
        } else {
            format!("{y:+05}-{m:02}-{d:02}")
        }
    }

    /// The `f16` nearest `x` (ties to even; from 65520 up, infinity), by
    /// distance to the neighbouring `f16`s of `finite` (the values of the
    /// positive finite `f16`s, by bits; for the test only).
    fn nearest_f16(finite: &[f64], x: f64) -> u16 {
        let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
        let x = x.abs();
        if x >= 65520.0 {
            return sign | 0x7c00;
        }
        // The f16 at or below x (positive f16s grow with their bits), then
        // the nearer of it and the next.
        let below = finite.partition_point(|&v| v <= x) - 1;
        let (d0, d1) = (x - finite[below], finite[below + 1] - x);
        let (below, next) = (below as u16, below as u16 + 1);
        let m = if d0 < d1 || (d0 == d1 && below % 2 == 0) {
            below
        } else {
            next
        };
        sign | m
    }

    fn f16_json(bits: u16) -> String {
        lexical_to_string(f16_shortest(bits).unwrap())
    }

    #[test]
    fn f16_text_is_the_shortest_that_reads_back() {
        // Every finite f16: its JSON text, read as an f64 and rounded to
        // the nearest f16, is the same f16; with one digit fewer, neither
        // decimal on either side of it is.
        let finite: Vec<f64> = (0..0x7c00).map(f16_to_f64).chain([65536.0]).collect();
        let nearest_f16 = |x| nearest_f16(&finite, x);
        let mut longest = 0;
        for bits in (0..=u16::MAX).filter(|b| b & 0x7c00 != 0x7c00) {
            let text = f16_json(bits);
            let x: f64 = text.parse().unwrap();
            assert_eq!(nearest_f16(x), bits, "{bits:#06x} {text}");
            assert_eq!(x.is_sign_negative(), bits & 0x8000 != 0, "{text}");
            let v = f16_to_f64(bits);
            if v == 0.0 {
                continue;
            }
            let sci = format!("{x:e}");
            let (mantissa, _) = sci.split_once('e').unwrap();
            let digits = mantissa.trim_start_matches('-').replace('.', "").len();
            longest = longest.max(digits);
            if digits > 1 {
                let fewer = format!("{:.*e}", digits - 2, v.abs());
                let (m, e) = fewer.split_once('e').unwrap();
                let n: u64 = m.replace('.', "").parse().unwrap();
                let e: i32 = e.parse::<i32>().unwrap() - (digits as i32 - 2);
                for k in [n - 1, n, n + 1] {
                    let y: f64 = format!("{k}e{e}").parse().unwrap();
                    assert_ne!(nearest_f16(y) & 0x7fff, bits & 0x7fff, "{text}: {y}");
                }
            }
        }
        assert_eq!(longest, 5);
        // Exact texts: lexical's form for JSON, ryu's for CSV and the table.
        let csv = |bits: u16| {
            let mut s = String::new();
            write_f16(bits, &mut s).unwrap();
            s
        };
        for (bits, json, text) in [
            (0x2e66, "0.1", "0.1"),       // 0.0999755859375
            (0x3555, "0.3333", "0.3333"), // 0.333251953125
            (0x3c00, "1.0", "1.0"),
            (0x4000, "2.0", "2.0"),
            (0x3e00, "1.5", "1.5"),
            (0x7bff, "65500.0", "65500.0"),       // 65504
            (0x0001, "6.0e-8", "6e-8"),           // 2^-24
            (0x0400, "0.00006104", "0.00006104"), // 2^-14, the least normal
            (0x8000, "-0.0", "-0.0"),
            (0x0000, "0.0", "0.0"),
            (0xc000, "-2.0", "-2.0"),
        ] {
            assert_eq!(
                (f16_json(bits), csv(bits)),
                (json.into(), text.into()),
                "{bits:#06x}"
            );
        }
        assert_eq!(f16_shortest(0x7c00), None);
        assert_eq!(f16_shortest(0x7e00), None);
        assert_eq!(csv(0x7c00), "inf");
        assert_eq!(csv(0xfc00), "-inf");
        assert_eq!(csv(0x7e00), "NaN");
        assert_eq!(csv(0xfe01), "NaN");
    }

    /// Each value of `array` as the command's JSON encoders write it.
    fn json_values(array: ArrayRef) -> Vec<String> {
        let field: FieldRef = Arc::new(Field::new("x", array.data_type().clone(), true));
        let options = json_options();
        let mut encoder = make_encoder(&field, array.as_ref(), &options).unwrap();
        (0..array.len())
            .map(|i| {
                let mut out = Vec::new();
                encoder.encode(i, &mut out);
                String::from_utf8(out).unwrap()
            })
            .collect()
    }

    #[test]
    fn f32_and_f64_text_reads_back_at_their_width() {
        // f32s of every exponent (random bits, and the values either side
        // of each power of two), read as f64 as a JSON reader does, then
        // rounded to f32: the same bits; non-finite ones as their token.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut bits: Vec<u32> = (0..100_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u32
            })
            .collect();
        for e in 0..255u32 {
            bits.extend([e << 23, (e << 23) + 1, (e << 23).wrapping_sub(1)]);
        }
        let values: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
        let texts = json_values(Arc::new(arrow::array::Float32Array::from(values.clone())));
        for (x, text) in values.iter().zip(&texts) {
            if x.is_nan() {
                assert_eq!(text, "NaN");
            } else if x.is_infinite() {
                assert_eq!(text, if *x > 0.0 { "Infinity" } else { "-Infinity" });
            } else {
                let y: f64 = text.parse().unwrap();
                assert_eq!((y as f32).to_bits(), x.to_bits(), "{text}");
            }
        }
        let doubles = [
            0.1,
            -0.0,
            1e300,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            1.0 / 3.0,
        ];
        let texts = json_values(Arc::new(arrow::array::Float64Array::from(doubles.to_vec())));
        for (x, text) in doubles.iter().zip(&texts) {
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                x.to_bits(),
                "{text}"
            );
        }
        assert_eq!(texts[0], "0.1");
        // The shortest text at f32 width, not the f64 text of the widened value.
        let tenth = json_values(Arc::new(arrow::array::Float32Array::from(vec![0.1f32])));
        assert_eq!(tenth, ["0.1"]);
    }

    #[test]
    fn non_finite_json_tokens() {
        assert_eq!(json_non_finite(f64::NAN), Some(&b"NaN"[..]));
        assert_eq!(json_non_finite(-f64::NAN), Some(&b"NaN"[..]));
        assert_eq!(json_non_finite(f64::INFINITY), Some(&b"Infinity"[..]));
        assert_eq!(json_non_finite(f64::NEG_INFINITY), Some(&b"-Infinity"[..]));
        assert_eq!(json_non_finite(-0.0), None);
        assert_eq!(json_non_finite(f64::MAX), None);
    }

    #[test]
    fn uuids_in_canonical_text() {
        let mut s = String::new();
        let b: Vec<u8> = (0..16).map(|i| i * 17).collect();
        write_uuid(&b, &mut s).unwrap();
        assert_eq!(s, "00112233-4455-6677-8899-aabbccddeeff");
    }
}
