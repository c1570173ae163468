//! Binding expressions: AST expressions to typed [`Expr`]s over a [`Scope`].
//!
//! The rules are PostgreSQL's parse analysis for the cases heapdb supports:
//! - literals: integers are `integer` when they fit, else `bigint`, else
//!   `numeric`; other numbers are `numeric`; strings are `unknown` until
//!   context gives them a type (an operator's other side, a column, a cast),
//!   and are then converted at bind time, so bad input fails before any row
//!   is touched, with the literal's position;
//! - operators resolve through [`types::resolve_binary`] and both sides are
//!   cast to the operator's input types;
//! - in an aggregating query, an expression equal to a GROUP BY item becomes
//!   a reference to that group column, aggregate calls become references to
//!   aggregate outputs, and any other column reference is the 42803 error
//!   `column "t.x" must appear in the GROUP BY clause or be used in an
//!   aggregate function`.

use heapdb_grammar::ast;

use super::scope::Scope;
use super::{AggCall, PlanContext};
use crate::err;
use crate::error::{Error, Result};
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::func::Func;
use crate::nodes::AggOrder;
use crate::types::agg::{agg_result_type, signature, AggFunc};
use crate::types::cast::{cast_kind, common_type, CastContext};
use crate::types::funcs::numfunc::NumFunc;
use crate::types::funcs::ScalarFunc;
use crate::types::{self, BinaryOp, DataType, Numeric, Value};

/// The state of an aggregating query's binding: GROUP BY items and the
/// aggregates found so far.
#[derive(Debug, Default)]
pub struct AggState {
    /// GROUP BY expressions as written (after alias/position resolution).
    pub group_ast: Vec<ast::Expr>,
    /// The same, bound over the aggregate's input.
    pub group: Vec<Expr>,
    /// Aggregate calls found, with the AST they came from (to share equal
    /// calls).
    pub aggs: Vec<(ast::FunctionCall, AggCall)>,
    /// The aggregate's input scope.
    pub input: Scope,
}

/// Where an expression is being bound, for the rules about aggregates.
pub enum Mode<'a> {
    /// Aggregates are not allowed here; the string names the clause for
    /// the error (`WHERE`, `JOIN conditions`, ...).
    NoAgg(&'static str),
    /// Above an aggregate: references resolve to group keys and aggregates.
    Agg(&'a mut AggState),
}

/// Binds expressions for one statement.
pub struct Binder<'c> {
    /// The session running the statement.
    pub ctx: &'c mut dyn PlanContext,
    /// Common table expressions in scope, innermost last.
    pub ctes: Vec<super::select::cte::CteEntry>,
    /// How many NULL-extended sides of outer joins enclose the FROM item
    /// being planned (a recursive reference may not appear in one).
    pub nullable_sides: usize,
    /// The constructs around the FROM item being planned that a recursive
    /// reference may not appear within (a CTE of its own, INTERSECT,
    /// EXCEPT), outermost first: the error's words.
    pub recursion_barriers: Vec<&'static str>,
    /// The next SELECT planned keeps `unknown`-typed output columns (string
    /// literals, NULLs) unresolved, for its consumer to type: a set
    /// operation or INSERT. Consumed (reset) by that SELECT.
    pub keep_unknown: bool,
    /// The queries around the sublink being planned, innermost last
    /// ([`super::sublink`]).
    pub outer: Vec<super::sublink::OuterLevel>,
    /// A function body's variables: name, `Param` slot, type
    /// ([`super::userfunc`]); empty elsewhere.
    pub params: Vec<(String, usize, DataType)>,
    /// The window calls of the select list being bound ([`super::window`]).
    pub windows: super::window::WindowRegistry,
    /// Aggregates found in sublinks that belong to an enclosing query, by
    /// that query's depth ([`super::outer_agg`]).
    pub forced_aggs: Vec<(usize, ast::FunctionCall)>,
    /// An aggregate waiting for its enclosing query (depth, call) to plan
    /// itself again ([`super::outer_agg`]).
    pub pending_outer_agg: Option<(usize, ast::FunctionCall)>,
    /// The columns of the multiple-column assignment being bound
    /// (`SET (a, b) = (SELECT ...)`), by where its subquery starts: bound
    /// at its first column, handed out to the others.
    pub multiexpr: Option<(ast::Offset, Vec<Expr>)>,
    /// Set while an UPDATE's or DELETE's WHERE is bound: its correlated
    /// EXISTS sublinks record whether PostgreSQL would make them
    /// semi-joins ([`super::exists_shape`]), for the READ COMMITTED
    /// re-check.
    pub mark_semi_joins: bool,
    /// That answer for the EXISTS subplan being made.
    pub semi_join_made: bool,
}

/// Attaches `offset` to an error that has no position yet.
pub fn at(e: Error, offset: ast::Offset) -> Error {
    if e.position.is_some() {
        e
    } else {
        e.with_position(offset.0)
    }
}

/// Whether the function name is an aggregate.
pub fn is_aggregate(name: &ast::ObjectName) -> bool {
    name.schema.is_none() && AggFunc::from_name(&name.name).is_some()
}

/// Whether `e` contains an aggregate call (not looking into subqueries).
pub fn contains_aggregate(e: &ast::Expr) -> bool {
    contains_aggregate_except(e, &|_| false)
}

/// Whether `e` contains an aggregate call other than those `skip` names
/// (not looking into subqueries).
pub fn contains_aggregate_except(e: &ast::Expr, skip: &dyn Fn(&ast::FunctionCall) -> bool) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let ast::ExprKind::Function(f) = &x.kind {
            if is_aggregate(&f.name) && f.over.is_none() && !skip(f) {
                found = true;
            }
        }
    });
    found
}

/// Whether the expression holds a subquery (EXISTS, IN, scalar).
pub fn contains_subquery(e: &ast::Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if matches!(
            x.kind,
            ast::ExprKind::Exists(_)
                | ast::ExprKind::Subquery(_)
                | ast::ExprKind::InSubquery { .. }
                | ast::ExprKind::Quantified { .. }
        ) {
            found = true;
        }
    });
    found
}

/// Calls `f` on `e` and every expression inside it (not inside subqueries).
pub fn walk(e: &ast::Expr, f: &mut dyn FnMut(&ast::Expr)) {
    use ast::ExprKind as K;
    f(e);
    match &e.kind {
        K::Literal(_) | K::TypedString { .. } | K::Column(_) | K::CurrentValue(_) | K::Default => {}
        K::Exists(_) | K::Subquery(_) => {}
        K::Unary { expr, .. } | K::IsNull { expr, .. } | K::IsBool { expr, .. } => walk(expr, f),
        K::Cast { expr, .. } => walk(expr, f),
        K::Binary { left, right, .. } | K::IsDistinctFrom { left, right, .. } => {
            walk(left, f);
            walk(right, f);
        }
        K::Between {
            expr, low, high, ..
        } => {
            walk(expr, f);
            walk(low, f);
            walk(high, f);
        }
        K::InList { expr, list, .. } => {
            walk(expr, f);
            list.iter().for_each(|x| walk(x, f));
        }
        K::InSubquery { expr, .. } | K::Quantified { expr, .. } => walk(expr, f),
        K::ArraySubquery(_) => {}
        K::Array(items) => items.iter().for_each(|x| walk(x, f)),
        K::Subscript {
            expr, lower, upper, ..
        } => {
            walk(expr, f);
            for x in [lower, upper].into_iter().flatten() {
                walk(x, f);
            }
        }
        K::AnyArray { expr, array, .. } | K::LikeAny { expr, array, .. } => {
            walk(expr, f);
            walk(array, f);
        }
        K::Like {
            expr,
            pattern,
            escape,
            ..
        } => {
            walk(expr, f);
            walk(pattern, f);
            if let Some(x) = escape {
                walk(x, f);
            }
        }
        K::Case {
            operand,
            branches,
            else_result,
        } => {
            if let Some(x) = operand {
                walk(x, f);
            }
            for (c, r) in branches {
                walk(c, f);
                walk(r, f);
            }
            if let Some(x) = else_result {
                walk(x, f);
            }
        }
        K::Function(call) => {
            call.args.iter().for_each(|x| walk(x, f));
            call.order_by.iter().for_each(|o| walk(&o.expr, f));
            if let Some(x) = &call.filter {
                walk(x, f);
            }
            if let Some(w) = &call.over {
                super::window::walk_spec(w, f);
            }
        }
    }
}

