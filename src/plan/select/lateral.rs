//! LATERAL FROM items: a subquery marked `LATERAL`, or a function in FROM
//! (lateral by nature), that reads columns of the FROM items to its left.
//!
//! Such an item is planned with the items to its left as an enclosing
//! level (as a correlated sublink sees its query, [`super::super::sublink`]):
//! their columns become [`ExprKind::Param`]s of the item, and the item
//! joins them through a [`Node::Lateral`], which runs it anew per left row
//! with the row's values substituted. An item that reads none of them is
//! planned and joined as any other.
//!
//! Invariants: only inner and left joins (and FROM lists) make a lateral
//! join; the left side of the join is planned before the item, and its
//! columns, in order, are the node's left input.

use heapdb_grammar::ast;

use super::super::bind::{at, contains_aggregate, walk, Binder, Mode};
use super::super::scope::Scope;
use super::super::sublink::Hidden;
use super::super::{Field, JoinKind, Node, Plan, Srf, TableFunc};
use super::from::{dummy, push_filter};
use super::*;
use crate::err;
use crate::error::Result;
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::cast::CastContext;
use crate::types::DataType;

/// Whether `t` may read the FROM items to its left: a LATERAL subquery, or
/// a function whose arguments name a column.
pub(super) fn may_be_lateral(t: &ast::TableRef) -> bool {
    match t {
        ast::TableRef::Subquery { lateral, .. } => *lateral,
        ast::TableRef::Function { call, .. } => call.args.iter().any(|a| {
            let mut found = false;
            walk(a, &mut |x| {
                found |= matches!(
                    x.kind,
                    ast::ExprKind::Column(_)
                        | ast::ExprKind::Subquery(_)
                        | ast::ExprKind::Exists(_)
                        | ast::ExprKind::InSubquery { .. }
                        | ast::ExprKind::Quantified { .. }
                );
            });
            found
        }),
        _ => false,
    }
}

/// Adds to `needed` the columns lateral item `t` may read of the items to
/// its left.
pub(super) fn collect_lateral_refs(t: &ast::TableRef, needed: &mut Needed) {
    match t {
        ast::TableRef::Function { call, .. } => {
            for a in &call.args {
                needed.add_expr(a);
            }
        }
        ast::TableRef::Subquery {
            query,
            lateral: true,
            ..
        } => {
            super::super::sublink::query_columns(query, &mut |c| {
                needed.refs.insert((c.table.clone(), c.column.clone()));
            });
        }
        _ => {}
    }
}

/// Whether WHERE conjunct `c` reads columns of `left` only (each name
/// resolving there and not in `right`), and no subquery or aggregate.
fn reads_only(c: &ast::Expr, left: &Scope, right: &Scope) -> bool {
    let mut ok = true;
    let mut any = false;
    walk(c, &mut |x| match &x.kind {
        ast::ExprKind::Column(r) => {
            any = true;
            ok &= r.schema.is_none()
                && left.resolve(r.table.as_deref(), &r.column).is_ok()
                && right.resolve(r.table.as_deref(), &r.column).is_err();
        }
        ast::ExprKind::Subquery(_)
        | ast::ExprKind::Exists(_)
        | ast::ExprKind::InSubquery { .. }
        | ast::ExprKind::Quantified { .. } => ok = false,
        _ => {}
    });
    ok && any && !contains_aggregate(c)
}

/// Whether `e` reads a parameter (a value of an enclosing row).
pub(super) fn has_param(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Param(_)) || e.children().into_iter().any(has_param)
}

/// `left` joined with `right`, which reads `params` (over `left`'s
/// columns) as its parameters.
fn lateral_join(left: Item, right: Item, kind: JoinKind, params: Vec<Expr>) -> Result<Item> {
    let scope = left.scope.join(&right.scope)?;
    let mut fields = left.plan.fields.clone();
    fields.extend(right.plan.fields.iter().cloned());
    let rows = match kind {
        JoinKind::Left => left.plan.rows * right.plan.rows.max(1.0),
        _ => left.plan.rows * right.plan.rows,
    };
    Ok(Item {
        plan: Plan {
            rows: rows.max(1.0),
            fields,
            node: Node::Lateral {
                left: Box::new(left.plan),
                right: Box::new(right.plan),
                kind,
                params,
            },
        },
        scope,
    })
}

