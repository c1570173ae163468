//! FROM items and joins: tables, subqueries and CTEs. A FROM list of two
//! or more items is joined in a searched order ([`super::reorder`]); one
//! item, or more than a search takes, in FROM order.
//! WHERE conjuncts that mention one item are pushed into its scan
//! ([`push_filter`]; for an explicit `JOIN ... ON` item, into the scan of
//! the side they read, [`push_into_join`]), equalities between the joined items become hash-join
//! keys, the rest filter the join.

use heapdb_grammar::ast;

use super::super::bind::{at, contains_aggregate, Binder, Mode};
use super::super::scope::{Scope, ScopeColumn};
use super::super::{Field, JoinKind, Node, Plan};
use super::reorder::inner_join_leaves;
use super::*;
use crate::err;
use crate::error::Result;
use crate::nodes::expr::{Expr, ExprKind};
use crate::plan::joinorder::MAX_ITEMS;
use crate::types::cast::CastContext;
use crate::types::{BinaryOp, DataType};

impl Binder<'_> {
    /// Plans the FROM list joined left to right, with WHERE's conjuncts
    /// pushed down as far as they go. Returns the plan and its scope.
    pub(super) fn plan_from(
        &mut self,
        from: &[ast::TableRef],
        where_clause: Option<&ast::Expr>,
        needed: &mut Needed,
    ) -> Result<(Plan, Scope)> {
        for t in from {
            collect_join_conditions(t, needed);
        }
        let mut items = Vec::with_capacity(from.len());
        let mut on: Vec<Expr> = Vec::new();
        let settings = self.ctx.settings();
        let (join_limit, from_limit) = (settings.join_collapse_limit, settings.from_collapse_limit);
        for (n, t) in from.iter().enumerate() {
            // An explicit inner join joins in a searched order with the
            // rest of the list while the list stays within the limits.
            let leaves = inner_join_leaves(t);
            let merged = (items.len() + leaves + from.len() - n - 1) as i64;
            let flatten = leaves > 1
                && leaves as i64 <= join_limit
                && (from.len() == 1 || merged <= from_limit);
            if flatten {
                let start: usize = items.iter().map(|it: &Item| it.scope.len()).sum();
                self.flatten_inner_join(t, needed, &mut items, &mut on, start)?;
            } else if !items.is_empty()
                && (super::lateral::may_be_lateral(t)
                    || matches!(t, ast::TableRef::Subquery { .. }))
            {
                self.plan_lateral_item(t, needed, where_clause, &mut items, &mut on)?;
            } else {
                items.push(self.plan_table_ref(t, needed)?);
            }
        }
        if items.is_empty() {
            items.push(Item {
                plan: Plan {
                    rows: 1.0,
                    fields: vec![],
                    node: Node::Values { rows: vec![vec![]] },
                },
                scope: Scope::default(),
            });
        }
        self.join_items(items, where_clause, on)
    }

    /// The rows UPDATE and DELETE change: the target table (every column,
    /// then its tuple id as a hidden `ctid` column), joined with the FROM /
    /// USING items and filtered by WHERE. Also returns WHERE's conjuncts
    /// bound over the whole scope (the target's columns, its `ctid`, then
    /// the FROM items' columns), for READ COMMITTED's re-check of a row's
    /// newest version.
    pub fn plan_modify_source(
        &mut self,
        table: std::sync::Arc<crate::catalog::TableDef>,
        alias: &str,
        from: &[ast::TableRef],
        where_clause: Option<&ast::Expr>,
    ) -> Result<(Plan, Scope, Vec<Expr>)> {
        let all: Vec<usize> = (0..table.columns.len()).collect();
        let mut scope = Scope::of(alias, table.columns.iter().map(|c| (c.name.clone(), c.ty)));
        scope.columns.push(ScopeColumn {
            qualifier: Some(alias.to_string()),
            name: "ctid".into(),
            ty: DataType::Int8,
            hidden: true,
            merged: false,
        });
        let plan = self.scan_plan(table, alias, all, true);
        let mut items = vec![Item { plan, scope }];
        let mut needed = Needed {
            star: true,
            ..Needed::default()
        };
        for t in from {
            collect_join_conditions(t, &mut needed);
            items.push(self.plan_table_ref(t, &needed)?);
        }
        let mut quals = Vec::new();
        self.mark_semi_joins = true;
        let joined = self.join_items_keeping(items, where_clause, Vec::new(), Some(&mut quals));
        self.mark_semi_joins = false;
        let (mut plan, scope) = joined?;
        super::super::quals::order_quals(&mut plan);
        super::super::indexpath::use_indexes(&mut plan, &*self.ctx);
        Ok((plan, scope, quals))
    }

    /// Joins `items` with WHERE's conjuncts and `on`, the conditions of
    /// flattened explicit joins (bound over the items' whole scope).
    pub(super) fn join_items(
        &mut self,
        items: Vec<Item>,
        where_clause: Option<&ast::Expr>,
        on: Vec<Expr>,
    ) -> Result<(Plan, Scope)> {
        self.join_items_keeping(items, where_clause, on, None)
    }

    /// [`Self::join_items`], copying the bound conjuncts into `keep`.
    fn join_items_keeping(
        &mut self,
        mut items: Vec<Item>,
        where_clause: Option<&ast::Expr>,
        on: Vec<Expr>,
        keep: Option<&mut Vec<Expr>>,
    ) -> Result<(Plan, Scope)> {
        let mut conds = Vec::new();
        if let Some(w) = where_clause {
            if contains_aggregate(w) {
                return Err(at(
                    err!(
                        GroupingError,
                        "aggregate functions are not allowed in WHERE"
                    ),
                    w.offset,
                ));
            }
            conjuncts(w, &mut conds);
        }
        // The whole scope, to resolve each conjunct's items (and report
        // unknown columns as PostgreSQL does, before anything runs).
        let full = items
            .iter()
            .try_fold(Scope::default(), |acc, it| acc.join(&it.scope))?;
        let bounds: Vec<usize> = items
            .iter()
            .scan(0, |acc, it| {
                *acc += it.scope.len();
                Some(*acc)
            })
            .collect();
        let item_of = |col: usize| {
            bounds
                .iter()
                .position(|&b| col < b)
                .expect("column in scope")
        };
        let mut pending: Vec<(Expr, Vec<usize>)> = Vec::new();
        let mut bound = on;
        for c in &conds {
            bound.push(self.bind_condition(c, &full, &mut Mode::NoAgg("WHERE"), "WHERE")?);
        }
        let folded = crate::plan::fold::fold_conjuncts(bound)?;
        if let Some(keep) = keep {
            keep.extend(folded.iter().cloned());
        }
        for b in folded {
            let mut cols = Vec::new();
            columns_used(&b, &mut cols);
            let mut its: Vec<usize> = cols.iter().map(|&c| item_of(c)).collect();
            its.sort_unstable();
            its.dedup();
            pending.push((b, its));
        }
        if (2..=MAX_ITEMS).contains(&items.len()) {
            return self.join_searched(items, pending, full);
        }
        // One item, or more than a search takes: in FROM order.
        // Push single-item conditions into their item.
        let starts: Vec<usize> = std::iter::once(0).chain(bounds.iter().copied()).collect();
        let mut rest = Vec::new();
        for (b, its) in pending {
            if its.len() == 1 {
                let k = its[0];
                let mut e = b;
                let start = starts[k];
                remap_columns(&mut e, &|c| c - start);
                let item = &mut items[k];
                item.plan = push_filter(std::mem::replace(&mut item.plan, dummy()), e);
            } else {
                rest.push((b, its));
            }
        }
        // Join left to right.
        let mut iter = items.into_iter().enumerate();
        let (_, first) = iter.next().expect("at least one item");
        let mut acc = first;
        let mut joined: Vec<usize> = vec![0];
        for (k, item) in iter {
            let left_len = acc.scope.len();
            let start_k = starts[k];
            // Conditions now applicable: every item they use is joined.
            let mut now = Vec::new();
            let mut later = Vec::new();
            for (b, its) in rest {
                if its.iter().all(|i| joined.contains(i) || *i == k) {
                    now.push(b);
                } else {
                    later.push((b, its));
                }
            }
            rest = later;
            // Map full-scope positions to acc ++ item positions.
            let map_full = |c: usize| -> usize {
                let it = item_of(c);
                if it == k {
                    left_len + (c - start_k)
                } else {
                    // Items joined so far are in FROM order, contiguous.
                    c
                }
            };
            let mut conds_now = Vec::new();
            for mut b in now {
                remap_columns(&mut b, &map_full);
                conds_now.push(b);
            }
            acc = self.join(acc, item, JoinKind::Inner, conds_now)?;
            joined.push(k);
        }
        // What is left reads no FROM item (`WHERE 1 = 1`): filter the result.
        for (b, _) in rest {
            acc.plan = filter(acc.plan, b);
        }
        Ok((acc.plan, acc.scope))
    }

    /// Joins two items on `conds` (over left ++ right columns): equalities
    /// between the sides become hash keys, the rest a residual condition.
    pub(super) fn join(
        &mut self,
        left: Item,
        right: Item,
        kind: JoinKind,
        conds: Vec<Expr>,
    ) -> Result<Item> {
        let left_len = left.scope.len();
        let mut lkeys = Vec::new();
        let mut rkeys = Vec::new();
        let mut residual: Vec<Expr> = Vec::new();
        for c in conds {
            if let ExprKind::Binary(BinaryOp::Eq, a, b) = &c.kind {
                let side = |e: &Expr| {
                    let mut cols = Vec::new();
                    columns_used(e, &mut cols);
                    if cols.is_empty() {
                        None
                    } else if cols.iter().all(|&c| c < left_len) {
                        Some(true)
                    } else if cols.iter().all(|&c| c >= left_len) {
                        Some(false)
                    } else {
                        None
                    }
                };
                let pair = match (side(a), side(b)) {
                    (Some(true), Some(false)) => Some(((**a).clone(), (**b).clone())),
                    (Some(false), Some(true)) => Some(((**b).clone(), (**a).clone())),
                    _ => None,
                };
                if let Some((l, mut r)) = pair {
                    remap_columns(&mut r, &|c| c - left_len);
                    lkeys.push(l);
                    rkeys.push(r);
                    continue;
                }
            }
            residual.push(c);
        }
        let residual = residual.into_iter().reduce(|a, b| Expr {
            kind: ExprKind::And(Box::new(a), Box::new(b)),
            ty: DataType::Bool,
        });
        let scope = left.scope.join(&right.scope)?;
        let mut fields = left.plan.fields.clone();
        fields.extend(right.plan.fields.iter().cloned());
        // enable_hashjoin = off makes a hash join a last resort, as
        // PostgreSQL's disable_cost does: a RIGHT or FULL join on equal
        // keys has no other method here, so it still hashes.
        let use_hash = !lkeys.is_empty()
            && (self.ctx.settings().enable_hashjoin
                || matches!(kind, JoinKind::Right | JoinKind::Full));
        let plan = if use_hash {
            let key_sel = estimate::join_selectivity(
                &lkeys,
                &rkeys,
                &estimate::column_origins(&left.plan),
                &estimate::column_origins(&right.plan),
            );
            let rows = match (kind, key_sel) {
                (JoinKind::Inner, Some(sel)) => (left.plan.rows * right.plan.rows * sel).max(1.0),
                (JoinKind::Inner, None) => (left.plan.rows * right.plan.rows * EQ_SEL)
                    .max(left.plan.rows.min(right.plan.rows)),
                _ => left.plan.rows.max(right.plan.rows),
            };
            // Build on the smaller input, unless the kind needs a side.
            let build_left = match kind {
                JoinKind::Inner => left.plan.rows < right.plan.rows,
                JoinKind::Left | JoinKind::Anti => false,
                JoinKind::Right => true,
                JoinKind::Full => false,
            };
            Plan {
                rows,
                fields,
                node: Node::HashJoin {
                    left: Box::new(left.plan),
                    right: Box::new(right.plan),
                    kind,
                    left_keys: lkeys,
                    right_keys: rkeys,
                    residual,
                    build_left,
                },
            }
        } else {
            if matches!(kind, JoinKind::Right | JoinKind::Full) {
                return Err(err!(
                    FeatureNotSupported,
                    "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions"
                ));
            }
            let mut cond = residual;
            for (l, mut r) in lkeys.into_iter().zip(rkeys) {
                remap_columns(&mut r, &|c| c + left_len);
                let eq = Expr {
                    kind: ExprKind::Binary(BinaryOp::Eq, Box::new(l), Box::new(r)),
                    ty: DataType::Bool,
                };
                cond = Some(match cond {
                    Some(c) => Expr {
                        kind: ExprKind::And(Box::new(c), Box::new(eq)),
                        ty: DataType::Bool,
                    },
                    None => eq,
                });
            }
            let mut origins = estimate::column_origins(&left.plan);
            origins.extend(estimate::column_origins(&right.plan));
            let rows = left.plan.rows
                * right.plan.rows
                * cond
                    .as_ref()
                    .map_or(1.0, |c| estimate::selectivity(c, &origins));
            Plan {
                rows: rows.max(1.0),
                fields,
                node: Node::NestedLoop {
                    left: Box::new(left.plan),
                    right: Box::new(right.plan),
                    kind,
                    condition: cond,
                },
            }
        };
        Ok(Item { plan, scope })
    }

    pub(super) fn plan_table_ref(&mut self, t: &ast::TableRef, needed: &Needed) -> Result<Item> {
        match t {
            ast::TableRef::Table { name, alias, only } => {
                if name.schema.is_none() {
                    if let Some(pos) = self.ctes.iter().rposition(|c| c.name == name.name) {
                        return self.plan_cte_ref(pos, name, alias.as_ref());
                    }
                }
                let qualified = crate::catalog::qualified_name(name.schema.as_deref(), &name.name);
                let table = match self.ctx.table(&qualified) {
                    Ok(t) => t,
                    // Not a table: a view (the rewriter's expansion), or
                    // the table's error.
                    Err(e) => match self.ctx.view(&name.name) {
                        Some(v) => return self.plan_view(&v, name, alias.as_ref()),
                        None => match self.ctx.sequence_rows(&name.name) {
                            Some(rows) => return self.sequence_item(rows?, name, alias.as_ref()),
                            None => return Err(at(e, name.offset)),
                        },
                    },
                };
                let qualifier = alias
                    .as_ref()
                    .map_or_else(|| name.name.clone(), |a| a.name.clone());
                let mut names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
                if let Some(a) = alias {
                    if a.columns.len() > names.len() {
                        return Err(err!(
                            InvalidColumnReference,
                            "table \"{}\" has {} columns available but {} columns specified",
                            qualifier,
                            names.len(),
                            a.columns.len()
                        ));
                    }
                    for (n, c) in names.iter_mut().zip(&a.columns) {
                        *n = c.clone();
                    }
                }
                let columns: Vec<usize> = (0..names.len())
                    .filter(|&i| needed.wants(&qualifier, &names[i]))
                    .collect();
                let plan = if *only || !table.has_subclass {
                    self.scan_plan(table.clone(), &qualifier, columns.clone(), false)
                } else {
                    self.inherited_scan(&table, &qualifier, &columns)?
                };
                let mut scope = Scope::of(
                    &qualifier,
                    columns
                        .iter()
                        .map(|&i| (names[i].clone(), table.columns[i].ty)),
                );
                if alias.is_some() {
                    scope.items[0].hidden_table = Some(name.name.clone());
                }
                Ok(Item { plan, scope })
            }
            ast::TableRef::Subquery { query, alias, .. } => {
                let plan = self.plan_query(query)?;
                let alias = alias.clone().ok_or_else(|| {
                    err!(SyntaxError, "subquery in FROM must have an alias")
                        .with_hint("For example, FROM (SELECT ...) [AS] foo.")
                })?;
                derived(plan, &alias)
            }
            ast::TableRef::Function {
                call,
                alias,
                offset,
            } => self.plan_function(call, alias.as_ref(), *offset),
            ast::TableRef::Join(j)
                if super::lateral::may_be_lateral(&j.right)
                    && matches!(
                        j.kind,
                        ast::JoinKind::Inner | ast::JoinKind::Cross | ast::JoinKind::Left
                    )
                    && matches!(
                        j.constraint,
                        ast::JoinConstraint::On(_) | ast::JoinConstraint::None
                    ) =>
            {
                self.plan_lateral_join(j, needed)
            }
            ast::TableRef::Join(j) => {
                let (lnull, rnull) = cte::nullable_sides(j.kind);
                let left = self.plan_join_side(&j.left, needed, lnull)?;
                let right = self.plan_join_right(&left.scope, &j.right, needed, rnull)?;
                let kind = match j.kind {
                    ast::JoinKind::Inner | ast::JoinKind::Cross => JoinKind::Inner,
                    ast::JoinKind::Left => JoinKind::Left,
                    ast::JoinKind::Right => JoinKind::Right,
                    ast::JoinKind::Full => JoinKind::Full,
                };
                let scope = left.scope.join(&right.scope)?;
                let mut conds = Vec::new();
                match &j.constraint {
                    ast::JoinConstraint::On(e) => {
                        if contains_aggregate(e) {
                            return Err(at(
                                err!(
                                    GroupingError,
                                    "aggregate functions are not allowed in JOIN conditions"
                                ),
                                e.offset,
                            ));
                        }
                        let mut cs = Vec::new();
                        conjuncts(e, &mut cs);
                        for c in cs {
                            conds.push(self.bind_condition(
                                &c,
                                &scope,
                                &mut Mode::NoAgg("JOIN conditions"),
                                "JOIN/ON",
                            )?);
                        }
                    }
                    ast::JoinConstraint::Using(cols) => {
                        return self.join_using(left, right, kind, cols);
                    }
                    ast::JoinConstraint::Natural => {
                        let names: Vec<String> = left
                            .scope
                            .columns
                            .iter()
                            .filter(|c| !c.hidden && !c.merged)
                            .map(|c| c.name.clone())
                            .filter(|n| {
                                right
                                    .scope
                                    .columns
                                    .iter()
                                    .any(|c| !c.hidden && !c.merged && c.name == *n)
                            })
                            .fold(Vec::new(), |mut acc, n| {
                                if !acc.contains(&n) {
                                    acc.push(n);
                                }
                                acc
                            });
                        return self.join_using(left, right, kind, &names);
                    }
                    ast::JoinConstraint::None => {}
                }
                let item = self.join(left, right, kind, conds)?;
                Ok(item)
            }
        }
    }

    /// `left JOIN right USING (cols)` (and NATURAL, with the common column
    /// names): each pair joins on `=`, and becomes one merged output column
    /// as PostgreSQL's `buildMergedJoinVar` builds it — the left's value for
    /// inner and left joins, the right's for right joins,
    /// `COALESCE(left, right)` for full joins, cast to the pair's common
    /// type. The merged columns come first, then the left's others, then the
    /// right's; the originals stay reachable qualified (`l.k`, `l.*`).
    fn join_using(
        &mut self,
        left: Item,
        mut right: Item,
        kind: JoinKind,
        cols: &[String],
    ) -> Result<Item> {
        let left_len = left.scope.len();
        let mut conds = Vec::with_capacity(cols.len());
        let mut merged = Vec::with_capacity(cols.len());
        let mut left = left;
        for (n, c) in cols.iter().enumerate() {
            if cols[..n].contains(c) {
                return Err(err!(
                    DuplicateColumn,
                    "column name \"{c}\" appears more than once in USING clause"
                ));
            }
            let (li, lt) = using_side(&left.scope, c, "left")?;
            let (ri, rt) = using_side(&right.scope, c, "right")?;
            let (a, b, _) = crate::types::resolve_binary(BinaryOp::Eq, &lt, &rt)
                .ok_or_else(|| crate::types::ops::operator_error(BinaryOp::Eq, &lt, &rt))?;
            let l = self.coerce(
                Expr::column(li, lt),
                &a,
                CastContext::Implicit,
                ast::Offset(0),
            )?;
            let r = self.coerce(
                Expr::column(left_len + ri, rt),
                &b,
                CastContext::Implicit,
                ast::Offset(0),
            )?;
            conds.push(Expr {
                kind: ExprKind::Binary(BinaryOp::Eq, Box::new(l), Box::new(r)),
                ty: DataType::Bool,
            });
            let ty = self.unify("JOIN/USING", &[(lt, ast::Offset(0)), (rt, ast::Offset(0))])?;
            let lv = self.coerce(
                Expr::column(li, lt),
                &ty,
                CastContext::Implicit,
                ast::Offset(0),
            )?;
            let rv = self.coerce(
                Expr::column(left_len + ri, rt),
                &ty,
                CastContext::Implicit,
                ast::Offset(0),
            )?;
            let value = match kind {
                JoinKind::Inner | JoinKind::Left | JoinKind::Anti => lv,
                JoinKind::Right => rv,
                JoinKind::Full => Expr {
                    kind: ExprKind::Coalesce(vec![lv, rv]),
                    ty,
                },
            };
            merged.push((c.clone(), value, li));
            left.scope.columns[li].merged = true;
            right.scope.columns[ri].merged = true;
        }
        let mut item = self.join(left, right, kind, conds)?;
        // Already in shape (the USING columns lead the left input, in
        // order, and the merged values are the left's own): no projection.
        let in_place = merged
            .iter()
            .enumerate()
            .all(|(n, (_, v, li))| *li == n && matches!(v.kind, ExprKind::Column(i) if i == n));
        if in_place {
            // The left's column stands for the merged one, and is still
            // reachable qualified.
            for c in &mut item.scope.columns[..merged.len()] {
                c.merged = false;
            }
            return Ok(item);
        }
        let width = item.scope.len();
        let mut exprs: Vec<Expr> = Vec::with_capacity(merged.len() + width);
        let mut fields = Vec::with_capacity(merged.len() + width);
        let mut columns = Vec::with_capacity(merged.len() + width);
        for (name, value, _) in &merged {
            fields.push(Field {
                name: name.clone(),
                ty: value.ty,
            });
            columns.push(ScopeColumn {
                qualifier: None,
                name: name.clone(),
                ty: value.ty,
                hidden: false,
                merged: false,
            });
            exprs.push(value.clone());
        }
        for (i, c) in item.scope.columns.iter().enumerate() {
            exprs.push(Expr::column(i, c.ty));
            fields.push(item.plan.fields[i].clone());
            columns.push(c.clone());
        }
        let plan = Plan {
            rows: item.plan.rows,
            fields,
            node: Node::Project {
                input: Box::new(item.plan),
                exprs,
            },
        };
        Ok(Item {
            plan,
            scope: Scope {
                columns,
                items: item.scope.items,
            },
        })
    }

    /// A sequential scan of `columns` of `table`.
    pub fn scan_plan(
        &mut self,
        table: std::sync::Arc<crate::catalog::TableDef>,
        alias: &str,
        columns: Vec<usize>,
        with_tid: bool,
    ) -> Plan {
        let pages = crate::plan::indexpath::planned_pages(&table, &*self.ctx);
        let rows = match &table.stats {
            Some(s) if s.relpages > 0 => s.reltuples / s.relpages as f64 * pages,
            Some(s) => s.reltuples,
            None => {
                let width: usize = table
                    .columns
                    .iter()
                    .map(|c| match c.ty.attlen() {
                        -1 => 32,
                        n => n as usize,
                    })
                    .sum();
                pages * (8168.0 / (width as f64 + 28.0)).floor()
            }
        };
        let mut fields: Vec<Field> = columns
            .iter()
            .map(|&i| Field {
                name: table.columns[i].name.clone(),
                ty: table.columns[i].ty,
            })
            .collect();
        if with_tid {
            fields.push(Field {
                name: "ctid".into(),
                ty: DataType::Int8,
            });
        }
        Plan {
            rows: rows.max(if pages > 0.0 { 1.0 } else { 0.0 }),
            fields,
            node: Node::SeqScan {
                table,
                alias: alias.to_string(),
                columns,
                with_tid,
                filter: None,
            },
        }
    }
}

