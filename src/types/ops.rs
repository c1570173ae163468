//! Operators: type resolution for the binder ([`resolve_binary`]) and
//! evaluation over values ([`eval_binary`], [`negate`]).
//!
//! Resolution follows PostgreSQL's operator catalogue for heapdb's types:
//! numbers widen along int2 < int4 < int8 < numeric < float8 (`real` with
//! `real` stays `real`; `real` with anything else is `float8`), an `unknown`
//! literal adopts the other side's type, `||` makes text of anything,
//! date/timestamp/interval arithmetic has its own signatures (`date - date`
//! is `integer`, `timestamp - timestamp` is `interval`, ...). The binder casts
//! each operand to the first two types returned, then calls
//! [`eval_binary`], which expects operands of exactly those types (NULL
//! gives NULL). Errors are PostgreSQL's: `integer out of range`, `division by
//! zero`, `value out of range: overflow`.

use super::cast::{common_type, CastContext};
use super::datatype::DataType;
use super::datetime::arith as dt;
use super::datetime::interval as iv;
use super::datetime::time;
use super::datetime::tstz;
use super::float::{add_f64, check_f32, div_f64, mul_f64, sub_f64};
use super::int::*;
use super::numeric::Numeric;
use super::value::Value;
use super::{compare::compare_typed, io::format_value};
use crate::err;
use crate::error::{Error, Result};
use std::cmp::Ordering;
use std::sync::Arc;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `^`
    Pow,
    /// `||`
    Concat,
    /// `=`
    Eq,
    /// `<>` / `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl BinaryOp {
    /// The operator as SQL spells it.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Pow => "^",
            BinaryOp::Concat => "||",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
        }
    }

    /// Whether this is a comparison (result `boolean`).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::NotEq
                | BinaryOp::Lt
                | BinaryOp::LtEq
                | BinaryOp::Gt
                | BinaryOp::GtEq
        )
    }
}

