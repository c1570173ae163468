//! Partial index predicates: binding a `CREATE INDEX ... WHERE` predicate
//! with PostgreSQL's checks (`CheckPredicate`: no subqueries, aggregates
//! or functions whose result can change; boolean), binding the stored text
//! again when the catalog is read, proving that a query's conditions imply
//! a predicate (PostgreSQL's `predicate_implied_by` for the common forms),
//! and printing it as psql's `\d` shows it (`pg_get_indexdef`'s pretty
//! form).
//!
//! Invariants: a bound predicate reads only its table's columns
//! (`Column(i)` is table column `i`) and holds no parameters or subplans;
//! [`implied_by`] answers true only when every row satisfying the
//! conditions satisfies the predicate (a false "no" only costs a plan).

use std::cmp::Ordering;
use std::sync::Arc;

use heapdb_grammar::ast;

use super::bind::{at, contains_aggregate, walk, Binder, Mode};
use super::explain::{deparse, literal, operand};
use super::scope::Scope;
use super::{Plan, PlanContext, TableRows};
use crate::catalog::{IndexPredicate, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::ExecContext;
use crate::nodes::expr::{Expr, ExprKind};
use crate::settings::Settings;
use crate::types::compare::compare;
use crate::types::{BinaryOp, DataType, Value};

/// Functions whose result can change between calls with equal arguments
/// (PostgreSQL's stable and volatile ones heapdb has).
const MUTABLE_FUNCTIONS: &[&str] = &[
    "now",
    "current_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "clock_timestamp",
    "localtimestamp",
    "timeofday",
    "random",
    "setseed",
    "relation_size",
    "pg_relation_size",
    "age",
];

/// The context a predicate binds in: no tables, no subqueries, no
/// session functions (the checks before binding refuse them).
pub(super) struct PredicateContext<'s> {
    pub(super) settings: &'s Settings,
}

impl PlanContext for PredicateContext<'_> {
    fn table(&self, name: &str) -> Result<Arc<TableDef>> {
        Err(err!(UndefinedTable, "relation \"{name}\" does not exist"))
    }

    fn children(&self, _parent: &TableDef) -> Result<Vec<Arc<TableDef>>> {
        // No table is ever opened here.
        Ok(Vec::new())
    }

    fn table_pages(&self, _table: &TableDef) -> u32 {
        0
    }

    fn run_subquery(&mut self, _plan: &Plan) -> Result<Vec<Vec<Value>>> {
        Err(subquery_error())
    }

    fn subplan_context(&mut self, _plan: &Plan) -> Result<ExecContext> {
        Err(subquery_error())
    }

    fn settings(&self) -> &Settings {
        self.settings
    }

    fn statement_timestamp(&self) -> i64 {
        0
    }

    fn scalar_function(&mut self, _: &str, _: &[Value]) -> Option<Result<(Value, DataType)>> {
        None
    }

    fn inspection_rows(&mut self, _: &str, _: &[Value]) -> Option<Result<TableRows>> {
        None
    }
}

fn subquery_error() -> crate::error::Error {
    err!(
        FeatureNotSupported,
        "cannot use subquery in index predicate"
    )
}

/// PostgreSQL's refusals of a predicate before it is bound.
fn check(e: &ast::Expr) -> Result<()> {
    let mut bad: Option<crate::error::Error> = None;
    walk(e, &mut |x| {
        if bad.is_some() {
            return;
        }
        match &x.kind {
            ast::ExprKind::Exists(_)
            | ast::ExprKind::Subquery(_)
            | ast::ExprKind::InSubquery { .. }
            | ast::ExprKind::Quantified { .. } => bad = Some(at(subquery_error(), x.offset)),
            ast::ExprKind::CurrentValue(_) => bad = Some(mutable_error()),
            ast::ExprKind::Function(f) if f.name.schema.is_none() => {
                let name = f.name.name.to_ascii_lowercase();
                if MUTABLE_FUNCTIONS.contains(&name.as_str()) {
                    bad = Some(mutable_error());
                }
            }
            _ => {}
        }
    });
    if let Some(e) = bad {
        return Err(e);
    }
    if contains_aggregate(e) {
        let mut off = e.offset;
        walk(e, &mut |x| {
            if let ast::ExprKind::Function(f) = &x.kind {
                if super::bind::is_aggregate(&f.name) {
                    off = x.offset;
                }
            }
        });
        return Err(at(
            err!(
                GroupingError,
                "aggregate functions are not allowed in index predicates"
            ),
            off,
        ));
    }
    Ok(())
}

