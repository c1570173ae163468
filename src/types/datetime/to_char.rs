//! `to_char(timestamp, text)` and `to_char(interval, text)`: PostgreSQL's
//! date/time templates (`formatting.c`'s `DCH_to_char`).
//!
//! The template is cut into keyword nodes (`YYYY`, `Month`, `HH24`, ...,
//! matched longest first, each with its `FM`/`TM` prefix and `TH`/`th`/`SP`
//! suffix) and literal text (`"quoted text"` with `\"` inside it, `\"`
//! outside). Numbers are zero-padded to the keyword's width unless `FM`;
//! names are blank-padded to 9 characters unless `FM`. Intervals take the
//! numeric keywords only (their years, months and days are the interval's
//! own fields); a name or weekday keyword is
//! `invalid format specification for an interval value` (22007).

use super::{
    date2j, j2date, split_timestamp, POSTGRES_EPOCH_JDATE, USECS_PER_HOUR, USECS_PER_MINUTE,
    USECS_PER_SEC,
};
use crate::err;
use crate::error::{Error, Result};
use crate::types::value::Interval;

/// The template keywords, longest first within each leading letter, as
/// PostgreSQL's `DCH_keywords` (the lower-case numeric ones mean the same
/// as their upper-case forms).
const KEYWORDS: &[&str] = &[
    "A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
    "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW",
    "IYYY", "IYY", "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF", "P.M.",
    "PM", "Q", "RM", "SSSSS", "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY",
    "YYY", "YY", "Y", "a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy",
    "d", "ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh", "iddd", "id", "iw",
    "iyyy", "iyy", "iy", "i", "j", "mi", "mm", "month", "mon", "ms", "of", "p.m.", "pm", "q", "rm",
    "sssss", "ssss", "ss", "tzh", "tzm", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y",
];

/// One piece of a template.
pub(super) enum Node<'a> {
    Text(String),
    Key {
        key: &'a str,
        fm: bool,
        th: Option<bool>,
    },
}

/// Cuts a template into nodes (`parse_format`).
pub(super) fn parse(fmt: &str) -> Vec<Node<'static>> {
    let mut out = Vec::new();
    let mut rest = fmt;
    let mut text = String::new();
    while !rest.is_empty() {
        let mut fm = false;
        let mut r = rest;
        loop {
            if let Some(x) = r.strip_prefix("FM").or_else(|| r.strip_prefix("fm")) {
                fm = true;
                r = x;
            } else if let Some(x) = r.strip_prefix("TM").or_else(|| r.strip_prefix("tm")) {
                r = x;
            } else {
                break;
            }
        }
        if let Some(key) = KEYWORDS.iter().find(|k| r.starts_with(**k)) {
            if !text.is_empty() {
                out.push(Node::Text(std::mem::take(&mut text)));
            }
            r = &r[key.len()..];
            let mut th = None;
            loop {
                if let Some(x) = r.strip_prefix("TH") {
                    th = Some(true);
                    r = x;
                } else if let Some(x) = r.strip_prefix("th") {
                    th = Some(false);
                    r = x;
                } else if let Some(x) = r.strip_prefix("SP").or_else(|| r.strip_prefix("sp")) {
                    r = x;
                } else {
                    break;
                }
            }
            out.push(Node::Key { key, fm, th });
            rest = r;
            continue;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else { break };
        match c {
            '"' => {
                let mut it = chars;
                loop {
                    match it.next() {
                        None => break,
                        Some('"') => break,
                        Some('\\') => {
                            if let Some(n) = it.next() {
                                text.push(n);
                            }
                        }
                        Some(o) => text.push(o),
                    }
                }
                rest = it.as_str();
            }
            '\\' if chars.as_str().starts_with('"') => {
                text.push('"');
                rest = &chars.as_str()[1..];
            }
            _ => {
                text.push(c);
                rest = chars.as_str();
            }
        }
    }
    if !text.is_empty() {
        out.push(Node::Text(text));
    }
    out
}

/// The broken-down value a template reads (`struct fmt_tm`).
struct Tm {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    fsec: i64,
    wday: i64,
    yday: i64,
    /// The zone's offset (seconds east) and abbreviation (timestamptz).
    gmtoff: i64,
    zone: Option<String>,
}

pub(super) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub(super) const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const ROMAN: [&str; 12] = [
    "XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I",
];

