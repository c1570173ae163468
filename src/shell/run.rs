//! The shell wired to the engine: running statements, meta-commands and
//! scripts against a [`Session`], printing results, notices, errors and
//! `\timing` lines as psql does.
//!
//! [`Runner`] owns the session and the [`ShellState`]. Results go to the
//! `\o` target; standard output is a large `BufWriter` when it is not a
//! terminal (a piped script of 100,000 INSERTs costs a handful of writes,
//! not one per command tag), and is flushed before anything goes to
//! standard error so the two interleave in order.
//!
//! Rows stream: [`Session::execute_streaming`] hands batches to a
//! [`ResultPrinter`] created at the first batch, so a large SELECT prints
//! as it runs and never sits in memory whole.
//!
//! Exit status follows psql: a failing statement in a script under
//! `ON_ERROR_STOP` ends the run with [`Flow::Stop`], which `main` turns into
//! status 3.

use std::cell::OnceCell;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::copy::{client_copy, ClientCopy, CopyData};
use super::external_sync::{self, before_output, Gated};
use super::meta::{Output, ShellState};
use super::print::{Align, ColumnInfo, ResultPrinter};
use super::progress::Tracker;
use super::report::{format_error, format_shell_error, Locus};
use super::timing::{timing_line, TimingDetail, TimingMode};
use crate::session::{format_value, Column, CommitAck, Error, QueryResult, Session};
use heapdb_grammar::{ScannedInsert, ScannedLiteral};

/// Set while a statement runs, so the Ctrl-C handler knows whether to
/// cancel it or (outside the prompt) to end the process.
pub static STATEMENT_RUNNING: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler: while a statement runs it sets `cancel`
/// (the session's flag); outside one it ends a non-interactive run with
/// status 130. At the prompt, rustyline reads Ctrl-C as a key. Call it once,
/// and for the prompt after the line editor exists: rustyline installs its
/// own SIGINT handler when it opens the terminal.
pub fn install_cancel_handler(cancel: Arc<AtomicBool>, interactive: bool) {
    let _ = ctrlc::set_handler(move || {
        if STATEMENT_RUNNING.load(Ordering::SeqCst) {
            cancel.store(true, Ordering::SeqCst);
        } else if !interactive {
            // Leaving between statements: what committed stays committed.
            external_sync::before_output();
            std::process::exit(130);
        }
    });
}

/// What the caller should do after a statement, meta-command or script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on reading.
    Continue,
    /// `\q`: leave with status 0.
    Quit,
    /// A script stopped on an error (`ON_ERROR_STOP`): status 3.
    Stop,
    /// The shell's own fatal error (a missing `-f` file): status 1.
    Fatal,
}

/// Where an input item came from, for error prefixes and `\ir`.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// The script's name (`None` for piped stdin, `-c` and the prompt).
    pub file: Option<String>,
    /// The directory `\ir` resolves against.
    pub dir: Option<PathBuf>,
    /// Input is a script (not the interactive prompt): `ON_ERROR_STOP`
    /// applies.
    pub script: bool,
    /// `COPY ... FROM STDIN` reads the process's standard input rather
    /// than the lines after the statement (`-c`, as psql).
    pub copy_from_process: bool,
}

/// The shell's connection to the engine and its settings.
pub struct Runner {
    /// The engine session.
    pub session: Session,
    /// Variables, printing options, `\timing`, `\o`.
    pub state: ShellState,
    /// The data directory (`\conninfo`).
    pub data_dir: PathBuf,
    /// Standard output, buffered when it is not a terminal.
    pub(super) stdout: Box<dyn Write>,
    /// The progress bar's tracker (only when standard error is a terminal).
    progress: Option<Tracker>,
    /// The last SQL statement sent (for `\g`, `\p` and `\watch` on an
    /// empty query buffer).
    pub last_query: String,
    /// Whether some statement failed (for `-c`'s exit status).
    pub had_error: bool,
    /// Commits may be acknowledged at the next output ([`ack`]).
    defer_allowed: bool,
    /// The open `\if` blocks of the script being read.
    pub(super) cond: super::meta::cond::CondStack,
}

