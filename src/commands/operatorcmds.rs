//! CREATE OPERATOR and DROP OPERATOR (PostgreSQL's `operatorcmds.c`).
//!
//! [`define_operator`] turns the statement's definition list into an
//! [`OperatorDef`] through the caller's planning context: the operand
//! types (a domain stands for its base type and is remembered by name),
//! and the function of those argument types that computes the operator,
//! whose result type the operator's is. `COMMUTATOR`, `NEGATOR`,
//! `RESTRICT`, `JOIN`, `HASHES` and `MERGES` are accepted and not kept;
//! an unknown attribute is a WARNING, as PostgreSQL. Then
//! [`DdlContext::create_operator`] adds it (42723 when the same symbol
//! and operand types exist) and [`DdlContext::drop_operator`] removes
//! operators named with their operand types. Both are transactional, and
//! the catalog file is written before the commit.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::context::DdlContext;
use crate::catalog::{DomainDef, FunctionDef, OperatorDef};
use crate::err;
use crate::error::Result;
use crate::plan::bind::Binder;
use crate::plan::PlanContext;
use crate::types::DataType;

/// A resolved operand type and the domain it was written as.
type Operand = (DataType, Option<Arc<DomainDef>>);

fn operand_name(o: &Operand) -> String {
    match &o.1 {
        Some(d) => d.name.clone(),
        None => o.0.to_string(),
    }
}

/// CREATE OPERATOR's definition (its oid still 0) and its WARNINGs,
/// checked through `ctx`.
pub fn define_operator(
    c: &ast::CreateOperator,
    ctx: &mut dyn PlanContext,
) -> Result<(OperatorDef, Vec<String>)> {
    let mut warnings = Vec::new();
    let mut function = None;
    let (mut left, mut right): (Option<Operand>, Option<Operand>) = (None, None);
    let mut b = Binder::new(ctx);
    for (name, arg) in &c.options {
        let lower = name.to_ascii_lowercase();
        match (lower.as_str(), arg) {
            ("procedure" | "function", Some(ast::OperDefArg::Type(ast::DataType::Named(f)))) => {
                function = Some(f.clone())
            }
            ("leftarg", Some(ast::OperDefArg::Type(t))) => left = Some(b.resolve_type(t)?),
            ("rightarg", Some(ast::OperDefArg::Type(t))) => right = Some(b.resolve_type(t)?),
            ("procedure" | "function" | "leftarg" | "rightarg", _) => {
                return Err(err!(SyntaxError, "{lower} requires a parameter"))
            }
            ("commutator" | "negator" | "restrict" | "join" | "hashes" | "merges", _) => {}
            _ => warnings.push(format!("operator attribute \"{name}\" not recognized")),
        }
    }
    let Some(function) = function else {
        return Err(err!(
            InvalidFunctionDefinition,
            "operator function must be specified"
        ));
    };
    let right = match (&left, right) {
        (None, None) => {
            return Err(err!(
                InvalidFunctionDefinition,
                "operator argument types must be specified"
            ))
        }
        (Some(_), None) => {
            return Err(err!(
                InvalidFunctionDefinition,
                "operator right argument type must be specified"
            )
            .with_detail("Postfix operators are not supported."))
        }
        (_, Some(r)) => r,
    };
    let operands: Vec<&Operand> = left.iter().chain(std::iter::once(&right)).collect();
    let found = b.ctx.functions(&function).into_iter().find(|f| {
        f.args.len() == operands.len()
            && f.args
                .iter()
                .zip(&operands)
                .all(|(a, o)| a.ty.without_typmod() == o.0.without_typmod())
    });
    let Some(f) = found else {
        let names: Vec<String> = operands.iter().map(|o| operand_name(o)).collect();
        return Err(err!(
            UndefinedFunction,
            "function {function}({}) does not exist",
            names.join(", ")
        ));
    };
    let def = OperatorDef {
        comment: None,
        oid: 0,
        name: c.name.clone(),
        left: left.as_ref().map(|o| o.0),
        right: right.0,
        left_domain: left.and_then(|o| o.1).map(|d| d.name.clone()),
        right_domain: right.1.map(|d| d.name.clone()),
        function,
        result: f.ret,
    };
    Ok((def, warnings))
}

