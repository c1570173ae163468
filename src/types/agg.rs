//! Aggregate accumulators: `count`, `sum`, `avg`, `min`, `max` with
//! PostgreSQL's result types and display scales.
//!
//! | aggregate | input | result |
//! |---|---|---|
//! | `sum` | int2, int4 | bigint |
//! | `sum` | int8, numeric | numeric |
//! | `sum` | float4 / float8 / interval | same type |
//! | `avg` | int2, int4, int8, numeric | numeric (`avg` of 1 and 2 is `1.5000000000000000`) |
//! | `avg` | float4, float8 | double precision |
//! | `avg` | interval | interval |
//! | `min`, `max` | any comparable type | same type |
//! | `count` | anything / `*` | bigint |
//!
//! An [`Accumulator`] is created once per group; [`Accumulator::add`] is
//! the per-row hot path and allocates nothing for integer and float inputs
//! (integer sums use `i64` / `i128` state and become numeric only in
//! [`Accumulator::finish`]). [`Accumulator::merge`] combines two partial
//! states, for parallel or spilled partial aggregation. NULL inputs are
//! skipped (except by `count(*)`, which counts rows via
//! [`Accumulator::add_row`]); `sum`/`avg`/`min`/`max` of no rows is NULL,
//! `count` of no rows is 0.

use super::compare::compare_typed;
use super::datatype::DataType;
use super::datetime::interval as iv;
use super::float;
use super::numeric::Numeric as Num;
use super::value::Value;
use crate::err;
use crate::error::Result;
use std::cmp::Ordering;

/// An aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// `count(*)`: rows, NULLs included.
    CountStar,
    /// `count(x)`: non-NULL values.
    Count,
    /// `sum(x)`.
    Sum,
    /// `avg(x)`.
    Avg,
    /// `min(x)`.
    Min,
    /// `max(x)`.
    Max,
    /// `array_agg(x)`: the inputs, NULLs included, as an array.
    ArrayAgg,
}

impl AggFunc {
    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Avg => "avg",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::ArrayAgg => "array_agg",
        }
    }

    /// Looks up an aggregate by name (`count` means `count(x)`).
    pub fn from_name(name: &str) -> Option<AggFunc> {
        Some(match name.to_ascii_lowercase().as_str() {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "avg" => AggFunc::Avg,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "array_agg" => AggFunc::ArrayAgg,
            _ => return None,
        })
    }
}

/// The result type of `func(input)`, or `function sum(text) does not
/// exist` (42883).
pub fn agg_result_type(func: AggFunc, input: &DataType) -> Result<DataType> {
    use DataType::*;
    let t = input.without_typmod();
    let r = match (func, t) {
        (AggFunc::CountStar | AggFunc::Count, _) => Some(Int8),
        (AggFunc::Sum, Int2 | Int4) => Some(Int8),
        (AggFunc::Sum, Int8 | Numeric(_)) => Some(Numeric(None)),
        (AggFunc::Sum, Float4 | Float8 | Interval) => Some(t),
        (AggFunc::Avg, Int2 | Int4 | Int8 | Numeric(_)) => Some(Numeric(None)),
        (AggFunc::Avg, Float4 | Float8) => Some(Float8),
        (AggFunc::Avg, Interval) => Some(Interval),
        (AggFunc::Min | AggFunc::Max, Unknown) => Some(Text),
        (AggFunc::Min | AggFunc::Max, Bool) => None,
        (AggFunc::Min | AggFunc::Max, _) => Some(*input),
        (AggFunc::ArrayAgg, Unknown) => Some(DataType::array_of(Text)),
        (AggFunc::ArrayAgg, Array(_)) => None,
        (AggFunc::ArrayAgg, _) => Some(DataType::array_of(*input)),
        _ => None,
    };
    r.ok_or_else(|| {
        err!(UndefinedFunction, "function {}({input}) does not exist", func.name()).with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        )
    })
}

/// Whether `v` should replace `best` as the running min / max. Ties go to
/// the newer value, as PostgreSQL's `numeric_smaller` / `text_larger` do
/// (visible for numeric scales: `min` of `1.50` then `1.5` is `1.5`).
fn better(func: AggFunc, input: &DataType, v: &Value, best: &Value) -> bool {
    let o = compare_typed(v, best, input);
    (func == AggFunc::Min && o != Ordering::Greater)
        || (func == AggFunc::Max && o != Ordering::Less)
}

