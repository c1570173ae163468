//! [`DataType`]: the SQL types heapdb knows, with PostgreSQL's names, type
//! OIDs and on-disk storage properties (attribute length and alignment).
//!
//! A `DataType` carries its type modifier (`varchar(20)`, `numeric(10,2)`,
//! `char(5)`) because the modifier changes how values are checked on
//! assignment and how the type prints, exactly as PostgreSQL's `typmod`.
//! Storage follows `pg_type.typlen` / `typalign`: fixed-width types store
//! their little-endian bytes at their alignment; `-1` types are varlenas whose
//! payload [`Value::encode`](super::Value::encode) writes (the heap tuple
//! layer adds the varlena header).

use std::fmt;

/// A SQL data type, with its type modifier where it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `boolean` (OID 16), 1 byte.
    Bool,
    /// `smallint` / `int2` (OID 21), 2 bytes.
    Int2,
    /// `integer` / `int4` (OID 23), 4 bytes.
    Int4,
    /// `bigint` / `int8` (OID 20), 8 bytes.
    Int8,
    /// `real` / `float4` (OID 700), 4 bytes IEEE 754.
    Float4,
    /// `double precision` / `float8` (OID 701), 8 bytes IEEE 754.
    Float8,
    /// `numeric(precision, scale)` (OID 1700); `None` is unconstrained
    /// `numeric`. Varlena.
    Numeric(Option<(u16, i16)>),
    /// `text` (OID 25). Varlena.
    Text,
    /// `character varying(n)` (OID 1043); `None` has no length limit. Varlena.
    Varchar(Option<u32>),
    /// `character(n)` / `bpchar` (OID 1042): blank-padded to `n` characters.
    /// Varlena. `Char(0)` is bpchar without a length (PostgreSQL's typmod
    /// -1: values neither padded nor cut), which only the binder makes — the
    /// type of a string literal compared with a `char(n)` value, as
    /// PostgreSQL types it (`tag = 't1'::bpchar`); no column has it.
    Char(u32),
    /// `name` (OID 19): an identifier, text cut to 63 bytes (at a character
    /// boundary) on input and by casts, as PostgreSQL's `NAMEDATALEN - 1`.
    /// Stored as a varlena like text; compares in byte order.
    Name,
    /// `date` (OID 1082): days since 2000-01-01, 4 bytes.
    Date,
    /// `timestamp(p) without time zone` (OID 1114): microseconds since
    /// 2000-01-01 00:00:00, 8 bytes. `Some(p)` (0 to 6) rounds values to
    /// `p` fractional-second digits on input and assignment; `None` keeps
    /// all six.
    Timestamp(Option<u8>),
    /// `timestamp(p) with time zone` (OID 1184): microseconds since
    /// 2000-01-01 00:00:00 UTC, 8 bytes; shown in the session's `TimeZone`.
    TimestampTz(Option<u8>),
    /// `interval` (OID 1186): months, days and microseconds, 16 bytes.
    Interval,
    /// `unknown` (OID 705): the type of an untyped string literal before the
    /// binder decides what it is. Stored like text.
    Unknown,
    /// `bytea` (OID 17): a byte string. Varlena holding the bytes as they are.
    Bytea,
    /// A one-dimensional array of the element type (`integer[]`, OID of
    /// the element's array type). Varlena; see [`super::array`]. The element
    /// type is interned ([`DataType::array_of`]) so that `DataType` stays
    /// `Copy`.
    Array(&'static DataType),
    /// `time(p) without time zone` (OID 1083): microseconds since midnight
    /// (0 to 24:00:00 inclusive), 8 bytes; `Some(p)` rounds as for
    /// `timestamp(p)`.
    Time(Option<u8>),
    /// `time(p) with time zone` / `timetz` (OID 1266): a time of day and
    /// its zone offset, 12 bytes (8 of time, 4 of offset), aligned to 8.
    TimeTz(Option<u8>),
    /// `json` (OID 114): text kept as it was typed, once valid. Varlena.
    Json,
    /// `jsonb` (OID 3802): JSON parsed and normalized (see
    /// [`super::json`]). Varlena.
    Jsonb,
    /// `point` (OID 600): kept as its canonical text (see
    /// [`super::point`]). Varlena.
    Point,
}

