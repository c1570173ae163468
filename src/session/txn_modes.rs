//! Transaction characteristics: READ ONLY / READ WRITE, DEFERRABLE, the
//! isolation level's defaults, and `COMMIT/ROLLBACK AND CHAIN`.
//!
//! A transaction takes its characteristics from BEGIN's modes, else from
//! the `default_transaction_*` settings, and `SET TRANSACTION` (or `SET
//! transaction_read_only`) may change them before its first query, as
//! PostgreSQL's `check_transaction_*` hooks allow. A READ ONLY transaction
//! refuses what PostgreSQL's `PreventCommandIfReadOnly` and
//! `ExecCheckXactReadOnly` refuse, with 25006 `cannot execute CMD in a
//! read-only transaction`: every CREATE, ALTER, DROP and TRUNCATE, and
//! INSERT, UPDATE, DELETE and COPY FROM into a table that is not
//! temporary. The check runs before the statement does anything, so a
//! refused statement changes nothing. `AND CHAIN` starts the next block
//! with the same characteristics.

use heapdb_grammar::ast;

use super::{Isolation, QueryResult, Session, TxnStatus};
use crate::err;
use crate::error::Result;

/// A transaction's characteristics, carried over by `AND CHAIN`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Characteristics {
    pub isolation: Isolation,
    pub read_only: bool,
    pub deferrable: bool,
}

/// The PostgreSQL command name of a statement a READ ONLY transaction
/// refuses, with the table it writes when temporary tables are exempt.
fn refused(stmt: &ast::Statement) -> Option<(&'static str, Option<&ast::ObjectName>)> {
    use ast::Statement as S;
    Some(match stmt {
        S::Insert(i) => ("INSERT", Some(&i.table)),
        S::Update(u) => ("UPDATE", Some(&u.table)),
        S::Delete(d) => ("DELETE", Some(&d.table)),
        S::Copy(c) if c.direction == ast::CopyDirection::From => match &c.source {
            ast::CopySource::Table { name, .. } => ("COPY FROM", Some(name)),
            ast::CopySource::Query(_) => return None,
        },
        S::Explain(e) if e.options.analyze => return refused(&e.statement),
        S::CreateTable(_) => ("CREATE TABLE", None),
        S::CreateTableAs(_) => ("CREATE TABLE AS", None),
        S::CreateView(_) => ("CREATE VIEW", None),
        S::DropView(_) => ("DROP VIEW", None),
        S::CreateFunction(_) => ("CREATE FUNCTION", None),
        S::DropFunction(_) => ("DROP FUNCTION", None),
        S::AlterFunction(a) => (super::table_ddl::alter_routine_tag(a.kind), None),
        S::CreateDomain(_) => ("CREATE DOMAIN", None),
        S::DropDomain(_) => ("DROP DOMAIN", None),
        S::AlterDomain(_) => ("ALTER DOMAIN", None),
        S::CreateOperator(_) => ("CREATE OPERATOR", None),
        S::DropOperator(_) => ("DROP OPERATOR", None),
        S::DefineType(_) => ("CREATE TYPE", None),
        S::DropType(_) => ("DROP TYPE", None),
        S::CreateCast(_) => ("CREATE CAST", None),
        S::DropCast(_) => ("DROP CAST", None),
        S::DropTable(_) => ("DROP TABLE", None),
        S::Truncate(_) => ("TRUNCATE TABLE", None),
        S::CreateIndex(_) => ("CREATE INDEX", None),
        S::DropIndex(_) => ("DROP INDEX", None),
        S::AlterTable(_) => ("ALTER TABLE", None),
        S::CreateSequence(_) => ("CREATE SEQUENCE", None),
        S::AlterSequence(_) => ("ALTER SEQUENCE", None),
        S::DropSequence(_) => ("DROP SEQUENCE", None),
        S::Comment(_) => ("COMMENT", None),
        _ => return None,
    })
}

impl Session {
    /// Whether the current (or next) transaction is READ ONLY.
    pub(crate) fn read_only_now(&self) -> bool {
        match &self.txn {
            Some(t) => t.read_only,
            None => self.settings.default_transaction_read_only,
        }
    }

