//! Shell variables (`\set`, `\unset`, `-v`) and their substitution into SQL
//! text (`:NAME`, `:'NAME'`, `:"NAME"`), as psql does.
//!
//! Variables are a sorted map of name to text. Names are letters, digits
//! and underscores (non-ASCII letters allowed, as psql allows bytes >= 0x80).
//! A few variables steer the shell; [`Variables::set`] checks their values
//! and [`Variables::unset`] puts back their default instead of deleting them,
//! as psql's substitute hooks do (`\unset ON_ERROR_STOP` leaves `off`).
//!
//! Substitution happens only outside string literals, quoted identifiers,
//! dollar-quoted strings and comments; `::` is a cast, not a reference; an
//! undefined variable is left as written. `:'NAME'` quotes the value as a
//! literal (quotes doubled; with a backslash psql writes ` E'...'` with the
//! backslashes doubled) and `:"NAME"` as an identifier.

use std::collections::BTreeMap;

/// The shell's variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variables {
    /// Name to value, sorted as `\set` lists them.
    map: BTreeMap<String, String>,
}

/// psql's boolean words: prefixes of `true`, `false`, `yes`, `no`, then
/// `on`, `off` (at least `of`), `1`, `0`; case-insensitive.
pub fn parse_bool(value: &str) -> Option<bool> {
    let v = value.trim().to_ascii_lowercase();
    if v.is_empty() {
        return None;
    }
    let prefix_of = |word: &str| word.starts_with(v.as_str());
    if prefix_of("true") || prefix_of("yes") || v == "on" || v == "1" {
        Some(true)
    } else if prefix_of("false")
        || prefix_of("no")
        || (v.len() >= 2 && prefix_of("off"))
        || v == "0"
    {
        Some(false)
    } else {
        None
    }
}

/// Whether `name` is a valid variable name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || !c.is_ascii())
}

/// The variables whose values the shell checks, with their defaults (the
/// value an `\unset` restores) and what `\set NAME` with no value means.
const HOOKED: &[(&str, &str, Hook)] = &[
    (
        "ECHO",
        "none",
        Hook::Words(&["none", "errors", "queries", "all"]),
    ),
    ("FETCH_COUNT", "0", Hook::Integer),
    ("ON_ERROR_STOP", "off", Hook::Bool),
    ("QUIET", "off", Hook::Bool),
    ("AUTOCOMMIT", "on", Hook::Bool),
];

/// How a steering variable's value is checked.
#[derive(Debug, Clone, Copy)]
enum Hook {
    /// A boolean; an empty value means `on`.
    Bool,
    /// A whole number.
    Integer,
    /// One of these words.
    Words(&'static [&'static str]),
}

impl Default for Variables {
    fn default() -> Variables {
        let mut map = BTreeMap::new();
        for (name, default, _) in HOOKED {
            map.insert(name.to_string(), default.to_string());
        }
        map.insert("ENCODING".into(), "UTF8".into());
        map.insert(
            "VERSION".into(),
            format!("heapdb {}", env!("CARGO_PKG_VERSION")),
        );
        map.insert("VERSION_NAME".into(), env!("CARGO_PKG_VERSION").into());
        map.insert("PROMPT1".into(), "%/%R%x%# ".into());
        map.insert("PROMPT2".into(), "%/%R%x%# ".into());
        Variables { map }
    }
}

