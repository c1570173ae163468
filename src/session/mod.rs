//! Sessions: one connection's transaction state and settings, and the
//! entry point that runs SQL text.
//!
//! [`Session::execute`] parses the text (a single-row INSERT of literals is
//! only scanned and bound straight from the text: [`crate::plan::insert_row`]), then
//! runs each statement:
//! - transaction control (BEGIN/COMMIT/ROLLBACK) moves the session between
//!   *idle*, *in a transaction block* and *in a failed block*
//!   ([`TxnStatus`]); in a failed block every statement but COMMIT/ROLLBACK
//!   is refused with 25P02, as in PostgreSQL;
//! - any other statement outside a block runs in its own transaction,
//!   committed when it succeeds and rolled back when it fails, so a failed
//!   statement changes nothing;
//! - a transaction id is assigned only when a transaction first writes
//!   (autocommit SELECTs never touch the commit log);
//! - READ COMMITTED (the default) takes a new snapshot for every
//!   statement, REPEATABLE READ one for the whole transaction; each
//!   statement has its own command id, so it never sees its own changes;
//! - every table a statement names is locked for the rest of the
//!   transaction (`AccessShare` to read, `RowExclusive` to write,
//!   `AccessExclusive` for DROP/TRUNCATE; [`crate::txn::lock`]) while it is
//!   planned, before any row changes; a READ COMMITTED statement that had to
//!   wait runs again with a fresh snapshot ([`TableLocker`]); every lock is
//!   released after the transaction's outcome is in the commit log.
//!
//! The statement kinds live in submodules: [`query`] (SELECT, EXPLAIN),
//! [`modify`] (INSERT, UPDATE, DELETE: planned by `plan::modify`, written by
//! `exec::modify`), [`table_ddl`] (CREATE/DROP/TRUNCATE TABLE, CREATE
//! TABLE AS, CREATE/DROP VIEW), [`index_ddl`] (CREATE/DROP INDEX, REINDEX,
//! ALTER TABLE: both run by `commands`; the column forms in
//! [`alter_column`]), [`view_info`] (what the session
//! shows and checks of views), [`utility`] (SET/SHOW/RESET, CHECKPOINT), [`inspect`] (the
//! page-inspection functions), [`temp`] (temporary tables: their
//! namespace, ON COMMIT actions and the drop at the session's end),
//! [`maintenance`] (VACUUM, ANALYZE) and
//! [`copy`] (COPY, with the client-data API [`Session::copy_in`] /
//! [`Session::copy_out`]). The work below the dispatch is done by the
//! layers underneath, each given the statement's context as explicit values
//! (`copy::CopyContext`, `exec::modify::ModifyContext`,
//! `commands::context::DdlContext`): the session keeps the dispatch, the
//! transaction state and the settings.

mod alter_column;
mod catalog_views;
mod commit_ack;
mod copy;
mod cursor;
mod describe;
mod explain_modify;
mod fkey;
mod index_ddl;
mod inspect;
mod maintenance;
mod modify;
mod operator_ddl;
mod plancache;
mod prepare;
mod query;
mod result;
mod sequence;
mod sysview;
mod table_ddl;
mod temp;
mod txn_modes;
mod type_ddl;
mod utility;
mod view_info;

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use heapdb_grammar::ast;

/// A parse error as the SQL error PostgreSQL reports.
pub use crate::error::parse_error;
pub use crate::exec::progress::{Progress, ProgressHook, ProgressUnit};
pub use commit_ack::{CommitAck, CommitGate};
pub use copy::{CopyIo, CopyProgress, ProgressFn};
pub use describe::{ColumnInfo, IndexInfo, PackedInfo, TableInfo};
pub(crate) use query::StmtCtx;
pub use result::{Column, Notice, QueryResult, Timing};
pub use view_info::ViewInfo;

// The rest of the embedded API: what a client (the shell, a wire-protocol
// server) needs beside `Session` itself, so that it names no layer below.
pub use crate::copy::out_file::OutFile;
pub use crate::database::Database;
pub use crate::vector::{Batch, Vector};
pub use crate::wal::lsn_text;
// The API's vocabulary, from the foundations: its errors, the settings a
// client may check before opening a database, values as text.
pub use crate::error::{Error, Result, SqlState};
pub use crate::settings::{lookup as lookup_setting, SettingValue, Settings};
pub use crate::types::format_value;

use crate::catalog::{CatalogView, TableDef};
use crate::err;
use crate::storage::BufferUsage;
use crate::txn::lock::Owner;
use crate::txn::{CommandId, LockMode, LockTag, Snapshot, Xid, INVALID_XID};
use crate::wal::WalRecord;

/// Where the session is with respect to transaction blocks (psql's `%x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnStatus {
    /// Not in a transaction block.
    Idle,
    /// Inside BEGIN ... COMMIT.
    InBlock,
    /// Inside a block in which a statement failed.
    Failed,
}

/// Isolation levels heapdb runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// A snapshot per statement.
    ReadCommitted,
    /// One snapshot for the whole transaction.
    RepeatableRead,
}