/// The running state of one aggregate over one group.
#[derive(Debug, Clone)]
pub struct Accumulator {
    /// Which aggregate.
    func: AggFunc,
    /// The input type (decides result types and char(n) comparison).
    input: DataType,
    /// Non-NULL inputs (rows, for `count(*)`).
    count: i64,
    /// The sum so far.
    state: State,
}

/// The sum / extreme kept by an [`Accumulator`].
#[derive(Debug, Clone)]
enum State {
    /// count only.
    None,
    /// Integer sums (exact; int8 sums cannot overflow i128).
    Int(i128),
    /// float4 / float8 sums.
    Float(f64),
    /// numeric sums.
    Numeric(Num),
    /// interval sums, with a wide microsecond total.
    Interval {
        months: i64,
        days: i64,
        micros: i128,
    },
    /// The smallest or largest value seen (NULL before the first).
    Extreme(Value),
    /// The smallest or largest string seen (`None` before the first), in
    /// one buffer that a better value overwrites: `min`/`max` of text
    /// allocate only when a longer best value outgrows it, never per row.
    ExtremeText(Option<String>),
    /// `array_agg`'s inputs so far.
    Array(Vec<Value>),
}

/// Whether string `v` should replace `best` as the running min / max of
/// `input` (`char(n)`: trailing spaces ignored). Ties go to the newer
/// spelling as [`better`] says; a tie of identical bytes changes nothing.
fn better_str(func: AggFunc, input: &DataType, v: &str, best: &str) -> bool {
    fn key<'s>(s: &'s str, input: &DataType) -> &'s [u8] {
        if matches!(input, DataType::Char(_)) {
            super::text::bpchar_trim(s).as_bytes()
        } else {
            s.as_bytes()
        }
    }
    match key(v, input).cmp(key(best, input)) {
        Ordering::Equal => v != best,
        Ordering::Less => func == AggFunc::Min,
        Ordering::Greater => func == AggFunc::Max,
    }
}

impl Accumulator {
    /// A fresh accumulator for `func(input)`; fails as
    /// [`agg_result_type`] does for unsupported input types.
    pub fn new(func: AggFunc, input: &DataType) -> Result<Accumulator> {
        agg_result_type(func, input)?;
        use DataType::*;
        let state = match (func, input) {
            (AggFunc::ArrayAgg, _) => State::Array(Vec::new()),
            (AggFunc::CountStar | AggFunc::Count, _) => State::None,
            (AggFunc::Min | AggFunc::Max, t) if t.is_string() => State::ExtremeText(None),
            (AggFunc::Min | AggFunc::Max, _) => State::Extreme(Value::Null),
            (_, Int2 | Int4 | Int8) => State::Int(0),
            (_, Float4 | Float8) => State::Float(0.0),
            (_, Interval) => State::Interval {
                months: 0,
                days: 0,
                micros: 0,
            },
            _ => State::Numeric(Num::zero()),
        };
        Ok(Accumulator {
            func,
            input: *input,
            count: 0,
            state,
        })
    }

    /// Counts one row for `count(*)` (no value needed).
    #[inline]
    pub fn add_row(&mut self) {
        self.count += 1;
    }

    /// Adds one non-NULL string (a row of a string vector, read in place):
    /// `count`, `min` and `max` of text without a `Value` per row.
    #[inline]
    pub fn add_str(&mut self, v: &str) -> Result<()> {
        match &mut self.state {
            State::None => {}
            State::ExtremeText(best) => match best {
                None => *best = Some(v.to_owned()),
                Some(b) => {
                    if better_str(self.func, &self.input, v, b) {
                        b.clear();
                        b.push_str(v);
                    }
                }
            },
            _ => return self.add(&Value::text(v)),
        }
        self.count += 1;
        Ok(())
    }