fn mutable_error() -> crate::error::Error {
    err!(
        InvalidObjectDefinition,
        "functions in index predicate must be marked IMMUTABLE"
    )
}

/// Binds `e` over `table`'s columns as a boolean predicate.
fn bind_checked(settings: &Settings, table: &TableDef, e: &ast::Expr) -> Result<Expr> {
    check(e)?;
    let mut ctx = PredicateContext { settings };
    let mut binder = Binder::new(&mut ctx);
    let scope = Scope::of(
        &table.name,
        table.columns.iter().map(|c| (c.name.clone(), c.ty)),
    );
    binder.bind_condition(e, &scope, &mut Mode::NoAgg("index predicates"), "WHERE")
}

/// `CREATE INDEX ... WHERE e`'s predicate over `table`, with PostgreSQL's
/// errors, bound under the session's `settings`.
///
/// The stored text is bound again at every open under the default
/// settings: a predicate that would read differently then (a date in the
/// session's non-ISO `DateStyle` order) is refused rather than stored.
pub fn bind_create(settings: &Settings, table: &TableDef, e: &ast::Expr) -> Result<IndexPredicate> {
    let expr = bind_checked(settings, table, e)?;
    let text = e.to_string();
    let again = bind_stored(table, &text)?;
    if deparse(&expr, &[]) != deparse(&again, &[]) {
        return Err(err!(
            FeatureNotSupported,
            "index predicate reads differently under DateStyle ISO, MDY"
        )
        .with_hint("Write date and time constants in ISO 8601 form (YYYY-MM-DD)."));
    }
    Ok(IndexPredicate { text, expr })
}

/// `ON CONFLICT (cols) WHERE e`'s inference predicate over `table`.
pub fn bind_inference(settings: &Settings, table: &TableDef, e: &ast::Expr) -> Result<Expr> {
    bind_checked(settings, table, e)
}

/// A stored predicate's text bound again over `table` (the catalog's
/// [`crate::catalog::PredicateBinder`]).
pub fn bind_stored(table: &TableDef, text: &str) -> Result<Expr> {
    let e = super::modify::parse_default(text)?;
    bind_checked(&Settings::default(), table, &e)
}

/// `pred` (over table columns) rewritten over a scan producing the table
/// columns `columns`; a column the scan does not produce becomes position
/// `columns.len() + column`, which no condition over the scan names (so
/// only the predicate's other parts can be proved).
pub fn over_scan(pred: &Expr, columns: &[usize]) -> Expr {
    let mut p = pred.clone();
    super::select::remap_columns(&mut p, &|c| {
        columns
            .iter()
            .position(|&k| k == c)
            .unwrap_or(columns.len() + c)
    });
    p
}

/// Whether the conjunction of `quals` implies `pred` (both over the same
/// columns): every row for which all `quals` are true makes `pred` true.
pub fn implied_by(pred: &Expr, quals: &[Expr]) -> bool {
    match &pred.kind {
        ExprKind::And(a, b) => implied_by(a, quals) && implied_by(b, quals),
        ExprKind::Or(a, b) => {
            implied_by(a, quals)
                || implied_by(b, quals)
                || quals.iter().any(|q| clause_implies(q, pred))
        }
        _ => quals.iter().any(|q| clause_implies(q, pred)),
    }
}

/// Whether `q` being true makes `p` true.
fn clause_implies(q: &Expr, p: &Expr) -> bool {
    match &q.kind {
        ExprKind::And(a, b) => clause_implies(a, p) || clause_implies(b, p),
        ExprKind::Or(a, b) => clause_implies(a, p) && clause_implies(b, p),
        _ => match &p.kind {
            ExprKind::And(a, b) => clause_implies(q, a) && clause_implies(q, b),
            ExprKind::Or(a, b) => clause_implies(q, a) || clause_implies(q, b) || same(q, p),
            _ => atom_implies(q, p),
        },
    }
}

