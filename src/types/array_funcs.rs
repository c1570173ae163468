//! The array functions and the array forms of expressions, as scalar
//! functions the binder resolves and the evaluator calls: `ARRAY[...]`,
//! subscripts and slices, `x op ANY/ALL (array)`, `||` on arrays,
//! `array_length` and its relatives, `array_append` ... `array_replace`,
//! `array_to_string`, `string_to_array`, and the `VARIADIC` calls of
//! `concat`, `concat_ws` and `format`.
//!
//! Argument types follow PostgreSQL's polymorphic resolution for the cases
//! the regression files use (`anycompatiblearray` / `anycompatible`): the
//! element type is the common type of the array's elements and the value
//! beside it; an untyped literal takes the other side's type. None of these
//! is strict as a whole: each handles NULL as PostgreSQL's C function does
//! (`array_append(NULL, 1)` is `{1}`, `array_position` finds NULL).

use super::array::Array;
use super::cast::common_type;
use super::datatype::DataType;
use super::funcs::{no_function, Resolved, ScalarFunc};
use super::ops::BinaryOp;
use super::value::Value;
use crate::err;
use crate::error::{Error, Result};
use std::cmp::Ordering;

/// Which `VARIADIC` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variadic {
    /// `concat(VARIADIC arr)`.
    Concat,
    /// `concat_ws(sep, VARIADIC arr)`.
    ConcatWs,
    /// `format(fmt, VARIADIC arr)`.
    Format,
}

/// An array function (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayFunc {
    /// `ARRAY[a, b, ...]` of elements of this type.
    Construct(DataType),
    /// `arr[i]`.
    Subscript,
    /// `arr[lo:hi]`, with which bounds were given.
    Slice(bool, bool),
    /// `x op ANY (arr)` (`false`) or `x op ALL (arr)` (`true`).
    Quantified(BinaryOp, bool),
    /// `x [NOT] LIKE | ILIKE ANY | ALL (arr)`: (ALL, NOT, ILIKE).
    LikeQuantified(bool, bool, bool),
    /// `array_length(arr, dim)`.
    Length,
    /// `cardinality(arr)`.
    Cardinality,
    /// `array_lower(arr, dim)`.
    Lower,
    /// `array_upper(arr, dim)`.
    Upper,
    /// `array_ndims(arr)`.
    Ndims,
    /// `array_dims(arr)`.
    Dims,
    /// `array_append(arr, x)` / `arr || x`, of this element type.
    Append(DataType),
    /// `array_prepend(x, arr)` / `x || arr`.
    Prepend(DataType),
    /// `array_cat(a, b)` / `a || b`.
    Cat(DataType),
    /// `array_position(arr, x [, start])`.
    Position,
    /// `array_positions(arr, x)`.
    Positions,
    /// `array_remove(arr, x)`.
    Remove,
    /// `array_replace(arr, from, to)`.
    Replace,
    /// `array_to_string(arr, sep [, null])`.
    ToString,
    /// `string_to_array(s, sep [, null])`.
    StringToArray,
    /// A `VARIADIC` call.
    Variadic(Variadic),
}

/// PostgreSQL's error for a polymorphic argument of type unknown (42804).
fn unknown_polymorphic() -> Error {
    err!(
        DatatypeMismatch,
        "could not determine polymorphic type because input has type unknown"
    )
}

impl ArrayFunc {
    /// Looks an array function up by its SQL name.
    pub fn from_name(name: &str) -> Option<ArrayFunc> {
        use ArrayFunc::*;
        Some(match name {
            "array_length" => Length,
            "cardinality" => Cardinality,
            "array_lower" => Lower,
            "array_upper" => Upper,
            "array_ndims" => Ndims,
            "array_dims" => Dims,
            "array_append" => Append(DataType::Unknown),
            "array_prepend" => Prepend(DataType::Unknown),
            "array_cat" => Cat(DataType::Unknown),
            "array_position" => Position,
            "array_positions" => Positions,
            "array_remove" => Remove,
            "array_replace" => Replace,
            "array_to_string" => ToString,
            "string_to_array" => StringToArray,
            _ => return None,
        })
    }

