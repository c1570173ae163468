//! CREATE [OR REPLACE] FUNCTION and DROP FUNCTION (PostgreSQL's
//! `functioncmds.c`).
//!
//! [`define_function`] turns the statement into a definition and checks
//! it through the caller's planning context before the transaction has an
//! xid: the language (`sql` or `plpgsql`), the types, the result (a set
//! of values or rows for `LANGUAGE sql`, `RETURNS SETOF t` or `RETURNS
//! TABLE (...)`), and the body (`plan::userfunc::check_body`).
//! [`DdlContext::create_function`] then adds it to the catalog, replacing
//! the version of the same name and argument types under `OR REPLACE`
//! (only with the same result type, 42P13), and
//! [`DdlContext::drop_function`] removes functions named with or without
//! their argument types. Like every DDL statement here both are
//! transactional, and the catalog file is written before the commit.

use heapdb_grammar::ast;

use super::context::DdlContext;
use crate::catalog::{FuncArg, FunctionDef, Language};
use crate::err;
use crate::error::Result;
use crate::plan::bind::{data_type, Binder};
use crate::plan::userfunc::check_body;
use crate::plan::PlanContext;
use crate::types::funcs::volatility::Volatility;
use crate::types::DataType;

/// CREATE FUNCTION's definition (its oid still 0), checked through `ctx`.
pub fn define_function(c: &ast::CreateFunction, ctx: &mut dyn PlanContext) -> Result<FunctionDef> {
    let mut language = None;
    let mut volatility = Volatility::Volatile;
    let mut strict = false;
    let mut parallel_safe = false;
    let mut body = None;
    for o in &c.options {
        let conflicting = || err!(SyntaxError, "conflicting or redundant options");
        match o {
            ast::FunctionOption::Language(l) => {
                if language.replace(l.clone()).is_some() {
                    return Err(conflicting());
                }
            }
            ast::FunctionOption::Volatility(v) => {
                volatility = match v.as_str() {
                    "immutable" => Volatility::Immutable,
                    "stable" => Volatility::Stable,
                    _ => Volatility::Volatile,
                }
            }
            ast::FunctionOption::Strict(s) => strict = *s,
            ast::FunctionOption::Parallel(p) => parallel_safe = p.as_str() == "safe",
            ast::FunctionOption::Ignored(_) => {}
            ast::FunctionOption::As(text) => {
                if body.replace(text.clone()).is_some() {
                    return Err(conflicting());
                }
            }
            ast::FunctionOption::Return(e) => {
                if body.replace(format!("SELECT {e}")).is_some() {
                    return Err(conflicting());
                }
                language.get_or_insert_with(|| "sql".to_string());
            }
        }
    }
    let Some(body) = body else {
        return Err(err!(
            InvalidFunctionDefinition,
            "no function body specified"
        ));
    };
    let language = match language.as_deref() {
        None => return Err(err!(InvalidFunctionDefinition, "no language specified")),
        Some("sql") => Language::Sql,
        Some("plpgsql") => Language::Plpgsql,
        Some(other) => return Err(err!(UndefinedObject, "language \"{other}\" does not exist")),
    };
    let mut binder = Binder::new(ctx);
    let mut set_cols = None;
    let (ret, ret_domain) = match &c.returns {
        None => {
            return Err(err!(
                InvalidFunctionDefinition,
                "function result type must be specified"
            ))
        }
        // `void` is kept as `unknown`, which no function returns otherwise.
        Some(ast::FunctionReturns::Type(ast::DataType::Named(n))) if n.as_str() == "void" => {
            (DataType::Unknown, None)
        }
        Some(ast::FunctionReturns::Type(t)) => binder.resolve_type(t)?,
        Some(_) if language != Language::Sql => {
            return Err(err!(
                FeatureNotSupported,
                "only LANGUAGE sql functions may return sets"
            ))
        }
        Some(ast::FunctionReturns::Setof(t)) => {
            let (ret, cols) = setof_type(&mut binder, t)?;
            set_cols = Some(cols);
            (ret, None)
        }
        Some(ast::FunctionReturns::Table(cols)) => {
            let mut out = Vec::with_capacity(cols.len());
            for col in cols {
                let (ty, _) = binder.resolve_type(&col.data_type)?;
                let name = col
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("column{}", out.len() + 1));
                out.push((name, ty));
            }
            let ret = out[0].1;
            set_cols = Some(out);
            (ret, None)
        }
    };
    let mut args = Vec::with_capacity(c.args.len());
    for a in &c.args {
        let (ty, domain) = binder.resolve_type(&a.data_type)?;
        if let Some(n) = &a.name {
            if args.iter().any(|x: &FuncArg| x.name.as_ref() == Some(n)) {
                return Err(err!(
                    InvalidFunctionDefinition,
                    "parameter name \"{n}\" used more than once"
                ));
            }
        }
        args.push(FuncArg {
            name: a.name.clone(),
            ty,
            domain: domain.map(|d| d.name.clone()),
        });
    }
    let mut def = FunctionDef::new(
        0,
        c.name.name.clone(),
        args,
        ret,
        language,
        volatility,
        strict,
        body,
    );
    def.ret_domain = ret_domain.map(|d| d.name.clone());
    if let Some(cols) = set_cols {
        def.retset = true;
        def.out_cols = cols;
    }
    def.parallel_safe = parallel_safe;
    check_body(&mut binder, &def)?;
    Ok(def)
}

