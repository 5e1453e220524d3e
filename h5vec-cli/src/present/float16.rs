//! `f16` values as text: the shortest decimal that reads back as the
//! same `f16`, in the forms CSV, the table and JSON print.

use std::sync::atomic::{AtomicU64, Ordering};

/// The value of the `f16` of bits `bits`, exactly (every `f16` is an `f64`).
pub(crate) fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let man = f64::from(bits & 0x3ff);
    match exp {
        0x1f if man == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        0 => sign * man * 2f64.powi(-24),
        _ => sign * (1024.0 + man) * 2f64.powi(exp - 25),
    }
}

/// Whether `x` (positive) rounds to the positive finite `f16` of bits `m`
/// (round to nearest, ties to even), computed exactly: the halfway points
/// to its neighbours are `f64`s.
fn rounds_to_f16(x: f64, m: u16) -> bool {
    let v = f16_to_f64(m);
    let below = if m == 0 {
        -f16_to_f64(1)
    } else {
        f16_to_f64(m - 1)
    };
    // Above the largest f16 (65504), 65536 would be next: from 65520 up, a
    // value rounds to infinity.
    let above = if m >= 0x7bff {
        65536.0
    } else {
        f16_to_f64(m + 1)
    };
    let (low, high) = ((v + below) / 2.0, (v + above) / 2.0);
    let even = m & 1 == 0;
    (x > low || (even && x == low)) && (x < high || (even && x == high))
}

/// The shortest decimal that reads back as the `f16` of bits `bits` (read
/// as an `f64`, then rounded to nearest `f16`), as the `f64` nearest it:
/// `0.1` for the `f16` nearest 0.1 (0.0999755859375), whose shortest `f64`
/// text is that decimal; `None` for NaN and the infinities. Of two
/// decimals of the fewest digits, the one nearer the value.
pub(crate) fn f16_shortest(bits: u16) -> Option<f64> {
    let m = bits & 0x7fff;
    if m >= 0x7c00 {
        return None;
    }
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    if m == 0 {
        return Some(sign * 0.0);
    }
    // Each magnitude's decimal is found once per run (0: not yet).
    static FOUND: [AtomicU64; 0x7c00] = [const { AtomicU64::new(0) }; 0x7c00];
    let found = &FOUND[usize::from(m)];
    let known = found.load(Ordering::Relaxed);
    if known != 0 {
        return Some(sign * f64::from_bits(known));
    }
    let shortest = shortest_f16_magnitude(m);
    found.store(shortest.to_bits(), Ordering::Relaxed);
    Some(sign * shortest)
}

/// The shortest decimal of [`f16_shortest`] for the positive finite `f16`
/// of bits `m` (not 0).
fn shortest_f16_magnitude(m: u16) -> f64 {
    let x = f16_to_f64(m);
    // An f16 has at most 5 significant digits to tell it apart; 17 digits
    // are every f64.
    for digits in 1..=17usize {
        let text = format!("{:.*e}", digits - 1, x);
        let near: f64 = text.parse().expect("a float's own text");
        if rounds_to_f16(near, m) {
            return near;
        }
        // The decimal of as many digits on x's other side (the halfway
        // points are not the same distance from x at powers of two).
        let (mantissa, exp) = text.split_once('e').expect("exponent form");
        let n: u64 = mantissa.replace('.', "").parse().expect("digits");
        let exp: i32 = exp.parse().expect("an exponent");
        let other = if near < x { n + 1 } else { n - 1 };
        let other: f64 = format!("{other}e{}", exp - (digits as i32 - 1))
            .parse()
            .expect("a float");
        if rounds_to_f16(other, m) {
            return other;
        }
    }
    x
}

/// An `f16` as CSV and the table print it: the shortest decimal of
/// [`f16_shortest`] in the form they print `f32` and `f64` in (ryu's:
/// `0.1`, `2.0`, `6e-8`), `NaN`, `inf`, `-inf` as for those.
pub(crate) fn write_f16(bits: u16, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    match f16_shortest(bits) {
        // serde_json writes a finite f64 with ryu, as arrow's printer does.
        Some(x) => out.write_str(&serde_json::Number::from_f64(x).expect("finite").to_string()),
        None => {
            let x = f16_to_f64(bits);
            out.write_str(if x.is_nan() {
                "NaN"
            } else if x > 0.0 {
                "inf"
            } else {
                "-inf"
            })
        }
    }
}
