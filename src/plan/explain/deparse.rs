//! Expressions as PostgreSQL's `ruleutils.c` prints them in EXPLAIN:
//! operators parenthesized, constants as `get_const_expr` prints them
//! (`'10'::double precision`, `'-1'::integer`), casts PostgreSQL would not
//! have (integer and float widenings) left out, `IN` lists as
//! `= ANY ('{...}'::type[])`, AND / OR chains flattened, CASE and NULLIF
//! spelled out. A column prints as the name its caller gives it (`cols`);
//! a lateral join's parameter as the outer column it stands for.

use super::sections::REFERENCES;
use crate::exec::subplan::SubLinkKind;
use crate::nodes::expr::{Expr, ExprKind};
use crate::plan::folded::FOLD_PARAM;
use crate::types::{format_value, BinaryOp, DataType, Value};

/// A constant as PostgreSQL's `get_const_expr` prints it: integers that
/// fit `integer` bare (`'-1'::integer` when negative), numeric bare when it
/// has a decimal point or exponent, booleans as `true` / `false`, NULL as
/// `NULL::type`, everything else quoted with its type (`'c1'::text`,
/// `'t1'::bpchar`, `'10'::double precision`).
pub(crate) fn literal(v: &Value, ty: &DataType) -> String {
    if v.is_null() {
        return format!("NULL::{ty}");
    }
    let mut s = String::new();
    format_value(v, &mut s);
    let quoted = |s: &str, ty: &dyn std::fmt::Display| format!("'{}'::{ty}", s.replace('\'', "''"));
    match v {
        Value::Bool(b) => (if *b { "true" } else { "false" }).into(),
        // An integer literal is `integer` in PostgreSQL whatever the column
        // it meets (cross-type operators take it as it is).
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => {
            match v.as_i64().and_then(|x| i32::try_from(x).ok()) {
                Some(x) if x >= 0 => s,
                Some(_) => quoted(&s, &"integer"),
                None => quoted(&s, ty),
            }
        }
        Value::Numeric(_)
            if s.starts_with(|c: char| c.is_ascii_digit()) && s.contains(['.', 'e', 'E']) =>
        {
            s
        }
        _ => quoted(&s, ty),
    }
}

/// `e` without the casts PostgreSQL would not show around an operator's
/// operand (it has cross-type operators for them).
pub(crate) fn operand(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(x, ctx) if crate::plan::quals::invisible_cast(&x.ty, &e.ty, *ctx) => {
            operand(x)
        }
        _ => e,
    }
}

/// The operands of a chain of ANDs (`and`) or ORs, flattened as
/// PostgreSQL prints them: `(a AND b AND c)`.
fn flatten<'e>(e: &'e Expr, and: bool, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::And(a, b) if and => {
            flatten(a, and, out);
            flatten(b, and, out);
        }
        ExprKind::Or(a, b) if !and => {
            flatten(a, and, out);
            flatten(b, and, out);
        }
        _ => out.push(e),
    }
}

/// An array constant as PostgreSQL prints one: `'{c1,c2}'::text[]`
/// (elements quoted when they need it, NULL bare).
fn array_literal(items: &[&Value], ty: &DataType) -> String {
    let elems: Vec<String> = items
        .iter()
        .map(|v| {
            if v.is_null() {
                return "NULL".into();
            }
            let mut s = String::new();
            format_value(v, &mut s);
            let plain = !s.is_empty()
                && !s.eq_ignore_ascii_case("null")
                && !s.contains(|c: char| {
                    c.is_whitespace() || matches!(c, ',' | '{' | '}' | '"' | '\\')
                });
            if plain {
                s
            } else {
                format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
            }
        })
        .collect();
    format!("'{{{}}}'::{ty}[]", elems.join(",").replace('\'', "''"))
}

