//! Date and timestamp text input, following PostgreSQL's `DecodeDateTime`
//! for the forms people type, with `DateStyle = ISO, MDY`.
//!
//! Accepted: `1999-01-08`, `1999-01-08 04:05:06.789`, `1999-01-08T04:05:06`,
//! `January 8, 1999`, `8 Jan 1999`, `1/8/1999` (month first), `1/8/99`
//! (two-digit years: `< 70` is 20xx), `19990108`, `990108`,
//! `Thu Jan 07 15:15:00 1999 EST`, `04:05 PM`, `BC` / `AD`, and the special
//! words `epoch`, `infinity`, `-infinity`, `now`, `today`, `tomorrow`,
//! `yesterday`, `allballs`. Time zones (`EST`, `UTC`, `Z`, `+02`,
//! `-08:00`) are accepted and ignored, as PostgreSQL does for `timestamp
//! without time zone`. Errors use PostgreSQL's wording: `invalid input
//! syntax for type date: "x"` (22007), `date/time field value out of
//! range: "1999-02-30"` (22008).

use super::*;
use crate::err;
use crate::error::{Error, Result};

/// What a date/time string denotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parsed {
    /// `infinity`.
    Infinity,
    /// `-infinity`.
    NegInfinity,
    /// Days since 2000-01-01 plus microseconds into the day.
    Moment(i64, i64),
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const WEEKDAYS: [&str; 7] = [
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
];
/// Zone names accepted (and ignored) in `timestamp without time zone` input.
const ZONES: [&str; 26] = [
    "utc", "gmt", "z", "zulu", "ut", "est", "edt", "cst", "cdt", "mst", "mdt", "pst", "pdt",
    "akst", "akdt", "hst", "cet", "cest", "eet", "eest", "wet", "west", "bst", "msk", "jst", "ist",
];

fn month_of(word: &str) -> Option<u32> {
    if word.len() < 3 {
        return None;
    }
    let w = if word == "sept" { "sep" } else { word };
    MONTHS
        .iter()
        .position(|m| m.starts_with(w))
        .map(|i| i as u32 + 1)
}

fn is_weekday(word: &str) -> bool {
    word.len() >= 3 && WEEKDAYS.iter().any(|d| d.starts_with(word))
        || matches!(word, "tues" | "wednes" | "thur" | "thurs")
}

/// The collected fields of one input string.
#[derive(Default)]
struct Fields {
    year: Option<i64>,
    /// Whether the year was written with two digits or fewer.
    year_2digit: bool,
    month: Option<u32>,
    day: Option<u32>,
    time: Option<i64>,
    pm: Option<bool>,
    bc: bool,
    /// Relative day offset from `today`/`tomorrow`/`yesterday`.
    special_day: Option<i64>,
    now: bool,
}

/// Parses `date` input; `now` is the clock for `now`/`today`.
pub fn parse_date_at(text: &str, now: i64) -> Result<i32> {
    match decode(text, "date", now)? {
        Parsed::Infinity => Ok(DATE_END),
        Parsed::NegInfinity => Ok(DATE_BEGIN),
        Parsed::Moment(days, _) => {
            let j = days + POSTGRES_EPOCH_JDATE;
            if !(JULIAN_MIN..DATE_END_JULIAN).contains(&j) {
                return Err(err!(DatetimeFieldOverflow, "date out of range: \"{text}\""));
            }
            Ok(days as i32)
        }
    }
}

/// Parses `timestamp` input; `now` is the clock for `now`/`today`.
pub fn parse_timestamp_at(text: &str, now: i64) -> Result<i64> {
    match decode(text, "timestamp", now)? {
        Parsed::Infinity => Ok(TS_END),
        Parsed::NegInfinity => Ok(TS_BEGIN),
        Parsed::Moment(days, time) => make_timestamp(days, time)
            .ok_or_else(|| err!(DatetimeFieldOverflow, "timestamp out of range: \"{text}\"")),
    }
}

