//! COPY as a statement of the session: parsing its options, resolving the
//! table and columns (with their locks) under the statement's snapshot,
//! the client's data stream, and handing the work to the copy layer
//! ([`crate::copy::load`], [`crate::copy::unload`]) with an explicit
//! [`CopyContext`]. How rows are loaded and written, and what that
//! promises, is documented there.
//!
//! ## Client-side data (STDIN / STDOUT)
//! A session has no terminal: `COPY ... FROM STDIN` and `COPY ... TO STDOUT`
//! need the caller to hand over the data stream, through
//! [`Session::copy_in`] (reads until end of input or a line `\.`) and
//! [`Session::copy_out`]; [`Session::copy_with`] does either and also takes
//! a progress callback. Plain [`Session::execute`] of such a COPY fails with
//! a message naming these functions. Files named in the statement are read
//! and written by the server side (as PostgreSQL's), not the client.
//!
//! `FREEZE` is accepted only when the table was created or truncated in the
//! current transaction (PostgreSQL's rule, and its error otherwise).
//!
//! Index entries for the rows a COPY FROM loaded are made here, after the
//! load returns (the statement's transaction is the session's).

use std::io::{BufRead, BufWriter, Write};
use std::sync::atomic::Ordering;
use std::time::Instant;

use heapdb_grammar::ast;

use super::{Progress, ProgressUnit, QueryResult, Session};
use crate::copy::context::{file_error, write_error};
use crate::copy::load::{self, ColumnDomain, Input, LoadTarget};
use crate::copy::out_file::OutFile;
use crate::copy::unload::{self, RowWriter, TableUnload};
use crate::copy::{CopyContext, CopyOptions};
pub use crate::copy::{CopyProgress, ProgressFn};
use crate::err;
use crate::error::{Error, Result};
use crate::plan::modify::target_columns;
use crate::storage::StrategyKind;
use crate::txn::{LockMode, Snapshot};
use crate::types::cast::{cast_from, CastContext};
use crate::types::io::coerce_literal;
use crate::types::{DataType, Value};

