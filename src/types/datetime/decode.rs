//! PostgreSQL's general date/time input reader, ported from `datetime.c`:
//! [`parse_fields`] is `ParseDateTime` (split the text into typed fields),
//! [`decode_fields`] is `DecodeDateTime` with `DecodeDate`, `DecodeNumber`,
//! `DecodeNumberField`, `DecodeTime`, `DecodeTimezone` and `ValidateDate`.
//!
//! Every accepted form and every error is PostgreSQL's, including the
//! ambiguous numeric orders read by `DateStyle`'s field order (YMD, DMY,
//! MDY), `J2451187` Julian days, `1997.041` day-of-year dates,
//! `y1999m01d08` labelled fields, AM/PM, BC, and time zones: an
//! abbreviation from PostgreSQL's default set, a numeric offset, a
//! POSIX-style spec such as `GMT-1`, or a name of the zone database
//! ([`super::zone`]). [`decode_datetime_tz`] gives the zone's offset for
//! `timestamp with time zone`; `timestamp without time zone` and `date`
//! check the zone and ignore it. `now`, `today`, `tomorrow` and
//! `yesterday` are read in the session's time zone.

use super::parse::Parsed;
use super::style::output_style;
use super::*;
use crate::err;
use crate::error::{Error, Result};

/// The most fields and characters PostgreSQL accepts (`MAXDATEFIELDS`,
/// `MAXDATELEN`).
const MAXDATEFIELDS: usize = 25;
const MAXDATELEN: usize = 128;

/// What `ParseDateTime` makes of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ft {
    Number,
    Date,
    Time,
    Str,
    Special,
    Tz,
}

/// `DTERR_*`: why decoding failed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DtErr {
    BadFormat,
    FieldOverflow,
    MdFieldOverflow,
    TzDispOverflow,
    /// `time zone "x" not recognized`.
    UnknownZone(String),
}

type Dt<T> = std::result::Result<T, DtErr>;

// Field mask bits: PostgreSQL's token types, `DTK_M(type)`.
const RESERV: u32 = 1 << 0;
const MONTH: u32 = 1 << 1;
const YEAR: u32 = 1 << 2;
const DAY: u32 = 1 << 3;
const TZ: u32 = 1 << 5;
const AMPM: u32 = 1 << 9;
const HOUR: u32 = 1 << 10;
const MINUTE: u32 = 1 << 11;
const SECOND: u32 = 1 << 12;
const MILLISECOND: u32 = 1 << 13;
const MICROSECOND: u32 = 1 << 14;
const DOY: u32 = 1 << 15;
const DOW: u32 = 1 << 16;
const ADBC: u32 = 1 << 18;
const DTZMOD: u32 = 1 << 28;
const DATE_M: u32 = YEAR | MONTH | DAY;
const TIME_M: u32 = HOUR | MINUTE | SECOND;
const ALL_SECS_M: u32 = SECOND | MILLISECOND | MICROSECOND;

/// A `UNITS` label (`y`, `m`, `d`, `h`, `mm`, `s`, `j`, ...) or `t`: what
/// the next number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Julian,
    Time,
    /// `dow`, `doy`, `isodow`, `isoyear`: labels no number may follow.
    Other,
}

/// The reserved words (`RESERV` tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reserved {
    Epoch,
    Late,
    Early,
    Now,
    Today,
    Tomorrow,
    Yesterday,
    Zulu,
}

/// A word's meaning (`DecodeSpecial`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Reserved(Reserved),
    Month(i64),
    Dow,
    Pm(bool),
    Bc(bool),
    Units(Unit),
    IsoTime,
    /// A zone abbreviation: its offset (seconds east) and daylight flag.
    Zone(i32),
    /// A dynamic zone abbreviation (`MSK`): its zone's history decides.
    DynZone,
    DstModifier,
    Ignore,
}

/// PostgreSQL's `datetktbl` (the words that are not zone abbreviations).
fn core_token(w: &str) -> Option<Token> {
    use Token::*;
    Some(match w {
        "-infinity" => Reserved(self::Reserved::Early),
        "ad" => Bc(false),
        "allballs" => Reserved(self::Reserved::Zulu),
        "am" => Pm(false),
        "at" | "on" => Ignore,
        "bc" => Bc(true),
        "d" => Units(Unit::Day),
        "dow" | "doy" | "isodow" | "isoyear" => Units(Unit::Other),
        "dst" => DstModifier,
        "epoch" => Reserved(self::Reserved::Epoch),
        "h" => Units(Unit::Hour),
        "infinity" => Reserved(self::Reserved::Late),
        "j" | "jd" | "julian" => Units(Unit::Julian),
        "m" => Units(Unit::Month),
        "mm" => Units(Unit::Minute),
        "now" => Reserved(self::Reserved::Now),
        "pm" => Pm(true),
        "s" => Units(Unit::Second),
        "t" => IsoTime,
        "today" => Reserved(self::Reserved::Today),
        "tomorrow" => Reserved(self::Reserved::Tomorrow),
        "y" => Units(Unit::Year),
        "yesterday" => Reserved(self::Reserved::Yesterday),
        "jan" | "january" => Month(1),
        "feb" | "february" => Month(2),
        "mar" | "march" => Month(3),
        "apr" | "april" => Month(4),
        "may" => Month(5),
        "jun" | "june" => Month(6),
        "jul" | "july" => Month(7),
        "aug" | "august" => Month(8),
        "sep" | "sept" | "september" => Month(9),
        "oct" | "october" => Month(10),
        "nov" | "november" => Month(11),
        "dec" | "december" => Month(12),
        "sun" | "sunday" | "mon" | "monday" | "tue" | "tues" | "tuesday" | "wed" | "weds"
        | "wednesday" | "thu" | "thur" | "thurs" | "thursday" | "fri" | "friday" | "sat"
        | "saturday" => Dow,
        _ => return None,
    })
}

