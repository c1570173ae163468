//! Date and timestamp arithmetic and field functions: `date ± int`,
//! `date - date`, `timestamp ± interval` (month arithmetic clamps to the end
//! of the month, as PostgreSQL), `timestamp - timestamp`, `date_part` /
//! `extract`, `date_trunc`.

use super::*;
use crate::err;
use crate::error::{Error, Result};
use crate::types::numeric::Numeric;
use crate::types::value::Interval;

/// `date out of range` (22008).
pub fn date_out_of_range() -> Error {
    err!(DatetimeFieldOverflow, "date out of range")
}

/// `timestamp out of range` (22008).
pub fn timestamp_out_of_range() -> Error {
    err!(DatetimeFieldOverflow, "timestamp out of range")
}

fn is_finite_date(d: i32) -> bool {
    d != DATE_BEGIN && d != DATE_END
}

fn is_finite_ts(t: i64) -> bool {
    t != TS_BEGIN && t != TS_END
}

/// `date + integer` (days).
pub fn date_add_days(d: i32, days: i64) -> Result<i32> {
    if !is_finite_date(d) {
        return Ok(d);
    }
    let r = d as i64 + days;
    let j = r + POSTGRES_EPOCH_JDATE;
    if !(JULIAN_MIN..DATE_END_JULIAN).contains(&j) {
        return Err(date_out_of_range());
    }
    Ok(r as i32)
}

/// `date - date` in days; infinite dates cannot be subtracted.
pub fn date_diff(a: i32, b: i32) -> Result<i32> {
    if !is_finite_date(a) || !is_finite_date(b) {
        return Err(err!(
            DatetimeFieldOverflow,
            "cannot subtract infinite dates"
        ));
    }
    Ok(a - b)
}

/// `date -> timestamp` (midnight).
pub fn date_to_timestamp(d: i32) -> Result<i64> {
    if !is_finite_date(d) {
        return Ok(date_to_timestamp_sat(d));
    }
    make_timestamp(d as i64, 0)
        .ok_or_else(|| err!(DatetimeFieldOverflow, "date out of range for timestamp"))
}

/// `timestamp -> date` (drops the time).
pub fn timestamp_to_date(t: i64) -> i32 {
    match t {
        TS_BEGIN => DATE_BEGIN,
        TS_END => DATE_END,
        t => split_timestamp(t).0 as i32,
    }
}

/// `timestamp + interval`: months first (day clamped to the month's
/// length), then days, then microseconds.
pub fn timestamp_add_interval(t: i64, iv: &Interval) -> Result<i64> {
    if !is_finite_ts(t) {
        return Ok(t);
    }
    let (mut date, time) = split_timestamp(t);
    if iv.months != 0 || iv.days != 0 {
        let (y, m, d) = j2date(date + POSTGRES_EPOCH_JDATE);
        let total = y * 12 + (m as i64 - 1) + iv.months as i64;
        let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
        let nd = d.min(days_in_month(ny, nm));
        date = date2j(ny, nm as i64, nd as i64) - POSTGRES_EPOCH_JDATE + iv.days as i64;
    }
    let base = make_timestamp(date, time).ok_or_else(timestamp_out_of_range)?;
    let r = base
        .checked_add(iv.micros)
        .ok_or_else(timestamp_out_of_range)?;
    let (d, _) = split_timestamp(r);
    make_timestamp(d, 0).ok_or_else(timestamp_out_of_range)?;
    Ok(r)
}

/// `timestamp - interval`.
pub fn timestamp_sub_interval(t: i64, iv: &Interval) -> Result<i64> {
    timestamp_add_interval(t, &interval::neg(iv)?)
}

/// `timestamp - timestamp`: whole days plus the remaining time (PostgreSQL
/// applies `justify_hours`).
pub fn timestamp_diff(a: i64, b: i64) -> Result<Interval> {
    if !is_finite_ts(a) || !is_finite_ts(b) {
        return Err(err!(
            DatetimeFieldOverflow,
            "cannot subtract infinite timestamps"
        ));
    }
    let diff = a.checked_sub(b).ok_or_else(interval::out_of_range)?;
    Ok(Interval {
        months: 0,
        days: (diff / USECS_PER_DAY) as i32,
        micros: diff % USECS_PER_DAY,
    })
}

