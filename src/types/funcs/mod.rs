//! Scalar functions: name lookup, argument type resolution for the binder,
//! and evaluation over values.
//!
//! The binder calls [`ScalarFunc::from_name`], then [`ScalarFunc::resolve`]
//! with the argument types; that returns the function to run (it may pick a
//! variant, e.g. `length` of `char(n)`), the type to cast each argument to,
//! and the result type, following PostgreSQL's choices (`round(5)` is
//! `double precision`, `round(2.5)` numeric, `mod(7, 3)` integer). The
//! executor then calls [`ScalarFunc::eval`] with the cast arguments. Every
//! function is strict (NULL in, NULL out) except `concat` and `concat_ws`,
//! which skip NULLs, `format` (see [`format`]) and `quote_nullable`. SQL syntax forms map onto these: `position(a in b)` is
//! `Position(a, b)`, `trim(both x from s)` is `Btrim(s, x)`,
//! `substring(s from a for b)` is `Substring(s, a, b)`, `extract(f from x)`
//! is `Extract(f, x)`. `coalesce`, `nullif`, `greatest`, `least` and `now()`
//! are the binder's (with [`compare`](super::compare::compare)).

mod are;
pub mod bytea_like;
pub mod bytes;
pub(crate) mod format;
mod numfmt;
pub mod numfunc;
pub mod overlay;
mod regex;
pub mod regexp;
pub mod regexp_match;
pub mod string;
pub mod timefunc;
mod trig;
pub mod user;
pub mod volatility;

use super::datatype::DataType;
use super::datetime::{arith as dt, interval, tstz};
use super::float;
use super::io::format_value;
use super::numeric::Numeric;
use super::ops::power_f64;
use super::value::Value;
use crate::err;
use crate::error::{Error, Result};
use string::TrimSide;

/// A scalar function heapdb implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarFunc {
    /// `abs(x)`.
    Abs,
    /// `round(x)` / `round(numeric, int)`.
    Round,
    /// `ceil(x)` / `ceiling(x)`.
    Ceil,
    /// `floor(x)`.
    Floor,
    /// `trunc(x)` / `trunc(numeric, int)`.
    Trunc,
    /// `mod(a, b)`.
    Mod,
    /// `power(a, b)` / `pow`.
    Power,
    /// `sqrt(x)`.
    Sqrt,
    /// `sign(x)`.
    Sign,
    /// `exp(float8)`.
    Exp,
    /// `ln(float8)`.
    Ln,
    /// `log(float8)` (base 10).
    Log10,
    /// `pi()`.
    Pi,
    /// `div(numeric, numeric)`: the quotient truncated to an integer.
    Div,
    /// `scale(numeric)`: the display scale (NULL for NaN and infinities).
    Scale,
    /// `min_scale(numeric)`: the fewest decimals that keep the value.
    MinScale,
    /// `trim_scale(numeric)`: the value with trailing fractional zeros removed.
    TrimScale,
    /// `factorial(bigint)`: numeric.
    Factorial,
    /// `sinh`, `cosh`, `tanh`, `asinh`, `acosh`, `atanh` of float8.
    Hyperbolic(Hyperbolic),
    /// `length(text)` / `char_length` / `character_length`.
    Length,
    /// `length(char(n))`: trailing spaces do not count.
    BpcharLength,
    /// `octet_length(text)`.
    OctetLength,
    /// `lower(text)`.
    Lower,
    /// `upper(text)`.
    Upper,
    /// `initcap(text)`.
    Initcap,
    /// `reverse(text)`.
    Reverse,
    /// `substring(text, from [, for])` / `substr`.
    Substring,
    /// `position(needle, haystack)` (SQL `position(needle in haystack)`).
    Position,
    /// `strpos(haystack, needle)`.
    Strpos,
    /// `btrim(text [, chars])` / `trim(both ...)`.
    Btrim,
    /// `ltrim(text [, chars])`.
    Ltrim,
    /// `rtrim(text [, chars])`.
    Rtrim,
    /// `replace(text, from, to)`.
    Replace,
    /// `split_part(text, delimiter, n)`.
    SplitPart,
    /// `concat(any, ...)`.
    Concat,
    /// `concat_ws(separator, any, ...)`.
    ConcatWs,
    /// `left(text, n)`.
    Left,
    /// `right(text, n)`.
    Right,
    /// `lpad(text, n [, fill])`.
    Lpad,
    /// `rpad(text, n [, fill])`.
    Rpad,
    /// `repeat(text, n)`.
    Repeat,
    /// `date_part(field, source)`: double precision.
    DatePart,
    /// `extract(field from source)`: numeric.
    Extract,
    /// `date_trunc(field, source)`.
    DateTrunc,
    /// `justify_hours(interval)`.
    JustifyHours,
    /// `justify_days(interval)`.
    JustifyDays,
    /// `justify_interval(interval)`.
    JustifyInterval,
    /// `pg_sleep(seconds)`: sleeps, returns `void` (printed empty).
    PgSleep,
    /// `date_bin(stride, source, origin)`.
    DateBin,
    /// `make_date(year, month, day)`.
    MakeDate,
    /// `make_timestamp(year, month, mday, hour, min, sec)`.
    MakeTimestamp,
    /// `make_timestamptz(year, month, mday, hour, min, sec [, zone])`.
    MakeTimestampTz,
    /// `timezone(zone, timestamp | timestamptz)`: `AT TIME ZONE`.
    Timezone,
    /// `age(timestamp, timestamp)`, `age(timestamptz, timestamptz)`.
    Age,
    /// `to_timestamp(double precision)`: Unix seconds to timestamptz.
    ToTimestamp,
    /// `make_interval(years, months, weeks, days, hours, mins, secs)`,
    /// every argument optional and nameable.
    MakeInterval,
    /// `to_char(timestamp | interval, template)`.
    ToChar,
    /// `isfinite(date | timestamp | interval)`.
    IsFinite,
    /// `format(fmt, args...)`: not strict in its arguments.
    Format,
    /// `quote_ident(text)`.
    QuoteIdent,
    /// `quote_literal(text)`.
    QuoteLiteral,
    /// `quote_nullable(text)`: `NULL` for NULL.
    QuoteNullable,
    /// Number functions and operators (`gcd`, `to_char`, `<<`, ...).
    Num(numfunc::NumFunc),
    /// `bytea` functions and character codes (`encode`, `chr`, ...).
    Bytes(bytes::ByteFunc),
    /// `to_date(text, template)`.
    ToDate,
    /// `regexp_replace`, `regexp_count`, `regexp_like`, `regexp_instr`,
    /// `regexp_substr`.
    Regexp(regexp::RegexpFunc),
    /// Array functions and the array forms of expressions.
    Array(super::array_funcs::ArrayFunc),
    /// `overlaps`, `clock_timestamp`, `timeofday`, `to_timestamp(text,
    /// text)`.
    TimeFn(timefunc::TimeFunc),
    /// `random()`: volatile, float8 in [0, 1).
    Random,
    /// `setseed(float8)`: seeds `random()`, returns `void`.
    Setseed,
    /// A user-defined function: its entry in [`user`]'s table.
    User(u32),
    /// The `json` and `jsonb` functions and operators.
    Json(super::json::JsonFunc),
}