impl Runner {
    /// A runner over `session`; `stdout` is buffered unless it is a
    /// terminal.
    pub fn new(mut session: Session, mut state: ShellState, data_dir: PathBuf) -> Runner {
        let progress = Tracker::for_terminal();
        if let Some(t) = &progress {
            session.set_progress(Some(t.hook()));
        }
        let stdout: Box<dyn Write> = if io::stdout().is_terminal() {
            // `\x auto` compares the table's width with the terminal's.
            state.print.columns = terminal_columns();
            Box::new(Gated(io::stdout()))
        } else {
            // Each 64 KiB that goes out first flushes deferred commits.
            Box::new(io::BufWriter::with_capacity(1 << 16, Gated(io::stdout())))
        };
        Runner {
            session,
            state,
            data_dir,
            stdout,
            progress,
            last_query: String::new(),
            had_error: false,
            defer_allowed: false,
            cond: Default::default(),
        }
    }

    /// Flushes standard output and the `\o` file (deferred commits are
    /// made durable first when there is output to write: [`ack`]).
    pub fn flush(&mut self) {
        let _ = self.stdout.flush();
        let _ = self.state.output.flush();
    }

    /// Flushes the output and makes every deferred commit durable: call
    /// before exiting (the exit status reports them).
    pub fn finish(&mut self) {
        self.flush();
        before_output();
    }

    /// Allows deferring commit acknowledgements to the next output
    /// ([`ack`]): for scripts, not for the interactive prompt. Deferral is
    /// in force while this is allowed and `COMMIT_ACK` is not `immediate`.
    pub fn allow_deferred_acks(&mut self, allow: bool) {
        self.defer_allowed = allow;
        self.apply_commit_ack();
    }

    /// Brings the session's acknowledgement mode in line with
    /// [`Runner::allow_deferred_acks`] and `COMMIT_ACK` (cheap when nothing
    /// changed: called before every statement).
    fn apply_commit_ack(&mut self) {
        let want = if self.defer_allowed && !self.state.commit_ack_immediate {
            CommitAck::Deferred
        } else {
            CommitAck::Immediate
        };
        if self.session.commit_ack() != want {
            self.session.set_commit_ack(want);
            external_sync::install(
                (want == CommitAck::Deferred).then(|| self.session.commit_gate()),
            );
        }
    }

    /// Writes `text` to standard error, after flushing standard output.
    pub fn eprint(&mut self, text: &str) {
        let _ = self.stdout.flush();
        before_output();
        let mut e = io::stderr().lock();
        let _ = e.write_all(text.as_bytes());
        let _ = e.flush();
    }

    /// Where query results go: the `\o` file, else standard output.
    pub fn query_output(&mut self) -> &mut dyn Write {
        match &mut self.state.output {
            Output::Stdout => self.stdout.as_mut(),
            file => file,
        }
    }

    /// Writes `text` to standard output (meta-command replies).
    pub fn print(&mut self, text: &str) {
        let _ = self.stdout.write_all(text.as_bytes());
    }

    /// Writes `bytes` to standard output as they are (echoed input).
    pub fn print_bytes(&mut self, bytes: &[u8]) {
        let _ = self.stdout.write_all(bytes);
    }

    /// A shell error (`invalid command \foo`) at `line` of `src`.
    pub(crate) fn shell_error(&mut self, message: &str, src: &Source, line: u64) -> Flow {
        let locus = src.file.as_deref().map(|file| Locus { file, line });
        let text = format_shell_error(message, locus);
        self.eprint(&text);
        self.had_error = true;
        self.error_flow(src)
    }

    /// A statement starts: Ctrl-C cancels it, and its progress is tracked
    /// (`total`: its total work when the shell knows it).
    pub(super) fn statement_begins(&self, total: Option<u64>) {
        if let Some(t) = &self.progress {
            t.begin(total);
        }
        STATEMENT_RUNNING.store(true, Ordering::SeqCst);
    }

    /// The statement ended (its progress bar, if any, is cleared).
    pub(super) fn statement_ends(&self) {
        STATEMENT_RUNNING.store(false, Ordering::SeqCst);
        if let Some(t) = &self.progress {
            t.end();
        }
    }