thread_local! {
    /// While a lateral join's right side prints: per enclosing lateral
    /// join, what each of its parameters prints as.
    pub(super) static PARAM_NAMES: std::cell::RefCell<Vec<Vec<String>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// An expression as PostgreSQL's EXPLAIN prints it (parenthesized
/// operators).
pub fn deparse(e: &Expr, cols: &[String]) -> String {
    match &e.kind {
        ExprKind::Column(i) => cols.get(*i).cloned().unwrap_or_else(|| format!("${i}")),
        ExprKind::Const(v) => literal(v, &e.ty),
        ExprKind::Binary(op, a, b) => {
            format!(
                "({} {} {})",
                deparse(operand(a), cols),
                op.symbol(),
                deparse(operand(b), cols)
            )
        }
        ExprKind::Neg(a) => format!("(- {})", deparse(a, cols)),
        ExprKind::Not(a) => format!("(NOT {})", deparse(a, cols)),
        ExprKind::And(..) | ExprKind::Or(..) => {
            let and = matches!(e.kind, ExprKind::And(..));
            let mut items = Vec::new();
            flatten(e, and, &mut items);
            let parts: Vec<String> = items.iter().map(|x| deparse(x, cols)).collect();
            format!("({})", parts.join(if and { " AND " } else { " OR " }))
        }
        ExprKind::IsNull(a, neg) => format!(
            "({} IS {}NULL)",
            deparse(a, cols),
            if *neg { "NOT " } else { "" }
        ),
        ExprKind::IsBool(a, v, neg) => format!(
            "({} IS {}{})",
            deparse(a, cols),
            if *neg { "NOT " } else { "" },
            if *v { "TRUE" } else { "FALSE" }
        ),
        ExprKind::IsDistinct(a, b, neg) => format!(
            "({} IS {}DISTINCT FROM {})",
            deparse(a, cols),
            if *neg { "NOT " } else { "" },
            deparse(b, cols)
        ),
        ExprKind::Cast(a, _) => format!("({})::{}", deparse(a, cols), e.ty),
        ExprKind::Case(arms, otherwise) => {
            // NULLIF(a, b) is bound as CASE WHEN a = b THEN NULL ELSE a END.
            if let ([(cond, then)], Some(other)) = (&arms[..], otherwise) {
                if let (ExprKind::Binary(BinaryOp::Eq, x, y), Some(Value::Null)) =
                    (&cond.kind, then.as_const())
                {
                    let first = deparse(operand(x), cols);
                    if first == deparse(other, cols) {
                        return format!("NULLIF({first}, {})", deparse(operand(y), cols));
                    }
                }
            }
            let mut out = String::from("CASE");
            for (c, r) in arms {
                out.push_str(&format!(
                    " WHEN {} THEN {}",
                    deparse(c, cols),
                    deparse(r, cols)
                ));
            }
            match otherwise {
                Some(o) => out.push_str(&format!(" ELSE {}", deparse(o, cols))),
                None => out.push_str(&format!(" ELSE NULL::{}", e.ty)),
            }
            out.push_str(" END");
            out
        }
        ExprKind::InList(a, list, neg) => {
            // PostgreSQL's forms: one item is a comparison, constants an
            // array (`= ANY` / `<> ALL`), anything else ORed equalities
            // (ANDed inequalities).
            let x = deparse(a, cols);
            let (op, join) = if *neg { ("<>", " AND ") } else { ("=", " OR ") };
            let consts: Option<Vec<&Value>> = list.iter().map(Expr::as_const).collect();
            match (&list[..], consts) {
                ([one], _) => format!("({x} {op} {})", deparse(one, cols)),
                (_, Some(values)) => format!(
                    "({x} {op} {} ({}))",
                    if *neg { "ALL" } else { "ANY" },
                    array_literal(&values, &list[0].ty)
                ),
                _ => {
                    let parts: Vec<String> = list
                        .iter()
                        .map(|i| format!("({x} {op} {})", deparse(i, cols)))
                        .collect();
                    format!("({})", parts.join(join))
                }
            }
        }
        // A fold's output, in a plan marked for printing.
        ExprKind::Param(i) if *i >= FOLD_PARAM => REFERENCES
            .with(|r| r.borrow().folds.get(i - FOLD_PARAM).cloned())
            .unwrap_or_else(|| format!("${}", i - FOLD_PARAM)),
        ExprKind::Param(i) => PARAM_NAMES
            .with(|n| n.borrow().last().and_then(|f| f.get(*i).cloned()))
            .unwrap_or_else(|| format!("${i}")),
        ExprKind::SubPlan(..) | ExprKind::InSet(..) => subquery_ref(e, cols),
        ExprKind::Like(a, b, ci, neg) => format!(
            "({} {}{} {})",
            deparse(a, cols),
            if *neg { "!" } else { "" },
            if *ci { "~~*" } else { "~~" },
            deparse(b, cols)
        ),
        ExprKind::Func(f, args) if f.regexp_operator().is_some() && args.len() == 2 => format!(
            "({} {} {})",
            deparse(operand(&args[0]), cols),
            f.regexp_operator().unwrap_or("~"),
            deparse(operand(&args[1]), cols)
        ),
        ExprKind::Func(f, args) => {
            let a: Vec<String> = args.iter().map(|x| deparse(x, cols)).collect();
            format!("{}({})", f.name(), a.join(", "))
        }
        ExprKind::Coalesce(args) => {
            let a: Vec<String> = args.iter().map(|x| deparse(x, cols)).collect();
            format!("COALESCE({})", a.join(", "))
        }
        ExprKind::Extreme(args, g) => {
            let a: Vec<String> = args.iter().map(|x| deparse(x, cols)).collect();
            format!(
                "{}({})",
                if *g { "GREATEST" } else { "LEAST" },
                a.join(", ")
            )
        }
    }
}

/// A subquery node as PostgreSQL prints its reference: `(SubPlan 2)`,
/// `$0` (an InitPlan's output), `(x < ANY (SubPlan 1))`, `(hashed SubPlan
/// 1)`, by the names [`REFERENCES`] gives them.
fn subquery_ref(e: &Expr, cols: &[String]) -> String {
    match &e.kind {
        ExprKind::SubPlan(sp, args) => {
            let at = super::sections::address(sp);
            let name = REFERENCES
                .with(|r| {
                    r.borrow()
                        .subplans
                        .iter()
                        .find(|s| s.0 == at)
                        .map(|s| s.1.clone())
                })
                .unwrap_or_else(|| "(SubPlan)".into());
            match sp.kind {
                SubLinkKind::Quantified(op, all) => format!(
                    "({} {} {} {name})",
                    args.first().map_or(String::new(), |a| deparse(a, cols)),
                    op.symbol(),
                    if all { "ALL" } else { "ANY" }
                ),
                _ => name,
            }
        }
        ExprKind::InSet(a, set, _, neg) => {
            let at = std::sync::Arc::as_ptr(set) as *const () as usize;
            let name = REFERENCES.with(|r| {
                r.borrow()
                    .sets
                    .iter()
                    .find(|s| s.0 == at)
                    .map(|s| s.1.clone())
            });
            match (name, neg) {
                (Some(n), false) => format!("({n})"),
                (Some(n), true) => format!("(NOT ({n}))"),
                (None, _) => format!(
                    "({} {}IN (hashed SubPlan))",
                    deparse(a, cols),
                    if *neg { "NOT " } else { "" }
                ),
            }
        }
        _ => unreachable!("not a subquery"),
    }
}
