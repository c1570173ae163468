//! Comparison and hashing: the total order ORDER BY, min/max and merge
//! logic use, and hashes consistent with SQL equality.
//!
//! [`compare`] orders two non-NULL values as PostgreSQL's btree comparison
//! functions do: floats put NaN above every number (and treat `-0 = 0`),
//! numeric NaN above `Infinity`, text by bytes (the `C` collation), intervals
//! by their length with a month as 30 days. Values of different numeric
//! types compare as PostgreSQL's cross-type operators resolve them: integers
//! exactly with each other, integers and numeric as numeric, anything with a
//! float as `float8`. NULL is placed after every value (PostgreSQL's default
//! `NULLS LAST` for ascending order); the executor reverses for DESC and
//! handles `NULLS FIRST`.
//!
//! `char(n)` ignores trailing spaces: use [`compare_typed`] and
//! [`hash_typed`] with the column type, which trim them for `Char`.

use super::datatype::DataType;
use super::numeric::Numeric;
use super::text::bpchar_trim;
use super::value::{Interval, Value};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// Microseconds in a day.
const USECS_PER_DAY: i128 = 86_400_000_000;

/// An interval's length as PostgreSQL's `interval_cmp_value`: months count
/// 30 days, days 24 hours.
pub fn interval_key(iv: &Interval) -> i128 {
    (iv.months as i128 * 30 + iv.days as i128) * USECS_PER_DAY + iv.micros as i128
}

/// Orders two intervals by [`interval_key`].
pub fn interval_cmp(a: &Interval, b: &Interval) -> Ordering {
    interval_key(a).cmp(&interval_key(b))
}

/// Orders floats with NaN last and `-0 = 0`.
pub fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).expect("neither is NaN"),
    }
}

/// Numeric view of a value for cross-type comparison.
enum Num<'a> {
    Int(i64),
    Float(f64),
    Dec(&'a Numeric),
}

fn as_num(v: &Value) -> Option<Num<'_>> {
    Some(match v {
        Value::Int2(x) => Num::Int(*x as i64),
        Value::Int4(x) => Num::Int(*x as i64),
        Value::Int8(x) => Num::Int(*x),
        Value::Float4(x) => Num::Float(*x as f64),
        Value::Float8(x) => Num::Float(*x),
        Value::Numeric(n) => Num::Dec(n),
        _ => return None,
    })
}

fn num_cmp(a: Num<'_>, b: Num<'_>) -> Ordering {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        (Num::Dec(x), Num::Dec(y)) => x.cmp(y),
        (Num::Int(x), Num::Dec(y)) => Numeric::from_i64(x).cmp(y),
        (Num::Dec(x), Num::Int(y)) => x.cmp(&Numeric::from_i64(y)),
        (x, y) => float_cmp(num_f64(&x), num_f64(&y)),
    }
}

fn num_f64(n: &Num<'_>) -> f64 {
    match n {
        Num::Int(x) => *x as f64,
        Num::Float(x) => *x,
        Num::Dec(d) => d.to_f64(),
    }
}

/// Rank of a variant, to order values of unrelated types deterministically
/// (the binder never asks, but sorting must stay total).
fn rank(v: &Value) -> u8 {
    match v {
        Value::Bool(_) => 0,
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => 1,
        Value::Float4(_) | Value::Float8(_) | Value::Numeric(_) => 1,
        Value::Text(_) => 2,
        Value::Date(_) => 3,
        Value::Timestamp(_) | Value::TimestampTz(_) => 4,
        Value::Interval(_) => 5,
        Value::Bytea(_) => 6,
        Value::Time(_) | Value::TimeTz(..) => 7,
        Value::Array(_) => 8,
        Value::Jsonb(_) => 10,
        Value::Null => 9,
    }
}

/// A date, timestamp or timestamptz as a timestamptz (the session's zone
/// places the first two), for comparing across the types.
fn as_timestamptz(v: &Value) -> i64 {
    use super::datetime::tstz::timestamp_to_timestamptz_sat as sat;
    match v {
        Value::Date(d) => sat(super::datetime::date_to_timestamp_sat(*d)),
        Value::Timestamp(t) => sat(*t),
        Value::TimestampTz(t) => *t,
        _ => 0,
    }
}

