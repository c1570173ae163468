//! Casts between types, with PostgreSQL's semantics and errors, and the
//! context (implicit / assignment / explicit) each cast needs.
//!
//! [`cast_kind`] mirrors `pg_cast.castcontext` for the types heapdb has: the
//! binder inserts implicit casts when resolving operators and function
//! arguments, assignment casts when storing into a column, and explicit ones
//! only for `CAST(x AS t)` / `x::t`. [`cast_from`] performs a cast:
//!
//! - integers narrow with `smallint out of range` / `integer out of range`;
//! - floats to integers round half to even (`rint`), numeric to integers
//!   half away from zero; NaN and infinity cannot become integers;
//! - float to numeric keeps 15 (float8) or 6 (float4) significant digits;
//! - numeric typmods round and may fail with `numeric field overflow`;
//! - `varchar(n)` / `char(n)`: an explicit cast cuts to `n` characters, an
//!   assignment fails unless the excess is spaces; `char(n)` to another
//!   string type drops the trailing spaces;
//! - every type to a string type uses its output function (`bool` gives
//!   `true` / `false` there), string to anything its input function.

use super::datatype::{DataType, TypeCategory};
use super::datetime::arith::{date_to_timestamp, timestamp_to_date};
use super::float;
use super::int::{float_to_int, int2_out_of_range, int4_out_of_range, int8_out_of_range};
use super::io::{format_value, parse_value};
use super::numeric::{NumKind, Numeric};
use super::text::{apply_length, bpchar_trim};
use super::value::Value;
use crate::err;
use crate::error::{Error, Result};
use std::sync::Arc;

/// When a cast may be applied, weakest first (PostgreSQL's `castcontext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CastContext {
    /// Silently, anywhere an expression needs it (`i`).
    Implicit,
    /// When storing into a column (INSERT / UPDATE targets), `a`.
    Assignment,
    /// Only when written as `CAST` or `::`, `e`.
    Explicit,
}

/// Numeric types in widening order (int2 < int4 < int8 < numeric < float4
/// < float8), for implicit casts.
fn numeric_rank(t: &DataType) -> Option<u8> {
    Some(match t {
        DataType::Int2 => 0,
        DataType::Int4 => 1,
        DataType::Int8 => 2,
        DataType::Numeric(_) => 3,
        DataType::Float4 => 4,
        DataType::Float8 => 5,
        _ => return None,
    })
}

/// The weakest context in which `from` casts to `to`; `None` when there is
/// no cast (`cannot cast type bigint to boolean`).
pub fn cast_kind(from: &DataType, to: &DataType) -> Option<CastContext> {
    use CastContext::*;
    use DataType::*;
    if from.without_typmod() == to.without_typmod() || matches!((from, to), (Char(_), Char(_))) {
        return Some(Implicit);
    }
    if *from == Unknown {
        return Some(Implicit);
    }
    if let (Some(a), Some(b)) = (numeric_rank(from), numeric_rank(to)) {
        // Widening is implicit; narrowing (including float -> numeric) is
        // assignment.
        return Some(if a < b { Implicit } else { Assignment });
    }
    match (from, to) {
        (Array(a), Array(b)) => cast_kind(a, b),
        (Json, Jsonb) | (Jsonb, Json) => Some(Assignment),
        (Jsonb, Bool | Int2 | Int4 | Int8 | Float4 | Float8 | Numeric(_)) => Some(Explicit),
        (Int4, Bool) | (Bool, Int4) => Some(Explicit),
        (Date, Timestamp(_)) => Some(Implicit),
        (Timestamp(_), Date) => Some(Assignment),
        (Date | Timestamp(_), TimestampTz(_)) => Some(Implicit),
        (TimestampTz(_), Date | Timestamp(_)) => Some(Assignment),
        (Time(_), Interval | TimeTz(_)) => Some(Implicit),
        (Interval | TimeTz(_) | Timestamp(_) | TimestampTz(_), Time(_)) => Some(Assignment),
        (TimestampTz(_), TimeTz(_)) => Some(Assignment),
        (f, t) if f.is_string() && t.is_string() => Some(Implicit),
        (_, t) if t.is_string() => Some(Assignment),
        (f, _) if f.is_string() => Some(Explicit),
        _ => None,
    }
}

/// `cannot cast type bigint to boolean` (42846).
pub fn cannot_cast(from: &DataType, to: &DataType) -> Error {
    err!(CannotCoerce, "cannot cast type {from} to {to}")
}

