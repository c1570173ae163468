//! `time [without time zone]` and `time with time zone` (`timetz`), as
//! PostgreSQL's `date.c`: text input (through [`super::decode`]'s
//! `DecodeTimeOnly`), output, `time(p)` rounding, the casts to and from
//! `timestamp`, `timestamptz`, `interval` and each other, arithmetic and
//! `extract`.
//!
//! A `time` is microseconds since midnight, `0 ..= 24:00:00` (24:00:00 is
//! valid input, as in PostgreSQL). A `timetz` is such a time and the zone
//! offset it was written in, in seconds east of UTC (PostgreSQL stores
//! seconds west; every function here negates where its code would).
//! Output does not depend on `DateStyle`: `HH:MM:SS[.ffffff]` and, for
//! `timetz`, the offset as `+HH[:MM[:SS]]`. Two `timetz` values are equal
//! only when both the time and the offset are; they order by their UTC
//! moment first and then by offset (PostgreSQL's `timetz_cmp_internal`).

use std::cmp::Ordering;
use std::fmt::Write;

use super::*;
use crate::err;
use crate::error::{Error, Result};
use crate::types::numeric::Numeric;
use crate::types::value::Interval;

/// The largest offset `timetz` accepts, in seconds (PostgreSQL's
/// `TZDISP_LIMIT`: 15:59:59).
const TZDISP_LIMIT: i32 = (15 * 60 + 59) * 60 + 59;

/// The fractional-second precision of `time(p)`, checked as PostgreSQL's
/// `anytime_typmod_check`: negative is an error, above 6 is reduced to 6.
pub fn time_precision(p: i64, tz: bool) -> Result<u8> {
    if p < 0 {
        let tz = if tz { " WITH TIME ZONE" } else { "" };
        return Err(err!(
            InvalidParameterValue,
            "TIME({p}){tz} precision must not be negative"
        ));
    }
    Ok(p.min(6) as u8)
}

/// A time rounded to `p` fractional digits (`AdjustTimeForTypmod`, half
/// up; 23:59:59.9 may become 24:00:00 as in PostgreSQL).
pub fn round_time(t: i64, p: Option<u8>) -> i64 {
    match p {
        Some(p) if p < 6 => {
            let scale = 10_i64.pow(6 - u32::from(p));
            (t + scale / 2) / scale * scale
        }
        _ => t,
    }
}

/// Parses `time` input; a zone in the text is checked and ignored.
pub fn parse_time_at(text: &str, now: i64) -> Result<i64> {
    super::decode::decode_time_only(text, "time", now).map(|(t, _)| t)
}

/// Parses `timetz` input: the time and its offset (seconds east); without
/// a zone in the text the session's zone applies at today's date (or at
/// the date the text gives).
pub fn parse_timetz_at(text: &str, now: i64) -> Result<(i64, i32)> {
    let (t, east) = super::decode::decode_time_only(text, "time with time zone", now)?;
    if east.abs() > TZDISP_LIMIT {
        return Err(err!(
            InvalidTimeZoneDisplacementValue,
            "time zone displacement out of range: \"{text}\""
        ));
    }
    Ok((t, east))
}

/// Appends a `timetz`: the time, then its offset as PostgreSQL's
/// `EncodeTimezone` writes it (`+05:30`, `-08`).
pub fn write_timetz(t: i64, east: i32, out: &mut String) {
    write_time(t, out);
    let sign = if east < 0 { '-' } else { '+' };
    let a = east.unsigned_abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    let _ = write!(out, "{sign}{h:02}");
    if s != 0 {
        let _ = write!(out, ":{m:02}:{s:02}");
    } else if m != 0 {
        let _ = write!(out, ":{m:02}");
    }
}

/// The UTC moment of a `timetz` within its day, for ordering.
fn utc_key(t: i64, east: i32) -> i64 {
    t - i64::from(east) * USECS_PER_SEC
}

/// `timetz_cmp`: by UTC moment, then the value further west first.
pub fn timetz_cmp(a: (i64, i32), b: (i64, i32)) -> Ordering {
    utc_key(a.0, a.1)
        .cmp(&utc_key(b.0, b.1))
        .then_with(|| b.1.cmp(&a.1))
}

/// Wraps microseconds into one day (`time ± interval` ignore days).
fn wrap_day(t: i64) -> i64 {
    t.rem_euclid(USECS_PER_DAY)
}

/// `time + interval` (and `timetz + interval`'s time): the interval's
/// time part, wrapped into the day.
pub fn time_add_interval(t: i64, iv: &Interval) -> i64 {
    wrap_day(t.wrapping_add(iv.micros % USECS_PER_DAY))
}

/// `time - interval`.
pub fn time_sub_interval(t: i64, iv: &Interval) -> i64 {
    wrap_day(t.wrapping_sub(iv.micros % USECS_PER_DAY))
}

