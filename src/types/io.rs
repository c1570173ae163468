//! Text input and output for every type: [`parse_value`] is each type's
//! input function (PostgreSQL's `typinput` applied with the column's type
//! modifier), [`format_value`] its output function (`typoutput`).
//!
//! Input with a type modifier behaves as storing into a column of that type:
//! `varchar(3)` rejects `'abcd'` (22001), `char(3)` pads, `numeric(5,2)`
//! rounds and checks its precision. Explicit casts that cut instead are
//! [`cast`](super::cast::cast)'s business.

use super::datatype::DataType;
use super::datetime::{self, interval, parse};
use super::float::{parse_float4, parse_float8, write_float4, write_float8};
use super::int::{parse_int2, parse_int4, parse_int8};
use super::numeric::Numeric;
use super::text::{apply_length, parse_bool};
use super::value::Value;
use crate::error::Result;
use std::sync::Arc;

/// Parses `text` as a value of type `ty` (see the module doc); `now` and
/// `today` read the system clock (use [`parse_value_at`] to pass a clock).
pub fn parse_value(text: &str, ty: &DataType) -> Result<Value> {
    parse_value_at(text, ty, datetime::system_now())
}

/// [`parse_value`] with `now` (a timestamp) as the clock for `now`,
/// `today`, `tomorrow` and `yesterday`, so a statement sees one time.
pub fn parse_value_at(text: &str, ty: &DataType, now: i64) -> Result<Value> {
    Ok(match ty {
        DataType::Bool => Value::Bool(parse_bool(text)?),
        DataType::Int2 => Value::Int2(parse_int2(text)?),
        DataType::Int4 => Value::Int4(parse_int4(text)?),
        DataType::Int8 => Value::Int8(parse_int8(text)?),
        DataType::Float4 => Value::Float4(parse_float4(text)?),
        DataType::Float8 => Value::Float8(parse_float8(text)?),
        DataType::Numeric(typmod) => {
            let n = Numeric::parse(text)?;
            match typmod {
                Some((p, s)) => Value::numeric(n.apply_typmod(*p, *s)?),
                None => Value::numeric(n),
            }
        }
        DataType::Text | DataType::Unknown | DataType::Varchar(None) => {
            Value::Text(Arc::from(text))
        }
        DataType::Name => Value::Text(Arc::from(truncate_name(text))),
        DataType::Varchar(Some(n)) => match apply_length(text, *n, false, false)? {
            Some(s) => Value::Text(Arc::from(s)),
            None => Value::Text(Arc::from(text)),
        },
        DataType::Char(n) => match apply_length(text, *n, true, false)? {
            Some(s) => Value::Text(Arc::from(s)),
            None => Value::Text(Arc::from(text)),
        },
        DataType::Date => Value::Date(parse::parse_date_at(text, now)?),
        DataType::Timestamp(p) => {
            let t = parse::parse_timestamp_at(text, now)?;
            Value::Timestamp(super::datetime::round_timestamp(t, *p)?)
        }
        DataType::TimestampTz(p) => {
            let t = super::datetime::tstz::parse_timestamptz_at(text, now)?;
            Value::TimestampTz(super::datetime::round_timestamp(t, *p)?)
        }
        DataType::Interval => Value::Interval(interval::parse_interval(text)?),
        DataType::Bytea => Value::Bytea(Arc::from(super::bytea::parse_bytea(text)?)),
        DataType::Array(elem) => super::array::parse_array(text, elem, now)?,
        DataType::Json => {
            super::json::json_in(text)?;
            Value::Text(Arc::from(text))
        }
        DataType::Jsonb => Value::Jsonb(Arc::new(super::json::Jsonb::parse(text)?)),
        DataType::Point => super::point::point_in(text)?,
        DataType::Time(p) => {
            let t = datetime::time::parse_time_at(text, now)?;
            Value::Time(datetime::time::round_time(t, *p))
        }
        DataType::TimeTz(p) => {
            let (t, east) = datetime::time::parse_timetz_at(text, now)?;
            Value::TimeTz(datetime::time::round_time(t, *p), east)
        }
    })
}

/// A `name` value: the text cut to 63 bytes (PostgreSQL's `NAMEDATALEN -
/// 1`) at a character boundary.
pub fn truncate_name(text: &str) -> &str {
    const MAX: usize = 63;
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Coerces an untyped string literal (`'abcd'`, type `unknown`) to `to` as
/// PostgreSQL does: the base type's input function, then the type modifier
/// as a cast in context `ctx`. So `'abcd'::varchar(2)` (explicit) is `ab`,
/// while inserting `'abcd'` into a `varchar(2)` column (assignment) fails
/// with `value too long for type character varying(2)`; `char(n)` pads;
/// `numeric(p,s)` rounds. `now` is the clock for `now`/`today`.
pub fn coerce_literal(
    text: &str,
    to: &DataType,
    ctx: super::cast::CastContext,
    now: i64,
) -> Result<Value> {
    let base = match to {
        DataType::Char(_) | DataType::Varchar(_) => DataType::Text,
        other => other.without_typmod(),
    };
    let parsed = parse_value_at(text, &base, now)?;
    if base == *to {
        return Ok(parsed);
    }
    super::cast::cast_from(&parsed, &base, to, ctx)
}

/// Appends the text form of `v` as PostgreSQL prints it (`t`/`f`, `1e+100`,
/// `1.50`, `1999-01-08`, `1 year 2 mons`). NULL appends nothing; callers
/// print NULL as they like (psql prints an empty field).
pub fn format_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Int2(x) => out.push_str(int_digits(i64::from(*x), &mut [0; 20])),
        Value::Int4(x) => out.push_str(int_digits(i64::from(*x), &mut [0; 20])),
        Value::Int8(x) => out.push_str(int_digits(*x, &mut [0; 20])),
        Value::Float4(x) => write_float4(*x, out),
        Value::Float8(x) => write_float8(*x, out),
        Value::Numeric(n) => n.write_text(out),
        Value::Text(s) => out.push_str(s),
        Value::Date(d) => datetime::write_date(*d, out),
        Value::Timestamp(t) => datetime::write_timestamp(*t, out),
        Value::TimestampTz(t) => datetime::tstz::write_timestamptz(*t, out),
        Value::Interval(iv) => interval::write_interval(iv, out),
        Value::Bytea(b) => super::bytea::write_bytea(b, out),
        Value::Array(a) => a.write_text(out),
        Value::Time(t) => datetime::write_time(*t, out),
        Value::TimeTz(t, east) => datetime::time::write_timetz(*t, *east, out),
        Value::Jsonb(j) => j.write(out),
    }
}

