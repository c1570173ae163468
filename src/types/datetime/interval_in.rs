//! `interval` text input, as PostgreSQL's `interval_in`: the string is cut
//! into fields (`ParseDateTime`), the fields are read right to left
//! (`DecodeInterval`: a unit names the number before it, a bare number
//! before a time field is days, and a bare number alone counts in the last
//! field of the interval qualifier, seconds without one), and when that
//! finds the syntax bad, the string is tried as ISO 8601
//! (`DecodeISO8601Interval`: `P1Y2M3DT4H5M6S`, `P0001-02-03T04:05:06`,
//! `P00010203T040506`).
//!
//! Invariants: every field is added with overflow checks into years,
//! months, days and microseconds kept apart (`pg_itm_in`), so an input
//! whose parts overflow reports `interval field value out of range: "..."`
//! (22015), one whose years and months overflow together `interval out of
//! range` (22008), and bad syntax `invalid input syntax for type interval`
//! (22007) — the same choice PostgreSQL makes for the same text.
//! Fractions spill down as PostgreSQL's `AdjustFract*` do (a month is 30
//! days, a day 24 hours).

use super::{USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC};
use crate::err;
use crate::error::Result;
use crate::types::value::Interval;

/// A field of an interval qualifier (`INTERVAL '1' DAY TO HOUR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Field {
    /// `YEAR`
    Year,
    /// `MONTH`
    Month,
    /// `DAY`
    Day,
    /// `HOUR`
    Hour,
    /// `MINUTE`
    Minute,
    /// `SECOND`
    Second,
}

/// An interval qualifier's range: its first and last field (`None` for
/// an interval without one, PostgreSQL's `INTERVAL_FULL_RANGE`).
pub type Range = Option<(Field, Field)>;

/// Why decoding failed (PostgreSQL's `DTERR_*` codes that intervals use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DtErr {
    BadFormat,
    FieldOverflow,
}

type Dt<T> = std::result::Result<T, DtErr>;

/// The parts of an interval while it is read (`pg_itm_in`).
#[derive(Default, Clone, Copy)]
struct ItmIn {
    usec: i64,
    mday: i32,
    mon: i32,
    year: i32,
}

/// Field kinds of the tokenizer (`DTK_NUMBER`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ftype {
    Number,
    Time,
    Date,
    Str,
    Special,
    Tz,
}

/// The unit a number is counted in (`DTK_SECOND`, ...); `Ignore` before
/// the first field is known (`IGNORE_DTF`), `None` after `ago`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Ignore,
    None,
    Microsec,
    Millisec,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
    Decade,
    Century,
    Millennium,
    /// Units an interval cannot take (`quarter`, `timezone`).
    Other,
}

/// Field-mask bits (`DTK_M(...)`).
const M_MICRO: u32 = 1;
const M_MILLI: u32 = 2;
const M_SECOND: u32 = 4;
const M_MINUTE: u32 = 8;
const M_HOUR: u32 = 16;
const M_DAY: u32 = 32;
const M_WEEK: u32 = 64;
const M_MONTH: u32 = 128;
const M_YEAR: u32 = 256;
const M_DECADE: u32 = 512;
const M_CENTURY: u32 = 1024;
const M_MILLENNIUM: u32 = 2048;
const M_ALL_SECS: u32 = M_SECOND | M_MILLI | M_MICRO;
const M_TIME: u32 = M_HOUR | M_MINUTE | M_ALL_SECS;