/// `age(a, b)`: the symbolic difference in years, months and days plus
/// the time, as PostgreSQL's `timestamp_age` (borrowing a month's days
/// from the earlier value's month).
pub fn age(a: i64, b: i64) -> Result<Interval> {
    if !is_finite_ts(a) || !is_finite_ts(b) {
        return Err(timestamp_out_of_range());
    }
    let (t1, t2) = (tm(a), tm(b));
    let fields = |t: &Tm| {
        let s = t.time / USECS_PER_SEC;
        [
            t.year,
            t.month as i64 - 1,
            t.day as i64,
            s / 3600,
            s / 60 % 60,
            s % 60,
            t.time % USECS_PER_SEC,
        ]
    };
    let (f1, f2) = (fields(&t1), fields(&t2));
    let mut d: [i64; 7] = std::array::from_fn(|k| f1[k] - f2[k]);
    let flip = a < b;
    if flip {
        d.iter_mut().for_each(|v| *v = -*v);
    }
    // Borrow into each negative field from the next larger one.
    let [year, mon, mday, hour, min, sec, fsec] = &mut d;
    while *fsec < 0 {
        *fsec += USECS_PER_SEC;
        *sec -= 1;
    }
    while *sec < 0 {
        *sec += 60;
        *min -= 1;
    }
    while *min < 0 {
        *min += 60;
        *hour -= 1;
    }
    while *hour < 0 {
        *hour += 24;
        *mday -= 1;
    }
    while *mday < 0 {
        let t = if flip { &t1 } else { &t2 };
        *mday += i64::from(days_in_month(t.year, t.month));
        *mon -= 1;
    }
    while *mon < 0 {
        *mon += 12;
        *year -= 1;
    }
    if flip {
        d.iter_mut().for_each(|v| *v = -*v);
    }
    let [year, mon, mday, hour, min, sec, fsec] = d;
    let months = year * 12 + mon;
    let micros = ((hour * 60 + min) * 60 + sec) * USECS_PER_SEC + fsec;
    Ok(Interval {
        months: i32::try_from(months).map_err(|_| interval::out_of_range())?,
        days: mday as i32,
        micros,
    })
}

/// The broken-down fields of a finite timestamp.
struct Tm {
    year: i64,
    month: u32,
    day: u32,
    time: i64,
    date: i64,
}

fn tm(t: i64) -> Tm {
    let (date, time) = split_timestamp(t);
    let (year, month, day) = j2date(date + POSTGRES_EPOCH_JDATE);
    Tm {
        year,
        month,
        day,
        time,
        date,
    }
}

/// ISO 8601 week number and ISO year of a date (days since 2000-01-01).
fn iso_week(date: i64) -> (i64, i64) {
    let j = date + POSTGRES_EPOCH_JDATE;
    let isodow = (j + 1).rem_euclid(7); // 0 = Sunday
    let isodow = if isodow == 0 { 7 } else { isodow };
    // The Thursday of this week decides the ISO year.
    let thursday = j - isodow + 4;
    let (y, _, _) = j2date(thursday);
    let jan1 = date2j(y, 1, 1);
    ((thursday - jan1) / 7 + 1, y)
}

fn unit_error(field: &str, ty: &str) -> Error {
    err!(
        FeatureNotSupported,
        "unit \"{field}\" not supported for type {ty}"
    )
}

pub(super) fn unrecognized(field: &str, ty: &str) -> Error {
    err!(
        InvalidParameterValue,
        "unit \"{field}\" not recognized for type {ty}"
    )
}

/// Normalizes a field name (`'Year'`, `'years'`, `'y'`) to PostgreSQL's unit.
pub(super) fn unit(field: &str) -> String {
    let f = field.trim().to_ascii_lowercase();
    let u = match f.as_str() {
        "y" | "yr" | "yrs" | "year" | "years" => "year",
        "mon" | "mons" | "month" | "months" => "month",
        "d" | "day" | "days" => "day",
        "h" | "hr" | "hrs" | "hour" | "hours" => "hour",
        "m" | "min" | "mins" | "minute" | "minutes" => "minute",
        "s" | "sec" | "secs" | "second" | "seconds" => "second",
        "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => "milliseconds",
        "us" | "usec" | "usecs" | "microsecond" | "microseconds" => "microseconds",
        "w" | "week" | "weeks" => "week",
        "qtr" | "quarter" => "quarter",
        "dec" | "decs" | "decade" | "decades" => "decade",
        "c" | "cent" | "century" | "centuries" => "century",
        "mil" | "mils" | "millennium" | "millennia" => "millennium",
        other => other,
    };
    u.to_string()
}

