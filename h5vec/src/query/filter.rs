//! Predicates over a vector's or a table's columns: [`col`] builds them,
//! `&`, `|` and `!` combine them into a [`Filter`].
//!
//! Missing values follow HEP001's three-valued (Kleene) logic, as h5col's
//! query layer and Arrow do: a value predicate (`eq` ... `is_in`) is
//! *unknown* on a missing row (a null of an `Option`, a fill value, a
//! NaN), `!` keeps unknown unknown, and a row is selected when the whole
//! filter is *true*. `ne` is `!eq`: a missing row never matches it either.
//! `is_null` / `is_not_null` are never unknown.

use std::ops::{BitAnd, BitOr, Not};

/// A column of a [`Filter`]: `h5vec::col("temperature")`, a field of a
/// nested record by its dotted path (`col("position.x")`).
///
/// ```
/// use h5vec::col;
/// let f = col("temperature").ge(10.0) & col("status").eq("Ok");
/// assert_eq!(f.to_string(), r#"temperature >= 10.0 and status == "Ok""#);
/// ```
pub fn col(path: &str) -> Column {
    Column {
        path: path.to_owned(),
    }
}

/// A named column, the left side of a predicate (see [`col`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    path: String,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// The operator as the `--where` syntax writes it.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// The filter tree.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    /// `column op value`.
    Cmp {
        column: String,
        op: CmpOp,
        value: Value,
    },
    /// `low <= column <= high`.
    Between {
        column: String,
        low: Value,
        high: Value,
    },
    /// `column` equals one of `values`.
    In {
        column: String,
        values: Vec<Value>,
    },
    /// The row's value is missing (`true`) or present (`false`).
    Null {
        column: String,
        null: bool,
    },
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
}

/// Which rows to select: predicates on columns combined with `&`, `|`, `!`.
///
/// Build one with [`col`], or parse the `--where` syntax of the `h5vec`
/// command with [`str::parse`].
#[derive(Clone, Debug, PartialEq)]
pub struct Filter(pub(crate) Expr);

/// A value to compare a column with.
///
/// Made by `From` from numbers, `bool`, strings (text columns and the
/// labels of fieldless enums), and instants, dates, times of day and
/// durations (`SystemTime`, `Duration`, and with features `chrono` /
/// `time` those crates' types). Integers compare with integer and float
/// columns exactly (never through `f64`); a value of another kind than the
/// column's (a string for a number column, a date for an instant) is an
/// error naming the column.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// `true` / `false`.
    Bool(bool),
    /// Any integer.
    Int(i128),
    /// A float (not NaN: NaN never matches a predicate; use
    /// [`Column::is_null`]).
    Float(f64),
    /// Text, or an enum label.
    Str(String),
    /// An instant: nanoseconds since 1970-01-01T00:00:00, in UTC when
    /// `utc` (`SystemTime`, `DateTime<Utc>`), without a zone otherwise
    /// (`NaiveDateTime`).
    Instant {
        /// Nanoseconds since the epoch.
        ns: i128,
        /// Whether the instant is in UTC (else local, zone-less).
        utc: bool,
    },
    /// A date: days since 1970-01-01.
    Date(i32),
    /// A time of day: nanoseconds since midnight.
    TimeOfDay(i64),
    /// A duration in nanoseconds.
    Duration(i128),
}

impl Column {
    fn cmp(self, op: CmpOp, v: impl Into<Value>) -> Filter {
        Filter(Expr::Cmp {
            column: self.path,
            op,
            value: v.into(),
        })
    }

    /// The column's path as given to [`col`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `column == v`.
    pub fn eq(self, v: impl Into<Value>) -> Filter {
        self.cmp(CmpOp::Eq, v)
    }

    /// `column != v` (`!eq`: missing rows match neither).
    pub fn ne(self, v: impl Into<Value>) -> Filter {
        self.cmp(CmpOp::Ne, v)
    }

    /// `column < v`.
    pub fn lt(self, v: impl Into<Value>) -> Filter {
        self.cmp(CmpOp::Lt, v)
    }

    /// `column <= v`.
    pub fn le(self, v: impl Into<Value>) -> Filter {
        self.cmp(CmpOp::Le, v)
    }

    /// `column > v`.
    pub fn gt(self, v: impl Into<Value>) -> Filter {
        self.cmp(CmpOp::Gt, v)
    }

    /// `column >= v`.
    pub fn ge(self, v: impl Into<Value>) -> Filter {
        self.cmp(CmpOp::Ge, v)
    }

    /// `low <= column <= high` (both ends included).
    pub fn between(self, low: impl Into<Value>, high: impl Into<Value>) -> Filter {
        Filter(Expr::Between {
            column: self.path,
            low: low.into(),
            high: high.into(),
        })
    }

