//! One-dimensional arrays: the value ([`Array`]), the array types
//! ([`array_type`], [`array_oid`]), text input and output as PostgreSQL's
//! `array_in` / `array_out` read and print them, the storage encoding, and
//! the order `btree` gives arrays (`array_cmp`).
//!
//! Invariants: every element of an [`Array`] is `Value::Null` or a value of
//! its `elem` type; `elem` is never itself an array type (PostgreSQL's
//! `integer[][]` is `integer[]`); `lower` is the subscript of the first
//! element (1 unless the input said otherwise). Arrays of more than one
//! dimension are refused on input (`multidimensional arrays are not
//! supported`, 0A000). Equality treats two NULL elements as equal and a
//! NULL as greater than any value, as `array_eq` / `array_cmp` do.
//!
//! Storage ([`Array::encode`]): the lower bound (`i32`), the element count
//! (`u32`), a NULL bitmap (one bit per element), then each non-NULL element:
//! fixed-width element types their `attlen` bytes, varlena element types a
//! `u32` length and [`Value::encode`]'s payload. All little-endian.

use super::datatype::DataType;
use super::value::Value;
use crate::err;
use crate::error::{Error, Result};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

/// A one-dimensional array value (see the module doc).
#[derive(Debug, Clone)]
pub struct Array {
    /// The element type.
    pub elem: DataType,
    /// The subscript of the first element.
    pub lower: i32,
    /// The elements, `Value::Null` for NULL elements.
    pub items: Vec<Value>,
}

/// The array type of `elem` (`elem` itself when it is already an array),
/// interned so that [`DataType`] stays `Copy`.
pub fn array_type(elem: DataType) -> DataType {
    if let DataType::Array(_) = elem {
        return elem;
    }
    static TYPES: OnceLock<Mutex<HashMap<DataType, &'static DataType>>> = OnceLock::new();
    let table = TYPES.get_or_init(|| Mutex::new(HashMap::new()));
    let mut table = table
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let interned = *table
        .entry(elem)
        .or_insert_with(|| Box::leak(Box::new(elem)));
    DataType::Array(interned)
}

/// The OID of the array type of `elem` (`pg_type.typarray`), 0 for element
/// types without one.
pub fn array_oid(elem: &DataType) -> u32 {
    match elem {
        DataType::Bool => 1000,
        DataType::Bytea => 1001,
        DataType::Name => 1003,
        DataType::Int2 => 1005,
        DataType::Int4 => 1007,
        DataType::Text => 1009,
        DataType::Char(_) => 1014,
        DataType::Varchar(_) => 1015,
        DataType::Int8 => 1016,
        DataType::Float4 => 1021,
        DataType::Float8 => 1022,
        DataType::Timestamp(_) => 1115,
        DataType::Date => 1182,
        DataType::TimestampTz(_) => 1185,
        DataType::Interval => 1187,
        DataType::Numeric(_) => 1231,
        _ => 0,
    }
}

impl Array {
    /// An array of `items` starting at subscript 1.
    pub fn new(elem: DataType, items: Vec<Value>) -> Array {
        Array {
            elem,
            lower: 1,
            items,
        }
    }

    /// The array as a value.
    pub fn into_value(self) -> Value {
        Value::Array(std::sync::Arc::new(self))
    }

    /// The subscript of the last element (`lower - 1` when empty).
    pub fn upper(&self) -> i32 {
        self.lower + self.items.len() as i32 - 1
    }

    /// The element at subscript `i`, NULL outside the bounds.
    pub fn get(&self, i: i64) -> Value {
        let k = i - self.lower as i64;
        if k < 0 {
            return Value::Null;
        }
        self.items.get(k as usize).cloned().unwrap_or(Value::Null)
    }

