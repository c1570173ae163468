//! Numeric arithmetic with PostgreSQL's result scales and special values.
//!
//! Result display scales follow `numeric.c`: `+`/`-` keep the larger scale,
//! `*` adds the scales, `/` uses `select_div_scale` (at least 16 significant
//! digits), `%` keeps the larger scale, `sqrt` uses `NUMERIC_MIN_SIG_DIGITS`
//! around the result's weight. NaN propagates; infinities follow IEEE rules
//! where PostgreSQL 15 does (`Infinity - Infinity` is NaN).

use super::mag::{self, Limbs};
use super::{NumKind, Numeric, MAX_DISPLAY_SCALE};
use crate::err;
use crate::error::Result;
use std::cmp::Ordering;

/// `NUMERIC_MIN_SIG_DIGITS`: division and sqrt give at least this many
/// significant digits.
const MIN_SIG_DIGITS: i32 = 16;

/// Aligns two finite values to the larger scale: (a_mag, b_mag, scale).
fn align(a: &Numeric, b: &Numeric) -> (Limbs, Limbs, u16) {
    match a.scale.cmp(&b.scale) {
        Ordering::Equal => (a.mag.clone(), b.mag.clone(), a.scale),
        Ordering::Less => (
            mag::mul_pow10(&a.mag, (b.scale - a.scale) as u32),
            b.mag.clone(),
            b.scale,
        ),
        Ordering::Greater => (
            a.mag.clone(),
            mag::mul_pow10(&b.mag, (a.scale - b.scale) as u32),
            a.scale,
        ),
    }
}

/// `a + b` of two finite values; only the operand with the smaller scale is
/// copied (multiplied by a power of ten), the other is read in place.
fn finite_add(a: &Numeric, b: &Numeric) -> Numeric {
    match a.scale.cmp(&b.scale) {
        Ordering::Equal => signed_add(a.neg, &a.mag, b.neg, &b.mag, a.scale),
        Ordering::Less => {
            let am = mag::mul_pow10(&a.mag, (b.scale - a.scale) as u32);
            signed_add(a.neg, &am, b.neg, &b.mag, b.scale)
        }
        Ordering::Greater => {
            let bm = mag::mul_pow10(&b.mag, (a.scale - b.scale) as u32);
            signed_add(a.neg, &a.mag, b.neg, &bm, a.scale)
        }
    }
}

fn signed_add(aneg: bool, am: &[u32], bneg: bool, bm: &[u32], scale: u16) -> Numeric {
    if aneg == bneg {
        return Numeric::from_parts(aneg, mag::add(am, bm), scale);
    }
    match mag::cmp(am, bm) {
        Ordering::Less => Numeric::from_parts(bneg, mag::sub(bm, am), scale),
        _ => Numeric::from_parts(aneg, mag::sub(am, bm), scale),
    }
}

impl Numeric {
    /// `factorial(n)` as PostgreSQL's `numeric_fac`: 1 up to `n = 1`, an
    /// error for negative `n` and past 32177 (the result would not fit).
    pub fn factorial(n: i64) -> Result<Numeric> {
        if n < 0 {
            return Err(err!(
                NumericValueOutOfRange,
                "factorial of a negative number is undefined"
            ));
        }
        if n > 32177 {
            return Err(err!(
                NumericValueOutOfRange,
                "value overflows numeric format"
            ));
        }
        let mut m = Limbs::from_elem(1, 1);
        for k in 2..=n as u32 {
            mag::mul_small_add(&mut m, k, 0);
        }
        Ok(Numeric::from_parts(false, m, 0))
    }

    /// `self + other`.
    pub fn add(&self, other: &Numeric) -> Numeric {
        use NumKind::*;
        match (self.kind, other.kind) {
            (NaN, _) | (_, NaN) | (PosInf, NegInf) | (NegInf, PosInf) => Numeric::nan(),
            (PosInf | NegInf, _) => self.clone(),
            (_, PosInf | NegInf) => other.clone(),
            (Finite, Finite) => finite_add(self, other),
        }
    }