pub(super) fn same_operands(o: &OperatorDef, left: Option<DataType>, right: DataType) -> bool {
    o.left.map(|t| t.without_typmod()) == left.map(|t| t.without_typmod())
        && o.right.without_typmod() == right.without_typmod()
}

/// A function as PostgreSQL's dependency messages name it:
/// `f(integer,foodomain)`.
pub fn function_signature(f: &FunctionDef) -> String {
    let args: Vec<String> = f
        .args
        .iter()
        .map(|a| a.domain.clone().unwrap_or_else(|| a.ty.to_string()))
        .collect();
    format!("{}({})", f.name, args.join(","))
}

/// Whether operator `o` is computed by function `f`.
pub(super) fn computed_by(o: &OperatorDef, f: &FunctionDef) -> bool {
    let operands: Vec<DataType> = o.left.into_iter().chain([o.right]).collect();
    o.function == f.name
        && f.args.len() == operands.len()
        && f.args
            .iter()
            .zip(&operands)
            .all(|(a, t)| a.ty.without_typmod() == t.without_typmod())
}

impl DdlContext<'_> {
    /// The operators computed by function `f`, which DROP FUNCTION drops
    /// with it under CASCADE (their NOTICEs returned) and else refuses
    /// to drop (2BP01).
    pub fn drop_operators_of(&mut self, f: &FunctionDef, cascade: bool) -> Result<Vec<String>> {
        let cv = self.view();
        let users: Vec<_> = self
            .catalog
            .operators(&cv)
            .into_iter()
            .filter(|o| computed_by(o, f))
            .collect();
        if users.is_empty() {
            return Ok(Vec::new());
        }
        let sig = function_signature(f);
        if !cascade {
            let detail: Vec<String> = users
                .iter()
                .map(|o| format!("operator {} depends on function {sig}", o.signature()))
                .collect();
            return Err(err!(
                DependentObjectsStillExist,
                "cannot drop function {sig} because other objects depend on it"
            )
            .with_detail(detail.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        let mut notices = Vec::new();
        for o in &users {
            self.catalog.drop_operator(&cv, self.xid, o.oid)?;
            notices.push(format!("drop cascades to operator {}", o.signature()));
        }
        *self.catalog_changed = true;
        Ok(notices)
    }

    /// CREATE OPERATOR of `def` (from [`define_operator`]).
    pub fn create_operator(&mut self, mut def: OperatorDef) -> Result<()> {
        let cv = self.view();
        let exists = self
            .catalog
            .lookup_operators(&cv, &def.name)
            .iter()
            .any(|o| same_operands(o, def.left, def.right));
        if exists {
            return Err(err!(
                DuplicateFunction,
                "operator {} already exists",
                def.name
            ));
        }
        def.oid = self.catalog.next_oid();
        self.catalog.create_operator(self.xid, def);
        *self.catalog_changed = true;
        Ok(())
    }

    /// DROP OPERATOR [IF EXISTS] ...: removes each operator. Returns the
    /// NOTICEs of those skipped.
    pub fn drop_operator(&mut self, d: &ast::DropOperator) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        let mut oids = Vec::new();
        for r in &d.ops {
            let left = r.left.as_ref().map(|t| self.arg_type(t)).transpose()?;
            let right = self.arg_type(&r.right)?;
            let cv = self.view();
            let found = self
                .catalog
                .lookup_operators(&cv, &r.name)
                .into_iter()
                .find(|o| same_operands(o, left, right));
            match found {
                Some(o) if !oids.contains(&o.oid) => oids.push(o.oid),
                Some(_) => {}
                None if d.if_exists => {
                    notices.push(format!("operator {} does not exist, skipping", r.name))
                }
                None => {
                    let l = left.map_or("NONE".to_string(), |t| t.to_string());
                    return Err(err!(
                        UndefinedFunction,
                        "operator does not exist: {l} {} {right}",
                        r.name
                    ));
                }
            }
        }
        let cv = self.view();
        for oid in &oids {
            self.catalog.drop_operator(&cv, self.xid, *oid)?;
        }
        if !oids.is_empty() {
            *self.catalog_changed = true;
        }
        Ok(notices)
    }
}
