//! Window functions in a SELECT (PostgreSQL's `parse_clause.c`
//! window-clause transformation and `planner.c`'s `create_window_paths`).
//!
//! Planning a SELECT with `f(...) OVER (...)` calls, after FROM, WHERE and
//! any grouping:
//! 1. [`Binder::prepare_windows`] collects the distinct calls of the select
//!    list and ORDER BY, resolves named windows (`OVER w`, `OVER (w ...)`,
//!    the `WINDOW` clause), binds every argument, FILTER, partition and
//!    order key over the rows below (the FROM scope, or the grouped rows
//!    when the query aggregates) and registers the calls with the binder:
//!    while the select list is bound, each call becomes a placeholder
//!    column ([`MARK`] + its number).
//! 2. [`WindowPlan::apply`] projects the input's columns plus those bound
//!    expressions, then per distinct window a Sort (skipped when the rows
//!    are already sorted on a prefix-compatible key) and a WindowAgg, and
//!    rewrites the placeholders to the WindowAgg output columns.
//!
//! Invariant: no placeholder survives `apply`; a window call met while no
//! registry is active is an error saying where windows are not allowed.

use heapdb_grammar::ast;

use super::bind::{at, leftmost, walk, Binder, Mode};
use super::scope::Scope;
use super::select::remap_columns;
use super::{Field, Node, Plan, SortKey};
use crate::err;
use crate::error::Result;
use crate::nodes::expr::Expr;
use crate::nodes::window::{
    Frame, FrameBound, FrameExclude, FrameUnits, WindowCall, WindowClause, WindowFunc,
};
use crate::types::agg::{agg_result_type, signature, AggFunc};
use crate::types::cast::CastContext;
use crate::types::funcs::ScalarFunc;
use crate::types::{DataType, Value};

/// Placeholder columns for window calls start here (far beyond any real
/// column count).
pub const MARK: usize = usize::MAX / 2;

/// The window calls the binder may meet while binding a select list.
#[derive(Debug, Default)]
pub struct WindowRegistry {
    /// Each call as written, with its result type.
    calls: Vec<(ast::FunctionCall, DataType)>,
    /// Binding a window call's arguments or its window's keys: the error
    /// a window call met there is.
    nested: Option<&'static str>,
}

/// The names window functions that are not aggregates.
fn window_func(name: &str) -> Option<WindowFunc> {
    Some(match name {
        "row_number" => WindowFunc::RowNumber,
        "rank" => WindowFunc::Rank,
        "dense_rank" => WindowFunc::DenseRank,
        "percent_rank" => WindowFunc::PercentRank,
        "cume_dist" => WindowFunc::CumeDist,
        "ntile" => WindowFunc::Ntile,
        "lag" => WindowFunc::Lag,
        "lead" => WindowFunc::Lead,
        "first_value" => WindowFunc::FirstValue,
        "last_value" => WindowFunc::LastValue,
        "nth_value" => WindowFunc::NthValue,
        _ => return None,
    })
}

/// The binder's hook for a call: a window call becomes its placeholder
/// (or an error where windows are not allowed); a window-only function
/// without OVER is an error. `None`: an ordinary call.
pub fn bind_hook(b: &Binder<'_>, call: &ast::FunctionCall, mode: &Mode) -> Option<Result<Expr>> {
    let name = call.name.name.as_str();
    if call.over.is_none() {
        if call.name.schema.is_none() && window_func(name).is_some() {
            return Some(Err(err!(
                WrongObjectType,
                "window function {name} requires an OVER clause"
            )));
        }
        return None;
    }
    if let Some(m) = b.windows.nested {
        return Some(Err(err!(WindowingError, "{m}")));
    }
    if let Some(j) = b.windows.calls.iter().position(|(c, _)| c == call) {
        return Some(Ok(Expr::column(MARK + j, b.windows.calls[j].1)));
    }
    Some(Err(match mode {
        Mode::NoAgg("aggregate function calls") => err!(
            GroupingError,
            "aggregate function calls cannot contain window function calls"
        ),
        Mode::NoAgg(clause) => err!(
            WindowingError,
            "window functions are not allowed in {clause}"
        ),
        Mode::Agg(_) => err!(WindowingError, "window functions are not allowed in HAVING"),
    }))
}