impl Variables {
    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(String::as_str)
    }

    /// A steering variable read as a boolean (`false` when unset or not boolean).
    pub fn get_bool(&self, name: &str) -> bool {
        self.get(name).and_then(parse_bool).unwrap_or(false)
    }

    /// Sets `name` to `value`, checking the name and, for steering
    /// variables, the value; errors are psql's messages.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        if !valid_name(name) {
            return Err(format!("invalid variable name: \"{name}\""));
        }
        let mut value = value.to_string();
        if let Some((_, _, hook)) = HOOKED.iter().find(|h| h.0 == name) {
            match hook {
                Hook::Bool => {
                    if value.is_empty() {
                        value = "on".into();
                    } else if parse_bool(&value).is_none() {
                        return Err(format!(
                            "unrecognized value \"{value}\" for \"{name}\": Boolean expected"
                        ));
                    }
                }
                Hook::Integer => {
                    if value.trim().parse::<i64>().is_err() {
                        return Err(format!(
                            "invalid value \"{value}\" for \"{name}\": integer expected"
                        ));
                    }
                }
                Hook::Words(words) => {
                    let lower = value.to_ascii_lowercase();
                    if !words.contains(&lower.as_str()) {
                        return Err(format!(
                            "unrecognized value \"{value}\" for \"{name}\"\nAvailable values are: {}.",
                            words.join(", ")
                        ));
                    }
                    value = lower;
                }
            }
        }
        self.map.insert(name.to_string(), value);
        Ok(())
    }

    /// Unsets `name` (a steering variable goes back to its default).
    pub fn unset(&mut self, name: &str) -> Result<(), String> {
        if !valid_name(name) {
            return Err(format!("invalid variable name: \"{name}\""));
        }
        match HOOKED.iter().find(|h| h.0 == name) {
            Some((_, default, _)) => {
                self.map.insert(name.to_string(), default.to_string());
            }
            None => {
                self.map.remove(name);
            }
        }
        Ok(())
    }

    /// `\set` without arguments: `NAME = 'value'` lines, sorted by name.
    pub fn listing(&self) -> String {
        self.map
            .iter()
            .map(|(k, v)| format!("{k} = '{v}'\n"))
            .collect()
    }

    /// Substitutes `:NAME`, `:'NAME'` and `:"NAME"` in SQL text outside
    /// quotes and comments. Returns the text unchanged (borrowed) when there
    /// is nothing to substitute, the common case, without copying.
    pub fn substitute_sql<'a>(&self, sql: &'a str) -> std::borrow::Cow<'a, str> {
        if !sql.contains(':') {
            return std::borrow::Cow::Borrowed(sql);
        }
        let b = sql.as_bytes();
        // Grown at the first substitution: most statements have none.
        let mut out = String::new();
        let mut copied = 0; // bytes of `sql` already in `out`
        let mut changed = false;
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\'' => i = skip_quoted(b, i, b'\''),
                b'"' => i = skip_quoted(b, i, b'"'),
                b'-' if b.get(i + 1) == Some(&b'-') => {
                    i = b[i..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(b.len(), |p| i + p + 1)
                }
                b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
                b'$' => i = skip_dollar(b, i),
                b':' if b.get(i + 1) == Some(&b':') => i += 2,
                b':' => {
                    if let Some((end, text)) = self.reference(sql, i) {
                        out.push_str(&sql[copied..i]);
                        out.push_str(&text);
                        copied = end;
                        changed = true;
                        i = end;
                    } else {
                        i += 1;
                    }
                }
                _ => i += 1,
            }
        }
        if !changed {
            return std::borrow::Cow::Borrowed(sql);
        }
        out.push_str(&sql[copied..]);
        std::borrow::Cow::Owned(out)
    }

    /// A variable reference at byte `i` (a `:`): its end and replacement,
    /// or `None` when it is not a defined variable.
    pub fn reference(&self, text: &str, i: usize) -> Option<(usize, String)> {
        let rest = &text[i + 1..];
        let quote = match rest.as_bytes().first() {
            Some(b'\'') => Some('\''),
            Some(b'"') => Some('"'),
            _ => None,
        };
        let name_start = i + 1 + usize::from(quote.is_some());
        let name_len = text[name_start..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || !c.is_ascii()))
            .unwrap_or(text.len() - name_start);
        if name_len == 0 {
            return None;
        }
        let name = &text[name_start..name_start + name_len];
        let mut end = name_start + name_len;
        if let Some(q) = quote {
            if !text[end..].starts_with(q) {
                return None;
            }
            end += 1;
        }
        let value = self.get(name)?;
        let replacement = match quote {
            None => value.to_string(),
            Some('\'') => quote_literal(value),
            Some(_) => quote_ident(value),
        };
        Some((end, replacement))
    }
}

/// `value` as a SQL literal, as libpq's `PQescapeLiteral` writes it.
pub fn quote_literal(value: &str) -> String {
    let mut s = String::with_capacity(value.len() + 4);
    if value.contains('\\') {
        s.push_str(" E");
    }
    s.push('\'');
    for c in value.chars() {
        if c == '\'' || c == '\\' {
            s.push(c);
        }
        s.push(c);
    }
    s.push('\'');
    s
}

/// `value` as a quoted identifier, as libpq's `PQescapeIdentifier` writes it.
pub fn quote_ident(value: &str) -> String {
    format!("\"{}\"", value.replace('"', "\"\""))
}

/// Index after the quoted text starting at `i` (a doubled quote continues it).
fn skip_quoted(b: &[u8], i: usize, q: u8) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        if b[j] == q {
            if b.get(j + 1) == Some(&q) {
                j += 2;
                continue;
            }
            return j + 1;
        }
        j += 1;
    }
    b.len()
}