    /// The SQL name, for messages and EXPLAIN.
    pub fn name(self) -> &'static str {
        use ArrayFunc::*;
        match self {
            Construct(_) => "array",
            Subscript | Slice(..) => "array_subscript",
            Quantified(_, false) => "any",
            Quantified(_, true) => "all",
            LikeQuantified(..) => "like_any",
            Length => "array_length",
            Cardinality => "cardinality",
            Lower => "array_lower",
            Upper => "array_upper",
            Ndims => "array_ndims",
            Dims => "array_dims",
            Append(_) => "array_append",
            Prepend(_) => "array_prepend",
            Cat(_) => "array_cat",
            Position => "array_position",
            Positions => "array_positions",
            Remove => "array_remove",
            Replace => "array_replace",
            ToString => "array_to_string",
            StringToArray => "string_to_array",
            Variadic(self::Variadic::Concat) => "concat",
            Variadic(self::Variadic::ConcatWs) => "concat_ws",
            Variadic(self::Variadic::Format) => "format",
        }
    }

    /// Resolves the argument and result types of a call by name.
    pub fn resolve(self, args: &[DataType]) -> Result<Resolved> {
        use ArrayFunc::*;
        use DataType as T;
        let ok = |func: ArrayFunc, arg_types: Vec<DataType>, result: DataType| {
            Ok(Resolved {
                func: ScalarFunc::Array(func),
                arg_types,
                result,
            })
        };
        let none = || Err(no_function(self.name(), args));
        let is_int = |t: &DataType| matches!(t, T::Int2 | T::Int4 | T::Int8 | T::Unknown);
        let is_str = |t: &DataType| t.is_string() || *t == T::Unknown;
        // An untyped array argument beside a typed value is an array of
        // the value's type (`array_positions(NULL, 10)`).
        let args: Vec<DataType> = match (self, args) {
            (Position | Positions | Remove | Replace, [T::Unknown, x, ..]) if *x != T::Unknown => {
                let mut v = args.to_vec();
                v[0] = DataType::array_of(*x);
                v
            }
            _ => args.to_vec(),
        };
        let args = &args[..];
        // The array argument: an array type, or unknown (an error).
        let array = |t: &DataType| -> Result<Option<DataType>> {
            match t {
                T::Array(e) => Ok(Some(**e)),
                T::Unknown => Err(unknown_polymorphic()),
                _ => Ok(None),
            }
        };
        // The common element type of an array's elements and a value.
        let with_value = |e: DataType, x: &DataType| -> Option<DataType> {
            if *x == T::Unknown {
                return Some(e);
            }
            common_type(&e, x).filter(|t| *t == e || super::cast::can_implicitly_cast(&e, t))
        };
        match (self, args) {
            (Length | Lower | Upper, [a, d]) if is_int(d) => match array(a)? {
                Some(_) => ok(self, vec![*a, T::Int4], T::Int4),
                None => none(),
            },
            (Cardinality | Ndims | Dims, [a]) => match array(a)? {
                Some(_) => {
                    let result = if self == Dims { T::Text } else { T::Int4 };
                    ok(self, vec![*a], result)
                }
                None => none(),
            },
            (Append(_), [a, x]) => {
                let e = match (a, x) {
                    (T::Unknown, T::Unknown) => return Err(unknown_polymorphic()),
                    (T::Unknown, x) => *x,
                    (a, _) => match array(a)?.and_then(|e| with_value(e, x)) {
                        Some(e) => e,
                        None => return none(),
                    },
                };
                let at = DataType::array_of(e);
                ok(Append(e), vec![at, e], at)
            }
            (Prepend(_), [x, a]) => {
                let e = match (x, a) {
                    (T::Unknown, T::Unknown) => return Err(unknown_polymorphic()),
                    (x, T::Unknown) => *x,
                    (_, a) => match array(a)?.and_then(|e| with_value(e, x)) {
                        Some(e) => e,
                        None => return none(),
                    },
                };
                let at = DataType::array_of(e);
                ok(Prepend(e), vec![e, at], at)
            }
            (Cat(_), [a, b]) => {
                let e = match (a, b) {
                    (T::Unknown, T::Unknown) => return Err(unknown_polymorphic()),
                    (T::Unknown, b) => array(b)?,
                    (a, T::Unknown) => array(a)?,
                    (a, b) => match (array(a)?, array(b)?) {
                        (Some(x), Some(y)) => common_type(&x, &y),
                        _ => None,
                    },
                };
                let Some(e) = e else { return none() };
                let at = DataType::array_of(e);
                ok(Cat(e), vec![at, at], at)
            }
            (Position | Positions | Remove, [a, x, rest @ ..])
                if rest.len() <= usize::from(self == Position) && rest.iter().all(is_int) =>
            {
                let Some(e) = array(a)?.and_then(|e| with_value(e, x)) else {
                    return none();
                };
                let at = DataType::array_of(e);
                let mut types = vec![at, e];
                types.extend(rest.iter().map(|_| T::Int4));
                let result = match self {
                    Position => T::Int4,
                    Positions => DataType::array_of(T::Int4),
                    _ => at,
                };
                ok(self, types, result)
            }
            (Replace, [a, x, y]) => {
                let Some(e) = array(a)?
                    .and_then(|e| with_value(e, x))
                    .and_then(|e| with_value(e, y))
                else {
                    return none();
                };
                let at = DataType::array_of(e);
                ok(self, vec![at, e, e], at)
            }
            (ToString, [a, s, rest @ ..])
                if rest.len() <= 1 && is_str(s) && rest.iter().all(is_str) =>
            {
                match array(a)? {
                    Some(_) => {
                        let mut types = vec![*a, T::Text];
                        types.extend(rest.iter().map(|_| T::Text));
                        ok(self, types, T::Text)
                    }
                    None => none(),
                }
            }
            (StringToArray, [s, d, rest @ ..])
                if rest.len() <= 1 && is_str(s) && is_str(d) && rest.iter().all(is_str) =>
            {
                ok(self, vec![T::Text; args.len()], DataType::array_of(T::Text))
            }
            _ => none(),
        }
    }

    /// Evaluates the function on arguments cast to the resolved types.
    pub fn eval(self, args: &[Value]) -> Result<Value> {
        use ArrayFunc::*;
        match self {
            Construct(elem) => return Ok(Array::new(elem, args.to_vec()).into_value()),
            Quantified(op, all) => return quantified(op, all, args),
            LikeQuantified(all, negated, ci) => return like_quantified([all, negated, ci], args),
            Append(elem) | Prepend(elem) | Cat(elem) => return concat(self, elem, args),
            Variadic(v) => return variadic(v, args),
            Position | Positions | Remove | Replace => return search(self, args),
            StringToArray => return string_to_array(args),
            ToString => return array_to_string(args),
            _ => {}
        }
        if args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        let Some(Value::Array(a)) = args.first() else {
            return Err(err!(
                InternalError,
                "{} called without an array",
                self.name()
            ));
        };
        let int = |i: usize| args.get(i).and_then(Value::as_i64).unwrap_or(0);
        let n = a.items.len();
        let dim_ok = |d: i64| d == 1 && n > 0;
        Ok(match self {
            Subscript => a.get(int(1)),
            Slice(has_lo, has_hi) => {
                let lo = if has_lo { int(1) } else { a.lower as i64 };
                let hi = match (has_lo, has_hi) {
                    (_, false) => a.upper() as i64,
                    (true, true) => int(2),
                    (false, true) => int(1),
                };
                let lo = lo.max(a.lower as i64);
                let hi = hi.min(a.upper() as i64);
                let items = if lo > hi {
                    Vec::new()
                } else {
                    (lo..=hi).map(|i| a.get(i)).collect()
                };
                Array::new(a.elem, items).into_value()
            }
            Length if dim_ok(int(1)) => Value::Int4(n as i32),
            Lower if dim_ok(int(1)) => Value::Int4(a.lower),
            Upper if dim_ok(int(1)) => Value::Int4(a.upper()),
            Length | Lower | Upper => Value::Null,
            Cardinality => Value::Int4(n as i32),
            Ndims if n > 0 => Value::Int4(1),
            Dims if n > 0 => Value::text(&format!("[{}:{}]", a.lower, a.upper())),
            Ndims | Dims => Value::Null,
            _ => {
                return Err(err!(
                    InternalError,
                    "{} evaluated out of place",
                    self.name()
                ))
            }
        })
    }
}