/// The hyperbolic functions of double precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hyperbolic {
    /// `sinh`.
    Sinh,
    /// `cosh`.
    Cosh,
    /// `tanh`.
    Tanh,
    /// `asinh`.
    Asinh,
    /// `acosh`: defined from 1 up.
    Acosh,
    /// `atanh`: defined on [-1, 1].
    Atanh,
}

/// What [`ScalarFunc::resolve`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The function to evaluate.
    pub func: ScalarFunc,
    /// The type each argument must be cast to (implicitly).
    pub arg_types: Vec<DataType>,
    /// The result type.
    pub result: DataType,
}

pub(super) fn no_function(name: &str, args: &[DataType]) -> Error {
    let list: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    err!(UndefinedFunction, "function {name}({}) does not exist", list.join(", ")).with_hint(
        "No function matches the given name and argument types. You might need to add explicit type casts.",
    )
}

impl ScalarFunc {
    /// Looks a function up by its SQL name (case-insensitive).
    pub fn from_name(name: &str) -> Option<ScalarFunc> {
        use ScalarFunc::*;
        Some(match name.to_ascii_lowercase().as_str() {
            "abs" => Abs,
            "round" => Round,
            "ceil" | "ceiling" => Ceil,
            "floor" => Floor,
            "trunc" => Trunc,
            "mod" => Mod,
            "power" | "pow" => Power,
            "sqrt" => Sqrt,
            "sign" => Sign,
            "exp" => Exp,
            "ln" => Ln,
            "log" | "log10" => Log10,
            "pi" => Pi,
            "div" => Div,
            "scale" => Scale,
            "min_scale" => MinScale,
            "trim_scale" => TrimScale,
            "factorial" => Factorial,
            "sinh" => Hyperbolic(self::Hyperbolic::Sinh),
            "cosh" => Hyperbolic(self::Hyperbolic::Cosh),
            "tanh" => Hyperbolic(self::Hyperbolic::Tanh),
            "asinh" => Hyperbolic(self::Hyperbolic::Asinh),
            "acosh" => Hyperbolic(self::Hyperbolic::Acosh),
            "atanh" => Hyperbolic(self::Hyperbolic::Atanh),
            "length" | "char_length" | "character_length" => Length,
            "octet_length" => OctetLength,
            "lower" => Lower,
            "upper" => Upper,
            "initcap" => Initcap,
            "reverse" => Reverse,
            "substring" | "substr" => Substring,
            "position" => Position,
            "strpos" => Strpos,
            "btrim" | "trim" => Btrim,
            "ltrim" => Ltrim,
            "rtrim" => Rtrim,
            "replace" => Replace,
            "split_part" => SplitPart,
            "concat" => Concat,
            "concat_ws" => ConcatWs,
            "left" => Left,
            "right" => Right,
            "lpad" => Lpad,
            "rpad" => Rpad,
            "repeat" => Repeat,
            "date_part" => DatePart,
            "extract" => Extract,
            "date_trunc" => DateTrunc,
            "justify_hours" => JustifyHours,
            "justify_days" => JustifyDays,
            "justify_interval" => JustifyInterval,
            "pg_sleep" => PgSleep,
            "date_bin" => DateBin,
            "make_date" => MakeDate,
            "make_timestamp" => MakeTimestamp,
            "make_timestamptz" => MakeTimestampTz,
            "timezone" => Timezone,
            "age" => Age,
            "to_timestamp" => ToTimestamp,
            "make_interval" => MakeInterval,
            "to_char" => ToChar,
            "to_date" => ToDate,
            "isfinite" => IsFinite,
            "format" => Format,
            "quote_ident" => QuoteIdent,
            "quote_literal" => QuoteLiteral,
            "quote_nullable" => QuoteNullable,
            "random" => Random,
            "setseed" => Setseed,
            other => {
                return numfunc::NumFunc::from_name(other)
                    .map(Num)
                    .or_else(|| bytes::ByteFunc::from_name(other).map(Bytes))
                    .or_else(|| regexp::RegexpFunc::from_name(other).map(Regexp))
                    .or_else(|| super::array_funcs::ArrayFunc::from_name(other).map(Array))
                    .or_else(|| timefunc::TimeFunc::from_name(other).map(TimeFn))
                    .or_else(|| super::json::JsonFunc::from_name(other).map(Json))
            }
        })
    }

