//! Plans of repeated SELECTs and UPDATEs kept by statement shape, so a
//! piped script of point lookups (`select abalance from a where aid = 42;`
//! with a new key each time) or of keyed updates (`update a set abalance =
//! abalance + -7 where aid = 42;`) plans once, not once per statement:
//! PostgreSQL's generic plans (`plancache.c`), for statements sent as text.
//!
//! A statement's *shape* is its token stream with each `int4` literal that
//! stands alone as a comparison or addition operand (after `=`, `<>`, `<`,
//! `<=`, `>`, `>=`, `+`, `-`, `BETWEEN` or `AND`, and not followed by an
//! operator), with the sign minus folded into it (`= -5`), replaced by a
//! placeholder; only single SELECTs (no `INTO`, no `FOR`) and UPDATEs (no
//! `RETURNING`; [`update`]) have one. The
//! first statement of a shape runs as usual. The second is planned as usual
//! too, and then twice more with its placeholders' literals replaced by
//! other values (once ascending, once descending). The shape gets a plan
//! template only when:
//!
//! - planning asked the session for nothing that could change between runs
//!   of the same text: no view, no subquery run at plan time, no
//!   `now()`, no session function, no inspection function;
//! - no table it reads has a partial index (whether one may serve a scan
//!   depends on the literals implying its predicate);
//! - the three plans are identical except for values, and each value that
//!   differs is, in all three, exactly one placeholder's literal (as an
//!   `int4` or `int8`), and every placeholder's literal is such a value
//!   somewhere: a literal the planner folded into something else, or one
//!   that changed the plan's shape (a LIMIT, a different path), refuses the
//!   shape for good.
//!
//! A later statement of the shape takes the template's plan with its own
//! literals in those places, after locking each table the template read by
//! the name it used (as the binder would) and checking that the catalog
//! still hands out the very definition it planned with (any DDL, new index,
//! ANALYZE or VACUUM statistics, TRUNCATE makes a new one), that the
//! session's settings are the same and that no table's size has moved by
//! more than a factor of two; otherwise the template is dropped and the
//! statement planned afresh. Results are those of planning each statement
//! (the plan shape chosen for the first values may be one the planner would
//! not choose for later ones, as with PostgreSQL's generic plans).
//!
//! The cache is per session and bounded ([`MAX_SHAPES`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use heapdb_grammar::ast;
use heapdb_grammar::keywords::Keyword;
use heapdb_grammar::lexer::{tokenize, TokenKind};

use super::query::StmtCtx;
use crate::catalog::{TableDef, ViewDef};
use crate::error::Result;
use crate::exec::ExecContext;
use crate::plan::bind::Binder;
use crate::plan::{Plan, PlanContext, TableRows};
use crate::settings::Settings;
use crate::txn::{LockMode, Snapshot};
use crate::types::{DataType, Value};

mod kept;
mod update;

use kept::Kept;

/// Shapes remembered at most (seen, refused or templated); the cache is
/// emptied when it is full.
pub const MAX_SHAPES: usize = 512;

/// A statement's shape and its placeholders' literals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// The token texts, placeholders as `$`.
    pub key: String,
    /// Each placeholder's literal and its byte range in the statement.
    pub lits: Vec<(i32, usize, usize)>,
    /// Whether the statement is an UPDATE (else a SELECT).
    pub writes: bool,
}

/// Whether a token of `kind` ends an operand: a minus after it is binary.
fn ends_operand(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Number | TokenKind::Word(_) | TokenKind::QuotedIdent(_) | TokenKind::RParen
    )
}

/// Whether an operand after a token of `kind` is a whole operand of that
/// comparison or addition (an operator of lower or equal precedence than
/// any that can follow the operand, see [`operand_literal`]).
fn takes_operand(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Eq
            | TokenKind::NotEq
            | TokenKind::Lt
            | TokenKind::LtEq
            | TokenKind::Gt
            | TokenKind::GtEq
            | TokenKind::Plus
            | TokenKind::Minus
            | TokenKind::Word(Keyword::Between)
            | TokenKind::Word(Keyword::And)
    )
}

