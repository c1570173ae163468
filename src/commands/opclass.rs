//! B-tree operator classes named in CREATE INDEX (`col text_pattern_ops`):
//! PostgreSQL's `ResolveOpClass` checks, over the `btree` operator classes
//! of PostgreSQL 15's `pg_opclass`.
//!
//! heapdb keeps one ordering per type (its key encoding), so a named class
//! is accepted when it orders the column as that encoding does: the type's
//! default class, and for `text` and `varchar` also `text_pattern_ops`,
//! `varchar_ops` and `varchar_pattern_ops` (byte order, which is the `C`
//! collation heapdb compares text in), for `char(n)` `bpchar_pattern_ops`.
//! The index stores no class name, so `\d` shows none.
//!
//! Errors as PostgreSQL's: an unknown class (or one in another schema
//! than `pg_catalog`) is 42704 `operator class "x" does not exist for
//! access method "btree"`; a class of another type 42804 `operator class
//! "x" does not accept data type t`. A class PostgreSQL would accept but
//! that orders differently (`bpchar_ops` on a `text` column) is 0A000.

use heapdb_grammar::ast::ObjectName;

use crate::err;
use crate::error::Result;
use crate::types::DataType;

/// The `btree` operator classes of PostgreSQL 15 and their input types
/// (`opcintype`, as `format_type` names it).
const BTREE_OPCLASSES: [(&str, &str); 44] = [
    ("array_ops", "anyarray"),
    ("bit_ops", "bit"),
    ("bool_ops", "boolean"),
    ("bpchar_ops", "character"),
    ("bpchar_pattern_ops", "character"),
    ("bytea_ops", "bytea"),
    ("char_ops", "\"char\""),
    ("cidr_ops", "inet"),
    ("date_ops", "date"),
    ("enum_ops", "anyenum"),
    ("float4_ops", "real"),
    ("float8_ops", "double precision"),
    ("inet_ops", "inet"),
    ("int2_ops", "smallint"),
    ("int4_ops", "integer"),
    ("int8_ops", "bigint"),
    ("interval_ops", "interval"),
    ("jsonb_ops", "jsonb"),
    ("macaddr8_ops", "macaddr8"),
    ("macaddr_ops", "macaddr"),
    ("money_ops", "money"),
    ("multirange_ops", "anymultirange"),
    ("name_ops", "name"),
    ("numeric_ops", "numeric"),
    ("oid_ops", "oid"),
    ("oidvector_ops", "oidvector"),
    ("pg_lsn_ops", "pg_lsn"),
    ("range_ops", "anyrange"),
    ("record_image_ops", "record"),
    ("record_ops", "record"),
    ("text_ops", "text"),
    ("text_pattern_ops", "text"),
    ("tid_ops", "tid"),
    ("time_ops", "time without time zone"),
    ("timestamp_ops", "timestamp without time zone"),
    ("timestamptz_ops", "timestamp with time zone"),
    ("timetz_ops", "time with time zone"),
    ("tsquery_ops", "tsquery"),
    ("tsvector_ops", "tsvector"),
    ("uuid_ops", "uuid"),
    ("varbit_ops", "bit varying"),
    ("varchar_ops", "text"),
    ("varchar_pattern_ops", "text"),
    ("xid8_ops", "xid8"),
];

/// The type's name without its modifier (`format_type_be`).
fn base_name(ty: &DataType) -> String {
    match ty {
        DataType::Array(_) => "anyarray".into(),
        DataType::Char(_) => "character".into(),
        DataType::Varchar(_) => "character varying".into(),
        DataType::Numeric(_) => "numeric".into(),
        DataType::Timestamp(_) => "timestamp without time zone".into(),
        DataType::TimestampTz(_) => "timestamp with time zone".into(),
        DataType::Time(_) => "time without time zone".into(),
        DataType::TimeTz(_) => "time with time zone".into(),
        other => other.to_string(),
    }
}

/// Checks the operator class `opclass` named for a key column of type
/// `ty` (see the module doc).
pub fn check(opclass: &ObjectName, ty: &DataType) -> Result<()> {
    let name = opclass.name.as_str();
    let found = BTREE_OPCLASSES.iter().find(|(n, _)| *n == name);
    let (Some(&(_, input)), None | Some("pg_catalog")) = (found, opclass.schema.as_deref()) else {
        return Err(err!(
            UndefinedObject,
            "operator class \"{opclass}\" does not exist for access method \"btree\""
        ));
    };
    let column = base_name(ty);
    // Binary-coercible input types: varchar to text, text and varchar to
    // bpchar.
    let coercible = column == input
        || (input == "text" && column == "character varying")
        || (input == "character" && matches!(ty, DataType::Text | DataType::Varchar(_)));
    if !coercible {
        return Err(err!(
            DatatypeMismatch,
            "operator class \"{name}\" does not accept data type {column}"
        ));
    }
    if input == "character" && column != "character" {
        return Err(err!(
            FeatureNotSupported,
            "operator class \"{name}\" is not supported for a column of type {column}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> ObjectName {
        match s.split_once('.') {
            Some((schema, n)) => ObjectName {
                schema: Some(schema.into()),
                ..ObjectName::new(n)
            },
            None => ObjectName::new(s),
        }
    }

    #[test]
    fn classes_are_checked_as_postgresql_does() {
        assert!(check(&name("int4_ops"), &DataType::Int4).is_ok());
        assert!(check(&name("pg_catalog.int4_ops"), &DataType::Int4).is_ok());
        assert!(check(&name("text_pattern_ops"), &DataType::Varchar(Some(3))).is_ok());
        assert!(check(&name("bpchar_pattern_ops"), &DataType::Char(4)).is_ok());
        let e = check(&name("public.int4_ops"), &DataType::Int4).unwrap_err();
        assert_eq!(e.code.code(), "42704");
        let e = check(&name("foo_ops"), &DataType::Int4).unwrap_err();
        assert_eq!(
            e.message,
            "operator class \"foo_ops\" does not exist for access method \"btree\""
        );
        let e = check(&name("int4_ops"), &DataType::Int8).unwrap_err();
        assert_eq!(e.code.code(), "42804");
        assert_eq!(
            e.message,
            "operator class \"int4_ops\" does not accept data type bigint"
        );
        let e = check(&name("text_ops"), &DataType::Name).unwrap_err();
        assert_eq!(e.code.code(), "42804");
        let e = check(&name("bpchar_ops"), &DataType::Text).unwrap_err();
        assert_eq!(e.code.code(), "0A000");
    }
}