/// Total order of two values (see the module doc); NULL sorts last.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    match (a, b) {
        (Int4(x), Int4(y)) => x.cmp(y),
        (Int8(x), Int8(y)) => x.cmp(y),
        (Text(x), Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Float8(x), Float8(y)) => float_cmp(*x, *y),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (Timestamp(x), Timestamp(y)) | (TimestampTz(x), TimestampTz(y)) => x.cmp(y),
        (Interval(x), Interval(y)) => interval_cmp(x, y),
        (Bytea(x), Bytea(y)) => x.cmp(y),
        (Jsonb(x), Jsonb(y)) => x.compare(y),
        (Array(x), Array(y)) => super::array::compare_arrays(x, y),
        (Time(x), Time(y)) => x.cmp(y),
        (TimeTz(x, xz), TimeTz(y, yz)) => super::datetime::time::timetz_cmp((*x, *xz), (*y, *yz)),
        (Date(d), Timestamp(t)) => super::datetime::date_to_timestamp_sat(*d).cmp(t),
        (Timestamp(t), Date(d)) => t.cmp(&super::datetime::date_to_timestamp_sat(*d)),
        (Date(_) | Timestamp(_), TimestampTz(_)) | (TimestampTz(_), Date(_) | Timestamp(_)) => {
            as_timestamptz(a).cmp(&as_timestamptz(b))
        }
        _ => match (as_num(a), as_num(b)) {
            (Some(x), Some(y)) => num_cmp(x, y),
            _ => rank(a).cmp(&rank(b)),
        },
    }
}

/// [`compare`] with the type's own rules: `char(n)` ignores trailing spaces.
pub fn compare_typed(a: &Value, b: &Value, ty: &DataType) -> Ordering {
    if let (DataType::Char(_), Value::Text(x), Value::Text(y)) = (ty, a, b) {
        return bpchar_trim(x).as_bytes().cmp(bpchar_trim(y).as_bytes());
    }
    compare(a, b)
}

/// SQL `=` for two non-NULL values of comparable types (cross-type numeric
/// allowed); `None` when either is NULL (the three-valued result).
pub fn sql_eq(a: &Value, b: &Value) -> Option<bool> {
    if a.is_null() || b.is_null() {
        return None;
    }
    Some(compare(a, b) == Ordering::Equal)
}

/// Feeds a hash of `v` consistent with [`compare_typed`]'s equality for
/// values of type `ty` (trailing spaces of `char(n)` ignored).
pub fn hash_typed<H: Hasher>(v: &Value, ty: &DataType, state: &mut H) {
    if let (DataType::Char(_), Value::Text(s)) = (ty, v) {
        std::mem::discriminant(v).hash(state);
        bpchar_trim(s).hash(state);
        return;
    }
    v.hash(state);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_put_nan_last_and_nulls_after_all() {
        let mut v = [
            Value::Float8(f64::NAN),
            Value::Null,
            Value::Float8(1.0),
            Value::Float8(f64::INFINITY),
            Value::Float8(-0.0),
        ];
        v.sort_by(compare);
        let shown: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
        assert_eq!(
            shown,
            [
                "Float8(-0.0)",
                "Float8(1.0)",
                "Float8(inf)",
                "Float8(NaN)",
                "Null"
            ]
        );
        assert_eq!(float_cmp(0.0, -0.0), Ordering::Equal);
    }

    #[test]
    fn cross_type_numbers_compare_by_value() {
        let one_half = Value::numeric(Numeric::parse("1.5").unwrap());
        assert_eq!(compare(&Value::Int4(1), &Value::Int8(1)), Ordering::Equal);
        assert_eq!(compare(&Value::Int2(2), &one_half), Ordering::Greater);
        assert_eq!(compare(&Value::Float8(1.5), &one_half), Ordering::Equal);
        assert_eq!(
            compare(&Value::Int8(i64::MAX), &Value::Int8(i64::MAX - 1)),
            Ordering::Greater
        );
        assert_eq!(sql_eq(&Value::Int4(3), &Value::Float8(3.0)), Some(true));
        assert_eq!(sql_eq(&Value::Null, &Value::Int4(1)), None);
    }

    #[test]
    fn char_n_ignores_trailing_spaces() {
        use std::collections::hash_map::DefaultHasher;
        let (a, b) = (Value::text("ab  "), Value::text("ab"));
        let ty = DataType::Char(4);
        assert_eq!(compare_typed(&a, &b, &ty), Ordering::Equal);
        assert_ne!(compare_typed(&a, &b, &DataType::Text), Ordering::Equal);
        let h = |v: &Value| {
            let mut s = DefaultHasher::new();
            hash_typed(v, &ty, &mut s);
            s.finish()
        };
        assert_eq!(h(&a), h(&b));
    }

    #[test]
    fn intervals_compare_by_length() {
        let month = Interval {
            months: 1,
            days: 0,
            micros: 0,
        };
        let days31 = Interval {
            months: 0,
            days: 31,
            micros: 0,
        };
        assert_eq!(interval_cmp(&month, &days31), Ordering::Less);
    }
}
