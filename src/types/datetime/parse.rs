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
    match decode_common(text.as_bytes()) {
        Some(f) => finish(f, text, ty, now),
        None => decode_general(text, ty, now),
    }
}

/// The two forms that bulk input is made of, read without allocating:
/// ISO `YYYY-MM-DD[ HH:MM:SS]` and PostgreSQL's `Www Mmm DD HH:MM:SS YYYY
/// [ZONE]` (a script dumped with `DateStyle = Postgres`). Returns the fields
/// for [`finish`], or `None` for any other text, including these forms
/// with a field out of range: the general decoder then gives the answer or
/// the error, so both roads agree on every input.
fn decode_common(b: &[u8]) -> Option<Fields> {
    fn digits(b: &[u8]) -> Option<i64> {
        b.iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    }
    /// `HH:MM:SS` in microseconds, when in range.
    fn time(b: &[u8]) -> Option<i64> {
        if b.len() != 8 || b[2] != b':' || b[5] != b':' {
            return None;
        }
        let (h, m, s) = (digits(&b[..2])?, digits(&b[3..5])?, digits(&b[6..])?);
        if h > 23 || m > 59 || s > 59 {
            return None;
        }
        Some(h * USECS_PER_HOUR + m * USECS_PER_MINUTE + s * USECS_PER_SEC)
    }
    fn lower3(b: &[u8]) -> Option<[u8; 3]> {
        let w = [
            b[0].to_ascii_lowercase(),
            b[1].to_ascii_lowercase(),
            b[2].to_ascii_lowercase(),
        ];
        w.iter().all(u8::is_ascii_lowercase).then_some(w)
    }
    let mut f = Fields::default();
    if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' {
        f.year = Some(digits(&b[..4])?);
        f.month = Some(digits(&b[5..7])? as u32);
        f.day = Some(digits(&b[8..10])? as u32);
        match b.len() {
            10 => {}
            19 if b[10] == b' ' => f.time = Some(time(&b[11..])?),
            _ => return None,
        }
    } else if b.len() >= 24 && b[3] == b' ' && b[7] == b' ' && b[10] == b' ' && b[19] == b' ' {
        let day = lower3(&b[..3])?;
        if !["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
            .iter()
            .any(|d| d.as_bytes() == day)
        {
            return None;
        }
        let month = lower3(&b[4..7])?;
        let m = MONTHS.iter().position(|m| m.as_bytes()[..3] == month)?;
        f.month = Some(m as u32 + 1);
        f.day = Some(digits(&b[8..10])? as u32);
        f.time = Some(time(&b[11..19])?);
        f.year = Some(digits(&b[20..24])?);
        match b.len() {
            24 => {}
            n if n > 25 && n <= 30 && b[24] == b' ' => {
                let zone = &b[25..];
                if !ZONES
                    .iter()
                    .any(|z| z.as_bytes().eq_ignore_ascii_case(zone))
                {
                    return None;
                }
            }
            _ => return None,
        }
    } else {
        return None;
    }
    (f.year != Some(0)).then_some(f)
}

/// Decodes a string into a [`Parsed`] value: PostgreSQL's field-by-field
/// reading of any accepted form.
fn decode_general(text: &str, ty: &str, now: i64) -> Result<Parsed> {
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

    /// The allocation-free reading of the two common forms gives exactly
    /// what the general decoder gives (value or error), in range and out.
    #[test]
    fn common_forms_decode_as_the_general_decoder_does() {
        let mut inputs: Vec<String> = Vec::new();
        let days = ["Thu", "fri", "SAT", "Sun", "Mon", "Tue", "Wed", "Xyz"];
        let months = ["Jan", "feb", "MAR", "Apr", "Sep", "Dec", "Foo"];
        let zones = ["", " EST", " utc", " Z", " PST", " ABC", " E5T"];
        for (i, day) in days.iter().enumerate() {
            for (j, mon) in months.iter().enumerate() {
                for (k, zone) in zones.iter().enumerate() {
                    let d = [1, 7, 28, 29, 30, 31, 0, 32][(i + j + k) % 8];
                    let hms = ["15:15:00", "23:59:59", "24:00:00", "00:60:00", "12:00:60"]
                        [(i * 3 + k) % 5];
                    let year = ["1999", "2000", "1900", "0000", "2024"][(j + k) % 5];
                    inputs.push(format!("{day} {mon} {d:02} {hms} {year}{zone}"));
                }
            }
        }
        for y in ["1999", "2000", "2100", "0000", "0001"] {
            for m in ["01", "02", "12", "13", "00"] {
                for d in ["01", "28", "29", "30", "31", "00"] {
                    for t in [
                        "",
                        " 04:05:06",
                        " 23:59:59",
                        " 24:00:00",
                        " 12:61:00",
                        "T04:05:06",
                    ] {
                        inputs.push(format!("{y}-{m}-{d}{t}"));
                    }
                }
            }
        }
        inputs.extend(
            [
                "1999-1-08",
                "1999-01-08 4:05:06",
                "Thu Jan 7 15:15:00 1999",
                "Thu Jan 07 15:15 1999",
            ]
            .map(String::from),
        );
        let mut fast = 0;
        for text in &inputs {
            if decode_common(text.as_bytes()).is_some() {
                fast += 1;
            }
            for ty in ["timestamp", "date"] {
                let general = decode_general(text, ty, 0).map_err(|e| (e.code, e.message));
                let both = decode(text, ty, 0).map_err(|e| (e.code, e.message));
                assert_eq!(both, general, "{ty} {text:?}");
            }
        }
        assert!(
            fast > inputs.len() / 4,
            "the fast road was taken {fast} times"
        );
        assert!(decode_common(b"Thu Jan 07 15:15:00 1999 EST").is_some());
        assert!(decode_common(b"1999-01-08 04:05:06").is_some());
    }
}
