//! The types layer against PostgreSQL 15's own answers.
//!
//! `tests/types_pg_cases.tsv` holds one case per line: an expression in a
//! small subset of SQL, a tab, and what PostgreSQL 15 printed for
//! `select EXPR, pg_typeof(EXPR)` (`value|type`, NULL as `NULL`) or its
//! error (`ERROR: message`). The subset is what the types layer can run
//! without a parser or executor:
//!
//! - literals: `'text'` (type unknown), integers, decimals, `true`, `false`,
//!   `NULL`, each optionally followed by casts `::type` (`int4`,
//!   `numeric(5,2)`, `varchar(3)`, `char(4)`, `timestamp`, ...);
//! - one binary operator per parenthesised level: `a + b`, `(a) ^ (b)`;
//! - function calls `name(arg, ...)` (`extract('f', x)` and `position(a,
//!   b)` stand for `extract(f from x)` and `position(a in b)`);
//! - `agg FUNC TYPE v1;v2;NULL` lines: an aggregate over a VALUES list.
//!
//! [`expected_values_match_postgres`] evaluates every case with
//! `heapdb::types` the way the binder and executor will (resolve the
//! operator or function, cast the operands implicitly, evaluate) and
//! compares. To add cases, append lines with an empty expectation and run
//! the ignored [`regenerate_from_postgres`] test with a PostgreSQL 15 server:
//! `HEAPDB_PG_PORT=54335 cargo test --test types_pg -- --ignored` (host
//! `/tmp`, user `postgres`; `HEAPDB_PG_HOST` / `HEAPDB_PG_USER` override).

use heapdb::types::cast::{cannot_cast, cast_from, cast_kind, CastContext};
use heapdb::types::ops::{eval_binary_typed, operator_error, resolve_binary, BinaryOp};
use heapdb::types::{
    format_value, parse_value_at, Accumulator, AggFunc, DataType, ScalarFunc, Value,
};
use heapdb::Result;

const CASES: &str = "tests/types_pg_cases.tsv";

/// A typed value during evaluation.
type Typed = (Value, DataType);

/// A tiny recursive-descent parser and evaluator for the case language.
struct Eval<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Eval<'a> {
    fn new(s: &'a str) -> Self {
        Eval {
            s: s.as_bytes(),
            pos: 0,
        }
    }

    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos] == b' ' {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.ws();
        if self.s[self.pos..].starts_with(tok.as_bytes()) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }

    /// Operators chain left to right without precedence (cases avoid
    /// mixing them).
    fn expr(&mut self) -> Result<Typed> {
        let mut left = self.term()?;
        const OPS: [(&str, BinaryOp); 13] = [
            ("||", BinaryOp::Concat),
            ("<>", BinaryOp::NotEq),
            ("<=", BinaryOp::LtEq),
            (">=", BinaryOp::GtEq),
            ("+", BinaryOp::Add),
            ("-", BinaryOp::Sub),
            ("*", BinaryOp::Mul),
            ("/", BinaryOp::Div),
            ("%", BinaryOp::Mod),
            ("^", BinaryOp::Pow),
            ("=", BinaryOp::Eq),
            ("<", BinaryOp::Lt),
            (">", BinaryOp::Gt),
        ];
        'chain: loop {
            for (sym, op) in OPS {
                if self.eat(sym) {
                    let right = self.term()?;
                    left = binary(op, left, right)?;
                    continue 'chain;
                }
            }
            return Ok(left);
        }
    }

    fn term(&mut self) -> Result<Typed> {
        let mut v = self.atom()?;
        while self.eat("::") {
            let ty = self.type_name();
            v = cast_explicit(v, &ty)?;
        }
        Ok(v)
    }

    fn type_name(&mut self) -> DataType {
        self.ws();
        let start = self.pos;
        while self.pos < self.s.len()
            && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
        {
            self.pos += 1;
        }
        let name = std::str::from_utf8(&self.s[start..self.pos]).unwrap();
        let base = DataType::from_name(name).unwrap_or_else(|| panic!("unknown type {name}"));
        if self.peek() == Some(b'(') {
            self.pos += 1;
            let close = self.pos + self.s[self.pos..].iter().position(|c| *c == b')').unwrap();
            let mods: Vec<i64> = std::str::from_utf8(&self.s[self.pos..close])
                .unwrap()
                .split(',')
                .map(|m| m.trim().parse().unwrap())
                .collect();
            self.pos = close + 1;
            return base.with_typmod(&mods).unwrap();
        }
        base
    }

    fn atom(&mut self) -> Result<Typed> {
        match self.peek() {
            Some(b'\'') => {
                self.pos += 1;
                let mut text = String::new();
                loop {
                    let c = self.s[self.pos];
                    self.pos += 1;
                    if c == b'\'' {
                        if self.s.get(self.pos) == Some(&b'\'') {
                            self.pos += 1;
                        } else {
                            break;
                        }
                    }
                    text.push(c as char);
                }
                // Keep UTF-8 intact: re-read the bytes as a string.
                let text = String::from_utf8(text.chars().map(|c| c as u8).collect()).unwrap();
                Ok((Value::text(&text), DataType::Unknown))
            }
            Some(b'(') => {
                self.pos += 1;
                let v = self.expr()?;
                assert!(self.eat(")"), "unbalanced parentheses");
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == b'-' => {
                let start = self.pos;
                self.pos += 1;
                while self.pos < self.s.len()
                    && (self.s[self.pos].is_ascii_digit() || self.s[self.pos] == b'.')
                {
                    self.pos += 1;
                }
                if self.s.get(self.pos) == Some(&b'e') {
                    self.pos += 1;
                    while self.pos < self.s.len()
                        && (self.s[self.pos].is_ascii_digit() || self.s[self.pos] == b'-')
                    {
                        self.pos += 1;
                    }
                }
                let lit = std::str::from_utf8(&self.s[start..self.pos]).unwrap();
                Ok(number_literal(lit))
            }
            _ => {
                let start = self.pos;
                while self.pos < self.s.len()
                    && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
                {
                    self.pos += 1;
                }
                let word = std::str::from_utf8(&self.s[start..self.pos])
                    .unwrap()
                    .to_string();
                match word.as_str() {
                    "true" => return Ok((Value::Bool(true), DataType::Bool)),
                    "false" => return Ok((Value::Bool(false), DataType::Bool)),
                    "NULL" => return Ok((Value::Null, DataType::Unknown)),
                    _ => {}
                }
                assert!(self.eat("("), "expected a function call at {word}");
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(")") {
                            break;
                        }
                        assert!(
                            self.eat(","),
                            "expected , in arguments of {}",
                            String::from_utf8_lossy(self.s)
                        );
                    }
                }
                call(&word, args)
            }
        }
    }
}

