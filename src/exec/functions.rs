//! Scalar functions: name resolution for the binder and the call the
//! evaluator makes per row.
//!
//! A function is found by name and argument types with [`resolve`], which
//! returns a [`Func`] (an entry of the static table [`FUNCS`]), the types
//! each argument must be cast to, and the result type. Implementations get
//! the argument values already cast and non-NULL unless the entry is marked
//! `null_in` (then they see NULLs themselves); a strict function with a NULL
//! argument yields NULL without being called, as PostgreSQL's `STRICT`.

use std::fmt;

use crate::err;
use crate::error::Result;
use crate::types::{self, DataType, Value};

/// The signature check of a function: given the argument types, the types
/// to cast them to and the result type, or `None` if they do not fit.
type Resolver = fn(&[DataType]) -> Option<(Vec<DataType>, DataType)>;
/// The implementation: argument values (cast as the resolver said) and the
/// result type.
type Imp = fn(&[Value], &DataType) -> Result<Value>;

/// One scalar function.
pub struct FuncDef {
    /// The SQL name.
    pub name: &'static str,
    resolve: Resolver,
    imp: Imp,
    /// Whether the implementation handles NULL arguments itself.
    null_in: bool,
}

/// A resolved function, cheap to copy.
#[derive(Clone, Copy)]
pub struct Func(&'static FuncDef);

impl fmt::Debug for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Func {
    /// The function's SQL name.
    pub fn name(&self) -> &'static str {
        self.0.name
    }

    /// Calls the function on one row of arguments.
    pub fn call(&self, args: &[Value], ty: &DataType) -> Result<Value> {
        if !self.0.null_in && args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        (self.0.imp)(args, ty)
    }
}

/// Finds `name(args)`: the function, the argument cast targets and the
/// result type; `function name(types) does not exist` (42883) otherwise.
pub fn resolve(name: &str, args: &[DataType]) -> Result<(Func, Vec<DataType>, DataType)> {
    for def in FUNCS {
        if def.name == name {
            if let Some((casts, ty)) = (def.resolve)(args) {
                return Ok((Func(def), casts, ty));
            }
        }
    }
    let list: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    Err(err!(
        UndefinedFunction,
        "function {name}({}) does not exist",
        list.join(", ")
    )
    .with_hint(
        "No function matches the given name and argument types. You might need to add explicit type casts.",
    ))
}

fn is_text(t: &DataType) -> bool {
    t.is_string() || *t == DataType::Unknown
}

fn one_text(a: &[DataType], ret: DataType) -> Option<(Vec<DataType>, DataType)> {
    (a.len() == 1 && is_text(&a[0])).then(|| (vec![DataType::Text], ret))
}