/// The type an AST type name denotes.
pub fn data_type(t: &ast::DataType) -> Result<DataType> {
    use ast::DataType as A;
    Ok(match t {
        A::SmallInt => DataType::Int2,
        A::Integer => DataType::Int4,
        A::BigInt => DataType::Int8,
        A::Real => DataType::Float4,
        A::Double => DataType::Float8,
        A::Numeric { precision, scale } => match (precision, scale) {
            (None, _) => DataType::Numeric(None),
            (Some(p), s) => {
                if *p < 1 || *p > 1000 {
                    return Err(err!(
                        InvalidParameterValue,
                        "NUMERIC precision {p} must be between 1 and 1000"
                    ));
                }
                let s = s.unwrap_or(0);
                if !(-1000..=1000).contains(&s) {
                    return Err(err!(
                        InvalidParameterValue,
                        "NUMERIC scale {s} must be between -1000 and 1000"
                    ));
                }
                DataType::Numeric(Some((*p as u16, s as i16)))
            }
        },
        A::Boolean => DataType::Bool,
        A::Text => DataType::Text,
        A::Varchar(n) => {
            if *n == Some(0) {
                return Err(err!(
                    InvalidParameterValue,
                    "length for type varchar must be at least 1"
                ));
            }
            DataType::Varchar(*n)
        }
        A::Char(n) => {
            if *n == Some(0) {
                return Err(err!(
                    InvalidParameterValue,
                    "length for type char must be at least 1"
                ));
            }
            DataType::Char(n.unwrap_or(1))
        }
        A::Date => DataType::Date,
        A::Timestamp(p) => DataType::Timestamp(match p {
            Some(p) => Some(crate::types::datetime::timestamp_precision(
                *p as i64, false,
            )?),
            None => None,
        }),
        A::Interval => DataType::Interval,
        A::TimestampTz(p) => DataType::TimestampTz(match p {
            Some(p) => Some(crate::types::datetime::timestamp_precision(
                *p as i64, true,
            )?),
            None => None,
        }),
        A::Time(p) => DataType::Time(match p {
            Some(p) => Some(crate::types::datetime::time::time_precision(
                *p as i64, false,
            )?),
            None => None,
        }),
        A::TimeTz(p) => DataType::TimeTz(match p {
            Some(p) => Some(crate::types::datetime::time::time_precision(
                *p as i64, true,
            )?),
            None => None,
        }),
        A::Named(n) => match n.as_str() {
            "int2" => DataType::Int2,
            "int" | "int4" => DataType::Int4,
            "int8" => DataType::Int8,
            "float4" => DataType::Float4,
            "float8" | "float" => DataType::Float8,
            "bool" => DataType::Bool,
            "decimal" | "numeric" => DataType::Numeric(None),
            "bpchar" => DataType::Char(1),
            "varchar" => DataType::Varchar(None),
            "name" => DataType::Name,
            "bytea" => DataType::Bytea,
            "json" => DataType::Json,
            "point" => DataType::Point,
            "jsonb" => DataType::Jsonb,
            n if n.starts_with('_') && n.len() > 1 => {
                let elem = data_type(&A::Named(n[1..].to_string()))
                    .or_else(|_| DataType::from_name(&n[1..]).ok_or(()))
                    .map_err(|_| err!(UndefinedObject, "type \"{n}\" does not exist"))?;
                DataType::array_of(elem)
            }
            _ => return Err(err!(UndefinedObject, "type \"{n}\" does not exist")),
        },
        A::Array(elem) => DataType::array_of(data_type(elem)?),
    })
}

/// The value of a numeric literal, typed as PostgreSQL types it.
pub fn number_literal(text: &str) -> Result<(Value, DataType)> {
    if let Ok(i) = text.parse::<i32>() {
        return Ok((Value::Int4(i), DataType::Int4));
    }
    if let Ok(i) = text.parse::<i64>() {
        return Ok((Value::Int8(i), DataType::Int8));
    }
    let n = Numeric::parse(text)?;
    Ok((Value::numeric(n), DataType::Numeric(None)))
}

impl<'c> Binder<'c> {
    /// A binder for one statement run by `ctx`.
    pub fn new(ctx: &'c mut dyn PlanContext) -> Binder<'c> {
        Binder {
            ctx,
            ctes: Vec::new(),
            nullable_sides: 0,
            recursion_barriers: Vec::new(),
            keep_unknown: false,
            outer: Vec::new(),
            params: Vec::new(),
            windows: Default::default(),
            forced_aggs: Vec::new(),
            pending_outer_agg: None,
            multiexpr: None,
            mark_semi_joins: false,
            semi_join_made: false,
        }
    }
}

impl Binder<'_> {
    /// Converts `e` to type `to`: unknown literals are parsed now; other
    /// types get a cast node when `cast_kind` allows it in `ctx`.
    pub fn coerce(
        &self,
        e: Expr,
        to: &DataType,
        ctx: CastContext,
        offset: ast::Offset,
    ) -> Result<Expr> {
        if e.ty == *to {
            return Ok(e);
        }
        if e.ty == DataType::Unknown {
            if let ExprKind::Const(v) = &e.kind {
                let value = match v {
                    Value::Null => Value::Null,
                    Value::Text(s) => {
                        // Strings parse as text; the length rule of the target
                        // (varchar(n), char(n)) is the cast's.
                        let base = if to.is_string() {
                            DataType::Text
                        } else {
                            to.without_typmod()
                        };
                        let parsed =
                            types::parse_value_at(s, &base, self.ctx.statement_timestamp())
                                .map_err(|err| at(err, offset))?;
                        // Typmod rules (char padding, varchar length) apply
                        // too; like PostgreSQL's length coercion, which runs
                        // after the input function, their errors (`numeric
                        // field overflow`) carry no position.
                        types::cast_from(&parsed, &base, to, ctx)?
                    }
                    other => other.clone(),
                };
                return Ok(Expr::constant(value, *to));
            }
        }
        match cast_kind(&e.ty, to) {
            // A constant is cast once, here (PostgreSQL folds it at plan
            // time too, and prints `'10'::double precision`).
            Some(k) if k <= ctx && e.as_const().is_some() => {
                let v = e.as_const().expect("checked");
                // A failing cast of a value is left to run time, which
                // reports it without a position, as PostgreSQL reports it
                // from its constant folding.
                Ok(match types::cast_from(v, &e.ty, to, ctx) {
                    Ok(value) => Expr::constant(value, *to),
                    Err(_) => Expr {
                        kind: ExprKind::Cast(Box::new(e), ctx),
                        ty: *to,
                    },
                })
            }
            Some(k) if k <= ctx => Ok(Expr {
                kind: ExprKind::Cast(Box::new(e), ctx),
                ty: *to,
            }),
            Some(_) | None if ctx == CastContext::Explicit => Err(at(
                err!(CannotCoerce, "cannot cast type {} to {to}", e.ty),
                offset,
            )),
            _ => Err(at(
                err!(
                    DatatypeMismatch,
                    "argument of type {} cannot be converted to {to}",
                    e.ty
                ),
                offset,
            )),
        }
    }

    /// Gives an `unknown` expression its default type, `text`.
    pub fn resolve_unknown(&self, e: Expr) -> Result<Expr> {
        if e.ty == DataType::Unknown {
            self.coerce(e, &DataType::Text, CastContext::Implicit, ast::Offset(0))
        } else {
            Ok(e)
        }
    }