/// Whether `e` holds a window call (not looking into subqueries).
pub fn contains_window(e: &ast::Expr) -> bool {
    first_window(e).is_some()
}

/// The offset of the first window call in `e`.
fn first_window(e: &ast::Expr) -> Option<ast::Offset> {
    let mut found = None;
    walk(e, &mut |x| {
        if let ast::ExprKind::Function(f) = &x.kind {
            if f.over.is_some() && found.is_none() {
                found = Some(x.offset);
            }
        }
    });
    found
}

/// Whether the SELECT computes window functions.
pub fn has_windows(s: &ast::Select, order_by: &[ast::OrderBy]) -> bool {
    s.projection.iter().any(|i| match i {
        ast::SelectItem::Expr { expr, .. } => contains_window(expr),
        _ => false,
    }) || order_by.iter().any(|o| contains_window(&o.expr))
}

/// A window's resolved definition: partition keys, order keys, frame.
#[derive(Clone)]
struct Resolved {
    /// Where the window is written (for errors).
    offset: ast::Offset,
    partition: Vec<ast::Expr>,
    order: Vec<ast::OrderBy>,
    frame: Option<ast::WindowFrame>,
}

/// The WINDOW clause's definitions, resolved in order.
fn named_windows(s: &ast::Select) -> Result<Vec<(String, Resolved)>> {
    let mut out: Vec<(String, Resolved)> = Vec::new();
    for w in &s.window {
        if out.iter().any(|(n, _)| *n == w.name) {
            return Err(at(
                err!(WindowingError, "window \"{}\" is already defined", w.name),
                w.spec.offset,
            ));
        }
        let r = resolve(&w.spec, &out)?;
        out.push((w.name.clone(), r));
    }
    Ok(out)
}

/// Resolves a specification against the named windows.
fn resolve(spec: &ast::WindowSpec, named: &[(String, Resolved)]) -> Result<Resolved> {
    let lookup = |n: &str| {
        named
            .iter()
            .find(|(m, _)| m == n)
            .map(|(_, r)| r.clone())
            .ok_or_else(|| {
                at(
                    err!(UndefinedObject, "window \"{n}\" does not exist"),
                    spec.offset,
                )
            })
    };
    if let Some(n) = &spec.name {
        return lookup(n);
    }
    let Some(base) = &spec.base else {
        return Ok(Resolved {
            offset: spec.offset,
            partition: spec.partition_by.clone(),
            order: spec.order_by.clone(),
            frame: spec.frame.clone(),
        });
    };
    let b = lookup(base)?;
    let fail = |m: String| Err(at(err!(WindowingError, "{m}"), spec.offset));
    if !spec.partition_by.is_empty() {
        return fail(format!(
            "cannot override PARTITION BY clause of window \"{base}\""
        ));
    }
    if !spec.order_by.is_empty() && !b.order.is_empty() {
        return fail(format!(
            "cannot override ORDER BY clause of window \"{base}\""
        ));
    }
    if b.frame.is_some() {
        return fail(format!(
            "cannot copy window \"{base}\" because it has a frame clause"
        ));
    }
    Ok(Resolved {
        offset: spec.offset,
        partition: b.partition,
        order: if spec.order_by.is_empty() {
            b.order
        } else {
            spec.order_by.clone()
        },
        frame: spec.frame.clone(),
    })
}

/// One call as planned: its function, arguments (positions in the
/// pre-projected expressions), window and type.
struct Planned {
    func: WindowFunc,
    args: Vec<usize>,
    filter: Option<usize>,
    ty: DataType,
    window: usize,
    text: String,
}

/// One distinct window: keys as positions in the pre-projected
/// expressions.
struct PlannedWindow {
    partition: Vec<usize>,
    order: Vec<(usize, bool, bool)>,
    frame: Frame,
    /// Identity for sharing (keys and frame as written).
    ident: String,
}

