//! The `json` and `jsonb` functions and operators as the binder sees them:
//! [`JsonFunc`] is one entry of the scalar function registry
//! ([`ScalarFunc::Json`](crate::types::funcs::ScalarFunc::Json)), found by
//! name ([`JsonFunc::from_name`]) or, for an operator, by
//! [`resolve_operator`]; [`JsonFunc::resolve`] picks argument and result
//! types and [`JsonFunc::eval`] runs it.
//!
//! Every function is strict (NULL in, NULL out) except the build
//! functions, which turn SQL NULL into JSON `null`. Which arguments of a
//! build function are of type `json` (embedded as they are rather than as
//! strings) is decided at resolution and carried in the function value.

use super::convert::{key_text, to_jsonb, write_json};
use super::jsonb::Jsonb;
use super::ops::{self, Edit, JsonDoc, Step};
use crate::err;
use crate::error::{Error, Result};
use crate::types::datatype::DataType;
use crate::types::funcs::{no_function, Resolved, ScalarFunc};
use crate::types::value::Value;
use std::sync::Arc;

/// The JSON operators, as the grammar spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonOp {
    /// `->`
    Arrow,
    /// `->>`
    LongArrow,
    /// `#>`
    HashArrow,
    /// `#>>`
    HashLongArrow,
    /// `@>`
    Contains,
    /// `<@`
    ContainedBy,
    /// `?`
    Exists,
    /// `?|`
    ExistsAny,
    /// `?&`
    ExistsAll,
    /// `#-`
    HashMinus,
    /// `||` with a `jsonb` side.
    Concat,
    /// `-` with a `jsonb` left side.
    Minus,
}

impl JsonOp {
    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            JsonOp::Arrow => "->",
            JsonOp::LongArrow => "->>",
            JsonOp::HashArrow => "#>",
            JsonOp::HashLongArrow => "#>>",
            JsonOp::Contains => "@>",
            JsonOp::ContainedBy => "<@",
            JsonOp::Exists => "?",
            JsonOp::ExistsAny => "?|",
            JsonOp::ExistsAll => "?&",
            JsonOp::HashMinus => "#-",
            JsonOp::Concat => "||",
            JsonOp::Minus => "-",
        }
    }
}

/// A JSON function or operator (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonFunc {
    /// `->` / `->>` with a text key.
    Field { jsonb: bool, text: bool },
    /// `->` / `->>` with an integer index.
    Elem { jsonb: bool, text: bool },
    /// `#>` / `#>>` (one text[] argument) or `json[b]_extract_path[_text]`
    /// (the path as separate text arguments, `variadic`).
    Path {
        jsonb: bool,
        text: bool,
        variadic: bool,
    },
    /// `@>`
    Contains,
    /// `<@`
    ContainedBy,
    /// `?`
    Exists,
    /// `?|`
    ExistsAny,
    /// `?&`
    ExistsAll,
    /// `jsonb || jsonb`
    Concat,
    /// `jsonb - text`
    DeleteKey,
    /// `jsonb - text[]`
    DeleteKeys,
    /// `jsonb - integer`
    DeleteIndex,
    /// `jsonb #- text[]`
    DeletePath,
    /// `json[b]_typeof`
    Typeof { jsonb: bool },
    /// `json[b]_array_length`
    ArrayLength { jsonb: bool },
    /// `json[b]_build_object(variadic "any")`; bit `i` of `json_args` is
    /// set when argument `i` is of type `json`.
    BuildObject { jsonb: bool, json_args: u64 },
    /// `json[b]_build_array(variadic "any")`.
    BuildArray { jsonb: bool, json_args: u64 },
    /// `json[b]_object(text[])` / `(keys text[], values text[])`.
    Object { jsonb: bool },
    /// `to_json` / `to_jsonb` / `array_to_json`.
    ToJson { jsonb: bool, json_arg: bool },
    /// `array_to_json(anyarray [, pretty])`.
    ArrayToJson,
    /// `jsonb_set(target, path, new [, create_missing])`.
    Set,
    /// `jsonb_insert(target, path, new [, insert_after])`.
    Insert,
    /// `jsonb_strip_nulls`
    StripNulls,
    /// `jsonb_pretty`
    Pretty,
}

