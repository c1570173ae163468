//! SQL values to JSON and back: `to_json` / `to_jsonb` of any value (what
//! the build functions and aggregates apply to each argument), and the
//! casts from `jsonb` to `boolean` and the number types.
//!
//! As PostgreSQL's `datum_to_json`: numbers stay numbers unless they are
//! not finite (`NaN`, `Infinity` become strings), booleans become `true` /
//! `false`, dates and timestamps become ISO 8601 strings
//! (`"2020-01-01T12:00:00+00:00"`), arrays become arrays, a `json` or
//! `jsonb` value is embedded as it is, and anything else becomes the string
//! of its text output.

use super::jsonb::{escape_json, Jsonb};
use crate::err;
use crate::error::{Error, Result};
use crate::types::datatype::DataType;
use crate::types::io::format_value;
use crate::types::numeric::Numeric;
use crate::types::value::Value;

/// Whether a value's text output is a JSON number (not NaN nor infinite).
fn finite_number(v: &Value) -> bool {
    match v {
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => true,
        Value::Float4(f) => f.is_finite(),
        Value::Float8(f) => f.is_finite(),
        Value::Numeric(n) => n.is_finite(),
        _ => false,
    }
}

/// The text of a date or time value as JSON writes it (ISO 8601, `T`
/// between date and time, a zone offset as `+HH:MM`).
fn iso_text(v: &Value) -> String {
    use crate::types::datetime::style::{output_style, set_output_style, DateOut, OutputStyle};
    // ISO whatever DateStyle says, as PostgreSQL's JSON output.
    let saved = output_style();
    set_output_style(OutputStyle {
        date: DateOut::Iso,
        ..saved
    });
    let mut s = String::new();
    format_value(v, &mut s);
    set_output_style(saved);
    match v {
        Value::Timestamp(_) | Value::TimestampTz(_) if s.len() > 10 => {
            if s.as_bytes().get(10) == Some(&b' ') {
                s.replace_range(10..11, "T");
            }
            if matches!(v, Value::TimestampTz(_)) {
                // The zone: the last sign after the time.
                if let Some(p) = s[11..].rfind(['+', '-']).map(|p| p + 11) {
                    if s.len() - p == 3 {
                        s.push_str(":00");
                    }
                }
            }
            s
        }
        _ => s,
    }
}

/// Appends `v` (of `json` type when `is_json`) as JSON text.
pub fn write_json(v: &Value, is_json: bool, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Text(s) if is_json => out.push_str(s),
        Value::Jsonb(j) => j.write(out),
        v if finite_number(v) => format_value(v, out),
        Value::Array(a) => {
            out.push('[');
            for (i, item) in a.items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, a.elem == DataType::Json, out);
            }
            out.push(']');
        }
        Value::Date(_) | Value::Timestamp(_) | Value::TimestampTz(_) => {
            escape_json(&iso_text(v), out)
        }
        other => {
            let mut s = String::new();
            format_value(other, &mut s);
            escape_json(&s, out);
        }
    }
}

/// `v` (of `json` type when `is_json`) as a `jsonb` value.
pub fn to_jsonb(v: &Value, is_json: bool) -> Result<Jsonb> {
    Ok(match v {
        Value::Null => Jsonb::Null,
        Value::Bool(b) => Jsonb::Bool(*b),
        Value::Text(s) if is_json => Jsonb::parse(s)?,
        Value::Jsonb(j) => (**j).clone(),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => {
            Jsonb::Number(Numeric::from_i64(v.as_i64().unwrap_or_default()))
        }
        Value::Numeric(n) if n.is_finite() => Jsonb::Number((**n).clone()),
        Value::Float4(_) | Value::Float8(_) if finite_number(v) => {
            let mut s = String::new();
            format_value(v, &mut s);
            Jsonb::Number(Numeric::parse(&s)?)
        }
        Value::Array(a) => Jsonb::Array(
            a.items
                .iter()
                .map(|x| to_jsonb(x, a.elem == DataType::Json))
                .collect::<Result<_>>()?,
        ),
        Value::Date(_) | Value::Timestamp(_) | Value::TimestampTz(_) => Jsonb::String(iso_text(v)),
        other => {
            let mut s = String::new();
            format_value(other, &mut s);
            Jsonb::String(s)
        }
    })
}

/// The text of an object key built from `v`: its text output; arrays and
/// JSON values are refused as PostgreSQL refuses them.
pub fn key_text(v: &Value, ty: &DataType) -> Result<String> {
    if matches!(ty, DataType::Json | DataType::Jsonb | DataType::Array(_)) {
        return Err(err!(
            InvalidParameterValue,
            "key value must be scalar, not array, composite, or json"
        ));
    }
    let mut s = String::new();
    match v {
        Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        other => format_value(other, &mut s),
    }
    Ok(s)
}

fn cannot_cast(j: &Jsonb, to: &DataType) -> Error {
    let what = match j {
        Jsonb::Null => "null",
        Jsonb::Bool(_) => "boolean",
        Jsonb::Number(_) => "numeric",
        Jsonb::String(_) => "string",
        Jsonb::Array(_) => "array",
        Jsonb::Object(_) => "object",
    };
    err!(
        InvalidParameterValue,
        "cannot cast jsonb {what} to type {}",
        to.without_typmod()
    )
}

/// The cast of a `jsonb` value to `boolean` or a number type (`None`: no
/// such cast). Only a scalar of the matching kind converts.
pub fn cast_jsonb(j: &Jsonb, to: &DataType) -> Option<Result<Value>> {
    let numeric = matches!(
        to,
        DataType::Int2
            | DataType::Int4
            | DataType::Int8
            | DataType::Float4
            | DataType::Float8
            | DataType::Numeric(_)
    );
    if !numeric && *to != DataType::Bool {
        return None;
    }
    Some(match (j, to) {
        (Jsonb::Bool(b), DataType::Bool) => Ok(Value::Bool(*b)),
        (Jsonb::Number(n), t) if numeric => crate::types::cast::cast_from(
            &Value::numeric(n.clone()),
            &DataType::Numeric(None),
            t,
            crate::types::cast::CastContext::Explicit,
        ),
        _ => Err(cannot_cast(j, to)),
    })
}
