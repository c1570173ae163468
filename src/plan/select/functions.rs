//! Set-returning functions: `generate_series` (integer, numeric,
//! timestamp) and the inspection functions in FROM, and a set-returning
//! call in the select list rewritten into a FROM item ([`srf_to_from`]).

use heapdb_grammar::ast;

use super::super::bind::{at, Binder, Mode};
use super::super::scope::Scope;
use super::super::{Field, Node, Plan, TableFunc};
use super::*;
use crate::err;
use crate::error::Result;
use crate::nodes::expr::Expr;
use crate::types::cast::CastContext;
use crate::types::{DataType, Value};

impl Binder<'_> {
    pub(super) fn plan_function(
        &mut self,
        call: &ast::FunctionCall,
        alias: Option<&ast::TableAlias>,
        offset: ast::Offset,
    ) -> Result<Item> {
        let name = call.name.name.as_str();
        let mut args = Vec::new();
        for a in &call.args {
            let b = self.bind_expr(a, &Scope::default(), &mut Mode::NoAgg("functions in FROM"))?;
            args.push((b, a.offset));
        }
        let qualifier = alias.map_or_else(|| name.to_string(), |a| a.name.clone());
        let mut scalar = matches!(
            name,
            "generate_series"
                | "unnest"
                | "string_to_table"
                | "regexp_matches"
                | "regexp_split_to_table"
        ) || name.ends_with("_object_keys");
        let (func, fields) = if let Some((func, fields, one_type)) =
            self.user_function_in_from(name, &args)?
        {
            scalar = one_type;
            (func, fields)
        } else if args.iter().any(|(e, _)| super::lateral::has_param(e)) {
            self.lateral_function(name, &args, offset)?
        } else if name == "generate_series" {
            self.series(&args, offset)?
        } else if name == "unnest" {
            self.unnest(&args, offset)?
        } else if name == "string_to_table" {
            self.string_to_table(&args, offset)?
        } else if let Some(split) = crate::types::funcs::regexp_match::srf_of(name) {
            self.regexp_srf(name, split, &args, offset)?
        } else if let Some(f) = crate::types::json::srf::JsonSrf::from_name(name) {
            self.json_srf(f, name, &args, offset)?
        } else {
            let values = args
                .iter()
                .map(|(e, _)| {
                    let e = self.resolve_unknown(e.clone())?;
                    crate::exec::eval_const(&e)
                })
                .collect::<Result<Vec<_>>>()?;
            match self.ctx.inspection_rows(name, &values) {
                Some(r) => {
                    let (fields, rows) = r?;
                    (TableFunc::Rows(rows), fields)
                }
                None => {
                    let list: Vec<String> = args.iter().map(|(a, _)| a.ty.to_string()).collect();
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
            }
        };
        let mut fields = fields;
        if let Some(a) = alias {
            if fields.len() == 1 && a.columns.is_empty() && scalar {
                fields[0].name = a.name.clone();
            }
            for (f, c) in fields.iter_mut().zip(&a.columns) {
                f.name = c.clone();
            }
        }
        let rows = match &func {
            TableFunc::SeriesInt { start, stop, step } => {
                (((stop - start) / step).max(-1) + 1) as f64
            }
            TableFunc::SeriesTimestamp { .. } => 1000.0,
            // PostgreSQL's estimate for a function it cannot see into.
            TableFunc::Call { srf, .. } => match srf {
                crate::nodes::Srf::Unnest => 10.0,
                // PostgreSQL's `prorows` default for a set-returning function.
                crate::nodes::Srf::User(_) => 1000.0,
                _ => 100.0,
            },
            TableFunc::Rows(r) => r.len() as f64,
        };
        let scope = Scope::of(&qualifier, fields.iter().map(|f| (f.name.clone(), f.ty)));
        Ok(Item {
            plan: Plan {
                rows,
                fields,
                node: Node::Function {
                    func,
                    name: name.to_string(),
                    alias: alias.map(|a| a.name.clone()),
                },
            },
            scope,
        })
    }

    /// `unnest(array)`: the elements of a constant array, one row each.
    pub(super) fn unnest(
        &mut self,
        args: &[(Expr, ast::Offset)],
        offset: ast::Offset,
    ) -> Result<(TableFunc, Vec<Field>)> {
        let [(a, _)] = args else {
            let list: Vec<String> = args.iter().map(|(a, _)| a.ty.to_string()).collect();
            return Err(at(
                err!(UndefinedFunction, "function unnest({}) does not exist", list.join(", "))
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
                offset,
            ));
        };
        let elem = match a.ty {
            DataType::Array(e) => *e,
            DataType::Unknown => {
                return Err(at(
                    err!(
                        DatatypeMismatch,
                        "could not determine polymorphic type because input has type unknown"
                    ),
                    offset,
                ))
            }
            _ => {
                return Err(at(
                    err!(UndefinedFunction, "function unnest({}) does not exist", a.ty)
                        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
                    offset,
                ))
            }
        };
        let fields = vec![Field {
            name: "unnest".into(),
            ty: elem,
        }];
        let rows = match crate::exec::eval_const(a)? {
            Value::Array(arr) => arr.items.iter().map(|v| vec![v.clone()]).collect(),
            _ => Vec::new(),
        };
        Ok((TableFunc::Rows(rows), fields))
    }

    /// A JSON set-returning function (`jsonb_each`, ...) of a constant.
    fn json_srf(
        &mut self,
        f: crate::types::json::srf::JsonSrf,
        name: &str,
        args: &[(Expr, ast::Offset)],
        offset: ast::Offset,
    ) -> Result<(TableFunc, Vec<Field>)> {
        let rows = match args {
            [(a, _)] => {
                let v = crate::exec::eval_const(&self.resolve_unknown(a.clone())?)?;
                f.rows(&v, &a.ty).map_err(|e| at(e, offset))?
            }
            _ => None,
        };
        let Some(rows) = rows else {
            let list: Vec<String> = args.iter().map(|(a, _)| a.ty.to_string()).collect();
            return Err(at(
                err!(UndefinedFunction, "function {name}({}) does not exist", list.join(", "))
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
                offset,
            ));
        };
        let fields = f
            .columns()
            .into_iter()
            .map(|(name, ty)| Field { name, ty })
            .collect();
        Ok((TableFunc::Rows(rows), fields))
    }

    /// `string_to_table(s, sep [, null_string])`: the pieces
    /// `string_to_array` makes, one row each.
    pub(super) fn string_to_table(
        &mut self,
        args: &[(Expr, ast::Offset)],
        offset: ast::Offset,
    ) -> Result<(TableFunc, Vec<Field>)> {
        use crate::types::array_funcs::ArrayFunc;
        let types: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let resolved = ArrayFunc::StringToArray.resolve(&types).map_err(|_| {
            let list: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            at(
                err!(
                    UndefinedFunction,
                    "function string_to_table({}) does not exist",
                    list.join(", ")
                )
                .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
                offset,
            )
        })?;
        let mut values = Vec::with_capacity(args.len());
        for ((a, off), t) in args.iter().zip(&resolved.arg_types) {
            let e = self.coerce(a.clone(), t, CastContext::Implicit, *off)?;
            values.push(crate::exec::eval_const(&e)?);
        }
        let fields = vec![Field {
            name: "string_to_table".into(),
            ty: DataType::Text,
        }];
        let rows = match ArrayFunc::StringToArray.eval(&values)? {
            Value::Array(arr) => arr.items.iter().map(|v| vec![v.clone()]).collect(),
            _ => Vec::new(),
        };
        Ok((TableFunc::Rows(rows), fields))
    }

    /// `regexp_matches` / `regexp_split_to_table` (`split`) over constant
    /// arguments: their rows.
    pub(super) fn regexp_srf(
        &mut self,
        name: &str,
        split: bool,
        args: &[(Expr, ast::Offset)],
        offset: ast::Offset,
    ) -> Result<(TableFunc, Vec<Field>)> {
        use crate::types::funcs::regexp_match;
        let types: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        if !regexp_match::srf_takes(&types) {
            let list: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            return Err(at(
                err!(UndefinedFunction, "function {name}({}) does not exist", list.join(", "))
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
                offset,
            ));
        }
        let mut values = Vec::with_capacity(args.len());
        for (a, off) in args {
            let e = self.coerce(a.clone(), &DataType::Text, CastContext::Implicit, *off)?;
            values.push(crate::exec::eval_const(&e)?);
        }
        let ty = if split {
            DataType::Text
        } else {
            DataType::array_of(DataType::Text)
        };
        let fields = vec![Field {
            name: name.into(),
            ty,
        }];
        if values.iter().any(Value::is_null) {
            return Ok((TableFunc::Rows(Vec::new()), fields));
        }
        let rows = regexp_match::srf_rows(split, &values)?;
        Ok((TableFunc::Rows(rows), fields))
    }

    /// `generate_series` over numeric: computed whole (at most ten million
    /// rows, which is far more than a numeric series is ever used for).
    pub(super) fn numeric_series(
        &mut self,
        args: &[(Expr, ast::Offset)],
    ) -> Result<(TableFunc, Vec<Field>)> {
        let ty = DataType::Numeric(None);
        let mut vals = Vec::new();
        for (a, off) in args {
            let e = self.coerce(a.clone(), &ty, CastContext::Implicit, *off)?;
            vals.push(crate::exec::eval_const(&e)?);
        }
        let fields = vec![Field {
            name: "generate_series".into(),
            ty,
        }];
        if vals.iter().any(Value::is_null) {
            return Ok((TableFunc::Rows(vec![]), fields));
        }
        let rows = crate::exec::srf::numeric_series(&vals)?;
        Ok((TableFunc::Rows(rows), fields))
    }

    pub(super) fn series(
        &mut self,
        args: &[(Expr, ast::Offset)],
        offset: ast::Offset,
    ) -> Result<(TableFunc, Vec<Field>)> {
        let tys: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let is_int = |t: &DataType| {
            matches!(
                t,
                DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Unknown
            )
        };
        if (args.len() == 2 || args.len() == 3) && tys.iter().all(is_int) {
            let ty = if tys.contains(&DataType::Int8) {
                DataType::Int8
            } else {
                DataType::Int4
            };
            let mut vals = Vec::new();
            for (a, off) in args {
                let e = self.coerce(a.clone(), &ty, CastContext::Implicit, *off)?;
                vals.push(crate::exec::eval_const(&e)?);
            }
            let get = |i: usize| vals.get(i).and_then(Value::as_i64);
            if vals.iter().any(Value::is_null) {
                return Ok((
                    TableFunc::Rows(vec![]),
                    vec![Field {
                        name: "generate_series".into(),
                        ty,
                    }],
                ));
            }
            let step = get(2).unwrap_or(1);
            if step == 0 {
                return Err(err!(InvalidParameterValue, "step size cannot equal zero"));
            }
            return Ok((
                TableFunc::SeriesInt {
                    start: get(0).unwrap_or(0),
                    stop: get(1).unwrap_or(0),
                    step,
                },
                vec![Field {
                    name: "generate_series".into(),
                    ty,
                }],
            ));
        }
        let is_num = |t: &DataType| t.is_numeric() || *t == DataType::Unknown;
        if (args.len() == 2 || args.len() == 3)
            && tys.iter().all(is_num)
            && tys.iter().any(|t| matches!(t, DataType::Numeric(_)))
        {
            return self.numeric_series(args);
        }
        if args.len() == 3 {
            let tz = tys[..2]
                .iter()
                .any(|t| matches!(t, DataType::TimestampTz(_)));
            let ts_type = if tz {
                DataType::TimestampTz(None)
            } else {
                DataType::Timestamp(None)
            };
            let mut vals = Vec::new();
            for (i, (a, off)) in args.iter().enumerate() {
                let t = if i == 2 { DataType::Interval } else { ts_type };
                let e = self.coerce(a.clone(), &t, CastContext::Implicit, *off)?;
                vals.push(crate::exec::eval_const(&e)?);
            }
            if let (
                Value::Timestamp(a) | Value::TimestampTz(a),
                Value::Timestamp(b) | Value::TimestampTz(b),
                Value::Interval(s),
            ) = (&vals[0], &vals[1], &vals[2])
            {
                if s.months == 0 && s.days == 0 && s.micros == 0 {
                    return Err(err!(InvalidParameterValue, "step size cannot equal zero"));
                }
                return Ok((
                    TableFunc::SeriesTimestamp {
                        start: *a,
                        stop: *b,
                        step: *s,
                        tz,
                    },
                    vec![Field {
                        name: "generate_series".into(),
                        ty: ts_type,
                    }],
                ));
            }
            return Ok((
                TableFunc::Rows(vec![]),
                vec![Field {
                    name: "generate_series".into(),
                    ty: ts_type,
                }],
            ));
        }
        let list: Vec<String> = tys.iter().map(|t| t.to_string()).collect();
        Err(at(
            err!(
                UndefinedFunction,
                "function generate_series({}) does not exist",
                list.join(", ")
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
            offset,
        ))
    }
}

/// Whether `e` is a call of a set-returning function heapdb runs in a
/// select list.
pub(super) fn is_select_srf(e: &ast::Expr, user: &UserSrfs) -> bool {
    matches!(&e.kind, ast::ExprKind::Function(f)
        if f.name.schema.is_none() && f.over.is_none() && (matches!(f.name.name.as_str(), "generate_series" | "unnest" | "string_to_table" | "regexp_matches" | "regexp_split_to_table") || crate::types::json::srf::single_column(&f.name.name) || user.contains(&f.name.name)))
}

/// The names of the user functions a select list calls that return a set
/// of one column's values (called there, they expand rows as the builtin
/// set-returning functions do).
pub(super) type UserSrfs = std::collections::HashSet<String>;

impl Binder<'_> {
    /// The user set-returning functions of one column that `s`'s select
    /// list calls.
    pub(super) fn user_srfs(&self, s: &ast::Select) -> UserSrfs {
        let mut names = UserSrfs::new();
        for item in &s.projection {
            if let ast::SelectItem::Expr { expr, .. } = item {
                crate::plan::bind::walk(expr, &mut |x| {
                    if let ast::ExprKind::Function(f) = &x.kind {
                        let set = self
                            .ctx
                            .functions(&f.name.name)
                            .iter()
                            .any(|d| d.retset && d.out_cols.len() <= 1);
                        if set {
                            names.insert(f.name.name.clone());
                        }
                    }
                });
            }
        }
        names
    }
}