/// `st`, `nd`, `rd` or `th` for the number ending `s` (`str_numth`).
fn numth(s: &str, upper: bool) -> &'static str {
    let b = s.as_bytes();
    let last = b.last().copied().unwrap_or(b'0');
    let teen = b.len() >= 2 && b[b.len() - 2] == b'1';
    let suf = match last {
        b'1' if !teen => "st",
        b'2' if !teen => "nd",
        b'3' if !teen => "rd",
        _ => "th",
    };
    if upper {
        match suf {
            "st" => "ST",
            "nd" => "ND",
            "rd" => "RD",
            _ => "TH",
        }
    } else {
        suf
    }
}

/// `%0*d`: zero-padded to `width` (the sign counts in the width).
fn pad(v: i64, width: usize) -> String {
    if v < 0 {
        format!("-{:0w$}", v.unsigned_abs(), w = width.saturating_sub(1))
    } else {
        format!("{v:0width$}")
    }
}

/// The ISO year and week of a Gregorian date.
fn iso_week(year: i64, mon: i64, mday: i64) -> (i64, i64) {
    let j = date2j(year, mon, mday);
    let isodow = (j + 1).rem_euclid(7);
    let isodow = if isodow == 0 { 7 } else { isodow };
    let thursday = j - isodow + 4;
    let (y, _, _) = j2date(thursday);
    ((thursday - date2j(y, 1, 1)) / 7 + 1, y)
}

fn interval_error() -> Error {
    err!(
        InvalidDatetimeFormat,
        "invalid format specification for an interval value"
    )
    .with_hint("Intervals are not tied to specific calendar dates.")
}

/// Whether the `TH` suffix applies to field `key` (numbers only).
fn takes_th(key: &str) -> bool {
    !matches!(
        key,
        "MONTH"
            | "Month"
            | "month"
            | "MON"
            | "Mon"
            | "mon"
            | "DAY"
            | "Day"
            | "day"
            | "DY"
            | "Dy"
            | "dy"
            | "RM"
            | "rm"
    ) && !key.contains(['.', 'A', 'P', 'a', 'p', 'B', 'b', 'T', 't', 'O', 'o'])
}

/// The year a field shows: BC years count from 1 backwards (not for an
/// interval).
fn adjusted_year(y: i64, is_interval: bool) -> i64 {
    if is_interval || y > 0 {
        y
    } else {
        -(y - 1)
    }
}

/// `CC`: the century.
fn century(tm: &Tm, is_interval: bool, fm: bool) -> String {
    let i = if is_interval {
        tm.year / 100
    } else if tm.year > 0 {
        (tm.year - 1) / 100 + 1
    } else {
        tm.year / 100 - 1
    };
    if (-99..=99).contains(&i) {
        let w = if fm {
            0
        } else if i >= 0 {
            2
        } else {
            3
        };
        pad(i, w)
    } else {
        i.to_string()
    }
}

/// `YYYY` ... `Y` and the ISO forms `IYYY` ... `I`.
fn year(tm: &Tm, key: &str, fm: bool, is_interval: bool) -> String {
    let year = if key.starts_with(['I', 'i']) {
        adjusted_year(iso_week(tm.year, tm.mon, tm.mday).1, is_interval)
    } else {
        adjusted_year(tm.year, is_interval)
    };
    let digits = key.len();
    let w = if fm {
        0
    } else if adjusted_year(tm.year, is_interval) >= 0 {
        digits
    } else {
        digits + 1
    };
    match digits {
        4 => pad(year, w),
        3 => pad(year % 1000, w),
        2 => pad(year % 100, w),
        _ => format!("{}", year % 10),
    }
}

/// `RM`: the month in Roman numerals (an interval's months count down).
fn roman_month(tm: &Tm, key: &str, fm: bool) -> String {
    if tm.mon == 0 && tm.year == 0 {
        return String::new();
    }
    let k = if tm.mon == 0 {
        if tm.year >= 0 {
            0
        } else {
            11
        }
    } else if tm.mon < 0 {
        -(tm.mon + 1)
    } else {
        12 - tm.mon
    };
    let r = ROMAN[k as usize];
    let r = if key == "rm" {
        r.to_ascii_lowercase()
    } else {
        r.to_string()
    };
    if fm {
        r
    } else {
        format!("{r:<4}")
    }
}