/// `x op ANY/ALL (arr)` with SQL's three-valued logic: an empty array gives
/// false (ANY) or true (ALL) whatever `x` is.
fn quantified(op: BinaryOp, all: bool, args: &[Value]) -> Result<Value> {
    let (x, arr) = (&args[0], &args[1]);
    let Value::Array(a) = arr else {
        return Ok(Value::Null);
    };
    if a.items.is_empty() {
        return Ok(Value::Bool(all));
    }
    if x.is_null() {
        return Ok(Value::Null);
    }
    let mut saw_null = false;
    for item in &a.items {
        match super::ops::eval_binary_typed(op, x, item, Some(&a.elem))? {
            Value::Bool(b) if b != all => return Ok(Value::Bool(b)),
            Value::Bool(_) => {}
            _ => saw_null = true,
        }
    }
    Ok(if saw_null {
        Value::Null
    } else {
        Value::Bool(all)
    })
}

/// `x [NOT] LIKE | ILIKE ANY | ALL (arr)` with the logic of
/// [`quantified`].
fn like_quantified(flags: [bool; 3], args: &[Value]) -> Result<Value> {
    let [all, negated, ci] = flags;
    let (x, arr) = (&args[0], &args[1]);
    let Value::Array(a) = arr else {
        return Ok(Value::Null);
    };
    if a.items.is_empty() {
        return Ok(Value::Bool(all));
    }
    let Value::Text(s) = x else {
        return Ok(Value::Null);
    };
    let mut saw_null = false;
    for item in &a.items {
        let Value::Text(p) = item else {
            saw_null = true;
            continue;
        };
        let b = super::funcs::string::like(s, p, ci)? != negated;
        if b != all {
            return Ok(Value::Bool(b));
        }
    }
    Ok(if saw_null {
        Value::Null
    } else {
        Value::Bool(all)
    })
}