/// `DecodeSpecial`: zone abbreviations first, then the core words.
fn decode_special(w: &str) -> Option<Token> {
    if super::zone::dynamic_abbreviation(w).is_some() {
        return Some(Token::DynZone);
    }
    if let Some((off, _)) = super::zone::abbreviation(w) {
        return Some(Token::Zone(off));
    }
    core_token(w)
}

/// The zone `name` names, as PostgreSQL's `pg_tzset` loads it: a file
/// of the zone database (matched without regard to case) or a POSIX-style
/// spec.
fn named_zone(name: &str) -> Option<std::sync::Arc<super::zone::Zone>> {
    super::zone::lookup(name)
}

/// One field: its lower-cased text and type.
struct Field {
    text: String,
    ft: Ft,
}

/// `ParseDateTime`: splits the input into typed, lower-cased fields.
fn parse_fields(s: &str) -> Dt<Vec<Field>> {
    let b = s.as_bytes();
    let mut out: Vec<Field> = Vec::new();
    let mut total = 0usize;
    let mut i = 0;
    let digit = |i: usize| i < b.len() && b[i].is_ascii_digit();
    let alpha = |i: usize| i < b.len() && b[i].is_ascii_alphabetic();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if out.len() >= MAXDATEFIELDS {
            return Err(DtErr::BadFormat);
        }
        let start = i;
        let mut f = String::new();
        let ft;
        if c.is_ascii_digit() {
            while digit(i) {
                i += 1;
            }
            if i < b.len() && b[i] == b':' {
                ft = Ft::Time;
                i += 1;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b':' || b[i] == b'.') {
                    i += 1;
                }
            } else if i < b.len() && matches!(b[i], b'-' | b'/' | b'.') {
                let delim = b[i];
                i += 1;
                if digit(i) {
                    let mut t = if delim == b'.' { Ft::Number } else { Ft::Date };
                    while digit(i) {
                        i += 1;
                    }
                    if i < b.len() && b[i] == delim {
                        t = Ft::Date;
                        i += 1;
                        while i < b.len() && (b[i].is_ascii_digit() || b[i] == delim) {
                            i += 1;
                        }
                    }
                    ft = t;
                } else {
                    ft = Ft::Date;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == delim) {
                        i += 1;
                    }
                }
            } else {
                ft = Ft::Number;
            }
            f.push_str(&s[start..i].to_ascii_lowercase());
        } else if c == b'.' {
            i += 1;
            while digit(i) {
                i += 1;
            }
            ft = Ft::Number;
            f.push_str(&s[start..i]);
        } else if c.is_ascii_alphabetic() {
            while alpha(i) {
                i += 1;
            }
            f.push_str(&s[start..i].to_ascii_lowercase());
            let is_date = if i < b.len() && matches!(b[i], b'-' | b'/' | b'.') {
                true
            } else if i < b.len() && (b[i] == b'+' || b[i].is_ascii_digit()) {
                core_token(&f).is_none()
            } else {
                false
            };
            if is_date {
                ft = Ft::Date;
                let from = i;
                i += 1;
                while i < b.len()
                    && (matches!(b[i], b'+' | b'-' | b'/' | b'_' | b'.' | b':')
                        || b[i].is_ascii_alphanumeric())
                {
                    i += 1;
                }
                f.push_str(&s[from..i].to_ascii_lowercase());
            } else {
                ft = Ft::Str;
            }
        } else if c == b'+' || c == b'-' {
            f.push(c as char);
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let from = i;
            if digit(i) {
                ft = Ft::Tz;
                i += 1;
                while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b':' | b'.' | b'-')) {
                    i += 1;
                }
                f.push_str(&s[from..i]);
            } else if alpha(i) {
                ft = Ft::Special;
                while alpha(i) {
                    i += 1;
                }
                f.push_str(&s[from..i].to_ascii_lowercase());
            } else {
                return Err(DtErr::BadFormat);
            }
        } else if c.is_ascii_punctuation() {
            i += 1;
            continue;
        } else {
            return Err(DtErr::BadFormat);
        }
        total += f.len() + 1;
        if total >= MAXDATELEN + MAXDATEFIELDS {
            return Err(DtErr::BadFormat);
        }
        out.push(Field { text: f, ft });
    }
    Ok(out)
}

/// `strtoi`: an optional sign and leading digits; the value and the rest.
/// Out of `int` range is `FieldOverflow`; no digits gives 0 and the whole
/// string, as `strtol` does.
fn strtoi(s: &str) -> Dt<(i64, &str)> {
    let b = s.as_bytes();
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
    let start = i;
    let mut v: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add(i64::from(b[i] - b'0'));
        i += 1;
    }
    if i == start {
        return Ok((0, s));
    }
    let v = if neg { -v } else { v };
    if v < i64::from(i32::MIN) || v > i64::from(i32::MAX) {
        return Err(DtErr::FieldOverflow);
    }
    Ok((v, &s[i..]))
}