    /// The SQL name, for messages.
    pub fn name(self) -> &'static str {
        use ScalarFunc::*;
        match self {
            Abs => "abs",
            Round => "round",
            Ceil => "ceil",
            Floor => "floor",
            Trunc => "trunc",
            Mod => "mod",
            Power => "power",
            Sqrt => "sqrt",
            Sign => "sign",
            Exp => "exp",
            Ln => "ln",
            Log10 => "log",
            Pi => "pi",
            Div => "div",
            Scale => "scale",
            MinScale => "min_scale",
            TrimScale => "trim_scale",
            Factorial => "factorial",
            Hyperbolic(h) => match h {
                self::Hyperbolic::Sinh => "sinh",
                self::Hyperbolic::Cosh => "cosh",
                self::Hyperbolic::Tanh => "tanh",
                self::Hyperbolic::Asinh => "asinh",
                self::Hyperbolic::Acosh => "acosh",
                self::Hyperbolic::Atanh => "atanh",
            },
            Length | BpcharLength => "length",
            OctetLength => "octet_length",
            Lower => "lower",
            Upper => "upper",
            Initcap => "initcap",
            Reverse => "reverse",
            Substring => "substring",
            Position => "position",
            Strpos => "strpos",
            Btrim => "btrim",
            Ltrim => "ltrim",
            Rtrim => "rtrim",
            Replace => "replace",
            SplitPart => "split_part",
            Concat => "concat",
            ConcatWs => "concat_ws",
            Left => "left",
            Right => "right",
            Lpad => "lpad",
            Rpad => "rpad",
            Repeat => "repeat",
            DatePart => "date_part",
            Extract => "extract",
            DateTrunc => "date_trunc",
            JustifyHours => "justify_hours",
            JustifyDays => "justify_days",
            JustifyInterval => "justify_interval",
            PgSleep => "pg_sleep",
            DateBin => "date_bin",
            MakeDate => "make_date",
            MakeTimestamp => "make_timestamp",
            MakeTimestampTz => "make_timestamptz",
            Timezone => "timezone",
            Age => "age",
            ToTimestamp => "to_timestamp",
            MakeInterval => "make_interval",
            ToChar => "to_char",
            ToDate => "to_date",
            IsFinite => "isfinite",
            Format => "format",
            QuoteIdent => "quote_ident",
            QuoteLiteral => "quote_literal",
            QuoteNullable => "quote_nullable",
            Num(f) => f.name(),
            Bytes(f) => f.name(),
            Regexp(f) => f.name(),
            Array(f) => f.name(),
            TimeFn(f) => f.name(),
            Random => "random",
            Setseed => "setseed",
            User(id) => user::name(id),
            Json(f) => f.name(),
        }
    }

    /// The declared parameters of a function that takes named arguments:
    /// each one's name, default value and type (`make_interval(years =>
    /// 0, ..., secs => 0.0)`); `None` for the others.
    pub fn param_defaults(self) -> Option<Vec<(&'static str, Value, DataType)>> {
        match self {
            ScalarFunc::MakeInterval => {
                let mut p: Vec<_> = ["years", "months", "weeks", "days", "hours", "mins"]
                    .into_iter()
                    .map(|n| (n, Value::Int4(0), DataType::Int4))
                    .collect();
                p.push(("secs", Value::Float8(0.0), DataType::Float8));
                Some(p)
            }
            _ => None,
        }
    }

    /// The resolution of the function families that resolve themselves
    /// (numeric, bytea, regular expressions) and of the bytea overloads of
    /// string functions; `None` for the rest.
    fn resolve_elsewhere(self, args: &[DataType]) -> Option<Result<Resolved>> {
        match self {
            ScalarFunc::Num(f) => Some(f.resolve(args)),
            ScalarFunc::Bytes(f) => Some(f.resolve(args)),
            ScalarFunc::Regexp(f) => Some(f.resolve(args)),
            ScalarFunc::Array(f) => Some(f.resolve(args)),
            ScalarFunc::TimeFn(f) => Some(f.resolve(args)),
            ScalarFunc::Json(f) => Some(f.resolve(args)),
            ScalarFunc::Substring => {
                bytes::ByteFunc::overload(self, args).or_else(|| substring_pattern(args))
            }
            _ => bytes::ByteFunc::overload(self, args),
        }
    }

    /// Resolves argument and result types (see the module doc); fails with
    /// `function lower(integer) does not exist` (42883).
    pub fn resolve(self, args: &[DataType]) -> Result<Resolved> {
        use DataType::*;
        use ScalarFunc::*;
        let n = args.len();
        let is_num = |t: &DataType| t.is_numeric() || *t == Unknown;
        let is_int = |t: &DataType| matches!(t, Int2 | Int4 | Int8 | Unknown);
        let is_str = |t: &DataType| t.is_string() || *t == Unknown;
        if let Some(r) = self.resolve_elsewhere(args) {
            return r;
        }
        // Types that cast to numeric implicitly (not float4/float8).
        let is_exact = |t: &DataType| is_num(t) && !matches!(t, Float4 | Float8);
        let ok = |func: ScalarFunc, arg_types: Vec<DataType>, result: DataType| {
            Ok(Resolved {
                func,
                arg_types,
                result,
            })
        };
        // float8 unless numeric: the choice PostgreSQL makes for ints.
        let f8_or_num = |t: &DataType| {
            if matches!(t, Numeric(_)) {
                Numeric(None)
            } else {
                Float8
            }
        };
        match (self, args) {
            (Abs, [t]) if is_num(t) => {
                let t = if *t == Unknown {
                    Float8
                } else {
                    t.without_typmod()
                };
                ok(Abs, vec![t], t)
            }
            (Round | Ceil | Floor | Trunc | Sqrt | Sign, [t]) if is_num(t) => {
                let t = f8_or_num(t);
                ok(self, vec![t], t)
            }
            (Round | Trunc, [t, d]) if is_num(t) && is_int(d) => {
                ok(self, vec![Numeric(None), Int4], Numeric(None))
            }
            // numeric has its own exp/ln/log; integers and unknown take
            // the preferred type, double precision.
            (Exp | Ln | Log10, [Numeric(_)]) => ok(self, vec![Numeric(None)], Numeric(None)),
            (Exp | Ln | Log10, [t]) if is_num(t) => ok(self, vec![Float8], Float8),
            // log(base, x) exists for numeric only.
            (Log10, [b, x])
                if is_num(b)
                    && is_num(x)
                    && !matches!(b, Float4 | Float8)
                    && !matches!(x, Float4 | Float8) =>
            {
                ok(self, vec![Numeric(None), Numeric(None)], Numeric(None))
            }
            (Pi, []) => ok(Pi, vec![], Float8),
            // numeric-only functions: integers and unknown cast to numeric.
            (Div, [a, b]) if is_exact(a) && is_exact(b) => {
                ok(Div, vec![Numeric(None), Numeric(None)], Numeric(None))
            }
            (Scale | MinScale, [t]) if is_exact(t) => ok(self, vec![Numeric(None)], Int4),
            (TrimScale, [t]) if is_exact(t) => ok(self, vec![Numeric(None)], Numeric(None)),
            (Factorial, [t]) if is_int(t) => ok(self, vec![Int8], Numeric(None)),
            (Hyperbolic(_), [t]) if is_num(t) => ok(self, vec![Float8], Float8),
            (Mod, [a, b]) if is_int(a) && is_int(b) => {
                let t = super::cast::common_type(a, b)
                    .filter(|t| *t != Unknown)
                    .unwrap_or(Int4);
                let t = if t == Text { Int4 } else { t };
                ok(Mod, vec![t, t], t)
            }
            (Mod, [a, b])
                if is_num(a)
                    && is_num(b)
                    && !matches!(a, Float4 | Float8)
                    && !matches!(b, Float4 | Float8) =>
            {
                ok(Mod, vec![Numeric(None), Numeric(None)], Numeric(None))
            }
            (Power, [a, b]) if is_num(a) && is_num(b) => {
                let t = if matches!(a, Numeric(_)) || matches!(b, Numeric(_)) {
                    Numeric(None)
                } else {
                    Float8
                };
                ok(Power, vec![t, t], t)
            }
            (Length, [Char(k)]) => ok(BpcharLength, vec![Char(*k)], Int4),
            (OctetLength, [Char(k)]) => ok(OctetLength, vec![Char(*k)], Int4),
            (Length | OctetLength, [t]) if is_str(t) => ok(self, vec![Text], Int4),
            (Lower | Upper | Initcap | Reverse, [t]) if is_str(t) => ok(self, vec![Text], Text),
            (Substring, [s, a]) if is_str(s) && is_int(a) => ok(self, vec![Text, Int4], Text),
            (Substring, [s, a, b]) if is_str(s) && is_int(a) && is_int(b) => {
                ok(self, vec![Text, Int4, Int4], Text)
            }
            (Position | Strpos, [a, b]) if is_str(a) && is_str(b) => {
                ok(self, vec![Text, Text], Int4)
            }
            (Btrim | Ltrim | Rtrim, [s]) if is_str(s) => ok(self, vec![Text], Text),
            (Btrim | Ltrim | Rtrim, [s, c]) if is_str(s) && is_str(c) => {
                ok(self, vec![Text, Text], Text)
            }
            (Replace, [a, b, c]) if is_str(a) && is_str(b) && is_str(c) => {
                ok(self, vec![Text, Text, Text], Text)
            }
            (SplitPart, [a, b, c]) if is_str(a) && is_str(b) && is_int(c) => {
                ok(self, vec![Text, Text, Int4], Text)
            }
            (Concat, _) if n >= 1 => ok(
                self,
                args.iter()
                    .map(|t| if *t == Unknown { Text } else { *t })
                    .collect(),
                Text,
            ),
            (ConcatWs, [sep, ..]) if is_str(sep) && n >= 2 => {
                let mut types: Vec<DataType> = args
                    .iter()
                    .map(|t| if *t == Unknown { Text } else { *t })
                    .collect();
                types[0] = Text;
                ok(self, types, Text)
            }
            (Left | Right | Repeat, [s, k]) if is_str(s) && is_int(k) => {
                ok(self, vec![Text, Int4], Text)
            }
            (Lpad | Rpad, [s, k]) if is_str(s) && is_int(k) => ok(self, vec![Text, Int4], Text),
            (Lpad | Rpad, [s, k, f]) if is_str(s) && is_int(k) && is_str(f) => {
                ok(self, vec![Text, Int4, Text], Text)
            }
            (PgSleep, [t]) if is_num(t) => ok(self, vec![Float8], Text),
            (Random, []) => ok(self, vec![], Float8),
            (Setseed, [t]) if is_num(t) => ok(self, vec![Float8], Text),
            (Format, [f, ..]) if is_str(f) => {
                let mut types: Vec<DataType> = args
                    .iter()
                    .map(|t| if *t == Unknown { Text } else { *t })
                    .collect();
                types[0] = Text;
                ok(self, types, Text)
            }
            (QuoteIdent | QuoteLiteral | QuoteNullable, [t]) if is_str(t) => {
                ok(self, vec![Text], Text)
            }
            _ => self.resolve_datetime(args),
        }
    }

    /// [`ScalarFunc::resolve`] for the date/time functions.
    fn resolve_datetime(self, args: &[DataType]) -> Result<Resolved> {
        use DataType::*;
        use ScalarFunc::*;
        let is_num = |t: &DataType| t.is_numeric() || *t == Unknown;
        let is_int = |t: &DataType| matches!(t, Int2 | Int4 | Int8 | Unknown);
        let is_str = |t: &DataType| t.is_string() || *t == Unknown;
        let ok = |func: ScalarFunc, arg_types: Vec<DataType>, result: DataType| {
            Ok(Resolved {
                func,
                arg_types,
                result,
            })
        };
        match (self, args) {
            (DatePart | Extract, [f, t])
                if is_str(f)
                    && matches!(
                        t,
                        Date | Timestamp(_)
                            | TimestampTz(_)
                            | Interval
                            | Unknown
                            | DataType::Time(_)
                            | TimeTz(_)
                    ) =>
            {
                let t = if *t == Unknown {
                    Timestamp(None)
                } else {
                    t.without_typmod()
                };
                let result = if self == DatePart {
                    Float8
                } else {
                    Numeric(None)
                };
                ok(self, vec![Text, t], result)
            }
            (DateTrunc, [f, t]) if is_str(f) && matches!(t, Date | Timestamp(_) | Unknown) => {
                ok(self, vec![Text, Timestamp(None)], Timestamp(None))
            }
            (DateTrunc, [f, Interval]) if is_str(f) => ok(self, vec![Text, Interval], Interval),
            (DateTrunc, [f, TimestampTz(_)]) if is_str(f) => {
                ok(self, vec![Text, TimestampTz(None)], TimestampTz(None))
            }
            (DateTrunc, [f, Date | Timestamp(_) | TimestampTz(_) | Unknown, z])
                if is_str(f) && is_str(z) =>
            {
                ok(self, vec![Text, TimestampTz(None), Text], TimestampTz(None))
            }
            (MakeTimestampTz, [y, mo, d, h, mi, s, zone @ ..])
                if [y, mo, d, h, mi].iter().all(|t| is_int(t))
                    && is_num(s)
                    && zone.len() <= 1
                    && zone.iter().all(is_str) =>
            {
                let mut want = vec![Int4, Int4, Int4, Int4, Int4, Float8];
                want.extend(zone.iter().map(|_| Text));
                ok(self, want, TimestampTz(None))
            }
            (Timezone, [z, t]) if is_str(z) || *z == Interval => {
                let z = if *z == Interval { Interval } else { Text };
                match t {
                    Timestamp(_) => ok(self, vec![z, Timestamp(None)], TimestampTz(None)),
                    TimestampTz(_) | Date | Unknown => {
                        ok(self, vec![z, TimestampTz(None)], Timestamp(None))
                    }
                    DataType::Time(_) | TimeTz(_) => ok(self, vec![z, TimeTz(None)], TimeTz(None)),
                    _ => Err(no_function(self.name(), args)),
                }
            }
            (Age, [a, b]) => match (a, b) {
                (Timestamp(_) | Date, Timestamp(_) | Date | Unknown)
                | (Unknown, Timestamp(_) | Date) => {
                    ok(self, vec![Timestamp(None), Timestamp(None)], Interval)
                }
                (TimestampTz(_) | Unknown, _) | (_, TimestampTz(_)) => {
                    ok(self, vec![TimestampTz(None), TimestampTz(None)], Interval)
                }
                _ => Err(no_function(self.name(), args)),
            },
            (
                DateBin,
                [Interval | Unknown, TimestampTz(_), b]
                | [Interval | Unknown, _, b @ TimestampTz(_)],
            ) if matches!(b, Date | Timestamp(_) | TimestampTz(_) | Unknown) => ok(
                self,
                vec![Interval, TimestampTz(None), TimestampTz(None)],
                TimestampTz(None),
            ),
            (ToTimestamp, [t]) if is_num(t) => ok(self, vec![Float8], TimestampTz(None)),
            (ToTimestamp, [t, f]) if is_str(t) && is_str(f) => {
                timefunc::TimeFunc::ToTimestampFormat.resolve(args)
            }
            (DateBin, [Interval | Unknown, a, b])
                if matches!(a, Date | Timestamp(_) | Unknown)
                    && matches!(b, Date | Timestamp(_) | Unknown) =>
            {
                ok(
                    self,
                    vec![Interval, Timestamp(None), Timestamp(None)],
                    Timestamp(None),
                )
            }
            (MakeDate, [y, m, d]) if is_int(y) && is_int(m) && is_int(d) => {
                ok(self, vec![Int4, Int4, Int4], Date)
            }
            (MakeTimestamp, [y, mo, d, h, mi, s])
                if [y, mo, d, h, mi].iter().all(|t| is_int(t)) && is_num(s) =>
            {
                ok(
                    self,
                    vec![Int4, Int4, Int4, Int4, Int4, Float8],
                    Timestamp(None),
                )
            }
            (MakeInterval, ts)
                if ts.len() <= 7
                    && ts.iter().take(6).all(is_int)
                    && (ts.len() < 7 || is_num(&ts[6])) =>
            {
                let mut want = vec![Int4; ts.len().min(6)];
                if ts.len() == 7 {
                    want.push(Float8);
                }
                ok(self, want, Interval)
            }
            (ToChar, [TimestampTz(_), f]) if is_str(f) => {
                ok(self, vec![TimestampTz(None), Text], Text)
            }
            (ToChar, [Timestamp(_) | Date, f]) if is_str(f) => {
                ok(self, vec![Timestamp(None), Text], Text)
            }
            (ToChar, [Interval, f]) if is_str(f) => ok(self, vec![Interval, Text], Text),
            (ToDate, [t, f]) if is_str(t) && is_str(f) => ok(self, vec![Text, Text], Date),
            // to_char of a number: the number-template code owns it.
            (ToChar, _) => Num(numfunc::NumFunc::ToChar).resolve(args),
            (IsFinite, [Date]) => ok(self, vec![Date], Bool),
            (IsFinite, [Timestamp(_) | Unknown]) => ok(self, vec![Timestamp(None)], Bool),
            (IsFinite, [Interval]) => ok(self, vec![Interval], Bool),
            (IsFinite, [TimestampTz(_)]) => ok(self, vec![TimestampTz(None)], Bool),
            (JustifyHours | JustifyDays | JustifyInterval, [Interval | Unknown]) => {
                ok(self, vec![Interval], Interval)
            }
            _ => Err(no_function(self.name(), args)),
        }
    }

    /// Evaluates the function on arguments already cast to the types
    /// [`ScalarFunc::resolve`] returned.
    pub fn eval(self, args: &[Value]) -> Result<Value> {
        use ScalarFunc::*;
        match self {
            Concat => return Ok(concat(args, "")),
            Array(f) => return f.eval(args),
            User(id) => return user::call(id, args),
            Json(f) => return f.eval(args),
            Random => return Ok(volatility::random()),
            Format => return format::format(args),
            TimeFn(f) => return f.eval(args),
            QuoteNullable if args.first().is_some_and(Value::is_null) => {
                return Ok(Value::text("NULL"))
            }
            ConcatWs => {
                return match args.first() {
                    Some(Value::Text(sep)) => Ok(concat(&args[1..], sep)),
                    _ => Ok(Value::Null),
                }
            }
            _ => {}
        }
        if args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        let text = |i: usize| self.text_arg(args, i);
        let int = |i: usize| self.int_arg(args, i);
        Ok(match self {
            Abs | Round | Ceil | Floor | Trunc | Mod | Power | Sqrt | Sign | Exp | Ln | Log10
            | Pi => return math(self, args),
            Div | Scale | MinScale | TrimScale | Factorial => return numeric_func(self, args),
            Num(f) => return f.eval(args),
            Bytes(f) => return f.eval(args),
            Regexp(f) => return f.eval(args),
            TimeFn(f) => return f.eval(args),
            Hyperbolic(h) => match &args[0] {
                Value::Float8(x) => Value::Float8(hyperbolic(h, *x)?),
                _ => return Err(bad_arg(self)),
            },
            Length => Value::Int4(text(0)?.chars().count() as i32),
            BpcharLength => Value::Int4(super::text::bpchar_trim(text(0)?).chars().count() as i32),
            OctetLength => Value::Int4(text(0)?.len() as i32),
            Lower => Value::text(&map_case(text(0)?, false)),
            Upper => Value::text(&map_case(text(0)?, true)),
            Initcap => Value::text(&string::initcap(text(0)?)),
            Reverse => Value::text(&text(0)?.chars().rev().collect::<String>()),
            Substring => {
                let count = if args.len() > 2 { Some(int(2)?) } else { None };
                Value::text(&string::substring(text(0)?, int(1)?, count)?)
            }
            Position => Value::Int4(string::position(text(0)?, text(1)?)),
            Strpos => Value::Int4(string::position(text(1)?, text(0)?)),
            Btrim | Ltrim | Rtrim => {
                let chars = if args.len() > 1 { text(1)? } else { " " };
                let side = match self {
                    Btrim => TrimSide::Both,
                    Ltrim => TrimSide::Leading,
                    _ => TrimSide::Trailing,
                };
                Value::text(string::trim(text(0)?, chars, side))
            }
            Replace => {
                let from = text(1)?;
                if from.is_empty() {
                    args[0].clone()
                } else {
                    Value::text(&text(0)?.replace(from, text(2)?))
                }
            }
            SplitPart => Value::text(&string::split_part(text(0)?, text(1)?, int(2)?)?),
            Left => Value::text(&string::left(text(0)?, int(1)?)),
            Right => Value::text(&string::right(text(0)?, int(1)?)),
            Lpad | Rpad => {
                let fill = if args.len() > 2 { text(2)? } else { " " };
                Value::text(&string::pad(text(0)?, int(1)?, fill, self == Lpad))
            }
            Repeat => Value::text(&string::repeat(text(0)?, int(1)?)?),
            DatePart | Extract | DateTrunc | JustifyHours | JustifyDays | JustifyInterval
            | DateBin | MakeDate | MakeTimestamp | MakeInterval | ToChar | IsFinite | ToDate
            | MakeTimestampTz | Timezone | Age | ToTimestamp => return self.eval_datetime(args),
            QuoteIdent => Value::text(&format::quote_identifier(text(0)?)),
            QuoteLiteral | QuoteNullable => Value::text(&format::quote_literal(text(0)?)),
            PgSleep => {
                if let Value::Float8(secs) = &args[0] {
                    if secs.is_finite() && *secs > 0.0 {
                        std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(1e6)));
                    }
                }
                Value::text("")
            }
            Setseed => match &args[0] {
                Value::Float8(seed) => return volatility::setseed(*seed),
                _ => return Err(bad_arg(self)),
            },
            Concat | ConcatWs | Format | Array(_) | User(_) | Random | Json(_) => {
                unreachable!("handled above")
            }
        })
    }

    /// [`ScalarFunc::eval`] for the date/time functions, on non-NULL
    /// arguments.
    fn eval_datetime(self, args: &[Value]) -> Result<Value> {
        use ScalarFunc::*;
        let text = |i: usize| self.text_arg(args, i);
        let int = |i: usize| self.int_arg(args, i);
        Ok(match self {
            DatePart | Extract => {
                let field = text(0)?;
                let n = match &args[1] {
                    Value::Timestamp(t) => dt::extract_timestamp_opt(field, *t)?,
                    Value::TimestampTz(t) => tstz::extract_timestamptz_opt(field, *t)?,
                    Value::Date(d) if self == Extract => dt::extract_date(field, *d)?,
                    // date_part(date) is date_part(timestamp) in PostgreSQL.
                    Value::Date(d) => dt::extract_timestamp_opt(field, dt::date_to_timestamp(*d)?)?,
                    Value::Interval(iv) => Some(dt::extract_interval(field, iv)?),
                    Value::Time(t) => Some(super::datetime::time::extract_time(field, *t)?),
                    Value::TimeTz(t, z) => {
                        Some(super::datetime::time::extract_timetz(field, *t, *z)?)
                    }
                    _ => return Err(bad_arg(self)),
                };
                match n {
                    None => Value::Null,
                    Some(n) if self == Extract => Value::numeric(n),
                    Some(n) => Value::Float8(n.to_f64()),
                }
            }
            DateTrunc => match &args[1] {
                Value::Timestamp(t) => Value::Timestamp(dt::date_trunc(text(0)?, *t)?),
                Value::Date(d) => {
                    Value::Timestamp(dt::date_trunc(text(0)?, dt::date_to_timestamp(*d)?)?)
                }
                Value::Interval(iv) => Value::Interval(dt::date_trunc_interval(text(0)?, iv)?),
                Value::TimestampTz(t) => {
                    let zone = match args.get(2) {
                        Some(_) => Some(tstz::zone_arg(text(2)?)?.into_zone()),
                        None => None,
                    };
                    Value::TimestampTz(tstz::date_trunc_timestamptz(text(0)?, *t, zone.as_deref())?)
                }
                _ => return Err(bad_arg(self)),
            },
            MakeTimestampTz | Timezone | ToTimestamp | Age => return self.eval_zoned(args),
            JustifyHours | JustifyDays | JustifyInterval => {
                let Value::Interval(iv) = &args[0] else {
                    return Err(bad_arg(self));
                };
                Value::Interval(match self {
                    JustifyHours => interval::justify_hours(iv)?,
                    JustifyDays => interval::justify_days(iv)?,
                    _ => interval::justify_interval(iv)?,
                })
            }
            DateBin => match (&args[0], &args[1], &args[2]) {
                (Value::Interval(s), Value::Timestamp(t), Value::Timestamp(o)) => {
                    Value::Timestamp(super::datetime::construct::date_bin(s, *t, *o)?)
                }
                (Value::Interval(s), Value::TimestampTz(t), Value::TimestampTz(o)) => {
                    Value::TimestampTz(super::datetime::construct::date_bin(s, *t, *o)?)
                }
                _ => return Err(bad_arg(self)),
            },
            MakeDate => Value::Date(super::datetime::construct::make_date(
                int(0)?,
                int(1)?,
                int(2)?,
            )?),
            MakeTimestamp => {
                let Value::Float8(sec) = &args[5] else {
                    return Err(bad_arg(self));
                };
                Value::Timestamp(super::datetime::construct::make_timestamp(
                    int(0)?,
                    int(1)?,
                    int(2)?,
                    int(3)?,
                    int(4)?,
                    *sec,
                )?)
            }
            ToDate => Value::Date(super::datetime::to_date::to_date(text(0)?, text(1)?)?),
            ToChar => {
                use super::datetime::to_char;
                let out = match &args[0] {
                    Value::Timestamp(t) => to_char::timestamp_to_char(*t, text(1)?)?,
                    Value::TimestampTz(t) => to_char::timestamptz_to_char(*t, text(1)?)?,
                    Value::Interval(iv) => to_char::interval_to_char(iv, text(1)?)?,
                    _ => return Err(bad_arg(self)),
                };
                out.map_or(Value::Null, |s| Value::text(&s))
            }
            MakeInterval => {
                let mut parts = [0i64; 6];
                for (k, p) in parts.iter_mut().enumerate().take(args.len()) {
                    *p = int(k)?;
                }
                let secs = match args.get(6) {
                    Some(Value::Float8(s)) => *s,
                    Some(_) => return Err(bad_arg(self)),
                    None => 0.0,
                };
                Value::Interval(super::datetime::construct::make_interval(parts, secs)?)
            }
            IsFinite => Value::Bool(match &args[0] {
                Value::Date(d) => *d != i32::MIN && *d != i32::MAX,
                Value::Timestamp(t) | Value::TimestampTz(t) => *t != i64::MIN && *t != i64::MAX,
                _ => true,
            }),
            _ => return Err(bad_arg(self)),
        })
    }

    /// [`ScalarFunc::eval`] for the functions of `timestamp with time zone`
    /// (`make_timestamptz`, `timezone`, `to_timestamp`, `age`), on non-NULL
    /// arguments.
    fn eval_zoned(self, args: &[Value]) -> Result<Value> {
        use ScalarFunc::*;
        let text = |i: usize| self.text_arg(args, i);
        let int = |i: usize| self.int_arg(args, i);
        Ok(match self {
            MakeTimestampTz => {
                let Value::Float8(sec) = &args[5] else {
                    return Err(bad_arg(self));
                };
                let local = super::datetime::construct::make_timestamp(
                    int(0)?,
                    int(1)?,
                    int(2)?,
                    int(3)?,
                    int(4)?,
                    *sec,
                )?;
                let zone = match args.get(6) {
                    Some(_) => Some(tstz::sane_zone_arg(text(6)?)?),
                    None => None,
                };
                Value::TimestampTz(tstz::make_timestamptz(local, zone.as_ref())?)
            }
            Timezone => {
                let zone = match &args[0] {
                    Value::Interval(iv) => tstz::interval_zone(iv)?,
                    _ => tstz::zone_arg(text(0)?)?,
                };
                match &args[1] {
                    Value::Timestamp(t) => Value::TimestampTz(tstz::timestamp_at_zone(*t, &zone)?),
                    Value::TimestampTz(t) => {
                        Value::Timestamp(tstz::timestamptz_at_zone(*t, &zone)?)
                    }
                    Value::TimeTz(t, east) => {
                        let (t, east) = super::datetime::time::timetz_at_zone(*t, *east, &zone);
                        Value::TimeTz(t, east)
                    }
                    _ => return Err(bad_arg(self)),
                }
            }
            ToTimestamp => match &args[0] {
                Value::Float8(f) => Value::TimestampTz(tstz::to_timestamp(*f)?),
                _ => return Err(bad_arg(self)),
            },
            Age => match (&args[0], &args[1]) {
                (Value::Timestamp(a), Value::Timestamp(b)) => Value::Interval(dt::age(*a, *b)?),
                (Value::TimestampTz(a), Value::TimestampTz(b)) => {
                    Value::Interval(dt::age(tstz::local(*a), tstz::local(*b))?)
                }
                _ => return Err(bad_arg(self)),
            },
            _ => return Err(bad_arg(self)),
        })
    }
}

