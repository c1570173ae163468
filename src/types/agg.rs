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
//!
//! Beyond those: `string_agg` (text or bytea, the delimiter read per row),
//! `bool_and`/`every`/`bool_or`, `bit_and`/`bit_or`/`bit_xor` over
//! integers, and the statistical aggregates of [`stats`] (variance and
//! standard deviation of numbers; `corr`, `covar_*` and `regr_*` of float8
//! pairs). Two-argument aggregates take their second value through
//! [`Accumulator::add2`]; [`signature`] says which argument types each
//! aggregate takes and what it returns.

pub mod stats;

use self::stats::{ExactMoments, FloatMoments, Moment, Regr, RegrState};
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
    /// `string_agg(value, delimiter)` of text or bytea.
    StringAgg,
    /// `bool_and(b)`.
    BoolAnd,
    /// `every(b)`: `bool_and` under the standard's name.
    Every,
    /// `bool_or(b)`.
    BoolOr,
    /// `bit_and(i)`.
    BitAnd,
    /// `bit_or(i)`.
    BitOr,
    /// `bit_xor(i)`.
    BitXor,
    /// `var_pop(x)`.
    VarPop,
    /// `var_samp(x)`.
    VarSamp,
    /// `variance(x)`: `var_samp`.
    Variance,
    /// `stddev_pop(x)`.
    StddevPop,
    /// `stddev_samp(x)`.
    StddevSamp,
    /// `stddev(x)`: `stddev_samp`.
    Stddev,
    /// `regr_count(y, x)`: rows where both are non-NULL.
    RegrCount,
    /// The other two-argument float8 aggregates (`corr`, `regr_slope`, ...).
    Regr(Regr),
    /// `json_agg(x)` / `jsonb_agg(x)`: the inputs, NULLs included.
    JsonAgg { jsonb: bool },
    /// `json_object_agg(k, v)` / `jsonb_object_agg(k, v)`; `json_value`:
    /// the values are of type `json` (embedded, not quoted).
    JsonObjectAgg { jsonb: bool, json_value: bool },
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
            AggFunc::StringAgg => "string_agg",
            AggFunc::BoolAnd => "bool_and",
            AggFunc::Every => "every",
            AggFunc::BoolOr => "bool_or",
            AggFunc::BitAnd => "bit_and",
            AggFunc::BitOr => "bit_or",
            AggFunc::BitXor => "bit_xor",
            AggFunc::VarPop => "var_pop",
            AggFunc::VarSamp => "var_samp",
            AggFunc::Variance => "variance",
            AggFunc::StddevPop => "stddev_pop",
            AggFunc::StddevSamp => "stddev_samp",
            AggFunc::Stddev => "stddev",
            AggFunc::RegrCount => "regr_count",
            AggFunc::Regr(r) => match r {
                Regr::Corr => "corr",
                Regr::CovarPop => "covar_pop",
                Regr::CovarSamp => "covar_samp",
                Regr::Sxx => "regr_sxx",
                Regr::Syy => "regr_syy",
                Regr::Sxy => "regr_sxy",
                Regr::AvgX => "regr_avgx",
                Regr::AvgY => "regr_avgy",
                Regr::R2 => "regr_r2",
                Regr::Slope => "regr_slope",
                Regr::Intercept => "regr_intercept",
            },
            AggFunc::JsonAgg { jsonb: false } => "json_agg",
            AggFunc::JsonAgg { jsonb: true } => "jsonb_agg",
            AggFunc::JsonObjectAgg { jsonb: false, .. } => "json_object_agg",
            AggFunc::JsonObjectAgg { jsonb: true, .. } => "jsonb_object_agg",
        }
    }

    /// How many arguments the aggregate takes (`count(*)`: none).
    pub fn arity(self) -> usize {
        match self {
            AggFunc::CountStar => 0,
            AggFunc::StringAgg | AggFunc::RegrCount | AggFunc::Regr(_) => 2,
            AggFunc::JsonObjectAgg { .. } => 2,
            _ => 1,
        }
    }

    /// Whether the order of the rows can change the result over `input`
    /// (the first argument's type): float sums round differently, strings
    /// concatenate; exact sums, counts and extremes do not care. An
    /// ORDER BY in a call that does not care is bound (for its errors) and
    /// then dropped, so the call keeps the plain paths.
    pub fn order_matters(self, input: &DataType) -> bool {
        match self {
            AggFunc::StringAgg | AggFunc::ArrayAgg | AggFunc::Regr(_) => true,
            AggFunc::JsonAgg { .. } | AggFunc::JsonObjectAgg { .. } => true,
            AggFunc::Sum | AggFunc::Avg => matches!(input, DataType::Float4 | DataType::Float8),
            f if f.moment().is_some() => matches!(input, DataType::Float4 | DataType::Float8),
            _ => false,
        }
    }

    /// The aggregate as called with arguments of `types` (the binder's
    /// hook: `json_object_agg` embeds `json` values rather than quoting
    /// them).
    pub fn for_arg_types(self, types: &[DataType]) -> AggFunc {
        match self {
            AggFunc::JsonObjectAgg { jsonb, .. } => AggFunc::JsonObjectAgg {
                jsonb,
                json_value: types.get(1) == Some(&DataType::Json),
            },
            f => f,
        }
    }

    /// Whether NULL inputs reach the accumulator (`array_agg` and
    /// `json_agg` keep them as elements; `json_object_agg` keeps NULL
    /// values and refuses NULL keys itself).
    pub fn keeps_nulls(self) -> bool {
        matches!(
            self,
            AggFunc::ArrayAgg | AggFunc::JsonAgg { .. } | AggFunc::JsonObjectAgg { .. }
        )
    }

    /// The moment a variance-family aggregate returns.
    fn moment(self) -> Option<Moment> {
        Some(match self {
            AggFunc::VarPop => Moment::VarPop,
            AggFunc::VarSamp | AggFunc::Variance => Moment::VarSamp,
            AggFunc::StddevPop => Moment::StddevPop,
            AggFunc::StddevSamp | AggFunc::Stddev => Moment::StddevSamp,
            _ => return None,
        })
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
            "string_agg" => AggFunc::StringAgg,
            "bool_and" => AggFunc::BoolAnd,
            "every" => AggFunc::Every,
            "bool_or" => AggFunc::BoolOr,
            "bit_and" => AggFunc::BitAnd,
            "bit_or" => AggFunc::BitOr,
            "bit_xor" => AggFunc::BitXor,
            "var_pop" => AggFunc::VarPop,
            "var_samp" => AggFunc::VarSamp,
            "variance" => AggFunc::Variance,
            "stddev_pop" => AggFunc::StddevPop,
            "stddev_samp" => AggFunc::StddevSamp,
            "stddev" => AggFunc::Stddev,
            "regr_count" => AggFunc::RegrCount,
            "corr" => AggFunc::Regr(Regr::Corr),
            "covar_pop" => AggFunc::Regr(Regr::CovarPop),
            "covar_samp" => AggFunc::Regr(Regr::CovarSamp),
            "regr_sxx" => AggFunc::Regr(Regr::Sxx),
            "regr_syy" => AggFunc::Regr(Regr::Syy),
            "regr_sxy" => AggFunc::Regr(Regr::Sxy),
            "regr_avgx" => AggFunc::Regr(Regr::AvgX),
            "regr_avgy" => AggFunc::Regr(Regr::AvgY),
            "regr_r2" => AggFunc::Regr(Regr::R2),
            "regr_slope" => AggFunc::Regr(Regr::Slope),
            "regr_intercept" => AggFunc::Regr(Regr::Intercept),
            "json_agg" => AggFunc::JsonAgg { jsonb: false },
            "jsonb_agg" => AggFunc::JsonAgg { jsonb: true },
            "json_object_agg" => AggFunc::JsonObjectAgg {
                jsonb: false,
                json_value: false,
            },
            "jsonb_object_agg" => AggFunc::JsonObjectAgg {
                jsonb: true,
                json_value: false,
            },
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
        (AggFunc::Sum | AggFunc::Avg, _) => None,
        _ => return signature(func, std::slice::from_ref(input)).map(|(_, t)| t),
    };
    r.ok_or_else(|| {
        err!(UndefinedFunction, "function {}({input}) does not exist", func.name()).with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        )
    })
}