/// Parses `date` input with the system clock.
pub fn parse_date(text: &str) -> Result<i32> {
    parse_date_at(text, system_now())
}

/// Parses `timestamp` input with the system clock.
pub fn parse_timestamp(text: &str) -> Result<i64> {
    parse_timestamp_at(text, system_now())
}

/// Splits input into fields: runs of digits and date/time punctuation,
/// runs of letters, and signed numbers; whitespace and commas separate.
fn tokenize(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit()
            || ((c == b'+' || c == b'-') && i + 1 < b.len() && b[i + 1].is_ascii_digit())
        {
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_digit() || matches!(b[i], b'-' | b'/' | b'.' | b':' | b'+'))
            {
                i += 1;
            }
            // ISO 8601 `T` between a date and a time.
            if i < b.len()
                && (b[i] == b'T' || b[i] == b't')
                && i + 1 < b.len()
                && b[i + 1].is_ascii_digit()
            {
                out.push(s[start..i].to_string());
                i += 1;
                continue;
            }
            // A month name glued on: `08-Jan-1999`.
            if i < b.len() && b[i].is_ascii_alphabetic() && matches!(b[i - 1], b'-' | b'/' | b'.') {
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'-' | b'/' | b'.'))
                {
                    i += 1;
                }
            }
        } else if c.is_ascii_alphabetic() {
            while i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b'.') {
                i += 1;
            }
            // `Jan-08-1999`
            while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'-' | b'/')) {
                i += 1;
            }
        } else if c == b'-' || c == b'+' {
            i += 1;
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
        } else {
            i += 1;
        }
        out.push(s[start..i].to_string());
    }
    out
}

fn bad_syntax(text: &str, ty: &str) -> Error {
    err!(
        InvalidDatetimeFormat,
        "invalid input syntax for type {ty}: \"{text}\""
    )
}

fn field_overflow(text: &str) -> Error {
    err!(
        DatetimeFieldOverflow,
        "date/time field value out of range: \"{text}\""
    )
}

/// Parses `HH:MM[:SS[.fff]]` into microseconds, or `None`.
fn parse_time(tok: &str) -> Option<std::result::Result<i64, ()>> {
    let parts: Vec<&str> = tok.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return None;
    }
    let num = |p: &str| -> Option<i64> {
        if p.is_empty() || p.len() > 9 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        p.parse().ok()
    };
    let h = num(parts[0])?;
    let m = num(parts[1])?;
    let mut us = 0i64;
    let mut s = 0i64;
    if let Some(sec) = parts.get(2) {
        let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
        s = num(whole)?;
        if !frac.is_empty() {
            if !frac.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            // Round to microseconds, as PostgreSQL does.
            let f: f64 = format!("0.{frac}").parse().ok()?;
            us = (f * 1e6).round() as i64;
        }
    }
    if h > 24 || m > 59 || s > 60 || (h == 24 && (m > 0 || s > 0 || us > 0)) {
        return Some(Err(()));
    }
    Some(Ok(h * USECS_PER_HOUR
        + m * USECS_PER_MINUTE
        + s * USECS_PER_SEC
        + us))
}

/// Decodes a string into a [`Parsed`] value.
fn decode(text: &str, ty: &str, now: i64) -> Result<Parsed> {
    let lower = text.trim().to_ascii_lowercase();
    match lower.as_str() {
        "infinity" | "+infinity" => return Ok(Parsed::Infinity),
        "-infinity" => return Ok(Parsed::NegInfinity),
        "epoch" => return Ok(Parsed::Moment(-10957, 0)),
        "" => return Err(bad_syntax(text, ty)),
        _ => {}
    }
    let mut f = Fields::default();
    let tokens = tokenize(&lower);
    for (idx, tok) in tokens.iter().enumerate() {
        let tok = tok.as_str();
        let first = tok.as_bytes()[0];
        if first.is_ascii_digit() {
            decode_number(tok, &mut f, text, ty, idx, &tokens)?;
        } else if first == b'+' || first == b'-' {
            // A signed number after a time is a zone offset; ignore it.
            if f.time.is_none() && !tok[1..].bytes().all(|c| c.is_ascii_alphabetic()) {
                return Err(bad_syntax(text, ty));
            }
        } else {
            decode_word(tok, &mut f, text, ty)?;
        }
    }
    finish(f, text, ty, now)
}