/// PostgreSQL's `deltatktbl`: the words interval input knows, compared on
/// their first 10 characters (`TOKMAXLEN`).
fn decode_units(token: &str) -> Option<Unit> {
    let t = &token[..token.len().min(10)];
    Some(match t {
        "c" | "cent" | "centuries" | "century" => Unit::Century,
        "d" | "day" | "days" => Unit::Day,
        "dec" | "decade" | "decades" | "decs" => Unit::Decade,
        "h" | "hour" | "hours" | "hr" | "hrs" => Unit::Hour,
        "m" | "min" | "mins" | "minute" | "minutes" => Unit::Minute,
        "microsecon" | "us" | "usec" | "usecond" | "useconds" | "usecs" => Unit::Microsec,
        "mil" | "millennia" | "millennium" | "mils" => Unit::Millennium,
        "millisecon" | "ms" | "msec" | "msecond" | "mseconds" | "msecs" => Unit::Millisec,
        "mon" | "mons" | "month" | "months" => Unit::Month,
        "qtr" | "quarter" | "timezone" | "timezone_h" | "timezone_m" => Unit::Other,
        "s" | "sec" | "second" | "seconds" | "secs" => Unit::Second,
        "w" | "week" | "weeks" => Unit::Week,
        "y" | "year" | "years" | "yr" | "yrs" => Unit::Year,
        _ => return None,
    })
}

/// Whether `token` is one of PostgreSQL's core date/time keywords
/// (`datetktbl`), which the tokenizer consults before gluing a word to
/// the digits after it.
fn is_date_keyword(token: &str) -> bool {
    matches!(
        token,
        "ad" | "allballs"
            | "am"
            | "apr"
            | "april"
            | "at"
            | "aug"
            | "august"
            | "bc"
            | "d"
            | "dec"
            | "december"
            | "dow"
            | "doy"
            | "dst"
            | "epoch"
            | "feb"
            | "february"
            | "fri"
            | "friday"
            | "h"
            | "infinity"
            | "isodow"
            | "isoyear"
            | "j"
            | "jan"
            | "january"
            | "jd"
            | "jul"
            | "julian"
            | "july"
            | "jun"
            | "june"
            | "m"
            | "mar"
            | "march"
            | "may"
            | "mm"
            | "mon"
            | "monday"
            | "nov"
            | "november"
            | "now"
            | "oct"
            | "october"
            | "on"
            | "pm"
            | "s"
            | "sat"
            | "saturday"
            | "sep"
            | "sept"
            | "september"
            | "sun"
            | "sunday"
            | "t"
            | "thu"
            | "thur"
            | "thurs"
            | "thursday"
            | "today"
            | "tomorrow"
            | "tue"
            | "tues"
            | "tuesday"
            | "wed"
            | "wednesday"
            | "weds"
            | "y"
            | "yesterday"
    )
}

/// Cuts `s` into lower-cased fields and their kinds (`ParseDateTime`).
fn parse_fields(s: &str) -> Dt<Vec<(String, Ftype)>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let take = |i: &mut usize, f: &mut String, pred: &dyn Fn(u8) -> bool| {
        while *i < b.len() && pred(b[*i]) {
            f.push(b[*i].to_ascii_lowercase() as char);
            *i += 1;
        }
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let mut f = String::new();
        let kind;
        if c.is_ascii_digit() {
            take(&mut i, &mut f, &|c| c.is_ascii_digit());
            let next = b.get(i).copied();
            if next == Some(b':') {
                kind = Ftype::Time;
                f.push(':');
                i += 1;
                take(&mut i, &mut f, &|c| {
                    c.is_ascii_digit() || c == b':' || c == b'.'
                });
            } else if let Some(delim @ (b'-' | b'/' | b'.')) = next {
                f.push(delim as char);
                i += 1;
                if b.get(i).is_some_and(u8::is_ascii_digit) {
                    let mut k = if delim == b'.' {
                        Ftype::Number
                    } else {
                        Ftype::Date
                    };
                    take(&mut i, &mut f, &|c| c.is_ascii_digit());
                    if b.get(i) == Some(&delim) {
                        k = Ftype::Date;
                        take(&mut i, &mut f, &|c| c.is_ascii_digit() || c == delim);
                    }
                    kind = k;
                } else {
                    kind = Ftype::Date;
                    take(&mut i, &mut f, &|c| c.is_ascii_alphanumeric() || c == delim);
                }
            } else {
                kind = Ftype::Number;
            }
        } else if c == b'.' {
            f.push('.');
            i += 1;
            take(&mut i, &mut f, &|c| c.is_ascii_digit());
            kind = Ftype::Number;
        } else if c.is_ascii_alphabetic() {
            take(&mut i, &mut f, &|c| c.is_ascii_alphabetic());
            let next = b.get(i).copied();
            let is_date = match next {
                Some(b'-' | b'/' | b'.') => true,
                Some(c) if c == b'+' || c.is_ascii_digit() => !is_date_keyword(&f),
                _ => false,
            };
            if is_date {
                kind = Ftype::Date;
                f.push(b[i].to_ascii_lowercase() as char);
                i += 1;
                take(&mut i, &mut f, &|c| {
                    matches!(c, b'+' | b'-' | b'/' | b'_' | b'.' | b':')
                        || c.is_ascii_alphanumeric()
                });
            } else {
                kind = Ftype::Str;
            }
        } else if c == b'+' || c == b'-' {
            f.push(c as char);
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            match b.get(i) {
                Some(d) if d.is_ascii_digit() => {
                    kind = Ftype::Tz;
                    take(&mut i, &mut f, &|c| {
                        c.is_ascii_digit() || matches!(c, b':' | b'.' | b'-')
                    });
                }
                Some(a) if a.is_ascii_alphabetic() => {
                    kind = Ftype::Special;
                    take(&mut i, &mut f, &|c| c.is_ascii_alphabetic());
                }
                _ => return Err(DtErr::BadFormat),
            }
        } else if c.is_ascii_punctuation() {
            i += 1;
            continue;
        } else {
            return Err(DtErr::BadFormat);
        }
        out.push((f, kind));
    }
    Ok(out)
}

