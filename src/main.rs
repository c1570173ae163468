//! The `heapdb` command: argument parsing, then the shell.
//!
//! Until the shell is wired to the engine, only the command line itself
//! works: `--help`, `--help=commands`, `--version`, and psql's errors (exit
//! status 1) for bad flags.

use std::process::ExitCode;

use heapdb::shell::args::{help_text, parse_args, version_text, Command};

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
        Ok(Command::Run(args)) => {
            for w in args.warnings() {
                eprintln!("{w}");
            }
            eprintln!("heapdb: error: the shell is not connected to the engine yet");
            ExitCode::from(1)
        }
    }
}