/// `array_append`, `array_prepend`, `array_cat` (and `||`): a NULL array
/// counts as empty; `array_cat` of two NULLs is NULL.
fn concat(f: ArrayFunc, elem: DataType, args: &[Value]) -> Result<Value> {
    let items = |v: &Value| match v {
        Value::Array(a) => a.items.clone(),
        _ => Vec::new(),
    };
    let lower = |v: &Value| match v {
        Value::Array(a) if !a.items.is_empty() => a.lower,
        _ => 1,
    };
    Ok(match f {
        ArrayFunc::Append(_) => {
            let mut v = items(&args[0]);
            v.push(args[1].clone());
            Array {
                elem,
                lower: lower(&args[0]),
                items: v,
            }
            .into_value()
        }
        ArrayFunc::Prepend(_) => {
            let mut v = vec![args[0].clone()];
            v.extend(items(&args[1]));
            Array {
                elem,
                lower: lower(&args[1]),
                items: v,
            }
            .into_value()
        }
        _ => {
            if args[0].is_null() && args[1].is_null() {
                return Ok(Value::Null);
            }
            if args[1].is_null() || items(&args[1]).is_empty() {
                return Ok(args[0].clone()).map(|v| if v.is_null() { args[1].clone() } else { v });
            }
            if args[0].is_null() || items(&args[0]).is_empty() {
                return Ok(args[1].clone());
            }
            let mut v = items(&args[0]);
            v.extend(items(&args[1]));
            Array {
                elem,
                lower: lower(&args[0]),
                items: v,
            }
            .into_value()
        }
    })
}

/// Whether two elements are not distinct (NULL matches NULL).
fn same(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => super::compare::compare(a, b) == Ordering::Equal,
        _ => false,
    }
}

