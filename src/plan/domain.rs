//! Domains in bound expressions: PostgreSQL's `CoerceToDomain`.
//!
//! A value enters a domain by a cast (`'5'::posint`), by being written to
//! a column declared with the domain (INSERT, UPDATE, ON CONFLICT DO
//! UPDATE, a column's or the domain's DEFAULT), or by COPY. In every case
//! the value is first cast to the domain's base type as usual, then
//! checked: NULL against `NOT NULL` (23502 `domain d does not allow null
//! values`), any value against each `CHECK` in creation order (23514
//! `value for domain d violates check constraint "c"`; a check that is
//! NULL passes, as in a table's CHECK). The checked expression is the
//! base-typed value, so a domain's value behaves as its base type in
//! every operator and function.
//!
//! The check is a [`ScalarFunc::User`] call: the domain version's checks
//! are bound once (over one column named `value`) and installed in the
//! user function table under the version's serial, so a statement reuses
//! the compiled checks of the version it sees; an altered domain is a new
//! version with a new serial. A domain without constraints adds nothing.
//! A domain over another domain checks the inner domain's constraints
//! first, all under the outer domain's name (PostgreSQL's messages), and
//! its compiled checks are keyed by every version in the chain.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::bind::{data_type, Binder, Mode};
use super::funcprobe::Probe;
use super::modify::parse_default;
use super::scope::{Scope, ScopeColumn};
use crate::catalog::DomainDef;
use crate::err;
use crate::error::Result;
use crate::exec::expr::{Expr, ExprKind};
use crate::nodes::func::Func;
use crate::types::funcs::user;
use crate::types::funcs::volatility::Volatility;
use crate::types::funcs::ScalarFunc;
use crate::types::{DataType, Value};
use crate::vector::{Batch, Vector};

/// Keeps domain serials apart from function serials in the user function
/// table, which both key by serial.
const DOMAIN_SERIAL_BIT: u64 = 1 << 63;

/// A domain's check of one value.
pub type CheckFn = Arc<dyn Fn(&Value) -> Result<()> + Send + Sync>;

/// A domain version's constraints, bound: what its check call runs.
pub struct DomainChecker {
    name: String,
    base: DataType,
    not_null: bool,
    checks: Vec<(String, Expr)>,
}

impl DomainChecker {
    /// Checks one value (of the base type) against the domain.
    pub fn check(&self, v: &Value) -> Result<()> {
        // A NULL passes every CHECK whose result is NULL; one that ignores
        // its input (`CHECK (false)`) still runs below.
        if v.is_null() && self.not_null {
            return Err(err!(
                NotNullViolation,
                "domain {} does not allow null values",
                self.name
            ));
        }
        if self.checks.is_empty() {
            return Ok(());
        }
        let batch = Batch::new(vec![Vector::from_values(
            self.base,
            std::slice::from_ref(v),
        )]);
        for (name, e) in &self.checks {
            if let Value::Bool(false) = e.eval(&batch)?.get(0) {
                return Err(err!(
                    CheckViolation,
                    "value for domain {} violates check constraint \"{name}\"",
                    self.name
                ));
            }
        }
        Ok(())
    }
}

/// The scope a domain's CHECK expressions are bound in: the checked value
/// as the one column `value`.
fn value_scope(base: DataType) -> Scope {
    Scope {
        columns: vec![ScopeColumn {
            qualifier: None,
            name: "value".into(),
            ty: base,
            hidden: false,
            merged: false,
        }],
        items: Vec::new(),
    }
}