/// The state of the session's current transaction.
pub(crate) struct Txn {
    /// Assigned on the first write (or at BEGIN).
    pub xid: Xid,
    /// Who holds this transaction's locks.
    pub owner: Owner,
    /// Inside an explicit block.
    pub block: bool,
    /// A statement failed inside the block.
    pub failed: bool,
    /// Isolation level.
    pub isolation: Isolation,
    /// READ ONLY ([`txn_modes`]).
    pub read_only: bool,
    /// DEFERRABLE (kept and shown; it matters only to SERIALIZABLE READ
    /// ONLY transactions, which heapdb does not run).
    pub deferrable: bool,
    /// The transaction's snapshot (REPEATABLE READ), once taken.
    pub snapshot: Option<Snapshot>,
    /// Command id of the next statement.
    pub cid: CommandId,
    /// The catalog was changed: write it before committing.
    pub catalog_changed: bool,
    /// Relation files to remove at commit (dropped or truncated tables).
    pub drop_on_commit: Vec<u32>,
    /// Relation files to remove at abort (created in this transaction).
    pub drop_on_abort: Vec<u32>,
    /// Settings when the transaction began (restored by ROLLBACK).
    pub start_settings: Settings,
    /// Settings to keep at COMMIT: the start plus every plain SET (not the
    /// SET LOCALs).
    pub commit_settings: Settings,
    /// When the transaction started (`now()`).
    pub start_ts: i64,
}

/// One connection to a [`Database`].
pub struct Session {
    pub(crate) db: Database,
    pub(crate) settings: Settings,
    pub(crate) txn: Option<Txn>,
    cancel: Arc<AtomicBool>,
    /// Where long statements report their progress (a client's bar).
    pub(crate) progress: Option<ProgressHook>,
    /// Set when a READ COMMITTED statement waited for a table lock (or
    /// found the table changed under its snapshot): the statement runs
    /// again with a fresh snapshot.
    restart: Cell<bool>,
    /// Buffers of the direct single-row INSERT path ([`insert_row`](crate::plan::insert_row)).
    pub(crate) insert_scratch: crate::plan::insert_row::InsertScratch,
    /// When a `synchronous_commit = on` commit returns ([`ack`]).
    commit_ack: CommitAck,
    /// The deferred commits' flush position ([`CommitAck::Deferred`]).
    gate: CommitGate,
    /// Plans of repeated SELECTs and UPDATEs by shape ([`plancache`]).
    pub(crate) plan_cache: plancache::PlanCache,
    /// The session's temporary namespace, claimed by its first temporary
    /// table (0 until then; [`temp`]).
    pub(crate) temp_ns: u32,
    /// The temporary tables with an `ON COMMIT DELETE ROWS` or `DROP`
    /// clause, by oid, acted on at each commit ([`temp`]).
    pub(crate) on_commit: Vec<(u32, ast::OnCommit)>,
    /// The foreign-key checks put off to COMMIT ([`fkey`]).
    fk_deferred: Vec<fkey::Deferred>,
    /// `currval`/`lastval` and the log to flush for sequences ([`sequence`]).
    pub(crate) seqs: Arc<crate::commands::seqfuncs::SessionSequences>,
    /// What an EXPLAIN of INSERT, UPDATE or DELETE records of the statement
    /// it runs ([`explain_modify`]); `None` otherwise.
    modify_capture: Option<Box<explain_modify::ModifyCapture>>,
    /// Where statements spill (`base/pgsql_tmp`), made once: a path built
    /// per statement was a tenth of a point lookup's set-up.
    pub(crate) temp_dir: std::path::PathBuf,
    /// The open cursors (`DECLARE`).
    pub(crate) cursors: cursor::Cursors,
    /// The prepared statements (`PREPARE`).
    pub(crate) prepared: prepare::PreparedStatements,
}

/// What transaction handling a statement needs.
enum Class<'a> {
    /// BEGIN with its modes.
    Begin(&'a ast::TransactionModes),
    /// COMMIT (END) [AND CHAIN].
    Commit(bool),
    /// ROLLBACK [AND CHAIN].
    Rollback(bool),
    /// Anything else, in its own transaction outside a block; `writes`:
    /// it needs an xid.
    Other {
        /// The statement may write.
        writes: bool,
    },
}

/// Classifies a statement for transaction handling.
fn writes(stmt: &ast::Statement) -> bool {
    if let ast::Statement::Explain(e) = stmt {
        return writes(&e.statement);
    }
    !matches!(
        stmt,
        ast::Statement::Query(_)
            | ast::Statement::Show(_)
            | ast::Statement::Set(_)
            | ast::Statement::Reset(_)
            // Function bodies change no data.
            | ast::Statement::Do(_)
            | ast::Statement::Checkpoint
            // No xid: statistics are set in place (ANALYZE in a block
            // takes one for its column statistics).
            | ast::Statement::Vacuum(_)
            | ast::Statement::Analyze(_)
            | ast::Statement::DeclareCursor(_)
            | ast::Statement::Fetch(_)
            | ast::Statement::Close(_)
            // EXECUTE takes an xid when its statement writes.
            | ast::Statement::Prepare(_)
            | ast::Statement::Execute(_)
            | ast::Statement::Deallocate(_)
    )
}

/// A session dropped inside a transaction rolls it back, as a disconnecting
/// PostgreSQL client's backend does: its xid must not stay "running" (it
/// would hold back VACUUM's horizon) nor its locks stay held.
impl Drop for Session {
    fn drop(&mut self) {
        if self.txn.is_some() {
            let _ = self.abort();
        }
        // Its temporary tables go with it, as a PostgreSQL backend's do
        // when its client disconnects.
        self.drop_temp_namespace();
    }
}