/// Decodes one numeric field (date, time, or a lone number).
fn decode_number(
    tok: &str,
    f: &mut Fields,
    text: &str,
    ty: &str,
    idx: usize,
    tokens: &[String],
) -> Result<()> {
    let _ = (idx, tokens);
    if tok.contains(':') {
        // A time, possibly with a zone offset glued on: 04:05:06-08
        let cut = tok[1..].find(['+', '-']).map_or(tok.len(), |p| p + 1);
        if f.time.is_some() {
            return Err(bad_syntax(text, ty));
        }
        match parse_time(&tok[..cut]) {
            Some(Ok(us)) => f.time = Some(us),
            Some(Err(())) => return Err(field_overflow(text)),
            None => return Err(bad_syntax(text, ty)),
        }
        return Ok(());
    }
    let seps = tok
        .bytes()
        .filter(|c| matches!(c, b'-' | b'/' | b'.'))
        .count();
    if seps >= 2 || (seps == 1 && tok.contains(['-', '/'])) {
        if f.month.is_some() || f.day.is_some() {
            return Err(bad_syntax(text, ty));
        }
        return decode_date_field(tok, f, text, ty);
    }
    if tok.contains('.') {
        // Seconds with fraction after a time is not supported; reject.
        return Err(bad_syntax(text, ty));
    }
    if !tok.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad_syntax(text, ty));
    }
    let n: i64 = tok.parse().map_err(|_| field_overflow(text))?;
    let have_date = f.year.is_some() && f.month.is_some() && f.day.is_some();
    if have_date && f.time.is_none() && (tok.len() == 6 || tok.len() == 4) {
        // A concatenated time after a complete date: HHMMSS or HHMM.
        let part = |i: usize| tok[i..i + 2].parse::<i64>().expect("checked digits");
        let (h, m, sec) = (part(0), part(2), if tok.len() == 6 { part(4) } else { 0 });
        if h > 23 || m > 59 || sec > 59 {
            return Err(field_overflow(text));
        }
        f.time = Some(h * USECS_PER_HOUR + m * USECS_PER_MINUTE + sec * USECS_PER_SEC);
        return Ok(());
    }
    if !have_date
        && f.month.is_none()
        && f.day.is_none()
        && f.year.is_none()
        && (tok.len() == 8 || tok.len() == 6)
    {
        // YYYYMMDD or YYMMDD
        let (y, rest) = tok.split_at(tok.len() - 4);
        f.year = Some(y.parse().map_err(|_| bad_syntax(text, ty))?);
        f.year_2digit = y.len() <= 2;
        f.month = Some(rest[..2].parse().map_err(|_| bad_syntax(text, ty))?);
        f.day = Some(rest[2..].parse().map_err(|_| bad_syntax(text, ty))?);
        return Ok(());
    }
    if f.month.is_some() && f.day.is_none() && tok.len() <= 2 {
        f.day = Some(n as u32);
    } else if f.year.is_none() && (f.day.is_some() || tok.len() > 2) {
        f.year = Some(n);
        f.year_2digit = tok.len() <= 2;
    } else if f.day.is_none() && tok.len() <= 2 {
        f.day = Some(n as u32);
    } else {
        return Err(bad_syntax(text, ty));
    }
    Ok(())
}

