//! CREATE DOMAIN and DROP DOMAIN (PostgreSQL's `typecmds.c`).
//!
//! [`define_domain`] turns the statement into a definition and checks it
//! through the caller's planning context before the transaction has an
//! xid: the base type, the `DEFAULT` (bound and cast to the base type by
//! assignment, as a column default), `NULL`/`NOT NULL` (not both, 42601)
//! and each `CHECK` (bound with `VALUE` as a column of the base type, it
//! must be boolean, with no aggregate or subquery), the unnamed ones named
//! `<domain>_check`, `<domain>_check1`, ... as PostgreSQL's
//! `ChooseConstraintName`. [`DdlContext::create_domain`] adds it to the
//! catalog (42710 when a domain of that name exists) and
//! [`DdlContext::drop_domain`] removes domains no column uses (2BP01
//! naming the columns otherwise). [`alter_domain_def`] makes ALTER
//! DOMAIN's new version (SET/DROP DEFAULT, SET/DROP NOT NULL, ADD CHECK,
//! DROP CONSTRAINT, RENAME CONSTRAINT) and says what the stored values
//! must satisfy first (the session checks them);
//! [`DdlContext::alter_domain`] installs it. All are transactional, and
//! the catalog file is written before the commit. How values are checked against a
//! domain is `plan::domain`'s.

use heapdb_grammar::ast;

use super::context::DdlContext;
use crate::catalog::{DomainCheck, DomainDef};
use crate::err;
use crate::error::Result;
use crate::plan::bind::{contains_subquery, data_type, Binder, Mode};
use crate::plan::scope::Scope;
use crate::plan::PlanContext;
use crate::types::cast::CastContext;
use crate::types::DataType;

/// CREATE DOMAIN's definition (its oid still 0), checked through `ctx`.
pub fn define_domain(c: &ast::CreateDomain, ctx: &mut dyn PlanContext) -> Result<DomainDef> {
    let name = c.name.name.clone();
    let mut binder = Binder::new(ctx);
    // A domain over a domain has its base type and passes its checks
    // first (plan::domain).
    let (base, inner) = binder.resolve_type(&c.data_type)?;
    let mut default = None;
    let (mut null, mut not_null) = (false, false);
    let mut checks: Vec<DomainCheck> = Vec::new();
    let mut unnamed = Vec::new();
    for k in &c.constraints {
        match k {
            ast::DomainConstraint::Default(e) => {
                if default.is_some() {
                    return Err(err!(SyntaxError, "multiple default expressions"));
                }
                check_default(&mut binder, e, base)?;
                default = Some(e.to_string());
            }
            ast::DomainConstraint::NotNull => not_null = true,
            ast::DomainConstraint::Null => null = true,
            ast::DomainConstraint::Check(cname, e) => {
                if null && not_null {
                    break;
                }
                check_condition(&mut binder, e, base)?;
                if let Some(n) = cname {
                    if checks.iter().any(|x| &x.name == n) {
                        return Err(err!(
                            DuplicateObject,
                            "constraint \"{n}\" for domain \"{name}\" already exists"
                        ));
                    }
                } else {
                    unnamed.push(checks.len());
                }
                checks.push(DomainCheck {
                    comment: None,
                    name: cname.clone().unwrap_or_default(),
                    expr: e.to_string(),
                });
            }
        }
        if null && not_null {
            return Err(err!(SyntaxError, "conflicting NULL/NOT NULL constraints"));
        }
    }
    for i in unnamed {
        checks[i].name = choose_check_name(&name, &checks);
    }
    let mut def = DomainDef::new(0, name, base, default, not_null, checks);
    def.parent = inner.map(|d| d.name.clone());
    Ok(def)
}

/// Checks a domain's DEFAULT expression: it binds without column
/// references and casts to the base type by assignment.
fn check_default(binder: &mut Binder<'_>, e: &ast::Expr, base: DataType) -> Result<()> {
    let b = binder.bind_expr(
        e,
        &Scope::default(),
        &mut Mode::NoAgg("DEFAULT expressions"),
    )?;
    binder.coerce(b, &base, CastContext::Assignment, e.offset)?;
    Ok(())
}

