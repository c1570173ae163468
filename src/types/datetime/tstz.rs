//! `timestamp with time zone`: input with zones, output in the session's
//! `TimeZone` under every `DateStyle`, the casts to and from `timestamp`
//! and `date`, interval arithmetic in local time, `extract`, `date_trunc`
//! and `AT TIME ZONE`, following PostgreSQL's `timestamp.c`.
//!
//! A value is microseconds since 2000-01-01 00:00:00 UTC (the extreme
//! values are the infinities, as for `timestamp`). Everything that works
//! on calendar fields (output, `extract`, month and day arithmetic,
//! `date_trunc`) first moves the value to local time in the session's zone
//! ([`super::zone`]) and, where the result is a timestamptz again, back
//! through the zone's offset for that local time (PostgreSQL's
//! `DetermineTimeZoneOffset`, so a day added across a DST change keeps the
//! wall-clock time).

use std::sync::Arc;

use super::arith::{self, timestamp_out_of_range};
use super::parse::Parsed;
use super::zone::{self, Zone};
use super::*;
use crate::err;
use crate::error::{Error, Result};
use crate::types::numeric::Numeric;
use crate::types::value::Interval;

const TYPE_NAME: &str = "timestamp with time zone";

fn is_finite(t: i64) -> bool {
    t != TS_BEGIN && t != TS_END
}

fn in_range(t: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&t)
}

/// Parses `timestamp with time zone` input; `now` is the clock for `now`,
/// `today`, `tomorrow`, `yesterday`.
pub fn parse_timestamptz_at(text: &str, now: i64) -> Result<i64> {
    let (parsed, tz) = super::parse::decode_tz(text, now).map_err(|mut e| {
        if e.message.starts_with(TYPE_NAME) {
            e.message = e.message.replacen(TYPE_NAME, "timestamp", 1);
        }
        e
    })?;
    let out_of_range = || err!(DatetimeFieldOverflow, "timestamp out of range: \"{text}\"");
    match parsed {
        Parsed::Infinity => Ok(TS_END),
        Parsed::NegInfinity => Ok(TS_BEGIN),
        Parsed::Moment(days, time) => {
            // The local date may lie just outside the range when its UTC
            // moment does not (`4714-11-23 16:00-08 BC`).
            let local = days
                .checked_mul(USECS_PER_DAY)
                .and_then(|d| d.checked_add(time))
                .ok_or_else(out_of_range)?;
            let utc = match tz {
                Some(east) => local - i64::from(east) * USECS_PER_SEC,
                None => zone::from_local(local),
            };
            if !in_range(utc) {
                return Err(out_of_range());
            }
            Ok(utc)
        }
    }
}

/// Parses `timestamp with time zone` input with the system clock.
pub fn parse_timestamptz(text: &str) -> Result<i64> {
    parse_timestamptz_at(text, system_now())
}