/// Decodes `1999-01-08`, `1/8/1999`, `08-Jan-1999`, `1999.01.08`.
fn decode_date_field(tok: &str, f: &mut Fields, text: &str, ty: &str) -> Result<()> {
    let parts: Vec<&str> = tok.split(['-', '/', '.']).collect();
    if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(bad_syntax(text, ty));
    }
    let num = |p: &str| -> Result<i64> {
        if !p.bytes().all(|c| c.is_ascii_digit()) || p.len() > 9 {
            return Err(bad_syntax(text, ty));
        }
        p.parse().map_err(|_| bad_syntax(text, ty))
    };
    let named = parts
        .iter()
        .position(|p| p.as_bytes()[0].is_ascii_alphabetic());
    let (y, m, d, ytok) = match named {
        Some(i) => {
            let m = month_of(parts[i]).ok_or_else(|| bad_syntax(text, ty))?;
            let others: Vec<&str> = parts
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, p)| *p)
                .collect();
            // `1999-Jan-08` or `08-Jan-1999` / `Jan-08-1999`
            if others[0].len() > 2 {
                (num(others[0])?, m, num(others[1])?, others[0])
            } else {
                (num(others[1])?, m, num(others[0])?, others[1])
            }
        }
        None if parts[0].len() > 2 => (
            num(parts[0])?,
            num(parts[1])? as u32,
            num(parts[2])?,
            parts[0],
        ),
        None => (
            num(parts[2])?,
            num(parts[0])? as u32,
            num(parts[1])?,
            parts[2],
        ),
    };
    f.year = Some(y);
    f.year_2digit = ytok.len() <= 2;
    f.month = Some(m);
    f.day = Some(d as u32);
    Ok(())
}

/// Decodes a word: month, weekday, AM/PM, BC/AD, zone, special.
fn decode_word(tok: &str, f: &mut Fields, text: &str, ty: &str) -> Result<()> {
    if tok.contains(['-', '/']) && tok.as_bytes().iter().any(|c| c.is_ascii_digit()) {
        return decode_date_field(tok, f, text, ty);
    }
    let w = tok.trim_end_matches('.');
    match w {
        "am" | "a.m" => f.pm = Some(false),
        "pm" | "p.m" => f.pm = Some(true),
        "bc" | "b.c" => f.bc = true,
        "ad" | "a.d" => {}
        "today" => f.special_day = Some(0),
        "tomorrow" => f.special_day = Some(1),
        "yesterday" => f.special_day = Some(-1),
        "now" => f.now = true,
        "allballs" => f.time = Some(0),
        "t" | "on" | "at" => {}
        _ if ZONES.contains(&w) => {}
        _ => {
            if let Some(m) = month_of(w) {
                if f.month.is_some() {
                    return Err(bad_syntax(text, ty));
                }
                // `8 January 1999`: a lone number before the month was the day.
                f.month = Some(m);
                return Ok(());
            }
            if is_weekday(w) {
                return Ok(());
            }
            return Err(bad_syntax(text, ty));
        }
    }
    Ok(())
}

