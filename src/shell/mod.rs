//! The psql-style shell's engine-independent parts.
//!
//! - [`print`]: result sets in psql's aligned, unaligned, csv and expanded
//!   formats, streamed in batches.
//! - [`timing`]: `\timing` lines.
//! - [`report`]: errors as psql prints them (`ERROR:`, `LINE n:` and caret,
//!   `heapdb:FILE:LINE:` prefixes).
//! - [`args`]: the command line.
//! - [`client_env`]: settings from `PGOPTIONS`, `PGDATESTYLE`, `PGTZ`.
//! - [`sqlhelp`]: `\h`, SQL syntax help drawn from the grammar's EBNF.
//! - [`meta`]: backslash meta-commands, variables and `:NAME` substitution.
//! - [`input`]: reading scripts in large chunks and splitting them into
//!   statements and meta-command lines.
//! - [`prompt`]: the interactive prompt (`heapdb=> `, `heapdb-> `, ...).
//! - [`complete`]: tab completion and the rustyline helper.
//!
//! The modules above do not talk to the engine; the wiring converts the
//! engine's results and errors into their types:
//! - [`run`]: [`run::Runner`], a session plus the shell state: statements,
//!   streamed results, notices, errors, `\timing`;
//! - [`script`]: scripts (`-f`, `\i`, piped stdin, `-c`) and the
//!   meta-commands that need the engine or the query buffer;
//! - [`ahead`]: reading and splitting a script on a second thread while
//!   its statements run;
//! - [`describe`]: `\d`, `\dt`, `\h`;
//! - [`copy`]: `COPY ... FROM STDIN` / `TO STDOUT` and `\copy`;
//! - [`progress`]: the progress bar of long statements;
//! - [`repl`]: the interactive prompt (rustyline, history, Ctrl-C).

pub mod args;
pub mod client_env;
pub mod complete;
pub mod input;
pub mod meta;
pub mod print;
pub mod prompt;
pub mod report;
pub mod sqlhelp;
pub mod timing;

pub mod background_reader;
pub mod copy;
pub mod describe;
pub mod external_sync;
pub mod progress;
pub mod repl;
pub mod run;
pub mod script;