/// Upper- or lower-cases character by character, keeping characters whose
/// mapping is not a single character (`ß` stays `ß`, as PostgreSQL's
/// `towupper` does).
fn map_case(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            let mut m: Box<dyn Iterator<Item = char>> = if upper {
                Box::new(c.to_uppercase())
            } else {
                Box::new(c.to_lowercase())
            };
            match (m.next(), m.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        })
        .collect()
}

impl ScalarFunc {
    /// Argument `i` as text, or the wrong-argument error.
    fn text_arg(self, args: &[Value], i: usize) -> Result<&str> {
        args.get(i)
            .and_then(Value::as_str)
            .ok_or_else(|| bad_arg(self))
    }

    /// Argument `i` as an integer, or the wrong-argument error.
    fn int_arg(self, args: &[Value], i: usize) -> Result<i64> {
        args.get(i)
            .and_then(Value::as_i64)
            .ok_or_else(|| bad_arg(self))
    }
}

fn bad_arg(f: ScalarFunc) -> Error {
    bad_arg_named(f.name())
}

/// `function f called with arguments of unexpected types`: arguments that
/// [`ScalarFunc::resolve`] would not have chosen.
pub(super) fn bad_arg_named(name: &str) -> Error {
    err!(
        DatatypeMismatch,
        "function {name} called with arguments of unexpected types"
    )
}