/// Formats `tm` by `fmt` (`DCH_to_char`).
fn format(tm: &Tm, fmt: &str, is_interval: bool) -> Result<String> {
    let mut out = String::new();
    let adjust_year = |y: i64| adjusted_year(y, is_interval);
    for node in parse(fmt) {
        let (key, fm, th) = match node {
            Node::Text(t) => {
                out.push_str(&t);
                continue;
            }
            Node::Key { key, fm, th } => (key, fm, th),
        };
        let width = |w: usize, v: i64| {
            if fm {
                0
            } else if v >= 0 {
                w
            } else {
                w + 1
            }
        };
        let num = |v: i64, w: usize| pad(v, width(w, v));
        let text_only = |s: &str| -> Result<String> {
            if is_interval {
                Err(interval_error())
            } else {
                Ok(s.to_string())
            }
        };
        let name = |s: String| if fm { s } else { format!("{s:<9}") };
        let pm = tm.hour % 24 >= 12;
        let iso = || iso_week(tm.year, tm.mon, tm.mday);
        let s: String = match key {
            "A.M." | "P.M." => (if pm { "P.M." } else { "A.M." }).into(),
            "AM" | "PM" => (if pm { "PM" } else { "AM" }).into(),
            "a.m." | "p.m." => (if pm { "p.m." } else { "a.m." }).into(),
            "am" | "pm" => (if pm { "pm" } else { "am" }).into(),
            "HH" | "HH12" | "hh" | "hh12" => {
                let h = if tm.hour % 12 == 0 { 12 } else { tm.hour % 12 };
                pad(h, width(2, tm.hour))
            }
            "HH24" | "hh24" => num(tm.hour, 2),
            "MI" | "mi" => num(tm.min, 2),
            "SS" | "ss" => num(tm.sec, 2),
            "FF1" | "ff1" => format!("{:01}", tm.fsec / 100_000),
            "FF2" | "ff2" => format!("{:02}", tm.fsec / 10_000),
            "FF3" | "ff3" | "MS" | "ms" => format!("{:03}", tm.fsec / 1000),
            "FF4" | "ff4" => format!("{:04}", tm.fsec / 100),
            "FF5" | "ff5" => format!("{:05}", tm.fsec / 10),
            "FF6" | "ff6" | "US" | "us" => format!("{:06}", tm.fsec),
            "SSSS" | "ssss" | "SSSSS" | "sssss" => {
                (tm.hour * 3600 + tm.min * 60 + tm.sec).to_string()
            }
            "TZ" => text_only(&tm.zone.as_deref().unwrap_or("").to_ascii_uppercase())?,
            "tz" => text_only(&tm.zone.as_deref().unwrap_or("").to_ascii_lowercase())?,
            "OF" | "of" | "TZH" | "TZM" | "tzh" | "tzm" => {
                let sign = if tm.gmtoff >= 0 { '+' } else { '-' };
                let (h, m) = (tm.gmtoff.abs() / 3600, tm.gmtoff.abs() % 3600 / 60);
                text_only(&match key {
                    "TZH" | "tzh" => format!("{sign}{h:02}"),
                    "TZM" | "tzm" => format!("{m:02}"),
                    _ if m != 0 => format!("{sign}{h:02}:{m:02}"),
                    _ => format!("{sign}{h:02}"),
                })?
            }
            "A.D." | "B.C." => text_only(if tm.year <= 0 { "B.C." } else { "A.D." })?,
            "AD" | "BC" => text_only(if tm.year <= 0 { "BC" } else { "AD" })?,
            "a.d." | "b.c." => text_only(if tm.year <= 0 { "b.c." } else { "a.d." })?,
            "ad" | "bc" => text_only(if tm.year <= 0 { "bc" } else { "ad" })?,
            "MONTH" | "Month" | "month" | "MON" | "Mon" | "mon" => {
                text_only("")?;
                if tm.mon == 0 {
                    String::new()
                } else {
                    let full = MONTHS[(tm.mon - 1) as usize];
                    match key {
                        "MONTH" => name(full.to_ascii_uppercase()),
                        "Month" => name(full.to_string()),
                        "month" => name(full.to_ascii_lowercase()),
                        "MON" => full[..3].to_ascii_uppercase(),
                        "Mon" => full[..3].to_string(),
                        _ => full[..3].to_ascii_lowercase(),
                    }
                }
            }
            "MM" | "mm" => num(tm.mon, 2),
            "DAY" | "Day" | "day" | "DY" | "Dy" | "dy" => {
                text_only("")?;
                let full = DAYS[tm.wday as usize];
                match key {
                    "DAY" => name(full.to_ascii_uppercase()),
                    "Day" => name(full.to_string()),
                    "day" => name(full.to_ascii_lowercase()),
                    "DY" => full[..3].to_ascii_uppercase(),
                    "Dy" => full[..3].to_string(),
                    _ => full[..3].to_ascii_lowercase(),
                }
            }
            "DDD" | "ddd" => pad(tm.yday, if fm { 0 } else { 3 }),
            "IDDD" | "iddd" => {
                let (week, _) = iso();
                let isodow = if tm.wday == 0 { 7 } else { tm.wday };
                pad((week - 1) * 7 + isodow, if fm { 0 } else { 3 })
            }
            "DD" | "dd" => pad(tm.mday, if fm { 0 } else { 2 }),
            "D" | "d" => {
                text_only("")?;
                (tm.wday + 1).to_string()
            }
            "ID" | "id" => {
                text_only("")?;
                (if tm.wday == 0 { 7 } else { tm.wday }).to_string()
            }
            "WW" | "ww" => pad((tm.yday - 1) / 7 + 1, if fm { 0 } else { 2 }),
            "IW" | "iw" => pad(iso().0, if fm { 0 } else { 2 }),
            "Q" | "q" => {
                if tm.mon == 0 {
                    String::new()
                } else {
                    ((tm.mon - 1) / 3 + 1).to_string()
                }
            }
            "CC" | "cc" => century(tm, is_interval, fm),
            "Y,YYY" | "y,yyy" => {
                let y = adjust_year(tm.year);
                format!("{},{:03}", y / 1000, y - (y / 1000) * 1000)
            }
            "YYYY" | "yyyy" | "IYYY" | "iyyy" | "YYY" | "yyy" | "IYY" | "iyy" | "YY" | "yy"
            | "IY" | "iy" | "Y" | "y" | "I" | "i" => year(tm, key, fm, is_interval),
            "RM" | "rm" => roman_month(tm, key, fm),
            "W" | "w" => ((tm.mday - 1) / 7 + 1).to_string(),
            "J" | "j" => date2j(tm.year, tm.mon, tm.mday).to_string(),
            _ => String::new(),
        };
        out.push_str(&s);
        if let Some(upper) = th {
            let numeric = takes_th(key);
            if numeric && !s.is_empty() {
                out.push_str(numth(&s, upper));
            }
        }
    }
    Ok(out)
}