/// Index after a (nesting) block comment starting at `i`.
fn skip_block_comment(b: &[u8], i: usize) -> usize {
    let (mut depth, mut j) = (0usize, i);
    while j + 1 < b.len() {
        if b[j] == b'/' && b[j + 1] == b'*' {
            depth += 1;
            j += 2;
        } else if b[j] == b'*' && b[j + 1] == b'/' {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    b.len()
}

/// Index after a dollar-quoted string at `i`, or `i + 1` when the `$` does
/// not open one (a parameter `$1` or part of an identifier).
fn skip_dollar(b: &[u8], i: usize) -> usize {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] >= 0x80) {
        return i + 1;
    }
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] >= 0x80) {
        j += 1;
    }
    if j >= b.len() || b[j] != b'$' || b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        return i + 1;
    }
    let tag = &b[i..=j];
    let body = j + 1;
    match b[body..].windows(tag.len()).position(|w| w == tag) {
        Some(p) => body + p + tag.len(),
        None => b.len(),
    }
}

#[cfg(test)]
mod tests {
    //! Expected values are psql 15's: `\set v 'it''s'` then `\echo :'v'`
    //! printed `'it''s'`; a value with a backslash printed ` E'a\\b'`;
    //! `\set ON_ERROR_STOP` (no value) then `\echo :ON_ERROR_STOP` printed
    //! `on`, and after `\unset ON_ERROR_STOP`, `off`.
    use super::*;

    #[test]
    fn booleans_as_psql_reads_them() {
        for t in ["on", "ON", "t", "true", "y", "yes", "1"] {
            assert_eq!(parse_bool(t), Some(true), "{t}");
        }
        for f in ["off", "of", "f", "false", "n", "no", "0"] {
            assert_eq!(parse_bool(f), Some(false), "{f}");
        }
        for x in ["o", "", "2", "foo"] {
            assert_eq!(parse_bool(x), None, "{x}");
        }
    }

    #[test]
    fn steering_variables_check_values_and_unset_to_defaults() {
        let mut v = Variables::default();
        v.set("ON_ERROR_STOP", "").unwrap();
        assert_eq!(v.get("ON_ERROR_STOP"), Some("on"));
        v.unset("ON_ERROR_STOP").unwrap();
        assert_eq!(v.get("ON_ERROR_STOP"), Some("off"));
        assert_eq!(
            v.set("ON_ERROR_STOP", "foo").unwrap_err(),
            "unrecognized value \"foo\" for \"ON_ERROR_STOP\": Boolean expected"
        );
        assert_eq!(
            v.set("FETCH_COUNT", "abc").unwrap_err(),
            "invalid value \"abc\" for \"FETCH_COUNT\": integer expected"
        );
        assert_eq!(
            v.set("ECHO", "foo").unwrap_err(),
            "unrecognized value \"foo\" for \"ECHO\"\nAvailable values are: none, errors, queries, all."
        );
        assert_eq!(
            v.set("x-y", "1").unwrap_err(),
            "invalid variable name: \"x-y\""
        );
        v.set("x", "1").unwrap();
        v.unset("x").unwrap();
        assert_eq!(v.get("x"), None);
    }

    #[test]
    fn listing_is_sorted_name_equals_quoted_value() {
        let mut v = Variables::default();
        v.set("zz", "last").unwrap();
        v.set("AAA", "first").unwrap();
        let l = v.listing();
        assert!(l.starts_with("AAA = 'first'\n"), "{l}");
        assert!(l.ends_with("zz = 'last'\n"), "{l}");
        assert!(l.contains("ON_ERROR_STOP = 'off'\n"));
    }

    #[test]
    fn sql_substitution_outside_quotes_and_comments() {
        let mut v = Variables::default();
        v.set("t", "tbl").unwrap();
        v.set("s", "it's").unwrap();
        v.set("b", "a\\b").unwrap();
        let sub = |sql: &str| v.substitute_sql(sql).into_owned();
        assert_eq!(
            sub("select * from :t where x = :'s'"),
            "select * from tbl where x = 'it''s'"
        );
        assert_eq!(
            sub("select :\"t\".a, 1::int, :nosuch"),
            "select \"tbl\".a, 1::int, :nosuch"
        );
        assert_eq!(
            sub("select ':t', \":t\" -- :t\n, /* :t */ $$ :t $$, $q$:t$q$"),
            "select ':t', \":t\" -- :t\n, /* :t */ $$ :t $$, $q$:t$q$"
        );
        assert_eq!(sub("select :'b'"), "select  E'a\\\\b'");
        assert_eq!(sub("select $1, a$b, :t"), "select $1, a$b, tbl");
        assert!(matches!(
            v.substitute_sql("select 1"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
