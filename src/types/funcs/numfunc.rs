//! Number functions and operators beyond plain arithmetic: `gcd`, `lcm`,
//! `width_bucket`, `cbrt`, the degree-based trigonometric functions, the
//! integer bit operators (`<< >> & | # ~`), the prefix operators `@`
//! (absolute value), `|/` (square root) and `||/` (cube root), and the
//! number forms of `to_char` and `to_number` (see [`numfmt`]).
//!
//! The operators are evaluated as functions: the binder turns `a << b`
//! into a call of [`NumFunc::ShiftLeft`], and a failed resolution reports
//! PostgreSQL's `operator does not exist: text << integer` rather than a
//! missing function. Results and errors follow PostgreSQL 15's `int.c`,
//! `int8.c`, `float.c` and `numeric.c`: `gcd`/`lcm` of integers fail with
//! `integer out of range` (22003) when the answer does not fit,
//! `width_bucket` checks its count and bounds in PostgreSQL's order
//! (2201G).

use super::numfmt;
use super::{Resolved, ScalarFunc};
use crate::err;
use crate::error::{Error, Result};
use crate::types::datatype::DataType;
use crate::types::int::{int4_out_of_range, int8_out_of_range};
use crate::types::numeric::{mag, Numeric, MAX_INT_DIGITS};
use crate::types::value::Value;

/// A number function or operator (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NumFunc {
    /// `gcd(a, b)` of integers or numerics.
    Gcd,
    /// `lcm(a, b)` of integers or numerics.
    Lcm,
    /// `width_bucket(operand, low, high, count)` of float8 or numeric.
    WidthBucket,
    /// `cbrt(float8)`, also the prefix operator `||/`.
    Cbrt,
    /// A trigonometric function of float8 in degrees or radians.
    Trig(Trig),
    /// `degrees(float8)`.
    Degrees,
    /// `radians(float8)`.
    Radians,
    /// `a << b`: shift left (the count is an integer).
    ShiftLeft,
    /// `a >> b`: arithmetic shift right.
    ShiftRight,
    /// `a & b`.
    BitAnd,
    /// `a | b`.
    BitOr,
    /// `a # b`: exclusive or.
    BitXor,
    /// `~a`.
    BitNot,
    /// `@a`: absolute value.
    AbsOp,
    /// `|/a`: square root of float8.
    SqrtOp,
    /// `to_char(number, format)`.
    ToChar,
    /// `to_number(text, format)`.
    ToNumber,
    /// `numeric_inc(numeric)`: the value plus one.
    NumericInc,
}

/// The trigonometric functions PostgreSQL's `float.c` defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trig {
    /// `sin`
    Sin,
    /// `cos`
    Cos,
    /// `tan`
    Tan,
    /// `cot`
    Cot,
    /// `asin`
    Asin,
    /// `acos`
    Acos,
    /// `atan`
    Atan,
    /// `atan2(y, x)`
    Atan2,
    /// `sind`
    Sind,
    /// `cosd`
    Cosd,
    /// `tand`
    Tand,
    /// `cotd`
    Cotd,
    /// `asind`
    Asind,
    /// `acosd`
    Acosd,
    /// `atand`
    Atand,
    /// `atan2d(y, x)`
    Atan2d,
}

const TRIG_NAMES: [(&str, Trig); 16] = [
    ("sin", Trig::Sin),
    ("cos", Trig::Cos),
    ("tan", Trig::Tan),
    ("cot", Trig::Cot),
    ("asin", Trig::Asin),
    ("acos", Trig::Acos),
    ("atan", Trig::Atan),
    ("atan2", Trig::Atan2),
    ("sind", Trig::Sind),
    ("cosd", Trig::Cosd),
    ("tand", Trig::Tand),
    ("cotd", Trig::Cotd),
    ("asind", Trig::Asind),
    ("acosd", Trig::Acosd),
    ("atand", Trig::Atand),
    ("atan2d", Trig::Atan2d),
];

