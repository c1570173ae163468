//! `interval` text input and output (every `IntervalStyle`) and interval
//! arithmetic.
//!
//! Input is [`super::interval_in`]'s (PostgreSQL's `DecodeInterval` and
//! `DecodeISO8601Interval`); this module's entry points call it.
//!
//! Output: `1 year 2 mons 3 days 04:05:06`, `-00:00:01`, `00:00:00`,
//! `-1 days +00:00:01` (after a negative field a positive one carries `+`).
//! `sql_standard` (`1-2`, `3 4:05:06`, `+1-2 -3 +4:05:06`), `iso_8601`
//! (`P1Y2M3DT4H5M6S`) and `postgres_verbose` as PostgreSQL's `EncodeInterval`.

use super::{write_fraction, USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC};
use crate::err;
use crate::error::{Error, Result};
use crate::types::value::Interval;
use std::fmt::Write;

/// `interval out of range` (22008).
pub fn out_of_range() -> Error {
    err!(DatetimeFieldOverflow, "interval out of range")
}

/// Parses interval text (see the module doc).
pub fn parse_interval(text: &str) -> Result<Interval> {
    super::interval_in::interval_in(text, None)
}

pub use super::interval_in::Field;

/// `INTERVAL 'text' from TO to` as PostgreSQL: a number without a unit
/// counts in the last field (`INTERVAL '999' MONTH` is 999 months), and
/// the value is truncated below that field (`AdjustIntervalForTypmod`:
/// `INTERVAL '1 2:03:04' DAY TO MINUTE` drops the seconds); a precision
/// (`INTERVAL(2) '...'`, `SECOND(2)`) rounds the fraction of a second.
pub fn parse_interval_fields(
    text: &str,
    range: super::interval_in::Range,
    precision: Option<u32>,
) -> Result<Interval> {
    let mut iv = super::interval_in::interval_in(text, range)?;
    if let Some(p) = precision {
        super::interval_in::adjust_precision(&mut iv, p.min(6) as u8);
    }
    Ok(iv)
}

/// Appends an interval in the thread's `IntervalStyle` (see
/// [`super::style`]; `sql_standard` and `iso_8601` print as `postgres`).
pub fn write_interval(iv: &Interval, out: &mut String) {
    use super::style::IntervalOut;
    match super::style::output_style().interval {
        IntervalOut::Verbose => write_verbose(iv, out),
        IntervalOut::SqlStandard => write_sql_standard(iv, out),
        IntervalOut::Iso8601 => write_iso8601(iv, out),
        IntervalOut::Postgres => write_postgres(iv, out),
    }
}

/// An interval's parts as PostgreSQL's `interval2itm`: years, months,
/// days, hours, minutes, seconds, microseconds, each truncated toward
/// zero and carrying the sign of its field.
fn parts(iv: &Interval) -> [i64; 7] {
    let t = iv.micros;
    [
        (iv.months / 12) as i64,
        (iv.months % 12) as i64,
        iv.days as i64,
        t / USECS_PER_HOUR,
        t / USECS_PER_MINUTE % 60,
        t / USECS_PER_SEC % 60,
        t % USECS_PER_SEC,
    ]
}

/// Appends `|sec|` two digits wide, then `|fsec|` as a fraction.
fn append_seconds(sec: i64, fsec: i64, fill: bool, out: &mut String) {
    if fill {
        let _ = write!(out, "{:02}", sec.abs());
    } else {
        let _ = write!(out, "{}", sec.abs());
    }
    write_fraction(fsec.abs(), out);
}

