//! What `eval.rs`, `plan.rs` and the index families share: a literal in
//! a column's domain ([`Lit`]), a compiled predicate ([`Pred`]), the
//! three truth values ([`F`], [`T`], [`U`]) and the exact comparisons of
//! a value against a literal ([`cmp_val`], [`cmp_int_float`]).

use std::cmp::Ordering;

use super::filter::CmpOp;
use super::leaf::Vals;

/// A literal in a column's domain.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Lit {
    /// An integer (integer, enum, time and bool columns).
    I(i128),
    /// A float (compared exactly with integer columns too).
    F(f64),
    /// Text.
    S(String),
    /// Matches no row (an enum label the column does not have).
    Nothing,
}

/// One compiled predicate on leaf `leaf`.
#[derive(Clone, Debug)]
pub(crate) enum Pred {
    Cmp(CmpOp, Lit),
    Between(Lit, Lit),
    In(Vec<Lit>),
    Null(bool),
}

/// Three-valued truth: [`F`], [`T`], [`U`]nknown.
pub(crate) const F: u8 = 0;
pub(crate) const T: u8 = 1;
pub(crate) const U: u8 = 2;

/// `i` against `f` (not NaN), exactly.
pub(crate) fn cmp_int_float(i: i128, f: f64) -> Ordering {
    // Every i128 lies strictly between -2^127 - 1 and 2^127.
    const TWO_127: f64 = 170141183460469231731687303715884105728.0;
    if f >= TWO_127 {
        return Ordering::Less;
    }
    if f < -TWO_127 {
        return Ordering::Greater;
    }
    let fl = f.floor();
    // |fl| < 2^127: exact as an i128.
    let fi = fl as i128;
    match i.cmp(&fi) {
        Ordering::Equal if f > fl => Ordering::Less,
        o => o,
    }
}

/// Row `i` of `v` against the literal, exactly as predicates compare
/// (`None`: unordered, a NaN, or a missing text row).
pub(crate) fn cmp_val(v: &Vals, i: usize, l: &Lit) -> Option<Ordering> {
    match v {
        Vals::I(x) => cmp_i(i128::from(x[i]), l),
        Vals::U(x) => cmp_i(i128::from(x[i]), l),
        Vals::B(x) => cmp_i(i128::from(x[i]), l),
        Vals::F(x) => cmp_f(x[i], l),
        Vals::S(x) => cmp_s(x[i].as_deref()?, l),
    }
}

/// `x` against the literal (`None`: unordered, i.e. a NaN).
#[inline]
pub(crate) fn cmp_f(x: f64, l: &Lit) -> Option<Ordering> {
    match l {
        Lit::F(y) => x.partial_cmp(y),
        Lit::I(i) if x.is_nan() => None,
        Lit::I(i) => Some(cmp_int_float(*i, x).reverse()),
        _ => None,
    }
}

#[inline]
pub(crate) fn cmp_i(x: i128, l: &Lit) -> Option<Ordering> {
    match l {
        Lit::I(i) => Some(x.cmp(i)),
        Lit::F(y) => Some(cmp_int_float(x, *y)),
        _ => None,
    }
}

#[inline]
pub(crate) fn cmp_s(x: &str, l: &Lit) -> Option<Ordering> {
    match l {
        Lit::S(s) => Some(x.cmp(s.as_str())),
        _ => None,
    }
}