/// `extract(field from timestamp)` as PostgreSQL 15's numeric result
/// (`second` and `epoch` carry 6 decimals, `milliseconds` 3).
/// Every unit `extract` knows for timestamps.
const TIMESTAMP_UNITS: [&str; 19] = [
    "microseconds",
    "milliseconds",
    "second",
    "minute",
    "hour",
    "day",
    "month",
    "quarter",
    "year",
    "decade",
    "century",
    "millennium",
    "dow",
    "isodow",
    "doy",
    "week",
    "isoyear",
    "epoch",
    "julian",
];

/// `extract(field from timestamp)`; `None` (SQL NULL) for fields of an
/// infinite timestamp that do not grow with time (`month`, `dow`, ...),
/// as PostgreSQL 15.
pub fn extract_timestamp_opt(field: &str, t: i64) -> Result<Option<Numeric>> {
    let u = unit(field);
    if !is_finite_ts(t) {
        return match u.as_str() {
            "epoch" | "year" | "decade" | "century" | "millennium" | "julian" | "isoyear" => {
                Ok(Some(Numeric::infinity(t == TS_BEGIN)))
            }
            u if TIMESTAMP_UNITS.contains(&u) => Ok(None),
            u if u.starts_with("timezone") => {
                Err(unit_error(&lower(field), "timestamp without time zone"))
            }
            _ => Err(unrecognized(&lower(field), "timestamp without time zone")),
        };
    }
    extract_timestamp(field, t).map(Some)
}

/// `extract(field from timestamp)` of a finite timestamp (see
/// [`extract_timestamp_opt`] for infinite ones, which this rejects).
pub fn extract_timestamp(field: &str, t: i64) -> Result<Numeric> {
    let u = unit(field);
    if !is_finite_ts(t) {
        return extract_timestamp_opt(&u, t)?.ok_or_else(|| {
            err!(
                FeatureNotSupported,
                "unit \"{u}\" of an infinite timestamp is NULL"
            )
        });
    }
    extract_tm(field, &u, &tm(t), i128::from(t))
}

/// The fields of a finite timestamp or date, broken down in `tm`, whose
/// value is `t` microseconds since 2000-01-01 (beyond `i64` for dates
/// past the timestamp range); `u` is `field` normalized.
fn extract_tm(field: &str, u: &str, tm: &Tm, t: i128) -> Result<Numeric> {
    let sec_us = tm.time % USECS_PER_MINUTE;
    let int = |v: i64| Ok(Numeric::from_i64(v));
    let scaled = |v: i64, scale: i32| {
        Numeric::from_i64(v).div_round(&Numeric::from_i64(10i64.pow(scale as u32)), scale)
    };
    match u {
        "microseconds" => int(sec_us),
        "milliseconds" => Ok(scaled(sec_us, 3)),
        "second" => Ok(scaled(sec_us, 6)),
        "minute" => int(tm.time / USECS_PER_MINUTE % 60),
        "hour" => int(tm.time / USECS_PER_HOUR),
        "day" => int(tm.day as i64),
        "month" => int(tm.month as i64),
        "quarter" => int((tm.month as i64 - 1) / 3 + 1),
        "year" => int(if tm.year > 0 { tm.year } else { tm.year - 1 }),
        "decade" => int(tm.year.div_euclid(10)),
        "century" => int(if tm.year > 0 {
            (tm.year + 99) / 100
        } else {
            -((99 - (tm.year - 1)) / 100)
        }),
        "millennium" => int(if tm.year > 0 {
            (tm.year + 999) / 1000
        } else {
            -((999 - (tm.year - 1)) / 1000)
        }),
        "dow" => int((tm.date + POSTGRES_EPOCH_JDATE + 1).rem_euclid(7)),
        "isodow" => {
            let d = (tm.date + POSTGRES_EPOCH_JDATE + 1).rem_euclid(7);
            int(if d == 0 { 7 } else { d })
        }
        "doy" => int(tm.date + POSTGRES_EPOCH_JDATE - date2j(tm.year, 1, 1) + 1),
        "week" => int(iso_week(tm.date).0),
        "isoyear" => {
            let y = iso_week(tm.date).1;
            int(if y > 0 { y } else { y - 1 })
        }
        // In 128 bits: near the upper bound the sum overflows 64.
        "epoch" => Ok(
            Numeric::from_i128(t + 946_684_800 * i128::from(USECS_PER_SEC))
                .div_round(&Numeric::from_i64(USECS_PER_SEC), 6),
        ),
        "julian" => {
            let j = Numeric::from_i64(tm.date + POSTGRES_EPOCH_JDATE);
            let frac = Numeric::from_i64(tm.time).div_round(&Numeric::from_i64(USECS_PER_DAY), 20);
            Ok(j.add(&frac))
        }
        "timezone" | "timezone_h" | "timezone_m" | "timezone_hour" | "timezone_minute" => {
            Err(unit_error(&lower(field), "timestamp without time zone"))
        }
        _ => Err(unrecognized(&lower(field), "timestamp without time zone")),
    }
}