fn text_arg(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn int_arg(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// Every scalar function heapdb has.
pub static FUNCS: &[FuncDef] = &[
    FuncDef {
        name: "abs",
        resolve: |a| {
            (a.len() == 1 && (a[0].is_numeric() || a[0] == DataType::Unknown)).then(|| {
                let t = if a[0] == DataType::Unknown {
                    DataType::Float8
                } else {
                    a[0].without_typmod()
                };
                (vec![t], t)
            })
        },
        imp: |v, _| match &v[0] {
            Value::Int2(x) => x.checked_abs().map(Value::Int2).ok_or_else(types::int::int2_out_of_range),
            Value::Int4(x) => x.checked_abs().map(Value::Int4).ok_or_else(types::int::int4_out_of_range),
            Value::Int8(x) => x.checked_abs().map(Value::Int8).ok_or_else(types::int::int8_out_of_range),
            Value::Float4(x) => Ok(Value::Float4(x.abs())),
            Value::Float8(x) => Ok(Value::Float8(x.abs())),
            Value::Numeric(n) => Ok(Value::numeric(n.abs())),
            other => Ok(other.clone()),
        },
        null_in: false,
    },
    FuncDef {
        name: "length",
        resolve: |a| one_text(a, DataType::Int4),
        imp: |v, _| Ok(Value::Int4(types::text::char_len(text_arg(&v[0])) as i32)),
        null_in: false,
    },
    FuncDef {
        name: "char_length",
        resolve: |a| one_text(a, DataType::Int4),
        imp: |v, _| Ok(Value::Int4(types::text::char_len(text_arg(&v[0])) as i32)),
        null_in: false,
    },
    FuncDef {
        name: "lower",
        resolve: |a| one_text(a, DataType::Text),
        imp: |v, _| Ok(Value::text(&text_arg(&v[0]).to_lowercase())),
        null_in: false,
    },
    FuncDef {
        name: "upper",
        resolve: |a| one_text(a, DataType::Text),
        imp: |v, _| Ok(Value::text(&text_arg(&v[0]).to_uppercase())),
        null_in: false,
    },
    FuncDef {
        name: "substring",
        resolve: |a| {
            let ok = (a.len() == 2 || a.len() == 3)
                && is_text(&a[0])
                && a[1..].iter().all(|t| matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Unknown));
            ok.then(|| {
                let mut casts = vec![DataType::Text, DataType::Int8];
                if a.len() == 3 {
                    casts.push(DataType::Int8);
                }
                (casts, DataType::Text)
            })
        },
        imp: |v, _| substring(text_arg(&v[0]), int_arg(&v[1]), v.get(2).map(int_arg)),
        null_in: false,
    },
    FuncDef {
        name: "round",
        resolve: |a| match a {
            [t] if *t == DataType::Float8 || *t == DataType::Float4 => {
                Some((vec![DataType::Float8], DataType::Float8))
            }
            [t] if t.is_numeric() || *t == DataType::Unknown => {
                Some((vec![DataType::Numeric(None)], DataType::Numeric(None)))
            }
            [t, s] if (t.is_numeric() || *t == DataType::Unknown)
                && matches!(s, DataType::Int2 | DataType::Int4 | DataType::Unknown) =>
            {
                Some((vec![DataType::Numeric(None), DataType::Int4], DataType::Numeric(None)))
            }
            _ => None,
        },
        imp: |v, _| match &v[0] {
            Value::Float8(x) => Ok(Value::Float8(x.round_ties_even())),
            Value::Numeric(n) => {
                let scale = v.get(1).map(int_arg).unwrap_or(0);
                Ok(Value::numeric(n.round_scale(scale as i32)))
            }
            other => Ok(other.clone()),
        },
        null_in: false,
    },
];

/// `substring(s from start for count)` with PostgreSQL's rules for starts
/// before 1 and negative counts.
fn substring(s: &str, start: i64, count: Option<i64>) -> Result<Value> {
    let end = match count {
        Some(c) if c < 0 => {
            return Err(err!(InvalidParameterValue, "negative substring length not allowed"))
        }
        Some(c) => start.saturating_add(c),
        None => i64::MAX,
    };
    let from = start.max(1);
    if end <= from {
        return Ok(Value::text(""));
    }
    let out: String = s
        .chars()
        .skip((from - 1) as usize)
        .take((end - from) as usize)
        .collect();
    Ok(Value::text(&out))
}

/// SQL `LIKE` (or `ILIKE` when `ci`): `%` any run, `_` one character,
/// backslash escapes the next character.
pub fn like(s: &str, pattern: &str, ci: bool) -> Result<bool> {
    let (s, p): (Vec<char>, Vec<char>) = if ci {
        (s.to_lowercase().chars().collect(), pattern.to_lowercase().chars().collect())
    } else {
        (s.chars().collect(), pattern.chars().collect())
    };
    if p.last() == Some(&'\\') && !p.ends_with(&['\\', '\\']) {
        return Err(err!(
            InvalidParameterValue,
            "LIKE pattern must not end with escape character"
        ));
    }
    Ok(like_at(&s, &p))
}

fn like_at(s: &[char], p: &[char]) -> bool {
    let (mut si, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                '%' => {
                    star = Some((pi, si));
                    pi += 1;
                    continue;
                }
                '_' => {
                    si += 1;
                    pi += 1;
                    continue;
                }
                '\\' if pi + 1 < p.len() => {
                    if p[pi + 1] == s[si] {
                        si += 1;
                        pi += 2;
                        continue;
                    }
                }
                c if c == s[si] => {
                    si += 1;
                    pi += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '%')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like("hello", "h%o", false).unwrap());
        assert!(like("hello", "h_llo", false).unwrap());
        assert!(!like("hello", "h_lo", false).unwrap());
        assert!(like("HeLLo", "hello", true).unwrap());
        assert!(like("50%", "50\\%", false).unwrap());
        assert!(!like("500", "50\\%", false).unwrap());
        assert!(like("", "%", false).unwrap());
        assert!(like("abcabc", "%abc", false).unwrap());
        assert!(like("a", "a\\", false).is_err());
    }

    #[test]
    fn resolution_and_strictness() {
        let (f, casts, ty) = resolve("length", &[DataType::Varchar(Some(3))]).unwrap();
        assert_eq!((casts, ty), (vec![DataType::Text], DataType::Int4));
        assert_eq!(f.call(&[Value::text("héllo")], &ty).unwrap(), Value::Int4(5));
        assert!(f.call(&[Value::Null], &ty).unwrap().is_null());
        let e = resolve("length", &[DataType::Int4]).unwrap_err();
        assert_eq!(e.message, "function length(integer) does not exist");
        assert_eq!(
            substring("hello", 0, Some(3)).unwrap(),
            Value::text("he"),
            "PostgreSQL: substring('hello' from 0 for 3) = 'he'"
        );
        let (f, _, ty) = resolve("abs", &[DataType::Int4]).unwrap();
        assert!(f.call(&[Value::Int4(i32::MIN)], &ty).is_err());
    }
}
