//! Pulling `[NOT] EXISTS` sublinks of WHERE up into joins, as PostgreSQL's
//! `pull_up_sublinks` does, when the subquery is correlated through
//! equalities alone.
//!
//! A top-level WHERE conjunct `EXISTS (SELECT ... FROM t1, t2 WHERE
//! inner = outer AND ... AND inner-only conditions)` becomes a hash join of
//! the query's FROM with the subquery's rows: for EXISTS an inner join with
//! the distinct inner key values (PostgreSQL's unique-ified semi join), for
//! NOT EXISTS an anti join. Both keep SQL's meaning: a NULL key matches
//! nothing, so EXISTS is false and NOT EXISTS true for that row.
//!
//! The shape is checked on the syntax: the subquery is one plain SELECT
//! (no aggregates, GROUP BY, HAVING, OFFSET, WITH or set operations; a
//! constant LIMIT other than 0 is dropped)
//! over plain tables; every WHERE conjunct reads only those tables, or is
//! `inner = outer` with one side reading only them and the other only the
//! enclosing query. A name is the subquery's when one of its tables has
//! it, as the binder resolves names innermost first. `NOT IN` is never an
//! anti join: a NULL among the subquery's values makes it NULL, not true.
//! Any other sublink stays a SubPlan.

use std::collections::HashSet;

use heapdb_grammar::ast;

use super::super::bind::{contains_aggregate, contains_subquery, walk, Binder, Mode};
use super::super::scope::Scope;
use super::super::{Field, JoinKind, Node, Plan};
use crate::error::Result;
use crate::exec::expr::{Expr, ExprKind};
use crate::types::cast::CastContext;
use crate::types::{self, BinaryOp};

/// A WHERE conjunct that can become a join.
pub(super) struct PullUp {
    /// The conjunct as written (applied as a filter if the join fails).
    pub conjunct: ast::Expr,
    /// NOT EXISTS (an anti join) or EXISTS.
    anti: bool,
    /// `(outer side, inner side)` of each correlating equality.
    keys: Vec<(ast::Expr, ast::Expr)>,
    /// The subquery reduced to its inner-only conjuncts, selecting the
    /// inner keys.
    inner: ast::Query,
}

/// The top-level AND-ed conjuncts of `e`.
fn and_items(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match &e.kind {
        ast::ExprKind::Binary {
            op: ast::BinaryOp::And,
            left,
            right,
        } => {
            and_items(left, out);
            and_items(right, out);
        }
        _ => out.push(e.clone()),
    }
}

/// `items` joined with AND (`None` when empty).
fn and_all(items: Vec<ast::Expr>) -> Option<ast::Expr> {
    items.into_iter().reduce(|l, r| {
        ast::Expr::new(ast::ExprKind::Binary {
            op: ast::BinaryOp::And,
            left: Box::new(l),
            right: Box::new(r),
        })
    })
}

