//! Evaluating a [`Filter`](super::Filter) on rows: the filter compiled
//! against its leaves ([`Plan`]: each literal converted once into the
//! column's domain, exactly), then evaluated window by window in HEP001's
//! three-valued logic. Statistics decide which windows are read at all
//! (`stats.rs`); this file decides rows.

use std::cmp::Ordering;
use std::ops::Range;

use super::filter::{CmpOp, Expr, Value};
use super::index::Answer;
use super::leaf::{Domain, Leaf, Vals};
use super::lit::{cmp_f, cmp_i, cmp_s, Lit, Pred, F, T, U};
use super::time::parse_time_text;
use crate::error::{Error, Result};

/// The filter with its columns replaced by leaf numbers.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    Leaf(usize, Pred),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    /// A leaf predicate a search index answers: `answers[k]` in
    /// [`truth`] (its leaf is read only where the index cannot say).
    Indexed(usize),
}

/// Converts `v` into the domain of `leaf` (errors name the column's path).
fn lit(leaf: &Leaf, v: &Value, ordered: bool) -> Result<Lit> {
    let bad = || {
        Error::mismatch(
            &leaf.path,
            format!(
                "a value for {} (filter column `{}`)",
                leaf.domain.describe(),
                leaf.column
            ),
            format!("{v}"),
        )
    };
    let time = |text: &str| {
        parse_time_text(text, &leaf.domain)
            .map(Lit::I)
            .ok_or_else(bad)
    };
    Ok(match (&leaf.domain, v) {
        (Domain::Int | Domain::UInt, Value::Int(i)) => Lit::I(*i),
        (Domain::Int | Domain::UInt | Domain::Float, Value::Float(x)) => {
            if x.is_nan() {
                return Err(Error::invalid(
                    &leaf.path,
                    format!(
                        "NaN matches no predicate (filter column `{}`); NaN is a value, \
                         not a missing row: use `is_null` for missing rows",
                        leaf.column
                    ),
                ));
            }
            Lit::F(*x)
        }
        (Domain::Float, Value::Int(i)) => Lit::I(*i),
        (Domain::Bool, Value::Bool(b)) => Lit::I(i128::from(*b)),
        (Domain::Str, Value::Str(s)) => Lit::S(s.clone()),
        (Domain::Enum(labels), Value::Str(s)) => match labels.iter().find(|(l, _)| l == s) {
            Some((_, code)) => Lit::I(i128::from(*code)),
            None if ordered => {
                return Err(Error::mismatch(
                    &leaf.path,
                    format!(
                        "one of the labels {:?} (filter column `{}`)",
                        labels.iter().map(|l| &l.0).collect::<Vec<_>>(),
                        leaf.column
                    ),
                    format!("{s:?}"),
                ))
            }
            None => Lit::Nothing,
        },
        (Domain::Instant { utc }, Value::Instant { ns, utc: u }) if utc == u => Lit::I(*ns),
        (Domain::Date, Value::Date(d)) => Lit::I(i128::from(*d)),
        (Domain::TimeOfDay, Value::TimeOfDay(t)) => Lit::I(i128::from(*t)),
        (Domain::Duration, Value::Duration(d)) => Lit::I(*d),
        (Domain::Instant { .. } | Domain::Date | Domain::TimeOfDay, Value::Str(s)) => time(s)?,
        (Domain::Duration, Value::Int(i)) => Lit::I(*i),
        _ => return Err(bad()),
    })
}