    /// `*self += other`, adding into `self`'s limbs when both have the same
    /// sign and `self` the larger scale (a running sum over a column), so
    /// that `sum` and `avg` allocate nothing per row; as [`Numeric::add`]
    /// otherwise.
    pub fn add_assign(&mut self, other: &Numeric) {
        let same_sign = self.neg == other.neg || other.mag.is_empty();
        if self.is_finite() && other.is_finite() && same_sign && self.scale >= other.scale {
            if self.scale == other.scale {
                mag::add_assign(&mut self.mag, &other.mag);
            } else {
                let m = mag::mul_pow10(&other.mag, (self.scale - other.scale) as u32);
                mag::add_assign(&mut self.mag, &m);
            }
            return;
        }
        *self = self.add(other);
    }

    /// `-self`.
    pub fn neg(&self) -> Numeric {
        match self.kind {
            NumKind::NaN => Numeric::nan(),
            NumKind::PosInf => Numeric::infinity(true),
            NumKind::NegInf => Numeric::infinity(false),
            NumKind::Finite => Numeric::from_parts(!self.neg, self.mag.clone(), self.scale),
        }
    }

    /// `abs(self)`.
    pub fn abs(&self) -> Numeric {
        if self.neg {
            self.neg()
        } else {
            self.clone()
        }
    }

    /// `self - other`.
    pub fn sub(&self, other: &Numeric) -> Numeric {
        self.add(&other.neg())
    }

    /// `self * other`; the result scale is the sum of the scales.
    pub fn mul(&self, other: &Numeric) -> Numeric {
        use NumKind::*;
        match (self.kind, other.kind) {
            (NaN, _) | (_, NaN) => Numeric::nan(),
            (Finite, Finite) => {
                let scale = self.scale as u32 + other.scale as u32;
                let product =
                    Numeric::from_parts(self.neg != other.neg, mag::mul(&self.mag, &other.mag), 0);
                if scale > super::MAX_DSCALE as u32 {
                    // PostgreSQL rounds products to the largest storable scale.
                    return Numeric {
                        scale: scale.min(u16::MAX as u32) as u16,
                        ..product
                    }
                    .round_to(super::MAX_DSCALE);
                }
                Numeric {
                    scale: scale as u16,
                    ..product
                }
            }
            _ => {
                if self.is_zero() || other.is_zero() {
                    Numeric::nan()
                } else {
                    Numeric::infinity(self.neg != other.neg)
                }
            }
        }
    }

    /// PostgreSQL's `select_div_scale`: enough decimals for at least 16
    /// significant digits, and no fewer than either input's scale.
    pub fn div_scale(&self, other: &Numeric) -> i32 {
        let (w1, d1) = self.base10000_lead();
        let (w2, d2) = other.base10000_lead();
        let mut qweight = w1 - w2;
        if d1 <= d2 {
            qweight -= 1;
        }
        let rscale = (MIN_SIG_DIGITS - qweight * 4)
            .max(self.scale as i32)
            .max(other.scale as i32)
            .max(0);
        rscale.min(MAX_DISPLAY_SCALE)
    }

    /// PostgreSQL's `estimate_ln_dweight`: the decimal weight of `ln(self)`
    /// for a finite positive value.
    fn estimate_ln_dweight(&self) -> i32 {
        let lo = Numeric::parse("0.9").expect("literal");
        let hi = Numeric::parse("1.1").expect("literal");
        if self.cmp(&lo) != Ordering::Less && self.cmp(&hi) != Ordering::Greater {
            // ln(x) ~= x - 1: its decimal weight.
            let d = self.sub(&Numeric::from_i64(1));
            if d.is_zero() {
                return 0;
            }
            return mag::decimal_len(&d.mag) as i32 - 1 - d.scale as i32;
        }
        // var ~= digits * 10^dweight from its first two base-10000 digits.
        let Some(top) = super::transcend::dweight(self) else {
            return 0;
        };
        let w = top.div_euclid(4);
        let text = mag::to_decimal(&self.mag);
        // Decimal digits of the first base-10000 digit, then of the second.
        let first_len = (top - 4 * w + 1) as usize;
        let take = |from: usize, len: usize| -> f64 {
            let mut v = 0u32;
            for i in from..from + len {
                v = v * 10 + text.as_bytes().get(i).map_or(0, |c| (c - b'0') as u32);
            }
            v as f64
        };
        let mut digits = take(0, first_len);
        let mut dweight = w * 4;
        // A second base-10000 digit exists when any digit follows the first
        // group (PostgreSQL strips trailing zero groups).
        let rest = text.as_bytes().get(first_len..).unwrap_or(&[]);
        if rest.iter().any(|&c| c != b'0') {
            digits = digits * 10000.0 + take(first_len, 4);
            dweight -= 4;
        }
        // PostgreSQL's literal, not the exact LN_10.
        #[allow(clippy::approx_constant)]
        let ln_var = digits.ln() + dweight as f64 * 2.302585092994046;
        ln_var.abs().log10() as i32
    }

