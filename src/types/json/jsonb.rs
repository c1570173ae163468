//! [`Jsonb`]: the parsed form of a `jsonb` value, its text output, and its
//! order and hashing.
//!
//! Invariants, kept by every constructor here: an object's keys are unique
//! (input keeps the last of duplicates) and sorted as PostgreSQL stores
//! them, shorter keys first and then by bytes; numbers are exact
//! [`Numeric`]s printed as `numeric` prints them (`1e3` is `1000`, `1.0`
//! stays `1.0`). Output is PostgreSQL's `JsonbToCString`: `{"a": 1, "b":
//! [1, 2]}`.
//!
//! The order is PostgreSQL's `compareJsonbContainers`: objects above
//! arrays above booleans above numbers above strings above null; arrays by
//! length and then element by element, objects by member count and then
//! key, value, key, value in stored order; a top-level scalar is an array
//! of one element that sorts below a real array of one element (so `'1'`
//! is above `'[]'`, as in PostgreSQL). Numbers compare as numerics, so `1`
//! equals `1.0`; [`Hash`] agrees with that equality.
//!
//! Storage ([`Jsonb::encode`]) is the canonical text; decoding parses it.

use super::parse::{self, Kind, Mode, Node};
use crate::error::Result;
use crate::types::numeric::Numeric;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// One `jsonb` value (see the module doc for its invariants).
#[derive(Debug, Clone)]
pub enum Jsonb {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number.
    Number(Numeric),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Jsonb>),
    /// An object: unique keys in [`key_order`].
    Object(Vec<(String, Jsonb)>),
}

/// The order of keys in a stored object: by length, then by bytes.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl Jsonb {
    /// Parses `jsonb` input text.
    pub fn parse(text: &str) -> Result<Jsonb> {
        let node = parse::parse(text, Mode::Jsonb)?;
        Jsonb::from_node(node, text)
    }

    /// The value a parsed tree describes (`text` is its source).
    pub fn from_node(node: Node, text: &str) -> Result<Jsonb> {
        Ok(match node.kind {
            Kind::Null => Jsonb::Null,
            Kind::Bool(b) => Jsonb::Bool(b),
            Kind::Number => Jsonb::Number(Numeric::parse(&text[node.span.0..node.span.1])?),
            Kind::String(s) => Jsonb::String(s),
            Kind::Array(items) => Jsonb::Array(
                items
                    .into_iter()
                    .map(|n| Jsonb::from_node(n, text))
                    .collect::<Result<_>>()?,
            ),
            Kind::Object(members) => {
                let mut m = Vec::with_capacity(members.len());
                for (k, v) in members {
                    m.push((k, Jsonb::from_node(v, text)?));
                }
                Jsonb::object(m)
            }
        })
    }

    /// An object of `members`, sorted, the last of duplicate keys kept.
    pub fn object(mut members: Vec<(String, Jsonb)>) -> Jsonb {
        // A stable sort keeps duplicates in input order; keep the last.
        members.sort_by(|a, b| key_order(&a.0, &b.0));
        let mut out: Vec<(String, Jsonb)> = Vec::with_capacity(members.len());
        for (k, v) in members {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = v,
                _ => out.push((k, v)),
            }
        }
        Jsonb::Object(out)
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Jsonb> {
        match self {
            Jsonb::Object(m) => m
                .binary_search_by(|(k, _)| key_order(k, key))
                .ok()
                .map(|i| &m[i].1),
            _ => None,
        }
    }

    /// Whether this is an array or an object.
    pub fn is_container(&self) -> bool {
        matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// The name `jsonb_typeof` gives the value.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    /// Appends the canonical text form.
    pub fn write(&self, out: &mut String) {
        match self {
            Jsonb::Null => out.push_str("null"),
            Jsonb::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Jsonb::Number(n) => n.write_text(out),
            Jsonb::String(s) => escape_json(s, out),
            Jsonb::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Jsonb::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    escape_json(k, out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// The canonical text form.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    /// `jsonb_pretty`'s form: four spaces per level, one member per line.
    pub fn write_pretty(&self, level: usize, out: &mut String) {
        let pad = |out: &mut String, n: usize| out.extend(std::iter::repeat("    ").take(n));
        match self {
            Jsonb::Array(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    pad(out, level + 1);
                    v.write_pretty(level + 1, out);
                }
                out.push('\n');
                pad(out, level);
                out.push(']');
            }
            Jsonb::Object(m) => {
                out.push_str("{\n");
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    pad(out, level + 1);
                    escape_json(k, out);
                    out.push_str(": ");
                    v.write_pretty(level + 1, out);
                }
                out.push('\n');
                pad(out, level);
                out.push('}');
            }
            scalar => scalar.write(out),
        }
    }

    /// Appends the storage bytes: the canonical text.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut s = String::new();
        self.write(&mut s);
        out.extend_from_slice(s.as_bytes());
    }

    /// Reads stored bytes back ([`Jsonb::encode`]'s); a malformed payload
    /// (which a page checksum would already have caught) reads as `null`.
    pub fn decode(bytes: &[u8]) -> Jsonb {
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| Jsonb::parse(s).ok())
            .unwrap_or(Jsonb::Null)
    }

    /// The rank of a type in the order (PostgreSQL's `jbvType` values).
    fn rank(&self) -> u8 {
        match self {
            Jsonb::Null => 0,
            Jsonb::String(_) => 1,
            Jsonb::Number(_) => 2,
            Jsonb::Bool(_) => 3,
            Jsonb::Array(_) => 4,
            Jsonb::Object(_) => 5,
        }
    }

    /// The order of two top-level values (see the module doc).
    pub fn compare(&self, other: &Jsonb) -> Ordering {
        // A top-level scalar is a one-element "raw scalar" array.
        let (a_raw, b_raw) = (!self.is_container(), !other.is_container());
        let array = matches!(self, Jsonb::Array(_)) || matches!(other, Jsonb::Array(_));
        if a_raw != b_raw && array {
            raw_vs_array(self, other)
        } else {
            cmp_values(self, other)
        }
    }
}