/// `strtod` over all of `s`; `None` unless the whole text is a number.
fn strtod_all(s: &str) -> Option<f64> {
    if s.is_empty()
        || s.bytes()
            .any(|c| c.is_ascii_alphabetic() && c != b'e' && c != b'E')
    {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// `ParseFractionalSecond`: `.nnn` to microseconds (rounded half to even
/// as `rint`).
fn fractional_second(cp: &str) -> Dt<i64> {
    let frac = strtod_all(cp).ok_or(DtErr::BadFormat)?;
    Ok((frac * 1e6).round_ties_even() as i64)
}

/// The broken-down moment being assembled (`struct pg_tm` plus `fsec`).
#[derive(Default, Debug)]
struct Tm {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    fsec: i64,
    yday: i64,
}

/// `DateStyle`'s field order for ambiguous numeric dates.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    Ymd,
    Dmy,
    Mdy,
}

fn date_order() -> Order {
    let st = output_style();
    if st.year_first {
        Order::Ymd
    } else if st.day_first {
        Order::Dmy
    } else {
        Order::Mdy
    }
}

/// The decoder's state across fields (`DecodeDateTime`'s locals).
struct State {
    tm: Tm,
    fmask: u32,
    ptype: Option<Unit>,
    pm: Option<bool>,
    text_month: bool,
    julian: bool,
    two_digits: bool,
    bc: bool,
    reserved: Option<Reserved>,
    named_zone: Option<std::sync::Arc<super::zone::Zone>>,
    /// The zone given as an offset (seconds east).
    tz: Option<i32>,
    /// A dynamic abbreviation given: its zone and upper-cased name.
    dyn_zone: Option<(std::sync::Arc<super::zone::Zone>, String)>,
    /// The `dst` modifier was given.
    dst_mod: bool,
    order: Order,
}

/// `DecodeNumberField`: a run-together date (`yyyymmdd`, `yymmdd`) or time
/// (`hhmmss`, `hhmm`, with a fraction).
fn decode_number_field(s: &str, fmask: u32, tm: &mut Tm, two: &mut bool) -> Dt<u32> {
    let mut s = s;
    if let Some(dot) = s.find('.') {
        let frac: f64 = s[dot..].parse().map_err(|_| DtErr::BadFormat)?;
        tm.fsec = (frac * 1e6).round_ties_even() as i64;
        s = &s[..dot];
    } else if fmask & DATE_M != DATE_M {
        let num = |p: &str| p.parse::<i64>().unwrap_or(0);
        if s.len() == 8 {
            tm.mday = num(&s[6..]);
            tm.mon = num(&s[4..6]);
            tm.year = num(&s[..4]);
            return Ok(DATE_M);
        }
        if s.len() == 6 {
            tm.mday = num(&s[4..]);
            tm.mon = num(&s[2..4]);
            tm.year = num(&s[..2]);
            *two = true;
            return Ok(DATE_M);
        }
    }
    if fmask & TIME_M != TIME_M {
        let num = |p: &str| atoi(p);
        if s.len() == 6 {
            tm.sec = num(&s[4..]);
            tm.min = num(&s[2..4]);
            tm.hour = num(&s[..2]);
            return Ok(TIME_M);
        }
        if s.len() == 4 {
            tm.sec = 0;
            tm.min = num(&s[2..]);
            tm.hour = num(&s[..2]);
            return Ok(TIME_M);
        }
    }
    Err(DtErr::BadFormat)
}

/// `atoi`: leading digits, 0 when none.
fn atoi(s: &str) -> i64 {
    strtoi(s).map(|(v, _)| v).unwrap_or(0)
}

/// `DecodeNumber`: a plain number, placed by what the fields so far hold
/// and `DateStyle`'s order.
fn decode_number(s: &str, st: &mut State, fmask: u32) -> Dt<u32> {
    let flen = s.len();
    let (val, rest) = strtoi(s)?;
    if rest.len() == s.len() {
        return Err(DtErr::BadFormat);
    }
    if rest.starts_with('.') {
        if s.len() - rest.len() > 2 {
            return decode_number_field(s, fmask | DATE_M, &mut st.tm, &mut st.two_digits);
        }
        st.tm.fsec = fractional_second(rest)?;
    } else if !rest.is_empty() {
        return Err(DtErr::BadFormat);
    }
    if flen == 3 && fmask & DATE_M == YEAR && (1..=366).contains(&val) {
        st.tm.yday = val;
        return Ok(DOY | MONTH | DAY);
    }
    let tm = &mut st.tm;
    let tmask = match fmask & DATE_M {
        0 => {
            if flen >= 3 || st.order == Order::Ymd {
                tm.year = val;
                YEAR
            } else if st.order == Order::Dmy {
                tm.mday = val;
                DAY
            } else {
                tm.mon = val;
                MONTH
            }
        }
        YEAR => {
            tm.mon = val;
            MONTH
        }
        MONTH => {
            if st.text_month && (flen >= 3 || st.order == Order::Ymd) {
                tm.year = val;
                YEAR
            } else {
                tm.mday = val;
                DAY
            }
        }
        m if m == YEAR | MONTH => {
            if st.text_month && flen >= 3 && st.two_digits {
                tm.mday = tm.year;
                tm.year = val;
                st.two_digits = false;
            } else {
                tm.mday = val;
            }
            DAY
        }
        DAY => {
            tm.mon = val;
            MONTH
        }
        m if m == MONTH | DAY => {
            tm.year = val;
            YEAR
        }
        DATE_M => return decode_number_field(s, fmask, &mut st.tm, &mut st.two_digits),
        _ => return Err(DtErr::BadFormat),
    };
    if tmask == YEAR {
        st.two_digits = flen <= 2;
    }
    Ok(tmask)
}

/// `DecodeDate`: a date with delimiters (`1999-01-08`, `Feb-10-1997`,
/// `1/8/1999`); text months first, then the numbers in order.
fn decode_date(s: &str, st: &mut State) -> Dt<u32> {
    let b = s.as_bytes();
    let mut parts: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < b.len() && parts.len() < MAXDATEFIELDS {
        while i < b.len() && !b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        if i >= b.len() {
            return Err(DtErr::BadFormat);
        }
        let start = i;
        if b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
        }
        parts.push(&s[start..i]);
        if i < b.len() {
            i += 1;
        }
    }
    let mut fmask = st.fmask;
    let mut tmask = 0;
    let mut numbers = Vec::new();
    for p in parts {
        if p.as_bytes()[0].is_ascii_alphabetic() {
            match decode_special(p) {
                Some(Token::Ignore) => continue,
                Some(Token::Month(m)) => {
                    st.tm.mon = m;
                    st.text_month = true;
                }
                _ => return Err(DtErr::BadFormat),
            }
            if fmask & MONTH != 0 {
                return Err(DtErr::BadFormat);
            }
            fmask |= MONTH;
            tmask |= MONTH;
        } else {
            numbers.push(p);
        }
    }
    for p in numbers {
        if p.is_empty() {
            return Err(DtErr::BadFormat);
        }
        let dmask = decode_number(p, st, fmask)?;
        if fmask & dmask != 0 {
            return Err(DtErr::BadFormat);
        }
        fmask |= dmask;
        tmask |= dmask;
    }
    if fmask & !(DOY | TZ) != DATE_M {
        return Err(DtErr::BadFormat);
    }
    Ok(tmask)
}

