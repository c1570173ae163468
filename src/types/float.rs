//! Floating-point types (`real`, `double precision`): text input and output
//! as PostgreSQL 15, and arithmetic with its overflow checks.
//!
//! Output is the shortest text that reads back to the same value
//! (PostgreSQL 15's default `extra_float_digits = 1`), in PostgreSQL's
//! layout: plain decimal when the decimal exponent is in `-4 ..
//! DIG` (`DIG` is 15 for float8, 6 for float4), otherwise `d.ddde+XX` with a
//! signed exponent of at least two digits (`1e+100`, `1e-05`); `NaN`,
//! `Infinity`, `-Infinity`, `-0`. Rust's `{:e}` formatting already yields the
//! shortest round-trip digits, so only the layout is ours. With
//! `extra_float_digits` at 0 or below (a per-thread value the session sets,
//! [`set_extra_float_digits`]) output is C's `%.*g` with `DIG + n`
//! significant digits, as PostgreSQL's `float8out` then prints.
//!
//! Input accepts surrounding whitespace, `NaN`, `[+-]Infinity`, `[+-]inf`,
//! hexadecimal literals as C's `strtod` (`0x1F`, `0x1.8p3`);
//! a finite literal that overflows or underflows to zero is `"1e400" is out
//! of range for type double precision` (22003). Arithmetic that overflows
//! from finite inputs is `value out of range: overflow`, a non-zero product
//! or quotient that becomes zero is `value out of range: underflow`.

use crate::err;
use crate::error::{Error, Result};
use std::fmt::Write;