impl NumFunc {
    /// Looks a function up by its lower-case SQL name.
    pub fn from_name(name: &str) -> Option<NumFunc> {
        use NumFunc::*;
        Some(match name {
            "gcd" => Gcd,
            "lcm" => Lcm,
            "width_bucket" => WidthBucket,
            "cbrt" => Cbrt,
            "degrees" => Degrees,
            "radians" => Radians,
            "to_char" => ToChar,
            "to_number" => ToNumber,
            "numeric_inc" => NumericInc,
            _ => return TRIG_NAMES.iter().find(|t| t.0 == name).map(|t| Trig(t.1)),
        })
    }

    /// The SQL name (the operator's symbol for an operator).
    pub fn name(self) -> &'static str {
        use NumFunc::*;
        match self {
            Gcd => "gcd",
            Lcm => "lcm",
            WidthBucket => "width_bucket",
            Cbrt => "cbrt",
            Degrees => "degrees",
            Radians => "radians",
            Trig(t) => TRIG_NAMES.iter().find(|n| n.1 == t).map_or("sin", |n| n.0),
            ShiftLeft => "<<",
            ShiftRight => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "#",
            BitNot => "~",
            AbsOp => "@",
            SqrtOp => "|/",
            ToChar => "to_char",
            ToNumber => "to_number",
            NumericInc => "numeric_inc",
        }
    }

    /// Whether this is an operator (errors name it as one).
    fn is_operator(self) -> bool {
        use NumFunc::*;
        matches!(
            self,
            ShiftLeft | ShiftRight | BitAnd | BitOr | BitXor | BitNot | AbsOp | SqrtOp
        )
    }

    /// Argument and result types, as PostgreSQL's catalog has them.
    pub fn resolve(self, args: &[DataType]) -> Result<Resolved> {
        use DataType::*;
        use NumFunc::*;
        let is_int = |t: &DataType| matches!(t, Int2 | Int4 | Int8 | Unknown);
        let is_num = |t: &DataType| t.is_numeric() || *t == Unknown;
        let is_exact = |t: &DataType| is_num(t) && !matches!(t, Float4 | Float8);
        let ok = |arg_types: Vec<DataType>, result: DataType| {
            Ok(Resolved {
                func: ScalarFunc::Num(self),
                arg_types,
                result,
            })
        };
        // The widest integer type of the arguments (int4 for literals).
        let int_type = |ts: &[&DataType]| {
            if ts.iter().any(|t| **t == Int8) {
                Int8
            } else if ts.iter().all(|t| **t == Int2) {
                Int2
            } else {
                Int4
            }
        };
        match (self, args) {
            (Gcd | Lcm, [a, b]) if is_int(a) && is_int(b) && !(*a == Unknown && *b == Unknown) => {
                let t = int_type(&[a, b]);
                let t = if t == Int2 { Int4 } else { t };
                ok(vec![t, t], t)
            }
            (Gcd | Lcm, [a, b]) if is_exact(a) && is_exact(b) => {
                ok(vec![Numeric(None), Numeric(None)], Numeric(None))
            }
            (WidthBucket, [x, lo, hi, n]) if is_int(n) && [x, lo, hi].iter().all(|t| is_num(t)) => {
                let t = if [x, lo, hi].iter().any(|t| matches!(t, Float4 | Float8)) {
                    Float8
                } else {
                    Numeric(None)
                };
                ok(vec![t, t, t, Int4], Int4)
            }
            (Cbrt | Degrees | Radians | SqrtOp, [t]) if is_num(t) => ok(vec![Float8], Float8),
            (Trig(self::Trig::Atan2 | self::Trig::Atan2d), [a, b]) if is_num(a) && is_num(b) => {
                ok(vec![Float8, Float8], Float8)
            }
            (Trig(t), [a]) if is_num(a) && !matches!(t, self::Trig::Atan2 | self::Trig::Atan2d) => {
                ok(vec![Float8], Float8)
            }
            (ShiftLeft | ShiftRight, [a, b]) if is_int(a) && *a != Unknown && is_int(b) => {
                ok(vec![*a, Int4], *a)
            }
            (BitAnd | BitOr | BitXor, [a, b])
                if is_int(a) && is_int(b) && !(*a == Unknown && *b == Unknown) =>
            {
                let t = int_type(&[a, b]);
                ok(vec![t, t], t)
            }
            (BitNot, [a]) if is_int(a) && *a != Unknown => ok(vec![*a], *a),
            (AbsOp, [a]) if a.is_numeric() => {
                let t = a.without_typmod();
                ok(vec![t], t)
            }
            (ToChar, [v, f]) if v.is_numeric() && (f.is_string() || *f == Unknown) => {
                let t = v.without_typmod();
                ok(vec![t, Text], Text)
            }
            (NumericInc, [t]) if is_exact(t) => ok(vec![Numeric(None)], Numeric(None)),
            (ToNumber, [s, f])
                if (s.is_string() || *s == Unknown) && (f.is_string() || *f == Unknown) =>
            {
                ok(vec![Text, Text], Numeric(None))
            }
            _ => Err(self.no_match(args)),
        }
    }

    /// `operator does not exist: ...` or `function ... does not exist`.
    fn no_match(self, args: &[DataType]) -> Error {
        if !self.is_operator() {
            return super::no_function(self.name(), args);
        }
        match args {
            [a] => err!(
                UndefinedFunction,
                "operator does not exist: {} {a}",
                self.name()
            )
            .with_hint(
                "No operator matches the given name and argument type. You might need to add an explicit type cast.",
            ),
            [a, b] => err!(
                UndefinedFunction,
                "operator does not exist: {a} {} {b}",
                self.name()
            )
            .with_hint(
                "No operator matches the given name and argument types. You might need to add explicit type casts.",
            ),
            _ => super::no_function(self.name(), args),
        }
    }

    /// Evaluates on non-NULL arguments of the resolved types.
    pub fn eval(self, args: &[Value]) -> Result<Value> {
        use NumFunc::*;
        use Value as V;
        let bad = || {
            err!(
                DatatypeMismatch,
                "function {} called with arguments of unexpected types",
                self.name()
            )
        };
        Ok(match (self, args) {
            (Gcd, [V::Int4(a), V::Int4(b)]) => V::Int4(fit_i32(gcd_u128(*a as i128, *b as i128))?),
            (Gcd, [V::Int8(a), V::Int8(b)]) => V::Int8(fit_i64(gcd_u128(*a as i128, *b as i128))?),
            (Lcm, [V::Int4(a), V::Int4(b)]) => V::Int4(fit_i32(lcm_u128(*a as i128, *b as i128))?),
            (Lcm, [V::Int8(a), V::Int8(b)]) => V::Int8(fit_i64(lcm_u128(*a as i128, *b as i128))?),
            (Gcd, [V::Numeric(a), V::Numeric(b)]) => V::numeric(numeric_gcd(a, b)),
            (Lcm, [V::Numeric(a), V::Numeric(b)]) => V::numeric(numeric_lcm(a, b)?),
            (WidthBucket, [V::Float8(x), V::Float8(lo), V::Float8(hi), V::Int4(n)]) => {
                V::Int4(width_bucket_f64(*x, *lo, *hi, *n)?)
            }
            (WidthBucket, [V::Numeric(x), V::Numeric(lo), V::Numeric(hi), V::Int4(n)]) => {
                V::Int4(width_bucket_numeric(x, lo, hi, *n)?)
            }
            (Cbrt, [V::Float8(x)]) => V::Float8(cbrt(*x)),
            (SqrtOp, [V::Float8(x)]) => {
                if *x < 0.0 {
                    return Err(err!(
                        InvalidArgumentForPowerFunction,
                        "cannot take square root of a negative number"
                    ));
                }
                V::Float8(x.sqrt())
            }
            (Degrees, [V::Float8(x)]) => V::Float8(check_f64(x / RADIANS_PER_DEGREE, x)?),
            (Radians, [V::Float8(x)]) => V::Float8(check_f64(x * RADIANS_PER_DEGREE, x)?),
            (Trig(t), [V::Float8(x)]) => V::Float8(super::trig::eval(t, *x)?),
            (Trig(t), [V::Float8(y), V::Float8(x)]) => V::Float8(super::trig::eval2(t, *y, *x)),
            (AbsOp, [v]) => return ScalarFunc::Abs.eval(std::slice::from_ref(v)),
            (ShiftLeft | ShiftRight | BitAnd | BitOr | BitXor | BitNot, _) => bits(self, args)?,
            (ToChar, [v, V::Text(f)]) => V::text(&numfmt::to_char(v, f)?),
            (NumericInc, [V::Numeric(n)]) => V::numeric(n.add(&Numeric::from_i64(1))),
            (ToNumber, [V::Text(s), V::Text(f)]) => V::numeric(numfmt::to_number(s, f)?),
            _ => return Err(bad()),
        })
    }
}