/// The position and type of USING column `c` in one side of the join, with
/// PostgreSQL's errors for a missing or repeated name.
fn using_side(scope: &Scope, c: &str, side: &str) -> Result<(usize, DataType)> {
    let mut found = scope
        .columns
        .iter()
        .enumerate()
        .filter(|(_, col)| !col.hidden && !col.merged && col.name == c);
    match (found.next(), found.next()) {
        (Some((i, col)), None) => Ok((i, col.ty)),
        (Some(_), Some(_)) => Err(err!(
            AmbiguousColumn,
            "common column name \"{c}\" appears more than once in {side} table"
        )),
        (None, _) => Err(err!(
            UndefinedColumn,
            "column \"{c}\" specified in USING clause does not exist in {side} table"
        )),
    }
}

/// A subquery or CTE in FROM: its output named by the alias.
pub(super) fn derived(plan: Plan, alias: &ast::TableAlias) -> Result<Item> {
    if alias.columns.len() > plan.fields.len() {
        return Err(err!(
            InvalidColumnReference,
            "table \"{}\" has {} columns available but {} columns specified",
            alias.name,
            plan.fields.len(),
            alias.columns.len()
        ));
    }
    let mut plan = plan;
    for (f, c) in plan.fields.iter_mut().zip(&alias.columns) {
        f.name = c.clone();
    }
    let scope = Scope::of(
        &alias.name,
        plan.fields.iter().map(|f| (f.name.clone(), f.ty)),
    );
    Ok(Item { plan, scope })
}