    /// PostgreSQL's 25006 error when `stmt` may not run in the current
    /// (READ ONLY) transaction.
    pub(crate) fn check_read_only(&self, stmt: &ast::Statement) -> Result<()> {
        if !self.read_only_now() || self.txn_status() == TxnStatus::Failed {
            return Ok(());
        }
        let Some((command, target)) = refused(stmt) else {
            return Ok(());
        };
        if let Some(name) = target {
            let temp = match name.schema.as_deref() {
                Some("pg_temp") => true,
                Some(_) => false,
                None => self
                    .db
                    .catalog
                    .temp_tables(self.temp_ns)
                    .contains(&name.name),
            };
            if temp {
                return Ok(());
            }
        }
        Err(err!(
            ReadOnlySqlTransaction,
            "cannot execute {command} in a read-only transaction"
        ))
    }

    /// The characteristics a new transaction takes from `modes`, else from
    /// the `default_transaction_*` settings.
    pub(crate) fn characteristics_of(
        &self,
        modes: &ast::TransactionModes,
    ) -> Result<Characteristics> {
        let isolation = match super::isolation_of(modes)? {
            Some(i) => i,
            None => self.default_isolation()?,
        };
        Ok(Characteristics {
            isolation,
            read_only: modes
                .read_only
                .unwrap_or(self.settings.default_transaction_read_only),
            deferrable: modes
                .deferrable
                .unwrap_or(self.settings.default_transaction_deferrable),
        })
    }

    /// `default_transaction_isolation` as an isolation heapdb runs.
    pub(crate) fn default_isolation(&self) -> Result<Isolation> {
        let level = match self.settings.default_transaction_isolation {
            0 => ast::IsolationLevel::Serializable,
            1 => ast::IsolationLevel::RepeatableRead,
            _ => ast::IsolationLevel::ReadCommitted,
        };
        let modes = ast::TransactionModes {
            isolation: Some(level),
            ..Default::default()
        };
        Ok(super::isolation_of(&modes)?.unwrap_or(Isolation::ReadCommitted))
    }

    /// The current transaction's characteristics.
    pub(crate) fn characteristics(&self) -> Characteristics {
        let t = self.txn_ref();
        Characteristics {
            isolation: t.isolation,
            read_only: t.read_only,
            deferrable: t.deferrable,
        }
    }

    /// Starts a block with `c`, as BEGIN does.
    pub(crate) fn begin_with(&mut self, c: Characteristics) -> Result<()> {
        self.start_txn(true, Some(c.isolation))?;
        let t = self.txn_mut();
        t.read_only = c.read_only;
        t.deferrable = c.deferrable;
        // A block gets its xid at once, so that its snapshot (taken by the
        // first statement) already knows it.
        self.assign_xid()?;
        Ok(())
    }

    /// `SET TRANSACTION modes`: each may change only before the first
    /// query, except READ ONLY, which may always be set.
    pub(crate) fn set_transaction(&mut self, modes: &ast::TransactionModes) -> Result<QueryResult> {
        let isolation = super::isolation_of(modes)?;
        let t = self.txn_mut();
        let queried = t.snapshot.is_some() && t.cid > 0;
        if queried && isolation.is_some_and(|i| i != t.isolation) {
            return Err(err!(
                ActiveSqlTransaction,
                "SET TRANSACTION ISOLATION LEVEL must be called before any query"
            ));
        }
        if queried && modes.read_only == Some(false) && t.read_only {
            return Err(err!(
                ActiveSqlTransaction,
                "transaction read-write mode must be set before any query"
            ));
        }
        if queried && modes.deferrable.is_some_and(|d| d != t.deferrable) {
            return Err(err!(
                ActiveSqlTransaction,
                "SET TRANSACTION [NOT] DEFERRABLE must be called before any query"
            ));
        }
        if let Some(i) = isolation {
            t.isolation = i;
        }
        if let Some(r) = modes.read_only {
            t.read_only = r;
        }
        if let Some(d) = modes.deferrable {
            t.deferrable = d;
        }
        Ok(QueryResult::empty("SET"))
    }

