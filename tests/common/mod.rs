//! The harness the integration tests share: databases in temporary data
//! directories, statements run with their SQL in the panic message, values
//! rendered as the shell renders them, the `heapdb` binary run on a script,
//! child processes (the shell, or this test binary running one ignored
//! test) read line by line, killed with SIGKILL and their directory
//! reopened, and waits on a condition with a generous timeout instead of a
//! fixed sleep.
//!
//! Every test file that uses it says `mod common;` (Cargo compiles each
//! file under tests/ as its own crate; a directory with `mod.rs` is not a
//! test of its own). It stands on the public API only (`Database`,
//! `Session`, `QueryResult`, `Settings`, `types::format_value`), so it does
//! not follow the engine's internal modules around.

// Each test crate uses a different part of the harness.
#![allow(dead_code)]

pub mod counting;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use heapdb::settings::Settings;
use heapdb::types::Value;
use heapdb::{Database, QueryResult, Session};

/// The `heapdb` executable Cargo built for this test run.
pub const BIN: &str = env!("CARGO_BIN_EXE_heapdb");

/// How long a wait on a condition lasts before the test fails: generous,
/// since six builds may share the machine's cores.
pub const PATIENCE: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------
// Databases in temporary directories.

/// A database in a fresh temporary data directory, with a buffer pool of
/// `shared_buffers` pages. Keep the directory alive as long as the
/// database.
pub fn open(shared_buffers: i64) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = open_at(dir.path(), shared_buffers);
    (dir, db)
}

/// A database with data directory `dir` (created, or opened and
/// recovered), with a buffer pool of `shared_buffers` pages.
pub fn open_at(dir: &Path, shared_buffers: i64) -> Database {
    open_with(
        dir,
        Settings {
            shared_buffers,
            ..Settings::default()
        },
    )
}

/// A database with data directory `dir` and the default settings, as
/// `Database::open` opens it.
pub fn open_dir(dir: &Path) -> Database {
    open_with(dir, Settings::default())
}

/// A database with data directory `dir` and `settings`.
pub fn open_with(dir: &Path, settings: Settings) -> Database {
    Database::open_with(dir, settings).unwrap_or_else(|e| panic!("open {}: {e}", dir.display()))
}

// ---------------------------------------------------------------------------
// Statements and their results.

