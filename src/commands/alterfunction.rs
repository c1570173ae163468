//! ALTER FUNCTION | PROCEDURE | ROUTINE (PostgreSQL's `AlterFunction`,
//! `ExecRenameStmt` and `ExecAlterOwnerStmt` for routines).
//!
//! The routine is found as PostgreSQL's `LookupFuncWithArgs` finds it:
//! by its argument types when they are written (42883 when none matches),
//! else by its name alone (42883 when there is none, 42725 when several).
//! heapdb has functions only, so `ALTER PROCEDURE` finds none (or says a
//! function is not a procedure, 42809). The options change the
//! definition's volatility, strictness and parallel safety, which the
//! planner reads; `RENAME TO` its name (42723 when that signature is
//! taken). COST, ROWS, [NOT] LEAKPROOF, SECURITY, a setting's SET / RESET
//! are checked as PostgreSQL checks them and otherwise change nothing
//! heapdb keeps or reports; `OWNER TO` accepts the one role there is and
//! `SET SCHEMA` the one schema. The new definition replaces the old one
//! transactionally, as `CREATE OR REPLACE FUNCTION` does (same oid, a new
//! serial so compiled bodies and cached plans are made again), and the
//! catalog file is written before the commit. Operators name the function
//! that computes them, so a rename moves them to the new name.
//!
//! Invariant: an error changes nothing.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::context::DdlContext;
use super::functioncmds::{same_args, type_list};
use crate::catalog::FunctionDef;
use crate::err;
use crate::error::Result;
use crate::types::funcs::volatility::Volatility;
use crate::types::DataType;

/// The one role and the one schema there are.
const ROLE: &str = "postgres";
const SCHEMA: &str = "public";

/// What a statement's routine word calls the routine in messages.
fn noun(kind: ast::RoutineKind) -> &'static str {
    match kind {
        ast::RoutineKind::Function | ast::RoutineKind::Routine => "function",
        ast::RoutineKind::Procedure => "procedure",
    }
}

/// The option's class: two options of one class are PostgreSQL's
/// "conflicting or redundant options" (a setting's SET / RESET may repeat).
fn option_class(o: &ast::FunctionOption) -> Option<String> {
    match o {
        ast::FunctionOption::Volatility(_) => Some("volatility".into()),
        ast::FunctionOption::Strict(_) => Some("strict".into()),
        ast::FunctionOption::Parallel(_) => Some("parallel".into()),
        ast::FunctionOption::Ignored(text) => {
            let first = text.split_whitespace().next().unwrap_or("");
            match first {
                "SET" | "RESET" => None,
                "NOT" => Some("LEAKPROOF".into()),
                _ => Some(first.into()),
            }
        }
        ast::FunctionOption::Language(_)
        | ast::FunctionOption::As(_)
        | ast::FunctionOption::Return(_) => Some("body".into()),
    }
}

/// A positive COST or ROWS value (`what`), else PostgreSQL's error.
fn positive(text: &str, what: &str) -> Result<()> {
    let n = text
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse::<f64>().ok());
    match n {
        Some(n) if n > 0.0 => Ok(()),
        _ => Err(err!(InvalidParameterValue, "{what} must be positive")),
    }
}

/// `old` with the options applied (a fresh serial).
fn with_options(old: &FunctionDef, options: &[ast::FunctionOption]) -> Result<FunctionDef> {
    let mut seen = Vec::new();
    for o in options {
        if let Some(class) = option_class(o) {
            if seen.contains(&class) {
                return Err(err!(SyntaxError, "conflicting or redundant options"));
            }
            seen.push(class);
        }
    }
    let mut def = FunctionDef::new(
        old.oid,
        old.name.clone(),
        old.args.clone(),
        old.ret,
        old.language,
        old.volatility,
        old.strict,
        old.body.clone(),
    );
    def.ret_domain = old.ret_domain.clone();
    def.retset = old.retset;
    def.out_cols = old.out_cols.clone();
    def.parallel_safe = old.parallel_safe;
    def.comment = old.comment.clone();
    for o in options {
        match o {
            ast::FunctionOption::Volatility(v) => {
                def.volatility = match v.as_str() {
                    "immutable" => Volatility::Immutable,
                    "stable" => Volatility::Stable,
                    _ => Volatility::Volatile,
                }
            }
            ast::FunctionOption::Strict(s) => def.strict = *s,
            ast::FunctionOption::Parallel(p) => def.parallel_safe = p.as_str() == "safe",
            ast::FunctionOption::Ignored(text) if text.starts_with("COST ") => {
                positive(text, "COST")?
            }
            ast::FunctionOption::Ignored(text) if text.starts_with("ROWS ") => {
                positive(text, "ROWS")?;
                if !def.retset {
                    return Err(err!(
                        InvalidParameterValue,
                        "ROWS is not applicable when function does not return a set"
                    ));
                }
            }
            ast::FunctionOption::Ignored(_) => {}
            ast::FunctionOption::Language(_)
            | ast::FunctionOption::As(_)
            | ast::FunctionOption::Return(_) => {
                return Err(err!(SyntaxError, "syntax error in ALTER FUNCTION"))
            }
        }
    }
    Ok(def)
}