/// `concat` / `concat_ws`: text forms of non-NULL arguments (booleans as
/// `t`/`f`, as PostgreSQL's output functions print them).
fn concat(args: &[Value], sep: &str) -> Value {
    let mut out = String::new();
    let mut first = true;
    for a in args.iter().filter(|a| !a.is_null()) {
        if !first {
            out.push_str(sep);
        }
        first = false;
        format_value(a, &mut out);
    }
    Value::text(&out)
}

/// The numeric-only functions `div`, `scale`, `min_scale`, `trim_scale`
/// and `factorial`.
fn numeric_func(f: ScalarFunc, args: &[Value]) -> Result<Value> {
    use ScalarFunc::*;
    Ok(match (f, args) {
        (Div, [Value::Numeric(a), Value::Numeric(b)]) => Value::numeric(a.div_trunc(b)?),
        (Scale, [Value::Numeric(n)]) if n.is_finite() => Value::Int4(n.scale() as i32),
        (MinScale, [Value::Numeric(n)]) if n.is_finite() => {
            Value::Int4(n.normalized().scale() as i32)
        }
        (Scale | MinScale, [Value::Numeric(_)]) => Value::Null,
        (TrimScale, [Value::Numeric(n)]) => Value::numeric(n.normalized()),
        (Factorial, [Value::Int8(k)]) => Value::numeric(Numeric::factorial(*k)?),
        _ => return Err(bad_arg(f)),
    })
}