/// `extract(field from date)`: integral fields only (PostgreSQL 15 rejects
/// time-of-day fields for dates).
pub fn extract_date(field: &str, d: i32) -> Result<Option<Numeric>> {
    let u = unit(field);
    let tz_unit = matches!(u.as_str(), "timezone" | "timezone_h" | "timezone_m");
    if !TIMESTAMP_UNITS.contains(&u.as_str()) && !tz_unit {
        return Err(unrecognized(&lower(field), "date"));
    }
    if matches!(
        u.as_str(),
        "hour" | "minute" | "second" | "milliseconds" | "microseconds"
    ) || tz_unit
    {
        return Err(unit_error(&lower(field), "date"));
    }
    if !is_finite_date(d) {
        return extract_timestamp_opt(field, date_to_timestamp_sat(d));
    }
    let date = i64::from(d);
    let (year, month, day) = j2date(date + POSTGRES_EPOCH_JDATE);
    let tm = Tm {
        year,
        month,
        day,
        time: 0,
        date,
    };
    // A date's Julian day is integral (a timestamp's has a fraction).
    if u == "julian" {
        return Ok(Some(Numeric::from_i64(date + POSTGRES_EPOCH_JDATE)));
    }
    let n = extract_tm(field, &u, &tm, i128::from(date) * i128::from(USECS_PER_DAY))?;
    Ok(Some(if u == "epoch" { n.round_scale(0) } else { n }))
}

/// `extract(field from interval)`.
pub fn extract_interval(field: &str, iv: &Interval) -> Result<Numeric> {
    let u = unit(field);
    let int = |v: i64| Ok(Numeric::from_i64(v));
    let sec_us = iv.micros % USECS_PER_MINUTE;
    let scaled = |v: i64, scale: i32| {
        Numeric::from_i64(v).div_round(&Numeric::from_i64(10i64.pow(scale as u32)), scale)
    };
    match u.as_str() {
        "microseconds" => int(sec_us),
        "milliseconds" => Ok(scaled(sec_us, 3)),
        "second" => Ok(scaled(sec_us, 6)),
        "minute" => int(iv.micros / USECS_PER_MINUTE % 60),
        "hour" => int(iv.micros / USECS_PER_HOUR),
        "day" => int(iv.days as i64),
        "month" => int((iv.months % 12) as i64),
        "quarter" => int((iv.months % 12 / 3 + 1) as i64),
        "year" => int((iv.months / 12) as i64),
        "decade" => int((iv.months / 120) as i64),
        "century" => int((iv.months / 1200) as i64),
        "millennium" => int((iv.months / 12000) as i64),
        "epoch" => {
            // 365.25 days per year, 30 per month, as PostgreSQL.
            let years = (iv.months / 12) as i64;
            let months = (iv.months % 12) as i64;
            let secs_us = years as i128 * 31_557_600_000_000
                + months as i128 * 30 * USECS_PER_DAY as i128
                + iv.days as i128 * USECS_PER_DAY as i128
                + iv.micros as i128;
            Ok(Numeric::from_i128(secs_us).div_round(&Numeric::from_i64(USECS_PER_SEC), 6))
        }
        // Units PostgreSQL knows (of intervals or of timestamps) that an
        // interval has no value for.
        "week" | "timezone" | "timezone_h" | "timezone_m" | "timezone_hour" | "timezone_minute"
        | "dow" | "isodow" | "doy" | "isoyear" | "julian" => {
            Err(unit_error(&lower(field), "interval"))
        }
        _ => Err(unrecognized(&lower(field), "interval")),
    }
}