/// Cube root as the GNU C library computes it (which PostgreSQL's `dcbrt`
/// calls): a polynomial first guess on the mantissa, one rational
/// refinement, the exponent divided by three. It is not always correctly
/// rounded (`cbrt(27)` is `3.0000000000000004`), so Rust's own `f64::cbrt`
/// would print other digits than PostgreSQL.
fn cbrt(x: f64) -> f64 {
    const CBRT2: f64 = 1.259_921_049_894_873_2;
    const SQR_CBRT2: f64 = 1.587_401_051_968_199_6;
    const FACTOR: [f64; 5] = [1.0 / SQR_CBRT2, 1.0 / CBRT2, 1.0, CBRT2, SQR_CBRT2];
    if x == 0.0 || !x.is_finite() {
        return x + x;
    }
    let (xm, xe) = frexp(x.abs());
    let u = 0.354_895_765_043_919_84
        + ((1.508_191_937_815_849
            + ((-2.114_994_941_673_713
                + ((2.446_931_225_635_344_4
                    + ((-1.834_692_774_836_130_8
                        + (0.784_932_344_976_639_2 - 0.145_263_899_385_486_37 * xm) * xm)
                        * xm))
                    * xm))
                * xm))
            * xm);
    let t2 = u * u * u;
    let ym = u * (t2 + 2.0 * xm) / (2.0 * t2 + xm) * FACTOR[(2 + xe % 3) as usize];
    let r = ldexp(ym, xe / 3);
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// `x = m * 2^e` with `m` in [0.5, 1), for finite non-zero `x`.
fn frexp(x: f64) -> (f64, i32) {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: scale into the normal range first.
        let (m, e) = frexp(x * 2f64.powi(64));
        return (m, e - 64);
    }
    let m = f64::from_bits((bits & !(0x7ff_u64 << 52)) | (1022_u64 << 52));
    (m, exp - 1022)
}