/// The error the binder reports when [`resolve_binary`] finds nothing:
/// `operator does not exist: integer % double precision` (42883) with
/// PostgreSQL's hint, or `operator is not unique: unknown + unknown` (42725
/// reported as 42883's neighbour 42P18 is not used; we keep 42883).
pub fn operator_error(op: BinaryOp, left: &DataType, right: &DataType) -> Error {
    if *left == DataType::Unknown && *right == DataType::Unknown {
        return err!(UndefinedFunction, "operator is not unique: unknown {} unknown", op.symbol())
            .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts.");
    }
    // Messages name the types without their precision (`format_type_be`).
    let plain = |t: &DataType| match t {
        DataType::Time(_) | DataType::TimeTz(_) => t.without_typmod(),
        t => *t,
    };
    let (left, right) = (&plain(left), &plain(right));
    if op == BinaryOp::Add && matches!((left, right), (DataType::Time(_), DataType::Time(_))) {
        // PostgreSQL finds `time + interval` and `time + date` both
        // reachable through the implicit casts of the right operand.
        return err!(AmbiguousFunction, "operator is not unique: {left} + {right}")
            .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts.");
    }
    err!(UndefinedFunction, "operator does not exist: {left} {} {right}", op.symbol())
        .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

/// Arithmetic result type of two numeric types.
fn numeric_result(l: &DataType, r: &DataType) -> Option<DataType> {
    use DataType::*;
    if !l.is_numeric() || !r.is_numeric() {
        return None;
    }
    Some(match (l, r) {
        (Float4, Float4) => Float4,
        (Float4, _) | (_, Float4) => Float8,
        _ => common_type(l, r)?.without_typmod(),
    })
}

/// `timestamp(p)` as `timestamp`; other types unchanged.
fn strip_timestamp_typmod(t: &DataType) -> DataType {
    match t {
        DataType::Timestamp(_) => DataType::Timestamp(None),
        DataType::TimestampTz(_) => DataType::TimestampTz(None),
        t => *t,
    }
}

/// Resolves `left op right` to (type to cast left to, type to cast right
/// to, result type), or `None` when no operator exists (see
/// [`operator_error`]).
pub fn resolve_binary(
    op: BinaryOp,
    left: &DataType,
    right: &DataType,
) -> Option<(DataType, DataType, DataType)> {
    use BinaryOp::*;
    use DataType::*;
    // timestamp(p)'s operators are timestamp's: the precision only rounds.
    let (left, right) = (
        &strip_timestamp_typmod(left),
        &strip_timestamp_typmod(right),
    );
    if op.is_comparison() && (*left == Json || *right == Json) {
        // `json` has no comparison operators (`jsonb` has).
        return None;
    }
    if op.is_comparison() {
        // As PostgreSQL resolves them: char(n) compares as bpchar with a
        // literal typed bpchar (no length: `tag = 't1'::bpchar`) or with
        // another char(m) as it is, varchar as bpchar (`(code)::bpchar =
        // tag`); otherwise varchar has no comparison operators of its own
        // and compares as text (`(code)::text = 'c1'::text`).
        match (left, right) {
            (Char(_), Unknown) => return Some((*left, Char(0), Bool)),
            (Unknown, Char(_)) => return Some((Char(0), *right, Bool)),
            (Char(_), Char(_)) => return Some((*left, *right, Bool)),
            (Varchar(_), Char(_)) => return Some((Char(0), *right, Bool)),
            (Char(_), Varchar(_)) => return Some((*left, Char(0), Bool)),
            _ => {}
        }
    }
    let (l, r) = match (left, right) {
        (Unknown, Unknown) if op == Concat || op.is_comparison() => (Text, Text),
        (Unknown, Unknown) => return None,
        (Unknown, t) if op != Concat => (*t, *t),
        (t, Unknown) if op != Concat => (*t, *t),
        _ => (*left, *right),
    };
    if op == Concat && matches!((l, r), (Bytea, Bytea | Unknown) | (Unknown, Bytea)) {
        return Some((Bytea, Bytea, Bytea));
    }
    if op == Concat {
        return if l.is_string() || r.is_string() || l == Unknown || r == Unknown {
            Some((Text, Text, Text))
        } else {
            None
        };
    }
    if op.is_comparison() {
        let t = match common_type(&l, &r)? {
            Varchar(_) => Text,
            t => t,
        };
        return Some((t, t, Bool));
    }
    if let Some(t) = numeric_result(&l, &r) {
        return match op {
            Mod if matches!(t, Float4 | Float8) => None,
            Pow => {
                let p = if t == Numeric(None) { t } else { Float8 };
                Some((p, p, p))
            }
            _ => Some((t, t, t)),
        };
    }
    let int = |t: &DataType| matches!(t, Int2 | Int4 | Int8);
    match (op, &l, &r) {
        (Add, Date, t) | (Sub, Date, t) if int(t) => Some((Date, Int4, Date)),
        (Add, t, Date) if int(t) => Some((Int4, Date, Date)),
        (Sub, Date, Date) => Some((Date, Date, Int4)),
        (Add, Date | Timestamp(_), Interval) | (Sub, Date | Timestamp(_), Interval) => {
            Some((Timestamp(None), Interval, Timestamp(None)))
        }
        (Add, Interval, Date | Timestamp(_)) => Some((Interval, Timestamp(None), Timestamp(None))),
        (Add | Sub, TimestampTz(_), Interval) => {
            Some((TimestampTz(None), Interval, TimestampTz(None)))
        }
        (Add, Interval, TimestampTz(_)) => Some((Interval, TimestampTz(None), TimestampTz(None))),
        (Sub, TimestampTz(_), Date | Timestamp(_) | TimestampTz(_))
        | (Sub, Date | Timestamp(_), TimestampTz(_)) => {
            Some((TimestampTz(None), TimestampTz(None), Interval))
        }
        (Sub, Timestamp(_), Timestamp(_))
        | (Sub, Date, Timestamp(_))
        | (Sub, Timestamp(_), Date) => Some((Timestamp(None), Timestamp(None), Interval)),
        (Add | Sub, Interval, Interval) => Some((Interval, Interval, Interval)),
        (Mul | Div, Interval, t) if t.is_numeric() => Some((Interval, Float8, Interval)),
        (Mul, t, Interval) if t.is_numeric() => Some((Float8, Interval, Interval)),
        _ => resolve_time(op, &l, &r),
    }
}

/// The operators of `time` and `timetz` (PostgreSQL's `date.c`): `time ±
/// interval`, `time - time`, `date + time`, `timetz ± interval`, `date +
/// timetz`; a timestamp minus or plus a time goes through `interval`, as
/// PostgreSQL's implicit `time -> interval` cast makes it.
fn resolve_time(
    op: BinaryOp,
    l: &DataType,
    r: &DataType,
) -> Option<(DataType, DataType, DataType)> {
    use BinaryOp::*;
    use DataType::*;
    match (op, l, r) {
        (Add | Sub, Time(_), Interval) => Some((Time(None), Interval, Time(None))),
        (Add, Interval, Time(_)) => Some((Interval, Time(None), Time(None))),
        (Add | Sub, TimeTz(_), Interval) => Some((TimeTz(None), Interval, TimeTz(None))),
        (Add, Interval, TimeTz(_)) => Some((Interval, TimeTz(None), TimeTz(None))),
        (Sub, Time(_), Time(_)) => Some((Time(None), Time(None), Interval)),
        (Add, Date, Time(_)) => Some((Date, Time(None), Timestamp(None))),
        (Add, Time(_), Date) => Some((Time(None), Date, Timestamp(None))),
        (Add, Date, TimeTz(_)) => Some((Date, TimeTz(None), TimestampTz(None))),
        (Add, TimeTz(_), Date) => Some((TimeTz(None), Date, TimestampTz(None))),
        (Add | Sub, Date | Timestamp(_), Time(_)) => {
            Some((Timestamp(None), Interval, Timestamp(None)))
        }
        (Add | Sub, TimestampTz(_), Time(_)) => {
            Some((TimestampTz(None), Interval, TimestampTz(None)))
        }
        _ => None,
    }
}

/// Evaluates `a op b` for operands already cast to the types
/// [`resolve_binary`] returned; `ty` is the operand type of comparisons
/// (so `char(n)` ignores trailing spaces). NULL in, NULL out.
pub fn eval_binary(op: BinaryOp, a: &Value, b: &Value) -> Result<Value> {
    eval_binary_typed(op, a, b, None)
}

/// [`eval_binary`] with the comparison operand type known.
pub fn eval_binary_typed(
    op: BinaryOp,
    a: &Value,
    b: &Value,
    cmp_type: Option<&DataType>,
) -> Result<Value> {
    use BinaryOp::*;
    use Value as V;
    if a.is_null() || b.is_null() {
        return Ok(V::Null);
    }
    if op.is_comparison() {
        let o = compare_typed(a, b, cmp_type.unwrap_or(&DataType::Text));
        return Ok(V::Bool(match op {
            Eq => o == Ordering::Equal,
            NotEq => o != Ordering::Equal,
            Lt => o == Ordering::Less,
            LtEq => o != Ordering::Greater,
            Gt => o == Ordering::Greater,
            _ => o != Ordering::Less,
        }));
    }
    let no_op = || {
        let (l, r) = (
            a.data_type().unwrap_or(DataType::Unknown),
            b.data_type().unwrap_or(DataType::Unknown),
        );
        operator_error(op, &l, &r)
    };
    Ok(match (op, a, b) {
        (Concat, V::Bytea(x), V::Bytea(y)) => V::Bytea([&x[..], &y[..]].concat().into()),
        (Concat, _, _) => {
            let mut s = String::new();
            format_value(a, &mut s);
            format_value(b, &mut s);
            V::Text(Arc::from(s))
        }
        (_, V::Int2(x), V::Int2(y)) => V::Int2(match op {
            Add => add_i16(*x, *y)?,
            Sub => sub_i16(*x, *y)?,
            Mul => mul_i16(*x, *y)?,
            Div => div_i16(*x, *y)?,
            Mod => rem_i16(*x, *y)?,
            _ => return Err(no_op()),
        }),
        (_, V::Int4(x), V::Int4(y)) => V::Int4(match op {
            Add => add_i32(*x, *y)?,
            Sub => sub_i32(*x, *y)?,
            Mul => mul_i32(*x, *y)?,
            Div => div_i32(*x, *y)?,
            Mod => rem_i32(*x, *y)?,
            _ => return Err(no_op()),
        }),
        (_, V::Int8(x), V::Int8(y)) => V::Int8(match op {
            Add => add_i64(*x, *y)?,
            Sub => sub_i64(*x, *y)?,
            Mul => mul_i64(*x, *y)?,
            Div => div_i64(*x, *y)?,
            Mod => rem_i64(*x, *y)?,
            _ => return Err(no_op()),
        }),
        (_, V::Float8(x), V::Float8(y)) => V::Float8(float8_op(op, *x, *y)?),
        (_, V::Float4(x), V::Float4(y)) => {
            let (x, y) = (*x, *y);
            let inf = x.is_infinite() || y.is_infinite();
            V::Float4(match op {
                Add => check_f32(x + y, inf, true)?,
                Sub => check_f32(x - y, inf, true)?,
                Mul => check_f32(x * y, inf, x == 0.0 || y == 0.0)?,
                Div => {
                    // NaN / 0 is NaN, as PostgreSQL's float4div.
                    if y == 0.0 && !x.is_nan() {
                        return Err(division_by_zero());
                    }
                    check_f32(x / y, x.is_infinite(), x == 0.0 || y.is_infinite())?
                }
                _ => return Err(no_op()),
            })
        }
        (_, V::Numeric(x), V::Numeric(y)) => V::numeric(match op {
            Add => x.add(y),
            Sub => x.sub(y),
            Mul => x.mul(y),
            Div => x.div(y)?,
            Mod => x.rem(y)?,
            Pow => x.power(y)?,
            _ => return Err(no_op()),
        }),
        (Add, V::Date(d), V::Int4(n)) | (Add, V::Int4(n), V::Date(d)) => {
            V::Date(dt::date_add_days(*d, *n as i64)?)
        }
        (Sub, V::Date(d), V::Int4(n)) => V::Date(dt::date_add_days(*d, -(*n as i64))?),
        (Sub, V::Date(x), V::Date(y)) => V::Int4(dt::date_diff(*x, *y)?),
        (Add, V::Timestamp(t), V::Interval(i)) | (Add, V::Interval(i), V::Timestamp(t)) => {
            V::Timestamp(dt::timestamp_add_interval(*t, i)?)
        }
        (Sub, V::Timestamp(t), V::Interval(i)) => V::Timestamp(dt::timestamp_sub_interval(*t, i)?),
        (Sub, V::Timestamp(x), V::Timestamp(y)) | (Sub, V::TimestampTz(x), V::TimestampTz(y)) => {
            V::Interval(dt::timestamp_diff(*x, *y)?)
        }
        (Add, V::TimestampTz(t), V::Interval(i)) | (Add, V::Interval(i), V::TimestampTz(t)) => {
            V::TimestampTz(tstz::timestamptz_add_interval(*t, i)?)
        }
        (Sub, V::TimestampTz(t), V::Interval(i)) => {
            V::TimestampTz(tstz::timestamptz_sub_interval(*t, i)?)
        }
        (Add, V::Interval(x), V::Interval(y)) => V::Interval(iv::add(x, y)?),
        (Sub, V::Interval(x), V::Interval(y)) => V::Interval(iv::sub(x, y)?),
        (Mul, V::Interval(i), V::Float8(f)) | (Mul, V::Float8(f), V::Interval(i)) => {
            V::Interval(iv::mul(i, *f)?)
        }
        (Div, V::Interval(i), V::Float8(f)) => V::Interval(iv::div(i, *f)?),
        (Add, V::Time(t), V::Interval(i)) | (Add, V::Interval(i), V::Time(t)) => {
            V::Time(time::time_add_interval(*t, i))
        }
        (Sub, V::Time(t), V::Interval(i)) => V::Time(time::time_sub_interval(*t, i)),
        (Add, V::TimeTz(t, z), V::Interval(i)) | (Add, V::Interval(i), V::TimeTz(t, z)) => {
            V::TimeTz(time::time_add_interval(*t, i), *z)
        }
        (Sub, V::TimeTz(t, z), V::Interval(i)) => V::TimeTz(time::time_sub_interval(*t, i), *z),
        (Sub, V::Time(a), V::Time(b)) => V::Interval(time::time_diff(*a, *b)),
        (Add, V::Date(d), V::Time(t)) | (Add, V::Time(t), V::Date(d)) => {
            V::Timestamp(time::date_add_time(*d, *t)?)
        }
        (Add, V::Date(d), V::TimeTz(t, z)) | (Add, V::TimeTz(t, z), V::Date(d)) => {
            V::TimestampTz(time::date_add_timetz(*d, *t, *z)?)
        }
        _ => return Err(no_op()),
    })
}

/// float8 arithmetic with PostgreSQL's checks; `^` is `power()`.
fn float8_op(op: BinaryOp, x: f64, y: f64) -> Result<f64> {
    match op {
        BinaryOp::Add => add_f64(x, y),
        BinaryOp::Sub => sub_f64(x, y),
        BinaryOp::Mul => mul_f64(x, y),
        BinaryOp::Div => div_f64(x, y),
        BinaryOp::Pow => power_f64(x, y),
        _ => Err(operator_error(op, &DataType::Float8, &DataType::Float8)),
    }
}

/// `power(float8, float8)` with PostgreSQL's domain errors.
pub fn power_f64(x: f64, y: f64) -> Result<f64> {
    if x == 0.0 && y < 0.0 {
        return Err(err!(
            InvalidArgumentForPowerFunction,
            "zero raised to a negative power is undefined"
        ));
    }
    if x < 0.0 && y.fract() != 0.0 && y.is_finite() {
        return Err(err!(
            InvalidArgumentForPowerFunction,
            "a negative number raised to a non-integer power yields a complex result"
        ));
    }
    let r = x.powf(y);
    let inputs_infinite = x.is_infinite() || y.is_infinite();
    if r.is_infinite() && !inputs_infinite {
        return Err(super::float::overflow());
    }
    if r == 0.0 && x != 0.0 && !inputs_infinite {
        return Err(super::float::underflow());
    }
    Ok(r)
}

/// Unary minus.
pub fn negate(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int2(x) => Value::Int2(neg_i16(*x)?),
        Value::Int4(x) => Value::Int4(neg_i32(*x)?),
        Value::Int8(x) => Value::Int8(neg_i64(*x)?),
        Value::Float4(x) => Value::Float4(-x),
        Value::Float8(x) => Value::Float8(-x),
        Value::Numeric(n) => Value::numeric(n.neg()),
        Value::Interval(i) => Value::Interval(iv::neg(i)?),
        other => {
            let t = other.data_type().unwrap_or(DataType::Unknown);
            return Err(err!(UndefinedFunction, "operator does not exist: - {t}"));
        }
    })
}