impl Binder<'_> {
    /// FROM list item `t` after `items`: planned with their columns in
    /// reach; when it reads them, `items` are joined first (with `on`, the
    /// conditions of flattened joins among them) and become the left side
    /// of a lateral join with it.
    pub(super) fn plan_lateral_item(
        &mut self,
        t: &ast::TableRef,
        needed: &Needed,
        where_clause: Option<&ast::Expr>,
        items: &mut Vec<Item>,
        on: &mut Vec<Expr>,
    ) -> Result<()> {
        let left_scope = items
            .iter()
            .try_fold(Scope::default(), |acc, it| acc.join(&it.scope))?;
        let hidden = (!may_be_lateral(t)).then_some(Hidden::NotLateral);
        let (right, params) =
            self.with_outer_scope(&left_scope, hidden, |b| b.plan_table_ref(t, needed))?;
        if params.is_empty() || hidden.is_some() {
            items.push(right);
            return Ok(());
        }
        // WHERE's conjuncts that read only the items on the left filter
        // them before the item runs (as PostgreSQL pushes them down).
        if let Some(w) = where_clause {
            let mut cs = Vec::new();
            conjuncts(w, &mut cs);
            for c in cs {
                if reads_only(&c, &left_scope, &right.scope) {
                    on.push(self.bind_condition(
                        &c,
                        &left_scope,
                        &mut Mode::NoAgg("WHERE"),
                        "WHERE",
                    )?);
                }
            }
        }
        let (plan, scope) = self.join_items(std::mem::take(items), None, std::mem::take(on))?;
        let left = Item { plan, scope };
        items.push(lateral_join(left, right, JoinKind::Inner, params)?);
        Ok(())
    }

    /// `left [INNER | CROSS | LEFT] JOIN item [ON cond]` where the item may
    /// read the left's columns: the condition is bound with the item, over
    /// its columns and the left's as parameters.
    pub(super) fn plan_lateral_join(&mut self, j: &ast::Join, needed: &Needed) -> Result<Item> {
        let kind = match j.kind {
            ast::JoinKind::Left => JoinKind::Left,
            _ => JoinKind::Inner,
        };
        let left = self.plan_join_side(&j.left, needed, false)?;
        let nullable = kind == JoinKind::Left;
        let (right, params) = self.with_outer_scope(&left.scope, None, |b| {
            let mut right = b.plan_join_side(&j.right, needed, nullable)?;
            if let ast::JoinConstraint::On(e) = &j.constraint {
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
                    let cond = b.bind_condition(
                        &c,
                        &right.scope,
                        &mut Mode::NoAgg("JOIN conditions"),
                        "JOIN/ON",
                    )?;
                    if !matches!(cond.kind, ExprKind::Const(crate::types::Value::Bool(true))) {
                        right.plan = push_filter(std::mem::replace(&mut right.plan, dummy()), cond);
                    }
                }
            }
            Ok(right)
        })?;
        if params.is_empty() {
            return self.join(left, right, kind, Vec::new());
        }
        lateral_join(left, right, kind, params)
    }

    /// The right side `r` of a join that is not a lateral join: the left's
    /// columns (`left`) are out of its reach, and a reference to them is
    /// PostgreSQL's error, not a missing name.
    pub(super) fn plan_join_right(
        &mut self,
        left: &Scope,
        r: &ast::TableRef,
        needed: &Needed,
        nullable: bool,
    ) -> Result<Item> {
        if !matches!(
            r,
            ast::TableRef::Subquery { .. } | ast::TableRef::Function { .. }
        ) {
            return self.plan_join_side(r, needed, nullable);
        }
        let why = if may_be_lateral(r) {
            Hidden::JoinType
        } else {
            Hidden::NotLateral
        };
        let (item, _) =
            self.with_outer_scope(left, Some(why), |b| b.plan_join_side(r, needed, nullable))?;
        Ok(item)
    }

    /// A set-returning function in FROM whose arguments read an enclosing
    /// row: resolved by its argument types, run when the plan runs.
    pub(super) fn lateral_function(
        &mut self,
        name: &str,
        args: &[(Expr, ast::Offset)],
        offset: ast::Offset,
    ) -> Result<(TableFunc, Vec<Field>)> {
        let tys: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let no_such = || {
            let list: Vec<String> = tys.iter().map(|t| t.to_string()).collect();
            at(
                err!(UndefinedFunction, "function {name}({}) does not exist", list.join(", "))
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
                offset,
            )
        };
        let (srf, arg_types, ty) = match name {
            "generate_series" => series_signature(&tys).ok_or_else(no_such)?,
            "unnest" => match tys.as_slice() {
                [DataType::Array(e)] => (Srf::Unnest, tys.clone(), **e),
                _ => return Err(no_such()),
            },
            "regexp_matches" | "regexp_split_to_table" => {
                if !crate::types::funcs::regexp_match::srf_takes(&tys) {
                    return Err(no_such());
                }
                let split = name == "regexp_split_to_table";
                let ty = if split {
                    DataType::Text
                } else {
                    DataType::array_of(DataType::Text)
                };
                (Srf::Regexp(split), vec![DataType::Text; tys.len()], ty)
            }
            "string_to_table" => {
                use crate::types::array_funcs::ArrayFunc;
                let resolved = ArrayFunc::StringToArray
                    .resolve(&tys)
                    .map_err(|_| no_such())?;
                (Srf::StringToTable, resolved.arg_types, DataType::Text)
            }
            _ => match crate::types::json::srf::JsonSrf::from_name(name) {
                Some(f) if matches!(tys.as_slice(), [DataType::Json | DataType::Jsonb]) => {
                    let jsonb = tys[0] == DataType::Jsonb;
                    if f.rows(&crate::types::Value::Null, &tys[0])?.is_none() {
                        return Err(no_such());
                    }
                    let fields = f
                        .columns()
                        .into_iter()
                        .map(|(name, ty)| Field { name, ty })
                        .collect();
                    let args = vec![args[0].0.clone()];
                    return Ok((
                        TableFunc::Call {
                            srf: Srf::Json(f, jsonb),
                            args,
                        },
                        fields,
                    ));
                }
                _ => return Err(no_such()),
            },
        };
        let mut bound = Vec::with_capacity(args.len());
        for ((a, off), t) in args.iter().zip(&arg_types) {
            bound.push(self.coerce(a.clone(), t, CastContext::Implicit, *off)?);
        }
        let fields = vec![Field {
            name: name.to_string(),
            ty,
        }];
        Ok((TableFunc::Call { srf, args: bound }, fields))
    }
}

