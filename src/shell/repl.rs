//! The interactive prompt: rustyline with the shell's completion helper,
//! psql's prompts, history and Ctrl-C.
//!
//! - Each line typed goes through a [`LineSplitter`]; a statement runs when an
//!   unquoted `;` ends it, a meta-command at the end of its line.
//! - History: one entry per statement (a multi-line statement is one
//!   entry) or meta-command line, loaded at start and appended after each
//!   entry, in `HEAPDB_HISTORY` or else [`history_file`]; its directory is
//!   created when missing, and a file that cannot be saved is reported
//!   once.
//! - Ctrl-C at the prompt (rustyline's `Interrupted`) discards the input
//!   typed so far; while a statement runs, the `ctrlc` handler installed by
//!   `main` sets the session's cancel flag, the statement fails with
//!   `canceling statement due to user request`, and the prompt returns.
//! - Ctrl-D on an empty line leaves, printing `\q` as psql does.

use std::collections::VecDeque;
use std::io;
use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Config, Editor};

use super::args::history_file;
use super::complete::{CatalogNames, ShellHelper};
use super::copy::{LineSource, ScriptData};
use super::input::{Item, LineSplitter};
use super::prompt::{database_name, prompt, PromptTxn};
use super::run::{install_cancel_handler, Flow, Runner, Source};
use crate::session::{self, Session};

/// Table and column names for completion, read through a session of its
/// own (so completion never disturbs the user's transaction).
pub struct EngineNames {
    /// The session used to read the catalog.
    session: Session,
}

impl CatalogNames for EngineNames {
    fn table_names(&self) -> Vec<String> {
        self.session
            .list_tables()
            .map(|t| t.into_iter().map(|t| t.name).collect())
            .unwrap_or_default()
    }

    fn column_names(&self, table: &str) -> Vec<String> {
        self.session
            .list_tables()
            .ok()
            .and_then(|t| t.into_iter().find(|t| t.name == table))
            .map(|t| t.columns.into_iter().map(|c| c.name).collect())
            .unwrap_or_default()
    }
}

/// The prompt as a [`LineSource`]: the query buffer, and COPY data typed
/// at the `>> ` prompt after psql's invitation.
struct PromptLines<'a> {
    /// The line editor.
    rl: &'a mut Editor<ShellHelper<EngineNames>, DefaultHistory>,
    /// The query buffer.
    splitter: &'a mut LineSplitter,
    /// The last data line read.
    line: String,
    /// The invitation is still to be printed (not with `-q`).
    announce: bool,
}

impl LineSource for PromptLines<'_> {
    fn splitter(&mut self) -> &mut LineSplitter {
        self.splitter
    }

    fn copy_data_line(&mut self) -> io::Result<Option<&[u8]>> {
        if std::mem::take(&mut self.announce) {
            println!(
                "Enter data to be copied followed by a newline.\nEnd with a backslash and a period on a line by itself, or an EOF signal."
            );
        }
        match self.rl.readline(">> ") {
            Ok(line) if line == "\\." => Ok(None),
            Ok(line) => {
                self.line = line;
                Ok(Some(self.line.as_bytes()))
            }
            Err(ReadlineError::Eof) => Ok(None),
            Err(ReadlineError::Interrupted) => Err(io::Error::other("canceled by user")),
            Err(e) => Err(io::Error::other(e.to_string())),
        }
    }

    fn lineno(&self) -> u64 {
        0
    }
}

/// The history file: `HEAPDB_HISTORY` if set, else [`history_file`].
pub fn history_path() -> Option<PathBuf> {
    std::env::var_os("HEAPDB_HISTORY")
        .map(PathBuf::from)
        .or_else(history_file)
}

/// The history file, saved after each entry.
struct History {
    /// Where it is.
    path: PathBuf,
    /// A failure to save it was reported (it is reported once).
    warned: bool,
}

impl History {
    fn new(path: PathBuf) -> History {
        History {
            path,
            warned: false,
        }
    }