/// Join conditions mention columns too: collect them for the scans.
pub(super) fn collect_join_conditions(t: &ast::TableRef, needed: &mut Needed) {
    super::lateral::collect_lateral_refs(t, needed);
    if let ast::TableRef::Join(j) = t {
        collect_join_conditions(&j.left, needed);
        collect_join_conditions(&j.right, needed);
        match &j.constraint {
            ast::JoinConstraint::On(e) => needed.add_expr(e),
            ast::JoinConstraint::Using(cols) => {
                for c in cols {
                    needed.refs.insert((None, c.clone()));
                }
            }
            _ => {}
        }
    }
}

pub(super) fn dummy() -> Plan {
    Plan {
        rows: 0.0,
        fields: vec![],
        node: Node::Values { rows: vec![] },
    }
}

/// Adds a filter: into a scan's own filter when the input is a scan.
pub(super) fn push_filter(plan: Plan, predicate: Expr) -> Plan {
    match plan.node {
        Node::SeqScan {
            table,
            alias,
            columns,
            with_tid,
            filter: f,
        } => {
            // Only the new condition narrows the scan's current estimate.
            let sel = estimate::selectivity(
                &predicate,
                &estimate::column_origins(&Plan {
                    node: Node::SeqScan {
                        table: table.clone(),
                        alias: String::new(),
                        columns: columns.clone(),
                        with_tid,
                        filter: None,
                    },
                    fields: plan.fields.clone(),
                    rows: plan.rows,
                }),
            );
            let predicate = match f {
                Some(old) => Expr {
                    kind: ExprKind::And(Box::new(old), Box::new(predicate)),
                    ty: DataType::Bool,
                },
                None => predicate,
            };
            Plan {
                rows: (plan.rows * sel).max(1.0),
                fields: plan.fields,
                node: Node::SeqScan {
                    table,
                    alias,
                    columns,
                    with_tid,
                    filter: Some(predicate),
                },
            }
        }
        // An inherited table's scans (see `inherit`): each scan filters
        // its own rows, as PostgreSQL pushes the condition to each child.
        Node::Append { inputs }
            if inputs.iter().all(|i| {
                matches!(i.node, Node::SeqScan { .. }) && i.fields.len() == plan.fields.len()
            }) =>
        {
            let inputs: Vec<Plan> = inputs
                .into_iter()
                .map(|i| push_filter(i, predicate.clone()))
                .collect();
            Plan {
                rows: inputs.iter().map(|i| i.rows).sum(),
                fields: plan.fields,
                node: Node::Append { inputs },
            }
        }
        node @ (Node::HashJoin { .. } | Node::NestedLoop { .. }) => push_into_join(
            Plan {
                node,
                fields: plan.fields,
                rows: plan.rows,
            },
            predicate,
        ),
        node => filter(
            Plan {
                node,
                fields: plan.fields,
                rows: plan.rows,
            },
            predicate,
        ),
    }
}