/// `array_position(s)`, `array_remove`, `array_replace`.
fn search(f: ArrayFunc, args: &[Value]) -> Result<Value> {
    let Value::Array(a) = &args[0] else {
        return Ok(Value::Null);
    };
    let x = &args[1];
    Ok(match f {
        ArrayFunc::Position => {
            let start = match args.get(2) {
                Some(Value::Null) => {
                    return Err(err!(
                        NullValueNotAllowed,
                        "initial position must not be null"
                    ))
                }
                Some(v) => v.as_i64().unwrap_or(1),
                None => a.lower as i64,
            };
            let found = a
                .items
                .iter()
                .enumerate()
                .map(|(k, v)| (a.lower as i64 + k as i64, v))
                .find(|(i, v)| *i >= start && same(v, x));
            found.map_or(Value::Null, |(i, _)| Value::Int4(i as i32))
        }
        ArrayFunc::Positions => {
            let items = a
                .items
                .iter()
                .enumerate()
                .filter(|(_, v)| same(v, x))
                .map(|(k, _)| Value::Int4(a.lower + k as i32))
                .collect();
            Array::new(DataType::Int4, items).into_value()
        }
        ArrayFunc::Remove => {
            let items: Vec<Value> = a.items.iter().filter(|v| !same(v, x)).cloned().collect();
            if items.len() == a.items.len() {
                return Ok(args[0].clone());
            }
            Array::new(a.elem, items).into_value()
        }
        _ => {
            let to = &args[2];
            let items = a
                .items
                .iter()
                .map(|v| if same(v, x) { to.clone() } else { v.clone() })
                .collect();
            Array {
                elem: a.elem,
                lower: a.lower,
                items,
            }
            .into_value()
        }
    })
}

/// `array_to_string(arr, sep [, null_string])`.
fn array_to_string(args: &[Value]) -> Result<Value> {
    let (Value::Array(a), Value::Text(sep)) = (&args[0], &args[1]) else {
        return Ok(Value::Null);
    };
    let null = match args.get(2) {
        Some(Value::Text(s)) => Some(&**s),
        _ => None,
    };
    let mut out = String::new();
    let mut first = true;
    for v in &a.items {
        let text = if v.is_null() {
            match null {
                Some(s) => s.to_string(),
                None => continue,
            }
        } else {
            let mut s = String::new();
            super::io::format_value(v, &mut s);
            s
        };
        if !first {
            out.push_str(sep);
        }
        first = false;
        out.push_str(&text);
    }
    Ok(Value::text(&out))
}

/// `string_to_array(s, sep [, null_string])`: a NULL separator splits into
/// characters, an empty one gives the whole string.
fn string_to_array(args: &[Value]) -> Result<Value> {
    let Value::Text(s) = &args[0] else {
        return Ok(Value::Null);
    };
    let null = match args.get(2) {
        Some(Value::Text(n)) => Some(&**n),
        _ => None,
    };
    let parts: Vec<String> = if s.is_empty() {
        Vec::new()
    } else {
        match &args[1] {
            Value::Text(sep) if sep.is_empty() => vec![s.to_string()],
            Value::Text(sep) => s.split(&**sep).map(str::to_string).collect(),
            _ => s.chars().map(|c| c.to_string()).collect(),
        }
    };
    let items = parts
        .into_iter()
        .map(|p| {
            if Some(p.as_str()) == null {
                Value::Null
            } else {
                Value::text(&p)
            }
        })
        .collect();
    Ok(Array::new(DataType::Text, items).into_value())
}

/// A `VARIADIC` call: the array's elements become the trailing arguments.
/// A NULL array makes `concat` and `concat_ws` NULL and gives `format` no
/// arguments beyond its format string.
fn variadic(v: Variadic, args: &[Value]) -> Result<Value> {
    let (last, fixed) = args
        .split_last()
        .ok_or_else(|| err!(InternalError, "VARIADIC call without arguments"))?;
    let mut all = fixed.to_vec();
    match last {
        Value::Array(a) => all.extend(a.items.iter().cloned()),
        _ if v != Variadic::Format => return Ok(Value::Null),
        _ => {}
    }
    let f = match v {
        Variadic::Concat => ScalarFunc::Concat,
        Variadic::ConcatWs => ScalarFunc::ConcatWs,
        Variadic::Format => ScalarFunc::Format,
    };
    f.eval(&all)
}