/// An integer literal is int4, int8 or numeric by size; a decimal is numeric.
fn number_literal(lit: &str) -> Typed {
    let ty = if lit.contains(['.', 'e']) {
        DataType::Numeric(None)
    } else if lit.parse::<i32>().is_ok() {
        DataType::Int4
    } else if lit.parse::<i64>().is_ok() {
        DataType::Int8
    } else {
        DataType::Numeric(None)
    };
    (parse_value_at(lit, &ty, 0).unwrap(), ty)
}

/// Coerces a value to `to` as the binder does: unknown literals through the
/// input function, others by an implicit cast.
fn coerce((v, from): Typed, to: &DataType) -> Result<Value> {
    if from == DataType::Unknown {
        return match v {
            Value::Null => Ok(Value::Null),
            Value::Text(s) => {
                let base = if matches!(to, DataType::Char(_) | DataType::Varchar(_)) {
                    DataType::Text
                } else {
                    *to
                };
                let parsed = parse_value_at(&s, &base, 0)?;
                cast_from(&parsed, &base, to, CastContext::Implicit)
            }
            other => Ok(other),
        };
    }
    cast_from(&v, &from, to, CastContext::Implicit)
}

fn cast_explicit((v, from): Typed, to: &DataType) -> Result<Typed> {
    if from == DataType::Unknown {
        let text = match &v {
            Value::Null => return Ok((Value::Null, *to)),
            Value::Text(s) => s.clone(),
            _ => unreachable!("unknown literals are text"),
        };
        let base = match to {
            DataType::Char(_) | DataType::Varchar(_) => DataType::Text,
            other => other.without_typmod(),
        };
        let parsed = parse_value_at(&text, &base, 0)?;
        return Ok((cast_from(&parsed, &base, to, CastContext::Explicit)?, *to));
    }
    if cast_kind(&from, to).is_none() {
        return Err(cannot_cast(&from, to));
    }
    Ok((cast_from(&v, &from, to, CastContext::Explicit)?, *to))
}

fn binary(op: BinaryOp, l: Typed, r: Typed) -> Result<Typed> {
    let (lt, rt, res) =
        resolve_binary(op, &l.1, &r.1).ok_or_else(|| operator_error(op, &l.1, &r.1))?;
    let a = coerce(l, &lt)?;
    let b = coerce(r, &rt)?;
    Ok((eval_binary_typed(op, &a, &b, Some(&lt))?, res))
}

fn call(name: &str, args: Vec<Typed>) -> Result<Typed> {
    let f = ScalarFunc::from_name(name).unwrap_or_else(|| panic!("unknown function {name}"));
    let types: Vec<DataType> = args.iter().map(|a| a.1).collect();
    let r = f.resolve(&types)?;
    let mut vals = Vec::new();
    for (a, to) in args.into_iter().zip(&r.arg_types) {
        vals.push(coerce(a, to)?);
    }
    Ok((r.func.eval(&vals)?, r.result))
}