/// A WHERE condition over an explicit `JOIN` (`plan` is the join) goes
/// below it, into the side whose columns it reads, when that side's rows are
/// never NULL-extended by the join (either side of an inner join, the
/// preserved side of an outer one) — as PostgreSQL pushes it into the scan;
/// otherwise it filters the join's output.
fn push_into_join(mut plan: Plan, predicate: Expr) -> Plan {
    let sel = selectivity(&plan, &predicate);
    let mut cols = Vec::new();
    columns_used(&predicate, &mut cols);
    let (left, right, kind) = match &mut plan.node {
        Node::HashJoin {
            left, right, kind, ..
        }
        | Node::NestedLoop {
            left, right, kind, ..
        } => (left, right, *kind),
        _ => return filter(plan, predicate),
    };
    let left_len = left.fields.len();
    let into_left = matches!(kind, JoinKind::Inner | JoinKind::Left);
    let into_right = matches!(kind, JoinKind::Inner | JoinKind::Right);
    if !cols.is_empty() && into_left && cols.iter().all(|&c| c < left_len) {
        **left = push_filter(std::mem::replace(&mut **left, dummy()), predicate);
    } else if !cols.is_empty() && into_right && cols.iter().all(|&c| c >= left_len) {
        let mut p = predicate;
        remap_columns(&mut p, &|c| c - left_len);
        **right = push_filter(std::mem::replace(&mut **right, dummy()), p);
    } else {
        return filter(plan, predicate);
    }
    plan.rows = (plan.rows * sel).max(1.0);
    plan
}