/// The `int4` literal standing alone as a comparison or addition operand
/// at `tokens[i]`: an integer after `=`, `<>`, `<`, `<=`, `>`, `>=`, `+`,
/// `-`, `BETWEEN` or `AND` and not followed by an operator that binds
/// tighter, or such an integer with a sign minus before it (`= -5`,
/// `+ -5`; PostgreSQL folds it into the literal). Returns its value and the
/// index of its last token.
fn operand_literal(
    sql: &str,
    tokens: &[heapdb_grammar::lexer::Token],
    i: usize,
) -> Option<(i32, usize)> {
    let before = |j: usize| j.checked_sub(1).map(|p| tokens[p].kind);
    let (negative, number) = match tokens[i].kind {
        TokenKind::Minus
            if before(i).is_some_and(takes_operand)
                && tokens
                    .get(i + 1)
                    .is_some_and(|n| n.kind == TokenKind::Number) =>
        {
            (true, i + 1)
        }
        TokenKind::Number => {
            // After a minus, the number is an operand only when that minus
            // subtracts (else it is a sign the literal was folded with).
            let ok = match before(i)? {
                TokenKind::Minus => before(i - 1).is_some_and(ends_operand),
                k => takes_operand(k),
            };
            if !ok {
                return None;
            }
            (false, i)
        }
        _ => return None,
    };
    let tighter = tokens.get(number + 1).is_some_and(|n| {
        matches!(
            n.kind,
            TokenKind::Plus
                | TokenKind::Minus
                | TokenKind::Star
                | TokenKind::Slash
                | TokenKind::Percent
                | TokenKind::Caret
                | TokenKind::DoubleColon
                | TokenKind::Dot
                | TokenKind::Concat
                | TokenKind::LBracket
        )
    });
    let text = &sql[tokens[number].start..tokens[number].end];
    if tighter || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v = text.parse::<i32>().ok()?;
    Some((if negative { -v } else { v }, number))
}

impl Shape {
    /// The shape of `sql`, when it is a single SELECT or UPDATE with one.
    pub fn of(sql: &str) -> Option<Shape> {
        // Most other statements are told apart without lexing them (a
        // statement behind a comment or parenthesis is simply not cached).
        let head = sql.trim_start().as_bytes();
        if head.len() < 6 {
            return None;
        }
        let writes = if head[..6].eq_ignore_ascii_case(b"select") {
            false
        } else if head[..6].eq_ignore_ascii_case(b"update") {
            true
        } else {
            return None;
        };
        let tokens = tokenize(sql);
        let mut end = tokens.len().checked_sub(1)?; // the Eof
        if end > 0 && tokens[end - 1].kind == TokenKind::Semicolon {
            end -= 1;
        }
        let tokens = &tokens[..end];
        let first = if writes {
            Keyword::Update
        } else {
            Keyword::Select
        };
        if tokens.first()?.kind != TokenKind::Word(first) {
            return None;
        }
        let mut key = String::with_capacity(sql.len());
        let mut lits = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            let t = &tokens[i];
            match t.kind {
                TokenKind::Semicolon | TokenKind::Error(_) | TokenKind::Other => return None,
                TokenKind::Word(Keyword::Into) | TokenKind::Word(Keyword::For) => return None,
                // RETURNING's rows are not part of an UPDATE's template.
                TokenKind::Word(Keyword::Returning) => return None,
                _ => {}
            }
            if !key.is_empty() {
                key.push(' ');
            }
            match operand_literal(sql, tokens, i) {
                Some((v, last)) => {
                    key.push('$');
                    lits.push((v, t.start, tokens[last].end));
                    i = last + 1;
                }
                None => {
                    key.push_str(&sql[t.start..t.end]);
                    i += 1;
                }
            }
        }
        (!lits.is_empty()).then_some(Shape { key, lits, writes })
    }

    /// The literals of `sql` when it is `this` (this shape's statement)
    /// with other integers in the placeholders' places: every byte outside
    /// them the same, each place an optionally signed run of digits that
    /// fits `int4`. Such a statement lexes as `this` does with other
    /// numbers there, so it has this shape. A sign minus put where there
    /// was none must follow a space (so it cannot join the token before it
    /// into an operator or a comment), and a number put where a signed one
    /// was must follow a space or a comparison or addition operator.
    pub fn relit(&self, this: &str, sql: &str) -> Option<Vec<(i32, usize, usize)>> {
        let (p, n) = (this.as_bytes(), sql.as_bytes());
        let mut lits = Vec::with_capacity(self.lits.len());
        let (mut pi, mut ni) = (0, 0);
        for &(_, start, end) in &self.lits {
            let same = &p[pi..start];
            if n.get(ni..ni + same.len())? != same {
                return None;
            }
            ni += same.len();
            let at = ni;
            let before = if at > 0 { n[at - 1] } else { b' ' };
            let was_signed = p[start] == b'-';
            let signed = n.get(ni) == Some(&b'-');
            if signed {
                if !was_signed && !before.is_ascii_whitespace() {
                    return None;
                }
                ni += 1;
                while n.get(ni).is_some_and(|b| b.is_ascii_whitespace()) {
                    ni += 1;
                }
            } else if was_signed && !(before.is_ascii_whitespace() || b"=<>+".contains(&before)) {
                return None;
            }
            let digits = n[ni..].iter().take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 || digits > 10 {
                return None;
            }
            let v: i32 = std::str::from_utf8(&n[ni..ni + digits])
                .ok()?
                .parse()
                .ok()?;
            ni += digits;
            lits.push((if signed { -v } else { v }, at, ni));
            pi = end;
        }
        (n.get(ni..)? == &p[pi..]).then_some(lits)
    }

    /// `sql` with the placeholders' literals replaced by `values`.
    fn with_values(&self, sql: &str, values: &[i32]) -> String {
        let mut out = String::with_capacity(sql.len() + 8 * values.len());
        let mut at = 0;
        for (&(_, start, end), v) in self.lits.iter().zip(values) {
            out.push_str(&sql[at..start]);
            out.push_str(&v.to_string());
            at = end;
        }
        out.push_str(&sql[at..]);
        out
    }

    /// Two sets of stand-in values, distinct from each other and from the
    /// statement's own: one ascending, one descending.
    fn stand_ins(&self) -> [Vec<i32>; 2] {
        let own: Vec<i32> = self.lits.iter().map(|l| l.0).collect();
        let pick = |mut v: i32, step: i32| {
            let mut out = Vec::with_capacity(own.len());
            for _ in &own {
                while own.contains(&v) || out.contains(&v) {
                    v += step;
                }
                out.push(v);
                v += step;
            }
            out
        };
        [pick(1_000_003, 7919), pick(999_983, -7919)]
    }
}