impl Binder<'_> {
    /// The type a type name denotes, with the domain when it names one
    /// (the type is then the domain's base type).
    pub fn resolve_type(
        &mut self,
        t: &ast::DataType,
    ) -> Result<(DataType, Option<Arc<DomainDef>>)> {
        match data_type(t) {
            Ok(ty) => Ok((ty, None)),
            Err(e) => match t {
                ast::DataType::Named(n) => match self.ctx.domain(n) {
                    Some(d) => Ok((d.base, Some(d))),
                    None => Err(e),
                },
                _ => Err(e),
            },
        }
    }

    /// Binds the CHECK expression `e` of a domain over `base`: it must be
    /// boolean, without aggregates.
    pub fn bind_domain_check(&mut self, e: &ast::Expr, base: DataType) -> Result<Expr> {
        let b = self.bind_expr(e, &value_scope(base), &mut Mode::NoAgg("check constraints"))?;
        if b.ty != DataType::Bool {
            return Err(err!(
                DatatypeMismatch,
                "argument of CHECK must be type boolean, not type {}",
                b.ty
            ));
        }
        Ok(b)
    }

    /// `e`, already of the domain's base type, checked against domain `d`
    /// (and the domains it is over) when it is evaluated.
    pub fn coerce_to_domain(&mut self, e: Expr, d: &DomainDef) -> Result<Expr> {
        let chain = self.domain_chain(d)?;
        if chain.iter().all(|x| !x.not_null && x.checks.is_empty()) {
            return Ok(e);
        }
        // The compiled checks are those of every version in the chain: the
        // key changes when any of them does.
        let serial = chain.iter().fold(0u64, |k, x| {
            k.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(x.serial)
        }) | DOMAIN_SERIAL_BIT;
        let (id, fresh) = user::reserve(serial, &d.name, Volatility::Stable);
        if fresh {
            let mut probe = Probe::new(&mut *self.ctx);
            let compiled = Binder::new(&mut probe).domain_checker(d, &chain);
            match compiled {
                Ok(c) => {
                    user::install(
                        id,
                        Arc::new(move |a: &[Value]| {
                            let v = a.first().cloned().unwrap_or(Value::Null);
                            c.check(&v)?;
                            Ok(v)
                        }),
                    );
                    if probe.impure() {
                        // Bound to this statement: the next one compiles
                        // its own.
                        user::forget(serial);
                    }
                }
                Err(err) => {
                    user::forget(serial);
                    return Err(err);
                }
            }
        }
        Ok(Expr {
            kind: ExprKind::Func(Func(ScalarFunc::User(id)), vec![e]),
            ty: d.base,
        })
    }

    /// Domain `d`'s check as a function of one value, for a caller that
    /// checks values itself (COPY FROM).
    pub fn domain_check_fn(&mut self, d: &DomainDef) -> Result<CheckFn> {
        let chain = self.domain_chain(d)?;
        let c = self.domain_checker(d, &chain)?;
        Ok(Arc::new(move |v: &Value| c.check(v)))
    }

    /// The domains `d` is over, innermost first, then `d`.
    fn domain_chain(&mut self, d: &DomainDef) -> Result<Vec<Arc<DomainDef>>> {
        let mut chain = vec![Arc::new(d.clone())];
        while let Some(p) = chain.last().and_then(|x| x.parent.clone()) {
            chain.push(self.column_domain(&p)?);
        }
        chain.reverse();
        Ok(chain)
    }

    /// Domain `d`'s DEFAULT text: its own, else its parent's.
    pub fn domain_default(&mut self, d: &DomainDef) -> Result<Option<String>> {
        match (&d.default, &d.parent) {
            (Some(t), _) => Ok(Some(t.clone())),
            (None, Some(p)) => {
                let pd = self.column_domain(p)?;
                self.domain_default(&pd)
            }
            (None, None) => Ok(None),
        }
    }

    /// The constraints of `chain` (innermost domain first), bound; errors
    /// name `d`, the outermost, as PostgreSQL's do.
    fn domain_checker(&mut self, d: &DomainDef, chain: &[Arc<DomainDef>]) -> Result<DomainChecker> {
        let mut checks = Vec::new();
        for x in chain {
            for c in &x.checks {
                let ast = parse_default(&c.expr)?;
                checks.push((c.name.clone(), self.bind_domain_check(&ast, d.base)?));
            }
        }
        Ok(DomainChecker {
            name: d.name.clone(),
            base: d.base,
            not_null: chain.iter().any(|x| x.not_null),
            checks,
        })
    }

    /// The domain named `name`, which a column names (42704 when it was
    /// dropped meanwhile).
    pub fn column_domain(&mut self, name: &str) -> Result<Arc<DomainDef>> {
        self.ctx
            .domain(name)
            .ok_or_else(|| err!(UndefinedObject, "type \"{name}\" does not exist"))
    }
}
