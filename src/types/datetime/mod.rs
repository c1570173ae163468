//! `date`, `timestamp` and `interval`: calendar arithmetic, text output in
//! PostgreSQL's ISO / `postgres` interval style, and (in [`parse`] and
//! [`interval`]) text input; `time` and `timetz` live in [`time`].
//!
//! Representations are PostgreSQL's: a date is days since 2000-01-01, a
//! timestamp microseconds since 2000-01-01 00:00:00, with the extreme
//! values standing for `-infinity` / `infinity`. Calendar conversion uses
//! Julian day numbers (`date2j` / `j2date`, proleptic Gregorian); years
//! `<= 0` are printed as `N BC` (year 0 is 1 BC). The valid range is
//! PostgreSQL's: dates from 4714-11-24 BC to 5874897 AD, timestamps to
//! 294276 AD; outside it input fails with `date out of range` /
//! `timestamp out of range` (22008).

pub mod arith;
pub mod construct;
mod decode;
pub mod interval;
pub mod interval_in;
pub mod parse;
pub mod style;
pub mod time;
pub mod to_char;
pub mod to_date;
pub mod tstz;
pub mod zone;

use std::fmt::Write;

/// Julian day number of 2000-01-01, PostgreSQL's epoch.
pub const POSTGRES_EPOCH_JDATE: i64 = 2_451_545;
/// Microseconds per second.
pub const USECS_PER_SEC: i64 = 1_000_000;
/// Microseconds per minute.
pub const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
/// Microseconds per hour.
pub const USECS_PER_HOUR: i64 = 60 * USECS_PER_MINUTE;
/// Microseconds per day.
pub const USECS_PER_DAY: i64 = 24 * USECS_PER_HOUR;
/// `date 'infinity'`.
pub const DATE_END: i32 = i32::MAX;
/// `date '-infinity'`.
pub const DATE_BEGIN: i32 = i32::MIN;
/// `timestamp 'infinity'`.
pub const TS_END: i64 = i64::MAX;
/// `timestamp '-infinity'`.
pub const TS_BEGIN: i64 = i64::MIN;
/// First valid timestamp (4714-11-24 00:00:00 BC), PostgreSQL's `MIN_TIMESTAMP`.
pub const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
/// One past the last valid timestamp (294277-01-01), PostgreSQL's `END_TIMESTAMP`.
pub const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;
/// First valid Julian day (4714-11-24 BC).
const JULIAN_MIN: i64 = 0;
/// Julian day after the last valid date (5874898-01-01).
const DATE_END_JULIAN: i64 = 2_147_483_494;
/// Julian day after the last valid timestamp (294277-01-01).
const TIMESTAMP_END_JULIAN: i64 = 109_203_528;

/// The fractional-second precision of `timestamp(p)`, checked as
/// PostgreSQL's `anytimestamp_typmod_check`: negative is an error, above 6
/// is reduced to 6.
pub fn timestamp_precision(p: i64, tz: bool) -> crate::Result<u8> {
    if p < 0 {
        let tz = if tz { " WITH TIME ZONE" } else { "" };
        return Err(crate::err!(
            InvalidParameterValue,
            "TIMESTAMP({p}){tz} precision must not be negative"
        ));
    }
    Ok(p.min(6) as u8)
}

/// A timestamp rounded to `p` fractional-second digits (PostgreSQL's
/// `AdjustTimestampForTypmod`: halves away from the epoch); infinities and
/// `None` pass through unchanged.
pub fn round_timestamp(t: i64, p: Option<u8>) -> crate::Result<i64> {
    let Some(p) = p else { return Ok(t) };
    if p >= 6 || t == TS_BEGIN || t == TS_END {
        return Ok(t);
    }
    let scale = 10_i64.pow(6 - p as u32);
    let offset = scale / 2;
    let r = if t >= 0 {
        (t + offset) / scale * scale
    } else {
        -((offset - t) / scale * scale)
    };
    // PostgreSQL 15 does not range-check the rounded value.
    Ok(r)
}

/// Julian day number of a proleptic Gregorian date (PostgreSQL's `date2j`).
pub fn date2j(year: i64, month: i64, day: i64) -> i64 {
    let (y, m) = if month > 2 {
        (year + 4800, month + 1)
    } else {
        (year + 4799, month + 13)
    };
    let century = y.div_euclid(100);
    let mut julian = y * 365 - 32167;
    julian += y.div_euclid(4) - century + century.div_euclid(4);
    julian + 7834 * m / 256 + day
}

