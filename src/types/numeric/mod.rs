//! [`Numeric`]: PostgreSQL's arbitrary-precision decimal, with `NaN` and
//! `±Infinity`.
//!
//! A finite value is `sign * mag / 10^scale`: an unsigned big integer
//! ([`mag`], base 10^9 limbs) and a display scale, the number of digits
//! after the decimal point that PostgreSQL calls `dscale`. The scale is part
//! of the value as PostgreSQL keeps it: `1.50` prints with two decimals and
//! `1.50 = 1.5` is true. Invariants: `mag` has no zero top limb; zero is never
//! negative. Equality and hashing ignore the scale (see [`Numeric::cmp`] and
//! the `Hash` impl), so `1.0` and `1.00` group together.
//!
//! Text input accepts PostgreSQL's forms (`  -1.5e3 `, `.5`, `NaN`,
//! `Infinity`, `-inf`); output prints all `scale` decimals. Arithmetic with
//! PostgreSQL's result scales lives in [`arith`].
//!
//! Storage payload (little-endian): `u8 kind` (0 positive, 1 negative,
//! 2 NaN, 3 +Infinity, 4 -Infinity), `u16 scale`, then the limbs as `u32`s.

pub mod arith;
pub mod mag;
mod transcend;

use crate::err;
use crate::error::Result;
use mag::Limbs;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// Which kind of numeric value this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NumKind {
    /// An ordinary number.
    Finite,
    /// Not-a-number: equal to itself and greater than everything else.
    NaN,
    /// `Infinity`.
    PosInf,
    /// `-Infinity`.
    NegInf,
}

/// An arbitrary-precision decimal number as PostgreSQL's `numeric`.
#[derive(Debug, Clone)]
pub struct Numeric {
    /// Finite, NaN or an infinity.
    pub(crate) kind: NumKind,
    /// Sign of a finite value; never set for zero.
    pub(crate) neg: bool,
    /// Magnitude in base-10^9 limbs, least significant first (inline up
    /// to [`mag::INLINE_LIMBS`] limbs).
    pub(crate) mag: Limbs,
    /// Display scale: digits after the decimal point.
    pub(crate) scale: u16,
}

/// The largest display scale PostgreSQL produces (`NUMERIC_MAX_DISPLAY_SCALE`).
pub const MAX_DISPLAY_SCALE: i32 = 1000;

/// The largest display scale a stored numeric can have (`NUMERIC_DSCALE_MAX`).
pub const MAX_DSCALE: i32 = 0x3FFF;

/// The most decimal digits before the point (`(NUMERIC_WEIGHT_MAX + 1) * 4`).
pub const MAX_INT_DIGITS: i32 = 131072;

/// The lowest rounding position `round`/`trunc` honour (PostgreSQL clamps
/// there: every finite value rounds to zero).
const MIN_ROUND_SCALE: i32 = -MAX_INT_DIGITS - 1;

impl Numeric {
    /// Zero with scale 0.
    pub fn zero() -> Numeric {
        Numeric::from_parts(false, Limbs::new(), 0)
    }

    /// NaN.
    pub fn nan() -> Numeric {
        Numeric {
            kind: NumKind::NaN,
            neg: false,
            mag: Limbs::new(),
            scale: 0,
        }
    }

    /// `Infinity` or `-Infinity`.
    pub fn infinity(negative: bool) -> Numeric {
        let kind = if negative {
            NumKind::NegInf
        } else {
            NumKind::PosInf
        };
        Numeric {
            kind,
            neg: negative,
            mag: Limbs::new(),
            scale: 0,
        }
    }

    /// A finite value `(-1)^neg * mag / 10^scale`, normalizing zero's sign.
    pub(crate) fn from_parts(neg: bool, mut mag: Limbs, scale: u16) -> Numeric {
        mag::trim(&mut mag);
        let neg = neg && !mag.is_empty();
        Numeric {
            kind: NumKind::Finite,
            neg,
            mag,
            scale,
        }
    }

