//! Running input through a [`Runner`]: scripts (`-f`, `\i`, piped stdin,
//! `-c`) and the meta-commands that need the engine or the query buffer
//! or the shell's output streams (`\g`, `\p`, `\r`, `\watch`, `\conninfo`,
//! `\d`, `\dt`, `\h`, `\?`, `\copy`, `\!`).
//!
//! A script is read with [`ScriptReader`] (large buffered reads, psql's
//! statement splitting and line numbers) and each item runs as it is read;
//! piped stdin and script files are read ahead on a second thread
//! ([`super::ahead`]).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::background_reader::{BackgroundReader, Next, Poll};
use super::copy::{LineSource, ScriptData};
use super::input::{Item, ScriptReader};
use super::meta::{help_text, parse_next_meta, shell_escape, Echo, MetaCommand, Outcome};
use super::print::Expanded;
use super::run::{Flow, Runner, Source, STATEMENT_RUNNING};

impl Runner {
    /// Runs a whole script read from `input` on this thread (`-c` strings,
    /// and echo of all input).
    pub fn run_script<R: Read>(&mut self, input: R, src: &Source) -> Flow {
        self.with_own_conditionals(src, |r| r.run_script_here(input, src))
    }

    /// Runs `body` (a whole script) with a `\if` stack of its own, as psql
    /// gives each script; a block left open at its end is an error.
    fn with_own_conditionals(
        &mut self,
        src: &Source,
        body: impl FnOnce(&mut Self) -> Flow,
    ) -> Flow {
        let outer = std::mem::take(&mut self.cond);
        let mut flow = body(self);
        if flow == Flow::Continue && !self.cond.is_empty() {
            let text = super::report::format_shell_error(
                "reached EOF without finding closing \\endif(s)",
                None,
            );
            self.eprint(&text);
            self.had_error = true;
            flow = self.error_flow(src);
        }
        self.cond = outer;
        flow
    }

    fn run_script_here<R: Read>(&mut self, input: R, src: &Source) -> Flow {
        let mut reader = ScriptReader::new(input).echo_all(self.state.echo == Echo::All);
        let on = self.session.settings().standard_conforming_strings;
        reader.splitter().set_standard_strings(on);
        loop {
            if reader.may_block() {
                self.flush();
            }
            let item = match reader.next_item() {
                Ok(Some(item)) => item,
                Ok(None) => return Flow::Continue,
                Err(e) => return self.input_error(&e, reader.lineno(), src),
            };
            let flow = self.run_item(item, src, &mut reader);
            if flow != Flow::Continue {
                return flow;
            }
        }
    }