/// `DecodeTime`: `hh:mm[:ss[.fff]]` (`mm:ss.fff` with a fraction and two
/// fields).
fn decode_time(s: &str, tm: &mut Tm) -> Dt<u32> {
    let (hour, rest) = strtoi(s)?;
    let rest = rest.strip_prefix(':').ok_or(DtErr::BadFormat)?;
    let (min, rest) = strtoi(rest)?;
    let (mut h, mut m, mut sec, mut fsec) = (hour, min, 0, 0);
    if rest.is_empty() {
    } else if rest.starts_with('.') {
        fsec = fractional_second(rest)?;
        sec = m;
        m = h;
        h = 0;
    } else if let Some(r) = rest.strip_prefix(':') {
        let (s2, r) = strtoi(r)?;
        sec = s2;
        if r.starts_with('.') {
            fsec = fractional_second(r)?;
        } else if !r.is_empty() {
            return Err(DtErr::BadFormat);
        }
    } else {
        return Err(DtErr::BadFormat);
    }
    if h < 0
        || !(0..=59).contains(&m)
        || !(0..=60).contains(&sec)
        || !(0..=USECS_PER_SEC).contains(&fsec)
    {
        return Err(DtErr::FieldOverflow);
    }
    (tm.hour, tm.min, tm.sec, tm.fsec) = (h, m, sec, fsec);
    Ok(TIME_M)
}

/// `DecodeTimezone` for a zone argument (`make_timestamptz`): the offset
/// in seconds east, `Err` when out of range, `None` when not a number.
pub(super) fn numeric_zone(s: &str) -> Option<std::result::Result<i32, ()>> {
    match decode_timezone(s) {
        Ok(east) => Some(Ok(east)),
        Err(DtErr::TzDispOverflow) => Some(Err(())),
        Err(_) => None,
    }
}

/// `DecodeTimezone`: `+hh[:mm[:ss]]`, `-hhmm`; the offset in seconds east.
fn decode_timezone(s: &str) -> Dt<i32> {
    let sign = s.as_bytes().first().copied();
    if sign != Some(b'+') && sign != Some(b'-') {
        return Err(DtErr::BadFormat);
    }
    let body = &s[1..];
    let (mut hr, rest) = strtoi(body).map_err(|_| DtErr::TzDispOverflow)?;
    let (mut min, mut sec, mut rest) = (0, 0, rest);
    if let Some(r) = rest.strip_prefix(':') {
        let (m, r) = strtoi(r).map_err(|_| DtErr::TzDispOverflow)?;
        min = m;
        rest = r;
        if let Some(r) = rest.strip_prefix(':') {
            let (sv, r) = strtoi(r).map_err(|_| DtErr::TzDispOverflow)?;
            sec = sv;
            rest = r;
        }
    } else if rest.is_empty() && s.len() > 3 {
        min = hr % 100;
        hr /= 100;
    }
    if !(0..=15).contains(&hr) || !(0..60).contains(&min) || !(0..60).contains(&sec) {
        return Err(DtErr::TzDispOverflow);
    }
    if !rest.is_empty() {
        return Err(DtErr::BadFormat);
    }
    let east = ((hr * 60 + min) * 60 + sec) as i32;
    Ok(if sign == Some(b'-') { -east } else { east })
}

/// Decodes `text` as PostgreSQL's `date_in` / `timestamp_in` do; `now` is
/// the clock for `now`, `today`, `tomorrow`, `yesterday`.
pub(super) fn decode_datetime(text: &str, ty: &str, now: i64) -> Result<Parsed> {
    decode_datetime_tz(text, ty, now).map(|(p, _)| p)
}

/// [`decode_datetime`] with the zone the text gives: its offset (seconds
/// east) at the moment decoded, or `None` when the text names no zone (the
/// session's zone applies).
pub(super) fn decode_datetime_tz(text: &str, ty: &str, now: i64) -> Result<(Parsed, Option<i32>)> {
    let fields = parse_fields(text).map_err(|e| report(e, text, ty))?;
    let mut st = State {
        tm: Tm::default(),
        fmask: 0,
        ptype: None,
        pm: None,
        text_month: false,
        julian: false,
        two_digits: false,
        bc: false,
        reserved: None,
        named_zone: None,
        tz: None,
        dyn_zone: None,
        dst_mod: false,
        order: date_order(),
    };
    decode_all(&fields, &mut st, now).map_err(|e| report(e, text, ty))?;
    match st.reserved {
        Some(Reserved::Late) => return Ok((Parsed::Infinity, None)),
        Some(Reserved::Early) => return Ok((Parsed::NegInfinity, None)),
        Some(Reserved::Epoch) => return Ok((Parsed::Moment(-10957, 0), Some(0))),
        _ => {}
    }
    let tm = &st.tm;
    // PostgreSQL's IS_VALID_JULIAN (year and month) for a timestamp with a
    // zone: its UTC moment is range-checked by the caller.
    let valid_julian = (tm.year > -4713 || (tm.year == -4713 && tm.mon >= 11))
        && (tm.year < 5_874_898 || (tm.year == 5_874_898 && tm.mon < 6));
    let in_range = if ty == "timestamp with time zone" {
        valid_julian
    } else {
        (-4713..=5_874_898).contains(&tm.year)
            && date2j(tm.year, tm.mon, tm.mday) >= 0
            && date2j(tm.year, tm.mon, tm.mday) < DATE_END_JULIAN
    };
    if !in_range {
        return Err(err!(DatetimeFieldOverflow, "{ty} out of range: \"{text}\""));
    }
    let days = date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
    let time = ((tm.hour * 60 + tm.min) * 60 + tm.sec) * USECS_PER_SEC + tm.fsec;
    let tz = match (&st.named_zone, st.tz) {
        (Some(z), _) => Some(z.offset_of_local(days * USECS_PER_DAY + time)),
        (None, None) if st.dyn_zone.is_some() => {
            if st.dst_mod {
                return Err(report(DtErr::BadFormat, text, ty));
            }
            st.dyn_zone
                .as_ref()
                .map(|(z, abbr)| z.abbrev_offset_of_local(days * USECS_PER_DAY + time, abbr))
        }
        (None, Some(tz)) => Some(tz + if st.dst_mod { 3600 } else { 0 }),
        (None, None) => None,
    };
    Ok((Parsed::Moment(days, time), tz))
}