fn aggregate(spec: &str) -> Result<Typed> {
    let mut parts = spec.splitn(3, ' ');
    let func = AggFunc::from_name(parts.next().unwrap()).unwrap();
    let ty = DataType::from_name(parts.next().unwrap()).unwrap();
    let mut acc = Accumulator::new(func, &ty)?;
    for v in parts.next().unwrap().split(';') {
        let v = if v == "NULL" {
            Value::Null
        } else {
            parse_value_at(v, &ty, 0)?
        };
        acc.add(&v)?;
    }
    Ok((acc.finish()?, heapdb::types::agg_result_type(func, &ty)?))
}

/// `pg_typeof`'s name for a type (no modifiers; bpchar is `character`).
fn pg_typeof(t: &DataType) -> String {
    match t {
        DataType::Char(_) => "character".to_string(),
        DataType::Unknown => "text".to_string(),
        other => other.without_typmod().to_string(),
    }
}

fn run_case(expr: &str) -> String {
    let result = match expr.strip_prefix("agg ") {
        Some(spec) => aggregate(spec),
        None => {
            let mut e = Eval::new(expr);
            let r = e.expr();
            assert!(r.is_err() || e.peek().is_none(), "trailing input in {expr}");
            r
        }
    };
    match result {
        Ok((v, t)) => {
            let mut s = String::new();
            if v.is_null() {
                s.push_str("NULL");
            } else {
                format_value(&v, &mut s);
            }
            format!("{s}|{}", pg_typeof(&t))
        }
        Err(e) => format!("ERROR: {}", e.message),
    }
}

fn read_cases() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(CASES).expect("case file");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (e, want) = l.split_once('\t').unwrap_or((l, ""));
            (e.to_string(), want.to_string())
        })
        .collect()
}

#[test]
fn expected_values_match_postgres() {
    let cases = read_cases();
    assert!(cases.len() > 300, "the case file holds the corpus");
    let mut failures = Vec::new();
    for (expr, want) in &cases {
        let got = run_case(expr);
        if &got != want {
            failures.push(format!("{expr}\n    want: {want}\n    got:  {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Turns a case into the SQL PostgreSQL runs for it.
fn to_sql(expr: &str) -> String {
    if let Some(spec) = expr.strip_prefix("agg ") {
        let mut parts = spec.splitn(3, ' ');
        let (func, ty) = (parts.next().unwrap(), parts.next().unwrap());
        let rows: Vec<String> = parts
            .next()
            .unwrap()
            .split(';')
            .map(|v| {
                if v == "NULL" {
                    format!("(NULL::{ty})")
                } else {
                    format!("('{v}'::{ty})")
                }
            })
            .collect();
        return format!(
            "select {func}(x), pg_typeof({func}(x)) from (values {}) v(x)",
            rows.join(",")
        );
    }
    let mut e = expr.to_string();
    if let Some(rest) = e.strip_prefix("extract('") {
        let (field, source) = rest.split_once("', ").unwrap();
        e = format!("extract({field} from {source}");
    } else if let Some(rest) = e.strip_prefix("position(") {
        let (a, b) = rest.split_once(", ").unwrap();
        e = format!("position({a} in {b}");
    }
    format!("select {e}, pg_typeof({e})")
}

#[test]
#[ignore = "needs a PostgreSQL 15 server; rewrites tests/types_pg_cases.tsv"]
fn regenerate_from_postgres() {
    let port = std::env::var("HEAPDB_PG_PORT").expect("set HEAPDB_PG_PORT");
    let host = std::env::var("HEAPDB_PG_HOST").unwrap_or_else(|_| "/tmp".into());
    let user = std::env::var("HEAPDB_PG_USER").unwrap_or_else(|_| "postgres".into());
    let mut out = String::new();
    for (expr, _) in read_cases() {
        let o = std::process::Command::new("psql")
            .args([
                "-h",
                &host,
                "-p",
                &port,
                "-U",
                &user,
                "-AtX",
                "-P",
                "null=NULL",
                "-c",
                &to_sql(&expr),
            ])
            .output()
            .expect("psql runs");
        let stdout = String::from_utf8_lossy(&o.stdout).trim_end().to_string();
        let stderr = String::from_utf8_lossy(&o.stderr);
        let want = match stderr.lines().next() {
            Some(line) if line.starts_with("ERROR:") => {
                format!("ERROR: {}", line["ERROR:".len()..].trim())
            }
            _ => stdout,
        };
        out.push_str(&format!("{expr}\t{want}\n"));
    }
    std::fs::write(CASES, out).expect("write cases");
}