    /// The column equals one of `values` (none: no row).
    pub fn is_in<V: Into<Value>>(self, values: impl IntoIterator<Item = V>) -> Filter {
        Filter(Expr::In {
            column: self.path,
            values: values.into_iter().map(Into::into).collect(),
        })
    }

    /// The row's value is missing: a `None`, a table's fill value, a NaN.
    pub fn is_null(self) -> Filter {
        Filter(Expr::Null {
            column: self.path,
            null: true,
        })
    }

    /// The row's value is present.
    pub fn is_not_null(self) -> Filter {
        Filter(Expr::Null {
            column: self.path,
            null: false,
        })
    }
}

impl BitAnd for Filter {
    type Output = Filter;
    fn bitand(self, rhs: Filter) -> Filter {
        Filter(Expr::And(Box::new(self.0), Box::new(rhs.0)))
    }
}

impl BitOr for Filter {
    type Output = Filter;
    fn bitor(self, rhs: Filter) -> Filter {
        Filter(Expr::Or(Box::new(self.0), Box::new(rhs.0)))
    }
}

impl Not for Filter {
    type Output = Filter;
    fn not(self) -> Filter {
        Filter(Expr::Not(Box::new(self.0)))
    }
}

macro_rules! value_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::Int(i128::from(v))
            }
        }
    )*};
}
value_from_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Float(v)
    }
}

impl From<f32> for Value {
    fn from(v: f32) -> Value {
        Value::Float(f64::from(v))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Str(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Str(v)
    }
}

impl From<std::time::SystemTime> for Value {
    fn from(v: std::time::SystemTime) -> Value {
        let ns = match v.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        };
        Value::Instant { ns, utc: true }
    }
}

impl From<std::time::Duration> for Value {
    fn from(v: std::time::Duration) -> Value {
        Value::Duration(v.as_nanos() as i128)
    }
}

#[cfg(feature = "chrono")]
mod chrono_values {
    use super::Value;
    use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike, Utc};

    fn ns_of(secs: i64, nanos: u32) -> i128 {
        i128::from(secs) * 1_000_000_000 + i128::from(nanos)
    }

    impl From<DateTime<Utc>> for Value {
        fn from(v: DateTime<Utc>) -> Value {
            Value::Instant {
                ns: ns_of(v.timestamp(), v.timestamp_subsec_nanos()),
                utc: true,
            }
        }
    }

    impl From<NaiveDateTime> for Value {
        fn from(v: NaiveDateTime) -> Value {
            let u = v.and_utc();
            Value::Instant {
                ns: ns_of(u.timestamp(), u.timestamp_subsec_nanos()),
                utc: false,
            }
        }
    }

    impl From<NaiveDate> for Value {
        fn from(v: NaiveDate) -> Value {
            let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid date");
            // Dates chrono can hold are within +-262,143 years: i32 days.
            Value::Date((v - epoch).num_days() as i32)
        }
    }

    impl From<NaiveTime> for Value {
        fn from(v: NaiveTime) -> Value {
            Value::TimeOfDay(
                i64::from(v.num_seconds_from_midnight()) * 1_000_000_000
                    + i64::from(v.nanosecond()),
            )
        }
    }

    impl From<TimeDelta> for Value {
        fn from(v: TimeDelta) -> Value {
            Value::Duration(ns_of(v.num_seconds(), 0) + i128::from(v.subsec_nanos()))
        }
    }
}

#[cfg(feature = "time")]
mod time_values {
    use super::Value;

    impl From<time::OffsetDateTime> for Value {
        fn from(v: time::OffsetDateTime) -> Value {
            Value::Instant {
                ns: v.unix_timestamp_nanos(),
                utc: true,
            }
        }
    }

    impl From<time::PrimitiveDateTime> for Value {
        fn from(v: time::PrimitiveDateTime) -> Value {
            Value::Instant {
                ns: v.assume_utc().unix_timestamp_nanos(),
                utc: false,
            }
        }
    }

    impl From<time::Date> for Value {
        fn from(v: time::Date) -> Value {
            Value::Date(v.to_julian_day() - 2_440_588)
        }
    }

    impl From<time::Time> for Value {
        fn from(v: time::Time) -> Value {
            let (h, m, s, n) = v.as_hms_nano();
            Value::TimeOfDay(
                ((i64::from(h) * 60 + i64::from(m)) * 60 + i64::from(s)) * 1_000_000_000
                    + i64::from(n),
            )
        }
    }

    impl From<time::Duration> for Value {
        fn from(v: time::Duration) -> Value {
            Value::Duration(v.whole_nanoseconds())
        }
    }
}