/// The argument types `func(args)` takes (each argument is coerced to
/// its entry, implicitly) and the result type; `function f(types) does not
/// exist` (42883) when no version of the aggregate takes `args`.
pub fn signature(func: AggFunc, args: &[DataType]) -> Result<(Vec<DataType>, DataType)> {
    use DataType::*;
    let missing = || {
        let list: Vec<String> = args.iter().map(|t| t.to_string()).collect();
        err!(
            UndefinedFunction,
            "function {}({}) does not exist",
            func.name(),
            list.join(", ")
        )
        .with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        )
    };
    if args.len() != func.arity() {
        return Err(missing());
    }
    let int = |t: &DataType| matches!(t, Int2 | Int4 | Int8);
    let text_like = |t: &DataType| t.is_string() || *t == Unknown;
    let to_float = |t: &DataType| t.is_numeric() || *t == Unknown;
    let t0 = args.first().map(|t| t.without_typmod());
    let r = match (func, t0) {
        (AggFunc::StringAgg, Some(Bytea)) if matches!(args[1], Bytea | Unknown) => {
            Some((vec![Bytea, Bytea], Bytea))
        }
        (AggFunc::StringAgg, Some(t)) if text_like(&t) && text_like(&args[1]) => {
            Some((vec![Text, Text], Text))
        }
        (AggFunc::BoolAnd | AggFunc::Every | AggFunc::BoolOr, Some(Bool | Unknown)) => {
            Some((vec![Bool], Bool))
        }
        (AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor, Some(t)) if int(&t) => {
            Some((vec![t], t))
        }
        (f, Some(t)) if f.moment().is_some() => match t {
            Int2 | Int4 | Int8 | Numeric(_) => Some((vec![args[0]], Numeric(None))),
            Float4 | Float8 => Some((vec![t], Float8)),
            _ => None,
        },
        (AggFunc::RegrCount | AggFunc::Regr(_), Some(_)) if args.iter().all(to_float) => {
            let ty = if func == AggFunc::RegrCount {
                Int8
            } else {
                Float8
            };
            Some((vec![Float8, Float8], ty))
        }
        (AggFunc::CountStar, _) => Some((Vec::new(), Int8)),
        (AggFunc::JsonAgg { jsonb } | AggFunc::JsonObjectAgg { jsonb, .. }, Some(_)) => {
            let known = |t: &DataType| if *t == Unknown { Text } else { *t };
            let result = if jsonb { Jsonb } else { Json };
            Some((args.iter().map(known).collect(), result))
        }
        (
            AggFunc::Count
            | AggFunc::Sum
            | AggFunc::Avg
            | AggFunc::Min
            | AggFunc::Max
            | AggFunc::ArrayAgg,
            Some(_),
        ) => return Ok((args.to_vec(), agg_result_type(func, &args[0])?)),
        _ => None,
    };
    r.ok_or_else(missing)
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
    /// `string_agg`'s bytes so far (valid UTF-8 for text).
    Concat(Vec<u8>),
    /// `bool_and` / `bool_or` so far.
    Bool(bool),
    /// `bit_and` / `bit_or` / `bit_xor` so far.
    Bits(i64),
    /// Variance family over float inputs.
    FloatMoments(FloatMoments),
    /// Variance family over integer and numeric inputs.
    ExactMoments(ExactMoments),
    /// `corr`, `covar_*`, `regr_*`.
    Regr(RegrState),
    /// `json_object_agg`'s keys and values so far.
    Pairs(Vec<(Value, Value)>),
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
    /// A fresh accumulator for `func(input)` (`input`: the first
    /// argument's type after [`signature`]'s coercions); fails as
    /// [`agg_result_type`] does for unsupported input types.
    pub fn new(func: AggFunc, input: &DataType) -> Result<Accumulator> {
        if func.arity() < 2 {
            agg_result_type(func, input)?;
        }
        use DataType::*;
        let state = match (func, input) {
            (AggFunc::ArrayAgg | AggFunc::JsonAgg { .. }, _) => State::Array(Vec::new()),
            (AggFunc::JsonObjectAgg { .. }, _) => State::Pairs(Vec::new()),
            (AggFunc::CountStar | AggFunc::Count | AggFunc::RegrCount, _) => State::None,
            (AggFunc::StringAgg, _) => State::Concat(Vec::new()),
            (AggFunc::BoolAnd | AggFunc::Every, _) => State::Bool(true),
            (AggFunc::BoolOr, _) => State::Bool(false),
            (AggFunc::BitAnd, _) => State::Bits(-1),
            (AggFunc::BitOr | AggFunc::BitXor, _) => State::Bits(0),
            (AggFunc::Regr(_), _) => State::Regr(RegrState::default()),
            (f, Float4 | Float8) if f.moment().is_some() => {
                State::FloatMoments(FloatMoments::default())
            }
            (f, Int2 | Int4) if f.moment().is_some() => {
                State::ExactMoments(ExactMoments::Small { sx: 0, sxx: 0 })
            }
            (f, _) if f.moment().is_some() => State::ExactMoments(ExactMoments::Wide {
                sx: Num::zero(),
                sxx: Num::zero(),
            }),
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
            (State::Numeric(s), Value::Numeric(x)) => s.add_assign(x),
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
            (State::Bool(b), Value::Bool(x)) => {
                if self.func == AggFunc::BoolOr {
                    *b |= *x
                } else {
                    *b &= *x
                }
            }
            (State::Bits(b), v) if v.as_i64().is_some() => {
                let x = v.as_i64().unwrap_or_default();
                match self.func {
                    AggFunc::BitAnd => *b &= x,
                    AggFunc::BitOr => *b |= x,
                    _ => *b ^= x,
                }
            }
            (State::FloatMoments(m), Value::Float8(x)) => m.add(*x)?,
            (State::FloatMoments(m), Value::Float4(x)) => m.add(*x as f64)?,
            (State::ExactMoments(m), Value::Int2(x)) => m.add_small(*x as i64),
            (State::ExactMoments(m), Value::Int4(x)) => m.add_small(*x as i64),
            (State::ExactMoments(m), Value::Int8(x)) => m.add_num(&Num::from_i64(*x)),
            (State::ExactMoments(m), Value::Numeric(x)) => m.add_num(x),
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

    /// Adds one row of a two-argument aggregate: `string_agg`'s value and
    /// delimiter (a NULL value is skipped, a NULL delimiter adds none; the
    /// first value's delimiter never shows, as PostgreSQL drops it), or the
    /// (Y, X) of `corr`, `covar_*` and `regr_*` (skipped when either is NULL).
    pub fn add2(&mut self, a: &Value, b: &Value) -> Result<()> {
        if let State::Pairs(pairs) = &mut self.state {
            if a.is_null() {
                return Err(super::json::agg::null_key());
            }
            pairs.push((a.clone(), b.clone()));
            self.count += 1;
            return Ok(());
        }
        if a.is_null() {
            return Ok(());
        }
        match (&mut self.state, a) {
            (State::Concat(buf), v) => {
                if self.count > 0 {
                    match b {
                        Value::Text(t) => buf.extend_from_slice(t.as_bytes()),
                        Value::Bytea(d) => buf.extend_from_slice(d),
                        _ => {}
                    }
                }
                match v {
                    Value::Text(t) => buf.extend_from_slice(t.as_bytes()),
                    Value::Bytea(d) => buf.extend_from_slice(d),
                    other => {
                        return Err(err!(
                            DatatypeMismatch,
                            "string_agg: value {other:?} is not text or bytea"
                        ))
                    }
                }
            }
            (State::None, _) if !b.is_null() => {}
            (State::Regr(r), Value::Float8(y)) => match b {
                Value::Float8(x) => r.add(*y, *x)?,
                _ => return Ok(()),
            },
            _ => return Ok(()),
        }
        self.count += 1;
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
            (State::Numeric(a), State::Numeric(b)) => a.add_assign(b),
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
            (State::Pairs(a), State::Pairs(b)) => a.extend(b.iter().cloned()),
            (State::Bool(a), State::Bool(b)) => {
                if func == AggFunc::BoolOr {
                    *a |= *b
                } else {
                    *a &= *b
                }
            }
            (State::Bits(a), State::Bits(b)) => match func {
                AggFunc::BitAnd => *a &= *b,
                AggFunc::BitOr => *a |= *b,
                _ => *a ^= *b,
            },
            (State::FloatMoments(a), State::FloatMoments(b)) => a.merge(b)?,
            (State::ExactMoments(a), State::ExactMoments(b)) => a.merge(b),
            (State::Regr(a), State::Regr(b)) => a.merge(b),
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
        if matches!(
            self.func,
            AggFunc::Count | AggFunc::CountStar | AggFunc::RegrCount
        ) {
            return Ok(Value::Int8(self.count));
        }
        if self.count == 0 {
            return Ok(Value::Null);
        }
        let n = self.count;
        let moment = self.func.moment();
        Ok(match (&self.state, self.func) {
            (State::Array(items), AggFunc::JsonAgg { jsonb }) => {
                super::json::agg::finish_array(items, &self.input, jsonb)?
            }
            (State::Pairs(pairs), AggFunc::JsonObjectAgg { jsonb, json_value }) => {
                super::json::agg::finish_object(pairs, &self.input, jsonb, json_value)?
            }
            (State::Pairs(_), _) => Value::Null,
            (State::Array(items), _) => {
                super::array::Array::new(self.input, items.clone()).into_value()
            }
            (State::Concat(buf), _) => match self.input {
                Bytea => Value::Bytea(buf.as_slice().into()),
                _ => Value::text(&String::from_utf8_lossy(buf)),
            },
            (State::Bool(b), _) => Value::Bool(*b),
            (State::Bits(b), _) => match self.input {
                Int2 => Value::Int2(*b as i16),
                Int4 => Value::Int4(*b as i32),
                _ => Value::Int8(*b),
            },
            (State::FloatMoments(m), _) => moment
                .and_then(|w| m.finish(w))
                .map_or(Value::Null, Value::Float8),
            (State::ExactMoments(m), _) => moment
                .and_then(|w| m.finish(w, n))
                .map_or(Value::Null, Value::numeric),
            (State::Regr(r), AggFunc::Regr(w)) => r.finish(w).map_or(Value::Null, Value::Float8),
            (State::Regr(_), _) => Value::Null,
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

    #[test]
    fn statistical_partials_merge_to_the_one_pass_answer() {
        use AggFunc::*;
        use DataType::*;
        let xs: Vec<i64> = (1..=40).map(|i| (i * 7919) % 101 - 50).collect();
        for (func, ty) in [
            (VarSamp, Int4),
            (StddevPop, Int8),
            (Variance, Numeric(None)),
            (BitXor, Int8),
            (BitAnd, Int4),
        ] {
            let val = |x: i64| match ty {
                Int4 => Value::Int4(x as i32),
                Int8 => Value::Int8(x),
                _ => Value::numeric(Num::from_i64(x)),
            };
            let mut whole = Accumulator::new(func, &ty).unwrap();
            let mut a = Accumulator::new(func, &ty).unwrap();
            let mut b = Accumulator::new(func, &ty).unwrap();
            for (i, &x) in xs.iter().enumerate() {
                whole.add(&val(x)).unwrap();
                if i % 3 == 0 {
                    a.add(&val(x))
                } else {
                    b.add(&val(x))
                }
                .unwrap();
            }
            a.merge(&b).unwrap();
            assert_eq!(a.finish().unwrap(), whole.finish().unwrap(), "{func:?}");
        }
        let float = |v: Value| match v {
            Value::Float8(f) => f,
            other => panic!("{other:?}"),
        };
        for func in [
            StddevSamp,
            Regr(stats::Regr::Corr),
            Regr(stats::Regr::Slope),
        ] {
            let mut whole = Accumulator::new(func, &Float8).unwrap();
            let mut a = Accumulator::new(func, &Float8).unwrap();
            let mut b = Accumulator::new(func, &Float8).unwrap();
            for (i, &x) in xs.iter().enumerate() {
                let (y, x) = (Value::Float8((x * x) as f64 / 7.0), Value::Float8(x as f64));
                let acc = if i % 3 == 0 { &mut a } else { &mut b };
                if func.arity() == 2 {
                    whole.add2(&y, &x).unwrap();
                    acc.add2(&y, &x).unwrap();
                } else {
                    whole.add(&x).unwrap();
                    acc.add(&x).unwrap();
                }
            }
            a.merge(&b).unwrap();
            let (m, w) = (float(a.finish().unwrap()), float(whole.finish().unwrap()));
            assert!(
                (m - w).abs() <= 1e-12 * w.abs().max(1.0),
                "{func:?}: {m} {w}"
            );
        }
    }

    #[test]
    fn string_agg_skips_nulls_and_the_first_delimiter() {
        let mut acc = Accumulator::new(AggFunc::StringAgg, &DataType::Text).unwrap();
        assert_eq!(acc.finish().unwrap(), Value::Null);
        acc.add2(&Value::text("a"), &Value::text(";")).unwrap();
        acc.add2(&Value::Null, &Value::text("!")).unwrap();
        acc.add2(&Value::text("b"), &Value::Null).unwrap();
        acc.add2(&Value::text("c"), &Value::text(", ")).unwrap();
        assert_eq!(acc.finish().unwrap(), Value::text("ab, c"));
    }
}
