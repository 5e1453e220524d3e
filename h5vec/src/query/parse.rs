//! The `--where` text syntax of a [`Filter`](super::Filter).

use std::fmt;

use super::filter::{Expr, Filter, Value};

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Instant { ns, utc } => write!(f, "instant({ns}{})", if *utc { "Z" } else { "" }),
            Value::Date(d) => write!(f, "date({d})"),
            Value::TimeOfDay(t) => write!(f, "time({t})"),
            Value::Duration(d) => write!(f, "duration({d})"),
        }
    }
}

fn fmt_expr(e: &Expr, f: &mut fmt::Formatter<'_>, parent: u8) -> fmt::Result {
    // Precedence: or 1, and 2, not 3.
    match e {
        Expr::Cmp { column, op, value } => write!(f, "{column} {} {value}", op.symbol()),
        Expr::Between { column, low, high } => write!(f, "{column} between {low} and {high}"),
        Expr::In { column, values } => {
            write!(f, "{column} in (")?;
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{v}")?;
            }
            write!(f, ")")
        }
        Expr::Null { column, null } => {
            write!(f, "{column} is {}null", if *null { "" } else { "not " })
        }
        Expr::And(a, b) => {
            let paren = parent > 2;
            if paren {
                write!(f, "(")?;
            }
            fmt_expr(a, f, 2)?;
            write!(f, " and ")?;
            fmt_expr(b, f, 2)?;
            if paren {
                write!(f, ")")?;
            }
            Ok(())
        }
        Expr::Or(a, b) => {
            let paren = parent > 1;
            if paren {
                write!(f, "(")?;
            }
            fmt_expr(a, f, 1)?;
            write!(f, " or ")?;
            fmt_expr(b, f, 1)?;
            if paren {
                write!(f, ")")?;
            }
            Ok(())
        }
        Expr::Not(a) => {
            write!(f, "not ")?;
            fmt_expr(a, f, 3)
        }
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_expr(&self.0, f, 0)
    }
}
