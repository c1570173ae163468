//! [`Value`]: one SQL value, and its storage encoding.
//!
//! `Value` is 24 bytes: fixed-width payloads live inline; text and numeric
//! payloads are behind an `Arc` so that cloning a value (projection, sort
//! keys, group keys) never copies string bytes. A value does not know its
//! type modifier: `varchar(3)` and `char(5)` values are `Value::Text` (char(n)
//! already padded with spaces); the column's [`DataType`] travels beside it.
//!
//! Equality and hashing (`PartialEq`, `Eq`, `Hash`) are SQL's for two values
//! of the same type: NaN equals NaN, `-0.0` equals `0.0`, numeric `1.0`
//! equals `1.00` and all hash alike, so `Value` can key a hash table for
//! GROUP BY, DISTINCT and hash joins. Values of different variants are never
//! equal here; the binder casts both sides to one type first (see
//! [`compare`](super::compare) for cross-type comparison and for `char(n)`).
//!
//! Storage ([`Value::encode`] / [`Value::decode`]): fixed-width types write
//! their little-endian bytes (`attlen` of them); varlena types write the
//! payload only (the heap tuple layer adds the varlena header): text as
//! UTF-8, numeric as described in [`Numeric`]. `interval` is 16 bytes as
//! PostgreSQL lays it out: microseconds `i64`, days `i32`, months `i32`.

use super::datatype::DataType;
use super::numeric::Numeric;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// An `interval`: months, days and microseconds kept apart, as PostgreSQL
/// does, because a month has no fixed number of days nor a day of seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Whole months (years are 12 months).
    pub months: i32,
    /// Whole days.
    pub days: i32,
    /// Microseconds (hours, minutes, seconds).
    pub micros: i64,
}

/// One SQL value.
#[derive(Debug, Clone)]
pub enum Value {
    /// SQL NULL, of any type.
    Null,
    /// `boolean`.
    Bool(bool),
    /// `smallint`.
    Int2(i16),
    /// `integer`.
    Int4(i32),
    /// `bigint`.
    Int8(i64),
    /// `real`.
    Float4(f32),
    /// `double precision`.
    Float8(f64),
    /// `numeric`, behind an `Arc` to keep `Value` small.
    Numeric(Arc<Numeric>),
    /// `text`, `varchar(n)` and `char(n)` (padded) and `unknown` literals.
    Text(Arc<str>),
    /// `date`: days since 2000-01-01 (`i32::MIN` / `i32::MAX` are
    /// `-infinity` / `infinity`).
    Date(i32),
    /// `timestamp`: microseconds since 2000-01-01 00:00:00 (`i64::MIN` /
    /// `i64::MAX` are `-infinity` / `infinity`).
    Timestamp(i64),
    /// `timestamp with time zone`: microseconds since 2000-01-01 00:00:00
    /// UTC, infinities as for `timestamp`.
    TimestampTz(i64),
    /// `interval`.
    Interval(Interval),
    /// `bytea`.
    Bytea(Arc<[u8]>),
    /// A one-dimensional array (see [`super::array`]).
    Array(Arc<super::array::Array>),
    /// `time`: microseconds since midnight (0 to 24:00:00).
    Time(i64),
    /// `time with time zone`: microseconds since midnight and the zone
    /// offset in seconds east of UTC.
    TimeTz(i64, i32),
    /// `jsonb` (see [`super::json`]); a `json` value is `Text`.
    Jsonb(Arc<super::json::Jsonb>),
}

impl Value {
    /// A text value.
    pub fn text(s: &str) -> Value {
        Value::Text(Arc::from(s))
    }

    /// A numeric value.
    pub fn numeric(n: Numeric) -> Value {
        Value::Numeric(Arc::new(n))
    }