/// `strtol`: optional white space and sign, then digits. Returns the
/// value and the rest; the whole input back when there are no digits;
/// `FieldOverflow` when the value does not fit `i64` (`ERANGE`).
fn strtol(s: &str) -> Dt<(i64, &str)> {
    let t = s.trim_start();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = body.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return Ok((0, s));
    }
    let mut v: i64 = 0;
    for d in body[..n].bytes() {
        let d = (d - b'0') as i64;
        v = v
            .checked_mul(10)
            .and_then(|v| {
                if neg {
                    v.checked_sub(d)
                } else {
                    v.checked_add(d)
                }
            })
            .ok_or(DtErr::FieldOverflow)?;
    }
    Ok((v, &body[n..]))
}

/// [`strtol`] limited to `i32` (`strtoint`).
fn strtoint(s: &str) -> Dt<(i64, &str)> {
    let (v, rest) = strtol(s)?;
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        return Err(DtErr::FieldOverflow);
    }
    Ok((v, rest))
}

/// `ParseFraction`: `s` starts with '.'; the whole rest must be a number.
fn parse_fraction(s: &str) -> Dt<f64> {
    if s.len() == 1 {
        return Ok(0.0);
    }
    s.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .ok_or(DtErr::BadFormat)
}

fn add_usec(itm: &mut ItmIn, v: i64) -> Dt<()> {
    itm.usec = itm.usec.checked_add(v).ok_or(DtErr::FieldOverflow)?;
    Ok(())
}

fn mul_add_usec(itm: &mut ItmIn, val: i64, scale: i64) -> Dt<()> {
    let p = val.checked_mul(scale).ok_or(DtErr::FieldOverflow)?;
    add_usec(itm, p)
}

/// `AdjustFractMicroseconds`.
fn fract_usec(itm: &mut ItmIn, frac: f64, scale: i64) -> Dt<()> {
    if frac == 0.0 {
        return Ok(());
    }
    let f = frac * scale as f64;
    let mut usec = f as i64;
    let rest = f - usec as f64;
    if rest > 0.5 {
        usec += 1;
    } else if rest < -0.5 {
        usec -= 1;
    }
    add_usec(itm, usec)
}

