//! VACUUM and ANALYZE as statements: name resolution, the transaction-block
//! rule, the catalog update of a table's statistics, and VERBOSE output as
//! PostgreSQL's `INFO` messages. The work itself is in
//! [`crate::commands`].
//!
//! VACUUM refuses to run inside a transaction block (25001), as in
//! PostgreSQL, since its effects cannot be rolled back. Neither command
//! takes a transaction id up front: one is assigned only when the catalog's
//! statistics change (a VACUUM of a clean table writes nothing at all).
//! Statistics are stored as a new version of the table's definition, so a
//! concurrent session keeps the one its snapshot sees.

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
use crate::txn::{LockMode, Snapshot};

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

impl Session {
    /// The tables a maintenance command names (all visible tables when it
    /// names none), with their column lists.
    fn maintenance_targets(
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

    /// Stores `stats` as table `def`'s statistics (a new catalog version,
    /// under a transaction id assigned now), unless they are unchanged.
    pub(super) fn store_stats(
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

    /// `VACUUM [FREEZE] [VERBOSE] [ANALYZE] [(DISABLE_PAGE_SKIPPING)] [table, ...]`.
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
        let mut snap = self.statement_snapshot();
        let targets = self.maintenance_targets(&snap, &v.tables)?;
        let opts = VacuumOptions {
            freeze: v.freeze,
            disable_page_skipping: v.disable_page_skipping,
            truncate: true,
            dead_items_bytes: usize::try_from(self.settings.maintenance_work_mem_kb)
                .unwrap_or(usize::MAX / 1024)
                .saturating_mul(1024),
        };
        let sizes = crate::database::ring_sizes(&self.settings);
        let cancel: Arc<AtomicBool> = self.cancel_flag();
        let mut result = QueryResult::empty("VACUUM");
        for (def, columns) in targets {
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
                    tree: crate::exec::index_maint::open_tree(
                        &self.db.pool,
                        &self.db.wal,
                        &def,
                        ix,
                    ),
                })
                .collect();
            // One vacuum ring per participant of the heap pass.
            let rings = (0..=self.settings.max_parallel_maintenance_workers.max(0))
                .map(|_| self.db.pool.ring_with(StrategyKind::Vacuum, &sizes))
                .collect();
            let report = vacuum_heap(
                &rel,
                &indexes,
                &opts,
                rings,
                &cancel,
                self.progress.as_ref(),
            )?;
            if v.verbose {
                result.notices.extend(
                    report
                        .verbose_messages(&qualified(&def.name))
                        .into_iter()
                        .map(info),
                );
            }
            // PostgreSQL's VACUUM updates reltuples and relpages; the live
            // count is exact here (skipped pages count through the VM).
            let mut stats = def.stats.clone().unwrap_or_else(|| TableStats {
                columns: vec![None; def.columns.len()],
                ..TableStats::default()
            });
            stats.reltuples = report.live as f64;
            stats.relpages = report.pages_after();
            self.store_stats(&mut snap, &def, stats)?;
            if v.analyze {
                let def = self.lookup_table(&snap, &def.name, MAINTENANCE)?;
                self.analyze_one(&mut snap, &def, &columns, v.verbose, &mut result)?;
            }
        }
        Ok(result)
    }
}

/// The sampling seed of a table: fixed per table, so that ANALYZE of
/// unchanged data gives the same statistics (and the same plans) every time.
fn sample_seed(def: &TableDef) -> u64 {
    (def.oid as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x0A4A_1A2E
}

impl Session {
    /// `ANALYZE [VERBOSE] [table [(columns)], ...]`.
    pub(crate) fn analyze(&mut self, a: &ast::Analyze) -> Result<QueryResult> {
        let mut snap = self.statement_snapshot();
        let targets = self.maintenance_targets(&snap, &a.tables)?;
        let mut result = QueryResult::empty("ANALYZE");
        for (def, columns) in targets {
            self.analyze_one(&mut snap, &def, &columns, a.verbose, &mut result)?;
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
        self.store_stats(snap, def, stats)
    }
}