/// Explicit cast of `v` (of its natural type) to `to`, as `v::to`.
pub fn cast(v: &Value, to: &DataType) -> Result<Value> {
    match v.data_type() {
        None => Ok(Value::Null),
        Some(from) => cast_from(v, &from, to, CastContext::Explicit),
    }
}

/// Assignment cast: what storing `v` (of type `from`) into a column of type
/// `to` does (`varchar(n)` overflow is an error, not a cut).
pub fn cast_assign(v: &Value, from: &DataType, to: &DataType) -> Result<Value> {
    cast_from(v, from, to, CastContext::Assignment)
}

/// Casts `v`, a value of type `from`, to `to`. `ctx` decides only how
/// string lengths are enforced (explicit casts cut); whether the cast is
/// allowed in that context is the binder's check via [`cast_kind`].
pub fn cast_from(v: &Value, from: &DataType, to: &DataType, ctx: CastContext) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let explicit = ctx == CastContext::Explicit;
    // Strings: source text (char(n) without its padding), then the target's
    // input function or length rule.
    if let Value::Text(s) = v {
        let src: &str = if matches!(from, DataType::Char(_)) {
            bpchar_trim(s)
        } else {
            s
        };
        return match to {
            DataType::Text | DataType::Unknown | DataType::Varchar(None) => {
                if src.len() == s.len() {
                    Ok(v.clone())
                } else {
                    Ok(Value::text(src))
                }
            }
            DataType::Varchar(Some(n)) => Ok(match apply_length(src, *n, false, explicit)? {
                Some(cut) => Value::Text(Arc::from(cut)),
                None if src.len() == s.len() => v.clone(),
                None => Value::text(src),
            }),
            DataType::Char(n) => Ok(match apply_length(src, *n, true, explicit)? {
                Some(padded) => Value::Text(Arc::from(padded)),
                None => Value::text(src),
            }),
            _ => parse_value(src, to),
        };
    }
    if to.is_string() {
        let mut s = String::new();
        match v {
            Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
            other => format_value(other, &mut s),
        }
        return cast_from(&Value::Text(Arc::from(s)), &DataType::Text, to, ctx);
    }
    let bad = || cannot_cast(from, to);
    Ok(match (v, to) {
        // Same type (possibly a new typmod).
        (Value::Numeric(n), DataType::Numeric(typmod)) => match typmod {
            Some((p, s)) => Value::numeric(n.apply_typmod(*p, *s)?),
            None => v.clone(),
        },
        (Value::Bool(b), DataType::Bool) => Value::Bool(*b),
        (Value::Bool(b), DataType::Int4) => Value::Int4(*b as i32),
        (Value::Int4(i), DataType::Bool) => Value::Bool(*i != 0),
        (Value::Date(d), DataType::Date) => Value::Date(*d),
        (Value::Date(d), DataType::Timestamp(_)) => Value::Timestamp(date_to_timestamp(*d)?),
        (Value::Timestamp(t), DataType::Timestamp(p)) => {
            Value::Timestamp(crate::types::datetime::round_timestamp(*t, *p)?)
        }
        (Value::Timestamp(t), DataType::Date) => Value::Date(timestamp_to_date(*t)),
        (Value::Date(d), DataType::TimestampTz(_)) => {
            Value::TimestampTz(crate::types::datetime::tstz::date_to_timestamptz(*d)?)
        }
        (Value::Timestamp(t), DataType::TimestampTz(p)) => {
            let r = crate::types::datetime::tstz::timestamp_to_timestamptz(*t)?;
            Value::TimestampTz(crate::types::datetime::round_timestamp(r, *p)?)
        }
        (Value::TimestampTz(t), DataType::TimestampTz(p)) => {
            Value::TimestampTz(crate::types::datetime::round_timestamp(*t, *p)?)
        }
        (Value::TimestampTz(t), DataType::Timestamp(p)) => {
            let r = crate::types::datetime::tstz::timestamptz_to_timestamp(*t)?;
            Value::Timestamp(crate::types::datetime::round_timestamp(r, *p)?)
        }
        (Value::TimestampTz(t), DataType::Date) => {
            Value::Date(crate::types::datetime::tstz::timestamptz_to_date(*t))
        }
        (Value::Interval(iv), DataType::Interval) => Value::Interval(*iv),
        (_, DataType::Time(_) | DataType::TimeTz(_)) | (Value::Time(_) | Value::TimeTz(..), _) => {
            return time_cast(v, to).ok_or_else(bad);
        }
        (Value::Bytea(_), DataType::Bytea) => v.clone(),
        (Value::Jsonb(_), DataType::Jsonb) => v.clone(),
        (Value::Jsonb(j), DataType::Json) => Value::text(&j.to_text()),
        (Value::Jsonb(j), _) => {
            return super::json::convert::cast_jsonb(j, to).ok_or_else(bad)?;
        }
        (Value::Array(a), DataType::Array(elem)) => {
            let items = a
                .items
                .iter()
                .map(|x| cast_from(x, &a.elem, elem, ctx))
                .collect::<Result<Vec<_>>>()?;
            super::array::Array {
                elem: **elem,
                lower: a.lower,
                items,
            }
            .into_value()
        }
        (Value::Int2(_) | Value::Int4(_) | Value::Int8(_), _) => {
            int_to(v.as_i64().expect("integer variant"), to).ok_or_else(bad)??
        }
        (Value::Float4(f), _) => float_to(*f as f64, true, to).ok_or_else(bad)??,
        (Value::Float8(f), _) => float_to(*f, false, to).ok_or_else(bad)??,
        (Value::Numeric(n), _) => numeric_to(n, to).ok_or_else(bad)??,
        _ => return Err(bad()),
    })
}

