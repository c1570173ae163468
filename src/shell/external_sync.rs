//! External synchrony for the shell: a commit is made durable before the
//! shell lets anyone learn of it.
//!
//! A script piped into `heapdb` (stdin not a terminal, or `-f` / `-c`) has
//! one way to tell the world that a statement committed: what the shell
//! writes (command tags, rows, errors, `\echo`, `\timing`, a `\o` or
//! `COPY TO` file, the progress bar) and its exit status. So with
//! `synchronous_commit = on` the session defers its commits
//! ([`CommitAck::Deferred`](crate::session::CommitAck)): a commit returns at
//! once with its commit LSN noted, and [`before_output`] flushes the log up
//! to the last one before any byte leaves the process. Output to a pipe or
//! file is buffered (64 KiB), so a quiet script of 100,000 INSERTs pays a
//! handful of fdatasyncs instead of 100,000, and a crash loses only commits
//! that no output and no exit status reported: the promise of
//! `synchronous_commit = on` (a commit that was acknowledged survives a
//! crash) is kept, with the acknowledgement being the shell's output.
//!
//! The shell is the database's only client, so no other session can see a
//! deferred commit before it is durable. `-v COMMIT_ACK=immediate` (or
//! `\set COMMIT_ACK immediate`) turns deferral off: every commit then waits
//! for its flush, as PostgreSQL's do. At the interactive prompt commits are
//! never deferred.
//!
//! The gate is process-wide (one shell per process): [`Gated`] wraps the
//! standard output and `\o` file writers so that a buffer going out is
//! preceded by the flush, and the other writers call [`before_output`].
//! A failed flush ends the process with status 2 before anything is
//! written, as losing the server does for psql.

use std::io::{self, Write};
use std::sync::Mutex;

use crate::session::CommitGate;

/// The running script's gate, while commits are deferred.
static GATE: Mutex<Option<CommitGate>> = Mutex::new(None);

/// Starts (`Some`) or stops (`None`) deferring acknowledgements through
/// `gate`. Stopping first flushes what is pending.
pub fn install(gate: Option<CommitGate>) {
    before_output();
    *GATE.lock().unwrap_or_else(|p| p.into_inner()) = gate;
}

/// Makes every deferred commit durable; call before writing anything a
/// person or program could read, before exiting, and before reading input
/// from a person. Exits the process (status 2) if the log cannot be
/// flushed: the commits it covers must not be reported.
pub fn before_output() {
    let gate = GATE.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let Some(gate) = gate else { return };
    if !gate.pending() {
        return;
    }
    if let Err(e) = gate.sync() {
        let mut err = io::stderr().lock();
        let _ = writeln!(
            err,
            "heapdb: fatal: could not flush the write-ahead log: {}",
            e.message
        );
        let _ = err.flush();
        std::process::exit(2);
    }
}

/// A writer whose every write first flushes the deferred commits (put it
/// under a `BufWriter`: the flush then happens once per buffer).
#[derive(Debug)]
pub struct Gated<W>(pub W);

impl<W: Write> Write for Gated<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        before_output();
        self.0.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        before_output();
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}