/// Compiles `e`, opening leaves with `open` (which returns the leaf's
/// number in `leaves`).
pub(crate) fn compile(
    e: &Expr,
    leaves: &mut Vec<Leaf>,
    open: &mut dyn FnMut(&str) -> Result<Leaf>,
) -> Result<Node> {
    let mut leaf_of = |column: &str, leaves: &mut Vec<Leaf>| -> Result<usize> {
        if let Some(i) = leaves.iter().position(|l| l.column == column) {
            return Ok(i);
        }
        leaves.push(open(column)?);
        Ok(leaves.len() - 1)
    };
    Ok(match e {
        Expr::Cmp { column, op, value } => {
            let i = leaf_of(column, leaves)?;
            let ordered = !matches!(op, CmpOp::Eq | CmpOp::Ne);
            let l = lit(&leaves[i], value, ordered)?;
            match op {
                CmpOp::Ne => Node::Not(Box::new(Node::Leaf(i, Pred::Cmp(CmpOp::Eq, l)))),
                _ => Node::Leaf(i, Pred::Cmp(*op, l)),
            }
        }
        Expr::Between { column, low, high } => {
            let i = leaf_of(column, leaves)?;
            let (a, b) = (lit(&leaves[i], low, true)?, lit(&leaves[i], high, true)?);
            Node::Leaf(i, Pred::Between(a, b))
        }
        Expr::In { column, values } => {
            let i = leaf_of(column, leaves)?;
            let lits = values
                .iter()
                .map(|v| lit(&leaves[i], v, false))
                .collect::<Result<Vec<_>>>()?;
            Node::Leaf(i, Pred::In(lits))
        }
        Expr::Null { column, null } => {
            let i = leaf_of(column, leaves)?;
            Node::Leaf(i, Pred::Null(*null))
        }
        Expr::And(a, b) => Node::And(
            Box::new(compile(a, leaves, open)?),
            Box::new(compile(b, leaves, open)?),
        ),
        Expr::Or(a, b) => Node::Or(
            Box::new(compile(a, leaves, open)?),
            Box::new(compile(b, leaves, open)?),
        ),
        Expr::Not(a) => Node::Not(Box::new(compile(a, leaves, open)?)),
    })
}