/// `sql_standard` style as PostgreSQL's `EncodeInterval`: `1-2`,
/// `3 4:05:06`, `-1-2`, and `+1-2 -3 +4:05:06` when the signs are mixed
/// or years-months meet days-time.
fn write_sql_standard(iv: &Interval, out: &mut String) {
    let [mut year, mut mon, mut mday, mut hour, mut min, mut sec, mut fsec] = parts(iv);
    let all = [year, mon, mday, hour, min, sec, fsec];
    let has_negative = all.iter().any(|v| *v < 0);
    let has_positive = all.iter().any(|v| *v > 0);
    let has_year_month = year != 0 || mon != 0;
    let has_day_time = all[2..].iter().any(|v| *v != 0);
    let standard = !((has_negative && has_positive) || (has_year_month && has_day_time));
    if has_negative && standard {
        out.push('-');
        for v in [
            &mut year, &mut mon, &mut mday, &mut hour, &mut min, &mut sec, &mut fsec,
        ] {
            *v = -*v;
        }
    }
    if !has_negative && !has_positive {
        out.push('0');
    } else if !standard {
        let sign = |neg: bool| if neg { '-' } else { '+' };
        let _ = write!(
            out,
            "{}{}-{} {}{} {}{}:{:02}:",
            sign(year < 0 || mon < 0),
            year.abs(),
            mon.abs(),
            sign(mday < 0),
            mday.abs(),
            sign(hour < 0 || min < 0 || sec < 0 || fsec < 0),
            hour.abs(),
            min.abs()
        );
        append_seconds(sec, fsec, true, out);
    } else if has_year_month {
        let _ = write!(out, "{year}-{mon}");
    } else {
        if mday != 0 {
            let _ = write!(out, "{mday} ");
        }
        let _ = write!(out, "{hour}:{min:02}:");
        append_seconds(sec, fsec, true, out);
    }
}

/// `iso_8601` style: `P1Y2M3DT4H5M6.5S`, `PT0S` for zero.
fn write_iso8601(iv: &Interval, out: &mut String) {
    let [year, mon, mday, hour, min, sec, fsec] = parts(iv);
    if [year, mon, mday, hour, min, sec, fsec]
        .iter()
        .all(|v| *v == 0)
    {
        out.push_str("PT0S");
        return;
    }
    out.push('P');
    let part = |v: i64, c: char, out: &mut String| {
        if v != 0 {
            let _ = write!(out, "{v}{c}");
        }
    };
    part(year, 'Y', out);
    part(mon, 'M', out);
    part(mday, 'D', out);
    if hour != 0 || min != 0 || sec != 0 || fsec != 0 {
        out.push('T');
    }
    part(hour, 'H', out);
    part(min, 'M', out);
    if sec != 0 || fsec != 0 {
        if sec < 0 || fsec < 0 {
            out.push('-');
        }
        append_seconds(sec, fsec, false, out);
        out.push('S');
    }
}

/// `postgres_verbose` style as PostgreSQL's `EncodeInterval`: `@ 1 year 2
/// mons -3 days 4 hours 5 mins 6.5 secs`, or the same with every sign
/// flipped and ` ago` when the first non-zero field is negative.
fn write_verbose(iv: &Interval, out: &mut String) {
    out.push('@');
    let mut is_zero = true;
    let mut is_before = false;
    let mut part = |mut value: i64, unit: &str, out: &mut String| {
        if value == 0 {
            return;
        }
        if is_zero {
            is_before = value < 0;
            value = value.abs();
        } else if is_before {
            value = -value;
        }
        let s = if value == 1 { "" } else { "s" };
        let _ = write!(out, " {value} {unit}{s}");
        is_zero = false;
    };
    part((iv.months / 12) as i64, "year", out);
    part((iv.months % 12) as i64, "mon", out);
    part(iv.days as i64, "day", out);
    let t = iv.micros;
    part(t / USECS_PER_HOUR, "hour", out);
    part(t / USECS_PER_MINUTE % 60, "min", out);
    let sec = t / USECS_PER_SEC % 60;
    let fsec = t % USECS_PER_SEC;
    if sec != 0 || fsec != 0 {
        out.push(' ');
        if sec < 0 || (sec == 0 && fsec < 0) {
            if is_zero {
                is_before = true;
            } else if !is_before {
                out.push('-');
            }
        } else if is_before {
            out.push('-');
        }
        let _ = write!(out, "{}", sec.abs());
        super::write_fraction(fsec.abs(), out);
        let s = if sec.abs() != 1 || fsec != 0 { "s" } else { "" };
        let _ = write!(out, " sec{s}");
        is_zero = false;
    }
    if is_zero {
        out.push_str(" 0");
    }
    if is_before {
        out.push_str(" ago");
    }
}