impl Binder<'_> {
    /// Splits WHERE into the conjuncts to plan as usual and those to pull
    /// up into joins.
    pub(super) fn split_pullups(&mut self, w: &ast::Expr) -> (Option<ast::Expr>, Vec<PullUp>) {
        let mut items = Vec::new();
        and_items(w, &mut items);
        let (mut rest, mut pulled) = (Vec::new(), Vec::new());
        for c in items {
            let (anti, query) = match &c.kind {
                ast::ExprKind::Exists(q) => (false, q),
                ast::ExprKind::Unary {
                    op: ast::UnaryOp::Not,
                    expr,
                } => match &expr.kind {
                    ast::ExprKind::Exists(q) => (true, q),
                    _ => {
                        rest.push(c);
                        continue;
                    }
                },
                _ => {
                    rest.push(c);
                    continue;
                }
            };
            match self.pullup_shape(query) {
                Some((keys, inner)) => pulled.push(PullUp {
                    conjunct: c.clone(),
                    anti,
                    keys,
                    inner,
                }),
                None => rest.push(c),
            }
        }
        (and_all(rest), pulled)
    }

    /// The correlating equalities and the reduced subquery of `q`, when it
    /// has the shape a join can take (see the module doc).
    fn pullup_shape(
        &mut self,
        q: &ast::Query,
    ) -> Option<(Vec<(ast::Expr, ast::Expr)>, ast::Query)> {
        // A constant LIMIT other than 0 (or NULL) does not change EXISTS,
        // as PostgreSQL's simplify_EXISTS_query drops it.
        let limit_ok = match q.limit.as_ref().map(|l| &l.kind) {
            None | Some(ast::ExprKind::Literal(ast::Literal::Null)) => true,
            Some(ast::ExprKind::Literal(ast::Literal::Number(n))) => {
                n.parse::<i64>().is_ok_and(|n| n > 0)
            }
            Some(_) => false,
        };
        if !q.with.is_empty() || !limit_ok || q.offset.is_some() {
            return None;
        }
        let ast::SetExpr::Select(s) = &q.body else {
            return None;
        };
        if !s.group_by.is_empty() || s.having.is_some() || s.from.is_empty() {
            return None;
        }
        for item in &s.projection {
            if let ast::SelectItem::Expr { expr, .. } = item {
                if contains_aggregate(expr)
                    || contains_subquery(expr)
                    || matches!(expr.kind, ast::ExprKind::Function(_))
                {
                    return None;
                }
            }
        }
        // The subquery's names: (qualifier, column) of its tables.
        let mut quals = HashSet::new();
        let mut columns = HashSet::new();
        for t in &s.from {
            let ast::TableRef::Table { name, alias, .. } = t else {
                return None;
            };
            if name.schema.is_some() || self.ctes.iter().any(|c| c.name == name.name) {
                return None;
            }
            let def = self.ctx.table(&name.name).ok()?;
            let qual = alias.as_ref().map_or(name.name.clone(), |a| a.name.clone());
            if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                return None;
            }
            for c in &def.columns {
                columns.insert(c.name.clone());
            }
            quals.insert(qual);
        }
        // Whether every column `e` reads is the subquery's (Some(true)),
        // none is (Some(false)), or both / none at all (None).
        let side = |e: &ast::Expr| -> Option<bool> {
            let (mut inner, mut outer) = (false, false);
            walk(e, &mut |x| {
                if let ast::ExprKind::Column(c) = &x.kind {
                    let mine = match &c.table {
                        Some(t) => quals.contains(t),
                        None => columns.contains(&c.column),
                    };
                    if mine {
                        inner = true;
                    } else {
                        outer = true;
                    }
                }
            });
            match (inner, outer) {
                (true, false) => Some(true),
                (false, true) => Some(false),
                _ => None,
            }
        };
        let mut keys = Vec::new();
        let mut local = Vec::new();
        let mut conjuncts = Vec::new();
        if let Some(w) = &s.where_clause {
            and_items(w, &mut conjuncts);
        }
        for c in conjuncts {
            if contains_subquery(&c) {
                return None;
            }
            if side(&c) != Some(false) && !has_outer(&c, &side) {
                local.push(c);
                continue;
            }
            let ast::ExprKind::Binary {
                op: ast::BinaryOp::Eq,
                left,
                right,
            } = &c.kind
            else {
                return None;
            };
            match (side(left), side(right)) {
                (Some(true), Some(false)) => keys.push(((**right).clone(), (**left).clone())),
                (Some(false), Some(true)) => keys.push(((**left).clone(), (**right).clone())),
                _ => return None,
            }
        }
        if keys.is_empty() {
            return None;
        }
        let inner = ast::Query::simple(ast::SetExpr::Select(Box::new(ast::Select {
            distinct: false,
            distinct_on: Vec::new(),
            projection: keys
                .iter()
                .map(|(_, i)| ast::SelectItem::Expr {
                    expr: i.clone(),
                    alias: None,
                })
                .collect(),
            from: s.from.clone(),
            where_clause: and_all(local),
            group_by: Vec::new(),
            having: None,
            window: Vec::new(),
        })));
        Some((keys, inner))
    }

    /// Joins `plan` (over `scope`) with a pulled-up sublink; `None` when
    /// the pieces do not bind as expected (the caller filters instead).
    pub(super) fn pullup_join(
        &mut self,
        plan: Plan,
        scope: &Scope,
        p: &PullUp,
    ) -> Result<std::result::Result<Plan, Plan>> {
        // Outer keys over the FROM's rows; the inner query alone (with no
        // enclosing level, so a stray outer name fails).
        let mut outer_keys = Vec::new();
        for (o, _) in &p.keys {
            match self.bind_expr(o, scope, &mut Mode::NoAgg("WHERE")) {
                Ok(e) => outer_keys.push(e),
                Err(_) => return Ok(Err(plan)),
            }
        }
        let saved = std::mem::take(&mut self.outer);
        let inner = self.plan_subquery(&p.inner);
        self.outer = saved;
        let Ok(inner) = inner else {
            return Ok(Err(plan));
        };
        // Both sides of each key at the type `=` compares them as.
        let mut casts = Vec::new();
        let mut left_keys = Vec::new();
        for (k, o) in outer_keys.into_iter().enumerate() {
            let it = inner.fields[k].ty;
            let Some((lt, rt, _)) = types::resolve_binary(BinaryOp::Eq, &o.ty, &it) else {
                return Ok(Err(plan));
            };
            if lt != rt {
                return Ok(Err(plan));
            }
            left_keys.push(self.coerce(o, &lt, CastContext::Implicit, ast::Offset(0))?);
            casts.push(if it == rt {
                Expr::column(k, it)
            } else {
                Expr {
                    kind: ExprKind::Cast(Box::new(Expr::column(k, it)), CastContext::Implicit),
                    ty: rt,
                }
            });
        }
        let fields: Vec<Field> = casts
            .iter()
            .zip(&inner.fields)
            .map(|(e, f)| Field {
                name: f.name.clone(),
                ty: e.ty,
            })
            .collect();
        let inner = if casts.iter().all(|c| matches!(c.kind, ExprKind::Column(_))) {
            inner
        } else {
            super::project(
                inner,
                casts,
                fields.iter().map(|f| f.name.clone()).collect(),
            )
        };
        let right_keys: Vec<Expr> = fields
            .iter()
            .enumerate()
            .map(|(k, f)| Expr::column(k, f.ty))
            .collect();
        let (kind, right, rows, out_fields) = if p.anti {
            (
                JoinKind::Anti,
                inner,
                (plan.rows * 0.5).max(1.0),
                plan.fields.clone(),
            )
        } else {
            // EXISTS: an inner join with the distinct inner keys.
            let distinct = Plan {
                rows: (inner.rows / 2.0).max(1.0),
                fields: fields.clone(),
                node: Node::Aggregate {
                    input: Box::new(inner),
                    group: right_keys.clone(),
                    aggs: Vec::new(),
                },
            };
            let mut f = plan.fields.clone();
            f.extend(fields);
            (JoinKind::Inner, distinct, plan.rows.max(1.0), f)
        };
        Ok(Ok(Plan {
            rows,
            fields: out_fields,
            node: Node::HashJoin {
                left: Box::new(plan),
                right: Box::new(right),
                kind,
                left_keys,
                right_keys,
                residual: None,
                build_left: false,
            },
        }))
    }
}

impl Binder<'_> {
    /// `plan` joined with each pulled-up sublink (or, where one does not
    /// bind as a join, filtered by it as written).
    pub(super) fn apply_pullups(
        &mut self,
        mut plan: Plan,
        scope: &Scope,
        pullups: Vec<PullUp>,
    ) -> Result<Plan> {
        for p in pullups {
            plan = match self.pullup_join(plan, scope, &p)? {
                Ok(joined) => joined,
                Err(plan) => {
                    let c = self.bind_condition(
                        &p.conjunct,
                        scope,
                        &mut Mode::NoAgg("WHERE"),
                        "WHERE",
                    )?;
                    super::filter(plan, c)
                }
            };
        }
        Ok(plan)
    }
}

/// Whether `c` reads a column that is not the subquery's.
fn has_outer(c: &ast::Expr, side: &dyn Fn(&ast::Expr) -> Option<bool>) -> bool {
    let mut outer = false;
    walk(c, &mut |x| {
        if matches!(x.kind, ast::ExprKind::Column(_)) && side(x) == Some(false) {
            outer = true;
        }
    });
    outer
}