/// Appends the zone offset as ISO writes it: `-08`, `+05:30`, `-07:52:58`.
fn write_offset(east: i32, out: &mut String) {
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

/// Appends a timestamptz as the session's `DateStyle` and `TimeZone` show
/// it: ISO `1997-02-10 17:32:01-08`, Postgres `Mon Feb 10 17:32:01 1997
/// PST`, SQL `02/10/1997 17:32:01 PST`, German `10.02.1997 17:32:01 PST`.
pub fn write_timestamptz(ts: i64, out: &mut String) {
    if !is_finite(ts) {
        write_timestamp(ts, out);
        return;
    }
    zone::with_session_zone(|z| write_in_zone(ts, z, out));
}

/// [`write_timestamptz`] in the zone `z`.
pub fn write_in_zone(ts: i64, z: &Zone, out: &mut String) {
    let (east, _, abbrev) = z.at(ts);
    let start = out.len();
    write_timestamp(ts + i64::from(east) * USECS_PER_SEC, out);
    let bc = out[start..].ends_with(" BC");
    if bc {
        out.truncate(out.len() - 3);
    }
    if style::output_style().date == style::DateOut::Iso {
        write_offset(east, out);
    } else {
        out.push(' ');
        out.push_str(abbrev);
    }
    if bc {
        out.push_str(" BC");
    }
}

/// `timestamp -> timestamptz`: the local time in the session's zone.
pub fn timestamp_to_timestamptz(t: i64) -> Result<i64> {
    if !is_finite(t) {
        return Ok(t);
    }
    let r = zone::from_local(t);
    if !in_range(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

/// `timestamptz -> timestamp`: the local time in the session's zone.
pub fn timestamptz_to_timestamp(t: i64) -> Result<i64> {
    if !is_finite(t) {
        return Ok(t);
    }
    let r = zone::to_local(t);
    if !in_range(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

/// `date -> timestamptz`: local midnight in the session's zone.
pub fn date_to_timestamptz(d: i32) -> Result<i64> {
    let local = arith::date_to_timestamp(d)?;
    if !is_finite(local) {
        return Ok(local);
    }
    let r = zone::from_local(local);
    if !in_range(r) {
        return Err(err!(
            DatetimeFieldOverflow,
            "date out of range for timestamp"
        ));
    }
    Ok(r)
}

/// `timestamptz -> date`: the local date in the session's zone.
pub fn timestamptz_to_date(t: i64) -> i32 {
    if !is_finite(t) {
        return arith::timestamp_to_date(t);
    }
    arith::timestamp_to_date(zone::to_local(t))
}

/// A timestamp or date compared with a timestamptz: its value as a
/// timestamptz, saturating to the infinities instead of failing.
pub fn timestamp_to_timestamptz_sat(t: i64) -> i64 {
    timestamp_to_timestamptz(t).unwrap_or(if t < 0 { TS_BEGIN } else { TS_END })
}

/// `timestamptz + interval` (PostgreSQL's `timestamptz_pl_interval`):
/// months, then days, in local time (the day clamped to the month's
/// length, the offset found again for the new local time), then the
/// microseconds on the absolute time.
pub fn timestamptz_add_interval(t: i64, iv: &Interval) -> Result<i64> {
    add_interval_in(t, iv, None)
}

/// [`timestamptz_add_interval`] in the zone `z` (the session's if `None`).
pub fn add_interval_in(t: i64, iv: &Interval, z: Option<&Zone>) -> Result<i64> {
    if !is_finite(t) {
        return Ok(t);
    }
    let mut r = t;
    if iv.months != 0 || iv.days != 0 {
        let calendar = Interval {
            months: iv.months,
            days: iv.days,
            micros: 0,
        };
        let shift = |z: &Zone| -> Result<i64> {
            let local = arith::timestamp_add_interval(z.utc_to_local(t), &calendar)?;
            Ok(z.local_to_utc(local))
        };
        r = match z {
            Some(z) => shift(z)?,
            None => zone::with_session_zone(shift)?,
        };
    }
    let r = r
        .checked_add(iv.micros)
        .ok_or_else(timestamp_out_of_range)?;
    if !in_range(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

/// `timestamptz - interval`.
pub fn timestamptz_sub_interval(t: i64, iv: &Interval) -> Result<i64> {
    timestamptz_add_interval(t, &interval::neg(iv)?)
}

/// The local time of a timestamptz in the session's zone, infinities kept
/// (`age(timestamptz, timestamptz)` subtracts these, ignoring a difference
/// in their offsets as PostgreSQL does).
pub fn local(t: i64) -> i64 {
    if is_finite(t) {
        zone::to_local(t)
    } else {
        t
    }
}

/// Error texts of the `timestamp` field functions, for this type.
fn retype(mut e: Error) -> Error {
    e.message = e.message.replace("timestamp without time zone", TYPE_NAME);
    e
}

/// `extract(field from timestamptz)` / `date_part`: fields of the local
/// time in the session's zone; `epoch` counts from 1970-01-01 UTC;
/// `timezone`, `timezone_hour`, `timezone_minute` are the offset.
pub fn extract_timestamptz_opt(field: &str, t: i64) -> Result<Option<Numeric>> {
    let u = field.trim().to_ascii_lowercase();
    let tz_field = matches!(
        u.as_str(),
        "timezone" | "timezone_h" | "timezone_hour" | "timezone_m" | "timezone_minute"
    );
    if !is_finite(t) {
        if tz_field {
            return Ok(None);
        }
        return arith::extract_timestamp_opt(field, t).map_err(retype);
    }
    let east = zone::with_session_zone(|z| z.offset_at(t));
    if tz_field {
        let e = i64::from(east);
        return Ok(Some(Numeric::from_i64(match u.as_str() {
            "timezone" => e,
            "timezone_h" | "timezone_hour" => e / 3600,
            _ => e / 60 % 60,
        })));
    }
    let local = t + i64::from(east) * USECS_PER_SEC;
    if matches!(u.as_str(), "epoch") {
        return arith::extract_timestamp_opt(field, t).map_err(retype);
    }
    arith::extract_timestamp_opt(field, local).map_err(retype)
}

/// `date_trunc(field, timestamptz [, zone])`: truncated in local time; for
/// a day or longer the offset is found again for the truncated time.
pub fn date_trunc_timestamptz(field: &str, t: i64, z: Option<&Zone>) -> Result<i64> {
    if !is_finite(t) {
        return arith::date_trunc(field, t).map_err(retype);
    }
    let run = |z: &Zone| -> Result<i64> {
        let east = i64::from(z.offset_at(t)) * USECS_PER_SEC;
        let truncated = arith::date_trunc(field, t + east).map_err(retype)?;
        let u = field.trim().to_ascii_lowercase();
        let sub_day = matches!(
            u.as_str(),
            "microseconds"
                | "us"
                | "usec"
                | "usecs"
                | "microsecond"
                | "milliseconds"
                | "ms"
                | "msec"
                | "msecs"
                | "millisecond"
                | "second"
                | "s"
                | "sec"
                | "secs"
                | "seconds"
                | "minute"
                | "m"
                | "min"
                | "mins"
                | "minutes"
                | "hour"
                | "h"
                | "hr"
                | "hrs"
                | "hours"
        );
        Ok(if sub_day {
            truncated - east
        } else {
            z.local_to_utc(truncated)
        })
    };
    match z {
        Some(z) => run(z),
        None => zone::with_session_zone(run),
    }
}

/// `make_timestamptz`'s zone argument (PostgreSQL's `parse_sane_timezone`):
/// a numeric offset with its sign first (`+2`: two hours east), an
/// abbreviation, or a zone of the database.
pub fn sane_zone_arg(name: &str) -> Result<ZoneArg> {
    if name.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return Err(err!(
            InvalidDatetimeFormat,
            "invalid input syntax for type numeric time zone: \"{name}\""
        )
        .with_hint("Numeric time zones must have \"-\" or \"+\" as first character."));
    }
    if name.starts_with(['+', '-']) {
        match super::decode::numeric_zone(name) {
            Some(Ok(east)) => return Ok(ZoneArg::Fixed(east)),
            Some(Err(())) => {
                return Err(err!(
                    InvalidParameterValue,
                    "numeric time zone \"{name}\" out of range"
                ))
            }
            None => {}
        }
    }
    zone_arg(name)
}

impl ZoneArg {
    /// The zone itself (a fixed offset as a zone of that offset).
    pub fn into_zone(self) -> Arc<Zone> {
        match self {
            ZoneArg::Zone(z) | ZoneArg::Dynamic(z, _) => z,
            ZoneArg::Fixed(east) => Arc::new(Zone::fixed("", east, "")),
        }
    }
}

/// `to_timestamp(double precision)`: seconds since 1970-01-01 UTC.
pub fn to_timestamp(secs: f64) -> Result<i64> {
    if secs.is_nan() {
        return Err(err!(DatetimeFieldOverflow, "timestamp cannot be NaN"));
    }
    if secs.is_infinite() {
        return Ok(if secs < 0.0 { TS_BEGIN } else { TS_END });
    }
    let unix_min = (MIN_TIMESTAMP / USECS_PER_SEC + 946_684_800) as f64;
    let unix_max = (END_TIMESTAMP / USECS_PER_SEC + 946_684_800) as f64;
    if secs < unix_min || secs >= unix_max {
        return Err(err!(
            DatetimeFieldOverflow,
            "timestamp out of range: \"{}\"",
            g6(secs)
        ));
    }
    let us = ((secs - 946_684_800.0) * USECS_PER_SEC as f64).round_ties_even() as i64;
    if !in_range(us) {
        return Err(err!(
            DatetimeFieldOverflow,
            "timestamp out of range: \"{}\"",
            g6(secs)
        ));
    }
    Ok(us)
}

/// C's `%g`: six significant digits, trailing zeros dropped.
fn g6(v: f64) -> String {
    let exp = if v == 0.0 {
        0
    } else {
        v.abs().log10().floor() as i32
    };
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..6).contains(&exp) {
        trim(format!("{:.*}", (5 - exp).max(0) as usize, v))
    } else {
        let m = v / 10f64.powi(exp);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(format!("{m:.5}")), exp.abs())
    }
}

/// A zone named by `AT TIME ZONE` or `date_trunc`'s third argument: an
/// abbreviation of the default set (a fixed offset) or a zone of the
/// database.
pub enum ZoneArg {
    /// A fixed offset, seconds east.
    Fixed(i32),
    /// A zone with rules.
    Zone(Arc<Zone>),
    /// A dynamic abbreviation (`MSK`): its zone and upper-cased name.
    Dynamic(Arc<Zone>, String),
}

/// Resolves a zone name as PostgreSQL's `timestamptz_zone` does:
/// abbreviations first, then the zone database; `time zone "x" not
/// recognized` (22023).
pub fn zone_arg(name: &str) -> Result<ZoneArg> {
    let lower = name.to_ascii_lowercase();
    if let Some(z) = zone::dynamic_abbreviation(&lower) {
        return Ok(ZoneArg::Dynamic(z, name.to_ascii_uppercase()));
    }
    if let Some((east, _)) = zone::abbreviation(&lower) {
        return Ok(ZoneArg::Fixed(east));
    }
    zone::lookup(name)
        .map(ZoneArg::Zone)
        .ok_or_else(|| err!(InvalidParameterValue, "time zone \"{name}\" not recognized"))
}

/// `INTERVAL` zones of `AT TIME ZONE`: the offset of a time-only interval.
pub fn interval_zone(iv: &Interval) -> Result<ZoneArg> {
    if iv.months != 0 || iv.days != 0 {
        let mut shown = String::new();
        interval::write_interval(iv, &mut shown);
        return Err(err!(
            InvalidParameterValue,
            "interval time zone \"{shown}\" must not include months or days"
        ));
    }
    Ok(ZoneArg::Fixed((iv.micros / USECS_PER_SEC) as i32))
}

/// `timestamptz AT TIME ZONE zone`: the local time there, a `timestamp`.
pub fn timestamptz_at_zone(t: i64, z: &ZoneArg) -> Result<i64> {
    if !is_finite(t) {
        return Ok(t);
    }
    let east = match z {
        ZoneArg::Fixed(e) => *e,
        ZoneArg::Zone(z) => z.offset_at(t),
        ZoneArg::Dynamic(z, abbr) => z.abbrev_offset_at_ts(t, abbr),
    };
    let r = t + i64::from(east) * USECS_PER_SEC;
    if !in_range(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

/// `timestamp AT TIME ZONE zone`: the moment that local time is there, a
/// `timestamptz`.
pub fn timestamp_at_zone(t: i64, z: &ZoneArg) -> Result<i64> {
    if !is_finite(t) {
        return Ok(t);
    }
    let r = match z {
        ZoneArg::Fixed(e) => t - i64::from(*e) * USECS_PER_SEC,
        ZoneArg::Zone(z) => z.local_to_utc(t),
        ZoneArg::Dynamic(z, abbr) => {
            t - i64::from(z.abbrev_offset_of_local(t, abbr)) * USECS_PER_SEC
        }
    };
    if !in_range(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

/// `make_timestamptz(year, month, mday, hour, min, sec [, zone])`: the
/// local time in `zone` (the session's when `None`).
pub fn make_timestamptz(local: i64, z: Option<&ZoneArg>) -> Result<i64> {
    match z {
        Some(z) => timestamp_at_zone(local, z),
        None => timestamp_to_timestamptz(local),
    }
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 with `TimeZone` set to
    //! `America/Los_Angeles`.
    use super::*;

    fn in_la<R>(f: impl FnOnce() -> R) -> R {
        let before = zone::session_zone();
        zone::set_session_zone_name("America/Los_Angeles");
        let r = f();
        zone::set_session_zone(before);
        r
    }

    fn show(t: i64) -> String {
        let mut s = String::new();
        write_timestamptz(t, &mut s);
        s
    }

    #[test]
    fn input_and_output_in_the_session_zone() {
        in_la(|| {
            let p = |s: &str| show(parse_timestamptz_at(s, 0).unwrap());
            assert_eq!(p("1997-02-10 17:32:01"), "1997-02-10 17:32:01-08");
            assert_eq!(p("1997-06-10 17:32:01 -07:00"), "1997-06-10 17:32:01-07");
            assert_eq!(p("1997-02-10 17:32:01 EST"), "1997-02-10 14:32:01-08");
            assert_eq!(
                p("19970710 173201 America/New_York"),
                "1997-07-10 14:32:01-07"
            );
            assert_eq!(p("2000-03-15 08:14:01 GMT+8"), "2000-03-15 08:14:01-08");
            assert_eq!(p("epoch"), "1969-12-31 16:00:00-08");
            assert_eq!(p("1800-01-01 00:00"), "1800-01-01 00:00:00-07:52:58");
            let e = parse_timestamptz_at("1997-02-10 banana", 0).unwrap_err();
            assert_eq!(
                e.message,
                "invalid input syntax for type timestamp with time zone: \"1997-02-10 banana\""
            );
        });
    }

    #[test]
    fn days_added_across_dst_keep_the_wall_clock() {
        in_la(|| {
            let t = parse_timestamptz_at("2024-03-09 12:00", 0).unwrap();
            let day = Interval {
                months: 0,
                days: 1,
                micros: 0,
            };
            assert_eq!(
                show(timestamptz_add_interval(t, &day).unwrap()),
                "2024-03-10 12:00:00-07"
            );
            let hours = Interval {
                months: 0,
                days: 0,
                micros: 24 * USECS_PER_HOUR,
            };
            assert_eq!(
                show(timestamptz_add_interval(t, &hours).unwrap()),
                "2024-03-10 13:00:00-07"
            );
        });
    }
}