/// The broad class of a type, PostgreSQL's `typcategory`, which drives
/// implicit casts and operator resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeCategory {
    /// `B`: boolean.
    Boolean,
    /// `N`: int2, int4, int8, float4, float8, numeric.
    Numeric,
    /// `S`: text, varchar, bpchar.
    String,
    /// `D`: date, timestamp.
    DateTime,
    /// `T`: interval.
    Timespan,
    /// `X`: unknown.
    Unknown,
    /// `U`: user-defined (PostgreSQL files `bytea` there).
    User,
    /// `A`: arrays.
    Array,
}

impl DataType {
    /// PostgreSQL's type OID (`pg_type.oid`).
    pub fn oid(&self) -> u32 {
        match self {
            DataType::Bool => 16,
            DataType::Int8 => 20,
            DataType::Int2 => 21,
            DataType::Int4 => 23,
            DataType::Text => 25,
            DataType::Name => 19,
            DataType::Unknown => 705,
            DataType::Float4 => 700,
            DataType::Float8 => 701,
            DataType::Char(_) => 1042,
            DataType::Varchar(_) => 1043,
            DataType::Date => 1082,
            DataType::Timestamp(_) => 1114,
            DataType::TimestampTz(_) => 1184,
            DataType::Interval => 1186,
            DataType::Numeric(_) => 1700,
            DataType::Bytea => 17,
            DataType::Array(elem) => super::array::array_oid(elem),
            DataType::Time(_) => 1083,
            DataType::TimeTz(_) => 1266,
            DataType::Json => 114,
            DataType::Jsonb => 3802,
            DataType::Point => 600,
        }
    }

    /// The attribute length as `pg_type.typlen`: 1, 2, 4, 8 or 16 bytes for
    /// fixed-width types, `-1` for varlenas.
    pub fn attlen(&self) -> i16 {
        match self {
            DataType::Bool => 1,
            DataType::Int2 => 2,
            DataType::Int4 | DataType::Float4 | DataType::Date => 4,
            DataType::Int8
            | DataType::Float8
            | DataType::Timestamp(_)
            | DataType::TimestampTz(_) => 8,
            DataType::Interval => 16,
            DataType::Time(_) => 8,
            DataType::TimeTz(_) => 12,
            DataType::Numeric(_)
            | DataType::Text
            | DataType::Name
            | DataType::Varchar(_)
            | DataType::Char(_)
            | DataType::Unknown
            | DataType::Bytea => -1,
            DataType::Array(_) | DataType::Json | DataType::Jsonb | DataType::Point => -1,
        }
    }

    /// The attribute alignment in bytes as `pg_type.typalign` (c=1, s=2,
    /// i=4, d=8). Varlenas align to 4 when they carry a 4-byte header; the
    /// tuple layer may store short (1-byte header) varlenas unaligned.
    pub fn attalign(&self) -> usize {
        match self {
            DataType::Bool => 1,
            DataType::Int2 => 2,
            DataType::Int4 | DataType::Float4 | DataType::Date => 4,
            DataType::Int8
            | DataType::Float8
            | DataType::Timestamp(_)
            | DataType::TimestampTz(_)
            | DataType::Interval
            | DataType::Time(_)
            | DataType::TimeTz(_) => 8,
            DataType::Numeric(_)
            | DataType::Text
            | DataType::Name
            | DataType::Varchar(_)
            | DataType::Char(_)
            | DataType::Unknown
            | DataType::Bytea => 4,
            DataType::Array(_) | DataType::Json | DataType::Jsonb | DataType::Point => 4,
        }
    }

    /// Whether values are stored as a varlena (`attlen() == -1`).
    pub fn is_varlena(&self) -> bool {
        self.attlen() < 0
    }

