//! The settings a client passes from its environment when it connects, as
//! libpq does: `PGOPTIONS` (`-c name=value` and `--name=value` switches),
//! then `PGDATESTYLE` and `PGTZ`, which win over it (PostgreSQL applies
//! the startup packet's options first, then its parameters).
//!
//! They become the session's defaults: `RESET` returns to them. A value the
//! setting refuses fails the start, as the server refuses the connection.

use crate::session::Settings;

/// The `(name, value)` pairs of `PGOPTIONS`, `PGDATESTYLE` and `PGTZ`
/// (read through `var`), in the order they apply.
pub fn client_settings(
    var: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    let mut out = match var("PGOPTIONS") {
        Some(opts) => parse_options(&opts)?,
        None => Vec::new(),
    };
    for (env, name) in [("PGDATESTYLE", "datestyle"), ("PGTZ", "timezone")] {
        if let Some(v) = var(env) {
            out.push((name.to_string(), v));
        }
    }
    Ok(out)
}

/// Applies `pairs` to `settings`; the error is PostgreSQL's message.
pub fn apply(settings: &mut Settings, pairs: &[(String, String)]) -> Result<(), String> {
    for (name, value) in pairs {
        settings
            .set_at_open(name, value)
            .map_err(|e| match &e.detail {
                Some(d) => format!("{}\nDETAIL:  {d}", e.message),
                None => e.message.clone(),
            })?;
    }
    Ok(())
}

/// PostgreSQL's reading of the `options` connection parameter: words split
/// at blanks (a backslash takes the next character as it is), then the
/// switches `-c name=value` (or `-cname=value`) and `--name=value`, with
/// `-` in names read as `_`.
fn parse_options(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut w = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_ascii_whitespace()) {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    w.push(n);
                }
            } else {
                w.push(c);
            }
        }
        words.push(w);
    }
    let mut out = Vec::new();
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        let setting = if let Some(long) = w.strip_prefix("--") {
            long.to_string()
        } else if w == "-c" {
            it.next()
                .ok_or_else(|| "option requires an argument -- 'c'".to_string())?
        } else if let Some(rest) = w.strip_prefix("-c") {
            rest.to_string()
        } else {
            return Err(format!(
                "invalid command-line argument for server process: {w}"
            ));
        };
        match setting.split_once('=') {
            Some((name, value)) => out.push((name.replace('-', "_"), value.to_string())),
            None if w.starts_with("--") => {
                return Err(format!("--{setting} requires a value"));
            }
            None => return Err(format!("-c {setting} requires a value")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn options_then_datestyle_and_time_zone() {
        let got = client_settings(env(&[
            (
                "PGOPTIONS",
                " -c intervalstyle=postgres_verbose --work-mem=8MB -cTimeZone=a\\ b",
            ),
            ("PGDATESTYLE", "Postgres, MDY"),
            ("PGTZ", "America/Los_Angeles"),
        ]))
        .unwrap();
        let pairs: Vec<(&str, &str)> = got.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("intervalstyle", "postgres_verbose"),
                ("work_mem", "8MB"),
                ("TimeZone", "a b"),
                ("datestyle", "Postgres, MDY"),
                ("timezone", "America/Los_Angeles"),
            ]
        );
        assert!(client_settings(env(&[("PGOPTIONS", "-x")])).is_err());
        assert!(client_settings(env(&[("PGOPTIONS", "-c work_mem")])).is_err());
        assert_eq!(client_settings(env(&[])).unwrap(), vec![]);
    }

    #[test]
    fn values_are_checked_as_set_checks_them() {
        let mut s = Settings::default();
        let pairs = client_settings(env(&[
            ("PGOPTIONS", "-c intervalstyle=postgres_verbose"),
            ("PGDATESTYLE", "Postgres, MDY"),
            ("PGTZ", "UTC"),
        ]))
        .unwrap();
        apply(&mut s, &pairs).unwrap();
        assert_eq!(s.show("DateStyle").unwrap(), "Postgres, MDY");
        assert_eq!(s.show("intervalstyle").unwrap(), "postgres_verbose");
        assert_eq!(s.show("timezone").unwrap(), "UTC");
        let bad = [("timezone".to_string(), "nosuch".to_string())];
        assert_eq!(
            apply(&mut s, &bad),
            Err("invalid value for parameter \"TimeZone\": \"nosuch\"".to_string())
        );
    }
}