/// A shape's plan with the places its literals go.
#[derive(Debug)]
pub struct Template {
    /// The plan made for the statement that created the template, with
    /// the literals of the statement that used it last in its slots: a
    /// SELECT fills them in place and runs the plan under the lock, with
    /// no copy ([`instantiate`](super::Session::run_template)).
    plan: parking_lot::Mutex<Plan>,
    /// The tables the statement opened, an UPDATE's target first.
    tables: Vec<Opened>,
    /// The settings it planned under.
    settings: Settings,
    /// Per value of the plan in [`for_each_value`] order that a literal
    /// gives: (the value's position, the literal's index).
    slots: Vec<(usize, usize)>,
    /// A SELECT's point-lookup executor, made at its first run from the
    /// template (`exec::fastpath::lookup`); locked under `plan`.
    kept: parking_lot::Mutex<Kept>,
}

/// A table a template's statement opened.
#[derive(Debug)]
struct Opened {
    /// The name it was opened by.
    name: String,
    /// The definition it got.
    def: Arc<TableDef>,
    /// The table's pages then.
    pages: u32,
    /// Whether it is an UPDATE's target (locked `RowExclusive`).
    target: bool,
}

/// What the cache knows of a shape.
#[derive(Debug, Clone)]
enum Known {
    /// Run once.
    Seen,
    /// Not to be cached.
    Refused,
    /// Its template.
    Planned(Arc<Template>),
}

/// A session's plans by shape.
#[derive(Debug, Default)]
pub struct PlanCache {
    shapes: HashMap<String, Known>,
    /// The shape and text of the statement being run, whose template the
    /// planner should make ([`PlanCache::begin`] said so).
    pub(crate) pending: Option<(Shape, String)>,
    /// The last statement [`Shape::of`] lexed, and its shape.
    last: Option<(String, Shape)>,
    /// The shape whose template was used last (its entry in `shapes`).
    hot: Option<(String, Arc<Template>)>,
}