    /// The value's kind.
    pub fn kind(&self) -> NumKind {
        self.kind
    }

    /// Whether this is NaN.
    pub fn is_nan(&self) -> bool {
        self.kind == NumKind::NaN
    }

    /// Whether this is a finite value.
    pub fn is_finite(&self) -> bool {
        self.kind == NumKind::Finite
    }

    /// Whether this is a finite zero.
    pub fn is_zero(&self) -> bool {
        self.kind == NumKind::Finite && self.mag.is_empty()
    }

    /// Whether the value is below zero (including `-Infinity`).
    pub fn is_negative(&self) -> bool {
        self.neg
    }

    /// The display scale (digits after the decimal point).
    pub fn scale(&self) -> u16 {
        self.scale
    }

    /// An exact integer value.
    pub fn from_i64(v: i64) -> Numeric {
        Numeric::from_i128(v as i128)
    }

    /// An exact integer value.
    pub fn from_i128(v: i128) -> Numeric {
        Numeric::from_parts(v < 0, mag::from_u128(v.unsigned_abs()), 0)
    }

    /// The value rounded half away from zero to an integer, when it fits an
    /// `i128` (NaN and infinities give `None`).
    pub fn to_i128_round(&self) -> Option<i128> {
        if !self.is_finite() {
            return None;
        }
        if self.mag.len() <= 4 && self.scale <= 38 {
            // Below 10^36: round in u128 arithmetic, no rescaled copy.
            let v = mag::to_u128(&self.mag)?;
            let p = 10u128.pow(self.scale as u32);
            let (q, r) = (v / p, v % p);
            let q = q + (self.scale > 0 && r >= p - r) as u128;
            let q = q as i128;
            return Some(if self.neg { -q } else { q });
        }
        let r = self.round_scale(0);
        let m = mag::to_u128(&r.mag)?;
        if m > i128::MAX as u128 + r.neg as u128 {
            return None;
        }
        Some(if r.neg {
            (m as i128).wrapping_neg()
        } else {
            m as i128
        })
    }

    /// The value as an `i64` rounded half away from zero (numeric -> int8).
    pub fn to_i64_round(&self) -> Option<i64> {
        self.to_i128_round().and_then(|v| i64::try_from(v).ok())
    }

    /// The nearest `f64` (numeric -> float8), via its decimal text so the
    /// conversion is correctly rounded.
    pub fn to_f64(&self) -> f64 {
        match self.kind {
            NumKind::NaN => f64::NAN,
            NumKind::PosInf => f64::INFINITY,
            NumKind::NegInf => f64::NEG_INFINITY,
            NumKind::Finite => {
                let mut s = String::new();
                self.write_text(&mut s);
                s.parse::<f64>().unwrap_or(f64::NAN)
            }
        }
    }

    /// A float converted as PostgreSQL's `float8_numeric`: the value printed
    /// with `digits` significant digits (15 for float8, 6 for float4) and
    /// trailing zeros dropped.
    pub fn from_float(v: f64, digits: usize) -> Numeric {
        if v.is_nan() {
            return Numeric::nan();
        }
        if v.is_infinite() {
            return Numeric::infinity(v < 0.0);
        }
        // Like C's `%.{digits}g`: round to that many digits, drop trailing zeros.
        let text = format!("{:.*e}", digits - 1, v);
        Numeric::parse(&text)
            .expect("Rust's exponent format is valid numeric input")
            .normalized()
    }