    pub(super) fn error_flow(&self, src: &Source) -> Flow {
        if src.script && self.state.on_error_stop {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    /// Runs one SQL statement (already split), printing its result.
    pub fn run_sql(&mut self, text: &str, src: &Source, line: u64) -> Flow {
        self.run_sql_data(text, true, src, line, None)
    }

    /// Runs one SQL statement, after substituting variables when `vars`
    /// (false: the splitter saw that it can refer to none, see
    /// [`Item::Sql`](super::input::Item::Sql)); a `COPY ... FROM STDIN`
    /// reads `data` (the process's standard input when `None`).
    pub fn run_sql_data(
        &mut self,
        text: &str,
        vars: bool,
        src: &Source,
        line: u64,
        mut data: Option<&mut dyn CopyData>,
    ) -> Flow {
        if !self.cond.active() {
            // Inside an `\if` branch that does not run.
            return Flow::Continue;
        }
        let sql = if vars {
            self.state.vars.substitute_sql(text)
        } else {
            std::borrow::Cow::Borrowed(text)
        };
        if self.state.echo == super::meta::Echo::Queries {
            self.print(&format!("{sql}\n"));
        }
        if let Some(flow) = self.run_several(&sql, src, line, reborrow(&mut data)) {
            return flow;
        }
        // Kept in its buffer: no allocation per statement.
        self.last_query.clear();
        self.last_query.push_str(&sql);
        self.apply_commit_ack();
        if is_copy(&sql) {
            // COPY TO a file or \copy writes where others can read.
            before_output();
        }
        if let Some(dir) = client_copy(&sql) {
            let start = Instant::now();
            let (flow, _) = match dir {
                ClientCopy::In => self.run_copy_in(&sql, data, None, src, line),
                ClientCopy::Out => self.run_copy_out(&sql, None, false, src, line),
            };
            self.print_timing(start.elapsed(), None);
            return flow;
        }
        let start = Instant::now();
        let outcome = self.execute(&sql, None, src, line);
        self.report(outcome, start.elapsed(), &sql, src, line)
    }

    /// A query string of several statements (joined by `\;`), which psql
    /// 15 sends as one and whose every result it shows: each statement runs
    /// and prints in turn, the first error ends the string, and, as
    /// PostgreSQL runs such a string, outside a transaction block they make
    /// one implicit transaction (unless they control transactions
    /// themselves). Text that does not parse fails whole, as one statement.
    /// `None` for a single statement.
    fn run_several(
        &mut self,
        sql: &str,
        src: &Source,
        line: u64,
        mut data: Option<&mut dyn CopyData>,
    ) -> Option<Flow> {
        let body = sql.trim_end();
        let body = body.strip_suffix(';').unwrap_or(body);
        if !body.contains(';') {
            return None;
        }
        let pieces = heapdb_grammar::split_statements(sql);
        if pieces.len() < 2
            || pieces.iter().any(|p| p.text.starts_with('\\'))
            || heapdb_grammar::parse(sql).is_err()
        {
            return None;
        }
        let controls = pieces.iter().any(|p| controls_transactions(p.text));
        let implicit = !controls && self.session.txn_status() == crate::session::TxnStatus::Idle;
        if implicit {
            let _ = self.session.execute("BEGIN");
        }
        let errors_before = std::mem::replace(&mut self.had_error, false);
        let mut flow = Flow::Continue;
        for p in &pieces {
            flow = self.run_sql_data(p.text, false, src, line, reborrow(&mut data));
            if self.had_error || flow != Flow::Continue {
                break;
            }
        }
        if implicit {
            let end = if self.had_error { "ROLLBACK" } else { "COMMIT" };
            if let Err(e) = self.session.execute(end) {
                let text = format_error(&e, None, None);
                self.eprint(&text);
                self.had_error = true;
            }
        }
        self.had_error |= errors_before;
        Some(flow)
    }

    /// `\c [DBNAME [USER]]`: replaces the session with a new one on the
    /// same database (settings back to their defaults; an open transaction
    /// rolls back, as when psql's old connection closes). Another database
    /// or a user is an error: heapdb serves one database and has no users.
    pub(super) fn reconnect(
        &mut self,
        db: Option<&str>,
        user: Option<&str>,
        src: &Source,
        line: u64,
    ) -> Flow {
        let name = super::prompt::database_name(&self.data_dir);
        if let Some(other) = db.filter(|d| *d != "-" && *d != name) {
            let msg = format!(
                "\\connect: database \"{other}\" does not exist (heapdb serves \"{name}\" only)\nPrevious connection kept"
            );
            return self.shell_error(&msg, src, line);
        }
        if let Some(u) = user.filter(|u| *u != "-") {
            let msg = format!(
                "\\connect: role \"{u}\" does not exist (heapdb has no roles)\nPrevious connection kept"
            );
            return self.shell_error(&msg, src, line);
        }
        // The old session's deferred commits are acknowledged first.
        self.finish();
        let mut session = self.session.database().session();
        if let Some(t) = &self.progress {
            session.set_progress(Some(t.hook()));
        }
        // Dropping the old session rolls back what it left open.
        self.session = session;
        self.apply_commit_ack();
        if !self.state.quiet {
            self.print(&format!("You are now connected to database \"{name}\".\n"));
        }
        Flow::Continue
    }

    /// `\gset [PREFIX]`: runs `query` and stores the columns of its one
    /// row in variables `PREFIX` + column name (a NULL unsets it), printing
    /// no rows; no row or several are psql's errors.
    pub(super) fn run_gset(&mut self, query: &str, prefix: &str, src: &Source, line: u64) -> Flow {
        if !self.cond.active() {
            return Flow::Continue;
        }
        let sql = self.state.vars.substitute_sql(query).into_owned();
        self.last_query.clear();
        self.last_query.push_str(&sql);
        self.apply_commit_ack();
        let start = Instant::now();
        self.statement_begins(None);
        let outcome = self.session.execute(&sql);
        self.statement_ends();
        let result = match outcome {
            Ok(r) => r,
            Err(e) => return self.report(Err(e), start.elapsed(), &sql, src, line),
        };
        self.print_notices(&result, src, line);
        self.print_timing(start.elapsed(), Some(&result));
        if !result.returns_rows {
            if !self.state.quiet && !result.tag.is_empty() {
                self.print(&format!("{}\n", result.tag));
            }
            return Flow::Continue;
        }
        let row = match result.rows.as_slice() {
            [row] => row,
            [] => return self.shell_error("no rows returned for \\gset", src, line),
            _ => return self.shell_error("more than one row returned for \\gset", src, line),
        };
        let mut text = String::new();
        for (col, v) in result.columns.iter().zip(row) {
            let name = format!("{prefix}{}", col.name);
            let set = if v.is_null() {
                self.state.vars.unset(&name)
            } else {
                text.clear();
                format_value(v, &mut text);
                self.state.vars.set(&name, &text)
            };
            if let Err(msg) = set {
                return self.shell_error(&msg, src, line);
            }
        }
        Flow::Continue
    }

    /// A statement whose text was not valid UTF-8 (`message` says where):
    /// an error of that statement (22021), as PostgreSQL answers psql.
    pub fn run_invalid(&mut self, message: &str, src: &Source, line: u64) -> Flow {
        if !self.cond.active() {
            return Flow::Continue;
        }
        let e = Error::new(crate::session::SqlState::CharacterNotInRepertoire, message);
        let e = self.session.fail_statement(e);
        self.report(Err(e), Duration::ZERO, "", src, line)
    }

    /// Runs the single-row INSERT `text`, which refers to no variable and
    /// which the grammar's scan has read as `scan` with its literals in
    /// `lits` (ahead, on the read-ahead thread); `lits` comes back emptied.
    pub fn run_sql_scanned(
        &mut self,
        text: &str,
        src: &Source,
        line: u64,
        scan: ScannedInsert,
        lits: &mut Vec<ScannedLiteral>,
    ) -> Flow {
        if !self.cond.active() {
            lits.clear();
            return Flow::Continue;
        }
        if self.state.echo == super::meta::Echo::Queries {
            self.print(&format!("{text}\n"));
        }
        self.last_query.clear();
        self.last_query.push_str(text);
        self.apply_commit_ack();
        let start = Instant::now();
        let outcome = self.execute(text, Some((scan, lits)), src, line);
        self.report(outcome, start.elapsed(), text, src, line)
    }

    /// Prints what running `sql` (at `line` of `src`) came to.
    fn report(
        &mut self,
        outcome: Result<QueryResult, Error>,
        elapsed: Duration,
        sql: &str,
        src: &Source,
        line: u64,
    ) -> Flow {
        match outcome {
            Ok(result) => {
                // Its notices were shown before its rows or tag.
                self.print_timing(elapsed, Some(&result));
                Flow::Continue
            }
            Err(e) => {
                let locus = src.file.as_deref().map(|file| Locus { file, line });
                let text = format_error(&e, Some(sql), locus);
                self.eprint(&text);
                self.had_error = true;
                // psql times failed statements too.
                self.print_timing(elapsed, None);
                self.error_flow(src)
            }
        }
    }

    /// Runs `sql` (a scanned INSERT when `scan` says so, see
    /// [`Runner::run_sql_scanned`]), streaming rows into the printer, then
    /// prints its notices (those of a failed statement too), then the
    /// footer or the command tag: psql shows a statement's notices as they
    /// arrive, before the result it prints at the end.
    fn execute(
        &mut self,
        sql: &str,
        scan: Option<(ScannedInsert, &mut Vec<ScannedLiteral>)>,
        src: &Source,
        line: u64,
    ) -> Result<QueryResult, Error> {
        let Runner {
            session,
            state,
            stdout,
            progress,
            ..
        } = self;
        let out: &mut dyn Write = match &mut state.output {
            Output::Stdout => stdout.as_mut(),
            file => file,
        };
        let opts = &state.print;
        let columns: OnceCell<Vec<ColumnInfo>> = OnceCell::new();
        let cols_ref = &columns;
        let mut printer: Option<ResultPrinter<'_, &mut dyn Write>> = None;
        let mut out_slot = Some(out);
        let mut cells: Vec<String> = Vec::new();
        if let Some(t) = progress {
            t.begin(None);
        }
        STATEMENT_RUNNING.store(true, Ordering::SeqCst);
        let mut sink = |cols: &[Column], batch: &crate::session::Batch| {
            if printer.is_none() {
                let infos = cols_ref.get_or_init(|| column_infos(cols));
                let w = out_slot.take().expect("one result set per statement");
                printer = Some(ResultPrinter::new(w, opts, infos));
            }
            let p = printer.as_mut().expect("created above");
            cells.resize(batch.columns.len(), String::new());
            let mut nulls = vec![false; batch.columns.len()];
            for i in 0..batch.len {
                for (c, col) in batch.columns.iter().enumerate() {
                    let v = col.get(i);
                    cells[c].clear();
                    nulls[c] = v.is_null();
                    if !nulls[c] {
                        format_value(&v, &mut cells[c]);
                    }
                }
                let row: Vec<Option<&str>> = cells
                    .iter()
                    .zip(&nulls)
                    .map(|(s, &null)| (!null).then_some(s.as_str()))
                    .collect();
                p.push_row(&row).map_err(io_error)?;
            }
            Ok(())
        };
        let result = match scan {
            Some((scan, lits)) => session.execute_scanned(sql, scan, lits, &mut sink),
            None => session.execute_streaming(sql, &mut sink),
        };
        STATEMENT_RUNNING.store(false, Ordering::SeqCst);
        if let Some(t) = progress {
            t.end();
        }
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                let notices = session.take_failed_statement_notices();
                if !notices.is_empty() {
                    flush_pending(&mut printer, &mut out_slot);
                    print_notices_to_stderr(None, &notices, src, line);
                }
                return Err(e);
            }
        };
        if !result.notices.is_empty() {
            flush_pending(&mut printer, &mut out_slot);
            print_notices_to_stderr(None, &result.notices, src, line);
        }
        if result.returns_rows {
            let mut p = match printer {
                Some(p) => p,
                None => {
                    let infos = columns.get_or_init(|| column_infos(&result.columns));
                    let w = out_slot.take().expect("no printer was made");
                    ResultPrinter::new(w, opts, infos)
                }
            };
            // The printer hands its writer back only by being dropped.
            p.finish_unflushed().map_err(io_error)?;
            drop(p);
            let returning = ["INSERT", "UPDATE", "DELETE"]
                .iter()
                .any(|k| result.tag.starts_with(k));
            if returning && !state.quiet {
                // psql shows the tag after the rows of ... RETURNING.
                let out: &mut dyn Write = match &mut state.output {
                    Output::Stdout => stdout.as_mut(),
                    file => file,
                };
                writeln!(out, "{}", result.tag).map_err(io_error)?;
            }
        } else if !state.quiet && !result.tag.is_empty() {
            if let Some(w) = out_slot.take() {
                writeln!(w, "{}", result.tag).map_err(io_error)?;
            }
        }
        Ok(result)
    }