    /// Runs a whole script read from `input`, read and split ahead on a
    /// second thread while statements run ([`super::ahead`]); the same as
    /// [`Runner::run_script`] in every other respect, which it falls back
    /// to for echo of all input.
    pub fn run_script_ahead<R: Read + Send + 'static>(&mut self, input: R, src: &Source) -> Flow {
        if self.state.echo == Echo::All {
            return self.run_script(input, src);
        }
        self.with_own_conditionals(src, |r| r.run_script_ahead_here(input, src))
    }

    fn run_script_ahead_here<R: Read + Send + 'static>(&mut self, input: R, src: &Source) -> Flow {
        let mut reader = ScriptReader::new(input);
        let on = self.session.settings().standard_conforming_strings;
        reader.splitter().set_standard_strings(on);
        let mut ahead = match BackgroundReader::start(reader) {
            Ok(a) => a,
            Err(e) => {
                self.eprint(&format!("heapdb: error: could not start a thread: {e}\n"));
                return Flow::Fatal;
            }
        };
        loop {
            let next = match ahead.try_next() {
                Poll::Ready(next) => next,
                Poll::WouldBlock => {
                    // Output first: the client may wait for it before it
                    // writes more input.
                    self.flush();
                    ahead.next_blocking()
                }
            };
            let flow = match next {
                Next::End => return Flow::Continue,
                Next::Failed(e, line) => return self.input_error(&e, line, src),
                Next::Insert {
                    text,
                    line,
                    scan,
                    mut lits,
                } => {
                    let flow = self.run_sql_scanned(&text, src, line, scan, &mut lits);
                    ahead.recycle(lits);
                    flow
                }
                // Statements that read no COPY data (see `ahead::is_sync`).
                Next::Item(Item::Sql { text, line, vars }) if !ahead.paused() => {
                    self.run_sql_data(&text, vars, src, line, None)
                }
                Next::Item(item) => {
                    let mut reader = ahead.lines();
                    self.run_item(item, src, &mut *reader)
                }
            };
            if flow != Flow::Continue {
                return flow;
            }
        }
    }

    /// A script's input could not be read (at line `line`).
    fn input_error(&mut self, e: &io::Error, line: u64, src: &Source) -> Flow {
        let name = src.file.clone().unwrap_or_else(|| "<stdin>".to_string());
        match self.shell_error(&format!("{name}: {e}"), src, line) {
            Flow::Continue => Flow::Continue,
            other => other,
        }
    }

    /// Runs one item of a script read from `reader`.
    fn run_item(&mut self, item: Item, src: &Source, reader: &mut dyn LineSource) -> Flow {
        match item {
            Item::Echo(mut line) => {
                line.push(b'\n');
                self.print_bytes(&line);
                Flow::Continue
            }
            Item::Invalid { message, line } => self.run_invalid(&message, src, line),
            Item::Sql { text, line, vars } if src.copy_from_process => {
                self.run_sql_data(&text, vars, src, line, None)
            }
            Item::Sql { text, line, vars } => {
                let flow =
                    self.run_sql_data(&text, vars, src, line, Some(&mut ScriptData::new(reader)));
                let on = self.session.settings().standard_conforming_strings;
                reader.splitter().set_standard_strings(on);
                flow
            }
            Item::Meta { text, line } => self.run_meta(&text, src, line, reader),
        }
    }

    /// Runs the script file `path` (`-f` when `top`, else `\i`); a missing
    /// file is a shell error, fatal for `-f`. `-` reads standard input,
    /// named `<stdin>`.
    pub fn run_file(&mut self, path: &str, from: &Source, line: u64, top: bool) -> Flow {
        if path == "-" {
            let src = Source {
                file: Some("<stdin>".to_string()),
                dir: None,
                script: true,
                copy_from_process: false,
            };
            return self.run_script_ahead(io::stdin(), &src);
        }
        match File::open(path) {
            Ok(f) => {
                let p = Path::new(path);
                let src = Source {
                    file: Some(path.to_string()),
                    dir: p.parent().map(Path::to_path_buf),
                    script: true,
                    copy_from_process: false,
                };
                self.run_script_ahead(f, &src)
            }
            Err(e) => {
                let msg = format!("{path}: {}", io_message(&e));
                if top {
                    // A missing `-f` file is fatal, as in psql (status 1).
                    self.eprint(&format!("heapdb: error: {msg}\n"));
                    return Flow::Fatal;
                }
                self.shell_error(&msg, from, line)
            }
        }
    }

    /// Runs one meta-command line (which may hold several commands).
    pub fn run_meta(
        &mut self,
        text: &str,
        src: &Source,
        line: u64,
        input: &mut dyn LineSource,
    ) -> Flow {
        if !self.cond.active() && !self.skipped_meta(text, src, line, input) {
            return Flow::Continue;
        }
        let mut pos = 0;
        while let Some((parsed, next)) = parse_next_meta(text, pos, &self.state.vars) {
            pos = next;
            let meta = match parsed {
                Ok(m) => m,
                Err(msg) => match self.shell_error(&msg, src, line) {
                    Flow::Continue => continue,
                    f => return f,
                },
            };
            for w in &meta.warnings {
                let t = super::report::format_shell_error(w, None);
                self.eprint(&t);
            }
            let mut out = Vec::new();
            let outcome = self.state.execute(meta.command, &mut out);
            self.print(&String::from_utf8_lossy(&out));
            let flow = match outcome {
                Err(msg) => self.shell_error(&msg, src, line),
                Ok(Outcome::Continue) => Flow::Continue,
                Ok(Outcome::Quit) => Flow::Quit,
                Ok(Outcome::Include { path, relative }) => {
                    let path = match (&src.dir, relative) {
                        (Some(dir), true) if Path::new(&path).is_relative() => {
                            dir.join(&path).to_string_lossy().into_owned()
                        }
                        _ => path,
                    };
                    match self.run_file(&path, src, line, false) {
                        Flow::Stop | Flow::Fatal if !src.script => Flow::Continue,
                        f => f,
                    }
                }
                Ok(Outcome::Wiring(cmd)) => self.run_wired(cmd, src, line, input),
            };
            if flow != Flow::Continue {
                return flow;
            }
        }
        Flow::Continue
    }

    /// A meta-command line inside an `\if` branch that does not run: only
    /// `\if`, `\elif`, `\else` and `\endif` count, read without their
    /// expressions, and the rest of the line is ignored. True when the line
    /// must be run after all: an `\elif` whose expression decides.
    fn skipped_meta(
        &mut self,
        text: &str,
        src: &Source,
        line: u64,
        input: &mut dyn LineSource,
    ) -> bool {
        let branch = match super::meta::first_command_name(text) {
            "if" => {
                let len = input.splitter().buffer().len();
                self.cond.push_if(None, len);
                return false;
            }
            "elif" if self.cond.elif_evaluates() => return true,
            "elif" => {
                let len = input.splitter().buffer().len();
                self.cond.elif(None, len)
            }
            "else" => {
                let len = input.splitter().buffer().len();
                self.cond.else_(len)
            }
            "endif" => self.cond.endif(),
            _ => return false,
        };
        let _ = self.branched(branch, src, line, input);
        false
    }

    /// Applies what a branching command decided: the query text of a
    /// branch that did not run is dropped; a misplaced command is an error.
    fn branched(
        &mut self,
        branch: super::meta::cond::Branch,
        src: &Source,
        line: u64,
        input: &mut dyn LineSource,
    ) -> Flow {
        if let Some(len) = branch.truncate_buffer {
            input.splitter().truncate(len);
        }
        match branch.error {
            Some(msg) => self.shell_error(&msg, src, line),
            None => Flow::Continue,
        }
    }

    /// The value of an `\if` or `\elif` expression (false, with psql's
    /// error, when it is no boolean).
    fn condition(&mut self, cmd: &str, expr: &str, src: &Source, line: u64) -> bool {
        match super::meta::cond::parse_psql_bool(expr) {
            Some(b) => b,
            None => {
                let msg = format!(
                    "unrecognized value \"{expr}\" for \"\\{cmd} expression\": Boolean expected"
                );
                let locus = src
                    .file
                    .as_deref()
                    .map(|file| super::report::Locus { file, line });
                let text = super::report::format_shell_error(&msg, locus);
                self.eprint(&text);
                false
            }
        }
    }

    /// The meta-commands [`ShellState`](super::meta::ShellState) hands back.
    fn run_wired(
        &mut self,
        cmd: MetaCommand,
        src: &Source,
        line: u64,
        input: &mut dyn LineSource,
    ) -> Flow {
        if let MetaCommand::Copy(args) = &cmd {
            if src.copy_from_process {
                return self.slash_copy(args, None, src, line);
            }
            return self.slash_copy(args, Some(&mut ScriptData::new(input)), src, line);
        }
        match cmd {
            MetaCommand::If(_) | MetaCommand::Elif(_) | MetaCommand::Else | MetaCommand::Endif => {
                return self.run_conditional(cmd, src, line, input);
            }
            MetaCommand::Gset(prefix) => {
                let buf = input.splitter();
                let q = if buf.in_progress() {
                    buf.take_buffer()
                } else {
                    self.last_query.clone()
                };
                if q.trim().is_empty() {
                    return Flow::Continue;
                }
                return self.run_gset(&q, prefix.as_deref().unwrap_or(""), src, line);
            }
            _ => {}
        }
        let buf = input.splitter();
        match cmd {
            MetaCommand::Go | MetaCommand::GoExpanded => {
                let q = if buf.in_progress() {
                    buf.take_buffer()
                } else {
                    self.last_query.clone()
                };
                if q.trim().is_empty() {
                    return Flow::Continue;
                }
                if cmd != MetaCommand::GoExpanded {
                    return self.run_sql(&q, src, line);
                }
                // `\gx`: expanded for this query only, as psql's.
                let kept = self.state.print.expanded;
                self.state.print.expanded = Expanded::On;
                let flow = self.run_sql(&q, src, line);
                self.state.print.expanded = kept;
                flow
            }
            MetaCommand::ResetBuffer => {
                buf.reset();
                if !self.state.quiet {
                    self.print("Query buffer reset (cleared).\n");
                }
                Flow::Continue
            }
            MetaCommand::PrintBuffer => {
                let q = if buf.in_progress() {
                    buf.buffer().to_string()
                } else {
                    self.last_query.clone()
                };
                if q.is_empty() {
                    self.print("Query buffer is empty.\n");
                } else {
                    self.print(&format!("{q}\n"));
                }
                Flow::Continue
            }
            MetaCommand::Help(_) => {
                self.print(&help_text());
                Flow::Continue
            }
            MetaCommand::SqlHelp(topic) => {
                let text = super::describe::sql_help(topic.as_deref());
                self.print(&text);
                Flow::Continue
            }
            MetaCommand::Shell(command) => {
                // The child writes to the same streams: what the shell has
                // buffered, and the acknowledgement of deferred commits,
                // come first.
                self.finish();
                match shell_escape(command.as_deref(), &self.state.child_env) {
                    Ok(()) => Flow::Continue,
                    Err(msg) => self.shell_error(&msg, src, line),
                }
            }
            MetaCommand::ConnInfo => {
                self.conninfo();
                Flow::Continue
            }
            MetaCommand::Connect(db, user) => {
                self.reconnect(db.as_deref(), user.as_deref(), src, line)
            }
            MetaCommand::Describe { pattern, plus } => {
                self.describe(pattern.as_deref(), plus, src, line)
            }
            MetaCommand::ListViews { pattern } => self.list_views(pattern.as_deref()),
            MetaCommand::ListTables { pattern, plus } => {
                self.list_tables(pattern.as_deref(), plus, src, line)
            }
            MetaCommand::ListIndexes { pattern } => {
                self.list_indexes(pattern.as_deref(), src, line)
            }
            MetaCommand::Watch(secs) => {
                let q = if buf.in_progress() {
                    buf.take_buffer()
                } else {
                    self.last_query.clone()
                };
                if q.trim().is_empty() {
                    return self.shell_error(
                        "\\watch cannot be used with an empty query",
                        src,
                        line,
                    );
                }
                self.watch(&q, secs, src, line)
            }
            other => self.shell_error(&format!("{other:?} is not handled"), src, line),
        }
    }

    /// `\if`, `\elif`, `\else`, `\endif`: the conditional stack, and
    /// the lines of a branch not taken skipped.
    fn run_conditional(
        &mut self,
        cmd: MetaCommand,
        src: &Source,
        line: u64,
        input: &mut dyn LineSource,
    ) -> Flow {
        match cmd {
            MetaCommand::If(expr) => {
                let value = self.condition("if", &expr, src, line);
                let len = input.splitter().buffer().len();
                self.cond.push_if(Some(value), len);
                Flow::Continue
            }
            MetaCommand::Elif(expr) => {
                let value = self
                    .cond
                    .elif_evaluates()
                    .then(|| self.condition("elif", &expr, src, line));
                let len = input.splitter().buffer().len();
                let branch = self.cond.elif(value, len);
                self.branched(branch, src, line, input)
            }
            MetaCommand::Else => {
                let len = input.splitter().buffer().len();
                let branch = self.cond.else_(len);
                self.branched(branch, src, line, input)
            }
            MetaCommand::Endif => {
                let branch = self.cond.endif();
                self.branched(branch, src, line, input)
            }
            other => self.shell_error(&format!("{other:?} is not a conditional"), src, line),
        }
    }

    /// `\conninfo`: the data directory, and where the WAL stands.
    fn conninfo(&mut self) {
        let name = super::prompt::database_name(&self.data_dir);
        let sb = self
            .session
            .settings()
            .show("shared_buffers")
            .unwrap_or_default();
        let text = format!(
                    "You are connected to database \"{name}\" in data directory \"{}\" (heapdb {}, shared_buffers = {sb}).\n",
                    self.data_dir.display(),
                    env!("CARGO_PKG_VERSION"),
                );
        self.print(&text);
        let w = self.session.database().wal.stats();
        self.print(&format!(
                    "WAL: insert position {}, flushed to {}, redo point {}; {} records ({} full-page images, {} bytes), {} flushes, {} checkpoints.\n",
                    crate::session::lsn_text(w.insert_lsn),
                    crate::session::lsn_text(w.flush_lsn),
                    crate::session::lsn_text(w.redo_lsn),
                    w.records,
                    w.fpis,
                    w.bytes,
                    w.flushes,
                    w.checkpoints
                ));
    }

    /// `\watch`: runs `query` every `secs` seconds until it fails or Ctrl-C.
    fn watch(&mut self, query: &str, secs: f64, src: &Source, line: u64) -> Flow {
        let cancel = self.session.cancel_flag();
        let interval = Duration::from_secs_f64(secs.max(0.0));
        loop {
            let title = format!("{} (every {}s)\n\n", local_time_c(), fmt_secs(secs));
            self.print(&title);
            let errors_before = self.had_error;
            self.had_error = false;
            let flow = self.run_sql(query, src, line);
            let failed = self.had_error;
            self.had_error |= errors_before;
            self.flush();
            if failed || flow != Flow::Continue {
                return flow;
            }
            let until = Instant::now() + interval;
            cancel.store(false, Ordering::SeqCst);
            STATEMENT_RUNNING.store(true, Ordering::SeqCst);
            while Instant::now() < until && !cancel.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20).min(interval));
            }
            STATEMENT_RUNNING.store(false, Ordering::SeqCst);
            if cancel.swap(false, Ordering::SeqCst) {
                return Flow::Continue;
            }
        }
    }
}

/// `2` for 2.0 seconds, `0.5` for half a second (psql's `%g`).
fn fmt_secs(s: f64) -> String {
    let t = format!("{s}");
    t.strip_suffix(".0").map(str::to_string).unwrap_or(t)
}

/// The local time as C's `%c` (`Sun Nov 29 22:50:00 2026`).
fn local_time_c() -> String {
    // SAFETY: time/localtime_r/strftime write only into the locals given.
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        let mut buf = [0u8; 64];
        let n = libc::strftime(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"%a %b %e %T %Y".as_ptr(),
            &tm,
        );
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

/// An I/O error as psql words it (`No such file or directory`).
pub fn io_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The directory of a script path, for `\ir`.
pub fn script_dir(path: &str) -> Option<PathBuf> {
    Path::new(path).parent().map(Path::to_path_buf)
}
