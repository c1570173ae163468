//! A table's storage parameters (PostgreSQL's `reloptions`): `CREATE TABLE
//! ... WITH (name = value, ...)` and `ALTER TABLE ... SET (...) / RESET
//! (...)`, kept in [`TableDef::options`] as PostgreSQL keeps them in
//! `pg_class.reloptions`: `name=value` texts, the value as written.
//!
//! heapdb knows one parameter, `fillfactor` (10..100, default 100): the
//! share of each heap page INSERT and COPY fill, the rest left for the
//! updated versions of the page's rows (heap-only updates need room on
//! the same page). PostgreSQL's other heap parameters are refused as not
//! supported; any other name is PostgreSQL's "unrecognized parameter".
//!
//! Invariants: every list stored passed [`validate`] (so [`fillfactor`]
//! never fails on a stored list); options are merged as
//! `transformRelOptions` merges them (the old ones not named keep their
//! order, the new values follow; RESET removes).

use super::TableDef;
use crate::err;
use crate::error::Result;

/// The default fill factor: pages filled whole.
pub const DEFAULT_FILLFACTOR: u8 = 100;

/// PostgreSQL 15's heap parameters other than `fillfactor`: accepted by
/// PostgreSQL, not by heapdb.
const UNSUPPORTED: &[&str] = &[
    "autovacuum_enabled",
    "autovacuum_vacuum_threshold",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_analyze_threshold",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "autovacuum_freeze_min_age",
    "autovacuum_freeze_max_age",
    "autovacuum_freeze_table_age",
    "autovacuum_multixact_freeze_min_age",
    "autovacuum_multixact_freeze_max_age",
    "autovacuum_multixact_freeze_table_age",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_analyze_scale_factor",
    "log_autovacuum_min_duration",
    "toast_tuple_target",
    "user_catalog_table",
    "parallel_workers",
    "vacuum_index_cleanup",
    "vacuum_truncate",
];

impl TableDef {
    /// The table's fill factor (percent of each heap page inserts fill).
    pub fn fillfactor(&self) -> u8 {
        fillfactor(&self.options)
    }
}

/// The fill factor a validated option list sets.
pub fn fillfactor(options: &[String]) -> u8 {
    options
        .iter()
        .rev()
        .find_map(|o| o.strip_prefix("fillfactor="))
        .and_then(parse_int)
        .and_then(|v| u8::try_from(v).ok())
        .unwrap_or(DEFAULT_FILLFACTOR)
}

/// `old` (a stored list) changed by one `SET (...)` (`reset` false) or
/// `RESET (...)`: `given` are the parameters with their values as text
/// (`None`: written without a value). PostgreSQL's `transformRelOptions`
/// then `heap_reloptions`: the result is validated.
pub fn transform(
    old: &[String],
    given: &[(String, Option<String>)],
    reset: bool,
) -> Result<Vec<String>> {
    let mut out: Vec<String> = old
        .iter()
        .filter(|o| {
            let name = o.split('=').next().unwrap_or("");
            !given.iter().any(|(n, _)| n == name)
        })
        .cloned()
        .collect();
    for (name, value) in given {
        if reset {
            if value.is_some() {
                return Err(err!(
                    SyntaxError,
                    "RESET must not include values for parameters"
                ));
            }
            continue;
        }
        out.push(format!("{name}={}", value.as_deref().unwrap_or("true")));
    }
    validate(&out)?;
    Ok(out)
}

/// PostgreSQL's checks of a heap's option list, in list order: the name
/// known, given once, its value in range.
pub fn validate(options: &[String]) -> Result<()> {
    let mut seen_fillfactor = false;
    for o in options {
        let (name, value) = o.split_once('=').unwrap_or((o.as_str(), ""));
        if name != "fillfactor" {
            if UNSUPPORTED.contains(&name) {
                return Err(err!(
                    FeatureNotSupported,
                    "storage parameter \"{name}\" is not supported"
                ));
            }
            return Err(err!(
                InvalidParameterValue,
                "unrecognized parameter \"{name}\""
            ));
        }
        if seen_fillfactor {
            return Err(err!(
                InvalidParameterValue,
                "parameter \"{name}\" specified more than once"
            ));
        }
        seen_fillfactor = true;
        let v = parse_int(value).ok_or_else(|| {
            err!(
                InvalidParameterValue,
                "invalid value for integer option \"{name}\": {value}"
            )
        })?;
        if !(10..=100).contains(&v) {
            return Err(err!(
                InvalidParameterValue,
                "value {value} out of bounds for option \"{name}\""
            )
            .with_detail("Valid values are between \"10\" and \"100\"."));
        }
    }
    Ok(())
}