    /// Whether this is SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The natural type of the value (`None` for NULL); text-like values
    /// report `text`.
    pub fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => DataType::Bool,
            Value::Int2(_) => DataType::Int2,
            Value::Int4(_) => DataType::Int4,
            Value::Int8(_) => DataType::Int8,
            Value::Float4(_) => DataType::Float4,
            Value::Float8(_) => DataType::Float8,
            Value::Numeric(_) => DataType::Numeric(None),
            Value::Text(_) => DataType::Text,
            Value::Date(_) => DataType::Date,
            Value::Timestamp(_) => DataType::Timestamp(None),
            Value::TimestampTz(_) => DataType::TimestampTz(None),
            Value::Interval(_) => DataType::Interval,
            Value::Bytea(_) => DataType::Bytea,
            Value::Array(a) => DataType::array_of(a.elem),
            Value::Time(_) => DataType::Time(None),
            Value::TimeTz(..) => DataType::TimeTz(None),
            Value::Jsonb(_) => DataType::Jsonb,
        })
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Any integer value widened to `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int2(v) => Some(*v as i64),
            Value::Int4(v) => Some(*v as i64),
            Value::Int8(v) => Some(*v),
            _ => None,
        }
    }

    /// The string, if this is a text value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// Appends the storage bytes (see the module doc). NULL writes nothing:
    /// the tuple's null bitmap records it.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Null => {}
            Value::Bool(b) => out.push(*b as u8),
            Value::Int2(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Int4(v) | Value::Date(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Int8(v) | Value::Timestamp(v) | Value::TimestampTz(v) | Value::Time(v) => {
                out.extend_from_slice(&v.to_le_bytes())
            }
            Value::TimeTz(t, east) => {
                out.extend_from_slice(&t.to_le_bytes());
                out.extend_from_slice(&east.to_le_bytes());
            }
            Value::Float4(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Float8(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Numeric(n) => n.encode(out),
            Value::Text(s) => out.extend_from_slice(s.as_bytes()),
            Value::Interval(iv) => {
                out.extend_from_slice(&iv.micros.to_le_bytes());
                out.extend_from_slice(&iv.days.to_le_bytes());
                out.extend_from_slice(&iv.months.to_le_bytes());
            }
            Value::Bytea(b) => out.extend_from_slice(b),
            Value::Array(a) => a.encode(out),
            Value::Jsonb(j) => j.encode(out),
        }
    }

    /// How many bytes [`Value::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Int2(_) => 2,
            Value::Int4(_) | Value::Date(_) | Value::Float4(_) => 4,
            Value::Int8(_)
            | Value::Timestamp(_)
            | Value::TimestampTz(_)
            | Value::Float8(_)
            | Value::Time(_) => 8,
            Value::TimeTz(..) => 12,
            Value::Interval(_) => 16,
            Value::Numeric(n) => n.encoded_len(),
            Value::Text(s) => s.len(),
            Value::Bytea(b) => b.len(),
            Value::Array(a) => a.encoded_len(),
            Value::Jsonb(j) => j.to_text().len(),
        }
    }

    /// Reads a value of type `ty` from its storage bytes. Fixed-width types
    /// allocate nothing. Precondition, kept by the tuple layer: `bytes` is
    /// what [`Value::encode`] wrote for a value of this type, so fixed-width
    /// types get exactly `attlen` bytes. Malformed varlena payloads (which a
    /// page checksum would already have caught) decode lossily rather than
    /// panic.
    pub fn decode(ty: &DataType, bytes: &[u8]) -> Value {
        fn fixed<const N: usize>(bytes: &[u8]) -> [u8; N] {
            let mut a = [0u8; N];
            let n = bytes.len().min(N);
            debug_assert_eq!(bytes.len(), N, "fixed-width attribute of the wrong length");
            a[..n].copy_from_slice(&bytes[..n]);
            a
        }
        match ty {
            DataType::Bool => Value::Bool(bytes.first().is_some_and(|b| *b != 0)),
            DataType::Int2 => Value::Int2(i16::from_le_bytes(fixed(bytes))),
            DataType::Int4 => Value::Int4(i32::from_le_bytes(fixed(bytes))),
            DataType::Int8 => Value::Int8(i64::from_le_bytes(fixed(bytes))),
            DataType::Float4 => Value::Float4(f32::from_le_bytes(fixed(bytes))),
            DataType::Float8 => Value::Float8(f64::from_le_bytes(fixed(bytes))),
            DataType::Date => Value::Date(i32::from_le_bytes(fixed(bytes))),
            DataType::Timestamp(_) => Value::Timestamp(i64::from_le_bytes(fixed(bytes))),
            DataType::TimestampTz(_) => Value::TimestampTz(i64::from_le_bytes(fixed(bytes))),
            DataType::Interval => {
                let b: [u8; 16] = fixed(bytes);
                let (micros, rest) = b.split_at(8);
                let (days, months) = rest.split_at(4);
                Value::Interval(Interval {
                    micros: i64::from_le_bytes(micros.try_into().expect("8 bytes")),
                    days: i32::from_le_bytes(days.try_into().expect("4 bytes")),
                    months: i32::from_le_bytes(months.try_into().expect("4 bytes")),
                })
            }
            DataType::Numeric(_) => {
                Value::numeric(Numeric::decode(bytes).unwrap_or_else(Numeric::nan))
            }
            DataType::Text
            | DataType::Name
            | DataType::Varchar(_)
            | DataType::Char(_)
            | DataType::Json
            | DataType::Point
            | DataType::Unknown => match std::str::from_utf8(bytes) {
                Ok(s) => Value::Text(Arc::from(s)),
                Err(_) => Value::Text(Arc::from(String::from_utf8_lossy(bytes).as_ref())),
            },
            DataType::Bytea => Value::Bytea(Arc::from(bytes)),
            DataType::Array(elem) => {
                Value::Array(Arc::new(super::array::Array::decode(elem, bytes)))
            }
            DataType::Jsonb => Value::Jsonb(Arc::new(super::json::Jsonb::decode(bytes))),
            DataType::Time(_) => Value::Time(i64::from_le_bytes(fixed(bytes))),
            DataType::TimeTz(_) => {
                let b: [u8; 12] = fixed(bytes);
                let mut t = [0u8; 8];
                let mut z = [0u8; 4];
                t.copy_from_slice(&b[..8]);
                z.copy_from_slice(&b[8..]);
                Value::TimeTz(i64::from_le_bytes(t), i32::from_le_bytes(z))
            }
        }
    }
}

