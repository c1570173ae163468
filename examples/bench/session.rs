//! One system's command-line client as a child process, fed SQL on stdin.
//!
//! Every system is driven the same way: its shell (psql, heapdb, sqlite3, or
//! the DuckDB driver script) runs as a child with stdin and stdout piped
//! (stderr joined into stdout by `sh -c 'exec ... 2>&1'`, so error lines arrive
//! in order with the rest). Timing is switched on in the client; after each
//! statement the harness writes a marker command (`\echo` or `.print`) and
//! reads output lines up to the marker: `Time:` lines give the statement's
//! time, error lines fail it, everything else is result rows.
//!
//! Invariants: a reader thread drains stdout at all times, so a long script
//! written to stdin never deadlocks on a full pipe; markers carry a sequence
//! number, so output of an earlier statement is never taken for a later one.
//! The client must flush its output before it blocks reading stdin (psql,
//! sqlite3 and the DuckDB driver do; heapdb's shell must too).

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How a client reports timings and takes marker commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// psql and everything that copies it (heapdb's shell, the DuckDB driver):
    /// `\timing on`, `\echo`, `Time: 12.345 ms`.
    Psql,
    /// The sqlite3 CLI: `.timer on`, `.print`, `Run Time: real 0.023 user ... sys ...`.
    Sqlite,
}

impl Dialect {
    /// The command that turns per-statement timing on.
    pub fn timing_on(self) -> &'static str {
        match self {
            Dialect::Psql => "\\timing on",
            Dialect::Sqlite => ".timer on",
        }
    }

    /// The command that prints `text` on a line of its own.
    pub fn echo(self, text: &str) -> String {
        match self {
            Dialect::Psql => format!("\\echo {text}"),
            Dialect::Sqlite => format!(".print {text}"),
        }
    }

    /// The statement time a timing line reports, if `line` is one.
    pub fn parse_time(self, line: &str) -> Option<Duration> {
        match self {
            Dialect::Psql => parse_psql_time(line),
            Dialect::Sqlite => parse_sqlite_time(line),
        }
    }

    /// Whether `line` reports a failed statement.
    pub fn is_error(self, line: &str) -> bool {
        match self {
            Dialect::Psql => {
                ["ERROR:", "FATAL:", "PANIC:", "invalid command "]
                    .iter()
                    .any(|p| line.starts_with(p))
                    || line.contains(": ERROR:  ")
                    || line.contains(": FATAL:  ")
                    || line.starts_with("psql: error")
                    || line.starts_with("heapdb: error")
            }
            Dialect::Sqlite => ["Parse error", "Runtime error", "Error:", "Error "]
                .iter()
                .any(|p| line.starts_with(p)),
        }
    }
}

/// Parses psql's `\timing` line: `Time: 12.345 ms`, or past a second
/// `Time: 1234.567 ms (00:01.235)`.
pub fn parse_psql_time(line: &str) -> Option<Duration> {
    let rest = line.strip_prefix("Time: ")?;
    let (ms, _) = rest.split_once(" ms")?;
    let ms: f64 = ms.parse().ok()?;
    (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0))
}

/// Parses sqlite3's `.timer` line: `Run Time: real 0.023 user 0.01 sys 0.00`
/// (the real, elapsed, time is the one compared).
pub fn parse_sqlite_time(line: &str) -> Option<Duration> {
    let rest = line.strip_prefix("Run Time: real ")?;
    let secs: f64 = rest.split_whitespace().next()?.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// Peak resident set size of a process (`VmHWM` in `/proc/PID/status`), KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    kib_field(&status, "VmHWM:")
}

/// What a process's resident memory is made of, in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    /// Peak resident set size so far (`VmHWM`).
    pub peak: u64,
    /// Resident anonymous memory now (`RssAnon`): heap, stacks, malloc
    /// arenas, heapdb's buffer-pool frames.
    pub anon: u64,
    /// Resident file-backed memory now (`RssFile`): program code and
    /// libraries, as far as they have run.
    pub file: u64,
    /// Of `anon`, the part in transparent huge pages (`AnonHugePages` of
    /// `/proc/PID/smaps_rollup`; 0 where the kernel has no such file).
    pub anon_huge: u64,
}

/// A process's [`Memory`] now.
pub fn memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    Some(Memory {
        peak: kib_field(&status, "VmHWM:")?,
        anon: kib_field(&status, "RssAnon:")?,
        file: kib_field(&status, "RssFile:")?,
        anon_huge: kib_field(&rollup, "AnonHugePages:").unwrap_or(0),
    })
}

/// The `NAME  12345 kB` field of a `/proc` text (`NAME` with its colon).
pub fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// What one statement (or script) produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The time the client reported (sum of its timing lines), if it reported one.
    pub reported: Option<Duration>,
    /// Wall-clock time from writing the statement to reading its marker.
    pub wall: Duration,
    /// Output lines that were neither timing, error nor marker lines.
    pub rows: Vec<String>,
}

impl Outcome {
    /// The reported time, or the wall time for commands the client does not
    /// time (sqlite3's `.import`).
    pub fn time(&self) -> Duration {
        self.reported.unwrap_or(self.wall)
    }
}