    /// Parses PostgreSQL's numeric input syntax, e.g. `" -12.5e-3 "`.
    pub fn parse(text: &str) -> Result<Numeric> {
        let overflow = || err!(NumericValueOutOfRange, "value overflows numeric format");
        let bad = || {
            err!(
                InvalidTextRepresentation,
                "invalid input syntax for type numeric: \"{text}\""
            )
        };
        let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
        let (neg, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case("nan") && s.len() == 3 {
            return Ok(Numeric::nan());
        }
        if body.eq_ignore_ascii_case("infinity") || body.eq_ignore_ascii_case("inf") {
            return Ok(Numeric::infinity(neg));
        }
        let b = body.as_bytes();
        let mut digits: smallvec::SmallVec<[u8; 64]> = smallvec::SmallVec::new();
        let mut i = 0;
        let mut frac = 0i64;
        let mut seen_point = false;
        let mut any = false;
        while i < b.len() {
            match b[i] {
                c @ b'0'..=b'9' => {
                    digits.push(c);
                    any = true;
                    if seen_point {
                        frac += 1;
                    }
                }
                b'.' if !seen_point => seen_point = true,
                _ => break,
            }
            i += 1;
        }
        if !any {
            return Err(bad());
        }
        let mut exp = 0i64;
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            let mut eneg = false;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                eneg = b[i] == b'-';
                i += 1;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                exp = (exp * 10 + (b[i] - b'0') as i64).min(1_000_000_000);
                i += 1;
            }
            if i == start {
                return Err(bad());
            }
            if exp >= i32::MAX as i64 / 2 {
                return Err(overflow());
            }
            if eneg {
                exp = -exp;
            }
        }
        if i != b.len() {
            return Err(bad());
        }
        let scale = frac - exp;
        if scale > MAX_DSCALE as i64 {
            return Err(overflow());
        }
        // Digits before the point, counted from the first non-zero digit.
        let lead = digits.iter().position(|&c| c != b'0');
        if lead.is_some_and(|z| (digits.len() - z) as i64 - scale > MAX_INT_DIGITS as i64) {
            return Err(overflow());
        }
        if lead.is_none() {
            return Ok(Numeric::from_parts(
                false,
                Limbs::new(),
                scale.max(0) as u16,
            ));
        }
        let mut m = mag::from_decimal(&digits);
        if scale < 0 {
            m = mag::mul_pow10(&m, (-scale) as u32);
        }
        Ok(Numeric::from_parts(neg, m, scale.max(0) as u16))
    }

    /// Appends PostgreSQL's text form: all `scale` decimals, `NaN`,
    /// `Infinity`, `-Infinity`.
    pub fn write_text(&self, out: &mut String) {
        match self.kind {
            NumKind::NaN => return out.push_str("NaN"),
            NumKind::PosInf => return out.push_str("Infinity"),
            NumKind::NegInf => return out.push_str("-Infinity"),
            NumKind::Finite => {}
        }
        if self.neg {
            out.push('-');
        }
        let scale = self.scale as usize;
        let start = out.len();
        if scale == 0 || !self.mag.is_empty() {
            mag::write_decimal(&self.mag, out);
        }
        if scale == 0 {
            return;
        }
        // Digits written straight into `out`, then the point put in place.
        let len = out.len() - start;
        if len <= scale {
            const ZEROS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
            let mut pad = scale - len;
            while pad > 0 {
                let n = pad.min(ZEROS.len());
                out.insert_str(start, &ZEROS[..n]);
                pad -= n;
            }
            out.insert_str(start, "0.");
        } else {
            out.insert(out.len() - scale, '.');
        }
    }

    /// Rounds half away from zero to `scale` decimals (negative: to tens,
    /// hundreds, ...), as PostgreSQL's `round(numeric, int)`; the result's
    /// display scale is `max(scale, 0)`.
    pub fn round_scale(&self, scale: i32) -> Numeric {
        self.rescale(scale.clamp(MIN_ROUND_SCALE, MAX_DSCALE), true)
    }

    /// Truncates toward zero to `scale` decimals, as `trunc(numeric, int)`.
    pub fn trunc_scale(&self, scale: i32) -> Numeric {
        self.rescale(scale.clamp(MIN_ROUND_SCALE, MAX_DSCALE), false)
    }

    /// Rounds half away from zero to `scale` decimals without SQL's limits
    /// on `scale` (working precision of the transcendental functions).
    pub(crate) fn round_to(&self, scale: i32) -> Numeric {
        self.rescale(scale.min(u16::MAX as i32), true)
    }

    fn rescale(&self, scale: i32, round: bool) -> Numeric {
        if !self.is_finite() {
            return self.clone();
        }
        let cur = self.scale as i32;
        if scale < cur && self.mag.is_empty() {
            return Numeric::from_parts(false, Limbs::new(), scale.max(0) as u16);
        }
        if scale < 0 && -scale > mag::decimal_len(&self.mag) as i32 - cur + 1 {
            // Every digit lies below the rounding position, with room for
            // the half-way check: the result is zero.
            return Numeric::from_parts(false, Limbs::new(), 0);
        }
        if scale >= cur {
            let m = mag::mul_pow10(&self.mag, (scale - cur) as u32);
            return Numeric::from_parts(self.neg, m, scale as u16);
        }
        // Drop (cur - scale) decimal digits: whole limbs, then a part of one,
        // in linear time; round up when the dropped part is at least half.
        let drop = (cur - scale) as usize;
        let (limbs, digits) = (drop / 9, drop % 9);
        let mut q: Limbs = self
            .mag
            .get(limbs..)
            .map_or_else(Limbs::new, Limbs::from_slice);
        let up = if digits > 0 {
            let r = mag::div_small(&mut q, mag::POW10[digits]);
            r >= 5 * mag::POW10[digits - 1]
        } else {
            limbs > 0 && self.mag.get(limbs - 1).is_some_and(|&l| l >= 500_000_000)
        };
        if round && up {
            mag::add_assign(&mut q, &[1]);
        }
        if scale < 0 {
            q = mag::mul_pow10(&q, (-scale) as u32);
        }
        Numeric::from_parts(self.neg, q, scale.max(0) as u16)
    }

    /// Coerces to a `numeric(precision, scale)` column as PostgreSQL's
    /// `apply_typmod`: round to `scale`, then fail with `numeric field
    /// overflow` when the integer part has more than `precision - scale` digits.
    pub fn apply_typmod(&self, precision: u16, scale: i16) -> Result<Numeric> {
        if !self.is_finite() {
            if self.is_nan() {
                return Ok(self.clone());
            }
            return Err(
                err!(NumericValueOutOfRange, "numeric field overflow").with_detail(format!(
                "A field with precision {precision}, scale {scale} cannot hold an infinite value."
            )),
            );
        }
        let r = self.round_scale(scale as i32);
        let int_digits = mag::decimal_len(&r.mag) as i32 - r.scale as i32;
        let max_int = precision as i32 - scale as i32;
        if !r.mag.is_empty() && int_digits > max_int {
            // PostgreSQL displays 10^0 as 1.
            let bound = if max_int != 0 {
                format!("10^{max_int}")
            } else {
                "1".to_string()
            };
            let detail = format!(
                "A field with precision {precision}, scale {scale} must round to an absolute value less than {bound}."
            );
            return Err(err!(NumericValueOutOfRange, "numeric field overflow").with_detail(detail));
        }
        Ok(r)
    }

    /// Compares absolute values of two finite numbers.
    pub(crate) fn cmp_abs(&self, other: &Numeric) -> Ordering {
        if self.scale != other.scale && !self.mag.is_empty() && !other.mag.is_empty() {
            // Digits before the point decide unless they are as many.
            let int_digits = |n: &Numeric| mag::decimal_len(&n.mag) as i32 - n.scale as i32;
            match int_digits(self).cmp(&int_digits(other)) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        match self.scale.cmp(&other.scale) {
            Ordering::Equal => mag::cmp(&self.mag, &other.mag),
            Ordering::Less => {
                let a = mag::mul_pow10(&self.mag, (other.scale - self.scale) as u32);
                mag::cmp(&a, &other.mag)
            }
            Ordering::Greater => {
                let b = mag::mul_pow10(&other.mag, (self.scale - other.scale) as u32);
                mag::cmp(&self.mag, &b)
            }
        }
    }

    /// The value with trailing fractional zeros removed (`1.500` -> `1.5`),
    /// the canonical form hashing uses.
    pub fn normalized(&self) -> Numeric {
        if self.mag.is_empty() {
            return Numeric {
                kind: self.kind,
                neg: self.neg,
                mag: Limbs::new(),
                scale: 0,
            };
        }
        let drop = mag::trailing_zeros(&self.mag).min(self.scale as u32);
        Numeric {
            kind: self.kind,
            neg: self.neg,
            mag: mag::div_pow10(&self.mag, drop),
            scale: self.scale - drop as u16,
        }
    }

    /// Appends the storage payload (see the module doc).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let kind = match self.kind {
            NumKind::Finite => self.neg as u8,
            NumKind::NaN => 2,
            NumKind::PosInf => 3,
            NumKind::NegInf => 4,
        };
        out.push(kind);
        out.extend_from_slice(&self.scale.to_le_bytes());
        for limb in &self.mag {
            out.extend_from_slice(&limb.to_le_bytes());
        }
    }

    /// Length of [`Numeric::encode`]'s payload.
    pub fn encoded_len(&self) -> usize {
        3 + 4 * self.mag.len()
    }

    /// Reads a storage payload written by [`Numeric::encode`]; `None` when
    /// the bytes are not one.
    pub fn decode(bytes: &[u8]) -> Option<Numeric> {
        if bytes.len() < 3 || (bytes.len() - 3) % 4 != 0 {
            return None;
        }
        let scale = u16::from_le_bytes([bytes[1], bytes[2]]);
        let words = bytes[3..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let n = (bytes.len() - 3) / 4;
        let limbs = if n <= mag::INLINE_LIMBS {
            // Straight into the inline buffer, no capacity check per limb.
            let mut buf = [0u32; mag::INLINE_LIMBS];
            for (slot, w) in buf.iter_mut().zip(words) {
                *slot = w;
            }
            Limbs::from_buf_and_len(buf, n)
        } else {
            words.collect()
        };
        Some(match bytes[0] {
            0 | 1 => Numeric::from_parts(bytes[0] == 1, limbs, scale),
            2 => Numeric::nan(),
            3 => Numeric::infinity(false),
            4 => Numeric::infinity(true),
            _ => return None,
        })
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Numeric) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Numeric) -> Option<Ordering> {
        Some(Ord::cmp(self, other))
    }
}