/// `sinh` ... `atanh` as PostgreSQL's `dsinh` ... `datanh`: overflow gives
/// an infinity, arguments outside the domain fail with `input is out of
/// range` (22003).
fn hyperbolic(h: Hyperbolic, x: f64) -> Result<f64> {
    let out_of_range = || err!(NumericValueOutOfRange, "input is out of range");
    Ok(match h {
        Hyperbolic::Sinh => x.sinh(),
        Hyperbolic::Cosh => x.cosh(),
        Hyperbolic::Tanh => x.tanh(),
        Hyperbolic::Asinh => x.asinh(),
        Hyperbolic::Acosh => {
            if x < 1.0 {
                return Err(out_of_range());
            }
            x.acosh()
        }
        Hyperbolic::Atanh => {
            // Not `!(-1.0..=1.0).contains(&x)`: NaN passes through to NaN.
            #[allow(clippy::manual_range_contains)]
            let outside = x < -1.0 || x > 1.0;
            if outside {
                return Err(out_of_range());
            }
            if x == 1.0 {
                f64::INFINITY
            } else if x == -1.0 {
                f64::NEG_INFINITY
            } else {
                x.atanh()
            }
        }
    })
}

/// Math functions over float8 / numeric / integer arguments.
fn math(f: ScalarFunc, args: &[Value]) -> Result<Value> {
    use ScalarFunc::*;
    let float_dom = |msg: &str| err!(InvalidArgumentForPowerFunction, "{msg}");
    Ok(match (f, args) {
        (Pi, []) => Value::Float8(std::f64::consts::PI),
        (Abs, [Value::Int2(x)]) => Value::Int2(super::int::abs_i16(*x)?),
        (Abs, [Value::Int4(x)]) => Value::Int4(super::int::abs_i32(*x)?),
        (Abs, [Value::Int8(x)]) => Value::Int8(super::int::abs_i64(*x)?),
        (Abs, [Value::Float4(x)]) => Value::Float4(x.abs()),
        (Abs, [Value::Float8(x)]) => Value::Float8(x.abs()),
        (Abs, [Value::Numeric(n)]) => Value::numeric(n.abs()),
        (Round, [Value::Float8(x)]) => Value::Float8(x.round_ties_even()),
        (Ceil, [Value::Float8(x)]) => Value::Float8(x.ceil()),
        (Floor, [Value::Float8(x)]) => Value::Float8(x.floor()),
        (Trunc, [Value::Float8(x)]) => Value::Float8(x.trunc()),
        (Sign, [Value::Float8(x)]) => Value::Float8(if *x > 0.0 {
            1.0
        } else if *x < 0.0 {
            -1.0
        } else {
            0.0
        }),
        (Sqrt, [Value::Float8(x)]) => {
            if *x < 0.0 {
                return Err(float_dom("cannot take square root of a negative number"));
            }
            Value::Float8(x.sqrt())
        }
        (Exp, [Value::Float8(x)]) => {
            // As PostgreSQL's dexp: exp(-Infinity) is 0, a finite argument
            // whose result is 0 underflows.
            if x.is_nan() || *x == f64::NEG_INFINITY {
                Value::Float8(if x.is_nan() { *x } else { 0.0 })
            } else {
                Value::Float8(float::check(x.exp(), x.is_infinite(), false)?)
            }
        }
        (Exp, [Value::Numeric(n)]) => Value::numeric(n.exp()?),
        (Ln, [Value::Numeric(n)]) => Value::numeric(n.ln()?),
        (Log10, [Value::Numeric(n)]) => Value::numeric(n.log(&Numeric::from_i64(10))?),
        (Log10, [Value::Numeric(b), Value::Numeric(x)]) => Value::numeric(x.log(b)?),
        (Ln | Log10, [Value::Float8(x)]) => {
            if *x == 0.0 {
                return Err(err!(
                    InvalidArgumentForLogarithm,
                    "cannot take logarithm of zero"
                ));
            }
            if *x < 0.0 {
                return Err(err!(
                    InvalidArgumentForLogarithm,
                    "cannot take logarithm of a negative number"
                ));
            }
            Value::Float8(if f == Ln { x.ln() } else { x.log10() })
        }
        (Round, [Value::Numeric(n)]) => Value::numeric(n.round_scale(0)),
        (Ceil, [Value::Numeric(n)]) => Value::numeric(n.ceil()),
        (Floor, [Value::Numeric(n)]) => Value::numeric(n.floor()),
        (Trunc, [Value::Numeric(n)]) => Value::numeric(n.trunc_scale(0)),
        (Sqrt, [Value::Numeric(n)]) => Value::numeric(n.sqrt()?),
        (Sign, [Value::Numeric(n)]) => Value::numeric(if n.is_nan() {
            Numeric::nan()
        } else if n.is_zero() {
            Numeric::zero()
        } else {
            Numeric::from_i64(if n.is_negative() { -1 } else { 1 })
        }),
        (Round, [Value::Numeric(n), Value::Int4(d)]) => {
            Value::numeric(numfunc::check_numeric_range(n.round_scale(*d))?)
        }
        (Trunc, [Value::Numeric(n), Value::Int4(d)]) => Value::numeric(n.trunc_scale(*d)),
        (Mod, [a, b]) => super::ops::eval_binary(super::ops::BinaryOp::Mod, a, b)?,
        (Power, [Value::Float8(a), Value::Float8(b)]) => Value::Float8(power_f64(*a, *b)?),
        (Power, [Value::Numeric(a), Value::Numeric(b)]) => Value::numeric(a.power(b)?),
        _ => return Err(bad_arg(f)),
    })
}