/// A running client.
pub struct Session {
    /// The client process (`sh` has exec'ed into it, so this is its pid).
    child: Child,
    /// The client's stdin; `None` once closed.
    stdin: Option<BufWriter<ChildStdin>>,
    /// Output lines, from the reader thread.
    lines: Receiver<String>,
    /// How the client speaks.
    dialect: Dialect,
    /// The process whose peak RSS is the system's: the client itself, or for
    /// PostgreSQL the backend serving it.
    rss_pid: u32,
    /// Sequence number of the next marker.
    seq: u64,
    /// When the process was started.
    started: Instant,
}

/// How long to wait for a client to answer its first marker.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// sqlite3's `.timer` prints whole milliseconds: a reading below one (0.000) is replaced by the wall time.
const SQLITE_RESOLUTION: Duration = Duration::from_millis(1);
/// How long any one statement may take before the harness gives up.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(3600);

impl Session {
    /// Starts `program args...` with `env` added, turns timing on and waits
    /// until the client answers. Fails (with the client's output) when it
    /// cannot be started or does not answer.
    pub fn spawn(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        dialect: Dialect,
    ) -> Result<Session, String> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("exec \"$0\" \"$@\" 2>&1")
            .arg(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let started = Instant::now();
        let stdout = child.stdout.take().expect("stdout was piped");
        let stdin = child.stdin.take().expect("stdin was piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::with_capacity(1 << 16, stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']).to_string();
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let rss_pid = child.id();
        let mut session = Session {
            child,
            stdin: Some(BufWriter::with_capacity(1 << 16, stdin)),
            lines: rx,
            dialect,
            rss_pid,
            seq: 0,
            started,
        };
        let timing = dialect.timing_on();
        session
            .exchange(timing, STARTUP_TIMEOUT)
            .map_err(|e| format!("{program} did not start: {e}"))?;
        Ok(session)
    }

    /// Makes `pid` the process whose peak RSS [`Session::peak_rss_kib`] reports.
    pub fn set_rss_pid(&mut self, pid: u32) {
        self.rss_pid = pid;
    }

    /// Runs one statement (or several, or a meta-command) and waits for it.
    pub fn run(&mut self, sql: &str) -> Result<Outcome, String> {
        self.exchange(sql, STATEMENT_TIMEOUT)
    }

    /// Runs `sql` and returns its output rows, failing on an error.
    pub fn query(&mut self, sql: &str) -> Result<Vec<String>, String> {
        Ok(self.run(sql)?.rows)
    }

    /// Writes raw input (a script's bytes) without waiting for anything;
    /// follow with [`Session::run`] of an empty string to wait for it.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        stdin.write_all(bytes).map_err(|e| write_error(&e))
    }

    /// The client's (or its backend's) peak resident set size so far, KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        peak_rss_kib(self.rss_pid)
    }

    /// What the client's (or its backend's) resident memory is made of now.
    pub fn memory(&self) -> Option<Memory> {
        memory(self.rss_pid)
    }

    /// Closes stdin, waits for the client to exit and returns the time since
    /// it was started.
    pub fn close(mut self) -> Duration {
        self.stdin = None;
        let _ = self.child.wait();
        self.started.elapsed()
    }

    fn exchange(&mut self, sql: &str, timeout: Duration) -> Result<Outcome, String> {
        self.seq += 1;
        let marker = format!("__bench_marker_{}__", self.seq);
        let start = Instant::now();
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        let mut text = String::with_capacity(sql.len() + 40);
        if !sql.trim().is_empty() {
            text.push_str(sql);
            text.push('\n');
        }
        text.push_str(&self.dialect.echo(&marker));
        text.push('\n');
        stdin
            .write_all(text.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|e| write_error(&e))?;
        let mut out = Outcome::default();
        let mut errors: Vec<String> = Vec::new();
        loop {
            let line = match self.lines.recv_timeout(timeout) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no answer within {timeout:?}"));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let mut msg = String::from("the client exited");
                    for l in errors.iter().chain(&out.rows).take(5) {
                        msg.push_str(": ");
                        msg.push_str(l);
                    }
                    return Err(msg);
                }
            };
            if line == marker {
                break;
            }
            if let Some(t) = self.dialect.parse_time(&line) {
                out.reported = Some(out.reported.unwrap_or_default() + t);
            } else if self.dialect.is_error(&line) {
                errors.push(line);
            } else {
                out.rows.push(line);
            }
        }
        out.wall = start.elapsed();
        // sqlite3 prints whole milliseconds: a reading of 0.000 says nothing,
        // and the wall time (an upper bound: one pipe round trip more) is
        // the better measure.
        if self.dialect == Dialect::Sqlite && out.reported.is_some_and(|t| t < SQLITE_RESOLUTION) {
            out.reported = None;
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors.join(" / "))
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stdin = None;
        // A client that is still busy after its stdin closed is killed:
        // the harness is unwinding and must not hang.
        if let Ok(None) = self.child.try_wait() {
            std::thread::sleep(Duration::from_millis(50));
            if let Ok(None) = self.child.try_wait() {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
    }
}

