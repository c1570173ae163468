//! What a DDL command takes from the client API that starts it
//! ([`DdlContext`]): CREATE/DROP TABLE, CREATE TABLE AS, TRUNCATE,
//! CREATE/DROP VIEW, CREATE/DROP INDEX, REINDEX and ALTER TABLE. It carries the
//! statement's transaction and snapshot, the catalog, pool and log it
//! changes, how to look up and lock a table and open a heap, and the
//! transaction's bookkeeping a DDL statement adds to (the catalog changed,
//! files to remove at commit or at abort), which the session acts on at the
//! transaction's end.
//!
//! The commands sit below the session: they never look at a session's
//! state, so any front end runs them by filling in these values.

use std::path::Path;
use std::sync::Arc;

use crate::access::heap::HeapRelation;
use crate::catalog::{Catalog, CatalogView, TableDef};
use crate::error::Result;
use crate::storage::{BufferPool, RingSizes};
use crate::txn::{LockMode, Snapshot, TxnManager, Xid};
use crate::wal::Wal;

/// Looks up a table by name under the statement's snapshot and locks it in
/// the mode given for the rest of the transaction.
pub type OpenTable<'a> = &'a dyn Fn(&str, LockMode) -> Result<Arc<TableDef>>;

/// The open heap of a relation file.
pub type OpenRelation<'a> = &'a dyn Fn(u32) -> Result<Arc<HeapRelation>>;

/// Creates the files of a new heap for the transaction (its create record
/// logged and flushed first; the transaction's own writes to it unlogged
/// until its commit writes and syncs the files) and opens it.
pub type CreateRelation<'a> = &'a dyn Fn(u32) -> Result<Arc<HeapRelation>>;

/// The statement a DDL command runs in, as its caller hands it down.
pub struct DdlContext<'a> {
    /// The transaction (assigned).
    pub xid: Xid,
    /// The statement's command id within it (rows it writes carry it).
    pub cid: u32,
    /// The statement's snapshot: the catalog entries and rows it sees.
    pub snapshot: &'a Snapshot,
    /// The catalog the command changes.
    pub catalog: &'a Catalog,
    /// The transactions' states.
    pub txns: &'a TxnManager,
    /// The buffer pool the indexes are written through.
    pub pool: &'a Arc<BufferPool>,
    /// The log their pages and file creations go to.
    pub wal: &'a Arc<Wal>,
    /// The data directory (a new relation file's name must be free there).
    pub data_dir: &'a Path,
    /// The session's settings (`maintenance_work_mem` and the parallel
    /// build's limits).
    pub settings: &'a crate::settings::Settings,
    /// Looks up and locks a table ([`DdlContext::lookup_table`]).
    pub lookup: OpenTable<'a>,
    /// Opens a heap ([`DdlContext::relation`]).
    pub open_relation: OpenRelation<'a>,
    /// Creates a heap ([`DdlContext::create_heap`]).
    pub create_relation: CreateRelation<'a>,
    /// The session's temporary namespace (0: it has none yet), whose
    /// tables its lookups find first.
    pub temp_ns: u32,
    /// The ring sizes of the session's buffer access strategies.
    pub ring_sizes: RingSizes,
    /// Set when the command changed the catalog (written before commit).
    pub catalog_changed: &'a mut bool,
    /// Relation files to remove once the transaction commits.
    pub drop_on_commit: &'a mut Vec<u32>,
    /// Relation files to remove if it aborts.
    pub drop_on_abort: &'a mut Vec<u32>,
}

impl DdlContext<'_> {
    /// The catalog as the statement's snapshot sees it.
    pub fn view(&self) -> CatalogView<'_> {
        CatalogView {
            snapshot: self.snapshot,
            txns: self.txns,
            temp_ns: self.temp_ns,
        }
    }

    /// The table `name` as the statement's snapshot sees it, locked in
    /// `mode` for the rest of the transaction.
    pub fn lookup_table(&self, name: &str, mode: LockMode) -> Result<Arc<TableDef>> {
        (self.lookup)(name, mode)
    }

    /// The open heap of relation file `relfilenode`.
    pub fn relation(&self, relfilenode: u32) -> Result<Arc<HeapRelation>> {
        (self.open_relation)(relfilenode)
    }

    /// Creates the files of a new heap `relfilenode` in the transaction,
    /// removed again if it aborts.
    pub fn create_heap(&mut self, relfilenode: u32) -> Result<Arc<HeapRelation>> {
        let rel = (self.create_relation)(relfilenode)?;
        self.drop_on_abort.push(relfilenode);
        Ok(rel)
    }

    /// Logs the creation of relation file `relfilenode` by this transaction
    /// and flushes the record before the file is made, so recovery knows of
    /// every file a transaction that never finished may have left.
    pub fn log_relation_create(&self, relfilenode: u32) -> Result<()> {
        let lsn = self.wal.insert(
            self.xid,
            &crate::wal::WalRecord::CreateRel { rel: relfilenode },
        );
        self.wal.flush(lsn)
    }

    /// A new relation file number, unused in the data directory.
    pub fn fresh_relfilenode(&self) -> u32 {
        fresh_relfilenode(self.catalog, self.data_dir)
    }
}

/// A fresh object id from `catalog` none of whose relation files exist yet
/// under `data_dir` (as PostgreSQL's GetNewRelFileNode checks). Every fork
/// counts: a crash between the unlinks of a dropped relation's forks, or
/// after a create whose record never reached the log, can leave the
/// visibility-map file without the main one.
pub fn fresh_relfilenode(catalog: &Catalog, data_dir: &Path) -> u32 {
    let base = data_dir.join("base");
    loop {
        let oid = catalog.next_oid();
        let taken = [oid.to_string(), format!("{oid}_vm")]
            .iter()
            .any(|name| base.join(name).exists());
        if !taken {
            return oid;
        }
    }
}
