//! The results of the JSON aggregates: `json_agg` / `jsonb_agg` (every
//! input, NULLs as `null`, in input order) and `json_object_agg` /
//! `jsonb_object_agg` (key/value pairs). The accumulators themselves are
//! [`Accumulator`](crate::types::Accumulator)'s; these turn their
//! collected values into the result, in PostgreSQL's text forms:
//! `[1, null, 3]` and `{ "a" : 1, "b" : null }` for `json`, the normalized
//! `jsonb` (the last duplicate key kept) for `jsonb`.

use super::convert::{key_text, to_jsonb, write_json};
use super::funcs::jsonb_value;
use super::jsonb::{escape_json, Jsonb};
use crate::err;
use crate::error::{Error, Result};
use crate::types::datatype::DataType;
use crate::types::value::Value;

/// `json_object_agg`'s refusal of a NULL key.
pub fn null_key() -> Error {
    err!(InvalidParameterValue, "field name must not be null")
}

/// `json_agg` / `jsonb_agg` of `items`, values of type `input`.
pub fn finish_array(items: &[Value], input: &DataType, jsonb: bool) -> Result<Value> {
    let is_json = *input == DataType::Json;
    if jsonb {
        let v = items
            .iter()
            .map(|x| to_jsonb(x, is_json))
            .collect::<Result<_>>()?;
        return Ok(jsonb_value(Jsonb::Array(v)));
    }
    let mut s = String::from("[");
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
            if matches!(x, Value::Array(_)) {
                s.push_str("\n ");
            }
        }
        write_json(x, is_json, &mut s);
    }
    s.push(']');
    Ok(Value::text(&s))
}

/// `json_object_agg` / `jsonb_object_agg` of `pairs` (keys of type
/// `key_type`, never NULL).
pub fn finish_object(
    pairs: &[(Value, Value)],
    key_type: &DataType,
    jsonb: bool,
    json_value: bool,
) -> Result<Value> {
    if jsonb {
        let mut m = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            m.push((key_text(k, key_type)?, to_jsonb(v, json_value)?));
        }
        return Ok(jsonb_value(Jsonb::object(m)));
    }
    let mut s = String::from("{ ");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        escape_json(&key_text(k, key_type)?, &mut s);
        s.push_str(" : ");
        write_json(v, json_value, &mut s);
    }
    s.push_str(" }");
    Ok(Value::text(&s))
}