/// What to do with a statement of a known shape.
pub enum Use {
    /// Plan it as usual (and maybe make a template: `pending` is set).
    Plan,
    /// Run it from this template.
    Template(Arc<Template>),
}

impl PlanCache {
    /// Decides how the statement `sql` of `shape` runs and notes its
    /// sighting.
    pub fn begin(&mut self, shape: &Shape, sql: &str) -> Use {
        self.pending = None;
        if let Some((key, t)) = &self.hot {
            if *key == shape.key {
                return Use::Template(t.clone());
            }
        }
        match self.shapes.get(&shape.key) {
            Some(Known::Planned(t)) => {
                self.hot = Some((shape.key.clone(), t.clone()));
                return Use::Template(t.clone());
            }
            Some(Known::Refused) => return Use::Plan,
            Some(Known::Seen) => self.pending = Some((shape.clone(), sql.to_string())),
            None => {
                if self.shapes.len() >= MAX_SHAPES {
                    self.shapes.clear();
                    self.hot = None;
                }
                self.shapes.insert(shape.key.clone(), Known::Seen);
            }
        }
        Use::Plan
    }

    /// Forgets the template of `shape` (it went stale); the next statement
    /// of the shape may make a new one.
    pub fn forget(&mut self, shape: &Shape) {
        self.hot = None;
        self.shapes.insert(shape.key.clone(), Known::Seen);
    }

    /// The shape of `sql` ([`Shape::of`]), found without lexing when `sql`
    /// is the last lexed statement with other literals ([`Shape::relit`]).
    pub fn shape_of(&mut self, sql: &str) -> Option<Shape> {
        if let Some((last_sql, last)) = &self.last {
            if let Some(lits) = last.relit(last_sql, sql) {
                return Some(Shape {
                    key: last.key.clone(),
                    lits,
                    writes: last.writes,
                });
            }
        }
        let shape = Shape::of(sql)?;
        self.last = Some((sql.to_string(), shape.clone()));
        Some(shape)
    }

    fn settle(&mut self, shape: &Shape, t: Option<Template>) {
        self.hot = None;
        let known = match t {
            Some(t) => Known::Planned(Arc::new(t)),
            None => Known::Refused,
        };
        self.shapes.insert(shape.key.clone(), known);
    }

    /// Templates held (for tests).
    pub fn templates(&self) -> usize {
        self.shapes
            .values()
            .filter(|k| matches!(k, Known::Planned(_)))
            .count()
    }
}

/// Calls `f` on every value of `plan` that a literal may have become: the
/// constants of the nodes' expressions and an index scan's bounds and
/// conditions, in a fixed order. Values elsewhere (a LIMIT, a set-returning
/// function's arguments) are not visited: they take part in the
/// comparison of plans as they are.
pub fn for_each_value(plan: &mut Plan, f: &mut dyn FnMut(&mut Value)) {
    fn expr(e: &mut crate::nodes::Expr, f: &mut dyn FnMut(&mut Value)) {
        if let crate::nodes::ExprKind::Const(v) = &mut e.kind {
            f(v);
        }
        for c in e.children_mut() {
            expr(c, f);
        }
    }
    if let crate::nodes::Node::IndexScan(s) = &mut plan.node {
        for v in s.bounds.eq.iter_mut().flatten() {
            f(v);
        }
        for (v, _) in s.bounds.lower.iter_mut().chain(s.bounds.upper.iter_mut()) {
            f(v);
        }
        for e in &mut s.index_cond {
            expr(e, f);
        }
    }
    for e in plan.node.exprs_mut() {
        expr(e, f);
    }
    for c in plan.children_mut() {
        for_each_value(c, f);
    }
}

/// The plan's values, and its text with every such value and every row
/// estimate blanked (two plans with the same text differ in values alone).
fn values_and_frame(plan: &Plan) -> (Vec<Value>, String) {
    fn blank_rows(p: &mut Plan) {
        p.rows = 0.0;
        for c in p.children_mut() {
            blank_rows(c);
        }
    }
    let mut copy = plan.clone();
    let mut values = Vec::new();
    for_each_value(&mut copy, &mut |v| {
        values.push(std::mem::replace(v, Value::Null))
    });
    blank_rows(&mut copy);
    (values, format!("{copy:?}"))
}