/// Whether `a` and `b` are the same expression (printed alike, columns
/// by position).
fn same(a: &Expr, b: &Expr) -> bool {
    deparse(a, &[]) == deparse(b, &[])
}

/// `q` and `p` are not AND/OR.
fn atom_implies(q: &Expr, p: &Expr) -> bool {
    if same(q, p) {
        return true;
    }
    if let ExprKind::IsNull(x, true) = &p.kind {
        // A strict condition on `x` is never true for a NULL `x`.
        return strict_on(q, operand(x));
    }
    // The values `q` allows for a column: one (`x = c`) or a list.
    let allowed = match (comparison(q), in_list(q)) {
        (Some((c, BinaryOp::Eq, Some(v))), _) => Some((c, vec![v])),
        (_, Some(l)) => Some(l),
        _ => None,
    };
    if let Some((cq, vals)) = allowed {
        let each = |v: &Value| match (comparison(p), in_list(p)) {
            (Some((cp, op, vp)), _) => cp == cq && range_implies(BinaryOp::Eq, Some(v), op, vp),
            (_, Some((cp, list))) => {
                cp == cq && list.iter().any(|w| order(v, w) == Some(Ordering::Equal))
            }
            _ => false,
        };
        if !vals.is_empty() && vals.iter().all(|v| each(v)) {
            return true;
        }
    }
    match (comparison(q), comparison(p)) {
        (Some((cq, oq, vq)), Some((cp, op, vp))) => cq == cp && range_implies(oq, vq, op, vp),
        _ => false,
    }
}

/// Whether `q` is false or NULL whenever `x` is NULL: a comparison, LIKE or
/// IN list with `x` as an operand.
fn strict_on(q: &Expr, x: &Expr) -> bool {
    let is_x = |e: &Expr| same(operand(e), x);
    match &q.kind {
        ExprKind::Binary(op, a, b) if is_comparison(*op) => is_x(a) || is_x(b),
        ExprKind::Like(a, b, _, _) => is_x(a) || is_x(b),
        ExprKind::InList(a, _, _) => is_x(a),
        ExprKind::IsNull(a, true) => is_x(a),
        _ => false,
    }
}

fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::LtEq
            | BinaryOp::Gt
            | BinaryOp::GtEq
    )
}

/// `column op constant` (either side), as (column, op with the column on
/// the left, constant); the constant is `None` when NULL.
fn comparison(e: &Expr) -> Option<(usize, BinaryOp, Option<&Value>)> {
    let ExprKind::Binary(op, a, b) = &e.kind else {
        return None;
    };
    if !is_comparison(*op) {
        return None;
    }
    let (a, b) = (operand(a), operand(b));
    if let (Some(c), Some(v)) = (plain_column(a), const_of(b)) {
        return Some((c, *op, v));
    }
    let flipped = match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        o => *o,
    };
    match (const_of(a), plain_column(b)) {
        (Some(v), Some(c)) => Some((c, flipped, v)),
        _ => None,
    }
}

/// The column `x` reads, when it is a plain column (not `char(n)`, whose
/// comparisons ignore trailing spaces).
fn plain_column(x: &Expr) -> Option<usize> {
    match &x.kind {
        ExprKind::Column(c) if !matches!(x.ty, DataType::Char(_)) => Some(*c),
        _ => None,
    }
}

/// `Some(constant)` for a constant (`Some(None)` for NULL), `None` else.
fn const_of(x: &Expr) -> Option<Option<&Value>> {
    x.as_const().map(|v| (!v.is_null()).then_some(v))
}

/// `x IN (constants)` as (column, the non-NULL constants).
fn in_list(e: &Expr) -> Option<(usize, Vec<&Value>)> {
    let ExprKind::InList(a, list, false) = &e.kind else {
        return None;
    };
    let c = plain_column(operand(a))?;
    let vals: Option<Vec<&Value>> = list
        .iter()
        .map(|i| const_of(operand(i)).flatten())
        .collect();
    Some((c, vals?))
}

