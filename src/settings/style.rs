//! The client-style settings `DateStyle`, `IntervalStyle` and `TimeZone`:
//! their input, checked as PostgreSQL checks it, and their canonical text
//! as `SHOW` prints it.
//!
//! Clients set them when they connect (`PGDATESTYLE`, `PGTZ`, `PGOPTIONS`,
//! as libpq passes them). heapdb keeps and shows them; the session hands
//! `DateStyle`, `IntervalStyle` and `TimeZone` to the types layer
//! (`types::datetime::style` and `types::datetime::zone`, which loads the
//! zone's rules for `timestamp with time zone`). `TimeZone` must
//! name a zone PostgreSQL would accept: a number of hours, a zone of the
//! system's time zone database (`/usr/share/zoneinfo`, found case-blind
//! and shown as spelt there), or a POSIX zone specification.
//!
//! Invariant: every value stored is canonical (what `SHOW` prints).

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How dates and times are written (`DateStyle`'s first part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateFormat {
    /// `1997-12-17 07:37:16`.
    Iso,
    /// `12/17/1997 07:37:16.00 PST`.
    Sql,
    /// `Wed Dec 17 07:37:16 1997 PST`.
    Postgres,
    /// `17.12.1997 07:37:16.00 PST`.
    German,
}

/// How ambiguous date input is read (`DateStyle`'s second part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateOrder {
    /// Month, day, year.
    Mdy,
    /// Day, month, year.
    Dmy,
    /// Year, month, day.
    Ymd,
}

/// `DateStyle`: output format and input field order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateStyle {
    /// The output format.
    pub format: DateFormat,
    /// The input field order.
    pub order: DateOrder,
}

impl Default for DateStyle {
    fn default() -> DateStyle {
        DateStyle {
            format: DateFormat::Iso,
            order: DateOrder::Mdy,
        }
    }
}

impl DateStyle {
    /// The canonical text (`ISO, MDY`).
    pub fn text(self) -> String {
        let format = match self.format {
            DateFormat::Iso => "ISO",
            DateFormat::Sql => "SQL",
            DateFormat::Postgres => "Postgres",
            DateFormat::German => "German",
        };
        let order = match self.order {
            DateOrder::Mdy => "MDY",
            DateOrder::Dmy => "DMY",
            DateOrder::Ymd => "YMD",
        };
        format!("{format}, {order}")
    }

    /// PostgreSQL's `check_datestyle`: a list of key words applied to
    /// `current` (what they leave out stays); `Err` holds the DETAIL line.
    pub fn parse(value: &str, current: DateStyle) -> Result<DateStyle, String> {
        let mut new = current;
        let (mut have_format, mut have_order, mut ok) = (false, false, true);
        let words = split_list(value).ok_or("List syntax is invalid.")?;
        for word in words {
            let w = word.to_ascii_lowercase();
            let format = match w.as_str() {
                "iso" => Some(DateFormat::Iso),
                "sql" => Some(DateFormat::Sql),
                "german" => Some(DateFormat::German),
                _ if w.starts_with("postgres") => Some(DateFormat::Postgres),
                _ => None,
            };
            let order = match w.as_str() {
                "ymd" => Some(DateOrder::Ymd),
                "dmy" => Some(DateOrder::Dmy),
                "mdy" | "us" => Some(DateOrder::Mdy),
                _ if w.starts_with("euro") => Some(DateOrder::Dmy),
                _ if w.starts_with("noneuro") => Some(DateOrder::Mdy),
                _ => None,
            };
            if let Some(f) = format {
                ok &= !have_format || new.format == f;
                new.format = f;
                have_format = true;
                // German also means DMY unless an order is given.
                if f == DateFormat::German && !have_order {
                    new.order = DateOrder::Dmy;
                }
            } else if let Some(o) = order {
                ok &= !have_order || new.order == o;
                new.order = o;
                have_order = true;
            } else if w == "default" {
                let d = DateStyle::default();
                if !have_format {
                    new.format = d.format;
                }
                if !have_order {
                    new.order = d.order;
                }
            } else {
                return Err(format!("Unrecognized key word: \"{word}\"."));
            }
        }
        if !ok {
            return Err("Conflicting \"datestyle\" specifications.".to_string());
        }
        Ok(new)
    }
}

