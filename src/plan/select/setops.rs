//! Set operations and VALUES: UNION / INTERSECT / EXCEPT [ALL] of query
//! bodies (their columns cast to the common types), and `VALUES` lists.
//! A UNION removes duplicates by hashing, or by sorting (`Unique` over a
//! `Sort`) when `enable_hashagg` is off, as PostgreSQL.

use heapdb_grammar::ast;

use super::super::bind::{at, leftmost, Binder, Mode};
use super::super::scope::Scope;
use super::super::{Field, Node, Plan};
use super::*;
use crate::err;
use crate::error::Result;
use crate::nodes::expr::Expr;
use crate::types::cast::CastContext;
use crate::types::DataType;

impl Binder<'_> {
    pub(super) fn plan_set_expr(&mut self, body: &ast::SetExpr) -> Result<Plan> {
        match body {
            ast::SetExpr::Select(s) => self.plan_select(s, &[], None),
            ast::SetExpr::Nested(q) => self.plan_query(q),
            ast::SetExpr::Values(rows) => self.plan_values(rows, None, &[]),
            ast::SetExpr::SetOp {
                op,
                all,
                left,
                right,
            } => {
                let (lbar, rbar) = cte::set_op_barriers(*op, *all);
                self.keep_unknown = true;
                let l = self.behind_barrier(lbar, |b| b.plan_set_expr(left))?;
                self.keep_unknown = true;
                let r = self.behind_barrier(rbar, |b| b.plan_set_expr(right))?;
                self.keep_unknown = false;
                let name = match op {
                    ast::SetOperator::Union => "UNION",
                    ast::SetOperator::Intersect => "INTERSECT",
                    ast::SetOperator::Except => "EXCEPT",
                };
                if l.fields.len() != r.fields.len() {
                    return Err(err!(
                        SyntaxError,
                        "each {name} query must have the same number of columns"
                    ));
                }
                let mut types = Vec::new();
                let (loffs, roffs) = (output_offsets(left), output_offsets(right));
                let off_of =
                    |offs: &[ast::Offset], i: usize| offs.get(i).copied().unwrap_or(ast::Offset(0));
                for (i, (a, b)) in l.fields.iter().zip(&r.fields).enumerate() {
                    types.push(self.unify(
                        name,
                        &[(a.ty, off_of(&loffs, i)), (b.ty, off_of(&roffs, i))],
                    )?);
                }
                let l = self.cast_outputs_at(l, &types, &loffs)?;
                let r = self.cast_outputs_at(r, &types, &roffs)?;
                let fields = l.fields.clone();
                let rows = l.rows + r.rows;
                Ok(match op {
                    ast::SetOperator::Union => {
                        let append = Plan {
                            rows,
                            fields: fields.clone(),
                            node: Node::Append { inputs: vec![l, r] },
                        };
                        if *all {
                            append
                        } else if !self.ctx.settings().enable_hashagg {
                            // PostgreSQL's sorted UNION: Unique over a Sort
                            // of every column.
                            let width = fields.len();
                            let keys = distinct::sorted_distinct_keys(Vec::new(), width);
                            distinct::sort_unique(append, keys, (0..width).collect())
                        } else {
                            Plan {
                                rows,
                                fields,
                                node: Node::Distinct {
                                    input: Box::new(append),
                                },
                            }
                        }
                    }
                    _ => Plan {
                        rows: l.rows,
                        fields,
                        node: Node::SetOp {
                            left: Box::new(l),
                            right: Box::new(r),
                            intersect: *op == ast::SetOperator::Intersect,
                            all: *all,
                        },
                    },
                })
            }
        }
    }

    /// Casts a plan's output columns to `types` (set operations).
    pub fn cast_outputs(&mut self, plan: Plan, types: &[DataType]) -> Result<Plan> {
        self.cast_outputs_in(plan, types, CastContext::Implicit)
    }

    /// [`cast_outputs`](Self::cast_outputs), reporting a failed cast at the
    /// column's select-list item (`offsets`, when known).
    fn cast_outputs_at(
        &mut self,
        plan: Plan,
        types: &[DataType],
        offsets: &[ast::Offset],
    ) -> Result<Plan> {
        if plan.fields.iter().zip(types).all(|(f, t)| f.ty == *t) {
            return Ok(plan);
        }
        let names: Vec<String> = plan.fields.iter().map(|f| f.name.clone()).collect();
        let mut exprs = Vec::with_capacity(types.len());
        for (i, (f, t)) in plan.fields.iter().zip(types).enumerate() {
            let e = self.coerce(
                Expr::column(i, f.ty),
                t,
                CastContext::Implicit,
                ast::Offset(0),
            );
            exprs.push(match (e, offsets.get(i)) {
                (Err(e), Some(off)) => return Err(at(e, *off)),
                (e, _) => e?,
            });
        }
        Ok(project(plan, exprs, names))
    }

    /// Casts a plan's output columns to `types` in context `ctx`.
    pub fn cast_outputs_in(
        &mut self,
        plan: Plan,
        types: &[DataType],
        ctx: CastContext,
    ) -> Result<Plan> {
        if plan.fields.iter().zip(types).all(|(f, t)| f.ty == *t) {
            return Ok(plan);
        }
        let names: Vec<String> = plan.fields.iter().map(|f| f.name.clone()).collect();
        let exprs = plan
            .fields
            .iter()
            .enumerate()
            .zip(types)
            .map(|((i, f), t)| self.coerce(Expr::column(i, f.ty), t, ctx, ast::Offset(0)))
            .collect::<Result<Vec<_>>>()?;
        Ok(project(plan, exprs, names))
    }

    /// Plans `VALUES (...), (...)`; with `target_types`, each column is
    /// coerced to that type in assignment context (INSERT), else to the
    /// rows' common type.
    pub fn plan_values(
        &mut self,
        rows: &[Vec<ast::Expr>],
        target_types: Option<&[DataType]>,
        target_names: &[String],
    ) -> Result<Plan> {
        let width = rows.first().map_or(0, Vec::len);
        let mut bound: Vec<Vec<(Expr, ast::Offset)>> = Vec::with_capacity(rows.len());
        for row in rows {
            if row.len() != width {
                return Err(at(
                    err!(SyntaxError, "VALUES lists must all be the same length"),
                    row.first().map_or(ast::Offset(0), |e| e.offset),
                ));
            }
            let mut out = Vec::with_capacity(width);
            for e in row {
                let b = self.bind_expr(e, &Scope::default(), &mut Mode::NoAgg("VALUES"))?;
                out.push((b, leftmost(e)));
            }
            bound.push(out);
        }
        let mut types = Vec::with_capacity(width);
        for c in 0..width {
            let t = match target_types {
                Some(t) => {
                    for row in &bound {
                        let from = row[c].0.ty;
                        if from != DataType::Unknown
                            && crate::types::cast::cast_kind(&from, &t[c])
                                .map_or(true, |k| k > CastContext::Assignment)
                        {
                            return Err(at(
                                err!(
                                    DatatypeMismatch,
                                    "column \"{}\" is of type {} but expression is of type {from}",
                                    target_names.get(c).map_or("?", |n| n.as_str()),
                                    t[c]
                                )
                                .with_hint("You will need to rewrite or cast the expression."),
                                row[c].1,
                            ));
                        }
                    }
                    t[c]
                }
                None => {
                    let all: Vec<(DataType, ast::Offset)> =
                        bound.iter().map(|row| (row[c].0.ty, row[c].1)).collect();
                    self.unify("VALUES", &all)?
                }
            };
            types.push(t);
        }
        let ctx = if target_types.is_some() {
            CastContext::Assignment
        } else {
            CastContext::Implicit
        };
        let mut out_rows = Vec::with_capacity(bound.len());
        for row in bound {
            let mut out = Vec::with_capacity(width);
            for (c, (e, off)) in row.into_iter().enumerate() {
                out.push(self.coerce(e, &types[c], ctx, off)?);
            }
            out_rows.push(out);
        }
        let fields = types
            .iter()
            .enumerate()
            .map(|(i, t)| Field {
                name: format!("column{}", i + 1),
                ty: *t,
            })
            .collect();
        Ok(Plan {
            rows: out_rows.len() as f64,
            fields,
            node: Node::Values { rows: out_rows },
        })
    }
}

/// The leftmost token of each output column's expression in a set
/// operation's branch (its first SELECT's list, or VALUES' first row), for
/// error positions; empty when a `*` makes them unknown.
pub(super) fn output_offsets(body: &ast::SetExpr) -> Vec<ast::Offset> {
    match body {
        ast::SetExpr::Select(s) => {
            let mut out = Vec::with_capacity(s.projection.len());
            for item in &s.projection {
                match item {
                    ast::SelectItem::Expr { expr, .. } => out.push(leftmost(expr)),
                    _ => return Vec::new(),
                }
            }
            out
        }
        ast::SetExpr::Nested(q) => output_offsets(&q.body),
        ast::SetExpr::Values(rows) => rows
            .first()
            .map_or_else(Vec::new, |r| r.iter().map(leftmost).collect()),
        ast::SetExpr::SetOp { left, .. } => output_offsets(left),
    }
}