impl Ord for Numeric {
    /// Total order as PostgreSQL's `cmp_numerics`: NaN above everything
    /// (equal to itself), then +Infinity; scale does not matter.
    fn cmp(&self, other: &Numeric) -> Ordering {
        fn rank(n: &Numeric) -> i8 {
            match n.kind {
                NumKind::NegInf => -2,
                NumKind::Finite if n.neg => -1,
                NumKind::Finite if n.mag.is_empty() => 0,
                NumKind::Finite => 1,
                NumKind::PosInf => 2,
                NumKind::NaN => 3,
            }
        }
        let (ra, rb) = (rank(self), rank(other));
        if ra != rb || !(ra == 1 || ra == -1) {
            return ra.cmp(&rb);
        }
        let mags = self.cmp_abs(other);
        if self.neg {
            mags.reverse()
        } else {
            mags
        }
    }
}

impl Hash for Numeric {
    /// Hashes the value, not its scale, so that equal numbers (`1.0`,
    /// `1.00`, `10` and `1e1`) hash alike: the limbs of the magnitude with
    /// its trailing decimal zeros divided out, plus the power of ten they
    /// are scaled by. Allocates nothing up to 54 digits (GROUP BY and hash
    /// joins hash every row).
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind.hash(state);
        if self.kind != NumKind::Finite || self.mag.is_empty() {
            return;
        }
        self.neg.hash(state);
        let tz = mag::trailing_zeros(&self.mag);
        (tz as i64 - self.scale as i64).hash(state);
        let significand = mag::div_pow10(&self.mag, tz);
        for &limb in &significand {
            state.write_u32(limb);
        }
        state.write_usize(significand.len());
    }
}