/// `postgres` style: `1 year 2 mons 3 days 04:05:06`.
fn write_postgres(iv: &Interval, out: &mut String) {
    let mut is_zero = true;
    let mut is_before = false;
    let mut part = |value: i64, unit: &str, out: &mut String| {
        if value == 0 {
            return;
        }
        let sep = if is_zero { "" } else { " " };
        let plus = if is_before && value > 0 { "+" } else { "" };
        let s = if value != 1 { "s" } else { "" };
        let _ = write!(out, "{sep}{plus}{value} {unit}{s}");
        is_before = value < 0;
        is_zero = false;
    };
    part((iv.months / 12) as i64, "year", out);
    part((iv.months % 12) as i64, "mon", out);
    part(iv.days as i64, "day", out);
    let t = iv.micros;
    if is_zero || t != 0 {
        let sign = if t < 0 {
            "-"
        } else if is_before {
            "+"
        } else {
            ""
        };
        let a = t.unsigned_abs();
        let hours = a / USECS_PER_HOUR as u64;
        let mins = a / USECS_PER_MINUTE as u64 % 60;
        let secs = a / USECS_PER_SEC as u64 % 60;
        let sep = if is_zero { "" } else { " " };
        let _ = write!(out, "{sep}{sign}{hours:02}:{mins:02}:{secs:02}");
        write_fraction((a % USECS_PER_SEC as u64) as i64, out);
    }
}

/// `a + b` field by field; overflow is `interval out of range`.
pub fn add(a: &Interval, b: &Interval) -> Result<Interval> {
    Ok(Interval {
        months: a.months.checked_add(b.months).ok_or_else(out_of_range)?,
        days: a.days.checked_add(b.days).ok_or_else(out_of_range)?,
        micros: a.micros.checked_add(b.micros).ok_or_else(out_of_range)?,
    })
}

/// `-a`.
pub fn neg(a: &Interval) -> Result<Interval> {
    Ok(Interval {
        months: a.months.checked_neg().ok_or_else(out_of_range)?,
        days: a.days.checked_neg().ok_or_else(out_of_range)?,
        micros: a.micros.checked_neg().ok_or_else(out_of_range)?,
    })
}

/// `a - b`.
pub fn sub(a: &Interval, b: &Interval) -> Result<Interval> {
    add(a, &neg(b)?)
}

/// `a * factor` as PostgreSQL's `interval_mul`: fractional months spill
/// into days (30 per month) and fractional days into time.
pub fn mul(a: &Interval, factor: f64) -> Result<Interval> {
    scale(a, factor, false)
}

/// `a / divisor`; `division by zero` for 0.
pub fn div(a: &Interval, divisor: f64) -> Result<Interval> {
    if divisor == 0.0 {
        return Err(err!(DivisionByZero, "division by zero"));
    }
    scale(a, divisor, true)
}

/// Rounds seconds (or days) to microsecond precision, PostgreSQL's `TSROUND`.
fn tsround(x: f64) -> f64 {
    (x * 1e6).round_ties_even() / 1e6
}

/// PostgreSQL 15's `interval_mul` (`divide == false`) and `interval_div`:
/// whole months and days stay, fractions cascade down (a month is 30 days),
/// remainders are rounded to microseconds as PostgreSQL does.
fn scale(a: &Interval, f: f64, divide: bool) -> Result<Interval> {
    if f.is_nan() {
        return Err(out_of_range());
    }
    let apply = |x: f64| if divide { x / f } else { x * f };
    let months = apply(a.months as f64);
    let days = apply(a.days as f64);
    // FLOAT8_FITS_IN_INT32.
    let fits = |x: f64| (-2_147_483_648.0..2_147_483_648.0).contains(&x);
    if !fits(months) || !fits(days) {
        return Err(out_of_range());
    }
    let r_months = months as i32;
    let mut r_days = days as i32;
    let month_rem_days = tsround((months - r_months as f64) * 30.0);
    let mut sec_rem =
        tsround((days - r_days as f64 + month_rem_days - month_rem_days.trunc()) * 86_400.0);
    if sec_rem.abs() >= 86_400.0 {
        let whole = (sec_rem / 86_400.0).trunc();
        r_days += whole as i32;
        sec_rem -= whole * 86_400.0;
    }
    r_days = r_days
        .checked_add(month_rem_days.trunc() as i32)
        .ok_or_else(out_of_range)?;
    let micros = (apply(a.micros as f64) + sec_rem * USECS_PER_SEC as f64).round_ties_even();
    if micros.abs() >= 9.2e18 {
        return Err(out_of_range());
    }
    Ok(Interval {
        months: r_months,
        days: r_days,
        micros: micros as i64,
    })
}

/// `justify_hours`: whole 24-hour periods of the time become days; time
/// and days end with the same sign.
pub fn justify_hours(a: &Interval) -> Result<Interval> {
    let mut r = *a;
    let whole = r.micros / USECS_PER_DAY;
    r.micros -= whole * USECS_PER_DAY;
    r.days = i32::try_from(r.days as i64 + whole).map_err(|_| out_of_range())?;
    if r.days > 0 && r.micros < 0 {
        r.micros += USECS_PER_DAY;
        r.days -= 1;
    } else if r.days < 0 && r.micros > 0 {
        r.micros -= USECS_PER_DAY;
        r.days += 1;
    }
    Ok(r)
}