fn write_error(e: &io::Error) -> String {
    format!("cannot write to the client: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psql_timing_lines() {
        assert_eq!(
            parse_psql_time("Time: 12.345 ms"),
            Some(Duration::from_micros(12_345))
        );
        assert_eq!(
            parse_psql_time("Time: 1234.567 ms (00:01.235)"),
            Some(Duration::from_micros(1_234_567))
        );
        assert_eq!(
            parse_psql_time("Time: 0.041 ms"),
            Some(Duration::from_nanos(41_000))
        );
        assert_eq!(parse_psql_time("Time: soon"), None);
        assert_eq!(parse_psql_time(" Time: 1.000 ms"), None);
        assert_eq!(parse_psql_time("1|Time: 1.000 ms"), None);
    }

    #[test]
    fn sqlite_timing_lines() {
        assert_eq!(
            parse_sqlite_time("Run Time: real 0.023 user 0.012000 sys 0.004000"),
            Some(Duration::from_millis(23))
        );
        assert_eq!(
            parse_sqlite_time("Run Time: real 13.502 user 12.1 sys 1.3"),
            Some(Duration::from_millis(13_502))
        );
        assert_eq!(parse_sqlite_time("Run Time: user 1"), None);
        assert_eq!(parse_sqlite_time("Time: 1.0 ms"), None);
    }

    #[test]
    fn dialects_route_lines() {
        let p = Dialect::Psql;
        assert!(p.is_error("ERROR:  relation \"x\" does not exist"));
        assert!(p.is_error("psql:<stdin>:3: ERROR:  syntax error at or near \"x\""));
        assert!(p.is_error("heapdb:script.sql:3: ERROR:  division by zero"));
        assert!(p.is_error("invalid command \\foo"));
        assert!(p.is_error("heapdb: error: the shell is not connected to the engine yet"));
        assert!(!p.is_error("50|5000000"));
        assert_eq!(
            p.parse_time("Time: 2.000 ms"),
            Some(Duration::from_millis(2))
        );
        let s = Dialect::Sqlite;
        assert!(s.is_error("Parse error near line 3: no such column: x"));
        assert!(s.is_error("Runtime error near line 1: disk I/O error"));
        assert!(!s.is_error("1|2"));
        assert_eq!(p.echo("m"), "\\echo m");
        assert_eq!(s.echo("m"), ".print m");
    }

    #[test]
    fn proc_kib_fields() {
        let status = "Name:\tpsql\nVmPeak:\t  20000 kB\nVmHWM:\t    8192 kB\nVmRSS:\t 4000 kB\n\
            RssAnon:\t    3000 kB\nRssFile:\t    1000 kB\n";
        assert_eq!(kib_field(status, "VmHWM:"), Some(8192));
        assert_eq!(kib_field(status, "RssFile:"), Some(1000));
        assert_eq!(kib_field("Name: x\n", "VmHWM:"), None);
        let rollup = "Rss:                1234 kB\nAnonHugePages:      2048 kB\n";
        assert_eq!(kib_field(rollup, "AnonHugePages:"), Some(2048));
        // Our own process has a peak, and its parts add up to no more.
        assert!(peak_rss_kib(std::process::id()).unwrap() > 0);
        let m = memory(std::process::id()).unwrap();
        assert!(
            m.anon > 0 && m.file > 0 && m.anon + m.file <= m.peak + 64,
            "{m:?}"
        );
        assert!(m.anon_huge <= m.anon);
    }

    #[test]
    fn drives_a_shell_through_markers() {
        // `sh` reading its stdin stands in for a client: `\echo` is not a
        // shell command, so use a tiny psql-like loop written in sh.
        let script = r#"while IFS= read -r line; do case "$line" in
            '\timing on') ;;
            '\echo '*) echo "${line#\\echo }";;
            fail*) echo "ERROR:  failed" >&2;;
            *) echo "row:$line"; echo "Time: 1.500 ms";;
            esac; done"#;
        let mut s = Session::spawn(
            "sh",
            &["-c".to_string(), script.to_string()],
            &[],
            Dialect::Psql,
        )
        .unwrap();
        let out = s.run("select 1;").unwrap();
        assert_eq!(out.rows, vec!["row:select 1;".to_string()]);
        assert_eq!(out.reported, Some(Duration::from_micros(1500)));
        let err = s.run("fail now").unwrap_err();
        assert!(err.contains("ERROR:  failed"), "{err}");
        // The session is still usable after an error.
        assert_eq!(s.query("again;").unwrap(), vec!["row:again;".to_string()]);
        s.send_raw(b"a\nb\n").unwrap();
        let out = s.run("").unwrap();
        assert_eq!(out.rows.len(), 2);
        assert_eq!(out.reported, Some(Duration::from_millis(3)));
        assert!(s.peak_rss_kib().is_some());
        s.close();
    }

    #[test]
    fn missing_program_is_an_error_not_a_panic() {
        let err = Session::spawn("/nonexistent/heapdb", &[], &[], Dialect::Psql)
            .err()
            .unwrap();
        assert!(err.contains("did not start"), "{err}");
    }
}