/// `AdjustFractDays`.
fn fract_days(itm: &mut ItmIn, frac: f64, scale: i32) -> Dt<()> {
    if frac == 0.0 {
        return Ok(());
    }
    let f = frac * scale as f64;
    let extra = f as i32;
    itm.mday = itm.mday.checked_add(extra).ok_or(DtErr::FieldOverflow)?;
    fract_usec(itm, f - extra as f64, USECS_PER_DAY)
}

/// `AdjustFractYears`.
fn fract_years(itm: &mut ItmIn, frac: f64, scale: i32) -> Dt<()> {
    let extra = (frac * scale as f64 * 12.0).round_ties_even() as i32;
    itm.mon = itm.mon.checked_add(extra).ok_or(DtErr::FieldOverflow)?;
    Ok(())
}

/// `AdjustMicroseconds`.
fn adj_usec(itm: &mut ItmIn, val: i64, fval: f64, scale: i64) -> Dt<()> {
    mul_add_usec(itm, val, scale)?;
    fract_usec(itm, fval, scale)
}

fn to_i32(v: i64) -> Dt<i32> {
    i32::try_from(v).map_err(|_| DtErr::FieldOverflow)
}

/// `AdjustDays`.
fn adj_days(itm: &mut ItmIn, val: i64, scale: i32) -> Dt<()> {
    let d = to_i32(val)?
        .checked_mul(scale)
        .ok_or(DtErr::FieldOverflow)?;
    itm.mday = itm.mday.checked_add(d).ok_or(DtErr::FieldOverflow)?;
    Ok(())
}

/// `AdjustMonths`.
fn adj_months(itm: &mut ItmIn, val: i64) -> Dt<()> {
    itm.mon = itm
        .mon
        .checked_add(to_i32(val)?)
        .ok_or(DtErr::FieldOverflow)?;
    Ok(())
}

/// `AdjustYears`.
fn adj_years(itm: &mut ItmIn, val: i64, scale: i32) -> Dt<()> {
    let y = to_i32(val)?
        .checked_mul(scale)
        .ok_or(DtErr::FieldOverflow)?;
    itm.year = itm.year.checked_add(y).ok_or(DtErr::FieldOverflow)?;
    Ok(())
}

/// Whether the qualifier is exactly `from TO to`.
fn is_range(range: Range, from: Field, to: Field) -> bool {
    range == Some((from, to))
}

/// `DecodeTimeCommon` + `DecodeTimeForInterval`: `h:m[:s][.f]` (or
/// `m:s.f`, and `m:s` under `MINUTE TO SECOND`) into microseconds.
fn decode_time(s: &str, range: Range) -> Dt<i64> {
    let (mut hour, rest) = strtol(s)?;
    let Some(rest) = rest.strip_prefix(':') else {
        return Err(DtErr::BadFormat);
    };
    let (mut min, rest) = strtoint(rest)?;
    let mut sec = 0;
    let mut fsec = 0i64;
    let fsec_of = |r: &str| -> Dt<i64> { Ok((parse_fraction(r)? * 1e6).round_ties_even() as i64) };
    if rest.is_empty() {
        if is_range(range, Field::Minute, Field::Second) {
            to_i32(hour)?;
            sec = min;
            min = hour;
            hour = 0;
        }
    } else if rest.starts_with('.') {
        fsec = fsec_of(rest)?;
        to_i32(hour)?;
        sec = min;
        min = hour;
        hour = 0;
    } else if let Some(r) = rest.strip_prefix(':') {
        let (s2, rest) = strtoint(r)?;
        sec = s2;
        if rest.starts_with('.') {
            fsec = fsec_of(rest)?;
        } else if !rest.is_empty() {
            return Err(DtErr::BadFormat);
        }
    } else {
        return Err(DtErr::BadFormat);
    }
    if hour < 0
        || !(0..60).contains(&min)
        || !(0..=60).contains(&sec)
        || !(0..=USECS_PER_SEC).contains(&fsec)
    {
        return Err(DtErr::FieldOverflow);
    }
    let mut itm = ItmIn {
        usec: fsec,
        ..ItmIn::default()
    };
    mul_add_usec(&mut itm, hour, USECS_PER_HOUR)?;
    mul_add_usec(&mut itm, min, USECS_PER_MINUTE)?;
    mul_add_usec(&mut itm, sec, USECS_PER_SEC)?;
    Ok(itm.usec)
}