/// What [`Binder::prepare_windows`] found, for [`WindowPlan::apply`].
pub struct WindowPlan {
    /// Expressions over the input that the windows read.
    pre: Vec<Expr>,
    calls: Vec<Planned>,
    windows: Vec<PlannedWindow>,
    /// The registry the binder had before (a surrounding query's).
    saved: WindowRegistry,
}

/// Errors for window calls where PostgreSQL allows none.
fn check_clauses(s: &ast::Select) -> Result<()> {
    let clauses = [
        ("WHERE", s.where_clause.as_ref()),
        ("HAVING", s.having.as_ref()),
    ];
    for (name, e) in clauses {
        if let Some(off) = e.and_then(first_window) {
            return Err(at(
                err!(WindowingError, "window functions are not allowed in {name}"),
                off,
            ));
        }
    }
    for g in &s.group_by {
        if let Some(off) = first_window(g) {
            return Err(at(
                err!(
                    WindowingError,
                    "window functions are not allowed in GROUP BY"
                ),
                off,
            ));
        }
    }
    Ok(())
}

/// The distinct window calls of the select list and ORDER BY, in order of
/// appearance; errors for nested calls and aggregates over windows.
fn collect_calls(s: &ast::Select, order_by: &[ast::OrderBy]) -> Result<Vec<ast::Expr>> {
    let mut calls: Vec<ast::Expr> = Vec::new();
    let mut error = None;
    let mut visit = |x: &ast::Expr| {
        let ast::ExprKind::Function(f) = &x.kind else {
            return;
        };
        let inner = f
            .args
            .iter()
            .chain(f.filter.as_deref())
            .find_map(first_window);
        let relevant = f.over.is_some() || super::bind::is_aggregate(&f.name);
        if let (Some(off), None, true) = (inner, &error, relevant) {
            error = Some(if f.over.is_some() {
                at(
                    err!(WindowingError, "window function calls cannot be nested"),
                    off,
                )
            } else {
                at(
                    err!(
                        GroupingError,
                        "aggregate function calls cannot contain window function calls"
                    ),
                    off,
                )
            });
        }
        if f.over.is_some() && !calls.iter().any(|c| c == x) {
            calls.push(x.clone());
        }
    };
    for item in &s.projection {
        if let ast::SelectItem::Expr { expr, .. } = item {
            walk(expr, &mut visit);
        }
    }
    for o in order_by {
        walk(&o.expr, &mut visit);
    }
    match error {
        Some(e) => Err(e),
        None => Ok(calls),
    }
}

