//! Date and timestamp text input: a reader for the two forms bulk input
//! is made of (ISO `1999-01-08 04:05:06` and the `Postgres` output form
//! `Thu Jan 07 15:15:00 1999 EST`) that allocates nothing, and PostgreSQL's
//! general decoder ([`super::decode`]) for every other form, under
//! `DateStyle`'s field order. Both roads give the same answer for the same
//! text. Errors use PostgreSQL's wording: `invalid input syntax for type
//! date: "x"` (22007), `date/time field value out of range: "1999-02-30"`
//! (22008), `date out of range: "x"`.

use super::*;
use crate::err;
use crate::error::{Error, Result};

/// What a date/time string denotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Parsed {
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
/// Zone names accepted (and ignored) in `timestamp without time zone` input.
const ZONES: [&str; 26] = [
    "utc", "gmt", "z", "zulu", "ut", "est", "edt", "cst", "cdt", "mst", "mdt", "pst", "pdt",
    "akst", "akdt", "hst", "cet", "cest", "eet", "eest", "wet", "west", "bst", "msk", "jst", "ist",
];

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

/// Decodes `timestamp with time zone` input: the moment and the zone's
/// offset the text gives (`None`: the session's zone applies). The common
/// forms without a zone take the allocation-free road.
pub(super) fn decode_tz(text: &str, now: i64) -> Result<(Parsed, Option<i32>)> {
    const TY: &str = "timestamp with time zone";
    let b = text.as_bytes();
    if b.len() == 10 || b.len() == 19 || b.len() == 24 {
        if let Some(f) = decode_common(b) {
            return finish(f, text, TY, now).map(|p| (p, None));
        }
    }
    super::decode::decode_datetime_tz(text, TY, now)
}

/// Decodes a string into a [`Parsed`] value.
fn decode(text: &str, ty: &str, now: i64) -> Result<Parsed> {
    match decode_common(text.as_bytes()) {
        Some(f) => finish(f, text, ty, now),
        None => super::decode::decode_datetime(text, ty, now),
    }
}

/// The two forms that bulk input is made of, read without allocating:
/// ISO `YYYY-MM-DD[ HH:MM:SS]` and PostgreSQL's `Www Mmm DD HH:MM:SS YYYY
/// [ZONE]` (a script dumped with `DateStyle = Postgres`). Returns the fields
/// for [`finish`], or `None` for any other text (read by [`super::decode`]), including these forms
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
        let (d, t) = split_timestamp(super::zone::to_local(now));
        return Ok(Parsed::Moment(d, t));
    }
    if let Some(off) = f.special_day {
        if f.year.is_some() || f.month.is_some() || f.day.is_some() {
            return Err(bad_syntax(text, ty));
        }
        let (d, _) = split_timestamp(super::zone::to_local(now));
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
                let general = super::super::decode::decode_datetime(text, ty, 0)
                    .map_err(|e| (e.code, e.message));
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