/// Where a COPY's client-side data comes from or goes to.
pub enum CopyIo<'a> {
    /// No client stream: only files may be named.
    None,
    /// Data for `COPY ... FROM STDIN`.
    In(&'a mut dyn BufRead),
    /// Destination of `COPY ... TO STDOUT`.
    Out(&'a mut dyn Write),
}

impl Session {
    /// Runs `sql`, one `COPY ... FROM STDIN`, reading its data from `data`
    /// until end of input or a line `\.`. Returns the `COPY n` result.
    pub fn copy_in(&mut self, sql: &str, data: &mut dyn BufRead) -> Result<QueryResult> {
        self.copy_with(sql, CopyIo::In(data), None)
    }

    /// Runs `sql`, one `COPY ... TO STDOUT`, writing its rows to `out`.
    pub fn copy_out(&mut self, sql: &str, out: &mut dyn Write) -> Result<QueryResult> {
        self.copy_with(sql, CopyIo::Out(out), None)
    }

    /// Runs `sql`, one COPY statement, with client-side data `io` and an
    /// optional progress callback (called after every batch).
    pub fn copy_with(
        &mut self,
        sql: &str,
        mut io: CopyIo<'_>,
        mut progress: Option<ProgressFn<'_>>,
    ) -> Result<QueryResult> {
        self.cancel.store(false, Ordering::Relaxed);
        let start = Instant::now();
        let stmt = heapdb_grammar::parse_one(sql).map_err(super::parse_error)?;
        let ast::Statement::Copy(c) = &stmt else {
            return Err(err!(
                FeatureNotSupported,
                "copy_in and copy_out run a single COPY statement"
            ));
        };
        let parse = start.elapsed();
        let mut r = self.run_statement_with(&stmt, &mut |s| {
            let p = progress
                .as_mut()
                .map(|p| &mut **p as &mut dyn FnMut(&CopyProgress));
            s.copy(c, &mut io, p)
        })?;
        r.timing.parse = parse;
        Ok(r)
    }

    /// Runs one COPY statement (the entry point from `dispatch`).
    pub(crate) fn copy(
        &mut self,
        c: &ast::Copy,
        io: &mut CopyIo<'_>,
        mut progress: Option<&mut dyn FnMut(&CopyProgress)>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let is_from = c.direction == ast::CopyDirection::From;
        // Reports go to the caller's callback and the session's hook.
        let hook = self.progress.clone();
        let mut both = |p: &CopyProgress| {
            if let Some(f) = progress.as_mut() {
                f(p);
            }
            if let Some(h) = &hook {
                let (done, total, unit) = match (is_from, p.total_bytes) {
                    (true, Some(t)) => (p.bytes, Some(t), ProgressUnit::Bytes),
                    (true, None) => (p.bytes, None, ProgressUnit::Bytes),
                    (false, _) => (p.rows, None, ProgressUnit::Rows),
                };
                h(&Progress { done, total, unit });
            }
        };
        let progress: Option<&mut dyn FnMut(&CopyProgress)> = Some(&mut both);
        let opts = CopyOptions::from_ast(&c.options, is_from)?;
        let rows = if is_from {
            let ast::CopySource::Table { name, columns } = &c.source else {
                return Err(err!(SyntaxError, "COPY FROM does not support a query"));
            };
            let input = match (&c.target, io) {
                (ast::CopyTarget::File(path), _) => Input::File(path),
                (_, CopyIo::In(r)) => Input::Client(&mut **r),
                _ => return Err(no_client_stream("FROM STDIN", "Session::copy_in")),
            };
            let rows = self.copy_from(name, columns, &opts, input, progress)?;
            self.index_copied_rows(&name.name)?;
            rows
        } else {
            let source = self.copy_source(c)?;
            match (&c.target, io) {
                (ast::CopyTarget::File(path), _) => {
                    if !std::path::Path::new(path).is_absolute() {
                        return Err(err!(
                            InvalidName,
                            "relative path not allowed for COPY to file"
                        ));
                    }
                    // Written over in place, cut to length at the end
                    // (`copy::out_file` says why).
                    let f = OutFile::create(path).map_err(|e| file_error(e, path, "writing"))?;
                    let mut w = BufWriter::new(f);
                    let n = self.copy_to(&source, &opts, &mut w, progress)?;
                    w.into_inner()
                        .map_err(|e| write_error(e.error()))?
                        .finish()
                        .map_err(|e| write_error(&e))?;
                    n
                }
                (_, CopyIo::Out(w)) => {
                    let n = self.copy_to(&source, &opts, &mut **w, progress)?;
                    w.flush()?;
                    n
                }
                _ => return Err(no_client_stream("TO STDOUT", "Session::copy_out")),
            }
        };
        let mut r = QueryResult::empty(&format!("COPY {rows}"));
        r.timing.execute = t0.elapsed();
        Ok(r)
    }
}

/// What a COPY TO writes, resolved before any file is opened.
enum Unload {
    /// `COPY (query) TO`.
    Query(ast::Query),
    /// `COPY table [(cols)] TO`, under the statement's snapshot.
    Table(TableUnload, Snapshot),
}

impl Session {
    /// The statement's context for the copy layer.
    fn copy_context<'a>(
        &self,
        snapshot: &'a Snapshot,
        cancel: &'a std::sync::atomic::AtomicBool,
        progress: Option<&'a mut dyn FnMut(&CopyProgress)>,
    ) -> CopyContext<'a> {
        let t = self.txn_ref();
        CopyContext {
            xid: t.xid,
            cid: t.cid,
            now: t.start_ts,
            snapshot,
            cancel,
            progress,
            ring_sizes: crate::database::ring_sizes(&self.settings),
        }
    }

    /// Loads the records of `input` into table `name`; returns the row count.
    fn copy_from(
        &mut self,
        name: &ast::ObjectName,
        columns: &[String],
        opts: &CopyOptions,
        input: Input<'_, '_>,
        progress: Option<&mut dyn FnMut(&CopyProgress)>,
    ) -> Result<u64> {
        let snap = self.statement_snapshot();
        let table = self.lookup_table(&snap, &name.name, LockMode::RowExclusive)?;
        let targets = target_columns(&table, columns)?;
        if opts.freeze && !self.txn_ref().drop_on_abort.contains(&table.relfilenode) {
            return Err(err!(
                ObjectNotInPrerequisiteState,
                "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction"
            ));
        }
        let domains = self.column_domains(&snap, &table)?;
        let rel = self.db.relation(table.relfilenode)?;
        let sizes = crate::database::ring_sizes(&self.settings);
        let ring = self.db.pool.ring_with(StrategyKind::BulkWrite, &sizes);
        let cancel = self.cancel.clone();
        let progress = progress.map(|p| p as &mut dyn FnMut(&CopyProgress));
        let mut ctx = self.copy_context(&snap, &cancel, progress);
        let mut default_value = |text: &str, ty: &DataType| self.default_value(text, ty);
        let target = LoadTarget {
            table: &table,
            rel: &rel,
            ring,
            targets: &targets,
            default_value: &mut default_value,
            domains: &domains,
        };
        load::copy_from(&mut ctx, target, opts, input)
    }

    /// Each column's domain as COPY FROM applies it (empty when no column
    /// has one).
    fn column_domains(
        &mut self,
        snap: &Snapshot,
        table: &crate::catalog::TableDef,
    ) -> Result<Vec<Option<ColumnDomain>>> {
        if table.columns.iter().all(|c| c.domain.is_none()) {
            return Ok(Vec::new());
        }
        let mut ctx = self.stmt_ctx(snap);
        let mut binder = crate::plan::bind::Binder::new(&mut ctx);
        let mut out = Vec::with_capacity(table.columns.len());
        for c in &table.columns {
            out.push(match &c.domain {
                None => None,
                Some(name) => {
                    let d = binder.column_domain(name)?;
                    Some(ColumnDomain {
                        default: binder.domain_default(&d)?,
                        check: binder.domain_check_fn(&d)?,
                    })
                }
            });
        }
        Ok(out)
    }

    /// The value of a column's DEFAULT expression, converted to its type.
    fn default_value(&mut self, text: &str, ty: &DataType) -> Result<Value> {
        let stmt =
            heapdb_grammar::parse_one(&format!("SELECT {text}")).map_err(super::parse_error)?;
        let ast::Statement::Query(q) = stmt else {
            return Err(err!(InternalError, "bad stored default expression: {text}"));
        };
        let mut got = None;
        self.run_query(&q, &mut |cols, b| {
            if got.is_none() && b.len > 0 {
                got = Some((b.columns[0].get(0), cols[0].ty));
            }
            Ok(())
        })?;
        let (v, from) = got.ok_or_else(|| err!(InternalError, "default expression gave no row"))?;
        if v.is_null() || from == *ty {
            return Ok(v);
        }
        if from == DataType::Unknown {
            let now = self.txn_ref().start_ts;
            return coerce_literal(&v.to_string(), ty, CastContext::Assignment, now);
        }
        cast_from(&v, &from, ty, CastContext::Assignment)
    }

    /// What a COPY TO writes: the COPY's own query, or the table's columns
    /// (checked before any file is opened).
    fn copy_source(&mut self, c: &ast::Copy) -> Result<Unload> {
        Ok(match &c.source {
            ast::CopySource::Query(q) => Unload::Query((**q).clone()),
            ast::CopySource::Table { name, columns } => {
                let snap = self.statement_snapshot();
                let table = self.lookup_table(&snap, &name.name, LockMode::AccessShare)?;
                let cols = target_columns(&table, columns)?;
                let rel = self.db.relation(table.relfilenode)?;
                Unload::Table(TableUnload { table, rel, cols }, snap)
            }
        })
    }

    /// Writes the rows of `source` to `out`; returns the row count.
    fn copy_to(
        &mut self,
        source: &Unload,
        opts: &CopyOptions,
        out: &mut dyn Write,
        mut progress: Option<&mut dyn FnMut(&CopyProgress)>,
    ) -> Result<u64> {
        match source {
            Unload::Table(t, snap) => {
                let cancel = self.cancel.clone();
                let progress = progress.map(|p| p as &mut dyn FnMut(&CopyProgress));
                let mut ctx = self.copy_context(snap, &cancel, progress);
                unload::table_to(&mut ctx, t, opts, out)
            }
            Unload::Query(q) => {
                // The query runs here (the planner is above COPY); the copy
                // layer formats its batches.
                let mut w = RowWriter::new(opts, out);
                let result = self.run_query(q, &mut |cols, b| {
                    let p = progress
                        .as_mut()
                        .map(|p| &mut **p as &mut dyn FnMut(&CopyProgress));
                    w.batch(cols.iter().map(|c| c.name.as_str()), b, p)
                })?;
                w.finish(result.columns.iter().map(|c| c.name.as_str()), progress)
            }
        }
    }
}

fn no_client_stream(what: &str, api: &str) -> Error {
    err!(
        FeatureNotSupported,
        "COPY {what} needs a client data stream"
    )
    .with_hint(format!(
        "Use {api} (the shell's piped input and \\copy do), or name a file."
    ))
}