/// Float equality as SQL sorts floats: NaN equals NaN, `-0` equals `0`.
fn f64_key(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else if v == 0.0 {
        0
    } else {
        v.to_bits()
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int2(a), Int2(b)) => a == b,
            (Int4(a), Int4(b)) => a == b,
            (Int8(a), Int8(b)) => a == b,
            (Float4(a), Float4(b)) => f64_key(*a as f64) == f64_key(*b as f64),
            (Float8(a), Float8(b)) => f64_key(*a) == f64_key(*b),
            (Numeric(a), Numeric(b)) => a == b,
            (Text(a), Text(b)) => a == b,
            (Date(a), Date(b)) => a == b,
            (Timestamp(a), Timestamp(b)) | (TimestampTz(a), TimestampTz(b)) => a == b,
            (Interval(a), Interval(b)) => super::compare::interval_cmp(a, b).is_eq(),
            (Bytea(a), Bytea(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            (Time(a), Time(b)) => a == b,
            (TimeTz(a, x), TimeTz(b, y)) => a == b && x == y,
            (Jsonb(a), Jsonb(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            Value::Int2(v) => v.hash(state),
            Value::Int4(v) | Value::Date(v) => v.hash(state),
            Value::Int8(v) | Value::Timestamp(v) | Value::TimestampTz(v) => v.hash(state),
            Value::Float4(v) => f64_key(*v as f64).hash(state),
            Value::Float8(v) => f64_key(*v).hash(state),
            Value::Numeric(n) => n.hash(state),
            Value::Text(s) => s.hash(state),
            Value::Interval(iv) => super::compare::interval_key(iv).hash(state),
            Value::Bytea(b) => b.hash(state),
            Value::Array(a) => a.hash(state),
            Value::Jsonb(j) => j.hash(state),
            Value::Time(t) => t.hash(state),
            Value::TimeTz(t, east) => {
                t.hash(state);
                east.hash(state);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_stays_small() {
        assert!(
            std::mem::size_of::<Value>() <= 24,
            "{}",
            std::mem::size_of::<Value>()
        );
    }

    #[test]
    fn encode_decode_round_trips_with_attlen_bytes() {
        let cases = [
            (DataType::Bool, Value::Bool(true)),
            (DataType::Int2, Value::Int2(-2)),
            (DataType::Int4, Value::Int4(123_456)),
            (DataType::Int8, Value::Int8(i64::MIN)),
            (DataType::Float4, Value::Float4(0.1)),
            (DataType::Float8, Value::Float8(-1e100)),
            (DataType::Date, Value::Date(-3)),
            (DataType::Timestamp(None), Value::Timestamp(86_400_000_000)),
            (
                DataType::Interval,
                Value::Interval(Interval {
                    months: 14,
                    days: -3,
                    micros: 5,
                }),
            ),
            (DataType::Time(None), Value::Time(86_400_000_000)),
            (
                DataType::TimeTz(Some(2)),
                Value::TimeTz(3_600_000_000, -19_800),
            ),
            (DataType::Text, Value::text("héllo")),
            (
                DataType::Bytea,
                Value::Bytea(Arc::from(&[0u8, 0xff, 0x5c][..])),
            ),
            (
                DataType::Numeric(None),
                Value::numeric(Numeric::parse("-12.50").unwrap()),
            ),
        ];
        for (ty, v) in cases {
            let mut buf = Vec::new();
            v.encode(&mut buf);
            assert_eq!(buf.len(), v.encoded_len());
            if ty.attlen() > 0 {
                assert_eq!(buf.len(), ty.attlen() as usize, "{ty}");
            }
            assert_eq!(Value::decode(&ty, &buf), v, "{ty}");
        }
        let mut buf = Vec::new();
        Value::Int4(0x0102_0304).encode(&mut buf);
        assert_eq!(buf, [4, 3, 2, 1], "little-endian");
    }

    #[test]
    fn equality_and_hash_are_sql_equality() {
        use std::collections::hash_map::DefaultHasher;
        let h = |v: &Value| {
            let mut s = DefaultHasher::new();
            v.hash(&mut s);
            s.finish()
        };
        let pairs = [
            (Value::Float8(f64::NAN), Value::Float8(-f64::NAN)),
            (Value::Float8(0.0), Value::Float8(-0.0)),
            (
                Value::numeric(Numeric::parse("1.0").unwrap()),
                Value::numeric(Numeric::parse("1.00").unwrap()),
            ),
            (
                Value::Interval(Interval {
                    months: 1,
                    days: 0,
                    micros: 0,
                }),
                Value::Interval(Interval {
                    months: 0,
                    days: 30,
                    micros: 0,
                }),
            ),
        ];
        for (a, b) in pairs {
            assert_eq!(a, b);
            assert_eq!(h(&a), h(&b));
        }
        assert_ne!(Value::Int4(1), Value::Int8(1));
    }
}