/// Decodes `text` as PostgreSQL's `time_in` / `timetz_in` do
/// (`DecodeTimeOnly`): the time of day in microseconds and the zone's
/// offset (seconds east); without a zone in the text, the session's zone
/// at the date given, or today's.
pub(super) fn decode_time_only(text: &str, ty: &str, now: i64) -> Result<(i64, i32)> {
    let fields = parse_fields(text).map_err(|e| report(e, text, ty))?;
    let mut st = State {
        tm: Tm::default(),
        fmask: 0,
        ptype: None,
        pm: None,
        text_month: false,
        julian: false,
        two_digits: false,
        bc: false,
        reserved: None,
        named_zone: None,
        tz: None,
        dyn_zone: None,
        dst_mod: false,
        order: date_order(),
    };
    time_only_fields(&fields, &mut st, now).map_err(|e| report(e, text, ty))?;
    time_only_finish(&mut st, now).map_err(|e| report(e, text, ty))
}

/// The field loop of `DecodeTimeOnly`.
fn time_only_fields(fields: &[Field], st: &mut State, now: i64) -> Dt<()> {
    let nf = fields.len();
    for (i, f) in fields.iter().enumerate() {
        let tmask = match f.ft {
            Ft::Date => {
                let with_date = i == 0
                    && nf >= 2
                    && (fields[nf - 1].ft == Ft::Date || fields[1].ft == Ft::Time);
                if with_date {
                    decode_date(&f.text, st)?
                } else if f.text.starts_with(|c: char| c.is_ascii_digit()) {
                    // Run-together time with a zone: `040506-08`.
                    if st.fmask & TIME_M == TIME_M {
                        return Err(DtErr::BadFormat);
                    }
                    let dash = f.text.find('-').ok_or(DtErr::BadFormat)?;
                    st.tz = Some(decode_timezone(&f.text[dash..])?);
                    let m = decode_number_field(
                        &f.text[..dash],
                        st.fmask | DATE_M,
                        &mut st.tm,
                        &mut st.two_digits,
                    )?;
                    m | TZ
                } else {
                    let zone =
                        named_zone(&f.text).ok_or_else(|| DtErr::UnknownZone(f.text.clone()))?;
                    st.named_zone = Some(zone);
                    TZ
                }
            }
            Ft::Time => decode_time(&f.text, &mut st.tm)?,
            Ft::Tz => {
                st.tz = Some(decode_timezone(&f.text)?);
                TZ
            }
            Ft::Number if st.ptype.is_some() => decode_number_token(f, st)?,
            Ft::Number => {
                let s = f.text.as_str();
                match s.find('.') {
                    Some(_) if i == 0 && nf >= 2 && fields[nf - 1].ft == Ft::Date => {
                        decode_date(s, st)?
                    }
                    Some(dot) if dot > 2 => {
                        decode_number_field(s, st.fmask | DATE_M, &mut st.tm, &mut st.two_digits)?
                    }
                    Some(_) => return Err(DtErr::BadFormat),
                    None if s.len() > 4 => {
                        decode_number_field(s, st.fmask | DATE_M, &mut st.tm, &mut st.two_digits)?
                    }
                    None => decode_number(s, st, st.fmask | DATE_M)?,
                }
            }
            Ft::Str | Ft::Special => match time_only_word(i, fields, st, now)? {
                Some(m) => m,
                None => continue,
            },
        };
        if tmask & st.fmask != 0 {
            return Err(DtErr::BadFormat);
        }
        st.fmask |= tmask;
    }
    Ok(())
}

/// A word in time input: the words `DecodeTimeOnly` takes (`now`,
/// `allballs`, zones, AM/PM, unit labels, `T`); `None` to skip.
fn time_only_word(i: usize, fields: &[Field], st: &mut State, now: i64) -> Dt<Option<u32>> {
    let w = fields[i].text.as_str();
    match decode_special(w) {
        None
        | Some(
            Token::Zone(_)
            | Token::DynZone
            | Token::DstModifier
            | Token::Pm(_)
            | Token::Units(_)
            | Token::Ignore,
        ) => decode_word(i, fields, st, now),
        Some(Token::Reserved(Reserved::Now)) => {
            let off = super::zone::with_session_zone(|z| z.offset_at(now));
            let (_, time) = split_timestamp(now + i64::from(off) * USECS_PER_SEC);
            let tm = &mut st.tm;
            tm.hour = time / USECS_PER_HOUR;
            tm.min = time / USECS_PER_MINUTE % 60;
            tm.sec = time / USECS_PER_SEC % 60;
            tm.fsec = time % USECS_PER_SEC;
            Ok(Some(TIME_M))
        }
        Some(Token::Reserved(Reserved::Zulu)) => {
            (st.tm.hour, st.tm.min, st.tm.sec, st.tm.fsec) = (0, 0, 0, 0);
            st.tz = Some(0);
            Ok(Some(TIME_M | TZ))
        }
        Some(Token::IsoTime) => {
            match fields.get(i + 1) {
                Some(n) if matches!(n.ft, Ft::Number | Ft::Time | Ft::Date) => {}
                _ => return Err(DtErr::BadFormat),
            }
            st.ptype = Some(Unit::Time);
            Ok(Some(0))
        }
        Some(_) => Err(DtErr::BadFormat),
    }
}