    /// Adds one input value; NULL is skipped.
    #[inline]
    pub fn add(&mut self, v: &Value) -> Result<()> {
        if let (State::ExtremeText(_), Value::Text(t)) = (&self.state, v) {
            return self.add_str(t);
        }
        if let State::Array(items) = &mut self.state {
            items.push(v.clone());
            self.count += 1;
            return Ok(());
        }
        if v.is_null() {
            if self.func == AggFunc::CountStar {
                self.count += 1;
            }
            return Ok(());
        }
        self.count += 1;
        match (&mut self.state, v) {
            (State::None, _) => {}
            (State::Int(s), Value::Int2(x)) => *s += *x as i128,
            (State::Int(s), Value::Int4(x)) => *s += *x as i128,
            (State::Int(s), Value::Int8(x)) => *s += *x as i128,
            (State::Float(s), Value::Float8(x)) => *s = float::add_f64(*s, *x)?,
            (State::Float(s), Value::Float4(x)) if self.func == AggFunc::Avg => {
                // avg(real) accumulates in double precision, as float4_accum.
                *s = float::add_f64(*s, *x as f64)?;
            }
            (State::Float(s), Value::Float4(x)) => {
                let r = (*s as f32) + *x;
                *s = float::check_f32(r, s.is_infinite() || x.is_infinite(), true)? as f64;
            }
            (State::Numeric(s), Value::Numeric(x)) => *s = s.add(x),
            (
                State::Interval {
                    months,
                    days,
                    micros,
                },
                Value::Interval(x),
            ) => {
                *months += x.months as i64;
                *days += x.days as i64;
                *micros += x.micros as i128;
            }
            (State::Extreme(best), v) => {
                if best.is_null() || better(self.func, &self.input, v, best) {
                    *best = v.clone();
                }
            }
            (_, v) => {
                return Err(err!(
                    DatatypeMismatch,
                    "{}: value {v:?} does not match input type {}",
                    self.func.name(),
                    self.input
                ))
            }
        }
        Ok(())
    }

    /// Folds another partial state of the same aggregate into this one.
    pub fn merge(&mut self, other: &Accumulator) -> Result<()> {
        let (func, input) = (self.func, self.input);
        self.count += other.count;
        match (&mut self.state, &other.state) {
            (State::None, State::None) => {}
            (State::Int(a), State::Int(b)) => *a += *b,
            (State::Float(a), State::Float(b)) => *a = float::add_f64(*a, *b)?,
            (State::Numeric(a), State::Numeric(b)) => *a = a.add(b),
            (
                State::Interval {
                    months,
                    days,
                    micros,
                },
                State::Interval {
                    months: m2,
                    days: d2,
                    micros: u2,
                },
            ) => {
                *months += m2;
                *days += d2;
                *micros += u2;
            }
            (State::Array(a), State::Array(b)) => a.extend(b.iter().cloned()),
            (State::Extreme(a), State::Extreme(b)) => {
                if !b.is_null() && (a.is_null() || better(func, &input, b, a)) {
                    *a = b.clone();
                }
            }
            (State::ExtremeText(a), State::ExtremeText(b)) => {
                if let Some(b) = b {
                    let replace = match a {
                        None => true,
                        Some(a) => better_str(func, &input, b, a),
                    };
                    if replace {
                        *a = Some(b.clone());
                    }
                }
            }
            _ => {
                return Err(err!(
                    InternalError,
                    "merging accumulators of different aggregates"
                ))
            }
        }
        Ok(())
    }

    /// The aggregate's result.
    pub fn finish(&self) -> Result<Value> {
        use DataType::*;
        if matches!(self.func, AggFunc::Count | AggFunc::CountStar) {
            return Ok(Value::Int8(self.count));
        }
        if self.count == 0 {
            return Ok(Value::Null);
        }
        let n = self.count;
        Ok(match (&self.state, self.func) {
            (State::Array(items), _) => {
                super::array::Array::new(self.input, items.clone()).into_value()
            }
            (State::Extreme(v), _) => v.clone(),
            (State::ExtremeText(v), _) => v.as_deref().map_or(Value::Null, Value::text),
            (State::Int(s), AggFunc::Sum) => match self.input {
                Int8 => Value::numeric(Num::from_i128(*s)),
                _ => Value::Int8(i64::try_from(*s).map_err(|_| super::int::int8_out_of_range())?),
            },
            (State::Int(s), _) => Value::numeric(Num::from_i128(*s).div(&Num::from_i64(n))?),
            (State::Numeric(s), AggFunc::Sum) => Value::numeric(s.clone()),
            (State::Numeric(s), _) => Value::numeric(s.div(&Num::from_i64(n))?),
            (State::Float(s), AggFunc::Sum) => match self.input {
                Float4 => Value::Float4(*s as f32),
                _ => Value::Float8(*s),
            },
            (State::Float(s), _) => Value::Float8(*s / n as f64),
            (
                State::Interval {
                    months,
                    days,
                    micros,
                },
                func,
            ) => {
                let fits = |v: i64| i32::try_from(v).map_err(|_| iv::out_of_range());
                let sum = super::value::Interval {
                    months: fits(*months)?,
                    days: fits(*days)?,
                    micros: i64::try_from(*micros).map_err(|_| iv::out_of_range())?,
                };
                if func == AggFunc::Sum {
                    Value::Interval(sum)
                } else {
                    Value::Interval(iv::div(&sum, n as f64)?)
                }
            }
            (State::None, _) => Value::Int8(n),
        })
    }