fn text_array() -> DataType {
    DataType::array_of(DataType::Text)
}

fn json_type(jsonb: bool) -> DataType {
    if jsonb {
        DataType::Jsonb
    } else {
        DataType::Json
    }
}

fn ok(func: JsonFunc, arg_types: Vec<DataType>, result: DataType) -> Result<Resolved> {
    Ok(Resolved {
        func: ScalarFunc::Json(func),
        arg_types,
        result,
    })
}

fn op_error(op: JsonOp, l: &DataType, r: &DataType) -> Error {
    if *l == DataType::Unknown && matches!(op, JsonOp::Arrow | JsonOp::LongArrow) {
        return err!(AmbiguousFunction, "operator is not unique: {l} {} {r}", op.symbol())
            .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts.");
    }
    err!(UndefinedFunction, "operator does not exist: {l} {} {r}", op.symbol())
        .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

/// Resolves `l op r` for a JSON operator; `Ok(None)` when `||` or `-` is
/// not the `jsonb` one (the caller then resolves it as usual).
pub fn resolve_operator(op: JsonOp, l: &DataType, r: &DataType) -> Result<Option<Resolved>> {
    use DataType::*;
    let is_text = |t: &DataType| t.is_string() || *t == Unknown;
    let is_text_array = |t: &DataType| *t == text_array() || *t == Unknown;
    let jb = |t: &DataType| matches!(t, Jsonb | Unknown);
    let arr = text_array();
    let r = match op {
        JsonOp::Arrow | JsonOp::LongArrow => {
            let text = op == JsonOp::LongArrow;
            let jsonb = *l == Jsonb;
            let result = if text { Text } else { json_type(jsonb) };
            match (l, r) {
                (Json | Jsonb, r) if is_text(r) => {
                    ok(JsonFunc::Field { jsonb, text }, vec![*l, Text], result)
                }
                (Json | Jsonb, Int2 | Int4) => {
                    ok(JsonFunc::Elem { jsonb, text }, vec![*l, Int4], result)
                }
                _ => Err(op_error(op, l, r)),
            }
        }
        JsonOp::HashArrow | JsonOp::HashLongArrow => {
            let text = op == JsonOp::HashLongArrow;
            let jsonb = *l == Jsonb;
            let result = if text { Text } else { json_type(jsonb) };
            match (l, r) {
                (Json | Jsonb, r) if is_text_array(r) => ok(
                    JsonFunc::Path {
                        jsonb,
                        text,
                        variadic: false,
                    },
                    vec![*l, arr],
                    result,
                ),
                _ => Err(op_error(op, l, r)),
            }
        }
        JsonOp::Contains | JsonOp::ContainedBy
            if jb(l) && jb(r) && (*l == Jsonb || *r == Jsonb) =>
        {
            let f = if op == JsonOp::Contains {
                JsonFunc::Contains
            } else {
                JsonFunc::ContainedBy
            };
            ok(f, vec![Jsonb, Jsonb], Bool)
        }
        JsonOp::Exists if *l == Jsonb && is_text(r) => {
            ok(JsonFunc::Exists, vec![Jsonb, Text], Bool)
        }
        JsonOp::ExistsAny | JsonOp::ExistsAll if *l == Jsonb && is_text_array(r) => {
            let f = if op == JsonOp::ExistsAny {
                JsonFunc::ExistsAny
            } else {
                JsonFunc::ExistsAll
            };
            ok(f, vec![Jsonb, arr], Bool)
        }
        JsonOp::HashMinus if *l == Jsonb && is_text_array(r) => {
            ok(JsonFunc::DeletePath, vec![Jsonb, arr], Jsonb)
        }
        JsonOp::Concat => {
            if jb(l) && jb(r) && (*l == Jsonb || *r == Jsonb) {
                ok(JsonFunc::Concat, vec![Jsonb, Jsonb], Jsonb)
            } else {
                return Ok(None);
            }
        }
        JsonOp::Minus => match (l, r) {
            (Jsonb, Int2 | Int4) => ok(JsonFunc::DeleteIndex, vec![Jsonb, Int4], Jsonb),
            (Jsonb, r) if is_text(r) => ok(JsonFunc::DeleteKey, vec![Jsonb, Text], Jsonb),
            (Jsonb, r) if *r == arr => ok(JsonFunc::DeleteKeys, vec![Jsonb, arr], Jsonb),
            _ => return Ok(None),
        },
        _ => Err(op_error(op, l, r)),
    };
    r.map(Some)
}

impl JsonFunc {
    /// Looks a function up by its lower-case SQL name.
    pub fn from_name(name: &str) -> Option<JsonFunc> {
        use JsonFunc::*;
        let (jsonb, base) = match name.strip_prefix("jsonb_") {
            Some(rest) => (true, rest),
            None => (false, name.strip_prefix("json_").unwrap_or("")),
        };
        Some(match (name, base) {
            ("to_json", _) => ToJson {
                jsonb: false,
                json_arg: false,
            },
            ("to_jsonb", _) => ToJson {
                jsonb: true,
                json_arg: false,
            },
            ("array_to_json", _) => ArrayToJson,
            (_, "typeof") => Typeof { jsonb },
            (_, "array_length") => ArrayLength { jsonb },
            (_, "build_object") => BuildObject {
                jsonb,
                json_args: 0,
            },
            (_, "build_array") => BuildArray {
                jsonb,
                json_args: 0,
            },
            (_, "object") => Object { jsonb },
            (_, "extract_path") => Path {
                jsonb,
                text: false,
                variadic: true,
            },
            (_, "extract_path_text") => Path {
                jsonb,
                text: true,
                variadic: true,
            },
            ("jsonb_contains", _) => Contains,
            ("jsonb_contained", _) => ContainedBy,
            ("jsonb_exists", _) => Exists,
            ("jsonb_exists_any", _) => ExistsAny,
            ("jsonb_exists_all", _) => ExistsAll,
            ("jsonb_concat", _) => Concat,
            ("jsonb_delete", _) => DeleteKey,
            ("jsonb_delete_path", _) => DeletePath,
            ("jsonb_set", _) => Set,
            ("jsonb_insert", _) => Insert,
            ("jsonb_strip_nulls", _) => StripNulls,
            ("jsonb_pretty", _) => Pretty,
            _ => return None,
        })
    }

    /// The SQL name, for messages.
    pub fn name(self) -> &'static str {
        use JsonFunc::*;
        let pick = |jsonb: bool, a: &'static str, b: &'static str| if jsonb { b } else { a };
        match self {
            Field { .. } | Elem { .. } => "json_object_field",
            Path {
                jsonb, text: false, ..
            } => pick(jsonb, "json_extract_path", "jsonb_extract_path"),
            Path { jsonb, .. } => pick(jsonb, "json_extract_path_text", "jsonb_extract_path_text"),
            Contains => "jsonb_contains",
            ContainedBy => "jsonb_contained",
            Exists => "jsonb_exists",
            ExistsAny => "jsonb_exists_any",
            ExistsAll => "jsonb_exists_all",
            Concat => "jsonb_concat",
            DeleteKey | DeleteKeys | DeleteIndex => "jsonb_delete",
            DeletePath => "jsonb_delete_path",
            Typeof { jsonb } => pick(jsonb, "json_typeof", "jsonb_typeof"),
            ArrayLength { jsonb } => pick(jsonb, "json_array_length", "jsonb_array_length"),
            BuildObject { jsonb, .. } => pick(jsonb, "json_build_object", "jsonb_build_object"),
            BuildArray { jsonb, .. } => pick(jsonb, "json_build_array", "jsonb_build_array"),
            Object { jsonb } => pick(jsonb, "json_object", "jsonb_object"),
            ToJson { jsonb, .. } => pick(jsonb, "to_json", "to_jsonb"),
            ArrayToJson => "array_to_json",
            Set => "jsonb_set",
            Insert => "jsonb_insert",
            StripNulls => "jsonb_strip_nulls",
            Pretty => "jsonb_pretty",
        }
    }

    /// Argument and result types for `args` (see the module doc).
    pub fn resolve(self, args: &[DataType]) -> Result<Resolved> {
        use DataType::*;
        use JsonFunc::*;
        let is_text = |t: &DataType| t.is_string() || *t == Unknown;
        let jb = |t: &DataType| matches!(t, Jsonb | Unknown);
        let js =
            |t: &DataType, jsonb: bool| *t == Unknown || *t == if jsonb { Jsonb } else { Json };
        let arr = text_array();
        let is_arr = |t: &DataType| *t == arr || *t == Unknown;
        let missing = || Err(no_function(self.name(), args));
        match (self, args) {
            (Typeof { jsonb }, [t]) if js(t, jsonb) => ok(self, vec![json_type(jsonb)], Text),
            (ArrayLength { jsonb }, [t]) if js(t, jsonb) => ok(self, vec![json_type(jsonb)], Int4),
            (Path { jsonb, text, .. }, [t, rest @ ..])
                if js(t, jsonb) && rest.iter().all(is_text) =>
            {
                let mut types = vec![json_type(jsonb)];
                types.extend(rest.iter().map(|_| Text));
                ok(self, types, if text { Text } else { json_type(jsonb) })
            }
            (BuildObject { jsonb, .. } | BuildArray { jsonb, .. }, _) => {
                self.resolve_build(jsonb, args)
            }
            (Object { jsonb }, [a]) if is_arr(a) => ok(self, vec![arr], json_type(jsonb)),
            (Object { jsonb }, [a, b]) if is_arr(a) && is_arr(b) => {
                ok(self, vec![arr, arr], json_type(jsonb))
            }
            (ToJson { jsonb, .. }, [t]) => {
                if *t == Unknown {
                    return Err(err!(
                        DatatypeMismatch,
                        "could not determine polymorphic type because input has type unknown"
                    ));
                }
                ok(
                    ToJson {
                        jsonb,
                        json_arg: *t == Json,
                    },
                    vec![*t],
                    json_type(jsonb),
                )
            }
            (ArrayToJson, [a @ Array(_)]) => ok(self, vec![*a], Json),
            (ArrayToJson, [a @ Array(_), Bool | Unknown]) => ok(self, vec![*a, Bool], Json),
            (Set | Insert, [a, p, n]) if jb(a) && is_arr(p) && jb(n) => {
                ok(self, vec![Jsonb, arr, Jsonb], Jsonb)
            }
            (Set | Insert, [a, p, n, b])
                if jb(a) && is_arr(p) && jb(n) && matches!(b, Bool | Unknown) =>
            {
                ok(self, vec![Jsonb, arr, Jsonb, Bool], Jsonb)
            }
            (StripNulls, [a]) if jb(a) => ok(self, vec![Jsonb], Jsonb),
            (Contains | ContainedBy | Concat, [a, b]) if jb(a) && jb(b) => ok(
                self,
                vec![Jsonb, Jsonb],
                if self == Concat { Jsonb } else { Bool },
            ),
            (Exists, [a, k]) if jb(a) && is_text(k) => ok(self, vec![Jsonb, Text], Bool),
            (ExistsAny | ExistsAll, [a, k]) if jb(a) && is_arr(k) => {
                ok(self, vec![Jsonb, arr], Bool)
            }
            (DeletePath, [a, p]) if jb(a) && is_arr(p) => ok(self, vec![Jsonb, arr], Jsonb),
            (DeleteKey, [a, k]) if jb(a) && matches!(k, Int2 | Int4) => {
                ok(DeleteIndex, vec![Jsonb, Int4], Jsonb)
            }
            (DeleteKey, [a, k]) if jb(a) && is_text(k) => ok(self, vec![Jsonb, Text], Jsonb),
            (DeleteKey, [a, k]) if jb(a) && *k == arr => ok(DeleteKeys, vec![Jsonb, arr], Jsonb),
            (Pretty, [a]) if jb(a) => ok(self, vec![Jsonb], Text),
            _ => missing(),
        }
    }

    fn resolve_build(self, jsonb: bool, args: &[DataType]) -> Result<Resolved> {
        let mut json_args = 0u64;
        let mut types = Vec::with_capacity(args.len());
        for (i, t) in args.iter().enumerate() {
            if *t == DataType::Json && i < 64 {
                json_args |= 1 << i;
            }
            types.push(if *t == DataType::Unknown {
                DataType::Text
            } else {
                *t
            });
        }
        let object = matches!(self, JsonFunc::BuildObject { .. });
        let func = if object {
            JsonFunc::BuildObject { jsonb, json_args }
        } else {
            JsonFunc::BuildArray { jsonb, json_args }
        };
        ok(func, types, json_type(jsonb))
    }

    /// Evaluates the function on arguments cast to the resolved types.
    pub fn eval(self, args: &[Value]) -> Result<Value> {
        use JsonFunc::*;
        match self {
            BuildObject { jsonb, json_args } => return build_object(jsonb, json_args, args),
            BuildArray { jsonb, json_args } => return build_array(jsonb, json_args, args),
            _ => {}
        }
        if args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        match self {
            Field { jsonb: false, text } | Elem { jsonb: false, text } => {
                let step = match &args[1] {
                    Value::Int4(i) => Step::Index(i64::from(*i)),
                    v => Step::Key(v.as_str().unwrap_or("")),
                };
                json_path(&args[0], &[step], text)
            }
            Path {
                jsonb: false, text, ..
            } => {
                let keys = path_args(self, args)?;
                if keys.iter().any(Option::is_none) {
                    return Ok(Value::Null);
                }
                let steps: Vec<Step> = keys.iter().map(|k| Step::Key(k.unwrap_or(""))).collect();
                json_path(&args[0], &steps, text)
            }
            Typeof { jsonb: false } | ArrayLength { jsonb: false } => {
                json_scalar_fn(self, &args[0])
            }
            _ => self.eval_jsonb(args),
        }
    }

    fn eval_jsonb(self, args: &[Value]) -> Result<Value> {
        use JsonFunc::*;
        let j = |i: usize| -> Result<&Jsonb> {
            match &args[i] {
                Value::Jsonb(j) => Ok(j),
                other => Err(err!(
                    InternalError,
                    "jsonb argument expected, got {other:?}"
                )),
            }
        };
        let reached = |v: Option<&Jsonb>, text: bool| -> Value {
            match (v, text) {
                (None, _) => Value::Null,
                (Some(x), true) => ops::as_text(x).map_or(Value::Null, |s| Value::text(&s)),
                (Some(x), false) => jsonb_value(x.clone()),
            }
        };
        Ok(match self {
            Field { text, .. } => reached(j(0)?.get(args[1].as_str().unwrap_or("")), text),
            Elem { text, .. } => {
                let i = args[1].as_i64().unwrap_or(0);
                let doc = j(0)?;
                if doc.is_container() {
                    reached(ops::step(doc, Step::Index(i)), text)
                } else {
                    // A scalar datum is stored as an array of one element,
                    // which `->` with an index looks into.
                    reached((i == 0 || i == -1).then_some(doc), text)
                }
            }
            Path { text, .. } => {
                let keys = path_args(self, args)?;
                reached(ops::path(j(0)?, &keys), text)
            }
            Contains => Value::Bool(ops::contains(j(0)?, j(1)?)),
            ContainedBy => Value::Bool(ops::contains(j(1)?, j(0)?)),
            Exists => Value::Bool(ops::exists(j(0)?, args[1].as_str().unwrap_or(""))),
            ExistsAny | ExistsAll => {
                let keys = text_items(&args[1]);
                let doc = j(0)?;
                let present = |k: &Option<&str>| k.is_some_and(|k| ops::exists(doc, k));
                Value::Bool(if self == ExistsAny {
                    keys.iter().any(present)
                } else {
                    keys.iter().filter(|k| k.is_some()).all(present)
                })
            }
            Concat => jsonb_value(ops::concat(j(0)?, j(1)?)),
            DeleteKey => jsonb_value(ops::delete_keys(j(0)?, &[args[1].as_str().unwrap_or("")])?),
            DeleteKeys => {
                let keys: Vec<&str> = text_items(&args[1]).into_iter().flatten().collect();
                jsonb_value(ops::delete_keys(j(0)?, &keys)?)
            }
            DeleteIndex => jsonb_value(ops::delete_index(j(0)?, args[1].as_i64().unwrap_or(0))?),
            DeletePath => {
                let doc = j(0)?;
                if !doc.is_container() {
                    return Err(err!(InvalidParameterValue, "cannot delete path in scalar"));
                }
                let keys = text_items(&args[1]);
                if keys.is_empty() {
                    return Ok(args[0].clone());
                }
                jsonb_value(ops::set_path(doc, &keys, 0, None, Edit::Delete)?)
            }
            Set | Insert => {
                let doc = j(0)?;
                if !doc.is_container() {
                    return Err(err!(InvalidParameterValue, "cannot set path in scalar"));
                }
                let flag = args.get(3).and_then(Value::as_bool);
                let edit = match (self, flag) {
                    (Set, Some(false)) => Edit::Replace,
                    (Set, _) => Edit::Create,
                    (_, Some(true)) => Edit::InsertAfter,
                    _ => Edit::InsertBefore,
                };
                let keys = text_items(&args[1]);
                if keys.is_empty() {
                    return Ok(args[0].clone());
                }
                jsonb_value(ops::set_path(doc, &keys, 0, Some(j(2)?), edit)?)
            }
            StripNulls => jsonb_value(ops::strip_nulls(j(0)?)),
            Pretty => {
                let mut s = String::new();
                j(0)?.write_pretty(0, &mut s);
                Value::text(&s)
            }
            Typeof { .. } => Value::text(j(0)?.type_name()),
            ArrayLength { .. } => match j(0)? {
                Jsonb::Array(items) => Value::Int4(items.len() as i32),
                Jsonb::Object(_) => return Err(non_array()),
                _ => return Err(scalar_length()),
            },
            Object { jsonb } => object_from_arrays(jsonb, args)?,
            ToJson {
                jsonb: true,
                json_arg,
            } => jsonb_value(to_jsonb(&args[0], json_arg)?),
            ToJson { json_arg, .. } => {
                let mut s = String::new();
                write_json(&args[0], json_arg, &mut s);
                Value::text(&s)
            }
            ArrayToJson => {
                let Value::Array(a) = &args[0] else {
                    return Ok(Value::Null);
                };
                let sep = if args.get(1).and_then(Value::as_bool) == Some(true) {
                    ",\n "
                } else {
                    ","
                };
                let mut s = String::from("[");
                for (i, item) in a.items.iter().enumerate() {
                    if i > 0 {
                        s.push_str(sep);
                    }
                    write_json(item, a.elem == DataType::Json, &mut s);
                }
                s.push(']');
                Value::text(&s)
            }
            BuildObject { .. } | BuildArray { .. } => Value::Null,
        })
    }
}

