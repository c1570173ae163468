//! VACUUM and ANALYZE as statements: name resolution, the transaction
//! structure, the catalog update of a table's statistics, and VERBOSE
//! output as PostgreSQL's `INFO` messages. The work itself is in
//! [`crate::commands`].
//!
//! Transactions and locks, as PostgreSQL's `vacuum()`: the tables are
//! resolved first (a named one under a transient `AccessShare` lock, as
//! `expand_vacuum_rel`, so a name being dropped is waited for and then
//! reported missing), then each table is processed in a transaction of its
//! own: lock it `ShareUpdateExclusive`, take a snapshot, find it again by
//! oid (one dropped meanwhile is skipped, with a WARNING when the
//! statement named it), do the work, commit, which lets go of the lock
//! before the next table is locked. So a whole-database VACUUM holds at
//! most one table lock at any time and cannot be part of a deadlock, and
//! a DROP TABLE waits for the one table being processed. VACUUM refuses
//! to run inside a transaction block (25001); ANALYZE inside one runs in
//! the block's transaction and keeps its locks to the end, as
//! PostgreSQL's does.
//!
//! Statistics: a table's row and page estimates, and outside a
//! transaction block ANALYZE's column statistics too, are set in place
//! ([`crate::catalog::Catalog::set_stats_in_place`], PostgreSQL's
//! `heap_inplace_update` of `pg_class`): no new catalog version and no
//! transaction id, so nothing a concurrent DROP, TRUNCATE or ALTER can
//! find changed under it (VACUUM of a clean table writes nothing at all).
//! ANALYZE inside a block stores its column statistics as a new version
//! of the table's definition, undone if the block rolls back (PostgreSQL's
//! `pg_statistic` rows), while the estimates stay, as PostgreSQL's do.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use heapdb_grammar::ast;

use super::{Notice, QueryResult, Session};
use crate::catalog::{TableDef, TableStats};
use crate::commands::analyze::{self, sample_rows, SampleOptions};
use crate::commands::vacuum::{vacuum_heap, VacuumIndex, VacuumOptions};
use crate::err;
use crate::error::Result;
use crate::plan::bind::at;
use crate::storage::StrategyKind;
use crate::txn::{LockMode, LockTag, Snapshot};

/// The table lock VACUUM and ANALYZE take: they wait for DROP/TRUNCATE
/// and for each other, never for readers or writers.
const MAINTENANCE: LockMode = LockMode::ShareUpdateExclusive;

/// How VERBOSE names a relation (`heapdb.public.t`, as PostgreSQL's
/// `database.schema.table`).
fn qualified(name: &str) -> String {
    format!("heapdb.public.{name}")
}

fn info(message: String) -> Notice {
    Notice {
        severity: "INFO",
        message,
    }
}

/// One table a maintenance command is to process, resolved before any is.
struct Target {
    /// The table's oid (its name may be gone or reused by its turn).
    oid: u32,
    /// Its name when resolved.
    name: String,
    /// The columns ANALYZE is to gather (all when empty).
    columns: Vec<ast::Ident>,
    /// The statement named it: if it is gone by its turn, a WARNING says
    /// so (a table of a whole-database pass is skipped silently).
    named: bool,
}

impl Session {
    /// The tables a maintenance command that runs a transaction per table
    /// names (all visible tables when it names none). A named table is
    /// locked `AccessShare` while its name is looked up and unlocked at
    /// once (PostgreSQL's `expand_vacuum_rel`): a concurrent DROP is waited
    /// for, then the name is missing (42P01).
    fn maintenance_targets(&mut self, tables: &[ast::TableAndColumns]) -> Result<Vec<Target>> {
        let snap = self.statement_snapshot();
        if tables.is_empty() {
            return Ok(self
                .db
                .catalog
                .tables(&self.catalog_view(&snap))
                .into_iter()
                .map(|t| Target {
                    oid: t.oid,
                    name: t.name.clone(),
                    columns: Vec::new(),
                    named: false,
                })
                .collect());
        }
        let owner = self.txn_ref().owner;
        let mut out = Vec::with_capacity(tables.len());
        for t in tables {
            let def = self
                .lookup_table(&snap, &t.name.name, LockMode::AccessShare)
                .map_err(|e| at(e, t.name.offset))?;
            self.db
                .locks
                .release(owner, LockTag::Relation(def.oid), LockMode::AccessShare);
            out.push(Target {
                oid: def.oid,
                name: def.name.clone(),
                columns: t.columns.clone(),
                named: true,
            });
        }
        Ok(out)
    }

    /// The tables ANALYZE inside a transaction block names (all visible
    /// tables when it names none), locked for the rest of the block.
    fn locked_targets(
        &self,
        snap: &Snapshot,
        tables: &[ast::TableAndColumns],
    ) -> Result<Vec<(Arc<TableDef>, Vec<ast::Ident>)>> {
        if tables.is_empty() {
            return self
                .db
                .catalog
                .tables(&self.catalog_view(snap))
                .into_iter()
                .map(|t| Ok((self.lookup_table(snap, &t.name, MAINTENANCE)?, Vec::new())))
                .collect();
        }
        tables
            .iter()
            .map(|t| {
                let def = self
                    .lookup_table(snap, &t.name.name, MAINTENANCE)
                    .map_err(|e| at(e, t.name.offset))?;
                Ok((def, t.columns.clone()))
            })
            .collect()
    }