/// The unit a bare number counts in under `range` (its last field).
fn default_unit(range: Range) -> Unit {
    match range.map(|(_, to)| to) {
        Some(Field::Year) => Unit::Year,
        Some(Field::Month) => Unit::Month,
        Some(Field::Day) => Unit::Day,
        Some(Field::Hour) => Unit::Hour,
        Some(Field::Minute) => Unit::Minute,
        _ => Unit::Second,
    }
}

/// Adds `val`+`fval` counted in `unit`; returns the field-mask bits.
fn add_in_unit(itm: &mut ItmIn, unit: Unit, val: i64, fval: f64) -> Dt<u32> {
    Ok(match unit {
        Unit::Microsec => {
            adj_usec(itm, val, fval, 1)?;
            M_MICRO
        }
        Unit::Millisec => {
            adj_usec(itm, val, fval, 1000)?;
            M_MILLI
        }
        Unit::Second => {
            adj_usec(itm, val, fval, USECS_PER_SEC)?;
            if fval == 0.0 {
                M_SECOND
            } else {
                M_ALL_SECS
            }
        }
        Unit::Minute => {
            adj_usec(itm, val, fval, USECS_PER_MINUTE)?;
            M_MINUTE
        }
        Unit::Hour => {
            adj_usec(itm, val, fval, USECS_PER_HOUR)?;
            M_HOUR
        }
        Unit::Day => {
            adj_days(itm, val, 1)?;
            fract_usec(itm, fval, USECS_PER_DAY)?;
            M_DAY
        }
        Unit::Week => {
            adj_days(itm, val, 7)?;
            fract_days(itm, fval, 7)?;
            M_WEEK
        }
        Unit::Month => {
            adj_months(itm, val)?;
            fract_days(itm, fval, 30)?;
            M_MONTH
        }
        Unit::Year | Unit::Decade | Unit::Century | Unit::Millennium => {
            let (scale, bit) = match unit {
                Unit::Year => (1, M_YEAR),
                Unit::Decade => (10, M_DECADE),
                Unit::Century => (100, M_CENTURY),
                _ => (1000, M_MILLENNIUM),
            };
            adj_years(itm, val, scale)?;
            fract_years(itm, fval, scale)?;
            bit
        }
        Unit::Ignore | Unit::None | Unit::Other => return Err(DtErr::BadFormat),
    })
}

/// A number field (`DTK_NUMBER`, `DTK_DATE`, or a signed `DTK_TZ`):
/// `n`, `n.f`, or years-months `y-m`. Returns the value, its fraction and
/// whether it was years-months.
fn decode_number(field: &str) -> Dt<(i64, f64, bool)> {
    let (val, cp) = strtol(field)?;
    if let Some(r) = cp.strip_prefix('-') {
        let (m, rest) = strtoint(r)?;
        if !(0..12).contains(&m) {
            return Err(DtErr::FieldOverflow);
        }
        if !rest.is_empty() {
            return Err(DtErr::BadFormat);
        }
        let m = if field.starts_with('-') { -m } else { m };
        let v = val
            .checked_mul(12)
            .and_then(|v| v.checked_add(m))
            .ok_or(DtErr::FieldOverflow)?;
        Ok((v, 0.0, true))
    } else if cp.starts_with('.') {
        let f = parse_fraction(cp)?;
        Ok((val, if field.starts_with('-') { -f } else { f }, false))
    } else if cp.is_empty() {
        Ok((val, 0.0, false))
    } else {
        Err(DtErr::BadFormat)
    }
}