/// Parses float text as `f64` for the SQL type `type_name`; `f32` callers
/// narrow with [`parse_float4`].
fn parse_float(text: &str, type_name: &str) -> Result<f64> {
    let bad = || {
        err!(
            InvalidTextRepresentation,
            "invalid input syntax for type {type_name}: \"{text}\""
        )
    };
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let body = s.trim_start_matches(['+', '-']);
    if body.len() + 1 < s.len() {
        return Err(bad());
    }
    let lower = body.to_ascii_lowercase();
    let neg = s.starts_with('-');
    match lower.as_str() {
        "nan" => {
            return if body.len() == s.len() {
                Ok(f64::NAN)
            } else {
                Err(bad())
            }
        }
        "inf" | "infinity" => {
            return Ok(if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        _ => {}
    }
    if let Some(hex) = lower.strip_prefix("0x") {
        let v = parse_hex(hex).ok_or_else(bad)?;
        return Ok(if neg { -v } else { v });
    }
    if !body
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return Err(bad());
    }
    s.parse::<f64>().map_err(|_| bad())
}

/// A C99 hexadecimal floating literal after its `0x` (lower case), as
/// `strtod` reads it: hex digits with an optional point, at least one
/// digit, then an optional binary exponent `p[+-]digits`.
fn parse_hex(hex: &str) -> Option<f64> {
    let (mant, exp) = match hex.split_once('p') {
        Some((m, e)) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            // Far beyond any finite or subnormal value either way.
            let e: i64 = digits.parse().unwrap_or(100_000).min(100_000);
            (
                m,
                if hex[m.len() + 1..].starts_with('-') {
                    -e
                } else {
                    e
                },
            )
        }
        None => (hex, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.len() + frac.len() == 0 || frac.contains('.') {
        return None;
    }
    // The first 30 significant digits exactly (120 bits), the rest only
    // as a scale: beyond f64's 53 bits they cannot change the value but
    // by rounding a tie, which this ignores.
    let (mut m, mut e2, mut used) = (0u128, exp, 0);
    for (k, c) in int.chars().chain(frac.chars()).enumerate() {
        let d = u128::from(c.to_digit(16)?);
        let in_frac = k >= int.len();
        if used < 30 {
            m = m * 16 + d;
            if m > 0 {
                used += 1;
            }
            if in_frac {
                e2 -= 4;
            }
        } else if !in_frac {
            e2 += 4;
        }
    }
    let v = m as f64;
    Some(if e2 >= 0 {
        v * 2f64.powi(e2.min(2_000) as i32)
    } else {
        // Two steps, so a subnormal result is not lost to an underflow
        // of the scale itself.
        let e2 = e2.max(-4_000);
        v * 2f64.powi((e2 / 2) as i32) * 2f64.powi((e2 - e2 / 2) as i32)
    })
}

/// Whether the mantissa of a decimal literal has a non-zero digit (so a zero
/// result means underflow).
fn has_nonzero_mantissa(s: &str) -> bool {
    s.bytes()
        .take_while(|c| *c != b'e' && *c != b'E')
        .any(|c| (b'1'..=b'9').contains(&c))
}

/// Parses `double precision` text.
pub fn parse_float8(text: &str) -> Result<f64> {
    let v = parse_float(text, "double precision")?;
    let finite_literal = !text.to_ascii_lowercase().contains("inf");
    if (v.is_infinite() && finite_literal) || (v == 0.0 && has_nonzero_mantissa(text)) {
        return Err(err!(
            NumericValueOutOfRange,
            "\"{text}\" is out of range for type double precision"
        ));
    }
    Ok(v)
}

/// Parses `real` text (rounded once, directly to `f32`).
pub fn parse_float4(text: &str) -> Result<f32> {
    let v = parse_float(text, "real")?;
    if v.is_nan() || (v.is_infinite() && text.to_ascii_lowercase().contains("inf")) {
        return Ok(v as f32);
    }
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let hex = s.trim_start_matches(['+', '-']).get(..2);
    let parsed = if matches!(hex, Some("0x" | "0X")) {
        Ok(v as f32)
    } else {
        s.parse()
    };
    let f: f32 = parsed.map_err(|_| {
        err!(
            InvalidTextRepresentation,
            "invalid input syntax for type real: \"{text}\""
        )
    })?;
    if f.is_infinite() || (f == 0.0 && has_nonzero_mantissa(s)) {
        return Err(err!(
            NumericValueOutOfRange,
            "\"{text}\" is out of range for type real"
        ));
    }
    Ok(f)
}

/// Lays out shortest digits in PostgreSQL's style. `sci` is Rust's `{:e}`
/// text of a finite non-zero value; `dig` is 15 (float8) or 6 (float4).
fn layout(sci: &str, dig: i32, out: &mut String) {
    let (mantissa, exp) = sci.split_once('e').expect("{:e} output has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if neg {
        out.push('-');
    }
    if exp < -4 || exp >= dig {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else if exp < 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat('0').take((-exp - 1) as usize));
        out.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            out.extend(std::iter::repeat('0').take(int_len - digits.len()));
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
}

thread_local! {
    /// This thread's `extra_float_digits` (see [`set_extra_float_digits`]).
    static EXTRA_FLOAT_DIGITS: std::cell::Cell<i32> = const { std::cell::Cell::new(1) };
}

/// Sets the `extra_float_digits` this thread prints floats with; the
/// session sets it before each statement, as it does the date styles.
pub fn set_extra_float_digits(n: i32) {
    EXTRA_FLOAT_DIGITS.with(|c| c.set(n));
}

/// This thread's `extra_float_digits`.
pub fn extra_float_digits() -> i32 {
    EXTRA_FLOAT_DIGITS.with(std::cell::Cell::get)
}

/// `%.*g` as C prints it: `digits` significant digits, trailing zeros
/// dropped, scientific notation below `1e-4` and from `10^digits` up.
fn write_g(v: f64, digits: usize, out: &mut String) {
    let sci = format!("{:.*e}", digits.saturating_sub(1), v);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= digits as i32 {
        let mant = trim_fraction(mant);
        let _ = write!(
            out,
            "{mant}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        );
    } else {
        let decimals = (digits as i32 - 1 - exp).max(0) as usize;
        let fixed = format!("{:.*}", decimals, v);
        out.push_str(trim_fraction(&fixed));
    }
}

/// `1.500` as `1.5`, `2.000` as `2`.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Appends a `double precision` as PostgreSQL 15 prints it.
pub fn write_float8(v: f64, out: &mut String) {
    let extra = EXTRA_FLOAT_DIGITS.with(std::cell::Cell::get);
    if extra <= 0 && v.is_finite() && v != 0.0 {
        write_g(v, (15 + extra).max(1) as usize, out);
        return;
    }
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
    } else if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0" } else { "0" });
    } else {
        layout(&format!("{v:e}"), 15, out);
    }
}

/// Appends a `real` as PostgreSQL 15 prints it.
pub fn write_float4(v: f32, out: &mut String) {
    let extra = EXTRA_FLOAT_DIGITS.with(std::cell::Cell::get);
    if extra <= 0 && v.is_finite() && v != 0.0 {
        write_g(v as f64, (6 + extra).max(1) as usize, out);
        return;
    }
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
    } else if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0" } else { "0" });
    } else {
        layout(&format!("{v:e}"), 6, out);
    }
}

/// `value out of range: overflow` (22003).
pub fn overflow() -> Error {
    err!(NumericValueOutOfRange, "value out of range: overflow")
}

/// `value out of range: underflow` (22003).
pub fn underflow() -> Error {
    err!(NumericValueOutOfRange, "value out of range: underflow")
}