/// `DecodeTimeOnly`'s final checks: the date fields, AM/PM, the time's
/// range, and the zone (a named zone with daylight rules needs a date).
fn time_only_finish(st: &mut State, now: i64) -> Dt<(i64, i32)> {
    validate_date(st)?;
    let tm = &mut st.tm;
    if st.pm.is_some() && tm.hour > 12 {
        return Err(DtErr::FieldOverflow);
    }
    match st.pm {
        Some(false) if tm.hour == 12 => tm.hour = 0,
        Some(true) if tm.hour != 12 => tm.hour += 12,
        _ => {}
    }
    let time = ((tm.hour * 60 + tm.min) * 60 + tm.sec) * USECS_PER_SEC + tm.fsec;
    if !(0..=24).contains(&tm.hour)
        || !(0..=59).contains(&tm.min)
        || !(0..=60).contains(&tm.sec)
        || !(0..=USECS_PER_SEC).contains(&tm.fsec)
        || time > USECS_PER_DAY
    {
        return Err(DtErr::FieldOverflow);
    }
    if st.fmask & TIME_M != TIME_M {
        return Err(DtErr::BadFormat);
    }
    let has_date = st.fmask & DATE_M == DATE_M;
    if st.fmask & DATE_M != 0 && !has_date && st.fmask & TZ == 0 {
        // The session's zone would need the whole date.
        return Err(DtErr::BadFormat);
    }
    if st.dyn_zone.is_some() && st.fmask & DATE_M != 0 && !has_date {
        return Err(DtErr::BadFormat);
    }
    let local = |tm: &Tm| {
        let day = if st.fmask & DATE_M == 0 {
            let off = super::zone::with_session_zone(|z| z.offset_at(now));
            split_timestamp(now + i64::from(off) * USECS_PER_SEC).0
        } else {
            date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE
        };
        day * USECS_PER_DAY + time
    };
    let east = if let Some(z) = &st.named_zone {
        if st.fmask & DTZMOD != 0 {
            return Err(DtErr::BadFormat);
        }
        match z.fixed_offset() {
            Some(off) => off,
            None if has_date => z.offset_of_local(local(&st.tm)),
            None => return Err(DtErr::BadFormat),
        }
    } else if let Some((z, abbr)) = &st.dyn_zone {
        z.abbrev_offset_of_local(local(&st.tm), abbr)
    } else if let Some(tz) = st.tz {
        tz + if st.dst_mod { 3600 } else { 0 }
    } else {
        if st.dst_mod {
            return Err(DtErr::BadFormat);
        }
        let l = local(&st.tm);
        super::zone::with_session_zone(|z| z.offset_of_local(l))
    };
    Ok((time, east))
}

/// PostgreSQL's `DateTimeParseError` for a decoding failure.
fn report(e: DtErr, text: &str, ty: &str) -> Error {
    match e {
        DtErr::BadFormat => err!(
            InvalidDatetimeFormat,
            "invalid input syntax for type {ty}: \"{text}\""
        ),
        DtErr::FieldOverflow => err!(
            DatetimeFieldOverflow,
            "date/time field value out of range: \"{text}\""
        ),
        DtErr::MdFieldOverflow => err!(
            DatetimeFieldOverflow,
            "date/time field value out of range: \"{text}\""
        )
        .with_hint("Perhaps you need a different \"datestyle\" setting."),
        DtErr::TzDispOverflow => err!(
            InvalidTimeZoneDisplacementValue,
            "time zone displacement out of range: \"{text}\""
        ),
        DtErr::UnknownZone(z) => err!(InvalidParameterValue, "time zone \"{z}\" not recognized"),
    }
}

/// The loop of `DecodeDateTime` and its final checks.
fn decode_all(fields: &[Field], st: &mut State, now: i64) -> Dt<()> {
    for (i, f) in fields.iter().enumerate() {
        let tmask = match f.ft {
            Ft::Date => decode_date_field(f, st)?,
            Ft::Time => {
                let m = decode_time(&f.text, &mut st.tm)?;
                let tm = &st.tm;
                if tm.hour > 24 || (tm.hour == 24 && (tm.min > 0 || tm.sec > 0 || tm.fsec > 0)) {
                    return Err(DtErr::FieldOverflow);
                }
                m
            }
            Ft::Tz => {
                st.tz = Some(decode_timezone(&f.text)?);
                TZ
            }
            Ft::Number => decode_number_token(f, st)?,
            Ft::Str | Ft::Special => match decode_word(i, fields, st, now)? {
                Some(m) => m,
                None => continue,
            },
        };
        if tmask & st.fmask != 0 {
            return Err(DtErr::BadFormat);
        }
        st.fmask |= tmask;
    }
    validate_date(st)?;
    let tm = &mut st.tm;
    if st.pm.is_some() && tm.hour > 12 {
        return Err(DtErr::FieldOverflow);
    }
    match st.pm {
        Some(false) if tm.hour == 12 => tm.hour = 0,
        Some(true) if tm.hour != 12 => tm.hour += 12,
        _ => {}
    }
    if st.reserved.is_none()
        || matches!(
            st.reserved,
            Some(
                Reserved::Now
                    | Reserved::Today
                    | Reserved::Tomorrow
                    | Reserved::Yesterday
                    | Reserved::Zulu
            )
        )
    {
        if st.fmask & DATE_M != DATE_M {
            return Err(DtErr::BadFormat);
        }
        if st.named_zone.is_some() && st.fmask & DTZMOD != 0 {
            return Err(DtErr::BadFormat);
        }
        if st.fmask & TZ == 0 && st.fmask & DTZMOD != 0 {
            return Err(DtErr::BadFormat);
        }
    }
    Ok(())
}

