//! A session's temporary tables (PostgreSQL's `pg_temp_N` namespace):
//! where CREATE TABLE puts a table, the ON COMMIT actions run before each
//! commit, and the drop of every temporary table when the session ends.
//!
//! Invariants:
//! - the session claims a namespace number from its [`Database`] at its
//!   first temporary table and gives it back only once none of its tables
//!   is left (a namespace with tables in it is never shared);
//! - a temporary table is visible to its own session only
//!   ([`crate::catalog::CatalogView::temp_ns`]) and found before a
//!   permanent table of the same name;
//! - ending the session (dropping the [`Session`]) drops its temporary
//!   tables in a transaction of their own; a process that dies first leaves
//!   them to the next open, which drops them ([`Database::open_with`]).
//!
//! [`Database`]: crate::database::Database
//! [`Database::open_with`]: crate::database::Database::open_with

use heapdb_grammar::ast;

use super::Session;
use crate::err;
use crate::error::Result;
use crate::plan::bind::at;
use crate::storage::{ForkNumber, RelFileNode};

impl Session {
    /// Whether CREATE TABLE `name` makes a temporary table (`TEMP`, or the
    /// schema `pg_temp` written), checking the clauses as PostgreSQL's
    /// `RangeVarAdjustRelationPersistence` and `DefineRelation` do. A
    /// temporary table's session gets its namespace here.
    pub(crate) fn creates_temp(
        &mut self,
        name: &ast::ObjectName,
        temp: bool,
        on_commit: Option<ast::OnCommit>,
    ) -> Result<bool> {
        let schema = name.schema.as_deref();
        let temp = temp || schema == Some("pg_temp");
        if temp && schema.is_some_and(|s| s != "pg_temp") {
            return Err(at(
                err!(
                    InvalidTableDefinition,
                    "cannot create temporary relation in non-temporary schema"
                ),
                name.offset,
            ));
        }
        if !temp && on_commit.is_some() {
            return Err(err!(
                InvalidTableDefinition,
                "ON COMMIT can only be used on temporary tables"
            ));
        }
        if temp && self.temp_ns == 0 {
            self.temp_ns = self.db.claim_temp_namespace();
        }
        Ok(temp)
    }

    /// Notes table `oid`'s ON COMMIT clause, when it asks for an action.
    pub(crate) fn note_on_commit(&mut self, oid: u32, on_commit: Option<ast::OnCommit>) {
        if let Some(a @ (ast::OnCommit::DeleteRows | ast::OnCommit::Drop)) = on_commit {
            self.on_commit.push((oid, a));
        }
    }

    /// Runs the ON COMMIT actions of the session's temporary tables inside
    /// the committing transaction: `DROP` drops the table (with what
    /// depends on it), `DELETE ROWS` empties a table that has pages.
    /// Entries whose table no longer exists are forgotten.
    pub(crate) fn on_commit_actions(&mut self) -> Result<()> {
        if self.on_commit.is_empty() || self.txn.is_none() {
            return Ok(());
        }
        let snap = self.statement_snapshot();
        let view = self.catalog_view(&snap);
        let (mut drop, mut empty) = (Vec::new(), Vec::new());
        let mut kept = Vec::with_capacity(self.on_commit.len());
        for &(oid, action) in &self.on_commit {
            let Some(def) = self.db.catalog.by_oid(&view, oid) else {
                continue;
            };
            kept.push((oid, action));
            let name = ast::ObjectName::new(def.name.clone());
            match action {
                ast::OnCommit::Drop => drop.push(name),
                _ => {
                    let rel = RelFileNode(def.relfilenode);
                    if self.db.pool.nblocks(rel, ForkNumber::Main).unwrap_or(1) > 0 {
                        empty.push(name);
                    }
                }
            }
        }
        self.on_commit = kept;
        if !empty.is_empty() {
            let t = ast::Truncate {
                only: vec![true; empty.len()],
                names: empty,
                cascade: false,
            };
            self.with_ddl(&snap, |ctx| ctx.truncate(&t))?;
        }
        if !drop.is_empty() {
            let d = ast::DropTable {
                if_exists: true,
                names: drop,
                cascade: true,
            };
            self.with_ddl(&snap, |ctx| ctx.drop_table(&d))?;
        }
        Ok(())
    }

    /// Drops every temporary table of the session in a transaction of its
    /// own and gives its namespace back (the session is ending). A failure
    /// keeps the namespace claimed: its tables stay until the next open.
    pub(crate) fn drop_temp_namespace(&mut self) {
        if self.temp_ns == 0 {
            return;
        }
        let names = self.db.catalog.temp_tables(self.temp_ns);
        if !names.is_empty() {
            let list: Vec<String> = names
                .iter()
                .map(|n| format!("pg_temp.\"{}\"", n.replace('"', "\"\"")))
                .collect();
            let sql = format!("DROP TABLE IF EXISTS {} CASCADE", list.join(", "));
            if self.execute(&sql).is_err() {
                return;
            }
        }
        if self.db.catalog.temp_tables(self.temp_ns).is_empty() {
            self.db.release_temp_namespace(self.temp_ns);
            self.temp_ns = 0;
            self.on_commit.clear();
        }
    }

    /// The name of the session's temporary namespace as psql shows it
    /// (`pg_temp_3`), when it has one.
    pub fn temp_schema_name(&self) -> Option<String> {
        (self.temp_ns != 0).then(|| format!("pg_temp_{}", self.temp_ns))
    }
}