/// The casts to and from `time` and `timetz` (`None`: no such cast).
/// A timestamp's infinities become NULL, as in PostgreSQL.
fn time_cast(v: &Value, to: &DataType) -> Option<Value> {
    use crate::types::datetime::time as tm;
    use DataType as T;
    use Value as V;
    let time =
        |t: Option<i64>, p: &Option<u8>| t.map_or(V::Null, |t| V::Time(tm::round_time(t, *p)));
    Some(match (v, to) {
        (V::Time(t), T::Time(p)) => V::Time(tm::round_time(*t, *p)),
        (V::TimeTz(t, z), T::TimeTz(p)) => V::TimeTz(tm::round_time(*t, *p), *z),
        (V::Time(t), T::Interval) => V::Interval(tm::time_diff(*t, 0)),
        (V::Interval(iv), T::Time(p)) => time(Some(tm::interval_to_time(iv)), p),
        (V::Time(t), T::TimeTz(p)) => {
            let (t, z) = tm::time_to_timetz(*t, crate::types::datetime::system_now());
            V::TimeTz(tm::round_time(t, *p), z)
        }
        (V::TimeTz(t, _), T::Time(p)) => time(Some(*t), p),
        (V::Timestamp(ts), T::Time(p)) => time(tm::timestamp_to_time(*ts), p),
        (V::TimestampTz(ts), T::Time(p)) => time(tm::timestamptz_to_time(*ts), p),
        (V::TimestampTz(ts), T::TimeTz(p)) => match tm::timestamptz_to_timetz(*ts) {
            Some((t, z)) => V::TimeTz(tm::round_time(t, *p), z),
            None => V::Null,
        },
        _ => return None,
    })
}

/// Integer to a numeric type; `None` for a non-numeric target.
fn int_to(i: i64, to: &DataType) -> Option<Result<Value>> {
    Some(match to {
        DataType::Int2 => i16::try_from(i)
            .map(Value::Int2)
            .map_err(|_| int2_out_of_range()),
        DataType::Int4 => i32::try_from(i)
            .map(Value::Int4)
            .map_err(|_| int4_out_of_range()),
        DataType::Int8 => Ok(Value::Int8(i)),
        DataType::Float4 => Ok(Value::Float4(i as f32)),
        DataType::Float8 => Ok(Value::Float8(i as f64)),
        DataType::Numeric(typmod) => {
            let n = Numeric::from_i64(i);
            match typmod {
                Some((p, s)) => n.apply_typmod(*p, *s).map(Value::numeric),
                None => Ok(Value::numeric(n)),
            }
        }
        _ => return None,
    })
}

/// Float to a numeric type (`is_f4`: the source is `real`).
fn float_to(f: f64, is_f4: bool, to: &DataType) -> Option<Result<Value>> {
    let int = |min: i64, max: i64, e: fn() -> Error| float_to_int(f, min, max).ok_or_else(e);
    Some(match to {
        DataType::Int2 => {
            int(i16::MIN as i64, i16::MAX as i64, int2_out_of_range).map(|i| Value::Int2(i as i16))
        }
        DataType::Int4 => {
            int(i32::MIN as i64, i32::MAX as i64, int4_out_of_range).map(|i| Value::Int4(i as i32))
        }
        DataType::Int8 => int(i64::MIN, i64::MAX, int8_out_of_range).map(Value::Int8),
        DataType::Float8 => Ok(Value::Float8(f)),
        DataType::Float4 => {
            let r = f as f32;
            if r.is_infinite() && f.is_finite() {
                Err(float::overflow())
            } else if r == 0.0 && f != 0.0 {
                Err(float::underflow())
            } else {
                Ok(Value::Float4(r))
            }
        }
        DataType::Numeric(typmod) => {
            let n = Numeric::from_float(f, if is_f4 { 6 } else { 15 });
            match typmod {
                Some((p, s)) => n.apply_typmod(*p, *s).map(Value::numeric),
                None => Ok(Value::numeric(n)),
            }
        }
        _ => return None,
    })
}

