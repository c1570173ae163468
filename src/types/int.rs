//! Integer types (`smallint`, `integer`, `bigint`): text input and checked
//! arithmetic with PostgreSQL's errors.
//!
//! Input follows PostgreSQL 15's `pg_strtoint*`: optional surrounding
//! whitespace, an optional sign, decimal digits only (no `_`, no hex);
//! anything else is `invalid input syntax for type integer: "x"` (22P02),
//! and a value that does not fit is `value "99999999999" is out of range for
//! type integer` (22003). Arithmetic overflow is `integer out of range` (or
//! `smallint` / `bigint`), division by zero is 22012.

use crate::err;
use crate::error::{Error, Result};

/// Parses an integer of at most `i64`'s range for the SQL type `type_name`
/// (`smallint`, `integer` or `bigint`), checking it against `[min, max]`.
pub fn parse_int(text: &str, type_name: &str, min: i64, max: i64) -> Result<i64> {
    let bad = || {
        err!(
            InvalidTextRepresentation,
            "invalid input syntax for type {type_name}: \"{text}\""
        )
    };
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    // Accumulate negatively so i64::MIN parses.
    let mut v: i64 = 0;
    let mut overflow = false;
    for c in digits.bytes() {
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_sub((c - b'0') as i64))
        {
            Some(x) => v = x,
            None => {
                overflow = true;
                break;
            }
        }
    }
    let v = if neg { Some(v) } else { v.checked_neg() };
    match v {
        Some(v) if !overflow && v >= min && v <= max => Ok(v),
        _ => Err(err!(
            NumericValueOutOfRange,
            "value \"{text}\" is out of range for type {type_name}"
        )),
    }
}

/// Parses `smallint` text.
pub fn parse_int2(text: &str) -> Result<i16> {
    parse_int(text, "smallint", i16::MIN as i64, i16::MAX as i64).map(|v| v as i16)
}

/// Parses `integer` text.
pub fn parse_int4(text: &str) -> Result<i32> {
    parse_int(text, "integer", i32::MIN as i64, i32::MAX as i64).map(|v| v as i32)
}

/// Parses `bigint` text.
pub fn parse_int8(text: &str) -> Result<i64> {
    parse_int(text, "bigint", i64::MIN, i64::MAX)
}

/// `smallint out of range` (22003).
pub fn int2_out_of_range() -> Error {
    err!(NumericValueOutOfRange, "smallint out of range")
}

/// `integer out of range` (22003).
pub fn int4_out_of_range() -> Error {
    err!(NumericValueOutOfRange, "integer out of range")
}

/// `bigint out of range` (22003).
pub fn int8_out_of_range() -> Error {
    err!(NumericValueOutOfRange, "bigint out of range")
}

/// `division by zero` (22012).
pub fn division_by_zero() -> Error {
    err!(DivisionByZero, "division by zero")
}

/// Integer arithmetic for one width, with its overflow error.
macro_rules! int_ops {
    ($t:ty, $add:ident, $sub:ident, $mul:ident, $div:ident, $rem:ident, $neg:ident, $abs:ident, $oor:ident) => {
        /// Checked `+`.
        pub fn $add(a: $t, b: $t) -> Result<$t> {
            a.checked_add(b).ok_or_else($oor)
        }
        /// Checked `-`.
        pub fn $sub(a: $t, b: $t) -> Result<$t> {
            a.checked_sub(b).ok_or_else($oor)
        }
        /// Checked `*`.
        pub fn $mul(a: $t, b: $t) -> Result<$t> {
            a.checked_mul(b).ok_or_else($oor)
        }
        /// `/` truncating toward zero; MIN / -1 overflows.
        pub fn $div(a: $t, b: $t) -> Result<$t> {
            if b == 0 {
                return Err(division_by_zero());
            }
            a.checked_div(b).ok_or_else($oor)
        }
        /// `%` with the dividend's sign; `MIN % -1` is 0 as in PostgreSQL.
        pub fn $rem(a: $t, b: $t) -> Result<$t> {
            if b == 0 {
                return Err(division_by_zero());
            }
            Ok(a.checked_rem(b).unwrap_or(0))
        }
        /// Checked unary minus.
        pub fn $neg(a: $t) -> Result<$t> {
            a.checked_neg().ok_or_else($oor)
        }
        /// Checked `abs`.
        pub fn $abs(a: $t) -> Result<$t> {
            a.checked_abs().ok_or_else($oor)
        }
    };
}