/// A `DTK_DATE` field: a Julian day with a zone, a zone name or
/// run-together time with a zone once month and day are known, or a date.
fn decode_date_field(f: &Field, st: &mut State) -> Dt<u32> {
    if st.ptype == Some(Unit::Julian) {
        let (val, rest) = strtoi(&f.text)?;
        if val < 0 {
            return Err(DtErr::FieldOverflow);
        }
        (st.tm.year, st.tm.mon, st.tm.mday) = julian_ymd(val);
        st.julian = true;
        st.tz = Some(decode_timezone(rest)?);
        st.ptype = None;
        return Ok(DATE_M | TIME_M | TZ);
    }
    if st.ptype.is_some() || st.fmask & (MONTH | DAY) == MONTH | DAY {
        if f.text.as_bytes()[0].is_ascii_digit() || st.ptype.is_some() {
            if st.ptype.is_some() {
                if st.ptype != Some(Unit::Time) {
                    return Err(DtErr::BadFormat);
                }
                st.ptype = None;
            }
            if st.fmask & TIME_M == TIME_M {
                return Err(DtErr::BadFormat);
            }
            let dash = f.text.find('-').ok_or(DtErr::BadFormat)?;
            st.tz = Some(decode_timezone(&f.text[dash..])?);
            let m = decode_number_field(&f.text[..dash], st.fmask, &mut st.tm, &mut st.two_digits)?;
            return Ok(m | TZ);
        }
        let Some(zone) = named_zone(&f.text) else {
            return Err(DtErr::UnknownZone(f.text.clone()));
        };
        st.named_zone = Some(zone);
        return Ok(TZ);
    }
    decode_date(&f.text, st)
}

/// Year, month, day of a Julian day number.
fn julian_ymd(j: i64) -> (i64, i64, i64) {
    let (y, m, d) = j2date(j);
    (y, i64::from(m), i64::from(d))
}

/// A `DTK_NUMBER` field: after a unit label, or a date/time by its shape.
fn decode_number_token(f: &Field, st: &mut State) -> Dt<u32> {
    let s = f.text.as_str();
    if let Some(ptype) = st.ptype {
        let (val, cp) = strtoi(s)?;
        if cp.starts_with('.') {
            if !matches!(ptype, Unit::Julian | Unit::Time | Unit::Second) {
                return Err(DtErr::BadFormat);
            }
        } else if !cp.is_empty() {
            return Err(DtErr::BadFormat);
        }
        let tm = &mut st.tm;
        let tmask = match ptype {
            Unit::Year => {
                tm.year = val;
                YEAR
            }
            Unit::Month => {
                if st.fmask & MONTH != 0 && st.fmask & HOUR != 0 {
                    tm.min = val;
                    MINUTE
                } else {
                    tm.mon = val;
                    MONTH
                }
            }
            Unit::Day => {
                tm.mday = val;
                DAY
            }
            Unit::Hour => {
                tm.hour = val;
                HOUR
            }
            Unit::Minute => {
                tm.min = val;
                MINUTE
            }
            Unit::Second => {
                tm.sec = val;
                if cp.starts_with('.') {
                    tm.fsec = fractional_second(cp)?;
                    ALL_SECS_M
                } else {
                    SECOND
                }
            }
            Unit::Julian => {
                if val < 0 {
                    return Err(DtErr::FieldOverflow);
                }
                (tm.year, tm.mon, tm.mday) = julian_ymd(val);
                st.julian = true;
                let mut m = DATE_M;
                if cp.starts_with('.') {
                    let frac = strtod_all(cp).ok_or(DtErr::BadFormat)?;
                    let us = (frac * USECS_PER_DAY as f64) as i64;
                    tm.hour = us / USECS_PER_HOUR;
                    tm.min = us / USECS_PER_MINUTE % 60;
                    tm.sec = us / USECS_PER_SEC % 60;
                    tm.fsec = us % USECS_PER_SEC;
                    m |= TIME_M;
                }
                m
            }
            Unit::Time => {
                let m = decode_number_field(s, st.fmask | DATE_M, tm, &mut st.two_digits)?;
                if m != TIME_M {
                    return Err(DtErr::BadFormat);
                }
                m
            }
            Unit::Other => return Err(DtErr::BadFormat),
        };
        st.ptype = None;
        return Ok(tmask);
    }
    let dot = s.find('.');
    if dot.is_some() && st.fmask & DATE_M == 0 {
        decode_date(s, st)
    } else if dot.is_some_and(|d| d > 2)
        || (s.len() >= 6 && (st.fmask & DATE_M == 0 || st.fmask & TIME_M == 0))
    {
        // Six or more digits are a run-together date or time (five are a
        // year), while a date or time field is still missing.
        decode_number_field(s, st.fmask, &mut st.tm, &mut st.two_digits)
    } else {
        decode_number(s, st, st.fmask)
    }
}