/// Numeric to another numeric type.
fn numeric_to(n: &Numeric, to: &DataType) -> Option<Result<Value>> {
    let int = |min: i128, max: i128, e: fn() -> Error| -> Result<i128> {
        match n.kind() {
            NumKind::NaN => Err(err!(FeatureNotSupported, "cannot convert NaN to {to}")),
            NumKind::PosInf | NumKind::NegInf => {
                Err(err!(FeatureNotSupported, "cannot convert infinity to {to}"))
            }
            NumKind::Finite => n
                .to_i128_round()
                .filter(|v| (min..=max).contains(v))
                .ok_or_else(e),
        }
    };
    Some(match to {
        DataType::Int2 => int(i16::MIN as i128, i16::MAX as i128, int2_out_of_range)
            .map(|i| Value::Int2(i as i16)),
        DataType::Int4 => int(i32::MIN as i128, i32::MAX as i128, int4_out_of_range)
            .map(|i| Value::Int4(i as i32)),
        DataType::Int8 => int(i64::MIN as i128, i64::MAX as i128, int8_out_of_range)
            .map(|i| Value::Int8(i as i64)),
        // As PostgreSQL's numeric_float8/4: through the text form, so a
        // finite value past the type's range fails as its input would.
        DataType::Float8 | DataType::Float4 if n.is_finite() => {
            let text = n.to_string();
            if *to == DataType::Float8 {
                super::float::parse_float8(&text).map(Value::Float8)
            } else {
                super::float::parse_float4(&text).map(Value::Float4)
            }
        }
        DataType::Float8 => Ok(Value::Float8(n.to_f64())),
        DataType::Float4 => Ok(Value::Float4(n.to_f64() as f32)),
        _ => return None,
    })
}

/// The type both sides of a comparison, `UNION` column or `CASE` branch
/// unify to, following PostgreSQL's `select_common_type` for the common
/// cases: unknown adopts the other side, numbers widen, strings become
/// text (`char` with `char` stays `char`), date with timestamp is
/// timestamp. `None` when the types do not unify.
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    match (a, b) {
        (Unknown, Unknown) => Some(Text),
        (Unknown, t) | (t, Unknown) => Some(*t),
        (x, y) if x == y => Some(*x),
        (Array(x), Array(y)) => common_type(x, y).map(DataType::array_of),
        (Char(_), Char(_)) => Some(Char(a_len(a).max(a_len(b)))),
        (Varchar(_), Varchar(_)) => Some(Varchar(None)),
        (Numeric(_), Numeric(_)) => Some(Numeric(None)),
        (x, y) if x.is_string() && y.is_string() => Some(Text),
        (Date | Timestamp(_), Timestamp(_)) | (Timestamp(_), Date) => Some(Timestamp(None)),
        (Date | Timestamp(_) | TimestampTz(_), TimestampTz(_))
        | (TimestampTz(_), Date | Timestamp(_)) => Some(TimestampTz(None)),
        (Time(_), Time(_)) => Some(Time(None)),
        (Time(_) | TimeTz(_), TimeTz(_)) | (TimeTz(_), Time(_)) => Some(TimeTz(None)),
        (x, y) => match (numeric_rank(x), numeric_rank(y)) {
            (Some(rx), Some(ry)) => Some(if rx >= ry {
                x.without_typmod()
            } else {
                y.without_typmod()
            }),
            _ => None,
        },
    }
}

fn a_len(t: &DataType) -> u32 {
    match t {
        DataType::Char(n) => *n,
        _ => 0,
    }
}

/// Whether a value of category `from` can reach `to` implicitly; a helper
/// for the binder's function resolution.
pub fn can_implicitly_cast(from: &DataType, to: &DataType) -> bool {
    cast_kind(from, to) == Some(CastContext::Implicit) || (from.category() == TypeCategory::Unknown)
}

#[cfg(test)]
mod tests {
    //! Expected strings and messages come from PostgreSQL 15 on this machine.
    use super::*;
    use crate::types::io::value_to_string;