int_ops!(
    i16,
    add_i16,
    sub_i16,
    mul_i16,
    div_i16,
    rem_i16,
    neg_i16,
    abs_i16,
    int2_out_of_range
);
int_ops!(
    i32,
    add_i32,
    sub_i32,
    mul_i32,
    div_i32,
    rem_i32,
    neg_i32,
    abs_i32,
    int4_out_of_range
);
int_ops!(
    i64,
    add_i64,
    sub_i64,
    mul_i64,
    div_i64,
    rem_i64,
    neg_i64,
    abs_i64,
    int8_out_of_range
);

/// Rounds a float half to even and converts it to an integer in
/// `[min, max]` (PostgreSQL's `float8 -> int` casts use `rint`).
pub fn float_to_int(v: f64, min: i64, max: i64) -> Option<i64> {
    let r = v.round_ties_even();
    // Compare in f64: max as f64 may round up (i64::MAX -> 2^63), so use <.
    if r.is_nan() || r < min as f64 || r >= -(min as f64) || r > max as f64 {
        return None;
    }
    Some(r as i64)
}

#[cfg(test)]
mod tests {
    //! Expected messages come from PostgreSQL 15 on this machine.
    use super::*;

    #[test]
    fn input_matches_postgres() {
        assert_eq!(parse_int4("  12  ").unwrap(), 12);
        assert_eq!(parse_int2("+12").unwrap(), 12);
        assert_eq!(parse_int2("-32768").unwrap(), -32768);
        assert_eq!(parse_int8("-9223372036854775808").unwrap(), i64::MIN);
        for bad in ["x", "", "0x1A", "1_000", "1.5", "- 1", "1e3"] {
            let e = parse_int4(bad).unwrap_err();
            assert_eq!(
                e.message,
                format!("invalid input syntax for type integer: \"{bad}\"")
            );
            assert_eq!(e.code.code(), "22P02");
        }
        let e = parse_int4("99999999999").unwrap_err();
        assert_eq!(
            e.message,
            "value \"99999999999\" is out of range for type integer"
        );
        assert_eq!(e.code.code(), "22003");
        assert!(parse_int2("32768").is_err());
        assert!(parse_int8("9223372036854775808").is_err());
        assert!(parse_int8("99999999999999999999999").is_err());
    }

    #[test]
    fn arithmetic_overflows_as_postgres() {
        assert_eq!(
            add_i32(i32::MAX, 1).unwrap_err().message,
            "integer out of range"
        );
        assert_eq!(
            mul_i16(300, 300).unwrap_err().message,
            "smallint out of range"
        );
        assert_eq!(
            sub_i64(i64::MIN, 1).unwrap_err().message,
            "bigint out of range"
        );
        assert_eq!(div_i32(1, 0).unwrap_err().message, "division by zero");
        assert_eq!(
            div_i32(i32::MIN, -1).unwrap_err().message,
            "integer out of range"
        );
        assert_eq!(rem_i32(i32::MIN, -1).unwrap(), 0);
        assert_eq!(rem_i32(-7, 2).unwrap(), -1);
        assert_eq!(div_i32(-7, 2).unwrap(), -3);
        assert_eq!(float_to_int(2.5, i32::MIN as i64, i32::MAX as i64), Some(2));
        assert_eq!(float_to_int(3.5, i32::MIN as i64, i32::MAX as i64), Some(4));
        assert_eq!(
            float_to_int(-2.5, i32::MIN as i64, i32::MAX as i64),
            Some(-2)
        );
        assert_eq!(
            float_to_int(2147483647.6, i32::MIN as i64, i32::MAX as i64),
            None
        );
        assert_eq!(float_to_int(9.3e18, i64::MIN, i64::MAX), None);
        assert_eq!(float_to_int(f64::NAN, i64::MIN, i64::MAX), None);
    }
}