/// Year, month, day of a Julian day number (PostgreSQL's `j2date`).
pub fn j2date(jd: i64) -> (i64, u32, u32) {
    let mut julian = jd + 32044;
    let mut quad = julian.div_euclid(146_097);
    let extra = (julian - quad * 146_097) * 4 + 3;
    julian += 60 + quad * 3 + extra.div_euclid(146_097);
    quad = julian.div_euclid(1461);
    julian -= quad * 1461;
    let mut y = julian * 4 / 1461;
    julian = if y != 0 {
        (julian + 305) % 365
    } else {
        (julian + 306) % 366
    } + 123;
    y += quad * 4;
    let year = y - 4800;
    let q = julian * 2141 / 65536;
    let day = julian - 7834 * q / 256;
    let month = (q + 10) % 12 + 1;
    (year, month as u32, day as u32)
}

/// Days in `month` of `year`.
pub fn days_in_month(year: i64, month: u32) -> u32 {
    const DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if month == 2 && is_leap(year) {
        29
    } else {
        DAYS[(month as usize - 1) % 12]
    }
}

/// Whether `year` (astronomical numbering: 0 is 1 BC) is a leap year.
pub fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// A date (days since 2000-01-01) from year, month, day, checked against
/// the valid range; `None` when out of range.
pub fn make_date(year: i64, month: u32, day: u32) -> Option<i32> {
    let j = date2j(year, month as i64, day as i64);
    if !(JULIAN_MIN..DATE_END_JULIAN).contains(&j) {
        return None;
    }
    Some((j - POSTGRES_EPOCH_JDATE) as i32)
}

/// Year, month, day of a finite date.
pub fn date_ymd(date: i32) -> (i64, u32, u32) {
    j2date(date as i64 + POSTGRES_EPOCH_JDATE)
}

/// A timestamp from a date and microseconds into the day; `None` when out
/// of range.
pub fn make_timestamp(date: i64, time_us: i64) -> Option<i64> {
    let j = date + POSTGRES_EPOCH_JDATE;
    if !(JULIAN_MIN..TIMESTAMP_END_JULIAN).contains(&j) {
        return None;
    }
    date.checked_mul(USECS_PER_DAY)?.checked_add(time_us)
}

/// Splits a finite timestamp into (days since 2000-01-01, microseconds of
/// the day).
pub fn split_timestamp(ts: i64) -> (i64, i64) {
    (ts.div_euclid(USECS_PER_DAY), ts.rem_euclid(USECS_PER_DAY))
}

/// `date -> timestamp` (midnight), keeping infinities; saturates instead of
/// failing, for comparisons.
pub fn date_to_timestamp_sat(d: i32) -> i64 {
    match d {
        DATE_BEGIN => TS_BEGIN,
        DATE_END => TS_END,
        d => (d as i64).saturating_mul(USECS_PER_DAY),
    }
}

/// Writes `YYYY-MM-DD` (year padded to 4 digits) and returns whether the
/// year is BC (the caller appends ` BC` after the time, as PostgreSQL does).
fn write_ymd(date: i64, out: &mut String) -> bool {
    let (y, m, d) = j2date(date + POSTGRES_EPOCH_JDATE);
    let bc = y <= 0;
    let year = if bc { 1 - y } else { y };
    let _ = write!(out, "{year:04}-{m:02}-{d:02}");
    bc
}

/// Appends a date in the thread's `DateStyle` ([`style`]): ISO
/// `1999-01-08`, Postgres `01-08-1999`, SQL `01/08/1999`, German
/// `08.01.1999`; `0044-03-15 BC`; `infinity`.
pub fn write_date(date: i32, out: &mut String) {
    match date {
        DATE_BEGIN => out.push_str("-infinity"),
        DATE_END => out.push_str("infinity"),
        d => {
            let st = style::output_style();
            let bc = if st.date == style::DateOut::Iso {
                write_ymd(d as i64, out)
            } else {
                write_dmy(d as i64, st, out)
            };
            if bc {
                out.push_str(" BC");
            }
        }
    }
}

/// Month and day in `DateStyle`'s non-ISO forms, then the year; true for BC.
fn write_dmy(date: i64, st: style::OutputStyle, out: &mut String) -> bool {
    let (y, m, d) = j2date(date + POSTGRES_EPOCH_JDATE);
    let bc = y <= 0;
    let year = if bc { 1 - y } else { y };
    let (sep, day_first) = match st.date {
        style::DateOut::Sql => ('/', st.day_first),
        style::DateOut::German => ('.', true),
        _ => ('-', st.day_first),
    };
    let (a, b) = if day_first { (d, m) } else { (m, d) };
    let _ = write!(out, "{a:02}{sep}{b:02}{sep}{year:04}");
    bc
}