/// `to_char(timestamptz, fmt)`: the local time in the session's zone,
/// with `TZ`, `OF`, `TZH`, `TZM` of that zone.
pub fn timestamptz_to_char(ts: i64, fmt: &str) -> Result<Option<String>> {
    if ts == i64::MIN || ts == i64::MAX || fmt.is_empty() {
        return Ok(None);
    }
    let (east, abbrev) = super::zone::with_session_zone(|z| {
        let (east, _, abbrev) = z.at(ts);
        (east, abbrev.to_string())
    });
    to_char_zoned(
        ts + i64::from(east) * USECS_PER_SEC,
        fmt,
        i64::from(east),
        Some(abbrev),
    )
}

/// `to_char(timestamp, fmt)`; `None` for an infinite timestamp (NULL).
pub fn timestamp_to_char(ts: i64, fmt: &str) -> Result<Option<String>> {
    if ts == i64::MIN || ts == i64::MAX || fmt.is_empty() {
        return Ok(None);
    }
    to_char_zoned(ts, fmt, 0, None)
}

/// `to_char` of the local time `ts` with the zone's offset and name.
fn to_char_zoned(ts: i64, fmt: &str, gmtoff: i64, zone: Option<String>) -> Result<Option<String>> {
    let (date, time) = split_timestamp(ts);
    let j = date + POSTGRES_EPOCH_JDATE;
    let (year, mon, mday) = j2date(j);
    let (year, mon, mday) = (year, mon as i64, mday as i64);
    let tm = Tm {
        year,
        mon,
        mday,
        hour: time / USECS_PER_HOUR,
        min: time / USECS_PER_MINUTE % 60,
        sec: time / USECS_PER_SEC % 60,
        fsec: time % USECS_PER_SEC,
        wday: (j + 1).rem_euclid(7),
        yday: j - date2j(year, 1, 1) + 1,
        gmtoff,
        zone,
    };
    format(&tm, fmt, false).map(Some)
}

/// `to_char(interval, fmt)`; `None` for an empty template (NULL).
pub fn interval_to_char(iv: &Interval, fmt: &str) -> Result<Option<String>> {
    if fmt.is_empty() {
        return Ok(None);
    }
    let t = iv.micros;
    let year = (iv.months / 12) as i64;
    let mon = (iv.months % 12) as i64;
    let tm = Tm {
        year,
        mon,
        mday: iv.days as i64,
        hour: t / USECS_PER_HOUR,
        min: t / USECS_PER_MINUTE % 60,
        sec: t / USECS_PER_SEC % 60,
        fsec: t % USECS_PER_SEC,
        wday: 0,
        yday: (year * 12 + mon) * 30 + iv.days as i64,
        gmtoff: 0,
        zone: None,
    };
    format(&tm, fmt, true).map(Some)
}