/// The decimal form of `x` (what `format!("{x}")` gives) written into the
/// end of `buf`, without the formatting machinery: integer output is the
/// inner loop of COPY TO and of printing results.
pub fn int_digits(x: i64, buf: &mut [u8; 20]) -> &str {
    let mut n = x.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if x < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    std::str::from_utf8(&buf[i..]).expect("ASCII digits")
}

/// [`format_value`] into a new `String`.
pub fn value_to_string(v: &Value) -> String {
    let mut s = String::new();
    format_value(v, &mut s);
    s
}

impl std::fmt::Display for Value {
    /// The PostgreSQL text form; NULL shows as an empty string.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&value_to_string(self))
    }
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 on this machine, e.g.
    //! `select 1e100::float8, 0.1::float4, avg(x) from (values (1),(2)) v(x)`.
    use super::*;

    #[test]
    fn integers_print_as_rust_formats_them() {
        let mut cases = vec![0i64, 1, -1, 9, 10, -10, 99, 100, i64::MAX, i64::MIN];
        cases.extend((0..2000).map(|k| (k * 7919i64).pow(2) * k * if k % 2 == 0 { 1 } else { -1 }));
        cases.extend([i32::MIN as i64, i32::MAX as i64, i16::MIN as i64]);
        for x in cases {
            assert_eq!(int_digits(x, &mut [0; 20]), x.to_string());
        }
        let mut s = String::from("a");
        format_value(&Value::Int4(-2147483648), &mut s);
        format_value(&Value::Int2(7), &mut s);
        assert_eq!(s, "a-21474836487");
    }

    fn round_trip(text: &str, ty: DataType) -> String {
        value_to_string(&parse_value_at(text, &ty, 0).unwrap())
    }

    #[test]
    fn every_type_round_trips_as_postgres_prints() {
        let cases = [
            ("true", DataType::Bool, "t"),
            ("off", DataType::Bool, "f"),
            (" -32768", DataType::Int2, "-32768"),
            ("+42 ", DataType::Int4, "42"),
            ("9223372036854775807", DataType::Int8, "9223372036854775807"),
            ("0.1", DataType::Float4, "0.1"),
            ("1e100", DataType::Float8, "1e+100"),
            ("1.50", DataType::Numeric(None), "1.50"),
            ("123.456", DataType::Numeric(Some((5, 2))), "123.46"),
            ("héllo", DataType::Text, "héllo"),
            ("ab", DataType::Char(4), "ab  "),
            ("abc   ", DataType::Varchar(Some(3)), "abc"),
            ("January 8, 1999", DataType::Date, "1999-01-08"),
            (
                "Thu Jan 07 15:15:00 1999 EST",
                DataType::Timestamp(None),
                "1999-01-07 15:15:00",
            ),
            ("1 day 2 hours", DataType::Interval, "1 day 02:00:00"),
        ];
        for (text, ty, want) in cases {
            assert_eq!(round_trip(text, ty), want, "{text}::{ty}");
        }
    }

    #[test]
    fn literals_coerce_by_context() {
        use crate::types::cast::CastContext::*;
        let show = |v: Value| value_to_string(&v);
        let vc2 = DataType::Varchar(Some(2));
        assert_eq!(
            show(coerce_literal("abcd", &vc2, Explicit, 0).unwrap()),
            "ab"
        );
        let e = coerce_literal("abcd", &vc2, Assignment, 0).unwrap_err();
        assert_eq!(e.message, "value too long for type character varying(2)");
        assert_eq!(
            show(coerce_literal("ab", &DataType::Char(4), Implicit, 0).unwrap()),
            "ab  "
        );
        let n = DataType::Numeric(Some((5, 2)));
        assert_eq!(
            show(coerce_literal("1.005", &n, Assignment, 0).unwrap()),
            "1.01"
        );
        assert_eq!(
            show(coerce_literal("7", &DataType::Int8, Implicit, 0).unwrap()),
            "7"
        );
    }

    #[test]
    fn errors_carry_postgres_messages() {
        let e = parse_value("x", &DataType::Int4).unwrap_err();
        assert_eq!(e.message, "invalid input syntax for type integer: \"x\"");
        let e = parse_value("abcd", &DataType::Varchar(Some(3))).unwrap_err();
        assert_eq!(e.message, "value too long for type character varying(3)");
        let e = parse_value("1234.5", &DataType::Numeric(Some((5, 2)))).unwrap_err();
        assert_eq!(e.message, "numeric field overflow");
    }
}