    /// The common type of `items` as PostgreSQL's `select_common_type`:
    /// `unknown` inputs adopt the others' type; all-unknown is `text`.
    /// `what` names the construct in the error (`CASE`, `UNION`, ...).
    pub fn unify(&self, what: &str, items: &[(DataType, ast::Offset)]) -> Result<DataType> {
        let mut ty: Option<DataType> = None;
        for (t, off) in items {
            if *t == DataType::Unknown {
                continue;
            }
            ty = Some(match ty {
                None => *t,
                // Strings: every string type casts implicitly to every
                // other, so PostgreSQL's select_common_type keeps the first
                // one (CASE lists its ELSE first): `case ... then text else
                // char(2) end` is bpchar, compared without trailing blanks.
                Some(cur)
                    if cur.is_string()
                        && t.is_string()
                        && std::mem::discriminant(&cur) != std::mem::discriminant(t) =>
                {
                    cur
                }
                Some(cur) => common_type(&cur, t).ok_or_else(|| {
                    at(
                        err!(
                            DatatypeMismatch,
                            "{what} types {cur} and {t} cannot be matched"
                        ),
                        *off,
                    )
                })?,
            });
        }
        let Some(ty) = ty else {
            return Ok(DataType::Text);
        };
        // select_common_typmod: the type modifier survives only when every
        // input is of exactly that type (an unknown literal or a text input
        // makes `varchar(20)` plain `varchar`, whose cast from text is a
        // relabel). `char(n)` keeps its length: heapdb has no unconstrained
        // bpchar.
        if items.iter().all(|(t, _)| *t == ty) {
            return Ok(ty);
        }
        Ok(match ty {
            DataType::Varchar(_) => DataType::Varchar(None),
            DataType::Numeric(_) => DataType::Numeric(None),
            other => other,
        })
    }

    /// Binds `e` and requires a boolean result (WHERE, HAVING, ON, AND...).
    pub fn bind_condition(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        mode: &mut Mode,
        clause: &str,
    ) -> Result<Expr> {
        let b = super::folded::condition(clause, || self.bind_expr(e, scope, mode))?;
        self.to_bool(b, e.offset, clause)
    }

    fn to_bool(&self, b: Expr, offset: ast::Offset, clause: &str) -> Result<Expr> {
        match b.ty {
            DataType::Bool => Ok(b),
            DataType::Unknown => self.coerce(b, &DataType::Bool, CastContext::Implicit, offset),
            other => Err(at(
                err!(
                    DatatypeMismatch,
                    "argument of {clause} must be type boolean, not type {other}"
                ),
                offset,
            )),
        }
    }

    /// The group key `e` is, compared as PostgreSQL does, after binding
    /// (`t.a` and `a` are one column; `a+1` matches `a + 1`), when its
    /// spelling matched none.
    fn group_key_of(&mut self, e: &ast::Expr, state: &AggState) -> Option<usize> {
        match &e.kind {
            ast::ExprKind::Column(c) => {
                let (i, _) = state.input.resolve(c.table.as_deref(), &c.column).ok()?;
                state
                    .group
                    .iter()
                    .position(|g| matches!(g.kind, ExprKind::Column(j) if j == i))
            }
            ast::ExprKind::Literal(_) => None,
            _ => {
                // Only keys that are expressions need the general match.
                if state
                    .group
                    .iter()
                    .all(|g| matches!(g.kind, ExprKind::Column(_)))
                    || contains_aggregate(e)
                    || contains_subquery(e)
                {
                    return None;
                }
                let b = self
                    .bind_expr(e, &state.input, &mut Mode::NoAgg("GROUP BY"))
                    .ok()?;
                let want = format!("{b:?}");
                state.group.iter().position(|g| format!("{g:?}") == want)
            }
        }
    }

    /// Binds one expression over `scope`.
    pub fn bind_expr(&mut self, e: &ast::Expr, scope: &Scope, mode: &mut Mode) -> Result<Expr> {
        if let Mode::Agg(state) = mode {
            if let Some(i) = state.group_ast.iter().position(|g| g == e) {
                let ty = state.group[i].ty;
                return Ok(Expr::column(i, ty));
            }
            if let Some(k) = self.group_key_of(e, state) {
                return Ok(Expr::column(k, state.group[k].ty));
            }
        }
        let r = self.bind_inner(e, scope, mode);
        r.map_err(|err| at(err, e.offset))
    }

    fn bind_inner(&mut self, e: &ast::Expr, scope: &Scope, mode: &mut Mode) -> Result<Expr> {
        use ast::ExprKind as K;
        match &e.kind {
            K::Literal(lit) => Ok(match lit {
                ast::Literal::Number(text) => {
                    let (v, ty) = number_literal(text)?;
                    Expr::constant(v, ty)
                }
                ast::Literal::String(s) => Expr::constant(Value::text(s), DataType::Unknown),
                ast::Literal::Boolean(b) => Expr::constant(Value::Bool(*b), DataType::Bool),
                ast::Literal::Null => Expr::constant(Value::Null, DataType::Unknown),
            }),
            K::TypedString {
                data_type: t,
                value,
                fields,
                precision,
            } if *t == ast::DataType::Interval && (fields.is_some() || precision.is_some()) => {
                use crate::types::datetime::interval::{parse_interval_fields, Field};
                let field = |f: &ast::IntervalField| match f {
                    ast::IntervalField::Year => Field::Year,
                    ast::IntervalField::Month => Field::Month,
                    ast::IntervalField::Day => Field::Day,
                    ast::IntervalField::Hour => Field::Hour,
                    ast::IntervalField::Minute => Field::Minute,
                    ast::IntervalField::Second => Field::Second,
                };
                let range = fields.as_ref().map(|(a, b)| (field(a), field(b)));
                let iv = parse_interval_fields(value, range, *precision)
                    .map_err(|err| at(err, e.offset))?;
                Ok(Expr::constant(Value::Interval(iv), DataType::Interval))
            }
            K::TypedString {
                data_type: t,
                value,
                ..
            } => {
                let ty = data_type(t)?;
                let lit = Expr::constant(Value::text(value), DataType::Unknown);
                self.coerce(lit, &ty, CastContext::Explicit, e.offset)
            }
            K::Column(c) => self.bind_column(c, scope, mode),
            K::Unary { op, expr } => self.bind_unary(*op, expr, scope, mode),
            K::Binary { op, left, right } => {
                self.bind_binary(*op, left, right, scope, mode, e.offset)
            }
            K::IsNull { .. } | K::IsBool { .. } | K::IsDistinctFrom { .. } | K::Between { .. } => {
                self.bind_test(e, scope, mode)
            }
            K::InList {
                expr,
                list,
                negated,
            } => self.bind_in_list(expr, list, *negated, scope, mode),
            K::InSubquery {
                expr,
                query,
                negated,
            } => self.bind_in_subquery(expr, query, *negated, scope, mode),
            K::Quantified {
                expr,
                op,
                all,
                query,
            } => self.bind_quantified(expr, *op, *all, query, scope, mode),
            K::Like {
                expr,
                pattern,
                escape,
                negated,
                case_insensitive,
            } => self.bind_like(
                expr,
                pattern,
                escape.as_deref(),
                [*negated, *case_insensitive],
                scope,
                mode,
                e.offset,
            ),
            K::Exists(query) => self.bind_exists(query, scope, mode),
            K::Subquery(query) => self.bind_scalar_subquery(query, scope, mode),
            K::Case {
                operand,
                branches,
                else_result,
            } => self.bind_case(
                operand.as_deref(),
                branches,
                else_result.as_deref(),
                scope,
                mode,
            ),
            K::Cast { expr, data_type: t } => self.bind_cast(expr, t, scope, mode),
            K::Function(call) => self.bind_function(call, scope, mode, e.offset),
            K::Array(items) => self.bind_array(items, scope, mode),
            K::ArraySubquery(query) => self.bind_array_subquery(query, scope, mode),
            K::Subscript {
                expr,
                lower,
                upper,
                slice,
            } => self.bind_subscript(
                expr,
                lower.as_deref(),
                upper.as_deref(),
                *slice,
                scope,
                mode,
            ),
            K::AnyArray {
                expr,
                op,
                all,
                array,
            } => self.bind_any_array(expr, *op, *all, array, scope, mode, e.offset),
            K::LikeAny {
                expr,
                array,
                all,
                negated,
                case_insensitive,
            } => self.bind_like_any(
                expr,
                array,
                [*all, *negated, *case_insensitive],
                scope,
                mode,
            ),
            K::CurrentValue(v) => self.current_value(v),
            K::Default => Err(err!(SyntaxError, "DEFAULT is not allowed in this context")),
        }
    }