/// A word (`DTK_STRING` / `DTK_SPECIAL`); `None` for a word to skip.
fn decode_word(i: usize, fields: &[Field], st: &mut State, now: i64) -> Dt<Option<u32>> {
    let w = fields[i].text.as_str();
    let Some(tok) = decode_special(w) else {
        let Some(zone) = named_zone(w) else {
            return Err(DtErr::BadFormat);
        };
        st.named_zone = Some(zone);
        return Ok(Some(TZ));
    };
    let tm = &mut st.tm;
    Ok(Some(match tok {
        Token::Ignore => return Ok(None),
        Token::Reserved(r) => {
            // The session zone's clock; `now` keeps its exact instant.
            let now_off = super::zone::with_session_zone(|z| z.offset_at(now));
            let (today, time) = split_timestamp(now + i64::from(now_off) * USECS_PER_SEC);
            // Only the date: a time given with `today` (`10:30 today`) stays.
            let set_day = |tm: &mut Tm, d: i64| {
                (tm.year, tm.mon, tm.mday) = julian_ymd(d + POSTGRES_EPOCH_JDATE);
            };
            match r {
                Reserved::Now => {
                    set_day(tm, today);
                    tm.hour = time / USECS_PER_HOUR;
                    tm.min = time / USECS_PER_MINUTE % 60;
                    tm.sec = time / USECS_PER_SEC % 60;
                    tm.fsec = time % USECS_PER_SEC;
                    st.reserved = Some(r);
                    st.tz = Some(now_off);
                    DATE_M | TIME_M | TZ
                }
                Reserved::Today | Reserved::Tomorrow | Reserved::Yesterday => {
                    let off = match r {
                        Reserved::Tomorrow => 1,
                        Reserved::Yesterday => -1,
                        _ => 0,
                    };
                    set_day(tm, today + off);
                    st.reserved = Some(r);
                    DATE_M
                }
                Reserved::Zulu => {
                    (tm.hour, tm.min, tm.sec) = (0, 0, 0);
                    st.reserved = Some(r);
                    st.tz = Some(0);
                    TIME_M | TZ
                }
                _ => {
                    st.reserved = Some(r);
                    RESERV
                }
            }
        }
        Token::Month(m) => {
            let mut mask = MONTH;
            if st.fmask & MONTH != 0
                && !st.text_month
                && st.fmask & DAY == 0
                && (1..=31).contains(&tm.mon)
            {
                tm.mday = tm.mon;
                mask = DAY;
            }
            st.text_month = true;
            tm.mon = m;
            mask
        }
        Token::DstModifier => {
            st.dst_mod = true;
            DTZMOD | (1 << 6)
        }
        Token::Zone(off) => {
            st.tz = Some(off);
            TZ
        }
        Token::DynZone => {
            if let Some(z) = super::zone::dynamic_abbreviation(w) {
                st.dyn_zone = Some((z, w.to_ascii_uppercase()));
            }
            TZ
        }
        Token::Pm(pm) => {
            st.pm = Some(pm);
            AMPM
        }
        Token::Bc(bc) => {
            st.bc = bc;
            ADBC
        }
        Token::Dow => DOW,
        Token::Units(u) => {
            st.ptype = Some(u);
            0
        }
        Token::IsoTime => {
            if st.fmask & DATE_M != DATE_M {
                return Err(DtErr::BadFormat);
            }
            match fields.get(i + 1) {
                Some(n) if matches!(n.ft, Ft::Number | Ft::Time | Ft::Date) => {}
                _ => return Err(DtErr::BadFormat),
            }
            st.ptype = Some(Unit::Time);
            0
        }
    }))
}

/// `ValidateDate`: BC and two-digit years, day of year, month and day
/// ranges.
fn validate_date(st: &mut State) -> Dt<()> {
    let fmask = st.fmask;
    let tm = &mut st.tm;
    if fmask & YEAR != 0 {
        if st.julian {
        } else if st.bc {
            if tm.year <= 0 {
                return Err(DtErr::FieldOverflow);
            }
            tm.year = -(tm.year - 1);
        } else if st.two_digits {
            if tm.year < 0 {
                return Err(DtErr::FieldOverflow);
            }
            if tm.year < 70 {
                tm.year += 2000;
            } else if tm.year < 100 {
                tm.year += 1900;
            }
        } else if tm.year <= 0 {
            return Err(DtErr::FieldOverflow);
        }
    }
    if fmask & DOY != 0 {
        (tm.year, tm.mon, tm.mday) = julian_ymd(date2j(tm.year, 1, 1) + tm.yday - 1);
    }
    if fmask & MONTH != 0 && !(1..=12).contains(&tm.mon) {
        return Err(DtErr::MdFieldOverflow);
    }
    if fmask & DAY != 0 && !(1..=31).contains(&tm.mday) {
        return Err(DtErr::MdFieldOverflow);
    }
    if fmask & DATE_M == DATE_M && tm.mday > i64::from(days_in_month(tm.year, tm.mon as u32)) {
        return Err(DtErr::FieldOverflow);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Expected values from PostgreSQL 15 (DateStyle ISO, MDY).
    use super::*;

    fn ts(s: &str) -> std::result::Result<String, String> {
        match decode_datetime(s, "timestamp", 0) {
            Ok(Parsed::Moment(d, t)) => {
                let mut out = String::new();
                write_timestamp(d * USECS_PER_DAY + t, &mut out);
                Ok(out)
            }
            Ok(p) => Ok(format!("{p:?}")),
            Err(e) => Err(e.message),
        }
    }

    #[test]
    fn forms_decode_as_postgresql() {
        let ok = |s: &str, want: &str| assert_eq!(ts(s).as_deref(), Ok(want), "{s}");
        ok("Mon Feb 10 17:32:01.5 1997 PST", "1997-02-10 17:32:01.5");
        ok("19970210 173201 -0800", "1997-02-10 17:32:01");
        ok("1997.041 17:32:01 UTC", "1997-02-10 17:32:01");
        ok("2000-03-15 08:14:01 GMT+8", "2000-03-15 08:14:01");
        ok("Feb 10 5:32PM 1997", "1997-02-10 17:32:00");
        ok("J2451187 04:05", "1999-01-08 04:05:00");
        ok("y1999m01d08 h04mm05s06.5", "1999-01-08 04:05:06.5");
        ok("Feb 16 17:32:01 0097 BC", "0097-02-16 17:32:01 BC");
        ok("20011225T040506.789", "2001-12-25 04:05:06.789");
        let bad = |s: &str, want: &str| assert_eq!(ts(s), Err(want.to_string()), "{s}");
        bad(
            "1999-08-Jan",
            "invalid input syntax for type timestamp: \"1999-08-Jan\"",
        );
        bad(
            "Feb 16 17:32:01 -0097",
            "time zone displacement out of range: \"Feb 16 17:32:01 -0097\"",
        );
        bad(
            "Feb 30 2000",
            "date/time field value out of range: \"Feb 30 2000\"",
        );
        bad(
            "13/1/2000",
            "date/time field value out of range: \"13/1/2000\"",
        );
        bad(
            "19970710 173201 America/Does_not_exist",
            "time zone \"america/does_not_exist\" not recognized",
        );
        assert!(named_zone("gmt-1").is_some() && named_zone("mst+7:00").is_some());
        assert!(named_zone("gm-1").is_none());
    }
}