/// `IntervalStyle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IntervalStyle {
    /// `1 year 2 mons 3 days 04:05:06`.
    #[default]
    Postgres,
    /// `@ 1 year 2 mons 3 days 4 hours 5 mins 6 secs`.
    PostgresVerbose,
    /// `+1-2 +3 +4:05:06`.
    SqlStandard,
    /// `P1Y2M3DT4H5M6S`.
    Iso8601,
}

impl IntervalStyle {
    /// Every value with its name, in PostgreSQL's order (for the HINT).
    pub const NAMES: [(&'static str, IntervalStyle); 4] = [
        ("postgres", IntervalStyle::Postgres),
        ("postgres_verbose", IntervalStyle::PostgresVerbose),
        ("sql_standard", IntervalStyle::SqlStandard),
        ("iso_8601", IntervalStyle::Iso8601),
    ];

    /// The name `SHOW` prints.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("postgres", |(n, _)| n)
    }

    /// The value named `value` (any case, surrounding blanks ignored).
    pub fn parse(value: &str) -> Option<IntervalStyle> {
        let v = value.trim();
        Self::NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(v))
            .map(|(_, s)| *s)
    }
}

/// The default `TimeZone`.
pub fn default_time_zone() -> Arc<str> {
    Arc::from("UTC")
}

/// PostgreSQL's `check_timezone` for the zones heapdb can name: the
/// canonical name of `value`, or `None` when PostgreSQL would refuse it.
pub fn parse_time_zone(value: &str) -> Option<String> {
    if value.len() >= 8 && value[..8].eq_ignore_ascii_case("interval") {
        return None;
    }
    if let Some(hours) = c_strtod_whole(value) {
        // SQL's sign convention; the name is a POSIX spec (`<-08>+08`).
        let seconds = (-hours * 3600.0) as i64;
        return offset_zone_name(seconds);
    }
    if value.eq_ignore_ascii_case("GMT") {
        return Some("GMT".to_string());
    }
    if let Some(name) = find_zone_file(Path::new(ZONEINFO), value) {
        return Some(name);
    }
    let upper = value.to_ascii_uppercase();
    (!upper.starts_with(':') && posix_zone(&upper)).then_some(upper)
}

/// Where the system's time zone database lies (PostgreSQL as packaged by
/// Debian and others reads it there too).
const ZONEINFO: &str = "/usr/share/zoneinfo";

/// `pg_tzset_offset`'s name for a zone `seconds` west of Greenwich.
fn offset_zone_name(seconds: i64) -> Option<String> {
    let abs = seconds.unsigned_abs();
    // tzparse takes at most 167 hours.
    if abs >= 168 * 3600 {
        return None;
    }
    let mut text = format!("{:02}", abs / 3600);
    let rest = abs % 3600;
    if rest != 0 {
        text.push_str(&format!(":{:02}", rest / 60));
        if rest % 60 != 0 {
            text.push_str(&format!(":{:02}", rest % 60));
        }
    }
    Some(if seconds > 0 {
        format!("<-{text}>+{text}")
    } else {
        format!("<+{text}>-{text}")
    })
}

/// C's `strtod` over all of `s` (leading blanks allowed, nothing after).
fn c_strtod_whole(s: &str) -> Option<f64> {
    let t = s.trim_start();
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let numeric = !body.is_empty()
        && body.bytes().any(|b| b.is_ascii_digit())
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !numeric {
        return None;
    }
    t.parse::<f64>().ok().filter(|h| h.is_finite())
}