    /// Appends the storage bytes (see the module doc).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.lower.to_le_bytes());
        out.extend_from_slice(&(self.items.len() as u32).to_le_bytes());
        let mut bitmap = vec![0u8; self.items.len().div_ceil(8)];
        for (k, v) in self.items.iter().enumerate() {
            if v.is_null() {
                bitmap[k / 8] |= 1 << (k % 8);
            }
        }
        out.extend_from_slice(&bitmap);
        let fixed = self.elem.attlen() > 0;
        for v in self.items.iter().filter(|v| !v.is_null()) {
            if !fixed {
                out.extend_from_slice(&(v.encoded_len() as u32).to_le_bytes());
            }
            v.encode(out);
        }
    }

    /// How many bytes [`Array::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        let fixed = self.elem.attlen() > 0;
        let payload: usize = self
            .items
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v.encoded_len() + if fixed { 0 } else { 4 })
            .sum();
        8 + self.items.len().div_ceil(8) + payload
    }

    /// Reads what [`Array::encode`] wrote for an array of `elem`; malformed
    /// bytes (which a page checksum would have caught) give what could be
    /// read rather than a panic.
    pub fn decode(elem: &DataType, bytes: &[u8]) -> Array {
        let word = |at: usize| -> Option<[u8; 4]> { bytes.get(at..at + 4)?.try_into().ok() };
        let lower = word(0).map_or(1, i32::from_le_bytes);
        let n = word(4).map_or(0, u32::from_le_bytes) as usize;
        let bitmap_at = 8;
        let mut at = bitmap_at + n.div_ceil(8);
        let fixed = elem.attlen();
        let mut items = Vec::with_capacity(n.min(bytes.len()));
        for k in 0..n {
            let null = bytes
                .get(bitmap_at + k / 8)
                .map_or(true, |b| b & (1 << (k % 8)) != 0);
            if null {
                items.push(Value::Null);
                continue;
            }
            let len = if fixed > 0 {
                fixed as usize
            } else {
                let Some(w) = word(at) else { break };
                at += 4;
                u32::from_le_bytes(w) as usize
            };
            let Some(payload) = bytes.get(at..at + len) else {
                break;
            };
            items.push(Value::decode(elem, payload));
            at += len;
        }
        Array {
            elem: *elem,
            lower,
            items,
        }
    }

    /// Appends the text form as PostgreSQL's `array_out` prints it.
    pub fn write_text(&self, out: &mut String) {
        if self.lower != 1 && !self.items.is_empty() {
            out.push_str(&format!("[{}:{}]=", self.lower, self.upper()));
        }
        out.push('{');
        let mut s = String::new();
        for (k, v) in self.items.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            if v.is_null() {
                out.push_str("NULL");
                continue;
            }
            s.clear();
            super::io::format_value(v, &mut s);
            write_element(&s, out);
        }
        out.push('}');
    }
}

/// One element's text, quoted when `array_out` quotes it: empty, `NULL`
/// in any case, or holding a brace, comma, quote, backslash or white space.
fn write_element(s: &str, out: &mut String) {
    let quote = s.is_empty()
        || s.eq_ignore_ascii_case("null")
        || s.bytes().any(|b| {
            matches!(
                b,
                b'{' | b'}' | b',' | b'"' | b'\\' | b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c
            )
        });
    if !quote {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

impl PartialEq for Array {
    fn eq(&self, other: &Array) -> bool {
        self.items.len() == other.items.len()
            && self.lower == other.lower
            && self
                .items
                .iter()
                .zip(&other.items)
                .all(|(a, b)| element_cmp(a, b) == Ordering::Equal)
    }
}

impl Eq for Array {}

impl Hash for Array {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.items.len().hash(state);
        for v in &self.items {
            v.hash(state);
        }
    }
}

/// Two elements in `array_cmp`'s order: NULL equals NULL and sorts last.
fn element_cmp(a: &Value, b: &Value) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => super::compare::compare(a, b),
    }
}

