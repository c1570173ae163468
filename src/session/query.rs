//! SELECT and EXPLAIN, and the planning context a statement gives the
//! binder.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use heapdb_grammar::ast;

use super::{inspect, Column, QueryResult, Session, TableLocker};
use crate::catalog::TableDef;
use crate::database::Database;
use crate::err;
use crate::error::Result;
use crate::exec::vector::Batch;
use crate::exec::{self, ExecContext, Instrumentation};
use crate::plan::bind::Binder;
use crate::plan::explain::{explain_with, ExplainFlags};
use crate::plan::folded;
use crate::plan::{Plan, PlanContext, TableRows};
use crate::settings::Settings;
use crate::storage::{ForkNumber, RelFileNode};
use crate::txn::{LockMode, Snapshot};
use crate::types::{DataType, Value};

/// What the binder of one statement sees of the session.
pub(crate) struct StmtCtx<'s> {
    pub db: &'s Database,
    pub settings: &'s Settings,
    pub snapshot: &'s Snapshot,
    pub now: i64,
    pub cancel: Arc<AtomicBool>,
    pub progress: Option<exec::progress::ProgressHook>,
    /// Locks the tables the statement reads.
    pub locker: TableLocker<'s>,
    /// The session's sequence calls (`currval`, `lastval`).
    pub seqs: &'s Arc<crate::commands::seqfuncs::SessionSequences>,
    /// Where the statement's operators spill.
    pub temp_dir: &'s std::path::Path,
    /// The statement is EXPLAIN without ANALYZE.
    pub explain_only: bool,
    /// The transaction is READ COMMITTED.
    pub read_committed: bool,
    /// The session's open cursors (the `pg_cursors` view).
    pub cursors: &'s super::cursor::Cursors,
    /// The session's prepared statements (`pg_prepared_statements`).
    pub prepared: &'s super::prepare::PreparedStatements,
}

impl StmtCtx<'_> {
    /// An execution context for `plan` under this statement's snapshot.
    pub fn exec_context(&self, plan: &Plan) -> Result<ExecContext> {
        let mut ctx = exec_context(self.db, self.settings, self.snapshot, &self.cancel, plan)?;
        ctx.progress = self.progress.clone();
        ctx.read_committed = self.read_committed.then(|| self.db.txns.clone());
        ctx.temp_dir = Some(self.temp_dir.to_path_buf());
        Ok(ctx)
    }
}

/// Opens the heaps `plan` scans and packages what its operators share
/// (spilling to the system's temporary directory until the caller sets
/// `temp_dir`).
fn exec_context(
    db: &Database,
    settings: &Settings,
    snapshot: &Snapshot,
    cancel: &Arc<AtomicBool>,
    plan: &Plan,
) -> Result<ExecContext> {
    let mut rels = Vec::new();
    exec::scanned_relations(plan, &mut rels);
    let mut relations = HashMap::new();
    for r in rels {
        relations.insert(r, db.relation(r)?);
    }
    Ok(ExecContext {
        snapshot: snapshot.clone(),
        cancel: cancel.clone(),
        work_mem: settings.work_mem_kb as usize * 1024,
        hash_mem: (settings.work_mem_kb as f64 * settings.hash_mem_multiplier * 1024.0) as usize,
        temp_dir: None,
        relations,
        parallel: None,
        progress: None,
        page_summaries: settings.enable_page_summaries,
        packed_cache: settings.packed_cache_kb as usize * 1024,
        ring_sizes: crate::database::ring_sizes(settings),
        worktables: exec::WorkTables::default(),
        read_committed: None,
        query_snapshots: None,
    })
}