    /// `exp(numeric)` as PostgreSQL's `numeric_exp`: the result scale gives
    /// at least 16 significant digits (and no fewer decimals than the
    /// argument); `value overflows numeric format` past `exp(6000)`.
    pub fn exp(&self) -> Result<Numeric> {
        match self.kind {
            NumKind::NaN | NumKind::PosInf => return Ok(self.clone()),
            NumKind::NegInf => return Ok(Numeric::zero()),
            NumKind::Finite => {}
        }
        let x = self.to_f64();
        // PostgreSQL multiplies by this literal (not the exact LOG10_E).
        #[allow(clippy::approx_constant)]
        let val = (x * 0.434294481903252).clamp(-2000.0, 2000.0);
        let rscale = (MIN_SIG_DIGITS - val as i32)
            .max(self.scale as i32)
            .clamp(0, MAX_DISPLAY_SCALE);
        if x.abs() >= 6000.0 {
            if x > 0.0 {
                return Err(err!(
                    NumericValueOutOfRange,
                    "value overflows numeric format"
                ));
            }
            return Ok(Numeric::from_parts(false, Limbs::new(), rscale as u16));
        }
        if val < -(rscale as f64) - 2.0 {
            // Rounds to zero at this scale.
            return Ok(Numeric::from_parts(false, Limbs::new(), rscale as u16));
        }
        super::transcend::exp(self, rscale)
            .ok_or_else(|| err!(NumericValueOutOfRange, "value overflows numeric format"))
    }

    /// The domain errors of `ln` and `log` (2201E).
    fn check_log_arg(&self) -> Result<()> {
        if self.is_zero() {
            return Err(err!(
                InvalidArgumentForLogarithm,
                "cannot take logarithm of zero"
            ));
        }
        if self.is_negative() || self.kind == NumKind::NegInf {
            return Err(err!(
                InvalidArgumentForLogarithm,
                "cannot take logarithm of a negative number"
            ));
        }
        Ok(())
    }

    /// `ln(numeric)` as PostgreSQL's `numeric_ln`: 16 significant digits
    /// at least, no fewer decimals than the argument.
    pub fn ln(&self) -> Result<Numeric> {
        if self.is_nan() {
            return Ok(Numeric::nan());
        }
        self.check_log_arg()?;
        if self.kind == NumKind::PosInf {
            return Ok(self.clone());
        }
        let rscale = (MIN_SIG_DIGITS - self.estimate_ln_dweight())
            .max(self.scale as i32)
            .clamp(0, MAX_DISPLAY_SCALE);
        Ok(super::transcend::ln(self, rscale))
    }

    /// `log(base, self)` as PostgreSQL's `numeric_log` (`log(numeric)` is
    /// `log(10, x)`): `ln(x) / ln(base)` with the scale of `log_var`.
    pub fn log(&self, base: &Numeric) -> Result<Numeric> {
        if self.is_nan() || base.is_nan() {
            return Ok(Numeric::nan());
        }
        base.check_log_arg()?;
        self.check_log_arg()?;
        match (base.kind, self.kind) {
            (NumKind::PosInf, NumKind::PosInf) => return Ok(Numeric::nan()),
            (NumKind::PosInf, _) => return Ok(Numeric::zero()),
            (_, NumKind::PosInf) => {
                let one = Numeric::from_i64(1);
                return match base.cmp(&one) {
                    Ordering::Equal => Err(err!(DivisionByZero, "division by zero")),
                    Ordering::Less => Ok(Numeric::infinity(true)),
                    Ordering::Greater => Ok(Numeric::infinity(false)),
                };
            }
            _ => {}
        }
        let ln_base_dweight = base.estimate_ln_dweight();
        let ln_num_dweight = self.estimate_ln_dweight();
        let result_dweight = ln_num_dweight - ln_base_dweight;
        let rscale = (MIN_SIG_DIGITS - result_dweight)
            .max(base.scale as i32)
            .max(self.scale as i32)
            .clamp(0, MAX_DISPLAY_SCALE);
        let ln_base_rscale = rscale + result_dweight - ln_base_dweight + 8;
        let ln_num_rscale = rscale + result_dweight - ln_num_dweight + 8;
        let ln_base = super::transcend::ln(base, ln_base_rscale);
        let ln_num = super::transcend::ln(self, ln_num_rscale);
        if ln_base.is_zero() {
            return Err(err!(DivisionByZero, "division by zero"));
        }
        Ok(ln_num.div_round(&ln_base, rscale))
    }

