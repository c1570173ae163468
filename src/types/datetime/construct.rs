//! Date/time construction and binning: `make_date`, `make_timestamp`,
//! `date_bin`, `isfinite`, ported from PostgreSQL's `date.c` and
//! `timestamp.c` with their checks and messages (`date field value out of
//! range: 2013-02-30`, `stride must be greater than zero`, ...).

use super::*;
use crate::err;
use crate::error::Result;
use crate::types::value::Interval;

/// `ValidateDate` for all three fields given, the year astronomical
/// ([`astronomical`]): no year zero, month 1 to 12, day within the month.
fn valid_ymd(year: i64, month: i64, day: i64) -> bool {
    year != i64::MIN
        && (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && day <= i64::from(days_in_month(year, month as u32))
}

/// A `make_date` year in astronomical numbering: a negative year is BC
/// (-1 is 0); year 0 does not exist and maps to `i64::MIN`.
fn astronomical(year: i64) -> i64 {
    match year {
        0 => i64::MIN,
        y if y < 0 => y + 1,
        y => y,
    }
}

/// `IS_VALID_JULIAN`: on or after 4714-11-24 BC and before 5874898.
fn valid_julian(y: i64, m: i64, d: i64) -> bool {
    (y > -4713 || (y == -4713 && (m > 11 || (m == 11 && d >= 24)))) && y < 5_874_898
}

/// `make_date(year, month, day)`; a negative year is BC, and the day is
/// checked against that year's calendar (1 BC is a leap year) and shown
/// in the messages in astronomical numbering (year 0 is 1 BC), as
/// PostgreSQL's.
pub fn make_date(year: i64, month: i64, day: i64) -> Result<i32> {
    let y = astronomical(year);
    let shown = || format!("{}-{month:02}-{day:02}", if year == 0 { 0 } else { y });
    if !valid_ymd(y, month, day) {
        return Err(err!(
            DatetimeFieldOverflow,
            "date field value out of range: {}",
            shown()
        ));
    }
    let out_of_range = || err!(DatetimeFieldOverflow, "date out of range: {}", shown());
    if !valid_julian(y, month, day) {
        return Err(out_of_range());
    }
    let date = date2j(y, month, day) - POSTGRES_EPOCH_JDATE;
    if !(JULIAN_MIN..DATE_END_JULIAN).contains(&(date + POSTGRES_EPOCH_JDATE)) {
        return Err(out_of_range());
    }
    Ok(date as i32)
}

/// C's `%g` (six significant digits, trailing zeros dropped), zero-padded
/// to two characters as `%02g`.
fn g2(v: f64) -> String {
    let mut s = if v == 0.0 {
        "0".to_string()
    } else {
        let exp = v.abs().log10().floor() as i32;
        if (-4..6).contains(&exp) {
            let decimals = (5 - exp).max(0) as usize;
            let t = format!("{v:.decimals$}");
            if t.contains('.') {
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                t
            }
        } else {
            format!("{v:e}")
        }
    };
    if s.len() < 2 {
        s.insert(0, '0');
    }
    s
}

/// `make_timestamp(year, month, mday, hour, min, sec)`; a negative year
/// is BC.
pub fn make_timestamp(
    year: i64,
    month: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: f64,
) -> Result<i64> {
    let date_shown = || format!("{year}-{month:02}-{mday:02}");
    if !valid_ymd(astronomical(year), month, mday) {
        return Err(err!(
            DatetimeFieldOverflow,
            "date field value out of range: {}",
            date_shown()
        ));
    }
    let year = astronomical(year);
    if !valid_julian(year, month, mday) {
        return Err(err!(
            DatetimeFieldOverflow,
            "date out of range: {}",
            date_shown()
        ));
    }
    let date = date2j(year, month, mday) - POSTGRES_EPOCH_JDATE;
    let time_shown = || format!("{hour}:{min:02}:{}", g2(sec));
    let whole = ((hour * 60 + min) * 60) as f64 * 1e6;
    if !(0..=24).contains(&hour)
        || !(0..=59).contains(&min)
        || !(0.0..=60.0).contains(&sec)
        || sec.is_nan()
        || whole + (sec * 1e6).round_ties_even() > USECS_PER_DAY as f64
    {
        return Err(err!(
            DatetimeFieldOverflow,
            "time field value out of range: {}",
            time_shown()
        ));
    }
    let time = ((hour * 60 + min) * 60) * USECS_PER_SEC + (sec * 1e6).round_ties_even() as i64;
    let bad = || {
        err!(
            DatetimeFieldOverflow,
            "timestamp out of range: {} {}",
            date_shown(),
            time_shown()
        )
    };
    let result = date.checked_mul(USECS_PER_DAY).ok_or_else(bad)? + time;
    if (result < 0 && date > 0) || (result > 0 && date < -1) {
        return Err(bad());
    }
    if !(MIN_TIMESTAMP..END_TIMESTAMP).contains(&result) {
        return Err(bad());
    }
    Ok(result)
}

/// `date_bin(stride, source, origin)`: the start of the stride-wide bin,
/// counted from `origin`, that holds `source` (PostgreSQL's
/// `timestamp_bin`).
pub fn date_bin(stride: &Interval, t: i64, origin: i64) -> Result<i64> {
    if t == TS_BEGIN || t == TS_END {
        return Ok(t);
    }
    if origin == TS_BEGIN || origin == TS_END {
        return Err(err!(DatetimeFieldOverflow, "origin out of range"));
    }
    if stride.months != 0 {
        return Err(err!(
            FeatureNotSupported,
            "timestamps cannot be binned into intervals containing months or years"
        ));
    }
    let interval_range = || err!(DatetimeFieldOverflow, "interval out of range");
    let stride_us = i64::from(stride.days)
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(stride.micros))
        .ok_or_else(interval_range)?;
    if stride_us <= 0 {
        return Err(err!(
            DatetimeFieldOverflow,
            "stride must be greater than zero"
        ));
    }
    let diff = t.checked_sub(origin).ok_or_else(interval_range)?;
    let modulo = diff % stride_us;
    let mut result = origin + (diff - modulo);
    if modulo < 0 {
        result = result
            .checked_sub(stride_us)
            .filter(|r| (MIN_TIMESTAMP..END_TIMESTAMP).contains(r))
            .ok_or_else(|| err!(DatetimeFieldOverflow, "timestamp out of range"))?;
    }
    Ok(result)
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)` as
/// PostgreSQL 15: `parts` are the six integer arguments, combined with
/// wrapping arithmetic as PostgreSQL 15 does; an infinite or NaN `secs`,
/// or one beyond the microsecond range, is `interval out of range` (22008).
pub fn make_interval(parts: [i64; 6], secs: f64) -> Result<Interval> {
    let [years, months, weeks, days, hours, mins] = parts.map(|p| p as i32);
    let us = (secs * USECS_PER_SEC as f64).round_ties_even();
    if !us.is_finite() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&us) {
        return Err(super::interval::out_of_range());
    }
    Ok(Interval {
        months: years.wrapping_mul(12).wrapping_add(months),
        days: weeks.wrapping_mul(7).wrapping_add(days),
        micros: (hours as i64)
            .wrapping_mul(USECS_PER_HOUR)
            .wrapping_add((mins as i64).wrapping_mul(USECS_PER_MINUTE))
            .wrapping_add(us as i64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_postgresql() {
        assert_eq!(
            make_date(2013, 2, 30).unwrap_err().message,
            "date field value out of range: 2013-02-30"
        );
        assert_eq!(
            make_date(2013, 11, -1).unwrap_err().message,
            "date field value out of range: 2013-11--1"
        );
        assert_eq!(make_date(-44, 3, 15).unwrap(), make_date_ymd(-43, 3, 15));
        assert_eq!(
            make_timestamp(2014, 12, 28, 6, 30, 45.887).unwrap(),
            make_date_ymd(2014, 12, 28) as i64 * USECS_PER_DAY + 23_445_887_000
        );
        assert_eq!(g2(100.1), "100.1");
        assert_eq!(g2(2.1), "2.1");
        assert_eq!(g2(5.0), "05");
    }

    fn make_date_ymd(y: i64, m: i64, d: i64) -> i32 {
        (date2j(y, m, d) - POSTGRES_EPOCH_JDATE) as i32
    }
}