impl PlanContext for StmtCtx<'_> {
    fn table(&self, name: &str) -> Result<Arc<TableDef>> {
        self.locker
            .open(self.db, self.snapshot, name, LockMode::AccessShare)
    }

    fn view(&self, name: &str) -> Option<Arc<crate::catalog::ViewDef>> {
        super::view_info::visible_view(self.db, self.snapshot, name).or_else(|| match name {
            super::cursor::PG_CURSORS => Some(self.cursors.system_view()),
            super::prepare::PG_PREPARED_STATEMENTS => Some(self.prepared.system_view()),
            super::catalog_views::PG_INDEXES => Some(super::catalog_views::pg_indexes(self)),
            _ => None,
        })
    }

    fn children(&self, parent: &TableDef) -> Result<Vec<Arc<TableDef>>> {
        if !parent.has_subclass {
            return Ok(Vec::new());
        }
        let cv = crate::catalog::CatalogView {
            snapshot: self.snapshot,
            txns: &self.db.txns,
            temp_ns: self.locker.temp_ns,
        };
        let mut found: Vec<Arc<TableDef>> = self
            .db
            .catalog
            .tables(&cv)
            .into_iter()
            .filter(|t| t.parents.contains(&parent.oid))
            .collect();
        found.sort_by_key(|t| t.oid);
        found.iter().map(|t| self.table(&t.name)).collect()
    }

    fn table_pages(&self, table: &TableDef) -> u32 {
        self.db
            .pool
            .nblocks(RelFileNode(table.relfilenode), ForkNumber::Main)
            .unwrap_or(0)
    }

    fn all_visible_fraction(&self, table: &TableDef) -> f64 {
        crate::plan::parallel::TableShape::all_visible_fraction(self, table)
    }

    fn run_subquery(&mut self, plan: &Plan) -> Result<Vec<Vec<Value>>> {
        let ctx = self.exec_context(plan)?;
        exec::collect_rows(plan, &ctx)
    }

    fn subplan_context(&mut self, plan: &Plan) -> Result<ExecContext> {
        self.exec_context(plan)
    }

    fn explain_only(&self) -> bool {
        self.explain_only
    }

    fn settings(&self) -> &Settings {
        self.settings
    }

    fn statement_timestamp(&self) -> i64 {
        self.now
    }

    fn functions(&self, name: &str) -> Vec<Arc<crate::catalog::FunctionDef>> {
        let cv = crate::catalog::CatalogView {
            snapshot: self.snapshot,
            txns: &self.db.txns,
            // Functions are permanent.
            temp_ns: 0,
        };
        self.db.catalog.lookup_functions(&cv, name)
    }

    fn domain(&self, name: &str) -> Option<Arc<crate::catalog::DomainDef>> {
        let cv = crate::catalog::CatalogView {
            snapshot: self.snapshot,
            txns: &self.db.txns,
            // Types are permanent.
            temp_ns: 0,
        };
        self.db.catalog.lookup_domain(&cv, name)
    }

    fn operators(&self, name: &str) -> Vec<Arc<crate::catalog::OperatorDef>> {
        let cv = crate::catalog::CatalogView {
            snapshot: self.snapshot,
            txns: &self.db.txns,
            // Operators are permanent.
            temp_ns: 0,
        };
        self.db.catalog.lookup_operators(&cv, name)
    }

    fn scalar_function(&mut self, name: &str, args: &[Value]) -> Option<Result<(Value, DataType)>> {
        inspect::scalar_function(self, name, args)
    }

    fn inspection_rows(&mut self, name: &str, args: &[Value]) -> Option<Result<TableRows>> {
        inspect::table_function(self, name, args)
    }

    fn sequence_function(&mut self, func: &str, seq: Option<&str>) -> Result<u32> {
        super::sequence::function(self, func, seq)
    }

    fn sequence_rows(&mut self, name: &str) -> Option<Result<TableRows>> {
        super::sequence::rows(self, name)
    }
}

impl crate::plan::parallel::TableShape for StmtCtx<'_> {
    fn pages(&self, table: &TableDef) -> u32 {
        self.table_pages(table)
    }

    fn all_visible_fraction(&self, table: &TableDef) -> f64 {
        // 256 blocks spread over the table: a few VM buffer reads.
        self.db
            .relation(table.relfilenode)
            .and_then(|rel| rel.all_visible_fraction(256))
            .unwrap_or(0.0)
    }

    fn summary_decided_fraction(
        &self,
        table: &TableDef,
        plan: &crate::exec::fastpath::summaries::SummaryPlan,
    ) -> f64 {
        // 32 windows of 32 blocks: cached look-ups once a scan has run.
        self.db
            .relation(table.relfilenode)
            .and_then(|rel| crate::exec::fastpath::summaries::decided_fraction(&rel, plan, 32))
            .unwrap_or(0.0)
    }
}

impl Session {
    /// Binds and plans a query under `snap`.
    pub(crate) fn plan_query(&self, q: &ast::Query, snap: &Snapshot) -> Result<Plan> {
        self.plan_query_for(q, snap, false)
    }

    /// [`Session::plan_query`], for EXPLAIN without ANALYZE when
    /// `explain_only`.
    fn plan_query_for(&self, q: &ast::Query, snap: &Snapshot, explain_only: bool) -> Result<Plan> {
        let mut ctx = self.stmt_ctx(snap);
        ctx.explain_only = explain_only;
        let mut plan = Binder::new(&mut ctx).plan_query(q)?;
        crate::plan::parallel::parallelize(&mut plan, &self.settings, &ctx);
        Ok(plan)
    }

    pub(crate) fn stmt_ctx<'s>(&'s self, snap: &'s Snapshot) -> StmtCtx<'s> {
        StmtCtx {
            db: &self.db,
            settings: &self.settings,
            snapshot: snap,
            now: self.txn_ref().start_ts,
            cancel: self.cancel_flag(),
            progress: self.progress.clone(),
            locker: self.table_locker(),
            seqs: &self.seqs,
            temp_dir: &self.temp_dir,
            explain_only: false,
            read_committed: self.txn_ref().isolation == super::Isolation::ReadCommitted,
            cursors: &self.cursors,
            prepared: &self.prepared,
        }
    }