/// `time - time`: an interval of microseconds.
pub fn time_diff(a: i64, b: i64) -> Interval {
    Interval {
        months: 0,
        days: 0,
        micros: a - b,
    }
}

/// `date + time`: a timestamp (an infinite date stays infinite).
pub fn date_add_time(d: i32, t: i64) -> Result<i64> {
    if d == DATE_BEGIN || d == DATE_END {
        return Ok(if d == DATE_BEGIN { TS_BEGIN } else { TS_END });
    }
    let ts = arith::date_to_timestamp(d)?
        .checked_add(t)
        .ok_or_else(arith::timestamp_out_of_range)?;
    if !(MIN_TIMESTAMP..END_TIMESTAMP).contains(&ts) {
        return Err(arith::timestamp_out_of_range());
    }
    Ok(ts)
}

/// `date + timetz`: a timestamptz (the offset places the moment).
pub fn date_add_timetz(d: i32, t: i64, east: i32) -> Result<i64> {
    if d == DATE_BEGIN || d == DATE_END {
        return Ok(if d == DATE_BEGIN { TS_BEGIN } else { TS_END });
    }
    let local = date_add_time(d, t)?;
    let ts = local - i64::from(east) * USECS_PER_SEC;
    if !(MIN_TIMESTAMP..END_TIMESTAMP).contains(&ts) {
        return Err(arith::timestamp_out_of_range());
    }
    Ok(ts)
}

/// `timestamp -> time`: the time of day; `None` (NULL) for an infinity.
pub fn timestamp_to_time(ts: i64) -> Option<i64> {
    (ts != TS_BEGIN && ts != TS_END).then(|| ts.rem_euclid(USECS_PER_DAY))
}

/// `timestamptz -> time`: the local time of day in the session's zone.
pub fn timestamptz_to_time(ts: i64) -> Option<i64> {
    timestamp_to_time(ts).map(|_| zone::to_local(ts).rem_euclid(USECS_PER_DAY))
}

/// `timestamptz -> timetz`: the local time and the session zone's offset
/// at that moment.
pub fn timestamptz_to_timetz(ts: i64) -> Option<(i64, i32)> {
    timestamp_to_time(ts)?;
    let east = zone::with_session_zone(|z| z.offset_at(ts));
    Some((
        (ts + i64::from(east) * USECS_PER_SEC).rem_euclid(USECS_PER_DAY),
        east,
    ))
}

/// `time -> timetz`: the session zone's offset for that time today
/// (`now` is the statement's clock).
pub fn time_to_timetz(t: i64, now: i64) -> (i64, i32) {
    let east = zone::with_session_zone(|z| {
        let local_day =
            (now + i64::from(z.offset_at(now)) * USECS_PER_SEC).div_euclid(USECS_PER_DAY);
        z.offset_of_local(local_day * USECS_PER_DAY + t)
    });
    (t, east)
}

/// `timetz AT TIME ZONE zone`: the same moment in the zone's offset (a
/// zone with rules: its offset now, as PostgreSQL's `timetz_zone`).
pub fn timetz_at_zone(t: i64, east: i32, zone: &super::tstz::ZoneArg) -> (i64, i32) {
    use super::tstz::ZoneArg;
    let to = match zone {
        ZoneArg::Fixed(e) => *e,
        ZoneArg::Zone(z) => z
            .fixed_offset()
            .unwrap_or_else(|| z.offset_at(system_now())),
        ZoneArg::Dynamic(z, abbr) => z.abbrev_offset_at_ts(system_now(), abbr),
    };
    let shifted = t + i64::from(to - east) * USECS_PER_SEC;
    (wrap_day(shifted), to)
}

/// `interval -> time`: the interval's time part, wrapped into a day.
pub fn interval_to_time(iv: &Interval) -> i64 {
    wrap_day(iv.micros % USECS_PER_DAY)
}

/// `unit "x" not supported for type ...` (0A000).
fn unit_not_supported(unit: &str, ty: &str) -> Error {
    err!(
        FeatureNotSupported,
        "unit \"{unit}\" not supported for type {ty}"
    )
}

/// `v / 10^scale` with `scale` digits (`int64_div_fast_to_numeric`).
fn scaled(v: i64, scale: u32) -> Numeric {
    Numeric::from_i64(v).div_round(&Numeric::from_i64(10_i64.pow(scale)), scale as i32)
}

/// The units `extract` reads from a time of day.
fn extract_clock(unit: &str, t: i64) -> Option<Numeric> {
    let sec_us = t % USECS_PER_MINUTE;
    Some(match unit {
        "microseconds" => Numeric::from_i64(sec_us),
        "milliseconds" => scaled(sec_us, 3),
        "second" => scaled(sec_us, 6),
        "minute" => Numeric::from_i64(t / USECS_PER_MINUTE % 60),
        "hour" => Numeric::from_i64(t / USECS_PER_HOUR),
        _ => return None,
    })
}