/// `substring`'s pattern forms: `substring(s from pattern)` (a POSIX
/// regular expression) and `substring(s similar pattern escape e)`; `None`
/// for the positional forms (integer `from` and `for`).
fn substring_pattern(args: &[DataType]) -> Option<Result<Resolved>> {
    let is_str = |t: &DataType| t.is_string() || *t == DataType::Unknown;
    match args {
        [s, p] if is_str(s) && is_str(p) => Some(regexp::RegexpFunc::SubstringRe.resolve(args)),
        [s, p, e] if is_str(s) && is_str(p) && is_str(e) => {
            Some(regexp::RegexpFunc::SubstringSimilar.resolve(args))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    //! Expected results and types come from PostgreSQL 15 on this machine
    //! (`select round(5), pg_typeof(round(5))`, ...).
    use super::*;
    use crate::types::cast::{cast_from, CastContext};
    use crate::types::io::{parse_value_at, value_to_string};
    use DataType::*;

    /// Resolves `name(args)` with literal arguments of the given types,
    /// casts, evaluates; returns (text, result type).
    fn call(name: &str, args: &[(&str, DataType)]) -> Result<(String, String)> {
        let f = ScalarFunc::from_name(name).expect("known function");
        let types: Vec<DataType> = args.iter().map(|a| a.1).collect();
        let r = f.resolve(&types)?;
        let mut vals = Vec::new();
        for ((text, ty), to) in args.iter().zip(&r.arg_types) {
            let v = if *text == "NULL" {
                Value::Null
            } else {
                parse_value_at(text, ty, 0)?
            };
            vals.push(cast_from(&v, ty, to, CastContext::Implicit)?);
        }
        let v = r.func.eval(&vals)?;
        Ok((value_to_string(&v), r.result.to_string()))
    }

    fn ok(name: &str, args: &[(&str, DataType)]) -> String {
        let (v, t) = call(name, args).unwrap();
        format!("{v}|{t}")
    }

    #[test]
    fn math_functions_match_postgres() {
        let num = Numeric(None);
        assert_eq!(ok("round", &[("5", Int4)]), "5|double precision");
        assert_eq!(ok("round", &[("2.5", Float8)]), "2|double precision");
        assert_eq!(ok("round", &[("2.5", num)]), "3|numeric");
        assert_eq!(
            ok("round", &[("1234.5678", num), ("2", Int4)]),
            "1234.57|numeric"
        );
        assert_eq!(
            ok("round", &[("1234.5678", num), ("-2", Int4)]),
            "1200|numeric"
        );
        assert_eq!(ok("round", &[("5", Int4), ("1", Int4)]), "5.0|numeric");
        assert_eq!(ok("ceil", &[("-2.5", num)]), "-2|numeric");
        assert_eq!(ok("floor", &[("2.5", Float8)]), "2|double precision");
        assert_eq!(ok("trunc", &[("-2.7", num)]), "-2|numeric");
        assert_eq!(
            ok("trunc", &[("1234.5678", num), ("1", Int4)]),
            "1234.5|numeric"
        );
        assert_eq!(ok("mod", &[("7", Int4), ("3", Int4)]), "1|integer");
        assert_eq!(ok("mod", &[("7", Int8), ("3", Int4)]), "1|bigint");
        assert_eq!(ok("mod", &[("7.5", num), ("2", Int4)]), "1.5|numeric");
        assert_eq!(
            ok("power", &[("2", Int4), ("10", Int4)]),
            "1024|double precision"
        );
        assert_eq!(
            ok("power", &[("2.0", num), ("10", Int4)]),
            "1024.0000000000000000|numeric"
        );
        assert_eq!(ok("sqrt", &[("16", Int4)]), "4|double precision");
        assert_eq!(ok("sqrt", &[("2.0", num)]), "1.414213562373095|numeric");
        assert_eq!(ok("abs", &[("-5", Int4)]), "5|integer");
        assert_eq!(ok("abs", &[("-5.5", num)]), "5.5|numeric");
        assert_eq!(ok("abs", &[("-5", Int2)]), "5|smallint");
        assert_eq!(ok("sign", &[("-2.5", num)]), "-1|numeric");
        assert_eq!(ok("log", &[("100", Int4)]), "2|double precision");
        assert_eq!(ok("pi", &[]), "3.141592653589793|double precision");
        assert_eq!(ok("abs", &[("NULL", Int4)]), "|integer");
        let e = call("sqrt", &[("-1", Float8)]).unwrap_err();
        assert_eq!(e.message, "cannot take square root of a negative number");
        let e = call("lower", &[("1", Int4)]).unwrap_err();
        assert_eq!(e.message, "function lower(integer) does not exist");
    }

    #[test]
    fn string_and_date_functions_match_postgres() {
        assert_eq!(ok("length", &[("ab  ", Char(4))]), "2|integer");
        assert_eq!(ok("length", &[("héllo", Text)]), "5|integer");
        assert_eq!(ok("octet_length", &[("héllo", Text)]), "6|integer");
        assert_eq!(ok("upper", &[("héllo", Text)]), "HÉLLO|text");
        assert_eq!(
            ok("substring", &[("hello", Text), ("2", Int4), ("3", Int4)]),
            "ell|text"
        );
        assert_eq!(ok("strpos", &[("hello", Text), ("lo", Text)]), "4|integer");
        assert_eq!(ok("btrim", &[("xxaxx", Text), ("x", Text)]), "a|text");
        assert_eq!(
            ok("replace", &[("hello", Text), ("l", Text), ("L", Text)]),
            "heLLo|text"
        );
        assert_eq!(
            ok(
                "concat",
                &[
                    ("a", Unknown),
                    ("1", Int4),
                    ("NULL", Int4),
                    ("2.5", Numeric(None))
                ]
            ),
            "a12.5|text"
        );
        assert_eq!(
            ok(
                "concat_ws",
                &[
                    (",", Unknown),
                    ("a", Unknown),
                    ("NULL", Text),
                    ("b", Unknown)
                ]
            ),
            "a,b|text"
        );
        assert_eq!(
            ok("lpad", &[("hi", Text), ("5", Int4), ("xy", Text)]),
            "xyxhi|text"
        );
        assert_eq!(ok("repeat", &[("ab", Text), ("3", Int4)]), "ababab|text");
        assert_eq!(ok("reverse", &[("abc", Text)]), "cba|text");
        let ts = "2001-02-16 20:38:40.5";
        assert_eq!(
            ok("date_part", &[("year", Unknown), (ts, Timestamp(None))]),
            "2001|double precision"
        );
        assert_eq!(
            ok("date_part", &[("second", Unknown), (ts, Timestamp(None))]),
            "40.5|double precision"
        );
        assert_eq!(
            ok("date_part", &[("epoch", Unknown), ("2001-02-16", Date)]),
            "982281600|double precision"
        );
        assert_eq!(
            ok("extract", &[("year", Unknown), ("2001-02-16", Date)]),
            "2001|numeric"
        );
        assert_eq!(
            ok("date_trunc", &[("month", Unknown), ("2001-02-16", Date)]),
            "2001-02-01 00:00:00|timestamp without time zone"
        );
        assert_eq!(
            ok(
                "date_trunc",
                &[("hour", Unknown), ("1 day 02:30", Interval)]
            ),
            "1 day 02:00:00|interval"
        );
    }
}