/// A set-returning function in the select list (`select generate_series(1,
/// 3), 7`) becomes a FROM item joined to the rest, as PostgreSQL's
/// ProjectSet gives the same rows for the cases heapdb supports: one such
/// call, at the top of a select item. `None` when there is none.
pub(super) fn srf_to_from(s: &ast::Select, user: &UserSrfs) -> Result<Option<ast::Select>> {
    let is_srf = |e: &ast::Expr| is_select_srf(e, user);
    let found: Vec<usize> = s
        .projection
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, ast::SelectItem::Expr { expr, .. } if is_srf(expr)))
        .map(|(k, _)| k)
        .collect();
    match found.len() {
        0 => return Ok(None),
        1 => {}
        _ => {
            return Err(err!(
                FeatureNotSupported,
                "more than one set-returning function in a select list is not supported"
            ))
        }
    }
    let mut out = s.clone();
    let k = found[0];
    let alias = match &s.projection[k] {
        ast::SelectItem::Expr { expr, .. } => match &expr.kind {
            ast::ExprKind::Function(f) => f.name.name.clone(),
            _ => "generate_series".to_string(),
        },
        _ => "generate_series".to_string(),
    };
    if let ast::SelectItem::Expr {
        expr,
        alias: item_alias,
    } = &mut out.projection[k]
    {
        let ast::ExprKind::Function(call) = &expr.kind else {
            unreachable!("is_srf matched a function")
        };
        let call = (**call).clone();
        let offset = expr.offset;
        if item_alias.is_none() {
            *item_alias = Some(alias.clone());
        }
        let alias_column = alias.clone();
        *expr = ast::Expr {
            kind: ast::ExprKind::Column(ast::ColumnRef {
                schema: None,
                table: Some("\u{1}srf".into()),
                column: alias,
            }),
            offset,
        };
        out.from.push(ast::TableRef::Function {
            call,
            alias: Some(ast::TableAlias {
                name: "\u{1}srf".into(),
                columns: vec![alias_column],
            }),
            offset,
        });
    }
    Ok(Some(out))
}