impl Database {
    /// A new session with the database's default settings. (Defined here,
    /// above the database layer: a session holds its database, never the
    /// other way round.)
    pub fn session(&self) -> Session {
        Session::new(self.clone())
    }
}

impl Session {
    pub(crate) fn new(db: Database) -> Session {
        Session {
            gate: CommitGate::new(db.wal.clone()),
            settings: db.defaults.clone(),
            temp_dir: crate::exec::spill::temp_dir(&db.dir),
            db,
            txn: None,
            cancel: Arc::new(AtomicBool::new(false)),
            progress: None,
            restart: Cell::new(false),
            insert_scratch: crate::plan::insert_row::InsertScratch::default(),
            commit_ack: CommitAck::Immediate,
            plan_cache: plancache::PlanCache::default(),
            temp_ns: 0,
            fk_deferred: Vec::new(),
            seqs: Arc::default(),
            on_commit: Vec::new(),
            modify_capture: None,
            cursors: cursor::Cursors::default(),
            prepared: prepare::PreparedStatements::default(),
        }
    }

    /// How many statement shapes this session runs from a plan template
    /// (`session::plancache`).
    pub fn plan_templates(&self) -> usize {
        self.plan_cache.templates()
    }

    /// The database this session runs on.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// The session's current settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Sets (or clears) the callback that long statements report their
    /// progress to: sequential scans (pages), COPY (bytes of its input file,
    /// or rows written), VACUUM (pages). It runs on the statement's thread.
    pub fn set_progress(&mut self, hook: Option<ProgressHook>) {
        self.progress = hook;
    }

    /// Chooses when a `synchronous_commit = on` commit returns: after its
    /// flush ([`CommitAck::Immediate`], the default), or at once with the
    /// flush owed through [`Session::commit_gate`] ([`CommitAck::Deferred`]:
    /// only for a session that is its database's sole client and that syncs
    /// the gate before it reveals anything; see [`ack`]).
    pub fn set_commit_ack(&mut self, ack: CommitAck) {
        self.commit_ack = ack;
    }

    /// When this session's commits return (see [`Session::set_commit_ack`]).
    pub fn commit_ack(&self) -> CommitAck {
        self.commit_ack
    }

    /// The handle that flushes this session's deferred commits.
    pub fn commit_gate(&self) -> CommitGate {
        self.gate.clone()
    }

    /// The flag that cancels the running statement when set (Ctrl-C). It is
    /// cleared when the next statement starts.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    /// Whether the session is in a (failed) transaction block.
    pub fn txn_status(&self) -> TxnStatus {
        match &self.txn {
            Some(t) if t.block && t.failed => TxnStatus::Failed,
            Some(t) if t.block => TxnStatus::InBlock,
            _ => TxnStatus::Idle,
        }
    }

    /// Records `e`, an error of a statement that never ran (it did not
    /// parse, or its text was not valid UTF-8), and hands it back: as for
    /// any failed statement, a transaction block it was in is aborted
    /// (later statements get 25P02 and COMMIT rolls back).
    pub fn fail_statement(&mut self, e: Error) -> Error {
        if let Some(t) = self.txn.as_mut().filter(|t| t.block) {
            t.failed = true;
        }
        e
    }

    /// Runs every statement of `sql` and returns the result of the last one
    /// (rows collected). Stops at the first error.
    pub fn execute(&mut self, sql: &str) -> Result<QueryResult> {
        let mut rows = Vec::new();
        let mut result = self.execute_streaming(sql, &mut |_, b| {
            for i in 0..b.len {
                rows.push(b.row(i));
            }
            Ok(())
        })?;
        result.rows = rows;
        Ok(result)
    }

    /// Runs every statement of `sql`, handing result rows to `sink` batch by
    /// batch (for output of any size in constant memory). The returned
    /// result describes the last statement; its `rows` are empty.
    pub fn execute_streaming(
        &mut self,
        sql: &str,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        // Values print in the session's DateStyle/IntervalStyle: set for the
        // statement's rows, and again after it (it may have been a SET).
        self.apply_output_style();
        let result = self.execute_streaming_styled(sql, sink);
        self.apply_output_style();
        result
    }

    /// Makes this thread print values in the session's styles.
    fn apply_output_style(&self) {
        use crate::settings::{DateFormat, DateOrder, IntervalStyle};
        use crate::types::datetime::style::{self, DateOut, IntervalOut};
        let date = match self.settings.datestyle.format {
            DateFormat::Iso => DateOut::Iso,
            DateFormat::Sql => DateOut::Sql,
            DateFormat::Postgres => DateOut::Postgres,
            DateFormat::German => DateOut::German,
        };
        let interval = match self.settings.intervalstyle {
            IntervalStyle::Postgres => IntervalOut::Postgres,
            IntervalStyle::PostgresVerbose => IntervalOut::Verbose,
            IntervalStyle::SqlStandard => IntervalOut::SqlStandard,
            IntervalStyle::Iso8601 => IntervalOut::Iso8601,
        };
        style::set_output_style(style::OutputStyle {
            date,
            day_first: self.settings.datestyle.order == DateOrder::Dmy,
            year_first: self.settings.datestyle.order == DateOrder::Ymd,
            interval,
        });
        crate::types::float::set_extra_float_digits(self.settings.extra_float_digits as i32);
        crate::types::bytea::set_output_hex(self.settings.bytea_output == 1);
        crate::types::datetime::zone::set_session_zone_name(&self.settings.timezone);
    }