/// `generate_series`'s form for argument types `tys`: the function, the
/// types its arguments are cast to and its result type.
fn series_signature(tys: &[DataType]) -> Option<(Srf, Vec<DataType>, DataType)> {
    if !(2..=3).contains(&tys.len()) {
        return None;
    }
    let is_int = |t: &DataType| {
        matches!(
            t,
            DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Unknown
        )
    };
    if tys.iter().all(is_int) {
        let ty = if tys.contains(&DataType::Int8) {
            DataType::Int8
        } else {
            DataType::Int4
        };
        return Some((Srf::SeriesInt, vec![ty; tys.len()], ty));
    }
    let is_num = |t: &DataType| t.is_numeric() || *t == DataType::Unknown;
    if tys.iter().all(is_num) {
        let ty = DataType::Numeric(None);
        return Some((Srf::SeriesNumeric, vec![ty; tys.len()], ty));
    }
    if tys.len() == 3 {
        let tz = tys[..2]
            .iter()
            .any(|t| matches!(t, DataType::TimestampTz(_)));
        let ts = if tz {
            DataType::TimestampTz(None)
        } else {
            DataType::Timestamp(None)
        };
        return Some((
            Srf::SeriesTimestamp { tz },
            vec![ts, ts, DataType::Interval],
            ts,
        ));
    }
    None
}