/// Runs `sql`; a failure panics with the statement and the error.
pub fn run(s: &mut Session, sql: &str) -> QueryResult {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The first column of the first row of `sql`.
pub fn one(s: &mut Session, sql: &str) -> Value {
    let r = run(s, sql);
    match r.rows.first().and_then(|row| row.first()) {
        Some(v) => v.clone(),
        None => panic!("{sql}: no rows"),
    }
}

/// The first column of the first row of `sql`, as the shell prints it.
pub fn one_text(s: &mut Session, sql: &str) -> String {
    text(&one(s, sql))
}

/// `v` as the shell prints it.
pub fn text(v: &Value) -> String {
    let mut out = String::new();
    heapdb::types::format_value(v, &mut out);
    out
}

/// The rows of `r` as the shell prints their values.
pub fn rows_text(r: &QueryResult) -> Vec<Vec<String>> {
    r.rows
        .iter()
        .map(|row| row.iter().map(text).collect())
        .collect()
}

/// The rows of `sql` as the shell prints their values.
pub fn texts(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    rows_text(&run(s, sql))
}

/// The lines of `EXPLAIN`-style output: the first column of every row.
pub fn lines(s: &mut Session, sql: &str) -> Vec<String> {
    run(s, sql).rows.iter().map(|row| text(&row[0])).collect()
}

// ---------------------------------------------------------------------------
// The heapdb binary.

/// A command running the shell on data directory `dir`, with `args`, every
/// standard stream piped and `HEAPDB_DATA` removed from the environment.
pub fn shell_command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("HEAPDB_DATA")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs `command`, feeding it `stdin` and closing it; waits for the end.
pub fn feed(mut command: Command, stdin: &[u8]) -> Output {
    let mut child = command.stdin(Stdio::piped()).spawn().expect("start heapdb");
    let mut input = child.stdin.take().expect("stdin piped");
    input.write_all(stdin).expect("write stdin");
    drop(input);
    child.wait_with_output().expect("heapdb runs")
}

/// Runs the shell on data directory `dir` with `args`, feeding `stdin`.
pub fn shell(dir: &Path, args: &[&str], stdin: &str) -> Output {
    feed(shell_command(dir, args), stdin.as_bytes())
}

/// Standard output, standard error (both UTF-8) and the exit status; a
/// process ended by a signal has status -1.
pub fn output_texts(o: Output) -> (String, String, i32) {
    (
        String::from_utf8(o.stdout).expect("utf-8 stdout"),
        String::from_utf8(o.stderr).expect("utf-8 stderr"),
        o.status.code().unwrap_or(-1),
    )
}

// ---------------------------------------------------------------------------
// Child processes: read, killed, reopened.

/// A command running this test binary's ignored test `name` alone (the
/// child half of a crash test), with `CHILD_ENV`-style variable `key` set
/// to `value` so that the child knows it is one. Standard output and error
/// are piped.
pub fn child_test(name: &str, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new(std::env::current_exe().expect("test binary"));
    c.args([
        "--exact",
        name,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(key, value)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

/// The lines a child writes to standard output, read on a thread so that
/// a wait for one can time out.
pub struct Lines {
    rx: mpsc::Receiver<String>,
}

impl Lines {
    /// Takes `child`'s piped standard output.
    pub fn of(child: &mut Child) -> Lines {
        let out = child.stdout.take().expect("stdout piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Lines { rx }
    }

    /// The next line; `None` once the child closed its output. Fails the
    /// test when none comes within [`PATIENCE`].
    pub fn next(&self) -> Option<String> {
        match self.rx.recv_timeout(PATIENCE) {
            Ok(line) => Some(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("no output from the child in {PATIENCE:?}")
            }
        }
    }

    /// Reads up to and including the first line for which `want` holds;
    /// false when the output ended first.
    pub fn until(&self, mut want: impl FnMut(&str) -> bool) -> bool {
        while let Some(line) = self.next() {
            if want(&line) {
                return true;
            }
        }
        false
    }
}

/// Kills `child` with SIGKILL (no chance to flush or clean up: a crash)
/// and reaps it; its standard error, when piped and not taken, is returned
/// for a failure message.
pub fn kill9(mut child: Child) -> String {
    // `Child::kill` sends SIGKILL on Unix; an already exited child is fine.
    let _ = child.kill();
    let out = child.wait_with_output().expect("reap the child");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `script` in a shell on `dir`, waits for the output line `marker`
/// (the script prints it once everything before it is done), then kills
/// the shell with SIGKILL while the rest of the script is still open: its
/// stdin stays open, so the last transaction is still running at the kill.
pub fn run_then_kill(dir: &Path, script: &str, marker: &str) {
    let mut child = shell_command(dir, &[])
        .stderr(Stdio::null())
        .spawn()
        .expect("start heapdb");
    let mut stdin = child.stdin.take().expect("stdin piped");
    stdin.write_all(script.as_bytes()).expect("write script");
    let lines = Lines::of(&mut child);
    loop {
        match lines.next() {
            Some(l) if l.contains(marker) => break,
            Some(_) => {}
            None => panic!("the shell ended before printing {marker}"),
        }
    }
    kill9(child);
    drop(stdin);
}

/// Kills `child` with SIGKILL and opens its data directory `dir` again
/// (recovery runs), with a buffer pool of `shared_buffers` pages.
pub fn kill9_and_reopen(child: Child, dir: &Path, shared_buffers: i64) -> Database {
    kill9(child);
    open_at(dir, shared_buffers)
}

// ---------------------------------------------------------------------------
// Waiting on conditions.

/// Polls `done` until it holds; fails the test with `what` after
/// [`PATIENCE`]. For a condition another thread or process brings about
/// (a file appears, a statement ends), never a fixed sleep.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The CPU time (user and system) process `pid` has used so far, from
/// `/proc/PID/stat`: how a test sees that a child is busy with a long
/// statement, which prints nothing until it ends.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // The command name, in parentheses, may hold spaces: count from its end.
    let after = &stat[stat.rfind(')').expect("(comm)") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of the line (utime, stime), 12 and 13 after comm.
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_millis(ticks * 1000 / hz)
}

/// Waits until process `pid` has used `busy` more CPU time than `since`
/// (a [`cpu_time`] taken before the work was asked for).
pub fn wait_for_cpu(pid: u32, since: Duration, busy: Duration) {
    wait_until("the child to be busy", || cpu_time(pid) >= since + busy);
}

/// Waits until `path` exists.
pub fn wait_for_file(path: &Path) {
    wait_until(&format!("{} to appear", path.display()), || path.exists());
}

/// The path of test data file `name` under tests/data.
pub fn data_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}