/// `x * 2^e`, in steps that never overflow an intermediate power.
fn ldexp(x: f64, mut e: i32) -> f64 {
    let mut r = x;
    while e > 1000 {
        r *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        r *= 2f64.powi(-1000);
        e += 1000;
    }
    r * 2f64.powi(e)
}

/// pi / 180.
const RADIANS_PER_DEGREE: f64 = 0.017_453_292_519_943_295;

/// Overflow check of a float result from a finite input.
fn check_f64(r: f64, x: &f64) -> Result<f64> {
    crate::types::float::check(r, x.is_infinite(), true)
}

/// The integer bit operators; a shift count is taken modulo the width, as
/// the machines PostgreSQL runs on do.
fn bits(f: NumFunc, args: &[Value]) -> Result<Value> {
    use NumFunc::*;
    use Value as V;
    Ok(match (f, args) {
        (ShiftLeft, [V::Int2(a), V::Int4(b)]) => {
            V::Int2(((*a as i32).wrapping_shl(*b as u32)) as i16)
        }
        (ShiftRight, [V::Int2(a), V::Int4(b)]) => {
            V::Int2(((*a as i32).wrapping_shr(*b as u32)) as i16)
        }
        (ShiftLeft, [V::Int4(a), V::Int4(b)]) => V::Int4(a.wrapping_shl(*b as u32)),
        (ShiftRight, [V::Int4(a), V::Int4(b)]) => V::Int4(a.wrapping_shr(*b as u32)),
        (ShiftLeft, [V::Int8(a), V::Int4(b)]) => V::Int8(a.wrapping_shl(*b as u32)),
        (ShiftRight, [V::Int8(a), V::Int4(b)]) => V::Int8(a.wrapping_shr(*b as u32)),
        (BitAnd, [V::Int2(a), V::Int2(b)]) => V::Int2(a & b),
        (BitAnd, [V::Int4(a), V::Int4(b)]) => V::Int4(a & b),
        (BitAnd, [V::Int8(a), V::Int8(b)]) => V::Int8(a & b),
        (BitOr, [V::Int2(a), V::Int2(b)]) => V::Int2(a | b),
        (BitOr, [V::Int4(a), V::Int4(b)]) => V::Int4(a | b),
        (BitOr, [V::Int8(a), V::Int8(b)]) => V::Int8(a | b),
        (BitXor, [V::Int2(a), V::Int2(b)]) => V::Int2(a ^ b),
        (BitXor, [V::Int4(a), V::Int4(b)]) => V::Int4(a ^ b),
        (BitXor, [V::Int8(a), V::Int8(b)]) => V::Int8(a ^ b),
        (BitNot, [V::Int2(a)]) => V::Int2(!a),
        (BitNot, [V::Int4(a)]) => V::Int4(!a),
        (BitNot, [V::Int8(a)]) => V::Int8(!a),
        _ => {
            return Err(err!(
                DatatypeMismatch,
                "operator {} called with arguments of unexpected types",
                f.name()
            ))
        }
    })
}