/// PostgreSQL's abbreviated day and month names.
const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Appends `HH:MM:SS` plus a fraction without trailing zeros.
pub fn write_time(us: i64, out: &mut String) {
    let secs = us / USECS_PER_SEC;
    let frac = us % USECS_PER_SEC;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    write_fraction(frac, out);
}

/// Appends `.ffffff` without trailing zeros (nothing for zero).
pub fn write_fraction(frac_us: i64, out: &mut String) {
    if frac_us != 0 {
        let s = format!("{frac_us:06}");
        out.push('.');
        out.push_str(s.trim_end_matches('0'));
    }
}

/// Appends a timestamp in the thread's `DateStyle` ([`style`]): ISO
/// `1999-01-07 15:15:00.5`, Postgres `Thu Jan 07 15:15:00.5 1999`, SQL
/// `01/07/1999 15:15:00.5`, German `07.01.1999 15:15:00.5`.
pub fn write_timestamp(ts: i64, out: &mut String) {
    match ts {
        TS_BEGIN => out.push_str("-infinity"),
        TS_END => out.push_str("infinity"),
        ts => {
            let (date, time) = split_timestamp(ts);
            let st = style::output_style();
            let bc = match st.date {
                style::DateOut::Iso => {
                    let bc = write_ymd(date, out);
                    out.push(' ');
                    write_time(time, out);
                    bc
                }
                style::DateOut::Postgres => {
                    let jd = date + POSTGRES_EPOCH_JDATE;
                    let (y, m, d) = j2date(jd);
                    let wday = DAYS[(jd + 1).rem_euclid(7) as usize];
                    let month = MONTHS[(m as usize).saturating_sub(1).min(11)];
                    if st.day_first {
                        let _ = write!(out, "{wday} {d:02} {month} ");
                    } else {
                        let _ = write!(out, "{wday} {month} {d:02} ");
                    }
                    write_time(time, out);
                    let bc = y <= 0;
                    let year = if bc { 1 - y } else { y };
                    let _ = write!(out, " {year:04}");
                    bc
                }
                _ => {
                    let bc = write_dmy(date, st, out);
                    out.push(' ');
                    write_time(time, out);
                    bc
                }
            };
            if bc {
                out.push_str(" BC");
            }
        }
    }
}

/// The current time as a timestamp (microseconds since 2000-01-01, UTC),
/// from the system clock; `now()` and `'now'` input use it unless the
/// caller passes its own clock (see [`parse::parse_timestamp_at`]).
pub fn system_now() -> i64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    const UNIX_TO_PG_US: i64 = 946_684_800 * USECS_PER_SEC;
    let unix_us = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    };
    unix_us - UNIX_TO_PG_US
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 on this machine.
    use super::*;

    fn date(y: i64, m: u32, d: u32) -> String {
        let mut s = String::new();
        write_date(make_date(y, m, d).unwrap(), &mut s);
        s
    }

    #[test]
    fn calendar_round_trips() {
        assert_eq!(date2j(2000, 1, 1), POSTGRES_EPOCH_JDATE);
        assert_eq!(make_date(1970, 1, 1), Some(-10957));
        for j in (0..3_000_000).step_by(997) {
            let (y, m, d) = j2date(j);
            assert_eq!(date2j(y, m as i64, d as i64), j);
        }
        assert_eq!(date(1999, 1, 8), "1999-01-08");
        assert_eq!(date(-43, 3, 15), "0044-03-15 BC");
        assert_eq!(date(0, 12, 31), "0001-12-31 BC");
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
    }

    #[test]
    fn timestamps_print_iso() {
        let mut s = String::new();
        let d = make_date(1999, 1, 7).unwrap() as i64;
        write_timestamp(
            make_timestamp(d, 15 * USECS_PER_HOUR + 15 * USECS_PER_MINUTE).unwrap(),
            &mut s,
        );
        assert_eq!(s, "1999-01-07 15:15:00");
        s.clear();
        write_timestamp(make_timestamp(d, 500_000).unwrap(), &mut s);
        assert_eq!(s, "1999-01-07 00:00:00.5");
        s.clear();
        write_timestamp(-1, &mut s);
        assert_eq!(s, "1999-12-31 23:59:59.999999");
        s.clear();
        write_timestamp(TS_END, &mut s);
        assert_eq!(s, "infinity");
    }
}
