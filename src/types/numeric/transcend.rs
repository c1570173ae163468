//! Natural logarithm and exponential of [`Numeric`]s to a chosen number of
//! decimals, for `power(numeric, numeric)` with a non-integral exponent
//! (PostgreSQL computes `exp(y * ln(x))` exactly enough that the last printed
//! digit is right; `f64` is not).
//!
//! Both work at a fixed scale (digits after the point) with guard digits:
//! `ln` halves its argument by square roots until it is near 1, then sums
//! the series `2 (z + z^3/3 + z^5/5 + ...)` with `z = (x - 1) / (x + 1)`;
//! `exp` divides its argument by `2^k` until it is small, sums the Taylor
//! series and squares `k` times. Negative arguments of `exp` use
//! `1 / exp(-x)` so that small results keep their significant digits.

use super::{mag, Numeric};
use std::cmp::Ordering;

fn num(v: i64) -> Numeric {
    Numeric::from_i64(v)
}

/// `|x| < 10^-scale` (the series' stopping rule).
fn negligible(x: &Numeric, scale: i32) -> bool {
    if x.is_zero() {
        return true;
    }
    let digits = mag::decimal_len(&x.mag) as i32 - x.scale as i32; // position of the top digit + 1
    digits <= -scale
}

/// `ln(x)` for a finite `x > 0`, with absolute error below `10^-scale`.
pub(crate) fn ln(x: &Numeric, scale: i32) -> Numeric {
    let guard = scale + 12;
    let one = num(1);
    let bound_hi = Numeric::parse("1.01").expect("literal");
    let bound_lo = Numeric::parse("0.99").expect("literal");
    // Square roots until x is within 1% of 1; each one halves ln(x).
    let mut y = x.clone();
    let mut doublings = 0u32;
    let mut work = guard;
    while y.cmp(&bound_hi) == Ordering::Greater || y.cmp(&bound_lo) == Ordering::Less {
        doublings += 1;
        work = guard + (doublings as i32 * 3 + 9) / 10 + 2;
        y = y.sqrt_scale(work);
    }
    let z = y.sub(&one).div_round(&y.add(&one), work);
    let z2 = z.mul(&z).round_scale(work);
    let mut term = z.clone();
    let mut sum = z;
    let mut k = 1i64;
    loop {
        term = term.mul(&z2).round_scale(work);
        k += 2;
        let t = term.div_round(&num(k), work);
        if negligible(&t, work) {
            break;
        }
        sum = sum.add(&t);
    }
    let factor = num(2i64 << doublings.min(60));
    sum.mul(&factor).round_scale(scale + 2)
}

/// `exp(x)` for a finite `x`, with relative error below `10^-digits`
/// where `digits` counts significant digits. Returns `None` on overflow
/// (`x` above about 2.3 million, far past numeric's range anyway).
pub(crate) fn exp(x: &Numeric, digits: i32) -> Option<Numeric> {
    if x.is_negative() {
        let pos = exp(&x.neg(), digits + 2)?;
        // 1 / e^|x|: enough decimals for `digits` significant digits.
        let weight = mag::decimal_len(&pos.mag) as i32 - pos.scale as i32;
        return Some(num(1).div_round(&pos, digits + weight + 2));
    }
    let approx = x.to_f64();
    if approx > 2_400_000.0 {
        return None;
    }
    // Decimal digits before the point in the result.
    let int_digits = (approx * std::f64::consts::LOG10_E).ceil().max(0.0) as i32 + 1;
    let mut k = 0u32;
    let mut r = x.clone();
    let small = Numeric::parse("0.01").expect("literal");
    let two = num(2);
    let work = digits + int_digits + 8;
    // Halve until small; squaring later doubles relative error k times.
    while r.cmp(&small) == Ordering::Greater {
        k += 1;
        r = r.div_round(&two, work + 6 + k as i32);
    }
    let work = work + (k as i32 * 3 + 9) / 10 + 4;
    let mut sum = num(1);
    let mut term = num(1);
    let mut n = 0i64;
    loop {
        n += 1;
        term = term.mul(&r).div_round(&num(n), work);
        if negligible(&term, work) {
            break;
        }
        sum = sum.add(&term);
    }
    for _ in 0..k {
        sum = sum.mul(&sum).round_scale(work);
    }
    Some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).unwrap()
    }

    #[test]
    fn ln_and_exp_to_many_digits() {
        // Reference digits of ln 2, ln 10 and e.
        assert_eq!(
            ln(&n("2"), 30).round_scale(30).to_string(),
            "0.693147180559945309417232121458"
        );
        assert_eq!(
            ln(&n("10"), 30).round_scale(30).to_string(),
            "2.302585092994045684017991454684"
        );
        assert_eq!(
            exp(&n("1"), 30).unwrap().round_scale(30).to_string(),
            "2.718281828459045235360287471353"
        );
        assert_eq!(
            ln(&n("0.5"), 20).round_scale(20).to_string(),
            "-0.69314718055994530942"
        );
        let tiny = exp(&n("-50"), 20).unwrap();
        assert_eq!(
            tiny.round_scale(40).to_string(),
            "0.0000000000000000000001928749847963917783"
        );
        assert_eq!(ln(&n("1"), 10).round_scale(10).to_string(), "0.0000000000");
    }
}
