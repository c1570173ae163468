//! A set-returning function in the select list of a sorted query runs after
//! the sort, as PostgreSQL's ProjectSet above its Sort: `select a,
//! generate_series(1, 3) from t order by b limit 7` sorts `t`'s rows by `b`,
//! then expands each row's series in order, and the LIMIT counts the
//! expanded rows. Sorting the expanded rows instead would place the
//! members of one series, which tie on `b`, in any order.
//!
//! The query is rewritten: its rows, with the function's arguments as
//! extra columns, are a sorted subquery, and the function is a FROM item
//! over that subquery's columns ([`super::functions::srf_to_from`]), which
//! the planner runs as a lateral join keeping the subquery's order.
//! PostgreSQL sorts after the ProjectSet when a sort key is the function's
//! own output, and with DISTINCT (which comes first); those queries are
//! left as they are.

use heapdb_grammar::ast;

use crate::err;
use crate::error::Result;

use super::functions::{is_select_srf, UserSrfs};
use super::output_name;

/// The subquery's alias; no user name starts with `\u{1}`.
const INNER: &str = "\u{1}sorted";

/// `s` with ORDER BY `order_by` rewritten so its one select-list
/// set-returning function runs after the sort; `None` when that is not
/// PostgreSQL's order (see the module's documentation) or `s` has no
/// such function.
pub(super) fn srf_after_sort(
    s: &ast::Select,
    order_by: &[ast::OrderBy],
    user: &UserSrfs,
) -> Option<ast::Select> {
    if order_by.is_empty() || s.distinct || !s.distinct_on.is_empty() {
        return None;
    }
    let mut found = None;
    for (k, item) in s.projection.iter().enumerate() {
        match item {
            ast::SelectItem::Expr { expr, .. } if is_select_srf(expr, user) => {
                if found.replace(k).is_some() {
                    return None;
                }
            }
            ast::SelectItem::Expr { .. } => {}
            _ => return None,
        }
    }
    let k = found?;
    let ast::SelectItem::Expr { expr, alias } = &s.projection[k] else {
        return None;
    };
    let ast::ExprKind::Function(call) = &expr.kind else {
        return None;
    };
    let srf_name = alias.clone().unwrap_or_else(|| output_name(expr));
    if order_by
        .iter()
        .any(|o| sorts_by_srf(&o.expr, k, &srf_name, user))
    {
        return None;
    }
    // The inner select: every item where it was (ORDER BY's ordinals and
    // aliases still name them), the function replaced by NULL, and its
    // arguments after the items.
    let mut inner = s.clone();
    inner.projection[k] = ast::SelectItem::Expr {
        expr: ast::Expr {
            kind: ast::ExprKind::Literal(ast::Literal::Null),
            offset: expr.offset,
        },
        alias: Some(srf_name.clone()),
    };
    let n = s.projection.len();
    for a in &call.args {
        inner.projection.push(ast::SelectItem::Expr {
            expr: a.clone(),
            alias: None,
        });
    }
    let column = |c: usize| ast::Expr {
        kind: ast::ExprKind::Column(ast::ColumnRef {
            schema: None,
            table: Some(INNER.into()),
            column: format!("c{c}"),
        }),
        offset: expr.offset,
    };
    let mut outer_call = (**call).clone();
    outer_call.args = (0..call.args.len()).map(|a| column(n + a)).collect();
    let projection = s
        .projection
        .iter()
        .enumerate()
        .map(|(c, item)| {
            let ast::SelectItem::Expr { expr: e, alias } = item else {
                unreachable!("wildcards were ruled out")
            };
            if c == k {
                return ast::SelectItem::Expr {
                    expr: ast::Expr {
                        kind: ast::ExprKind::Function(Box::new(outer_call.clone())),
                        offset: e.offset,
                    },
                    alias: alias.clone(),
                };
            }
            ast::SelectItem::Expr {
                expr: column(c),
                alias: Some(alias.clone().unwrap_or_else(|| output_name(e))),
            }
        })
        .collect();
    let mut query = ast::Query::simple(ast::SetExpr::Select(Box::new(inner)));
    query.order_by = order_by.to_vec();
    Some(ast::Select {
        distinct: false,
        distinct_on: Vec::new(),
        projection,
        from: vec![ast::TableRef::Subquery {
            query: Box::new(query),
            alias: Some(ast::TableAlias {
                name: INNER.into(),
                columns: (0..n + call.args.len()).map(|c| format!("c{c}")).collect(),
            }),
            lateral: false,
        }],
        where_clause: None,
        group_by: Vec::new(),
        having: None,
        window: Vec::new(),
    })
}