    fn execute_streaming_styled(
        &mut self,
        sql: &str,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        self.cancel.store(false, Ordering::Relaxed);
        let start = Instant::now();
        // The statement of bulk scripts, bound straight from its text.
        // (Not in a READ ONLY transaction: the full path checks what may
        // run there.)
        let read_only = self.read_only_now();
        if let Some(scan) = heapdb_grammar::scan_single_insert(sql, &mut self.insert_scratch.lits)
            .filter(|_| !read_only)
        {
            let parse = start.elapsed();
            return self.run_scanned(sql, scan, parse, sink);
        }
        // A SELECT or UPDATE whose shape was planned before runs from its
        // template.
        self.plan_cache.pending = None;
        // Templates are keyed on the text as standard_conforming_strings
        // reads it.
        let std_strings = self.settings.standard_conforming_strings;
        if let Some(shape) = self
            .plan_cache
            .shape_of(sql)
            .filter(|_| !read_only && std_strings)
        {
            if let plancache::Use::Template(t) = self.plan_cache.begin(&shape, sql) {
                let lexed = start.elapsed();
                let writes = shape.writes;
                let mut r = self.run_classified(Class::Other { writes }, &mut |s| {
                    s.run_template(&t, &shape, sql, sink)
                })?;
                r.timing.parse = lexed;
                return Ok(r);
            }
        }
        let options = heapdb_grammar::ParseOptions {
            standard_conforming_strings: std_strings,
            escape_string_warning: self.settings.escape_string_warning,
        };
        let (stmts, warnings) = heapdb_grammar::parse_with(sql, options)
            .map_err(|e| self.fail_statement(parse_error(e)))?;
        let mut warnings: Vec<Notice> = warnings
            .into_iter()
            .map(|w| Notice::warning(w.message))
            .collect();
        let parse = start.elapsed();
        if stmts.is_empty() {
            return Ok(QueryResult::empty(""));
        }
        let mut last = None;
        for stmt in &stmts {
            if matches!(
                stmt,
                ast::Statement::DeclareCursor(_) | ast::Statement::Prepare(_)
            ) {
                // `pg_cursors.statement` and `pg_prepared_statements.statement`
                // are the text the client sent.
                self.cursors.statement_text = Some(sql.to_string());
            }
            let mut r = self.run_statement(stmt, sink)?;
            if !warnings.is_empty() {
                // The scanner's warnings come before anything the
                // statements say.
                r.notices.splice(0..0, warnings.drain(..));
            }
            if !r.rows.is_empty() {
                // Results computed whole (EXPLAIN, SHOW) go through the sink too.
                let mut cols: Vec<crate::exec::vector::Vector> = r
                    .columns
                    .iter()
                    .map(|c| crate::exec::vector::Vector::new(c.ty))
                    .collect();
                for row in &r.rows {
                    for (c, v) in row.iter().enumerate() {
                        cols[c].push(v);
                    }
                }
                let batch = Batch {
                    columns: cols,
                    len: r.rows.len(),
                };
                sink(&r.columns, &batch)?;
                r.rows.clear();
            }
            r.timing.parse = parse / stmts.len() as u32;
            last = Some(r);
        }
        Ok(last.expect("at least one statement"))
    }

    /// [`Session::execute_streaming`] of `sql`, a single-row INSERT that
    /// [`heapdb_grammar::scan_single_insert`] has already read (on another
    /// thread, say) as `scan` with its literals in `lits`. `lits` is handed
    /// back emptied, its capacity kept for the next scan. Precondition: the
    /// scan is of this very `sql`.
    pub fn execute_scanned(
        &mut self,
        sql: &str,
        scan: heapdb_grammar::ScannedInsert,
        lits: &mut Vec<heapdb_grammar::ScannedLiteral>,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        debug_assert_eq!(
            heapdb_grammar::scan_single_insert(sql, &mut Vec::new()),
            Some(scan),
            "a scan of another statement"
        );
        if self.read_only_now() {
            // The full path checks what a READ ONLY transaction may run.
            lits.clear();
            return self.execute_streaming(sql, sink);
        }
        self.cancel.store(false, Ordering::Relaxed);
        std::mem::swap(&mut self.insert_scratch.lits, lits);
        let r = self.run_scanned(sql, scan, std::time::Duration::ZERO, sink);
        std::mem::swap(&mut self.insert_scratch.lits, lits);
        lits.clear();
        r
    }

    /// Runs the scanned single-row INSERT `sql` (its literals in the
    /// insert scratch) as its own statement; `parse` is its scan's time.
    fn run_scanned(
        &mut self,
        sql: &str,
        scan: heapdb_grammar::ScannedInsert,
        parse: std::time::Duration,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let mut r = self.run_classified(Class::Other { writes: true }, &mut |s| {
            s.insert_scanned(sql, scan, &mut *sink)
                .or_else(|e| s.scanned_view_target(e, sql, scan, &mut *sink))
        })?;
        r.timing.parse = parse;
        Ok(r)
    }

