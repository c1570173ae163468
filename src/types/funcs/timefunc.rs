//! Date/time functions that resolve themselves: `overlaps` (the SQL
//! `(a, b) OVERLAPS (c, d)`, with PostgreSQL's NULL and reversed-range
//! rules), `clock_timestamp()`, `timeofday()`, `to_timestamp(text,
//! template)` and `timestamptz(date, time | timetz)`.
//!
//! `overlaps` is not strict: a NULL end point makes its range open on that
//! side, and the answer is NULL only where the ranges' known ends cannot
//! decide it (PostgreSQL's `overlaps_timestamp`). `clock_timestamp()` and
//! `timeofday()` read the system clock at each call.

use std::cmp::Ordering;

use super::{bad_arg_named, no_function, Resolved, ScalarFunc};
use crate::error::Result;
use crate::types::compare::compare;
use crate::types::datatype::DataType;
use crate::types::datetime::{self, time, to_date, tstz};
use crate::types::ops::eval_binary;
use crate::types::value::Value;

/// A date/time function of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeFunc {
    /// `overlaps(start1, end1 | length1, start2, end2 | length2)`.
    Overlaps,
    /// `clock_timestamp()`: the time at the call.
    ClockTimestamp,
    /// `timeofday()`: the time at the call as text.
    TimeOfDay,
    /// `to_timestamp(text, template)`.
    ToTimestampFormat,
    /// `timestamptz(date, time | timetz)`.
    TimestampTzOf,
}

impl TimeFunc {
    /// The function of a name.
    pub fn from_name(name: &str) -> Option<TimeFunc> {
        Some(match name {
            "overlaps" => TimeFunc::Overlaps,
            "clock_timestamp" => TimeFunc::ClockTimestamp,
            "timeofday" => TimeFunc::TimeOfDay,
            "timestamptz" => TimeFunc::TimestampTzOf,
            _ => return None,
        })
    }

    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            TimeFunc::Overlaps => "overlaps",
            TimeFunc::ClockTimestamp => "clock_timestamp",
            TimeFunc::TimeOfDay => "timeofday",
            TimeFunc::ToTimestampFormat => "to_timestamp",
            TimeFunc::TimestampTzOf => "timestamptz",
        }
    }

    /// Argument and result types.
    pub fn resolve(self, args: &[DataType]) -> Result<Resolved> {
        let ok = |arg_types: Vec<DataType>, result: DataType| {
            Ok(Resolved {
                func: ScalarFunc::TimeFn(self),
                arg_types,
                result,
            })
        };
        match (self, args) {
            (TimeFunc::ClockTimestamp, []) => ok(vec![], DataType::TimestampTz(None)),
            (TimeFunc::TimeOfDay, []) => ok(vec![], DataType::Text),
            (TimeFunc::ToTimestampFormat, [_, _]) => ok(
                vec![DataType::Text, DataType::Text],
                DataType::TimestampTz(None),
            ),
            (TimeFunc::TimestampTzOf, [DataType::Date | DataType::Unknown, t]) => {
                let t = match t {
                    DataType::Time(_) => DataType::Time(None),
                    DataType::TimeTz(_) | DataType::Unknown => DataType::TimeTz(None),
                    _ => return Err(no_function(self.name(), args)),
                };
                ok(vec![DataType::Date, t], DataType::TimestampTz(None))
            }
            (TimeFunc::Overlaps, [a, b, c, d]) => match overlaps_types([a, b, c, d]) {
                Some(types) => ok(types, DataType::Bool),
                // The grammar calls it by its qualified name, as PostgreSQL's.
                None => Err(no_function("pg_catalog.overlaps", args)),
            },
            _ => Err(no_function(self.name(), args)),
        }
    }

    /// Evaluates the function; NULL arguments reach it (see the module doc).
    pub fn eval(self, args: &[Value]) -> Result<Value> {
        match self {
            TimeFunc::ClockTimestamp => Ok(Value::TimestampTz(datetime::system_now())),
            TimeFunc::TimeOfDay => Ok(Value::text(&time_of_day(datetime::system_now()))),
            TimeFunc::ToTimestampFormat => match args {
                [Value::Null, _] | [_, Value::Null] => Ok(Value::Null),
                [Value::Text(t), Value::Text(f)] => {
                    Ok(Value::TimestampTz(to_date::to_timestamp(t, f)?))
                }
                _ => Err(bad_arg_named(self.name())),
            },
            TimeFunc::TimestampTzOf => match args {
                [Value::Null, _] | [_, Value::Null] => Ok(Value::Null),
                [Value::Date(d), Value::Time(t)] => {
                    let local = time::date_add_time(*d, *t)?;
                    Ok(Value::TimestampTz(tstz::timestamp_to_timestamptz(local)?))
                }
                [Value::Date(d), Value::TimeTz(t, east)] => {
                    Ok(Value::TimestampTz(time::date_add_timetz(*d, *t, *east)?))
                }
                _ => Err(bad_arg_named(self.name())),
            },
            TimeFunc::Overlaps => match args {
                [a, b, c, d] => overlaps(a, b, c, d),
                _ => Err(bad_arg_named(self.name())),
            },
        }
    }
}