/// A `jsonb` SQL value.
pub fn jsonb_value(j: Jsonb) -> Value {
    Value::Jsonb(Arc::new(j))
}

fn scalar_length() -> Error {
    err!(InvalidParameterValue, "cannot get array length of a scalar")
}

fn non_array() -> Error {
    err!(
        InvalidParameterValue,
        "cannot get array length of a non-array"
    )
}

/// The items of a `text[]` value (NULL elements as `None`).
fn text_items(v: &Value) -> Vec<Option<&str>> {
    match v {
        Value::Array(a) => a.items.iter().map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A path given as one `text[]` or as separate text arguments.
fn path_args(f: JsonFunc, args: &[Value]) -> Result<Vec<Option<&str>>> {
    Ok(match f {
        JsonFunc::Path { variadic: true, .. } => args[1..].iter().map(Value::as_str).collect(),
        _ => text_items(&args[1]),
    })
}

/// `->`, `->>`, `#>`, `#>>` over `json` text.
fn json_path(doc: &Value, steps: &[Step<'_>], text: bool) -> Result<Value> {
    let src = doc.as_str().unwrap_or("null");
    let d = JsonDoc::parse(src)?;
    Ok(match ops::json_get(&d.root, steps) {
        None => Value::Null,
        Some(n) if text => d.as_text(n).map_or(Value::Null, |s| Value::text(&s)),
        Some(n) => Value::text(d.text_of(n)),
    })
}

fn json_scalar_fn(f: JsonFunc, doc: &Value) -> Result<Value> {
    let d = JsonDoc::parse(doc.as_str().unwrap_or("null"))?;
    Ok(match f {
        JsonFunc::Typeof { .. } => Value::text(ops::node_type(&d.root)),
        _ => match &d.root.kind {
            super::parse::Kind::Array(items) => Value::Int4(items.len() as i32),
            super::parse::Kind::Object(_) => return Err(non_array()),
            _ => return Err(scalar_length()),
        },
    })
}

fn is_json_arg(mask: u64, i: usize) -> bool {
    i < 64 && mask & (1 << i) != 0
}

fn build_object(jsonb: bool, json_args: u64, args: &[Value]) -> Result<Value> {
    if args.len() % 2 == 1 {
        let name = if jsonb {
            "jsonb_build_object"
        } else {
            "json_build_object"
        };
        return Err(err!(
            InvalidParameterValue,
            "argument list must have even number of elements"
        )
        .with_hint(format!(
            "The arguments of {name}() must consist of alternating keys and values."
        )));
    }
    let mut members = Vec::with_capacity(args.len() / 2);
    let mut text = String::from("{");
    for (k, pair) in args.chunks(2).enumerate() {
        let i = 2 * k;
        if pair[0].is_null() {
            return Err(if jsonb {
                err!(
                    InvalidParameterValue,
                    "argument {}: key must not be null",
                    i + 1
                )
            } else {
                err!(InvalidParameterValue, "argument {} cannot be null", i + 1)
                    .with_hint("Object keys should be text.")
            });
        }
        let ty = if is_json_arg(json_args, i) {
            DataType::Json
        } else {
            pair[0].data_type().unwrap_or(DataType::Text)
        };
        let key = key_text(&pair[0], &ty)?;
        let value = pair.get(1).unwrap_or(&Value::Null);
        if jsonb {
            members.push((key, to_jsonb(value, is_json_arg(json_args, i + 1))?));
        } else {
            if k > 0 {
                text.push_str(", ");
            }
            super::jsonb::escape_json(&key, &mut text);
            text.push_str(" : ");
            write_json(value, is_json_arg(json_args, i + 1), &mut text);
        }
    }
    if jsonb {
        return Ok(jsonb_value(Jsonb::object(members)));
    }
    text.push('}');
    Ok(Value::text(&text))
}

fn build_array(jsonb: bool, json_args: u64, args: &[Value]) -> Result<Value> {
    if jsonb {
        let items = args
            .iter()
            .enumerate()
            .map(|(i, v)| to_jsonb(v, is_json_arg(json_args, i)))
            .collect::<Result<_>>()?;
        return Ok(jsonb_value(Jsonb::Array(items)));
    }
    let mut text = String::from("[");
    for (i, v) in args.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        write_json(v, is_json_arg(json_args, i), &mut text);
    }
    text.push(']');
    Ok(Value::text(&text))
}

/// `json_object(text[])` (alternating keys and values) and
/// `json_object(keys text[], values text[])`.
fn object_from_arrays(jsonb: bool, args: &[Value]) -> Result<Value> {
    let pairs: Vec<(Option<&str>, Option<&str>)> = match args {
        [a] => {
            let items = text_items(a);
            if items.len() % 2 == 1 {
                return Err(err!(
                    ArraySubscriptError,
                    "array must have even number of elements"
                ));
            }
            items.chunks(2).map(|c| (c[0], c[1])).collect()
        }
        [k, v] => {
            let (ks, vs) = (text_items(k), text_items(v));
            if ks.len() != vs.len() {
                return Err(err!(ArraySubscriptError, "mismatched array dimensions"));
            }
            ks.into_iter().zip(vs).collect()
        }
        _ => Vec::new(),
    };
    let mut members = Vec::with_capacity(pairs.len());
    let mut text = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        let Some(k) = k else {
            return Err(err!(
                NullValueNotAllowed,
                "null value not allowed for object key"
            ));
        };
        if jsonb {
            members.push((
                k.to_string(),
                v.map_or(Jsonb::Null, |s| Jsonb::String(s.to_string())),
            ));
        } else {
            if i > 0 {
                text.push_str(", ");
            }
            super::jsonb::escape_json(k, &mut text);
            text.push_str(" : ");
            match v {
                Some(s) => super::jsonb::escape_json(s, &mut text),
                None => text.push_str("null"),
            }
        }
    }
    if jsonb {
        return Ok(jsonb_value(Jsonb::object(members)));
    }
    text.push('}');
    Ok(Value::text(&text))
}