    /// The weight and first digit of the value in PostgreSQL's base-10000
    /// representation (`(0, 0)` for zero).
    fn base10000_lead(&self) -> (i32, u32) {
        if self.mag.is_empty() {
            return (0, 0);
        }
        let len = mag::decimal_len(&self.mag) as i32;
        let e = len - 1 - self.scale as i32;
        let w = e.div_euclid(4);
        let k = (e - 4 * w + 1) as usize;
        let digits = mag::to_decimal(&self.mag);
        let mut first = 0u32;
        for i in 0..k {
            let d = digits.as_bytes().get(i).map_or(0, |c| (c - b'0') as u32);
            first = first * 10 + d;
        }
        (w, first)
    }

    /// `self / other` with [`Numeric::div_scale`] decimals, rounded half
    /// away from zero; `division by zero` (22012) for a zero divisor.
    pub fn div(&self, other: &Numeric) -> Result<Numeric> {
        if let Some(special) = self.div_special(other)? {
            return Ok(special);
        }
        let rscale = self.div_scale(other);
        Ok(self.div_round(other, rscale))
    }

    /// Handles NaN, infinities and zero divisors for `/`, `%` and `div`.
    fn div_special(&self, other: &Numeric) -> Result<Option<Numeric>> {
        use NumKind::*;
        if self.is_nan() || other.is_nan() {
            return Ok(Some(Numeric::nan()));
        }
        if other.is_zero() {
            return Err(err!(DivisionByZero, "division by zero"));
        }
        Ok(match (self.kind, other.kind) {
            (Finite, Finite) => None,
            (PosInf | NegInf, PosInf | NegInf) => Some(Numeric::nan()),
            (PosInf | NegInf, Finite) => Some(Numeric::infinity(self.neg != other.neg)),
            _ => Some(Numeric::zero()),
        })
    }

    /// The exact quotient of two finite values rounded half away from zero to
    /// `rscale` decimals (`other` non-zero).
    pub(crate) fn div_round(&self, other: &Numeric, rscale: i32) -> Numeric {
        // a/b * 10^r = A * 10^(sb + r - sa) / B
        let k = other.scale as i32 + rscale - self.scale as i32;
        let (num, den) = if k >= 0 {
            (mag::mul_pow10(&self.mag, k as u32), other.mag.clone())
        } else {
            (self.mag.clone(), mag::mul_pow10(&other.mag, (-k) as u32))
        };
        let (mut q, r) = mag::divrem(&num, &den);
        if mag::cmp(&mag::add(&r, &r), &den) != Ordering::Less {
            q = mag::add(&q, &[1]);
        }
        Numeric::from_parts(self.neg != other.neg, q, rscale.max(0) as u16)
    }

    /// The quotient truncated toward zero to an integer (`div(numeric, numeric)`).
    pub fn div_trunc(&self, other: &Numeric) -> Result<Numeric> {
        if let Some(special) = self.div_special(other)? {
            return Ok(special.trunc_scale(0));
        }
        let k = other.scale as i32 - self.scale as i32;
        let (num, den) = if k >= 0 {
            (mag::mul_pow10(&self.mag, k as u32), other.mag.clone())
        } else {
            (self.mag.clone(), mag::mul_pow10(&other.mag, (-k) as u32))
        };
        let (q, _) = mag::divrem(&num, &den);
        Ok(Numeric::from_parts(self.neg != other.neg, q, 0))
    }

