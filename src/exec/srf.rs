//! Set-returning functions in FROM whose arguments are known only when the
//! plan runs ([`TableFunc::Call`]: a lateral reference, a column of an
//! enclosing query): the arguments, by then constants, are evaluated and
//! the call becomes the rows (or the series) the planner makes of a
//! constant call.
//!
//! Invariants: every function is strict (a NULL argument gives no row, as
//! in PostgreSQL); errors are PostgreSQL 15's (`step size cannot equal
//! zero`, the JSON functions' 22023 errors).

use std::borrow::Cow;

use crate::err;
use crate::error::Result;
use crate::nodes::{Srf, TableFunc};
use crate::types::{BinaryOp, DataType, Value};

/// `func` ready to run: a [`TableFunc::Call`] evaluated, anything else as
/// it is.
pub fn resolve(func: &TableFunc) -> Result<Cow<'_, TableFunc>> {
    let TableFunc::Call { srf, args } = func else {
        return Ok(Cow::Borrowed(func));
    };
    let values = args
        .iter()
        .map(super::eval_const)
        .collect::<Result<Vec<_>>>()?;
    Ok(Cow::Owned(expand(srf, &values)?))
}

/// The rows of `srf` over the argument values `vals`.
pub fn expand(srf: &Srf, vals: &[Value]) -> Result<TableFunc> {
    let none = || TableFunc::Rows(Vec::new());
    if let Srf::User(u) = srf {
        // Its own strictness decides what a NULL argument does.
        return Ok(TableFunc::Rows(crate::types::funcs::user::call_set(
            &u.body, vals,
        )?));
    }
    if vals.iter().any(Value::is_null) {
        return Ok(none());
    }
    Ok(match srf {
        Srf::SeriesInt => {
            let get = |i: usize| vals.get(i).and_then(Value::as_i64);
            let step = get(2).unwrap_or(1);
            if step == 0 {
                return Err(err!(InvalidParameterValue, "step size cannot equal zero"));
            }
            TableFunc::SeriesInt {
                start: get(0).unwrap_or(0),
                stop: get(1).unwrap_or(0),
                step,
            }
        }
        Srf::SeriesNumeric => TableFunc::Rows(numeric_series(vals)?),
        Srf::SeriesTimestamp { tz } => match vals {
            [Value::Timestamp(a) | Value::TimestampTz(a), Value::Timestamp(b) | Value::TimestampTz(b), Value::Interval(s)] =>
            {
                if s.months == 0 && s.days == 0 && s.micros == 0 {
                    return Err(err!(InvalidParameterValue, "step size cannot equal zero"));
                }
                TableFunc::SeriesTimestamp {
                    start: *a,
                    stop: *b,
                    step: *s,
                    tz: *tz,
                }
            }
            _ => none(),
        },
        Srf::Unnest => match vals.first() {
            Some(Value::Array(arr)) => {
                TableFunc::Rows(arr.items.iter().map(|v| vec![v.clone()]).collect())
            }
            _ => none(),
        },
        Srf::StringToTable => {
            use crate::types::array_funcs::ArrayFunc;
            match ArrayFunc::StringToArray.eval(vals)? {
                Value::Array(arr) => {
                    TableFunc::Rows(arr.items.iter().map(|v| vec![v.clone()]).collect())
                }
                _ => none(),
            }
        }
        Srf::Regexp(split) => {
            TableFunc::Rows(crate::types::funcs::regexp_match::srf_rows(*split, vals)?)
        }
        Srf::Json(f, jsonb) => {
            let ty = if *jsonb {
                DataType::Jsonb
            } else {
                DataType::Json
            };
            let arg = vals.first().cloned().unwrap_or(Value::Null);
            TableFunc::Rows(f.rows(&arg, &ty)?.unwrap_or_default())
        }
        Srf::User(_) => unreachable!("user functions return above"),
    })
}

/// `generate_series` over numeric: computed whole (at most ten million
/// rows, which is far more than a numeric series is ever used for); `vals`
/// are numeric and not NULL.
pub fn numeric_series(vals: &[Value]) -> Result<Vec<Vec<Value>>> {
    use crate::types::{compare_typed, eval_binary};
    let ty = DataType::Numeric(None);
    // PostgreSQL's checks, in its order: NaN or infinite bounds and step.
    for (v, what) in vals.iter().zip(["start value", "stop value", "step size"]) {
        if let Value::Numeric(n) = v {
            if n.is_nan() {
                return Err(err!(InvalidParameterValue, "{what} cannot be NaN"));
            }
            if !n.is_finite() {
                return Err(err!(InvalidParameterValue, "{what} cannot be infinity"));
            }
        }
    }
    let step = vals
        .get(2)
        .cloned()
        .unwrap_or_else(|| Value::numeric(crate::types::Numeric::from_i64(1)));
    let zero = Value::numeric(crate::types::Numeric::zero());
    let dir = compare_typed(&step, &zero, &ty);
    if dir == std::cmp::Ordering::Equal {
        return Err(err!(InvalidParameterValue, "step size cannot equal zero"));
    }
    let mut rows = Vec::new();
    let mut x = vals[0].clone();
    while compare_typed(&x, &vals[1], &ty) != dir {
        if rows.len() >= 10_000_000 {
            return Err(err!(
                ProgramLimitExceeded,
                "generate_series over numeric is limited to 10000000 rows"
            ));
        }
        rows.push(vec![x.clone()]);
        x = eval_binary(BinaryOp::Add, &x, &step)?;
    }
    Ok(rows)
}