/// `v` as the literal `lit` would be in its place: the same type, the
/// literal's value (only `int4` and `int8` places are filled).
fn literal_as(v: &Value, lit: i32) -> Option<Value> {
    match v {
        Value::Int4(_) => Some(Value::Int4(lit)),
        Value::Int8(_) => Some(Value::Int8(lit as i64)),
        _ => None,
    }
}

/// The slots of a template from the plan of the statement's own literals
/// and those of the two stand-in sets, or `None` when the plans say the
/// shape must not be cached (module doc).
fn slots_of(shape: &Shape, plans: [(&Plan, &[i32]); 3]) -> Option<Vec<(usize, usize)>> {
    let framed: Vec<(Vec<Value>, String)> =
        plans.iter().map(|(p, _)| values_and_frame(p)).collect();
    if framed[1].1 != framed[0].1 || framed[2].1 != framed[0].1 {
        return None;
    }
    let mut slots = Vec::new();
    let mut used = vec![false; shape.lits.len()];
    for j in 0..framed[0].0.len() {
        let vals = [&framed[0].0[j], &framed[1].0[j], &framed[2].0[j]];
        if vals[1] == vals[0] && vals[2] == vals[0] {
            continue;
        }
        // A value that moved must be one literal's, in all three plans.
        let lit = (0..shape.lits.len()).find(|&i| {
            (0..3).all(|k| literal_as(vals[k], plans[k].1[i]).as_ref() == Some(vals[k]))
        })?;
        used[lit] = true;
        slots.push((j, lit));
    }
    used.iter().all(|&u| u).then_some(slots)
}

/// A [`PlanContext`] that passes everything to the statement's and notes
/// what a template must check: the tables opened, and whether planning
/// asked for anything that may differ between runs of the same text.
struct Recorder<'r, 's> {
    inner: &'r mut StmtCtx<'s>,
    tables: RefCell<Vec<(String, Arc<TableDef>)>>,
    impure: Cell<bool>,
}

impl PlanContext for Recorder<'_, '_> {
    fn table(&self, name: &str) -> Result<Arc<TableDef>> {
        let t = self.inner.table(name)?;
        self.tables.borrow_mut().push((name.to_string(), t.clone()));
        Ok(t)
    }
    fn view(&self, name: &str) -> Option<Arc<ViewDef>> {
        let v = self.inner.view(name);
        if v.is_some() {
            self.impure.set(true);
        }
        v
    }
    fn children(&self, parent: &TableDef) -> Result<Vec<Arc<TableDef>>> {
        let found = self.inner.children(parent)?;
        let mut tables = self.tables.borrow_mut();
        tables.extend(found.iter().map(|t| (t.name.clone(), t.clone())));
        Ok(found)
    }
    fn table_pages(&self, table: &TableDef) -> u32 {
        self.inner.table_pages(table)
    }
    fn all_visible_fraction(&self, table: &TableDef) -> f64 {
        self.inner.all_visible_fraction(table)
    }
    fn run_subquery(&mut self, plan: &Plan) -> Result<Vec<Vec<Value>>> {
        self.impure.set(true);
        self.inner.run_subquery(plan)
    }
    fn subplan_context(&mut self, plan: &Plan) -> Result<ExecContext> {
        self.impure.set(true);
        self.inner.subplan_context(plan)
    }
    fn explain_only(&self) -> bool {
        self.inner.explain_only()
    }
    fn settings(&self) -> &Settings {
        self.inner.settings()
    }
    fn statement_timestamp(&self) -> i64 {
        self.impure.set(true);
        self.inner.statement_timestamp()
    }
    fn scalar_function(&mut self, name: &str, args: &[Value]) -> Option<Result<(Value, DataType)>> {
        let r = self.inner.scalar_function(name, args);
        if r.is_some() {
            self.impure.set(true);
        }
        r
    }
    fn inspection_rows(&mut self, name: &str, args: &[Value]) -> Option<Result<TableRows>> {
        let r = self.inner.inspection_rows(name, args);
        if r.is_some() {
            self.impure.set(true);
        }
        r
    }
    fn functions(&self, name: &str) -> Vec<Arc<crate::catalog::FunctionDef>> {
        // A user function may be replaced or dropped: never templated.
        let f = self.inner.functions(name);
        if !f.is_empty() {
            self.impure.set(true);
        }
        f
    }
    fn domain(&self, name: &str) -> Option<Arc<crate::catalog::DomainDef>> {
        // A domain may be altered or dropped: never templated.
        let d = self.inner.domain(name);
        if d.is_some() {
            self.impure.set(true);
        }
        d
    }
    fn operators(&self, name: &str) -> Vec<Arc<crate::catalog::OperatorDef>> {
        // A user operator may be dropped: never templated.
        let o = self.inner.operators(name);
        if !o.is_empty() {
            self.impure.set(true);
        }
        o
    }
}