/// Whether `o` (the value against the literal) satisfies `op`.
#[inline]
fn holds(op: CmpOp, o: Option<Ordering>) -> bool {
    match (op, o) {
        (_, None) => false,
        (CmpOp::Eq, Some(o)) => o == Ordering::Equal,
        (CmpOp::Ne, Some(o)) => o != Ordering::Equal,
        (CmpOp::Lt, Some(o)) => o == Ordering::Less,
        (CmpOp::Le, Some(o)) => o != Ordering::Greater,
        (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
        (CmpOp::Ge, Some(o)) => o != Ordering::Less,
    }
}

/// Whether one value satisfies `p` (a value predicate).
fn test(p: &Pred, c: &dyn Fn(&Lit) -> Option<Ordering>) -> bool {
    match p {
        Pred::Cmp(_, Lit::Nothing) => false,
        Pred::Cmp(op, l) => holds(*op, c(l)),
        Pred::Between(a, b) => holds(CmpOp::Ge, c(a)) && holds(CmpOp::Le, c(b)),
        Pred::In(ls) => ls.iter().any(|l| holds(CmpOp::Eq, c(l))),
        Pred::Null(_) => unreachable!("presence is not a value predicate"),
    }
}

/// The integers a comparison with an integer or float literal holds for,
/// as an inclusive range (empty when `lo > hi`); `None` for other
/// predicates. Exact: `x < 10.5` is `x <= 10`.
fn int_range(p: &Pred) -> Option<(i128, i128)> {
    // Float to integer `as` saturates, which keeps every bound exact for
    // the i64 / u64 values it is used with.
    let ge = |l: &Lit| match l {
        Lit::I(v) => Some(*v),
        Lit::F(f) => Some(f.ceil() as i128),
        _ => None,
    };
    let le = |l: &Lit| match l {
        Lit::I(v) => Some(*v),
        Lit::F(f) => Some(f.floor() as i128),
        _ => None,
    };
    match p {
        Pred::Cmp(CmpOp::Eq, l) => match l {
            Lit::I(v) => Some((*v, *v)),
            Lit::F(f) if f.fract() == 0.0 && f.abs() < 1e38 => Some((*f as i128, *f as i128)),
            Lit::F(_) => Some((1, 0)),
            _ => None,
        },
        Pred::Cmp(CmpOp::Lt, l) => Some((
            i128::MIN,
            match l {
                Lit::I(v) => v.checked_sub(1)?,
                Lit::F(f) => (f.ceil() as i128).checked_sub(1)?,
                _ => return None,
            },
        )),
        Pred::Cmp(CmpOp::Le, l) => Some((i128::MIN, le(l)?)),
        Pred::Cmp(CmpOp::Gt, l) => Some((
            match l {
                Lit::I(v) => v.checked_add(1)?,
                Lit::F(f) => (f.floor() as i128).checked_add(1)?,
                _ => return None,
            },
            i128::MAX,
        )),
        Pred::Cmp(CmpOp::Ge, l) => Some((ge(l)?, i128::MAX)),
        Pred::Between(a, b) => Some((ge(a)?, le(b)?)),
        _ => None,
    }
}

/// A float column against float literals, one loop without branches per
/// operator (IEEE comparisons are false on NaN, `!=` true, as 14.2 says);
/// `None` for other predicates and for integers no float holds exactly,
/// which compare exactly by the general path.
fn float_truth(p: &Pred, v: &[f64]) -> Option<Vec<u8>> {
    fn each(v: &[f64], f: impl Fn(f64) -> bool) -> Vec<u8> {
        v.iter().map(|&x| u8::from(f(x))).collect()
    }
    // An integer a float represents exactly compares as that float.
    let f = |l: &Lit| match *l {
        Lit::F(x) => Some(x),
        Lit::I(i) if i.unsigned_abs() <= 1 << 53 => Some(i as f64),
        _ => None,
    };
    Some(match p {
        Pred::Cmp(op, l) => {
            let l = f(l)?;
            match op {
                CmpOp::Eq => each(v, |x| x == l),
                CmpOp::Ne => each(v, |x| x != l),
                CmpOp::Lt => each(v, |x| x < l),
                CmpOp::Le => each(v, |x| x <= l),
                CmpOp::Gt => each(v, |x| x > l),
                CmpOp::Ge => each(v, |x| x >= l),
            }
        }
        Pred::Between(a, b) => {
            let (a, b) = (f(a)?, f(b)?);
            each(v, |x| (x >= a) & (x <= b))
        }
        _ => return None,
    })
}

/// The truth of `p` on each row of `vals`.
fn leaf_truth(p: &Pred, vals: &Vals, missing: Option<&[bool]>, n: usize) -> Vec<u8> {
    // Integer columns against an integer range: one compare pair a row.
    // The range is intersected with the column type's before narrowing.
    let narrow = |lo: i128, hi: i128, min: i128, max: i128| {
        let (lo, hi) = (lo.max(min), hi.min(max));
        (lo <= hi).then_some((lo, hi))
    };
    if let (Vals::I(v), Some((lo, hi))) = (vals, int_range(p)) {
        let mut out: Vec<u8> = match narrow(lo, hi, i64::MIN.into(), i64::MAX.into()) {
            // In i64 range by `narrow`.
            Some((lo, hi)) => {
                let (lo, hi) = (lo as i64, hi as i64);
                // `lo <= x <= hi` as one unsigned compare, without a
                // branch (random values would mispredict half of them).
                let span = hi.wrapping_sub(lo) as u64;
                v.iter()
                    .map(|&x| u8::from(x.wrapping_sub(lo) as u64 <= span))
                    .collect()
            }
            None => vec![F; v.len()],
        };
        mark_missing(&mut out, missing);
        return out;
    }
    if let (Vals::U(v), Some((lo, hi))) = (vals, int_range(p)) {
        let mut out: Vec<u8> = match narrow(lo, hi, 0, u64::MAX.into()) {
            // In u64 range by `narrow`.
            Some((lo, hi)) => {
                let (lo, hi) = (lo as u64, hi as u64);
                let span = hi - lo;
                v.iter()
                    .map(|&x| u8::from(x.wrapping_sub(lo) <= span))
                    .collect()
            }
            None => vec![F; v.len()],
        };
        mark_missing(&mut out, missing);
        return out;
    }
    if let Some(mut out) = match vals {
        Vals::F(v) => float_truth(p, v),
        _ => None,
    } {
        mark_missing(&mut out, missing);
        return out;
    }
    if let Pred::Null(null) = p {
        return (0..n)
            .map(|r| {
                let m = missing.is_some_and(|m| m[r]);
                u8::from(m == *null)
            })
            .collect();
    }
    let mut out: Vec<u8> = match vals {
        Vals::I(v) => v
            .iter()
            .map(|&x| u8::from(test(p, &|l| cmp_i(i128::from(x), l))))
            .collect(),
        Vals::U(v) => v
            .iter()
            .map(|&x| u8::from(test(p, &|l| cmp_i(i128::from(x), l))))
            .collect(),
        Vals::B(v) => v
            .iter()
            .map(|&x| u8::from(test(p, &|l| cmp_i(i128::from(x), l))))
            .collect(),
        Vals::F(v) => v
            .iter()
            .map(|&x| u8::from(test(p, &|l| cmp_f(x, l))))
            .collect(),
        Vals::S(v) => v
            .iter()
            .map(|x| match x {
                Some(s) => u8::from(test(p, &|l| cmp_s(s, l))),
                None => U,
            })
            .collect(),
    };
    mark_missing(&mut out, missing);
    out
}

/// Missing rows are unknown.
fn mark_missing(out: &mut [u8], missing: Option<&[bool]>) {
    if let Some(m) = missing {
        for (o, &m) in out.iter_mut().zip(m) {
            if m {
                *o = U;
            }
        }
    }
}

/// Kleene AND, OR, NOT on truth values.
#[inline]
fn and(a: u8, b: u8) -> u8 {
    match (a, b) {
        (F, _) | (_, F) => F,
        (T, T) => T,
        _ => U,
    }
}
#[inline]
fn or(a: u8, b: u8) -> u8 {
    match (a, b) {
        (T, _) | (_, T) => T,
        (F, F) => F,
        _ => U,
    }
}
#[inline]
fn not(a: u8) -> u8 {
    match a {
        T => F,
        F => T,
        _ => U,
    }
}

/// A leaf's values of the rows being evaluated and which are missing,
/// once read.
type ReadLeaf = Option<(Vals, Option<Vec<bool>>)>;

/// The truth of `node` on rows `rows`, reading each leaf once (a leaf
/// whose predicates the indexes `answers` decide is not read).
pub(crate) fn truth(
    node: &Node,
    leaves: &mut [Leaf],
    answers: &[Answer],
    rows: Range<u64>,
) -> Result<Vec<u8>> {
    let n = (rows.end - rows.start) as usize;
    let mut read: Vec<ReadLeaf> = (0..leaves.len()).map(|_| None).collect();
    struct Ctx<'a> {
        leaves: &'a mut [Leaf],
        answers: &'a [Answer],
        read: Vec<ReadLeaf>,
        rows: Range<u64>,
        n: usize,
    }
    fn leaf(c: &mut Ctx<'_>, i: usize, p: &Pred) -> Result<Vec<u8>> {
        if c.read[i].is_none() {
            c.read[i] = Some(c.leaves[i].read(c.rows.clone())?);
        }
        let (v, m) = c.read[i].as_ref().expect("read above");
        Ok(leaf_truth(p, v, m.as_deref(), c.n))
    }
    fn go(node: &Node, c: &mut Ctx<'_>, neg: bool) -> Result<Vec<u8>> {
        Ok(match node {
            Node::Leaf(i, p) => leaf(c, *i, p)?,
            Node::Indexed(k) => {
                let a = &c.answers[*k];
                match a.truth(&c.rows, neg) {
                    Some(t) => t,
                    None => leaf(c, a.leaf, &a.pred)?,
                }
            }
            Node::And(a, b) => {
                let mut x = go(a, c, neg)?;
                if x.iter().all(|&t| t == F) {
                    return Ok(x);
                }
                let y = go(b, c, neg)?;
                x.iter_mut().zip(y).for_each(|(a, b)| *a = and(*a, b));
                x
            }
            Node::Or(a, b) => {
                let mut x = go(a, c, neg)?;
                let y = go(b, c, neg)?;
                x.iter_mut().zip(y).for_each(|(a, b)| *a = or(*a, b));
                x
            }
            Node::Not(a) => {
                let mut x = go(a, c, !neg)?;
                x.iter_mut().for_each(|a| *a = not(*a));
                x
            }
        })
    }
    let mut c = Ctx {
        leaves,
        answers,
        read: std::mem::take(&mut read),
        rows,
        n,
    };
    go(node, &mut c, false)
}