    /// Starts the transaction of target `i` (the statement's own for the
    /// first; the one before is committed, releasing its lock), locks the
    /// table and finds it under a snapshot taken after the lock (PostgreSQL's
    /// `vacuum_rel`: lock, then look). `None`: the table is gone (dropped
    /// since it was resolved); a WARNING says so when it was named.
    fn table_transaction(
        &mut self,
        i: usize,
        t: &Target,
        verb: &str,
        result: &mut QueryResult,
    ) -> Result<Option<(Snapshot, Arc<TableDef>)>> {
        if i > 0 {
            let committed = self.commit();
            // The statement always ends inside a transaction (the caller
            // ends it), whatever the commit did.
            self.start_txn(false, None)?;
            committed?;
        }
        let owner = self.txn_ref().owner;
        self.db
            .locks
            .acquire(owner, LockTag::Relation(t.oid), MAINTENANCE, &self.cancel)?;
        let snap = self.statement_snapshot();
        match self.db.catalog.by_oid(&self.catalog_view(&snap), t.oid) {
            Some(def) => Ok(Some((snap, def))),
            None => {
                if t.named {
                    result.notices.push(Notice::warning(format!(
                        "skipping {verb} of \"{}\" --- relation no longer exists",
                        t.name
                    )));
                }
                Ok(None)
            }
        }
    }

    /// Sets table `def`'s statistics to `stats` in place (see the module
    /// doc).
    fn set_stats_in_place(&self, snap: &Snapshot, def: &TableDef, stats: TableStats) -> Result<()> {
        self.db
            .catalog
            .set_stats_in_place(&self.catalog_view(snap), def.oid, stats)
            .map(|_| ())
    }

    /// Stores `stats` as table `def`'s statistics (a new catalog version,
    /// under the transaction's id), unless they are unchanged: ANALYZE's
    /// column statistics inside a transaction block.
    fn store_stats(
        &mut self,
        snap: &mut Snapshot,
        def: &TableDef,
        stats: TableStats,
    ) -> Result<()> {
        if def.stats.as_ref() == Some(&stats) {
            return Ok(());
        }
        let xid = self.assign_xid()?;
        // The snapshot must know its transaction now, or it would not see
        // the version it is about to write.
        snap.current_xid = xid;
        let mut new = def.clone();
        new.stats = Some(stats);
        self.db
            .catalog
            .replace(&self.catalog_view(snap), xid, def.oid, Some(new))?;
        self.txn_mut().catalog_changed = true;
        Ok(())
    }

    /// `VACUUM [FREEZE] [VERBOSE] [ANALYZE] [(DISABLE_PAGE_SKIPPING)] [table, ...]`:
    /// each table in a transaction of its own (see the module doc).
    pub(crate) fn vacuum(&mut self, v: &ast::Vacuum) -> Result<QueryResult> {
        if self.txn_ref().block {
            return Err(err!(
                ActiveSqlTransaction,
                "VACUUM cannot run inside a transaction block"
            ));
        }
        if v.full {
            return Err(err!(FeatureNotSupported, "VACUUM FULL is not supported"));
        }
        if !v.analyze && v.tables.iter().any(|t| !t.columns.is_empty()) {
            return Err(err!(
                InvalidParameterValue,
                "ANALYZE option must be specified when a column list is provided"
            ));
        }
        let targets = self.maintenance_targets(&v.tables)?;
        let opts = VacuumOptions {
            freeze: v.freeze,
            disable_page_skipping: v.disable_page_skipping,
            truncate: true,
            dead_items_bytes: usize::try_from(self.settings.maintenance_work_mem_kb)
                .unwrap_or(usize::MAX / 1024)
                .saturating_mul(1024),
        };
        let mut result = QueryResult::empty("VACUUM");
        for (i, t) in targets.iter().enumerate() {
            let Some((mut snap, def)) = self.table_transaction(i, t, "vacuum", &mut result)? else {
                continue;
            };
            self.vacuum_one(&snap, &def, &opts, v.verbose, &mut result)?;
            if v.analyze {
                self.analyze_one(&mut snap, &def, &t.columns, v.verbose, &mut result)?;
            }
        }
        Ok(result)
    }