/// Calendar units no time of day has.
const DATE_UNITS: [&str; 8] = [
    "day",
    "month",
    "quarter",
    "year",
    "decade",
    "century",
    "millennium",
    "isoyear",
];

/// `extract(field from time)` (PostgreSQL's `time_part`).
pub fn extract_time(field: &str, t: i64) -> Result<Numeric> {
    const TY: &str = "time without time zone";
    let u = arith::unit(field);
    let low = field.to_ascii_lowercase();
    if let Some(n) = extract_clock(&u, t) {
        return Ok(n);
    }
    match u.as_str() {
        "epoch" => Ok(scaled(t, 6)),
        u if DATE_UNITS.contains(&u) || u.starts_with("timezone") => {
            Err(unit_not_supported(&low, TY))
        }
        _ => Err(arith::unrecognized(&low, TY)),
    }
}

/// `extract(field from timetz)` (PostgreSQL's `timetz_part`).
pub fn extract_timetz(field: &str, t: i64, east: i32) -> Result<Numeric> {
    const TY: &str = "time with time zone";
    let u = arith::unit(field);
    let low = field.to_ascii_lowercase();
    if let Some(n) = extract_clock(&u, t) {
        return Ok(n);
    }
    let east = i64::from(east);
    match u.as_str() {
        "timezone" => Ok(Numeric::from_i64(east)),
        "timezone_h" | "timezone_hour" => Ok(Numeric::from_i64(east / 3600)),
        "timezone_m" | "timezone_minute" => Ok(Numeric::from_i64(east / 60 % 60)),
        "epoch" => Ok(scaled(t - east * USECS_PER_SEC, 6)),
        u if DATE_UNITS.contains(&u) => Err(unit_not_supported(&low, TY)),
        _ => Err(arith::unrecognized(&low, TY)),
    }
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15.
    use super::*;

    fn time(s: &str) -> std::result::Result<String, String> {
        let mut out = String::new();
        parse_time_at(s, 0)
            .map(|t| {
                write_time(t, &mut out);
                out
            })
            .map_err(|e| e.message)
    }

    fn timetz(s: &str) -> std::result::Result<String, String> {
        let mut out = String::new();
        parse_timetz_at(s, 0)
            .map(|(t, z)| {
                write_timetz(t, z, &mut out);
                out
            })
            .map_err(|e| e.message)
    }

    #[test]
    fn time_input_forms() {
        assert_eq!(time("040506.789+08").as_deref(), Ok("04:05:06.789"));
        assert_eq!(time("T040506.789-08").as_deref(), Ok("04:05:06.789"));
        assert_eq!(time("11:59 PM").as_deref(), Ok("23:59:00"));
        assert_eq!(time("24:00:00").as_deref(), Ok("24:00:00"));
        assert_eq!(time("allballs").as_deref(), Ok("00:00:00"));
        assert_eq!(
            time("24:00:01").unwrap_err(),
            "date/time field value out of range: \"24:00:01\""
        );
        assert_eq!(
            time("15:36:39 America/New_York").unwrap_err(),
            "invalid input syntax for type time: \"15:36:39 America/New_York\""
        );
        assert_eq!(
            time("2003-03-07 15:36:39 America/New_York").as_deref(),
            Ok("15:36:39")
        );
    }

    #[test]
    fn timetz_input_and_output() {
        assert_eq!(timetz("040506.789+08").as_deref(), Ok("04:05:06.789+08"));
        assert_eq!(timetz("T040506.789 -08").as_deref(), Ok("04:05:06.789-08"));
        assert_eq!(timetz("11:00-5").as_deref(), Ok("11:00:00-05"));
        assert_eq!(timetz("04:05:06 PST").as_deref(), Ok("04:05:06-08"));
        assert_eq!(
            timetz("2003-07-07 15:36:39 America/New_York").as_deref(),
            Ok("15:36:39-04")
        );
        assert_eq!(timetz("1:00+05:30").as_deref(), Ok("01:00:00+05:30"));
    }

    #[test]
    fn arithmetic_wraps_the_day() {
        let iv = |us: i64| Interval {
            months: 0,
            days: 1,
            micros: us,
        };
        assert_eq!(
            time_add_interval(23 * USECS_PER_HOUR, &iv(2 * USECS_PER_HOUR)),
            USECS_PER_HOUR
        );
        assert_eq!(
            time_sub_interval(USECS_PER_HOUR, &iv(2 * USECS_PER_HOUR)),
            23 * USECS_PER_HOUR
        );
        assert_eq!(round_time(USECS_PER_DAY - 1, Some(0)), USECS_PER_DAY);
        assert_eq!(
            timetz_cmp((USECS_PER_HOUR, 3600), (0, 0)),
            Ordering::Less,
            "equal moments order the eastern offset first"
        );
    }
}