    /// The aggregate this accumulates.
    pub fn func(&self) -> AggFunc {
        self.func
    }
}

#[cfg(test)]
mod tests {
    //! Expected strings come from PostgreSQL 15 on this machine, e.g.
    //! `select avg(x) from (values (1),(2)) v(x)` is `1.5000000000000000`.
    use super::*;
    use crate::types::io::{parse_value, value_to_string};

    fn run(func: AggFunc, ty: DataType, inputs: &[&str]) -> String {
        let mut acc = Accumulator::new(func, &ty).unwrap();
        for s in inputs {
            let v = if *s == "NULL" {
                Value::Null
            } else {
                parse_value(s, &ty).unwrap()
            };
            acc.add(&v).unwrap();
        }
        value_to_string(&acc.finish().unwrap())
    }

    #[test]
    fn results_match_postgres() {
        use AggFunc::*;
        use DataType::*;
        assert_eq!(run(Avg, Int4, &["1", "2"]), "1.5000000000000000");
        assert_eq!(run(Avg, Int4, &["1", "2", "4"]), "2.3333333333333333");
        assert_eq!(run(Avg, Int8, &["10", "20", "NULL"]), "15.0000000000000000");
        assert_eq!(
            run(Avg, Numeric(None), &["1.5", "2.25"]),
            "1.8750000000000000"
        );
        assert_eq!(run(Avg, Float8, &["1", "2"]), "1.5");
        assert_eq!(run(Avg, Interval, &["1 day", "2 days"]), "1 day 12:00:00");
        assert_eq!(run(Sum, Int4, &["2147483647", "1"]), "2147483648");
        assert_eq!(
            run(Sum, Int8, &["9223372036854775807", "1"]),
            "9223372036854775808"
        );
        assert_eq!(run(Sum, Numeric(None), &["1.5", "2.25"]), "3.75");
        assert_eq!(run(Sum, Float4, &["0.1", "0.2"]), "0.3");
        assert_eq!(run(Sum, Int4, &["NULL"]), "");
        assert_eq!(run(Min, Text, &["b", "a", "NULL", "c"]), "a");
        assert_eq!(run(Max, Float8, &["1", "NaN", "2"]), "NaN");
        assert_eq!(run(Count, Int4, &["1", "NULL", "3"]), "2");
        assert_eq!(run(CountStar, Int4, &["1", "NULL", "3"]), "3");
        assert_eq!(run(Count, Int4, &[]), "0");
    }

    #[test]
    fn merge_combines_partials() {
        let ty = DataType::Int4;
        let mut a = Accumulator::new(AggFunc::Avg, &ty).unwrap();
        let mut b = Accumulator::new(AggFunc::Avg, &ty).unwrap();
        a.add(&Value::Int4(1)).unwrap();
        b.add(&Value::Int4(2)).unwrap();
        a.merge(&b).unwrap();
        assert_eq!(value_to_string(&a.finish().unwrap()), "1.5000000000000000");
        let mut m = Accumulator::new(AggFunc::Max, &ty).unwrap();
        let mut n = Accumulator::new(AggFunc::Max, &ty).unwrap();
        m.add(&Value::Int4(3)).unwrap();
        n.add(&Value::Int4(7)).unwrap();
        m.merge(&n).unwrap();
        assert_eq!(m.finish().unwrap(), Value::Int4(7));
        let e = agg_result_type(AggFunc::Sum, &DataType::Text).unwrap_err();
        assert_eq!(e.message, "function sum(text) does not exist");
    }
}