    fn print_notices(&mut self, result: &QueryResult, src: &Source, line: u64) {
        print_notices_to_stderr(Some(self.stdout.as_mut()), &result.notices, src, line);
    }

    /// Prints the `\timing` line for a statement that took `elapsed`.
    fn print_timing(&mut self, elapsed: Duration, result: Option<&QueryResult>) {
        let detail = result.map_or_else(TimingDetail::default, |r| TimingDetail {
            parse_ms: ms(r.timing.parse),
            plan_ms: ms(r.timing.plan),
            execute_ms: ms(r.timing.execute),
            shared_hit: r.buffers.shared_hit,
            shared_read: r.buffers.shared_read,
            shared_dirtied: r.buffers.shared_dirtied,
            shared_written: r.buffers.shared_written,
        });
        let mode = match (self.state.timing, result) {
            // A failed statement has no split to show.
            (TimingMode::Verbose, None) => TimingMode::On,
            (m, _) => m,
        };
        if let Some(line) = timing_line(mode, ms(elapsed), &detail) {
            self.print(&format!("{line}\n"));
        }
    }
}

/// A shorter borrow of a COPY data source, to lend it again.
fn reborrow<'a>(data: &'a mut Option<&mut dyn CopyData>) -> Option<&'a mut dyn CopyData> {
    match data {
        Some(d) => Some(&mut **d),
        None => None,
    }
}