/// `DecodeInterval`: the fields read right to left.
fn decode_interval(fields: &[(String, Ftype)], range: Range, sql_standard: bool) -> Dt<ItmIn> {
    let mut itm = ItmIn::default();
    let mut fmask = 0u32;
    let mut unit = Unit::Ignore;
    let mut is_before = false;
    let signed = |f: &str| f.starts_with('-') || f.starts_with('+');
    let force_negative = sql_standard
        && fields.first().is_some_and(|(f, _)| f.starts_with('-'))
        && !fields.iter().skip(1).any(|(f, _)| signed(f));
    for (field, kind) in fields.iter().rev() {
        let mut tmask = 0;
        let signed_time = *kind == Ftype::Tz && field[1..].contains(':');
        let time = if signed_time {
            decode_time(&field[1..], range).ok()
        } else {
            None
        };
        if let Some(us) = time {
            // `+h:m[:s]` / `-h:m[:s]`: a signed time (`DTK_TZ`).
            itm.usec = us;
            if field.starts_with('-') {
                itm.usec = -itm.usec;
            }
            if force_negative && itm.usec > 0 {
                itm.usec = -itm.usec;
            }
            unit = Unit::Day;
            if M_TIME & fmask != 0 {
                return Err(DtErr::BadFormat);
            }
            fmask |= M_TIME;
            continue;
        }
        match kind {
            Ftype::Time => {
                // PostgreSQL's DecodeTimeForInterval sets the time part.
                itm.usec = decode_time(field, range)?;
                if force_negative && itm.usec > 0 {
                    itm.usec = -itm.usec;
                }
                tmask = M_TIME;
                unit = Unit::Day;
            }
            Ftype::Tz | Ftype::Date | Ftype::Number => {
                if unit == Unit::Ignore {
                    unit = default_unit(range);
                }
                let (mut val, mut fval, year_month) = decode_number(field)?;
                if year_month {
                    unit = Unit::Month;
                }
                if force_negative {
                    val = -val.abs();
                    fval = -fval.abs();
                }
                tmask = add_in_unit(&mut itm, unit, val, fval)?;
                if unit == Unit::Hour {
                    unit = Unit::Day;
                }
            }
            Ftype::Str | Ftype::Special => {
                if field == "@" {
                    continue;
                }
                if field == "ago" {
                    is_before = true;
                    unit = Unit::None;
                } else {
                    match decode_units(field) {
                        Some(u) => unit = u,
                        None => return Err(DtErr::BadFormat),
                    }
                }
            }
        }
        if tmask & fmask != 0 {
            return Err(DtErr::BadFormat);
        }
        fmask |= tmask;
    }
    if fmask == 0 {
        return Err(DtErr::BadFormat);
    }
    if is_before {
        if itm.usec == i64::MIN
            || itm.mday == i32::MIN
            || itm.mon == i32::MIN
            || itm.year == i32::MIN
        {
            return Err(DtErr::FieldOverflow);
        }
        itm.usec = -itm.usec;
        itm.mday = -itm.mday;
        itm.mon = -itm.mon;
        itm.year = -itm.year;
    }
    Ok(itm)
}

/// `ParseISO8601Number`: a `strtod` prefix of `s`; the integer part, the
/// fraction and the rest.
fn iso_number(s: &str) -> Dt<(i64, f64, &str)> {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_digit() || *c == b'-' || *c == b'.' => {}
        _ => return Err(DtErr::BadFormat),
    }
    let mut i = usize::from(matches!(b[0], b'-' | b'+'));
    let int_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        frac_digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if int_digits + frac_digits > 0 {
            i += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return Err(DtErr::BadFormat);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let n = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n > 0 {
            i = j + n;
        }
    }
    let val: f64 = s[..i].parse().map_err(|_| DtErr::BadFormat)?;
    if val.is_nan() || !(-1.0e15..=1.0e15).contains(&val) {
        return Err(DtErr::FieldOverflow);
    }
    let ipart = val.trunc() as i64;
    Ok((ipart, val - ipart as f64, &s[i..]))
}