    fn c(text: &str, from: DataType, to: DataType) -> Result<String> {
        let v = parse_value(text, &from)?;
        cast_from(&v, &from, &to, CastContext::Explicit).map(|v| value_to_string(&v))
    }

    #[test]
    fn numeric_casts_round_and_check_ranges() {
        use DataType::*;
        assert_eq!(c("2.5", Float8, Int4).unwrap(), "2");
        assert_eq!(c("3.5", Float8, Int4).unwrap(), "4");
        assert_eq!(c("-2.5", Numeric(None), Int4).unwrap(), "-3");
        assert_eq!(
            c("2147483647.5", Numeric(None), Int4).unwrap_err().message,
            "integer out of range"
        );
        assert_eq!(
            c("NaN", Numeric(None), Int4).unwrap_err().message,
            "cannot convert NaN to integer"
        );
        assert_eq!(
            c("inf", Numeric(None), Int4).unwrap_err().message,
            "cannot convert infinity to integer"
        );
        assert_eq!(
            c("40000", Int4, Int2).unwrap_err().message,
            "smallint out of range"
        );
        assert_eq!(c("0.1", Float4, Float8).unwrap(), "0.10000000149011612");
        assert_eq!(
            c("1e300", Float8, Float4).unwrap_err().message,
            "value out of range: overflow"
        );
        assert_eq!(c("0.1", Float8, Numeric(None)).unwrap(), "0.1");
        assert_eq!(
            c("12.345", Numeric(None), Numeric(Some((4, 2)))).unwrap(),
            "12.35"
        );
        assert_eq!(
            c("123.45", Numeric(None), Numeric(Some((4, 2))))
                .unwrap_err()
                .message,
            "numeric field overflow"
        );
        assert_eq!(c("1", Int4, Bool).unwrap(), "t");
        assert_eq!(c("7", Int8, Numeric(None)).unwrap(), "7");
    }

    #[test]
    fn string_casts() {
        use DataType::*;
        assert_eq!(c("true", Bool, Text).unwrap(), "true");
        assert_eq!(c("abcd", Text, Varchar(Some(2))).unwrap(), "ab");
        assert_eq!(c("ab", Text, Char(4)).unwrap(), "ab  ");
        assert_eq!(c("ab", Char(4), Text).unwrap(), "ab");
        assert_eq!(c("1999-01-08", Date, Text).unwrap(), "1999-01-08");
        assert_eq!(c("1.50", Numeric(None), Text).unwrap(), "1.50");
        assert_eq!(c(" 42 ", Text, Int4).unwrap(), "42");
        assert_eq!(
            c("x", Text, Int4).unwrap_err().message,
            "invalid input syntax for type integer: \"x\""
        );
        assert_eq!(
            c("1999-01-08 10:00", Timestamp(None), Date).unwrap(),
            "1999-01-08"
        );
        let v = Value::text("abcd");
        let e = cast_assign(&v, &Text, &Varchar(Some(2))).unwrap_err();
        assert_eq!(e.message, "value too long for type character varying(2)");
        assert_eq!(
            c("2", Int8, Bool).unwrap_err().message,
            "cannot cast type bigint to boolean"
        );
    }

    #[test]
    fn contexts_follow_pg_cast() {
        use CastContext::*;
        use DataType::*;
        assert_eq!(cast_kind(&Int4, &Int8), Some(Implicit));
        assert_eq!(cast_kind(&Int8, &Int4), Some(Assignment));
        assert_eq!(cast_kind(&Int4, &Float8), Some(Implicit));
        assert_eq!(cast_kind(&Float8, &Numeric(None)), Some(Assignment));
        assert_eq!(cast_kind(&Numeric(None), &Float8), Some(Implicit));
        assert_eq!(cast_kind(&Int4, &Text), Some(Assignment));
        assert_eq!(cast_kind(&Text, &Int4), Some(Explicit));
        assert_eq!(cast_kind(&Int4, &Bool), Some(Explicit));
        assert_eq!(cast_kind(&Int8, &Bool), None);
        assert_eq!(cast_kind(&Varchar(Some(3)), &Text), Some(Implicit));
        assert_eq!(cast_kind(&Date, &Timestamp(None)), Some(Implicit));
        assert_eq!(cast_kind(&Interval, &Int4), None);
        assert_eq!(common_type(&Int4, &Numeric(None)), Some(Numeric(None)));
        assert_eq!(common_type(&Unknown, &Date), Some(Date));
        assert_eq!(common_type(&Varchar(Some(3)), &Text), Some(Text));
        assert_eq!(common_type(&Int4, &Text), None);
    }
}