/// The zone file under `root` named `name` case-blind, as spelt on disk;
/// only files that hold a compiled zone (`TZif`). `TimeZone`'s validation
/// and the zone loader of `timestamptz` both look zones up through it.
pub fn find_zone_file(root: &Path, name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with('/') || name.split('/').any(|p| p == ".." || p == ".") {
        return None;
    }
    let mut path = PathBuf::from(root);
    let mut parts = Vec::new();
    for part in name.split('/') {
        let exact = path.join(part);
        let found = if exact.exists() {
            part.to_string()
        } else {
            std::fs::read_dir(&path)
                .ok()?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|f| f.eq_ignore_ascii_case(part))?
        };
        path.push(&found);
        parts.push(found);
    }
    let mut magic = [0u8; 4];
    let mut f = std::fs::File::open(&path).ok()?;
    std::io::Read::read_exact(&mut f, &mut magic).ok()?;
    (&magic == b"TZif").then(|| parts.join("/"))
}

/// Whether `s` is a POSIX time zone specification as PostgreSQL's
/// `tzparse` reads it: `STD offset [DST [offset] [,rule,rule]]`, where a
/// name is `<...>` or a run of non-digits other than `,+-` (the standard
/// name may be empty, unlike IANA's rule).
fn posix_zone(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(mut i) = zone_name(b, 0) else {
        return false;
    };
    if i == b.len() {
        return false;
    }
    let Some(j) = offset(b, i) else {
        return false;
    };
    i = j;
    if i == b.len() {
        return true;
    }
    match zone_name(b, i) {
        Some(j) if j > i => i = j,
        _ => return false,
    }
    if i < b.len() && b[i] != b',' && b[i] != b';' {
        match offset(b, i) {
            Some(j) => i = j,
            None => return false,
        }
    }
    if i == b.len() {
        return true;
    }
    if b[i] != b',' && b[i] != b';' {
        return false;
    }
    let Some(j) = rule(b, i + 1) else {
        return false;
    };
    if b.get(j) != Some(&b',') {
        return false;
    }
    rule(b, j + 1) == Some(b.len())
}

/// The end of a zone name starting at `i`.
fn zone_name(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) == Some(&b'<') {
        let close = b[i..].iter().position(|&c| c == b'>')?;
        return Some(i + close + 1);
    }
    let mut j = i;
    while j < b.len() && !b[j].is_ascii_digit() && !matches!(b[j], b',' | b'-' | b'+') {
        j += 1;
    }
    Some(j)
}

/// The end of `[+-]hh[:mm[:ss]]` starting at `i`.
fn offset(b: &[u8], i: usize) -> Option<usize> {
    let i = if matches!(b.get(i), Some(b'+' | b'-')) {
        i + 1
    } else {
        i
    };
    secs(b, i, 167)
}

/// The end of `hh[:mm[:ss]]` starting at `i`, hours at most `max_hours`.
fn secs(b: &[u8], i: usize, max_hours: u64) -> Option<usize> {
    let (mut i, h) = num(b, i)?;
    if h > max_hours {
        return None;
    }
    for max in [59, 60] {
        if b.get(i) != Some(&b':') {
            break;
        }
        let (j, n) = num(b, i + 1)?;
        if n > max {
            return None;
        }
        i = j;
    }
    Some(i)
}

/// A run of digits at `i`: its end and value.
fn num(b: &[u8], i: usize) -> Option<(usize, u64)> {
    let mut j = i;
    let mut n: u64 = 0;
    while j < b.len() && b[j].is_ascii_digit() {
        n = n.saturating_mul(10).saturating_add(u64::from(b[j] - b'0'));
        j += 1;
    }
    (j > i).then_some((j, n))
}

/// The end of a transition rule (`Jn`, `n` or `Mm.w.d`, then `/time`).
fn rule(b: &[u8], i: usize) -> Option<usize> {
    let mut i = match b.get(i) {
        Some(b'J') => num(b, i + 1)?.0,
        Some(b'M') => {
            let (j, _) = num(b, i + 1)?;
            let j = (b.get(j) == Some(&b'.')).then_some(j + 1)?;
            let (j, _) = num(b, j)?;
            let j = (b.get(j) == Some(&b'.')).then_some(j + 1)?;
            num(b, j)?.0
        }
        _ => num(b, i)?.0,
    };
    if b.get(i) == Some(&b'/') {
        i = offset(b, i + 1)?;
    }
    Some(i)
}

