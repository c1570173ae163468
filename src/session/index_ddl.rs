//! The index commands as the session runs them: CREATE/DROP INDEX,
//! REINDEX, ALTER TABLE's constraints, and the index parts of CREATE TABLE
//! and TRUNCATE. Each takes the statement's snapshot, fills a
//! [`DdlContext`] from the transaction (its xid, its table locker, the
//! files to drop at its end) and calls its command
//! ([`crate::commands::indexcmds`], [`crate::commands::tablecmds`]); what they return becomes the command tag
//! and its NOTICEs. Also: the statement context the B-tree inspection
//! functions read through ([`BtreeReader`]).

use heapdb_grammar::ast;

use std::sync::Arc;

use super::{Notice, QueryResult, Session, StmtCtx, TableLocker};
use crate::access::heap::HeapRelation;
use crate::catalog::Catalog;
use crate::commands::context::DdlContext;
use crate::commands::inspect_btree::BtreeReader;
use crate::error::Result;
use crate::storage::BufferPool;
use crate::txn::{Snapshot, TxnManager};
use crate::wal::Wal;

impl Session {
    /// Runs `f` with a [`DdlContext`] of the current transaction under
    /// `snap` (the transaction gets its xid first).
    pub(super) fn with_ddl<R>(
        &mut self,
        snap: &Snapshot,
        f: impl FnOnce(&mut DdlContext<'_>) -> Result<R>,
    ) -> Result<R> {
        let xid = self.assign_xid()?;
        let t = self
            .txn
            .as_mut()
            .expect("a statement runs inside a transaction");
        let locker = TableLocker {
            owner: t.owner,
            xid: t.xid,
            isolation: t.isolation,
            cancel: &self.cancel,
            restart: &self.restart,
            temp_ns: self.temp_ns,
        };
        let db = &self.db;
        let open_table = |name: &str, mode| locker.open(db, snap, name, mode);
        let relation = |rel: u32| db.relation(rel);
        let create = |rel: u32| db.create_relation_in(rel, xid);
        let mut ctx = DdlContext {
            xid,
            cid: t.cid,
            snapshot: snap,
            catalog: &db.catalog,
            txns: &db.txns,
            pool: &db.pool,
            wal: &db.wal,
            data_dir: &db.dir,
            settings: &self.settings,
            lookup: &open_table,
            open_relation: &relation,
            create_relation: &create,
            temp_ns: self.temp_ns,
            ring_sizes: crate::database::ring_sizes(&self.settings),
            catalog_changed: &mut t.catalog_changed,
            drop_on_commit: &mut t.drop_on_commit,
            drop_on_abort: &mut t.drop_on_abort,
        };
        f(&mut ctx)
    }

    pub(crate) fn create_index(&mut self, c: &ast::CreateIndex) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.create_index(c))?;
        Ok(with_notices("CREATE INDEX", notices))
    }

    pub(crate) fn drop_index(&mut self, d: &ast::DropIndex) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_index(d))?;
        Ok(with_notices("DROP INDEX", notices))
    }

    pub(crate) fn alter_table(&mut self, a: &ast::AlterTable) -> Result<QueryResult> {
        if a.actions.iter().any(super::alter_column::is_column_action) {
            return self.alter_table_columns(a);
        }
        let notices = self.alter_table_notices(a)?;
        Ok(with_notices("ALTER TABLE", notices))
    }

    /// ALTER TABLE of constraint actions only; its NOTICEs.
    pub(super) fn alter_table_notices(&mut self, a: &ast::AlterTable) -> Result<Vec<String>> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.alter_table(a))?;
        let checks_rows = a.actions.iter().any(|x| {
            matches!(
                x,
                ast::AlterTableAction::AddForeignKey {
                    not_valid: false,
                    ..
                } | ast::AlterTableAction::ValidateConstraint { .. }
            )
        });
        if checks_rows {
            self.fk_validate_table(&a.table)?;
        }
        let validates = a.actions.iter().any(|x| {
            matches!(
                x,
                ast::AlterTableAction::AddCheck(ast::CheckConstraint {
                    not_valid: false,
                    ..
                }) | ast::AlterTableAction::ValidateConstraint { .. }
                    | ast::AlterTableAction::SetNotNull { set: true, .. }
            )
        });
        if validates {
            self.validate_table_rows(&a.table)?;
        }
        Ok(notices)
    }

    /// Checks the live rows of table `name` against its NOT NULL columns
    /// and validated CHECK constraints (after ALTER TABLE changed them).
    fn validate_table_rows(&mut self, name: &ast::ObjectName) -> Result<()> {
        let snap = self.statement_snapshot();
        let qualified = crate::catalog::qualified_name(name.schema.as_deref(), &name.name);
        let Some(table) = self
            .db
            .catalog
            .lookup(&self.catalog_view(&snap), &qualified)
        else {
            return Ok(());
        };
        let rel = self.db.relation(table.relfilenode)?;
        let ctx = self.modify_ctx(&snap);
        let mut chunk: Vec<Vec<crate::types::Value>> = Vec::new();
        crate::exec::fkey::live_rows(&ctx, &table, &rel, &mut |row| {
            chunk.push(row.to_vec());
            if chunk.len() >= 1024 {
                crate::exec::modify::validate_rows(&table, &chunk)?;
                chunk.clear();
            }
            Ok(())
        })?;
        crate::exec::modify::validate_rows(&table, &chunk)
    }

    pub(crate) fn reindex(&mut self, r: &ast::Reindex) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        self.with_ddl(&snap, |ctx| ctx.reindex(r))?;
        Ok(QueryResult::empty("REINDEX"))
    }
}

/// The B-tree inspection functions read through the statement's context.
impl BtreeReader for StmtCtx<'_> {
    fn snapshot(&self) -> &Snapshot {
        self.snapshot
    }

    fn txns(&self) -> &TxnManager {
        &self.db.txns
    }

    fn catalog(&self) -> &Catalog {
        &self.db.catalog
    }

    fn pool(&self) -> &Arc<BufferPool> {
        &self.db.pool
    }

    fn wal(&self) -> &Arc<Wal> {
        &self.db.wal
    }

    fn relation(&self, relfilenode: u32) -> Result<Arc<HeapRelation>> {
        self.db.relation(relfilenode)
    }
}

/// An empty result tagged `tag` carrying `notices` as NOTICEs.
pub(super) fn with_notices(tag: &str, notices: Vec<String>) -> QueryResult {
    let mut r = QueryResult::empty(tag);
    r.notices.extend(notices.into_iter().map(Notice::notice));
    r
}