/// Digits in an ISO 8601 field, ignoring a sign and a fraction.
fn iso_int_width(s: &str) -> usize {
    s.strip_prefix('-')
        .unwrap_or(s)
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count()
}

/// `DecodeISO8601Interval` (case-sensitive, as PostgreSQL's).
fn decode_iso8601(s: &str) -> Dt<ItmIn> {
    let mut itm = ItmIn::default();
    if s.len() < 2 || !s.starts_with('P') {
        return Err(DtErr::BadFormat);
    }
    let mut str = &s[1..];
    let mut datepart = true;
    let mut havefield = false;
    while !str.is_empty() {
        if let Some(r) = str.strip_prefix('T') {
            datepart = false;
            havefield = false;
            str = r;
            continue;
        }
        let fieldstart = str;
        let (val, fval, rest) = iso_number(str)?;
        let unit = rest.bytes().next();
        str = if unit.is_some() { &rest[1..] } else { rest };
        if datepart {
            match unit {
                Some(b'Y') => {
                    adj_years(&mut itm, val, 1)?;
                    fract_years(&mut itm, fval, 1)?;
                }
                Some(b'M') => {
                    adj_months(&mut itm, val)?;
                    fract_days(&mut itm, fval, 30)?;
                }
                Some(b'W') => {
                    adj_days(&mut itm, val, 7)?;
                    fract_days(&mut itm, fval, 7)?;
                }
                Some(b'D') => {
                    adj_days(&mut itm, val, 1)?;
                    fract_usec(&mut itm, fval, USECS_PER_DAY)?;
                }
                Some(b'T') | None | Some(b'-') => {
                    if unit != Some(b'-') && iso_int_width(fieldstart) == 8 && !havefield {
                        adj_years(&mut itm, val / 10000, 1)?;
                        adj_months(&mut itm, (val / 100) % 100)?;
                        adj_days(&mut itm, val % 100, 1)?;
                        fract_usec(&mut itm, fval, USECS_PER_DAY)?;
                        if unit.is_none() {
                            return Ok(itm);
                        }
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    if havefield {
                        return Err(DtErr::BadFormat);
                    }
                    adj_years(&mut itm, val, 1)?;
                    fract_years(&mut itm, fval, 1)?;
                    match unit {
                        None => return Ok(itm),
                        Some(b'T') => {
                            datepart = false;
                            havefield = false;
                            continue;
                        }
                        _ => {}
                    }
                    let (val, fval, rest) = iso_number(str)?;
                    str = rest;
                    adj_months(&mut itm, val)?;
                    fract_days(&mut itm, fval, 30)?;
                    if str.is_empty() {
                        return Ok(itm);
                    }
                    if let Some(r) = str.strip_prefix('T') {
                        str = r;
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    let Some(r) = str.strip_prefix('-') else {
                        return Err(DtErr::BadFormat);
                    };
                    let (val, fval, rest) = iso_number(r)?;
                    str = rest;
                    adj_days(&mut itm, val, 1)?;
                    fract_usec(&mut itm, fval, USECS_PER_DAY)?;
                    if str.is_empty() {
                        return Ok(itm);
                    }
                    if let Some(r) = str.strip_prefix('T') {
                        str = r;
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    return Err(DtErr::BadFormat);
                }
                _ => return Err(DtErr::BadFormat),
            }
        } else {
            match unit {
                Some(b'H') => adj_usec(&mut itm, val, fval, USECS_PER_HOUR)?,
                Some(b'M') => adj_usec(&mut itm, val, fval, USECS_PER_MINUTE)?,
                Some(b'S') => adj_usec(&mut itm, val, fval, USECS_PER_SEC)?,
                None | Some(b':') => {
                    if unit.is_none() && iso_int_width(fieldstart) == 6 && !havefield {
                        adj_usec(&mut itm, val / 10000, 0.0, USECS_PER_HOUR)?;
                        adj_usec(&mut itm, (val / 100) % 100, 0.0, USECS_PER_MINUTE)?;
                        adj_usec(&mut itm, val % 100, 0.0, USECS_PER_SEC)?;
                        fract_usec(&mut itm, fval, 1)?;
                        return Ok(itm);
                    }
                    if havefield {
                        return Err(DtErr::BadFormat);
                    }
                    adj_usec(&mut itm, val, fval, USECS_PER_HOUR)?;
                    if unit.is_none() {
                        return Ok(itm);
                    }
                    let (val, fval, rest) = iso_number(str)?;
                    str = rest;
                    adj_usec(&mut itm, val, fval, USECS_PER_MINUTE)?;
                    if str.is_empty() {
                        return Ok(itm);
                    }
                    let Some(r) = str.strip_prefix(':') else {
                        return Err(DtErr::BadFormat);
                    };
                    let (val, fval, rest) = iso_number(r)?;
                    adj_usec(&mut itm, val, fval, USECS_PER_SEC)?;
                    if rest.is_empty() {
                        return Ok(itm);
                    }
                    return Err(DtErr::BadFormat);
                }
                _ => return Err(DtErr::BadFormat),
            }
        }
        havefield = true;
    }
    Ok(itm)
}

/// `AdjustIntervalForTypmod`'s range part: drops what lies below the
/// qualifier's last field.
pub fn adjust_for_range(iv: &mut Interval, range: Range) {
    let Some((from, to)) = range else {
        return;
    };
    let trunc = |us: i64, step: i64| us / step * step;
    match to {
        Field::Year => {
            iv.months = iv.months / 12 * 12;
            iv.days = 0;
            iv.micros = 0;
        }
        Field::Month => {
            iv.days = 0;
            iv.micros = 0;
        }
        Field::Day => iv.micros = 0,
        Field::Hour => iv.micros = trunc(iv.micros, USECS_PER_HOUR),
        Field::Minute => iv.micros = trunc(iv.micros, USECS_PER_MINUTE),
        Field::Second => {}
    }
    let _ = from;
}

/// `AdjustIntervalForTypmod`'s precision part: rounds the time to
/// `precision` fractional digits (0 to 6), half away from zero.
pub fn adjust_precision(iv: &mut Interval, precision: u8) {
    if precision >= 6 {
        return;
    }
    let scale = 10i64.pow(6 - precision as u32);
    let offset = scale / 2;
    iv.micros = if iv.micros >= 0 {
        (iv.micros.saturating_add(offset)) / scale * scale
    } else {
        -((iv.micros.saturating_neg().saturating_add(offset)) / scale * scale)
    };
}

/// Reads interval text under an optional qualifier (see the module doc).
pub fn interval_in(text: &str, range: Range) -> Result<Interval> {
    let sql_standard =
        super::style::output_style().interval == super::style::IntervalOut::SqlStandard;
    let mut r = parse_fields(text).and_then(|f| decode_interval(&f, range, sql_standard));
    if r == Err(DtErr::BadFormat) {
        r = decode_iso8601(text);
    }
    let itm = match r {
        Ok(itm) => itm,
        Err(DtErr::FieldOverflow) => {
            return Err(err!(
                IntervalFieldOverflow,
                "interval field value out of range: \"{text}\""
            ))
        }
        Err(DtErr::BadFormat) => {
            return Err(err!(
                InvalidDatetimeFormat,
                "invalid input syntax for type interval: \"{text}\""
            ))
        }
    };
    let months = (itm.year as i64 * 12 + itm.mon as i64)
        .try_into()
        .map_err(|_| super::interval::out_of_range())?;
    let mut iv = Interval {
        months,
        days: itm.mday,
        micros: itm.usec,
    };
    adjust_for_range(&mut iv, range);
    Ok(iv)
}

impl PartialEq for ItmIn {
    fn eq(&self, o: &Self) -> bool {
        (self.usec, self.mday, self.mon, self.year) == (o.usec, o.mday, o.mon, o.year)
    }
}

impl std::fmt::Debug for ItmIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}y {}m {}d {}us",
            self.year, self.mon, self.mday, self.usec
        )
    }
}