    /// `self % other`: the remainder with the dividend's sign, scale the
    /// larger of the two.
    pub fn rem(&self, other: &Numeric) -> Result<Numeric> {
        if self.is_nan() || other.is_nan() {
            return Ok(Numeric::nan());
        }
        if other.is_zero() {
            return Err(err!(DivisionByZero, "division by zero"));
        }
        if !self.is_finite() {
            return Ok(Numeric::nan());
        }
        if !other.is_finite() {
            return Ok(self.clone());
        }
        let (a, b, scale) = align(self, other);
        let (_, r) = mag::divrem(&a, &b);
        Ok(Numeric::from_parts(self.neg, r, scale))
    }

    /// Smallest integer not below the value (`ceil`).
    pub fn ceil(&self) -> Numeric {
        let t = self.trunc_scale(0);
        if self.is_finite() && !self.neg && t.cmp(self) != Ordering::Equal {
            return t.add(&Numeric::from_i64(1));
        }
        t
    }

    /// Largest integer not above the value (`floor`).
    pub fn floor(&self) -> Numeric {
        let t = self.trunc_scale(0);
        if self.is_finite() && self.neg && t.cmp(self) != Ordering::Equal {
            return t.sub(&Numeric::from_i64(1));
        }
        t
    }

    /// `sqrt(numeric)` with PostgreSQL's result scale; negative input fails
    /// with `cannot take square root of a negative number` (2201F is
    /// reported as 22023 here).
    pub fn sqrt(&self) -> Result<Numeric> {
        match self.kind {
            NumKind::NaN => return Ok(Numeric::nan()),
            NumKind::PosInf => return Ok(self.clone()),
            _ => {}
        }
        if self.neg {
            return Err(err!(
                InvalidArgumentForPowerFunction,
                "cannot take square root of a negative number"
            ));
        }
        let (w, _) = self.base10000_lead();
        let sweight = (w + 1) * 4 / 2 - 1;
        let rscale = (MIN_SIG_DIGITS - sweight)
            .max(self.scale as i32)
            .clamp(0, MAX_DISPLAY_SCALE);
        Ok(self.sqrt_scale(rscale))
    }

    /// The square root of a non-negative finite value rounded to `rscale`.
    pub(crate) fn sqrt_scale(&self, rscale: i32) -> Numeric {
        // sqrt(A / 10^s) * 10^(r+1) = sqrt(A * 10^(2r + 2 - s)); one extra
        // digit, then round it away (truncate-then-round on one digit is exact).
        let k = 2 * rscale + 2 - self.scale as i32;
        let scaled = if k >= 0 {
            mag::mul_pow10(&self.mag, k as u32)
        } else {
            mag::div_pow10(&self.mag, (-k) as u32)
        };
        let mut root = mag::isqrt(&scaled);
        let last = mag::div_small(&mut root, 10);
        if last >= 5 {
            root = mag::add(&root, &[1]);
        }
        Numeric::from_parts(false, root, rscale as u16)
    }

    /// About `log10(|self|)` of a finite non-zero value, from its leading
    /// digits and its length (exact enough for range tests).
    fn log10_abs_estimate(&self) -> f64 {
        let text = mag::to_decimal(&self.mag);
        let lead: f64 = text[..text.len().min(15)].parse().unwrap_or(1.0);
        lead.log10() + (text.len() as f64 - text.len().min(15) as f64) - self.scale as f64
    }

