//! Whether PostgreSQL would make a correlated `[NOT] EXISTS` of an
//! UPDATE's or DELETE's WHERE a semi- (anti-) join, which decides what
//! READ COMMITTED's re-check of a changed row does with it
//! (`modify::recheck`): a semi-join holds the rows the match joined, a
//! SubPlan is evaluated again.
//!
//! PostgreSQL 15's `convert_EXISTS_sublink_to_join` pulls the sublink up
//! when `simplify_EXISTS_query` accepts the subquery (a plain SELECT with
//! no aggregates, HAVING, window functions or OFFSET; a constant LIMIT
//! other than 0 is dropped, as are DISTINCT, GROUP BY and ORDER BY), it
//! has no WITH and a non-empty FROM, its FROM reads no column of the
//! query around it and its WHERE does, with no volatile function. The
//! checks on FROM and WHERE plan them alone with the same enclosing level,
//! so an outer reference is found as the subquery's planning finds it.
//!
//! Invariant: only a binder planning an UPDATE's or DELETE's own WHERE
//! asks ([`Binder::mark_semi_joins`]); nothing here changes the plan.

use heapdb_grammar::ast;

use super::bind::{contains_aggregate, Binder, Mode};
use super::scope::Scope;

/// Whether `q`'s LIMIT is absent, NULL, ALL or a positive constant.
fn limit_droppable(q: &ast::Query) -> bool {
    match q.limit.as_ref().map(|l| &l.kind) {
        None | Some(ast::ExprKind::Literal(ast::Literal::Null)) => true,
        Some(ast::ExprKind::Literal(ast::Literal::Number(n))) => {
            n.parse::<i64>().is_ok_and(|n| n > 0)
        }
        Some(_) => false,
    }
}

/// `SELECT 1 FROM from [WHERE w]`.
fn select_one(from: &[ast::TableRef], w: Option<&ast::Expr>) -> ast::Query {
    ast::Query::simple(ast::SetExpr::Select(Box::new(ast::Select {
        distinct: false,
        distinct_on: Vec::new(),
        projection: vec![ast::SelectItem::Expr {
            expr: ast::Expr::new(ast::ExprKind::Literal(ast::Literal::Number("1".into()))),
            alias: None,
        }],
        from: from.to_vec(),
        where_clause: w.cloned(),
        group_by: Vec::new(),
        having: None,
        window: Vec::new(),
    })))
}

impl Binder<'_> {
    /// Whether PostgreSQL makes `EXISTS (q)`, planned in `scope` and
    /// `mode`, a semi-join (see the module doc).
    pub(super) fn exists_is_semi_join(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
        mode: &Mode,
    ) -> bool {
        if !q.with.is_empty() || q.offset.is_some() || q.with_ties || !limit_droppable(q) {
            return false;
        }
        let ast::SetExpr::Select(s) = &q.body else {
            return false;
        };
        if s.having.is_some() || s.from.is_empty() || super::window::has_windows(s, &q.order_by) {
            return false;
        }
        let aggregates = s.projection.iter().any(|i| match i {
            ast::SelectItem::Expr { expr, .. } => contains_aggregate(expr),
            _ => false,
        }) || q.order_by.iter().any(|o| contains_aggregate(&o.expr));
        if aggregates {
            return false;
        }
        let Some(w) = &s.where_clause else {
            return false;
        };
        match self.plan_sublink(&select_one(&s.from, None), scope, mode) {
            Ok((_, args)) if args.is_empty() => {}
            _ => return false,
        }
        match self.plan_sublink(&select_one(&s.from, Some(w)), scope, mode) {
            Ok((plan, args)) => !args.is_empty() && !super::cost::plan_volatile(&plan),
            Err(_) => false,
        }
    }
}