/// `justify_days`: whole 30-day periods become months; days and months end
/// with the same sign.
pub fn justify_days(a: &Interval) -> Result<Interval> {
    let mut r = *a;
    let whole = r.days / 30;
    r.days -= whole * 30;
    r.months = r.months.checked_add(whole).ok_or_else(out_of_range)?;
    if r.months > 0 && r.days < 0 {
        r.days += 30;
        r.months -= 1;
    } else if r.months < 0 && r.days > 0 {
        r.days -= 30;
        r.months += 1;
    }
    Ok(r)
}

/// `justify_interval`: both justifications, with every field ending with
/// one sign (PostgreSQL's order of steps).
pub fn justify_interval(a: &Interval) -> Result<Interval> {
    let mut r = *a;
    if (r.days > 0 && r.micros > 0) || (r.days < 0 && r.micros < 0) {
        let whole = r.days / 30;
        r.days -= whole * 30;
        r.months = r.months.checked_add(whole).ok_or_else(out_of_range)?;
    }
    let whole = r.micros / USECS_PER_DAY;
    r.micros -= whole * USECS_PER_DAY;
    r.days = i32::try_from(r.days as i64 + whole).map_err(|_| out_of_range())?;
    let whole = r.days / 30;
    r.days -= whole * 30;
    r.months = r.months.checked_add(whole).ok_or_else(out_of_range)?;
    if r.months > 0 && (r.days < 0 || (r.days == 0 && r.micros < 0)) {
        r.days += 30;
        r.months -= 1;
    } else if r.months < 0 && (r.days > 0 || (r.days == 0 && r.micros > 0)) {
        r.days -= 30;
        r.months += 1;
    }
    if r.days > 0 && r.micros < 0 {
        r.micros += USECS_PER_DAY;
        r.days -= 1;
    } else if r.days < 0 && r.micros > 0 {
        r.micros -= USECS_PER_DAY;
        r.days += 1;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 on this machine.
    use super::*;

    fn iv(s: &str) -> String {
        let mut out = String::new();
        write_interval(&parse_interval(s).unwrap(), &mut out);
        out
    }

    #[test]
    fn input_and_output_match_postgres() {
        let cases = [
            ("1 day 2 hours", "1 day 02:00:00"),
            ("1-2", "1 year 2 mons"),
            ("@ 1 minute ago", "-00:01:00"),
            ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
            ("02:03:04", "02:03:04"),
            (
                "1 year 2 mons 3 days 04:05:06",
                "1 year 2 mons 3 days 04:05:06",
            ),
            ("-1 second", "-00:00:01"),
            ("0", "00:00:00"),
            ("-1 day +1 second", "-1 days +00:00:01"),
            ("1 day -1 second", "1 day -00:00:01"),
            ("1.5 months", "1 mon 15 days"),
            ("1.5 days", "1 day 12:00:00"),
            ("10min", "00:10:00"),
            ("1 week", "7 days"),
            ("2 years", "2 years"),
            ("-2 mons", "-2 mons"),
            ("100 hours", "100:00:00"),
            ("1.25 seconds", "00:00:01.25"),
            ("5", "00:00:05"),
            ("1 decade", "10 years"),
            ("PT1H", "01:00:00"),
        ];
        for (input, want) in cases {
            assert_eq!(iv(input), want, "{input}");
        }
        for b in ["", "x", "1 fortnight", "P1X"] {
            let e = parse_interval(b).unwrap_err();
            assert_eq!(
                e.message,
                format!("invalid input syntax for type interval: \"{b}\"")
            );
        }
    }

    #[test]
    fn arithmetic() {
        let a = parse_interval("1 mon 1 day").unwrap();
        let mut s = String::new();
        write_interval(&mul(&a, 1.5).unwrap(), &mut s);
        assert_eq!(s, "1 mon 16 days 12:00:00");
        s.clear();
        write_interval(
            &div(&parse_interval("1 day").unwrap(), 3.0).unwrap(),
            &mut s,
        );
        assert_eq!(s, "08:00:00");
        assert_eq!(div(&a, 0.0).unwrap_err().message, "division by zero");
    }
}
