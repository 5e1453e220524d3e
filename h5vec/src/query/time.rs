//! Instants, dates and times of day written as text in a filter
//! (`ts >= '2024-01-01T00:00:00Z'`), converted to the stored numbers
//! exactly (no chrono needed: the default build has none).
//!
//! Accepted: dates `YYYY-MM-DD`; times of day `HH:MM[:SS[.fffffffff]]`;
//! instants `DATE[T or space]TIME` followed, for a UTC column, by `Z` or an
//! offset `+HH:MM` / `-HH:MM` (converted to UTC), and for a zone-less
//! column by nothing.

use super::leaf::Domain;

/// Days from 1970-01-01 to the civil date (proleptic Gregorian).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn digits(s: &str, n: usize) -> Option<(u32, &str)> {
    let (a, rest) = (s.get(..n)?, s.get(n..)?);
    if !a.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((a.parse().ok()?, rest))
}

fn date(s: &str) -> Option<(i64, &str)> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (y, s) = digits(s, 4)?;
    let s = s.strip_prefix('-')?;
    let (m, s) = digits(s, 2)?;
    let s = s.strip_prefix('-')?;
    let (d, s) = digits(s, 2)?;
    let y = if neg { -i64::from(y) } else { i64::from(y) };
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some((days_from_civil(y, m, d), s))
}

/// Nanoseconds since midnight.
fn time_of_day(s: &str) -> Option<(i64, &str)> {
    let (h, s) = digits(s, 2)?;
    let s = s.strip_prefix(':')?;
    let (mi, mut s) = digits(s, 2)?;
    let mut sec = 0;
    let mut frac: i64 = 0;
    if let Some(r) = s.strip_prefix(':') {
        let (x, r) = digits(r, 2)?;
        sec = x;
        s = r;
        if let Some(r) = s.strip_prefix('.') {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 || n > 9 {
                return None;
            }
            frac = r[..n].parse::<i64>().ok()? * 10i64.pow(9 - n as u32);
            s = &r[n..];
        }
    }
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    Some((
        (i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(sec)) * 1_000_000_000 + frac,
        s,
    ))
}

/// `text` as the stored number of a time `domain` (`None`: not one).
pub(crate) fn parse_time_text(text: &str, domain: &Domain) -> Option<i128> {
    let text = text.trim();
    match domain {
        Domain::Date => match date(text)? {
            (d, "") => Some(i128::from(d)),
            _ => None,
        },
        Domain::TimeOfDay => match time_of_day(text)? {
            (t, "") => Some(i128::from(t)),
            _ => None,
        },
        Domain::Instant { utc } => {
            let (d, rest) = date(text)?;
            let (t, rest) = match rest.strip_prefix(['T', 't', ' ']) {
                Some(r) => time_of_day(r)?,
                None if rest.is_empty() => (0, rest),
                None => return None,
            };
            let ns = i128::from(d) * 86_400_000_000_000 + i128::from(t);
            let offset: i128 = match (rest, utc) {
                ("", false) => 0,
                ("Z" | "z", true) => 0,
                (o, true) if o.starts_with(['+', '-']) => {
                    let (h, r) = digits(&o[1..], 2)?;
                    let r = r.strip_prefix(':').unwrap_or(r);
                    let (m, r) = digits(r, 2)?;
                    if !r.is_empty() || h > 23 || m > 59 {
                        return None;
                    }
                    let secs = i128::from(h) * 3600 + i128::from(m) * 60;
                    if o.starts_with('-') {
                        -secs
                    } else {
                        secs
                    }
                }
                _ => return None,
            };
            Some(ns - offset * 1_000_000_000)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(days_from_civil(2262, 4, 11), 106_751);
    }

    #[test]
    fn texts() {
        let utc = Domain::Instant { utc: true };
        assert_eq!(parse_time_text("1970-01-01T00:00:00Z", &utc), Some(0));
        assert_eq!(parse_time_text("1970-01-01T01:00:00+01:00", &utc), Some(0));
        assert_eq!(
            parse_time_text("1969-12-31T23:59:59.999999999Z", &utc),
            Some(-1)
        );
        assert_eq!(
            parse_time_text("2262-04-11T23:47:16.854775807Z", &utc),
            Some(i128::from(i64::MAX))
        );
        assert_eq!(parse_time_text("1970-01-01T00:00:00", &utc), None);
        let naive = Domain::Instant { utc: false };
        assert_eq!(
            parse_time_text("1970-01-02 00:00", &naive),
            Some(86_400_000_000_000)
        );
        assert_eq!(parse_time_text("1970-01-01T00:00:00Z", &naive), None);
        assert_eq!(parse_time_text("2024-02-30", &Domain::Date), None);
        assert_eq!(parse_time_text("2000-02-29", &Domain::Date), Some(11_016));
        assert_eq!(
            parse_time_text("00:00:01.5", &Domain::TimeOfDay),
            Some(1_500_000_000)
        );
        assert_eq!(parse_time_text("24:00:00", &Domain::TimeOfDay), None);
    }
}