    /// Vacuums table `def` (locked) and sets its row and page estimates.
    fn vacuum_one(
        &mut self,
        snap: &Snapshot,
        def: &TableDef,
        opts: &VacuumOptions,
        verbose: bool,
        result: &mut QueryResult,
    ) -> Result<()> {
        let rel = self.db.relation(def.relfilenode)?;
        rel.set_summary_spec(Some(crate::access::sumfork::SummarySpec::of_types(
            &def.columns.iter().map(|c| c.ty).collect::<Vec<_>>(),
        )?));
        // Every index of the table: the dead tuples' entries are removed
        // before their line pointers are freed (two passes).
        let indexes: Vec<VacuumIndex> = def
            .indexes
            .iter()
            .map(|ix| VacuumIndex {
                name: ix.name.clone(),
                tree: crate::exec::index_maint::open_tree(&self.db.pool, &self.db.wal, def, ix),
            })
            .collect();
        // One vacuum ring per participant of the heap pass.
        let sizes = crate::database::ring_sizes(&self.settings);
        let rings = (0..=self.settings.max_parallel_maintenance_workers.max(0))
            .map(|_| self.db.pool.ring_with(StrategyKind::Vacuum, &sizes))
            .collect();
        let cancel: Arc<AtomicBool> = self.cancel_flag();
        let report = vacuum_heap(&rel, &indexes, opts, rings, &cancel, self.progress.as_ref())?;
        if verbose {
            result.notices.extend(
                report
                    .verbose_messages(&qualified(&def.name))
                    .into_iter()
                    .map(info),
            );
        }
        // PostgreSQL's VACUUM updates reltuples and relpages (in place);
        // the live count is exact here (skipped pages count through the VM).
        let mut stats = def.stats.clone().unwrap_or_else(|| TableStats {
            columns: vec![None; def.columns.len()],
            ..TableStats::default()
        });
        stats.reltuples = report.live as f64;
        stats.relpages = report.pages_after();
        self.set_stats_in_place(snap, def, stats)
    }
}

/// The sampling seed of a table: fixed per table, so that ANALYZE of
/// unchanged data gives the same statistics (and the same plans) every time.
fn sample_seed(def: &TableDef) -> u64 {
    (def.oid as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x0A4A_1A2E
}

impl Session {
    /// `ANALYZE [VERBOSE] [table [(columns)], ...]`: outside a transaction
    /// block each table in a transaction of its own, inside one in the
    /// block's (see the module doc).
    pub(crate) fn analyze(&mut self, a: &ast::Analyze) -> Result<QueryResult> {
        let mut result = QueryResult::empty("ANALYZE");
        if self.txn_ref().block {
            let mut snap = self.statement_snapshot();
            for (def, columns) in self.locked_targets(&snap, &a.tables)? {
                self.analyze_one(&mut snap, &def, &columns, a.verbose, &mut result)?;
            }
            return Ok(result);
        }
        let targets = self.maintenance_targets(&a.tables)?;
        for (i, t) in targets.iter().enumerate() {
            let Some((mut snap, def)) = self.table_transaction(i, t, "analyze", &mut result)?
            else {
                continue;
            };
            self.analyze_one(&mut snap, &def, &t.columns, a.verbose, &mut result)?;
        }
        Ok(result)
    }

    /// Samples table `def` and stores the statistics of `columns` (all
    /// when empty) with its row and page estimates.
    fn analyze_one(
        &mut self,
        snap: &mut Snapshot,
        def: &TableDef,
        columns: &[ast::Ident],
        verbose: bool,
        result: &mut QueryResult,
    ) -> Result<()> {
        let positions: Vec<usize> = if columns.is_empty() {
            (0..def.columns.len()).collect()
        } else {
            columns
                .iter()
                .map(|c| {
                    def.column_index(c).ok_or_else(|| {
                        err!(
                            UndefinedColumn,
                            "column \"{c}\" of relation \"{}\" does not exist",
                            def.name
                        )
                    })
                })
                .collect::<Result<_>>()?
        };
        let target = self.settings.default_statistics_target.max(1) as usize;
        let opts = SampleOptions {
            targrows: 300 * target,
            prefetch_distance: self.settings.maintenance_io_concurrency.max(0) as usize,
            seed: sample_seed(def),
        };
        let rel = self.db.relation(def.relfilenode)?;
        let sizes = crate::database::ring_sizes(&self.settings);
        let ring = self.db.pool.ring_with(StrategyKind::Vacuum, &sizes);
        let cancel = self.cancel_flag();
        let sample = sample_rows(&rel, def, &positions, snap, &opts, Some(ring), &cancel)?;
        if verbose {
            result.notices.extend(
                analyze::verbose_messages(&def.name, &sample)
                    .into_iter()
                    .map(info),
            );
        }
        let computed = analyze::compute_stats(&sample, def, &positions, target);
        let mut stats = def.stats.clone().unwrap_or_default();
        stats.columns.resize(def.columns.len(), None);
        stats.reltuples = sample.total_rows;
        stats.relpages = sample.nblocks;
        for (p, cs) in positions.into_iter().zip(computed) {
            stats.columns[p] = Some(cs);
        }
        if !self.txn_ref().block {
            return self.set_stats_in_place(snap, def, stats);
        }
        // In a block: the estimates in place (they stay if it rolls back),
        // the column statistics as a version of the block's.
        let mut estimates = def.stats.clone().unwrap_or_default();
        estimates.columns.resize(def.columns.len(), None);
        estimates.reltuples = stats.reltuples;
        estimates.relpages = stats.relpages;
        self.set_stats_in_place(snap, def, estimates.clone())?;
        let mut def = TableDef::clone(def);
        def.stats = Some(estimates);
        self.store_stats(snap, &def, stats)
    }
}