/// Checks a domain's CHECK condition (see the module doc).
fn check_condition(binder: &mut Binder<'_>, e: &ast::Expr, base: DataType) -> Result<()> {
    if contains_subquery(e) {
        return Err(err!(
            FeatureNotSupported,
            "cannot use subquery in check constraint"
        ));
    }
    binder.bind_domain_check(e, base)?;
    Ok(())
}

/// What an ALTER DOMAIN asks of the values already stored in the
/// domain's columns before it may commit.
pub enum Validation {
    /// None is NULL (`SET NOT NULL`).
    NotNull,
    /// Every one passes the new definition's checks (`ADD CHECK`).
    Checks,
}

/// ALTER DOMAIN's new definition of `old` (same oid, fresh serial),
/// checked through `ctx`, with what the stored values must satisfy and the
/// NOTICE of a skipped `DROP CONSTRAINT IF EXISTS`.
pub fn alter_domain_def(
    old: &DomainDef,
    action: &ast::AlterDomainAction,
    ctx: &mut dyn PlanContext,
) -> Result<(DomainDef, Option<Validation>, Option<String>)> {
    use ast::AlterDomainAction as A;
    let mut def = old.renewed();
    let name = &old.name;
    let mut validation = None;
    let mut notice = None;
    match action {
        A::SetDefault(e) => {
            check_default(&mut Binder::new(ctx), e, old.base)?;
            def.default = Some(e.to_string());
        }
        A::DropDefault => def.default = None,
        A::SetNotNull => {
            if !old.not_null {
                def.not_null = true;
                validation = Some(Validation::NotNull);
            }
        }
        A::DropNotNull => def.not_null = false,
        A::AddCheck {
            name: cname,
            expr,
            not_valid,
        } => {
            check_condition(&mut Binder::new(ctx), expr, old.base)?;
            let cname = match cname {
                Some(n) if def.checks.iter().any(|c| &c.name == n) => {
                    return Err(err!(
                        DuplicateObject,
                        "constraint \"{n}\" for domain \"{name}\" already exists"
                    ))
                }
                Some(n) => n.clone(),
                None => choose_check_name(name, &def.checks),
            };
            def.checks.push(DomainCheck {
                comment: None,
                name: cname,
                expr: expr.to_string(),
            });
            if !not_valid {
                validation = Some(Validation::Checks);
            }
        }
        A::DropConstraint {
            if_exists, name: c, ..
        } => match def.checks.iter().position(|k| &k.name == c) {
            Some(pos) => {
                def.checks.remove(pos);
            }
            None if *if_exists => {
                notice = Some(format!(
                    "constraint \"{c}\" of domain \"{name}\" does not exist, skipping"
                ))
            }
            None => {
                return Err(err!(
                    UndefinedObject,
                    "constraint \"{c}\" of domain \"{name}\" does not exist"
                ))
            }
        },
        A::RenameConstraint(from, to) => {
            if def.checks.iter().any(|k| &k.name == to) {
                return Err(err!(
                    DuplicateObject,
                    "constraint \"{to}\" for domain \"{name}\" already exists"
                ));
            }
            let Some(k) = def.checks.iter_mut().find(|k| &k.name == from) else {
                return Err(err!(
                    UndefinedObject,
                    "constraint \"{from}\" for domain \"{name}\" does not exist"
                ));
            };
            k.name = to.clone();
        }
        A::Rename(_) => {
            return Err(err!(
                FeatureNotSupported,
                "ALTER DOMAIN ... RENAME TO is not supported"
            ))
        }
    }
    Ok((def, validation, notice))
}

/// The first of `<domain>_check`, `<domain>_check1`, ... no constraint
/// of `checks` has (PostgreSQL's `ChooseConstraintName`).
fn choose_check_name(domain: &str, checks: &[DomainCheck]) -> String {
    let taken = |n: &str| checks.iter().any(|c| c.name == n);
    let first = format!("{domain}_check");
    if !taken(&first) {
        return first;
    }
    (1..)
        .map(|k| format!("{domain}_check{k}"))
        .find(|n| !taken(n))
        .unwrap_or(first)
}