/// Checks a float result as PostgreSQL's `float_overflow_error` /
/// `float_underflow_error` do: infinity from finite inputs overflows; zero
/// from inputs that `zero_ok` says could not give zero underflows.
pub fn check(result: f64, inputs_infinite: bool, zero_ok: bool) -> Result<f64> {
    if result.is_infinite() && !inputs_infinite {
        return Err(overflow());
    }
    if result == 0.0 && !zero_ok {
        return Err(underflow());
    }
    Ok(result)
}

/// `a + b` for float8.
pub fn add_f64(a: f64, b: f64) -> Result<f64> {
    check(a + b, a.is_infinite() || b.is_infinite(), true)
}

/// `a - b` for float8.
pub fn sub_f64(a: f64, b: f64) -> Result<f64> {
    check(a - b, a.is_infinite() || b.is_infinite(), true)
}

/// `a * b` for float8.
pub fn mul_f64(a: f64, b: f64) -> Result<f64> {
    check(
        a * b,
        a.is_infinite() || b.is_infinite(),
        a == 0.0 || b == 0.0,
    )
}

/// `a / b` for float8; `division by zero` for a zero divisor (but `NaN / 0`
/// is NaN, as PostgreSQL's float8div).
pub fn div_f64(a: f64, b: f64) -> Result<f64> {
    if b == 0.0 && !a.is_nan() {
        return Err(err!(DivisionByZero, "division by zero"));
    }
    check(a / b, a.is_infinite(), a == 0.0 || b.is_infinite())
}

/// Float4 arithmetic: computed in f32 as PostgreSQL does, checked the same way.
pub fn check_f32(result: f32, inputs_infinite: bool, zero_ok: bool) -> Result<f32> {
    check(result as f64, inputs_infinite, zero_ok).map(|_| result)
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 on this machine
    //! (`select 1e15::float8, 0.1::float4, ...`).
    use super::*;

    fn f8(v: f64) -> String {
        let mut s = String::new();
        write_float8(v, &mut s);
        s
    }

    fn f4(v: f32) -> String {
        let mut s = String::new();
        write_float4(v, &mut s);
        s
    }

    #[test]
    fn output_matches_postgres() {
        let cases = [
            (1e15, "1e+15"),
            (1e14, "100000000000000"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-0.0, "-0"),
            (f64::INFINITY, "Infinity"),
            (f64::NAN, "NaN"),
            (1.2345678901234567e25, "1.2345678901234566e+25"),
            (1e22, "1e+22"),
            (5e-324, "5e-324"),
            (1e100, "1e+100"),
            (0.1, "0.1"),
            (-1.5, "-1.5"),
            (100.0, "100"),
            (1.0 / 3.0, "0.3333333333333333"),
        ];
        for (v, want) in cases {
            assert_eq!(f8(v), want, "{v:e}");
        }
        assert_eq!(f4(1e6), "1e+06");
        assert_eq!(f4(123456.0), "123456");
        assert_eq!(f4(1e-5), "1e-05");
        assert_eq!(f4(0.1), "0.1");
        assert_eq!(f4(1234.5677), "1234.5677");
    }

    #[test]
    fn input_matches_postgres() {
        assert_eq!(parse_float8(" 1.5 ").unwrap(), 1.5);
        assert_eq!(parse_float8("-Infinity").unwrap(), f64::NEG_INFINITY);
        assert_eq!(parse_float8("inf").unwrap(), f64::INFINITY);
        assert!(parse_float8("NaN").unwrap().is_nan());
        assert_eq!(parse_float8("4.9e-324").unwrap(), 5e-324);
        let e = parse_float8("1e400").unwrap_err();
        assert_eq!(
            e.message,
            "\"1e400\" is out of range for type double precision"
        );
        let e = parse_float8("1e-400").unwrap_err();
        assert_eq!(
            e.message,
            "\"1e-400\" is out of range for type double precision"
        );
        let e = parse_float8("abc").unwrap_err();
        assert_eq!(
            e.message,
            "invalid input syntax for type double precision: \"abc\""
        );
        assert_eq!(parse_float8("").unwrap_err().code.code(), "22P02");
        let e = parse_float4("1e40").unwrap_err();
        assert_eq!(e.message, "\"1e40\" is out of range for type real");
        assert_eq!(parse_float4("0.1").unwrap(), 0.1f32);
    }

    #[test]
    fn arithmetic_errors() {
        assert_eq!(
            mul_f64(1e308, 10.0).unwrap_err().message,
            "value out of range: overflow"
        );
        assert_eq!(
            mul_f64(1e-300, 1e-300).unwrap_err().message,
            "value out of range: underflow"
        );
        assert_eq!(div_f64(1.0, 0.0).unwrap_err().message, "division by zero");
        assert_eq!(add_f64(f64::INFINITY, 1.0).unwrap(), f64::INFINITY);
    }
}