/// A top-level comparison where at least one side is a raw scalar and the
/// other an array: PostgreSQL first orders raw scalars below arrays, then
/// lets the element count override that, then compares elements.
fn raw_vs_array(a: &Jsonb, b: &Jsonb) -> Ordering {
    let parts = |v: &Jsonb| -> (bool, Vec<Jsonb>) {
        match v {
            Jsonb::Array(items) => (false, items.clone()),
            s => (true, vec![s.clone()]),
        }
    };
    let ((ra, ia), (rb, ib)) = (parts(a), parts(b));
    let mut res = Ordering::Equal;
    if ra != rb {
        res = if ra {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    if ia.len() != ib.len() {
        res = ia.len().cmp(&ib.len());
    }
    if res != Ordering::Equal {
        return res;
    }
    for (x, y) in ia.iter().zip(&ib) {
        let o = cmp_values(x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn cmp_values(a: &Jsonb, b: &Jsonb) -> Ordering {
    match (a, b) {
        (Jsonb::Null, Jsonb::Null) => Ordering::Equal,
        (Jsonb::Bool(x), Jsonb::Bool(y)) => x.cmp(y),
        (Jsonb::Number(x), Jsonb::Number(y)) => x.cmp(y),
        (Jsonb::String(x), Jsonb::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Jsonb::Array(x), Jsonb::Array(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|(p, q)| cmp_values(p, q))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        (Jsonb::Object(x), Jsonb::Object(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|((ka, va), (kb, vb))| {
                    ka.as_bytes()
                        .cmp(kb.as_bytes())
                        .then_with(|| cmp_values(va, vb))
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        _ => a.rank().cmp(&b.rank()),
    }
}

impl PartialEq for Jsonb {
    fn eq(&self, other: &Jsonb) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl Eq for Jsonb {}

impl Hash for Jsonb {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Jsonb::Null => {}
            Jsonb::Bool(b) => b.hash(state),
            Jsonb::Number(n) => n.hash(state),
            Jsonb::String(s) => s.hash(state),
            Jsonb::Array(items) => {
                items.len().hash(state);
                for v in items {
                    v.hash(state);
                }
            }
            Jsonb::Object(m) => {
                m.len().hash(state);
                for (k, v) in m {
                    k.hash(state);
                    v.hash(state);
                }
            }
        }
    }
}

/// Appends `s` as a JSON string literal, PostgreSQL's `escape_json`.
pub fn escape_json(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    //! Expected text and orders are PostgreSQL 15's.
    use super::*;

    fn j(s: &str) -> Jsonb {
        Jsonb::parse(s).unwrap()
    }

    #[test]
    fn output_sorts_keys_and_keeps_the_last_duplicate() {
        assert_eq!(
            j(r#"{"a":1, "a":2, "bb":[1,2,{"x":null}]}"#).to_text(),
            r#"{"a": 2, "bb": [1, 2, {"x": null}]}"#
        );
        assert_eq!(
            j(r#"{"bb":1,"c":2,"aaa":1e3}"#).to_text(),
            r#"{"c": 2, "bb": 1, "aaa": 1000}"#
        );
        assert_eq!(j(r#""a\u0001\"""#).to_text(), r#""a\u0001\"""#);
    }

    #[test]
    fn order_follows_postgres() {
        let lt = |a: &str, b: &str| assert_eq!(j(a).compare(&j(b)), Ordering::Less, "{a} < {b}");
        lt("[]", "1");
        lt("1", "[1]");
        lt("null", "\"a\"");
        lt("\"a\"", "1");
        lt("1", "true");
        lt("[1,2]", "{}");
        lt("{\"b\":1}", "{\"a\":1,\"b\":1}");
        assert_eq!(j("1.0"), j("1"));
    }
}