/// Whether `sql` starts or ends a transaction block, or works inside one
/// (its first word).
fn controls_transactions(sql: &str) -> bool {
    let word: String = sql
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        word.as_str(),
        "begin"
            | "start"
            | "commit"
            | "end"
            | "rollback"
            | "abort"
            | "savepoint"
            | "release"
            | "prepare"
    )
}

/// Whether `sql` is a COPY statement or a `\copy` (its first word).
fn is_copy(sql: &str) -> bool {
    let t = sql.trim_start();
    let t = t.strip_prefix('\\').unwrap_or(t);
    t.len() >= 4 && t.as_bytes()[..4].eq_ignore_ascii_case(b"copy")
}

/// The width of the terminal on standard output (0 when unknown).
fn terminal_columns() -> usize {
    // SAFETY: TIOCGWINSZ fills the winsize struct passed; nothing else.
    unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) == 0 {
            ws.ws_col as usize
        } else {
            0
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn io_error(e: io::Error) -> Error {
    Error::from(e)
}

/// The printer's view of the result columns: names and psql's alignment.
fn column_infos(cols: &[Column]) -> Vec<ColumnInfo> {
    cols.iter()
        .map(|c| ColumnInfo::new(c.name.clone(), Align::for_type_oid(c.ty.oid())))
        .collect()
}

/// Flushes what the statement's writer holds (the printer's, else the
/// unused one), so that messages written to standard error next come after
/// the output of earlier statements.
fn flush_pending<W: Write>(printer: &mut Option<ResultPrinter<'_, W>>, out: &mut Option<W>) {
    if let Some(p) = printer {
        let _ = p.flush_output();
    } else if let Some(w) = out {
        let _ = w.flush();
    }
}

/// Writes `notices` to standard error (after flushing `stdout` when given,
/// so the two streams interleave in order), each prefixed with the script
/// file and line as psql prefixes messages of a script.
fn print_notices_to_stderr(
    stdout: Option<&mut dyn Write>,
    notices: &[crate::session::Notice],
    src: &Source,
    line: u64,
) {
    if notices.is_empty() {
        return;
    }
    if let Some(out) = stdout {
        let _ = out.flush();
    }
    before_output();
    let prefix = src
        .file
        .as_deref()
        .map(|file| Locus { file, line }.prefix())
        .unwrap_or_default();
    let mut e = io::stderr().lock();
    for n in notices {
        let _ = writeln!(e, "{prefix}{}:  {}", n.severity, n.message);
    }
    let _ = e.flush();
}