    /// Saves `rl`'s history, creating the file's directory when it is
    /// missing (a first run, with no `~/.local/share` yet); a failure is
    /// reported once, and the prompt goes on.
    fn save(
        &mut self,
        rl: &mut Editor<ShellHelper<EngineNames>, DefaultHistory>,
        runner: &mut Runner,
    ) {
        let saved = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() && !dir.exists() => {
                std::fs::create_dir_all(dir).map_err(ReadlineError::from)
            }
            _ => Ok(()),
        }
        .and_then(|()| rl.save_history(&self.path));
        if let Err(e) = saved {
            if !self.warned {
                self.warned = true;
                let msg = match e {
                    ReadlineError::Io(e) => super::script::io_message(&e),
                    other => other.to_string(),
                };
                runner.eprint(&format!(
                    "heapdb: warning: could not save history to file \"{}\": {msg}\n",
                    self.path.display()
                ));
            }
        }
    }
}

/// Runs the prompt until `\q` or Ctrl-D; returns the flow that ended it.
pub fn run_interactive(runner: &mut Runner) -> Flow {
    let config = Config::builder().auto_add_history(false).build();
    let mut rl: Editor<ShellHelper<EngineNames>, DefaultHistory> = match Editor::with_config(config)
    {
        Ok(rl) => rl,
        Err(e) => {
            runner.eprint(&format!(
                "heapdb: error: could not start the line editor: {e}\n"
            ));
            return Flow::Fatal;
        }
    };
    install_cancel_handler(runner.session.cancel_flag(), true);
    let names = EngineNames {
        session: runner.session.database().session(),
    };
    rl.set_helper(Some(ShellHelper::new(names)));
    let mut history = history_path().map(History::new);
    if let Some(h) = &history {
        let _ = rl.load_history(&h.path);
    }
    if !runner.state.quiet {
        runner.print(&format!(
            "heapdb {}\nType \"\\?\" for help.\n\n",
            env!("CARGO_PKG_VERSION")
        ));
    }
    runner.flush();
    let name = database_name(&runner.data_dir);
    let src = Source::default();
    let mut splitter = LineSplitter::new();
    let mut items = VecDeque::new();
    let mut lineno = 0u64;
    loop {
        let txn = match runner.session.txn_status() {
            session::TxnStatus::Idle => PromptTxn::Idle,
            session::TxnStatus::InBlock => PromptTxn::InTransaction,
            session::TxnStatus::Failed => PromptTxn::Failed,
        };
        let p = prompt(&name, splitter.prompt_state(), txn);
        if let Some(h) = rl.helper() {
            h.set_statement(splitter.buffer());
        }
        let line = match rl.readline(&p) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                splitter.reset();
                continue;
            }
            Err(ReadlineError::Eof) => {
                runner.print("\\q\n");
                runner.flush();
                return Flow::Quit;
            }
            Err(e) => {
                runner.eprint(&format!("heapdb: error: {e}\n"));
                return Flow::Fatal;
            }
        };
        // A recalled multi-line history entry comes back as one string.
        for part in line.split('\n') {
            lineno += 1;
            splitter.feed_line(part, lineno, &mut items);
        }
        while let Some(item) = items.pop_front() {
            let entry = match &item {
                Item::Sql { text, .. } | Item::Meta { text, .. } => text.clone(),
                // The line editor hands out text, never raw bytes.
                Item::Echo(_) | Item::Invalid { .. } => continue,
            };
            if rl.add_history_entry(entry.as_str()).unwrap_or(false) {
                if let Some(h) = &mut history {
                    h.save(&mut rl, runner);
                }
            }
            let mut input = PromptLines {
                rl: &mut rl,
                splitter: &mut splitter,
                line: String::new(),
                announce: !runner.state.quiet,
            };
            let flow = match item {
                Item::Sql { text, line, vars } => {
                    let mut data = ScriptData::new(&mut input);
                    runner.run_sql_data(&text, vars, &src, line, Some(&mut data))
                }
                Item::Meta { text, line } => runner.run_meta(&text, &src, line, &mut input),
                Item::Echo(_) | Item::Invalid { .. } => Flow::Continue,
            };
            runner.flush();
            if flow == Flow::Quit {
                return flow;
            }
        }
    }
}