    /// The type's category (`pg_type.typcategory`).
    pub fn category(&self) -> TypeCategory {
        match self {
            DataType::Bool => TypeCategory::Boolean,
            DataType::Int2
            | DataType::Int4
            | DataType::Int8
            | DataType::Float4
            | DataType::Float8
            | DataType::Numeric(_) => TypeCategory::Numeric,
            DataType::Text | DataType::Name | DataType::Varchar(_) | DataType::Char(_) => {
                TypeCategory::String
            }
            DataType::Date
            | DataType::Timestamp(_)
            | DataType::TimestampTz(_)
            | DataType::Time(_)
            | DataType::TimeTz(_) => TypeCategory::DateTime,
            DataType::Interval => TypeCategory::Timespan,
            DataType::Unknown => TypeCategory::Unknown,
            DataType::Bytea | DataType::Json | DataType::Jsonb | DataType::Point => {
                TypeCategory::User
            }
            DataType::Array(_) => TypeCategory::Array,
        }
    }

    /// The same type without its modifier (`varchar(20)` -> `varchar`,
    /// `numeric(10,2)` -> `numeric`); `char(n)` keeps its length since
    /// `bpchar` has no unconstrained form here.
    pub fn without_typmod(&self) -> DataType {
        match self {
            DataType::Numeric(_) => DataType::Numeric(None),
            DataType::Varchar(_) => DataType::Varchar(None),
            DataType::Timestamp(_) => DataType::Timestamp(None),
            DataType::TimestampTz(_) => DataType::TimestampTz(None),
            DataType::Time(_) => DataType::Time(None),
            DataType::TimeTz(_) => DataType::TimeTz(None),
            other => *other,
        }
    }

    /// The array type whose elements are of type `elem` (an array of arrays
    /// is the same array type, as in PostgreSQL).
    pub fn array_of(elem: DataType) -> DataType {
        super::array::array_type(elem)
    }

    /// The element type, for an array type.
    pub fn element(&self) -> Option<DataType> {
        match self {
            DataType::Array(e) => Some(**e),
            _ => None,
        }
    }

    /// Whether this is one of the string types (text, varchar, char).
    pub fn is_string(&self) -> bool {
        self.category() == TypeCategory::String
    }

    /// Whether this is one of the numeric types (ints, floats, numeric).
    pub fn is_numeric(&self) -> bool {
        self.category() == TypeCategory::Numeric
    }

    /// Looks a type up by a name as SQL spells it (`int`, `int4`, `integer`,
    /// `float8`, `double precision`, `varchar`, `timestamp`, ...), without
    /// modifiers; `None` for an unknown name. Lengths and precisions are
    /// applied by the caller with [`DataType::with_typmod`].
    pub fn from_name(name: &str) -> Option<DataType> {
        let n = name.trim().to_ascii_lowercase();
        Some(match n.as_str() {
            "bool" | "boolean" => DataType::Bool,
            "int2" | "smallint" => DataType::Int2,
            "int" | "int4" | "integer" => DataType::Int4,
            "int8" | "bigint" => DataType::Int8,
            "float4" | "real" => DataType::Float4,
            "float8" | "float" | "double precision" => DataType::Float8,
            "numeric" | "decimal" => DataType::Numeric(None),
            "text" => DataType::Text,
            "name" => DataType::Name,
            "varchar" | "character varying" | "char varying" => DataType::Varchar(None),
            "char" | "character" | "bpchar" => DataType::Char(1),
            "date" => DataType::Date,
            "timestamp" | "timestamp without time zone" => DataType::Timestamp(None),
            "timestamptz" | "timestamp with time zone" => DataType::TimestampTz(None),
            "interval" => DataType::Interval,
            "time" | "time without time zone" => DataType::Time(None),
            "timetz" | "time with time zone" => DataType::TimeTz(None),
            "unknown" => DataType::Unknown,
            "bytea" => DataType::Bytea,
            "json" => DataType::Json,
            "jsonb" => DataType::Jsonb,
            "point" => DataType::Point,
            n if n.starts_with('_') => DataType::array_of(DataType::from_name(&n[1..])?),
            n if n.ends_with("[]") => {
                DataType::array_of(DataType::from_name(n.trim_end_matches("[]"))?)
            }
            _ => return None,
        })
    }