/// The greatest common divisor of two integers (non-negative).
fn gcd_u128(a: i128, b: i128) -> u128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The least common multiple (zero when either is zero).
fn lcm_u128(a: i128, b: i128) -> u128 {
    if a == 0 || b == 0 {
        return 0;
    }
    (a.unsigned_abs() / gcd_u128(a, b)) * b.unsigned_abs()
}

fn fit_i32(v: u128) -> Result<i32> {
    i32::try_from(v).map_err(|_| int4_out_of_range())
}

fn fit_i64(v: u128) -> Result<i64> {
    i64::try_from(v).map_err(|_| int8_out_of_range())
}

/// `gcd(numeric, numeric)`: Euclid's algorithm on exact decimals; NaN or
/// an infinity gives NaN; the result's scale is the larger input scale.
fn numeric_gcd(a: &Numeric, b: &Numeric) -> Numeric {
    if !a.is_finite() || !b.is_finite() {
        return Numeric::nan();
    }
    let scale = a.scale().max(b.scale());
    let (mut x, mut y) = (a.abs(), b.abs());
    while !y.is_zero() {
        // y is non-zero and finite, so the remainder exists.
        let r = match x.rem(&y) {
            Ok(r) => r,
            Err(_) => break,
        };
        x = y;
        y = r;
    }
    with_scale(x, scale)
}

/// `lcm(numeric, numeric)`: `|a| / gcd * |b|`, zero when either is zero.
fn numeric_lcm(a: &Numeric, b: &Numeric) -> Result<Numeric> {
    if !a.is_finite() || !b.is_finite() {
        return Ok(Numeric::nan());
    }
    let scale = a.scale().max(b.scale());
    if a.is_zero() || b.is_zero() {
        return Ok(with_scale(Numeric::zero(), scale));
    }
    let g = numeric_gcd(a, b);
    let r = a.abs().div_trunc(&g)?.mul(&b.abs());
    if integer_digits(&r) > MAX_INT_DIGITS {
        return Err(err!(
            NumericValueOutOfRange,
            "value overflows numeric format"
        ));
    }
    Ok(with_scale(r, scale))
}

/// Fails with `value overflows numeric format` when a finite value has
/// more integer digits than a numeric can hold.
pub(super) fn check_numeric_range(n: Numeric) -> Result<Numeric> {
    if n.is_finite() && !n.is_zero() && integer_digits(&n) > MAX_INT_DIGITS {
        return Err(err!(
            NumericValueOutOfRange,
            "value overflows numeric format"
        ));
    }
    Ok(n)
}