impl DdlContext<'_> {
    /// CREATE DOMAIN: adds `def` (made by [`define_domain`]).
    pub fn create_domain(&mut self, mut def: DomainDef) -> Result<()> {
        let cv = self.view();
        // A shell type is completed by the domain (PostgreSQL's TypeCreate).
        let base = self.catalog.lookup_base_type(&cv, &def.name);
        if let Some(shell) = base.as_ref().filter(|b| b.storage.is_none()) {
            self.catalog
                .replace_base_type(&cv, self.xid, shell.oid, None)?;
        } else if self.catalog.lookup_domain(&cv, &def.name).is_some() || base.is_some() {
            return Err(err!(
                DuplicateObject,
                "type \"{}\" already exists",
                def.name
            ));
        }
        def.oid = self.catalog.next_oid();
        self.catalog.create_domain(self.xid, def);
        *self.catalog_changed = true;
        Ok(())
    }

    /// ALTER DOMAIN: replaces the domain's definition by `def` (made by
    /// [`alter_domain_def`], the stored values already validated).
    pub fn alter_domain(&mut self, def: DomainDef) -> Result<()> {
        let cv = self.view();
        self.catalog
            .replace_domain(&cv, self.xid, def.oid, Some(def))?;
        *self.catalog_changed = true;
        Ok(())
    }

    /// DROP DOMAIN [IF EXISTS] ...: removes each domain. Returns the
    /// NOTICEs of those skipped.
    pub fn drop_domain(&mut self, d: &ast::DropDomain) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        let mut oids = Vec::new();
        for n in &d.names {
            let name = &n.name;
            let cv = self.view();
            let Some(def) = self.catalog.lookup_domain(&cv, name) else {
                if data_type(&ast::DataType::Named(name.clone())).is_ok()
                    || self.catalog.lookup_base_type(&cv, name).is_some()
                {
                    return Err(err!(WrongObjectType, "\"{name}\" is not a domain"));
                }
                if d.if_exists {
                    notices.push(format!("type \"{name}\" does not exist, skipping"));
                    continue;
                }
                return Err(err!(UndefinedObject, "type \"{name}\" does not exist"));
            };
            let users = self.domain_users(name);
            if !users.is_empty() {
                if d.cascade {
                    return Err(err!(
                        FeatureNotSupported,
                        "DROP DOMAIN ... CASCADE of a domain that columns use is not supported"
                    ));
                }
                return Err(err!(
                    DependentObjectsStillExist,
                    "cannot drop type {name} because other objects depend on it"
                )
                .with_detail(users.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            oids.push(def.oid);
        }
        let cv = self.view();
        for oid in oids {
            self.catalog.replace_domain(&cv, self.xid, oid, None)?;
        }
        *self.catalog_changed = true;
        Ok(notices)
    }

    /// The columns of domain `name`, as PostgreSQL's DETAIL lists them
    /// (tables by creation, each table's columns last first).
    fn domain_users(&self, name: &str) -> Vec<String> {
        let cv = self.view();
        let mut tables = self.catalog.tables(&cv);
        tables.sort_by_key(|t| t.oid);
        let mut out = Vec::new();
        for t in tables {
            for c in t.columns.iter().rev() {
                if c.domain.as_deref() == Some(name) {
                    out.push(format!(
                        "column {} of table {} depends on type {name}",
                        c.name, t.name
                    ));
                }
            }
        }
        for d in self.catalog.domains(&cv) {
            if d.parent.as_deref() == Some(name) {
                out.push(format!("type {} depends on type {name}", d.name));
            }
        }
        let is = |d: &Option<String>| d.as_deref() == Some(name);
        for f in self.catalog.functions(&cv) {
            if is(&f.ret_domain) || f.args.iter().any(|a| is(&a.domain)) {
                let sig = super::operatorcmds::function_signature(&f);
                out.push(format!("function {sig} depends on type {name}"));
            }
        }
        for o in self.catalog.operators(&cv) {
            if is(&o.left_domain) || is(&o.right_domain) {
                out.push(format!("operator {} depends on type {name}", o.signature()));
            }
        }
        out
    }
}