/// The types `overlaps`' four arguments are cast to: one date/time type for
/// the starts (and ends), `interval` where an end is a length.
fn overlaps_types(args: [&DataType; 4]) -> Option<Vec<DataType>> {
    use DataType::*;
    let mut base: Option<DataType> = None;
    for (i, t) in args.iter().enumerate() {
        let t = (*t).without_typmod();
        if i % 2 == 1 && t == Interval {
            continue;
        }
        let t = match t {
            Unknown => continue,
            Date => Timestamp(None),
            t @ (Timestamp(_) | TimestampTz(_) | Time(_) | TimeTz(_)) => t,
            _ => return None,
        };
        base = Some(match base {
            None => t,
            Some(b) => crate::types::cast::common_type(&b, &t)?,
        });
    }
    let base = base?;
    Some(
        args.iter()
            .enumerate()
            .map(|(i, t)| {
                if i % 2 == 1 && **t == Interval {
                    Interval
                } else {
                    base
                }
            })
            .collect(),
    )
}

/// A range's end: the start plus a length, or the end given.
fn range_end(start: &Value, end: &Value) -> Result<Value> {
    match end {
        Value::Interval(_) if start.is_null() => Ok(Value::Null),
        Value::Interval(_) => eval_binary(crate::types::ops::BinaryOp::Add, start, end),
        other => Ok(other.clone()),
    }
}

/// A range's lower end first, a NULL start replaced by the end (which is
/// then unknown); `None` when both are NULL.
fn ordered(start: Value, end: Value) -> Option<(Value, Value)> {
    match (start.is_null(), end.is_null()) {
        (true, true) => None,
        (true, false) => Some((end, Value::Null)),
        (false, true) => Some((start, Value::Null)),
        (false, false) if compare(&start, &end) == Ordering::Greater => Some((end, start)),
        (false, false) => Some((start, end)),
    }
}

/// PostgreSQL's `overlaps_timestamp` (and its `time`, `timetz` twins).
fn overlaps(s1: &Value, e1: &Value, s2: &Value, e2: &Value) -> Result<Value> {
    let e1 = range_end(s1, e1)?;
    let e2 = range_end(s2, e2)?;
    let Some((s1, e1)) = ordered(s1.clone(), e1) else {
        return Ok(Value::Null);
    };
    let Some((s2, e2)) = ordered(s2.clone(), e2) else {
        return Ok(Value::Null);
    };
    let lt = |a: &Value, b: &Value| compare(a, b) == Ordering::Less;
    // Which range starts later decides which end must be passed.
    let (later, later_end, earlier_end) = match compare(&s1, &s2) {
        Ordering::Equal => {
            return Ok(if e1.is_null() || e2.is_null() {
                Value::Null
            } else {
                Value::Bool(true)
            })
        }
        Ordering::Greater => (&s1, &e1, &e2),
        Ordering::Less => (&s2, &e2, &e1),
    };
    if earlier_end.is_null() {
        return Ok(Value::Null);
    }
    if lt(later, earlier_end) {
        return Ok(Value::Bool(true));
    }
    if later_end.is_null() {
        return Ok(Value::Null);
    }
    Ok(Value::Bool(false))
}

/// `timeofday()`'s text: `Fri Dec 04 23:30:00.123456 2026 UTC`, in the
/// session's zone.
fn time_of_day(now: i64) -> String {
    use std::fmt::Write;
    let (east, abbrev) = datetime::zone::with_session_zone(|z| {
        let (east, _, abbrev) = z.at(now);
        (east, abbrev.to_string())
    });
    let local = now + i64::from(east) * datetime::USECS_PER_SEC;
    let (date, time) = datetime::split_timestamp(local);
    let jd = date + datetime::POSTGRES_EPOCH_JDATE;
    let (y, m, d) = datetime::j2date(jd);
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = time / datetime::USECS_PER_SEC;
    let mut s = String::new();
    let _ = write!(
        s,
        "{} {} {d:02} {:02}:{:02}:{:02}.{:06} {y} {abbrev}",
        DAYS[(jd + 1).rem_euclid(7) as usize],
        MONTHS[(m as usize).saturating_sub(1).min(11)],
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        time % datetime::USECS_PER_SEC,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Value {
        Value::Timestamp(datetime::parse::parse_timestamp_at(s, 0).unwrap())
    }

    #[test]
    fn overlaps_follows_postgres_null_rules() {
        let (a, b, c, d) = (
            ts("2000-01-01"),
            ts("2000-01-10"),
            ts("2000-01-05"),
            ts("2000-01-20"),
        );
        let o = |w: &Value, x: &Value, y: &Value, z: &Value| overlaps(w, x, y, z).unwrap();
        assert_eq!(o(&a, &b, &c, &d), Value::Bool(true));
        assert_eq!(o(&b, &a, &d, &c), Value::Bool(true), "reversed ranges");
        assert_eq!(o(&a, &c, &c, &d), Value::Bool(false), "touching ends");
        assert_eq!(o(&a, &a, &a, &a), Value::Bool(true), "equal starts");
        assert_eq!(o(&a, &Value::Null, &c, &d), Value::Null);
        assert_eq!(o(&c, &Value::Null, &a, &d), Value::Bool(true));
        assert_eq!(o(&Value::Null, &Value::Null, &a, &d), Value::Null);
    }
}