/// A unit's name as PostgreSQL's messages show it: lower-cased as given.
fn lower(field: &str) -> String {
    field.to_lowercase()
}

/// `date_trunc(field, timestamp)`.
pub fn date_trunc(field: &str, t: i64) -> Result<i64> {
    let u = unit(field);
    if !is_finite_ts(t) {
        return Ok(t);
    }
    let tm = tm(t);
    let day_start = |y: i64, m: u32, d: u32| {
        make_timestamp(date2j(y, m as i64, d as i64) - POSTGRES_EPOCH_JDATE, 0)
            .ok_or_else(timestamp_out_of_range)
    };
    match u.as_str() {
        "microseconds" => Ok(t),
        "milliseconds" => Ok(t - t.rem_euclid(1000)),
        "second" => Ok(t - t.rem_euclid(USECS_PER_SEC)),
        "minute" => Ok(t - t.rem_euclid(USECS_PER_MINUTE)),
        "hour" => Ok(t - t.rem_euclid(USECS_PER_HOUR)),
        "day" => Ok(t - tm.time),
        "week" => {
            let j = tm.date + POSTGRES_EPOCH_JDATE;
            let isodow = (j + 1).rem_euclid(7);
            let back = if isodow == 0 { 6 } else { isodow - 1 };
            make_timestamp(tm.date - back, 0).ok_or_else(timestamp_out_of_range)
        }
        "month" => day_start(tm.year, tm.month, 1),
        "quarter" => day_start(tm.year, (tm.month - 1) / 3 * 3 + 1, 1),
        "year" => day_start(tm.year, 1, 1),
        "decade" => {
            let y = if tm.year > 0 {
                tm.year / 10 * 10
            } else {
                -((8 - (tm.year - 1)) / 10) * 10
            };
            day_start(y, 1, 1)
        }
        "century" => {
            let y = if tm.year > 0 {
                (tm.year + 99) / 100 * 100 - 99
            } else {
                -((99 - (tm.year - 1)) / 100) * 100 + 1
            };
            day_start(y, 1, 1)
        }
        "millennium" => {
            let y = if tm.year > 0 {
                (tm.year + 999) / 1000 * 1000 - 999
            } else {
                -((999 - (tm.year - 1)) / 1000) * 1000 + 1
            };
            day_start(y, 1, 1)
        }
        _ => Err(unrecognized(&lower(field), "timestamp without time zone")),
    }
}

