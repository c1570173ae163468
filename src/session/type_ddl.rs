//! The session's side of CREATE/DROP TYPE and CREATE/DROP CAST (the
//! commands in `commands::basetype` and `commands::castcmds`), and of
//! CREATE, ALTER and DROP DOMAIN: the statement
//! snapshot, the definition made through a planning context
//! (`commands::typecmds`), and, for an ALTER DOMAIN that tightens the
//! domain (`SET NOT NULL`, `ADD CHECK` without `NOT VALID`), a read of
//! every column of the domain the statement sees, each stored value
//! checked against the new definition before the catalog changes
//! (PostgreSQL's `validateDomainConstraint`).

use heapdb_grammar::ast;

use super::index_ddl::with_notices;
use super::{QueryResult, Session};
use crate::commands::typecmds::{alter_domain_def, define_domain, Validation};
use crate::err;
use crate::error::Result;
use crate::plan::PlanContext;
use crate::txn::Snapshot;
use crate::types::Value;

impl Session {
    pub(crate) fn create_domain(&mut self, c: &ast::CreateDomain) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let def = define_domain(c, &mut self.stmt_ctx(&snap))?;
        self.with_ddl(&snap, |ctx| ctx.create_domain(def))?;
        Ok(QueryResult::empty("CREATE DOMAIN"))
    }

    pub(crate) fn drop_domain(&mut self, d: &ast::DropDomain) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_domain(d))?;
        Ok(with_notices("DROP DOMAIN", notices))
    }

    pub(crate) fn define_type(&mut self, d: &ast::DefineType) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let warnings = self.with_ddl(&snap, |ctx| ctx.define_type(d))?;
        let mut r = QueryResult::empty("CREATE TYPE");
        r.notices
            .extend(warnings.into_iter().map(super::result::Notice::warning));
        Ok(r)
    }

    pub(crate) fn drop_type(&mut self, d: &ast::DropType) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_type(d))?;
        Ok(with_notices("DROP TYPE", notices))
    }

    pub(crate) fn create_cast(&mut self, c: &ast::CreateCast) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let warnings = self.with_ddl(&snap, |ctx| ctx.create_cast(c))?;
        let mut r = QueryResult::empty("CREATE CAST");
        r.notices
            .extend(warnings.into_iter().map(super::result::Notice::warning));
        Ok(r)
    }

    pub(crate) fn drop_cast(&mut self, d: &ast::DropCast) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_cast(d))?;
        Ok(with_notices("DROP CAST", notices))
    }

    pub(crate) fn alter_domain(&mut self, a: &ast::AlterDomain) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let name = &a.name.name;
        let (def, validation, notice) = {
            let mut ctx = self.stmt_ctx(&snap);
            let old = ctx
                .domain(name)
                .ok_or_else(|| err!(UndefinedObject, "type \"{name}\" does not exist"))?;
            alter_domain_def(&old, &a.action, &mut ctx)?
        };
        if let Some(v) = validation {
            self.validate_domain(&snap, &def, v)?;
        }
        self.with_ddl(&snap, |ctx| ctx.alter_domain(def))?;
        Ok(with_notices("ALTER DOMAIN", notice.into_iter().collect()))
    }

    /// Checks every stored value of domain `def.name`'s columns against
    /// `def` (23502 / 23514 naming the first column that fails).
    fn validate_domain(
        &mut self,
        snap: &Snapshot,
        def: &crate::catalog::DomainDef,
        v: Validation,
    ) -> Result<()> {
        // The domain's columns and those of the domains over it.
        let view = self.catalog_view(snap);
        let mut names = vec![def.name.clone()];
        let domains = self.db.catalog.domains(&view);
        let mut k = 0;
        while k < names.len() {
            for d in &domains {
                if d.parent.as_deref() == Some(names[k].as_str()) && !names.contains(&d.name) {
                    names.push(d.name.clone());
                }
            }
            k += 1;
        }
        let mut columns = Vec::new();
        for t in self.db.catalog.tables(&view) {
            for c in &t.columns {
                if c.domain.as_ref().is_some_and(|d| names.contains(d)) {
                    columns.push((t.name.clone(), c.name.clone()));
                }
            }
        }
        if columns.is_empty() {
            return Ok(());
        }
        let check = {
            let mut ctx = self.stmt_ctx(snap);
            crate::plan::bind::Binder::new(&mut ctx).domain_check_fn(def)?
        };
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        for (table, column) in columns {
            let sql = format!("SELECT {} FROM {}", quote(&column), quote(&table));
            let stmt = heapdb_grammar::parse_one(&sql).map_err(super::parse_error)?;
            let ast::Statement::Query(q) = stmt else {
                return Err(err!(InternalError, "not a query: {sql}"));
            };
            let fail = || {
                match v {
                Validation::NotNull => err!(
                    NotNullViolation,
                    "column \"{column}\" of table \"{table}\" contains null values"
                ),
                Validation::Checks => err!(
                    CheckViolation,
                    "column \"{column}\" of table \"{table}\" contains values that violate the new constraint"
                ),
            }
            };
            self.run_query(&q, &mut |_, b| {
                for i in 0..b.len {
                    let value: Value = b.columns[0].get(i);
                    if check(&value).is_err() {
                        return Err(fail());
                    }
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}