/// The order of two constants of one comparable kind, `None` across kinds
/// (text against a number is never compared).
fn order(a: &Value, b: &Value) -> Option<Ordering> {
    let num = |v: &Value| {
        matches!(
            v,
            Value::Int2(_)
                | Value::Int4(_)
                | Value::Int8(_)
                | Value::Float4(_)
                | Value::Float8(_)
                | Value::Numeric(_)
        )
    };
    let time = |v: &Value| matches!(v, Value::Date(_) | Value::Timestamp(_));
    let same_kind = std::mem::discriminant(a) == std::mem::discriminant(b)
        || (num(a) && num(b))
        || (time(a) && time(b));
    same_kind.then(|| compare(a, b))
}

/// Whether `x oq cq` implies `x op cp` (PostgreSQL's btree strategy
/// implication table).
fn range_implies(oq: BinaryOp, cq: Option<&Value>, op: BinaryOp, cp: Option<&Value>) -> bool {
    use BinaryOp::*;
    let (Some(cq), Some(cp)) = (cq, cp) else {
        return false;
    };
    let Some(o) = order(cq, cp) else {
        return false;
    };
    let (lt, le, eq, ge, gt) = (o.is_lt(), o.is_le(), o.is_eq(), o.is_ge(), o.is_gt());
    match (op, oq) {
        (Gt, Gt) => ge,
        (Gt, GtEq | Eq) => gt,
        (GtEq, Gt | GtEq | Eq) => ge,
        (Lt, Lt) => le,
        (Lt, LtEq | Eq) => lt,
        (LtEq, Lt | LtEq | Eq) => le,
        (Eq, Eq) => eq,
        (NotEq, Eq) => !eq,
        (NotEq, NotEq) => eq,
        (NotEq, Lt) => le,
        (NotEq, LtEq) => lt,
        (NotEq, Gt) => ge,
        (NotEq, GtEq) => gt,
        _ => false,
    }
}

/// The predicate as psql's `\d` shows it (`pg_get_indexdef` pretty:
/// `a > 10 AND c IS NOT NULL`), over the table's column names.
pub fn pretty(e: &Expr, cols: &[String]) -> String {
    pp(e, cols)
}

/// Where a child sits, for PostgreSQL's `isSimpleNode` rules.
#[derive(Clone, Copy, PartialEq)]
enum Parent {
    /// An operator (`op` with the child on the left when `left`).
    Op(BinaryOp, bool),
    /// AND / OR / NOT (`and_or_not` is 0, 1, 2).
    Bool(u8),
    /// A function's argument, a cast, or anything else.
    Other,
}

fn arith_rank(op: BinaryOp) -> Option<u8> {
    match op {
        BinaryOp::Add | BinaryOp::Sub => Some(1),
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => Some(2),
        _ => None,
    }
}

/// Whether `e` under `parent` prints without parentheses.
fn simple(e: &Expr, parent: Parent) -> bool {
    match &e.kind {
        ExprKind::Column(_) | ExprKind::Const(_) | ExprKind::Func(..) => true,
        ExprKind::Coalesce(_) | ExprKind::Extreme(..) | ExprKind::Cast(..) => true,
        ExprKind::Binary(op, ..) => match parent {
            Parent::Op(pop, left) => match (arith_rank(*op), arith_rank(pop)) {
                (Some(2), Some(1)) => true,
                (Some(1), Some(2)) => false,
                (Some(_), Some(_)) => left,
                _ => false,
            },
            Parent::Bool(_) => true,
            Parent::Other => false,
        },
        ExprKind::Like(..)
        | ExprKind::IsNull(..)
        | ExprKind::IsBool(..)
        | ExprKind::IsDistinct(..) => {
            matches!(parent, Parent::Bool(_))
        }
        ExprKind::And(..) | ExprKind::Not(_) => matches!(parent, Parent::Bool(0 | 1)),
        ExprKind::Or(..) => parent == Parent::Bool(1),
        _ => false,
    }
}

fn child(e: &Expr, cols: &[String], parent: Parent) -> String {
    let s = pp(e, cols);
    if simple(e, parent) {
        s
    } else {
        format!("({s})")
    }
}