    fn run_statement(
        &mut self,
        stmt: &ast::Statement,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        self.run_statement_with(stmt, &mut |s| s.dispatch(stmt, sink))
    }

    /// Runs `stmt` with transaction handling around `run`, which does the
    /// statement's work (the dispatcher, or COPY with client data).
    fn run_statement_with(
        &mut self,
        stmt: &ast::Statement,
        run: &mut dyn FnMut(&mut Session) -> Result<QueryResult>,
    ) -> Result<QueryResult> {
        let class = match stmt {
            ast::Statement::Begin(modes) => Class::Begin(modes),
            ast::Statement::Commit { chain } => Class::Commit(*chain),
            ast::Statement::Rollback { chain } => Class::Rollback(*chain),
            other => Class::Other {
                writes: writes(other),
            },
        };
        self.run_classified(class, &mut |s| {
            s.check_read_only(stmt)?;
            run(s)
        })
    }

    /// [`Session::run_statement_with`] for a statement of class `class`.
    fn run_classified(
        &mut self,
        class: Class<'_>,
        run: &mut dyn FnMut(&mut Session) -> Result<QueryResult>,
    ) -> Result<QueryResult> {
        // After a failed log flush nothing runs (`wal::writer`).
        self.db.wal.healthy()?;
        let buffers_before = BufferUsage::current();
        // Notices left by a statement that failed are not this one's.
        drop(crate::exec::plpgsql::take_notices());
        let mut result = match class {
            Class::Begin(modes) => self.begin(modes),
            Class::Commit(chain) => self.commit_block(chain),
            Class::Rollback(chain) => self.rollback_block(chain),
            Class::Other { writes } => {
                if self.txn_status() == TxnStatus::Failed {
                    return Err(err!(
                        InFailedSqlTransaction,
                        "current transaction is aborted, commands ignored until end of transaction block"
                    ));
                }
                self.restart.set(false);
                let implicit = self.txn.is_none();
                if implicit {
                    self.start_txn(false, None)?;
                }
                if writes {
                    self.assign_xid()?;
                }
                self.seqs.set_read_only(self.txn_ref().read_only);
                let r = loop {
                    let r = run(self);
                    // A READ COMMITTED statement that waited for a lock
                    // runs again with a snapshot taken after the wait, as
                    // PostgreSQL's would have been (it locks before it
                    // takes its snapshot). Nothing was changed yet: tables
                    // are locked while planning.
                    if r.is_err() && self.restart.replace(false) {
                        continue;
                    }
                    break r;
                };
                self.txn_mut().cid += 1;
                match r {
                    Ok(r) => {
                        if implicit {
                            self.commit()?;
                        }
                        Ok(r)
                    }
                    Err(e) => {
                        if implicit {
                            // The statement's error is what the user needs
                            // to see; an abort failure would only hide it.
                            let _ = self.abort();
                        } else if let Some(t) = &mut self.txn {
                            t.failed = true;
                        }
                        Err(e)
                    }
                }
            }
        }?;
        result.buffers = BufferUsage::current().since(&buffers_before);
        for (severity, message) in crate::exec::plpgsql::take_notices() {
            result.notices.push(result::Notice { severity, message });
        }
        let settings = &self.settings;
        result
            .notices
            .retain(|n| settings.sends_to_client(n.severity));
        Ok(result)
    }

    /// The notices a statement that failed raised before its error (a
    /// function's RAISE NOTICE), for the client to show before the error as
    /// PostgreSQL sends them; those below `client_min_messages` are left
    /// out. A successful statement's notices are in its result.
    pub fn take_failed_statement_notices(&mut self) -> Vec<result::Notice> {
        let settings = &self.settings;
        crate::exec::plpgsql::take_notices()
            .into_iter()
            .filter(|(severity, _)| settings.sends_to_client(severity))
            .map(|(severity, message)| result::Notice { severity, message })
            .collect()
    }