/// Whether ORDER BY key `e` is the set-returning function's output: its
/// ordinal (item `k`), its output name, or an expression calling a
/// set-returning function.
fn sorts_by_srf(e: &ast::Expr, k: usize, name: &str, user: &UserSrfs) -> bool {
    match &e.kind {
        ast::ExprKind::Literal(ast::Literal::Number(text)) => text.parse::<usize>() == Ok(k + 1),
        ast::ExprKind::Column(c) if c.table.is_none() && c.column == name => true,
        _ => {
            let mut srf = false;
            crate::plan::bind::walk(e, &mut |x| srf |= is_select_srf(x, user));
            srf
        }
    }
}

/// PostgreSQL 15's errors (0A000, at the function) for a set-returning
/// function in the select list where it cannot run once per row of a
/// set: inside CASE or COALESCE, an aggregate's or a window function's
/// arguments, or an aggregate's FILTER.
pub(super) fn reject_misplaced_srfs(s: &ast::Select, user: &UserSrfs) -> Result<()> {
    let mut found: Option<(String, bool, ast::Offset)> = None;
    let first_srf = |parts: &mut dyn Iterator<Item = &ast::Expr>| {
        let mut at = None;
        for p in parts {
            crate::plan::bind::walk(p, &mut |x| {
                if at.is_none() && is_select_srf(x, user) {
                    at = Some(x.offset);
                }
            });
        }
        at
    };
    for item in &s.projection {
        let ast::SelectItem::Expr { expr, .. } = item else {
            continue;
        };
        crate::plan::bind::walk(expr, &mut |e| {
            if found.is_some() {
                return;
            }
            let in_construct = |c: &str| format!("set-returning functions are not allowed in {c}");
            found = match &e.kind {
                ast::ExprKind::Case { .. } => {
                    first_srf(&mut std::iter::once(e)).map(|o| (in_construct("CASE"), true, o))
                }
                ast::ExprKind::Function(f)
                    if f.name.schema.is_none() && f.name.name == "coalesce" =>
                {
                    first_srf(&mut f.args.iter()).map(|o| (in_construct("COALESCE"), true, o))
                }
                ast::ExprKind::Function(f) if f.over.is_some() => first_srf(&mut f.args.iter())
                    .map(|o| {
                        let m = "window function calls cannot contain set-returning function calls";
                        (m.to_string(), true, o)
                    }),
                ast::ExprKind::Function(f) if crate::plan::bind::is_aggregate(&f.name) => {
                    let mut args = f.args.iter().chain(f.order_by.iter().map(|o| &o.expr));
                    match first_srf(&mut args) {
                        Some(o) => {
                            let m = "aggregate function calls cannot contain set-returning function calls";
                            Some((m.to_string(), true, o))
                        }
                        None => first_srf(&mut f.filter.iter().map(|x| &**x))
                            .map(|o| (in_construct("FILTER"), false, o)),
                    }
                }
                _ => None,
            };
        });
        if found.is_some() {
            break;
        }
    }
    match found {
        Some((message, hint, offset)) => {
            let mut e = err!(FeatureNotSupported, "{message}");
            if hint {
                e = e.with_hint(
                    "You might be able to move the set-returning function into a LATERAL FROM item.",
                );
            }
            Err(crate::plan::bind::at(e, offset))
        }
        None => Ok(()),
    }
}