impl DdlContext<'_> {
    /// The routine `r` names (see the module doc).
    pub(super) fn routine(
        &self,
        kind: ast::RoutineKind,
        r: &ast::FunctionRef,
    ) -> Result<Arc<FunctionDef>> {
        if let Some(s) = r.name.schema.as_deref().filter(|s| *s != SCHEMA) {
            return Err(err!(InvalidSchemaName, "schema \"{s}\" does not exist"));
        }
        let name = &r.name.name;
        let cv = self.view();
        let found = self.catalog.lookup_functions(&cv, name);
        let what = noun(kind);
        let Some(args) = &r.args else {
            return match found.len() {
                1 if kind != ast::RoutineKind::Procedure => Ok(found[0].clone()),
                0 | 1 => Err(err!(
                    UndefinedFunction,
                    "could not find a {what} named \"{name}\""
                )),
                _ => Err(
                    err!(AmbiguousFunction, "{what} name \"{name}\" is not unique").with_hint(
                        "Specify the argument list to select the function unambiguously.",
                    ),
                ),
            };
        };
        let types = args
            .iter()
            .map(|a| self.arg_type(&a.data_type))
            .collect::<Result<Vec<DataType>>>()?;
        match found.into_iter().find(|f| same_args(&f.args, &types)) {
            Some(_) if kind == ast::RoutineKind::Procedure => Err(err!(
                WrongObjectType,
                "{}({}) is not a procedure",
                name,
                type_list(&types)
            )),
            Some(f) => Ok(f),
            None => Err(err!(
                UndefinedFunction,
                "{what} {name}({}) does not exist",
                type_list(&types)
            )),
        }
    }

    /// ALTER FUNCTION | PROCEDURE | ROUTINE (see the module doc).
    pub fn alter_function(&mut self, a: &ast::AlterFunction) -> Result<()> {
        let old = self.routine(a.kind, &a.func)?;
        let new = match &a.action {
            ast::AlterFunctionAction::Options(options) => with_options(&old, options)?,
            ast::AlterFunctionAction::RenameTo(to) => {
                let cv = self.view();
                let types: Vec<DataType> = old.args.iter().map(|x| x.ty).collect();
                let taken = self
                    .catalog
                    .lookup_functions(&cv, to)
                    .into_iter()
                    .any(|f| same_args(&f.args, &types));
                if taken {
                    return Err(err!(
                        DuplicateFunction,
                        "function {to}({}) already exists in schema \"{SCHEMA}\"",
                        type_list(&types)
                    ));
                }
                let mut def = with_options(&old, &[])?;
                def.name = to.clone();
                def
            }
            ast::AlterFunctionAction::OwnerTo(role) if role.as_str() == ROLE => return Ok(()),
            ast::AlterFunctionAction::OwnerTo(role) => {
                return Err(err!(UndefinedObject, "role \"{role}\" does not exist"))
            }
            ast::AlterFunctionAction::SetSchema(s) if s.as_str() == SCHEMA => return Ok(()),
            ast::AlterFunctionAction::SetSchema(s) => {
                return Err(err!(InvalidSchemaName, "schema \"{s}\" does not exist"))
            }
        };
        if new.name != old.name {
            self.follow_rename(&old, &new.name)?;
        }
        let cv = self.view();
        self.catalog
            .replace_function(&cv, self.xid, old.oid, Some(new))?;
        *self.catalog_changed = true;
        Ok(())
    }

    /// Points the operators computed by `old` at its new name `to` (they
    /// name their function; PostgreSQL's follow it by oid).
    fn follow_rename(&mut self, old: &FunctionDef, to: &str) -> Result<()> {
        let cv = self.view();
        let users: Vec<_> = self
            .catalog
            .operators(&cv)
            .into_iter()
            .filter(|o| super::operatorcmds::computed_by(o, old))
            .collect();
        for o in users {
            let mut moved = (*o).clone();
            moved.function = to.to_string();
            let cv = self.view();
            self.catalog.drop_operator(&cv, self.xid, o.oid)?;
            self.catalog.create_operator(self.xid, moved);
        }
        Ok(())
    }
}