/// Checks the fields and builds the moment.
fn finish(f: Fields, text: &str, ty: &str, now: i64) -> Result<Parsed> {
    let mut time = f.time.unwrap_or(0);
    if let Some(pm) = f.pm {
        let hour = time / USECS_PER_HOUR;
        if !(1..=12).contains(&hour) && f.time.is_some() {
            return Err(field_overflow(text));
        }
        if pm && hour < 12 {
            time += 12 * USECS_PER_HOUR;
        } else if !pm && hour == 12 {
            time -= 12 * USECS_PER_HOUR;
        }
    }
    if f.now {
        if f.year.is_some() || f.month.is_some() || f.time.is_some() {
            return Err(bad_syntax(text, ty));
        }
        let (d, t) = split_timestamp(now);
        return Ok(Parsed::Moment(d, t));
    }
    if let Some(off) = f.special_day {
        if f.year.is_some() || f.month.is_some() || f.day.is_some() {
            return Err(bad_syntax(text, ty));
        }
        let (d, _) = split_timestamp(now);
        return Ok(Parsed::Moment(d + off, time));
    }
    let (Some(mut year), Some(month), Some(day)) = (f.year, f.month, f.day) else {
        return Err(bad_syntax(text, ty));
    };
    if f.year_2digit && !f.bc {
        if year < 70 {
            year += 2000;
        } else if year < 100 {
            year += 1900;
        }
    }
    if f.bc {
        if year <= 0 {
            return Err(field_overflow(text));
        }
        year = 1 - year;
    } else if year == 0 {
        return Err(field_overflow(text));
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return Err(field_overflow(text));
    }
    if !(-4713..=5_874_897).contains(&year) {
        return Err(err!(DatetimeFieldOverflow, "{ty} out of range: \"{text}\""));
    }
    let days = date2j(year, month as i64, day as i64) - POSTGRES_EPOCH_JDATE;
    Ok(Parsed::Moment(days, time))
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 on this machine.
    use super::*;

    fn ts(s: &str) -> String {
        let mut out = String::new();
        write_timestamp(parse_timestamp_at(s, 0).unwrap(), &mut out);
        out
    }

    fn d(s: &str) -> String {
        let mut out = String::new();
        write_date(parse_date_at(s, 0).unwrap(), &mut out);
        out
    }

    #[test]
    fn date_forms() {
        for s in [
            "1999-01-08",
            "January 8, 1999",
            "1/8/1999",
            "19990108",
            "990108",
            "1999-Jan-08",
            "08-Jan-1999",
            "Jan-08-1999",
            "8 January 1999",
            "1/8/99",
            " 1999-01-08 04:05:06 ",
            "Friday, January 8, 1999",
        ] {
            assert_eq!(d(s), "1999-01-08", "{s}");
        }
        assert_eq!(d("1/8/69"), "2069-01-08");
        assert_eq!(d("0044-03-15 BC"), "0044-03-15 BC");
        assert_eq!(d("epoch"), "1970-01-01");
        assert_eq!(d("infinity"), "infinity");
        assert_eq!(d("-infinity"), "-infinity");
        assert_eq!(d("today"), "2000-01-01");
        assert_eq!(d("tomorrow"), "2000-01-02");
        let e = parse_date_at("1999-02-30", 0).unwrap_err();
        assert_eq!(
            e.message,
            "date/time field value out of range: \"1999-02-30\""
        );
        assert_eq!(e.code.code(), "22008");
        let e = parse_date_at("banana", 0).unwrap_err();
        assert_eq!(e.message, "invalid input syntax for type date: \"banana\"");
        assert_eq!(e.code.code(), "22007");
    }

    #[test]
    fn timestamp_forms() {
        assert_eq!(ts("1999-01-08 04:05:06.789"), "1999-01-08 04:05:06.789");
        assert_eq!(ts("1999-01-08T04:05:06"), "1999-01-08 04:05:06");
        assert_eq!(ts("Thu Jan 07 15:15:00 1999 EST"), "1999-01-07 15:15:00");
        assert_eq!(ts("1999-01-08 04:05:06 -8:00"), "1999-01-08 04:05:06");
        assert_eq!(ts("1999-01-08 04:05:06+02"), "1999-01-08 04:05:06");
        assert_eq!(ts("January 8, 1999 4:05 PM"), "1999-01-08 16:05:00");
        assert_eq!(ts("1999-01-08 12:00 am"), "1999-01-08 00:00:00");
        assert_eq!(ts("2000-01-01 24:00:00"), "2000-01-02 00:00:00");
        assert_eq!(ts("epoch"), "1970-01-01 00:00:00");
        assert_eq!(ts("now"), "2000-01-01 00:00:00");
        assert_eq!(
            ts("1999-01-08 04:05:06.1234567"),
            "1999-01-08 04:05:06.123457"
        );
        let e = parse_timestamp_at("1999-01-08 25:00", 0).unwrap_err();
        assert_eq!(
            e.message,
            "date/time field value out of range: \"1999-01-08 25:00\""
        );
        let e = parse_timestamp_at("x", 0).unwrap_err();
        assert_eq!(e.message, "invalid input syntax for type timestamp: \"x\"");
    }
}