/// PostgreSQL's `parse_int` without units: an integer in C's `strtol` base
/// 0 (`0x` hex, leading-zero octal), or, when it stops at `.`, `e` or `E`
/// or overflows, a `strtod` number rounded half to even; surrounding white
/// space allowed. `None` when not a number or outside `int4`.
fn parse_int(s: &str) -> Option<i64> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
    let t = s.trim_start_matches(is_space);
    let b = t.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let hex = b.len() > i + 2
        && b[i] == b'0'
        && (b[i + 1] | 0x20) == b'x'
        && b[i + 2].is_ascii_hexdigit();
    let (radix, start) = if hex {
        (16, i + 2)
    } else if b.get(i) == Some(&b'0') {
        (8, i)
    } else {
        (10, i)
    };
    let end = start
        + b[start..]
            .iter()
            .take_while(|&&c| (c as char).is_digit(radix))
            .count();
    let int = i128::from_str_radix(&t[start..end], radix).ok();
    let float_next = matches!(b.get(end), Some(b'.' | b'e' | b'E'));
    let (value, rest) = match int {
        Some(v) if !float_next && v <= i64::MAX as i128 => {
            (if neg { -v } else { v } as f64, &t[end..])
        }
        _ if !hex => {
            let len = float_prefix(t);
            if len == 0 {
                return None;
            }
            (t[..len].parse::<f64>().ok()?, &t[len..])
        }
        _ => return None,
    };
    if !rest.chars().all(is_space) || value.is_nan() {
        return None;
    }
    let r = value.round_ties_even();
    (r >= f64::from(i32::MIN) && r <= f64::from(i32::MAX)).then_some(r as i64)
}

/// The length of the longest prefix of `t` that is a decimal `strtod`
/// number (sign, digits, point, exponent) or an infinity; 0 if none.
fn float_prefix(t: &str) -> usize {
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let lower = t[i..].to_ascii_lowercase();
    for word in ["infinity", "inf"] {
        if lower.starts_with(word) {
            return i + word.len();
        }
    }
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let int = digits(i);
    i += int;
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        frac = digits(i + 1);
        if int + frac > 0 {
            i += 1 + frac;
        }
    }
    if int + frac == 0 {
        return 0;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exp = digits(i + 1 + sign);
        if exp > 0 {
            i += 1 + sign + exp;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_as_postgresql_parses_them() {
        for (s, v) in [
            ("70", Some(70)),
            (" 0x20", Some(32)),
            ("070", Some(56)),
            ("50.5", Some(50)),
            ("51.5", Some(52)),
            ("1e2", Some(100)),
            ("+50 ", Some(50)),
            ("-1", Some(-1)),
            (".5", Some(0)),
            ("abc", None),
            ("true", None),
            ("08", None),
            ("", None),
            ("1e10", None),
            ("nan", None),
            ("inf", None),
            ("5 0", None),
        ] {
            assert_eq!(parse_int(s), v, "{s:?}");
        }
    }

    #[test]
    fn set_replaces_reset_removes_and_values_are_checked() {
        let set = |old: &[String], name: &str, v: Option<&str>| {
            transform(old, &[(name.to_string(), v.map(str::to_string))], false)
        };
        let a = set(&[], "fillfactor", Some("70")).unwrap();
        assert_eq!(a, vec!["fillfactor=70"]);
        assert_eq!(fillfactor(&a), 70);
        let b = set(&a, "fillfactor", Some("1e2")).unwrap();
        assert_eq!(
            (b.clone(), fillfactor(&b)),
            (vec!["fillfactor=1e2".into()], 100)
        );
        let r = transform(&b, &[("fillfactor".into(), None)], true).unwrap();
        assert!(r.is_empty());
        assert_eq!(fillfactor(&r), DEFAULT_FILLFACTOR);
        let e = |r: Result<Vec<String>>| r.unwrap_err().message;
        assert_eq!(
            e(set(&[], "fillfactor", Some("9"))),
            "value 9 out of bounds for option \"fillfactor\""
        );
        assert_eq!(
            e(set(&[], "fillfactor", None)),
            "invalid value for integer option \"fillfactor\": true"
        );
        assert_eq!(
            e(set(&[], "foo", Some("1"))),
            "unrecognized parameter \"foo\""
        );
        assert_eq!(
            e(transform(
                &[],
                &[("fillfactor".into(), Some("3".into()))],
                true
            )),
            "RESET must not include values for parameters"
        );
    }
}
