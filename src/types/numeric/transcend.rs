//! Natural logarithm and exponential of [`Numeric`]s, ported from
//! PostgreSQL 15's `ln_var` and `exp_var` so that every digit (and the
//! speed profile) matches.
//!
//! Both take a result scale (decimals) and keep PostgreSQL's working
//! scales: `ln` reduces its argument into `0.9 < x < 1.1` by square roots
//! taken at a scale that keeps the significant digits of tiny and huge
//! arguments, then sums `2 (z + z^3/3 + z^5/5 + ...)` with
//! `z = (x - 1) / (x + 1)`; `exp` divides its argument by `2^k` exactly
//! until it is at most 0.01, sums the Taylor series with a short
//! multiplier (so each term costs time linear in its length) and squares
//! `k` times with a scale that shrinks as the result grows. Working scales
//! are counted in decimal digits; weights are PostgreSQL's base-10000
//! weights, because its cut-offs are written in them.

use super::mag::{self, Limbs};
use super::Numeric;
use std::cmp::Ordering;

/// `NUMERIC_MIN_DISPLAY_SCALE`.
const MIN_DISPLAY_SCALE: i32 = 0;

fn num(v: i64) -> Numeric {
    Numeric::from_i64(v)
}

/// The decimal exponent of the leading digit (`0` for 1.x, `-1` for 0.x);
/// `None` for zero.
pub(crate) fn dweight(x: &Numeric) -> Option<i32> {
    if x.mag.is_empty() {
        return None;
    }
    Some(mag::decimal_len(&x.mag) as i32 - 1 - x.scale as i32)
}

/// PostgreSQL's base-10000 weight of a non-zero value (0 for zero, as an
/// empty `NumericVar` has).
pub(crate) fn weight(x: &Numeric) -> i32 {
    dweight(x).map_or(0, |d| d.div_euclid(4))
}

/// `ln(x)` for a finite `x > 0`, rounded to `rscale` decimals (`ln_var`).
pub(crate) fn ln(arg: &Numeric, rscale: i32) -> Numeric {
    let mut x = arg.clone();
    let mut fact = num(2);
    let two = num(2);
    let zero_point_nine = Numeric::from_parts(false, Limbs::from_elem(9, 1), 1);
    let one_point_one = Numeric::from_parts(false, Limbs::from_elem(11, 1), 1);
    // Square roots until 0.9 < x < 1.1, each at a scale that keeps about
    // rscale + 8 significant digits of the final logarithm.
    while x.cmp(&zero_point_nine) != Ordering::Greater {
        let local = (rscale - weight(&x) * 4 / 2 + 8).max(MIN_DISPLAY_SCALE);
        x = x.sqrt_scale(local);
        fact = fact.mul(&two);
    }
    while x.cmp(&one_point_one) != Ordering::Less {
        let local = (rscale - weight(&x) * 4 / 2 + 8).max(MIN_DISPLAY_SCALE);
        x = x.sqrt_scale(local);
        fact = fact.mul(&two);
    }
    let local = rscale + 8;
    let one = num(1);
    let mut result = x.sub(&one).div_round(&x.add(&one), local);
    let mut xx = result.clone();
    let x2 = result.mul(&result).round_to(local);
    let mut ni = 1i64;
    loop {
        ni += 2;
        xx = xx.mul(&x2).round_to(local);
        let elem = xx.div_round(&num(ni), local);
        if elem.is_zero() {
            break;
        }
        result = result.add(&elem);
        if weight(&elem) < weight(&result) - local * 2 / 4 {
            break;
        }
    }
    result.mul(&fact).round_to(rscale)
}

/// `exp(x)` for a finite `x` rounded to `rscale` decimals (`exp_var`);
/// `None` when the result overflows numeric's range (`x >= 6000`).
pub(crate) fn exp(arg: &Numeric, rscale: i32) -> Option<Numeric> {
    let mut val = arg.to_f64();
    if val.abs() >= 6000.0 {
        if val > 0.0 {
            return None;
        }
        return Some(Numeric::from_parts(
            false,
            Limbs::new(),
            rscale.max(0) as u16,
        ));
    }
    // PostgreSQL multiplies by this literal (not the exact LOG10_E).
    #[allow(clippy::approx_constant)]
    let dweight = (val * 0.434294481903252) as i32;
    let mut x = arg.clone();
    let mut ndiv2 = 0i32;
    if val.abs() > 0.01 {
        ndiv2 = 1;
        val /= 2.0;
        while val.abs() > 0.01 {
            ndiv2 += 1;
            val /= 2.0;
        }
        let local = x.scale as i32 + ndiv2;
        x = x.div_round(&num(1i64 << ndiv2), local);
    }
    // PostgreSQL's literal, not the exact LOG10_2.
    #[allow(clippy::approx_constant)]
    let sig_digits = (1 + dweight + rscale + (ndiv2 as f64 * 0.301029995663981) as i32).max(0) + 8;
    let local = sig_digits - 1;
    let mut result = num(1).add(&x);
    let mut elem = x.mul(&x).round_to(local).div_round(&num(2), local);
    let mut ni = 2i64;
    while !elem.is_zero() {
        result = result.add(&elem);
        ni += 1;
        elem = elem.mul(&x).round_to(local).div_round(&num(ni), local);
    }
    for _ in 0..ndiv2 {
        let local = (sig_digits - weight(&result) * 2 * 4).max(MIN_DISPLAY_SCALE);
        result = result.mul(&result).round_to(local);
    }
    Some(result.round_to(rscale))
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
        let tiny = exp(&n("-50"), 40).unwrap();
        assert_eq!(
            tiny.round_scale(40).to_string(),
            "0.0000000000000000000001928749847963917783"
        );
        assert_eq!(ln(&n("1"), 10).round_scale(10).to_string(), "0.0000000000");
        // A tiny argument keeps its significant digits through the square
        // roots (digits from PostgreSQL 15: round(ln(1.234567e-89), 40)).
        assert_eq!(
            ln(&n("1.234567e-89"), 40).to_string(),
            "-204.7193529751546797252759099095587661746762"
        );
    }
}