/// `RETURNS SETOF t`: the element type, and the columns when `t` names a
/// table (a set of its rows; the columns are the table's at CREATE time).
fn setof_type(
    b: &mut Binder<'_>,
    t: &ast::DataType,
) -> Result<(DataType, Vec<(String, DataType)>)> {
    match b.resolve_type(t) {
        Ok((ty, _)) => Ok((ty, Vec::new())),
        Err(e) => {
            let ast::DataType::Named(n) = t else {
                return Err(e);
            };
            match b.ctx.table(n.as_str()) {
                Ok(table) => {
                    let cols: Vec<(String, DataType)> = table
                        .columns
                        .iter()
                        .map(|c| (c.name.clone(), c.ty))
                        .collect();
                    Ok((cols[0].1, cols))
                }
                Err(_) => Err(e),
            }
        }
    }
}

pub(super) fn same_args(a: &[FuncArg], types: &[DataType]) -> bool {
    a.len() == types.len()
        && a.iter()
            .zip(types)
            .all(|(x, t)| x.ty.without_typmod() == t.without_typmod())
}

/// A type as PostgreSQL's notices name a type written in DROP FUNCTION
/// (`TypeNameListToString`): SQL keyword types schema-qualified.
pub(crate) fn written_type(t: &ast::DataType) -> String {
    use ast::DataType as T;
    let builtin = match t {
        T::SmallInt => "int2",
        T::Integer => "int4",
        T::BigInt => "int8",
        T::Real => "float4",
        T::Double => "float8",
        T::Numeric { .. } => "numeric",
        T::Boolean => "bool",
        T::Varchar(_) => "varchar",
        T::Char(_) => "bpchar",
        T::Timestamp(_) => "timestamp",
        T::TimestampTz(_) => "timestamptz",
        T::Interval => "interval",
        other => return other.to_string(),
    };
    format!("pg_catalog.{builtin}")
}

pub(super) fn type_list(types: &[DataType]) -> String {
    let list: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    list.join(", ")
}