    pub(crate) fn run_query(
        &mut self,
        q: &ast::Query,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let plan = match self.plan_cache.pending.take() {
            Some((shape, sql)) if !shape.writes => {
                self.plan_with_template(q, &snap, shape, &sql)?
            }
            _ => self.plan_query(q, &snap)?,
        };
        self.execute_plan(&plan, &snap, t0, sink)
    }

    /// Runs `plan` (planned since `t0`) under `snap`, streaming its rows
    /// into `sink`.
    pub(super) fn execute_plan(
        &mut self,
        plan: &Plan,
        snap: &Snapshot,
        t0: Instant,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let planned = t0.elapsed();
        let ctx = self.stmt_ctx(snap).exec_context(plan)?;
        let columns = columns_of(plan);
        let mut op = exec::build(plan, &ctx)?;
        let mut n = 0usize;
        while let Some(b) = op.next()? {
            n += b.len;
            if b.len > 0 {
                sink(&columns, &b)?;
            }
        }
        let mut r = QueryResult::empty(&format!("SELECT {n}"));
        r.columns = columns;
        r.returns_rows = true;
        r.timing.plan = planned;
        r.timing.execute = t0.elapsed() - planned;
        Ok(r)
    }

    pub(crate) fn explain(&mut self, e: &ast::Explain) -> Result<QueryResult> {
        if e.options.format != ast::ExplainFormat::Text {
            return Err(err!(
                FeatureNotSupported,
                "EXPLAIN formats other than TEXT are not supported"
            ));
        }
        if e.options.buffers && !e.options.analyze {
            return Err(err!(
                InvalidParameterValue,
                "EXPLAIN option BUFFERS requires ANALYZE"
            ));
        }
        let flags = ExplainFlags {
            costs: e.options.costs,
            analyze: e.options.analyze,
            buffers: e.options.buffers,
            timing: e.options.timing,
            summaries: self.settings.enable_page_summaries,
            verbose: e.options.verbose,
        };
        let q = match &e.statement {
            ast::Statement::Query(q) => q,
            ast::Statement::Insert(_) | ast::Statement::Update(_) | ast::Statement::Delete(_) => {
                return self.explain_modify(e, flags)
            }
            _ => {
                return Err(err!(
                    FeatureNotSupported,
                    "EXPLAIN is supported for SELECT, INSERT, UPDATE and DELETE statements only"
                ))
            }
        };
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (plan, mut folds) =
            folded::recording(|| self.plan_query_for(q, &snap, !e.options.analyze));
        let plan = plan?;
        let planned = t0.elapsed();
        let shown = self.mark_folds(q, &snap, &plan, &mut folds, e.options.analyze);
        let mut lines = if e.options.analyze {
            let ctx = self.stmt_ctx(&snap).exec_context(&plan)?;
            let instr = Instrumentation::default();
            let t1 = Instant::now();
            {
                let mut op = exec::build_instrumented(&plan, &ctx, &instr)?;
                while op.next()?.is_some() {}
            }
            let executed = t1.elapsed();
            let stats = instr.nodes.borrow().clone();
            let mut lines = explain_with(&shown, flags, Some(&stats), &folds);
            if e.options.summary.unwrap_or(true) {
                lines.push(format!(
                    "Planning Time: {:.3} ms",
                    planned.as_secs_f64() * 1000.0
                ));
                lines.push(format!(
                    "Execution Time: {:.3} ms",
                    executed.as_secs_f64() * 1000.0
                ));
            }
            lines
        } else {
            let mut lines = explain_with(&shown, flags, None, &folds);
            if e.options.summary == Some(true) {
                lines.push(format!(
                    "Planning Time: {:.3} ms",
                    planned.as_secs_f64() * 1000.0
                ));
            }
            lines
        };
        Ok(explain_result(std::mem::take(&mut lines)))
    }

    /// `plan` with the constants its folded subqueries became shown as
    /// their parameters, and so the folds' own plans ([`folded::mark`]):
    /// the statement planned again, each fold answering another value,
    /// tells where they went.
    fn mark_folds(
        &self,
        q: &ast::Query,
        snap: &Snapshot,
        plan: &Plan,
        folds: &mut folded::Recorded,
        analyze: bool,
    ) -> Plan {
        folded::mark_all(plan, folds, analyze, || {
            self.plan_query_for(q, snap, true).ok()
        })
    }
}

/// EXPLAIN's result: one `QUERY PLAN` row per line.
pub(super) fn explain_result(lines: Vec<String>) -> QueryResult {
    let mut r = QueryResult::empty("EXPLAIN");
    r.columns = vec![Column {
        name: "QUERY PLAN".into(),
        ty: DataType::Text,
    }];
    r.returns_rows = true;
    r.rows = lines.into_iter().map(|l| vec![Value::text(&l)]).collect();
    r
}

/// The result columns of a plan.
pub(crate) fn columns_of(plan: &Plan) -> Vec<Column> {
    plan.fields
        .iter()
        .map(|f| Column {
            name: f.name.clone(),
            ty: f.ty,
        })
        .collect()
}