/// PostgreSQL's `array_cmp`: element by element, then the shorter first,
/// then by lower bound.
pub fn compare_arrays(a: &Array, b: &Array) -> Ordering {
    for (x, y) in a.items.iter().zip(&b.items) {
        let o = element_cmp(x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.items
        .len()
        .cmp(&b.items.len())
        .then(a.lower.cmp(&b.lower))
}

/// `malformed array literal: "..."` (22P02) with its detail.
fn malformed(text: &str, detail: &str) -> Error {
    err!(
        InvalidTextRepresentation,
        "malformed array literal: \"{text}\""
    )
    .with_detail(detail)
}

/// Whether `c` is white space as `array_in` skips it.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// One element as read: its de-escaped text and whether any of it was
/// quoted or escaped (then `NULL` is a string, not NULL).
struct RawElement {
    text: String,
    literal: bool,
}

/// PostgreSQL's `array_in` for one dimension: `{a,"b c",NULL}`, optionally
/// after `[lower:upper]=`. Each element goes through `elem`'s input
/// function (with its type modifier), `now` as its clock.
pub fn parse_array(text: &str, elem: &DataType, now: i64) -> Result<Value> {
    let mut rest = text.trim_start_matches(is_space);
    let mut lower = 1i32;
    if rest.starts_with('[') {
        let (lo, hi, after) = dimension(rest).ok_or_else(|| {
            malformed(
                text,
                "\"[\" must introduce explicitly-specified array dimensions.",
            )
        })?;
        lower = lo;
        rest = after.trim_start_matches(is_space);
        let body = read_elements(text, rest)?;
        if i64::from(hi) - i64::from(lo) + 1 != body.len() as i64 {
            return Err(malformed(
                text,
                "Specified array dimensions do not match array contents.",
            ));
        }
        return finish(body, elem, lower, now);
    }
    if !rest.starts_with('{') {
        return Err(malformed(
            text,
            "Array value must start with \"{\" or dimension information.",
        ));
    }
    let body = read_elements(text, rest)?;
    finish(body, elem, lower, now)
}

/// The elements' values through the element type's input function.
fn finish(body: Vec<RawElement>, elem: &DataType, lower: i32, now: i64) -> Result<Value> {
    let mut items = Vec::with_capacity(body.len());
    for e in body {
        if !e.literal && e.text.eq_ignore_ascii_case("null") {
            items.push(Value::Null);
        } else {
            items.push(super::io::parse_value_at(&e.text, elem, now)?);
        }
    }
    Ok(Array {
        elem: *elem,
        lower: if items.is_empty() { 1 } else { lower },
        items,
    }
    .into_value())
}

/// `[lower:upper]=` (or `[upper]=`): the bounds and what follows the `=`.
fn dimension(s: &str) -> Option<(i32, i32, &str)> {
    let close = s.find(']')?;
    let inner = &s[1..close];
    let (lo, hi) = match inner.split_once(':') {
        Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
        None => (1, inner.trim().parse().ok()?),
    };
    let after = s[close + 1..].trim_start_matches(is_space);
    let after = after.strip_prefix('=')?;
    Some((lo, hi, after))
}

/// The elements of `{...}` at the start of `s` (`text` is the whole input,
/// for messages); nothing but white space may follow the closing brace.
fn read_elements(text: &str, s: &str) -> Result<Vec<RawElement>> {
    let mut chars = s.char_indices().peekable();
    chars.next(); // the `{`
    let mut out = Vec::new();
    let unexpected = |c: char| malformed(text, &format!("Unexpected \"{c}\" character."));
    let end = || malformed(text, "Unexpected end of input.");
    // Skip white space; an immediate `}` is the empty array.
    while chars.peek().is_some_and(|(_, c)| is_space(*c)) {
        chars.next();
    }
    if chars.peek().is_some_and(|(_, c)| *c == '}') {
        chars.next();
        return after_close(text, chars.map(|(_, c)| c));
    }
    loop {
        while chars.peek().is_some_and(|(_, c)| is_space(*c)) {
            chars.next();
        }
        let mut e = RawElement {
            text: String::new(),
            literal: false,
        };
        let mut in_quotes = false;
        let mut any = false;
        // Length of `e.text` up to its last quoted or escaped character:
        // trailing white space after it is kept, other trailing space cut.
        let mut keep = 0usize;
        loop {
            let Some((_, c)) = chars.next() else {
                return Err(end());
            };
            match c {
                '\\' => {
                    let Some((_, d)) = chars.next() else {
                        return Err(end());
                    };
                    e.text.push(d);
                    e.literal = true;
                    keep = e.text.len();
                    any = true;
                }
                '"' if in_quotes => {
                    in_quotes = false;
                    keep = e.text.len();
                }
                '"' => {
                    in_quotes = true;
                    e.literal = true;
                    any = true;
                }
                _ if in_quotes => {
                    e.text.push(c);
                    keep = e.text.len();
                }
                '{' => {
                    if !any {
                        return Err(err!(
                            FeatureNotSupported,
                            "multidimensional arrays are not supported"
                        ));
                    }
                    return Err(unexpected(c));
                }
                ',' | '}' => {
                    if !any {
                        return Err(unexpected(c));
                    }
                    let trimmed = e.text.trim_end_matches(is_space).len().max(keep);
                    e.text.truncate(trimmed);
                    out.push(e);
                    if c == '}' {
                        return after_close(text, chars.map(|(_, c)| c)).map(|_| out);
                    }
                    break;
                }
                _ => {
                    if is_space(c) && !any {
                        continue;
                    }
                    e.text.push(c);
                    any = true;
                }
            }
        }
    }
}

/// Only white space may follow the closing brace.
fn after_close(text: &str, mut rest: impl Iterator<Item = char>) -> Result<Vec<RawElement>> {
    if rest.all(is_space) {
        Ok(Vec::new())
    } else {
        Err(malformed(text, "Junk after closing right brace."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str, elem: DataType) -> String {
        let v = parse_array(text, &elem, 0).unwrap();
        super::super::io::value_to_string(&v)
    }

    #[test]
    fn input_and_output_follow_array_in_and_array_out() {
        assert_eq!(round("{1,2,NULL}", DataType::Int4), "{1,2,NULL}");
        assert_eq!(round(" { 1 , 2 } ", DataType::Int4), "{1,2}");
        assert_eq!(round("{}", DataType::Int4), "{}");
        assert_eq!(
            round(r#"{a b,"",  "NULL",null,"x\"y",c\,d,e}"#, DataType::Text),
            r#"{"a b","","NULL",NULL,"x\"y","c,d",e}"#
        );
        assert_eq!(round("[0:1]={7,8}", DataType::Int4), "[0:1]={7,8}");
        let e = parse_array("1,2", &DataType::Int4, 0).unwrap_err();
        assert_eq!(e.message, "malformed array literal: \"1,2\"");
        let e = parse_array("{{1},{2}}", &DataType::Int4, 0).unwrap_err();
        assert_eq!(e.message, "multidimensional arrays are not supported");
        assert!(parse_array("{1,2} x", &DataType::Int4, 0).is_err());
        assert!(parse_array("{1,", &DataType::Int4, 0).is_err());
    }

    #[test]
    fn storage_round_trips_with_nulls() {
        for (text, elem) in [
            ("{1,NULL,3}", DataType::Int4),
            ("{a,NULL,\"b c\"}", DataType::Text),
            ("{}", DataType::Int8),
            ("{1.50,NULL}", DataType::Numeric(None)),
        ] {
            let Value::Array(a) = parse_array(text, &elem, 0).unwrap() else {
                panic!("not an array")
            };
            let mut buf = Vec::new();
            a.encode(&mut buf);
            assert_eq!(buf.len(), a.encoded_len());
            assert_eq!(Array::decode(&elem, &buf), *a);
        }
    }

    #[test]
    fn order_and_equality_are_array_cmp() {
        let a = |t: &str| match parse_array(t, &DataType::Int4, 0).unwrap() {
            Value::Array(a) => a,
            _ => unreachable!(),
        };
        assert_eq!(compare_arrays(&a("{1,2}"), &a("{1,2,3}")), Ordering::Less);
        assert_eq!(
            compare_arrays(&a("{1,NULL}"), &a("{1,5}")),
            Ordering::Greater
        );
        assert_eq!(*a("{1,NULL}"), *a("{1,NULL}"));
        assert_ne!(*a("{1}"), *a("{2}"));
        assert_eq!(array_type(DataType::Int4).to_string(), "integer[]");
        assert_eq!(
            array_type(array_type(DataType::Text)),
            array_type(DataType::Text)
        );
    }
}