    /// Applies SQL type modifiers such as `(20)` or `(10,2)`, checking them
    /// as PostgreSQL does (`length for type varchar must be at least 1`,
    /// `NUMERIC precision 0 must be between 1 and 1000`).
    pub fn with_typmod(&self, mods: &[i64]) -> crate::Result<DataType> {
        use crate::err;
        match (self, mods) {
            (t, []) => Ok(*t),
            (DataType::Varchar(_), [n]) | (DataType::Char(_), [n]) => {
                let name = if matches!(self, DataType::Varchar(_)) {
                    "varchar"
                } else {
                    "char"
                };
                if *n < 1 {
                    return Err(err!(
                        SyntaxError,
                        "length for type {name} must be at least 1"
                    ));
                }
                if *n > 10_485_760 {
                    return Err(err!(
                        SyntaxError,
                        "length for type {name} cannot exceed 10485760"
                    ));
                }
                Ok(match self {
                    DataType::Varchar(_) => DataType::Varchar(Some(*n as u32)),
                    _ => DataType::Char(*n as u32),
                })
            }
            (DataType::Timestamp(_), [p]) => Ok(DataType::Timestamp(Some(
                crate::types::datetime::timestamp_precision(*p, false)?,
            ))),
            (DataType::TimestampTz(_), [p]) => Ok(DataType::TimestampTz(Some(
                crate::types::datetime::timestamp_precision(*p, true)?,
            ))),
            (DataType::Time(_), [p]) => Ok(DataType::Time(Some(
                crate::types::datetime::time::time_precision(*p, false)?,
            ))),
            (DataType::TimeTz(_), [p]) => Ok(DataType::TimeTz(Some(
                crate::types::datetime::time::time_precision(*p, true)?,
            ))),
            (DataType::Numeric(_), [p]) => DataType::Numeric(None).with_typmod(&[*p, 0]),
            (DataType::Numeric(_), [p, s]) => {
                if !(1..=1000).contains(p) {
                    return Err(err!(
                        InvalidParameterValue,
                        "NUMERIC precision {p} must be between 1 and 1000"
                    ));
                }
                if !(-1000..=1000).contains(s) {
                    return Err(err!(
                        InvalidParameterValue,
                        "NUMERIC scale {s} must be between -1000 and 1000"
                    ));
                }
                Ok(DataType::Numeric(Some((*p as u16, *s as i16))))
            }
            (t, _) => Err(err!(
                SyntaxError,
                "type modifier is not allowed for type \"{t}\""
            )),
        }
    }
}

impl DataType {
    /// The type's name without its modifier, as `format_type` prints a
    /// type whose typmod is -1 (`character varying`, `numeric`, `bpchar`):
    /// the type a string literal takes when it meets the column.
    pub fn base_name(&self) -> String {
        match self {
            DataType::Numeric(_) => "numeric".into(),
            DataType::Varchar(_) => "character varying".into(),
            DataType::Char(_) => "bpchar".into(),
            DataType::Timestamp(_) => "timestamp without time zone".into(),
            DataType::TimestampTz(_) => "timestamp with time zone".into(),
            DataType::Time(_) => "time without time zone".into(),
            DataType::TimeTz(_) => "time with time zone".into(),
            DataType::Array(elem) => format!("{}[]", elem.base_name()),
            other => other.to_string(),
        }
    }

    /// psql's `Storage` column (`pg_attribute.attstorage` of the type's
    /// default): `plain` for fixed-width types, `main` for numeric,
    /// `extended` for the other variable-width ones.
    pub fn storage_name(&self) -> &'static str {
        match self {
            DataType::Numeric(_) => "main",
            DataType::Point => "plain",
            t if t.attlen() > 0 => "plain",
            _ => "extended",
        }
    }
}

