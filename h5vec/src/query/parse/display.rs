//! The printer of the `--where` syntax: `Display` for [`Filter`] and
//! [`Value`] (read back by the parser in `mod.rs`), with the calendar
//! arithmetic that prints instants and dates without chrono.

use std::fmt;

use super::{write_quoted, PathText, NS_PER_DAY, NS_PER_SEC};
use crate::query::filter::{Expr, Filter, Value};

/// Year, month (1..=12) and day (1..=31) of the proleptic Gregorian
/// calendar, `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i128) -> (i128, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March first
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i128::from(m <= 2);
    (y, m, d)
}

/// `YYYY-MM-DD`; years outside 0..=9999 signed and widened as ISO 8601
/// allows (`+10000-01-01`, `-0001-12-31`).
fn write_date(f: &mut fmt::Formatter<'_>, days: i128) -> fmt::Result {
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        write!(f, "{y:04}-{m:02}-{d:02}")
    } else {
        write!(f, "{y:+05}-{m:02}-{d:02}")
    }
}

/// `HH:MM:SS.nnnnnnnnn` for `ns` in `0..` (hours past 23 print as they
/// are: a leap second of chrono reads `24:00:00.5...`).
fn write_time(f: &mut fmt::Formatter<'_>, ns: i128) -> fmt::Result {
    let secs = ns / NS_PER_SEC;
    write!(
        f,
        "{:02}:{:02}:{:02}.{:09}",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60,
        ns % NS_PER_SEC
    )
}

/// The `--where` text of a value: numbers, `true` / `false`, strings in
/// double quotes; durations as whole nanoseconds with the unit `ns`
/// (`1500000000ns`, which parses back to the same duration); instants,
/// dates and times of day as strings the evaluator reads for a time column
/// (`"2024-01-01T00:00:00.000000001Z"` in UTC, without the `Z` when
/// zone-less; `"2024-01-01"`; `"12:30:00.000000000"`), which parse back
/// as [`Value::Str`]. A NaN float prints `NaN`, which does not parse: it
/// never matches, write `is null`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            // `{:?}`: the shortest text that parses back to the same bits,
            // with a `.0` or an exponent (`10.0`, `1e300`, `inf`).
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write_quoted(f, s, '"'),
            Value::Instant { ns, utc } => {
                f.write_str("\"")?;
                write_date(f, ns.div_euclid(NS_PER_DAY))?;
                f.write_str("T")?;
                write_time(f, ns.rem_euclid(NS_PER_DAY))?;
                f.write_str(if *utc { "Z\"" } else { "\"" })
            }
            Value::Date(d) => {
                f.write_str("\"")?;
                write_date(f, i128::from(*d))?;
                f.write_str("\"")
            }
            Value::TimeOfDay(t) => {
                f.write_str("\"")?;
                if *t < 0 {
                    f.write_str("-")?;
                }
                write_time(f, i128::from(*t).abs())?;
                f.write_str("\"")
            }
            Value::Duration(d) => write!(f, "{d}ns"),
        }
    }
}

/// Binding strength, for parentheses: or 1, and 2, not 3.
fn fmt_expr(e: &Expr, f: &mut fmt::Formatter<'_>, parent: u8) -> fmt::Result {
    match e {
        Expr::Cmp { column, op, value } => {
            write!(f, "{} {} {value}", PathText(column), op.symbol())
        }
        Expr::Between { column, low, high } => {
            write!(f, "{} between {low} and {high}", PathText(column))
        }
        Expr::In { column, values } => write_in(f, column, values, ""),
        Expr::Null { column, null } => {
            let not = if *null { "" } else { "not " };
            write!(f, "{} is {not}null", PathText(column))
        }
        Expr::Not(a) => match &**a {
            Expr::In { column, values } => write_in(f, column, values, "not "),
            Expr::Between { column, low, high } => {
                write!(f, "{} not between {low} and {high}", PathText(column))
            }
            a => {
                f.write_str("not ")?;
                fmt_expr(a, f, 3)
            }
        },
        // Both are left-associative: a right operand of the same kind
        // (`a & (b & c)`) keeps its parentheses.
        Expr::And(a, b) => fmt_binary(f, a, b, " and ", 2, parent),
        Expr::Or(a, b) => fmt_binary(f, a, b, " or ", 1, parent),
    }
}

fn fmt_binary(
    f: &mut fmt::Formatter<'_>,
    a: &Expr,
    b: &Expr,
    word: &str,
    level: u8,
    parent: u8,
) -> fmt::Result {
    let paren = parent > level;
    if paren {
        f.write_str("(")?;
    }
    fmt_expr(a, f, level)?;
    f.write_str(word)?;
    fmt_expr(b, f, level + 1)?;
    if paren {
        f.write_str(")")?;
    }
    Ok(())
}

fn write_in(f: &mut fmt::Formatter<'_>, column: &str, values: &[Value], not: &str) -> fmt::Result {
    write!(f, "{} {not}in (", PathText(column))?;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{v}")?;
    }
    f.write_str(")")
}

/// The filter in the `--where` syntax, which [`str::parse`] reads back to
/// the same filter (see [`Value`]'s `Display` for how each value prints).
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_expr(&self.0, f, 0)
    }
}