    /// `SET transaction_isolation / transaction_read_only /
    /// transaction_deferrable = value`: SET TRANSACTION by another name.
    /// `None` for any other setting.
    pub(crate) fn set_transaction_setting(
        &mut self,
        name: &str,
        value: &str,
    ) -> Option<Result<QueryResult>> {
        let mut modes = ast::TransactionModes::default();
        let flag = || crate::settings::parse_bool(value).ok_or(());
        match name.to_ascii_lowercase().as_str() {
            // Refused when set, as BEGIN ISOLATION LEVEL SERIALIZABLE is,
            // rather than in every later statement.
            "default_transaction_isolation"
                if value.trim().eq_ignore_ascii_case("serializable") =>
            {
                modes.isolation = Some(ast::IsolationLevel::Serializable);
                return Some(super::isolation_of(&modes).map(|_| QueryResult::empty("SET")));
            }
            "default_transaction_isolation" => return None,
            "transaction_isolation" => {
                let level = match value.trim().to_ascii_lowercase().as_str() {
                    "serializable" => ast::IsolationLevel::Serializable,
                    "repeatable read" => ast::IsolationLevel::RepeatableRead,
                    "read committed" => ast::IsolationLevel::ReadCommitted,
                    "read uncommitted" => ast::IsolationLevel::ReadUncommitted,
                    _ => return Some(Err(invalid(name, value))),
                };
                modes.isolation = Some(level);
            }
            "transaction_read_only" => match flag() {
                Ok(b) => modes.read_only = Some(b),
                Err(()) => return Some(Err(not_bool(name))),
            },
            "transaction_deferrable" => match flag() {
                Ok(b) => modes.deferrable = Some(b),
                Err(()) => return Some(Err(not_bool(name))),
            },
            _ => return None,
        }
        Some(self.set_transaction(&modes))
    }

    /// SHOW's value of the `transaction_*` pseudo-settings (`None`: not one).
    pub(crate) fn show_transaction_setting(&self, name: &str) -> Option<String> {
        let c = match &self.txn {
            Some(_) => self.characteristics(),
            None => return None,
        };
        let on = |b: bool| if b { "on" } else { "off" }.to_string();
        Some(match name {
            "transaction_isolation" => match c.isolation {
                Isolation::RepeatableRead => "repeatable read".to_string(),
                _ => "read committed".to_string(),
            },
            "transaction_read_only" => on(c.read_only),
            "transaction_deferrable" => on(c.deferrable),
            _ => return None,
        })
    }

    /// `COMMIT [AND CHAIN]`.
    pub(crate) fn commit_block(&mut self, chain: bool) -> Result<QueryResult> {
        let status = self.txn_status();
        if chain && status == TxnStatus::Idle {
            return Err(err!(
                NoActiveSqlTransaction,
                "COMMIT AND CHAIN can only be used in transaction blocks"
            ));
        }
        let kept = (status != TxnStatus::Idle).then(|| self.characteristics());
        let r = self.commit_block_plain()?;
        if let (true, Some(c)) = (chain, kept) {
            self.begin_with(c)?;
        }
        Ok(r)
    }

    /// `ROLLBACK [AND CHAIN]`.
    pub(crate) fn rollback_block(&mut self, chain: bool) -> Result<QueryResult> {
        let status = self.txn_status();
        if chain && status == TxnStatus::Idle {
            return Err(err!(
                NoActiveSqlTransaction,
                "ROLLBACK AND CHAIN can only be used in transaction blocks"
            ));
        }
        let kept = (status != TxnStatus::Idle).then(|| self.characteristics());
        let r = self.rollback_block_plain()?;
        if let (true, Some(c)) = (chain, kept) {
            self.begin_with(c)?;
        }
        Ok(r)
    }
}

/// PostgreSQL's 22023 for a Boolean setting given another word.
fn not_bool(name: &str) -> crate::error::Error {
    err!(
        InvalidParameterValue,
        "parameter \"{name}\" requires a Boolean value"
    )
}

/// PostgreSQL's 22023 for a bad value of a `transaction_*` setting.
fn invalid(name: &str, value: &str) -> crate::error::Error {
    err!(
        InvalidParameterValue,
        "invalid value for parameter \"{name}\": \"{value}\""
    )
}