impl Binder<'_> {
    /// Step 1 of the module docs: binds every window call's parts over
    /// `scope` (through `state` when the query aggregates) and registers
    /// the calls for the select list's binding.
    pub fn prepare_windows(
        &mut self,
        s: &ast::Select,
        order_by: &[ast::OrderBy],
        scope: &Scope,
        state: Option<&mut super::bind::AggState>,
    ) -> Result<WindowPlan> {
        check_clauses(s)?;
        let named = named_windows(s)?;
        let calls = collect_calls(s, order_by)?;
        let saved = std::mem::take(&mut self.windows);
        let mut mode = match state {
            Some(st) => Mode::Agg(st),
            None => Mode::NoAgg("window functions"),
        };
        let mut plan = WindowPlan {
            pre: Vec::new(),
            calls: Vec::new(),
            windows: Vec::new(),
            saved,
        };
        let mut registry = Vec::new();
        for e in &calls {
            let ast::ExprKind::Function(call) = &e.kind else {
                continue;
            };
            let spec = call
                .over
                .as_deref()
                .map_or_else(ast::WindowSpec::empty, Clone::clone);
            let resolved = resolve(&spec, &named)?;
            let r = self.plan_call(call, e.offset, &resolved, scope, &mut mode, &mut plan);
            self.windows.nested = None;
            let planned = r?;
            registry.push(((**call).clone(), planned.ty));
            plan.calls.push(planned);
        }
        self.windows.calls = registry;
        Ok(plan)
    }

    /// Binds `e` into the pre-projection, returning its position there.
    fn pre_expr(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        mode: &mut Mode,
        plan: &mut WindowPlan,
    ) -> Result<usize> {
        let b = self.bind_expr(e, scope, mode)?;
        let b = self.resolve_unknown(b)?;
        Ok(push_pre(plan, b))
    }

    /// Plans one call: its window, arguments and result type.
    fn plan_call(
        &mut self,
        call: &ast::FunctionCall,
        offset: ast::Offset,
        resolved: &Resolved,
        scope: &Scope,
        mode: &mut Mode,
        plan: &mut WindowPlan,
    ) -> Result<Planned> {
        self.windows.nested = Some("window functions are not allowed in window definitions");
        let window = self.plan_window(resolved, scope, mode, plan)?;
        self.windows.nested = Some("window function calls cannot be nested");
        let name = call.name.name.as_str();
        let unsupported = |m: &str| Err(at(err!(FeatureNotSupported, "{m}"), offset));
        if call.distinct {
            return unsupported("DISTINCT is not implemented for window functions");
        }
        if !call.order_by.is_empty() {
            return unsupported("aggregate ORDER BY is not implemented for window functions");
        }
        let mut args = Vec::with_capacity(call.args.len());
        for a in &call.args {
            let b = self.bind_expr(a, scope, mode)?;
            args.push((b, a.offset));
        }
        let text = format!(
            "{}",
            ast::Expr::new(ast::ExprKind::Function(Box::new(call.clone())))
        );
        let (func, args, ty) = match (window_func(name), call.name.schema.is_none()) {
            (Some(f), true) => {
                if call.filter.is_some() {
                    return unsupported(
                        "FILTER is not implemented for non-aggregate window functions",
                    );
                }
                let (args, ty) = self.window_args(f, name, args)?;
                (f, args, ty)
            }
            _ => {
                let (f, args, ty) = self.window_agg_args(call, args, offset)?;
                (WindowFunc::Agg(f), args, ty)
            }
        };
        let args = args.into_iter().map(|a| push_pre(plan, a)).collect();
        let filter = match &call.filter {
            Some(f) => {
                let c = self.bind_condition(f, scope, mode, "FILTER")?;
                Some(push_pre(plan, c))
            }
            None => None,
        };
        Ok(Planned {
            func,
            args,
            filter,
            ty,
            window,
            text,
        })
    }

    /// The window's keys bound and its frame checked; shared with an
    /// earlier call's equal window.
    fn plan_window(
        &mut self,
        r: &Resolved,
        scope: &Scope,
        mode: &mut Mode,
        plan: &mut WindowPlan,
    ) -> Result<usize> {
        let mut partition = Vec::new();
        for p in &r.partition {
            partition.push(self.pre_expr(p, scope, mode, plan)?);
        }
        let mut order = Vec::new();
        for o in &r.order {
            let c = self.pre_expr(&o.expr, scope, mode, plan)?;
            order.push((c, o.descending, o.nulls_first.unwrap_or(o.descending)));
        }
        let key_ty = order.first().map(|&(c, _, _)| plan.pre[c].ty);
        let frame = match &r.frame {
            Some(f) => self.plan_frame(f, r.offset, order.len(), key_ty)?,
            None => Frame::default_frame(),
        };
        let ident = format!("{partition:?} {order:?} {:?}", r.frame);
        if let Some(w) = plan.windows.iter().position(|w| w.ident == ident) {
            return Ok(w);
        }
        plan.windows.push(PlannedWindow {
            partition,
            order,
            frame,
            ident,
        });
        Ok(plan.windows.len() - 1)
    }

    /// A frame clause checked as PostgreSQL's grammar and
    /// `transformFrameOffset` do, offsets evaluated.
    fn plan_frame(
        &mut self,
        f: &ast::WindowFrame,
        window_at: ast::Offset,
        norder: usize,
        key_ty: Option<DataType>,
    ) -> Result<Frame> {
        use ast::FrameBound as B;
        let end = f.end.clone().unwrap_or(B::CurrentRow);
        let fail = |m: &str| Err(at(err!(WindowingError, "{m}"), f.offset));
        match (&f.start, &end) {
            (B::UnboundedFollowing, _) => return fail("frame start cannot be UNBOUNDED FOLLOWING"),
            (_, B::UnboundedPreceding) => return fail("frame end cannot be UNBOUNDED PRECEDING"),
            (B::CurrentRow, B::Preceding(_)) => {
                return fail("frame starting from current row cannot have preceding rows")
            }
            (B::Following(_), B::CurrentRow) if f.end.is_none() => {
                return fail("frame starting from following row cannot end with current row")
            }
            (B::Following(_), B::CurrentRow) => {
                return fail("frame starting from following row cannot have preceding rows")
            }
            (B::Following(_), B::Preceding(_)) => {
                return fail("frame starting from following row cannot have preceding rows")
            }
            _ => {}
        }
        let units = match f.units {
            ast::FrameUnits::Rows => FrameUnits::Rows,
            ast::FrameUnits::Range => FrameUnits::Range,
            ast::FrameUnits::Groups => FrameUnits::Groups,
        };
        let has_offset = [&f.start, &end]
            .iter()
            .any(|b| matches!(b, B::Preceding(_) | B::Following(_)));
        let window_fail = |m: &str| Err(at(err!(WindowingError, "{m}"), window_at));
        if units == FrameUnits::Range && has_offset && norder != 1 {
            return window_fail(
                "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
            );
        }
        if units == FrameUnits::Groups && norder == 0 {
            return window_fail("GROUPS mode requires an ORDER BY clause");
        }
        let start = self.frame_bound(&f.start, f.units, key_ty, true)?;
        let end = self.frame_bound(&end, f.units, key_ty, false)?;
        let exclude = match f.exclude {
            ast::FrameExclude::NoOthers => FrameExclude::NoOthers,
            ast::FrameExclude::CurrentRow => FrameExclude::CurrentRow,
            ast::FrameExclude::Group => FrameExclude::Group,
            ast::FrameExclude::Ties => FrameExclude::Ties,
        };
        Ok(Frame {
            units,
            start,
            end,
            exclude,
        })
    }

    /// One frame bound, its offset evaluated now.
    fn frame_bound(
        &mut self,
        b: &ast::FrameBound,
        units: ast::FrameUnits,
        key_ty: Option<DataType>,
        start: bool,
    ) -> Result<FrameBound> {
        use ast::FrameBound as B;
        let (e, following) = match b {
            B::UnboundedPreceding => return Ok(FrameBound::UnboundedPreceding),
            B::UnboundedFollowing => return Ok(FrameBound::UnboundedFollowing),
            B::CurrentRow => return Ok(FrameBound::CurrentRow),
            B::Preceding(e) => (e, false),
            B::Following(e) => (e, true),
        };
        let unit = match units {
            ast::FrameUnits::Rows => "ROWS",
            ast::FrameUnits::Range => "RANGE",
            ast::FrameUnits::Groups => "GROUPS",
        };
        let mut has_column = false;
        walk(e, &mut |x| {
            has_column |= matches!(x.kind, ast::ExprKind::Column(_));
        });
        if has_column {
            return Err(at(
                err!(
                    InvalidColumnReference,
                    "argument of {unit} must not contain variables"
                ),
                leftmost(e),
            ));
        }
        let bound = self.bind_expr(e, &Scope::default(), &mut Mode::NoAgg("window definitions"))?;
        let found = type_text(bound.ty);
        let bound = match (units, key_ty) {
            (ast::FrameUnits::Range, Some(t)) => {
                let shown = match t {
                    DataType::Varchar(_) | DataType::Char(_) | DataType::Name => DataType::Text,
                    t => t,
                };
                let Some(want) = range_offset_type(t) else {
                    return Err(at(
                        err!(
                            FeatureNotSupported,
                            "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {shown}"
                        ),
                        leftmost(e),
                    ));
                };
                self.coerce(bound, &want, CastContext::Implicit, leftmost(e))
                    .map_err(|_| {
                        at(
                            err!(
                                FeatureNotSupported,
                                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {shown} and offset type {found}"
                            )
                            .with_hint("Cast the offset value to an appropriate type."),
                            leftmost(e),
                        )
                    })?
            }
            _ => self
                .coerce(bound, &DataType::Int8, CastContext::Implicit, leftmost(e))
                .map_err(|_| {
                    at(
                        err!(
                            DatatypeMismatch,
                            "argument of {unit} must be type bigint, not type {found}"
                        ),
                        leftmost(e),
                    )
                })?,
        };
        let v = crate::exec::eval_const(&super::fold::fold(bound)?)?;
        let which = if start { "starting" } else { "ending" };
        if v.is_null() {
            return Err(err!(
                NullValueNotAllowed,
                "frame {which} offset must not be null"
            ));
        }
        if negative(&v) {
            return Err(if units == ast::FrameUnits::Range {
                err!(
                    InvalidPrecedingOrFollowingSize,
                    "invalid preceding or following size in window function"
                )
            } else {
                err!(
                    InvalidPrecedingOrFollowingSize,
                    "frame {which} offset must not be negative"
                )
            });
        }
        Ok(if following {
            FrameBound::Following(v)
        } else {
            FrameBound::Preceding(v)
        })
    }

    /// A non-aggregate window function's arguments coerced, and its type.
    fn window_args(
        &mut self,
        f: WindowFunc,
        name: &str,
        args: Vec<(Expr, ast::Offset)>,
    ) -> Result<(Vec<Expr>, DataType)> {
        let arity_ok = match f {
            WindowFunc::RowNumber
            | WindowFunc::Rank
            | WindowFunc::DenseRank
            | WindowFunc::PercentRank
            | WindowFunc::CumeDist => args.is_empty(),
            WindowFunc::Ntile | WindowFunc::FirstValue | WindowFunc::LastValue => args.len() == 1,
            WindowFunc::NthValue => args.len() == 2,
            WindowFunc::Lag | WindowFunc::Lead => (1..=3).contains(&args.len()),
            WindowFunc::Agg(_) => false,
        };
        if !arity_ok {
            let list: Vec<String> = args.iter().map(|(a, _)| type_text(a.ty)).collect();
            return Err(err!(
                UndefinedFunction,
                "function {name}({}) does not exist",
                list.join(", ")
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
        }
        let mut it = args.into_iter();
        Ok(match f {
            WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank => {
                (Vec::new(), DataType::Int8)
            }
            WindowFunc::PercentRank | WindowFunc::CumeDist => (Vec::new(), DataType::Float8),
            WindowFunc::Ntile => {
                let (a, off) = it.next().ok_or_else(|| err!(InternalError, "ntile"))?;
                let a = self.coerce(a, &DataType::Int4, CastContext::Implicit, off)?;
                (vec![a], DataType::Int4)
            }
            _ => {
                let (v, voff) = it.next().ok_or_else(|| err!(InternalError, "{name}"))?;
                let offset = it.next();
                let default = it.next();
                // lag/lead(anycompatible, integer, anycompatible): the value
                // and the default meet at their common type.
                let ty = match &default {
                    Some((d, doff)) => {
                        let t = self.unify(&name.to_uppercase(), &[(v.ty, voff), (d.ty, *doff)])?;
                        if t == DataType::Unknown {
                            DataType::Text
                        } else {
                            t
                        }
                    }
                    None => self.resolve_unknown(v.clone())?.ty,
                };
                let mut out = vec![self.coerce(v, &ty, CastContext::Implicit, voff)?];
                if let Some((o, off)) = offset {
                    out.push(self.coerce(o, &DataType::Int4, CastContext::Implicit, off)?);
                }
                if let Some((d, off)) = default {
                    out.push(self.coerce(d, &ty, CastContext::Implicit, off)?);
                }
                (out, ty)
            }
        })
    }

    /// An aggregate used as a window function: its arguments coerced as the
    /// grouped aggregate's, and its result type.
    fn window_agg_args(
        &mut self,
        call: &ast::FunctionCall,
        args: Vec<(Expr, ast::Offset)>,
        offset: ast::Offset,
    ) -> Result<(AggFunc, Vec<Expr>, DataType)> {
        let name = call.name.name.as_str();
        let func = match AggFunc::from_name(name) {
            Some(f) if call.name.schema.is_none() => f,
            _ => {
                let list: Vec<String> = args.iter().map(|(a, _)| type_text(a.ty)).collect();
                let srf = matches!(
                    name,
                    "generate_series"
                        | "unnest"
                        | "string_to_table"
                        | "regexp_matches"
                        | "regexp_split_to_table"
                );
                if srf || ScalarFunc::from_name(name).is_some() {
                    return Err(at(
                        err!(
                            WrongObjectType,
                            "OVER specified, but {name} is not a window function nor an aggregate function"
                        ),
                        offset,
                    ));
                }
                return Err(at(
                    err!(
                        UndefinedFunction,
                        "function {name}({}) does not exist",
                        list.join(", ")
                    )
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
                    offset,
                ));
            }
        };
        if call.star {
            if name != "count" {
                return Err(err!(UndefinedFunction, "function {name}() does not exist"));
            }
            return Ok((AggFunc::CountStar, Vec::new(), DataType::Int8));
        }
        if name == "count" && args.is_empty() {
            return Err(at(
                err!(
                    WrongObjectType,
                    "count(*) must be used to call a parameterless aggregate function"
                ),
                offset,
            ));
        }
        let classic = matches!(
            func,
            AggFunc::Count | AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max
        );
        if classic {
            if args.len() != 1 {
                let list: Vec<String> = args.iter().map(|(a, _)| type_text(a.ty)).collect();
                return Err(err!(
                    UndefinedFunction,
                    "function {name}({}) does not exist",
                    list.join(", ")
                ));
            }
            let mut args = args;
            let (a, _) = args.remove(0);
            let a = self.resolve_unknown(a)?;
            let ty = agg_result_type(func, &a.ty)?;
            return Ok((func, vec![a], ty));
        }
        let types: Vec<DataType> = args.iter().map(|(b, _)| b.ty).collect();
        let (want, ty) = signature(func, &types)?;
        let args = args
            .into_iter()
            .zip(&want)
            .map(|((a, off), t)| self.coerce(a, t, CastContext::Implicit, off))
            .collect::<Result<Vec<_>>>()?;
        Ok((func, args, ty))
    }
}

fn type_text(t: DataType) -> String {
    if t == DataType::Unknown {
        "unknown".into()
    } else {
        t.to_string()
    }
}

/// The offset type of `RANGE ... PRECEDING/FOLLOWING` over a key of type
/// `t` (PostgreSQL's `in_range` support functions), if any.
fn range_offset_type(t: DataType) -> Option<DataType> {
    Some(match t {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => DataType::Int8,
        DataType::Float4 | DataType::Float8 => DataType::Float8,
        DataType::Numeric(_) => DataType::Numeric(None),
        DataType::Date
        | DataType::Timestamp(_)
        | DataType::TimestampTz(_)
        | DataType::Interval
        | DataType::Time(_)
        | DataType::TimeTz(_) => DataType::Interval,
        _ => return None,
    })
}

/// Whether an offset is below zero.
fn negative(v: &Value) -> bool {
    match v {
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => v.as_i64().is_some_and(|x| x < 0),
        Value::Float4(f) => f.is_nan() || *f < 0.0,
        Value::Float8(f) => f.is_nan() || *f < 0.0,
        Value::Numeric(n) => n.is_nan() || n.is_negative(),
        Value::Interval(i) => i.months < 0 || i.days < 0 || i.micros < 0,
        _ => false,
    }
}

/// Adds `e` to the pre-projection unless an equal expression is there.
fn push_pre(plan: &mut WindowPlan, e: Expr) -> usize {
    let key = format!("{e:?}");
    if let Some(i) = plan.pre.iter().position(|p| format!("{p:?}") == key) {
        return i;
    }
    plan.pre.push(e);
    plan.pre.len() - 1
}

impl WindowPlan {
    /// The expressions the windows read, over the rows below them (for an
    /// aggregating query: to count as uses of its aggregates).
    pub fn pre_mut(&mut self) -> &mut Vec<Expr> {
        &mut self.pre
    }

    /// Step 2 of the module docs: the window nodes over `input`, with the
    /// placeholders of `exprs` rewritten to their output columns. Gives the
    /// binder back its earlier registry.
    pub fn apply(self, b: &mut Binder<'_>, input: Plan, exprs: &mut [Expr]) -> Result<Plan> {
        b.windows = self.saved;
        let width = input.fields.len();
        let mut proj: Vec<Expr> = input
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| Expr::column(i, f.ty))
            .collect();
        proj.extend(self.pre.iter().cloned());
        let mut fields = input.fields.clone();
        fields.extend(self.pre.iter().map(|e| Field {
            name: "?window?".into(),
            ty: e.ty,
        }));
        let mut plan = Plan {
            rows: input.rows,
            fields,
            node: Node::Project {
                input: Box::new(input),
                exprs: proj,
            },
        };
        // Longest sort keys first, so a later window whose keys are a
        // prefix needs no sort of its own.
        let mut order: Vec<usize> = (0..self.windows.len()).collect();
        order.sort_by_key(|&w| {
            std::cmp::Reverse(self.windows[w].partition.len() + self.windows[w].order.len())
        });
        let mut sorted: Vec<SortKey> = Vec::new();
        let mut column_of = vec![0usize; self.calls.len()];
        for w in order {
            let pw = &self.windows[w];
            let keys: Vec<SortKey> = pw
                .partition
                .iter()
                .map(|&c| SortKey {
                    column: width + c,
                    descending: false,
                    nulls_first: false,
                })
                .chain(pw.order.iter().map(|&(c, d, n)| SortKey {
                    column: width + c,
                    descending: d,
                    nulls_first: n,
                }))
                .collect();
            if !keys.is_empty() && !is_prefix(&keys, &sorted) {
                plan = Plan {
                    rows: plan.rows,
                    fields: plan.fields.clone(),
                    node: Node::Sort {
                        input: Box::new(plan),
                        keys: keys.clone(),
                    },
                };
                sorted = keys;
            }
            let mut calls = Vec::new();
            let mut fields = plan.fields.clone();
            for (j, c) in self.calls.iter().enumerate().filter(|(_, c)| c.window == w) {
                column_of[j] = fields.len();
                fields.push(Field {
                    name: c.text.clone(),
                    ty: c.ty,
                });
                calls.push(WindowCall {
                    func: c.func,
                    args: c.args.iter().map(|&a| width + a).collect(),
                    filter: c.filter.map(|f| width + f),
                    ty: c.ty,
                    text: c.text.clone(),
                });
            }
            let clause = WindowClause {
                partition: pw.partition.iter().map(|&c| width + c).collect(),
                order: pw
                    .order
                    .iter()
                    .map(|&(c, d, n)| SortKey {
                        column: width + c,
                        descending: d,
                        nulls_first: n,
                    })
                    .collect(),
                frame: pw.frame.clone(),
                calls,
            };
            plan = Plan {
                rows: plan.rows,
                fields,
                node: Node::WindowAgg {
                    input: Box::new(plan),
                    window: Box::new(clause),
                },
            };
        }
        for e in exprs.iter_mut() {
            remap_columns(e, &|c| if c >= MARK { column_of[c - MARK] } else { c });
        }
        Ok(plan)
    }
}

/// Whether rows sorted on `have` are sorted on `want`.
fn is_prefix(want: &[SortKey], have: &[SortKey]) -> bool {
    want.len() <= have.len()
        && want.iter().zip(have).all(|(a, b)| {
            a.column == b.column && a.descending == b.descending && a.nulls_first == b.nulls_first
        })
}

/// Calls `f` on the expressions of an inline window specification (for
/// [`walk`]).
pub fn walk_spec(w: &ast::WindowSpec, f: &mut dyn FnMut(&ast::Expr)) {
    w.partition_by.iter().for_each(|x| walk(x, f));
    w.order_by.iter().for_each(|o| walk(&o.expr, f));
    if let Some(frame) = &w.frame {
        for b in std::iter::once(&frame.start).chain(frame.end.as_ref()) {
            if let ast::FrameBound::Preceding(x) | ast::FrameBound::Following(x) = b {
                walk(x, f);
            }
        }
    }
}
