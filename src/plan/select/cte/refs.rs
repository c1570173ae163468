//! How many FROM items name a CTE: with whether its plan calls a volatile
//! function, what decides whether its references share one run of its
//! query.
//!
//! The count is PostgreSQL's `cterefcount`: FROM items anywhere in the
//! query level that owns the WITH (its body, its sublinks, its other WITH
//! queries), by unqualified name. A nested WITH of the same name hides the
//! outer one inside its query, so references there are not counted.

use heapdb_grammar::ast;

use crate::plan::bind::walk;

/// FROM items of `q` (WITH queries, body, sublinks) that name `name`.
pub fn count(q: &ast::Query, name: &str) -> usize {
    let mut n = 0;
    for c in &q.with {
        n += nested(&c.query, name);
    }
    n += set_expr(&q.body, name);
    for e in q
        .order_by
        .iter()
        .map(|o| &o.expr)
        .chain(&q.limit)
        .chain(&q.offset)
    {
        n += expr(e, name);
    }
    n
}

fn nested(q: &ast::Query, name: &str) -> usize {
    if q.with.iter().any(|c| c.name == name) {
        return 0;
    }
    count(q, name)
}

fn set_expr(b: &ast::SetExpr, name: &str) -> usize {
    match b {
        ast::SetExpr::Select(s) => {
            let mut n = s.from.iter().map(|t| table_ref(t, name)).sum();
            for item in &s.projection {
                if let ast::SelectItem::Expr { expr: e, .. } = item {
                    n += expr(e, name);
                }
            }
            for e in s.where_clause.iter().chain(&s.group_by).chain(&s.having) {
                n += expr(e, name);
            }
            n
        }
        ast::SetExpr::Values(rows) => rows.iter().flatten().map(|e| expr(e, name)).sum(),
        ast::SetExpr::Nested(q) => nested(q, name),
        ast::SetExpr::SetOp { left, right, .. } => set_expr(left, name) + set_expr(right, name),
    }
}

fn table_ref(t: &ast::TableRef, name: &str) -> usize {
    match t {
        ast::TableRef::Table { name: n, .. } => usize::from(n.schema.is_none() && n.name == name),
        ast::TableRef::Subquery { query, .. } => nested(query, name),
        ast::TableRef::Join(j) => {
            let on = match &j.constraint {
                ast::JoinConstraint::On(e) => expr(e, name),
                _ => 0,
            };
            table_ref(&j.left, name) + table_ref(&j.right, name) + on
        }
        ast::TableRef::Function { call, .. } => call.args.iter().map(|e| expr(e, name)).sum(),
    }
}

fn expr(e: &ast::Expr, name: &str) -> usize {
    let mut n = 0;
    walk(e, &mut |x| match &x.kind {
        ast::ExprKind::Exists(q)
        | ast::ExprKind::Subquery(q)
        | ast::ExprKind::InSubquery { query: q, .. }
        | ast::ExprKind::Quantified { query: q, .. } => n += nested(q, name),
        _ => {}
    });
    n
}