    /// The tests `IS [NOT] NULL`, `IS [NOT] TRUE/FALSE/UNKNOWN`,
    /// `IS [NOT] DISTINCT FROM` and `[NOT] BETWEEN`.
    fn bind_test(&mut self, e: &ast::Expr, scope: &Scope, mode: &mut Mode) -> Result<Expr> {
        use ast::ExprKind as K;
        match &e.kind {
            K::IsNull { expr, negated } => {
                let x = self.bind_expr(expr, scope, mode)?;
                Ok(Expr {
                    kind: ExprKind::IsNull(Box::new(x), *negated),
                    ty: DataType::Bool,
                })
            }
            K::IsBool {
                expr,
                value,
                negated,
            } => {
                let x = self.bind_expr(expr, scope, mode)?;
                let x = self.to_bool(x, expr.offset, "IS")?;
                let kind = match value {
                    Some(v) => ExprKind::IsBool(Box::new(x), *v, *negated),
                    None => ExprKind::IsNull(Box::new(x), *negated),
                };
                Ok(Expr {
                    kind,
                    ty: DataType::Bool,
                })
            }
            K::IsDistinctFrom {
                left,
                right,
                negated,
            } => {
                let (l, r) = self.bind_comparable(left, right, scope, mode, e.offset)?;
                // `x IS [NOT] DISTINCT FROM NULL` is a NULL test, as
                // PostgreSQL simplifies it.
                let kind = match (l.as_const(), r.as_const()) {
                    (_, Some(Value::Null)) => ExprKind::IsNull(Box::new(l), !*negated),
                    (Some(Value::Null), _) => ExprKind::IsNull(Box::new(r), !*negated),
                    _ => ExprKind::IsDistinct(Box::new(l), Box::new(r), *negated),
                };
                Ok(Expr {
                    kind,
                    ty: DataType::Bool,
                })
            }
            K::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let ge = self.bind_binary(ast::BinaryOp::GtEq, expr, low, scope, mode, e.offset)?;
                let le =
                    self.bind_binary(ast::BinaryOp::LtEq, expr, high, scope, mode, e.offset)?;
                let both = Expr {
                    kind: ExprKind::And(Box::new(ge), Box::new(le)),
                    ty: DataType::Bool,
                };
                Ok(if *negated {
                    super::quals::negate(both)
                } else {
                    both
                })
            }
            _ => Err(err!(InternalError, "bind_test of another expression")),
        }
    }

    /// `+x`, `-x`, `NOT x`.
    fn bind_unary(
        &mut self,
        op: ast::UnaryOp,
        expr: &ast::Expr,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let x = self.bind_expr(expr, scope, mode)?;
        let num_op = match op {
            ast::UnaryOp::BitNot => Some(NumFunc::BitNot),
            ast::UnaryOp::Abs => Some(NumFunc::AbsOp),
            ast::UnaryOp::SquareRoot => Some(NumFunc::SqrtOp),
            ast::UnaryOp::CubeRoot => Some(NumFunc::Cbrt),
            _ => None,
        };
        if let Some(f) = num_op {
            return self.bind_num_op(f, vec![(x, expr.offset)], expr.offset);
        }
        match op {
            ast::UnaryOp::BitNot
            | ast::UnaryOp::Abs
            | ast::UnaryOp::SquareRoot
            | ast::UnaryOp::CubeRoot => unreachable!("bound as functions above"),
            ast::UnaryOp::Not => {
                let x = self.to_bool(x, expr.offset, "NOT")?;
                Ok(super::quals::negate(x))
            }
            ast::UnaryOp::Plus | ast::UnaryOp::Minus => {
                let x = if x.ty == DataType::Unknown {
                    self.coerce(x, &DataType::Float8, CastContext::Implicit, expr.offset)?
                } else {
                    x
                };
                if !(x.ty.is_numeric() || x.ty == DataType::Interval) {
                    let sym = if op == ast::UnaryOp::Minus { "-" } else { "+" };
                    return Err(err!(
                        UndefinedFunction,
                        "operator does not exist: {sym} {}",
                        x.ty
                    )
                    .with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast."));
                }
                if op == ast::UnaryOp::Plus {
                    return Ok(x);
                }
                let ty = x.ty.without_typmod();
                Ok(Expr {
                    kind: ExprKind::Neg(Box::new(x)),
                    ty,
                })
            }
        }
    }

    /// `x [NOT] IN (list)`: the items compared with `=` at one type.
    fn bind_in_list(
        &mut self,
        expr: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let x = self.bind_expr(expr, scope, mode)?;
        let mut items = Vec::with_capacity(list.len());
        for item in list {
            items.push((self.bind_expr(item, scope, mode)?, item.offset));
        }
        let mut all = vec![(x.ty, expr.offset)];
        all.extend(items.iter().map(|(i, off)| (i.ty, *off)));
        // The items compare with `=` as binary comparisons resolve it:
        // varchar as text, a literal beside char(n) as bpchar.
        let ty = match self.unify("IN", &all)? {
            DataType::Varchar(_) => DataType::Text,
            t => t,
        };
        let x = self.coerce(x, &ty, CastContext::Implicit, expr.offset)?;
        let items = items
            .into_iter()
            .map(|(i, off)| {
                let to = match (ty, i.ty) {
                    (DataType::Char(_), DataType::Unknown) => DataType::Char(0),
                    _ => ty,
                };
                self.coerce(i, &to, CastContext::Implicit, off)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Expr {
            kind: ExprKind::InList(Box::new(x), items, negated),
            ty: DataType::Bool,
        })
    }

    /// `x [NOT] LIKE | ILIKE pattern [ESCAPE e]`.
    #[allow(clippy::too_many_arguments)]
    fn bind_like(
        &mut self,
        expr: &ast::Expr,
        pattern: &ast::Expr,
        escape: Option<&ast::Expr>,
        [negated, case_insensitive]: [bool; 2],
        scope: &Scope,
        mode: &mut Mode,
        offset: ast::Offset,
    ) -> Result<Expr> {
        let x = self.bind_expr(expr, scope, mode)?;
        let mut p = self.bind_expr(pattern, scope, mode)?;
        // A non-literal escape (`ESCAPE '$'::bytea`) may make it bytea LIKE.
        let esc = match escape {
            Some(e) if !matches!(e.kind, ast::ExprKind::Literal(ast::Literal::String(_))) => {
                Some((self.bind_expr(e, scope, mode)?, e.offset))
            }
            _ => None,
        };
        if [&x.ty, &p.ty].contains(&&DataType::Bytea)
            || esc.as_ref().is_some_and(|(e, _)| e.ty == DataType::Bytea)
        {
            let esc = match (esc, escape) {
                (Some(e), _) => Some(e),
                (None, Some(e)) => Some((self.bind_expr(e, scope, mode)?, e.offset)),
                (None, None) => None,
            };
            let ops = [(x, expr.offset), (p, pattern.offset)];
            return self.bind_bytea_like(ops, esc, [negated, case_insensitive], offset);
        }
        if let Some(esc) = escape {
            // Rewrite the pattern to the default backslash escape.
            let esc_text = match &esc.kind {
                ast::ExprKind::Literal(ast::Literal::String(s)) => s.clone(),
                _ => {
                    return Err(err!(
                        FeatureNotSupported,
                        "LIKE ... ESCAPE takes a string literal"
                    ))
                }
            };
            let Some(Value::Text(pt)) = p.as_const().cloned() else {
                return Err(err!(
                    FeatureNotSupported,
                    "LIKE ... ESCAPE needs a constant pattern"
                ));
            };
            let mut chars = esc_text.chars();
            let esc_char = chars.next();
            if chars.next().is_some() {
                return Err(err!(InvalidParameterValue, "invalid escape string")
                    .with_hint("Escape string must be empty or one character."));
            }
            p = Expr::constant(
                Value::text(&rewrite_escape(&pt, esc_char)),
                DataType::Unknown,
            );
        }
        let x = self.to_text_operand(x, expr.offset, "~~")?;
        let p = self.to_text_operand(p, pattern.offset, "~~")?;
        Ok(Expr {
            kind: ExprKind::Like(Box::new(x), Box::new(p), case_insensitive, negated),
            ty: DataType::Bool,
        })
    }

    /// `CAST(x AS t)` / `x::t`.
    fn bind_cast(
        &mut self,
        expr: &ast::Expr,
        t: &ast::DataType,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let (ty, domain) = self.resolve_type(t)?;
        if let Some(d) = domain {
            let x = self.bind_cast_to(expr, &ty, scope, mode)?;
            return self.coerce_to_domain(x, &d);
        }
        self.bind_cast_to(expr, &ty, scope, mode)
    }

    /// `expr::ty`, `ty` a type other than a domain.
    fn bind_cast_to(
        &mut self,
        expr: &ast::Expr,
        ty: &DataType,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let ty = *ty;
        if let Some(e) = self.empty_array_cast(expr, &ty) {
            return Ok(e);
        }
        let x = self.bind_expr(expr, scope, mode)?;
        if x.ty == ty {
            // A cast to the same type with another typmod still
            // applies the typmod (varchar(3), numeric(5,2)).
            if x.ty.without_typmod() != x.ty || ty.without_typmod() != ty {
                return Ok(Expr {
                    kind: ExprKind::Cast(Box::new(x), CastContext::Explicit),
                    ty,
                });
            }
            return Ok(x);
        }
        if x.ty.without_typmod() == ty.without_typmod() && x.ty != DataType::Unknown {
            return Ok(Expr {
                kind: ExprKind::Cast(Box::new(x), CastContext::Explicit),
                ty,
            });
        }
        self.coerce(x, &ty, CastContext::Explicit, expr.offset)
    }

    /// `CURRENT_TIMESTAMP`, `CURRENT_DATE`, `CURRENT_USER`, ...
    fn current_value(&self, v: &ast::CurrentValue) -> Result<Expr> {
        let now = self.ctx.statement_timestamp();
        Ok(match v {
            ast::CurrentValue::CurrentTimestamp => {
                Expr::constant(Value::TimestampTz(now), DataType::TimestampTz(None))
            }
            ast::CurrentValue::LocalTimestamp => Expr::constant(
                Value::Timestamp(crate::types::datetime::zone::to_local(now)),
                DataType::Timestamp(None),
            ),
            ast::CurrentValue::CurrentDate => Expr::constant(
                Value::Date(
                    crate::types::datetime::zone::to_local(now).div_euclid(86_400_000_000) as i32,
                ),
                DataType::Date,
            ),
            ast::CurrentValue::CurrentUser | ast::CurrentValue::SessionUser => {
                Expr::constant(Value::text("heapdb"), DataType::Text)
            }
            ast::CurrentValue::CurrentTime => {
                match crate::types::datetime::time::timestamptz_to_timetz(now) {
                    Some((t, east)) => {
                        Expr::constant(Value::TimeTz(t, east), DataType::TimeTz(None))
                    }
                    None => Expr::constant(Value::Null, DataType::TimeTz(None)),
                }
            }
            ast::CurrentValue::LocalTime => Expr::constant(
                crate::types::datetime::time::timestamptz_to_time(now)
                    .map_or(Value::Null, Value::Time),
                DataType::Time(None),
            ),
        })
    }

    fn to_text_operand(&self, x: Expr, offset: ast::Offset, op: &str) -> Result<Expr> {
        if x.ty.is_string() || x.ty == DataType::Unknown {
            self.coerce(x, &DataType::Text, CastContext::Implicit, offset)
        } else {
            Err(at(
                err!(UndefinedFunction, "operator does not exist: {} {op} unknown", x.ty)
                    .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."),
                offset,
            ))
        }
    }

    /// Binds two expressions and casts them to their common type.
    fn bind_comparable(
        &mut self,
        left: &ast::Expr,
        right: &ast::Expr,
        scope: &Scope,
        mode: &mut Mode,
        offset: ast::Offset,
    ) -> Result<(Expr, Expr)> {
        let l = self.bind_expr(left, scope, mode)?;
        let r = self.bind_expr(right, scope, mode)?;
        let (lt, rt, _) = types::resolve_binary(BinaryOp::Eq, &l.ty, &r.ty).ok_or_else(|| {
            at(
                types::ops::operator_error(BinaryOp::Eq, &l.ty, &r.ty),
                offset,
            )
        })?;
        let l = self.coerce(l, &lt, CastContext::Implicit, left.offset)?;
        let r = self.coerce(r, &rt, CastContext::Implicit, right.offset)?;
        Ok((l, r))
    }

    fn bind_binary(
        &mut self,
        op: ast::BinaryOp,
        left: &ast::Expr,
        right: &ast::Expr,
        scope: &Scope,
        mode: &mut Mode,
        offset: ast::Offset,
    ) -> Result<Expr> {
        use ast::BinaryOp as A;
        if matches!(op, A::And | A::Or) {
            let name = if op == A::And { "AND" } else { "OR" };
            let l = self.bind_expr(left, scope, mode)?;
            let l = self.to_bool(l, left.offset, name)?;
            let r = self.bind_expr(right, scope, mode)?;
            let r = self.to_bool(r, right.offset, name)?;
            let kind = if op == A::And {
                ExprKind::And(Box::new(l), Box::new(r))
            } else {
                ExprKind::Or(Box::new(l), Box::new(r))
            };
            return Ok(Expr {
                kind,
                ty: DataType::Bool,
            });
        }
        let num_op = match op {
            A::ShiftLeft => Some(NumFunc::ShiftLeft),
            A::ShiftRight => Some(NumFunc::ShiftRight),
            A::BitAnd => Some(NumFunc::BitAnd),
            A::BitOr => Some(NumFunc::BitOr),
            A::BitXor => Some(NumFunc::BitXor),
            _ => None,
        };
        if let Some(f) = num_op {
            let l = self.bind_expr(left, scope, mode)?;
            let r = self.bind_expr(right, scope, mode)?;
            return self.bind_num_op(f, vec![(l, left.offset), (r, right.offset)], offset);
        }
        if let Some((icase, negated)) = like_op(op) {
            return self.bind_like(left, right, None, [negated, icase], scope, mode, offset);
        }
        if let Some((icase, negated)) = regex_op(op) {
            let l = self.bind_expr(left, scope, mode)?;
            let r = self.bind_expr(right, scope, mode)?;
            return self.bind_regex_op(
                op,
                icase,
                negated,
                (l, left.offset),
                (r, right.offset),
                offset,
            );
        }
        if let Some(jop) = json_op(op) {
            let l = self.bind_expr(left, scope, mode)?;
            let r = self.bind_expr(right, scope, mode)?;
            return self.bind_json_op(jop, (l, left.offset), (r, right.offset), offset);
        }
        let bop = match op {
            A::Plus => BinaryOp::Add,
            A::Minus => BinaryOp::Sub,
            A::Multiply => BinaryOp::Mul,
            A::Divide => BinaryOp::Div,
            A::Modulo => BinaryOp::Mod,
            A::Exponent => BinaryOp::Pow,
            A::Concat => BinaryOp::Concat,
            A::Eq => BinaryOp::Eq,
            A::NotEq => BinaryOp::NotEq,
            A::Lt => BinaryOp::Lt,
            A::LtEq => BinaryOp::LtEq,
            A::Gt => BinaryOp::Gt,
            A::GtEq => BinaryOp::GtEq,
            A::And | A::Or => unreachable!("handled above"),
            A::ShiftLeft | A::ShiftRight | A::BitAnd | A::BitOr | A::BitXor => {
                unreachable!("bound as functions above")
            }
            _ => unreachable!("JSON operators are bound above"),
        };
        let mut l = self.bind_expr(left, scope, mode)?;
        let mut r = self.bind_expr(right, scope, mode)?;
        let jsonb_op = match bop {
            BinaryOp::Concat => Some(types::json::JsonOp::Concat),
            BinaryOp::Sub => Some(types::json::JsonOp::Minus),
            _ => None,
        };
        if let Some(jop) = jsonb_op.filter(|_| l.ty == DataType::Jsonb || r.ty == DataType::Jsonb) {
            if let Some(e) = self.try_json_op(jop, (&l, left.offset), (&r, right.offset), offset)? {
                return Ok(e);
            }
        }
        if bop == BinaryOp::Concat {
            match self.bind_array_concat(l, r, (left.offset, right.offset), offset)? {
                Ok(e) => return Ok(e),
                Err((l2, r2)) => (l, r) = (l2, r2),
            }
        }
        let Some((lt, rt, ty)) = types::resolve_binary(bop, &l.ty, &r.ty) else {
            let sym = op.to_string();
            if let Some(e) =
                self.try_user_operator(&sym, Some((&l, left.offset)), (&r, right.offset))?
            {
                return Ok(e);
            }
            return Err(at(types::ops::operator_error(bop, &l.ty, &r.ty), offset));
        };
        // `||` takes any type beside a string (PostgreSQL's anytextcat): the
        // other side becomes text through its output function.
        let ctx_for = |e: &Expr| {
            if bop == BinaryOp::Concat && !(e.ty.is_string() || e.ty == DataType::Unknown) {
                CastContext::Explicit
            } else {
                CastContext::Implicit
            }
        };
        let (lc, rc) = (ctx_for(&l), ctx_for(&r));
        let l = self.coerce(l, &lt, lc, left.offset)?;
        let r = self.coerce(r, &rt, rc, right.offset)?;
        Ok(Expr {
            kind: ExprKind::Binary(bop, Box::new(l), Box::new(r)),
            ty,
        })
    }

    /// `~ ~* !~ !~*` over strings, evaluated as a function; a user's
    /// operator of that name over other types.
    fn bind_regex_op(
        &mut self,
        op: ast::BinaryOp,
        icase: bool,
        negated: bool,
        l: (Expr, ast::Offset),
        r: (Expr, ast::Offset),
        offset: ast::Offset,
    ) -> Result<Expr> {
        let stringy = |e: &Expr| e.ty.is_string() || e.ty == DataType::Unknown;
        if !(stringy(&l.0) && stringy(&r.0)) {
            let sym = op.to_string();
            if let Some(e) = self.try_user_operator(&sym, Some((&l.0, l.1)), (&r.0, r.1))? {
                return Ok(e);
            }
            return Err(at(
                err!(
                    UndefinedFunction,
                    "operator does not exist: {} {sym} {}",
                    l.0.ty,
                    r.0.ty
                )
                .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."),
                offset,
            ));
        }
        let args = vec![
            self.coerce(l.0, &DataType::Text, CastContext::Implicit, l.1)?,
            self.coerce(r.0, &DataType::Text, CastContext::Implicit, r.1)?,
        ];
        let f =
            types::funcs::ScalarFunc::Regexp(types::funcs::regexp::RegexpFunc::Op(icase, negated));
        Ok(Expr {
            kind: ExprKind::Func(Func(f), args),
            ty: DataType::Bool,
        })
    }

    /// A JSON operator (`->`, `@>`, `?`, ...), evaluated as a function.
    fn bind_json_op(
        &mut self,
        op: types::json::JsonOp,
        l: (Expr, ast::Offset),
        r: (Expr, ast::Offset),
        offset: ast::Offset,
    ) -> Result<Expr> {
        match self.try_json_op(op, (&l.0, l.1), (&r.0, r.1), offset)? {
            Some(e) => Ok(e),
            None => Err(at(
                err!(
                    UndefinedFunction,
                    "operator does not exist: {} {} {}",
                    l.0.ty,
                    op.symbol(),
                    r.0.ty
                )
                .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."),
                offset,
            )),
        }
    }

    /// Binds `l op r` as the `jsonb` operator if one takes those types.
    fn try_json_op(
        &mut self,
        op: types::json::JsonOp,
        l: (&Expr, ast::Offset),
        r: (&Expr, ast::Offset),
        offset: ast::Offset,
    ) -> Result<Option<Expr>> {
        let Some(resolved) =
            types::json::resolve_operator(op, &l.0.ty, &r.0.ty).map_err(|e| at(e, offset))?
        else {
            return Ok(None);
        };
        let args = vec![
            self.coerce(
                l.0.clone(),
                &resolved.arg_types[0],
                CastContext::Implicit,
                l.1,
            )?,
            self.coerce(
                r.0.clone(),
                &resolved.arg_types[1],
                CastContext::Implicit,
                r.1,
            )?,
        ];
        Ok(Some(Expr {
            kind: ExprKind::Func(Func(resolved.func), args),
            ty: resolved.result,
        }))
    }

    /// An operator heapdb evaluates as a number function (`<<`, `&`, `@`,
    /// `|/`, ...): its operands cast to the operator's argument types.
    fn bind_num_op(
        &mut self,
        f: NumFunc,
        args: Vec<(Expr, ast::Offset)>,
        offset: ast::Offset,
    ) -> Result<Expr> {
        let types_in: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let resolved = f.resolve(&types_in).map_err(|e| at(e, offset))?;
        let args = args
            .into_iter()
            .zip(&resolved.arg_types)
            .map(|((a, off), t)| self.coerce(a, t, CastContext::Implicit, off))
            .collect::<Result<Vec<_>>>()?;
        Ok(Expr {
            kind: ExprKind::Func(Func(resolved.func), args),
            ty: resolved.result,
        })
    }

    fn bind_case(
        &mut self,
        operand: Option<&ast::Expr>,
        branches: &[(ast::Expr, ast::Expr)],
        else_result: Option<&ast::Expr>,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let mut arms = Vec::with_capacity(branches.len());
        for (cond, result) in branches {
            let c = match operand {
                Some(op) => {
                    self.bind_binary(ast::BinaryOp::Eq, op, cond, scope, mode, cond.offset)?
                }
                None => self.bind_condition(cond, scope, mode, "CASE/WHEN")?,
            };
            let r = self.bind_expr(result, scope, mode)?;
            arms.push((c, r, leftmost(result)));
        }
        let otherwise = match else_result {
            Some(e) => Some((self.bind_expr(e, scope, mode)?, leftmost(e))),
            None => None,
        };
        let mut all: Vec<(DataType, ast::Offset)> =
            otherwise.iter().map(|(e, off)| (e.ty, *off)).collect();
        all.extend(arms.iter().map(|a| (a.1.ty, a.2)));
        let ty = self.unify("CASE", &all)?;
        let arms = arms
            .into_iter()
            .map(|(c, r, off)| Ok((c, self.coerce(r, &ty, CastContext::Implicit, off)?)))
            .collect::<Result<Vec<_>>>()?;
        let otherwise = match otherwise {
            Some((e, off)) => Some(Box::new(self.coerce(e, &ty, CastContext::Implicit, off)?)),
            None => None,
        };
        Ok(Expr {
            kind: ExprKind::Case(arms, otherwise),
            ty,
        })
    }

    fn bind_function(
        &mut self,
        call: &ast::FunctionCall,
        scope: &Scope,
        mode: &mut Mode,
        offset: ast::Offset,
    ) -> Result<Expr> {
        let name = call.name.name.as_str();
        if let Some(window) = super::window::bind_hook(self, call, mode) {
            return window;
        }
        if is_aggregate(&call.name) {
            return self
                .bind_aggregate(call, scope, mode)
                .map_err(|e| at(e, offset));
        }
        if call.star || call.distinct || call.filter.is_some() || !call.order_by.is_empty() {
            return Err(err!(
                WrongObjectType,
                "{} specified, but {name} is not an aggregate function",
                if call.star {
                    format!("{name}(*)")
                } else if call.distinct {
                    "DISTINCT".into()
                } else if !call.order_by.is_empty() {
                    "ORDER BY".into()
                } else {
                    "FILTER".into()
                }
            ));
        }
        if super::seqcall::is_sequence_function(name) && call.arg_names.is_empty() {
            return self.bind_sequence_call(name, call, scope, mode);
        }
        let mut args = Vec::with_capacity(call.args.len());
        for a in &call.args {
            args.push((self.bind_expr(a, scope, mode)?, leftmost(a)));
        }
        if !call.arg_names.is_empty() {
            args = named_arguments(name, args, &call.arg_names)?;
        }
        if call.variadic {
            return self.bind_variadic(name, args);
        }
        match name {
            "coalesce" | "greatest" | "least" => {
                let all: Vec<(DataType, ast::Offset)> =
                    args.iter().map(|(a, off)| (a.ty, *off)).collect();
                let ty = self.unify(&name.to_uppercase(), &all)?;
                let items = args
                    .into_iter()
                    .map(|(a, off)| self.coerce(a, &ty, CastContext::Implicit, off))
                    .collect::<Result<Vec<_>>>()?;
                if name == "coalesce" {
                    return Ok(Expr {
                        kind: ExprKind::Coalesce(items),
                        ty,
                    });
                }
                // greatest/least: fold into CASE-free comparisons per row.
                return Ok(Expr {
                    kind: ExprKind::Extreme(items, name == "greatest"),
                    ty,
                });
            }
            "nullif" if args.len() == 2 => {
                let (a, b) = (&call.args[0], &call.args[1]);
                let eq = self.bind_binary(ast::BinaryOp::Eq, a, b, scope, mode, offset)?;
                // The result is the `=` operator's left input: `nullif(1,
                // 1.5)` is numeric, `nullif(varchar, 'x')` text.
                let first = match &eq.kind {
                    ExprKind::Binary(_, l, _) => (**l).clone(),
                    _ => self.resolve_unknown(args.swap_remove(0).0)?,
                };
                let ty = first.ty;
                return Ok(Expr {
                    kind: ExprKind::Case(
                        vec![(eq, Expr::constant(Value::Null, ty))],
                        Some(Box::new(first)),
                    ),
                    ty,
                });
            }
            // PostgreSQL's number types have functions of their own names
            // that are their casts: `float8(x)` is `x::float8`.
            "int2" | "int4" | "int8" | "float4" | "float8" | "numeric" if args.len() == 1 => {
                let ty = match name {
                    "int2" => DataType::Int2,
                    "int4" => DataType::Int4,
                    "int8" => DataType::Int8,
                    "float4" => DataType::Float4,
                    "float8" => DataType::Float8,
                    _ => DataType::Numeric(None),
                };
                let (a, off) = args.swap_remove(0);
                return self.coerce(a, &ty, CastContext::Explicit, off);
            }
            // The date/time types' functions of their names are casts too.
            "date" | "timestamptz" | "timetz" if args.len() == 1 => {
                let ty = DataType::from_name(name).unwrap_or(DataType::Date);
                let (a, off) = args.swap_remove(0);
                return self.coerce(a, &ty, CastContext::Explicit, off);
            }
            "pg_typeof" if args.len() == 1 => {
                let ty = args[0].0.ty.without_typmod();
                return Ok(Expr::constant(
                    Value::Text(ty.to_string().into()),
                    DataType::Text,
                ));
            }
            "now" | "current_timestamp" | "statement_timestamp" | "transaction_timestamp"
                if args.is_empty() =>
            {
                return Ok(Expr::constant(
                    Value::TimestampTz(self.ctx.statement_timestamp()),
                    DataType::TimestampTz(None),
                ));
            }
            "localtimestamp" if args.is_empty() => {
                return Ok(Expr::constant(
                    Value::Timestamp(crate::types::datetime::zone::to_local(
                        self.ctx.statement_timestamp(),
                    )),
                    DataType::Timestamp(None),
                ));
            }
            _ => {}
        }
        self.bind_scalar_call(name, args)
    }

    /// A call of builtin or user function `name` on bound `args`: a
    /// session function of constants is evaluated now, a user function
    /// is chosen by its overloads, else the builtin's signature coerces
    /// the arguments.
    fn bind_scalar_call(&mut self, name: &str, args: Vec<(Expr, ast::Offset)>) -> Result<Expr> {
        if args.iter().all(|(a, _)| a.as_const().is_some()) {
            let values: Vec<Value> = args
                .iter()
                .map(|(a, _)| a.as_const().cloned().unwrap_or(Value::Null))
                .collect();
            if let Some(r) = self.ctx.scalar_function(name, &values) {
                let (v, ty) = r?;
                return Ok(Expr::constant(v, ty));
            }
        }
        let args = match self.bind_user_call(name, args)? {
            Ok(user_call) => return Ok(user_call),
            Err(args) => args,
        };
        let func = ScalarFunc::from_name(name).ok_or_else(|| {
            let list: Vec<String> = args.iter().map(|(a, _)| a.ty.to_string()).collect();
            err!(
                UndefinedFunction,
                "function {name}({}) does not exist",
                list.join(", ")
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
        })?;
        let types_in: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let resolved = func.resolve(&types_in)?;
        let args = args
            .into_iter()
            .zip(&resolved.arg_types)
            .map(|((a, off), t)| self.coerce(a, t, CastContext::Implicit, off))
            .collect::<Result<Vec<_>>>()?;
        Ok(Expr {
            kind: ExprKind::Func(Func(resolved.func), args),
            ty: resolved.result,
        })
    }

    pub(super) fn bind_aggregate(
        &mut self,
        call: &ast::FunctionCall,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let name = call.name.name.as_str();
        if !self.outer.is_empty() {
            let local = match mode {
                Mode::Agg(state) => state.input.clone(),
                Mode::NoAgg(_) => scope.clone(),
            };
            if let Some(e) = self.outer_aggregate(call, &local)? {
                return Ok(e);
            }
        }
        let state = match mode {
            Mode::NoAgg(clause) => {
                return Err(err!(
                    GroupingError,
                    "aggregate functions are not allowed in {clause}"
                ))
            }
            Mode::Agg(state) => state,
        };
        if let Some(k) = state.aggs.iter().position(|(c, _)| c == call) {
            let ngroup = state.group.len();
            return Ok(Expr::column(ngroup + k, state.aggs[k].1.ty));
        }
        let input = state.input.clone();
        let mut inner = Mode::NoAgg("aggregate function calls");
        let (func, arg, more_args, ty) = if call.star {
            if name != "count" {
                return Err(err!(UndefinedFunction, "function {name}() does not exist")
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
            }
            (AggFunc::CountStar, None, Vec::new(), DataType::Int8)
        } else {
            let func = AggFunc::from_name(name)
                .ok_or_else(|| err!(InternalError, "{name} is not an aggregate"))?;
            self.bind_aggregate_args(call, func, &input, &mut inner)?
        };
        let mut order = Vec::with_capacity(call.order_by.len());
        for o in &call.order_by {
            if call.distinct && !call.args.contains(&o.expr) {
                return Err(at(
                    err!(
                        InvalidColumnReference,
                        "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list"
                    ),
                    leftmost(&o.expr),
                ));
            }
            let e = self
                .bind_expr(&o.expr, &input, &mut inner)
                .map_err(nested_agg)?;
            order.push(AggOrder {
                expr: self.resolve_unknown(e)?,
                descending: o.descending,
                nulls_first: o.nulls_first.unwrap_or(o.descending),
            });
        }
        let filter = match &call.filter {
            Some(f) => Some(
                self.bind_condition(f, &input, &mut inner, "FILTER")
                    .map_err(nested_agg)?,
            ),
            None => None,
        };
        if !func.order_matters(&arg.as_ref().map_or(DataType::Int8, |a| a.ty)) {
            order.clear();
        }
        let agg = AggCall {
            func,
            arg,
            more_args,
            order,
            distinct: call.distinct,
            filter,
            ty,
        };
        state.aggs.push((call.clone(), agg));
        let ngroup = state.group.len();
        Ok(Expr::column(ngroup + state.aggs.len() - 1, ty))
    }
}

impl Binder<'_> {
    /// Binds an aggregate call's arguments over `input` and coerces them to
    /// the types the aggregate takes: the first argument, the others, and
    /// the result type.
    fn bind_aggregate_args(
        &mut self,
        call: &ast::FunctionCall,
        func: AggFunc,
        input: &Scope,
        inner: &mut Mode,
    ) -> Result<(AggFunc, Option<Expr>, Vec<Expr>, DataType)> {
        let name = call.name.name.as_str();
        let classic = matches!(
            func,
            AggFunc::Count | AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max
        );
        if classic && call.args.len() != 1 {
            let list: Vec<String> = call.args.iter().map(|_| "unknown".to_string()).collect();
            return Err(err!(
                UndefinedFunction,
                "function {name}({}) does not exist",
                list.join(", ")
            ));
        }
        let mut bound = Vec::with_capacity(call.args.len());
        for a in &call.args {
            let b = self.bind_expr(a, input, inner).map_err(nested_agg)?;
            bound.push((b, leftmost(a)));
        }
        if classic {
            let (a, _) = bound.remove(0);
            let a = self.resolve_unknown(a)?;
            let ty = agg_result_type(func, &a.ty)?;
            return Ok((func, Some(a), Vec::new(), ty));
        }
        let types: Vec<DataType> = bound.iter().map(|(b, _)| b.ty).collect();
        let (want, ty) = signature(func, &types)?;
        let func = func.for_arg_types(&types);
        let mut args = bound
            .into_iter()
            .zip(&want)
            .map(|((a, off), t)| self.coerce(a, t, CastContext::Implicit, off))
            .collect::<Result<Vec<_>>>()?
            .into_iter();
        let first = args.next();
        Ok((func, first, args.collect(), ty))
    }
}

/// Rewrites a LIKE pattern written with escape character `esc` (or none)
/// into the default backslash-escape form.
fn rewrite_escape(pattern: &str, esc: Option<char>) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        if Some(c) == esc {
            out.push('\\');
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    out
}

/// Where PostgreSQL reports an expression that fails type unification:
/// its leftmost token (`1` of `1::text`, `a` of `a + 1`).
/// Puts named arguments (`make_interval(days => 1)`) in their declared
/// places and fills the defaults of those not given, as PostgreSQL's named
/// notation; only functions with declared parameter names take them.
fn named_arguments(
    name: &str,
    args: Vec<(Expr, ast::Offset)>,
    names: &[Option<String>],
) -> Result<Vec<(Expr, ast::Offset)>> {
    let listed: Vec<String> = args
        .iter()
        .zip(names)
        .map(|((a, _), n)| match n {
            Some(n) => format!("{n} => {}", a.ty),
            None => a.ty.to_string(),
        })
        .collect();
    let missing = || {
        err!(
            UndefinedFunction,
            "function {name}({}) does not exist",
            listed.join(", ")
        )
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
    };
    let func = ScalarFunc::from_name(name).ok_or_else(missing)?;
    let params = func.param_defaults().ok_or_else(missing)?;
    let mut slots: Vec<Option<(Expr, ast::Offset)>> = vec![None; params.len()];
    for (k, (arg, n)) in args.into_iter().zip(names).enumerate() {
        let at = match n {
            Some(n) => params.iter().position(|(p, _, _)| p == n),
            None => Some(k),
        };
        match at.and_then(|k| slots.get_mut(k)) {
            Some(slot @ None) => *slot = Some(arg),
            _ => return Err(missing()),
        }
    }
    Ok(slots
        .into_iter()
        .zip(params)
        .map(|(slot, (_, default, ty))| {
            slot.unwrap_or_else(|| (Expr::constant(default, ty), ast::Offset(0)))
        })
        .collect())
}

pub(crate) fn leftmost(e: &ast::Expr) -> ast::Offset {
    let inner = match &e.kind {
        ast::ExprKind::Cast { expr, .. }
        | ast::ExprKind::IsNull { expr, .. }
        | ast::ExprKind::IsBool { expr, .. }
        | ast::ExprKind::Between { expr, .. }
        | ast::ExprKind::InList { expr, .. }
        | ast::ExprKind::Like { expr, .. }
        | ast::ExprKind::Subscript { expr, .. }
        | ast::ExprKind::AnyArray { expr, .. }
        | ast::ExprKind::LikeAny { expr, .. } => leftmost(expr),
        ast::ExprKind::Binary { left, .. } | ast::ExprKind::IsDistinctFrom { left, .. } => {
            leftmost(left)
        }
        _ => e.offset,
    };
    if inner.0 < e.offset.0 {
        inner
    } else {
        e.offset
    }
}

/// Rewords the error of an aggregate inside an aggregate as PostgreSQL does.
fn nested_agg(e: Error) -> Error {
    if e.message == "aggregate functions are not allowed in aggregate function calls" {
        // Reported at the inner call, as PostgreSQL does.
        let mut n = err!(GroupingError, "aggregate function calls cannot be nested");
        n.position = e.position;
        n
    } else {
        e
    }
}

/// `~~ ~~* !~~ !~~*`: (case-insensitive, negated) LIKE.
fn like_op(op: ast::BinaryOp) -> Option<(bool, bool)> {
    use ast::BinaryOp as A;
    Some(match op {
        A::LikeOp => (false, false),
        A::ILikeOp => (true, false),
        A::NotLikeOp => (false, true),
        A::NotILikeOp => (true, true),
        _ => return None,
    })
}

/// `~ ~* !~ !~*`: (case-insensitive, negated) regular-expression match.
fn regex_op(op: ast::BinaryOp) -> Option<(bool, bool)> {
    use ast::BinaryOp as A;
    Some(match op {
        A::RegexMatch => (false, false),
        A::RegexIMatch => (true, false),
        A::RegexNotMatch => (false, true),
        A::RegexNotIMatch => (true, true),
        _ => return None,
    })
}

/// The JSON operator an infix operator of the grammar names, if it is one.
fn json_op(op: ast::BinaryOp) -> Option<types::json::JsonOp> {
    use ast::BinaryOp as A;
    use types::json::JsonOp as J;
    Some(match op {
        A::Arrow => J::Arrow,
        A::LongArrow => J::LongArrow,
        A::HashArrow => J::HashArrow,
        A::HashLongArrow => J::HashLongArrow,
        A::Contains => J::Contains,
        A::ContainedBy => J::ContainedBy,
        A::Question => J::Exists,
        A::QuestionPipe => J::ExistsAny,
        A::QuestionAmp => J::ExistsAll,
        A::HashMinus => J::HashMinus,
        _ => return None,
    })
}