    fn dispatch(
        &mut self,
        stmt: &ast::Statement,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        match stmt {
            ast::Statement::Query(q) => self.run_query(q, sink),
            ast::Statement::Explain(e) => self.explain(e),
            ast::Statement::Insert(i) => match self.written_view(&i.table) {
                Some(v) => self.insert_into_view(i, v, sink),
                None => self.insert(i, sink),
            },
            ast::Statement::Update(u) => match self.written_view(&u.table) {
                Some(v) => self.update_view(u, v, sink),
                None => self.update(u, sink),
            },
            ast::Statement::Delete(d) => match self.written_view(&d.table) {
                Some(v) => self.delete_from_view(d, v, sink),
                None => self.delete(d, sink),
            },
            ast::Statement::CreateView(c) => self.create_view(c),
            ast::Statement::CreateSequence(c) => self.create_sequence(c),
            ast::Statement::AlterSequence(a) => self.alter_sequence(a),
            ast::Statement::DropSequence(d) => self.drop_sequence(d),
            ast::Statement::DropView(d) => self.drop_view(d),
            ast::Statement::CreateFunction(c) => self.create_function(c),
            ast::Statement::DropFunction(d) => self.drop_function(d),
            ast::Statement::AlterFunction(a) => self.alter_function(a),
            ast::Statement::CreateDomain(c) => self.create_domain(c),
            ast::Statement::DropDomain(d) => self.drop_domain(d),
            ast::Statement::DefineType(d) => self.define_type(d),
            ast::Statement::DropType(d) => self.drop_type(d),
            ast::Statement::CreateCast(c) => self.create_cast(c),
            ast::Statement::DropCast(d) => self.drop_cast(d),
            ast::Statement::AlterDomain(a) => self.alter_domain(a),
            ast::Statement::CreateOperator(c) => self.create_operator(c),
            ast::Statement::DropOperator(d) => self.drop_operator(d),
            ast::Statement::CreateTable(c) => self.create_table(c),
            ast::Statement::CreateTableAs(c) => self.create_table_as(c),
            ast::Statement::DropTable(d) => self.drop_table(d),
            ast::Statement::Truncate(t) => self.truncate(t),
            ast::Statement::CreateIndex(c) => self.create_index(c),
            ast::Statement::DropIndex(d) => self.drop_index(d),
            ast::Statement::AlterTable(a) => self.alter_table(a),
            ast::Statement::Reindex(r) => self.reindex(r),
            ast::Statement::Comment(c) => self.comment(c),
            ast::Statement::Set(s) => self.set(s),
            ast::Statement::Show(s) => self.show(s),
            ast::Statement::Reset(r) => self.reset(r),
            ast::Statement::Do(d) => {
                let snap = self.statement_snapshot();
                crate::commands::functioncmds::run_do(d, &mut self.stmt_ctx(&snap))?;
                Ok(QueryResult::empty("DO"))
            }
            ast::Statement::SetTransaction(m) => self.set_transaction(m),
            ast::Statement::Checkpoint => {
                self.db.checkpoint()?;
                Ok(QueryResult::empty("CHECKPOINT"))
            }
            ast::Statement::Copy(c) => self.copy(c, &mut copy::CopyIo::None, None),
            ast::Statement::Vacuum(v) => self.vacuum(v),
            ast::Statement::Analyze(a) => self.analyze(a),
            ast::Statement::DeclareCursor(d) => self.declare_cursor(d),
            ast::Statement::Fetch(f) => self.fetch_cursor(f, sink),
            ast::Statement::Close(c) => self.close_cursor(c.as_deref()),
            ast::Statement::Prepare(p) => self.prepare_statement(p),
            ast::Statement::Execute(e) => self.execute_prepared(e, sink),
            ast::Statement::Deallocate(d) => self.deallocate(d.as_deref()),
            ast::Statement::Begin(_)
            | ast::Statement::Commit { .. }
            | ast::Statement::Rollback { .. } => {
                unreachable!("handled by run_statement")
            }
        }
    }

    pub(crate) fn txn_mut(&mut self) -> &mut Txn {
        self.txn
            .as_mut()
            .expect("a statement runs inside a transaction")
    }

    pub(crate) fn txn_ref(&self) -> &Txn {
        self.txn
            .as_ref()
            .expect("a statement runs inside a transaction")
    }

    fn start_txn(&mut self, block: bool, isolation: Option<Isolation>) -> Result<()> {
        let isolation = match isolation {
            Some(i) => i,
            None => self.default_isolation()?,
        };
        self.txn = Some(Txn {
            xid: INVALID_XID,
            owner: self.db.locks.new_owner(),
            block,
            failed: false,
            isolation,
            read_only: self.settings.default_transaction_read_only,
            deferrable: self.settings.default_transaction_deferrable,
            snapshot: None,
            cid: 0,
            catalog_changed: false,
            drop_on_commit: Vec::new(),
            drop_on_abort: Vec::new(),
            start_settings: self.settings.clone(),
            commit_settings: self.settings.clone(),
            start_ts: crate::types::datetime::system_now(),
        });
        Ok(())
    }

    /// Gives the transaction an xid if it has none yet.
    pub(crate) fn assign_xid(&mut self) -> Result<Xid> {
        let t = self.txn.as_mut().expect("inside a transaction");
        if t.xid == INVALID_XID {
            t.xid = self.db.txns.begin()?;
            // Held until the transaction ends: others wait for it here.
            self.db.locks.acquire(
                t.owner,
                LockTag::Transaction(t.xid),
                LockMode::Exclusive,
                &self.cancel,
            )?;
            if let Some(s) = &mut t.snapshot {
                s.current_xid = t.xid;
            }
        }
        Ok(t.xid)
    }

    /// The snapshot for the current statement (registered for VACUUM's
    /// horizon while the transaction lasts).
    pub(crate) fn statement_snapshot(&mut self) -> Snapshot {
        let db = self.db.clone();
        let t = self.txn.as_mut().expect("inside a transaction");
        match (&t.snapshot, t.isolation) {
            (Some(s), Isolation::RepeatableRead) => s.with_cid(t.cid),
            _ => {
                if let Some(old) = t.snapshot.take() {
                    db.txns.unregister_snapshot(&old);
                }
                let s = db.txns.snapshot(t.xid, t.cid);
                db.txns.register_snapshot(&s);
                t.snapshot = Some(s.clone());
                s
            }
        }
    }