impl fmt::Display for DataType {
    /// PostgreSQL's `format_type` output: `integer`, `character varying(20)`,
    /// `numeric(10,2)`, `timestamp without time zone`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Bool => f.write_str("boolean"),
            DataType::Int2 => f.write_str("smallint"),
            DataType::Int4 => f.write_str("integer"),
            DataType::Int8 => f.write_str("bigint"),
            DataType::Float4 => f.write_str("real"),
            DataType::Float8 => f.write_str("double precision"),
            DataType::Numeric(None) => f.write_str("numeric"),
            DataType::Numeric(Some((p, s))) => write!(f, "numeric({p},{s})"),
            DataType::Text => f.write_str("text"),
            DataType::Name => f.write_str("name"),
            DataType::Varchar(None) => f.write_str("character varying"),
            DataType::Varchar(Some(n)) => write!(f, "character varying({n})"),
            DataType::Char(0) => f.write_str("bpchar"),
            DataType::Char(n) => write!(f, "character({n})"),
            DataType::Date => f.write_str("date"),
            DataType::Timestamp(None) => f.write_str("timestamp without time zone"),
            DataType::Timestamp(Some(p)) => write!(f, "timestamp({p}) without time zone"),
            DataType::TimestampTz(None) => f.write_str("timestamp with time zone"),
            DataType::TimestampTz(Some(p)) => write!(f, "timestamp({p}) with time zone"),
            DataType::Interval => f.write_str("interval"),
            DataType::Unknown => f.write_str("unknown"),
            DataType::Bytea => f.write_str("bytea"),
            DataType::Array(elem) => write!(f, "{elem}[]"),
            DataType::Time(None) => f.write_str("time without time zone"),
            DataType::Time(Some(p)) => write!(f, "time({p}) without time zone"),
            DataType::TimeTz(None) => f.write_str("time with time zone"),
            DataType::TimeTz(Some(p)) => write!(f, "time({p}) with time zone"),
            DataType::Json => f.write_str("json"),
            DataType::Jsonb => f.write_str("jsonb"),
            DataType::Point => f.write_str("point"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_oids_and_storage_match_pg_type() {
        // (type, format_type, oid, typlen, typalign) from PostgreSQL 15's pg_type.
        let cases = [
            (DataType::Int2, "smallint", 21, 2, 2),
            (DataType::Int4, "integer", 23, 4, 4),
            (DataType::Int8, "bigint", 20, 8, 8),
            (DataType::Float4, "real", 700, 4, 4),
            (DataType::Float8, "double precision", 701, 8, 8),
            (DataType::Bool, "boolean", 16, 1, 1),
            (DataType::Date, "date", 1082, 4, 4),
            (
                DataType::Timestamp(None),
                "timestamp without time zone",
                1114,
                8,
                8,
            ),
            (DataType::Interval, "interval", 1186, 16, 8),
            (DataType::Text, "text", 25, -1, 4),
            (
                DataType::Varchar(Some(20)),
                "character varying(20)",
                1043,
                -1,
                4,
            ),
            (DataType::Char(5), "character(5)", 1042, -1, 4),
            (
                DataType::Numeric(Some((10, 2))),
                "numeric(10,2)",
                1700,
                -1,
                4,
            ),
            (DataType::Numeric(None), "numeric", 1700, -1, 4),
            (DataType::Bytea, "bytea", 17, -1, 4),
        ];
        for (t, name, oid, len, align) in cases {
            assert_eq!(t.to_string(), name);
            assert_eq!(t.oid(), oid, "{name}");
            assert_eq!(t.attlen(), len, "{name}");
            assert_eq!(t.attalign(), align, "{name}");
        }
    }

    #[test]
    fn names_and_modifiers_resolve() {
        assert_eq!(DataType::from_name("INTEGER"), Some(DataType::Int4));
        assert_eq!(
            DataType::from_name("double precision"),
            Some(DataType::Float8)
        );
        assert_eq!(DataType::from_name("nope"), None);
        let v = DataType::from_name("varchar")
            .unwrap()
            .with_typmod(&[3])
            .unwrap();
        assert_eq!(v, DataType::Varchar(Some(3)));
        let n = DataType::Numeric(None).with_typmod(&[5]).unwrap();
        assert_eq!(n.to_string(), "numeric(5,0)");
        let e = DataType::Varchar(None).with_typmod(&[0]).unwrap_err();
        assert_eq!(e.message, "length for type varchar must be at least 1");
        let e = DataType::Numeric(None).with_typmod(&[0, 0]).unwrap_err();
        assert_eq!(e.message, "NUMERIC precision 0 must be between 1 and 1000");
    }
}