/// `date_trunc(field, interval)`.
pub fn date_trunc_interval(field: &str, iv: &Interval) -> Result<Interval> {
    let u = unit(field);
    let mut r = *iv;
    match u.as_str() {
        "millennium" => {
            r = Interval {
                months: iv.months / 12000 * 12000,
                days: 0,
                micros: 0,
            }
        }
        "century" => {
            r = Interval {
                months: iv.months / 1200 * 1200,
                days: 0,
                micros: 0,
            }
        }
        "decade" => {
            r = Interval {
                months: iv.months / 120 * 120,
                days: 0,
                micros: 0,
            }
        }
        "year" => {
            r = Interval {
                months: iv.months / 12 * 12,
                days: 0,
                micros: 0,
            }
        }
        "quarter" => {
            r = Interval {
                months: iv.months / 3 * 3,
                days: 0,
                micros: 0,
            }
        }
        "month" => {
            r = Interval {
                months: iv.months,
                days: 0,
                micros: 0,
            }
        }
        "day" => r.micros = 0,
        "hour" => r.micros -= iv.micros % USECS_PER_HOUR,
        "minute" => r.micros -= iv.micros % USECS_PER_MINUTE,
        "second" => r.micros -= iv.micros % USECS_PER_SEC,
        "milliseconds" => r.micros -= iv.micros % 1000,
        "microseconds" => {}
        // Interval units (only these: not those of timestamps) with no
        // meaning for truncation.
        "week" => {
            return Err(unit_error(&lower(field), "interval")
                .with_detail("Months usually have fractional weeks."))
        }
        "timezone" | "timezone_h" | "timezone_m" => {
            return Err(unit_error(&lower(field), "interval"))
        }
        _ => return Err(unrecognized(&lower(field), "interval")),
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 on this machine.
    use super::*;
    use crate::types::datetime::parse::{parse_date_at, parse_timestamp_at};

    fn ts(s: &str) -> i64 {
        parse_timestamp_at(s, 0).unwrap()
    }

    fn show(t: i64) -> String {
        let mut s = String::new();
        write_timestamp(t, &mut s);
        s
    }

    #[test]
    fn timestamp_interval_arithmetic() {
        let iv = interval::parse_interval("1 month").unwrap();
        assert_eq!(
            show(timestamp_add_interval(ts("2000-01-31"), &iv).unwrap()),
            "2000-02-29 00:00:00"
        );
        let iv = interval::parse_interval("1 day 1 hour").unwrap();
        assert_eq!(
            show(timestamp_sub_interval(ts("2000-03-01"), &iv).unwrap()),
            "2000-02-28 23:00:00"
        );
        let d = timestamp_diff(ts("2000-03-01 12:00"), ts("2000-02-28")).unwrap();
        let mut s = String::new();
        interval::write_interval(&d, &mut s);
        assert_eq!(s, "2 days 12:00:00");
        let a = parse_date_at("2000-03-01", 0).unwrap();
        let b = parse_date_at("2000-02-01", 0).unwrap();
        assert_eq!(date_diff(a, b).unwrap(), 29);
        let mut s = String::new();
        write_date(date_add_days(a, -1).unwrap(), &mut s);
        assert_eq!(s, "2000-02-29");
    }

    #[test]
    fn fields_and_truncation() {
        let t = ts("2001-02-16 20:38:40.5");
        let f = |u: &str| extract_timestamp(u, t).unwrap().to_string();
        assert_eq!(f("year"), "2001");
        assert_eq!(f("month"), "2");
        assert_eq!(f("day"), "16");
        assert_eq!(f("hour"), "20");
        assert_eq!(f("minute"), "38");
        assert_eq!(f("second"), "40.500000");
        assert_eq!(f("milliseconds"), "40500.000");
        assert_eq!(f("dow"), "5");
        assert_eq!(f("doy"), "47");
        assert_eq!(f("week"), "7");
        assert_eq!(f("quarter"), "1");
        assert_eq!(f("century"), "21");
        assert_eq!(f("epoch"), "982355920.500000");
        assert_eq!(show(date_trunc("hour", t).unwrap()), "2001-02-16 20:00:00");
        assert_eq!(show(date_trunc("week", t).unwrap()), "2001-02-12 00:00:00");
        assert_eq!(
            show(date_trunc("quarter", t).unwrap()),
            "2001-01-01 00:00:00"
        );
        assert_eq!(
            show(date_trunc("century", t).unwrap()),
            "2001-01-01 00:00:00"
        );
        let e = date_trunc("fortnight", t).unwrap_err();
        assert_eq!(
            e.message,
            "unit \"fortnight\" not recognized for type timestamp without time zone"
        );
        let iv = interval::parse_interval("1 year 2 mons 3 days 04:05:06.5").unwrap();
        assert_eq!(
            extract_interval("epoch", &iv).unwrap().to_string(),
            "37015506.500000"
        );
        assert_eq!(extract_interval("month", &iv).unwrap().to_string(), "2");
        let d = parse_date_at("2001-02-16", 0).unwrap();
        assert_eq!(
            extract_date("epoch", d).unwrap().unwrap().to_string(),
            "982281600"
        );
        assert_eq!(
            extract_date("hour", d).unwrap_err().message,
            "unit \"hour\" not supported for type date"
        );
    }
}