    fn end_txn(&mut self, commit: bool) -> Result<()> {
        // Sequence values handed out are durable before the client can
        // act on them, whatever becomes of the transaction.
        if let Some(lsn) = self.seqs.take_flush() {
            self.db.wal.flush(lsn)?;
        }
        let Some(t) = self.txn.take() else {
            return Ok(());
        };
        if let Some(s) = &t.snapshot {
            self.db.txns.unregister_snapshot(s);
        }
        // Before the commit point: the catalog file (written with this
        // transaction's entries, which stay invisible unless it commits) and
        // the files of relations it created and filled without logging. If
        // either fails the transaction has not committed: it ends as an
        // abort, so its xid does not stay running and its changes are undone.
        let prepared = if commit && t.xid != INVALID_XID {
            (|| {
                if t.catalog_changed {
                    self.db.catalog.persist()?;
                }
                for &rel in &t.drop_on_abort {
                    self.db
                        .pool
                        .flush_relation(crate::storage::RelFileNode(rel))?;
                }
                Ok(())
            })()
        } else {
            Ok(())
        };
        let commit = commit && prepared.is_ok();
        self.cursors.end_of_transaction(commit);
        self.settings = if commit {
            t.commit_settings
        } else {
            t.start_settings
        };
        if t.xid == INVALID_XID {
            return Ok(());
        }
        // A transaction that logged nothing, changed no catalog entry and
        // drops no file needs no commit or abort record (a read-only BEGIN).
        let logged = self.db.wal.has_logged(t.xid);
        if commit {
            let mut flushed = Ok(());
            // From the commit record to the commit-log entry: a checkpoint
            // in between waits for the entry (the commit log is written at
            // checkpoints, not per commit: `txn::manager`).
            let in_flight = self.db.txns.commit_in_flight();
            if logged || t.catalog_changed || !t.drop_on_commit.is_empty() {
                let lsn = self.db.wal.insert(
                    t.xid,
                    &WalRecord::Commit {
                        drops: t.drop_on_commit.clone(),
                    },
                );
                if !t.drop_on_commit.is_empty() {
                    // A commit that removes files is synchronous whatever
                    // the settings (PostgreSQL's RecordTransactionCommit):
                    // the unlink below cannot be undone, so the record
                    // whose redo does it, and without which the old file
                    // is the table's data, must be durable first.
                    flushed = self.db.wal.flush(lsn);
                } else if self.settings.synchronous_commit.waits_for_flush() {
                    if self.commit_ack == CommitAck::Deferred {
                        // The client flushes before it reveals the commit.
                        self.db.txns.clog().note_async_commit(t.xid, lsn);
                        self.gate.defer(lsn);
                    } else {
                        // Group commit: one fdatasync serves every session
                        // waiting here at the same time.
                        flushed = self.db.wal.flush(lsn);
                        if flushed.is_err() {
                            // Not durable yet (the records stay buffered
                            // for the next write): no hint bit may say
                            // committed before the record is on disk.
                            self.db.txns.clog().note_async_commit(t.xid, lsn);
                        }
                    }
                } else {
                    self.db.txns.clog().note_async_commit(t.xid, lsn);
                }
            }
            if let Err(e) = flushed {
                // The commit record may not be on disk, and the log failed
                // for good (`wal::writer`, as PostgreSQL PANICs here): the
                // transaction is never marked committed, so nothing can see
                // its changes; every later statement is refused, and
                // reopening lets recovery decide from the disk. The old
                // files of its drops stay (recovery may need them).
                self.db.txns.forget(t.xid);
                drop(in_flight);
                return Err(e);
            }
            let committed = self.db.txns.commit(t.xid);
            drop(in_flight);
            committed?;
            // The transaction has committed: failing to remove an old file
            // (another session still reading it) must not turn into a
            // commit error. The file is left behind, which wastes space but
            // is never read again.
            for rel in t.drop_on_commit {
                let _ = self.db.drop_relation(rel);
            }
        } else {
            self.db.catalog.abort(t.xid);
            if logged || !t.drop_on_abort.is_empty() {
                self.db.wal.insert(
                    t.xid,
                    &WalRecord::Abort {
                        drops: t.drop_on_abort.clone(),
                    },
                );
            }
            self.db.txns.abort(t.xid)?;
            for rel in t.drop_on_abort {
                let _ = self.db.drop_relation(rel);
            }
        }
        prepared
    }

    pub(crate) fn commit(&mut self) -> Result<()> {
        // Temporary tables' ON COMMIT actions run inside the transaction,
        // before it commits (PostgreSQL's PreCommit_on_commit_actions); if
        // one fails, the transaction aborts.
        if let Err(e) = self
            .on_commit_actions()
            .and_then(|()| self.fk_check_deferred())
        {
            let _ = self.abort();
            return Err(e);
        }
        self.end_txn_and_unlock(true)
    }

    pub(crate) fn abort(&mut self) -> Result<()> {
        self.end_txn_and_unlock(false)
    }

    /// Ends the transaction, then lets go of its locks (after its outcome
    /// is in the commit log, so whoever waited finds it there).
    fn end_txn_and_unlock(&mut self, commit: bool) -> Result<()> {
        let owner = self.txn.as_ref().map(|t| t.owner);
        self.fk_deferred.clear();
        let r = self.end_txn(commit);
        if let Some(owner) = owner {
            self.db.locks.release_all(owner);
        }
        r
    }