impl DdlContext<'_> {
    /// CREATE [OR REPLACE] FUNCTION of `def` (from [`define_function`]).
    pub fn create_function(&mut self, mut def: FunctionDef, or_replace: bool) -> Result<()> {
        let cv = self.view();
        let types: Vec<DataType> = def.args.iter().map(|a| a.ty).collect();
        let existing = self
            .catalog
            .lookup_functions(&cv, &def.name)
            .into_iter()
            .find(|f| same_args(&f.args, &types));
        match existing {
            Some(old) if or_replace => {
                if old.ret.without_typmod() != def.ret.without_typmod() {
                    return Err(err!(
                        InvalidFunctionDefinition,
                        "cannot change return type of existing function"
                    )
                    .with_hint(format!(
                        "Use DROP FUNCTION {}({}) first.",
                        def.name,
                        type_list(&types)
                    )));
                }
                def.oid = old.oid;
                def.comment = old.comment.clone();
                self.catalog
                    .replace_function(&cv, self.xid, old.oid, Some(def))?;
            }
            Some(_) => {
                return Err(err!(
                    DuplicateFunction,
                    "function \"{}\" already exists with same argument types",
                    def.name
                ))
            }
            None => {
                def.oid = self.catalog.next_oid();
                self.catalog.create_function(self.xid, def);
            }
        }
        *self.catalog_changed = true;
        Ok(())
    }

    /// The type an argument written in DROP FUNCTION or DROP OPERATOR
    /// stands for (a domain: its base type).
    pub(crate) fn arg_type(&self, t: &ast::DataType) -> Result<DataType> {
        data_type(t).or_else(|e| match t {
            ast::DataType::Named(n) => match self.catalog.lookup_domain(&self.view(), n) {
                Some(d) => Ok(d.base),
                None => Err(e),
            },
            _ => Err(e),
        })
    }

    /// DROP FUNCTION [IF EXISTS] ...: removes each function. Returns the
    /// NOTICEs of those skipped.
    pub fn drop_function(&mut self, d: &ast::DropFunction) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        let mut oids = Vec::new();
        for r in &d.funcs {
            let cv = self.view();
            let name = &r.name.name;
            let found = self.catalog.lookup_functions(&cv, name);
            let target = match &r.args {
                Some(args) => {
                    let types = args
                        .iter()
                        .map(|a| self.arg_type(&a.data_type))
                        .collect::<Result<Vec<_>>>()?;
                    match found.into_iter().find(|f| same_args(&f.args, &types)) {
                        Some(f) => f,
                        None if d.if_exists => {
                            let written: Vec<String> =
                                args.iter().map(|a| written_type(&a.data_type)).collect();
                            notices.push(format!(
                                "function {name}({}) does not exist, skipping",
                                written.join(",")
                            ));
                            continue;
                        }
                        None => {
                            return Err(err!(
                                UndefinedFunction,
                                "function {name}({}) does not exist",
                                type_list(&types)
                            ))
                        }
                    }
                }
                None => match found.len() {
                    1 => found[0].clone(),
                    0 if d.if_exists => {
                        notices.push(format!("function {name}() does not exist, skipping"));
                        continue;
                    }
                    0 => {
                        return Err(err!(
                            UndefinedFunction,
                            "could not find a function named \"{name}\""
                        ))
                    }
                    _ => {
                        return Err(err!(
                            AmbiguousFunction,
                            "function name \"{name}\" is not unique"
                        )
                        .with_hint(
                            "Specify the argument list to select the function unambiguously.",
                        ))
                    }
                },
            };
            if !oids.contains(&target.oid) {
                oids.push(target.oid);
            }
        }
        let changed = !oids.is_empty();
        let cv = self.view();
        let dropped: Vec<_> = self
            .catalog
            .functions(&cv)
            .into_iter()
            .filter(|f| oids.contains(&f.oid))
            .collect();
        for f in &dropped {
            notices.extend(self.drop_operators_of(f, d.cascade)?);
        }
        let cv = self.view();
        for oid in oids {
            self.catalog.replace_function(&cv, self.xid, oid, None)?;
        }
        if changed {
            *self.catalog_changed = true;
        }
        Ok(notices)
    }
}

/// `DO 'code'`: compiles the block as a PL/pgSQL function of no
/// arguments returning nothing (`inline_code_block` in error contexts, as
/// PostgreSQL names it) through `ctx`, and runs it once.
pub fn run_do(d: &ast::DoBlock, ctx: &mut dyn PlanContext) -> Result<()> {
    match d
        .language
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("plpgsql") => {}
        Some("sql") => {
            return Err(err!(
                FeatureNotSupported,
                "language \"sql\" does not support inline code execution"
            ))
        }
        Some(other) => return Err(err!(UndefinedObject, "language \"{other}\" does not exist")),
    }
    let def = FunctionDef::new(
        0,
        "inline_code_block".into(),
        Vec::new(),
        // Returns void.
        DataType::Unknown,
        Language::Plpgsql,
        Volatility::Volatile,
        false,
        d.body.clone(),
    );
    let mut program = Binder::new(ctx).compile_function(&def)?;
    program.signature = def.name.clone();
    program.void = true;
    program.call(&[]).map(|_| ())
}