/// `e` without its own outer parentheses (pretty mode).
fn pp(e: &Expr, cols: &[String]) -> String {
    match &e.kind {
        ExprKind::Binary(op, a, b) => format!(
            "{} {} {}",
            child(operand(a), cols, Parent::Op(*op, true)),
            op.symbol(),
            child(operand(b), cols, Parent::Op(*op, false))
        ),
        ExprKind::And(..) | ExprKind::Or(..) => {
            let and = matches!(e.kind, ExprKind::And(..));
            let mut items = Vec::new();
            flatten(e, and, &mut items);
            let parent = Parent::Bool(if and { 0 } else { 1 });
            let parts: Vec<String> = items.iter().map(|x| child(x, cols, parent)).collect();
            parts.join(if and { " AND " } else { " OR " })
        }
        ExprKind::Not(a) => format!("NOT {}", child(a, cols, Parent::Bool(2))),
        ExprKind::IsNull(a, neg) => format!(
            "{} IS {}NULL",
            child(a, cols, Parent::Other),
            if *neg { "NOT " } else { "" }
        ),
        ExprKind::Like(a, b, ci, neg) => format!(
            "{} {}{} {}",
            child(a, cols, Parent::Other),
            if *neg { "!" } else { "" },
            if *ci { "~~*" } else { "~~" },
            child(b, cols, Parent::Other)
        ),
        ExprKind::Const(v)
            if matches!(
                e.ty,
                DataType::Numeric(..) | DataType::Float8 | DataType::Float4
            ) =>
        {
            number_literal(v, &e.ty)
        }
        ExprKind::Cast(a, _) if !matches!(a.kind, ExprKind::Const(_)) => {
            if simple(a, Parent::Other) {
                format!("{}::{}", pp(a, cols), e.ty)
            } else {
                format!("({})::{}", pp(a, cols), e.ty)
            }
        }
        ExprKind::InList(a, list, neg) if list.len() > 1 => {
            let items: Vec<String> = list
                .iter()
                .map(|x| match x.as_const() {
                    Some(v) => literal(v, &x.ty),
                    None => pp(x, cols),
                })
                .collect();
            format!(
                "{} {} {} (ARRAY[{}])",
                child(a, cols, Parent::Other),
                if *neg { "<>" } else { "=" },
                if *neg { "ALL" } else { "ANY" },
                items.join(", ")
            )
        }
        _ => {
            let s = deparse(e, cols);
            match s.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
                Some(inner) if balanced(inner) && !matches!(e.kind, ExprKind::Cast(..)) => {
                    inner.to_string()
                }
                _ => s,
            }
        }
    }
}

/// A numeric or float constant as `pg_get_expr` prints the unfolded
/// literal it came from: an integer literal cast to the type (`1::numeric`,
/// `'-1'::integer::numeric`), a decimal one as itself (`2.5`,
/// `'-2.5'::numeric`) or cast (`1.5::double precision`).
fn number_literal(v: &Value, ty: &DataType) -> String {
    let text = crate::types::value_to_string(v);
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.as_str()),
    };
    let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !plain {
        return literal(v, ty);
    }
    let integer = !digits.contains('.') && digits.len() <= 9;
    let numeric = matches!(ty, DataType::Numeric(..));
    match (neg, integer, numeric) {
        (false, true, _) => format!("{text}::{ty}"),
        (false, false, true) => text,
        (false, false, false) => format!("{text}::{ty}"),
        (true, true, _) => format!("'{text}'::integer::{ty}"),
        (true, false, true) => format!("'{text}'::{ty}"),
        (true, false, false) => format!("'{text}'::numeric::{ty}"),
    }
}

