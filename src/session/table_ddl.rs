//! The table and view commands as the session runs them: CREATE TABLE
//! [AS], DROP TABLE, TRUNCATE, CREATE [OR REPLACE] VIEW, DROP VIEW and
//! COMMENT ON.
//! Each takes the statement's snapshot, does the parts that need no xid
//! (IF NOT EXISTS, binding column definitions or a query through the
//! statement's planning context), then fills a
//! [`DdlContext`](crate::commands::context::DdlContext) from the
//! transaction ([`Session::with_ddl`]) and calls its command in
//! [`crate::commands::createtable`] or [`crate::commands::view`]; what
//! they return becomes the command tag and its NOTICEs.

use std::time::Instant;

use heapdb_grammar::ast;

use super::index_ddl::with_notices;
use super::{QueryResult, Session};
use crate::commands::{createtable, view};
use crate::error::Result;

impl Session {
    pub(crate) fn create_table(&mut self, c: &ast::CreateTable) -> Result<QueryResult> {
        let temp = self.creates_temp(&c.name, c.temp, c.on_commit)?;
        let snap = self.statement_snapshot();
        let cv = self.catalog_view(&snap);
        if let Some(n) =
            createtable::skip_existing(&self.db.catalog, &cv, &c.name, c.if_not_exists, temp)?
        {
            return Ok(with_notices("CREATE TABLE", vec![n]));
        }
        if super::sequence::has_serial(c) {
            let oid = self.create_table_with_serials(c, temp)?;
            self.note_on_commit(oid, c.on_commit);
            return Ok(QueryResult::empty("CREATE TABLE"));
        }
        let mut spec = createtable::define_columns(c, &mut self.stmt_ctx(&snap))?;
        let notices = std::mem::take(&mut spec.notices);
        // The new entry and its constraints' indexes are written and read
        // back under a snapshot that knows the transaction's xid.
        self.assign_xid()?;
        let snap = self.statement_snapshot();
        let oid = self.with_ddl(&snap, |ctx| ctx.create_table(&c.name.name, spec, temp))?;
        self.note_on_commit(oid, c.on_commit);
        Ok(with_notices("CREATE TABLE", notices))
    }

    pub(crate) fn create_table_as(&mut self, c: &ast::CreateTableAs) -> Result<QueryResult> {
        let t0 = Instant::now();
        let temp = self.creates_temp(&c.name, c.temp, c.on_commit)?;
        let snap = self.statement_snapshot();
        let cv = self.catalog_view(&snap);
        if let Some(n) =
            createtable::skip_existing(&self.db.catalog, &cv, &c.name, c.if_not_exists, temp)?
        {
            return Ok(with_notices("CREATE TABLE AS", vec![n]));
        }
        let plan = self.plan_query(&c.query, &snap)?;
        let columns = createtable::query_columns(c, &plan)?;
        let exec_ctx = self.stmt_ctx(&snap).exec_context(&plan)?;
        let (oid, count) = self.with_ddl(&snap, |ctx| {
            ctx.create_table_as(&c.name.name, columns, &plan, &exec_ctx, temp)
        })?;
        self.note_on_commit(oid, c.on_commit);
        let mut r = QueryResult::empty(&format!("SELECT {count}"));
        r.timing.execute = t0.elapsed();
        Ok(r)
    }

    pub(crate) fn drop_table(&mut self, d: &ast::DropTable) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_table(d))?;
        Ok(with_notices("DROP TABLE", notices))
    }

    pub(crate) fn truncate(&mut self, t: &ast::Truncate) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.truncate(t))?;
        Ok(with_notices("TRUNCATE TABLE", notices))
    }

    pub(crate) fn create_view(&mut self, c: &ast::CreateView) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let (columns, depends_on) = view::view_columns(c, &mut self.stmt_ctx(&snap))?;
        self.with_ddl(&snap, |ctx| ctx.create_view(c, columns, depends_on))?;
        Ok(QueryResult::empty("CREATE VIEW"))
    }

    pub(crate) fn create_function(&mut self, c: &ast::CreateFunction) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        if crate::commands::basetype::is_internal(c) {
            let notices = self.with_ddl(&snap, |ctx| ctx.create_internal_function(c))?;
            return Ok(with_notices("CREATE FUNCTION", notices));
        }
        let def = crate::commands::functioncmds::define_function(c, &mut self.stmt_ctx(&snap))?;
        self.with_ddl(&snap, |ctx| ctx.create_function(def, c.or_replace))?;
        Ok(QueryResult::empty("CREATE FUNCTION"))
    }

    pub(crate) fn alter_function(&mut self, a: &ast::AlterFunction) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        self.with_ddl(&snap, |ctx| ctx.alter_function(a))?;
        Ok(QueryResult::empty(alter_routine_tag(a.kind)))
    }

    pub(crate) fn drop_function(&mut self, d: &ast::DropFunction) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_function(d))?;
        Ok(with_notices("DROP FUNCTION", notices))
    }

    pub(crate) fn comment(&mut self, c: &ast::Comment) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        self.with_ddl(&snap, |ctx| ctx.comment(c))?;
        Ok(QueryResult::empty("COMMENT"))
    }

    pub(crate) fn drop_view(&mut self, d: &ast::DropView) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_view(d))?;
        Ok(with_notices("DROP VIEW", notices))
    }
}

/// The command tag of ALTER FUNCTION | PROCEDURE | ROUTINE.
pub(crate) fn alter_routine_tag(kind: ast::RoutineKind) -> &'static str {
    match kind {
        ast::RoutineKind::Function => "ALTER FUNCTION",
        ast::RoutineKind::Procedure => "ALTER PROCEDURE",
        ast::RoutineKind::Routine => "ALTER ROUTINE",
    }
}