    fn begin(&mut self, modes: &ast::TransactionModes) -> Result<QueryResult> {
        if self.txn.is_some() {
            let mut r = QueryResult::empty("BEGIN");
            r.notices.push(Notice::warning(
                "there is already a transaction in progress",
            ));
            return Ok(r);
        }
        let c = self.characteristics_of(modes)?;
        self.begin_with(c)?;
        Ok(QueryResult::empty("BEGIN"))
    }

    fn commit_block_plain(&mut self) -> Result<QueryResult> {
        match self.txn_status() {
            TxnStatus::Idle => {
                let mut r = QueryResult::empty("COMMIT");
                r.notices
                    .push(Notice::warning("there is no transaction in progress"));
                Ok(r)
            }
            TxnStatus::Failed => {
                self.abort()?;
                Ok(QueryResult::empty("ROLLBACK"))
            }
            TxnStatus::InBlock => {
                if let Err(e) = self.commit() {
                    let _ = self.abort();
                    return Err(e);
                }
                Ok(QueryResult::empty("COMMIT"))
            }
        }
    }

    fn rollback_block_plain(&mut self) -> Result<QueryResult> {
        if self.txn_status() == TxnStatus::Idle {
            let mut r = QueryResult::empty("ROLLBACK");
            r.notices
                .push(Notice::warning("there is no transaction in progress"));
            return Ok(r);
        }
        self.abort()?;
        Ok(QueryResult::empty("ROLLBACK"))
    }

    /// A view of the catalog under `snap`.
    pub(crate) fn catalog_view<'a>(&'a self, snap: &'a Snapshot) -> CatalogView<'a> {
        CatalogView {
            snapshot: snap,
            txns: &self.db.txns,
            temp_ns: self.temp_ns,
        }
    }

    /// The table `name` as `snap` sees it, locked in `mode` for the rest of
    /// the transaction.
    pub(crate) fn lookup_table(
        &self,
        snap: &Snapshot,
        name: &str,
        mode: LockMode,
    ) -> Result<Arc<TableDef>> {
        self.table_locker().open(&self.db, snap, name, mode)
    }

    /// What statements of the current transaction need to lock tables.
    pub(crate) fn table_locker(&self) -> TableLocker<'_> {
        let t = self.txn_ref();
        TableLocker {
            owner: t.owner,
            xid: t.xid,
            isolation: t.isolation,
            cancel: &self.cancel,
            restart: &self.restart,
            temp_ns: self.temp_ns,
        }
    }
}

/// Locks the tables a statement names, PostgreSQL's way: look the name up,
/// lock the table, then make sure what the snapshot saw is still the
/// table's storage.
#[derive(Clone, Copy)]
pub(crate) struct TableLocker<'s> {
    /// The transaction's lock owner.
    pub owner: Owner,
    /// Its xid (or [`INVALID_XID`]).
    pub xid: Xid,
    /// Its isolation level.
    pub isolation: Isolation,
    /// The statement's cancel flag (waits stop on it).
    pub cancel: &'s AtomicBool,
    /// Set to ask for the statement to run again (READ COMMITTED).
    pub restart: &'s Cell<bool>,
    /// The session's temporary namespace (its temporary tables are found
    /// first; 0: it has none).
    pub temp_ns: u32,
}

impl TableLocker<'_> {
    /// The table `name` as `snap` sees it, locked in `mode`. When the lock
    /// had to wait, or the table was dropped, truncated or altered by a
    /// transaction that committed after `snap` was taken, a READ COMMITTED
    /// statement is restarted (with a new snapshot) and a REPEATABLE READ
    /// one fails with 40001.
    pub fn open(
        &self,
        db: &Database,
        snap: &Snapshot,
        name: &str,
        mode: LockMode,
    ) -> Result<Arc<TableDef>> {
        let view = CatalogView {
            snapshot: snap,
            txns: &db.txns,
            temp_ns: self.temp_ns,
        };
        let def = db.catalog.get(&view, name)?;
        let waited = db
            .locks
            .acquire(self.owner, LockTag::Relation(def.oid), mode, self.cancel)?;
        let current = db.catalog.storage_is_current(&db.txns, self.xid, &def);
        match self.isolation {
            Isolation::ReadCommitted if waited || !current => {
                self.restart.set(true);
                Err(err!(
                    SerializationFailure,
                    "relation \"{name}\" changed while its lock was awaited"
                ))
            }
            Isolation::RepeatableRead if !current => Err(err!(
                SerializationFailure,
                "could not serialize access due to concurrent update"
            )),
            _ => Ok(def),
        }
    }
}

fn isolation_of(modes: &ast::TransactionModes) -> Result<Option<Isolation>> {
    Ok(match modes.isolation {
        None => None,
        Some(ast::IsolationLevel::ReadCommitted) | Some(ast::IsolationLevel::ReadUncommitted) => {
            Some(Isolation::ReadCommitted)
        }
        Some(ast::IsolationLevel::RepeatableRead) => Some(Isolation::RepeatableRead),
        Some(ast::IsolationLevel::Serializable) => {
            return Err(err!(
                FeatureNotSupported,
                "SERIALIZABLE isolation is not supported"
            )
            .with_hint("Use REPEATABLE READ."))
        }
    })
}

#[cfg(test)]
mod tests;