impl std::fmt::Display for Numeric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        self.write_text(&mut s);
        f.write_str(&s)
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
    fn text_round_trips_as_postgres_prints() {
        let cases = [
            ("1.50", "1.50"),
            ("  -12.345e-3 ", "-0.012345"),
            ("1e5", "100000"),
            ("1.5e-3", "0.0015"),
            ("0.000", "0.000"),
            ("-0.0", "0.0"),
            (".5", "0.5"),
            ("5.", "5"),
            ("NaN", "NaN"),
            ("-inf", "-Infinity"),
            ("Infinity", "Infinity"),
            (
                "123456789012345678901234567890.123456789",
                "123456789012345678901234567890.123456789",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(n(input).to_string(), want, "{input}");
        }
        for bad in ["abc", "", "1e", "1.2.3", "- 1", "1 2"] {
            let e = Numeric::parse(bad).unwrap_err();
            assert_eq!(
                e.message,
                format!("invalid input syntax for type numeric: \"{bad}\"")
            );
        }
    }

    #[test]
    fn order_ignores_scale_and_puts_nan_last() {
        assert_eq!(n("1.0"), n("1.00"));
        assert!(n("-2") < n("-1.5"));
        assert!(n("1e10") < n("Infinity"));
        assert!(n("Infinity") < n("NaN"));
        assert!(n("-Infinity") < n("-1e100"));
        assert_eq!(n("NaN"), n("NaN"));
        use std::collections::hash_map::DefaultHasher;
        let h = |x: &Numeric| {
            let mut s = DefaultHasher::new();
            x.hash(&mut s);
            s.finish()
        };
        assert_eq!(h(&n("1.0")), h(&n("1.000")));
        assert_eq!(h(&n("0")), h(&n("0.00")));
        assert_eq!(h(&n("10")), h(&n("1e1")));
        assert_eq!(
            h(&n("1234567890123456789012.5000")),
            h(&n("1234567890123456789012.5"))
        );
        assert_ne!(h(&n("1")), h(&n("10")));
        assert_ne!(h(&n("1")), h(&n("-1")));
        assert_ne!(h(&n("12")), h(&n("1.2")));
        assert_ne!(h(&n("1000000000")), h(&n("1")));
    }

    #[test]
    fn rounding_and_typmod() {
        assert_eq!(n("2.5").round_scale(0).to_string(), "3");
        assert_eq!(n("-2.5").round_scale(0).to_string(), "-3");
        assert_eq!(n("1234.5678").round_scale(2).to_string(), "1234.57");
        assert_eq!(n("1234.5678").round_scale(-2).to_string(), "1200");
        assert_eq!(n("1234.5678").trunc_scale(1).to_string(), "1234.5");
        assert_eq!(
            n("123.456").apply_typmod(5, 2).unwrap().to_string(),
            "123.46"
        );
        let e = n("1234.5").apply_typmod(5, 2).unwrap_err();
        assert_eq!(e.message, "numeric field overflow");
        assert_eq!(
            e.detail.as_deref(),
            Some(
                "A field with precision 5, scale 2 must round to an absolute value less than 10^3."
            )
        );
        assert_eq!(n("-12.5").to_i64_round(), Some(-13));
        assert_eq!(Numeric::from_float(0.1, 15).to_string(), "0.1");
        assert_eq!(
            Numeric::from_float(1.0 / 3.0, 15).to_string(),
            "0.333333333333333"
        );
        assert_eq!(
            Numeric::from_float(1e20, 15).to_string(),
            "100000000000000000000"
        );
        assert_eq!(n("0.1").to_f64(), 0.1);
    }

    #[test]
    fn storage_round_trips() {
        for s in ["0", "-1.25", "NaN", "-Infinity", "98765432109876543210.5"] {
            let v = n(s);
            let mut buf = Vec::new();
            v.encode(&mut buf);
            assert_eq!(buf.len(), v.encoded_len());
            assert_eq!(Numeric::decode(&buf).unwrap().to_string(), v.to_string());
        }
    }
}
