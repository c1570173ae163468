//! COPY: loading a table from a file or the client, and writing a table or
//! a query's rows to a file or the client, in PostgreSQL's text and CSV
//! formats (the formats themselves are [`crate::copy`]).
//!
//! ## Client-side data (STDIN / STDOUT)
//! A session has no terminal: `COPY ... FROM STDIN` and `COPY ... TO STDOUT`
//! need the caller to hand over the data stream, through
//! [`Session::copy_in`] (reads until end of input or a line `\.`) and
//! [`Session::copy_out`]; [`Session::copy_with`] does either and also takes
//! a progress callback. Plain [`Session::execute`] of such a COPY fails with
//! a message naming these functions. Files named in the statement are read
//! and written by the session itself (server-side, as PostgreSQL's).
//!
//! ## Load path
//! Records are read in place from a 1 MiB input buffer
//! ([`crate::copy::reader::RecordReader`]). A text-format record of a COPY
//! that names every column in order goes through the fast path
//! (`fast`): integers parsed into their slots, strings copied behind their
//! varlena header, in one pass; any other record (escapes, NULLs, CSV,
//! column lists, defaults, anything the fast path declines) is split into
//! fields and converted by each column's input function (`load`'s general
//! path), which also raises PostgreSQL's errors. The tuples are packed into
//! whole heap pages off the buffer pool (`PageImages`), and each page goes
//! onto a new block through the bulk-write ring and is logged as one
//! full-page image (LZ4-compressed with `wal_compression`: ~900 bytes for a
//! page of pgbench accounts). A server-side file in text format is loaded
//! by three threads that each read, parse, compress and place their own 2 MiB
//! chunks, in file order (`parallel`); other input is parsed on the
//! session's thread while an inserter thread places the pages. So a load larger than
//! `shared_buffers` does not evict the rest of the cache and writes about a
//! ninth of the log a tuple-by-tuple record would. Space the table already
//! has (a VACUUM freed it, an earlier load left the last page part full) is
//! filled first, tuple by tuple. The first bad record stops the COPY with
//! PostgreSQL's message and a CONTEXT line (`COPY t, line 12, column a:
//! "x"`); the statement's transaction then aborts, so none of its rows is
//! visible.
//!
//! COPY was designed to fill pages through multi-insert: it still does for
//! the free space of existing pages, but new pages are built whole and
//! logged as images (PostgreSQL's `log_newpage`) because per-tuple
//! multi-insert records cost the load most of its time here (copying each
//! tuple into a record, applying it, encoding it, and writing ~105 bytes of
//! log per row), where an image is one copy and compresses well.
//!
//! `FREEZE` is accepted only when the table was created or truncated in the
//! current transaction (PostgreSQL's rule, and its error otherwise). The rows
//! are then written frozen and the pages they fill all-visible and
//! all-frozen in the visibility map, with their live counts
//! (`HeapRelation::multi_insert_frozen`): `count(*)` right after the COPY
//! reads only the map, and no VACUUM is needed after COMMIT. Until the
//! commit no other session can see them: the table's file is new in this
//! transaction, and other sessions read the catalog under their snapshots
//! (a REPEATABLE READ transaction whose snapshot predates the commit gets
//! "relation does not exist" for a created table, and a serialization
//! failure for a truncated one, where PostgreSQL would show it the frozen
//! rows: its documented exception to MVCC that heapdb does not make). If
//! the transaction aborts, or the system crashes before its commit, the
//! file is dropped with every row in it.
//!
//! ## Unload path
//! `COPY table TO` formats each visible tuple straight from the page bytes
//! on two threads, chunk by chunk, while the calling thread writes the
//! chunks in order (`table_out`; text-format rows of integers and strings
//! through `text_row`'s writer); `COPY (query) TO` formats the executor's
//! batches (`unload`), text straight from their string vectors. A file
//! that exists is written over in place and cut to length at the end
//! rather than truncated when opened ([`crate::copy::out_file`] says why
//! and what that changes).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::sync::atomic::Ordering;
use std::time::Instant;

use heapdb_grammar::ast;

use super::dml::target_columns;
use super::{Column, Progress, ProgressUnit, QueryResult, Session};
use crate::access::heap::tuple;
use crate::copy::out_file::OutFile;
use crate::copy::{self, csv, text, CopyOptions, Field, ForceQuote, Format};
use crate::err;
use crate::error::{Error, Result};
use crate::exec::scan::tuple_desc;
use crate::exec::vector::{Batch, Data};
use crate::storage::StrategyKind;
use crate::txn::LockMode;
use crate::types::cast::{cast_from, CastContext};
use crate::types::io::{coerce_literal, int_digits, parse_value_at};
use crate::types::{format_value, DataType, Value};

/// Where a COPY's client-side data comes from or goes to.
pub enum CopyIo<'a> {
    /// No client stream: only files may be named.
    None,
    /// Data for `COPY ... FROM STDIN`.
    In(&'a mut dyn BufRead),
    /// Destination of `COPY ... TO STDOUT`.
    Out(&'a mut dyn Write),
}

/// How far a running COPY has got, handed to the progress callback after
/// every batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CopyProgress {
    /// Input bytes read so far (COPY FROM).
    pub bytes: u64,
    /// The input file's size, when known (COPY FROM a file).
    pub total_bytes: Option<u64>,
    /// Rows loaded or written so far.
    pub rows: u64,
}

/// The progress callback type.
pub type ProgressFn<'a> = &'a mut dyn FnMut(&CopyProgress);

/// Output is handed to the writer in pieces of about this size.
const OUT_CHUNK: usize = 256 << 10;

/// An OS error's text without Rust's ` (os error N)` suffix, as `%m` prints.
fn os_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn file_error(e: std::io::Error, path: &str, how: &str) -> Error {
    let code = Error::from(std::io::Error::from(e.kind())).code;
    Error::new(
        code,
        format!("could not open file \"{path}\" for {how}: {}", os_text(&e)),
    )
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
                    let write_error = |e: std::io::Error| {
                        err!(IoError, "could not write to COPY file: {}", os_text(&e))
                    };
                    w.into_inner()
                        .map_err(|e| write_error(e.into_error()))?
                        .finish()
                        .map_err(write_error)?;
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

/// Where COPY FROM reads: a file (opened once the table and columns are
/// known to be right, as PostgreSQL does) or the client's stream.
pub(super) enum Input<'a, 'b> {
    /// A server-side file.
    File(&'a str),
    /// The client's data.
    Client(&'a mut (dyn BufRead + 'b)),
}

/// Opens `path` for COPY FROM: the reader and the file's size.
fn open_input(path: &str) -> Result<(BufReader<File>, u64)> {
    let f = File::open(path).map_err(|e| file_error(e, path, "reading"))?;
    let meta = f.metadata()?;
    if meta.is_dir() {
        return Err(err!(WrongObjectType, "\"{path}\" is a directory"));
    }
    Ok((BufReader::with_capacity(1 << 20, f), meta.len()))
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

mod load;
mod parallel;
mod record_to_tuple;
mod table_out;
mod text_row;
mod unload;