/// Whether the parentheses of `s` balance at every prefix (so stripping an
/// outer pair removed a pair that enclosed everything).
fn balanced(s: &str) -> bool {
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn col(i: usize) -> Expr {
        Expr::column(i, DataType::Int4)
    }

    fn cmp(c: usize, op: BinaryOp, v: i32) -> Expr {
        Expr {
            kind: ExprKind::Binary(
                op,
                Box::new(col(c)),
                Box::new(Expr::constant(Value::Int4(v), DataType::Int4)),
            ),
            ty: DataType::Bool,
        }
    }

    fn and(a: Expr, b: Expr) -> Expr {
        Expr {
            kind: ExprKind::And(Box::new(a), Box::new(b)),
            ty: DataType::Bool,
        }
    }

    fn or(a: Expr, b: Expr) -> Expr {
        Expr {
            kind: ExprKind::Or(Box::new(a), Box::new(b)),
            ty: DataType::Bool,
        }
    }

    fn not_null(c: usize) -> Expr {
        Expr {
            kind: ExprKind::IsNull(Box::new(col(c)), true),
            ty: DataType::Bool,
        }
    }

    /// Brute force over small integers: whenever the proof says "implied",
    /// no value of the column satisfies the condition and not the predicate.
    #[test]
    fn range_proofs_are_sound_and_find_containment() {
        use BinaryOp::*;
        let ops = [Eq, NotEq, Lt, LtEq, Gt, GtEq];
        let holds = |op: BinaryOp, x: i32, c: i32| match op {
            Eq => x == c,
            NotEq => x != c,
            Lt => x < c,
            LtEq => x <= c,
            Gt => x > c,
            GtEq => x >= c,
            _ => unreachable!(),
        };
        let mut proved = 0;
        for oq in ops {
            for op in ops {
                for cq in 0..6 {
                    for cp in 0..6 {
                        let implied = implied_by(&cmp(0, op, cp), &[cmp(0, oq, cq)]);
                        let truth = (-3..10).all(|x| !holds(oq, x, cq) || holds(op, x, cp));
                        if implied {
                            proved += 1;
                            assert!(truth, "x {oq:?} {cq} does not imply x {op:?} {cp}");
                        }
                    }
                }
            }
        }
        assert!(proved > 100, "only {proved} implications found");
        assert!(implied_by(&cmp(0, Gt, 10), &[cmp(0, Gt, 20)]));
        assert!(!implied_by(&cmp(0, Gt, 10), &[cmp(0, Gt, 5)]));
        assert!(!implied_by(&cmp(0, Gt, 10), &[cmp(1, Gt, 20)]));
    }

    #[test]
    fn conjunctions_disjunctions_and_not_null() {
        use BinaryOp::*;
        let p = and(cmp(0, Gt, 1), not_null(1));
        assert!(implied_by(&p, &[cmp(1, Eq, 3), cmp(0, Gt, 5)]));
        assert!(!implied_by(&p, &[cmp(0, Gt, 5)]));
        assert!(implied_by(&not_null(0), &[cmp(0, Lt, 3)]));
        assert!(!implied_by(&not_null(0), &[not_null(1)]));
        let p = or(cmp(0, Lt, 0), cmp(0, Gt, 100));
        assert!(implied_by(&p, &[cmp(0, Gt, 200)]));
        assert!(implied_by(&p, std::slice::from_ref(&p)));
        assert!(!implied_by(&p, &[cmp(0, Gt, 50)]));
        let q = or(cmp(0, Eq, 200), cmp(0, Eq, 300));
        assert!(implied_by(&cmp(0, Gt, 100), &[q]));
        let list = |vals: &[i32]| Expr {
            kind: ExprKind::InList(
                Box::new(col(0)),
                vals.iter()
                    .map(|&v| Expr::constant(Value::Int4(v), DataType::Int4))
                    .collect(),
                false,
            ),
            ty: DataType::Bool,
        };
        assert!(implied_by(&list(&[1, 2]), &[cmp(0, Eq, 2)]));
        assert!(!implied_by(&list(&[1, 2]), &[cmp(0, Eq, 3)]));
        assert!(implied_by(&list(&[1, 2, 3]), &[list(&[3, 1])]));
        assert!(!implied_by(&list(&[1, 2]), &[list(&[3, 1])]));
        assert!(implied_by(&cmp(0, Gt, 0), &[list(&[3, 1])]));
        assert!(!implied_by(&cmp(0, Gt, 1), &[list(&[3, 1])]));
    }

    #[test]
    fn pretty_prints_as_psql() {
        let cols = vec!["a".to_string(), "b".to_string()];
        assert_eq!(pretty(&cmp(0, BinaryOp::Gt, 10), &cols), "a > 10");
        let p = and(cmp(1, BinaryOp::Gt, 1), not_null(0));
        assert_eq!(pretty(&p, &cols), "b > 1 AND a IS NOT NULL");
        let p = and(
            or(cmp(0, BinaryOp::Eq, 1), cmp(1, BinaryOp::Eq, 2)),
            not_null(0),
        );
        assert_eq!(pretty(&p, &cols), "(a = 1 OR b = 2) AND a IS NOT NULL");
    }
}