/// What planning made and what it opened, or `None` when it asked for
/// something a template cannot depend on.
type Recorded<T> = (T, Option<Vec<(String, Arc<TableDef>)>>);

impl super::Session {
    /// Runs `plan` (a binder's work under `snap`), noting what it opened.
    fn record<T>(
        &self,
        snap: &Snapshot,
        plan: impl FnOnce(&mut Binder<'_>) -> Result<T>,
    ) -> Result<Recorded<T>> {
        let mut ctx = self.stmt_ctx(snap);
        let mut rec = Recorder {
            inner: &mut ctx,
            tables: RefCell::new(Vec::new()),
            impure: Cell::new(false),
        };
        let made = plan(&mut Binder::new(&mut rec))?;
        let (tables, impure) = (rec.tables.into_inner(), rec.impure.get());
        Ok((made, (!impure).then_some(tables)))
    }

    /// Plans `q` as [`super::Session::plan_query`] does, noting what it
    /// opened.
    fn plan_recorded(&self, q: &ast::Query, snap: &Snapshot) -> Result<Recorded<Plan>> {
        let (mut plan, tables) = self.record(snap, |b| b.plan_query(q))?;
        let ctx = self.stmt_ctx(snap);
        crate::plan::parallel::parallelize(&mut plan, &self.settings, &ctx);
        Ok((plan, tables))
    }

    /// Plans the statement `q` of `shape` (`sql`'s text) and makes the
    /// shape's template, or refuses the shape (module doc). Planning errors
    /// of the stand-in statements only refuse the shape.
    pub(super) fn plan_with_template(
        &mut self,
        q: &ast::Query,
        snap: &Snapshot,
        shape: Shape,
        sql: &str,
    ) -> Result<Plan> {
        let (plan, tables) = self.plan_recorded(q, snap)?;
        let replan = |s: &Self, text: &str| {
            let stmts = heapdb_grammar::parse(text).ok()?;
            let [ast::Statement::Query(q)] = stmts.as_slice() else {
                return None;
            };
            s.plan_recorded(q, snap).ok()
        };
        let template = tables
            .and_then(|tables| self.template(&plan, tables, None, snap, &shape, sql, &replan));
        self.plan_cache.settle(&shape, template);
        Ok(plan)
    }

    /// The template of `shape` from `plan`, the plan of `sql` that opened
    /// `tables` (and writes `target`), with `replan` planning the same
    /// statement with other literals; `None` refuses the shape.
    #[allow(clippy::too_many_arguments)]
    fn template(
        &self,
        plan: &Plan,
        tables: Vec<(String, Arc<TableDef>)>,
        target: Option<(String, Arc<TableDef>)>,
        snap: &Snapshot,
        shape: &Shape,
        sql: &str,
        replan: &dyn Fn(&Self, &str) -> Option<Recorded<Plan>>,
    ) -> Option<Template> {
        // Whether a partial index may serve a scan depends on the
        // literals (they must imply its predicate): no template.
        if tables
            .iter()
            .chain(&target)
            .any(|(_, t)| t.indexes.iter().any(|ix| ix.predicate.is_some()))
        {
            return None;
        }
        let own: Vec<i32> = shape.lits.iter().map(|l| l.0).collect();
        let [a, b] = shape.stand_ins();
        let mut others = Vec::with_capacity(2);
        for values in [&a, &b] {
            let (p, opened) = replan(self, &shape.with_values(sql, values))?;
            let opened = opened?;
            let same = opened.len() == tables.len()
                && opened
                    .iter()
                    .zip(&tables)
                    .all(|(x, y)| x.0 == y.0 && Arc::ptr_eq(&x.1, &y.1));
            if !same {
                return None;
            }
            others.push(p);
        }
        let slots = slots_of(shape, [(plan, &own), (&others[0], &a), (&others[1], &b)])?;
        let ctx = self.stmt_ctx(snap);
        let used = |(n, t): (String, Arc<TableDef>), target: bool| {
            let pages = ctx.table_pages(&t);
            Opened {
                name: n,
                def: t,
                pages,
                target,
            }
        };
        Some(Template {
            plan: parking_lot::Mutex::new(plan.clone()),
            tables: target
                .into_iter()
                .map(|t| used(t, true))
                .chain(tables.into_iter().map(|t| used(t, false)))
                .collect(),
            settings: self.settings.clone(),
            slots,
            kept: parking_lot::Mutex::new(Kept::Unknown),
        })
    }

    /// Whether template `t` may still run a statement, after locking its
    /// tables (an UPDATE's target first, as the statement locks it); false
    /// when it went stale (module doc).
    fn template_fresh(&self, t: &Template, snap: &Snapshot) -> Result<bool> {
        if self.settings != t.settings {
            return Ok(false);
        }
        let ctx = self.stmt_ctx(snap);
        for used in &t.tables {
            // A lock wait asks for the statement to run again (its error
            // goes up); any other failure is planning's to report, with
            // the position the binder gives it.
            let now = if used.target {
                if self.db.catalog.any_view_named(&used.name) {
                    return Ok(false);
                }
                self.lookup_table(snap, &used.name, LockMode::RowExclusive)
            } else {
                ctx.table(&used.name)
            };
            let now = match now {
                Ok(now) => now,
                Err(e) if self.restart.get() => return Err(e),
                Err(_) => return Ok(false),
            };
            let size = ctx.table_pages(&now);
            let pages = used.pages;
            let moved = size > pages.saturating_mul(2).max(8) || size.saturating_mul(2) < pages;
            if !Arc::ptr_eq(&now, &used.def) || moved {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Puts `shape`'s literals into the slots of `plan`, a copy of template
/// `t`'s plan (every slot is written, so what an earlier statement left
/// there does not matter).
fn fill_slots(plan: &mut Plan, t: &Template, shape: &Shape) {
    let mut slots = t.slots.iter().peekable();
    let mut j = 0;
    for_each_value(plan, &mut |v| {
        while let Some(&&(at, lit)) = slots.peek() {
            if at != j {
                break;
            }
            if let Some(new) = literal_as(v, shape.lits[lit].0) {
                *v = new;
            }
            slots.next();
        }
        j += 1;
    });
}

impl super::Session {
    /// Runs the statement `sql` of `shape` from its template (planning it
    /// afresh when the template went stale).
    pub(super) fn run_template(
        &mut self,
        t: &Template,
        shape: &Shape,
        sql: &str,
        sink: &mut dyn FnMut(&[super::Column], &crate::exec::vector::Batch) -> Result<()>,
    ) -> Result<super::QueryResult> {
        let t0 = std::time::Instant::now();
        let snap = self.statement_snapshot();
        if self.template_fresh(t, &snap)? {
            if let Some(target) = t.tables.first().filter(|u| u.target) {
                let mut plan = t.plan.lock().clone();
                fill_slots(&mut plan, t, shape);
                return self.update_planned(&snap, &target.def, plan, sql, t0, sink);
            }
            // The template's own plan, filled in place; planned afresh if
            // it is in use further up (a statement run from inside one of
            // its own shape).
            if let Some(mut plan) = t.plan.try_lock() {
                if let Some(r) = self.run_kept(t, &mut plan, shape, &snap, t0, sink)? {
                    return Ok(r);
                }
                fill_slots(&mut plan, t, shape);
                return self.execute_plan(&plan, &snap, t0, sink);
            }
        } else {
            self.plan_cache.forget(shape);
        }
        let stmts = heapdb_grammar::parse(sql).map_err(super::parse_error)?;
        let [stmt] = stmts.as_slice() else {
            return Err(crate::error::Error::internal(
                "a cached statement shape is not a single statement",
            ));
        };
        self.dispatch(stmt, sink)
    }
}

#[cfg(test)]
mod tests;