/// PostgreSQL's `SplitIdentifierString` with `,`: the words of a list,
/// unquoted ones as written (case is the caller's), `None` when the list
/// is malformed.
fn split_list(value: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = value.trim_start();
    if rest.is_empty() {
        return Some(out);
    }
    loop {
        let word;
        if let Some(q) = rest.strip_prefix('"') {
            let mut w = String::new();
            let mut chars = q.char_indices();
            let mut end = None;
            while let Some((k, c)) = chars.next() {
                if c == '"' {
                    if q[k + 1..].starts_with('"') {
                        w.push('"');
                        chars.next();
                    } else {
                        end = Some(k + 1);
                        break;
                    }
                } else {
                    w.push(c);
                }
            }
            word = w;
            rest = &q[end?..];
        } else {
            let end = rest
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            if end == 0 {
                return None;
            }
            word = rest[..end].to_string();
            rest = &rest[end..];
        }
        out.push(word);
        rest = rest.trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => return Some(out),
            None => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Expected values are PostgreSQL 15's `SHOW` after the same `SET`.
    use super::*;

    #[test]
    fn time_zones_as_postgresql_names_them() {
        let cases = [
            ("UTC", Some("UTC")),
            ("utc", Some("UTC")),
            ("GMT", Some("GMT")),
            ("+00", Some("<+00>-00")),
            ("0", Some("<+00>-00")),
            ("-08", Some("<-08>+08")),
            ("-8", Some("<-08>+08")),
            ("10.5", Some("<+10:30>-10:30")),
            ("-1.5", Some("<-01:30>+01:30")),
            ("04:30", Some("04:30")),
            ("-04:15", Some("-04:15")),
            ("+02:00", Some("+02:00")),
            ("UTC-2", Some("UTC-2")),
            ("CST7CDT,M4.1.0,M10.5.0", Some("CST7CDT,M4.1.0,M10.5.0")),
            ("foo+1", Some("FOO+1")),
            ("<-03>3", Some("<-03>3")),
            ("nosuch", None),
            ("Z", None),
            ("", None),
            ("interval", None),
            ("ABC", None),
        ];
        for (input, want) in cases {
            assert_eq!(parse_time_zone(input).as_deref(), want, "{input:?}");
        }
        // Zone files, where the system has them.
        if Path::new(ZONEINFO).join("America/New_York").exists() {
            for (input, want) in [
                ("america/new_york", "America/New_York"),
                ("Europe/London", "Europe/London"),
                ("zulu", "Zulu"),
                ("PST8PDT", "PST8PDT"),
                ("Etc/GMT+3", "Etc/GMT+3"),
            ] {
                assert_eq!(parse_time_zone(input).as_deref(), Some(want), "{input:?}");
            }
        }
    }

    #[test]
    fn date_styles_combine_with_the_current_one() {
        let iso = DateStyle::default();
        let p = |v: &str, cur: DateStyle| DateStyle::parse(v, cur).map(DateStyle::text);
        assert_eq!(p("Postgres, MDY", iso).as_deref(), Ok("Postgres, MDY"));
        assert_eq!(p("german", iso).as_deref(), Ok("German, DMY"));
        let german = DateStyle::parse("german", iso).unwrap();
        assert_eq!(p("ymd", german).as_deref(), Ok("German, YMD"));
        assert_eq!(p("US,SQL", iso).as_deref(), Ok("SQL, MDY"));
        assert_eq!(p("European,SQL", iso).as_deref(), Ok("SQL, DMY"));
        assert_eq!(
            p("iso,german", iso),
            Err("Conflicting \"datestyle\" specifications.".to_string())
        );
        assert_eq!(
            p("foo", iso),
            Err("Unrecognized key word: \"foo\".".to_string())
        );
    }
}