/// The context the binder uses for operand casts: always implicit.
pub const OPERAND_CAST: CastContext = CastContext::Implicit;

/// A numeric value from any number (for functions taking numeric).
pub fn to_numeric(v: &Value) -> Option<Numeric> {
    Some(match v {
        Value::Int2(x) => Numeric::from_i64(*x as i64),
        Value::Int4(x) => Numeric::from_i64(*x as i64),
        Value::Int8(x) => Numeric::from_i64(*x),
        Value::Numeric(n) => (**n).clone(),
        Value::Float4(f) => Numeric::from_float(*f as f64, 6),
        Value::Float8(f) => Numeric::from_float(*f, 15),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    //! Expected results come from PostgreSQL 15 on this machine
    //! (`select 1 + 1.5::float4, pg_typeof(...)`).
    use super::*;
    use crate::types::cast::cast_from;
    use crate::types::io::{parse_value_at, value_to_string};
    use BinaryOp::*;
    use DataType::*;

    /// Resolves, casts literals of the given types, evaluates, prints.
    fn run(op: BinaryOp, a: (&str, DataType), b: (&str, DataType)) -> Result<(String, DataType)> {
        let (lt, rt, res) =
            resolve_binary(op, &a.1, &b.1).ok_or_else(|| operator_error(op, &a.1, &b.1))?;
        let av = cast_from(
            &parse_value_at(a.0, &a.1, 0)?,
            &a.1,
            &lt,
            CastContext::Implicit,
        )?;
        let bv = cast_from(
            &parse_value_at(b.0, &b.1, 0)?,
            &b.1,
            &rt,
            CastContext::Implicit,
        )?;
        let v = eval_binary_typed(op, &av, &bv, Some(&lt))?;
        Ok((value_to_string(&v), res))
    }

    fn ok(op: BinaryOp, a: (&str, DataType), b: (&str, DataType)) -> (String, String) {
        let (s, t) = run(op, a, b).unwrap();
        (s, t.to_string())
    }

    fn s(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn results_and_types_match_postgres() {
        assert_eq!(
            ok(Add, ("1", Int4), ("1.5", Float4)),
            s("2.5", "double precision")
        );
        assert_eq!(
            ok(Add, ("1.5", Numeric(None)), ("1.5", Float4)),
            s("3", "double precision")
        );
        assert_eq!(
            ok(Pow, ("2", Int4), ("3", Int4)),
            s("8", "double precision")
        );
        assert_eq!(
            ok(Pow, ("2", Numeric(None)), ("3", Int4)),
            s("8.0000000000000000", "numeric")
        );
        assert_eq!(
            ok(Mod, ("5", Int4), ("2.5", Numeric(None))),
            s("0.0", "numeric")
        );
        assert_eq!(
            ok(Concat, ("ab", Char(3)), ("x", Unknown)),
            s("abx", "text")
        );
        assert_eq!(ok(Concat, ("1", Int4), ("a", Unknown)), s("1a", "text"));
        assert_eq!(
            ok(Sub, ("2000-01-01", Date), ("1999-01-01", Date)),
            s("365", "integer")
        );
        assert_eq!(
            ok(Add, ("2000-01-01", Date), ("1", Int4)),
            s("2000-01-02", "date")
        );
        assert_eq!(
            ok(Add, ("2000-01-01", Date), ("1 hour", Interval)),
            s("2000-01-01 01:00:00", "timestamp without time zone")
        );
        assert_eq!(
            ok(Sub, ("2000-01-01", Date), ("1999-12-31", Timestamp(None))),
            s("1 day", "interval")
        );
        assert_eq!(
            ok(Mul, ("1 day", Interval), ("2", Int4)),
            s("2 days", "interval")
        );
        assert_eq!(
            ok(Mul, ("2.5", Numeric(None)), ("1 day", Interval)),
            s("2 days 12:00:00", "interval")
        );
        assert_eq!(ok(Div, ("7", Int4), ("2", Int4)), s("3", "integer"));
        assert_eq!(ok(Div, ("-7", Int4), ("2", Int4)), s("-3", "integer"));
        assert_eq!(
            ok(Div, ("7.0", Numeric(None)), ("2", Int4)),
            s("3.5000000000000000", "numeric")
        );
        assert_eq!(ok(Add, ("1", Unknown), ("2", Int4)), s("3", "integer"));
        assert_eq!(ok(Add, ("1", Int2), ("1", Int2)), s("2", "smallint"));
        assert_eq!(ok(Add, ("1", Int4), ("1", Int8)), s("2", "bigint"));
        assert_eq!(
            ok(Lt, ("abc", Unknown), ("abd", Unknown)),
            s("t", "boolean")
        );
        assert_eq!(ok(Eq, ("a", Char(3)), ("a ", Char(2))), s("t", "boolean"));
        assert_eq!(ok(Mul, ("1.5", Float4), ("2", Float4)), s("3", "real"));
        assert_eq!(
            ok(Eq, ("1", Int4), ("1.0", Numeric(None))),
            s("t", "boolean")
        );
    }

    #[test]
    fn errors_match_postgres() {
        let e = run(Add, ("32767", Int2), ("1", Int2)).unwrap_err();
        assert_eq!(e.message, "smallint out of range");
        let e = run(Div, ("1", Int2), ("0", Int2)).unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.code.code()),
            ("division by zero", "22012")
        );
        let e = run(Mod, ("5.5", Numeric(None)), ("2", Float8)).unwrap_err();
        assert_eq!(
            e.message,
            "operator does not exist: numeric % double precision"
        );
        let e = run(Add, ("1", Unknown), ("2", Unknown)).unwrap_err();
        assert_eq!(e.message, "operator is not unique: unknown + unknown");
        let e = run(Mul, ("1e300", Float8), ("1e300", Float8)).unwrap_err();
        assert_eq!(e.message, "value out of range: overflow");
        let e = run(Div, ("1", Numeric(None)), ("0", Numeric(None))).unwrap_err();
        assert_eq!(e.message, "division by zero");
        assert_eq!(
            negate(&Value::Int4(i32::MIN)).unwrap_err().message,
            "integer out of range"
        );
        assert!(eval_binary(Add, &Value::Null, &Value::Int4(1))
            .unwrap()
            .is_null());
    }
}