/// Digits before the decimal point of a finite value.
fn integer_digits(n: &Numeric) -> i32 {
    mag::decimal_len(&n.mag) as i32 - n.scale() as i32
}

/// `n` shown with `scale` decimals (never fewer than it has).
fn with_scale(n: Numeric, scale: u16) -> Numeric {
    if n.scale() >= scale {
        n
    } else {
        n.round_scale(scale as i32)
    }
}

fn bucket_error(msg: &str) -> Error {
    err!(InvalidArgumentForWidthBucketFunction, "{msg}")
}

/// `width_bucket(float8, float8, float8, int)` as PostgreSQL 15's
/// `width_bucket_float8`.
fn width_bucket_f64(x: f64, lo: f64, hi: f64, count: i32) -> Result<i32> {
    if count <= 0 {
        return Err(bucket_error("count must be greater than zero"));
    }
    if x.is_nan() || lo.is_nan() || hi.is_nan() {
        return Err(bucket_error(
            "operand, lower bound, and upper bound cannot be NaN",
        ));
    }
    if lo.is_infinite() || hi.is_infinite() {
        return Err(bucket_error("lower and upper bounds must be finite"));
    }
    let n = count as f64;
    let inside = |num: f64, den: f64, half_num: f64, half_den: f64| {
        let q = if (den).is_infinite() {
            n * (half_num / half_den)
        } else {
            n * (num / den)
        };
        let r = q as i32;
        r.min(count - 1) + 1
    };
    if lo < hi {
        if x < lo {
            Ok(0)
        } else if x >= hi {
            count.checked_add(1).ok_or_else(int4_out_of_range)
        } else {
            Ok(inside(
                x - lo,
                hi - lo,
                x / 2.0 - lo / 2.0,
                hi / 2.0 - lo / 2.0,
            ))
        }
    } else if lo > hi {
        if x > lo {
            Ok(0)
        } else if x <= hi {
            count.checked_add(1).ok_or_else(int4_out_of_range)
        } else {
            Ok(inside(
                lo - x,
                lo - hi,
                lo / 2.0 - x / 2.0,
                lo / 2.0 - hi / 2.0,
            ))
        }
    } else {
        Err(bucket_error("lower bound cannot equal upper bound"))
    }
}

/// `width_bucket(numeric, numeric, numeric, int)` as PostgreSQL's
/// `width_bucket_numeric`: exact, `count * (x - lo) / (hi - lo)`
/// truncated, plus one.
fn width_bucket_numeric(x: &Numeric, lo: &Numeric, hi: &Numeric, count: i32) -> Result<i32> {
    if count <= 0 {
        return Err(bucket_error("count must be greater than zero"));
    }
    if x.is_nan() || lo.is_nan() || hi.is_nan() {
        return Err(bucket_error(
            "operand, lower bound, and upper bound cannot be NaN",
        ));
    }
    if !lo.is_finite() || !hi.is_finite() {
        return Err(bucket_error("lower and upper bounds must be finite"));
    }
    let n = Numeric::from_i64(count as i64);
    let over = || count.checked_add(1).ok_or_else(int4_out_of_range);
    let bucket = |num: Numeric, den: Numeric| -> Result<i32> {
        let q = num.mul(&n).div_trunc(&den)?;
        let b = q.to_i64_round().unwrap_or(i64::MAX) + 1;
        i32::try_from(b).map_err(|_| int4_out_of_range())
    };
    match lo.cmp(hi) {
        std::cmp::Ordering::Equal => Err(bucket_error("lower bound cannot equal upper bound")),
        std::cmp::Ordering::Less => {
            if x < lo {
                Ok(0)
            } else if x >= hi {
                over()
            } else {
                bucket(x.sub(lo), hi.sub(lo))
            }
        }
        std::cmp::Ordering::Greater => {
            if x > lo {
                Ok(0)
            } else if x <= hi {
                over()
            } else {
                bucket(lo.sub(x), lo.sub(hi))
            }
        }
    }
}