    /// `self ^ exp` as PostgreSQL 15's `power(numeric, numeric)`: an
    /// integral exponent is computed exactly and rounded to
    /// `max(16, scale of self)` decimals; other exponents go through `f64`
    /// (about 16 significant digits) with the result scale PostgreSQL picks.
    pub fn power(&self, exp: &Numeric) -> Result<Numeric> {
        if self.is_nan() || exp.is_nan() {
            // 1 ^ NaN and NaN ^ 0 are 1, as in PostgreSQL.
            if (self.is_finite() && self.cmp(&Numeric::from_i64(1)) == Ordering::Equal)
                || exp.is_zero()
            {
                return Ok(Numeric::from_i64(1));
            }
            return Ok(Numeric::nan());
        }
        let one = Numeric::from_i64(1);
        if self.is_zero() && exp.neg {
            return Err(err!(
                InvalidArgumentForPowerFunction,
                "zero raised to a negative power is undefined"
            ));
        }
        let integral = exp.is_finite() && exp.trunc_scale(0).cmp(exp) == Ordering::Equal;
        if self.neg && !integral && exp.is_finite() {
            return Err(err!(
                InvalidArgumentForPowerFunction,
                "a negative number raised to a non-integer power yields a complex result"
            ));
        }
        if !self.is_finite() || !exp.is_finite() {
            let f = self.to_f64().powf(exp.to_f64());
            return Ok(Numeric::from_float(f, 17));
        }
        if integral {
            if let Some(e) = exp.to_i64_round().filter(|e| e.unsigned_abs() <= 1_000_000) {
                let rscale = MIN_SIG_DIGITS.max(self.scale as i32).min(MAX_DISPLAY_SCALE);
                let mut base = Numeric::from_parts(false, self.mag.clone(), self.scale);
                let mut result = one.clone();
                let mut n = e.unsigned_abs();
                while n > 0 {
                    if n & 1 == 1 {
                        result = result.mul(&base);
                    }
                    n >>= 1;
                    if n > 0 {
                        base = base.mul(&base);
                    }
                    if mag::decimal_len(&result.mag) > 200_000
                        || mag::decimal_len(&base.mag) > 400_000
                    {
                        return Err(err!(
                            NumericValueOutOfRange,
                            "value overflows numeric format"
                        ));
                    }
                }
                let negative = self.neg && e % 2 != 0;
                let result = Numeric::from_parts(negative, result.mag, result.scale);
                return Ok(if e < 0 {
                    one.div_round(&result, rscale)
                } else {
                    result.round_scale(rscale)
                });
            }
        }
        if integral {
            if let Some(e) = exp.to_i64_round().filter(|e| i32::try_from(*e).is_ok()) {
                // PostgreSQL's power_var_int's crude range tests, which
                // decide these results before any multiplication.
                let rscale = MIN_SIG_DIGITS.max(self.scale as i32).min(MAX_DISPLAY_SCALE);
                let f = e as f64 * self.log10_abs_estimate();
                if f > 3.0 * 32767.0 * 4.0 {
                    return Err(err!(
                        NumericValueOutOfRange,
                        "value overflows numeric format"
                    ));
                }
                if f + 1.0 < -(rscale as f64) {
                    return Ok(Numeric::from_parts(false, Limbs::new(), rscale as u16));
                }
            }
        }
        if integral && self.neg {
            // A negative base with an integral exponent too large for the
            // exact loop: |x| ^ y, negated when y is odd.
            let odd = exp
                .trunc_scale(0)
                .mag
                .first()
                .is_some_and(|limb| limb % 2 == 1);
            let r = self.abs().power(exp)?;
            return Ok(if odd { r.neg() } else { r });
        }
        if self.is_zero() {
            // 0 ^ positive: zero, at the scale PostgreSQL gives it.
            let rscale = MIN_SIG_DIGITS.max(self.scale as i32).max(exp.scale as i32);
            return Ok(Numeric::from_parts(false, Limbs::new(), rscale as u16));
        }
        // Estimate the result's decimal weight exactly as PostgreSQL does:
        // exp * ln(base) at low precision (8 significant digits of ln),
        // because the estimate decides the result's display scale.
        let ln_dweight = self.estimate_ln_dweight();
        // No upper clamp: for a base within 1e-1000 of 1 the scale passes
        // the display maximum, as PostgreSQL 15 allows here.
        let local = (8 - ln_dweight).max(0);
        let ln_low = super::transcend::ln(self, local);
        let ln_num = ln_low.mul(exp).round_to(local);
        // PostgreSQL multiplies by this literal (not the exact LOG10_E).
        #[allow(clippy::approx_constant)]
        let val = ln_num.to_f64() * 0.434294481903252;
        if val.is_nan() || val.abs() > 2000.0 * 3.01 {
            // PostgreSQL's power_var: past the range a positive estimate
            // overflows and a negative one is zero at the display maximum.
            if val > 0.0 || val.is_nan() {
                return Err(err!(
                    NumericValueOutOfRange,
                    "value overflows numeric format"
                ));
            }
            return Ok(Numeric::from_parts(
                false,
                Limbs::new(),
                MAX_DISPLAY_SCALE as u16,
            ));
        }
        let weight = val as i32;
        let rscale = (MIN_SIG_DIGITS - weight)
            .max(self.scale as i32)
            .max(exp.scale as i32)
            .clamp(0, MAX_DISPLAY_SCALE);
        if val < -(rscale as f64) - 2.0 {
            // Underflows to zero at this scale.
            return Ok(Numeric::from_parts(false, Limbs::new(), rscale as u16));
        }
        // exp(y * ln(x)) at power_var's working scale.
        let sig_digits = (rscale + weight).max(0);
        let local = (sig_digits - ln_dweight + 8).max(0);
        let ln_x = super::transcend::ln(self, local);
        let v = ln_x.mul(exp).round_to(local);
        super::transcend::exp(&v, rscale)
            .ok_or_else(|| err!(NumericValueOutOfRange, "value overflows numeric format"))
    }
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 on this machine.
    use super::*;

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).unwrap()
    }

    #[test]
    fn scales_follow_postgres() {
        assert_eq!(n("1.5").add(&n("2.25")).to_string(), "3.75");
        assert_eq!(n("1.50").sub(&n("2")).to_string(), "-0.50");
        assert_eq!(n("1.5").mul(&n("2.25")).to_string(), "3.375");
        assert_eq!(
            n("10").div(&n("3")).unwrap().to_string(),
            "3.3333333333333333"
        );
        assert_eq!(
            n("1.0").div(&n("3")).unwrap().to_string(),
            "0.33333333333333333333"
        );
        assert_eq!(
            n("3").div(&n("2")).unwrap().to_string(),
            "1.5000000000000000"
        );
        assert_eq!(
            n("1").div(&n("7")).unwrap().to_string(),
            "0.14285714285714285714"
        );
        assert_eq!(
            n("123456789").div(&n("0.001")).unwrap().to_string(),
            "123456789000.00000000"
        );
        assert_eq!(
            n("2").div(&n("3")).unwrap().to_string(),
            "0.66666666666666666667"
        );
        assert_eq!(n("-7.5").rem(&n("2")).unwrap().to_string(), "-1.5");
        assert_eq!(n("2").sqrt().unwrap().to_string(), "1.414213562373095");
        assert_eq!(n("100").sqrt().unwrap().to_string(), "10.000000000000000");
        assert_eq!(
            n("1.5").power(&n("2")).unwrap().to_string(),
            "2.2500000000000000"
        );
        assert_eq!(
            n("2").power(&n("10")).unwrap().to_string(),
            "1024.0000000000000000"
        );
        assert_eq!(
            n("2").power(&n("-2")).unwrap().to_string(),
            "0.2500000000000000"
        );
        assert_eq!(
            n("1.1").power(&n("-3")).unwrap().to_string(),
            "0.7513148009015778"
        );
        assert_eq!(
            n("0.5").power(&n("100")).unwrap().to_string(),
            "0.0000000000000000"
        );
        assert_eq!(
            n("2").power(&n("0.5")).unwrap().to_string(),
            "1.4142135623730950"
        );
        assert_eq!(n("-2.5").ceil().to_string(), "-2");
        assert_eq!(n("-2.5").floor().to_string(), "-3");
        assert_eq!(n("7").div_trunc(&n("-2")).unwrap().to_string(), "-3");
    }

    #[test]
    fn special_values_and_errors() {
        assert!(n("Infinity").sub(&n("Infinity")).is_nan());
        assert_eq!(n("Infinity").mul(&n("-2")).to_string(), "-Infinity");
        assert!(n("Infinity").mul(&n("0")).is_nan());
        assert_eq!(n("5").div(&n("Infinity")).unwrap().to_string(), "0");
        assert_eq!(n("1").div(&n("0")).unwrap_err().message, "division by zero");
        assert_eq!(n("1").rem(&n("0")).unwrap_err().message, "division by zero");
        assert!(n("NaN").div(&n("0")).unwrap().is_nan());
    }
}
