//! The `heapdb` command: parse the command line, open the database, then
//! run `-c` / `-f` actions, a piped script, or the interactive prompt.
//!
//! Exit status as psql's: 0 on success, 1 for the shell's own fatal errors
//! (bad flag, missing `-f` file, data directory that cannot be opened) and
//! for a failing `-c`, 3 when a script stopped on an error under
//! `ON_ERROR_STOP`.

use std::io::{self, IsTerminal};
use std::process::ExitCode;

use heapdb::session::Database;
use heapdb::session::Settings;
use heapdb::shell::args::{help_text, parse_args, version_text, Action, Args, Command};
use heapdb::shell::meta::ShellState;
use heapdb::shell::repl::run_interactive;
use heapdb::shell::run::{install_cancel_handler, Flow, Runner, Source};

/// mimalloc instead of glibc malloc: parsing, binding and planning a
/// statement make many small short-lived allocations, which glibc's malloc
/// and free (with its consolidation) made about 45% of a piped INSERT's
/// instructions (callgrind, 10,000 statements).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let env_data = std::env::var("HEAPDB_DATA").ok();
    match parse_args(std::env::args().skip(1), env_data) {
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
        Ok(Command::Help) => {
            print!("{}", help_text());
            ExitCode::SUCCESS
        }
        Ok(Command::HelpCommands) => {
            print!("{}", heapdb::shell::meta::help_text());
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("{}", version_text());
            ExitCode::SUCCESS
        }
        Ok(Command::Run(args)) => ExitCode::from(run(&args)),
    }
}

/// Runs the shell; returns the exit status.
fn run(args: &Args) -> u8 {
    for w in args.warnings() {
        eprintln!("{w}");
    }
    let state = match ShellState::from_args(args) {
        Ok(s) => s,
        Err(msg) => {
            eprintln!("{msg}");
            return 1;
        }
    };
    let Some(dir) = args.data_dir_or_default() else {
        eprintln!("heapdb: error: no data directory: give one with --data-dir or HEAPDB_DATA");
        return 1;
    };
    let mut settings = Settings::default();
    if let Some(pages) = args.shared_buffers {
        settings.shared_buffers = pages;
    }
    if let Some(huge) = args.huge_pages {
        settings.huge_pages = huge;
    }
    // What a libpq client passes from its environment: the session's
    // defaults; a value the server would refuse refuses the start.
    let from_env = heapdb::shell::client_env::client_settings(|k| std::env::var(k).ok())
        .and_then(|pairs| heapdb::shell::client_env::apply(&mut settings, &pairs));
    if let Err(msg) = from_env {
        eprintln!("heapdb: error: {msg}");
        return 1;
    }
    let db = match Database::open_with(&dir, settings) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("heapdb: error: {}", e.message);
            if let Some(d) = &e.detail {
                eprintln!("DETAIL:  {d}");
            }
            if let Some(h) = &e.hint {
                eprintln!("HINT:  {h}");
            }
            return 1;
        }
    };
    let interactive = args.actions.is_empty() && io::stdin().is_terminal();
    let mut runner = Runner::new(db.session(), state, dir);
    // A script's commits are acknowledged by its output and exit status:
    // they are made durable just before those (see heapdb::shell::external_sync).
    runner.allow_deferred_acks(!interactive);
    if !interactive {
        // The prompt installs it after opening the terminal.
        install_cancel_handler(runner.session.cancel_flag(), false);
    }
    if args.single_transaction {
        let _ = runner.session.execute("BEGIN");
    }
    let status = if interactive {
        exit_status(run_interactive(&mut runner))
    } else if args.actions.is_empty() {
        let src = Source {
            file: None,
            dir: None,
            script: true,
            copy_from_process: false,
        };
        exit_status(runner.run_script_ahead(io::stdin(), &src))
    } else {
        run_actions(&mut runner, &args.actions)
    };
    if args.single_transaction {
        let _ = runner.session.execute("COMMIT");
    }
    runner.finish();
    drop(runner);
    // A failed shutdown (the last checkpoint could not be written) is a
    // failure of the run: the next open has to recover.
    if let Err(e) = db.close() {
        eprintln!("heapdb: error during shutdown: {}", e.message);
        return status.max(1);
    }
    status
}

/// Runs `-c` and `-f` in order; stops after a failure under ON_ERROR_STOP.
fn run_actions(runner: &mut Runner, actions: &[Action]) -> u8 {
    let mut status = 0;
    for action in actions {
        let src = Source {
            file: None,
            dir: None,
            script: true,
            copy_from_process: matches!(action, Action::Command(_)),
        };
        status = match action {
            Action::Command(text) => {
                // One -c string runs as one query string: it stops at its
                // first error, and a failure makes the status 1.
                let stop = runner.state.on_error_stop;
                runner.state.on_error_stop = true;
                runner.had_error = false;
                let flow = runner.run_script(text.as_bytes(), &src);
                runner.state.on_error_stop = stop;
                match flow {
                    Flow::Quit => return 0,
                    Flow::Continue if !runner.had_error => 0,
                    _ => 1,
                }
            }
            Action::File(path) => match runner.run_file(path, &src, 0, true) {
                Flow::Quit => return 0,
                f => exit_status(f),
            },
        };
        if status != 0 && runner.state.on_error_stop {
            break;
        }
    }
    status
}

fn exit_status(flow: Flow) -> u8 {
    match flow {
        Flow::Continue | Flow::Quit => 0,
        Flow::Stop => 3,
        Flow::Fatal => 1,
    }
}
