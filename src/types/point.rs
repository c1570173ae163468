//! `point` (OID 600): a pair of `double precision` coordinates, read and
//! written as PostgreSQL's `point_in` / `point_out` do (`(x,y)` or `x,y`,
//! spaces allowed around each part; printed `(x,y)` with float8's output).
//!
//! heapdb keeps a point as its canonical text (a [`Value::Text`] of the
//! form `point_out` prints), so it stores, copies and prints exactly as
//! PostgreSQL's; the geometric operators are not implemented. Invariant:
//! every stored point text is canonical (made by [`point_in`]).

use std::sync::Arc;

use super::float::{parse_float8, write_float8};
use super::Value;
use crate::err;
use crate::error::Result;

/// Parses point text into its canonical form.
pub fn point_in(text: &str) -> Result<Value> {
    let bad = || {
        err!(
            InvalidTextRepresentation,
            "invalid input syntax for type point: \"{text}\""
        )
    };
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let inner = match s.strip_prefix('(') {
        Some(rest) => rest
            .trim_end_matches(|c: char| c.is_ascii_whitespace())
            .strip_suffix(')')
            .ok_or_else(bad)?,
        None => s,
    };
    let (x, y) = inner.split_once(',').ok_or_else(bad)?;
    let coord = |p: &str| {
        let p = p.trim_matches(|c: char| c.is_ascii_whitespace());
        if p.is_empty() {
            return Err(bad());
        }
        parse_float8(p).map_err(|e| match e.code {
            crate::error::SqlState::InvalidTextRepresentation => bad(),
            _ => e,
        })
    };
    let (x, y) = (coord(x)?, coord(y)?);
    let mut out = String::with_capacity(24);
    out.push('(');
    write_float8(x, &mut out);
    out.push(',');
    write_float8(y, &mut out);
    out.push(')');
    Ok(Value::Text(Arc::from(out.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(s: &str) -> String {
        match point_in(s) {
            Ok(Value::Text(t)) => t.to_string(),
            Ok(v) => format!("{v:?}"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn reads_as_point_in() {
        assert_eq!(show("(3.1,6.2)"), "(3.1,6.2)");
        assert_eq!(show(" ( 1 , 2 ) "), "(1,2)");
        assert_eq!(show("1e3,-0.5"), "(1000,-0.5)");
        assert_eq!(
            show("(1,2"),
            "invalid input syntax for type point: \"(1,2\""
        );
        assert_eq!(show("(1)"), "invalid input syntax for type point: \"(1)\"");
        assert_eq!(
            show("(a,2)"),
            "invalid input syntax for type point: \"(a,2)\""
        );
    }
}
